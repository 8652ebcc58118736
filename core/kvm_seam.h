/* SPDX-License-Identifier: MIT */
/*
 * The KVM seam: every way a device reaches KVM (irqfds, ioeventfds, committing the GSI routing
 * table, memslots, raising a line, coalesced MMIO zones, one MSI, a vCPU's MSR) goes through this small table of operations. The VM installs the
 * ioctl implementation; unit and fuzz tests install a fake that records the calls and can fail
 * them, so a device's whole state machine runs without /dev/kvm.
 */
#ifndef VMM_KVM_SEAM_H
#define VMM_KVM_SEAM_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

struct kvm_seam_ops {
	/* resample_fd >= 0 asks for a level-triggered irqfd with KVM_IRQFD_FLAG_RESAMPLE */
	int (*irqfd)(void *ctx, int fd, uint32_t gsi, int resample_fd, bool assign);
	int (*ioeventfd)(void *ctx, uint64_t addr, uint32_t len, int fd, bool pio, bool assign);
	/* replaces the whole table (KVM_SET_GSI_ROUTING) */
	int (*set_gsi_routing)(void *ctx, const struct kvm_irq_routing *table);
	/* size 0 deletes the slot; -errno, not logged: the caller says what the slot was for */
	int (*set_memslot)(void *ctx, uint32_t slot, uint64_t gpa, uint64_t size, void *hva,
			   uint32_t flags);
	/* the raw KVM_IRQ_LINE irq field (the arch encodes type and number) */
	int (*irq_line)(void *ctx, uint32_t irq, bool level);
	/* KVM_(UN)REGISTER_COALESCED_MMIO: guest writes inside [addr, addr+size) go to the ring */
	int (*coalesced_mmio)(void *ctx, uint64_t addr, uint32_t size, bool assign);
	/* KVM_SIGNAL_MSI: one message now, no route (x86's userspace IOAPIC delivers through it) */
	int (*signal_msi)(void *ctx, uint64_t addr, uint32_t data);
	/* One MSR of a vCPU (KVM_GET_MSRS / KVM_SET_MSRS on vcpu_fd): 0, -EINVAL when KVM refuses the
	 * MSR or the value, or -errno. NULL in the core's table (MSRs are x86's: its vm_init adds it). */
	int (*vcpu_msr)(void *ctx, int vcpu_fd, uint32_t index, uint64_t *data, bool write);
	/* A set-up ioctl on a vCPU's or a KVM device's fd (arm64's vCPU features and the vGIC's
	 * attributes): what ioctl returned, or -errno with no message (the caller names the step). */
	int (*fd_ioctl)(void *ctx, int fd, unsigned long req, void *arg);
};

struct kvm_seam {
	const struct kvm_seam_ops *ops;
	void *ctx;
};

/* The real one: ioctls on a VM fd (ctx is the struct vm: its fd, and the log limit its failures
 * are said under, as a guest can repeat them at will). */
extern const struct kvm_seam_ops kvm_seam_ioctl_ops;

#endif
