// SPDX-License-Identifier: MIT
/*
 * Lab: halt polling under control. The built-in guest runs the latency probe's timer workload
 * (vCPUs sleep in WFI between timer ticks) with the VM's ceiling (KVM_CAP_HALT_POLL) at 0, then at
 * 500 us: KVM's stats must show no successful poll at 0 and some at 500 us, both in the exit
 * summary's JSON (--stats) and live through the control socket, where the ceiling is changed while
 * the guest runs and the next interval's stats reflect it.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

#define CTL "/tmp/vmm-hp.ctl"
#define STATS "/tmp/vmm-hp.json"
/* Timer ticks on a grid: interval_us, count. The wall time is about their product on a quiet lab
 * host and on a loaded one alike (missed periods are skipped), so what a test needs to outlast or
 * fit in is set by these two, not by the host's load. */
#define PROBE "console=ttyS0 panic=-1 quiet vmm.probe=timer:interval_us=%d,count=%d"

/* The sum over vCPU sources of a cumulative stat in a stats JSON text. */
static long long sum_stat(const char *json, const char *stat)
{
	char key[96];
	long long sum = 0;
	int n = 0;

	snprintf(key, sizeof(key), "{\"name\":\"%s\",", stat);
	for (const char *p = json; (p = strstr(p, key)); p++) {
		const char *v = strstr(p, "\"value\":");

		if (v) {
			sum += strtoll(v + 8, NULL, 10);
			n++;
		}
	}
	return n ? sum : -1;
}

FIXTURE(hp) {
	struct result r;
};
FIXTURE_SETUP(hp) { memset(&self->r, 0, sizeof(self->r)); }
FIXTURE_TEARDOWN(hp) { result_free(&self->r); }

static void run_probe(struct result *r, const char *ceiling, int interval_us, int count)
{
	char params[256];

	snprintf(params, sizeof(params), PROBE, interval_us, count);
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "256M", "-p", params, "--halt-poll-ns",
			       (char *)ceiling, "--stats", STATS, "--stats-interval", "0.5", NULL };

	unlink(STATS);
	run_vmm(argv, 600, r);
}

TEST_F_TIMEOUT(hp, ceiling_0_never_polls_500us_does, 900)
{
	long long ok0, ok500, att500;
	char *j;

	/* 200 us ticks: each halt ends well inside a 500 us poll, on a quiet host too (2 ms ticks
	 * outlast the ceiling, so only a loaded host's late ticks made polls succeed); 5000 ticks
	 * last about 1 s, over the 0.5 s stats intervals */
	run_probe(&self->r, "0", 200, 5000);
	ASSERT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "ceiling 0 ns (this VM's KVM_CAP_HALT_POLL)")) TH_LOG("%s", self->r.err);
	ASSERT_NE(NULL, j = lab_slurp(STATS, NULL)) TH_LOG("--stats wrote nothing: %s", self->r.err);
	ok0 = sum_stat(j, "halt_successful_poll");
	EXPECT_EQ(0, ok0);
	EXPECT_GT(sum_stat(j, "halt_wakeup"), 100) TH_LOG("the vCPUs did not halt: %s", self->r.err);
	/* the run phase in full (from the guest's init), the boot phase, intervals, vmm's own exits */
	EXPECT_NE(NULL, strstr(j, "{\"from\":\"boot-end\",\"to\":\"exit\"")) TH_LOG("%.300s", j);
	EXPECT_NE(NULL, strstr(j, ",\"boot\":{\"from\":\"start\",\"to\":\"boot-end\""));
	EXPECT_NE(NULL, strstr(j, ",\"interval_ms\":500,\"intervals\":[{\"from\":\"interval\""));
	EXPECT_NE(NULL, strstr(j, ",\"vmm\":{\"exits\":{\"vcpu0\":{\"mmio\":"));
	/* the probe's results came over its virtio-console port, none over the serial console */
	EXPECT_NE(NULL, strstr(j, "\"probe\":{\"channel\":\"port\",\"port\":{\"frames\":")) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(j, "\"console\":{\"frames\":0,\"bytes\":0}"));
	EXPECT_EQ(NULL, strstr(self->r.out, "VMM-PROBE "));
	EXPECT_NE(NULL, strstr(self->r.err, "vmm: stats of the run phase: ")) TH_LOG("%s", self->r.err);
	free(j);
	result_free(&self->r);
	run_probe(&self->r, "500000", 200, 5000);
	ASSERT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	ASSERT_NE(NULL, j = lab_slurp(STATS, NULL));
	ok500 = sum_stat(j, "halt_successful_poll");
	att500 = sum_stat(j, "halt_attempted_poll");
	EXPECT_GT(ok500, 0) TH_LOG("%s", self->r.err);
	/* what governs halting: no vLPIs here, WFI traps (the lab's default policy), KVM polls */
	EXPECT_NE(NULL, strstr(self->r.err, "vmm: what governs halting: kvm halt_poll_ns ")) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "vmm: vcpu0 polls: WFI traps to KVM, which polls up to 500000 ns"));
	EXPECT_NE(NULL, strstr(j, ",\"governor\":{\"halt_poll_ns\":"));
	/* the exit summary shows the halt-wait histogram per vCPU */
	EXPECT_NE(NULL, strstr(self->r.err, "vcpu0 halt_wait_hist")) TH_LOG("%s", self->r.err);
	printf("# HALT-POLL ceiling 0: %lld successful polls; ceiling 500 us: %lld of %lld attempts "
	       "successful\n", ok0, ok500, att500);
	free(j);
}

/* The driver of the live change: waits for the socket, reads the stats, raises the ceiling, reads
 * them again; what it saw goes to a file for the test. Exit status 0 when every request worked. */
static int live_driver(void)
{
	char cmd[512];

	for (int i = 0; i < 600 && access(CTL, F_OK); i++)
		usleep(100 * 1000);
	/* until the probe runs (the vCPUs halt between its timer ticks): a loaded lab boots slowly */
	for (int i = 0; i < 300; i++) {
		char *j = NULL;
		bool halting = system(VMM " ctl " CTL " stats > /tmp/hp-a.json") == 0 &&
			       (j = lab_slurp("/tmp/hp-a.json", NULL)) && sum_stat(j, "halt_wakeup") > 100;

		free(j);
		if (halting)
			break;
		sleep(1);
	}
	snprintf(cmd, sizeof(cmd),
		 VMM " ctl " CTL " stats > /tmp/hp-a.json && " VMM " ctl " CTL " set halt-poll-ns 500000 "
		 "> /tmp/hp-set.json && sleep 4 && " VMM " ctl " CTL " stats > /tmp/hp-b.json && "
		 VMM " ctl " CTL " get > /tmp/hp-get.json && " VMM " stat " CTL " --once > /tmp/hp-stat.txt");
	return system(cmd) == 0 ? 0 : 1;
}

TEST_F_TIMEOUT(hp, ceiling_changed_while_the_guest_runs, 900)
{
	char params[256];
	int st = -1;

	/* 8 s of 200 us ticks: the driver's stats, change, 4 s wait and reads must fit in the run even
	 * on a quiet lab host (2 s of ticks ended before the second read), and the halts must be
	 * shorter than the 500 us ceiling for a poll to succeed */
	snprintf(params, sizeof(params), PROBE, 200, 40000);
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "256M", "-p", params, "--halt-poll-ns", "0",
			       "--ctl", CTL, NULL };
	pid_t drv = fork();

	if (drv == 0)
		_exit(live_driver());
	run_vmm(argv, 600, &self->r);
	waitpid(drv, &st, 0);
	ASSERT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("a vmm ctl request failed: %s", self->r.err);
	char *a = lab_slurp("/tmp/hp-a.json", NULL), *b = lab_slurp("/tmp/hp-b.json", NULL);
	long long ok_a = sum_stat(a, "halt_successful_poll"), ok_b = sum_stat(b, "halt_successful_poll");

	/* vmm's own interrupt table rides in the stats reply, and the reply stays one JSON object */
	EXPECT_NE(NULL, strstr(b, "\"vmm\":{\"interrupts\":[{\"device\":\"16550\"")) TH_LOG("%.2000s", b);
	int depth = 0, min_depth = 1;
	bool in_str = false;

	for (const char *p = b; *p; p++) {
		if (in_str && *p == '\\' && p[1])
			p++;
		else if (*p == '"')
			in_str = !in_str;
		else if (!in_str && (*p == '{' || *p == '['))
			depth++;
		else if (!in_str && (*p == '}' || *p == ']') && --depth < min_depth && p[1] && p[1] != '\n')
			min_depth = depth; /* closed before the end */
	}
	EXPECT_EQ(0, depth) TH_LOG("unbalanced stats reply");
	EXPECT_EQ(1, min_depth) TH_LOG("the stats reply's object closes before its end");
	EXPECT_EQ(0, ok_a) TH_LOG("polling at ceiling 0");
	EXPECT_GT(ok_b, ok_a) TH_LOG("no successful poll after the ceiling went to 500 us");
	char *get = lab_slurp("/tmp/hp-get.json", NULL), *stat = lab_slurp("/tmp/hp-stat.txt", NULL);

	EXPECT_NE(NULL, strstr(get, "\"halt_poll_ns\":500000"));
	EXPECT_NE(NULL, strstr(stat, "halt_successful_poll"));
	EXPECT_NE(NULL, strstr(stat, "\n1     ")) TH_LOG("no row for vCPU 1: %s", stat);
	printf("# HALT-POLL live: %lld successful polls before the change (ceiling 0), %lld after 4 s at "
	       "500 us\n", ok_a, ok_b);
	printf("# vmm stat --once:\n%s", stat);
	free(get);
	free(stat);
	free(a);
	free(b);
	/* a second vmm on the same control socket path is refused (the first is gone: it must work) */
}

/* vmm ab in one VM: the ceiling switched between 0 and 500 us per epoch through the control socket
 * while the probe's timer and ping-pong run; each epoch's own stats must follow its arm. The
 * timer fills about eleven of the sixteen epochs; 600 round trips keep the ping-pong going
 * through the rest (300 ended after two, both of one arm once: no ping-pong comparison). */
TEST_F_TIMEOUT(hp, ab_one_vm_halt_poll_0_vs_500us, 900)
{
	char *const argv[] = { VMM, "ab", "--arm", "hp0:--halt-poll-ns 0", "--arm", "hp500us:--halt-poll-ns 500000",
			       "--epochs", "6", "--warmup", "2", "--epoch-ms", "200", "--seed", "7", "--json",
			       "/tmp/ab.json", "--plot", "/tmp/ab", "--", "-c", "2", "-m", "256M", "-p",
			       "console=ttyS0 panic=-1 quiet vmm.probe=timer:interval_us=2000,count=1500;pingpong:count=600",
			       NULL };
	int e0, e1;
	bool zero0, zero1, pos0, pos1;
	char *j;

	unlink("/tmp/ab.json");
	run_vmm(argv, 800, &self->r);
	printf("%s", self->r.out);
	ASSERT_EQ(0, self->r.status) TH_LOG("%s\n%s", self->r.out, self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "in one VM (the ceiling switched at run time)")) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "== timer (us)"));
	EXPECT_NE(NULL, strstr(self->r.out, "== pingpong (us)")) TH_LOG("%s", self->r.err);
	/* per epoch: an hp0 epoch never polls, hp500us epochs do (the switch took effect) */
	ab_epoch_polls(self->r.out, "hp0", &e0, &zero0, &pos0);
	long long b_ok = ab_epoch_polls(self->r.out, "hp500us", &e1, &zero1, &pos1);

	EXPECT_GE(e0, 3) TH_LOG("too few hp0 epochs: %s", self->r.err);
	EXPECT_GE(e1, 3) TH_LOG("too few hp500us epochs: %s", self->r.err);
	EXPECT_TRUE(zero0) TH_LOG("an hp0 epoch polled");
	EXPECT_TRUE(pos1) TH_LOG("no hp500us epoch tried a poll");
	/* the arms' totals */
	const char *a = strstr(self->r.out, "hp0          host CPU"), *b = strstr(self->r.out, "hp500us      host CPU");
	long long a_ok = -1, b_tot = -1;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	sscanf(strstr(a, "halt polls"), "halt polls %lld", &a_ok);
	sscanf(strstr(b, "halt polls"), "halt polls %lld", &b_tot);
	EXPECT_EQ(0, a_ok);
	EXPECT_EQ(b_ok, b_tot);
	EXPECT_EQ(NULL, strstr(a, "host CPU 0.00 s")) TH_LOG("no vCPU thread CPU time");
	ASSERT_NE(NULL, j = lab_slurp("/tmp/ab.json", NULL));
	EXPECT_NE(NULL, strstr(j, "\"mode\":\"one-vm\""));
	EXPECT_NE(NULL, strstr(j, "\"workload\":\"timer\",\"quantity\":\"p50\""));
	/* the epoch is the unit; every epoch keeps its own samples */
	EXPECT_NE(NULL, strstr(j, "\"unit\":\"epoch\",\"blocks\":"));
	EXPECT_NE(NULL, strstr(j, "\"timer\":{\"unit\":\"us\",\"n\":"));
	EXPECT_NE(NULL, strstr(self->r.out, "verdict timer, hp500us against hp0: ")) TH_LOG("%s", self->r.out);
	EXPECT_EQ(0, access("/tmp/ab-timer.dat", F_OK));
	EXPECT_EQ(0, access("/tmp/ab-pingpong.gp", F_OK));
	EXPECT_NE(NULL, strstr(self->r.err, "epoch 3/12, arm ")) TH_LOG("no progress line: %s", self->r.err);
	/* the saved run, for plots on a machine with gnuplot (vmm ab plot FILE PREFIX) */
	printf("# AB-JSON %s", j);
	free(j);
}

/* vmm ab across boots, for knobs that need one (forced here with the ceiling: a short run). */
TEST_F_TIMEOUT(hp, ab_boots_halt_poll_0_vs_500us, 900)
{
	char *const argv[] = { VMM, "ab", "--mode", "boots", "--arm", "hp0:--halt-poll-ns 0", "--arm",
			       "hp500us:--halt-poll-ns 500000", "--epochs", "1", "--warmup", "0", "--seed", "7",
			       "--json", "/tmp/abb.json", "--", "-c", "2", "-m", "256M", "-p",
			       "console=ttyS0 panic=-1 quiet vmm.probe=timer:interval_us=2000,count=150", NULL };
	long long a_ok = -1, a_tries = -1, b_ok = -1, b_tries = -1;

	run_vmm(argv, 800, &self->r);
	printf("%s", self->r.out);
	ASSERT_EQ(0, self->r.status) TH_LOG("%s\n%s", self->r.out, self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "one boot per epoch"));
	const char *a = strstr(self->r.out, "hp0          host CPU"), *b = strstr(self->r.out, "hp500us      host CPU");

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	sscanf(strstr(a, "halt polls"), "halt polls %lld of %lld", &a_ok, &a_tries);
	sscanf(strstr(b, "halt polls"), "halt polls %lld of %lld", &b_ok, &b_tries);
	EXPECT_EQ(0, a_ok);
	EXPECT_EQ(0, a_tries) TH_LOG("the 0 ceiling polled");
	/* the ceiling decides whether KVM polls at all; whether a poll succeeds is the timing of this
	 * one boot's short halts (CI saw none succeed once), so the boot arm is judged by its tries */
	EXPECT_GT(b_tries, 0) TH_LOG("no poll tried under the 500 us ceiling: %s", b);
	EXPECT_GE(b_tries, b_ok);
	char *j = lab_slurp("/tmp/abb.json", NULL);

	EXPECT_NE(NULL, strstr(j, "\"mode\":\"boots\""));
	free(j);
	EXPECT_NE(NULL, strstr(self->r.err, "epoch 2/2")) TH_LOG("no progress line: %s", self->r.err);
}

TEST_HARNESS_MAIN
