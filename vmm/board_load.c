// SPDX-License-Identifier: MIT
/*
 * The board's boot files: the kernel (the user's, else the host's own) and the initrd (the user's,
 * else the built-in guest) mapped, not read, handed to the arch's load, which copies them into guest
 * RAM; their mappings stay until the vCPUs run (board_deferred), so tearing down their page tables
 * is not on the way to the guest's first instruction.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/hot.h"
#include "vmm/board.h"
#include "core/log.h"

#define KERNEL_MAX (512ULL << 20)

/* what: the option that named the file; limit_why: what to change when it is too big. The fd
 * stays open in *fdp for the load. */
VMM_HOT static int map_file(const char *what, const char *path, uint8_t **buf, size_t *len, int *fdp, size_t max,
		     const char *limit_why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0) {
		int err = errno;

		pr_err("%s %s: cannot open it: %s%s", what, path, strerror(err),
		       err == ENOENT ? " (check the path)" : err == EACCES ? " (check its permissions)" : "");
		if (fd >= 0)
			close(fd);
		return -err;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		pr_err("%s %s: not a regular, non-empty file", what, path);
		close(fd);
		return -EINVAL;
	}
	if ((size_t)st.st_size > max) {
		pr_err("%s %s: %llu MiB is more than the %zu MiB %s", what, path,
		       (unsigned long long)(st.st_size >> 20), max >> 20, limit_why);
		close(fd);
		return -EFBIG;
	}
	/* Mapped, not read, and not populated: the arch's load parses headers through the mapping
	 * and reads what goes into guest RAM verbatim straight from the fd (vm_mem_load), so the
	 * Image's bytes are copied once and no page-table entry is made for them (a 44 MiB Image
	 * read into the heap first cost a second copy and 11k page faults; populating the mapping,
	 * 11k entries). The user's file shrinking while vmm parses it would be a SIGBUS: the price
	 * of no copy. */
	void *p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int err = errno;

	if (p == MAP_FAILED) {
		close(fd);
		pr_err("%s %s: cannot map it: %s", what, path, strerror(err));
		return -err;
	}
	*buf = p;
	*len = st.st_size;
	*fdp = fd;
	return 0;
}

static void unmap_file(uint8_t *buf, size_t len)
{
	if (buf)
		munmap(buf, len);
}

/* The host's own kernel: /boot/vmlinuz-$(uname -r), else the first /boot/Image*. */
static int host_kernel(char *path, size_t size)
{
	struct utsname u;
	glob_t g;

	if (uname(&u) == 0) {
		snprintf(path, size, "/boot/vmlinuz-%s", u.release);
		if (access(path, R_OK) == 0)
			return 0;
	}
	if (glob("/boot/Image*", 0, NULL, &g) == 0 && g.gl_pathc) {
		snprintf(path, size, "%s", g.gl_pathv[0]);
		globfree(&g);
		return 0;
	}
	pr_err("no kernel given and none found at /boot/vmlinuz-%s or /boot/Image*: pass -k KERNEL",
	       u.release);
	return -ENOENT;
}

/* The command line with the probe peer's address appended (unless it names one already), for the
 * arch's load: the probe reads vmm.probe_peer=ADDR. */
static int board_peer_params(struct board *b)
{
	const char *base = b->spec.cmdline;
	size_t n = strlen(base) + sizeof(PROBE_PEER_PARAM) + sizeof(b->peer.addr_str) + 2;
	char *s = malloc(n);

	if (!s)
		return -ENOMEM;
	if (strstr(base, PROBE_PEER_PARAM))
		snprintf(s, n, "%s", base);
	else
		snprintf(s, n, "%s %s%s", base, PROBE_PEER_PARAM, b->peer.addr_str);
	free(b->params);
	b->params = s; /* the FDT or zero page copies it; freed with the board */
	b->spec.cmdline = s;
	return 0;
}

VMM_HOT_VF int board_load(struct board *b, const struct vm_config *c)
{
	char kpath[512];
	struct boot_files f = { .kernel_path = c->kernel, .kernel_fd = -1, .initrd_fd = -1 };
	uint8_t *kbuf = NULL, *ibuf = NULL;
	int r;

	if (!f.kernel_path) {
		if ((r = host_kernel(kpath, sizeof(kpath))) < 0)
			return r;
		f.kernel_path = kpath;
	}
	if ((r = map_file("-k/--kernel", f.kernel_path, &kbuf, &f.kernel_len, &f.kernel_fd, KERNEL_MAX,
			   "vmm loads (is this a kernel?)")) < 0)
		return r;
	f.kernel = kbuf;
	if (c->initrd) {
		if ((r = map_file("-i/--initrd", c->initrd, &ibuf, &f.initrd_len, &f.initrd_fd, c->mem_size / 2,
				   "an initrd may take (half the guest's RAM): raise -m")) < 0)
			goto out;
		f.initrd = ibuf;
	} else if (!c->kernel) { /* the host's kernel with vmm's built-in guest */
		f.initrd = guest_initramfs_start;
		f.initrd_len = guest_initramfs_end - guest_initramfs_start;
	}
	boot_times_mark(&b->times, PHASE_KERNEL_READ);
	if (b->peer.open && (r = board_peer_params(b)) < 0)
		goto out;
	r = b->machine.arch->load(&b->machine, &b->spec, &f);
out:
	if (f.kernel_fd >= 0)
		close(f.kernel_fd);
	if (f.initrd_fd >= 0)
		close(f.initrd_fd);
	if (r < 0) {
		unmap_file(kbuf, f.kernel_len);
		unmap_file(ibuf, f.initrd_len);
	} else { /* board_deferred unmaps them once the vCPUs run */
		b->kernel_map = kbuf, b->kernel_map_len = f.kernel_len;
		b->initrd_map = ibuf, b->initrd_map_len = f.initrd_len;
	}
	return r;
}

/* The files board_load copied into guest RAM: their mappings go. */
VMM_HOT_VF void board_unmap_files(struct board *b)
{
	unmap_file(b->kernel_map, b->kernel_map_len);
	unmap_file(b->initrd_map, b->initrd_map_len);
	b->kernel_map = b->initrd_map = NULL;
}
