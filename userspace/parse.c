// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * parse.c - xnf_uparse(): the XDP entry program's parser (bpf/parse.bpf.h)
 * for frames an AF_XDP worker reads. Same fields, same limits, same edge
 * cases; the unit tests compare the two field by field (selftests/unit/
 * unf.c). An AF_XDP frame is one buffer, so what XDP checks against the
 * first buffer and against the whole frame are both checked against @len.
 */
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>

#include "unf.h"

/* As parse.bpf.h and common.bpf.h. */
#define UP_MAX_VLANS   2
#define UP_MAX_EXTHDRS 8
#define UP_IP_MF       0x2000
#define UP_IP_OFFSET   0x1fff
#define UP_IP6_OFFSET  0xfff8

static inline __u16 rd16(const __u8 *p)
{
	__u16 v;

	memcpy(&v, p, 2);
	return v; /* network order */
}

/* Ports (and TCP's flags) or ICMP type/code from a header that lies whole
 * within the IP payload [.., end). */
static void up_l4(struct xnf_pkt *p, const __u8 *data, __u32 off, __u32 end)
{
	__u32 need;

	switch (p->l4_proto) {
	case IPPROTO_TCP:
		need = 20;
		break;
	case IPPROTO_UDP:
		need = 8;
		break;
	case IPPROTO_SCTP:
		need = 12;
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		need = 4;
		break;
	default:
		return;
	}
	/* (XDP's bound on in-place reads, XNF_MAX_FRAME, is for the
	 * verifier: without extension headers the L4 header is never
	 * beyond 82 bytes.) */
	if (off + need > end)
		return;
	if (p->l4_proto == IPPROTO_ICMP || p->l4_proto == IPPROTO_ICMPV6) {
		p->icmp_type = data[off];
		p->icmp_code = data[off + 1];
		p->flags |= XNF_PKT_F_ICMP;
		return;
	}
	p->sport = rd16(data + off);
	p->dport = rd16(data + off + 2);
	p->flags |= XNF_PKT_F_PORTS;
	if (p->l4_proto == IPPROTO_TCP) { /* need covers byte 13 */
		p->tcp_flags = data[off + 13];
		p->flags |= XNF_PKT_F_TCP;
	}
}

static int up_ipv4(struct xnf_pkt *p, const __u8 *data, __u32 len, __u32 off)
{
	__u32 hlen, tot;
	__u16 frag;

	if (off + 20 > len)
		return -1;
	if ((data[off] >> 4) != 4 || (data[off] & 0xf) < 5)
		return -1;
	hlen = (data[off] & 0xf) * 4;
	tot = ntohs(rd16(data + off + 2));
	if (tot < hlen || off + tot > len)
		return -1;

	p->family = XNF_AF_INET;
	p->l4_proto = data[off + 9];
	p->l3_len = tot;
	p->l4_off = off + hlen;
	frag = ntohs(rd16(data + off + 6));
	if (frag & (UP_IP_MF | UP_IP_OFFSET)) {
		p->flags |= XNF_PKT_F_FRAG;
		if (frag & UP_IP_OFFSET) {
			p->flags |= XNF_PKT_F_LATER_FRAG;
			return 0;
		}
	}
	up_l4(p, data, off + hlen, off + tot);
	return 0;
}

static bool up_ipv6_is_ext(__u8 nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING ||
	       nh == IPPROTO_FRAGMENT || nh == IPPROTO_DSTOPTS ||
	       nh == IPPROTO_AH;
}

static int up_ipv6(struct xnf_pkt *p, const __u8 *data, __u32 len, __u32 off)
{
	__u32 end, nh_off, hlen;
	__u8 nexthdr;
	int i;

	if (off + 40 > len)
		return -1;
	if ((data[off] >> 4) != 6)
		return -1;
	end = off + 40 + ntohs(rd16(data + off + 4));
	if (end > len)
		return -1;

	p->family = XNF_AF_INET6;
	p->l3_len = end - off;
	nexthdr = data[off + 6];
	nh_off = off + 40;

	for (i = 0; i < UP_MAX_EXTHDRS && up_ipv6_is_ext(nexthdr); i++) {
		const __u8 *eh = data + nh_off;

		/* Every extension header is at least 8 bytes. */
		if (nh_off + 8 > end)
			return -1;
		if (nexthdr == IPPROTO_FRAGMENT) {
			p->flags |= XNF_PKT_F_FRAG;
			if (ntohs(rd16(eh + 2)) & UP_IP6_OFFSET) {
				p->flags |= XNF_PKT_F_LATER_FRAG;
				p->l4_proto = eh[0];
				p->l4_off = nh_off + 8;
				return 0;
			}
			hlen = 8;
		} else if (nexthdr == IPPROTO_AH) {
			hlen = (eh[1] + 2) * 4;
		} else {
			hlen = (eh[1] + 1) * 8;
		}
		nexthdr = eh[0];
		nh_off += hlen;
		if (nh_off > end)
			return -1;
	}
	p->l4_proto = nexthdr;
	p->l4_off = nh_off;
	/* More extension headers than XDP walks: the protocol is unknown
	 * (the firewall denies it); forwarding does not care. */
	if (up_ipv6_is_ext(nexthdr))
		p->flags |= XNF_PKT_F_L4_UNKNOWN;
	else
		up_l4(p, data, nh_off, end);
	return 0;
}

static int up_parse(const __u8 *data, __u32 len, struct xnf_pkt *p)
{
	__u32 off = ETH_HLEN;
	__u16 proto;
	int i;

	if (len < ETH_HLEN)
		return -1;
	proto = rd16(data + 12);
	for (i = 0; i < UP_MAX_VLANS; i++) {
		if (proto != htons(ETH_P_8021Q) && proto != htons(ETH_P_8021AD))
			break;
		if (off + 4 > len)
			return -1;
		proto = rd16(data + off + 2);
		off += 4;
		p->vlans++;
	}
	p->eth_proto = proto;
	p->l3_off = off;

	if (proto == htons(ETH_P_IP))
		return up_ipv4(p, data, len, off);
	if (proto == htons(ETH_P_IPV6))
		return up_ipv6(p, data, len, off);
	return 0;
}

void xnf_uparse(const __u8 *data, __u32 len, __u32 ifindex, __u32 queue,
		struct xnf_pkt *meta)
{
	memset(meta, 0, sizeof(*meta));
	meta->ingress_ifindex = ifindex;
	meta->rx_queue = queue;
	if (up_parse(data, len, meta) < 0) {
		meta->verdict = XNF_V_DROP;
		meta->reason = XNF_R_MALFORMED;
		meta->flags |= XNF_PKT_F_DONE;
	}
}
