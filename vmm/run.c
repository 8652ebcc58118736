// SPDX-License-Identifier: MIT
/*
 * Running a built VM: one thread per vCPU, a console input thread, and the main thread waiting
 * for either the VM to stop or SIGINT/SIGTERM/SIGHUP (blocked everywhere, read from a signalfd,
 * so no handler runs in a vCPU thread), and doing the work other threads defer to it (vm_defer).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "core/hot.h"
#include "halt_poll/halt_poll.h"
#include "core/log.h"
#include "platform/console.h"
#include "core/term.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "vmm/run.h"
#include "core/sandbox.h"

/* How often the console thread drains the coalesced MMIO ring while a zone is on: every 10 ms
 * while the guest writes, backing off to every 100 ms while it is silent, so an idle guest wakes
 * vmm 10 times a second instead of 100. Console output is that late at most (a full ring makes the
 * guest's next write exit, which drains it at once). */
#define CONSOLE_RING_POLL_MS 10
#define CONSOLE_RING_IDLE_MS 100

struct console_io {
	struct vm *vm;
	const struct console_in_sink *sink; /* NULL: no keyboard input */
	struct console_out *out;	    /* NULL or fd -1: no output to drain */
	int stop_fd;			    /* an eventfd vm_run writes once the VM stops */
};

VMM_HOT static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;

	atomic_store(&v->tid, (int)gettid());
	if (sandbox_enter(v->vm->sandbox, SANDBOX_VCPU) < 0) {
		vm_request_stop(v->vm, VM_EXIT_ERROR);
		atomic_store(&v->tid, 0);
		return NULL;
	}
	if (v->id == 0) { /* the start-up split's last mark (VMM_TIMINGS): the guest runs from here */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		atomic_store(&v->vm->first_run_ns, (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
	}
	vcpu_run_loop(v);
	struct rusage ru; /* the exit summary's per-vCPU state, before /proc/self/task/TID goes */

	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		atomic_store(&v->end_voluntary, ru.ru_nvcsw);
		atomic_store(&v->end_preempted, ru.ru_nivcsw);
	}
	atomic_store(&v->tid, 0);
	return NULL;
}

/* Keyboard input to the guest, and guest output from the ring to stdout, in one poll loop: output
 * keeps flowing when stdin is not a terminal, at EOF, or absent (--console none). */
VMM_HOT_IDLE static void *console_thread(void *arg)
{
	struct console_io *ci = arg;
	struct console_out *co = ci->out && ci->out->fd >= 0 ? ci->out : NULL;
	uint8_t in[64], buf[sizeof(in) + 1]; /* filtered apart: a carried escape adds a byte */
	size_t have = 0, done = 0;
	struct console_escape escape = { false };
	bool in_open = ci->sink != NULL;
	int ring_ms = CONSOLE_RING_POLL_MS;

	if (sandbox_enter(ci->vm->sandbox, SANDBOX_CONSOLE) < 0) {
		vm_request_stop(ci->vm, VM_EXIT_ERROR);
		return NULL;
	}
	while (!atomic_load(&ci->vm->stop)) {
		/* console bytes KVM queued without an exit: out within CONSOLE_RING_POLL_MS */
		bool ring = mmio_ring_active(&ci->vm->coalesced);

		if (mmio_ring_drain(&ci->vm->coalesced))
			ring_ms = CONSOLE_RING_POLL_MS;
		else if (ring_ms < CONSOLE_RING_IDLE_MS)
			ring_ms = ring_ms * 2 > CONSOLE_RING_IDLE_MS ? CONSOLE_RING_IDLE_MS : ring_ms * 2;
		if (done < have) /* the guest had not drained its FIFO: offer the rest again */
			done += ci->sink->push(ci->sink->opaque, buf + done, have - done);
		size_t pending = co ? console_out_drain(co) : 0;
		struct pollfd p[4];
		int np = 0, in_i = -1, wake_i = -1;

		p[np++] = (struct pollfd){ .fd = ci->stop_fd, .events = POLLIN };
		if (in_open && done == have) {
			in_i = np;
			p[np++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		}
		if (co) {
			wake_i = np;
			p[np++] = (struct pollfd){ .fd = co->wake_fd, .events = POLLIN };
			if (pending && !co->broken) /* writable again: drained at the top of the loop */
				p[np++] = (struct pollfd){ .fd = co->fd, .events = POLLOUT };
		}
		/* 1 ms while input waits for the guest's FIFO; else woken by input, output or the stop */
		if (poll(p, np, done < have ? 1 : ring ? ring_ms : -1) <= 0)
			continue;
		if (p[0].revents & POLLIN)
			continue; /* the VM stopped: the loop's condition says so */
		if (wake_i >= 0 && p[wake_i].revents & POLLIN) {
			uint64_t v;

			if (read(co->wake_fd, &v, sizeof(v)) < 0) {
				/* already cleared: nothing to do */
			}
		}
		if (in_i < 0 || !(p[in_i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		ssize_t n = read(STDIN_FILENO, in, sizeof(in));

		if (n <= 0) {
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			in_open = false; /* EOF: the guest keeps running without input */
			continue;
		}
		bool quit;

		have = console_filter(&escape, in, n, buf, &quit);
		done = 0;
		ring_ms = CONSOLE_RING_POLL_MS; /* the guest's echo is due */
		if (quit) {
			vm_request_stop(ci->vm, VM_EXIT_POWEROFF);
			return NULL;
		}
	}
	return NULL;
}

/* What each vCPU did: vmm's own exit counts and KVM's binary stats (halt polling, WFI, exits). */
static void vm_print_summary(struct vm *vm, int code, double secs, const struct console_out *co)
{
	static const char *const kvm_stats[] = {
		"exits", "wfi_exit_stat", "halt_attempted_poll", "halt_successful_poll", "halt_wakeup",
		"halt_poll_success_ns", "halt_wait_ns",
	};

	fprintf(stderr, "vmm: %s (exit status %d) after %.2f s\n", vm_exit_name(code, atomic_load(&vm->kvm_refused)), code, secs);
	if (atomic_load(&vm->pvpanicked))
		fprintf(stderr, "vmm: the guest reported a panic through pvpanic\n");
	else if (atomic_load(&vm->guest_panicked))
		fprintf(stderr, "vmm: the guest kernel printed its panic banner on the console\n");
	if (co && co->fd >= 0)
		fprintf(stderr, "vmm: console: %llu bytes of output, %llu dropped%s\n",
			(unsigned long long)co->bytes, (unsigned long long)co->dropped,
			co->broken ? " (stdout's reader went away)"
			: co->dropped ? " (stdout's reader fell behind)" : "");
	fprintf(stderr, "vmm: %-5s %9s %9s %7s", "vcpu", "mmio", "unclaimed", "kicks");
	for (size_t i = 0; i < sizeof(kvm_stats) / sizeof(kvm_stats[0]); i++)
		fprintf(stderr, " %s", kvm_stats[i]);
	fputc('\n', stderr);
	for (int i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *v = vm->vcpus[i];
		struct hp_stats st;
		int fd = vcpu_stats_fd(v);

		fprintf(stderr, "vmm: %-5d %9llu %9llu %7llu", v->id,
			(unsigned long long)atomic_load(&v->exits.mmio),
			(unsigned long long)atomic_load(&v->exits.mmio_unclaimed),
			(unsigned long long)atomic_load(&v->exits.intr));
		if (fd >= 0 && hp_stats_open(&st, fd) == 0) {
			for (size_t k = 0; k < sizeof(kvm_stats) / sizeof(kvm_stats[0]); k++) {
				uint64_t val;
				int w = (int)strlen(kvm_stats[k]);

				if (hp_stats_get(&st, kvm_stats[k], &val) == 0)
					fprintf(stderr, " %*llu", w, (unsigned long long)val);
				else
					fprintf(stderr, " %*s", w, "-");
			}
			hp_stats_close(&st);
		}
		fputc('\n', stderr);
	}
}

VMM_HOT_IDLE static double mono_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The main thread's wait, up to timeout_ms (-1: no limit): a stop signal (its number), 0 when
 * deferred work or the tick is due. Both fds exist before any thread starts: the allowlist keeps
 * no signalfd or eventfd. A VM without defer_fd (-1: poll skips it) has its deferred work run on
 * the tick, at least every 100 ms. */
VMM_HOT_IDLE static int main_wait(int sigfd, int defer_fd, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = sigfd, .events = POLLIN }, { .fd = defer_fd, .events = POLLIN } };

	if (defer_fd < 0 && (timeout_ms < 0 || timeout_ms > 100))
		timeout_ms = 100;
	if (poll(p, 2, timeout_ms) <= 0)
		return 0;
	if (p[1].revents & POLLIN) {
		uint64_t v;

		if (read(defer_fd, &v, sizeof(v)) < 0) {
			/* already cleared: nothing to do */
		}
	}
	struct signalfd_siginfo si;

	if ((p[0].revents & POLLIN) && read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		return (int)si.ssi_signo;
	return 0;
}

VMM_HOT_IDLE int vm_run(struct vm *vm, const struct console_in_sink *console, struct console_out *out)
{
	double t0 = mono_now();
	sigset_t stopsigs, old;
	pthread_t threads[VM_MAX_VCPUS], cin;
	struct console_io ci = { vm, console, out, -1 };
	bool have_cin = false;
	int started = 0;

	/* main() blocked these before any thread started; blocking again is harmless and keeps
	 * vm_run correct for callers that did not */
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	sigaddset(&stopsigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stopsigs, &old);
	int sigfd = signalfd(-1, &stopsigs, SFD_NONBLOCK | SFD_CLOEXEC);

	if (sigfd < 0) {
		pr_err("cannot wait for the stop signals: signalfd: %s", strerror(errno));
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return VM_EXIT_ERROR;
	}
	/* before any thread starts (the allowlists keep no eventfd) */
	ci.stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ci.stop_fd < 0) {
		pr_err("cannot wake the console thread at the stop: eventfd: %s", strerror(errno));
		close(sigfd);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return VM_EXIT_ERROR;
	}
	if (console)
		term_raw();
	atomic_store(&vm->main_waits, true);
	for (; started < vm->nr_vcpus; started++) {
		int r = pthread_create(&threads[started], NULL, vcpu_thread, vm->vcpus[started]);

		if (r) {
			pr_err("cannot start vCPU thread %d: %s", started, strerror(r));
			vm_request_stop(vm, VM_EXIT_ERROR);
			break;
		}
	}
	if ((console || (out && out->fd >= 0)) && pthread_create(&cin, NULL, console_thread, &ci) == 0)
		have_cin = true;
	/* every thread is started: main's own allowlist has no clone, socket or execve */
	if (sandbox_enter(vm->sandbox, SANDBOX_MAIN) < 0)
		vm_request_stop(vm, VM_EXIT_ERROR);
	/* the tick at once, then when it asks; woken earlier by a signal or deferred work, the main
	 * thread sleeps while the guest idles */
	double tick_at = mono_now();

	while (!atomic_load(&vm->stop)) {
		double now = mono_now(), due = vm->tick && tick_at >= 0 ? tick_at : -1;

		if (vm->timeout && (due < 0 || t0 + vm->timeout < due))
			due = t0 + vm->timeout;
		/* at most an hour at a time: the milliseconds fit an int */
		int sig = main_wait(sigfd, vm->defer_fd, due < 0 ? -1 : due <= now ? 0 :
					due - now > 3600 ? 3600 * 1000 : (int)((due - now) * 1000) + 1);

		if (vm->deferred)
			vm->deferred(vm->deferred_opaque);
		now = mono_now();
		if (sig > 0) {
			vm_request_stop(vm, 128 + sig);
		} else if (vm->timeout && now - t0 >= vm->timeout) {
			pr_err("--timeout %u: the guest was still running after %u s; stopping it as hung "
			       "(exit status %d)", vm->timeout, vm->timeout, VM_EXIT_HUNG);
			vm_request_stop(vm, VM_EXIT_HUNG);
		} else if (vm->tick && tick_at >= 0 && now >= tick_at) {
			/* off every vCPU's path: reports that read host files */
			int next_ms = vm->tick(vm->tick_opaque);

			tick_at = next_ms < 0 ? -1 : now + next_ms / 1000.0;
		}
	}
	atomic_store(&vm->main_waits, false);
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	if (have_cin) { /* asleep in poll until told */
		uint64_t one = 1;

		if (write(ci.stop_fd, &one, sizeof(one)) < 0) {
			/* a counter at its maximum is readable anyway */
		}
		pthread_join(cin, NULL);
	}
	mmio_ring_drain(&vm->coalesced); /* what the guest wrote last, before it stopped */
	if (vm->deferred) /* what the last lines, or a thread that stopped meanwhile, deferred */
		vm->deferred(vm->deferred_opaque);
	if (out)
		console_out_flush(out, 500); /* what the guest printed last, unless nobody reads */
	term_restore();
	close(ci.stop_fd);
	close(sigfd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	int code = atomic_load(&vm->exit_code);

	if (code < 0)
		code = VM_EXIT_ERROR;
	vm_print_summary(vm, code, mono_now() - t0, out);
	return code;
}
