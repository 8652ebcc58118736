/* SPDX-License-Identifier: MIT */
/*
 * A fake KVM seam for unit tests: records every call in order, keeps the last committed routing
 * table, the memslots and coalesced MMIO zones, and fails the Nth call of a chosen operation.
 * fake_vm_init() builds a struct vm with RAM in plain memory and this seam installed, so devices
 * run their whole state machine without /dev/kvm; fake_kvm_guest_access() plays a guest's MMIO
 * access as KVM would carry it out.
 */
#ifndef VMM_TESTS_FAKE_KVM_H
#define VMM_TESTS_FAKE_KVM_H

#include "core/kvm_seam.h"
#include "core/irq.h"
#include "core/vm.h"

enum fake_op { FK_NONE, FK_IRQFD_ASSIGN, FK_IRQFD_DEASSIGN, FK_IOEVENTFD_ASSIGN, FK_IOEVENTFD_DEASSIGN,
	       FK_SET_GSI_ROUTING, FK_SET_MEMSLOT, FK_IRQ_LINE, FK_COALESCED_ASSIGN, FK_COALESCED_DEASSIGN,
	       FK_SIGNAL_MSI, FK_MSR_GET, FK_MSR_SET, FK_FD_IOCTL };

struct fake_call {
	enum fake_op op;
	uint32_t gsi;	/* irqfd */
	int fd;		/* irqfd, ioeventfd */
	int resample_fd; /* irqfd: KVM_IRQFD_FLAG_RESAMPLE's fd, -1 none */
	uint64_t addr;	/* ioeventfd, memslot gpa */
	uint64_t size;	/* memslot, coalesced zone */
	uint32_t irq;	/* irq line; KVM_SIGNAL_MSI's data (addr: its address) */
	bool level;
	uint32_t slot, flags; /* memslot */
	uint32_t msr;	/* MSR index; fd is the vCPU's, size the value written */
	unsigned long req; /* fd_ioctl: the request (fd: the vCPU's or device's) */
};

#define FAKE_MAX_SLOTS 64
#define FAKE_MAX_ZONES 8

struct fake_slot {
	uint64_t gpa, size; /* size 0: free */
	uint8_t *hva;
	uint32_t flags;
};

#define FAKE_MAX_CALLS 4096
#define FAKE_MAX_MSRS 16

struct fake_kvm {
	struct fake_call call[FAKE_MAX_CALLS];
	int nr;
	enum fake_op fail_op;
	int fail_nth;		/* 1: the next call of fail_op fails; 0: none */
	int fail_errno;		/* default EINVAL */
	struct kvm_irq_routing_entry table[IRQ_MAX_ROUTES];
	int nr_routes;
	int commits;
	bool line[1024];	/* the level of each irq line */
	int line_raises;
	struct fake_slot slot[FAKE_MAX_SLOTS]; /* as KVM holds them (slots past the table: recorded only) */
	struct { uint64_t addr; uint32_t size; } zone[FAKE_MAX_ZONES];
	int nr_zones;
	/* MSRs as KVM holds them per vCPU fd; one never written reads msr_reset */
	struct { int fd; uint32_t index; uint64_t val; } msr[FAKE_MAX_MSRS];
	int nr_msrs;
	uint64_t msr_reset;
	/* fd_ioctl's answer: a test's model of the vCPU or device (NULL: every call returns 0) */
	int (*on_ioctl)(void *arg, int fd, unsigned long req, void *data);
	void *on_ioctl_arg;
	/* called inside a routing commit, before it takes effect: lets a test hold a commit open */
	void (*on_commit)(void *arg);
	void *on_commit_arg;
	/* called on each memslot change before it takes effect (size 0: a removal): lets a test see
	 * what else held at that moment */
	void (*on_memslot)(void *arg, uint32_t slot, uint64_t gpa, uint64_t size);
	void *on_memslot_arg;
};

#define FAKE_RAM_BASE 0x80000000ULL

/* A VM with size bytes of RAM at FAKE_RAM_BASE, an irqchip routing table of nr_irqchip GSIs, and
 * the fake seam. vm is large: keep it off the stack. */
int fake_vm_init(struct vm *vm, struct fake_kvm *fk, size_t ram_size, uint32_t nr_irqchip);
void fake_vm_free(struct vm *vm);
struct kvm_seam fake_kvm_seam(struct fake_kvm *fk);
/* The committed route of gsi, or NULL. */
const struct kvm_irq_routing_entry *fake_kvm_route(const struct fake_kvm *fk, uint32_t gsi);
int fake_kvm_count(const struct fake_kvm *fk, enum fake_op op);
/* Index of the first call of op at or after from, or -1. */
int fake_kvm_find(const struct fake_kvm *fk, enum fake_op op, int from);
void fake_kvm_reset(struct fake_kvm *fk);

/*
 * One guest MMIO access at gpa, as KVM on arm64 carries it out: a read inside a memslot comes from
 * its memory; a write inside a coalesced zone goes into vm->coalesced's ring while it has room;
 * a write to a read-only memslot, and anything else, exits to vmm, which drains the ring and then
 * dispatches it on vm->mmio (the vCPU loop's order). Returns 1 when the access exited, else 0.
 */
int fake_kvm_guest_access(struct fake_kvm *fk, struct vm *vm, uint64_t gpa, uint8_t *data, uint32_t len,
			  bool is_write);
/* The memslot covering [gpa, gpa+len), or NULL. */
const struct fake_slot *fake_kvm_slot_at(const struct fake_kvm *fk, uint64_t gpa, uint64_t len);

#endif
