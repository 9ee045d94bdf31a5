/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_l3fwd.h - l3fwd's tables: the routes (xnf_rt4 / xnf_rt6, in two
 * copies), the nexthop objects and multipath groups they name, and the
 * route sync that owns them (xnf_rtsync). Read by the XDP l3fwd
 * (bpf/l3fwd.bpf.h) and the AF_XDP workers' (userspace/nf_l3fwd.c),
 * written by libxnf (lib/routes.c, lib/nexthop.c).
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role). Only fixed-width types, and enums that are checked to
 * be a __u32 (XNF_ENUM_U32, xnf_dp.h); padding is explicit and the user
 * side checks every size with _Static_assert (include/xnf.h). Included by
 * the BPF programs (after vmlinux.h or linux/bpf.h) and by user space
 * (after linux/types.h).
 */
#ifndef XNF_UAPI_L3FWD_H
#define XNF_UAPI_L3FWD_H

#include "xnf_dp.h"

/* Routes per family and copy: LPM tries allocate on demand, a full table
 * fits. */
#define XNF_MAX_ROUTES	(1u << 21)
#define XNF_MAX_NH	8192 /* nexthop objects (xnf_nh) */
#define XNF_MAX_NHG	1024 /* multipath groups (xnf_nhg) */
#define XNF_NHG_PATHS	16   /* next hops of one group */
#define XNF_NHG_BUCKETS 128  /* resilient hash buckets of a group */

/* The routes: LPM tries keyed by prefix; the value names a nexthop
 * object or a multipath group (see docs/design.md, "Next hops"). */
struct xnf_rt4_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct xnf_rt6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

enum xnf_route_type {
	XNF_RT_UNICAST = 0, /* forward along nexthop .nh */
	XNF_RT_LOCAL,	    /* one of the router's own addresses */
	XNF_RT_BLACKHOLE,   /* drop silently */
	XNF_RT_UNREACHABLE, /* treated like no route: the kernel sends ICMP */
	XNF_RT_MULTIPATH,   /* forward along a nexthop of group .nh */
	XNF_RT_KERNEL,	    /* pass: the kernel forwards it (a connected
			     * subnet, whose hosts it resolves); reason fib */
};
XNF_ENUM_U32(xnf_route_type);

/* Who wrote a route. One source of truth per instance: while a route sync
 * owns the tables (xnf_rtsync), routes are not added by hand. */
enum xnf_route_origin {
	XNF_ORIGIN_STATIC = 0, /* xnf route add, xnf apply */
	XNF_ORIGIN_SYNC = 1,   /* xnf route sync, from a kernel table */
};

/* Why a route of type XNF_RT_KERNEL passes to the kernel, in its
 * xnf_rt_val.nh: what the route sync found in the kernel's route that
 * xnf cannot do in XDP (docs/routing.md). XNF_WHY_NONE for a route by
 * hand, a connected subnet, and another protocol's (proto LIST). Read
 * by no program: a kernel route passes whatever its reason. */
enum xnf_rt_why {
	XNF_WHY_NONE = 0,
	XNF_WHY_ENCAP, /* an encapsulation (lwtunnel: seg6, mpls, ip, bpf...) */
	XNF_WHY_TOS,   /* routes of the prefix that match by TOS */
	XNF_WHY_SOURCE,	 /* source-specific routes (IPv6 "from PREFIX") */
	XNF_WHY_WEIGHTS, /* multipath with unequal weights */
	XNF_WHY_PATHS,	 /* more next hops than a group holds */
	XNF_WHY_DEVICE,	 /* a next hop's device is not Ethernet, or cannot be
			  * an xnf port (no XDP transmit: a bridge, lo) */
	XNF_WHY_NEXTHOP, /* a kernel nexthop object xnf cannot follow */
	__XNF_WHY_MAX
};

/* Value of xnf_rt4 / xnf_rt6. origin stays a number for bpftool: as an
 * enum it would grow the value of up to 2M routes per family and copy
 * from 12 to 16 bytes, and change the layout. */
struct xnf_rt_val {
	enum xnf_route_type type;
	__u32 nh;     /* nexthop id (unicast) or group id (multipath); kernel:
		       * enum xnf_rt_why; else 0 */
	__u16 origin; /* enum xnf_route_origin */
	__u16 plen;   /* the route's own prefix length: a lookup says which
		       * prefix matched, and an exact one needs no scan */
};

/* xnf_rtsync[0]: the route sync that owns the route tables, if any. */
struct xnf_rtsync_info {
	__u32 table; /* kernel table mirrored; 0: no sync owns the routes */
	__u32 pid;   /* of the running sync, 0 when it has exited */
	__u64 since; /* CLOCK_REALTIME ns of its start */
};

enum xnf_nh_state {
	XNF_NH_VALID = 0,  /* forward with these MACs */
	XNF_NH_KERNEL = 1, /* no neighbour: pass (no_neigh), the kernel
			    * resolves it */
};
XNF_ENUM_U32(xnf_nh_state);

/* A next hop, in a slot of xnf_nh (an array, XNF_NH_SLOTS). Nexthop id
 * N (1 .. XNF_MAX_NH - 1) owns slots 2N and 2N + 1; xnf_nh_live[N] says
 * which one is live. A change writes the spare slot and then flips the
 * live word (one aligned 4-byte store), so a packet reads the old next hop
 * or the new one, never a mix, and every route through N follows at once;
 * the old slot is written again only after an RCU grace period (libxnf,
 * lib/nexthop.c). Arrays, because the verifier inlines their lookups. */
struct xnf_nexthop {
	__u32 ifindex;		   /* egress port */
	__u8 dmac[6];		   /* next hop's MAC */
	__u8 smac[6];		   /* egress port's MAC */
	enum xnf_family gw_family; /* of gw; XNF_AF_NONE: directly connected */
	__u8 gw[16];		   /* next hop address */
	enum xnf_nh_state state;
	__u32 refs; /* 0 in the slots; libxnf reports xnf_nh_live's */
	__u32 mtu;  /* the route's MTU (the kernel's RTAX_MTU, mirrored by
		     * the route sync): a longer L3 packet passes to the
		     * kernel (frag_needed), which answers with ICMP; 0:
		     * none (the egress device's MTU still applies) */
};

#define XNF_NH_SLOTS (2 * XNF_MAX_NH)

/* xnf_nh_live[id]. */
struct xnf_nh_live {
	__u32 slot; /* 1 + the live slot of xnf_nh; 0: never used */
	__u32 refs; /* routes and groups using it, 0: a free id whose slot
		     * stays for packets that still hold it (libxnf's
		     * count; the dataplane reads slot only) */
};

/* xnf_nhg, keyed by a group id (__u32, not 0): a resilient group (as the
 * kernel's "nexthop group type resilient"): bucket[flow hash % BUCKETS]
 * is the nexthop id of the flow. A change of the members moves only the
 * buckets it must (lib/nexthop.c); the whole table is replaced in one
 * update, as for xnf_nh. */
struct xnf_nhgroup {
	__u32 n;		       /* members */
	__u32 refs;		       /* routes using it (libxnf's count) */
	__u32 nh[XNF_NHG_PATHS];       /* members' nexthop ids, nh[0..n) */
	__u32 bucket[XNF_NHG_BUCKETS]; /* nexthop ids */
};

/* Key of xnf_nhg_idx (libxnf's: members -> group id, read by no program):
 * the members' ids ascending, the rest 0. */
struct xnf_nhg_key {
	__u32 n;
	__u32 nh[XNF_NHG_PATHS];
};

/* Map names, pinned at <root>/tables/<name>. */
#define XNF_MAP_RT4	xnf_rt4
#define XNF_MAP_RT6	xnf_rt6
#define XNF_MAP_RT4_B	xnf_rt4_b /* the other copy (xnf_config.rt_copy) */
#define XNF_MAP_RT6_B	xnf_rt6_b
#define XNF_MAP_RTSYNC	xnf_rtsync
#define XNF_MAP_NH	xnf_nh
#define XNF_MAP_NH_LIVE xnf_nh_live
#define XNF_MAP_NH_IDX	xnf_nh_idx /* libxnf's: nexthop value -> id */
#define XNF_MAP_NHG	xnf_nhg
#define XNF_MAP_NHG_IDX xnf_nhg_idx /* libxnf's: members -> group id */

#endif /* XNF_UAPI_L3FWD_H */
