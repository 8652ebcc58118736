// SPDX-License-Identifier: MIT
/*
 * The MMIO/PIO bus: devices claim address ranges before any vCPU runs, so lookups from vCPU threads
 * need no lock. The table stays sorted for a binary search on the exit path.
 */
#include <errno.h>
#include <string.h>

#include "vmm/vmm.h"

int bus_register(struct bus *bus, uint64_t base, uint64_t size, bus_fn fn, void *opaque,
		 const char *name)
{
	if (!size || base + size < base) {
		pr_err("bus: device %s has an empty or wrapping range 0x%llx+0x%llx", name,
		       (unsigned long long)base, (unsigned long long)size);
		return -EINVAL;
	}
	if (bus->nr == BUS_MAX_DEVS) {
		pr_err("bus: no room for device %s (%d devices already)", name, BUS_MAX_DEVS);
		return -ENOSPC;
	}
	int pos = 0;

	while (pos < bus->nr && bus->devs[pos].base < base)
		pos++;
	const struct bus_dev *prev = pos ? &bus->devs[pos - 1] : NULL;
	const struct bus_dev *next = pos < bus->nr ? &bus->devs[pos] : NULL;

	if ((prev && prev->base + prev->size > base) || (next && base + size > next->base)) {
		const struct bus_dev *o = (prev && prev->base + prev->size > base) ? prev : next;

		pr_err("bus: device %s at 0x%llx+0x%llx overlaps %s at 0x%llx+0x%llx", name,
		       (unsigned long long)base, (unsigned long long)size, o->name,
		       (unsigned long long)o->base, (unsigned long long)o->size);
		return -EBUSY;
	}
	memmove(&bus->devs[pos + 1], &bus->devs[pos], (bus->nr - pos) * sizeof(bus->devs[0]));
	bus->devs[pos] = (struct bus_dev){ base, size, fn, opaque, name };
	bus->nr++;
	return 0;
}

const struct bus_dev *bus_find(const struct bus *bus, uint64_t addr, uint32_t len)
{
	int lo = 0, hi = bus->nr - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		const struct bus_dev *d = &bus->devs[mid];

		if (addr < d->base)
			hi = mid - 1;
		else if (addr - d->base >= d->size)
			lo = mid + 1;
		else /* the whole access must fall inside the one device */
			return (len <= d->size - (addr - d->base)) ? d : NULL;
	}
	return NULL;
}

bool bus_access(const struct bus *bus, uint64_t addr, uint8_t *data, uint32_t len, bool is_write)
{
	const struct bus_dev *d = bus_find(bus, addr, len);

	if (!d) {
		if (!is_write)
			memset(data, 0, len);
		return false;
	}
	d->fn(d->opaque, addr - d->base, data, len, is_write);
	return true;
}
