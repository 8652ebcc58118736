// SPDX-License-Identifier: MIT
/*
 * The bad-input matrix's cases that need no KVM, against the vmm binary itself (build/ARCH/vmm
 * beside this test; the arm64 one through qemu-user): each refusal exits 1 with a message naming
 * the option and what it takes, and prints its "# MATRIX" line (scripts/matrix.sh). The cases that
 * need /dev/kvm are tests/lab/badinput_test.c's.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

/* build/ARCH[-san]/tests/unit/cli_test -> build/ARCH/vmm (the sanitized build has no vmm). */
static void vmm_path(char *buf, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = 0;
	for (int up = 0; up < 3; up++) {
		char *s = strrchr(self, '/');

		if (s)
			*s = 0;
	}
	size_t len = strlen(self);

	if (len > 4 && !strcmp(self + len - 4, "-san"))
		self[len - 4] = 0;
	snprintf(buf, size, "%s/vmm", self);
}

/* Runs vmm with args; its exit status and stderr. */
static int run(char *const args[], char *err, size_t size)
{
	char vmm[PATH_MAX];
	char *argv[64];
	int n = 0, p[2], st;

	vmm_path(vmm, sizeof(vmm));
	argv[n++] = "qemu-aarch64-static";
	argv[n++] = vmm;
	for (int i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();

	if (pid == 0) {
		dup2(p[1], STDERR_FILENO);
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		execv(vmm, argv + 1);
		if (errno == ENOEXEC) /* the arm64 vmm on an x86 machine without binfmt */
			execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	size_t got = 0;
	ssize_t r;

	while ((r = read(p[0], err + got, size - 1 - got)) > 0)
		got += r;
	err[got] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct bad_case {
	const char *name;
	const char *args[24];
	const char *msg;
};

FIXTURE(cli) {
	char err[8192];
};
FIXTURE_SETUP(cli) { self->err[0] = 0; }
FIXTURE_TEARDOWN(cli) { }

FIXTURE_VARIANT(cli) {
	struct bad_case c;
};

#define CASE(id, label, message, ...)                                                              \
	FIXTURE_VARIANT_ADD(cli, id) { .c = { label, { __VA_ARGS__, NULL }, message } }

CASE(unknown_option, "unknown option", "unknown option '--frobnicate' (vmm run --help lists them)",
     "run", "--frobnicate");
CASE(unknown_command, "unknown command", "unknown command 'frob' (vmm --help lists the commands)", "frob");
CASE(no_command, "no command", "no command given (vmm --help lists them)", NULL);
CASE(unknown_global_option, "unknown option before the command", "unknown option '--bogus' (vmm --help "
     "lists them)", "--bogus");
CASE(missing_value, "option without its value", "option '-m' needs a value", "run", "-m");
CASE(extra_argument, "unexpected argument", "unexpected argument 'Image' (vmm run --help)", "run", "Image");
CASE(bad_size_suffix, "bad size suffix", "-m/--mem takes a size of at least 64M such as 512M or 2G, not '512X'",
     "run", "-m", "512X");
CASE(negative_size, "negative RAM size", "not '-1G'", "run", "-m", "-1G");
CASE(huge_size, "RAM size that overflows", "not '99999999999T'", "run", "-m", "99999999999T");
CASE(ram_too_small, "RAM too small", "at least 64M", "run", "-m", "32M");
CASE(zero_vcpus, "0 vCPUs", "-c/--cpus takes a number of vCPUs from 1 to 123", "run", "-c", "0");
CASE(too_many_vcpus, "more vCPUs than the board allows", "from 1 to 123 (the board's room for GIC "
     "redistributors), not '124'", "run", "-c", "124");
CASE(vcpus_not_a_number, "vCPUs not a number", "not '2x'", "run", "-c", "2x");
CASE(bad_console, "unknown console", "--console takes serial, virtio or none, not 'tty'", "run",
     "--console", "tty");
CASE(bad_kernel_format, "unknown kernel format", "--kernel-format takes auto, image or flat, not 'elf'",
     "run", "--kernel-format", "elf");
CASE(net_without_tap, "--net without tap=", "--net mac=02:00:00:00:00:01: tap=NAME is required", "run",
     "--net", "mac=02:00:00:00:00:01");
CASE(net_multicast_mac, "--net with a multicast MAC", "a unicast address", "run", "--net",
     "tap=t0,mac=01:00:00:00:00:01");
CASE(net_long_tap, "--net tap name too long", "at most 15 characters", "run", "--net",
     "tap=a-very-long-tap-name");
CASE(bad_bdf, "bad BDF", "--vfio 0000:00:13: expected a PCI address like 0000:00:13.0", "run", "--vfio",
     "0000:00:13");
CASE(bdf_function, "BDF function out of range", "device is 0-1f and function 0-7", "run", "--vfio",
     "00:13.9");
CASE(bdf_twice, "one device passed through twice", "0000:00:13.0 is given twice", "run", "--vfio",
     "00:13.0", "--vfio", "0000:00:13.0");
CASE(two_devices_one_slot, "two devices at one guest address", "guest slot 3 is already 0000:00:13.0's",
     "run", "--vfio", "00:13.0,addr=3", "--vfio", "00:05.0,addr=3");
CASE(bad_slot, "guest slot out of range", "addr= takes the guest's PCI slot, 1 to 31", "run", "--vfio",
     "00:13.0,addr=40");
CASE(bad_token, "VF token not a UUID", "token=UUID (36 characters)", "run", "--vfio", "00:13.0,token=abc");
CASE(bad_backend, "unknown VFIO backend", "--vfio-backend takes auto, legacy or iommufd, not 'uio'",
     "run", "--vfio-backend", "uio");
CASE(bad_halt_poll, "negative halt-poll ceiling", "--halt-poll-ns takes a whole number of nanoseconds",
     "run", "--halt-poll-ns", "-5");
CASE(bad_summary, "unknown exit-summary form", "--summary takes short or full, not 'long'", "run", "--summary",
     "long");
CASE(bad_timeout, "zero --timeout", "--timeout takes whole seconds from 1", "run", "--timeout", "0");
CASE(too_many_disks, "more than 8 disks", "-d/--disk: at most 8 disks", "run", "-d", "a", "-d", "b", "-d",
     "c", "-d", "d", "-d", "e", "-d", "f", "-d", "g", "-d", "h", "-d", "i");
CASE(empty_disk_path, "empty disk path", "-d/--disk: the path is empty", "run", "-d", ",ro");
CASE(ctl_bad_request, "vmm ctl with no socket", "cannot reach the vmm at /nonexistent/vm.ctl", "ctl",
     "/nonexistent/vm.ctl", "get");
CASE(ctl_poll_control_value, "poll-control value not 0 or 1", "the value is 0 (KVM never halt-polls for the "
     "vCPU) or 1 (it may), not 'on'", "ctl", "/nonexistent/vm.ctl", "set", "poll-control", "0", "on");
CASE(ctl_poll_control_vcpu, "poll-control vCPU not a number", "VCPU is a vCPU number or all, not '-1'", "ctl",
     "/nonexistent/vm.ctl", "set", "poll-control", "-1", "0");

TEST_F(cli, refused)
{
	int st = run((char *const *)variant->c.args, self->err, sizeof(self->err));
	const char *e = strstr(self->err, "error: ");
	const char *line = e ? e : self->err;

	printf("# MATRIX %s | %d | %.*s\n", variant->c.name, st, (int)strcspn(line, "\n"), line);
	EXPECT_EQ(1, st) TH_LOG("%s: %s", variant->c.name, self->err);
	EXPECT_NE(NULL, strstr(self->err, variant->c.msg)) TH_LOG("%s: %s", variant->c.name, self->err);
}

/* Runs vmm with args (NULL-terminated), stdout and stderr apart; its exit status. The outputs are
 * small (usage texts), well within a pipe's buffer, so they are read after the exit. */
static int run_split(const char *const args[], char *out, char *err, size_t size)
{
	char vmm[PATH_MAX];
	char *argv[16];
	int n = 0, po[2], pe[2], st;

	vmm_path(vmm, sizeof(vmm));
	argv[n++] = "qemu-aarch64-static";
	argv[n++] = vmm;
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	if (pipe(po) < 0 || pipe(pe) < 0)
		return -1;
	pid_t pid = fork();

	if (pid == 0) {
		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		close(po[0]);
		close(pe[0]);
		execv(vmm, argv + 1);
		if (errno == ENOEXEC)
			execvp(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	waitpid(pid, &st, 0);
	for (int k = 0; k < 2; k++) {
		char *buf = k ? err : out;
		size_t got = 0;
		ssize_t r;

		while ((r = read(k ? pe[0] : po[0], buf + got, size - 1 - got)) > 0)
			got += r;
		buf[got] = 0;
	}
	close(po[0]);
	close(pe[0]);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The conventions every command keeps (vmm(1), EXIT STATUS): --help prints its usage to stdout
 * and exits 0; --version prints "vmm VERSION (commit HASH)" and exits 0; a usage error exits 1
 * with one line on stderr that points to the command's --help. */
TEST(every_command_help_version_usage_error)
{
	static const char *const cmds[] = { NULL, "run", "caps", "vf", "ctl", "stat", "ab", "bench" };
	static char out[16384], err[16384];

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *c = cmds[i], *name = c ? c : "(none)";
		char want[64];
		int st;

		st = run_split(c ? (const char *[]){ c, "--help", NULL } : (const char *[]){ "--help", NULL },
			       out, err, sizeof(out));
		snprintf(want, sizeof(want), c ? "usage: vmm %s" : "usage: vmm", c);
		EXPECT_EQ(0, st) TH_LOG("vmm %s --help: exit %d", name, st);
		EXPECT_EQ(0, strncmp(out, want, strlen(want))) TH_LOG("vmm %s --help printed: %s", name, out);
		EXPECT_STREQ("", err) TH_LOG("vmm %s --help wrote to stderr", name);

		st = run_split(c ? (const char *[]){ c, "--version", NULL } : (const char *[]){ "--version", NULL },
			       out, err, sizeof(out));
		EXPECT_EQ(0, st) TH_LOG("vmm %s --version: exit %d", name, st);
		EXPECT_EQ(0, strncmp(out, "vmm ", 4)) TH_LOG("vmm %s --version printed: %s", name, out);
		EXPECT_NE(NULL, strstr(out, " (commit ")) TH_LOG("vmm %s --version printed: %s", name, out);
		EXPECT_EQ(1, lines(out));

		st = run_split(c ? (const char *[]){ c, "--no-such-option", NULL } : (const char *[]){ NULL },
			       out, err, sizeof(out));
		snprintf(want, sizeof(want), c ? "vmm %s --help" : "vmm --help", c);
		EXPECT_EQ(1, st) TH_LOG("vmm %s usage error: exit %d", name, st);
		EXPECT_EQ(1, lines(err)) TH_LOG("vmm %s usage error: not one line: %s", name, err);
		EXPECT_NE(NULL, strstr(err, want)) TH_LOG("vmm %s usage error names no %s: %s", name, want, err);
		EXPECT_STREQ("", out) TH_LOG("vmm %s usage error wrote to stdout: %s", name, out);
	}
}

TEST_HARNESS_MAIN
