/* SPDX-License-Identifier: MIT */
/*
 * Architecture operations: everything the generic board lifecycle (vmm/board.c) asks of an
 * architecture, in one table. The core never includes an arch header nor tests the compiler's
 * architecture; the Makefile links one arch's table and arch_native() returns it. Adding an
 * architecture means one folder that fills this table.
 */
#ifndef VMM_ARCH_H
#define VMM_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/cpu_opts.h"
#include "core/pci.h"

struct arch_ops;
struct boot_times;
struct kvm_error_pc;
struct vcpu;
struct vm;

/* --kernel-format: auto detects an Image, Image.gz or zboot; image takes a raw Image only; flat
 * loads the file as it is (bare-metal payloads, unikernels). */
enum kernel_format { KERNEL_FORMAT_AUTO, KERNEL_FORMAT_IMAGE, KERNEL_FORMAT_FLAT };

/* The VM the arch operations build: what they read of the user's options, which the app fills in
 * from its parsed command line (vmm/config.h) before the VM exists. */
struct machine_spec {
	uint64_t mem_size;
	unsigned int nr_cpus;
	const char *cmdline;	/* the kernel's command line, the default filled in */
	bool serial_console;	/* the 16550 is the guest's console (the FDT's stdout-path) */
	enum kernel_format kernel_format;
	struct cpu_opts cpu;	/* --cpu: arm64's vCPU features; other boards refuse cpu.given */
	/* x86's options, as given: the x86 board checks them; other boards refuse any (x86_given) */
	bool x86_given;
	const char *pv;		/* --pv KNOB=VAL,...: "" none */
	const char *irqchip, *apic; /* NULL: not given */
	bool no_hlt_exit;
};

/* The board as the arch operations reach it: the app's board embeds one and fills it in before
 * the first operation. */
struct machine {
	struct vm *vm;
	const struct arch_ops *arch;
	void *arch_priv; /* the arch's own state (arm64: GIC, ITS, MPIDRs; x86: IOAPIC, CPUID) */
	/* the devices the platform description lists: bus 0's, and the size of pvpanic's register
	 * window (the device's, platform/pvpanic.h) */
	const struct pci_host *pci;
	uint64_t pvpanic_reg;
	struct boot_times *times; /* start-up phases: load marks its own */
};

/* The parts of the memory map the generic board places devices with. */
struct board_layout {
	uint64_t ram_base;
	uint64_t uart_base, uart_size;
	bool uart_pio;            /* the UART sits on the port I/O bus (x86's 0x3f8), not MMIO */
	uint64_t pvpanic_base, pvpanic_size; /* 0: the board has no pvpanic */
	struct pci_host_layout pci;
	uint32_t nr_irqchip_gsis; /* identity irqchip routes the routing table starts with */
	uint32_t irqchip;	  /* their KVM irqchip id (arm64: 0, the GIC; x86: the IOAPIC) */
	uint32_t uart_line;	  /* board interrupt lines, turned into KVM_IRQ_LINE values by */
	uint32_t intx_line_base;  /* arch_ops.line_irq; slot s's INTA# is intx_line_base + s */
};

/* A piece of guest RAM: a memslot of its own. */
struct ram_range {
	uint64_t gpa, size;
};

#define ARCH_RAM_RANGES 4

/* What the generic board read for the guest: the kernel file and the initrd (the built-in one
 * when the user gave no kernel and no initrd). */
struct boot_files {
	const char *kernel_path;
	const uint8_t *kernel, *initrd; /* the files mapped, their pages not populated */
	size_t kernel_len, initrd_len;
	int kernel_fd, initrd_fd;	/* for vm_mem_load; -1: in memory only (the built-in initrd) */
};

/* A passed-through device's MSI or MSI-X vectors as vmm set them up, for arch_ops.msi_report. */
struct msi_dev {
	const char *bdf;	/* host BDF ("0000:00:13.0"), as in /proc/interrupts */
	const char *guest_bdf;	/* for the report line; may be NULL */
	bool msi;		/* MSI rather than MSI-X */
	unsigned int nr_vectors;
	uint32_t devid;		/* the guest RID its MSI routes carry (arm64: the ITS DeviceID) */
	const int64_t *event;	/* per vector, the guest's MSI data; -1 or NULL unknown */
	unsigned int vm_vectors; /* all VFIO MSI vectors of this VM on irqfds (all devices); 0 unknown */
};

/* How one of those vectors reaches the guest, as the report proves it. */
enum msi_verdict_status {
	MSI_VERDICT_UNKNOWN,	 /* why says why */
	MSI_VERDICT_DIRECT,	 /* the hardware injects it, KVM never sees it (arm64: a GICv4 vLPI) */
	MSI_VERDICT_SOFTWARE,	 /* KVM injects it from VFIO's irqfd */
	MSI_VERDICT_NOT_ENABLED, /* the host has no IRQ for it: VFIO never enabled the vector */
};

struct msi_verdict {
	enum msi_verdict_status status;
	char why[160];
};

/* How this VM's IPIs reach a vCPU, as the arch decided it at creation (x86: the PV policy), for
 * the per-vCPU state report (vmm/vcpu_state.c). */
struct arch_ipi_path {
	bool hw_ipi;	  /* the hardware delivers unicast IPIs without an exit (AMD AVIC, Intel IPIv) */
	bool pv_send_ipi; /* the guest was offered KVM's PV_SEND_IPI hypercall */
};

struct arch_cap {
	const char *name;
	long cap;
};

/* The counter guest and host share, for one clock between the guest's samples and the host's
 * trace (issue 37): guest counter = host counter - offset. */
struct arch_clock {
	uint64_t hz;	  /* the counter's frequency; 0 unknown */
	int64_t offset;
	bool known;	  /* offset holds something; false: no way to tie the two */
	uint64_t err_ns;  /* the offset's uncertainty (0: KVM's own value) */
	char how[96];	  /* "KVM_ARM_SET_COUNTER_OFFSET 0", or how it was estimated and why */
};

struct arch_ops {
	const char *name;
	const struct board_layout *layout;
	unsigned int max_vcpus;	  /* what the board has room for */
	const char *max_vcpus_why; /* said when -c asks for more */
	/* Guest RAM for mem_size bytes, in address order (x86: around the PCI hole below 4 GiB).
	 * NULL: one range at layout->ram_base. Returns how many, or a negative errno with a message. */
	int (*ram_plan)(uint64_t mem_size, struct ram_range out[ARCH_RAM_RANGES]);
	/* KVM_CREATE_VM's type for this VM (arm64: the IPA size), asking the host through kvm_fd. */
	int (*vm_type)(int kvm_fd, const struct machine_spec *s, unsigned long *type);
	/* After the VM and its RAM exist: VM capabilities, limits, the irqchip (before any vCPU). */
	int (*vm_init)(struct machine *m, const struct machine_spec *s);
	/* A vCPU just created; the boot vCPU is id 0, the others start powered off. */
	int (*vcpu_init)(struct machine *m, struct vcpu *v);
	/* After every vCPU: finish the irqchip (arm64: KVM_DEV_ARM_VGIC_CTRL_INIT). */
	int (*irqchip_init)(struct machine *m);
	/* Places kernel and initrd in RAM, describes the platform (FDT; ACPI/MP tables later) and
	 * sets the boot vCPU's registers. */
	int (*load)(struct machine *m, const struct machine_spec *s, const struct boot_files *f);
	/* The KVM_IRQ_LINE value of a board interrupt line (struct board_layout). */
	uint32_t (*line_irq)(uint32_t line);
	/* Optional: drives a board line itself (x86's userspace IOAPIC) instead of KVM_IRQ_LINE. */
	void (*set_line)(struct machine *m, uint32_t line, bool level);
	/* Optional: starts the GSI routing table (default: identity irqchip routes for the
	 * layout's nr_irqchip_gsis); before any device. */
	int (*routing_init)(struct machine *m);
	/* --dump-dtb or its equivalent: writes the platform description to path. */
	int (*dump_platform)(struct machine *m, const char *path);
	void (*destroy)(struct machine *m);
	/* Optional: the arch's members of the --stats JSON's "vmm" object (",\"name\":...",
	 * arm64: the vCPU features). */
	void (*vmm_json)(struct machine *m, FILE *f);
	/* The per-vCPU host halt-polling switch (x86: MSR_KVM_POLL_CONTROL); both NULL where the
	 * architecture has none. poll_control_refusal: NULL when this VM can use it, else why not.
	 * poll_control: on the vCPU's thread (vcpu_call); set 0 or 1 writes it, -1 only reads;
	 * returns the switch as KVM then holds it (1: KVM may poll for the vCPU) or -errno. */
	const char *(*poll_control_refusal)(struct machine *m);
	int (*poll_control)(struct machine *m, struct vcpu *v, int set);
	/* Optional, on a vCPU's thread as it handles an exit (core/vcpu.c), reached through its VM's
	 * machine: where the vCPU is, for the report of a KVM internal error or a shutdown; and
	 * KVM_EXIT_IOAPIC_EOI (x86's split irqchip: the IOAPIC is vmm's), the vector EOIed. */
	int (*vcpu_pc)(struct vcpu *v, struct kvm_error_pc *pc);
	void (*ioapic_eoi)(struct machine *m, uint8_t vector);
	/* Optional: makes bytes vmm wrote through its own (cacheable) mapping visible to a guest that
	 * may read them with caching off (arm64 without FEAT_S2FWB: clean them to the point of
	 * coherency); NULL where the hardware keeps the two coherent (x86). The UART's register page. */
	void (*publish_to_guest)(const void *p, size_t len);
	/* Optional: per vCPU, the vLPIs (GICv4 direct injection, arm64) this VM's interrupt
	 * controller shows mapped now, in vlpis[0..n) (-1: unreadable). NULL where no device
	 * interrupt reaches a vCPU without a halt exit (x86: HLT always exits): the halt-poll ceiling
	 * alone governs polling, and the run's stats have no governor report nor vLPI window. */
	void (*vcpu_vlpis)(struct vm *vm, int *vlpis, int n);
	/* Optional: the guest's counter against the host's (struct arch_clock), as set up before the
	 * vCPUs ran; and the host's read of it from user space (arm64 CNTVCT_EL0, x86 RDTSC). */
	void (*clock)(struct machine *m, struct arch_clock *c);
	uint64_t (*counter_read)(void);
	/* What the trace knows a vCPU's timer by: the hrtimer function that wakes a blocked vCPU
	 * (arm64 kvm_bg_timer_expire, x86 apic_timer_fn), and the host IRQ a loaded vCPU's timer
	 * raises, as /proc/interrupts names it (arm64 "kvm guest vtimer"; NULL: none). */
	const char *trace_timer_fn;
	const char *trace_timer_irq;
	/* The host takes an interrupt that sends a running vCPU out after kvm_exit is traced (x86:
	 * the exit is the interrupt's arrival, its handler runs once the host enables interrupts);
	 * false where it is traced before (arm64). */
	bool trace_irq_after_exit;
	const struct arch_cap *caps; /* for "vmm caps", beside the generic ones */
	size_t nr_caps;
	/* Optional: more for "vmm caps" after the capabilities (x86: KVM_GET_SUPPORTED_CPUID). */
	void (*caps_print)(int kvm_fd, FILE *f);
	/* Optional: per vector of dev, whether its MSI reaches a vCPU without KVM (arm64: a GICv4
	 * vLPI, from KVM's debugfs and /proc/interrupts), now. Writes the report as one line into
	 * line (size bytes, always terminated), as JSON ({"bdf":...,"vectors":[...]}) to json and
	 * per vector into verdict[0..dev->nr_vectors), each when not NULL. 0, or -errno for bad
	 * arguments and out of memory (nothing written then). NULL (x86): every vector KVM has an
	 * irqfd for is software-injected, which vfio reports from /proc/interrupts alone. */
	int (*msi_report)(struct vm *vm, const struct msi_dev *dev, struct msi_verdict *verdict, char *line,
			  size_t size, FILE *json);
	/* Optional: this VM's IPI path (struct arch_ipi_path); false, or NULL (arm64), when the arch
	 * has no such decision. */
	bool (*ipi_path)(struct machine *m, struct arch_ipi_path *p);
};

/* The architecture this vmm was built for, or NULL when it boots no guests yet. */
const struct arch_ops *arch_native(void);

#endif
