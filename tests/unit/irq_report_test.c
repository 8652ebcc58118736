// SPDX-License-Identifier: MIT
/*
 * The interrupt table: the host's per-vector counts folded over the IRQs a vector had, a
 * passed-through device's rows from /proc/interrupts text (tests/unit/fixtures/vlpi/) and its vLPI
 * verdicts, and the two views of the rows (JSON for tests and scripts, text for people).
 * Run from the repository top (make check does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tests/unit/fixture_file.h"
#include "vfio/vfio.h"
#include "core/proc_interrupts.h"
#include "core/irq.h"

#define FIX "tests/unit/fixtures/vlpi/"
#define BDF "0000:00:13.0"


static void parse(struct __test_metadata *_metadata, const char *text, struct proc_interrupts *pi)
{
	ASSERT_EQ(0, proc_interrupts_parse(text, strlen(text), pi));
}

static char *as_json(const struct irq_report *r)
{
	char *s = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&s, &n);

	irq_report_json(m, r);
	fclose(m);
	return s;
}

static char *as_text(const struct irq_report *r)
{
	char *s = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&s, &n);

	irq_report_text(m, r);
	fclose(m);
	return s;
}

TEST(host_count_sums_the_irqs_a_vector_had)
{
	struct vfio_host_count c = { .irq = -1 };
	struct irq_line l = { .irq = 45, .total = 3 };

	vfio_host_count_update(&c, NULL); /* not enabled yet */
	EXPECT_EQ(0, vfio_host_count_total(&c));
	EXPECT_FALSE(c.partial);
	vfio_host_count_update(&c, &l);
	l.total = 10;
	vfio_host_count_update(&c, &l);
	EXPECT_EQ(10, vfio_host_count_total(&c));
	EXPECT_EQ(45, c.irq);
	/* the guest disabled it: the line is gone, what it counted since the last sample is lost */
	vfio_host_count_update(&c, NULL);
	EXPECT_EQ(10, vfio_host_count_total(&c));
	EXPECT_TRUE(c.partial);
	EXPECT_EQ(-1, c.irq);
	/* enabled again on another IRQ, then on the same number again (its count restarted) */
	l.irq = 47;
	l.total = 4;
	vfio_host_count_update(&c, &l);
	EXPECT_EQ(14, vfio_host_count_total(&c));
	l.total = 1;
	vfio_host_count_update(&c, &l);
	EXPECT_EQ(15, vfio_host_count_total(&c));
	l.total = 6;
	vfio_host_count_update(&c, &l);
	EXPECT_EQ(20, vfio_host_count_total(&c));
}

/* A VF with three MSI-X vectors in guest slot 2, as vfio_pci_create leaves it. */
static struct vfio_pci *fake_vf(unsigned int nr, int status)
{
	struct vfio_pci *v = calloc(1, sizeof(*v));

	snprintf(v->bdf, sizeof(v->bdf), BDF);
	v->pci.devfn = 2 << 3;
	v->msix_nr = nr;
	for (int i = 0; i < MSIX_MAX_VECTORS; i++)
		v->host_msix[i].irq = -1;
	for (int i = 0; i < VFIO_MAX_MSI; i++)
		v->host_msi[i].irq = -1;
	v->host_intx.irq = -1;
	if (status >= 0) {
		v->nr_verdict = nr;
		for (unsigned int i = 0; i < nr; i++) {
			v->verdict[i].status = status;
			snprintf(v->verdict[i].why, sizeof(v->verdict[i].why), "test reason %u", i);
		}
	}
	return v;
}

TEST(software_vectors_are_irqfd_counted_by_the_host)
{
	size_t len;
	char *t = fixture_slurp(FIX "interrupts-gic3-vf.txt", &len);
	struct proc_interrupts pi;
	struct vfio_pci *v = fake_vf(3, MSI_VERDICT_SOFTWARE);
	struct irq_report r = { 0 };

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, proc_interrupts_parse(t, len, &pi));
	vfio_pci_host_sample(v, &pi);
	ASSERT_EQ(0, vfio_pci_irq_rows(v, &r));
	ASSERT_EQ(3, r.nr);
	/* per vector, the sum over the host's CPUs */
	EXPECT_EQ(1877 + 1320, r.row[0].count);
	EXPECT_EQ(402 + 33, r.row[1].count);
	EXPECT_EQ(35, r.row[2].count);
	EXPECT_EQ(45, r.row[0].host_irq);
	EXPECT_EQ(IRQ_PATH_IRQFD, r.row[1].path);
	EXPECT_EQ(IRQ_BY_HOST, r.row[1].by);
	char *j = as_json(&r), *x = as_text(&r);

	EXPECT_NE(NULL, strstr(j, "{\"device\":\"vfio\",\"host_bdf\":\"0000:00:13.0\",\"pci\":\"00:02.0\","
				  "\"vector\":\"msix0\",\"path\":\"irqfd\",\"via\":\"VFIO host IRQ handler -> eventfd -> "
				  "KVM irqfd\",\"signalled_by\":\"host\",\"counted_by\":\"host\",\"count\":3197,"
				  "\"host_count\":3197,\"host_irq\":45,\"host_partial\":false}")) TH_LOG("%s", j);
	EXPECT_STREQ("vmm: interrupts: vfio 0000:00:13.0 -> 00:02.0: msix0 irqfd 3197 (host), msix1 irqfd 435 "
		     "(host), msix2 irqfd 35 (host)\n", x);
	free(j);
	free(x);
	irq_report_free(&r);
	proc_interrupts_free(&pi);
	free(t);
	free(v);
}

TEST(vlpi_vectors_have_no_count_and_say_why)
{
	size_t len;
	char *t = fixture_slurp(FIX "interrupts-gic4-vf.txt", &len);
	struct proc_interrupts pi;
	struct vfio_pci *v = fake_vf(3, MSI_VERDICT_DIRECT);
	struct irq_report r = { 0 };

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, proc_interrupts_parse(t, len, &pi));
	vfio_pci_host_sample(v, &pi);
	ASSERT_EQ(0, vfio_pci_irq_rows(v, &r));
	ASSERT_EQ(3, r.nr);
	EXPECT_EQ(IRQ_PATH_VLPI, r.row[0].path);
	EXPECT_EQ(IRQ_BY_NONE, r.row[0].by);
	char *j = as_json(&r), *x = as_text(&r);

	/* count null, not 0: what the host's handler ran is kept apart, with what it means */
	EXPECT_NE(NULL, strstr(j, "\"vector\":\"msix0\",\"path\":\"vlpi\",\"via\":\"GICv4 direct injection\","
				  "\"signalled_by\":\"device\",\"counted_by\":\"none\",\"count\":null,\"host_count\":2,"))
		TH_LOG("%s", j);
	EXPECT_NE(NULL, strstr(j, "\"note\":\"vLPI (not visible to the host); its host IRQ ran 2 times while it "
				  "was not forwarded\"")) TH_LOG("%s", j);
	EXPECT_NE(NULL, strstr(j, "\"vector\":\"msix1\",\"path\":\"vlpi\"")) TH_LOG("%s", j);
	EXPECT_TRUE(strstr(j, "\"count\":0") == NULL) TH_LOG("%s", j);
	EXPECT_STREQ("vmm: interrupts: vfio 0000:00:13.0 -> 00:02.0: msix0 vLPI (not visible to the host), msix1 "
		     "vLPI (not visible to the host), msix2 vLPI (not visible to the host)\n", x);
	free(j);
	free(x);
	irq_report_free(&r);
	proc_interrupts_free(&pi);
	free(t);
	free(v);
}

TEST(no_verdict_or_unknown_is_unknown_with_the_reason)
{
	struct vfio_pci *v = fake_vf(2, -1), *u = fake_vf(2, MSI_VERDICT_UNKNOWN);
	struct irq_report r = { 0 };

	ASSERT_EQ(0, vfio_pci_irq_rows(v, &r));
	ASSERT_EQ(0, vfio_pci_irq_rows(u, &r));
	ASSERT_EQ(4, r.nr);
	EXPECT_EQ(IRQ_PATH_UNKNOWN, r.row[0].path);
	EXPECT_NE(NULL, strstr(r.row[0].note, "never had its vectors live"));
	EXPECT_EQ(IRQ_PATH_UNKNOWN, r.row[3].path);
	EXPECT_STREQ("test reason 1", r.row[3].note);
	EXPECT_EQ(0, r.row[3].count); /* never sampled: no line, nothing counted */
	irq_report_free(&r);
	free(v);
	free(u);
}

/* MSI once the guest used it, and INTx through the resamplefd, both counted by the host. */
TEST(msi_and_intx_rows)
{
	static const char text[] =
		"           CPU0       CPU1\n"
		" 50:          7          5  ITS-PCI-MSI-0000:00:05.0   0 Edge      vfio-msi[0](0000:00:05.0)\n"
		" 51:         20          1  GICv3  38 Level     vfio-intx(0000:00:05.0)\n";
	struct proc_interrupts pi;
	struct vfio_pci *v = fake_vf(0, MSI_VERDICT_SOFTWARE);
	struct irq_report r = { 0 };

	snprintf(v->bdf, sizeof(v->bdf), "0000:00:05.0");
	v->msi_max = 1;
	v->has_intx = true;
	parse(_metadata, text, &pi);
	vfio_pci_host_sample(v, &pi);
	ASSERT_EQ(0, vfio_pci_irq_rows(v, &r));
	ASSERT_EQ(1, r.nr) TH_LOG("MSI listed before the guest enabled it");
	EXPECT_STREQ("intx", r.row[0].vector);
	EXPECT_EQ(IRQ_PATH_LINE_RESAMPLE, r.row[0].path);
	EXPECT_EQ(21, r.row[0].count);
	irq_report_free(&r);
	v->stats.msi_enables = 1;
	v->nr_verdict = 1;
	v->verdict[0].status = MSI_VERDICT_SOFTWARE;
	ASSERT_EQ(0, vfio_pci_irq_rows(v, &r));
	ASSERT_EQ(2, r.nr);
	EXPECT_STREQ("msi0", r.row[0].vector);
	EXPECT_EQ(IRQ_PATH_IRQFD, r.row[0].path);
	EXPECT_EQ(12, r.row[0].count);
	char *j = as_json(&r);

	EXPECT_NE(NULL, strstr(j, "\"path\":\"line-resample\",\"via\":\"VFIO host IRQ handler -> KVM irqfd + "
				  "resamplefd\",\"signalled_by\":\"host\",\"counted_by\":\"host\",\"count\":21")) TH_LOG("%s", j);
	free(j);
	irq_report_free(&r);
	proc_interrupts_free(&pi);
	free(v);
}

/* Rows from several devices: one text line each; a lost line is a lower bound; names escaped. */
TEST(text_folds_by_device_and_json_escapes)
{
	struct irq_report r = { 0 };
	struct irq_row *w = irq_report_add(&r);

	snprintf(w->device, sizeof(w->device), "16550");
	snprintf(w->vector, sizeof(w->vector), "line");
	w->path = IRQ_PATH_LINE;
	w->count = 4;
	w = irq_report_add(&r);
	snprintf(w->device, sizeof(w->device), "virtio-blk");
	snprintf(w->pci, sizeof(w->pci), "00:01.0");
	snprintf(w->vector, sizeof(w->vector), "msix0");
	w->count = 9;
	w = irq_report_add(&r);
	*w = r.row[1];
	snprintf(w->vector, sizeof(w->vector), "msix1");
	w->by = IRQ_BY_HOST;
	w->host_counted = w->host_partial = true;
	w->count = w->host_count = 5;
	snprintf(w->note, sizeof(w->note), "a \"quoted\" note");
	char *x = as_text(&r), *j = as_json(&r);

	EXPECT_STREQ("vmm: interrupts: 16550: line 4\n"
		     "vmm: interrupts: virtio-blk -> 00:01.0: msix0 irqfd 9, msix1 irqfd >=5 (host)\n", x);
	EXPECT_NE(NULL, strstr(j, "\"note\":\"a \\\"quoted\\\" note\"")) TH_LOG("%s", j);
	EXPECT_NE(NULL, strstr(j, "\"host_partial\":true")) TH_LOG("%s", j);
	EXPECT_EQ('[', j[0]);
	EXPECT_EQ(']', j[strlen(j) - 1]);
	free(x);
	free(j);
	irq_report_free(&r);
	EXPECT_EQ(0, r.nr);
	x = as_json(&r);
	EXPECT_STREQ("[]", x);
	free(x);
}

TEST_HARNESS_MAIN
