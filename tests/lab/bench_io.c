// SPDX-License-Identifier: MIT
/* make bench's virtio-blk and virtio-net sections: blkbench on the disk and netbench over a tap in a
 * network namespace of the bench's own, with the host's echo and sink; each vmm boot beside QEMU's. */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "tests/lab/bench_lab.h"
#include "tests/lab/labutil.h"

/* A device's exits: notifies by MMIO exit per notify, and the boot's userspace exits beyond the
 * idle boot's per notify + interrupt (the steady-state cost; the goal is 0). */
static void device_exits(struct bench *b, const char *err, const char *dev, const char *prefix)
{
	struct devstats d;
	unsigned long long mmio, kvm;
	char name[80];

	if (dev_summary(err, dev, 2, &d) < 0 || exit_table(err, &mmio, &kvm) < 0)
		return;
	snprintf(name, sizeof(name), "exits.%s.per_notify", prefix);
	if (d.kicks + d.kick_exits)
		add(b, name, "exits", false, (double)d.kick_exits / (d.kicks + d.kick_exits));
	snprintf(name, sizeof(name), "exits.%s.notifies", prefix);
	add(b, name, "count", false, d.kicks + d.kick_exits);
	snprintf(name, sizeof(name), "exits.%s.interrupts", prefix);
	add(b, name, "count", false, d.irqs);
	if (b->quiet_mmio >= 0 && d.kicks + d.irqs) {
		snprintf(name, sizeof(name), "exits.%s.extra_per_notify_or_irq", prefix);
		add(b, name, "exits", false, ((double)mmio - b->quiet_mmio) / (d.kicks + d.kick_exits + d.irqs));
	}
}

/* The host CPU time of pid's threads so far (the first field of each /proc/PID/task/TID/schedstat,
 * ns), and into *own that of all but its vCPU threads (comm_is_vcpu): the VMM's own work, where the
 * vCPUs' time is mostly the guest's. -1 when unreadable. */
static double proc_cpu_ns(int pid, double *own)
{
	char path[320];
	struct dirent *d;
	double sum = 0;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(dir = opendir(path)))
		return -1;
	while ((d = readdir(dir))) {
		unsigned long long ns;
		FILE *f;

		char comm[32] = "";

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid, d->d_name);
		if ((f = fopen(path, "r"))) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", pid, d->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fscanf(f, "%llu", &ns) == 1) {
			sum += (double)ns, n++;
			if (!comm_is_vcpu(comm))
				*own += (double)ns;
		}
		fclose(f);
	}
	closedir(dir);
	return n ? sum : -1;
}

struct cpu_track {
	struct bench *b;
	const char *prefix, *suffix;
	int pid;
	double last; /* the CPU time at the previous benchmark line; -1: none yet */
	double last_own; /* and that of the VMM's own threads */
	char line[256];
	size_t n;
};

/* A whole line of the guest's: at a benchmark line, the CPU time since the previous one is that
 * line's interval's (one rep of one point: the guest runs them back to back). */
static void cpu_line(struct cpu_track *t, const char *l)
{
	char kind[16], name[96];
	unsigned long bs, qd, rep;
	long ops;
	unsigned long long ns;

	if (strncmp(l, "GUEST-BLKBENCH", 14) && strncmp(l, "GUEST-NETBENCH", 14))
		return;
	double own = 0, cpu = t->pid > 0 ? proc_cpu_ns(t->pid, &own) : -1, d = cpu - t->last, od = own - t->last_own;

	if (t->last >= 0 && cpu >= 0) {
		double per = 0;

		if (sscanf(l, "GUEST-BLKBENCH %15s bs=%lu qd=%lu rep=%lu ops=%ld ns=%llu", kind, &bs, &qd, &rep, &ops,
			   &ns) == 6 && bs == 4096 && ops > 0) {
			snprintf(name, sizeof(name), "%scpu.blk.%s_4k.qd%lu", t->prefix, kind, qd);
			per = ops;
		} else if (sscanf(l, "GUEST-NETBENCH rr rep=%lu ops=%ld ns=%llu", &rep, &ops, &ns) == 3 && ops > 0) {
			snprintf(name, sizeof(name), "%scpu.net.udp_rr%s", t->prefix, t->suffix);
			per = 2.0 * ops;
		}
		if (per > 0) {
			add(t->b, name, "us", false, d / 1e3 / per);
			/* the VMM's own threads' share: what it does per operation beside the guest */
			snprintf(name + strlen(name), sizeof(name) - strlen(name), ".own_threads");
			add(t->b, name, "us", false, od / 1e3 / per);
		}
	}
	t->last = cpu;
	t->last_own = own;
}

static void cpu_out(const char *buf, size_t len, double secs, void *arg)
{
	struct cpu_track *t = arg;

	(void)secs;
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n') {
			if (t->n + 1 < sizeof(t->line))
				t->line[t->n++] = buf[i];
			continue;
		}
		t->line[t->n] = 0;
		cpu_line(t, t->line[0] == '\r' ? t->line + 1 : t->line);
		t->n = 0;
	}
}

void run_cpu_per_op(char *const argv[], int timeout, struct bench *b, const char *prefix, const char *suffix,
		    struct result *r)
{
	struct cpu_track t = { b, prefix, suffix, -1, -1, 0, "", 0 };
	struct run_opts o = { .timeout = timeout, .on_out = cpu_out, .out_arg = &t, .pid_out = &t.pid };

	run_vmm_opts(argv, &o, r);
}

/* blkbench's lines (GUEST-BLKBENCH ...) as figures, named prefix + blk.KIND_SIZE.qdN. */
void blk_figures(struct bench *b, const char *out, const char *prefix)
{
	for (const char *p = out; (p = strstr(p, "GUEST-BLKBENCH ")); p++) {
		char kind[16], name[80];
		unsigned long bs, qd, ops, rep;
		unsigned long long ns;

		if (sscanf(p, "GUEST-BLKBENCH %15s bs=%lu qd=%lu rep=%lu ops=%lu ns=%llu", kind, &bs, &qd, &rep, &ops,
			   &ns) != 6 || !ns)
			continue;
		if (bs == 4096) {
			snprintf(name, sizeof(name), "%sblk.%s_4k.qd%lu", prefix, kind, qd);
			add(b, name, "IOPS", true, ops / (ns / 1e9));
		} else {
			snprintf(name, sizeof(name), "%sblk.%s_1m.qd%lu", prefix, kind, qd);
			add(b, name, "MiB/s", true, ops * (bs / 1048576.0) / (ns / 1e9));
		}
	}
}

/* One vmm boot of the test guest running blkbench reps times on the disk. */
static void blk_vmm(struct bench *b, int reps)
{
	char *argv[32], step[64], dev[128];

	snprintf(step, sizeof(step), "blkbench vmmbenchreps=%d vmmbenchms=%d", reps, b->io_ms);
	snprintf(dev, sizeof(dev), "%s", b->disk);
	char *const extra[] = { "-d", dev, NULL };
	struct result r;

	test_guest_argv(argv, 32, step, extra);
	run_cpu_per_op(argv, 900, b, "", "", &r);
	blk_figures(b, r.out, "");
	if (!strstr(r.out, "GUEST-BLKBENCH ") || r.status)
		fail_note("virtio-blk", &r);
	device_exits(b, r.err, "virtio-blk", "virtio_blk");
	result_free(&r);
}

/* With the peer, one repetition per boot, vmm's and QEMU's boots alternating. */
void blk(struct bench *b)
{
	struct stat st;
	bool peer = b->qemu;
	int rounds = peer ? b->io_reps : 2;

	if (stat(b->disk, &st) < 0 || !S_ISBLK(st.st_mode)) {
		printf("bench: virtio-blk skipped: %s is not a block device (--disk BLOCKDEV)\n", b->disk);
		return;
	}
	for (int i = 0; i < rounds; i++) {
		blk_vmm(b, b->io_reps / rounds);
		if (peer)
			peer = qemu_blk_one(b, b->io_reps / rounds);
	}
}

/* The host side of the network figures: a UDP echo on 7777 and a TCP sink on 7778 that answers
 * with the byte count once the client shuts down its side. */
static void *udp_echo(void *arg)
{
	int s = *(int *)arg;
	char buf[2048];

	for (;;) {
		struct sockaddr_in6 from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

		if (n > 0)
			sendto(s, buf, n, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

/* A guest that stops (a reset, a kill at the time limit) mid-transfer takes its TCP stack with it:
 * no FIN ever comes, so a read without a limit waited forever. */
#define SINK_IDLE_S 60

static void *tcp_sink_conn(void *arg)
{
	int c = (int)(intptr_t)arg;
	char *buf = malloc(1 << 16);
	struct timeval tv = { SINK_IDLE_S, 0 };
	unsigned long long got = 0;
	ssize_t n = -1;

	if (buf && setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0)
		while ((n = read(c, buf, 1 << 16)) > 0)
			got += n;
	if (n == 0 && write(c, &got, sizeof(got)) < 0) /* the client shut down its side: answer */
		perror("bench: tcp sink");
	else if (n < 0)
		fprintf(stderr, "bench: tcp sink: a connection idle for %d s or failed (%s): dropped\n",
			SINK_IDLE_S, strerror(errno));
	free(buf);
	close(c);
	return NULL;
}

/* A thread a connection: one that hangs (its guest gone) never holds up the next boot's, which
 * waited behind it in the listen backlog until that guest, too, reached the bench's time limit. */
static void *tcp_sink(void *arg)
{
	int s = *(int *)arg;

	for (;;) {
		int c = accept(s, NULL, NULL);
		pthread_attr_t a;
		pthread_t t;

		if (c < 0)
			continue;
		if (pthread_attr_init(&a) || pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) ||
		    pthread_create(&t, &a, tcp_sink_conn, (void *)(intptr_t)c))
			tcp_sink_conn((void *)(intptr_t)c); /* no thread: served here, bounded by the limit */
		pthread_attr_destroy(&a);
	}
	return NULL;
}

static int listen_on(int type, int port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = IN6ADDR_ANY_INIT };
	int s = socket(AF_INET6, type, 0), one = 1;

	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) || (type == SOCK_STREAM && listen(s, 4)))
		return -1;
	return s;
}

/* Gives vmm's tap fe80::1 once it exists. */
void *tap_up(void *arg)
{
	(void)arg;
	for (int i = 0; i < 600; i++) {
		if (if_nametoindex(TAP)) { /* not /sys/class/net: sysfs shows the namespace that mounted it */
			int r = system("echo 0 > /proc/sys/net/ipv6/conf/" TAP "/accept_dad; ip link set " TAP
				       " up && ip -6 addr add fe80::1/64 dev " TAP);

			if (r)
				fprintf(stderr, "bench: setting up %s failed\n", TAP);
			return NULL;
		}
		usleep(100000);
	}
	return NULL;
}

/* netbench's lines as figures, named prefix + net.KIND.DIR + suffix. */
void net_figures(struct bench *b, const char *out, const char *prefix, const char *suffix)
{
	char name[80];

	for (const char *p = out; (p = strstr(p, "GUEST-NETBENCH ")); p++) {
		unsigned long rep;
		unsigned long long n, ns;

		if (sscanf(p, "GUEST-NETBENCH rr rep=%lu ops=%llu ns=%llu", &rep, &n, &ns) == 3 && n && ns) {
			snprintf(name, sizeof(name), "%snet.udp_rr.round_trip%s", prefix, suffix);
			add(b, name, "us", false, ns / 1e3 / n);
		} else if (sscanf(p, "GUEST-NETBENCH bulk rep=%lu bytes=%llu ns=%llu", &rep, &n, &ns) == 3 && ns) {
			snprintf(name, sizeof(name), "%snet.tcp_bulk.guest_to_host%s", prefix, suffix);
			add(b, name, "MiB/s", true, n / 1048576.0 / (ns / 1e9));
		}
	}
}

/* The previous run's tap gone (it goes with its last file descriptor), so tap_up configures the
 * next run's. */
void tap_gone(void)
{
	for (int i = 0; i < 100 && if_nametoindex(TAP); i++)
		usleep(50000);
}

/* One vmm boot of the test guest running netbench reps times: the default (vhost-net where it
 * opens) or vhost=off, whose figures are *.vhost_off. */
static void net_vmm(struct bench *b, int reps, bool vhost_off)
{
	pthread_t t3;
	char *argv[32], step[64];
	char *const extra[] = { "--net",
				vhost_off ? "tap=" TAP ",mac=02:00:00:00:00:02,vhost=off" : "tap=" TAP ",mac=02:00:00:00:00:02",
				NULL };
	const char *suffix = vhost_off ? ".vhost_off" : "";
	struct result r;

	tap_gone();
	pthread_create(&t3, NULL, tap_up, NULL);
	snprintf(step, sizeof(step), "netbench vmmbenchreps=%d vmmbenchms=%d", reps, b->io_ms);
	test_guest_argv(argv, 32, step, extra);
	run_cpu_per_op(argv, 900, b, "", suffix, &r);
	pthread_join(t3, NULL);
	net_figures(b, r.out, "", suffix);
	if (!strstr(r.out, "GUEST-NETBENCH ") || r.status)
		fail_note("virtio-net", &r);
	const char *off = strstr(r.err, "vhost-net off: ");

	if (!vhost_off && off) /* the default ran without vhost: say so next to its figures */
		printf("bench: virtio-net default: %.*s\n", (int)strcspn(off, "\n"), off);
	/* vmm's kicks and interrupts: the userspace path's (vhost's are the kernel's, uncounted), one
	 * boot's */
	if (vhost_off && !bench_find(b->rep, "exits.virtio_net.notifies"))
		device_exits(b, r.err, "virtio-net", "virtio_net");
	result_free(&r);
}

/* vmm with vhost-net (the default where it opens) and with vhost=off, QEMU without vhost-net and
 * with it, in turn: QEMU's userspace virtio-net is qemu.net.*.vhost_off beside vmm's vhost=off,
 * QEMU's vhost-net qemu_vhost.net.* beside vmm's default. With the peer one repetition per boot;
 * without it two boots of each of vmm's, alternating (on, off, off, on), so that a drifting load
 * weighs on both alike. */
void net(struct bench *b)
{
	static int us, ts;
	pthread_t t1, t2;
	bool peer = b->qemu, vhost = peer && qemu_vhost_usable();
	int rounds = peer ? b->io_reps : 2;

	/* our own namespace: the tap, its address and the servers are seen by nobody else */
	if (unshare(CLONE_NEWNET) < 0) {
		printf("bench: virtio-net skipped: unshare(CLONE_NEWNET): %s (needs root)\n", strerror(errno));
		return;
	}
	if ((us = listen_on(SOCK_DGRAM, 7777)) < 0 || (ts = listen_on(SOCK_STREAM, 7778)) < 0) {
		printf("bench: virtio-net skipped: cannot listen on ports 7777/7778: %s\n", strerror(errno));
		return;
	}
	pthread_create(&t1, NULL, udp_echo, &us);
	pthread_create(&t2, NULL, tcp_sink, &ts);
	for (int i = 0; i < rounds; i++) {
		int reps = peer ? b->io_reps / rounds : b->io_reps;

		net_vmm(b, reps, i % 2 == 1);
		net_vmm(b, reps, i % 2 == 0);
		if (peer)
			peer = qemu_net_one(b, reps, false);
		if (vhost)
			vhost = qemu_net_one(b, reps, true);
	}
}
