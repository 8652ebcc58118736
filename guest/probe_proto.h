/* SPDX-License-Identifier: MIT */
/*
 * The guest latency probe's framed output, shared by the guest (guest/probe.c, the encoder) and
 * vmm (guest/probe_decode.c). Plain C, no dependencies, so both sides build the same code.
 *
 * Every field is little-endian and packed byte by byte (never a struct copy), so the wire format
 * does not depend on either side's ABI. A frame:
 *
 *   off  size  field
 *     0     4  magic   "VPRB" (0x56 0x50 0x52 0x42)
 *     4     1  type    PROBE_T_*
 *     5     1  version PROBE_PROTO_VERSION (a decoder takes 1 and 2; 2 adds COUNTER)
 *     6     2  length  payload bytes (<= PROBE_MAX_PAYLOAD)
 *     8     4  seq     frame number, from 0, +1 per frame: a gap means frames were lost
 *    12     4  crc     CRC-32 (zlib's) over bytes 0..11 and the payload
 *    16     -  payload
 *
 * Payloads (lengths are exact; anything else is a corrupt frame):
 *
 *   START (24 bytes), one per workload before its samples:
 *     u8 workload, u8 flags (PROBE_F_*), u16 ncpus (online vCPUs), u32 count (samples per
 *     series), u64 interval_ns (timer, udp; 0 otherwise), u16 cpu_a, u16 cpu_b (ping-pong pair),
 *     u16 port (udp), u16 reserved (0)
 *   BATCH (8 + 16 * n bytes, 1 <= n <= PROBE_BATCH_MAX):
 *     u8 workload, u8 reserved (0), u16 cpu, u16 n, u16 reserved (0),
 *     then n times { u64 t_ns (guest CLOCK_MONOTONIC at the sample), s64 value_ns }
 *   END (48 bytes), one per series (workload, cpu) after its batches:
 *     u8 workload, u8 status (PROBE_S_*), u16 cpu, u32 count (samples sent),
 *     u32 overruns (timer: periods missed), u32 reserved (0),
 *     s64 min, s64 p50, s64 p99, s64 max (ns; 0 when count is 0)
 *
 *   CLOCK (8 bytes), before each workload: u64 the guest's CLOCK_MONOTONIC (ns) as it is written, so a
 *     host reading it as it arrives can place the samples' timestamps on its own clock
 *   COUNTER (32 bytes; version 2), before each workload and after its last END: u64 the guest's
 *     CLOCK_MONOTONIC (ns) and u64 the raw counter (arm64 CNTVCT_EL0, x86 RDTSC) read together, u32 the
 *     read's window (ns between the two clock reads around the counter's), u8 counter kind
 *     (PROBE_CNT_*), u8[3] reserved (0), u64 the counter's frequency (arm64 CNTFRQ_EL0; 0 unknown).
 *     Two of them map the samples' CLOCK_MONOTONIC onto the counter the host shares (issue 37's one
 *     clock); a version 1 guest sends none and its samples get no stage attribution.
 *
 * Series: timer has one per vCPU (cpu = the vCPU); ping-pong one, under cpu_a; udp one, cpu 0.
 *
 * On vmm's probe port (a virtio-console port named PROBE_PORT_NAME) frames travel as they are, back
 * to back. On a serial console frames travel as text lines "VMM-PROBE <base64 of the frame>\n", one frame
 * per line, so they survive a console that only carries text.
 */
#ifndef VMM_GUEST_PROBE_PROTO_H
#define VMM_GUEST_PROBE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PROBE_MAGIC 0x42525056u /* "VPRB" as little-endian bytes */
#define PROBE_PROTO_VERSION 2
#define PROBE_PROTO_VERSION_MIN 1
#define PROBE_HDR_SIZE 16
#define PROBE_BATCH_MAX 64
#define PROBE_SAMPLE_SIZE 16
#define PROBE_START_SIZE 24
#define PROBE_BATCH_HDR 8
#define PROBE_END_SIZE 48
#define PROBE_CLOCK_SIZE 8
#define PROBE_COUNTER_SIZE 32
#define PROBE_MAX_PAYLOAD (PROBE_BATCH_HDR + PROBE_BATCH_MAX * PROBE_SAMPLE_SIZE)
#define PROBE_MAX_FRAME (PROBE_HDR_SIZE + PROBE_MAX_PAYLOAD)
/* bounds a decoder holds the guest to (its values are hostile) */
#define PROBE_MAX_CPUS 1024
#define PROBE_MAX_COUNT 1000000u

/* The udp workload's datagrams (the probe to vmm's --probe-peer, vmm/probe_peer.c): a request is
 * PROBE_UDP_SIZE bytes, the u32 sequence number (the guest's byte order: only the guest reads it)
 * then zeros; its answer is the request with the last byte PROBE_UDP_ANSWER. A peer answers
 * requests only, never an answer, so two peers given each other's address and port as a request's
 * source (a guest can forge it) exchange one datagram, not an endless echo. */
#define PROBE_UDP_SIZE 16
#define PROBE_UDP_ANSWER 0x80

/* The virtio-console port (its PORT_NAME) vmm adds for the frames when vmm.probe= is given */
#define PROBE_PORT_NAME "org.vmm.probe"

#define PROBE_TEXT_PREFIX "VMM-PROBE "
/* a text line: prefix, base64 of the largest frame, newline */
#define PROBE_TEXT_MAX (sizeof(PROBE_TEXT_PREFIX) - 1 + 4 * ((PROBE_MAX_FRAME + 2) / 3) + 1)

enum probe_type { PROBE_T_START = 1, PROBE_T_BATCH = 2, PROBE_T_END = 3, PROBE_T_CLOCK = 4, PROBE_T_COUNTER = 5 };
enum probe_counter_kind { PROBE_CNT_ARM64 = 1, PROBE_CNT_X86_TSC = 2 };
enum probe_workload { PROBE_W_TIMER = 1, PROBE_W_PINGPONG = 2, PROBE_W_UDP = 3, PROBE_W_MAX = 3 };
enum probe_status { PROBE_S_OK = 0, PROBE_S_SKIPPED = 1, PROBE_S_ERROR = 2 };
#define PROBE_F_FIFO 0x01 /* the workload's threads ran SCHED_FIFO */

struct probe_start {
	uint8_t workload, flags;
	uint16_t ncpus;
	uint32_t count;
	uint64_t interval_ns;
	uint16_t cpu_a, cpu_b, port;
};

struct probe_sample {
	uint64_t t_ns;
	int64_t value_ns;
};

struct probe_batch {
	uint8_t workload;
	uint16_t cpu, n;
	struct probe_sample s[PROBE_BATCH_MAX];
};

struct probe_summary {
	uint32_t count;
	int64_t min, p50, p99, max;
};

struct probe_counter {
	uint64_t mono_ns, cnt, hz;
	uint32_t window_ns;
	uint8_t kind;
};

struct probe_end {
	uint8_t workload, status;
	uint16_t cpu;
	uint32_t overruns;
	struct probe_summary sum;
};

const char *probe_workload_name(unsigned int workload); /* NULL for an unknown id */

/* CRC-32 as zlib computes it (reflected 0xEDB88320, ~0 in and out); crc is the running value,
 * 0 to start. */
uint32_t probe_crc32(uint32_t crc, const void *buf, size_t len);

/* Payload encoders: write into p (PROBE_MAX_PAYLOAD bytes), return the payload length. */
size_t probe_put_start(uint8_t *p, const struct probe_start *s);
size_t probe_put_batch(uint8_t *p, const struct probe_batch *b); /* b->n in 1..PROBE_BATCH_MAX */
size_t probe_put_end(uint8_t *p, const struct probe_end *e);
size_t probe_put_clock(uint8_t *p, uint64_t ns);
size_t probe_put_counter(uint8_t *p, const struct probe_counter *c);

/* Payload decoders: 0, or -1 when len or a field is not what the format allows. */
int probe_get_start(const uint8_t *p, size_t len, struct probe_start *s);
int probe_get_batch(const uint8_t *p, size_t len, struct probe_batch *b);
int probe_get_end(const uint8_t *p, size_t len, struct probe_end *e);
int probe_get_clock(const uint8_t *p, size_t len, uint64_t *ns);
int probe_get_counter(const uint8_t *p, size_t len, struct probe_counter *c);

/* A whole frame around payload (len <= PROBE_MAX_PAYLOAD) into out (PROBE_MAX_FRAME bytes);
 * returns the frame length. */
size_t probe_frame(uint8_t *out, uint8_t type, uint32_t seq, const uint8_t *payload, size_t len);

/* The frame header at f (PROBE_HDR_SIZE bytes) checked for magic, version and length bound; 0 with
 * *type, *len and *seq filled, or -1. The CRC needs the payload: probe_frame_crc_ok. */
int probe_frame_header(const uint8_t *f, uint8_t *type, uint16_t *len, uint32_t *seq);
int probe_frame_crc_ok(const uint8_t *f, size_t frame_len);

/* Base64 (RFC 4648, padded). encode: writes 4 * ceil(len / 3) chars and a NUL, returns the char
 * count. decode: strict (alphabet, padding only at the end, length a multiple of 4); returns the
 * byte count, or -1 when invalid or larger than cap. */
size_t probe_b64_encode(char *out, const uint8_t *in, size_t len);
long probe_b64_decode(uint8_t *out, size_t cap, const char *in, size_t len);

/* min/p50/p99/max of v[0..n) (nearest-rank percentiles); sorts v in place. */
void probe_summarize(int64_t *v, size_t n, struct probe_summary *s);

#endif
