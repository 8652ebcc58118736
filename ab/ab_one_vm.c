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
			int e = ab_epoch_of(ab->span, ab->nr_runs, se->t_ns[i] + offset, guard);
			struct ab_run *r = e >= 0 ? &ab->run[e] : NULL;

			if (!r || !r->complete) {
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
int ab_run_one_vm(struct ab *ab, int *order, int total, struct ab_rng *rng)
{
	char ctl[96], hp[24], *argv[AB_MAX_ARGS + 8];
	int argc = 0, p[2], scheduled = total;

	snprintf(ctl, sizeof(ctl), "%s/ctl", ab->tmpdir);
	snprintf(hp, sizeof(hp), "%llu", (unsigned long long)ab->arm[order[0]].knobs.halt_poll_ns);
	argv[argc++] = "vmm";
	argv[argc++] = "run";
	for (int i = 0; i < ab->nr_shared; i++)
		argv[argc++] = ab->shared[i];
	argv[argc++] = "--ctl";
	argv[argc++] = ctl;
	if (ab->arm[order[0]].knobs.has_halt_poll_ns) {
		argv[argc++] = "--halt-poll-ns";
		argv[argc++] = hp;
	}
	argv[argc++] = "--probe-out";
	argv[argc++] = AB_PROBE_FD_PATH;
	argv[argc] = NULL;
	pid_t pid;
	/* the replies' buffer, one for the run: a stats reply may be large, and a fresh 16 MiB block
	 * twice an epoch was most of ASan's time in the unit tests */
	char *reply = malloc(AB_OUT_MAX);

	if (!reply)
		return -ENOMEM;
	p[0] = ab_spawn_self(argv, &pid, &p[1]);
	if (p[0] < 0) {
		free(reply);
		return p[0];
	}

	struct probe_decoder d;
	struct ab_counters prev = { 0 }, now;
	char buf[65536], line[256];
	size_t llen = 0;
	bool started = false, have_offset = false, failed = false, probe_done = false, timed_out = false;
	int64_t offset = 0;
	uint64_t epoch_ns = ab->epoch_ms * 1000000ull, deadline = 0, t_switch = 0;
	uint64_t settle_ns = epoch_ns / 10 < 20000000 ? epoch_ns / 10 : 20000000;
	/* the silence allowed while nothing else is due: the boot (up to the probe's first clock) gets
	 * five times as long (five minutes by default: a nested lab boots slowly) */
	uint64_t quiet_ns = (ab->probe_timeout_s ? ab->probe_timeout_s : 60) * 1000000000ull;
	uint64_t last_rx = mono_ns(), boot_ns = 5 * quiet_ns, t_first = 0;
	/* blocks are added while the probe runs (silent until a workload ends) for at most four times
	 * the schedule or ten times the allowed silence (ten minutes by default), whichever is longer */
	uint64_t extend_ns = 4ull * scheduled * (epoch_ns + settle_ns);

	if (extend_ns < 10 * quiet_ns)
		extend_ns = 10 * quiet_ns;
	int st = 0;

	probe_decoder_init(&d);
	for (;;) {
		int timeout;
		uint64_t t = mono_ns();

		if (started && !failed && ab->nr_runs < total) { /* the next switch is due */
			timeout = t >= deadline ? 0 : (int)((deadline - t) / 1000000u) + 1;
		} else { /* nothing due: the guest must finish (or reach its probe) in bounded time */
			uint64_t limit = last_rx + quiet_ns + (have_offset ? 0 : boot_ns);

			if (t >= limit) {
				timed_out = true;
				break;
			}
			timeout = (int)((limit - t) / 1000000u) + 1;
		}
		uint64_t clocks = d.clocks;
		ssize_t n;
		int from = ab_read_child(&p[0], &p[1], &d, buf, sizeof(buf), timeout, &n);

		t = mono_ns();
		if (from == -1)
			break;
		if (from >= 0)
			last_rx = t;
		/* the frames were read no earlier than written: the smallest offset is the best */
		if (from == 1 && d.clocks != clocks && (!have_offset || (int64_t)(t - d.clock_ns) < offset)) {
			offset = (int64_t)(t - d.clock_ns);
			have_offset = true;
		}
		if (from == 0) {
			for (ssize_t i = 0; i < n; i++) { /* the probe's clock lines, read as they come */
				uint64_t g;

				if (llen < sizeof(line))
					line[llen++] = buf[i];
				if (buf[i] != '\n')
					continue;
				/* the line was read no earlier than written: the smallest offset is the best */
				if (ab_parse_clock(line, llen, &g) && (!have_offset || (int64_t)(t - g) < offset)) {
					offset = (int64_t)(t - g);
					have_offset = true;
				}
				probe_done |= memmem(line, llen, "vmm-probe: done", 15) != NULL;
				llen = 0;
			}
		}
		bool due = started ? mono_ns() >= deadline : have_offset;

		if (failed || ab->nr_runs == total || !due)
			continue;
		/* the probe is running: start the first epoch, or end one and start the next */
		uint64_t t_end = mono_ns();

		if (read_counters(ctl, &now, reply) < 0) { /* the VM ended: said below, with what to do */
			failed = true;
			continue;
		}
		if (started) {
			struct ab_run *r = &ab->run[ab->nr_runs];

			ab->span[ab->nr_runs].end = t_end;
			r->end_ns = t_end;
			r->polls_ok = now.ok - prev.ok;
			r->polls_tried = now.tried - prev.tried;
			r->cpu_s = (now.cpu_ns - prev.cpu_ns) / 1e9;
			r->wall_s = (t_end - t_switch) / 1e9;
			r->complete = true;
			ab->nr_runs++;
			if (ab->nr_runs == total && !probe_done && total + ab->nr_arms <= AB_MAX_EPOCHS &&
			    t_end - t_first < extend_ns) {
				ab_schedule_block(ab, rng, order + total); /* the probe still runs: one more block */
				total += ab->nr_arms;
			}
			if (ab->nr_runs == total) {
				fprintf(stderr, "vmm ab: all %d epochs done; waiting for the guest's probe to finish (at most "
					"%llu s of silence)\n", total, (unsigned long long)(quiet_ns / 1000000000u));
				last_rx = mono_ns(); /* the wait is counted from here */
				continue;
			}
		}
		int arm = order[ab->nr_runs];

		ab_progress(ab, ab->nr_runs, total, arm, (total - ab->nr_runs) * ab->epoch_ms / 1e3);
		if (switch_arm(ab, ctl, arm) < 0) {
			failed = true;
			continue;
		}
		/* KVM recomputes a vCPU's poll window after each halt, so the first halt after a change
		 * may still poll under the old ceiling: the epoch starts once every vCPU has halted */
		struct timespec settle = { 0, (long)settle_ns };

		nanosleep(&settle, NULL);
		if (read_counters(ctl, &prev, reply) < 0) {
			failed = true;
			continue;
		}
		t_switch = mono_ns();
		if (!ab->nr_runs)
			t_first = t_switch;
		ab->span[ab->nr_runs] = (struct ab_span){ t_switch, UINT64_MAX, arm };
		ab->run[ab->nr_runs] = (struct ab_run){ .arm = arm, .block = ab->nr_runs / ab->nr_arms, .start_ns = t_switch };
		deadline = t_switch + epoch_ns;
		started = true;
	}
	if (timed_out) {
		/* the guest went quiet (a stuck power-off, a probe that never ends): stop it rather than
		 * wait for ever, and keep what the epochs collected */
		pr_err("vmm ab: the guest sent nothing for %llu s %s: stopping the VM (%d epochs were complete; "
		       "--probe-timeout S allows longer)", (unsigned long long)(quiet_ns / 1000000000u),
		       !have_offset ? "and its probe never started (no clock)"
		       : ab->nr_runs >= total ? "after the last epoch, and did not power off" : "after a control request failed",
		       ab->nr_runs);
		st = stop_vmm(pid);
	}
	free(reply);
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (!timed_out)
		waitpid(pid, &st, 0);
	if (!timed_out && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
		pr_err("vmm ab: vmm run exited with status %d (its messages are above)",
		       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		probe_decoder_free(&d);
		return -EIO;
	}
	if (!have_offset) {
		if (timed_out) {
			probe_decoder_free(&d);
			return -ETIMEDOUT;
		}
		pr_err("vmm ab: the guest never sent its clock (a CLOCK frame or \"vmm-probe: clock\"): is vmm.probe= in the guest's command "
		       "line (-p) of the shared options, and the guest vmm's built-in one?");
		probe_decoder_free(&d);
		return -ENODATA;
	}
	if (ab->nr_runs < (int)(ab->epochs * ab->nr_arms)) {
		/* an epoch the VM ended in has no final counters: it is left out */
		pr_warn("vmm ab: the guest's probe ended after %d of %d epochs: give it more samples (count=) or "
			"shorter epochs (--epoch-ms)", ab->nr_runs, ab->epochs * ab->nr_arms);
	}
	unsigned long long dropped = 0;
	/* a sample within a tenth of an epoch (at most 2 ms) of a switch is not attributed */
	uint64_t guard = epoch_ns / 10 < 2000000 ? epoch_ns / 10 : 2000000;

	tag_samples(ab, &d, offset, guard, &dropped);
	if (probe_decode_errors(&d))
		pr_warn("vmm ab: %llu probe frames or records were bad or lost",
			(unsigned long long)probe_decode_errors(&d));
	fprintf(stderr, "vmm ab: %llu samples outside the epochs or within %.1f ms of a switch left out\n", dropped,
		guard / 1e6);
	probe_decoder_free(&d);
	for (int e = 0; e < ab->nr_runs; e++) {
		const struct ab_run *r = &ab->run[e];

		printf("epoch %-3d %-12s halt polls %lld of %lld successful, vCPU CPU %.3f s, samples", e + 1,
		       ab->arm[r->arm].name, r->polls_ok, r->polls_tried, r->cpu_s);
		for (int w = 1; w <= PROBE_W_MAX; w++)
			if (r->n[w])
				printf(" %s %zu", ab_wname[w], r->n[w]);
		printf("%s\n", e < (int)ab->warmup ? " (warm-up)" : "");
	}
	return timed_out ? -ETIMEDOUT : 0;
}

