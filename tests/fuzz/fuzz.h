/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer targets (tests/fuzz/NAME_fuzz.c): an input reader, and a "guest" that turns an input into
 * the accesses a vCPU makes (config space through ECAM, BAR reads and writes, guest RAM writes,
 * queue kicks, worker rounds), so device targets reach the state machines behind the parsers.
 */
#ifndef VMM_TESTS_FUZZ_H
#define VMM_TESTS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/unit/fake_driver.h"
#include "tests/unit/fake_kvm.h"
#include "core/pci.h"
#include "core/vm.h"

/* The input as a stream: reads past its end give zeros, so every input is a valid program. */
struct fz {
	const uint8_t *p;
	size_t n;
};

static inline uint64_t fz_uint(struct fz *z, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes && z->n; i++, z->p++, z->n--)
		v |= (uint64_t)*z->p << (8 * i);
	return v;
}

static inline uint8_t fz_u8(struct fz *z) { return fz_uint(z, 1); }
static inline uint16_t fz_u16(struct fz *z) { return fz_uint(z, 2); }
static inline uint32_t fz_u32(struct fz *z) { return fz_uint(z, 4); }
static inline uint64_t fz_u64(struct fz *z) { return fz_uint(z, 8); }

/* Up to max bytes in place; *len is how many the input still had. */
static inline const uint8_t *fz_bytes(struct fz *z, size_t max, size_t *len)
{
	const uint8_t *p = z->p;

	*len = max < z->n ? max : z->n;
	z->p += *len;
	z->n -= *len;
	return p;
}

/* The guest's RAM size in device targets (at FAKE_RAM_BASE). */
#define FZ_RAM_SIZE (256 << 10)

/* Opcodes of a guest program (see fuzz_guest.c for their operands). */
enum fz_op {
	FZ_CFG_RD, FZ_CFG_WR, FZ_BAR_RD, FZ_BAR_WR, FZ_RAM_WR, FZ_KICK, FZ_POLL, FZ_INPUT, FZ_RAW_RD,
	FZ_RAW_WR, FZ_RING, FZ_NR_OPS
};

struct fz_guest {
	struct vm *vm;
	struct fake_kvm *fk;
	struct pci_host *host;
	struct pci_dev *dev;	  /* the device under test on the bus */
	struct virtio_dev *vd;	  /* when it is a virtio device: kicks and worker rounds */
	/* the device's own input path (console keyboard bytes); NULL: FZ_INPUT does nothing */
	void (*input)(struct fz_guest *g, const uint8_t *buf, size_t len);
	void *opaque;
	unsigned int ops; /* the ops this target takes (1 << FZ_*); 0: all */
	/* BAR and raw accesses as KVM carries them out (fake_kvm_guest_access: a memslot's memory,
	 * the coalesced ring, else an exit to the bus) rather than straight to the bus */
	bool kvm_access;
	uint8_t bars[24];  /* the BAR registers as vmm set them (fz_guest_keep) */
};

/* A fresh fake VM with FZ_RAM_SIZE of zeroed RAM (one static buffer: one VM at a time) and a PCI
 * host on fd_layout; aborts when the harness itself cannot. */
void fz_vm_init(struct fz_guest *g, struct vm *vm, struct fake_kvm *fk, struct pci_host *h);
/* Runs the program in z against g's device until the input ends. */
void fz_guest_run(struct fz_guest *g, struct fz *z);
/* A device that serves every input (one whose set-up or teardown is too slow to repeat: blk's
 * libaio context, net's tap): fz_guest_keep() notes where vmm put its BARs, fz_guest_reboot() ends
 * each input as a guest reboot leaves the device: its I/O finished, a virtio reset, MSI-X and
 * decode off, the BARs back, RAM zeroed. Aborts when the reset does not finish in 5 s. */
void fz_guest_keep(struct fz_guest *g);
void fz_guest_reboot(struct fz_guest *g);
/* Frees a virtio device after virtio_stop(): its transport's and MSI-X's fds and its memory
 * (devices live as long as the VM in vmm; a fuzzer makes one per input). */
void fz_virtio_free(struct virtio_dev *vd);
/* A loader target's guest RAM: size bytes mapped once and reserved lazily (a realistic guest,
 * most of it never touched: the kernel only backs what a load writes). Aborts when it cannot, or
 * when asked for another size (one per target). */
uint8_t *fz_loader_ram(size_t size);

#endif
