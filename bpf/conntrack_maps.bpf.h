/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * conntrack_maps.bpf.h - the connection table's shared maps (the table,
 * its settings, its counters, the pending entry of a new flow,
 * include/uapi/xnf_ct.h) and xnf_ct_confirm(), which the NF that accepts
 * a new flow's packet calls (the firewall, or conntrack itself).
 */
#ifndef XNF_CONNTRACK_MAPS_BPF_H
#define XNF_CONNTRACK_MAPS_BPF_H

#include "xnf_ct.h"

/* LRU: a full table makes room by evicting the least recently used entry
 * (docs/conntrack.md). Its size is the instance's (ct_max), set by libxnf
 * when it creates the tables. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XNF_CT_MAX_DEFAULT);
	__type(key, struct xnf_ct_key);
	__type(value, struct xnf_ct_entry);
} XNF_MAP_CT SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_ct_config);
} XNF_MAP_CT_CFG SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_ct_counters);
} XNF_MAP_CT_STATS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_ct_pending);
} XNF_MAP_CT_PENDING SEC(".maps");

static __always_inline struct xnf_ct_counters *xnf_ct_stats_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&XNF_MAP_CT_STATS, &zero);
}

/* Writes the new connection the conntrack NF left for @p into the table:
 * called by the NF that accepts the packet. BPF_NOEXIST: when another CPU
 * confirmed the same connection first (both directions' first packets
 * raced, as Linux's nf_conntrack_confirm() can find a clash), its entry
 * stays and this one is counted insert_failed. */
static __always_inline void xnf_ct_confirm(struct xnf_pkt *p)
{
	struct xnf_ct_counters *cs;
	struct xnf_ct_pending *pe;
	__u32 zero = 0;

	if (!(p->flags & XNF_PKT_F_CT_PENDING))
		return;
	p->flags &= ~XNF_PKT_F_CT_PENDING;
	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	cs = xnf_ct_stats_get();
	if (!pe || !cs)
		return;
	if (bpf_map_update_elem(&XNF_MAP_CT, &pe->key, &pe->entry, BPF_NOEXIST))
		cs->insert_failed++;
	else
		cs->created++;
}

#endif /* XNF_CONNTRACK_MAPS_BPF_H */
