/* SPDX-License-Identifier: MIT */
/* Guest RAM: regions registered as memslots, and checked guest-address translation. */
#ifndef VMM_MEM_H
#define VMM_MEM_H

#include <stdint.h>

#define VM_MAX_MEM_REGIONS 8

struct vm;

struct mem_region {
	uint64_t gpa, size;
	uint8_t *hva;
	uint32_t slot;
};

/* The host mapping behind a region of guest RAM (munmap(hva, size) frees it). */
int vm_mem_map(uint64_t size, uint8_t **hva);
int vm_mem_add(struct vm *vm, uint64_t gpa, uint64_t size);
/* Host pointer for [gpa, gpa+len) inside one region, or NULL: every guest address is checked. */
void *vm_gpa_to_hva(const struct vm *vm, uint64_t gpa, uint64_t len);

#endif
