// SPDX-License-Identifier: MIT
/*
 * Lab: virtio-pci devices in a real guest. The test guest (/lab/guest.cpio.gz, guest-init.sh)
 * writes a pattern to a virtio-blk disk and powers off; the image file must hold it. A second boot
 * with the disk read-only reads it back and cannot write. Kicks must all come by ioeventfd and
 * interrupts by ITS MSI-X through irqfds.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

/* on the lab host's own disk (ext2 on virtio-blk, see init.sh): O_DIRECT and real AIO */
#define DISK "/disk/vmm-disk.img"
#define RAW_DISK "/dev/vdb"
#define DISK_SIZE (16 << 20)
#define PATTERN_SIZE (4 << 20)

static char kernel[256];

/* Boots the test guest running step; dev_opt/dev_arg add one device (-d or --net). */
static void boot_guest(const char *step, const char *dev_opt, const char *dev_arg, struct result *r)
{
	char params[256], darg[300];

	snprintf(kernel, sizeof(kernel), "%s", lab_kernel());
	snprintf(params, sizeof(params), "console=hvc0 panic=-1 quiet vmmtest=%s", step);
	snprintf(darg, sizeof(darg), "%s", dev_arg);
	char *const argv[] = { VMM, "run", "-k", kernel, "-i", "/lab/guest.cpio.gz", "-m", "512M",
			       "-c", "2", "--console", "virtio", "-p", params, (char *)dev_opt, darg, NULL };

	run_vmm(argv, 500, r);
}

struct blkstats {
	unsigned long long requests, max_inflight;
	double avg_inflight;
	char mode[16];
};

/* virtio-blk's own summary line: requests, I/O in flight, O_DIRECT or buffered. */
static int blk_stats(const char *err, struct blkstats *b)
{
	for (const char *p = err; (p = strstr(p, "virtio-blk (00:")); p++)
		if (sscanf(p, "virtio-blk (00:%*x.0): %llu requests, %lf in flight on average at submit "
			   "(at most %llu), %15[A-Za-z_]", &b->requests, &b->avg_inflight, &b->max_inflight,
			   b->mode) == 4)
			return 0;
	return -1;
}

/* A GUEST-IRQ line (from /proc/interrupts) naming both chip and action, with a non-zero count. */
static bool irq_line_fired(const char *out, const char *chip, const char *action)
{
	for (const char *p = out; (p = strstr(p, "GUEST-IRQ ")); p++) {
		size_t n = strcspn(p, "\n");
		char line[256];
		unsigned long c0 = 0, c1 = 0;

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (strstr(line, chip) && strstr(line, action) &&
		    sscanf(line, "GUEST-IRQ %*d: %lu %lu", &c0, &c1) >= 1 && c0 + c1 > 0)
			return true;
	}
	return false;
}

FIXTURE(virtio) {
	struct result r;
};
FIXTURE_SETUP(virtio) { memset(&self->r, 0, sizeof(self->r)); }
FIXTURE_TEARDOWN(virtio) { result_free(&self->r); }

TEST_F_TIMEOUT(virtio, blk_write_then_read_back_read_only, 900)
{
	char v[128];
	struct devstats s = { 0 };
	struct blkstats b = { 0 };
	unsigned long long requests;
	uint8_t *want = malloc(PATTERN_SIZE), *got = malloc(PATTERN_SIZE);
	int fd = open(DISK, O_RDWR | O_CREAT | O_TRUNC, 0644);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, DISK_SIZE));
	close(fd);

	/* 1: the guest writes the pattern and syncs; the host file must hold it after vmm exits */
	boot_guest("blkwrite", "-d", DISK, &self->r);
	TH_LOG("write boot: exit %d after %.1f s", self->r.status, self->r.secs);
	ASSERT_NE(NULL, strstr(self->r.out, "GUEST-WROTE"))
		TH_LOG("guest output: %s\nstderr: %s", self->r.out, self->r.err);
	EXPECT_EQ(0, self->r.status);
	ASSERT_NE(NULL, marker(self->r.out, "GUEST-SECTORS", v, sizeof(v)));
	EXPECT_EQ(DISK_SIZE / 512, atoll(v));
	ASSERT_NE(NULL, marker(self->r.out, "GUEST-RO", v, sizeof(v)));
	EXPECT_STREQ("0", v);
	EXPECT_NE(NULL, strstr(self->r.out, "GUEST-PCI 0000:00:02.0 0x1af4 0x1042"));
	/* a request queue per vCPU (VIRTIO_BLK_F_MQ), each on an ITS MSI-X of its own; the one of
	 * the CPU the guest's writes ran on fired (either vCPU's: the scheduler picks) */
	EXPECT_NE(NULL, strstr(self->r.out, "virtio1-req.1")) TH_LOG("%s", self->r.out);
	EXPECT_TRUE(irq_line_fired(self->r.out, "ITS-PCI-MSIX-0000:00:02.0", "-req.")) TH_LOG("%s", self->r.out);
	ASSERT_EQ(0, dev_summary(self->r.err, "virtio-blk", 2, &s)) TH_LOG("stderr: %s", self->r.err);
	ASSERT_EQ(0, blk_stats(self->r.err, &b)) TH_LOG("stderr: %s", self->r.err);
	requests = b.requests;
	TH_LOG("blk: %llu requests, %llu kicks (%llu by exit), %llu interrupts (%llu MSI-X), %llu BAR exits",
	       requests, s.kicks, s.kick_exits, s.irqs, s.msix, s.bar_exits);
	/* the 4 MiB pattern in writes of at most the guest's max_sectors (1280 KiB: seg_max 254 no
	 * longer splits them at 504 KiB), and the sync's flush */
	EXPECT_GE(requests, 5);
	EXPECT_EQ(0, s.kick_exits);
	EXPECT_EQ(s.irqs, s.msix);
	/* no spurious interrupts: never more than one per request */
	EXPECT_LE(s.irqs, requests);
	EXPECT_STREQ("O_DIRECT", b.mode) TH_LOG("the disk on /disk should take O_DIRECT");
	printf("# BLK-WRITE %llu requests: %llu kicks by ioeventfd, %llu by userspace exit (%.3f exits per "
	       "request); %llu interrupts by irqfd (%.2f per request); %.1f requests in flight on average "
	       "at submit, at most %llu (%s); %llu BAR exits, all driver set-up\n", requests,
	       s.kicks, s.kick_exits, (double)s.kick_exits / requests, s.irqs, (double)s.irqs / requests,
	       b.avg_inflight, b.max_inflight, b.mode, s.bar_exits);
	fd = open(DISK, O_RDONLY);
	ASSERT_EQ(PATTERN_SIZE, read(fd, got, PATTERN_SIZE));
	close(fd);
	lab_pattern(want, PATTERN_SIZE);
	EXPECT_EQ(0, memcmp(want, got, PATTERN_SIZE)) TH_LOG("the image does not hold the pattern");

	/* 2: read-only: the guest reads the same bytes and cannot write */
	result_free(&self->r);
	boot_guest("blkread", "-d", DISK ",ro", &self->r);
	TH_LOG("read boot: exit %d after %.1f s", self->r.status, self->r.secs);
	EXPECT_EQ(0, self->r.status);
	ASSERT_NE(NULL, marker(self->r.out, "GUEST-RO", v, sizeof(v))) TH_LOG("%s", self->r.out);
	EXPECT_STREQ("1", v);
	EXPECT_NE(NULL, strstr(self->r.out, "GUEST-RO-WRITE-REFUSED"));
	/* with the guest's own read-only flag cleared, the O_DIRECT write reaches vmm: IOERR */
	EXPECT_EQ(NULL, strstr(self->r.out, "GUEST-RO-DIRECT-WRITE-ACCEPTED")) TH_LOG("%s", self->r.out);
	printf("# BLK-RO %s | %s\n", marker(self->r.out, "GUEST-SETRW", v, sizeof(v)) ? v : "?",
	       strstr(self->r.out, "GUEST-RO-DIRECT-WRITE-REFUSED") ? "direct write refused" : "?");
	for (const char *k = self->r.out; (k = strstr(k, "GUEST-KMSG ")); k++)
		printf("# BLK-RO %.*s\n", (int)strcspn(k, "\n"), k);
	/* the guest compares what it reads with the pattern it regenerates */
	EXPECT_NE(NULL, strstr(self->r.out, "GUEST-READBACK match")) TH_LOG("%s", self->r.out);
	if (marker(self->r.out, "GUEST-READ-RATE", v, sizeof(v)))
		printf("# BLK-READ guest dd of the 16 MiB disk: %s\n", v);
	/* four O_DIRECT readers in the guest at once: vmm keeps their requests in flight together */
	memset(&b, 0, sizeof(b));
	ASSERT_EQ(0, blk_stats(self->r.err, &b)) TH_LOG("stderr: %s", self->r.err);
	ASSERT_EQ(0, dev_summary(self->r.err, "virtio-blk", 2, &s));
	printf("# BLK-READ-BOOT %llu requests, %llu interrupts (%.2f per request), %.1f in flight on "
	       "average at submit, at most %llu (%s)\n", b.requests, s.irqs, (double)s.irqs / b.requests,
	       b.avg_inflight, b.max_inflight, b.mode);
	EXPECT_GT(b.max_inflight, 1) TH_LOG("requests never overlapped: is the disk block-backed?");
	EXPECT_LE(s.irqs, b.requests);
	fd = open(DISK, O_RDONLY);
	ASSERT_EQ(PATTERN_SIZE, read(fd, got, PATTERN_SIZE));
	close(fd);
	EXPECT_EQ(0, memcmp(want, got, PATTERN_SIZE)) TH_LOG("the read-only boot changed the image");
	free(want);
	free(got);
}

/* A raw block device of the lab host as the guest's disk (BLKGETSIZE64, O_DIRECT). */
TEST_F_TIMEOUT(virtio, blk_block_device_as_disk, 900)
{
	char v[128];
	struct blkstats b = { 0 };
	uint8_t *want = malloc(PATTERN_SIZE), *got = malloc(PATTERN_SIZE);

	boot_guest("blkwrite", "-d", RAW_DISK, &self->r);
	TH_LOG("exit %d after %.1f s", self->r.status, self->r.secs);
	ASSERT_NE(NULL, strstr(self->r.out, "GUEST-WROTE")) TH_LOG("%s\nstderr: %s", self->r.out, self->r.err);
	EXPECT_EQ(0, self->r.status);
	ASSERT_NE(NULL, marker(self->r.out, "GUEST-SECTORS", v, sizeof(v)));
	EXPECT_EQ((128 << 20) / 512, atoll(v)); /* run.sh gives vdb 128 MiB */
	ASSERT_EQ(0, blk_stats(self->r.err, &b)) TH_LOG("stderr: %s", self->r.err);
	EXPECT_STREQ("O_DIRECT", b.mode);
	int fd = open(RAW_DISK, O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_EQ(PATTERN_SIZE, read(fd, got, PATTERN_SIZE));
	close(fd);
	lab_pattern(want, PATTERN_SIZE);
	EXPECT_EQ(0, memcmp(want, got, PATTERN_SIZE)) TH_LOG("the block device does not hold the pattern");
	printf("# BLK-BDEV %llu requests, %.1f in flight on average at submit, at most %llu (%s)\n",
	       b.requests, b.avg_inflight, b.max_inflight, b.mode);
	free(want);
	free(got);
}

TEST_F(virtio, blk_bad_images_refused)
{
	int fd = open("/tmp/odd.img", O_RDWR | O_CREAT | O_TRUNC, 0644);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 1000));
	close(fd);
	char *const odd[] = { VMM, "run", "-d", "/tmp/odd.img", NULL };
	char *const missing[] = { VMM, "run", "-d", "/tmp/no-such.img", NULL };

	EXPECT_TRUE(refused_with(odd, "multiple of 512", &self->r)) TH_LOG("%s", self->r.err);
	EXPECT_TRUE(refused_with(missing, "no-such.img", &self->r)) TH_LOG("%s", self->r.err);
	char *const chr[] = { VMM, "run", "-d", "/dev/null", NULL };
	char *const dir[] = { VMM, "run", "-d", "/tmp", NULL };

	EXPECT_TRUE(refused_with(chr, "not a character device", &self->r)) TH_LOG("%s", self->r.err);
	EXPECT_TRUE(refused_with(dir, "not a directory", &self->r)) TH_LOG("%s", self->r.err);
}

/* The host side of the net test, in a child: waits for vmm's tap, gives it fe80::1, and pings the
 * guest's fe80::2 until it answers. Exit status 0 when it did. Link-local only: nothing leaves. */
static int host_side(const char *tap)
{
	char cmd[256];

	/* not /sys/class/net: sysfs shows the namespace that mounted it */
	for (int i = 0; i < 1200 && !if_nametoindex(tap); i++)
		usleep(100 * 1000);
	snprintf(cmd, sizeof(cmd), "echo 0 > /proc/sys/net/ipv6/conf/%s/accept_dad; ip link set %s up && "
		 "ip -6 addr add fe80::1/64 dev %s", tap, tap, tap);
	if (system(cmd))
		return 2;
	snprintf(cmd, sizeof(cmd), "ping -6 -c 1 -W 1 fe80::2%%%s >/dev/null 2>&1", tap);
	for (int i = 0; i < 240; i++) {
		if (system(cmd) == 0)
			return 0;
		usleep(250 * 1000);
	}
	return 1;
}

struct netrun {
	unsigned long long rx, tx; /* frames vmm's own worker moved */
	struct devstats d;
};

/* A guest on --net net_arg in a network namespace of the test's own pings the host and is pinged
 * by it; its interrupts are ITS MSI-X (by irqfd, whoever raises them). */
static void net_boot(struct __test_metadata *_metadata, struct result *r, const char *net_arg,
		     struct netrun *n)
{
	char v[64];
	const char *key = "virtio-net (00:02.0): ";
	int frames = 0;

	ASSERT_EQ(0, unshare(CLONE_NEWNET)) TH_LOG("a network namespace for the tap: %s", strerror(errno));
	pid_t host = fork();

	if (host == 0)
		_exit(host_side("vmmtap0"));
	boot_guest("net", "--net", net_arg, r);
	int st = -1;

	waitpid(host, &st, 0);
	TH_LOG("--net %s: exit %d after %.1f s; host ping status %d", net_arg, r->status, r->secs,
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	EXPECT_EQ(0, r->status) TH_LOG("stderr: %s", r->err);
	ASSERT_NE(NULL, marker(r->out, "GUEST-MAC", v, sizeof(v))) TH_LOG("%s", r->out);
	EXPECT_STREQ("02:00:00:00:00:02", v);
	ASSERT_NE(NULL, marker(r->out, "GUEST-PING6", v, sizeof(v))) TH_LOG("%s", r->out);
	EXPECT_STREQ("1", v) TH_LOG("the guest could not ping the host: %s", r->out);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("the host could not ping the guest");
	EXPECT_TRUE(irq_line_fired(r->out, "ITS-PCI-MSIX-0000:00:02.0", "-input.0")) TH_LOG("%s", r->out);
	n->d = (struct devstats){ .kick_exits = 1 };
	ASSERT_EQ(0, dev_summary(r->err, "virtio-net", 2, &n->d)) TH_LOG("%s", r->err);
	for (const char *p = r->err; !frames && (p = strstr(p, key)); p++)
		frames = sscanf(p + strlen(key), "%llu frames received, %llu sent", &n->rx, &n->tx) == 2;
	ASSERT_TRUE(frames) TH_LOG("%s", r->err);
	EXPECT_EQ(0, n->d.kick_exits);
	EXPECT_EQ(n->d.irqs, n->d.msix);
}

/* vhost=off: vmm's worker moves the frames. */
TEST_F_TIMEOUT(virtio, net_tap_ipv6_link_local_both_ways, 600)
{
	struct netrun n;

	net_boot(_metadata, &self->r, "tap=vmmtap0,mac=02:00:00:00:00:02,vhost=off", &n);
	EXPECT_GT(n.rx, 0);
	EXPECT_GT(n.tx, 0);
	EXPECT_NE(NULL, strstr(self->r.err, "vhost-net off: vhost=off")) TH_LOG("%s", self->r.err);
	printf("# NET %llu frames in, %llu out; %llu kicks by ioeventfd, %llu by exit; %llu interrupts "
	       "by irqfd; %llu BAR exits (set-up)\n", n.rx, n.tx, n.d.kicks, n.d.kick_exits, n.d.irqs,
	       n.d.bar_exits);
}

/* vhost=on: the kernel moves every frame, vmm's worker none; the guest's interrupts still arrive
 * as MSI-X (vhost's call is the vector's irqfd). */
TEST_F_TIMEOUT(virtio, net_vhost_on_no_vmm_thread_on_the_data_path, 600)
{
	struct netrun n;

	if (access("/dev/vhost-net", R_OK | W_OK))
		SKIP(return, "no /dev/vhost-net in the lab host (tests/lab/modules.list: vhost_net)");
	net_boot(_metadata, &self->r, "tap=vmmtap0,mac=02:00:00:00:00:02,vhost=on", &n);
	EXPECT_EQ(0, n.rx) TH_LOG("vmm's worker received frames vhost should have");
	EXPECT_EQ(0, n.tx) TH_LOG("vmm's worker sent frames vhost should have");
	EXPECT_NE(NULL, strstr(self->r.err, "vhost-net on: it carried 1 driver session")) TH_LOG("%s", self->r.err);
	EXPECT_EQ(NULL, strstr(self->r.err, "without vhost-net")) TH_LOG("%s", self->r.err);
	printf("# NET-VHOST vmm's worker: %llu frames in, %llu out; %llu kicks seen by vmm, %llu by exit; "
	       "%llu BAR exits (set-up)\n", n.rx, n.tx, n.d.kicks, n.d.kick_exits, n.d.bar_exits);
}

/* vhost=on where the device does not open: one line says why, and the userspace path serves. */
TEST_F_TIMEOUT(virtio, net_vhost_missing_falls_back_and_says_why, 600)
{
	struct netrun n;

	net_boot(_metadata, &self->r, "tap=vmmtap0,mac=02:00:00:00:00:02,vhost=on,vhost-dev=/tmp/no-vhost-net", &n);
	EXPECT_NE(NULL, strstr(self->r.err, "vhost-net off, frames go through vmm's worker: cannot open "
				 "/tmp/no-vhost-net: No such file or directory")) TH_LOG("%s", self->r.err);
	EXPECT_GT(n.rx, 0);
	EXPECT_GT(n.tx, 0);
}

TEST_HARNESS_MAIN
