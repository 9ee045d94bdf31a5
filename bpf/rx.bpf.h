/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rx.bpf.h - l3fwd's receive checks on the packet: the rules of
 * include/uapi/xnf_rx.h (shared with the AF_XDP workers' l3fwd) applied to
 * an untagged IPv4 or IPv6 header in the first buffer. No maps, so the
 * bench harness (bpf/bench.bpf.c) times exactly what l3fwd runs.
 */
#ifndef XNF_RX_BPF_H
#define XNF_RX_BPF_H

#include "common.bpf.h"
#include "xnf_rx.h"

#define XNF_IPV4_OPT_WORDS 10 /* ihl 15: 40 bytes of options */

/*
 * RFC 1812 5.2.2: a router verifies the header checksum and silently
 * discards a packet whose checksum is wrong; Linux does so in ip_rcv_core
 * (counted as InCsumErrors and InHdrErrors). Verified before anything
 * else, and in particular before the TTL is lowered: the incremental
 * update (RFC 1624) would carry a wrong checksum on as a wrong one.
 *
 * The fixed 20 bytes are five 32-bit loads (the parser checked iph + 1
 * against data_end). Options, up to 40 bytes, one word per round of a
 * loop unrolled at compile time, so every load has a constant offset
 * checked against data_end just before it. Written so on purpose: a loop
 * with an early exit is not unrolled, and clang turns the rolled one into
 * a trip count computed from data_end, which the verifier refuses; the
 * options' words beyond the first buffer (no driver puts them there) set
 * a flag instead of leaving the loop. A header without options pays for
 * one test; one with 40 bytes of options for ten loads (bpf_xdp_load_bytes
 * into a buffer measured 40 ns more).
 * Returns an XNF_RX_* class, or -1 if the options lie beyond the first
 * buffer.
 */
static __always_inline int xnf_rx_ipv4(const struct iphdr *iph, void *data_end)
{
	const __u32 *w = (const __u32 *)iph;
	__u64 sum = (__u64)w[0] + w[1] + w[2] + w[3] + w[4];
	__u32 opts = iph->ihl - 5; /* the parser checked 5 <= ihl */
	int i, short_hdr = 0;

#pragma unroll
	for (i = 0; i < XNF_IPV4_OPT_WORDS; i++) {
		if (i < opts) {
			if ((void *)&w[5 + i + 1] > data_end)
				short_hdr = 1;
			else
				sum += w[5 + i];
		}
	}
	if (short_hdr)
		return -1;
	if (!xnf_rx_csum_ok(sum))
		return XNF_RX_BAD_CSUM;
	return xnf_rx_class4(bpf_ntohl(iph->saddr), bpf_ntohl(iph->daddr));
}

static __always_inline int xnf_rx_ipv6(const struct ipv6hdr *ip6h)
{
	return xnf_rx_class6(ip6h->saddr.in6_u.u6_addr8,
			     ip6h->daddr.in6_u.u6_addr8);
}

#endif /* XNF_RX_BPF_H */
