// SPDX-License-Identifier: MIT
/*
 * The MMIO/PIO bus. The table stays sorted for a binary search on the exit path; a read-write lock
 * lets BARs move while vCPUs run. Handlers run without the lock, on a copy of their entry.
 */
#include <errno.h>
#include <string.h>

#include "core/hot.h"
#include "core/log.h"
#include "core/bus.h"

void bus_init(struct bus *bus)
{
	memset(bus, 0, sizeof(*bus));
	pthread_rwlock_init(&bus->lock, NULL);
}

static int bus_insert(struct bus *bus, uint64_t base, uint64_t size, bus_fn fn, void *opaque,
		      const char *name, bool quiet)
{
	int r = 0;

	if (!size || base + size < base) {
		if (!quiet)
			pr_err("bus: device %s has an empty or wrapping range 0x%llx+0x%llx", name,
		       (unsigned long long)base, (unsigned long long)size);
		return -EINVAL;
	}
	pthread_rwlock_wrlock(&bus->lock);
	if (bus->nr == BUS_MAX_DEVS) {
		if (!quiet)
			pr_err("bus: no room for device %s (%d devices already)", name, BUS_MAX_DEVS);
		r = -ENOSPC;
		goto out;
	}
	int pos = 0;

	while (pos < bus->nr && bus->devs[pos].base < base)
		pos++;
	const struct bus_dev *prev = pos ? &bus->devs[pos - 1] : NULL;
	const struct bus_dev *next = pos < bus->nr ? &bus->devs[pos] : NULL;

	if ((prev && prev->base + prev->size > base) || (next && base + size > next->base)) {
		const struct bus_dev *o = (prev && prev->base + prev->size > base) ? prev : next;

		if (!quiet)
			pr_err("bus: device %s at 0x%llx+0x%llx overlaps %s at 0x%llx+0x%llx", name,
		       (unsigned long long)base, (unsigned long long)size, o->name,
		       (unsigned long long)o->base, (unsigned long long)o->size);
		r = -EBUSY;
		goto out;
	}
	memmove(&bus->devs[pos + 1], &bus->devs[pos], (bus->nr - pos) * sizeof(bus->devs[0]));
	bus->devs[pos] = (struct bus_dev){ base, size, fn, opaque, name };
	bus->nr++;
out:
	pthread_rwlock_unlock(&bus->lock);
	return r;
}

int bus_register(struct bus *bus, uint64_t base, uint64_t size, bus_fn fn, void *opaque,
		 const char *name)
{
	return bus_insert(bus, base, size, fn, opaque, name, false);
}

int bus_try_register(struct bus *bus, uint64_t base, uint64_t size, bus_fn fn, void *opaque,
		     const char *name)
{
	return bus_insert(bus, base, size, fn, opaque, name, true);
}

int bus_unregister(struct bus *bus, uint64_t base, void *opaque)
{
	int r = -ENOENT;

	pthread_rwlock_wrlock(&bus->lock);
	for (int i = 0; i < bus->nr; i++) {
		if (bus->devs[i].base == base && bus->devs[i].opaque == opaque) {
			memmove(&bus->devs[i], &bus->devs[i + 1], (bus->nr - i - 1) * sizeof(bus->devs[0]));
			bus->nr--;
			r = 0;
			break;
		}
	}
	pthread_rwlock_unlock(&bus->lock);
	return r;
}

/* Called with the lock held. */
VMM_HOT_IDLE static const struct bus_dev *bus_lookup(const struct bus *bus, uint64_t addr, uint32_t len)
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

VMM_HOT_IDLE bool bus_find(struct bus *bus, uint64_t addr, uint32_t len, struct bus_dev *out)
{
	pthread_rwlock_rdlock(&bus->lock);
	const struct bus_dev *d = bus_lookup(bus, addr, len);

	if (d)
		*out = *d;
	pthread_rwlock_unlock(&bus->lock);
	return d != NULL;
}

VMM_HOT_IDLE bool bus_access(struct bus *bus, uint64_t addr, uint8_t *data, uint32_t len, bool is_write)
{
	struct bus_dev d;

	if (!bus_find(bus, addr, len, &d)) {
		if (!is_write)
			memset(data, 0, len);
		return false;
	}
	d.fn(d.opaque, addr - d.base, data, len, is_write);
	return true;
}
