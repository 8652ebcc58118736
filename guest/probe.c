// SPDX-License-Identifier: MIT
/*
 * The guest latency probe, linked into the built-in /init (one static binary keeps the initramfs
 * that vmm carries small, and /init needs no fork/exec or shell to run it).
 *
 * Kernel command line:
 *
 *   vmm.probe=WORKLOAD[;WORKLOAD...]       WORKLOAD = NAME[:KEY=VALUE[,KEY=VALUE...]]
 *   vmm.probe_out=PATH|console             where frames go (default: vmm's virtio-console port
 *                                          named org.vmm.probe when the guest has it, else the
 *                                          console: "VMM-PROBE <base64>" lines on stdout)
 *
 *   timer     interval_us=1..1000000 (1000)  count=1..1000000 (1000)  prio=0..99 (80)
 *             a thread per online vCPU, pinned, sleeping to absolute CLOCK_MONOTONIC targets;
 *             sample = wake-up lateness (actual - target), ns
 *   pingpong  count=1..1000000 (1000)  cpu_a=, cpu_b= (the first two online vCPUs)  prio (80)
 *             two pinned threads bouncing a futex word; sample = round trip, ns (one cross-vCPU
 *             wake-up, i.e. an IPI, each way)
 *   udp       dev=IFNAME (the first non-loopback interface that is up)  port=1..65535 (7777)
 *             count (1000)  interval_us (1000): request/response to [PEER%dev]:port, PEER from
 *             vmm.probe_peer=ADDR (vmm --probe-peer appends it), else fe80::1; reports
 *             "skipped" (never a number) when no interface is up or nothing answers
 *
 * prio=0 runs SCHED_OTHER; a failed SCHED_FIFO is not an error (the START record says which ran).
 * Each workload and each key at most once; values are decimal digits only; anything else is
 * refused as a whole and nothing runs. Samples stay in memory while a workload runs (writing to a
 * serial console costs an exit per byte and would disturb what is measured) and are written after
 * it, followed by one summary line per series: "vmm-probe: timer cpu0 n=... min=... p50=... ...".
 * Before each workload a CLOCK frame (on the console a line "vmm-probe: clock NS") gives the
 * guest's CLOCK_MONOTONIC, so a host reading it as it comes can place the samples' timestamps on its
 * own clock; a COUNTER frame before each workload and after the last pairs that clock with the raw
 * counter the host shares (CNTVCT, the TSC), which puts each sample on the host's trace clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "guest/probe.h"
#include "guest/probe_proto.h"
#include "guest/probe_internal.h"

/* ---- workloads ---- */

static bool pin_and_prio(int cpu, uint32_t prio)
{
	cpu_set_t set;
	struct sched_param sp = { .sched_priority = (int)prio };

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	return prio && !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

/* mlockall(MCL_FUTURE) pins every thread's stack: keep them small, not glibc's 8 MiB each. */
static pthread_attr_t small_stack(void)
{
	pthread_attr_t a;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 << 10);
	return a;
}

static bool pinned_to(int cpu)
{
	return sched_getcpu() == cpu;
}

struct timer_cpu {
	int cpu;
	pthread_t th;
	struct probe_sample *s;
	uint32_t n, overruns;
	bool fifo, pinned;
	const struct timer_run *run;
};

struct timer_run {
	uint64_t interval_ns;
	uint32_t count, prio;
	pthread_barrier_t bar;
};

static void *timer_thread(void *arg)
{
	struct timer_cpu *c = arg;
	const struct timer_run *r = c->run;

	c->fifo = pin_and_prio(c->cpu, r->prio);
	c->pinned = pinned_to(c->cpu);
	pthread_barrier_wait((pthread_barrier_t *)&r->bar);
	uint64_t next = now_ns() + r->interval_ns;

	while (c->n < r->count) {
		struct timespec ts = { (time_t)(next / 1000000000u), (long)(next % 1000000000u) };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		uint64_t t = now_ns();

		c->s[c->n++] = (struct probe_sample){ t, (int64_t)(t - next) };
		/* stay on the grid: periods already past are missed, not run back to back */
		next += r->interval_ns;
		while (next <= t) {
			next += r->interval_ns;
			c->overruns++;
		}
	}
	return NULL;
}

static void run_timer(struct probe *pr)
{
	const struct workload_spec *ws = &pr->spec.w[PROBE_W_TIMER];
	struct timer_run r = { .interval_ns = ws->interval_us * 1000ull, .count = ws->count, .prio = ws->prio };
	struct timer_cpu *c = calloc(pr->ncpus, sizeof(*c));
	struct probe_start st = { .workload = PROBE_W_TIMER, .ncpus = (uint16_t)pr->ncpus,
				  .count = ws->count, .interval_ns = r.interval_ns };
	unsigned int k = 0;
	bool ok = c != NULL;

	for (int cpu = 0; c && cpu < CPU_SETSIZE && k < pr->ncpus; cpu++) {
		if (!CPU_ISSET(cpu, &pr->online))
			continue;
		c[k].cpu = cpu;
		c[k].run = &r;
		/* touched now so the measuring loop takes no page faults */
		c[k].s = calloc(ws->count, sizeof(*c[k].s));
		ok &= c[k++].s != NULL;
	}
	if (!ok) {
		emit_start(pr, &st);
		for (unsigned int i = 0; i < pr->ncpus; i++)
			emit_not_run(pr, PROBE_W_TIMER, (uint16_t)(c ? (unsigned int)c[i].cpu : i), PROBE_S_ERROR,
				     "out of memory for the samples");
		goto out;
	}
	settle(&pr->out);
	pthread_barrier_init(&r.bar, NULL, pr->ncpus);
	pthread_attr_t attr = small_stack();

	for (unsigned int i = 0; i < pr->ncpus; i++)
		if (pthread_create(&c[i].th, &attr, timer_thread, &c[i]))
			abort(); /* cannot wait at the barrier without it; /init reports the crash */
	for (unsigned int i = 0; i < pr->ncpus; i++)
		pthread_join(c[i].th, NULL);
	pthread_barrier_destroy(&r.bar);
	pthread_attr_destroy(&attr);
	/* the START follows the run: only then is it known whether every thread got SCHED_FIFO */
	st.flags = PROBE_F_FIFO;
	for (unsigned int i = 0; i < pr->ncpus; i++)
		st.flags &= c[i].fifo ? PROBE_F_FIFO : 0;
	emit_start(pr, &st);
	for (unsigned int i = 0; i < pr->ncpus; i++) {
		char label[16], extra[64];

		snprintf(label, sizeof(label), "cpu%d", c[i].cpu);
		snprintf(extra, sizeof(extra), " overruns=%u%s%s", c[i].overruns,
			 c[i].fifo ? " fifo" : "", c[i].pinned ? "" : " NOT-PINNED");
		emit_series(pr, PROBE_W_TIMER, (uint16_t)c[i].cpu, c[i].s, c[i].n, c[i].overruns,
			    label, extra);
	}
out:
	for (unsigned int i = 0; c && i < pr->ncpus; i++)
		free(c[i].s);
	free(c);
}

struct pingpong {
	_Alignas(64) _Atomic uint32_t word; /* a line of its own: only the bounce touches it */
	_Alignas(64) uint32_t count, prio;
	int cpu_a, cpu_b;
	struct probe_sample *s;
	bool fifo_a, fifo_b, pinned;
	pthread_barrier_t bar;
};

static void futex_wait(_Atomic uint32_t *w, uint32_t val)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Sleeps until *w == want: in the kernel, so the wake-up really crosses vCPUs. */
static void wait_for(_Atomic uint32_t *w, uint32_t want)
{
	uint32_t v;

	while ((v = atomic_load(w)) != want)
		futex_wait(w, v);
}

/* B answers: waits for each odd value, replies with the next even one. */
static void *pong_thread(void *arg)
{
	struct pingpong *pp = arg;

	pp->fifo_b = pin_and_prio(pp->cpu_b, pp->prio);
	pp->pinned = pinned_to(pp->cpu_b);
	pthread_barrier_wait(&pp->bar);
	for (uint32_t i = 0; i < pp->count; i++) {
		wait_for(&pp->word, 2 * i + 1);
		atomic_store(&pp->word, 2 * i + 2);
		futex_wake(&pp->word);
	}
	return NULL;
}

static void run_pingpong(struct probe *pr)
{
	const struct workload_spec *ws = &pr->spec.w[PROBE_W_PINGPONG];
	struct pingpong *pp = aligned_alloc(64, sizeof(*pp));
	int first[2] = { -1, -1 }, k = 0;
	struct probe_start st = { .workload = PROBE_W_PINGPONG, .ncpus = (uint16_t)pr->ncpus,
				  .count = ws->count };

	for (int cpu = 0; cpu < CPU_SETSIZE && k < 2; cpu++)
		if (CPU_ISSET(cpu, &pr->online))
			first[k++] = cpu;
	int a = ws->cpu_a_set ? (int)ws->cpu_a : first[0];
	int b = ws->cpu_b_set ? (int)ws->cpu_b : (ws->cpu_a_set && a == first[1] ? first[0] : first[1]);
	const char *why = NULL;

	st.cpu_a = (uint16_t)(a < 0 ? 0 : a);
	st.cpu_b = (uint16_t)(b < 0 ? 1 : b);
	if (st.cpu_a == st.cpu_b)
		st.cpu_b = (uint16_t)(st.cpu_a + 1); /* the START must name two vCPUs; this one fails */
	if (b < 0)
		why = "needs two online vCPUs";
	else if (a == b)
		why = "cpu_a and cpu_b are the same vCPU";
	else if (!CPU_ISSET(a, &pr->online) || !CPU_ISSET(b, &pr->online))
		why = "cpu_a or cpu_b is not online";
	else if (!pp || !(pp->s = calloc(ws->count, sizeof(*pp->s))))
		why = "out of memory for the samples";
	if (why) {
		emit_start(pr, &st);
		emit_not_run(pr, PROBE_W_PINGPONG, st.cpu_a, b < 0 || a == b ? PROBE_S_SKIPPED : PROBE_S_ERROR, why);
		goto out;
	}
	pp->count = ws->count;
	pp->prio = ws->prio;
	pp->cpu_a = a;
	pp->cpu_b = b;
	atomic_store(&pp->word, 0);
	pthread_barrier_init(&pp->bar, NULL, 2);
	pthread_t th;
	pthread_attr_t attr = small_stack();

	settle(&pr->out);
	if (pthread_create(&th, &attr, pong_thread, pp))
		abort();
	pthread_attr_destroy(&attr);
	/* this thread is A; /init's own pinning and priority go back as they were afterwards */
	cpu_set_t saved;

	sched_getaffinity(0, sizeof(saved), &saved);
	pp->fifo_a = pin_and_prio(a, pp->prio);
	bool pinned_a = pinned_to(a);

	pthread_barrier_wait(&pp->bar);
	for (uint32_t i = 0; i < pp->count; i++) {
		uint64_t t0 = now_ns();

		atomic_store(&pp->word, 2 * i + 1);
		futex_wake(&pp->word);
		wait_for(&pp->word, 2 * i + 2);
		pp->s[i] = (struct probe_sample){ t0, (int64_t)(now_ns() - t0) };
	}
	pthread_join(th, NULL);
	pthread_barrier_destroy(&pp->bar);
	struct sched_param sp = { 0 };

	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	sched_setaffinity(0, sizeof(saved), &saved);
	char label[32], extra[64];

	st.flags = pp->fifo_a && pp->fifo_b ? PROBE_F_FIFO : 0;
	emit_start(pr, &st);
	snprintf(label, sizeof(label), "cpu%d<->cpu%d", a, b);
	snprintf(extra, sizeof(extra), " round-trip%s%s", pp->fifo_a && pp->fifo_b ? " fifo" : "",
		 pinned_a && pp->pinned ? "" : " NOT-PINNED");
	emit_series(pr, PROBE_W_PINGPONG, (uint16_t)a, pp->s, pp->count, 0, label, extra);
out:
	if (pp)
		free(pp->s);
	free(pp);
}

/* The interface to use: dev, or the first non-loopback one that is up; false when none is. */
static bool nic_up(const char *dev, char *name)
{
	struct if_nameindex *ifs = if_nameindex();
	int s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool found = false;

	for (struct if_nameindex *i = ifs; s >= 0 && i && i->if_index && !found; i++) {
		struct ifreq ifr = { 0 };

		if (dev[0] && strcmp(dev, i->if_name))
			continue;
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", i->if_name);
		if (ioctl(s, SIOCGIFFLAGS, &ifr) || !(ifr.ifr_flags & IFF_UP) || (ifr.ifr_flags & IFF_LOOPBACK))
			continue;
		snprintf(name, IF_NAMESIZE, "%s", i->if_name);
		found = true;
	}
	if (s >= 0)
		close(s);
	if (ifs)
		if_freenameindex(ifs);
	return found;
}

/* Request/response to [PEER%dev]:port: vmm's --probe-peer answers on the tap or the PF. Without
 * an interface up, or without any answer, it reports a skip and no number. */
static void run_udp(struct probe *pr)
{
	const struct workload_spec *ws = &pr->spec.w[PROBE_W_UDP];
	struct probe_start st = { .workload = PROBE_W_UDP, .ncpus = (uint16_t)pr->ncpus,
				  .count = ws->count, .interval_ns = ws->interval_us * 1000ull,
				  .port = (uint16_t)ws->port };
	char dev[IF_NAMESIZE];
	struct probe_sample *s = NULL;
	uint32_t n = 0, lost = 0;

	emit_start(pr, &st);
	if (!nic_up(ws->dev, dev)) {
		emit_not_run(pr, PROBE_W_UDP, 0, PROBE_S_SKIPPED, "no NIC");
		return;
	}
	struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)ws->port),
				   .sin6_scope_id = if_nametoindex(dev) };
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	to.sin6_addr.s6_addr[0] = 0xfe;
	to.sin6_addr.s6_addr[1] = 0x80;
	to.sin6_addr.s6_addr[15] = 1;
	if (pr->peer[0] && inet_pton(AF_INET6, pr->peer, &to.sin6_addr) != 1) {
		emit_not_run(pr, PROBE_W_UDP, 0, PROBE_S_ERROR, "vmm.probe_peer= is not an IPv6 address");
		goto out;
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof(to)) ||
	    !(s = calloc(ws->count, sizeof(*s)))) {
		emit_not_run(pr, PROBE_W_UDP, 0, PROBE_S_ERROR, strerror(errno));
		goto out;
	}
	uint64_t next = now_ns();

	for (uint32_t i = 0; i < ws->count; i++) {
		uint8_t req[PROBE_UDP_SIZE] = { 0 }, rsp[64];
		struct timespec ts = { (time_t)(next / 1000000000u), (long)(next % 1000000000u) };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		next += st.interval_ns;
		memcpy(req, &i, sizeof(i));
		uint64_t t0 = now_ns();

		if (send(fd, req, sizeof(req), 0) != sizeof(req)) {
			lost++;
			continue;
		}
		/* an answer to this request (the host echoes it), within 100 ms */
		struct pollfd p = { fd, POLLIN, 0 };
		bool got = false;

		while (!got && poll(&p, 1, 100) == 1) {
			ssize_t r = recv(fd, rsp, sizeof(rsp), 0);

			got = r >= (ssize_t)sizeof(i) && !memcmp(rsp, &i, sizeof(i));
		}
		if (!got) {
			lost++;
			if (!n && lost >= 3)
				break; /* nobody is there: not worth count timeouts */
			continue;
		}
		s[n++] = (struct probe_sample){ t0, (int64_t)(now_ns() - t0) };
	}
	if (!n) {
		char why[160];

		snprintf(why, sizeof(why), "no reply from [%s%%%s]:%u", pr->peer[0] ? pr->peer : "fe80::1", dev,
			 ws->port);
		emit_not_run(pr, PROBE_W_UDP, 0, PROBE_S_SKIPPED, why);
	} else {
		char label[IF_NAMESIZE + 8], extra[32];

		snprintf(label, sizeof(label), "%s", dev);
		snprintf(extra, sizeof(extra), " lost=%u", lost);
		emit_series(pr, PROBE_W_UDP, 0, s, n, lost, label, extra);
	}
out:
	if (fd >= 0)
		close(fd);
	free(s);
}

int probe_run_cmdline(const char *cmdline)
{
	char val[SPEC_MAX], outv[256];
	const char *v = cmdline_value(cmdline, "vmm.probe=", val, sizeof(val));
	struct probe *pr;

	if (!v)
		return 0;
	pr = calloc(1, sizeof(*pr));
	if (!pr || parse_spec(&pr->spec, v)) {
		free(pr);
		return 1;
	}
	sink_open(&pr->out, cmdline_value(cmdline, "vmm.probe_out=", outv, sizeof(outv)));
	cmdline_value(cmdline, "vmm.probe_peer=", pr->peer, sizeof(pr->peer));
	sched_getaffinity(0, sizeof(pr->online), &pr->online);
	pr->ncpus = (unsigned int)CPU_COUNT(&pr->online);
	if (pr->ncpus > PROBE_MAX_CPUS)
		pr->ncpus = PROBE_MAX_CPUS;
	/* no page faults while measuring: everything allocated stays resident */
	mlockall(MCL_CURRENT | MCL_FUTURE);
	for (unsigned int i = 0; i < pr->spec.n; i++) {
		emit_clock(pr);
		emit_counter(pr);
		switch (pr->spec.order[i]) {
		case PROBE_W_TIMER:
			run_timer(pr);
			break;
		case PROBE_W_PINGPONG:
			run_pingpong(pr);
			break;
		case PROBE_W_UDP:
			run_udp(pr);
			break;
		}
	}
	emit_counter(pr); /* the last pair: the two span every sample */
	dprintf(1, "vmm-probe: done, %u frames\n", pr->out.seq);
	settle(&pr->out);
	if (pr->out.fd != 1)
		close(pr->out.fd);
	free(pr);
	return 0;
}
