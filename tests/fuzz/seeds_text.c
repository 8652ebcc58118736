// SPDX-License-Identifier: MIT
/* Seeds of the text and file parsers: command line, ctl, saved A/B runs, KVM stats, probes. */
#include <stdio.h>
#include <stdlib.h>

#include "guest/probe_proto.h"
#include "tests/fuzz/seeds.h"
#include "tests/unit/stats_fixture.h"

void seeds_text(void)
{
	static const struct { const char *target, *name; const char *s; size_t n; } t[] = {
#define S(target, name, lit) { target, name, lit, sizeof(lit) - 1 }
		S("cmdline", "full", "-k\0Image.gz\0-i\0initrd.gz\0-p\0console=ttyS0 quiet\0-c\0004\0-m\0002G\0"
		  "-d\0disk.img\0-d\0base.img,ro\0--console\0virtio\0--net\0tap=tap0,mac=02:00:00:00:00:01\0"
		  "--vfio\0000000:00:13.0,addr=5,token=01234567-89ab-cdef-0123-456789abcdef\0"
		  "--halt-poll-ns\000500000\0--ctl\0/run/vm.ctl\0--stats\0run.json\0--vfio-backend\0legacy"),
		S("cmdline", "sizes", "--mem=1GiB\0--cpus=123\0--kernel-format\0flat\0--dump-dtb\0b.dtb\0-m\00064k"),
		S("cmdline", "bad", "-c\0000\0-m\0-1\0--bogus\0stray"),
		S("ctl", "get", "{\"cmd\":\"get\"}"),
		S("ctl", "set", "{ \"cmd\" : \"set\", \"halt_poll_ns\": 500000 }"),
		S("ctl", "stats", "{\"cmd\":\"stats\"}\n"),
		S("ctl", "bad", "{\"cmd\":\"set\",\"halt_poll_ns\":18446744073709551616}"),
#undef S
	};
	struct out o = { 0 };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		o.n = 0;
		putb(&o, t[i].s, t[i].n);
		seed_save(t[i].target, t[i].name, &o);
	}
}

/* Saved A/B runs: a good one, one that vmm ab judge takes (arms, epochs in blocks), the duplicate
 * "samples" key that overflowed the old reader's heap (issue 19: more than its first allocation of
 * 1024 after the second key), and the old format. */
void seeds_saved(void)
{
	struct out o = { 0 };
	char buf[64];
	static const char ok[] = "{\"format\":2,\"seed\":1,\"epochs\":["
		"{\"index\":0,\"block\":0,\"arm\":\"hp0\",\"warmup\":true,\"complete\":true,\"workloads\":{}},"
		"{\"index\":1,\"block\":0,\"arm\":\"hp500us\",\"warmup\":false,\"complete\":true,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"n\":6,\"samples\":[12.5,13,11.25,40,12,12.75]}}},"
		"{\"index\":2,\"block\":1,\"arm\":\"hp0\",\"warmup\":false,\"complete\":true,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"samples\":[20,21.5,19,22,80,20.25]},\"pingpong\":{\"unit\":\"us\","
		"\"samples\":[5,6,5.5,7,5,6]}}}],\"verdicts\":[]}";
	static const char dup[] = "{\"format\":2,\"epochs\":[{\"arm\":\"a\",\"warmup\":false,\"complete\":true,"
		"\"workloads\":{\"timer\":{\"unit\":\"us\",\"samples\":[1],\"samples\":[";
	static const char old[] = "{\"seed\":1,\"workloads\":[],\"raw\":[{\"workload\":\"timer\",\"arm\":\"a\","
		"\"unit\":\"us\",\"samples\":[1],\"samples\":[";

	static const char judge[] = "{\"format\":2,\"tool\":\"vmm ab\",\"seed\":3,\"mode\":\"one-vm\",\"blocks\":3,"
		"\"warmup\":0,\"epoch_ms\":100,\"alpha\":0.05,\"min_effect\":0.05,\"arms\":[{\"name\":\"hp0\",\"options\":"
		"[\"--halt-poll-ns\",\"0\"]},{\"name\":\"hp500us\",\"options\":[]}],\"epochs\":["
		"{\"index\":0,\"block\":0,\"arm\":\"hp0\",\"complete\":true,\"cpu_s\":0.1,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"samples\":[12.5,13,11.25,40,12,12.75]}}},"
		"{\"index\":1,\"block\":0,\"arm\":\"hp500us\",\"complete\":true,\"cpu_s\":0.1,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"samples\":[14,13,15,41,12,12.5,13,14,15,16]}}},"
		"{\"index\":2,\"block\":1,\"arm\":\"hp500us\",\"complete\":true,\"cpu_s\":0.2,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"samples\":[0,0,0,0,0,0]}}},"
		"{\"index\":3,\"block\":1,\"arm\":\"hp0\",\"complete\":true,\"cpu_s\":0.1,\"workloads\":"
		"{\"timer\":{\"unit\":\"us\",\"samples\":[20,21.5,19,22,80,20.25]}}},"
		"{\"index\":4,\"block\":2,\"arm\":\"hp0\",\"complete\":false,\"workloads\":{}},"
		"{\"index\":5,\"block\":2,\"arm\":\"hp500us\",\"complete\":true,\"workloads\":{}}]}";

	putb(&o, ok, sizeof(ok) - 1);
	seed_save("saved", "ok", &o);
	o.n = 0;
	putb(&o, judge, sizeof(judge) - 1);
	seed_save("saved", "judge", &o);
	for (int v = 0; v < 2; v++) {
		o.n = 0;
		putb(&o, v ? old : dup, v ? sizeof(old) - 1 : sizeof(dup) - 1);
		for (int i = 0; i < 2000; i++) {
			int n = snprintf(buf, sizeof(buf), "%s%d", i ? "," : "", i);

			putb(&o, buf, n);
		}
		putb(&o, v ? "]}]}" : "]}}}]}", v ? 4 : 6);
		seed_save("saved", v ? "old-dup-samples" : "dup-samples", &o);
	}
}

void seeds_stats(void)
{
	struct fx *f = fx_build(fx_arm64_vcpu, FX_ARM64_VCPU_N, "kvm-1234/vcpu-0");
	struct out o = { 0 };

	putb(&o, f->buf, f->len);
	seed_save("stats", "arm64-vcpu", &o);
	free(f);
}

void seeds_probe(void)
{
	uint8_t p[PROBE_MAX_PAYLOAD], fr[PROBE_MAX_FRAME];
	struct out bin = { 0 }, txt = { 0 };
	uint32_t seq = 0;
	struct probe_start s = { .workload = PROBE_W_TIMER, .ncpus = 1, .count = 3, .interval_ns = 1000000 };
	struct probe_batch b = { .workload = PROBE_W_TIMER, .cpu = 0, .n = 3,
				 .s = { { 1000, 40000 }, { 2000, 12000 }, { 3000, 300000 } } };
	struct probe_end e = { .workload = PROBE_W_TIMER, .status = PROBE_S_OK, .cpu = 0,
			       .sum = { 3, 12000, 40000, 300000, 300000 } };
	size_t lens[3], n;

	lens[0] = probe_put_start(p, &s);
	put(&bin, 0, 1);
	put(&txt, 1, 1);
	putb(&txt, "[    1.000000] booted\n", 22);
	for (int k = 0; k < 3; k++) {
		if (k == 1)
			lens[1] = probe_put_batch(p, &b);
		if (k == 2)
			lens[2] = probe_put_end(p, &e);
		n = probe_frame(fr, k + 1, seq++, p, lens[k]);
		putb(&bin, fr, n);
		char line[PROBE_TEXT_MAX];
		size_t m = probe_b64_encode(line, fr, n);

		putb(&txt, PROBE_TEXT_PREFIX, sizeof(PROBE_TEXT_PREFIX) - 1);
		putb(&txt, line, m);
		putb(&txt, "\n", 1);
	}
	seed_save("probe", "timer-frames", &bin);
	seed_save("probe", "timer-text", &txt);

	/* issue 19: a base64 run longer than the rejoin buffer, then '[' (printf 'VMM-PROBE %s[\n'
	 * with 2700 'A's), as text and as a text program (tests/fuzz/probe_fuzz.c's opcodes) */
	txt.n = 0;
	put(&txt, 1, 1);
	putb(&txt, PROBE_TEXT_PREFIX, sizeof(PROBE_TEXT_PREFIX) - 1);
	for (int i = 0; i < 2700; i++)
		put(&txt, 'A', 1);
	putb(&txt, "[\n", 2);
	seed_save("probe", "long-run-printk", &txt);
	enum { TX_PREFIX, TX_RUN, TX_PRINTK, TX_EOL, TX_RAW, TX_FRAME, TX_CUT, TX_FEED };
	txt.n = 0;
	put(&txt, 3, 1);
	put(&txt, TX_PREFIX, 1);
	put(&txt, TX_RUN, 1), put(&txt, 2700, 2), put(&txt, 0, 1);
	put(&txt, TX_PRINTK, 1);
	put(&txt, TX_EOL, 1), put(&txt, 1, 1);
	seed_save("probe", "prog-long-run-printk", &txt);
	/* the timer frames as a program: START whole, the BATCH cut by a kernel line, END fed a few
	 * bytes at a time; then a run just over a frame's base64, cut by '[' */
	txt.n = 0;
	put(&txt, 3, 1);
	for (int k = 0; k < 3; k++) {
		lens[k] = k == 0 ? probe_put_start(p, &s) : k == 1 ? probe_put_batch(p, &b) : probe_put_end(p, &e);
		if (k == 2)
			put(&txt, TX_FEED, 1), put(&txt, 6, 2);
		put(&txt, TX_PREFIX, 1);
		if (k == 1)
			put(&txt, TX_CUT, 1), put(&txt, 40, 2);
		else
			put(&txt, TX_FRAME, 1);
		put(&txt, k + 1, 1), put(&txt, (uint64_t)k, 1), put(&txt, lens[k], 2);
		putb(&txt, p, lens[k]);
		put(&txt, TX_EOL, 1), put(&txt, 1, 1);
	}
	put(&txt, TX_PREFIX, 1);
	put(&txt, TX_RUN, 1), put(&txt, 4 * ((PROBE_MAX_FRAME + 2) / 3) + 4, 2), put(&txt, 1, 1);
	put(&txt, TX_PRINTK, 1);
	put(&txt, TX_EOL, 1), put(&txt, 0, 1);
	seed_save("probe", "prog-timer", &txt);
}
