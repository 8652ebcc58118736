/* SPDX-License-Identifier: MIT */
/*
 * vmm ab --attribute (issue 37): where a difference between arms is. Each vmm run that vmm ab
 * starts splits the probe's timer samples into host stages (vmm run --attribute=FILE,
 * trace/trace.h); vmm ab reads FILE, puts each row into its epoch the way it puts the probe's
 * samples there, and reduces each epoch per class to the median of each stage and the class's
 * share of the epoch's samples. Those per-epoch figures are judged per arm as the timer's p50 is,
 * block by block (ab/design.h), but as differences B - A: a share or a stage may be 0, no ratio.
 *   ab_attrib.c        FILE read (untrusted), its rows into epochs, the child's "none" line
 *   ab_stages.c        the judgements, the report's section and its JSON
 *   ab_stages_json.c   an epoch's figures in a saved run, written and read back
 *   ab_stages_plot.c   --plot's stacked bars
 *   ab_stages_saved.c  vmm ab compare: the stages of saved runs, runs as units
 * Private to ab/.
 */
#ifndef VMM_AB_AB_STAGES_H
#define VMM_AB_AB_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/json.h"
#include "trace/trace.h"

struct ab;
struct ab_saved;
struct ab_rng;

/* The classes whose samples have stages: enum attrib_class's first four (poll_hit, blocked,
 * no_wait, running); not_visible and ambiguous count in an epoch's samples only. */
#define AB_ST_CLASSES 4
/* A class's figures: its stages' medians (enum attrib_stage), then its share */
#define AB_ST_SHARE AS_MAX
#define AB_ST_CELLS (AS_MAX + 1)
/* The rows of one FILE at most, and its bytes: a row is about 60 bytes of text */
#define AB_ATTR_MAX_ROWS (2u << 20)
#define AB_ATTR_MAX_BYTES (256u << 20)
/* FILE's name in vmm ab's own directory (ab->tmpdir) */
#define AB_ATTR_FILE "attribution.json"

/* One epoch's timer samples by class: its figures, reduced (the rows are not kept). */
struct ab_stage_epoch {
	uint32_t n;			  /* rows in the epoch, every class */
	uint32_t nc[AB_ST_CLASSES];	  /* of them, per class */
	uint32_t seen[AB_ST_CLASSES][AS_MAX]; /* of those, with the stage seen */
	double med[AB_ST_CLASSES][AS_MAX]; /* us: the median over the samples that saw it; NAN none */
};
/* Cell (a stage or AB_ST_SHARE) of class c in one epoch: true with *v when it has the samples a
 * median needs (ab_min_samples_for(0.5), as the p50 of a workload); a share needs as many samples
 * in the epoch. */
bool ab_stage_value(const struct ab_stage_epoch *st, int c, int cell, double *v);
/* "host_irq", ..., "guest", "share" */
const char *ab_stage_cell_name(int cell);

/* The child's stderr while vmm ab reads it (--attribute): passed on line by line, but for vmm
 * run's "vmm: attribution: none: WHY", kept to be said once for the whole A/B run. */
struct ab_stderr {
	int fd;		/* -1: not read (inherited), or ended */
	bool passing;	/* the line being read was too long to keep: passed on as it comes */
	size_t len;
	char line[512];
	char none[256]; /* the first reason seen; "" none */
};
/* Feeds bytes read from the child's stderr; ab_stderr_end at its end (a last unfinished line). */
void ab_stderr_feed(struct ab_stderr *e, const char *buf, size_t n);
void ab_stderr_end(struct ab_stderr *e);

/* --attribute's state over the whole A/B run. */
struct ab_attr {
	bool on;	/* --attribute: the runs get --attribute=FILE */
	bool any;	/* some epoch has stage figures */
	bool off;	/* a FILE was refused (said): no stage section */
	bool said;	/* a missing FILE's reason was said (once) */
	unsigned long long rows, outside, other; /* rows read, in no epoch (or near a switch), not the timer's */
	unsigned long long lost, dropped;	   /* the trace's lost and over-the-cap events, summed */
	struct ab_stderr err;
};

/* FILE's rows as read: [workload, vcpu, guest_ns, class, stages..., residual, poll] */
struct ab_attr_row {
	uint64_t guest_ns;
	int64_t stage[AS_MAX]; /* ns, -1 not seen */
	uint8_t workload, cls;
	uint16_t vcpu;
};
struct ab_attr_file {
	struct ab_attr_row *row;
	size_t n;
	unsigned long long lost, dropped;
};
/* FILE's text: 0, or -EINVAL with why (-ENOMEM). Every value is checked: types, ranges, at most
 * max_rows rows, the rows as many as its "counts" say were joined. */
int ab_attr_parse(const char *text, size_t len, size_t max_rows, struct ab_attr_file *f, char *why, size_t whysize);
void ab_attr_file_free(struct ab_attr_file *f);

/* Where rows go: every row to epoch `fixed` (a boot per epoch), or (fixed < 0, one VM) each by its
 * guest time, placed on the host's clock by offset, as the probe's samples are (ab_epoch_of_guest). */
struct ab_tagger {
	int fixed;
	int64_t offset;
	uint64_t guard;
};
/* The rows of f into ab's epochs' figures (ab->run[].st); the timer's rows only. */
void ab_attr_into_epochs(struct ab *ab, const struct ab_attr_file *f, const struct ab_tagger *t);
/* After a run: path read and put into epochs, then removed (the next run must write its own).
 * Missing: the child's reason said once; refused: said, and ab->at.off. 0 or -errno. */
int ab_attr_load(struct ab *ab, const char *path, const struct ab_tagger *t);

/* ---- the judgements (ab_stages.c) ---- */

struct ab_stage_analysis;
/* Per arm against the first, each class's cells over the blocks; Holm over every cell judged, at
 * ab->alpha. NULL when out of memory. */
struct ab_stage_analysis *ab_stages_analyze(const struct ab *ab);
void ab_stages_free(struct ab_stage_analysis *sa);
/* The report's section: "where the difference is". */
void ab_stages_print(const struct ab *ab, const struct ab_stage_analysis *sa, FILE *f);
/* ,"attribution":{...},"stage_comparisons":[...],"stage_notes":[...],"stage_verdicts":[...] */
void ab_stages_json(const struct ab *ab, const struct ab_stage_analysis *sa, FILE *f);
/* "moved" for a judged cell: p below alpha after Holm and a shift of at least min_effect (of A's
 * median for a stage; points of share for a share). */
bool ab_stage_moved(int cell, bool holm_reject, double shift, double a_median, double min_effect);
/* "blocked.run_queue +12.3 us [4.1, 20.2], p 0.003" */
void ab_stage_shift_text(FILE *f, int c, int cell, double shift, double lo, double hi, double p);

/* ---- an epoch's figures in the saved JSON (ab_stages_json.c) ---- */

/* {"workload":"timer","n":N,"classes":{"poll_hit":{"n":N,"seen":[...],"median_us":[...]},...}} */
void ab_stage_epoch_json(FILE *f, const struct ab_stage_epoch *st);
/* Read back: NULL, or why not. */
const char *ab_stage_epoch_parse(const struct json *v, struct ab_stage_epoch *st);

/* ---- --plot (ab_stages_plot.c) ---- */

/* PREFIX-stages-CLASS.dat/.gp (.svg/.png through gnuplot): per class with samples in every arm, a
 * bar per arm of its stages' medians stacked. 0, or <0 when a file failed. */
int ab_stages_plot(const struct ab *ab, const char *prefix);

/* ---- saved runs (ab_stages_saved.c) ---- */

/* One arm of a saved run: per class and cell, the sum of its epochs' figures and how many. */
struct ab_saved_st {
	char arm[32];
	int epochs[AB_ST_CLASSES][AB_ST_CELLS];
	double sum[AB_ST_CLASSES][AB_ST_CELLS];
};
/* A saved epoch's "stages" (after warm-up, complete) into s's table for arm: NULL or why not. */
const char *ab_saved_stages_take(struct ab_saved *s, const char *arm, const struct json *v);

/* The stage cells of saved runs judged with the run as the unit. */
struct ab_stage_runs;
/* Text to out; NULL when no run has stages (nothing said) or out of memory. */
struct ab_stage_runs *ab_stage_runs_judge(FILE *out, const struct ab_saved *a, int na, const struct ab_saved *b,
					  int nb, const char *arm, uint64_t seed, double alpha, double min_effect);
/* ,"stage_comparisons":[...],"stage_verdicts":[...] (nothing when sr is NULL) */
void ab_stage_runs_json(FILE *f, const struct ab_stage_runs *sr);
void ab_stage_runs_free(struct ab_stage_runs *sr);

#endif
