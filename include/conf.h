/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * conf.h - the whole configuration of an instance as one value (conf.c):
 * what `xnf save` prints, what `xnf apply FILE` builds from the file and
 * makes the running state equal to, and what `xnf -b` checks a batch
 * against before it runs a line.
 *
 * A configuration holds the attachments of the caller's network namespace
 * (device, chain, XDP mode, placement request), the routes, the firewall
 * rules and default policy, the FDB, the cross-connects and the exception
 * actions. Devices are by name for attachments and by ifindex elsewhere,
 * as the tables hold them. Counters, AF_XDP workers and attachments in
 * other namespaces are not part of it and are never touched by an apply.
 */
#ifndef XNF_CONF_H
#define XNF_CONF_H

#include "xnf.h"
#include "placement.h"

struct xnf_conf_attach {
	char dev[16];
	__u32 xdp_flags;	     /* XDP_FLAGS_DRV_MODE or _SKB_MODE */
	struct xnf_chain_spec chain; /* len, nf, fused, l3_fib */
	bool placed;		     /* attached with queues or cores */
	struct xnf_plan_req place;   /* queues (0: as they are), cores */
};

/* A route by value: nexthop and group ids are an instance's, so a
 * multipath route holds its next hops themselves, each with the MAC it
 * runs with, as a unicast route does. Two multipath routes are the same
 * when their sets of next hops are. */
struct xnf_conf_route {
	struct xnf_route_entry e; /* nh 0; a multipath route: e.rt.type only */
	__u32 npaths;		  /* multipath: how many next hops; else 0 */
	struct xnf_route *paths;  /* multipath: sorted (xnf_conf_path_cmp) */
};

/* Each array is sorted by its key, in the order `xnf save` prints: the
 * attachments by device name, the routes IPv4 first and longest prefix
 * first, the FDB by MAC, the cross-connects by ingress ifindex. */
struct xnf_conf {
	struct xnf_config cfg; /* the exception actions */
	struct xnf_fw_set *fw;
	struct xnf_conf_attach *att;
	__u32 natt;
	struct xnf_conf_route *routes;
	__u32 nroutes;
	struct xnf_fdb_ent *fdb;
	__u32 nfdb;
	struct xnf_xconnect_ent *xc; /* both directions of every pair */
	__u32 nxc;
};

/* A fresh instance's configuration: nothing attached, no routes, rules or
 * entries, default allow, the default exception actions. */
int xnf_conf_new(struct xnf_conf **out);
/* The running configuration, read without writing anything. */
int xnf_conf_read(struct xnf_dp *dp, struct xnf_conf **out, char *err,
		  size_t errlen);
void xnf_conf_free(struct xnf_conf *c);

/* Edits of a configuration in memory, refused as the transactions of the
 * same name refuse them on a running instance (-EEXIST, -ENOENT, -EBUSY),
 * with what to do in @err. Nothing runs until xnf_conf_apply(). */
int xnf_conf_attach(struct xnf_conf *c, const struct xnf_conf_attach *a,
		    char *err, size_t errlen);
int xnf_conf_detach(struct xnf_conf *c, const char *dev, char *err,
		    size_t errlen);
int xnf_conf_chain_set(struct xnf_conf *c, const char *dev,
		       const struct xnf_chain_change *chg, char *err,
		       size_t errlen);
int xnf_conf_route_add(struct xnf_conf *c, int family, const void *addr,
		       __u32 plen, const struct xnf_route *rt, bool replace,
		       char *err, size_t errlen);
/* A multipath route over the @n unicast next hops @paths (distinct), as
 * xnf_route_add_multipath() takes it; one next hop is a unicast route. */
int xnf_conf_route_add_multipath(struct xnf_conf *c, int family,
				 const void *addr, __u32 plen,
				 const struct xnf_route *paths, __u32 n,
				 bool replace, char *err, size_t errlen);
int xnf_conf_route_del(struct xnf_conf *c, int family, const void *addr,
		       __u32 plen, char *err, size_t errlen);
int xnf_conf_fdb_add(struct xnf_conf *c, const __u8 mac[6], __u32 ifindex,
		     bool replace, char *err, size_t errlen);
int xnf_conf_fdb_del(struct xnf_conf *c, const __u8 mac[6], char *err,
		     size_t errlen);
int xnf_conf_xconnect_add(struct xnf_conf *c, __u32 if1,
			  const struct xnf_xconnect *fwd, __u32 if2,
			  const struct xnf_xconnect *rev, char *err,
			  size_t errlen);
int xnf_conf_xconnect_remove(struct xnf_conf *c, __u32 ifindex, char *err,
			     size_t errlen);
/* The order of a multipath route's next hops in a configuration (and so
 * in `xnf save`): by gateway, then device, then MACs. */
int xnf_conf_path_cmp(const void *a, const void *b);
/* What `xnf destroy` leaves: -EBUSY while something is attached. */
int xnf_conf_destroy(struct xnf_conf *c, char *err, size_t errlen);

/* What an apply changed (or, when it failed, had changed before it rolled
 * back), counted per kind of element. */
struct xnf_conf_changes {
	__u32 attached, detached, reattached, chains, config, firewall;
	__u32 routes, fdb, xconnects;
};

/*
 * Makes the running configuration of @dp equal to @want. Everything that
 * can be checked before a change is checked first (devices, placement
 * plans, the firewall compiles), so a configuration that cannot run
 * changes nothing. Then only the difference is applied, hitlessly: an
 * attachment with the same chain, mode and placement is left alone (no
 * program reloaded, no counter reset), another chain is a chain switch,
 * another XDP mode or placement a detach and attach; the exception
 * actions are written once, the firewall switched once, and routes, FDB
 * entries and cross-connects are added, replaced and removed one element
 * at a time, adds and replaces before removals, detaches last. Applying
 * what runs changes nothing.
 *
 * If a change fails, the ones made before it are undone by applying the
 * configuration that ran before (reported in @err when that fails too).
 * @chg (may be NULL) gets what was changed.
 */
int xnf_conf_apply(struct xnf_dp *dp, const struct xnf_conf *want,
		   struct xnf_conf_changes *chg, char *err, size_t errlen);

#endif /* XNF_CONF_H */
