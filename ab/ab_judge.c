// SPDX-License-Identifier: MIT
/*
 * vmm ab judge RUN.json: a saved run (vmm ab --json) judged again without the guest, with the
 * same per-epoch analysis as the run itself (ab_report) and new --alpha, --min-effect or --warmup.
 * The file may come from anywhere: every value is checked before it becomes an epoch, and a file
 * whose epochs are not laid out in blocks of every arm (as vmm ab writes them) is refused.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ab/ab.h"
#include "core/json.h"
#include "core/log.h"

static int arm_index(const struct ab *ab, const struct json *v)
{
	for (int a = 0; v && v->t == JSON_STR && a < ab->nr_arms; a++)
		if (!strcmp(ab->arm[a].name, v->str))
			return a;
	return -1;
}

static double num_or(const struct json *v, double dflt)
{
	return v && v->t == JSON_NUM && isfinite(v->num) ? v->num : dflt;
}

static const char *take_arms(struct ab *ab, const struct json *arms)
{
	if (!arms || arms->t != JSON_ARR || arms->n < 2 || arms->n > AB_MAX_ARMS)
		return "no \"arms\" list of 2 to 4 arms";
	for (size_t i = 0; i < arms->n; i++) {
		const struct json *name = json_get(&arms->items[i], "name"), *opts = json_get(&arms->items[i], "options");
		struct ab_arm_cfg *c = &ab->arm[ab->nr_arms++];

		if (!name || name->t != JSON_STR || !name->str[0] || strlen(name->str) >= sizeof(c->name) ||
		    strspn(name->str, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != strlen(name->str))
			return "an arm without a plain name of at most 31 characters";
		snprintf(c->name, sizeof(c->name), "%s", name->str);
		if (arm_index(ab, name) != ab->nr_arms - 1)
			return "two arms of one name";
		for (size_t k = 0; opts && opts->t == JSON_ARR && k < opts->n && c->argc < AB_MAX_ARGS - 1; k++)
			if (opts->items[k].t == JSON_STR && !(c->argv[c->argc++] = strdup(opts->items[k].str)))
				return "out of memory";
	}
	return NULL;
}

static const char *take_workloads(struct ab_run *r, const struct json *wl)
{
	for (size_t i = 0; wl && i < wl->n; i++) {
		const struct json *x = json_get(&wl->items[i], "samples");
		int w = 0;

		for (int k = 1; k <= PROBE_W_MAX; k++)
			if (!strcmp(wl->keys[i], ab_wname[k]))
				w = k;
		if (!w)
			return "a workload that is not timer, pingpong or udp";
		if (!x || (x->t != JSON_NUMS && !(x->t == JSON_ARR && x->n == 0)))
			return "a workload whose samples are not a list of numbers";
		for (size_t k = 0; k < x->n; k++)
			if (!(x->nums[k] >= 0 && isfinite(x->nums[k])))
				return "a sample that is not a non-negative number of us";
		if (x->n && !(r->x[w] = malloc(x->n * sizeof(double))))
			return "out of memory";
		if (x->n)
			memcpy(r->x[w], x->nums, x->n * sizeof(double));
		r->n[w] = x->n;
	}
	return NULL;
}

static const char *take_epochs(struct ab *ab, const struct json *eps)
{
	if (!eps || eps->t != JSON_ARR || !eps->n || eps->n > AB_MAX_EPOCHS)
		return "no \"epochs\" list (1 to 1024 epochs)";
	for (size_t e = 0; e < eps->n; e++) {
		const struct json *ep = &eps->items[e], *co = json_get(ep, "complete"), *wl = json_get(ep, "workloads");
		int arm = arm_index(ab, json_get(ep, "arm"));
		struct ab_run *r = &ab->run[ab->nr_runs++];

		if (ep->t != JSON_OBJ || arm < 0 || !co || co->t != JSON_BOOL || !wl || wl->t != JSON_OBJ)
			return "an epoch without a known arm, complete or workloads";
		/* the analysis pairs epochs by position: block b holds epochs [b * arms, (b + 1) * arms) */
		if (num_or(json_get(ep, "index"), -1) != (double)e ||
		    num_or(json_get(ep, "block"), -1) != (double)(e / ab->nr_arms))
			return "epochs not laid out in blocks of every arm, in order (as vmm ab writes them)";
		r->arm = arm;
		r->block = (int)(e / ab->nr_arms);
		r->complete = co->b;
		r->cpu_s = num_or(json_get(ep, "cpu_s"), 0);
		r->wall_s = num_or(json_get(ep, "wall_s"), 0);
		r->polls_ok = (long long)num_or(json_get(ep, "halt_successful_poll"), 0);
		r->polls_tried = (long long)num_or(json_get(ep, "halt_attempted_poll"), 0);
		const char *why = take_workloads(r, wl);

		if (why)
			return why;
		const struct json *st = json_get(ep, "stages"); /* --attribute's, absent before it */

		if (st && (why = ab_stage_epoch_parse(st, &r->st)))
			return why;
		ab->at.any |= st && r->st.n;
	}
	for (int b = 0; b * ab->nr_arms < ab->nr_runs; b++) /* every arm once per block */
		for (int e = b * ab->nr_arms; e < (b + 1) * ab->nr_arms && e < ab->nr_runs; e++)
			for (int f = b * ab->nr_arms; f < e; f++)
				if (ab->run[e].arm == ab->run[f].arm)
					return "a block that runs one arm twice";
	return NULL;
}

int ab_saved_load(const char *text, size_t len, struct ab *ab, char *why, size_t whysize)
{
	struct json root;
	int r = json_parse(text, len, &root, why, whysize);
	const char *w = NULL;

	memset(ab, 0, sizeof(*ab));
	if (r < 0)
		return r;
	const struct json *fmt = json_get(&root, "format"), *tool = json_get(&root, "tool"), *mode = json_get(&root, "mode");

	if (!fmt || fmt->t != JSON_NUM || fmt->num != 2 || (tool && (tool->t != JSON_STR || strcmp(tool->str, "vmm ab"))))
		w = "not a saved vmm ab run (--json, format 2); vmm ab compare --json files are judged already";
	else
		w = take_arms(ab, json_get(&root, "arms"));
	if (!w)
		w = take_epochs(ab, json_get(&root, "epochs"));
	if (!w) {
		ab->seed = (uint64_t)num_or(json_get(&root, "seed"), 1);
		ab->mode = mode && mode->t == JSON_STR && !strcmp(mode->str, "one-vm") ? AB_ONE_VM : AB_BOOTS;
		ab->epochs = (unsigned int)fmax(0, fmin(AB_MAX_EPOCHS, num_or(json_get(&root, "blocks"), 0)));
		ab->warmup = (unsigned int)fmax(0, fmin(AB_MAX_EPOCHS, num_or(json_get(&root, "warmup"), 0)));
		ab->epoch_ms = (unsigned int)fmax(0, fmin(3600000, num_or(json_get(&root, "epoch_ms"), 0)));
		ab->alpha = num_or(json_get(&root, "alpha"), 0.01);
		ab->min_effect = num_or(json_get(&root, "min_effect"), 0.05);
		if (!(ab->alpha > 0 && ab->alpha < 1) || !(ab->min_effect > 0 && ab->min_effect < 1))
			w = "an alpha or min_effect outside (0, 1)";
	}
	json_free(&root);
	if (w) {
		snprintf(why, whysize, "%s", w);
		ab_saved_unload(ab);
		return -EINVAL;
	}
	return 0;
}

void ab_saved_unload(struct ab *ab)
{
	for (int e = 0; e < ab->nr_runs; e++)
		for (int w = 0; w <= PROBE_W_MAX; w++)
			free(ab->run[e].x[w]);
	for (int a = 0; a < ab->nr_arms; a++)
		for (int i = 0; i < ab->arm[a].argc; i++)
			free(ab->arm[a].argv[i]);
	memset(ab, 0, sizeof(*ab));
}

/* The whole of a file of at most max bytes, sized by fstat (a saved run may be large: nothing
 * bigger than the file is allocated), NUL-terminated. NULL with the reason said. */
char *ab_file_read(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "r");
	struct stat st;
	char *buf = NULL;

	if (!f) {
		pr_err("%s: cannot open it: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode))
		pr_err("%s: not a file", path);
	else if ((size_t)st.st_size > max)
		pr_err("%s: larger than %zu MiB: not a vmm ab --json file", path, max >> 20);
	else if (!(buf = malloc((size_t)st.st_size + 1)))
		pr_err("%s: out of memory", path);
	else if ((*len = fread(buf, 1, (size_t)st.st_size + 1, f)) > (size_t)st.st_size || ferror(f)) {
		pr_err("%s: changed or failed while being read", path);
		free(buf);
		buf = NULL;
	} else {
		buf[*len] = 0;
	}
	fclose(f);
	return buf;
}

static void judge_usage(void)
{
	pr_err("vmm ab judge takes one saved run: vmm ab judge RUN.json [--alpha P] [--min-effect F] [--warmup K] "
	       "[--json FILE] [--plot PREFIX] [--fail-on-regression]");
}

int ab_judge_cmd(int argc, char **argv)
{
	static struct ab ab;
	const char *path = NULL, *json = NULL, *plot = NULL;
	double alpha = 0, min_effect = 0;
	long warmup = -1;
	bool fail = false, bad = false;
	char why[256];

	for (int i = 1; i < argc && !bad; i++) {
		if (!strcmp(argv[i], "--alpha") && i + 1 < argc)
			bad = ab_parse_level("--alpha", argv[++i], false, &alpha) < 0;
		else if (!strcmp(argv[i], "--min-effect") && i + 1 < argc)
			bad = ab_parse_level("--min-effect", argv[++i], true, &min_effect) < 0;
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
			bad = (warmup = strtol(argv[++i], NULL, 10)) < 0 || warmup > AB_MAX_EPOCHS;
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--plot") && i + 1 < argc && !strchr(argv[i + 1], '\''))
			plot = argv[++i];
		else if (!strcmp(argv[i], "--fail-on-regression"))
			fail = true;
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else
			bad = true;
	}
	if (bad || !path) {
		judge_usage();
		return 1;
	}
	size_t len;
	char *text = ab_file_read(path, AB_SAVED_MAX, &len);

	if (!text)
		return 1;
	int r = ab_saved_load(text, len, &ab, why, sizeof(why));

	free(text);
	if (r < 0) {
		pr_err("%s: %s", path, why);
		return 1;
	}
	if (warmup >= ab.nr_runs) {
		pr_err("vmm ab judge --warmup %ld: %s has %d epochs", warmup, path, ab.nr_runs);
		ab_saved_unload(&ab);
		return 1;
	}
	ab.alpha = alpha ? alpha : ab.alpha;
	ab.min_effect = min_effect ? min_effect : ab.min_effect;
	ab.warmup = warmup >= 0 ? (unsigned int)warmup : ab.warmup;
	ab.json = json;
	ab.plot = plot;
	ab.fail_on_regression = fail;
	fprintf(stderr, "vmm ab judge: %s, %d arms, %d epochs, seed %llu, warm-up %u, alpha %g, minimum effect %.0f%%\n",
		path, ab.nr_arms, ab.nr_runs, (unsigned long long)ab.seed, ab.warmup, ab.alpha, 100 * ab.min_effect);
	r = ab_report(&ab);
	ab_saved_unload(&ab);
	return r < 0 ? 1 : r;
}
