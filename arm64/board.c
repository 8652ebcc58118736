// SPDX-License-Identifier: MIT
/*
 * The arm64 board, in the order KVM wants: VM (IPA size) -> RAM -> vGICv3 + vITS -> UART -> vCPUs
 * (secondaries powered off) -> CTRL_INIT -> kernel, initrd and FDT in RAM -> boot registers -> run.
 * RAM layout: kernel at RAM_BASE + text_offset; FDT in the top 2 MiB; initrd just below it.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "arm64/arm64.h"
#include "its/its.h"
#include "vgic/vgic.h"
#include "virtio/virtio.h"
#include "vmm/log.h"
#include "vmm/kvm.h"
#include "vmm/bus.h"
#include "vmm/mem.h"
#include "vmm/config.h"
#include "vmm/console.h"
#include "vmm/uart.h"
#include "vmm/pvpanic.h"
#include "vmm/pci.h"
#include "vmm/irq.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "vmm/run.h"

#define KERNEL_MAX (512ULL << 20)

extern const uint8_t guest_initramfs_start[], guest_initramfs_end[];

struct board {
	struct vm vm;
	struct vgic gic;
	struct its its;
	struct console_out out;
	struct uart uart;
	struct pvpanic pvpanic;
	struct pci_host pci;
	struct virtio_dev *vdev[PCI_MAX_SLOTS];
	int nr_vdev;
	struct virtio_dev *vconsole;
	uint64_t mpidr[VM_MAX_VCPUS];
};

static int read_file(const char *path, uint8_t **buf, size_t *len, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0) {
		int err = errno;

		pr_err("cannot open %s: %s", path, strerror(err));
		if (fd >= 0)
			close(fd);
		return -err;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max || st.st_size == 0) {
		pr_err("%s: not a regular, non-empty file of at most %zu MiB", path, max >> 20);
		close(fd);
		return -EINVAL;
	}
	*len = st.st_size;
	*buf = malloc(*len);
	size_t got = 0;

	while (*buf && got < *len) {
		ssize_t n = read(fd, *buf + got, *len - got);

		if (n <= 0) {
			pr_err("reading %s failed", path);
			free(*buf);
			*buf = NULL;
			break;
		}
		got += n;
	}
	close(fd);
	return *buf ? 0 : -EIO;
}

/* The host's own kernel: /boot/vmlinuz-$(uname -r), else the first /boot/Image*. */
static int host_kernel(char *path, size_t size)
{
	struct utsname u;
	glob_t g;

	if (uname(&u) == 0) {
		snprintf(path, size, "/boot/vmlinuz-%s", u.release);
		if (access(path, R_OK) == 0)
			return 0;
	}
	if (glob("/boot/Image*", 0, NULL, &g) == 0 && g.gl_pathc) {
		snprintf(path, size, "%s", g.gl_pathv[0]);
		globfree(&g);
		return 0;
	}
	pr_err("no kernel given and none found at /boot/vmlinuz-%s or /boot/Image*: pass -k KERNEL",
	       u.release);
	return -ENOENT;
}

static void spi_line(struct board *b, unsigned int spi, bool level)
{
	irq_line(&b->vm, (KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT) |
		 ((32 + spi) << KVM_ARM_IRQ_NUM_SHIFT), level);
}

static void uart_irq(void *opaque, bool level)
{
	spi_line(opaque, ARM64_UART_SPI, level);
}

static void board_intx(void *opaque, unsigned int slot, bool level)
{
	spi_line(opaque, ARM64_PCI_INTX_SPI_BASE + slot, level);
}

static int check_limits(struct board *b, const struct vm_config *c, int ipa_bits)
{
	int max = kvm_check_ext(b->vm.fd, KVM_CAP_MAX_VCPUS);
	long host_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t host_mem = (uint64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	uint64_t redist_room = (ARM64_GICR_LIMIT - ARM64_GICR_BASE) / vgic_redist_size(1);

	if (max > 0 && c->nr_cpus > (unsigned int)max) {
		pr_err("-c %u: KVM on this host allows at most %d vCPUs per VM", c->nr_cpus, max);
		return -EINVAL;
	}
	if (c->nr_cpus > redist_room) {
		pr_err("-c %u: the board's GIC has room for %llu vCPUs", c->nr_cpus,
		       (unsigned long long)redist_room);
		return -EINVAL;
	}
	if (host_cpus > 0 && c->nr_cpus > (unsigned long)host_cpus)
		pr_warn("-c %u is more vCPUs than the host's %ld online CPUs: latency figures will suffer",
			c->nr_cpus, host_cpus);
	if (ARM64_RAM_BASE + c->mem_size > ARM64_PCI_MMIO64_BASE) {
		pr_err("-m %lluM: RAM would run into the PCI window at 0x%llx; use at most %llu MiB",
		       (unsigned long long)(c->mem_size >> 20), (unsigned long long)ARM64_PCI_MMIO64_BASE,
		       (unsigned long long)((ARM64_PCI_MMIO64_BASE - ARM64_RAM_BASE) >> 20));
		return -EINVAL;
	}
	if (ARM64_PCI_MMIO64_BASE + ARM64_PCI_MMIO64_SIZE > (1ULL << ipa_bits)) {
		pr_err("this host's %d-bit guest address space cannot hold the board's PCI window", ipa_bits);
		return -EINVAL;
	}
	if (ARM64_RAM_BASE + c->mem_size > (1ULL << ipa_bits)) {
		pr_err("-m %lluM: RAM would end at 0x%llx, past this host's %d-bit guest address space",
		       (unsigned long long)(c->mem_size >> 20),
		       (unsigned long long)(ARM64_RAM_BASE + c->mem_size), ipa_bits);
		return -EINVAL;
	}
	if (host_mem && c->mem_size > host_mem) {
		pr_err("-m %lluM is more than the host's %llu MiB of RAM",
		       (unsigned long long)(c->mem_size >> 20), (unsigned long long)(host_mem >> 20));
		return -EINVAL;
	}
	return 0;
}

static int board_add(struct board *b, struct virtio_dev *d)
{
	if (!d) /* its create function said why */
		return -ENODEV;
	b->vdev[b->nr_vdev++] = d;
	return 0;
}

/* PCI devices come after CTRL_INIT: their MSI routes and irqfds need the initialised vGIC. */
static int board_devices(struct board *b, const struct vm_config *c)
{
	const struct pci_host_layout l = {
		ARM64_PCI_ECAM_BASE, ARM64_PCI_ECAM_SIZE, ARM64_PCI_MMIO32_BASE, ARM64_PCI_MMIO32_SIZE,
		ARM64_PCI_MMIO64_BASE, ARM64_PCI_MMIO64_SIZE,
	};
	int r = irq_routing_init(&b->vm, ARM64_NR_IRQS - 32);

	if (r < 0 || (r = pci_host_init(&b->pci, &b->vm, &l)) < 0)
		return r;
	b->pci.set_intx = board_intx;
	b->pci.intx_opaque = b;
	if (c->console == CONSOLE_VIRTIO) {
		b->vconsole = virtio_console_create(&b->vm, &b->pci, &b->out);
		if ((r = board_add(b, b->vconsole)) < 0)
			return r;
	}
	for (unsigned int i = 0; i < c->nr_disks; i++)
		if ((r = board_add(b, virtio_blk_create(&b->vm, &b->pci, c->disk[i].path, c->disk[i].ro))) < 0)
			return r;
	for (unsigned int i = 0; i < c->nr_nets; i++)
		if ((r = board_add(b, virtio_net_create(&b->vm, &b->pci, c->net[i].tap, c->net[i].mac))) < 0)
			return r;
	return 0;
}

static int board_build(struct board *b, const struct vm_config *c)
{
	int ipa_bits, r;
	int kfd = kvm_open();

	if (kfd < 0)
		return kfd;
	unsigned long type;

	r = arm64_vm_type(kfd, c->mem_size, &type, &ipa_bits);
	close(kfd);
	if (r < 0 || (r = vm_create(&b->vm, type)) < 0)
		return r;
	/* An MMIO access KVM cannot decode (no ISV: a load pair, a writeback) then reaches vmm as
	 * KVM_EXIT_ARM_NISV, a guest fault, instead of failing KVM_RUN with ENOSYS. */
	if (kvm_check_ext(b->vm.fd, KVM_CAP_ARM_NISV_TO_USER) > 0 &&
	    (r = vm_enable_cap(&b->vm, KVM_CAP_ARM_NISV_TO_USER, 0)) < 0)
		return r;
	b->gic.fd = b->its.fd = -1;
	if ((r = check_limits(b, c, ipa_bits)) < 0 ||
	    (r = vm_mem_add(&b->vm, ARM64_RAM_BASE, c->mem_size)) < 0 ||
	    (r = vgic_create(&b->vm, &b->gic, ARM64_GICD_BASE, ARM64_GICR_BASE, ARM64_GICR_LIMIT,
			     c->nr_cpus)) < 0 ||
	    (r = its_create(&b->vm, &b->its, ARM64_GITS_BASE)) < 0)
		return r;
	r = console_out_init(&b->out, c->console == CONSOLE_NONE ? -1 : STDOUT_FILENO, vm_watch_panic,
			     &b->vm);
	if (r < 0)
		return r;
	pvpanic_init(&b->pvpanic, &b->vm);
	r = bus_register(&b->vm.mmio, ARM64_PVPANIC_BASE, ARM64_PVPANIC_SIZE, pvpanic_mmio, &b->pvpanic,
			 "pvpanic");
	if (r < 0)
		return r;
	/* The UART always exists (earlycon); it owns the terminal unless virtio-console does. */
	uart_init(&b->uart, c->console == CONSOLE_SERIAL ? &b->out : NULL, uart_irq, b);
	r = bus_register(&b->vm.mmio, ARM64_UART_BASE, ARM64_UART_SIZE, uart_mmio, &b->uart, "uart");
	if (r < 0)
		return r;
	for (unsigned int i = 0; i < c->nr_cpus; i++) {
		struct vcpu *v;
		struct kvm_one_reg reg = { .id = ARM64_SYS_REG(3, 0, 0, 0, 5), /* MPIDR_EL1 */
					   .addr = (uintptr_t)&b->mpidr[i] };

		if ((r = vcpu_create(&b->vm, i, &v)) < 0 || (r = arm64_vcpu_init(v, i > 0)) < 0)
			return r;
		r = kvm_ioctl_ret(ioctl(v->fd, KVM_GET_ONE_REG, &reg), "reading MPIDR_EL1");
		if (r < 0)
			return r;
	}
	if ((r = vgic_init(&b->gic, ARM64_NR_IRQS)) < 0)
		return r;
	return board_devices(b, c);
}

static int board_load(struct board *b, const struct vm_config *c, uint64_t *entry, uint64_t *fdt_gpa)
{
	char kpath[512];
	const char *kernel = c->kernel;
	uint8_t *kbuf = NULL, *owned = NULL, *ibuf = NULL;
	size_t klen, ilen = 0;
	const uint8_t *initrd = NULL;
	struct arm64_image img;
	int r;

	if (!kernel) {
		if ((r = host_kernel(kpath, sizeof(kpath))) < 0)
			return r;
		kernel = kpath;
	}
	if ((r = read_file(kernel, &kbuf, &klen, KERNEL_MAX)) < 0)
		return r;
	r = arm64_kernel_load(kbuf, klen, KERNEL_MAX, c->kernel_format, &owned, &img);
	if (r < 0) {
		pr_err("%s: cannot boot this kernel file", kernel);
		goto out;
	}
	if (c->initrd) {
		if ((r = read_file(c->initrd, &ibuf, &ilen, c->mem_size / 2)) < 0)
			goto out;
		initrd = ibuf;
	} else if (!c->kernel) {
		initrd = guest_initramfs_start;
		ilen = guest_initramfs_end - guest_initramfs_start;
	}

	uint64_t kaddr = ARM64_RAM_BASE + img.text_offset;
	uint64_t fdt = ARM64_RAM_BASE + c->mem_size - ARM64_FDT_MAX;
	uint64_t iaddr = (fdt - ilen) & ~0xfffULL;

	/* sizes come from files: compare without sums that could wrap */
	if (img.image_size > c->mem_size || ilen > fdt - ARM64_RAM_BASE ||
	    kaddr + img.image_size > iaddr) {
		pr_err("-m %lluM is too small for this kernel (%llu MiB) and initrd (%zu MiB)",
		       (unsigned long long)(c->mem_size >> 20),
		       (unsigned long long)(img.image_size >> 20), ilen >> 20);
		r = -E2BIG;
		goto out;
	}
	memcpy(vm_gpa_to_hva(&b->vm, kaddr, img.len), img.data, img.len);
	if (initrd)
		memcpy(vm_gpa_to_hva(&b->vm, iaddr, ilen), initrd, ilen);

	struct arm64_fdt_desc d = {
		.nr_cpus = c->nr_cpus, .mpidr = b->mpidr,
		.ram_base = ARM64_RAM_BASE, .ram_size = c->mem_size,
		.gicd = ARM64_GICD_BASE, .gicr = ARM64_GICR_BASE, .gicr_size = b->gic.redist_size,
		.its = ARM64_GITS_BASE, .uart = ARM64_UART_BASE, .uart_spi = ARM64_UART_SPI,
		.console_uart = c->console == CONSOLE_SERIAL,
		.bootargs = c->params ? c->params
			  : c->console == CONSOLE_VIRTIO ? CONFIG_DEFAULT_PARAMS_HVC : CONFIG_DEFAULT_PARAMS,
		.pci = true, .pvpanic = ARM64_PVPANIC_BASE,
		.initrd_start = initrd ? iaddr : 0, .initrd_end = initrd ? iaddr + ilen : 0,
	};
	r = arm64_fdt_build(&d, vm_gpa_to_hva(&b->vm, fdt, ARM64_FDT_MAX), ARM64_FDT_MAX);
	*entry = kaddr;
	*fdt_gpa = fdt;
out:
	free(kbuf);
	free(owned);
	free(ibuf);
	return r;
}

static int dump_dtb(struct board *b, uint64_t fdt_gpa, const char *path)
{
	const void *fdt = vm_gpa_to_hva(&b->vm, fdt_gpa, ARM64_FDT_MAX);
	uint32_t size = fdt_totalsize(fdt);
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(fdt, 1, size, f) != size || fclose(f) != 0) {
		pr_err("--dump-dtb: cannot write %s", path);
		return -EIO;
	}
	return 0;
}

int arm64_board_run(const struct vm_config *c)
{
	struct board *b = calloc(1, sizeof(*b));
	uint64_t entry = 0, fdt = 0;
	int code = VM_EXIT_ERROR;

	if (!b)
		return VM_EXIT_ERROR;
	b->vm.fd = b->vm.kvm_fd = -1;
	b->out.fd = b->out.wake_fd = -1;
	if (board_build(b, c) < 0 || board_load(b, c, &entry, &fdt) < 0)
		goto out;
	if (c->dump_dtb) {
		code = dump_dtb(b, fdt, c->dump_dtb) < 0 ? VM_EXIT_ERROR : 0;
		goto out;
	}
	struct vcpu *boot = b->vm.vcpus[0];

	if (arm64_core_reg_set(boot, ARM64_CORE(regs.pc), entry) < 0 ||
	    arm64_core_reg_set(boot, ARM64_XREG(0), fdt) < 0)
		goto out;
	struct console_in_sink sink = { uart_push_input, &b->uart };

	if (c->console == CONSOLE_VIRTIO)
		sink = (struct console_in_sink){ virtio_console_push, b->vconsole->priv };
	for (int i = 0; i < b->nr_vdev; i++)
		if (virtio_start(b->vdev[i]) < 0)
			goto out;
	code = vm_run(&b->vm, c->console == CONSOLE_NONE ? NULL : &sink, &b->out);
	for (int i = 0; i < b->nr_vdev; i++)
		virtio_summary(b->vdev[i], stderr);
out:
	for (int i = 0; i < b->nr_vdev; i++)
		virtio_stop(b->vdev[i]);
	its_destroy(&b->its);
	vgic_destroy(&b->gic);
	console_out_destroy(&b->out);
	vm_destroy(&b->vm);
	free(b);
	return code;
}
