// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * neigh.c - neighbour lookup over plain rtnetlink; see neigh.h.
 *
 * There is no "get one neighbour by address" that works on every kernel
 * (RTM_GETNEIGH without NLM_F_DUMP needs the device, and strict checking
 * since 5.0), so this dumps the tables and filters here. A router's
 * neighbour table is small next to what a dump costs, and the lookup only
 * runs when a route is added.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "xnf.h"
#include "neigh.h"

/* Large enough for any one datagram of a dump: the kernel fills at most
 * 32 KiB per skb when the reader offers that much. */
#define NEIGH_BUF_SIZE	 (64 * 1024)
/* A dump that raced with a table change (NLM_F_DUMP_INTR) is redone. */
#define NEIGH_DUMP_TRIES 3

#define NUD_USABLE                                                           \
	(NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | \
	 NUD_NOARP)

struct neigh_query {
	int af;	     /* AF_INET / AF_INET6 */
	size_t alen; /* 4 / 16 */
	const void *addr;
	__u32 ifindex; /* 0: any */
	struct xnf_neigh *out;
	int max;
	int found;
};

/* Adds @nh to the result if it is the neighbour asked for. */
static void neigh_match(struct neigh_query *q, const struct nlmsghdr *nh)
{
	const struct ndmsg *ndm = NLMSG_DATA(nh);
	const struct rtattr *rta;
	const void *dst = NULL, *lladdr = NULL;
	size_t dst_len = 0, ll_len = 0;
	int len;

	len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ndm));
	if (len < 0 || ndm->ndm_family != q->af)
		return;
	if (q->ifindex && (__u32)ndm->ndm_ifindex != q->ifindex)
		return;
	if (!(ndm->ndm_state & NUD_USABLE) || (ndm->ndm_flags & NTF_PROXY))
		return;
	rta = (const struct rtattr *)((const char *)ndm +
				      NLMSG_ALIGN(sizeof(*ndm)));
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type == NDA_DST) {
			dst = RTA_DATA(rta);
			dst_len = RTA_PAYLOAD(rta);
		} else if (rta->rta_type == NDA_LLADDR) {
			lladdr = RTA_DATA(rta);
			ll_len = RTA_PAYLOAD(rta);
		}
	}
	if (!dst || dst_len != q->alen || memcmp(dst, q->addr, q->alen))
		return;
	if (!lladdr || ll_len != 6)
		return;
	if (q->found < q->max) {
		struct xnf_neigh *n = &q->out[q->found];

		n->ifindex = ndm->ndm_ifindex;
		n->state = ndm->ndm_state;
		memcpy(n->lladdr, lladdr, 6);
	}
	q->found++;
}

/* One complete dump: 0 when done, -EAGAIN when it was interrupted by a
 * change of the tables, another negative errno on failure. */
static int neigh_dump(int fd, char *buf, __u32 seq, struct neigh_query *q)
{
	struct {
		struct nlmsghdr nh;
		struct ndmsg ndm;
	} req = {
		.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
		.nh.nlmsg_type = RTM_GETNEIGH,
		.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.nh.nlmsg_seq = seq,
		.ndm.ndm_family = AF_UNSPEC,
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	bool intr = false;

	q->found = 0;
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		struct sockaddr_nl from;
		socklen_t fromlen = sizeof(from);
		struct nlmsghdr *nh;
		ssize_t n;

		n = recvfrom(fd, buf, NEIGH_BUF_SIZE, 0,
			     (struct sockaddr *)&from, &fromlen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -ENODATA;
		/* Only the kernel (port 0) answers dumps. */
		if (from.nl_pid != 0)
			continue;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != req.nh.nlmsg_seq)
				continue;
			if (nh->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = true;
			if (nh->nlmsg_type == NLMSG_DONE)
				return intr ? -EAGAIN : 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EBADMSG;
				return e->error ? e->error : -EBADMSG;
			}
			if (nh->nlmsg_type == RTM_NEWNEIGH)
				neigh_match(q, nh);
		}
	}
}

int xnf_neigh_lookup(int family, const void *addr, __u32 ifindex,
		     struct xnf_neigh *out, int max)
{
	struct neigh_query q = {
		.addr = addr,
		.ifindex = ifindex,
		.out = out,
		.max = max,
	};
	int fd, err, try;
	char *buf;

	if (family == XNF_AF_INET) {
		q.af = AF_INET;
		q.alen = 4;
	} else if (family == XNF_AF_INET6) {
		q.af = AF_INET6;
		q.alen = 16;
	} else {
		return -EAFNOSUPPORT;
	}
	if (max < 0 || (max && !out))
		return -EINVAL;
	buf = malloc(NEIGH_BUF_SIZE);
	if (!buf)
		return -ENOMEM;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	for (try = 0; try < NEIGH_DUMP_TRIES; try++) {
		err = neigh_dump(fd, buf, (__u32)time(NULL) + try, &q);
		if (err != -EAGAIN)
			break;
	}
	close(fd);
out_free:
	free(buf);
	return err ? err : q.found;
}
