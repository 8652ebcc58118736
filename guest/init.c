// SPDX-License-Identifier: MIT
/*
 * vmm's built-in guest: the /init of the initramfs embedded in vmm. Prints one banner line with
 * the guest's uptime, CPU count and kernel version, runs the latency probe when the kernel command
 * line asks for it (vmm.probe=, guest/probe.c), then powers off (PSCI SYSTEM_OFF on arm64).
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <termios.h>
#include <unistd.h>

#include "guest/probe.h"

#ifdef __x86_64__
#include <cpuid.h>

/* The PV features the guest sees (KVM_CPUID_FEATURES) and its APIC mode, so the x86 lab can
 * check them against the policy vmm printed. */
static void report_pv_cpuid(void)
{
	unsigned int a, b, c, d, sig[3];

	__cpuid(1, a, b, c, d);
	printf("vmm-guest: x86 cpuid 1 ecx.x2apic=%u ecx.hypervisor=%u\n", (c >> 21) & 1, c >> 31);
	__cpuid(0x40000000, a, sig[0], sig[1], sig[2]);
	__cpuid(0x40000001, a, b, c, d);
	printf("vmm-guest: x86 cpuid 0x40000000 \"%.12s\" 0x40000001 eax=0x%08x edx=0x%08x\n",
	       (const char *)sig, a, d);
	/* The feature leaves as the guest sees them, for the lab to hold against the host's
	 * KVM_GET_SUPPORTED_CPUID (vmm caps): what vmm withholds from the guest. */
	static const unsigned int leaves[][2] = { { 1, 0 }, { 7, 0 }, { 7, 1 }, { 0xa, 0 }, { 0xd, 0 },
						  { 0xd, 1 }, { 0x80000001, 0 }, { 0x80000008, 0 },
						  { 0x80000022, 0 } };

	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		__cpuid_count(leaves[i][0], leaves[i][1], a, b, c, d);
		printf("vmm-guest: x86 cpuid-raw 0x%x.%u 0x%08x 0x%08x 0x%08x 0x%08x\n", leaves[i][0],
		       leaves[i][1], a, b, c, d);
	}
	/* haltpoll (guest-side polling) takes over with KVM_HINTS_REALTIME and then turns the host's
	 * polling off through MSR_KVM_POLL_CONTROL: the lab checks both sides */
	char drv[32] = "none";
	FILE *f = fopen("/sys/devices/system/cpu/cpuidle/current_driver", "r");

	if (f) {
		if (fscanf(f, "%31s", drv) != 1)
			snprintf(drv, sizeof(drv), "unreadable");
		fclose(f);
	}
	printf("vmm-guest: x86 cpuidle driver=%s\n", drv);
	/* the tick's device per CPU: the lab's attribution looks for the LAPIC timer's hrtimer in
	 * the host, which a guest on another clockevent never arms */
	printf("vmm-guest: x86 clockevents");
	for (int cpu = 0; cpu < 64; cpu++) {
		char path[80], dev[32];

		snprintf(path, sizeof(path), "/sys/devices/system/clockevents/clockevent%d/current_device", cpu);
		if (!(f = fopen(path, "r")))
			break;
		if (fscanf(f, "%31s", dev) != 1)
			snprintf(dev, sizeof(dev), "unreadable");
		fclose(f);
		printf(" cpu%d=%s", cpu, dev);
	}
	printf("\n");
}
#else
static void report_pv_cpuid(void)
{
}
#endif

#ifdef __aarch64__
/* The virtual counter KVM starts near 0 with the VM: at /init it says how long since then in the
 * host's time, which the uptime does not (before its clocksource switch the kernel counts jiffies,
 * and a loaded host loses ticks). Linux lets EL0 read it (the vDSO does). */
static double counter_secs(void)
{
	unsigned long cnt, frq;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(cnt));
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(frq));
	return frq ? (double)cnt / frq : -1;
}
#endif

int main(void)
{
	struct utsname u;
	struct timespec up;
	cpu_set_t cpus;
#ifdef __aarch64__
	double counter = counter_secs();
#endif

	/* The initramfs has no /dev/console node: devtmpfs provides one. */
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	int fd = open("/dev/console", O_RDWR);

	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	clock_gettime(CLOCK_BOOTTIME, &up);
	uname(&u);
	CPU_ZERO(&cpus);
	sched_getaffinity(0, sizeof(cpus), &cpus);
	printf("vmm-guest: hello from Linux %s (%s), %d CPUs online (%d configured), up %ld.%03ld s\n",
	       u.release, u.machine, get_nprocs(), get_nprocs_conf(), (long)up.tv_sec,
	       up.tv_nsec / 1000000);
#ifdef __aarch64__
	if (counter >= 0)
		printf("vmm-guest: virtual counter at /init %.3f s\n", counter);
#endif
	struct sysinfo si;

	/* what the guest's kernel made of the memory map (e820 / FDT): MemTotal */
	if (!sysinfo(&si))
		printf("vmm-guest: %llu MiB of RAM\n", (unsigned long long)si.totalram * si.mem_unit >> 20);
	report_pv_cpuid();
	fflush(stdout);
	char cmdline[4096];
	int cfd = open("/proc/cmdline", O_RDONLY);
	ssize_t n = cfd >= 0 ? read(cfd, cmdline, sizeof(cmdline) - 1) : -1;

	if (cfd >= 0)
		close(cfd);
	cmdline[n > 0 ? n : 0] = 0;
	probe_run_cmdline(cmdline);
	/* what is still in the tty's buffer (the 8250 sends it by THRE interrupts) would be lost at
	 * power-off: wait for it, as a shell's poweroff does */
	fflush(stdout);
	tcdrain(STDOUT_FILENO);
	sync();
	reboot(RB_POWER_OFF);
	return 1; /* not reached: the kernel panics if init exits, which vmm reports */
}
