// SPDX-License-Identifier: MIT
/*
 * The vLPI report on fixture text (tests/unit/fixtures/vlpi/, see its README for which are recorded
 * in the lab and which are built to the kernel's printf formats): the per-vector join for every
 * source combination, its text and JSON, and the lab's recorded files end to end. The parsers
 * alone are in vlpi_parse_test.c. Run from the repository top (make check does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tests/unit/fixture_file.h"
#include "arm64/gic/vlpi.h"

#define FIX "tests/unit/fixtures/vlpi/"
#define BDF "0000:00:13.0"


static const int64_t events3[] = { 0, 1, 2 };

static struct vlpi_dev vf_dev(unsigned int vm_vectors)
{
	return (struct vlpi_dev){ .bdf = BDF, .guest_bdf = "00:03.0", .nr_vectors = 3,
				  .devid = 0x18, .event = events3, .vm_vectors = vm_vectors };
}

static struct vlpi_src src3(const char *vgic, const char *its, const char *irqs)
{
	return (struct vlpi_src){ .vgic_state = vgic, .its_state = its, .interrupts = irqs,
				  .vm_fd = -1 };
}

/* ---- the join ---- */

TEST(gic4_vf_three_forwarded_by_count)
{
	struct vlpi_src s = src3(FIX "vgic-state-gic4-vf.txt", "", FIX "interrupts-gic4-vf.txt");
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector v[3];
	char line[512];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(VLPI_FORWARDED, v[i].status);
		EXPECT_EQ(VLPI_EV_VGIC_COUNT, v[i].evidence);
		EXPECT_EQ(45 + i, v[i].host_irq);
		EXPECT_EQ(i, v[i].hwirq);
		EXPECT_EQ(3, v[i].nr_cand);
		EXPECT_EQ(-1, v[i].lpi);
	}
	vlpi_format_line(line, sizeof(line), &d, v, 3);
	EXPECT_STREQ("vfio " BDF " -> 00:03.0: vector 0 vLPI (one of LPI 8192, 8193, 8194), "
		     "vector 1 vLPI (one of LPI 8192, 8193, 8194), vector 2 vLPI (one of LPI 8192, "
		     "8193, 8194)", line);
	/* Without the VM's vector count, 3 H=1 LPIs prove nothing about one vector. */
	d.vm_vectors = 0;
	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_UNKNOWN, v[0].status);
	EXPECT_NE(NULL, strstr(v[0].reason, "3 of the VM's 3 LPIs are forwarded"));
	/* Three H=1 LPIs but the VM has four vectors: which three is not known. */
	d.vm_vectors = 4;
	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_UNKNOWN, v[2].status);
}

TEST(gic4_vf_its_state_per_vector_mix)
{
	struct vlpi_src s = src3(FIX "vgic-state-gic4-mix.txt", FIX "vgic-its-state-mix.txt",
				 FIX "interrupts-gic4-vf.txt");
	struct vlpi_dev d = vf_dev(0);
	struct vlpi_vector v[3];
	char line[512];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_FORWARDED, v[0].status);
	EXPECT_EQ(VLPI_EV_ITS_STATE, v[0].evidence);
	EXPECT_EQ(8192, v[0].lpi);
	EXPECT_EQ(0, v[0].vcpu);
	EXPECT_EQ(VLPI_FORWARDED, v[1].status);
	EXPECT_EQ(8193, v[1].lpi);
	EXPECT_EQ(1, v[1].vcpu);
	EXPECT_EQ(VLPI_SOFTWARE, v[2].status);
	EXPECT_EQ(8194, v[2].lpi);
	vlpi_format_line(line, sizeof(line), &d, v, 3);
	EXPECT_STREQ("vfio " BDF " -> 00:03.0: vector 0 vLPI (LPI 8192, vCPU 0), vector 1 vLPI "
		     "(LPI 8193, vCPU 1), vector 2 software-injected", line);
	/* The guest has not mapped event 2 yet. */
	const int64_t ev[] = { 0, 1, 7 };

	d.event = ev;
	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_UNKNOWN, v[2].status);
	EXPECT_NE(NULL, strstr(v[2].reason, "EventID 7"));
}

TEST(gic4_mix_vgic_state_only)
{
	struct vlpi_src s = src3(FIX "vgic-state-gic4-mix.txt", "", FIX "interrupts-gic4-vf.txt");
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector v[3];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(VLPI_UNKNOWN, v[i].status);
		EXPECT_NE(NULL, strstr(v[i].reason, "2 of the VM's 4 LPIs"));
	}
}

TEST(gic3_vf_software)
{
	struct vlpi_src s = src3(FIX "vgic-state-gic3-vf.txt", "", FIX "interrupts-gic3-vf.txt");
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector v[3];
	char line[512];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(VLPI_SOFTWARE, v[i].status);
	EXPECT_EQ(1877 + 1320, v[0].host_count);
	vlpi_format_line(line, sizeof(line), &d, v, 3);
	EXPECT_STREQ("vfio " BDF " -> 00:03.0: vectors 0-2 software-injected", line);
}

TEST(hwid_names_the_vector)
{
	struct vlpi_src s = src3(FIX "vgic-state-hwid.txt", "", FIX "interrupts-hwid.txt");
	struct vlpi_dev d = vf_dev(0);
	struct vlpi_vector v[3];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_FORWARDED, v[0].status);
	EXPECT_EQ(VLPI_EV_VGIC_HWID, v[0].evidence);
	EXPECT_EQ(8192, v[0].lpi);
	EXPECT_EQ(8193, v[1].lpi);
	/* 8207 matches no H=1 LPI's HWID; the other two H=1 LPIs leave it open */
	EXPECT_EQ(VLPI_UNKNOWN, v[2].status);
}

TEST(no_debugfs_doorbells)
{
	struct vlpi_src s = src3(FIX "no-such-vgic-state", FIX "no-such-its",
				 FIX "interrupts-gic4-vf.txt");
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector v[3];
	char line[512];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_DOORBELLS, v[0].status);
	EXPECT_EQ(3, v[0].doorbells);
	vlpi_format_line(line, sizeof(line), &d, v, 3);
	EXPECT_STREQ("vfio " BDF " -> 00:03.0: vectors 0-2 doorbells seen (3)", line);

	s.interrupts = FIX "interrupts-gic4-idle.txt";
	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_UNKNOWN, v[1].status);
	EXPECT_NE(NULL, strstr(v[1].reason, "no doorbell activity"));
	EXPECT_NE(NULL, strstr(v[1].reason, "no-such-vgic-state"));

	/* No vPE doorbells at all: GICv4 is off on this host. */
	s.interrupts = FIX "interrupts-gic3-vf.txt";
	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_SOFTWARE, v[0].status);
	EXPECT_NE(NULL, strstr(v[0].reason, "no GICv4 vPE doorbells"));
}

TEST(nothing_available)
{
	struct vlpi_src s = src3(FIX "no-such-vgic-state", "", FIX "no-such-interrupts");
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector v[3];
	char line[1024];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(VLPI_UNKNOWN, v[i].status);
		EXPECT_EQ(-1, v[i].host_irq);
		EXPECT_NE(NULL, strstr(v[i].reason, "no-such-vgic-state"));
		EXPECT_NE(NULL, strstr(v[i].reason, "no-such-interrupts"));
	}
	vlpi_format_line(line, sizeof(line), &d, v, 3);
	EXPECT_EQ(0, strncmp(line, "vfio " BDF " -> 00:03.0: vectors 0-2 unknown: ", 41));
}

TEST(vector_not_enabled_on_host)
{
	struct vlpi_src s = src3(FIX "vgic-state-gic4-vf.txt", "", FIX "interrupts-gic4-vf.txt");
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector v[4];

	d.nr_vectors = 4;
	d.event = NULL;
	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_FORWARDED, v[2].status);
	EXPECT_EQ(VLPI_NOT_ENABLED, v[3].status);
	EXPECT_NE(NULL, strstr(v[3].reason, "vfio-msix[3](" BDF ")"));
}

TEST(not_a_vgic_state)
{
	struct vlpi_src s = src3(FIX "interrupts-gic4-vf.txt", "", FIX "interrupts-gic4-vf.txt");
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector v[3];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	/* falls back to the doorbells, saying why */
	EXPECT_EQ(VLPI_DOORBELLS, v[0].status);
	EXPECT_NE(NULL, strstr(v[0].reason, "no vgic-state in it"));
}

TEST(default_paths_without_debugfs_give_reasons)
{
	struct vlpi_src s = { .interrupts = "", .pid = 999999, .vm_fd = 7 };
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector v[3];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_UNKNOWN, v[0].status);
	EXPECT_NE(0, strlen(v[0].reason));
	EXPECT_EQ(-EINVAL, vlpi_report(&s, NULL, v));
}

/* ---- formatting ---- */

TEST(json_for_stats)
{
	struct vlpi_src s = src3(FIX "vgic-state-gic4-mix.txt", FIX "vgic-its-state-mix.txt",
				 FIX "interrupts-gic4-vf.txt");
	struct vlpi_dev d = vf_dev(0);
	struct vlpi_vector v[3];
	char j[2048];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	snprintf(v[2].reason, sizeof(v[2].reason), "a \"quoted\"\\ reason\n");
	size_t n = vlpi_format_json(j, sizeof(j), &d, v, 3);

	EXPECT_EQ(strlen(j), n);
	EXPECT_EQ(0, strncmp(j, "{\"bdf\":\"" BDF "\",\"guest_bdf\":\"00:03.0\",\"vectors\":[{\"vector\":0,"
			     "\"status\":\"vlpi\",\"evidence\":\"vgic-its-state\",\"host_irq\":45,"
			     "\"hwirq\":0,\"host_count\":2,\"lpi\":8192,\"vcpu\":0,", 160));
	EXPECT_NE(NULL, strstr(j, "\"status\":\"software\""));
	EXPECT_NE(NULL, strstr(j, "a \\\"quoted\\\"\\\\ reason\\u000a"));
	EXPECT_EQ(']', j[n - 2]);
	EXPECT_EQ('}', j[n - 1]);
}

TEST(format_into_small_buffers)
{
	struct vlpi_src s = src3(FIX "vgic-state-gic4-vf.txt", "", FIX "interrupts-gic4-vf.txt");
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector v[3];
	char big[512], small[10];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	size_t need = vlpi_format_line(big, sizeof(big), &d, v, 3);

	EXPECT_EQ(strlen(big), need);
	EXPECT_EQ(need, vlpi_format_line(small, sizeof(small), &d, v, 3));
	EXPECT_EQ(sizeof(small) - 1, strlen(small));
	EXPECT_EQ(need, vlpi_format_line(NULL, 0, &d, v, 3));
	EXPECT_NE(0, vlpi_format_json(small, sizeof(small), &d, v, 3));
	EXPECT_EQ(sizeof(small) - 1, strlen(small));
	vlpi_format_line(big, sizeof(big), &d, v, 0);
	EXPECT_STREQ("vfio " BDF " -> 00:03.0: no vectors enabled", big);
}

/* ---- text recorded in the lab (Debian 6.12.117, gic-version=4, vmm's virtio console) ---- */

TEST(lab_gic4_virtio_vgic_state)
{
	size_t len;
	char *t = fixture_slurp(FIX "vgic-state-lab-gic4-virtio.txt", &len);
	struct vgic_state st;
	unsigned int lpis = 0;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, vgic_state_parse(t, len, &st));
	EXPECT_EQ(96, st.nr_spis);
	EXPECT_EQ(3, st.nr_lpis);
	EXPECT_EQ(0, st.skipped);
	EXPECT_EQ(3, st.nr_sections);
	EXPECT_EQ(2 * 32 + 96 + 3, st.nr_irq);
	for (size_t i = 0; i < st.nr_irq; i++) {
		if (st.irq[i].type != VGIC_LPI)
			continue;
		lpis++;
		EXPECT_FALSE(st.irq[i].hw);	/* virtio MSIs: software-injected LPIs */
		EXPECT_TRUE(st.irq[i].enabled);
	}
	EXPECT_EQ(3, lpis);
	vgic_state_free(&st);
	free(t);
}

TEST(lab_gic4_interrupts_doorbells)
{
	struct vlpi_src s = src3(FIX "no-such-vgic-state", "", FIX "interrupts-lab-gic4.txt");
	/* The lab host's own virtio disk has MSI-X lines but no vfio ones. */
	struct vlpi_dev d = { .bdf = "0000:00:06.0", .nr_vectors = 1 };
	struct vlpi_vector v[1];
	size_t len;
	char *t = fixture_slurp(FIX "interrupts-lab-gic4.txt", &len);
	struct proc_interrupts pi;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, proc_interrupts_parse(t, len, &pi));
	EXPECT_EQ(2, pi.nr_cpus);
	EXPECT_EQ(0, pi.skipped);
	ASSERT_EQ(2, pi.nr_line);	/* the two vPE doorbells of the running VM */
	EXPECT_EQ(IRQ_LINE_DOORBELL, pi.line[1].kind);
	EXPECT_EQ(31, pi.line[1].irq);
	EXPECT_EQ(1, pi.line[1].hwirq);
	EXPECT_EQ(0, pi.line[1].total);
	proc_interrupts_free(&pi);
	free(t);
	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_NOT_ENABLED, v[0].status);

	/* The vfio lines of the constructed VF case with the lab's (idle) doorbells: unknown. */
	struct vlpi_dev vf = vf_dev(3);
	struct vlpi_vector w[3];
	char *a, *b;
	size_t la, lb;

	a = fixture_slurp(FIX "interrupts-lab-gic4.txt", &la);
	b = fixture_slurp(FIX "interrupts-gic3-vf.txt", &lb);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	/* lab text + the vfio lines of the constructed file (skipping its header) */
	char *both = malloc(la + lb + 1);

	ASSERT_NE(NULL, both);
	memcpy(both, a, la);
	memcpy(both + la, strchr(b, '\n') + 1, lb - (size_t)(strchr(b, '\n') + 1 - b));
	size_t lboth = la + lb - (size_t)(strchr(b, '\n') + 1 - b);
	struct proc_interrupts p2;
	struct vlpi_inputs in = { .vgic_why = "debugfs not mounted" };

	ASSERT_EQ(0, proc_interrupts_parse(both, lboth, &p2));
	in.pi = &p2;
	ASSERT_EQ(0, vlpi_join(&in, &vf, w));
	EXPECT_EQ(VLPI_UNKNOWN, w[0].status);
	EXPECT_STREQ("debugfs not mounted and no doorbell activity (2 vPE doorbells, none fired)",
		     w[0].reason);
	proc_interrupts_free(&p2);
	free(both);
	free(a);
	free(b);
}

TEST(lab_gic4_after_exit_no_doorbells)
{
	struct vlpi_src s = src3("", "", FIX "interrupts-lab-gic4-after.txt");
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector v[3];

	/* After the VM exits its doorbells are freed, and the vfio lines are gone too. */
	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	EXPECT_EQ(VLPI_NOT_ENABLED, v[0].status);
}

TEST(lab_gic3_no_doorbells_means_software)
{
	size_t la, lb;
	char *a = fixture_slurp(FIX "interrupts-lab-gic3.txt", &la);
	char *b = fixture_slurp(FIX "interrupts-gic3-vf.txt", &lb);
	char *v3 = NULL;
	size_t l3;
	struct vgic_state st;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	/* The lab's gic3 host text with the VF's vfio lines added: no vPE doorbells -> software. */
	const char *vb = strchr(b, '\n') + 1;
	size_t lv = lb - (size_t)(vb - b);
	char *both = malloc(la + lv);

	ASSERT_NE(NULL, both);
	memcpy(both, a, la);
	memcpy(both + la, vb, lv);
	struct proc_interrupts pi;
	struct vlpi_inputs in = { .vgic_why = "no vgic-state" };
	struct vlpi_dev d = vf_dev(3);
	struct vlpi_vector w[3];

	ASSERT_EQ(0, proc_interrupts_parse(both, la + lv, &pi));
	EXPECT_EQ(0, pi.skipped);
	in.pi = &pi;
	ASSERT_EQ(0, vlpi_join(&in, &d, w));
	EXPECT_EQ(VLPI_SOFTWARE, w[1].status);
	EXPECT_EQ(VLPI_EV_DOORBELLS, w[1].evidence);
	proc_interrupts_free(&pi);
	/* Its vgic-state: the virtio LPIs, H=0 as under gic4. */
	v3 = fixture_slurp(FIX "vgic-state-lab-gic3-virtio.txt", &l3);
	ASSERT_NE(NULL, v3);
	ASSERT_EQ(0, vgic_state_parse(v3, l3, &st));
	EXPECT_EQ(0, st.skipped);
	EXPECT_EQ(2 * 32 + 96 + 3, st.nr_irq);
	in.vgic = &st;
	in.pi = NULL;
	ASSERT_EQ(0, vlpi_join(&in, &d, w));
	EXPECT_EQ(VLPI_SOFTWARE, w[0].status);
	EXPECT_STREQ("none of the VM's 3 LPIs is forwarded (H=0)", w[0].reason);
	vgic_state_free(&st);
	free(v3);
	free(both);
	free(a);
	free(b);
}

TEST_HARNESS_MAIN
