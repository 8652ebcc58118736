/*
 * Entry of the lab's bare-metal payload, loaded by `vmm run --kernel-format flat` at RAM + 0x80000
 * and entered at EL1 with the MMU off and x0 = the FDT, as the arm64 boot protocol gives a kernel.
 * Everything is PC-relative, so the payload runs wherever it is loaded.
 */
	.section .text.start, "ax"
	.global _start
_start:
	adr	x9, _start
	mov	sp, x9			// the stack grows down into the free RAM below the payload
	bl	payload_main		// x0: the FDT
1:	wfi				// payload_main powers off; never reached
	b	1b

	.text
/* uint64_t psci_call(uint32_t fn): PSCI through the hypervisor (KVM handles it). */
	.global psci_call
psci_call:
	hvc	#0
	ret

/* A load pair from a device address: an access without an instruction syndrome (ESR ISV = 0), which
 * KVM cannot decode for userspace emulation. */
	.global ldp_from
ldp_from:
	ldp	x1, x2, [x0]
	ret
	.section .note.GNU-stack, "", %progbits
