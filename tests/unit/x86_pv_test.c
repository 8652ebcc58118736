// SPDX-License-Identifier: MIT
/* The CPUID PV policy as a table: host evidence (AVIC, x2AVIC, APICv/IPIv, kernel version) and the
 * guest's APIC mode in, PV_SEND_IPI out; every knob forced on and off; the evidence parsers. */
#include <asm/kvm_para.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "x86/x86.h"

/* KVM_GET_SUPPORTED_CPUID 0x40000001 eax in the x86 lab (lab.md) and on kvm_pvm. */
#define LAB_EAX 0x01007efbu
#define BIT(n) (1u << (n))

enum { AMD = X86_KVM_AMD, INTEL = X86_KVM_INTEL, NONE = X86_KVM_NONE };
#define Y 1
#define N 0
#define U -1 /* absent or unreadable */

static const struct policy_case {
	const char *what;
	int vendor, major, minor;
	int avic, ipiv_amd, dmesg_avic; /* kvm_amd avic, enable_ipiv; "AVIC enabled" in the log */
	bool cpu_x2avic;
	int apicv, ipiv_intel;
	bool ipi_virt;
	bool xapic; /* the guest's APIC mode (--apic xapic) */
	bool want_pv_ipi, want_hw;
} cases[] = {
	/* what                                       vendor maj min avic ipv dmsg x2av apicv ipiv ipiv  xapic pv  hw */
	{ "AMD AVIC on, xAPIC guest",                  AMD,  6, 12, Y,   U,  U,   true,  U, U, false, true,  false, true },
	{ "AMD AVIC on + x2AVIC, x2APIC guest",        AMD,  6, 12, Y,   U,  U,   true,  U, U, false, false, true,  true },
	{ "AMD AVIC on, no x2AVIC, x2APIC guest",      AMD,  6, 12, Y,   U,  U,   false, U, U, false, false, true,  false },
	{ "AMD AVIC on, no x2AVIC, xAPIC guest",       AMD,  6, 12, Y,   U,  U,   false, U, U, false, true,  false, true },
	{ "AMD AVIC off, xAPIC guest",                 AMD,  6, 12, N,   U,  0,   true,  U, U, false, true,  true,  false },
	{ "AMD 5.15 x2AVIC CPU, x2APIC: no x2AVIC yet",AMD,  5, 15, Y,   U,  U,   true,  U, U, false, false, true,  false },
	{ "AMD 6.17 AVIC on, enable_ipiv=N",           AMD,  6, 17, Y,   N,  1,   true,  U, U, false, true,  true,  false },
	{ "AMD 6.17 AVIC on, enable_ipiv=Y",           AMD,  6, 17, Y,   Y,  1,   true,  U, U, false, true,  false, true },
	{ "AMD 6.18 avic=N auto, log says enabled",    AMD,  6, 18, N,   Y,  1,   true,  U, U, false, true,  false, true },
	{ "AMD 6.18 avic=N, log unreadable, x2AVIC",   AMD,  6, 18, N,   Y,  U,   true,  U, U, false, true,  false, true },
	{ "AMD 6.18 avic=N, log without it",           AMD,  6, 18, N,   Y,  0,   true,  U, U, false, true,  true,  false },
	{ "AMD 6.18 avic=N, no x2AVIC (pre-Zen4)",     AMD,  6, 18, N,   Y,  U,   false, U, U, false, true,  true,  false },
	{ "Intel APICv + IPIv, xAPIC guest",           INTEL,6, 12, U,   U,  U,   false, Y, Y, true,  true,  false, true },
	{ "Intel APICv + IPIv, x2APIC guest",          INTEL,6, 12, U,   U,  U,   false, Y, Y, true,  false, true,  true },
	{ "Intel APICv, enable_ipiv=N",                INTEL,6, 12, U,   U,  U,   false, Y, N, true,  true,  true,  false },
	{ "Intel APICv, no ipi_virt CPU",              INTEL,6, 12, U,   U,  U,   false, Y, Y, false, true,  true,  false },
	{ "Intel 5.15 APICv, no enable_ipiv param",    INTEL,5, 15, U,   U,  U,   false, Y, U, false, true,  true,  false },
	{ "Intel APICv off",                           INTEL,6, 12, U,   U,  U,   false, N, Y, true,  true,  true,  false },
	{ "neither module (kvm_pvm)",                  NONE, 6, 18, U,   U,  U,   false, U, U, false, true,  true,  false },
};

static struct x86_host_evidence evidence(const struct policy_case *c)
{
	return (struct x86_host_evidence){
		.vendor = c->vendor, .kernel_major = c->major, .kernel_minor = c->minor,
		.amd_avic = c->avic, .amd_force_avic = U, .amd_enable_ipiv = c->ipiv_amd,
		.cpu_avic = c->vendor == AMD, .cpu_x2avic = c->cpu_x2avic,
		.dmesg_avic = c->dmesg_avic, .dmesg_x2avic = c->dmesg_avic,
		.intel_apicv = c->apicv, .intel_ipiv = c->ipiv_intel, .cpu_ipi_virt = c->ipi_virt,
	};
}

TEST(pv_ipi_auto_table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct policy_case *c = &cases[i];
		struct x86_pv_config cfg = { .xapic = c->xapic };
		struct x86_host_evidence e = evidence(c);
		struct x86_pv_decision d;

		ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, true, &cfg, &e, &d));
		TH_LOG("%-44s pv-ipi=%-3s %s", c->what,
		       d.features & BIT(KVM_FEATURE_PV_SEND_IPI) ? "on" : "off", d.ipi_why);
		EXPECT_EQ(c->want_pv_ipi, !!(d.features & BIT(KVM_FEATURE_PV_SEND_IPI)));
		EXPECT_EQ(c->want_hw, d.hw_ipi);
		EXPECT_EQ(!c->xapic, d.x2apic);
		/* the line names the guest mode and the decision */
		EXPECT_NE(NULL, strstr(d.ipi_why, c->xapic ? "guest xAPIC" : "guest x2APIC"));
		EXPECT_NE(NULL, strstr(d.ipi_why, c->want_pv_ipi ? "-> pv-ipi on" : "-> pv-ipi off"));
		/* nothing else moves with pv-ipi */
		EXPECT_EQ(LAB_EAX & ~BIT(KVM_FEATURE_PV_SEND_IPI),
			  d.features & ~BIT(KVM_FEATURE_PV_SEND_IPI));
	}
}

/* Forced either way, pv-ipi is what --pv says whatever the host. */
TEST(pv_ipi_forced)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct x86_host_evidence e = evidence(&cases[i]);
		struct x86_pv_config on = { .xapic = cases[i].xapic }, off = on;
		struct x86_pv_decision d;

		on.knob[X86_PV_IPI] = X86_PV_ON;
		off.knob[X86_PV_IPI] = X86_PV_OFF;
		ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, true, &on, &e, &d));
		EXPECT_TRUE(d.features & BIT(KVM_FEATURE_PV_SEND_IPI));
		EXPECT_NE(NULL, strstr(d.ipi_why, "forced"));
		ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, true, &off, &e, &d));
		EXPECT_FALSE(d.features & BIT(KVM_FEATURE_PV_SEND_IPI));
	}
}

TEST(defaults_pass_what_kvm_offers)
{
	struct x86_host_evidence e = evidence(&cases[sizeof(cases) / sizeof(cases[0]) - 1]);
	struct x86_pv_config cfg = { 0 };
	struct x86_pv_decision d;

	ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, true, &cfg, &e, &d));
	EXPECT_EQ(LAB_EAX, d.features); /* MSI_EXT_DEST_ID is not in LAB_EAX: stays off */
	EXPECT_EQ(0, d.hints);
	EXPECT_TRUE(d.x2apic);
	/* KVM without x2APIC: the guest is xAPIC whatever --apic says */
	ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, false, &cfg, &e, &d));
	EXPECT_FALSE(d.x2apic);
	/* KVM without PV_SEND_IPI: off, and the line says why */
	ASSERT_EQ(0, x86_pv_decide(LAB_EAX & ~BIT(KVM_FEATURE_PV_SEND_IPI), 0, true, &cfg, &e, &d));
	EXPECT_FALSE(d.features & BIT(KVM_FEATURE_PV_SEND_IPI));
	EXPECT_NE(NULL, strstr(d.ipi_why, "KVM does not offer"));
}

/* Each knob on and off: its bit follows, and no other bit moves. */
TEST(each_knob_forced)
{
	struct x86_host_evidence e = evidence(&cases[sizeof(cases) / sizeof(cases[0]) - 1]);

	for (int k = 0; k < X86_PV_NR_KNOBS; k++) {
		bool hint = k == X86_PV_HINT_DEDICATED;
		struct x86_pv_config cfg = { .irqchip = X86_IRQCHIP_SPLIT };
		struct x86_pv_decision base, on, off;
		uint32_t bit = 0;

		ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, true, &cfg, &e, &base));
		cfg.knob[k] = X86_PV_ON;
		ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, true, &cfg, &e, &on));
		cfg.knob[k] = X86_PV_OFF;
		ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, true, &cfg, &e, &off));
		TH_LOG("%s: eax on 0x%08x off 0x%08x, edx on 0x%x off 0x%x", x86_pv_knob_name(k),
		       on.features, off.features, on.hints, off.hints);
		if (hint) {
			EXPECT_EQ(BIT(KVM_HINTS_REALTIME), on.hints);
			EXPECT_EQ(0, off.hints);
			EXPECT_EQ(on.features, off.features);
			continue;
		}
		bit = on.features ^ off.features;
		EXPECT_EQ(1, __builtin_popcount(bit));
		EXPECT_TRUE(on.features & bit);
		EXPECT_EQ(base.features & ~bit, off.features);
		EXPECT_EQ(on.hints, off.hints);
	}
}

TEST(no_hlt_exit_hides_pv_unhalt)
{
	struct x86_host_evidence e = evidence(&cases[0]);
	struct x86_pv_config cfg = { .no_hlt_exit = true };
	struct x86_pv_decision d;

	ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, true, &cfg, &e, &d));
	EXPECT_FALSE(d.features & BIT(KVM_FEATURE_PV_UNHALT));
	cfg.knob[X86_PV_UNHALT] = X86_PV_ON;
	EXPECT_EQ(-EINVAL, x86_pv_decide(LAB_EAX, 0, true, &cfg, &e, &d));
}

TEST(refusals)
{
	struct x86_host_evidence e = evidence(&cases[0]);
	struct x86_pv_config cfg = { 0 };
	struct x86_pv_decision d;

	/* msi-ext-dest-id needs the userspace IOAPIC */
	cfg.knob[X86_PV_MSI_EXT_DEST_ID] = X86_PV_ON;
	EXPECT_EQ(-EINVAL, x86_pv_decide(LAB_EAX, 0, true, &cfg, &e, &d));
	cfg.irqchip = X86_IRQCHIP_SPLIT;
	ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, true, &cfg, &e, &d));
	EXPECT_TRUE(d.features & BIT(KVM_FEATURE_MSI_EXT_DEST_ID));
	/* forcing on what KVM does not offer */
	cfg.knob[X86_PV_POLL_CONTROL] = X86_PV_ON;
	EXPECT_EQ(-EINVAL, x86_pv_decide(LAB_EAX & ~BIT(KVM_FEATURE_POLL_CONTROL), 0, true, &cfg,
					 &e, &d));
	/* not forced: silently absent */
	cfg.knob[X86_PV_POLL_CONTROL] = X86_PV_DEFAULT;
	ASSERT_EQ(0, x86_pv_decide(LAB_EAX & ~BIT(KVM_FEATURE_POLL_CONTROL), 0, true, &cfg, &e, &d));
	EXPECT_FALSE(d.features & BIT(KVM_FEATURE_POLL_CONTROL));
}

TEST(pv_option_parsing)
{
	struct x86_pv_config c = { 0 };

	ASSERT_EQ(0, x86_pv_parse(&c, "pv-ipi=off,hint-dedicated=on,poll-control=auto"));
	EXPECT_EQ(X86_PV_OFF, c.knob[X86_PV_IPI]);
	EXPECT_EQ(X86_PV_ON, c.knob[X86_PV_HINT_DEDICATED]);
	EXPECT_EQ(X86_PV_DEFAULT, c.knob[X86_PV_POLL_CONTROL]);
	ASSERT_EQ(0, x86_pv_parse(&c, "pv-ipi=auto"));
	EXPECT_EQ(X86_PV_DEFAULT, c.knob[X86_PV_IPI]);
	EXPECT_EQ(-EINVAL, x86_pv_parse(&c, ""));
	EXPECT_EQ(-EINVAL, x86_pv_parse(&c, "pv-ipi"));
	EXPECT_EQ(-EINVAL, x86_pv_parse(&c, "pv-ipi=yes"));
	EXPECT_EQ(-EINVAL, x86_pv_parse(&c, "kvm-pv-ipi=on"));
	EXPECT_EQ(-EINVAL, x86_pv_parse(&c, "pv-ipi=on,"));
	EXPECT_EQ(-EINVAL, x86_pv_parse(&c, "pv-ipi=onn"));
	for (int k = 0; k < X86_PV_NR_KNOBS; k++) {
		char s[64];

		snprintf(s, sizeof(s), "%s=on", x86_pv_knob_name(k));
		ASSERT_EQ(0, x86_pv_parse(&c, s));
		EXPECT_EQ(X86_PV_ON, c.knob[k]);
	}
}

static const char amd_cpuinfo[] =
	"processor\t: 0\nvendor_id\t: AuthenticAMD\n"
	"flags\t\t: fpu vme svm extapic npt lbrv avic v_vmsave_vmload vgif x2avic v_spec_ctrl\n"
	"bugs\t\t: sysret_ss_attrs\n";
static const char intel_cpuinfo[] =
	"processor\t: 0\nflags\t\t: fpu vme vmx x2apic\n"
	"vmx flags\t: vnmi preemption_timer posted_intr invvpid ept_x_only vid ipi_virt\n";

TEST(evidence_parsing)
{
	struct x86_host_files f = { .release = "6.18.44-fc-v782", .cpuinfo = amd_cpuinfo,
				    .dmesg = "[    1.0] SVM: kvm_amd: x2AVIC enabled\n",
				    .amd_avic = "N\n", .amd_enable_ipiv = "Y\n", .amd_loaded = true };
	struct x86_host_evidence e;

	x86_host_evidence_parse(&f, &e);
	EXPECT_EQ(X86_KVM_AMD, e.vendor);
	EXPECT_EQ(6, e.kernel_major);
	EXPECT_EQ(18, e.kernel_minor);
	EXPECT_EQ(0, e.amd_avic);
	EXPECT_EQ(-1, e.amd_force_avic); /* absent */
	EXPECT_EQ(1, e.amd_enable_ipiv);
	EXPECT_TRUE(e.cpu_avic);
	EXPECT_TRUE(e.cpu_x2avic);
	EXPECT_FALSE(e.cpu_ipi_virt);
	EXPECT_EQ(0, e.dmesg_avic); /* "x2AVIC enabled" is not "AVIC enabled" */
	EXPECT_EQ(1, e.dmesg_x2avic);
	f.dmesg = "[    1.0] SVM: kvm_amd: AVIC enabled\n[    1.0] kvm_amd: x2AVIC enabled\n";
	x86_host_evidence_parse(&f, &e);
	EXPECT_EQ(1, e.dmesg_avic);
	f.dmesg = NULL;
	x86_host_evidence_parse(&f, &e);
	EXPECT_EQ(-1, e.dmesg_avic);

	f = (struct x86_host_files){ .release = "5.19.0", .cpuinfo = intel_cpuinfo,
				     .intel_apicv = "Y\n", .intel_ipiv = "N\n", .intel_loaded = true };
	x86_host_evidence_parse(&f, &e);
	EXPECT_EQ(X86_KVM_INTEL, e.vendor);
	EXPECT_EQ(1, e.intel_apicv);
	EXPECT_EQ(0, e.intel_ipiv);
	EXPECT_TRUE(e.cpu_ipi_virt);
	EXPECT_FALSE(e.cpu_avic); /* "avic" is not in an Intel's flags (nor is "vid" "avic") */
	f.cpuinfo = "flags\t\t: fpu vmx\nvmx flags\t: vnmi ipi_virtx\n";
	x86_host_evidence_parse(&f, &e);
	EXPECT_FALSE(e.cpu_ipi_virt); /* whole words only */
}

static void put(const char *root, const char *path, const char *text)
{
	char full[512], dir[512];

	snprintf(full, sizeof(full), "%s%s", root, path);
	snprintf(dir, sizeof(dir), "%s", full);
	for (char *p = dir + strlen(root) + 1; (p = strchr(p, '/')); *p++ = '/') {
		*p = 0;
		mkdir(dir, 0755);
	}
	FILE *f = fopen(full, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The reader on a fake root: an AMD 6.18 host whose avic reads N while the log says enabled. */
TEST(evidence_from_a_root)
{
	char root[] = "/tmp/x86_pv_test.XXXXXX";
	struct x86_pv_config cfg = { .xapic = true };
	struct x86_host_evidence e;
	struct x86_pv_decision d;
	char cmd[600];
	FILE *out;
	char *text = NULL;
	size_t len = 0;

	ASSERT_NE(NULL, mkdtemp(root));
	put(root, "/sys/module/kvm_amd/parameters/avic", "N\n");
	put(root, "/sys/module/kvm_amd/parameters/enable_ipiv", "Y\n");
	put(root, "/proc/cpuinfo", amd_cpuinfo);
	put(root, "/dmesg", "[    0.9] kvm_amd: AVIC enabled\n[    0.9] kvm_amd: x2AVIC enabled\n");
	put(root, "/release", "6.18.2-amd64\n");
	x86_host_evidence_read(root, &e);
	EXPECT_EQ(X86_KVM_AMD, e.vendor);
	EXPECT_EQ(18, e.kernel_minor);
	EXPECT_EQ(0, e.amd_avic);
	EXPECT_EQ(-1, e.intel_apicv);
	EXPECT_EQ(1, e.dmesg_avic);
	ASSERT_EQ(0, x86_pv_decide(LAB_EAX, 0, true, &cfg, &e, &d));
	EXPECT_FALSE(d.features & BIT(KVM_FEATURE_PV_SEND_IPI));
	out = open_memstream(&text, &len);
	x86_pv_print(out, &d);
	fclose(out);
	TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "pv-ipi=off"));
	EXPECT_NE(NULL, strstr(text, "pv-unhalt=on"));
	EXPECT_NE(NULL, strstr(text, "kvm_amd avic=N"));
	EXPECT_NE(NULL, strstr(text, "'AVIC enabled'"));
	free(text);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	EXPECT_EQ(0, system(cmd));
}

TEST_HARNESS_MAIN
