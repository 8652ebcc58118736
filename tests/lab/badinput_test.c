// SPDX-License-Identifier: MIT
/*
 * Lab: the bad-input and fault matrix. Each refusal must exit 1 with a message naming the problem
 * and what to do, and leave nothing behind (no vmm process, no lock, the paths it was given as
 * they were). Faults: signals during boot and during I/O, kill -9 after the guest's sync, a guest
 * panic, a hung guest (--timeout), a host file system filling up under a guest write, and a
 * system call a vCPU thread's seccomp allowlist refuses (made by this test, as vmm's tracer).
 * Every case prints a "# MATRIX" line: case | exit status | vmm's message (scripts/matrix.sh
 * gathers them into a table).
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/if_tun.h>
#include <linux/kvm.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/user.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tests/lab/labutil.h"

#define DIR_ "/tmp/badinput"
#define DISKDIR "/disk/badinput" /* block-backed: O_DIRECT, as real disks get */

static const char *host_kernel(void)
{
	static char path[300];
	struct utsname u;

	uname(&u);
	snprintf(path, sizeof(path), "/boot/vmlinuz-%s", u.release);
	return path;
}

/* vmm's first error line (what the user reads), for the matrix. */
static void first_error(const char *err, char *buf, size_t size)
{
	const char *e = strstr(err, "error: ");

	if (!e)
		e = err;
	snprintf(buf, size, "%.*s", (int)strcspn(e, "\n"), e);
}

static void matrix(const char *name, const struct result *r)
{
	char msg[400];

	if (r->status == 128 + SIGKILL) /* vmm had no say: what the test checks instead */
		snprintf(msg, sizeof(msg), "(killed; the host file must hold what the guest synced)");
	else
		first_error(r->err, msg, sizeof(msg));
	printf("# MATRIX %s | %d | %s\n", name, r->status, msg);
}

/* No vmm process is left: every /proc/PID/comm that starts with "vmm". */
static int vmm_processes(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "vmm", 3))
				n++;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return n;
}

static void write_file(const char *path, const void *data, size_t len, off_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return;
	if (len && write(fd, data, len) != (ssize_t)len)
		perror(path);
	if (size && ftruncate(fd, size) < 0)
		perror(path);
	close(fd);
}

/* Runs argv expecting a refusal with msg; the matrix line either way. */
static bool refusal(const char *name, char *const argv[], const char *msg, void (*child)(const void *),
		    const void *arg, struct result *r)
{
	const struct run_opts o = { .timeout = 120, .child = child, .child_arg = arg };

	run_vmm_opts(argv, &o, r);
	matrix(name, r);
	return r->status == 1 && strstr(r->err, msg) && vmm_processes() == 0;
}

#define REFUSED(name, msg, child, arg, ...)                                                        \
	do {                                                                                       \
		char *const argv_[] = { VMM, "run", __VA_ARGS__, NULL };                          \
		EXPECT_TRUE(refusal(name, argv_, msg, child, arg, &self->r))                      \
			TH_LOG("%s: exit %d, vmm processes %d, stderr: %s", name, self->r.status,      \
			       vmm_processes(), self->r.err);                                              \
		result_free(&self->r);                                                             \
	} while (0)

FIXTURE(bad) {
	struct result r;
};
FIXTURE_SETUP(bad)
{
	memset(&self->r, 0, sizeof(self->r));
	mkdir(DIR_, 0755);
	mkdir(DISKDIR, 0755);
}
FIXTURE_TEARDOWN(bad) { }

/* The child's own mount namespace, so what it hides or replaces is gone when it exits. */
static void private_mounts(void)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(126);
}

static void hide_dev(const void *arg)
{
	private_mounts();
	if (access(arg, F_OK) == 0 && mount("none", arg, "tmpfs", 0, NULL) < 0) /* absent: hidden already */
		_exit(126);
}

/* /dev/kvm as a node with mode 0000, and the child (still uid 0) without the capabilities that
 * override file permissions: the bounding set keeps them dropped across exec. */
static void kvm_no_permission(const void *arg)
{
	struct stat st;

	(void)arg;
	private_mounts();
	if (stat("/dev/kvm", &st) < 0 || mount("none", DIR_, "tmpfs", 0, NULL) < 0 ||
	    mknod(DIR_ "/kvm", S_IFCHR, st.st_rdev) < 0 || chmod(DIR_ "/kvm", 0) < 0 ||
	    mount(DIR_ "/kvm", "/dev/kvm", NULL, MS_BIND, NULL) < 0 ||
	    prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) < 0 ||
	    prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0) < 0)
		_exit(126);
}

TEST_F_TIMEOUT(bad, host_refusals, 600)
{
	REFUSED("no /dev/kvm", "/dev/kvm does not exist", hide_dev, "/dev", "-m", "256M");
	REFUSED("no permission on /dev/kvm", "cannot open /dev/kvm: Permission denied", kvm_no_permission, NULL,
		"-m", "256M");
	REFUSED("RAM beyond the IPA size", "guest physical addresses but KVM on this host offers", NULL, NULL,
		"-m", "4096T");
	REFUSED("RAM more than the host's", "more than the host's", NULL, NULL, "-m", "3G");
}

TEST_F_TIMEOUT(bad, kernel_and_initrd, 600)
{
	static uint8_t junk[2 << 20];
	char hk[300];

	snprintf(hk, sizeof(hk), "%s", host_kernel());
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 2654435761u >> 13);
	write_file(DIR_ "/garbage", junk, sizeof(junk), 0);
	write_file(DIR_ "/empty", NULL, 0, 0);
	/* the host's Image cut to 1 MiB: its header still says ~40 MiB */
	int in = open(hk, O_RDONLY);

	ASSERT_LE(0, in);
	ASSERT_EQ((ssize_t)sizeof(junk), read(in, junk, sizeof(junk)));
	close(in);
	write_file(DIR_ "/truncated", junk, 1 << 20, 0);
	write_file(DIR_ "/big-initrd", "x", 1, 40 << 20); /* sparse: 40 MiB for 64 MiB of RAM */

	REFUSED("missing kernel", "cannot open it: No such file or directory (check the path)", NULL, NULL,
		"-k", DIR_ "/no-such-Image");
	REFUSED("garbage kernel", "not an arm64 Image", NULL, NULL, "-k", DIR_ "/garbage");
	REFUSED("truncated kernel", "the Image is truncated: its PE/COFF sections end at byte", NULL, NULL,
		"-k", DIR_ "/truncated");
	REFUSED("empty kernel", "not a regular, non-empty file", NULL, NULL, "-k", DIR_ "/empty");
	REFUSED("kernel is a directory", "not a regular, non-empty file", NULL, NULL, "-k", DIR_);
	REFUSED("missing initrd", "-i/--initrd " DIR_ "/no-such.cpio: cannot open it", NULL, NULL,
		"-k", hk, "-i", DIR_ "/no-such.cpio");
	REFUSED("initrd larger than RAM allows", "half the guest's RAM): raise -m", NULL, NULL,
		"-m", "64M", "-k", hk, "-i", DIR_ "/big-initrd");
	REFUSED("--dump-dtb path unwritable", "--dump-dtb: cannot write", NULL, NULL,
		"--dump-dtb", DIR_ "/no-such-dir/board.dtb");
	unlink(DIR_ "/garbage");
	unlink(DIR_ "/empty");
	unlink(DIR_ "/truncated");
	unlink(DIR_ "/big-initrd");
}

/* A read-only view of path in the child's namespace: open(O_RDWR) gets EROFS, as root too. */
static void read_only_bind(const void *arg)
{
	private_mounts();
	if (mount(arg, arg, NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, arg, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0)
		_exit(126);
}

static bool lock_free(const char *path)
{
	int fd = open(path, O_RDONLY);
	bool free_ = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;

	if (fd >= 0)
		close(fd);
	return free_;
}

TEST_F_TIMEOUT(bad, disks, 600)
{
#define img DISKDIR "/disk.img"
	write_file(img, NULL, 0, 8 << 20);
	write_file(DISKDIR "/odd.img", "x", 1, 1000);
	REFUSED("disk missing", "--disk " DISKDIR "/no-such.img: No such file or directory", NULL, NULL,
		"-d", DISKDIR "/no-such.img");
	REFUSED("disk read-only without ,ro", "(add ,ro for a read-only disk)", read_only_bind, img, "-d", img);
	REFUSED("disk not a multiple of 512", "multiple of 512 bytes (it is 1000 bytes)", NULL, NULL,
		"-d", DISKDIR "/odd.img");
	REFUSED("disk is a directory", "not a directory", NULL, NULL, "-d", DISKDIR);
	/* another vmm's lock, as the test holds it; then the same image twice in one VM */
	int fd = open(img, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flock(fd, LOCK_EX));
	REFUSED("disk locked by another vmm", "another process holds a lock on it", NULL, NULL, "-d", img);
	REFUSED("disk locked, even read-only", "another process holds a lock on it", NULL, NULL, "-d",
		DISKDIR "/disk.img,ro");
	close(fd);
	EXPECT_TRUE(lock_free(img)) TH_LOG("a refused vmm left a lock on the image");
	REFUSED("one disk image given twice", "another process holds a lock on it", NULL, NULL,
		"-d", img, "-d", img);
	EXPECT_TRUE(lock_free(img)) TH_LOG("a refused vmm left a lock on the image");
	unlink(img);
	unlink(DISKDIR "/odd.img");
#undef img
}

TEST_F_TIMEOUT(bad, taps_pci_and_ctl, 600)
{
	/* a tap attached to this process: busy for vmm */
	int tun = open("/dev/net/tun", O_RDWR);
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR };

	ASSERT_LE(0, tun);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "vmmbusy0");
	ASSERT_EQ(0, ioctl(tun, TUNSETIFF, &ifr));
	REFUSED("tap busy", "--net tap=vmmbusy0: the tap is attached to another process", NULL, NULL,
		"--net", "tap=vmmbusy0");
	close(tun);
	REFUSED("no /dev/net/tun", "--net: cannot open /dev/net/tun: No such file or directory", hide_dev,
		"/dev/net", "--net", "tap=vmmtap7");
	REFUSED("VFIO absent (vfio-pci not loaded)", "cannot open /dev/vfio/vfio: No such file or directory "
		"(load vfio-pci: modprobe vfio-pci)", hide_dev, "/dev/vfio", "--vfio", "0000:00:03.0");
	ASSERT_EQ(0, system("modprobe vfio-pci && modprobe vfio_iommu_type1"));
	REFUSED("PCI device absent", "no PCI device 0000:00:1f.0", NULL, NULL, "--vfio", "0000:00:1f.0");
	/* the igb PF: held by its own driver, not vfio-pci */
	if (system("modprobe igb 2>/dev/null; sleep 0.5") == 0)
		REFUSED("device not bound to vfio-pci", "not to vfio-pci", NULL, NULL, "--vfio", "0000:00:03.0");

	/* the control socket's path: a live listener, then a file that is not a socket */
#define sock DIR_ "/vm.ctl"
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM, 0);

	unlink(sock);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	ASSERT_EQ(0, bind(l, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, listen(l, 1));
	REFUSED("control socket path taken", "another vmm is listening there; choose another path", NULL,
		NULL, "--ctl", sock);
	struct stat st;

	EXPECT_EQ(0, stat(sock, &st)) TH_LOG("the refused vmm removed the other's socket");
	close(l);
	unlink(sock);
	write_file(DIR_ "/not-a-socket", "keep", 4, 0);
	REFUSED("control socket path a file", "the path exists and is not a socket", NULL, NULL,
		"--ctl", DIR_ "/not-a-socket");
	EXPECT_EQ(0, stat(DIR_ "/not-a-socket", &st));
	EXPECT_EQ(4, st.st_size) TH_LOG("the refused vmm touched the file");
	unlink(DIR_ "/not-a-socket");
#undef sock
}

/* --- faults: a guest runs, then something happens to it or to vmm --- */

static void fault(const char *name, struct result *r, char *const argv[], const struct run_opts *o)
{
	run_vmm_opts(argv, o, r);
	matrix(name, r);
}

TEST_F_TIMEOUT(bad, signals_during_boot, 600)
{
	char *const argv[] = { VMM, "run", "-m", "256M", "-p", "console=ttyS0 earlycon panic=-1", NULL };
	const struct run_opts oi = { .timeout = 300, .term_on = "Booting Linux", .signal = SIGINT };
	const struct run_opts ot = { .timeout = 300, .term_on = "Booting Linux", .signal = SIGTERM };

	fault("SIGINT during boot", &self->r, argv, &oi);
	EXPECT_EQ(128 + SIGINT, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "stopped by a signal")) TH_LOG("%s", self->r.err);
	EXPECT_LT(self->r.term_secs, 10);
	EXPECT_EQ(0, vmm_processes());
	result_free(&self->r);
	fault("SIGTERM during boot", &self->r, argv, &ot);
	EXPECT_EQ(128 + SIGTERM, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_LT(self->r.term_secs, 10);
	EXPECT_EQ(0, vmm_processes());
	result_free(&self->r);
}

/* The guest writes a 4 MiB pattern to its disk and syncs (GUEST-WROTE), then waits: whatever stops
 * vmm then, the host file must hold every byte the guest was told is written. */
static void disk_after(struct __test_metadata *_metadata, const char *img, const char *name, int sig,
		       int want, struct result *r)
{
	char *extra[] = { "-d", (char *)img, NULL };
	char *argv[40];
	const struct run_opts o = { .timeout = 500, .term_on = "GUEST-WROTE", .signal = sig };
	const size_t psize = 4 << 20;

	write_file(img, NULL, 0, 16 << 20);
	test_guest_argv(argv, 40, "blkwrite-hold", extra);
	fault(name, r, argv, &o);
	ASSERT_NE(NULL, strstr(r->out, "GUEST-WROTE")) TH_LOG("out: %s\nerr: %s", r->out, r->err);
	EXPECT_EQ(want, r->status) TH_LOG("%s", r->err);
	EXPECT_LT(r->term_secs, 10);
	EXPECT_EQ(0, vmm_processes());
	EXPECT_TRUE(lock_free(img)) TH_LOG("the image is still locked");
	uint8_t *w = malloc(psize), *got = malloc(psize);
	int fd = open(img, O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)psize, read(fd, got, psize));
	close(fd);
	lab_pattern(w, psize);
	EXPECT_EQ(0, memcmp(w, got, psize)) TH_LOG("%s: the image lost what the guest synced", name);
	free(w);
	free(got);
	unlink(img);
}

TEST_F_TIMEOUT(bad, signals_and_kill_during_io, 900)
{
	disk_after(_metadata, DISKDIR "/int.img", "SIGINT during disk I/O", SIGINT, 128 + SIGINT, &self->r);
	result_free(&self->r);
	disk_after(_metadata, DISKDIR "/kill.img", "kill -9 after the guest's sync", SIGKILL, 128 + SIGKILL,
		   &self->r);
	result_free(&self->r);
}

TEST_F_TIMEOUT(bad, panic_and_hang_have_their_own_codes, 600)
{
	char *const panic[] = { VMM, "run", "-m", "256M", "-p",
				"console=ttyS0 quiet panic=-1 rdinit=/nonexistent init=/nonexistent", NULL };
	char *extra[] = { "--timeout", "15", NULL };
	char *hang[40];
	const struct run_opts o = { .timeout = 300 };

	fault("guest panic", &self->r, panic, &o);
	EXPECT_EQ(3, self->r.status) TH_LOG("%s", self->r.err);
	result_free(&self->r);
	/* the guest sleeps 20 s: past 15 s it counts as hung */
	test_guest_argv(hang, 40, "sleep", extra);
	fault("hung guest (--timeout 15)", &self->r, hang, &o);
	EXPECT_EQ(4, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "--timeout 15: the guest was still running")) TH_LOG("%s", self->r.err);
	EXPECT_LT(self->r.secs, 40);
	EXPECT_EQ(0, vmm_processes());
	result_free(&self->r);
}

/* A 32 MiB image on a 4 MiB file system: the guest's writes past the room fail with an I/O error
 * in the guest, vmm runs on, and the guest powers off normally. */
TEST_F_TIMEOUT(bad, host_file_system_full, 600)
{
	const char *fs = DIR_ "/small";
	char *extra[] = { "-d", DIR_ "/small/disk.img", NULL };
	char *argv[40];
	const struct run_opts o = { .timeout = 400 };
	char v[256];

	mkdir(fs, 0755);
	ASSERT_EQ(0, mount("none", fs, "tmpfs", 0, "size=4m"));
	write_file(DIR_ "/small/disk.img", NULL, 0, 32 << 20);
	test_guest_argv(argv, 40, "blkfill", extra);
	fault("host file system full during a guest write", &self->r, argv, &o);
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	ASSERT_NE(NULL, marker(self->r.out, "GUEST-FILL", v, sizeof(v))) TH_LOG("%s", self->r.out);
	printf("# FS-FULL guest: %s\n", v);
	EXPECT_EQ(NULL, strstr(v, "rc=0")) TH_LOG("the guest's write past the room succeeded: %s", v);
	EXPECT_NE(NULL, strstr(self->r.out, "GUEST-ALIVE")) TH_LOG("%s", self->r.out);
	umount(fs);
	result_free(&self->r);
}

/* The vmm-vcpu thread of this test's vmm child (vmm names its threads vmm-ROLE); 0: none yet. */
static pid_t vcpu_thread_of_child(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t tid = 0;

	while (d && !tid && (e = readdir(d))) {
		char path[300];
		int ppid = 0;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		char *stat = lab_slurp(path, NULL);
		const char *p = stat ? strrchr(stat, ')') : NULL; /* comm may hold spaces */

		if (p && sscanf(p, ") %*c %d", &ppid) == 1 && ppid == getpid()) {
			snprintf(path, sizeof(path), "/proc/%s/task", e->d_name);
			DIR *t = opendir(path);
			struct dirent *te;

			while (t && !tid && (te = readdir(t))) {
				char cpath[600], *comm;

				snprintf(cpath, sizeof(cpath), "%s/%s/comm", path, te->d_name);
				comm = lab_slurp(cpath, NULL);
				if (comm && !strcmp(comm, "vmm-vcpu\n"))
					tid = atoi(te->d_name);
				free(comm);
			}
			if (t)
				closedir(t);
		}
		free(stat);
	}
	if (d)
		closedir(d);
	return tid;
}

/* The stopped tracee's general registers, read or written. */
static int tracee_regs(pid_t tid, int req, struct user_regs_struct *regs)
{
	struct iovec iov = { regs, sizeof(*regs) };

	return ptrace(req, tid, NT_PRSTATUS, &iov) < 0 ? -errno : 0;
}

/* At a system-call entry stop: the call becomes socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0).
 * The kernel applies the seccomp filter after the tracer, to the call as changed. */
static int make_socket_call(pid_t tid)
{
	struct user_regs_struct regs;

	if (tracee_regs(tid, PTRACE_GETREGSET, &regs) < 0)
		return -1;
#if defined(__aarch64__)
	int nr = __NR_socket;
	struct iovec iov = { &nr, sizeof(nr) };

	regs.regs[0] = AF_INET;
	regs.regs[1] = SOCK_DGRAM | SOCK_CLOEXEC;
	regs.regs[2] = 0;
	return tracee_regs(tid, PTRACE_SETREGSET, &regs) < 0 ||
	       ptrace(PTRACE_SETREGSET, tid, NT_ARM_SYSTEM_CALL, &iov) < 0 ? -1 : 0;
#else
	regs.orig_rax = __NR_socket;
	regs.rdi = AF_INET;
	regs.rsi = SOCK_DGRAM | SOCK_CLOEXEC;
	regs.rdx = 0;
	return tracee_regs(tid, PTRACE_SETREGSET, &regs);
#endif
}

/* At the call's exit stop: it returns -EINTR, as an interrupted KVM_RUN does (the loop retries). */
static int return_eintr(pid_t tid)
{
	struct user_regs_struct regs;

	if (tracee_regs(tid, PTRACE_GETREGSET, &regs) < 0)
		return -1;
#if defined(__aarch64__)
	regs.regs[0] = (unsigned long long)-EINTR;
#else
	regs.rax = (unsigned long long)-EINTR;
#endif
	return tracee_regs(tid, PTRACE_SETREGSET, &regs);
}

/* Whether fd in thread tid's table is a socket. */
static bool is_socket(pid_t tid, long long fd)
{
	char path[64], link[64] = "";

	snprintf(path, sizeof(path), "/proc/%d/fd/%lld", tid, fd);
	return fd >= 0 && readlink(path, link, sizeof(link) - 1) > 0 && !strncmp(link, "socket:", 7);
}

/* What the tracer made vmm's vCPU thread do: vmm has no hook of its own for the sandbox test. */
struct vcpu_inject {
	atomic_bool done;	/* vmm has exited: stop looking for its thread */
	bool injected;		/* the thread made the call in place of a KVM_RUN */
	bool got_socket;	/* and it returned a socket: no filter refused it */
	char why[200];		/* what the tracer could not do */
};

/* A thread of the test: attaches to the vCPU thread (this test is vmm's parent), waits for its next
 * ioctl(KVM_RUN) and turns it into socket(2), a call no vCPU makes; hands on every signal. */
static void *inject_socket(void *arg)
{
	struct vcpu_inject *in = arg;
	pid_t tid = 0;
	int st, sig = 0;
	bool changed = false;

	while (!atomic_load(&in->done) && !(tid = vcpu_thread_of_child()))
		usleep(10000);
	if (!tid)
		return NULL;
	if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACESYSGOOD) < 0 || ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		snprintf(in->why, sizeof(in->why), "ptrace on vCPU thread %d: %s", tid, strerror(errno));
		return NULL;
	}
	while (waitpid(tid, &st, __WALL) == tid && WIFSTOPPED(st)) {
		struct __ptrace_syscall_info si;

		sig = 0;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) { /* a system-call stop (TRACESYSGOOD) */
			if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) <= 0)
				break;
			if (!changed && si.op == PTRACE_SYSCALL_INFO_ENTRY && si.entry.nr == __NR_ioctl &&
			    si.entry.args[1] == KVM_RUN) {
				if (make_socket_call(tid) < 0) {
					snprintf(in->why, sizeof(in->why), "changing the call: %s", strerror(errno));
					break;
				}
				changed = true;
			} else if (changed && si.op == PTRACE_SYSCALL_INFO_EXIT) {
				in->injected = true;
				in->got_socket = is_socket(tid, si.exit.rval);
				return_eintr(tid);
				break; /* a refused call's SIGSYS is pending: delivered once detached */
			}
		} else if (st >> 16 != PTRACE_EVENT_STOP) { /* a signal for the thread: handed on */
			sig = WSTOPSIG(st);
			if (changed) { /* the refusal's SIGSYS before the exit stop */
				in->injected = true;
				break;
			}
		}
		if (ptrace(PTRACE_SYSCALL, tid, 0, sig) < 0)
			break;
	}
	ptrace(PTRACE_DETACH, tid, 0, sig);
	return NULL;
}

/* Runs argv while inject_socket works on its vCPU thread; the matrix line when name is given. */
static void run_injecting(const char *name, char *const argv[], const struct run_opts *o,
			  struct result *r, struct vcpu_inject *in)
{
	pthread_t t;

	if (pthread_create(&t, NULL, inject_socket, in))
		abort();
	if (name)
		fault(name, r, argv, o);
	else
		run_vmm_opts(argv, o, r);
	atomic_store(&in->done, true);
	pthread_join(t, NULL);
}

/* seccomp, seen from outside: the test, as vmm's tracer, turns the vCPU thread's KVM_RUN into
 * socket(2), which its allowlist refuses: reported (thread, call, number), exit 5, no vmm left.
 * With --no-sandbox the same call returns a socket, and the guest boots to its banner. */
TEST_F_TIMEOUT(bad, vcpu_disallowed_syscall, 600)
{
	char *const on[] = { VMM, "run", "-m", "256M", "-p", "console=ttyS0 quiet panic=-1", NULL };
	char *const off[] = { VMM, "run", "-m", "256M", "--no-sandbox", "-p", "console=ttyS0 quiet panic=-1",
			      NULL };
	const struct run_opts o = { .timeout = 500 };
	struct vcpu_inject in = { .injected = false };

	run_injecting("vCPU thread makes a disallowed system call", on, &o, &self->r, &in);
	EXPECT_TRUE(in.injected) TH_LOG("the tracer did not get its call in: %s", in.why);
	EXPECT_FALSE(in.got_socket);
	EXPECT_EQ(5, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "sandbox: the vcpu thread made system call socket (number "))
		TH_LOG("%s", self->r.err);
	EXPECT_EQ(0, vmm_processes());
	result_free(&self->r);
	in = (struct vcpu_inject){ .injected = false };
	run_injecting(NULL, off, &o, &self->r, &in);
	EXPECT_TRUE(in.injected) TH_LOG("the tracer did not get its call in: %s", in.why);
	EXPECT_TRUE(in.got_socket) TH_LOG("without the sandbox, the vCPU thread's socket(2) did not return one");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "vmm-guest: ")) TH_LOG("%s", self->r.out);
	result_free(&self->r);
}

TEST_HARNESS_MAIN
