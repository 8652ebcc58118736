// SPDX-License-Identifier: MIT
/* perf ring records into events (trace/tev.c): records built here as the kernel writes them for
 * events opened with sample_type IDENTIFIER | TID | TIME | CPU | RAW and sample_id_all, through
 * 6.12's formats (arm64's kvm events, x86's kvm_exit). */
#include <errno.h>
#include <linux/perf_event.h>
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

/* By kind; the print fmt lines are left out (the parser stops there). */
static const char *const formats[TEV_KIND_MAX] = {
	[TEV_KVM_ENTRY] = "name: kvm_entry\nID: 1600\n" COMMON
			  "\tfield:unsigned long vcpu_pc;\toffset:8;\tsize:8;\tsigned:0;\n",
	[TEV_KVM_EXIT] = "name: kvm_exit\nID: 1599\n" COMMON
			 "\tfield:int ret;\toffset:8;\tsize:4;\tsigned:1;\n"
			 "\tfield:unsigned int esr_ec;\toffset:12;\tsize:4;\tsigned:0;\n"
			 "\tfield:unsigned long vcpu_pc;\toffset:16;\tsize:8;\tsigned:0;\n",
	[TEV_VCPU_WAKEUP] = "name: kvm_vcpu_wakeup\nID: 1561\n" COMMON
			    "\tfield:__u64 ns;\toffset:8;\tsize:8;\tsigned:0;\n"
			    "\tfield:bool waited;\toffset:16;\tsize:1;\tsigned:0;\n"
			    "\tfield:bool valid;\toffset:17;\tsize:1;\tsigned:0;\n",
	[TEV_WFX] = "name: kvm_wfx_arm64\nID: 1583\n" COMMON
		    "\tfield:unsigned long vcpu_pc;\toffset:8;\tsize:8;\tsigned:0;\n"
		    "\tfield:bool is_wfe;\toffset:16;\tsize:1;\tsigned:0;\n",
	[TEV_TIMER_UPDATE_IRQ] = "name: kvm_timer_update_irq\nID: 1590\n" COMMON
				 "\tfield:unsigned long vcpu_id;\toffset:8;\tsize:8;\tsigned:0;\n"
				 "\tfield:__u32 irq;\toffset:16;\tsize:4;\tsigned:0;\n"
				 "\tfield:int level;\toffset:20;\tsize:4;\tsigned:1;\n",
	[TEV_IRQ_ENTRY] = "name: irq_handler_entry\nID: 151\n" COMMON
			  "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
			  "\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n",
	[TEV_IRQ_EXIT] = "name: irq_handler_exit\nID: 150\n" COMMON
			 "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
			 "\tfield:int ret;\toffset:12;\tsize:4;\tsigned:1;\n",
	[TEV_SCHED_WAKING] = "name: sched_waking\nID: 318\n" COMMON
			     "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
			     "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
			     "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
			     "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n",
	[TEV_SCHED_SWITCH] = "name: sched_switch\nID: 316\n" COMMON
			     "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
			     "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
			     "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
			     "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
			     "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
			     "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
			     "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n",
	[TEV_HRTIMER_ENTRY] = "name: hrtimer_expire_entry\nID: 112\n" COMMON
			      "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
			      "\tfield:s64 now;\toffset:16;\tsize:8;\tsigned:1;\n"
			      "\tfield:void * function;\toffset:24;\tsize:8;\tsigned:0;\n",
	[TEV_HRTIMER_EXIT] = "name: hrtimer_expire_exit\nID: 111\n" COMMON
			     "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n",
};

/* x86's kvm_exit: exit_reason, no ret */
static const char kvm_exit_x86[] = "name: kvm_exit\nID: 1714\n" COMMON
				   "\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
				   "\tfield:unsigned long guest_rip;\toffset:16;\tsize:8;\tsigned:0;\n"
				   "\tfield:u32 isa;\toffset:24;\tsize:4;\tsigned:0;\n"
				   "\tfield:u64 info1;\toffset:32;\tsize:8;\tsigned:0;\n"
				   "\tfield:u64 info2;\toffset:40;\tsize:8;\tsigned:0;\n"
				   "\tfield:u32 intr_info;\toffset:48;\tsize:4;\tsigned:0;\n"
				   "\tfield:u32 error_code;\toffset:52;\tsize:4;\tsigned:0;\n"
				   "\tfield:unsigned int vcpu_id;\toffset:56;\tsize:4;\tsigned:0;\n";

/* Each kind's perf id here: 1000 + kind (a real one is PERF_EVENT_IOC_ID's, any u64). */
#define PID(kind) (1000u + (kind))

struct fixture {
	struct tp_format fmt[TEV_KIND_MAX];
	struct tev_decoder d;
	struct tev ev[64];
	size_t nev;
};

static void collect(const struct tev *ev, void *opaque)
{
	struct fixture *fx = opaque;

	if (fx->nev < sizeof(fx->ev) / sizeof(fx->ev[0]))
		fx->ev[fx->nev++] = *ev;
}

/* Every kind parsed and added; aborts the test run when one is not (a broken fixture). */
static struct fixture *fixture_new(void)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char err[256];

	if (!fx)
		abort();
	tev_decoder_init(&fx->d);
	for (unsigned int k = TEV_NONE + 1; k < TEV_KIND_MAX; k++)
		if (tp_format_parse(formats[k], strlen(formats[k]), &fx->fmt[k], err, sizeof(err)) ||
		    tev_decoder_add(&fx->d, PID(k), k, &fx->fmt[k], err, sizeof(err))) {
			fprintf(stderr, "fixture: %s: %s\n", tev_kind_name(k), err);
			abort();
		}
	return fx;
}

/* ---- a record builder: the bytes a ring holds ---- */

struct rb {
	uint8_t b[4096];
	size_t n;
};

static void rb_put(struct rb *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void rb_u32(struct rb *r, uint32_t v) { rb_put(r, &v, 4); }
static void rb_u64(struct rb *r, uint64_t v) { rb_put(r, &v, 8); }

/* header.size from what was put since start */
static void rb_end(struct rb *r, size_t start)
{
	uint16_t size = (uint16_t)(r->n - start);

	memcpy(r->b + start + offsetof(struct perf_event_header, size), &size, 2);
}

/* A raw tracepoint record: the common fields, then the event's bytes from offset 8. */
struct raw {
	uint8_t b[256];
	uint32_t n;
};

static void raw_init(struct raw *w, uint16_t type, int32_t common_pid, uint32_t size)
{
	memset(w, 0, sizeof(*w));
	memcpy(w->b, &type, 2);
	memcpy(w->b + 4, &common_pid, 4);
	w->n = size;
}

static void raw_set(struct raw *w, uint32_t off, const void *p, size_t n)
{
	memcpy(w->b + off, p, n);
}

/* A PERF_RECORD_SAMPLE: header, id, pid/tid, time, cpu/res, raw size and bytes, padded to 8 as
 * the kernel pads (the raw size counts the padding). */
static void rb_sample(struct rb *r, uint64_t id, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
		      const struct raw *w)
{
	uint32_t raw_size = w->n;
	size_t start = r->n;
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE };

	/* the kernel rounds u32 size + data up to a multiple of 8 */
	while ((raw_size + 4) % 8)
		raw_size++;
	rb_put(r, &h, sizeof(h));
	rb_u64(r, id);
	rb_u32(r, pid);
	rb_u32(r, tid);
	rb_u64(r, time);
	rb_u32(r, cpu);
	rb_u32(r, 0);
	rb_u32(r, raw_size);
	rb_put(r, w->b, w->n);
	for (uint32_t i = w->n; i < raw_size; i++)
		r->b[r->n++] = 0;
	rb_end(r, start);
}

/* struct sample_id with TID, TIME, CPU, IDENTIFIER */
static void rb_sample_id(struct rb *r, uint64_t id)
{
	rb_u32(r, 1), rb_u32(r, 1), rb_u64(r, 5), rb_u32(r, 0), rb_u32(r, 0), rb_u64(r, id);
}

static void rb_lost(struct rb *r, uint64_t id, uint64_t lost)
{
	struct perf_event_header h = { .type = PERF_RECORD_LOST };
	size_t start = r->n;

	rb_put(r, &h, sizeof(h));
	rb_u64(r, id);
	rb_u64(r, lost);
	rb_sample_id(r, id);
	rb_end(r, start);
}

/* PERF_RECORD_LOST_SAMPLES: header; u64 lost; sample_id */
static void rb_lost_samples(struct rb *r, uint64_t id, uint64_t lost)
{
	struct perf_event_header h = { .type = PERF_RECORD_LOST_SAMPLES };
	size_t start = r->n;

	rb_put(r, &h, sizeof(h));
	rb_u64(r, lost);
	rb_sample_id(r, id);
	rb_end(r, start);
}

/* PERF_RECORD_THROTTLE and UNTHROTTLE: header; u64 time, id, stream_id; sample_id */
static void rb_throttle(struct rb *r, uint32_t type, uint64_t id)
{
	struct perf_event_header h = { .type = type };
	size_t start = r->n;

	rb_put(r, &h, sizeof(h));
	rb_u64(r, 7), rb_u64(r, id), rb_u64(r, id);
	rb_sample_id(r, id);
	rb_end(r, start);
}

static void set_size(struct rb *r, size_t at, uint16_t size)
{
	memcpy(r->b + at + offsetof(struct perf_event_header, size), &size, 2);
}

/* ---- the kinds ---- */

TEST(names_and_systems)
{
	EXPECT_STREQ("kvm_entry", tev_kind_name(TEV_KVM_ENTRY));
	EXPECT_STREQ("kvm", tev_kind_system(TEV_KVM_ENTRY));
	EXPECT_STREQ("kvm_exit", tev_kind_name(TEV_KVM_EXIT));
	EXPECT_STREQ("kvm_vcpu_wakeup", tev_kind_name(TEV_VCPU_WAKEUP));
	EXPECT_STREQ("kvm_wfx_arm64", tev_kind_name(TEV_WFX));
	EXPECT_STREQ("kvm_timer_update_irq", tev_kind_name(TEV_TIMER_UPDATE_IRQ));
	EXPECT_STREQ("irq_handler_entry", tev_kind_name(TEV_IRQ_ENTRY));
	EXPECT_STREQ("irq", tev_kind_system(TEV_IRQ_EXIT));
	EXPECT_STREQ("sched_waking", tev_kind_name(TEV_SCHED_WAKING));
	EXPECT_STREQ("sched", tev_kind_system(TEV_SCHED_SWITCH));
	EXPECT_STREQ("hrtimer_expire_entry", tev_kind_name(TEV_HRTIMER_ENTRY));
	EXPECT_STREQ("timer", tev_kind_system(TEV_HRTIMER_EXIT));
	EXPECT_STREQ("hrtimer_expire_exit", tev_kind_name(TEV_HRTIMER_EXIT));
	EXPECT_EQ(NULL, tev_kind_name(TEV_NONE));
	EXPECT_EQ(NULL, tev_kind_name(TEV_KIND_MAX));
	EXPECT_EQ(NULL, tev_kind_system(TEV_KIND_MAX));
	EXPECT_EQ(NULL, tev_kind_name(~0u));
	/* every kind has both, and each format above is the kind's event */
	for (unsigned int k = TEV_NONE + 1; k < TEV_KIND_MAX; k++) {
		char want[80];

		ASSERT_NE(NULL, tev_kind_name(k));
		ASSERT_NE(NULL, tev_kind_system(k));
		snprintf(want, sizeof(want), "name: %s\n", tev_kind_name(k));
		EXPECT_EQ(0, strncmp(formats[k], want, strlen(want))) TH_LOG("kind %u", k);
	}
}

TEST(each_kind_decodes)
{
	struct fixture *fx = fixture_new();
	struct rb r = { .n = 0 };
	struct raw w;
	uint64_t u;
	int32_t i;
	uint32_t x;
	uint8_t b;

	raw_init(&w, 1600, 77, 16);
	u = 0xffff800080001234ull;
	raw_set(&w, 8, &u, 8);
	rb_sample(&r, PID(TEV_KVM_ENTRY), 70, 77, 1000, 3, &w);

	raw_init(&w, 1599, 77, 24);
	i = 1, raw_set(&w, 8, &i, 4);	      /* ret: ARM_EXCEPTION_TRAP */
	x = 0x01, raw_set(&w, 12, &x, 4);     /* esr_ec: WFx */
	rb_sample(&r, PID(TEV_KVM_EXIT), 70, 77, 1001, 3, &w);

	raw_init(&w, 1561, 77, 18);
	u = 250000, raw_set(&w, 8, &u, 8);
	b = 1, raw_set(&w, 16, &b, 1);
	b = 1, raw_set(&w, 17, &b, 1);
	rb_sample(&r, PID(TEV_VCPU_WAKEUP), 70, 77, 1002, 3, &w);

	raw_init(&w, 1583, 77, 17);
	b = 1, raw_set(&w, 16, &b, 1);
	rb_sample(&r, PID(TEV_WFX), 70, 77, 1003, 3, &w);

	raw_init(&w, 1590, 0, 24);
	u = 2, raw_set(&w, 8, &u, 8);
	x = 27, raw_set(&w, 16, &x, 4);
	i = 1, raw_set(&w, 20, &i, 4);
	rb_sample(&r, PID(TEV_TIMER_UPDATE_IRQ), 0, 0, 1004, 1, &w);

	raw_init(&w, 151, 0, 24); /* "arch_timer" after the fields, through __data_loc */
	i = 11, raw_set(&w, 8, &i, 4);
	x = (11u << 16) | 16, raw_set(&w, 12, &x, 4);
	raw_set(&w, 16, "arch_timer", 11);
	w.n = 27;
	rb_sample(&r, PID(TEV_IRQ_ENTRY), 0, 0, 1005, 1, &w);

	raw_init(&w, 150, 0, 16);
	i = 11, raw_set(&w, 8, &i, 4);
	i = 1, raw_set(&w, 12, &i, 4);
	rb_sample(&r, PID(TEV_IRQ_EXIT), 0, 0, 1006, 1, &w);

	raw_init(&w, 318, 0, 36);
	raw_set(&w, 8, "vmm-vcpu0", 10);
	i = 77, raw_set(&w, 24, &i, 4);
	i = 120, raw_set(&w, 28, &i, 4);
	i = 3, raw_set(&w, 32, &i, 4);
	rb_sample(&r, PID(TEV_SCHED_WAKING), 0, 0, 1007, 1, &w);

	raw_init(&w, 316, 0, 64);
	i = 0, raw_set(&w, 24, &i, 4);
	u = 0, raw_set(&w, 32, &u, 8);
	i = 77, raw_set(&w, 56, &i, 4);
	rb_sample(&r, PID(TEV_SCHED_SWITCH), 0, 0, 1008, 3, &w);

	raw_init(&w, 112, 0, 32);
	u = 0xffff000012345678ull, raw_set(&w, 8, &u, 8);
	u = 999, raw_set(&w, 16, &u, 8);
	u = 0xffff800080abcdefull, raw_set(&w, 24, &u, 8);
	rb_sample(&r, PID(TEV_HRTIMER_ENTRY), 0, 0, 1009, 3, &w);

	raw_init(&w, 111, 0, 16);
	rb_sample(&r, PID(TEV_HRTIMER_EXIT), 0, 0, 1010, 3, &w);

	ASSERT_EQ(r.n, tev_decode(&fx->d, r.b, r.n, collect, fx));
	EXPECT_EQ(0, fx->d.bad);
	EXPECT_EQ(0, fx->d.lost);
	EXPECT_EQ(0, fx->d.other);
	ASSERT_EQ(11, fx->nev);
	for (size_t k = 0; k < fx->nev; k++) {
		EXPECT_EQ(k + 1, fx->ev[k].kind);
		EXPECT_EQ(1000 + k, fx->ev[k].t);
	}

	const struct tev *e = fx->ev;

	EXPECT_EQ(77, e[0].tid);
	EXPECT_EQ(3, e[0].cpu);
	EXPECT_EQ(0, e[0].a);
	EXPECT_EQ(0x01, e[1].a) TH_LOG("kvm_exit a = esr_ec");
	EXPECT_EQ(1, e[1].b) TH_LOG("kvm_exit b = ret");
	EXPECT_EQ(250000, e[2].a);
	EXPECT_EQ(1, e[2].b);
	EXPECT_EQ(1, e[3].a);
	EXPECT_EQ(2, e[4].a);
	EXPECT_EQ(27, e[4].b);
	EXPECT_EQ(1, e[4].c);
	EXPECT_EQ(0, e[4].tid);
	EXPECT_EQ(1, e[4].cpu);
	EXPECT_EQ(11, e[5].a);
	EXPECT_EQ(11, e[6].a);
	EXPECT_EQ(1, e[6].b);
	EXPECT_EQ(77, e[7].a);
	EXPECT_EQ(3, e[7].b);
	EXPECT_EQ(0, e[8].a);
	EXPECT_EQ(77, e[8].b);
	EXPECT_EQ(0, e[8].c);
	EXPECT_EQ(0xffff800080abcdefull, (uint64_t)e[9].a);
	EXPECT_EQ(0, e[10].a);
	free(fx);
}

/* the sample's TID and CPU, not the raw record's common_pid; negative fields sign-extended */
TEST(tid_cpu_time_and_signs)
{
	struct fixture *fx = fixture_new();
	struct rb r = { .n = 0 };
	struct raw w;
	int32_t i;
	int64_t s;

	raw_init(&w, 316, 555, 64);
	i = 4242, raw_set(&w, 24, &i, 4);
	s = 0x100, raw_set(&w, 32, &s, 8); /* preempted: TASK_REPORT_MAX */
	i = 0, raw_set(&w, 56, &i, 4);
	rb_sample(&r, PID(TEV_SCHED_SWITCH), 4242, 4243, 0xfedcba9876543210ull, 127, &w);
	raw_init(&w, 150, 0, 16);
	i = -1, raw_set(&w, 8, &i, 4);
	i = -22, raw_set(&w, 12, &i, 4);
	rb_sample(&r, PID(TEV_IRQ_EXIT), 1, 0xffffffffu, 1, 0, &w);

	ASSERT_EQ(r.n, tev_decode(&fx->d, r.b, r.n, collect, fx));
	ASSERT_EQ(2, fx->nev);
	EXPECT_EQ(4243, fx->ev[0].tid);
	EXPECT_EQ(127, fx->ev[0].cpu);
	EXPECT_EQ(0xfedcba9876543210ull, fx->ev[0].t);
	EXPECT_EQ(4242, fx->ev[0].a);
	EXPECT_EQ(0x100, fx->ev[0].c);
	EXPECT_EQ(-1, fx->ev[1].tid);
	EXPECT_EQ(-1, fx->ev[1].a);
	EXPECT_EQ(-22, fx->ev[1].b);
	free(fx);
}

TEST(x86_kvm_exit_reads_exit_reason)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct tp_format *fmt = &fx->fmt[TEV_KVM_EXIT];
	struct rb r = { .n = 0 };
	struct raw w;
	char err[256];
	uint32_t x;

	ASSERT_EQ(0, tp_format_parse(kvm_exit_x86, strlen(kvm_exit_x86), fmt, err, sizeof(err))) TH_LOG("%s", err);
	tev_decoder_init(&fx->d);
	ASSERT_EQ(0, tev_decoder_add(&fx->d, 9, TEV_KVM_EXIT, fmt, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(NULL, fx->d.id[0].fb) TH_LOG("no ret on x86");
	raw_init(&w, 1714, 9, 60);
	x = 12, raw_set(&w, 8, &x, 4); /* EXIT_REASON_HLT */
	rb_sample(&r, 9, 9, 9, 5, 0, &w);
	ASSERT_EQ(r.n, tev_decode(&fx->d, r.b, r.n, collect, fx));
	ASSERT_EQ(1, fx->nev);
	EXPECT_EQ(TEV_KVM_EXIT, fx->ev[0].kind);
	EXPECT_EQ(12, fx->ev[0].a);
	EXPECT_EQ(0, fx->ev[0].b);
	free(fx);
}

/* ---- the table ---- */

TEST(add_refuses_a_format_without_the_fields)
{
	struct tev_decoder *d = calloc(1, sizeof(*d));
	struct tp_format fmt;
	char err[256];

	tev_decoder_init(d);
	/* sched_switch's format given as sched_waking: no pid, no target_cpu */
	ASSERT_EQ(0, tp_format_parse(formats[TEV_SCHED_SWITCH], strlen(formats[TEV_SCHED_SWITCH]), &fmt, err,
				     sizeof(err)));
	EXPECT_EQ(-EINVAL, tev_decoder_add(d, 1, TEV_SCHED_WAKING, &fmt, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "sched_waking")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "pid")) TH_LOG("%s", err);
	EXPECT_EQ(0, d->n);

	/* kvm_exit with neither esr_ec nor exit_reason */
	ASSERT_EQ(0, tp_format_parse(formats[TEV_KVM_ENTRY], strlen(formats[TEV_KVM_ENTRY]), &fmt, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, tev_decoder_add(d, 1, TEV_KVM_EXIT, &fmt, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "kvm_exit")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "esr_ec or exit_reason")) TH_LOG("%s", err);
	/* kvm_entry and hrtimer_expire_exit need none */
	EXPECT_EQ(0, tev_decoder_add(d, 1, TEV_KVM_ENTRY, &fmt, err, sizeof(err)));
	EXPECT_EQ(0, tev_decoder_add(d, 2, TEV_HRTIMER_EXIT, &fmt, err, sizeof(err)));

	/* a field of the right name that is not a number */
	static const char odd[] = "name: irq_handler_entry\nID: 151\nformat:\n"
				  "\tfield:char irq[4];\toffset:8;\tsize:4;\tsigned:0;\n";
	ASSERT_EQ(0, tp_format_parse(odd, strlen(odd), &fmt, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, tev_decoder_add(d, 3, TEV_IRQ_ENTRY, &fmt, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "irq")) TH_LOG("%s", err);
	static const char wide[] = "name: irq_handler_entry\nID: 151\nformat:\n"
				   "\tfield:int irq;\toffset:8;\tsize:3;\tsigned:1;\n";
	ASSERT_EQ(0, tp_format_parse(wide, strlen(wide), &fmt, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, tev_decoder_add(d, 3, TEV_IRQ_ENTRY, &fmt, err, sizeof(err)));

	/* no kind, no format, an id twice */
	EXPECT_EQ(-EINVAL, tev_decoder_add(d, 3, TEV_NONE, &fmt, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, tev_decoder_add(d, 3, TEV_KIND_MAX, &fmt, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, tev_decoder_add(d, 3, TEV_KVM_ENTRY, NULL, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, tev_decoder_add(d, 1, TEV_KVM_ENTRY, &fmt, NULL, 0));
	EXPECT_EQ(2, d->n);
	free(d);
}

TEST(add_refuses_past_the_table)
{
	struct tev_decoder *d = calloc(1, sizeof(*d));
	struct tp_format fmt;
	char err[256];

	ASSERT_EQ(0, tp_format_parse(formats[TEV_KVM_ENTRY], strlen(formats[TEV_KVM_ENTRY]), &fmt, err, sizeof(err)));
	tev_decoder_init(d);
	for (unsigned int i = 0; i < TEV_IDS_MAX; i++)
		ASSERT_EQ(0, tev_decoder_add(d, i, TEV_KVM_ENTRY, &fmt, err, sizeof(err)));
	EXPECT_EQ(-ENOSPC, tev_decoder_add(d, TEV_IDS_MAX, TEV_KVM_ENTRY, &fmt, err, sizeof(err)));
	EXPECT_NE('\0', err[0]);
	EXPECT_EQ(TEV_IDS_MAX, d->n);
	free(d);
}

/* ---- records that are not events, and broken ones ---- */

TEST(lost_adds_up_and_throttle_is_skipped)
{
	struct fixture *fx = fixture_new();
	struct rb r = { .n = 0 };
	struct raw w;

	rb_lost(&r, PID(TEV_KVM_ENTRY), 5);
	rb_throttle(&r, PERF_RECORD_THROTTLE, PID(TEV_KVM_ENTRY));
	raw_init(&w, 1600, 1, 16);
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 42, 0, &w);
	rb_throttle(&r, PERF_RECORD_UNTHROTTLE, PID(TEV_KVM_ENTRY));
	rb_lost(&r, 12345, 7); /* another ring's id: still lost */
	rb_lost_samples(&r, PID(TEV_KVM_ENTRY), 2);
	ASSERT_EQ(r.n, tev_decode(&fx->d, r.b, r.n, collect, fx));
	EXPECT_EQ(14, fx->d.lost);
	EXPECT_EQ(2, fx->d.other);
	EXPECT_EQ(0, fx->d.bad);
	ASSERT_EQ(1, fx->nev);
	EXPECT_EQ(42, fx->ev[0].t);

	/* counts add up over calls; a NULL emit only counts */
	ASSERT_EQ(r.n, tev_decode(&fx->d, r.b, r.n, NULL, NULL));
	EXPECT_EQ(28, fx->d.lost);
	EXPECT_EQ(4, fx->d.other);
	tev_decoder_init(&fx->d);
	EXPECT_EQ(0, fx->d.lost);
	EXPECT_EQ(0, fx->d.n);
	free(fx);
}

TEST(unknown_id_is_bad_and_skipped)
{
	struct fixture *fx = fixture_new();
	struct rb r = { .n = 0 };
	struct raw w;

	raw_init(&w, 1600, 1, 16);
	rb_sample(&r, 999999, 1, 1, 1, 0, &w);
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 2, 0, &w);
	ASSERT_EQ(r.n, tev_decode(&fx->d, r.b, r.n, collect, fx));
	EXPECT_EQ(1, fx->d.bad);
	ASSERT_EQ(1, fx->nev);
	EXPECT_EQ(2, fx->ev[0].t);
	free(fx);
}

/* a ring copied out mid-record: the whole records before it, the cut one counted, not read */
TEST(a_cut_record_ends_the_walk)
{
	struct fixture *fx = fixture_new();
	struct rb r = { .n = 0 };
	struct raw w;
	size_t first;

	raw_init(&w, 1600, 1, 16);
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 1, 0, &w);
	first = r.n;
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 2, 0, &w);
	for (size_t cut = first + 1; cut < r.n; cut++) {
		/* a heap copy of exactly cut bytes: ASan sees a read past it */
		uint8_t *copy = malloc(cut);

		memcpy(copy, r.b, cut);
		tev_decoder_init(&fx->d);
		for (unsigned int k = TEV_NONE + 1; k < TEV_KIND_MAX; k++)
			ASSERT_EQ(0, tev_decoder_add(&fx->d, PID(k), k, &fx->fmt[k], NULL, 0));
		fx->nev = 0;
		EXPECT_EQ(first, tev_decode(&fx->d, copy, cut, collect, fx)) TH_LOG("cut at %zu", cut);
		EXPECT_EQ(1, fx->d.bad);
		EXPECT_EQ(1, fx->nev);
		free(copy);
	}
	fx->nev = 0;
	fx->d.bad = 0;
	EXPECT_EQ(0, tev_decode(&fx->d, r.b, 0, collect, fx));
	EXPECT_EQ(0, fx->d.bad);
	EXPECT_EQ(0, tev_decode(&fx->d, NULL, 0, collect, fx));
	free(fx);
}

TEST(a_size_below_the_header_stops)
{
	struct fixture *fx = fixture_new();
	struct rb r = { .n = 0 };
	struct raw w;
	size_t second;

	raw_init(&w, 1600, 1, 16);
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 1, 0, &w);
	second = r.n;
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 2, 0, &w);
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 3, 0, &w);
	for (uint16_t size = 0; size < sizeof(struct perf_event_header); size++) {
		set_size(&r, second, size);
		fx->nev = 0;
		fx->d.bad = 0;
		EXPECT_EQ(second, tev_decode(&fx->d, r.b, r.n, collect, fx));
		EXPECT_EQ(1, fx->d.bad);
		EXPECT_EQ(1, fx->nev);
	}
	free(fx);
}

/* header.size within the buffer but the record's own lengths past it: counted, stepped over */
TEST(raw_size_past_its_record)
{
	struct fixture *fx = fixture_new();
	struct rb r = { .n = 0 };
	struct raw w;
	uint32_t big;
	size_t at;

	raw_init(&w, 1600, 1, 16);
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 1, 0, &w);
	/* raw size one more than the record holds */
	at = r.n;
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 2, 0, &w);
	memcpy(&big, r.b + at + 40, 4);
	big = (uint32_t)(r.n - at - 44 + 1);
	memcpy(r.b + at + 40, &big, 4);
	/* and one that wraps a 32-bit sum */
	at = r.n;
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 3, 0, &w);
	big = 0xfffffffcu;
	memcpy(r.b + at + 40, &big, 4);
	/* a sample too short for its fixed part (header.size 40: no raw size) */
	at = r.n;
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 4, 0, &w);
	set_size(&r, at, 40);
	r.n = at + 40;
	/* the raw record shorter than the field read (kvm_vcpu_wakeup's ns at 8..16 in 12 bytes) */
	raw_init(&w, 1561, 1, 12);
	rb_sample(&r, PID(TEV_VCPU_WAKEUP), 1, 1, 5, 0, &w);
	/* a LOST without its count */
	struct perf_event_header h = { .type = PERF_RECORD_LOST, .size = 16 };
	rb_put(&r, &h, sizeof(h));
	rb_u64(&r, 1);
	/* then a good one */
	raw_init(&w, 1600, 1, 16);
	rb_sample(&r, PID(TEV_KVM_ENTRY), 1, 1, 6, 0, &w);

	ASSERT_EQ(r.n, tev_decode(&fx->d, r.b, r.n, collect, fx));
	EXPECT_EQ(5, fx->d.bad);
	EXPECT_EQ(0, fx->d.lost);
	ASSERT_EQ(2, fx->nev);
	EXPECT_EQ(1, fx->ev[0].t);
	EXPECT_EQ(6, fx->ev[1].t);
	free(fx);
}

/* a record size the kernel never writes (not a multiple of 8) is taken as it says; the buffer at
 * any alignment */
TEST(odd_sizes_and_alignment)
{
	struct fixture *fx = fixture_new();
	struct rb r = { .n = 0 };
	struct raw w;
	uint8_t shifted[sizeof(r.b) + 8];

	raw_init(&w, 1583, 1, 17);
	w.b[16] = 1;
	rb_sample(&r, PID(TEV_WFX), 1, 1, 1, 0, &w);
	/* drop the padding: header.size 8+40+4+17 = 61 */
	{
		uint32_t raw = 17;

		memcpy(r.b + 40, &raw, 4);
		set_size(&r, 0, 61);
		r.n = 61;
	}
	rb_sample(&r, PID(TEV_WFX), 1, 1, 2, 0, &w);
	for (size_t shift = 0; shift < 8; shift++) {
		memcpy(shifted + shift, r.b, r.n);
		fx->nev = 0;
		fx->d.bad = 0;
		ASSERT_EQ(r.n, tev_decode(&fx->d, shifted + shift, r.n, collect, fx));
		EXPECT_EQ(0, fx->d.bad);
		ASSERT_EQ(2, fx->nev);
		EXPECT_EQ(1, fx->ev[0].a);
		EXPECT_EQ(2, fx->ev[1].t);
	}
	free(fx);
}

TEST_HARNESS_MAIN
