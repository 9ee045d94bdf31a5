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
#include <stdbool.h>
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

/* The entry of @q->addr on @q->ifindex, whatever its state. */
struct neigh_entry_query {
	int family;
	size_t alen;
	const void *addr;
	__u32 ifindex;
	bool found;
	struct rtnl_neigh n;
};

static int neigh_entry_match(const struct nlmsghdr *nh, void *ctx)
{
	struct neigh_entry_query *q = ctx;
	struct rtnl_neigh n;

	if (rtnl_neigh_parse(nh, &n) || n.del || n.family != q->family ||
	    n.ifindex != q->ifindex || (n.flags & NTF_PROXY) ||
	    memcmp(n.addr, q->addr, q->alen))
		return 0;
	q->found = true;
	q->n = n;
	return 0;
}

/* RTM_NEWNEIGH (managed), RTM_DELNEIGH or RTM_GETNEIGH for the entry of
 * @q; a get's answer into @q. */
static int neigh_send(struct rtnl_sock *s, struct neigh_entry_query *q, int type)
{
	struct {
		struct nlmsghdr nh;
		struct ndmsg ndm;
		char attrs[3 * RTA_SPACE(16)];
	} req = {
		.nh.nlmsg_type = type,
		.ndm.ndm_family = q->family == XNF_AF_INET ? AF_INET : AF_INET6,
		.ndm.ndm_ifindex = q->ifindex,
	};
	struct rtattr *a;

	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ndm));
	a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
	a->rta_type = NDA_DST;
	a->rta_len = RTA_LENGTH(q->alen);
	memcpy(RTA_DATA(a), q->addr, q->alen);
	req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
	if (type == RTM_NEWNEIGH) {
		/* Managed: the kernel keeps the state (NUD_NONE is not
		 * written over an entry's) and resolves a new entry. */
		req.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_REPLACE;
		req.ndm.ndm_state = NUD_NONE;
		a = (struct rtattr *)((char *)&req + req.nh.nlmsg_len);
		a->rta_type = NDA_FLAGS_EXT;
		a->rta_len = RTA_LENGTH(4);
		memcpy(RTA_DATA(a), &(__u32){ NTF_EXT_MANAGED }, 4);
		req.nh.nlmsg_len += RTA_ALIGN(a->rta_len);
		a = (struct rtattr *)((char *)&req + req.nh.nlmsg_len);
		a->rta_type = NDA_PROTOCOL;
		a->rta_len = RTA_LENGTH(1);
		*(__u8 *)RTA_DATA(a) = XNF_NEIGH_PROTO;
		req.nh.nlmsg_len += RTA_ALIGN(a->rta_len);
	}
	return rtnl_request(s, &req.nh,
			    type == RTM_GETNEIGH ? neigh_entry_match : NULL, q);
}

/* Into @q: the entry, if any (a get by address and device, not a dump:
 * the sync asks for every next hop it makes); 0 or a negative errno. */
static int neigh_entry(struct rtnl_sock *s, struct neigh_entry_query *q)
{
	int err;

	q->alen = q->family == XNF_AF_INET ? 4 : 16;
	q->found = false;
	err = neigh_send(s, q, RTM_GETNEIGH);
	return err == -ENOENT ? 0 : err;
}

/* Keeps (@keep) or releases the entry, as neigh.h says. */
static int neigh_manage(int family, const void *addr, __u32 ifindex, bool keep)
{
	struct neigh_entry_query q = {
		.family = family,
		.addr = addr,
		.ifindex = ifindex,
	};
	const struct rtnl_neigh *n = &q.n;
	struct rtnl_sock s;
	bool ours;
	int err;

	if (family != XNF_AF_INET && family != XNF_AF_INET6)
		return -EAFNOSUPPORT;
	err = rtnl_open(&s, NULL, 0);
	if (err)
		return err;
	err = neigh_entry(&s, &q);
	if (err)
		goto out;
	ours = q.found && (n->flags_ext & NTF_EXT_MANAGED) &&
	       n->proto == XNF_NEIGH_PROTO;
	if (!keep) {
		if (ours)
			err = neigh_send(&s, &q, RTM_DELNEIGH);
		if (err == -ENOENT)
			err = 0;
		goto out;
	}
	/* Turning a permanent entry managed would make it dynamic. */
	if (q.found &&
	    ((n->state & (NUD_PERMANENT | NUD_NOARP)) ||
	     (n->flags & NTF_EXT_LEARNED) || (n->flags_ext & NTF_EXT_MANAGED) ||
	     (n->proto && n->proto != XNF_NEIGH_PROTO)))
		goto out;
	err = neigh_send(&s, &q, RTM_NEWNEIGH);
out:
	rtnl_close(&s);
	return err;
}

int xnf_neigh_keep(int family, const void *addr, __u32 ifindex)
{
	return neigh_manage(family, addr, ifindex, true);
}

int xnf_neigh_release(int family, const void *addr, __u32 ifindex)
{
	return neigh_manage(family, addr, ifindex, false);
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
