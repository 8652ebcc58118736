// SPDX-License-Identifier: MIT
/*
 * A running VM's stats and halt-polling knob: the VM's and every vCPU's binary stats fd in one set,
 * a snapshot when the guest starts, and what happened since then on request (the control socket),
 * at exit (the summary's histograms, --stats FILE.json). The halt-poll ceiling is the VM's
 * KVM_CAP_HALT_POLL, settable at creation and at any time after.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <time.h>

#include "core/hot.h"
#include "halt_poll/halt_poll.h"
#include "core/json.h"
#include "core/arch.h"
#include "core/log.h"
#include "core/vcpu.h"
#include "core/vm.h"

VMM_HOT_VF uint64_t hp_module_param(const char *name, uint64_t dflt)
{
	char path[128];
	unsigned long long v;

	snprintf(path, sizeof(path), "/sys/module/kvm/parameters/%s", name);
	FILE *f = fopen(path, "r");

	if (!f)
		return dflt;
	if (fscanf(f, "%llu", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

VMM_HOT_VF int hp_ceiling_set(struct hp_run *r, uint64_t ns)
{
	struct kvm_enable_cap ec = { .cap = KVM_CAP_HALT_POLL, .args = { ns } };

	if (ioctl(r->vm->fd, KVM_ENABLE_CAP, &ec) < 0) {
		int e = errno;

		pr_err("halt polling: KVM_ENABLE_CAP(KVM_CAP_HALT_POLL, %llu) failed: %s%s",
		       (unsigned long long)ns, strerror(e),
		       e == EINVAL ? " (this kernel has no per-VM halt polling: Linux >= 5.16)" : "");
		return -e;
	}
	pthread_mutex_lock(&r->lock);
	r->ceiling_ns = ns;
	r->ceiling_set = true;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

VMM_HOT_VF uint64_t hp_ceiling_get(struct hp_run *r)
{
	pthread_mutex_lock(&r->lock);
	uint64_t ns = r->ceiling_set ? r->ceiling_ns : hp_module_param("halt_poll_ns", 0);

	pthread_mutex_unlock(&r->lock);
	return ns;
}

VMM_HOT_VF int hp_run_open(struct hp_run *r, struct vm *vm)
{
	char name[32];

	memset(r, 0, sizeof(*r));
	r->vm = vm;
	r->arch = arch_native();
	r->set = (struct hp_set){ 0 };
	r->have_start = false;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	int fd = ioctl(vm->fd, KVM_GET_STATS_FD, NULL);

	if (fd >= 0 && hp_set_add(&r->set, "vm", fd) < 0)
		return -EINVAL;
	for (int i = 0; i < vm->nr_vcpus; i++) {
		snprintf(name, sizeof(name), "vcpu%d", vm->vcpus[i]->id);
		fd = ioctl(vm->vcpus[i]->fd, KVM_GET_STATS_FD, NULL);
		if (fd < 0 || hp_set_add(&r->set, name, fd) < 0) {
			pr_warn("stats: no binary stats for vCPU %d (KVM_GET_STATS_FD needs Linux >= 5.14)", i);
			return -ENOTSUP;
		}
	}
	return 0;
}

int hp_run_start(struct hp_run *r)
{
	pthread_mutex_lock(&r->lock);
	int e = hp_snap_take(&r->start, &r->set, "start");

	r->have_start = e == 0;
	pthread_mutex_unlock(&r->lock);
	return e;
}

VMM_HOT void hp_run_boot_end(struct hp_run *r)
{
	pthread_mutex_lock(&r->lock);
	if (r->have_start && !r->have_boot_end)
		r->have_boot_end = hp_snap_take(&r->boot_end, &r->set, "boot-end") == 0;
	pthread_mutex_unlock(&r->lock);
}

VMM_HOT void hp_run_mark_boot_end(void *run)
{
	struct hp_run *r = run;

	if (!atomic_exchange(&r->boot_end_due, true))
		vm_defer(r->vm);
}

VMM_HOT_IDLE void hp_run_deferred(void *run)
{
	struct hp_run *r = run;

	if (atomic_exchange(&r->boot_end_due, false))
		hp_run_boot_end(r);
}

#define HP_MAX_INTERVALS 100000 /* ~100 bytes each: a day at 1 s stays under 10 MiB */

/* lock held: the interval since the last snapshot, appended to the intervals' JSON. */
static void interval_tick(struct hp_run *r)
{
	struct hp_snap now;
	struct hp_delta d;

	if (hp_snap_take(&now, &r->set, "interval") < 0)
		return;
	if (r->have_last && r->nr_intervals < HP_MAX_INTERVALS &&
	    hp_delta_compute(&d, &r->set, &r->last, &now) == 0) {
		fputs(r->nr_intervals++ ? "," : "", r->intervals_f);
		hp_write_json_compact(r->intervals_f, &r->set, &d);
		hp_delta_free(&d);
	}
	if (r->have_last)
		hp_snap_free(&r->last);
	r->last = now;
	r->have_last = true;
}

static void *ticker(void *arg)
{
	struct hp_run *r = arg;
	struct timespec next;

	/* started before vm_run's threads: it takes main's allowlist (stats preads, its file) */
	if (sandbox_enter(r->vm->sandbox, SANDBOX_MAIN) < 0) {
		vm_request_stop(r->vm, VM_EXIT_ERROR);
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&r->lock);
	interval_tick(r);
	while (!r->stop) {
		next.tv_sec += r->interval_ms / 1000;
		next.tv_nsec += (long)(r->interval_ms % 1000) * 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000;
		}
		while (!r->stop && pthread_cond_timedwait(&r->cond, &r->lock, &next) == 0)
			;
		if (!r->stop)
			interval_tick(r);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

VMM_HOT int hp_run_intervals(struct hp_run *r, unsigned int ms)
{
	pthread_condattr_t ca;

	/* the ticker waits on CLOCK_MONOTONIC: a clock change never bunches or stalls intervals */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&r->cond);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	r->intervals_f = open_memstream(&r->intervals, &r->intervals_len);
	r->interval_ms = ms;
	if (!r->intervals_f || pthread_create(&r->ticker, NULL, ticker, r) != 0) {
		pr_err("--stats-interval: cannot start the snapshot thread");
		return -ENOMEM;
	}
	r->ticking = true;
	return 0;
}

static void intervals_stop(struct hp_run *r)
{
	if (!r->ticking)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->ticker, NULL);
	r->ticking = false;
}

/* lock held: the delta from the start to now. */
static int delta_now(struct hp_run *r, const char *label, struct hp_snap *now, struct hp_delta *d)
{
	if (!r->have_start)
		return -ENODATA;
	int e = hp_snap_take(now, &r->set, label);

	if (e < 0)
		return e;
	e = hp_delta_compute(d, &r->set, &r->start, now);
	if (e < 0)
		hp_snap_free(now);
	return e;
}

VMM_HOT int hp_run_write_json(struct hp_run *r, FILE *f, const char *label)
{
	struct hp_snap now;
	struct hp_delta d;

	pthread_mutex_lock(&r->lock);
	int e = delta_now(r, label, &now, &d);

	if (e == 0) {
		e = hp_write_json(f, &r->set, &d);
		hp_delta_free(&d);
		hp_snap_free(&now);
	}
	pthread_mutex_unlock(&r->lock);
	return e;
}

/* lock held: the ceiling in force */
static uint64_t ceiling_locked(struct hp_run *r)
{
	return r->ceiling_set ? r->ceiling_ns : hp_module_param("halt_poll_ns", 0);
}

/* Per vCPU, the vLPIs the architecture shows now (-1s when unreadable); NULL when it has none
 * (r->arch's vcpu_vlpis) or out of memory. */
VMM_HOT_VF static int *vcpu_vlpis(struct hp_run *r)
{
	int n = r->vm->nr_vcpus, *vlpis;

	if (!r->arch || !r->arch->vcpu_vlpis || !(vlpis = calloc(n ? n : 1, sizeof(int))))
		return NULL;
	r->arch->vcpu_vlpis(r->vm, vlpis, n);
	return vlpis;
}

/* What governs halting for this VM's vCPUs, from the host's settings and its vLPIs ("null" in
 * JSON where the architecture has none: x86 halts on HLT, always intercepted, and the ceiling
 * alone governs polling). */
VMM_HOT_VF static void governor(struct hp_run *r, FILE *f, bool json, uint64_t ceiling)
{
	struct hp_host h;
	int *vlpis = vcpu_vlpis(r);

	if (!vlpis) {
		if (json)
			fputs("null", f);
		return;
	}
	hp_host_read(&h);
	hp_governor_report(f, &h, ceiling, vlpis, r->vm->nr_vcpus, json);
	free(vlpis);
}

VMM_HOT void hp_run_governor(struct hp_run *r, FILE *f, bool json)
{
	governor(r, f, json, hp_ceiling_get(r));
}

VMM_HOT void hp_run_vlpi_window_start(struct hp_run *r)
{
	if (!r->arch || !r->arch->vcpu_vlpis)
		return; /* no vLPIs on this architecture */
	pthread_mutex_lock(&r->lock);
	if (!r->have_start || r->have_win_from)
		goto out;
	int *vlpis = vcpu_vlpis(r), any = 0;

	for (int i = 0; vlpis && i < r->vm->nr_vcpus; i++)
		any |= vlpis[i] > 0;
	r->win_host = any ? calloc(1, sizeof(*r->win_host)) : NULL;
	if (!r->win_host || hp_snap_take(&r->win_from, &r->set, "vlpis-mapped") < 0) {
		free(vlpis); /* no vLPIs (yet): a later call may open it */
		free(r->win_host);
		r->win_host = NULL;
		goto out;
	}
	hp_host_read(r->win_host);
	r->win_vlpis = vlpis;
	r->win_ceiling = ceiling_locked(r);
	r->have_win_from = true;
out:
	pthread_mutex_unlock(&r->lock);
}

VMM_HOT void hp_run_vlpi_window_end(struct hp_run *r)
{
	pthread_mutex_lock(&r->lock);
	if (r->have_win_from && !r->have_win_to)
		r->have_win_to = hp_snap_take(&r->win_to, &r->set, "vlpis-gone") == 0;
	pthread_mutex_unlock(&r->lock);
}

/* lock held: stat of vCPU i's source in a delta, 0 when the kernel has no such stat. */
static uint64_t vcpu_stat(struct hp_run *r, const struct hp_delta *d, int i, const char *stat)
{
	char name[32];

	snprintf(name, sizeof(name), "vcpu%d", r->vm->vcpus[i]->id);
	for (int s = 0; s < r->set.nr; s++) {
		const struct hp_stat *hs = strcmp(r->set.src[s].name, name) ? NULL : hp_stats_find(&r->set.src[s].st, stat);

		if (hs && !hp_stat_is_hist(hs))
			return hp_delta_values(d, s, hs)[0];
	}
	return 0;
}

/* lock held: the vLPI window, prediction against what KVM counted, as JSON ("null": none) or
 * text lines; exit: the snapshot at exit, for a window still open then. */
VMM_HOT_VF static void window_report(struct hp_run *r, FILE *f, bool json, const struct hp_snap *exit)
{
	struct hp_delta d, all;
	char why[256], obs[400];

	if (!r->have_win_from || hp_delta_compute(&d, &r->set, &r->win_from, r->have_win_to ? &r->win_to : exit) < 0) {
		if (json)
			fputs("null", f);
		return;
	}
	/* the whole run from the guest's start: what is outside the window is its rate to compare */
	if (hp_delta_compute(&all, &r->set, &r->start, exit) < 0) {
		hp_delta_free(&d);
		if (json)
			fputs("null", f);
		return;
	}
	double win_s = d.dt_ns / 1e9, out_s = all.dt_ns > d.dt_ns ? (all.dt_ns - d.dt_ns) / 1e9 : 0;
	if (json)
		fprintf(f, "{\"from\":\"%s\",\"to\":\"%s\",\"dt_ns\":%llu,\"vcpus\":[", d.from, d.to,
			(unsigned long long)d.dt_ns);
	else
		fprintf(f, "vmm: while vLPIs were mapped (%.3f s, %s to %s), what governs halting against what KVM "
			"counted:\n", d.dt_ns / 1e9, d.from, d.to);
	for (int i = 0; i < r->vm->nr_vcpus; i++) {
		int vl = r->win_vlpis[i];
		enum hp_halting p = hp_halting_of(r->win_host, r->win_ceiling, vl, why, sizeof(why));
		uint64_t wfi = vcpu_stat(r, &d, i, "wfi_exit_stat"), wall = vcpu_stat(r, &all, i, "wfi_exit_stat");
		uint64_t out = wall > wfi ? wall - wfi : 0;
		enum hp_observed o = hp_observed_of(p, vl, wfi, win_s, out, out_s, obs, sizeof(obs));

		if (json) {
			fprintf(f, "%s{\"vcpu\":%d,\"vlpis\":%d,\"halting\":\"%s\",\"why\":", i ? "," : "", i, vl,
				hp_halting_name(p));
			json_write_string(f, why);
			fprintf(f, ",\"window_s\":%.3f,\"outside_s\":%.3f,\"wfi_exits_outside\":%llu,\"wfi_exits\":%llu,"
				   "\"halt_wakeup\":%llu,\"halt_successful_poll\":%llu,\"observed\":\"%s\",\"observed_why\":",
				win_s, out_s, (unsigned long long)out, (unsigned long long)wfi,
				(unsigned long long)vcpu_stat(r, &d, i, "halt_wakeup"),
				(unsigned long long)vcpu_stat(r, &d, i, "halt_successful_poll"), hp_observed_name(o));
			json_write_string(f, obs);
			fputc('}', f);
		} else {
			fprintf(f, "vmm: vcpu%d %s predicted (%d vLPIs), %s: %s\n", i, hp_halting_name(p), vl,
				hp_observed_name(o), obs);
		}
	}
	if (json)
		fputs("]}", f);
	hp_delta_free(&d);
	hp_delta_free(&all);
}

/* The histograms a person reads halt polling from, per vCPU, for the whole run. */
static const char *const summary_hists[] = { "halt_wait_hist", "halt_poll_success_hist", "halt_poll_fail_hist" };

/* The --stats JSON: the run phase in full, then the boot phase, the intervals and vmm's own exit
 * counts in compact form (so a reader summing a stat over the full form counts the run once). */
static int write_stats_file(struct hp_run *r, const char *path, const struct hp_delta *run, const struct hp_snap *exit)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct hp_delta boot;

	if (!m)
		return -ENOMEM;
	hp_write_json(m, &r->set, run);
	fclose(m);
	/* reopen the object: drop its closing brace (and the newline) */
	while (len && buf[len - 1] == '\n')
		len--;
	if (len && buf[len - 1] == '}')
		len--;
	FILE *j = fopen(path, "w");

	if (!j) {
		free(buf);
		return -errno;
	}
	fwrite(buf, 1, len, j);
	free(buf);
	if (r->have_boot_end && hp_delta_compute(&boot, &r->set, &r->start, &r->boot_end) == 0) {
		fputs(",\"boot\":", j);
		hp_write_json_compact(j, &r->set, &boot);
		hp_delta_free(&boot);
	}
	if (r->intervals_f) {
		fflush(r->intervals_f);
		fprintf(j, ",\"interval_ms\":%u,\"intervals\":[%.*s]", r->interval_ms, (int)r->intervals_len,
			r->intervals ? r->intervals : "");
	}
	fputs(",\"governor\":", j);
	governor(r, j, true, ceiling_locked(r));
	fputs(",\"vlpi_window\":", j);
	window_report(r, j, true, exit);
	fputs(",\"vmm\":{\"exits\":{", j);
	for (int i = 0; i < r->vm->nr_vcpus; i++) {
		const struct vcpu_exits *e = &r->vm->vcpus[i]->exits;

		fprintf(j, "%s\"vcpu%d\":{\"mmio\":%llu,\"mmio_unclaimed\":%llu,\"pio\":%llu,\"intr\":%llu,"
			   "\"system_event\":%llu,\"other\":%llu}", i ? "," : "", r->vm->vcpus[i]->id,
			(unsigned long long)e->mmio, (unsigned long long)e->mmio_unclaimed, (unsigned long long)e->pio,
			(unsigned long long)e->intr, (unsigned long long)e->system_event, (unsigned long long)e->other);
	}
	fputc('}', j);
	if (r->vmm_json)
		r->vmm_json(r->vmm_opaque, j);
	fputs("}}\n", j);
	return fclose(j) != 0 ? -EIO : 0;
}

VMM_HOT void hp_run_summary(struct hp_run *r, FILE *f, const char *json_path, bool full)
{
	struct hp_snap now;
	struct hp_delta d;

	intervals_stop(r);
	pthread_mutex_lock(&r->lock);
	if (!r->have_start) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	/* the run phase: from the guest's init when its console said so, else from the start */
	const struct hp_snap *from = r->have_boot_end ? &r->boot_end : &r->start;

	if (hp_snap_take(&now, &r->set, "exit") < 0) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	if (hp_delta_compute(&d, &r->set, from, &now) < 0) {
		hp_snap_free(&now);
		pthread_mutex_unlock(&r->lock);
		return;
	}
	fprintf(f, "vmm: halt polling: ceiling %llu ns (%s)\n",
		(unsigned long long)(r->ceiling_set ? r->ceiling_ns : hp_module_param("halt_poll_ns", 0)),
		r->ceiling_set ? "this VM's KVM_CAP_HALT_POLL" : "the kvm module's halt_poll_ns");
	governor(r, f, false, ceiling_locked(r));
	window_report(r, f, false, &now);
	if (r->have_boot_end)
		fprintf(f, "vmm: stats of the run phase: %.3f s from the guest's init to exit (boot took %.3f s)\n",
			(now.t_ns - r->boot_end.t_ns) / 1e9, (r->boot_end.t_ns - r->start.t_ns) / 1e9);
	else
		fprintf(f, "vmm: stats from the start to exit (the guest never marked its boot's end)\n");
	for (int s = 0; s < r->set.nr; s++) {
		const struct hp_stats *st = &r->set.src[s].st;

		for (size_t k = 0; k < sizeof(summary_hists) / sizeof(summary_hists[0]); k++) {
			const struct hp_stat *hs = hp_stats_find(st, summary_hists[k]);
			const uint64_t *b = hs ? hp_delta_values(&d, s, hs) : NULL;
			char title[96];

			if (!b || !hp_hist_total(hs, b))
				continue;
			snprintf(title, sizeof(title), "vmm: %s", r->set.src[s].name);
			hp_render_hist(f, title, hs, b, full ? 40 : 0);
		}
	}
	if (json_path) {
		if (write_stats_file(r, json_path, &d, &now) < 0)
			pr_err("--stats %s: cannot write it", json_path);
		else
			fprintf(f, "vmm: stats written to %s\n", json_path);
	}
	hp_delta_free(&d);
	hp_snap_free(&now);
	pthread_mutex_unlock(&r->lock);
}

void hp_run_close(struct hp_run *r)
{
	intervals_stop(r);
	if (r->have_start)
		hp_snap_free(&r->start);
	if (r->have_boot_end)
		hp_snap_free(&r->boot_end);
	if (r->have_last)
		hp_snap_free(&r->last);
	if (r->have_win_from)
		hp_snap_free(&r->win_from);
	if (r->have_win_to)
		hp_snap_free(&r->win_to);
	free(r->win_vlpis);
	free(r->win_host);
	r->win_vlpis = NULL;
	r->win_host = NULL;
	r->have_win_from = r->have_win_to = false;
	if (r->intervals_f)
		fclose(r->intervals_f);
	free(r->intervals);
	r->intervals_f = NULL;
	r->intervals = NULL;
	r->have_boot_end = r->have_last = false;
	hp_set_free(&r->set);
	r->have_start = false;
}
