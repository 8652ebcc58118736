// SPDX-License-Identifier: MIT
/*
 * Lab test guest: what the vCPU's features give a program. `cpufeat`: the SVE vector length
 * (prctl PR_SVE_GET_VL), then the PMU through perf_event_open: one group with the cycle counter
 * (PERF_COUNT_HW_CPU_CYCLES, which Linux's armv8 PMU driver puts on PMCCNTR) and a raw CPU_CYCLES
 * event (0x11), which with PMCCNTR taken goes to an event counter, plus INST_RETIRED on its own.
 * Each is read twice while a loop runs, so a working PMU gives non-zero, increasing values.
 * Prints GUEST-SVE-VL and GUEST-PMU-* lines for the lab test.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARMV8_CPU_CYCLES 0x11 /* the PMUv3 common event number (Arm ARM D17.11) */

static int open_event(uint32_t type, uint64_t config, int group)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = group < 0;
	a.read_format = PERF_FORMAT_GROUP;
	return syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
}

static void spin(unsigned long n)
{
	for (volatile unsigned long i = 0; i < n; i++)
		;
}

int main(void)
{
	int vl = prctl(PR_SVE_GET_VL);

	if (vl < 0)
		printf("GUEST-SVE-VL none (%s)\n", strerror(errno));
	else
		printf("GUEST-SVE-VL %d bytes\n", vl & PR_SVE_VL_LEN_MASK);

	int lead = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, -1);

	if (lead < 0) {
		printf("GUEST-PMU none (cycles: %s)\n", strerror(errno));
		return 0;
	}
	int ev = open_event(PERF_TYPE_RAW, ARMV8_CPU_CYCLES, lead);

	if (ev < 0)
		printf("GUEST-PMU-EVENT-OPEN failed (%s)\n", strerror(errno));
	int inst = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, -1);
	uint64_t v[2][3], iv[2][2];

	memset(v, 0, sizeof(v));
	memset(iv, 0, sizeof(iv));
	ioctl(lead, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	ioctl(lead, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	if (inst >= 0)
		ioctl(inst, PERF_EVENT_IOC_ENABLE, 0);
	for (int k = 0; k < 2; k++) {
		spin(2000000);
		/* PERF_FORMAT_GROUP: nr, then each member's value */
		if (read(lead, v[k], sizeof(v[k])) < (ssize_t)(2 * sizeof(uint64_t)))
			printf("GUEST-PMU-READ failed (%s)\n", strerror(errno));
		if (inst >= 0 && read(inst, iv[k], sizeof(iv[k])) < (ssize_t)sizeof(iv[k]))
			printf("GUEST-PMU-INST-READ failed (%s)\n", strerror(errno));
	}
	printf("GUEST-PMU-CYCLES %llu %llu\n", (unsigned long long)v[0][1], (unsigned long long)v[1][1]);
	if (ev >= 0)
		printf("GUEST-PMU-EVENT %llu %llu\n", (unsigned long long)v[0][2], (unsigned long long)v[1][2]);
	if (inst >= 0)
		printf("GUEST-PMU-INSTRUCTIONS %llu %llu\n", (unsigned long long)iv[0][1],
		       (unsigned long long)iv[1][1]);
	else
		printf("GUEST-PMU-INSTRUCTIONS none (%s)\n", strerror(errno));
	return 0;
}
