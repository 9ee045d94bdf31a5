/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * parse.bpf.h - the one packet parser of xnf, run by the entry program (and
 * the fused chain) before any NF. It fills struct xnf_pkt: offsets, family,
 * L4 protocol and ports (and TCP's flags) or ICMP type/code. It validates what forwarding
 * relies on, so that no NF has to: IPv4 version, ihl >= 5, total length
 * within the frame and not shorter than the header; IPv6 version and payload
 * length within the frame; IPv6 extension headers within the payload.
 */
#ifndef XNF_PARSE_BPF_H
#define XNF_PARSE_BPF_H

#include "common.bpf.h"

#define XNF_MAX_VLANS	2
#define XNF_MAX_EXTHDRS 8

/* Reads ports (TCP, UDP, SCTP: all start with sport, dport) or ICMP type
 * and code, but only from a header that lies whole within the IP payload:
 * a port rule must never match a packet whose ports could not be read.
 * With @copy the first bytes are copied out with bpf_xdp_load_bytes(), so
 * that @off needs no precise tracking (see xnf_parse_ipv6); otherwise they
 * are read in place, which needs the header in the first buffer. */
static __always_inline void xnf_parse_l4(struct xnf_pkt *p, struct xdp_md *ctx,
					 void *data, void *data_end, __u32 off,
					 __u32 end, int copy)
{
	__u8 buf[14], *l4;
	__u32 need, copied = 4;

	switch (p->l4_proto) {
	case IPPROTO_TCP:
		need = sizeof(struct tcphdr);
		break;
	case IPPROTO_UDP:
		need = sizeof(struct udphdr);
		break;
	case IPPROTO_SCTP:
		need = 12; /* common header: ports, verification tag, checksum */
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		need = 4;
		break;
	default:
		return;
	}
	if (off + need > end)
		return;
	if (copy) {
		/* TCP's flags are byte 13 */
		if (p->l4_proto == IPPROTO_TCP)
			copied = 14;
		if (bpf_xdp_load_bytes(ctx, off, buf, copied))
			return;
		l4 = buf;
	} else {
		if (off > XNF_MAX_FRAME)
			return;
		l4 = data + off;
		if ((void *)l4 + need > data_end)
			return;
	}
	if (p->l4_proto == IPPROTO_ICMP || p->l4_proto == IPPROTO_ICMPV6) {
		p->icmp_type = l4[0];
		p->icmp_code = l4[1];
		p->flags |= XNF_PKT_F_ICMP;
		return;
	}
	__builtin_memcpy(&p->sport, l4, 2);
	__builtin_memcpy(&p->dport, l4 + 2, 2);
	p->flags |= XNF_PKT_F_PORTS;
	if (p->l4_proto == IPPROTO_TCP) {
		/* need covers it; the verifier kept only the shortest need */
		if (!copy && (void *)l4 + 14 > data_end)
			return;
		p->tcp_flags = l4[13];
		p->flags |= XNF_PKT_F_TCP;
	}
}

static __always_inline int xnf_parse_ipv4(struct xnf_pkt *p, struct xdp_md *ctx,
					  void *data, void *data_end, __u32 off,
					  __u32 frame_len)
{
	struct iphdr *iph = data + off;
	__u32 hlen, tot;

	if ((void *)(iph + 1) > data_end)
		return -1;
	if (iph->version != 4 || iph->ihl < 5)
		return -1;
	hlen = iph->ihl * 4;
	tot = bpf_ntohs(iph->tot_len);
	if (tot < hlen || off + tot > frame_len)
		return -1;

	p->family = XNF_AF_INET;
	p->l4_proto = iph->protocol;
	p->l3_len = tot;
	p->l4_off = off + hlen;
	if (iph->frag_off & bpf_htons(XNF_IP_MF | XNF_IP_OFFSET)) {
		p->flags |= XNF_PKT_F_FRAG;
		if (iph->frag_off & bpf_htons(XNF_IP_OFFSET)) {
			p->flags |= XNF_PKT_F_LATER_FRAG;
			return 0;
		}
	}
	xnf_parse_l4(p, ctx, data, data_end, off + hlen, off + tot, 0);
	return 0;
}

static __always_inline int xnf_ipv6_is_ext(__u8 nexthdr)
{
	return nexthdr == IPPROTO_HOPOPTS || nexthdr == IPPROTO_ROUTING ||
	       nexthdr == IPPROTO_FRAGMENT || nexthdr == IPPROTO_DSTOPTS ||
	       nexthdr == IPPROTO_AH;
}

/*
 * Walks hop-by-hop, routing, fragment, destination-options and AH headers.
 * The length of each comes from that header itself: (hdrlen + 1) * 8 for
 * the option-style headers, (hdrlen + 2) * 4 for AH, and 8 for fragment.
 *
 * The headers are read with bpf_xdp_load_bytes() rather than through
 * packet pointers: the offset is then only a helper argument, which the
 * verifier need not track precisely, so the paths through different
 * sequences of header types prune into one instead of multiplying (a
 * packet-pointer walk cost 236,000 verified instructions and 4 s to load).
 * It also reads headers that lie past the first buffer of a multi-buffer
 * frame. Only IPv6 packets that carry extension headers pay for it.
 */
static __always_inline int xnf_parse_ipv6(struct xnf_pkt *p, struct xdp_md *ctx,
					  void *data, void *data_end, __u32 off,
					  __u32 frame_len)
{
	struct ipv6hdr *ip6h = data + off;
	__u32 end, nh_off;
	__u8 nexthdr;
	int i;

	if ((void *)(ip6h + 1) > data_end)
		return -1;
	if (ip6h->version != 6)
		return -1;
	end = off + sizeof(*ip6h) + bpf_ntohs(ip6h->payload_len);
	if (end > frame_len)
		return -1;

	p->family = XNF_AF_INET6;
	p->l3_len = end - off;
	nexthdr = ip6h->nexthdr;
	nh_off = off + sizeof(*ip6h);

	for (i = 0; i < XNF_MAX_EXTHDRS && xnf_ipv6_is_ext(nexthdr); i++) {
		/* Every extension header is at least 8 bytes; for a fragment
		 * header they are nexthdr, reserved, frag_off, id. */
		struct xnf_frag_hdr eh;
		__u32 len;

		if (nh_off + 8 > end ||
		    bpf_xdp_load_bytes(ctx, nh_off, &eh, sizeof(eh)))
			return -1;
		if (nexthdr == IPPROTO_FRAGMENT) {
			p->flags |= XNF_PKT_F_FRAG;
			if (eh.frag_off & bpf_htons(XNF_IP6_OFFSET)) {
				p->flags |= XNF_PKT_F_LATER_FRAG;
				p->l4_proto = eh.nexthdr;
				p->l4_off = nh_off + 8;
				return 0;
			}
			len = 8;
		} else if (nexthdr == IPPROTO_AH) {
			len = (eh.reserved + 2) * 4; /* payload len */
		} else {
			len = (eh.reserved + 1) * 8; /* hdr ext len */
		}
		nexthdr = eh.nexthdr;
		nh_off += len;
		if (nh_off > end)
			return -1;
	}
	p->l4_proto = nexthdr;
	p->l4_off = nh_off;
	/* More extension headers than we walk: forwarding does not care,
	 * but the protocol is unknown, which the firewall refuses. */
	if (xnf_ipv6_is_ext(nexthdr))
		p->flags |= XNF_PKT_F_L4_UNKNOWN;
	else
		xnf_parse_l4(p, ctx, data, data_end, nh_off, end, i > 0);
	return 0;
}

/* Returns 0 and fills p, or -1 for a malformed frame. Non-IP frames (ARP,
 * a third VLAN tag, ...) parse fine with family XNF_AF_NONE.
 *
 * The programs are multi-buffer aware (xdp.frags, needed for jumbo MTUs):
 * data..data_end is only the first buffer, so lengths are checked against
 * the whole frame (bpf_xdp_get_buff_len) while headers must lie in the
 * first buffer, which drivers guarantee for any sane header size.
 * @frame_len: that length, read once by the caller. */
static __always_inline int xnf_parse(struct xdp_md *ctx, struct xnf_pkt *p,
				     __u32 frame_len)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 off = sizeof(*eth);
	__be16 proto;
	int i;

	__builtin_memset(p, 0, sizeof(*p));
	p->ingress_ifindex = ctx->ingress_ifindex;
	p->len = frame_len;
	p->rx_queue = ctx->rx_queue_index;

	if ((void *)(eth + 1) > data_end)
		return -1;
	proto = eth->h_proto;
	for (i = 0; i < XNF_MAX_VLANS; i++) {
		struct xnf_vlan_hdr *vh = data + off;

		if (proto != bpf_htons(ETH_P_8021Q) &&
		    proto != bpf_htons(ETH_P_8021AD))
			break;
		if ((void *)(vh + 1) > data_end)
			return -1;
		proto = vh->proto;
		off += sizeof(*vh);
		p->vlans++;
	}
	p->eth_proto = proto;
	p->l3_off = off;

	if (proto == bpf_htons(ETH_P_IP))
		return xnf_parse_ipv4(p, ctx, data, data_end, off, frame_len);
	if (proto == bpf_htons(ETH_P_IPV6))
		return xnf_parse_ipv6(p, ctx, data, data_end, off, frame_len);
	return 0;
}

#endif /* XNF_PARSE_BPF_H */
