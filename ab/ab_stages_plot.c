// SPDX-License-Identifier: MIT
/*
 * vmm ab --attribute --plot: where each arm's timer latency goes, per class, as one stacked bar per
 * arm (gnuplot, next to the CDF plots). A bar's parts are its arm's stage medians: per stage the
 * median over the arm's epochs (after warm-up, complete) of each epoch's own median, the figure the
 * report judges. Medians of parts do not add up to the median of the whole: the bars show where the
 * time goes, the report's section says what moved.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab/ab.h"
#include "core/log.h"

/* arm's median over its epochs of the class's stage medians: false when no epoch had the class */
static bool arm_bar(const struct ab *ab, int arm, int c, double *bar)
{
	double v[AB_MAX_EPOCHS];
	bool any = false;

	for (int s = 0; s < AS_MAX; s++) {
		int k = 0;

		for (int e = (int)ab->warmup; e < ab->nr_runs; e++)
			if (ab->run[e].arm == arm && ab->run[e].complete && ab_stage_value(&ab->run[e].st, c, s, &v[k]))
				k++;
		ab_sort(v, (size_t)k);
		bar[s] = k ? ab_quantile_sorted(v, (size_t)k, 0.5) : 0; /* not seen: no part */
		any |= k > 0;
	}
	return any;
}

static int write_files(const struct ab *ab, const char *prefix, int c, double (*bar)[AS_MAX])
{
	char dat[512], gp[512];
	const char *key = attrib_class_key(c);

	snprintf(dat, sizeof(dat), "%s-stages-%s.dat", prefix, key);
	snprintf(gp, sizeof(gp), "%s-stages-%s.gp", prefix, key);
	FILE *f = fopen(dat, "w");

	if (!f) {
		pr_err("vmm ab: cannot write %s: %s", dat, strerror(errno));
		return -EIO;
	}
	fprintf(f, "# %s samples of the timer: per arm the median over its epochs of each epoch's stage median, us "
		   "(0: not seen)\n# arm", attrib_class_name(c));
	for (int s = 0; s < AS_MAX; s++)
		fprintf(f, " %s", attrib_stage_name(s));
	fputc('\n', f);
	for (int a = 0; a < ab->nr_arms; a++) {
		fprintf(f, "%s", ab->arm[a].name);
		for (int s = 0; s < AS_MAX; s++)
			fprintf(f, " %.3f", bar[a][s]);
		fputc('\n', f);
	}
	if (fclose(f) != 0 || !(f = fopen(gp, "w"))) {
		pr_err("vmm ab: cannot write %s or %s", dat, gp);
		return -EIO;
	}
	for (int fmt = 0; fmt < 2; fmt++) {
		fprintf(f, "set terminal %s size 800,500\nset output '%s-stages-%s.%s'\n", fmt ? "pngcairo" : "svg", prefix,
			key, fmt ? "png" : "svg");
		fprintf(f, "set title 'vmm ab: where the timer latency of %s samples goes, per arm (stage medians)'\n"
			   "set ylabel 'us'\nset style data histograms\nset style histogram rowstacked\n"
			   "set style fill solid 0.8 border -1\nset boxwidth 0.6\nset key outside right top\nset grid y\n"
			   "set yrange [0:*]\nplot ", attrib_class_name(c));
		for (int s = 0; s < AS_MAX; s++)
			fprintf(f, "%s'%s' using %d%s title '%s'", s ? ", " : "", s ? "" : dat, s + 2, s ? "" : ":xtic(1)",
				attrib_stage_name(s));
		fputc('\n', f);
	}
	if (fclose(f) != 0) {
		pr_err("vmm ab: cannot write %s", gp);
		return -EIO;
	}
	int r = ab_run_gnuplot(gp, dat);

	if (r > 0)
		fprintf(stderr, "vmm ab: plots %s-stages-%s.svg and %s-stages-%s.png\n", prefix, key, prefix, key);
	return r < 0 ? r : 0;
}

int ab_stages_plot(const struct ab *ab, const char *prefix)
{
	int r = 0;

	/* a chart per class that every arm has: a bar missing would read as a stage of 0 */
	for (int c = 0; c < AB_ST_CLASSES && r >= 0; c++) {
		double bar[AB_MAX_ARMS][AS_MAX];
		bool all = true;

		for (int a = 0; a < ab->nr_arms; a++)
			all &= arm_bar(ab, a, c, bar[a]);
		if (all)
			r = write_files(ab, prefix, c, bar);
	}
	return r;
}
