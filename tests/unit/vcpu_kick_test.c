// SPDX-License-Identifier: MIT
/* vCPU kicks racing with the vCPU thread's exit: a kick must never reach a thread already joined. */
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "core/vcpu.h"

/* The test's stand-in for pthread_kill: it takes long enough for the thread to leave, exit and be
 * joined meanwhile, and records when a kick was aimed at a thread that had been joined. */
static atomic_int started, joined; /* threads started and joined so far */
static atomic_int kills, late_kills;

static int watch_kill(pthread_t t, int sig)
{
	int target = atomic_load(&started); /* the thread being kicked is the latest one */

	(void)t;
	(void)sig;
	atomic_fetch_add(&kills, 1);
	usleep(300);
	if (atomic_load(&joined) >= target)
		atomic_fetch_add(&late_kills, 1);
	return 0;
}

struct race {
	struct vcpu_kicker k;
	atomic_bool stop;
};

static void *vcpu_like(void *arg)
{
	struct race *r = arg;

	vcpu_kicker_enter(&r->k);
	usleep(100);
	vcpu_kicker_leave(&r->k);
	return NULL;
}

static void *kicker(void *arg)
{
	struct race *r = arg;

	/* A pause between kicks: glibc's mutex is not fair, and a kicker relocking at once could
	 * starve the vCPU's enter/leave for seconds on a loaded machine (the test then timed out). */
	while (!atomic_load(&r->stop)) {
		vcpu_kicker_kick(&r->k, SIGUSR1);
		usleep(20);
	}
	return NULL;
}

TEST(kick_never_reaches_a_joined_thread)
{
	struct race r;
	pthread_t kt;

	vcpu_kicker_init(&r.k);
	r.k.kill = watch_kill;
	atomic_init(&r.stop, false);
	ASSERT_EQ(0, pthread_create(&kt, NULL, kicker, &r));
	for (int i = 0; i < 300; i++) {
		pthread_t t;

		atomic_fetch_add(&started, 1);
		ASSERT_EQ(0, pthread_create(&t, NULL, vcpu_like, &r));
		ASSERT_EQ(0, pthread_join(t, NULL));
		atomic_fetch_add(&joined, 1);
	}
	atomic_store(&r.stop, true);
	pthread_join(kt, NULL);
	TH_LOG("%d kicks sent, %d of them after the thread was joined", atomic_load(&kills),
	       atomic_load(&late_kills));
	EXPECT_GT(atomic_load(&kills), 0);
	EXPECT_EQ(0, atomic_load(&late_kills));
}

/* A thread kicking itself (vm_request_stop from a vCPU) sends no signal. */
TEST(no_self_kick)
{
	struct vcpu_kicker k;

	vcpu_kicker_init(&k);
	k.kill = watch_kill;
	atomic_store(&kills, 0);
	vcpu_kicker_enter(&k);
	vcpu_kicker_kick(&k, SIGUSR1);
	vcpu_kicker_leave(&k);
	vcpu_kicker_kick(&k, SIGUSR1);
	EXPECT_EQ(0, atomic_load(&kills));
}

TEST_HARNESS_MAIN
