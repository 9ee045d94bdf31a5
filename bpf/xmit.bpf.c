// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Sends every frame back out of the device it "arrived" on. Run with
 * BPF_PROG_TEST_RUN and BPF_F_TEST_XDP_LIVE_FRAMES on one end of a veth
 * pair, it injects real traffic into the other end: the kernel turns XDP_TX
 * of a live frame into a redirect to the same device, and the veth peer
 * receives it in NAPI like any packet from a NIC.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xnf_xmit(struct xdp_md *ctx)
{
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
