// SPDX-License-Identifier: MIT
/*
 * Decoding the guest probe's frames. Every value comes from the guest: lengths are bounded before
 * anything is read, CRCs checked before a record is looked at, records checked against their
 * workload's START, and memory grows only with samples actually received, up to a fixed cap.
 */
#include <stdlib.h>
#include <string.h>

#include "guest/probe_decode.h"

void probe_decoder_init(struct probe_decoder *d)
{
	memset(d, 0, sizeof(*d));
}

void probe_decoder_free(struct probe_decoder *d)
{
	for (size_t i = 0; i < d->nseries; i++) {
		free(d->series[i].t_ns);
		free(d->series[i].v_ns);
	}
	free(d->series);
	probe_decoder_init(d);
}

uint64_t probe_decode_errors(const struct probe_decoder *d)
{
	const struct probe_decode_stats *s = &d->st;

	return s->bad_frames + s->bad_lines + s->bad_records + s->lost_frames + s->count_mismatch;
}

static struct probe_series *find(const struct probe_decoder *d, unsigned int w, unsigned int cpu)
{
	for (size_t i = 0; i < d->nseries; i++)
		if (d->series[i].workload == w && d->series[i].cpu == cpu)
			return &d->series[i];
	return NULL;
}

const struct probe_series *probe_series_get(const struct probe_decoder *d, unsigned int workload,
					    unsigned int cpu)
{
	return find(d, workload, cpu);
}

/* The series a BATCH or END names, created on first use when the workload's START allows it. */
static struct probe_series *series_for(struct probe_decoder *d, unsigned int w, unsigned int cpu)
{
	if (w > PROBE_W_MAX || !d->started[w] || cpu >= PROBE_MAX_CPUS)
		return NULL;
	const struct probe_start *s = &d->start[w];
	struct probe_series *p = find(d, w, cpu);

	if (p)
		return p;
	/* timer: one series per vCPU, at most ncpus of them; the others: the one START names */
	if (w == PROBE_W_PINGPONG && cpu != s->cpu_a)
		return NULL;
	if (w == PROBE_W_UDP && cpu != 0)
		return NULL;
	size_t have = 0;

	for (size_t i = 0; i < d->nseries; i++)
		have += d->series[i].workload == w;
	if (have >= (w == PROBE_W_TIMER ? s->ncpus : 1u))
		return NULL;
	if (d->nseries == d->series_alloc) {
		size_t na = d->series_alloc ? 2 * d->series_alloc : 8;
		struct probe_series *ns = realloc(d->series, na * sizeof(*ns));

		if (!ns)
			return NULL;
		d->series = ns;
		d->series_alloc = na;
	}
	p = &d->series[d->nseries++];
	memset(p, 0, sizeof(*p));
	p->workload = (uint8_t)w;
	p->cpu = (uint16_t)cpu;
	p->cap = s->count;
	return p;
}

static int on_start(struct probe_decoder *d, const uint8_t *p, size_t len)
{
	struct probe_start s;

	if (probe_get_start(p, len, &s) || d->started[s.workload] || !s.ncpus ||
	    s.ncpus > PROBE_MAX_CPUS || s.count > PROBE_MAX_COUNT)
		return -1;
	if (s.workload == PROBE_W_PINGPONG &&
	    (s.cpu_a == s.cpu_b || s.cpu_a >= PROBE_MAX_CPUS || s.cpu_b >= PROBE_MAX_CPUS))
		return -1;
	d->start[s.workload] = s;
	d->started[s.workload] = true;
	return 0;
}

static int on_batch(struct probe_decoder *d, const uint8_t *p, size_t len)
{
	struct probe_batch b;
	struct probe_series *s;

	if (probe_get_batch(p, len, &b) || !(s = series_for(d, b.workload, b.cpu)) || s->ended ||
	    b.n > s->cap - s->n || d->samples + b.n > PROBE_DECODE_MAX_SAMPLES)
		return -1;
	/* per-series timestamps never go back */
	uint64_t last = s->n ? s->t_ns[s->n - 1] : 0;

	for (unsigned int i = 0; i < b.n; last = b.s[i++].t_ns)
		if (b.s[i].t_ns < last)
			return -1;
	if (s->n + b.n > s->alloc) {
		uint32_t na = s->alloc ? s->alloc : 256;

		while (na < s->n + b.n)
			na *= 2;
		if (na > s->cap)
			na = s->cap;
		uint64_t *t = realloc(s->t_ns, na * sizeof(*t));

		if (!t)
			return -1;
		s->t_ns = t;
		int64_t *v = realloc(s->v_ns, na * sizeof(*v));

		if (!v)
			return -1;
		s->v_ns = v;
		s->alloc = na;
	}
	for (unsigned int i = 0; i < b.n; i++) {
		s->t_ns[s->n] = b.s[i].t_ns;
		s->v_ns[s->n++] = b.s[i].value_ns;
	}
	d->samples += b.n;
	return 0;
}

static int on_end(struct probe_decoder *d, const uint8_t *p, size_t len)
{
	struct probe_end e;
	struct probe_series *s;

	if (probe_get_end(p, len, &e) || !(s = series_for(d, e.workload, e.cpu)) || s->ended ||
	    e.sum.count > s->cap)
		return -1;
	s->ended = true;
	s->end = e;
	if (e.sum.count != s->n)
		d->st.count_mismatch++;
	return 0;
}

/* The first pair and the latest: the guest's clock must not go back (its value is hostile) */
static int on_counter(struct probe_decoder *d, const uint8_t *p, size_t len)
{
	struct probe_counter c;

	if (probe_get_counter(p, len, &c))
		return -1;
	if (d->counters) {
		const struct probe_counter *last = &d->counter[d->counters > 1];

		if (c.kind != last->kind || c.mono_ns < last->mono_ns || c.cnt < last->cnt)
			return -1;
	}
	d->counter[d->counters ? 1 : 0] = c;
	d->counters++;
	return 0;
}

int probe_decode_frame(struct probe_decoder *d, const uint8_t *f, size_t len)
{
	uint8_t type;
	uint16_t plen;
	uint32_t seq;
	int rc;

	if (len < PROBE_HDR_SIZE || probe_frame_header(f, &type, &plen, &seq) ||
	    len != PROBE_HDR_SIZE + (size_t)plen || !probe_frame_crc_ok(f, len)) {
		d->st.bad_frames++;
		return -1;
	}
	/* a valid frame: its sequence number shows whether any went missing before it */
	if (d->have_seq ? seq != d->next_seq : seq != 0) /* the guest counts from 0 */
		d->st.lost_frames += seq > d->next_seq ? seq - d->next_seq : 1;
	d->have_seq = true;
	d->next_seq = seq + 1;
	const uint8_t *p = f + PROBE_HDR_SIZE;

	switch (type) {
	case PROBE_T_START:
		rc = on_start(d, p, plen);
		break;
	case PROBE_T_BATCH:
		rc = on_batch(d, p, plen);
		break;
	case PROBE_T_END:
		rc = on_end(d, p, plen);
		break;
	case PROBE_T_CLOCK:
		rc = probe_get_clock(p, plen, &d->clock_ns);
		d->clocks += rc == 0;
		break;
	case PROBE_T_COUNTER:
		rc = on_counter(d, p, plen);
		break;
	default:
		rc = -1;
	}
	if (rc)
		d->st.bad_records++;
	else
		d->st.frames++;
	return rc;
}

static void drop(struct probe_decoder *d, size_t n)
{
	memmove(d->buf, d->buf + n, d->blen - n);
	d->blen -= n;
}

/* Frames out of d->buf for as long as whole ones are there; a bad one costs one byte, so a real
 * frame starting inside it is still found. */
static void scan(struct probe_decoder *d)
{
	static const uint8_t magic[4] = { 0x56, 0x50, 0x52, 0x42 };

	for (;;) {
		size_t i = 0;

		while (i < d->blen && memcmp(d->buf + i, magic, d->blen - i < 4 ? d->blen - i : 4))
			i++;
		d->st.garbage += i;
		drop(d, i);
		if (d->blen < PROBE_HDR_SIZE)
			return;
		uint8_t type;
		uint16_t plen;
		uint32_t seq;

		if (probe_frame_header(d->buf, &type, &plen, &seq)) {
			d->st.bad_frames++;
			drop(d, 1);
			continue;
		}
		size_t flen = PROBE_HDR_SIZE + (size_t)plen;

		if (d->blen < flen)
			return;
		if (!probe_frame_crc_ok(d->buf, flen)) {
			d->st.bad_frames++;
			drop(d, 1);
			continue;
		}
		probe_decode_frame(d, d->buf, flen);
		drop(d, flen);
	}
}

void probe_decode_bytes(struct probe_decoder *d, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		size_t n = sizeof(d->buf) - d->blen;

		if (n > len)
			n = len;
		memcpy(d->buf + d->blen, p, n);
		d->blen += n;
		p += n;
		len -= n;
		scan(d);
	}
}

/* The base64 of the largest frame: a longer run is no frame, nor the start of one. */
#define FRAME_B64_MAX (4 * ((PROBE_MAX_FRAME + 2) / 3))
_Static_assert(sizeof(((struct probe_decoder *)0)->pend) >= FRAME_B64_MAX, "pend holds a frame's base64");

/* The length of the base64 run at s. */
static size_t b64_run(const char *s)
{
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=");
}

/* What follows a base64 run: the line's end, a printk timestamp cutting in, or anything else. */
enum after { AFTER_END, AFTER_PRINTK, AFTER_OTHER };

static enum after after_run(const char *s)
{
	s += strspn(s, " \t\r");
	return !*s ? AFTER_END : *s == '[' ? AFTER_PRINTK : AFTER_OTHER;
}

/* Decodes the base64 in b (n chars) as one frame; -1 when it is no frame at all. */
static int text_frame(struct probe_decoder *d, const char *b, size_t n, bool quiet)
{
	uint8_t f[PROBE_MAX_FRAME];
	long flen = probe_b64_decode(f, sizeof(f), b, n);
	uint8_t type;
	uint16_t plen;
	uint32_t seq;

	if (flen < 0)
		return -1;
	/* a piece of a broken line is not yet a bad frame */
	if (quiet && (flen < PROBE_HDR_SIZE || probe_frame_header(f, &type, &plen, &seq) ||
		      (size_t)flen != PROBE_HDR_SIZE + (size_t)plen || !probe_frame_crc_ok(f, (size_t)flen)))
		return -1;
	probe_decode_frame(d, f, (size_t)flen);
	return 0;
}

static void give_up_pending(struct probe_decoder *d)
{
	if (d->pending)
		d->st.bad_lines++;
	d->pending = false;
}

static void text_line(struct probe_decoder *d)
{
	static const char prefix[] = PROBE_TEXT_PREFIX;

	d->line[d->llen] = 0;
	/* console noise may precede the prefix on the same line (a CR, a printk's tail) */
	const char *s = memmem(d->line, d->llen, prefix, sizeof(prefix) - 1);

	if (!s && d->pending && !d->line_overflow) {
		/* the rest of a broken frame line starts a line of its own; kernel lines between */
		size_t n = b64_run(d->line);
		enum after a = after_run(d->line + n);

		if (!n || a == AFTER_OTHER) {
			if (++d->pend_lines > PROBE_PEND_LINES)
				give_up_pending(d);
			return;
		}
		if (d->plen + n > FRAME_B64_MAX) {
			give_up_pending(d);
			return;
		}
		memcpy(d->pend + d->plen, d->line, n);
		d->plen += n;
		if (a == AFTER_PRINTK)
			return; /* broken again */
		d->pending = false;
		if (text_frame(d, d->pend, d->plen, false))
			d->st.bad_lines++;
		else
			d->st.rejoined++;
		return;
	}
	if (!s)
		return;
	give_up_pending(d);
	if (d->line_overflow) {
		d->st.bad_lines++;
		return;
	}
	s += sizeof(prefix) - 1;
	size_t n = b64_run(s);
	enum after a = after_run(s + n);

	if (a == AFTER_PRINTK && text_frame(d, s, n, true)) {
		/* cut short by a kernel message: keep the start for the rest to join, when it can be
		 * one: the guest sets the run's length, up to the whole line buffer */
		if (n > FRAME_B64_MAX) {
			d->st.bad_lines++;
			return;
		}
		memcpy(d->pend, s, n);
		d->plen = n;
		d->pend_lines = 0;
		d->pending = true;
		return;
	}
	if (a == AFTER_PRINTK)
		return; /* whole after all: the message came after the frame, before its newline */
	if (a == AFTER_OTHER || text_frame(d, s, n, false))
		d->st.bad_lines++;
}

void probe_decode_text(struct probe_decoder *d, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];

		if (c == '\n') {
			text_line(d);
			d->llen = 0;
			d->line_overflow = false;
		} else if (d->llen < sizeof(d->line) - 1) {
			d->line[d->llen++] = c ? c : ' ';
		} else {
			d->line_overflow = true;
		}
	}
}
