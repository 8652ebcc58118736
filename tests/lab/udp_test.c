// SPDX-License-Identifier: MIT
/*
 * Lab: the guest probe's udp workload against vmm's own responder (--probe-peer) on the lab host's
 * igb PF, the guest's NIC an igb VF passed through (the igb switches VF<->PF traffic inside the
 * emulated NIC, so the VF's datagrams reach the PF's netdev; nothing leaves the machine). The PF
 * keeps only its own EUI-64 link-local address (no fe80::1): the guest's probe can reach it only
 * through the address vmm appends to the command line (vmm.probe_peer=). The test guest loads
 * igbvf, brings the VF up and hands over to the built-in guest's /init (its probe).
 *  - one run: samples from the probe, the same number of requests answered in vmm's summary and
 *    its --stats JSON, and the VF's vectors as vmm's vLPI report calls them (vLPI under
 *    gic-version=4, software-injected under 3: the two GIC runs compare delivery paths);
 *  - vmm ab in one VM, halt-poll 0 against 500 us: udp round-trip statistics, JSON and plots, and
 *    no successful halt poll in any epoch of arm A;
 *  - --attribute (issue 37): each udp sample from the peer's answer to the guest's wake-up, through
 *    the VF's vector: under gic3 the vfio-msix IRQ is the host stage; under gic4 the vectors are
 *    vLPIs and never the host's IRQ: a doorbell when the vCPU had blocked, else nothing (not visible).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

#define VF LAB_VF
#define STATS "/tmp/vmm-udp.json"

/* The line of text starting at key, into buf ("" when absent). */
static const char *line_of(const char *text, const char *key, char *buf, size_t n)
{
	const char *p = strstr(text, key);

	buf[0] = 0;
	if (p)
		snprintf(buf, n, "%.*s", (int)strcspn(p, "\n"), p);
	return buf;
}

FIXTURE(udp) {
	struct result r;
	char dev[64];
	char params[256];
};

FIXTURE_SETUP(udp)
{
	char cmd[512];

	memset(&self->r, 0, sizeof(self->r));
	ASSERT_EQ(0, lab_vf_create(self->dev, sizeof(self->dev)));
	ASSERT_NE(0, self->dev[0]);
	/* the PF's own link-local address only (another test may have added fe80::1) */
	snprintf(cmd, sizeof(cmd), "echo 0 > /proc/sys/net/ipv6/conf/%s/accept_dad; ip -6 addr del fe80::1/64 dev %s "
		 "2>/dev/null; ip link set %s up", self->dev, self->dev, self->dev);
	ASSERT_EQ(0, lab_sh(cmd));
	snprintf(cmd, sizeof(cmd), "/sys/class/net/%s/carrier", self->dev);
	for (int i = 0; i < 100; i++) {
		char *c = lab_slurp(cmd, NULL);
		bool up = c && c[0] == '1';

		free(c);
		if (up)
			break;
		usleep(100 * 1000);
	}
	ASSERT_EQ(0, lab_vf_bind());
}

FIXTURE_TEARDOWN(udp)
{
	result_free(&self->r);
	lab_vf_remove();
}

TEST_F_TIMEOUT(udp, probe_udp_answered_by_vmm_on_the_pf, 900)
{
	char *argv[48], v[256], line[512];
	char *const extra[] = { "--vfio", VF, "--probe-peer", self->dev, "--stats", STATS, NULL };
	unsigned int n = 0, lost = 0;
	unsigned long long answered = 0;
	int g = lab_gicv4() ? 4 : 3;

	unlink(STATS);
	test_guest_argv(argv, 48, "probe vmm.probe_out=console vmm.probe=udp:count=300,interval_us=2000", extra);
	run_vmm(argv, 600, &self->r);
	TH_LOG("exit %d after %.1f s", self->r.status, self->r.secs);
	ASSERT_EQ(0, self->r.status) TH_LOG("stderr: %s\nstdout: %s", self->r.err, self->r.out);
	ASSERT_NE(NULL, marker(self->r.out, "GUEST-PEER", v, sizeof(v))) TH_LOG("%s", self->r.out);
	EXPECT_EQ(0, strncmp(v, "fe80::", 6)) TH_LOG("the guest's peer: '%s'", v);
	EXPECT_NE(NULL, strstr(self->r.err, v)) TH_LOG("vmm did not name %s: %s", v, self->r.err);
	EXPECT_NE(NULL, marker(self->r.out, "GUEST-PING6", v, sizeof(v)));
	EXPECT_STREQ("1", v);
	/* the probe's summary line: vmm-probe: udp DEV n=N min=... lost=L */
	const char *s = strstr(self->r.out, "vmm-probe: udp ");

	ASSERT_NE(NULL, s) TH_LOG("%s", self->r.out);
	line_of(s, "vmm-probe: udp ", line, sizeof(line));
	printf("# UDP gic%d guest: %s\n", g, line);
	ASSERT_NE(NULL, strstr(line, " n=")) TH_LOG("%s", line);
	n = strtoul(strstr(line, " n=") + 3, NULL, 10);
	if (strstr(line, " lost="))
		lost = strtoul(strstr(line, " lost=") + 6, NULL, 10);
	EXPECT_GE(n, 250) TH_LOG("%s", line);
	EXPECT_EQ(300, n + lost);
	/* vmm's side: every sample was an answer of its own (a lost one may have been answered late) */
	const char *pl = strstr(self->r.err, "vmm: probe peer [");

	ASSERT_NE(NULL, pl) TH_LOG("%s", self->r.err);
	line_of(pl, "vmm: probe peer [", line, sizeof(line));
	printf("# UDP gic%d vmm: %s\n", g, line);
	ASSERT_NE(NULL, strstr(line, "answered "));
	answered = strtoull(strstr(line, "answered ") + 9, NULL, 10);
	EXPECT_GE(answered, n);
	EXPECT_LE(answered, n + lost);
	EXPECT_NE(NULL, strstr(line, "dropped 0 oversized, 0 not from a link-local")) TH_LOG("%s", line);
	/* the same count in --stats */
	char *j = lab_slurp(STATS, NULL), key[64];

	ASSERT_NE(NULL, j) TH_LOG("--stats wrote nothing");
	snprintf(key, sizeof(key), "\"answered\":%llu,", answered);
	EXPECT_NE(NULL, strstr(j, ",\"probe_peer\":{\"ifname\":\"")) TH_LOG("%.400s", j);
	EXPECT_NE(NULL, strstr(j, key)) TH_LOG("no %s in the stats", key);
	free(j);
	/* the delivery path of the VF's vectors */
	const char *rep = strstr(self->r.err, "vmm: vfio " VF " -> ");

	ASSERT_NE(NULL, rep) TH_LOG("no vLPI report: %s", self->r.err);
	line_of(rep, "vmm: vfio", line, sizeof(line));
	printf("# UDP gic%d delivery: %s\n", g, line);
	if (g == 4) {
		EXPECT_NE(NULL, strstr(line, "vLPI")) TH_LOG("%s", line);
		EXPECT_EQ(NULL, strstr(line, "software")) TH_LOG("%s", line);
	} else {
		EXPECT_NE(NULL, strstr(line, "software")) TH_LOG("%s", line);
	}
}

TEST_F_TIMEOUT(udp, ab_one_vm_udp_halt_poll_0_vs_500us, 900)
{
	char params[320];
	int g = lab_gicv4() ? 4 : 3, e0, e1;
	bool zero0, zero1;

	snprintf(params, sizeof(params), "console=hvc0 panic=-1 quiet vmmtest=probe vmm.probe_out=console "
		 "vmm.probe=udp:count=1000,interval_us=1000");
	char *const argv[] = { VMM, "ab", "--arm", "hp0:--halt-poll-ns 0", "--arm", "hp500us:--halt-poll-ns 500000",
			       "--epochs", "6", "--warmup", "2", "--epoch-ms", "400", "--seed", "7", "--json",
			       "/tmp/abu.json", "--plot", "/tmp/abu", "--", "-k", lab_kernel(), "-i", "/lab/guest.cpio.gz",
			       "-m", "512M", "-c", "2", "--console", "virtio", "-p", params, "--vfio", VF,
			       "--probe-peer", self->dev, NULL };

	unlink("/tmp/abu.json");
	run_vmm(argv, 800, &self->r);
	printf("%s", self->r.out);
	ASSERT_EQ(0, self->r.status) TH_LOG("%s\n%s", self->r.out, self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "in one VM (the ceiling switched at run time)")) TH_LOG("%s", self->r.err);
	ASSERT_NE(NULL, strstr(self->r.out, "== udp (us)")) TH_LOG("%s", self->r.err);
	long long a = ab_epoch_polls(self->r.out, "hp0", &e0, &zero0, NULL);
	long long b = ab_epoch_polls(self->r.out, "hp500us", &e1, &zero1, NULL);

	EXPECT_GE(e0, 2) TH_LOG("too few hp0 epochs: %s", self->r.err);
	EXPECT_GE(e1, 2) TH_LOG("too few hp500us epochs: %s", self->r.err);
	EXPECT_TRUE(zero0) TH_LOG("an hp0 epoch polled");
	EXPECT_EQ(0, a);
	char *j = lab_slurp("/tmp/abu.json", NULL);

	ASSERT_NE(NULL, j);
	EXPECT_NE(NULL, strstr(j, "\"mode\":\"one-vm\""));
	EXPECT_NE(NULL, strstr(j, "\"workload\":\"udp\",\"quantity\":\"p50\""));
	EXPECT_NE(NULL, strstr(j, "\"udp\":{\"unit\":\"us\",\"n\":"));
	EXPECT_NE(NULL, strstr(self->r.out, "verdict udp, hp500us against hp0: ")) TH_LOG("%s", self->r.out);
	EXPECT_EQ(0, access("/tmp/abu-udp.dat", F_OK));
	EXPECT_EQ(0, access("/tmp/abu-udp.gp", F_OK));
	char line[512];
	const char *rep = strstr(self->r.err, "vmm: vfio " VF " -> ");

	line_of(rep ? rep : "", "vmm: vfio", line, sizeof(line));
	printf("# UDP-AB gic%d: hp0 %lld successful polls over %d epochs, hp500us %lld over %d; delivery: %s\n", g,
	       a, e0, b, e1, line[0] ? line : "(no vLPI report)");
	line_of(self->r.err, "vmm: probe peer [", line, sizeof(line));
	printf("# UDP-AB gic%d vmm: %s\n", g, line);
	printf("# AB-JSON %.2000s\n", j);
	free(j);
}

/* The udp class objects' sums: samples, those whose wake came through the VF's vector, through a
 * doorbell */
static void udp_sums(const struct json *j, double *n, double *vfio, double *db)
{
	static const char *const cls[] = { "poll_hit", "blocked", "no_wait", "running", "not_visible", "ambiguous" };

	*n = *vfio = *db = 0;
	for (size_t k = 0; k < sizeof(cls) / sizeof(cls[0]); k++) {
		const struct json *c = attrib_class(j, "udp", cls[k]);

		*n += c ? attrib_num(c, "n") : 0;
		*vfio += c ? attrib_num(c, "vfio") : 0;
		*db += c ? attrib_num(c, "doorbell") : 0;
	}
}

TEST_F_TIMEOUT(udp, attribute_follows_the_vfs_vector, 900)
{
	char *argv[48], err[160];
	char *const extra[] = { "--vfio", VF, "--probe-peer", self->dev, "--attribute=/tmp/vmm-udp-attr.json", NULL };
	int g = lab_gicv4() ? 4 : 3;
	struct json j = { 0 };
	size_t len = 0;
	double n, vfio, db;

	unlink("/tmp/vmm-udp-attr.json");
	test_guest_argv(argv, 48, "probe vmm.probe_out=console vmm.probe=udp:count=300,interval_us=2000", extra);
	run_vmm(argv, 600, &self->r);
	ASSERT_EQ(0, self->r.status) TH_LOG("stderr: %s", self->r.err);
	const char *line = strstr(self->r.err, "vmm: attribution:");

	ASSERT_NE(NULL, line) TH_LOG("stderr: %s", self->r.err);
	for (int i = 0; i < 40 && *line; i++) { /* the report, for the log */
		size_t k = strcspn(line, "\n");

		printf("# UDP-ATTR gic%d %.*s\n", g, (int)k, line);
		line += k + (line[k] == '\n');
	}
	EXPECT_EQ(NULL, strstr(self->r.err, "udp samples not joined")) TH_LOG("%s", self->r.err);
	char *text = lab_slurp("/tmp/vmm-udp-attr.json", &len);

	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, json_parse(text, len, &j, err, sizeof(err))) TH_LOG("%s", err);
	free(text);
	EXPECT_EQ(0, attrib_num(json_get(&j, "trace"), "lost"));
	udp_sums(&j, &n, &vfio, &db);
	EXPECT_GE(n, 200) TH_LOG("udp samples joined: %.0f", n);
	const struct json *amb = attrib_class(&j, "udp", "ambiguous");

	/* igbvf takes a transmit completion per request, on a vector of its own: when it wakes the vCPU
	 * before the answer comes, the answer rides along (earlier_wake: a fifth to a third of the
	 * samples under TCG, where the two are milliseconds apart) */
	EXPECT_LT(amb ? attrib_num(amb, "n") : 0, n * 0.4) TH_LOG("too many ambiguous udp samples");
	if (g == 3) {
		/* software injection: the host takes every vector as its own IRQ */
		EXPECT_GT(vfio, n * 0.7) TH_LOG("%.0f of %.0f samples through the vector", vfio, n);
		const struct json *b = attrib_class(&j, "udp", "blocked");

		if (b) { /* its host stage is the vector's IRQ: answer -> vfio-msix */
			const struct json *h = json_get(json_get(b, "stages"), "host_irq");

			EXPECT_GE(attrib_num(h, "n"), attrib_num(b, "n") * 0.8);
			EXPECT_GE(attrib_num(h, "p50"), 0);
		}
	} else {
		/* vLPIs: never the host's IRQ; a doorbell when the vCPU had blocked in KVM, else nothing.
		 * Which of the two depends on whether WFI traps: always under trap, never under notrap,
		 * by default not for a vCPU alone on its CPU with vLPIs */
		const struct json *nv = attrib_class(&j, "udp", "not_visible");
		double nvn = nv ? attrib_num(nv, "n") : 0;
		char pol[16];

		lab_wfi_policy(pol, sizeof(pol));
		printf("# UDP-ATTR gic4 policy '%s': doorbell %.0f, not visible %.0f, of %.0f\n", pol, db, nvn, n);
		EXPECT_EQ(0, vfio) TH_LOG("a vLPI's sample came through the host's vector IRQ");
		EXPECT_GT(db + nvn, n * 0.7) TH_LOG("doorbell %.0f, not visible %.0f, of %.0f", db, nvn, n);
		if (!strcmp(pol, "trap"))
			EXPECT_GT(db, n * 0.5);
		if (!strcmp(pol, "notrap")) {
			EXPECT_EQ(0, db);
			EXPECT_GT(nvn, n * 0.7);
		}
	}
	json_free(&j);
}

/* One saved run of the VF's udp round trip for an A/B across host configurations
 * (docs/attribution.md; e.g. kvm-arm.vgic_v4_enable=1 against 0: vLPIs against software
 * injection): only when the lab host was booted with lab.export_ab=1 (run.sh --kernel-args); the
 * saved run is printed whole between markers for `vmm ab compare` on the host. */
TEST_F_TIMEOUT(udp, ab_saved_run_for_host_configs, 900)
{
	char params[320], *cmdline = lab_slurp("/proc/cmdline", NULL);
	bool on = cmdline && strstr(cmdline, "lab.export_ab=1");

	free(cmdline);
	if (!on)
		SKIP(return, "only with the lab host booted lab.export_ab=1 (an A/B across host configurations)");
	snprintf(params, sizeof(params), "console=hvc0 panic=-1 quiet vmmtest=probe vmm.probe_out=console "
		 "vmm.probe=udp:count=3000,interval_us=1000");
	char *const argv[] = { VMM, "ab", "--attribute", "--arm", "hp0:--halt-poll-ns 0", "--arm",
			       "hp500us:--halt-poll-ns 500000", "--epochs", "8", "--warmup", "2", "--epoch-ms", "400",
			       "--seed", "11", "--json", "/tmp/udpcfg.json", "--", "-k", lab_kernel(), "-i",
			       "/lab/guest.cpio.gz", "-m", "512M", "-c", "2", "--console", "virtio", "-p", params,
			       "--vfio", VF, "--probe-peer", self->dev, NULL };

	unlink("/tmp/udpcfg.json");
	run_vmm(argv, 840, &self->r);
	ASSERT_EQ(0, self->r.status) TH_LOG("%s\n%s", self->r.out, self->r.err);
	char *text = lab_slurp("/tmp/udpcfg.json", NULL);

	ASSERT_NE(NULL, text);
	printf("%s", self->r.out);
	printf("UDPCFG-JSON-BEGIN\n%s\nUDPCFG-JSON-END\n", text);
	free(text);
}

TEST_HARNESS_MAIN
