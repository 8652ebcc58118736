// SPDX-License-Identifier: MIT
/*
 * The vLPI report's parsers on fixture text (tests/unit/fixtures/vlpi/, see its README for which
 * are recorded in the lab and which are built to the kernel's printf formats): vgic-state,
 * vgic-its-state and /proc/interrupts, and damaged files, which must give counts or reasons, never
 * crashes. The join and the report are in vlpi_test.c. Run from the repository top (make check does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tests/unit/fixture_file.h"
#include "arm64/gic/vlpi.h"

#define FIX "tests/unit/fixtures/vlpi/"
#define BDF "0000:00:13.0"


/* ---- parsers ---- */

TEST(vgic_state_sections_and_columns)
{
	size_t len;
	char *t = fixture_slurp(FIX "vgic-state-gic4-vf.txt", &len);
	struct vgic_state st;
	unsigned int lpis = 0, sgis0 = 0, spis = 0;

	ASSERT_NE(NULL, t) TH_LOG("run from the repository top: %s missing", FIX);
	ASSERT_EQ(0, vgic_state_parse(t, len, &st));
	EXPECT_STREQ("GICv3", st.model);
	EXPECT_EQ(32, st.nr_spis);
	EXPECT_EQ(3, st.nr_lpis);
	EXPECT_EQ(1, st.enabled);
	EXPECT_EQ(7, st.nr_flags);
	EXPECT_EQ(3, st.nr_sections);	/* VCPU 0, VCPU 1, SPI */
	EXPECT_EQ(0, st.skipped);
	EXPECT_EQ(2 * 32 + 32 + 3, st.nr_irq);
	for (size_t i = 0; i < st.nr_irq; i++) {
		const struct vgic_irq_state *q = &st.irq[i];

		if (q->type == VGIC_SGI && q->section == 0)
			sgis0++;
		if (q->type == VGIC_SPI)
			spis++;
		if (q->type == VGIC_PPI && q->intid == 27) {
			/* the vtimer: HW-mapped, its host INTID in HWID */
			EXPECT_TRUE(q->hw);
			EXPECT_TRUE(q->level);
			EXPECT_EQ(27, q->hwid);
		}
		if (q->type != VGIC_LPI)
			continue;
		lpis++;
		EXPECT_TRUE(q->hw);
		EXPECT_TRUE(q->enabled);
		EXPECT_TRUE(q->group);
		EXPECT_FALSE(q->pending);
		EXPECT_EQ(0, q->hwid);
		EXPECT_EQ(192, q->priority);
		EXPECT_EQ(-1, q->vcpu);
	}
	EXPECT_EQ(16, sgis0);
	EXPECT_EQ(32, spis);
	EXPECT_EQ(3, lpis);
	EXPECT_EQ(1, st.irq[st.nr_irq - 2].target_vcpu);	/* LPI 8193 on vCPU 1 */
	vgic_state_free(&st);
	free(t);
}

TEST(vgic_state_4_15_six_flags_hex)
{
	size_t len;
	char *t = fixture_slurp(FIX "vgic-state-4.15.txt", &len);
	struct vgic_state st;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, vgic_state_parse(t, len, &st));
	EXPECT_EQ(6, st.nr_flags);
	EXPECT_EQ(-1, st.nr_lpis);
	EXPECT_EQ(0, st.skipped);
	ASSERT_EQ(34, st.nr_irq);
	EXPECT_EQ(0x1b, st.irq[27].hwid);
	EXPECT_TRUE(st.irq[27].hw);
	EXPECT_EQ(0xa0, st.irq[0].priority);
	EXPECT_FALSE(st.irq[0].group);		/* no G column */
	EXPECT_TRUE(st.irq[32].freed);
	EXPECT_EQ(8192, st.irq[32].intid);
	EXPECT_EQ(8193, st.irq[33].intid);
	EXPECT_TRUE(st.irq[33].hw);
	EXPECT_FALSE(st.irq[33].level);
	vgic_state_free(&st);
	free(t);
}

TEST(its_state_rows_per_device)
{
	size_t len;
	char *t = fixture_slurp(FIX "vgic-its-state-mix.txt", &len);
	struct its_state st;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, its_state_parse(t, len, &st));
	EXPECT_EQ(4, st.nr);
	EXPECT_EQ(0, st.skipped);
	const struct its_ite_state *e = its_state_find(&st, 0x18, 1);

	ASSERT_NE(NULL, e);
	EXPECT_EQ(8193, e->intid);
	EXPECT_EQ(1, e->target);
	EXPECT_TRUE(e->hw);
	e = its_state_find(&st, 0x30, 0);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(8224, e->intid);
	EXPECT_FALSE(e->hw);
	EXPECT_EQ(NULL, its_state_find(&st, 0x18, 3));
	its_state_free(&st);
	free(t);
}

TEST(proc_interrupts_vfio_and_doorbells)
{
	size_t len;
	char *t = fixture_slurp(FIX "interrupts-gic4-vf.txt", &len);
	struct proc_interrupts pi;
	unsigned int db = 0;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, proc_interrupts_parse(t, len, &pi));
	EXPECT_EQ(2, pi.nr_cpus);
	EXPECT_EQ(0, pi.skipped);
	EXPECT_EQ(5, pi.nr_line);	/* 3 vfio + 2 doorbells; virtio and the rest are not kept */
	const struct irq_line *l = proc_interrupts_vfio(&pi, BDF, IRQ_LINE_VFIO_MSIX, 2);

	ASSERT_NE(NULL, l);
	EXPECT_EQ(47, l->irq);
	EXPECT_STREQ("ITS-PCI-MSIX-" BDF, l->chip);
	EXPECT_TRUE(l->has_hwirq);
	EXPECT_EQ(2, l->hwirq);
	EXPECT_EQ(1, l->total);
	EXPECT_EQ(0, pi.count[l->counts]);
	EXPECT_EQ(1, pi.count[l->counts + 1]);
	EXPECT_EQ(NULL, proc_interrupts_vfio(&pi, BDF, IRQ_LINE_VFIO_MSIX, 3));
	EXPECT_EQ(NULL, proc_interrupts_vfio(&pi, BDF, IRQ_LINE_VFIO_MSI, 0));
	EXPECT_EQ(NULL, proc_interrupts_vfio(&pi, "0000:00:14.0", IRQ_LINE_VFIO_MSIX, 0));
	for (size_t i = 0; i < pi.nr_line; i++)
		if (pi.line[i].kind == IRQ_LINE_DOORBELL) {
			db++;
			EXPECT_STREQ("GICv4-vpe", pi.line[i].chip);
		}
	EXPECT_EQ(2, db);
	proc_interrupts_free(&pi);
	free(t);
}

TEST(proc_interrupts_msi_intx_shared_and_no_hwirq)
{
	const char *t =
		"           CPU0       CPU1       CPU2       CPU3\n"
		" 60:          5          0          0          7  ITS-PCI-MSI-0000:00:05.0   0 Edge      vfio-msi[0](0000:00:05.0)\n"
		" 61:          1          2          3          4     GICv3  40 Level     foo, vfio-intx(0000:00:05.0)\n"
		" 62:          9          9          9          9     dummy Edge      vfio-msix[1](0000:00:07.0)\n"
		" 63:          1          1          1          1  GICv4.1-vpe  12 Edge      vcpu\n";
	struct proc_interrupts pi;

	ASSERT_EQ(0, proc_interrupts_parse(t, strlen(t), &pi));
	EXPECT_EQ(4, pi.nr_cpus);
	const struct irq_line *l = proc_interrupts_vfio(&pi, "0000:00:05.0", IRQ_LINE_VFIO_MSI, 0);

	ASSERT_NE(NULL, l);
	EXPECT_EQ(12, l->total);
	l = proc_interrupts_vfio(&pi, "0000:00:05.0", IRQ_LINE_VFIO_INTX, -1);
	ASSERT_NE(NULL, l);
	EXPECT_EQ(61, l->irq);
	EXPECT_EQ(40, l->hwirq);
	l = proc_interrupts_vfio(&pi, "0000:00:07.0", IRQ_LINE_VFIO_MSIX, 1);
	ASSERT_NE(NULL, l);
	EXPECT_FALSE(l->has_hwirq);	/* no domain: no hwirq column */
	EXPECT_EQ(36, l->total);
	EXPECT_EQ(IRQ_LINE_DOORBELL, pi.line[3].kind);
	proc_interrupts_free(&pi);
}

/* ---- damaged input: never a crash, always a count or a reason ---- */

TEST(malformed_vgic_state)
{
	static const char t[] =
		"Distributor\n===========\nvgic_model:\tGICv3GICv3GICv3\nnr_spis:\t99999999999999999999\n"
		"nr_lpis:\t-5\nenabled:\n"
		"\nVCPU 0 TYP   ID TGT_ID PLAEHCG     HWID   TARGET SRC PRI VCPU_ID\n"
		"       SGI    0      0 0001001        0        0   0 160      -1 \n"
		"       SGI    1      0 0001001        0        0   0 160\n"			/* missing */
		"       SGI    2      0 00010010        0        0   0 160      -1 \n"		/* 8 flags */
		"       SGI    3      0 0002001        0        0   0 160      -1 \n"		/* not 0/1 */
		"       LPI 99999999999      0 0001101        0        0   0 192      -1 \n"	/* huge */
		"       LPI 8192      0 0001101 99999999999999999999999 0 0 192 -1 \n"
		"       LPI 8193      0 0001101        0        0   0 999      -1 \n"		/* prio */
		"       XYZ 8194      0 0001101        0        0   0 192      -1 \n"
		"       LPI 8195      x 0001101        0        0   0 192      -1 \n"
		"       LPI 8196      0 0001101        0        0   0 192      -1 \n"
		"VCPU\nVCPU x TYP\nSPI\n\xff\xfe\x01garbage\n"
		"       LPI 8197      0 0001101        0        0   0 192";		/* cut, no \n */
	struct vgic_state st;

	ASSERT_EQ(0, vgic_state_parse(t, sizeof(t) - 1, &st));
	EXPECT_EQ(-1, st.nr_spis);
	EXPECT_EQ(-1, st.nr_lpis);
	EXPECT_STREQ("", st.model);
	ASSERT_EQ(2, st.nr_irq);
	EXPECT_EQ(0, st.irq[0].intid);
	EXPECT_EQ(8196, st.irq[1].intid);
	EXPECT_EQ(13, st.skipped);
	vgic_state_free(&st);
	EXPECT_EQ(-EINVAL, vgic_state_parse(NULL, 0, &st));
	ASSERT_EQ(0, vgic_state_parse("", 0, &st));
	EXPECT_EQ(0, st.nr_irq);
	vgic_state_free(&st);
}

TEST(malformed_interrupts_and_its_state)
{
	static const char pi_text[] =
		"           CPU0       CPU1\n"
		" 45:          2  ITS-PCI-MSIX-0000:00:13.0   0 Edge      vfio-msix[0](0000:00:13.0)\n"
		" 46: 99999999999999999999999 0  ITS   1 Edge      vfio-msix[1](0000:00:13.0)\n"
		" 47: 18446744073709551615 1  ITS   2 Edge      vfio-msix[2](0000:00:13.0)\n"
		" 48:          0          0  ITS   3 Edge      vfio-msix[99999999999](0000:00:13.0)\n"
		" 49:          0          0  ITS   4 Edge      vfio-msix[4](0000:00:13.0\n"
		" 50:          0          0  ITS   5 Edge      vfio-msix[5](0000:00:13.0:too-long-for-a-bdf)\n"
		" 51:          0          0  ITS   6 Edge      vfio-msix[](0000:00:13.0)\n"
		" 52:          0          0\n"
		"xx:           0          0  ITS   7 Edge      vfio-msix[7](0000:00:13.0)\n"
		" 53:          4          0  ITS   8 Edge      vfio-msix[8](0000:00:13.0)";
	static const char its_text[] =
		"   0     8192        0        0        0  1\n"	/* before any device */
		"Device ID: 0x18, Event ID Range: [0 - 31]\n"
		"       0     8192        0        0        0  1\n"
		"       1     8193        0        0        0  2\n"
		"       2     8194        0        0\n"
		"       3 99999999999        0        0        0  1\n"
		"Device ID: 0xZZ, Event ID Range: [0 - 31]\n"
		"       4     8196        0        0        0  1\n";
	struct proc_interrupts pi;
	struct its_state is;

	ASSERT_EQ(0, proc_interrupts_parse(pi_text, sizeof(pi_text) - 1, &pi));
	/* Damaged vfio names are not ours (48-51); damaged counts are skipped lines: 45 (one count),
	 * 46 (too big), 47 (the sum overflows), 52 (no chip). */
	ASSERT_EQ(1, pi.nr_line);
	EXPECT_EQ(53, pi.line[0].irq);
	EXPECT_EQ(4, pi.skipped);
	proc_interrupts_free(&pi);
	ASSERT_EQ(0, proc_interrupts_parse("no header\n 45: 1 2 x\n", 21, &pi));
	EXPECT_EQ(0, pi.nr_cpus);
	EXPECT_EQ(0, pi.nr_line);
	proc_interrupts_free(&pi);

	ASSERT_EQ(0, its_state_parse(its_text, sizeof(its_text) - 1, &is));
	ASSERT_EQ(1, is.nr);
	EXPECT_EQ(8192, is.ite[0].intid);
	EXPECT_EQ(6, is.skipped);
	its_state_free(&is);
}

TEST(huge_line_and_random_bytes)
{
	size_t n = 1 << 20;
	char *t = malloc(n);
	struct vgic_state st;
	struct proc_interrupts pi;
	struct its_state is;
	unsigned int seed = 1;

	ASSERT_NE(NULL, t);
	memset(t, '7', n);	/* one 1 MiB line of digits */
	ASSERT_EQ(0, vgic_state_parse(t, n, &st));
	EXPECT_EQ(1, st.skipped);
	vgic_state_free(&st);
	ASSERT_EQ(0, proc_interrupts_parse(t, n, &pi));
	proc_interrupts_free(&pi);
	/* Random bytes, and the real fixtures with random damage: parsers must survive all. */
	static const char *const fx[] = { FIX "vgic-state-gic4-mix.txt", FIX "interrupts-gic4-vf.txt",
					  FIX "vgic-its-state-mix.txt" };
	for (int round = 0; round < 300; round++) {
		size_t len = (size_t)(rand_r(&seed) % 4096);
		char *src = NULL;

		if (round % 2) {
			src = fixture_slurp(fx[round % 3], &len);
			ASSERT_NE(NULL, src);
			memcpy(t, src, len);
			for (int k = 0; k < 20; k++)
				t[rand_r(&seed) % len] = (char)(rand_r(&seed) % 256);
			len = (size_t)rand_r(&seed) % (len + 1);	/* and cut anywhere */
			free(src);
		} else {
			for (size_t k = 0; k < len; k++)
				t[k] = (char)(rand_r(&seed) % 256);
		}
		ASSERT_EQ(0, vgic_state_parse(t, len, &st));
		vgic_state_free(&st);
		ASSERT_EQ(0, proc_interrupts_parse(t, len, &pi));
		proc_interrupts_free(&pi);
		ASSERT_EQ(0, its_state_parse(t, len, &is));
		its_state_free(&is);
	}
	free(t);
}

TEST_HARNESS_MAIN
