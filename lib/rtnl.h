/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rtnl.h - the kernel's routes, neighbours and links over rtnetlink, for
 * the route sync (rtsync.c): dumps, the multicast groups that report
 * changes, and the messages parsed into plain structs. Raw netlink, as
 * neigh.c and netdev.c speak it; internal to libxnf.
 */
#ifndef XNF_LIB_RTNL_H
#define XNF_LIB_RTNL_H

#include <stdbool.h>
#include <linux/types.h>
#include <linux/netlink.h>
#include <linux/neighbour.h>

/* Next hops of one kernel route that rtnl_route_parse keeps; a route with
 * more is reported as such (too_many). */
#define RTNL_HOPS_MAX 32

struct rtnl_sock {
	int fd;
	__u32 seq;
	char *buf;
	size_t buflen;
};

/* A socket subscribed to @groups (RTNLGRP_* numbers, 0-terminated; NULL
 * for a socket that only dumps) with a receive buffer of @rcvbuf bytes
 * (SO_RCVBUFFORCE, else SO_RCVBUF; 0 keeps the default), non-blocking
 * when it listens. */
int rtnl_open(struct rtnl_sock *s, const unsigned int *groups, int rcvbuf);
void rtnl_close(struct rtnl_sock *s);

/* Called with each message of a dump or a read; a negative return stops
 * and is returned. */
typedef int (*rtnl_cb)(const struct nlmsghdr *nh, void *ctx);

/* A whole dump of @type (RTM_GETROUTE, RTM_GETNEIGH, RTM_GETLINK,
 * RTM_GETADDR, RTM_GETNEXTHOP) for @family: -EAGAIN when it raced a change of the table
 * (NLM_F_DUMP_INTR; the caller dumps again). */
int rtnl_dump(struct rtnl_sock *s, int type, int family, rtnl_cb cb, void *ctx);
/* The messages that are queued on a listening socket, without waiting,
 * to the last: 0, or -ENOBUFS when the kernel dropped some (the socket
 * buffer overran: the caller resyncs, with a dump that starts after the
 * queue was emptied). */
int rtnl_read(struct rtnl_sock *s, rtnl_cb cb, void *ctx);
/* Sends the request @nh (NLM_F_ACK is added) on a socket that does not
 * listen, calls @cb (if any) with what the kernel answers (a get's
 * object), and waits for the ack: 0, or the kernel's -errno. */
int rtnl_request(struct rtnl_sock *s, struct nlmsghdr *nh, rtnl_cb cb, void *ctx);

struct rtnl_hop {
	__u32 ifindex;
	__u8 gw_family; /* XNF_AF_INET / XNF_AF_INET6, 0: none */
	__u8 gw[16];
};

struct rtnl_route {
	bool del; /* RTM_DELROUTE */
	__u8 family;
	__u8 dst_len;
	__u8 src_len; /* a source-specific route (IPv6 "from"): > 0 */
	__u8 tos;
	__u8 type;  /* RTN_* */
	__u8 proto; /* RTPROT_* */
	__u8 scope;
	__u32 table;
	__u32 priority;
	__u32 flags;	/* rtm_flags */
	__u32 nh_id;	/* RTA_NH_ID: a route through a nexthop object */
	__u8 dst[16];	/* network order, host bits as the kernel has them */
	__u8 src[16];	/* of a source-specific route */
	__u32 mtu;	/* RTAX_MTU of RTA_METRICS, 0: none */
	__u16 encap;	/* LWTUNNEL_ENCAP_* of the route or of a next hop
			 * (RTA_ENCAP_TYPE), 0: none */
	bool weighted;	/* usable next hops of unequal weights */
	__u32 nhops;	/* usable next hops in hop[] */
	__u32 dead;	/* next hops skipped: RTNH_F_DEAD / RTNH_F_LINKDOWN */
	bool too_many;	/* more than RTNL_HOPS_MAX */
	bool multipath; /* from RTA_MULTIPATH */
	struct rtnl_hop hop[RTNL_HOPS_MAX];
};

/* Neighbour states whose MAC can be used now. INCOMPLETE and FAILED
 * entries have none. */
#define RTNL_NUD_USABLE                                                      \
	(NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | \
	 NUD_NOARP)

struct rtnl_neigh {
	bool del;
	__u8 family; /* XNF_AF_INET / XNF_AF_INET6 */
	__u32 ifindex;
	__u16 state;	 /* NUD_* */
	__u8 flags;	 /* NTF_* */
	__u8 proto;	 /* NDA_PROTOCOL: who made it, 0: not said */
	__u32 flags_ext; /* NDA_FLAGS_EXT: NTF_EXT_MANAGED */
	__u8 addr[16];
	__u8 lladdr[6];
	__u8 lladdr_len; /* 0: none given */
};

struct rtnl_link {
	bool del;
	__u32 ifindex;
	__u32 flags; /* IFF_* */
	__u16 type;  /* ARPHRD_* */
	__u8 addr[6];
	__u8 addr_len; /* what the device has; 6 for Ethernet */
	char name[16];
};

/* An address of the router (RTM_NEWADDR / RTM_DELADDR). */
struct rtnl_addr {
	bool del;
	__u8 family; /* XNF_AF_INET / XNF_AF_INET6 */
	__u8 plen;
	__u32 ifindex;
	/* The router's own: IFA_LOCAL (IPv4; IFA_ADDRESS is the peer of a
	 * point-to-point address), else IFA_ADDRESS. */
	__u8 addr[16];
};

/* A kernel nexthop object (ip nexthop): one next hop, a blackhole, or a
 * group of other objects' ids. */
struct rtnl_nexthop {
	bool del;
	__u32 id;
	bool blackhole;
	bool fdb;      /* a bridge FDB's next hop, not for routes */
	bool dead;     /* RTNH_F_DEAD / RTNH_F_LINKDOWN */
	__u16 encap;   /* LWTUNNEL_ENCAP_* (NHA_ENCAP_TYPE), 0: none */
	bool weighted; /* a group whose members' weights differ */
	struct rtnl_hop hop;
	__u32 ngroup; /* members of a group, 0: not a group */
	bool too_many;
	__u32 group[RTNL_HOPS_MAX];
};

/* The name of an encapsulation (LWTUNNEL_ENCAP_*: "seg6", "mpls", ...),
 * as ip-route(8) writes it. */
const char *rtnl_encap_name(__u16 type);

/* 0, or -EINVAL for a message that is not one of these or is truncated;
 * a route of a family other than IPv4 / IPv6 is -EAFNOSUPPORT. */
int rtnl_route_parse(const struct nlmsghdr *nh, struct rtnl_route *r);
int rtnl_neigh_parse(const struct nlmsghdr *nh, struct rtnl_neigh *n);
int rtnl_link_parse(const struct nlmsghdr *nh, struct rtnl_link *l);
int rtnl_nexthop_parse(const struct nlmsghdr *nh, struct rtnl_nexthop *n);
int rtnl_addr_parse(const struct nlmsghdr *nh, struct rtnl_addr *a);

#endif /* XNF_LIB_RTNL_H */
