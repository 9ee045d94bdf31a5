// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rtnl.c - rtnetlink for the route sync; see rtnl.h.
 *
 * Raw netlink, as the rest of libxnf speaks it: the sync needs a handful
 * of message types, and what it must get right (a large receive buffer,
 * ENOBUFS as the signal to resync, dumps that race changes) is in the
 * socket calls, not in a library around them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/lwtunnel.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "xnf.h"
#include "rtnl.h"

/* One datagram of a dump is at most 32 KiB; events are smaller. */
#define RTNL_BUF_SIZE (64 * 1024)

#ifndef RTA_NH_ID
#define RTA_NH_ID 30
#endif

int rtnl_open(struct rtnl_sock *s, const unsigned int *groups, int rcvbuf)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1, err;

	memset(s, 0, sizeof(*s));
	s->seq = (__u32)time(NULL);
	s->buflen = RTNL_BUF_SIZE;
	s->buf = malloc(s->buflen);
	if (!s->buf)
		return -ENOMEM;
	s->fd = socket(AF_NETLINK,
		       SOCK_RAW | SOCK_CLOEXEC | (groups ? SOCK_NONBLOCK : 0),
		       NETLINK_ROUTE);
	if (s->fd < 0) {
		err = -errno;
		goto err;
	}
	/* FORCE goes past net.core.rmem_max (CAP_NET_ADMIN); without the
	 * capability the plain option still gets what rmem_max allows. */
	if (rcvbuf > 0 &&
	    setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) &&
	    setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))) {
		err = -errno;
		goto err;
	}
	/* Dumps filtered by the kernel, errors with their message. */
	setsockopt(s->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto err;
	}
	for (; groups && *groups; groups++)
		if (setsockopt(s->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
			       groups, sizeof(*groups))) {
			err = -errno;
			goto err;
		}
	return 0;
err:
	rtnl_close(s);
	return err;
}

void rtnl_close(struct rtnl_sock *s)
{
	if (s->fd > 0)
		close(s->fd);
	free(s->buf);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/* The messages of one datagram: 1 when NLMSG_DONE ended a dump, 0 to
 * read on, a negative errno. @seq 0 takes every message (events). */
static int rtnl_walk(struct rtnl_sock *s, ssize_t n, __u32 seq, bool *intr,
		     rtnl_cb cb, void *ctx)
{
	struct nlmsghdr *nh;
	int err;

	for (nh = (struct nlmsghdr *)s->buf; NLMSG_OK(nh, (size_t)n);
	     nh = NLMSG_NEXT(nh, n)) {
		if (seq && nh->nlmsg_seq != seq)
			continue;
		if (nh->nlmsg_flags & NLM_F_DUMP_INTR)
			*intr = true;
		if (nh->nlmsg_type == NLMSG_DONE)
			return 1;
		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -EBADMSG;
			if (e->error)
				return e->error;
			continue;
		}
		if (nh->nlmsg_type == NLMSG_NOOP ||
		    nh->nlmsg_type == NLMSG_OVERRUN)
			continue;
		err = cb(nh, ctx);
		if (err < 0)
			return err;
	}
	return 0;
}

int rtnl_dump(struct rtnl_sock *s, int type, int family, rtnl_cb cb, void *ctx)
{
	struct {
		struct nlmsghdr nh;
		union {
			struct rtmsg rtm;
			struct ndmsg ndm;
			struct ifinfomsg ifi;
			struct ifaddrmsg ifa;
			struct nhmsg nhm;
		};
	} req = {
		.nh.nlmsg_type = type,
		.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	bool intr = false;
	int err = 0;

	req.nh.nlmsg_seq = ++s->seq;
	switch (type) {
	case RTM_GETROUTE:
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
		req.rtm.rtm_family = family;
		break;
	case RTM_GETNEIGH:
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
		req.ndm.ndm_family = family;
		break;
	case RTM_GETLINK:
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
		req.ifi.ifi_family = family;
		break;
	case RTM_GETADDR:
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg));
		req.ifa.ifa_family = family;
		break;
	case RTM_GETNEXTHOP:
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct nhmsg));
		req.nhm.nh_family = family;
		break;
	default:
		return -EINVAL;
	}
	if (sendto(s->fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	while (!err) {
		struct sockaddr_nl from;
		socklen_t fromlen = sizeof(from);
		ssize_t n;

		n = recvfrom(s->fd, s->buf, s->buflen, 0,
			     (struct sockaddr *)&from, &fromlen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -ENODATA;
		if (from.nl_pid != 0)
			continue;
		err = rtnl_walk(s, n, req.nh.nlmsg_seq, &intr, cb, ctx);
	}
	if (err < 0)
		return err;
	return intr ? -EAGAIN : 0;
}

int rtnl_read(struct rtnl_sock *s, rtnl_cb cb, void *ctx)
{
	bool intr = false, overrun = false;
	int err;

	for (;;) {
		struct sockaddr_nl from;
		socklen_t fromlen = sizeof(from);
		ssize_t n;

		n = recvfrom(s->fd, s->buf, s->buflen, 0,
			     (struct sockaddr *)&from, &fromlen);
		/* The kernel reports ENOBUFS once, then drops silently
		 * until the queue has been emptied (NETLINK_S_CONGESTED):
		 * read on to the end, so that a loss after the caller's
		 * resync dump is reported again. */
		if (n < 0 && errno == ENOBUFS) {
			overrun = true;
			continue;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			return overrun ? -ENOBUFS : 0;
		}
		if (!n)
			return overrun ? -ENOBUFS : 0;
		if (from.nl_pid != 0)
			continue;
		err = rtnl_walk(s, n, 0, &intr, cb, ctx);
		if (err < 0)
			return err;
	}
}

int rtnl_request(struct rtnl_sock *s, struct nlmsghdr *nh, rtnl_cb cb, void *ctx)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int one = 1;

	/* A get of one object by its keys (strict checking, kernel 4.20). */
	setsockopt(s->fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	nh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	nh->nlmsg_seq = ++s->seq;
	if (sendto(s->fd, nh, nh->nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		struct sockaddr_nl from;
		socklen_t fromlen = sizeof(from);
		struct nlmsghdr *m;
		ssize_t n;

		n = recvfrom(s->fd, s->buf, s->buflen, 0,
			     (struct sockaddr *)&from, &fromlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -ENODATA;
		if (from.nl_pid != 0)
			continue;
		/* The answer, then the ack: an NLMSG_ERROR of error 0,
		 * which rtnl_walk passes over. */
		for (m = (struct nlmsghdr *)s->buf; NLMSG_OK(m, (size_t)n);
		     m = NLMSG_NEXT(m, n)) {
			const struct nlmsgerr *e = NLMSG_DATA(m);

			if (m->nlmsg_seq != nh->nlmsg_seq)
				continue;
			if (m->nlmsg_type != NLMSG_ERROR) {
				if (cb)
					cb(m, ctx);
				continue;
			}
			if (m->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -EBADMSG;
			return e->error;
		}
	}
}

static int xfamily(int af)
{
	return af == AF_INET ? XNF_AF_INET : af == AF_INET6 ? XNF_AF_INET6 : 0;
}

/* RTA_GATEWAY (of the route's family) or RTA_VIA (any family). */
static void hop_gw(struct rtnl_hop *h, int af, const struct rtattr *a)
{
	const struct rtvia *via;
	size_t len = RTA_PAYLOAD(a);

	if (a->rta_type == RTA_GATEWAY) {
		if (len == (af == AF_INET ? 4u : 16u)) {
			h->gw_family = xfamily(af);
			memcpy(h->gw, RTA_DATA(a), len);
		}
		return;
	}
	via = RTA_DATA(a);
	if (len < sizeof(*via))
		return;
	len -= sizeof(*via);
	if ((via->rtvia_family == AF_INET && len == 4) ||
	    (via->rtvia_family == AF_INET6 && len == 16)) {
		h->gw_family = xfamily(via->rtvia_family);
		memcpy(h->gw, via->rtvia_addr, len);
	}
}

static __u16 attr_u16(const struct rtattr *a)
{
	__u16 v = 0;

	if (RTA_PAYLOAD(a) >= sizeof(v))
		memcpy(&v, RTA_DATA(a), sizeof(v));
	return v;
}

static void route_multipath(struct rtnl_route *r, int af, const struct rtattr *mp)
{
	const struct rtnexthop *nh = RTA_DATA(mp);
	int len = RTA_PAYLOAD(mp), weight = -1;

	r->multipath = true;
	while (len >= (int)sizeof(*nh) && nh->rtnh_len >= sizeof(*nh) &&
	       nh->rtnh_len <= len) {
		const struct rtattr *a = RTNH_DATA(nh);
		int alen = nh->rtnh_len - RTNH_LENGTH(0);
		struct rtnl_hop h = { .ifindex = nh->rtnh_ifindex };

		for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
			if (a->rta_type == RTA_GATEWAY || a->rta_type == RTA_VIA)
				hop_gw(&h, af, a);
			else if (a->rta_type == RTA_ENCAP_TYPE && attr_u16(a))
				r->encap = attr_u16(a);
		/* The kernel does not forward over these (a dead next hop,
		 * or one whose link is down when the sysctl
		 * ignore_routes_with_linkdown says so; treated alike). */
		if (nh->rtnh_flags & (RTNH_F_DEAD | RTNH_F_LINKDOWN)) {
			r->dead++;
		} else {
			/* rtnh_hops is the weight - 1. */
			if (weight >= 0 && weight != nh->rtnh_hops)
				r->weighted = true;
			weight = nh->rtnh_hops;
			if (r->nhops == RTNL_HOPS_MAX)
				r->too_many = true;
			else
				r->hop[r->nhops++] = h;
		}
		len -= RTNH_ALIGN(nh->rtnh_len);
		nh = RTNH_NEXT(nh);
	}
}

/* RTAX_MTU of RTA_METRICS (nested RTAX_* attributes). The other metrics
 * are TCP's and those of packets the router sends itself (advmss, cwnd,
 * hoplimit, ...): forwarding does not read them. */
static __u32 metrics_mtu(const struct rtattr *m)
{
	const struct rtattr *a = RTA_DATA(m);
	int len = RTA_PAYLOAD(m);
	__u32 mtu = 0;

	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == RTAX_MTU && RTA_PAYLOAD(a) >= sizeof(mtu))
			memcpy(&mtu, RTA_DATA(a), sizeof(mtu));
	return mtu;
}

const char *rtnl_encap_name(__u16 type)
{
	static const char *const names[] = {
		[LWTUNNEL_ENCAP_MPLS] = "mpls",
		[LWTUNNEL_ENCAP_IP] = "ip",
		[LWTUNNEL_ENCAP_ILA] = "ila",
		[LWTUNNEL_ENCAP_IP6] = "ip6",
		[LWTUNNEL_ENCAP_SEG6] = "seg6",
		[LWTUNNEL_ENCAP_BPF] = "bpf",
		[LWTUNNEL_ENCAP_SEG6_LOCAL] = "seg6local",
		[LWTUNNEL_ENCAP_RPL] = "rpl",
		[LWTUNNEL_ENCAP_IOAM6] = "ioam6",
		[LWTUNNEL_ENCAP_XFRM] = "xfrm",
	};

	return type < sizeof(names) / sizeof(names[0]) && names[type] ?
		       names[type] :
		       "unknown";
}

int rtnl_route_parse(const struct nlmsghdr *nh, struct rtnl_route *r)
{
	const struct rtmsg *rtm = NLMSG_DATA(nh);
	const struct rtattr *a, *mp = NULL;
	struct rtnl_hop h = {};
	int len;

	if ((nh->nlmsg_type != RTM_NEWROUTE && nh->nlmsg_type != RTM_DELROUTE) ||
	    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
		return -EINVAL;
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return -EAFNOSUPPORT;
	memset(r, 0, offsetof(struct rtnl_route, hop));
	r->del = nh->nlmsg_type == RTM_DELROUTE;
	r->family = xfamily(rtm->rtm_family);
	r->dst_len = rtm->rtm_dst_len;
	r->src_len = rtm->rtm_src_len;
	r->tos = rtm->rtm_tos;
	r->type = rtm->rtm_type;
	r->proto = rtm->rtm_protocol;
	r->scope = rtm->rtm_scope;
	r->table = rtm->rtm_table;
	r->flags = rtm->rtm_flags;
	len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*rtm));
	for (a = RTM_RTA(rtm); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		switch (a->rta_type) {
		case RTA_TABLE:
			if (RTA_PAYLOAD(a) >= 4)
				memcpy(&r->table, RTA_DATA(a), 4);
			break;
		case RTA_DST:
			if (RTA_PAYLOAD(a) <= sizeof(r->dst))
				memcpy(r->dst, RTA_DATA(a), RTA_PAYLOAD(a));
			break;
		case RTA_SRC:
			if (RTA_PAYLOAD(a) <= sizeof(r->src))
				memcpy(r->src, RTA_DATA(a), RTA_PAYLOAD(a));
			break;
		case RTA_METRICS:
			r->mtu = metrics_mtu(a);
			break;
		case RTA_ENCAP_TYPE:
			if (attr_u16(a))
				r->encap = attr_u16(a);
			break;
		case RTA_PRIORITY:
			if (RTA_PAYLOAD(a) >= 4)
				memcpy(&r->priority, RTA_DATA(a), 4);
			break;
		case RTA_OIF:
			if (RTA_PAYLOAD(a) >= 4)
				memcpy(&h.ifindex, RTA_DATA(a), 4);
			break;
		case RTA_GATEWAY:
		case RTA_VIA:
			hop_gw(&h, rtm->rtm_family, a);
			break;
		case RTA_MULTIPATH:
			mp = a;
			break;
		case RTA_NH_ID:
			if (RTA_PAYLOAD(a) >= 4)
				memcpy(&r->nh_id, RTA_DATA(a), 4);
			break;
		}
	}
	if (mp) {
		route_multipath(r, rtm->rtm_family, mp);
	} else if (h.ifindex || h.gw_family) {
		if (rtm->rtm_flags & (RTNH_F_DEAD | RTNH_F_LINKDOWN))
			r->dead++;
		else
			r->hop[r->nhops++] = h;
	}
	return 0;
}

int rtnl_neigh_parse(const struct nlmsghdr *nh, struct rtnl_neigh *n)
{
	const struct ndmsg *ndm = NLMSG_DATA(nh);
	const struct rtattr *a;
	int len;

	if ((nh->nlmsg_type != RTM_NEWNEIGH && nh->nlmsg_type != RTM_DELNEIGH) ||
	    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ndm)))
		return -EINVAL;
	memset(n, 0, sizeof(*n));
	n->family = xfamily(ndm->ndm_family);
	if (!n->family)
		return -EAFNOSUPPORT;
	n->del = nh->nlmsg_type == RTM_DELNEIGH;
	n->ifindex = ndm->ndm_ifindex;
	n->state = ndm->ndm_state;
	n->flags = ndm->ndm_flags;
	len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ndm));
	a = (const struct rtattr *)((const char *)ndm + NLMSG_ALIGN(sizeof(*ndm)));
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_DST &&
		    RTA_PAYLOAD(a) == (n->family == XNF_AF_INET ? 4u : 16u))
			memcpy(n->addr, RTA_DATA(a), RTA_PAYLOAD(a));
		else if (a->rta_type == NDA_LLADDR) {
			n->lladdr_len = RTA_PAYLOAD(a);
			if (n->lladdr_len == 6)
				memcpy(n->lladdr, RTA_DATA(a), 6);
		} else if (a->rta_type == NDA_PROTOCOL && RTA_PAYLOAD(a) == 1) {
			n->proto = *(const __u8 *)RTA_DATA(a);
		} else if (a->rta_type == NDA_FLAGS_EXT && RTA_PAYLOAD(a) == 4) {
			memcpy(&n->flags_ext, RTA_DATA(a), 4);
		}
	}
	return 0;
}

int rtnl_link_parse(const struct nlmsghdr *nh, struct rtnl_link *l)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(nh);
	const struct rtattr *a;
	int len;

	if ((nh->nlmsg_type != RTM_NEWLINK && nh->nlmsg_type != RTM_DELLINK) ||
	    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->del = nh->nlmsg_type == RTM_DELLINK;
	l->ifindex = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	l->type = ifi->ifi_type;
	len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi));
	for (a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == IFLA_ADDRESS) {
			l->addr_len = RTA_PAYLOAD(a) <= 255 ? RTA_PAYLOAD(a) :
							      255;
			if (l->addr_len == 6)
				memcpy(l->addr, RTA_DATA(a), 6);
		} else if (a->rta_type == IFLA_IFNAME) {
			size_t n = RTA_PAYLOAD(a);

			if (n >= sizeof(l->name))
				n = sizeof(l->name) - 1;
			memcpy(l->name, RTA_DATA(a), n);
			l->name[n] = '\0';
		}
	}
	return 0;
}

int rtnl_addr_parse(const struct nlmsghdr *nh, struct rtnl_addr *r)
{
	const struct ifaddrmsg *ifa = NLMSG_DATA(nh);
	const struct rtattr *a;
	bool local = false;
	__u32 alen;
	int len;

	if ((nh->nlmsg_type != RTM_NEWADDR && nh->nlmsg_type != RTM_DELADDR) ||
	    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->family = xfamily(ifa->ifa_family);
	if (!r->family)
		return -EAFNOSUPPORT;
	r->del = nh->nlmsg_type == RTM_DELADDR;
	r->plen = ifa->ifa_prefixlen;
	r->ifindex = ifa->ifa_index;
	alen = r->family == XNF_AF_INET ? 4 : 16;
	len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa));
	for (a = IFA_RTA(ifa); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (RTA_PAYLOAD(a) != alen)
			continue;
		if (a->rta_type == IFA_LOCAL) {
			memcpy(r->addr, RTA_DATA(a), alen);
			local = true;
		} else if (a->rta_type == IFA_ADDRESS && !local) {
			memcpy(r->addr, RTA_DATA(a), alen);
		}
	}
	return 0;
}

int rtnl_nexthop_parse(const struct nlmsghdr *nh, struct rtnl_nexthop *n)
{
	const struct nhmsg *nhm = NLMSG_DATA(nh);
	const struct rtattr *a;
	int len;

	if ((nh->nlmsg_type != RTM_NEWNEXTHOP && nh->nlmsg_type != RTM_DELNEXTHOP) ||
	    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*nhm)))
		return -EINVAL;
	memset(n, 0, offsetof(struct rtnl_nexthop, group));
	n->del = nh->nlmsg_type == RTM_DELNEXTHOP;
	n->dead = nhm->nh_flags & (RTNH_F_DEAD | RTNH_F_LINKDOWN);
	len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*nhm));
	a = (const struct rtattr *)((const char *)nhm + NLMSG_ALIGN(sizeof(*nhm)));
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		switch (a->rta_type) {
		case NHA_ID:
			if (RTA_PAYLOAD(a) >= 4)
				memcpy(&n->id, RTA_DATA(a), 4);
			break;
		case NHA_BLACKHOLE:
			n->blackhole = true;
			break;
		case NHA_FDB:
			n->fdb = true;
			break;
		case NHA_ENCAP_TYPE:
			n->encap = attr_u16(a);
			break;
		case NHA_OIF:
			if (RTA_PAYLOAD(a) >= 4)
				memcpy(&n->hop.ifindex, RTA_DATA(a), 4);
			break;
		case NHA_GATEWAY:
			if (RTA_PAYLOAD(a) == 4 || RTA_PAYLOAD(a) == 16) {
				n->hop.gw_family = RTA_PAYLOAD(a) == 4 ?
							   XNF_AF_INET :
							   XNF_AF_INET6;
				memcpy(n->hop.gw, RTA_DATA(a), RTA_PAYLOAD(a));
			}
			break;
		case NHA_GROUP: {
			const struct nexthop_grp *g = RTA_DATA(a);
			size_t i, cnt = RTA_PAYLOAD(a) / sizeof(*g);

			for (i = 0; i < cnt; i++) {
				/* The weight - 1, its high bits since 6.12. */
				if (g[i].weight != g[0].weight ||
				    g[i].weight_high != g[0].weight_high)
					n->weighted = true;
				if (n->ngroup == RTNL_HOPS_MAX) {
					n->too_many = true;
					break;
				}
				n->group[n->ngroup++] = g[i].id;
			}
			break;
		}
		}
	}
	return n->id ? 0 : -EINVAL;
}
