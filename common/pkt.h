/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pkt.h - crafted frames for unit tests and micro benchmarks: Ethernet with
 * 0-2 VLAN tags, IPv4 (options, fragments) or IPv6 (extension headers),
 * UDP / TCP / ICMP / ICMPv6, or ARP; every checksum right, and the IP
 * total length covering the whole rest of the frame. Checksum checkers
 * recompute from scratch.
 */
#ifndef XNF_PKT_H
#define XNF_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define PKT_MAX 9216

struct pkt_spec {
	__u8 family;   /* 4, 6, or 0 for an ARP request */
	__u8 proto;    /* IPPROTO_*; 0 means UDP */
	__u8 ttl;      /* TTL / hop limit; 0 means 64 */
	bool ttl_zero; /* really send TTL 0 */
	__u8 nvlans;   /* 0..3; the outer tag of two is 802.1ad */
	__u16 vid[3];
	const char *src, *dst; /* default 192.0.2.1 -> 198.51.100.1, or
				 * 2001:db8:1::1 -> 2001:db8:2::1 */
	__u16 sport, dport;    /* default 1024 -> 7 */
	__u8 ip_opts;	/* IPv4 option bytes (NOPs + EOL), multiple of 4 */
	__u8 ihl;	/* IPv4 ihl override (broken headers), 0 = right */
	__u8 ip_csum;	/* IPv4 header checksum: enum pkt_csum */
	__u16 frag_off; /* IPv4: host-order frag_off (MF | offset/8);
				 * IPv6: offset/8 << 3 | M of the fragment header */
	__u8 next_ext;
	__u8 ext[4];	       /* IPv6 extension headers, in order */
	__u32 frame_len;       /* whole frame; 0 = 64 (the minimum, no FCS) */
	__u8 dmac[6], smac[6]; /* default 02:00:00:00:00:01 <- 02:00:00:00:00:02 */
};

/* What pkt_build() stores as the IPv4 header checksum. */
enum pkt_csum {
	PKT_CSUM_RIGHT = 0,
	PKT_CSUM_PLUS1,	  /* the right one + 1 */
	PKT_CSUM_ZERO,	  /* 0x0000 */
	PKT_CSUM_FFFF,	  /* 0xffff */
	PKT_CSUM_NO_OPTS, /* computed over the first 20 bytes only, as if
			   * the options were not part of the header */
};

/* Writes the frame into buf, returns its length or -1 if it doesn't fit. */
int pkt_build(void *buf, size_t cap, const struct pkt_spec *s);

/* Offsets of the L3 header (after VLAN tags). */
size_t pkt_l3_off(const void *frame);
/* IPv4 header checksum recomputed from scratch equals the one stored. */
bool pkt_ipv4_csum_ok(const void *frame, size_t len);
/* UDP / TCP / ICMP / ICMPv6 checksum of an unfragmented packet is right. */
bool pkt_l4_csum_ok(const void *frame, size_t len);
__u16 pkt_csum(const void *data, size_t len, __u32 sum);

/* An IPv6 extension header for pkt_build_ext6(). */
struct pkt_ext6 {
	__u8 type;	/* IPPROTO_HOPOPTS, _ROUTING, _FRAGMENT,
				 * _DSTOPTS or _AH */
	__u8 hdrlen;	/* the header's own length field: bytes are
				 * (hdrlen + 1) * 8, for AH (hdrlen + 2) * 4;
				 * unused for a fragment header (8 bytes) */
	__u16 frag_off; /* fragment: offset/8 << 3 | M, host order */
};

/* Bytes that header @e occupies. */
size_t pkt_ext6_len(const struct pkt_ext6 *e);
/* Like pkt_build() for IPv6 (s->family and s->ext[] are ignored), with the
 * @n headers of @ext, in order, between the IPv6 header and the L4 header.
 * Option headers are filled with PadN. The L4 header and its checksum are
 * written even behind a non-first fragment header, so that a parser that
 * reads ports there is caught. Returns the frame length or -1. */
int pkt_build_ext6(void *buf, size_t cap, const struct pkt_spec *s,
		   const struct pkt_ext6 *ext, int n);

/* Offset of the TTL (IPv4) or hop limit (IPv6) byte in a frame of @len
 * bytes, after its VLAN tags; 0 when the frame is neither or too short. */
size_t pkt_ttl_off(const void *frame, size_t len);
/* The IPv4 header checksum computed from scratch over ihl * 4 bytes, the
 * checksum field taken as zero; in network order, as stored. 0xffff (which
 * a computation from scratch never yields) when there is no whole header. */
__u16 pkt_ipv4_csum_calc(const void *frame, size_t len);
/* Stores pkt_ipv4_csum_calc() in the header, after a test edited it. */
void pkt_ipv4_csum_set(void *frame, size_t len);
/* What a router makes of an IP frame: destination and source MAC
 * rewritten, TTL / hop limit lowered by one and the IPv4 header checksum
 * recomputed from scratch. The frame expected from a correct forwarder. */
void pkt_routed(void *frame, size_t len, const __u8 dmac[6], const __u8 smac[6]);

#endif /* XNF_PKT_H */
