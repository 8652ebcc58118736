/* SPDX-License-Identifier: MIT */
/* /dev/kvm itself: opening it, capability checks, ioctl results as -errno with a message. */
#ifndef VMM_KVM_H
#define VMM_KVM_H

#include <linux/kvm.h>


int kvm_open(void);
int kvm_check_ext(int fd, long cap); /* value >= 0, or 0 where the ioctl fails */
int kvm_ioctl_ret(int ret, const char *what); /* ret or -errno with a message */

#endif
