/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * nat_xlat.bpf.h - rewriting a translated packet's addresses and ports
 * with incremental checksums (RFC 1624): the destination by the nat NF
 * (nat.bpf.h), the source by xnf_finish() (chain.bpf.h) when the packet
 * leaves forwarded, and the header an ICMP error quotes. What to write
 * waits in xnf_ct_pending[0].xlat and .inner (include/uapi/xnf_ct.h).
 * Which checksums change follows Linux's nf_nat_ipv4_manip_pkt,
 * nf_nat_ipv6_manip_pkt and the l4proto manips of nf_nat_proto.c.
 */
#ifndef XNF_NAT_XLAT_BPF_H
#define XNF_NAT_XLAT_BPF_H

#include "common.bpf.h"
#include "conntrack_maps.bpf.h"

/* xnf_nat_ep_fn()'s @info: family (bits 0-7), L4 protocol (8-15), and: */
#define XNF_NAT_EP_DST	  (1u << 16) /* the destination, else the source */
#define XNF_NAT_EP_INNER  (1u << 17) /* the packet an ICMP error quotes */
/* An ICMP error's own header: its bytes 4-7 are no identifier. */
#define XNF_NAT_EP_NOPORT (1u << 18)

/* How far into the frame a header to rewrite may start: the headers of a
 * packet and of the one an ICMP error quotes are in the first buffer. */
#define XNF_NAT_MAX_OFF 512

/* A 64-bit one's complement sum folded into 16 bits. */
static __always_inline __u32 xnf_csum_fold(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (s & 0xffff) + (s >> 16);
}

/* @len bytes of the frame at @off, or NULL when they are not all in the
 * first buffer. */
static __always_inline void *xnf_nat_ptr(struct xdp_md *ctx, __u32 off,
					 const __u32 len)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (off > XNF_NAT_MAX_OFF || data + off + len > data_end)
		return NULL;
	return data + off;
}

/* Updates the checksum field at @off for covered bytes that changed by
 * @diff (a sum of ~old + new words). @udp: a UDP checksum, whose 0 means
 * "none" and stays, and which is never 0 otherwise (RFC 768). Returns
 * what the field's own change adds to an enclosing checksum. */
static __always_inline __u64 xnf_nat_csum_at(struct xdp_md *ctx, __u32 off,
					     __u64 diff, int udp)
{
	__u16 *c = xnf_nat_ptr(ctx, off, 2), old, new;

	if (!c)
		return 0;
	old = *c;
	if (udp && !old)
		return 0;
	new = ~xnf_csum_fold((__u64)(__u16)~old + diff);
	if (udp && !new)
		new = 0xffff;
	*c = new;
	return (__u16)~old + (__u32) new;
}

/* Makes the @len-byte address at @off @new. Returns the one's
 * complement sum of the change (0 when there is none), or -1. */
static __always_inline __s64 xnf_nat_addr(struct xdp_md *ctx, __u32 off,
					  const __u8 *new, const __u32 len)
{
	__u32 *a = xnf_nat_ptr(ctx, off, len), i, same = 1;
	const __u32 *n = (const __u32 *)new;
	__s64 d;

	if (!a)
		return -1;
#pragma unroll
	for (i = 0; i < len / 4; i++)
		if (a[i] != n[i])
			same = 0;
	if (same)
		return 0;
	d = bpf_csum_diff(a, len, (__be32 *)n, len, 0);
#pragma unroll
	for (i = 0; i < len / 4; i++)
		a[i] = n[i];
	return (__u32)d;
}

/*
 * Rewrites the source (or with XNF_NAT_EP_DST the destination) endpoint of
 * the IP packet whose header is at offset @offs & 0xffff, its L4 header at
 * @offs >> 16, to @t's a side (source) or b side (destination): address,
 * and port or ICMP echo identifier; updates the IPv4 header checksum and
 * the L4 checksum (with the addresses of its pseudo-header: TCP, UDP,
 * ICMPv6). A quoted TCP header's checksum changes only when the quote
 * holds the whole header (Linux's tcp_manip_pkt: 8 bytes are all an error
 * must quote). Returns the one's complement sum of what changed in the
 * bytes (an ICMP error's checksum covers the quote), or -1.
 */
static __always_inline int xnf_nat_ep(struct xdp_md *ctx, __u32 offs,
				      __u32 info, const struct xnf_ct_key *t)
{
	__u32 l3 = offs & 0xffff, l4 = offs >> 16, coff = 0, poff;
	__u8 proto = (info >> 8) & 0xff;
	int dst = !!(info & XNF_NAT_EP_DST), pseudo = 1, udp = 0;
	__be16 *pp, nport;
	__u64 l4d = 0, all = 0;
	__s64 ad;

	if (!t)
		return -1;
	if ((info & 0xff) == XNF_AF_INET) {
		ad = xnf_nat_addr(ctx, l3 + 12 + (dst ? 4 : 0),
				  dst ? t->b_addr : t->a_addr, 4);
		if (ad > 0)
			all += xnf_nat_csum_at(ctx, l3 + 10, ad, 0);
	} else {
		ad = xnf_nat_addr(ctx, l3 + 8 + (dst ? 16 : 0),
				  dst ? t->b_addr : t->a_addr, 16);
	}
	if (ad < 0)
		return -1;
	all += ad;

	switch (proto) {
	case IPPROTO_TCP:
		coff = l4 + 16;
		if ((info & XNF_NAT_EP_INNER) &&
		    bpf_xdp_get_buff_len(ctx) < l4 + 20)
			coff = 0;
		break;
	case IPPROTO_UDP:
		coff = l4 + 6;
		udp = 1;
		break;
	case IPPROTO_ICMP:
		pseudo = 0;
		/* fallthrough */
	case IPPROTO_ICMPV6:
		coff = l4 + 2;
		break;
	default:
		return xnf_csum_fold(all);
	}
	if (pseudo)
		l4d = ad;
	if (!(info & XNF_NAT_EP_NOPORT)) {
		/* TCP and UDP ports at 0 and 2, an echo's identifier at 4. */
		poff = l4 + (coff == l4 + 2 ? 4 : dst ? 2 : 0);
		nport = dst ? t->b_port : t->a_port;
		pp = xnf_nat_ptr(ctx, poff, 2);
		if (!pp)
			return -1;
		if (*pp != nport) {
			l4d += (__u16) ~*pp + (__u32)nport;
			all += (__u16) ~*pp + (__u32)nport;
			*pp = nport;
		}
	}
	if (coff && l4d)
		all += xnf_nat_csum_at(ctx, coff, l4d, udp);
	return xnf_csum_fold(all);
}

__noinline int xnf_nat_ep_fn(struct xdp_md *ctx, __u32 offs, __u32 info,
			     const struct xnf_ct_key *t)
{
	return xnf_nat_ep(ctx, offs, info, t);
}

/* The source of a forwarded packet of a translated connection
 * (XNF_PKT_NAT_SRC): nft's postrouting, in xnf_finish(). Returns 0, or -1
 * when the frame or the tables fail. */
__noinline int xnf_nat_src_fn(struct xdp_md *ctx, struct xnf_pkt *p)
{
	struct xnf_ct_pending *pe;
	__u32 zero = 0, info;

	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!p || !pe)
		return -1;
	info = p->family | p->l4_proto << 8 |
	       (p->nat & XNF_PKT_NAT_INNER ? XNF_NAT_EP_NOPORT : 0);
	/* Not through xnf_nat_ep_fn(): one frame less on the stack of a
	 * fused chain (the verifier adds up the frames of every call it
	 * can see, dead or not). */
	return xnf_nat_ep(ctx, p->l3_off | (__u32)p->l4_off << 16, info,
			  &pe->xlat) < 0 ?
		       -1 :
		       0;
}

#endif /* XNF_NAT_XLAT_BPF_H */
