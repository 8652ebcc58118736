// SPDX-License-Identifier: MIT
/*
 * Lab: an igb VF passed through with --vfio. The lab host's PF (0000:00:03.0) gets one VF
 * (0000:00:13.0, its own IOMMU group) prepared with `vmm vf`; the test guest loads igbvf and pings
 * the PF over IPv6 link-local (the igb switches VF<->PF traffic inside the emulated NIC; nothing
 * leaves the machine). The VF's MSI-X interrupts must reach the guest with no userspace exit per
 * packet, and vmm's vLPI report must say, per vector, that KVM forwards them as GICv4 vLPIs under
 * gic-version=4 and injects them in software under gic-version=3. After exit the VF is back on
 * the host, reset, still bound to vfio-pci.
 *
 * QEMU's edu (0000:00:05.0: one MSI vector, INTx, no reset method) covers what a VF does not: INTx
 * through a KVM irqfd with a resamplefd. The guest reads its ID through the mapped BAR, binds
 * uio_pci_generic, and counts the interrupts it raises by writing BAR0+0x60 as INTx events on
 * /dev/uioN (tests/lab/guest/edu.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

#define PF LAB_PF
#define VF LAB_VF
#define EDU "0000:00:05.0"
#define EDU_IRQS 20
#define STATS "/tmp/vmm-vfio-stats.json"

/* Sums a numeric column ("vmm: N  mmio ...") of vmm's per-vCPU exit table. */
static unsigned long long mmio_exits(const char *err)
{
	unsigned long long sum = 0, mmio;
	int id;

	for (const char *p = err; (p = strstr(p, "vmm: ")); p++)
		if (sscanf(p, "vmm: %d %llu", &id, &mmio) == 2 && id >= 0 && id < 64)
			sum += mmio;
	return sum;
}

FIXTURE(vfio) {
	struct result r;
	char dev[64];
};

FIXTURE_SETUP(vfio)
{
	char cmd[512];

	memset(&self->r, 0, sizeof(self->r));
	ASSERT_EQ(0, lab_vf_create(self->dev, sizeof(self->dev)));
	ASSERT_NE(0, self->dev[0]);
	snprintf(cmd, sizeof(cmd), "echo 0 > /proc/sys/net/ipv6/conf/%s/accept_dad; ip link set %s up && "
		 "ip -6 addr flush dev %s && ip -6 addr add fe80::1/64 dev %s", self->dev, self->dev,
		 self->dev, self->dev);
	ASSERT_EQ(0, lab_sh(cmd));
	ASSERT_EQ(0, lab_vf_bind());
}

FIXTURE_TEARDOWN(vfio)
{
	result_free(&self->r);
	lab_vf_remove();
}

struct vf_boot {
	unsigned long long pings, guest_irqs, exits;
	char report[1024];
	char *stats; /* --stats' JSON */
};

/* Boots the test guest with the VF; it pings the PF `pings` times after the link is up. */
static int boot_vf(struct __test_metadata *_metadata, struct result *r, int pings, struct vf_boot *b)
{
	char *argv[40], v[64], step[64];
	char *const extra[] = { "--vfio", VF, "--stats", STATS, NULL };

	free(b->stats);
	memset(b, 0, sizeof(*b));
	unlink(STATS);
	snprintf(step, sizeof(step), "vf vmmpings=%d", pings);
	test_guest_argv(argv, 40, step, extra);
	result_free(r);
	run_vmm(argv, 600, r);
	TH_LOG("%d pings: exit %d after %.1f s", pings, r->status, r->secs);
	EXPECT_EQ(0, r->status) TH_LOG("stderr: %s\nstdout: %s", r->err, r->out);
	if (!marker(r->out, "GUEST-PING6", v, sizeof(v)) || strcmp(v, "1")) {
		TH_LOG("the guest's VF could not reach the PF: %s", r->out);
		return -1;
	}
	b->pings = marker(r->out, "GUEST-PINGS", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
	for (const char *p = r->out; (p = strstr(p, "GUEST-IRQ ")); p++) {
		unsigned long c0 = 0, c1 = 0;
		char line[256];

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		if (strstr(line, "MSIX") && !strstr(line, "virtio") &&
		    sscanf(line, "GUEST-IRQ %*d: %lu %lu", &c0, &c1) >= 1)
			b->guest_irqs += c0 + c1;
	}
	b->exits = mmio_exits(r->err);
	b->stats = lab_slurp(STATS, NULL);
	const char *rep = strstr(r->err, "vmm: vfio " VF " -> ");

	if (!rep) {
		TH_LOG("no vLPI report in: %s", r->err);
		return -1;
	}
	snprintf(b->report, sizeof(b->report), "%.*s", (int)strcspn(rep, "\n"), rep);
	return 0;
}

/* The VF's and the virtio console's rows of vmm's interrupt table (--stats JSON): per MSI-X vector
 * the path the vLPI verdict gave it, the host's count where the host sees the interrupts. */
static void check_irq_table(struct __test_metadata *_metadata, const struct vf_boot *b, bool v4)
{
	unsigned long long host_sum = 0, c;
	char row[1024], v[64];

	ASSERT_NE(NULL, b->stats) TH_LOG("--stats wrote nothing");
	for (int i = 0; i < 3; i++) {
		char vec[16];

		snprintf(vec, sizeof(vec), "msix%d", i);
		ASSERT_NE(NULL, irq_row(b->stats, "vfio", VF, vec, row, sizeof(row))) TH_LOG("no %s row: %s", vec, b->stats);
		printf("# IRQ gic%d: %s\n", v4 ? 4 : 3, row);
		EXPECT_STREQ(v4 ? "vlpi" : "irqfd", json_str(row, "path", v, sizeof(v))) TH_LOG("%s", row);
		EXPECT_STREQ("00:02.0", json_str(row, "pci", v, sizeof(v)));
		if (v4) { /* the host never sees a vLPI: no count, and the text says why */
			EXPECT_FALSE(json_u64(row, "count", &c)) TH_LOG("%s", row);
			EXPECT_STREQ("none", json_str(row, "counted_by", v, sizeof(v)));
			EXPECT_STREQ("device", json_str(row, "signalled_by", v, sizeof(v)));
			EXPECT_NE(NULL, strstr(row, "vLPI (not visible to the host)")) TH_LOG("%s", row);
		} else {
			EXPECT_TRUE(json_u64(row, "count", &c)) TH_LOG("%s", row);
			EXPECT_STREQ("host", json_str(row, "counted_by", v, sizeof(v)));
			host_sum += c; /* per vector it may be 0: igbvf's mailbox vector rarely fires */
		}
	}
	if (!v4)
		EXPECT_GT(host_sum, 0);
	/* the software path: every interrupt the guest took went through the host's handler first */
	if (!v4)
		EXPECT_GE(host_sum, b->guest_irqs) TH_LOG("host %llu, guest %llu", host_sum, b->guest_irqs);
	/* vmm's own device: it wrote each eventfd itself */
	ASSERT_NE(NULL, irq_row(b->stats, "virtio-console", NULL, "msix1", row, sizeof(row))) TH_LOG("%s", b->stats);
	printf("# IRQ gic%d: %s\n", v4 ? 4 : 3, row);
	EXPECT_STREQ("irqfd", json_str(row, "path", v, sizeof(v)));
	EXPECT_STREQ("vmm", json_str(row, "counted_by", v, sizeof(v)));
	EXPECT_GT(irq_count_sum(b->stats, "virtio-console"), 0);
	ASSERT_NE(NULL, irq_row(b->stats, "16550", NULL, "line", row, sizeof(row)));
	EXPECT_STREQ("line", json_str(row, "path", v, sizeof(v)));
}

static double json_double(const char *obj, const char *key)
{
	char k[64];

	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *p = strstr(obj, k);

	return p ? strtod(p + strlen(k), NULL) : -1;
}

/* What governs halting on the vCPUs while the VF's vLPIs were mapped, against what KVM counted. */
static void check_vlpi_window(struct __test_metadata *_metadata, const struct vf_boot *b, bool v4)
{
	const char *w = b->stats ? strstr(b->stats, "\"vlpi_window\":") : NULL;

	ASSERT_NE(NULL, w) TH_LOG("no vlpi_window in --stats");
	w += strlen("\"vlpi_window\":");
	if (!v4) { /* no vLPIs, no window */
		EXPECT_EQ(0, strncmp(w, "null", 4)) TH_LOG("%.300s", w);
		return;
	}
	ASSERT_EQ('{', *w) TH_LOG("gic4 but no vLPI window: %.300s", w);
	unsigned long long vlpis = 0;
	char obj[1024], v[400];
	const char *p = strstr(w, "\"vcpus\":[");

	ASSERT_NE(NULL, p);
	for (p = strchr(p, '{'); p && *p == '{';) {
		const char *e = strstr(p, "\"observed_why\":");
		unsigned long long n = 0, wfi = 0;

		ASSERT_NE(NULL, e);
		e = strchr(e + 17, '}');
		snprintf(obj, sizeof(obj), "%.*s", (int)(e - p + 1), p);
		printf("# VLPI-WINDOW gic4: %s\n", obj);
		unsigned long long out = 0;

		ASSERT_TRUE(json_u64(obj, "wfi_exits", &wfi));
		ASSERT_TRUE(json_u64(obj, "wfi_exits_outside", &out));
		double in_s = json_double(obj, "window_s"), out_s = json_double(obj, "outside_s");
		double rin = in_s > 0 ? wfi / in_s : 0, rout = out_s > 0 ? out / out_s : 0;

		if (strstr(obj, "\"vlpis\":-1") == NULL && json_u64(obj, "vlpis", &n) && n > 0) {
			/* the default policy with vLPIs: the prediction is conditional on the thread
			 * being alone; the observation must be what KVM's counts say */
			EXPECT_STREQ("never-halts-when-alone", json_str(obj, "halting", v, sizeof(v))) TH_LOG("%s", obj);
			EXPECT_STREQ(!wfi ? "no-wfi-exits" : rout > 0 && rin * 4 <= rout ? "wfi-rarely-trapped" : "wfi-trapped",
				     json_str(obj, "observed", v, sizeof(v))) TH_LOG("%s", obj);
			/* what the lab shows: with vLPIs mapped KVM saw WFIs far more rarely than
			 * without (2026-11-30, gic4: 0.9-2.5/s against 19-30/s); trapping at the
			 * same rate would mean the vLPIs did not clear TWI at all */
			EXPECT_LT(rin, rout) TH_LOG("%s", obj);
		}
		vlpis += n;
		p = e + 1;
		if (*p == ',')
			p++;
	}
	EXPECT_EQ(3, vlpis) TH_LOG("the VF's 3 vectors are vLPIs: %.600s", w);
}

TEST_F_TIMEOUT(vfio, igb_vf_pings_with_per_vector_vlpi_report, 900)
{
	struct vf_boot a = { 0 }, b = { 0 };
	bool v4 = lab_gicv4();
	int g = v4 ? 4 : 3;

	ASSERT_EQ(0, boot_vf(_metadata, &self->r, 100, &a));
	printf("%s", self->r.err);
	EXPECT_GT(a.guest_irqs, 0);
	if (v4) { /* every vector forwarded to the GICv4 ITS */
		EXPECT_NE(NULL, strstr(a.report, "vLPI")) TH_LOG("%s", a.report);
		EXPECT_EQ(NULL, strstr(a.report, "software")) TH_LOG("%s", a.report);
		EXPECT_EQ(NULL, strstr(a.report, "unknown")) TH_LOG("%s", a.report);
	} else {
		EXPECT_NE(NULL, strstr(a.report, "software")) TH_LOG("%s", a.report);
		EXPECT_EQ(NULL, strstr(a.report, "vLPI (")) TH_LOG("%s", a.report);
	}
	check_irq_table(_metadata, &a, v4);
	check_vlpi_window(_metadata, &a, v4);
	/* the same boot with 500 more packets: no userspace exit per packet */
	ASSERT_EQ(0, boot_vf(_metadata, &self->r, 600, &b));
	EXPECT_GE(b.pings, a.pings + 400);
	long long extra_exits = (long long)b.exits - (long long)a.exits;
	double per1000 = b.pings > a.pings ? 1000.0 * extra_exits / (double)(b.pings - a.pings) : 0;

	EXPECT_LT(per1000, 100.0) TH_LOG("%lld more userspace exits for %llu more packets", extra_exits,
					  b.pings - a.pings);
	printf("# VFIO gic%d: %s\n", g, a.report);
	printf("# VFIO gic%d: %llu and %llu pings; %llu and %llu guest VF interrupts; %llu and %llu userspace "
	       "MMIO exits: %.1f exits per 1000 extra packets\n", g, a.pings, b.pings, a.guest_irqs,
	       b.guest_irqs, a.exits, b.exits, per1000);
	/* after exit: the VF is back on the host, still on vfio-pci (reset by vmm on the way out) */
	EXPECT_EQ(0, lab_sh("readlink /sys/bus/pci/devices/" VF "/driver | grep -q vfio-pci"));
	free(a.stats);
	free(b.stats);
}

/* A user's guest prints none of vmm's markers: start-up's memory goes at its first quiet second,
 * VF or not. Under GICv4's default WFI policy the vCPUs with vLPIs idle on the CPU (KVM stops
 * trapping their WFI), so their CPU time is no sign of work: vmm judges them by exits and kicks
 * alone and says so. Before that, the lab's plain VF guest kept its start-up memory to the 30 s
 * deadline (its quiet spells ended 95 times by CPU time, 18 by activity). */
TEST_F_TIMEOUT(vfio, plain_guest_gives_start_up_memory_back_at_its_first_quiet_second, 600)
{
	char *argv[40], pol[32];
	char *const extra[] = { "--vfio", VF, NULL };
	const struct run_opts o = { .timeout = 600, .term_on = "GUEST-HOLD" };
	bool v4 = lab_gicv4();

	lab_wfi_policy(pol, sizeof(pol));
	setenv("VMM_TIMINGS", "1", 1);
	test_guest_argv(argv, 40, "vf-hold vmmpings=5 vmmplain=1", extra);
	run_vmm_opts(argv, &o, &self->r);
	unsetenv("VMM_TIMINGS");
	ASSERT_NE(NULL, strstr(self->r.out, "GUEST-HOLD")) TH_LOG("stdout: %s\nstderr: %s", self->r.out, self->r.err);
	ASSERT_NE(NULL, strstr(self->r.out, "GUEST-PING6 1")) TH_LOG("the VF did not reach the PF: %s", self->r.out);
	EXPECT_EQ(NULL, strstr(self->r.out, "vmm-boot-end")) TH_LOG("the plain guest printed vmm's marker");
	const char *w = strstr(self->r.err, "start-up's memory ");

	ASSERT_NE(NULL, w) TH_LOG("VMM_TIMINGS said nothing of start-up's memory: %s", self->r.err);
	printf("# QUIET gic%d (policy %s): %.*s\n", v4 ? 4 : 3, pol[0] ? pol : "default", (int)strcspn(w, "\n"), w);
	EXPECT_EQ(0, strncmp(w, "start-up's memory given back at the guest's first quiet second", 62)) TH_LOG("%.400s", w);
	/* who was judged how: every vCPU under notrap, the vLPIs' under gic4's default policy, none
	 * where WFI traps (gic3, or policy trap) */
	char line[512];
	bool untrapped = !strcmp(pol, "notrap") || (v4 && strcmp(pol, "trap"));

	snprintf(line, sizeof(line), "%.*s", (int)strcspn(w, "\n"), w);
	if (untrapped) {
		EXPECT_NE(NULL, strstr(line, "judged by exits and kicks alone")) TH_LOG("%s", line);
	} else {
		EXPECT_EQ(NULL, strstr(line, "judged by exits")) TH_LOG("%s", line);
	}
}

TEST_F(vfio, refusals_leave_the_device_as_it_was)
{
	char *const bad[] = { VMM, "run", "--vfio", "zz:00.0", NULL };
	char *const absent[] = { VMM, "run", "--vfio", "0000:00:1f.0", NULL };
	char *const held[] = { VMM, "run", "--vfio", PF, NULL };

	EXPECT_TRUE(refused_with(bad, "expected a PCI address", &self->r)) TH_LOG("%s", self->r.err);
	EXPECT_TRUE(refused_with(absent, "no PCI device", &self->r)) TH_LOG("%s", self->r.err);
	/* the PF is held by igb: its group cannot be opened for vfio */
	EXPECT_TRUE(refused_with(held, "is bound to igb, not to vfio-pci", &self->r)) TH_LOG("%s", self->r.err);
	EXPECT_EQ(0, lab_sh("readlink /sys/bus/pci/devices/" PF "/driver | grep -q igb"));
}

/* The edu on vfio-pci by sysfs (vmm vf bind takes VFs only). On this lab's DT/SMMU host the edu
 * gets its IOMMU group only when a driver first probes it. */
static int edu_bind_vfio(void)
{
	lab_sh("modprobe vfio-pci; modprobe vfio_iommu_type1");
	if (lab_sh("readlink /sys/bus/pci/devices/" EDU "/driver | grep -q vfio-pci") == 0)
		return 0;
	lab_sh("echo " EDU " > /sys/bus/pci/devices/" EDU "/driver/unbind 2>/dev/null");
	if (lab_sh("echo vfio-pci > /sys/bus/pci/devices/" EDU "/driver_override && "
	       "echo " EDU " > /sys/bus/pci/drivers_probe"))
		return -1;
	for (int i = 0; i < 50 && access("/sys/bus/pci/devices/" EDU "/iommu_group", F_OK); i++)
		usleep(100 * 1000);
	return lab_sh("readlink /sys/bus/pci/devices/" EDU "/driver | grep -q vfio-pci");
}

/* No driver, no override: what nothing in the lab host claims. */
static void edu_unbind(void)
{
	lab_sh("echo " EDU " > /sys/bus/pci/devices/" EDU "/driver/unbind 2>/dev/null; "
	   "echo > /sys/bus/pci/devices/" EDU "/driver_override");
}

/* The edu needs none of the VF fixture's set-up: each test puts it in the state it needs. */
FIXTURE(edu) {
	int unused;
};

FIXTURE_SETUP(edu)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(edu)
{
}

TEST_F_TIMEOUT(edu, id_and_intx_events_through_uio, 600)
{
	struct result r = { 0 };
	char *argv[40], v[128], step[64];
	char *const extra[] = { "--vfio", EDU, "--stats", STATS, NULL };
	unsigned long long pending = 0, masked = 0, unmasked = 0, intx = 0;
	unsigned int gsi = 0;

	ASSERT_EQ(0, edu_bind_vfio()) TH_LOG("cannot bind " EDU " to vfio-pci");
	unlink(STATS);
	snprintf(step, sizeof(step), "edu vmmeduirqs=%d", EDU_IRQS);
	test_guest_argv(argv, 40, step, extra);
	run_vmm(argv, 600, &r);
	TH_LOG("exit %d after %.1f s", r.status, r.secs);
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s\nstdout: %s", r.err, r.out);
	printf("%s", r.err);
	for (const char *p = r.out; (p = strstr(p, "GUEST-")); p++)
		if (!strncmp(p, "GUEST-EDU", 9) || !strncmp(p, "GUEST-IRQ", 9))
			printf("# %.*s\n", (int)strcspn(p, "\n"), p);
	/* the ID register, read through the BAR vmm mapped into the guest */
	ASSERT_NE(NULL, marker(r.out, "GUEST-EDU-ID", v, sizeof(v))) TH_LOG("%s", r.out);
	EXPECT_STREQ("0x010000ed", v);
	ASSERT_NE(NULL, marker(r.out, "GUEST-EDU-INVERT", v, sizeof(v)));
	EXPECT_STREQ("0xedcba987", v) TH_LOG("a BAR write did not reach the device");
	/* N raised, N INTx events on /dev/uioN */
	ASSERT_NE(NULL, marker(r.out, "GUEST-EDU-N", v, sizeof(v))) TH_LOG("%s", r.out);
	int events = atoi(v);

	EXPECT_EQ(EDU_IRQS, events) TH_LOG("%s", r.out);
	/* vmm's side: INTx wired once, and each event seen pending, masked and unmasked by the guest
	 * (uio_pci_generic's probe toggles INTX_DISABLE once more) */
	const char *l = strstr(r.err, "vmm: vfio " EDU " (");

	ASSERT_NE(NULL, l) TH_LOG("%s", r.err);
	EXPECT_EQ(1, sscanf(strstr(l, "INTx ") ?: "", "INTx %llu", &intx));
	EXPECT_EQ(1, intx);
	l = strstr(r.err, "vmm: vfio " EDU ": INTx on GSI");
	ASSERT_NE(NULL, l) TH_LOG("%s", r.err);
	ASSERT_EQ(4, sscanf(l, "vmm: vfio " EDU ": INTx on GSI %u with a resamplefd: the guest saw it "
			    "pending %llu times, masked it %llu times, unmasked it %llu times", &gsi,
			    &pending, &masked, &unmasked));
	EXPECT_GE(pending, EDU_IRQS);
	EXPECT_GE(masked, EDU_IRQS);
	EXPECT_GE(unmasked, EDU_IRQS);
	EXPECT_NE(NULL, strstr(r.err, "vmm: vfio " EDU ": no reset method"));
	/* the interrupt table: INTx counted by the host's vfio-intx handler, at least the N raised */
	char *stats = lab_slurp(STATS, NULL), row[1024];
	unsigned long long host = 0;

	ASSERT_NE(NULL, stats);
	ASSERT_NE(NULL, irq_row(stats, "vfio", EDU, "intx", row, sizeof(row))) TH_LOG("%s", stats);
	printf("# IRQ gic%d: %s\n", lab_gicv4() ? 4 : 3, row);
	EXPECT_STREQ("line-resample", json_str(row, "path", v, sizeof(v)));
	EXPECT_TRUE(json_u64(row, "count", &host)) TH_LOG("%s", row);
	EXPECT_GE(host, EDU_IRQS) TH_LOG("%s", row);
	free(stats);
	printf("# EDU gic%d: ID 0x010000ed read through the BAR; %d of %d interrupts arrived as INTx "
	       "events (GSI %u, resamplefd); vmm saw %llu pending status reads, %llu masks, %llu unmasks\n",
	       lab_gicv4() ? 4 : 3, events, EDU_IRQS, gsi, pending, masked, unmasked);
	EXPECT_EQ(0, lab_sh("readlink /sys/bus/pci/devices/" EDU "/driver | grep -q vfio-pci"));
	result_free(&r);
}

/* Memory decode toggled under a vCPU reading the BAR: vmm must forward MEMORY=1 to the device
 * before the BAR's memslots appear, and remove them before MEMORY=0 reaches it, or a read landing
 * in between faults in the host (vfio-pci's fault handler answers SIGBUS for a BAR whose memory is
 * off: KVM_RUN fails with EFAULT and vmm exits 1). The guest toggles EDU_TOGGLES times with its
 * other vCPU reading BAR0 in a loop (tests/lab/guest/edutoggle.c). */
#define EDU_TOGGLES 1000

TEST_F_TIMEOUT(edu, bar_reads_while_memory_decode_toggles, 600)
{
	struct result r = { 0 };
	char *argv[40], v[160], step[64];
	char *const extra[] = { "--vfio", EDU, NULL };

	ASSERT_EQ(0, edu_bind_vfio()) TH_LOG("cannot bind " EDU " to vfio-pci");
	snprintf(step, sizeof(step), "edutoggle vmmtoggles=%d", EDU_TOGGLES);
	test_guest_argv(argv, 40, step, extra);
	run_vmm(argv, 600, &r);
	TH_LOG("exit %d after %.1f s", r.status, r.secs);
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s\nstdout: %s", r.err, r.out);
	EXPECT_EQ(NULL, strstr(r.err, "KVM_RUN on vCPU")) TH_LOG("%s", r.err);
	for (const char *p = r.out; (p = strstr(p, "GUEST-EDUTOGGLE")); p++)
		printf("# %.*s\n", (int)strcspn(p, "\n"), p);
	ASSERT_NE(NULL, marker(r.out, "GUEST-EDUTOGGLE-ID", v, sizeof(v))) TH_LOG("%s", r.out);
	EXPECT_STREQ("0x010000ed", v);
	ASSERT_NE(NULL, marker(r.out, "GUEST-EDUTOGGLE-N", v, sizeof(v))) TH_LOG("%s", r.out);
	EXPECT_EQ(EDU_TOGGLES, atoi(v));
	ASSERT_NE(NULL, marker(r.out, "GUEST-EDUTOGGLE-READS", v, sizeof(v))) TH_LOG("%s", r.out);
	printf("# EDUTOGGLE gic%d: %s; vmm exit %d after %.1f s\n", lab_gicv4() ? 4 : 3, v, r.status, r.secs);
	EXPECT_EQ(0, lab_sh("readlink /sys/bus/pci/devices/" EDU "/driver | grep -q vfio-pci"));
	result_free(&r);
}

/* A device on no driver and one held by its own driver are each refused with what to do, and left
 * as they were. A non-viable group cannot be made here: every device on the lab's pcie.0 has an
 * IOMMU group of its own (the message is in vfio/container.c, the sysfs check in tests/unit/vf_test). */
TEST_F_TIMEOUT(edu, refusals_say_what_to_do_and_leave_it_as_it_was, 120)
{
	struct result r = { 0 };
	char *const edu[] = { VMM, "run", "--vfio", EDU, NULL };
	char *const pf[] = { VMM, "run", "--vfio", PF, NULL };

	edu_unbind();
	EXPECT_TRUE(refused_with(edu, "echo vfio-pci > /sys/bus/pci/devices/" EDU "/driver_override", &r))
		TH_LOG("%s", r.err);
	printf("# %s", r.err);
	EXPECT_NE(0, lab_sh("test -e /sys/bus/pci/devices/" EDU "/driver"));
	lab_sh("modprobe igb");
	for (int i = 0; i < 50 && access("/sys/bus/pci/devices/" PF "/driver", F_OK); i++)
		usleep(100 * 1000);
	EXPECT_TRUE(refused_with(pf, "is bound to igb, not to vfio-pci", &r)) TH_LOG("%s", r.err);
	printf("# %s", r.err);
	EXPECT_EQ(0, lab_sh("readlink /sys/bus/pci/devices/" PF "/driver | grep -q igb"));
	result_free(&r);
}

TEST_HARNESS_MAIN
