// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * neigh.c - neighbour lookup over plain rtnetlink; see neigh.h.
 *
 * There is no "get one neighbour by address" that works on every kernel
 * (RTM_GETNEIGH without NLM_F_DUMP needs the device, and strict checking
 * since 5.0), so this dumps the tables and filters here. A router's
 * neighbour table is small next to what a dump costs, and the lookup only
 * runs when a route is added. The dump is rtnl.c's, as the route sync's.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "xnf.h"
#include "neigh.h"
#include "rtnl.h"

/* A dump that raced with a table change (NLM_F_DUMP_INTR) is redone. */
#define NEIGH_DUMP_TRIES 3

struct neigh_query {
	int family;  /* XNF_AF_INET / XNF_AF_INET6 */
	size_t alen; /* 4 / 16 */
	const void *addr;
	__u32 ifindex; /* 0: any */
	struct xnf_neigh *out;
	int max;
	int found;
};

/* Adds the entry of @nh to the result if it is the neighbour asked for. */
static int neigh_match(const struct nlmsghdr *nh, void *ctx)
{
	struct neigh_query *q = ctx;
	struct rtnl_neigh n;

	if (rtnl_neigh_parse(nh, &n) || n.del || n.family != q->family)
		return 0;
	if (q->ifindex && n.ifindex != q->ifindex)
		return 0;
	if (!(n.state & RTNL_NUD_USABLE) || (n.flags & NTF_PROXY))
		return 0;
	if (memcmp(n.addr, q->addr, q->alen) || n.lladdr_len != 6)
		return 0;
	if (q->found < q->max) {
		struct xnf_neigh *o = &q->out[q->found];

		o->ifindex = n.ifindex;
		o->state = n.state;
		memcpy(o->lladdr, n.lladdr, 6);
	}
	q->found++;
	return 0;
}

int xnf_neigh_lookup(int family, const void *addr, __u32 ifindex,
		     struct xnf_neigh *out, int max)
{
	struct neigh_query q = {
		.family = family,
		.addr = addr,
		.ifindex = ifindex,
		.out = out,
		.max = max,
	};
	struct rtnl_sock s;
	int err, try;

	if (family == XNF_AF_INET)
		q.alen = 4;
	else if (family == XNF_AF_INET6)
		q.alen = 16;
	else
		return -EAFNOSUPPORT;
	if (max < 0 || (max && !out))
		return -EINVAL;
	err = rtnl_open(&s, NULL, 0);
	if (err)
		return err;
	for (try = 0; try < NEIGH_DUMP_TRIES; try++) {
		q.found = 0;
		err = rtnl_dump(&s, RTM_GETNEIGH, AF_UNSPEC, neigh_match, &q);
		if (err != -EAGAIN)
			break;
	}
	rtnl_close(&s);
	return err ? err : q.found;
}
