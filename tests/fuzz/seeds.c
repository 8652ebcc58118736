// SPDX-License-Identifier: MIT
/*
 * Writes the seed corpora (tests/fuzz/corpus/NAME/): for each target a few inputs that reach deep
 * into it, so a short run starts from working guests and files rather than from nothing. Device
 * seeds are guest programs in fuzz_guest.c's encoding: a driver bringing the device up, I/O, and
 * the awkward moments (reset mid-I/O, a queue enabled twice, BARs moved under traffic).
 * Run by make fuzz-seeds; the output is committed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "tests/fuzz/seeds.h"

void seed_save(const char *target, const char *name, const struct out *o)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "tests/fuzz/corpus/%s", target);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		goto fail;
	snprintf(path, sizeof(path), "tests/fuzz/corpus/%s/%s", target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(o->b, 1, o->n, f) != o->n || fclose(f))
		goto fail;
	return;
fail:
	perror(path);
	exit(1);
}

int main(void)
{
	seeds_virtio();
	seeds_msix();
	seeds_vfio();
	seeds_uart();
	seeds_ioapic();
	seeds_kernel();
	seeds_bzimage();
	seeds_text();
	seeds_stats();
	seeds_saved();
	seeds_probe();
	seeds_vlpi();
	seeds_virtq();
	seeds_trace();
	seeds_ab_attr();
	return 0;
}
