/* SPDX-License-Identifier: MIT */
/*
 * vmm core: /dev/kvm, the VM object, guest memory, vCPUs and the MMIO/PIO bus.
 * Library code returns -errno after printing what failed and what to do; only main() exits.
 */
#ifndef VMM_VMM_H
#define VMM_VMM_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmm/kvm_seam.h"

/* The arm64 board's room for GICv3 redistributors (arm64.h's map; config.c asserts it): -c's
 * limit, so the option and the README agree. KVM may allow fewer on a given host. */
#define VM_MAX_VCPUS 123
#define VM_MAX_MEM_REGIONS 8
#define BUS_MAX_DEVS 64

/* log.c: every message names the failing step; errno-style codes are returned separately. */
void vmm_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_err(...) vmm_log("error", __VA_ARGS__)
#define pr_warn(...) vmm_log("warning", __VA_ARGS__)
#define pr_info(...) vmm_log(NULL, __VA_ARGS__)

/* kvm.c */
int kvm_open(void);
int kvm_check_ext(int fd, long cap); /* value >= 0, or 0 where the ioctl fails */
int kvm_ioctl_ret(int ret, const char *what); /* ret or -errno with a message */

/* bus.c: a sorted table of non-overlapping address ranges. Devices may come and go while vCPUs
 * run (a guest moving a PCI BAR): lookups take a read lock, copy the entry and call the handler
 * unlocked, so a handler may itself change the bus. Devices live as long as the VM. */
typedef void (*bus_fn)(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write);

struct bus_dev {
	uint64_t base, size;
	bus_fn fn;
	void *opaque;
	const char *name;
};

struct bus {
	pthread_rwlock_t lock;
	struct bus_dev devs[BUS_MAX_DEVS];
	int nr;
};

void bus_init(struct bus *bus);
int bus_register(struct bus *bus, uint64_t base, uint64_t size, bus_fn fn, void *opaque,
		 const char *name);
/* The same without a message: for addresses a guest chose, so a guest cannot flood the log. */
int bus_try_register(struct bus *bus, uint64_t base, uint64_t size, bus_fn fn, void *opaque,
		     const char *name);
int bus_unregister(struct bus *bus, uint64_t base, void *opaque);
/* Copies the device covering [addr, addr+len) into *out; false when nobody claims it all. */
bool bus_find(struct bus *bus, uint64_t addr, uint32_t len, struct bus_dev *out);
/* Dispatches one access; an access nobody claims reads as zero and is counted, never fatal. */
bool bus_access(struct bus *bus, uint64_t addr, uint8_t *data, uint32_t len, bool is_write);

/* mem.c */
struct mem_region {
	uint64_t gpa, size;
	uint8_t *hva;
	uint32_t slot;
};

/* vcpu exit counters, by reason; read by the stats code after the vCPU stops. */
struct vcpu_exits {
	atomic_uint_fast64_t mmio, mmio_unclaimed, pio, intr, system_event, other;
};

/* config.c: "vmm run" options. */
/* panic=-1: a panicking guest resets at once, and vmm reports the crash (see uart watch). */
#define CONFIG_DEFAULT_PARAMS "console=ttyS0 earlycon panic=-1"
#define CONFIG_DEFAULT_PARAMS_HVC "console=hvc0 panic=-1"

enum console_kind { CONSOLE_SERIAL, CONSOLE_VIRTIO, CONSOLE_NONE };

/* --kernel-format: auto detects an Image, Image.gz or zboot; image takes a raw Image only; flat
 * loads the file as it is (bare-metal payloads, unikernels). */
enum kernel_format { KERNEL_FORMAT_AUTO, KERNEL_FORMAT_IMAGE, KERNEL_FORMAT_FLAT };

#define CONFIG_MAX_DISKS 8

struct vm_disk {
	char path[512];
	bool ro;
};

#define CONFIG_MAX_NETS 4

struct vm_net {
	char tap[16]; /* IFNAMSIZ */
	uint8_t mac[6];
};

struct vm_config {
	const char *kernel, *initrd, *params, *dump_dtb;
	enum kernel_format kernel_format;
	struct vm_disk disk[CONFIG_MAX_DISKS];
	unsigned int nr_disks;
	struct vm_net net[CONFIG_MAX_NETS];
	unsigned int nr_nets;
	unsigned int nr_cpus;
	uint64_t mem_size;
	enum console_kind console;
};

/* "512M", "2G", "64k", "1GiB"; a bare number is MiB. */
int parse_size(const char *s, uint64_t *out);
/* 0: parsed; 1: --help asked; <0: bad input (message printed). */
int config_parse_run(struct vm_config *c, int argc, char **argv);
void config_usage(FILE *f);

/* console.c: guest console output. Writers (vCPUs, virtio workers) only copy into a bounded ring
 * and never block; the console thread drains it to stdout with non-blocking writes. When the
 * reader stalls, what does not fit is dropped and counted; when it goes away (EPIPE), output is
 * discarded from then on. The output is also watched, line by line, for the kernel's panic banner
 * (console_line_is_panic() says which lines count). */
#define CONSOLE_RING_SIZE (64 << 10)
#define CONSOLE_LINE_MAX 96 /* a printk prefix plus the banner fit; longer lines are not watched */

struct console_out {
	int fd;	    /* -1: output is dropped; else non-blocking, vmm's own (see console_out_init) */
	bool owned; /* fd is vmm's own reopening of stdout, closed by console_out_destroy */
	bool nonblock;
	int wake_fd; /* eventfd: output arrived in an empty ring */
	pthread_mutex_t lock;
	uint8_t ring[CONSOLE_RING_SIZE];
	size_t head, len;
	bool broken; /* the reader went away */
	uint64_t bytes, dropped;
	void (*on_panic)(void *opaque);
	void *panic_opaque;
	char line[CONSOLE_LINE_MAX];
	size_t line_len;
	bool line_done;
};

/* fd -1 drops output. A pipe, FIFO, terminal or socket is reopened through /proc/self/fd with
 * O_NONBLOCK (a file description of vmm's own: the shell's stays blocking); a regular file is
 * written as is. on_panic is called when a kernel panic banner line is seen. */
int console_out_init(struct console_out *co, int fd, void (*on_panic)(void *opaque), void *opaque);
void console_out_destroy(struct console_out *co);
void console_out_write(struct console_out *co, const uint8_t *buf, size_t len);
/* Writes what the ring holds as far as the fd takes it without blocking; one drainer at a time.
 * Returns the bytes still buffered. */
size_t console_out_drain(struct console_out *co);
/* At exit: drains for at most timeout_ms, then drops (and counts) what is left. */
void console_out_flush(struct console_out *co, int timeout_ms);
/* True when line (without its newline) is the kernel's panic banner: printk's time prefix
 * "[    1.234567] " (and the caller id "[     T1] " when the kernel has it) right before "Kernel
 * panic - not syncing". Userspace text at the start of a line carries no prefix and never counts;
 * guests booted with printk.time=0 are reported through pvpanic (or their reset) only. */
bool console_line_is_panic(const char *line, size_t len);

/* console.c: the keyboard filter: Ctrl-A x quits, Ctrl-A Ctrl-A sends one Ctrl-A, Ctrl-A with any
 * other key sends both. The state carries an escape begun at the end of one read into the next. */
struct console_escape {
	bool pending;
};

/* Filters n bytes of in into out, which must not overlap in and needs room for n + 1 bytes (an
 * escape carried over from the last read can add one); returns the bytes to send. *quit is set on
 * Ctrl-A x, and what follows it is not sent. */
size_t console_filter(struct console_escape *e, const uint8_t *in, size_t n, uint8_t *out, bool *quit);

/* Where the console thread delivers keyboard input: returns how many bytes the guest took. */
struct console_in_sink {
	size_t (*push)(void *opaque, const uint8_t *buf, size_t len);
	void *opaque;
};

/* uart.c: a 16550A on MMIO (byte registers, stride 1). */
#define UART_FIFO_SIZE 64

struct uart {
	pthread_mutex_t lock;
	struct console_out *out;
	void (*set_irq)(void *opaque, bool level);
	void *irq_opaque;
	uint8_t ier, iir, iir_fifo, lcr, mcr, scr, dll, dlm;
	bool thre_pending, irq_level;
	uint8_t rx[UART_FIFO_SIZE];
	unsigned int rx_head, rx_count;
};

void uart_init(struct uart *u, struct console_out *out, void (*set_irq)(void *, bool), void *irq_opaque);
void uart_mmio(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write);
/* Queues guest input; returns how many bytes fit (the rest waits for the guest to read). */
size_t uart_push_input(void *uart, const uint8_t *buf, size_t len);
/* The line Linux prints when it panics; vm_watch_panic() marks the VM when the kernel prints it. */
#define GUEST_PANIC_BANNER "Kernel panic - not syncing"
void vm_watch_panic(void *vm);

/* pvpanic.c: the guest's panic notifier (qemu,pvpanic-mmio): a write of PVPANIC_PANICKED stops
 * the VM as crashed. */
#define PVPANIC_MMIO_SIZE 2 /* the register window the FDT describes */

struct pvpanic {
	struct vm *vm;
	atomic_uint events; /* every event the guest wrote */
};

void pvpanic_init(struct pvpanic *p, struct vm *vm);
void pvpanic_mmio(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write);

/* term.c: raw terminal while a guest owns it; restored at exit and on fatal signals. */
int term_raw(void);
void term_restore(void);

/* pci.c: host bridge (ECAM, bus 0) and config space. */
#define PCI_MAX_SLOTS 32
#define PCI_CFG_SIZE 4096

struct pci_host_layout {
	uint64_t ecam_base, ecam_size;
	uint64_t mmio32_base, mmio32_size;
	uint64_t mmio64_base, mmio64_size;
};

struct pci_bar {
	uint64_t size;
	bool is64;
	bus_fn fn;
	void *opaque;
	const char *name;
	bool mapped;
	uint64_t mapped_addr;
	/* optional: told when the BAR leaves (new == 0) or enters (old == 0) the bus */
	void (*moved)(void *opaque, uint64_t old, uint64_t new);
};

struct pci_host;

struct pci_dev {
	struct pci_host *host;
	uint8_t devfn;
	uint8_t cfg[PCI_CFG_SIZE];
	uint8_t wmask[PCI_CFG_SIZE]; /* bits the guest may write */
	struct pci_bar bar[6];
	uint32_t cap_last, cap_end;
	pthread_mutex_t intx_lock; /* a leaf lock: taken under the host's or a device's lock */
	bool intx_level, intx_out; /* what the device asserts; what reaches the line */
	/* optional hooks, called under the host lock */
	void (*cfg_read)(struct pci_dev *d, uint32_t off, uint32_t len, uint32_t *val);
	void (*cfg_written)(struct pci_dev *d, uint32_t off, uint32_t len);
};

struct pci_host {
	struct vm *vm;
	struct pci_host_layout layout;
	pthread_mutex_t lock;
	struct pci_dev *slot[PCI_MAX_SLOTS];
	uint64_t mmio32_next, mmio64_next;
	/* the board's INTx wiring: slot's INTA# to an interrupt line */
	void (*set_intx)(void *opaque, unsigned int slot, bool level);
	void *intx_opaque;
};

int pci_host_init(struct pci_host *h, struct vm *vm, const struct pci_host_layout *l);
int pci_dev_add(struct pci_host *h, struct pci_dev *d, uint16_t vendor, uint16_t device,
		uint32_t class_rev, uint16_t subsys_vendor, uint16_t subsys);
/* Allocates a BAR in the 32- or 64-bit window; mapped when the guest enables memory decode. */
int pci_bar_add(struct pci_dev *d, int i, uint64_t size, bool is64, bus_fn fn, void *opaque,
		const char *name);
/* Appends a capability of len bytes; returns its offset. */
int pci_cap_add(struct pci_dev *d, uint8_t id, uint32_t len);
uint32_t pci_dev_rid(const struct pci_dev *d);
/* The device asserts (or releases) INTA#; the line follows unless the guest set INTX_DISABLE.
 * Status.INTERRUPT shows the device's level either way. */
void pci_intx(struct pci_dev *d, bool level);

/* msix.c: MSI-X table + PBA in their own 4 KiB BAR; one GSI and irqfd per vector. */
#define MSIX_MAX_VECTORS 64
#define MSIX_BAR_SIZE 0x1000
#define MSIX_PBA_OFFSET 0x800

struct msix_vector {
	uint32_t addr_lo, addr_hi, data, ctrl; /* as the guest wrote them */
	int gsi, fd;
	bool routed, irqfd; /* the committed route matches route_addr/data; the irqfd is assigned */
	uint64_t route_addr;
	uint32_t route_data;
	bool deliver; /* under dlock: live, routed and with its irqfd */
};

struct msix {
	struct vm *vm;
	struct pci_dev *dev;
	pthread_mutex_t lock;  /* guest-side changes; held across route commits */
	pthread_mutex_t dlock; /* delivery state only: never held across a commit */
	uint32_t cap;
	unsigned int nr;
	bool enabled, fmask;   /* under lock */
	bool live_enabled;     /* enabled, under dlock */
	uint64_t pba;	       /* under dlock */
	struct msix_vector vec[MSIX_MAX_VECTORS];
	atomic_uint_fast64_t irqs;	   /* interrupts sent through irqfds */
	atomic_uint_fast64_t route_errors; /* a route or irqfd KVM refused: the vector stays pending */
};

int msix_init(struct msix *m, struct vm *vm, struct pci_dev *d, unsigned int nr, int bar);
/* The device's cfg_written hook must pass writes on, for the enable and mask-all bits. */
void msix_cfg_written(struct msix *m, uint32_t off, uint32_t len);
/* Raises vector i (or sets its PBA bit); false when MSI-X is disabled and nothing was done, so
 * the caller uses INTx instead. */
bool msix_notify(struct msix *m, unsigned int vector);
bool msix_enabled(struct msix *m);

/* Exit codes of a VM run; main() returns them as the process status. */
enum vm_exit_code {
	VM_EXIT_POWEROFF = 0, /* the guest powered off (PSCI SYSTEM_OFF) */
	VM_EXIT_ERROR = 1,    /* vmm failed: bad input, a KVM error */
	VM_EXIT_RESET = 2,    /* the guest asked for a reset and the board does not reboot */
	VM_EXIT_CRASH = 3,    /* the guest crashed or KVM could not run it */
};

struct vm;

/* vcpu.c: how a vCPU's thread is signalled out of KVM_RUN. Apart from struct vcpu so a unit test
 * can race kicks against a thread's exit without /dev/kvm. */
struct vcpu_kicker {
	pthread_mutex_t lock;
	pthread_t thread;
	atomic_bool running; /* between enter and leave */
	int (*kill)(pthread_t thread, int sig); /* pthread_kill; tests watch the calls */
};

void vcpu_kicker_init(struct vcpu_kicker *k);
/* Called by the thread itself when it starts running, and before it exits. */
void vcpu_kicker_enter(struct vcpu_kicker *k);
void vcpu_kicker_leave(struct vcpu_kicker *k);
/* Signals the thread when it is running and is not the caller. */
void vcpu_kicker_kick(struct vcpu_kicker *k, int sig);

struct vcpu {
	struct vm *vm;
	int id;
	int fd;
	struct kvm_run *run;
	size_t run_size;
	struct vcpu_kicker kicker;
	struct vcpu_exits exits;
};

/* irq.c: the GSI routing table vmm owns and commits whole. */
#define IRQ_MAX_ROUTES 1024

struct irq_routing {
	pthread_mutex_t lock;
	struct kvm_irq_routing_entry e[IRQ_MAX_ROUTES];
	int nr;
	uint32_t next_gsi;
	atomic_uint_fast64_t commits;
};

struct vm {
	int kvm_fd;
	int fd;
	int vcpu_mmap_size;
	struct mem_region mem[VM_MAX_MEM_REGIONS];
	int nr_mem;
	struct bus mmio;
	struct bus pio;
	struct vcpu *vcpus[VM_MAX_VCPUS];
	int nr_vcpus;
	atomic_bool stop;
	atomic_int exit_code;
	atomic_bool guest_panicked; /* a reset after this is reported as a crash */
	atomic_bool pvpanicked;	    /* the guest said so through pvpanic (pvpanic.c) */
	bool msi_needs_devid; /* set once a vITS exists (KVM_CAP_MSI_DEVID) */
	struct irq_routing routing;
	struct kvm_seam kvm; /* how devices reach KVM: the ioctls, or a test's fake */
};

/* vm.c */
int vm_create(struct vm *vm, unsigned long type);
void vm_destroy(struct vm *vm);
int vm_enable_cap(struct vm *vm, uint32_t cap, uint64_t arg0);
/* Asks every vCPU to leave KVM_RUN and stop; safe from any thread, including a vCPU's own. */
void vm_request_stop(struct vm *vm, int exit_code);

/* mem.c */
/* The host mapping behind a region of guest RAM (munmap(hva, size) frees it). */
int vm_mem_map(uint64_t size, uint8_t **hva);
int vm_mem_add(struct vm *vm, uint64_t gpa, uint64_t size);
/* Host pointer for [gpa, gpa+len) inside one region, or NULL: every guest address is checked. */
void *vm_gpa_to_hva(const struct vm *vm, uint64_t gpa, uint64_t len);

/* irq.c */
/* Starts the table with identity irqchip routes for GSIs [0, n) (on arm64: SPI n = INTID 32 + n). */
int irq_routing_init(struct vm *vm, uint32_t nr_irqchip_gsis);
int irq_gsi_alloc(struct vm *vm);
void irq_msi_entry(const struct vm *vm, struct kvm_irq_routing_entry *e, uint32_t gsi, uint64_t addr,
		   uint32_t data, uint32_t devid);
/* Adds, replaces (e != NULL) or removes (e == NULL) the route of gsi in the table only. */
int irq_table_set(struct irq_routing *rt, uint32_t gsi, const struct kvm_irq_routing_entry *e);
/* irq_table_set(), then commits the whole table with KVM_SET_GSI_ROUTING. */
int irq_route_update(struct vm *vm, uint32_t gsi, const struct kvm_irq_routing_entry *e);
int irq_irqfd(struct vm *vm, int fd, uint32_t gsi, int resample_fd, bool assign);
int irq_ioeventfd(struct vm *vm, uint64_t addr, uint32_t len, int fd, bool assign);
/* Drives an interrupt line (KVM_IRQ_LINE's encoding, chosen by the board). */
int irq_line(struct vm *vm, uint32_t irq, bool level);

/* vcpu.c */
int vcpu_create(struct vm *vm, int id, struct vcpu **out);
void vcpu_destroy(struct vcpu *vcpu);
/* Runs until the VM is asked to stop or a system event ends it; returns the VM exit code or -errno. */
int vcpu_run_loop(struct vcpu *vcpu);
void vcpu_kick(struct vcpu *vcpu);
int vcpu_stats_fd(struct vcpu *vcpu);

/* run.c: runs every vCPU in its own thread until the VM stops; returns the exit code. With a
 * console sink, the terminal goes raw and its input is delivered there; out's ring is drained to
 * its fd meanwhile and flushed (bounded) at the end. */
int vm_run(struct vm *vm, const struct console_in_sink *console, struct console_out *out);

#endif
