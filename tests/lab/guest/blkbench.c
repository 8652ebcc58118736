// SPDX-License-Identifier: MIT
/*
 * make bench's disk load inside the lab's test guest: 4 KiB random reads and writes at queue
 * depth 1, 8 and 32, and 1 MiB sequential reads and writes, with O_DIRECT on a block device,
 * queue depth kept by Linux AIO (io_submit as each completion arrives). Each point runs `reps`
 * times for `ms` milliseconds; one line per repetition:
 *   GUEST-BLKBENCH randread bs=4096 qd=8 rep=0 ops=1234 ns=500000000
 * Usage: blkbench DEVICE REPS MS
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define QD_MAX 32

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct point {
	const char *name;
	int write, random, qd;
	size_t bs;
};

/* One repetition: keeps qd requests in flight for ms; returns completed requests, -1 on error. */
static long run(int fd, aio_context_t ctx, const struct point *p, uint64_t size, uint8_t *bufs[], unsigned ms,
		uint64_t *seq, uint64_t *rs, uint64_t *took)
{
	struct iocb cb[QD_MAX], *cbp[QD_MAX];
	struct io_event ev[QD_MAX];
	uint64_t blocks = size / p->bs, t0 = now_ns(), end = t0 + ms * 1000000ULL;
	long done = 0, inflight = 0;
	int stop = 0;

	for (int i = 0; i < p->qd; i++) {
		memset(&cb[i], 0, sizeof(cb[i]));
		cb[i].aio_fildes = fd;
		cb[i].aio_lio_opcode = p->write ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
		cb[i].aio_buf = (uintptr_t)bufs[i];
		cb[i].aio_nbytes = p->bs;
		cb[i].aio_data = i;
	}
	for (int i = 0; i < p->qd; i++) {
		uint64_t blk = p->random ? rnd(rs) % blocks : (*seq)++ % blocks;

		cb[i].aio_offset = blk * p->bs;
		cbp[i] = &cb[i];
	}
	if (syscall(SYS_io_submit, ctx, p->qd, cbp) != p->qd)
		return -1;
	inflight = p->qd;
	while (inflight) {
		long n = syscall(SYS_io_getevents, ctx, 1, QD_MAX, ev, NULL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!stop && now_ns() >= end)
			stop = 1;
		int k = 0;

		for (long e = 0; e < n; e++) {
			if (ev[e].res != (long long)p->bs) {
				fprintf(stderr, "blkbench: %s: request failed: %lld\n", p->name, (long long)ev[e].res);
				return -1;
			}
			done++;
			inflight--;
			if (stop)
				continue;
			struct iocb *c = &cb[ev[e].data];
			uint64_t blk = p->random ? rnd(rs) % blocks : (*seq)++ % blocks;

			c->aio_offset = blk * p->bs;
			cbp[k++] = c;
		}
		if (k) {
			if (syscall(SYS_io_submit, ctx, k, cbp) != k)
				return -1;
			inflight += k;
		}
	}
	*took = now_ns() - t0;
	return done;
}

int main(int argc, char **argv)
{
	static const struct point points[] = {
		{ "randread", 0, 1, 1, 4096 },	  { "randread", 0, 1, 8, 4096 },
		{ "randread", 0, 1, 32, 4096 },	  { "randwrite", 1, 1, 1, 4096 },
		{ "randwrite", 1, 1, 8, 4096 },	  { "randwrite", 1, 1, 32, 4096 },
		{ "seqread", 0, 0, 4, 1 << 20 },  { "seqwrite", 1, 0, 4, 1 << 20 },
	};
	uint8_t *bufs[QD_MAX];
	aio_context_t ctx = 0;
	uint64_t size, seq = 0, rs = 0x9e3779b97f4a7c15ULL;

	if (argc != 4) {
		fprintf(stderr, "usage: blkbench DEVICE REPS MS\n");
		return 2;
	}
	int reps = atoi(argv[2]), fd = open(argv[1], O_RDWR | O_DIRECT);
	unsigned ms = atoi(argv[3]);

	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size) < 0 || size < (64 << 20)) {
		fprintf(stderr, "blkbench: %s: cannot open it with O_DIRECT, or smaller than 64 MiB\n", argv[1]);
		return 1;
	}
	for (int i = 0; i < QD_MAX; i++)
		if (posix_memalign((void **)&bufs[i], 4096, 1 << 20))
			return 1;
		else
			memset(bufs[i], 0x5a, 1 << 20);
	if (syscall(SYS_io_setup, QD_MAX, &ctx) < 0) {
		perror("blkbench: io_setup");
		return 1;
	}
	/* the host reads the VMM's CPU time at each line: this one opens the first point's interval */
	printf("GUEST-BLKBENCH-START\n");
	fflush(stdout);
	for (size_t p = 0; p < sizeof(points) / sizeof(points[0]); p++)
		for (int r = 0; r < reps; r++) {
			uint64_t took = 0;
			long ops = run(fd, ctx, &points[p], size, bufs, ms, &seq, &rs, &took);

			if (ops < 0) {
				fprintf(stderr, "blkbench: %s qd=%d failed\n", points[p].name, points[p].qd);
				return 1;
			}
			printf("GUEST-BLKBENCH %s bs=%zu qd=%d rep=%d ops=%ld ns=%llu\n", points[p].name,
			       points[p].bs, points[p].qd, r, ops, (unsigned long long)took);
			fflush(stdout);
		}
	return 0;
}
