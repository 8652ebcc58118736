// SPDX-License-Identifier: MIT
/*
 * The one writer of a comparison's JSON object: vmm ab's report and vmm ab compare --json both
 * call it, so the two files name and format the fields alike.
 */
#include <math.h>
#include <stdio.h>

#include "ab/design.h"
#include "core/json.h"


void ab_comparison_json(FILE *f, const struct ab_comparison *c)
{
	const struct ab_judged *j = c->j;

	fputs("{\"workload\":", f);
	json_write_string(f, c->workload);
	fputs(",\"quantity\":", f);
	json_write_string(f, c->quantity);
	fputs(",\"a\":", f);
	json_write_string(f, c->a);
	fputs(",\"b\":", f);
	json_write_string(f, c->b);
	if (c->arm) {
		fputs(",\"arm\":", f);
		json_write_string(f, c->arm);
	}
	fputs(",\"unit\":", f);
	json_write_string(f, c->unit);
	fprintf(f, ",\"blocks\":%d,\"exact\":%s", j->blocks, j->exact ? "true" : "false");
	json_write_member_number(f, "p", j->p);
	json_write_member_number(f, "p_floor", j->floor);
	json_write_member_number(f, "a_median", c->a_median);
	json_write_member_number(f, "b_median", c->b_median);
	json_write_member_number(f, "effect", j->effect);
	fputs(",\"effect_ci\":[", f);
	json_write_number(f, j->lo);
	fputc(',', f);
	json_write_number(f, j->hi);
	fputc(']', f);
	fputs(",\"equivalence_ci\":[", f);
	json_write_number(f, j->eq_lo);
	fputc(',', f);
	json_write_number(f, j->eq_hi);
	fputc(']', f);
	json_write_member_number(f, "min_detectable_effect", j->mde);
	json_write_member_number(f, "min_detectable_slower", j->mde_up);
	json_write_member_number(f, "min_detectable_faster", j->mde_down);
	if (c->with_verdict)
		fprintf(f, ",\"holm_reject\":%s,\"verdict\":\"%s\"", j->reject ? "true" : "false",
			ab_verdict_name[j->verdict]);
	fputc('}', f);
}
