/* SPDX-License-Identifier: MIT */
/*
 * The in-kernel GICv3 (KVM_DEV_TYPE_ARM_VGIC_V3). Order matters and is KVM's, not ours:
 * vgic_create() (addresses) any time before the vCPUs run; vgic_init() (NR_IRQS, then
 * KVM_DEV_ARM_VGIC_CTRL_INIT) only after every vCPU exists.
 */
#ifndef VMM_VGIC_H
#define VMM_VGIC_H

#include <stdint.h>

#include "vmm/vm.h"

struct vgic {
	struct kvm_seam kvm; /* the VM's: the device's ioctls go through it (tests fake them) */
	int fd;
	uint64_t dist_base;
	uint64_t redist_base, redist_size;
	unsigned int nr_vcpus;
	uint32_t nr_irqs;
};

/* Size of the redistributor region for n vCPUs (two 64 KiB frames each). */
uint64_t vgic_redist_size(unsigned int nr_vcpus);
int vgic_create(struct vm *vm, struct vgic *g, uint64_t dist, uint64_t redist, uint64_t redist_limit,
		unsigned int nr_vcpus);
int vgic_init(struct vgic *g, uint32_t nr_irqs);
void vgic_destroy(struct vgic *g);

#endif
