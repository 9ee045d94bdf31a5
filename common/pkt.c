// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Crafted frames; see pkt.h. */
#include <arpa/inet.h>
#include <string.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#include "pkt.h"

static const __u8 def_dmac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const __u8 def_smac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const __u8 zero_mac[6];

static __u32 csum_add(const void *data, size_t len, __u32 sum)
{
	const __u8 *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	if (len & 1)
		sum += p[len - 1] << 8;
	return sum;
}

/* Internet checksum (RFC 1071) in network order, of data plus a partial
 * host-order sum. */
__u16 pkt_csum(const void *data, size_t len, __u32 sum)
{
	sum = csum_add(data, len, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((__u16)~sum);
}

static __u32 pseudo_sum(int family, const void *l3, __u8 proto, __u32 l4len)
{
	__u32 sum = proto + l4len;

	if (family == 4) {
		const struct iphdr *iph = l3;

		sum = csum_add(&iph->saddr, 8, sum);
	} else {
		const struct ipv6hdr *ip6h = l3;

		sum = csum_add(&ip6h->saddr, 32, sum);
	}
	return sum;
}

static void l4_csum(int family, void *l3, __u8 proto, __u8 *l4, __u32 l4len)
{
	__u16 *check;
	__u32 sum = 0;

	switch (proto) {
	case IPPROTO_UDP:
		check = &((struct udphdr *)l4)->check;
		sum = pseudo_sum(family, l3, proto, l4len);
		break;
	case IPPROTO_TCP:
		check = &((struct tcphdr *)l4)->check;
		sum = pseudo_sum(family, l3, proto, l4len);
		break;
	case IPPROTO_ICMP:
		check = (__u16 *)(l4 + 2);
		break;
	case IPPROTO_ICMPV6:
		check = (__u16 *)(l4 + 2);
		sum = pseudo_sum(family, l3, proto, l4len);
		break;
	default:
		return;
	}
	*check = 0;
	*check = pkt_csum(l4, l4len, sum);
	if (proto == IPPROTO_UDP && !*check)
		*check = 0xffff;
}

static size_t l4_hdr_len(__u8 proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return sizeof(struct tcphdr);
	case IPPROTO_UDP:
		return sizeof(struct udphdr);
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return 8;
	default:
		return 0;
	}
}

static void put_l4(__u8 *l4, __u8 proto, const struct pkt_spec *s, __u32 l4len)
{
	__u16 sport = s->sport ?: 1024, dport = s->dport ?: 7;

	switch (proto) {
	case IPPROTO_TCP: {
		struct tcphdr *th = (void *)l4;

		th->source = htons(sport);
		th->dest = htons(dport);
		th->seq = htonl(1);
		th->doff = 5;
		th->syn = 1;
		th->window = htons(65535);
		break;
	}
	case IPPROTO_UDP: {
		struct udphdr *uh = (void *)l4;

		uh->source = htons(sport);
		uh->dest = htons(dport);
		uh->len = htons(l4len);
		break;
	}
	case IPPROTO_ICMP:
		l4[0] = 8; /* echo request */
		break;
	case IPPROTO_ICMPV6:
		l4[0] = 128; /* echo request */
		break;
	}
}

int pkt_build(void *buf, size_t cap, const struct pkt_spec *s)
{
	size_t len = s->frame_len ?: 64, off = 0, hdrs, i;
	__u8 *p = buf, proto = s->proto ?: IPPROTO_UDP;
	__u16 ethertype;
	struct ethhdr *eth;

	if (len > cap || len < ETH_HLEN)
		return -1;
	memset(buf, 0, len);
	eth = buf;
	memcpy(eth->h_dest, memcmp(s->dmac, zero_mac, 6) ? s->dmac : def_dmac, 6);
	memcpy(eth->h_source, memcmp(s->smac, zero_mac, 6) ? s->smac : def_smac,
	       6);
	off = 12;
	for (i = 0; i < s->nvlans; i++) {
		__u16 tpid = (s->nvlans > 1 && i == 0) ? ETH_P_8021AD :
							 ETH_P_8021Q;

		*(__u16 *)(p + off) = htons(tpid);
		*(__u16 *)(p + off + 2) = htons(s->vid[i] ?: 100 + i);
		off += 4;
	}
	ethertype = s->family == 4 ? ETH_P_IP :
		    s->family == 6 ? ETH_P_IPV6 :
				     ETH_P_ARP;
	*(__u16 *)(p + off) = htons(ethertype);
	off += 2;

	if (s->family == 4) {
		struct iphdr *iph = (void *)(p + off);
		size_t ihl = sizeof(*iph) + s->ip_opts;
		bool later_frag = s->frag_off & 0x1fff;

		hdrs = off + ihl + (later_frag ? 0 : l4_hdr_len(proto));
		if (hdrs > len)
			return -1;
		iph->version = 4;
		iph->ihl = s->ihl ?: ihl / 4;
		iph->tot_len = htons(len - off);
		iph->id = htons(0x1234);
		iph->frag_off = htons(s->frag_off);
		iph->ttl = s->ttl_zero ? 0 : (s->ttl ?: 64);
		iph->protocol = proto;
		inet_pton(AF_INET, s->src ?: "192.0.2.1", &iph->saddr);
		inet_pton(AF_INET, s->dst ?: "198.51.100.1", &iph->daddr);
		memset(p + off + sizeof(*iph), 1 /* NOP */, s->ip_opts);
		if (s->ip_opts)
			p[off + ihl - 1] = 0; /* EOL */
		if (!later_frag) {
			put_l4(p + off + ihl, proto, s, len - off - ihl);
			l4_csum(4, iph, proto, p + off + ihl, len - off - ihl);
		}
		iph->check = pkt_csum(iph, ihl, 0);
		switch (s->ip_csum) {
		case PKT_CSUM_PLUS1:
			iph->check = htons(ntohs(iph->check) + 1);
			break;
		case PKT_CSUM_ZERO:
			iph->check = 0;
			break;
		case PKT_CSUM_FFFF:
			iph->check = 0xffff;
			break;
		case PKT_CSUM_NO_OPTS:
			iph->check = 0;
			iph->check = pkt_csum(iph, sizeof(*iph), 0);
			break;
		}
	} else if (s->family == 6) {
		struct ipv6hdr *ip6h = (void *)(p + off);
		size_t l3 = off, nh = off + sizeof(*ip6h);
		bool later_frag = false;
		__u8 *prev = &ip6h->nexthdr;

		if (nh > len)
			return -1;
		ip6h->version = 6;
		ip6h->payload_len = htons(len - off - sizeof(*ip6h));
		ip6h->hop_limit = s->ttl_zero ? 0 : (s->ttl ?: 64);
		inet_pton(AF_INET6, s->src ?: "2001:db8:1::1", &ip6h->saddr);
		inet_pton(AF_INET6, s->dst ?: "2001:db8:2::1", &ip6h->daddr);
		for (i = 0; i < s->next_ext; i++) {
			__u8 t = s->ext[i], *h = p + nh;
			size_t hl = t == IPPROTO_FRAGMENT ? 8 :
				    t == IPPROTO_ROUTING  ? 24 :
							    16;

			if (nh + hl > len)
				return -1;
			*prev = t;
			prev = h;
			if (t == IPPROTO_FRAGMENT) {
				*(__u16 *)(h + 2) = htons(s->frag_off);
				*(__u32 *)(h + 4) = htonl(0xabcd);
				later_frag = s->frag_off & 0xfff8;
			} else if (t == IPPROTO_ROUTING) {
				h[1] = 2; /* (2 + 1) * 8 = 24 bytes */
				h[2] = 0; /* type 0 (deprecated; parsed only) */
				h[3] = 0; /* segments left */
			} else {
				h[1] = 1; /* (1 + 1) * 8 = 16 bytes */
				h[2] = 1; /* PadN option filling the rest */
				h[3] = 12;
			}
			nh += hl;
		}
		*prev = proto;
		if (nh + (later_frag ? 0 : l4_hdr_len(proto)) > len)
			return -1;
		if (!later_frag) {
			put_l4(p + nh, proto, s, len - nh);
			l4_csum(6, p + l3, proto, p + nh, len - nh);
		}
	} else {
		__u8 *arp = p + off;

		if (off + 28 > len)
			return -1;
		arp[1] = 1;    /* Ethernet */
		arp[2] = 0x08; /* IPv4 */
		arp[4] = 6;
		arp[5] = 4;
		arp[7] = 1; /* request */
		memcpy(arp + 8, eth->h_source, 6);
		inet_pton(AF_INET, s->src ?: "192.0.2.1", arp + 14);
		inet_pton(AF_INET, s->dst ?: "198.51.100.1", arp + 24);
	}
	return (int)len;
}

size_t pkt_l3_off(const void *frame)
{
	const __u8 *p = frame;
	size_t off = 12;

	while (p[off] == 0x81 || (p[off] == 0x88 && p[off + 1] == 0xa8))
		off += 4;
	return off + 2;
}

bool pkt_ipv4_csum_ok(const void *frame, size_t len)
{
	const __u8 *p = frame;
	size_t off = pkt_l3_off(frame), ihl = (p[off] & 0xf) * 4;

	return off + ihl <= len && pkt_csum(p + off, ihl, 0) == 0;
}

bool pkt_l4_csum_ok(const void *frame, size_t len)
{
	const __u8 *p = frame;
	size_t off = pkt_l3_off(frame), l4;
	__u8 proto;
	__u32 sum = 0;
	int family;

	if ((p[off] >> 4) == 4) {
		family = 4;
		l4 = off + (p[off] & 0xf) * 4;
		proto = p[off + 9];
	} else {
		family = 6;
		l4 = off + 40;
		proto = p[off + 6];
	}
	if (l4 > len)
		return false;
	if (proto != IPPROTO_ICMP)
		sum = pseudo_sum(family, p + off, proto, len - l4);
	return pkt_csum(p + l4, len - l4, sum) == 0;
}

size_t pkt_ext6_len(const struct pkt_ext6 *e)
{
	switch (e->type) {
	case IPPROTO_FRAGMENT:
		return 8;
	case IPPROTO_AH:
		return ((size_t)e->hdrlen + 2) * 4;
	default:
		return ((size_t)e->hdrlen + 1) * 8;
	}
}

int pkt_build_ext6(void *buf, size_t cap, const struct pkt_spec *s,
		   const struct pkt_ext6 *ext, int n)
{
	struct pkt_spec base = *s;
	size_t len = s->frame_len ?: 64, extlen = 0, l3, nh;
	struct ipv6hdr *ip6h;
	__u8 *p = buf, *prev, proto;
	int blen, i;

	for (i = 0; i < n; i++)
		extlen += pkt_ext6_len(&ext[i]);
	if (extlen >= len || len > cap)
		return -1;
	/* The frame without extension headers, then moved apart: the L4
	 * checksum stays right, its pseudo header does not cover them. */
	base.family = 6;
	base.next_ext = 0;
	base.frame_len = len - extlen;
	blen = pkt_build(buf, cap, &base);
	if (blen < 0)
		return -1;
	l3 = pkt_l3_off(buf);
	nh = l3 + sizeof(*ip6h);
	memmove(p + nh + extlen, p + nh, blen - nh);
	ip6h = (void *)(p + l3);
	proto = ip6h->nexthdr;
	ip6h->payload_len = htons(len - nh);
	prev = &ip6h->nexthdr;
	for (i = 0; i < n; i++) {
		size_t hl = pkt_ext6_len(&ext[i]);
		__u8 *h = p + nh;

		memset(h, 0, hl);
		*prev = ext[i].type;
		prev = h;
		switch (ext[i].type) {
		case IPPROTO_FRAGMENT:
			*(__u16 *)(h + 2) = htons(ext[i].frag_off);
			*(__u32 *)(h + 4) = htonl(0xabcd);
			break;
		case IPPROTO_AH:
			h[1] = ext[i].hdrlen;
			*(__u32 *)(h + 4) = htonl(0x100); /* SPI */
			*(__u32 *)(h + 8) = htonl(1);	  /* sequence */
			break;
		case IPPROTO_ROUTING:
			h[1] = ext[i].hdrlen;
			h[2] = 4; /* segment routing */
			break;
		default:
			h[1] = ext[i].hdrlen;
			if (hl > 2) {
				h[2] = 1; /* PadN */
				h[3] = hl - 4;
			}
			break;
		}
		nh += hl;
	}
	*prev = proto;
	return (int)len;
}

/* L3 offset and ethertype of a frame of @len bytes, 0 if it has none. */
static size_t pkt_l3(const void *frame, size_t len, __u16 *proto)
{
	const __u8 *p = frame;
	size_t off = 12;

	if (len < ETH_HLEN)
		return 0;
	while (off + 6 <= len &&
	       (p[off] == 0x81 || (p[off] == 0x88 && p[off + 1] == 0xa8)))
		off += 4;
	*proto = p[off] << 8 | p[off + 1];
	return off + 2;
}

size_t pkt_ttl_off(const void *frame, size_t len)
{
	__u16 proto;
	size_t off = pkt_l3(frame, len, &proto);

	if (!off)
		return 0;
	if (proto == ETH_P_IP && off + sizeof(struct iphdr) <= len)
		return off + offsetof(struct iphdr, ttl);
	if (proto == ETH_P_IPV6 && off + sizeof(struct ipv6hdr) <= len)
		return off + offsetof(struct ipv6hdr, hop_limit);
	return 0;
}

__u16 pkt_ipv4_csum_calc(const void *frame, size_t len)
{
	const __u8 *p = frame;
	size_t off, ihl;
	__u8 hdr[60];
	__u16 proto;

	off = pkt_l3(frame, len, &proto);
	if (!off || proto != ETH_P_IP || off + sizeof(struct iphdr) > len)
		return 0xffff;
	ihl = (p[off] & 0xf) * 4;
	if (ihl < sizeof(struct iphdr) || off + ihl > len)
		return 0xffff;
	memcpy(hdr, p + off, ihl);
	hdr[offsetof(struct iphdr, check)] = 0;
	hdr[offsetof(struct iphdr, check) + 1] = 0;
	return pkt_csum(hdr, ihl, 0);
}

void pkt_ipv4_csum_set(void *frame, size_t len)
{
	__u16 check = pkt_ipv4_csum_calc(frame, len), proto;
	size_t off = pkt_l3(frame, len, &proto);

	if (check != 0xffff)
		memcpy((__u8 *)frame + off + offsetof(struct iphdr, check),
		       &check, 2);
}

void pkt_routed(void *frame, size_t len, const __u8 dmac[6], const __u8 smac[6])
{
	size_t ttl = pkt_ttl_off(frame, len);
	__u8 *p = frame;

	memcpy(p, dmac, ETH_ALEN);
	memcpy(p + ETH_ALEN, smac, ETH_ALEN);
	if (!ttl)
		return;
	p[ttl]--;
	pkt_ipv4_csum_set(frame, len);
}
