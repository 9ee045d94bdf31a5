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
			ASSERT_EQ(c->routes[i].addr[3], i * 16,
				  "order by address");
		ASSERT_EQ(c->routes[4].plen, 24U, "shorter after");
		ASSERT_EQ(c->routes[5].family, XNF_AF_INET6, "IPv6 last");
		ASSERT_EQ(xnf_conf_route_add(c, XNF_AF_INET, a, 24, &rt, false,
					     err, sizeof(err)),
			  -EEXIST, "second add");
		rt.dmac[5] = 9;
		ASSERT_OK(xnf_conf_route_add(c, XNF_AF_INET, a, 24, &rt, true,
					     err, sizeof(err)),
			  "replace");
		ASSERT_EQ(c->routes[4].rt.dmac[5], 9, "replaced");
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
		ASSERT_OK(xnf_conf_apply(f.dp, want, &chg, err, sizeof(err)),
			  err);
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
		ASSERT_OK(xnf_conf_apply(f.dp, want, &chg, err, sizeof(err)),
			  err);
		ASSERT_EQ(chg.routes + chg.fdb + chg.xconnects + chg.firewall +
				  chg.config,
			  0U, "changes");
	}
	SUBTEST("rules_keep_their_slots") {
		slot20 = running_slot(f.dp, 20);
		xnf_fw_set_del(want->fw, 10, NULL);
		r = rule(30, 161);
		xnf_fw_set_add(want->fw, &r, false, NULL);
		ASSERT_OK(xnf_conf_apply(f.dp, want, &chg, err, sizeof(err)),
			  err);
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
			rt = route_to(999999, 2);
			inet_pton(AF_INET, "203.0.113.0", a);
			xnf_conf_route_add(bad, XNF_AF_INET, a, 24, &rt, false,
					   err, sizeof(err));
			err[0] = '\0';
			ASSERT_LT(xnf_conf_apply(f.dp, bad, &chg, err,
						 sizeof(err)),
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
