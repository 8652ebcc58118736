// SPDX-License-Identifier: MIT
/* vmm ab --attribute's inputs: the attribution FILE a vmm run wrote (ab_attr_parse: its rows go
 * into the A/B figures) and the child's stderr, whose "attribution: none" line vmm ab picks out
 * (ab_stderr_feed). The first byte chooses; the rest is the text, fed to the stderr reader in
 * chunks whose size the second byte picks. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ab/ab_stages.h"
#include "guest/probe_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	const char *text = (const char *)data + 2;
	size_t len = size - 2;

	if (data[0] & 1) {
		struct ab_attr_file f;
		char why[256];

		memset(&f, 0, sizeof(f));
		if (ab_attr_parse(text, len, 4096, &f, why, sizeof(why)) == 0) {
			for (size_t i = 0; i < f.n; i++) /* every row as the parser vouched for it */
				if (f.row[i].cls >= AC_MAX || f.row[i].workload < 1 || f.row[i].workload > PROBE_W_MAX)
					__builtin_trap();
		} else if (!why[0] || !memchr(why, 0, sizeof(why))) {
			__builtin_trap(); /* a refusal always says why */
		}
		ab_attr_file_free(&f);
		return 0;
	}
	struct ab_stderr e;
	size_t chunk = 1 + data[1] % 64;
	FILE *null = fopen("/dev/null", "w");

	memset(&e, 0, sizeof(e));
	/* the reader passes the child's other lines on to vmm ab's stderr: keep the fuzzer's quiet */
	int saved = dup(2);

	if (null)
		dup2(fileno(null), 2);
	e.fd = -1;
	for (size_t at = 0; at < len; at += chunk)
		ab_stderr_feed(&e, text + at, len - at < chunk ? len - at : chunk);
	ab_stderr_end(&e);
	if (!memchr(e.none, 0, sizeof(e.none)))
		__builtin_trap();
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
	if (null)
		fclose(null);
	return 0;
}
