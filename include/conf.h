/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * conf.h - the one way to change xnf's configuration: edit a candidate,
 * then commit it against what runs (conf.c, commit.c), as FRR's
 * northbound, Junos and VyOS do it.
 *
 * A configuration holds the attachments of the caller's network namespace
 * (device, chain, XDP mode, placement request), the routes written by
 * hand, the firewall rules and default policy, the NAT rules, the FDB, the
 * cross-connects and the exception actions. Devices are by name for
 * attachments and by ifindex elsewhere, as the tables hold them.
 * Counters, AF_XDP workers, routes mirrored by a route sync and
 * attachments in other namespaces are not part of it and are never
 * touched by a commit.
 *
 * A candidate is one of two kinds:
 *   - a whole configuration (xnf_conf_new(), xnf_conf_read()): what it
 *     does not hold does not run after the commit (`xnf apply FILE`);
 *   - the running configuration plus edits (xnf_conf_running()): what
 *     its edits did not touch stays as it runs. Only the elements an edit
 *     touches are read from the instance, one each (a route is one
 *     lookup, not the table), so a one-line candidate (a single `xnf`
 *     command) costs what its change costs, and `xnf -b FILE` is the
 *     running configuration plus the file's lines.
 * Every edit is checked as it is made, with what is wrong in @err; the
 * checks are the library's, so a candidate built by a daemon or a test is
 * refused as the command line refuses it. What can only be checked
 * against the machine (devices, placement, the firewall's compiled size)
 * is checked by the commit before it changes anything.
 */
#ifndef XNF_CONF_H
#define XNF_CONF_H

#include "xnf.h"
#include "placement.h"
#include "ct.h"
#include "nat.h"

struct xnf_conf_attach {
	char dev[16];
	__u32 xdp_flags;	     /* XDP_FLAGS_DRV_MODE or _SKB_MODE */
	struct xnf_chain_spec chain; /* len, nf, fused, l3_fib */
	bool placed;		     /* attached with queues or cores */
	struct xnf_plan_req place;   /* queues (0: as they are), cores */
	/* An edit's, not what runs: `chain set` loads the chain again even
	 * when it is the one that runs (new programs after an upgrade). */
	bool reload;
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
 * first, the FDB by MAC, the cross-connects by ingress ifindex. In a
 * candidate over what runs, the arrays hold only the elements its edits
 * touched (and cfg and fw only once an edit touched them: fw is NULL
 * before). */
struct xnf_conf {
	struct xnf_config cfg;	   /* the exception actions */
	struct xnf_ct_settings ct; /* the connection table's, known with cfg */
	struct xnf_fw_set *fw;
	struct xnf_nat_set *nat; /* as fw: NULL in a candidate until touched */
	struct xnf_conf_attach *att;
	__u32 natt;
	struct xnf_conf_route *routes;
	__u32 nroutes;
	struct xnf_fdb_ent *fdb;
	__u32 nfdb;
	struct xnf_xconnect_ent *xc; /* both directions of every pair */
	__u32 nxc;
	/* Private to the library: how the candidate relates to what runs
	 * (conf.c). */
	bool whole;	       /* a whole configuration */
	bool cfg_known;	       /* cfg holds a value (always when whole) */
	bool destroy;	       /* `destroy`: no instance after the commit */
	struct xnf_dp *dp;     /* over what runs: where elements are read */
	struct xnf_conf *base; /* over what runs: the touched elements as
				 * they ran when first touched */
};

/* A fresh instance's configuration, whole: nothing attached, no routes,
 * rules or entries, default allow, the default exception actions. */
int xnf_conf_new(struct xnf_conf **out);
/* The running configuration, whole, read without writing anything. */
int xnf_conf_read(struct xnf_dp *dp, struct xnf_conf **out, char *err,
		  size_t errlen);
/* A candidate over the running configuration of @dp (NULL: no instance
 * yet, a fresh one's). Its edits read what they touch from @dp: the
 * caller holds the instance's lock (xnf_open() for writing) from here to
 * the commit, so what was read is what the commit changes. */
int xnf_conf_running(struct xnf_dp *dp, struct xnf_conf **out);
void xnf_conf_free(struct xnf_conf *c);

/* Edits, each refused (-EEXIST, -ENOENT, -EBUSY, -EINVAL, ...) with what
 * is wrong in @err, the candidate unchanged. Nothing runs until the
 * commit. */
int xnf_conf_attach(struct xnf_conf *c, const struct xnf_conf_attach *a,
		    char *err, size_t errlen);
int xnf_conf_detach(struct xnf_conf *c, const char *dev, char *err,
		    size_t errlen);
/* Every attachment of this network namespace. */
int xnf_conf_detach_all(struct xnf_conf *c, char *err, size_t errlen);
int xnf_conf_chain_set(struct xnf_conf *c, const char *dev,
		       const struct xnf_chain_change *chg, char *err,
		       size_t errlen);
/* A route of @rt's type: unicast (its next hop inline: a unicast MAC, a
 * gateway of the prefix's family or none), local, blackhole, unreachable
 * or kernel. @addr's host bits must be clear. */
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
/* Every route written by hand (origin static), both families; the routes
 * a route sync mirrors stay. */
int xnf_conf_route_flush(struct xnf_conf *c, char *err, size_t errlen);
/* @mac: a unicast station address (l2fwd floods multicast and broadcast
 * frames without looking them up). */
int xnf_conf_fdb_add(struct xnf_conf *c, const __u8 mac[6], __u32 ifindex,
		     bool replace, char *err, size_t errlen);
int xnf_conf_fdb_del(struct xnf_conf *c, const __u8 mac[6], char *err,
		     size_t errlen);
/* The pair @if1 -> @fwd, @if2 -> @rev (two devices); re-adding a pair
 * changes its MACs, a device cross-connected to a third one is -EBUSY. */
int xnf_conf_xconnect_add(struct xnf_conf *c, __u32 if1,
			  const struct xnf_xconnect *fwd, __u32 if2,
			  const struct xnf_xconnect *rev, char *err,
			  size_t errlen);
/* The pair @ifindex is in, both directions. */
int xnf_conf_xconnect_remove(struct xnf_conf *c, __u32 ifindex, char *err,
			     size_t errlen);
/* Firewall rules: @r is checked as xnf_fw_rule_check() does; with
 * @auto_prio its prio becomes the highest in use plus XNF_FW_PRIO_STEP. */
int xnf_conf_fw_add(struct xnf_conf *c, const struct xnf_fw_rule *r,
		    bool auto_prio, char *err, size_t errlen);
int xnf_conf_fw_del(struct xnf_conf *c, __u32 prio, char *err, size_t errlen);
int xnf_conf_fw_default(struct xnf_conf *c, __u32 action, char *err,
			size_t errlen);
/* Removes every rule; the default stays. */
int xnf_conf_fw_flush(struct xnf_conf *c, char *err, size_t errlen);
/* NAT rules (nat.h): @r is checked as xnf_nat_rule_check() does; with
 * @auto_prio its prio becomes the highest in use plus XNF_NAT_PRIO_STEP.
 * The commit applies the rule set once (xnf_nat_apply), whatever the
 * number of edits. */
int xnf_conf_nat_add(struct xnf_conf *c, const struct xnf_nat_rule *r,
		     bool auto_prio, char *err, size_t errlen);
int xnf_conf_nat_del(struct xnf_conf *c, __u32 prio, char *err, size_t errlen);
int xnf_conf_nat_flush(struct xnf_conf *c, char *err, size_t errlen);
/* A setting by its key (xnf_conf_key): an exception action or switch
 * ("no_route" "drop", "flow_cache" "off", ...), or the connection
 * table's ("ct_fragments" "drop", "ct_timeout_established" "3600",
 * "ct_max" "1048576"). */
int xnf_conf_config_set(struct xnf_conf *c, const char *key, const char *val,
			char *err, size_t errlen);
/* What `xnf destroy` leaves: a fresh instance's configuration, and no
 * instance at all when the commit finds it so; -EBUSY while something is
 * attached. */
int xnf_conf_destroy(struct xnf_conf *c, char *err, size_t errlen);

/* The settings a configuration holds, in `xnf save` order: the @i-th
 * key and its value in @c, as xnf_conf_config_set() takes it, into
 * @val[@len]; -1 past the last. */
/* The longest: log_reasons naming every reason. */
#define XNF_CONF_VAL_MAX 512
int xnf_conf_key(const struct xnf_conf *c, size_t i, const char **key,
		 char *val, size_t len);
/* The settings of what runs (a reader may ask): a candidate over @dp
 * whose only known part is theirs, for xnf_conf_key(). */
int xnf_conf_settings(struct xnf_dp *dp, struct xnf_conf **out, char *err,
		      size_t errlen);
/* The cross-connect entry of @c arriving on @in, or NULL: the peer of a
 * pair's end. */
const struct xnf_xconnect_ent *xnf_conf_xc_find(const struct xnf_conf *c,
						__u32 in);
/* Whether @c, a whole configuration or a candidate made over no instance,
 * is a fresh instance's: committing it would change nothing on one. A
 * candidate over an instance: false. */
bool xnf_conf_fresh(const struct xnf_conf *c);
/* The order of a multipath route's next hops in a configuration (and so
 * in `xnf save`): by gateway, then device, then MACs. */
int xnf_conf_path_cmp(const void *a, const void *b);

/* ---- the difference, and the commit ---- */

enum xnf_conf_obj {
	XNF_OBJ_CONFIG,	    /* one key of cfg: key */
	XNF_OBJ_FW_DEFAULT, /* the default policy: fw's */
	XNF_OBJ_FW_RULE,    /* struct xnf_fw_rule */
	XNF_OBJ_ATTACH,	    /* struct xnf_conf_attach */
	XNF_OBJ_ROUTE,	    /* struct xnf_conf_route */
	XNF_OBJ_FDB,	    /* struct xnf_fdb_ent */
	XNF_OBJ_XCONNECT,   /* struct xnf_xconnect_ent: the pair's end of
			     * the lower ifindex, the other in its conf */
	XNF_OBJ_NAT_RULE,   /* struct xnf_nat_rule */
};

enum xnf_conf_op { XNF_OP_ADD, XNF_OP_REMOVE, XNF_OP_CHANGE };

/* One change, in the order the commit makes them. @old is the element as
 * it runs (in the diff's @from), @new as the candidate has it (in @to);
 * NULL where there is none. */
struct xnf_conf_change {
	enum xnf_conf_obj obj;
	enum xnf_conf_op op;
	const void *old, *new;
	__u32 key; /* XNF_OBJ_CONFIG: the key's index (xnf_conf_key) */
};

struct xnf_conf_diff {
	const struct xnf_conf *from; /* what runs, as far as it differs */
	const struct xnf_conf *to;   /* the candidate */
	struct xnf_conf_change *v;
	__u32 n;
	/* Private to the library. */
	__u32 cap;
	bool fresh; /* the commit's instance was made for it (dp->created) */
	struct xnf_conf *owned; /* from, when the diff read it */
};

/*
 * What committing @c to @dp (NULL: no instance, a fresh one's) would
 * change, after every check the commit makes before it changes anything
 * (devices, placement plans, routes by hand where no route sync owns the
 * tables and an l3fwd reads them, the firewall compiles): `xnf apply
 * check`.
 * Writes nothing. Free with xnf_conf_diff_free().
 */
int xnf_conf_diff(struct xnf_dp *dp, const struct xnf_conf *c,
		  struct xnf_conf_diff **out, char *err, size_t errlen);
void xnf_conf_diff_free(struct xnf_conf_diff *d);

/* What a commit changed (or, when it failed, had changed before it rolled
 * back), counted per kind of element. */
struct xnf_conf_changes {
	__u32 attached, detached, reattached, chains, config, firewall;
	__u32 routes, fdb, xconnects, nat;
};

struct xnf_commit_result {
	struct xnf_conf_changes done;
	/* The change that failed or was refused (a failed commit): its
	 * element; obj -1 when the commit failed before one. */
	int failed_obj, failed_op;
	bool rolled_back; /* the changes before it were undone */
	bool destroyed;	  /* the instance is gone: close @dp */
};

struct xnf_commit_opts {
	/* What was asked for ("apply FILE"): the change log's words for a
	 * commit that is killed; may be NULL. */
	const char *cmd;
	/* Called once the commit succeeded, with what it changed (may be
	 * NULL). */
	void (*done)(const struct xnf_conf_diff *d, void *arg);
	void *arg;
};

/*
 * Makes the running configuration of @dp what @c says, all or nothing.
 * Everything that can be checked before a change is checked first, so a
 * candidate that cannot run changes nothing. Then only the difference is
 * made, hitlessly: an attachment with the same chain, mode and placement
 * is left alone (no program reloaded, no counter reset), another chain is
 * a chain switch, another XDP mode or placement a detach and attach; the
 * exception actions are written once, the firewall switched once, and
 * routes, FDB entries and cross-connects are added, replaced and removed
 * one element at a time, adds and replaces before removals, detaches
 * last. Committing what runs changes nothing.
 *
 * A commit of more than one change is journalled first: what runs and
 * what is to run, pinned at <root>/commit with who asked (@o->cmd). If a
 * change fails, the ones before it are undone; if the process is killed,
 * the next writer's xnf_open() undoes them (xnf_conf_repair) and records
 * in the change log what was attempted and how it ended. A commit on an
 * instance its xnf_open() made, that fails and is undone, removes the
 * instance again.
 *
 * @c must be a candidate over @dp (xnf_conf_running(@dp)), over no
 * instance (xnf_conf_running(NULL), committed to the one made for it), or
 * whole. @o and @res may be NULL.
 */
int xnf_conf_commit(struct xnf_dp *dp, const struct xnf_conf *c,
		    const struct xnf_commit_opts *o,
		    struct xnf_commit_result *res, char *err, size_t errlen);

/*
 * What a commit that was killed left: undone (the configuration before it
 * made whole again) and recorded in the change log. Called by xnf_open()
 * for every writer, after the repairs of the transactions; 0 when there
 * was nothing to do or it was done, else -errno with the reason logged.
 */
int xnf_conf_repair(struct xnf_dp *dp);

#endif /* XNF_CONF_H */
