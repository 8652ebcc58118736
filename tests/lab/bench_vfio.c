// SPDX-License-Identifier: MIT
/* make bench's vfio section: userspace exits per passed-through MSI of the lab's igb VF, and vmm's
 * RSS beyond guest RAM with the VF. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/lab/bench_lab.h"
#include "tests/lab/labutil.h"

/* The lab's igb: a VF passed through, pinging the PF. */
#define PF LAB_PF
#define VF LAB_VF

/* One VF boot: the guest pings the PF `pings` times; its MSI-X interrupts and vmm's exits. */
static int vf_boot(int pings, unsigned long long *irqs, unsigned long long *mmio)
{
	char *argv[40], step[64];
	char *const extra[] = { "--vfio", VF, NULL };
	unsigned long long kvm;
	struct result r;
	int ret = -1;

	snprintf(step, sizeof(step), "vf vmmpings=%d", pings);
	test_guest_argv(argv, 40, step, extra);
	run_vmm(argv, 600, &r);
	*irqs = 0;
	for (const char *p = r.out; (p = strstr(p, "GUEST-IRQ ")); p++) {
		unsigned long c0 = 0, c1 = 0;
		char line[256];

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		if (strstr(line, "MSIX") && !strstr(line, "virtio") &&
		    sscanf(line, "GUEST-IRQ %*d: %lu %lu", &c0, &c1) >= 1)
			*irqs += c0 + c1;
	}
	if (r.status == 0 && strstr(r.out, "GUEST-PING6 1") && exit_table(r.err, mmio, &kvm) == 0)
		ret = 0;
	else
		fail_note("VF passthrough", &r);
	result_free(&r);
	return ret;
}

/* vmm's RSS beyond guest RAM with the VF passed through (the guest's igbvf up, its link pinged,
 * then idle): the 1.5 MiB goal. In the host's own network namespace (the PF's). */
static void vf_memory(struct bench *b)
{
	char *argv[40], fig[96];
	char *const extra[] = { "--vfio", VF, NULL };
	struct rss_probe p = { b, mem_figure(b, "memory.rss_beyond_guest_ram.vf", fig, sizeof(fig)), true, 0, 0, NULL };
	struct run_opts o = { .timeout = 600, .term_on = "GUEST-HOLD", .on_match = read_rss, .match_arg = &p };

	/* a plain guest, as a user's is (no vmm marker): start-up's memory goes at its first quiet
	 * second, its vLPIs' vCPUs judged by exits alone; --vf-marker: the built-in guest's marker */
	test_guest_argv(argv, 40, b->vf_marker ? "vf-hold vmmpings=5" : "vf-hold vmmpings=5 vmmplain=1", extra);
	for (int i = 0; i < b->reps; i++) { /* a goal is judged from 8 (bench_judge) */
		struct result r;

		p.breakdown = i == 0;
		run_vmm_opts(argv, &o, &r);
		if (p.breakdown) {
			double rel = timing(r.err, "released");

			printf("bench: start-up memory released before the smaps read (VF): %s (%s)\n",
			       rel > 0 && rel < p.read_at ? "yes" : "no", release_why(r.err));
			for (const char *l = r.err; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
				if (!strncmp(l, "vmm: vcpu", 9) || !strncmp(l, "vmm: 0 ", 7) || !strncmp(l, "vmm: 1 ", 7))
					printf("bench: VF run's exits: %.*s\n", (int)strcspn(l, "\n"), l);
		}
		if (!strstr(r.out, "GUEST-HOLD") || !strstr(r.out, "GUEST-PING6 1"))
			fail_note("memory (VF passed through)", &r);
		result_free(&r);
	}
}

/* Userspace exits per passed-through MSI: two boots that differ only in the pings' count. */
void vfio(struct bench *b)
{
	char cmd[512], dev[64] = "";

	if (access("/sys/bus/pci/devices/" PF "/sriov_totalvfs", F_OK)) {
		printf("bench: passthrough skipped: no SR-IOV PF at " PF " (the lab's igb)\n");
		return;
	}
	if (lab_vf_create(dev, sizeof(dev))) {
		printf("bench: passthrough skipped: vmm vf create failed\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "echo 0 > /proc/sys/net/ipv6/conf/%s/accept_dad; ip link set %s up && "
		 "ip -6 addr flush dev %s && ip -6 addr add fe80::1/64 dev %s", dev, dev, dev, dev);
	if (!dev[0] || lab_sh(cmd) || lab_vf_bind()) {
		printf("bench: passthrough skipped: preparing the VF failed\n");
		lab_vf_remove();
		return;
	}
	for (int i = 0; i < (b->slow_reps + 1) / 2; i++) {
		unsigned long long ia, ib, ma, mb;

		if (vf_boot(50, &ia, &ma) < 0 || vf_boot(400, &ib, &mb) < 0)
			continue;
		if (ib > ia) {
			add(b, "exits.passthrough_msi.per_msi", "exits", false,
			    ((double)mb - (double)ma) / (double)(ib - ia));
			add(b, "exits.passthrough_msi.extra_msis", "count", false, ib - ia);
		}
	}
	vf_memory(b);
	lab_vf_remove();
}
