/* SPDX-License-Identifier: MIT */
/*
 * The generic board: a VM with RAM, the console, the 16550, pvpanic, the PCI host bridge and the
 * virtio devices the config asks for, built and run in one order for every architecture; the
 * arch operations (core/arch.h) fill in the rest.
 */
#ifndef VMM_BOARD_H
#define VMM_BOARD_H

#include <stdatomic.h>

#include "halt_poll/halt_poll.h"
#include "core/arch.h"
#include "vmm/ctl.h"
#include "vmm/attribute.h"
#include "vmm/boot_quiet.h"
#include "vmm/config.h"
#include "platform/console.h"
#include "core/pci.h"
#include "vmm/probe_peer.h"
#include "vmm/probe_rx.h"
#include "platform/pvpanic.h"
#include "core/timings.h"
#include "platform/uart.h"
#include "core/vm.h"

struct virtio_dev;
struct vfio_container;
struct vfio_pci;

struct board {
	struct vm vm;
	struct machine machine;	  /* what the arch operations reach: vm, arch, pci, times */
	struct machine_spec spec; /* the VM they build, from the config (board_run) */
	struct console_out out;
	struct uart uart;
	struct pvpanic pvpanic;
	struct pci_host pci;
	struct virtio_dev *vdev[PCI_MAX_SLOTS];
	int nr_vdev;
	struct virtio_dev *vconsole;
	struct probe_rx probe; /* the latency probe's results (vmm.probe= given) */
	bool probe_on;
	struct vfio_container *vfio_c; /* one per VM, opened with the first --vfio device */
	struct vfio_pci *vfio[CONFIG_MAX_VFIO];
	int nr_vfio;
	struct hp_run stats; /* KVM stats since the guest started; the halt-poll ceiling */
	/* the interrupt table's inputs the main thread's tick updates (VFIO host counts, vLPI
	 * verdicts) against the control thread reading them */
	pthread_mutex_t irq_lock;
	double host_irqs_at;	  /* when the host's counts were last sampled */
	unsigned int vlpi_live;	  /* live VFIO vectors when the vLPI window opened, 0: not open */
	unsigned int vlpi_tried;  /* the live count a window was last tried for (vgic-state read) */
	bool stats_open;
	bool stats_live;	 /* open, and the start snapshot taken: the boot-end hooks feed it */
	atomic_bool release_due; /* the boot has ended: start-up's memory goes (main thread) */
	bool released;
	const char *release_why;  /* what ended start-up, as the exit summary says it (NULL: kept) */
	struct boot_quiet quiet;  /* start-up's end for a guest that prints no marker */
	enum hp_trap wfi_policy;  /* the host's kvm-arm.wfi_trap_policy (arm64): whose CPU time says work */
	/* the kernel and initrd files' mappings, copied into guest RAM: unmapped by the main thread
	 * once the vCPUs run, so tearing down their page tables is not on the way to the guest */
	uint8_t *kernel_map, *initrd_map;
	size_t kernel_map_len, initrd_map_len;
	struct ctl_server ctl;
	struct boot_times times; /* start-up phases, printed with VMM_TIMINGS=1 */
	struct probe_peer peer;	 /* --probe-peer: open when peer.open */
	char *params;		 /* the command line with the peer's address, when it has one */
	struct vm_attribute attr; /* --attribute: stage attribution of the probe's samples */
};

/* board_tick.c: the main thread's tick (vm.tick), and start-up's memory given back once, why
 * being what ended start-up in the exit summary's words. */
int board_tick(void *opaque);
void board_release(struct board *b, const char *why);
/* Vectors of every passed-through device KVM delivers now: the vLPI proof counts over the VM. */
unsigned int board_vfio_live(struct board *b);

/* The per-vCPU host halt-polling switch (board_poll.c). NULL when this VM has it, else why not. */
const char *board_poll_control_refusal(struct board *b);
/* Sets it to set (0/1) on vCPU vcpu, or every vCPU for -1, each on its own thread, and checks what
 * KVM then holds. 0, or -errno with the reason in err. */
int board_poll_control(struct board *b, int vcpu, int set, char *err, size_t len);
/* ,"poll_control":[per vCPU 0/1] (read now; -1: unreadable) or ,"poll_control":null with
 * "poll_control_why": a fragment of the control socket's "get" reply. */
void board_poll_control_json(struct board *b, FILE *f);
/* The exit summary's line (x86): each vCPU's switch as the guest left it. */
void board_poll_control_summary(struct board *b, FILE *f);

/* board_report.c: the interrupt table as a JSON array ("null" out of memory); the --stats JSON's
 * "vmm" members after its "exits" (,"interrupts":[...] and the probe's, as hp_run's vmm_json hook);
 * the exit summary's interrupt lines after the host's last counts; ,"probe_peer":{...} when
 * --probe-peer answers (vmm ctl get and --stats). */
void board_irq_json(struct board *b, FILE *f);
void board_vmm_json(void *opaque, FILE *f);
void board_irq_summary(struct board *b);
void board_peer_json(void *opaque, FILE *f);

/* The built-in guest (guest/): an initramfs linked into vmm. */
extern const uint8_t guest_initramfs_start[], guest_initramfs_end[];

/* board_load.c: maps the kernel (-k, else the host's own) and the initrd (-i, else the built-in
 * guest) and runs the arch's load, which copies them into guest RAM; 0 or -errno, said. The
 * mappings stay in b until board_unmap_files (the main thread, once the vCPUs run). */
int board_load(struct board *b, const struct vm_config *c);
void board_unmap_files(struct board *b);

/* Builds the VM the config describes with arch's operations, runs it, and returns the process
 * exit code (enum vm_exit_code, or 128 + signal). */
int board_run(const struct arch_ops *arch, const struct vm_config *c);

#endif
