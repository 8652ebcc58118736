// SPDX-License-Identifier: MIT
/* Tracepoint format files (trace/tp_format.c): the texts Linux 6.12 prints under
 * /sys/kernel/tracing/events/SYS/NAME/format (the layouts follow the events' TP_STRUCT__entry; the
 * IDs differ per kernel build), the shapes other kernels print, and broken or hostile text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "trace/trace.h"

#define COMMON                                                                              \
	"format:\n"                                                                         \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"              \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"              \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"      \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                          \
	"\n"

static const char sched_switch[] =
	"name: sched_switch\n"
	"ID: 316\n" COMMON
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d "
	"next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | "
	"0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) "
	"- 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | "
	"0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, "
	"{ 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, "
	"{ 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & "
	"(((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | "
	"0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio\n";

static const char sched_waking[] =
	"name: sched_waking\n"
	"ID: 318\n" COMMON
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu\n";

static const char irq_handler_entry[] =
	"name: irq_handler_entry\n"
	"ID: 151\n" COMMON
	"\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"irq=%d name=%s\", REC->irq, __get_str(name)\n";

static const char kvm_vcpu_wakeup[] =
	"name: kvm_vcpu_wakeup\n"
	"ID: 1561\n" COMMON
	"\tfield:__u64 ns;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:bool waited;\toffset:16;\tsize:1;\tsigned:0;\n"
	"\tfield:bool valid;\toffset:17;\tsize:1;\tsigned:0;\n"
	"\n"
	"print fmt: \"%s time %lld ns, polling %s\", REC->waited ? \"wait\" : \"poll\", REC->ns, "
	"REC->valid ? \"valid\" : \"invalid\"\n";

static const char hrtimer_expire_entry[] =
	"name: hrtimer_expire_entry\n"
	"ID: 112\n" COMMON
	"\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:s64 now;\toffset:16;\tsize:8;\tsigned:1;\n"
	"\tfield:void * function;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"hrtimer=%p function=%ps now=%llu\", REC->hrtimer, REC->function, (unsigned long long) "
	"REC->now\n";

/* arm64's kvm_entry and kvm_wfx_arm64: unsigned long and bool */
static const char kvm_wfx_arm64[] =
	"name: kvm_wfx_arm64\n"
	"ID: 1583\n" COMMON
	"\tfield:unsigned long vcpu_pc;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:bool is_wfe;\toffset:16;\tsize:1;\tsigned:0;\n"
	"\n"
	"print fmt: \"guest executed wf%c at: 0x%016lx\", REC->is_wfe ? 'e' : 'i', REC->vcpu_pc\n";

struct parsed {
	struct tp_format fmt;
	char err[256];
	int r;
};

/* Parses s from a heap copy of exactly its length (no NUL after it: ASan sees any read past). */
static void parse_n(struct parsed *p, const char *s, size_t n)
{
	char *copy = malloc(n ? n : 1);

	memcpy(copy, s, n);
	p->err[0] = '\0';
	p->r = tp_format_parse(copy, n, &p->fmt, p->err, sizeof(p->err));
	free(copy);
}

static void parse(struct parsed *p, const char *s)
{
	parse_n(p, s, strlen(s));
}

static bool has(const char *s, const char *what)
{
	return strstr(s, what) != NULL;
}

TEST(sched_switch_as_6_12_prints_it)
{
	struct parsed p;
	const struct tp_field *f;

	parse(&p, sched_switch);
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_STREQ("sched_switch", p.fmt.name);
	EXPECT_EQ(316, p.fmt.id);
	ASSERT_EQ(11, p.fmt.nfields);
	EXPECT_STREQ("common_type", p.fmt.f[0].name);
	EXPECT_EQ(2, p.fmt.f[0].size);
	EXPECT_FALSE(p.fmt.f[0].is_signed);
	EXPECT_STREQ("common_pid", p.fmt.f[3].name);
	EXPECT_TRUE(p.fmt.f[3].is_signed);

	f = tp_field_find(&p.fmt, "prev_comm");
	ASSERT_NE(NULL, f);
	EXPECT_TRUE(f->is_array);
	EXPECT_EQ(8, f->offset);
	EXPECT_EQ(16, f->size);
	f = tp_field_find(&p.fmt, "prev_pid");
	ASSERT_NE(NULL, f);
	EXPECT_FALSE(f->is_array);
	EXPECT_TRUE(f->is_signed);
	EXPECT_EQ(24, f->offset);
	EXPECT_EQ(4, f->size);
	f = tp_field_find(&p.fmt, "prev_state");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(32, f->offset);
	EXPECT_EQ(8, f->size);
	EXPECT_TRUE(f->is_signed);
	f = tp_field_find(&p.fmt, "next_pid");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(56, f->offset);
	EXPECT_EQ(NULL, tp_field_find(&p.fmt, "next"));
	EXPECT_EQ(NULL, tp_field_find(&p.fmt, "next_pid "));
	EXPECT_EQ(NULL, tp_field_find(&p.fmt, "pid_t"));
	EXPECT_EQ(NULL, tp_field_find(&p.fmt, NULL));
	EXPECT_EQ(NULL, tp_field_find(NULL, "next_pid"));
}

TEST(sched_waking_and_kvm_wfx)
{
	struct parsed p;
	const struct tp_field *f;

	parse(&p, sched_waking);
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_STREQ("sched_waking", p.fmt.name);
	EXPECT_EQ(318, p.fmt.id);
	EXPECT_EQ(8, p.fmt.nfields);
	f = tp_field_find(&p.fmt, "pid");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(24, f->offset);
	f = tp_field_find(&p.fmt, "target_cpu");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(32, f->offset);
	EXPECT_EQ(4, f->size);
	EXPECT_TRUE(f->is_signed);

	parse(&p, kvm_wfx_arm64);
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	f = tp_field_find(&p.fmt, "vcpu_pc");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(8, f->size);
	EXPECT_FALSE(f->is_signed);
	f = tp_field_find(&p.fmt, "is_wfe");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(16, f->offset);
	EXPECT_EQ(1, f->size);
}

TEST(data_loc_is_an_array)
{
	struct parsed p;
	const struct tp_field *f;

	parse(&p, irq_handler_entry);
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_EQ(151, p.fmt.id);
	f = tp_field_find(&p.fmt, "irq");
	ASSERT_NE(NULL, f);
	EXPECT_FALSE(f->is_array);
	EXPECT_TRUE(f->is_signed);
	f = tp_field_find(&p.fmt, "name");
	ASSERT_NE(NULL, f);
	EXPECT_TRUE(f->is_array);
	EXPECT_EQ(12, f->offset);
	EXPECT_EQ(4, f->size);

	/* the older and the relative forms */
	parse(&p, "name: x\nID: 1\nformat:\n\tfield:__rel_loc char[] s;\toffset:8;\tsize:4;\tsigned:0;\n"
		  "\tfield:__data_loc u8[] b;\toffset:12;\tsize:4;\tsigned:0;\n"
		  "\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n");
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	ASSERT_EQ(3, p.fmt.nfields);
	EXPECT_STREQ("s", p.fmt.f[0].name);
	EXPECT_TRUE(p.fmt.f[0].is_array);
	EXPECT_STREQ("b", p.fmt.f[1].name);
	EXPECT_TRUE(p.fmt.f[1].is_array);
	EXPECT_STREQ("buf", p.fmt.f[2].name);
	EXPECT_TRUE(p.fmt.f[2].is_array);
	EXPECT_EQ(0, p.fmt.f[2].size);
}

TEST(kvm_vcpu_wakeup_and_hrtimer)
{
	struct parsed p;
	const struct tp_field *f;

	parse(&p, kvm_vcpu_wakeup);
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	f = tp_field_find(&p.fmt, "ns");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(8, f->offset);
	EXPECT_EQ(8, f->size);
	EXPECT_FALSE(f->is_signed);
	f = tp_field_find(&p.fmt, "waited");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(16, f->offset);
	EXPECT_EQ(1, f->size);

	parse(&p, hrtimer_expire_entry);
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_STREQ("hrtimer_expire_entry", p.fmt.name);
	f = tp_field_find(&p.fmt, "function");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(24, f->offset);
	EXPECT_EQ(8, f->size);
	EXPECT_FALSE(f->is_signed);
	EXPECT_FALSE(f->is_array);
	f = tp_field_find(&p.fmt, "now");
	ASSERT_NE(NULL, f);
	EXPECT_TRUE(f->is_signed);
	EXPECT_NE(NULL, tp_field_find(&p.fmt, "hrtimer"));
}

/* "void *function" without the kernel's space, "unsigned long long", "struct x *": the name is
 * the identifier at the end */
TEST(types_of_any_shape)
{
	struct parsed p;

	parse(&p, "name: t\nID: 7\nformat:\n"
		  "\tfield:void *function;\toffset:8;\tsize:8;\tsigned:0;\n"
		  "\tfield:unsigned long long v;\toffset:16;\tsize:8;\tsigned:0;\n"
		  "\tfield:const struct foo * p2;\toffset:24;\tsize:8;\tsigned:0;\n"
		  "\tfield:u64 ns;\toffset:32;\tsize:8;\tsigned:0;\n");
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	ASSERT_EQ(4, p.fmt.nfields);
	EXPECT_STREQ("function", p.fmt.f[0].name);
	EXPECT_STREQ("v", p.fmt.f[1].name);
	EXPECT_STREQ("p2", p.fmt.f[2].name);
	EXPECT_STREQ("ns", p.fmt.f[3].name);
}

/* 6.13's lazy preemption count, and common fields a kernel may not have */
TEST(other_common_fields)
{
	struct parsed p;

	parse(&p, "name: kvm_entry\nID: 1600\nformat:\n"
		  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		  "\tfield:unsigned char common_preempt_lazy_count;\toffset:8;\tsize:1;\tsigned:0;\n"
		  "\n"
		  "\tfield:unsigned long vcpu_pc;\toffset:16;\tsize:8;\tsigned:0;\n"
		  "\n"
		  "print fmt: \"PC: 0x%016lx\", REC->vcpu_pc\n");
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_EQ(6, p.fmt.nfields);
	EXPECT_NE(NULL, tp_field_find(&p.fmt, "common_preempt_lazy_count"));
	EXPECT_EQ(16, tp_field_find(&p.fmt, "vcpu_pc")->offset);

	parse(&p, "name: kvm_entry\nID: 1600\nformat:\n"
		  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		  "\tfield:unsigned long vcpu_pc;\toffset:8;\tsize:8;\tsigned:0;\n");
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_EQ(2, p.fmt.nfields);
	EXPECT_EQ(NULL, tp_field_find(&p.fmt, "common_pid"));
}

TEST(windows_line_ends_and_extra_space_change_nothing)
{
	struct parsed a, b;
	char crlf[4096], *o = crlf;

	parse(&a, sched_switch);
	ASSERT_EQ(0, a.r);
	for (const char *s = sched_switch; *s; s++) {
		if (*s == '\n')
			*o++ = '\r';
		if (*s == '\t')
			*o++ = ' ';
		*o++ = *s;
	}
	parse_n(&b, crlf, (size_t)(o - crlf));
	ASSERT_EQ(0, b.r) TH_LOG("%s", b.err);
	EXPECT_EQ(0, memcmp(&a.fmt, &b.fmt, sizeof(a.fmt)));

	parse(&b, "  name:   t  \r\n  ID:  42 \r\nformat:\r\n"
		  "   field:  int   x  ;   offset : 8 ;  size:  4;signed:1 ;   \r\n");
	ASSERT_EQ(0, b.r) TH_LOG("%s", b.err);
	EXPECT_STREQ("t", b.fmt.name);
	EXPECT_EQ(42, b.fmt.id);
	EXPECT_STREQ("x", b.fmt.f[0].name);
	EXPECT_EQ(8, b.fmt.f[0].offset);
	EXPECT_EQ(4, b.fmt.f[0].size);
	EXPECT_TRUE(b.fmt.f[0].is_signed);
}

/* a newer kernel's order or an item it adds: taken; the values stay strict */
TEST(items_in_any_order)
{
	struct parsed p;

	parse(&p, "name: t\nID: 7\nformat:\n"
		  "\tfield:int a;\tsigned:1;\toffset:8;\tsize:4;\n"
		  "\tfield:int b;\tsize:4;\talign:4;\tsigned:0;\toffset:12;\n");
	ASSERT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_EQ(8, p.fmt.f[0].offset);
	EXPECT_TRUE(p.fmt.f[0].is_signed);
	EXPECT_EQ(12, p.fmt.f[1].offset);
	EXPECT_FALSE(p.fmt.f[1].is_signed);

	static const char *const bad[] = {
		"\tfield:int a;\toffset:8;\tsize:4;\tsigned:2;\n",
		"\tfield:int a;\toffset:0x8;\tsize:4;\tsigned:1;\n",
		"\tfield:int a;\toffset:-8;\tsize:4;\tsigned:1;\n",
		"\tfield:int a;\toffset:+8;\tsize:4;\tsigned:1;\n",
		"\tfield:int a;\toffset:8 8;\tsize:4;\tsigned:1;\n",
		"\tfield:int a;\toffset:;\tsize:4;\tsigned:1;\n",
		"\tfield:int a;\toffset:8;\toffset:8;\tsize:4;\tsigned:1;\n",
		"\tfield:int a;\toffset:8;\tsize4;\tsigned:1;\n",
		"\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\tjunk\n",
		"\tfield:int a;\toffset:99999999999999999999999;\tsize:4;\tsigned:1;\n",
		"\tfield:a;\toffset:8;\tsize:4;\tsigned:1;\n",
		"\tfield:int;\toffset:8;\tsize:4;\tsigned:1;\n",
		"\tfield:int *;\toffset:8;\tsize:4;\tsigned:1;\n",
		"\tfield:;\toffset:8;\tsize:4;\tsigned:1;\n",
		"\tfield:int a];\toffset:8;\tsize:4;\tsigned:1;\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];

		snprintf(text, sizeof(text), "name: t\nID: 7\nformat:\n%s", bad[i]);
		parse(&p, text);
		EXPECT_EQ(-EINVAL, p.r) TH_LOG("taken: %s", bad[i]);
		EXPECT_NE('\0', p.err[0]);
	}
}

TEST(no_id_no_name_no_fields)
{
	struct parsed p;

	parse(&p, "name: sched_switch\nformat:\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n");
	EXPECT_EQ(-EINVAL, p.r);
	EXPECT_TRUE(has(p.err, "no ID")) TH_LOG("%s", p.err);

	parse(&p, "ID: 3\nformat:\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n");
	EXPECT_EQ(-EINVAL, p.r);
	EXPECT_TRUE(has(p.err, "no name")) TH_LOG("%s", p.err);

	parse(&p, "name: x\nID: 3\nformat:\n\nprint fmt: \"\"\n");
	EXPECT_EQ(-EINVAL, p.r);
	EXPECT_TRUE(has(p.err, "no field")) TH_LOG("%s", p.err);

	parse(&p, "");
	EXPECT_EQ(-EINVAL, p.r);
	EXPECT_EQ(-EINVAL, tp_format_parse(NULL, 0, &p.fmt, p.err, sizeof(p.err)));

	static const char *const ids[] = { "ID: 0x13c", "ID: -1", "ID: 4294967296", "ID:", "ID: 3 4" };
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		char text[256];

		snprintf(text, sizeof(text), "name: x\n%s\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n",
			 ids[i]);
		parse(&p, text);
		EXPECT_EQ(-EINVAL, p.r) TH_LOG("taken: %s", ids[i]);
	}
	parse(&p, "name: x\nID: 4294967295\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n");
	EXPECT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_EQ(4294967295u, p.fmt.id);

	/* twice */
	parse(&p, "name: x\nID: 1\nID: 2\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n");
	EXPECT_EQ(-EINVAL, p.r);
	parse(&p, "name: x\nname: y\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n");
	EXPECT_EQ(-EINVAL, p.r);
	parse(&p, "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
		  "\tfield:long a;\toffset:16;\tsize:8;\tsigned:1;\n");
	EXPECT_EQ(-EINVAL, p.r);
	EXPECT_TRUE(has(p.err, "'a'")) TH_LOG("%s", p.err);
	parse(&p, "name: two words\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n");
	EXPECT_EQ(-EINVAL, p.r);
}

/* A read of the file cut anywhere inside a field line (after "field:") is refused; cut at a line's
 * end it is a shorter, valid format. */
TEST(a_field_line_cut_short)
{
	const char *line = strstr(sched_switch, "\tfield:pid_t prev_pid;");
	size_t start = (size_t)(line - sched_switch), end = (size_t)(strchr(line, '\n') - sched_switch);
	struct parsed p;

	for (size_t cut = start + strlen("\tfield:"); cut < end; cut++) {
		parse_n(&p, sched_switch, cut);
		EXPECT_EQ(-EINVAL, p.r) TH_LOG("taken when cut at %zu: %.*s", cut, (int)(cut - start), line);
	}
	parse_n(&p, sched_switch, end);
	EXPECT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_EQ(6, p.fmt.nfields);
	parse_n(&p, sched_switch, end + 1);
	EXPECT_EQ(0, p.r) TH_LOG("%s", p.err);

	/* the message says where */
	parse(&p, "name: x\nID: 1\nformat:\n\tfield:pid_t prev_pid;\toffset:24;\n");
	EXPECT_EQ(-EINVAL, p.r);
	EXPECT_TRUE(has(p.err, "line 4")) TH_LOG("%s", p.err);
	EXPECT_TRUE(has(p.err, "prev_pid")) TH_LOG("%s", p.err);
	EXPECT_TRUE(has(p.err, "size")) TH_LOG("%s", p.err);

	/* cut before the ID */
	parse_n(&p, sched_switch, 20);
	EXPECT_EQ(-EINVAL, p.r);
	EXPECT_TRUE(has(p.err, "no ID")) TH_LOG("%s", p.err);
}

TEST(offset_plus_size_up_to_65535)
{
	struct parsed p;

	parse(&p, "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:65531;\tsize:4;\tsigned:1;\n");
	EXPECT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_EQ(65531, p.fmt.f[0].offset);
	parse(&p, "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:65532;\tsize:4;\tsigned:1;\n");
	EXPECT_EQ(-EINVAL, p.r);
	EXPECT_TRUE(has(p.err, "65535")) TH_LOG("%s", p.err);
	parse(&p, "name: x\nID: 1\nformat:\n\tfield:char a[65536];\toffset:0;\tsize:65536;\tsigned:0;\n");
	EXPECT_EQ(-EINVAL, p.r);
	parse(&p, "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:70000;\tsize:4;\tsigned:1;\n");
	EXPECT_EQ(-EINVAL, p.r);
	parse(&p, "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0000000000000000000008;\tsize:4;\tsigned:1;\n");
	EXPECT_EQ(0, p.r) TH_LOG("leading zeros are still decimal: %s", p.err);
}

static size_t fields_text(char *buf, size_t cap, unsigned int n)
{
	size_t o = (size_t)snprintf(buf, cap, "name: many\nID: 9\nformat:\n");

	for (unsigned int i = 0; i < n && o < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "\tfield:int f%u;\toffset:%u;\tsize:4;\tsigned:1;\n", i, 4 * i);
	return o < cap ? o : cap - 1;
}

TEST(at_most_tp_fields_max_fields)
{
	char text[16384];
	struct parsed p;

	parse_n(&p, text, fields_text(text, sizeof(text), TP_FIELDS_MAX));
	EXPECT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_EQ(TP_FIELDS_MAX, p.fmt.nfields);
	parse_n(&p, text, fields_text(text, sizeof(text), TP_FIELDS_MAX + 1));
	EXPECT_EQ(-EINVAL, p.r);
	EXPECT_TRUE(has(p.err, "fields")) TH_LOG("%s", p.err);
	parse_n(&p, text, fields_text(text, sizeof(text), 200));
	EXPECT_EQ(-EINVAL, p.r);
}

/* names that do not fit are refused, not cut (a cut name would match another field) */
TEST(long_names)
{
	char name[80], text[512];
	struct parsed p;

	memset(name, 'n', 70);
	name[70] = '\0';
	snprintf(text, sizeof(text), "name: %s\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n", name);
	parse(&p, text);
	EXPECT_EQ(-EINVAL, p.r);
	snprintf(text, sizeof(text), "name: x\nID: 1\nformat:\n\tfield:int %s;\toffset:8;\tsize:4;\tsigned:1;\n", name);
	parse(&p, text);
	EXPECT_EQ(-EINVAL, p.r);
	EXPECT_TRUE(has(p.err, "63")) TH_LOG("%s", p.err);

	name[TP_NAME_MAX] = '\0'; /* 64: one too many */
	snprintf(text, sizeof(text), "name: x\nID: 1\nformat:\n\tfield:int %s;\toffset:8;\tsize:4;\tsigned:1;\n", name);
	parse(&p, text);
	EXPECT_EQ(-EINVAL, p.r);
	name[TP_NAME_MAX - 1] = '\0'; /* 63: fits */
	snprintf(text, sizeof(text), "name: %s\nID: 1\nformat:\n\tfield:int %s;\toffset:8;\tsize:4;\tsigned:1;\n",
		 name, name);
	parse(&p, text);
	EXPECT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_STREQ(name, p.fmt.name);
	EXPECT_STREQ(name, p.fmt.f[0].name);
}

/* the print fmt is C text: whatever it holds is not read as lines of the format */
TEST(print_fmt_ends_the_fields)
{
	struct parsed p;

	parse(&p, "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n\n"
		  "print fmt: \"a=%d\", REC->a\n\tfield:int b;\toffset:;\nID: 2\n\x01\x02\xff");
	EXPECT_EQ(0, p.r) TH_LOG("%s", p.err);
	EXPECT_EQ(1, p.fmt.nfields);
	EXPECT_EQ(1, p.fmt.id);
}

/* embedded NULs, bytes above 0x7f, no newline at all: refused or parsed, never a crash */
TEST(binary_garbage)
{
	/* mostly the format's own alphabet, so that lines get somewhere */
	static const char alpha[] = "field:offsetsizeigned;ID:name[] _\t\n0123456789";
	struct parsed p;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char buf[600];

	parse_n(&p, "name: x\0\nID: 1\n", 15);
	EXPECT_EQ(-EINVAL, p.r);
	for (int round = 0; round < 2000; round++) {
		size_t n = (size_t)(x % sizeof(buf));

		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[i] = x & 1 ? alpha[(x >> 8) % (sizeof(alpha) - 1)] : (char)(x >> 16);
		}
		parse_n(&p, buf, n);
		if (p.r == 0) {
			ASSERT_LE(p.fmt.nfields, TP_FIELDS_MAX);
		} else {
			ASSERT_EQ(-EINVAL, p.r);
		}
	}
	/* no room for the message: still refused */
	EXPECT_EQ(-EINVAL, tp_format_parse("x", 1, &p.fmt, NULL, 0));
	EXPECT_EQ(-EINVAL, tp_format_parse("x", 1, &p.fmt, p.err, 1));
	EXPECT_STREQ("", p.err);
}

TEST(field_reads_sign_extend)
{
	const struct tp_field s1 = { .name = "a", .offset = 0, .size = 1, .is_signed = true };
	const struct tp_field u1 = { .name = "a", .offset = 0, .size = 1 };
	const struct tp_field s2 = { .name = "a", .offset = 2, .size = 2, .is_signed = true };
	const struct tp_field u2 = { .name = "a", .offset = 2, .size = 2 };
	const struct tp_field s4 = { .name = "a", .offset = 4, .size = 4, .is_signed = true };
	const struct tp_field u4 = { .name = "a", .offset = 4, .size = 4 };
	const struct tp_field s8 = { .name = "a", .offset = 8, .size = 8, .is_signed = true };
	const struct tp_field u8 = { .name = "a", .offset = 8, .size = 8 };
	uint8_t raw[17];
	int64_t v;
	uint16_t x2 = 0xfffe;
	uint32_t x4 = 0x80000000u;
	uint64_t x8 = 0xffffffff81234560ull;

	memset(raw, 0, sizeof(raw));
	raw[0] = 0xff;
	memcpy(raw + 2, &x2, 2);
	memcpy(raw + 4, &x4, 4);
	memcpy(raw + 8, &x8, 8);
	ASSERT_EQ(0, tp_field_read(&s1, raw, sizeof(raw), &v));
	EXPECT_EQ(-1, v);
	ASSERT_EQ(0, tp_field_read(&u1, raw, sizeof(raw), &v));
	EXPECT_EQ(255, v);
	ASSERT_EQ(0, tp_field_read(&s2, raw, sizeof(raw), &v));
	EXPECT_EQ(-2, v);
	ASSERT_EQ(0, tp_field_read(&u2, raw, sizeof(raw), &v));
	EXPECT_EQ(0xfffe, v);
	ASSERT_EQ(0, tp_field_read(&s4, raw, sizeof(raw), &v));
	EXPECT_EQ(INT32_MIN, v);
	ASSERT_EQ(0, tp_field_read(&u4, raw, sizeof(raw), &v));
	EXPECT_EQ(0x80000000ll, v);
	ASSERT_EQ(0, tp_field_read(&s8, raw, sizeof(raw), &v));
	EXPECT_EQ(x8, (uint64_t)v);
	ASSERT_EQ(0, tp_field_read(&u8, raw, sizeof(raw), &v));
	EXPECT_EQ(x8, (uint64_t)v) TH_LOG("an address keeps its bits");

	/* unaligned in the buffer */
	memcpy(raw + 1, &x4, 4);
	const struct tp_field odd = { .name = "a", .offset = 1, .size = 4, .is_signed = true };
	ASSERT_EQ(0, tp_field_read(&odd, raw, sizeof(raw), &v));
	EXPECT_EQ(INT32_MIN, v);
}

TEST(field_reads_stay_in_bounds)
{
	uint8_t raw[16] = { 0 };
	const struct tp_field end = { .name = "a", .offset = 8, .size = 8 };
	const struct tp_field past = { .name = "a", .offset = 9, .size = 8 };
	const struct tp_field far = { .name = "a", .offset = 65531, .size = 4 };
	const struct tp_field three = { .name = "a", .offset = 0, .size = 3 };
	const struct tp_field zero = { .name = "a", .offset = 0, .size = 0 };
	const struct tp_field arr = { .name = "a", .offset = 0, .size = 4, .is_array = true };
	int64_t v = 42;

	EXPECT_EQ(0, tp_field_read(&end, raw, 16, &v));
	EXPECT_EQ(-1, tp_field_read(&end, raw, 15, &v));
	EXPECT_EQ(-1, tp_field_read(&past, raw, 16, &v));
	EXPECT_EQ(-1, tp_field_read(&far, raw, 16, &v));
	EXPECT_EQ(-1, tp_field_read(&three, raw, 16, &v));
	EXPECT_EQ(-1, tp_field_read(&zero, raw, 16, &v));
	EXPECT_EQ(-1, tp_field_read(&arr, raw, 16, &v));
	EXPECT_EQ(-1, tp_field_read(&end, raw, 0, &v));
	EXPECT_EQ(-1, tp_field_read(NULL, raw, 16, &v));
	EXPECT_EQ(-1, tp_field_read(&end, NULL, 16, &v));
}

/* the fields of a parsed format read from a record laid out as the kernel writes it */
TEST(reads_through_a_parsed_format)
{
	struct parsed p;
	uint8_t raw[64] = { 0 };
	int32_t prev = 1234, next = 0;
	int64_t state = 0x100, v; /* TASK_REPORT_MAX: preempted */

	parse(&p, sched_switch);
	ASSERT_EQ(0, p.r);
	memcpy(raw + 24, &prev, 4);
	memcpy(raw + 56, &next, 4);
	memcpy(raw + 32, &state, 8);
	ASSERT_EQ(0, tp_field_read(tp_field_find(&p.fmt, "prev_pid"), raw, sizeof(raw), &v));
	EXPECT_EQ(1234, v);
	ASSERT_EQ(0, tp_field_read(tp_field_find(&p.fmt, "prev_state"), raw, sizeof(raw), &v));
	EXPECT_EQ(0x100, v);
	ASSERT_EQ(0, tp_field_read(tp_field_find(&p.fmt, "next_pid"), raw, sizeof(raw), &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(-1, tp_field_read(tp_field_find(&p.fmt, "next_pid"), raw, 59, &v));
	EXPECT_EQ(-1, tp_field_read(tp_field_find(&p.fmt, "prev_comm"), raw, sizeof(raw), &v));
}

TEST_HARNESS_MAIN
