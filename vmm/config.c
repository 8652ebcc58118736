// SPDX-License-Identifier: MIT
/* The "vmm run" command line (getopt_long) and size parsing. */
#include <errno.h>
#include <grp.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "virtio/virtio.h"
#include "core/log.h"
#include "vmm/config.h"
#include "vmm/probe_peer.h"
#include "core/vm.h"

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	uint64_t shift = 20; /* a bare number is MiB, as in QEMU and kvmtool */

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);

	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if ((*end == 'i' || *end == 'I') && end[1] == 'B')
		end += 2;
	else if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

void config_usage(FILE *f)
{
	fprintf(f,
		"usage: vmm run [options]\n"
		"  -k, --kernel FILE     kernel: arm64 Image, Image.gz or EFI zboot vmlinuz\n"
		"                        (default: the host's /boot/vmlinuz-$(uname -r) or /boot/Image)\n"
		"      --kernel-format auto|image|flat  auto (default): Image, Image.gz or zboot;\n"
		"                        image: a raw Image only; flat: a bare-metal binary loaded as is\n"
		"                        at RAM + 0x80000 and entered there with the FDT in x0\n"
		"  -i, --initrd FILE     initramfs (default with the default kernel: vmm's built-in guest)\n"
		"  -p, --params STRING   kernel command line (default: \"%s\")\n"
		"  -c, --cpus N          vCPUs (default 1; at most %d, the board's GIC redistributor room)\n"
		"  -m, --mem SIZE        guest RAM: 512M, 2G, or MiB (default 256M)\n"
		"  -d, --disk PATH[,ro]  a raw disk image as virtio-blk (repeatable; ,ro: read-only)\n"
		"      --net tap=NAME[,mac=MAC][,vhost=on|off][,vhost-dev=PATH]  virtio-net on a tap device\n"
		"                        (repeatable); frames moved by vhost-net where /dev/vhost-net opens\n"
		"                        (default; vhost=off: by vmm's worker; vhost-dev: another node)\n"
		"      --halt-poll-ns N  the VM's halt-polling ceiling (KVM_CAP_HALT_POLL; 0: no polling;\n"
		"                        default: the kvm module's halt_poll_ns); changeable with vmm ctl\n"
		"      --ctl PATH        a control socket (vmm ctl PATH get|set halt-poll-ns N|stats; vmm stat),\n"
		"                        mode 0600: vmm's own user and root only\n"
		"      --ctl-group NAME  the control socket 0660, owned by group NAME, whose members may\n"
		"                        use it too\n"
		"      --stats FILE      write the run's KVM stats as JSON: the run phase (from the guest's\n"
		"                        init, or its vmm-boot-end line, to exit), the boot phase, intervals\n"
		"      --stats-interval S  a stats snapshot every S seconds, in the --stats JSON\n"
		"      --probe-out PATH  the latency probe's frames (vmm.probe= in -p) as they arrive on\n"
		"                        its virtio-console port, written to PATH (a file or a pipe)\n"
		"      --attribute[=FILE]  split each probe sample's latency into host stages from KVM's\n"
		"                        tracepoints (perf_event_open, root or CAP_PERFMON, tracefs\n"
		"                        mounted): a report at exit, and as JSON in FILE\n"
		"      --vfio BDF[,addr=SLOT][,token=UUID]  pass a host PCI function bound to vfio-pci\n"
		"                        through (repeatable; vmm vf prepares SR-IOV VFs); its MSI-X\n"
		"                        vectors go to KVM directly (GICv4: vLPIs), reported at exit\n"
		"      --vfio-backend auto|legacy|iommufd  how --vfio devices are opened: auto\n"
		"                        (default) takes iommufd when /dev/iommu and /dev/vfio/devices\n"
		"                        exist, else the legacy type1 container and groups\n"
		"      --console KIND    serial (16550 UART, ttyS0), virtio (virtio-console, hvc0)\n"
		"                        or none; the default command line follows the choice\n"
		"      --dump-dtb FILE   write the guest's device tree to FILE and exit\n"
		"      --timeout SECONDS stop the guest after SECONDS as hung (exit status 4)\n"
		"      --summary short|full  the exit summary's halt histograms: one line each with the\n"
		"                        buckets p50/p90/p99 fall in (short, the default), or also a bar\n"
		"                        per non-empty bucket (full)\n"
		"      --probe-peer IFNAME[,port=N]  answer the guest probe's udp workload on the host\n"
		"                        interface's IPv6 link-local address (a tap, or a passed-through\n"
		"                        VF's PF; port 7777); the guest learns it as vmm.probe_peer=ADDR\n"
		"      --no-sandbox      run without the per-thread seccomp allowlists\n"
		"      --sandbox-log     let the kernel log (audit) what the allowlists would refuse,\n"
		"                        refusing nothing: for finding a new device's system calls\n"
		"arm64 only:\n"
		"      --cpu FEATURE=VALUE[,...]  the vCPUs' features, the same on every vCPU:\n"
		"                        sve=on|off|auto|BITS (BITS: the largest vector length, a\n"
		"                        multiple of 128 up to 2048), pauth=on|off|auto (pointer\n"
		"                        authentication, address and generic keys), pmu=on|off|auto\n"
		"                        (PMUv3, overflow interrupt on PPI 7 = INTID 23); default auto:\n"
		"                        what the host offers (vmm caps); on refuses a host without it\n"
		"x86_64 only:\n"
		"      --pv KNOB=on|off|auto[,...]  PV features in CPUID 0x40000001: pv-ipi, pv-unhalt,\n"
		"                        pv-tlb-flush, pv-sched-yield, poll-control, msi-ext-dest-id,\n"
		"                        hint-dedicated (KVM_HINTS_REALTIME); default: what KVM offers,\n"
		"                        less pv-ipi where AVIC/IPIv would be bypassed (printed at start)\n"
		"      --pv-ipi auto|on|off  the same as --pv pv-ipi=...\n"
		"      --irqchip kernel|split  kernel: the in-kernel PIC/IOAPIC/PIT (default); split: LAPICs in\n"
		"                        KVM, vmm's IOAPIC, no PIC/PIT (KVM_CAP_SPLIT_IRQCHIP)\n"
		"      --apic x2apic|xapic  the guest's APIC mode (default x2apic where KVM offers it)\n"
		"      --no-hlt-exit     HLT stays in the guest (KVM_CAP_X86_DISABLE_EXITS; hides pv-unhalt)\n"
		"  -h, --help            this text\n"
		"Exit status: 0 guest powered off, 1 vmm error, 2 guest reset, 3 guest crash,\n"
		"4 guest hung (--timeout), 5 a vmm thread broke its seccomp allowlist,\n"
		"128+N vmm stopped by signal N. On the serial console, Ctrl-A x quits.\n",
		CONFIG_DEFAULT_PARAMS, VM_MAX_VCPUS);
}

static int config_parse_kernel_format(struct vm_config *c, const char *arg)
{
	static const char *const names[] = {
		[KERNEL_FORMAT_AUTO] = "auto", [KERNEL_FORMAT_IMAGE] = "image", [KERNEL_FORMAT_FLAT] = "flat",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i])) {
			c->kernel_format = i;
			return 0;
		}
	}
	pr_err("--kernel-format takes auto, image or flat, not '%s'", arg);
	return -EINVAL;
}

/* PATH[,ro]: any path is taken whole (commas included); only a trailing ",ro" is an option. */
static int config_parse_disk(struct vm_config *c, const char *arg)
{
	struct vm_disk *d = &c->disk[c->nr_disks];
	size_t len = strlen(arg);
	bool ro = len >= 3 && !strcmp(arg + len - 3, ",ro");

	if (c->nr_disks == CONFIG_MAX_DISKS) {
		pr_err("-d/--disk: at most %d disks", CONFIG_MAX_DISKS);
		return -EINVAL;
	}
	if (ro)
		len -= 3;
	if (len == 0 || len >= sizeof(d->path)) {
		pr_err("-d/--disk: the path is empty or longer than %zu bytes", sizeof(d->path) - 1);
		return -EINVAL;
	}
	memcpy(d->path, arg, len);
	d->path[len] = 0;
	d->ro = ro;
	c->nr_disks++;
	return 0;
}

/* tap=NAME[,mac=52:54:00:12:34:56][,vhost=on|off][,vhost-dev=PATH], walked item by item in place: no length limit to cut at. */
static int config_parse_net(struct vm_config *c, const char *arg)
{
	struct vm_net *n = &c->net[c->nr_nets];

	if (c->nr_nets == CONFIG_MAX_NETS) {
		pr_err("--net: at most %d network devices", CONFIG_MAX_NETS);
		return -EINVAL;
	}
	memset(n, 0, sizeof(*n));
	/* a locally administered default, different for each device */
	const uint8_t def[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 + c->nr_nets };

	memcpy(n->mac, def, 6);
	for (const char *kv = arg; *kv; kv += *kv == ',') {
		size_t len = strcspn(kv, ",");
		char item[128]; /* the longest valid item, vhost-dev=PATH, is 10 + 107 */
		unsigned int m[6];
		char end;

		if (len == 0)
			continue; /* empty items, as in "a,,b" */
		bool fits = len < sizeof(item);

		if (fits)
			snprintf(item, sizeof(item), "%.*s", (int)len, kv);
		kv += len;
		if (fits && !strncmp(item, "tap=", 4) && item[4] && strlen(item + 4) < sizeof(n->tap)) {
			snprintf(n->tap, sizeof(n->tap), "%s", item + 4);
		} else if (fits && !strncmp(item, "mac=", 4) &&
			   sscanf(item + 4, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3], &m[4],
				  &m[5], &end) == 6 && !(m[0] & 1)) {
			for (int i = 0; i < 6; i++)
				n->mac[i] = m[i];
		} else if (fits && (!strcmp(item, "vhost=on") || !strcmp(item, "vhost=off"))) {
			n->vhost = !strcmp(item, "vhost=on") ? NET_VHOST_ON : NET_VHOST_OFF;
		} else if (fits && !strncmp(item, "vhost-dev=", 10) && item[10] == '/' &&
			   strlen(item + 10) < sizeof(n->vhost_dev)) {
			snprintf(n->vhost_dev, sizeof(n->vhost_dev), "%s", item + 10);
		} else {
			pr_err("--net %s: expected tap=NAME (at most 15 characters)[,mac=XX:XX:XX:XX:XX:XX, "
			       "a unicast address][,vhost=on|off][,vhost-dev=/PATH (at most %zu characters)]",
			       arg, sizeof(n->vhost_dev) - 1);
			return -EINVAL;
		}
	}
	if (!n->tap[0]) {
		pr_err("--net %s: tap=NAME is required", arg);
		return -EINVAL;
	}
	c->nr_nets++;
	return 0;
}

/* BDF[,addr=SLOT][,token=UUID]; a BDF without its domain gets 0000. */
static int config_parse_vfio(struct vm_config *c, const char *arg)
{
	struct vm_vfio *v = &c->vfio[c->nr_vfio];
	unsigned int dom = 0, bus, dev, fn;
	int used = 0;
	const char *p = arg;

	if (c->nr_vfio == CONFIG_MAX_VFIO) {
		pr_err("--vfio: at most %d devices", CONFIG_MAX_VFIO);
		return -EINVAL;
	}
	memset(v, 0, sizeof(*v));
	v->slot = -1;
	if (sscanf(p, "%4x:%2x:%2x.%1u%n", &dom, &bus, &dev, &fn, &used) != 4 || (p[used] && p[used] != ',')) {
		dom = 0;
		if (sscanf(p, "%2x:%2x.%1u%n", &bus, &dev, &fn, &used) != 3 || (p[used] && p[used] != ',')) {
			pr_err("--vfio %s: expected a PCI address like 0000:00:13.0 (vmm vf list shows them)", arg);
			return -EINVAL;
		}
	}
	if (dev > 31 || fn > 7) {
		pr_err("--vfio %s: device is 0-1f and function 0-7", arg);
		return -EINVAL;
	}
	snprintf(v->bdf, sizeof(v->bdf), "%04x:%02x:%02x.%u", dom, bus, dev, fn);
	for (p += used; *p == ','; ) {
		const char *item = ++p;
		size_t n = strcspn(item, ",");
		char *end;

		if (!strncmp(item, "addr=", 5)) {
			long slot = strtol(item + 5, &end, 0);

			if (end != item + n || end == item + 5 || slot < 1 || slot > 31) {
				pr_err("--vfio %s: addr= takes the guest's PCI slot, 1 to 31", arg);
				return -EINVAL;
			}
			v->slot = slot;
		} else if (!strncmp(item, "token=", 6) && n - 6 == 36) {
			memcpy(v->token, item + 6, 36);
		} else {
			pr_err("--vfio %s: expected BDF[,addr=SLOT][,token=UUID (36 characters)]", arg);
			return -EINVAL;
		}
		p = item + n;
	}
	/* one host function goes to one place in one guest; a slot holds one device */
	for (unsigned int i = 0; i < c->nr_vfio; i++) {
		if (!strcmp(c->vfio[i].bdf, v->bdf)) {
			pr_err("--vfio %s: %s is given twice; a device can be passed through once", arg, v->bdf);
			return -EINVAL;
		}
		if (v->slot > 0 && c->vfio[i].slot == v->slot) {
			pr_err("--vfio %s: guest slot %d is already %s's (addr=); give each device its own "
			       "slot", arg, v->slot, c->vfio[i].bdf);
			return -EINVAL;
		}
	}
	c->nr_vfio++;
	return 0;
}

bool config_wants_probe(const struct vm_config *c)
{
	for (const char *p = c->params; p && (p = strstr(p, "vmm.probe=")); p++)
		if (p == c->params || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n')
			return true;
	return false;
}

bool config_has_x86_opts(const struct vm_config *c)
{
	return c->pv[0] || c->irqchip || c->apic || c->no_hlt_exit;
}

/* --ctl-group NAME: a group in /etc/group (read directly, not through NSS: the arm64 vmm is
 * static, and glibc's NSS would need the host's shared libraries at run time), or a number. */
static int ctl_group(const char *name, gid_t *gid)
{
	char buf[16384], *end;
	struct group g, *res = NULL;
	unsigned long n = strtoul(name, &end, 10);
	FILE *f;

	if (*name >= '0' && *name <= '9' && !*end && n < (gid_t)-1) {
		*gid = (gid_t)n;
		return 0;
	}
	if ((f = fopen("/etc/group", "re"))) {
		while (fgetgrent_r(f, &g, buf, sizeof(buf), &res) == 0 && res && strcmp(res->gr_name, name))
			res = NULL;
		fclose(f);
	}
	if (res) {
		*gid = res->gr_gid;
		return 0;
	}
	pr_err("--ctl-group %s: no such group in /etc/group; name a group whose members may use the "
	       "control socket (or give its number)", name);
	return -EINVAL;
}

bool config_has_arm64_opts(const struct vm_config *c)
{
	return c->cpu.given;
}

/* Long-only options: values past any character, so no short option can take them. */
enum { OPT_PROBE_PEER = 0x200, OPT_CTL_GROUP, OPT_SUMMARY, OPT_ATTRIBUTE };

/* vmm run's options: short letters for the few a user types, the rest long-only. */
static const struct option run_opts[] = {
	{ "kernel", required_argument, NULL, 'k' },
	{ "kernel-format", required_argument, NULL, 'K' },
	{ "initrd", required_argument, NULL, 'i' },
	{ "params", required_argument, NULL, 'p' },
	{ "cpus", required_argument, NULL, 'c' },
	{ "mem", required_argument, NULL, 'm' },
	{ "console", required_argument, NULL, 'C' },
	{ "dump-dtb", required_argument, NULL, 'D' },
	{ "disk", required_argument, NULL, 'd' },
	{ "net", required_argument, NULL, 'N' },
	{ "vfio", required_argument, NULL, 'V' },
	{ "halt-poll-ns", required_argument, NULL, 'H' },
	{ "ctl", required_argument, NULL, 'L' },
	{ "stats", required_argument, NULL, 'S' },
	{ "stats-interval", required_argument, NULL, 'J' },
	{ "probe-out", required_argument, NULL, 'R' },
	{ "vfio-backend", required_argument, NULL, 'B' },
	{ "pv", required_argument, NULL, 'P' },
	{ "pv-ipi", required_argument, NULL, 'I' },
	{ "irqchip", required_argument, NULL, 'Q' },
	{ "apic", required_argument, NULL, 'A' },
	{ "no-hlt-exit", no_argument, NULL, 'T' },
	{ "timeout", required_argument, NULL, 't' },
	{ "no-sandbox", no_argument, NULL, 'n' },
	{ "sandbox-log", no_argument, NULL, 'l' },
	{ "probe-peer", required_argument, NULL, OPT_PROBE_PEER },
	{ "ctl-group", required_argument, NULL, OPT_CTL_GROUP },
	{ "cpu", required_argument, NULL, 'U' },
	{ "summary", required_argument, NULL, OPT_SUMMARY },
	{ "attribute", optional_argument, NULL, OPT_ATTRIBUTE },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* The options that take a number or a size: parsed, range-checked, stored. */
static int run_opt_number(struct vm_config *c, int o, const char *arg)
{
	char *end;

	switch (o) {
	case 'H': {
		errno = 0;
		unsigned long long ns = strtoull(arg, &end, 10);

		if (errno || *end || end == arg || *arg == '-' || ns > UINT32_MAX) {
			pr_err("--halt-poll-ns takes a whole number of nanoseconds up to %u (0: no "
			       "polling), not '%s'", UINT32_MAX, arg);
			return -EINVAL;
		}
		c->has_halt_poll_ns = true;
		c->halt_poll_ns = ns;
		return 0;
	}
	case 't': {
		errno = 0;
		unsigned long s = strtoul(arg, &end, 10);

		if (errno || *end || end == arg || *arg == '-' || s < 1 || s > 86400 * 365) {
			pr_err("--timeout takes whole seconds from 1 to 31536000, not '%s'", arg);
			return -EINVAL;
		}
		c->timeout = s;
		return 0;
	}
	case 'J': {
		double sec = strtod(arg, &end);

		if (*end || end == arg || !(sec >= 0.1 && sec <= 3600)) {
			pr_err("--stats-interval takes seconds from 0.1 to 3600, not '%s'", arg);
			return -EINVAL;
		}
		c->stats_interval_ms = (unsigned int)(sec * 1000 + 0.5);
		return 0;
	}
	case 'c': {
		errno = 0;
		long n = strtol(arg, &end, 10);

		if (errno || *end || end == arg || n < 1 || n > VM_MAX_VCPUS) {
			pr_err("-c/--cpus takes a number of vCPUs from 1 to %d (the board's room for "
			       "GIC redistributors), not '%s'", VM_MAX_VCPUS, arg);
			return -EINVAL;
		}
		c->nr_cpus = n;
		return 0;
	}
	case 'm':
		if (parse_size(arg, &c->mem_size) < 0 || c->mem_size < (64ULL << 20)) {
			pr_err("-m/--mem takes a size of at least 64M such as 512M or 2G, not '%s'", arg);
			return -EINVAL;
		}
		return 0;
	}
	return 1;
}

/* The options that pick one of a few words, or add to a list of knobs (--pv). */
static int run_opt_choice(struct vm_config *c, int o, const char *arg)
{
	switch (o) {
	case 'P':
	case 'I': {
		size_t n = strlen(c->pv);

		if (snprintf(c->pv + n, sizeof(c->pv) - n, "%s%s%s", n ? "," : "",
			     o == 'I' ? "pv-ipi=" : "", arg) >= (int)(sizeof(c->pv) - n)) {
			pr_err("--pv: more than %zu characters of knobs", sizeof(c->pv) - 1);
			return -EINVAL;
		}
		return 0;
	}
	case OPT_SUMMARY:
		if (strcmp(arg, "short") && strcmp(arg, "full")) {
			pr_err("--summary takes short or full, not '%s'", arg);
			return -EINVAL;
		}
		c->summary_full = !strcmp(arg, "full");
		return 0;
	case 'B':
		if (vfio_backend_parse(arg, &c->vfio_backend) < 0) {
			pr_err("--vfio-backend takes auto, legacy or iommufd, not '%s'", arg);
			return -EINVAL;
		}
		return 0;
	case 'C':
		if (!strcmp(arg, "serial"))
			c->console = CONSOLE_SERIAL;
		else if (!strcmp(arg, "virtio"))
			c->console = CONSOLE_VIRTIO;
		else if (!strcmp(arg, "none"))
			c->console = CONSOLE_NONE;
		else {
			pr_err("--console takes serial, virtio or none, not '%s'", arg);
			return -EINVAL;
		}
		return 0;
	}
	return 1;
}

/* One option of vmm run (not --help): 0, -EINVAL after a message, 1 when o is none of them. */
static int run_opt(struct vm_config *c, int o, char *arg)
{
	switch (o) {
	case 'k': c->kernel = arg; return 0;
	case 'K': return config_parse_kernel_format(c, arg) < 0 ? -EINVAL : 0;
	case 'i': c->initrd = arg; return 0;
	case 'p': c->params = arg; return 0;
	case 'D': c->dump_dtb = arg; return 0;
	case 'd': return config_parse_disk(c, arg) < 0 ? -EINVAL : 0;
	case 'N': return config_parse_net(c, arg) < 0 ? -EINVAL : 0;
	case 'V': return config_parse_vfio(c, arg) < 0 ? -EINVAL : 0;
	case 'U': return cpu_opts_parse(&c->cpu, arg) < 0 ? -EINVAL : 0;
	case 'Q': c->irqchip = arg; return 0;
	case 'A': c->apic = arg; return 0;
	case 'T': c->no_hlt_exit = true; return 0;
	case 'L': c->ctl = arg; return 0;
	case OPT_CTL_GROUP:
		if (ctl_group(arg, &c->ctl_gid) < 0)
			return -EINVAL;
		c->has_ctl_gid = true;
		return 0;
	case 'n': c->sandbox = SANDBOX_OFF; return 0;
	case 'l': c->sandbox = SANDBOX_LOG; return 0;
	case 'S': c->stats = arg; return 0;
	case OPT_PROBE_PEER:
		return probe_peer_parse(arg, c->probe_peer, sizeof(c->probe_peer), &c->probe_peer_port) < 0 ?
			       -EINVAL : 0;
	case 'R': c->probe_out = arg; return 0;
	case OPT_ATTRIBUTE:
		c->attribute = true;
		c->attribute_json = arg && *arg ? arg : NULL;
		return 0;
	}
	int r = run_opt_number(c, o, arg);

	return r == 1 ? run_opt_choice(c, o, arg) : r;
}

int config_parse_run(struct vm_config *c, int argc, char **argv)
{
	int o;

	memset(c, 0, sizeof(*c));
	c->nr_cpus = 1;
	c->mem_size = 256ULL << 20;
	c->console = CONSOLE_SERIAL;
	c->sandbox = SANDBOX_ENFORCE;
	/* 0, not 1: GNU getopt then re-initialises fully, forgetting a cluster an earlier parse
	 * stopped inside ("-hc2") and an earlier caller's ordering ("+" in main) */
	optind = 0;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":k:i:p:c:m:d:h", run_opts, NULL)) != -1) {
		if (o == 'h')
			return 1;
		if (o == ':') {
			pr_err("option '%s' needs a value (vmm run --help)", argv[optind - 1]);
			return -EINVAL;
		}
		int r = run_opt(c, o, optarg);

		if (r == 1) {
			pr_err("unknown option '%s' (vmm run --help lists them)", argv[optind - 1]);
			return -EINVAL;
		}
		if (r < 0)
			return -EINVAL;
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s' (vmm run --help)", argv[optind]);
		return -EINVAL;
	}
	if (c->has_ctl_gid && !c->ctl) {
		pr_err("--ctl-group names who may use the control socket: it needs --ctl PATH");
		return -EINVAL;
	}
	return 0;
}
