/* SPDX-License-Identifier: MIT */
/*
 * The tiny-guest harness of kvm_x86_test: what the host's x86 KVM offers (a skip reason when it
 * lacks something), a VM with 1 MiB of RAM and up to two vCPUs entering guest.S in long mode on
 * vmm's own boot tables, and the KVM calls the cases make (MSI routes, irqfds, MSRs, binary stats,
 * a vCPU run on a thread of its own with a deadline).
 */
#ifndef KVM_X86_TVM_H
#define KVM_X86_TVM_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "halt_poll/halt_poll.h"

extern const unsigned char guest_start[], guest_vectors[], guest_end[];

/* Architectural numbers no UAPI header names (SDM vol. 3): EFER's long-mode bits, CR0/CR4 bits,
 * the hypervisor and x2APIC CPUID bits, the MSI address and data formats, #UD's vector. */
#define EFER_LME (1ULL << 8)
#define EFER_LMA (1ULL << 10)
#define CR0_PE 1ULL
#define CR0_PG (1ULL << 31)
#define CR4_PAE (1ULL << 5)
#define CPUID_1_ECX_X2APIC (1u << 21)
#define CPUID_1_ECX_HYPERVISOR (1u << 31)
#define MSI_ADDR(dest) (0xfee00000u | ((uint32_t)(dest) << 12))
#define MSI_DATA_LEVEL (1u << 15)
#define MSI_DATA_ASSERT (1u << 14)
#define X86_VECTOR_UD 6 /* #UD, invalid opcode */
#define CPUID_MAX 256
#define WAIT_MS 5000

/* ---- the host: is there an x86 KVM that can run this, and what is it ---- */

struct host {
	int kvm;
	char what[256];		/* module, CPU vendor: said in every case's log */
	bool amd_hypercall;	/* the guest's vendor is AMD's: vmmcall, else vmcall */
	struct kvm_cpuid2 *cpuid; /* KVM_GET_SUPPORTED_CPUID */
	uint32_t pv_eax;	  /* its leaf 0x40000001 eax */
	const char *module;	  /* kvm_amd, kvm_intel, kvm_pvm or "unknown" */
};

/* ---- a VM with 1 MiB of RAM and up to two vCPUs running guest.S ---- */

enum irqchip { IRQCHIP_KERNEL, IRQCHIP_SPLIT };

struct tvcpu {
	int id, fd;
	struct kvm_run *run;
	size_t run_size;
	const uint8_t *ram;	/* the VM's RAM: the bytes at a stuck RIP (identity-mapped) */
	int wait_ms;		/* how long one KVM_RUN may take before vrun gives up: WAIT_MS */
	int fault;		/* the exception the guest last reported on PORT_FAULT, else -1 */
};

struct tvm {
	int fd;
	uint8_t *ram;
	int nr;
	struct tvcpu v[2];
};

/* A vCPU run on its own thread to its next report; the caller waits with a deadline. */
struct runner {
	struct tvcpu *v;
	int port;
	uint32_t val;
	int rc;
	atomic_bool done;
	pthread_t thread;
};

/* 0 with h filled, or -1 with why: what is missing, in words a person can act on. */
int host_open(struct host *h, char *why, size_t len);

void host_close(struct host *h);

int tvm_create(struct tvm *t, const struct host *h, enum irqchip chip);

/* vCPU id (its APIC ID) entering guest.S in long mode with mode in %edi. */
int tvcpu_add(struct tvm *t, const struct host *h, int mode);

void tvm_destroy(struct tvm *t);

/* KVM_RUN until an exit (a kick's EINTR ends it too when immediate_exit is set): the exit reason,
 * or -1. A KVM_RUN that has not returned within v->wait_ms is interrupted by a timer signal: -1,
 * saying what it waited for, where the vCPU is and the bytes there. */
int vrun(struct tvcpu *v);

/* Runs to the guest's next report: 0 with the port's value, -1 on anything else, said (an
 * exception the guest took is also left in v->fault). */
int next_io(struct tvcpu *v, int port, uint32_t *val);

bool has_cap(const struct host *h, long cap);

int set_msi_routes(struct tvm *t, const uint32_t *gsi, const uint32_t *data, int n);

int irqfd(struct tvm *t, uint32_t gsi);

int fire(int efd);

int msr_get(struct tvcpu *v, uint32_t index, uint64_t *val);

int msr_set(struct tvcpu *v, uint32_t index, uint64_t val);

/* The vCPU's binary stats, or a skip reason. */
int vcpu_stats(const struct host *h, struct tvcpu *v, struct hp_stats *st, char *why, size_t len);

uint64_t stat_of(struct hp_stats *st, const char *name);

/* Waits (up to WAIT_MS) until the vCPU has halted more than `before` times: it is then blocked in
 * KVM, where only an interrupt wakes it. */
bool wait_halted(struct hp_stats *st, uint64_t before);

void *runner_main(void *arg);

/* Joins the runner; if it has not finished within WAIT_MS it is kicked out of KVM_RUN and -1. */
int runner_join(struct runner *r);

/* Kicks the runner out of KVM_RUN now and joins it (a case that stops early). */
void runner_stop(struct runner *r);

#endif
