// SPDX-License-Identifier: MIT
/*
 * Lab test guest: QEMU's edu passed through by vmm, its BAR0 read in a loop on one vCPU while the
 * other turns the command register's memory decode off and on N times through sysfs's config
 * (`edutoggle N`). vmm maps the BAR as memslots over VFIO's mmap of it; the device must decode
 * whenever a memslot is there, or a read landing between the two (memslot added, MEMORY not yet
 * forwarded) faults in the host (vfio-pci's fault handler refuses a BAR whose memory is off:
 * SIGBUS, KVM_RUN -EFAULT) and vmm stops. Prints GUEST-EDUTOGGLE-* lines for the lab test.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "edu_sysfs.h"

#define EDU_ID 0x00
#define PCI_COMMAND 4
#define PCI_COMMAND_MEMORY 0x2

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		printf("GUEST-EDUTOGGLE-WARN cannot pin to CPU %d: %s\n", cpu, strerror(errno));
}

/* What the reader tells the parent, in memory both share. */
struct shared {
	volatile int stop;
	volatile unsigned long long reads, ids, other;
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	char bdf[64], path[300];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (find_edu(bdf, sizeof(bdf))) {
		printf("GUEST-EDUTOGGLE-ERROR no 1234:11e8 device in /sys/bus/pci/devices\n");
		return 1;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/enable", bdf);
	int efd = open(path, O_WRONLY);

	if (efd < 0 || write(efd, "1", 1) != 1)
		printf("GUEST-EDUTOGGLE-WARN enable: %s\n", strerror(errno));
	if (efd >= 0)
		close(efd);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", bdf);
	int bfd = open(path, O_RDWR | O_SYNC);
	volatile uint32_t *bar = bfd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", bdf);
	int cfd = open(path, O_RDWR);
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint16_t cmd = 0;

	if (bar == MAP_FAILED || cfd < 0 || sh == MAP_FAILED || pread(cfd, &cmd, 2, PCI_COMMAND) != 2) {
		printf("GUEST-EDUTOGGLE-ERROR %s's BAR0 or config: %s\n", bdf, strerror(errno));
		return 1;
	}
	printf("GUEST-EDUTOGGLE-ID 0x%08x\n", bar[EDU_ID / 4]);
	pid_t child = fork();

	if (child == 0) { /* the reader, on CPU 1: as many BAR reads as it gets in */
		pin(1);
		while (!sh->stop) {
			uint32_t x = bar[EDU_ID / 4];

			sh->reads++;
			if (x == 0x010000ed)
				sh->ids++;
			else
				sh->other++; /* decode off: the read exits to vmm, which answers for no device */
		}
		_exit(0);
	}
	pin(0);
	usleep(100 * 1000); /* the reader is running */
	int done = 0;

	for (; done < n; done++) {
		uint16_t off = cmd & ~PCI_COMMAND_MEMORY, on = cmd | PCI_COMMAND_MEMORY;

		if (pwrite(cfd, &off, 2, PCI_COMMAND) != 2 || pwrite(cfd, &on, 2, PCI_COMMAND) != 2) {
			printf("GUEST-EDUTOGGLE-ERROR config write: %s\n", strerror(errno));
			break;
		}
	}
	sh->stop = 1;
	waitpid(child, NULL, 0);
	printf("GUEST-EDUTOGGLE-READS %llu reads, %llu of the ID, %llu other, over %d toggles\n", sh->reads,
	       sh->ids, sh->other, done);
	printf("GUEST-EDUTOGGLE-N %d\n", done);
	return done == n ? 0 : 1;
}
