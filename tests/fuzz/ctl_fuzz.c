// SPDX-License-Identifier: MIT
/* The control socket's protocol: each input is one request line, parsed and answered as the
 * server does, against a VM that accepts every change; then the same bytes as a connection's
 * stream, through the server's reader (ctl_feed) in chunks as recv might return them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/ctl.h"

static uint64_t halt_poll;

static int set_hp(void *opaque, uint64_t ns)
{
	(void)opaque;
	halt_poll = ns;
	return 0;
}

static uint64_t get_hp(void *opaque)
{
	(void)opaque;
	return halt_poll;
}

static int state(void *opaque, FILE *f)
{
	(void)opaque;
	return fprintf(f, ",\"arch\":\"fuzz\"") < 0 ? -1 : 0;
}

static int stats(void *opaque, FILE *f)
{
	(void)opaque;
	return fprintf(f, "{}") < 0 ? -1 : 0;
}

/* a VM of two vCPUs: a request for another is refused, as the board refuses it */
static int pc[2] = { 1, 1 };

static int set_pc(void *opaque, int vcpu, int on, char *err, size_t len)
{
	(void)opaque;
	if (vcpu < -1 || vcpu > 1 || (on != 0 && on != 1)) {
		snprintf(err, len, "no vCPU %d", vcpu);
		return -22;
	}
	for (int i = vcpu < 0 ? 0 : vcpu; i <= (vcpu < 0 ? 1 : vcpu); i++)
		pc[i] = on;
	return 0;
}

static void write_pc(void *opaque, FILE *f)
{
	(void)opaque;
	fprintf(f, ",\"poll_control\":[%d,%d]", pc[0], pc[1]);
}

/* The stream: chunk sizes from the bytes themselves (recv returns what arrived), every request
 * answered by exactly one reply line, and nothing kept past the buffer. */
static void stream(const struct ctl_ops *ops, const uint8_t *data, size_t size)
{
	static char buf[CTL_FEED_SIZE];
	size_t have = 0, lines = 0, replies = 0, rlen = 0, off = 0;
	char *reply = NULL;
	FILE *f = open_memstream(&reply, &rlen);

	if (!f)
		abort();
	while (off < size) {
		size_t n = 1 + data[off] % 97, room = sizeof(buf) - have;

		n = n < size - off ? n : size - off;
		n = n < room ? n : room;
		memcpy(buf + have, data + off, n);
		have += n;
		off += n;
		if (ctl_feed(ops, buf, &have, false, f) < 0 || have >= sizeof(buf))
			abort();
	}
	if (ctl_feed(ops, buf, &have, true, f) < 0 || have)
		abort();
	fclose(f);
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	for (size_t i = 0; i < rlen; i++)
		replies += reply[i] == '\n';
	/* a reply per newline, at most one more for the last line, and one for each overlong stretch */
	if (replies < lines || replies > lines + 1 + size / CTL_FEED_SIZE || (rlen && reply[rlen - 1] != '\n'))
		abort();
	free(reply);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct ctl_ops ops = { set_hp, get_hp, state, stats, NULL, SANDBOX_OFF, set_pc, write_pc };
	struct ctl_req req;
	char err[128], *reply = NULL;
	size_t rlen = 0;
	FILE *f = open_memstream(&reply, &rlen);

	if (!f)
		abort();
	ctl_parse((const char *)data, size, &req, err, sizeof(err));
	ctl_handle(&ops, (const char *)data, size, f);
	fclose(f);
	/* one reply line, always */
	if (!rlen || reply[rlen - 1] != '\n' || memchr(reply, '\n', rlen) != reply + rlen - 1)
		abort();
	free(reply);
	stream(&ops, data, size);
	return 0;
}
