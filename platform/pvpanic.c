// SPDX-License-Identifier: MIT
/*
 * pvpanic on MMIO (QEMU's "qemu,pvpanic-mmio", Linux's pvpanic-mmio driver): one byte register.
 * Reads give the events vmm understands; a guest write of PVPANIC_PANICKED is a crash report that
 * does not depend on what the console shows. CRASH_LOADED means a crash kernel takes over: the
 * guest runs on, so it is only noted.
 */
#include <misc/pvpanic.h>
#include <string.h>

#include "core/hot.h"
#include "platform/pvpanic.h"
#include "core/vm.h"

void pvpanic_init(struct pvpanic *p, struct vm *vm)
{
	memset(p, 0, sizeof(*p));
	p->vm = vm;
}

VMM_HOT void pvpanic_mmio(void *opaque, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct pvpanic *p = opaque;

	if (!is_write) {
		memset(data, 0, len);
		if (off == 0)
			data[0] = PVPANIC_PANICKED | PVPANIC_CRASH_LOADED;
		return;
	}
	if (off != 0)
		return;
	atomic_fetch_or(&p->events, data[0]);
	if (data[0] & PVPANIC_PANICKED) {
		atomic_store(&p->vm->pvpanicked, true);
		atomic_store(&p->vm->guest_panicked, true);
		vm_request_stop(p->vm, VM_EXIT_CRASH);
	}
}
