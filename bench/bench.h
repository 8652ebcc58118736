/* SPDX-License-Identifier: MIT */
/*
 * make bench's results: named figures, each with its repetitions (samples) and a direction
 * (lower or higher is better), plus derived ratios with their goals. Written as JSON by the bench
 * runner (tests/lab/bench.c) and read back by `vmm bench compare OLD.json NEW.json`, which puts
 * each figure present in both through the A/B statistics (ab/abstats.h).
 */
#ifndef VMM_BENCH_H
#define VMM_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define BENCH_NAME_MAX 64
#define BENCH_MAX_FIGURES 256
#define BENCH_MAX_SAMPLES 256

struct bench_figure {
	char name[BENCH_NAME_MAX]; /* "startup.first_instruction" */
	char unit[16];		   /* "ms", "IOPS", "MiB/s", "exits" ... */
	bool higher_better;
	size_t n;
	double x[BENCH_MAX_SAMPLES];
};

struct bench_ratio {
	char name[BENCH_NAME_MAX];
	double value;
	double goal; /* <= 0: none */
	bool goal_max; /* the value must stay at or below the goal (else at or above) */
	char what[96];
	/* bench_ratio_of's: value = median(num) / median(den), or with no den median(num) / by;
	 * num "": a value computed by hand, not judged */
	char num[BENCH_NAME_MAX], den[BENCH_NAME_MAX];
	double by;
};

struct bench_report {
	char where[64]; /* "lab (nested, TCG)" or "host" */
	size_t nfig, nratio;
	struct bench_figure fig[BENCH_MAX_FIGURES];
	struct bench_ratio ratio[BENCH_MAX_FIGURES];
};

/* The figure called name, created with unit and direction on first use; NULL when full. */
struct bench_figure *bench_figure(struct bench_report *r, const char *name, const char *unit,
				  bool higher_better);
/* Adds one repetition; ignores non-finite values and a full figure (returns -1). */
int bench_add(struct bench_report *r, const char *name, const char *unit, bool higher_better, double v);
void bench_ratio(struct bench_report *r, const char *name, double value, double goal, bool goal_max,
		 const char *what);

/* A ratio bench_judge can judge from the repetitions: median(num) / median(den) (vmm's figure over
 * a peer's in the same run), or with den NULL median(num) / by (a figure against a fixed amount,
 * e.g. 1.5 MiB, or by 1 a figure that is itself a ratio per pair). Left out when a figure has no
 * sample or the divisor is 0. */
void bench_ratio_of(struct bench_report *r, const char *name, const char *num, const char *den, double by,
		    double goal, bool goal_max, const char *what);

/* min, median (type 7 p50) and max of a figure's samples; n must be > 0. */
void bench_summary(const struct bench_figure *f, double *min, double *median, double *max);
const struct bench_figure *bench_find(const struct bench_report *r, const char *name);

/*
 * Peers: other VMMs measured in the same run, alternating with vmm. Figure "PEER.NAME" is PEER's
 * value of vmm's figure NAME (qemu.startup.guest_init beside startup.guest_init); the table and
 * compare put vmm's median over the peer's beside each pair. Peers: qemu (QEMU/KVM, userspace
 * virtio), qemu_vhost (QEMU/KVM with vhost-net).
 */
/* When name is a peer's figure: the vmm figure's name (a pointer into name), the peer's name into
 * peer; else NULL. */
const char *bench_peer_of(const char *name, char *peer, size_t size);
struct bench_peer_ratio {
	const struct bench_figure *vmm, *peer;
	char peer_name[16];
	double vmm_median, peer_median, ratio; /* vmm / peer */
	double goal;			       /* <= 0: none */
	bool goal_max;
};
/* The i-th pair of a vmm figure and a peer's with samples on both sides (in the peer figures'
 * order); false past the last. */
bool bench_peer_ratio(const struct bench_report *r, size_t i, struct bench_peer_ratio *out);

void bench_write_json(const struct bench_report *r, FILE *f);
/* The table: figure, unit, n, min, median, max; then the ratios with their goals; then vmm over
 * each peer (bench_peer_ratio) with its goal where the project set one. */
void bench_print_table(const struct bench_report *r, FILE *f);

/* Parses what bench_write_json writes. On error returns -EINVAL with err naming the problem
 * and its byte offset. */
int bench_parse(const char *text, struct bench_report *r, char *err, size_t errsize);
/* Reads and parses path; messages name the file. */
int bench_read(const char *path, struct bench_report *r);

/* Every figure in both reports through the A/B statistics (seeded: reproducible); returns how
 * many figures got significantly worse (p < 0.05 and the median moved the wrong way). */
int bench_compare(const struct bench_report *a, const struct bench_report *b, unsigned long long seed,
		  FILE *f);

/*
 * The ratios of one report judged from their repetitions (each a boot or run of its own, the unit
 * of the experiment): the ratio of medians with a bootstrap 95% interval (each side resampled on
 * its own), for two figures p from the permutation test over runs, and against the goal: met when
 * the whole interval is on the goal's side, NOT met when it is all beyond, undecided when the goal
 * is inside it. Every bench_ratio_of ratio, then every vmm / peer pair no ratio covers. Fewer than
 * AB_MIN_SAMPLES repetitions on a side: shown, not judged. Returns the goals judged NOT met.
 */
int bench_judge(const struct bench_report *r, unsigned long long seed, FILE *f);

/* `vmm bench ...` */
int bench_cmd(int argc, char **argv);

#endif
