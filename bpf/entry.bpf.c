// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The per-interface entry program: counts the packet, parses it once into
 * the per-CPU xnf_pkt and tail-calls slot 0 of the chain. A malformed frame
 * is dropped here (reason malformed) before any NF sees it. With the flow
 * cache on it also finds the packet's entry (bpf/fcache.bpf.h).
 */
#include "common.bpf.h"
#include "tables.bpf.h"
#include "chain.bpf.h"
#include "parse.bpf.h"
#include "fcache.bpf.h"

SEC("xdp.frags")
int xnf_entry(struct xdp_md *ctx)
{
	struct xnf_stats *st = xnf_stats_get();
	struct xnf_pkt *p = xnf_pkt_get();
	__u64 len = xnf_len(ctx);

	if (!st || !p)
		return XDP_ABORTED;
	xnf_poll_mark(ctx);
	xnf_count_in(st, len);
	if (xnf_parse(ctx, p, len) < 0)
		xnf_exception(p, XNF_ACT_DROP, XNF_R_MALFORMED);
	else
		xnf_fc_begin(ctx, p);
	/* A malformed packet too: a trace on iif alone shows it. */
	xnf_trace_begin(ctx, p);
	return xnf_next(ctx, p, st, len);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
