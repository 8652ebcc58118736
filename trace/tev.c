// SPDX-License-Identifier: MIT
/* perf ring records into struct tev. The events are opened with sample_type IDENTIFIER | TID |
 * TIME | CPU | RAW and sample_id_all, so a PERF_RECORD_SAMPLE is, per <linux/perf_event.h>:
 *	header; u64 id; u32 pid, tid; u64 time; u32 cpu, res; u32 size; char data[size]; (padding)
 * and data is the tracepoint's raw record, read through its format. A PERF_RECORD_LOST is
 * header; u64 id; u64 lost; sample_id. Every length is checked against header.size and header.size
 * against the buffer: nothing is read outside either. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <string.h>

#include "trace/trace.h"

/* The fixed part of a sample with those sample_type bits, up to RAW's size. */
struct tev_sample_head {
	struct perf_event_header h;
	uint64_t id;	      /* PERF_SAMPLE_IDENTIFIER */
	uint32_t pid, tid;    /* PERF_SAMPLE_TID */
	uint64_t time;	      /* PERF_SAMPLE_TIME */
	uint32_t cpu, res;    /* PERF_SAMPLE_CPU */
};
_Static_assert(sizeof(struct tev_sample_head) == 40, "no padding: the fields are the record's bytes");

/* PERF_RECORD_LOST up to its count (the sample_id after it is not needed). */
struct tev_lost_head {
	struct perf_event_header h;
	uint64_t id, lost;
};

/* PERF_RECORD_LOST_SAMPLES up to its count. */
struct tev_lost_samples_head {
	struct perf_event_header h;
	uint64_t lost;
};

/* What a kind reads: for a, b and c, the field's name (or a second name: the other
 * architecture's), and whether the kind works without it. */
struct kind_desc {
	const char *system, *event;
	const char *field[3][2];
	bool optional[3];
};

static const struct kind_desc kinds[TEV_KIND_MAX] = {
	[TEV_KVM_ENTRY] = { "kvm", "kvm_entry", { { 0 } }, { false } },
	/* arm64's esr_ec, x86's exit_reason; ret only on arm64 */
	[TEV_KVM_EXIT] = { "kvm", "kvm_exit", { { "esr_ec", "exit_reason" }, { "ret" } }, { false, true } },
	[TEV_VCPU_WAKEUP] = { "kvm", "kvm_vcpu_wakeup", { { "ns" }, { "waited" } }, { false } },
	[TEV_WFX] = { "kvm", "kvm_wfx_arm64", { { "is_wfe" } }, { false } },
	[TEV_TIMER_UPDATE_IRQ] = { "kvm", "kvm_timer_update_irq", { { "vcpu_id" }, { "irq" }, { "level" } }, { false } },
	[TEV_IRQ_ENTRY] = { "irq", "irq_handler_entry", { { "irq" } }, { false } },
	[TEV_IRQ_EXIT] = { "irq", "irq_handler_exit", { { "irq" }, { "ret" } }, { false } },
	[TEV_SCHED_WAKING] = { "sched", "sched_waking", { { "pid" }, { "target_cpu" } }, { false } },
	[TEV_SCHED_SWITCH] = { "sched", "sched_switch", { { "prev_pid" }, { "next_pid" }, { "prev_state" } },
			       { false } },
	[TEV_HRTIMER_ENTRY] = { "timer", "hrtimer_expire_entry", { { "function" } }, { false } },
	[TEV_HRTIMER_EXIT] = { "timer", "hrtimer_expire_exit", { { 0 } }, { false } },
};

static const struct kind_desc *kind_desc(unsigned int kind)
{
	return kind > TEV_NONE && kind < TEV_KIND_MAX ? &kinds[kind] : NULL;
}

const char *tev_kind_name(unsigned int kind)
{
	const struct kind_desc *k = kind_desc(kind);

	return k ? k->event : NULL;
}

const char *tev_kind_system(unsigned int kind)
{
	const struct kind_desc *k = kind_desc(kind);

	return k ? k->system : NULL;
}

void tev_decoder_init(struct tev_decoder *d)
{
	d->n = 0;
	d->lost = d->bad = d->other = 0;
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	if (err && errsize) {
		va_start(ap, fmt);
		vsnprintf(err, errsize, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A field a/b/c of kind k in fmt: the first of its names present. 0 with *out (NULL when an
 * optional field is absent), or -EINVAL with the message. */
static int kind_field(const struct kind_desc *k, unsigned int i, const struct tp_format *fmt,
		      const struct tp_field **out, char *err, size_t errsize)
{
	const char *const *names = k->field[i];
	const struct tp_field *f = NULL;

	*out = NULL;
	if (!names[0])
		return 0;
	for (unsigned int j = 0; j < 2 && names[j] && !f; j++)
		f = tp_field_find(fmt, names[j]);
	if (!f) {
		if (k->optional[i])
			return 0;
		return fail(err, errsize, "%s:%s: the format has no field %s%s%s", k->system, k->event, names[0],
			    names[1] ? " or " : "", names[1] ? names[1] : "");
	}
	if (f->is_array || (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8))
		return fail(err, errsize, "%s:%s: field %s is not a number (%s%u bytes)", k->system, k->event, f->name,
			    f->is_array ? "an array, " : "", f->size);
	*out = f;
	return 0;
}

void tev_decoder_remove(struct tev_decoder *d, uint64_t perf_id)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->id[i].perf_id == perf_id) {
			d->id[i] = d->id[--d->n];
			return;
		}
}

int tev_decoder_add(struct tev_decoder *d, uint64_t perf_id, unsigned int kind, const struct tp_format *fmt,
		    char *err, size_t errsize)
{
	const struct kind_desc *k = kind_desc(kind);
	const struct tp_field *f[3];
	int r;

	if (!k)
		return fail(err, errsize, "event kind %u is not one vmm knows", kind);
	if (!fmt)
		return fail(err, errsize, "%s:%s: no format", k->system, k->event);
	for (unsigned int i = 0; i < 3; i++) {
		r = kind_field(k, i, fmt, &f[i], err, errsize);
		if (r)
			return r;
	}
	for (size_t i = 0; i < d->n; i++)
		if (d->id[i].perf_id == perf_id)
			return fail(err, errsize, "%s:%s: perf id %llu is already %s's", k->system, k->event,
				    (unsigned long long)perf_id, tev_kind_name(d->id[i].kind));
	if (d->n == TEV_IDS_MAX) {
		if (err && errsize)
			snprintf(err, errsize, "%s:%s: more than %d events opened", k->system, k->event, TEV_IDS_MAX);
		return -ENOSPC;
	}
	d->id[d->n].perf_id = perf_id;
	d->id[d->n].kind = (uint16_t)kind;
	d->id[d->n].fmt = fmt;
	d->id[d->n].fa = f[0];
	d->id[d->n].fb = f[1];
	d->id[d->n].fc = f[2];
	d->n++;
	return 0;
}

/* The table's index of perf_id, or -1. */
static long decoder_find(const struct tev_decoder *d, uint64_t perf_id)
{
	for (size_t i = 0; i < d->n && i < TEV_IDS_MAX; i++)
		if (d->id[i].perf_id == perf_id)
			return (long)i;
	return -1;
}

/* An optional field absent reads as 0; a present one must lie within the raw record. */
static bool read_opt(const struct tp_field *f, const uint8_t *raw, uint32_t raw_len, int64_t *v)
{
	*v = 0;
	return !f || tp_field_read(f, raw, raw_len, v) == 0;
}

/* One PERF_RECORD_SAMPLE of size bytes (size >= the header, within the buffer): its event, or
 * false when it breaks a bound or names an unknown id. */
static bool decode_sample(const struct tev_decoder *d, const uint8_t *rec, size_t size, struct tev *ev)
{
	struct tev_sample_head s;
	uint32_t raw_len;
	long i;

	if (size < sizeof(s) + sizeof(raw_len))
		return false;
	memcpy(&s, rec, sizeof(s));
	memcpy(&raw_len, rec + sizeof(s), sizeof(raw_len));
	if (raw_len > size - sizeof(s) - sizeof(raw_len))
		return false;
	i = decoder_find(d, s.id);
	if (i < 0)
		return false;

	const uint8_t *raw = rec + sizeof(s) + sizeof(raw_len);

	*ev = (struct tev){ .t = s.time, .cpu = s.cpu, .tid = (int32_t)s.tid, .kind = d->id[i].kind };
	return read_opt(d->id[i].fa, raw, raw_len, &ev->a) && read_opt(d->id[i].fb, raw, raw_len, &ev->b) &&
	       read_opt(d->id[i].fc, raw, raw_len, &ev->c);
}

/* A LOST or LOST_SAMPLES record: its count, or false when it is too short to hold one. */
static bool decode_lost(uint32_t type, const uint8_t *rec, size_t size, uint64_t *lost)
{
	if (type == PERF_RECORD_LOST) {
		struct tev_lost_head l;

		if (size < sizeof(l))
			return false;
		memcpy(&l, rec, sizeof(l));
		*lost = l.lost;
	} else {
		struct tev_lost_samples_head l;

		if (size < sizeof(l))
			return false;
		memcpy(&l, rec, sizeof(l));
		*lost = l.lost;
	}
	return true;
}

size_t tev_decode(struct tev_decoder *d, const void *buf, size_t len, void (*emit)(const struct tev *ev, void *opaque),
		  void *opaque)
{
	const uint8_t *p = buf;
	size_t at = 0;

	while (len - at >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		struct tev ev;
		uint64_t lost;

		memcpy(&h, p + at, sizeof(h));
		/* a size below the header's cannot be stepped over; one past len is a record cut */
		if (h.size < sizeof(h) || h.size > len - at) {
			d->bad++;
			break;
		}
		if (h.type == PERF_RECORD_SAMPLE) {
			if (!decode_sample(d, p + at, h.size, &ev))
				d->bad++;
			else if (emit)
				emit(&ev, opaque);
		} else if (h.type == PERF_RECORD_LOST || h.type == PERF_RECORD_LOST_SAMPLES) {
			if (decode_lost(h.type, p + at, h.size, &lost))
				d->lost += lost;
			else
				d->bad++;
		} else {
			d->other++;
		}
		at += h.size;
	}
	/* a few bytes left, fewer than a header: a cut record too */
	if (at < len && len - at < sizeof(struct perf_event_header))
		d->bad++;
	return at;
}
