// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The packet log's library (lib/pktlog.c): the checks of a rule's log
 * fields, the limit rate and log-reasons syntax, the nf_log line.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "conf.h"
#include "pktlog.h"
#include "fixture.h"

#define ASSERT_STREQ(got, want, what)                                \
	xnf_test_check(!strcmp(got, want), __FILE__, __LINE__, what, \
		       "got\n  '%s'\nwant\n  '%s'", got, want)

static struct xnf_fw_rule log_rule(void)
{
	struct xnf_fw_rule r = { .prio = 10, .action = XNF_FW_DROP };

	r.log = 1;
	r.log_rate = XNF_LOG_RATE;
	r.log_unit_s = XNF_LOG_UNIT_S;
	r.log_burst = XNF_LOG_BURST;
	return r;
}

TEST(pktlog_rule_check)
{
	struct xnf_fw_rule r = log_rule(), plain = { .prio = 1 };
	char err[256];

	ASSERT_OK(xnf_fw_rule_check(&r, err, sizeof(err)), "defaults");
	ASSERT_OK(xnf_fw_rule_check(&plain, err, sizeof(err)), "no log");
	snprintf(r.log_prefix, sizeof(r.log_prefix), "fw drop: ");
	ASSERT_OK(xnf_fw_rule_check(&r, err, sizeof(err)), "a prefix");
	r.log_burst = XNF_LOG_BURST_MAX;
	r.log_rate = XNF_LOG_RATE_MAX;
	r.log_unit_s = 86400;
	ASSERT_OK(xnf_fw_rule_check(&r, err, sizeof(err)), "the largest");

	r = log_rule();
	r.log_rate = 0;
	ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL, "rate 0");
	r = log_rule();
	r.log_rate = XNF_LOG_RATE_MAX + 1;
	ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL,
		  "rate too high");
	r = log_rule();
	r.log_unit_s = 2;
	ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL, "unit 2");
	r = log_rule();
	r.log_burst = XNF_LOG_BURST_MAX + 1;
	ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL,
		  "burst too high");
	r = log_rule();
	memset(r.log_prefix, 'a', sizeof(r.log_prefix));
	ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL,
		  "prefix without its NUL");
	r = log_rule();
	snprintf(r.log_prefix, sizeof(r.log_prefix), "a\"b");
	ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL, "a quote");
	snprintf(r.log_prefix, sizeof(r.log_prefix), "a\nb");
	ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL, "a newline");
	r = log_rule();
	r.log = 2;
	ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL, "log 2");
	plain.log_rate = 5;
	ASSERT_EQ(xnf_fw_rule_check(&plain, err, sizeof(err)), -EINVAL,
		  "a limit without log");
	plain.log_rate = 0;
	snprintf(plain.log_prefix, sizeof(plain.log_prefix), "x");
	ASSERT_EQ(xnf_fw_rule_check(&plain, err, sizeof(err)), -EINVAL,
		  "a prefix without log");
}

TEST(pktlog_rate_parse)
{
	__u32 rate = 0, unit = 0;
	char err[256];

	ASSERT_OK(xnf_log_rate_parse("10/second", &rate, &unit, err, sizeof(err)),
		  "10/second");
	ASSERT_EQ(rate, 10, "rate");
	ASSERT_EQ(unit, 1, "unit");
	ASSERT_OK(xnf_log_rate_parse("3/day", &rate, &unit, err, sizeof(err)),
		  "3/day");
	ASSERT_EQ(rate, 3, "rate of a day");
	ASSERT_EQ(unit, 86400, "a day");
	ASSERT_OK(xnf_log_rate_parse("7/minute", &rate, &unit, NULL, 0),
		  "minute");
	ASSERT_EQ(unit, 60, "a minute");
	ASSERT_OK(xnf_log_rate_parse("7/hour", &rate, &unit, NULL, 0), "hour");
	ASSERT_EQ(unit, 3600, "an hour");
	ASSERT_EQ(xnf_log_rate_parse("0/second", &rate, &unit, NULL, 0),
		  -EINVAL, "0");
	ASSERT_EQ(xnf_log_rate_parse("-1/second", &rate, &unit, NULL, 0),
		  -EINVAL, "negative");
	ASSERT_EQ(xnf_log_rate_parse("10/week", &rate, &unit, NULL, 0), -EINVAL,
		  "week");
	ASSERT_EQ(xnf_log_rate_parse("10", &rate, &unit, NULL, 0), -EINVAL,
		  "no unit");
	ASSERT_EQ(xnf_log_rate_parse("1x/second", &rate, &unit, NULL, 0),
		  -EINVAL, "not a number");
	ASSERT_EQ(xnf_log_rate_parse("1000001/second", &rate, &unit, NULL, 0),
		  -EINVAL, "above the most");
}

TEST(pktlog_reasons_parse)
{
	__u64 mask = 99;
	char buf[512];

	ASSERT_OK(xnf_log_reasons_parse("none", &mask, NULL, 0), "none");
	ASSERT_EQ(mask, 0, "none is 0");
	ASSERT_OK(xnf_log_reasons_parse("martian,bad_csum", &mask, NULL, 0),
		  "two");
	ASSERT_EQ(mask, (1ULL << XNF_R_MARTIAN) | (1ULL << XNF_R_BAD_CSUM),
		  "their bits");
	xnf_log_reasons_format(mask, buf, sizeof(buf));
	ASSERT_STREQ(buf, "bad_csum,martian", "in reason order");
	xnf_log_reasons_format(0, buf, sizeof(buf));
	ASSERT_STREQ(buf, "none", "0 reads none");
	mask = 5;
	ASSERT_EQ(xnf_log_reasons_parse("none,martian", &mask, NULL, 0),
		  -EINVAL, "none mixed");
	ASSERT_EQ(xnf_log_reasons_parse("martian,none", &mask, NULL, 0),
		  -EINVAL, "none mixed, last");
	ASSERT_EQ(xnf_log_reasons_parse("nope", &mask, NULL, 0), -EINVAL,
		  "unknown");
	ASSERT_EQ(xnf_log_reasons_parse("", &mask, NULL, 0), -EINVAL, "empty");
	ASSERT_EQ(xnf_log_reasons_parse(",", &mask, NULL, 0), -EINVAL,
		  "a lone comma");
	ASSERT_EQ(mask, 5, "untouched by a refusal");
}

TEST(pktlog_format)
{
	struct xnf_log_rec r = {
		.source = 3,
		.prio = 10,
		.ifindex = 1, /* lo */
		.family = XNF_AF_INET,
		.l4_proto = IPPROTO_TCP,
		.verdict = XNF_V_DROP,
		.reason = XNF_R_FW_DENY,
		.ttl = 64,
		.tcp_flags = 0x12,
		.pkt_flags = XNF_PKT_F_PORTS | XNF_PKT_F_TCP,
		.ip_len = 60,
		.dmac = { 0x02, 0, 0, 0, 0, 1 },
		.smac = { 0x02, 0, 0, 0, 0, 2 },
	};
	char line[XNF_LOG_LINE_MAX];
	int n;

	if (!fx_env())
		return;
	r.eth_proto = htons(0x0800);
	r.sport = htons(1024);
	r.dport = htons(22);
	inet_pton(AF_INET, "192.0.2.2", r.src);
	inet_pton(AF_INET, "198.51.100.2", r.dst);
	snprintf(r.prefix, sizeof(r.prefix), "ssh: ");
	n = xnf_log_format(&r, line, sizeof(line));
	ASSERT_STREQ(line,
		     "ssh: IN=lo OUT= MAC=02:00:00:00:00:01:02:00:00:00:00:02:08:00 SRC=192.0.2.2 DST=198.51.100.2 LEN=60 TTL=64 PROTO=TCP SPT=1024 DPT=22 ACK SYN XNF=rule:10 drop",
		     "tcp, a rule's drop");
	ASSERT_EQ(n, strlen(line), "its length");

	r.source = XNF_LOG_REASON_BASE + XNF_R_BAD_CSUM;
	r.reason = XNF_R_BAD_CSUM;
	r.prefix[0] = '\0';
	r.l4_proto = IPPROTO_ICMP;
	r.pkt_flags = XNF_PKT_F_ICMP;
	r.icmp_type = 8;
	r.ip_len = 84;
	xnf_log_format(&r, line, sizeof(line));
	ASSERT_STREQ(line,
		     "IN=lo OUT= MAC=02:00:00:00:00:01:02:00:00:00:00:02:08:00 SRC=192.0.2.2 DST=198.51.100.2 LEN=84 TTL=64 PROTO=ICMP TYPE=8 CODE=0 XNF=reason:bad_csum drop",
		     "icmp, a reason's drop");

	r.family = XNF_AF_INET6;
	r.eth_proto = htons(0x86dd);
	inet_pton(AF_INET6, "2001:db8::1", r.src);
	inet_pton(AF_INET6, "2001:db8::2", r.dst);
	r.source = XNF_LOG_REASON_BASE + XNF_R_NO_ROUTE;
	r.reason = XNF_R_NO_ROUTE;
	r.verdict = XNF_V_PASS;
	r.l4_proto = IPPROTO_UDP;
	r.pkt_flags = XNF_PKT_F_PORTS;
	xnf_log_format(&r, line, sizeof(line));
	ASSERT_STREQ(line,
		     "IN=lo OUT= MAC=02:00:00:00:00:01:02:00:00:00:00:02:86:dd SRC=2001:db8::1 DST=2001:db8::2 LEN=84 HOPLIMIT=64 PROTO=UDP SPT=1024 DPT=22 XNF=reason:no_route pass",
		     "udp over IPv6, a reason's pass");

	r.source = 7;
	r.reason = XNF_R_NONE;
	r.family = XNF_AF_NONE;
	r.eth_proto = htons(0x0806);
	xnf_log_format(&r, line, sizeof(line));
	ASSERT_STREQ(line,
		     "IN=lo OUT= MAC=02:00:00:00:00:01:02:00:00:00:00:02:08:06 XNF=rule:10 allow",
		     "not IP, a rule's allow");
	n = xnf_log_format(&r, line, 10);
	ASSERT_GE(n, 10, "cut: the length it needs");
	ASSERT_EQ(strlen(line), 9, "cut, NUL-terminated");
}

/* ---- the datapath: rules that log, the limit, the ring, the reasons ---- */

/* Runs @pkt @repeat times through the chain in one BPF_PROG_TEST_RUN;
 * the last run's action. */
static int log_run(struct fx *f, const void *pkt, __u32 len, __u32 repeat)
{
	struct xdp_md ctx = { .ingress_ifindex = f->ifindex[0], .data_end = len };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
		    .data_size_in = len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = repeat, );

	if (bpf_prog_test_run_opts(xnf_chain_prog_fd(f->chain), &opts))
		return -errno;
	return opts.retval;
}

/* The records xnf_log_read() delivers, kept. */
struct log_got {
	struct xnf_log_rec rec[XNF_LOG_SLOTS];
	__u32 n;
};

static int log_keep(const struct xnf_log_rec *r, void *ctx)
{
	struct log_got *g = ctx;

	if (g->n < XNF_LOG_SLOTS)
		g->rec[g->n] = *r;
	g->n++;
	return 0;
}

/* Reads what the ring holds from *@next on into a fresh @g. */
static int log_drain(struct fx *f, __u64 *next, __u64 *lost, struct log_got *g)
{
	memset(g, 0, sizeof(*g));
	return xnf_log_read(f->dp, next, lost, log_keep, g);
}

static struct xnf_log_counters log_counters(struct fx *f, __u32 source)
{
	static struct xnf_log_counters c[XNF_LOG_SOURCES];

	memset(c, 0, sizeof(c));
	ASSERT_OK(xnf_log_counters_read(f->dp, c), "read xnf_log_stats");
	return c[source];
}

static __u64 log_hits(struct fx *f, __u32 slot)
{
	static struct xnf_fw_hit hits[XNF_FW_HITS];

	memset(hits, 0, sizeof(hits));
	ASSERT_OK(xnf_fw_hits_read(f->dp, hits), "read xnf_fw_hits");
	return hits[slot].packets;
}

/* @rules[@n] in slots 0.., default allow, in the linear form or the
 * tables. */
static bool log_rules(struct fx *f, const struct xnf_fw_rule *rules, __u32 n,
		      bool tables)
{
	struct xnf_fw_set *set = xnf_fw_set_new();
	char err[256] = "";
	int ret = 0;
	__u32 i;

	if (!ASSERT_TRUE(set, "a set"))
		return false;
	for (i = 0; i < n && !ret; i++)
		ret = xnf_fw_set_replace(set, i, &rules[i]);
	xnf_fw_set_linear(set, !tables);
	ret = ret ?: xnf_fw_apply(f->dp, set, err, sizeof(err));
	xnf_fw_set_free(set);
	return ASSERT_OK(ret, err[0] ? err : "xnf_fw_apply");
}

static struct xnf_fw_rule log_proto_rule(__u32 prio, __u8 action, __u8 proto,
					 bool log)
{
	struct xnf_fw_rule r = { .prio = prio, .action = action };

	r.flags = XNF_FW_F_PROTO;
	r.proto = proto;
	if (log) {
		r.log = 1;
		r.log_rate = XNF_LOG_RATE_MAX;
		r.log_unit_s = 1;
		r.log_burst = XNF_LOG_BURST_MAX;
	}
	return r;
}

/* A rule with log logs every packet it matches, whatever its action, and
 * the packet gets the action all the same; from the flow cache too; a
 * rule without log writes nothing. */
static void log_rule_case(bool fused, bool tables)
{
	struct xnf_fw_rule r[3] = {
		log_proto_rule(10, XNF_FW_DROP, IPPROTO_UDP, true),
		log_proto_rule(20, XNF_FW_ALLOW, IPPROTO_TCP, true),
		log_proto_rule(30, XNF_FW_DROP, IPPROTO_ICMP, false),
	};
	struct pkt_spec udp = { .family = 4, .dport = 53, .ttl = 33 };
	struct pkt_spec tcp = { .family = 4, .proto = IPPROTO_TCP };
	struct pkt_spec icmp = { .family = 4, .proto = IPPROTO_ICMP };
	static struct log_got g;
	struct xnf_log_limit *lim = NULL;
	__u64 next = ~0ULL, lost = 0, fc_hits;
	__u8 buf[PKT_MAX], want_src[4], want_dst[4];
	struct xnf_stats st;
	struct xnf_config cfg;
	struct fx f;
	int len;

	snprintf(r[0].log_prefix, sizeof(r[0].log_prefix), "dns: ");
	if (!fx_open(&f))
		return;
	if (!log_rules(&f, r, 3, tables) ||
	    !fx_chain(&f, "firewall", fused, false))
		goto out;
	lim = calloc(XNF_LOG_SOURCES, sizeof(*lim));
	if (!ASSERT_TRUE(lim, "room") ||
	    !ASSERT_OK(xnf_log_limits_read(f.dp, lim), "limits"))
		goto out;
	ASSERT_EQ(lim[0].rate, XNF_LOG_RATE_MAX, "slot 0's bucket written");
	ASSERT_EQ(lim[0].prio, 10, "with its prio");
	ASSERT_STREQ(lim[0].prefix, "dns: ", "and its prefix");
	ASSERT_EQ(lim[1].rate, XNF_LOG_RATE_MAX, "slot 1's bucket");
	ASSERT_EQ(lim[2].rate, 0, "slot 2 does not log");
	ASSERT_OK(xnf_log_read(f.dp, &next, &lost, log_keep, &g), "the end");
	ASSERT_EQ(next, 0, "an empty ring's end");

	len = pkt_build(buf, sizeof(buf), &udp);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_DROP, "udp: the rule's drop");
	len = pkt_build(buf, sizeof(buf), &tcp);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_PASS, "tcp: the rule's allow");
	len = pkt_build(buf, sizeof(buf), &icmp);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_DROP, "icmp: dropped");
	if (!ASSERT_EQ(log_drain(&f, &next, &lost, &g), 2, "two records"))
		goto out;
	ASSERT_EQ(next, 2, "next moved past them");
	ASSERT_EQ(lost, 0, "none lost");
	inet_pton(AF_INET, "192.0.2.1", want_src);
	inet_pton(AF_INET, "198.51.100.1", want_dst);
	ASSERT_EQ(g.rec[0].seq, 1, "first record's seq");
	ASSERT_EQ(g.rec[0].source, 0, "source: slot 0");
	ASSERT_EQ(g.rec[0].prio, 10, "prio");
	ASSERT_EQ(g.rec[0].verdict, XNF_V_DROP, "verdict drop");
	ASSERT_EQ(g.rec[0].reason, XNF_R_FW_DENY, "reason fw_deny");
	ASSERT_EQ(g.rec[0].ifindex, f.ifindex[0], "ingress");
	ASSERT_EQ(g.rec[0].family, XNF_AF_INET, "family");
	ASSERT_EQ(g.rec[0].l4_proto, IPPROTO_UDP, "udp");
	ASSERT_EQ(g.rec[0].ttl, 33, "ttl from the frame");
	ASSERT_EQ(ntohs(g.rec[0].sport), 1024, "sport");
	ASSERT_EQ(ntohs(g.rec[0].dport), 53, "dport");
	ASSERT_EQ(ntohs(g.rec[0].eth_proto), 0x0800, "ethertype");
	ASSERT_EQ(g.rec[0].len, 64, "frame length");
	ASSERT_EQ(g.rec[0].ip_len, 50, "IP total length");
	ASSERT_MEM(g.rec[0].src, want_src, 4, "source address");
	ASSERT_MEM(g.rec[0].dst, want_dst, 4, "destination address");
	ASSERT_MEM(g.rec[0].dmac, ((__u8[6]){ 2, 0, 0, 0, 0, 1 }), 6, "dmac");
	ASSERT_MEM(g.rec[0].smac, ((__u8[6]){ 2, 0, 0, 0, 0, 2 }), 6, "smac");
	ASSERT_STREQ(g.rec[0].prefix, "dns: ", "prefix");
	ASSERT_EQ(g.rec[1].seq, 2, "second record's seq");
	ASSERT_EQ(g.rec[1].source, 1, "source: slot 1");
	ASSERT_EQ(g.rec[1].prio, 20, "its prio");
	ASSERT_EQ(g.rec[1].reason, XNF_R_NONE, "an allow: no reason");
	ASSERT_TRUE(g.rec[1].pkt_flags & XNF_PKT_F_TCP, "tcp flags read");
	ASSERT_STREQ(g.rec[1].prefix, "", "no prefix");

	/* The flow's second packet: the decision from the flow cache (when
	 * XNF_UT_FLOW_CACHE=off left it on), logged all the same. */
	ASSERT_TRUE(fx_stats(&f, &st), "stats");
	ASSERT_OK(xnf_cfg_read(f.dp, &cfg), "read xnf_cfg");
	fc_hits = st.fc_hit[XNF_NF_FIREWALL];
	len = pkt_build(buf, sizeof(buf), &udp);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_DROP, "udp again: dropped");
	ASSERT_TRUE(fx_stats(&f, &st), "stats");
	ASSERT_EQ(st.fc_hit[XNF_NF_FIREWALL], fc_hits + !!cfg.flow_cache,
		  "decided by the flow cache when it is on");
	ASSERT_EQ(log_drain(&f, &next, &lost, &g), 1, "and logged");
	ASSERT_EQ(g.rec[0].source, 0, "by its rule");

	ASSERT_EQ(log_counters(&f, 0).logged, 2, "slot 0 logged 2");
	ASSERT_EQ(log_counters(&f, 1).logged, 1, "slot 1 logged 1");
	ASSERT_EQ(log_counters(&f, 2).logged + log_counters(&f, 2).suppressed,
		  0, "slot 2 never logs");
	ASSERT_EQ(log_hits(&f, 2), 1, "though it matched");

	/* The same rules without log: nothing more is written. */
	r[0].log = r[1].log = 0;
	r[0].log_rate = r[1].log_rate = 0;
	r[0].log_unit_s = r[1].log_unit_s = 0;
	r[0].log_burst = r[1].log_burst = 0;
	r[0].log_prefix[0] = '\0';
	if (!log_rules(&f, r, 3, tables))
		goto out;
	ASSERT_OK(xnf_log_limits_read(f.dp, lim), "limits");
	ASSERT_EQ(lim[0].rate, 0, "slot 0's bucket cleared");
	len = pkt_build(buf, sizeof(buf), &udp);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_DROP, "udp: still dropped");
	ASSERT_EQ(log_drain(&f, &next, &lost, &g), 0, "no record");
	ASSERT_EQ(log_counters(&f, 0).logged, 0,
		  "a changed rule's counters start over");
out:
	free(lim);
	fx_close(&f);
}

TEST(pktlog_rule)
{
	SUBTEST("tail-called")
		log_rule_case(false, false);
	SUBTEST("fused")
		log_rule_case(true, false);
	SUBTEST("tables")
		log_rule_case(false, true);
}

static double log_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* nft's limit: a burst, then the rate; every packet the rule matched is
 * either logged or suppressed. */
TEST(pktlog_limit)
{
	struct xnf_fw_rule r = log_proto_rule(10, XNF_FW_DROP, IPPROTO_UDP, true);
	struct pkt_spec udp = { .family = 4 };
	struct xnf_log_counters c;
	double t0, t1, t2;
	__u8 buf[PKT_MAX];
	struct fx f;
	int len;

	r.log_rate = 10;
	r.log_burst = 5;
	if (!fx_open(&f))
		return;
	if (!fx_chain(&f, "firewall", false, false))
		goto out;
	len = pkt_build(buf, sizeof(buf), &udp);
	t0 = log_now();
	if (!log_rules(&f, &r, 1, false))
		goto out;
	ASSERT_EQ(log_run(&f, buf, len, 200), XDP_DROP, "200 dropped");
	t1 = log_now();
	c = log_counters(&f, 0);
	ASSERT_EQ(c.logged + c.suppressed, 200, "each logged or suppressed");
	ASSERT_EQ(log_hits(&f, 0), 200, "the rule's hits");
	ASSERT_GE(c.logged, 5, "the burst");
	ASSERT_LE(c.logged, 5 + 10 * (t1 - t0) + 1, "then at most the rate");
	usleep(350 * 1000);
	ASSERT_EQ(log_run(&f, buf, len, 200), XDP_DROP, "200 more");
	t2 = log_now();
	c = log_counters(&f, 0);
	ASSERT_EQ(c.logged + c.suppressed, 400, "each logged or suppressed");
	ASSERT_EQ(log_hits(&f, 0), 400, "the rule's hits");
	ASSERT_GE(c.logged, 5 + 3, "350 ms refilled 3 tokens at 10/second");
	ASSERT_LE(c.logged, 5 + 10 * (t2 - t0) + 1, "never above the rate");
out:
	fx_close(&f);
}

/* More records than the ring holds: the reader learns how many it lost
 * and reads the rest in order; a reader from the end sees only new
 * records. */
TEST(pktlog_ring_wraps)
{
	struct xnf_fw_rule r = log_proto_rule(10, XNF_FW_ALLOW, IPPROTO_UDP,
					      true);
	struct pkt_spec udp = { .family = 4 };
	__u64 next = 0, lost = 0, late = ~0ULL, late_lost = 0;
	static struct log_got g;
	__u32 i, bad = 0;
	__u8 buf[PKT_MAX];
	struct fx f;
	int len;

	if (!fx_open(&f))
		return;
	if (!log_rules(&f, &r, 1, false) ||
	    !fx_chain(&f, "firewall", false, false))
		goto out;
	len = pkt_build(buf, sizeof(buf), &udp);
	ASSERT_EQ(log_run(&f, buf, len, 1500), XDP_PASS, "1500 allowed");
	ASSERT_EQ(log_counters(&f, 0).logged, 1500, "all logged");
	ASSERT_OK(xnf_log_read(f.dp, &late, &late_lost, log_keep, &g),
		  "a reader from the end");
	ASSERT_EQ(late, 1500, "starts at the end");
	if (!ASSERT_EQ(log_drain(&f, &next, &lost, &g), XNF_LOG_SLOTS,
		       "the ring's worth"))
		goto out;
	ASSERT_EQ(lost, 1500 - XNF_LOG_SLOTS, "the others lost");
	ASSERT_EQ(next, 1500, "next at the end");
	for (i = 0; i < XNF_LOG_SLOTS; i++)
		bad += g.rec[i].seq != 1500 - XNF_LOG_SLOTS + i + 1;
	ASSERT_EQ(bad, 0, "in order, consecutive");
	ASSERT_EQ(log_drain(&f, &next, &lost, &g), 0, "nothing new");
	ASSERT_EQ(log_run(&f, buf, len, 3), XDP_PASS, "3 more");
	ASSERT_EQ(log_drain(&f, &next, &lost, &g), 3, "read 3");
	ASSERT_EQ(g.rec[2].seq, 1503, "the last");
	ASSERT_EQ(log_drain(&f, &late, &late_lost, &g), 3,
		  "the late reader reads the 3 new ones");
	ASSERT_EQ(late_lost, 0, "and lost none");
out:
	fx_close(&f);
}

/* Drops and passes for a configured reason are logged; others, and what
 * is forwarded, are not. */
static void log_reason_case(bool fused)
{
	struct pkt_spec no_route = { .family = 4, .dst = "192.0.2.9" };
	struct pkt_spec bad_csum = { .family = 4, .ip_csum = PKT_CSUM_PLUS1 };
	struct pkt_spec fwd = { .family = 4 };
	struct pkt_spec ttl = { .family = 4, .ttl = 1 };
	__u64 next = ~0ULL, lost = 0;
	struct xnf_log_limit *lim = NULL;
	static struct log_got g;
	struct xnf_config cfg;
	__u8 buf[PKT_MAX];
	struct fx f;
	int len;

	if (!fx_open(&f))
		return;
	if (!fx_l3_table(&f) || !fx_chain(&f, "l3fwd", fused, false))
		goto out;
	ASSERT_OK(xnf_log_read(f.dp, &next, &lost, log_keep, &g), "the end");
	len = pkt_build(buf, sizeof(buf), &no_route);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_PASS, "no route: passed");
	ASSERT_EQ(log_drain(&f, &next, &lost, &g), 0, "not sampled yet");

	if (!ASSERT_OK(xnf_cfg_read(f.dp, &cfg), "read xnf_cfg"))
		goto out;
	cfg.log_reasons = 1ULL << XNF_R_NO_ROUTE | 1ULL << XNF_R_BAD_CSUM;
	cfg.log_rate = 1000;
	cfg.log_unit_s = 60;
	if (!ASSERT_OK(xnf_cfg_write(f.dp, &cfg), "write xnf_cfg"))
		goto out;
	lim = calloc(XNF_LOG_SOURCES, sizeof(*lim));
	if (!ASSERT_TRUE(lim, "room") ||
	    !ASSERT_OK(xnf_log_limits_read(f.dp, lim), "limits"))
		goto out;
	ASSERT_EQ(lim[XNF_LOG_REASON_BASE + XNF_R_NO_ROUTE].rate, 1000,
		  "no_route's bucket");
	ASSERT_EQ(lim[XNF_LOG_REASON_BASE + XNF_R_NO_ROUTE].unit_s, 60,
		  "per minute");
	ASSERT_EQ(lim[XNF_LOG_REASON_BASE + XNF_R_TTL].rate, 0,
		  "ttl_expired has none");

	len = pkt_build(buf, sizeof(buf), &no_route);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_PASS, "no route: passed");
	len = pkt_build(buf, sizeof(buf), &bad_csum);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_DROP, "bad checksum: dropped");
	len = pkt_build(buf, sizeof(buf), &fwd);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_REDIRECT, "forwarded");
	len = pkt_build(buf, sizeof(buf), &ttl);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_PASS, "ttl: passed");
	if (!ASSERT_EQ(log_drain(&f, &next, &lost, &g), 2,
		       "the two sampled reasons"))
		goto out;
	ASSERT_EQ(g.rec[0].source, XNF_LOG_REASON_BASE + XNF_R_NO_ROUTE,
		  "no_route's source");
	ASSERT_EQ(g.rec[0].verdict, XNF_V_PASS, "a pass");
	ASSERT_EQ(g.rec[0].reason, XNF_R_NO_ROUTE, "reason no_route");
	ASSERT_EQ(g.rec[1].source, XNF_LOG_REASON_BASE + XNF_R_BAD_CSUM,
		  "bad_csum's source");
	ASSERT_EQ(g.rec[1].verdict, XNF_V_DROP, "a drop");
	ASSERT_EQ(log_counters(&f, XNF_LOG_REASON_BASE + XNF_R_NO_ROUTE).logged,
		  1, "no_route logged 1");

	cfg.log_reasons = 0;
	if (!ASSERT_OK(xnf_cfg_write(f.dp, &cfg), "write xnf_cfg"))
		goto out;
	len = pkt_build(buf, sizeof(buf), &no_route);
	ASSERT_EQ(log_run(&f, buf, len, 1), XDP_PASS, "no route: passed");
	ASSERT_EQ(log_drain(&f, &next, &lost, &g), 0, "no longer sampled");
	ASSERT_OK(xnf_log_limits_read(f.dp, lim), "limits");
	ASSERT_EQ(lim[XNF_LOG_REASON_BASE + XNF_R_NO_ROUTE].rate, 0,
		  "no_route's bucket cleared");
out:
	free(lim);
	fx_close(&f);
}

TEST(pktlog_reasons)
{
	SUBTEST("tail-called")
		log_reason_case(false);
	SUBTEST("fused")
		log_reason_case(true);
}

/* The config keys: set, read back as set, committed into xnf_cfg and the
 * reasons' buckets. */
TEST(pktlog_config_keys)
{
	struct xnf_log_limit *lim = NULL;
	struct xnf_conf *c = NULL, *run = NULL;
	struct xnf_commit_result res;
	char err[512], val[XNF_CONF_VAL_MAX];
	const char *key;
	struct xnf_config cfg;
	struct fx f;
	size_t i;
	int seen = 0;

	if (!fx_open(&f))
		return;
	if (!ASSERT_OK(xnf_conf_running(f.dp, &c), "running"))
		goto out;
	ASSERT_OK(xnf_conf_config_set(c, "log_reasons", "martian,bad_csum", err,
				      sizeof(err)),
		  err);
	ASSERT_OK(xnf_conf_config_set(c, "log_reasons_limit", "3/minute", err,
				      sizeof(err)),
		  err);
	ASSERT_EQ(xnf_conf_config_set(c, "log_reasons", "none,martian", err,
				      sizeof(err)),
		  -EINVAL, "none mixed");
	ASSERT_EQ(xnf_conf_config_set(c, "log_reasons", "bogus", err, sizeof(err)),
		  -EINVAL, "an unknown reason");
	ASSERT_EQ(xnf_conf_config_set(c, "log_reasons_limit", "3/week", err,
				      sizeof(err)),
		  -EINVAL, "an unknown unit");
	if (!ASSERT_OK(xnf_conf_commit(f.dp, c, NULL, &res, err, sizeof(err)),
		       err))
		goto out;
	ASSERT_OK(xnf_cfg_read(f.dp, &cfg), "read xnf_cfg");
	ASSERT_EQ(cfg.log_reasons,
		  1ULL << XNF_R_MARTIAN | 1ULL << XNF_R_BAD_CSUM, "the bits");
	ASSERT_EQ(cfg.log_rate, 3, "rate");
	ASSERT_EQ(cfg.log_unit_s, 60, "unit");
	lim = calloc(XNF_LOG_SOURCES, sizeof(*lim));
	if (ASSERT_TRUE(lim, "room") &&
	    ASSERT_OK(xnf_log_limits_read(f.dp, lim), "limits")) {
		ASSERT_EQ(lim[XNF_LOG_REASON_BASE + XNF_R_MARTIAN].rate, 3,
			  "martian's bucket");
		ASSERT_EQ(lim[XNF_LOG_REASON_BASE + XNF_R_MARTIAN].burst,
			  XNF_LOG_BURST, "the default burst");
	}
	if (!ASSERT_OK(xnf_conf_settings(f.dp, &run, err, sizeof(err)), err))
		goto out;
	for (i = 0; !xnf_conf_key(run, i, &key, val, sizeof(val)); i++) {
		if (!strcmp(key, "log_reasons")) {
			ASSERT_STREQ(val, "bad_csum,martian", "read back");
			seen++;
		} else if (!strcmp(key, "log_reasons_limit")) {
			ASSERT_STREQ(val, "3/minute", "read back");
			seen++;
		}
	}
	ASSERT_EQ(seen, 2, "both keys listed");
out:
	free(lim);
	xnf_conf_free(run);
	xnf_conf_free(c);
	fx_close(&f);
}

/* A writer on another CPU while a reader reads: every record delivered is
 * whole (the fields of its packet, its timestamp in the order of the
 * sequence), and delivered + lost is what the datapath logged. */
struct log_writer {
	struct fx *f;
	const __u8 *pkt;
	int len;
	volatile bool done;
	int err;
};

static void *log_write_loop(void *arg)
{
	struct log_writer *w = arg;
	int i;

	for (i = 0; i < 200 && !w->err; i++)
		if (log_run(w->f, w->pkt, w->len, 5000) != XDP_PASS)
			w->err = -1;
	w->done = true;
	return NULL;
}

struct log_check {
	__u64 last_seq, last_ts, n, bad;
};

static int log_check_one(const struct xnf_log_rec *r, void *ctx)
{
	struct log_check *c = ctx;

	c->bad += r->seq <= c->last_seq || r->ts < c->last_ts ||
		  r->source != 0 || r->prio != 10 || ntohs(r->dport) != 7 ||
		  strcmp(r->prefix, "stress");
	c->last_seq = r->seq;
	c->last_ts = r->ts;
	c->n++;
	return 0;
}

TEST(pktlog_concurrent_reader)
{
	struct xnf_fw_rule r = log_proto_rule(10, XNF_FW_ALLOW, IPPROTO_UDP,
					      true);
	struct pkt_spec udp = { .family = 4 };
	struct log_check c = {};
	struct log_writer w = {};
	__u64 next = 0, lost = 0;
	__u8 buf[PKT_MAX];
	pthread_t thr;
	struct fx f;
	int ret = 0;

	snprintf(r.log_prefix, sizeof(r.log_prefix), "stress");
	if (!fx_open(&f))
		return;
	if (!log_rules(&f, &r, 1, false) ||
	    !fx_chain(&f, "firewall", false, false))
		goto out;
	w.f = &f;
	w.pkt = buf;
	w.len = pkt_build(buf, sizeof(buf), &udp);
	if (!ASSERT_OK(pthread_create(&thr, NULL, log_write_loop, &w),
		       "start the writer"))
		goto out;
	while (!w.done && ret >= 0)
		ret = xnf_log_read(f.dp, &next, &lost, log_check_one, &c);
	pthread_join(thr, NULL);
	ASSERT_OK(w.err, "the writer's runs");
	ASSERT_GE(ret, 0, "reads");
	ASSERT_GE(xnf_log_read(f.dp, &next, &lost, log_check_one, &c), 0,
		  "the last read");
	ASSERT_EQ(c.bad, 0, "every record whole and in order");
	ASSERT_EQ(c.n + lost, log_counters(&f, 0).logged,
		  "delivered + lost == logged");
	ASSERT_EQ(next, log_counters(&f, 0).logged, "read to the end");
	printf("  %llu records delivered, %llu lost\n", (unsigned long long)c.n,
	       (unsigned long long)lost);
out:
	fx_close(&f);
}

/* A record whose writer took its number but has not finished it (seq
 * still 0) ends the read there; the next read delivers it once whole. A
 * ring whose sequence is behind the reader (made again) is read from its
 * end. */
TEST(pktlog_record_being_written)
{
	struct xnf_log_rec rec = {};
	__u64 next = 0, lost = 0, seq;
	static struct log_got g;
	__u32 zero = 0, i;
	struct fx f;
	int fd;

	if (!fx_open(&f))
		return;
	fd = xnf_table_fd(f.dp, XNF_T_LOG);
	for (i = 0; i < 3; i++) {
		rec.seq = i < 2 ? i + 1 : 0;
		rec.prio = 100 + i;
		ASSERT_OK(bpf_map_update_elem(fd, &i, &rec, BPF_ANY), "a slot");
	}
	seq = 3;
	ASSERT_OK(bpf_map_update_elem(xnf_table_fd(f.dp, XNF_T_LOG_SEQ), &zero,
				      &seq, BPF_ANY),
		  "three taken");
	ASSERT_EQ(log_drain(&f, &next, &lost, &g), 2, "the two whole ones");
	ASSERT_EQ(next, 2, "waits at the third");
	ASSERT_EQ(lost, 0, "which is not lost");
	i = 2;
	rec.seq = 3;
	rec.prio = 102;
	ASSERT_OK(bpf_map_update_elem(fd, &i, &rec, BPF_ANY), "finished");
	ASSERT_EQ(log_drain(&f, &next, &lost, &g), 1, "now read");
	ASSERT_EQ(g.rec[0].prio, 102, "the third");
	ASSERT_EQ(next, 3, "at the end");
	next = 10;
	ASSERT_EQ(log_drain(&f, &next, &lost, &g), 0, "a reader ahead");
	ASSERT_EQ(next, 3, "starts over at the end");
	fx_close(&f);
}
