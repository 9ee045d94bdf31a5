/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf.h - libxnf, the control plane of the xnf dataplane: the pinned
 * instance (tables), loading chains, writing routes, FDB, cross-connects
 * and the compiled firewall. The `xnf` command, the unit tests and the
 * benchmarks are all built on it.
 *
 * Every function returns 0 or a negative errno and leaves nothing half
 * done; messages go through xnf_log (log.c).
 */
#ifndef XNF_H
#define XNF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

#include "xnf_dp.h"
#include "xnf_l3fwd.h"
#include "xnf_l2fwd.h"
#include "xnf_fw.h"
#include "xnf_changes.h"
#include "xnf_fc.h"
#include "xnf_ct.h"
#include "xnf_nat.h"
#include "xnf_trace.h"

/* The user side checks the layout the BPF side was compiled with. */
_Static_assert(sizeof(struct xnf_config) == 80 &&
		       offsetof(struct xnf_config, fw_input) == 56,
	       "xnf_config layout");
_Static_assert(sizeof(struct xnf_change) == 520, "xnf_change layout");
_Static_assert(sizeof(struct xnf_pkt) == 56, "xnf_pkt layout");
_Static_assert(sizeof(struct xnf_nf_counters) == 64, "xnf_nf_counters layout");
_Static_assert(sizeof(struct xnf_stats) ==
		       XNF_NF_SLOTS * 64 + 4 * 8 * XNF_REASON_SLOTS +
			       8 * XNF_CHAIN_MAX + 2 * 8 * XNF_NF_SLOTS,
	       "xnf_stats layout");
_Static_assert(sizeof(struct xnf_dev_key) == 8, "xnf_dev_key layout");
_Static_assert(sizeof(struct xnf_ct_key) == 40, "xnf_ct_key layout");
_Static_assert(sizeof(struct xnf_ct_entry) == 104, "xnf_ct_entry layout");
_Static_assert(sizeof(struct xnf_ct_pending) == 264, "xnf_ct_pending layout");
_Static_assert(sizeof(struct xnf_ct_config) == 4 * XNF_CT_TIMEOUTS + 8,
	       "xnf_ct_config layout");
_Static_assert(sizeof(struct xnf_ct_counters) == 112, "xnf_ct_counters layout");
_Static_assert(sizeof(struct xnf_nat_rule) == 96, "xnf_nat_rule layout");
_Static_assert(sizeof(struct xnf_nat_hdr) == 16, "xnf_nat_hdr layout");
_Static_assert(sizeof(struct xnf_fc_key) == 48, "xnf_fc_key layout");
_Static_assert(sizeof(struct xnf_fc_entry) == 112 &&
		       offsetof(struct xnf_fc_entry, l2_mac) == 72,
	       "xnf_fc_entry layout");
_Static_assert(sizeof(struct xnf_dev_info) == 24 + 4 * XNF_CHAIN_MAX,
	       "xnf_dev_info layout");
_Static_assert(sizeof(struct xnf_batch_hist) == 3 * 8 * XNF_BATCH_BUCKETS,
	       "batch layout");
_Static_assert(sizeof(struct xnf_poll_start) == 16, "xnf_poll_start layout");
_Static_assert(sizeof(struct xnf_xmit_counters) == 24, "xmit layout");
_Static_assert(sizeof(struct xnf_rt4_key) == 8, "xnf_rt4_key layout");
_Static_assert(sizeof(struct xnf_rt6_key) == 20, "xnf_rt6_key layout");
_Static_assert(sizeof(struct xnf_rt_val) == 12, "xnf_rt_val layout");
_Static_assert(sizeof(struct xnf_nexthop) == 48, "xnf_nexthop layout");
_Static_assert(sizeof(struct xnf_nh_live) == 8, "xnf_nh_live layout");
_Static_assert(sizeof(struct xnf_nhgroup) ==
		       8 + 4 * (XNF_NHG_PATHS + XNF_NHG_BUCKETS),
	       "xnf_nhgroup layout");
_Static_assert(sizeof(struct xnf_rtsync_info) == 16, "xnf_rtsync_info layout");
_Static_assert(sizeof(struct xnf_nhg_key) == 4 + 4 * XNF_NHG_PATHS,
	       "xnf_nhg_key layout");
_Static_assert(sizeof(struct xnf_fdb_key) == 8, "xnf_fdb_key layout");
_Static_assert(sizeof(struct xnf_fdb_entry) == 8, "xnf_fdb_entry layout");
_Static_assert(sizeof(struct xnf_xconnect) == 16, "xnf_xconnect layout");
_Static_assert(sizeof(struct xnf_fw_rule) == 144 &&
		       offsetof(struct xnf_fw_rule, log_prefix) == 80,
	       "xnf_fw_rule layout");
_Static_assert(sizeof(struct xnf_trace_cfg) == 40 + 144, "xnf_trace_cfg layout");
_Static_assert(sizeof(struct xnf_trace_step) == 56, "xnf_trace_step layout");
_Static_assert(sizeof(struct xnf_trace_rec) ==
		       96 + XNF_TRACE_STEPS * sizeof(struct xnf_trace_step),
	       "xnf_trace_rec layout");
_Static_assert(sizeof(struct xnf_trace_stats) == 16, "xnf_trace_stats layout");
_Static_assert(sizeof(struct xnf_log_limit) == 40 + XNF_LOG_PREFIX_MAX,
	       "xnf_log_limit layout");
_Static_assert(sizeof(struct xnf_log_counters) == 16, "xnf_log_counters layout");
_Static_assert(sizeof(struct xnf_log_rec) == 96 + XNF_LOG_PREFIX_MAX &&
		       offsetof(struct xnf_log_rec, ip_len) == 60,
	       "xnf_log_rec layout");
/* firewall.bpf.h's linear scan reads the addresses as 32-bit words. */
_Static_assert(offsetof(struct xnf_fw_rule, src) % 4 == 0 &&
		       offsetof(struct xnf_fw_rule, dst) % 4 == 0,
	       "xnf_fw_rule addresses word-aligned");
_Static_assert(sizeof(struct xnf_fw_hdr) == 32, "xnf_fw_hdr layout");
_Static_assert(sizeof(struct xnf_fw_match) == 32 &&
		       sizeof(struct xnf_fw_extra) == 12,
	       "xnf_fw_match layout");
_Static_assert(sizeof(struct xnf_fw_class) == 8 * (XNF_FW_SUMMARY + XNF_FW_WORDS),
	       "xnf_fw_class layout");
_Static_assert(sizeof(struct xnf_fw_lpm4_key) == 12, "xnf_fw_lpm4_key layout");
_Static_assert(sizeof(struct xnf_fw_lpm6_key) == 24, "xnf_fw_lpm6_key layout");
_Static_assert(sizeof(struct xnf_fw_hit) == 16, "xnf_fw_hit layout");
/* Fields typed with an enum (XNF_ENUM_U32) sit where their __u32 did. */
_Static_assert(offsetof(struct xnf_config, no_route) == 4 &&
		       offsetof(struct xnf_config, martian) == 28 &&
		       offsetof(struct xnf_config, rt_copy) == 32,
	       "xnf_config layout");
_Static_assert(offsetof(struct xnf_dev_info, nf) == 24, "xnf_dev_info layout");
_Static_assert(offsetof(struct xnf_rt_val, nh) == 4 &&
		       offsetof(struct xnf_rt_val, origin) == 8,
	       "xnf_rt_val layout");
_Static_assert(offsetof(struct xnf_nexthop, gw_family) == 16 &&
		       offsetof(struct xnf_nexthop, state) == 36 &&
		       offsetof(struct xnf_nexthop, mtu) == 44,
	       "xnf_nexthop layout");
_Static_assert(offsetof(struct xnf_fw_hdr, sport_none) == 8 &&
		       offsetof(struct xnf_fw_match, slot) == 4 &&
		       offsetof(struct xnf_fw_rule, iif) == 52 &&
		       offsetof(struct xnf_fw_hdr, deps) == 24,
	       "xnf_fw_hdr, xnf_fw_match layout");

/* ---- logging (log.c) ---- */
enum xnf_log_level { XNF_LOG_WARN, XNF_LOG_INFO, XNF_LOG_DEBUG };
void xnf_set_log_level(enum xnf_log_level level);
/* Where the messages go instead of stderr (NULL: stderr again, a warning
 * after "Warning: "): @msg is one whole message. XNF_LOG_WARN is a
 * warning (the call goes on); a call that fails returns its error, with
 * the text in the caller's error buffer. */
typedef void (*xnf_log_fn)(enum xnf_log_level level, const char *msg);
void xnf_set_log_fn(xnf_log_fn fn);
void xnf_log(enum xnf_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define pr_warn(...)  xnf_log(XNF_LOG_WARN, __VA_ARGS__)
#define pr_info(...)  xnf_log(XNF_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) xnf_log(XNF_LOG_DEBUG, __VA_ARGS__)
/* Writes the message of a failure into @err (when given) and returns
 * @ret: every call's way to say what failed and what to do. */
int xnf_errf(char *err, size_t len, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Routes libbpf's own messages through xnf_log, demoted to debug. */
void xnf_libbpf_logging(void);

/* ---- names (names.c) ---- */
const char *xnf_nf_name(__u32 nf);	/* "firewall", ... or NULL */
int xnf_nf_from_name(const char *name); /* enum xnf_nf_id or -EINVAL */
/* The registry's XNF_NFF_* of NF @nf (0 for XNF_NF_ENTRY and past the
 * last). */
__u32 xnf_nf_flags(__u32 nf);
/* The names of the NFs a chain can hold, in the registry's order, joined
 * by @sep ("firewall | l3fwd | l2fwd | xsk"): 0, or -ENAMETOOLONG when
 * they do not fit @len (cut). */
int xnf_nf_list(char *buf, size_t len, const char *sep);
const char *xnf_reason_name(__u32 reason); /* "no_route", ... */
const char *xnf_verdict_name(__u32 verdict);

/* ---- names that become paths (paths.c) ---- */

/* 0 when @dev can name a network device, as the kernel's dev_valid_name()
 * has it (1 to 15 bytes, not "." or "..", no '/', ':' or blank) and without
 * control characters; else -EINVAL with what is wrong in @err (may be
 * NULL). Every libxnf call that makes a pin path or an ifindex of a device
 * name checks it first. */
int xnf_dev_name_check(const char *dev, char *err, size_t errlen);
/* The ifindex of @dev in the caller's network namespace: -EINVAL (not a
 * device name) or -ENODEV, with @err. */
int xnf_dev_ifindex(const char *dev, __u32 *ifindex, char *err, size_t errlen);
/* <root>/dev/<dev>[/<name>] (<root>/dev with a NULL @dev) into @buf:
 * -EINVAL for a bad @dev, -ENAMETOOLONG when it does not fit; @buf is ""
 * then. */
int xnf_dev_path(const char *root, const char *dev, const char *name, char *buf,
		 size_t len);

/* The longest pin root, with its NUL: every pin path below it fits
 * PATH_MAX. */
#define XNF_ROOT_MAX 256
/* 0 when @root can be a pin root: an absolute path without ".", ".." or
 * empty components, shorter than XNF_ROOT_MAX, whose parent is on a bpffs
 * (a directory xnf owns inside a bpffs, never a mount point itself); else
 * -EINVAL, -ENAMETOOLONG or -ENOTSUP with what to do in @err. */
int xnf_root_check(const char *root, char *err, size_t errlen);
/* @root as this process must name it, into @out (XNF_ROOT_MAX bytes):
 * @root itself, or, when no bpffs is mounted on its parent in this mount
 * namespace and that is not PID 1's (`ip netns exec` made it, with a
 * fresh /sys), the host's bpffs through /proc/1/root<root>, where pins
 * outlive the process. Where PID 1 is out of reach, @root itself in the
 * mount namespace of the process that started this one, unless `ip netns
 * exec` made it. -ENOTSUP with the one command that works from here in
 * @err when only a bpffs that would vanish with the process is left. */
int xnf_root_resolve(const char *root, char *out, size_t len, char *err,
		     size_t errlen);

/* ---- the instance (dataplane.c) ---- */
#define XNF_DEFAULT_PIN_ROOT "/sys/fs/bpf/xnf"

/* An opened instance (opaque: lib/dp_priv.h). Its tables are libxnf's
 * to read and write; a caller never holds one of their descriptors. */
struct xnf_dp;

/* The pin root as this process reaches it (xnf_root_resolve(): under
 * `ip netns exec`, the host's bpffs through /proc/1/root): the one to
 * pass to calls that take a pin root. */
const char *xnf_dp_root(const struct xnf_dp *dp);
/* Opened with XNF_OPEN_READ: it holds no lock and writes nothing. */
bool xnf_dp_reader(const struct xnf_dp *dp);

/* Opens the instance pinned at @root, refused as xnf_open() refuses it
 * when another user could change it. With @create, makes the root (mode
 * 0700, mounting nothing) and the tables if they do not exist yet, with
 * the default configuration; without, -ENOENT if there is none, or if its
 * creation never finished (the schema in xnf_cfg is written last). A root
 * holding tables of another schema is refused with -EPROTO. Every failure
 * but -ENOENT says in @err what failed and what to do. xnf_open() also
 * takes the lock and repairs. */
int xnf_dp_open(const char *root, bool create, struct xnf_dp **out, char *err,
		size_t errlen);
void xnf_dp_close(struct xnf_dp *dp);
/* Removes <root>/dev/<dev> and everything pinned in it. */
int xnf_dev_remove(struct xnf_dp *dp, const char *dev);
/* Removes every pin of the instance (tables and all devices): the caller
 * must have detached the devices first. */
int xnf_dp_destroy(const char *root);

/* A fresh instance's configuration (the default exception actions). */
void xnf_cfg_default(struct xnf_config *cfg);
/* The connection table's settings of a new instance (xnf_ct_cfg[0]):
 * Linux's default timeouts, fragments passed to the kernel. */
void xnf_ct_cfg_default(struct xnf_ct_config *cfg);
int xnf_cfg_read(struct xnf_dp *dp, struct xnf_config *cfg);
/* Writes @cfg, but with tables_gen moved on (the workers copy the
 * exception actions): the caller's tables_gen is ignored. */
int xnf_cfg_write(struct xnf_dp *dp, const struct xnf_config *cfg);

/* Table generation, for the flow cache (bpf/fcache.bpf.h), whose results
 * of older generations no longer match, and the AF_XDP workers
 * (userspace/unf.h), which keep copies of the routes, FDB, cross-connects,
 * rules and exception actions and reload them when xnf_config.tables_gen
 * moves. Every successful xnf_route_set/del, route batch commit,
 * xnf_fdb_set/del, xnf_xconnect_set/del, xnf_fw_apply and xnf_cfg_write
 * moves it, after the change is visible to packets; a writer of the maps
 * that bypasses them must call xnf_tables_changed() itself. If it cannot
 * move it, those functions return the error (with a warning that the
 * change itself is in force): cached results may be old until the next
 * change. A nexthop or group changed in place only warns: the cache does
 * not hold them. */
int xnf_tables_changed(struct xnf_dp *dp);
int xnf_tables_gen(struct xnf_dp *dp, __u32 *gen);

/* ---- the change log (changes.c) ---- */
enum xnf_change_kind {
	XNF_CHANGE_COMMAND,   /* someone asked for it: `xnf ...`, an apply */
	XNF_CHANGE_AUTOMATIC, /* a daemon followed the kernel: a route
			       * sync's batch, a next hop's new MAC */
};
/* Records that @cmd (the command as typed, e.g. "route add 192.0.2.0/24
 * via 198.51.100.1") was done or @failed, with @msg (why it failed, or
 * what it did; NULL: nothing), the caller's pid, uid and login uid and
 * the time: in syslog always (the journal; facility daemon, priority err
 * when failed, else info for XNF_CHANGE_AUTOMATIC and notice for the
 * rest), and in the instance's change log when @dp is open for writing
 * (its lock held). 0, or -errno when the change log could not be
 * written (syslog was). */
int xnf_change_log(struct xnf_dp *dp, enum xnf_change_kind kind,
		   const char *cmd, bool failed, const char *msg);
/* The number of the last change recorded (0: none yet). */
int xnf_change_seq(struct xnf_dp *dp, __u64 *seq);
/* Change @seq from the log: 0; -ESTALE when a later one took its slot
 * (the log keeps XNF_CHANGES_MAX); -ENOENT when it is not written yet. */
int xnf_change_read(struct xnf_dp *dp, __u64 seq, struct xnf_change *c);
/* Egress ports (the devmap), each with its transmit counters (xnf_xmit,
 * keyed by the caller's netns): xnf_port_add makes @ifindex a port (0
 * also when it is one), xnf_port_del takes it out. */
int xnf_port_add(struct xnf_dp *dp, __u32 ifindex);
int xnf_port_del(struct xnf_dp *dp, __u32 ifindex);
bool xnf_port_exists(struct xnf_dp *dp, __u32 ifindex);
/* A route, FDB entry or cross-connect sends packets to @ifindex. */
bool xnf_port_in_use(struct xnf_dp *dp, __u32 ifindex);

/* A route as libxnf takes and gives it: the next hop inline. A unicast
 * route's next hop becomes a nexthop object (xnf_nh) shared with every
 * route that has the same one (nexthop.c). */
struct xnf_route {
	__u32 type;	 /* enum xnf_route_type */
	__u32 ifindex;	 /* egress port */
	__u8 dmac[6];	 /* next hop's MAC */
	__u8 smac[6];	 /* egress port's MAC */
	__u32 gw_family; /* enum xnf_family of gw, 0 = directly connected */
	__u8 gw[16];	 /* next hop address */
	__u32 state;	 /* enum xnf_nh_state: XNF_NH_KERNEL while the next
			  * hop has no neighbour entry */
	__u32 origin;	 /* enum xnf_route_origin */
	__u32 mtu;	 /* the route's MTU (xnf_nexthop.mtu), 0: none */
	__u32 why;	 /* XNF_RT_KERNEL: enum xnf_rt_why, else 0 */
};

/* Routes: @addr in network order (4 or 16 bytes by @family). */
/* @flags: BPF_ANY (replace) or BPF_NOEXIST (add; -EEXIST if present).
 * The route's objects are taken before it is written and the replaced
 * route's released after (nexthop.c). */
int xnf_route_set(struct xnf_dp *dp, int family, const void *addr, __u32 plen,
		  const struct xnf_route *rt, __u64 flags);
/* A multipath route over the @n (1..XNF_NHG_PATHS) unicast next hops
 * @paths: a resilient group (a group with the same members is shared). */
int xnf_route_set_multipath(struct xnf_dp *dp, int family, const void *addr,
			    __u32 plen, const struct xnf_route *paths, __u32 n,
			    __u64 flags);
int xnf_route_del(struct xnf_dp *dp, int family, const void *addr, __u32 plen);

/*
 * Route batches (routes.c). The route tables exist in two copies and
 * packets read the live one (xnf_config.rt_copy). Outside a batch a route
 * write changes both, the spare first. Between xnf_route_batch_begin() and
 * xnf_route_batch_commit(), route writes (xnf_route_set*, xnf_route_del,
 * xnf_route_add*) change the spare copy only; the commit makes them visible
 * to packets at once, by flipping rt_copy, then brings the other copy up
 * to date. A process killed inside a batch leaves the packets on the last
 * committed set; the next writer's xnf_open() puts the copies back in
 * step. xnf_route_batch_abort() forgets the batch's writes. Reads
 * (xnf_route_list, xnf_route_lookup) show the live copy. The caller holds
 * the instance lock from begin to commit.
 */
int xnf_route_batch_begin(struct xnf_dp *dp);
int xnf_route_batch_commit(struct xnf_dp *dp);
void xnf_route_batch_abort(struct xnf_dp *dp);
/* Puts the spare copy back in step with the live one after a batch that
 * was never committed (xnf_open does it): its routes' counts released. */
int xnf_route_copies_repair(struct xnf_dp *dp);

/* Nexthop objects and groups (nexthop.c). Counted by the routes and
 * groups that use them; the last release deletes. Ids start at 1. */
void xnf_route_nexthop(const struct xnf_route *rt, struct xnf_nexthop *nh);
/* And back: the unicast route through @nh. */
void xnf_nexthop_route(const struct xnf_nexthop *nh, struct xnf_route *rt);
/* The id of a nexthop equal to @nh (refs ignored), counted once more, or
 * of a new one. */
int xnf_nh_get(struct xnf_dp *dp, const struct xnf_nexthop *nh, __u32 *id);
int xnf_nh_ref(struct xnf_dp *dp, __u32 id);
int xnf_nh_put(struct xnf_dp *dp, __u32 id);
int xnf_nh_lookup(struct xnf_dp *dp, __u32 id, struct xnf_nexthop *nh);
/* Replaces what nexthop @id forwards with (@nh; its refs ignored) in one
 * element write: every route and group through it follows at once. */
int xnf_nh_update(struct xnf_dp *dp, __u32 id, const struct xnf_nexthop *nh);
/* The whole table (free() both). */
int xnf_nh_list(struct xnf_dp *dp, __u32 **ids, struct xnf_nexthop **nhs,
		__u32 *n);
/* A group of the nexthops @ids (distinct, 1..XNF_NHG_PATHS): an existing
 * one with the same members, counted once more, or a new one. */
int xnf_nhg_get(struct xnf_dp *dp, const __u32 *ids, __u32 n, __u32 *id);
int xnf_nhg_put(struct xnf_dp *dp, __u32 id);
int xnf_nhg_lookup(struct xnf_dp *dp, __u32 id, struct xnf_nhgroup *g);
/* Changes the members of group @id to @ids, moving as few buckets as it
 * can (xnf_nhg_rebalance), in one element write. */
int xnf_nhg_set(struct xnf_dp *dp, __u32 id, const __u32 *ids, __u32 n);
/* A flow as l3fwd hashes it to choose a multipath group's next hop
 * (include/uapi/xnf_nh.h): its addresses as they lie in the packet (4
 * bytes of IPv4, 16 of IPv6), its protocol, and its ports (host order)
 * with @ports: a TCP, UDP or SCTP packet that is no fragment, whose
 * ports the parser reads. */
struct xnf_flow {
	int family; /* XNF_AF_INET or XNF_AF_INET6 */
	__u8 src[16];
	__u8 dst[16];
	__u8 proto;
	bool ports;
	__u16 sport, dport;
};
/* The hash l3fwd computes for a packet of @f (bpf/l3fwd.bpf.h). */
__u32 xnf_flow_hash(const struct xnf_flow *f);
/* The member of group @gid that l3fwd sends @f to, in *@nh, and the
 * bucket that names it, in *@bucket: 0, or -ENOENT without the group. */
int xnf_nhg_pick(struct xnf_dp *dp, __u32 gid, const struct xnf_flow *f,
		 __u32 *nh, __u32 *bucket);
/* The resilient bucket assignment itself, on @g in memory. */
void xnf_nhg_rebalance(struct xnf_nhgroup *g, const __u32 *ids, __u32 n);

/* The entry of @mac (-ENOENT: none). */
int xnf_fdb_get(struct xnf_dp *dp, const __u8 mac[6], struct xnf_fdb_entry *e);
int xnf_fdb_set(struct xnf_dp *dp, const __u8 mac[6], __u32 ifindex);
int xnf_fdb_del(struct xnf_dp *dp, const __u8 mac[6]);
/* The direction of the cross-connect arriving on @in_ifindex (-ENOENT:
 * none). */
int xnf_xconnect_get(struct xnf_dp *dp, __u32 in_ifindex,
		     struct xnf_xconnect *xc);
int xnf_xconnect_set(struct xnf_dp *dp, __u32 in_ifindex,
		     const struct xnf_xconnect *xc);
int xnf_xconnect_del(struct xnf_dp *dp, __u32 in_ifindex);

/* The same changes as one transaction each (tables.c), as the CLI, apply
 * and route sync make them: the egress device becomes an xnf port first and
 * stops being one again when the change fails; @err says what failed and
 * what to do. An add of what exists is -EEXIST unless @replace. Whether a
 * route by hand may be written at all (no route sync owns the tables, an
 * l3fwd reads them) is the commit's check (xnf_conf_commit). */
int xnf_route_add(struct xnf_dp *dp, int family, const void *addr, __u32 plen,
		  const struct xnf_route *rt, bool replace, char *err,
		  size_t errlen);
/* A route over the @n unicast next hops @paths (xnf_route_set_multipath),
 * every egress device an xnf port. */
int xnf_route_add_multipath(struct xnf_dp *dp, int family, const void *addr,
			    __u32 plen, const struct xnf_route *paths, __u32 n,
			    bool replace, char *err, size_t errlen);
/* Deletes the route of exactly that prefix, a route written by hand. */
int xnf_route_remove(struct xnf_dp *dp, int family, const void *addr,
		     __u32 plen, char *err, size_t errlen);
int xnf_fdb_add(struct xnf_dp *dp, const __u8 mac[6], __u32 ifindex,
		bool replace, char *err, size_t errlen);
/* A cross-connect pair: @if1 -> @fwd and @if2 -> @rev; -EBUSY when either
 * end is cross-connected to a third device. */
int xnf_xconnect_add(struct xnf_dp *dp, __u32 if1,
		     const struct xnf_xconnect *fwd, __u32 if2,
		     const struct xnf_xconnect *rev, char *err, size_t errlen);

/* Removes the cross-connect pair @ifindex belongs to (both directions);
 * -ENOENT when there is none. */
int xnf_xconnect_remove(struct xnf_dp *dp, __u32 ifindex, char *err,
			size_t errlen);

/* Whole tables, read with batch lookups into new arrays (free() them), in
 * no particular order: *@n entries. */
struct xnf_route_entry {
	int family; /* XNF_AF_INET / XNF_AF_INET6 */
	__u32 plen;
	__u8 addr[16];	     /* network order, 4 bytes used for IPv4 */
	struct xnf_route rt; /* a multipath route: type only */
	__u32 nh;	     /* nexthop (unicast) or group (multipath) id */
};
struct xnf_fdb_ent {
	struct xnf_fdb_key key;
	struct xnf_fdb_entry e;
};
struct xnf_xconnect_ent {
	__u32 in; /* ifindex frames arrive on */
	struct xnf_xconnect xc;
};
int xnf_route_list(struct xnf_dp *dp, struct xnf_route_entry **out, __u32 *n);
/* The route packets to @addr take, as l3fwd looks it up, into @e (its
 * next hop inline; multipath: type and group only): -ENOENT when no route
 * matches. */
int xnf_route_lookup(struct xnf_dp *dp, int family, const void *addr,
		     struct xnf_route_entry *e);

/* The route of exactly @addr/@plen, as packets find it, into @e (a
 * multipath route: type and group only): -ENOENT when there is none. */
int xnf_route_get(struct xnf_dp *dp, int family, const void *addr, __u32 plen,
		  struct xnf_route_entry *e);

/* The route sync that owns the route tables (xnf_rtsync). While one is
 * registered (table != 0), routes are not added by hand (a commit that
 * adds or changes one is refused with -EBUSY, include/conf.h). */
int xnf_rtsync_get(struct xnf_dp *dp, struct xnf_rtsync_info *info);
int xnf_rtsync_set(struct xnf_dp *dp, const struct xnf_rtsync_info *info);
/* qsort() order of routes as `xnf route show` and `xnf save` print them:
 * IPv4 first, then longest prefix first, then by address (conf.c). */
int xnf_route_entry_cmp(const void *a, const void *b);
int xnf_fdb_list(struct xnf_dp *dp, struct xnf_fdb_ent **out, __u32 *n);
int xnf_xconnect_list(struct xnf_dp *dp, struct xnf_xconnect_ent **out, __u32 *n);

/* The batch-size histogram (xnf_batch) of an attached device (netns of
 * the caller); what the kernel did with the frames redirected to it
 * (xnf_xmit) is counted for every egress port (xnf_port_add), and made
 * here for a port that has no counters yet. */
int xnf_batch_watch(struct xnf_dp *dp, __u32 ifindex);
/* Forgets the histogram of the device @ifindex of the netns @netns. */
int xnf_batch_unwatch(struct xnf_dp *dp, __u32 netns, __u32 ifindex);
/* Zeroes the histogram and the xmit counters of the device @ifindex of
 * the netns @netns (inode), if it is watched. */
int xnf_batch_reset(struct xnf_dp *dp, __u32 netns, __u32 ifindex);
/* The xmit counters of an egress port, summed over CPUs; -ENOENT when
 * it has none (stats.c). */
int xnf_xmit_read(struct xnf_dp *dp, __u32 netns, __u32 ifindex,
		  struct xnf_xmit_counters *sum);
__u32 xnf_netns_inode(void);
/* Whether frames redirected to @dev (@ifindex, in the caller's netns) are
 * dropped by the kernel: 1 with a warning and its fix in @buf, 0 if not,
 * a negative errno when the kernel does not say (XDP features, Linux
 * 6.3+). lib/netdev.c. */
int xnf_egress_check(const char *dev, __u32 ifindex, char *buf, size_t len);
/* Whether the veth peer that sends to @dev has tx checksum offload on:
 * its frames arrive with partial L4 checksums, which an XDP redirect
 * does not complete. 1 with a warning and its fix in @buf, 0 if not (or
 * not a veth), a negative errno when the peer cannot be found (a netns
 * neither named in /run/netns nor the init one). lib/netdev.c. */
int xnf_sender_check(const char *dev, char *buf, size_t len);
/* The tracer's programs (batch.bpf.c), one link each. */
enum xnf_tracer {
	XNF_TRACER_NAPI = 0,	 /* napi:napi_poll: batch sizes */
	XNF_TRACER_XMIT,	 /* xdp:xdp_devmap_xmit */
	XNF_TRACER_REDIRECT_ERR, /* xdp:xdp_redirect_err */
	__XNF_TRACER_MAX
};
/* Loads the tracer on the instance's xnf_batch and xnf_xmit maps and
 * attaches its programs; the caller keeps (or pins) the links. On error
 * no link is left, and @err says what failed. */
int xnf_batch_tracer(struct xnf_dp *dp, struct bpf_link *links[__XNF_TRACER_MAX],
		     char *err, size_t errlen);

/* Waits until every XDP program that may have started before the call has
 * finished (an RCU grace period). */
int xnf_sync_rcu(void);

/* ---- chains (dataplane.c) ---- */
struct xnf_chain_spec {
	__u32 len;		 /* NFs in the chain */
	__u32 nf[XNF_CHAIN_MAX]; /* enum xnf_nf_id, each at most once */
	bool fused;		 /* one program, NFs inlined */
	bool l3_fib;		 /* l3fwd uses bpf_fib_lookup */
	bool numa;		 /* create the interface's maps on ... */
	int numa_node;		 /* ... this node (BPF_F_NUMA_NODE) */
};

/* Parses "firewall,l3fwd,l2fwd" (each NF once); -EINVAL or -E2BIG with
 * what is wrong in @err. */
int xnf_chain_parse(const char *text, struct xnf_chain_spec *spec, char *err,
		    size_t errlen);
/* "firewall,l3fwd,l2fwd" */
int xnf_chain_format(const struct xnf_chain_spec *spec, char *buf, size_t len);

struct xnf_chain;

/* Loads the programs of a chain for the device whose per-interface maps
 * live in <root>/dev/<dev>/ (created if needed): the entry program, one
 * program per NF with its slot as a constant, and a new prog array holding
 * them; or the fused program. Nothing is attached or pinned here besides
 * the per-interface maps. On failure @err says which program failed. */
int xnf_chain_load(struct xnf_dp *dp, const char *dev,
		   const struct xnf_chain_spec *spec, struct xnf_chain **out,
		   char *err, size_t errlen);
int xnf_chain_prog_fd(const struct xnf_chain *c);  /* the XDP program */
int xnf_chain_array_fd(const struct xnf_chain *c); /* -1 when fused */
/* fd of the program in slot @slot, for tests that empty a slot */
int xnf_chain_slot_fd(const struct xnf_chain *c, __u32 slot);
int xnf_chain_stats_fd(const struct xnf_chain *c);
int xnf_chain_dev_fd(const struct xnf_chain *c); /* xnf_dev of the interface */
void xnf_chain_free(struct xnf_chain *c);

/* Sums the per-CPU copies of xnf_stats of a chain (xnf_chain_stats_fd),
 * or returns them per CPU in @percpu[ncpus] when it is not NULL; zeroes
 * them (stats.c; an attached device's counters: include/stats.h). */
int xnf_stats_read(int stats_fd, struct xnf_stats *sum, struct xnf_stats *percpu);
int xnf_stats_reset(int stats_fd);
int xnf_ncpus(void);

/* ---- firewall (fw_compile.c) ---- */

/* One generation of compiled tables, as xnf_fw_apply() stores them. */
struct xnf_fw_prefix {
	__u8 family; /* XNF_AF_INET / XNF_AF_INET6 */
	__u8 len;    /* prefix length */
	__u8 pad[2];
	__u8 addr[16];
	__u32 class;
};

struct xnf_fw_compiled {
	struct xnf_fw_hdr hdr;
	__u32 nclasses;
	struct xnf_fw_class *classes; /* [nclasses] */
	struct xnf_fw_match *order;   /* [hdr.nrules] */
	struct xnf_fw_prefix *src,
		*dst; /* LPM entries, /0 of each family included */
	__u32 nsrc, ndst;
	__u32 proto[256];
	__u32 *sport, *dport; /* [65536] each */
};

/* Compiles the rules in use in @rules[0..nslots) (a copy of xnf_fw_rules,
 * indexed by slot) in priority order. -ENOSPC when more than
 * XNF_FW_MAX_CLASSES distinct classes are needed, -EINVAL on a rule that
 * is not well formed (see xnf_fw_rule_check). */
int xnf_fw_compile(const struct xnf_fw_rule *rules, __u32 nslots,
		   __u32 default_action, struct xnf_fw_compiled **out,
		   char *err, size_t errlen);
void xnf_fw_compiled_free(struct xnf_fw_compiled *c);

/* A packet's fields, as the firewall sees them. */
struct xnf_fw_pkt {
	__u8 family; /* XNF_AF_INET / XNF_AF_INET6 */
	__u8 proto;
	bool ports; /* sport/dport could be read */
	__u8 src[16], dst[16];
	__u16 sport, dport; /* host order */
	__u32 ifindex;	    /* ingress */
	__u8 ct_state;	    /* enum xnf_ct_state */
	bool tcp;	    /* tcp_flags were read */
	__u8 tcp_flags;
	bool icmp; /* icmp_type and icmp_code were read */
	__u8 icmp_type, icmp_code;
};

/* Bit of the first matching rule by priority (look it up in ->order), or
 * -1: the same algorithm as the BPF program, on the compiled tables. */
int xnf_fw_classify(const struct xnf_fw_compiled *c,
		    const struct xnf_fw_rule *rules, const struct xnf_fw_pkt *p);
/* The same answer by a linear scan of the rules: the reference the tests
 * compare against. Returns the slot of the first match or -1. */
int xnf_fw_linear(const struct xnf_fw_rule *rules, __u32 nslots,
		  const struct xnf_fw_pkt *p);
/* 0 or -EINVAL with a message naming what is wrong. */
int xnf_fw_rule_check(const struct xnf_fw_rule *r, char *err, size_t errlen);

/* ---- firewall rule sets (fw_set.c, fw_compile.c) ---- */

/* prio of a rule added without one: the highest in use plus this. */
#define XNF_FW_PRIO_STEP 10

/* A whole rule set (opaque): what one generation of xnf_fw_rules and
 * xnf_fw_hdr holds, the rules by slot and the default policy. A rule's
 * slot is where it lives while it lives; it names its hit counter. */
struct xnf_fw_set;

/* An empty set with default allow (a fresh instance's), or NULL. */
struct xnf_fw_set *xnf_fw_set_new(void);
void xnf_fw_set_free(struct xnf_fw_set *set);
/* A copy of @set, or NULL. */
struct xnf_fw_set *xnf_fw_set_dup(const struct xnf_fw_set *set);

/* The rule set that runs (the active generation), in a handful of bpf()
 * calls; never writes. -EAGAIN when it kept being switched under the
 * read. Free with xnf_fw_set_free(). */
int xnf_fw_read(struct xnf_dp *dp, struct xnf_fw_set **out);

/* The slots, [XNF_FW_MAX_RULES]: in_use marks a rule, empty slots are
 * zero. Valid until the next edit of @set. */
const struct xnf_fw_rule *xnf_fw_set_rules(const struct xnf_fw_set *set);
__u32 xnf_fw_set_default(const struct xnf_fw_set *set);
/* Rules in use. */
__u32 xnf_fw_set_count(const struct xnf_fw_set *set);
/* The highest prio in use; -ENOENT when the set is empty. */
int xnf_fw_set_last_prio(const struct xnf_fw_set *set, __u32 *prio);

/* Edits of a set in memory; nothing runs until xnf_fw_apply(). */
/* -EINVAL unless @action is XNF_FW_ALLOW or XNF_FW_DROP. */
int xnf_fw_set_policy(struct xnf_fw_set *set, __u32 action);
/* Adds @r (checked with xnf_fw_rule_check) in the first free slot, in_use
 * set; with @auto_prio its prio becomes the highest in use plus
 * XNF_FW_PRIO_STEP (XNF_FW_PRIO_STEP for the first). -EINVAL: malformed
 * rule; -EEXIST: its prio is taken; -ENOSPC: no free slot; -ERANGE: no
 * prio left above the highest. *@slot (may be NULL) gets the slot. */
int xnf_fw_set_add(struct xnf_fw_set *set, const struct xnf_fw_rule *r,
		   bool auto_prio, __u32 *slot);
/* Puts @r in @slot in place of what it holds (NULL empties it). -EINVAL:
 * malformed rule or no such slot; -EEXIST: another slot has its prio. */
int xnf_fw_set_replace(struct xnf_fw_set *set, __u32 slot,
		       const struct xnf_fw_rule *r);
/* Removes the rule of @prio; -ENOENT if none. *@slot (may be NULL) gets
 * the slot it had. */
int xnf_fw_set_del(struct xnf_fw_set *set, __u32 prio, __u32 *slot);
/* Removes every rule; the default stays. */
void xnf_fw_set_flush(struct xnf_fw_set *set);
/* Whether xnf_fw_apply() may let a set of at most XNF_FW_LINEAR_MAX rules
 * run as a linear scan (the default, see xnf_fw_hdr) or must always use
 * the bit-vector tables. Both classify alike: for tests and measurements
 * that run one form on purpose. */
void xnf_fw_set_linear(struct xnf_fw_set *set, bool linear);

/*
 * Makes @set the rule set that runs, all or nothing: compiles it (-EINVAL
 * for a malformed rule, two rules of one prio or a bad default; -ENOSPC
 * when it needs too many classes), writes it with the compiled tables into
 * the inactive generation, switches with one write and waits for an RCU
 * grace period. A failure or a kill before the switch leaves the active
 * set untouched. Hit counters of slots whose rule changed are zeroed
 * before the switch; a rule that keeps its slot keeps its counter.
 * Writers must not run concurrently (the xnf command holds the instance
 * lock); readers (xnf_fw_read) may run at any time.
 */
int xnf_fw_apply(struct xnf_dp *dp, const struct xnf_fw_set *set, char *err,
		 size_t errlen);

/* Zeroes every hit counter, the rules' and the default policy's (one
 * batch update); the rules stay as they are. */
int xnf_fw_hits_reset(struct xnf_dp *dp);
/* Hit counters by slot, summed over CPUs: @hits[XNF_FW_HITS], the default
 * policy's at XNF_FW_HIT_DEFAULT. */
int xnf_fw_hits_read(struct xnf_dp *dp, struct xnf_fw_hit *hits);

/* ---- whole maps (maps.c) ---- */

/* Bytes a lookup of one element of @fd copies: its value size, or for a
 * per-CPU map every possible CPU's value, each rounded up to 8 bytes. */
int xnf_map_value_size(int fd, __u32 *value_size);
/* Reads every element of @fd into @keys[@max] and @values[@max] with batch
 * lookups (get_next_key and lookups where the kernel or map type has no
 * batch ops), *@count of them. @value_size as xnf_map_value_size() gives
 * it (checked). -E2BIG when the map holds more than @max; -EAGAIN when a
 * map without batch ops kept changing under the walk. */
int xnf_map_read_all(int fd, __u32 key_size, __u32 value_size, __u32 max,
		     void *keys, void *values, __u32 *count);
/* Writes @count elements in one batch update (element by element without
 * batch ops); not atomic. */
int xnf_map_update_all(int fd, const void *keys, const void *values,
		       __u32 key_size, __u32 value_size, __u32 count,
		       __u64 flags);
/* Deletes @count keys in one batch; a missing key is no error. */
int xnf_map_delete_all(int fd, const void *keys, __u32 key_size, __u32 count);

/* ClassBench-shaped synthetic rule sets (fw_gen.c), for tests and benches:
 * @n rules with mixed prefix lengths, protocols and port ranges, from a
 * fixed @seed, rule i at slot i with prio (i + 1) * 10. */
int xnf_fw_generate(struct xnf_fw_rule *rules, __u32 n, __u32 seed);

/* ---- the transactions of an interface (attach.c) ----
 *
 * Each takes the instance opened by xnf_open() for writing (which holds
 * its lock) and is all-or-nothing: on failure it undoes what it did,
 * returns a negative errno and writes what failed and what to do into
 * @err. A process killed in the middle leaves what the next writer's
 * xnf_open() completes or undoes, and readers see as it will be then. */

/* xnf_open() @flags */
#define XNF_OPEN_CREATE	 0x1 /* make the root and the tables if needed */
/* A reader: takes no lock, so it never waits for a writer, and writes
 * nothing (no mount, no repair); what a killed writer left is reported as
 * the next writer will complete it. For status, the table and rule shows,
 * stats and config show: every one of them reads single map elements or
 * one firewall generation, which writers switch atomically. */
#define XNF_OPEN_READ	 0x2
/* With XNF_OPEN_CREATE, for an apply across a table schema change: an
 * instance of another schema at @root is moved aside to <root>-old, its
 * attachments still running, and a new one is made at @root. An attach
 * on it takes over the XDP link of the same device in <root>-old
 * (xnf_attach_opts.adopt_root), and xnf_upgrade_finish() removes what is
 * left of the old one. */
#define XNF_OPEN_UPGRADE 0x4

/* @wait_s of xnf_open() */
#define XNF_WAIT_FOREVER (~0U)
#define XNF_WAIT_DEFAULT 10 /* seconds; xnf -w changes it */

/* Opens the instance at @root, refusing (-EPERM, -ELOOP) a root, or a
 * directory on the way to it or in it, that another user owns or may
 * write to, or a symbolic link (lib/paths.c says which). A writer (no
 * XNF_OPEN_READ) locks it with
 * an exclusive flock on the root, held until xnf_dp_close(), waiting at
 * most @wait_s seconds for another holder (saying on stderr that it
 * waits): -ETIMEDOUT then, naming the holder's pid in @err. Under the lock
 * it first completes or undoes what killed writers left: an attach that
 * did not pin its link (undone), a detach that removed it (completed), a
 * chain switch (completed or undone), an instance whose creation or
 * destruction was cut short (removed). It mounts bpffs on /sys/fs/bpf when
 * the root is below it and nothing is mounted there (as ip(8) does). With
 * XNF_OPEN_CREATE, makes the root and the tables if needed. -ENOENT only
 * when there is no instance; one the caller may not read (a user who is
 * not root) is -EACCES or -EPERM, said as such. */
int xnf_open(const char *root, unsigned int flags, unsigned int wait_s,
	     struct xnf_dp **out, char *err, size_t errlen);

/* flock(2) on the instance's lock: LOCK_UN lets other writers in while a
 * long-running caller (a worker) waits; LOCK_SH / LOCK_EX take it again.
 * No-op on an instance not opened by xnf_open() for writing. */
int xnf_dp_lock(struct xnf_dp *dp, int op);

/* Names of the attached devices (those with a pinned XDP link), at most
 * @max copied: their count or -errno. */
int xnf_dev_list(struct xnf_dp *dp, char (*names)[16], int max);

struct xnf_plan;
struct xnf_cpuset;

struct xnf_attach_opts {
	const char *dev;
	__u32 ifindex;		     /* of @dev, in the caller's netns */
	__u32 xdp_flags;	     /* XDP_FLAGS_DRV_MODE or _SKB_MODE */
	struct xnf_chain_spec chain; /* NFs, fused, l3_fib */
	const struct xnf_plan *plan; /* placement to apply, or NULL */
	bool strict_queues;	     /* the plan's channel count is required */
	const struct xnf_cpuset *cores; /* the LIST the plan was made
					 * of (recorded), NULL: auto */
	/* An instance of another table schema (<root>-old) whose XDP link
	 * on this device, if there is one in the same mode, is taken over:
	 * its program replaced with one bpf_link_update(), no packet
	 * without a program; NULL: none. */
	const char *adopt_root;
};

/* Loads the chain, pins it, adds the device to the egress ports, watches
 * its batch sizes, applies the placement, creates and pins the XDP link.
 * An attach that fails on an instance its own xnf_open() created, with
 * nothing written to it since, removes the instance again. */
int xnf_attach(struct xnf_dp *dp, const struct xnf_attach_opts *o, char *err,
	       size_t errlen);
/* Refused (-EBUSY) while an AF_XDP worker serves @dev. Restores what the
 * placement changed on the host. */
int xnf_detach(struct xnf_dp *dp, const char *dev, char *err, size_t errlen);

enum xnf_tristate { XNF_KEEP = 0, XNF_ON, XNF_OFF };

struct xnf_chain_change {
	__u32 len; /* the new chain */
	__u32 nf[XNF_CHAIN_MAX];
	enum xnf_tristate fused; /* KEEP: as it runs now */
	enum xnf_tristate l3_fib;
};

/* Replaces the chain of @dev hitlessly: loaded aside, switched with one
 * bpf_link_update(), the old one released after a grace period. */
int xnf_chain_set(struct xnf_dp *dp, const char *dev,
		  const struct xnf_chain_change *chg, char *err, size_t errlen);

/* What runs on @dev, read without writing anything (a chain switch that a
 * killed writer left staged is reported as the writer would complete it);
 * -ENOENT when xnf is not attached to @dev, also when an attach or detach
 * killed midway left pins there that the next writer removes. */
struct xnf_dev_status {
	char dev[16];
	struct xnf_dev_info info;
	bool live; /* the link is attached to info.ifindex */
	__u32 link_id, prog_id;
	__u32 nf_prog_id[XNF_CHAIN_MAX]; /* tail-called chains */
	char pins[256 + 32];		 /* <root>/dev/<dev> */
};
int xnf_dev_status(struct xnf_dp *dp, const char *dev, struct xnf_dev_status *st);

/* <root>-old of @dp's root, an instance of another table schema that an
 * upgrade moved aside, into @buf; false when there is none. */
bool xnf_upgrade_pending(const struct xnf_dp *dp, char *buf, size_t len);
/* Removes <root>-old: what of it was not taken over stops (its XDP links
 * go with their pins; the host placement it recorded is not restored). */
int xnf_upgrade_finish(struct xnf_dp *dp, char *err, size_t errlen);

/* Removes the instance's pins; -EBUSY while a device is attached. */
int xnf_destroy(struct xnf_dp *dp, char *err, size_t errlen);

#endif /* XNF_H */
