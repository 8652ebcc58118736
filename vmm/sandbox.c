// SPDX-License-Identifier: MIT
/*
 * Per-thread seccomp allowlists. The lists come from each thread's code paths and from running
 * every lab test with them enforced (a refusal names the thread and the call), and are kept as
 * narrow as the code allows: ioctl only with KVM and VFIO request codes (plus the one tap and one
 * terminal request a thread really makes), open only read-only where a report reads /sys or /proc
 * (main also writes --stats), no socket, clone, execve or ptrace anywhere after set-up. Threads are
 * named vmm-ROLE (/proc, ps, traces).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_tun.h>
#include <linux/kvm.h>
#include <linux/vfio.h>
#include <linux/vhost.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "vmm/log.h"
#include "vmm/sandbox.h"
#include "vmm/term.h"
#include "vmm/vm.h"

/* What a list entry allows beyond the plain call. */
enum rule {
	ANY,	      /* every argument */
	IOCTL_KVM,    /* ioctl with a KVM (KVMIO) or VFIO/iommufd (';') request code */
	IOCTL_TUN,    /* ioctl(TUNSETOFFLOAD): virtio-net applies the guest's offloads */
	IOCTL_VHOST,  /* ioctl with a vhost (VHOST_VIRTIO) request code: vhost-net's rings handed
		       * over at DRIVER_OK, taken back on reset and at exit */
	IOCTL_TCSETS, /* ioctl(TCSETS, TCGETS): tcsetattr sets, then reads back; the terminal
		       * restored on the way out */
	OPEN_RDONLY,  /* openat without write access or O_CREAT: reports reading /sys, /proc */
	OPEN_ANY,     /* openat: main writes --stats at exit */
};

struct allow {
	const char *name;
	enum rule rule;
};

/* Every thread: memory (malloc arenas, a thread's exit), locks, time, signals, stderr, leaving. */
static const struct allow common[] = {
	{ "read", ANY }, { "write", ANY }, { "readv", ANY }, { "writev", ANY }, { "close", ANY }, { "futex", ANY }, { "exit", ANY },
	{ "exit_group", ANY }, { "rt_sigreturn", ANY }, { "rt_sigprocmask", ANY }, { "restart_syscall", ANY },
	{ "madvise", ANY }, { "mmap", ANY }, { "munmap", ANY }, { "mprotect", ANY }, { "brk", ANY }, { "mremap", ANY },
	{ "clock_gettime", ANY }, { "clock_nanosleep", ANY }, { "nanosleep", ANY }, { "gettid", ANY }, { "getpid", ANY },
	{ "tgkill", ANY }, { "sched_yield", ANY }, { "fstat", ANY }, { "newfstatat", ANY }, { "lseek", ANY },
	{ "getrandom", ANY }, { "ioctl", IOCTL_TCSETS },
	{ "sigaltstack", ANY }, /* ASan's interceptors set one up */
};

/* KVM_RUN and what its exits reach: device registers, BAR moves (memslots, routes, irqfds),
 * VFIO config space and regions, a virtio device's activation and reset (AIO drained). */
static const struct allow vcpu[] = {
	{ "ioctl", IOCTL_KVM }, { "ioctl", IOCTL_TUN }, { "ioctl", IOCTL_VHOST }, { "pread64", ANY },
	{ "pwrite64", ANY }, { "epoll_ctl", ANY }, { "io_getevents", ANY }, { "io_submit", ANY }, { "ppoll", ANY }, { "poll", ANY },
};

/* A virtio worker: eventfds by epoll, requests by AIO (FLUSH is an AIO fdsync), tap by read/write. */
static const struct allow device[] = {
	{ "epoll_pwait", ANY }, { "epoll_wait", ANY }, { "epoll_ctl", ANY }, { "io_submit", ANY }, { "io_getevents", ANY },
	{ "io_pgetevents", ANY }, { "ppoll", ANY }, { "poll", ANY }, { "pread64", ANY }, { "pwrite64", ANY }, { "preadv", ANY }, { "pwritev", ANY },
	{ "fdatasync", ANY }, { "fsync", ANY }, { "ioctl", IOCTL_KVM }, { "ioctl", IOCTL_TUN },
};

/* Input can end the 16550's exact mode (uart_fast.c): its zone and memslot go, by KVM ioctls. The
 * ring's drain runs the UART's and the console watch's hooks: a boot marker is only marked here
 * (an eventfd write), the stats' snapshot is main's (tests/unit/sandbox_test.c: boot_marker). */
static const struct allow console[] = {
	{ "ppoll", ANY }, { "poll", ANY }, { "ioctl", IOCTL_KVM },
};

/* JSON requests on a connection (the peer's SO_PEERCRED, and with --ctl-group its groups from
 * /proc; a deadline by poll; the send timeout, the reply through fdopen of a dup); stats from
 * KVM's stats fds, the vLPI report from debugfs. */
static const struct allow ctl[] = {
	{ "ppoll", ANY }, { "poll", ANY }, { "accept4", ANY }, { "accept", ANY }, { "shutdown", ANY }, { "recvfrom", ANY },
	{ "setsockopt", ANY }, { "getsockopt", ANY }, { "dup", ANY }, { "dup3", ANY }, { "fcntl", ANY },
	{ "sendto", ANY }, { "pread64", ANY }, { "ioctl", IOCTL_KVM }, { "openat", OPEN_RDONLY },
	{ "getdents64", ANY }, { "statx", ANY },
};

/* The probe's UDP peer: a datagram in, the same datagram back, on a socket bound before. */
static const struct allow peer[] = {
	{ "ppoll", ANY }, { "poll", ANY }, { "recvfrom", ANY }, { "sendto", ANY },
};

/* Waiting (a signalfd and the deferred work's eventfd, polled; the 100 ms tick's vLPI report),
 * the work other threads defer (the stats' boot-end snapshot: pread64), then tearing down: threads
 * joined, disks drained and synced, devices reset through VFIO, memory unmapped, the socket
 * unlinked, --stats written. */
static const struct allow main_[] = {
	{ "ppoll", ANY }, { "poll", ANY }, { "ioctl", IOCTL_KVM }, { "ioctl", IOCTL_VHOST }, { "pread64", ANY },
	{ "pwrite64", ANY }, { "openat", OPEN_ANY }, { "getdents64", ANY }, { "statx", ANY }, { "readlinkat", ANY },
	{ "faccessat", ANY }, { "unlink", ANY }, { "unlinkat", ANY }, { "io_getevents", ANY }, { "io_destroy", ANY },
	{ "fdatasync", ANY }, { "fsync", ANY }, { "epoll_ctl", ANY },
};

static const struct {
	const char *name;
	const struct allow *list;
	size_t n;
} roles[SANDBOX_NR_ROLES] = {
	[SANDBOX_MAIN] = { "main", main_, sizeof(main_) / sizeof(main_[0]) },
	[SANDBOX_VCPU] = { "vcpu", vcpu, sizeof(vcpu) / sizeof(vcpu[0]) },
	[SANDBOX_DEVICE] = { "device", device, sizeof(device) / sizeof(device[0]) },
	[SANDBOX_CONSOLE] = { "console", console, sizeof(console) / sizeof(console[0]) },
	[SANDBOX_CTL] = { "ctl", ctl, sizeof(ctl) / sizeof(ctl[0]) },
	[SANDBOX_PEER] = { "peer", peer, sizeof(peer) / sizeof(peer[0]) },
};

/* The SIGSYS handler's only inputs: it may not allocate, so names are resolved at init. Process
 * wide by nature (a signal handler reaches nothing else); written once before any filter. */
#define SANDBOX_MAX_NR 512
static char sandbox_names[SANDBOX_MAX_NR][24];
/* Each role's filter as BPF, compiled once by sandbox_init before any thread starts, loaded by each
 * thread of the role (sandbox_enter): libseccomp's compile per thread put milliseconds on every
 * thread's start (vCPU 0's before the guest's first instruction) and left its heap in that thread's
 * malloc arena. Written once, before any thread, like the names. */
static struct sandbox_bpf {
	struct sock_filter *insns;
	unsigned short len;
} sandbox_bpf[SANDBOX_NR_ROLES];
static enum sandbox_mode sandbox_bpf_mode;
static _Thread_local const char *sandbox_thread = "main";

const char *sandbox_role_name(enum sandbox_role role)
{
	return role < SANDBOX_NR_ROLES ? roles[role].name : "?";
}

static size_t put(char *buf, size_t at, size_t size, const char *s)
{
	while (*s && at + 1 < size)
		buf[at++] = *s++;
	return at;
}

static size_t put_num(char *buf, size_t at, size_t size, long v)
{
	char d[24];
	int n = 0;

	if (v < 0)
		return put(buf, at, size, "-1");
	do
		d[n++] = '0' + v % 10;
	while ((v /= 10) && n < (int)sizeof(d));
	while (n && at + 1 < size)
		buf[at++] = d[--n];
	return at;
}

static void sandbox_sigsys(int sig, siginfo_t *si, void *uc)
{
	char msg[400];
	size_t n = 0;
	int nr = si->si_syscall;

	(void)sig;
	(void)uc;
	n = put(msg, n, sizeof(msg), "\nvmm: error: sandbox: the ");
	n = put(msg, n, sizeof(msg), sandbox_thread);
	n = put(msg, n, sizeof(msg), " thread made system call ");
	n = put(msg, n, sizeof(msg), nr >= 0 && nr < SANDBOX_MAX_NR && sandbox_names[nr][0] ?
				     sandbox_names[nr] : "?");
	n = put(msg, n, sizeof(msg), " (number ");
	n = put_num(msg, n, sizeof(msg), nr);
	n = put(msg, n, sizeof(msg), "), which its seccomp allowlist refuses; vmm stops (exit status ");
	n = put_num(msg, n, sizeof(msg), VM_EXIT_SANDBOX);
	n = put(msg, n, sizeof(msg), "). A vmm bug or a guest exploiting one: report it with the "
				     "command line; --no-sandbox runs without the filters\n");
	if (write(STDERR_FILENO, msg, n) < 0) {
		/* nowhere left to report to */
	}
	term_restore();
	/* the raw call: a sanitizer's _exit runs checks whose system calls would trap again */
	syscall(SYS_exit_group, VM_EXIT_SANDBOX);
}

static int sandbox_compile_all(enum sandbox_mode mode);

int sandbox_init(enum sandbox_mode mode)
{
	if (mode == SANDBOX_OFF)
		return 0;
	int r = sandbox_compile_all(mode);

	if (r < 0 || mode != SANDBOX_ENFORCE)
		return r;
	for (int nr = 0; nr < SANDBOX_MAX_NR; nr++) {
		char *s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);

		if (s) {
			snprintf(sandbox_names[nr], sizeof(sandbox_names[nr]), "%s", s);
			free(s);
		}
	}
	struct sigaction sa = { .sa_sigaction = sandbox_sigsys, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0) {
		pr_err("sandbox: cannot install the SIGSYS handler: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int add_rule(scmp_filter_ctx f, int nr, enum rule rule)
{
	switch (rule) {
	case ANY:
		return seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 0);
	case IOCTL_KVM: {
		int r = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xff00, KVMIO << 8));

		return r < 0 ? r : seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
						    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xff00, VFIO_TYPE << 8));
	}
	case IOCTL_TUN:
		return seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_EQ, TUNSETOFFLOAD, 0));
	case IOCTL_VHOST:
		return seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A1(SCMP_CMP_MASKED_EQ, 0xff00, VHOST_VIRTIO << 8));
	case IOCTL_TCSETS: {
		int r = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_EQ, TCSETS, 0));

		return r < 0 ? r : seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_EQ, TCGETS, 0));
	}
	case OPEN_RDONLY:
		return seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT, O_RDONLY));
	case OPEN_ANY:
		return seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 0);
	}
	return -EINVAL;
}

static int add_list(scmp_filter_ctx f, const struct allow *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(list[i].name);

		if (nr == __NR_SCMP_ERROR)
			continue; /* not a system call on this architecture (poll on arm64) */
		int r = add_rule(f, nr, list[i].rule);

		if (r < 0) {
			pr_err("sandbox: cannot add %s to the allowlist: %s", list[i].name, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* The role's allowlist as a libseccomp filter; NULL when it cannot be built (said why). */
static scmp_filter_ctx sandbox_build(enum sandbox_mode mode, enum sandbox_role role)
{
	scmp_filter_ctx f = seccomp_init(mode == SANDBOX_LOG ? SCMP_ACT_LOG : SCMP_ACT_TRAP);

	if (!f) {
		pr_err("sandbox: seccomp_init failed; --no-sandbox runs without the filters");
		return NULL;
	}
	if (add_list(f, common, sizeof(common) / sizeof(common[0])) < 0 ||
	    add_list(f, roles[role].list, roles[role].n) < 0) {
		seccomp_release(f);
		return NULL;
	}
	return f;
}

/* The role's filter compiled to BPF through a memfd (libseccomp 2.5 exports to a file only). */
static int sandbox_compile(enum sandbox_mode mode, enum sandbox_role role, struct sandbox_bpf *out)
{
	scmp_filter_ctx f = sandbox_build(mode, role);
	struct stat st;
	int fd, r;

	if (!f)
		return -ENOMEM;
	if ((fd = memfd_create("vmm-seccomp", MFD_CLOEXEC)) < 0) {
		r = -errno;
		goto out;
	}
	if ((r = seccomp_export_bpf(f, fd)) < 0)
		goto out;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	r = -E2BIG;
	if (st.st_size == 0 || st.st_size % sizeof(struct sock_filter) ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		goto out;
	r = -ENOMEM;
	if (!(out->insns = malloc(st.st_size)))
		goto out;
	r = -EIO;
	if (pread(fd, out->insns, st.st_size, 0) != st.st_size)
		goto out;
	out->len = st.st_size / sizeof(struct sock_filter);
	r = 0;
out:
	if (r < 0) {
		pr_err("sandbox: compiling the %s thread's seccomp filter failed: %s; --no-sandbox runs "
		       "without the filters", roles[role].name, strerror(-r));
		free(out->insns);
		out->insns = NULL;
	}
	if (fd >= 0)
		close(fd);
	seccomp_release(f);
	return r;
}

static int sandbox_compile_all(enum sandbox_mode mode)
{
	if (sandbox_bpf_mode == mode && sandbox_bpf[SANDBOX_MAIN].insns)
		return 0; /* a second call (the unit tests' children): the same filters */
	for (int i = 0; i < SANDBOX_NR_ROLES; i++) {
		free(sandbox_bpf[i].insns);
		sandbox_bpf[i] = (struct sandbox_bpf){ NULL, 0 };
	}
	for (int i = 0; i < SANDBOX_NR_ROLES; i++) {
		/* the control socket's and the probe peer's threads exist only when asked for: they
		 * compile their own (sandbox_enter), off the guest's start */
		if (i == SANDBOX_CTL || i == SANDBOX_PEER)
			continue;
		int r = sandbox_compile(mode, i, &sandbox_bpf[i]);

		if (r < 0)
			return r;
	}
	sandbox_bpf_mode = mode;
	return 0;
}

int sandbox_enter(enum sandbox_mode mode, enum sandbox_role role)
{
	char comm[16];

	/* the thread's name in /proc, ps and traces; the report's name for it */
	snprintf(comm, sizeof(comm), "vmm-%s", roles[role].name);
	pthread_setname_np(pthread_self(), comm);
	sandbox_thread = roles[role].name;
	if (mode == SANDBOX_OFF)
		return 0;
	const struct sandbox_bpf *b = &sandbox_bpf[role];
	int r;

	if (sandbox_bpf_mode == mode && b->insns) {
		/* what seccomp_load does with libseccomp's defaults: no new privileges, no flags */
		struct sock_fprog prog = { .len = b->len, .filter = b->insns };

		r = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0 ? -errno : 0;
	} else { /* no sandbox_init for this mode (a caller of its own): compiled here */
		scmp_filter_ctx f = sandbox_build(mode, role);

		if (!f)
			return -ENOMEM;
		r = seccomp_load(f);
		seccomp_release(f);
	}
	if (r < 0)
		pr_err("sandbox: loading the %s thread's seccomp filter failed: %s (a kernel without "
		       "CONFIG_SECCOMP_FILTER? --no-sandbox runs without the filters)", roles[role].name,
		       strerror(-r));
	return r;
}

void sandbox_describe(enum sandbox_role role, char *out, unsigned long size)
{
	size_t at = 0;
	const struct allow *lists[2] = { common, roles[role].list };
	size_t ns[2] = { sizeof(common) / sizeof(common[0]), roles[role].n };
	static const char *const what[] = {
		[ANY] = "", [IOCTL_KVM] = "(KVM,VFIO)", [IOCTL_TUN] = "(TUNSETOFFLOAD)", [IOCTL_VHOST] = "(vhost)",
		[IOCTL_TCSETS] = "(TCSETS,TCGETS)", [OPEN_RDONLY] = "(read-only)", [OPEN_ANY] = "",
	};

	if (size)
		out[0] = 0;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < ns[l]; i++) {
			if (seccomp_syscall_resolve_name(lists[l][i].name) == __NR_SCMP_ERROR)
				continue;
			at += snprintf(out + at, at < size ? size - at : 0, "%s%s%s", at ? " " : "",
				       lists[l][i].name, what[lists[l][i].rule]);
		}
}
