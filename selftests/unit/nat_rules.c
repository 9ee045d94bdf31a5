// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The NAT rules of libxnf (lib/nat.c): the checks of a rule, a rule set
 * in memory (order by prio, auto prio, limits), and the rule set that
 * runs: xnf_nat_apply writes the inactive generation and switches,
 * xnf_nat_read returns the active one whatever the inactive one holds,
 * a refused set changes nothing, every apply moves the table generation;
 * and candidate edits (xnf_conf_nat_*) made by one commit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/in.h>
#include <bpf/bpf.h>

#include "fixture.h"
#include "conf.h"
#include "nat.h"

static void a4(__u8 a[16], const char *s)
{
	memset(a, 0, 16);
	inet_pton(AF_INET, s, a);
}

static void a6(__u8 a[16], const char *s)
{
	memset(a, 0, 16);
	inet_pton(AF_INET6, s, a);
}

static struct xnf_nat_rule masq(__u32 prio)
{
	return (struct xnf_nat_rule){ .prio = prio,
				      .type = XNF_NAT_MASQUERADE,
				      .oif = 2 };
}

static struct xnf_nat_rule snat4(__u32 prio, const char *lo, const char *hi)
{
	struct xnf_nat_rule r = { .prio = prio,
				  .type = XNF_NAT_SNAT,
				  .family = XNF_AF_INET };

	a4(r.to_min, lo);
	a4(r.to_max, hi);
	return r;
}

static struct xnf_nat_rule dnat4(__u32 prio, const char *to, __u16 port)
{
	struct xnf_nat_rule r = { .prio = prio,
				  .type = XNF_NAT_DNAT,
				  .family = XNF_AF_INET,
				  .proto = IPPROTO_TCP,
				  .iif = 1,
				  .dport_min = 8080,
				  .dport_max = 8080 };

	a4(r.to_min, to);
	memcpy(r.to_max, r.to_min, 16);
	if (port) {
		r.flags |= XNF_NAT_F_PORTS;
		r.to_port_min = r.to_port_max = port;
	}
	return r;
}

TEST(nat_rule_checks)
{
	struct {
		const char *what;
		struct xnf_nat_rule r;
		int want;
	} c[32];
	char err[512];
	int n = 0, i, ret;

	c[n++] = (typeof(c[0])){ "masquerade, both families", masq(1), 0 };
	c[n] = (typeof(c[0])){ "masquerade with ports", masq(1), 0 };
	c[n].r.proto = IPPROTO_UDP;
	c[n].r.flags = XNF_NAT_F_PORTS | XNF_NAT_F_RANDOM;
	c[n].r.to_port_min = 1024, c[n++].r.to_port_max = 2047;
	c[n++] = (typeof(c[0])){ "snat range",
				 snat4(1, "203.0.113.1", "203.0.113.4"), 0 };
	c[n++] = (typeof(c[0])){ "dnat to a port", dnat4(1, "192.0.2.10", 80), 0 };
	c[n] = (typeof(c[0])){ "dnat IPv6", dnat4(1, "0.0.0.0", 80), 0 };
	c[n].r.family = XNF_AF_INET6;
	a6(c[n].r.to_min, "2001:db8::1");
	memcpy(c[n].r.to_max, c[n].r.to_min, 16);
	n++;

	c[n] = (typeof(c[0])){ "masquerade given an address", masq(1), -EINVAL };
	c[n].r.family = XNF_AF_INET;
	a4(c[n++].r.to_min, "203.0.113.1");
	c[n] = (typeof(c[0])){ "snat without an address",
			       snat4(1, "0.0.0.0", "0.0.0.0"), -EINVAL };
	n++;
	c[n++] = (typeof(c[0])){ "snat range reversed",
				 snat4(1, "203.0.113.4", "203.0.113.1"),
				 -EINVAL };
	c[n] = (typeof(c[0])){ "dnat to a range", dnat4(1, "192.0.2.10", 80),
			       -EINVAL };
	a4(c[n++].r.to_max, "192.0.2.11");
	c[n] = (typeof(c[0])){ "dnat to a port range",
			       dnat4(1, "192.0.2.10", 80), -EINVAL };
	c[n++].r.to_port_max = 81;
	c[n] = (typeof(c[0])){ "dport without tcp or udp",
			       dnat4(1, "192.0.2.10", 80), -EINVAL };
	c[n++].r.proto = IPPROTO_ICMP;
	c[n] = (typeof(c[0])){ "dport range empty", dnat4(1, "192.0.2.10", 80),
			       -EINVAL };
	c[n++].r.dport_min = 9000;
	c[n] = (typeof(c[0])){ "dport on snat",
			       snat4(1, "203.0.113.1", "203.0.113.1"), -EINVAL };
	c[n].r.proto = IPPROTO_TCP;
	c[n].r.dport_min = c[n].r.dport_max = 80;
	n++;
	c[n] = (typeof(c[0])){ "port mapping without tcp or udp", masq(1),
			       -EINVAL };
	c[n].r.flags = XNF_NAT_F_PORTS;
	c[n].r.to_port_min = c[n].r.to_port_max = 1024;
	n++;
	c[n] = (typeof(c[0])){ "port range reversed", masq(1), -EINVAL };
	c[n].r.proto = IPPROTO_TCP;
	c[n].r.flags = XNF_NAT_F_PORTS;
	c[n].r.to_port_min = 2000;
	c[n++].r.to_port_max = 1000;
	c[n] = (typeof(c[0])){ "IPv4 with bytes past 4",
			       snat4(1, "203.0.113.1", "203.0.113.1"), -EINVAL };
	c[n++].r.to_min[8] = 1;
	c[n] = (typeof(c[0])){ "icmp in IPv6",
			       snat4(1, "203.0.113.1", "203.0.113.1"), -EINVAL };
	c[n].r.family = XNF_AF_INET6;
	a6(c[n].r.to_min, "2001:db8::1");
	memcpy(c[n].r.to_max, c[n].r.to_min, 16);
	c[n++].r.proto = IPPROTO_ICMP;
	c[n] = (typeof(c[0])){ "iif on masquerade", masq(1), -EINVAL };
	c[n++].r.iif = 3;
	c[n] = (typeof(c[0])){ "oif on dnat", dnat4(1, "192.0.2.10", 0), -EINVAL };
	c[n++].r.oif = 3;
	c[n] = (typeof(c[0])){ "random on dnat", dnat4(1, "192.0.2.10", 0),
			       -EINVAL };
	c[n++].r.flags |= XNF_NAT_F_RANDOM;
	c[n] = (typeof(c[0])){ "saddr with host bits",
			       snat4(1, "203.0.113.1", "203.0.113.1"), -EINVAL };
	a4(c[n].r.src, "192.0.2.1");
	c[n++].r.src_plen = 24;
	c[n] = (typeof(c[0])){ "IPv4 prefix longer than 32",
			       snat4(1, "203.0.113.1", "203.0.113.1"), -EINVAL };
	c[n++].r.src_plen = 33;
	c[n] = (typeof(c[0])){ "masquerade saddr without family", masq(1),
			       -EINVAL };
	a4(c[n].r.src, "192.0.2.0");
	c[n++].r.src_plen = 24;
	c[n] = (typeof(c[0])){ "unknown type", masq(1), -EINVAL };
	c[n++].r.type = 9;
	c[n] = (typeof(c[0])){ "protocol not translated", masq(1), -EINVAL };
	c[n++].r.proto = IPPROTO_SCTP;
	c[n] = (typeof(c[0])){ "unknown flag", masq(1), -EINVAL };
	c[n++].r.flags = 0x80;

	for (i = 0; i < n; i++) {
		err[0] = '\0';
		ret = xnf_nat_rule_check(&c[i].r, err, sizeof(err));
		ASSERT_EQ(ret, c[i].want, c[i].what);
		/* A refusal says what is wrong. */
		if (c[i].want)
			ASSERT_TRUE(err[0] != '\0', c[i].what);
	}
}

TEST(nat_set_edits)
{
	struct xnf_nat_set *s = xnf_nat_set_new();
	struct xnf_nat_rule r;
	char err[256];
	__u32 i;

	if (!ASSERT_TRUE(s != NULL, "new set"))
		return;
	r = masq(30);
	ASSERT_OK(xnf_nat_set_add(s, &r, false, err, sizeof(err)), "prio 30");
	r = dnat4(5, "192.0.2.10", 80);
	ASSERT_OK(xnf_nat_set_add(s, &r, false, err, sizeof(err)), "prio 5");
	r = snat4(20, "203.0.113.1", "203.0.113.1");
	ASSERT_OK(xnf_nat_set_add(s, &r, false, err, sizeof(err)), "prio 20");
	ASSERT_EQ(s->n, 3, "three rules");
	ASSERT_EQ(s->r[0].prio, 5, "in order of prio");
	ASSERT_EQ(s->r[1].prio, 20, "in order of prio");
	ASSERT_EQ(s->r[2].prio, 30, "in order of prio");
	r = masq(0);
	ASSERT_OK(xnf_nat_set_add(s, &r, true, err, sizeof(err)), "auto prio");
	ASSERT_EQ(s->r[3].prio, 30 + XNF_NAT_PRIO_STEP, "highest plus step");
	r = masq(20);
	ASSERT_EQ(xnf_nat_set_add(s, &r, false, err, sizeof(err)), -EEXIST,
		  "prio taken");
	r = masq(25);
	r.iif = 1;
	ASSERT_EQ(xnf_nat_set_add(s, &r, false, err, sizeof(err)), -EINVAL,
		  "malformed rule");
	ASSERT_EQ(s->n, 4, "refusals change nothing");
	ASSERT_OK(xnf_nat_set_del(s, 20), "del 20");
	ASSERT_EQ(xnf_nat_set_del(s, 20), -ENOENT, "del 20 again");
	ASSERT_TRUE(xnf_nat_set_find(s, 20) == NULL, "20 is gone");
	ASSERT_EQ(s->n, 3, "three left");
	ASSERT_EQ(s->r[1].prio, 30, "the rest in order");
	r = masq(0xffffffffU - 1);
	ASSERT_OK(xnf_nat_set_add(s, &r, false, err, sizeof(err)), "high prio");
	ASSERT_EQ(xnf_nat_set_add(s, &r, true, err, sizeof(err)), -ERANGE,
		  "no prio left above");
	xnf_nat_set_flush(s);
	ASSERT_EQ(s->n, 0, "flushed");
	for (i = 0; i < XNF_NAT_MAX_RULES; i++) {
		r = masq(i + 1);
		if (!ASSERT_OK(xnf_nat_set_add(s, &r, false, err, sizeof(err)),
			       "fill"))
			break;
	}
	r = masq(1000);
	ASSERT_EQ(xnf_nat_set_add(s, &r, false, err, sizeof(err)), -ENOSPC,
		  "one past XNF_NAT_MAX_RULES");
	xnf_nat_set_free(s);
}

static bool hdrs(struct fx *f, struct xnf_nat_hdr h[XNF_NAT_HDR_ACTIVE + 1])
{
	__u32 k;

	for (k = 0; k <= XNF_NAT_HDR_ACTIVE; k++)
		if (!ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f->dp,
								XNF_T_NAT_HDR),
						   &k, &h[k]) ?
				       -errno :
				       0,
			       "read xnf_nat_hdr"))
			return false;
	return true;
}

static __u32 tables_gen(struct fx *f)
{
	struct xnf_config cfg = {};

	xnf_cfg_read(f->dp, &cfg);
	return cfg.tables_gen;
}

static bool sets_equal(const struct xnf_nat_set *a, const struct xnf_nat_set *b)
{
	__u32 i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (!xnf_nat_rule_same(&a->r[i], &b->r[i]))
			return false;
	return true;
}

TEST(nat_apply_generations)
{
	struct xnf_nat_set *sa = xnf_nat_set_new(), *sb = xnf_nat_set_new();
	struct xnf_nat_set *got = NULL, *bad = NULL;
	struct xnf_nat_hdr h0[3], h1[3], h2[3], junk = { .count = 5 };
	struct xnf_nat_rule r, rule;
	__u32 gen, tg, k, i;
	char err[512];
	struct fx f;

	if (!ASSERT_TRUE(sa && sb, "new sets") || !fx_open(&f))
		goto free;
	ASSERT_OK(xnf_nat_read(f.dp, &got, err, sizeof(err)), err);
	if (got)
		ASSERT_EQ(got->n, 0, "a fresh instance has no rule");
	xnf_nat_set_free(got);
	got = NULL;
	r = masq(10);
	xnf_nat_set_add(sa, &r, false, NULL, 0);
	r = dnat4(5, "192.0.2.10", 80);
	xnf_nat_set_add(sa, &r, false, NULL, 0);
	r = snat4(7, "203.0.113.1", "203.0.113.9");
	xnf_nat_set_add(sb, &r, false, NULL, 0);

	if (!hdrs(&f, h0))
		goto out;
	tg = tables_gen(&f);
	if (!ASSERT_OK(xnf_nat_apply(f.dp, sa, err, sizeof(err)), err) ||
	    !hdrs(&f, h1))
		goto out;
	gen = h1[XNF_NAT_HDR_ACTIVE].active;
	ASSERT_EQ(gen, h0[XNF_NAT_HDR_ACTIVE].active ^ 1,
		  "the inactive generation became the active one");
	ASSERT_EQ(h1[gen].count, 2, "its count");
	ASSERT_NEQ(h1[gen].serial, h0[gen].serial, "its serial moved");
	ASSERT_EQ(h1[gen ^ 1].count, h0[gen ^ 1].count,
		  "the old generation untouched");
	ASSERT_NEQ(tables_gen(&f), tg, "the table generation moved");
	/* The rules in the generation's slots, in prio order. */
	k = gen * XNF_NAT_MAX_RULES;
	ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f.dp, XNF_T_NAT_RULES), &k,
				      &rule),
		  "read slot 0");
	ASSERT_EQ(rule.prio, 5, "slot 0 is the lowest prio");
	if (ASSERT_OK(xnf_nat_read(f.dp, &got, err, sizeof(err)), err))
		ASSERT_TRUE(sets_equal(got, sa), "read gives what was applied");
	xnf_nat_set_free(got);
	got = NULL;

	/* Garbage in the inactive generation is never read. */
	k = gen ^ 1;
	bpf_map_update_elem(xnf_table_fd(f.dp, XNF_T_NAT_HDR), &k, &junk,
			    BPF_ANY);
	memset(&rule, 0xa5, sizeof(rule));
	for (i = 0; i < 5; i++) {
		k = (gen ^ 1) * XNF_NAT_MAX_RULES + i;
		bpf_map_update_elem(xnf_table_fd(f.dp, XNF_T_NAT_RULES), &k,
				    &rule, BPF_ANY);
	}
	if (ASSERT_OK(xnf_nat_read(f.dp, &got, err, sizeof(err)), err))
		ASSERT_TRUE(sets_equal(got, sa), "the inactive one is ignored");
	xnf_nat_set_free(got);
	got = NULL;

	/* A set with a malformed rule changes nothing. */
	bad = xnf_nat_set_dup(sb);
	if (!ASSERT_TRUE(bad != NULL, "dup"))
		goto out;
	bad->r[0].iif = 1;
	ASSERT_EQ(xnf_nat_apply(f.dp, bad, err, sizeof(err)), -EINVAL,
		  "malformed set refused");
	if (!hdrs(&f, h2))
		goto out;
	ASSERT_EQ(h2[XNF_NAT_HDR_ACTIVE].active, gen, "no switch");

	/* B switches back, and read follows. */
	tg = tables_gen(&f);
	ASSERT_OK(xnf_nat_apply(f.dp, sb, err, sizeof(err)), err);
	if (!hdrs(&f, h2))
		goto out;
	ASSERT_EQ(h2[XNF_NAT_HDR_ACTIVE].active, gen ^ 1, "switched back");
	ASSERT_EQ(h2[gen ^ 1].count, 1, "B's count");
	ASSERT_EQ(h2[gen].count, 2, "A's generation as it was");
	ASSERT_NEQ(tables_gen(&f), tg, "the table generation moved again");
	if (ASSERT_OK(xnf_nat_read(f.dp, &got, err, sizeof(err)), err))
		ASSERT_TRUE(sets_equal(got, sb), "read gives B");
out:
	fx_close(&f);
free:
	xnf_nat_set_free(got);
	xnf_nat_set_free(bad);
	xnf_nat_set_free(sa);
	xnf_nat_set_free(sb);
}

TEST(nat_conf_commit)
{
	struct xnf_nat_rule r1 = masq(10), r2 = dnat4(0, "192.0.2.10", 80);
	struct xnf_commit_result res;
	struct xnf_nat_set *got = NULL;
	struct xnf_conf *c = NULL;
	char err[512];
	struct fx f;

	if (!fx_open(&f))
		return;
	r1.oif = f.ifindex[0];
	r2.iif = f.ifindex[1];
	if (!ASSERT_OK(xnf_conf_running(f.dp, &c), "candidate"))
		goto out;
	ASSERT_OK(xnf_conf_nat_add(c, &r1, false, err, sizeof(err)), err);
	ASSERT_OK(xnf_conf_nat_add(c, &r2, true, err, sizeof(err)), err);
	ASSERT_EQ(xnf_conf_nat_add(c, &r1, false, err, sizeof(err)), -EEXIST,
		  "prio 10 twice");
	ASSERT_EQ(xnf_conf_nat_del(c, 99, err, sizeof(err)), -ENOENT,
		  "no prio 99");
	/* Nothing runs before the commit. */
	if (ASSERT_OK(xnf_nat_read(f.dp, &got, err, sizeof(err)), err))
		ASSERT_EQ(got->n, 0, "not yet");
	xnf_nat_set_free(got);
	got = NULL;
	if (!ASSERT_OK(xnf_conf_commit(f.dp, c, NULL, &res, err, sizeof(err)),
		       err))
		goto out;
	ASSERT_EQ(res.done.nat, 1, "one switch for two rules");
	if (ASSERT_OK(xnf_nat_read(f.dp, &got, err, sizeof(err)), err) &&
	    ASSERT_EQ(got->n, 2, "both rules run")) {
		ASSERT_EQ(got->r[0].prio, 10, "prio 10");
		ASSERT_EQ(got->r[1].prio, 20, "auto prio 20");
		ASSERT_EQ(got->r[1].iif, f.ifindex[1], "iif");
	}
	xnf_nat_set_free(got);
	got = NULL;
	xnf_conf_free(c);
	c = NULL;
	/* A flush in a candidate of its own. */
	if (!ASSERT_OK(xnf_conf_running(f.dp, &c), "candidate") ||
	    !ASSERT_OK(xnf_conf_nat_flush(c, err, sizeof(err)), err) ||
	    !ASSERT_OK(xnf_conf_commit(f.dp, c, NULL, &res, err, sizeof(err)),
		       err))
		goto out;
	if (ASSERT_OK(xnf_nat_read(f.dp, &got, err, sizeof(err)), err))
		ASSERT_EQ(got->n, 0, "flushed");
out:
	xnf_nat_set_free(got);
	xnf_conf_free(c);
	fx_close(&f);
}

/* A commit that switched the NAT rules and then failed (a route to a
 * device that does not exist) puts the rules that ran back. */
TEST(nat_commit_undone)
{
	struct xnf_route rt = { .type = XNF_RT_UNICAST,
				.ifindex = 999999,
				.dmac = { 2, 0, 0, 0, 0, 9 } };
	struct xnf_nat_rule r1 = masq(10),
			    r2 = snat4(5, "203.0.113.1", "203.0.113.1");
	struct xnf_commit_result res;
	struct xnf_nat_set *got = NULL;
	struct xnf_conf *c = NULL;
	__u8 a[16] = {};
	char err[512];
	struct fx f;

	if (!fx_open(&f))
		return;
	r1.oif = f.ifindex[0];
	if (!ASSERT_OK(xnf_conf_running(f.dp, &c), "candidate") ||
	    !ASSERT_OK(xnf_conf_nat_add(c, &r1, false, err, sizeof(err)), err) ||
	    !ASSERT_OK(xnf_conf_commit(f.dp, c, NULL, &res, err, sizeof(err)),
		       err))
		goto out;
	xnf_conf_free(c);
	c = NULL;
	if (!ASSERT_OK(xnf_conf_running(f.dp, &c), "candidate") ||
	    !ASSERT_OK(xnf_conf_nat_flush(c, err, sizeof(err)), err) ||
	    !ASSERT_OK(xnf_conf_nat_add(c, &r2, false, err, sizeof(err)), err))
		goto out;
	inet_pton(AF_INET, "203.0.113.0", a);
	ASSERT_OK(xnf_conf_route_add(c, XNF_AF_INET, a, 24, &rt, false, err,
				     sizeof(err)),
		  err);
	ASSERT_ERR(xnf_conf_commit(f.dp, c, NULL, &res, err, sizeof(err)),
		   "the route fails after the rules switched");
	ASSERT_EQ(res.done.nat, 1, "the rules had switched");
	ASSERT_TRUE(res.rolled_back, "undone");
	if (ASSERT_OK(xnf_nat_read(f.dp, &got, err, sizeof(err)), err) &&
	    ASSERT_EQ(got->n, 1, "one rule runs"))
		ASSERT_TRUE(xnf_nat_rule_same(&got->r[0], &r1),
			    "the rule that ran before");
out:
	xnf_nat_set_free(got);
	xnf_conf_free(c);
	fx_close(&f);
}
