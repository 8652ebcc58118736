// SPDX-License-Identifier: MIT
/*
 * The guest latency probe's results as vmm receives them (vmm/probe_rx.h). The guest is not
 * trusted: the decoder checks every frame and bounds what it keeps; this file only counts and
 * relays.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "vmm/probe_rx.h"

int probe_rx_init(struct probe_rx *r, const char *out_path)
{
	memset(r, 0, sizeof(*r));
	r->out_fd = -1;
	pthread_mutex_init(&r->lock, NULL);
	r->dec = malloc(sizeof(*r->dec));
	if (!r->dec)
		return -ENOMEM;
	probe_decoder_init(r->dec);
	if (out_path) {
		r->out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
		if (r->out_fd < 0) {
			int e = errno;

			pr_err("--probe-out %s: %s (a file vmm may create, or a pipe's /proc/self/fd/N)", out_path,
			       strerror(e));
			return -e;
		}
	}
	return 0;
}

void probe_rx_destroy(struct probe_rx *r)
{
	if (r->dec) {
		probe_decoder_free(r->dec);
		free(r->dec);
		r->dec = NULL;
	}
	if (r->out_fd >= 0)
		close(r->out_fd);
	r->out_fd = -1;
}

/* lock held: the port's bytes, unchanged, to --probe-out */
static void relay(struct probe_rx *r, const uint8_t *buf, size_t len)
{
	while (len && r->out_fd >= 0 && !r->out_broken) {
		ssize_t n = write(r->out_fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			pr_warn("--probe-out: %s; the probe's frames are no longer written there",
				n < 0 ? strerror(errno) : "nothing written");
			r->out_broken = true;
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}

/* The first COUNTER frame, on either channel: the hook to call once (under r->lock) */
static void (*counter_due(struct probe_rx *r))(void *)
{
	if (!r->dec->counters || r->counter_seen)
		return NULL;
	r->counter_seen = true;
	return r->on_counter;
}

void probe_rx_port(void *opaque, const uint8_t *buf, size_t len)
{
	struct probe_rx *r = opaque;
	void (*clock)(void *) = NULL;

	pthread_mutex_lock(&r->lock);
	uint64_t frames = r->dec->st.frames;

	r->port.bytes += len;
	probe_decode_bytes(r->dec, buf, len);
	r->port.frames += r->dec->st.frames - frames;
	relay(r, buf, len);
	if (r->dec->clocks && !r->clock_seen) {
		r->clock_seen = true;
		clock = r->on_clock;
	}
	void (*counter)(void *) = counter_due(r);

	pthread_mutex_unlock(&r->lock);
	if (clock)
		clock(r->clock_opaque);
	if (counter)
		counter(r->counter_opaque);
}

void probe_rx_console(void *opaque, const uint8_t *buf, size_t len)
{
	static const char prefix[] = PROBE_TEXT_PREFIX;
	struct probe_rx *r = opaque;

	pthread_mutex_lock(&r->lock);
	uint64_t frames = r->dec->st.frames;

	for (size_t i = 0; i < len; i++) {
		char c = (char)buf[i];

		if (r->probe_line)
			r->console.bytes++;
		if (c == '\n') {
			r->pfx = 0;
			r->probe_line = r->line_other = false;
			continue;
		}
		if (r->probe_line || r->line_other || (c == '\r' && !r->pfx))
			continue;
		if (c != prefix[r->pfx]) {
			r->line_other = true;
			continue;
		}
		if (++r->pfx == sizeof(prefix) - 1) {
			r->probe_line = true;
			r->console.bytes += r->pfx;
		}
	}
	probe_decode_text(r->dec, (const char *)buf, len);
	r->console.frames += r->dec->st.frames - frames;
	void (*counter)(void *) = counter_due(r);

	pthread_mutex_unlock(&r->lock);
	if (counter)
		counter(r->counter_opaque);
}

static const char *channel(const struct probe_rx *r)
{
	return r->port.frames && r->console.frames ? "both" : r->port.frames ? "port"
	       : r->console.frames ? "console" : "none";
}

void probe_rx_json(struct probe_rx *r, FILE *f)
{
	pthread_mutex_lock(&r->lock);
	const struct probe_decoder *d = r->dec;

	fprintf(f, "{\"channel\":\"%s\",\"port\":{\"frames\":%llu,\"bytes\":%llu},\"console\":{\"frames\":%llu,"
		   "\"bytes\":%llu},\"errors\":%llu,\"clocks\":%llu,\"series\":[", channel(r),
		(unsigned long long)r->port.frames, (unsigned long long)r->port.bytes,
		(unsigned long long)r->console.frames, (unsigned long long)r->console.bytes,
		(unsigned long long)probe_decode_errors(d), (unsigned long long)d->clocks);
	for (size_t i = 0; i < d->nseries; i++) {
		const struct probe_series *s = &d->series[i];
		const char *name = probe_workload_name(s->workload);

		fprintf(f, "%s{\"workload\":\"%s\",\"cpu\":%u,\"n\":%u,\"ended\":%s,\"status\":%u,\"min_ns\":%lld,"
			   "\"p50_ns\":%lld,\"p99_ns\":%lld,\"max_ns\":%lld}", i ? "," : "", name ? name : "?",
			s->cpu, s->n, s->ended ? "true" : "false", s->end.status, (long long)s->end.sum.min,
			(long long)s->end.sum.p50, (long long)s->end.sum.p99, (long long)s->end.sum.max);
	}
	fputs("]}", f);
	pthread_mutex_unlock(&r->lock);
}

void probe_rx_summary(struct probe_rx *r, FILE *f)
{
	pthread_mutex_lock(&r->lock);
	if (r->port.bytes || r->console.frames || probe_decode_errors(r->dec))
		fprintf(f, "vmm: probe: %llu frames over its port (%llu bytes), %llu over the console (%llu bytes); "
			   "%zu series, %llu samples, %llu bad or lost\n",
			(unsigned long long)r->port.frames, (unsigned long long)r->port.bytes,
			(unsigned long long)r->console.frames, (unsigned long long)r->console.bytes,
			r->dec->nseries, (unsigned long long)r->dec->samples,
			(unsigned long long)probe_decode_errors(r->dec));
	pthread_mutex_unlock(&r->lock);
}
