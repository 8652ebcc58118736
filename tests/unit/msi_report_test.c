// SPDX-License-Identifier: MIT
/*
 * A passed-through device's per-vector report: through the architecture's msi_report (core/arch.h;
 * arm64's vLPI report) when it has one, else from /proc/interrupts alone (vfio/msi_report.c,
 * x86), whose line reads as the vLPI report's does for the same host. Fixtures in
 * tests/unit/fixtures/vlpi/; run from the repository top (make check does).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tests/unit/json_valid.h"
#include "arm64/gic/vlpi.h"
#include "vfio/vfio.h"
#include "core/arch.h"
#include "core/vm.h"

#define FIX "tests/unit/fixtures/vlpi/"
#define BDF "0000:00:13.0"

static const int64_t events4[] = { 0, 1, 2, 3 };

/* The VF of interrupts-gic3-vf.txt (vectors 0-2 there) with a fourth vector VFIO never enabled. */
static const struct msi_dev vf4 = { .bdf = BDF, .guest_bdf = "00:03.0", .nr_vectors = 4, .devid = 0x18,
				    .event = events4, .vm_vectors = 3 };

static char *json_of(const struct msi_dev *d, const char *interrupts)
{
	char *s = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&s, &n);

	if (vfio_msi_report_host(d, interrupts, NULL, NULL, 0, m) < 0)
		fputs("(failed)", m);
	fclose(m);
	return s;
}

TEST(host_only_report_from_proc_interrupts)
{
	struct msi_verdict verdict[4];
	char line[256];

	ASSERT_EQ(0, vfio_msi_report_host(&vf4, FIX "interrupts-gic3-vf.txt", verdict, line, sizeof(line), NULL));
	EXPECT_STREQ("vfio " BDF " -> 00:03.0: vectors 0-2 software-injected, vector 3 not enabled", line);
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(MSI_VERDICT_SOFTWARE, verdict[i].status);
	EXPECT_EQ(MSI_VERDICT_NOT_ENABLED, verdict[3].status);
	EXPECT_STREQ("no vfio-msix[3](" BDF ") in /proc/interrupts: VFIO has not enabled it", verdict[3].why);

	char *j = json_of(&vf4, FIX "interrupts-gic3-vf.txt");

	EXPECT_TRUE(json_valid(j, strlen(j))) TH_LOG("%s", j);
	EXPECT_NE(NULL, strstr(j, "{\"bdf\":\"" BDF "\",\"guest_bdf\":\"00:03.0\",\"vectors\":[{\"vector\":0,"
				  "\"status\":\"software\",\"evidence\":\"proc-interrupts\",\"host_irq\":45,\"hwirq\":0,"
				  "\"host_count\":3197,\"lpi\":-1,\"vcpu\":-1,\"reason\":\"")) TH_LOG("%s", j);
	EXPECT_NE(NULL, strstr(j, "{\"vector\":3,\"status\":\"not-enabled\",\"evidence\":\"proc-interrupts\","
				  "\"host_irq\":-1,\"hwirq\":-1,\"host_count\":0,\"lpi\":-1,\"vcpu\":-1,")) TH_LOG("%s", j);
	free(j);
}

/* x86's line is what the vLPI report said on the same host (no vgic-state, no vPE doorbells). */
TEST(host_only_line_matches_the_vlpi_report)
{
	const struct vlpi_src s = { .vgic_state = "", .its_state = "", .interrupts = FIX "interrupts-gic3-vf.txt",
				    .vm_fd = -1 };
	const struct vlpi_dev d = { .bdf = vf4.bdf, .guest_bdf = vf4.guest_bdf, .nr_vectors = vf4.nr_vectors,
				    .devid = vf4.devid, .event = vf4.event, .vm_vectors = vf4.vm_vectors };
	struct vlpi_vector v[4];
	char want[256], line[256];

	ASSERT_EQ(0, vlpi_report(&s, &d, v));
	vlpi_format_line(want, sizeof(want), &d, v, 4);
	ASSERT_EQ(0, vfio_msi_report_host(&vf4, FIX "interrupts-gic3-vf.txt", NULL, line, sizeof(line), NULL));
	EXPECT_STREQ(want, line);
}

TEST(host_only_unreadable_interrupts_is_unknown_and_line_is_cut_safely)
{
	struct msi_verdict verdict[4];
	char line[256], tiny[12];

	ASSERT_EQ(0, vfio_msi_report_host(&vf4, "/nonexistent/interrupts", verdict, line, sizeof(line), NULL));
	EXPECT_STREQ("vfio " BDF " -> 00:03.0: vectors 0-3 unknown: /nonexistent/interrupts: No such file or "
		     "directory", line);
	EXPECT_EQ(MSI_VERDICT_UNKNOWN, verdict[0].status);
	ASSERT_EQ(0, vfio_msi_report_host(&vf4, FIX "interrupts-gic3-vf.txt", NULL, tiny, sizeof(tiny), NULL));
	EXPECT_STREQ("vfio 0000:0", tiny);
	char *j = json_of(&vf4, "/nonexistent/interrupts");

	EXPECT_TRUE(json_valid(j, strlen(j))) TH_LOG("%s", j);
	EXPECT_NE(NULL, strstr(j, "\"status\":\"unknown\",\"evidence\":\"none\"")) TH_LOG("%s", j);
	free(j);
	struct msi_dev big = vf4;

	big.nr_vectors = MSIX_MAX_VECTORS + 1;
	EXPECT_EQ(-EINVAL, vfio_msi_report_host(&big, NULL, NULL, line, sizeof(line), NULL));
}

/* arm64's msi_report on whatever this host shows (no KVM here: no vgic-state): a line, JSON and a
 * verdict per vector, all consistent; bad arguments write nothing. */
TEST(vlpi_msi_report_writes_all_three)
{
	struct vm vm = { .fd = -1 };
	struct msi_verdict verdict[4];
	char line[512] = "untouched", *j = NULL;
	size_t n = 0;
	struct msi_dev big = vf4;
	FILE *m = open_memstream(&j, &n);

	big.nr_vectors = MSIX_MAX_VECTORS + 1;
	EXPECT_EQ(-EINVAL, vlpi_msi_report(&vm, &big, verdict, line, sizeof(line), m));
	EXPECT_STREQ("untouched", line);
	ASSERT_EQ(0, vlpi_msi_report(&vm, &vf4, verdict, line, sizeof(line), m));
	fclose(m);
	EXPECT_EQ(0, strncmp(line, "vfio " BDF " -> 00:03.0:", strlen("vfio " BDF " -> 00:03.0:"))) TH_LOG("%s", line);
	EXPECT_TRUE(json_valid(j, strlen(j))) TH_LOG("%s", j);
	EXPECT_NE(NULL, strstr(j, "{\"vector\":3,")) TH_LOG("%s", j);
	for (int i = 0; i < 4; i++) {
		const char *why = verdict[i].why;

		EXPECT_NE(MSI_VERDICT_DIRECT, verdict[i].status) TH_LOG("a vLPI without a VM: %s", why);
	}
	free(j);
}

/* ---- vfio's report goes through the architecture's msi_report ---- */

static struct msi_dev seen;
static int64_t seen_event[MSIX_MAX_VECTORS];
static char seen_guest[16]; /* dev's strings live as long as the call */
static int fake_calls;

static int fake_msi_report(struct vm *vm, const struct msi_dev *dev, struct msi_verdict *verdict, char *line,
			   size_t size, FILE *json)
{
	(void)vm;
	fake_calls++;
	seen = *dev;
	snprintf(seen_guest, sizeof(seen_guest), "%s", dev->guest_bdf);
	memcpy(seen_event, dev->event, dev->nr_vectors * sizeof(*seen_event));
	if (line)
		snprintf(line, size, "fake line");
	if (json)
		fputs("{\"fake\":true}", json);
	for (unsigned int i = 0; verdict && i < dev->nr_vectors; i++) {
		verdict[i].status = i ? MSI_VERDICT_SOFTWARE : MSI_VERDICT_DIRECT;
		snprintf(verdict[i].why, sizeof(verdict[i].why), "fake %u", i);
	}
	return 0;
}

static struct vfio_pci *fake_vf(struct vfio_container *c, const struct arch_ops *arch)
{
	struct vfio_pci *v = calloc(1, sizeof(*v));

	v->c = c;
	v->arch = arch;
	snprintf(v->bdf, sizeof(v->bdf), BDF);
	v->pci.devfn = 2 << 3;
	v->msix_nr = 2;
	pthread_mutex_init(&v->msix.lock, NULL);
	for (unsigned int i = 0; i < 2; i++) {
		v->msix.vec[i].route.irqfd = v->msix.vec[i].route.routed = true;
		v->msix.vec[i].route.data = 0x20 + i;
	}
	return v;
}

TEST(vfio_report_goes_through_msi_report)
{
	const struct arch_ops arch = { .name = "fake", .msi_report = fake_msi_report };
	struct vm vm = { .fd = -1 };
	struct vfio_container c = { .vm = &vm };
	struct vfio_pci *v = fake_vf(&c, &arch);
	char line[64], *j = NULL;
	size_t n = 0;

	fake_calls = 0;
	vfio_pci_vlpi_line(v, 5, line, sizeof(line));
	EXPECT_STREQ("fake line", line);
	EXPECT_EQ(1, fake_calls);
	EXPECT_STREQ("00:02.0", seen_guest);
	EXPECT_FALSE(seen.msi);
	EXPECT_EQ(2, seen.nr_vectors);
	EXPECT_EQ(5, seen.vm_vectors);
	EXPECT_EQ(0x20, seen_event[0]);
	EXPECT_EQ(0x21, seen_event[1]);
	EXPECT_EQ(0, v->nr_verdict) TH_LOG("only the report a tick takes is kept");

	FILE *m = open_memstream(&j, &n);

	vfio_pci_vlpi_json(v, 5, m);
	fclose(m);
	EXPECT_STREQ("{\"fake\":true}", j);
	free(j);

	/* the tick's report, once the live vectors held for a second, keeps the verdicts */
	vfio_pci_report_tick(v, 2, 10.0);
	vfio_pci_report_tick(v, 2, 11.5);
	EXPECT_EQ(3, fake_calls);
	ASSERT_EQ(2, v->nr_verdict);
	EXPECT_EQ(MSI_VERDICT_DIRECT, v->verdict[0].status);
	EXPECT_STREQ("fake 1", v->verdict[1].why);
	EXPECT_STREQ("fake line", v->report);
	free(v);
}

/* No msi_report (x86): the host-only report; no vectors enabled: the same words either way. */
TEST(vfio_report_without_msi_report)
{
	const struct arch_ops arch = { .name = "fake" };
	struct vm vm = { .fd = -1 };
	struct vfio_container c = { .vm = &vm };
	struct vfio_pci *v = fake_vf(&c, &arch);
	char line[256], *j = NULL;
	size_t n = 0;

	fake_calls = 0;
	vfio_pci_vlpi_line(v, 2, line, sizeof(line));
	EXPECT_EQ(0, strncmp(line, "vfio " BDF " -> 00:02.0:", strlen("vfio " BDF " -> 00:02.0:"))) TH_LOG("%s", line);
	EXPECT_EQ(0, fake_calls);
	v->msix_nr = 0;
	vfio_pci_vlpi_line(v, 2, line, sizeof(line));
	EXPECT_STREQ("vfio " BDF ": the guest enabled no MSI or MSI-X vectors", line);
	FILE *m = open_memstream(&j, &n);

	vfio_pci_vlpi_json(v, 2, m);
	fclose(m);
	EXPECT_STREQ("{\"bdf\":\"" BDF "\",\"vectors\":[]}", j);
	free(j);
	free(v);
}

TEST_HARNESS_MAIN
