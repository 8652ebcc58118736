// SPDX-License-Identifier: MIT
/*
 * The guest probe's frames: encoded with the code the guest uses (guest/probe_proto.c), decoded
 * by libvmm's decoder from bytes and from console text; corrupt, truncated and oversized frames,
 * garbage between frames and records that break the rules are refused and counted, and the
 * frames around them still decode. The probe itself (guest/probe*.c, linked in as the guest
 * builds them) is checked for strict spec parsing and run for a few samples end to end.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "guest/probe.h"
#include "guest/probe_decode.h"
#include "guest/probe_internal.h"
#include "kselftest_harness.h"

/* A byte stream of frames, built as the guest builds it. */
struct stream {
	uint8_t *buf;
	size_t len, cap;
	uint32_t seq;
	size_t off[64]; /* where each frame starts */
	unsigned int nframes;
};

static void put(struct stream *s, const void *p, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2;
		s->buf = realloc(s->buf, s->cap);
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void frame(struct stream *s, uint8_t type, const uint8_t *payload, size_t len)
{
	uint8_t f[PROBE_MAX_FRAME];

	if (s->nframes < 64)
		s->off[s->nframes++] = s->len;
	put(s, f, probe_frame(f, type, s->seq++, payload, len));
}

static void start(struct stream *s, uint8_t w, uint16_t ncpus, uint32_t count)
{
	struct probe_start st = { .workload = w, .ncpus = ncpus, .count = count,
				  .interval_ns = 1000000, .cpu_a = 0, .cpu_b = 1 };
	uint8_t p[PROBE_MAX_PAYLOAD];

	frame(s, PROBE_T_START, p, probe_put_start(p, &st));
}

/* n samples for (w, cpu): t = 1000 * i, value = cpu * 100000 + i + 1, in batches. */
static void samples(struct stream *s, uint8_t w, uint16_t cpu, uint32_t n)
{
	struct probe_batch b = { .workload = w, .cpu = cpu };
	uint8_t p[PROBE_MAX_PAYLOAD];

	for (uint32_t i = 0; i < n; i += b.n) {
		b.n = (uint16_t)(n - i < PROBE_BATCH_MAX ? n - i : PROBE_BATCH_MAX);
		for (unsigned int k = 0; k < b.n; k++)
			b.s[k] = (struct probe_sample){ 1000ull * (i + k), cpu * 100000 + i + k + 1 };
		frame(s, PROBE_T_BATCH, p, probe_put_batch(p, &b));
	}
}

static void end(struct stream *s, uint8_t w, uint16_t cpu, uint32_t n)
{
	struct probe_end e = { .workload = w, .cpu = cpu, .sum = { n, 1, 2, 3, 4 } };
	uint8_t p[PROBE_MAX_PAYLOAD];

	if (!n)
		e.sum = (struct probe_summary){ 0 };
	frame(s, PROBE_T_END, p, probe_put_end(p, &e));
}

/* Timer on 2 vCPUs (n samples each), then ping-pong (n). */
static void run(struct stream *s, uint32_t n)
{
	start(s, PROBE_W_TIMER, 2, n);
	for (uint16_t cpu = 0; cpu < 2; cpu++) {
		samples(s, PROBE_W_TIMER, cpu, n);
		end(s, PROBE_W_TIMER, cpu, n);
	}
	start(s, PROBE_W_PINGPONG, 2, n);
	samples(s, PROBE_W_PINGPONG, 0, n);
	end(s, PROBE_W_PINGPONG, 0, n);
}

static void check_series(struct __test_metadata *_metadata, const struct probe_decoder *d,
			 unsigned int w, unsigned int cpu, uint32_t n)
{
	const struct probe_series *s = probe_series_get(d, w, cpu);

	ASSERT_NE(NULL, s);
	ASSERT_EQ(n, s->n);
	EXPECT_TRUE(s->ended);
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_EQ(1000ull * i, s->t_ns[i]);
		ASSERT_EQ((int64_t)(cpu * 100000 + i + 1), s->v_ns[i]);
	}
}

/* Console text for a stream: one line per frame, as the guest writes them, CRLF as a tty adds. */
static char *as_text(const struct stream *s, size_t *len)
{
	size_t cap = s->nframes * (PROBE_TEXT_MAX + 4) + 1, o = 0;
	char *t = malloc(cap);

	for (unsigned int i = 0; i < s->nframes; i++) {
		size_t fl = (i + 1 < s->nframes ? s->off[i + 1] : s->len) - s->off[i];

		o += (size_t)sprintf(t + o, PROBE_TEXT_PREFIX);
		o += probe_b64_encode(t + o, s->buf + s->off[i], fl);
		o += (size_t)sprintf(t + o, "\r\n");
	}
	*len = o;
	return t;
}

FIXTURE(dec) {
	struct probe_decoder d;
	struct stream s;
};
FIXTURE_SETUP(dec)
{
	probe_decoder_init(&self->d);
	memset(&self->s, 0, sizeof(self->s));
}
FIXTURE_TEARDOWN(dec)
{
	probe_decoder_free(&self->d);
	free(self->s.buf);
}

TEST(crc32_is_zlibs)
{
	uint8_t buf[1000];

	EXPECT_EQ(0xcbf43926u, probe_crc32(0, "123456789", 9));
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	for (size_t n = 0; n <= sizeof(buf); n += 37)
		ASSERT_EQ(crc32(0, buf, (uInt)n), probe_crc32(0, buf, n));
	/* in pieces, as the frame encoder feeds it */
	EXPECT_EQ(crc32(0, buf, 1000), probe_crc32(probe_crc32(0, buf, 12), buf + 12, 988));
}

TEST(base64_round_trip_and_strict)
{
	uint8_t in[100], out[100];
	char t[200];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 97 + 1);
	for (size_t n = 0; n <= sizeof(in); n++) {
		size_t tl = probe_b64_encode(t, in, n);

		ASSERT_EQ(4 * ((n + 2) / 3), tl);
		ASSERT_EQ((long)n, probe_b64_decode(out, sizeof(out), t, tl));
		ASSERT_EQ(0, memcmp(in, out, n));
	}
	EXPECT_EQ(5, probe_b64_decode(out, sizeof(out), "aGVsbG8=", 8));
	EXPECT_EQ(-1, probe_b64_decode(out, sizeof(out), "aGVsbG8", 7));   /* length */
	EXPECT_EQ(-1, probe_b64_decode(out, sizeof(out), "aGV*bG8=", 8));  /* alphabet */
	EXPECT_EQ(-1, probe_b64_decode(out, sizeof(out), "aG=sbG8=", 8));  /* '=' inside */
	EXPECT_EQ(-1, probe_b64_decode(out, sizeof(out), "aGVs=G8=", 8));
	EXPECT_EQ(-1, probe_b64_decode(out, sizeof(out), "a===", 4));
	EXPECT_EQ(-1, probe_b64_decode(out, 4, "aGVsbG8=", 8));	     /* too big for out */
}

TEST(summary_nearest_rank)
{
	int64_t v[200];
	struct probe_summary s;

	for (int i = 0; i < 200; i++)
		v[i] = 200 - i; /* 1..200, reversed */
	probe_summarize(v, 200, &s);
	EXPECT_EQ(200, s.count);
	EXPECT_EQ(1, s.min);
	EXPECT_EQ(100, s.p50);
	EXPECT_EQ(198, s.p99);
	EXPECT_EQ(200, s.max);
	v[0] = 42;
	probe_summarize(v, 1, &s);
	EXPECT_EQ(42, s.min);
	EXPECT_EQ(42, s.p50);
	EXPECT_EQ(42, s.p99);
	EXPECT_EQ(42, s.max);
	probe_summarize(v, 0, &s);
	EXPECT_EQ(0, s.count);
	EXPECT_EQ(0, s.max);
}

TEST_F(dec, bytes_whole_and_byte_by_byte)
{
	run(&self->s, 150);
	probe_decode_bytes(&self->d, self->s.buf, self->s.len);
	EXPECT_EQ(0, probe_decode_errors(&self->d));
	EXPECT_EQ(0, self->d.st.garbage);
	EXPECT_EQ(self->s.seq, self->d.st.frames);
	check_series(_metadata, &self->d, PROBE_W_TIMER, 0, 150);
	check_series(_metadata, &self->d, PROBE_W_TIMER, 1, 150);
	check_series(_metadata, &self->d, PROBE_W_PINGPONG, 0, 150);
	EXPECT_EQ(2, self->d.start[PROBE_W_TIMER].ncpus);
	EXPECT_EQ(1000000, self->d.start[PROBE_W_TIMER].interval_ns);

	struct probe_decoder d2;

	probe_decoder_init(&d2);
	for (size_t i = 0; i < self->s.len; i++)
		probe_decode_bytes(&d2, self->s.buf + i, 1);
	EXPECT_EQ(0, probe_decode_errors(&d2));
	EXPECT_EQ(self->s.seq, d2.st.frames);
	check_series(_metadata, &d2, PROBE_W_PINGPONG, 0, 150);
	probe_decoder_free(&d2);
	/* joining late: the frames before the first one seen count as lost */
	probe_decode_bytes(&d2, self->s.buf + self->s.off[2], self->s.len - self->s.off[2]);
	EXPECT_EQ(2, d2.st.lost_frames);
	probe_decoder_free(&d2);
}

TEST_F(dec, garbage_between_frames_is_skipped)
{
	struct stream g = { 0 };
	static const char junk[] = "login: \r\n[    1.23] random console text VPR\0\xff VP";

	run(&self->s, 100);
	/* the same frames with junk (including a magic's first bytes) before each of them */
	for (unsigned int i = 0; i < self->s.nframes; i++) {
		size_t fl = (i + 1 < self->s.nframes ? self->s.off[i + 1] : self->s.len) - self->s.off[i];

		put(&g, junk, sizeof(junk) - 1);
		put(&g, self->s.buf + self->s.off[i], fl);
	}
	put(&g, junk, sizeof(junk) - 1);
	probe_decode_bytes(&self->d, g.buf, g.len);
	EXPECT_EQ(0, probe_decode_errors(&self->d));
	EXPECT_EQ(self->s.seq, self->d.st.frames);
	EXPECT_EQ((self->s.nframes + 1) * (sizeof(junk) - 1) - 2, self->d.st.garbage); /* "VP" waits */
	check_series(_metadata, &self->d, PROBE_W_TIMER, 1, 100);
	free(g.buf);
}

TEST_F(dec, corrupt_frame_refused_others_kept)
{
	run(&self->s, 128); /* timer cpu0: START, 2 batches, END; ... */
	self->s.buf[self->s.off[1] + PROBE_HDR_SIZE + 40] ^= 0x10; /* a sample in cpu0's batch 1 */
	probe_decode_bytes(&self->d, self->s.buf, self->s.len);
	EXPECT_EQ(1, self->d.st.bad_frames);
	EXPECT_EQ(1, self->d.st.lost_frames);	  /* the sequence shows the gap */
	EXPECT_EQ(1, self->d.st.count_mismatch); /* cpu0's END says 128, 64 arrived */
	EXPECT_EQ(64, probe_series_get(&self->d, PROBE_W_TIMER, 0)->n);
	check_series(_metadata, &self->d, PROBE_W_TIMER, 1, 128);
	check_series(_metadata, &self->d, PROBE_W_PINGPONG, 0, 128);
}

TEST_F(dec, truncated_frame_then_resync)
{
	struct stream g = { 0 };

	run(&self->s, 64);
	/* batch (frame 1) cut in half, then the rest of the stream */
	put(&g, self->s.buf, self->s.off[1] + 300);
	put(&g, self->s.buf + self->s.off[2], self->s.len - self->s.off[2]);
	probe_decode_bytes(&self->d, g.buf, g.len);
	EXPECT_GE(self->d.st.bad_frames, 1);
	EXPECT_EQ(0, probe_series_get(&self->d, PROBE_W_TIMER, 0)->n);
	check_series(_metadata, &self->d, PROBE_W_TIMER, 1, 64);
	check_series(_metadata, &self->d, PROBE_W_PINGPONG, 0, 64);
	/* a frame cut at the end of the stream is never taken */
	probe_decoder_free(&self->d);
	probe_decode_bytes(&self->d, self->s.buf, self->s.off[2] - 1);
	EXPECT_EQ(1, self->d.st.frames);
	EXPECT_EQ(NULL, probe_series_get(&self->d, PROBE_W_TIMER, 0));
	free(g.buf);
}

TEST_F(dec, oversized_and_bad_headers_refused)
{
	uint8_t f[PROBE_MAX_FRAME + 64] = { 0 };
	uint8_t p[PROBE_MAX_PAYLOAD + 64] = { 0 };

	start(&self->s, PROBE_W_TIMER, 1, 10);
	/* a length over the bound (CRC right): refused on the header alone */
	memcpy(f, self->s.buf, PROBE_HDR_SIZE);
	f[6] = (uint8_t)(PROBE_MAX_PAYLOAD + 1);
	f[7] = (uint8_t)((PROBE_MAX_PAYLOAD + 1) >> 8);
	EXPECT_EQ(-1, probe_decode_frame(&self->d, f, PROBE_HDR_SIZE + PROBE_MAX_PAYLOAD + 1));
	/* another version, another magic, a frame length that disagrees with the header */
	probe_frame(f, PROBE_T_START, 0, p, PROBE_START_SIZE);
	f[5] = PROBE_PROTO_VERSION + 1; /* a version newer than the decoder knows */
	EXPECT_EQ(-1, probe_decode_frame(&self->d, f, PROBE_HDR_SIZE + PROBE_START_SIZE));
	probe_frame(f, PROBE_T_START, 0, p, PROBE_START_SIZE);
	f[0] = 'X';
	EXPECT_EQ(-1, probe_decode_frame(&self->d, f, PROBE_HDR_SIZE + PROBE_START_SIZE));
	probe_frame(f, PROBE_T_START, 0, self->s.buf + PROBE_HDR_SIZE, PROBE_START_SIZE);
	EXPECT_EQ(-1, probe_decode_frame(&self->d, f, PROBE_HDR_SIZE + PROBE_START_SIZE + 1));
	EXPECT_EQ(-1, probe_decode_frame(&self->d, f, 3));
	EXPECT_EQ(5, self->d.st.bad_frames);
	EXPECT_EQ(0, self->d.st.frames);

	/* in a stream: a huge length in a header, then a good frame */
	struct stream g = { 0 };

	put(&g, f, 4);
	put(&g, "\x01\x01\xff\xff", 4);
	put(&g, self->s.buf, self->s.len);
	probe_decode_bytes(&self->d, g.buf, g.len);
	EXPECT_EQ(6, self->d.st.bad_frames);
	EXPECT_EQ(1, self->d.st.frames);
	EXPECT_TRUE(self->d.started[PROBE_W_TIMER]);
	free(g.buf);
}

/* Valid frames (CRC right) whose records break the rules. */
TEST_F(dec, hostile_records_refused)
{
	struct probe_decoder *d = &self->d;
	uint8_t p[PROBE_MAX_PAYLOAD], f[PROBE_MAX_FRAME];
	struct probe_batch b = { .workload = PROBE_W_TIMER, .cpu = 0, .n = 1 };
	struct probe_end e = { .workload = PROBE_W_TIMER, .cpu = 0, .sum = { 1, 5, 4, 6, 7 } };
	struct probe_start st = { .workload = PROBE_W_TIMER, .ncpus = 2, .count = 2 };
	uint32_t seq = 0;
	size_t n;

#define FEED(type, len) probe_decode_frame(d, f, probe_frame(f, type, seq++, p, len))
	b.s[0] = (struct probe_sample){ 10, 1 };
	EXPECT_EQ(-1, FEED(PROBE_T_BATCH, probe_put_batch(p, &b))); /* before its START */
	st.count = PROBE_MAX_COUNT + 1;
	EXPECT_EQ(-1, FEED(PROBE_T_START, probe_put_start(p, &st))); /* count over the bound */
	st.count = 2;
	st.ncpus = PROBE_MAX_CPUS + 1;
	EXPECT_EQ(-1, FEED(PROBE_T_START, probe_put_start(p, &st)));
	st.ncpus = 2;
	st.workload = 9;
	EXPECT_EQ(-1, FEED(PROBE_T_START, probe_put_start(p, &st))); /* unknown workload */
	st.workload = PROBE_W_TIMER;
	EXPECT_EQ(0, FEED(PROBE_T_START, probe_put_start(p, &st)));
	EXPECT_EQ(-1, FEED(PROBE_T_START, probe_put_start(p, &st))); /* twice */
	EXPECT_EQ(-1, FEED(9, probe_put_start(p, &st)));	     /* unknown type */
	st.workload = PROBE_W_PINGPONG;
	st.cpu_a = st.cpu_b = 1;
	EXPECT_EQ(-1, FEED(PROBE_T_START, probe_put_start(p, &st))); /* a pair of one */

	n = probe_put_batch(p, &b);
	p[4] = 0; /* n = 0 */
	EXPECT_EQ(-1, FEED(PROBE_T_BATCH, n));
	p[4] = 2; /* n = 2 in a frame holding 1 */
	EXPECT_EQ(-1, FEED(PROBE_T_BATCH, n));
	n = probe_put_batch(p, &b);
	p[1] = 1; /* reserved */
	EXPECT_EQ(-1, FEED(PROBE_T_BATCH, n));
	b.cpu = PROBE_MAX_CPUS;
	EXPECT_EQ(-1, FEED(PROBE_T_BATCH, probe_put_batch(p, &b)));
	b.cpu = 0;
	EXPECT_EQ(0, FEED(PROBE_T_BATCH, probe_put_batch(p, &b)));
	b.s[0].t_ns = 9; /* time going back */
	EXPECT_EQ(-1, FEED(PROBE_T_BATCH, probe_put_batch(p, &b)));
	b.n = 2;
	b.s[0].t_ns = b.s[1].t_ns = 11; /* 3 samples for a count of 2 */
	EXPECT_EQ(-1, FEED(PROBE_T_BATCH, probe_put_batch(p, &b)));
	b.n = 1;
	b.cpu = 1;
	EXPECT_EQ(0, FEED(PROBE_T_BATCH, probe_put_batch(p, &b)));
	b.cpu = 7; /* a third timer series on 2 vCPUs */
	EXPECT_EQ(-1, FEED(PROBE_T_BATCH, probe_put_batch(p, &b)));

	EXPECT_EQ(-1, FEED(PROBE_T_END, probe_put_end(p, &e))); /* min > p50 */
	e.sum = (struct probe_summary){ 3, 1, 2, 3, 4 };
	EXPECT_EQ(-1, FEED(PROBE_T_END, probe_put_end(p, &e))); /* count over the START's */
	e.sum = (struct probe_summary){ 0, 0, 0, 0, 1 };
	EXPECT_EQ(-1, FEED(PROBE_T_END, probe_put_end(p, &e))); /* empty but not zero */
	e.sum = (struct probe_summary){ 1, 1, 1, 1, 1 };
	e.status = 7;
	EXPECT_EQ(-1, FEED(PROBE_T_END, probe_put_end(p, &e)));
	e.status = PROBE_S_OK;
	EXPECT_EQ(0, FEED(PROBE_T_END, probe_put_end(p, &e)));
	EXPECT_EQ(-1, FEED(PROBE_T_END, probe_put_end(p, &e))); /* twice */
	b.cpu = 0;
	b.s[0].t_ns = 20;
	EXPECT_EQ(-1, FEED(PROBE_T_BATCH, probe_put_batch(p, &b))); /* after the END */
#undef FEED
	EXPECT_EQ(4, d->st.frames);
	EXPECT_EQ(20, d->st.bad_records);
	EXPECT_EQ(0, d->st.bad_frames);
	EXPECT_EQ(0, d->st.lost_frames);
	EXPECT_EQ(1, probe_series_get(d, PROBE_W_TIMER, 0)->n);
	EXPECT_EQ(NULL, probe_series_get(d, PROBE_W_TIMER, 7));
}

TEST_F(dec, text_lines_among_console_output)
{
	size_t tl;

	run(&self->s, 200);
	char *t = as_text(&self->s, &tl);
	size_t cap = tl + 4096, o = 0;
	char *c = malloc(cap);

	/* kernel and init chatter around the frames; a stray CR and a printk tail before one */
	o += (size_t)sprintf(c + o, "[    0.000000] Booting Linux\r\nvmm-guest: hello\r\n\r[  1.2] x ");
	memcpy(c + o, t, tl);
	o += tl;
	o += (size_t)sprintf(c + o, "vmm-probe: done\r\nreboot: Power down\r\n");
	/* in odd-sized chunks, as a pipe delivers them */
	for (size_t i = 0; i < o; i += 77)
		probe_decode_text(&self->d, c + i, o - i < 77 ? o - i : 77);
	EXPECT_EQ(0, probe_decode_errors(&self->d));
	EXPECT_EQ(self->s.seq, self->d.st.frames);
	check_series(_metadata, &self->d, PROBE_W_TIMER, 0, 200);
	check_series(_metadata, &self->d, PROBE_W_TIMER, 1, 200);
	check_series(_metadata, &self->d, PROBE_W_PINGPONG, 0, 200);
	free(t);
	free(c);
}

TEST_F(dec, bad_text_lines_counted)
{
	size_t tl;

	run(&self->s, 10);
	char *t = as_text(&self->s, &tl);
	char *nl = strchr(t, '\n');
	char big[PROBE_TEXT_MAX + 200];

	probe_decode_text(&self->d, t, (size_t)(nl + 1 - t)); /* the START */
	/* base64 but too short a frame, and no frame at all: bad frames */
	probe_decode_text(&self->d, "VMM-PROBE VlBSQgEB\n", 19);
	probe_decode_text(&self->d, "VMM-PROBE \n", 11);
	probe_decode_text(&self->d, "VMM-PROBE VlBSQ!EB\n", 19); /* not base64: a bad line */
	/* a good frame with one character changed (b64 still valid): the CRC catches it */
	char *second = nl + 1;
	size_t sl = (size_t)(strchr(second, '\n') + 1 - second);
	char *bad = malloc(sl);

	memcpy(bad, second, sl);
	bad[40] = bad[40] == 'A' ? 'B' : 'A';
	probe_decode_text(&self->d, bad, sl);
	/* a line longer than any frame's */
	memset(big, 'A', sizeof(big));
	memcpy(big, PROBE_TEXT_PREFIX, strlen(PROBE_TEXT_PREFIX));
	probe_decode_text(&self->d, big, sizeof(big));
	probe_decode_text(&self->d, "\n", 1);
	/* trailing junk after the base64 on the line */
	memcpy(bad, second, sl);
	bad[sl - 2] = '#';
	probe_decode_text(&self->d, bad, sl);
	EXPECT_EQ(1, self->d.st.frames);
	EXPECT_EQ(3, self->d.st.bad_lines);
	EXPECT_EQ(3, self->d.st.bad_frames);
	free(bad);
	free(t);
}

/* A frame line cut by '[' whose base64 run is longer than any frame's (up to the whole line buffer,
 * twice a frame line): the run cannot start a frame, so it is a bad line, never kept for a rest to
 * join. The old decoder copied the whole run into the 1411-byte rejoin buffer (issue 19); the canary
 * after the decoder and the state after the line show any write past it. Runs of every length
 * around the limits, some ending the line buffer, in one feed and byte by byte. */
TEST(long_base64_before_printk_is_a_bad_line)
{
	struct {
		struct probe_decoder d;
		uint8_t canary[4096];
	} *w = malloc(sizeof(*w));
	const size_t max = sizeof(w->d.line) - 1 - strlen(PROBE_TEXT_PREFIX) - 1;
	const size_t lens[] = { sizeof(w->d.pend) - 1, sizeof(w->d.pend), sizeof(w->d.pend) + 1,
				sizeof(w->d.pend) + 4, 2700, max, max + 1, max + 500 };
	char *line = malloc(max + 600);

	ASSERT_NE(NULL, w);
	for (unsigned int k = 0; k < 2 * sizeof(lens) / sizeof(lens[0]); k++) {
		size_t n = lens[k / 2], o = 0;

		probe_decoder_init(&w->d);
		memset(w->canary, 0x5a, sizeof(w->canary));
		o += (size_t)sprintf(line, PROBE_TEXT_PREFIX);
		memset(line + o, 'A', n);
		o += n;
		o += (size_t)sprintf(line + o, "[   36.858284] rcu: stall\n");
		if (k & 1)
			for (size_t i = 0; i < o; i++)
				probe_decode_text(&w->d, line + i, 1);
		else
			probe_decode_text(&w->d, line, o);
		/* a rest that would complete it, then a kernel line */
		probe_decode_text(&w->d, "AAAA\n[    1.0] x\n", 17);
		for (size_t i = 0; i < sizeof(w->canary); i++) {
			ASSERT_EQ(0x5a, w->canary[i]) TH_LOG("run of %zu: canary byte %zu overwritten", n, i);
		}
		ASSERT_LE(w->d.plen, sizeof(w->d.pend)) TH_LOG("run of %zu", n);
		EXPECT_EQ(1, w->d.st.bad_lines) TH_LOG("run of %zu", n);
		EXPECT_FALSE(w->d.pending) TH_LOG("run of %zu", n);
		EXPECT_EQ(0, w->d.st.frames);
		probe_decoder_free(&w->d);
	}
	free(line);
	free(w);
}

/* Kernel messages land inside frame lines on a serial console: the pieces are put back together. */
TEST_F(dec, frame_lines_broken_by_kernel_messages)
{
	static const char msg[] = "[   36.858284] watchdog: Watchdog detected hard LOCKUP on cpu 0\r\n"
				  "[   36.858290] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:\r\n"
				  "rcu: \t0-...!: (1 GPs behind)\r\n";
	size_t tl;

	run(&self->s, 200);
	char *t = as_text(&self->s, &tl);
	char *c = malloc(tl * 2 + 4096);
	size_t o = 0, line = 0;

	/* timer cpu0's batches: line 1 broken once; line 2 twice; line 3 with a message just before
	 * its newline; line 4 broken, and its rest never comes (the next frame line starts instead) */
	for (char *p = t; *p; line++) {
		size_t n = (size_t)(strchr(p, '\n') + 1 - p);

		if (line == 1 || line == 2 || line == 4) {
			memcpy(c + o, p, 100);
			o += 100;
			o += (size_t)sprintf(c + o, "%s", msg);
			if (line == 4) {
				p += n;
				continue;
			}
			if (line == 2) {
				memcpy(c + o, p + 100, 300);
				o += 300;
				o += (size_t)sprintf(c + o, "%s", msg);
				memcpy(c + o, p + 400, n - 400);
				o += n - 400;
			} else {
				memcpy(c + o, p + 100, n - 100);
				o += n - 100;
			}
		} else if (line == 3) {
			memcpy(c + o, p, n - 2);
			o += n - 2;
			o += (size_t)sprintf(c + o, "%s", msg);
		} else {
			memcpy(c + o, p, n);
			o += n;
		}
		p += n;
	}
	probe_decode_text(&self->d, c, o);
	EXPECT_EQ(self->s.seq - 1, self->d.st.frames);
	EXPECT_EQ(2, self->d.st.rejoined);
	EXPECT_EQ(1, self->d.st.bad_lines); /* line 4 */
	EXPECT_EQ(1, self->d.st.lost_frames);
	EXPECT_EQ(1, self->d.st.count_mismatch);
	EXPECT_EQ(3 * 64, probe_series_get(&self->d, PROBE_W_TIMER, 0)->n);
	EXPECT_EQ(0, self->d.st.bad_frames);
	EXPECT_EQ(0, self->d.st.bad_records);
	check_series(_metadata, &self->d, PROBE_W_TIMER, 1, 200);
	check_series(_metadata, &self->d, PROBE_W_PINGPONG, 0, 200);
	free(t);
	free(c);
}

/* ---- the guest side ---- */

TEST(spec_parsing_is_strict)
{
	struct spec sp;
	static const char *const bad_specs[] = {
		"", ";", "timer;", ";timer", "timer;;pingpong", "timerx", "TIMER", "timer:",
		"timer:count", "timer:count=", "timer:count=0", "timer:count=1000001",
		"timer:count=-1", "timer:count=+5", "timer:count=5x", "timer:count=99999999999",
		"timer:count=1,count=2", "timer:count=1,", "timer:,count=1", "timer:bogus=1",
		"timer:port=80", "pingpong:interval_us=5", "timer;timer", "timer:interval_us=0",
		"timer:prio=100", "udp:dev=", "udp:dev=a/b", "udp:dev=0123456789abcdef",
		"udp:port=65536", "timer:count=1=2",
	};

	for (size_t i = 0; i < sizeof(bad_specs) / sizeof(bad_specs[0]); i++) {
		EXPECT_EQ(-1, parse_spec(&sp, bad_specs[i])) TH_LOG("accepted '%s'", bad_specs[i]);
	}

	ASSERT_EQ(0, parse_spec(&sp, "pingpong:count=7,cpu_b=3;timer:interval_us=250,count=2000,prio=0;udp:dev=eth0,port=9"));
	EXPECT_EQ(3, sp.n);
	EXPECT_EQ(PROBE_W_PINGPONG, sp.order[0]);
	EXPECT_EQ(PROBE_W_TIMER, sp.order[1]);
	EXPECT_EQ(PROBE_W_UDP, sp.order[2]);
	EXPECT_EQ(250, sp.w[PROBE_W_TIMER].interval_us);
	EXPECT_EQ(2000, sp.w[PROBE_W_TIMER].count);
	EXPECT_EQ(0, sp.w[PROBE_W_TIMER].prio);
	EXPECT_EQ(7, sp.w[PROBE_W_PINGPONG].count);
	EXPECT_FALSE(sp.w[PROBE_W_PINGPONG].cpu_a_set);
	EXPECT_TRUE(sp.w[PROBE_W_PINGPONG].cpu_b_set);
	EXPECT_EQ(3, sp.w[PROBE_W_PINGPONG].cpu_b);
	EXPECT_EQ(80, sp.w[PROBE_W_PINGPONG].prio);
	EXPECT_STREQ("eth0", sp.w[PROBE_W_UDP].dev);
	EXPECT_EQ(9, sp.w[PROBE_W_UDP].port);
	ASSERT_EQ(0, parse_spec(&sp, "timer"));
	EXPECT_EQ(1000, sp.w[PROBE_W_TIMER].count);
	EXPECT_EQ(1000, sp.w[PROBE_W_TIMER].interval_us);

	char buf[64];

	EXPECT_STREQ("a;b", cmdline_value("x=1 vmm.probe=a;b vmm.probe_out=console\n", "vmm.probe=",
					  buf, sizeof(buf)));
	EXPECT_STREQ("console", cmdline_value("vmm.probe=a vmm.probe_out=console\n", "vmm.probe_out=",
					      buf, sizeof(buf)));
	EXPECT_EQ(NULL, cmdline_value("xvmm.probe=a novmm.probe=b", "vmm.probe=", buf, sizeof(buf)));
}

/* The probe for real, a few samples, frames to a file: they decode without an error. */
TEST(probe_end_to_end)
{
	char path[] = "/tmp/vmm-probe-test-XXXXXX", cmd[256];
	int fd = mkstemp(path);
	static uint8_t out[1 << 20];
	struct probe_decoder d;

	ASSERT_LE(0, fd);
	snprintf(cmd, sizeof(cmd), "quiet vmm.probe=timer:interval_us=200,count=20,prio=0;"
		 "pingpong:count=20,prio=0 vmm.probe_out=%s\n", path);
	ASSERT_EQ(0, probe_run_cmdline(cmd));
	ssize_t n = read(fd, out, sizeof(out));

	close(fd);
	unlink(path);
	ASSERT_GT(n, 0);
	probe_decoder_init(&d);
	probe_decode_bytes(&d, out, (size_t)n);
	EXPECT_EQ(0, probe_decode_errors(&d));
	EXPECT_EQ(0, d.st.garbage);
	unsigned int ncpus = d.start[PROBE_W_TIMER].ncpus;

	EXPECT_GE(ncpus, 1);
	for (size_t i = 0; i < d.nseries; i++) {
		const struct probe_series *s = &d.series[i];

		EXPECT_TRUE(s->ended);
		if (s->end.status != PROBE_S_OK)
			continue; /* ping-pong on one CPU: a skip */
		EXPECT_EQ(20, s->n);
		EXPECT_GE(s->end.sum.min, 0);
		EXPECT_LE(s->end.sum.p50, s->end.sum.p99);
	}
	const struct probe_series *pp = probe_series_get(&d, PROBE_W_PINGPONG, 0);

	ASSERT_NE(NULL, pp);
	EXPECT_EQ(ncpus >= 2 ? PROBE_S_OK : PROBE_S_SKIPPED, pp->end.status);
	probe_decoder_free(&d);
}

TEST_HARNESS_MAIN
