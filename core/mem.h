/* SPDX-License-Identifier: MIT */
/* Guest RAM: regions registered as memslots, and checked guest-address translation. */
#ifndef VMM_MEM_H
#define VMM_MEM_H

#include <stddef.h>
#include <stdint.h>

#define VM_MAX_MEM_REGIONS 8
#define VM_MAX_MEMSLOTS 256 /* RAM regions and device memory (backed BARs) together */
#define VM_MAX_MEM_LISTENERS 8

struct vm;

struct mem_region {
	uint64_t gpa, size;
	uint8_t *hva;
	uint32_t slot;
};

/* Told about every RAM region, those that exist when it registers and those added later: VFIO maps
 * guest RAM for DMA this way. */
struct mem_listener {
	int (*ram_added)(void *opaque, const struct mem_region *r);
	void *opaque;
};

/* Registers l and calls it for the RAM that exists; an error from it is returned. */
int vm_mem_listen(struct vm *vm, const struct mem_listener *l);
/* Device memory (a backed BAR) as a memslot of its own; returns the slot. It is not RAM:
 * vm_gpa_to_hva() never translates into it, so no guest value can aim a device at it. */
int vm_mmio_map(struct vm *vm, uint64_t gpa, uint64_t size, void *hva);
/* The same read-only (KVM_MEM_READONLY): guest reads come from hva, guest writes exit as MMIO. */
int vm_mmio_map_ro(struct vm *vm, uint64_t gpa, uint64_t size, void *hva);
void vm_mmio_unmap(struct vm *vm, int slot);
/* The host mapping behind a region of guest RAM (munmap(hva, size) frees it). */
int vm_mem_map(uint64_t size, uint8_t **hva);
int vm_mem_add(struct vm *vm, uint64_t gpa, uint64_t size);
/* memcpy into fresh guest RAM (a kernel, an initrd): from 8 MiB on, the part after a 2 MiB
 * boundary near the middle is copied by a second thread, so faulting and zeroing the huge pages
 * and the copy itself run on two CPUs (a plain memcpy when no thread can be made). */
void vm_mem_copy(uint8_t *dst, const uint8_t *src, size_t len);
/* The same from a file: len bytes at off read straight into guest RAM (pread, two threads from
 * 8 MiB on). 0, -errno, or -ENODATA when the file ends early (it shrank since it was mapped). */
int vm_mem_read(uint8_t *dst, int fd, uint64_t off, size_t len);

/* A boot file as the loaders see it: its bytes mapped (not populated) at map, and its fd. */
struct mapped_file {
	const uint8_t *map;
	size_t len;
	int fd;
};

/* Puts [src, src + len) into guest RAM at dst. When src is a slice of f's mapping it is read from
 * f's file instead (vm_mem_read), so the mapping's pages are never faulted in: for a 44 MiB Image,
 * 11k page-table entries (84 ms of a 321 ms load in the nested lab; the copy is one either way).
 * f NULL, or src elsewhere: vm_mem_copy. 0 or vm_mem_read's error. */
int vm_mem_load(uint8_t *dst, const uint8_t *src, size_t len, const struct mapped_file *f);
/* Populates the page tables of a mapping about to be read whole (a gzip kernel to inflate), in
 * one call rather than a fault per 64 KiB; only advice, ignored where the kernel lacks it. */
void vm_mem_prefault(const void *p, size_t len);
/* Host pointer for [gpa, gpa+len) inside one region, or NULL: every guest address is checked. */
void *vm_gpa_to_hva(const struct vm *vm, uint64_t gpa, uint64_t len);

#endif
