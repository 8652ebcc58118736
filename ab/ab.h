/* SPDX-License-Identifier: MIT */
/*
 * `vmm ab`'s driver state, shared by its two files: ab.c (options, one boot per epoch, the report)
 * and ab_one_vm.c (one VM, the arms switched through its control socket). Private to ab/.
 */
#ifndef VMM_AB_AB_H
#define VMM_AB_AB_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "guest/probe_proto.h"
#include "ab/abstats.h"
#include "ab/ab_stages.h"
#include "ab/design.h"

struct probe_decoder;

#define AB_MAX_ARMS 4
#define AB_MAX_EPOCHS 1024
#define AB_MAX_ARGS 48
#define AB_OUT_MAX (16 << 20)
#define AB_DEFAULT_BLOCKS 14

struct ab_arm_cfg {
	char name[32];
	char *argv[AB_MAX_ARGS]; /* the arm's vmm run options */
	int argc;
	bool runtime;	     /* only run-time knobs: switchable inside one VM */
	struct ab_knobs knobs; /* then their values */
};

struct ab_run {
	int arm, block;			 /* the arm's epoch within block (schedule order / arms) */
	uint64_t start_ns, end_ns;	 /* host CLOCK_MONOTONIC (one VM: the span its samples fall in) */
	double *x[PROBE_W_MAX + 1]; /* samples per workload, us */
	size_t n[PROBE_W_MAX + 1];
	double cpu_s, wall_s;
	long long polls_ok, polls_tried;
	bool complete; /* one VM: the epoch ended at a switch, its counters are known */
	struct ab_stage_epoch st; /* --attribute: the timer's stage figures per class */
};

enum ab_mode { AB_AUTO, AB_ONE_VM, AB_BOOTS };

struct ab {
	struct ab_arm_cfg arm[AB_MAX_ARMS];
	int nr_arms;
	char *shared[AB_MAX_ARGS];
	int nr_shared;
	unsigned int epochs, warmup;
	uint64_t seed;
	const char *json, *plot;
	enum ab_mode mode;
	unsigned int epoch_ms;
	double alpha, min_effect;	/* --alpha, --min-effect (a fraction) */
	bool fail_on_regression;
	unsigned int probe_timeout_s;	/* one VM: how long the guest may stay silent */
	char tmpdir[64];		/* mkdtemp: the control socket, the stats and attribution files */
	struct ab_attr at;		/* --attribute */
	struct ab_span span[AB_MAX_EPOCHS]; /* one VM: each epoch on the host's clock */
	struct ab_run run[AB_MAX_EPOCHS];
	int nr_runs;
};

/* ab_report.c: per-epoch reduction, the tests per workload, quantile and arm against the first,
 * verdicts, the text report and the --json file. 0, 1 when --fail-on-regression found B slower,
 * or -errno. */
int ab_report(struct ab *ab);
/* The same analysis, printing nothing: each workload and arm's verdict against the first arm
 * (inconclusive where nothing was judged). 0 or -errno (-ENODATA: nothing to judge). */
int ab_report_verdicts(const struct ab *ab, enum ab_verdict (*verdict)[AB_MAX_ARMS]);

/* ab_judge.c: a saved run (vmm ab --json) back into *ab, checked: 0 or -EINVAL with why (-ENOMEM).
 * ab_saved_unload frees what it took. */
int ab_saved_load(const char *text, size_t len, struct ab *ab, char *why, size_t whysize);
void ab_saved_unload(struct ab *ab);
#define AB_SAVED_MAX (256u << 20) /* bytes of a saved file */
/* The whole of path (at most max bytes, sized by fstat), NUL-terminated; NULL when said why. */
char *ab_file_read(const char *path, size_t max, size_t *len);
/* vmm ab judge RUN.json [options]: the run judged again. */
int ab_judge_cmd(int argc, char **argv);
/* --alpha and --min-effect's value: a fraction in (0, 1), or with pct_ok a percentage ("5%"). */
int ab_parse_level(const char *opt, const char *arg, bool pct_ok, double *out);

/* A directory of our own for the control socket and the stats file: mkdtemp under $TMPDIR or
 * /tmp, 0700. 0 or -errno (said). */
int ab_tmpdir_make(char *dir, size_t size);
/* Removes it and what vmm ab put in it (ctl, stats.json); nothing when dir is empty. */
void ab_tmpdir_remove(char *dir);

/* The probe's workloads by id, as the report, the JSON and the plots name them. */
extern const char *const ab_wname[PROBE_W_MAX + 1];

/* The child vmm's probe port: its fd 3, a pipe ab_spawn_self makes (--probe-out AB_PROBE_FD_PATH). */
#define AB_PROBE_FD_PATH "/proc/self/fd/3"
/* Starts this same binary with argv, its stdout on a pipe and its fd 3 on another: the stdout
 * read end, or -errno; *pid and *probe_fd set. err_fd not NULL: its stderr on a third pipe too
 * (--attribute: its "none" line is kept), *err_fd that read end. */
int ab_spawn_self(char *const argv[], pid_t *pid, int *probe_fd, int *err_fd);
/* Reads whichever of the child's console (text), probe port (frames) and, when err is not NULL
 * and err->fd open, stderr (ab_stderr_feed) has data: the one read (0 console, 1 port, 2 stderr),
 * -2 nothing this time, -1 all ended; *n the bytes read. */
int ab_read_child(int *con, int *port, struct ab_stderr *err, struct probe_decoder *d, char *buf, size_t size,
		  int timeout_ms, ssize_t *n);
/* The complete epoch whose span holds guest time guest_ns placed on the host's clock by offset
 * (host = guest + offset), guard ns away from a switch; -1 none. The one tagging of the probe's
 * samples and --attribute's rows. */
int ab_epoch_of_guest(const struct ab *ab, uint64_t guest_ns, int64_t offset, uint64_t guard);
/* One VM: how near a switch a sample is not attributed (a tenth of an epoch, at most 2 ms). */
uint64_t ab_switch_guard_ns(const struct ab *ab);
/* --attribute's FILE for a vmm run: in ab->tmpdir. */
void ab_attr_path(const struct ab *ab, char *buf, size_t size);
/* The epochs' order, a block at a time: every arm once, shuffled per block (Fisher-Yates). */
void ab_schedule_block(const struct ab *ab, struct ab_rng *rng, int *o);
/* The progress line: the epoch, its arm and the time left. */
void ab_progress(const struct ab *ab, int done, int total, int arm, double left_s);
/* ab_one_vm.c: every epoch in one VM (ab->mode AB_ONE_VM): order holds total epochs' arms and room
 * for more blocks (AB_MAX_EPOCHS), added while the guest's probe still runs. 0 or -errno. */
int ab_run_one_vm(struct ab *ab, int *order, int total, struct ab_rng *rng);

#endif
