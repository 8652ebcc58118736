/* SPDX-License-Identifier: MIT */
/*
 * The control socket (--ctl PATH): a unix stream socket speaking JSON, one request per line and
 * one reply per request, so scripts (and `vmm ctl`, `vmm stat`, `vmm ab`) drive a running VM.
 *   {"cmd":"get"}                          -> {"ok":true,"halt_poll_ns":N,...}
 *   {"cmd":"set","halt_poll_ns":N}         -> {"ok":true,"halt_poll_ns":N}
 *   {"cmd":"set","poll_control":0|1,"vcpu":N|"all"}
 *                                          -> {"ok":true,"poll_control":[per vCPU]} (x86)
 *   {"cmd":"stats"}                        -> {"ok":true,"stats":{...}} (since the guest started)
 * A malformed or unknown request gets {"ok":false,"error":"..."} and changes nothing.
 */
#ifndef VMM_CTL_H
#define VMM_CTL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/sandbox.h"

#define CTL_LINE_MAX 4096

enum ctl_cmd { CTL_GET, CTL_SET, CTL_STATS };

struct ctl_req {
	enum ctl_cmd cmd;
	bool has_halt_poll_ns;
	uint64_t halt_poll_ns;
	bool has_poll_control;
	int poll_control; /* 0 or 1 */
	bool has_vcpu;
	int vcpu;	  /* -1: all */
};

#define CTL_MAX_VCPU 4095 /* a "vcpu" beyond any VM vmm builds: refused while parsing */

/* Parses one request line (without its newline). 0, or -EINVAL with the reason in err. */
int ctl_parse(const char *line, size_t len, struct ctl_req *req, char *err, size_t err_len);

/* What the server asks of the VM it controls. */
struct ctl_ops {
	int (*set_halt_poll)(void *opaque, uint64_t ns);   /* -errno */
	uint64_t (*get_halt_poll)(void *opaque);
	int (*write_state)(void *opaque, FILE *f);        /* extra fields of "get", as ,"k":v pairs */
	int (*write_stats)(void *opaque, FILE *f);        /* a JSON value */
	void *opaque;
	enum sandbox_mode sandbox; /* the allowlist the server thread enters */
	/* the per-vCPU host polling switch (vcpu -1: all): 0, or -errno with the reason in err */
	int (*set_poll_control)(void *opaque, int vcpu, int on, char *err, size_t len);
	void (*write_poll_control)(void *opaque, FILE *f); /* ,"poll_control":... */
};

/* Handles one request line and writes one reply line to f. */
void ctl_handle(const struct ctl_ops *ops, const char *line, size_t len, FILE *f);

/* The server's request reader, after bytes arrived in buf[0..*have) (a buffer of
 * CTL_FEED_SIZE): answers every complete line, keeps the rest at the front; a buffer filled
 * without a newline is answered as one request (too long) and dropped. At EOF (eof true) a last
 * request without its newline is answered too. 0, or -EIO when a reply could not be written. */
#define CTL_FEED_SIZE (CTL_LINE_MAX + 1)
int ctl_feed(const struct ctl_ops *ops, char *buf, size_t *have, bool eof, FILE *f);

/* A connection has this long from accept to its last request's newline (or EOF); then it is
 * closed, so a client trickling bytes cannot hold the one connection the server serves. */
#define CTL_REQUEST_DEADLINE_MS 2000

/* Who may use the socket. Without a group it is 0600 and only vmm's own uid (and root) are
 * served; with one it is 0660, owned by that group, and its members are served too. Whatever the
 * mode, each connection's SO_PEERCRED is checked: others are refused (counted, logged once). */
struct ctl_access {
	bool group;
	gid_t gid;
};

struct ctl_server {
	int fd, stopfd;
	char path[108];
	pthread_t thread;
	bool started;
	struct ctl_ops ops;
	struct ctl_access access;
	uid_t uid; /* vmm's effective uid: the socket's owner */
	/* written by the server thread only; read once it is stopped */
	unsigned long refused;	 /* connections from a peer access does not admit */
	unsigned long timed_out; /* connections closed at CTL_REQUEST_DEADLINE_MS */
};

/* Listens on path (refused, with the reason, if a live vmm already serves it), with the mode and
 * group access says (NULL: owner only), set before the socket listens. */
int ctl_server_start(struct ctl_server *s, const char *path, const struct ctl_access *access,
		     const struct ctl_ops *ops);
void ctl_server_stop(struct ctl_server *s);

/* The client side: sends one request line, returns the reply in buf (NUL-terminated). A vmm that
 * does not answer within timeout_ms (stopped, or hung: the kernel completes a connection to a
 * listening socket whether or not anyone accepts it) is said, with -ETIMEDOUT; ctl_request waits
 * CTL_CLIENT_TIMEOUT_MS, far past a live vmm's worst case: a connection at a time, each at most
 * CTL_REQUEST_DEADLINE_MS with four waiting, and a request to every vCPU 2 s on each at most. */
#define CTL_CLIENT_TIMEOUT_MS 60000
int ctl_request_within(const char *path, const char *req, char *buf, size_t size, int timeout_ms);
int ctl_request(const char *path, const char *req, char *buf, size_t size);

#endif
