// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The configuration as one value (lib/conf.c): edits refused as the
 * transactions refuse them, an apply that makes the tables equal to it and
 * changes nothing the second time, firewall rules that keep their slots
 * (so their hit counters), and an apply that fails midway undone. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "conf.h"
#include "fixture.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct xnf_route route_to(__u32 ifindex, __u8 last)
{
	struct xnf_route rt = { .type = XNF_RT_UNICAST, .ifindex = ifindex };

	memcpy(rt.dmac, "\x02\x00\x00\x00\x00\x00", 6);
	rt.dmac[5] = last;
	return rt;
}

static struct xnf_fw_rule rule(__u32 prio, __u16 dport)
{
	struct xnf_fw_rule r = {
		.prio = prio,
		.action = XNF_FW_DROP,
		.flags = XNF_FW_F_PROTO | XNF_FW_F_DPORT,
		.proto = 17,
		.dport_lo = dport,
		.dport_hi = dport,
		.in_use = 1,
	};

	return r;
}

/* The slot of the rule of @prio in what runs, or -1. */
static int running_slot(struct xnf_dp *dp, __u32 prio)
{
	const struct xnf_fw_rule *rules;
	struct xnf_fw_set *set;
	int slot = -1, i;

	if (xnf_fw_read(dp, &set))
		return -1;
	rules = xnf_fw_set_rules(set);
	for (i = 0; i < XNF_FW_MAX_RULES; i++)
		if (rules[i].in_use && rules[i].prio == prio)
			slot = i;
	xnf_fw_set_free(set);
	return slot;
}

/* A commit of @want, with what it changed. */
static int conf_commit(struct xnf_dp *dp, const struct xnf_conf *want,
		       struct xnf_conf_changes *chg, char *err, size_t errlen)
{
	struct xnf_commit_result res;
	int ret;

	ret = xnf_conf_commit(dp, want, NULL, &res, err, errlen);
	*chg = res.done;
	return ret;
}

/* Adds to @bad a route to a device that does not exist, which sorts after
 * the tests' other routes, and applies @bad: the apply fails after it
 * changed what comes before, and undoes that. */
static int apply_failing(struct fx *f, struct xnf_conf *bad,
			 struct xnf_conf_changes *chg, char *err, size_t errlen)
{
	struct xnf_route rt = route_to(999999, 9);
	__u8 a[16] = {};

	inet_pton(AF_INET, "203.0.113.0", a);
	xnf_conf_route_add(bad, XNF_AF_INET, a, 24, &rt, false, err, errlen);
	err[0] = '\0';
	return conf_commit(f->dp, bad, chg, err, errlen);
}

TEST(conf_edits)
{
	struct xnf_route rt = route_to(3, 1);
	struct xnf_xconnect xc = { .ifindex = 2 };
	struct xnf_conf *c = NULL;
	__u8 a[16] = {}, mac[6] = { 2, 0, 0, 0, 0, 1 };
	char err[256];
	int i;

	if (!ASSERT_OK(xnf_conf_new(&c), "new"))
		return;
	SUBTEST("routes_sorted_and_refused_twice") {
		/* Out of order in, in `save` order out: IPv4 first, longest
		 * prefix first, then by address. */
		for (i = 3; i >= 0; i--) {
			inet_pton(AF_INET, "203.0.113.0", a);
			a[3] = i * 16;
			ASSERT_OK(xnf_conf_route_add(c, XNF_AF_INET, a, 28, &rt,
						     false, err, sizeof(err)),
				  "add");
		}
		inet_pton(AF_INET6, "2001:db8::", a);
		ASSERT_OK(xnf_conf_route_add(c, XNF_AF_INET6, a, 64, &rt, false,
					     err, sizeof(err)),
			  "add v6");
		inet_pton(AF_INET, "198.51.100.0", a);
		ASSERT_OK(xnf_conf_route_add(c, XNF_AF_INET, a, 24, &rt, false,
					     err, sizeof(err)),
			  "add /24");
		ASSERT_EQ(c->nroutes, 6U, "routes");
		for (i = 0; i < 4; i++)
			ASSERT_EQ(c->routes[i].e.addr[3], i * 16,
				  "order by address");
		ASSERT_EQ(c->routes[4].e.plen, 24U, "shorter after");
		ASSERT_EQ(c->routes[5].e.family, XNF_AF_INET6, "IPv6 last");
		ASSERT_EQ(xnf_conf_route_add(c, XNF_AF_INET, a, 24, &rt, false,
					     err, sizeof(err)),
			  -EEXIST, "second add");
		rt.dmac[5] = 9;
		ASSERT_OK(xnf_conf_route_add(c, XNF_AF_INET, a, 24, &rt, true,
					     err, sizeof(err)),
			  "replace");
		ASSERT_EQ(c->routes[4].e.rt.dmac[5], 9, "replaced");
		ASSERT_OK(xnf_conf_route_del(c, XNF_AF_INET, a, 24, err,
					     sizeof(err)),
			  "del");
		ASSERT_EQ(xnf_conf_route_del(c, XNF_AF_INET, a, 24, err,
					     sizeof(err)),
			  -ENOENT, "del again");
		ASSERT_EQ(c->nroutes, 5U, "routes after del");
	}
	SUBTEST("fdb") {
		ASSERT_OK(xnf_conf_fdb_add(c, mac, 2, false, err, sizeof(err)),
			  "add");
		ASSERT_EQ(xnf_conf_fdb_add(c, mac, 3, false, err, sizeof(err)),
			  -EEXIST, "add again");
		ASSERT_OK(xnf_conf_fdb_add(c, mac, 3, true, err, sizeof(err)),
			  "replace");
		ASSERT_EQ(c->fdb[0].e.ifindex, 3U, "moved");
		ASSERT_OK(xnf_conf_fdb_del(c, mac, err, sizeof(err)), "del");
		ASSERT_EQ(xnf_conf_fdb_del(c, mac, err, sizeof(err)), -ENOENT,
			  "del again");
	}
	SUBTEST("xconnect_pairs") {
		struct xnf_xconnect back = { .ifindex = 1 },
				    third = { .ifindex = 3 };

		ASSERT_OK(xnf_conf_xconnect_add(c, 1, &xc, 2, &back, err,
						sizeof(err)),
			  "pair");
		ASSERT_EQ(c->nxc, 2U, "both directions");
		ASSERT_EQ(xnf_conf_xconnect_add(c, 1, &third, 3, &back, err,
						sizeof(err)),
			  -EBUSY, "an end to a third device");
		ASSERT_OK(xnf_conf_xconnect_remove(c, 2, err, sizeof(err)),
			  "remove by either end");
		ASSERT_EQ(c->nxc, 0U, "both gone");
	}
	SUBTEST("attachments") {
		struct xnf_conf_attach at = { .dev = "ut1", .chain.len = 1 };
		struct xnf_chain_change chg = { .len = 2,
						.nf = { XNF_NF_FIREWALL,
							XNF_NF_L3FWD },
						.fused = XNF_ON };

		ASSERT_OK(xnf_conf_attach(c, &at, err, sizeof(err)), "attach");
		ASSERT_EQ(xnf_conf_attach(c, &at, err, sizeof(err)), -EEXIST,
			  "attach again");
		ASSERT_OK(xnf_conf_chain_set(c, "ut1", &chg, err, sizeof(err)),
			  "chain set");
		ASSERT_EQ(c->att[0].chain.len, 2U, "chain");
		ASSERT_EQ(c->att[0].chain.fused, true, "fused");
		ASSERT_EQ(xnf_conf_destroy(c, err, sizeof(err)), -EBUSY,
			  "destroy while attached");
		ASSERT_EQ(xnf_conf_chain_set(c, "ut2", &chg, err, sizeof(err)),
			  -ENOENT, "chain set elsewhere");
		ASSERT_OK(xnf_conf_detach(c, "ut1", err, sizeof(err)), "detach");
		ASSERT_OK(xnf_conf_destroy(c, err, sizeof(err)), "destroy");
		ASSERT_EQ(c->nroutes, 0U, "nothing left");
	}
	xnf_conf_free(c);
}

TEST(conf_apply)
{
	struct xnf_conf *want = NULL, *got = NULL;
	struct xnf_conf_changes chg;
	struct xnf_fw_rule r;
	struct xnf_route rt;
	__u8 a[16] = {}, mac[6] = { 2, 0, 0, 0, 0, 0x42 };
	struct xnf_xconnect fwd = {}, rev = {};
	char err[512] = "";
	int slot20 = -1;
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!ASSERT_OK(xnf_conf_new(&want), "new"))
		goto out;
	rt = route_to(f.ifindex[1], 1);
	inet_pton(AF_INET, "198.51.100.0", a);
	xnf_conf_route_add(want, XNF_AF_INET, a, 24, &rt, false, err,
			   sizeof(err));
	inet_pton(AF_INET6, "2001:db8:2::", a);
	xnf_conf_route_add(want, XNF_AF_INET6, a, 64, &rt, false, err,
			   sizeof(err));
	xnf_conf_fdb_add(want, mac, f.ifindex[2], false, err, sizeof(err));
	fwd.ifindex = f.ifindex[2];
	rev.ifindex = f.ifindex[1];
	xnf_conf_xconnect_add(want, f.ifindex[1], &fwd, f.ifindex[2], &rev, err,
			      sizeof(err));
	r = rule(10, 53);
	xnf_fw_set_add(want->fw, &r, false, NULL);
	r = rule(20, 123);
	xnf_fw_set_add(want->fw, &r, false, NULL);
	want->cfg.no_route = XNF_ACT_DROP;

	SUBTEST("applies_and_reads_back") {
		ASSERT_OK(conf_commit(f.dp, want, &chg, err, sizeof(err)), err);
		ASSERT_EQ(chg.routes, 2U, "routes");
		ASSERT_EQ(chg.fdb, 1U, "fdb");
		ASSERT_EQ(chg.xconnects, 1U, "one pair");
		ASSERT_EQ(chg.firewall, 1U, "one firewall switch");
		ASSERT_EQ(chg.config, 1U, "config");
		if (ASSERT_OK(xnf_conf_read(f.dp, &got, err, sizeof(err)), err)) {
			ASSERT_EQ(got->nroutes, 2U, "routes read");
			ASSERT_EQ(memcmp(got->routes, want->routes,
					 2 * sizeof(*got->routes)),
				  0, "the same routes");
			ASSERT_EQ(got->nxc, 2U, "cross-connects read");
			ASSERT_EQ(got->cfg.no_route, (__u32)XNF_ACT_DROP,
				  "no_route");
			ASSERT_EQ(xnf_fw_set_count(got->fw), 2U, "rules");
		}
		xnf_conf_free(got);
		got = NULL;
	}
	SUBTEST("second_apply_changes_nothing") {
		ASSERT_OK(conf_commit(f.dp, want, &chg, err, sizeof(err)), err);
		ASSERT_EQ(chg.routes + chg.fdb + chg.xconnects + chg.firewall +
				  chg.config,
			  0U, "changes");
	}
	SUBTEST("rules_keep_their_slots") {
		slot20 = running_slot(f.dp, 20);
		xnf_fw_set_del(want->fw, 10, NULL);
		r = rule(30, 161);
		xnf_fw_set_add(want->fw, &r, false, NULL);
		ASSERT_OK(conf_commit(f.dp, want, &chg, err, sizeof(err)), err);
		ASSERT_EQ(chg.firewall, 1U, "one switch");
		ASSERT_GE(slot20, 0, "rule 20 ran");
		ASSERT_EQ(running_slot(f.dp, 20), slot20, "rule 20's slot");
		ASSERT_EQ(running_slot(f.dp, 10), -1, "rule 10 gone");
		ASSERT_GE(running_slot(f.dp, 30), 0, "rule 30 in");
	}
	SUBTEST("failure_midway_is_undone") {
		struct xnf_conf *bad = NULL;

		/* The firewall and the config change first, then a route to
		 * a device that does not exist fails. */
		ASSERT_OK(xnf_conf_read(f.dp, &bad, err, sizeof(err)), err);
		if (bad) {
			xnf_fw_set_policy(bad->fw, XNF_FW_DROP);
			bad->cfg.martian = XNF_ACT_PASS;
			ASSERT_LT(apply_failing(&f, bad, &chg, err, sizeof(err)),
				  0, "apply");
			ASSERT_NEQ(err[0], '\0', "message");
			xnf_conf_free(bad);
		}
		ASSERT_OK(xnf_conf_read(f.dp, &got, err, sizeof(err)), err);
		if (got) {
			ASSERT_EQ(xnf_fw_set_default(got->fw),
				  (__u32)XNF_FW_ALLOW, "policy undone");
			ASSERT_EQ(got->cfg.martian, (__u32)XNF_ACT_DROP,
				  "config undone");
			ASSERT_EQ(got->nroutes, 2U, "no route added");
			ASSERT_EQ(running_slot(f.dp, 20), slot20,
				  "rule 20 kept its slot");
		}
		xnf_conf_free(got);
		got = NULL;
	}
out:
	xnf_conf_free(want);
	fx_close(&f);
}

TEST(conf_multipath_edits)
{
	struct xnf_route p[3] = { route_to(3, 7), route_to(2, 5), route_to(3, 6) };
	struct xnf_conf *c = NULL;
	__u8 a[16] = {};
	char err[256];

	if (!ASSERT_OK(xnf_conf_new(&c), "new"))
		return;
	inet_pton(AF_INET, "198.51.100.0", a);
	SUBTEST("next_hops_sorted") {
		ASSERT_OK(xnf_conf_route_add_multipath(c, XNF_AF_INET, a, 24, p, 3,
						       false, err, sizeof(err)),
			  err);
		if (ASSERT_EQ(c->nroutes, 1U, "one route") &&
		    ASSERT_EQ(c->routes[0].npaths, 3U, "three next hops")) {
			ASSERT_EQ(c->routes[0].e.rt.type,
				  (__u32)XNF_RT_MULTIPATH, "type");
			ASSERT_EQ(c->routes[0].paths[0].ifindex, 2U,
				  "by device first");
			ASSERT_EQ(c->routes[0].paths[1].dmac[5], 6, "then MAC");
			ASSERT_EQ(c->routes[0].paths[2].dmac[5], 7, "last");
		}
		ASSERT_EQ(xnf_conf_route_add_multipath(c, XNF_AF_INET, a, 24, p, 2,
						       false, err, sizeof(err)),
			  -EEXIST, "second add");
	}
	SUBTEST("refused") {
		struct xnf_route twice[2] = { p[0], p[0] },
				 bh = { .type = XNF_RT_BLACKHOLE },
				 mixed[2] = { p[0], bh };

		inet_pton(AF_INET, "203.0.113.0", a);
		ASSERT_EQ(xnf_conf_route_add_multipath(c, XNF_AF_INET, a, 24,
						       twice, 2, false, err,
						       sizeof(err)),
			  -EINVAL, "a next hop twice");
		ASSERT_EQ(xnf_conf_route_add_multipath(c, XNF_AF_INET, a, 24,
						       mixed, 2, false, err,
						       sizeof(err)),
			  -EINVAL, "a blackhole among next hops");
		ASSERT_EQ(xnf_conf_route_add_multipath(c, XNF_AF_INET, a, 24, p, 0,
						       false, err, sizeof(err)),
			  -EINVAL, "no next hop");
		bh.type = XNF_RT_MULTIPATH;
		ASSERT_EQ(xnf_conf_route_add(c, XNF_AF_INET, a, 24, &bh, false,
					     err, sizeof(err)),
			  -EINVAL, "multipath without next hops");
		ASSERT_EQ(c->nroutes, 1U, "nothing added");
	}
	SUBTEST("replace_and_del") {
		inet_pton(AF_INET, "198.51.100.0", a);
		ASSERT_OK(xnf_conf_route_add_multipath(c, XNF_AF_INET, a, 24,
						       p + 1, 2, true, err,
						       sizeof(err)),
			  err);
		ASSERT_EQ(c->routes[0].npaths, 2U, "two next hops");
		/* One next hop is a unicast route, as on a running
		 * instance. */
		ASSERT_OK(xnf_conf_route_add_multipath(c, XNF_AF_INET, a, 24, p,
						       1, true, err, sizeof(err)),
			  err);
		ASSERT_EQ(c->routes[0].npaths, 0U, "no group");
		ASSERT_EQ(c->routes[0].e.rt.type, (__u32)XNF_RT_UNICAST,
			  "unicast");
		ASSERT_EQ(c->routes[0].e.rt.dmac[5], 7, "its next hop");
		ASSERT_OK(xnf_conf_route_add_multipath(c, XNF_AF_INET, a, 24, p,
						       3, true, err, sizeof(err)),
			  err);
		ASSERT_OK(xnf_conf_route_del(c, XNF_AF_INET, a, 24, err,
					     sizeof(err)),
			  "del");
		ASSERT_EQ(c->nroutes, 0U, "gone");
	}
	xnf_conf_free(c);
}

/* The group of the running route to 198.51.100.0/24 (0: none). */
static __u32 running_group(struct xnf_dp *dp, struct xnf_nhgroup *g)
{
	struct xnf_route_entry *ents = NULL;
	__u32 n = 0, i, id = 0;

	if (xnf_route_list(dp, &ents, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (ents[i].family == XNF_AF_INET && ents[i].plen == 24 &&
		    ents[i].addr[0] == 198 && ents[i].rt.type == XNF_RT_MULTIPATH)
			id = ents[i].nh;
	free(ents);
	if (id && xnf_nhg_lookup(dp, id, g))
		id = 0;
	return id;
}

/* Whether @c's route 0 has the next hops @p[0..n) (in any order). */
static bool has_paths(const struct xnf_conf *c, const struct xnf_route *p, __u32 n)
{
	__u32 i, j, hit = 0;

	if (c->nroutes < 1 || c->routes[0].npaths != n)
		return false;
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			hit += !memcmp(&c->routes[0].paths[j], &p[i],
				       sizeof(p[i]));
	return hit == n;
}

TEST(conf_multipath_apply)
{
	struct xnf_conf *want = NULL, *got = NULL, *bad = NULL;
	struct xnf_nhgroup g0, g1, g2;
	struct xnf_conf_changes chg;
	struct xnf_route p[3];
	__u32 gid = 0, b, kept = 0;
	__u8 a[16] = {};
	char err[512] = "";
	struct fx f;

	if (!fx_open(&f))
		return;
	p[0] = route_to(f.ifindex[1], 1);
	p[1] = route_to(f.ifindex[2], 2);
	p[2] = route_to(f.ifindex[1], 3);
	inet_pton(AF_INET, "198.51.100.0", a);
	if (!ASSERT_OK(xnf_conf_new(&want), "new") ||
	    !ASSERT_OK(xnf_conf_route_add_multipath(want, XNF_AF_INET, a, 24, p,
						    3, false, err, sizeof(err)),
		       err))
		goto out;
	SUBTEST("applies_and_reads_back") {
		ASSERT_OK(conf_commit(f.dp, want, &chg, err, sizeof(err)), err);
		ASSERT_EQ(chg.routes, 1U, "one route");
		gid = running_group(f.dp, &g0);
		ASSERT_NEQ(gid, 0U, "a group runs");
		ASSERT_EQ(g0.n, 3U, "of three");
		if (ASSERT_OK(xnf_conf_read(f.dp, &got, err, sizeof(err)), err))
			ASSERT_TRUE(has_paths(got, p, 3), "the next hops read");
		xnf_conf_free(got);
		got = NULL;
	}
	SUBTEST("same_set_changes_nothing") {
		/* The same set read back, in another order as given. */
		ASSERT_OK(xnf_conf_route_add_multipath(want, XNF_AF_INET, a, 24,
						       (struct xnf_route[]){
							       p[2], p[0], p[1] },
						       3, true, err, sizeof(err)),
			  err);
		ASSERT_OK(conf_commit(f.dp, want, &chg, err, sizeof(err)), err);
		ASSERT_EQ(chg.routes, 0U, "no route written");
		ASSERT_EQ(running_group(f.dp, &g1), gid, "the same group");
		ASSERT_EQ(memcmp(g1.bucket, g0.bucket, sizeof(g0.bucket)), 0,
			  "the same buckets");
	}
	SUBTEST("changed_set_keeps_staying_flows") {
		/* p[1] leaves: the buckets of p[0] and p[2] stay. */
		ASSERT_OK(xnf_conf_route_add_multipath(want, XNF_AF_INET, a, 24,
						       (struct xnf_route[]){
							       p[0], p[2] },
						       2, true, err, sizeof(err)),
			  err);
		ASSERT_OK(conf_commit(f.dp, want, &chg, err, sizeof(err)), err);
		ASSERT_EQ(chg.routes, 1U, "one route replaced");
		ASSERT_EQ(running_group(f.dp, &g1), gid, "changed in place");
		ASSERT_EQ(g1.n, 2U, "two members");
		for (b = 0; b < XNF_NHG_BUCKETS; b++) {
			if (g1.bucket[b] == g0.bucket[b])
				kept++;
			else if (!ASSERT_FALSE(g0.bucket[b] == g1.nh[0] ||
						       g0.bucket[b] == g1.nh[1],
					       "only the gone one's buckets move"))
				break;
		}
		ASSERT_GE(kept, 2 * (XNF_NHG_BUCKETS / 3), "buckets kept");
	}
	SUBTEST("failure_restores_the_set") {
		/* The set changes (p[1] back, p[0] out), then a route to a
		 * device that does not exist fails: undone. */
		ASSERT_OK(xnf_conf_read(f.dp, &bad, err, sizeof(err)), err);
		if (bad &&
		    ASSERT_OK(xnf_conf_route_add_multipath(bad, XNF_AF_INET, a,
							   24, p + 1, 2, true,
							   err, sizeof(err)),
			      err)) {
			ASSERT_LT(apply_failing(&f, bad, &chg, err, sizeof(err)),
				  0, "apply");
			ASSERT_EQ(chg.routes, 1U, "the set had changed");
		}
		xnf_conf_free(bad);
		if (ASSERT_OK(xnf_conf_read(f.dp, &got, err, sizeof(err)), err)) {
			ASSERT_EQ(got->nroutes, 1U, "no route added");
			ASSERT_TRUE(has_paths(got,
					      (struct xnf_route[]){ p[0], p[2] },
					      2),
				    "the set from before");
		}
		ASSERT_EQ(running_group(f.dp, &g2), gid, "the same group");
		xnf_conf_free(got);
		got = NULL;
	}
out:
	xnf_conf_free(want);
	fx_close(&f);
}

/* What the command line refuses, the library refuses: a candidate built
 * by a daemon or a test gets the same answer, with the same words,
 * whether it is a whole configuration or what runs plus edits. */
TEST(conf_checks)
{
	struct xnf_route rt = route_to(2, 1);
	struct xnf_xconnect xc = { .ifindex = 2 }, back = { .ifindex = 2 };
	struct xnf_fw_rule bad = rule(10, 53);
	struct xnf_conf *c = NULL, *run = NULL;
	__u8 a[16] = {}, mac[6] = { 2, 0, 0, 0, 0, 1 };
	static const __u8 notone[3][6] = { { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
					   { 0x01, 0x00, 0x5e, 0, 0, 1 },
					   {} };
	char err[256], err2[256];
	struct fx f;
	int i;

	if (!fx_open(&f))
		return;
	if (!ASSERT_OK(xnf_conf_new(&c), "new"))
		goto out;
	SUBTEST("station_addresses") {
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(xnf_conf_fdb_add(c, notone[i], 2, false, err,
						   sizeof(err)),
				  -EINVAL, "FDB entry");
			ASSERT_TRUE(strstr(err, "unicast") != NULL, err);
			memcpy(rt.dmac, notone[i], 6);
			ASSERT_EQ(xnf_conf_route_add(c, XNF_AF_INET, a, 8, &rt,
						     false, err, sizeof(err)),
				  -EINVAL, "next hop");
		}
		ASSERT_EQ(c->nfdb + c->nroutes, 0U, "nothing added");
	}
	SUBTEST("prefixes_and_next_hops") {
		rt = route_to(2, 1);
		inet_pton(AF_INET, "192.0.2.1", a);
		ASSERT_EQ(xnf_conf_route_add(c, XNF_AF_INET, a, 24, &rt, false,
					     err, sizeof(err)),
			  -EINVAL, "host bits");
		inet_pton(AF_INET, "192.0.2.0", a);
		ASSERT_EQ(xnf_conf_route_add(c, XNF_AF_INET, a, 33, &rt, false,
					     err, sizeof(err)),
			  -EINVAL, "a length IPv4 has not");
		rt.gw_family = XNF_AF_INET6;
		ASSERT_EQ(xnf_conf_route_add(c, XNF_AF_INET, a, 24, &rt, false,
					     err, sizeof(err)),
			  -EINVAL, "a gateway of the other family");
		rt.gw_family = 0;
		rt.ifindex = 0;
		ASSERT_EQ(xnf_conf_route_add(c, XNF_AF_INET, a, 24, &rt, false,
					     err, sizeof(err)),
			  -EINVAL, "a next hop without its device");
	}
	SUBTEST("the_rest") {
		ASSERT_EQ(xnf_conf_xconnect_add(c, 2, &xc, 2, &back, err,
						sizeof(err)),
			  -EINVAL, "a cross-connect to itself");
		bad.dport_lo = 60;
		bad.dport_hi = 50;
		ASSERT_EQ(xnf_conf_fw_add(c, &bad, false, err, sizeof(err)),
			  -EINVAL, "a backwards port range");
		ASSERT_EQ(xnf_conf_config_set(c, "no_route", "flood", err,
					      sizeof(err)),
			  -EINVAL, "flood is l2_miss's");
		ASSERT_EQ(xnf_conf_config_set(c, "bogus", "drop", err,
					      sizeof(err)),
			  -EINVAL, "no such key");
		ASSERT_OK(xnf_conf_config_set(c, "l2_miss", "drop", err,
					      sizeof(err)),
			  err);
		ASSERT_EQ(c->cfg.l2_miss, (__u32)XNF_ACT_DROP, "l2_miss");
	}
	SUBTEST("the_same_words_over_what_runs") {
		/* The entry runs; both kinds of candidate refuse it again,
		 * the same way. */
		ASSERT_OK(xnf_conf_fdb_add(c, mac, f.ifindex[1], false, err,
					   sizeof(err)),
			  err);
		ASSERT_OK(conf_commit(f.dp, c, &(struct xnf_conf_changes){},
				      err, sizeof(err)),
			  err);
		ASSERT_EQ(xnf_conf_fdb_add(c, mac, f.ifindex[2], false, err,
					   sizeof(err)),
			  -EEXIST, "whole");
		if (ASSERT_OK(xnf_conf_running(f.dp, &run), "running"))
			ASSERT_EQ(xnf_conf_fdb_add(run, mac, f.ifindex[2],
						   false, err2, sizeof(err2)),
				  -EEXIST, "over what runs");
		ASSERT_TRUE(!strcmp(err, err2), err2);
	}
out:
	xnf_conf_free(run);
	xnf_conf_free(c);
	fx_close(&f);
}

/* A candidate over what runs reads only what its edits touch, and its
 * difference is only what they changed. */
TEST(conf_running)
{
	struct xnf_route rt;
	struct xnf_conf *c = NULL, *run = NULL;
	struct xnf_conf_diff *d = NULL;
	struct xnf_conf_changes chg;
	__u8 a[16] = {}, mac[6] = { 2, 0, 0, 0, 0, 7 };
	struct xnf_fw_rule r = rule(10, 53);
	char err[256];
	struct fx f;
	int i;

	if (!fx_open(&f))
		return;
	rt = route_to(f.ifindex[1], 1);
	if (!ASSERT_OK(xnf_conf_new(&c), "new"))
		goto out;
	for (i = 0; i < 10; i++) {
		inet_pton(AF_INET, "10.0.0.0", a);
		a[1] = i;
		xnf_conf_route_add(c, XNF_AF_INET, a, 16, &rt, false, err,
				   sizeof(err));
	}
	xnf_conf_fw_add(c, &r, false, err, sizeof(err));
	if (!ASSERT_OK(conf_commit(f.dp, c, &chg, err, sizeof(err)), err) ||
	    !ASSERT_OK(xnf_conf_running(f.dp, &run), "running"))
		goto out;
	SUBTEST("touched_only") {
		a[1] = 3;
		ASSERT_EQ(xnf_conf_route_add(run, XNF_AF_INET, a, 16, &rt,
					     false, err, sizeof(err)),
			  -EEXIST, "a route that runs");
		ASSERT_OK(xnf_conf_route_del(run, XNF_AF_INET, a, 16, err,
					     sizeof(err)),
			  err);
		a[1] = 20;
		ASSERT_OK(xnf_conf_route_add(run, XNF_AF_INET, a, 16, &rt,
					     false, err, sizeof(err)),
			  err);
		ASSERT_OK(xnf_conf_fdb_add(run, mac, f.ifindex[2], false, err,
					   sizeof(err)),
			  err);
		ASSERT_EQ(run->nroutes, 1U, "the candidate holds one route");
		ASSERT_TRUE(run->fw == NULL, "no rule read");
	}
	SUBTEST("its_difference") {
		if (ASSERT_OK(xnf_conf_diff(f.dp, run, &d, err, sizeof(err)),
			      err)) {
			ASSERT_EQ(d->n, 3U,
				  "a route added, one removed, an entry");
			for (i = 0; i < (int)d->n; i++)
				ASSERT_NEQ(d->v[i].obj, XNF_OBJ_FW_RULE,
					   "the rules stay");
		}
		ASSERT_OK(conf_commit(f.dp, run, &chg, err, sizeof(err)), err);
		ASSERT_EQ(chg.routes, 2U, "two routes");
		ASSERT_EQ(chg.fdb, 1U, "one entry");
		ASSERT_EQ(chg.firewall, 0U, "the firewall untouched");
		ASSERT_EQ(running_slot(f.dp, 10), 0, "the rule runs");
	}
out:
	xnf_conf_diff_free(d);
	xnf_conf_free(run);
	xnf_conf_free(c);
	fx_close(&f);
}

/* A chain in which an NF would not see its packets is refused by both
 * edits that set a chain (xnf_nfs.h, the order flags): the firewall after
 * an NF that hands packets to the kernel, xsk before one that chooses the
 * egress again, the firewall before conntrack, whose state it reads. */
TEST(conf_chain_order)
{
	static const struct {
		const char *chain;
		bool ok;
	} cases[] = {
		{ "firewall,l3fwd,l2fwd,xsk", true },
		{ "firewall,l2fwd,l3fwd", true },
		{ "l3fwd,l2fwd", true },
		{ "l3fwd,xsk", true },
		{ "xsk,firewall", true },
		{ "l3fwd,firewall", false },
		{ "l2fwd,firewall", false },
		{ "l3fwd,l2fwd,firewall", false },
		{ "xsk,l3fwd", false },
		{ "firewall,xsk,l2fwd", false },
		{ "conntrack,firewall,l3fwd", true },
		{ "l3fwd,conntrack", true },
		{ "firewall,conntrack", false },
		{ "firewall,l3fwd,conntrack", false },
	};
	struct xnf_conf_attach at = { .dev = "ut1" };
	struct xnf_chain_change chg = {};
	struct xnf_chain_spec spec;
	struct xnf_conf *c = NULL;
	char err[256], what[64];
	size_t i;

	if (!ASSERT_OK(xnf_conf_new(&c), "new"))
		return;
	at.chain.len = 1;
	at.chain.nf[0] = XNF_NF_L3FWD;
	if (!ASSERT_OK(xnf_conf_attach(c, &at, err, sizeof(err)), err))
		goto out;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (!ASSERT_OK(xnf_chain_parse(cases[i].chain, &spec, err,
					       sizeof(err)),
			       err))
			continue;
		at.chain = spec;
		snprintf(at.dev, sizeof(at.dev), "ut2");
		snprintf(what, sizeof(what), "attach %s", cases[i].chain);
		err[0] = '\0';
		ASSERT_EQ(xnf_conf_attach(c, &at, err, sizeof(err)),
			  cases[i].ok ? 0 : -EINVAL, what);
		if (!cases[i].ok)
			ASSERT_TRUE(strstr(err, "put ") != NULL, err);
		xnf_conf_detach(c, "ut2", err, sizeof(err));
		chg.len = spec.len;
		memcpy(chg.nf, spec.nf, sizeof(chg.nf));
		snprintf(what, sizeof(what), "chain set %s", cases[i].chain);
		ASSERT_EQ(xnf_conf_chain_set(c, "ut1", &chg, err, sizeof(err)),
			  cases[i].ok ? 0 : -EINVAL, what);
		if (!cases[i].ok)
			ASSERT_EQ(memcmp(c->att[0].chain.nf, chg.nf,
					 sizeof(chg.nf)) != 0,
				  true, "the chain stays");
	}
out:
	xnf_conf_free(c);
}

static bool route_runs(struct xnf_dp *dp, const char *addr, __u32 plen)
{
	struct xnf_route_entry e;
	__u8 a[16] = {};
	int family = strchr(addr, ':') ? XNF_AF_INET6 : XNF_AF_INET;

	inet_pton(family == XNF_AF_INET ? AF_INET : AF_INET6, addr, a);
	return !xnf_route_get(dp, family, a, plen, &e);
}

static int cand_route(struct xnf_conf *c, const char *addr, __u32 plen,
		      const struct xnf_route *rt, char *err, size_t errlen)
{
	int family = strchr(addr, ':') ? XNF_AF_INET6 : XNF_AF_INET;
	__u8 a[16] = {};

	inet_pton(family == XNF_AF_INET ? AF_INET : AF_INET6, addr, a);
	return xnf_conf_route_add(c, family, a, plen, rt, false, err, errlen);
}

/* route flush: every route written by hand goes, in a candidate over what
 * runs (read in one go) and in a whole one; the routes a sync mirrors
 * stay; what the same candidate adds after the flush stays. */
TEST(conf_route_flush)
{
	struct xnf_route rt, p[2], bh = { .type = XNF_RT_BLACKHOLE };
	struct xnf_conf *c = NULL, *run = NULL;
	struct xnf_conf_changes chg;
	__u8 a[16] = {};
	char err[256];
	struct fx f;

	if (!fx_open(&f))
		return;
	rt = route_to(f.ifindex[1], 1);
	p[0] = route_to(f.ifindex[1], 2);
	p[1] = route_to(f.ifindex[2], 3);
	if (!ASSERT_OK(xnf_conf_new(&c), "new"))
		goto out;
	cand_route(c, "198.51.100.0", 24, &rt, err, sizeof(err));
	cand_route(c, "2001:db8:2::", 64, &rt, err, sizeof(err));
	cand_route(c, "203.0.113.0", 24, &bh, err, sizeof(err));
	inet_pton(AF_INET, "10.0.0.0", a);
	xnf_conf_route_add_multipath(c, XNF_AF_INET, a, 8, p, 2, false, err,
				     sizeof(err));
	if (!ASSERT_OK(conf_commit(f.dp, c, &chg, err, sizeof(err)), err))
		goto out;
	/* One the sync mirrored, as it writes them. */
	rt.origin = XNF_ORIGIN_SYNC;
	inet_pton(AF_INET, "192.0.2.0", a);
	if (!ASSERT_OK(xnf_route_add(f.dp, XNF_AF_INET, a, 24, &rt, false, err,
				     sizeof(err)),
		       err))
		goto out;
	rt.origin = XNF_ORIGIN_STATIC;
	SUBTEST("whole") {
		xnf_conf_free(c);
		c = NULL;
		if (ASSERT_OK(xnf_conf_read(f.dp, &c, err, sizeof(err)), err)) {
			ASSERT_EQ(c->nroutes, 4U, "the routes by hand");
			ASSERT_OK(xnf_conf_route_flush(c, err, sizeof(err)), err);
			ASSERT_EQ(c->nroutes, 0U, "none left");
		}
	}
	SUBTEST("over_what_runs") {
		if (!ASSERT_OK(xnf_conf_running(f.dp, &run), "running"))
			goto out;
		/* Touched before the flush: one that runs, one new. */
		inet_pton(AF_INET, "203.0.113.0", a);
		ASSERT_OK(xnf_conf_route_del(run, XNF_AF_INET, a, 24, err,
					     sizeof(err)),
			  err);
		ASSERT_OK(cand_route(run, "198.18.0.0", 15, &rt, err, sizeof(err)),
			  err);
		ASSERT_OK(xnf_conf_route_flush(run, err, sizeof(err)), err);
		ASSERT_EQ(run->nroutes, 0U, "the candidate holds none");
		/* What comes after the flush stays. */
		ASSERT_OK(cand_route(run, "198.51.100.0", 24, &rt, err,
				     sizeof(err)),
			  err);
		ASSERT_OK(conf_commit(f.dp, run, &chg, err, sizeof(err)), err);
		ASSERT_EQ(chg.routes, 3U,
			  "removed: the v6, the multipath; 198.51.100.0/24 kept");
		ASSERT_TRUE(route_runs(f.dp, "198.51.100.0", 24),
			    "added after the flush");
		ASSERT_TRUE(!route_runs(f.dp, "2001:db8:2::", 64), "v6 gone");
		ASSERT_TRUE(!route_runs(f.dp, "10.0.0.0", 8), "multipath gone");
		ASSERT_TRUE(!route_runs(f.dp, "203.0.113.0", 24),
			    "blackhole gone");
		ASSERT_TRUE(!route_runs(f.dp, "198.18.0.0", 15), "never added");
		ASSERT_TRUE(route_runs(f.dp, "192.0.2.0", 24), "the synced one");
	}
out:
	xnf_conf_free(run);
	xnf_conf_free(c);
	fx_close(&f);
}

/* What the commit refuses, xnf_conf_diff (`apply check`) refuses too,
 * before anything changes: a route by hand while a route sync owns the
 * tables, or while every l3fwd, as the commit leaves them, forwards by
 * the kernel's FIB. */
TEST(conf_routes_by_hand)
{
	struct xnf_rtsync_info si = { .table = 254, .pid = 1 };
	struct xnf_conf_attach at = { .dev = "ut1" };
	struct xnf_commit_result res;
	struct xnf_conf_diff *d = NULL;
	struct xnf_conf *c = NULL, *run = NULL;
	struct xnf_route rt;
	__u8 a[16] = {};
	char err[256];
	struct fx f;

	if (!fx_open(&f))
		return;
	rt = route_to(f.ifindex[1], 1);
	if (!ASSERT_OK(xnf_conf_running(f.dp, &run), "running") ||
	    !ASSERT_OK(cand_route(run, "198.51.100.0", 24, &rt, err, sizeof(err)),
		       err))
		goto out;
	SUBTEST("a_sync_owns_the_tables") {
		if (!ASSERT_OK(xnf_rtsync_set(f.dp, &si), "register a sync"))
			goto out;
		ASSERT_EQ(xnf_conf_diff(f.dp, run, &d, err, sizeof(err)),
			  -EBUSY, "apply check");
		ASSERT_EQ(xnf_conf_commit(f.dp, run, NULL, &res, err, sizeof(err)),
			  -EBUSY, "commit");
		ASSERT_EQ(res.failed_obj, XNF_OBJ_ROUTE, "the change refused");
		ASSERT_TRUE(!route_runs(f.dp, "198.51.100.0", 24), "not written");
		si.table = 0;
		ASSERT_OK(xnf_rtsync_set(f.dp, &si), "no sync");
		ASSERT_OK(xnf_conf_diff(f.dp, run, &d, err, sizeof(err)), err);
	}
	SUBTEST("every_l3fwd_in_fib_mode") {
		/* A whole configuration for a fresh instance. */
		if (!ASSERT_OK(xnf_conf_new(&c), "new"))
			goto out;
		at.chain.len = 1;
		at.chain.nf[0] = XNF_NF_L3FWD;
		at.chain.l3_fib = true;
		xnf_conf_attach(c, &at, err, sizeof(err));
		cand_route(c, "198.51.100.0", 24, &rt, err, sizeof(err));
		xnf_conf_diff_free(d);
		d = NULL;
		ASSERT_EQ(xnf_conf_diff(NULL, c, &d, err, sizeof(err)),
			  -EOPNOTSUPP, "apply check");
		ASSERT_TRUE(strstr(err, "ut1") != NULL, err);
		/* One l3fwd that reads xnf's routes is enough. */
		snprintf(at.dev, sizeof(at.dev), "ut2");
		at.chain.l3_fib = false;
		xnf_conf_attach(c, &at, err, sizeof(err));
		ASSERT_OK(xnf_conf_diff(NULL, c, &d, err, sizeof(err)), err);
		/* Deleting routes is never refused. */
		xnf_conf_detach(c, "ut2", err, sizeof(err));
		inet_pton(AF_INET, "198.51.100.0", a);
		xnf_conf_route_del(c, XNF_AF_INET, a, 24, err, sizeof(err));
		xnf_conf_diff_free(d);
		d = NULL;
		ASSERT_OK(xnf_conf_diff(NULL, c, &d, err, sizeof(err)), err);
	}
out:
	xnf_conf_diff_free(d);
	xnf_conf_free(run);
	xnf_conf_free(c);
	fx_close(&f);
}
