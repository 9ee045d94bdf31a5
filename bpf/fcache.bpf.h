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
 * Bypass. When most packets find another flow in their entry (many more
 * flows than entries, or a flood of new ones), a lookup costs more than it
 * saves: the key and its hash, then a random entry of two cache lines out
 * of XNF_FC_ENTRIES (more than the L2 holds) taken over, and every NF
 * writing its part into it. bench-micro -M: +35..+65 ns a packet over the
 * cache switched off, uniform over 65,536 flows. A hit saves 60 (l3fwd)
 * to 170 ns (the 3-NF chain), a miss costs 35 to 65: the cache pays from
 * a hit rate of about 0.2 (the chain, the firewall) to 0.5 (l3fwd alone).
 * So each program counts, per CPU, its lookups in windows of
 * XNF_FC_WINDOW (128); a window with fewer than a quarter hits makes the
 * next XNF_FC_SKIP (32,640) packets go uncached without even the key
 * (counted in xnf_stats.fc_miss[XNF_NF_ENTRY] when the stretch ends), then
 * a window probes again. Probing one packet in 256 keeps a flood within
 * 1/256 of a miss's extra cost of the cache switched off, and a mix that
 * turns cacheable is seen again within 32,768 packets (a few milliseconds
 * at a million packets a second per CPU). A window of 128 rather than 64:
 * a mix at a hit rate of 0.45 (bench-micro's Zipf) falls under a quarter
 * by chance in about one window in a million instead of one in 2,500, and
 * each such false alarm costs a whole stretch uncached.
 * No bypass before XNF_FC_WARM windows (as many lookups as entries): an
 * empty cache misses under any mix, and a cacheable mix would otherwise
 * start with a stretch uncached.
 * The entries are left as they are while bypassed, so a popular flow still
 * hits when probing resumes. What a packet gets is the same either way
 * (the NFs look up when uncached): only the cost moves.
 */
/* A CPU's window (xnf_fc_win): lookups and hits so far, packets left to
 * bypass, windows closed since the program was loaded (up to XNF_FC_WARM:
 * the cache starts empty, and the first windows of any mix miss). */
struct xnf_fc_win {
	__u32 lookups;
	__u32 hits;
	__u32 skip;
	__u32 warm;
};

/* Private to each program object (not a shared table: the loader leaves
 * it to its object), so each interface's chain decides for its own mix. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_fc_win);
} xnf_fc_win SEC(".maps");

/* Counts a lookup (@hit: the entry held the flow) in the window @w and
 * closes the window after XNF_FC_WINDOW. */
static __always_inline void xnf_fc_window(struct xnf_fc_win *w, int hit)
{
	w->hits += hit;
	if (++w->lookups < XNF_FC_WINDOW)
		return;
	if (w->warm < XNF_FC_WARM)
		w->warm++;
	else if (w->hits < XNF_FC_MIN_HITS)
		w->skip = XNF_FC_SKIP;
	w->lookups = 0;
	w->hits = 0;
}

/*
 * After the parse: when the cache is on, reads the table generation (before
 * any NF looks anything up), finds the flow's entry and takes it over if it
 * holds another flow, and notes it in p->fc_idx. Off, bypassed, or with no
 * entry to use, the packet goes the uncached way.
 */
static __always_inline void xnf_fc_begin(struct xdp_md *ctx, struct xnf_pkt *p)
{
	struct xnf_config *cfg;
	struct xnf_fc_entry *e;
	struct xnf_fc_win *w;
	struct xnf_fc_key k;
	__u32 idx = 0;
	int hit;

	if (!xnf_fc_used)
		return;
	cfg = xnf_cfg_get();
	if (!cfg || !cfg->flow_cache)
		return;
	w = bpf_map_lookup_elem(&xnf_fc_win, &idx);
	if (!w)
		return;
	if (w->skip) {
		struct xnf_stats *st;

		/* Counted when the stretch ends: the skipping packets pay a
		 * decrement, not a counter of their own. */
		if (--w->skip)
			return;
		st = xnf_stats_get();
		if (st)
			st->fc_miss[XNF_NF_ENTRY] += XNF_FC_SKIP;
		return;
	}
	p->fc_gen = cfg->tables_gen;
	if (xnf_fc_key(ctx, p, &k))
		return;
	idx = xnf_fc_index(&k);
	e = bpf_map_lookup_elem(&xnf_fcache, &idx);
	if (!e)
		return;
	hit = xnf_fc_key_eq(&e->key, &k);
	if (!hit) {
		e->key = k;
		e->parts = 0;
	}
	xnf_fc_window(w, hit);
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
