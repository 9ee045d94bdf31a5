/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * nat_new.bpf.h - the translation of a new connection (docs/nat.md): the
 * first packet of a connection that the conntrack NF left pending is
 * matched against the active rules (include/uapi/xnf_nat.h), dnat rules
 * first (nft's prerouting), then snat and masquerade rules with the egress
 * device the chain's l3fwd would choose for the translated destination
 * (postrouting). What they choose goes into the pending entry
 * (xnf_ct_pending: status, nat, alias, xlat), which xnf_ct_confirm()
 * writes into xnf_ct with its alias (conntrack_maps.bpf.h).
 */
#ifndef XNF_NAT_NEW_BPF_H
#define XNF_NAT_NEW_BPF_H

#include "common.bpf.h"
#include "tables.bpf.h"
#include "conntrack.bpf.h"
#include "nat_maps.bpf.h"
#include "l3fwd.bpf.h"
#include "xnf_nh.h"

/* What the choice needs beyond the pending entry, per CPU. Not a shared
 * table (the loader leaves a map it does not know to its object): the
 * fused chain leaves too little stack for a struct bpf_fib_lookup next to
 * the NFs before it. */
struct xnf_nat_work {
	struct bpf_fib_lookup fib;
	struct xnf_ct_key orig; /* the packet's tuple: a = source, b =
				 * destination */
	__u32 oif;		/* egress of the translated destination, 0:
				 * not forwarded */
	__s32 dnat;		/* index of the matching dnat rule, or -1 */
	__s32 snat;		/* ... snat or masquerade rule */
	/* The ports (or echo identifiers) to try: min .. min + size - 1,
	 * from start on; the original one first when keep. */
	__u32 min;
	__u32 size;
	__u32 start;
	__u32 hash; /* of the original source (and destination) */
	__u32 pad;
	__u64 now; /* of the tries */
	__u8 keep;
	__u8 vary_src; /* the source's port changes, else the destination's */
	__u8 icmp;     /* an echo identifier: both ports */
	__u8 masq;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_nat_work);
} xnf_nat_work SEC(".maps");

/* Which rules xnf_nat_find_fn() looks at. */
#define XNF_NAT_K_DNAT 0
#define XNF_NAT_K_SRC  1

static __always_inline struct xnf_nat_work *xnf_nat_work_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnf_nat_work, &zero);
}

/* Whether the first @plen bits of @addr and @pfx agree (16 bytes each,
 * IPv4 in the first 4). */
static __always_inline int xnf_nat_in_prefix(const __u8 *addr, const __u8 *pfx,
					     __u32 plen)
{
	const __u32 *a = (const __u32 *)addr, *q = (const __u32 *)pfx;
	__u32 bits, mask;
	int i;

#pragma unroll
	for (i = 0; i < 4; i++) {
		bits = plen > 32 * i ? plen - 32 * i : 0;
		if (bits > 32)
			bits = 32;
		mask = bits ? bpf_htonl(~0U << (32 - bits)) : 0;
		if ((a[i] ^ q[i]) & mask)
			return 0;
	}
	return 1;
}

static __always_inline int xnf_nat_match(const struct xnf_nat_rule *r,
					 const struct xnf_ct_key *t, __u32 kind,
					 __u32 iif, __u32 oif)
{
	__u16 dport = bpf_ntohs(t->b_port);

	if (kind == XNF_NAT_K_DNAT) {
		if (r->type != XNF_NAT_DNAT || (r->iif && r->iif != iif))
			return 0;
	} else {
		if ((r->type != XNF_NAT_SNAT && r->type != XNF_NAT_MASQUERADE) ||
		    (r->oif && r->oif != oif))
			return 0;
	}
	if ((r->family && r->family != t->family) ||
	    (r->proto && r->proto != t->proto))
		return 0;
	if (r->src_plen && !xnf_nat_in_prefix(t->a_addr, r->src, r->src_plen))
		return 0;
	if (r->dst_plen && !xnf_nat_in_prefix(t->b_addr, r->dst, r->dst_plen))
		return 0;
	if (r->dport_min || r->dport_max) {
		if (t->proto != IPPROTO_TCP && t->proto != IPPROTO_UDP)
			return 0;
		if (dport < r->dport_min || dport > r->dport_max)
			return 0;
	}
	return 1;
}

/* The index in xnf_nat_rules of the first active rule of @kind that the
 * tuple @t (a = source, b = destination) matches, or -1. */
__noinline int xnf_nat_find_fn(const struct xnf_ct_key *t, __u32 kind,
			       __u32 iif, __u32 oif)
{
	const struct xnf_nat_rule *r;
	const struct xnf_nat_hdr *h;
	__u32 key = XNF_NAT_HDR_ACTIVE, gen, count, idx;
	int i;

	if (!t)
		return -1;
	h = bpf_map_lookup_elem(&XNF_MAP_NAT_HDR, &key);
	if (!h)
		return -1;
	gen = h->active & 1;
	h = bpf_map_lookup_elem(&XNF_MAP_NAT_HDR, &gen);
	if (!h)
		return -1;
	count = h->count;
	for (i = 0; i < XNF_NAT_MAX_RULES; i++) {
		if (i >= count)
			break;
		idx = gen * XNF_NAT_MAX_RULES + i;
		r = bpf_map_lookup_elem(&XNF_MAP_NAT_RULES, &idx);
		if (!r)
			break;
		if (xnf_nat_match(r, t, kind, iif, oif))
			return idx;
	}
	return -1;
}

/*
 * The egress device l3fwd would choose for the tuple the packet leaves
 * with so far (pe->xlat: its destination translated) into w->oif, 0 when
 * it would not forward it (a local destination, no route); w->fib's destination becomes what the
 * masquerade asks the address for: the route's IPv4 gateway when it has
 * one, else the destination. Returns 0, or -1 when the tables are
 * missing.
 */
__noinline int xnf_nat_oif_fn(struct xdp_md *ctx, const struct xnf_pkt *p)
{
	struct xnf_nat_work *w = xnf_nat_work_get();
	struct xnf_config *cfg = xnf_cfg_get();
	const struct xnf_ct_key *t;
	struct xnf_ct_pending *pe;
	const struct xnf_nexthop *nh;
	const struct xnf_rt_val *rt;
	struct xnf_rt4_key k4 = { .prefixlen = 32 };
	struct xnf_rt6_key k6 = { .prefixlen = 128 };
	__u32 hash = 0, a, b;
	__u16 sp = 0, dp = 0;
	__u32 zero = 0;
	long rc;

	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!w || !cfg || !p || !pe)
		return -1;
	t = &pe->xlat;
	w->oif = 0;
	__builtin_memset(&w->fib, 0, sizeof(w->fib));
	w->fib.l4_protocol = t->proto;
	if (t->family == XNF_AF_INET) {
		w->fib.family = XNF_SYS_AF_INET;
		__builtin_memcpy(&w->fib.ipv4_src, t->a_addr, 4);
		__builtin_memcpy(&w->fib.ipv4_dst, t->b_addr, 4);
	} else {
		w->fib.family = XNF_SYS_AF_INET6;
		__builtin_memcpy(w->fib.ipv6_src, t->a_addr, 16);
		__builtin_memcpy(w->fib.ipv6_dst, t->b_addr, 16);
	}
	if (xnf_l3_fib) {
		/* As l3fwd asks (bpf/fib.bpf.h); the kernel leaves the
		 * gateway in the destination. The neighbour does not
		 * matter here. */
		w->fib.ifindex = ctx->ingress_ifindex;
		rc = bpf_fib_lookup(ctx, &w->fib, sizeof(w->fib),
				    BPF_FIB_LOOKUP_SKIP_NEIGH);
		if (rc == BPF_FIB_LKUP_RET_SUCCESS)
			w->oif = w->fib.ifindex;
		return 0;
	}
	if (t->family == XNF_AF_INET) {
		__builtin_memcpy(k4.addr, t->b_addr, 4);
		rt = cfg->rt_copy ? bpf_map_lookup_elem(&xnf_rt4_b, &k4) :
				    bpf_map_lookup_elem(&xnf_rt4, &k4);
		__builtin_memcpy(&a, t->a_addr, 4);
		__builtin_memcpy(&b, t->b_addr, 4);
	} else {
		__builtin_memcpy(k6.addr, t->b_addr, 16);
		rt = cfg->rt_copy ? bpf_map_lookup_elem(&xnf_rt6_b, &k6) :
				    bpf_map_lookup_elem(&xnf_rt6, &k6);
		a = xnf_nh_fold6((const __u32 *)t->a_addr);
		b = xnf_nh_fold6((const __u32 *)t->b_addr);
	}
	if (!rt || (rt->type != XNF_RT_UNICAST && rt->type != XNF_RT_MULTIPATH))
		return 0;
	if (rt->type == XNF_RT_MULTIPATH) {
		/* xnf_l3_hash() of the packet as l3fwd will see it: after
		 * the destination's translation. */
		if ((p->flags & (XNF_PKT_F_PORTS | XNF_PKT_F_FRAG)) ==
		    XNF_PKT_F_PORTS) {
			sp = t->a_port;
			dp = t->b_port;
		}
		hash = xnf_nh_flow_hash(a, b, sp, dp, t->proto);
	}
	nh = xnf_l3_nexthop(rt, hash);
	if (!nh)
		return 0;
	w->oif = nh->ifindex;
	if (t->family == XNF_AF_INET && nh->gw_family == XNF_AF_INET)
		__builtin_memcpy(&w->fib.ipv4_dst, nh->gw, 4);
	return 0;
}

/* The address Linux would give the source on w->oif (inet_select_addr,
 * ipv6_dev_get_saddr) into t->a_addr; -1 when it has none. Asks for the
 * next hop xnf_nat_oif_fn() left in w->fib (IPv6: the destination of
 * @t). */
__noinline int xnf_nat_masq_fn(struct xdp_md *ctx, struct xnf_ct_key *t)
{
	struct xnf_nat_work *w = xnf_nat_work_get();
	__u8 *addr;
	long rc;

	if (!w || !t)
		return -1;
	addr = t->a_addr;
	w->fib.ifindex = w->oif;
	/* A fib mode lookup left the MTU here (a union with tot_len): no
	 * MTU check. */
	w->fib.tot_len = 0;
	__builtin_memset(w->fib.ipv6_src, 0, 16);
	if (w->fib.family == XNF_SYS_AF_INET6)
		__builtin_memcpy(w->fib.ipv6_dst, t->b_addr, 16);
	rc = bpf_fib_lookup(ctx, &w->fib, sizeof(w->fib),
			    BPF_FIB_LOOKUP_SRC | BPF_FIB_LOOKUP_OUTPUT |
				    BPF_FIB_LOOKUP_SKIP_NEIGH);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return -1;
	__builtin_memset(addr, 0, 16);
	if (w->fib.family == XNF_SYS_AF_INET) {
		if (!w->fib.ipv4_src)
			return -1;
		__builtin_memcpy(addr, &w->fib.ipv4_src, 4);
	} else {
		__builtin_memcpy(addr, w->fib.ipv6_src, 16);
	}
	return 0;
}

static __always_inline __u32 xnf_nat_mix(__u32 h, __u32 v)
{
	return xnf_nh_mix(h ^ v);
}

static __always_inline const struct xnf_nat_rule *xnf_nat_rule_at(__s32 idx)
{
	__u32 i = idx;

	if (idx < 0)
		return NULL;
	return bpf_map_lookup_elem(&XNF_MAP_NAT_RULES, &i);
}

/* The original tuple (w->orig) from the pending connection's canonical
 * key, and the tuple the packet leaves with (pe->xlat) as it for now. */
__noinline int xnf_nat_orig_fn(void)
{
	struct xnf_nat_work *w = xnf_nat_work_get();
	struct xnf_ct_pending *pe;
	struct xnf_ct_key *o;
	__u32 zero = 0;

	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!w || !pe)
		return -1;
	o = &w->orig;
	__builtin_memset(o, 0, sizeof(*o));
	o->family = pe->key.family;
	o->proto = pe->key.proto;
	if (pe->entry.status & XNF_CT_S_ORIG_B) {
		__builtin_memcpy(o->a_addr, pe->key.b_addr, 16);
		__builtin_memcpy(o->b_addr, pe->key.a_addr, 16);
		o->a_port = pe->key.b_port;
		o->b_port = pe->key.a_port;
	} else {
		__builtin_memcpy(o->a_addr, pe->key.a_addr, 16);
		__builtin_memcpy(o->b_addr, pe->key.b_addr, 16);
		o->a_port = pe->key.a_port;
		o->b_port = pe->key.b_port;
	}
	pe->xlat = *o;
	w->dnat = -1;
	w->snat = -1;
	w->oif = 0;
	return 0;
}

/* dnat's destination (w->dnat) into pe->xlat. */
__noinline int xnf_nat_dnat_fn(void)
{
	struct xnf_nat_work *w = xnf_nat_work_get();
	const struct xnf_nat_rule *r;
	struct xnf_ct_pending *pe;
	__u32 zero = 0;

	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!w || !pe)
		return -1;
	r = xnf_nat_rule_at(w->dnat);
	if (!r)
		return 0;
	__builtin_memcpy(pe->xlat.b_addr, r->to_min, 16);
	if ((r->flags & XNF_NAT_F_PORTS) &&
	    (pe->xlat.proto == IPPROTO_TCP || pe->xlat.proto == IPPROTO_UDP))
		pe->xlat.b_port = bpf_htons(r->to_port_min);
	return 0;
}

/* snat's address: one of r->to_min .. r->to_max by @hash. A range differs
 * in its last 32 bits only (IPv4: the address; IPv6: the last word). */
static __always_inline void xnf_nat_pick_addr(const struct xnf_nat_rule *r,
					      __u8 family, __u32 hash, __u8 *addr)
{
	__u32 w = family == XNF_AF_INET ? 0 : 3, lo, hi;
	__u32 *out = (__u32 *)addr;
	const __u32 *mn = (const __u32 *)r->to_min;
	const __u32 *mx = (const __u32 *)r->to_max;

	__builtin_memcpy(addr, r->to_min, 16);
	lo = bpf_ntohl(mn[w & 3]);
	hi = bpf_ntohl(mx[w & 3]);
	if (hi > lo)
		out[w & 3] = bpf_htonl(lo + hash % (hi - lo + 1));
}

/* The default port range of Linux for an original port @port (host
 * order): nf_nat_l4proto_unique_tuple's. */
static __always_inline void xnf_nat_default_range(struct xnf_nat_work *w,
						  __u8 proto, __u16 port)
{
	if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		w->min = 0;
		w->size = 65536;
	} else if (port < 512) {
		w->min = 1;
		w->size = 511;
	} else if (port < 1024) {
		w->min = 600;
		w->size = 424;
	} else {
		w->min = 1024;
		w->size = 64512;
	}
}

/*
 * The source address (masquerade's, or of snat's range) into pe->xlat,
 * and the ports to try into w. Returns 0 or the reason to drop for
 * (nat_no_addr).
 */
__noinline int xnf_nat_addr_fn(struct xdp_md *ctx)
{
	struct xnf_nat_work *w = xnf_nat_work_get();
	const struct xnf_nat_rule *sn, *dn, *pr;
	struct xnf_ct_counters *cs = xnf_ct_stats_get();
	struct xnf_ct_pending *pe;
	struct xnf_ct_key *t;
	__u32 zero = 0, port;
	__u8 proto;

	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!w || !pe || !cs)
		return XNF_R_INTERNAL;
	t = &pe->xlat;
	proto = t->proto;
	sn = xnf_nat_rule_at(w->snat);
	dn = xnf_nat_rule_at(w->dnat);
	w->hash = xnf_nat_mix(0x9e3779b9,
			      xnf_nh_fold6((const __u32 *)w->orig.a_addr));
	w->masq = sn && sn->type == XNF_NAT_MASQUERADE;
	if (w->masq) {
		if (xnf_nat_masq_fn(ctx, t)) {
			cs->nat_no_addr++;
			return XNF_R_NAT_NO_ADDR;
		}
	} else if (sn) {
		/* persistent: by the source alone. */
		if (!(sn->flags & XNF_NAT_F_PERSISTENT))
			w->hash = xnf_nat_mix(w->hash,
					      xnf_nh_fold6((const __u32 *)w->orig
								   .b_addr));
		xnf_nat_pick_addr(sn, t->family, w->hash, t->a_addr);
	}

	/* The port (or echo identifier) that may change: the source's with
	 * snat, else the destination's given by dnat. */
	w->icmp = proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6;
	w->vary_src = !!sn;
	port = bpf_ntohs(sn ? t->a_port : t->b_port);
	pr = sn ? sn : dn;
	if (pr && (pr->flags & XNF_NAT_F_PORTS) && (sn || !w->icmp)) {
		w->min = pr->to_port_min;
		w->size = pr->to_port_max - w->min + 1;
	} else if (sn || w->icmp) {
		xnf_nat_default_range(w, proto, port);
	} else {
		/* dnat without ports keeps the destination port. */
		w->min = port;
		w->size = 1;
	}
	if ((!w->icmp && proto != IPPROTO_TCP && proto != IPPROTO_UDP) ||
	    !w->size || w->size > 65536) {
		/* No ports: the one tuple. */
		w->min = port;
		w->size = 1;
	}
	w->keep = port >= w->min && port - w->min < w->size;
	if (sn && (sn->flags & XNF_NAT_F_RANDOM)) {
		w->keep = 0;
		w->start = bpf_get_prandom_u32();
	} else {
		w->start = xnf_nat_mix(
			xnf_nat_mix(w->hash,
				    xnf_nh_fold6((const __u32 *)t->b_addr)),
			(__u32)t->b_port << 16 | proto);
	}
	return 0;
}

/* Whether a live entry holds @k: a connection, or an alias whose
 * connection lives. A dead one is deleted, so that the key can be taken
 * (the alias of a dead connection goes when it is found). Counted as
 * xnf_ct_lookup() counts. */
static __always_inline int xnf_nat_taken(const struct xnf_ct_key *k, __u64 now,
					 struct xnf_ct_counters *cs)
{
	struct xnf_ct_entry *e, *c;
	__u32 alias;

	cs->searched++;
	e = bpf_map_lookup_elem(&XNF_MAP_CT, k);
	if (!e)
		return 0;
	alias = e->status & XNF_CT_S_ALIAS;
	if (alias) {
		c = bpf_map_lookup_elem(&XNF_MAP_CT, &e->nat);
		if (c && c->expires > now) {
			cs->found++;
			return 1;
		}
	} else if (e->expires > now) {
		cs->found++;
		return 1;
	}
	if (!bpf_map_delete_elem(&XNF_MAP_CT, k) && !alias)
		cs->expired++;
	return 0;
}

/* Whether the port (or echo identifier) of try @i gives a free reply
 * tuple: pe->xlat takes it, pe->alias becomes the canonical key of the
 * reply tuple, which must have no live entry. The first try keeps the
 * original port when w->keep. */
__noinline int xnf_nat_try_fn(__u32 i)
{
	struct xnf_ct_counters *cs = xnf_ct_stats_get();
	struct xnf_nat_work *w = xnf_nat_work_get();
	struct xnf_ct_pending *pe;
	struct xnf_ct_key *t;
	__u32 zero = 0, port;

	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!w || !pe || !cs)
		return 0;
	t = &pe->xlat;
	port = w->min + (w->start + i) % w->size;
	if (!i && w->keep)
		port = bpf_ntohs(w->vary_src || w->icmp ? t->a_port : t->b_port);
	if (w->icmp) {
		t->a_port = bpf_htons(port);
		t->b_port = t->a_port;
	} else if (w->vary_src) {
		t->a_port = bpf_htons(port);
	} else {
		t->b_port = bpf_htons(port);
	}
	/* The reply tuple: from the translated destination back to the
	 * translated source; its canonical key, the alias. */
	__builtin_memcpy(pe->alias.a_addr, t->b_addr, 16);
	__builtin_memcpy(pe->alias.b_addr, t->a_addr, 16);
	xnf_ct_key_order(&pe->alias, t->family, t->proto, t->b_port, t->a_port);
	return !xnf_nat_taken(&pe->alias, w->now, cs);
}

/* The translation chosen: into the pending entry and p->nat. */
__noinline int xnf_nat_set_fn(struct xnf_pkt *p)
{
	struct xnf_nat_work *w = xnf_nat_work_get();
	struct xnf_ct_pending *pe;
	struct xnf_ct_key *o, *t;
	__u32 zero = 0;

	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!w || !pe || !p)
		return -1;
	o = &w->orig;
	t = &pe->xlat;
	if (xnf_ct_addr_differs(t->a_addr, o->a_addr, 16) ||
	    t->a_port != o->a_port) {
		pe->entry.status |= XNF_CT_S_SNAT;
		p->nat |= XNF_PKT_NAT_SRC;
		if (w->masq) {
			pe->entry.status |= XNF_CT_S_MASQ;
			pe->entry.nat_oif = w->oif;
		}
	}
	if (xnf_ct_addr_differs(t->b_addr, o->b_addr, 16) ||
	    t->b_port != o->b_port) {
		pe->entry.status |= XNF_CT_S_DNAT;
		p->nat |= XNF_PKT_NAT_DST;
	}
	/* Translated to itself: nothing to do, and no alias (it would be
	 * the connection's own key). */
	if (!p->nat)
		return 0;
	pe->entry.nat.family = t->family;
	pe->entry.nat.proto = t->proto;
	pe->entry.nat.pad = 0;
	__builtin_memcpy(pe->entry.nat.a_addr, t->b_addr, 16);
	__builtin_memcpy(pe->entry.nat.b_addr, t->a_addr, 16);
	pe->entry.nat.a_port = t->b_port;
	pe->entry.nat.b_port = t->a_port;
	return 0;
}

/*
 * Chooses the translation of the new connection pending for @p
 * (XNF_PKT_F_CT_PENDING): its status, reply tuple, alias and the tuple
 * the packet leaves with, in xnf_ct_pending[0]; p->nat. Returns 0
 * (translated or not), or the reason (enum xnf_reason) to drop the packet
 * for. Its steps are global functions of their own, each with its state
 * in xnf_nat_work: the fused chain leaves about 100 bytes of stack to a
 * function it calls, and to what that one calls.
 */
__noinline int xnf_nat_new_fn(struct xdp_md *ctx, struct xnf_pkt *p)
{
	struct xnf_nat_work *w = xnf_nat_work_get();
	struct xnf_ct_counters *cs;
	struct xnf_ct_pending *pe;
	__u32 zero = 0, i;
	int ret;

	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!p || !w || !pe || xnf_nat_orig_fn())
		return XNF_R_INTERNAL;
	/* Prerouting: dnat. */
	w->dnat = xnf_nat_find_fn(&w->orig, XNF_NAT_K_DNAT, p->ingress_ifindex,
				  0);
	if (xnf_nat_dnat_fn())
		return XNF_R_INTERNAL;
	/* Postrouting: snat and masquerade, by the egress of the translated
	 * destination. */
	if (xnf_nat_oif_fn(ctx, p))
		return XNF_R_INTERNAL;
	if (w->oif)
		w->snat = xnf_nat_find_fn(&pe->xlat, XNF_NAT_K_SRC,
					  p->ingress_ifindex, w->oif);
	if (w->dnat < 0 && w->snat < 0)
		return 0;
	ret = xnf_nat_addr_fn(ctx);
	if (ret)
		return ret;
	/* The first free port of w's, at most XNF_NAT_TRIES lookups (here,
	 * not in a function of its own: the stack of the one a try calls
	 * is the deepest). */
	w->now = bpf_ktime_get_coarse_ns();
	for (i = 0; i < XNF_NAT_TRIES; i++) {
		if (xnf_nat_try_fn(i))
			goto found;
		if (w->size == 1)
			break;
	}
	cs = xnf_ct_stats_get();
	if (cs)
		cs->nat_no_port++;
	return XNF_R_NAT_NO_PORT;
found:
	cs = xnf_ct_stats_get();
	if (!cs)
		return XNF_R_INTERNAL;
	cs->nat_retries += i;
	if (xnf_nat_set_fn(p))
		return XNF_R_INTERNAL;
	return 0;
}

#endif /* XNF_NAT_NEW_BPF_H */
