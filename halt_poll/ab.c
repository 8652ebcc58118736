// SPDX-License-Identifier: MIT
/*
 * `vmm ab`: A/B tests of vmm run configurations ("arms") on the guest latency probe's workloads.
 * Epochs (one boot each, in this version) are interleaved in blocks with the arms in a random
 * order per block (seeded, so a run can be repeated), the first warm-up epochs are discarded,
 * and per workload each arm gets p50/p90/p99/p99.9/max with bootstrap confidence intervals; each
 * arm after the first is compared with it (Mann-Whitney U, Cliff's delta, the quantiles'
 * differences with intervals). Beside latency, the other side of the halt-polling trade: the host
 * CPU time the run burned per probe sample, and KVM's halt-polling counters from --stats.
 * Knobs that change at run time (the halt-poll ceiling) could switch inside one VM; booting per
 * epoch works for every knob (irqchip mode, GICv4, PV features) and keeps each epoch independent.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest/probe_decode.h"
#include "halt_poll/abstats.h"
#include "halt_poll/halt_poll.h"
#include "vmm/log.h"

#define AB_MAX_ARMS 4
#define AB_MAX_EPOCHS 64
#define AB_MAX_ARGS 48
#define AB_OUT_MAX (16 << 20)

struct ab_arm_cfg {
	char name[32];
	char *argv[AB_MAX_ARGS]; /* the arm's vmm run options */
	int argc;
};

struct ab_run {
	int arm;
	double *x[PROBE_W_MAX + 1]; /* samples per workload, us */
	size_t n[PROBE_W_MAX + 1];
	double cpu_s, wall_s;
	long long polls_ok, polls_tried;
};

struct ab {
	struct ab_arm_cfg arm[AB_MAX_ARMS];
	int nr_arms;
	char *shared[AB_MAX_ARGS];
	int nr_shared;
	unsigned int epochs, warmup;
	uint64_t seed;
	const char *json, *plot;
	struct ab_run run[AB_MAX_EPOCHS];
	int nr_runs;
};

static const char *const wname[PROBE_W_MAX + 1] = { "", "timer", "pingpong", "udp" };

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
	for (char *save = NULL, *t = strtok_r(colon + 1, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (a->argc == AB_MAX_ARGS - 1)
			return -E2BIG;
		a->argv[a->argc++] = t;
	}
	return 0;
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
	argv[argc] = NULL;
	if (pipe(p) < 0)
		return -errno;
	struct timeval t0, t1;

	gettimeofday(&t0, NULL);
	pid_t pid = fork();

	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(p[1]);
	struct probe_decoder d;
	char buf[65536];
	ssize_t n;

	probe_decoder_init(&d);
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		probe_decode_text(&d, buf, n);
	close(p[0]);
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
			static const char *const keys[2] = { "{\"name\":\"halt_successful_poll\",",
							     "{\"name\":\"halt_attempted_poll\"," };
			long long *dst[2] = { &out->polls_ok, &out->polls_tried };

			for (int k = 0; k < 2; k++)
				for (const char *q = j; (q = strstr(q, keys[k])); q++) {
					const char *v = strstr(q, "\"value\":");

					if (v)
						*dst[k] += strtoll(v + 8, NULL, 10);
				}
			free(j);
		}
	}
	return 0;
}

static void write_json(struct ab *ab, FILE *f, struct ab_cmp cmp[PROBE_W_MAX + 1][AB_MAX_ARMS],
		       bool have[PROBE_W_MAX + 1][AB_MAX_ARMS], double cpu_per[AB_MAX_ARMS])
{
	fprintf(f, "{\"seed\":%llu,\"epochs_per_arm\":%u,\"warmup\":%u,\"arms\":[", (unsigned long long)ab->seed,
		ab->epochs, ab->warmup);
	for (int a = 0; a < ab->nr_arms; a++) {
		fprintf(f, "%s{\"name\":", a ? "," : "");
		hp_json_string(f, ab->arm[a].name);
		fprintf(f, ",\"cpu_s_per_sample\":%.9f}", cpu_per[a]);
	}
	fputs("],\"workloads\":[", f);
	bool first = true;

	for (int w = 1; w <= PROBE_W_MAX; w++)
		for (int a = 1; a < ab->nr_arms; a++) {
			if (!have[w][a])
				continue;
			const struct ab_cmp *c = &cmp[w][a];

			fprintf(f, "%s{\"workload\":\"%s\",\"a\":", first ? "" : ",", wname[w]);
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
	fputs("]}\n", f);
}

/* CDF data per arm and a gnuplot script; SVG and PNG when gnuplot is installed. */
static void write_plot(struct ab *ab, int w, double *pooled[AB_MAX_ARMS], size_t npool[AB_MAX_ARMS])
{
	char path[512];

	snprintf(path, sizeof(path), "%s-%s.dat", ab->plot, wname[w]);
	FILE *f = fopen(path, "w");

	if (!f) {
		pr_err("vmm ab: cannot write %s", path);
		return;
	}
	for (int a = 0; a < ab->nr_arms; a++) {
		fprintf(f, "# arm %s\n", ab->arm[a].name);
		for (size_t i = 0; i < npool[a]; i++)
			fprintf(f, "%.3f %.6f\n", pooled[a][i], (double)(i + 1) / npool[a]);
		fputs("\n\n", f);
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s-%s.gp", ab->plot, wname[w]);
	f = fopen(path, "w");
	if (!f)
		return;
	for (int fmt = 0; fmt < 2; fmt++) {
		fprintf(f, "set terminal %s size 800,500\nset output '%s-%s.%s'\n", fmt ? "pngcairo" : "svg",
			ab->plot, wname[w], fmt ? "png" : "svg");
		fprintf(f, "set title 'vmm ab: %s latency, CDF per arm'\nset xlabel 'us (log)'\nset ylabel "
			"'fraction of samples'\nset logscale x\nset key bottom right\nset grid\nplot ", wname[w]);
		for (int a = 0; a < ab->nr_arms; a++)
			fprintf(f, "%s'%s-%s.dat' index %d with lines lw 2 title '%s'", a ? ", " : "", ab->plot,
				wname[w], a, ab->arm[a].name);
		fputc('\n', f);
	}
	fclose(f);
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "command -v gnuplot >/dev/null && gnuplot '%s'", path);
	if (system(cmd) == 0)
		fprintf(stderr, "vmm ab: plots %s-%s.svg and .png\n", ab->plot, wname[w]);
	else
		fprintf(stderr, "vmm ab: no gnuplot: %s has the plot script and its data\n", path);
}

static int ab_report(struct ab *ab)
{
	struct ab_rng rng;
	struct ab_opts o = { 0 };
	static struct ab_cmp cmp[PROBE_W_MAX + 1][AB_MAX_ARMS];
	bool have[PROBE_W_MAX + 1][AB_MAX_ARMS] = { { false } };
	double cpu[AB_MAX_ARMS] = { 0 }, cpu_per[AB_MAX_ARMS] = { 0 };
	size_t samples[AB_MAX_ARMS] = { 0 };
	long long ok[AB_MAX_ARMS] = { 0 }, tried[AB_MAX_ARMS] = { 0 };
	int compared = 0;

	ab_rng_seed(&rng, ab->seed + 1);
	for (int r = (int)ab->warmup; r < ab->nr_runs; r++) {
		const struct ab_run *e = &ab->run[r];

		cpu[e->arm] += e->cpu_s;
		ok[e->arm] += e->polls_ok;
		tried[e->arm] += e->polls_tried;
		for (int w = 1; w <= PROBE_W_MAX; w++)
			samples[e->arm] += e->n[w];
	}
	for (int w = 1; w <= PROBE_W_MAX; w++) {
		struct ab_epoch ep[AB_MAX_EPOCHS];
		double *pooled[AB_MAX_ARMS] = { NULL };
		size_t npool[AB_MAX_ARMS] = { 0 };
		bool any = false;

		for (int r = 0; r < ab->nr_runs; r++)
			ep[r] = (struct ab_epoch){ ab->run[r].arm, ab->run[r].x[w], ab->run[r].n[w] };
		for (int a = 0; a < ab->nr_arms; a++) {
			ab_gather(ep, ab->nr_runs, ab->warmup, a, &pooled[a], &npool[a]);
			any |= npool[a] > 0;
		}
		if (!any)
			continue;
		printf("== %s (us)\n", wname[w]);
		for (int a = 1; a < ab->nr_arms; a++)
			if (ab_compare(&cmp[w][a], ab->arm[0].name, pooled[0], npool[0], ab->arm[a].name, pooled[a],
				       npool[a], &o, &rng) == 0) {
				ab_print(stdout, &cmp[w][a], 1.0, "us");
				have[w][a] = true;
				compared++;
			}
		if (ab->plot) {
			for (int a = 0; a < ab->nr_arms; a++)
				ab_sort(pooled[a], npool[a]);
			write_plot(ab, w, pooled, npool);
		}
		for (int a = 0; a < ab->nr_arms; a++)
			free(pooled[a]);
	}
	printf("== the other side of the trade (epochs after warm-up)\n");
	for (int a = 0; a < ab->nr_arms; a++) {
		cpu_per[a] = samples[a] ? cpu[a] / samples[a] : 0;
		printf("%-12s host CPU %.2f s for %zu probe samples (%.1f us per sample); halt polls %lld of "
		       "%lld successful\n", ab->arm[a].name, cpu[a], samples[a], 1e6 * cpu_per[a], ok[a], tried[a]);
	}
	if (ab->json) {
		FILE *f = fopen(ab->json, "w");

		if (!f) {
			pr_err("vmm ab: cannot write %s", ab->json);
			return -EIO;
		}
		write_json(ab, f, cmp, have, cpu_per);
		fclose(f);
		fprintf(stderr, "vmm ab: results in %s\n", ab->json);
	}
	if (!compared) {
		pr_err("vmm ab: no workload had samples in every arm: is vmm.probe= in the guest's command "
		       "line (-p) of the shared options?");
		return -ENODATA;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmm ab --arm NAME:OPTIONS --arm NAME:OPTIONS [...] [--epochs N] [--warmup K]\n"
		"              [--seed S] [--json FILE] [--plot PREFIX] -- VMM_RUN_OPTIONS\n"
		"  Runs `vmm run VMM_RUN_OPTIONS ARM_OPTIONS` N times per arm (default 4), the arms in a\n"
		"  random order in each block, drops the first K epochs (default 1), and compares the\n"
		"  guest latency probe's samples per workload (the guest command line must ask for them:\n"
		"  -p \"... vmm.probe=timer:count=2000;pingpong:count=2000\").\n"
		"  e.g. vmm ab --arm hp0:'--halt-poll-ns 0' --arm hp500us:'--halt-poll-ns 500000' -- -c 2 \\\n"
		"       -p 'console=ttyS0 quiet vmm.probe=timer:interval_us=1000,count=2000'\n");
}

int ab_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "arm", required_argument, NULL, 'a' }, { "epochs", required_argument, NULL, 'e' },
		{ "warmup", required_argument, NULL, 'w' }, { "seed", required_argument, NULL, 's' },
		{ "json", required_argument, NULL, 'j' }, { "plot", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	static struct ab ab;
	int o;

	memset(&ab, 0, sizeof(ab));
	ab.epochs = 4;
	ab.warmup = 1;
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
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (ab.nr_arms < 2 || ab.epochs < 1 || ab.epochs * ab.nr_arms > AB_MAX_EPOCHS ||
	    ab.warmup >= ab.epochs * ab.nr_arms) {
		pr_err("vmm ab: needs at least two --arm, 1 to %d epochs in all, and fewer warm-up epochs "
		       "than epochs (vmm ab --help)", AB_MAX_EPOCHS);
		return 1;
	}
	for (; optind < argc && ab.nr_shared < AB_MAX_ARGS - 1; optind++)
		ab.shared[ab.nr_shared++] = argv[optind];
	struct ab_rng rng;
	char stats[64];
	struct timespec t0, t;
	int total = ab.epochs * ab.nr_arms;

	ab_rng_seed(&rng, ab.seed);
	snprintf(stats, sizeof(stats), "/tmp/vmm-ab-%d.json", getpid());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fprintf(stderr, "vmm ab: %d arms x %u epochs, seed %llu, the first %u epochs are warm-up\n", ab.nr_arms,
		ab.epochs, (unsigned long long)ab.seed, ab.warmup);
	for (unsigned int blk = 0; blk < ab.epochs; blk++) {
		int order[AB_MAX_ARMS];

		for (int a = 0; a < ab.nr_arms; a++)
			order[a] = a;
		for (int a = ab.nr_arms - 1; a > 0; a--) { /* Fisher-Yates: a new order every block */
			int k = ab_rng_below(&rng, a + 1), tmp = order[a];

			order[a] = order[k];
			order[k] = tmp;
		}
		for (int a = 0; a < ab.nr_arms; a++) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			double el = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
			int done = ab.nr_runs;

			fprintf(stderr, "vmm ab: epoch %d/%d, arm %s%s, about %.0f s left\n", done + 1, total,
				ab.arm[order[a]].name, done < (int)ab.warmup ? " (warm-up)" : "",
				done ? el / done * (total - done) : 0.0);
			if (run_epoch(&ab, order[a], &ab.run[ab.nr_runs], stats) < 0) {
				unlink(stats);
				return 1;
			}
			ab.nr_runs++;
		}
	}
	unlink(stats);
	int r = ab_report(&ab);

	for (int i = 0; i < ab.nr_runs; i++)
		for (int w = 0; w <= PROBE_W_MAX; w++)
			free(ab.run[i].x[w]);
	return r < 0 ? 1 : 0;
}
