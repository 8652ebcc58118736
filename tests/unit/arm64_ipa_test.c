// SPDX-License-Identifier: MIT
/* The arm64 VM's IPA size: the smallest that holds the memory map, within what the host offers. */
#include "arm64/arm64.h"
#include "kselftest_harness.h"

TEST(bits_needed)
{
	/* The PCI 64-bit window ends at 0x90_0000_0000: 40 bits for any RAM that ends below it. */
	EXPECT_EQ(40, arm64_ipa_bits_needed(64ULL << 20));
	EXPECT_EQ(40, arm64_ipa_bits_needed(256ULL << 20));
	EXPECT_EQ(40, arm64_ipa_bits_needed(ARM64_PCI_MMIO64_BASE - ARM64_RAM_BASE));
	/* RAM reaching past 2^40 needs one more bit */
	EXPECT_EQ(41, arm64_ipa_bits_needed((1ULL << 40) - ARM64_RAM_BASE + 1));
	EXPECT_EQ(41, arm64_ipa_bits_needed(1ULL << 40));
	/* sizes that would wrap the 64-bit space ask for all of it, which no host offers */
	EXPECT_EQ(64, arm64_ipa_bits_needed(UINT64_MAX));
}

TEST(vm_type_choice)
{
	int bits = 0;

	/* the host offers more than needed: ask for the smallest that fits */
	EXPECT_EQ((long)KVM_VM_TYPE_ARM_IPA_SIZE(40), arm64_ipa_vm_type(256ULL << 20, 52, &bits));
	EXPECT_EQ(40, bits);
	EXPECT_EQ((long)KVM_VM_TYPE_ARM_IPA_SIZE(40), arm64_ipa_vm_type(256ULL << 20, 40, &bits));
	EXPECT_EQ((long)KVM_VM_TYPE_ARM_IPA_SIZE(41), arm64_ipa_vm_type(1ULL << 40, 48, &bits));
	EXPECT_EQ(41, bits);
	/* a kernel without KVM_CAP_ARM_VM_IPA_SIZE gives every VM 40 bits and takes type 0 only */
	EXPECT_EQ(0, arm64_ipa_vm_type(256ULL << 20, 0, &bits));
	EXPECT_EQ(40, bits);
	EXPECT_EQ(-ERANGE, arm64_ipa_vm_type(1ULL << 40, 0, &bits));
	/* the host's maximum is below what the map needs: refused */
	EXPECT_EQ(-ERANGE, arm64_ipa_vm_type(256ULL << 20, 36, &bits));
	EXPECT_EQ(-ERANGE, arm64_ipa_vm_type(UINT64_MAX, 52, &bits));
}

TEST_HARNESS_MAIN
