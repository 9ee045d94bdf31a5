/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * firewall.bpf.h - the firewall NF: first-match classification of IPv4 and
 * IPv6 packets against the compiled bit-vector tables (see include/uapi/xnf_fw.h
 * and loader/fw_compile.c), or for a set of at most XNF_FW_LINEAR_MAX rules
 * by a linear scan of its rules (xnf_fw_hdr.linear), per-rule hit counters,
 * default policy. Non-IP frames pass through untouched, as in an nftables
 * inet table.
 */
#ifndef XNF_FIREWALL_BPF_H
#define XNF_FIREWALL_BPF_H

#include "common.bpf.h"
#include "tables.bpf.h"
#include "firewall_maps.bpf.h"
#include "conntrack_maps.bpf.h"
#include "chain.bpf.h"
#include "fcache.bpf.h"
#include "l3fwd_maps.bpf.h"
#include "fib.bpf.h"
#include "fw_match.bpf.h"

static __always_inline struct xnf_fw_class *xnf_fw_class_get(__u32 gen,
							     __u32 *class)
{
	__u32 key;

	if (!class || *class >= XNF_FW_MAX_CLASSES)
		return NULL;
	key = gen * XNF_FW_MAX_CLASSES + *class;
	return bpf_map_lookup_elem(&xnf_fw_class, &key);
}

/* Index of the lowest set bit of x != 0, without branches (clang 14 cannot
 * lower __builtin_ctzll for BPF): the bits below it, counted SWAR-style. */
static __always_inline __u32 xnf_ctz64(__u64 x)
{
	x = (x & -x) - 1;
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (x * 0x0101010101010101ULL) >> 56;
}

/* The word's best candidate when its first one has extra matches: the
 * set bits of @m (the rules of the word whose first xnf_fw_order key is
 * @base that the five classes match) in priority order, the first whose
 * extra matches hold for @p (the caller compares its rank). A global
 * function, verified once on its own: inlined, its loop inside the loops
 * over the words multiplied the states the verifier walks. Its stack
 * frame must stay within 32 bytes: the fused chain, the rule search and
 * this function share the 512 bytes of stack (hence few live values: no
 * best rank to stop at). Return: rank << 32 | its
 * xnf_fw_order key, or ~0 for none. */
__noinline __u64 xnf_fw_word_best(__u32 base, __u64 m, const struct xnf_pkt *p)
{
	struct xnf_fw_match *mt;
	__u32 key;
	int t;

	if (!p)
		return ~0ULL;
	for (t = 0; t < 64 && m; t++, m &= m - 1) {
		key = base + xnf_ctz64(m);
		mt = bpf_map_lookup_elem(&xnf_fw_order, &key);
		if (!mt)
			break;
		if (!mt->x.flags || xnf_fw_extra_hit(&mt->x, p))
			return (__u64)mt->rank << 32 | key;
	}
	return ~0ULL;
}

/* Finds the first matching rule by priority: returns its rank << 32 | its
 * xnf_fw_order key (a value, not out-parameters: they would take stack),
 * the rank @nrules when no rule matches. Only 64-rule words whose summary bit is set in all five classes
 * are read; each word's lowest set bit is its best rule (bits are sorted by
 * rank within a word), and the best rank over the words wins. A candidate
 * whose rule has extra matches (xnf_fw_match.x) is checked against
 * @p; when they fail the word's next set bit, the next rule in priority
 * order, is the candidate, until one beats nothing found so far.
 *
 * The "nothing found yet" value is nrules, read from a map, on purpose: a
 * constant there would let the verifier decide the final test for the
 * no-match paths, mark the variable precise, and then fail to prune the
 * loop's states (a million instructions instead of twenty thousand). */
static __always_inline __u64 xnf_fw_first_match(__u32 gen, __u32 nrules,
						const struct xnf_fw_class *a,
						const struct xnf_fw_class *b,
						const struct xnf_fw_class *c,
						const struct xnf_fw_class *d,
						const struct xnf_fw_class *e,
						const struct xnf_pkt *p)
{
	__u32 best_key = 0, best_rank = nrules;
	int s, j;

	for (s = 0; s < XNF_FW_SUMMARY; s++) {
		__u64 sum = a->summary[s] & b->summary[s] & c->summary[s] &
			    d->summary[s] & e->summary[s];

		for (j = 0; j < 64 && sum; j++) {
			__u32 w = s * 64 + xnf_ctz64(sum), key;
			struct xnf_fw_match *mt;
			__u64 m;

			sum &= sum - 1;
			if (w >= XNF_FW_WORDS)
				goto out;
			m = a->bits[w] & b->bits[w] & c->bits[w] & d->bits[w] &
			    e->bits[w];
			if (!m)
				continue;
			key = gen * XNF_FW_MAX_RULES + w * 64 + xnf_ctz64(m);
			mt = bpf_map_lookup_elem(&xnf_fw_order, &key);
			if (!mt || mt->rank >= best_rank)
				continue;
			if (mt->x.flags) {
				__u64 best = xnf_fw_word_best(gen * XNF_FW_MAX_RULES +
								      w * 64,
							      m, p);

				if (best == ~0ULL || best >> 32 >= best_rank)
					continue;
				best_rank = best >> 32;
				best_key = (__u32)best;
				continue;
			}
			best_rank = mt->rank;
			best_key = key;
		}
	}
out:
	return (__u64)best_rank << 32 | best_key;
}

/* The linear form (xnf_fw_hdr.linear): the rules of generation @gen in
 * priority order, the first that matches wins. @match receives its
 * xnf_fw_order entry, or NULL. Return: 0, or -1 when a table is missing. */
static __always_inline int xnf_fw_scan(__u32 gen, __u32 nrules,
				       const struct xnf_fw_fields *k,
				       const struct xnf_pkt *p,
				       struct xnf_fw_match **match)
{
	__u32 i;

	*match = NULL;
	for (i = 0; i < XNF_FW_LINEAR_MAX && i < nrules; i++) {
		__u32 key = gen * XNF_FW_MAX_RULES + i;
		struct xnf_fw_match *mt;
		struct xnf_fw_rule *r;

		mt = bpf_map_lookup_elem(&xnf_fw_order, &key);
		if (!mt)
			return -1;
		key = gen * XNF_FW_MAX_RULES + mt->slot;
		r = bpf_map_lookup_elem(&xnf_fw_rules, &key);
		if (!r)
			return -1;
		if (xnf_fw_rule_hit(r, k) &&
		    (!mt->x.flags || xnf_fw_extra_hit(&mt->x, p))) {
			*match = mt;
			return 0;
		}
	}
	return 0;
}

/* What xnf_fw_linear_fn() and xnf_fw_tables_fn() find besides the
 * action: one out-value on the caller's stack. */
struct xnf_fw_res {
	__u32 slot; /* xnf_fw_hits slot: a rule's, XNF_FW_HIT_DEFAULT */
	__u32 deps; /* the rule set's xnf_fw_hdr.deps */
};

/* xnf_fw_linear_fn()'s answer for a set it leaves to the tables. */
#define XNF_FW_TABLES 3

/* The active generation's header into *@gen and the return value; NULL
 * when a table is missing. */
static __always_inline struct xnf_fw_hdr *xnf_fw_hdr_get(__u32 *gen)
{
	__u32 key = 0, *active;

	active = bpf_map_lookup_elem(&xnf_fw_active, &key);
	if (!active)
		return NULL;
	*gen = *active & 1;
	return bpf_map_lookup_elem(&xnf_fw_hdr, gen);
}

/*
 * The rule search is two global (not inlined) functions, called one after
 * the other from the chain's level: the verifier checks each once, on its
 * own, instead of once for every state the NFs before it in a fused chain
 * leave behind (inlined after l2fwd and l3fwd, the rule search alone took
 * 90% of the one-million-instruction budget), the code after them (the
 * flow cache, the counters) sees one return value instead of every state
 * the search ends in, and their stack frames are not stacked on each
 * other: the fused chain's frame, the tables' search's and
 * xnf_fw_word_best()'s must fit in 512 bytes together.
 *
 * xnf_fw_linear_fn(): the default for an empty set, the first matching
 * rule of a linear set (xnf_fw_hdr.linear), or XNF_FW_TABLES for the
 * tables' set; -1 when a table is missing. *@res gets the slot of the hit
 * counter and the set's deps.
 */
__noinline int xnf_fw_linear_fn(struct xdp_md *ctx, const struct xnf_pkt *p,
				struct xnf_fw_res *res)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xnf_fw_fields k = {};
	struct xnf_fw_match *match;
	struct xnf_fw_hdr *hdr;
	__u32 gen, off;

	if (!p || !res)
		return -1;
	res->slot = XNF_FW_HIT_DEFAULT;
	res->deps = 0;
	hdr = xnf_fw_hdr_get(&gen);
	if (!hdr)
		return -1;
	res->deps = hdr->deps;
	if (!hdr->nrules)
		return hdr->default_action;
	if (!hdr->linear)
		return XNF_FW_TABLES;
	off = p->l3_off;
	if (off > XNF_MAX_L3_OFF)
		return -1;
	k.family = p->family;
	k.proto = p->l4_proto;
	if (p->flags & XNF_PKT_F_PORTS) {
		k.ports = 1;
		k.sport = bpf_ntohs(p->sport);
		k.dport = bpf_ntohs(p->dport);
	}
	if (p->family == XNF_AF_INET) {
		struct iphdr *iph = data + off;

		if ((void *)(iph + 1) > data_end)
			return -1;
		k.src[0] = iph->saddr;
		k.dst[0] = iph->daddr;
	} else {
		struct ipv6hdr *ip6h = data + off;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		__builtin_memcpy(k.src, &ip6h->saddr, 16);
		__builtin_memcpy(k.dst, &ip6h->daddr, 16);
	}
	if (xnf_fw_scan(gen, hdr->nrules, &k, p, &match))
		return -1;
	if (!match)
		return hdr->default_action;
	res->slot = match->slot;
	return match->action;
}

/* The tables' search, for a set xnf_fw_linear_fn() left to them: the
 * first matching rule's action and slot, or the default; -1 when a table
 * is missing. The addresses go from the packet straight into the tries'
 * key: no copy of them on this frame. */
__noinline int xnf_fw_tables_fn(struct xdp_md *ctx, const struct xnf_pkt *p,
				struct xnf_fw_res *res)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xnf_fw_class *src, *dst, *proto, *sport, *dport;
	__u32 *c_src, *c_dst, *c_proto, *c_sport, *c_dport;
	union {
		struct xnf_fw_lpm4_key k4;
		struct xnf_fw_lpm6_key k6;
	} lk;
	struct xnf_fw_match *match;
	struct xnf_fw_hdr *hdr;
	__u32 gen, key, off;
	__u64 best;

	if (!p || !res)
		return -1;
	res->slot = XNF_FW_HIT_DEFAULT;
	hdr = xnf_fw_hdr_get(&gen);
	if (!hdr)
		return -1;
	off = p->l3_off;
	if (off > XNF_MAX_L3_OFF)
		return -1;
	if (p->family == XNF_AF_INET) {
		struct iphdr *iph = data + off;

		if ((void *)(iph + 1) > data_end)
			return -1;
		lk.k4.prefixlen = 64;
		lk.k4.gen = gen;
		__builtin_memcpy(lk.k4.addr, &iph->saddr, 4);
		c_src = bpf_map_lookup_elem(&xnf_fw_src4, &lk.k4);
		__builtin_memcpy(lk.k4.addr, &iph->daddr, 4);
		c_dst = bpf_map_lookup_elem(&xnf_fw_dst4, &lk.k4);
	} else {
		struct ipv6hdr *ip6h = data + off;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		lk.k6.prefixlen = 160;
		lk.k6.gen = gen;
		__builtin_memcpy(lk.k6.addr, &ip6h->saddr, 16);
		c_src = bpf_map_lookup_elem(&xnf_fw_src6, &lk.k6);
		__builtin_memcpy(lk.k6.addr, &ip6h->daddr, 16);
		c_dst = bpf_map_lookup_elem(&xnf_fw_dst6, &lk.k6);
	}
	key = gen * 256 + p->l4_proto;
	c_proto = bpf_map_lookup_elem(&xnf_fw_proto, &key);
	if (p->flags & XNF_PKT_F_PORTS) {
		key = gen * 65536 + bpf_ntohs(p->sport);
		c_sport = bpf_map_lookup_elem(&xnf_fw_sport, &key);
		key = gen * 65536 + bpf_ntohs(p->dport);
		c_dport = bpf_map_lookup_elem(&xnf_fw_dport, &key);
	} else {
		c_sport = &hdr->sport_none;
		c_dport = &hdr->dport_none;
	}

	/* A field with no class matches no rule: the default applies. */
	src = xnf_fw_class_get(gen, c_src);
	dst = xnf_fw_class_get(gen, c_dst);
	proto = xnf_fw_class_get(gen, c_proto);
	sport = xnf_fw_class_get(gen, c_sport);
	dport = xnf_fw_class_get(gen, c_dport);
	if (!src || !dst || !proto || !sport || !dport)
		return hdr->default_action;

	best = xnf_fw_first_match(gen, hdr->nrules, src, dst, proto, sport,
				  dport, p);
	if (best >> 32 >= hdr->nrules)
		return hdr->default_action;
	key = (__u32)best;
	match = bpf_map_lookup_elem(&xnf_fw_order, &key);
	if (!match)
		return -1;
	res->slot = match->slot;
	return match->action;
}

/*
 * Whether @p is addressed to the router itself (nft's input hook rather
 * than forward), for fw_input kernel: its destination is a local route of
 * xnf's tables (the copy xnf_config.rt_copy names, as l3fwd reads it), or
 * in fib mode one the kernel's FIB does not forward (bpf_fib_lookup says
 * BPF_FIB_LKUP_RET_NOT_FWDED for local, broadcast and multicast routes:
 * what Linux delivers locally). A global function, verified once and with
 * a stack frame of its own beside the fused chain's (the FIB lookup's
 * parameters are 64 bytes), called from the chain's level: inside the
 * rule search the three frames would not fit in 512 bytes.
 */
__noinline int xnf_fw_local_fn(struct xdp_md *ctx, const struct xnf_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	const struct xnf_rt_val *rt = NULL;
	struct xnf_rt6_key k6 = { .prefixlen = 128 };
	struct xnf_rt4_key k4 = { .prefixlen = 32 };
	struct bpf_fib_lookup fib;
	struct xnf_config *cfg;
	struct ipv6hdr *ip6h;
	struct iphdr *iph;
	__u32 off;

	if (!p)
		return 0;
	/* Read once: p is memory a helper call may change, as far as the
	 * verifier knows, and a reread offset would be unbounded. */
	off = p->l3_off;
	if (off > XNF_MAX_L3_OFF)
		return 0;
	cfg = xnf_cfg_get();
	if (!cfg)
		return 0;
	if (p->family == XNF_AF_INET) {
		iph = data + off;
		if ((void *)(iph + 1) > data_end)
			return 0;
		if (xnf_l3_fib)
			return xnf_fib4(ctx, iph, &fib) ==
			       BPF_FIB_LKUP_RET_NOT_FWDED;
		__builtin_memcpy(k4.addr, &iph->daddr, 4);
		rt = cfg->rt_copy ? bpf_map_lookup_elem(&xnf_rt4_b, &k4) :
				    bpf_map_lookup_elem(&xnf_rt4, &k4);
	} else if (p->family == XNF_AF_INET6) {
		ip6h = data + off;
		if ((void *)(ip6h + 1) > data_end)
			return 0;
		if (xnf_l3_fib)
			return xnf_fib6(ctx, p, ip6h, &fib) ==
			       BPF_FIB_LKUP_RET_NOT_FWDED;
		__builtin_memcpy(k6.addr, &ip6h->daddr, 16);
		rt = cfg->rt_copy ? bpf_map_lookup_elem(&xnf_rt6_b, &k6) :
				    bpf_map_lookup_elem(&xnf_rt6, &k6);
	}
	return rt && rt->type == XNF_RT_LOCAL;
}

/* The packet's values of what rules look at beyond its flow key, in the
 * bits of xnf_fw_hdr.deps (XNF_FW_DEP_*, include/uapi/xnf_fw.h). */
static __always_inline __u32 xnf_fw_deps(const struct xnf_pkt *p)
{
	__u32 d = p->ct_state & XNF_FW_DEP_CT;

	if (p->flags & XNF_PKT_F_TCP)
		d |= XNF_FW_DEP_HAS_TCP | (__u32)p->tcp_flags << 8;
	if (p->flags & XNF_PKT_F_ICMP)
		d |= XNF_FW_DEP_HAS_ICMP | (__u32)p->icmp_type << 16 |
		     (__u32)p->icmp_code << 24;
	return d;
}

/* Trace: the firewall decided by the rule in hit counter slot @slot (of the
 * active generation), or by its default policy (XNF_FW_HIT_DEFAULT). */
__noinline int xnf_trace_fw_fn(const struct xnf_pkt *p, __u32 slot)
{
	struct xnf_trace_rec *rec = xnf_trace_rec_get();
	struct xnf_trace_step *s;
	struct xnf_fw_rule *r;
	__u32 key = 0, *active;

	if (!p || !rec)
		return 0;
	s = xnf_trace_cur(rec);
	if (!s)
		return 0;
	if (slot >= XNF_FW_MAX_RULES) {
		s->flags |= XNF_TRACE_S_DEFAULT;
		return 0;
	}
	active = bpf_map_lookup_elem(&XNF_MAP_FW_ACTIVE, &key);
	if (!active)
		return 0;
	key = (*active & 1) * XNF_FW_MAX_RULES + slot;
	r = bpf_map_lookup_elem(&XNF_MAP_FW_RULES, &key);
	if (!r)
		return 0;
	s->flags |= XNF_TRACE_S_RULE;
	s->rule = r->prio;
	return 0;
}

/* The decision from the flow cache, or from the rule search (and then
 * into the cache); the hit counter of the rule, or of the default policy,
 * either way. */
static __always_inline void xnf_firewall_run(struct xdp_md *ctx,
					     struct xnf_pkt *p)
{
	struct xnf_fc_entry *e;
	struct xnf_config *cfg;
	struct xnf_fw_hit *hit;
	struct xnf_fw_res res;
	__u32 slot, deps, input;
	int action, cached;

	if (p->family == XNF_AF_NONE)
		return;
	cfg = xnf_cfg_get();
	if (!cfg) {
		xnf_exception(p, XNF_ACT_DROP, XNF_R_INTERNAL);
		return;
	}
	/* fw_input kernel: what is addressed to the router goes to the
	 * kernel before the rules, there its own nftables input rules
	 * filter it. In fib mode the FIB is asked per packet: it changes
	 * without the table generation the flow cache relies on. Frames to
	 * group MAC addresses are not told apart: in an l2fwd chain they
	 * are flooded, not the router's. */
	input = cfg->fw_input == XNF_FW_INPUT_KERNEL;
	if (input && xnf_l3_fib && xnf_fw_local_fn(ctx, p)) {
		xnf_exception(p, cfg->local, XNF_R_LOCAL);
		return;
	}
	/* An IPv6 header chain too long to find its protocol in: no rule can
	 * be matched honestly ("drop tcp" would be evaded), so deny. */
	if (p->flags & XNF_PKT_F_L4_UNKNOWN) {
		xnf_exception(p, XNF_ACT_DROP, XNF_R_FW_DENY);
		return;
	}
	e = xnf_fc_get(p);
	/* A decision holds for the flow's packets that agree with the one
	 * it was made for on what the rules look at beyond the flow key
	 * (nothing, for a set without ct state, tcp flags or icmp type
	 * rules: the mask is 0 and the packet's values are not read). */
	cached = e && xnf_fc_fresh(e, p, XNF_FC_FW, e->fw_gen) &&
		 (!e->fw_dep_mask ||
		  !((xnf_fw_deps(p) ^ e->fw_deps) & e->fw_dep_mask));
	if (cached) {
		action = e->fw_action;
		slot = e->fw_slot;
	} else {
		/* A local route of xnf's tables: cached with the decision
		 * (a route change moves the generation). */
		if (input && !xnf_l3_fib && xnf_fw_local_fn(ctx, p)) {
			action = XNF_FC_FW_LOCAL;
			slot = XNF_FW_HIT_DEFAULT;
			deps = 0;
		} else {
			action = xnf_fw_linear_fn(ctx, p, &res);
			if (action == XNF_FW_TABLES)
				action = xnf_fw_tables_fn(ctx, p, &res);
			slot = res.slot;
			deps = res.deps;
		}
		if (action < 0) {
			/* The tables are missing or inconsistent: fail
			 * closed. */
			xnf_exception(p, XNF_ACT_DROP, XNF_R_INTERNAL);
			return;
		}
		if (e) {
			e->fw_action = action;
			e->fw_slot = slot;
			e->fw_dep_mask = deps;
			e->fw_deps = deps ? xnf_fw_deps(p) : 0;
			e->fw_gen = p->fc_gen;
			e->parts |= XNF_FC_FW;
		}
	}
	if (e)
		xnf_fc_count(p, XNF_NF_FIREWALL, cached);
	if (action == XNF_FC_FW_LOCAL) {
		xnf_exception(p, cfg->local, XNF_R_LOCAL);
		return;
	}
	if (p->trace)
		xnf_trace_fw_fn(p, slot);
	hit = bpf_map_lookup_elem(&xnf_fw_hits, &slot);
	if (hit) {
		hit->packets++;
		hit->bytes += p->len;
	}
	if (action == XNF_FW_DROP)
		xnf_exception(p, XNF_ACT_DROP, XNF_R_FW_DENY);
	else if (xnf_ct_confirmer == XNF_NF_FIREWALL)
		xnf_ct_confirm(p);
}

#endif /* XNF_FIREWALL_BPF_H */
