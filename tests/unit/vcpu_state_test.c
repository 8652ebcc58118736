// SPDX-License-Identifier: MIT
/*
 * Each vCPU's halt state (vmm/vcpu_state.h), its pure parts: the host's trap policy from the
 * command line, the thread's counters from /proc texts, the verdict, the doorbell block of a
 * /proc/interrupts text, the exit summary's line and the JSON (read back with json_parse).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "core/json.h"
#include "core/vcpu.h"
#include "vmm/board.h"
#include "vmm/vcpu_state.h"

TEST(cmdline_policy)
{
	static const struct {
		const char *cmdline;
		enum hp_trap wfi, wfe;
	} c[] = {
		{ "", HP_TRAP_DEFAULT, HP_TRAP_DEFAULT },
		{ "root=/dev/vda console=ttyAMA0\n", HP_TRAP_DEFAULT, HP_TRAP_DEFAULT },
		{ "kvm-arm.wfi_trap_policy=notrap\n", HP_TRAP_NOTRAP, HP_TRAP_DEFAULT },
		{ "ro kvm-arm.wfi_trap_policy=trap kvm-arm.wfe_trap_policy=notrap\n", HP_TRAP_TRAP, HP_TRAP_NOTRAP },
		/* the last occurrence wins, as the kernel's parser has it */
		{ "kvm-arm.wfi_trap_policy=trap kvm-arm.wfi_trap_policy=notrap", HP_TRAP_NOTRAP, HP_TRAP_DEFAULT },
		/* a value the kernel refuses, a key that only ends like it, an empty value */
		{ "kvm-arm.wfi_trap_policy=sometimes", HP_TRAP_OTHER, HP_TRAP_DEFAULT },
		{ "xkvm-arm.wfi_trap_policy=notrap", HP_TRAP_DEFAULT, HP_TRAP_DEFAULT },
		{ "kvm-arm.wfi_trap_policy= quiet", HP_TRAP_OTHER, HP_TRAP_DEFAULT },
		{ "kvm-arm.wfi_trap_policy=notrapped", HP_TRAP_OTHER, HP_TRAP_DEFAULT },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		enum hp_trap wfi, wfe;

		vcpu_state_parse_cmdline(c[i].cmdline, &wfi, &wfe);
		EXPECT_EQ(c[i].wfi, wfi) TH_LOG("'%s'", c[i].cmdline);
		EXPECT_EQ(c[i].wfe, wfe) TH_LOG("'%s'", c[i].cmdline);
	}
	enum hp_trap wfi = HP_TRAP_TRAP, wfe = HP_TRAP_TRAP;

	vcpu_state_parse_cmdline(NULL, &wfi, &wfe); /* unreadable: the default */
	EXPECT_EQ(HP_TRAP_DEFAULT, wfi);
	EXPECT_EQ(HP_TRAP_DEFAULT, wfe);
}

static const char status_text[] = "Name:\tvmm-vcpu\nState:\tS (sleeping)\nTgid:\t4242\n"
				  "Cpus_allowed_list:\t0-7\nvoluntary_ctxt_switches:\t1500\n"
				  "nonvoluntary_ctxt_switches:\t12\n";

TEST(thread_counters)
{
	struct vcpu_thread_stat t;
	/* a name with spaces and a parenthesis: fields count from its last ')' */
	char stat[512] = "4243 (vmm v) cpu) S 1";

	for (int f = 5; f <= 38; f++)
		strcat(stat, " 0");
	strcat(stat, " 3 0 0\n"); /* field 39, processor */
	vcpu_state_parse_thread(status_text, "2000000000 5000000 1600\n", stat, &t);
	EXPECT_EQ(1500, t.voluntary);
	EXPECT_EQ(12, t.preempted);
	EXPECT_EQ(2000000000, t.run_ns);
	EXPECT_EQ(5000000, t.wait_ns);
	EXPECT_EQ(3, t.cpu);
	EXPECT_EQ(1, vcpu_state_alone(&t)) TH_LOG("waited 0.25%% of its run");

	t.wait_ns = 20000001;
	EXPECT_EQ(0, vcpu_state_alone(&t)) TH_LOG("waited over 1%% of its run");

	/* nothing readable (the thread has ended) */
	vcpu_state_parse_thread(NULL, NULL, NULL, &t);
	EXPECT_EQ(-1, t.voluntary);
	EXPECT_EQ(-1, t.preempted);
	EXPECT_EQ(-1, t.run_ns);
	EXPECT_EQ(-1, t.cpu);
	EXPECT_EQ(-1, vcpu_state_alone(&t));
}

TEST(thread_counters_hostile)
{
	struct vcpu_thread_stat t;

	/* overflow, signs, garbage, a missing value, a truncated stat: each stays -1 */
	vcpu_state_parse_thread("voluntary_ctxt_switches:\t99999999999999999999999\n"
				"nonvoluntary_ctxt_switches:\t-4\nvoluntary_ctxt_switches:\n",
				"12x 5\n", "1 (no close paren S 1 2 3", &t);
	EXPECT_EQ(-1, t.voluntary);
	EXPECT_EQ(-1, t.preempted);
	EXPECT_EQ(-1, t.run_ns);
	EXPECT_EQ(-1, t.wait_ns);
	EXPECT_EQ(-1, t.cpu);
	vcpu_state_parse_thread("nonvoluntary_ctxt_switches: 9223372036854775807\n", "5\n",
				"1 (a) S 1 2 3 99999999999", &t);
	EXPECT_EQ(INT64_MAX, t.preempted);
	EXPECT_EQ(-1, t.run_ns) TH_LOG("a schedstat with one field");
	EXPECT_EQ(-1, t.cpu);
	/* never ran: alone cannot be told */
	t = (struct vcpu_thread_stat){ 0, 0, 0, 0, 0 };
	EXPECT_EQ(-1, vcpu_state_alone(&t));
}

TEST(verdict_table)
{
	static const struct {
		enum vcpu_halt_kind kind;
		enum hp_trap policy;
		bool no_hlt;
		int vlpis, alone;
		int64_t wfi;
		enum vcpu_verdict want;
	} c[] = {
		/* the policy decides alone */
		{ VCPU_HALT_WFI, HP_TRAP_TRAP, false, 4, 1, 0, VCPU_WFI_TRAPS },
		{ VCPU_HALT_WFI, HP_TRAP_TRAP, false, 0, -1, 715, VCPU_WFI_TRAPS },
		{ VCPU_HALT_WFI, HP_TRAP_NOTRAP, false, 0, 0, 0, VCPU_WFI_NOTRAP_POLICY },
		{ VCPU_HALT_WFI, HP_TRAP_NOTRAP, false, 4, 1, 0, VCPU_WFI_NOTRAP_POLICY },
		{ VCPU_HALT_WFI, HP_TRAP_NOTRAP, false, -1, -1, -1, VCPU_WFI_NOTRAP_POLICY },
		/* notrap on the command line, yet KVM counted WFI exits: the kernel ignored it */
		{ VCPU_HALT_WFI, HP_TRAP_NOTRAP, false, 0, 1, 3, VCPU_WFI_NOTRAP_IGNORED },
		/* the default policy: no vLPIs, WFI traps whatever else */
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, 0, 1, 0, VCPU_WFI_TRAPS },
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, 0, 0, 715, VCPU_WFI_TRAPS },
		/* vLPIs: alone clears the trap, shared keeps it */
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, 2, 1, 0, VCPU_WFI_LIKELY_NOTRAP },
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, 2, 1, 40, VCPU_WFI_LIKELY_NOTRAP },
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, 2, 0, 40, VCPU_WFI_TRAPS_SHARED },
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, 2, 0, 0, VCPU_WFI_TRAPS_SHARED },
		/* alone unknown (the thread ended): the exits decide */
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, 2, -1, 0, VCPU_WFI_LIKELY_NOTRAP },
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, 2, -1, -1, VCPU_WFI_LIKELY_NOTRAP },
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, 2, -1, 9, VCPU_WFI_TRAPS_AT_TIMES },
		/* vLPIs unknown (no debugfs) */
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, -1, 1, 9, VCPU_WFI_TRAPS },
		{ VCPU_HALT_WFI, HP_TRAP_DEFAULT, false, -1, 1, 0, VCPU_WFI_UNKNOWN },
		/* a value the kernel refuses leaves the default */
		{ VCPU_HALT_WFI, HP_TRAP_OTHER, false, 2, 1, 0, VCPU_WFI_LIKELY_NOTRAP },
		{ VCPU_HALT_WFI, HP_TRAP_OTHER, false, 0, 1, 0, VCPU_WFI_TRAPS },
		/* x86: HLT, whatever the WFI inputs */
		{ VCPU_HALT_HLT, HP_TRAP_NOTRAP, false, 2, 1, 0, VCPU_HLT_EXITS },
		{ VCPU_HALT_HLT, HP_TRAP_DEFAULT, true, -1, -1, -1, VCPU_NO_HLT_EXIT },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		EXPECT_EQ(c[i].want, vcpu_state_verdict(c[i].kind, c[i].policy, c[i].no_hlt, c[i].vlpis, c[i].alone, c[i].wfi))
			TH_LOG("case %zu", i);
	}
	for (int v = 0; v < VCPU_NR_VERDICTS; v++) {
		EXPECT_NE(0, strcmp("unknown", vcpu_verdict_name(v)));
		EXPECT_NE(0, strcmp("unknown", vcpu_verdict_text(v)));
	}
	EXPECT_STREQ("unknown", vcpu_verdict_name(VCPU_NR_VERDICTS));
}

/* Two VMs' blocks (IRQs 30-31, then 40-41), out of order, among other lines. */
static const char interrupts[] = "           CPU0       CPU1\n"
				 " 11:       9000       8000     GICv3  27 Level     arch_timer\n"
				 " 41:          5          2  GICv4-vpe   3 Edge      vcpu\n"
				 " 30:          1          0  GICv4-vpe   0 Edge      vcpu\n"
				 " 40:          7          0  GICv4-vpe   2 Edge      vcpu\n"
				 " 31:          0          0  GICv4-vpe   1 Edge      vcpu\n"
				 " 50:         10         20  ITS-PCI-MSIX-0000:00:13.0   0 Edge      vfio-msix[0](0000:00:13.0)\n"
				 "IPI0:       100        100       Rescheduling interrupts\n";

TEST(doorbell_block)
{
	struct proc_interrupts pi;
	long line_of[4];

	ASSERT_EQ(0, proc_interrupts_parse(interrupts, strlen(interrupts), &pi));
	vcpu_state_doorbells(&pi, 2, line_of);
	ASSERT_LE(0, line_of[0]);
	ASSERT_LE(0, line_of[1]);
	/* the newest block, in IRQ order: vCPU 0 is IRQ 40, vCPU 1 IRQ 41 */
	EXPECT_EQ(40, pi.line[line_of[0]].irq);
	EXPECT_EQ(41, pi.line[line_of[1]].irq);
	EXPECT_EQ(7, pi.line[line_of[0]].total);
	EXPECT_EQ(7, pi.line[line_of[1]].total);

	/* one vCPU: the newest doorbell */
	vcpu_state_doorbells(&pi, 1, line_of);
	EXPECT_EQ(41, pi.line[line_of[0]].irq);

	/* four: both blocks, oldest first */
	vcpu_state_doorbells(&pi, 4, line_of);
	EXPECT_EQ(30, pi.line[line_of[0]].irq);
	EXPECT_EQ(31, pi.line[line_of[1]].irq);
	EXPECT_EQ(40, pi.line[line_of[2]].irq);
	EXPECT_EQ(41, pi.line[line_of[3]].irq);
	proc_interrupts_free(&pi);

	/* fewer doorbells than vCPUs (or none: no GICv4): none is this VM's */
	static const char few[] = "  CPU0\n 30:  1  GICv4-vpe   0 Edge      vcpu\n";

	ASSERT_EQ(0, proc_interrupts_parse(few, strlen(few), &pi));
	line_of[0] = line_of[1] = 7;
	vcpu_state_doorbells(&pi, 2, line_of);
	EXPECT_EQ(-1, line_of[0]);
	EXPECT_EQ(-1, line_of[1]);
	proc_interrupts_free(&pi);
	vcpu_state_doorbells(NULL, 2, line_of);
	EXPECT_EQ(-1, line_of[0]);
}

/* Many doorbells in descending order: every one displaces the kept, the newest stay. */
TEST(doorbell_block_many)
{
	size_t cap = 1 << 20, n = 0;
	char *text = malloc(cap);
	struct proc_interrupts pi;
	long line_of[8];

	ASSERT_NE(NULL, text);
	n += (size_t)snprintf(text + n, cap - n, " CPU0\n");
	for (int irq = 2000; irq >= 1000; irq--)
		n += (size_t)snprintf(text + n, cap - n, " %d: %d GICv4-vpe %d Edge vcpu\n", irq, irq, irq);
	ASSERT_EQ(0, proc_interrupts_parse(text, n, &pi));
	vcpu_state_doorbells(&pi, 8, line_of);
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(1993 + i, pi.line[line_of[i]].irq);
	proc_interrupts_free(&pi);
	free(text);
}

static struct vcpu_state arm_state(void)
{
	return (struct vcpu_state){
		.vcpu = 0, .kind = VCPU_HALT_WFI, .wfi_policy = HP_TRAP_DEFAULT, .wfe_policy = HP_TRAP_DEFAULT,
		.since = "boot-end", .exits = 2000, .wfi_exits = 715, .hlt_exits = -1, .polls_tried = 715,
		.polls_ok = 124, .polls_invalid = 0, .vlpis = 0, .doorbell_irq = 40, .doorbells = 0,
		.thread = { 1500, 12, 2000000000, 5000000, 3 }, .alone = 1, .hw_ipi = -1, .pv_send_ipi = -1,
		.verdict = VCPU_WFI_TRAPS,
	};
}

TEST(summary_line)
{
	struct vcpu_state s = arm_state();
	char line[512];

	vcpu_state_line(&s, line, sizeof(line));
	EXPECT_STREQ("vcpu 0: WFI traps (wfi_exit_stat 715, policy default), vLPIs 0, doorbells 0, halt polls 124 ok / "
		     "591 failed, thread preempted 12 times, waited 5.0 ms for its CPU (alone, inferred)", line);

	/* the verdict's own parentheses take the detail; unknowns say so */
	s.vcpu = 3;
	s.vlpis = 2;
	s.wfi_exits = 0;
	s.polls_tried = s.polls_ok = -1;
	s.doorbells = -1;
	s.thread = (struct vcpu_thread_stat){ -1, -1, -1, -1, -1 };
	s.alone = -1;
	s.verdict = VCPU_WFI_LIKELY_NOTRAP;
	vcpu_state_line(&s, line, sizeof(line));
	EXPECT_STREQ("vcpu 3: WFI likely not trapped (alone with vLPIs: default policy; wfi_exit_stat 0, policy "
		     "default), vLPIs 2, doorbells n/a, halt polls n/a, thread not readable (ended)", line);

	/* x86 */
	s = (struct vcpu_state){ .vcpu = 1, .kind = VCPU_HALT_HLT, .exits = 900, .wfi_exits = -1, .hlt_exits = 512,
				 .polls_tried = 512, .polls_ok = 100, .polls_invalid = 2, .vlpis = -1, .doorbell_irq = -1,
				 .doorbells = -1, .thread = { 10, 0, 1000, 0, 0 }, .alone = 1, .hw_ipi = 1,
				 .pv_send_ipi = 1, .verdict = VCPU_HLT_EXITS };
	vcpu_state_line(&s, line, sizeof(line));
	EXPECT_STREQ("vcpu 1: HLT exits (halt_exits 512), IPIs by hardware (AVIC/IPIv), PV_SEND_IPI on, halt polls 100 "
		     "ok / 412 failed (2 of them invalid), thread preempted 0 times, waited 0.0 ms for its CPU (alone, "
		     "inferred)", line);
	s.verdict = VCPU_NO_HLT_EXIT;
	s.hlt_exits = 0;
	s.hw_ipi = s.pv_send_ipi = -1;
	vcpu_state_line(&s, line, sizeof(line));
	EXPECT_EQ(0, strncmp(line, "vcpu 1: no HLT exit (--no-hlt-exit; halt_exits 0), IPI path unknown, ", 69)) TH_LOG("%s", line);

	/* a short buffer: cut, terminated */
	s = arm_state();
	vcpu_state_line(&s, line, 20);
	EXPECT_EQ(19, strlen(line));
}

static char *json_of(const struct vcpu_state *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	vcpu_state_json_one(s, f);
	fclose(f);
	return buf;
}

/* The JSON parses, says what the line says, and reads back into the same line. */
static void round_trip(struct __test_metadata *_metadata, const struct vcpu_state *s)
{
	char *j = json_of(s), err[128], a[512], b[512];
	struct json root;
	struct vcpu_state back;

	ASSERT_NE(NULL, j);
	ASSERT_EQ(0, json_parse(j, strlen(j), &root, err, sizeof(err))) TH_LOG("%s: %s", err, j);
	ASSERT_EQ(0, vcpu_state_from_json(&root, &back));
	vcpu_state_line(s, a, sizeof(a));
	vcpu_state_line(&back, b, sizeof(b));
	EXPECT_STREQ(a, b);
	EXPECT_EQ(s->verdict, back.verdict);
	EXPECT_EQ(s->alone, back.alone);
	EXPECT_EQ(s->thread.cpu, back.thread.cpu);
	json_free(&root);
	free(j);
}

TEST(json)
{
	struct vcpu_state s = arm_state();
	char *j = json_of(&s), err[128];
	struct json root;

	ASSERT_NE(NULL, j);
	ASSERT_EQ(0, json_parse(j, strlen(j), &root, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ("wfi-traps", json_get(&root, "verdict")->str);
	EXPECT_STREQ("WFI traps", json_get(&root, "verdict_text")->str);
	EXPECT_STREQ("boot-end", json_get(&root, "since")->str);
	EXPECT_STREQ("default", json_get(&root, "wfi_trap_policy")->str);
	EXPECT_EQ(715, json_get(&root, "wfi_exits")->num);
	EXPECT_EQ(40, json_get(&root, "doorbell_irq")->num);
	EXPECT_EQ(12, json_get(json_get(&root, "thread"), "preempted")->num);
	EXPECT_EQ(JSON_BOOL, json_get(&root, "alone_inferred")->t);
	EXPECT_EQ(NULL, json_get(&root, "hlt_exits")) TH_LOG("arm64 has no HLT");
	json_free(&root);
	free(j);

	round_trip(_metadata, &s);
	s.thread = (struct vcpu_thread_stat){ -1, -1, -1, -1, -1 };
	s.alone = -1;
	s.vlpis = -1;
	s.verdict = VCPU_WFI_UNKNOWN;
	round_trip(_metadata, &s);
	s = (struct vcpu_state){ .vcpu = 5, .kind = VCPU_HALT_HLT, .no_hlt_exit = true, .since = "start", .exits = 1,
				 .wfi_exits = -1, .hlt_exits = 0, .polls_tried = 0, .polls_ok = 0, .polls_invalid = 0,
				 .vlpis = -1, .doorbell_irq = -1, .doorbells = -1, .thread = { 1, 2, 3, 4, 5 },
				 .alone = 0, .hw_ipi = 0, .pv_send_ipi = 1, .verdict = VCPU_NO_HLT_EXIT };
	round_trip(_metadata, &s);
}

TEST(json_from_hostile)
{
	static const char *const bad[] = {
		"[]", "{}", "{\"vcpu\":0}", "{\"vcpu\":-1,\"verdict\":\"wfi-traps\"}",
		"{\"vcpu\":0,\"verdict\":\"nonsense\"}", "{\"vcpu\":1e300,\"verdict\":\"wfi-traps\"}",
	};
	struct json root;
	struct vcpu_state s;
	char line[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, json_parse(bad[i], strlen(bad[i]), &root, NULL, 0));
		EXPECT_EQ(-EINVAL, vcpu_state_from_json(&root, &s)) TH_LOG("%s", bad[i]);
		json_free(&root);
	}
	EXPECT_EQ(-EINVAL, vcpu_state_from_json(NULL, &s));
	/* out-of-range, fractional and mistyped counts read as unknown */
	static const char odd[] = "{\"vcpu\":2,\"verdict\":\"wfi-traps\",\"wfi_exits\":1e30,\"vlpis\":2.5,"
				  "\"doorbells\":\"7\",\"halt_attempted_poll\":-3,\"thread\":[1],\"alone_inferred\":1}";

	ASSERT_EQ(0, json_parse(odd, strlen(odd), &root, NULL, 0));
	ASSERT_EQ(0, vcpu_state_from_json(&root, &s));
	EXPECT_EQ(-1, s.wfi_exits);
	EXPECT_EQ(-1, s.vlpis);
	EXPECT_EQ(-1, s.doorbells);
	EXPECT_EQ(-1, s.polls_tried);
	EXPECT_EQ(-1, s.thread.preempted);
	EXPECT_EQ(-1, s.alone);
	vcpu_state_line(&s, line, sizeof(line));
	EXPECT_STREQ("vcpu 2: WFI traps (wfi_exit_stat n/a, policy unknown), vLPIs unknown, doorbells n/a, halt polls "
		     "n/a, thread not readable (ended)", line);
	json_free(&root);
}

/* The reading, without KVM: a board whose one vCPU "runs" on this thread, with stand-in arch
 * operations; no stats open, so KVM's counts are unknown. */
static void three_vlpis(struct vm *vm, int *vlpis, int n)
{
	(void)vm;
	for (int i = 0; i < n; i++)
		vlpis[i] = 3;
}

static bool test_ipi(struct machine *m, struct arch_ipi_path *p)
{
	(void)m;
	*p = (struct arch_ipi_path){ .hw_ipi = true, .pv_send_ipi = false };
	return true;
}

static char *board_json(struct board *b)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputs("{\"x\":0", f); /* the member comes with its comma */
	vcpu_state_json(b, f);
	fputc('}', f);
	fclose(f);
	return buf;
}

TEST(read_without_kvm)
{
	struct board *b = calloc(1, sizeof(*b));
	struct vcpu *v = calloc(1, sizeof(*v));
	struct arch_ops arm = { .name = "test-arm", .vcpu_vlpis = three_vlpis };
	struct arch_ops x86 = { .name = "test-x86", .ipi_path = test_ipi };
	struct vcpu_state s[2];
	char *j, line[512];
	struct json root;

	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, v);
	v->id = 0;
	atomic_store(&v->tid, (int)gettid());
	b->vm.vcpus[0] = v;
	b->vm.nr_vcpus = 1;
	b->machine.arch = &arm;

	ASSERT_EQ(1, vcpu_state_read(b, s, 2, false));
	EXPECT_EQ(VCPU_HALT_WFI, s[0].kind);
	EXPECT_EQ(3, s[0].vlpis);
	EXPECT_EQ(-1, s[0].wfi_exits) TH_LOG("no stats open");
	EXPECT_LE(0, s[0].thread.preempted) TH_LOG("this thread's status is readable");
	EXPECT_LE(0, s[0].thread.voluntary);
	EXPECT_LE(0, s[0].thread.cpu);
	vcpu_state_line(&s[0], line, sizeof(line));
	EXPECT_EQ(0, strncmp(line, "vcpu 0: ", 8)) TH_LOG("%s", line);
	j = board_json(b);
	ASSERT_NE(NULL, j);
	ASSERT_EQ(0, json_parse(j, strlen(j), &root, NULL, 0)) TH_LOG("%s", j);
	EXPECT_EQ(1, json_get(&root, "vcpu_state")->n);
	json_free(&root);
	free(j);

	/* the thread has ended without saying (as vcpu_create leaves it): its counters are unknown */
	atomic_store(&v->tid, 0);
	atomic_store(&v->end_voluntary, -1);
	atomic_store(&v->end_preempted, -1);
	ASSERT_EQ(1, vcpu_state_read(b, s, 1, true));
	EXPECT_EQ(-1, s[0].thread.preempted);
	EXPECT_EQ(-1, s[0].alone);
	/* it said as it ended (vmm/run.c): those counts, "alone" still unknown */
	atomic_store(&v->end_voluntary, 40);
	atomic_store(&v->end_preempted, 7);
	ASSERT_EQ(1, vcpu_state_read(b, s, 1, true));
	EXPECT_EQ(7, s[0].thread.preempted);
	EXPECT_EQ(40, s[0].thread.voluntary);
	EXPECT_EQ(-1, s[0].alone);

	/* x86: HLT, the arch's IPI path, --no-hlt-exit from the spec; arch_priv must exist */
	b->machine.arch = &x86;
	b->spec.no_hlt_exit = true;
	ASSERT_EQ(1, vcpu_state_read(b, s, 1, false));
	EXPECT_EQ(VCPU_HALT_HLT, s[0].kind);
	EXPECT_EQ(VCPU_NO_HLT_EXIT, s[0].verdict);
	EXPECT_EQ(-1, s[0].hw_ipi) TH_LOG("no arch state: no decision");
	b->machine.arch_priv = b;
	ASSERT_EQ(1, vcpu_state_read(b, s, 1, false));
	EXPECT_EQ(1, s[0].hw_ipi);
	EXPECT_EQ(0, s[0].pv_send_ipi);
	EXPECT_EQ(-1, s[0].doorbells);
	free(v);
	free(b);
}

TEST_HARNESS_MAIN
