// SPDX-License-Identifier: MIT
/* The join against what real KVM traced: lab captures (VMM_ATTRIBUTE_CAPTURE under vmm run
 * --attribute in the arm64 lab, GICv4, the timer workload on two vCPUs, halt polling off) kept as
 * fixtures. Each sample must join to the class it got in the lab, every stage seen must be >= 0
 * and the stages and residual must add up to the total; a change of the join that moves samples
 * shows here. Also the capture's own round trip and its refusals. */
#include "kselftest_harness.h"
#include "tests/unit/fixture_file.h"
#include "trace/trace.h"

#define CAPTURE_FILE "tests/unit/fixtures/attrib/lab-gic4-timer-hp0.txt"

TEST(lab_capture_joins_as_in_the_lab)
{
	size_t len = 0, moved = 0, per[AC_MAX] = { 0 };
	char *text = fixture_slurp(CAPTURE_FILE, &len);
	struct attrib_capture c;

	ASSERT_NE(NULL, text) TH_LOG("no %s", CAPTURE_FILE);
	ASSERT_EQ(0, attrib_capture_read(text, len, &c));
	free(text);
	ASSERT_GT(c.n, 100);
	ASSERT_GT(c.ev.n, 1000);
	EXPECT_EQ(2, c.vm.nvcpu);
	for (size_t i = 0; i < c.n; i++) {
		struct attrib_result r;

		attrib_join(&c.vm, &c.ev, &c.s[i], &r);
		per[r.cls]++;
		moved += r.cls != c.cls[i];
		if (r.cls == AC_AMBIGUOUS || r.cls == AC_NOT_VISIBLE)
			continue;
		int64_t sum = r.residual;

		for (unsigned int k = 0; k < AS_MAX; k++) {
			EXPECT_GE(r.stage[k], -1) TH_LOG("sample %zu stage %u", i, k);
			sum += r.stage[k] > 0 ? r.stage[k] : 0;
		}
		EXPECT_GE(r.residual, 0) TH_LOG("sample %zu", i);
		EXPECT_EQ((int64_t)(c.s[i].wake - c.s[i].target), sum) TH_LOG("sample %zu", i);
	}
	TH_LOG("poll hit %zu, blocked %zu, pending %zu, running %zu, not visible %zu, ambiguous %zu",
	       per[AC_POLL_HIT], per[AC_BLOCKED], per[AC_NO_WAIT], per[AC_RUNNING], per[AC_NOT_VISIBLE],
	       per[AC_AMBIGUOUS]);
	EXPECT_EQ(0, moved) TH_LOG("%zu samples join to another class than in the lab", moved);
	/* halt polling off: blocked is the largest class (74 of 150 in the lab), no poll hit */
	for (unsigned int k = 0; k < AC_MAX; k++) {
		const char *key = attrib_class_key(k);

		EXPECT_GE(per[AC_BLOCKED], per[k]) TH_LOG("class %s", key);
	}
	EXPECT_EQ(0, per[AC_POLL_HIT]);
	attrib_capture_free(&c);
}

TEST(capture_round_trip)
{
	struct attrib_vm vm = { .nvcpu = 1, .vcpu_tid = { 42 }, .nirq = 1, .bg_timer_fn = 0xffff8000deadbeefull,
				.irq_after_exit = true };
	struct attrib_events e;
	struct tev ev[] = { { .t = 1000, .cpu = 1, .tid = 42, .kind = TEV_KVM_EXIT, .a = 1, .b = 1 },
			    { .t = 5000, .cpu = 1, .tid = 42, .kind = TEV_KVM_ENTRY } };
	struct attrib_sample s = { .workload = 1, .vcpu = 0, .target = 2000, .wake = 6000 };
	struct attrib_result r = { .cls = AC_RUNNING };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct attrib_capture c;

	vm.irq[0].irq = 27, vm.irq[0].role = AIRQ_VTIMER, vm.irq[0].vcpu = -1;
	attrib_events_init(&e, 0);
	attrib_events_add(&e, &ev[0]);
	attrib_events_add(&e, &ev[1]);
	attrib_capture_write(f, &vm, &e, &s, &r, 1);
	fclose(f);
	ASSERT_EQ(0, attrib_capture_read(buf, len, &c));
	EXPECT_EQ(1, c.n);
	EXPECT_EQ(2, c.ev.n);
	EXPECT_EQ(42, c.vm.vcpu_tid[0]);
	EXPECT_EQ(27, c.vm.irq[0].irq);
	EXPECT_EQ(0xffff8000deadbeefull, c.vm.bg_timer_fn);
	EXPECT_TRUE(c.vm.irq_after_exit); /* x86's order */
	EXPECT_EQ(AC_RUNNING, c.cls[0]);
	EXPECT_EQ(6000, c.s[0].wake);
	attrib_capture_free(&c);
	free(buf);
	attrib_events_free(&e);
}

TEST(capture_refusals)
{
	static const char *const bad[] = {
		"vmm-attrib-capture 1\nsample 1 0 10 20 9 0\n",	  /* class out of range */
		"vmm-attrib-capture 1\nevent 1 0 1 99 0 0 0\n",	  /* kind out of range */
		"vmm-attrib-capture 1\nevent 1 0 1\n",		  /* cut */
		"vmm-attrib-capture 2\n",			  /* another version */
		"vmm-attrib-capture 1\nsomething else\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct attrib_capture c;

		EXPECT_EQ(-EINVAL, attrib_capture_read(bad[i], strlen(bad[i]), &c)) TH_LOG("%s", bad[i]);
		attrib_capture_free(&c);
	}
}

TEST_HARNESS_MAIN
