/* SPDX-License-Identifier: MIT */
/*
 * Is each MSI of a passed-through device injected directly as a GICv4 vLPI? The answer, per vector,
 * from what the host kernel shows: KVM's debugfs (vgic-state, and vgic-its-state@ADDR from 6.15),
 * else the GICv4 vPE doorbells in /proc/interrupts, else "unknown" with the reason.
 *
 * Everything here parses text, so it runs (and is tested) on any host: nothing needs /dev/kvm.
 */
#ifndef VMM_ARM64_GIC_VLPI_H
#define VMM_ARM64_GIC_VLPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/host_text.h"
#include "core/proc_interrupts.h"

/* ---- vgic-state: /sys/kernel/debug/kvm/<pid>-<vmfd>/vgic-state ---- */

enum vgic_irq_type { VGIC_SGI, VGIC_PPI, VGIC_SPI, VGIC_LPI };

struct vgic_irq_state {
	enum vgic_irq_type type;
	uint32_t intid;
	int section;		/* the "VCPU n" section it is listed in; -1: the "SPI" section */
	int target_vcpu;	/* TGT_ID: -1 none */
	bool pending, line_level, active, enabled, hw, level, group;
	/* HWID: the host INTID of a hardware-mapped SPI/PPI (timers). KVM never fills it for a
	 * GICv4 vLPI (0), so it cannot name the host IRQ behind one. */
	uint32_t hwid;
	unsigned int priority;
	int vcpu;		/* VCPU_ID: where it is queued now, -1 nowhere */
	bool freed;		/* "LPI n freed" (before 6.10: released while listing) */
};

struct vgic_state {
	char model[8];		/* "GICv3", "GICv2", "" when the Distributor part is missing */
	int nr_spis, nr_lpis;	/* -1: not shown */
	int enabled;		/* -1: not shown */
	unsigned int nr_flags;	/* 7 (PLAEHCG, 4.16+), 6 (PLAEHL, 4.15), 0 no IRQ line seen */
	struct vgic_irq_state *irq;
	size_t nr_irq;
	unsigned int nr_sections;	/* "VCPU n"/"SPI" headers seen */
	unsigned int skipped;		/* lines that were not understood (counted, not fatal) */
	bool truncated;			/* more IRQ lines than VLPI_MAX_IRQS: the rest dropped */
};

#define VLPI_MAX_IRQS 65536u

int vgic_state_parse(const char *text, size_t len, struct vgic_state *st);
/* Per vCPU, the hw LPIs (GICv4 vLPIs) a vgic-state text shows targeting it; -1s and -ENODATA
 * when the text is missing or not a vgic-state. */
int vlpi_count_per_vcpu(const char *vgic_state, size_t len, int *count, int nr_vcpus);
void vgic_state_free(struct vgic_state *st);

/* ---- vgic-its-state@ADDR (6.15+): one line per (DeviceID, EventID) the guest mapped ---- */

struct its_ite_state {
	uint32_t devid, event, intid, hwintid, target, collection;
	bool hw;
};

struct its_state {
	struct its_ite_state *ite;
	size_t nr;
	unsigned int skipped;
	bool truncated;
};

int its_state_parse(const char *text, size_t len, struct its_state *st);
void its_state_free(struct its_state *st);
const struct its_ite_state *its_state_find(const struct its_state *st, uint32_t devid,
					   uint32_t event);

/* ---- the per-vector report ---- */

/* Where to read. NULL fields take the defaults: /sys/kernel/debug/kvm/<pid>-<vm_fd>/vgic-state,
 * the vgic-its-state@* file in that directory, /proc/interrupts. "" means "not available". */
struct vlpi_src {
	const char *vgic_state;
	const char *its_state;
	const char *interrupts;
	int pid;		/* 0: getpid() */
	int vm_fd;		/* for the default debugfs directory; -1: only <pid>-* if it is unique */
};

/* The device as this VMM set it up. */
struct vlpi_dev {
	const char *bdf;	/* host BDF ("0000:00:13.0"), as in /proc/interrupts */
	const char *guest_bdf;	/* for the report line; may be NULL */
	bool msi;		/* MSI rather than MSI-X */
	unsigned int nr_vectors;
	uint32_t devid;		/* the ITS DeviceID of its MSI routes (the guest RID) */
	const int64_t *event;	/* per vector, the guest's MSI data (= EventID); -1 or NULL unknown */
	/* All VFIO MSI vectors of this VM routed through irqfds (all devices); 0 unknown. With
	 * vgic-state alone, "every vector of the VM is forwarded" is provable by counting. */
	unsigned int vm_vectors;
};

enum vlpi_status {
	VLPI_UNKNOWN,		/* reason says why */
	VLPI_FORWARDED,		/* a GICv4 vLPI: the device's MSI reaches the guest without KVM */
	VLPI_SOFTWARE,		/* KVM injects it (irqfd -> vITS -> LPI) */
	VLPI_DOORBELLS,		/* no debugfs; the host's vPE doorbells fired: vLPIs exist somewhere */
	VLPI_NOT_ENABLED,	/* the host has no IRQ for it: VFIO never enabled the vector */
};

enum vlpi_evidence {
	VLPI_EV_NONE,
	VLPI_EV_ITS_STATE,	/* vgic-its-state: (DeviceID, EventID) -> LPI with its HW bit */
	VLPI_EV_VGIC_HWID,	/* vgic-state: an H=1 LPI whose HWID is the vector's host hwirq */
	VLPI_EV_VGIC_COUNT,	/* vgic-state: as many H=1 LPIs as the VM has vectors, or none */
	VLPI_EV_DOORBELLS,	/* /proc/interrupts: GICv4-vpe lines and counts */
	VLPI_EV_HOST_IRQS,	/* /proc/interrupts: the vector's own line (missing) */
};

#define VLPI_MAX_CAND 8

struct vlpi_vector {
	unsigned int index;
	enum vlpi_status status;
	enum vlpi_evidence evidence;
	int host_irq;		/* -1 unknown */
	int64_t hwirq;		/* its /proc/interrupts hwirq, -1 unknown */
	uint64_t host_count;	/* interrupts the host handled for it (the software path) */
	int64_t lpi;		/* the guest LPI, -1 unknown */
	int vcpu;		/* its target vCPU, -1 unknown */
	/* FORWARDED by count: the forwarded LPIs it is one of (first VLPI_MAX_CAND) */
	uint32_t cand[VLPI_MAX_CAND];
	unsigned int nr_cand;
	uint64_t doorbells;	/* VLPI_DOORBELLS: the host-wide doorbell total */
	char reason[192];
};

/* Parsed sources for the join; a NULL source is missing, and its *_why says why. */
struct vlpi_inputs {
	const struct vgic_state *vgic;
	const char *vgic_why;
	const struct its_state *its;
	const char *its_why;
	const struct proc_interrupts *pi;
	const char *pi_why;
};

/* out[dev->nr_vectors]. Never fails on what the files say: a vector it cannot prove is UNKNOWN
 * with a reason. -EINVAL only for bad arguments. */
int vlpi_join(const struct vlpi_inputs *in, const struct vlpi_dev *dev, struct vlpi_vector *out);
/* Reads the sources named by src (or the defaults) and joins them. 0, or -errno for bad
 * arguments and out-of-memory; unreadable files become reasons, not errors. */
int vlpi_report(const struct vlpi_src *src, const struct vlpi_dev *dev, struct vlpi_vector *out);

/* arch_ops.msi_report (core/arch.h): vlpi_report on vm's debugfs directory, as the report's
 * line, JSON and per-vector verdicts; dev has at most MSIX_MAX_VECTORS vectors. */
struct vm;
struct msi_dev;
struct msi_verdict;
int vlpi_msi_report(struct vm *vm, const struct msi_dev *dev, struct msi_verdict *verdict, char *line,
		    size_t size, FILE *json);

const char *vlpi_status_name(enum vlpi_status s);	/* "vlpi", "software", ... (for JSON) */
const char *vlpi_evidence_name(enum vlpi_evidence e);	/* "its-state", "vgic-state", ... */

/* "vfio 0000:00:13.0 -> 00:03.0: vector 0 vLPI (LPI 8192, vCPU 0), vector 1 software-injected";
 * consecutive vectors with the same text are folded ("vectors 0-2 unknown: ..."). Returns the
 * length it needed, like snprintf; the output is always terminated. */
size_t vlpi_format_line(char *buf, size_t size, const struct vlpi_dev *dev,
			const struct vlpi_vector *v, unsigned int n);
/* {"bdf":"...","guest_bdf":"...","vectors":[{"vector":0,"status":"vlpi",...}]} for stats. */
size_t vlpi_format_json(char *buf, size_t size, const struct vlpi_dev *dev,
			const struct vlpi_vector *v, unsigned int n);

#endif
