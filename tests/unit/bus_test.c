// SPDX-License-Identifier: MIT
/* The MMIO/PIO bus: ordering, overlap refusal, edge lookups, unclaimed accesses. */
#include <string.h>

#include "kselftest_harness.h"
#include "core/bus.h"

struct rec {
	uint64_t off;
	uint32_t len;
	bool write;
	int calls;
	uint8_t last[8];
};

static void rec_fn(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct rec *r = opaque;

	r->off = off;
	r->len = len;
	r->write = is_write;
	r->calls++;
	if (is_write)
		memcpy(r->last, data, len);
	else
		memset(data, 0xab, len);
}

FIXTURE(bus) {
	struct bus bus;
	struct rec a, b;
};

FIXTURE_SETUP(bus)
{
	bus_init(&self->bus);
	memset(&self->a, 0, sizeof(self->a));
	memset(&self->b, 0, sizeof(self->b));
	/* registered out of order on purpose */
	ASSERT_EQ(0, bus_register(&self->bus, 0x2000, 0x100, rec_fn, &self->b, "b"));
	ASSERT_EQ(0, bus_register(&self->bus, 0x1000, 0x1000, rec_fn, &self->a, "a"));
}

FIXTURE_TEARDOWN(bus) {}

TEST_F(bus, sorted_and_found)
{
	ASSERT_EQ(2, self->bus.nr);
	EXPECT_EQ(0x1000, self->bus.devs[0].base);
	EXPECT_EQ(0x2000, self->bus.devs[1].base);
	struct bus_dev d;

	ASSERT_TRUE(bus_find(&self->bus, 0x1000, 4, &d));
	EXPECT_STREQ("a", d.name);
	ASSERT_TRUE(bus_find(&self->bus, 0x1ffc, 4, &d));
	EXPECT_STREQ("a", d.name);
	ASSERT_TRUE(bus_find(&self->bus, 0x20ff, 1, &d));
	EXPECT_STREQ("b", d.name);
	EXPECT_FALSE(bus_find(&self->bus, 0xfff, 1, &d));
	EXPECT_FALSE(bus_find(&self->bus, 0x2100, 1, &d));
}

TEST_F(bus, access_straddling_the_end_is_refused)
{
	struct bus_dev d;

	EXPECT_FALSE(bus_find(&self->bus, 0x1ffe, 4, &d));
	EXPECT_FALSE(bus_find(&self->bus, 0x20fc, 8, &d));
	EXPECT_FALSE(bus_find(&self->bus, UINT64_MAX - 2, 8, &d));
}

TEST_F(bus, overlap_and_bad_ranges_refused)
{
	EXPECT_EQ(-EBUSY, bus_register(&self->bus, 0x1fff, 2, rec_fn, NULL, "x"));
	EXPECT_EQ(-EBUSY, bus_register(&self->bus, 0x0, 0x1001, rec_fn, NULL, "x"));
	EXPECT_EQ(-EBUSY, bus_register(&self->bus, 0x2050, 0x10, rec_fn, NULL, "x"));
	EXPECT_EQ(-EINVAL, bus_register(&self->bus, 0x5000, 0, rec_fn, NULL, "x"));
	EXPECT_EQ(-EINVAL, bus_register(&self->bus, UINT64_MAX - 1, 4, rec_fn, NULL, "x"));
	/* touching ranges are fine */
	EXPECT_EQ(0, bus_register(&self->bus, 0x2100, 0x100, rec_fn, NULL, "c"));
	EXPECT_EQ(0, bus_register(&self->bus, 0x0, 0x1000, rec_fn, NULL, "d"));
	EXPECT_EQ(4, self->bus.nr);
}

TEST_F(bus, dispatch_gives_offsets)
{
	uint8_t data[8] = { 1, 2, 3, 4 };

	EXPECT_TRUE(bus_access(&self->bus, 0x1010, data, 4, true));
	EXPECT_EQ(1, self->a.calls);
	EXPECT_EQ(0x10, self->a.off);
	EXPECT_EQ(4, self->a.len);
	EXPECT_TRUE(self->a.write);
	EXPECT_EQ(0, memcmp(self->a.last, data, 4));
	EXPECT_TRUE(bus_access(&self->bus, 0x2008, data, 2, false));
	EXPECT_EQ(0xab, data[0]);
	EXPECT_EQ(8, self->b.off);
}

TEST_F(bus, unclaimed_read_returns_zero)
{
	uint8_t data[8];

	memset(data, 0xff, sizeof(data));
	EXPECT_FALSE(bus_access(&self->bus, 0x9000, data, 8, false));
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(0, data[i]);
	EXPECT_EQ(0, self->a.calls + self->b.calls);
}

TEST_F(bus, unregister_and_move)
{
	uint8_t data[4] = { 0 };

	EXPECT_EQ(-ENOENT, bus_unregister(&self->bus, 0x2000, &self->a)); /* wrong owner */
	ASSERT_EQ(0, bus_unregister(&self->bus, 0x2000, &self->b));
	EXPECT_FALSE(bus_access(&self->bus, 0x2000, data, 4, true));
	ASSERT_EQ(0, bus_register(&self->bus, 0x8000, 0x100, rec_fn, &self->b, "b"));
	EXPECT_TRUE(bus_access(&self->bus, 0x8004, data, 4, true));
	EXPECT_EQ(1, self->b.calls);
	EXPECT_EQ(4, self->b.off);
}

/* A handler may change the bus it is called from (a BAR write moving a BAR). */
static void reentrant_fn(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	(void)off; (void)data; (void)len; (void)is_write;
	bus_register(opaque, 0x9000, 0x10, rec_fn, NULL, "late");
}

TEST(handler_may_register)
{
	struct bus bus;
	uint8_t v = 0;
	struct bus_dev d;

	bus_init(&bus);
	ASSERT_EQ(0, bus_register(&bus, 0x100, 0x10, reentrant_fn, &bus, "r"));
	EXPECT_TRUE(bus_access(&bus, 0x100, &v, 1, true));
	EXPECT_TRUE(bus_find(&bus, 0x9000, 1, &d));
}

TEST(bus_full)
{
	struct bus bus;

	bus_init(&bus);
	for (int i = 0; i < BUS_MAX_DEVS; i++)
		ASSERT_EQ(0, bus_register(&bus, 0x1000ULL * (BUS_MAX_DEVS - i), 0x1000, rec_fn, NULL, "n"));
	EXPECT_EQ(-ENOSPC, bus_register(&bus, 0x1000000, 0x10, rec_fn, NULL, "n"));
	for (int i = 1; i < BUS_MAX_DEVS; i++)
		EXPECT_LT(bus.devs[i - 1].base, bus.devs[i].base);
	struct bus_dev d;

	EXPECT_TRUE(bus_find(&bus, 0x1000ULL * BUS_MAX_DEVS + 0xfff, 1, &d));
}

TEST_HARNESS_MAIN
