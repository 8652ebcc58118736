// SPDX-License-Identifier: MIT
/* Writing JSON (core/json.h): the one string escaper every JSON writer of vmm goes through. */
#include <math.h>
#include <stdio.h>

#include "core/hot.h"
#include "core/json.h"

VMM_HOT void json_write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f); /* UTF-8 passes through as is */
	}
	fputc('"', f);
}

void json_write_number(FILE *f, double x)
{
	if (isfinite(x))
		fprintf(f, "%.6g", x);
	else
		fputs("null", f);
}

void json_write_member_number(FILE *f, const char *key, double x)
{
	fprintf(f, ",\"%s\":", key);
	json_write_number(f, x);
}
