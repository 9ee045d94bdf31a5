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
	__u8 family;            /* 4, 6, or 0 for an ARP request */
	__u8 proto;             /* IPPROTO_*; 0 means UDP */
	__u8 ttl;               /* TTL / hop limit; 0 means 64 */
	bool ttl_zero;          /* really send TTL 0 */
	__u8 nvlans;            /* 0..3; the outer tag of two is 802.1ad */
	__u16 vid[3];
	const char *src, *dst;  /* default 192.0.2.1 -> 198.51.100.1, or
				 * 2001:db8:1::1 -> 2001:db8:2::1 */
	__u16 sport, dport;     /* default 1024 -> 7 */
	__u8 ip_opts;           /* IPv4 option bytes (NOPs + EOL), multiple of 4 */
	__u8 ihl;               /* IPv4 ihl override (broken headers), 0 = right */
	__u16 frag_off;         /* IPv4: host-order frag_off (MF | offset/8);
				 * IPv6: offset/8 << 3 | M of the fragment header */
	__u8 next_ext;
	__u8 ext[4];            /* IPv6 extension headers, in order */
	__u32 frame_len;        /* whole frame; 0 = 64 (the minimum, no FCS) */
	__u8 dmac[6], smac[6];  /* default 02:00:00:00:00:01 <- 02:00:00:00:00:02 */
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

#endif /* XNF_PKT_H */
