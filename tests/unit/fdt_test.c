// SPDX-License-Identifier: MIT
/* The arm64 device tree, built from a board description and read back with libfdt. */
#include <libfdt.h>
#include <string.h>

#include "arm64/arm64.h"
#include "kselftest_harness.h"
#include "platform/pvpanic.h"
#include "core/vm.h"

static uint8_t fdt[1 << 16];

static const void *prop(const char *path, const char *name, int *len)
{
	int off = fdt_path_offset(fdt, path);

	return off < 0 ? NULL : fdt_getprop(fdt, off, name, len);
}

static uint64_t be64_at(const void *p, int i)
{
	fdt64_t v;

	memcpy(&v, (const uint8_t *)p + 8 * i, 8);
	return fdt64_to_cpu(v);
}

static uint32_t be32_at(const void *p, int i)
{
	fdt32_t v;

	memcpy(&v, (const uint8_t *)p + 4 * i, 4);
	return fdt32_to_cpu(v);
}

FIXTURE(fdt) {
	uint64_t mpidr[4];
	struct arm64_fdt_desc d;
};

FIXTURE_SETUP(fdt)
{
	/* KVM's MPIDR for vCPUs 0..3, with the RES1 bit 31 the kernel reports */
	for (int i = 0; i < 4; i++)
		self->mpidr[i] = 0x80000000ULL | i;
	self->d = (struct arm64_fdt_desc){
		.nr_cpus = 4, .mpidr = self->mpidr, .ram_base = ARM64_RAM_BASE, .ram_size = 512ULL << 20,
		.gicd = ARM64_GICD_BASE, .gicr = ARM64_GICR_BASE, .gicr_size = 4 * 0x20000,
		.its = ARM64_GITS_BASE, .uart = ARM64_UART_BASE, .uart_spi = ARM64_UART_SPI,
		.console_uart = true, .bootargs = "console=ttyS0 quiet",
		.initrd_start = 0x9f000000, .initrd_end = 0x9f100000, .pvpanic = ARM64_PVPANIC_BASE, .pvpanic_reg = PVPANIC_MMIO_SIZE,
		.pmu_intid = ARM64_PMU_INTID,
	};
	ASSERT_EQ(0, arm64_fdt_build(&self->d, fdt, sizeof(fdt)));
	ASSERT_EQ(0, fdt_check_header(fdt));
}

FIXTURE_TEARDOWN(fdt) {}

TEST_F(fdt, cpus_with_psci)
{
	char path[32];
	int len;

	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "/cpus/cpu@%d", i);
		const void *reg = prop(path, "reg", &len);

		ASSERT_NE(NULL, reg) TH_LOG("%s missing", path);
		EXPECT_EQ(8, len);
		EXPECT_EQ((uint64_t)i, be64_at(reg, 0)); /* affinity only, RES1 bit dropped */
		EXPECT_STREQ("psci", prop(path, "enable-method", NULL));
	}
	EXPECT_EQ(NULL, prop("/cpus/cpu@4", "reg", NULL));
	const char *psci = prop("/psci", "compatible", &len);

	ASSERT_NE(NULL, psci);
	EXPECT_EQ(0, fdt_stringlist_contains(psci, len, "arm,psci-0.2") ? 0 : 1);
	EXPECT_STREQ("hvc", prop("/psci", "method", NULL));
}

TEST_F(fdt, memory_and_chosen)
{
	int len;
	const void *reg = prop("/memory@80000000", "reg", &len);

	ASSERT_NE(NULL, reg);
	EXPECT_EQ(16, len);
	EXPECT_EQ(ARM64_RAM_BASE, be64_at(reg, 0));
	EXPECT_EQ(512ULL << 20, be64_at(reg, 1));
	EXPECT_STREQ("console=ttyS0 quiet", prop("/chosen", "bootargs", NULL));
	EXPECT_STREQ("/uart@9000000", prop("/chosen", "stdout-path", NULL));
	EXPECT_EQ(0x9f000000, be64_at(prop("/chosen", "linux,initrd-start", NULL), 0));
	EXPECT_EQ(0x9f100000, be64_at(prop("/chosen", "linux,initrd-end", NULL), 0));
}

TEST_F(fdt, gic_and_its)
{
	int len, off = fdt_path_offset(fdt, "/intc@8000000");

	ASSERT_LE(0, off);
	EXPECT_STREQ("arm,gic-v3", fdt_getprop(fdt, off, "compatible", NULL));
	EXPECT_NE(NULL, fdt_getprop(fdt, off, "interrupt-controller", NULL));
	EXPECT_EQ(3, be32_at(fdt_getprop(fdt, off, "#interrupt-cells", NULL), 0));
	const void *reg = fdt_getprop(fdt, off, "reg", &len);

	ASSERT_EQ(32, len);
	EXPECT_EQ(ARM64_GICD_BASE, be64_at(reg, 0));
	EXPECT_EQ(ARM64_GICR_BASE, be64_at(reg, 2));
	EXPECT_EQ(4 * 0x20000, be64_at(reg, 3)); /* one 128 KiB redistributor per vCPU */
	uint32_t gic_ph = fdt_get_phandle(fdt, off);

	EXPECT_NE(0, gic_ph);
	EXPECT_EQ(gic_ph, be32_at(prop("/", "interrupt-parent", NULL), 0));
	int its = fdt_path_offset(fdt, "/intc@8000000/msi-controller@8080000");

	ASSERT_LE(0, its);
	EXPECT_STREQ("arm,gic-v3-its", fdt_getprop(fdt, its, "compatible", NULL));
	EXPECT_NE(NULL, fdt_getprop(fdt, its, "msi-controller", NULL));
	EXPECT_NE(0, fdt_get_phandle(fdt, its));
	EXPECT_NE(gic_ph, fdt_get_phandle(fdt, its));
}

TEST_F(fdt, timer_and_uart)
{
	int len;
	const void *irqs = prop("/timer", "interrupts", &len);

	ASSERT_NE(NULL, irqs);
	ASSERT_EQ(4 * 3 * 4, len);
	EXPECT_EQ(1, be32_at(irqs, 6));			/* PPI */
	EXPECT_EQ(ARM64_VTIMER_PPI - 16, be32_at(irqs, 7)); /* the virtual timer */
	EXPECT_STREQ("ns16550a", prop("/uart@9000000", "compatible", NULL));
	const void *ui = prop("/uart@9000000", "interrupts", &len);

	ASSERT_EQ(12, len);
	EXPECT_EQ(0, be32_at(ui, 0)); /* SPI */
	EXPECT_EQ(ARM64_UART_SPI, be32_at(ui, 1));
	EXPECT_STREQ("/uart@9000000", prop("/aliases", "serial0", NULL));
}

/* pvpanic-mmio as QEMU describes it, so Linux's pvpanic-mmio driver binds to it */
TEST_F(fdt, pvpanic)
{
	int len;
	const void *reg = prop("/pvpanic@9010000", "reg", &len);

	ASSERT_NE(NULL, reg);
	ASSERT_EQ(16, len);
	EXPECT_EQ(ARM64_PVPANIC_BASE, be64_at(reg, 0));
	EXPECT_EQ(PVPANIC_MMIO_SIZE, be64_at(reg, 1));
	EXPECT_STREQ("qemu,pvpanic-mmio", prop("/pvpanic@9010000", "compatible", NULL));
}

/* The PMU as Linux's arm_pmuv3 driver binds to it: its overflow PPI (INTID 23 is PPI 7), level */
TEST_F(fdt, pmu)
{
	int len;
	const void *irq = prop("/pmu", "interrupts", &len);

	ASSERT_NE(NULL, irq);
	ASSERT_EQ(12, len);
	EXPECT_EQ(1, be32_at(irq, 0)); /* PPI */
	EXPECT_EQ(7, be32_at(irq, 1));
	EXPECT_EQ(4, be32_at(irq, 2)); /* IRQ_TYPE_LEVEL_HIGH */
	EXPECT_STREQ("arm,armv8-pmuv3", prop("/pmu", "compatible", NULL));
}

TEST(no_initrd_no_console)
{
	uint64_t mpidr = 0;
	struct arm64_fdt_desc d = {
		.nr_cpus = 1, .mpidr = &mpidr, .ram_base = ARM64_RAM_BASE, .ram_size = 1ULL << 30,
		.gicd = ARM64_GICD_BASE, .gicr = ARM64_GICR_BASE, .gicr_size = 0x20000,
		.uart = ARM64_UART_BASE, .uart_spi = ARM64_UART_SPI,
	};

	ASSERT_EQ(0, arm64_fdt_build(&d, fdt, sizeof(fdt)));
	EXPECT_EQ(NULL, prop("/chosen", "linux,initrd-start", NULL));
	EXPECT_EQ(NULL, prop("/chosen", "stdout-path", NULL));
	EXPECT_GT(0, fdt_path_offset(fdt, "/intc@8000000/msi-controller@8080000"));
	EXPECT_GT(0, fdt_path_offset(fdt, "/pvpanic@9010000"));
	EXPECT_GT(0, fdt_path_offset(fdt, "/pmu")); /* no PMU asked for: none described */
}

TEST(too_small_or_bad)
{
	uint64_t mpidr = 0;
	struct arm64_fdt_desc d = { .nr_cpus = 1, .mpidr = &mpidr, .ram_size = 1 << 20 };

	EXPECT_EQ(-ENOSPC, arm64_fdt_build(&d, fdt, 256));
	d.nr_cpus = 0;
	EXPECT_EQ(-EINVAL, arm64_fdt_build(&d, fdt, sizeof(fdt)));
}

/* Built in a buffer of its own: the tree lands in guest RAM with nothing written after it (libfdt
 * clears the whole buffer it builds in), the same bytes as built in place. */
TEST_F(fdt, placed_tree_alone)
{
	static uint8_t ram[1 << 17];

	memset(ram, 0xaa, sizeof(ram));
	ASSERT_EQ(0, arm64_fdt_place(&self->d, ram, sizeof(ram)));
	uint32_t n = fdt_totalsize(ram);

	ASSERT_EQ(n, fdt_totalsize(fdt));
	EXPECT_EQ(0, memcmp(ram, fdt, n));
	size_t k = n;

	while (k < sizeof(ram) && ram[k] == 0xaa)
		k++;
	EXPECT_EQ(sizeof(ram), k) TH_LOG("byte %zu after the %u-byte tree was written", k, n);
	/* a destination smaller than the room: the build's own limit */
	EXPECT_EQ(-ENOSPC, arm64_fdt_place(&self->d, ram, 256));
}

/* The most vCPUs vmm boots and a 2 KiB command line (arm64's COMMAND_LINE_SIZE) fit the room
 * with most of it spare, and a command line past ARM64_FDT_MAX is refused, not cut. */
TEST(room_for_the_largest_tree)
{
	static uint64_t mpidr[VM_MAX_VCPUS];
	static uint8_t ram[ARM64_FDT_MAX];
	static char args[2048], huge[ARM64_FDT_MAX + 16];
	struct arm64_fdt_desc d = {
		.nr_cpus = VM_MAX_VCPUS, .mpidr = mpidr, .ram_base = ARM64_RAM_BASE, .ram_size = 1ULL << 30,
		.gicd = ARM64_GICD_BASE, .gicr = ARM64_GICR_BASE, .gicr_size = VM_MAX_VCPUS * 0x20000ULL,
		.its = ARM64_GITS_BASE, .uart = ARM64_UART_BASE, .uart_spi = ARM64_UART_SPI,
		.console_uart = true, .bootargs = args, .initrd_start = 0x9f000000, .initrd_end = 0x9f100000,
		.pci = true, .pvpanic = ARM64_PVPANIC_BASE, .pvpanic_reg = PVPANIC_MMIO_SIZE, .pmu_intid = ARM64_PMU_INTID,
	};

	for (int i = 0; i < VM_MAX_VCPUS; i++)
		mpidr[i] = 0x80000000ULL | ((uint64_t)(i / 16) << 8) | (i % 16);
	memset(args, 'x', sizeof(args) - 1);
	ASSERT_EQ(0, arm64_fdt_place(&d, ram, sizeof(ram)));
	EXPECT_LT(fdt_totalsize(ram), 20u * 1024 + sizeof(args)) TH_LOG("the tree is %u bytes", fdt_totalsize(ram));
	EXPECT_EQ(ARM64_FDT_ROOM + sizeof(args) - 1, arm64_fdt_room(&d));
	memset(huge, 'x', sizeof(huge) - 1);
	d.bootargs = huge;
	EXPECT_EQ(ARM64_FDT_MAX, arm64_fdt_room(&d));
	EXPECT_EQ(-ENOSPC, arm64_fdt_place(&d, ram, sizeof(ram)));
}

TEST_HARNESS_MAIN
