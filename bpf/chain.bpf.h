/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * chain.bpf.h - what every program of a chain shares: the per-interface maps
 * (counters, XSK sockets, the chain's prog array), the load-time position of
 * the program in its chain, and the two ways a program leaves: on to the
 * next slot, or out of the chain with the accumulated verdict.
 */
#ifndef XNF_CHAIN_BPF_H
#define XNF_CHAIN_BPF_H

#include "common.bpf.h"
#include "tables.bpf.h"
#include "nat_xlat.bpf.h"
#include "log.bpf.h"

#define XNF_MAX_QUEUES 256

/* Per interface: pinned under <root>/dev/<ifname>/. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_stats);
} XNF_MAP_STATS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XNF_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} XNF_MAP_XSKS SEC(".maps");

/* Not used by the programs: declared here so the pinned map has BTF.
 * [0] describes the chain that runs, [1] one being switched to. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct xnf_dev_info);
} XNF_MAP_DEV SEC(".maps");

/* Per loaded chain: slot i holds the i-th NF. The order is data: the loader
 * fills a new array for every chain it builds. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, XNF_CHAIN_MAX);
	__type(key, __u32);
	__type(value, __u32);
} XNF_MAP_CHAIN SEC(".maps");

/*
 * Load-time position of this program (set by the loader in .rodata, so the
 * verifier sees constants):
 *   xnf_next_slot  - the slot this program tail-calls when it is done
 *                    (0 for the entry program, i + 1 for the NF in slot i).
 *                   Because it is a constant the verifier patches the tail
 *                   call into a direct jump (1-4 ns instead of ~13 ns).
 *   xnf_chain_len  - slots in use; a tail call to slot >= len ends the chain.
 *   xnf_fail_closed - the chain holds an NF that makes it fail closed
 *                   (XNF_NFF_FAIL_CLOSED: the firewall): an empty slot
 *                   before the end drops instead of carrying out the
 *                   verdict.
 *   xnf_fc_used    - an NF of the chain uses the flow cache.
 *   xnf_l3_fib     - the attachment is in fib mode.
 * The loader sets them alike in every program of a chain (the entry, each
 * NF's, the fused one), whether the program reads them or not.
 */
const volatile __u32 xnf_next_slot = 0;
const volatile __u32 xnf_chain_len = 0;
const volatile __u32 xnf_fail_closed = 0;
/* An NF of the chain uses the flow cache (XNF_NFF_FCACHE: the firewall,
 * l2fwd, l3fwd outside fib mode): otherwise the entry program does not
 * prepare its entry (bpf/fcache.bpf.h). */
const volatile __u32 xnf_fc_used = 0;
/* 1: forward with bpf_fib_lookup instead of xnf_rt4/xnf_rt6: read by
 * l3fwd, and by the xsk NF, which asks the FIB for the workers' l3fwd
 * (bpf/fib.bpf.h). */
const volatile __u32 xnf_l3_fib = 0;
/* The NF that confirms new connections (xnf_ct_confirm(),
 * conntrack_maps.bpf.h): the last with XNF_NFF_CT_CONFIRM after conntrack
 * (the firewall when it accepts their packets, else nat), or conntrack
 * itself; 0 without conntrack. An enum xnf_nf_id. */
const volatile __u32 xnf_ct_confirmer = 0;
/* The chain has the nat NF (XNF_NFF_NAT): xnf_finish() translates the
 * source of what leaves forwarded (xnf_pkt.nat). */
const volatile __u32 xnf_nat_used = 0;

static __always_inline struct xnf_stats *xnf_stats_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnf_stats, &zero);
}

static __always_inline struct xnf_pkt *xnf_pkt_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnf_scratch, &zero);
}

static __always_inline struct xnf_config *xnf_cfg_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnf_cfg, &zero);
}

/* An NF decides the fate of the packet now: pass it to the kernel or drop
 * it, for @reason, and skip the rest of the chain. */
static __always_inline void xnf_exception(struct xnf_pkt *p, __u32 action,
					  __u32 reason)
{
	p->verdict = action == XNF_ACT_DROP ? XNF_V_DROP : XNF_V_PASS;
	p->reason = reason;
	p->flags |= XNF_PKT_F_DONE;
}

/* Bytes of the frame, every fragment: read once per packet, by the entry
 * program or the fused chain, and kept in xnf_pkt.len for the NFs (no NF
 * changes a frame's length; a helper call per program cost a tail-called
 * hop ~1-2 ns, docs/perf.md). */
static __always_inline __u64 xnf_len(struct xdp_md *ctx)
{
	return bpf_xdp_get_buff_len(ctx);
}

static __always_inline void xnf_count_nf(struct xnf_stats *st, __u32 nf,
					 const struct xnf_pkt *p, __u64 len)
{
	struct xnf_nf_counters *c = &st->nf[nf];
	/* pass, drop, redirect are consecutive, and so are their bytes: one
	 * indexed add each keeps the fused program's 16 inlined copies small
	 * enough for its stack. */
	__u32 v = p->verdict == XNF_V_PASS ? 0 :
		  p->verdict == XNF_V_DROP ? 1 :
					     2;

	c->in++;
	c->in_bytes += len;
	(&c->pass)[v]++;
	(&c->pass_bytes)[v] += len;
}

/* The entry row's "in": the frame as it entered, before any NF. */
static __always_inline void xnf_count_in(struct xnf_stats *st, __u64 len)
{
	st->nf[XNF_NF_ENTRY].in++;
	st->nf[XNF_NF_ENTRY].in_bytes += len;
}

/* The packet log's sample of drops and passes for @reason (the config key
 * log_reasons): one array lookup the verifier inlines and a test, on the
 * drop and pass paths only; what is forwarded never gets here. */
static __always_inline void xnf_log_reason(struct xdp_md *ctx,
					   const struct xnf_pkt *p,
					   __u32 verdict, __u32 reason)
{
	struct xnf_config *cfg = xnf_cfg_get();

	if (cfg && (cfg->log_reasons & (1ULL << (reason & 63))))
		xnf_log_fn(ctx, p, XNF_LOG_REASON_BASE + reason, verdict, reason);
}

/* Carries out the accumulated verdict and counts it in the entry row. */
static __always_inline int xnf_finish(struct xdp_md *ctx, struct xnf_pkt *p,
				      struct xnf_stats *st, __u64 len)
{
	struct xnf_nf_counters *c = &st->nf[XNF_NF_ENTRY];
	__u32 reason = p->reason;
	struct xnf_config *cfg;
	long ret;

	switch (p->verdict) {
	case XNF_V_PASS:
		goto pass;
	case XNF_V_REDIRECT:
		/* nft's postrouting: the source of a translated connection's
		 * packet changes as it leaves (a global function: chains
		 * without nat, xnf_nat_used 0, drop the call at load). */
		if (xnf_nat_used && (p->nat & XNF_PKT_NAT_SRC) &&
		    xnf_nat_src_fn(ctx, p) < 0) {
			reason = XNF_R_INTERNAL;
			goto drop;
		}
		/* The low bits of flags are the action returned when the
		 * ifindex is not in the devmap. */
		ret = bpf_redirect_map(&xnf_tx, p->egress_ifindex, XDP_DROP);
		if (ret == XDP_REDIRECT)
			goto redirect;
		reason = XNF_R_REDIRECT;
		goto drop;
	case XNF_V_FLOOD:
		ret = bpf_redirect_map(&xnf_tx, 0,
				       BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS);
		if (ret == XDP_REDIRECT)
			goto redirect;
		reason = XNF_R_REDIRECT;
		goto drop;
	case XNF_V_XSK:
		ret = bpf_redirect_map(&xnf_xsks, p->rx_queue, XDP_DROP);
		if (ret == XDP_REDIRECT)
			goto redirect;
		reason = XNF_R_XSK;
		cfg = xnf_cfg_get();
		if (cfg && cfg->xsk_fallback == XNF_ACT_PASS)
			goto pass;
		goto drop;
	default:
		goto drop;
	}
redirect:
	c->redirect++;
	c->redirect_bytes += len;
	return XDP_REDIRECT;
pass:
	if (reason >= __XNF_R_MAX)
		reason = XNF_R_INTERNAL;
	xnf_log_reason(ctx, p, XNF_V_PASS, reason);
	st->pass[reason]++;
	st->pass_bytes[reason] += len;
	c->pass++;
	c->pass_bytes += len;
	return XDP_PASS;
drop:
	if (reason >= __XNF_R_MAX || reason == XNF_R_NONE)
		reason = XNF_R_INTERNAL;
	xnf_log_reason(ctx, p, XNF_V_DROP, reason);
	st->drop[reason]++;
	st->drop_bytes[reason] += len;
	c->drop++;
	c->drop_bytes += len;
	return XDP_DROP;
}

/* Leaves the program: on to the next slot of the chain, or, when the chain
 * is done or an NF decided, out with the verdict. */
static __always_inline int xnf_next(struct xdp_md *ctx, struct xnf_pkt *p,
				    struct xnf_stats *st, __u64 len)
{
	if (!(p->flags & XNF_PKT_F_DONE) && xnf_next_slot < xnf_chain_len) {
		bpf_tail_call(ctx, &xnf_chain, xnf_next_slot);
		/* Only reached when the slot is empty. */
		st->tail_miss[xnf_next_slot & (XNF_CHAIN_MAX - 1)]++;
		if (xnf_fail_closed) {
			p->verdict = XNF_V_DROP;
			p->reason = XNF_R_TAIL_CALL;
		}
	}
	return xnf_finish(ctx, p, st, len);
}

/* The body of every tail-called NF program: fetch the shared state, run the
 * NF, count, and move on. */
#define XNF_NF_PROGRAM(prog, nf_id, run)                \
	SEC("xdp.frags")                                \
	int prog(struct xdp_md *ctx)                    \
	{                                               \
		struct xnf_stats *st = xnf_stats_get(); \
		struct xnf_pkt *p = xnf_pkt_get();      \
		__u64 len;                              \
                                                        \
		if (!st || !p)                          \
			return XDP_ABORTED;             \
		run(ctx, p);                            \
		len = p->len;                           \
		xnf_count_nf(st, nf_id, p, len);        \
		return xnf_next(ctx, p, st, len);       \
	}

#endif /* XNF_CHAIN_BPF_H */
