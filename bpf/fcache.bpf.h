/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fcache.bpf.h - the flow cache in front of the NFs' table lookups (see
 * struct xnf_fc_entry in include/uapi/xnf_fc.h). The entry program and
 * the fused chain find the packet's entry once, after the parse
 * (xnf_fc_begin); each NF then reads and fills its own part of it
 * (xnf_fc_get, xnf_fc_fresh, xnf_fc_count).
 */
#ifndef XNF_FCACHE_BPF_H
#define XNF_FCACHE_BPF_H

#include "common.bpf.h"
#include "tables.bpf.h"
#include "fcache_maps.bpf.h"
#include "chain.bpf.h"
#include "xnf_nh.h"
#include "xnf_fc.h"

/* The packet's flow key, its addresses read from the frame. */
static __always_inline int xnf_fc_key(struct xdp_md *ctx, const struct xnf_pkt *p,
				      struct xnf_fc_key *k)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 off = p->l3_off;

	__builtin_memset(k, 0, sizeof(*k));
	k->ifindex = p->ingress_ifindex;
	k->family = p->family;
	k->l4_proto = p->l4_proto;
	if (p->flags & XNF_PKT_F_PORTS) {
		k->ports = 1;
		k->sport = p->sport;
		k->dport = p->dport;
	}
	if (off > XNF_MAX_L3_OFF)
		return -1;
	if (p->family == XNF_AF_INET) {
		struct iphdr *iph = data + off;

		if ((void *)(iph + 1) > data_end)
			return -1;
		__builtin_memcpy(k->saddr, &iph->saddr, 4);
		__builtin_memcpy(k->daddr, &iph->daddr, 4);
	} else if (p->family == XNF_AF_INET6) {
		struct ipv6hdr *ip6h = data + off;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		__builtin_memcpy(k->saddr, &ip6h->saddr, 16);
		__builtin_memcpy(k->daddr, &ip6h->daddr, 16);
	}
	return 0;
}

static __always_inline int xnf_fc_key_eq(const struct xnf_fc_key *a,
					 const struct xnf_fc_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	__u64 d = 0;
	int i;

#pragma unroll
	for (i = 0; i < sizeof(*a) / 8; i++)
		d |= x[i] ^ y[i];
	return !d;
}

/*
 * After the parse: when the cache is on, reads the table generation (before
 * any NF looks anything up), finds the flow's entry and takes it over if it
 * holds another flow, and notes it in p->fc_idx. Off, or with no entry
 * to use, the packet goes the uncached way.
 */
static __always_inline void xnf_fc_begin(struct xdp_md *ctx, struct xnf_pkt *p)
{
	struct xnf_config *cfg;
	struct xnf_fc_entry *e;
	struct xnf_fc_key k;
	__u32 idx;

	if (!xnf_fc_used)
		return;
	cfg = xnf_cfg_get();
	if (!cfg || !cfg->flow_cache)
		return;
	p->fc_gen = cfg->tables_gen;
	if (xnf_fc_key(ctx, p, &k))
		return;
	idx = xnf_fc_index(&k);
	e = bpf_map_lookup_elem(&xnf_fcache, &idx);
	if (!e)
		return;
	if (!xnf_fc_key_eq(&e->key, &k)) {
		e->key = k;
		e->parts = 0;
	}
	p->fc_idx = idx + 1;
}

/* The packet's entry, or NULL when it goes uncached. */
static __always_inline struct xnf_fc_entry *xnf_fc_get(const struct xnf_pkt *p)
{
	__u32 idx = p->fc_idx - 1;

	if (!p->fc_idx)
		return NULL;
	return bpf_map_lookup_elem(&xnf_fcache, &idx);
}

/* Part @part of @e holds a result of the packet's table generation. */
static __always_inline int xnf_fc_fresh(const struct xnf_fc_entry *e,
					const struct xnf_pkt *p, __u32 part,
					__u32 gen)
{
	return (e->parts & part) && gen == p->fc_gen;
}

/* Counts the flow cache's answer for NF @nf; a traced packet's step
 * notes it too. */
static __always_inline void xnf_fc_count(const struct xnf_pkt *p, __u32 nf,
					 int hit)
{
	struct xnf_stats *st = xnf_stats_get();

	if (p->trace)
		xnf_trace_fc_fn(p, hit);

	if (!st || nf >= __XNF_NF_MAX)
		return;
	if (hit)
		st->fc_hit[nf]++;
	else
		st->fc_miss[nf]++;
}

#endif /* XNF_FCACHE_BPF_H */
