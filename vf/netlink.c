// SPDX-License-Identifier: MIT
/* A minimal hand-written rtnetlink client for VF MACs: one request, one answer, no library. */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/hot.h"
#include "vf/netlink.h"

/* Big enough for a link message with every VF's info and stats (igb: 7 VFs). */
#define NL_BUF (64 * 1024)

struct nl_req {
	struct nlmsghdr nh;
	struct ifinfomsg ifi;
	char attrs[256];
};

static struct rtattr *attr_put(struct nl_req *r, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
	return a;
}

/* A nest's length covers what was added after it. */
static void nest_end(struct nl_req *r, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)((char *)r + r->nh.nlmsg_len - (char *)nest);
}

static void req_init(struct nl_req *r, unsigned short type, unsigned short flags, int ifindex)
{
	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = NLMSG_LENGTH(sizeof(r->ifi));
	r->nh.nlmsg_type = type;
	r->nh.nlmsg_flags = NLM_F_REQUEST | flags;
	r->nh.nlmsg_seq = 1;
	r->ifi.ifi_family = AF_UNSPEC;
	r->ifi.ifi_index = ifindex;
}

/* Sends r and reads the answer into buf: its length, or -errno (an NLMSG_ERROR's code included). */
VMM_HOT_VF static int nl_talk(struct nl_req *r, char *buf, size_t size, int want_type)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int ret = -EIO;

	if (fd < 0)
		return -errno;
	if (sendto(fd, r, r->nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, size, MSG_TRUNC);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if ((size_t)n > size) {
			ret = -EMSGSIZE;
			goto out;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned int)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != r->nh.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				ret = e->error; /* 0: the ACK of a request without an answer */
				goto out;
			}
			if (h->nlmsg_type == want_type) {
				/* the caller parses from buf: move the message to its start */
				memmove(buf, h, h->nlmsg_len);
				ret = (int)h->nlmsg_len;
				goto out;
			}
		}
	}
out:
	close(fd);
	return ret;
}

VMM_HOT_VF static int rtnl_set_mac(void *ctx, int ifindex, int vf, const uint8_t mac[6])
{
	struct nl_req r;
	struct ifla_vf_mac m = { .vf = (__u32)vf };
	char ack[1024];

	(void)ctx;
	memcpy(m.mac, mac, 6);
	req_init(&r, RTM_SETLINK, NLM_F_ACK, ifindex);
	struct rtattr *list = attr_put(&r, IFLA_VFINFO_LIST | NLA_F_NESTED, NULL, 0);
	struct rtattr *info = attr_put(&r, IFLA_VF_INFO | NLA_F_NESTED, NULL, 0);

	attr_put(&r, IFLA_VF_MAC, &m, sizeof(m));
	nest_end(&r, info);
	nest_end(&r, list);
	return nl_talk(&r, ack, sizeof(ack), NLMSG_ERROR);
}

static void parse_vf_info(struct rtattr *info, uint8_t (*macs)[6], bool *valid, int n)
{
	int len = RTA_PAYLOAD(info);

	for (struct rtattr *a = RTA_DATA(info); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if ((a->rta_type & NLA_TYPE_MASK) != IFLA_VF_MAC ||
		    RTA_PAYLOAD(a) < sizeof(struct ifla_vf_mac))
			continue;
		const struct ifla_vf_mac *m = RTA_DATA(a);

		if (m->vf < (unsigned int)n) {
			memcpy(macs[m->vf], m->mac, 6);
			valid[m->vf] = true;
		}
	}
}

VMM_HOT_VF static int rtnl_get_macs(void *ctx, int ifindex, uint8_t (*macs)[6], bool *valid, int n)
{
	struct nl_req r;
	__u32 mask = RTEXT_FILTER_VF;
	char *buf = malloc(NL_BUF);
	int ret;

	(void)ctx;
	if (!buf)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		valid[i] = false;
	req_init(&r, RTM_GETLINK, 0, ifindex);
	attr_put(&r, IFLA_EXT_MASK, &mask, sizeof(mask));
	ret = nl_talk(&r, buf, NL_BUF, RTM_NEWLINK);
	if (ret > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		int len = (int)IFLA_PAYLOAD(h);

		for (struct rtattr *a = IFLA_RTA(NLMSG_DATA(h)); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
			if ((a->rta_type & NLA_TYPE_MASK) != IFLA_VFINFO_LIST)
				continue;
			int l2 = RTA_PAYLOAD(a);

			for (struct rtattr *v = RTA_DATA(a); RTA_OK(v, l2); v = RTA_NEXT(v, l2))
				if ((v->rta_type & NLA_TYPE_MASK) == IFLA_VF_INFO)
					parse_vf_info(v, macs, valid, n);
		}
		ret = 0;
	}
	free(buf);
	return ret;
}

const struct vf_nl_ops vf_nl_rtnetlink = {
	.set_mac = rtnl_set_mac,
	.get_macs = rtnl_get_macs,
};
