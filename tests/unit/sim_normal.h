/* SPDX-License-Identifier: MIT */
/* Normal draws for the A/B simulations (abdesign_test, abverdict_test): Box-Muller with both
 * values used, from the seeded generator the statistics use, so every simulation repeats. */
#ifndef VMM_TESTS_SIM_NORMAL_H
#define VMM_TESTS_SIM_NORMAL_H

#include <math.h>
#include <stdbool.h>

#include "ab/abstats.h"

struct gauss {
	struct ab_rng r;
	double spare;
	bool have;
};

static inline double normal(struct gauss *g)
{
	if (g->have) {
		g->have = false;
		return g->spare;
	}
	double u = ab_rng_double(&g->r) + 0x1p-60, v = 2 * M_PI * ab_rng_double(&g->r), m = sqrt(-2 * log(u));

	g->spare = m * sin(v);
	g->have = true;
	return m * cos(v);
}

#endif
