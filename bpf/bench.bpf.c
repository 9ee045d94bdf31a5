// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench.bpf.c - the harness of `make bench-micro` (tools/bench_micro.c);
 * never part of a chain that carries traffic.
 *
 * BPF_PROG_TEST_RUN with a repeat count runs the program again and again on
 * the same buffer: whatever one run writes, the next one reads. l3fwd
 * decrements the TTL, so after ~63 runs every packet would be a TTL
 * exception and the benchmark would time the wrong path. xnf_bench therefore
 * restores the frame's first 64 bytes (every byte an NF rewrites: MACs,
 * TTL / hop limit, IPv4 checksum) from a template before each run, then
 * tail-calls slot 0 of xnf_bench_prog, which holds the program under test:
 * a chain's entry program or a fused chain.
 *
 * Timing the same harness with xnf_bench_drop (a bare XDP_DROP) in the slot
 * gives the baseline: test_run's own loop, the rewrite and one tail call.
 * The benchmark subtracts it from every figure.
 *
 * xnf_bench_rx is l3fwd's receive checks alone (bpf/rx.bpf.h, the code
 * l3fwd runs), so that their share of l3fwd's cost can be read off.
 *
 * Both programs are "xdp.frags": every program of a tail-call chain must
 * agree on xdp_has_frags (the kernel refuses to put a program into a prog
 * array whose owner differs), and the xnf chains are frags-aware.
 */
#include "rx.bpf.h"
#include "xnf_traffic.h"

#define XNF_BENCH_FRAME 64

/*
 * The template. In .bss rather than .rodata on purpose: user space writes
 * it through the skeleton's mmap of .bss before each row, so one loaded
 * harness serves every row. Words, not bytes: a byte array would make clang
 * copy it one byte at a time (64 loads and stores), a cost the baseline
 * would have to absorb; as 8 words it is 8 loads and 8 stores.
 */
__u64 xnf_bench_frame[XNF_BENCH_FRAME / 8];

/*
 * The flow cache's miss rows: when not 0, the offset in the frame of a
 * 16-bit field (the UDP source port) that the harness overwrites with a
 * run counter after the restore, so that every run is a flow of its own
 * and 65,536 flows cycle through the cache's 4,096 entries per CPU: every
 * lookup misses. The baseline runs with 0, so the miss rows carry the
 * store (under a nanosecond) in their net figure.
 */
__u32 xnf_bench_vary;
__u32 xnf_bench_seq;
/*
 * The conntrack rows of new flows: when not 0 (and xnf_bench_vary set),
 * the next 16-bit field too (the UDP destination port) gets the run
 * counter's upper half, so that no flow comes round again in the whole
 * benchmark (2^32 runs): 65,536 source ports alone would find their
 * connections in the table from the 65,537th run on.
 */
__u32 xnf_bench_vary_wide;
/*
 * The traffic mixes (bench-micro -M): when not 0, the offset in the frame
 * of the UDP source port; the harness writes source and destination port
 * (4 bytes, network order as loaded natively) from entry
 * xnf_bench_seq % XNF_GEN_MIX_SIZE of xnf_bench_flows, which user space
 * fills with a mix's flows (xnf_mix_ports(): flow i has source port
 * sport + i and destination port dport + i / 65536). The same kind of
 * table as xnf-gen's (gen.bpf.c says why a table read by a counter), so
 * the baseline runs with 0 and the mix rows carry a load, two stores and
 * the UDP checksum's update for the new ports (RFC 1624; the frame is
 * the chains' UDP one): a NAT updates that checksum for what it rewrites,
 * and the packet it leaves with is checked to carry a right one.
 */
__u32 xnf_bench_mix;
__u32 xnf_bench_flows[XNF_GEN_MIX_SIZE] SEC(".data.mix");

/* Slot 0: the program under test. The key is a constant, so the verifier
 * turns the tail call into a direct jump that the kernel re-patches
 * whenever user space replaces the slot. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} xnf_bench_prog SEC(".maps");

/* Writes the UDP header @udp's ports (@ports: source port in the low 16
 * bits, both in network order) and updates its checksum for them; 0 is
 * "no checksum" and stays so, and a sum of 0 is sent as 0xffff. */
static __always_inline void xnf_bench_udp_ports(__u16 *udp, __u32 ports)
{
	__u32 sum;

	if (udp[3]) {
		sum = (__u16)~udp[3] + (__u16)~udp[0] + (__u16)~udp[1] +
		      (ports & 0xffff) + (ports >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		udp[3] = (__u16)~sum ?: 0xffff;
	}
	udp[0] = ports;
	udp[1] = ports >> 16;
}

SEC("xdp.frags")
int xnf_bench(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 *frame = data;
	__u32 off;
	int i;

	if (data + XNF_BENCH_FRAME > data_end)
		return XDP_ABORTED;
#pragma unroll
	for (i = 0; i < XNF_BENCH_FRAME / 8; i++)
		frame[i] = xnf_bench_frame[i];
	off = xnf_bench_vary ?: xnf_bench_mix;
	if (off) {
		__u16 *field = data + (off & (XNF_BENCH_FRAME - 2));
		__u32 v = xnf_bench_seq;

		if ((void *)(field + 2) > data_end)
			return XDP_ABORTED;
		if (!xnf_bench_vary) {
			v = xnf_bench_flows[v & (XNF_GEN_MIX_SIZE - 1)];
			if ((void *)(field + 4) > data_end)
				return XDP_ABORTED;
			xnf_bench_udp_ports(field, v);
		} else {
			field[0] = v;
			if (xnf_bench_vary_wide)
				field[1] = v >> 16;
		}
		xnf_bench_seq++;
	}
	bpf_tail_call(ctx, &xnf_bench_prog, 0);
	/* Only reached when the slot is empty: user space reads ABORTED as
	 * "the harness is not wired". */
	return XDP_ABORTED;
}

/* The baseline's target: the cheapest program a tail call can reach. */
SEC("xdp.frags")
int xnf_bench_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* The receive checks of l3fwd on an untagged IPv4 or IPv6 frame, with the
 * bounds checks l3fwd makes before them: XDP_DROP (as the baseline) when
 * they let the packet on to the route lookup, XDP_PASS when they would
 * not, which the benchmark refuses to time. */
SEC("xdp.frags")
int xnf_bench_rx(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	int cls;

	if ((void *)(eth + 1) > data_end)
		return XDP_ABORTED;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = (void *)(eth + 1);

		if ((void *)(iph + 1) > data_end)
			return XDP_ABORTED;
		cls = xnf_rx_ipv4(iph, data_end);
	} else {
		struct ipv6hdr *ip6h = (void *)(eth + 1);

		if ((void *)(ip6h + 1) > data_end)
			return XDP_ABORTED;
		cls = xnf_rx_ipv6(ip6h);
	}
	return cls == XNF_RX_FORWARD ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
