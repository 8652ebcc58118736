// SPDX-License-Identifier: MIT
/*
 * kvm_x86_test's tiny-guest harness (tvm.h): the host's x86 KVM, a VM running guest.S, and the
 * KVM calls the cases make. Errors are said on stderr in kselftest's "# " comment form.
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
#include "tests/kvm/x86/guest.h"
#include "x86/x86.h"
#include "tests/kvm/x86/tvm.h"

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

static void kick_handler(int sig)
{
	(void)sig;
}

int host_open(struct host *h, char *why, size_t len)
{
	unsigned int a, b, c, d;
	char vendor[13] = "";
	struct kvm_cpuid_entry2 *e;
	/* no SA_RESTART: a kick or vrun's deadline timer makes KVM_RUN return EINTR */
	struct sigaction sa = { .sa_handler = kick_handler };

	sigaction(SIGUSR1, &sa, NULL);
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

void host_close(struct host *h)
{
	if (h->kvm >= 0)
		close(h->kvm);
	free(h->cpuid);
}


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

int tvm_create(struct tvm *t, const struct host *h, enum irqchip chip)
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
	/* The guest uses its vendor's hypercall instruction, which needs no emulation. Any other one
	 * is emulated, and with this quirk KVM rewrites it in guest memory to the one it calls native
	 * and re-executes it: a host that runs neither (kvm_pvm, where both are #UD) would loop in
	 * KVM_RUN forever. Without the quirk the guest takes #UD and says so (PORT_FAULT). */
	int quirks = ioctl(h->kvm, KVM_CHECK_EXTENSION, KVM_CAP_DISABLE_QUIRKS2);

	if (quirks > 0 && (quirks & KVM_X86_QUIRK_FIX_HYPERCALL_INSN)) {
		struct kvm_enable_cap cap = { .cap = KVM_CAP_DISABLE_QUIRKS2,
					      .args = { KVM_X86_QUIRK_FIX_HYPERCALL_INSN } };

		if (ioctl(t->fd, KVM_ENABLE_CAP, &cap) < 0)
			return fail("KVM_ENABLE_CAP(KVM_CAP_DISABLE_QUIRKS2, FIX_HYPERCALL_INSN)");
	}
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

int tvcpu_add(struct tvm *t, const struct host *h, int mode)
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
	v->ram = t->ram;
	v->wait_ms = WAIT_MS;
	v->fault = -1;
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

void tvm_destroy(struct tvm *t)
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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Where a vCPU that did not come back is: RIP and the bytes there (the guest runs on an identity
 * map of its RAM), so the failure says which instruction it was stuck on. */
static void say_stuck(struct tvcpu *v, const char *what)
{
	struct kvm_regs regs;
	char bytes[3 * 8 + 1] = "";

	if (ioctl(v->fd, KVM_GET_REGS, &regs) < 0) {
		fprintf(stderr, "# vCPU %d: no exit within %d ms while waiting for %s\n", v->id, v->wait_ms, what);
		return;
	}
	for (int i = 0; i < 8 && regs.rip + i < GUEST_RAM_SIZE; i++)
		snprintf(bytes + 3 * i, sizeof(bytes) - 3 * i, " %02x", v->ram[regs.rip + i]);
	fprintf(stderr, "# vCPU %d: no exit within %d ms while waiting for %s; it is at RIP 0x%llx (bytes%s), "
		"RAX 0x%llx\n", v->id, v->wait_ms, what, (unsigned long long)regs.rip, bytes,
		(unsigned long long)regs.rax);
}

/* KVM_RUN bounded by v->wait_ms: a per-thread timer signals this thread at the deadline, then
 * every 50 ms (a signal that lands just before KVM_RUN is entered is then not lost). */
static int vrun_for(struct tvcpu *v, const char *what)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1 };
	struct itimerspec its = { .it_value = { v->wait_ms / 1000, (v->wait_ms % 1000) * 1000000L },
				  .it_interval = { 0, 50 * 1000000L } };
	uint64_t deadline = now_ms() + (uint64_t)v->wait_ms;
	timer_t tm;
	int r;

	sev._sigev_un._tid = gettid(); /* glibc < 2.35 has no sigev_notify_thread_id */
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm) < 0)
		return fail("timer_create for KVM_RUN's deadline");
	if (timer_settime(tm, 0, &its, NULL) < 0) {
		timer_delete(tm);
		return fail("timer_settime for KVM_RUN's deadline");
	}
	for (;;) {
		if (ioctl(v->fd, KVM_RUN, 0) == 0) {
			r = (int)v->run->exit_reason;
			break;
		}
		if (errno == EINTR && v->run->immediate_exit) { /* runner_stop/runner_join's kick */
			fprintf(stderr, "# vCPU %d: kicked out of KVM_RUN while waiting for %s\n", v->id, what);
			r = -1;
			break;
		}
		if (errno != EINTR) {
			r = fail("KVM_RUN");
			break;
		}
		if (now_ms() >= deadline) {
			say_stuck(v, what);
			r = -1;
			break;
		}
	}
	timer_delete(tm);
	return r;
}

int vrun(struct tvcpu *v)
{
	return vrun_for(v, "an exit");
}

int next_io(struct tvcpu *v, int port, uint32_t *val)
{
	char what[64];

	snprintf(what, sizeof(what), "the guest's report on port 0x%x", port);
	int r = vrun_for(v, what);
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
		v->fault = (int)x;
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

bool has_cap(const struct host *h, long cap)
{
	return ioctl(h->kvm, KVM_CHECK_EXTENSION, cap) > 0;
}

int set_msi_routes(struct tvm *t, const uint32_t *gsi, const uint32_t *data, int n)
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

int irqfd(struct tvm *t, uint32_t gsi)
{
	int fd = eventfd(0, EFD_CLOEXEC);
	struct kvm_irqfd req = { .fd = (uint32_t)fd, .gsi = gsi };

	if (fd < 0 || ioctl(t->fd, KVM_IRQFD, &req) < 0)
		return fail("KVM_IRQFD");
	return fd;
}

int fire(int efd)
{
	uint64_t one = 1;

	return write(efd, &one, 8) == 8 ? 0 : fail("eventfd write");
}

int msr_get(struct tvcpu *v, uint32_t index, uint64_t *val)
{
	struct {
		struct kvm_msrs m;
		struct kvm_msr_entry e;
	} m = { .m = { .nmsrs = 1 }, .e = { .index = index } };
	int r = ioctl(v->fd, KVM_GET_MSRS, &m);

	*val = m.e.data;
	return r < 0 ? fail("KVM_GET_MSRS") : r; /* the number of MSRs read */
}

int msr_set(struct tvcpu *v, uint32_t index, uint64_t val)
{
	struct {
		struct kvm_msrs m;
		struct kvm_msr_entry e;
	} m = { .m = { .nmsrs = 1 }, .e = { .index = index, .data = val } };
	int r = ioctl(v->fd, KVM_SET_MSRS, &m);

	return r < 0 ? fail("KVM_SET_MSRS") : r; /* the number of MSRs written */
}

int vcpu_stats(const struct host *h, struct tvcpu *v, struct hp_stats *st, char *why, size_t len)
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

uint64_t stat_of(struct hp_stats *st, const char *name)
{
	uint64_t x = 0;

	hp_stats_read(st);
	hp_stats_get(st, name, &x);
	return x;
}

bool wait_halted(struct hp_stats *st, uint64_t before)
{
	for (int ms = 0; ms < WAIT_MS; ms += 2) {
		if (stat_of(st, "halt_exits") > before)
			return true;
		usleep(2000);
	}
	return false;
}


void *runner_main(void *arg)
{
	struct runner *r = arg;

	r->rc = next_io(r->v, r->port, &r->val);
	atomic_store(&r->done, true);
	return NULL;
}

static void runner_kick(struct runner *r)
{
	__atomic_store_n(&r->v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	pthread_kill(r->thread, SIGUSR1); /* host_open's handler: KVM_RUN returns EINTR */
	pthread_join(r->thread, NULL);
}

void runner_stop(struct runner *r)
{
	if (!atomic_load(&r->done))
		runner_kick(r);
	else
		pthread_join(r->thread, NULL);
}

int runner_join(struct runner *r)
{
	for (int ms = 0; ms < WAIT_MS && !atomic_load(&r->done); ms += 2)
		usleep(2000);
	if (!atomic_load(&r->done)) {
		runner_kick(r);
		fprintf(stderr, "# vCPU %d: nothing on port 0x%x within %d ms\n", r->v->id, r->port, WAIT_MS);
		return -1;
	}
	pthread_join(r->thread, NULL);
	return r->rc;
}
