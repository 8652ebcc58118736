// SPDX-License-Identifier: MIT
/*
 * The config space a passed-through device shows the guest: an emulated copy built from the
 * device's own (as VFIO presents it, which already virtualizes a VF's IDs). Identity, class,
 * subsystem and interrupt pin are copied; BARs are vmm's; the capability list is rebuilt with
 * MSI-X and MSI (emulated: vmm routes them) and PCI Express (a read-only copy); every other
 * capability and the expansion ROM are hidden. Extended capabilities (offsets 256-4095, which the
 * guest reaches through the ECAM) are filtered the same way: AER, DSN and ARI stay as read-only
 * copies at the device's own offsets, the chain relinked around the rest. A guest write only
 * ever reaches the device through the command register's MEMORY, MASTER and INTX_DISABLE bits:
 * the rest lands in the copy, within its write masks. One bit is read from the device: the status
 * register's INTERRUPT, which a guest's INTx handler checks (pci_check_and_mask_intx) to know the
 * interrupt is its own.
 */
#include <errno.h>
#include <linux/pci_regs.h>
#include <string.h>

#include "core/hot.h"
#include "vfio/vfio.h"
#include "vfio/vfio_internal.h"
#include "core/log.h"
#include "core/vm.h"

#define FORWARDED_CMD (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE)

static uint32_t host_get(const struct vfio_pci *v, uint32_t off, uint32_t len)
{
	uint32_t x = 0;

	if (off + len <= v->host_cfg_size)
		memcpy(&x, v->host_cfg + off, len);
	return x;
}

static void put(struct pci_dev *d, uint32_t off, uint32_t x, uint32_t len)
{
	memcpy(d->cfg + off, &x, len);
}

static void wmask(struct pci_dev *d, uint32_t off, uint32_t mask, uint32_t len)
{
	memcpy(d->wmask + off, &mask, len);
}

/* Status.INTERRUPT is the device's pending INTx, which the copy cannot know: read it through VFIO
 * (which passes that bit through) on every guest read that covers it. */
VMM_HOT_VF static void cfg_read(struct pci_dev *d, uint32_t off, uint32_t len, uint32_t *val)
{
	struct vfio_pci *v = (struct vfio_pci *)d;
	uint16_t st;

	if (!d->cfg[PCI_INTERRUPT_PIN] || off > PCI_STATUS || off + len <= PCI_STATUS)
		return;
	if (vfio_region_rw(v, &v->cfg_region, PCI_STATUS, &st, 2, false) != 2)
		return; /* the copy's bit (clear) rather than a guess */
	uint32_t shift = 8 * (PCI_STATUS - off);

	*val = (*val & ~((uint32_t)PCI_STATUS_INTERRUPT << shift)) |
	       (uint32_t)(st & PCI_STATUS_INTERRUPT) << shift;
	if (st & PCI_STATUS_INTERRUPT)
		v->stats.intx_pending_reads++;
}

/* The guest's MEMORY, MASTER and INTX_DISABLE to the device. The PCI core orders it around the
 * BARs' memslots: vfio-pci zaps a BAR's mmap when its memory decode goes off and answers a fault
 * on it with SIGBUS until it is back on, which a vCPU touching the BAR through a memslot would
 * get as KVM_RUN failing with EFAULT. */
VMM_HOT_VF static void cmd_written(struct pci_dev *d, uint16_t old_cmd)
{
	struct vfio_pci *v = (struct vfio_pci *)d;
	uint16_t cmd, host = host_get(v, PCI_COMMAND, 2);

	(void)old_cmd;
	memcpy(&cmd, d->cfg + PCI_COMMAND, 2);
	/* a guest's INTx handler masks with INTX_DISABLE and its unmask clears it: vmm sees
	 * no interrupt (KVM delivers them), but it sees these */
	if ((cmd & ~host) & PCI_COMMAND_INTX_DISABLE)
		v->stats.intx_masks++;
	else if ((host & ~cmd) & PCI_COMMAND_INTX_DISABLE)
		v->stats.intx_unmasks++;
	host = (host & ~FORWARDED_CMD) | (cmd & FORWARDED_CMD);
	if (vfio_region_rw(v, &v->cfg_region, PCI_COMMAND, &host, 2, true) == 2)
		memcpy(v->host_cfg + PCI_COMMAND, &host, 2);
}

VMM_HOT_VF static void cfg_written(struct pci_dev *d, uint32_t off, uint32_t len)
{
	struct vfio_pci *v = (struct vfio_pci *)d;

	if (v->msix_nr && off < (uint32_t)v->msix_cap + PCI_MSIX_FLAGS + 2 &&
	    off + len > (uint32_t)v->msix_cap + PCI_MSIX_FLAGS) {
		uint16_t ctl;

		memcpy(&ctl, d->cfg + v->msix_cap + PCI_MSIX_FLAGS, 2);
		msix_ctrl_write(&v->msix, ctl);
	}
	if (v->msi_cap && off < (uint32_t)v->msi_cap + 24 && off + len > (uint32_t)v->msi_cap)
		vfio_msi_update(v);
}

/* MSI-X: the table and PBA stay where the device has them (their pages are trapped in its BARs);
 * the capability is vmm's. */
static int add_msix(struct vfio_pci *v, uint32_t hc)
{
	struct pci_dev *d = &v->pci;
	uint16_t flags = host_get(v, hc + PCI_MSIX_FLAGS, 2);
	uint32_t table = host_get(v, hc + PCI_MSIX_TABLE, 4), pba = host_get(v, hc + PCI_MSIX_PBA, 4);
	unsigned int n = (flags & PCI_MSIX_FLAGS_QSIZE) + 1;

	v->msix_bar = table & PCI_MSIX_TABLE_BIR;
	v->msix_table_off = table & PCI_MSIX_TABLE_OFFSET;
	v->msix_pba_bar = pba & PCI_MSIX_PBA_BIR;
	v->msix_pba_off = pba & PCI_MSIX_PBA_OFFSET;
	if (v->msix_bar >= PCI_STD_NUM_BARS || v->msix_pba_bar >= PCI_STD_NUM_BARS) {
		pr_err("vfio %s: its MSI-X capability names BAR %d/%d", v->bdf, v->msix_bar, v->msix_pba_bar);
		return -EINVAL;
	}
	v->msix_host_nr = n;
	if (n > MSIX_MAX_VECTORS) /* the guest is shown no more vectors than the model keeps */
		n = MSIX_MAX_VECTORS;
	int c = pci_cap_add(d, PCI_CAP_ID_MSIX, PCI_CAP_MSIX_SIZEOF);

	if (c < 0)
		return c;
	v->msix_cap = c;
	put(d, c + PCI_MSIX_FLAGS, n - 1, 2);
	wmask(d, c + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL, 2);
	put(d, c + PCI_MSIX_TABLE, table, 4);
	put(d, c + PCI_MSIX_PBA, pba, 4);
	int r = msix_init_vectors(&v->msix, v->c->vm, d, n, &vfio_msix_ops, v);

	if (r < 0)
		return r;
	v->msix.cap = c;
	v->msix_nr = n;
	return 0;
}

/* MSI, emulated with the device's own layout (64-bit, per-vector masking, how many vectors). */
static int add_msi(struct vfio_pci *v, uint32_t hc)
{
	struct pci_dev *d = &v->pci;
	uint16_t flags = host_get(v, hc + PCI_MSI_FLAGS, 2);
	bool is64 = flags & PCI_MSI_FLAGS_64BIT, maskable = flags & PCI_MSI_FLAGS_MASKBIT;
	uint32_t size = 10 + (is64 ? 4 : 0) + (maskable ? 10 : 0);
	int c = pci_cap_add(d, PCI_CAP_ID_MSI, size);

	if (c < 0)
		return c;
	v->msi_cap = c;
	v->msi_flags = flags & (PCI_MSI_FLAGS_64BIT | PCI_MSI_FLAGS_MASKBIT | PCI_MSI_FLAGS_QMASK);
	v->msi_max = 1u << ((flags & PCI_MSI_FLAGS_QMASK) >> 1);
	if (v->msi_max > VFIO_MAX_MSI)
		v->msi_max = VFIO_MAX_MSI;
	put(d, c + PCI_MSI_FLAGS, v->msi_flags, 2);
	wmask(d, c + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE | PCI_MSI_FLAGS_QSIZE, 2);
	wmask(d, c + PCI_MSI_ADDRESS_LO, 0xfffffffc, 4);
	if (is64) {
		wmask(d, c + PCI_MSI_ADDRESS_HI, 0xffffffff, 4);
		wmask(d, c + PCI_MSI_DATA_64, 0xffff, 2);
		if (maskable)
			wmask(d, c + PCI_MSI_MASK_64, 0xffffffff, 4);
	} else {
		wmask(d, c + PCI_MSI_DATA_32, 0xffff, 2);
		if (maskable)
			wmask(d, c + PCI_MSI_MASK_32, 0xffffffff, 4);
	}
	return 0;
}

/* PCI Express: shown read-only, so a guest cannot retrain links or change the device's payload
 * sizes; the copy keeps what the guest's driver reads to know the device. */
static int add_pcie(struct vfio_pci *v, uint32_t hc, uint32_t end)
{
	uint32_t len = end - hc < PCI_CAP_EXP_ENDPOINT_SIZEOF_V2 ? end - hc : PCI_CAP_EXP_ENDPOINT_SIZEOF_V2;
	int c = pci_cap_add(&v->pci, PCI_CAP_ID_EXP, len);

	if (c < 0)
		return c;
	memcpy(v->pci.cfg + c + 2, v->host_cfg + hc + 2, len - 2);
	return 0;
}

static int caps_setup(struct vfio_pci *v)
{
	if (!(host_get(v, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST))
		return 0;
	uint32_t at[48];
	uint8_t id[48];
	int n = 0;

	/* the device's list, bounded: a loop or an offset into the header ends the walk */
	for (uint32_t c = host_get(v, PCI_CAPABILITY_LIST, 1) & ~3u; c >= PCI_STD_HEADER_SIZEOF &&
	     c + 2 <= PCI_CFG_SPACE_SIZE && n < 48; c = host_get(v, c + 1, 1) & ~3u) {
		at[n] = c;
		id[n++] = host_get(v, c, 1);
	}
	for (int i = 0; i < n; i++) {
		uint32_t end = PCI_CFG_SPACE_SIZE; /* the next capability above it, for the PCIe copy */
		int r = 0;

		for (int k = 0; k < n; k++)
			if (at[k] > at[i] && at[k] < end)
				end = at[k];
		if (id[i] == PCI_CAP_ID_MSIX && !v->msix_nr)
			r = add_msix(v, at[i]);
		else if (id[i] == PCI_CAP_ID_MSI && !v->msi_cap)
			r = add_msi(v, at[i]);
		else if (id[i] == PCI_CAP_ID_EXP)
			r = add_pcie(v, at[i], end);
		if (r < 0)
			return r;
	}
	return 0;
}

/* How much of a shown extended capability is copied (its registers; AER's include the root
 * port's, which an endpoint leaves zero). */
static uint32_t ecap_size(uint16_t id)
{
	switch (id) {
	case PCI_EXT_CAP_ID_ERR:
		return PCI_ERR_ROOT_ERR_SRC + 4;
	case PCI_EXT_CAP_ID_DSN:
		return PCI_EXT_CAP_DSN_SIZEOF;
	case PCI_EXT_CAP_ID_ARI:
		return PCI_EXT_CAP_ARI_SIZEOF;
	default:
		return 0; /* hidden */
	}
}

#define ECAP_MAX 64 /* more than 4 KiB can hold of the smallest (8-byte) ones that matter */

/* The device's extended capability chain, walked forward only (a loop or a pointer back into
 * the first 256 bytes ends it), shown filtered: the first shown one's header goes at 0x100, or a
 * null header (ID 0) pointing to it when the device has a hidden one there. */
VMM_HOT_VF static void ecaps_setup(struct vfio_pci *v)
{
	struct pci_dev *d = &v->pci;
	uint32_t at[ECAP_MAX], prev = 0;
	int n = 0;

	if (v->host_cfg_size < PCI_CFG_SPACE_EXP_SIZE)
		return;
	for (uint32_t c = PCI_CFG_SPACE_SIZE; c && n < ECAP_MAX;) {
		uint32_t h = host_get(v, c, 4), next = PCI_EXT_CAP_NEXT(h);

		if (h == 0 || h == ~0u)
			break;
		at[n++] = c;
		c = next > c ? next : 0;
	}
	for (int i = 0; i < n; i++) {
		uint32_t h = host_get(v, at[i], 4), size = ecap_size(PCI_EXT_CAP_ID(h)), end = PCI_CFG_SPACE_EXP_SIZE;

		if (i + 1 < n)
			end = at[i + 1];
		if (!size)
			continue;
		if (at[i] + size > end)
			size = end - at[i];
		memcpy(d->cfg + at[i], v->host_cfg + at[i], size);
		put(d, at[i], h & 0xfffff, 4); /* the last so far: no next */
		if (prev)
			put(d, prev, (host_get(v, prev, 4) & 0xfffff) | at[i] << 20, 4);
		else if (at[i] != PCI_CFG_SPACE_SIZE)
			put(d, PCI_CFG_SPACE_SIZE, at[i] << 20, 4);
		prev = at[i];
	}
}

VMM_HOT_VF int vfio_config_setup(struct vfio_pci *v, struct pci_host *h, int slot)
{
	struct pci_dev *d = &v->pci;
	uint8_t type = host_get(v, PCI_HEADER_TYPE, 1) & 0x7f;

	if (type != PCI_HEADER_TYPE_NORMAL) {
		pr_err("vfio %s: header type %u: only endpoints (type 0) can be passed through", v->bdf, type);
		return -EINVAL;
	}
	int r = pci_dev_add_at(h, d, slot, host_get(v, PCI_VENDOR_ID, 2), host_get(v, PCI_DEVICE_ID, 2),
			       host_get(v, PCI_CLASS_REVISION, 4), host_get(v, PCI_SUBSYSTEM_VENDOR_ID, 2),
			       host_get(v, PCI_SUBSYSTEM_ID, 2));

	if (r < 0)
		return r;
	put(d, PCI_INTERRUPT_PIN, host_get(v, PCI_INTERRUPT_PIN, 1) ? 1 : 0, 1);
	d->cfg_written = cfg_written;
	d->cmd_written = cmd_written;
	d->cfg_read = cfg_read;
	/* bus mastering starts off, as after a reset: the guest's driver turns it on */
	uint16_t host = host_get(v, PCI_COMMAND, 2) & ~FORWARDED_CMD;

	if (vfio_region_rw(v, &v->cfg_region, PCI_COMMAND, &host, 2, true) == 2)
		memcpy(v->host_cfg + PCI_COMMAND, &host, 2);
	r = caps_setup(v);
	if (r == 0)
		ecaps_setup(v);
	return r;
}
