// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The firewall NF in BPF: verdicts, reasons and per-rule hit counters for
 * hand-written rules, the BPF program against the linear reference on
 * generated 1,000 and 10,000 rule sets, and rule-set switches under load
 * that must never let a packet be classified by a mix of two sets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <linux/in.h>
#include <bpf/bpf.h>

#include "fixture.h"

/* Whether fw_apply_rules() makes every set use the bit-vector tables;
 * otherwise sets of up to XNF_FW_LINEAR_MAX rules run as a linear scan.
 * The tests run in both forms. */
static bool fw_tables_only;

/* A set of @n rules in slots 0..n-1 (the rest empty) with @def as the
 * default, applied. */
static int fw_apply_rules(struct xnf_dp *dp, const struct xnf_fw_rule *rules,
			  __u32 n, __u32 def)
{
	struct xnf_fw_set *set = xnf_fw_set_new();
	int err = 0;
	__u32 i;

	if (!set)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++)
		if (rules[i].in_use)
			err = xnf_fw_set_replace(set, i, &rules[i]);
	err = err ?: xnf_fw_set_policy(set, def);
	xnf_fw_set_linear(set, !fw_tables_only);
	err = err ?: xnf_fw_apply(dp, set, NULL, 0);
	xnf_fw_set_free(set);
	return err;
}

static bool fw_load(struct fx *f, const struct xnf_fw_rule *rules, __u32 n,
		    __u32 def)
{
	return ASSERT_OK(fw_apply_rules(f->dp, rules, n, def), "xnf_fw_apply");
}

static struct xnf_fw_rule rule4(__u32 prio, __u8 action, const char *src,
				__u8 src_len, const char *dst, __u8 dst_len,
				__u8 proto, __u16 dlo, __u16 dhi)
{
	struct xnf_fw_rule r = { .prio = prio, .action = action, .in_use = 1 };

	if (src) {
		r.flags |= XNF_FW_F_SRC;
		r.family = XNF_AF_INET;
		r.src_len = src_len;
		inet_pton(AF_INET, src, r.src);
	}
	if (dst) {
		r.flags |= XNF_FW_F_DST;
		r.family = XNF_AF_INET;
		r.dst_len = dst_len;
		inet_pton(AF_INET, dst, r.dst);
	}
	if (proto) {
		r.flags |= XNF_FW_F_PROTO;
		r.proto = proto;
	}
	if (dhi) {
		r.flags |= XNF_FW_F_DPORT;
		r.dport_lo = dlo;
		r.dport_hi = dhi;
	}
	return r;
}

static __u64 fw_hits(struct fx *f, __u32 slot)
{
	int ncpus = xnf_ncpus(), cpu;
	struct xnf_fw_hit h[ncpus];
	__u64 n = 0;

	if (bpf_map_lookup_elem(xnf_table_fd(f->dp, XNF_T_FW_HITS), &slot, h))
		return ~0ULL;
	for (cpu = 0; cpu < ncpus; cpu++)
		n += h[cpu].packets;
	return n;
}

struct fw_case {
	const char *what;
	struct pkt_spec pkt;
	int verdict;	/* XDP action of chain "firewall" */
	int slot;	/* rule expected to count the hit, -1 none */
	bool udp_bytes; /* write sport 1024 / dport 53 after the IP
				 * header even if it is not an L4 header */
};

/* slot 0: prio 10 drop udp to 198.51.100.0/24 dport 53
 * slot 1: prio 20 allow from 192.0.2.128/25
 * slot 2: prio 30 drop tcp dport 1000-2000
 * slot 3: prio 40 drop icmp from 192.0.2.0/24
 * slot 4: prio 5  drop 2001:db8:bad::/48 (IPv6 source)
 * default: allow */
static const struct fw_case fw_cases[] = {
	{ "udp dport 53 dropped by prio 10",
	  { .family = 4, .dport = 53 },
	  XDP_DROP,
	  0 },
	{ "udp dport 54 allowed by default",
	  { .family = 4, .dport = 54 },
	  XDP_PASS,
	  -1 },
	{ "udp 53 from 192.0.2.200: prio 10 still first",
	  { .family = 4, .src = "192.0.2.200", .dport = 53 },
	  XDP_DROP,
	  0 },
	{ "tcp 1500 from 192.0.2.200: allowed by prio 20 before prio 30",
	  { .family = 4, .proto = IPPROTO_TCP, .src = "192.0.2.200", .dport = 1500 },
	  XDP_PASS,
	  1 },
	{ "tcp 1000 (range start) dropped",
	  { .family = 4, .proto = IPPROTO_TCP, .dport = 1000 },
	  XDP_DROP,
	  2 },
	{ "tcp 2000 (range end) dropped",
	  { .family = 4, .proto = IPPROTO_TCP, .dport = 2000 },
	  XDP_DROP,
	  2 },
	{ "tcp 999 allowed",
	  { .family = 4, .proto = IPPROTO_TCP, .dport = 999 },
	  XDP_PASS,
	  -1 },
	{ "tcp 2001 allowed",
	  { .family = 4, .proto = IPPROTO_TCP, .dport = 2001 },
	  XDP_PASS,
	  -1 },
	{ "udp 1500 allowed (rule is tcp)",
	  { .family = 4, .dport = 1500 },
	  XDP_PASS,
	  -1 },
	{ "icmp from 192.0.2.1 dropped",
	  { .family = 4, .proto = IPPROTO_ICMP },
	  XDP_DROP,
	  3 },
	{ "non-first fragment whose payload looks like dport 53: no ports, allowed",
	  { .family = 4, .frag_off = 0x0010, .frame_len = 100 },
	  XDP_PASS,
	  -1,
	  true },
	{ "first fragment with UDP header, dport 53: dropped",
	  { .family = 4, .frag_off = 0x2000, .dport = 53 },
	  XDP_DROP,
	  0 },
	{ "IPv6 from 2001:db8:bad::1 dropped",
	  { .family = 6, .src = "2001:db8:bad::1" },
	  XDP_DROP,
	  4 },
	{ "IPv6 udp 53 allowed (v4 rule)",
	  { .family = 6, .dport = 53 },
	  XDP_PASS,
	  -1 },
	{ "ARP passes the firewall untouched", { .family = 0 }, XDP_PASS, -1 },
};

static bool fw_basic_rules(struct fx *f)
{
	struct xnf_fw_rule r[5] = {
		rule4(10, XNF_FW_DROP, NULL, 0, "198.51.100.0", 24, IPPROTO_UDP,
		      53, 53),
		rule4(20, XNF_FW_ALLOW, "192.0.2.128", 25, NULL, 0, 0, 0, 0),
		rule4(30, XNF_FW_DROP, NULL, 0, NULL, 0, IPPROTO_TCP, 1000, 2000),
		rule4(40, XNF_FW_DROP, "192.0.2.0", 24, NULL, 0, IPPROTO_ICMP,
		      0, 0),
		{ .prio = 5,
		  .action = XNF_FW_DROP,
		  .in_use = 1,
		  .flags = XNF_FW_F_SRC,
		  .family = XNF_AF_INET6,
		  .src_len = 48 },
	};

	inet_pton(AF_INET6, "2001:db8:bad::", r[4].src);
	return fw_load(f, r, 5, XNF_FW_ALLOW);
}

static void fw_run_cases(bool fused)
{
	__u64 hits_before, drops = 0;
	struct xnf_stats st;
	__u8 buf[PKT_MAX];
	struct fx_out out;
	struct fx f;
	size_t i;
	int len;

	if (!fx_open(&f))
		return;
	if (!fw_basic_rules(&f) || !fx_chain(&f, "firewall", fused, false))
		goto out;
	for (i = 0; i < sizeof(fw_cases) / sizeof(fw_cases[0]); i++) {
		const struct fw_case *c = &fw_cases[i];

		len = pkt_build(buf, sizeof(buf), &c->pkt);
		if (!ASSERT_GE(len, 0, c->what))
			continue;
		if (c->udp_bytes) {
			buf[14 + 20 + 0] = 1024 >> 8;
			buf[14 + 20 + 3] = 53;
		}
		hits_before = c->slot >= 0 ? fw_hits(&f, c->slot) : 0;
		if (!ASSERT_OK(fx_run(&f, buf, len, &out), c->what))
			continue;
		ASSERT_EQ(out.ret, c->verdict, c->what);
		ASSERT_EQ(out.len, len, c->what);
		ASSERT_MEM(out.data, buf, len, c->what);
		if (c->slot >= 0)
			ASSERT_EQ(fw_hits(&f, c->slot), hits_before + 1, c->what);
		drops += c->verdict == XDP_DROP;
	}
	if (fx_stats(&f, &st)) {
		ASSERT_EQ(st.drop[XNF_R_FW_DENY], drops,
			  "every deny counted as fw_deny");
		ASSERT_EQ(fx_drops(&st), drops, "no other drop reason");
		ASSERT_EQ(st.nf[XNF_NF_FIREWALL].drop, drops,
			  "firewall row drops");
		ASSERT_EQ(st.nf[XNF_NF_FIREWALL].in, i,
			  "firewall saw every packet");
	}
out:
	fx_close(&f);
}

TEST(firewall_rules)
{
	fw_run_cases(false);
}

TEST(firewall_rules_fused)
{
	fw_run_cases(true);
}

TEST(firewall_rules_tables)
{
	fw_tables_only = true;
	fw_run_cases(false);
	fw_run_cases(true);
	fw_tables_only = false;
}

TEST(firewall_default_drop_and_empty)
{
	struct pkt_spec spec = { .family = 4 };
	__u8 buf[PKT_MAX];
	struct fx_out out;
	struct xnf_stats st;
	struct fx f;
	int len = pkt_build(buf, sizeof(buf), &spec);

	if (!fx_open(&f))
		return;
	if (!fx_chain(&f, "firewall", false, false))
		goto out;
	/* Nothing committed yet: generation 0 is all zero, i.e. allow. */
	ASSERT_OK(fx_run(&f, buf, len, &out), "run");
	ASSERT_EQ(out.ret, XDP_PASS, "empty rule set allows");
	if (!fw_load(&f, NULL, 0, XNF_FW_DROP))
		goto out;
	ASSERT_OK(fx_run(&f, buf, len, &out), "run");
	ASSERT_EQ(out.ret, XDP_DROP, "default drop");
	spec.family = 6;
	len = pkt_build(buf, sizeof(buf), &spec);
	ASSERT_OK(fx_run(&f, buf, len, &out), "run");
	ASSERT_EQ(out.ret, XDP_DROP, "default drop for IPv6 too");
	if (fx_stats(&f, &st))
		ASSERT_EQ(st.drop[XNF_R_FW_DENY], 2, "both counted as fw_deny");
out:
	fx_close(&f);
}

/* A packet that falls inside rule r's fields, or a random one. */
static void fw_random_pkt(const struct xnf_fw_rule *r, unsigned int *seed,
			  struct xnf_fw_pkt *p)
{
	bool inside = r && (rand_r(seed) & 1);
	__u32 i, bits;

	memset(p, 0, sizeof(*p));
	p->family = inside && r->family ?
			    r->family :
			    (rand_r(seed) % 7 ? XNF_AF_INET : XNF_AF_INET6);
	bits = p->family == XNF_AF_INET ? 4 : 16;
	for (i = 0; i < bits; i++) {
		p->src[i] = rand_r(seed);
		p->dst[i] = rand_r(seed);
	}
	if (rand_r(seed) % 3) { /* look like the generator's networks */
		p->src[0] = p->family == XNF_AF_INET ? 10 : 0x20;
		p->dst[0] = p->family == XNF_AF_INET ? 10 : 0x20;
	}
	if (inside && (r->flags & XNF_FW_F_SRC))
		for (i = 0; i < r->src_len; i++)
			p->src[i / 8] = (p->src[i / 8] & ~(0x80 >> (i % 8))) |
					(r->src[i / 8] & (0x80 >> (i % 8)));
	if (inside && (r->flags & XNF_FW_F_DST))
		for (i = 0; i < r->dst_len; i++)
			p->dst[i / 8] = (p->dst[i / 8] & ~(0x80 >> (i % 8))) |
					(r->dst[i / 8] & (0x80 >> (i % 8)));
	p->proto = inside && (r->flags & XNF_FW_F_PROTO) ?
			   r->proto :
			   (rand_r(seed) % 3 ? IPPROTO_TCP : IPPROTO_UDP);
	if (p->family == XNF_AF_INET6 && p->proto == IPPROTO_ICMP)
		p->proto = IPPROTO_ICMPV6;
	p->ports = p->proto == IPPROTO_TCP || p->proto == IPPROTO_UDP;
	p->sport = rand_r(seed);
	p->dport = rand_r(seed) % 4 ? rand_r(seed) % 1024 : rand_r(seed);
	if (inside && (r->flags & XNF_FW_F_SPORT))
		p->sport = r->sport_lo +
			   rand_r(seed) % (r->sport_hi - r->sport_lo + 1);
	if (inside && (r->flags & XNF_FW_F_DPORT))
		p->dport = r->dport_lo +
			   rand_r(seed) % (r->dport_hi - r->dport_lo + 1);
}

/* Extra matches on about half of @rules (those a rule's protocol and
 * family allow): ct state sets (the packets here are untracked: no
 * conntrack NF in the chain), iif one of @ifs, tcp flags, icmp types. */
static void fw_add_extras(struct xnf_fw_rule *rules, __u32 n,
			  const __u32 ifs[2], unsigned int *seed)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		struct xnf_fw_rule *r = &rules[i];
		bool icmp = (r->flags & XNF_FW_F_PROTO) &&
			    ((r->proto == IPPROTO_ICMP &&
			      r->family != XNF_AF_INET6) ||
			     (r->proto == IPPROTO_ICMPV6 &&
			      r->family != XNF_AF_INET));

		if (rand_r(seed) & 1)
			continue;
		if (rand_r(seed) & 1) {
			r->flags |= XNF_FW_F_CT;
			r->ct_states = 1 + rand_r(seed) % 31;
		}
		if (rand_r(seed) % 3 == 0) {
			r->flags |= XNF_FW_F_IIF;
			r->iif = ifs[rand_r(seed) & 1];
		}
		if ((r->flags & XNF_FW_F_PROTO) && r->proto == IPPROTO_TCP &&
		    (rand_r(seed) & 1)) {
			r->tcp_mask = 1 + rand_r(seed) % 255;
			if (rand_r(seed) & 1) {
				r->flags |= XNF_FW_F_TCP_ANY;
			} else {
				r->flags |= XNF_FW_F_TCP_FLAGS;
				r->tcp_flags = rand_r(seed) & r->tcp_mask;
			}
		}
		if (icmp && (rand_r(seed) & 1)) {
			r->flags |= XNF_FW_F_ICMP_TYPE;
			r->icmp_type = rand_r(seed) % 4;
			if (rand_r(seed) & 1) {
				r->flags |= XNF_FW_F_ICMP_CODE;
				r->icmp_code = rand_r(seed) % 2;
			}
		}
	}
}

/* The packet's values for extra matches as the frame will carry them:
 * near rule @r's now and then. */
static void fw_pkt_extra(const struct xnf_fw_rule *r, __u32 ifindex,
			 unsigned int *seed, struct xnf_fw_pkt *p)
{
	p->ifindex = ifindex;
	p->ct_state = XNF_CT_UNTRACKED;
	p->tcp = p->proto == IPPROTO_TCP;
	p->tcp_flags = rand_r(seed);
	if ((r->flags & XNF_FW_F_TCP_FLAGS) && (rand_r(seed) & 1))
		p->tcp_flags = (p->tcp_flags & ~r->tcp_mask) | r->tcp_flags;
	p->icmp = p->proto == IPPROTO_ICMP || p->proto == IPPROTO_ICMPV6;
	p->icmp_type = rand_r(seed) % 4;
	p->icmp_code = rand_r(seed) % 2;
}

static int fw_pkt_frame(const struct xnf_fw_pkt *p, __u8 *buf)
{
	char src[64], dst[64];
	struct pkt_spec s = {
		.family = p->family,
		.proto = p->proto,
		.sport = p->sport,
		.dport = p->dport,
		.src = src,
		.dst = dst,
		.frame_len = 128,
	};

	inet_ntop(p->family == XNF_AF_INET ? AF_INET : AF_INET6, p->src, src,
		  sizeof(src));
	inet_ntop(p->family == XNF_AF_INET ? AF_INET : AF_INET6, p->dst, dst,
		  sizeof(dst));
	/* (pkt_build reads port 0 as "default": callers skip such tuples.) */
	int len = pkt_build(buf, PKT_MAX, &s);
	size_t l4 = 14 + (p->family == XNF_AF_INET ? 20 : 40);

	/* The TCP flags and ICMP type and code of @p, over what pkt_build
	 * put there (the firewall reads no checksum). */
	if (len > 0 && p->tcp)
		buf[l4 + 13] = p->tcp_flags;
	if (len > 0 && p->icmp) {
		buf[l4] = p->icmp_type;
		buf[l4 + 1] = p->icmp_code;
	}
	return len;
}

/* Runs @npkts packets through the BPF firewall and the linear reference:
 * same verdict, the expected rule's hit counter moved by one, and the
 * total of all hit counters equals the packets that matched a rule. */
static void fw_differential_x(__u32 nrules, int npkts, bool extras)
{
	struct xnf_fw_rule *rules = calloc(nrules, sizeof(*rules));
	unsigned int seed = nrules;
	int ncpus = xnf_ncpus(), i, matched = 0, mismatches = 0;
	struct xnf_fw_pkt p;
	__u8 buf[PKT_MAX];
	struct fx_out out;
	__u64 total = 0;
	struct fx f;

	if (!ASSERT_TRUE(rules, "calloc"))
		return;
	if (!fx_open(&f))
		goto out_free;
	if (!ASSERT_OK(xnf_fw_generate(rules, nrules, 7), "generate"))
		goto out;
	if (extras)
		fw_add_extras(rules, nrules, f.ifindex, &seed);
	if (!fw_load(&f, rules, nrules, XNF_FW_ALLOW) ||
	    !fx_chain(&f, "firewall", false, false))
		goto out;
	for (i = 0; i < npkts; i++) {
		int slot, want, len;

		fw_random_pkt(&rules[rand_r(&seed) % nrules], &seed, &p);
		if (!p.sport || !p.dport)
			continue;
		if (extras)
			fw_pkt_extra(&rules[rand_r(&seed) % nrules],
				     f.ifindex[0], &seed, &p);
		slot = xnf_fw_linear(rules, nrules, &p);
		want = slot >= 0 && rules[slot].action == XNF_FW_DROP ?
			       XDP_DROP :
			       XDP_PASS;
		len = fw_pkt_frame(&p, buf);
		if (!ASSERT_GE(len, 0, "build frame") ||
		    !ASSERT_OK(fx_run(&f, buf, len, &out), "run"))
			break;
		if (out.ret != want && mismatches++ < 5)
			ASSERT_EQ(out.ret, want,
				  "BPF verdict equals the linear scan");
		matched += slot >= 0;
	}
	ASSERT_EQ(mismatches, 0, "no verdict differed from the linear scan");
	ASSERT_GE(matched, npkts / (extras ? 8 : 4),
		  "a good share of packets hit rules");
	{
		struct xnf_fw_hit *h = calloc((size_t)ncpus * XNF_FW_MAX_RULES,
					      sizeof(*h));
		__u32 s;

		for (s = 0; h && s < nrules; s++) {
			int cpu;

			if (bpf_map_lookup_elem(xnf_table_fd(f.dp, XNF_T_FW_HITS),
						&s, h))
				break;
			for (cpu = 0; cpu < ncpus; cpu++)
				total += h[cpu].packets;
		}
		free(h);
	}
	ASSERT_EQ(total, matched,
		  "hit counters add up to the packets that matched");
out:
	fx_close(&f);
out_free:
	free(rules);
}

static void fw_differential(__u32 nrules, int npkts)
{
	fw_differential_x(nrules, npkts, false);
}

/* Rules with ct state (of untracked packets), iif, tcp flags and icmp
 * type matches: the linear scan, the tables (a candidate whose extra
 * matches fail gives way to the next of its word) and the reference
 * agree, in the linear form and on the tables, tail-called. */
TEST(firewall_bpf_vs_linear_extra)
{
	fw_differential_x(10, 3000, true);
	fw_differential_x(XNF_FW_LINEAR_MAX + 1, 3000, true);
	fw_differential_x(1000, 3000, true);
	fw_tables_only = true;
	fw_differential_x(10, 3000, true);
	fw_tables_only = false;
}

/* Around the bound of the linear form (XNF_FW_LINEAR_MAX) and a small set
 * on the tables. */
TEST(firewall_bpf_vs_linear_small)
{
	fw_differential(10, 2000);
	fw_differential(XNF_FW_LINEAR_MAX, 4000);
	fw_differential(XNF_FW_LINEAR_MAX + 1, 4000);
	fw_tables_only = true;
	fw_differential(10, 2000);
	fw_differential(XNF_FW_LINEAR_MAX, 4000);
	fw_tables_only = false;
}

TEST(firewall_bpf_vs_linear_1000)
{
	fw_differential(1000, 4000);
}

TEST(firewall_bpf_vs_linear_10000)
{
	fw_differential(10000, 4000);
}

/* Hitless switches: rule sets A and B both drop packet P, by rules at
 * different positions and with different fields, so a packet classified
 * with classes of A and bitmaps of B (or any other mix) would find no
 * common rule and be allowed by the default. One thread flips between A
 * and B while another runs P through the firewall in large batches: every
 * run must drop. The batches go on until FW_OVERLAPS of them saw the rule
 * set switch while they ran, however the two threads are scheduled
 * (FX_WAIT_MS only guards against a hang). */
#define FW_OVERLAPS 20

struct fw_flipper {
	struct fx *f;
	struct xnf_fw_rule a[3], b[3];
	volatile bool stop;
	volatile int commits;
	int err;
};

static void *fw_flip(void *arg)
{
	struct fw_flipper *fl = arg;
	struct xnf_fw_rule *sets[2] = { fl->a, fl->b };
	__u32 k;

	for (k = 0; !fl->stop; k++) {
		fl->err = fw_apply_rules(fl->f->dp, sets[k & 1], 3, XNF_FW_ALLOW);
		if (fl->err)
			break;
		fl->commits++;
	}
	return NULL;
}

static void fw_switch_is_atomic(void);

TEST(firewall_switch_is_atomic)
{
	fw_switch_is_atomic();
}

TEST(firewall_switch_is_atomic_tables)
{
	fw_tables_only = true;
	fw_switch_is_atomic();
	fw_tables_only = false;
}

static void fw_switch_is_atomic(void)
{
	struct fw_flipper fl = {
		.a = {
			rule4(10, XNF_FW_DROP, "192.0.2.0", 24, NULL, 0, IPPROTO_UDP, 7, 7),
			rule4(20, XNF_FW_ALLOW, "203.0.113.0", 24, NULL, 0, 0, 0, 0),
			rule4(30, XNF_FW_ALLOW, NULL, 0, NULL, 0, IPPROTO_TCP, 0, 0),
		},
		.b = {
			rule4(10, XNF_FW_ALLOW, NULL, 0, NULL, 0, IPPROTO_TCP, 0, 0),
			rule4(20, XNF_FW_ALLOW, "203.0.113.0", 24, NULL, 0, 0, 0, 0),
			rule4(30, XNF_FW_DROP, NULL, 0, "198.51.100.0", 24, 0, 0, 0),
		},
	};
	struct pkt_spec spec = { .family = 4 };
	__u8 buf[PKT_MAX];
	struct xnf_stats st;
	struct fx_out out;
	pthread_t thr;
	__u64 runs = 0;
	struct fx f;
	int len = pkt_build(buf, sizeof(buf), &spec), overlaps = 0;
	long deadline = fx_now_ms() + FX_WAIT_MS;

	if (!fx_open(&f))
		return;
	fl.f = &f;
	if (!fw_load(&f, fl.a, 3, XNF_FW_ALLOW) ||
	    !fx_chain(&f, "firewall", false, false))
		goto out;
	if (!ASSERT_OK(pthread_create(&thr, NULL, fw_flip, &fl), "start flipper"))
		goto out;
	while (overlaps < FW_OVERLAPS && !fl.err && fx_now_ms() < deadline) {
		int before = fl.commits;
		struct xdp_md ctx = { .ingress_ifindex = f.ifindex[0],
				      .data_end = len };
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf,
			    .data_size_in = len, .data_out = out.data,
			    .data_size_out = sizeof(out.data), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 2000, );

		if (!ASSERT_OK(bpf_prog_test_run_opts(xnf_chain_prog_fd(f.chain),
						      &opts),
			       "run batch"))
			break;
		runs += 2000;
		overlaps += fl.commits != before;
	}
	fl.stop = true;
	pthread_join(thr, NULL);
	ASSERT_OK(fl.err, "commits");
	ASSERT_EQ(overlaps, FW_OVERLAPS,
		  "batches during which the rule set switched");
	if (fx_stats(&f, &st)) {
		ASSERT_EQ(st.nf[XNF_NF_ENTRY].in, runs, "every run counted");
		ASSERT_EQ(st.drop[XNF_R_FW_DENY], runs,
			  "every run dropped: no mixed rule set");
		ASSERT_EQ(st.nf[XNF_NF_ENTRY].pass, 0, "none allowed");
	}
out:
	fx_close(&f);
}

/* Without a conntrack NF in the chain every packet is untracked (nft's
 * `ct state untracked`): a rule for new or established connections
 * matches none, one for untracked packets matches all; in the linear
 * form and on the tables. */
static void fw_ct_untracked(void)
{
	struct pkt_spec spec = { .family = 4, .proto = IPPROTO_TCP };
	struct xnf_fw_rule r[2] = {
		{ .prio = 10,
		  .action = XNF_FW_ALLOW,
		  .in_use = 1,
		  .flags = XNF_FW_F_CT,
		  .ct_states = 1 << XNF_CT_NEW | 1 << XNF_CT_ESTABLISHED },
		{ .prio = 20,
		  .action = XNF_FW_DROP,
		  .in_use = 1,
		  .flags = XNF_FW_F_CT,
		  .ct_states = 1 << XNF_CT_UNTRACKED },
	};
	__u8 buf[PKT_MAX];
	struct fx_out out;
	struct fx f;
	int len;

	if (!fx_open(&f))
		return;
	if (!fw_load(&f, r, 2, XNF_FW_ALLOW) ||
	    !fx_chain(&f, "firewall", false, false))
		goto out;
	len = pkt_build(buf, sizeof(buf), &spec);
	if (!ASSERT_OK(fx_run(&f, buf, len, &out), "run"))
		goto out;
	ASSERT_EQ(out.ret, XDP_DROP, "untracked: not new, dropped by prio 20");
	ASSERT_EQ(fw_hits(&f, 1), 1, "prio 20 counted it");
	ASSERT_EQ(fw_hits(&f, 0), 0, "prio 10 did not match");
	/* Without the untracked rule the default decides. */
	r[1].in_use = 0;
	if (!fw_load(&f, r, 2, XNF_FW_DROP))
		goto out;
	ASSERT_OK(fx_run(&f, buf, len, &out), "run");
	ASSERT_EQ(out.ret, XDP_DROP, "untracked: default drop");
	r[1].in_use = 1;
	r[1].action = XNF_FW_ALLOW;
	if (!fw_load(&f, r, 2, XNF_FW_DROP))
		goto out;
	ASSERT_OK(fx_run(&f, buf, len, &out), "run");
	ASSERT_EQ(out.ret, XDP_PASS, "untracked: allowed by prio 20");
out:
	fx_close(&f);
}

TEST(firewall_ct_state_untracked)
{
	fw_ct_untracked();
	fw_tables_only = true;
	fw_ct_untracked();
	fw_tables_only = false;
}

/* fw_input: with the default, kernel, a packet to one of the router's own
 * addresses (a local route; in fib mode a local address of the kernel's)
 * goes to the kernel before the rules, reason local, however the rules
 * and the default policy say; a forwarded one meets the rules. With
 * rules, the rules decide both. Twice each: the second packet from the
 * flow cache. */
static const char fw_fib_setup[] =
	"ip addr add 198.51.100.254/24 dev ut1 && "
	"ip -6 addr add 2001:db8:2::fe/64 dev ut1 nodad && "
	"sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1";
static const char fw_fib_cleanup[] =
	"sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0; "
	"ip -6 addr del 2001:db8:2::fe/64 dev ut1 2>/dev/null; "
	"ip addr del 198.51.100.254/24 dev ut1 2>/dev/null; true";

static bool fw_set_input(struct fx *f, __u32 input)
{
	struct xnf_config cfg;

	if (!ASSERT_OK(xnf_cfg_read(f->dp, &cfg), "read xnf_cfg"))
		return false;
	cfg.fw_input = input;
	return ASSERT_OK(xnf_cfg_write(f->dp, &cfg), "write xnf_cfg");
}

static void fw_input_case(struct fx *f, const struct pkt_spec *spec, int ret,
			  __u32 reason, const char *what)
{
	struct xnf_stats st;
	__u8 buf[PKT_MAX];
	struct fx_out out;
	int len, i;

	len = pkt_build(buf, sizeof(buf), spec);
	for (i = 0; i < 2; i++) {
		if (!fx_stats_reset(f) ||
		    !ASSERT_OK(fx_run(f, buf, len, &out), what))
			return;
		ASSERT_EQ(out.ret, ret, what);
		if (fx_stats(f, &st))
			fx_expect_entry(&st, ret, reason, what);
	}
}

static void fw_input_split(bool fused, bool fib)
{
	struct pkt_spec to4 = { .family = 4, .dst = "198.51.100.254" };
	struct pkt_spec to6 = { .family = 6, .dst = "2001:db8:2::fe" };
	struct pkt_spec fwd4 = { .family = 4, .dst = "198.51.100.7" };
	struct fx f;

	if (!fx_open(&f))
		return;
	if (fib && !ASSERT_OK(fx_sh("%s", fw_fib_setup), "kernel addresses"))
		goto out;
	if (!fx_l3_table(&f) || !fw_load(&f, NULL, 0, XNF_FW_DROP) ||
	    !fx_chain(&f, "firewall,l3fwd", fused, fib))
		goto out;
	fw_input_case(&f, &to4, XDP_PASS, XNF_R_LOCAL,
		      "kernel: v4 to the router passes, reason local");
	fw_input_case(&f, &to6, XDP_PASS, XNF_R_LOCAL,
		      "kernel: v6 to the router passes, reason local");
	fw_input_case(&f, &fwd4, XDP_DROP, XNF_R_FW_DENY,
		      "kernel: forwarded, the default drops");
	if (!fw_set_input(&f, XNF_FW_INPUT_RULES))
		goto out;
	fw_input_case(&f, &to4, XDP_DROP, XNF_R_FW_DENY,
		      "rules: v4 to the router, the default drops");
	fw_input_case(&f, &to6, XDP_DROP, XNF_R_FW_DENY,
		      "rules: v6 to the router, the default drops");
	if (!fw_set_input(&f, XNF_FW_INPUT_KERNEL))
		goto out;
	fw_input_case(&f, &to4, XDP_PASS, XNF_R_LOCAL,
		      "kernel again: v4 to the router passes");
out:
	if (fib)
		fx_sh("%s", fw_fib_cleanup);
	fx_close(&f);
}

TEST(firewall_input_split)
{
	SUBTEST("tail-called")
		fw_input_split(false, false);
	SUBTEST("fused")
		fw_input_split(true, false);
	SUBTEST("fib")
		fw_input_split(false, true);
}

/* ---- with the conntrack NF ---- */

/* A TCP frame @src:@sport -> @dst:@dport with @flags. */
static int fw_tcp_frame(__u8 *buf, const char *src, const char *dst,
			__u16 sport, __u16 dport, __u8 flags)
{
	struct pkt_spec s = { .family = 4,
			      .proto = IPPROTO_TCP,
			      .src = src,
			      .dst = dst,
			      .sport = sport,
			      .dport = dport };
	int len = pkt_build(buf, PKT_MAX, &s);

	if (len > 0)
		buf[14 + 20 + 13] = flags;
	return len;
}

static void fw_ct_expect(struct fx *f, const char *src, const char *dst,
			 __u16 sport, __u16 dport, __u8 flags, int ret,
			 int slot, const char *what)
{
	__u64 before = fw_hits(f, slot < 0 ? XNF_FW_HIT_DEFAULT : slot);
	__u8 buf[PKT_MAX];
	struct fx_out out;
	int len = fw_tcp_frame(buf, src, dst, sport, dport, flags);

	if (!ASSERT_GT(len, 0, what) ||
	    !ASSERT_OK(fx_run(f, buf, len, &out), what))
		return;
	ASSERT_EQ(out.ret, ret, what);
	ASSERT_EQ(fw_hits(f, slot < 0 ? XNF_FW_HIT_DEFAULT : slot), before + 1,
		  what);
}

/* The classic stateful policy on chain conntrack,firewall: replies of a
 * connection let in (established), flag combinations no stack sends and
 * unsolicited replies dropped (invalid), new connections only from the
 * inside port (iif), and a new connection the rules drop leaves no entry
 * behind. */
static void fw_ct_policy(bool fused)
{
	const char *a = "192.0.2.1", *b = "198.51.100.1";
	struct xnf_fw_rule r[3] = {
		{ .prio = 10,
		  .action = XNF_FW_ALLOW,
		  .in_use = 1,
		  .flags = XNF_FW_F_CT,
		  .ct_states = 1 << XNF_CT_ESTABLISHED | 1 << XNF_CT_RELATED },
		{ .prio = 20,
		  .action = XNF_FW_DROP,
		  .in_use = 1,
		  .flags = XNF_FW_F_CT,
		  .ct_states = 1 << XNF_CT_INVALID },
		{ .prio = 30,
		  .action = XNF_FW_ALLOW,
		  .in_use = 1,
		  .flags = XNF_FW_F_CT | XNF_FW_F_IIF,
		  .ct_states = 1 << XNF_CT_NEW },
	};
	struct fx f;

	if (!fx_open(&f))
		return;
	r[2].iif = f.ifindex[0];
	if (!fw_load(&f, r, 3, XNF_FW_DROP) ||
	    !fx_chain(&f, "conntrack,firewall", fused, false))
		goto out;
	fw_ct_expect(&f, a, b, 40000, 80, 0x02, XDP_PASS, 2,
		     "SYN from the inside: new, allowed by iif");
	fw_ct_expect(&f, b, a, 80, 40000, 0x12, XDP_PASS, 0,
		     "SYN-ACK: established");
	fw_ct_expect(&f, a, b, 40000, 80, 0x10, XDP_PASS, 0, "ACK: established");
	fw_ct_expect(&f, a, b, 40001, 80, 0x03, XDP_DROP, 1, "SYN+FIN: invalid");
	fw_ct_expect(&f, b, a, 443, 40002, 0x12, XDP_DROP, 1,
		     "unsolicited SYN-ACK: invalid");
	/* New connections only from ut1 now: ut0's SYN meets the default,
	 * and its drop leaves no entry (the reply is no reply). */
	r[2].iif = f.ifindex[1];
	if (!fw_load(&f, r, 3, XNF_FW_DROP))
		goto out;
	fw_ct_expect(&f, a, b, 40003, 80, 0x02, XDP_DROP, -1,
		     "SYN from ut0 with new allowed only from ut1: default");
	fw_ct_expect(&f, b, a, 80, 40003, 0x12, XDP_DROP, 1,
		     "SYN-ACK to a dropped SYN: invalid, no entry was made");
	fw_ct_expect(&f, a, b, 40000, 80, 0x10, XDP_PASS, 0,
		     "the earlier connection kept over the rule change");
out:
	fx_close(&f);
}

TEST(firewall_ct_policy)
{
	SUBTEST("tail-called")
		fw_ct_policy(false);
	SUBTEST("fused")
		fw_ct_policy(true);
	SUBTEST("tables") {
		fw_tables_only = true;
		fw_ct_policy(false);
		fw_tables_only = false;
	}
}
