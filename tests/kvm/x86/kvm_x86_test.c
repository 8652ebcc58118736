// SPDX-License-Identifier: MIT
/*
 * x86 KVM-API tests with a tiny guest (guest.S), kselftests-style: they need /dev/kvm but no
 * Linux guest, so they run wherever an x86 /dev/kvm runs hand-made code: natively on hosts with
 * kvm_amd / kvm_intel / kvm_pvm, and in the x86 lab (nested SVM). Cases: the in-kernel irqchip
 * (an MSI route + irqfd reaches the guest's IDT), the split irqchip (a level vector's EOI exits
 * as KVM_EXIT_IOAPIC_EOI), MSI routes and KVM_SIGNAL_MSI, MSR_KVM_POLL_CONTROL from both sides,
 * the PV send-IPI hypercall waking a halted vCPU, and the halt stats moving.
 * Every case first finds out what the host has: no /dev/kvm, one that cannot be opened, or a KVM
 * (named by its vendor module) without a capability or a PV feature is a skip naming it.
 */
#include <asm/kvm_para.h>
#include <linux/kvm_para.h>
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "halt_poll/halt_poll.h"
#include "kselftest_harness.h"
#include "tests/kvm/x86/guest.h"
#include "x86/x86.h"

extern const unsigned char guest_start[], guest_vectors[], guest_end[];

/* Architectural numbers no UAPI header names (SDM vol. 3): EFER's long-mode bits, CR0/CR4 bits,
 * the hypervisor and x2APIC CPUID bits, the MSI address and data formats. */
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

static bool module_loaded(const char *m)
{
	char p[64];
	struct stat st;

	snprintf(p, sizeof(p), "/sys/module/%s", m);
	return stat(p, &st) == 0;
}

static const char *vendor_module(void)
{
	static const char *const mods[] = { "kvm_pvm", "kvm_amd", "kvm_intel" };

	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (module_loaded(mods[i]))
			return mods[i];
	return module_loaded("kvm") ? "kvm (no vendor module found in /sys/module)" : "unknown";
}

static struct kvm_cpuid_entry2 *leaf(struct kvm_cpuid2 *c, uint32_t fn)
{
	for (uint32_t i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn)
			return &c->entries[i];
	return NULL;
}

/* 0 with h filled, or -1 with why: what is missing, in words a person can act on. */
static int host_open(struct host *h, char *why, size_t len)
{
	unsigned int a, b, c, d;
	char vendor[13] = "";
	struct kvm_cpuid_entry2 *e;

	memset(h, 0, sizeof(*h));
	h->kvm = -1;
	if (__get_cpuid(0, &a, &b, &c, &d)) {
		memcpy(vendor, &b, 4);
		memcpy(vendor + 4, &d, 4);
		memcpy(vendor + 8, &c, 4);
	}
	h->module = vendor_module();
	if (access("/dev/kvm", F_OK) < 0) {
		if (module_loaded("kvm"))
			snprintf(why, len, "no /dev/kvm here although %s is loaded (the device is not exposed to "
				 "this machine or container); the x86 lab runs these", h->module);
		else
			snprintf(why, len, "no /dev/kvm on this machine (%s CPU, no KVM module loaded); the x86 lab "
				 "runs these", vendor);
		return -1;
	}
	h->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (h->kvm < 0) {
		snprintf(why, len, "/dev/kvm cannot be opened: %s (root or the kvm group needed)", strerror(errno));
		return -1;
	}
	if (ioctl(h->kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION) {
		snprintf(why, len, "/dev/kvm speaks KVM API %d, not %d", ioctl(h->kvm, KVM_GET_API_VERSION, 0),
			 KVM_API_VERSION);
		return -1;
	}
	h->cpuid = calloc(1, sizeof(*h->cpuid) + CPUID_MAX * sizeof(h->cpuid->entries[0]));
	h->cpuid->nent = CPUID_MAX;
	if (ioctl(h->kvm, KVM_GET_SUPPORTED_CPUID, h->cpuid) < 0) {
		snprintf(why, len, "KVM_GET_SUPPORTED_CPUID failed on %s: %s (not an x86 KVM?)", h->module,
			 strerror(errno));
		return -1;
	}
	e = leaf(h->cpuid, 0);
	/* the guest runs with KVM's CPUID: its vendor picks the hypercall instruction */
	h->amd_hypercall = e && (e->ebx == 0x68747541 /* "Auth" */ || e->ebx == 0x6f677948 /* "Hygo" */);
	e = leaf(h->cpuid, KVM_CPUID_FEATURES);
	h->pv_eax = e ? e->eax : 0;
	snprintf(h->what, sizeof(h->what), "%s on a %s CPU, KVM's CPUID 0x40000001 eax=0x%08x, hypercall %s",
		 h->module, vendor, h->pv_eax, h->amd_hypercall ? "vmmcall" : "vmcall");
	return 0;
}

static void host_close(struct host *h)
{
	if (h->kvm >= 0)
		close(h->kvm);
	free(h->cpuid);
}

/* ---- a VM with 1 MiB of RAM and up to two vCPUs running guest.S ---- */

enum irqchip { IRQCHIP_KERNEL, IRQCHIP_SPLIT };

struct tvcpu {
	int id, fd;
	struct kvm_run *run;
	size_t run_size;
};

struct tvm {
	int fd;
	uint8_t *ram;
	int nr;
	struct tvcpu v[2];
};

static int fail(const char *what)
{
	int e = errno;

	fprintf(stderr, "# %s: %s\n", what, strerror(e));
	return -1;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* The IDT: a 64-bit interrupt gate per vector onto its stub in guest.S (SDM vol. 3, 6.14.1). */
static void idt_build(uint8_t *ram)
{
	uint64_t base = GUEST_CODE + (uint64_t)(guest_vectors - guest_start);

	for (int v = 0; v < 256; v++) {
		uint64_t h = base + (uint64_t)v * GUEST_STUB_SIZE;
		uint64_t lo = (h & 0xffff) | ((uint64_t)X86_BOOT_CS << 16) | (0x8eULL << 40) |
			      ((h >> 16 & 0xffff) << 48);

		put64(ram + GUEST_IDT + v * 16, lo);
		put64(ram + GUEST_IDT + v * 16 + 8, h >> 32);
	}
}

static int tvm_create(struct tvm *t, const struct host *h, enum irqchip chip)
{
	struct kvm_userspace_memory_region mr = { .slot = 0, .memory_size = GUEST_RAM_SIZE };

	memset(t, 0, sizeof(*t));
	t->fd = ioctl(h->kvm, KVM_CREATE_VM, 0);
	if (t->fd < 0)
		return fail("KVM_CREATE_VM");
	t->ram = mmap(NULL, GUEST_RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->ram == MAP_FAILED)
		return fail("mmap of guest RAM");
	mr.userspace_addr = (uintptr_t)t->ram;
	if (ioctl(t->fd, KVM_SET_USER_MEMORY_REGION, &mr) < 0)
		return fail("KVM_SET_USER_MEMORY_REGION");
	/* vmm's own boot tables: GDT with __BOOT_CS, identity map of 4 GiB */
	if (x86_longmode_build(t->ram, GUEST_RAM_SIZE) < 0)
		return -1;
	memcpy(t->ram + GUEST_CODE, guest_start, guest_end - guest_start);
	idt_build(t->ram);
	if (chip == IRQCHIP_KERNEL && ioctl(t->fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return fail("KVM_CREATE_IRQCHIP");
	if (chip == IRQCHIP_SPLIT) {
		struct kvm_enable_cap cap = { .cap = KVM_CAP_SPLIT_IRQCHIP, .args = { X86_IOAPIC_PINS } };

		if (ioctl(t->fd, KVM_ENABLE_CAP, &cap) < 0)
			return fail("KVM_ENABLE_CAP(KVM_CAP_SPLIT_IRQCHIP)");
	}
	return 0;
}

static void seg(struct kvm_segment *s, uint16_t sel, uint8_t type, bool code)
{
	*s = (struct kvm_segment){ .limit = 0xffffffff, .selector = sel, .type = type, .present = 1,
				   .db = !code, .s = 1, .l = code, .g = 1 };
}

/* vCPU id (its APIC ID) entering guest.S in long mode with mode in %edi. */
static int tvcpu_add(struct tvm *t, const struct host *h, int mode)
{
	struct tvcpu *v = &t->v[t->nr];
	struct kvm_sregs sr;
	struct kvm_regs regs = { .rip = GUEST_CODE, .rflags = 2, .rdi = (uint64_t)mode,
				 .r8 = h->amd_hypercall, .r9 = MSR_KVM_POLL_CONTROL, .r10 = KVM_HC_SEND_IPI,
				 .r11 = KVM_CPUID_FEATURES, .rsp = GUEST_STACK_TOP - (uint64_t)t->nr * 0x8000 };
	size_t csize = sizeof(*h->cpuid) + h->cpuid->nent * sizeof(h->cpuid->entries[0]);
	struct kvm_cpuid2 *c = malloc(csize);
	int mmap_size = ioctl(h->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	struct kvm_mp_state mp = { KVM_MP_STATE_RUNNABLE };

	v->id = t->nr;
	v->fd = ioctl(t->fd, KVM_CREATE_VCPU, v->id);
	if (v->fd < 0 || mmap_size <= 0)
		return fail("KVM_CREATE_VCPU");
	v->run_size = mmap_size;
	v->run = mmap(NULL, v->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED)
		return fail("mmap of kvm_run");
	t->nr++;
	/* KVM's CPUID as is, with this vCPU's APIC ID, x2APIC and the hypervisor bit */
	memcpy(c, h->cpuid, csize);
	for (uint32_t i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == 1)
			e->ebx = (e->ebx & 0x00ffffff) | (uint32_t)v->id << 24,
			e->ecx |= CPUID_1_ECX_HYPERVISOR;
		else if (e->function == 0xb || e->function == 0x1f)
			e->edx = v->id;
	}
	if (ioctl(v->fd, KVM_SET_CPUID2, c) < 0) {
		free(c);
		return fail("KVM_SET_CPUID2");
	}
	free(c);
	if (ioctl(v->fd, KVM_GET_SREGS, &sr) < 0)
		return fail("KVM_GET_SREGS");
	seg(&sr.cs, X86_BOOT_CS, 0xb, true);
	seg(&sr.ds, X86_BOOT_DS, 0x3, false);
	sr.es = sr.fs = sr.gs = sr.ss = sr.ds;
	sr.gdt.base = X86_GDT_ADDR;
	sr.gdt.limit = X86_GDT_ENTRIES * 8 - 1;
	sr.idt.base = GUEST_IDT;
	sr.idt.limit = 256 * 16 - 1;
	sr.cr3 = X86_PML4_ADDR;
	sr.cr4 |= CR4_PAE;
	sr.cr0 |= CR0_PE | CR0_PG;
	sr.efer |= EFER_LME | EFER_LMA;
	if (ioctl(v->fd, KVM_SET_SREGS, &sr) < 0)
		return fail("KVM_SET_SREGS");
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0)
		return fail("KVM_SET_REGS");
	/* an AP waits for INIT/SIPI with an in-kernel LAPIC: start it directly */
	if (v->id && ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0)
		return fail("KVM_SET_MP_STATE");
	return 0;
}

static void tvm_destroy(struct tvm *t)
{
	for (int i = 0; i < t->nr; i++) {
		munmap(t->v[i].run, t->v[i].run_size);
		close(t->v[i].fd);
	}
	if (t->ram && t->ram != MAP_FAILED)
		munmap(t->ram, GUEST_RAM_SIZE);
	if (t->fd > 0)
		close(t->fd);
}

/* KVM_RUN until an exit (a kick's EINTR ends it too when immediate_exit is set): the exit reason,
 * or -1. */
static int vrun(struct tvcpu *v)
{
	for (;;) {
		if (ioctl(v->fd, KVM_RUN, 0) == 0)
			return (int)v->run->exit_reason;
		if (errno != EINTR || v->run->immediate_exit)
			return fail("KVM_RUN");
	}
}

/* Runs to the guest's next report: 0 with the port's value, -1 on anything else, said. */
static int next_io(struct tvcpu *v, int port, uint32_t *val)
{
	int r = vrun(v);
	struct kvm_run *run = v->run;

	if (r < 0)
		return -1;
	if (r != KVM_EXIT_IO) {
		fprintf(stderr, "# vCPU %d: exit reason %d where the guest should report on port 0x%x\n", v->id, r,
			port);
		return -1;
	}
	uint32_t x = 0;

	memcpy(&x, (uint8_t *)run + run->io.data_offset, run->io.size < 4 ? run->io.size : 4);
	if (run->io.port == PORT_FAULT) {
		fprintf(stderr, "# vCPU %d: the guest took exception %u\n", v->id, x);
		return -1;
	}
	if (run->io.port != port) {
		fprintf(stderr, "# vCPU %d: the guest reported on port 0x%x (0x%x), expected 0x%x\n", v->id,
			run->io.port, x, port);
		return -1;
	}
	*val = x;
	return 0;
}

static bool has_cap(const struct host *h, long cap)
{
	return ioctl(h->kvm, KVM_CHECK_EXTENSION, cap) > 0;
}

static int set_msi_routes(struct tvm *t, const uint32_t *gsi, const uint32_t *data, int n)
{
	struct {
		struct kvm_irq_routing r;
		struct kvm_irq_routing_entry e[8];
	} rt = { .r = { .nr = (uint32_t)n } };

	for (int i = 0; i < n; i++)
		rt.e[i] = (struct kvm_irq_routing_entry){ .gsi = gsi[i], .type = KVM_IRQ_ROUTING_MSI,
							  .u.msi = { .address_lo = MSI_ADDR(0), .data = data[i] } };
	return ioctl(t->fd, KVM_SET_GSI_ROUTING, &rt) < 0 ? fail("KVM_SET_GSI_ROUTING") : 0;
}

static int irqfd(struct tvm *t, uint32_t gsi)
{
	int fd = eventfd(0, EFD_CLOEXEC);
	struct kvm_irqfd req = { .fd = (uint32_t)fd, .gsi = gsi };

	if (fd < 0 || ioctl(t->fd, KVM_IRQFD, &req) < 0)
		return fail("KVM_IRQFD");
	return fd;
}

static int fire(int efd)
{
	uint64_t one = 1;

	return write(efd, &one, 8) == 8 ? 0 : fail("eventfd write");
}

static int msr_get(struct tvcpu *v, uint32_t index, uint64_t *val)
{
	struct {
		struct kvm_msrs m;
		struct kvm_msr_entry e;
	} m = { .m = { .nmsrs = 1 }, .e = { .index = index } };
	int r = ioctl(v->fd, KVM_GET_MSRS, &m);

	*val = m.e.data;
	return r < 0 ? fail("KVM_GET_MSRS") : r; /* the number of MSRs read */
}

static int msr_set(struct tvcpu *v, uint32_t index, uint64_t val)
{
	struct {
		struct kvm_msrs m;
		struct kvm_msr_entry e;
	} m = { .m = { .nmsrs = 1 }, .e = { .index = index, .data = val } };
	int r = ioctl(v->fd, KVM_SET_MSRS, &m);

	return r < 0 ? fail("KVM_SET_MSRS") : r; /* the number of MSRs written */
}

/* The vCPU's binary stats, or a skip reason. */
static int vcpu_stats(const struct host *h, struct tvcpu *v, struct hp_stats *st, char *why, size_t len)
{
	if (!has_cap(h, KVM_CAP_BINARY_STATS_FD)) {
		snprintf(why, len, "%s has no KVM_CAP_BINARY_STATS_FD (Linux >= 5.14)", h->module);
		return -1;
	}
	int fd = ioctl(v->fd, KVM_GET_STATS_FD, NULL);

	if (fd < 0 || hp_stats_open(st, fd) < 0 || hp_stats_read(st) < 0) {
		snprintf(why, len, "the vCPU's stats fd cannot be read (%s)", strerror(errno));
		return -1;
	}
	return 0;
}

static uint64_t stat_of(struct hp_stats *st, const char *name)
{
	uint64_t x = 0;

	hp_stats_read(st);
	hp_stats_get(st, name, &x);
	return x;
}

/* Waits (up to WAIT_MS) until the vCPU has halted more than `before` times: it is then blocked in
 * KVM, where only an interrupt wakes it. */
static bool wait_halted(struct hp_stats *st, uint64_t before)
{
	for (int ms = 0; ms < WAIT_MS; ms += 2) {
		if (stat_of(st, "halt_exits") > before)
			return true;
		usleep(2000);
	}
	return false;
}

/* A vCPU run on its own thread to its next report; the caller waits with a deadline. */
struct runner {
	struct tvcpu *v;
	int port;
	uint32_t val;
	int rc;
	atomic_bool done;
	pthread_t thread;
};

static void *runner_main(void *arg)
{
	struct runner *r = arg;

	r->rc = next_io(r->v, r->port, &r->val);
	atomic_store(&r->done, true);
	return NULL;
}

static void kick_handler(int sig)
{
	(void)sig;
}

/* Joins the runner; if it has not finished within WAIT_MS it is kicked out of KVM_RUN and -1. */
static int runner_join(struct runner *r)
{
	struct sigaction sa = { .sa_handler = kick_handler };

	for (int ms = 0; ms < WAIT_MS && !atomic_load(&r->done); ms += 2)
		usleep(2000);
	if (!atomic_load(&r->done)) {
		sigaction(SIGUSR1, &sa, NULL); /* no SA_RESTART: KVM_RUN returns EINTR */
		__atomic_store_n(&r->v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
		pthread_kill(r->thread, SIGUSR1);
		pthread_join(r->thread, NULL);
		fprintf(stderr, "# vCPU %d: nothing on port 0x%x within %d ms\n", r->v->id, r->port, WAIT_MS);
		return -1;
	}
	pthread_join(r->thread, NULL);
	return r->rc;
}

/* ---- the cases ---- */

FIXTURE(kvm)
{
	struct host h;
	struct tvm t;
};

FIXTURE_SETUP(kvm)
{
	char why[320];

	self->t.fd = -1;
	if (host_open(&self->h, why, sizeof(why)) < 0)
		SKIP(return, "%s", why);
	TH_LOG("host: %s", self->h.what);
}

FIXTURE_TEARDOWN(kvm)
{
	tvm_destroy(&self->t);
	host_close(&self->h);
}

#define NEED_CAP(cap) do { \
	if (!has_cap(&self->h, cap)) \
		SKIP(return, "%s has no " #cap, self->h.module); \
} while (0)

/* KVM_CREATE_IRQCHIP: an MSI route with an irqfd delivers its vector to the guest's IDT, twice
 * (the first EOI reached the in-kernel LAPIC). */
TEST_F(kvm, in_kernel_irqchip_msi_irqfd)
{
	uint32_t gsi = 1, data = 0x41, v;
	int efd;

	NEED_CAP(KVM_CAP_IRQCHIP);
	NEED_CAP(KVM_CAP_IRQ_ROUTING);
	NEED_CAP(KVM_CAP_IRQFD);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IDLE));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	EXPECT_EQ(0, v); /* APIC ID 0 */
	ASSERT_EQ(0, set_msi_routes(&self->t, &gsi, &data, 1));
	ASSERT_LE(0, efd = irqfd(&self->t, gsi));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, fire(efd));
		ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
		EXPECT_EQ(0x41, v);
	}
	close(efd);
}

/* KVM_CAP_SPLIT_IRQCHIP: vectors of level-triggered MSI routes on IOAPIC pins (GSI < 24) are the
 * ones whose EOI KVM hands to userspace's IOAPIC as KVM_EXIT_IOAPIC_EOI; an edge vector's EOI
 * stays in the kernel. */
TEST_F(kvm, split_irqchip_level_eoi_exits)
{
	uint32_t gsi[2] = { 5, 6 }, data[2] = { 0x43 | MSI_DATA_LEVEL | MSI_DATA_ASSERT, 0x44 }, v;
	int lvl, edge, r;

	NEED_CAP(KVM_CAP_SPLIT_IRQCHIP);
	NEED_CAP(KVM_CAP_IRQ_ROUTING);
	NEED_CAP(KVM_CAP_IRQFD);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_SPLIT));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IDLE));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	ASSERT_EQ(0, set_msi_routes(&self->t, gsi, data, 2));
	ASSERT_LE(0, lvl = irqfd(&self->t, gsi[0]));
	ASSERT_LE(0, edge = irqfd(&self->t, gsi[1]));
	ASSERT_EQ(0, fire(edge));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x44, v);
	/* pending before the guest EOIs 0x44: the next exit is 0x43's report, not an EOI exit */
	ASSERT_EQ(0, fire(lvl));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x43, v);
	r = vrun(&self->t.v[0]);
	ASSERT_EQ(KVM_EXIT_IOAPIC_EOI, r);
	EXPECT_EQ(0x43, self->t.v[0].run->eoi.vector);
	close(lvl);
	close(edge);
}

/* KVM_SET_GSI_ROUTING with several MSI routes, each with an irqfd; a route rewritten while its
 * irqfd stays bound; KVM_SIGNAL_MSI straight to the LAPIC, and to an APIC ID nobody has. */
TEST_F(kvm, msi_routes_and_signal_msi)
{
	uint32_t gsi[2] = { 30, 31 }, data[2] = { 0x44, 0x45 }, v;
	struct kvm_msi msi = { .address_lo = MSI_ADDR(0), .data = 0x46 };
	int e30, e31;

	NEED_CAP(KVM_CAP_IRQCHIP);
	NEED_CAP(KVM_CAP_IRQ_ROUTING);
	NEED_CAP(KVM_CAP_IRQFD);
	NEED_CAP(KVM_CAP_SIGNAL_MSI);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IDLE));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	ASSERT_EQ(0, set_msi_routes(&self->t, gsi, data, 2));
	ASSERT_LE(0, e30 = irqfd(&self->t, 30));
	ASSERT_LE(0, e31 = irqfd(&self->t, 31));
	ASSERT_EQ(0, fire(e31));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x45, v);
	ASSERT_EQ(0, fire(e30));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x44, v);
	EXPECT_EQ(1, ioctl(self->t.fd, KVM_SIGNAL_MSI, &msi)); /* 1: delivered */
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x46, v);
	msi.address_lo = MSI_ADDR(7);
	EXPECT_EQ(0, ioctl(self->t.fd, KVM_SIGNAL_MSI, &msi)); /* 0: no such destination */
	data[0] = 0x47;
	ASSERT_EQ(0, set_msi_routes(&self->t, gsi, data, 2));
	ASSERT_EQ(0, fire(e30));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	EXPECT_EQ(0x47, v);
	close(e30);
	close(e31);
}

/* MSR_KVM_POLL_CONTROL with POLL_CONTROL in the guest's CPUID: reset value 1, the guest's writes
 * seen by KVM_GET_MSRS, the host's KVM_SET_MSRS seen by the guest, reserved bits refused. */
TEST_F(kvm, poll_control_msr)
{
	struct tvcpu *c;
	uint32_t v;
	uint64_t m = 0;

	if (!(self->h.pv_eax & (1u << KVM_FEATURE_POLL_CONTROL)))
		SKIP(return, "%s does not offer POLL_CONTROL (KVM_GET_SUPPORTED_CPUID 0x40000001 eax=0x%08x)",
		     self->h.module, self->h.pv_eax);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_POLL));
	c = &self->t.v[0];
	ASSERT_EQ(1, msr_get(c, MSR_KVM_POLL_CONTROL, &m));
	EXPECT_EQ(1, m); /* reset value: polling allowed */
	ASSERT_EQ(0, next_io(c, PORT_READY, &v));
	ASSERT_EQ(0, next_io(c, PORT_RESULT, &v));
	EXPECT_EQ(self->h.pv_eax, v); /* the guest's CPUID leaf is KVM's */
	EXPECT_NE(0, v & (1u << KVM_FEATURE_POLL_CONTROL));
	ASSERT_EQ(0, next_io(c, PORT_SYNC, &v)); /* the guest wrote 0 */
	ASSERT_EQ(1, msr_get(c, MSR_KVM_POLL_CONTROL, &m));
	EXPECT_EQ(0, m);
	ASSERT_EQ(0, next_io(c, PORT_SYNC, &v)); /* the guest wrote 1 */
	ASSERT_EQ(1, msr_get(c, MSR_KVM_POLL_CONTROL, &m));
	EXPECT_EQ(1, m);
	EXPECT_EQ(0, msr_set(c, MSR_KVM_POLL_CONTROL, 2)); /* bit 1 reserved: nothing written */
	ASSERT_EQ(1, msr_set(c, MSR_KVM_POLL_CONTROL, 0));
	ASSERT_EQ(0, next_io(c, PORT_RESULT, &v)); /* the guest's rdmsr */
	EXPECT_EQ(0, v);
}

/* KVM_HC_SEND_IPI from vCPU 0 wakes vCPU 1, halted in the kernel, with the vector it names. */
TEST_F_TIMEOUT(kvm, pv_send_ipi_wakes_halted_vcpu, 60)
{
	struct runner r = { .port = PORT_VECTOR };
	struct hp_stats st = { .fd = -1 };
	char why[320];
	uint32_t v;

	if (!(self->h.pv_eax & (1u << KVM_FEATURE_PV_SEND_IPI)))
		SKIP(return, "%s does not offer PV_SEND_IPI (KVM_GET_SUPPORTED_CPUID 0x40000001 eax=0x%08x)",
		     self->h.module, self->h.pv_eax);
	NEED_CAP(KVM_CAP_IRQCHIP);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IPI));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IDLE));
	if (vcpu_stats(&self->h, &self->t.v[1], &st, why, sizeof(why)) < 0)
		SKIP(return, "cannot tell when vCPU 1 halts: %s", why);
	ASSERT_EQ(0, next_io(&self->t.v[1], PORT_READY, &v));
	EXPECT_EQ(1, v);
	uint64_t halts = stat_of(&st, "halt_exits");

	r.v = &self->t.v[1];
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, runner_main, &r));
	EXPECT_TRUE(wait_halted(&st, halts));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_SYNC, &v));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_RESULT, &v));
	EXPECT_EQ(1, v); /* the hypercall reached one vCPU */
	ASSERT_EQ(0, runner_join(&r));
	EXPECT_EQ(IPI_VECTOR, r.val);
	hp_stats_close(&st);
}

/* An interrupt waking a vCPU halted in the kernel moves its binary stats halt_exits and
 * halt_wakeup (halt_poll/kvm_stats.c reads them), and the time it waited. */
struct firer {
	struct hp_stats *st;
	uint64_t halts;
	int efd;
	bool halted;
};

static void *firer_main(void *arg)
{
	struct firer *f = arg;

	f->halted = wait_halted(f->st, f->halts);
	fire(f->efd);
	return NULL;
}

TEST_F_TIMEOUT(kvm, halt_stats_move, 60)
{
	uint32_t gsi = 1, data = 0x41, v;
	struct hp_stats st = { .fd = -1 };
	struct firer f;
	pthread_t th;
	char why[320];
	uint64_t wake0, wait0, x;

	NEED_CAP(KVM_CAP_IRQCHIP);
	NEED_CAP(KVM_CAP_IRQ_ROUTING);
	NEED_CAP(KVM_CAP_IRQFD);
	ASSERT_EQ(0, tvm_create(&self->t, &self->h, IRQCHIP_KERNEL));
	ASSERT_EQ(0, tvcpu_add(&self->t, &self->h, MODE_IDLE));
	if (vcpu_stats(&self->h, &self->t.v[0], &st, why, sizeof(why)) < 0)
		SKIP(return, "%s", why);
	if (hp_stats_get(&st, "halt_exits", &x) < 0 || hp_stats_get(&st, "halt_wakeup", &x) < 0)
		SKIP(return, "%s's vCPU stats lack halt_exits or halt_wakeup", self->h.module);
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_READY, &v));
	ASSERT_EQ(0, set_msi_routes(&self->t, &gsi, &data, 1));
	f = (struct firer){ .st = &st, .halts = stat_of(&st, "halt_exits"), .efd = irqfd(&self->t, gsi) };
	ASSERT_LE(0, f.efd);
	wake0 = stat_of(&st, "halt_wakeup");
	wait0 = stat_of(&st, "halt_wait_ns");
	ASSERT_EQ(0, pthread_create(&th, NULL, firer_main, &f));
	ASSERT_EQ(0, next_io(&self->t.v[0], PORT_VECTOR, &v));
	pthread_join(th, NULL);
	EXPECT_EQ(0x41, v);
	EXPECT_TRUE(f.halted);
	TH_LOG("halt_exits %llu -> %llu, halt_wakeup %llu -> %llu, halt_wait_ns +%llu",
	       (unsigned long long)f.halts, (unsigned long long)stat_of(&st, "halt_exits"),
	       (unsigned long long)wake0, (unsigned long long)stat_of(&st, "halt_wakeup"),
	       (unsigned long long)(stat_of(&st, "halt_wait_ns") - wait0));
	EXPECT_LT(f.halts, stat_of(&st, "halt_exits"));
	EXPECT_LT(wake0, stat_of(&st, "halt_wakeup"));
	close(f.efd);
	hp_stats_close(&st);
}

TEST_HARNESS_MAIN
