/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rtsync.h - the kernel's routes mirrored into xnf's tables (`xnf route
 * sync`), and next hops that follow the kernel's neighbours (`xnf neigh
 * follow`), as a library loop that the CLI, a daemon and the tests share.
 *
 * The sync reads one kernel table (and the router's own addresses from
 * the table local) over rtnetlink: a dump, then the changes as they come,
 * coalesced over a short window and written as one route batch
 * (xnf_route_batch_begin / _commit: packets see the whole batch at once
 * or none of it); more than XNF_RTSYNC_BATCH_MAX changes at once (the
 * first dump of a full table) are written in batches of that many. Its
 * routes have origin XNF_ORIGIN_SYNC. After a netlink overrun, a link
 * going down (IPv4 drops routes then without telling) and periodically it
 * dumps everything again and writes only the difference.
 *
 * How kernel routes map (docs/design.md, "Route sync"):
 *   via GW (one or several next hops, also through kernel nexthop
 *       objects, which it follows)  unicast or multipath; the next
 *       hop's MAC from the kernel's neighbour entry, or, while there is
 *       no usable one, state XNF_NH_KERNEL (packets pass, reason
 *       no_neigh, and the kernel resolves the neighbour)
 *       with the route's MTU (RTAX_MTU) in its next hops: what is
 *       longer passes, and the kernel answers it with ICMP
 *   dev only (connected subnets), throw, other protocols than asked for
 *       XNF_RT_KERNEL
 *   what xnf cannot forward itself: an encapsulation, routes by TOS or
 *       by source, unequal weights, more than 16 next hops, a device
 *       without XDP transmit  XNF_RT_KERNEL with its reason (enum
 *       xnf_rt_why), reported (docs/routing.md, "Route attributes")
 *   local / anycast (table local)  XNF_RT_LOCAL
 *   blackhole  blackhole; unreachable, prohibit  unreachable
 */
#ifndef XNF_RTSYNC_H
#define XNF_RTSYNC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xnf.h" /* struct xnf_rtsync_info */

struct xnf_dp;

#define XNF_RTSYNC_WINDOW_MS	 10  /* idle time that ends a window */
#define XNF_RTSYNC_WINDOW_MAX_MS 50  /* and its bound under a stream */
#define XNF_RTSYNC_RESYNC_S	 300 /* periodic full resync */
#define XNF_RTSYNC_RCVBUF	 (64 << 20)
/* Prefixes per batch: a window's changes are one batch up to this many
 * (a full table is written in several, ~1 s each here). */
#define XNF_RTSYNC_BATCH_MAX	 65536

struct xnf_rtsync_opts {
	__u32 table;	 /* kernel table; 0: main (254) */
	__u64 proto[4];	 /* RTPROT_* bits xnf forwards; all zero: every one */
	__u32 window_ms; /* 0: XNF_RTSYNC_WINDOW_MS */
	__u32 window_max_ms; /* 0: XNF_RTSYNC_WINDOW_MAX_MS */
	__u32 resync_s;	     /* 0: XNF_RTSYNC_RESYNC_S; ~0U: never */
	int rcvbuf;	     /* bytes; 0: XNF_RTSYNC_RCVBUF */
	bool follow_only;    /* xnf neigh follow: next hops only */
	/* Tests: SIGKILL itself after the writes of batch N (from 1), before
	 * its commit. 0: never. */
	__u32 kill_batch;
};

enum xnf_rtsync_ev {
	XNF_RTSYNC_STARTED,	/* routes now, and the counts of the first
				 * sync: what changed while none ran */
	XNF_RTSYNC_BATCH,	/* a batch committed: counts */
	XNF_RTSYNC_RESYNC,	/* a full resync done: reason, counts */
	XNF_RTSYNC_OVERRUN,	/* the kernel dropped messages */
	XNF_RTSYNC_NEIGH,	/* a next hop followed its neighbour */
	XNF_RTSYNC_UNSUPPORTED, /* a route xnf leaves to the kernel */
	XNF_RTSYNC_STOPPED,
	XNF_RTSYNC_CT_FLUSH, /* masqueraded connections flushed: their
			      * address was removed (family, addr) or their
			      * device went down (family 0); ifindex,
			      * flushed, reason: an error, else NULL */
};

struct xnf_rtsync_event {
	enum xnf_rtsync_ev type;
	const char *reason; /* RESYNC: start, overrun, periodic, link, addr;
			     * UNSUPPORTED: why */
	/* BATCH, RESYNC, STARTED */
	__u32 added, replaced, deleted, unchanged;
	__u32 unsupported; /* routes left to the kernel for a reason */
	__u32 routes;	   /* synced routes now */
	__u64 usec;	   /* the batch's duration */
	/* NEIGH, UNSUPPORTED */
	int family; /* XNF_AF_* of addr */
	__u8 addr[16];
	__u32 plen; /* UNSUPPORTED: the route's prefix length */
	__u32 ifindex;
	__u32 nh;	/* NEIGH: the nexthop id */
	__u8 lladdr[6]; /* NEIGH: the MAC now (state valid) */
	bool usable;	/* NEIGH: forwarding (valid) or kernel */
	__u64 flushed;	/* CT_FLUSH: connections */
};

typedef void (*xnf_rtsync_fn)(const struct xnf_rtsync_event *ev, void *ctx);

/*
 * Runs the sync (or with o->follow_only the neighbour following) on @dp,
 * opened by xnf_open() for writing, until *@stop is set. The instance
 * lock is held only while a batch is written. Refused (-EEXIST / -EBUSY,
 * with what to do in @err) when routes added by hand are in the tables or
 * another sync runs: one that holds the sync's lock (a flock on
 * <root>/tables, held from start to end), which a killed one does not,
 * whatever pid it registered. The start converges to the kernel's table:
 * routes the kernel added, changed or deleted while no sync ran are
 * written or removed, and counted in the STARTED event. On *@stop the
 * synced routes stay in the tables and keep forwarding (as zebra -r /
 * graceful restart); the registration keeps the table with pid 0. Events
 * go to @fn.
 */
int xnf_rtsync_run(struct xnf_dp *dp, const struct xnf_rtsync_opts *o,
		   xnf_rtsync_fn fn, void *ctx, volatile sig_atomic_t *stop,
		   char *err, size_t errlen);

/* The route sync of @dp as a reader sees it, without taking any lock (a
 * reader must never make a sync's start fail, as trying its flock would):
 *   info         the registration (xnf_rtsync): table 0 when no sync owns
 *                the routes; pid 0 after a sync stopped cleanly
 *   running      a process holds the sync's flock on <root>/tables, as
 *                /proc/locks lists it: true while a sync runs, false
 *                once it stopped or was killed, whatever pid it registered
 *   last_change  CLOCK_REALTIME ns of the newest change a route sync
 *                recorded in the change log ("route sync": a batch or
 *                resync that changed routes, a next hop that followed its
 *                neighbour) among the XNF_CHANGES_MAX the log keeps; 0:
 *                none there
 * 0, or -errno when the registration or /proc/locks cannot be read. */
struct xnf_rtsync_status {
	struct xnf_rtsync_info info;
	bool running;
	__u64 last_change;
};
int xnf_rtsync_status(struct xnf_dp *dp, struct xnf_rtsync_status *st);

/* Removes every synced route (one batch) and the registration; -EBUSY
 * while a sync runs (holds its lock). *@n gets how many were removed. */
int xnf_rtsync_flush(struct xnf_dp *dp, __u32 *n, char *err, size_t errlen);

/* Kernel table and route protocol names, as ip(8) reads them from
 * /etc/iproute2/rt_tables and rt_protos (and /usr/share/iproute2), or
 * numbers: 0 or -EINVAL. */
int xnf_rt_table_parse(const char *s, __u32 *table);
/* The name ip(8) prints for kernel table @table: its name in rt_tables
 * (the same files), else main, local or default for 254, 255 and 253,
 * else the number; in @buf. */
const char *xnf_rt_table_name(__u32 table, char *buf, size_t len);
int xnf_rt_proto_parse(const char *s, __u8 *proto);

#endif /* XNF_RTSYNC_H */
