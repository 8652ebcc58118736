/* SPDX-License-Identifier: MIT */
/*
 * A fake kernel for the VFIO backends (struct vfio_sys): a host with or without /dev/iommu,
 * /dev/vfio/devices, a device's IOMMU group and cdev; it answers the container, group, iommufd,
 * cdev and KVM VFIO device ioctls, records every call in order, and hands out fds from 1000 up
 * that are never real ones (closing them touches nothing).
 */
#ifndef VMM_TESTS_FAKE_VFIO_H
#define VMM_TESTS_FAKE_VFIO_H

#include <stdbool.h>
#include <stdint.h>

#include "vfio/vfio.h"

enum fake_vfio_kind { FV_OPEN, FV_CLOSE, FV_IOCTL };

struct fake_vfio_call {
	enum fake_vfio_kind kind;
	int fd;		   /* the fd the ioctl or close went to; the fd an open returned (-1: failed) */
	unsigned long req; /* ioctl */
	char path[128];	   /* open; GET_DEVICE_FD's name */
	unsigned long arg; /* integer arguments (CHECK_EXTENSION, SET_IOMMU) */
	int arg_fd;	   /* SET_CONTAINER's container, BIND's iommufd, FILE_ADD's file */
	uint32_t id;	   /* IOAS id (IOVA_RANGES, MAP), ATTACH_PT's pt_id */
	uint32_t flags;	   /* MAP_DMA, IOAS_MAP */
	uint64_t iova, size, va;
};

#define FAKE_VFIO_MAX_CALLS 256
#define FAKE_VFIO_MAX_AREAS 64

/* A device region as VFIO_DEVICE_GET_REGION_INFO reports it: a SPARSE_MMAP capability when
 * sparse (nr_areas areas, up to FAKE_VFIO_MAX_AREAS), MSIX_MAPPABLE when msix_mappable. */
struct fake_vfio_region {
	uint64_t size, offset;
	uint32_t flags; /* VFIO_REGION_INFO_FLAG_READ/WRITE/MMAP; CAPS is the fake's */
	bool msix_mappable, sparse;
	uint32_t nr_areas;
	struct vfio_region_sparse_mmap_area area[FAKE_VFIO_MAX_AREAS];
};
#define FAKE_VFIO_FD0 1000

struct fake_vfio {
	struct fake_vfio_call call[FAKE_VFIO_MAX_CALLS + 1]; /* + a spare for calls past the end */
	int nr;
	/* the host */
	bool dev_iommu, dev_vfio_devices, dev_vfio_vfio;
	bool pci_exists;	/* /sys/bus/pci/devices/BDF, whatever BDF */
	int group;		/* the device's IOMMU group; -1: none */
	bool viable;
	const char *cdev;	/* its entry in vfio-dev ("vfio3"); NULL: none */
	struct vfio_valid_range ranges[VFIO_MAX_RANGES]; /* what the IOMMU reports as usable */
	int nr_ranges;
	int bind_errno, get_fd_errno, attach_errno;
	uint32_t ioas_id;
	int next_fd, open_fds;
	/* the device behind any device fd, by region index (call's id: the index asked for) */
	struct fake_vfio_region region[VFIO_PCI_NUM_REGIONS];
};

/* A host with everything: /dev/iommu, cdevs, the container, group 12 viable, cdev vfio3, IOAS 7,
 * and the arm64 SMMU's MSI window 0x0800_0000-0x080f_ffff reserved. */
void fake_vfio_init(struct fake_vfio *fv);
struct vfio_sys fake_vfio_sys(struct fake_vfio *fv);
/* Index of the first ioctl req at or after from (-1: none). */
int fake_vfio_find(const struct fake_vfio *fv, unsigned long req, int from);
int fake_vfio_count(const struct fake_vfio *fv, unsigned long req);
/* Index of the first open of path at or after from (-1: none). */
int fake_vfio_find_open(const struct fake_vfio *fv, const char *path, int from);

struct vfio_pci;
/* Writes v's len low bytes at off of a host config space being made up. */
void fake_vfio_cfg_put(uint8_t *cfg, uint32_t off, uint32_t v, int len);
/* v as vfio_pci_open leaves it for vfio_config_setup: no interrupts yet, its fd a memfd of size
 * bytes (at least 4 KiB: BAR regions may follow) with cfg's 4 KiB at 0 as the config region (the
 * "device"), the host copy the same. 0, or -1 when the memfd cannot be made. */
int fake_vfio_device(struct vfio_pci *v, struct vfio_container *c, const uint8_t *cfg, const char *bdf,
		     size_t size);

#endif
