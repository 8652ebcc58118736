// SPDX-License-Identifier: MIT
/* KVM's binary stats (KVM_GET_STATS_FD): the input is the file, read through a memfd as vmm reads
 * the real one; every stat found is then read back, and histograms summed and split. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "halt_poll/halt_poll.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hp_stats st;
	int fd = memfd_create("kvm-stats", MFD_CLOEXEC);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	if (hp_stats_open(&st, fd) < 0)
		return 0; /* it closed fd */
	hp_stats_read(&st);
	for (int i = 0; i < st.nr; i++) {
		const struct hp_stat *s = &st.stat[i];
		const uint64_t *vals = hp_stats_values(&st, s);
		uint64_t lo, hi, sum = 0;

		for (unsigned int j = 0; j < s->size; j++)
			sum += hp_stats_value(&st, s, j) + vals[j];
		hp_stats_get(&st, s->name, &sum);
		hp_stat_type_name(s->flags);
		hp_stat_unit_name(s->flags);
		hp_stat_to_base_units(s, (double)sum);
		if (hp_stat_is_hist(s)) {
			for (unsigned int j = 0; j < s->size; j++)
				hp_hist_bucket(s, j, &lo, &hi);
			hp_hist_total(s, vals);
			unsigned int qi;
			char buf[48];

			if (hp_hist_quantile_bucket(s, vals, 0.99, &qi) == 0)
				hp_fmt_bucket(buf, sizeof(buf), s, qi);
		}
	}
	hp_stats_close(&st);
	return 0;
}
