// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Flow cache unit tests (bpf/fcache.bpf.h), each tail-called and fused:
 *   - a route, rule or FDB change after a cached result changes the next
 *     packet's result (routes also through a batch's copy flip);
 *   - a rule's hit counters stay exact over cached decisions;
 *   - two flows that share an entry each get their own result;
 *   - hits + misses = the packets that reached each NF's lookup, and a
 *     repeated flow hits;
 *   - cache off and on: the same frames out, the same counters;
 *   - the bypass: a window of misses skips the lookups for a while.
 * The process is pinned to one CPU while a case runs: the cache is per
 * CPU, and "the second packet hits" holds on the CPU of the first. Each
 * case turns the cache on itself (XNF_UT_FLOW_CACHE=off turns it off in
 * fx_open for the other tests).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>

#include "fixture.h"
#include "xnf_nh.h"
#include "xnf_fc.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct pin {
	cpu_set_t old;
	bool ok;
};

/* Runs the caller on the CPU it is on now, until unpin(). */
static bool pin(struct pin *p)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	p->ok = !sched_getaffinity(0, sizeof(p->old), &p->old);
	if (!ASSERT_TRUE(p->ok && cpu >= 0, "read CPU affinity"))
		return false;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return ASSERT_OK(sched_setaffinity(0, sizeof(one), &one), "pin CPU");
}

static void unpin(struct pin *p)
{
	if (p->ok)
		sched_setaffinity(0, sizeof(p->old), &p->old);
}

static bool fc_set(struct fx *f, bool on)
{
	struct xnf_config cfg;

	if (!ASSERT_OK(xnf_cfg_read(f->dp, &cfg), "read xnf_cfg"))
		return false;
	cfg.flow_cache = on;
	return ASSERT_OK(xnf_cfg_write(f->dp, &cfg), "write xnf_cfg");
}

/* Fresh tables with the cache on, @chain loaded, the caller pinned to its
 * CPU; false after a failed assertion (fc_close all the same). */
static bool fc_open(struct fx *f, struct pin *pn, const char *chain, bool fused)
{
	pn->ok = false;
	if (!fx_open(f))
		return false;
	return pin(pn) && fc_set(f, true) && fx_chain(f, chain, fused, false);
}

static void fc_close(struct fx *f, struct pin *pn)
{
	unpin(pn);
	fx_close(f);
}

/* One frame; its XDP action, or -1 after a failed assertion. */
static int run1(struct fx *f, const void *frame, int len, struct fx_out *out)
{
	if (!ASSERT_OK(fx_run(f, frame, len, out), "fx_run"))
		return -1;
	return out->ret;
}

static int build(__u8 *buf, const struct pkt_spec *s)
{
	int len = pkt_build(buf, PKT_MAX, s);

	ASSERT_GT(len, 0, "pkt_build");
	return len;
}

static bool fc_counts(struct fx *f, __u32 nf, __u64 hit, __u64 miss,
		      const char *what)
{
	struct xnf_stats st;

	if (!fx_stats(f, &st))
		return false;
	return ASSERT_EQ(st.fc_hit[nf], hit, what) &&
	       ASSERT_EQ(st.fc_miss[nf], miss, what);
}

static bool dmac_is(const struct fx_out *o, __u32 port, const char *what)
{
	__u8 mac[6];

	fx_nh_mac(port, mac);
	return ASSERT_MEM(o->data, mac, 6, what);
}

static void route_change(bool fused)
{
	struct pkt_spec s = { .family = 4, .dst = "198.51.100.7" };
	__u8 frame[PKT_MAX], addr[4];
	struct fx_out out;
	struct pin pn;
	struct fx f;
	int len;

	if (!fc_open(&f, &pn, "l3fwd", fused) ||
	    !fx_route4(&f, "198.51.100.0/24", 1, XNF_RT_UNICAST))
		goto out;
	len = build(frame, &s);
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_REDIRECT, "first");
	dmac_is(&out, 1, "first: next hop on ut1");
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_REDIRECT, "second");
	dmac_is(&out, 1, "second: next hop on ut1");
	fc_counts(&f, XNF_NF_L3FWD, 1, 1, "the second hit");

	/* Replaced: the next packet takes the new route. */
	if (!fx_route4(&f, "198.51.100.0/24", 2, XNF_RT_UNICAST))
		goto out;
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_REDIRECT, "replaced");
	dmac_is(&out, 2, "replaced: next hop on ut2");
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_REDIRECT, "replaced, again");
	dmac_is(&out, 2, "replaced, again: next hop on ut2");
	fc_counts(&f, XNF_NF_L3FWD, 2, 2, "a miss after the change");

	/* A more specific route. */
	if (!fx_route4(&f, "198.51.100.0/28", 1, XNF_RT_UNICAST))
		goto out;
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_REDIRECT, "/28");
	dmac_is(&out, 1, "/28: next hop on ut1");

	/* Deleted: no route (passed, the default). */
	inet_pton(AF_INET, "198.51.100.0", addr);
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, addr, 28), "del /28");
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, addr, 24), "del /24");
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_PASS, "deleted");
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_PASS, "deleted, again");

	/* A batch: written to the spare copy, seen at the flip. */
	if (!ASSERT_OK(xnf_route_batch_begin(f.dp), "batch begin"))
		goto out;
	if (!fx_route4(&f, "198.51.100.0/24", 2, XNF_RT_UNICAST)) {
		xnf_route_batch_abort(f.dp);
		goto out;
	}
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_PASS, "batch not committed");
	if (!ASSERT_OK(xnf_route_batch_commit(f.dp), "batch commit"))
		goto out;
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_REDIRECT, "batch committed");
	dmac_is(&out, 2, "batch committed: next hop on ut2");
out:
	fc_close(&f, &pn);
}

TEST(fcache_route_change)
{
	SUBTEST("tail-called")
		route_change(false);
	SUBTEST("fused")
		route_change(true);
}

/* drop udp dport 7 (the frames' default port), default allow. */
static const struct xnf_fw_rule drop_dport7 = {
	.prio = 10,
	.flags = XNF_FW_F_PROTO | XNF_FW_F_DPORT,
	.action = XNF_FW_DROP,
	.proto = IPPROTO_UDP,
	.dport_lo = 7,
	.dport_hi = 7,
	.in_use = 1,
};

static bool hits_of(struct fx *f, __u32 slot, __u64 packets, __u64 bytes,
		    const char *what)
{
	struct xnf_fw_hit *hits;
	bool ok;

	hits = calloc(XNF_FW_HITS, sizeof(*hits));
	if (!ASSERT_TRUE(hits, "calloc"))
		return false;
	ok = ASSERT_OK(xnf_fw_hits_read(f->dp, hits), "xnf_fw_hits_read") &&
	     ASSERT_EQ(hits[slot].packets, packets, what) &&
	     ASSERT_EQ(hits[slot].bytes, bytes, what);
	free(hits);
	return ok;
}

static void rule_change(bool fused)
{
	struct xnf_fw_rule r = drop_dport7;
	struct pkt_spec s = { .family = 4 };
	__u8 frame[PKT_MAX];
	struct fx_out out;
	struct pin pn;
	struct fx f;
	int len, i;

	if (!fc_open(&f, &pn, "firewall", fused) ||
	    !fx_fw_load(&f, &r, 1, XNF_FW_ALLOW))
		goto out;
	len = build(frame, &s);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(run1(&f, frame, len, &out), XDP_DROP, "dropped");
	fc_counts(&f, XNF_NF_FIREWALL, 4, 1, "4 of 5 from the cache");
	hits_of(&f, 0, 5, 5ull * len, "the rule counted every packet");

	/* The rule now allows: the next packet passes. */
	r.action = XNF_FW_ALLOW;
	if (!fx_fw_load(&f, &r, 1, XNF_FW_DROP))
		goto out;
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_PASS, "rule allows");
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_PASS, "rule allows, again");
	hits_of(&f, 0, 2, 2ull * len, "the changed rule counts from 0");

	/* Another port: the default (drop) decides, no rule counts. */
	r.dport_lo = r.dport_hi = 8;
	if (!fx_fw_load(&f, &r, 1, XNF_FW_DROP))
		goto out;
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_DROP, "default drops");
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_DROP, "default drops, again");
	hits_of(&f, 0, 0, 0, "no rule matched");
	/* The second from the cache: the default counted both. */
	hits_of(&f, XNF_FW_HIT_DEFAULT, 2, 2ull * len,
		"the default policy counted what it decided");

	/* Only the default changes. */
	if (!fx_fw_default(&f, XNF_FW_ALLOW))
		goto out;
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_PASS, "default allows");
out:
	fc_close(&f, &pn);
}

TEST(fcache_rule_change)
{
	SUBTEST("tail-called")
		rule_change(false);
	SUBTEST("fused")
		rule_change(true);
}

/* A frame of @s with TCP flags @flags (TCP) or ICMP type @type (ICMP),
 * written over what pkt_build() put there (checksums do not matter to the
 * firewall). */
static int build_l4(__u8 *buf, const struct pkt_spec *s, __u8 tcp_flags,
		    __u8 icmp_type)
{
	int len = build(buf, s);
	size_t l4 = 14 + 20;

	if (s->proto == IPPROTO_TCP)
		buf[l4 + 13] = tcp_flags;
	else
		buf[l4] = icmp_type;
	return len;
}

/* A flow's cached decision holds only for its packets with the TCP flags
 * and ICMP type it was made for, when rules look at them; a rule set that
 * does not keeps one decision for all of them (the cache still hits). */
static void extra_deps(bool fused)
{
	struct pkt_spec tcp = { .family = 4, .proto = IPPROTO_TCP };
	struct pkt_spec icmp = { .family = 4, .proto = IPPROTO_ICMP };
	__u8 syn[PKT_MAX], ack[PKT_MAX], echo[PKT_MAX], unreach[PKT_MAX];
	struct xnf_fw_rule r[2] = {
		{ .prio = 10,
		  .action = XNF_FW_DROP,
		  .in_use = 1,
		  .flags = XNF_FW_F_PROTO | XNF_FW_F_TCP_FLAGS,
		  .proto = IPPROTO_TCP,
		  .tcp_flags = 0x02,
		  .tcp_mask = 0x12 },
		{ .prio = 20,
		  .action = XNF_FW_DROP,
		  .in_use = 1,
		  .flags = XNF_FW_F_PROTO | XNF_FW_F_ICMP_TYPE,
		  .proto = IPPROTO_ICMP,
		  .icmp_type = 3 },
	};
	struct xnf_fw_rule plain = { .prio = 10,
				     .action = XNF_FW_ALLOW,
				     .in_use = 1,
				     .flags = XNF_FW_F_PROTO,
				     .proto = IPPROTO_TCP };
	int lsyn, lack, lecho, lunreach;
	struct fx_out out;
	struct pin pn;
	struct fx f;

	if (!fc_open(&f, &pn, "firewall", fused) ||
	    !fx_fw_load(&f, r, 2, XNF_FW_ALLOW))
		goto out;
	lsyn = build_l4(syn, &tcp, 0x02, 0);
	lack = build_l4(ack, &tcp, 0x10, 0);
	lecho = build_l4(echo, &icmp, 0, 8);
	lunreach = build_l4(unreach, &icmp, 0, 3);
	ASSERT_EQ(run1(&f, ack, lack, &out), XDP_PASS, "ack");
	ASSERT_EQ(run1(&f, ack, lack, &out), XDP_PASS, "ack, again");
	fc_counts(&f, XNF_NF_FIREWALL, 1, 1, "the same flags hit");
	ASSERT_EQ(run1(&f, syn, lsyn, &out), XDP_DROP,
		  "syn of the flow: not the ack's decision");
	ASSERT_EQ(run1(&f, ack, lack, &out), XDP_PASS,
		  "ack again: not the syn's decision");
	ASSERT_EQ(run1(&f, echo, lecho, &out), XDP_PASS, "echo request");
	ASSERT_EQ(run1(&f, unreach, lunreach, &out), XDP_DROP,
		  "unreachable of the same flow key: not the echo's decision");
	ASSERT_EQ(run1(&f, echo, lecho, &out), XDP_PASS, "echo again");

	/* No rule looks at flags: syn and ack share the decision. */
	if (!fx_fw_load(&f, &plain, 1, XNF_FW_DROP) || !fx_stats_reset(&f))
		goto out;
	ASSERT_EQ(run1(&f, ack, lack, &out), XDP_PASS, "plain: ack");
	ASSERT_EQ(run1(&f, syn, lsyn, &out), XDP_PASS, "plain: syn");
	fc_counts(&f, XNF_NF_FIREWALL, 1, 1, "plain: the syn hit the ack's");
out:
	fc_close(&f, &pn);
}

TEST(fcache_fw_extra_matches)
{
	SUBTEST("tail-called")
		extra_deps(false);
	SUBTEST("fused")
		extra_deps(true);
}

static void fdb_change(bool fused)
{
	struct pkt_spec s = { .family = 4, .dmac = FX_MAC_ON_UT1 };
	static const __u8 mac[] = FX_MAC_ON_UT1;
	__u8 frame[PKT_MAX];
	struct fx_out out;
	struct xnf_stats st;
	struct pin pn;
	struct fx f;
	int len;

	if (!fc_open(&f, &pn, "l2fwd", fused) ||
	    !ASSERT_OK(xnf_fdb_set(f.dp, mac, f.ifindex[1]), "fdb on ut1"))
		goto out;
	len = build(frame, &s);
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_REDIRECT, "to ut1");
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_REDIRECT, "to ut1, again");
	fc_counts(&f, XNF_NF_L2FWD, 1, 1, "the second hit");

	/* The MAC moved to the ingress port: a hairpin, dropped. */
	if (!ASSERT_OK(xnf_fdb_set(f.dp, mac, f.ifindex[0]), "fdb on ut0"))
		goto out;
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_DROP, "hairpin");
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_DROP, "hairpin, again");
	if (fx_stats(&f, &st))
		ASSERT_EQ(st.drop[XNF_R_HAIRPIN], 2, "dropped as hairpins");

	/* Gone: a miss, passed (l2_miss pass). */
	if (!fx_set_cfg(&f, XNF_ACT_PASS, XNF_ACT_PASS, XNF_ACT_PASS,
			XNF_ACT_PASS) ||
	    !ASSERT_OK(xnf_fdb_del(f.dp, mac), "fdb del"))
		goto out;
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_PASS, "miss");
	if (fx_stats(&f, &st))
		ASSERT_EQ(st.pass[XNF_R_L2_MISS], 1, "passed as a miss");
	if (!ASSERT_OK(xnf_fdb_set(f.dp, mac, f.ifindex[2]), "fdb on ut2"))
		goto out;
	ASSERT_EQ(run1(&f, frame, len, &out), XDP_REDIRECT, "back");
out:
	fc_close(&f, &pn);
}

TEST(fcache_fdb_change)
{
	SUBTEST("tail-called")
		fdb_change(false);
	SUBTEST("fused")
		fdb_change(true);
}

/* The key the entry program makes of a frame fx_run sends (ut0, UDP,
 * IPv4, with ports). */
static void key4(struct fx *f, const char *src, const char *dst, __u16 sport,
		 __u16 dport, struct xnf_fc_key *k)
{
	memset(k, 0, sizeof(*k));
	k->ifindex = f->ifindex[0];
	k->family = XNF_AF_INET;
	k->l4_proto = IPPROTO_UDP;
	k->ports = 1;
	k->sport = htons(sport);
	k->dport = htons(dport);
	inet_pton(AF_INET, src, k->saddr);
	inet_pton(AF_INET, dst, k->daddr);
}

static void collision(bool fused)
{
	struct xnf_fw_rule r = drop_dport7;
	struct pkt_spec a = { .family = 4 }, b = a;
	__u8 fa[PKT_MAX], fb[PKT_MAX];
	struct xnf_fc_key ka, kb;
	struct fx_out out;
	struct pin pn;
	struct fx f;
	int la, lb;

	if (!fc_open(&f, &pn, "firewall", fused) ||
	    !fx_fw_load(&f, &r, 1, XNF_FW_ALLOW))
		goto out;
	/* Flow a: 192.0.2.1:1024 -> 198.51.100.1:7, dropped; flow b: the
	 * first other destination port of the same entry, allowed. */
	key4(&f, "192.0.2.1", "198.51.100.1", 1024, 7, &ka);
	for (b.dport = 8; b.dport; b.dport++) {
		key4(&f, "192.0.2.1", "198.51.100.1", 1024, b.dport, &kb);
		if (xnf_fc_index(&kb) == xnf_fc_index(&ka))
			break;
	}
	if (!ASSERT_NEQ(b.dport, 0, "a port whose flow shares a's entry"))
		goto out;
	la = build(fa, &a);
	lb = build(fb, &b);
	ASSERT_EQ(run1(&f, fa, la, &out), XDP_DROP, "a");
	ASSERT_EQ(run1(&f, fa, la, &out), XDP_DROP, "a, cached");
	ASSERT_EQ(run1(&f, fb, lb, &out), XDP_PASS, "b takes the entry");
	ASSERT_EQ(run1(&f, fb, lb, &out), XDP_PASS, "b, cached");
	ASSERT_EQ(run1(&f, fa, la, &out), XDP_DROP, "a takes it back");
	fc_counts(&f, XNF_NF_FIREWALL, 2, 3, "a miss at each takeover");
	hits_of(&f, 0, 3, 3ull * la, "the rule counted a's packets only");
out:
	fc_close(&f, &pn);
}

TEST(fcache_collision)
{
	SUBTEST("tail-called")
		collision(false);
	SUBTEST("fused")
		collision(true);
}

/* The flows of the last two cases, through firewall,l3fwd,l2fwd with
 * fx_l2_table and a rule that drops UDP to port 53. Each is a flow of its
 * own (a key of its own), and reaches the lookups of @nfs (a bit per NF:
 * after a drop or pass the chain ends). */
#define NF_(n) (1u << (n))
#define ALL    (NF_(XNF_NF_FIREWALL) | NF_(XNF_NF_L3FWD) | NF_(XNF_NF_L2FWD))
static const struct flow {
	struct pkt_spec s;
	__u32 nfs;
} flows[] = {
	{ { .family = 4, .dst = "198.51.100.1", .dport = 9 }, ALL },
	{ { .family = 4, .dst = "198.51.100.2", .dport = 9 }, ALL },
	{ { .family = 4, .dst = "198.51.100.2", .sport = 2000, .dport = 9 }, ALL },
	{ { .family = 4, .dst = "10.2.0.1", .dport = 9 }, ALL },
	{ { .family = 4, .dst = "10.3.0.1", .dport = 9 }, ALL },
	{ { .family = 6, .dst = "2001:db8:2::1", .dport = 9 }, ALL },
	{ { .family = 6, .dst = "2001:db8:2::2", .dport = 9 }, ALL },
	/* no route, blackhole, TTL 1: the chain ends in l3fwd */
	{ { .family = 4, .dst = "192.0.2.50", .dport = 9 },
	  NF_(XNF_NF_FIREWALL) | NF_(XNF_NF_L3FWD) },
	{ { .family = 4, .dst = "203.0.113.1", .dport = 9 },
	  NF_(XNF_NF_FIREWALL) | NF_(XNF_NF_L3FWD) },
	{ { .family = 4, .dst = "198.51.100.3", .ttl = 1, .dport = 9 },
	  NF_(XNF_NF_FIREWALL) | NF_(XNF_NF_L3FWD) },
	/* denied by the firewall */
	{ { .family = 4, .dst = "198.51.100.1", .dport = 53 },
	  NF_(XNF_NF_FIREWALL) },
	{ { .family = 6, .dst = "2001:db8:2::1", .dport = 53 },
	  NF_(XNF_NF_FIREWALL) },
};
#define NFLOWS	ARRAY_SIZE(flows)
#define REPEATS 4

static bool mixed_tables(struct fx *f)
{
	struct xnf_fw_rule r = drop_dport7;

	r.dport_lo = r.dport_hi = 53;
	return fx_l2_table(f) && fx_fw_load(f, &r, 1, XNF_FW_ALLOW);
}

/* The entry of a flow of the table (its addresses as pkt_build writes
 * them: the default source of the family). */
static __u32 flow_index(struct fx *f, const struct pkt_spec *s)
{
	struct xnf_fc_key k = {
		.ifindex = f->ifindex[0],
		.family = s->family == 4 ? XNF_AF_INET : XNF_AF_INET6,
		.l4_proto = IPPROTO_UDP,
		.ports = 1,
		.sport = htons(s->sport ?: 1024),
		.dport = htons(s->dport),
	};
	int af = s->family == 4 ? AF_INET : AF_INET6;

	inet_pton(af, s->family == 4 ? "192.0.2.1" : "2001:db8:1::1", k.saddr);
	inet_pton(af, s->dst, k.daddr);
	return xnf_fc_index(&k);
}

static void counts(bool fused)
{
	static __u8 frames[NFLOWS][PKT_MAX];
	__u64 want[__XNF_NF_MAX] = {};
	int lens[NFLOWS], r, nf;
	bool used[XNF_FC_ENTRIES] = {};
	struct xnf_stats st;
	struct fx_out out;
	struct pin pn;
	struct fx f;
	size_t i;

	if (!fc_open(&f, &pn, "firewall,l3fwd,l2fwd", fused) || !mixed_tables(&f))
		goto out;
	for (i = 0; i < NFLOWS; i++) {
		__u32 idx = flow_index(&f, &flows[i].s);

		/* Otherwise a flow would take another's entry over. */
		if (!ASSERT_FALSE(used[idx], "every flow has an entry of its own"))
			goto out;
		used[idx] = true;
		lens[i] = build(frames[i], &flows[i].s);
		for (nf = 0; nf < __XNF_NF_MAX; nf++)
			want[nf] += !!(flows[i].nfs & NF_(nf));
	}
	for (r = 0; r < REPEATS; r++)
		for (i = 0; i < NFLOWS; i++)
			if (run1(&f, frames[i], lens[i], &out) < 0)
				goto out;
	if (!fx_stats(&f, &st))
		goto out;
	for (nf = XNF_NF_FIREWALL; nf <= XNF_NF_L2FWD; nf++) {
		char what[64];

		snprintf(what, sizeof(what), "%s: hit + miss = in",
			 xnf_nf_name(nf));
		ASSERT_EQ(st.fc_hit[nf] + st.fc_miss[nf], st.nf[nf].in, what);
		snprintf(what, sizeof(what), "%s: a miss per flow",
			 xnf_nf_name(nf));
		ASSERT_EQ(st.fc_miss[nf], want[nf], what);
		snprintf(what, sizeof(what), "%s: the repeats hit",
			 xnf_nf_name(nf));
		ASSERT_EQ(st.fc_hit[nf], (REPEATS - 1) * want[nf], what);
	}
	ASSERT_EQ(st.fc_hit[XNF_NF_ENTRY] + st.fc_miss[XNF_NF_ENTRY] +
			  st.fc_hit[XNF_NF_XSK] + st.fc_miss[XNF_NF_XSK],
		  0, "only the three NFs use the cache");
out:
	fc_close(&f, &pn);
}

TEST(fcache_counts)
{
	SUBTEST("tail-called")
		counts(false);
	SUBTEST("fused")
		counts(true);
}

/* Every flow REPEATS times, through @chain with the cache on or off:
 * the frames out and the counters (every one but the cache's). */
static bool run_mixed(const char *chain, bool fused, bool on, struct fx_out *outs,
		      struct xnf_stats *st, struct xnf_fw_hit *hits)
{
	static __u8 frame[PKT_MAX];
	bool ok = false;
	struct fx f;
	size_t i;
	int r, len;

	if (!fx_open(&f))
		return false;
	if (!fc_set(&f, on) || !fx_chain(&f, chain, fused, false) ||
	    !mixed_tables(&f))
		goto out;
	for (r = 0; r < REPEATS; r++)
		for (i = 0; i < NFLOWS; i++) {
			len = build(frame, &flows[i].s);
			if (run1(&f, frame, len, &outs[r * NFLOWS + i]) < 0)
				goto out;
		}
	ok = fx_stats(&f, st) &&
	     ASSERT_OK(xnf_fw_hits_read(f.dp, hits), "xnf_fw_hits_read");
out:
	fx_close(&f);
	return ok;
}

static void off_on(const char *chain, bool fused)
{
	struct fx_out *out[2] = { calloc(REPEATS * NFLOWS, sizeof(**out)),
				  calloc(REPEATS * NFLOWS, sizeof(**out)) };
	struct xnf_fw_hit *hits[2] = { calloc(XNF_FW_HITS, sizeof(**hits)),
				       calloc(XNF_FW_HITS, sizeof(**hits)) };
	struct xnf_stats st[2];
	char what[96];
	size_t i;
	int nf;

	if (!ASSERT_TRUE(out[0] && out[1] && hits[0] && hits[1], "calloc") ||
	    !run_mixed(chain, fused, false, out[0], &st[0], hits[0]) ||
	    !run_mixed(chain, fused, true, out[1], &st[1], hits[1]))
		goto out;
	for (i = 0; i < REPEATS * NFLOWS; i++) {
		snprintf(what, sizeof(what), "%s: frame %zu, off vs on", chain,
			 i);
		if (ASSERT_EQ(out[1][i].ret, out[0][i].ret, what) &&
		    ASSERT_EQ(out[1][i].len, out[0][i].len, what))
			ASSERT_MEM(out[1][i].data, out[0][i].data,
				   out[0][i].len, what);
	}
	snprintf(what, sizeof(what), "%s: counters off vs on", chain);
	ASSERT_MEM(&st[1], &st[0], offsetof(struct xnf_stats, fc_hit), what);
	ASSERT_MEM(hits[1], hits[0], XNF_FW_HITS * sizeof(*hits[0]),
		   "rule hits off vs on");
	for (nf = 0; nf < __XNF_NF_MAX; nf++)
		ASSERT_EQ(st[0].fc_hit[nf] + st[0].fc_miss[nf], 0,
			  "off: no cache lookups");
	ASSERT_GT(st[1].fc_hit[XNF_NF_L3FWD], 0, "on: the cache was used");
out:
	free(out[0]);
	free(out[1]);
	free(hits[0]);
	free(hits[1]);
}

TEST(fcache_off_equals_on)
{
	static const char *const chains[] = {
		"firewall,l3fwd,l2fwd",
		"l2fwd,l3fwd,firewall",
		"l3fwd",
	};
	char name[64];
	size_t c;
	int fused;

	for (c = 0; c < ARRAY_SIZE(chains); c++)
		for (fused = 0; fused < 2; fused++) {
			snprintf(name, sizeof(name), "%s %s", chains[c],
				 fused ? "fused" : "tail-called");
			SUBTEST(name)
				off_on(chains[c], fused);
		}
}

/*
 * The bypass (bpf/fcache.bpf.h): nothing is bypassed while the cache
 * warms up, misses or not; a flow that keeps hitting is never
 * bypassed; a window of XNF_FC_WINDOW new flows (all misses) sends the
 * next XNF_FC_SKIP packets uncached, counted in the entry's row and in no
 * NF's, with the result of the rules all the same; then a window probes
 * again and the flow's entry, left alone meanwhile, hits.
 */
static void bypass(bool fused)
{
	struct xnf_fw_rule r = drop_dport7;
	struct pkt_spec a = { .family = 4 }, n = a;
	__u8 fa[PKT_MAX], fn[PKT_MAX];
	struct xnf_stats st;
	struct fx_out out;
	struct pin pn;
	__u64 hit0, miss0, total;
	struct fx f;
	int la, ln, i;

	if (!fc_open(&f, &pn, "firewall", fused) ||
	    !fx_fw_load(&f, &r, 1, XNF_FW_ALLOW))
		goto out;
	la = build(fa, &a);
	/* The first XNF_FC_WARM windows, all new flows, never bypass: every
	 * packet is looked up. */
	for (i = 0; i < XNF_FC_WARM * XNF_FC_WINDOW; i++) {
		n.sport = 2000 + i;
		ln = build(fn, &n);
		if (!ASSERT_EQ(run1(&f, fn, ln, &out), XDP_DROP, "warm-up"))
			goto out;
	}
	for (i = 0; i < 2 * XNF_FC_WINDOW; i++)
		if (!ASSERT_EQ(run1(&f, fa, la, &out), XDP_DROP, "flow a"))
			goto out;
	if (!fc_counts(&f, XNF_NF_FIREWALL, 2 * XNF_FC_WINDOW - 1,
		       XNF_FC_WARM * XNF_FC_WINDOW + 1,
		       "warm-up: every packet looked up; then a hits") ||
	    !fc_counts(&f, XNF_NF_ENTRY, 0, 0, "a hitting flow: no bypass") ||
	    !fx_stats(&f, &st))
		goto out;
	hit0 = st.fc_hit[XNF_NF_FIREWALL];
	miss0 = st.fc_miss[XNF_NF_FIREWALL];
	/* New flows, one a packet: the window sees no hit. */
	for (i = 0; i < XNF_FC_WINDOW; i++) {
		n.sport = 10000 + i;
		ln = build(fn, &n);
		if (!ASSERT_EQ(run1(&f, fn, ln, &out), XDP_DROP, "a new flow"))
			goto out;
	}
	if (!fc_counts(&f, XNF_NF_FIREWALL, hit0, miss0 + XNF_FC_WINDOW,
		       "every new flow missed"))
		goto out;
	for (i = 0; i < XNF_FC_SKIP; i++)
		if (!ASSERT_EQ(run1(&f, fa, la, &out), XDP_DROP,
			       "a, bypassed: the rule still drops it"))
			goto out;
	if (!fc_counts(&f, XNF_NF_ENTRY, 0, XNF_FC_SKIP,
		       "the skipped packets counted as bypassed") ||
	    !fc_counts(&f, XNF_NF_FIREWALL, hit0, miss0 + XNF_FC_WINDOW,
		       "no lookup while bypassed"))
		goto out;
	ASSERT_EQ(run1(&f, fa, la, &out), XDP_DROP, "a, probing again");
	fc_counts(&f, XNF_NF_FIREWALL, hit0 + 1, miss0 + XNF_FC_WINDOW,
		  "probing again: a's entry was kept and hits");
	fc_counts(&f, XNF_NF_ENTRY, 0, XNF_FC_SKIP, "probing: not bypassed");
	total = (XNF_FC_WARM + 3) * XNF_FC_WINDOW + XNF_FC_SKIP + 1;
	if (fx_stats(&f, &st))
		ASSERT_EQ(st.nf[XNF_NF_FIREWALL].in, total,
			  "every packet reached the firewall");
	hits_of(&f, 0, total, total * la,
		"the rule counted every packet, bypassed or not");
out:
	fc_close(&f, &pn);
}

TEST(fcache_bypass)
{
	SUBTEST("tail-called")
		bypass(false);
	SUBTEST("fused")
		bypass(true);
}

/* A read-only descriptor of the map behind @fd: writes through it fail. */
static int ro_fd(int fd)
{
	LIBBPF_OPTS(bpf_get_fd_by_id_opts, opts, .open_flags = BPF_F_RDONLY);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	fd = bpf_map_get_fd_by_id_opts(info.id, &opts);
	return fd < 0 ? -errno : fd;
}

/* A write whose table generation cannot move fails: otherwise packets
 * would keep the cache's results of the old tables, silently. */
TEST(fcache_failed_bump_fails_the_write)
{
	static const __u8 mac[] = FX_MAC_ON_UT1;
	struct xnf_route rt = { .type = XNF_RT_UNICAST };
	struct xnf_fw_set *set = NULL;
	__u8 addr[4] = { 198, 51, 100, 0 };
	int rw, ro;
	struct fx f;

	if (!fx_open(&f))
		return;
	rt.ifindex = f.ifindex[1];
	ro = ro_fd(xnf_table_fd(f.dp, XNF_T_CFG));
	if (!ASSERT_GE(ro, 0, "read-only xnf_cfg") ||
	    !ASSERT_OK(xnf_fw_read(f.dp, &set), "xnf_fw_read"))
		goto out;
	rw = xnf_table_fd(f.dp, XNF_T_CFG);
	f.dp->fd[XNF_T_CFG] = ro;
	ASSERT_LT(xnf_fdb_set(f.dp, mac, f.ifindex[1]), 0, "xnf_fdb_set");
	ASSERT_LT(xnf_fdb_del(f.dp, mac), 0, "xnf_fdb_del");
	ASSERT_LT(xnf_route_set(f.dp, XNF_AF_INET, addr, 24, &rt, BPF_ANY), 0,
		  "xnf_route_set");
	ASSERT_LT(xnf_route_del(f.dp, XNF_AF_INET, addr, 24), 0, "xnf_route_del");
	ASSERT_LT(xnf_fw_apply(f.dp, set, NULL, 0), 0, "xnf_fw_apply");
	f.dp->fd[XNF_T_CFG] = rw;
	close(ro);
out:
	xnf_fw_set_free(set);
	fx_close(&f);
}
