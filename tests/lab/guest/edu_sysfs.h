// SPDX-License-Identifier: MIT
/*
 * The lab test guest's helpers for QEMU's edu (tests/lab/guest/edu*.c): a sysfs file read and the
 * edu's address found among /sys/bus/pci/devices. Each helper is one static program, so these are
 * static functions in a header rather than a library.
 */
#ifndef LAB_GUEST_EDU_SYSFS_H
#define LAB_GUEST_EDU_SYSFS_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* size - 1 bytes at most, NUL-terminated; 0 or -1. */
static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* The first PCI function with the edu's IDs (1234:11e8): its address in bdf; 0 or -1. */
static int find_edu(char *bdf, size_t size)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *e;
	char path[300], v[32], id[32];
	int found = -1;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", e->d_name);
		if (read_file(path, v, sizeof(v)))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", e->d_name);
		if (read_file(path, id, sizeof(id)))
			continue;
		if (strtoul(v, NULL, 16) == 0x1234 && strtoul(id, NULL, 16) == 0x11e8) {
			snprintf(bdf, size, "%.40s", e->d_name);
			found = 0;
			break;
		}
	}
	if (d)
		closedir(d);
	return found;
}

#endif
