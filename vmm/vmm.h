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

#define VM_MAX_VCPUS 64
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

/* bus.c: a sorted table of non-overlapping address ranges, filled before any vCPU runs. */
typedef void (*bus_fn)(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write);

struct bus_dev {
	uint64_t base, size;
	bus_fn fn;
	void *opaque;
	const char *name;
};

struct bus {
	struct bus_dev devs[BUS_MAX_DEVS];
	int nr;
};

int bus_register(struct bus *bus, uint64_t base, uint64_t size, bus_fn fn, void *opaque,
		 const char *name);
const struct bus_dev *bus_find(const struct bus *bus, uint64_t addr, uint32_t len);
/* Dispatches one access; an access nobody claims reads as zero and is counted, never fatal. */
bool bus_access(const struct bus *bus, uint64_t addr, uint8_t *data, uint32_t len, bool is_write);

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

enum console_kind { CONSOLE_SERIAL, CONSOLE_NONE };

struct vm_config {
	const char *kernel, *initrd, *params, *dump_dtb;
	unsigned int nr_cpus;
	uint64_t mem_size;
	enum console_kind console;
};

/* "512M", "2G", "64k", "1GiB"; a bare number is MiB. */
int parse_size(const char *s, uint64_t *out);
/* 0: parsed; 1: --help asked; <0: bad input (message printed). */
int config_parse_run(struct vm_config *c, int argc, char **argv);
void config_usage(FILE *f);

/* uart.c: a 16550A on MMIO (byte registers, stride 1). */
#define UART_FIFO_SIZE 64

struct uart {
	pthread_mutex_t lock;
	int out_fd;
	void (*set_irq)(void *opaque, bool level);
	void *irq_opaque;
	uint8_t ier, iir, iir_fifo, lcr, mcr, scr, dll, dlm;
	bool thre_pending, irq_level;
	uint8_t rx[UART_FIFO_SIZE];
	unsigned int rx_head, rx_count;
	uint64_t tx_bytes;
	/* Guest output is matched against watch; on_watch runs once per match (no pvpanic needed). */
	const char *watch;
	size_t watch_pos;
	void (*on_watch)(void *opaque);
	void *watch_opaque;
};

void uart_init(struct uart *u, int out_fd, void (*set_irq)(void *, bool), void *irq_opaque);
void uart_mmio(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write);
/* Queues guest input; returns how many bytes fit (the rest waits for the guest to read). */
size_t uart_push_input(struct uart *u, const uint8_t *buf, size_t len);
/* The line Linux prints when it panics; vm_watch_panic() marks the VM when the guest prints it. */
#define GUEST_PANIC_BANNER "Kernel panic - not syncing"
void vm_watch_panic(void *vm);

/* term.c: raw terminal while a guest owns it; restored at exit and on fatal signals. */
int term_raw(void);
void term_restore(void);

/* Exit codes of a VM run; main() returns them as the process status. */
enum vm_exit_code {
	VM_EXIT_POWEROFF = 0, /* the guest powered off (PSCI SYSTEM_OFF) */
	VM_EXIT_ERROR = 1,    /* vmm failed: bad input, a KVM error */
	VM_EXIT_RESET = 2,    /* the guest asked for a reset and the board does not reboot */
	VM_EXIT_CRASH = 3,    /* the guest crashed or KVM could not run it */
};

struct vm;

struct vcpu {
	struct vm *vm;
	int id;
	int fd;
	struct kvm_run *run;
	size_t run_size;
	pthread_t thread;
	atomic_bool thread_valid;
	struct vcpu_exits exits;
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
};

/* vm.c */
int vm_create(struct vm *vm, unsigned long type);
void vm_destroy(struct vm *vm);
int vm_enable_cap(struct vm *vm, uint32_t cap, uint64_t arg0);
/* Asks every vCPU to leave KVM_RUN and stop; safe from any thread, including a vCPU's own. */
void vm_request_stop(struct vm *vm, int exit_code);

/* mem.c */
int vm_mem_add(struct vm *vm, uint64_t gpa, uint64_t size);
/* Host pointer for [gpa, gpa+len) inside one region, or NULL: every guest address is checked. */
void *vm_gpa_to_hva(const struct vm *vm, uint64_t gpa, uint64_t len);

/* vcpu.c */
int vcpu_create(struct vm *vm, int id, struct vcpu **out);
void vcpu_destroy(struct vcpu *vcpu);
/* Runs until the VM is asked to stop or a system event ends it; returns the VM exit code or -errno. */
int vcpu_run_loop(struct vcpu *vcpu);
void vcpu_kick(struct vcpu *vcpu);
int vcpu_stats_fd(struct vcpu *vcpu);

/* run.c: runs every vCPU in its own thread until the VM stops; returns the exit code. */
int vm_run(struct vm *vm, struct uart *console);

#endif
