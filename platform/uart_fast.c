// SPDX-License-Identifier: MIT
/*
 * The 16550's exact mode (uart.h): the register page the guest reads through a read-only memslot,
 * THR's coalesced MMIO zone, and entering and leaving the mode. Called from uart.c with the lock
 * held; a failure to set the mode up leaves the UART trapping, as it was, for good.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/log.h"
#include "core/mem.h"
#include "core/mmio_ring.h"
#include "platform/uart.h"
#include "core/vm.h"

int uart_fast_init(struct uart *u, struct vm *vm, uint64_t gpa, size_t size, const char *why,
		   void (*publish)(const void *p, size_t len))
{
	struct uart_fast *f = &u->fast;
	long page = sysconf(_SC_PAGESIZE);

	f->publish = publish;
	f->slot = f->zone = -1;
	f->enter_after = UART_FAST_ENTER_AFTER;
	f->why = why;
	if (!why && !vm->coalesced.ring)
		f->why = "KVM has no coalesced MMIO ring (KVM_CAP_COALESCED_MMIO)";
	else if (!why && (page <= 0 || size != (size_t)page || gpa % size))
		f->why = "its register window is not one host page (a memslot's unit)";
	if (f->why)
		return 0;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		int err = errno;

		pr_err("uart: cannot map its register page: %s", strerror(err));
		f->why = "no memory for its register page";
		return -err;
	}
	int zone = mmio_ring_bind(&vm->coalesced, gpa, 1, uart_ring_write, u);

	if (zone < 0) {
		munmap(p, size);
		f->why = "no room for its zone in the coalesced MMIO ring";
		return 0;
	}
	pthread_mutex_lock(&u->lock);
	f->vm = vm;
	f->gpa = gpa;
	f->page = p;
	f->page_size = size;
	f->zone = zone;
	uart_fast_sync(u, false); /* the page's first contents */
	pthread_mutex_unlock(&u->lock);
	return 0;
}

void uart_destroy(struct uart *u)
{
	if (u->fast.page)
		munmap(u->fast.page, u->fast.page_size);
	u->fast.page = NULL;
	u->fast.on = false;
}

/* vmm writes the page through its own cacheable mapping, the guest reads it through a Device
 * mapping (arm64): the architecture's publish_to_guest makes the registers reach it. */
static void page_fill(struct uart *u)
{
	for (uint64_t off = 0; off < UART_NR_REGS; off++)
		__atomic_store_n(&u->fast.page[off], uart_peek(u, off), __ATOMIC_RELAXED);
	if (u->fast.publish)
		u->fast.publish(u->fast.page, UART_NR_REGS);
}

static void fast_enter(struct uart *u)
{
	struct uart_fast *f = &u->fast;
	int slot = vm_mmio_map_ro(f->vm, f->gpa, f->page_size, f->page);

	if (slot < 0) {
		f->why = "KVM refused the read-only memslot (KVM_MEM_READONLY)";
		return;
	}
	int r = mmio_ring_switch(&f->vm->coalesced, f->zone, true);

	if (r < 0) {
		vm_mmio_unmap(f->vm, slot);
		f->why = "KVM refused the coalesced MMIO zone (KVM_REGISTER_COALESCED_MMIO)";
		return;
	}
	f->slot = slot;
	f->on = true;
	f->enters++;
}

/* THR writes exit first, then reads: once this returns, every access traps again. */
static void fast_leave(struct uart *u, enum uart_leave why)
{
	struct uart_fast *f = &u->fast;

	if (mmio_ring_switch(&f->vm->coalesced, f->zone, false) < 0)
		/* its bytes still arrive in order through the ring, only later: no harm to the state */
		f->why = "KVM could not unregister the coalesced MMIO zone";
	vm_mmio_unmap(f->vm, f->slot);
	f->slot = -1;
	f->on = false;
	f->exact_thr = 0;
	f->leaves[why]++;
}

void uart_fast_sync(struct uart *u, bool thr_exit)
{
	struct uart_fast *f = &u->fast;

	if (!f->page)
		return;
	enum uart_leave why;
	bool exact = uart_exact(u, &why);

	if (f->on && !exact)
		fast_leave(u, why);
	page_fill(u); /* kept up to date in either mode, so entering needs no catching up */
	if (!exact) {
		f->exact_thr = 0;
		return;
	}
	if (!f->on && !f->why && thr_exit && ++f->exact_thr >= f->enter_after)
		fast_enter(u);
}

void uart_summary(struct uart *u, FILE *out)
{
	struct uart_fast *f = &u->fast;

	pthread_mutex_lock(&u->lock);
	if (!f->page && f->why) {
		fprintf(out, "vmm: uart: exact mode unavailable: %s; every register access exits\n", f->why);
	} else {
		fprintf(out, "vmm: uart: exact mode entered %llu times, left for input %llu, THR interrupt "
			"%llu, loopback %llu, divisor latch %llu; THR bytes: %llu through the coalesced ring, "
			"%llu by exit in the mode (ring full), %llu by exit outside it%s%s\n",
			(unsigned long long)f->enters, (unsigned long long)f->leaves[UART_LEAVE_INPUT],
			(unsigned long long)f->leaves[UART_LEAVE_THRI],
			(unsigned long long)f->leaves[UART_LEAVE_LOOP],
			(unsigned long long)f->leaves[UART_LEAVE_DLAB], (unsigned long long)f->thr_ring,
			(unsigned long long)f->thr_exit_on, (unsigned long long)f->thr_exit_off,
			f->why ? "; then off: " : "", f->why ? f->why : "");
	}
	pthread_mutex_unlock(&u->lock);
}
