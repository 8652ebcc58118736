// SPDX-License-Identifier: MIT
/*
 * The vLPI report: the per-vector join of what vlpi_parse.c reads from KVM's vgic-state and
 * vgic-its-state debugfs files and from /proc/interrupts, reading those files, and the report's
 * text and JSON forms (see vlpi.h).
 *
 * Formats the parsers take, from the kernels' printers:
 *  - vgic-state, 4.16 .. 6.17: a Distributor part ("vgic_model:", "nr_spis:", "nr_lpis:",
 *    "enabled:"), then per-vCPU parts headed "VCPU n TYP ID TGT_ID PLAEHCG HWID TARGET SRC PRI
 *    VCPU_ID" and an "SPI" part, one line per IRQ: TYPE INTID TGT_ID FLAGS(7) HWID(dec) TARGET(hex)
 *    SRC(hex) PRI(dec) VCPU_ID; LPIs follow the SPIs; before 6.10 "LPI n freed" may appear.
 *  - vgic-state, 4.15: six flags "PLAEHL" (no group), HWID and PRI in hex.
 *  - vgic-its-state@ADDR, 6.15+: per device "Device ID: 0x%x, Event ID Range: [0 - N]", then
 *    "EVENT_ID INTID HWINTID TARGET COL_ID HW" rows, all decimal.
 *  - /proc/interrupts: "CPU0 CPU1 ..." header; "IRQ: count... chip [hwirq] [Edge|Level]
 *    [-name] action[, action...]"; the vfio-pci action names "vfio-msix[i](BDF)",
 *    "vfio-msi[i](BDF)", "vfio-intx(BDF)"; GICv4 vPE doorbells on the "GICv4-vpe" chip
 *    ("GICv4.1-vpe" on 4.1) with the action "vcpu".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hot.h"
#include "arm64/gic/vlpi.h"
#include "core/log.h"

/* ---- the join ---- */

static void reason(struct vlpi_vector *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
VMM_HOT_VF static void reason(struct vlpi_vector *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
}

/* The vgic-state line of a guest LPI, or NULL. */
static const struct vgic_irq_state *vgic_lpi(const struct vgic_state *st, uint32_t intid)
{
	for (size_t i = 0; st && i < st->nr_irq; i++)
		if (st->irq[i].type == VGIC_LPI && !st->irq[i].freed && st->irq[i].intid == intid)
			return &st->irq[i];
	return NULL;
}

/* Per-vector proof from vgic-its-state: the guest's own (DeviceID, EventID) -> LPI, with HW. */
static bool join_its(const struct vlpi_inputs *in, const struct vlpi_dev *dev, struct vlpi_vector *v)
{
	int64_t ev = dev->event ? dev->event[v->index] : -1;

	if (!in->its || ev < 0 || ev > UINT32_MAX)
		return false;
	const struct its_ite_state *e = its_state_find(in->its, dev->devid, (uint32_t)ev);

	v->evidence = VLPI_EV_ITS_STATE;
	if (!e) {
		v->status = VLPI_UNKNOWN;
		reason(v, "the guest's ITS maps no LPI for DeviceID 0x%" PRIx32 " EventID %" PRId64
		       " (not set up by the guest yet)", dev->devid, ev);
		return true;
	}
	const struct vgic_irq_state *q = vgic_lpi(in->vgic, e->intid);

	v->lpi = e->intid;
	/* The collection's target is the vCPU index (KVM's vITS has GITS_TYPER.PTA = 0). */
	v->vcpu = q ? q->target_vcpu : (int)e->target;
	v->status = e->hw ? VLPI_FORWARDED : VLPI_SOFTWARE;
	return true;
}

static void join_vgic(const struct vlpi_inputs *in, const struct vlpi_dev *dev, struct vlpi_vector *v)
{
	const struct vgic_state *st = in->vgic;
	unsigned int nr_hw = 0, nr_lpi = 0;

	v->evidence = VLPI_EV_VGIC_COUNT;
	v->nr_cand = 0;
	for (size_t i = 0; i < st->nr_irq; i++) {
		const struct vgic_irq_state *q = &st->irq[i];

		if (q->type != VGIC_LPI || q->freed)
			continue;
		nr_lpi++;
		if (!q->hw)
			continue;
		/* A kernel that records the host INTID of a vLPI names the vector outright. */
		if (q->hwid && v->hwirq >= 0 && q->hwid == v->hwirq) {
			v->status = VLPI_FORWARDED;
			v->evidence = VLPI_EV_VGIC_HWID;
			v->lpi = q->intid;
			v->vcpu = q->target_vcpu;
			return;
		}
		if (v->nr_cand < VLPI_MAX_CAND)
			v->cand[v->nr_cand++] = q->intid;
		nr_hw++;
	}
	if (!nr_hw) {
		v->status = VLPI_SOFTWARE;
		reason(v, "none of the VM's %u LPIs is forwarded (H=0)", nr_lpi);
		return;
	}
	/* Each H=1 LPI belongs to one VFIO vector of this VM: as many as the VM has means all. */
	if (dev->vm_vectors && nr_hw == dev->vm_vectors) {
		v->status = VLPI_FORWARDED;
		if (nr_hw == 1) {
			const struct vgic_irq_state *q = vgic_lpi(st, v->cand[0]);

			v->lpi = v->cand[0];
			v->vcpu = q ? q->target_vcpu : -1;
			v->nr_cand = 0;
		}
		return;
	}
	v->status = VLPI_UNKNOWN;
	reason(v, "%u of the VM's %u LPIs are forwarded, for %u VFIO vectors; vgic-state does not say "
	       "which (HWID is 0 for vLPIs; vgic-its-state, Linux 6.15+, would)", nr_hw, nr_lpi,
	       dev->vm_vectors);
}

static void join_doorbells(const struct vlpi_inputs *in, struct vlpi_vector *v)
{
	const struct proc_interrupts *pi = in->pi;
	const char *why = in->vgic_why ? in->vgic_why : "no vgic-state";
	unsigned int nr = 0;
	uint64_t total = 0;

	for (size_t i = 0; i < pi->nr_line; i++) {
		if (pi->line[i].kind != IRQ_LINE_DOORBELL)
			continue;
		nr++;
		total = total + pi->line[i].total < total ? UINT64_MAX : total + pi->line[i].total;
	}
	v->evidence = VLPI_EV_DOORBELLS;
	v->doorbells = total;
	if (!nr) {
		/* KVM requests one doorbell per vCPU when a VM with a vITS gets GICv4. */
		v->status = VLPI_SOFTWARE;
		reason(v, "%s; the host has no GICv4 vPE doorbells, so no VM gets vLPIs (GICv4 off: "
		       "kvm-arm.vgic_v4_enable=1 missing, or no GICv4 ITS)", why);
	} else if (total) {
		v->status = VLPI_DOORBELLS;
		reason(v, "%s; the host's %u vPE doorbells fired %" PRIu64 " times (vLPIs are delivered "
		       "on this host; which VM's, /proc/interrupts does not say)", why, nr, total);
	} else {
		v->status = VLPI_UNKNOWN;
		reason(v, "%s and no doorbell activity (%u vPE doorbells, none fired)", why, nr);
	}
}

VMM_HOT_VF int vlpi_join(const struct vlpi_inputs *in, const struct vlpi_dev *dev, struct vlpi_vector *out)
{
	if (!in || !dev || !dev->bdf || (dev->nr_vectors && !out)) {
		pr_err("vlpi_join: missing inputs, device or output: a caller bug");
		return -EINVAL;
	}
	for (unsigned int i = 0; i < dev->nr_vectors; i++) {
		struct vlpi_vector *v = &out[i];
		const struct irq_line *l = NULL;

		memset(v, 0, sizeof(*v));
		v->index = i;
		v->host_irq = v->vcpu = -1;
		v->hwirq = v->lpi = -1;
		if (in->pi) {
			l = proc_interrupts_vfio(in->pi, dev->bdf,
						 dev->msi ? IRQ_LINE_VFIO_MSI : IRQ_LINE_VFIO_MSIX, (int)i);
			if (!l) {
				v->status = VLPI_NOT_ENABLED;
				v->evidence = VLPI_EV_HOST_IRQS;
				reason(v, "no %s[%u](%s) in /proc/interrupts: VFIO has not enabled it",
				       dev->msi ? "vfio-msi" : "vfio-msix", i, dev->bdf);
				continue;
			}
			v->host_irq = (int)l->irq;
			v->hwirq = l->has_hwirq && l->hwirq <= INT64_MAX ? (int64_t)l->hwirq : -1;
			v->host_count = l->total;
		}
		if (join_its(in, dev, v))
			continue;
		if (in->vgic) {
			join_vgic(in, dev, v);
			continue;
		}
		if (in->pi) {
			join_doorbells(in, v);
			continue;
		}
		v->status = VLPI_UNKNOWN;
		reason(v, "%s; %s", in->vgic_why ? in->vgic_why : "no vgic-state",
		       in->pi_why ? in->pi_why : "no /proc/interrupts");
	}
	return 0;
}

/* snprintf for messages and paths built from directory entries: false when it did not fit (the
 * caller decides whether a cut string is acceptable; a path never is). */
static bool sfmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
VMM_HOT_VF static bool sfmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);

	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

/* ---- reading the files ---- */

#define KVM_DEBUGFS "/sys/kernel/debug/kvm"

/* The VM's debugfs directory: <pid>-<vm_fd>, else the only <pid>-* one. */
VMM_HOT_VF static int vm_debugfs_dir(const struct vlpi_src *src, char *dir, size_t dsz, char *why, size_t wsz)
{
	int pid = src->pid ? src->pid : (int)getpid();
	char prefix[32];
	struct stat sb;
	unsigned int found = 0;

	if (src->vm_fd >= 0) {
		sfmt(dir, dsz, KVM_DEBUGFS "/%d-%d", pid, src->vm_fd);
		if (!stat(dir, &sb) && S_ISDIR(sb.st_mode))
			return 0;
	}
	DIR *d = opendir(KVM_DEBUGFS);

	if (!d) {
		int e = errno;

		if (e == ENOENT)
			sfmt(why, wsz, "debugfs is not mounted (mount -t debugfs debugfs "
				 "/sys/kernel/debug to see KVM's vgic-state)");
		else
			sfmt(why, wsz, KVM_DEBUGFS ": %s%s", strerror(e),
				 e == EACCES ? " (debugfs is root-only: run vmm as root)" : "");
		return -e;
	}
	sfmt(prefix, sizeof(prefix), "%d-", pid);
	for (struct dirent *de; (de = readdir(d));) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		if (!found++ && !sfmt(dir, dsz, KVM_DEBUGFS "/%s", de->d_name))
			found = 2;	/* cannot be a <pid>-<fd> name */
	}
	closedir(d);
	if (found == 1)
		return 0;
	if (!found)
		sfmt(why, wsz, KVM_DEBUGFS " has no directory for pid %d (KVM's debugfs off?)", pid);
	else
		sfmt(why, wsz, KVM_DEBUGFS " has %u VMs of pid %d: name the VM fd", found, pid);
	return -ENOENT;
}

/* The first vgic-its-state@* in dir (one per vITS; vmm makes one). */
VMM_HOT_VF static int its_state_path(const char *dir, char *path, size_t psz, char *why, size_t wsz)
{
	DIR *d = opendir(dir);

	if (!d) {
		sfmt(why, wsz, "%s: %s", dir, strerror(errno));
		return -ENOENT;
	}
	int ret = -ENOENT;

	for (struct dirent *de; (de = readdir(d));) {
		if (!strncmp(de->d_name, "vgic-its-state@", 15)) {
			ret = sfmt(path, psz, "%s/%s", dir, de->d_name) ? 0 : -ENAMETOOLONG;
			break;
		}
	}
	closedir(d);
	if (ret)
		sfmt(why, wsz, "no vgic-its-state in %s (Linux 6.15+ has it)", dir);
	return ret;
}

VMM_HOT_VF int vlpi_report(const struct vlpi_src *src, const struct vlpi_dev *dev, struct vlpi_vector *out)
{
	static const struct vlpi_src defaults = { .vm_fd = -1 };
	char dir[512] = "", vpath[1024], ipath[1024];
	char vwhy[192] = "", iwhy[192] = "", pwhy[192] = "", dwhy[192] = "";
	char *vtext = NULL, *itext = NULL, *ptext = NULL;
	size_t vlen = 0, ilen = 0, plen = 0;
	struct vgic_state vs;
	struct its_state is;
	struct proc_interrupts pi;
	struct vlpi_inputs in = { 0 };
	int ret;

	if (!dev || !dev->bdf || (dev->nr_vectors && !out)) {
		pr_err("vlpi_report: missing device or output: a caller bug");
		return -EINVAL;
	}
	if (!src)
		src = &defaults;
	bool need_dir = !src->vgic_state || !src->its_state;
	bool have_dir = need_dir && !vm_debugfs_dir(src, dir, sizeof(dir), dwhy, sizeof(dwhy));

	/* vgic-state */
	const char *vp = src->vgic_state, *ip = src->its_state;

	if (vp && !*vp)
		sfmt(vwhy, sizeof(vwhy), "vgic-state not looked at");
	else if (!vp && !have_dir)
		sfmt(vwhy, sizeof(vwhy), "%s", dwhy);
	else if (!vp && !sfmt(vpath, sizeof(vpath), "%s/vgic-state", dir))
		sfmt(vwhy, sizeof(vwhy), "%s: path too long", dir);
	else
		host_text_read(vp ? vp : vpath, &vtext, &vlen, vwhy, sizeof(vwhy));
	/* vgic-its-state */
	if (ip && !*ip)
		sfmt(iwhy, sizeof(iwhy), "vgic-its-state not looked at");
	else if (!ip && !have_dir)
		sfmt(iwhy, sizeof(iwhy), "%s", dwhy);
	else if (ip || !its_state_path(dir, ipath, sizeof(ipath), iwhy, sizeof(iwhy)))
		host_text_read(ip ? ip : ipath, &itext, &ilen, iwhy, sizeof(iwhy));
	/* /proc/interrupts */
	if (src->interrupts && !*src->interrupts)
		sfmt(pwhy, sizeof(pwhy), "/proc/interrupts not looked at");
	else
		host_text_read(src->interrupts ? src->interrupts : "/proc/interrupts", &ptext, &plen,
			  pwhy, sizeof(pwhy));

	ret = vtext ? vgic_state_parse(vtext, vlen, &vs) : 0;
	if (vtext && !ret) {
		/* A file with no Distributor part and no IRQ is not a vgic-state. */
		if (!vs.nr_irq && vs.nr_spis < 0 && !vs.model[0]) {
			sfmt(vwhy, sizeof(vwhy), "%s: no vgic-state in it (%u lines not understood)",
			     vp ? vp : vpath, vs.skipped);
			vgic_state_free(&vs);
		} else {
			in.vgic = &vs;
		}
	}
	if (!ret && itext) {
		ret = its_state_parse(itext, ilen, &is);
		if (!ret)
			in.its = &is;
	}
	if (!ret && ptext) {
		ret = proc_interrupts_parse(ptext, plen, &pi);
		if (!ret && !pi.nr_cpus) {
			sfmt(pwhy, sizeof(pwhy), "/proc/interrupts: no CPU header line");
			proc_interrupts_free(&pi);
		} else if (!ret) {
			in.pi = &pi;
		}
	}
	in.vgic_why = vwhy;
	in.its_why = iwhy;
	in.pi_why = pwhy;
	if (!ret)
		ret = vlpi_join(&in, dev, out);
	if (in.vgic)
		vgic_state_free(&vs);
	if (in.its)
		its_state_free(&is);
	if (in.pi)
		proc_interrupts_free(&pi);
	free(vtext);
	free(itext);
	free(ptext);
	return ret;
}

/* ---- formatting ---- */

VMM_HOT_VF const char *vlpi_status_name(enum vlpi_status s)
{
	switch (s) {
	case VLPI_FORWARDED: return "vlpi";
	case VLPI_SOFTWARE: return "software";
	case VLPI_DOORBELLS: return "doorbells";
	case VLPI_NOT_ENABLED: return "not-enabled";
	case VLPI_UNKNOWN: break;
	}
	return "unknown";
}

VMM_HOT_VF const char *vlpi_evidence_name(enum vlpi_evidence e)
{
	switch (e) {
	case VLPI_EV_ITS_STATE: return "vgic-its-state";
	case VLPI_EV_VGIC_HWID: return "vgic-state-hwid";
	case VLPI_EV_VGIC_COUNT: return "vgic-state";
	case VLPI_EV_DOORBELLS: return "doorbells";
	case VLPI_EV_HOST_IRQS: return "proc-interrupts";
	case VLPI_EV_NONE: break;
	}
	return "none";
}

/* snprintf that keeps count past the end, so the caller learns the size it needed. */
struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
VMM_HOT_VF static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t room = o->len < o->size ? o->size - o->len : 0;

	va_start(ap, fmt);
	int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);

	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

/* What one vector says, without its number. */
VMM_HOT_VF static void vector_text(struct out *o, const struct vlpi_vector *v)
{
	switch (v->status) {
	case VLPI_FORWARDED:
		if (v->lpi >= 0) {
			put(o, "vLPI (LPI %" PRId64, v->lpi);
			if (v->vcpu >= 0)
				put(o, ", vCPU %d", v->vcpu);
			put(o, ")");
		} else if (v->nr_cand) {
			put(o, "vLPI (one of LPI");
			for (unsigned int c = 0; c < v->nr_cand && c < VLPI_MAX_CAND; c++)
				put(o, "%s%" PRIu32, c ? ", " : " ", v->cand[c]);
			put(o, ")");
		} else {
			put(o, "vLPI");
		}
		break;
	case VLPI_SOFTWARE:
		put(o, "software-injected");
		break;
	case VLPI_DOORBELLS:
		put(o, "doorbells seen (%" PRIu64 ")", v->doorbells);
		break;
	case VLPI_NOT_ENABLED:
		put(o, "not enabled");
		break;
	case VLPI_UNKNOWN:
		put(o, "unknown: %s", v->reason);
		break;
	}
}

VMM_HOT_VF size_t vlpi_format_line(char *buf, size_t size, const struct vlpi_dev *dev,
			const struct vlpi_vector *v, unsigned int n)
{
	struct out o = { buf, size, 0 };
	char a[320], b[320];

	if (buf && size)
		buf[0] = '\0';
	put(&o, "vfio %s", dev && dev->bdf ? dev->bdf : "?");
	if (dev && dev->guest_bdf)
		put(&o, " -> %s", dev->guest_bdf);
	put(&o, ":");
	if (!n || !v)
		put(&o, " no vectors enabled");
	for (unsigned int i = 0; v && i < n;) {
		struct out oa = { a, sizeof(a), 0 };
		unsigned int j = i + 1;

		vector_text(&oa, &v[i]);
		/* Fold a run of vectors that read the same. */
		for (; j < n; j++) {
			struct out ob = { b, sizeof(b), 0 };

			vector_text(&ob, &v[j]);
			if (strcmp(a, b) || v[j].status == VLPI_FORWARDED)
				break;
		}
		if (j - i > 1)
			put(&o, "%s vectors %u-%u %s", i ? "," : "", v[i].index, v[j - 1].index, a);
		else
			put(&o, "%s vector %u %s", i ? "," : "", v[i].index, a);
		i = j;
	}
	if (buf && size && o.len >= size)
		buf[size - 1] = '\0';
	return o.len;
}

VMM_HOT_VF static void put_json_str(struct out *o, const char *s)
{
	put(o, "\"");
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			put(o, "\\%c", c);
		else if (c < 0x20)
			put(o, "\\u%04x", c);
		else
			put(o, "%c", c);
	}
	put(o, "\"");
}

VMM_HOT_VF size_t vlpi_format_json(char *buf, size_t size, const struct vlpi_dev *dev,
			const struct vlpi_vector *v, unsigned int n)
{
	struct out o = { buf, size, 0 };

	if (buf && size)
		buf[0] = '\0';
	put(&o, "{\"bdf\":");
	put_json_str(&o, dev && dev->bdf ? dev->bdf : "");
	put(&o, ",\"guest_bdf\":");
	put_json_str(&o, dev && dev->guest_bdf ? dev->guest_bdf : "");
	put(&o, ",\"vectors\":[");
	for (unsigned int i = 0; v && i < n; i++) {
		const struct vlpi_vector *x = &v[i];

		put(&o, "%s{\"vector\":%u,\"status\":\"%s\",\"evidence\":\"%s\",\"host_irq\":%d,"
		    "\"hwirq\":%" PRId64 ",\"host_count\":%" PRIu64 ",\"lpi\":%" PRId64 ",\"vcpu\":%d",
		    i ? "," : "", x->index, vlpi_status_name(x->status), vlpi_evidence_name(x->evidence),
		    x->host_irq, x->hwirq, x->host_count, x->lpi, x->vcpu);
		if (x->nr_cand) {
			put(&o, ",\"lpi_candidates\":[");
			for (unsigned int c = 0; c < x->nr_cand && c < VLPI_MAX_CAND; c++)
				put(&o, "%s%" PRIu32, c ? "," : "", x->cand[c]);
			put(&o, "]");
		}
		if (x->status == VLPI_DOORBELLS)
			put(&o, ",\"doorbells\":%" PRIu64, x->doorbells);
		put(&o, ",\"reason\":");
		put_json_str(&o, x->reason);
		put(&o, "}");
	}
	put(&o, "]}");
	if (buf && size && o.len >= size)
		buf[size - 1] = '\0';
	return o.len;
}
