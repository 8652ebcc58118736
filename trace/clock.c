// SPDX-License-Identifier: MIT
/* One clock for guest samples and host events: guest CLOCK_MONOTONIC -> guest counter (the
 * probe's pairs) -> host counter (the VM's counter offset) -> host CLOCK_MONOTONIC_RAW (vmm's
 * pairs). Each step is linear between two pairs; with one pair, the counter's frequency gives the
 * slope. */
#include "trace/trace.h"

void attrib_clock_init(struct attrib_clock *c, uint64_t hz, int64_t offset)
{
	*c = (struct attrib_clock){ .hz = hz, .offset = offset };
}

static void pair_keep(struct clock_pair *p, unsigned int *n, struct clock_pair x)
{
	/* the first and the last: the widest span gives the best slope */
	if (*n == 0)
		p[(*n)++] = x;
	else {
		p[1] = x;
		*n = 2;
	}
}

void attrib_clock_guest_pair(struct attrib_clock *c, struct clock_pair p)
{
	pair_keep(c->g, &c->ng, p);
}

void attrib_clock_host_pair(struct attrib_clock *c, struct clock_pair p, uint64_t window_ns)
{
	pair_keep(c->h, &c->nh, p);
	if (window_ns / 2 > c->err_ns)
		c->err_ns = window_ns / 2;
}

/* counter ticks per ns from two pairs when they span at least 1 ms, else from hz */
static long double slope(const struct clock_pair *p, unsigned int n, uint64_t hz)
{
	if (n == 2 && p[1].ns > p[0].ns + 1000000 && p[1].cnt > p[0].cnt)
		return (long double)(p[1].cnt - p[0].cnt) / (long double)(p[1].ns - p[0].ns);
	return hz ? (long double)hz / 1e9L : 0;
}

int attrib_clock_g2h(const struct attrib_clock *c, uint64_t guest_ns, uint64_t *host_ns)
{
	long double gs = slope(c->g, c->ng, c->hz), hs = slope(c->h, c->nh, c->hz);

	if (!c->ng || !c->nh || gs <= 0 || hs <= 0)
		return -1;
	long double gcnt = c->g[0].cnt + ((long double)guest_ns - c->g[0].ns) * gs;
	long double hcnt = gcnt + c->offset;
	long double ns = c->h[0].ns + (hcnt - c->h[0].cnt) / hs;

	if (ns < 0 || ns > 1.8e19L)
		return -1;
	*host_ns = (uint64_t)(ns + 0.5L);
	return 0;
}
