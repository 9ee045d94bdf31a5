/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * log.bpf.h - the packet log's writer (include/uapi/xnf_trace.h): a
 * firewall rule with `log` (bpf/firewall.bpf.h) and a drop or pass for a
 * sampled reason (xnf_finish(), bpf/chain.bpf.h) call xnf_log_fn(), which
 * takes a token of the source's bucket and writes one record into the ring
 * xnf_log. It never waits for a reader and never changes the packet.
 *
 * The limit is nft's `limit rate RATE/UNIT burst BURST packets`
 * (net/netfilter/nft_limit.c): a bucket of tokens counted in nanoseconds,
 * one packet costs UNIT / RATE of them, it holds at most BURST packets'
 * worth (BURST 0 counts as 1: a source that logs can always log one) and
 * starts full (libxnf writes it so, lib/pktlog.c). Time refills it: a
 * packet that finds at least one packet's cost in it is logged and pays,
 * one that does not is counted as suppressed. Over any span of T ns a
 * source thus logs at most max(BURST, 1) + T * RATE / UNIT packets.
 */
#ifndef XNF_LOG_BPF_H
#define XNF_LOG_BPF_H

#include "common.bpf.h"
#include "trace_maps.bpf.h"

#define XNF_NSEC_PER_SEC 1000000000ULL

/* Takes a token of @lim's bucket at @now: 1 if there was one. */
static __always_inline int xnf_log_take(struct xnf_log_limit *lim, __u64 now)
{
	__u64 cost, max, tokens;
	int ok;

	/* Read outside the lock: libxnf rewrites the whole entry only when
	 * the source's setting changes, and a packet that sees half of a
	 * change is one record more or less. */
	if (!lim->rate)
		return 0;
	cost = lim->unit_s * XNF_NSEC_PER_SEC / lim->rate;
	max = cost * (lim->burst ?: 1);

	/* Two CPUs logging the same source must not both spend one token:
	 * the read-modify-write of tokens and last_ns is under the entry's
	 * lock, which an XDP program may hold (no helper calls inside). */
	bpf_spin_lock(&lim->lock);
	tokens = lim->tokens;
	/* Only forward: libxnf's start of the bucket may be a little after
	 * a packet's clock read on another CPU. */
	if (now > lim->last_ns) {
		tokens += now - lim->last_ns;
		lim->last_ns = now;
	}
	if (tokens > max)
		tokens = max;
	ok = tokens >= cost;
	if (ok)
		tokens -= cost;
	lim->tokens = tokens;
	bpf_spin_unlock(&lim->lock);
	return ok;
}

/* The addresses and TTL of an IP packet, read from the frame (the parse
 * kept only offsets). */
static __always_inline void
xnf_log_l3(struct xdp_md *ctx, const struct xnf_pkt *p, struct xnf_log_rec *rec)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 off = p->l3_off;

	if (off > XNF_MAX_L3_OFF)
		return;
	if (p->family == XNF_AF_INET) {
		struct iphdr *iph = data + off;

		if ((void *)(iph + 1) > data_end)
			return;
		__builtin_memcpy(rec->src, &iph->saddr, 4);
		__builtin_memcpy(rec->dst, &iph->daddr, 4);
		rec->ttl = iph->ttl;
	} else if (p->family == XNF_AF_INET6) {
		struct ipv6hdr *ip6h = data + off;

		if ((void *)(ip6h + 1) > data_end)
			return;
		__builtin_memcpy(rec->src, &ip6h->saddr, 16);
		__builtin_memcpy(rec->dst, &ip6h->daddr, 16);
		rec->ttl = ip6h->hop_limit;
	}
}

/*
 * xnf_log_fn() - logs @p for log source @source, if its bucket allows
 * @verdict, @reason: what becomes of the packet (enum xnf_verdict, enum
 * xnf_reason), in the record.
 *
 * A global function, verified once and with a stack frame of its own: the
 * fused chain and the NFs that call it stay as small as they were. The
 * record is written in place: its seq is 0 while it is written and the
 * record's sequence number + 1 last, each with an atomic exchange (a full
 * barrier on every architecture), so a reader that sees seq == s + 1 after
 * its copy and finds the slot not taken again read record s whole
 * (lib/pktlog.c).
 *
 * Return: 1 logged, 0 not (suppressed, or the source does not log).
 */
__noinline int xnf_log_fn(struct xdp_md *ctx, const struct xnf_pkt *p,
			  __u32 source, __u32 verdict, __u32 reason)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xnf_log_counters *cnt;
	struct xnf_log_limit *lim;
	struct xnf_log_rec *rec;
	__u32 zero = 0, slot;
	__u64 *next, seq;

	if (!p)
		return 0;
	lim = bpf_map_lookup_elem(&xnf_log_limit, &source);
	cnt = bpf_map_lookup_elem(&xnf_log_stats, &source);
	if (!lim || !cnt || !lim->rate)
		return 0;
	if (!xnf_log_take(lim, bpf_ktime_get_ns())) {
		cnt->suppressed++;
		return 0;
	}
	next = bpf_map_lookup_elem(&xnf_log_seq, &zero);
	if (!next)
		return 0;
	seq = __sync_fetch_and_add(next, 1);
	slot = seq % XNF_LOG_SLOTS;
	rec = bpf_map_lookup_elem(&xnf_log, &slot);
	if (!rec)
		return 0;
	__sync_lock_test_and_set(&rec->seq, 0);
	rec->ts = bpf_ktime_get_ns();
	rec->source = source;
	rec->prio = lim->prio;
	rec->ifindex = p->ingress_ifindex;
	rec->len = p->len;
	rec->family = p->family;
	rec->l4_proto = p->l4_proto;
	rec->verdict = verdict;
	rec->reason = reason;
	rec->ttl = 0;
	rec->tcp_flags = p->tcp_flags;
	rec->icmp_type = p->icmp_type;
	rec->icmp_code = p->icmp_code;
	rec->pkt_flags = p->flags;
	rec->pad = 0;
	rec->eth_proto = p->eth_proto;
	rec->sport = p->sport;
	rec->dport = p->dport;
	rec->ip_len = p->l3_len;
	rec->pad2[0] = rec->pad2[1] = 0;
	if (data + ETH_HLEN <= data_end) {
		xnf_mac_copy(rec->dmac, data);
		xnf_mac_copy(rec->smac, data + ETH_ALEN);
	} else {
		__builtin_memset(rec->dmac, 0, 2 * ETH_ALEN);
	}
	__builtin_memset(rec->src, 0, sizeof(rec->src) + sizeof(rec->dst));
	xnf_log_l3(ctx, p, rec);
	__builtin_memcpy(rec->prefix, lim->prefix, XNF_LOG_PREFIX_MAX);
	__sync_lock_test_and_set(&rec->seq, seq + 1);
	cnt->logged++;
	return 1;
}

#endif /* XNF_LOG_BPF_H */
