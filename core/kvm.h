/* SPDX-License-Identifier: MIT */
/* /dev/kvm itself: opening it, capability checks, ioctl results as -errno with a message. */
#ifndef VMM_KVM_H
#define VMM_KVM_H

#include <linux/kvm.h>
#include <stddef.h>
#include <sys/ioctl.h>

/*
 * ioctl(fd, cmd, arg) for a KVM command, as KVM's selftests' kvm_do_ioctl checks it: a command
 * that encodes an argument size (_IOW, _IOR, _IOWR) must be given a pointer to an object of that
 * size, or the build fails; one that encodes none (_IO) takes an integer passed as a pointer,
 * (void *)(unsigned long)n, or NULL. The result is ioctl's (-1 and errno).
 */
#define kvm_do_ioctl(fd, cmd, arg)                                                                 \
	({                                                                                         \
		_Static_assert(!_IOC_SIZE(cmd) || sizeof(*(arg)) == _IOC_SIZE(cmd),                \
			       #cmd ": the argument is not the size the command encodes");        \
		ioctl((fd), (cmd), (arg));                                                         \
	})
/*
 * The same, a failure said as "CMD failed: ERROR" with the command's own name, and printf-style
 * context after the name when given: kvm_ioctl(fd, KVM_CREATE_VCPU, (void *)(unsigned long)id,
 * " %d", id) says "KVM_CREATE_VCPU 3 failed: ...". The ioctl's result, or -errno.
 */
#define kvm_ioctl(fd, cmd, arg, ...) kvm_ioctl_said(kvm_do_ioctl(fd, cmd, arg), #cmd __VA_ARGS__)

int kvm_open(void);
int kvm_check_ext(int fd, long cap); /* value >= 0, or 0 where the ioctl fails */
int kvm_ioctl_ret(int ret, const char *what); /* ret or -errno with a message */
/* ret, or -errno after "WHAT failed: ERROR" (what: fmt and its arguments) */
int kvm_ioctl_said(int ret, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
