/* SPDX-License-Identifier: MIT */
/*
 * The tiny guest of kvm_x86_test (guest.S) and its host agree on these: where things sit in the
 * guest's 1 MiB of RAM, the I/O ports it reports through, and the modes it runs. Plain #defines:
 * the assembler reads this file too.
 */
#ifndef KVM_X86_GUEST_H
#define KVM_X86_GUEST_H

#define GUEST_RAM_SIZE 0x100000   /* one memslot at 0; x86_longmode_build's tables sit in it */
#define GUEST_IDT 0x4000          /* 256 16-byte gates, one stub each */
#define GUEST_CODE 0x10000        /* guest.S's blob, copied here (position-independent) */
#define GUEST_STACK_TOP 0x80000   /* vCPU n's stack ends at GUEST_STACK_TOP - n * 0x8000 */
#define GUEST_STUB_SIZE 16        /* guest_vectors: vector v's stub at + v * 16 */

/* out %eax to these ports: each is a KVM_EXIT_IO the host reads */
#define PORT_READY 0x10   /* set up done: the vCPU's x2APIC ID */
#define PORT_VECTOR 0x11  /* an interrupt arrived: its vector (before its EOI) */
#define PORT_RESULT 0x12  /* a value the mode reports */
#define PORT_SYNC 0x13    /* a step done; the host does its part before resuming */
#define PORT_FAULT 0x14   /* an exception: its vector; the guest then stops */

/* %edi at entry; %r8 = 1 when the hypercall instruction is AMD's vmmcall */
#define MODE_IDLE 0       /* interrupts on, hlt forever */
#define MODE_POLL 1       /* MSR_KVM_POLL_CONTROL written and read back (see guest.S) */
#define MODE_IPI 2        /* KVM_HC_SEND_IPI to APIC ID 1 with vector IPI_VECTOR after a SYNC */
#define MODE_SPIN 3       /* interrupts off, a jump to itself: KVM_RUN never exits on its own */
#define MODE_EMUL 4       /* shrx from GUEST_MMIO: an MMIO read KVM's emulator cannot decode (VEX) */
#define MODE_TRIPLE 5     /* RESULT: the address of a ud2, which it then runs with an empty IDT */

#define GUEST_MMIO 0x200000 /* no memslot there (the identity map covers it): an access is MMIO */

#define IPI_VECTOR 0x42

#endif
