// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The trace's datapath (bpf/trace.bpf.h): a trace armed by writing
 * xnf_trace_cfg[0] directly (the layout of include/uapi/xnf_trace.h),
 * frames run through chains, tail-called and fused, and the records read
 * from the ring buffer xnf_trace_rb: what each NF's step says (rule,
 * default policy, route, egress, MAC, flow cache, conntrack state, nat
 * tuple, queue), the final verdict and reason for each outcome, and the
 * bounds: unmatched packets leave nothing, the count and the deadline
 * disarm, a full ring loses records and never packets.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"

#define FOR_BOTH(fused) for (int fused = 0; fused < 2; fused++)
#define TR_MAX		64
#define TR_ID		7

/* The records a test read: the first TR_MAX of n. */
struct tr_recs {
	struct xnf_trace_rec r[TR_MAX];
	int n;
	int bad_size;
};

struct tr {
	struct fx f;
	struct ring_buffer *rb;
	struct tr_recs got;
	bool fc_on; /* the flow cache is on (XNF_UT_FLOW_CACHE) */
};

static int tr_sample(void *ctx, void *data, size_t size)
{
	struct tr_recs *g = ctx;

	if (size != sizeof(struct xnf_trace_rec)) {
		g->bad_size++;
		return 0;
	}
	if (g->n < TR_MAX)
		memcpy(&g->r[g->n], data, size);
	g->n++;
	return 0;
}

static void tr_close(struct tr *t)
{
	ring_buffer__free(t->rb);
	t->rb = NULL;
	fx_close(&t->f);
}

/* Fresh tables and the ring buffer's reader; the chain is the caller's. */
static bool tr_open(struct tr *t)
{
	struct xnf_config cfg;
	int fd;

	memset(t, 0, sizeof(*t));
	if (!fx_open(&t->f))
		return false;
	fd = xnf_table_fd(t->f.dp, XNF_T_TRACE_RB);
	t->rb = ring_buffer__new(fd, tr_sample, &t->got, NULL);
	if (!ASSERT_TRUE(t->rb, "ring_buffer__new on xnf_trace_rb") ||
	    !ASSERT_OK(xnf_cfg_read(t->f.dp, &cfg), "read cfg")) {
		tr_close(t);
		return false;
	}
	t->fc_on = cfg.flow_cache;
	return true;
}

/* Arms trace TR_ID on @match (NULL: every packet) with the bounds. */
static bool tr_arm(struct tr *t, const struct xnf_fw_rule *match, __u64 max,
		   __u64 matched, __u64 deadline_ns)
{
	struct xnf_trace_cfg c = { .id = TR_ID,
				   .pid = getpid(),
				   .deadline_ns = deadline_ns,
				   .max_packets = max,
				   .matched = matched };
	__u32 zero = 0;

	if (match)
		c.match = *match;
	return ASSERT_OK(bpf_map_update_elem(xnf_table_fd(t->f.dp, XNF_T_TRACE_CFG),
					     &zero, &c, 0),
			 "arm the trace");
}

static struct xnf_trace_cfg tr_cfg(struct tr *t)
{
	struct xnf_trace_cfg c = {};
	__u32 zero = 0;

	ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(t->f.dp, XNF_T_TRACE_CFG),
				      &zero, &c),
		  "read xnf_trace_cfg");
	return c;
}

/* The records in the ring buffer now, into t->got (emptied first). */
static int tr_read(struct tr *t)
{
	t->got.n = 0;
	t->got.bad_size = 0;
	ASSERT_GE(ring_buffer__consume(t->rb), 0, "consume xnf_trace_rb");
	ASSERT_EQ(t->got.bad_size, 0, "records of the expected size");
	return t->got.n;
}

/* xnf_trace_stats summed over CPUs. */
static struct xnf_trace_stats tr_stats(struct tr *t)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	struct xnf_trace_stats sum = {}, *v;
	__u32 zero = 0;

	v = calloc(ncpu, sizeof(*v));
	if (ASSERT_TRUE(v, "calloc") &&
	    ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(t->f.dp, XNF_T_TRACE_STATS),
					  &zero, v),
		      "read xnf_trace_stats"))
		for (i = 0; i < ncpu; i++) {
			sum.traced += v[i].traced;
			sum.lost += v[i].lost;
		}
	free(v);
	return sum;
}

/* Runs frame @s; the XDP action, or -1. */
static int tr_run(struct tr *t, const struct pkt_spec *s, struct fx_out *out)
{
	static __u8 buf[PKT_MAX];
	int len = pkt_build(buf, sizeof(buf), s);

	if (!ASSERT_GT(len, 0, "frame built") ||
	    !ASSERT_OK(fx_run(&t->f, buf, len, out), "run"))
		return -1;
	return out->ret;
}

/* Runs @s and reads the one record it must leave into *@r. */
static bool tr_one(struct tr *t, const struct pkt_spec *s,
		   struct xnf_trace_rec *r, const char *what)
{
	static struct fx_out out;
	int ret = tr_run(t, s, &out);

	if (ret < 0 || !ASSERT_EQ(tr_read(t), 1, what))
		return false;
	*r = t->got.r[0];
	ASSERT_EQ(r->action, ret, what);
	ASSERT_EQ(r->id, TR_ID, what);
	return true;
}

static void tr_addr(int fam, const char *s, __u8 out[16])
{
	memset(out, 0, 16);
	inet_pton(fam == 4 ? AF_INET : AF_INET6, s, out);
}

static struct xnf_fw_rule tr_rule(__u32 prio, __u8 action, const char *dst,
				  __u8 dst_len, __u16 dport)
{
	struct xnf_fw_rule r = { .prio = prio, .action = action, .in_use = 1 };

	if (dst) {
		r.flags |= XNF_FW_F_DST;
		r.family = XNF_AF_INET;
		r.dst_len = dst_len;
		tr_addr(4, dst, r.dst);
	}
	if (dport) {
		r.flags |= XNF_FW_F_DPORT;
		r.dport_lo = r.dport_hi = dport;
	}
	return r;
}

/* A match on the source address @src/32. */
static struct xnf_fw_rule tr_src(const char *src)
{
	struct xnf_fw_rule r = { .flags = XNF_FW_F_SRC,
				 .family = XNF_AF_INET,
				 .src_len = 32 };

	tr_addr(4, src, r.src);
	return r;
}

static __u8 tr_fc(struct tr *t, bool hit)
{
	if (!t->fc_on)
		return XNF_TRACE_FC_NONE;
	return hit ? XNF_TRACE_FC_HIT : XNF_TRACE_FC_MISS;
}

/* Step @i is NF @nf leaving with @verdict and @reason. */
static bool tr_step_is(const struct xnf_trace_rec *r, int i, __u32 nf,
		       __u32 verdict, __u32 reason, const char *what)
{
	if (!ASSERT_GT(r->nsteps, i, what))
		return false;
	return ASSERT_EQ(r->step[i].nf, nf, what) &
	       ASSERT_EQ(r->step[i].verdict, verdict, what) &
	       ASSERT_EQ(r->step[i].reason, reason, what);
}

/* The record's end: @verdict carried out, for @reason. */
static void tr_end_is(const struct xnf_trace_rec *r, __u32 nsteps,
		      __u32 verdict, __u32 reason, const char *what)
{
	ASSERT_EQ(r->nsteps, nsteps, what);
	ASSERT_EQ(r->verdict, verdict, what);
	ASSERT_EQ(r->reason, reason, what);
}

/* firewall,l3fwd: a forwarded packet (rule, route, egress, next hop's MAC,
 * the flow cache missing then hitting), one dropped by a rule, one by
 * the default policy; the packet part of the record. */
TEST(trace_forward_and_rules)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_fw_rule rules[2] = {
			tr_rule(10, XNF_FW_ALLOW, "198.51.100.0", 24, 0),
			tr_rule(20, XNF_FW_DROP, NULL, 0, 5353),
		};
		struct pkt_spec fwd = { .family = 4,
					.proto = IPPROTO_UDP,
					.src = "192.0.2.1",
					.dst = "198.51.100.1",
					.sport = 1024,
					.dport = 53 };
		struct pkt_spec deny = { .family = 4,
					 .src = "192.0.2.1",
					 .dst = "10.1.2.9",
					 .dport = 5353 };
		struct pkt_spec dflt = { .family = 4,
					 .src = "192.0.2.1",
					 .dst = "10.1.2.9",
					 .dport = 80 };
		struct xnf_trace_rec r;
		__u8 a[16], mac[6];
		struct tr t;

		if (!tr_open(&t))
			return;
		if (!fx_l3_table(&t.f) ||
		    !fx_fw_load(&t.f, rules, 2, XNF_FW_DROP) ||
		    !fx_chain(&t.f, "firewall,l3fwd", fused, false) ||
		    !tr_arm(&t, NULL, 0, 0, 0))
			goto out;

		if (!tr_one(&t, &fwd, &r, what))
			goto out;
		ASSERT_EQ(r.seq, 1, what);
		ASSERT_EQ(r.ifindex, t.f.ifindex[0], what);
		ASSERT_EQ(r.family, XNF_AF_INET, what);
		ASSERT_EQ(r.l4_proto, IPPROTO_UDP, what);
		ASSERT_EQ(r.len, 64, what);
		ASSERT_EQ(ntohs(r.sport), 1024, what);
		ASSERT_EQ(ntohs(r.dport), 53, what);
		ASSERT_EQ(ntohs(r.eth_proto), ETH_P_IP, what);
		tr_addr(4, "192.0.2.1", a);
		ASSERT_MEM(r.src, a, 16, what);
		tr_addr(4, "198.51.100.1", a);
		ASSERT_MEM(r.dst, a, 16, what);
		tr_step_is(&r, 0, XNF_NF_FIREWALL, XNF_V_PASS, XNF_R_NONE, what);
		ASSERT_EQ(r.step[0].flags, XNF_TRACE_S_RULE, what);
		ASSERT_EQ(r.step[0].rule, 10, what);
		ASSERT_EQ(r.step[0].fc, tr_fc(&t, false), what);
		tr_step_is(&r, 1, XNF_NF_L3FWD, XNF_V_REDIRECT, XNF_R_NONE, what);
		ASSERT_EQ(r.step[1].flags,
			  XNF_TRACE_S_ROUTE | XNF_TRACE_S_EGRESS | XNF_TRACE_S_MAC,
			  what);
		ASSERT_EQ(r.step[1].plen, 24, what);
		tr_addr(4, "198.51.100.0", a);
		ASSERT_MEM(r.step[1].addr, a, 16, what);
		ASSERT_EQ(r.step[1].ifindex, t.f.ifindex[1], what);
		fx_nh_mac(1, mac);
		ASSERT_MEM(r.step[1].gw, mac, 6, what);
		ASSERT_EQ(r.step[1].fc, tr_fc(&t, false), what);
		tr_end_is(&r, 2, XNF_V_REDIRECT, XNF_R_NONE, what);
		ASSERT_EQ(r.egress, t.f.ifindex[1], what);

		/* The flow's second packet: both decisions from the cache. */
		if (!tr_one(&t, &fwd, &r, what))
			goto out;
		ASSERT_EQ(r.seq, 2, what);
		ASSERT_EQ(r.step[0].fc, tr_fc(&t, true), what);
		ASSERT_EQ(r.step[0].rule, 10, what);
		ASSERT_EQ(r.step[1].fc, tr_fc(&t, true), what);
		ASSERT_EQ(r.step[1].plen, 24, what);

		/* Dropped by rule 20: l3fwd never runs. */
		if (!tr_one(&t, &deny, &r, what))
			goto out;
		tr_step_is(&r, 0, XNF_NF_FIREWALL, XNF_V_DROP, XNF_R_FW_DENY,
			   what);
		ASSERT_EQ(r.step[0].flags, XNF_TRACE_S_RULE, what);
		ASSERT_EQ(r.step[0].rule, 20, what);
		tr_end_is(&r, 1, XNF_V_DROP, XNF_R_FW_DENY, what);
		ASSERT_EQ(r.action, XDP_DROP, what);

		/* No rule: the default policy drops. */
		if (!tr_one(&t, &dflt, &r, what))
			goto out;
		ASSERT_EQ(r.step[0].flags, XNF_TRACE_S_DEFAULT, what);
		tr_end_is(&r, 1, XNF_V_DROP, XNF_R_FW_DENY, what);
		ASSERT_EQ(tr_stats(&t).traced, 4, what);
		ASSERT_EQ(tr_stats(&t).lost, 0, what);
out:
		tr_close(&t);
	}
}

/* l3fwd's outcomes: each receive check and each exception, with the
 * reason the record ends with; a gateway; a malformed frame (traced by
 * the empty match, not by one on a protocol). */
TEST(trace_l3fwd_outcomes)
{
	static const struct {
		const char *name;
		struct pkt_spec s;
		__u32 verdict, reason;
		__u32 plen; /* the route's, 0: no route in the step */
	} cases[] = {
		{ "no route",
		  { .family = 4, .dst = "192.0.2.99" },
		  XNF_V_PASS,
		  XNF_R_NO_ROUTE,
		  0 },
		{ "local",
		  { .family = 4, .dst = "198.51.100.254" },
		  XNF_V_PASS,
		  XNF_R_LOCAL,
		  32 },
		{ "ttl", { .family = 4, .ttl = 1 }, XNF_V_PASS, XNF_R_TTL, 24 },
		{ "blackhole",
		  { .family = 4, .dst = "203.0.113.1" },
		  XNF_V_DROP,
		  XNF_R_BLACKHOLE,
		  25 },
		{ "bad checksum",
		  { .family = 4, .ip_csum = PKT_CSUM_PLUS1 },
		  XNF_V_DROP,
		  XNF_R_BAD_CSUM,
		  0 },
		{ "martian",
		  { .family = 4, .src = "127.0.0.1" },
		  XNF_V_DROP,
		  XNF_R_MARTIAN,
		  0 },
		{ "v6 forwarded",
		  { .family = 6, .dst = "2001:db8:5::9" },
		  XNF_V_REDIRECT,
		  XNF_R_NONE,
		  48 },
		{ "arp", { .family = 0 }, XNF_V_PASS, XNF_R_NOT_IP, 0 },
	};

	FOR_BOTH(fused)
	{
		struct pkt_spec bad = { .family = 4, .ihl = 4 };
		struct xnf_fw_rule udp = { .flags = XNF_FW_F_PROTO,
					   .proto = IPPROTO_UDP };
		struct xnf_route gw = { .type = XNF_RT_UNICAST,
					.gw_family = XNF_AF_INET };
		struct pkt_spec via = { .family = 4, .dst = "10.9.0.1" };
		struct xnf_trace_rec r;
		static struct fx_out out;
		char what[96];
		__u8 a[16];
		struct tr t;
		size_t i;

		if (!tr_open(&t))
			return;
		gw.ifindex = t.f.ifindex[2];
		fx_nh_mac(2, gw.dmac);
		memcpy(gw.smac, t.f.mac[2], 6);
		tr_addr(4, "10.1.2.254", gw.gw);
		tr_addr(4, "10.9.0.0", a);
		if (!fx_l3_table(&t.f) ||
		    !ASSERT_OK(xnf_route_set(t.f.dp, XNF_AF_INET, a, 16, &gw,
					     BPF_ANY),
			       "route via a gateway") ||
		    !fx_chain(&t.f, "l3fwd", fused, false) ||
		    !tr_arm(&t, NULL, 0, 0, 0))
			goto out;
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			snprintf(what, sizeof(what), "%s %s", cases[i].name,
				 fused ? "fused" : "tail-called");
			if (!tr_one(&t, &cases[i].s, &r, what))
				continue;
			tr_step_is(&r, 0, XNF_NF_L3FWD, cases[i].verdict,
				   cases[i].reason, what);
			tr_end_is(&r, 1, cases[i].verdict, cases[i].reason, what);
			ASSERT_EQ(!!(r.step[0].flags & XNF_TRACE_S_ROUTE),
				  !!cases[i].plen, what);
			ASSERT_EQ(r.step[0].plen, cases[i].plen, what);
		}
		/* IPv6: the record's addresses, the route's prefix. */
		{
			struct pkt_spec v6 = { .family = 6,
					       .src = "2001:db8:1::1",
					       .dst = "2001:db8:5::9" };

			snprintf(what, sizeof(what), "v6 addresses %s",
				 fused ? "fused" : "tail-called");
			if (tr_one(&t, &v6, &r, what)) {
				ASSERT_EQ(r.family, XNF_AF_INET6, what);
				tr_addr(6, "2001:db8:1::1", a);
				ASSERT_MEM(r.src, a, 16, what);
				tr_addr(6, "2001:db8:5::9", a);
				ASSERT_MEM(r.dst, a, 16, what);
				tr_addr(6, "2001:db8:5::", a);
				ASSERT_MEM(r.step[0].addr, a, 16, what);
				ASSERT_EQ(r.step[0].family, XNF_AF_INET6, what);
			}
		}

		snprintf(what, sizeof(what), "gateway %s",
			 fused ? "fused" : "tail-called");
		if (tr_one(&t, &via, &r, what)) {
			ASSERT_EQ(r.step[0].flags,
				  XNF_TRACE_S_ROUTE | XNF_TRACE_S_EGRESS |
					  XNF_TRACE_S_GW,
				  what);
			ASSERT_MEM(r.step[0].gw, gw.gw, 16, what);
			ASSERT_EQ(r.step[0].ifindex, t.f.ifindex[2], what);
			ASSERT_EQ(r.egress, t.f.ifindex[2], what);
			tr_addr(4, "10.9.0.0", a);
			ASSERT_MEM(r.step[0].addr, a, 16, what);
		}

		/* Malformed: the entry drops it, no NF runs. */
		snprintf(what, sizeof(what), "malformed %s",
			 fused ? "fused" : "tail-called");
		if (tr_one(&t, &bad, &r, what))
			tr_end_is(&r, 0, XNF_V_DROP, XNF_R_MALFORMED, what);
		/* A match on a protocol cannot take it. */
		if (tr_arm(&t, &udp, 0, 0, 0) && tr_run(&t, &bad, &out) >= 0)
			ASSERT_EQ(tr_read(&t), 0, what);
out:
		tr_close(&t);
	}
}

/* A trace that matches nothing leaves no record and takes no count; a
 * match on the source takes only its packets. */
TEST(trace_unmatched)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_fw_rule m = tr_src("203.0.113.99");
		struct pkt_spec s = { .family = 4, .src = "192.0.2.1" };
		struct pkt_spec hit = { .family = 4, .src = "203.0.113.99" };
		static struct fx_out out;
		struct xnf_trace_rec r;
		struct tr t;
		int i;

		if (!tr_open(&t))
			return;
		if (!fx_l3_table(&t.f) ||
		    !fx_chain(&t.f, "firewall,l3fwd", fused, false) ||
		    !tr_arm(&t, &m, 10, 0, 0))
			goto out;
		for (i = 0; i < 5; i++)
			tr_run(&t, &s, &out);
		ASSERT_EQ(tr_read(&t), 0, what);
		ASSERT_EQ(tr_cfg(&t).matched, 0, what);
		ASSERT_EQ(tr_cfg(&t).id, TR_ID, what);
		ASSERT_EQ(tr_stats(&t).traced, 0, what);
		if (tr_one(&t, &hit, &r, what))
			ASSERT_EQ(r.seq, 1, what);
out:
		tr_close(&t);
	}
}

/* The bounds: the packet that takes the last count disarms; one past a
 * count taken (another CPU's) is not traced and disarms; a deadline
 * passed disarms without tracing. */
TEST(trace_bounds)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct pkt_spec s = { .family = 4 };
		static struct fx_out out;
		struct xnf_trace_cfg c;
		struct tr t;
		int i;

		if (!tr_open(&t))
			return;
		if (!fx_l3_table(&t.f) || !fx_chain(&t.f, "l3fwd", fused, false) ||
		    !tr_arm(&t, NULL, 2, 0, 0))
			goto out;
		for (i = 0; i < 3; i++)
			ASSERT_EQ(tr_run(&t, &s, &out), XDP_REDIRECT, what);
		if (ASSERT_EQ(tr_read(&t), 2, what)) {
			ASSERT_EQ(t.got.r[0].seq, 1, what);
			ASSERT_EQ(t.got.r[1].seq, 2, what);
		}
		c = tr_cfg(&t);
		ASSERT_EQ(c.id, 0, "count reached: disarmed");
		ASSERT_EQ(c.matched, 2, what);

		/* The count already taken: not traced, disarmed. */
		if (!tr_arm(&t, NULL, 1, 1, 0))
			goto out;
		ASSERT_EQ(tr_run(&t, &s, &out), XDP_REDIRECT, what);
		ASSERT_EQ(tr_read(&t), 0, what);
		ASSERT_EQ(tr_cfg(&t).id, 0, "past the count: disarmed");

		/* The deadline passed (1 ns after boot). */
		if (!tr_arm(&t, NULL, 0, 0, 1))
			goto out;
		ASSERT_EQ(tr_run(&t, &s, &out), XDP_REDIRECT, what);
		ASSERT_EQ(tr_read(&t), 0, what);
		c = tr_cfg(&t);
		ASSERT_EQ(c.id, 0, "deadline passed: disarmed");
		ASSERT_EQ(c.matched, 0, what);
		ASSERT_EQ(tr_stats(&t).traced, 2, what);
out:
		tr_close(&t);
	}
}

/* A reader that does not read: the ring fills, the records past it are
 * lost and counted, every packet is still forwarded. */
TEST(trace_ring_full)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct pkt_spec s = { .family = 4, .dmac = FX_MAC_ON_UT1 };
		static __u8 buf[PKT_MAX];
		int len = pkt_build(buf, sizeof(buf), &s);
		struct xdp_md ctx = {};
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf,
			    .data_size_in = len, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 3000);
		struct xnf_trace_stats ts;
		struct xnf_stats st;
		struct tr t;

		if (!tr_open(&t))
			return;
		ctx.ingress_ifindex = t.f.ifindex[0];
		ctx.data_end = len;
		if (!fx_l2_table(&t.f) || !fx_chain(&t.f, "l2fwd", fused, false) ||
		    !tr_arm(&t, NULL, 0, 0, 0) ||
		    !ASSERT_OK(bpf_prog_test_run_opts(xnf_chain_prog_fd(t.f.chain),
						      &opts),
			       "run 3000 times"))
			goto out;
		ASSERT_EQ(opts.retval, XDP_REDIRECT, what);
		ts = tr_stats(&t);
		ASSERT_EQ(ts.traced + ts.lost, 3000, what);
		ASSERT_GT(ts.lost, 0, what);
		ASSERT_GT(ts.traced, 0, what);
		if (fx_stats(&t.f, &st))
			ASSERT_EQ(st.nf[XNF_NF_ENTRY].redirect, 3000, what);
		ASSERT_EQ(tr_read(&t), ts.traced, "the ring's records are there");
out:
		tr_close(&t);
	}
}

/* l2fwd: the FDB's port and MAC, the cache missing then hitting; a miss
 * floods. */
TEST(trace_l2fwd)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct pkt_spec s = { .family = 4, .dmac = FX_MAC_ON_UT1 };
		struct pkt_spec miss = { .family = 4, .dmac = FX_MAC_UNKNOWN };
		const __u8 mac[6] = FX_MAC_ON_UT1;
		struct xnf_trace_rec r;
		struct tr t;

		if (!tr_open(&t))
			return;
		if (!fx_l2_table(&t.f) ||
		    !fx_set_cfg(&t.f, 0, 0, 0, XNF_ACT_FLOOD) ||
		    !fx_chain(&t.f, "l2fwd", fused, false) ||
		    !tr_arm(&t, NULL, 0, 0, 0))
			goto out;
		if (tr_one(&t, &s, &r, what)) {
			tr_step_is(&r, 0, XNF_NF_L2FWD, XNF_V_REDIRECT,
				   XNF_R_NONE, what);
			ASSERT_EQ(r.step[0].flags,
				  XNF_TRACE_S_EGRESS | XNF_TRACE_S_MAC, what);
			ASSERT_EQ(r.step[0].ifindex, t.f.ifindex[1], what);
			ASSERT_MEM(r.step[0].gw, mac, 6, what);
			ASSERT_EQ(r.step[0].fc, tr_fc(&t, false), what);
			tr_end_is(&r, 1, XNF_V_REDIRECT, XNF_R_NONE, what);
			ASSERT_EQ(r.egress, t.f.ifindex[1], what);
		}
		if (tr_one(&t, &s, &r, what))
			ASSERT_EQ(r.step[0].fc, tr_fc(&t, true), what);
		if (tr_one(&t, &miss, &r, what)) {
			tr_step_is(&r, 0, XNF_NF_L2FWD, XNF_V_FLOOD, XNF_R_NONE,
				   what);
			ASSERT_EQ(r.step[0].flags, 0, what); /* no FDB entry */
			tr_end_is(&r, 1, XNF_V_FLOOD, XNF_R_NONE, what);
			ASSERT_EQ(r.egress, 0, what);
		}
out:
		tr_close(&t);
	}
}

/* xsk: the step names the queue; with no socket bound the packet falls
 * back to the kernel, which the record's end says. */
TEST(trace_xsk)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct pkt_spec s = { .family = 4 };
		struct xnf_trace_rec r;
		struct tr t;

		if (!tr_open(&t))
			return;
		if (!fx_chain(&t.f, "firewall,xsk", fused, false) ||
		    !tr_arm(&t, NULL, 0, 0, 0))
			goto out;
		if (tr_one(&t, &s, &r, what)) {
			tr_step_is(&r, 1, XNF_NF_XSK, XNF_V_XSK, XNF_R_NONE,
				   what);
			ASSERT_EQ(r.step[1].flags, XNF_TRACE_S_EGRESS, what);
			ASSERT_EQ(r.step[1].ifindex, 0, what);
			tr_end_is(&r, 2, XNF_V_PASS, XNF_R_XSK, what);
		}
out:
		tr_close(&t);
	}
}

/* conntrack: new in the original direction, then established in the
 * reply's. */
TEST(trace_conntrack)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct pkt_spec out1 = { .family = 4,
					 .src = "10.1.2.7",
					 .dst = "198.51.100.9",
					 .sport = 40000,
					 .dport = 53 };
		struct pkt_spec back = { .family = 4,
					 .src = "198.51.100.9",
					 .dst = "10.1.2.7",
					 .sport = 53,
					 .dport = 40000 };
		struct xnf_trace_rec r;
		struct tr t;

		if (!tr_open(&t))
			return;
		if (!fx_l3_table(&t.f) || !fx_fw_default(&t.f, XNF_FW_ALLOW) ||
		    !fx_chain(&t.f, "conntrack,firewall,l3fwd", fused, false) ||
		    !tr_arm(&t, NULL, 0, 0, 0))
			goto out;
		if (tr_one(&t, &out1, &r, what)) {
			tr_step_is(&r, 0, XNF_NF_CONNTRACK, XNF_V_PASS,
				   XNF_R_NONE, what);
			ASSERT_EQ(r.step[0].flags, XNF_TRACE_S_CT, what);
			ASSERT_EQ(r.step[0].ct_state, XNF_CT_NEW, what);
			ASSERT_EQ(r.step[0].ct_dir, XNF_CT_DIR_ORIG, what);
			tr_end_is(&r, 3, XNF_V_REDIRECT, XNF_R_NONE, what);
		}
		if (tr_one(&t, &back, &r, what)) {
			ASSERT_EQ(r.step[0].ct_state, XNF_CT_ESTABLISHED, what);
			ASSERT_EQ(r.step[0].ct_dir, XNF_CT_DIR_REPLY, what);
			/* Later steps carry the state too. */
			ASSERT_EQ(r.step[2].ct_state, XNF_CT_ESTABLISHED, what);
		}
out:
		tr_close(&t);
	}
}

/* nat: the tuple a source-translated packet leaves with, equal to the
 * frame that leaves. */
TEST(trace_nat)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct pkt_spec s = { .family = 4,
				      .src = "192.0.2.1",
				      .dst = "198.51.100.1",
				      .sport = 40005,
				      .dport = 53 };
		struct xnf_nat_rule nr = { .prio = 30,
					   .type = XNF_NAT_SNAT,
					   .family = XNF_AF_INET,
					   .flags = XNF_NAT_F_PORTS,
					   .to_port_min = 40000,
					   .to_port_max = 40009 };
		struct xnf_nat_hdr h = { .count = 1 };
		int rfd, hfd, l3, ret;
		static struct fx_out out;
		struct xnf_trace_rec r;
		__u32 key;
		__u8 a[16];
		struct tr t;

		if (!tr_open(&t))
			return;
		nr.oif = t.f.ifindex[1];
		tr_addr(4, "203.0.113.5", nr.to_min);
		tr_addr(4, "203.0.113.5", nr.to_max);
		rfd = xnf_table_fd(t.f.dp, XNF_T_NAT_RULES);
		hfd = xnf_table_fd(t.f.dp, XNF_T_NAT_HDR);
		key = XNF_NAT_MAX_RULES;
		if (!ASSERT_OK(bpf_map_update_elem(rfd, &key, &nr, 0), "nat rule"))
			goto out;
		key = 1;
		if (!ASSERT_OK(bpf_map_update_elem(hfd, &key, &h, 0), "count"))
			goto out;
		memset(&h, 0, sizeof(h));
		h.active = 1;
		key = XNF_NAT_HDR_ACTIVE;
		if (!ASSERT_OK(bpf_map_update_elem(hfd, &key, &h, 0), "activate") ||
		    !fx_route4(&t.f, "198.51.100.0/24", 1, XNF_RT_UNICAST) ||
		    !fx_fw_default(&t.f, XNF_FW_ALLOW) ||
		    !fx_chain(&t.f, "conntrack,nat,firewall,l3fwd", fused, false) ||
		    !tr_arm(&t, NULL, 0, 0, 0))
			goto out;
		ret = tr_run(&t, &s, &out);
		if (!ASSERT_EQ(ret, XDP_REDIRECT, what) ||
		    !ASSERT_EQ(tr_read(&t), 1, what))
			goto out;
		r = t.got.r[0];
		if (!tr_step_is(&r, 1, XNF_NF_NAT, XNF_V_PASS, XNF_R_NONE, what))
			goto out;
		ASSERT_EQ(r.step[1].flags, XNF_TRACE_S_NAT | XNF_TRACE_S_RULE,
			  what);
		ASSERT_EQ(r.step[1].rule, 30, what);
		ASSERT_EQ(r.step[1].nat & XNF_PKT_NAT_SRC, XNF_PKT_NAT_SRC, what);
		/* The frame that left: source at 26, destination at 30,
		 * ports at 34 and 36. */
		l3 = ETH_HLEN;
		ASSERT_MEM(r.step[1].addr, out.data + l3 + 12, 4, what);
		ASSERT_MEM(r.step[1].gw, out.data + l3 + 16, 4, what);
		ASSERT_MEM(&r.step[1].port, out.data + l3 + 20, 2, what);
		ASSERT_MEM(&r.step[1].port2, out.data + l3 + 22, 2, what);
		tr_addr(4, "203.0.113.5", a);
		ASSERT_MEM(r.step[1].addr, a, 4, what);
		ASSERT_GE(ntohs(r.step[1].port), 40000, what);
		ASSERT_LE(ntohs(r.step[1].port), 40009, what);
		/* The record's packet part is the packet as it came. */
		tr_addr(4, "192.0.2.1", a);
		ASSERT_MEM(r.src, a, 16, what);
		tr_end_is(&r, 4, XNF_V_REDIRECT, XNF_R_NONE, what);

		/* The connection's next packet: translated by conntrack's
		 * entry, no new translation, no rule. */
		if (!ASSERT_EQ(tr_run(&t, &s, &out), XDP_REDIRECT, what) ||
		    !ASSERT_EQ(tr_read(&t), 1, what))
			goto out;
		ASSERT_EQ(t.got.r[0].step[1].flags, XNF_TRACE_S_NAT, what);
		ASSERT_MEM(t.got.r[0].step[1].addr, r.step[1].addr, 16, what);
		ASSERT_EQ(t.got.r[0].step[1].port, r.step[1].port, what);
out:
		tr_close(&t);
	}
}

/* What l3fwd's fib mode asks of the kernel here: a connected neighbour
 * on ut1 and a route via it; ut1 up (rtsync_masquerade leaves it down). */
static const char tr_fib_setup[] =
	"ip link set ut1 up && "
	"ip addr replace 198.51.100.254/24 dev ut1 && "
	"ip neigh replace 198.51.100.1 lladdr 02:00:00:00:01:01 dev ut1 nud permanent && "
	"ip route replace 10.7.0.0/16 via 198.51.100.1 && "
	"sysctl -qw net.ipv4.ip_forward=1";
static const char tr_fib_cleanup[] =
	"sysctl -qw net.ipv4.ip_forward=0; "
	"ip route del 10.7.0.0/16 2>/dev/null; "
	"ip neigh del 198.51.100.1 dev ut1 2>/dev/null; "
	"ip addr del 198.51.100.254/24 dev ut1 2>/dev/null; true";

/* fib mode: the egress and the next hop from bpf_fib_lookup's answer
 * (a gateway, or the destination itself when it is connected). */
TEST(trace_fib)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct pkt_spec via = { .family = 4, .dst = "10.7.1.1" };
		struct pkt_spec conn = { .family = 4, .dst = "198.51.100.1" };
		struct xnf_trace_rec r;
		__u8 a[16];
		struct tr t;

		if (!tr_open(&t))
			return;
		if (!ASSERT_OK(fx_sh("%s", tr_fib_setup),
			       "configure the kernel's FIB") ||
		    !fx_chain(&t.f, "l3fwd", fused, true) ||
		    !tr_arm(&t, NULL, 0, 0, 0))
			goto out;
		tr_addr(4, "198.51.100.1", a);
		if (tr_one(&t, &via, &r, what)) {
			tr_step_is(&r, 0, XNF_NF_L3FWD, XNF_V_REDIRECT,
				   XNF_R_NONE, what);
			ASSERT_EQ(r.step[0].flags,
				  XNF_TRACE_S_EGRESS | XNF_TRACE_S_GW, what);
			ASSERT_EQ(r.step[0].ifindex, t.f.ifindex[1], what);
			ASSERT_MEM(r.step[0].gw, a, 16, what);
			ASSERT_EQ(r.egress, t.f.ifindex[1], what);
		}
		if (tr_one(&t, &conn, &r, what)) {
			ASSERT_EQ(r.step[0].ifindex, t.f.ifindex[1], what);
			ASSERT_MEM(r.step[0].gw, a, 16, what);
		}
out:
		fx_sh("%s", tr_fib_cleanup);
		tr_close(&t);
	}
}
