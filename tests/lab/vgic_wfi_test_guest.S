/*
 * Guest code for vgic_wfi_test, copied into guest RAM and run at EL1 with the MMU off.
 * In: x0 = the test device on vmm's MMIO bus, x1 = GICD base, x2 = this vCPU's GICR SGI frame.
 * Stores 0x1111, arms the virtual timer (~31 ms), WFIs until it fires, then reports what it saw.
 * Interrupts stay masked in PSTATE: WFI still wakes on a pending interrupt, so no vectors needed.
 */
	.section .rodata
	.balign 4
	.global guest_wfi_start, guest_wfi_end
guest_wfi_start:
	movz	x9, #0x1111
	str	x9, [x0]			// 1st store, before any sleep
	mov	w9, #0x12			// GICD_CTLR: ARE_NS | EnableGrp1NS
	str	w9, [x1]
	mov	w9, #(1 << 27)			// the virtual timer PPI (INTID 27)
	str	w9, [x2, #0x80]			// GICR_IGROUPR0: group 1
	str	w9, [x2, #0x100]		// GICR_ISENABLER0: enabled
	mov	x9, #0xf0
	msr	S3_0_C4_C6_0, x9		// ICC_PMR_EL1: let priority 0xa0 through
	mov	x9, #1
	msr	S3_0_C12_C12_7, x9		// ICC_IGRPEN1_EL1
	isb
	mrs	x10, cntfrq_el0
	lsr	x10, x10, #5			// ~31 ms: long enough that the exit path under
					// nested emulation (a few ms) cannot outrun it
	mrs	x11, cntvct_el0
	msr	cntv_tval_el0, x10
	mov	x9, #1				// CNTV_CTL: ENABLE, not masked
	msr	cntv_ctl_el0, x9
	isb
	mov	x12, #0
1:	wfi
	add	x12, x12, #1
	mrs	x9, cntv_ctl_el0
	tbz	x9, #2, 1b			// ISTATUS clear: a spurious wake-up, sleep again
	mov	x9, #2				// IMASK: quiet the level-triggered timer
	msr	cntv_ctl_el0, x9
	isb
	mrs	x13, cntvct_el0
	sub	x13, x13, x11
	str	x13, [x0, #8]			// ticks between arming and waking
	str	x10, [x0, #16]			// ticks programmed
	str	x12, [x0, #24]			// WFIs executed: the last store, ends the test
2:	b	2b
guest_wfi_end:

/* Calls the PSCI function in x0 through the hypervisor (KVM handles PSCI itself). */
	.global guest_hvc_start, guest_hvc_end
	.balign 4
guest_hvc_start:
	hvc	#0
3:	b	3b
guest_hvc_end:
	.section .note.GNU-stack, "", %progbits
