/* SPDX-License-Identifier: MIT */
/*
 * The in-kernel vITS (KVM_DEV_TYPE_ARM_VGIC_ITS). Its existence turns on KVM_CAP_MSI_DEVID: from then
 * on every MSI KVM is given must carry KVM_MSI_VALID_DEVID and the guest's requester ID.
 */
#ifndef VMM_ITS_H
#define VMM_ITS_H

#include <stdint.h>

#include "vmm/vm.h"

struct its {
	int fd;
	uint64_t base;
};

/* Needs the vGICv3 device to exist already (vgic_create). */
int its_create(struct vm *vm, struct its *its, uint64_t base);
void its_destroy(struct its *its);

#endif
