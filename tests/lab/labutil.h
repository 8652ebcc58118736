/* SPDX-License-Identifier: MIT */
#ifndef VMM_TESTS_LABUTIL_H
#define VMM_TESTS_LABUTIL_H

#define VMM "/lab/vmm"

struct result {
	int status; /* exit code, or 128 + signal */
	char *out, *err;
	double secs, banner_secs; /* from exec to exit, and to the guest's banner (-1: none) */
};

double now(void);
/* Runs argv (stdin /dev/null), collecting stdout/stderr; SIGKILL after timeout seconds, SIGTERM
 * after term_after seconds when > 0. */
void run_vmm_term(char *const argv[], int timeout, int term_after, struct result *r);
void run_vmm(char *const argv[], int timeout, struct result *r);
void result_free(struct result *r);
/* The value after "KEY " in text (a GUEST-... marker line), copied into buf; NULL when absent. */
const char *marker(const char *text, const char *key, char *buf, size_t size);

#endif
