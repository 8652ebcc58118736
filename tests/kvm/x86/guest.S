/* SPDX-License-Identifier: MIT */
/*
 * kvm_x86_test's guest: 64-bit code entered in long mode (x86_longmode_build's identity map and
 * GDT, the IDT at GUEST_IDT filled by the host with guest_vectors' stubs). It turns on its x2APIC
 * (MSRs: no MMIO to emulate), reports through port I/O (guest.h) and runs the mode in %edi.
 * Position-independent: the host copies guest_start..guest_end to GUEST_CODE. KVM's own numbers
 * come from the host in registers (asm/kvm_para.h is C only): %r9 MSR_KVM_POLL_CONTROL, %r10
 * KVM_HC_SEND_IPI, %r11 KVM_CPUID_FEATURES.
 */
#include "tests/kvm/x86/guest.h"

#define MSR_APIC_BASE 0x1b
#define MSR_X2APIC_ID 0x802
#define MSR_X2APIC_EOI 0x80b
#define MSR_X2APIC_SVR 0x80f

	.section .rodata, "a"
	.code64
	.balign 16
	.globl guest_start
guest_start:
	/* APIC_BASE: enable (11) and x2APIC mode (10) */
	mov $MSR_APIC_BASE, %ecx
	rdmsr
	or $0xc00, %eax
	wrmsr
	/* SVR: APIC software enable, spurious vector 0xff */
	mov $MSR_X2APIC_SVR, %ecx
	mov $0x1ff, %eax
	xor %edx, %edx
	wrmsr
	mov $MSR_X2APIC_ID, %ecx
	rdmsr
	mov $PORT_READY, %dx
	out %eax, %dx
	cmp $MODE_POLL, %edi
	je poll
	cmp $MODE_IPI, %edi
	je ipi
	cmp $MODE_SPIN, %edi
	je spin
	cmp $MODE_EMUL, %edi
	je emul
	cmp $MODE_TRIPLE, %edi
	je triple
idle:
	sti
1:	hlt
	jmp 1b

spin:
	cli
2:	jmp 2b

/* A read of MMIO by a VEX-encoded instruction (BMI2's shrx, c4 e2 7b f7 16): KVM must emulate the
 * access and its emulator decodes no VEX prefix. RESULT only if KVM somehow completed it. */
emul:
	mov $GUEST_MMIO, %esi
	xor %eax, %eax
	shrx %eax, (%rsi), %edx
	mov %edx, %eax
	mov $PORT_RESULT, %dx
	out %eax, %dx
	jmp idle

/* A triple fault: with an IDT of limit 0, the ud2's #UD cannot be delivered, nor the #GP and #DF
 * that follow, so the vCPU shuts down (KVM_EXIT_SHUTDOWN). RESULT first: where the ud2 is. */
triple:
	lea 4f(%rip), %rax
	mov $PORT_RESULT, %dx
	out %eax, %dx
	push $0
	push $0
	lidt (%rsp)
4:	ud2

/* CPUID's POLL_CONTROL as the guest sees it, then the MSR: 0 and 1 written by the guest (the host
 * reads each back at a SYNC), then read after the host wrote it (RESULT). */
poll:
	mov %r11d, %eax
	xor %ecx, %ecx
	cpuid
	mov $PORT_RESULT, %dx
	out %eax, %dx
	mov %r9d, %ecx
	xor %eax, %eax
	xor %edx, %edx
	wrmsr
	mov $PORT_SYNC, %dx
	out %eax, %dx
	mov %r9d, %ecx
	mov $1, %eax
	xor %edx, %edx
	wrmsr
	mov $PORT_SYNC, %dx
	out %eax, %dx
	mov %r9d, %ecx
	rdmsr
	mov $PORT_RESULT, %dx
	out %eax, %dx
	jmp idle

/* Waits for the host's go (a SYNC), then KVM_HC_SEND_IPI: a0 = bitmap of APIC IDs from a2 = 0
 * (bit 1: APIC ID 1), a1 = the high bitmap, a3 = ICR (fixed, IPI_VECTOR); RESULT = what it returned
 * (the number of vCPUs it reached). */
ipi:
	mov $PORT_SYNC, %dx
	out %eax, %dx
	mov %r10d, %eax
	mov $2, %ebx
	xor %ecx, %ecx
	xor %edx, %edx
	mov $IPI_VECTOR, %esi
	test %r8, %r8
	jnz 1f
	vmcall
	jmp 2f
1:	vmmcall
2:	mov $PORT_RESULT, %dx
	out %eax, %dx
	jmp idle

/* Every vector: an exception (< 32) is reported and stops the guest; an interrupt is reported,
 * then EOIed (a level vector's EOI is what the split irqchip turns into KVM_EXIT_IOAPIC_EOI). */
common:
	cmp $32, %eax
	jb fault
	push %rcx
	push %rdx
	mov $PORT_VECTOR, %dx
	out %eax, %dx
	mov $MSR_X2APIC_EOI, %ecx
	xor %eax, %eax
	xor %edx, %edx
	wrmsr
	pop %rdx
	pop %rcx
	pop %rax
	iretq
fault:
	mov $PORT_FAULT, %dx
	out %eax, %dx
	cli
3:	hlt
	jmp 3b

	.balign GUEST_STUB_SIZE
	.globl guest_vectors
guest_vectors:
	.set vec, 0
	.rept 256
	.balign GUEST_STUB_SIZE
	push %rax
	mov $vec, %eax
	jmp common
	.set vec, vec + 1
	.endr
	.globl guest_end
guest_end:
	.section .note.GNU-stack, "", @progbits
