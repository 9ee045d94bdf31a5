/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fw_match.bpf.h - one firewall rule's match against one packet, as the
 * firewall's linear scan tests it (bpf/firewall.bpf.h) and as a trace
 * selects its packets (bpf/trace.bpf.h): one meaning of a match for both.
 */
#ifndef XNF_FW_MATCH_BPF_H
#define XNF_FW_MATCH_BPF_H

#include "common.bpf.h"
#include "xnf_fw.h"

/* What a rule matches a packet on, read once. */
struct xnf_fw_fields {
	__u32 src[4], dst[4]; /* network order; IPv4 in [0] */
	__u16 sport, dport;   /* host order, with ports */
	__u8 family;
	__u8 proto;
	__u8 ports; /* XNF_PKT_F_PORTS: sport/dport were read */
	__u8 ct_state;
	__u32 ifindex;
	__u8 tcp; /* XNF_PKT_F_TCP: tcp_flags were read */
	__u8 tcp_flags;
	__u8 icmp; /* XNF_PKT_F_ICMP: icmp_type/code were read */
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 pad[3];
};

/* The extra matches (XNF_FW_F_EXTRA) of a rule, @x, hold for @p, as nft means
 * them: `ct state` any state of the set, `tcp flags F` any of F, `tcp
 * flags F / M` the flags under M are F; a packet whose TCP or ICMP header
 * could not be read matches no tcp flags and no icmp type. Read from the
 * packet state, not copied into struct xnf_fw_fields: the fused chain's
 * stack has no room for them. The C reference is fw_extra_matches()
 * (lib/fw_compile.c). */
static __always_inline int xnf_fw_extra_hit(const struct xnf_fw_extra *x,
					    const struct xnf_pkt *p)
{
	__u16 f = x->flags;

	if ((f & XNF_FW_F_CT) && !(x->ct_states & (1u << (p->ct_state & 7))))
		return 0;
	if ((f & XNF_FW_F_IIF) && x->iif != p->ingress_ifindex)
		return 0;
	if ((f & XNF_FW_F_ICMP_TYPE) &&
	    (!(p->flags & XNF_PKT_F_ICMP) || p->icmp_type != x->icmp_type))
		return 0;
	if ((f & XNF_FW_F_ICMP_CODE) && p->icmp_code != x->icmp_code)
		return 0;
	if ((f & XNF_FW_F_TCP_FLAGS) &&
	    (!(p->flags & XNF_PKT_F_TCP) ||
	     (p->tcp_flags & x->tcp_mask) != x->tcp_flags))
		return 0;
	if ((f & XNF_FW_F_TCP_ANY) &&
	    (!(p->flags & XNF_PKT_F_TCP) || !(p->tcp_flags & x->tcp_mask)))
		return 0;
	return 1;
}

/* Whether the first @len (0..32) bits of two network-order words agree. */
static __always_inline int xnf_fw_word_match(__u32 a, __u32 pfx, __u32 len)
{
	__u32 mask = bpf_htonl((__u32)(0xffffffff00000000ULL >> len));

	return !((a ^ pfx) & mask);
}

/* Whether address @a of @family lies in the rule's prefix @pfx/@len (the
 * rule's address, 4-byte aligned in struct xnf_fw_rule). */
static __always_inline int xnf_fw_pfx_match(const __u8 *pfx, __u32 len,
					    const __u32 *a, __u8 family)
{
	const __u32 *w = (const void *)pfx;
	int i;

	if (family == XNF_AF_INET)
		return xnf_fw_word_match(a[0], w[0], len);
#pragma unroll
	for (i = 0; i < 4; i++) {
		if (len <= 32 * i)
			return 1;
		if (!xnf_fw_word_match(a[i], w[i],
				       len - 32 * i > 32 ? 32 : len - 32 * i))
			return 0;
	}
	return 1;
}

/* The five fields of one rule (the linear scan's test, a trace's match):
 * a port match needs ports. */
static __always_inline int xnf_fw_rule_hit(const struct xnf_fw_rule *r,
					   const struct xnf_fw_fields *k)
{
	__u16 f = r->flags;

	if (f & (XNF_FW_F_SRC | XNF_FW_F_DST)) {
		if (r->family != k->family)
			return 0;
		if ((f & XNF_FW_F_SRC) &&
		    !xnf_fw_pfx_match(r->src, r->src_len, k->src, k->family))
			return 0;
		if ((f & XNF_FW_F_DST) &&
		    !xnf_fw_pfx_match(r->dst, r->dst_len, k->dst, k->family))
			return 0;
	}
	if ((f & XNF_FW_F_PROTO) && r->proto != k->proto)
		return 0;
	if ((f & XNF_FW_F_SPORT) &&
	    (!k->ports || k->sport < r->sport_lo || k->sport > r->sport_hi))
		return 0;
	if ((f & XNF_FW_F_DPORT) &&
	    (!k->ports || k->dport < r->dport_lo || k->dport > r->dport_hi))
		return 0;
	return 1;
}

#endif /* XNF_FW_MATCH_BPF_H */
