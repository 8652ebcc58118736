// SPDX-License-Identifier: MIT
/* The VM's routing table: irqchip routes survive MSI changes; MSI entries carry the devid only
 * when the VM has a vITS. (Commits to KVM are exercised in the lab.) */
#include <string.h>

#include "kselftest_harness.h"
#include "core/irq.h"
#include "core/vm.h"

static struct vm vm; /* ~64 KiB: not on the test's stack */

static const struct kvm_irq_routing_entry *find(uint32_t gsi)
{
	for (int i = 0; i < vm.routing.nr; i++)
		if (vm.routing.e[i].gsi == gsi)
			return &vm.routing.e[i];
	return NULL;
}

TEST(irqchip_routes_then_msi)
{
	struct kvm_irq_routing_entry e;

	memset(&vm, 0, sizeof(vm));
	ASSERT_EQ(0, irq_routing_init(&vm, 96));
	EXPECT_EQ(96, vm.routing.nr);
	EXPECT_EQ(KVM_IRQ_ROUTING_IRQCHIP, find(5)->type);
	EXPECT_EQ(5, find(5)->u.irqchip.pin);
	int gsi = irq_gsi_alloc(&vm);

	EXPECT_EQ(96, gsi); /* MSI GSIs come after the irqchip ones */
	irq_msi_entry(&vm, &e, gsi, 0x08090040, 0x21, 0x10);
	ASSERT_EQ(0, irq_table_set(&vm.routing, gsi, &e));
	EXPECT_EQ(97, vm.routing.nr);
	EXPECT_EQ(KVM_IRQ_ROUTING_MSI, find(gsi)->type);
	EXPECT_EQ(0, find(gsi)->flags); /* no vITS: no devid */
	/* replacing keeps one entry per GSI */
	vm.msi_needs_devid = true;
	irq_msi_entry(&vm, &e, gsi, 0x08090040, 0x22, 0x10);
	ASSERT_EQ(0, irq_table_set(&vm.routing, gsi, &e));
	EXPECT_EQ(97, vm.routing.nr);
	EXPECT_EQ(0x22, find(gsi)->u.msi.data);
	EXPECT_EQ(KVM_MSI_VALID_DEVID, find(gsi)->flags);
	EXPECT_EQ(0x10, find(gsi)->u.msi.devid);
	EXPECT_EQ(0x08090040, find(gsi)->u.msi.address_lo);
	/* removing it leaves every irqchip route in place */
	ASSERT_EQ(0, irq_table_set(&vm.routing, gsi, NULL));
	EXPECT_EQ(96, vm.routing.nr);
	EXPECT_EQ(NULL, find(gsi));
	EXPECT_NE(NULL, find(95));
	EXPECT_EQ(-ENOENT, irq_table_set(&vm.routing, gsi, NULL));
}

TEST(table_full)
{
	struct kvm_irq_routing_entry e;

	memset(&vm, 0, sizeof(vm));
	ASSERT_EQ(0, irq_routing_init(&vm, 0));
	irq_msi_entry(&vm, &e, 0, 0x1000, 1, 0);
	for (int i = 0; i < IRQ_MAX_ROUTES; i++)
		ASSERT_EQ(0, irq_table_set(&vm.routing, i, &e));
	EXPECT_EQ(-ENOSPC, irq_table_set(&vm.routing, IRQ_MAX_ROUTES, &e));
	EXPECT_EQ(0, irq_table_set(&vm.routing, 7, &e)); /* replacing still works */
	vm.routing.next_gsi = IRQ_MAX_ROUTES;
	EXPECT_EQ(-ENOSPC, irq_gsi_alloc(&vm));
}

TEST_HARNESS_MAIN
