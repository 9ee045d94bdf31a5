// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The packet log's library (lib/pktlog.c): the checks of a rule's log
 * fields, the limit rate and log-reasons syntax, the nf_log line.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>

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
