// SPDX-License-Identifier: MIT
/* The KVM seam's real implementation: one ioctl per operation on the VM fd, errors as -errno with
 * a message naming the ioctl, under the VM's log limit. */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "core/hot.h"
#include "core/kvm.h"
#include "core/kvm_seam.h"
#include "core/irq.h"
#include "core/log.h"
#include "core/vm.h"

/* ctx is the VM (vm_create) */
static int vm_fd(void *ctx)
{
	return ((const struct vm *)ctx)->fd;
}

/* A failed ioctl, said under the VM's limit: the guest makes these calls as often as it likes (an
 * MSI-X vector unmasked, a route committed, a line raised, an MSI sent, a queue enabled), and
 * where KVM refuses them each would be one more line on stderr. -errno. */
static int seam_ret(void *ctx, int ret, const char *what)
{
	if (ret >= 0)
		return ret;
	int err = errno;

	vmm_log_limited(&((struct vm *)ctx)->log_limit, "error", "%s failed: %s", what, strerror(err));
	return -err;
}

/* kvm_do_ioctl on the VM, a failure said by seam_ret with the command's name. */
#define seam_ioctl(ctx, cmd, arg) seam_ret(ctx, kvm_do_ioctl(vm_fd(ctx), cmd, arg), #cmd)

VMM_HOT_IDLE static int seam_irqfd(void *ctx, int fd, uint32_t gsi, int resample_fd, bool assign)
{
	struct kvm_irqfd k = { .fd = fd, .gsi = gsi };

	if (!assign)
		k.flags = KVM_IRQFD_FLAG_DEASSIGN;
	else if (resample_fd >= 0) {
		k.flags = KVM_IRQFD_FLAG_RESAMPLE;
		k.resamplefd = resample_fd;
	}
	return seam_ret(ctx, kvm_do_ioctl(vm_fd(ctx), KVM_IRQFD, &k), assign ? "KVM_IRQFD" : "KVM_IRQFD deassign");
}

static int seam_ioeventfd(void *ctx, uint64_t addr, uint32_t len, int fd, bool pio, bool assign)
{
	struct kvm_ioeventfd k = { .addr = addr, .len = len, .fd = fd };

	if (!assign)
		k.flags |= KVM_IOEVENTFD_FLAG_DEASSIGN;
	if (pio)
		k.flags |= KVM_IOEVENTFD_FLAG_PIO;
	return seam_ret(ctx, kvm_do_ioctl(vm_fd(ctx), KVM_IOEVENTFD, &k),
			assign ? "KVM_IOEVENTFD" : "KVM_IOEVENTFD deassign");
}

static int seam_set_gsi_routing(void *ctx, const struct kvm_irq_routing *t)
{
	return seam_ioctl(ctx, KVM_SET_GSI_ROUTING, t);
}

static int seam_set_memslot(void *ctx, uint32_t slot, uint64_t gpa, uint64_t size, void *hva,
			    uint32_t flags)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot, .flags = flags, .guest_phys_addr = gpa, .memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	/* said by the caller, which knows what the slot was for: a BAR the guest placed over RAM
	 * (EEXIST) is refused again at every later command or BAR write */
	return kvm_do_ioctl(vm_fd(ctx), KVM_SET_USER_MEMORY_REGION, &r) < 0 ? -errno : 0;
}

VMM_HOT_IDLE static int seam_irq_line(void *ctx, uint32_t irq, bool level)
{
	struct kvm_irq_level l = { .irq = irq, .level = level };

	return seam_ioctl(ctx, KVM_IRQ_LINE, &l);
}

static int seam_coalesced_mmio(void *ctx, uint64_t addr, uint32_t size, bool assign)
{
	struct kvm_coalesced_mmio_zone z = { .addr = addr, .size = size };

	return assign ? seam_ioctl(ctx, KVM_REGISTER_COALESCED_MMIO, &z)
		      : seam_ioctl(ctx, KVM_UNREGISTER_COALESCED_MMIO, &z);
}

VMM_HOT_IDLE static int seam_signal_msi(void *ctx, uint64_t addr, uint32_t data)
{
	struct kvm_msi m = { .address_lo = (uint32_t)addr, .address_hi = (uint32_t)(addr >> 32), .data = data };
	int r = seam_ioctl(ctx, KVM_SIGNAL_MSI, &m);

	/* > 0: delivered to that many vCPUs; 0: the guest blocked it (no vCPU matched) */
	return r < 0 ? r : 0;
}

/* Any request a device passes on (its number is not known here: no size check to make). */
VMM_HOT_IDLE static int seam_fd_ioctl(void *ctx, int fd, unsigned long req, void *arg)
{
	(void)ctx;
	int r = ioctl(fd, req, arg);

	return r < 0 ? -errno : r;
}

const struct kvm_seam_ops kvm_seam_ioctl_ops = {
	.irqfd = seam_irqfd,
	.ioeventfd = seam_ioeventfd,
	.set_gsi_routing = seam_set_gsi_routing,
	.set_memslot = seam_set_memslot,
	.irq_line = seam_irq_line,
	.coalesced_mmio = seam_coalesced_mmio,
	.signal_msi = seam_signal_msi,
	.fd_ioctl = seam_fd_ioctl,
};
