// SPDX-License-Identifier: MIT
/*
 * Lab test guest: QEMU's edu device, passed through by vmm, driven from guest userspace with no
 * driver of its own. `edu N`: finds the edu (1234:11e8) in /sys/bus/pci/devices, enables it, maps
 * BAR0 through sysfs's resource0 (Debian's CONFIG_IO_STRICT_DEVMEM refuses /dev/mem on a BAR a
 * driver holds; resource0 has no such check while uio_pci_generic requests no regions), reads
 * the ID register, binds uio_pci_generic, then N times: raise the interrupt (BAR0+0x60), block on
 * /dev/uioN for its INTx, acknowledge it (BAR0+0x64), unmask. uio_pci_generic's handler masks with
 * the command register's INTX_DISABLE and offers no irqcontrol, so the unmask is a config write
 * (as the kernel's UIO how-to does it). Prints GUEST-EDU-* lines for the lab test.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "edu_sysfs.h"

#define EDU_ID 0x00
#define EDU_INVERT 0x04	   /* reads back the complement of what was written */
#define EDU_IRQ_STATUS 0x24
#define EDU_IRQ_RAISE 0x60
#define EDU_IRQ_ACK 0x64
#define PCI_COMMAND 4
#define PCI_COMMAND_INTX_DISABLE 0x400

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n = fd < 0 ? -1 : write(fd, s, strlen(s));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static uint32_t rd32(volatile uint8_t *bar, uint32_t off)
{
	return *(volatile uint32_t *)(bar + off);
}

static void wr32(volatile uint8_t *bar, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(bar + off) = v;
}

/* The uio device uio_pci_generic made for bdf: its /dev node, once it exists. */
static int uio_open(const char *bdf)
{
	char path[300];

	for (int i = 0; i < 100; i++, usleep(50 * 1000)) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/uio", bdf);
		DIR *d = opendir(path);
		struct dirent *e;
		int fd = -1;

		while (d && (e = readdir(d)))
			if (!strncmp(e->d_name, "uio", 3)) {
				snprintf(path, sizeof(path), "/dev/%s", e->d_name);
				fd = open(path, O_RDWR);
				printf("GUEST-EDU-UIO %s\n", path);
				break;
			}
		if (d)
			closedir(d);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	char bdf[64], path[300], res[256];
	unsigned long long start = 0, end = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (find_edu(bdf, sizeof(bdf))) {
		printf("GUEST-EDU-ERROR no 1234:11e8 device in /sys/bus/pci/devices\n");
		return 1;
	}
	printf("GUEST-EDU-BDF %s\n", bdf);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", bdf);
	if (read_file(path, res, sizeof(res)) || sscanf(res, "%llx %llx", &start, &end) != 2 || !start) {
		printf("GUEST-EDU-ERROR BAR0 not assigned: %s\n", res);
		return 1;
	}
	printf("GUEST-EDU-BAR0 0x%llx size 0x%llx\n", start, end - start + 1);
	/* memory decode on, as a driver's pci_enable_device would (vmm maps the BAR only then) */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/enable", bdf);
	if (write_file(path, "1"))
		printf("GUEST-EDU-WARN enable: %s\n", strerror(errno));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", bdf);
	int bfd = open(path, O_RDWR | O_SYNC);
	volatile uint8_t *bar = bfd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);

	if (bar == MAP_FAILED) {
		printf("GUEST-EDU-ERROR mmap %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("GUEST-EDU-ID 0x%08x\n", rd32(bar, EDU_ID));
	wr32(bar, EDU_INVERT, 0x12345678);
	printf("GUEST-EDU-INVERT 0x%08x\n", rd32(bar, EDU_INVERT));

	if (write_file("/sys/bus/pci/drivers/uio_pci_generic/new_id", "1234 11e8") &&
	    errno != EEXIST) {
		printf("GUEST-EDU-ERROR uio_pci_generic new_id: %s\n", strerror(errno));
		return 1;
	}
	int ufd = uio_open(bdf);

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", bdf);
	int cfd = open(path, O_RDWR);

	if (ufd < 0 || cfd < 0) {
		printf("GUEST-EDU-ERROR no uio device for %s (or its config): %s\n", bdf, strerror(errno));
		return 1;
	}
	int events = 0, timeouts = 0;
	uint32_t count = 0, first = 0;

	for (int i = 0; i < n; i++) {
		struct pollfd p = { .fd = ufd, .events = POLLIN };

		wr32(bar, EDU_IRQ_RAISE, 1);
		if (poll(&p, 1, 5000) != 1 || read(ufd, &count, 4) != 4) {
			printf("GUEST-EDU-TIMEOUT %d: no INTx within 5 s (status 0x%x)\n", i,
			       rd32(bar, EDU_IRQ_STATUS));
			timeouts++;
			wr32(bar, EDU_IRQ_ACK, 1);
			break;
		}
		if (!events)
			first = count;
		events++;
		wr32(bar, EDU_IRQ_ACK, 1);
		/* unmask: the handler left INTX_DISABLE set */
		uint16_t cmd = 0;

		if (pread(cfd, &cmd, 2, PCI_COMMAND) != 2)
			break;
		cmd &= ~PCI_COMMAND_INTX_DISABLE;
		if (pwrite(cfd, &cmd, 2, PCI_COMMAND) != 2)
			break;
	}
	printf("GUEST-EDU-EVENTS %d of %d (uio count %u to %u, %d timeouts)\n", events, n, first, count,
	       timeouts);
	printf("GUEST-EDU-N %d\n", events);
	return events == n ? 0 : 1;
}
