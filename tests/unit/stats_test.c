// SPDX-License-Identifier: MIT
/*
 * The binary stats reader on files built the way the kernel lays them out (no /dev/kvm here),
 * and on corrupt ones: a bad header must be refused, never read past.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "halt_poll/halt_poll.h"
#include "kselftest_harness.h"

#define NAME_SIZE 48

struct fake_stat {
	const char *name;
	uint32_t flags;
	uint16_t size;
};

static const struct fake_stat fake[] = {
	{ "halt_successful_poll", KVM_STATS_TYPE_CUMULATIVE, 1 },
	{ "halt_wait_ns", KVM_STATS_TYPE_CUMULATIVE | KVM_STATS_UNIT_SECONDS, 1 },
	{ "halt_wait_hist", KVM_STATS_TYPE_LOG_HIST | KVM_STATS_UNIT_SECONDS, 32 },
	{ "blocking", KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_BOOLEAN, 1 },
};
#define NFAKE (sizeof(fake) / sizeof(fake[0]))

/* Writes a stats file into a memfd; returns the fd. Data value of word w is 1000 + w. */
static int make_stats_file(struct kvm_stats_header *override)
{
	struct kvm_stats_header h = {
		.name_size = NAME_SIZE,
		.num_desc = NFAKE,
		.id_offset = sizeof(h),
		.desc_offset = sizeof(h) + NAME_SIZE,
	};
	size_t dsz = sizeof(struct kvm_stats_desc) + NAME_SIZE;
	uint32_t words = 0;

	h.data_offset = h.desc_offset + dsz * NFAKE;
	if (override)
		h = *override;
	int fd = memfd_create("stats", 0);
	uint8_t *buf = calloc(1, 65536);

	memcpy(buf, &h, sizeof(h));
	strcpy((char *)buf + sizeof(h), "kvm-1234/vcpu-0");
	for (size_t i = 0; i < NFAKE; i++) {
		struct kvm_stats_desc *d = (void *)(buf + sizeof(h) + NAME_SIZE + i * dsz);

		d->flags = fake[i].flags;
		d->size = fake[i].size;
		d->offset = words * 8;
		strcpy(d->name, fake[i].name);
		words += fake[i].size;
	}
	uint64_t *data = (void *)(buf + sizeof(h) + NAME_SIZE + NFAKE * dsz);

	for (uint32_t w = 0; w < words; w++)
		data[w] = 1000 + w;
	size_t total = (uint8_t *)(data + words) - buf;

	if (write(fd, buf, total) != (ssize_t)total)
		abort();
	free(buf);
	return fd;
}

TEST(parse_and_read)
{
	struct hp_stats st;
	uint64_t v;

	ASSERT_EQ(0, hp_stats_open(&st, make_stats_file(NULL)));
	EXPECT_STREQ("kvm-1234/vcpu-0", st.id);
	EXPECT_EQ((int)NFAKE, st.nr);
	ASSERT_EQ(0, hp_stats_get(&st, "halt_successful_poll", &v));
	EXPECT_EQ(1000, v);
	ASSERT_EQ(0, hp_stats_get(&st, "halt_wait_ns", &v));
	EXPECT_EQ(1001, v);

	const struct hp_stat *h = hp_stats_find(&st, "halt_wait_hist");

	ASSERT_NE(NULL, h);
	EXPECT_EQ(32, h->size);
	EXPECT_STREQ("log2-hist", hp_stat_type_name(h->flags));
	EXPECT_STREQ("s", hp_stat_unit_name(h->flags));
	EXPECT_EQ(1002 + 31, hp_stats_value(&st, h, 31));
	EXPECT_EQ(0, hp_stats_value(&st, h, 32)); /* past the histogram */
	EXPECT_EQ(-ENOENT, hp_stats_get(&st, "no_such_stat", &v));
	hp_stats_close(&st);
}

TEST(reread_sees_new_values)
{
	struct hp_stats st;
	uint64_t v = 77;
	int fd = make_stats_file(NULL);

	ASSERT_EQ(0, hp_stats_open(&st, fd));
	ASSERT_EQ(8, pwrite(fd, &v, 8, st.data_offset));
	ASSERT_EQ(0, hp_stats_read(&st));
	ASSERT_EQ(0, hp_stats_get(&st, "halt_successful_poll", &v));
	EXPECT_EQ(77, v);
	hp_stats_close(&st);
}

TEST(corrupt_headers_refused)
{
	size_t dsz = sizeof(struct kvm_stats_desc) + NAME_SIZE;
	struct kvm_stats_header good = {
		.name_size = NAME_SIZE, .num_desc = NFAKE, .id_offset = sizeof(good),
		.desc_offset = sizeof(good) + NAME_SIZE,
		.data_offset = sizeof(good) + NAME_SIZE + dsz * NFAKE,
	};
	struct kvm_stats_header bad[5];
	struct hp_stats st;

	for (int i = 0; i < 5; i++)
		bad[i] = good;
	bad[0].num_desc = 0;
	bad[1].num_desc = 1u << 30;   /* would allocate gigabytes */
	bad[2].name_size = 1u << 20;
	bad[3].desc_offset = 1u << 20; /* past the end of the file */
	bad[4].data_offset = 1u << 20;
	for (int i = 0; i < 5; i++) {
		int r = hp_stats_open(&st, make_stats_file(&bad[i]));

		EXPECT_LT(r, 0) TH_LOG("corrupt header %d accepted", i);
		EXPECT_EQ(-1, st.fd);
	}
}

TEST(truncated_file_refused)
{
	struct hp_stats st;
	int fd = make_stats_file(NULL);

	ASSERT_EQ(0, ftruncate(fd, 100));
	EXPECT_LT(hp_stats_open(&st, fd), 0);
}

TEST_HARNESS_MAIN
