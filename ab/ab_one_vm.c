// SPDX-License-Identifier: MIT
/*
 * `vmm ab` in one VM, for arms that differ only in knobs that change at run time (the halt-poll
 * ceiling): vmm boots once with a control socket and the arm is switched per epoch through it (the
 * same request `vmm ctl set` sends), KVM's stats and the vCPU threads' CPU time taken at every
 * switch; the probe's samples are tagged to epochs by their timestamps, the guest's clock placed on
 * the host's by the probe's CLOCK frame (on its port) or "vmm-probe: clock" line (on the console).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest/probe_decode.h"
#include "ab/ab.h"
#include "vmm/ctl.h"
#include "core/log.h"

/* --- one VM, the arms switched through its control socket --- */

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* What the counters read at one moment: KVM's halt polls (stats) and the vCPU threads' CPU time
 * (get), summed over the vCPUs. */
struct ab_counters {
	long long ok, tried, cpu_ns;
};

static int read_counters(const char *ctl, struct ab_counters *c, char *buf)
{
	int r = ctl_request(ctl, "{\"cmd\":\"stats\"}", buf, AB_OUT_MAX);

	if (r == 0) {
		c->ok = ab_json_sum_stat(buf, "halt_successful_poll");
		c->tried = ab_json_sum_stat(buf, "halt_attempted_poll");
		r = ctl_request(ctl, "{\"cmd\":\"get\"}", buf, AB_OUT_MAX);
	}
	if (r == 0)
		c->cpu_ns = ab_json_sum_array(buf, "vcpu_cpu_ns");
	return r < 0 ? r : c->ok < 0 || c->cpu_ns < 0 ? -ENODATA : 0;
}

/* Switches the VM to arm's ceiling: the request `vmm ctl PATH set halt-poll-ns N` sends. */
static int set_knob(const struct ab *ab, const char *ctl, int arm, const char *req, const char *what)
{
	char reply[512];
	int r = ctl_request(ctl, req, reply, sizeof(reply));

	if (r == 0 && !strstr(reply, "\"ok\":true")) {
		pr_err("vmm ab: the VM refused arm %s's %s: %s", ab->arm[arm].name, what, reply);
		r = -EINVAL;
	}
	return r;
}

/* The arm's knobs through the control socket: the same requests `vmm ctl set` sends. */
static int switch_arm(struct ab *ab, const char *ctl, int arm)
{
	const struct ab_knobs *k = &ab->arm[arm].knobs;
	char req[96];
	int r = 0;

	if (k->has_halt_poll_ns) {
		snprintf(req, sizeof(req), "{\"cmd\":\"set\",\"halt_poll_ns\":%llu}",
			 (unsigned long long)k->halt_poll_ns);
		r = set_knob(ab, ctl, arm, req, "ceiling");
	}
	if (r == 0 && k->poll_control >= 0) {
		snprintf(req, sizeof(req), "{\"cmd\":\"set\",\"poll_control\":%d,\"vcpu\":\"all\"}",
			 k->poll_control);
		r = set_knob(ab, ctl, arm, req, "poll-control");
	}
	return r;
}

/* Every sample of the decoded probe into the epoch its host time falls in (none near a switch). */
static void tag_samples(struct ab *ab, const struct probe_decoder *d, int64_t offset, uint64_t guard,
			unsigned long long *dropped)
{
	for (size_t s = 0; s < d->nseries; s++) {
		const struct probe_series *se = &d->series[s];
		unsigned w = se->workload;

		if (w > PROBE_W_MAX)
			continue;
		for (uint32_t i = 0; i < se->n; i++) {
			int e = ab_epoch_of_guest(ab, se->t_ns[i], offset, guard);
			struct ab_run *r = e >= 0 ? &ab->run[e] : NULL;

			if (!r) {
				(*dropped)++;
				continue;
			}
			double *x = realloc(r->x[w], (r->n[w] + 1) * sizeof(double));

			if (!x)
				return;
			x[r->n[w]++] = se->v_ns[i] / 1e3;
			r->x[w] = x;
		}
	}
}

/* Stops the child vmm (SIGTERM: it stops its guest and exits; SIGKILL after 5 s): its status. */
static int stop_vmm(pid_t pid)
{
	int st = 0;

	kill(pid, SIGTERM);
	for (int i = 0; i < 50; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(100 * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return st;
}

/* At least the scheduled epochs, and more blocks for as long as the guest's probe runs (it says
 * "vmm-probe: done"), for a bounded time (see extend_ns): a slow guest's samples still fall into
 * epochs of every arm. Once no more epochs are due, the guest has --probe-timeout seconds of
 * silence to finish and power off; then the VM is stopped and -ETIMEDOUT returned with what was
 * collected in ab. */
/* One run of the VM: what the parts below share. */
struct one_vm {
	struct ab *ab;
	int *order, total;
	struct ab_rng *rng;
	char ctl[96];
	char *reply; /* the control socket's replies */
	int p[2];    /* the child's console and probe descriptors */
	pid_t pid;
	struct probe_decoder d;
	struct ab_counters prev, now;
	char line[256]; /* the console line being read */
	size_t llen;
	bool started, have_offset, failed, probe_done, timed_out;
	int64_t offset; /* host time - guest time */
	uint64_t epoch_ns, settle_ns, deadline, t_switch, t_first;
	uint64_t quiet_ns, boot_ns, last_rx, extend_ns;
};

/* The time allowed for each part of the run. */
static void set_budgets(struct one_vm *v)
{
	const struct ab *ab = v->ab;

	v->epoch_ns = ab->epoch_ms * 1000000ull;
	v->settle_ns = v->epoch_ns / 10 < 20000000 ? v->epoch_ns / 10 : 20000000;
	/* the silence allowed while nothing else is due: the boot (up to the probe's first clock) gets
	 * five times as long (five minutes by default: a nested lab boots slowly) */
	v->quiet_ns = (ab->probe_timeout_s ? ab->probe_timeout_s : 60) * 1000000000ull;
	v->last_rx = mono_ns();
	v->boot_ns = 5 * v->quiet_ns;
	/* blocks are added while the probe runs (silent until a workload ends) for at most four times
	 * the schedule or ten times the allowed silence (ten minutes by default), whichever is longer */
	v->extend_ns = 4ull * v->total * (v->epoch_ns + v->settle_ns);
	if (v->extend_ns < 10 * v->quiet_ns)
		v->extend_ns = 10 * v->quiet_ns;
}

/* Starts vmm run with the shared options, the first arm's ceiling, the control socket and the
 * probe's descriptor. */
static int spawn_vmm(struct one_vm *v)
{
	struct ab *ab = v->ab;
	char hp[24], attr[128], *argv[AB_MAX_ARGS + 10];
	int argc = 0;

	snprintf(v->ctl, sizeof(v->ctl), "%s/ctl", ab->tmpdir);
	snprintf(hp, sizeof(hp), "%llu", (unsigned long long)ab->arm[v->order[0]].knobs.halt_poll_ns);
	argv[argc++] = "vmm";
	argv[argc++] = "run";
	for (int i = 0; i < ab->nr_shared; i++)
		argv[argc++] = ab->shared[i];
	argv[argc++] = "--ctl";
	argv[argc++] = v->ctl;
	if (ab->arm[v->order[0]].knobs.has_halt_poll_ns) {
		argv[argc++] = "--halt-poll-ns";
		argv[argc++] = hp;
	}
	argv[argc++] = "--probe-out";
	argv[argc++] = AB_PROBE_FD_PATH;
	if (ab->at.on) { /* vmm run --attribute=FILE: FILE in our own directory */
		snprintf(attr, sizeof(attr), "--attribute=");
		ab_attr_path(ab, attr + strlen(attr), sizeof(attr) - strlen(attr));
		argv[argc++] = attr;
	}
	argv[argc] = NULL;
	/* the replies' buffer, one for the run: a stats reply may be large, and a fresh 16 MiB block
	 * twice an epoch was most of ASan's time in the unit tests */
	if (!(v->reply = malloc(AB_OUT_MAX)))
		return -ENOMEM;
	v->p[0] = ab_spawn_self(argv, &v->pid, &v->p[1], ab->at.on ? &ab->at.err.fd : NULL);
	if (v->p[0] < 0) {
		free(v->reply);
		return v->p[0];
	}
	return 0;
}

/* How long to wait for the child (ms), or -1 when the guest has been silent too long. */
static int wait_timeout(struct one_vm *v)
{
	uint64_t t = mono_ns();

	if (v->started && !v->failed && v->ab->nr_runs < v->total) /* the next switch is due */
		return t >= v->deadline ? 0 : (int)((v->deadline - t) / 1000000u) + 1;
	/* nothing due: the guest must finish (or reach its probe) in bounded time */
	uint64_t limit = v->last_rx + v->quiet_ns + (v->have_offset ? 0 : v->boot_ns);

	if (t >= limit)
		return -1;
	return (int)((limit - t) / 1000000u) + 1;
}

/* The guest's clock read at host time t: the smallest offset is the best, the message having been
 * read no earlier than written. */
static void clock_seen(struct one_vm *v, uint64_t t, uint64_t guest_ns)
{
	if (!v->have_offset || (int64_t)(t - guest_ns) < v->offset) {
		v->offset = (int64_t)(t - guest_ns);
		v->have_offset = true;
	}
}

/* The console's bytes: the probe's clock lines, read as they come, and its last word. */
static void console_lines(struct one_vm *v, const char *buf, ssize_t n, uint64_t t)
{
	for (ssize_t i = 0; i < n; i++) {
		uint64_t g;

		if (v->llen < sizeof(v->line))
			v->line[v->llen++] = buf[i];
		if (buf[i] != '\n')
			continue;
		if (ab_parse_clock(v->line, v->llen, &g))
			clock_seen(v, t, g);
		v->probe_done |= memmem(v->line, v->llen, "vmm-probe: done", 15) != NULL;
		v->llen = 0;
	}
}

/* Ends the epoch running since t_switch with the counters read at t_end, adding a block while the
 * probe still runs: true when no more epochs are due. */
static bool end_epoch(struct one_vm *v, uint64_t t_end)
{
	struct ab *ab = v->ab;
	struct ab_run *r = &ab->run[ab->nr_runs];

	ab->span[ab->nr_runs].end = t_end;
	r->end_ns = t_end;
	r->polls_ok = v->now.ok - v->prev.ok;
	r->polls_tried = v->now.tried - v->prev.tried;
	r->cpu_s = (v->now.cpu_ns - v->prev.cpu_ns) / 1e9;
	r->wall_s = (t_end - v->t_switch) / 1e9;
	r->complete = true;
	ab->nr_runs++;
	if (ab->nr_runs == v->total && !v->probe_done && v->total + ab->nr_arms <= AB_MAX_EPOCHS &&
	    t_end - v->t_first < v->extend_ns) {
		ab_schedule_block(ab, v->rng, v->order + v->total); /* the probe still runs: one more block */
		v->total += ab->nr_arms;
	}
	if (ab->nr_runs < v->total)
		return false;
	fprintf(stderr, "vmm ab: all %d epochs done; waiting for the guest's probe to finish (at most "
		"%llu s of silence)\n", v->total, (unsigned long long)(v->quiet_ns / 1000000000u));
	v->last_rx = mono_ns(); /* the wait is counted from here */
	return true;
}

/* Switches to the next epoch's arm and starts it once the switch has settled. */
static int start_epoch(struct one_vm *v)
{
	struct ab *ab = v->ab;
	int arm = v->order[ab->nr_runs];

	ab_progress(ab, ab->nr_runs, v->total, arm, (v->total - ab->nr_runs) * ab->epoch_ms / 1e3);
	if (switch_arm(ab, v->ctl, arm) < 0)
		return -EIO;
	/* KVM recomputes a vCPU's poll window after each halt, so the first halt after a change
	 * may still poll under the old ceiling: the epoch starts once every vCPU has halted */
	struct timespec settle = { 0, (long)v->settle_ns };

	nanosleep(&settle, NULL);
	if (read_counters(v->ctl, &v->prev, v->reply) < 0)
		return -EIO;
	v->t_switch = mono_ns();
	if (!ab->nr_runs)
		v->t_first = v->t_switch;
	ab->span[ab->nr_runs] = (struct ab_span){ v->t_switch, UINT64_MAX, arm };
	ab->run[ab->nr_runs] = (struct ab_run){ .arm = arm, .block = ab->nr_runs / ab->nr_arms, .start_ns = v->t_switch };
	v->deadline = v->t_switch + v->epoch_ns;
	v->started = true;
	return 0;
}

/* Once the probe runs: starts the first epoch, or ends one and starts the next, when due. A control
 * request that fails (the VM ended) stops the switching: said later, with what to do. */
static void switch_if_due(struct one_vm *v)
{
	bool due = v->started ? mono_ns() >= v->deadline : v->have_offset;

	if (v->failed || v->ab->nr_runs == v->total || !due)
		return;
	uint64_t t_end = mono_ns();

	if (read_counters(v->ctl, &v->now, v->reply) < 0) {
		v->failed = true;
		return;
	}
	if (v->started && end_epoch(v, t_end))
		return;
	if (start_epoch(v) < 0)
		v->failed = true;
}

/* Reads the child's console and probe until it ends or goes quiet too long, switching the arms. */
static void watch_vmm(struct one_vm *v)
{
	char buf[65536];

	for (;;) {
		int timeout = wait_timeout(v);

		if (timeout < 0) {
			v->timed_out = true;
			break;
		}
		uint64_t clocks = v->d.clocks, t;
		ssize_t n;
		int from = ab_read_child(&v->p[0], &v->p[1], v->ab->at.on ? &v->ab->at.err : NULL, &v->d, buf, sizeof(buf),
					 timeout, &n);

		t = mono_ns();
		if (from == -1)
			break;
		if (from >= 0)
			v->last_rx = t;
		if (from == 1 && v->d.clocks != clocks)
			clock_seen(v, t, v->d.clock_ns);
		if (from == 0)
			console_lines(v, buf, n, t);
		switch_if_due(v);
	}
}

/* The stopped child's stderr to its end (it has exited: nothing blocks long). */
static void drain_stderr(struct ab_stderr *e)
{
	char buf[4096];

	while (e->fd >= 0) {
		struct pollfd p = { e->fd, POLLIN, 0 };
		ssize_t n = poll(&p, 1, 1000) == 1 ? read(e->fd, buf, sizeof(buf)) : 0;

		if (n <= 0) {
			close(e->fd);
			e->fd = -1;
			ab_stderr_end(e);
		} else {
			ab_stderr_feed(e, buf, (size_t)n);
		}
	}
}

/* Stops a VM gone quiet, else waits for it: 0, or -errno when it failed or never sent its clock. */
static int finish_vmm(struct one_vm *v)
{
	int st = 0;

	if (v->timed_out) {
		/* the guest went quiet (a stuck power-off, a probe that never ends): stop it rather than
		 * wait for ever, and keep what the epochs collected */
		pr_err("vmm ab: the guest sent nothing for %llu s %s: stopping the VM (%d epochs were complete; "
		       "--probe-timeout S allows longer)", (unsigned long long)(v->quiet_ns / 1000000000u),
		       !v->have_offset ? "and its probe never started (no clock)"
		       : v->ab->nr_runs >= v->total ? "after the last epoch, and did not power off"
						     : "after a control request failed",
		       v->ab->nr_runs);
		st = stop_vmm(v->pid);
		drain_stderr(&v->ab->at.err); /* what it said while stopping (its attribution's "none") */
	}
	free(v->reply);
	if (v->p[0] >= 0)
		close(v->p[0]);
	if (v->p[1] >= 0)
		close(v->p[1]);
	if (!v->timed_out)
		waitpid(v->pid, &st, 0);
	if (!v->timed_out && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
		pr_err("vmm ab: vmm run exited with status %d (its messages are above)",
		       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		return -EIO;
	}
	if (!v->have_offset) {
		if (v->timed_out)
			return -ETIMEDOUT;
		pr_err("vmm ab: the guest never sent its clock (a CLOCK frame or \"vmm-probe: clock\"): is vmm.probe= in the guest's command "
		       "line (-p) of the shared options, and the guest vmm's built-in one?");
		return -ENODATA;
	}
	return 0;
}

/* The samples into their epochs, and each epoch's counters and samples printed. */
static void report_epochs(struct one_vm *v)
{
	struct ab *ab = v->ab;
	unsigned long long dropped = 0;
	/* a sample within a tenth of an epoch (at most 2 ms) of a switch is not attributed */
	uint64_t guard = ab_switch_guard_ns(ab);

	if (ab->nr_runs < (int)(ab->epochs * ab->nr_arms)) {
		/* an epoch the VM ended in has no final counters: it is left out */
		pr_warn("vmm ab: the guest's probe ended after %d of %d epochs: give it more samples (count=) or "
			"shorter epochs (--epoch-ms)", ab->nr_runs, ab->epochs * ab->nr_arms);
	}
	tag_samples(v->ab, &v->d, v->offset, guard, &dropped);
	if (ab->at.on) { /* its rows by the same clock and guard as the samples */
		char attr[96];

		ab_attr_path(ab, attr, sizeof(attr));
		ab_attr_load(ab, attr, &(struct ab_tagger){ .fixed = -1, .offset = v->offset, .guard = guard });
	}
	if (probe_decode_errors(&v->d))
		pr_warn("vmm ab: %llu probe frames or records were bad or lost",
			(unsigned long long)probe_decode_errors(&v->d));
	fprintf(stderr, "vmm ab: %llu samples outside the epochs or within %.1f ms of a switch left out\n", dropped,
		guard / 1e6);
	for (int e = 0; e < ab->nr_runs; e++) {
		const struct ab_run *r = &ab->run[e];

		printf("epoch %-3d %-12s halt polls %lld of %lld successful, vCPU CPU %.3f s, samples", e + 1,
		       ab->arm[r->arm].name, r->polls_ok, r->polls_tried, r->cpu_s);
		for (int w = 1; w <= PROBE_W_MAX; w++)
			if (r->n[w])
				printf(" %s %zu", ab_wname[w], r->n[w]);
		printf("%s\n", e < (int)ab->warmup ? " (warm-up)" : "");
	}
}

int ab_run_one_vm(struct ab *ab, int *order, int total, struct ab_rng *rng)
{
	struct one_vm v = { .ab = ab, .order = order, .total = total, .rng = rng };
	int r = spawn_vmm(&v);

	if (r < 0)
		return r;
	set_budgets(&v);
	probe_decoder_init(&v.d);
	watch_vmm(&v);
	r = finish_vmm(&v);
	if (!r)
		report_epochs(&v);
	probe_decoder_free(&v.d);
	return r < 0 ? r : v.timed_out ? -ETIMEDOUT : 0;
}
