// SPDX-License-Identifier: MIT
/* /dev/kvm itself: opening it with a useful message, API version and capability checks. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/kvm.h"

int kvm_open(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;

		if (err == ENOENT)
			pr_err("/dev/kvm does not exist: this host has no KVM (load kvm.ko, enable "
			       "virtualization in firmware, or run inside the lab: make lab-shell)");
		else
			pr_err("cannot open /dev/kvm: %s (is your user in the 'kvm' group?)", strerror(err));
		return -err;
	}
	int ver = kvm_do_ioctl(fd, KVM_GET_API_VERSION, NULL);

	if (ver != KVM_API_VERSION) {
		pr_err("/dev/kvm speaks API version %d, vmm needs %d", ver, KVM_API_VERSION);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int kvm_check_ext(int fd, long cap)
{
	int r = kvm_do_ioctl(fd, KVM_CHECK_EXTENSION, (void *)cap);

	return r < 0 ? 0 : r;
}

int kvm_ioctl_ret(int ret, const char *what)
{
	if (ret >= 0)
		return ret;
	int err = errno;

	pr_err("%s failed: %s", what, strerror(err));
	return -err;
}

int kvm_ioctl_said(int ret, const char *fmt, ...)
{
	if (ret >= 0)
		return ret;
	int err = errno; /* before anything else can change it */
	char what[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	pr_err("%s failed: %s", what, strerror(err));
	return -err;
}
