// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The XDP half of tools/xskfwd.c, the bare AF_XDP forwarder the worker is
 * measured against: every frame to the socket of its queue, nothing else. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} xskfwd_xsks SEC(".maps");

SEC("xdp")
int xskfwd(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xskfwd_xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
