// SPDX-License-Identifier: MIT
/* GICv3 creation (Documentation/virt/kvm/devices/arm-vgic-v3.rst). */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arm64/gic/gic.h"
#include "core/log.h"
#include "core/kvm.h"
#include "core/vm.h"

#ifndef SZ_64K
#define SZ_64K 0x10000ULL /* the UAPI size macros below are written in terms of it */
#endif

uint64_t vgic_redist_size(unsigned int nr_vcpus)
{
	return (uint64_t)nr_vcpus * KVM_VGIC_V3_REDIST_SIZE;
}

/* KVM_VGIC_V3_ADDR_TYPE_REDIST_REGION value layout, from arm-vgic-v3.rst (no UAPI macro exists):
 * bits 63:52 redistributor count, 51:16 base address, 11:0 region index. */
#define REDIST_REGION_ATTR(count, base, index) \
	(((uint64_t)(count) << 52) | ((base) & 0x000fffffffff0000ULL) | ((index) & 0xfff))

static int dev_set(struct vgic *g, uint32_t group, uint64_t attr, void *addr, const char *what)
{
	struct kvm_device_attr a = { .group = group, .attr = attr, .addr = (uintptr_t)addr };
	int r = g->kvm.ops->fd_ioctl(g->kvm.ctx, g->fd, KVM_SET_DEVICE_ATTR, &a);

	if (r < 0)
		pr_err("%s failed: %s", what, strerror(-r));
	return r;
}

int vgic_create(struct vm *vm, struct vgic *g, uint64_t dist, uint64_t redist, uint64_t redist_limit,
		unsigned int nr_vcpus)
{
	struct kvm_create_device cd = { .type = KVM_DEV_TYPE_ARM_VGIC_V3 };
	uint64_t rsize = vgic_redist_size(nr_vcpus);

	memset(g, 0, sizeof(*g));
	g->fd = -1;
	g->kvm = vm->kvm;
	if (redist + rsize > redist_limit) {
		pr_err("vgic: %u vCPUs need 0x%llx bytes of redistributors, the board has room for %llu "
		       "vCPUs: use fewer CPUs (-c)", nr_vcpus, (unsigned long long)rsize,
		       (unsigned long long)((redist_limit - redist) / KVM_VGIC_V3_REDIST_SIZE));
		return -E2BIG;
	}
	int err = -g->kvm.ops->fd_ioctl(g->kvm.ctx, vm->fd, KVM_CREATE_DEVICE, &cd);

	if (err > 0) {
		if (err == ENODEV)
			pr_err("vgic: this host cannot emulate a GICv3 (KVM_DEV_TYPE_ARM_VGIC_V3 refused): "
			       "vmm needs an arm64 host with a GICv3 or later");
		else
			pr_err("vgic: KVM_CREATE_DEVICE(VGIC_V3) failed: %s", strerror(err));
		return -err;
	}
	g->fd = cd.fd;
	g->dist_base = dist;
	g->redist_base = redist;
	g->redist_size = rsize;
	g->nr_vcpus = nr_vcpus;

	uint64_t v = dist;
	int r = dev_set(g, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_DIST, &v,
			"vgic: setting the distributor address");

	if (r < 0)
		goto fail;
	v = REDIST_REGION_ATTR(nr_vcpus, redist, 0);
	r = dev_set(g, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_REDIST_REGION, &v,
		    "vgic: setting the redistributor region (needs Linux >= 4.18)");
	if (r < 0)
		goto fail;
	return 0;
fail:
	vgic_destroy(g);
	return r;
}

int vgic_init(struct vgic *g, uint32_t nr_irqs)
{
	/* NR_IRQS counts SGIs and PPIs too: 32 + SPIs, a multiple of 32, at most 1020. */
	if (nr_irqs < 64 || nr_irqs > 1020 || nr_irqs % 32) {
		pr_err("vgic: %u interrupts is not a valid GIC size (64..1020, multiple of 32)", nr_irqs);
		return -EINVAL;
	}
	uint32_t n = nr_irqs;
	int r = dev_set(g, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0, &n, "vgic: setting NR_IRQS");

	if (r < 0)
		return r;
	r = dev_set(g, KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_CTRL_INIT, NULL,
		    "vgic: KVM_DEV_ARM_VGIC_CTRL_INIT (every vCPU must exist first)");
	if (r < 0)
		return r;
	g->nr_irqs = nr_irqs;
	return 0;
}

void vgic_destroy(struct vgic *g)
{
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
}
