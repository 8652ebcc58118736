// SPDX-License-Identifier: MIT
/* Seeds of the tracepoint target (tests/fuzz/trace_fuzz.c): format files as Linux 6.12 prints
 * them (first byte 0), and perf rings (first byte 1) of samples for the target's perf ids 1..5
 * (sched_switch, irq_handler_entry, kvm_vcpu_wakeup, arm64's kvm_exit, hrtimer_expire_entry, with
 * their 6.12 layouts), a LOST and a THROTTLE record, an unknown id and a cut record. */
#include <linux/perf_event.h>

#include "tests/fuzz/seeds.h"
#include "trace/trace.h"

#define COMMON                                                                              \
	"format:\n"                                                                         \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"              \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"              \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"      \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                          \
	"\n"

static void format_seeds(void)
{
	static const struct { const char *name, *text; } t[] = {
		{ "sched_switch", "name: sched_switch\nID: 316\n" COMMON
		  "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
		  "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
		  "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
		  "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
		  "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
		  "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
		  "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
		  "\nprint fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
		  "next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->prev_state ? "
		  "\"S\" : \"R\", \"\", REC->next_comm, REC->next_pid, REC->next_prio\n" },
		{ "irq_handler_entry", "name: irq_handler_entry\nID: 151\n" COMMON
		  "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
		  "\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n"
		  "\nprint fmt: \"irq=%d name=%s\", REC->irq, __get_str(name)\n" },
		{ "kvm_exit_x86", "name: kvm_exit\nID: 1714\n" COMMON
		  "\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
		  "\tfield:unsigned long guest_rip;\toffset:16;\tsize:8;\tsigned:0;\n"
		  "\tfield:u32 isa;\toffset:24;\tsize:4;\tsigned:0;\n"
		  "\tfield:u64 info1;\toffset:32;\tsize:8;\tsigned:0;\n"
		  "\tfield:u64 info2;\toffset:40;\tsize:8;\tsigned:0;\n"
		  "\tfield:u32 intr_info;\toffset:48;\tsize:4;\tsigned:0;\n"
		  "\tfield:u32 error_code;\toffset:52;\tsize:4;\tsigned:0;\n"
		  "\tfield:unsigned int vcpu_id;\toffset:56;\tsize:4;\tsigned:0;\n"
		  "\nprint fmt: \"reason %s rip 0x%lx info1 0x%016llx\", REC->exit_reason, REC->guest_rip, "
		  "REC->info1\n" },
		/* Windows line ends, items reordered, 6.13's lazy count */
		{ "kvm_timer_update_irq_crlf", "name: kvm_timer_update_irq\r\nID: 1590\r\nformat:\r\n"
		  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\r\n"
		  "\tfield:int common_pid;\tsigned:1;\toffset:4;\tsize:4;\r\n"
		  "\tfield:unsigned char common_preempt_lazy_count;\toffset:8;\tsize:1;\tsigned:0;\r\n\r\n"
		  "\tfield:unsigned long vcpu_id;\toffset:16;\tsize:8;\tsigned:0;\r\n"
		  "\tfield:__u32 irq;\toffset:24;\tsize:4;\tsigned:0;\r\n"
		  "\tfield:int level;\toffset:28;\tsize:4;\tsigned:1;\r\n" },
		/* a field line cut short */
		{ "cut", "name: kvm_vcpu_wakeup\nID: 1561\n" COMMON "\tfield:__u64 ns;\toffset:8;\tsize:8;\tsig" },
	};
	struct out o = { 0 };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		o.n = 0;
		put(&o, 0, 1);
		putb(&o, t[i].text, strlen(t[i].text));
		seed_save("trace", t[i].name, &o);
	}
}

/* A PERF_RECORD_SAMPLE of id with a raw record of raw_n bytes (common_type first), padded as the
 * kernel pads: u32 size + data to a multiple of 8. */
static void sample(struct out *o, uint64_t id, uint32_t tid, uint64_t t, uint32_t cpu, const uint8_t *raw,
		   uint32_t raw_n)
{
	uint32_t padded = raw_n;

	while ((padded + 4) % 8)
		padded++;
	put(o, PERF_RECORD_SAMPLE, 4), put(o, 0, 2), put(o, 8 + 32 + 4 + padded, 2);
	put(o, id, 8), put(o, tid, 4), put(o, tid, 4), put(o, t, 8), put(o, cpu, 4), put(o, 0, 4);
	put(o, padded, 4);
	putb(o, raw, raw_n);
	put(o, 0, padded - raw_n);
}

/* Little-endian field stores into a raw record (both targets' hosts are). */
static void raw_put(uint8_t *raw, size_t off, uint64_t v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes; i++)
		raw[off + i] = (uint8_t)(v >> (8 * i));
}

static void sample_id(struct out *o, uint64_t id)
{
	put(o, 1, 4), put(o, 1, 4), put(o, 9, 8), put(o, 0, 4), put(o, 0, 4), put(o, id, 8);
}

/* a halt on arm64: exit (WFx), the host timer, the IRQ, wake-up, switch in, entry */
static void halt_ring(struct out *o)
{
	uint8_t raw[64];

	memset(raw, 0, sizeof(raw));
	raw_put(raw, 0, 1599, 2), raw_put(raw, 8, 1, 4), raw_put(raw, 12, 0x01, 4), raw_put(raw, 16, 0x401234, 8);
	sample(o, 4, 77, 1000, 3, raw, 24);
	memset(raw, 0, sizeof(raw));
	raw_put(raw, 0, 112, 2), raw_put(raw, 8, 0xffff000012345678ull, 8), raw_put(raw, 16, 5000, 8);
	raw_put(raw, 24, 0xffff800080abcdefull, 8);
	sample(o, 5, 0, 5000, 3, raw, 32);
	memset(raw, 0, sizeof(raw));
	raw_put(raw, 0, 151, 2), raw_put(raw, 8, 11, 4), raw_put(raw, 12, (11u << 16) | 16, 4);
	memcpy(raw + 16, "arch_timer", 11);
	sample(o, 2, 0, 5100, 3, raw, 27);
	memset(raw, 0, sizeof(raw));
	raw_put(raw, 0, 1561, 2), raw_put(raw, 8, 4000, 8), raw_put(raw, 16, 1, 1), raw_put(raw, 17, 1, 1);
	sample(o, 3, 77, 5400, 3, raw, 18);
	memset(raw, 0, sizeof(raw));
	raw_put(raw, 0, 316, 2), memcpy(raw + 8, "swapper/3", 9), raw_put(raw, 28, 120, 4);
	memcpy(raw + 40, "vcpu0", 5), raw_put(raw, 56, 77, 4), raw_put(raw, 60, 120, 4);
	sample(o, 1, 0, 5500, 3, raw, 64);
}

static void ring_seeds(void)
{
	struct out o = { 0 };
	uint8_t raw[32] = { 0 };

	put(&o, 1, 1);
	halt_ring(&o);
	seed_save("trace", "halt", &o);

	/* LOST (header; id; lost; sample_id), THROTTLE (header; time, id, stream_id; sample_id), a
	 * sample of an unknown id, then a good one cut short */
	o.n = 0;
	put(&o, 1, 1);
	put(&o, PERF_RECORD_LOST, 4), put(&o, 0, 2), put(&o, 8 + 16 + 32, 2), put(&o, 3, 8), put(&o, 12, 8);
	sample_id(&o, 3);
	put(&o, PERF_RECORD_THROTTLE, 4), put(&o, 0, 2), put(&o, 8 + 24 + 32, 2);
	put(&o, 9, 8), put(&o, 3, 8), put(&o, 3, 8);
	sample_id(&o, 3);
	raw_put(raw, 0, 999, 2);
	sample(&o, 99, 1, 10, 0, raw, 16);
	halt_ring(&o);
	o.n -= 20;
	seed_save("trace", "lost-throttle-cut", &o);
}

/* One join input (trace_fuzz.c's mode 3): a 12-byte event */
static void join_ev(struct out *o, uint32_t t, uint8_t cpu, uint8_t tid, uint8_t kind, uint8_t a, uint32_t b)
{
	put(o, t, 4), put(o, cpu, 1), put(o, tid, 1), put(o, kind, 1), put(o, a, 1), put(o, b + 100, 4);
}

/* a udp answer woke vCPU 2 (tid 2) through the VF's vector (IRQ 10): blocked, every stage seen */
static void join_seeds(void)
{
	struct out o = { 0 };

	put(&o, 3, 1);
	put(&o, 90000, 8), put(&o, 125000, 8);
	join_ev(&o, 1000, 1, 2, TEV_KVM_EXIT, 1, 1);
	join_ev(&o, 3000, 1, 2, TEV_SCHED_SWITCH, 2, 0);
	join_ev(&o, 100000, 0, 0, 0xff, 0, 0);
	join_ev(&o, 110000, 0, 0, TEV_IRQ_ENTRY, 10, 0);
	join_ev(&o, 110500, 0, 0, TEV_SCHED_WAKING, 2, 1);
	join_ev(&o, 111000, 0, 0, TEV_IRQ_EXIT, 10, 1);
	join_ev(&o, 115000, 1, 0, TEV_SCHED_SWITCH, 0, 2);
	join_ev(&o, 116000, 1, 2, TEV_VCPU_WAKEUP, 1, 1);
	join_ev(&o, 118000, 1, 2, TEV_KVM_ENTRY, 0, 0);
	seed_save("trace", "join-udp-blocked", &o);
}

void seeds_trace(void)
{
	format_seeds();
	ring_seeds();
	join_seeds();
}
