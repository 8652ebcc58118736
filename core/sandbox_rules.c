// SPDX-License-Identifier: MIT
/*
 * Per-thread seccomp allowlists. The lists come from each thread's code paths and from running
 * every lab test with them enforced (a refusal names the thread and the call), and are kept as
 * narrow as the code allows: ioctl only with KVM and VFIO request codes (plus the one tap request,
 * the terminal's two and the vhost requests a thread really makes), socket options only those the
 * control socket reads and sets, open only read-only where a report reads /sys or /proc (main also
 * writes --stats), no socket, clone, execve or ptrace anywhere after set-up.
 *
 * Compiled into BPF at build time (vmm/sandbox_gen.c): libseccomp's compile took about 20 ms of
 * the lab's 104 ms from exec to the guest's first entry, and its syscall table was resident in
 * every vmm.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_tun.h>
#include <linux/kvm.h>
#include <linux/perf_event.h>
#include <linux/vfio.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "core/sandbox_rules.h"

/* What a list entry allows beyond the plain call. */
enum rule {
	ANY,	      /* every argument */
	IOCTL_KVM,    /* ioctl with a KVM (KVMIO) or VFIO/iommufd (';') request code */
	IOCTL_TUN,    /* ioctl(TUNSETOFFLOAD): virtio-net applies the guest's offloads */
	IOCTL_VHOST,  /* ioctl with one of VHOST_REQUESTS: vhost-net's rings handed over at
		       * DRIVER_OK, taken back on reset and at exit */
	IOCTL_TCSETS, /* ioctl(TCSETS, TCGETS): tcsetattr sets, then reads back; the terminal
		       * restored on the way out */
	SOCKOPT_PEER, /* getsockopt(SOL_SOCKET, SO_PEERCRED or SO_PEERGROUPS): who the control
		       * socket's peer is, and its groups for --ctl-group */
	SOCKOPT_SNDTIMEO, /* setsockopt(SOL_SOCKET, SO_SNDTIMEO): a reply never waits long on a client */
	OPEN_RDONLY,  /* openat without write access or O_CREAT: reports reading /sys, /proc */
	OPEN_ANY,     /* openat: main writes --stats at exit */
	IOCTL_PERF,   /* ioctl(PERF_EVENT_IOC_ENABLE or _DISABLE): --attribute's window */
};

/*
 * The vhost requests vmm makes once its threads are sandboxed (virtio/vhost_net.c): features,
 * memory table and rings at DRIVER_OK, the backend set and unset, the ring's position read back,
 * a queue's call following its MSI-X vector. Not the rest of vhost's 0xAF range: VHOST_SET_OWNER
 * and VHOST_GET_FEATURES come before any filter, and vmm never logs dirty pages (SET_LOG_BASE),
 * gives up ownership (RESET_OWNER) or drives a vDPA device.
 */
#define VHOST_REQUESTS(X)                                                                          \
	X(VHOST_SET_FEATURES) X(VHOST_SET_MEM_TABLE) X(VHOST_SET_VRING_NUM) X(VHOST_SET_VRING_BASE) \
	X(VHOST_SET_VRING_ADDR) X(VHOST_SET_VRING_KICK) X(VHOST_SET_VRING_CALL)                     \
	X(VHOST_NET_SET_BACKEND) X(VHOST_GET_VRING_BASE)
#define VHOST_VALUE(req) req,
#define VHOST_CONST(req) { #req, req },

static const unsigned long vhost_requests[] = { VHOST_REQUESTS(VHOST_VALUE) };

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
	{ "getrusage", ANY }, /* its own context switches as it ends (the per-vCPU state at exit) */
};

/* A virtio worker: eventfds by epoll, requests by AIO (FLUSH is an AIO fdsync), tap by read/write. */
static const struct allow device[] = {
	{ "epoll_pwait", ANY }, { "epoll_wait", ANY }, { "epoll_ctl", ANY }, { "io_submit", ANY }, { "io_getevents", ANY },
	{ "io_pgetevents", ANY }, { "ppoll", ANY }, { "poll", ANY }, { "pread64", ANY }, { "pwrite64", ANY }, { "preadv", ANY }, { "pwritev", ANY },
	{ "fdatasync", ANY }, { "fsync", ANY }, { "ioctl", IOCTL_KVM }, { "ioctl", IOCTL_TUN },
};

/* Input can end the 16550's exact mode (uart_fast.c): its zone and memslot go, by KVM ioctls. The
 * ring's drain runs the UART's and the console watch's hooks: a boot marker is only marked here
 * (an eventfd write), the stats' snapshot is main's (tests/unit/sandbox_boot_marker_test.c). */
static const struct allow console[] = {
	{ "ppoll", ANY }, { "poll", ANY }, { "ioctl", IOCTL_KVM },
};

/* JSON requests on a connection (the peer's SO_PEERCRED, and with --ctl-group its SO_PEERGROUPS;
 * a deadline by poll; the send timeout, the reply through fdopen of a dup); stats from KVM's stats
 * fds, the vLPI report from debugfs. */
static const struct allow ctl[] = {
	{ "ppoll", ANY }, { "poll", ANY }, { "accept4", ANY }, { "accept", ANY }, { "shutdown", ANY }, { "recvfrom", ANY },
	{ "setsockopt", SOCKOPT_SNDTIMEO }, { "getsockopt", SOCKOPT_PEER }, { "dup", ANY }, { "dup3", ANY }, { "fcntl", ANY },
	{ "sendto", ANY }, { "pread64", ANY }, { "ioctl", IOCTL_KVM }, { "openat", OPEN_RDONLY },
	{ "getdents64", ANY }, { "statx", ANY },
};

/* The probe's UDP peer: a datagram in, the same datagram back, on a socket bound before. */
static const struct allow peer[] = {
	{ "ppoll", ANY }, { "poll", ANY }, { "recvfrom", ANY }, { "sendto", ANY },
};

/* --attribute's reader: its perf events were opened, filtered and mapped before this list; it
 * polls the rings, copies records out and switches the events on and off. */
static const struct allow trace[] = {
	{ "ppoll", ANY }, { "poll", ANY }, { "ioctl", IOCTL_PERF },
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
	{ "sysinfo", ANY }, /* glibc's qsort sizes its buffer by the RAM (the reports' percentiles) */
};

static const struct {
	const struct allow *list;
	size_t n;
} roles[SANDBOX_NR_ROLES] = {
	[SANDBOX_MAIN] = { main_, sizeof(main_) / sizeof(main_[0]) },
	[SANDBOX_VCPU] = { vcpu, sizeof(vcpu) / sizeof(vcpu[0]) },
	[SANDBOX_DEVICE] = { device, sizeof(device) / sizeof(device[0]) },
	[SANDBOX_CONSOLE] = { console, sizeof(console) / sizeof(console[0]) },
	[SANDBOX_CTL] = { ctl, sizeof(ctl) / sizeof(ctl[0]) },
	[SANDBOX_PEER] = { peer, sizeof(peer) / sizeof(peer[0]) },
	[SANDBOX_TRACE] = { trace, sizeof(trace) / sizeof(trace[0]) },
};

const struct sandbox_rule_consts sandbox_rule_consts[] = {
	{ "KVMIO", KVMIO }, { "VFIO_TYPE", VFIO_TYPE }, VHOST_REQUESTS(VHOST_CONST)
	{ "TUNSETOFFLOAD", TUNSETOFFLOAD }, { "TCSETS", TCSETS }, { "TCGETS", TCGETS },
	{ "SOL_SOCKET", SOL_SOCKET }, { "SO_PEERCRED", SO_PEERCRED }, { "SO_PEERGROUPS", SO_PEERGROUPS },
	{ "SO_SNDTIMEO", SO_SNDTIMEO }, { "O_ACCMODE", O_ACCMODE }, { "O_CREAT", O_CREAT }, { "O_RDONLY", O_RDONLY },
	{ "PERF_EVENT_IOC_ENABLE", PERF_EVENT_IOC_ENABLE }, { "PERF_EVENT_IOC_DISABLE", PERF_EVENT_IOC_DISABLE },
};
const size_t sandbox_rule_nconsts = sizeof(sandbox_rule_consts) / sizeof(sandbox_rule_consts[0]);

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
		for (size_t i = 0; i < sizeof(vhost_requests) / sizeof(vhost_requests[0]); i++) {
			int r = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_EQ, vhost_requests[i], 0));

			if (r < 0)
				return r;
		}
		return 0;
	case IOCTL_TCSETS: {
		int r = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_EQ, TCSETS, 0));

		return r < 0 ? r : seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_EQ, TCGETS, 0));
	}
	case SOCKOPT_PEER: {
		int r = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 2, SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET, 0),
					 SCMP_A2(SCMP_CMP_EQ, SO_PEERCRED, 0));

		return r < 0 ? r : seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 2, SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET, 0),
						    SCMP_A2(SCMP_CMP_EQ, SO_PEERGROUPS, 0));
	}
	case SOCKOPT_SNDTIMEO:
		return seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 2, SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET, 0),
					SCMP_A2(SCMP_CMP_EQ, SO_SNDTIMEO, 0));
	case OPEN_RDONLY:
		return seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT, O_RDONLY));
	case OPEN_ANY:
		return seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 0);
	case IOCTL_PERF: {
		int r = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_EQ, PERF_EVENT_IOC_ENABLE, 0));

		return r < 0 ? r : seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 1,
						    SCMP_A1(SCMP_CMP_EQ, PERF_EVENT_IOC_DISABLE, 0));
	}
	}
	return -EINVAL;
}

/* A call the target does not have (poll on arm64) is left out. Rules take the build machine's
 * number for a call; libseccomp translates it by name for the filter's architecture. */
static int add_list(scmp_filter_ctx f, uint32_t arch, const struct allow *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (seccomp_syscall_resolve_name_arch(arch, list[i].name) < 0)
			continue;
		int r = add_rule(f, seccomp_syscall_resolve_name(list[i].name), list[i].rule);

		if (r < 0) {
			fprintf(stderr, "sandbox: cannot add %s to the allowlist: %s\n", list[i].name, strerror(-r));
			return r;
		}
	}
	return 0;
}

scmp_filter_ctx sandbox_rules_build(uint32_t arch, enum sandbox_mode mode, enum sandbox_role role)
{
	/* The filters are for the target's kernel, not the build machine's: libseccomp is told the
	 * API level to assume (3: the LOG action, Linux 4.14) instead of probing the machine it runs
	 * on, which a container or qemu-user answers with level 1 and no LOG. */
	if (seccomp_api_set(3) < 0) {
		fprintf(stderr, "sandbox: libseccomp refuses API level 3\n");
		return NULL;
	}
	scmp_filter_ctx f = seccomp_init(mode == SANDBOX_LOG ? SCMP_ACT_LOG : SCMP_ACT_TRAP);

	if (!f) {
		fprintf(stderr, "sandbox: seccomp_init failed\n");
		return NULL;
	}
	if (arch != seccomp_arch_native() &&
	    (seccomp_arch_add(f, arch) < 0 || seccomp_arch_remove(f, SCMP_ARCH_NATIVE) < 0)) {
		fprintf(stderr, "sandbox: libseccomp cannot build filters for architecture 0x%x\n", arch);
		seccomp_release(f);
		return NULL;
	}
	if (add_list(f, arch, common, sizeof(common) / sizeof(common[0])) < 0 ||
	    add_list(f, arch, roles[role].list, roles[role].n) < 0) {
		seccomp_release(f);
		return NULL;
	}
	return f;
}

bool sandbox_rules_vhost_request(unsigned long req)
{
	for (size_t i = 0; i < sizeof(vhost_requests) / sizeof(vhost_requests[0]); i++)
		if (vhost_requests[i] == req)
			return true;
	return false;
}

/* libseccomp 2.5 exports to a file only: through a memfd. */
int sandbox_rules_export(scmp_filter_ctx f, void **insns, size_t *len)
{
	struct stat st;
	int fd, r;

	*insns = NULL;
	if ((fd = memfd_create("vmm-seccomp", MFD_CLOEXEC)) < 0)
		return -errno;
	if ((r = seccomp_export_bpf(f, fd)) < 0)
		goto out;
	r = -errno;
	if (fstat(fd, &st) < 0)
		goto out;
	r = -E2BIG;
	if (st.st_size == 0 || st.st_size % sizeof(struct sock_filter) ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		goto out;
	r = -ENOMEM;
	if (!(*insns = malloc(st.st_size)))
		goto out;
	r = -EIO;
	if (pread(fd, *insns, st.st_size, 0) != st.st_size)
		goto out;
	*len = st.st_size / sizeof(struct sock_filter);
	r = 0;
out:
	if (r < 0) {
		free(*insns);
		*insns = NULL;
	}
	close(fd);
	return r;
}

void sandbox_rules_describe(uint32_t arch, enum sandbox_role role, char *out, size_t size)
{
	size_t at = 0;
	const struct allow *lists[2] = { common, roles[role].list };
	size_t ns[2] = { sizeof(common) / sizeof(common[0]), roles[role].n };
	static const char *const what[] = {
		[ANY] = "", [IOCTL_KVM] = "(KVM,VFIO)", [IOCTL_TUN] = "(TUNSETOFFLOAD)", [IOCTL_VHOST] = "(vhost-net's)",
		[IOCTL_TCSETS] = "(TCSETS,TCGETS)", [SOCKOPT_PEER] = "(SO_PEERCRED,SO_PEERGROUPS)",
		[SOCKOPT_SNDTIMEO] = "(SO_SNDTIMEO)", [OPEN_RDONLY] = "(read-only)", [OPEN_ANY] = "",
		[IOCTL_PERF] = "(PERF_EVENT_IOC_ENABLE,DISABLE)",
	};

	if (size)
		out[0] = 0;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < ns[l]; i++) {
			if (seccomp_syscall_resolve_name_arch(arch, lists[l][i].name) < 0)
				continue;
			at += snprintf(out + at, at < size ? size - at : 0, "%s%s%s", at ? " " : "",
				       lists[l][i].name, what[lists[l][i].rule]);
		}
}
