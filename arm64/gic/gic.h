/* SPDX-License-Identifier: MIT */
/*
 * arm64's interrupt controller in the kernel: the GICv3 and its ITS.
 *
 * The GICv3 (KVM_DEV_TYPE_ARM_VGIC_V3). Order matters and is KVM's, not ours: vgic_create()
 * (addresses) any time before the vCPUs run; vgic_init() (NR_IRQS, then KVM_DEV_ARM_VGIC_CTRL_INIT)
 * only after every vCPU exists.
 */
#ifndef VMM_ARM64_GIC_H
#define VMM_ARM64_GIC_H

#include <stdint.h>

#include "core/vm.h"

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

/*
 * The vITS (KVM_DEV_TYPE_ARM_VGIC_ITS). Its existence turns on KVM_CAP_MSI_DEVID: from then on
 * every MSI KVM is given must carry KVM_MSI_VALID_DEVID and the guest's requester ID.
 */
struct its {
	int fd;
	uint64_t base;
};

/* Needs the vGICv3 device to exist already (vgic_create). */
int its_create(struct vm *vm, struct its *its, uint64_t base);
void its_destroy(struct its *its);

#endif
