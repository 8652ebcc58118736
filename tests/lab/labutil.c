// SPDX-License-Identifier: MIT
/* Shared by the lab tests: running vmm as a user would, with its output and exit status. */
#include <ctype.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/json.h"
#include "tests/lab/labutil.h"

#define OUT_MAX (1 << 20)

char *lab_kernel(void)
{
	const char *k = getenv("VMM_LAB_KERNEL");
	struct utsname u;
	char *p;

	if (k && *k)
		return strdup(k);
	uname(&u);
	if (asprintf(&p, "/boot/vmlinuz-%s", u.release) < 0)
		abort();
	return p;
}

double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Starts vmm with stdin in_fd (-1: /dev/null) and stdout/stderr on pipes (read ends in po[0],
 * pe[0]); child (if any) runs in the child before exec. */
static pid_t spawn(char *const argv[], int in_fd, struct result *r, int po[2], int pe[2],
		   void (*child)(const void *arg), const void *child_arg)
{
	memset(r, 0, sizeof(*r));
	r->out = calloc(1, OUT_MAX + 1);
	r->err = calloc(1, OUT_MAX + 1);
	r->banner_secs = r->term_secs = -1;
	if (pipe(po) || pipe(pe))
		abort();
	pid_t pid = fork();

	if (pid == 0) {
		int nul = in_fd >= 0 ? in_fd : open("/dev/null", O_RDONLY);

		dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]); /* else vmm itself keeps a reader on its stdout, and EPIPE never comes */
		close(pe[0]);
		if (child)
			child(child_arg);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	return pid;
}

/* One read of vmm's stdout (i 0) or stderr (i 1) from fd into r, n[i] bytes of it filled so far;
 * the bytes read, <= 0 at EOF (the buffer keeps the first OUT_MAX bytes, the rest is drained). */
static ssize_t read_output(int fd, int i, struct result *r, size_t n[2])
{
	char *buf = i ? r->err : r->out;
	ssize_t got = read(fd, buf + n[i], n[i] < OUT_MAX ? OUT_MAX - n[i] : 0);

	if (got > 0)
		n[i] += got;
	return got;
}

/* Runs vmm with argv, collecting stdout/stderr, killing it after timeout seconds; with term_after
 * > 0, sends SIGTERM (as a user's kill would) that many seconds after the guest's first output. */
void run_vmm_term(char *const argv[], int timeout, int term_after, struct result *r)
{
	int po[2], pe[2];
	size_t n[2] = { 0, 0 };

	double t0 = now();
	pid_t pid = spawn(argv, -1, r, po, pe, NULL, NULL);

	r->t0 = t0;

	struct pollfd p[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	int open_fds = 2;

	bool termed = false;
	double first_out = -1; /* the guest printing means vmm is past set-up and owns its signals */

	while (open_fds) {
		int left = (int)((t0 + timeout - now()) * 1000);

		if (term_after > 0 && !termed && first_out >= 0) {
			int tl = (int)((first_out + term_after - now()) * 1000);

			if (tl <= 0) {
				kill(pid, SIGTERM);
				termed = true;
				continue;
			}
			if (tl < left)
				left = tl;
		}
		if (left <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(p, 2, left) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (read_output(p[i].fd, i, r, n) <= 0) {
				p[i].fd = -1;
				open_fds--;
				continue;
			}
			if (i == 0 && first_out < 0)
				first_out = now();
			if (i == 0 && r->banner_secs < 0 && strstr(r->out, "vmm-guest: "))
				r->banner_secs = now() - t0;
		}
	}
	int st;

	waitpid(pid, &st, 0);
	r->secs = now() - t0;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	close(po[0]);
	close(pe[0]);
}

void run_vmm(char *const argv[], int timeout, struct result *r)
{
	run_vmm_term(argv, timeout, 0, r);
}

void run_vmm_opts(char *const argv[], const struct run_opts *o, struct result *r)
{
	int po[2], pe[2];
	size_t n[2] = { 0, 0 };
	double termed = -1, full_since = -1;

	double t0 = now();
	int pi[2] = { -1, -1 };

	if (o->input && pipe2(pi, O_CLOEXEC)) /* dup2 clears it on the child's stdin */
		abort();
	pid_t pid = spawn(argv, pi[0], r, po, pe, o->child, o->child_arg);

	if (o->pid_out)
		*o->pid_out = pid;
	if (pi[0] >= 0)
		close(pi[0]);

	r->t0 = t0;

	int cap = fcntl(po[0], F_GETPIPE_SZ);
	struct pollfd p[2] = { { o->out == STDOUT_UNREAD ? -1 : po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };

	/* vmm has exited when its stderr closes (stdout may be closed by the test already) */
	while (p[1].fd >= 0) {
		double t = now();

		if (t > t0 + o->timeout) {
			kill(pid, SIGKILL);
			break;
		}
		if (pi[1] >= 0 && o->input_on && strstr(r->out, o->input_on)) {
			if (write(pi[1], o->input, strlen(o->input)) < 0)
				perror("labutil: writing vmm's stdin");
			close(pi[1]); /* then EOF: vmm carries on without input */
			pi[1] = -1;
		}
		if (termed < 0) {
			bool go = o->term_on && strstr(r->out, o->term_on);
			int queued = 0;

			/* full, and for a while: vmm's writer is certainly stuck behind it by then */
			if (o->out == STDOUT_UNREAD && ioctl(po[0], FIONREAD, &queued) == 0 &&
			    queued >= cap - 4096) {
				if (full_since < 0)
					full_since = t;
				go = t > full_since + 2;
			}
			if (go) {
				if (o->term_on && o->on_match)
					o->on_match(pid, o->match_arg);
				kill(pid, o->signal ? o->signal : SIGTERM);
				termed = t;
			}
		}
		if (poll(p, 2, 100) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
				continue;
			size_t had = n[i];

			if (read_output(p[i].fd, i, r, n) <= 0) {
				p[i].fd = -1;
				continue;
			}
			if (i == 0 && r->banner_secs < 0 && strstr(r->out, "vmm-guest: "))
				r->banner_secs = now() - t0;
			if (i == 0 && o->on_out)
				o->on_out(r->out + had, n[0] - had, now() - t0, o->out_arg);
			if (i == 0 && o->out == STDOUT_CLOSE && n[0] >= o->close_after) {
				close(po[0]); /* the reader goes away, as head -c does */
				po[0] = p[0].fd = -1;
			}
		}
	}
	int st;

	waitpid(pid, &st, 0);
	r->secs = now() - t0;
	if (termed >= 0)
		r->term_secs = now() - termed;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (po[0] >= 0)
		close(po[0]);
	if (pi[1] >= 0)
		close(pi[1]);
	close(pe[0]);
}

void test_guest_argv(char **argv, size_t n, const char *step, char *const extra[])
{
	static char params[256];
	char *const base[] = { VMM, "run", "-k", lab_kernel(), "-i", "/lab/guest.cpio.gz", "-m", "512M",
			       "-c", "2", "--console", "virtio", "-p", params };
	size_t i = 0;

	snprintf(params, sizeof(params), "console=hvc0 panic=-1 quiet vmmtest=%s", step);
	for (size_t k = 0; k < sizeof(base) / sizeof(base[0]) && i + 1 < n; k++)
		argv[i++] = base[k];
	for (size_t k = 0; extra && extra[k] && i + 1 < n; k++)
		argv[i++] = extra[k];
	argv[i] = NULL;
}

void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL; /* a second call (a test's own, then the teardown's) is harmless */
}

const char *marker(const char *text, const char *key, char *buf, size_t size)
{
	size_t kl = strlen(key);

	for (const char *p = text; (p = strstr(p, key)); p += kl) {
		if ((p != text && p[-1] != '\n') || p[kl] != ' ')
			continue;
		const char *v = p + kl + 1;
		size_t n = strcspn(v, "\r\n");

		snprintf(buf, size, "%.*s", (int)n, v);
		return buf;
	}
	return NULL;
}

bool refused_with(char *const argv[], const char *msg, struct result *r)
{
	result_free(r);
	run_vmm(argv, 60, r);
	return r->status == 1 && strstr(r->err, msg);
}

int dev_summary(const char *err, const char *name, int slot, struct devstats *s)
{
	char key[64];

	snprintf(key, sizeof(key), "%s (00:%02x.0): ", name, slot);
	for (const char *p = err; (p = strstr(p, key)); p++)
		if (sscanf(p + strlen(key), "%llu kicks by ioeventfd, %llu by MMIO exit, %llu interrupts by "
			   "irqfd (%llu MSI-X), %llu exits on its BAR", &s->kicks, &s->kick_exits, &s->irqs,
			   &s->msix, &s->bar_exits) == 5)
			return 0;
	return -1;
}

void lab_pattern(uint8_t *buf, size_t size)
{
	size_t pos = 0;

	for (int i = 0; pos < size; i++) {
		char line[32];
		int n = snprintf(line, sizeof(line), "vmm-pattern-%d\n", i);

		for (size_t k = 0; k < 65536 && pos < size; k++)
			buf[pos++] = line[k % n];
	}
}

char *lab_slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	FILE *m = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;

	while (m && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	if (m)
		fclose(m);
	fclose(f);
	if (size)
		*size = buf ? len : 0;
	return buf;
}

/* The end of the flat object starting at p ('{'): its '}' outside strings, or NULL. */
static const char *obj_end(const char *p)
{
	bool in_str = false;

	for (p++; *p; p++) {
		if (in_str && *p == '\\' && p[1])
			p++;
		else if (*p == '"')
			in_str = !in_str;
		else if (!in_str && *p == '}')
			return p;
	}
	return NULL;
}

const char *json_str(const char *obj, const char *key, char *buf, size_t n)
{
	char k[64];

	snprintf(k, sizeof(k), "\"%s\":\"", key);
	const char *p = strstr(obj, k);

	if (!p || !n)
		return NULL;
	p += strlen(k);
	size_t i = 0;

	for (; *p && *p != '"' && i + 1 < n; p++)
		buf[i++] = *p == '\\' && p[1] ? *++p : *p;
	buf[i] = 0;
	return buf;
}

bool json_u64(const char *obj, const char *key, unsigned long long *v)
{
	char k[64];

	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *p = strstr(obj, k);

	if (!p || !isdigit((unsigned char)p[strlen(k)]))
		return false;
	*v = strtoull(p + strlen(k), NULL, 10);
	return true;
}

/* Calls fn on each row object of the table; stops when it returns true. */
static const char *irq_rows_each(const char *json, bool (*fn)(const char *obj, void *arg), void *arg, char *buf,
				 size_t n)
{
	const char *p = json ? strstr(json, "\"interrupts\":[") : NULL;

	if (!p)
		return NULL;
	for (p = strchr(p, '[') + 1; *p == '{' || *p == ','; ) {
		if (*p == ',') {
			p++;
			continue;
		}
		const char *e = obj_end(p);

		if (!e)
			return NULL;
		snprintf(buf, n, "%.*s", (int)(e - p + 1), p);
		if (fn(buf, arg))
			return buf;
		p = e + 1;
	}
	return NULL;
}

struct row_want {
	const char *device, *host_bdf, *vector;
	long long sum;
};

static bool row_is(const char *obj, void *arg)
{
	struct row_want *w = arg;
	char v[64];

	if (!json_str(obj, "device", v, sizeof(v)) || strcmp(v, w->device))
		return false;
	if (w->host_bdf && (!json_str(obj, "host_bdf", v, sizeof(v)) || strcmp(v, w->host_bdf)))
		return false;
	if (w->vector && (!json_str(obj, "vector", v, sizeof(v)) || strcmp(v, w->vector)))
		return false;
	if (!w->vector) { /* summing */
		unsigned long long c;

		w->sum = (w->sum < 0 ? 0 : w->sum) + (json_u64(obj, "count", &c) ? (long long)c : 0);
		return false;
	}
	return true;
}

const char *irq_row(const char *json, const char *device, const char *host_bdf, const char *vector,
		    char *buf, size_t n)
{
	struct row_want w = { device, host_bdf, vector, -1 };

	return irq_rows_each(json, row_is, &w, buf, n);
}

long long irq_count_sum(const char *json, const char *device)
{
	struct row_want w = { device, NULL, NULL, -1 };
	char buf[1024];

	irq_rows_each(json, row_is, &w, buf, sizeof(buf));
	return w.sum;
}

int lab_sh(const char *cmd)
{
	return system(cmd);
}

bool lab_gicv4(void)
{
	return lab_sh("dmesg | grep -q 'GICv4 support enabled'") == 0;
}

long long ab_epoch_polls(const char *out, const char *arm, int *epochs, bool *each_zero, bool *any_tried)
{
	char key[48];
	long long sum = 0;

	*epochs = 0;
	*each_zero = true;
	if (any_tried)
		*any_tried = false;
	snprintf(key, sizeof(key), " %-12s halt polls ", arm);
	for (const char *p = out; (p = strstr(p, key)); p++) {
		const char *eol = strchr(p, '\n');
		long long ok = 0, tried = 0;

		if (eol && memmem(p, eol - p, "(warm-up)", 9))
			continue;
		sscanf(p + strlen(key), "%lld of %lld", &ok, &tried);
		sum += ok;
		(*epochs)++;
		*each_zero &= ok == 0 && tried == 0;
		if (any_tried)
			*any_tried |= tried > 0;
	}
	return sum;
}

double attrib_num(const struct json *o, const char *key)
{
	const struct json *v = o ? json_get(o, key) : NULL;

	return v && v->t == JSON_NUM ? v->num : -1;
}

const struct json *attrib_class(const struct json *root, const char *workload, const char *cls)
{
	const struct json *ws = json_get(json_get(root, "report"), "workloads");

	for (size_t i = 0; ws && ws->t == JSON_ARR && i < ws->n; i++) {
		const struct json *w = &ws->items[i], *name = json_get(w, "workload");

		if (!name || name->t != JSON_STR || strcmp(name->str, workload))
			continue;
		const struct json *cs = json_get(w, "classes");

		for (size_t k = 0; cs && cs->t == JSON_ARR && k < cs->n; k++) {
			const struct json *c = json_get(&cs->items[k], "class");

			if (c && c->t == JSON_STR && !strcmp(c->str, cls))
				return &cs->items[k];
		}
	}
	return NULL;
}

void lab_wfi_policy(char *out, size_t size)
{
	char *cmdline = lab_slurp("/proc/cmdline", NULL);
	const char *p = cmdline ? strstr(cmdline, "kvm-arm.wfi_trap_policy=") : NULL;

	snprintf(out, size, "%.*s", p ? (int)strcspn(p + 24, " \n") : 0, p ? p + 24 : "");
	free(cmdline);
}
