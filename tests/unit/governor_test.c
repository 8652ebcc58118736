// SPDX-License-Identifier: MIT
/*
 * What governs halting on arm64, decided from fake inputs: host command lines, vLPI counts, and
 * vgic-state fixtures recorded under GICv4 (three vLPIs over two vCPUs) and GICv3 (none).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halt_poll/halt_poll.h"
#include "kselftest_harness.h"
#include "tests/unit/fixture_file.h"
#include "tests/unit/json_valid.h"
#include "arm64/gic/vlpi.h"
#include "core/arch.h"
#include "core/vm.h"

#define FIX "tests/unit/fixtures/vlpi/"


TEST(cmdline)
{
	struct hp_host h;

	hp_host_parse_cmdline(&h, "console=ttyAMA0 kvm-arm.vgic_v4_enable=1 kvm-arm.wfi_trap_policy=notrap");
	EXPECT_EQ(HP_TRAP_NOTRAP, h.wfi);
	EXPECT_EQ(HP_TRAP_DEFAULT, h.wfe);
	EXPECT_EQ(1, h.vgic_v4);
	hp_host_parse_cmdline(&h, "kvm-arm.wfi_trap_policy=trap kvm-arm.wfe_trap_policy=bogus kvm-arm.vgic_v4_enable=0");
	EXPECT_EQ(HP_TRAP_TRAP, h.wfi);
	EXPECT_EQ(HP_TRAP_OTHER, h.wfe);
	EXPECT_EQ(0, h.vgic_v4);
	/* the last one wins; a key inside another word is not it */
	hp_host_parse_cmdline(&h, "kvm-arm.wfi_trap_policy=notrap xkvm-arm.wfi_trap_policy=trap kvm-arm.wfi_trap_policy=trap\n");
	EXPECT_EQ(HP_TRAP_TRAP, h.wfi);
	EXPECT_EQ(-1, h.vgic_v4);
	hp_host_parse_cmdline(&h, "");
	EXPECT_EQ(HP_TRAP_DEFAULT, h.wfi);
}

TEST(decision)
{
	struct hp_host h = { .have_params = true, .poll_ns = 200000 };
	char why[256];

	h.wfi = HP_TRAP_DEFAULT;
	EXPECT_EQ(HP_HALT_POLLS, hp_halting_of(&h, 500000, 0, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "polls up to 500000 ns"));
	EXPECT_EQ(HP_HALT_NO_POLL, hp_halting_of(&h, 0, 0, why, sizeof(why)));
	/* vLPIs under the default policy: no halts while alone, said instead of zeros */
	EXPECT_EQ(HP_HALT_NOT_WHEN_ALONE, hp_halting_of(&h, 500000, 3, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "3 vLPIs mapped")) TH_LOG("%s", why);
	EXPECT_NE(NULL, strstr(why, "halt polling never happens"));
	EXPECT_EQ(HP_HALT_POLLS, hp_halting_of(&h, 500000, -1, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "vLPIs unknown"));
	/* trap: vLPIs do not matter */
	h.wfi = HP_TRAP_TRAP;
	EXPECT_EQ(HP_HALT_POLLS, hp_halting_of(&h, 500000, 3, why, sizeof(why)));
	/* notrap: never, whatever the ceiling */
	h.wfi = HP_TRAP_NOTRAP;
	EXPECT_EQ(HP_HALT_NEVER, hp_halting_of(&h, 500000, 0, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "never"));
}

/* What KVM counted over the vLPI window, against the prediction: trapped WFIs with vLPIs mapped
 * must be said (the thread was not alone), not hidden behind the prediction. */
TEST(observation_against_prediction)
{
	char why[400];

	/* the lab's gic4 case: 7 WFIs in 8 s with vLPIs, 30/s outside: mostly not trapped */
	EXPECT_EQ(HP_OBS_WFI_RARE, hp_observed_of(HP_HALT_NOT_WHEN_ALONE, 1, 7, 8.0, 600, 20.0, why, sizeof(why)));
	EXPECT_STREQ("wfi-rarely-trapped", hp_observed_name(HP_OBS_WFI_RARE));
	EXPECT_NE(NULL, strstr(why, "KVM trapped only 7 WFIs in 8.0 s (0.9/s, against 30.0/s")) TH_LOG("%s", why);
	EXPECT_NE(NULL, strstr(why, "not alone")) TH_LOG("%s", why);
	/* as often as outside: the prediction did not hold, said so */
	EXPECT_EQ(HP_OBS_WFI_TRAPPED, hp_observed_of(HP_HALT_NOT_WHEN_ALONE, 3, 120, 4.0, 300, 10.0, why, sizeof(why)));
	EXPECT_STREQ("wfi-trapped", hp_observed_name(HP_OBS_WFI_TRAPPED));
	EXPECT_NE(NULL, strstr(why, "3 vLPIs mapped, yet KVM trapped 120 WFIs")) TH_LOG("%s", why);
	/* nothing outside to compare with: trapped, not "rare" */
	EXPECT_EQ(HP_OBS_WFI_TRAPPED, hp_observed_of(HP_HALT_NOT_WHEN_ALONE, 2, 1, 8.0, 0, 0, why, sizeof(why)));
	EXPECT_EQ(HP_OBS_NO_WFI_EXITS, hp_observed_of(HP_HALT_NOT_WHEN_ALONE, 1, 0, 5.0, 10, 2.0, why, sizeof(why)));
	EXPECT_STREQ("no-wfi-exits", hp_observed_name(HP_OBS_NO_WFI_EXITS));
	EXPECT_NE(NULL, strstr(why, "as predicted")) TH_LOG("%s", why);
	EXPECT_EQ(HP_OBS_WFI_TRAPPED, hp_observed_of(HP_HALT_NEVER, 0, 5, 1.0, 0, 0, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "not what its command line says")) TH_LOG("%s", why);
	/* polling predicted: trapped is what it should be, whatever the rates */
	EXPECT_EQ(HP_OBS_WFI_TRAPPED, hp_observed_of(HP_HALT_POLLS, 0, 7, 7.0, 1000, 1.0, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "as predicted")) TH_LOG("%s", why);
	EXPECT_EQ(HP_OBS_NO_WFI_EXITS, hp_observed_of(HP_HALT_POLLS, 0, 0, 1.0, 0, 0, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "never idled")) TH_LOG("%s", why);
}

TEST(vlpis_from_vgic_state)
{
	size_t len;
	char *t = fixture_slurp(FIX "vgic-state-gic4-vf.txt", &len);
	int n[3];

	ASSERT_GT(len, 0) TH_LOG("run from the repository top: %s missing", FIX);
	ASSERT_EQ(0, vlpi_count_per_vcpu(t, len, n, 3));
	EXPECT_EQ(2, n[0]); /* LPIs 8192 and 8194 target vCPU 0, 8193 vCPU 1 */
	EXPECT_EQ(1, n[1]);
	EXPECT_EQ(0, n[2]);
	free(t);
	t = fixture_slurp(FIX "vgic-state-gic3-vf.txt", &len);
	ASSERT_EQ(0, vlpi_count_per_vcpu(t, len, n, 2));
	EXPECT_EQ(0, n[0]); /* software-injected LPIs are not vLPIs */
	EXPECT_EQ(0, n[1]);
	free(t);
	EXPECT_GT(0, vlpi_count_per_vcpu(NULL, 0, n, 2));
	EXPECT_EQ(-1, n[0]);
}

TEST(report_lines_and_json)
{
	struct hp_host h = { .have_params = true, .poll_ns = 200000, .grow = 2, .grow_start = 10000, .shrink = 0 };
	int vlpis[2] = { 2, 0 };
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	h.vgic_v4 = 1;
	hp_governor_report(m, &h, 500000, vlpis, 2, false);
	hp_governor_report(m, &h, 500000, vlpis, 2, true);
	fclose(m);
	EXPECT_NE(NULL, strstr(out, "vmm: what governs halting: kvm halt_poll_ns 200000 (grow 2, grow_start 10000, "
				    "shrink 0), wfi_trap_policy default, wfe_trap_policy default, vgic_v4_enable 1\n"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "vmm: vcpu0 never-halts-when-alone: 2 vLPIs mapped")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "vmm: vcpu1 polls: WFI traps to KVM, which polls up to 500000 ns"));
	EXPECT_NE(NULL, strstr(out, "\"wfi_trap_policy\":\"default\",\"wfe_trap_policy\":\"default\",\"vgic_v4_enable\":true"));
	EXPECT_NE(NULL, strstr(out, "{\"vcpu\":0,\"vlpis\":2,\"halting\":\"never-halts-when-alone\",\"why\":\""));
	free(out);
}

/* An architecture with vLPIs, as arm64's vcpu_vlpis says them: vCPU 0 has 3, vCPU 1 none. */
static int fake_vlpi_calls;

static void fake_vcpu_vlpis(struct vm *vm, int *vlpis, int n)
{
	(void)vm;
	fake_vlpi_calls++;
	for (int i = 0; i < n; i++)
		vlpis[i] = i ? 0 : 3;
}

static char *governor_json(struct hp_run *r)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	hp_run_governor(r, f, true);
	fclose(f);
	return buf;
}

/* A run's governor report and vLPI window come from the architecture's vcpu_vlpis (core/arch.h),
 * not from the compiler's architecture (scripts/check-arch-neutral.sh covers halt_poll/): with
 * the op, per vCPU what its vLPIs mean; without it (x86, this build's or a table without one),
 * "null" and no window, and the op is never called. */
TEST(run_governor_from_the_arch_ops)
{
	static struct vm vm;
	static struct hp_run r;
	const struct arch_ops with = { .name = "fake", .vcpu_vlpis = fake_vcpu_vlpis }, without = { .name = "fake" };
	char *j;

	vm.nr_vcpus = 2;
	r.vm = &vm;
	pthread_mutex_init(&r.lock, NULL);
	r.ceiling_set = true;
	r.ceiling_ns = 50000;
	r.arch = &with;
	j = governor_json(&r);
	ASSERT_NE(NULL, j);
	EXPECT_TRUE(json_valid(j, strlen(j))) TH_LOG("%s", j);
	EXPECT_NE(NULL, strstr(j, "{\"vcpu\":0,\"vlpis\":3,")) TH_LOG("%s", j);
	EXPECT_NE(NULL, strstr(j, "{\"vcpu\":1,\"vlpis\":0,")) TH_LOG("%s", j);
	EXPECT_EQ(1, fake_vlpi_calls);
	free(j);
	for (int k = 0; k < 2; k++) {
		r.arch = k ? &without : NULL;
		j = governor_json(&r);
		ASSERT_NE(NULL, j);
		EXPECT_STREQ("null", j);
		free(j);
		r.have_start = true;
		hp_run_vlpi_window_start(&r);
		EXPECT_FALSE(r.have_win_from);
	}
	EXPECT_EQ(1, fake_vlpi_calls);
	/* this build's own table: x86 has no vLPIs, arm64 reads its vgic-state */
	r.arch = arch_native();
	EXPECT_NE(NULL, r.arch);
	EXPECT_EQ(!strcmp(r.arch->name, "arm64"), r.arch->vcpu_vlpis != NULL);
	pthread_mutex_destroy(&r.lock);
}

TEST_HARNESS_MAIN
