// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fw_compile.c - tests of the firewall control plane (loader/fw_compile.c,
 * loader/fw_gen.c): rule checks, first matches on small hand-written sets,
 * the exactness of every compiled table against the rules it came from,
 * and a differential test of the compiled classifier against the linear
 * scan on generated ClassBench-shaped sets of 10 to 10,000 rules.
 *
 * Pure C: nothing here needs root or BPF, except fw_compile_write_maps,
 * which stores compiled sets into real (unpinned) maps and skips itself
 * where maps cannot be created.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "test.h"
#include "xnf.h"
#include "dp_priv.h" /* white-box: the compiled tables as stored */

#define TCP   IPPROTO_TCP
#define UDP   IPPROTO_UDP
#define ICMP  IPPROTO_ICMP
#define ICMP6 IPPROTO_ICMPV6
#define SCTP  132

/* A rule as text. NULL fields match anything; proto 0 is any. */
struct trule {
	__u32 prio;
	int drop;
	const char *src, *dst; /* "192.0.2.0/24", "2001:db8::/32" */
	int proto;
	const char *sport, *dport; /* "80", "1024-65535" */
};

static void parse_pfx(const char *text, __u8 *family, __u8 *addr, __u8 *len)
{
	char buf[64], *slash;
	int af;

	snprintf(buf, sizeof(buf), "%s", text);
	slash = strchr(buf, '/');
	*slash = '\0';
	af = strchr(buf, ':') ? AF_INET6 : AF_INET;
	*family = af == AF_INET ? XNF_AF_INET : XNF_AF_INET6;
	if (inet_pton(af, buf, addr) != 1)
		fprintf(stderr, "bad address in test: %s\n", text);
	*len = atoi(slash + 1);
}

static void parse_ports(const char *text, __u16 *lo, __u16 *hi)
{
	const char *dash = strchr(text, '-');

	*lo = atoi(text);
	*hi = dash ? atoi(dash + 1) : *lo;
}

static struct xnf_fw_rule mk(const struct trule *t)
{
	struct xnf_fw_rule r = { .prio = t->prio, .in_use = 1 };

	r.action = t->drop ? XNF_FW_DROP : XNF_FW_ALLOW;
	if (t->src) {
		parse_pfx(t->src, &r.family, r.src, &r.src_len);
		r.flags |= XNF_FW_F_SRC;
	}
	if (t->dst) {
		parse_pfx(t->dst, &r.family, r.dst, &r.dst_len);
		r.flags |= XNF_FW_F_DST;
	}
	if (t->proto) {
		r.proto = t->proto;
		r.flags |= XNF_FW_F_PROTO;
	}
	if (t->sport) {
		parse_ports(t->sport, &r.sport_lo, &r.sport_hi);
		r.flags |= XNF_FW_F_SPORT;
	}
	if (t->dport) {
		parse_ports(t->dport, &r.dport_lo, &r.dport_hi);
		r.flags |= XNF_FW_F_DPORT;
	}
	return r;
}

/* A packet as text; sport < 0 means its ports could not be read. */
static struct xnf_fw_pkt pkt(const char *src, const char *dst, int proto,
			     int sport, int dport)
{
	struct xnf_fw_pkt p = { .proto = proto };
	int af = strchr(src, ':') ? AF_INET6 : AF_INET;

	p.family = af == AF_INET ? XNF_AF_INET : XNF_AF_INET6;
	inet_pton(af, src, p.src);
	inet_pton(af, dst, p.dst);
	if (sport >= 0) {
		p.ports = true;
		p.sport = sport;
		p.dport = dport;
	}
	return p;
}

/* The slot the compiled tables choose, or -1. */
static int classify_slot(const struct xnf_fw_compiled *c,
			 const struct xnf_fw_rule *rules,
			 const struct xnf_fw_pkt *p)
{
	int i = xnf_fw_classify(c, rules, p);

	if (i < 0)
		return -1;
	if ((__u32)i >= c->hdr.nrules)
		return -2;
	return c->order[i].slot;
}

/* Both classifiers must give @slot. */
static bool expect(const struct xnf_fw_rule *rules, __u32 n,
		   const struct xnf_fw_compiled *c, struct xnf_fw_pkt p,
		   int slot, const char *what)
{
	bool ok = ASSERT_EQ(classify_slot(c, rules, &p), slot, what);

	return ASSERT_EQ(xnf_fw_linear(rules, n, &p), slot, what) && ok;
}

static struct xnf_fw_compiled *compile(const struct xnf_fw_rule *rules, __u32 n)
{
	struct xnf_fw_compiled *c = NULL;

	if (!ASSERT_OK(xnf_fw_compile(rules, n, XNF_FW_ALLOW, &c, NULL, 0),
		       "compile"))
		return NULL;
	return c;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A packet and the slot of the rule it must match (-1: none). */
struct tcase {
	const char *what;
	const char *src, *dst;
	int proto;
	int sport, dport; /* sport < 0: the ports could not be read */
	int slot;
};

/* Rule t[i] in slot i; every case through both classifiers. */
static struct xnf_fw_compiled *run_cases(const struct trule *t, __u32 nt,
					 const struct tcase *k, __u32 nk,
					 struct xnf_fw_rule *r)
{
	struct xnf_fw_compiled *c;
	__u32 i;

	for (i = 0; i < nt; i++)
		r[i] = mk(&t[i]);
	c = compile(r, nt);
	if (!c)
		return NULL;
	for (i = 0; i < nk; i++)
		expect(r, nt, c,
		       pkt(k[i].src, k[i].dst, k[i].proto, k[i].sport, k[i].dport),
		       k[i].slot, k[i].what);
	return c;
}

#define RUN_CASES(t, k)                                                        \
	({                                                                     \
		struct xnf_fw_rule _r[sizeof(t) / sizeof(t[0])];               \
		xnf_fw_compiled_free(run_cases(t, sizeof(t) / sizeof(t[0]), k, \
					       sizeof(k) / sizeof(k[0]), _r)); \
	})

TEST(fw_compile_prefix_overlap)
{
	static const struct trule t[] = {
		{ 10, 1, "192.0.2.0/25" },
		{ 20, 0, "192.0.2.0/24", "198.51.100.7/32" },
		{ 30, 1, "192.0.0.0/16" },
		{ 40, 0, NULL, "198.51.100.0/24" },
		/* a broad rule before a narrower one shadows it */
		{ 50, 0, "10.0.0.0/8" },
		{ 60, 1, "10.1.2.3/32" },
		{ 70, 1, "10.1.2.0/24", "203.0.113.0/24" },
		{ 80, 0, "0.0.0.0/0", "203.0.113.128/25" },
	};
	static const struct tcase k[] = {
		{ "/25 first", "192.0.2.1", "198.51.100.7", TCP, 1, 2, 0 },
		{ "/25 last", "192.0.2.127", "1.1.1.1", TCP, 1, 2, 0 },
		{ "/24 outside the /25", "192.0.2.128", "198.51.100.7", TCP, 1,
		  2, 1 },
		{ "/24, other dst: /16", "192.0.2.255", "198.51.100.8", TCP, 1,
		  2, 2 },
		{ "/16 outside the /24", "192.0.3.1", "198.51.100.7", UDP, 1, 2,
		  2 },
		{ "dst-only rule", "192.1.0.0", "198.51.100.200", UDP, 1, 2, 3 },
		{ "nothing", "192.1.0.0", "198.51.101.0", UDP, 1, 2, -1 },
		{ "shadowed /32", "10.1.2.3", "203.0.113.1", UDP, 1, 2, 4 },
		{ "0.0.0.0/0 src", "11.1.2.3", "203.0.113.129", UDP, 1, 2, 7 },
		{ "just below the /25", "11.1.2.3", "203.0.113.127", UDP, 1, 2,
		  -1 },
		{ "v6 vs 0.0.0.0/0", "2001:db8::1", "2001:db8::2", UDP, 1, 2, -1 },
	};

	RUN_CASES(t, k);
}

TEST(fw_compile_port_boundaries)
{
	static const char *s = "192.0.2.1", *d = "198.51.100.1";
	static const char *s2 = "203.0.113.1";
	static const struct trule t[] = {
		{ 10, 1, NULL, NULL, TCP, NULL, "1000-2000" },
		{ 20, 1, NULL, NULL, UDP, "53" },
		{ 30, 0, NULL, NULL, TCP, "0", NULL },
		{ 40, 0, NULL, NULL, TCP, NULL, "65535" },
		{ 50, 1, NULL, NULL, 0, "1500-1600", "1500-1600" },
		{ 60, 0, "203.0.113.0/24", NULL, UDP, NULL, "1-65534" },
	};
	const struct tcase k[] = {
		{ "lo - 1", s, d, TCP, 7, 999, -1 },
		{ "lo", s, d, TCP, 7, 1000, 0 },
		{ "hi", s, d, TCP, 7, 2000, 0 },
		{ "hi + 1", s, d, TCP, 7, 2001, -1 },
		{ "udp in a tcp range", s, d, UDP, 7, 1000, -1 },
		{ "sport 53 - 1", s, d, UDP, 52, 1, -1 },
		{ "sport 53", s, d, UDP, 53, 1, 1 },
		{ "sport 53 + 1", s, d, UDP, 54, 1, -1 },
		{ "sport 0", s, d, TCP, 0, 1, 2 },
		{ "dport 65535", s, d, TCP, 1, 65535, 3 },
		{ "dport 65534", s, d, TCP, 1, 65534, -1 },
		{ "both ranges, any proto", s, d, SCTP, 1500, 1600, 4 },
		{ "sport below", s, d, SCTP, 1499, 1600, -1 },
		{ "dport above", s, d, SCTP, 1500, 1601, -1 },
		{ "priority over rule 4", s, d, TCP, 1500, 1500, 0 },
		{ "1-65534: 0", s2, d, UDP, 7, 0, -1 },
		{ "1-65534: 1", s2, d, UDP, 7, 1, 5 },
		{ "1-65534: 65534", s2, d, UDP, 7, 65534, 5 },
		{ "1-65534: 65535", s2, d, UDP, 7, 65535, -1 },
	};

	RUN_CASES(t, k);
}

TEST(fw_compile_proto_any)
{
	static const char *s = "192.0.2.9", *d = "198.51.100.1";
	static const struct trule t[] = {
		{ 10, 1, "192.0.2.0/24", NULL, TCP },
		{ 20, 0, "192.0.2.0/24", NULL, ICMP },
		{ 30, 1, "192.0.2.0/24" },
		{ 40, 0, NULL, NULL, 255 },
		{ 50, 1, NULL, NULL, 0 },
	};
	const struct tcase k[] = {
		{ "tcp", s, d, TCP, 1, 2, 0 },
		{ "icmp", s, d, ICMP, -1, 0, 1 },
		{ "udp falls to any", s, d, UDP, 1, 2, 2 },
		{ "proto 0 falls to any", s, d, 0, -1, 0, 2 },
		{ "proto 255", d, s, 255, -1, 0, 3 },
		{ "match-all rule", d, s, 254, -1, 0, 4 },
		{ "match-all rule, v6", "2001:db8::1", "2001:db8::2", TCP, 1, 2,
		  4 },
	};

	RUN_CASES(t, k);
}

TEST(fw_compile_families)
{
	static const struct trule t[] = {
		{ 10, 1, "2001:db8:1::/48" },
		{ 20, 0, NULL, "2001:db8::/32", UDP },
		{ 30, 1, "0.0.0.0/0", NULL, UDP },
		{ 40, 0, "::/0", NULL, TCP },
		{ 50, 1, NULL, "192.0.2.0/24" },
		{ 60, 0, NULL, "::ffff:192.0.2.0/120" },
		{ 70, 1, NULL, NULL, ICMP6 },
	};
	static const struct tcase k[] = {
		{ "v6 src /48", "2001:db8:1::5", "::1", ICMP6, -1, 0, 0 },
		{ "v6 dst /32", "2001:db8:2::5", "2001:db8::1", UDP, 1, 2, 1 },
		{ "0.0.0.0/0 is not v6", "2001:db8:2::5", "2001:db9::1", UDP, 1,
		  2, -1 },
		{ "0.0.0.0/0", "192.0.2.1", "192.0.2.2", UDP, 1, 2, 2 },
		{ "::/0 is not v4", "192.0.2.1", "192.0.2.2", TCP, 1, 2, 4 },
		{ "::/0", "::1", "::2", TCP, 1, 2, 3 },
		{ "v4-mapped v6 is v6", "::1", "::ffff:192.0.2.7", UDP, 1, 2, 5 },
		{ "family-less rule, v4", "10.0.0.1", "10.0.0.2", ICMP6, -1, 0,
		  6 },
		{ "nothing", "10.0.0.1", "10.0.0.2", ICMP, -1, 0, -1 },
	};

	RUN_CASES(t, k);
}

TEST(fw_compile_no_ports)
{
	static const char *s = "192.0.2.1", *d = "198.51.100.1";
	static const struct trule t[] = {
		{ 10, 1, NULL, NULL, TCP, NULL, "80" },
		{ 20, 1, NULL, NULL, UDP, NULL, "0-65535" },
		{ 30, 1, NULL, NULL, 0, "0-65535" },
		{ 40, 0, NULL, NULL, TCP },
	};
	const struct tcase k[] = {
		{ "tcp 80 with ports", s, d, TCP, 1234, 80, 0 },
		{ "tcp without ports", s, d, TCP, -1, 80, 3 },
		{ "udp with ports", s, d, UDP, 1, 2, 1 },
		{ "udp fragment: no port rule", s, d, UDP, -1, 0, -1 },
		{ "icmp: no port rule", s, d, ICMP, -1, 0, -1 },
		{ "sctp with ports", s, d, SCTP, 9, 9, 2 },
		{ "sctp without ports", s, d, SCTP, -1, 0, -1 },
	};
	struct xnf_fw_rule r[4];
	struct xnf_fw_compiled *c;

	c = run_cases(t, 4, k, sizeof(k) / sizeof(k[0]), r);
	if (!c)
		return;
	/* Bit i: the i-th rule; rules 0, 1 and 3 have no sport. */
	ASSERT_EQ(c->classes[c->hdr.sport_none].bits[0], 0xb, "sport_none");
	ASSERT_EQ(c->classes[c->hdr.dport_none].bits[0], 0xc, "dport_none");
	xnf_fw_compiled_free(c);
}

TEST(fw_compile_default)
{
	const struct trule t = { 10, 1, "192.0.2.0/24", NULL, TCP, NULL, "22" };
	struct xnf_fw_compiled *c = NULL;
	struct xnf_fw_rule r[3] = {};
	__u32 i;

	/* Empty: every slot free, or no slots at all. */
	for (i = 0; i < 2; i++) {
		if (!ASSERT_OK(xnf_fw_compile(r, i ? 3 : 0, XNF_FW_DROP, &c,
					      NULL, 0),
			       "compile empty"))
			return;
		ASSERT_EQ(c->hdr.nrules, 0, "nrules");
		ASSERT_EQ(c->hdr.default_action, XNF_FW_DROP, "default");
		ASSERT_EQ(c->nsrc, 2, "/0 of both families");
		ASSERT_EQ(c->ndst, 2, "/0 of both families");
		expect(r, 3, c, pkt("192.0.2.1", "192.0.2.2", TCP, 1, 22), -1,
		       "empty set");
		xnf_fw_compiled_free(c);
		c = NULL;
	}
	r[1] = mk(&t);
	if (!ASSERT_OK(xnf_fw_compile(r, 3, XNF_FW_ALLOW, &c, NULL, 0), "compile"))
		return;
	ASSERT_EQ(c->hdr.nrules, 1, "nrules");
	ASSERT_EQ(c->hdr.default_action, XNF_FW_ALLOW, "default");
	ASSERT_EQ(c->order[0].slot, 1, "slot");
	ASSERT_EQ(c->order[0].action, XNF_FW_DROP, "action");
	expect(r, 3, c, pkt("192.0.2.1", "192.0.2.2", TCP, 1, 22), 1, "match");
	expect(r, 3, c, pkt("192.0.2.1", "192.0.2.2", TCP, 1, 23), -1, "default");
	expect(r, 3, c, pkt("192.0.3.1", "192.0.2.2", TCP, 1, 22), -1, "default");
	xnf_fw_compiled_free(c);
	c = NULL;
	ASSERT_EQ(xnf_fw_compile(r, 3, 2, &c, NULL, 0), -EINVAL,
		  "bad default policy");
	ASSERT_TRUE(c == NULL, "no output on error");
}

/* Up to XNF_FW_LINEAR_MAX rules the header offers the linear form, whose
 * scan takes xnf_fw_order as it is: entry i must be the rule of rank i. */
TEST(fw_compile_linear_form)
{
	static const __u32 sizes[] = { 1, 10, XNF_FW_LINEAR_MAX,
				       XNF_FW_LINEAR_MAX + 1, 1000 };
	struct xnf_fw_rule *r = calloc(1000, sizeof(*r));
	struct xnf_fw_compiled *c;
	__u32 k, i;

	if (!ASSERT_TRUE(r != NULL, "calloc"))
		return;
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		__u32 n = sizes[k];

		/* Slots in the reverse of priority order. */
		if (!ASSERT_OK(xnf_fw_generate(r, n, k + 1), "generate"))
			break;
		for (i = 0; i < n; i++)
			r[i].prio = 10 * (n - i);
		c = compile(r, n);
		if (!c)
			break;
		ASSERT_EQ(c->hdr.linear, n <= XNF_FW_LINEAR_MAX,
			  "linear form up to the bound only");
		for (i = 0; c->hdr.linear && i < n; i++) {
			ASSERT_EQ(c->order[i].rank, i, "entry i has rank i");
			ASSERT_EQ(c->order[i].slot, n - 1 - i,
				  "entry i is the i-th rule by prio");
		}
		xnf_fw_compiled_free(c);
	}
	free(r);
}

TEST(fw_compile_prio_order)
{
	/* Slots in the reverse of priority order, with holes. */
	const struct trule t[] = {
		{ 500, 0, NULL, NULL, TCP },
		{ 400, 1, "192.0.2.0/24", NULL, TCP },
		{ 300, 0, "192.0.2.0/28", NULL, TCP },
		{ 200, 1, "192.0.2.1/32", NULL, TCP },
	};
	struct xnf_fw_rule r[9] = {};
	struct xnf_fw_compiled *c;
	__u32 i;

	for (i = 0; i < 4; i++)
		r[2 * i] = mk(&t[i]);
	/* A free slot is ignored, even if it holds garbage. */
	r[7].prio = 300;
	r[7].action = 7;
	r[7].family = 9;
	c = compile(r, 9);
	if (!c)
		return;
	ASSERT_EQ(c->hdr.nrules, 4, "nrules");
	for (i = 0; i < 4; i++)
		ASSERT_EQ(c->order[i].slot, 6 - 2 * i, "order by prio");
	expect(r, 9, c, pkt("192.0.2.1", "10.0.0.1", TCP, 1, 2), 6, "prio 200");
	expect(r, 9, c, pkt("192.0.2.2", "10.0.0.1", TCP, 1, 2), 4, "prio 300");
	expect(r, 9, c, pkt("192.0.2.20", "10.0.0.1", TCP, 1, 2), 2, "prio 400");
	expect(r, 9, c, pkt("192.0.3.20", "10.0.0.1", TCP, 1, 2), 0, "prio 500");
	xnf_fw_compiled_free(c);
}

static bool check_refused(struct trule t, const char *want, const char *what)
{
	struct xnf_fw_rule r = mk(&t);
	char err[160] = "";
	bool ok;

	ok = ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL, what);
	if (!xnf_test_check(strstr(err, want) != NULL, __FILE__, __LINE__, what,
			    "message \"%s\" lacks \"%s\"", err, want))
		ok = false;
	return ok;
}

TEST(fw_compile_rule_check)
{
	struct xnf_fw_compiled *c = NULL;
	struct xnf_fw_rule r, rs[2];
	char err[160];

	SUBTEST("refused") {
		check_refused((struct trule){ 1, 0, "192.0.2.1/24" },
			      "192.0.2.1/24 has host bits set; did you mean 192.0.2.0/24?",
			      "v4 host bits");
		check_refused((struct trule){ 1, 0, NULL, "2001:db8::1/64" },
			      "dst 2001:db8::1/64 has host bits set; did you mean 2001:db8::/64?",
			      "v6 host bits");
		check_refused((struct trule){ 1, 0, "10.0.0.0/33" }, "33",
			      "v4 /33");
		check_refused((struct trule){ 1, 0, "::/129" }, "129", "v6 /129");
		check_refused((struct trule){ 1, 0, NULL, NULL, TCP, NULL,
					      "2000-1000" },
			      "2000-1000", "dport lo > hi");
		check_refused((struct trule){ 1, 0, NULL, NULL, UDP, "9-8" },
			      "9-8", "sport lo > hi");
		check_refused((struct trule){ 1, 0, NULL, NULL, ICMP, NULL, "80" },
			      "protocol 1", "ports with icmp");
		check_refused((struct trule){ 1, 0, NULL, NULL, ICMP6, "80" },
			      "protocol 58", "ports with icmpv6");
	}

	SUBTEST("refused_fields") {
		r = mk(&(struct trule){ 1, 0, "192.0.2.0/24" });
		r.family = 5;
		ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL,
			  "family 5");
		r.family = 0;
		ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL,
			  "prefix without family");
		r = mk(&(struct trule){ 1, 0, NULL, NULL, TCP });
		r.family = XNF_AF_INET;
		ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL,
			  "family without prefix");
		r = mk(&(struct trule){ 1, 0 });
		r.action = 2;
		ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL,
			  "action 2");
		r = mk(&(struct trule){ 1, 0 });
		r.flags = 1 << 7;
		ASSERT_EQ(xnf_fw_rule_check(&r, err, sizeof(err)), -EINVAL,
			  "unknown flag");
		ASSERT_EQ(xnf_fw_rule_check(&r, NULL, 0), -EINVAL,
			  "no message buffer");
	}

	/* Accepted: ports without a protocol (any protocol that has
	 * ports), sctp ports, /0 and full-length prefixes, garbage past an
	 * IPv4 address, a match-all rule. */
	SUBTEST("accepted") {
		r = mk(&(struct trule){ 1, 1, NULL, NULL, 0, "1-2", "3-4" });
		ASSERT_OK(xnf_fw_rule_check(&r, err, sizeof(err)),
			  "ports, any proto");
		r = mk(&(struct trule){ 1, 1, NULL, NULL, SCTP, "1-2", "3" });
		ASSERT_OK(xnf_fw_rule_check(&r, err, sizeof(err)), "sctp ports");
		r = mk(&(struct trule){ 1, 1, "0.0.0.0/0", "192.0.2.1/32" });
		r.src[7] = 0xff;
		ASSERT_OK(xnf_fw_rule_check(&r, err, sizeof(err)), "v4 /0, /32");
		r = mk(&(struct trule){ 1, 1, "::/0", "2001:db8::1/128" });
		ASSERT_OK(xnf_fw_rule_check(&r, err, sizeof(err)), "v6 /0, /128");
		r = mk(&(struct trule){ 1, 1 });
		ASSERT_OK(xnf_fw_rule_check(&r, err, sizeof(err)), "match all");
	}

	/* The compiler refuses what the check refuses, and duplicate
	 * priorities. */
	SUBTEST("compile") {
		rs[0] = mk(&(struct trule){ 10, 1, "192.0.2.0/24" });
		rs[1] = mk(&(struct trule){ 20, 1, "192.0.2.1/24" });
		ASSERT_EQ(xnf_fw_compile(rs, 2, XNF_FW_ALLOW, &c, NULL, 0),
			  -EINVAL, "compile: host bits");
		rs[1] = mk(&(struct trule){ 10, 1, "192.0.3.0/24" });
		ASSERT_EQ(xnf_fw_compile(rs, 2, XNF_FW_ALLOW, &c, NULL, 0),
			  -EINVAL, "compile: duplicate prio");
		rs[1].in_use = 0;
		if (ASSERT_OK(xnf_fw_compile(rs, 2, XNF_FW_ALLOW, &c, NULL, 0),
			      "duplicate prio in a free slot"))
			xnf_fw_compiled_free(c);
	}
}

/* ---- generated sets ---- */

struct trng {
	__u64 s;
};

static __u32 trand(struct trng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s >> 32;
}

static __u32 tbelow(struct trng *r, __u32 n)
{
	return ((__u64)trand(r) * n) >> 32;
}

static void rand_addr(struct trng *r, __u8 *addr)
{
	__u32 i;

	for (i = 0; i < 16; i++)
		addr[i] = trand(r);
}

/* @addr gets the first @len bits of @pfx, the rest stays random. */
static void put_pfx(__u8 *addr, const __u8 *pfx, __u32 len)
{
	__u32 bit;

	for (bit = 0; bit < len; bit++) {
		__u8 m = 0x80 >> (bit % 8);

		addr[bit / 8] = (addr[bit / 8] & ~m) | (pfx[bit / 8] & m);
	}
}

/* A port in or just around [lo, hi]. */
static __u16 near_range(struct trng *r, __u16 lo, __u16 hi)
{
	switch (tbelow(r, 6)) {
	case 0:
		return lo;
	case 1:
		return hi;
	case 2:
		return lo - 1; /* wraps at 0: just another port */
	case 3:
		return hi + 1;
	default:
		return lo + tbelow(r, hi - lo + 1);
	}
}

static const __u8 mix_protos[] = { TCP,	 TCP,	TCP,  UDP, UDP,
				   ICMP, ICMP6, SCTP, 0,   47 };

/* Half the packets are built inside a random rule (its prefixes, its
 * protocol, ports at and around its ranges); the others are random, with
 * addresses often inside some rule's prefix. */
static void rand_pkt(struct trng *g, const struct xnf_fw_rule *rules, __u32 n,
		     struct xnf_fw_pkt *p)
{
	const struct xnf_fw_rule *r = n ? &rules[tbelow(g, n)] : NULL;
	const struct xnf_fw_rule *o = n ? &rules[tbelow(g, n)] : NULL;
	bool inside = r && tbelow(g, 2);

	memset(p, 0, sizeof(*p));
	p->family = tbelow(g, 100) < 85 ? XNF_AF_INET : XNF_AF_INET6;
	if (inside && r->family)
		p->family = r->family;
	rand_addr(g, p->src);
	rand_addr(g, p->dst);
	if (p->family == XNF_AF_INET) {
		memset(p->src + 4, 0, 12);
		memset(p->dst + 4, 0, 12);
	}
	if (inside) {
		if (r->flags & XNF_FW_F_SRC)
			put_pfx(p->src, r->src, r->src_len);
		if (r->flags & XNF_FW_F_DST)
			put_pfx(p->dst, r->dst, r->dst_len);
	} else if (o && o->family == p->family) {
		if ((o->flags & XNF_FW_F_SRC) && tbelow(g, 2))
			put_pfx(p->src, o->src, o->src_len);
		if ((o->flags & XNF_FW_F_DST) && tbelow(g, 2))
			put_pfx(p->dst, o->dst, o->dst_len);
	}
	if (inside && (r->flags & XNF_FW_F_PROTO) && tbelow(g, 10))
		p->proto = r->proto;
	else if (tbelow(g, 20))
		p->proto = mix_protos[tbelow(g, sizeof(mix_protos))];
	else
		p->proto = tbelow(g, 256);
	if (p->proto != TCP && p->proto != UDP && p->proto != SCTP)
		return;
	/* Ports unreadable now and then: fragments, truncated headers. */
	p->ports = tbelow(g, 10) != 0;
	p->sport = trand(g);
	p->dport = trand(g);
	if (inside && (r->flags & XNF_FW_F_SPORT))
		p->sport = near_range(g, r->sport_lo, r->sport_hi);
	if (inside && (r->flags & XNF_FW_F_DPORT))
		p->dport = near_range(g, r->dport_lo, r->dport_hi);
	else if (o && (o->flags & XNF_FW_F_DPORT) && tbelow(g, 2))
		p->dport = near_range(g, o->dport_lo, o->dport_hi);
}

/* Extra matches (ct state, iif, icmp type and code, tcp flags) on about
 * half of the rules, each one a rule may have by its protocol and family,
 * from small value sets so that packets often meet them. */
static void add_extras(struct trng *g, struct xnf_fw_rule *rules, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		struct xnf_fw_rule *r = &rules[i];
		bool icmp4 = r->proto == ICMP && r->family != XNF_AF_INET6;
		bool icmp6 = r->proto == ICMP6 && r->family != XNF_AF_INET;

		if (!(r->flags & XNF_FW_F_PROTO) && tbelow(g, 4) == 0) {
			/* make room for the protocol's own matches */
			r->flags |= XNF_FW_F_PROTO;
			r->proto = tbelow(g, 2) ? TCP : ICMP;
			if (r->proto == ICMP && r->family == XNF_AF_INET6)
				r->proto = ICMP6;
			icmp4 = r->proto == ICMP;
			icmp6 = r->proto == ICMP6;
			if (!(r->proto == TCP))
				r->flags &= ~(XNF_FW_F_SPORT | XNF_FW_F_DPORT);
		}
		if (tbelow(g, 2))
			continue;
		if (tbelow(g, 2)) {
			r->flags |= XNF_FW_F_CT;
			r->ct_states = 1 + tbelow(g, 31);
		}
		if (tbelow(g, 3) == 0) {
			r->flags |= XNF_FW_F_IIF;
			r->iif = 1 + tbelow(g, 3);
		}
		if ((r->flags & XNF_FW_F_PROTO) && r->proto == TCP &&
		    tbelow(g, 2)) {
			r->tcp_mask = 1 + tbelow(g, 255);
			if (tbelow(g, 2)) {
				r->flags |= XNF_FW_F_TCP_ANY;
			} else {
				r->flags |= XNF_FW_F_TCP_FLAGS;
				r->tcp_flags = trand(g) & r->tcp_mask;
			}
		}
		if ((r->flags & XNF_FW_F_PROTO) && (icmp4 || icmp6) &&
		    tbelow(g, 2)) {
			r->flags |= XNF_FW_F_ICMP_TYPE;
			r->icmp_type = tbelow(g, 4);
			if (tbelow(g, 2)) {
				r->flags |= XNF_FW_F_ICMP_CODE;
				r->icmp_code = tbelow(g, 2);
			}
		}
	}
}

/* The packet's values for extra matches: near rule @r's when given. */
static void rand_extra(struct trng *g, const struct xnf_fw_rule *r,
		       struct xnf_fw_pkt *p)
{
	p->ct_state = tbelow(g, __XNF_CT_STATE_MAX);
	p->ifindex = 1 + tbelow(g, 3);
	p->tcp = p->proto == TCP && tbelow(g, 10);
	p->tcp_flags = trand(g);
	if (r && (r->flags & XNF_FW_F_TCP_FLAGS) && tbelow(g, 2))
		p->tcp_flags = (p->tcp_flags & ~r->tcp_mask) | r->tcp_flags;
	p->icmp = (p->proto == ICMP || p->proto == ICMP6) && tbelow(g, 10);
	p->icmp_type = tbelow(g, 4);
	p->icmp_code = tbelow(g, 2);
}

/* How narrow a rule is: bits of prefix (IPv6 scaled to IPv4), plus a
 * protocol, plus narrow port ranges. */
static __u32 specificity(const struct xnf_fw_rule *r)
{
	__u32 s = 0, scale = r->family == XNF_AF_INET6 ? 4 : 1;

	if (r->flags & XNF_FW_F_SRC)
		s += r->src_len / scale;
	if (r->flags & XNF_FW_F_DST)
		s += r->dst_len / scale;
	if (r->flags & XNF_FW_F_PROTO)
		s += 8;
	if (r->flags & XNF_FW_F_SPORT)
		s += r->sport_hi - r->sport_lo < 1024 ? 16 : 4;
	if (r->flags & XNF_FW_F_DPORT)
		s += r->dport_hi - r->dport_lo < 1024 ? 16 : 4;
	return s;
}

static const struct xnf_fw_rule *spec_rules;

static int spec_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;
	__u32 sx = specificity(&spec_rules[x]), sy = specificity(&spec_rules[y]);

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Re-prioritises the rules most specific first, as a careful operator
 * orders an ACL, leaving every rule in its slot: few rules are then
 * shadowed, and priority order no longer follows slot order. */
static bool specific_first(struct xnf_fw_rule *rules, __u32 n)
{
	__u32 *idx = calloc(n, sizeof(*idx)), i;

	if (!idx)
		return false;
	for (i = 0; i < n; i++)
		idx[i] = i;
	spec_rules = rules;
	qsort(idx, n, sizeof(*idx), spec_cmp);
	for (i = 0; i < n; i++)
		rules[idx[i]].prio = (i + 1) * 10;
	free(idx);
	return true;
}

/* Compiles a generated set of @n rules and compares the compiled
 * classifier with the linear scan on 20,000 packets; with @specific, the
 * same after specific_first(). */
static void differential_x(__u32 n, __u32 seed, bool specific, bool extras)
{
	struct trng g = { .s = 0x9e3779b97f4a7c15ULL ^ seed };
	__u32 i, hits = 0, bad = 0, distinct = 0, nwords = 0;
	const char *how = specific ? "specific first" : "generated order";
	struct xnf_fw_compiled *c = NULL;
	__u32 words[XNF_FW_WORDS] = {};
	struct xnf_fw_rule *rules;
	__u8 *seen = NULL;
	double t0, t1;

	rules = calloc(n, sizeof(*rules));
	seen = calloc(n, 1);
	if (!ASSERT_TRUE(rules && seen, "calloc"))
		goto out;
	if (!ASSERT_OK(xnf_fw_generate(rules, n, seed), "generate"))
		goto out;
	if (specific && !ASSERT_TRUE(specific_first(rules, n), "reorder"))
		goto out;
	if (extras)
		add_extras(&g, rules, n);
	t0 = now();
	if (!ASSERT_OK(xnf_fw_compile(rules, n, XNF_FW_DROP, &c, NULL, 0),
		       "compile"))
		goto out;
	t1 = now();
	printf("  %5u rules, %s: compiled in %.1f ms, %u classes, %u src and %u dst prefixes\n",
	       n, how, (t1 - t0) * 1e3, c->nclasses, c->nsrc, c->ndst);
	ASSERT_EQ(c->hdr.nrules, n, "nrules");
	ASSERT_LE(c->nclasses, XNF_FW_MAX_CLASSES, "classes");

	for (i = 0; i < 20000; i++) {
		struct xnf_fw_pkt p;
		int want, got, idx;

		rand_pkt(&g, rules, n, &p);
		if (extras)
			rand_extra(&g, &rules[tbelow(&g, n)], &p);
		want = xnf_fw_linear(rules, n, &p);
		idx = xnf_fw_classify(c, rules, &p);
		got = classify_slot(c, rules, &p);
		if (want != got && bad++ < 5)
			ASSERT_EQ(got, want, "classify == linear");
		if (want < 0 || want != got)
			continue;
		hits++;
		if (!seen[idx]) {
			seen[idx] = 1;
			distinct++;
			if (!words[idx / 64]++)
				nwords++;
		}
	}
	ASSERT_EQ(bad, 0, "packets classified differently");
	printf("  %5u rules, %s: %u of 20000 packets matched, %u distinct rules in %u of %u bitmap words\n",
	       n, how, hits, distinct, nwords, (n + 63) / 64);
	/* The bias must make the test meaningful: many hits, and with the
	 * specific rules first, hits in most 64-rule words, not only in the
	 * first few. */
	ASSERT_GE(hits, 20000 / (extras ? 8 : 4), "enough packets hit a rule");
	if (specific && !extras)
		ASSERT_GE(nwords, (n + 63) / 64 * 3 / 4, "words with a hit");
out:
	xnf_fw_compiled_free(c);
	free(seen);
	free(rules);
}

static void differential(__u32 n, __u32 seed, bool specific)
{
	differential_x(n, seed, specific, false);
}

/* Rules with extra matches: the tables' candidates are checked on them
 * and the next candidate of a word taken when they fail; the linear
 * form (at most XNF_FW_LINEAR_MAX rules) and the tables (more) against
 * the reference. */
TEST(fw_compile_diff_extra)
{
	differential_x(10, 11, false, true);
	differential_x(XNF_FW_LINEAR_MAX + 1, 12, false, true);
	differential_x(100, 13, true, true);
	differential_x(1000, 14, false, true);
	differential_x(1000, 14, true, true);
}

TEST(fw_compile_diff_10)
{
	differential(10, 1, false);
	differential(10, 2, false);
	differential(10, 2, true);
}

TEST(fw_compile_diff_100)
{
	differential(100, 3, false);
	differential(100, 3, true);
}

TEST(fw_compile_diff_1000)
{
	differential(1000, 4, false);
	differential(1000, 4, true);
}

TEST(fw_compile_diff_10000)
{
	differential(10000, 5, false);
	differential(10000, 5, true);
}

static bool bm_test(const __u64 *bm, __u32 i)
{
	return bm[i / 64] >> (i % 64) & 1;
}

static bool pfx_has(const __u8 *pfx, __u32 len, const __u8 *addr)
{
	__u32 bit;

	for (bit = 0; bit < len; bit++)
		if ((pfx[bit / 8] ^ addr[bit / 8]) & (0x80 >> (bit % 8)))
			return false;
	return true;
}

/* The rules (bit i = i-th in priority order) whose field matches. */
enum field { F_SRC, F_DST, F_PROTO, F_SPORT, F_DPORT };

static bool field_matches(const struct xnf_fw_rule *r, enum field f,
			  __u8 family, const __u8 *addr, __u32 v)
{
	switch (f) {
	case F_SRC:
		return !(r->flags & XNF_FW_F_SRC) ||
		       (r->family == family && pfx_has(r->src, r->src_len, addr));
	case F_DST:
		return !(r->flags & XNF_FW_F_DST) ||
		       (r->family == family && pfx_has(r->dst, r->dst_len, addr));
	case F_PROTO:
		return !(r->flags & XNF_FW_F_PROTO) || r->proto == v;
	case F_SPORT:
		return !(r->flags & XNF_FW_F_SPORT) ||
		       (v < 65536 && r->sport_lo <= v && v <= r->sport_hi);
	case F_DPORT:
		return !(r->flags & XNF_FW_F_DPORT) ||
		       (v < 65536 && r->dport_lo <= v && v <= r->dport_hi);
	}
	return false;
}

/* Whether class @id is exactly the set of rules matching the value. */
static bool class_exact(const struct xnf_fw_compiled *c,
			const struct xnf_fw_rule *rules, __u32 id, enum field f,
			__u8 family, const __u8 *addr, __u32 v)
{
	__u32 i;

	if (id >= c->nclasses)
		return false;
	for (i = 0; i < XNF_FW_WORDS * 64; i++) {
		bool want = i < c->hdr.nrules &&
			    field_matches(&rules[c->order[i].slot], f, family,
					  addr, v);

		if (bm_test(c->classes[id].bits, i) != want)
			return false;
	}
	return true;
}

static __s64 lpm(const struct xnf_fw_prefix *e, __u32 n, __u8 family,
		 const __u8 *addr)
{
	__s64 best = -1;
	int len = -1;
	__u32 i;

	for (i = 0; i < n; i++)
		if (e[i].family == family && e[i].len > len &&
		    pfx_has(e[i].addr, e[i].len, addr)) {
			best = e[i].class;
			len = e[i].len;
		}
	return best;
}

static void check_prefix_table(const struct xnf_fw_compiled *c,
			       const struct xnf_fw_rule *rules,
			       const struct xnf_fw_prefix *e, __u32 n,
			       enum field f, struct trng *g)
{
	__u32 i, j, bad = 0, zero[2] = {};

	for (i = 0; i < n; i++) {
		__u8 addr[16];
		__s64 id;

		if (e[i].family == XNF_AF_INET)
			ASSERT_TRUE(e[i].len <= 32 &&
					    !memcmp(e[i].addr + 4,
						    "\0\0\0\0\0\0\0\0\0\0\0\0",
						    12),
				    "v4 entry");
		if (e[i].len == 0)
			zero[e[i].family == XNF_AF_INET6]++;
		for (j = 0; j < i; j++)
			if (e[j].family == e[i].family && e[j].len == e[i].len &&
			    !memcmp(e[j].addr, e[i].addr, 16))
				bad++;
		/* An address inside the entry, random below its length:
		 * the longest match must hold exactly its matching rules. */
		rand_addr(g, addr);
		if (e[i].family == XNF_AF_INET)
			memset(addr + 4, 0, 12);
		put_pfx(addr, e[i].addr, e[i].len);
		id = lpm(e, n, e[i].family, addr);
		if (!class_exact(c, rules, id, f, e[i].family, addr, 0) &&
		    bad++ < 3)
			ASSERT_TRUE(false,
				    "LPM class is the set of matching rules");
	}
	ASSERT_EQ(zero[0], 1, "one v4 /0");
	ASSERT_EQ(zero[1], 1, "one v6 /0");
	ASSERT_EQ(bad, 0, "prefix entries unique and exact");
}

/* Every table, checked value by value against the rules. */
TEST(fw_compile_tables_exact)
{
	struct trng g = { .s = 0x1234567 };
	struct xnf_fw_compiled *c = NULL;
	struct xnf_fw_rule *rules;
	__u32 n = 1000, i, v, w, bad = 0;

	rules = calloc(n, sizeof(*rules));
	if (!ASSERT_TRUE(rules != NULL, "calloc"))
		return;
	if (!ASSERT_OK(xnf_fw_generate(rules, n, 77), "generate"))
		goto out;
	if (!ASSERT_OK(xnf_fw_compile(rules, n, XNF_FW_DROP, &c, NULL, 0),
		       "compile"))
		goto out;

	/* Classes: summaries right, nothing past nrules, no duplicates. */
	for (i = 0; i < c->nclasses; i++) {
		const struct xnf_fw_class *k = &c->classes[i];

		for (w = 0; w < XNF_FW_WORDS; w++)
			if (bm_test(k->summary, w) != (k->bits[w] != 0))
				bad++;
		for (w = XNF_FW_WORDS; w < XNF_FW_SUMMARY * 64; w++)
			bad += bm_test(k->summary, w);
		for (v = n; v < XNF_FW_WORDS * 64; v++)
			bad += bm_test(k->bits, v);
	}
	ASSERT_EQ(bad, 0, "summaries and unused bits");
	for (i = 0, bad = 0; i < c->nclasses; i++)
		for (v = i + 1; v < c->nclasses; v++)
			bad += !memcmp(c->classes[i].bits, c->classes[v].bits,
				       sizeof(c->classes[i].bits));
	ASSERT_EQ(bad, 0, "classes are unique");

	for (v = 0, bad = 0; v < 256; v++)
		bad += !class_exact(c, rules, c->proto[v], F_PROTO, 0, NULL, v);
	ASSERT_EQ(bad, 0, "proto classes exact");
	for (v = 0, bad = 0; v < 65536; v++) {
		bad += !class_exact(c, rules, c->sport[v], F_SPORT, 0, NULL, v);
		bad += !class_exact(c, rules, c->dport[v], F_DPORT, 0, NULL, v);
	}
	ASSERT_EQ(bad, 0, "port classes exact");
	/* Port value 65536 stands for "no ports": only wildcards match. */
	ASSERT_TRUE(class_exact(c, rules, c->hdr.sport_none, F_SPORT, 0, NULL,
				65536),
		    "sport_none exact");
	ASSERT_TRUE(class_exact(c, rules, c->hdr.dport_none, F_DPORT, 0, NULL,
				65536),
		    "dport_none exact");

	check_prefix_table(c, rules, c->src, c->nsrc, F_SRC, &g);
	check_prefix_table(c, rules, c->dst, c->ndst, F_DST, &g);
	/* And random addresses, mostly inside no entry but the /0. */
	for (i = 0, bad = 0; i < 2000; i++) {
		__u8 family = i & 1 ? XNF_AF_INET6 : XNF_AF_INET, a[16];

		rand_addr(&g, a);
		if (family == XNF_AF_INET)
			memset(a + 4, 0, 12);
		bad += !class_exact(c, rules, lpm(c->src, c->nsrc, family, a),
				    F_SRC, family, a, 0);
		bad += !class_exact(c, rules, lpm(c->dst, c->ndst, family, a),
				    F_DST, family, a, 0);
	}
	ASSERT_EQ(bad, 0, "random addresses");
out:
	xnf_fw_compiled_free(c);
	free(rules);
}

TEST(fw_compile_limits)
{
	struct xnf_fw_compiled *c = NULL;
	__u32 n = XNF_FW_MAX_RULES + 1, i;
	struct xnf_fw_rule *rules;
	double t0;

	rules = calloc(n, sizeof(*rules));
	if (!ASSERT_TRUE(rules != NULL, "calloc"))
		return;
	if (!ASSERT_OK(xnf_fw_generate(rules, n, 9), "generate"))
		goto out;
	ASSERT_EQ(xnf_fw_compile(rules, n, XNF_FW_ALLOW, &c, NULL, 0), -ENOSPC,
		  "one rule too many");
	rules[n / 2].in_use = 0;
	t0 = now();
	if (ASSERT_OK(xnf_fw_compile(rules, n, XNF_FW_ALLOW, &c, NULL, 0),
		      "full table")) {
		printf("  %u rules: compiled in %.1f ms, %u classes\n",
		       c->hdr.nrules, (now() - t0) * 1e3, c->nclasses);
		ASSERT_EQ(c->hdr.nrules, XNF_FW_MAX_RULES, "nrules");
		xnf_fw_compiled_free(c);
		c = NULL;
	}

	/* Every rule with its own /32 src and dst: one class per prefix,
	 * more than the tables hold. Rules 0..99 have no src and 100..199
	 * no dst, so that the src classes ({0..99, i}) differ from the dst
	 * ones ({100..199, i}) and are not shared. */
	for (i = 0; i < 9000; i++) {
		struct xnf_fw_rule *r = &rules[i];

		memset(r, 0, sizeof(*r));
		r->prio = i;
		r->in_use = 1;
		r->flags = XNF_FW_F_SRC | XNF_FW_F_DST;
		if (i < 100)
			r->flags = XNF_FW_F_DST;
		else if (i < 200)
			r->flags = XNF_FW_F_SRC;
		r->family = XNF_AF_INET;
		r->src_len = r->dst_len = 32;
		r->src[0] = 10;
		r->src[2] = i >> 8;
		r->src[3] = i;
		r->dst[0] = 172;
		r->dst[2] = i >> 8;
		r->dst[3] = i;
	}
	ASSERT_EQ(xnf_fw_compile(rules, 9000, XNF_FW_ALLOW, &c, NULL, 0),
		  -ENOSPC, "too many classes");
	ASSERT_TRUE(c == NULL, "no output on error");
out:
	free(rules);
}

TEST(fw_gen_shape)
{
	__u32 n = 10000, i, v6 = 0, tcp = 0, udp = 0, any = 0, drop = 0,
	      ports = 0, nofam = 0;
	struct xnf_fw_rule *a, *b;
	char err[160];

	a = calloc(n, sizeof(*a));
	b = calloc(n, sizeof(*b));
	if (!ASSERT_TRUE(a && b, "calloc"))
		goto out;
	if (!ASSERT_OK(xnf_fw_generate(a, n, 42), "generate") ||
	    !ASSERT_OK(xnf_fw_generate(b, n, 42), "generate again"))
		goto out;
	ASSERT_MEM(a, b, n * sizeof(*a), "same seed, same rules");
	if (!ASSERT_OK(xnf_fw_generate(b, n, 43), "other seed"))
		goto out;
	ASSERT_TRUE(memcmp(a, b, n * sizeof(*a)) != 0, "other seed, other rules");

	for (i = 0; i < n; i++) {
		const struct xnf_fw_rule *r = &a[i];

		if (!ASSERT_OK(xnf_fw_rule_check(r, err, sizeof(err)), err))
			break;
		ASSERT_EQ(r->prio, (i + 1) * 10, "prio");
		ASSERT_EQ(r->in_use, 1, "in use");
		v6 += r->family == XNF_AF_INET6;
		nofam += r->family == 0;
		tcp += (r->flags & XNF_FW_F_PROTO) && r->proto == TCP;
		udp += (r->flags & XNF_FW_F_PROTO) && r->proto == UDP;
		any += !(r->flags & XNF_FW_F_PROTO);
		drop += r->action == XNF_FW_DROP;
		ports += !!(r->flags & (XNF_FW_F_SPORT | XNF_FW_F_DPORT));
	}
	printf("  v6 %u, family-less %u, tcp %u, udp %u, any proto %u, drop %u, "
	       "with ports %u of %u\n",
	       v6, nofam, tcp, udp, any, drop, ports, n);
	ASSERT_TRUE(v6 > n / 10 && v6 < n / 5, "about 15% v6");
	ASSERT_TRUE(tcp > n / 2 && tcp < n * 7 / 10, "about 60% tcp");
	ASSERT_TRUE(udp > n / 5 && udp < n * 3 / 10, "about 25% udp");
	ASSERT_TRUE(any > n / 20 && any < n * 3 / 20, "about 10% any");
	ASSERT_TRUE(drop > n / 10 && drop < n * 3 / 10, "about 20% drop");
	ASSERT_TRUE(ports > n / 2, "most tcp/udp rules have ports");
out:
	free(b);
	free(a);
}

/* ---- storing into real maps ---- */

static int map(enum bpf_map_type type, __u32 ksize, __u32 vsize, __u32 max)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);

	if (type == BPF_MAP_TYPE_LPM_TRIE)
		opts.map_flags = BPF_F_NO_PREALLOC;
	return bpf_map_create(type, NULL, ksize, vsize, max, &opts);
}

static int lpm_count(int fd, size_t ksize, __u32 gen)
{
	struct xnf_fw_lpm6_key k, prev;
	void *p = NULL;
	int n = 0;

	while (!bpf_map_get_next_key(fd, p, &k)) {
		n += k.gen == gen;
		memcpy(&prev, &k, ksize);
		p = &prev;
	}
	return n;
}

/* What a packet would read from the maps: the BPF program's lookups. */
static int maps_classify(struct xnf_dp *dp, const struct xnf_fw_pkt *p, __u32 gen)
{
	__u32 id[5], key, zero = 0, active, s, w, f;
	struct xnf_fw_class *k;
	struct xnf_fw_match m;
	struct xnf_fw_hdr hdr;
	int rule = -1, fd4, fd6;
	__u32 best_rank = 0;
	__u64 m64;

	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_FW_ACTIVE), &zero,
				&active) ||
	    (active & 1) != gen ||
	    bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_FW_HDR), &gen, &hdr))
		return -2;
	if (!hdr.nrules)
		return -1;
	k = calloc(5, sizeof(*k));
	if (!k)
		return -2;
	for (f = 0; f < 2; f++) {
		const __u8 *a = f ? p->dst : p->src;

		fd4 = xnf_table_fd(dp, f ? XNF_T_FW_DST4 : XNF_T_FW_SRC4);
		fd6 = xnf_table_fd(dp, f ? XNF_T_FW_DST6 : XNF_T_FW_SRC6);
		if (p->family == XNF_AF_INET) {
			struct xnf_fw_lpm4_key k4 = { 64, gen };

			memcpy(k4.addr, a, 4);
			if (bpf_map_lookup_elem(fd4, &k4, &id[f]))
				goto out;
		} else {
			struct xnf_fw_lpm6_key k6 = { 160, gen };

			memcpy(k6.addr, a, 16);
			if (bpf_map_lookup_elem(fd6, &k6, &id[f]))
				goto out;
		}
	}
	key = gen * 256 + p->proto;
	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_FW_PROTO), &key, &id[2]))
		goto out;
	id[3] = hdr.sport_none;
	id[4] = hdr.dport_none;
	key = gen * 65536 + p->sport;
	if (p->ports &&
	    bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_FW_SPORT), &key, &id[3]))
		goto out;
	key = gen * 65536 + p->dport;
	if (p->ports &&
	    bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_FW_DPORT), &key, &id[4]))
		goto out;
	for (f = 0; f < 5; f++) {
		key = gen * XNF_FW_MAX_CLASSES + id[f];
		if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_FW_CLASS), &key,
					&k[f]))
			goto out;
	}
	/* Each matching word offers its lowest bit; the best rank wins. */
	for (s = 0; s < XNF_FW_SUMMARY * 64; s++) {
		if (!(k[0].summary[s / 64] & k[1].summary[s / 64] &
		      k[2].summary[s / 64] & k[3].summary[s / 64] &
		      k[4].summary[s / 64] & (1ULL << (s % 64))))
			continue;
		w = s;
		m64 = k[0].bits[w] & k[1].bits[w] & k[2].bits[w] &
		      k[3].bits[w] & k[4].bits[w];
		if (!m64)
			continue;
		key = gen * XNF_FW_MAX_RULES + w * 64 + __builtin_ctzll(m64);
		if (w * 64 + __builtin_ctzll(m64) >= hdr.nrules ||
		    bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_FW_ORDER), &key,
					&m)) {
			rule = -2;
			break;
		}
		if (rule < 0 || m.rank < best_rank) {
			best_rank = m.rank;
			rule = m.slot;
		}
	}
out:
	free(k);
	return rule;
}

TEST(fw_compile_write_maps)
{
	static const struct {
		enum xnf_table t;
		enum bpf_map_type type;
		__u32 ksize, vsize, max;
	} defs[] = {
		/* xnf_fw_apply moves its table generation */
		{ XNF_T_CFG, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct xnf_config), 1 },
		{ XNF_T_FW_ACTIVE, BPF_MAP_TYPE_ARRAY, 4, 4, 1 },
		{ XNF_T_FW_HDR, BPF_MAP_TYPE_ARRAY, 4,
		  sizeof(struct xnf_fw_hdr), XNF_FW_GENS },
		{ XNF_T_FW_RULES, BPF_MAP_TYPE_ARRAY, 4,
		  sizeof(struct xnf_fw_rule), XNF_FW_GENS * XNF_FW_MAX_RULES },
		{ XNF_T_FW_HITS, BPF_MAP_TYPE_PERCPU_ARRAY, 4,
		  sizeof(struct xnf_fw_hit), XNF_FW_HITS },
		{ XNF_T_FW_ORDER, BPF_MAP_TYPE_ARRAY, 4,
		  sizeof(struct xnf_fw_match), XNF_FW_GENS * XNF_FW_MAX_RULES },
		{ XNF_T_FW_CLASS, BPF_MAP_TYPE_ARRAY, 4,
		  sizeof(struct xnf_fw_class), XNF_FW_GENS * XNF_FW_MAX_CLASSES },
		{ XNF_T_FW_SRC4, BPF_MAP_TYPE_LPM_TRIE,
		  sizeof(struct xnf_fw_lpm4_key), 4,
		  XNF_FW_GENS * (XNF_FW_MAX_RULES + 1) },
		{ XNF_T_FW_DST4, BPF_MAP_TYPE_LPM_TRIE,
		  sizeof(struct xnf_fw_lpm4_key), 4,
		  XNF_FW_GENS * (XNF_FW_MAX_RULES + 1) },
		{ XNF_T_FW_SRC6, BPF_MAP_TYPE_LPM_TRIE,
		  sizeof(struct xnf_fw_lpm6_key), 4,
		  XNF_FW_GENS * (XNF_FW_MAX_RULES + 1) },
		{ XNF_T_FW_DST6, BPF_MAP_TYPE_LPM_TRIE,
		  sizeof(struct xnf_fw_lpm6_key), 4,
		  XNF_FW_GENS * (XNF_FW_MAX_RULES + 1) },
		{ XNF_T_FW_PROTO, BPF_MAP_TYPE_ARRAY, 4, 4, XNF_FW_GENS * 256 },
		{ XNF_T_FW_SPORT, BPF_MAP_TYPE_ARRAY, 4, 4, XNF_FW_GENS * 65536 },
		{ XNF_T_FW_DPORT, BPF_MAP_TYPE_ARRAY, 4, 4, XNF_FW_GENS * 65536 },
		/* and the packet log's buckets and counters of its rules */
		{ XNF_T_LOG_LIMIT, BPF_MAP_TYPE_ARRAY, 4,
		  sizeof(struct xnf_log_limit), XNF_LOG_SOURCES },
		{ XNF_T_LOG_STATS, BPF_MAP_TYPE_PERCPU_ARRAY, 4,
		  sizeof(struct xnf_log_counters), XNF_LOG_SOURCES },
	};
	static const __u32 sizes[] = { 10000, 10, 0, 1000 };
	struct xnf_fw_compiled *c = NULL;
	struct xnf_dp dp = { .root = "(test maps)" };
	struct xnf_fw_set *set = NULL;
	struct trng g = { .s = 99 };
	struct xnf_fw_rule *rules;
	__u32 i, j, zero = 0, gen, bad;
	double t0;

	for (i = 0; i < __XNF_T_MAX; i++)
		dp.fd[i] = -1;
	rules = calloc(XNF_FW_MAX_RULES, sizeof(*rules));
	set = xnf_fw_set_new();
	if (!ASSERT_TRUE(rules && set, "calloc"))
		goto out;
	for (i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		dp.fd[defs[i].t] = map(defs[i].type, defs[i].ksize,
				       defs[i].vsize, defs[i].max);
		if (dp.fd[defs[i].t] < 0) {
			printf("  skip: cannot create BPF maps (%s)\n",
			       strerror(errno));
			goto out;
		}
	}

	/* A large set, a small one (stale prefixes must go), an empty one,
	 * a middle one; each through the whole commit path. */
	for (j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
		memset(rules, 0, XNF_FW_MAX_RULES * sizeof(*rules));
		if (!ASSERT_OK(xnf_fw_generate(rules, sizes[j], 100 + j),
			       "generate"))
			goto out;
		xnf_fw_set_flush(set);
		for (i = 0; i < XNF_FW_MAX_RULES; i++)
			if (rules[i].in_use &&
			    !ASSERT_OK(xnf_fw_set_replace(set, i, &rules[i]),
				       "put rule"))
				goto out;
		xnf_fw_set_policy(set, XNF_FW_DROP);
		t0 = now();
		if (!ASSERT_OK(xnf_fw_apply(&dp, set, NULL, 0), "apply"))
			goto out;
		printf("  %5u rules: committed to the maps in %.1f ms\n",
		       sizes[j], (now() - t0) * 1e3);
		if (!ASSERT_OK(bpf_map_lookup_elem(dp.fd[XNF_T_FW_ACTIVE],
						   &zero, &gen),
			       "active"))
			goto out;
		ASSERT_EQ(gen, (j + 1) & 1, "generation flips");
		if (!ASSERT_OK(xnf_fw_compile(rules, XNF_FW_MAX_RULES,
					      XNF_FW_DROP, &c, NULL, 0),
			       "compile"))
			goto out;
		for (i = 0, bad = 0; i < 4; i++) {
			__u32 want = 0, k;
			size_t ksize;
			const struct xnf_fw_prefix *e = i & 1 ? c->dst : c->src;
			__u32 ne = i & 1 ? c->ndst : c->nsrc;
			__u8 fam = i < 2 ? XNF_AF_INET : XNF_AF_INET6;
			enum xnf_table t = i == 0 ? XNF_T_FW_SRC4 :
					   i == 1 ? XNF_T_FW_DST4 :
					   i == 2 ? XNF_T_FW_SRC6 :
						    XNF_T_FW_DST6;

			for (k = 0; k < ne; k++)
				want += e[k].family == fam;
			ksize = fam == XNF_AF_INET ?
					sizeof(struct xnf_fw_lpm4_key) :
					sizeof(struct xnf_fw_lpm6_key);
			bad += lpm_count(dp.fd[t], ksize, gen) != (int)want;
		}
		ASSERT_EQ(bad, 0, "trie entries of the generation are the set's");
		for (i = 0, bad = 0; i < 3000; i++) {
			struct xnf_fw_pkt p;
			int want, got;

			rand_pkt(&g, rules, sizes[j], &p);
			want = xnf_fw_linear(rules, XNF_FW_MAX_RULES, &p);
			got = maps_classify(&dp, &p, gen);
			if (want != got && bad++ < 3)
				ASSERT_EQ(got, want, "maps classify == linear");
		}
		ASSERT_EQ(bad, 0, "packets classified differently from the maps");
		xnf_fw_compiled_free(c);
		c = NULL;
	}
out:
	xnf_fw_compiled_free(c);
	for (i = 0; i < __XNF_T_MAX; i++)
		if (dp.fd[i] >= 0)
			close(dp.fd[i]);
	xnf_fw_set_free(set);
	free(rules);
}
