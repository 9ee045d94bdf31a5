/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * l3fwd.bpf.h - the L3 forwarding NF. Looks the destination up in xnf's own
 * LPM tables (xnf_rt4/xnf_rt6, or their other copies _b) or, with xnf_l3_fib set at load time, in the
 * kernel's FIB and neighbour table (bpf_fib_lookup); decrements TTL / hop
 * limit, rewrites the MACs and chooses the egress port. Exceptions (no
 * route, TTL expiry, own address, ...) end the chain with pass or drop as
 * xnf_cfg says, so the kernel can answer with ICMP. Before any of that, the
 * receive checks of a router (bpf/rx.bpf.h): a wrong IPv4 header checksum
 * is dropped, martian addresses are dropped or passed as xnf_cfg says.
 * A route names a nexthop object (xnf_nh) or a multipath group (xnf_nhg),
 * whose bucket for the flow's hash (include/uapi/xnf_nh.h) names one.
 */
#ifndef XNF_L3FWD_BPF_H
#define XNF_L3FWD_BPF_H

#include "common.bpf.h"
#include "tables.bpf.h"
#include "l3fwd_maps.bpf.h"
#include "chain.bpf.h"
#include "rx.bpf.h"
#include "xnf_nh.h"
#include "fib.bpf.h"
#include "fcache.bpf.h"

/*
 * TTL sits in the high byte of the 16-bit word (ttl, protocol). Lowering it
 * by one lowers that word by 0x0100, so by RFC 1624 (HC' = ~(~HC + ~m + m'))
 * the checksum rises by 0x0100 in one's complement arithmetic; the carry out
 * of bit 15 is folded back in. The result is never 0xffff, matching a
 * checksum computed from scratch.
 */
static __always_inline void xnf_ipv4_dec_ttl(struct iphdr *iph)
{
	__u32 check = (__u32)iph->check + bpf_htons(0x0100);

	iph->check = (__sum16)(check + (check >= 0xffff));
	iph->ttl--;
}

static __always_inline void xnf_set_macs(struct ethhdr *eth, const __u8 *dmac,
					 const __u8 *smac)
{
	xnf_mac_copy(eth->h_dest, dmac);
	xnf_mac_copy(eth->h_source, smac);
}

/* A packet that Linux discards only instead of forwarding it (IPv6 from
 * ::, XNF_RX_MARTIAN_FWD) is a martian once the route says forward: after
 * the TTL check, as in ip6_forward. */
static __always_inline int
xnf_l3_martian_fwd(struct xnf_pkt *p, struct xnf_config *cfg, int martian_fwd)
{
	if (martian_fwd)
		xnf_exception(p, cfg->martian, XNF_R_MARTIAN);
	return martian_fwd;
}

/* The flow hash of a multipath route; the ports only when every packet
 * of the flow has them (see xnf_nh.h). */
static __always_inline __u32 xnf_l3_hash(const struct xnf_pkt *p, __u32 a, __u32 b)
{
	__u16 sp = 0, dp = 0;

	if ((p->flags & (XNF_PKT_F_PORTS | XNF_PKT_F_FRAG)) == XNF_PKT_F_PORTS) {
		sp = p->sport;
		dp = p->dport;
	}
	return xnf_nh_flow_hash(a, b, sp, dp, p->l4_proto);
}

/* The nexthop of route @rt for a flow of hash @hash, or NULL (a dangling
 * id: the tables are being changed, or are inconsistent). */
static __always_inline const struct xnf_nexthop *
xnf_l3_nexthop(const struct xnf_rt_val *rt, __u32 hash)
{
	const struct xnf_nhgroup *g;
	__u32 id = rt->nh;

	const struct xnf_nh_live *live;
	__u32 slot;

	if (rt->type == XNF_RT_MULTIPATH) {
		g = bpf_map_lookup_elem(&xnf_nhg, &id);
		if (!g)
			return NULL;
		id = g->bucket[xnf_nh_bucket(hash)];
	}
	live = bpf_map_lookup_elem(&xnf_nh_live, &id);
	if (!live || !live->slot)
		return NULL;
	slot = live->slot - 1;
	return bpf_map_lookup_elem(&xnf_nh, &slot);
}

/*
 * The flow cache's part of l3fwd: the route the live LPM trie of the
 * packet's family returned for the flow in this table generation. Only
 * the route is cached: its nexthop (whose MACs change in place, without a
 * generation) and every check of the packet stay per packet.
 * xnf_l3_cached() returns 1 with *@rt the cached route (or NULL: none);
 * else the caller looks up and calls xnf_l3_store() with what it found.
 * The lookup itself stays at the caller with a constant map: one call
 * site for either copy would make the verifier call the trie through the
 * helper (an indirect call) instead of directly.
 */
static __always_inline int xnf_l3_cached(const struct xnf_pkt *p,
					 struct xnf_fc_entry **e,
					 const struct xnf_rt_val **rt)
{
	*e = xnf_fc_get(p);
	if (!*e || !xnf_fc_fresh(*e, p, XNF_FC_L3, (*e)->l3_gen))
		return 0;
	xnf_fc_count(p, XNF_NF_L3FWD, 1);
	*rt = (*e)->l3_found ? &(*e)->l3_rt : NULL;
	return 1;
}

static __always_inline void xnf_l3_store(struct xnf_fc_entry *e,
					 const struct xnf_pkt *p,
					 const struct xnf_rt_val *rt)
{
	if (!e)
		return;
	e->l3_found = !!rt;
	if (rt)
		e->l3_rt = *rt;
	e->l3_gen = p->fc_gen;
	e->parts |= XNF_FC_L3;
	xnf_fc_count(p, XNF_NF_L3FWD, 0);
}

/* Forwards along a route of xnf's own table, or raises its exception.
 * @hash: the flow's, used by multipath routes only. */
static __always_inline void xnf_l3_route(struct xdp_md *ctx, struct xnf_pkt *p,
					 struct xnf_config *cfg,
					 const struct xnf_rt_val *rt,
					 __u32 hash, struct ethhdr *eth,
					 __u8 *ttl, int martian_fwd)
{
	const struct xnf_nexthop *nh;
	__u32 mtu = p->l3_len;

	if (p->trace)
		xnf_trace_route_fn(ctx, p, rt, NULL);
	if (!rt) {
		xnf_exception(p, cfg->no_route, XNF_R_NO_ROUTE);
		return;
	}
	switch (rt->type) {
	case XNF_RT_UNICAST:
	case XNF_RT_MULTIPATH:
		break;
	case XNF_RT_LOCAL:
		xnf_exception(p, cfg->local, XNF_R_LOCAL);
		return;
	case XNF_RT_BLACKHOLE:
		xnf_exception(p, XNF_ACT_DROP, XNF_R_BLACKHOLE);
		return;
	case XNF_RT_KERNEL:
		xnf_exception(p, XNF_ACT_PASS, XNF_R_FIB);
		return;
	default:
		xnf_exception(p, cfg->no_route, XNF_R_NO_ROUTE);
		return;
	}
	nh = xnf_l3_nexthop(rt, hash);
	if (!nh) {
		xnf_exception(p, XNF_ACT_DROP, XNF_R_INTERNAL);
		return;
	}
	if (p->trace)
		xnf_trace_route_fn(ctx, p, rt, nh);
	if (*ttl <= 1) {
		xnf_exception(p, cfg->ttl_expired, XNF_R_TTL);
		return;
	}
	if (xnf_l3_martian_fwd(p, cfg, martian_fwd))
		return;
	/* No neighbour (yet, or any more): the kernel resolves it, as with
	 * fib mode's NO_NEIGH. */
	if (nh->state != XNF_NH_VALID) {
		xnf_exception(p, XNF_ACT_PASS, XNF_R_NO_NEIGH);
		return;
	}
	/* Too big for the route's MTU or the egress port's: the kernel
	 * answers with ICMP "fragmentation needed" / "packet too big", as
	 * path MTU discovery needs (or fragments). The route's MTU is 0
	 * when it has none, which wraps to the largest __u32 below: one
	 * compare. The L3 length is passed to the helper, as its XDP
	 * variant would otherwise measure only the first buffer of a
	 * multi-buffer frame. */
	if ((__u32)p->l3_len - 1 > nh->mtu - 1 ||
	    bpf_check_mtu(ctx, nh->ifindex, &mtu, 0, 0) ==
		    BPF_MTU_CHK_RET_FRAG_NEEDED) {
		xnf_exception(p, XNF_ACT_PASS, XNF_R_FRAG_NEEDED);
		return;
	}
	xnf_set_macs(eth, nh->dmac, nh->smac);
	p->verdict = XNF_V_REDIRECT;
	p->egress_ifindex = nh->ifindex;
}

/* Forwards along the kernel FIB's answer @rc (xnf_fib_exception, shared
 * with the AF_XDP workers), or raises its exception. */
static __always_inline void xnf_l3_fib_result(struct xnf_pkt *p,
					      struct xnf_config *cfg,
					      struct bpf_fib_lookup *fib,
					      long rc, struct ethhdr *eth,
					      __u8 *ttl, int martian_fwd)
{
	__u32 action, reason;

	if (p->trace)
		xnf_trace_fib_fn(p, fib, rc);
	if (xnf_fib_exception(rc, cfg, &action, &reason)) {
		xnf_exception(p, action, reason);
		return;
	}
	if (*ttl <= 1) {
		xnf_exception(p, cfg->ttl_expired, XNF_R_TTL);
		return;
	}
	if (xnf_l3_martian_fwd(p, cfg, martian_fwd))
		return;
	xnf_set_macs(eth, fib->dmac, fib->smac);
	p->verdict = XNF_V_REDIRECT;
	p->egress_ifindex = fib->ifindex;
}

static __always_inline void xnf_l3fwd_v4(struct xdp_md *ctx, struct xnf_pkt *p,
					 struct xnf_config *cfg,
					 struct ethhdr *eth, struct iphdr *iph)
{
	if (xnf_l3_fib) {
		struct bpf_fib_lookup fib;
		long rc = xnf_fib4(ctx, iph, &fib);

		xnf_l3_fib_result(p, cfg, &fib, rc, eth, &iph->ttl, 0);
	} else {
		struct xnf_rt4_key key = { .prefixlen = 32 };
		const struct xnf_rt_val *rt;
		struct xnf_fc_entry *e;
		__u32 hash = 0;

		if (!xnf_l3_cached(p, &e, &rt)) {
			__builtin_memcpy(key.addr, &iph->daddr, 4);
			rt = cfg->rt_copy ?
				     bpf_map_lookup_elem(&xnf_rt4_b, &key) :
				     bpf_map_lookup_elem(&xnf_rt4, &key);
			xnf_l3_store(e, p, rt);
		}
		if (rt && rt->type == XNF_RT_MULTIPATH)
			hash = xnf_l3_hash(p, iph->saddr, iph->daddr);
		xnf_l3_route(ctx, p, cfg, rt, hash, eth, &iph->ttl, 0);
	}
	if (p->verdict == XNF_V_REDIRECT)
		xnf_ipv4_dec_ttl(iph);
}

static __always_inline void xnf_l3fwd_v6(struct xdp_md *ctx, struct xnf_pkt *p,
					 struct xnf_config *cfg,
					 struct ethhdr *eth,
					 struct ipv6hdr *ip6h, int martian_fwd)
{
	if (xnf_l3_fib) {
		struct bpf_fib_lookup fib;
		long rc = xnf_fib6(ctx, p, ip6h, &fib);

		xnf_l3_fib_result(p, cfg, &fib, rc, eth, &ip6h->hop_limit,
				  martian_fwd);
	} else {
		struct xnf_rt6_key key = { .prefixlen = 128 };
		const struct xnf_rt_val *rt;
		struct xnf_fc_entry *e;
		__u32 hash = 0;

		if (!xnf_l3_cached(p, &e, &rt)) {
			__builtin_memcpy(key.addr, &ip6h->daddr, 16);
			rt = cfg->rt_copy ?
				     bpf_map_lookup_elem(&xnf_rt6_b, &key) :
				     bpf_map_lookup_elem(&xnf_rt6, &key);
			xnf_l3_store(e, p, rt);
		}
		if (rt && rt->type == XNF_RT_MULTIPATH)
			hash = xnf_l3_hash(p,
					   xnf_nh_fold6(
						   ip6h->saddr.in6_u.u6_addr32),
					   xnf_nh_fold6(
						   ip6h->daddr.in6_u.u6_addr32));
		xnf_l3_route(ctx, p, cfg, rt, hash, eth, &ip6h->hop_limit,
			     martian_fwd);
	}
	if (p->verdict == XNF_V_REDIRECT)
		ip6h->hop_limit--;
}

/*
 * What the receive checks (bpf/rx.bpf.h) leave to do: true when they
 * decided. In Linux's order: the IPv4 header checksum (ip_rcv_core), the
 * addresses (ip_route_input_slow, ip6_rcv_core), then what a router
 * forwards at all: unicast only (RFC 1812 5.3.4), so frames sent to a
 * link-layer group address go to the kernel, like broadcast, multicast and
 * link-local destinations (Linux drops them in ip_forward / ip6_forward,
 * pkt_type != PACKET_HOST).
 */
static __always_inline int xnf_l3_rx_decided(struct xnf_pkt *p,
					     struct xnf_config *cfg,
					     const struct ethhdr *eth, int cls)
{
	switch (cls) {
	case XNF_RX_FORWARD:
	case XNF_RX_MARTIAN_FWD:
		break;
	case XNF_RX_BAD_CSUM:
		xnf_exception(p, XNF_ACT_DROP, XNF_R_BAD_CSUM);
		return 1;
	case XNF_RX_MARTIAN:
		xnf_exception(p, cfg->martian, XNF_R_MARTIAN);
		return 1;
	case XNF_RX_KERNEL:
		xnf_exception(p, cfg->local, XNF_R_LOCAL);
		return 1;
	default: /* IPv4 options beyond the first buffer */
		xnf_exception(p, XNF_ACT_DROP, XNF_R_INTERNAL);
		return 1;
	}
	if (eth->h_dest[0] & 1) {
		xnf_exception(p, cfg->local, XNF_R_LOCAL);
		return 1;
	}
	return 0;
}

static __always_inline void xnf_l3fwd_run(struct xdp_md *ctx, struct xnf_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct xnf_config *cfg;
	int cls;

	/* ARP, LLDP, ...: the kernel's business on a router. */
	if (p->family == XNF_AF_NONE) {
		xnf_exception(p, XNF_ACT_PASS, XNF_R_NOT_IP);
		return;
	}
	/* A tagged frame belongs to a VLAN device of the kernel: xnf does not
	 * route between VLANs. */
	if (p->vlans) {
		xnf_exception(p, XNF_ACT_PASS, XNF_R_VLAN);
		return;
	}
	cfg = xnf_cfg_get();
	if (!cfg || (void *)(eth + 1) > data_end)
		goto internal;

	if (p->family == XNF_AF_INET) {
		struct iphdr *iph = (void *)(eth + 1);

		if ((void *)(iph + 1) > data_end)
			goto internal;
		cls = xnf_rx_ipv4(iph, data_end);
		if (!xnf_l3_rx_decided(p, cfg, eth, cls))
			xnf_l3fwd_v4(ctx, p, cfg, eth, iph);
	} else {
		struct ipv6hdr *ip6h = (void *)(eth + 1);

		if ((void *)(ip6h + 1) > data_end)
			goto internal;
		cls = xnf_rx_ipv6(ip6h);
		if (!xnf_l3_rx_decided(p, cfg, eth, cls))
			xnf_l3fwd_v6(ctx, p, cfg, eth, ip6h,
				     cls == XNF_RX_MARTIAN_FWD);
	}
	return;
internal:
	xnf_exception(p, XNF_ACT_DROP, XNF_R_INTERNAL);
}

#endif /* XNF_L3FWD_BPF_H */
