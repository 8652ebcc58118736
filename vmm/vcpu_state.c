// SPDX-License-Identifier: MIT
/*
 * Each vCPU's real halt state (vmm/vcpu_state.h). Since Linux 5.5 KVM stops trapping WFI for a vCPU
 * whose thread is alone on its CPU and which has vLPIs (kvm_vcpu_should_clear_twi), unless
 * kvm-arm.wfi_trap_policy says otherwise (6.11+): the guest's WFI then never reaches KVM, and
 * halt polling's and the doorbells' zeros mean that. On x86 HLT exits unless --no-hlt-exit, and
 * the PV policy decided how IPIs travel. The KVM counts are hp_run's (the run phase, as the exit
 * summary's histograms); the rest is read from the host's files, every number bounded.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/arch.h"
#include "core/host_text.h"
#include "core/json.h"
#include "core/vcpu.h"
#include "vmm/board.h"
#include "vmm/vcpu_state.h"

/* --- pure parts --- */

void vcpu_state_parse_cmdline(const char *cmdline, enum hp_trap *wfi, enum hp_trap *wfe)
{
	struct hp_host h;

	memset(&h, 0, sizeof(h));
	hp_host_parse_cmdline(&h, cmdline ? cmdline : "");
	*wfi = h.wfi;
	*wfe = h.wfe;
}

/* A number token bounded to max, else -1. */
static int64_t tok_num(struct span t, uint64_t max)
{
	uint64_t v;

	return span_u64(t, 10, max, &v) ? (int64_t)v : -1;
}

static void parse_status(const char *text, struct vcpu_thread_stat *t)
{
	struct span line, rest, key, val;
	size_t pos = 0, len = strlen(text);

	while (span_next_line(text, len, &pos, &line)) {
		rest = line;
		if (!span_next_tok(&rest, &key) || !span_next_tok(&rest, &val))
			continue;
		if (span_is(key, "voluntary_ctxt_switches:"))
			t->voluntary = tok_num(val, INT64_MAX);
		else if (span_is(key, "nonvoluntary_ctxt_switches:"))
			t->preempted = tok_num(val, INT64_MAX);
	}
}

/* "RUN_NS WAIT_NS SLICES" (CONFIG_SCHED_INFO) */
static void parse_schedstat(const char *text, struct vcpu_thread_stat *t)
{
	struct span rest = { text, strlen(text) }, run, wait;

	if (!span_next_tok(&rest, &run) || !span_next_tok(&rest, &wait))
		return;
	int64_t r = tok_num(run, INT64_MAX), w = tok_num(wait, INT64_MAX);

	if (r >= 0 && w >= 0) {
		t->run_ns = r;
		t->wait_ns = w;
	}
}

/* stat's field 39 (processor), counted after the name's last ')': the name may hold anything */
static void parse_stat(const char *text, struct vcpu_thread_stat *t)
{
	const char *p = strrchr(text, ')');
	struct span rest, tok;

	if (!p)
		return;
	rest = (struct span){ p + 1, strlen(p + 1) };
	for (int field = 3; span_next_tok(&rest, &tok); field++)
		if (field == 39) {
			t->cpu = (int)tok_num(tok, INT_MAX);
			return;
		}
}

void vcpu_state_parse_thread(const char *status, const char *schedstat, const char *stat, struct vcpu_thread_stat *t)
{
	*t = (struct vcpu_thread_stat){ -1, -1, -1, -1, -1 };
	if (status)
		parse_status(status, t);
	if (schedstat)
		parse_schedstat(schedstat, t);
	if (stat)
		parse_stat(stat, t);
}

int vcpu_state_alone(const struct vcpu_thread_stat *t)
{
	if (t->run_ns <= 0 || t->wait_ns < 0)
		return -1;
	/* runnable but waiting for over 1% of its time on a CPU: something else ran there */
	return t->wait_ns <= t->run_ns / 100;
}

enum vcpu_verdict vcpu_state_verdict(enum vcpu_halt_kind kind, enum hp_trap wfi_policy, bool no_hlt_exit, int vlpis,
				     int alone, int64_t wfi_exits)
{
	if (kind == VCPU_HALT_HLT)
		return no_hlt_exit ? VCPU_NO_HLT_EXIT : VCPU_HLT_EXITS;
	if (wfi_policy == HP_TRAP_NOTRAP) /* a kernel before 6.11 ignores the parameter */
		return wfi_exits > 0 ? VCPU_WFI_NOTRAP_IGNORED : VCPU_WFI_NOTRAP_POLICY;
	if (wfi_policy == HP_TRAP_TRAP || vlpis == 0)
		return VCPU_WFI_TRAPS;
	/* the default policy (a value the kernel refuses leaves it so) */
	if (vlpis < 0)
		return wfi_exits > 0 ? VCPU_WFI_TRAPS : VCPU_WFI_UNKNOWN;
	/* vLPIs now: KVM clears the trap at each load while the thread is alone; the exits counted
	 * may predate the mapping, so they decide only when "alone" is not known */
	if (alone == 0)
		return VCPU_WFI_TRAPS_SHARED;
	if (alone > 0 || wfi_exits <= 0)
		return VCPU_WFI_LIKELY_NOTRAP;
	return VCPU_WFI_TRAPS_AT_TIMES;
}

static const struct {
	const char *name, *text;
} verdicts[VCPU_NR_VERDICTS] = {
	[VCPU_WFI_TRAPS] = { "wfi-traps", "WFI traps" },
	[VCPU_WFI_NOTRAP_POLICY] = { "wfi-not-trapped", "WFI not trapped" }, /* the detail names the policy */
	[VCPU_WFI_NOTRAP_IGNORED] = { "wfi-traps-notrap-ignored",
				      "WFI traps (policy notrap not in force: Linux before 6.11 ignores it)" },
	[VCPU_WFI_LIKELY_NOTRAP] = { "wfi-likely-not-trapped", "WFI likely not trapped (alone with vLPIs: default policy)" },
	[VCPU_WFI_TRAPS_SHARED] = { "wfi-traps-shared", "WFI traps (vLPIs, but its thread shares its CPU)" },
	[VCPU_WFI_TRAPS_AT_TIMES] = { "wfi-traps-at-times",
				      "WFI trapped at times (vLPIs: not while its thread is alone on its CPU)" },
	[VCPU_WFI_UNKNOWN] = { "wfi-unknown", "WFI trapping unknown (vLPIs unreadable, no WFI exit)" },
	[VCPU_HLT_EXITS] = { "hlt-exits", "HLT exits" },
	[VCPU_NO_HLT_EXIT] = { "no-hlt-exit", "no HLT exit (--no-hlt-exit)" },
};

const char *vcpu_verdict_name(enum vcpu_verdict v)
{
	return (unsigned int)v < VCPU_NR_VERDICTS ? verdicts[v].name : "unknown";
}

const char *vcpu_verdict_text(enum vcpu_verdict v)
{
	return (unsigned int)v < VCPU_NR_VERDICTS ? verdicts[v].text : "unknown";
}

void vcpu_state_doorbells(const struct proc_interrupts *pi, int nr_vcpus, long *line_of)
{
	long top[VM_MAX_VCPUS]; /* the newest doorbells' lines, ascending by IRQ */
	int k = nr_vcpus < 0 ? 0 : nr_vcpus > VM_MAX_VCPUS ? VM_MAX_VCPUS : nr_vcpus, have = 0;

	for (int i = 0; i < k; i++)
		line_of[i] = -1;
	for (size_t i = 0; pi && k && i < pi->nr_line; i++) {
		if (pi->line[i].kind != IRQ_LINE_DOORBELL)
			continue;
		unsigned int irq = pi->line[i].irq;
		int j;

		if (have == k) { /* full: unless older than all kept, the oldest kept goes */
			if (irq <= pi->line[top[0]].irq)
				continue;
			for (j = 0; j + 1 < k && pi->line[top[j + 1]].irq < irq; j++)
				top[j] = top[j + 1];
		} else {
			for (j = have++; j > 0 && pi->line[top[j - 1]].irq > irq; j--)
				top[j] = top[j - 1];
		}
		top[j] = (long)i;
	}
	/* one VM's doorbells are one block of one per vCPU: fewer cannot be this VM's */
	for (int i = 0; have == k && i < k; i++)
		line_of[i] = top[i];
}

static void fmt_num(char *buf, size_t len, int64_t v)
{
	if (v < 0)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%lld", (long long)v);
}

/* ", halt polls N ok / M failed" */
static size_t line_polls(const struct vcpu_state *s, char *buf, size_t len)
{
	if (s->polls_tried < 0 || s->polls_ok < 0)
		return (size_t)snprintf(buf, len, ", halt polls n/a");
	int64_t failed = s->polls_tried > s->polls_ok ? s->polls_tried - s->polls_ok : 0;
	int n = snprintf(buf, len, ", halt polls %lld ok / %lld failed", (long long)s->polls_ok, (long long)failed);

	if (s->polls_invalid > 0 && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " (%lld of them invalid)", (long long)s->polls_invalid);
	return n < 0 ? 0 : (size_t)n;
}

/* ", thread preempted N times, waited X ms for its CPU (alone, inferred)" */
static size_t line_thread(const struct vcpu_state *s, char *buf, size_t len)
{
	const struct vcpu_thread_stat *t = &s->thread;

	if (t->preempted < 0 && t->wait_ns < 0)
		return (size_t)snprintf(buf, len, ", thread not readable (ended)");
	char p[24];

	fmt_num(p, sizeof(p), t->preempted);
	int n = snprintf(buf, len, ", thread preempted %s times", p);

	if (t->wait_ns >= 0 && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", waited %.1f ms for its CPU (%s, inferred)", t->wait_ns / 1e6,
			      s->alone > 0 ? "alone" : s->alone == 0 ? "shared" : "alone unknown");
	return n < 0 ? 0 : (size_t)n;
}

/* "TEXT (DETAIL)", or "TEXT (ITS OWN; DETAIL)" when the verdict's text has its own parentheses */
static size_t line_head(const struct vcpu_state *s, const char *detail, char *buf, size_t len)
{
	const char *t = vcpu_verdict_text(s->verdict);
	size_t tl = strlen(t);
	bool own = tl && t[tl - 1] == ')';
	int n = snprintf(buf, len, "vcpu %d: %.*s%s%s)", s->vcpu, (int)(own ? tl - 1 : tl), t, own ? "; " : " (", detail);

	return n < 0 ? 0 : (size_t)n;
}

void vcpu_state_line(const struct vcpu_state *s, char *buf, size_t len)
{
	char a[24], b[24], detail[96];
	size_t n;

	if (!len)
		return;
	if (s->kind == VCPU_HALT_WFI) {
		fmt_num(a, sizeof(a), s->wfi_exits);
		fmt_num(b, sizeof(b), s->doorbells);
		snprintf(detail, sizeof(detail), "wfi_exit_stat %s, policy %s", a, hp_trap_name(s->wfi_policy));
		n = line_head(s, detail, buf, len);
		if (n < len)
			n += s->vlpis < 0 ? (size_t)snprintf(buf + n, len - n, ", vLPIs unknown")
					  : (size_t)snprintf(buf + n, len - n, ", vLPIs %d", s->vlpis);
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, ", doorbells %s", b);
	} else {
		fmt_num(a, sizeof(a), s->hlt_exits);
		snprintf(detail, sizeof(detail), "halt_exits %s", a);
		n = line_head(s, detail, buf, len);
		if (n < len)
			n += s->hw_ipi < 0 ? (size_t)snprintf(buf + n, len - n, ", IPI path unknown")
					   : (size_t)snprintf(buf + n, len - n, ", IPIs %s, PV_SEND_IPI %s",
							      s->hw_ipi ? "by hardware (AVIC/IPIv)" : "exit to KVM",
							      s->pv_send_ipi > 0 ? "on" : "off");
	}
	if (n < len)
		n += line_polls(s, buf + n, len - n);
	if (n < len)
		line_thread(s, buf + n, len - n);
}

static void json_num(FILE *f, const char *key, int64_t v)
{
	if (v < 0)
		fprintf(f, ",\"%s\":null", key);
	else
		fprintf(f, ",\"%s\":%lld", key, (long long)v);
}

static void json_tri(FILE *f, const char *key, int v)
{
	fprintf(f, ",\"%s\":%s", key, v < 0 ? "null" : v ? "true" : "false");
}

void vcpu_state_json_one(const struct vcpu_state *s, FILE *f)
{
	const struct vcpu_thread_stat *t = &s->thread;

	fprintf(f, "{\"vcpu\":%d,\"kind\":\"%s\",\"verdict\":\"%s\",\"verdict_text\":", s->vcpu,
		s->kind == VCPU_HALT_WFI ? "wfi" : "hlt", vcpu_verdict_name(s->verdict));
	json_write_string(f, vcpu_verdict_text(s->verdict));
	fprintf(f, ",\"since\":\"%s\"", s->since ? s->since : "start");
	json_num(f, "exits", s->exits);
	if (s->kind == VCPU_HALT_WFI) {
		fprintf(f, ",\"wfi_trap_policy\":\"%s\",\"wfe_trap_policy\":\"%s\"", hp_trap_name(s->wfi_policy),
			hp_trap_name(s->wfe_policy));
		json_num(f, "wfi_exits", s->wfi_exits);
		json_num(f, "vlpis", s->vlpis);
		json_num(f, "doorbell_irq", s->doorbell_irq);
		json_num(f, "doorbells", s->doorbells);
	} else {
		fprintf(f, ",\"no_hlt_exit\":%s", s->no_hlt_exit ? "true" : "false");
		json_num(f, "hlt_exits", s->hlt_exits);
		json_tri(f, "hw_ipi", s->hw_ipi);
		json_tri(f, "pv_send_ipi", s->pv_send_ipi);
	}
	json_num(f, "halt_attempted_poll", s->polls_tried);
	json_num(f, "halt_successful_poll", s->polls_ok);
	json_num(f, "halt_poll_invalid", s->polls_invalid);
	fputs(",\"thread\":{\"cpu\":", f);
	if (t->cpu < 0)
		fputs("null", f);
	else
		fprintf(f, "%d", t->cpu);
	json_num(f, "voluntary_switches", t->voluntary);
	json_num(f, "preempted", t->preempted);
	json_num(f, "run_ns", t->run_ns);
	json_num(f, "wait_ns", t->wait_ns);
	fputc('}', f);
	json_tri(f, "alone_inferred", s->alone);
	fputc('}', f);
}

/* A member as a count: -1 when absent, null, negative, fractional or beyond max. */
static int64_t get_num(const struct json *o, const char *key, double max)
{
	const struct json *v = json_get(o, key);

	if (!v || v->t != JSON_NUM || !(v->num >= 0) || v->num > max || v->num != (double)(int64_t)v->num)
		return -1;
	return (int64_t)v->num;
}

static int get_tri(const struct json *o, const char *key)
{
	const struct json *v = json_get(o, key);

	return v && v->t == JSON_BOOL ? v->b : -1;
}

static const char *get_str(const struct json *o, const char *key)
{
	const struct json *v = json_get(o, key);

	return v && v->t == JSON_STR ? v->str : "";
}

static enum hp_trap trap_of(const char *name)
{
	for (enum hp_trap t = HP_TRAP_DEFAULT; t <= HP_TRAP_OTHER; t++)
		if (!strcmp(name, hp_trap_name(t)))
			return t;
	return HP_TRAP_OTHER;
}

int vcpu_state_from_json(const struct json *o, struct vcpu_state *s)
{
	/* 2^53: every integer below is exact in a double */
	const double big = 9007199254740992.0;

	if (!o || o->t != JSON_OBJ)
		return -EINVAL;
	const char *verdict = get_str(o, "verdict"), *since = get_str(o, "since");
	int64_t id = get_num(o, "vcpu", INT_MAX);
	int i;

	if (id < 0)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	for (i = 0; i < VCPU_NR_VERDICTS && strcmp(verdict, verdicts[i].name); i++)
		;
	if (i == VCPU_NR_VERDICTS)
		return -EINVAL;
	s->verdict = (enum vcpu_verdict)i;
	s->vcpu = (int)id;
	s->kind = !strcmp(get_str(o, "kind"), "hlt") ? VCPU_HALT_HLT : VCPU_HALT_WFI;
	s->since = !strcmp(since, "boot-end") ? "boot-end" : "start";
	s->wfi_policy = trap_of(get_str(o, "wfi_trap_policy"));
	s->wfe_policy = trap_of(get_str(o, "wfe_trap_policy"));
	s->no_hlt_exit = get_tri(o, "no_hlt_exit") > 0;
	s->exits = get_num(o, "exits", big);
	s->wfi_exits = get_num(o, "wfi_exits", big);
	s->hlt_exits = get_num(o, "hlt_exits", big);
	s->polls_tried = get_num(o, "halt_attempted_poll", big);
	s->polls_ok = get_num(o, "halt_successful_poll", big);
	s->polls_invalid = get_num(o, "halt_poll_invalid", big);
	s->vlpis = (int)get_num(o, "vlpis", INT_MAX);
	s->doorbell_irq = (long)get_num(o, "doorbell_irq", INT_MAX);
	s->doorbells = get_num(o, "doorbells", big);
	s->hw_ipi = get_tri(o, "hw_ipi");
	s->pv_send_ipi = get_tri(o, "pv_send_ipi");
	s->alone = get_tri(o, "alone_inferred");
	const struct json *t = json_get(o, "thread");

	s->thread = (struct vcpu_thread_stat){ -1, -1, -1, -1, -1 };
	if (t && t->t == JSON_OBJ)
		s->thread = (struct vcpu_thread_stat){ get_num(t, "voluntary_switches", big), get_num(t, "preempted", big),
						       get_num(t, "run_ns", big), get_num(t, "wait_ns", big),
						       (int)get_num(t, "cpu", INT_MAX) };
	return 0;
}

/* --- the running VM --- */

/* A small host file, NUL-terminated (NULL: unreadable); free() it. */
static char *read_text(const char *path)
{
	char *text, why[160];
	size_t len;

	if (host_text_read(path, &text, &len, why, sizeof(why)) < 0)
		return NULL;
	char *t = realloc(text, len + 1);

	if (!t) {
		free(text);
		return NULL;
	}
	t[len] = '\0';
	return t;
}

/* The vCPU thread's counters; all -1 once it has ended (its /proc/self/task entry goes with it). */
static void read_thread(struct vcpu *v, struct vcpu_thread_stat *t)
{
	char path[3][64];
	static const char *const file[3] = { "status", "schedstat", "stat" };
	char *text[3] = { NULL, NULL, NULL };
	int tid = atomic_load(&v->tid);

	for (int i = 0; tid > 0 && i < 3; i++) {
		snprintf(path[i], sizeof(path[i]), "/proc/self/task/%d/%s", tid, file[i]);
		text[i] = read_text(path[i]);
	}
	vcpu_state_parse_thread(text[0], text[1], text[2], t);
	for (int i = 0; i < 3; i++)
		free(text[i]);
	if (tid <= 0 && atomic_load(&v->end_preempted) >= 0) { /* ended: what it recorded as it did */
		t->voluntary = atomic_load(&v->end_voluntary);
		t->preempted = atomic_load(&v->end_preempted);
	}
}

/* A stat's delta in source src, bounded; -1 when the kernel has no such (scalar) stat. */
static int64_t delta_stat(const struct hp_set *set, const struct hp_delta *d, int src, const char *name)
{
	const struct hp_stat *hs = hp_stats_find(&set->src[src].st, name);

	if (!hs || hp_stat_is_hist(hs) || !hs->size)
		return -1;
	uint64_t v = hp_delta_values(d, src, hs)[0];

	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* hp_run's lock held: each vCPU's KVM counts over the run phase (from the guest's init when its
 * console said so, else from the start), as the exit summary's histograms count them. */
static void read_kvm(struct hp_run *r, struct vm *vm, struct vcpu_state *s, int n)
{
	struct hp_snap now;
	struct hp_delta d;

	if (!r->have_start || hp_snap_take(&now, &r->set, "vcpu-state") < 0)
		return;
	const struct hp_snap *from = r->have_boot_end ? &r->boot_end : &r->start;

	if (hp_delta_compute(&d, &r->set, from, &now) == 0) {
		for (int i = 0; i < n; i++) {
			char name[32];

			snprintf(name, sizeof(name), "vcpu%d", vm->vcpus[i]->id);
			for (int src = 0; src < r->set.nr; src++) {
				if (strcmp(r->set.src[src].name, name))
					continue;
				s[i].since = r->have_boot_end ? "boot-end" : "start";
				s[i].exits = delta_stat(&r->set, &d, src, "exits");
				s[i].wfi_exits = delta_stat(&r->set, &d, src, "wfi_exit_stat");
				s[i].hlt_exits = delta_stat(&r->set, &d, src, "halt_exits");
				s[i].polls_tried = delta_stat(&r->set, &d, src, "halt_attempted_poll");
				s[i].polls_ok = delta_stat(&r->set, &d, src, "halt_successful_poll");
				s[i].polls_invalid = delta_stat(&r->set, &d, src, "halt_poll_invalid");
			}
		}
		hp_delta_free(&d);
	}
	hp_snap_free(&now);
}

/* GICv4 doorbells: the host does not say whose a block is, so the newest one is taken as this
 * VM's (vcpu_state_doorbells), which holds while this VM is the last one started. */
static void read_doorbells(struct vm *vm, struct vcpu_state *s, int n)
{
	struct proc_interrupts pi;
	long line_of[VM_MAX_VCPUS];

	if (proc_interrupts_read(NULL, &pi) < 0)
		return;
	vcpu_state_doorbells(&pi, vm->nr_vcpus, line_of);
	for (int i = 0; i < n; i++)
		if (line_of[i] >= 0) {
			const struct irq_line *l = &pi.line[line_of[i]];

			s[i].doorbell_irq = (long)l->irq;
			s[i].doorbells = l->total > INT64_MAX ? INT64_MAX : (int64_t)l->total;
		}
	proc_interrupts_free(&pi);
}

/* The parts of the state that are the same for every vCPU: the host's policy, the IPI path. */
static void read_common(struct board *b, struct vcpu_state *c)
{
	const struct arch_ops *arch = b->machine.arch;
	char *cmdline = read_text("/proc/cmdline");
	struct arch_ipi_path ipi;

	*c = (struct vcpu_state){
		.kind = arch->vcpu_vlpis ? VCPU_HALT_WFI : VCPU_HALT_HLT, .no_hlt_exit = b->spec.no_hlt_exit,
		.since = "start", .exits = -1, .wfi_exits = -1, .hlt_exits = -1, .polls_tried = -1, .polls_ok = -1,
		.polls_invalid = -1, .vlpis = -1, .doorbell_irq = -1, .doorbells = -1, .alone = -1, .hw_ipi = -1,
		.pv_send_ipi = -1,
	};
	vcpu_state_parse_cmdline(cmdline, &c->wfi_policy, &c->wfe_policy);
	free(cmdline);
	if (arch->ipi_path && b->machine.arch_priv && arch->ipi_path(&b->machine, &ipi)) {
		c->hw_ipi = ipi.hw_ipi;
		c->pv_send_ipi = ipi.pv_send_ipi;
	}
}

int vcpu_state_read(struct board *b, struct vcpu_state *s, int n, bool stats_locked)
{
	struct vm *vm = &b->vm;
	int vlpis[VM_MAX_VCPUS];
	struct vcpu_state common;

	if (n > vm->nr_vcpus)
		n = vm->nr_vcpus;
	if (n <= 0)
		return 0;
	read_common(b, &common);
	for (int i = 0; i < n; i++) {
		s[i] = common;
		s[i].vcpu = vm->vcpus[i]->id;
		vlpis[i] = -1;
	}
	if (common.kind == VCPU_HALT_WFI) {
		b->machine.arch->vcpu_vlpis(vm, vlpis, n);
		read_doorbells(vm, s, n);
	}
	if (b->stats_open) {
		if (!stats_locked)
			pthread_mutex_lock(&b->stats.lock);
		read_kvm(&b->stats, vm, s, n);
		/* at exit the guest has usually shut its devices down and unmapped them: the count
		 * while they were mapped (the stats' vLPI window) is the one that governed halting */
		for (int i = 0; b->stats.win_vlpis && i < n; i++)
			if (b->stats.win_vlpis[i] > vlpis[i])
				vlpis[i] = b->stats.win_vlpis[i];
		if (!stats_locked)
			pthread_mutex_unlock(&b->stats.lock);
	}
	for (int i = 0; i < n; i++) {
		s[i].vlpis = vlpis[i] < 0 ? -1 : vlpis[i];
		read_thread(vm->vcpus[i], &s[i].thread);
		s[i].alone = vcpu_state_alone(&s[i].thread);
		s[i].verdict = vcpu_state_verdict(s[i].kind, s[i].wfi_policy, s[i].no_hlt_exit, s[i].vlpis, s[i].alone,
						  s[i].wfi_exits);
	}
	return n;
}

void vcpu_state_summary(struct board *b, FILE *f)
{
	struct vcpu_state s[VM_MAX_VCPUS];
	char line[512];
	int n = vcpu_state_read(b, s, VM_MAX_VCPUS, false);

	for (int i = 0; i < n; i++) {
		vcpu_state_line(&s[i], line, sizeof(line));
		fprintf(f, "vmm: %s\n", line);
	}
}

static void state_json(struct board *b, FILE *f, bool locked)
{
	struct vcpu_state s[VM_MAX_VCPUS];
	int n = vcpu_state_read(b, s, VM_MAX_VCPUS, locked);

	fputs(",\"vcpu_state\":[", f);
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		vcpu_state_json_one(&s[i], f);
	}
	fputc(']', f);
}

void vcpu_state_json(struct board *b, FILE *f)
{
	state_json(b, f, false);
}

void vcpu_state_json_locked(struct board *b, FILE *f)
{
	state_json(b, f, true);
}
