// SPDX-License-Identifier: MIT
/*
 * `vmm ctl PATH get | set halt-poll-ns N | set poll-control VCPU|all 0|1 | stats` and `vmm stat PATH [--once] [--json]
 * [--interval S]`: clients of a running vmm's control socket (--ctl PATH). vmm stat shows, per
 * vCPU, what KVM counted during the last interval (the way kvm_stat shows KVM's counters).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/hot.h"
#include "vmm/ctl.h"
#include "cli/ctl_cmd.h"
#include "core/json.h"
#include "core/log.h"
#include "vmm/vcpu_state.h"

#define REPLY_MAX (1 << 20)

VMM_HOT static int request(const char *path, const char *req, char **reply)
{
	*reply = malloc(REPLY_MAX);
	if (!*reply)
		return -ENOMEM;
	int r = ctl_request(path, req, *reply, REPLY_MAX);

	if (r < 0)
		return r;
	if (!strstr(*reply, "\"ok\":true")) {
		pr_err("vmm at %s refused: %.*s", path, (int)strcspn(*reply, "\n"), *reply);
		return -EINVAL;
	}
	return 0;
}

VMM_HOT int ctl_cmd(int argc, char **argv)
{
	char req[128], *reply = NULL;
	int r;

	bool help = false;

	for (int i = 1; i < argc; i++)
		help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
	if (!help && argc < 3) {
		pr_err("vmm ctl takes a control socket's path and a request (vmm ctl --help)");
		return 1;
	}
	if (help) {
		printf("usage: vmm ctl PATH get                 the VM's halt-poll ceiling and shape\n"
			"       vmm ctl PATH set halt-poll-ns N  change the ceiling (KVM_CAP_HALT_POLL) now\n"
			"       vmm ctl PATH set poll-control VCPU|all 0|1\n"
			"                                        x86: may KVM halt-poll for the vCPU (MSR_KVM_POLL_CONTROL)\n"
			"       vmm ctl PATH stats               KVM's stats since the guest started (JSON)\n"
			"       vmm ctl PATH raw JSON            send one request line as it is\n");
		return 0;
	}
	const char *path = argv[1], *what = argv[2];

	if (!strcmp(what, "get") && argc == 3) {
		snprintf(req, sizeof(req), "{\"cmd\":\"get\"}");
	} else if (!strcmp(what, "stats") && argc == 3) {
		snprintf(req, sizeof(req), "{\"cmd\":\"stats\"}");
	} else if (!strcmp(what, "set") && argc == 5 && !strcmp(argv[3], "halt-poll-ns")) {
		char *end;
		unsigned long long ns = strtoull(argv[4], &end, 10);

		if (*end || end == argv[4] || argv[4][0] == '-') {
			pr_err("vmm ctl set halt-poll-ns takes a whole number of nanoseconds, not '%s'", argv[4]);
			return 1;
		}
		snprintf(req, sizeof(req), "{\"cmd\":\"set\",\"halt_poll_ns\":%llu}", ns);
	} else if (!strcmp(what, "set") && argc == 6 && !strcmp(argv[3], "poll-control")) {
		char *end;
		unsigned long n = strtoul(argv[4], &end, 10);

		if (strcmp(argv[5], "0") && strcmp(argv[5], "1")) {
			pr_err("vmm ctl set poll-control VCPU|all 0|1: the value is 0 (KVM never halt-polls for "
			       "the vCPU) or 1 (it may), not '%s'", argv[5]);
			return 1;
		}
		if (!strcmp(argv[4], "all")) {
			snprintf(req, sizeof(req), "{\"cmd\":\"set\",\"poll_control\":%s,\"vcpu\":\"all\"}", argv[5]);
		} else if (*end || end == argv[4] || argv[4][0] == '-' || n > CTL_MAX_VCPU) {
			pr_err("vmm ctl set poll-control VCPU|all 0|1: VCPU is a vCPU number or all, not '%s'", argv[4]);
			return 1;
		} else {
			snprintf(req, sizeof(req), "{\"cmd\":\"set\",\"poll_control\":%s,\"vcpu\":%lu}", argv[5], n);
		}
	} else if (!strcmp(what, "raw") && argc == 4) {
		r = ctl_request(path, argv[3], reply = malloc(REPLY_MAX), REPLY_MAX);
		if (r == 0)
			fputs(reply, stdout);
		free(reply);
		return r < 0 ? 1 : 0;
	} else {
		pr_err("vmm ctl: unknown request '%s' (vmm ctl --help)", what);
		return 1;
	}
	r = request(path, req, &reply);
	if (r == 0)
		fputs(reply, stdout);
	free(reply);
	return r < 0 ? 1 : 0;
}

/* In the stats JSON: the value of stat in source src (a cumulative or instant stat); -1 if absent. */
VMM_HOT static int64_t json_stat(const char *json, const char *src, const char *stat)
{
	char key[96];

	snprintf(key, sizeof(key), "{\"name\":\"%s\",\"id\":", src);
	const char *s = strstr(json, key);

	if (!s)
		return -1;
	/* the next source: its last stat object closes, then its list and itself ("}]},"); a
	 * histogram inside a list ends "N]}," instead */
	const char *next = strstr(s + 1, "}]},{\"name\":");

	snprintf(key, sizeof(key), "{\"name\":\"%s\",", stat);
	const char *p = strstr(s, key);

	if (!p || (next && p > next))
		return -1;
	const char *v = strstr(p, "\"value\":");
	const char *end = strchr(p, '}');

	if (!v || (end && v > end))
		return -1;
	return strtoll(v + 8, NULL, 10);
}

/* The stats reply's per-vCPU halt state (vmm/vcpu_state.h), one line each; nothing when the vmm
 * that answered has none. */
static void print_vcpu_state(const char *reply)
{
	struct json root;
	char line[512];

	if (json_parse(reply, strlen(reply), &root, NULL, 0) < 0)
		return;
	const struct json *a = json_get(json_get(json_get(&root, "stats"), "vmm"), "vcpu_state");

	for (size_t i = 0; a && a->t == JSON_ARR && i < a->n; i++) {
		struct vcpu_state st;

		if (vcpu_state_from_json(&a->items[i], &st) < 0)
			continue;
		vcpu_state_line(&st, line, sizeof(line));
		printf("%s\n", line);
	}
	json_free(&root);
}

static const char *const cols[] = { "exits", "halt_attempted_poll", "halt_successful_poll", "halt_wakeup",
				    "halt_poll_success_ns", "halt_wait_ns" };
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

int stat_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "once", no_argument, NULL, 'o' }, { "json", no_argument, NULL, 'j' },
		{ "interval", required_argument, NULL, 'i' }, { "help", no_argument, NULL, 'h' }, { 0 },
	};
	bool once = false, json = false;
	double interval = 1.0;
	int o;

	optind = 0;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "oji:h", opts, NULL)) != -1) {
		switch (o) {
		case 'o': once = true; break;
		case 'j': json = true; break;
		case 'i': interval = strtod(optarg, NULL); break;
		case 'h':
			printf("usage: vmm stat PATH [--once] [--json] [--interval SECONDS]\n"
			       "  per vCPU, what KVM counted in each interval (exits, halt polling, wake-ups);\n"
			       "  --once: one snapshot of the totals since the guest started; --json: the raw stats\n"
			       "  then per vCPU its halt state over the run so far: whether WFI (arm64) or HLT (x86)\n"
			       "  reaches KVM and why, vLPIs, doorbells, halt polls, its thread's preemptions\n");
			return 0;
		default:
			pr_err("vmm stat: unknown option (vmm stat --help)");
			return 1;
		}
	}
	if (optind != argc - 1 || interval < 0.1) {
		pr_err("vmm stat takes the control socket's path (vmm run --ctl PATH) and an interval >= 0.1 s");
		return 1;
	}
	const char *path = argv[optind];
	char *prev = NULL, *cur = NULL;

	for (int round = 0;; round++) {
		if (request(path, "{\"cmd\":\"stats\"}", &cur) < 0) {
			free(cur);
			free(prev);
			return round ? 0 : 1; /* the VM ended: a live view stops with it */
		}
		if (json) {
			fputs(cur, stdout);
		} else if (once || prev) {
			printf("%-6s", "vcpu");
			for (size_t k = 0; k < NCOLS; k++)
				printf(" %*s", (int)strlen(cols[k]), cols[k]);
			printf("%s\n", once ? "   (since the guest started)" : "   (per interval)");
			for (int v = 0; v < 512; v++) {
				char src[16];

				snprintf(src, sizeof(src), "vcpu%d", v);
				if (json_stat(cur, src, "exits") < 0)
					break;
				printf("%-6d", v);
				for (size_t k = 0; k < NCOLS; k++) {
					int64_t a = json_stat(cur, src, cols[k]), b = prev ? json_stat(prev, src, cols[k]) : 0;

					printf(" %*lld", (int)strlen(cols[k]), a < 0 ? -1LL : (long long)(a - (b < 0 ? 0 : b)));
				}
				printf("\n");
			}
			print_vcpu_state(cur); /* the run so far, not the interval */
			fflush(stdout);
		}
		if (once || json)
			break;
		free(prev);
		prev = cur;
		cur = NULL;
		struct timespec ts = { (time_t)interval, (long)((interval - (time_t)interval) * 1e9) };

		nanosleep(&ts, NULL);
	}
	free(cur);
	free(prev);
	return 0;
}
