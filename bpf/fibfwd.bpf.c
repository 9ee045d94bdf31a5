// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The benchmark's minimal FIB forwarder (tools/bench, dataplane "fibfwd"):
 * what l3fwd in fib mode is measured against, in the manner of the
 * kernel's samples/bpf/xdp_fwd. Parse Ethernet and IPv4 or IPv6, ask the
 * kernel's FIB and neighbour table (bpf_fib_lookup), decrement the TTL or
 * hop limit (IPv4: incremental checksum update, RFC 1624), write both
 * MACs, redirect through a devmap keyed by ifindex. Anything else (no
 * route, no neighbour, TTL at most 1, a VLAN tag, ARP, an egress device
 * that is not in the devmap) goes to the kernel, unchanged, with
 * XDP_PASS. No counters, no configuration.
 *
 * The harness loads it with bpftool and writes the egress port into
 * tx_ports (key and value: its ifindex).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define AF_INET	 2
#define AF_INET6 10

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} tx_ports SEC(".maps");

/* TTL - 1 with the checksum adjusted: the 16-bit word holding the TTL
 * (TTL in its high byte) goes down by 0x0100. */
static __always_inline void ip_decrease_ttl(struct iphdr *iph)
{
	__u32 check = iph->check;

	check += bpf_htons(0x0100);
	iph->check = (__u16)(check + (check >= 0xffff));
	iph->ttl--;
}

SEC("xdp")
int xnf_fibfwd(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fib = {};
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6h;
	struct iphdr *iph;
	int rc;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	/* Both point at the L3 header; fib.family says which one is valid.
	 * The verifier does not tie fib.family (on the stack) to the check
	 * made here, so the one written after the lookup is checked again. */
	iph = (void *)(eth + 1);
	ip6h = (void *)(eth + 1);
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		if ((void *)(iph + 1) > data_end || iph->ttl <= 1)
			return XDP_PASS;
		fib.family = AF_INET;
		fib.tos = iph->tos;
		fib.l4_protocol = iph->protocol;
		fib.tot_len = bpf_ntohs(iph->tot_len);
		fib.ipv4_src = iph->saddr;
		fib.ipv4_dst = iph->daddr;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		if ((void *)(ip6h + 1) > data_end || ip6h->hop_limit <= 1)
			return XDP_PASS;
		fib.family = AF_INET6;
		fib.flowinfo = *(__be32 *)ip6h & bpf_htonl(0x0fffffff);
		fib.l4_protocol = ip6h->nexthdr;
		fib.tot_len = bpf_ntohs(ip6h->payload_len);
		__builtin_memcpy(fib.ipv6_src, &ip6h->saddr,
				 sizeof(fib.ipv6_src));
		__builtin_memcpy(fib.ipv6_dst, &ip6h->daddr,
				 sizeof(fib.ipv6_dst));
	} else {
		return XDP_PASS;
	}
	fib.ifindex = ctx->ingress_ifindex;

	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return XDP_PASS;
	/* Not a port of ours: the kernel forwards it, TTL untouched. */
	if (!bpf_map_lookup_elem(&tx_ports, &fib.ifindex))
		return XDP_PASS;
	if (fib.family == AF_INET) {
		if ((void *)(iph + 1) > data_end)
			return XDP_PASS;
		ip_decrease_ttl(iph);
	} else {
		if ((void *)(ip6h + 1) > data_end)
			return XDP_PASS;
		ip6h->hop_limit--;
	}
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	return bpf_redirect_map(&tx_ports, fib.ifindex, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
