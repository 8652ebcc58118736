// SPDX-License-Identifier: MIT
/*
 * The guest's device tree, written with libfdt's sequential-write API from a plain description of
 * the board (no KVM needed, so the unit tests build and read it back).
 */
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arm64/arm64.h"
#include "core/log.h"
#include "core/pci.h"
#include "core/vm.h"

/* Interrupt specifier values from the GIC DT binding (dt-bindings/interrupt-controller/arm-gic.h,
 * irq.h); they are DT ABI, not kernel UAPI, so no header ships them to userspace. */
#define GIC_SPI 0
#define GIC_PPI 1
#define IRQ_TYPE_EDGE_RISING 1
#define IRQ_TYPE_LEVEL_HIGH 4

#define PHANDLE_GIC 1
#define PHANDLE_ITS 2

static int reg2(void *fdt, uint64_t addr, uint64_t size)
{
	fdt64_t r[2] = { cpu_to_fdt64(addr), cpu_to_fdt64(size) };

	return fdt_property(fdt, "reg", r, sizeof(r));
}

static int irq_prop(void *fdt, const uint32_t *cells, int n)
{
	fdt32_t v[16];

	for (int i = 0; i < n; i++)
		v[i] = cpu_to_fdt32(cells[i]);
	return fdt_property(fdt, "interrupts", v, n * sizeof(v[0]));
}

static int fdt_cpus(void *fdt, const struct arm64_fdt_desc *d)
{
	char name[32];
	int r = 0;

	r |= fdt_begin_node(fdt, "cpus");
	r |= fdt_property_u32(fdt, "#address-cells", 2);
	r |= fdt_property_u32(fdt, "#size-cells", 0);
	for (unsigned int i = 0; i < d->nr_cpus; i++) {
		uint64_t mpidr = d->mpidr[i] & ARM64_MPIDR_AFF_MASK;

		snprintf(name, sizeof(name), "cpu@%llx", (unsigned long long)mpidr);
		r |= fdt_begin_node(fdt, name);
		r |= fdt_property_string(fdt, "device_type", "cpu");
		r |= fdt_property_string(fdt, "compatible", "arm,arm-v8");
		r |= fdt_property_string(fdt, "enable-method", "psci");
		r |= fdt_property_u64(fdt, "reg", mpidr);
		r |= fdt_end_node(fdt);
	}
	return r | fdt_end_node(fdt);
}

static int fdt_gic(void *fdt, const struct arm64_fdt_desc *d)
{
	char name[32];
	fdt64_t regs[4] = {
		cpu_to_fdt64(d->gicd), cpu_to_fdt64(ARM64_GICD_SIZE),
		cpu_to_fdt64(d->gicr), cpu_to_fdt64(d->gicr_size),
	};
	int r = 0;

	snprintf(name, sizeof(name), "intc@%llx", (unsigned long long)d->gicd);
	r |= fdt_begin_node(fdt, name);
	r |= fdt_property_string(fdt, "compatible", "arm,gic-v3");
	r |= fdt_property_u32(fdt, "#interrupt-cells", 3);
	r |= fdt_property(fdt, "interrupt-controller", NULL, 0);
	r |= fdt_property_u32(fdt, "#address-cells", 2);
	r |= fdt_property_u32(fdt, "#size-cells", 2);
	r |= fdt_property(fdt, "ranges", NULL, 0);
	r |= fdt_property(fdt, "reg", regs, sizeof(regs));
	r |= fdt_property_u32(fdt, "phandle", PHANDLE_GIC);
	if (d->its) {
		snprintf(name, sizeof(name), "msi-controller@%llx", (unsigned long long)d->its);
		r |= fdt_begin_node(fdt, name);
		r |= fdt_property_string(fdt, "compatible", "arm,gic-v3-its");
		r |= fdt_property(fdt, "msi-controller", NULL, 0);
		r |= fdt_property_u32(fdt, "#msi-cells", 1);
		r |= reg2(fdt, d->its, ARM64_GITS_SIZE);
		r |= fdt_property_u32(fdt, "phandle", PHANDLE_ITS);
		r |= fdt_end_node(fdt);
	}
	return r | fdt_end_node(fdt);
}

static int fdt_timer_psci(void *fdt)
{
	/* secure phys, non-secure phys, virtual, hypervisor: PPI numbers (INTID - 16) */
	const uint32_t ppis[4] = { 13, 14, ARM64_VTIMER_PPI - 16, 10 };
	uint32_t cells[12];
	int r = 0;

	for (int i = 0; i < 4; i++) {
		cells[i * 3] = GIC_PPI;
		cells[i * 3 + 1] = ppis[i];
		cells[i * 3 + 2] = IRQ_TYPE_LEVEL_HIGH;
	}
	r |= fdt_begin_node(fdt, "timer");
	r |= fdt_property_string(fdt, "compatible", "arm,armv8-timer");
	r |= irq_prop(fdt, cells, 12);
	r |= fdt_property(fdt, "always-on", NULL, 0);
	r |= fdt_end_node(fdt);

	static const char psci_compat[] = "arm,psci-1.0\0arm,psci-0.2";

	r |= fdt_begin_node(fdt, "psci");
	r |= fdt_property(fdt, "compatible", psci_compat, sizeof(psci_compat));
	r |= fdt_property_string(fdt, "method", "hvc");
	return r | fdt_end_node(fdt);
}

/* The ECAM host bridge: bus 0 only, identity requester ID -> ITS DeviceID, INTA# of each slot on
 * its own SPI. Cells per PCI binding: phys.hi (space code), phys.mid, phys.lo. */
static int fdt_pci(void *fdt, const struct arm64_fdt_desc *d)
{
	char name[32];
	int r = 0;
	const fdt32_t bus_range[2] = { 0, 0 };
	const fdt32_t ranges[14] = {
		cpu_to_fdt32(0x02000000), 0, cpu_to_fdt32(ARM64_PCI_MMIO32_BASE), /* 32-bit memory */
		0, cpu_to_fdt32(ARM64_PCI_MMIO32_BASE), 0, cpu_to_fdt32(ARM64_PCI_MMIO32_SIZE),
		cpu_to_fdt32(0x03000000), cpu_to_fdt32(ARM64_PCI_MMIO64_BASE >> 32), 0, /* 64-bit */
		cpu_to_fdt32(ARM64_PCI_MMIO64_BASE >> 32), 0,
		cpu_to_fdt32(ARM64_PCI_MMIO64_SIZE >> 32), 0,
	};
	const fdt32_t imask[4] = { cpu_to_fdt32(0x1f << 11), 0, 0, cpu_to_fdt32(7) };
	fdt32_t imap[PCI_MAX_SLOTS][10];

	for (int s = 0; s < PCI_MAX_SLOTS; s++) {
		const uint32_t e[10] = { s << 11, 0, 0, 1, PHANDLE_GIC, 0, 0,
					 GIC_SPI, ARM64_PCI_INTX_SPI_BASE + s, IRQ_TYPE_LEVEL_HIGH };

		for (int i = 0; i < 10; i++)
			imap[s][i] = cpu_to_fdt32(e[i]);
	}
	snprintf(name, sizeof(name), "pcie@%llx", (unsigned long long)ARM64_PCI_ECAM_BASE);
	r |= fdt_begin_node(fdt, name);
	r |= fdt_property_string(fdt, "compatible", "pci-host-ecam-generic");
	r |= fdt_property_string(fdt, "device_type", "pci");
	r |= fdt_property_u32(fdt, "#address-cells", 3);
	r |= fdt_property_u32(fdt, "#size-cells", 2);
	r |= fdt_property_u32(fdt, "#interrupt-cells", 1);
	r |= fdt_property_u32(fdt, "linux,pci-domain", 0);
	r |= fdt_property(fdt, "bus-range", bus_range, sizeof(bus_range));
	r |= reg2(fdt, ARM64_PCI_ECAM_BASE, ARM64_PCI_ECAM_SIZE);
	r |= fdt_property(fdt, "ranges", ranges, sizeof(ranges));
	r |= fdt_property(fdt, "dma-coherent", NULL, 0);
	if (d->its) {
		const fdt32_t msi_map[4] = { 0, cpu_to_fdt32(PHANDLE_ITS), 0, cpu_to_fdt32(0x10000) };

		r |= fdt_property(fdt, "msi-map", msi_map, sizeof(msi_map));
	}
	r |= fdt_property(fdt, "interrupt-map-mask", imask, sizeof(imask));
	r |= fdt_property(fdt, "interrupt-map", imap, sizeof(imap));
	return r | fdt_end_node(fdt);
}

int arm64_fdt_build(const struct arm64_fdt_desc *d, void *buf, size_t size)
{
	char name[48], uart_path[48];
	int r = 0;

	if (d->nr_cpus == 0 || d->nr_cpus > VM_MAX_VCPUS)
		return -EINVAL;
	r |= fdt_create(buf, size);
	r |= fdt_finish_reservemap(buf);
	r |= fdt_begin_node(buf, "");
	r |= fdt_property_string(buf, "compatible", "linux,dummy-virt");
	r |= fdt_property_u32(buf, "#address-cells", 2);
	r |= fdt_property_u32(buf, "#size-cells", 2);
	r |= fdt_property_u32(buf, "interrupt-parent", PHANDLE_GIC);
	r |= fdt_property_string(buf, "model", "vmm arm64");

	snprintf(uart_path, sizeof(uart_path), "/uart@%llx", (unsigned long long)d->uart);
	r |= fdt_begin_node(buf, "chosen");
	r |= fdt_property_string(buf, "bootargs", d->bootargs ? d->bootargs : "");
	if (d->console_uart)
		r |= fdt_property_string(buf, "stdout-path", uart_path);
	if (d->pci) /* keep vmm's BAR assignment: the guest need not move anything */
		r |= fdt_property_u32(buf, "linux,pci-probe-only", 1);
	if (d->initrd_end > d->initrd_start) {
		r |= fdt_property_u64(buf, "linux,initrd-start", d->initrd_start);
		r |= fdt_property_u64(buf, "linux,initrd-end", d->initrd_end);
	}
	r |= fdt_end_node(buf);

	r |= fdt_begin_node(buf, "aliases");
	r |= fdt_property_string(buf, "serial0", uart_path);
	r |= fdt_end_node(buf);

	snprintf(name, sizeof(name), "memory@%llx", (unsigned long long)d->ram_base);
	r |= fdt_begin_node(buf, name);
	r |= fdt_property_string(buf, "device_type", "memory");
	r |= reg2(buf, d->ram_base, d->ram_size);
	r |= fdt_end_node(buf);

	r |= fdt_cpus(buf, d);
	r |= fdt_gic(buf, d);
	r |= fdt_timer_psci(buf);
	if (d->pmu_intid) {
		/* the PMU's overflow interrupt: a PPI, the same INTID on every vCPU (kvm: vcpu.rst) */
		const uint32_t pirq[3] = { GIC_PPI, d->pmu_intid - 16, IRQ_TYPE_LEVEL_HIGH };

		r |= fdt_begin_node(buf, "pmu");
		r |= fdt_property_string(buf, "compatible", "arm,armv8-pmuv3");
		r |= irq_prop(buf, pirq, 3);
		r |= fdt_end_node(buf);
	}
	if (d->pci)
		r |= fdt_pci(buf, d);

	const uint32_t uirq[3] = { GIC_SPI, d->uart_spi, IRQ_TYPE_LEVEL_HIGH };

	r |= fdt_begin_node(buf, uart_path + 1);
	r |= fdt_property_string(buf, "compatible", "ns16550a");
	r |= reg2(buf, d->uart, ARM64_UART_SIZE);
	r |= irq_prop(buf, uirq, 3);
	r |= fdt_property_u32(buf, "clock-frequency", 1843200);
	r |= fdt_end_node(buf);

	if (d->pvpanic) {
		snprintf(name, sizeof(name), "pvpanic@%llx", (unsigned long long)d->pvpanic);
		r |= fdt_begin_node(buf, name);
		r |= fdt_property_string(buf, "compatible", "qemu,pvpanic-mmio");
		r |= reg2(buf, d->pvpanic, d->pvpanic_reg);
		r |= fdt_end_node(buf);
	}

	r |= fdt_end_node(buf);
	r |= fdt_finish(buf);
	if (r) {
		pr_err("fdt: the device tree does not fit in %zu bytes", size);
		return -ENOSPC;
	}
	return 0;
}

size_t arm64_fdt_room(const struct arm64_fdt_desc *d)
{
	size_t n = d->bootargs ? strlen(d->bootargs) : 0;

	return n >= ARM64_FDT_MAX - ARM64_FDT_ROOM ? ARM64_FDT_MAX : ARM64_FDT_ROOM + n;
}

/*
 * libfdt's fdt_create clears the whole buffer it is given: built in place over the booting
 * protocol's 2 MiB of guest RAM, it would write 2 MiB (and fault in a huge page, or 512 small
 * ones) before the guest's first instruction, for a tree of a few KiB. A buffer of the tree's own
 * room, then a copy of the tree alone.
 */
int arm64_fdt_place(const struct arm64_fdt_desc *d, void *dst, size_t max)
{
	size_t room = arm64_fdt_room(d) < max ? arm64_fdt_room(d) : max;
	void *buf = malloc(room);
	int r;

	if (!buf)
		return -ENOMEM;
	r = arm64_fdt_build(d, buf, room);
	if (r == 0)
		memcpy(dst, buf, fdt_totalsize(buf));
	free(buf);
	return r;
}
