/* SPDX-License-Identifier: MIT */
/*
 * VFIO device assignment: a backend per VM (the legacy type1 container with its groups, or iommufd
 * with device cdevs; either maps guest RAM for DMA around the IOMMU's reserved IOVA ranges and tells
 * the KVM VFIO device about each device) and passed-through PCI devices (regions, BARs mapped
 * into the guest, config space virtualization, MSI-X / MSI / INTx wired to KVM with no userspace
 * relay: one eventfd per vector is both the VFIO trigger and the KVM irqfd).
 */
#ifndef VMM_VFIO_H
#define VMM_VFIO_H

#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vfio/backend.h"
#include "core/arch.h"
#include "core/mem.h"
#include "core/msi_route.h"
#include "core/msix.h"
#include "core/pci.h"

struct vm;

#define VFIO_MAX_GROUPS 8
#define VFIO_MAX_RANGES 16

struct vfio_valid_range {
	uint64_t start, end; /* inclusive, as VFIO reports them */
};

struct vfio_container;

/* A backend: how the VM's devices get their fds and their DMA mappings. */
struct vfio_backend_ops {
	const char *name;
	int (*open)(struct vfio_container *c);
	/* The device's fd, ready for VFIO_DEVICE_* ioctls (guest RAM mapped for its DMA, KVM told);
	 * the caller closes it, before close(). -errno after a message on failure. */
	int (*add_device)(struct vfio_container *c, const char *bdf, const char *token);
	void (*close)(struct vfio_container *c);
	/* Maps one region of guest RAM at IOVA = its guest physical address, for vfio/dma.c which
	 * checks it first and counts it after: the ioctl's result (-1 and errno), named dma_map_name. */
	int (*dma_map)(struct vfio_container *c, const struct mem_region *r);
	const char *dma_map_name;
};

extern const struct vfio_backend_ops vfio_legacy_ops, vfio_iommufd_ops;

/* One per VM, whichever the backend (the name stays from when the container was the only one). */
struct vfio_container {
	struct vm *vm;
	const struct vfio_backend_ops *ops;
	const struct vfio_sys *sys;
	int fd;		/* legacy: /dev/vfio/vfio; iommufd: /dev/iommu */
	int kvm_dev;	/* the KVM VFIO device */
	bool iommu_set; /* the first device is in: the IOVA ranges are known, RAM is mapped */
	uint32_t ioas_id; /* iommufd: the VM's IO address space */
	int group_fd[VFIO_MAX_GROUPS], group_id[VFIO_MAX_GROUPS];
	int nr_groups;
	struct vfio_valid_range valid[VFIO_MAX_RANGES]; /* IOVAs the IOMMU can map (none: all) */
	int nr_valid;
	struct mem_listener listener;
	uint64_t dma_bytes;
};

/* The IOVA-range check alone, for unit tests: 0 when [gpa, gpa+size) lies inside one valid range,
 * else -EINVAL with a message naming both ranges. */
int vfio_iova_check(const struct vfio_valid_range *valid, int nr, uint64_t gpa, uint64_t size);

/* Opens the backend kind for vm (AUTO: see vfio_backend_choose; need_token: a device has a VF
 * token) and says which one and why. sys NULL: the real system calls. */
int vfio_open(struct vfio_container *c, struct vm *vm, enum vfio_backend_kind kind, bool need_token,
	      const struct vfio_sys *sys);
/* The fd of device bdf (token: its VF token or NULL), see struct vfio_backend_ops. */
int vfio_add_device(struct vfio_container *c, const char *bdf, const char *token);
/* After every device fd is closed. */
void vfio_close(struct vfio_container *c);

/* A passed-through PCI function. */
#define VFIO_MAX_MSI 32

/* One vector's interrupts as the host's IRQ handler counted them (/proc/interrupts), summed over
 * the host IRQs it had: disabling and enabling the vector frees the host IRQ and takes a new one. */
struct vfio_host_count {
	int irq;	 /* the host IRQ seen at the last sample, -1 none */
	uint64_t last;	 /* its count then */
	uint64_t before; /* the counts of the IRQs it had before */
	bool partial;	 /* an IRQ went away between samples: what it counted after the last is lost */
};

/* The sample of one vector: l is its /proc/interrupts line now, NULL when it has none. */
struct irq_line;
void vfio_host_count_update(struct vfio_host_count *c, const struct irq_line *l);
uint64_t vfio_host_count_total(const struct vfio_host_count *c);

struct vfio_pci;

/* A trapped hole of a mapped BAR: its handler gets hole-relative offsets. */
struct vfio_bar_hole {
	struct vfio_pci *v;
	int bar;
	uint64_t off;
};

struct vfio_pci {
	struct pci_dev pci; /* first: the PCI core's hooks get this pointer */
	struct vfio_container *c;
	const struct arch_ops *arch; /* its msi_report makes the vLPI report (NULL: none) */
	char bdf[32];
	int fd;
	struct vfio_device_info info;
	struct vfio_region_info cfg_region, bar_region[PCI_STD_NUM_BARS];
	void *bar_map[PCI_STD_NUM_BARS];
	struct vfio_bar_hole hole_ctx[PCI_STD_NUM_BARS][PCI_BAR_MAX_HOLES];
	uint8_t host_cfg[PCI_CFG_SIZE]; /* the device's config space as VFIO showed it at open */
	uint32_t host_cfg_size;
	/* MSI-X: the host capability's table and PBA, emulated in the trapped pages of their BARs */
	struct msix msix;
	int msix_cap_host, msix_cap; /* offsets in the host's and the guest's config space */
	int msix_bar, msix_pba_bar;
	uint64_t msix_table_off, msix_pba_off;
	unsigned int msix_nr;	   /* the vectors the guest is shown (at most MSIX_MAX_VECTORS) */
	unsigned int msix_host_nr; /* the device's table entries: all trapped */
	/* MSI: the capability emulated at msi_cap (guest) */
	int msi_cap;
	uint16_t msi_flags; /* the host's: 64-bit, per-vector mask, multiple message capable */
	unsigned int msi_max;
	bool msi_enabled;
	uint64_t msi_addr;
	uint32_t msi_data, msi_mask;
	struct msi_route msi_vec[VFIO_MAX_MSI]; /* each vector's delivery, as an MSI-X vector's */
	unsigned int msi_nr;
	/* INTx with a resamplefd: level-triggered through KVM, unmasked by VFIO on EOI */
	bool has_intx, intx_on;
	int intx_fd, intx_resample;
	uint32_t intx_gsi;
	/* the vLPI report taken while the guest had the vectors live (see vfio_pci_report_tick) */
	char report[1024];
	unsigned int report_live;	/* live vectors when it was taken */
	unsigned int seen_live;		/* live vectors at the last tick, and since when */
	double seen_since;
	/* that report per vector (nr_verdict 0: none taken) */
	struct msi_verdict verdict[MSIX_MAX_VECTORS];
	unsigned int nr_verdict;
	/* the host's counts of its vectors' IRQs, sampled while the guest runs and at exit */
	struct vfio_host_count host_msix[MSIX_MAX_VECTORS], host_msi[VFIO_MAX_MSI], host_intx;
	struct vfio_pci_stats {
		uint64_t msix_enables, msi_enables, intx_enables, set_irqs;
		/* what vmm can see of INTx (KVM delivers it): the guest's INTX_DISABLE sets and
		 * clears, and its status reads that found the device's interrupt pending */
		uint64_t intx_masks, intx_unmasks, intx_pending_reads;
	} stats;
};

struct vfio_pci_opts {
	const char *bdf;
	const char *token; /* VF token (UUID) when the PF is bound to vfio-pci; NULL: none */
	int slot;	   /* guest slot; -1: the next free one */
	/* the architecture whose msi_report tells how each vector reaches the guest (arm64: as a
	 * GICv4 vLPI or not); NULL, or no msi_report: from /proc/interrupts alone (vfio/msi_report.c) */
	const struct arch_ops *arch;
};

/* Opens bdf through c, resets it and makes it a device on host's bus 0. */
struct vfio_pci *vfio_pci_create(struct vfio_container *c, struct pci_host *h,
				 const struct vfio_pci_opts *o);
/* Disables its interrupts, resets it and gives its mappings back. */
void vfio_pci_destroy(struct vfio_pci *v);
void vfio_pci_summary(struct vfio_pci *v, FILE *f);
/* Vectors KVM delivers through irqfds now (the vLPI proof counts them over the whole VM). */
unsigned int vfio_pci_live_vectors(struct vfio_pci *v);
/* The vLPI report: for each vector, forwarded as a GICv4 vLPI, software-injected, or unknown and
 * why, as one line into buf. */
void vfio_pci_vlpi_line(struct vfio_pci *v, unsigned int vm_vectors, char *buf, size_t size);
/* Called periodically while the guest runs: once the device's live vectors have been stable for a
 * moment, takes the report, prints it (once per configuration) and keeps it for the summary. A
 * report at exit would see what the guest's shutdown left (vectors masked, vLPIs unmapped). */
/* The same as JSON ({"bdf":...,"vectors":[...]}) for the control socket and stats. */
void vfio_pci_vlpi_json(struct vfio_pci *v, unsigned int vm_vectors, FILE *f);
void vfio_pci_report_tick(struct vfio_pci *v, unsigned int vm_vectors, double now);

/* msi_report.c: the report where the architecture has no msi_report (x86): from the host's
 * /proc/interrupts (interrupts; NULL: the real one), each vector KVM has an irqfd for is
 * software-injected. As arch_ops.msi_report (core/arch.h). */
int vfio_msi_report_host(const struct msi_dev *dev, const char *interrupts, struct msi_verdict *verdict,
			 char *line, size_t size, FILE *json);

/* host_irqs.c: the host's count of each vector's IRQ. pi: a parsed /proc/interrupts
 * (core/proc_interrupts.h). */
struct proc_interrupts;
void vfio_pci_host_sample(struct vfio_pci *v, const struct proc_interrupts *pi);
/* Reads and parses /proc/interrupts (path NULL) and samples every device of devs. */
void vfio_pci_host_sample_all(struct vfio_pci *const *devs, int n, const char *path);
/* Its rows of the interrupt table: per MSI-X (or MSI) vector the path from the vLPI verdict taken
 * while the guest ran (vLPI: not visible to the host; software: irqfd, counted by the host), and
 * INTx (irqfd + resamplefd, counted by the host). */
struct irq_report;
int vfio_pci_irq_rows(struct vfio_pci *v, struct irq_report *r);

#endif
