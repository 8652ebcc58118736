// SPDX-License-Identifier: MIT
/*
 * Guest RAM mapped for the device's DMA, the same for either backend: at IOVA = guest physical
 * address, now and whenever RAM is added (a mem_listener), each region checked against the IOVA
 * ranges the IOMMU can map before the backend's map call (struct vfio_backend_ops' dma_map), and
 * counted once mapped.
 */
#include <errno.h>
#include <string.h>

#include "core/hot.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/vm.h"

VMM_HOT_VF int vfio_iova_check(const struct vfio_valid_range *valid, int nr, uint64_t gpa, uint64_t size)
{
	uint64_t last = gpa + size - 1;

	if (nr == 0)
		return 0; /* the kernel reported no ranges: everything is usable */
	for (int i = 0; i < nr; i++)
		if (gpa >= valid[i].start && last <= valid[i].end)
			return 0;
	for (int i = 0; i < nr; i++) {
		uint64_t hole_start = i ? valid[i - 1].end + 1 : 0, hole_end = valid[i].start - 1;

		if (valid[i].start && gpa <= hole_end && last >= hole_start) {
			pr_err("vfio: guest RAM 0x%llx-0x%llx overlaps the IOMMU's reserved IOVA range "
			       "0x%llx-0x%llx (DMA there cannot be mapped): move or shrink guest RAM (-m)",
			       (unsigned long long)gpa, (unsigned long long)last,
			       (unsigned long long)hole_start, (unsigned long long)hole_end);
			return -EINVAL;
		}
	}
	pr_err("vfio: guest RAM 0x%llx-0x%llx lies outside every IOVA range the IOMMU can map "
	       "(the last ends at 0x%llx): use less RAM (-m)", (unsigned long long)gpa,
	       (unsigned long long)last, (unsigned long long)valid[nr - 1].end);
	return -EINVAL;
}

/* The message on ENOMEM names the locked-memory limit, what refuses it most often. */
VMM_HOT_VF static int dma_error(const char *what, uint64_t gpa, uint64_t size, int e)
{
	pr_err("vfio: %s of guest RAM 0x%llx+%llu MiB failed: %s%s", what,
	       (unsigned long long)gpa, (unsigned long long)(size >> 20), strerror(e),
	       e == ENOMEM ? " (the locked-memory limit is too low: raise ulimit -l, or run as root)" : "");
	return -e;
}

VMM_HOT_VF static int dma_map(void *opaque, const struct mem_region *r)
{
	struct vfio_container *c = opaque;
	int e = vfio_iova_check(c->valid, c->nr_valid, r->gpa, r->size);

	if (e < 0)
		return e;
	if (c->ops->dma_map(c, r) < 0)
		return dma_error(c->ops->dma_map_name, r->gpa, r->size, errno);
	c->dma_bytes += r->size;
	return 0;
}

VMM_HOT_VF int vfio_dma_listen(struct vfio_container *c)
{
	c->listener = (struct mem_listener){ dma_map, c };
	return vm_mem_listen(c->vm, &c->listener);
}
