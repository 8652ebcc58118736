/*
 * The bench's launch-to-first-instruction payload: an arm64 Image (the boot protocol's 64-byte
 * header, "ARM\x64" at offset 56) whose first instructions power the VM off through PSCI
 * SYSTEM_OFF over HVC, the conduit both vmm's and QEMU's virt FDT name under KVM. vmm and QEMU load
 * it as they load a Linux Image, so launch to exit is launch to the first instruction plus the
 * teardown, for either (tests/lab/bench_startup.c, startup.first_instruction_exit).
 */
	.section .text.start, "ax"
	.global _start
_start:
	b	1f			// code0: the first instruction
	.long	0			// code1
	.quad	0			// text_offset: anywhere 2 MiB-aligned
	.quad	4096			// image_size: the padded file
	.quad	0xa			// flags: little-endian, 4 KiB pages, placed anywhere
	.quad	0, 0, 0			// res2-res4
	.ascii	"ARM\x64"		// magic
	.long	0			// res5 (no PE/COFF header)
1:	movz	w0, #0x0008
	movk	w0, #0x8400, lsl #16	// PSCI 0.2 SYSTEM_OFF (SMC32)
	hvc	#0
2:	wfi				// SYSTEM_OFF does not return
	b	2b
	.balign	4096, 0
	.section .note.GNU-stack, "", %progbits
