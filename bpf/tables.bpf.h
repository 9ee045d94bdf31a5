/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tables.bpf.h - the maps one xnf instance shares across all interfaces:
 * configuration, egress ports, routes, FDB, cross-connects, the compiled
 * firewall and the batch-size histograms. The loader pins each under
 * <root>/tables/<name>, so every object that includes this header reuses
 * the same map (see lib/dataplane.c).
 */
#ifndef XNF_TABLES_BPF_H
#define XNF_TABLES_BPF_H

#include "xnf_dp.h"
#include "xnf_l3fwd.h"
#include "xnf_l2fwd.h"
#include "xnf_fw.h"
#include "xnf_changes.h"
#include "xnf_fc.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_config);
} XNF_MAP_CFG SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_pkt);
} XNF_MAP_SCRATCH SEC(".maps");

/* Egress ports, keyed by ifindex. Also the flood domain. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} XNF_MAP_TX SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, struct xnf_dev_key);
	__type(value, struct xnf_batch_hist);
} XNF_MAP_BATCH SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, struct xnf_dev_key);
	__type(value, struct xnf_xmit_counters);
} XNF_MAP_XMIT SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_poll_start);
} XNF_MAP_POLL SEC(".maps");

/* The entry program's mark of a poll's first packet (struct
 * xnf_poll_start): one array lookup per packet, one clock read per poll. */
static __always_inline void xnf_poll_mark(const struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xnf_poll_start *ps = bpf_map_lookup_elem(&XNF_MAP_POLL, &zero);

	if (ps && !ps->t0) {
		ps->t0 = bpf_ktime_get_ns();
		ps->ifindex = ctx->ingress_ifindex;
	}
}

/* Routes, in two copies: packets read the one xnf_config.rt_copy names,
 * so libxnf can write a batch of changes into the other and make them
 * visible at once (lib/routes.c). */
#define XNF_RT_LPM(name, keytype)                     \
	struct {                                      \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);  \
		__uint(max_entries, XNF_MAX_ROUTES);  \
		__uint(map_flags, BPF_F_NO_PREALLOC); \
		__type(key, keytype);                 \
		__type(value, struct xnf_rt_val);     \
	} name SEC(".maps")

XNF_RT_LPM(XNF_MAP_RT4, struct xnf_rt4_key);
XNF_RT_LPM(XNF_MAP_RT6, struct xnf_rt6_key);
XNF_RT_LPM(XNF_MAP_RT4_B, struct xnf_rt4_key);
XNF_RT_LPM(XNF_MAP_RT6_B, struct xnf_rt6_key);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_rtsync_info);
} XNF_MAP_RTSYNC SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_CHANGES_MAX);
	__type(key, __u32);
	__type(value, struct xnf_change);
} XNF_MAP_CHANGES SEC(".maps");

/* Next hops and multipath groups: see include/uapi/xnf_l3fwd.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_NH_SLOTS);
	__type(key, __u32);
	__type(value, struct xnf_nexthop);
} XNF_MAP_NH SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_MAX_NH);
	__type(key, __u32);
	__type(value, struct xnf_nh_live);
} XNF_MAP_NH_LIVE SEC(".maps");

/* Not read by any program: libxnf's index for deduplication, kept with
 * the tables so that every writer shares it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_NH);
	__type(key, struct xnf_nexthop);
	__type(value, __u32);
} XNF_MAP_NH_IDX SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_NHG);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct xnf_nhgroup);
} XNF_MAP_NHG SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_NHG);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xnf_nhg_key);
	__type(value, __u32);
} XNF_MAP_NHG_IDX SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_FDB);
	__type(key, struct xnf_fdb_key);
	__type(value, struct xnf_fdb_entry);
} XNF_MAP_FDB SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct xnf_xconnect);
} XNF_MAP_XCONNECT SEC(".maps");

/* The flow cache: see include/uapi/xnf_fc.h. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XNF_FC_ENTRIES);
	__type(key, __u32);
	__type(value, struct xnf_fc_entry);
} XNF_MAP_FCACHE SEC(".maps");

/* Firewall: see the comment above XNF_FW_MAX_RULES in include/uapi/xnf_fw.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} XNF_MAP_FW_ACTIVE SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS);
	__type(key, __u32);
	__type(value, struct xnf_fw_hdr);
} XNF_MAP_FW_HDR SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS *XNF_FW_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xnf_fw_rule);
} XNF_MAP_FW_RULES SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS *XNF_FW_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xnf_fw_match);
} XNF_MAP_FW_ORDER SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS *XNF_FW_MAX_CLASSES);
	__type(key, __u32);
	__type(value, struct xnf_fw_class);
} XNF_MAP_FW_CLASS SEC(".maps");

#define XNF_FW_LPM(name, keytype)                                         \
	struct {                                                          \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);                      \
		__uint(max_entries, XNF_FW_GENS *(XNF_FW_MAX_RULES + 1)); \
		__uint(map_flags, BPF_F_NO_PREALLOC);                     \
		__type(key, keytype);                                     \
		__type(value, __u32);                                     \
	} name SEC(".maps")

XNF_FW_LPM(XNF_MAP_FW_SRC4, struct xnf_fw_lpm4_key);
XNF_FW_LPM(XNF_MAP_FW_DST4, struct xnf_fw_lpm4_key);
XNF_FW_LPM(XNF_MAP_FW_SRC6, struct xnf_fw_lpm6_key);
XNF_FW_LPM(XNF_MAP_FW_DST6, struct xnf_fw_lpm6_key);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS * 256);
	__type(key, __u32);
	__type(value, __u32);
} XNF_MAP_FW_PROTO SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS * 65536);
	__type(key, __u32);
	__type(value, __u32);
} XNF_MAP_FW_SPORT SEC(".maps"), XNF_MAP_FW_DPORT SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XNF_FW_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xnf_fw_hit);
} XNF_MAP_FW_HITS SEC(".maps");

#endif /* XNF_TABLES_BPF_H */
