// SPDX-License-Identifier: MIT
/*
 * PCI configuration mechanism #1: the guest writes the address register at 0xcf8 (bit 31 enable,
 * bus 23:16, device 15:11, function 10:8, register 7:2) and reads or writes the data at
 * 0xcfc-0xcff. vmm turns it into an offset in the ECAM window, so config space has one
 * implementation (core/pci.c) whichever way the guest reaches it.
 */
#include "x86/x86.h"

#define CF8_ENABLE (1u << 31)

bool x86_cf8_to_ecam(uint32_t cf8, uint16_t port, uint32_t len, uint64_t *off)
{
	uint32_t byte = port - X86_PCI_CFC, bus = (cf8 >> 16) & 0xff;

	if (!(cf8 & CF8_ENABLE) || port < X86_PCI_CFC || byte + len > 4 || !len)
		return false;
	/* the ECAM covers bus 0 (1 MiB); bits 30:24 are reserved (AMD's extended registers) */
	if (((uint64_t)bus << 20) >= X86_PCI_MMCONFIG_SIZE)
		return false;
	*off = (uint64_t)bus << 20 | ((cf8 >> 11) & 0x1f) << 15 | ((cf8 >> 8) & 7) << 12 |
	       (cf8 & 0xfc) | byte;
	return true;
}
