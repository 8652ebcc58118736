/* SPDX-License-Identifier: MIT */
/* make bench's runner (tests/lab/bench.c and its bench_*.c sections): the lab's paths and the peer's
 * per arch, the run's state and what the sections share. Private to the runner. */
#ifndef VMM_TESTS_LAB_BENCH_LAB_H
#define VMM_TESTS_LAB_BENCH_LAB_H

#include <stdbool.h>
#include <stddef.h>

struct bench_report;
struct result;

#define RAM_MIB 512
#define TAP "vmmbench0"
/* The peer (tests/lab/mkinitramfs.sh --bench-extra): QEMU with its libraries, run through the
 * arm64 loader, and the cpio vmm links in as its built-in guest. */
#define QEMU_DIR "/lab/qemu"
#define BUILTIN_GUEST "/lab/builtin-guest.cpio.gz"
/* An arm64 Image whose first instructions power off (Makefile: tests/lab/baremetal/poweroff.S) */
#define POWEROFF_IMAGE "/lab/poweroff.img"
/* The peer as each lab packs it: arm64's from bookworm-backports' arm64 packages (fetch.sh
 * lab-qemu-arm64), x86's from this machine's own qemu-system-x86 (run-x86.sh --bench), each
 * with its firmware in QEMU_DIR (-L); the x86 lab's one disk is its vda. */
#if defined(__aarch64__)
#define QEMU_LOADER QEMU_DIR "/lib/ld-linux-aarch64.so.1"
#define QEMU_BIN QEMU_DIR "/bin/qemu-system-aarch64"
#define QEMU_MACHINE "virt,gic-version=host"
#define QEMU_CONSOLE "console=ttyAMA0"
#define QEMU_HOW "make bench fetches them: scripts/fetch.sh lab-qemu-arm64; tests/lab/run.sh --bench packs them"
#define LAB_DISK "/dev/vdb"
#elif defined(__x86_64__)
#define QEMU_LOADER QEMU_DIR "/lib/ld-linux-x86-64.so.2"
#define QEMU_BIN QEMU_DIR "/bin/qemu-system-x86_64"
#define QEMU_MACHINE "q35"
#define QEMU_CONSOLE "console=ttyS0"
#define QEMU_HOW "tests/lab/run-x86.sh --bench packs this machine's qemu-system-x86_64 (make deps installs it)"
#define LAB_DISK "/dev/vda"
#else
#error "the bench knows the arm64 and x86_64 labs"
#endif
/* The second peer, arm64 only (fetch.sh lab-kvmtool-arm64): kvmtool's static lkvm, and the lab's
 * kernel as a raw Image (kvmtool loads no other kind). */
#define KVMTOOL_BIN "/lab/kvmtool/lkvm"
#define KVMTOOL_IMAGE "/tmp/kvmtool-Image"

struct bench {
	struct bench_report *rep;
	int reps;      /* repetitions of a cheap figure (a boot) */
	int slow_reps; /* of an expensive one (a verbose boot) */
	int io_reps, io_ms;
	const char *disk;
	const char *only;
	double quiet_mmio; /* median userspace exits of a quiet test-guest boot: the devices' baseline */
	bool qemu;	   /* the QEMU/KVM peer runs (qemu_probe) */
	bool kvmtool;	   /* the kvmtool peer runs (kvmtool_probe) */
	char *kernel;	   /* the guest kernel both boot (lab_kernel) */
	bool text_pages;   /* --text-pages: fault-around of one page, the text's resident pages */
	bool vf_marker;	   /* --vf-marker: the VF's memory run with the guest printing vmm's boot-end marker */
};

/* What read_rss reads: where the figure goes, and whether to print the mappings one by one. */
struct rss_probe {
	struct bench *b;
	const char *figure;
	bool breakdown;
	double read_at; /* CLOCK_MONOTONIC s of the smaps read */
	unsigned long long ram_bytes; /* the guest RAM mapping's size; 0: RAM_MIB MiB exactly */
	/* set: after the smaps read, the VMM's wake-ups while the guest idles (voluntary context
	 * switches per second over all its threads, WAKE_SECONDS long) as this figure */
	const char *wake_figure;
};

#define WAKE_SECONDS 10

/* bench_io.c: argv run as run_vmm(argv, timeout, r) does, and meanwhile the VMM's host CPU time
 * (all its threads) per guest benchmark operation, from its CPU time at each of blkbench's and
 * netbench's lines: prefix + cpu.blk.KIND_4k.qdN (per request), prefix + cpu.net.udp_rr + suffix
 * (per packet, two a round trip), in us. */
void run_cpu_per_op(char *const argv[], int timeout, struct bench *b, const char *prefix, const char *suffix,
		    struct result *r);

/* bench_memory.c: what vmm said ended start-up (its VMM_TIMINGS line), in words */
const char *release_why(const char *err);

/* bench.c: the report's figures and vmm's output */
void add(struct bench *b, const char *name, const char *unit, bool higher, double v);
double median_of(const struct bench *b, const char *name);
double timing(const char *err, const char *phase);
int exit_table(const char *err, unsigned long long *mmio, unsigned long long *kvm);
void fail_note(const char *what, const struct result *r);

/* bench_entry.c: launch to the first kvm_entry, from the lab host's tracefs */
struct entry_trace {
	char clock[32], on[4]; /* the host's trace_clock and tracing_on, restored after each run */
};
bool entry_trace_arm(struct entry_trace *t);
double entry_trace_first_ms(const struct entry_trace *t, double t0);

/* bench_startup.c */
/* A thread name (/proc's comm) of a VMM's vCPU: vmm's vmm-vcpu, kvmtool's kvm-vcpu-N, QEMU's
 * CPU N/KVM (with -name debug-threads=on; QEMU names no thread without it). */
bool comm_is_vcpu(const char *comm);
void guest_clock_split(struct bench *b, const char *prefix, const char *out, double init_ms, double vcpus_at);
void startup_quiet(struct bench *b);
void startup_verbose(struct bench *b);
void mmio_round_trip(struct bench *b);
void trace(struct bench *b);

/* bench_memory.c */
long set_fault_around(long bytes);
void read_rss(int pid, void *arg);
const char *mem_figure(const struct bench *b, const char *name, char *buf, size_t n);
void memory(struct bench *b);

/* bench_io.c */
void blk_figures(struct bench *b, const char *out, const char *prefix);
void blk(struct bench *b);
void *tap_up(void *arg);
void net_figures(struct bench *b, const char *out, const char *prefix, const char *suffix);
void tap_gone(void);
void net(struct bench *b);

/* bench_vfio.c */
void vfio(struct bench *b);

/* bench_exits.c: --only exits, a quiet boot's MMIO accesses by guest physical region under vmm and
 * kvmtool (the host's kvm_mmio and kvm_userspace_exit events) */
void exits_by_region(struct bench *b);

/* bench_qemu.c */
void qemu_argv(const struct bench *b, char **argv, size_t n, const char *initrd, const char *append,
	       char *const extra[]);
bool qemu_probe(void);
double qemu_startup_one(struct bench *b);
double qemu_first_instruction_one(struct bench *b);
bool qemu_memory_one(struct bench *b);
bool qemu_blk_one(struct bench *b, int reps);
bool qemu_vhost_usable(void);
bool qemu_net_one(struct bench *b, int reps, bool vhost);

/* bench_kvmtool.c */
bool kvmtool_probe(struct bench *b);
double kvmtool_startup_one(struct bench *b);
double kvmtool_first_instruction_one(struct bench *b);
bool kvmtool_memory_one(struct bench *b);

#endif
