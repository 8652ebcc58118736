/* SPDX-License-Identifier: MIT */
/* "vmm run" options: the parsed command line every other part reads. */
#ifndef VMM_CONFIG_H
#define VMM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdio.h>

#include "vfio/backend.h"
#include "core/arch.h"
#include "core/cpu_opts.h"
#include "core/sandbox.h"

/* panic=-1: a panicking guest resets at once, and vmm reports the crash (see uart watch). */
#define CONFIG_DEFAULT_PARAMS "console=ttyS0 earlycon panic=-1"
#define CONFIG_DEFAULT_PARAMS_HVC "console=hvc0 panic=-1"

enum console_kind { CONSOLE_SERIAL, CONSOLE_VIRTIO, CONSOLE_NONE };

#define CONFIG_MAX_DISKS 8

struct vm_disk {
	char path[512];
	bool ro;
};

#define CONFIG_MAX_NETS 4

struct vm_net {
	char tap[16]; /* IFNAMSIZ */
	uint8_t mac[6];
	int vhost;	     /* enum net_vhost (virtio/virtio.h): auto (0), on, off */
	char vhost_dev[108]; /* vhost-dev=PATH; "" for /dev/vhost-net */
};

#define CONFIG_MAX_VFIO 8

/* --vfio BDF[,addr=SLOT][,token=UUID]: a host PCI function bound to vfio-pci. */
struct vm_vfio {
	char bdf[32];	/* the host's, normalised to DDDD:BB:DD.F */
	int slot;	/* the guest's bus-0 slot; -1: the next free one */
	char token[40]; /* VF token UUID, empty: none */
};

struct vm_config {
	const char *kernel, *initrd, *params, *dump_dtb;
	enum kernel_format kernel_format;
	bool has_halt_poll_ns; /* --halt-poll-ns: the VM's KVM_CAP_HALT_POLL ceiling */
	uint64_t halt_poll_ns;
	const char *ctl;   /* --ctl PATH: the control socket */
	bool has_ctl_gid;  /* --ctl-group NAME: its members may use the socket too (0660) */
	gid_t ctl_gid;
	const char *stats; /* --stats FILE.json: the run's stats delta (start to exit) */
	const char *probe_out; /* --probe-out PATH: the probe port's frames as they came */
	bool attribute;	       /* --attribute[=FILE]: stage attribution of the probe's samples */
	const char *attribute_json;
	unsigned int stats_interval_ms; /* --stats-interval S: a snapshot every S seconds (0: none) */
	struct vm_disk disk[CONFIG_MAX_DISKS];
	unsigned int nr_disks;
	struct vm_net net[CONFIG_MAX_NETS];
	unsigned int nr_nets;
	struct vm_vfio vfio[CONFIG_MAX_VFIO];
	unsigned int nr_vfio;
	enum vfio_backend_kind vfio_backend; /* --vfio-backend */
	unsigned int nr_cpus;
	uint64_t mem_size;
	enum console_kind console;
	struct cpu_opts cpu; /* --cpu (arm64): SVE, pointer authentication, PMU */
	/* x86 options, kept as given: the x86 board checks them, other boards refuse them.
	 * --pv KNOB=VAL,... (repeatable, --pv-ipi V adds pv-ipi=V), --irqchip, --apic, --no-hlt-exit */
	char pv[256];
	const char *irqchip, *apic;
	bool no_hlt_exit;
	enum sandbox_mode sandbox; /* --no-sandbox, --sandbox-log; default: enforce */
	unsigned int timeout;	   /* --timeout SECONDS: stop a hung guest with VM_EXIT_HUNG */
	char probe_peer[16];	   /* --probe-peer IFNAME[,port=N]: the probe's UDP peer; "" none */
	uint16_t probe_peer_port;
	bool summary_full; /* --summary full: the exit summary's histograms with their buckets */
};

/* Whether the kernel command line asks the built-in guest for its latency probe (vmm.probe=):
 * then the board adds the probe's virtio-console port. */
bool config_wants_probe(const struct vm_config *c);
/* Whether any x86-only option was given (boards of other architectures refuse them). */
bool config_has_x86_opts(const struct vm_config *c);
/* Whether any arm64-only option was given (--cpu). */
bool config_has_arm64_opts(const struct vm_config *c);

/* "512M", "2G", "64k", "1GiB"; a bare number is MiB. */
int parse_size(const char *s, uint64_t *out);
/* 0: parsed; 1: --help asked; <0: bad input (message printed). */
int config_parse_run(struct vm_config *c, int argc, char **argv);
void config_usage(FILE *f);

#endif
