// SPDX-License-Identifier: MIT
/* make bench's peer: QEMU/KVM's argv and its runs, one beside each of vmm's in the start-up, memory,
 * virtio-blk and virtio-net sections (figures qemu.NAME and qemu_vhost.NAME). */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/lab/bench_lab.h"
#include "tests/lab/labutil.h"

/*
 * QEMU/KVM as the peer: the same kernel, guest, RAM and vCPUs as vmm's runs, on a virt machine
 * with the host's GIC, KVM and the host's CPU; no default devices and no NIC unless the step
 * asks for one (a tap in the bench's own namespace). The guest's console is the PL011.
 */

/* argv for QEMU booting kernel with initrd and append (either NULL: none), RAM_MIB and 2 vCPUs,
 * followed by extra. */
static void qemu_argv_kernel(char **argv, size_t n, const char *kernel, const char *initrd, const char *append,
			     char *const extra[])
{
	static char mem[16];
	char *const base[] = { QEMU_LOADER, "--library-path", QEMU_DIR "/lib",
			       QEMU_BIN, "-L", QEMU_DIR, "-M", QEMU_MACHINE,
			       "-accel", "kvm", "-cpu", "host", "-smp", "2", "-m", mem, "-nodefaults", "-nic",
			       "none", "-display", "none", "-serial", "stdio", "-no-reboot",
			       /* its threads named (CPU N/KVM, worker...): vCPUs told from its own */
			       "-name", "bench,debug-threads=on", "-kernel", (char *)kernel };
	size_t i = 0;

	snprintf(mem, sizeof(mem), "%dM", RAM_MIB);
	for (size_t k = 0; k < sizeof(base) / sizeof(base[0]) && i + 1 < n; k++)
		argv[i++] = base[k];
	if (initrd && i + 3 < n) {
		argv[i++] = "-initrd";
		argv[i++] = (char *)initrd;
	}
	if (append && i + 3 < n) {
		argv[i++] = "-append";
		argv[i++] = (char *)append;
	}
	for (size_t k = 0; extra && extra[k] && i + 1 < n; k++)
		argv[i++] = extra[k];
	argv[i] = NULL;
}

/* argv for QEMU booting the bench's kernel with initrd and append. */
void qemu_argv(const struct bench *b, char **argv, size_t n, const char *initrd, const char *append,
	       char *const extra[])
{
	qemu_argv_kernel(argv, n, b->kernel, initrd, append, extra);
}

/* A failed QEMU run: what it printed, and that this section's peer figures stop here. */
static bool qemu_failed(const char *what, const struct result *r)
{
	const char *e = r->err && r->err[0] ? r->err : r->out ? r->out : "";
	size_t n = strlen(e);

	printf("bench: QEMU peer: %s: QEMU exited %d; the section's further QEMU figures are skipped; its "
	       "output ends:\n%s\n", what, r->status, e + (n > 1500 ? n - 1500 : 0));
	return false;
}

/* Whether QEMU is there and starts; says why not. */
bool qemu_probe(void)
{
	char *const argv[] = { QEMU_LOADER, "--library-path", QEMU_DIR "/lib", QEMU_BIN, "-version", NULL };
	struct result r;
	bool ok;

	if (access(QEMU_BIN, X_OK) || access(BUILTIN_GUEST, R_OK)) {
		printf("bench: QEMU peer skipped: no %s or %s (" QEMU_HOW ")\n", QEMU_BIN, BUILTIN_GUEST);
		return false;
	}
	run_vmm(argv, 120, &r);
	ok = r.status == 0 && strstr(r.out, "QEMU emulator version");
	if (ok)
		printf("bench: QEMU peer: %.*s\n", (int)strcspn(r.out, "\n"), r.out);
	else
		printf("bench: QEMU peer skipped: %s -version exited %d: %s\n", QEMU_DIR, r.status, r.err);
	result_free(&r);
	return ok;
}

/* vmm's start-up boot in QEMU: the built-in guest's cpio, to its banner and to QEMU's exit; the
 * ms to the banner, -1 when it failed. */
double qemu_startup_one(struct bench *b)
{
	char *argv[48];
	struct result r;
	double ms = -1;

	qemu_argv(b, argv, 48, BUILTIN_GUEST, QEMU_CONSOLE " earlycon panic=-1 quiet", NULL);
	run_vmm(argv, 600, &r);
	if (r.status == 0 && r.banner_secs >= 0) {
		ms = r.banner_secs * 1e3;
		add(b, "qemu.startup.guest_init", "ms", false, ms);
		guest_clock_split(b, "qemu.", r.out, ms, 0);
		add(b, "qemu.startup.process_exit", "ms", false, r.secs * 1e3);
	} else {
		qemu_failed("start-up", &r);
	}
	result_free(&r);
	return ms;
}

/* The poweroff payload in QEMU: launch to exit, as first_instruction_one times vmm's (ms, -1:
 * failed). */
double qemu_first_instruction_one(struct bench *b)
{
	char *argv[48];
	struct result r;
	double ms = -1;

	qemu_argv_kernel(argv, 48, POWEROFF_IMAGE, NULL, NULL, NULL);
	run_vmm(argv, 120, &r);
	if (r.status == 0) {
		ms = r.secs * 1e3;
		add(b, "qemu.startup.first_instruction_exit", "ms", false, ms);
	} else {
		qemu_failed("poweroff payload", &r);
	}
	result_free(&r);
	return ms;
}

/* The test guest idle: QEMU's RSS beyond guest RAM. */
bool qemu_memory_one(struct bench *b)
{
	char *argv[48];
	struct rss_probe p = { b, "qemu.memory.rss_beyond_guest_ram", false, 0, 0, "qemu.idle.wakeups_per_s" };
	struct run_opts o = { .timeout = 300, .term_on = "GUEST-HOLD", .on_match = read_rss, .match_arg = &p };
	struct result r;
	bool ok;

	qemu_argv(b, argv, 48, "/lab/guest.cpio.gz", QEMU_CONSOLE " panic=-1 quiet vmmtest=hold vmmplain=1", NULL);
	run_vmm_opts(argv, &o, &r);
	ok = strstr(r.out, "GUEST-HOLD") != NULL;
	if (!ok)
		qemu_failed("memory (test guest, idle)", &r);
	result_free(&r);
	return ok;
}

/* blkbench on the same disk: raw, O_DIRECT (cache=none) with Linux AIO, virtio-blk-pci with
 * QEMU's defaults (a queue per vCPU). */
bool qemu_blk_one(struct bench *b, int reps)
{
	char *argv[48], append[160], drive[200];
	char *const extra[] = { "-drive", drive, "-device", "virtio-blk-pci,drive=d0", NULL };
	struct result r;
	bool ok;

	snprintf(append, sizeof(append), QEMU_CONSOLE " panic=-1 quiet vmmtest=blkbench vmmbenchreps=%d "
		 "vmmbenchms=%d", reps, b->io_ms);
	snprintf(drive, sizeof(drive), "file=%s,if=none,id=d0,format=raw,cache=none,aio=native", b->disk);
	qemu_argv(b, argv, 48, "/lab/guest.cpio.gz", append, extra);
	run_cpu_per_op(argv, 900, b, "qemu.", "", &r);
	blk_figures(b, r.out, "qemu.");
	ok = r.status == 0 && strstr(r.out, "GUEST-BLKBENCH ");
	if (!ok)
		qemu_failed("virtio-blk", &r);
	result_free(&r);
	return ok;
}

/* Whether QEMU can have vhost-net here (the module loaded, /dev/vhost-net usable); says why not. */
bool qemu_vhost_usable(void)
{
	if (lab_sh("modprobe vhost_net 2>/dev/null; [ -c /dev/vhost-net ]") || access("/dev/vhost-net", R_OK | W_OK)) {
		printf("bench: QEMU peer with vhost-net skipped: no usable /dev/vhost-net (modprobe vhost_net)\n");
		return false;
	}
	return true;
}

/* netbench over a tap QEMU opens in the bench's namespace: QEMU's userspace virtio-net, or the
 * kernel's vhost-net. */
bool qemu_net_one(struct bench *b, int reps, bool vhost)
{
	pthread_t t;
	char *argv[48], append[160];
	char *const extra[] = { "-netdev",
				vhost ? "tap,id=n0,ifname=" TAP ",script=no,downscript=no,vhost=on"
				      : "tap,id=n0,ifname=" TAP ",script=no,downscript=no,vhost=off",
				/* romfile=: no option ROM (-kernel boots; QEMU's data files are not packed) */
				"-device", "virtio-net-pci,netdev=n0,mac=02:00:00:00:00:02,romfile=", NULL };
	struct result r;
	bool ok;

	snprintf(append, sizeof(append), QEMU_CONSOLE " panic=-1 quiet vmmtest=netbench vmmbenchreps=%d "
		 "vmmbenchms=%d", reps, b->io_ms);
	qemu_argv(b, argv, 48, "/lab/guest.cpio.gz", append, extra);
	tap_gone();
	pthread_create(&t, NULL, tap_up, NULL);
	run_cpu_per_op(argv, 900, b, vhost ? "qemu_vhost." : "qemu.", vhost ? "" : ".vhost_off", &r);
	pthread_join(t, NULL);
	net_figures(b, r.out, vhost ? "qemu_vhost." : "qemu.", vhost ? "" : ".vhost_off");
	ok = r.status == 0 && strstr(r.out, "GUEST-NETBENCH ");
	if (!ok)
		qemu_failed(vhost ? "virtio-net with vhost-net" : "virtio-net", &r);
	result_free(&r);
	return ok;
}
