/* SPDX-License-Identifier: MIT */
/*
 * Words for a KVM_EXIT_INTERNAL_ERROR: KVM could not run the guest, which is not the guest
 * crashing. The suberror by name; for an emulation failure the instruction bytes KVM reports
 * (kvm_run->emulation_failure) and where the vCPU was.
 */
#ifndef VMM_KVM_ERROR_H
#define VMM_KVM_ERROR_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the vCPU was, as the architecture names its program counter ("RIP"); name NULL: unknown.
 * reset: its registers read back as the architecture's reset state, which on x86 is what kvm_amd
 * leaves after a triple fault (it re-initialises the vCPU before it reports KVM_EXIT_SHUTDOWN, the
 * VMCB being undefined then), so the value says nothing of where the guest was. */
struct kvm_error_pc {
	const char *name;
	uint64_t value;
	bool reset;
};

/* One line into buf (always terminated) for vCPU id's internal-error exit in run; note, when not
 * NULL, is a sentence about the host appended (x86: "this host's KVM is kvm_pvm ..."). Every field
 * of run is taken as KVM's word but bounded: a size beyond the array is clamped. Returns the
 * suberror. */
uint32_t kvm_internal_error_describe(const struct kvm_run *run, int id, const struct kvm_error_pc *pc,
				     const char *note, char *buf, size_t len);
/* One line into buf (always terminated) for vCPU id's KVM_EXIT_SHUTDOWN: an x86 triple fault,
 * which resets a PC, said with where the vCPU was (pc may be NULL or nameless), so a guest that
 * resets by itself early in its boot can be told from one that asked for a reboot. */
void kvm_shutdown_describe(int id, const struct kvm_error_pc *pc, char *buf, size_t len);

#endif
