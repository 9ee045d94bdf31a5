/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * nat.bpf.h - the nat NF (include/uapi/xnf_nat.h, docs/nat.md): translates
 * the packets of translated connections and chooses the translation of a
 * new one (nat_new.bpf.h). The destination changes here, before the
 * firewall and the route lookup (nft's prerouting); the source when the
 * packet leaves forwarded (xnf_finish(), chain.bpf.h: postrouting).
 */
#ifndef XNF_NAT_BPF_H
#define XNF_NAT_BPF_H

#include "common.bpf.h"
#include "tables.bpf.h"
#include "conntrack_maps.bpf.h"
#include "nat_maps.bpf.h"
#include "chain.bpf.h"
#include "fcache.bpf.h"
#include "nat_xlat.bpf.h"
#include "nat_new.bpf.h"

/*
 * The destination of a packet of a translated connection
 * (XNF_PKT_NAT_DST, xnf_ct_pending[0].xlat), or an ICMP error about one
 * (XNF_PKT_NAT_INNER): the header it quotes reads as the packet it is
 * about did before the translation (xnf_ct_pending[0].inner), and its
 * outer destination is the translated one's original (as Linux's
 * nf_nat_icmp_reply_translation). Returns 0, or -1 when the frame or the
 * tables fail.
 */
__noinline int xnf_nat_dst_fn(struct xdp_md *ctx, struct xnf_pkt *p)
{
	__u32 zero = 0, l3, l4, in3, in4, fam;
	struct xnf_ct_pending *pe;
	int d1, d2;
	__u8 b0;

	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!p || !pe)
		return -1;
	fam = p->family;
	l3 = p->l3_off;
	l4 = p->l4_off;
	if (p->nat & XNF_PKT_NAT_INNER) {
		/* The quoted packet after the error's 8-byte header. */
		in3 = l4 + 8;
		if (bpf_xdp_load_bytes(ctx, in3, &b0, 1))
			return -1;
		in4 = in3 + (fam == XNF_AF_INET ? (b0 & 0xf) * 4 : 40);
		d1 = xnf_nat_ep_fn(ctx, in3 | in4 << 16,
				   fam | pe->inner.proto << 8 | XNF_NAT_EP_INNER,
				   &pe->inner);
		d2 = xnf_nat_ep_fn(ctx, in3 | in4 << 16,
				   fam | pe->inner.proto << 8 |
					   XNF_NAT_EP_INNER | XNF_NAT_EP_DST,
				   &pe->inner);
		if (d1 < 0 || d2 < 0)
			return -1;
		/* The error's checksum covers the quote. */
		xnf_nat_csum_at(ctx, l4 + 2, (__u64)d1 + d2, 0);
		if ((p->nat & XNF_PKT_NAT_DST) &&
		    xnf_nat_ep_fn(ctx, l3 | l4 << 16,
				  fam | p->l4_proto << 8 | XNF_NAT_EP_DST |
					  XNF_NAT_EP_NOPORT,
				  &pe->xlat) < 0)
			return -1;
		return 0;
	}
	if (xnf_nat_ep_fn(ctx, l3 | l4 << 16,
			  fam | p->l4_proto << 8 | XNF_NAT_EP_DST, &pe->xlat) < 0)
		return -1;
	if (p->flags & XNF_PKT_F_PORTS)
		p->dport = pe->xlat.b_port;
	return 0;
}

/* The flow cache entry of the rewritten packet (as the entry program
 * found the one of the packet as it came): the firewall and l3fwd cache
 * by what they see. A packet the entry program sent uncached (cache off or
 * bypassed, xnf_fc_begin) stays uncached: it was counted once. */
__noinline int xnf_nat_fc_fn(struct xdp_md *ctx, struct xnf_pkt *p)
{
	if (!p)
		return -1;
	if (!p->fc_idx)
		return 0;
	p->fc_idx = 0;
	xnf_fc_begin(ctx, p);
	return 0;
}

/* Trace: the prio of the rule that made the new translation of @p
 * (snat's or masquerade's, else dnat's), from what xnf_nat_new_fn()
 * chose for it. */
__noinline int xnf_trace_nat_rule_fn(const struct xnf_pkt *p)
{
	struct xnf_trace_rec *rec = xnf_trace_rec_get();
	struct xnf_nat_work *w = xnf_nat_work_get();
	const struct xnf_nat_rule *r;
	struct xnf_trace_step *s;

	if (!p || !rec || !w)
		return 0;
	s = xnf_trace_cur(rec);
	r = xnf_nat_rule_at(w->snat >= 0 ? w->snat : w->dnat);
	if (!s || !r)
		return 0;
	s->flags |= XNF_TRACE_S_RULE;
	s->rule = r->prio;
	return 0;
}

static __always_inline void xnf_nat_run(struct xdp_md *ctx, struct xnf_pkt *p)
{
	int r = 0;

	if (p->flags & XNF_PKT_F_CT_PENDING) {
		r = xnf_nat_new_fn(ctx, p);
		if (!r && p->trace &&
		    (p->nat & (XNF_PKT_NAT_SRC | XNF_PKT_NAT_DST)))
			xnf_trace_nat_rule_fn(p);
	}
	if (!r && (p->nat & (XNF_PKT_NAT_DST | XNF_PKT_NAT_INNER))) {
		r = xnf_nat_dst_fn(ctx, p);
		if (!r)
			r = xnf_nat_fc_fn(ctx, p);
	}
	if (r) {
		/* A refused translation, or the tables are missing: fail
		 * closed. */
		xnf_exception(p, XNF_ACT_DROP,
			      r > 0 && r < __XNF_R_MAX ? r : XNF_R_INTERNAL);
		return;
	}
	if (xnf_ct_confirmer == XNF_NF_NAT)
		xnf_ct_confirm(p);
}

#endif /* XNF_NAT_BPF_H */
