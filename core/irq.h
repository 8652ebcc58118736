/* SPDX-License-Identifier: MIT */
/* The GSI routing table vmm owns and commits whole; irqfds, ioeventfds and lines. */
#ifndef VMM_IRQ_H
#define VMM_IRQ_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct vm;

#define IRQ_MAX_ROUTES 1024
#define IRQ_MAX_USER_RESAMPLE 32

/* A resamplefd vmm signals itself (see irq_user_resample). */
struct irq_resample {
	uint32_t gsi;
	int fd;
};

struct irq_routing {
	pthread_mutex_t lock;
	struct kvm_irq_routing_entry e[IRQ_MAX_ROUTES];
	int nr;
	uint32_t next_gsi;
	atomic_uint_fast64_t commits;
	/* x86's split irqchip: KVM takes no resamplefd (its irqfd code allows one with the full
	 * in-kernel irqchip only), so level irqfds keep theirs here and the userspace IOAPIC
	 * signals it when the guest EOIs the line, as KVM's own IOAPIC would */
	bool user_resample;
	struct irq_resample resample[IRQ_MAX_USER_RESAMPLE];
	int nr_resample;
	atomic_uint_fast64_t resample_notifies;
};

/* Starts the table with identity irqchip routes for GSIs [0, n) (on arm64: SPI n = INTID 32 + n). */
int irq_routing_init(struct vm *vm, uint32_t nr_irqchip_gsis);
/* The same with the routes on KVM irqchip id chip (x86: KVM_IRQCHIP_IOAPIC). */
int irq_routing_init_chip(struct vm *vm, uint32_t nr_irqchip_gsis, uint32_t chip);
/* Starts the table empty with GSIs [0, n) kept for routes the board programs itself (x86's
 * userspace IOAPIC: pin n is GSI n, an MSI route while the guest has the pin unmasked). */
int irq_routing_init_reserved(struct vm *vm, uint32_t nr_reserved_gsis);
int irq_gsi_alloc(struct vm *vm);
void irq_msi_entry(const struct vm *vm, struct kvm_irq_routing_entry *e, uint32_t gsi, uint64_t addr,
		   uint32_t data, uint32_t devid);
/* Adds, replaces (e != NULL) or removes (e == NULL) the route of gsi in the table only. */
int irq_table_set(struct irq_routing *rt, uint32_t gsi, const struct kvm_irq_routing_entry *e);
/* irq_table_set(), then commits the whole table with KVM_SET_GSI_ROUTING. */
int irq_route_update(struct vm *vm, uint32_t gsi, const struct kvm_irq_routing_entry *e);
/* resample_fd >= 0: a level irqfd whose resamplefd is signalled when the guest EOIs gsi (by KVM,
 * or with user_resample by irq_resample_notify). */
int irq_irqfd(struct vm *vm, int fd, uint32_t gsi, int resample_fd, bool assign);
/* user_resample: signals the resamplefd registered on gsi, if any (1 if one was signalled). */
int irq_resample_notify(struct vm *vm, uint32_t gsi);
int irq_ioeventfd(struct vm *vm, uint64_t addr, uint32_t len, int fd, bool assign);
/* Drives an interrupt line (KVM_IRQ_LINE's encoding, chosen by the board). */
int irq_line(struct vm *vm, uint32_t irq, bool level);

/*
 * irq_report.c: the interrupts each device sent, per vector or line, with the path they take into
 * the guest. One table feeds the exit summary's text and the JSON of --stats and `vmm ctl stats`.
 */
enum irq_path {
	IRQ_PATH_IRQFD,	       /* an eventfd that KVM injects from (vmm or VFIO's host handler writes it) */
	IRQ_PATH_VLPI,	       /* GICv4: the device's MSI reaches the vCPU directly, no host handler */
	IRQ_PATH_LINE,	       /* a level-triggered line vmm drives with KVM_IRQ_LINE */
	IRQ_PATH_LINE_RESAMPLE, /* a level-triggered line KVM drives from an irqfd with a resamplefd */
	IRQ_PATH_UNKNOWN,      /* an irqfd the kernel may have turned into a vLPI: the host cannot tell */
};

/* Who raised the interrupts the count counts, and so how exact it is. */
enum irq_counted_by {
	IRQ_BY_VMM,  /* vmm wrote the eventfd or drove the line itself: exact */
	IRQ_BY_HOST, /* the host's IRQ handler for the vector (/proc/interrupts): the guest cannot lie */
	IRQ_BY_NONE, /* nobody on the host sees them (a vLPI) */
};

struct irq_row {
	char device[24];   /* "virtio-blk", "16550", "vfio" */
	char host_bdf[32]; /* vfio: the host device; "" otherwise */
	char pci[8];	   /* the guest's slot ("00:02.0"); "" for a board device */
	char vector[16];   /* "msix0", "msi0", "intx", "line" */
	enum irq_path path;
	enum irq_counted_by by;
	uint64_t count;	   /* IRQ_BY_NONE: 0 and meaningless */
	bool host_counted; /* vfio: host_* below are set */
	uint64_t host_count; /* what the host's IRQ handler counted for it (/proc/interrupts) */
	int host_irq;	   /* the host's Linux IRQ of the vector at the last sample, -1 none */
	bool host_partial; /* a host IRQ went away between samples: host_count is a lower bound */
	char note[160];	   /* why a path is what it is (a vLPI verdict's reason); may be "" */
};

struct irq_report {
	struct irq_row *row;
	size_t nr, cap;
};

/* A new zeroed row at the end (host_irq -1), NULL when out of memory. */
struct irq_row *irq_report_add(struct irq_report *r);
void irq_report_free(struct irq_report *r);
const char *irq_path_name(enum irq_path p);	      /* "irqfd", "vlpi", "line", ... (JSON) */
const char *irq_counted_by_name(enum irq_counted_by b); /* "vmm", "host", "none" */
/* [{"device":..., "vector":..., "path":..., "count":N | null, ...}, ...] */
void irq_report_json(FILE *f, const struct irq_report *r);
/* One line per device: "vmm: interrupts: virtio-blk 00:01.0: msix0 irqfd 12, msix1 irqfd 530". */
void irq_report_text(FILE *f, const struct irq_report *r);

#endif
