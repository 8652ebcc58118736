// SPDX-License-Identifier: MIT
/*
 * Lab: `vmm run` boots Debian's arm64 kernel (the lab host's own, found in /boot) with the built-in
 * guest, and refuses bad input with a clear message and a non-zero exit.
 */
#include <fcntl.h>
#include <libfdt.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

FIXTURE(boot) {
	struct result r;
};
FIXTURE_SETUP(boot) { memset(&self->r, 0, sizeof(self->r)); }
FIXTURE_TEARDOWN(boot) { result_free(&self->r); }

TEST_F_TIMEOUT(boot, builtin_guest_two_cpus, 600)
{
	/* quiet: every console byte is an MMIO exit, and the full log costs ~30 s nested (make demo
	 * shows it); the banner still travels through the 8250 driver and its THRE interrupts */
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "512M", "-p",
			       "console=ttyS0 earlycon panic=-1 quiet", NULL };
	struct result *r = &self->r;

	run_vmm(argv, 540, r);
	TH_LOG("exit %d after %.1f s; banner at %.1f s after start", r->status, r->secs, r->banner_secs);
	const char *b = strstr(r->out, "vmm-guest: ");

	ASSERT_NE(NULL, b) TH_LOG("no banner; stderr: %s", r->err);
	char line[256];

	snprintf(line, sizeof(line), "%.*s", (int)strcspn(b, "\r\n"), b);
	TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "2 CPUs online"));
	EXPECT_NE(NULL, strstr(line, "Linux 6.12"));
	/* the guest powered off through PSCI (an emergency-level message, printed even when quiet) */
	EXPECT_NE(NULL, strstr(r->out, "reboot: Power down")) TH_LOG("%s", r->out);
	EXPECT_EQ(0, r->status) TH_LOG("stderr: %s", r->err);
	printf("# BOOT-TIME %.2f s from vmm start to the guest's banner\n", r->banner_secs);
}

/* The console on virtio-pci: kicks by ioeventfd, interrupts as ITS MSI-X through irqfds. */
TEST_F_TIMEOUT(boot, virtio_console_over_its_msix, 600)
{
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "512M", "--console", "virtio", NULL };
	struct result *r = &self->r;
	struct devstats d = { 0 };

	run_vmm(argv, 540, r);
	TH_LOG("exit %d after %.1f s; banner at %.1f s", r->status, r->secs, r->banner_secs);
	ASSERT_NE(NULL, strstr(r->out, "vmm-guest: ")) TH_LOG("stderr: %s", r->err);
	EXPECT_NE(NULL, strstr(r->out, "2 CPUs online"));
	EXPECT_EQ(0, r->status);
	ASSERT_EQ(0, dev_summary(r->err, "virtio-console", 1, &d)) TH_LOG("stderr: %s", r->err);
	EXPECT_GT(d.kicks, 10);
	EXPECT_EQ(0, d.kick_exits);
	EXPECT_GT(d.irqs, 10);
	EXPECT_EQ(d.irqs, d.msix);
	printf("# VIRTIO-CONSOLE-BOOT %.2f s to the banner; %llu kicks, %llu interrupts, %llu BAR exits "
	       "(set-up only)\n", r->banner_secs, d.kicks, d.irqs, d.bar_exits);
}

TEST_F_TIMEOUT(boot, guest_panic_is_a_crash, 600)
{
	/* No init anywhere: the kernel panics, resets (panic=-1), and vmm reports a crash. */
	char *const argv[] = { VMM, "run", "-m", "256M", "-p",
			       "console=ttyS0 quiet panic=-1 rdinit=/nonexistent init=/nonexistent", NULL };

	run_vmm(argv, 540, &self->r);
	TH_LOG("exit %d after %.1f s", self->r.status, self->r.secs);
	EXPECT_NE(NULL, strstr(self->r.out, "Kernel panic - not syncing"));
	EXPECT_EQ(3, self->r.status) TH_LOG("stderr: %s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "crashed"));
}

TEST_F(boot, sigterm_stops_cleanly)
{
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "256M", NULL };

	run_vmm_term(argv, 60, 3, &self->r);
	EXPECT_EQ(128 + SIGTERM, self->r.status) TH_LOG("stderr: %s", self->r.err);
	/* stopped by vmm itself: the exit summary lists both vCPUs */
	EXPECT_NE(NULL, strstr(self->r.err, "stopped by a signal"));
	EXPECT_NE(NULL, strstr(self->r.err, "vmm: 1 "));
}

/* The same with virtio devices, whose worker threads exist before vm_run: the signal must still
 * reach vmm's own handling (a default-action kill also gives 143, so the summary is the proof),
 * and what the guest wrote to the disk must be in the image. */
#define SIGTERM_DISK "/tmp/vmm-sigterm-disk.img"

TEST_F_TIMEOUT(boot, sigterm_with_devices_stops_cleanly, 600)
{
	char *const extra[] = { "-d", SIGTERM_DISK, "--net", "tap=vmmtap9", NULL };
	char *argv[40];
	const struct run_opts o = { .timeout = 500, .term_on = "GUEST-WROTE" };
	struct result *r = &self->r;
	struct devstats d;
	const size_t psize = 4 << 20;
	int fd = open(SIGTERM_DISK, O_RDWR | O_CREAT | O_TRUNC, 0644);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 16 << 20));
	close(fd);
	test_guest_argv(argv, 40, "blkwrite-hold", extra);
	run_vmm_opts(argv, &o, r);
	TH_LOG("exit %d after %.1f s, %.2f s after SIGTERM", r->status, r->secs, r->term_secs);
	ASSERT_NE(NULL, strstr(r->out, "GUEST-WROTE")) TH_LOG("out: %s\nerr: %s", r->out, r->err);
	EXPECT_EQ(128 + SIGTERM, r->status);
	EXPECT_LT(r->term_secs, 10);
	EXPECT_NE(NULL, strstr(r->err, "stopped by a signal")) TH_LOG("stderr: %s", r->err);
	EXPECT_NE(NULL, strstr(r->err, "vmm: 0 "));
	EXPECT_NE(NULL, strstr(r->err, "vmm: 1 "));
	EXPECT_EQ(0, dev_summary(r->err, "virtio-blk", 2, &d)) TH_LOG("stderr: %s", r->err);
	EXPECT_EQ(0, dev_summary(r->err, "virtio-net", 3, &d)) TH_LOG("stderr: %s", r->err);
	uint8_t *want = malloc(psize), *got = malloc(psize);

	fd = open(SIGTERM_DISK, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)psize, read(fd, got, psize));
	close(fd);
	lab_pattern(want, psize);
	EXPECT_EQ(0, memcmp(want, got, psize)) TH_LOG("the image does not hold what the guest wrote");
	free(want);
	free(got);
	unlink(SIGTERM_DISK);
}

/* Text is not a crash: a userspace process printing the panic banner, then a clean poweroff. */
TEST_F_TIMEOUT(boot, userspace_panic_banner_is_not_a_crash, 600)
{
	char *argv[40];

	test_guest_argv(argv, 40, "fakepanic", NULL);
	run_vmm(argv, 500, &self->r);
	TH_LOG("exit %d after %.1f s", self->r.status, self->r.secs);
	ASSERT_NE(NULL, strstr(self->r.out, "GUEST-END fakepanic")) TH_LOG("stderr: %s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "Kernel panic - not syncing: only text"));
	EXPECT_EQ(0, self->r.status) TH_LOG("stderr: %s", self->r.err);
}

/* stdout a full pipe nobody reads: the guest keeps printing, SIGTERM still stops vmm at once. */
TEST_F_TIMEOUT(boot, blocked_stdout_does_not_block_sigterm, 600)
{
	char *argv[40];
	const struct run_opts o = { .timeout = 300, .out = STDOUT_UNREAD };
	struct result *r = &self->r;

	test_guest_argv(argv, 40, "flood", NULL);
	run_vmm_opts(argv, &o, r);
	TH_LOG("exit %d after %.1f s, %.2f s after SIGTERM", r->status, r->secs, r->term_secs);
	ASSERT_GE(r->term_secs, 0) TH_LOG("stdout never filled; stderr: %s", r->err);
	EXPECT_EQ(128 + SIGTERM, r->status) TH_LOG("stderr: %s", r->err);
	EXPECT_LT(r->term_secs, 5);
	EXPECT_NE(NULL, strstr(r->err, "stopped by a signal")) TH_LOG("stderr: %s", r->err);
	EXPECT_NE(NULL, strstr(r->err, "vmm: 1 "));
	EXPECT_NE(NULL, strstr(r->err, "dropped")) TH_LOG("no count of dropped output: %s", r->err);
	printf("# BLOCKED-STDOUT exit %.2f s after SIGTERM\n", r->term_secs);
}

/* `vmm run | head -c 100`: the reader goes away; vmm keeps running until the guest ends. */
TEST_F_TIMEOUT(boot, stdout_closed_early_is_not_fatal, 600)
{
	char *argv[40];
	const struct run_opts o = { .timeout = 500, .out = STDOUT_CLOSE, .close_after = 100 };
	struct result *r = &self->r;

	test_guest_argv(argv, 40, "chatty", NULL);
	run_vmm_opts(argv, &o, r);
	TH_LOG("exit %d after %.1f s", r->status, r->secs);
	EXPECT_EQ(0, r->status) TH_LOG("stderr: %s", r->err);
	EXPECT_NE(NULL, strstr(r->err, "the guest powered off")) TH_LOG("stderr: %s", r->err);
	EXPECT_NE(NULL, strstr(r->err, "vmm: 1 "));
}

/* A terminal on stdin: raw while the guest runs, Ctrl-A x quits, and the settings come back. */
TEST_F(boot, terminal_raw_then_restored)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);

	ASSERT_LE(0, m);
	ASSERT_EQ(0, grantpt(m));
	ASSERT_EQ(0, unlockpt(m));
	int sl = open(ptsname(m), O_RDWR | O_NOCTTY);
	struct termios before, during, after;

	ASSERT_LE(0, sl);
	ASSERT_EQ(0, tcgetattr(sl, &before));
	ASSERT_TRUE(before.c_lflag & ICANON);
	pid_t pid = fork();

	if (pid == 0) {
		int nul = open("/dev/null", O_WRONLY);

		dup2(sl, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		execl(VMM, VMM, "run", "-m", "256M", NULL);
		_exit(127);
	}
	/* vmm goes raw once the guest runs; set-up time varies with the machine, so wait for it */
	for (int i = 0; i < 600; i++) {
		ASSERT_EQ(0, tcgetattr(sl, &during));
		if (!(during.c_lflag & ICANON))
			break;
		usleep(100 * 1000);
	}
	EXPECT_FALSE(during.c_lflag & (ICANON | ECHO)) TH_LOG("terminal not in raw mode while running");
	ASSERT_EQ(2, write(m, "\001x", 2));
	int st = 0;

	for (int i = 0; i < 300 && waitpid(pid, &st, WNOHANG) == 0; i++)
		usleep(100 * 1000);
	if (waitpid(pid, &st, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("Ctrl-A x did not stop vmm (status 0x%x)", st);
	ASSERT_EQ(0, tcgetattr(sl, &after));
	EXPECT_EQ(before.c_lflag, after.c_lflag);
	EXPECT_EQ(before.c_iflag, after.c_iflag);
	close(sl);
	close(m);
}

TEST_F(boot, garbage_kernel_refused)
{
	const char *path = "/tmp/garbage-kernel";
	char buf[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7 + 3);
	ASSERT_EQ((ssize_t)sizeof(buf), write(fd, buf, sizeof(buf)));
	close(fd);
	char *const argv[] = { VMM, "run", "-k", (char *)path, NULL };

	run_vmm(argv, 60, &self->r);
	EXPECT_EQ(1, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "not an arm64 Image")) TH_LOG("stderr: %s", self->r.err);

	/* a valid-looking header that claims an absurd image_size (a wrap-around bait) */
	uint64_t huge = ~0ULL - 0xfff;

	memset(buf, 0, sizeof(buf));
	memcpy(buf + 16, &huge, 8);
	memcpy(buf + 56, "ARM\x64", 4);
	fd = open(path, O_WRONLY | O_TRUNC);
	ASSERT_EQ((ssize_t)sizeof(buf), write(fd, buf, sizeof(buf)));
	close(fd);
	result_free(&self->r);
	run_vmm(argv, 60, &self->r);
	EXPECT_EQ(1, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "too small for this kernel")) TH_LOG("stderr: %s", self->r.err);
}

TEST_F(boot, bad_options_refused)
{
	char *const too_many[] = { VMM, "run", "-c", "124", NULL };
	char *const too_big[] = { VMM, "run", "-m", "64G", NULL };
	char *const bad_size[] = { VMM, "run", "-m", "12X", NULL };

	EXPECT_TRUE(refused_with(too_many, "--cpus", &self->r)) TH_LOG("stderr: %s", self->r.err);
	EXPECT_TRUE(refused_with(too_big, "host's", &self->r)) TH_LOG("stderr: %s", self->r.err);
	EXPECT_TRUE(refused_with(bad_size, "--mem", &self->r)) TH_LOG("stderr: %s", self->r.err);
}

TEST_F(boot, dump_dtb)
{
	const char *path = "/tmp/vmm.dtb";
	char *const argv[] = { VMM, "run", "-c", "2", "-m", "256M", "--dump-dtb", (char *)path, NULL };
	static char dtb[1 << 16];

	unlink(path);
	run_vmm(argv, 60, &self->r);
	ASSERT_EQ(0, self->r.status) TH_LOG("stderr: %s", self->r.err);
	int fd = open(path, O_RDONLY);

	ASSERT_LE(0, fd);
	ssize_t n = read(fd, dtb, sizeof(dtb));

	close(fd);
	ASSERT_GT(n, 0);
	ASSERT_EQ(0, fdt_check_header(dtb));
	EXPECT_LE(0, fdt_path_offset(dtb, "/cpus/cpu@0"));
	EXPECT_LE(0, fdt_path_offset(dtb, "/cpus/cpu@1"));
	EXPECT_GT(0, fdt_path_offset(dtb, "/cpus/cpu@2"));
	EXPECT_LE(0, fdt_path_offset(dtb, "/chosen"));
	/* the built-in initramfs was placed */
	EXPECT_NE(NULL, fdt_getprop(dtb, fdt_path_offset(dtb, "/chosen"), "linux,initrd-start", NULL));
}

/* Whether the space-separated list holds word (cpuinfo's Features). */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
			return true;
	return false;
}

/* Two readings "A B" of a counter: non-zero and increasing. */
static bool rising(const char *v)
{
	unsigned long long a = 0, b = 0;

	return v && sscanf(v, "%llu %llu", &a, &b) == 2 && a > 0 && b > a;
}

/* The features the cpufeat guest reads from cpuinfo that --cpu turns on and off. */
static const char *const cpufeat_words[] = { "sve", "paca", "pacg" };

/* Boots the cpufeat guest with vmm's extra options; its GUEST-FEATURES line in feat (logged as
 * # CPUFEAT-TAG-FEATURES), NULL when it never said it. */
static const char *cpufeat_boot(struct result *r, char *const *extra, const char *tag, char *feat, size_t size)
{
	char *argv[40];

	test_guest_argv(argv, 40, "cpufeat", extra);
	run_vmm(argv, 540, r);
	if (!marker(r->out, "GUEST-FEATURES", feat, size))
		return NULL;
	printf("# CPUFEAT-%s-FEATURES %s\n", tag, feat);
	return feat;
}

/* vmm caps names the vCPU features, with this host's answers (the lab's -cpu max has them all). */
TEST(caps_list_cpu_features)
{
	char *const argv[] = { VMM, "caps", NULL };
	static const char *const caps[] = { "KVM_CAP_ARM_SVE", "KVM_CAP_ARM_PTRAUTH_ADDRESS",
					    "KVM_CAP_ARM_PTRAUTH_GENERIC", "KVM_CAP_ARM_PMU_V3", "KVM_CAP_ARM_MTE" };
	struct result r = { 0 };

	run_vmm(argv, 60, &r);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		const char *l = strstr(r.out, caps[i]);

		ASSERT_NE(NULL, l) TH_LOG("%s missing: %s", caps[i], r.out);
		TH_LOG("%.*s", (int)strcspn(l, "\n"), l);
		printf("# CAPS %.*s\n", (int)strcspn(l, "\n"), l);
	}
	result_free(&r);
}

/* By default the vCPUs get the host's SVE, pointer auth and PMU; the guest sees and uses them. */
TEST_F_TIMEOUT(boot, cpu_features_default, 600)
{
	char *const extra[] = { "--stats", "/tmp/cpufeat.json", NULL };
	struct result *r = &self->r;
	char feat[1024], kmsg[256], v[128];

	unlink("/tmp/cpufeat.json");
	const char *got = cpufeat_boot(r, extra, "ON", feat, sizeof(feat));

	TH_LOG("exit %d after %.1f s", r->status, r->secs);
	ASSERT_NE(NULL, got) TH_LOG("%s\n%s", r->out, r->err);
	for (size_t i = 0; i < sizeof(cpufeat_words) / sizeof(cpufeat_words[0]); i++) {
		EXPECT_TRUE(has_word(feat, cpufeat_words[i])) TH_LOG("%s missing: %s", cpufeat_words[i], feat);
	}
	EXPECT_NE(NULL, marker(r->out, "GUEST-PMUKMSG", kmsg, sizeof(kmsg))) TH_LOG("%s", r->out);
	printf("# CPUFEAT-ON-PMU %s\n", kmsg);
	EXPECT_NE(NULL, strstr(r->out, "hw perfevents: enabled with armv8_pmuv3")) TH_LOG("%s", r->out);
	EXPECT_TRUE(rising(marker(r->out, "GUEST-PMU-CYCLES", v, sizeof(v)))) TH_LOG("cycles: %s", r->out);
	printf("# CPUFEAT-ON-CYCLES %s\n", v);
	EXPECT_TRUE(rising(marker(r->out, "GUEST-PMU-EVENT", v, sizeof(v)))) TH_LOG("event counter: %s", r->out);
	printf("# CPUFEAT-ON-EVENT %s\n", v);
	if (marker(r->out, "GUEST-PMU-INSTRUCTIONS", v, sizeof(v)))
		printf("# CPUFEAT-ON-INSTRUCTIONS %s\n", v);
	ASSERT_NE(NULL, marker(r->out, "GUEST-SVE-VL", v, sizeof(v)));
	printf("# CPUFEAT-ON-SVE-VL %s\n", v);
	EXPECT_NE(NULL, strstr(v, "bytes")) TH_LOG("%s", v);
	const char *line = strstr(r->err, "arm64 vCPUs: ");

	ASSERT_NE(NULL, line) TH_LOG("stderr: %s", r->err);
	printf("# CPUFEAT-ON-LINE %.*s\n", (int)strcspn(line, "\n"), line);
	EXPECT_NE(NULL, strstr(line, "sve (vectors up to "));
	EXPECT_NE(NULL, strstr(line, "pauth on, pmu on"));
	size_t n;
	char *json = lab_slurp("/tmp/cpufeat.json", &n);

	ASSERT_NE(NULL, json);
	EXPECT_NE(NULL, strstr(json, "\"cpu_features\":{\"sve\":true,")) TH_LOG("%.400s", json);
	EXPECT_NE(NULL, strstr(json, "\"pauth\":true,\"pmu\":true,\"pmu_intid\":23}"));
	free(json);
	EXPECT_EQ(0, r->status) TH_LOG("stderr: %s", r->err);
}

/* Each feature turned off: the guest sees it gone (what every guest saw before --cpu existed). */
TEST_F_TIMEOUT(boot, cpu_features_off, 600)
{
	char *const extra[] = { "--cpu", "sve=off,pauth=off,pmu=off", NULL };
	struct result *r = &self->r;
	char feat[1024], v[128];

	const char *got = cpufeat_boot(r, extra, "OFF", feat, sizeof(feat));

	TH_LOG("exit %d after %.1f s", r->status, r->secs);
	ASSERT_NE(NULL, got) TH_LOG("%s\n%s", r->out, r->err);
	for (size_t i = 0; i < sizeof(cpufeat_words) / sizeof(cpufeat_words[0]); i++) {
		EXPECT_FALSE(has_word(feat, cpufeat_words[i])) TH_LOG("%s still there: %s", cpufeat_words[i], feat);
	}
	EXPECT_EQ(NULL, strstr(r->out, "hw perfevents: enabled")) TH_LOG("%s", r->out);
	printf("# CPUFEAT-OFF-PMU %s\n", marker(r->out, "GUEST-PMUKMSG", v, sizeof(v)) ? v : "(no PMU line)");
	EXPECT_NE(NULL, marker(r->out, "GUEST-PMU", v, sizeof(v)));
	EXPECT_NE(NULL, strstr(v, "none")) TH_LOG("GUEST-PMU %s", v);
	EXPECT_NE(NULL, marker(r->out, "GUEST-SVE-VL", v, sizeof(v)));
	EXPECT_NE(NULL, strstr(v, "none")) TH_LOG("GUEST-SVE-VL %s", v);
	EXPECT_NE(NULL, strstr(r->err, "arm64 vCPUs: sve off, pauth off, pmu off")) TH_LOG("%s", r->err);
	EXPECT_EQ(0, r->status) TH_LOG("stderr: %s", r->err);
}

TEST_HARNESS_MAIN
