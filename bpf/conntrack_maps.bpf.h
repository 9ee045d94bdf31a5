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
	__uint(max_entries, __XNF_CT_STATS_MAX);
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
	__u32 key = XNF_CT_STATS_DP;

	return bpf_map_lookup_elem(&XNF_MAP_CT_STATS, &key);
}

/* The alias entry a translated connection's confirm writes, per CPU: the
 * fused chain leaves no room for a struct xnf_ct_entry on its stack. Not
 * a shared table (the loader leaves it to its object). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_ct_entry);
} xnf_ct_alias_val SEC(".maps");

/*
 * Writes the new connection the conntrack NF left for @p into the table:
 * called by the NF that accepts the packet. BPF_NOEXIST: when another CPU
 * confirmed the same connection first (both directions' first packets
 * raced, as Linux's nf_conntrack_confirm() can find a clash), its entry
 * stays and this one is counted insert_failed. A translated connection
 * (nat_new.bpf.h) writes its alias first: when another connection took
 * that reply tuple since the nat NF chose it, the packet is dropped
 * (nat_clash) and nothing is written; when the connection itself then
 * loses, the alias goes again.
 */
static __always_inline void xnf_ct_confirm(struct xnf_pkt *p)
{
	struct xnf_ct_counters *cs;
	struct xnf_ct_pending *pe;
	struct xnf_ct_entry *a;
	__u32 zero = 0, nat;

	if (!(p->flags & XNF_PKT_F_CT_PENDING))
		return;
	p->flags &= ~XNF_PKT_F_CT_PENDING;
	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	cs = xnf_ct_stats_get();
	if (!pe || !cs)
		return;
	nat = pe->entry.status & (XNF_CT_S_SNAT | XNF_CT_S_DNAT);
	if (nat) {
		a = bpf_map_lookup_elem(&xnf_ct_alias_val, &zero);
		if (!a)
			return;
		__builtin_memset(a, 0, sizeof(*a));
		a->expires = ~0ULL;
		a->created = pe->entry.created;
		a->status = XNF_CT_S_ALIAS;
		a->nat = pe->key;
		if (bpf_map_update_elem(&XNF_MAP_CT, &pe->alias, a, BPF_NOEXIST)) {
			cs->nat_clash++;
			/* xnf_exception() (chain.bpf.h, which the tables'
			 * object that declares these maps does not
			 * include). */
			p->verdict = XNF_V_DROP;
			p->reason = XNF_R_NAT_CLASH;
			p->flags |= XNF_PKT_F_DONE;
			return;
		}
	}
	if (bpf_map_update_elem(&XNF_MAP_CT, &pe->key, &pe->entry, BPF_NOEXIST)) {
		cs->insert_failed++;
		if (nat)
			bpf_map_delete_elem(&XNF_MAP_CT, &pe->alias);
		return;
	}
	cs->created++;
	if (nat)
		cs->nat_created++;
}

#endif /* XNF_CONNTRACK_MAPS_BPF_H */
