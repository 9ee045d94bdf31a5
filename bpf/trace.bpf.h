/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * trace.bpf.h - the trace's datapath (include/uapi/xnf_trace.h): the
 * entry program and the fused chain test xnf_trace_cfg[0].id once per
 * packet (xnf_trace_begin); a packet that matches the armed trace gets
 * xnf_pkt.trace = 1, each NF fills its step of the per-CPU record
 * (xnf_trace_step_end, and the NF's own details before it) and
 * xnf_finish() sends the record to the ring buffer (xnf_trace_end_fn).
 *
 * All but the test of id are global (__noinline) functions taking
 * pointers: verified once each instead of once per inlined copy, and
 * their stack frames are not added to the fused chain's, which has little
 * of its 512 bytes left (bpf/fused.bpf.c, bpf/firewall.bpf.h). An
 * untraced packet pays one array lookup (inlined by the verifier) and one
 * branch in the entry, and one branch on xnf_pkt.trace per NF.
 */
#ifndef XNF_TRACE_BPF_H
#define XNF_TRACE_BPF_H

#include "common.bpf.h"
#include "trace_maps.bpf.h"
#include "conntrack_maps.bpf.h"
#include "fw_match.bpf.h"
#include "xnf_l3fwd.h"

static __always_inline struct xnf_trace_rec *xnf_trace_rec_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&XNF_MAP_TRACE_BUF, &zero);
}

/* The step the NF running now fills: step[nsteps]; NULL when the record
 * has no room (a chain longer than XNF_TRACE_STEPS cannot be built). */
static __always_inline struct xnf_trace_step *
xnf_trace_cur(struct xnf_trace_rec *rec)
{
	__u32 i = rec->nsteps;

	if (i >= XNF_TRACE_STEPS)
		return NULL;
	return &rec->step[i];
}

/* Ends the trace @id: the datapath disarms a trace whose bound it
 * reached, so that a killed tracer leaves nothing armed. A compare and
 * swap: a tracer may have armed another trace meanwhile. */
static __always_inline void xnf_trace_disarm(struct xnf_trace_cfg *cfg, __u32 id)
{
	__sync_val_compare_and_swap(&cfg->id, id, 0);
}

/* Reads the packet's addresses from the frame into the match fields.
 * Return: 0, or -1 when the header is not in the first buffer. */
static __always_inline int xnf_trace_addrs(struct xdp_md *ctx,
					   const struct xnf_pkt *p,
					   struct xnf_fw_fields *k)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 off = p->l3_off;

	if (off > XNF_MAX_L3_OFF)
		return -1;
	if (p->family == XNF_AF_INET) {
		struct iphdr *iph = data + off;

		if ((void *)(iph + 1) > data_end)
			return -1;
		k->src[0] = iph->saddr;
		k->dst[0] = iph->daddr;
	} else if (p->family == XNF_AF_INET6) {
		struct ipv6hdr *ip6h = data + off;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		__builtin_memcpy(k->src, &ip6h->saddr, 16);
		__builtin_memcpy(k->dst, &ip6h->daddr, 16);
	}
	return 0;
}

/*
 * The armed trace @cfg (id != 0) and packet @p, parsed (or malformed:
 * p->reason XNF_R_MALFORMED, then only a match on nothing but iif can
 * take it): when the packet matches and the bounds allow, fills the
 * per-CPU record's packet part and sets p->trace. The match is the
 * firewall's for one rule (bpf/fw_match.bpf.h); `ct state` is not known
 * yet at the entry (libxnf refuses it for a trace). Return: 0.
 */
__noinline int xnf_trace_begin_fn(struct xdp_md *ctx, struct xnf_pkt *p,
				  struct xnf_trace_cfg *cfg)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct xnf_fw_fields k = {};
	struct xnf_trace_rec *rec;
	struct xnf_fw_extra x;
	__u64 now, n, max;
	__u32 id;

	if (!p || !cfg)
		return 0;
	id = cfg->id;
	/* Every packet while a trace is armed reads the clock, for the
	 * deadline: the coarse clock (CLOCK_MONOTONIC_COARSE, the same base
	 * as bpf_ktime_get_ns, at most a tick behind it) costs a few ns
	 * where the precise one costs tens on a VM; a deadline of seconds
	 * is kept to the tick. The record's time is the precise one. */
	now = bpf_ktime_get_coarse_ns();
	if (cfg->deadline_ns && now > cfg->deadline_ns) {
		xnf_trace_disarm(cfg, id);
		return 0;
	}
	if (p->reason == XNF_R_MALFORMED) {
		if (cfg->match.flags & ~XNF_FW_F_IIF)
			return 0;
	} else {
		if (xnf_trace_addrs(ctx, p, &k))
			return 0;
		k.family = p->family;
		k.proto = p->l4_proto;
		if (p->flags & XNF_PKT_F_PORTS) {
			k.ports = 1;
			k.sport = bpf_ntohs(p->sport);
			k.dport = bpf_ntohs(p->dport);
		}
		if (!xnf_fw_rule_hit(&cfg->match, &k))
			return 0;
	}
	x.flags = cfg->match.flags & XNF_FW_F_EXTRA;
	x.iif = cfg->match.iif;
	x.ct_states = cfg->match.ct_states;
	x.icmp_type = cfg->match.icmp_type;
	x.icmp_code = cfg->match.icmp_code;
	x.tcp_flags = cfg->match.tcp_flags;
	x.tcp_mask = cfg->match.tcp_mask;
	if (x.flags && !xnf_fw_extra_hit(&x, p))
		return 0;

	/* Matched: take a number. Past the count the packet is not traced;
	 * the one that takes the last number disarms. */
	rec = xnf_trace_rec_get();
	if (!rec)
		return 0;
	max = cfg->max_packets;
	n = __sync_fetch_and_add(&cfg->matched, 1);
	if (max && n >= max) {
		xnf_trace_disarm(cfg, id);
		return 0;
	}
	if (max && n + 1 == max)
		xnf_trace_disarm(cfg, id);

	__builtin_memset(rec, 0, sizeof(*rec));
	rec->ts = bpf_ktime_get_ns();
	rec->id = id;
	rec->seq = n + 1;
	rec->ifindex = p->ingress_ifindex;
	rec->rx_queue = p->rx_queue;
	rec->cpu = bpf_get_smp_processor_id();
	rec->len = p->len;
	rec->family = p->family;
	rec->l4_proto = p->l4_proto;
	rec->pkt_flags = p->flags;
	rec->tcp_flags = p->tcp_flags;
	rec->icmp_type = p->icmp_type;
	rec->icmp_code = p->icmp_code;
	rec->eth_proto = p->eth_proto;
	rec->sport = p->sport;
	rec->dport = p->dport;
	__builtin_memcpy(rec->src, k.src, 16);
	__builtin_memcpy(rec->dst, k.dst, 16);
	if ((void *)(eth + 1) <= data_end) {
		xnf_mac_copy(rec->dmac, eth->h_dest);
		xnf_mac_copy(rec->smac, eth->h_source);
	}
	p->trace = 1;
	return 0;
}

/* After the parse (also a failed one): the only cost of tracing for a
 * packet while no trace is armed is this lookup and test. */
static __always_inline void xnf_trace_begin(struct xdp_md *ctx, struct xnf_pkt *p)
{
	__u32 zero = 0;
	struct xnf_trace_cfg *cfg = bpf_map_lookup_elem(&XNF_MAP_TRACE_CFG,
							&zero);

	if (cfg && cfg->id)
		xnf_trace_begin_fn(ctx, p, cfg);
}

/*
 * NF @nf is done with traced packet @p: its step gets what the NF left in
 * the packet state, and what the NF's kind makes known without the NF's
 * help (conntrack's state, nat's tuple, the egress and destination MAC of
 * l2fwd, the queue of xsk); the next NF fills the next step. Return: 0.
 */
__noinline int xnf_trace_step_fn(struct xdp_md *ctx, struct xnf_pkt *p, __u32 nf)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xnf_trace_rec *rec = xnf_trace_rec_get();
	struct ethhdr *eth = data;
	struct xnf_ct_pending *pe;
	struct xnf_trace_step *s;
	__u32 zero = 0;

	if (!p || !rec)
		return 0;
	s = xnf_trace_cur(rec);
	if (!s)
		return 0;
	s->nf = nf;
	s->verdict = p->verdict;
	s->reason = p->reason;
	s->nat = p->nat;
	s->ct_state = p->ct_state;
	s->ct_dir = p->ct_dir;
	switch (nf) {
	case XNF_NF_CONNTRACK:
		s->flags |= XNF_TRACE_S_CT;
		break;
	case XNF_NF_NAT:
		pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
		if (!pe || !(p->nat & (XNF_PKT_NAT_SRC | XNF_PKT_NAT_DST)))
			break;
		s->flags |= XNF_TRACE_S_NAT;
		s->family = pe->xlat.family;
		__builtin_memcpy(s->addr, pe->xlat.a_addr, 16);
		__builtin_memcpy(s->gw, pe->xlat.b_addr, 16);
		s->port = pe->xlat.a_port;
		s->port2 = pe->xlat.b_port;
		break;
	case XNF_NF_L2FWD:
		if (p->verdict == XNF_V_REDIRECT) {
			s->flags |= XNF_TRACE_S_EGRESS;
			s->ifindex = p->egress_ifindex;
		}
		/* A flood has no FDB entry: its MAC is the unknown one. */
		if (p->verdict != XNF_V_REDIRECT)
			break;
		if ((void *)(eth + 1) > data_end)
			break;
		s->flags |= XNF_TRACE_S_MAC;
		xnf_mac_copy(s->gw, eth->h_dest);
		break;
	case XNF_NF_XSK:
		if (p->verdict == XNF_V_XSK) {
			s->flags |= XNF_TRACE_S_EGRESS;
			s->ifindex = p->rx_queue;
		}
		break;
	}
	rec->nsteps++;
	return 0;
}

/* Where the chain counts NF @nf (XNF_NF_PROGRAM, XNF_FUSED_CASE_). */
static __always_inline void xnf_trace_step_end(struct xdp_md *ctx,
					       struct xnf_pkt *p, __u32 nf)
{
	if (p->trace)
		xnf_trace_step_fn(ctx, p, nf);
}

/* The flow cache answered (@hit) or missed for the running NF. */
__noinline int xnf_trace_fc_fn(const struct xnf_pkt *p, int hit)
{
	struct xnf_trace_rec *rec = xnf_trace_rec_get();
	struct xnf_trace_step *s;

	if (!p || !rec)
		return 0;
	s = xnf_trace_cur(rec);
	if (s)
		s->fc = hit ? XNF_TRACE_FC_HIT : XNF_TRACE_FC_MISS;
	return 0;
}

/* l3fwd's route @rt for the packet (NULL: none), and once it is known
 * its nexthop @nh: the route's prefix (the packet's destination under
 * the route's prefix length), the gateway, the egress and the next hop's
 * MAC. */
__noinline int xnf_trace_route_fn(struct xdp_md *ctx, const struct xnf_pkt *p,
				  const struct xnf_rt_val *rt,
				  const struct xnf_nexthop *nh)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xnf_trace_rec *rec = xnf_trace_rec_get();
	struct xnf_trace_step *s;
	__u32 plen, i;

	if (!p || !rec || !rt)
		return 0;
	s = xnf_trace_cur(rec);
	if (!s)
		return 0;
	s->flags |= XNF_TRACE_S_ROUTE;
	s->family = p->family;
	plen = rt->plen;
	if (plen > (p->family == XNF_AF_INET ? 32 : 128))
		plen = 0;
	s->plen = plen;
	/* The packet's destination is in rec->dst (read at the entry, before
	 * any NF rewrote it); nat may have changed it since: the frame. */
	if (p->l3_off == ETH_HLEN && p->family == XNF_AF_INET) {
		struct iphdr *iph = data + ETH_HLEN;

		if ((void *)(iph + 1) <= data_end)
			__builtin_memcpy(s->addr, &iph->daddr, 4);
	} else if (p->l3_off == ETH_HLEN) {
		struct ipv6hdr *ip6h = data + ETH_HLEN;

		if ((void *)(ip6h + 1) <= data_end)
			__builtin_memcpy(s->addr, &ip6h->daddr, 16);
	}
	/* Host bits off, byte by byte. */
	for (i = 0; i < 16; i++) {
		if (plen >= 8 * (i + 1))
			continue;
		s->addr[i] &= plen > 8 * i ? (__u8)(0xff00 >> (plen - 8 * i)) : 0;
	}
	if (!nh)
		return 0;
	s->flags |= XNF_TRACE_S_EGRESS | XNF_TRACE_S_MAC;
	s->ifindex = nh->ifindex;
	xnf_mac_copy(s->gw, nh->dmac);
	if (nh->gw_family != XNF_AF_NONE) {
		/* The gateway's address replaces its MAC (the step has one
		 * field for either). */
		s->flags = (s->flags & ~XNF_TRACE_S_MAC) | XNF_TRACE_S_GW;
		__builtin_memcpy(s->gw, nh->gw, 16);
	}
	return 0;
}

/* l3fwd in fib mode: the kernel's answer @rc and its parameters @fib
 * (on success the egress, and the next hop: the gateway, or the
 * destination itself when it is directly connected). */
__noinline int xnf_trace_fib_fn(const struct xnf_pkt *p,
				const struct bpf_fib_lookup *fib, long rc)
{
	struct xnf_trace_rec *rec = xnf_trace_rec_get();
	struct xnf_trace_step *s;

	if (!p || !fib || !rec || rc != BPF_FIB_LKUP_RET_SUCCESS)
		return 0;
	s = xnf_trace_cur(rec);
	if (!s)
		return 0;
	s->flags |= XNF_TRACE_S_EGRESS | XNF_TRACE_S_GW;
	s->ifindex = fib->ifindex;
	s->family = p->family;
	if (p->family == XNF_AF_INET)
		__builtin_memcpy(s->gw, &fib->ipv4_dst, 4);
	else
		__builtin_memcpy(s->gw, fib->ipv6_dst, 16);
	return 0;
}

/* xnf_finish() carries out @action (XDP_*) for traced packet @p, for
 * @reason when it drops or passes: the record is complete, to the ring
 * buffer. A full ring loses the record (counted), never the packet.
 * Return: 0. */
__noinline int xnf_trace_end_fn(const struct xnf_pkt *p, __u32 action,
				__u32 reason)
{
	struct xnf_trace_rec *rec = xnf_trace_rec_get();
	struct xnf_trace_stats *ts;
	__u32 zero = 0;

	if (!p || !rec)
		return 0;
	rec->action = action;
	if (action == XDP_REDIRECT) {
		rec->verdict = p->verdict;
		rec->reason = XNF_R_NONE;
		if (p->verdict == XNF_V_REDIRECT)
			rec->egress = p->egress_ifindex;
		else if (p->verdict == XNF_V_XSK)
			rec->egress = p->rx_queue;
	} else {
		rec->verdict = action == XDP_PASS ? XNF_V_PASS : XNF_V_DROP;
		rec->reason = reason;
	}
	ts = bpf_map_lookup_elem(&XNF_MAP_TRACE_STATS, &zero);
	if (bpf_ringbuf_output(&XNF_MAP_TRACE_RB, rec, sizeof(*rec), 0)) {
		if (ts)
			ts->lost++;
	} else if (ts) {
		ts->traced++;
	}
	return 0;
}

#endif /* XNF_TRACE_BPF_H */
