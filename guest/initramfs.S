/* The built-in guest's initramfs (guest/init.c packed by the Makefile), linked into vmm. */
	.section .rodata
	.balign 16
	.global guest_initramfs_start, guest_initramfs_end
guest_initramfs_start:
	.incbin GUEST_INITRAMFS
guest_initramfs_end:
	.section .note.GNU-stack, "", %progbits
