// SPDX-License-Identifier: MIT
/* vmm run's options: the input is argv (NUL-separated words); also each word as a size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/config.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_ARGS + 2];
	int argc = 0;
	struct vm_config c;
	uint64_t v;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	argv[argc++] = "run";
	for (char *p = buf; p <= buf + size && argc <= MAX_ARGS; p += strlen(p) + 1) {
		argv[argc++] = p;
		parse_size(p, &v);
	}
	argv[argc] = NULL;
	config_parse_run(&c, argc, argv);
	free(buf);
	return 0;
}
