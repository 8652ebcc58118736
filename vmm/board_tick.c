// SPDX-License-Identifier: MIT
/*
 * The main thread's tick while the guest runs (board.h): start-up's end for a guest that prints no
 * marker (its first quiet second, boot_quiet.h; a vCPU whose idle stays on the CPU judged by exits
 * and kicks alone), and with VFIO devices the per-vector vLPI report, the host's counts of their
 * IRQs and the halt governor's vLPI window.
 */
#include <stdint.h>
#include <time.h>

#include "core/host_mem.h"
#include "core/hot.h"
#include "core/vcpu.h"
#include "vfio/vfio.h"
#include "virtio/virtio.h"
#include "vmm/board.h"
#include "vmm/boot_quiet.h"

static double board_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

#define HOST_IRQS_EVERY_S 1.0 /* /proc/interrupts is a few KiB of text: once a second */
/* The tick's period while start-up's end is watched (its quiet second ends within 200 ms), and
 * while VFIO vectors are (a vector's report follows a second of settled vectors). */
#define BOARD_QUIET_TICK_MS 200
#define BOARD_VFIO_TICK_MS 100

/* What the guest made vmm do so far: exits to vmm, writes KVM queued, queue kicks. Only ever grows;
 * read racily, which a quiet watch tolerates (a count seen late only delays the verdict). */
VMM_HOT_IDLE static uint64_t board_activity(struct board *b)
{
	uint64_t n = atomic_load(&b->vm.coalesced.entries);

	for (int i = 0; i < b->vm.nr_vcpus; i++) {
		struct vcpu_exits *e = &b->vm.vcpus[i]->exits;

		n += atomic_load(&e->mmio) + atomic_load(&e->mmio_unclaimed) + atomic_load(&e->pio) +
		     atomic_load(&e->ioapic_eoi) + atomic_load(&e->other);
	}
	for (int i = 0; i < b->nr_vdev; i++)
		n += atomic_load(&b->vdev[i]->stats.notifies);
	return n;
}

/* Main thread: once, start-up's memory given back (the guest's steady state faults back in what
 * it uses); why: what ended start-up, in the exit summary's words. */
VMM_HOT_IDLE void board_release(struct board *b, const char *why)
{
	if (b->released)
		return;
	b->released = true;
	b->release_why = why;
	host_mem_release_startup();
	boot_times_mark(&b->times, PHASE_RELEASED);
}

/* The main thread's tick: start-up's end for a guest that printed no marker (its first quiet
 * spell); with VFIO devices the per-vector vLPI report, once the guest's vectors are settled; the
 * host's counts of the VFIO vectors' IRQs; the halt governor's vLPI window. */
VMM_HOT_IDLE int board_tick(void *opaque)
{
	struct board *b = opaque;
	uint64_t start = atomic_load(&b->vm.first_run_ns);

	if (!b->released && start) { /* the vCPUs' CPU time is read from /proc: not before they run */
		struct timespec t;
		uint64_t cpu = 0;

		int exits_only = 0;

		clock_gettime(CLOCK_MONOTONIC, &t);
		for (int i = 0; i < b->vm.nr_vcpus && cpu != BOOT_QUIET_CPU_UNKNOWN; i++) {
			/* the vLPIs as the window saw them open (this thread's own call, below) */
			int vlpis = b->vlpi_live && b->stats.win_vlpis ? b->stats.win_vlpis[i] : -1;

			if (!boot_quiet_cpu_tells(b->spec.no_hlt_exit, b->machine.arch->vcpu_vlpis, b->wfi_policy,
						  vlpis)) {
				exits_only++; /* idle on the CPU: its time says nothing */
				continue;
			}
			int64_t ns = vcpu_cpu_ns(b->vm.vcpus[i]);

			cpu = ns < 0 ? BOOT_QUIET_CPU_UNKNOWN : cpu + (uint64_t)ns; /* a thread not yet started */
		}
		if (exits_only > b->quiet.exits_only)
			b->quiet.exits_only = exits_only;
		enum boot_quiet_why why = boot_quiet_step(&b->quiet, board_activity(b), cpu,
							  (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec, start);

		if (why != BOOT_QUIET_NOT_YET)
			board_release(b, why == BOOT_QUIET_QUIET ? "first quiet second" : "30 s deadline");
	}
	if (!b->nr_vfio) /* nothing more to watch: the main thread sleeps until the VM stops */
		return b->released ? -1 : BOARD_QUIET_TICK_MS;

	unsigned int live = board_vfio_live(b), reports = 0;
	double now = board_now();

	pthread_mutex_lock(&b->irq_lock);
	for (int i = 0; i < b->nr_vfio; i++) {
		vfio_pci_report_tick(b->vfio[i], live, now);
		reports += b->vfio[i]->report_live == live && live;
	}
	if (now - b->host_irqs_at >= HOST_IRQS_EVERY_S) {
		vfio_pci_host_sample_all(b->vfio, b->nr_vfio, NULL);
		b->host_irqs_at = now;
	}
	pthread_mutex_unlock(&b->irq_lock);
	/* outside irq_lock: the stats' lock is taken before it at exit */
	if (!b->stats_open)
		return BOARD_VFIO_TICK_MS;
	if (!b->vlpi_live && reports && live != b->vlpi_tried) { /* a report with these vectors live */
		b->vlpi_tried = live;
		hp_run_vlpi_window_start(&b->stats);
		if (b->stats.have_win_from)
			b->vlpi_live = live;
	} else if (b->vlpi_live && live < b->vlpi_live) {
		hp_run_vlpi_window_end(&b->stats);
	}
	return BOARD_VFIO_TICK_MS;
}
