// SPDX-License-Identifier: MIT
/*
 * The probe's frame encoding, built twice: into the guest's /init (which writes frames) and into
 * libvmm (whose decoder reads them), so both ends share one definition of the wire format.
 */
#include <stdlib.h>
#include <string.h>

#include "guest/probe_proto.h"

const char *probe_workload_name(unsigned int workload)
{
	switch (workload) {
	case PROBE_W_TIMER:
		return "timer";
	case PROBE_W_PINGPONG:
		return "pingpong";
	case PROBE_W_UDP:
		return "udp";
	}
	return NULL;
}

/* The reflected CRC-32 table (polynomial 0xEDB88320), as const data: no set-up, no mutable state. */
static const uint32_t crc_table[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba, 0x076dc419, 0x706af48f,
	0xe963a535, 0x9e6495a3, 0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
	0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91, 0x1db71064, 0x6ab020f2,
	0xf3b97148, 0x84be41de, 0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
	0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec, 0x14015c4f, 0x63066cd9,
	0xfa0f3d63, 0x8d080df5, 0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
	0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b, 0x35b5a8fa, 0x42b2986c,
	0xdbbbc9d6, 0xacbcf940, 0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
	0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116, 0x21b4f4b5, 0x56b3c423,
	0xcfba9599, 0xb8bda50f, 0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
	0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d, 0x76dc4190, 0x01db7106,
	0x98d220bc, 0xefd5102a, 0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
	0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818, 0x7f6a0dbb, 0x086d3d2d,
	0x91646c97, 0xe6635c01, 0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457, 0x65b0d9c6, 0x12b7e950,
	0x8bbeb8ea, 0xfcb9887c, 0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
	0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2, 0x4adfa541, 0x3dd895d7,
	0xa4d1c46d, 0xd3d6f4fb, 0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
	0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9, 0x5005713c, 0x270241aa,
	0xbe0b1010, 0xc90c2086, 0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
	0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4, 0x59b33d17, 0x2eb40d81,
	0xb7bd5c3b, 0xc0ba6cad, 0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
	0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683, 0xe3630b12, 0x94643b84,
	0x0d6d6a3e, 0x7a6a5aa8, 0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
	0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe, 0xf762575d, 0x806567cb,
	0x196c3671, 0x6e6b06e7, 0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
	0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5, 0xd6d6a3e8, 0xa1d1937e,
	0x38d8c2c4, 0x4fdff252, 0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60, 0xdf60efc3, 0xa867df55,
	0x316e8eef, 0x4669be79, 0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
	0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f, 0xc5ba3bbe, 0xb2bd0b28,
	0x2bb45a92, 0x5cb36a04, 0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
	0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a, 0x9c0906a9, 0xeb0e363f,
	0x72076785, 0x05005713, 0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
	0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21, 0x86d3d2d4, 0xf1d4e242,
	0x68ddb3f8, 0x1fda836e, 0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
	0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c, 0x8f659eff, 0xf862ae69,
	0x616bffd3, 0x166ccf45, 0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
	0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db, 0xaed16a4a, 0xd9d65adc,
	0x40df0b66, 0x37d83bf0, 0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
	0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6, 0xbad03605, 0xcdd70693,
	0x54de5729, 0x23d967bf, 0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

uint32_t probe_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

size_t probe_put_start(uint8_t *p, const struct probe_start *s)
{
	memset(p, 0, PROBE_START_SIZE);
	p[0] = s->workload;
	p[1] = s->flags;
	put16(p + 2, s->ncpus);
	put32(p + 4, s->count);
	put64(p + 8, s->interval_ns);
	put16(p + 16, s->cpu_a);
	put16(p + 18, s->cpu_b);
	put16(p + 20, s->port);
	return PROBE_START_SIZE;
}

int probe_get_start(const uint8_t *p, size_t len, struct probe_start *s)
{
	if (len != PROBE_START_SIZE || get16(p + 22))
		return -1;
	s->workload = p[0];
	s->flags = p[1];
	s->ncpus = get16(p + 2);
	s->count = get32(p + 4);
	s->interval_ns = get64(p + 8);
	s->cpu_a = get16(p + 16);
	s->cpu_b = get16(p + 18);
	s->port = get16(p + 20);
	if (!probe_workload_name(s->workload) || (s->flags & ~PROBE_F_FIFO))
		return -1;
	return 0;
}

size_t probe_put_batch(uint8_t *p, const struct probe_batch *b)
{
	p[0] = b->workload;
	p[1] = 0;
	put16(p + 2, b->cpu);
	put16(p + 4, b->n);
	put16(p + 6, 0);
	for (unsigned int i = 0; i < b->n; i++) {
		uint8_t *q = p + PROBE_BATCH_HDR + i * PROBE_SAMPLE_SIZE;

		put64(q, b->s[i].t_ns);
		put64(q + 8, (uint64_t)b->s[i].value_ns);
	}
	return PROBE_BATCH_HDR + (size_t)b->n * PROBE_SAMPLE_SIZE;
}

int probe_get_batch(const uint8_t *p, size_t len, struct probe_batch *b)
{
	if (len < PROBE_BATCH_HDR || p[1] || get16(p + 6))
		return -1;
	b->workload = p[0];
	b->cpu = get16(p + 2);
	b->n = get16(p + 4);
	if (!probe_workload_name(b->workload) || b->n == 0 || b->n > PROBE_BATCH_MAX ||
	    len != PROBE_BATCH_HDR + (size_t)b->n * PROBE_SAMPLE_SIZE)
		return -1;
	for (unsigned int i = 0; i < b->n; i++) {
		const uint8_t *q = p + PROBE_BATCH_HDR + i * PROBE_SAMPLE_SIZE;

		b->s[i].t_ns = get64(q);
		b->s[i].value_ns = (int64_t)get64(q + 8);
	}
	return 0;
}

size_t probe_put_end(uint8_t *p, const struct probe_end *e)
{
	memset(p, 0, PROBE_END_SIZE);
	p[0] = e->workload;
	p[1] = e->status;
	put16(p + 2, e->cpu);
	put32(p + 4, e->sum.count);
	put32(p + 8, e->overruns);
	put64(p + 16, (uint64_t)e->sum.min);
	put64(p + 24, (uint64_t)e->sum.p50);
	put64(p + 32, (uint64_t)e->sum.p99);
	put64(p + 40, (uint64_t)e->sum.max);
	return PROBE_END_SIZE;
}

int probe_get_end(const uint8_t *p, size_t len, struct probe_end *e)
{
	if (len != PROBE_END_SIZE || get32(p + 12))
		return -1;
	e->workload = p[0];
	e->status = p[1];
	e->cpu = get16(p + 2);
	e->sum.count = get32(p + 4);
	e->overruns = get32(p + 8);
	e->sum.min = (int64_t)get64(p + 16);
	e->sum.p50 = (int64_t)get64(p + 24);
	e->sum.p99 = (int64_t)get64(p + 32);
	e->sum.max = (int64_t)get64(p + 40);
	if (!probe_workload_name(e->workload) || e->status > PROBE_S_ERROR)
		return -1;
	/* a summary must be ordered; an empty one all zero */
	if (e->sum.count ? !(e->sum.min <= e->sum.p50 && e->sum.p50 <= e->sum.p99 &&
			     e->sum.p99 <= e->sum.max)
			 : (e->sum.min | e->sum.p50 | e->sum.p99 | e->sum.max))
		return -1;
	return 0;
}

size_t probe_put_clock(uint8_t *p, uint64_t ns)
{
	put64(p, ns);
	return PROBE_CLOCK_SIZE;
}

int probe_get_clock(const uint8_t *p, size_t len, uint64_t *ns)
{
	if (len != PROBE_CLOCK_SIZE)
		return -1;
	*ns = get64(p);
	return 0;
}

size_t probe_put_counter(uint8_t *p, const struct probe_counter *c)
{
	memset(p, 0, PROBE_COUNTER_SIZE);
	put64(p, c->mono_ns);
	put64(p + 8, c->cnt);
	put32(p + 16, c->window_ns);
	p[20] = c->kind;
	put64(p + 24, c->hz);
	return PROBE_COUNTER_SIZE;
}

int probe_get_counter(const uint8_t *p, size_t len, struct probe_counter *c)
{
	if (len != PROBE_COUNTER_SIZE || p[21] || p[22] || p[23])
		return -1;
	c->mono_ns = get64(p);
	c->cnt = get64(p + 8);
	c->window_ns = get32(p + 16);
	c->kind = p[20];
	c->hz = get64(p + 24);
	return c->kind == PROBE_CNT_ARM64 || c->kind == PROBE_CNT_X86_TSC ? 0 : -1;
}

size_t probe_frame(uint8_t *out, uint8_t type, uint32_t seq, const uint8_t *payload, size_t len)
{
	put32(out, PROBE_MAGIC);
	out[4] = type;
	out[5] = PROBE_PROTO_VERSION;
	put16(out + 6, (uint16_t)len);
	put32(out + 8, seq);
	memcpy(out + PROBE_HDR_SIZE, payload, len);
	uint32_t crc = probe_crc32(0, out, 12);

	put32(out + 12, probe_crc32(crc, payload, len));
	return PROBE_HDR_SIZE + len;
}

int probe_frame_header(const uint8_t *f, uint8_t *type, uint16_t *len, uint32_t *seq)
{
	if (get32(f) != PROBE_MAGIC || f[5] < PROBE_PROTO_VERSION_MIN || f[5] > PROBE_PROTO_VERSION || get16(f + 6) > PROBE_MAX_PAYLOAD)
		return -1;
	*type = f[4];
	*len = get16(f + 6);
	*seq = get32(f + 8);
	return 0;
}

int probe_frame_crc_ok(const uint8_t *f, size_t frame_len)
{
	uint32_t crc = probe_crc32(0, f, 12);

	return probe_crc32(crc, f + PROBE_HDR_SIZE, frame_len - PROBE_HDR_SIZE) == get32(f + 12);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t probe_b64_encode(char *out, const uint8_t *in, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < len ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? b64[v & 63] : '=';
	}
	out[o] = 0;
	return o;
}

static int b64_val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long probe_b64_decode(uint8_t *out, size_t cap, const char *in, size_t len)
{
	size_t o = 0;

	if (len % 4)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int v[4], pad = 0;

		for (int k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == len && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (pad || (v[k] = b64_val(in[i + k])) < 0) {
				return -1; /* a bad char, or data after '=' */
			}
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		size_t n = 3 - (size_t)pad;

		if (o + n > cap)
			return -1;
		out[o++] = (uint8_t)(w >> 16);
		if (n > 1)
			out[o++] = (uint8_t)(w >> 8);
		if (n > 2)
			out[o++] = (uint8_t)w;
	}
	return (long)o;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p% of the samples at or below it. */
static int64_t rank(const int64_t *v, size_t n, unsigned int p)
{
	size_t r = (n * p + 99) / 100;

	return v[r ? r - 1 : 0];
}

void probe_summarize(int64_t *v, size_t n, struct probe_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->count = (uint32_t)n;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp64);
	s->min = v[0];
	s->p50 = rank(v, n, 50);
	s->p99 = rank(v, n, 99);
	s->max = v[n - 1];
}
