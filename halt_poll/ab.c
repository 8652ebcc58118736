// SPDX-License-Identifier: MIT
/*
 * `vmm ab`: A/B tests of vmm run configurations ("arms") on the guest latency probe's workloads.
 * Epochs are interleaved in blocks with the arms in a random order per block (seeded, so a run can
 * be repeated), the first warm-up epochs are discarded, and per workload each arm gets
 * p50/p90/p99/p99.9/max with bootstrap confidence intervals; each arm after the first is compared
 * with it (Mann-Whitney U, Cliff's delta, the quantiles' differences with intervals). Beside
 * latency, the other side of the halt-polling trade: the host CPU time per probe sample, and KVM's
 * halt-polling counters per arm.
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
#include "halt_poll/ab.h"
#include "halt_poll/halt_poll.h"
#include "vmm/log.h"

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

/* Starts this same binary with argv, its stdout on a pipe and its fd 3 on another (the probe's
 * port, argv's --probe-out AB_PROBE_FD_PATH): the stdout read end, or -errno; *pid and *probe_fd set. */
int ab_spawn_self(char *const argv[], pid_t *pid, int *probe_fd)
{
	int p[2], q[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(q, O_CLOEXEC) < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	*pid = fork();
	if (*pid == 0) {
		dup2(p[1], 1);
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
	if (*pid < 0) {
		close(p[0]);
		close(q[0]);
		return -e;
	}
	*probe_fd = q[0];
	return p[0];
}

/* Reads whichever of the child's console (text) and probe port (frames) has data, into d;
 * returns the fd read (or -1 at the end of both); *n the bytes read (0 at one's EOF, which closes
 * it and sets it to -1). timeout_ms as poll's. */
int ab_read_child(int *con, int *port, struct probe_decoder *d, char *buf, size_t size, int timeout_ms, ssize_t *n)
{
	struct pollfd pf[2] = { { *con, POLLIN, 0 }, { *port, POLLIN, 0 } };

	*n = 0;
	if (*con < 0 && *port < 0)
		return -1;
	int r = poll(pf, 2, timeout_ms);

	if (r <= 0)
		return r < 0 && errno != EINTR ? -1 : -2;
	/* the port first: a clock frame written before the console's text stays ahead of it */
	int i = pf[1].revents ? 1 : 0, *fd = i ? port : con;

	*n = read(*fd, buf, size);
	if (*n <= 0) {
		close(*fd);
		*fd = -1;
		*n = 0;
		return -2;
	}
	if (i)
		probe_decode_bytes(d, buf, (size_t)*n);
	else
		probe_decode_text(d, buf, (size_t)*n);
	return i;
}

/* Runs one epoch: vmm run with the shared and the arm's options, the console decoded. */
static int run_epoch(struct ab *ab, int arm, struct ab_run *out, const char *stats_path)
{
	char *argv[2 * AB_MAX_ARGS + 8];
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
	argv[argc] = NULL;
	struct timeval t0, t1;
	pid_t pid;

	gettimeofday(&t0, NULL);
	p[0] = ab_spawn_self(argv, &pid, &p[1]);
	if (p[0] < 0)
		return p[0];
	struct probe_decoder d;
	char buf[65536];
	ssize_t n;

	probe_decoder_init(&d);
	while (ab_read_child(&p[0], &p[1], &d, buf, sizeof(buf), -1, &n) != -1)
		;
	int st;
	struct rusage ru;

	wait4(pid, &st, 0, &ru);
	gettimeofday(&t1, NULL);
	memset(out, 0, sizeof(*out));
	out->arm = arm;
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

static void write_json(struct ab *ab, FILE *f, struct ab_cmp cmp[PROBE_W_MAX + 1][AB_MAX_ARMS],
		       bool have[PROBE_W_MAX + 1][AB_MAX_ARMS], const double cpu_per[AB_MAX_ARMS],
		       const long long ok[AB_MAX_ARMS], const long long tried[AB_MAX_ARMS], const struct ab_raw *raw,
		       int nraw)
{
	fprintf(f, "{\"seed\":%llu,\"mode\":\"%s\",\"epochs_per_arm\":%u,\"warmup\":%u,\"arms\":[",
		(unsigned long long)ab->seed, ab->mode == AB_ONE_VM ? "one-vm" : "boots", ab->epochs, ab->warmup);
	for (int a = 0; a < ab->nr_arms; a++) {
		fprintf(f, "%s{\"name\":\"%s\",\"cpu_s_per_sample\":%.9f,\"halt_successful_poll\":%lld,"
			   "\"halt_attempted_poll\":%lld}", a ? "," : "", ab->arm[a].name, cpu_per[a], ok[a], tried[a]);
	}
	fputs("],\"epochs\":[", f);
	for (int e = 0; e < ab->nr_runs; e++) {
		const struct ab_run *r = &ab->run[e];

		fprintf(f, "%s{\"arm\":\"%s\",\"warmup\":%s,\"complete\":%s,\"wall_s\":%.6f,\"cpu_s\":%.6f,"
			   "\"halt_successful_poll\":%lld,\"halt_attempted_poll\":%lld,\"samples\":{", e ? "," : "",
			ab->arm[r->arm].name, e < (int)ab->warmup ? "true" : "false", r->complete ? "true" : "false",
			r->wall_s, r->cpu_s, r->polls_ok, r->polls_tried);
		bool first = true;

		for (int w = 1; w <= PROBE_W_MAX; w++)
			if (r->n[w]) {
				fprintf(f, "%s\"%s\":%zu", first ? "" : ",", ab_wname[w], r->n[w]);
				first = false;
			}
		fputs("}}", f);
	}
	fputs("],\"workloads\":[", f);
	bool first = true;

	for (int w = 1; w <= PROBE_W_MAX; w++)
		for (int a = 1; a < ab->nr_arms; a++) {
			if (!have[w][a])
				continue;
			const struct ab_cmp *c = &cmp[w][a];

			fprintf(f, "%s{\"workload\":\"%s\",\"a\":", first ? "" : ",", ab_wname[w]);
			first = false;
			hp_json_string(f, c->a.name);
			fputs(",\"b\":", f);
			hp_json_string(f, c->b.name);
			fprintf(f, ",\"unit\":\"us\",\"n_a\":%zu,\"n_b\":%zu,\"mann_whitney_p\":%.6g,\"cliffs_delta\":%.4f",
				c->a.n, c->b.n, c->mwu.p, c->mwu.delta);
			for (int k = 0; k < AB_NQ; k++)
				fprintf(f, ",\"%s\":{\"a\":[%.3f,%.3f,%.3f],\"b\":[%.3f,%.3f,%.3f],\"diff\":[%.3f,%.3f,%.3f]}",
					ab_report_q_name[k], c->a.q[k].est, c->a.q[k].lo, c->a.q[k].hi, c->b.q[k].est, c->b.q[k].lo,
					c->b.q[k].hi, c->diff[k].est, c->diff[k].lo, c->diff[k].hi);
			fputc('}', f);
		}
	fputs("],", f);
	/* the samples themselves, so `vmm ab compare` can set this run against another */
	ab_saved_write_raw(f, raw, nraw);
	fputs("}\n", f);
}

static int ab_report(struct ab *ab)
{
	struct ab_rng rng;
	struct ab_opts o = { 0 };
	static struct ab_cmp cmp[PROBE_W_MAX + 1][AB_MAX_ARMS];
	static struct ab_raw raw[(PROBE_W_MAX + 1) * AB_MAX_ARMS];
	int nraw = 0;
	bool have[PROBE_W_MAX + 1][AB_MAX_ARMS] = { { false } };
	double cpu[AB_MAX_ARMS] = { 0 }, cpu_per[AB_MAX_ARMS] = { 0 };
	size_t samples[AB_MAX_ARMS] = { 0 };
	long long ok[AB_MAX_ARMS] = { 0 }, tried[AB_MAX_ARMS] = { 0 };
	int compared = 0, r = 0;

	ab_rng_seed(&rng, ab->seed + 1);
	for (int e = (int)ab->warmup; e < ab->nr_runs; e++) {
		const struct ab_run *run = &ab->run[e];

		if (!run->complete)
			continue;
		cpu[run->arm] += run->cpu_s;
		ok[run->arm] += run->polls_ok;
		tried[run->arm] += run->polls_tried;
		for (int w = 1; w <= PROBE_W_MAX; w++)
			samples[run->arm] += run->n[w];
	}
	for (int w = 1; w <= PROBE_W_MAX; w++) {
		struct ab_epoch ep[AB_MAX_EPOCHS];
		double *pooled[AB_MAX_ARMS] = { NULL };
		size_t npool[AB_MAX_ARMS] = { 0 };
		const char *names[AB_MAX_ARMS];
		bool any = false;

		for (int e = 0; e < ab->nr_runs; e++)
			ep[e] = (struct ab_epoch){ ab->run[e].arm, ab->run[e].x[w], ab->run[e].n[w] };
		for (int a = 0; a < ab->nr_arms; a++) {
			ab_gather(ep, ab->nr_runs, ab->warmup, a, &pooled[a], &npool[a]);
			any |= npool[a] > 0;
			names[a] = ab->arm[a].name;
		}
		if (!any)
			continue;
		printf("== %s (us)\n", ab_wname[w]);
		for (int a = 1; a < ab->nr_arms; a++)
			if (ab_compare(&cmp[w][a], ab->arm[0].name, pooled[0], npool[0], ab->arm[a].name, pooled[a],
				       npool[a], &o, &rng) == 0) {
				ab_print(stdout, &cmp[w][a], 1.0, "us");
				have[w][a] = true;
				compared++;
			}
		for (int a = 0; a < ab->nr_arms; a++) {
			ab_sort(pooled[a], npool[a]);
			raw[nraw] = (struct ab_raw){ .x = pooled[a], .n = npool[a] };
			snprintf(raw[nraw].workload, sizeof(raw[nraw].workload), "%s", ab_wname[w]);
			snprintf(raw[nraw].arm, sizeof(raw[nraw].arm), "%s", ab->arm[a].name);
			nraw++;
		}
		if (ab->plot && ab_write_plot(ab->plot, ab_wname[w], names, pooled, npool, ab->nr_arms) < 0)
			r = -EIO;
	}
	printf("== the other side of the trade (epochs after warm-up; CPU: %s)\n",
	       ab->mode == AB_ONE_VM ? "the vCPU threads" : "the whole vmm process");
	for (int a = 0; a < ab->nr_arms; a++) {
		cpu_per[a] = samples[a] ? cpu[a] / samples[a] : 0;
		printf("%-12s host CPU %.2f s for %zu probe samples (%.1f us per sample); halt polls %lld of "
		       "%lld successful\n", ab->arm[a].name, cpu[a], samples[a], 1e6 * cpu_per[a], ok[a], tried[a]);
	}
	if (ab->json) {
		FILE *f = fopen(ab->json, "w");

		if (!f) {
			pr_err("vmm ab: cannot write %s: %s", ab->json, strerror(errno));
			r = -EIO;
		} else {
			write_json(ab, f, cmp, have, cpu_per, ok, tried, raw, nraw);
			fclose(f);
			fprintf(stderr, "vmm ab: results in %s\n", ab->json);
		}
	}
	for (int i = 0; i < nraw; i++)
		free(raw[i].x);
	if (!compared) {
		pr_err("vmm ab: no workload had samples in every arm: is vmm.probe= in the guest's command "
		       "line (-p) of the shared options?");
		return -ENODATA;
	}
	return r;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmm ab --arm NAME:OPTIONS --arm NAME:OPTIONS [...] [--epochs N] [--warmup K]\n"
		"              [--mode auto|one-vm|boots] [--epoch-ms MS] [--seed S] [--json FILE]\n"
		"              [--plot PREFIX] -- VMM_RUN_OPTIONS\n"
		"       vmm ab compare A.json B.json [--arm NAME] [--seed S]\n"
		"       vmm ab plot FILE.json PREFIX\n"
		"  Runs the arms' `vmm run VMM_RUN_OPTIONS ARM_OPTIONS` in N blocks (default 4) of one epoch\n"
		"  per arm, in a random order per block, drops the first K epochs (default 1), and compares\n"
		"  the guest latency probe's samples per workload (the guest command line must ask for them:\n"
		"  -p \"... vmm.probe=timer:count=2000;pingpong:count=2000\").\n"
		"  one-vm (auto's choice when every arm is only run-time knobs: --halt-poll-ns N, and on x86\n"
		"  --poll-control 0|1, every vCPU's MSR_KVM_POLL_CONTROL): one boot, the knobs switched every\n"
		"  --epoch-ms (default 1000) through the control socket, N blocks and more while the guest's\n"
		"  probe still runs; boots: one boot per epoch, for any option but --poll-control.\n"
		"  compare: the same arm of two saved runs (--json), e.g. on two host kernels; plot: the CDF\n"
		"  plots (PREFIX-WORKLOAD.svg/.png through gnuplot) of a saved run.\n"
		"  e.g. vmm ab --arm hp0:'--halt-poll-ns 0' --arm hp500us:'--halt-poll-ns 500000' -- -c 2 \\\n"
		"       -p 'console=ttyS0 quiet vmm.probe=timer:interval_us=1000,count=20000'\n");
}

static int compare_cmd(int argc, char **argv)
{
	const char *arm = NULL;
	uint64_t seed = 1;
	int pos = 0;
	char *files[2];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--arm") && i + 1 < argc)
			arm = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (argv[i][0] != '-' && pos < 2)
			files[pos++] = argv[i];
		else
			pos = 3;
	}
	if (pos != 2) {
		pr_err("vmm ab compare takes two saved runs (vmm ab --json FILE): vmm ab compare A.json B.json "
		       "[--arm NAME] [--seed S]");
		return 1;
	}
	struct ab_saved a, b;

	if (ab_saved_read(files[0], &a) < 0)
		return 1;
	if (ab_saved_read(files[1], &b) < 0) {
		ab_saved_free(&a);
		return 1;
	}
	int r = ab_saved_compare(stdout, files[0], &a, files[1], &b, arm, seed);

	ab_saved_free(&a);
	ab_saved_free(&b);
	return r < 0 ? 1 : 0;
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

int ab_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "arm", required_argument, NULL, 'a' }, { "epochs", required_argument, NULL, 'e' },
		{ "warmup", required_argument, NULL, 'w' }, { "seed", required_argument, NULL, 's' },
		{ "json", required_argument, NULL, 'j' }, { "plot", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' }, { "epoch-ms", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	static struct ab ab;
	int o;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	if (argc > 1 && !strcmp(argv[1], "compare"))
		return compare_cmd(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "plot"))
		return plot_cmd(argc - 1, argv + 1);
	memset(&ab, 0, sizeof(ab));
	ab.epochs = 4;
	ab.warmup = 1;
	ab.epoch_ms = 1000;
	ab.seed = (uint64_t)time(NULL);
	optind = 0;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (o) {
		case 'a':
			if (parse_arm(&ab, optarg) < 0)
				return 1;
			break;
		case 'e': ab.epochs = strtoul(optarg, NULL, 10); break;
		case 'w': ab.warmup = strtoul(optarg, NULL, 10); break;
		case 's': ab.seed = strtoull(optarg, NULL, 10); break;
		case 'j': ab.json = optarg; break;
		case 'p': ab.plot = optarg; break;
		case 'E': ab.epoch_ms = strtoul(optarg, NULL, 10); break;
		case 'm':
			if (!strcmp(optarg, "auto"))
				ab.mode = AB_AUTO;
			else if (!strcmp(optarg, "one-vm"))
				ab.mode = AB_ONE_VM;
			else if (!strcmp(optarg, "boots"))
				ab.mode = AB_BOOTS;
			else {
				pr_err("vmm ab --mode %s: expected auto, one-vm or boots", optarg);
				return 1;
			}
			break;
		case 'h': usage(stdout); return 0;
		default:
			pr_err("vmm ab: unknown option or missing value '%s' (vmm ab --help)", argv[optind - 1]);
			return 1;
		}
	}
	if (ab.nr_arms < 2 || ab.epochs < 1 || ab.epochs * ab.nr_arms > AB_MAX_EPOCHS ||
	    ab.warmup >= ab.epochs * ab.nr_arms || ab.epoch_ms < 10 || ab.epoch_ms > 3600000) {
		pr_err("vmm ab: needs at least two --arm, 1 to %d epochs in all, fewer warm-up epochs than "
		       "epochs, and --epoch-ms from 10 to 3600000 (vmm ab --help)", AB_MAX_EPOCHS);
		return 1;
	}
	if (ab.plot && strchr(ab.plot, '\'')) {
		pr_err("vmm ab --plot %s: the prefix goes into a gnuplot script: no quotes in it", ab.plot);
		return 1;
	}
	bool all_runtime = true, any_pc = false;

	for (int a = 0; a < ab.nr_arms; a++) {
		all_runtime &= ab.arm[a].runtime;
		for (int i = 0; i < ab.arm[a].argc; i++)
			any_pc |= !strcmp(ab.arm[a].argv[i], "--poll-control");
	}
	if (ab.mode == AB_ONE_VM && !all_runtime) {
		pr_err("vmm ab --mode one-vm: every arm must be only run-time knobs (--halt-poll-ns N, "
		       "--poll-control 0|1); the others need a boot per epoch (--mode boots)");
		return 1;
	}
	if (any_pc && (!all_runtime || ab.mode == AB_BOOTS)) {
		pr_err("vmm ab: --poll-control is switched in a running VM only (the guest writes the MSR "
		       "itself at boot): give it, with --halt-poll-ns N at most, in every arm, in one VM");
		return 1;
	}
	/* in one VM a knob one arm sets and another does not would keep the last arm's value */
	for (int a = 1; all_runtime && a < ab.nr_arms; a++) {
		const struct ab_knobs *k0 = &ab.arm[0].knobs, *k = &ab.arm[a].knobs;

		if (k->has_halt_poll_ns != k0->has_halt_poll_ns || (k->poll_control < 0) != (k0->poll_control < 0)) {
			pr_err("vmm ab: arms %s and %s set different knobs: in one VM every arm sets the same "
			       "ones (--halt-poll-ns, --poll-control), or a knob keeps the previous arm's value",
			       ab.arm[0].name, ab.arm[a].name);
			return 1;
		}
	}
	if (ab.mode == AB_AUTO)
		ab.mode = all_runtime ? AB_ONE_VM : AB_BOOTS;
	for (; optind < argc && ab.nr_shared < AB_MAX_ARGS - 1; optind++)
		ab.shared[ab.nr_shared++] = argv[optind];
	struct ab_rng rng;
	int total = ab.epochs * ab.nr_arms, order[AB_MAX_EPOCHS];

	ab_rng_seed(&rng, ab.seed);
	schedule(&ab, &rng, order);
	fprintf(stderr, "vmm ab: %d arms x %u epochs, %s, seed %llu, the first %u epochs are warm-up\n", ab.nr_arms,
		ab.epochs, ab.mode != AB_ONE_VM ? "one boot per epoch"
		: ab.arm[0].knobs.poll_control < 0 ? "in one VM (the ceiling switched at run time)"
		: "in one VM (poll control switched at run time)",
		(unsigned long long)ab.seed, ab.warmup);
	if (ab.mode == AB_ONE_VM) {
		if (ab_run_one_vm(&ab, order, total, &rng) < 0)
			return 1;
	} else {
		char stats[64];
		struct timespec t0, t;

		snprintf(stats, sizeof(stats), "/tmp/vmm-ab-%d.json", getpid());
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int e = 0; e < total; e++) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			double el = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;

			ab_progress(&ab, e, total, order[e], e ? el / e * (total - e) : 0.0);
			if (run_epoch(&ab, order[e], &ab.run[ab.nr_runs], stats) < 0) {
				unlink(stats);
				return 1;
			}
			ab.nr_runs++;
		}
		unlink(stats);
	}
	int r = ab_report(&ab);

	for (int i = 0; i < ab.nr_runs; i++)
		for (int w = 0; w <= PROBE_W_MAX; w++)
			free(ab.run[i].x[w]);
	return r < 0 ? 1 : 0;
}
