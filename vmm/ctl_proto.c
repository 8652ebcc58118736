// SPDX-License-Identifier: MIT
/*
 * The control protocol's parser and dispatcher. Requests come from anyone who can open the socket:
 * a flat JSON object of string and unsigned integer values, strictly checked (length, characters,
 * duplicate and unknown keys, numbers that overflow), and nothing is applied unless the whole
 * request is valid.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/ctl.h"

struct cursor {
	const char *p, *end;
};

static void skip_ws(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

static int fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A string of printable ASCII without escapes (the protocol needs none). */
static int parse_string(struct cursor *c, char *out, size_t size)
{
	size_t n = 0;

	if (c->p >= c->end || *c->p != '"')
		return -1;
	for (c->p++; c->p < c->end && *c->p != '"'; c->p++) {
		if (*c->p == '\\' || !isprint((unsigned char)*c->p) || n + 1 >= size)
			return -1;
		out[n++] = *c->p;
	}
	if (c->p >= c->end)
		return -1;
	c->p++;
	out[n] = 0;
	return 0;
}

static int parse_uint(struct cursor *c, uint64_t *v)
{
	uint64_t x = 0;
	const char *start = c->p;

	for (; c->p < c->end && isdigit((unsigned char)*c->p); c->p++) {
		unsigned d = *c->p - '0';

		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	if (c->p == start || (c->p - start > 1 && *start == '0'))
		return -1;
	*v = x;
	return 0;
}

/* The longest command name, and its NUL. */
#define CTL_CMD_SIZE 16

/* The value of one member, key's: into req (or cmd, for "cmd"), each key at most once. */
static int parse_member(struct cursor *c, const char *key, struct ctl_req *req, char *cmd, bool *have_cmd,
			char *err, size_t err_len)
{
	if (!strcmp(key, "cmd")) {
		if (*have_cmd)
			return fail(err, err_len, "\"cmd\" given twice");
		if (parse_string(c, cmd, CTL_CMD_SIZE) < 0)
			return fail(err, err_len, "\"cmd\" takes a string");
		*have_cmd = true;
	} else if (!strcmp(key, "halt_poll_ns")) {
		if (req->has_halt_poll_ns)
			return fail(err, err_len, "\"halt_poll_ns\" given twice");
		if (parse_uint(c, &req->halt_poll_ns) < 0 || req->halt_poll_ns > UINT32_MAX)
			return fail(err, err_len, "\"halt_poll_ns\" takes a whole number of ns up to %u",
				    UINT32_MAX);
		req->has_halt_poll_ns = true;
	} else if (!strcmp(key, "poll_control")) {
		uint64_t v;

		if (req->has_poll_control)
			return fail(err, err_len, "\"poll_control\" given twice");
		if (parse_uint(c, &v) < 0 || v > 1)
			return fail(err, err_len, "\"poll_control\" takes 0 (KVM never halt-polls for the "
				    "vCPU) or 1 (it may)");
		req->poll_control = (int)v;
		req->has_poll_control = true;
	} else if (!strcmp(key, "vcpu")) {
		char all[8];
		uint64_t v;

		if (req->has_vcpu)
			return fail(err, err_len, "\"vcpu\" given twice");
		if (c->p < c->end && *c->p == '"') {
			if (parse_string(c, all, sizeof(all)) < 0 || strcmp(all, "all"))
				return fail(err, err_len, "\"vcpu\" takes a vCPU number or \"all\"");
			req->vcpu = -1;
		} else if (parse_uint(c, &v) < 0 || v > CTL_MAX_VCPU) {
			return fail(err, err_len, "\"vcpu\" takes a vCPU number (up to %d) or \"all\"",
				    CTL_MAX_VCPU);
		} else {
			req->vcpu = (int)v;
		}
		req->has_vcpu = true;
	} else {
		return fail(err, err_len, "unknown key \"%s\" (cmd, halt_poll_ns, poll_control, vcpu)", key);
	}
	return 0;
}

/* The command named, and the values that go with it: what the whole request means. */
static int check_request(struct ctl_req *req, const char *cmd, bool have_cmd, char *err, size_t err_len)
{
	if (!have_cmd)
		return fail(err, err_len, "no \"cmd\" (get, set, stats)");
	if (!strcmp(cmd, "get"))
		req->cmd = CTL_GET;
	else if (!strcmp(cmd, "set"))
		req->cmd = CTL_SET;
	else if (!strcmp(cmd, "stats"))
		req->cmd = CTL_STATS;
	else
		return fail(err, err_len, "unknown cmd \"%s\" (get, set, stats)", cmd);
	if (req->cmd == CTL_SET && req->has_halt_poll_ns == req->has_poll_control)
		return fail(err, err_len, "\"set\" takes one value: halt_poll_ns, or poll_control with vcpu");
	if (req->cmd != CTL_SET && (req->has_halt_poll_ns || req->has_poll_control || req->has_vcpu))
		return fail(err, err_len, "halt_poll_ns, poll_control and vcpu go with \"set\" only");
	if (req->has_poll_control != req->has_vcpu)
		return fail(err, err_len, "poll_control needs \"vcpu\" (a number or \"all\"), and vcpu goes with it");
	return 0;
}

static void reply_error(FILE *f, const char *msg)
{
	fputs("{\"ok\":false,\"error\":\"", f);
	for (const char *p = msg; *p; p++)
		fputc(*p == '"' || *p == '\\' ? '\'' : (unsigned char)*p < 0x20 ? ' ' : *p, f);
	fputs("\"}\n", f);
}

void ctl_handle(const struct ctl_ops *ops, const char *line, size_t len, FILE *f)
{
	struct ctl_req req;
	char err[320];

	if (ctl_parse(line, len, &req, err, sizeof(err)) < 0) {
		reply_error(f, err);
		return;
	}
	switch (req.cmd) {
	case CTL_SET: {
		if (req.has_poll_control) {
			if (!ops->set_poll_control || !ops->write_poll_control) {
				reply_error(f, "poll-control: this vmm has no per-vCPU polling switch");
				return;
			}
			if (ops->set_poll_control(ops->opaque, req.vcpu, req.poll_control, err, sizeof(err)) < 0) {
				reply_error(f, err);
				return;
			}
			fputs("{\"ok\":true", f);
			ops->write_poll_control(ops->opaque, f);
			fputs("}\n", f);
			return;
		}
		int r = ops->set_halt_poll(ops->opaque, req.halt_poll_ns);

		if (r < 0) {
			snprintf(err, sizeof(err), "KVM refused halt_poll_ns %llu: %s",
				 (unsigned long long)req.halt_poll_ns, strerror(-r));
			reply_error(f, err);
			return;
		}
		fprintf(f, "{\"ok\":true,\"halt_poll_ns\":%llu}\n",
			(unsigned long long)ops->get_halt_poll(ops->opaque));
		return;
	}
	case CTL_GET:
		fprintf(f, "{\"ok\":true,\"halt_poll_ns\":%llu", (unsigned long long)ops->get_halt_poll(ops->opaque));
		if (ops->write_state)
			ops->write_state(ops->opaque, f);
		if (ops->write_poll_control)
			ops->write_poll_control(ops->opaque, f);
		fputs("}\n", f);
		return;
	case CTL_STATS: {
		/* one reply per line: whatever newlines the stats writer puts in become spaces */
		char *buf = NULL;
		size_t n = 0;
		FILE *m = open_memstream(&buf, &n);
		int r = m && ops->write_stats ? ops->write_stats(ops->opaque, m) : -ENOSYS;

		if (m)
			fclose(m);
		fputs("{\"ok\":true,\"stats\":", f);
		if (r < 0 || !buf || !n)
			fputs("null", f);
		else
			for (size_t i = 0; i < n; i++)
				fputc(buf[i] == '\n' ? ' ' : buf[i], f);
		fputs("}\n", f);
		free(buf);
		return;
	}
	}
}

int ctl_feed(const struct ctl_ops *ops, char *buf, size_t *have, bool eof, FILE *f)
{
	char *nl;

	while ((nl = memchr(buf, '\n', *have))) {
		ctl_handle(ops, buf, nl - buf, f);
		if (fflush(f))
			return -EIO; /* the client does not read its replies */
		*have -= nl + 1 - buf;
		memmove(buf, nl + 1, *have);
	}
	if (*have == CTL_FEED_SIZE || (eof && *have)) {
		/* longer than any request (answered, dropped), or the last one without a newline */
		ctl_handle(ops, buf, *have, f);
		*have = 0;
		if (fflush(f))
			return -EIO;
	}
	return 0;
}

int ctl_parse(const char *line, size_t len, struct ctl_req *req, char *err, size_t err_len)
{
	struct cursor c = { line, line + len };
	char cmd[CTL_CMD_SIZE] = "";
	bool have_cmd = false;

	memset(req, 0, sizeof(*req));
	if (len > CTL_LINE_MAX)
		return fail(err, err_len, "request longer than %d bytes", CTL_LINE_MAX);
	skip_ws(&c);
	if (c.p >= c.end || *c.p++ != '{')
		return fail(err, err_len, "a request is one JSON object per line");
	skip_ws(&c);
	if (c.p < c.end && *c.p == '}') {
		c.p++;
	} else {
		for (;;) {
			char key[32];

			skip_ws(&c);
			if (parse_string(&c, key, sizeof(key)) < 0)
				return fail(err, err_len, "expected a key in double quotes (no escapes, < 32 chars)");
			skip_ws(&c);
			if (c.p >= c.end || *c.p++ != ':')
				return fail(err, err_len, "expected ':' after \"%s\"", key);
			skip_ws(&c);
			int r = parse_member(&c, key, req, cmd, &have_cmd, err, err_len);

			if (r < 0)
				return r;
			skip_ws(&c);
			if (c.p < c.end && *c.p == ',') {
				c.p++;
				continue;
			}
			if (c.p < c.end && *c.p == '}') {
				c.p++;
				break;
			}
			return fail(err, err_len, "expected ',' or '}'");
		}
	}
	skip_ws(&c);
	if (c.p != c.end)
		return fail(err, err_len, "trailing characters after the object");
	return check_request(req, cmd, have_cmd, err, err_len);
}
