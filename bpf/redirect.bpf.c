// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The benchmark's ceiling (tools/bench): every frame is redirected to the
 * port in slot 0 of its devmap and nothing else is done (no parse, no
 * counter, no MAC rewrite). It uses the same mechanism as xnf's chains
 * (bpf_redirect_map through a devmap), so the gap between this program
 * and a chain is what the chain costs. The harness loads it with bpftool
 * and writes the egress ifindex into tx_port[0].
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

SEC("xdp")
int xnf_redirect(struct xdp_md *ctx)
{
	return bpf_redirect_map(&tx_port, 0, XDP_DROP);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
