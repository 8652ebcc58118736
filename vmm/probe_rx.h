/* SPDX-License-Identifier: MIT */
/*
 * The guest latency probe's results as vmm receives them: frames (guest/probe_proto.h) over the
 * probe's virtio-console port, or as "VMM-PROBE <base64>" lines on the console when the guest has
 * no port. Both go through one decoder (guest/probe_decode.c), counted per channel, into the
 * exit summary and the --stats JSON; --probe-out PATH gets the port's frames as they came (vmm ab
 * and the tests read them there).
 */
#ifndef VMM_PROBE_RX_H
#define VMM_PROBE_RX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "guest/probe_decode.h"

struct probe_rx_channel {
	uint64_t frames; /* accepted by the decoder */
	uint64_t bytes;	 /* port: every byte; console: the bytes of "VMM-PROBE " lines */
};

struct probe_rx {
	pthread_mutex_t lock;
	struct probe_decoder *dec;
	int out_fd; /* --probe-out, or -1 */
	bool out_broken;
	struct probe_rx_channel port, console;
	/* console text: where the current line stands against the prefix */
	size_t pfx;	/* prefix characters matched at the line's start */
	bool probe_line; /* the line is a frame line (its bytes are counted) */
	bool line_other; /* the line is something else */
	/* the first CLOCK frame over the port: the guest's boot has ended (set before the VM runs) */
	void (*on_clock)(void *opaque);
	void *clock_opaque;
	bool clock_seen;
	/* the first COUNTER frame on either channel: a workload is about to start (set before the VM
	 * runs) */
	void (*on_counter)(void *opaque);
	void *counter_opaque;
	bool counter_seen;
};

/* out_path: --probe-out (NULL: none), created or truncated. 0, or -errno after a message. */
int probe_rx_init(struct probe_rx *r, const char *out_path);
void probe_rx_destroy(struct probe_rx *r);
/* The port's bytes (struct virtio_console_port.write; opaque is the probe_rx). */
void probe_rx_port(void *opaque, const uint8_t *buf, size_t len);
/* Console output, in chunks of any size (struct console_out.on_text). */
void probe_rx_console(void *opaque, const uint8_t *buf, size_t len);
/* {"channel":..., "port":{frames,bytes}, "console":{frames,bytes}, "errors":N, "series":[...]} */
void probe_rx_json(struct probe_rx *r, FILE *f);
/* One line for the exit summary, when anything arrived. */
void probe_rx_summary(struct probe_rx *r, FILE *f);

#endif
