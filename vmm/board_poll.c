// SPDX-License-Identifier: MIT
/*
 * The per-vCPU host halt-polling switch across a board's vCPUs, for the control socket and the
 * exit summary. The arch says whether this VM can have it (x86: POLL_CONTROL in the guest's
 * CPUID; arm64 has no such switch); every read and write happens on the vCPU's own thread
 * (vcpu_call), because a vCPU ioctl from another thread waits for as long as the guest halts.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vmm/board.h"
#include "core/json.h"
#include "core/vcpu.h"

/* A vCPU thread comes out of KVM_RUN within microseconds of a kick; seconds mean it is gone. */
#define POLL_CALL_TIMEOUT_MS 2000

struct poll_arg {
	struct board *b;
	int set;
};

static int on_vcpu(struct vcpu *v, void *arg)
{
	struct poll_arg *a = arg;

	return a->b->machine.arch->poll_control(&a->b->machine, v, a->set);
}

const char *board_poll_control_refusal(struct board *b)
{
	const struct arch_ops *arch = b->machine.arch;

	if (!arch->poll_control)
		return "this architecture has no per-vCPU host polling switch (MSR_KVM_POLL_CONTROL is "
		       "x86's); set halt-poll-ns changes the VM's ceiling";
	return arch->poll_control_refusal ? arch->poll_control_refusal(&b->machine) : NULL;
}

int board_poll_control(struct board *b, int vcpu, int set, char *err, size_t len)
{
	const char *why = board_poll_control_refusal(b);
	struct poll_arg a = { b, set };

	if (why) {
		snprintf(err, len, "poll-control: %s", why);
		return -EOPNOTSUPP;
	}
	if (vcpu < -1 || vcpu >= b->vm.nr_vcpus) {
		snprintf(err, len, "poll-control: no vCPU %d (this VM has vCPUs 0..%d, or all)", vcpu,
			 b->vm.nr_vcpus - 1);
		return -EINVAL;
	}
	if (set < 0 || set > 1) {
		snprintf(err, len, "poll-control: the value is 0 or 1, not %d", set);
		return -EINVAL;
	}
	for (int i = vcpu < 0 ? 0 : vcpu; i < (vcpu < 0 ? b->vm.nr_vcpus : vcpu + 1); i++) {
		int r = vcpu_call(b->vm.vcpus[i], on_vcpu, &a, POLL_CALL_TIMEOUT_MS);

		if (r < 0) {
			snprintf(err, len, "poll-control: vCPU %d: %s", i,
				 r == -ETIMEDOUT ? "its thread did not come out of KVM_RUN (the VM is stopping?)"
						 : strerror(-r));
			return r;
		}
		if (r != set) {
			snprintf(err, len, "poll-control: vCPU %d holds %d after vmm wrote %d", i, r, set);
			return -EIO;
		}
	}
	return 0;
}

/* Each vCPU's switch as KVM holds it now, read on its thread; -1 where it could not be read. */
static void values(struct board *b, FILE *f, bool json)
{
	struct poll_arg a = { b, -1 };

	for (int i = 0; i < b->vm.nr_vcpus; i++) {
		int r = vcpu_call(b->vm.vcpus[i], on_vcpu, &a, POLL_CALL_TIMEOUT_MS);

		if (json)
			fprintf(f, "%s%d", i ? "," : "", r < 0 ? -1 : r);
		else
			fprintf(f, " vcpu%d=%d", i, r < 0 ? -1 : r);
	}
}

void board_poll_control_json(struct board *b, FILE *f)
{
	const char *why = board_poll_control_refusal(b);

	if (why) {
		fputs(",\"poll_control\":null,\"poll_control_why\":", f);
		json_write_string(f, why);
		return;
	}
	fputs(",\"poll_control\":[", f);
	values(b, f, true);
	fputc(']', f);
}

void board_poll_control_summary(struct board *b, FILE *f)
{
	if (!b->machine.arch->poll_control)
		return; /* nothing to say where the switch does not exist */
	const char *why = board_poll_control_refusal(b);

	if (why) {
		fprintf(f, "vmm: poll-control: unavailable: %s\n", why);
		return;
	}
	fputs("vmm: poll-control at exit (MSR_KVM_POLL_CONTROL bit 0, 1: KVM may halt-poll):", f);
	values(b, f, false);
	fputc('\n', f);
}
