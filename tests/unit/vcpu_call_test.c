// SPDX-License-Identifier: MIT
/*
 * vcpu_call: a function run on the vCPU's own thread (the control socket's poll-control reads and
 * writes), with a stand-in for the vCPU thread's loop: served there with a kick, run on the
 * caller when no thread runs the vCPU, withdrawn on a timeout, served by a thread leaving.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "core/vcpu.h"

static atomic_int kicks;

static int count_kill(pthread_t t, int sig)
{
	(void)t;
	(void)sig;
	atomic_fetch_add(&kicks, 1);
	return 0;
}

static struct vcpu *fake_vcpu(void)
{
	struct vcpu *v = calloc(1, sizeof(*v));

	v->run = calloc(1, sizeof(*v->run));
	vcpu_kicker_init(&v->kicker);
	v->kicker.kill = count_kill;
	vcpu_call_init(&v->call);
	return v;
}

static void free_vcpu(struct vcpu *v)
{
	free(v->run);
	free(v);
}

struct where {
	pthread_t ran_on;
	int runs;
};

static int record(struct vcpu *v, void *arg)
{
	struct where *w = arg;

	(void)v;
	w->ran_on = pthread_self();
	w->runs++;
	return 42;
}

/* The vCPU thread's loop, without KVM: serve, "run" for a while, until stop. */
struct loop {
	struct vcpu *v;
	atomic_bool stop, serve;
	pthread_t thread;
};

static void *loop_main(void *arg)
{
	struct loop *l = arg;

	vcpu_kicker_enter(&l->v->kicker);
	while (!atomic_load(&l->stop)) {
		if (atomic_load(&l->serve))
			vcpu_call_serve(l->v);
		usleep(200);
	}
	vcpu_kicker_leave(&l->v->kicker);
	vcpu_call_serve(l->v);
	return NULL;
}

static void loop_start(struct loop *l, struct vcpu *v, bool serve)
{
	l->v = v;
	atomic_init(&l->stop, false);
	atomic_init(&l->serve, serve);
	pthread_create(&l->thread, NULL, loop_main, l);
	while (!atomic_load(&v->kicker.running))
		usleep(100);
}

TEST(runs_on_the_caller_when_no_thread_runs_the_vcpu)
{
	struct vcpu *v = fake_vcpu();
	struct where w = { 0 };

	atomic_store(&kicks, 0);
	EXPECT_EQ(42, vcpu_call(v, record, &w, 1000));
	EXPECT_EQ(1, w.runs);
	EXPECT_TRUE(pthread_equal(w.ran_on, pthread_self()));
	EXPECT_EQ(0, atomic_load(&kicks));
	free_vcpu(v);
}

TEST(runs_on_the_vcpu_thread_after_a_kick)
{
	struct vcpu *v = fake_vcpu();
	struct where w = { 0 };
	struct loop l;

	atomic_store(&kicks, 0);
	loop_start(&l, v, true);
	for (int i = 0; i < 20; i++)
		EXPECT_EQ(42, vcpu_call(v, record, &w, 5000));
	atomic_store(&l.stop, true);
	pthread_join(l.thread, NULL);
	EXPECT_EQ(20, w.runs);
	EXPECT_TRUE(pthread_equal(w.ran_on, l.thread));
	EXPECT_EQ(20, atomic_load(&kicks)); /* one kick each: out of KVM_RUN */
	EXPECT_EQ(1, v->run->immediate_exit);
	EXPECT_FALSE(atomic_load(&v->call.pending));
	free_vcpu(v);
}

TEST(withdrawn_when_the_thread_does_not_come_round)
{
	struct vcpu *v = fake_vcpu();
	struct where w = { 0 };
	struct loop l;

	loop_start(&l, v, false);
	EXPECT_EQ(-ETIMEDOUT, vcpu_call(v, record, &w, 50));
	EXPECT_FALSE(atomic_load(&v->call.pending));
	atomic_store(&l.serve, true); /* nothing left to serve: the call was withdrawn */
	usleep(5000);
	atomic_store(&l.stop, true);
	pthread_join(l.thread, NULL);
	EXPECT_EQ(0, w.runs);
	free_vcpu(v);
}

static void *stop_soon(void *arg)
{
	struct loop *l = arg;

	usleep(20000);
	atomic_store(&l->stop, true);
	return NULL;
}

TEST(served_by_a_thread_leaving_its_loop)
{
	struct vcpu *v = fake_vcpu();
	struct where w = { 0 };
	struct loop l;
	pthread_t s;

	loop_start(&l, v, false); /* serves only on its way out */
	pthread_create(&s, NULL, stop_soon, &l);
	EXPECT_EQ(42, vcpu_call(v, record, &w, 5000));
	pthread_join(s, NULL);
	pthread_join(l.thread, NULL);
	EXPECT_EQ(1, w.runs);
	EXPECT_TRUE(pthread_equal(w.ran_on, l.thread));
	free_vcpu(v);
}

TEST_HARNESS_MAIN
