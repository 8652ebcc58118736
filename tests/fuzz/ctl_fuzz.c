// SPDX-License-Identifier: MIT
/* The control socket's protocol: each input is one request line, parsed and answered as the
 * server does, against a VM that accepts every change. */
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
	return 0;
}
