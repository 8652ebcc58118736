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

#include "halt_poll/halt_poll.h"
#include "vmm/log.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

uint64_t hp_module_param(const char *name, uint64_t dflt)
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

int hp_ceiling_set(struct hp_run *r, uint64_t ns)
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

uint64_t hp_ceiling_get(struct hp_run *r)
{
	pthread_mutex_lock(&r->lock);
	uint64_t ns = r->ceiling_set ? r->ceiling_ns : hp_module_param("halt_poll_ns", 0);

	pthread_mutex_unlock(&r->lock);
	return ns;
}

int hp_run_open(struct hp_run *r, struct vm *vm)
{
	char name[32];

	memset(r, 0, sizeof(*r));
	r->vm = vm;
	r->set = (struct hp_set){ 0 };
	r->have_start = false;
	pthread_mutex_init(&r->lock, NULL);
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

int hp_run_write_json(struct hp_run *r, FILE *f, const char *label)
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

/* The histograms a person reads halt polling from, per vCPU, for the whole run. */
static const char *const summary_hists[] = { "halt_wait_hist", "halt_poll_success_hist", "halt_poll_fail_hist" };

void hp_run_summary(struct hp_run *r, FILE *f, const char *json_path)
{
	struct hp_snap now;
	struct hp_delta d;

	pthread_mutex_lock(&r->lock);
	if (delta_now(r, "exit", &now, &d) < 0) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	fprintf(f, "vmm: halt polling: ceiling %llu ns (%s)\n",
		(unsigned long long)(r->ceiling_set ? r->ceiling_ns : hp_module_param("halt_poll_ns", 0)),
		r->ceiling_set ? "this VM's KVM_CAP_HALT_POLL" : "the kvm module's halt_poll_ns");
	for (int s = 0; s < r->set.nr; s++) {
		const struct hp_stats *st = &r->set.src[s].st;

		for (size_t k = 0; k < sizeof(summary_hists) / sizeof(summary_hists[0]); k++) {
			const struct hp_stat *hs = hp_stats_find(st, summary_hists[k]);
			const uint64_t *b = hs ? hp_delta_values(&d, s, hs) : NULL;
			char title[96];

			if (!b || !hp_hist_total(hs, b))
				continue;
			snprintf(title, sizeof(title), "vmm: %s %s", r->set.src[s].name, summary_hists[k]);
			hp_render_hist(f, title, hs, b, 40);
		}
	}
	if (json_path) {
		FILE *j = fopen(json_path, "w");

		if (!j || hp_write_json(j, &r->set, &d) < 0 || fclose(j) != 0)
			pr_err("--stats %s: cannot write it", json_path);
		else
			fprintf(f, "vmm: stats from start to exit written to %s\n", json_path);
	}
	hp_delta_free(&d);
	hp_snap_free(&now);
	pthread_mutex_unlock(&r->lock);
}

void hp_run_close(struct hp_run *r)
{
	if (r->have_start)
		hp_snap_free(&r->start);
	hp_set_free(&r->set);
	r->have_start = false;
}
