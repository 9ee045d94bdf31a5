// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The whole chain in one program: the entry's parse and the NFs inlined in
 * the order given at load time (xnf_fused[], .rodata). The loop is unrolled
 * and every xnf_fused[i] is a constant to the verifier, so only the NFs in
 * the chain are verified and kept. Same maps, same counters as the
 * tail-called chain; only the order can no longer change at run time.
 */
#include "common.bpf.h"
#include "tables.bpf.h"
#include "chain.bpf.h"
#include "parse.bpf.h"
#include "fcache.bpf.h"
#include "firewall.bpf.h"
#include "l3fwd.bpf.h"
#include "l2fwd.bpf.h"
#include "xsk.bpf.h"

const volatile __u32 xnf_fused[XNF_FUSED_MAX] = {};
const volatile __u32 xnf_fused_len = 0;

SEC("xdp.frags")
int xnf_fused_chain(struct xdp_md *ctx)
{
	struct xnf_stats *st = xnf_stats_get();
	struct xnf_pkt pkt, *p = &pkt;
	__u64 len = xnf_len(ctx);
	int i;

	if (!st)
		return XDP_ABORTED;
	xnf_poll_mark(ctx);
	xnf_count_in(st, len);
	if (xnf_parse(ctx, p, len) < 0) {
		xnf_exception(p, XNF_ACT_DROP, XNF_R_MALFORMED);
		return xnf_finish(ctx, p, st, len);
	}
	xnf_fc_begin(ctx, p);

#pragma unroll
	for (i = 0; i < XNF_FUSED_MAX; i++) {
		if (i >= xnf_fused_len || (p->flags & XNF_PKT_F_DONE))
			break;
		switch (xnf_fused[i]) {
		case XNF_NF_FIREWALL:
			xnf_firewall_run(ctx, p);
			xnf_count_nf(st, XNF_NF_FIREWALL, p, len);
			break;
		case XNF_NF_L3FWD:
			xnf_l3fwd_run(ctx, p);
			xnf_count_nf(st, XNF_NF_L3FWD, p, len);
			break;
		case XNF_NF_L2FWD:
			xnf_l2fwd_run(ctx, p);
			xnf_count_nf(st, XNF_NF_L2FWD, p, len);
			break;
		case XNF_NF_XSK:
			xnf_xsk_run(ctx, p);
			xnf_count_nf(st, XNF_NF_XSK, p, len);
			break;
		}
	}
	return xnf_finish(ctx, p, st, len);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
