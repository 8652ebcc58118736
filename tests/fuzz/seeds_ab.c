// SPDX-License-Identifier: MIT
/* Seeds of vmm ab --attribute's target (tests/fuzz/ab_attr_fuzz.c): the unit tests' attribution FILE
 * (first byte 1) and a child's stderr with its "attribution: none" line among others, fed in 7-byte
 * chunks (first byte 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/seeds.h"

void seeds_ab_attr(void)
{
	static struct out o;
	static const char err[] = "vmm: arm64 vCPUs: sve, pauth on, pmu on\n"
				  "vmm: --attribute: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing); "
				  "the run goes on without attribution\n"
				  "vmm: attribution: none: tracefs is not mounted\n"
				  "vmm: the guest powered off (exit status 0) after 9.1 s\n";
	const char *path = "tests/unit/fixtures/ab_stages/attribution.json";
	FILE *f = fopen(path, "rb");

	if (!f) {
		perror(path);
		exit(1);
	}
	o.n = 0;
	put(&o, 1, 1);
	put(&o, 0, 1);
	o.n += fread(o.b + o.n, 1, sizeof(o.b) - o.n - 1, f);
	fclose(f);
	seed_save("ab_attr", "attribution", &o);
	o.n = 0;
	put(&o, 0, 1);
	put(&o, 6, 1);
	putb(&o, err, strlen(err));
	seed_save("ab_attr", "stderr", &o);
}
