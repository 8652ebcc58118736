/* SPDX-License-Identifier: MIT */
/*
 * vmm's side of the guest latency probe: reads frames (guest/probe_proto.h) from a byte stream (a
 * virtio-console port) or from console text ("VMM-PROBE <base64>" lines), checks every one (the
 * guest is not trusted) and collects the samples per workload and vCPU for the stats.
 */
#ifndef VMM_GUEST_PROBE_DECODE_H
#define VMM_GUEST_PROBE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest/probe_proto.h"

/* All series together never hold more samples than this: memory stays bounded whatever the
 * guest claims in its START records. */
#define PROBE_DECODE_MAX_SAMPLES (1u << 22)

/* One workload's samples on one vCPU. */
struct probe_series {
	uint8_t workload;
	uint16_t cpu;
	uint32_t n, cap, alloc; /* samples held, the START's count, array size */
	uint64_t *t_ns;		/* guest CLOCK_MONOTONIC per sample */
	int64_t *v_ns;
	bool ended;
	struct probe_end end;
};

struct probe_decode_stats {
	uint64_t frames;	/* accepted */
	uint64_t garbage;	/* bytes skipped between frames (byte stream) */
	uint64_t bad_frames;	/* bad header, length or CRC */
	uint64_t bad_lines;	/* text lines with the prefix but no valid base64 frame */
	uint64_t bad_records;	/* a valid frame whose record breaks the rules (order, bounds) */
	uint64_t lost_frames;	/* gaps in the frame sequence */
	uint64_t count_mismatch; /* END records whose count differs from the samples received */
	uint64_t rejoined;	/* text frames put back together around kernel messages */
};

struct probe_decoder {
	struct probe_start start[PROBE_W_MAX + 1];
	bool started[PROBE_W_MAX + 1];
	struct probe_series *series;
	size_t nseries, series_alloc;
	uint64_t samples; /* over all series */
	uint64_t clock_ns, clocks; /* the last CLOCK frame's guest time; CLOCK frames so far */
	/* COUNTER frames (version 2): the first and the last, which span the samples */
	struct probe_counter counter[2];
	uint64_t counters;
	struct probe_decode_stats st;
	bool have_seq;
	uint32_t next_seq;
	uint8_t buf[PROBE_MAX_FRAME]; /* byte stream: a frame being reassembled */
	size_t blen;
	char line[2 * PROBE_TEXT_MAX]; /* text stream: the current line, room for a kernel message in it */
	size_t llen;
	bool line_overflow;
	/* a frame line a kernel message broke into: its base64 so far, waiting for the rest */
	char pend[PROBE_TEXT_MAX];
	size_t plen;
	unsigned int pend_lines; /* lines seen since; it is given up after PROBE_PEND_LINES */
	bool pending;
};

#define PROBE_PEND_LINES 64

void probe_decoder_init(struct probe_decoder *d);
void probe_decoder_free(struct probe_decoder *d);
/* Feed a byte stream of frames, in chunks of any size; garbage between frames is skipped. */
void probe_decode_bytes(struct probe_decoder *d, const void *buf, size_t len);
/* Feed console text, in chunks of any size; lines without the prefix are ignored. The kernel's
 * own messages reach a serial console whatever a process is writing, so one may land inside a
 * frame line ("VMM-PROBE AbC[   36.85] rcu: ...\r\n...dEf\r\n"): such a line waits for its rest,
 * the base64 that starts a later line, and the CRC decides whether the pieces belong together. */
void probe_decode_text(struct probe_decoder *d, const char *buf, size_t len);
/* One complete frame of exactly len bytes: 0 when accepted, -1 (and counted) when not. */
int probe_decode_frame(struct probe_decoder *d, const uint8_t *f, size_t len);
/* The series for (workload, cpu), or NULL. */
const struct probe_series *probe_series_get(const struct probe_decoder *d, unsigned int workload,
					    unsigned int cpu);
/* Everything that went wrong: bad frames, lines and records, lost frames, count mismatches. */
uint64_t probe_decode_errors(const struct probe_decoder *d);

#endif
