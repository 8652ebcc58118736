/* SPDX-License-Identifier: MIT */
/* vCPUs: creation, the KVM_RUN loop, exit counters and kicks. */
#ifndef VMM_VCPU_H
#define VMM_VCPU_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

/* vcpu exit counters, by reason; read by the stats code after the vCPU stops. */
struct vcpu_exits {
	atomic_uint_fast64_t mmio, mmio_unclaimed, pio, intr, system_event, ioapic_eoi, other;
};

/* How a vCPU's thread is signalled out of KVM_RUN. Apart from struct vcpu so a unit test
 * can race kicks against a thread's exit without /dev/kvm. */
struct vcpu_kicker {
	pthread_mutex_t lock;
	pthread_t thread;
	atomic_bool running; /* between enter and leave */
	int (*kill)(pthread_t thread, int sig); /* pthread_kill; tests watch the calls */
};

void vcpu_kicker_init(struct vcpu_kicker *k);
/* Called by the thread itself when it starts running, and before it exits. */
void vcpu_kicker_enter(struct vcpu_kicker *k);
void vcpu_kicker_leave(struct vcpu_kicker *k);
/* Signals the thread when it is running and is not the caller. */
void vcpu_kicker_kick(struct vcpu_kicker *k, int sig);

struct vcpu;

/* A function to run on a vCPU's own thread between two KVM_RUNs (vcpu_call). Another thread's
 * vCPU ioctl waits for KVM's vCPU mutex, which a guest halted inside KVM_RUN holds for as long as
 * it sleeps: the vCPU thread itself must do it. */
struct vcpu_call {
	pthread_mutex_t serial; /* one caller at a time */
	pthread_mutex_t lock;	/* the request, between the caller and the vCPU thread */
	pthread_cond_t done;
	atomic_bool pending;
	int (*fn)(struct vcpu *v, void *arg);
	void *arg;
	int ret;
};

struct vcpu {
	struct vm *vm;
	int id;
	int fd;
	struct kvm_run *run;
	size_t run_size;
	struct vcpu_kicker kicker;
	struct vcpu_call call;
	struct vcpu_exits exits;
	atomic_int tid; /* its thread's id once running (0 before): its CPU time is read by tid */
	/* its thread's context switches as it ended (getrusage; -1 before): the exit summary's
	 * per-vCPU state, read after /proc/self/task/TID is gone */
	_Atomic int64_t end_voluntary, end_preempted;
};

int vcpu_create(struct vm *vm, int id, struct vcpu **out);
void vcpu_destroy(struct vcpu *vcpu);
/* Runs until the VM is asked to stop or a system event ends it; returns the VM exit code or -errno. */
int vcpu_run_loop(struct vcpu *vcpu);
/* Handles the exit KVM_RUN just returned with (vcpu->run): what the loop does after each. */
void vcpu_handle_exit(struct vcpu *vcpu);
void vcpu_kick(struct vcpu *vcpu);
void vcpu_call_init(struct vcpu_call *c);
/* Runs fn(vcpu, arg) on the vCPU's thread (kicked out of KVM_RUN for it) and returns what fn
 * returned; when no thread runs the vCPU, on the caller's. -ETIMEDOUT (fn not run) when the
 * thread has not come round within timeout_ms (it left its loop meanwhile). */
int vcpu_call(struct vcpu *vcpu, int (*fn)(struct vcpu *v, void *arg), void *arg, int timeout_ms);
/* The vCPU thread's side: runs a pending call (the run loop does, before each KVM_RUN). */
void vcpu_call_serve(struct vcpu *vcpu);
int vcpu_stats_fd(struct vcpu *vcpu);
/* Host CPU time the vCPU's thread has used so far, in ns (/proc/self/task/TID/schedstat); -1 when
 * the thread has not started or has ended. Halt polling spends this to save wake-up latency. */
int64_t vcpu_cpu_ns(struct vcpu *vcpu);

#endif
