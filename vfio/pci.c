// SPDX-License-Identifier: MIT
/*
 * A passed-through PCI function: its VFIO regions, its BARs mapped into the guest (memslots over
 * the region's mmap, except the MSI-X table and PBA pages and anything VFIO will not let us map,
 * which stay trapped), and a virtualized config space. The guest sees an emulated copy of the
 * device's config space: identity and class from the device, BARs placed by vmm, a capability list
 * of MSI-X, MSI and PCI Express only (others and every extended capability hidden), no expansion
 * ROM. Guest writes reach the device only for the command register's memory, bus-master and
 * INTx-disable bits; everything else a guest writes stays in the copy (vfio/config.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/hot.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"
#include "core/host_mem.h"
#include "core/log.h"
#include "core/vm.h"

VMM_HOT_VF ssize_t vfio_region_rw(struct vfio_pci *v, const struct vfio_region_info *r, uint64_t off, void *buf,
		       size_t len, bool write)
{
	if (off >= r->size || len > r->size - off)
		return -EINVAL;
	ssize_t n = write ? pwrite(v->fd, buf, len, r->offset + off) : pread(v->fd, buf, len, r->offset + off);

	return n < 0 ? -errno : n;
}

VMM_HOT_VF static int region_info(struct vfio_pci *v, uint32_t index, struct vfio_region_info *out)
{
	memset(out, 0, sizeof(*out));
	out->argsz = sizeof(*out);
	out->index = index;
	if (vioctl(v->c, v->fd, VFIO_DEVICE_GET_REGION_INFO, out) < 0) {
		int e = errno;

		pr_err("vfio %s: VFIO_DEVICE_GET_REGION_INFO(%u): %s", v->bdf, index, strerror(e));
		return -e;
	}
	return 0;
}

/* The sparse-mmap areas of a region when VFIO restricts what may be mapped (Linux >= 4.7): every
 * one the kernel reports, in *out (the caller frees it). -1: no restriction (or no answer: the
 * region's MMAP flag decides alone). */
static int sparse_areas(struct vfio_pci *v, uint32_t index, struct vfio_region_sparse_mmap_area **out)
{
	struct vfio_region_info probe = { .argsz = sizeof(probe), .index = index };
	int n = -1;

	*out = NULL;
	if (vioctl(v->c, v->fd, VFIO_DEVICE_GET_REGION_INFO, &probe) < 0 || !(probe.flags & VFIO_REGION_INFO_FLAG_CAPS) ||
	    probe.argsz <= sizeof(probe) || probe.argsz > 65536)
		return n;
	struct vfio_region_info *info = calloc(1, probe.argsz);

	if (!info)
		return n;
	info->argsz = probe.argsz;
	info->index = index;
	if (vioctl(v->c, v->fd, VFIO_DEVICE_GET_REGION_INFO, info) == 0) {
		uint32_t off = info->cap_offset;

		for (int hops = 0; off && off + sizeof(struct vfio_info_cap_header) <= info->argsz && hops < 16; hops++) {
			struct vfio_info_cap_header *h = (void *)((uint8_t *)info + off);

			if (h->id == VFIO_REGION_INFO_CAP_SPARSE_MMAP && n < 0 &&
			    off + sizeof(struct vfio_region_info_cap_sparse_mmap) <= info->argsz) {
				struct vfio_region_info_cap_sparse_mmap *sp = (void *)h;
				size_t room = (info->argsz - off - sizeof(*sp)) / sizeof(sp->areas[0]);
				uint32_t nr = sp->nr_areas < room ? sp->nr_areas : room;

				/* none we can hold: nothing mapped, rather than everything */
				n = 0;
				if (nr && (*out = malloc(nr * sizeof(**out)))) {
					memcpy(*out, sp->areas, nr * sizeof(**out));
					n = nr;
				}
			}
			off = h->next;
		}
	}
	free(info);
	return n;
}

/* The host's MSI-X table and PBA sizes in bytes: every entry the device has, not only the ones the
 * guest is shown, so none past those is ever mapped or reaches the device. */
static uint64_t table_bytes(const struct vfio_pci *v)
{
	return (uint64_t)v->msix_host_nr * PCI_MSIX_ENTRY_SIZE;
}

static uint64_t pba_bytes(const struct vfio_pci *v)
{
	return ((uint64_t)v->msix_host_nr + 63) / 64 * 8;
}

/* A trapped access to BAR i at BAR-relative offset off that lies wholly inside or wholly outside
 * the MSI-X table and the PBA: the emulation, or the device. The entries and PBA bits past the
 * vectors the guest is shown read 0 and ignore writes. */
static void bar_trap_part(struct vfio_pci *v, int i, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	if (v->msix_nr && i == v->msix_bar && off >= v->msix_table_off && off - v->msix_table_off < table_bytes(v)) {
		uint64_t t = off - v->msix_table_off;

		if (t < (uint64_t)v->msix_nr * PCI_MSIX_ENTRY_SIZE)
			msix_table_access(&v->msix, t, data, len, is_write);
		else if (!is_write)
			memset(data, 0, len);
		return;
	}
	if (v->msix_nr && i == v->msix_pba_bar && off >= v->msix_pba_off && off - v->msix_pba_off < pba_bytes(v)) {
		if (off - v->msix_pba_off < 8) /* the emulated vectors' word */
			msix_pba_access(&v->msix, off - v->msix_pba_off, data, len, is_write);
		else if (!is_write)
			memset(data, 0, len);
		return;
	}
	if (vfio_region_rw(v, &v->bar_region[i], off, data, len, is_write) != (ssize_t)len && !is_write)
		memset(data, 0xff, len); /* what a read the device does not answer gives on PCI */
}

/* A trapped access to BAR i. One that straddles an edge of the MSI-X table or PBA (a guest's
 * unaligned access: an 8-byte write at the byte before the table) is split there: only what lies
 * outside them reaches the device, and a read of them never returns the device's own entries. */
VMM_HOT_VF static void bar_trap(struct vfio_pci *v, int i, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	uint64_t edge[4];
	int n = 0;

	if (v->msix_nr && i == v->msix_bar) {
		edge[n++] = v->msix_table_off;
		edge[n++] = v->msix_table_off + table_bytes(v);
	}
	if (v->msix_nr && i == v->msix_pba_bar) {
		edge[n++] = v->msix_pba_off;
		edge[n++] = v->msix_pba_off + pba_bytes(v);
	}
	for (int k = 0; k < n; k++) {
		if (edge[k] > off && edge[k] - off < len) {
			uint32_t head = (uint32_t)(edge[k] - off);

			bar_trap(v, i, off, data, head, is_write);
			bar_trap(v, i, off + head, data + head, len - head, is_write);
			return;
		}
	}
	bar_trap_part(v, i, off, data, len, is_write);
}

#define BAR_TRAP_FN(i)                                                                                    \
	static void bar##i##_fn(void *o, uint64_t off, uint8_t *d, uint32_t len, bool w)                 \
	{                                                                                                 \
		bar_trap(o, i, off, d, len, w);                                                           \
	}
BAR_TRAP_FN(0) BAR_TRAP_FN(1) BAR_TRAP_FN(2) BAR_TRAP_FN(3) BAR_TRAP_FN(4) BAR_TRAP_FN(5)
static const bus_fn bar_fn[PCI_STD_NUM_BARS] = { bar0_fn, bar1_fn, bar2_fn, bar3_fn, bar4_fn, bar5_fn };

/* A hole's handler gets hole-relative offsets: each hole remembers where it starts. */
static void hole_fn(void *o, uint64_t off, uint8_t *d, uint32_t len, bool w)
{
	struct vfio_bar_hole *h = o;

	bar_trap(h->v, h->bar, h->off + off, d, len, w);
}

/* A part of a BAR that must stay trapped, [lo, hi). */
struct trap_range {
	uint64_t lo, hi;
};

VMM_HOT_VF static int range_cmp(const void *a, const void *b)
{
	const struct trap_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Appends [a, a + len) page-rounded and clipped to the BAR's size (len may run past it). */
VMM_HOT_VF static void trap_add(struct trap_range *r, int *n, uint64_t size, uint64_t a, uint64_t len)
{
	uint64_t b = len > size || a > size - len ? size : a + len;

	a &= ~4095ULL;
	b = (b + 4095) & ~4095ULL;
	if (b > size || b < a) /* past the end, or wrapped: up to the end */
		b = size;
	if (a < b)
		r[(*n)++] = (struct trap_range){ a, b };
}

/* Sorts r[0..n) and merges what overlaps or touches: the count left. */
static int trap_merge(struct trap_range *r, int n)
{
	int k = 0;

	qsort(r, n, sizeof(*r), range_cmp);
	for (int i = 0; i < n; i++) {
		if (k && r[i].lo <= r[k - 1].hi) {
			if (r[i].hi > r[k - 1].hi)
				r[k - 1].hi = r[i].hi;
		} else {
			r[k++] = r[i];
		}
	}
	return k;
}

VMM_HOT_VF static int area_cmp(const void *a, const void *b)
{
	const struct vfio_region_sparse_mmap_area *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* What stays trapped in BAR i: its MSI-X table and PBA, whatever their size, and everything no
 * sparse area covers. NULL when out of memory; *n their count once merged. */
static struct trap_range *bar_traps(struct vfio_pci *v, int i, int *n)
{
	uint64_t size = v->bar_region[i].size, pos = 0;
	struct vfio_region_sparse_mmap_area *areas;
	int na = sparse_areas(v, VFIO_PCI_BAR0_REGION_INDEX + i, &areas);
	struct trap_range *r = calloc((na > 0 ? na : 0) + 3, sizeof(*r));

	*n = 0;
	if (!r) {
		free(areas);
		return NULL;
	}
	if (v->msix_nr && i == v->msix_bar)
		trap_add(r, n, size, v->msix_table_off, table_bytes(v));
	if (v->msix_nr && i == v->msix_pba_bar)
		trap_add(r, n, size, v->msix_pba_off, pba_bytes(v));
	if (na >= 0) { /* what the areas leave out must be trapped */
		if (na > 0) /* none: an empty (NULL) list, nothing mappable */
			qsort(areas, na, sizeof(*areas), area_cmp);
		for (int k = 0; k < na && pos < size; k++) {
			uint64_t end = areas[k].size > size - areas[k].offset || areas[k].offset > size
					       ? size : areas[k].offset + areas[k].size;

			if (areas[k].offset > pos)
				trap_add(r, n, size, pos, areas[k].offset - pos);
			if (end > pos)
				pos = end;
		}
		if (pos < size)
			trap_add(r, n, size, pos, size - pos);
	}
	free(areas);
	*n = trap_merge(r, *n);
	return r;
}

static int bar_setup(struct vfio_pci *v, int i, bool is64, bool prefetch)
{
	struct vfio_region_info *r = &v->bar_region[i];
	struct pci_bar_spec spec = { .size = r->size, .is64 = is64, .prefetch = prefetch,
				     .fn = bar_fn[i], .opaque = v, .name = "vfio" };
	int n = 0;
	struct trap_range *t = bar_traps(v, i, &n);

	if (!t) {
		pr_err("vfio %s: BAR %d: out of memory for its trapped ranges", v->bdf, i);
		return -ENOMEM;
	}
	/* more holes than a BAR keeps, or one hole the whole size: trapped whole */
	bool mmap_ok = (r->flags & VFIO_REGION_INFO_FLAG_MMAP) && r->size >= 4096 && n <= PCI_BAR_MAX_HOLES &&
		       !(n == 1 && t[0].lo == 0 && t[0].hi >= r->size);

	if (mmap_ok) {
		void *p = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, r->offset);

		if (p != MAP_FAILED) {
			v->bar_map[i] = p;
			spec.hva = p;
			for (int k = 0; k < n; k++) {
				struct vfio_bar_hole *h = &v->hole_ctx[i][k];

				*h = (struct vfio_bar_hole){ v, i, t[k].lo };
				spec.hole[k] = (struct pci_bar_hole){ t[k].lo, t[k].hi - t[k].lo, hole_fn, h };
			}
			spec.nr_holes = n;
		}
	}
	free(t);
	return pci_bar_add_backed(&v->pci, i, &spec);
}

/* What the host's config space says about BAR i: its kind, or 0 for none. */
static int host_bar(const struct vfio_pci *v, int i, bool *is64, bool *prefetch)
{
	uint32_t bar;

	memcpy(&bar, v->host_cfg + PCI_BASE_ADDRESS_0 + 4 * i, 4);
	if (bar & PCI_BASE_ADDRESS_SPACE_IO)
		return -1;
	*is64 = (bar & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64;
	*prefetch = bar & PCI_BASE_ADDRESS_MEM_PREFETCH;
	return 1;
}

int vfio_bars_setup(struct vfio_pci *v)
{
	for (int i = 0; i < PCI_STD_NUM_BARS; i++) {
		bool is64 = false, prefetch = false;
		int r;

		if ((r = region_info(v, VFIO_PCI_BAR0_REGION_INDEX + i, &v->bar_region[i])) < 0)
			return r;
		if (!v->bar_region[i].size)
			continue;
		if (host_bar(v, i, &is64, &prefetch) < 0) {
			pr_warn("vfio %s: BAR %d is an I/O port BAR: not passed to the guest", v->bdf, i);
			continue;
		}
		if (v->bar_region[i].size & (v->bar_region[i].size - 1)) {
			pr_err("vfio %s: BAR %d has a size (0x%llx) that is not a power of two", v->bdf, i,
			       (unsigned long long)v->bar_region[i].size);
			return -EINVAL;
		}
		if ((r = bar_setup(v, i, is64, prefetch)) < 0)
			return r;
		if (is64)
			i++; /* the upper half */
	}
	return 0;
}

static int device_open(struct vfio_pci *v, const struct vfio_pci_opts *o)
{
	/* the backend gives the fd ready for use: DMA mapped, KVM told, token checked */
	int fd = vfio_add_device(v->c, o->bdf, o->token);

	if (fd < 0)
		return fd;
	v->fd = fd;
	v->info = (struct vfio_device_info){ .argsz = sizeof(v->info) };
	if (ioctl(v->fd, VFIO_DEVICE_GET_INFO, &v->info) < 0 || !(v->info.flags & VFIO_DEVICE_FLAGS_PCI)) {
		pr_err("vfio %s: not a PCI device as VFIO sees it", o->bdf);
		return -ENODEV;
	}
	/* a device as the last user left it may be mid-DMA: start from a reset */
	if ((v->info.flags & VFIO_DEVICE_FLAGS_RESET) && ioctl(v->fd, VFIO_DEVICE_RESET) < 0)
		pr_warn("vfio %s: VFIO_DEVICE_RESET failed: %s", o->bdf, strerror(errno));
	int r = region_info(v, VFIO_PCI_CONFIG_REGION_INDEX, &v->cfg_region);

	if (r < 0)
		return r;
	v->host_cfg_size = v->cfg_region.size < PCI_CFG_SIZE ? v->cfg_region.size : PCI_CFG_SIZE;
	if (v->host_cfg_size < PCI_STD_HEADER_SIZEOF ||
	    vfio_region_rw(v, &v->cfg_region, 0, v->host_cfg, v->host_cfg_size, false) != (ssize_t)v->host_cfg_size) {
		pr_err("vfio %s: cannot read its config space", o->bdf);
		return -EIO;
	}
	return 0;
}

struct vfio_pci *vfio_pci_create(struct vfio_container *c, struct pci_host *h, const struct vfio_pci_opts *o)
{
	struct vfio_pci *v = host_mem_zalloc(sizeof(*v));

	if (!v)
		return NULL;
	v->c = c;
	v->arch = o->arch;
	v->fd = v->intx_fd = v->intx_resample = -1;
	for (int i = 0; i < VFIO_MAX_MSI; i++)
		v->msi_vec[i].fd = v->host_msi[i].irq = -1;
	for (int i = 0; i < MSIX_MAX_VECTORS; i++)
		v->host_msix[i].irq = -1;
	v->host_intx.irq = -1;
	snprintf(v->bdf, sizeof(v->bdf), "%s", o->bdf);
	if (device_open(v, o) < 0 || vfio_config_setup(v, h, o->slot) < 0 || vfio_bars_setup(v) < 0 ||
	    vfio_irqs_setup(v) < 0) {
		vfio_pci_destroy(v);
		return NULL;
	}
	return v;
}

void vfio_pci_destroy(struct vfio_pci *v)
{
	if (!v)
		return;
	if (v->fd >= 0) {
		vfio_irqs_teardown(v);
		/* nothing the guest left running may go on: the device goes back to the host reset */
		if ((v->info.flags & VFIO_DEVICE_FLAGS_RESET) && ioctl(v->fd, VFIO_DEVICE_RESET) < 0)
			pr_warn("vfio %s: reset at exit failed: %s", v->bdf, strerror(errno));
	}
	for (int i = 0; i < PCI_STD_NUM_BARS; i++)
		if (v->bar_map[i])
			munmap(v->bar_map[i], v->bar_region[i].size);
	if (v->fd >= 0)
		close(v->fd);
	host_mem_zfree(v, sizeof(*v));
}

VMM_HOT_VF void vfio_pci_summary(struct vfio_pci *v, FILE *f)
{
	fprintf(f, "vmm: vfio %s (00:%02x.0): %u MSI-X vectors (enabled %llu times), MSI %llu, INTx %llu, "
		"%llu VFIO_DEVICE_SET_IRQS, %llu MSI-X routes KVM refused\n", v->bdf, v->pci.devfn >> 3,
		v->msix_nr, (unsigned long long)v->stats.msix_enables, (unsigned long long)v->stats.msi_enables,
		(unsigned long long)v->stats.intx_enables, (unsigned long long)v->stats.set_irqs,
		(unsigned long long)atomic_load(&v->msix.route_errors));
	/* INTx goes device -> VFIO -> KVM irqfd -> guest, and its EOI back through the resamplefd, all
	 * in the kernel: what vmm sees is the guest's handler checking Status.INTERRUPT and masking
	 * with INTX_DISABLE, and its unmask */
	if (v->pci.cfg[PCI_INTERRUPT_PIN])
		fprintf(f, "vmm: vfio %s: INTx on GSI %u with a resamplefd: the guest saw it pending %llu "
			"times, masked it %llu times, unmasked it %llu times\n", v->bdf, v->intx_gsi,
			(unsigned long long)v->stats.intx_pending_reads,
			(unsigned long long)v->stats.intx_masks, (unsigned long long)v->stats.intx_unmasks);
	if (!(v->info.flags & VFIO_DEVICE_FLAGS_RESET))
		fprintf(f, "vmm: vfio %s: no reset method (VFIO_DEVICE_RESET not offered): not reset at "
			"start or exit; the guest gets it as its last user left it\n", v->bdf);
}

VMM_HOT_VF unsigned int vfio_pci_live_vectors(struct vfio_pci *v)
{
	unsigned int n = 0;

	pthread_mutex_lock(&v->msix.lock);
	for (unsigned int i = 0; i < v->msix_nr; i++)
		n += v->msix.vec[i].route.irqfd;
	pthread_mutex_unlock(&v->msix.lock);
	for (unsigned int i = 0; v->msi_enabled && i < v->msi_nr; i++)
		n += v->msi_vec[i].irqfd;
	return n;
}

/* Fills the report's inputs and runs it, the architecture's or the host-only one: the vectors the
 * guest enabled, 0 when none (or the report failed: nothing was written). */
VMM_HOT_VF static unsigned int msi_report(struct vfio_pci *v, unsigned int vm_vectors, struct msi_verdict *verdict,
			       char *line, size_t size, FILE *json)
{
	bool msi = !v->msix_nr;
	unsigned int n = msi ? (v->msi_enabled ? v->msi_nr : 0) : v->msix_nr;
	int64_t event[MSIX_MAX_VECTORS];
	char guest[16];

	if (!n)
		return 0;
	for (unsigned int i = 0; i < n; i++)
		event[i] = msi ? (int64_t)(v->msi_data | i)
		       : v->msix.vec[i].route.routed ? (int64_t)v->msix.vec[i].route.data : -1;
	snprintf(guest, sizeof(guest), "00:%02x.0", v->pci.devfn >> 3);
	const struct msi_dev d = { .bdf = v->bdf, .guest_bdf = guest, .msi = msi, .nr_vectors = n,
				   .devid = pci_dev_rid(&v->pci), .event = event, .vm_vectors = vm_vectors };
	int r = v->arch && v->arch->msi_report ? v->arch->msi_report(v->c->vm, &d, verdict, line, size, json)
					       : vfio_msi_report_host(&d, NULL, verdict, line, size, json);

	return r < 0 ? 0 : n;
}

/* The report's line into buf; keep: also its per-vector verdicts, for the interrupt table. */
VMM_HOT_VF static void vlpi_line(struct vfio_pci *v, unsigned int vm_vectors, char *buf, size_t size, bool keep)
{
	unsigned int n = msi_report(v, vm_vectors, keep ? v->verdict : NULL, buf, size, NULL);

	if (!n)
		snprintf(buf, size, "vfio %s: the guest enabled no MSI or MSI-X vectors", v->bdf);
	if (keep)
		v->nr_verdict = n;
}

VMM_HOT_VF void vfio_pci_vlpi_line(struct vfio_pci *v, unsigned int vm_vectors, char *buf, size_t size)
{
	vlpi_line(v, vm_vectors, buf, size, false);
}

VMM_HOT_VF void vfio_pci_vlpi_json(struct vfio_pci *v, unsigned int vm_vectors, FILE *f)
{
	if (!msi_report(v, vm_vectors, NULL, NULL, 0, f))
		fprintf(f, "{\"bdf\":\"%s\",\"vectors\":[]}", v->bdf);
}

#define REPORT_SETTLE_S 1.0

VMM_HOT_VF void vfio_pci_report_tick(struct vfio_pci *v, unsigned int vm_vectors, double now)
{
	unsigned int live = vfio_pci_live_vectors(v);

	if (live != v->seen_live) {
		v->seen_live = live;
		v->seen_since = now;
		return;
	}
	if (!live || live == v->report_live || now - v->seen_since < REPORT_SETTLE_S)
		return;
	vlpi_line(v, vm_vectors, v->report, sizeof(v->report), true);
	v->report_live = live;
	fprintf(stderr, "vmm: %s\n", v->report);
}
