/* SPDX-License-Identifier: MIT */
/*
 * Halt polling and its measurement.
 *   kvm_stats.c  the KVM binary stats reader (KVM_GET_STATS_FD): the file is parsed once (header,
 *                id, descriptors); later reads fetch the whole data block with one pread. Every
 *                offset and size from the file is checked before use.
 *   snapshot.c   snapshots of a set of sources (the VM, each vCPU), type-aware deltas between
 *                two, and their two views: a text report and JSON (the same numbers).
 * The A/B experiment engine (`vmm ab`: schedule, epochs, statistics, saved runs) sits above vmm in
 * ab/.
 */
#ifndef VMM_HALT_POLL_H
#define VMM_HALT_POLL_H

#include <linux/kvm.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio.h>

struct hp_stat {
	char name[64];
	uint32_t flags;	 /* KVM_STATS_TYPE_* | KVM_STATS_UNIT_* | KVM_STATS_BASE_* */
	int16_t exponent;
	uint16_t size;	 /* number of u64 values (buckets for histograms) */
	uint32_t offset; /* in u64 units into the data block, after validation */
	uint32_t bucket_size;
};

struct hp_stats {
	int fd;
	char id[64];
	struct hp_stat *stat;
	int nr;
	uint64_t data_offset; /* file offset of the data block */
	uint64_t *data;
	size_t data_words;
};

/* Parses the stats file behind fd (takes ownership of fd). */
int hp_stats_open(struct hp_stats *st, int fd);
void hp_stats_close(struct hp_stats *st);
/* Re-reads the data block (one pread). */
int hp_stats_read(struct hp_stats *st);
const struct hp_stat *hp_stats_find(const struct hp_stats *st, const char *name);
/* Value i of a stat from the last read; 0 for an index outside the stat. */
uint64_t hp_stats_value(const struct hp_stats *st, const struct hp_stat *s, unsigned int i);
/* Convenience: value 0 of a named stat, or -ENOENT when the kernel has no such stat. */
int hp_stats_get(const struct hp_stats *st, const char *name, uint64_t *val);
/* The stat's values from the last read (s->size of them); s must come from st. */
const uint64_t *hp_stats_values(const struct hp_stats *st, const struct hp_stat *s);
const char *hp_stat_type_name(uint32_t flags);
const char *hp_stat_unit_name(uint32_t flags);
bool hp_stat_is_hist(const struct hp_stat *s);
unsigned int hp_stat_base(const struct hp_stat *s); /* 10 or 2 */
/* base^exponent: a raw value times this is in the unit's base (seconds, bytes, cycles), e.g.
 * 1e-9 for the *_ns stats (SECONDS, POW10, exponent -9). */
double hp_stat_scale(const struct hp_stat *s);
double hp_stat_to_base_units(const struct hp_stat *s, double raw);
/*
 * Histograms, on any bucket array laid out like s (live values or a delta). Bucket i covers raw
 * values [lo, hi): linear [i*bucket_size, (i+1)*bucket_size); log2 bucket 0 = [0, 1), bucket i
 * = [2^(i-1), 2^i). The last bucket is open-ended (hi = UINT64_MAX). -EINVAL for a non-histogram
 * or i out of range.
 */
int hp_hist_bucket(const struct hp_stat *s, unsigned int i, uint64_t *lo, uint64_t *hi);
uint64_t hp_hist_total(const struct hp_stat *s, const uint64_t *buckets);
/* The bucket holding the q-quantile (0 <= q <= 1; rank q*total): a histogram says no more than
 * that, so nothing is interpolated inside it. -ENODATA for an empty histogram. */
int hp_hist_quantile_bucket(const struct hp_stat *s, const uint64_t *buckets, double q, unsigned int *i);

/* --- snapshot.c --- */

/* A stats source: the VM ("vm") or one vCPU ("vcpu0"). */
struct hp_source {
	char name[32];
	struct hp_stats st;
};

struct hp_set {
	struct hp_source *src;
	int nr;
};

/* Adds a source reading the stats fd (taken over, closed on failure too). */
int hp_set_add(struct hp_set *set, const char *name, int fd);
void hp_set_free(struct hp_set *set);

/* Every source's data block at one moment (CLOCK_MONOTONIC), labelled ("boot-end", "exit"). */
struct hp_snap {
	char label[48];
	uint64_t t_ns;
	int nr;
	uint64_t **data; /* [source][word], laid out as that source's data block */
};

/* Re-reads every source (one pread per fd) and copies its data block. */
int hp_snap_take(struct hp_snap *sn, struct hp_set *set, const char *label);
void hp_snap_free(struct hp_snap *sn);

/*
 * What happened between two snapshots of the same set, per stat by type: cumulative and
 * histograms b - a (a value going backwards is refused: the snapshots cannot be of the same fd);
 * instant the value at b; peak the value at b, which is the peak since the fd was opened (KVM
 * cannot reset it, so a phase's own peak is not available).
 */
struct hp_delta {
	char from[48], to[48];
	uint64_t dt_ns;
	int nr;
	uint64_t **data; /* [source][word] */
};
int hp_delta_compute(struct hp_delta *d, const struct hp_set *set, const struct hp_snap *a, const struct hp_snap *b);
void hp_delta_free(struct hp_delta *d);
const uint64_t *hp_delta_values(const struct hp_delta *d, int src, const struct hp_stat *s);

/* A value in the stat's unit for people: SECONDS as ns/us/ms/s, others as the scaled number. */
void hp_fmt_value(char *buf, size_t len, const struct hp_stat *s, double raw);
/* One row per source, one column per named stat ("-" where a source lacks it; a histogram
 * shows its sample count). */
void hp_render_table(FILE *f, const struct hp_set *set, const struct hp_delta *d, const char *const *names, int n);
/* Bucket i's range in human units: "[256ns, 512ns)", "< 1ns" (from 0), ">= 1.074s" (the open last). */
void hp_fmt_bucket(char *buf, size_t len, const struct hp_stat *s, unsigned int i);
/* "TITLE NAME: N samples, p50 BUCKET, p90 BUCKET, p99 BUCKET" on one line; with width > 0 (<= 80)
 * also the non-empty bucket range, one line per bucket with its count and a bar of at most width. */
void hp_render_hist(FILE *f, const char *title, const struct hp_stat *s, const uint64_t *buckets, int width);
/* The delta as one JSON object: {from, to, dt_ns, sources: [{name, id, stats: [{name, type,
 * unit, base, exponent, semantics, value | values | bucket_size + buckets}]}]}. */
int hp_write_json(FILE *f, const struct hp_set *set, const struct hp_delta *d);
/* The delta's scalar stats that are not 0, per source, as {"from", "to", "dt_ns", "values":
 * {"vcpu0": {"exits": N, ...}, ...}}: the phases and intervals of a run, small enough to keep many. */
void hp_write_json_compact(FILE *f, const struct hp_set *set, const struct hp_delta *d);

/* run_stats.c: a running VM's stats (VM + every vCPU) since the guest started, and its halt-poll
 * ceiling (KVM_CAP_HALT_POLL). The lock serialises the control socket's thread with the exit path. */
struct arch_ops;
struct vm;

struct hp_run {
	struct vm *vm;
	const struct arch_ops *arch; /* arch_native() (hp_run_open): the vCPUs' vLPIs, if it has any */
	pthread_mutex_t lock;
	struct hp_set set;
	struct hp_snap start;
	bool have_start;
	bool ceiling_set;
	uint64_t ceiling_ns;
	/* the guest's init started: boot before it, the run after (reports show the run alone) */
	struct hp_snap boot_end;
	bool have_boot_end;
	atomic_bool boot_end_due; /* marked by whichever thread saw it, taken by vm_run's main thread */
	/* --stats-interval: a snapshot per interval, each interval's delta kept as compact JSON */
	unsigned int interval_ms;
	pthread_t ticker;
	bool ticking, stop;
	pthread_cond_t cond;
	struct hp_snap last;
	bool have_last;
	char *intervals;
	size_t intervals_len;
	FILE *intervals_f;
	unsigned int nr_intervals;
	/* the window while passthrough vectors were live with vLPIs mapped: what the governor
	 * predicted then (per vCPU vLPIs, the host's settings) and what KVM counted over it */
	struct hp_snap win_from, win_to;
	bool have_win_from, have_win_to;
	int *win_vlpis;
	struct hp_host *win_host;
	uint64_t win_ceiling;
	/* the vmm section's own counters after "exits" (the interrupt table), set by the board */
	void (*vmm_json)(void *opaque, FILE *f);
	void *vmm_opaque;
};

uint64_t hp_module_param(const char *name, uint64_t dflt);
int hp_run_open(struct hp_run *r, struct vm *vm); /* after every vCPU exists */
int hp_run_start(struct hp_run *r);		   /* the guest starts: the reference snapshot */
/* The guest's init started (its console said so): the boot phase ends, once; later calls do nothing.
 * It reads every stats fd: only on a thread whose allowlist has pread64 (vm_run's main thread). */
void hp_run_boot_end(struct hp_run *r);
/* The console's and the probe's hook (opaque: the hp_run), safe on any thread, the console
 * thread's included: records the boot's end and wakes vm_run's main thread (vm_defer)... */
void hp_run_mark_boot_end(void *run);
/* ...which takes the snapshot here (the VM's deferred work, opaque: the hp_run). */
void hp_run_deferred(void *run);
/* A snapshot every ms milliseconds until hp_run_summary (after hp_run_start). */
int hp_run_intervals(struct hp_run *r, unsigned int ms);
int hp_ceiling_set(struct hp_run *r, uint64_t ns);
uint64_t hp_ceiling_get(struct hp_run *r);
/* The delta from the start to now as JSON. */
int hp_run_write_json(struct hp_run *r, FILE *f, const char *label);
/* arm64: what governs halting per vCPU (hp_governor_report), for this VM; JSON: "null" elsewhere. */
void hp_run_governor(struct hp_run *r, FILE *f, bool json);
/* A passthrough device's vectors are live now: if vgic-state shows vLPIs on some vCPU (arm64), the
 * window opens (once) with the governor's prediction; _end closes it when they go. The summary and
 * --stats then show the prediction against the WFI exits KVM counted in the window. */
void hp_run_vlpi_window_start(struct hp_run *r);
void hp_run_vlpi_window_end(struct hp_run *r);
/* At exit: the ceiling and the per-vCPU halt histograms, one line each (full: with their buckets'
 * bars); with json_path, the delta as JSON. */
void hp_run_summary(struct hp_run *r, FILE *f, const char *json_path, bool full);
void hp_run_close(struct hp_run *r);

/* governor.c: what governs halting on arm64, per vCPU (no KVM needed: tests feed it text). */
enum hp_trap { HP_TRAP_DEFAULT, HP_TRAP_TRAP, HP_TRAP_NOTRAP, HP_TRAP_OTHER };
struct hp_host {
	bool have_params;			  /* /sys/module/kvm/parameters readable */
	uint64_t poll_ns, grow, grow_start, shrink; /* the kvm module's halt_poll_ns* */
	enum hp_trap wfi, wfe;			  /* kvm-arm.wfi_trap_policy / wfe_trap_policy */
	int vgic_v4;				  /* kvm-arm.vgic_v4_enable: -1 not given (off) */
};
enum hp_halting {
	HP_HALT_POLLS,	       /* WFI traps, KVM polls up to the ceiling */
	HP_HALT_NO_POLL,       /* WFI traps, the ceiling is 0 */
	HP_HALT_NEVER,	       /* WFI never traps: no halts, no polling */
	HP_HALT_NOT_WHEN_ALONE, /* vLPIs and the default policy: no halts while the thread is alone */
};
void hp_host_parse_cmdline(struct hp_host *h, const char *cmdline);
void hp_host_read(struct hp_host *h); /* /proc/cmdline and /sys/module/kvm/parameters */
const char *hp_trap_name(enum hp_trap t);
const char *hp_halting_name(enum hp_halting v);
/* vlpis: the vCPU's mapped vLPIs, -1 unknown. why gets the sentence a person reads. */
enum hp_halting hp_halting_of(const struct hp_host *h, uint64_t ceiling_ns, int vlpis, char *why, size_t n);
/* What a vCPU really did while its vLPIs were mapped, against what the settings predict: KVM's
 * wfi_exit_stat over that window (win_s seconds) and over the rest of the run (out_s). */
enum hp_observed {
	HP_OBS_WFI_TRAPPED,	/* WFIs reached KVM: it halted (and polled, ceiling permitting) */
	HP_OBS_WFI_RARE,	/* at a quarter of the rate outside the window or less: mostly not trapped */
	HP_OBS_NO_WFI_EXITS,	/* none did: WFI ran on the CPU, or the guest never idled */
};
const char *hp_observed_name(enum hp_observed o); /* "wfi-trapped", "wfi-rarely-trapped", "no-wfi-exits" */
/* The observation and a sentence that reconciles it with the prediction (why). */
enum hp_observed hp_observed_of(enum hp_halting predicted, int vlpis, uint64_t wfi, double win_s, uint64_t out_wfi,
				double out_s, char *why, size_t n);
/* One line for the host, one per vCPU; or one JSON object. */
void hp_governor_report(FILE *f, const struct hp_host *h, uint64_t ceiling_ns, const int *vlpis, int nr_vcpus,
			bool json);

#endif
