// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The benchmark's minimal parse-rewrite-redirect forwarder (tools/bench,
 * dataplane "minfwd"): what the 3-NF chain is measured against in the
 * issue 38 test-bed targets (bench.py --targets). It does the work any
 * router does per packet and nothing more: parse Ethernet and IPv4 or
 * IPv6, decrement the TTL or hop limit (IPv4: incremental checksum update,
 * RFC 1624), write both MACs (the next hop's and the egress's, from
 * a one-entry array the harness fills), redirect through a one-entry
 * devmap. No route lookup, no counters. Anything else (a VLAN tag, ARP, a TTL
 * at most 1, a truncated header) goes to the kernel, unchanged, with
 * XDP_PASS.
 *
 * The harness loads it with bpftool, writes the egress ifindex into
 * tx_port[0] and the two MACs into macs[0] (dst then src, 12 bytes).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct minfwd_macs {
	__u8 dst[ETH_ALEN]; /* the next hop's */
	__u8 src[ETH_ALEN]; /* the egress device's */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct minfwd_macs);
} macs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

/* TTL - 1 with the checksum updated incrementally (RFC 1624, eqn. 3:
 * HC' = ~(~HC + ~m + m')): the 16-bit word holding the TTL (in its high
 * byte) goes down by 0x0100, so the one's complement sum of the header
 * goes down by as much and its complement, the checksum, up; the carry
 * out of 16 bits is folded back in. */
static __always_inline void ip_decrease_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xffff));
	iph->ttl--;
}

SEC("xdp")
int xnf_minfwd(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct minfwd_macs *m;
	struct ipv6hdr *ip6h;
	struct iphdr *iph;
	__u32 key = 0;

	/* An array's slot 0 always exists; the check is for the verifier. */
	m = bpf_map_lookup_elem(&macs, &key);
	if (!m || (void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		iph = (void *)(eth + 1);
		if ((void *)(iph + 1) > data_end || iph->ttl <= 1)
			return XDP_PASS;
		ip_decrease_ttl(iph);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		ip6h = (void *)(eth + 1);
		if ((void *)(ip6h + 1) > data_end || ip6h->hop_limit <= 1)
			return XDP_PASS;
		ip6h->hop_limit--;
	} else {
		return XDP_PASS;
	}
	__builtin_memcpy(eth->h_dest, m->dst, ETH_ALEN);
	__builtin_memcpy(eth->h_source, m->src, ETH_ALEN);
	return bpf_redirect_map(&tx_port, 0, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
