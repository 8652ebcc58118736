/* SPDX-License-Identifier: MIT */
/* A PF's VF MACs over rtnetlink: what `ip link set PF vf N mac M` and `ip link show PF` do. */
#ifndef VMM_VF_NETLINK_H
#define VMM_VF_NETLINK_H

#include <stdbool.h>
#include <stdint.h>

struct vf_nl_ops {
	/* RTM_SETLINK on ifindex with IFLA_VFINFO_LIST/IFLA_VF_INFO/IFLA_VF_MAC: 0 or -errno
	 * (the kernel's answer, no message: the caller knows the device names) */
	int (*set_mac)(void *ctx, int ifindex, int vf, const uint8_t mac[6]);
	/* RTM_GETLINK with RTEXT_FILTER_VF: VF i's MAC into macs[i] for i < n, valid[i] set for the
	 * ones reported; 0 or -errno */
	int (*get_macs)(void *ctx, int ifindex, uint8_t (*macs)[6], bool *valid, int n);
	void *ctx;
};

/* The real one, over a NETLINK_ROUTE socket per call. */
extern const struct vf_nl_ops vf_nl_rtnetlink;

#endif
