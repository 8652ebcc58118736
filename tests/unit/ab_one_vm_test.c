// SPDX-License-Identifier: MIT
/*
 * vmm ab's one-VM runner against a fake `vmm run`: this test binary is its own child (vmm ab starts
 * /proc/self/exe run ...), and as the child it serves the control socket (stats, get, set) and
 * says on its console what a guest would, then goes silent without ever exiting, as the stuck run
 * of issue 20 did. The runner must end within its --probe-timeout with a clear error, what it
 * collected, and the child stopped.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ab/ab.h"
#include "kselftest_harness.h"

static uint64_t mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + t.tv_nsec;
}

static volatile sig_atomic_t fake_stop;

static void fake_term(int sig)
{
	(void)sig;
	fake_stop = 1;
}

/* The fake's exit on SIGTERM with --attribute=FILE, as vmm run's: FAKE_ATTR=none says why it has
 * none on stderr; else FILE gets a blocked timer sample every ms of its life (the guest's clock is
 * the host's here), with "counts". */
static int fake_attribute(const char *path, uint64_t t0)
{
	fprintf(stderr, "vmm: fake run ending\n");
	if (getenv("FAKE_ATTR") && !strcmp(getenv("FAKE_ATTR"), "none")) {
		fprintf(stderr, "vmm: attribution: none: fake: no tracepoints here\n");
		return 0;
	}
	FILE *f = fopen(path, "w");
	uint64_t n = (mono() - t0) / 1000000;

	if (!f)
		return 4;
	fprintf(f, "{\"clock\":{},\"trace\":{\"events\":1,\"lost\":0,\"dropped\":0,\"bad\":0},\"counts\":"
		   "{\"joined\":%llu,\"outside\":0},\"report\":{},\"samples\":[", (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++)
		fprintf(f, "%s[1,0,%llu,1,2000,1000,4000,500,3000,0,-1]", i ? "," : "",
			(unsigned long long)(t0 + i * 1000000));
	fputs("]}\n", f);
	return fclose(f) ? 5 : 0;
}

/* The fake vmm run: FAKE_CLOCK=0 in the environment keeps the guest's clock line back (a probe
 * that never starts), FAKE_DONE=1 says the probe is done at once. Replies as vmm's control socket
 * does until SIGTERM. */
static int fake_vmm(int argc, char **argv)
{
	const char *ctl = NULL, *attr = NULL;
	uint64_t t0 = mono();
	struct sigaction sa = { .sa_handler = fake_term }; /* no SA_RESTART: accept returns */

	sigaction(SIGTERM, &sa, NULL);
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--attribute=", 12))
			attr = argv[i] + 12;
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--ctl"))
			ctl = argv[i + 1];
	if (!ctl)
		return 2;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", ctl);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 4) < 0)
		return 3;
	if (!getenv("FAKE_CLOCK") || strcmp(getenv("FAKE_CLOCK"), "0")) {
		printf("vmm-probe: clock %llu\n", (unsigned long long)mono());
		if (getenv("FAKE_DONE"))
			printf("vmm-probe: done\n");
		fflush(stdout);
	}
	for (long long polls = 0;; polls++) {
		char req[256], reply[512];
		int c = accept(s, NULL, NULL);
		size_t n = 0;
		ssize_t k;

		if (c < 0 && fake_stop)
			return attr ? fake_attribute(attr, t0) : 0;
		if (c < 0)
			continue;
		/* the request line in full, as vmm's control socket reads it */
		while (n < sizeof(req) - 1 && (k = read(c, req + n, sizeof(req) - 1 - n)) > 0 && !memchr(req + n, '\n', k))
			n += k;
		if (k > 0)
			n += k;
		req[n] = 0;
		if (strstr(req, "\"stats\""))
			snprintf(reply, sizeof(reply), "{\"sources\":[{\"name\":\"vcpu0\",\"stats\":[{\"name\":"
				 "\"halt_successful_poll\",\"value\":%lld},{\"name\":\"halt_attempted_poll\",\"value\":%lld}]}]}\n",
				 polls, 2 * polls);
		else if (strstr(req, "\"get\""))
			snprintf(reply, sizeof(reply), "{\"ok\":true,\"vcpu_cpu_ns\":[%lld]}\n", 1000 * polls);
		else
			snprintf(reply, sizeof(reply), "{\"ok\":true}\n");
		if (write(c, reply, strlen(reply)) < 0)
			polls--;
		close(c);
	}
}

/* Whether /proc/self/exe starts this binary again: not under qemu-user, which runs it as itself. */
static bool self_exec_works(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execl("/proc/self/exe", "vmm", "self-check", (char *)NULL);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 42;
}

static void free_runs(struct ab *ab)
{
	for (int e = 0; e < ab->nr_runs; e++)
		for (int w = 0; w <= PROBE_W_MAX; w++)
			free(ab->run[e].x[w]);
}

/*
 * Two runtime arms, 20 ms epochs, a --probe-timeout of 1 s, against the fake vmm. Times are
 * asserted from below (a loaded machine only lengthens them) and from the runner's own epoch
 * records; the only bound from above is "ends at all" (SETTLE_S past what the runner waits for,
 * and the harness's timeout): the old runner waited for ever.
 */
#define QUIET_S 1
#define SETTLE_S 60
FIXTURE(one_vm)
{
	struct ab *ab;
	struct ab_rng rng;
	int order[AB_MAX_EPOCHS];
	double secs; /* how long ab_run_one_vm took */
	uint64_t end_ns;  /* when it returned */
};

FIXTURE_SETUP(one_vm)
{
	static struct ab ab;

	if (!self_exec_works())
		SKIP(return, "/proc/self/exe does not start this binary (qemu-user): the runner's child cannot be faked");
	memset(&ab, 0, sizeof(ab));
	ab.nr_arms = 2;
	for (int a = 0; a < 2; a++) {
		snprintf(ab.arm[a].name, sizeof(ab.arm[a].name), "hp%d", a);
		ab.arm[a].runtime = true;
		ab.arm[a].knobs = (struct ab_knobs){ .has_halt_poll_ns = true, .halt_poll_ns = a * 1000, .poll_control = -1 };
	}
	ab.epochs = 2;
	ab.epoch_ms = 20;
	ab.probe_timeout_s = QUIET_S;
	ab.mode = AB_ONE_VM;
	self->ab = &ab;
	ASSERT_EQ(0, ab_tmpdir_make(ab.tmpdir, sizeof(ab.tmpdir)));
	ab_rng_seed(&self->rng, 1);
}

FIXTURE_TEARDOWN(one_vm)
{
	if (!self->ab)
		return;
	ab_tmpdir_remove(self->ab->tmpdir);
	free_runs(self->ab);
}

/* blocks scheduled, then the runner against a fake whose guest sends its clock or not */
static int run_blocks(struct _test_data_one_vm *self, int blocks, bool clock)
{
	for (int b = 0; b < blocks; b++)
		ab_schedule_block(self->ab, &self->rng, self->order + 2 * b);
	setenv("FAKE_CLOCK", clock ? "1" : "0", 1);
	uint64_t t0 = mono();
	int r = ab_run_one_vm(self->ab, self->order, 2 * blocks, &self->rng);

	self->end_ns = mono();
	self->secs = (self->end_ns - t0) / 1e9;
	return r;
}

/* The guest sends its clock, the epochs run, then nothing more comes and the VM never ends: the
 * old runner added blocks up to 1024 epochs and then waited in poll(-1) for ever. */
TEST_F_TIMEOUT(one_vm, silent_after_the_epochs_ends_with_the_vm_stopped, 2 * SETTLE_S)
{
	const struct ab *ab = self->ab;
	const uint64_t extend_ns = 10ull * QUIET_S * 1000000000u; /* ten times the silence allowed */

	EXPECT_EQ(-ETIMEDOUT, run_blocks(self, 2, true));
	/* what it collected: the scheduled epochs and the extra blocks, not up to the table's end */
	ASSERT_GE(ab->nr_runs, 6);
	EXPECT_LT(ab->nr_runs, AB_MAX_EPOCHS);
	EXPECT_TRUE(ab->run[0].complete);
	EXPECT_GT(ab->run[1].polls_tried, 0);
	/* blocks were added for ten times the allowed silence of the runner's own clock, and no block
	 * after that: the epoch that asked for the last one ended inside the window, the last one
	 * outside it (however fast or slow the machine ran the epochs) */
	uint64_t first = ab->run[0].start_ns, last = ab->run[ab->nr_runs - 1].end_ns;

	EXPECT_GE(last - first, extend_ns) TH_LOG("%d epochs over %.2f s", ab->nr_runs, (last - first) / 1e9);
	EXPECT_LT(ab->run[ab->nr_runs - 3].end_ns - first, extend_ns);
	/* then its silence, and it ends */
	EXPECT_GE(self->end_ns - last, QUIET_S * 1000000000ull);
	EXPECT_LT(self->secs, 10 * QUIET_S + QUIET_S + SETTLE_S) TH_LOG("took %.1f s", self->secs);
	/* and the child is gone: no process of ours is left */
	EXPECT_EQ(-1, waitpid(-1, NULL, WNOHANG));
	EXPECT_EQ(ECHILD, errno);
}

/* The probe never starts (no clock): the boot allowance, five times the timeout, then stopped. */
TEST_F_TIMEOUT(one_vm, no_clock_ends_with_the_vm_stopped, 2 * SETTLE_S)
{
	EXPECT_EQ(-ETIMEDOUT, run_blocks(self, 1, false));
	EXPECT_GE(self->secs, 5 * QUIET_S + QUIET_S);
	EXPECT_LT(self->secs, 5 * QUIET_S + QUIET_S + SETTLE_S) TH_LOG("took %.1f s", self->secs);
	EXPECT_EQ(0, self->ab->nr_runs);
	EXPECT_EQ(-1, waitpid(-1, NULL, WNOHANG));
}

/* --attribute in one VM: the run gets --attribute=FILE, FILE's rows go into the epochs by the
 * probe's own clock placement, and the child's other stderr lines are passed on. */
TEST_F_TIMEOUT(one_vm, attribute_rows_into_the_epochs, 2 * SETTLE_S)
{
	struct ab *ab = self->ab;
	int with_rows = 0;

	ab->at = (struct ab_attr){ .on = true, .err.fd = -1 };
	setenv("FAKE_DONE", "1", 1);
	unsetenv("FAKE_ATTR");
	EXPECT_EQ(-ETIMEDOUT, run_blocks(self, 2, true));
	ASSERT_EQ(4, ab->nr_runs);
	EXPECT_TRUE(ab->at.any);
	EXPECT_FALSE(ab->at.off);
	EXPECT_GT(ab->at.rows, 0);
	EXPECT_GT(ab->at.outside, 0) TH_LOG("before the first epoch, near switches, after the last");
	for (int e = 0; e < 4; e++) {
		const struct ab_stage_epoch *st = &ab->run[e].st;

		/* a row every ms of a 20 ms epoch (as long as this machine made it), 2 ms kept from
		 * each switch */
		uint64_t ms = (ab->run[e].end_ns - ab->run[e].start_ns) / 1000000u;

		with_rows += st->n > 0;
		EXPECT_LE(st->n, ms > 4 ? ms - 4 + 1 : 1) TH_LOG("epoch %d: %llu ms", e, (unsigned long long)ms);
		EXPECT_EQ(st->n, st->nc[AC_BLOCKED]);
	}
	EXPECT_EQ(4, with_rows);
	unsetenv("FAKE_DONE");
}

/* The same with vmm run saying it has no attribution: the reason kept (not passed on), said once,
 * no stages. */
TEST_F_TIMEOUT(one_vm, attribute_none_said, 2 * SETTLE_S)
{
	struct ab *ab = self->ab;

	ab->at = (struct ab_attr){ .on = true, .err.fd = -1 };
	setenv("FAKE_DONE", "1", 1);
	setenv("FAKE_ATTR", "none", 1);
	EXPECT_EQ(-ETIMEDOUT, run_blocks(self, 2, true));
	EXPECT_FALSE(ab->at.any);
	EXPECT_TRUE(ab->at.said);
	EXPECT_STREQ("fake: no tracepoints here", ab->at.err.none);
	unsetenv("FAKE_DONE");
	unsetenv("FAKE_ATTR");
}

int main(int argc, char **argv)
{
	/* as vmm's main: a peer that went away is an error return, not a signal */
	signal(SIGPIPE, SIG_IGN);
	/* vmm ab starts "/proc/self/exe run ...": here that is this binary, as the fake vmm */
	if (argc > 1 && !strcmp(argv[1], "run"))
		return fake_vmm(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "self-check"))
		return 42;
	return test_harness_run(argc, argv);
}
