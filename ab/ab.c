// SPDX-License-Identifier: MIT
/*
 * `vmm ab`: A/B tests of vmm run configurations ("arms") on the guest latency probe's workloads.
 * Epochs are interleaved in blocks with the arms in a random order per block (seeded, so a run can
 * be repeated), the first warm-up epochs are discarded, and the analysis (ab_report.c) takes the
 * epoch as its unit: each epoch's own quantiles, compared within blocks by a randomization test
 * that follows the schedule, with verdicts (ab/design.h). Beside latency, the other side of the
 * halt-polling trade: the host CPU time per probe sample, and KVM's halt-polling counters per arm.
 * Two ways to run the epochs:
 *  - one VM, when every arm differs only in knobs that change at run time (the halt-poll ceiling):
 *    ab_one_vm.c;
 *  - one boot per epoch for every other knob (irqchip mode, GICv4, PV features): here.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest/probe_decode.h"
#include "ab/ab.h"
#include "ab/ab_cmd.h"
#include "halt_poll/halt_poll.h"
#include "core/log.h"

const char *const ab_wname[PROBE_W_MAX + 1] = { "", "timer", "pingpong", "udp" };

/* NAME:OPTS, the options split at spaces ("hp0:--halt-poll-ns 0"). */
static int parse_arm(struct ab *ab, char *spec)
{
	char *colon = strchr(spec, ':');

	if (ab->nr_arms == AB_MAX_ARMS || !colon || colon == spec || colon - spec >= 32) {
		pr_err("--arm %s: expected NAME:OPTIONS (at most %d arms, names under 32 characters)", spec,
		       AB_MAX_ARMS);
		return -EINVAL;
	}
	struct ab_arm_cfg *a = &ab->arm[ab->nr_arms++];

	snprintf(a->name, sizeof(a->name), "%.*s", (int)(colon - spec), spec);
	/* names go into JSON, file names and gnuplot scripts unquoted */
	if (strspn(a->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != strlen(a->name)) {
		pr_err("--arm %s: an arm's name takes letters, digits, '_', '.' and '-' only", spec);
		return -EINVAL;
	}
	for (char *save = NULL, *t = strtok_r(colon + 1, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (a->argc == AB_MAX_ARGS - 1)
			return -E2BIG;
		a->argv[a->argc++] = t;
	}
	a->runtime = ab_arm_runtime(a->argv, a->argc, &a->knobs);
	return 0;
}

static void close_pipe(int *p)
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

/* Starts this same binary with argv, its stdout on a pipe and its fd 3 on another (the probe's
 * port, argv's --probe-out AB_PROBE_FD_PATH), and with err_fd its stderr on a third: the stdout
 * read end, or -errno; *pid, *probe_fd (and *err_fd) set. */
int ab_spawn_self(char *const argv[], pid_t *pid, int *probe_fd, int *err_fd)
{
	int p[2] = { -1, -1 }, q[2] = { -1, -1 }, r[2] = { -1, -1 };

	if (pipe2(p, O_CLOEXEC) < 0 || pipe2(q, O_CLOEXEC) < 0 || (err_fd && pipe2(r, O_CLOEXEC) < 0)) {
		int e = errno;

		close_pipe(p);
		close_pipe(q);
		return -e;
	}
	*pid = fork();
	if (*pid == 0) {
		dup2(p[1], 1);
		if (r[1] >= 0)
			dup2(r[1], 2);
		if (q[1] == 3) /* dup2 onto itself keeps O_CLOEXEC */
			fcntl(3, F_SETFD, 0);
		else
			dup2(q[1], 3);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	int e = errno;

	close(p[1]);
	close(q[1]);
	if (r[1] >= 0)
		close(r[1]);
	if (*pid < 0) {
		close(p[0]);
		close(q[0]);
		if (r[0] >= 0)
			close(r[0]);
		return -e;
	}
	*probe_fd = q[0];
	if (err_fd)
		*err_fd = r[0];
	return p[0];
}

/* Reads whichever of the child's console (text), probe port (frames) and stderr (err, when read)
 * has data, into d; returns the one read (or -1 at the end of all); *n the bytes read (0 at one's
 * EOF, which closes it and sets it to -1). timeout_ms as poll's. */
int ab_read_child(int *con, int *port, struct ab_stderr *err, struct probe_decoder *d, char *buf, size_t size,
		  int timeout_ms, ssize_t *n)
{
	int *efd = err ? &err->fd : NULL;
	struct pollfd pf[3] = { { *con, POLLIN, 0 }, { *port, POLLIN, 0 }, { efd ? *efd : -1, POLLIN, 0 } };

	*n = 0;
	if (*con < 0 && *port < 0 && (!efd || *efd < 0))
		return -1;
	int r = poll(pf, 3, timeout_ms);

	if (r <= 0)
		return r < 0 && errno != EINTR ? -1 : -2;
	/* the port first: a clock frame written before the console's text stays ahead of it */
	int i = pf[1].revents ? 1 : pf[0].revents ? 0 : 2, *fd = i == 1 ? port : i == 0 ? con : efd;

	*n = read(*fd, buf, size);
	if (*n <= 0) {
		close(*fd);
		*fd = -1;
		*n = 0;
		if (i == 2)
			ab_stderr_end(err);
		return -2;
	}
	if (i == 1)
		probe_decode_bytes(d, buf, (size_t)*n);
	else if (i == 0)
		probe_decode_text(d, buf, (size_t)*n);
	else
		ab_stderr_feed(err, buf, (size_t)*n);
	return i;
}

/* Runs one epoch: vmm run with the shared and the arm's options, the console decoded. */
static int run_epoch(struct ab *ab, int arm, struct ab_run *out, const char *stats_path)
{
	char *argv[2 * AB_MAX_ARGS + 10], attr[128];
	int argc = 0, p[2];

	argv[argc++] = "vmm";
	argv[argc++] = "run";
	for (int i = 0; i < ab->nr_shared; i++)
		argv[argc++] = ab->shared[i];
	for (int i = 0; i < ab->arm[arm].argc; i++)
		argv[argc++] = ab->arm[arm].argv[i];
	argv[argc++] = "--stats";
	argv[argc++] = (char *)stats_path;
	argv[argc++] = "--probe-out";
	argv[argc++] = AB_PROBE_FD_PATH;
	if (ab->at.on) { /* vmm run --attribute=FILE: FILE in our own directory */
		snprintf(attr, sizeof(attr), "--attribute=");
		ab_attr_path(ab, attr + strlen(attr), sizeof(attr) - strlen(attr));
		argv[argc++] = attr;
	}
	argv[argc] = NULL;
	struct timeval t0, t1;
	struct timespec m0, m1;
	pid_t pid;

	gettimeofday(&t0, NULL);
	clock_gettime(CLOCK_MONOTONIC, &m0);
	p[0] = ab_spawn_self(argv, &pid, &p[1], ab->at.on ? &ab->at.err.fd : NULL);
	if (p[0] < 0)
		return p[0];
	struct probe_decoder d;
	char buf[65536];
	ssize_t n;

	probe_decoder_init(&d);
	while (ab_read_child(&p[0], &p[1], ab->at.on ? &ab->at.err : NULL, &d, buf, sizeof(buf), -1, &n) != -1)
		;
	int st;
	struct rusage ru;

	wait4(pid, &st, 0, &ru);
	gettimeofday(&t1, NULL);
	clock_gettime(CLOCK_MONOTONIC, &m1);
	memset(out, 0, sizeof(*out));
	out->arm = arm;
	out->start_ns = (uint64_t)m0.tv_sec * 1000000000u + m0.tv_nsec;
	out->end_ns = (uint64_t)m1.tv_sec * 1000000000u + m1.tv_nsec;
	out->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	out->wall_s = (t1.tv_sec - t0.tv_sec) + (t1.tv_usec - t0.tv_usec) / 1e6;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		pr_err("vmm ab: arm %s: vmm run exited with status %d (its messages are above)",
		       ab->arm[arm].name, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		probe_decoder_free(&d);
		return -EIO;
	}
	for (size_t s = 0; s < d.nseries; s++) {
		const struct probe_series *se = &d.series[s];
		unsigned w = se->workload;

		if (w > PROBE_W_MAX || !se->n)
			continue;
		double *x = realloc(out->x[w], (out->n[w] + se->n) * sizeof(double));

		if (!x)
			break;
		for (uint32_t i = 0; i < se->n; i++)
			x[out->n[w] + i] = se->v_ns[i] / 1e3;
		out->x[w] = x;
		out->n[w] += se->n;
	}
	if (probe_decode_errors(&d))
		pr_warn("vmm ab: arm %s: %llu probe frames or records were bad or lost", ab->arm[arm].name,
			(unsigned long long)probe_decode_errors(&d));
	probe_decoder_free(&d);
	/* KVM's halt-polling counters of the run (--stats), summed over the vCPUs */
	FILE *f = fopen(stats_path, "r");

	if (f) {
		char *j = malloc(AB_OUT_MAX);
		size_t len = j ? fread(j, 1, AB_OUT_MAX - 1, f) : 0;

		fclose(f);
		if (j) {
			j[len] = 0;
			out->polls_ok = ab_json_sum_stat(j, "halt_successful_poll");
			out->polls_tried = ab_json_sum_stat(j, "halt_attempted_poll");
			free(j);
		}
	}
	out->complete = true;
	return 0;
}

/* The epochs' order, a block at a time: every arm once, shuffled per block (Fisher-Yates). */
void ab_schedule_block(const struct ab *ab, struct ab_rng *rng, int *o)
{
	for (int a = 0; a < ab->nr_arms; a++)
		o[a] = a;
	for (int a = ab->nr_arms - 1; a > 0; a--) {
		int k = ab_rng_below(rng, a + 1), tmp = o[a];

		o[a] = o[k];
		o[k] = tmp;
	}
}

static void schedule(const struct ab *ab, struct ab_rng *rng, int *order)
{
	for (unsigned int blk = 0; blk < ab->epochs; blk++)
		ab_schedule_block(ab, rng, order + blk * ab->nr_arms);
}

void ab_progress(const struct ab *ab, int done, int total, int arm, double left_s)
{
	fprintf(stderr, "vmm ab: epoch %d/%d, arm %s%s, about %.0f s left\n", done + 1, total, ab->arm[arm].name,
		done < (int)ab->warmup ? " (warm-up)" : "", left_s);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmm ab --arm NAME:OPTIONS --arm NAME:OPTIONS [...] [--epochs N] [--warmup K]\n"
		"              [--mode auto|one-vm|boots] [--epoch-ms MS] [--seed S] [--json FILE]\n"
		"              [--alpha P] [--min-effect F] [--fail-on-regression] [--probe-timeout S]\n"
		"              [--plot PREFIX] [--attribute] -- VMM_RUN_OPTIONS\n"
		"       vmm ab compare A1.json [A2.json ...] -- B1.json [B2.json ...] [--arm NAME] [--seed S]\n"
		"                      [--json FILE]\n"
		"       vmm ab judge RUN.json [--alpha P] [--min-effect F] [--warmup K] [--json FILE] [--plot PREFIX]\n"
		"       vmm ab plot FILE.json PREFIX\n"
		"  Runs the arms' `vmm run VMM_RUN_OPTIONS ARM_OPTIONS` in N blocks (default %d) of one epoch\n"
		"  per arm, in a random order per block, drops the first K epochs (default 1), and compares\n"
		"  the guest latency probe's workloads (the guest command line must ask for them:\n"
		"  -p \"... vmm.probe=timer:count=2000;pingpong:count=2000\") with the epoch as the unit:\n"
		"  per block both epochs' p50/p90/p99 at the smaller one's sample count, a randomization test\n"
		"  within blocks (k blocks: p >= 2/2^k), Holm's\n"
		"  correction, and a verdict per workload and arm: B faster / B slower (p < --alpha, default\n"
		"  0.01, and a shift of at least --min-effect, default 5%%), equivalent (the interval within\n"
		"  +-the minimum effect), not shown (with the interval and the shifts this run would find with\n"
		"  80%% power) or inconclusive (too few blocks for the level).\n"
		"  --fail-on-regression: exit status 1 when B is slower. --probe-timeout: one VM, how long\n"
		"  the guest may send nothing once the epochs are done (default 60 s) before the VM is stopped.\n"
		"  one-vm (auto's choice when every arm is only run-time knobs: --halt-poll-ns N, and on x86\n"
		"  --poll-control 0|1, every vCPU's MSR_KVM_POLL_CONTROL): one boot, the knobs switched every\n"
		"  --epoch-ms (default 1000) through the control socket, N blocks and more while the guest's\n"
		"  probe still runs; boots: one boot per epoch, for any option but --poll-control.\n"
		"  --attribute: each vmm run splits the timer's samples into host stages (vmm run\n"
		"  --attribute; root or CAP_PERFMON); per class (poll hit, blocked, no wait, running) each\n"
		"  epoch's stage medians and the class's share are judged per arm like p50 (\"where the\n"
		"  difference is\"), in --json, and with --plot as stacked bars (PREFIX-stages-CLASS).\n"
		"  compare: saved runs (--json) of two host kernels, say, each run one unit (alternate the\n"
		"  kernels over several boots; one run a side cannot be judged; --json FILE: the same as JSON,\n"
		"  its comparisons as vmm ab's --json has them); judge: a saved run judged again without the\n"
		"  guest (new --alpha, --min-effect, --warmup); plot: the CDF plots\n"
		"  (PREFIX-WORKLOAD.svg/.png through gnuplot) of a saved run.\n"
		"  e.g. vmm ab --arm hp0:'--halt-poll-ns 0' --arm hp500us:'--halt-poll-ns 500000' -- -c 2 \\\n"
		"       -p 'console=ttyS0 quiet vmm.probe=timer:interval_us=1000,count=20000'\n",
		AB_DEFAULT_BLOCKS);
}

/* A fraction in (0, 1), or a percentage for --min-effect ("5%"). */
int ab_parse_level(const char *opt, const char *arg, bool pct_ok, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (pct_ok && *end == '%' && end != arg) {
		v /= 100;
		end++;
	}
	if (*end || end == arg || !(v > 0 && v < 1)) {
		pr_err("vmm ab %s %s: expected a number between 0 and 1%s", opt, arg, pct_ok ? " (or a percentage: 5%)" : "");
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* vmm ab compare A1.json [A2.json ...] -- B1.json [...]: each saved run one unit. Two files and no
 * "--" are one run a side (shown, not judged). */
static int compare_cmd(int argc, char **argv)
{
	enum { MAX_RUNS = 64 };
	const char *arm = NULL, *json_path = NULL;
	uint64_t seed = 1;
	double alpha = 0.01, min_effect = 0.05;
	bool fail = false, sep = false, bad = false;
	char *fa[MAX_RUNS], *fb[MAX_RUNS];
	int na = 0, nb = 0;

	for (int i = 1; i < argc && !bad; i++) {
		if (!strcmp(argv[i], "--arm") && i + 1 < argc)
			arm = argv[++i];
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json_path = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--alpha") && i + 1 < argc)
			bad = ab_parse_level("--alpha", argv[++i], false, &alpha) < 0;
		else if (!strcmp(argv[i], "--min-effect") && i + 1 < argc)
			bad = ab_parse_level("--min-effect", argv[++i], true, &min_effect) < 0;
		else if (!strcmp(argv[i], "--fail-on-regression"))
			fail = true;
		else if (!strcmp(argv[i], "--") && !sep)
			sep = true;
		else if (argv[i][0] != '-' && (sep ? nb : na) < MAX_RUNS)
			(sep ? fb : fa)[sep ? nb++ : na++] = argv[i];
		else
			bad = true;
	}
	if (!sep && na == 2 && !bad) { /* the old form: A.json B.json */
		fb[nb++] = fa[--na];
	}
	if (bad || !na || !nb) {
		pr_err("vmm ab compare takes saved runs (vmm ab --json FILE) of two sides: vmm ab compare A1.json "
		       "[A2.json ...] -- B1.json [B2.json ...] [--arm NAME] [--seed S] [--alpha P] [--min-effect F] "
		       "[--fail-on-regression] [--json FILE] (at most %d a side)", MAX_RUNS);
		return 1;
	}
	static struct ab_saved a[MAX_RUNS], b[MAX_RUNS];
	int r = 0, ra = 0, rb = 0;
	FILE *json = NULL;

	if (json_path && !(json = fopen(json_path, "w"))) {
		pr_err("vmm ab compare --json %s: cannot write it: %s", json_path, strerror(errno));
		return 1;
	}

	for (; ra < na && r == 0; ra++)
		r = ab_saved_read(fa[ra], &a[ra]);
	for (; rb < nb && r == 0; rb++)
		r = ab_saved_read(fb[rb], &b[rb]);
	if (r == 0)
		r = ab_saved_compare(stdout, json, fa, a, na, fb, b, nb, arm, seed, alpha, min_effect, fail);
	if (json && fclose(json) != 0 && r >= 0) {
		pr_err("vmm ab compare --json %s: cannot write it: %s", json_path, strerror(errno));
		r = -EIO;
	}
	if (json && r < 0)
		unlink(json_path); /* no half a comparison */
	for (int i = 0; i < ra; i++)
		ab_saved_free(&a[i]);
	for (int i = 0; i < rb; i++)
		ab_saved_free(&b[i]);
	return r < 0 ? 1 : r;
}

static int plot_cmd(int argc, char **argv)
{
	struct ab_saved s;
	int r = 0;

	if (argc != 3 || strchr(argv[2], '\'')) {
		pr_err("vmm ab plot takes a saved run and a prefix without quotes: vmm ab plot FILE.json PREFIX");
		return 1;
	}
	if (ab_saved_read(argv[1], &s) < 0)
		return 1;
	for (int i = 0; i < s.nr && r >= 0; i++) {
		const char *names[AB_MAX_ARMS];
		double *x[AB_MAX_ARMS];
		size_t n[AB_MAX_ARMS];
		int k = 0;
		bool seen = false;

		for (int j = 0; j < i; j++) /* a workload once, with all its arms */
			seen |= !strcmp(s.r[j].workload, s.r[i].workload);
		for (int j = i; !seen && j < s.nr && k < AB_MAX_ARMS; j++)
			if (!strcmp(s.r[j].workload, s.r[i].workload)) {
				ab_sort(s.r[j].x, s.r[j].n);
				names[k] = s.r[j].arm;
				x[k] = s.r[j].x;
				n[k++] = s.r[j].n;
			}
		if (k)
			r = ab_write_plot(argv[2], s.r[i].workload, names, x, n, k);
	}
	ab_saved_free(&s);
	return r < 0 ? 1 : 0;
}

/* vmm ab's defaults before its options. */
static void set_defaults(struct ab *ab)
{
	memset(ab, 0, sizeof(*ab));
	ab->at.err.fd = -1;
	/* 13 blocks after the warm-up epoch: p can reach 2/2^13 = 0.00024, below 0.01 after Holm's
	 * correction over up to 40 judgements (4 blocks never go below 0.125) */
	ab->epochs = AB_DEFAULT_BLOCKS;
	ab->warmup = 1;
	ab->epoch_ms = 1000;
	ab->alpha = 0.01;
	ab->min_effect = 0.05;
	ab->seed = (uint64_t)time(NULL);
}

static int parse_mode(struct ab *ab, const char *arg)
{
	if (!strcmp(arg, "auto"))
		ab->mode = AB_AUTO;
	else if (!strcmp(arg, "one-vm"))
		ab->mode = AB_ONE_VM;
	else if (!strcmp(arg, "boots"))
		ab->mode = AB_BOOTS;
	else {
		pr_err("vmm ab --mode %s: expected auto, one-vm or boots", arg);
		return -EINVAL;
	}
	return 0;
}

/* vmm ab's options into ab, up to the shared ones (optind): 0, 1 when --help was answered, or
 * -EINVAL after saying what is wrong. */
static int parse_options(struct ab *ab, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "arm", required_argument, NULL, 'a' }, { "epochs", required_argument, NULL, 'e' },
		{ "warmup", required_argument, NULL, 'w' }, { "seed", required_argument, NULL, 's' },
		{ "json", required_argument, NULL, 'j' }, { "plot", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' }, { "epoch-ms", required_argument, NULL, 'E' },
		{ "alpha", required_argument, NULL, 'A' }, { "min-effect", required_argument, NULL, 'M' },
		{ "fail-on-regression", no_argument, NULL, 'F' }, { "probe-timeout", required_argument, NULL, 'T' },
		{ "attribute", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	int o, r = 0;

	optind = 0;
	opterr = 0;
	while (!r && (o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (o) {
		case 'a': r = parse_arm(ab, optarg); break;
		case 'e': ab->epochs = strtoul(optarg, NULL, 10); break;
		case 'w': ab->warmup = strtoul(optarg, NULL, 10); break;
		case 's': ab->seed = strtoull(optarg, NULL, 10); break;
		case 'j': ab->json = optarg; break;
		case 'p': ab->plot = optarg; break;
		case 'E': ab->epoch_ms = strtoul(optarg, NULL, 10); break;
		case 'F': ab->fail_on_regression = true; break;
		case 'S': ab->at.on = true; break;
		case 'T': ab->probe_timeout_s = strtoul(optarg, NULL, 10); break;
		case 'A': r = ab_parse_level("--alpha", optarg, false, &ab->alpha); break;
		case 'M': r = ab_parse_level("--min-effect", optarg, true, &ab->min_effect); break;
		case 'm': r = parse_mode(ab, optarg); break;
		case 'h': usage(stdout); return 1;
		default:
			pr_err("vmm ab: unknown option or missing value '%s' (vmm ab --help)", argv[optind - 1]);
			return -EINVAL;
		}
	}
	return r < 0 ? -EINVAL : 0;
}

/* The arms and counts make an experiment, in a mode that can run them (--mode auto: one VM when
 * every arm is only run-time knobs). 0, or -EINVAL after saying what is wrong. */
static int check_design(struct ab *ab)
{
	bool all_runtime = true, any_pc = false;

	if (ab->nr_arms < 2 || ab->epochs < 1 || ab->epochs * ab->nr_arms > AB_MAX_EPOCHS ||
	    ab->warmup >= ab->epochs * ab->nr_arms || ab->epoch_ms < 10 || ab->epoch_ms > 3600000) {
		pr_err("vmm ab: needs at least two --arm, 1 to %d epochs in all, fewer warm-up epochs than "
		       "epochs, and --epoch-ms from 10 to 3600000 (vmm ab --help)", AB_MAX_EPOCHS);
		return -EINVAL;
	}
	if (ab->plot && strchr(ab->plot, '\'')) {
		pr_err("vmm ab --plot %s: the prefix goes into a gnuplot script: no quotes in it", ab->plot);
		return -EINVAL;
	}
	for (int a = 0; a < ab->nr_arms; a++) {
		all_runtime &= ab->arm[a].runtime;
		for (int i = 0; i < ab->arm[a].argc; i++)
			any_pc |= !strcmp(ab->arm[a].argv[i], "--poll-control");
	}
	if (ab->mode == AB_ONE_VM && !all_runtime) {
		pr_err("vmm ab --mode one-vm: every arm must be only run-time knobs (--halt-poll-ns N, "
		       "--poll-control 0|1); the others need a boot per epoch (--mode boots)");
		return -EINVAL;
	}
	if (any_pc && (!all_runtime || ab->mode == AB_BOOTS)) {
		pr_err("vmm ab: --poll-control is switched in a running VM only (the guest writes the MSR "
		       "itself at boot): give it, with --halt-poll-ns N at most, in every arm, in one VM");
		return -EINVAL;
	}
	/* in one VM a knob one arm sets and another does not would keep the last arm's value */
	for (int a = 1; all_runtime && a < ab->nr_arms; a++) {
		const struct ab_knobs *k0 = &ab->arm[0].knobs, *k = &ab->arm[a].knobs;

		if (k->has_halt_poll_ns != k0->has_halt_poll_ns || (k->poll_control < 0) != (k0->poll_control < 0)) {
			pr_err("vmm ab: arms %s and %s set different knobs: in one VM every arm sets the same "
			       "ones (--halt-poll-ns, --poll-control), or a knob keeps the previous arm's value",
			       ab->arm[0].name, ab->arm[a].name);
			return -EINVAL;
		}
	}
	if (ab->mode == AB_AUTO)
		ab->mode = all_runtime ? AB_ONE_VM : AB_BOOTS;
	return 0;
}

/* A boot per epoch, in order: 0, or -errno when one failed (said). */
static int run_boots(struct ab *ab, const int *order, int total)
{
	char stats[96], attr[96];
	struct timespec t0, t;

	snprintf(stats, sizeof(stats), "%s/stats.json", ab->tmpdir);
	ab_attr_path(ab, attr, sizeof(attr));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int e = 0; e < total; e++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		double el = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
		int r;

		ab_progress(ab, e, total, order[e], e ? el / e * (total - e) : 0.0);
		if ((r = run_epoch(ab, order[e], &ab->run[ab->nr_runs], stats)) < 0)
			return r;
		ab->run[ab->nr_runs].block = e / ab->nr_arms;
		ab->nr_runs++;
		if (ab->at.on) /* a boot is one epoch: all its rows are that epoch's */
			ab_attr_load(ab, attr, &(struct ab_tagger){ .fixed = ab->nr_runs - 1 });
	}
	return 0;
}

/* Runs the scheduled epochs and reports them: vmm ab's exit status. */
static int run_experiment(struct ab *ab)
{
	struct ab_rng rng;
	int total = ab->epochs * ab->nr_arms, order[AB_MAX_EPOCHS], e;

	ab_rng_seed(&rng, ab->seed);
	schedule(ab, &rng, order);
	fprintf(stderr, "vmm ab: %d arms x %u epochs, %s, seed %llu, the first %u epochs are warm-up\n", ab->nr_arms,
		ab->epochs, ab->mode != AB_ONE_VM ? "one boot per epoch"
		: ab->arm[0].knobs.poll_control < 0 ? "in one VM (the ceiling switched at run time)"
		: "in one VM (poll control switched at run time)",
		(unsigned long long)ab->seed, ab->warmup);
	/* the control socket and the stats file in a directory of our own (0700, an unpredictable
	 * name): nobody else can plant a symlink or read the socket */
	if (ab_tmpdir_make(ab->tmpdir, sizeof(ab->tmpdir)) < 0)
		return 1;
	e = ab->mode == AB_ONE_VM ? ab_run_one_vm(ab, order, total, &rng) : run_boots(ab, order, total);
	ab_tmpdir_remove(ab->tmpdir);
	if (e == -ETIMEDOUT && ab->mode == AB_ONE_VM) { /* what it collected is shown; the run still failed */
		if (ab->nr_runs)
			ab_report(ab);
		return 1;
	}
	if (e < 0)
		return 1;
	e = ab_report(ab);
	return e < 0 ? 1 : e;
}

int ab_cmd(int argc, char **argv)
{
	struct ab *ab;
	int r;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	if (argc > 1 && !strcmp(argv[1], "compare"))
		return compare_cmd(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "plot"))
		return plot_cmd(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "judge"))
		return ab_judge_cmd(argc - 1, argv + 1);
	if (!(ab = malloc(sizeof(*ab)))) { /* its runs are too many for the stack */
		pr_err("vmm ab: out of memory");
		return 1;
	}
	set_defaults(ab);
	r = parse_options(ab, argc, argv);
	if (!r)
		r = check_design(ab);
	if (!r) {
		for (; optind < argc && ab->nr_shared < AB_MAX_ARGS - 1; optind++)
			ab->shared[ab->nr_shared++] = argv[optind];
		r = run_experiment(ab);
	} else {
		r = r > 0 ? 0 : 1;
	}
	for (int i = 0; i < ab->nr_runs; i++)
		for (int w = 0; w <= PROBE_W_MAX; w++)
			free(ab->run[i].x[w]);
	free(ab);
	return r;
}
