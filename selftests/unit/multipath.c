// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Next hops as objects and multipath routes: the resilient bucket
 * assignment (lib/nexthop.c) on its own, then the XDP l3fwd on
 * BPF_PROG_TEST_RUN frames: flows spread over a group's next hops, a flow
 * always takes the same one (and its reply too: the hash is symmetric),
 * removing a next hop moves exactly the flows that were on it, one write
 * to a nexthop changes every route through it, and unused objects go;
 * the next hop `xnf route get` names for a flow is the one it takes.
 * userspace equals XDP on the same cases: unf.c (unf_multipath_vs_xdp).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>

#include "fixture.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FLOWS	      600

/* Buckets per member of @g. */
static void counts(const struct xnf_nhgroup *g, __u32 *cnt, __u32 max_id)
{
	__u32 b;

	memset(cnt, 0, (max_id + 1) * sizeof(*cnt));
	for (b = 0; b < XNF_NHG_BUCKETS; b++)
		if (g->bucket[b] <= max_id)
			cnt[g->bucket[b]]++;
}

/* Every member has BUCKETS / n or one more, and nothing else holds a
 * bucket. */
static bool even(const struct xnf_nhgroup *g, const __u32 *ids, __u32 n,
		 const char *what)
{
	__u32 cnt[64], i, sum = 0;

	counts(g, cnt, 63);
	for (i = 0; i < n; i++) {
		if (!ASSERT_GE(cnt[ids[i]], XNF_NHG_BUCKETS / n, what) ||
		    !ASSERT_LE(cnt[ids[i]], XNF_NHG_BUCKETS / n + 1, what))
			return false;
		sum += cnt[ids[i]];
	}
	return ASSERT_EQ(sum, XNF_NHG_BUCKETS, what);
}

TEST(nhg_rebalance_resilient)
{
	__u32 ids[XNF_NHG_PATHS + 1], n, gone, i, b, moved;
	struct xnf_nhgroup g, before;
	char what[96];

	for (i = 0; i <= XNF_NHG_PATHS; i++)
		ids[i] = 10 + i;
	/* For every size, removing each member in turn moves its buckets
	 * only, and adding one takes only the buckets it ends up with. */
	for (n = 2; n <= XNF_NHG_PATHS; n++) {
		memset(&g, 0, sizeof(g));
		xnf_nhg_rebalance(&g, ids, n);
		snprintf(what, sizeof(what), "%u members from empty", n);
		if (!even(&g, ids, n, what))
			return;
		for (gone = 0; gone < n; gone++) {
			__u32 rest[XNF_NHG_PATHS], m = 0;
			struct xnf_nhgroup h = g;

			for (i = 0; i < n; i++)
				if (i != gone)
					rest[m++] = ids[i];
			xnf_nhg_rebalance(&h, rest, m);
			snprintf(what, sizeof(what),
				 "%u members, member %u removed", n, gone);
			if (!even(&h, rest, m, what))
				return;
			for (b = 0; b < XNF_NHG_BUCKETS; b++)
				if (g.bucket[b] != ids[gone] &&
				    !ASSERT_EQ(h.bucket[b], g.bucket[b], what))
					return;
		}
		if (n == XNF_NHG_PATHS)
			continue;
		/* Member n joins. */
		before = g;
		xnf_nhg_rebalance(&g, ids, n + 1);
		snprintf(what, sizeof(what), "%u members, one added", n);
		if (!even(&g, ids, n + 1, what))
			return;
		for (b = 0, moved = 0; b < XNF_NHG_BUCKETS; b++) {
			if (g.bucket[b] == before.bucket[b])
				continue;
			moved++;
			if (!ASSERT_EQ(g.bucket[b], ids[n], what))
				return;
		}
		ASSERT_EQ(moved, XNF_NHG_BUCKETS / (n + 1), what);
	}
}

/* The path flow @k towards @dst takes (-1: not forwarded). */
static int path_of(struct fx *f, int family, __u32 k, const char *dst,
		   bool reverse)
{
	static __u8 frame[PKT_MAX];
	static struct fx_out out;
	int len;

	len = fx_mp_flow(frame, sizeof(frame), family, k, dst, reverse);
	if (!ASSERT_GT(len, 0, "build a flow's frame") ||
	    !ASSERT_OK(fx_run(f, frame, len, &out), "test_run"))
		return -1;
	return out.ret == XDP_REDIRECT ? fx_mp_path_of(out.data) : -1;
}

/* The paths of all flows of @family towards @dst; false after a failed
 * assertion (a flow not forwarded along one of the paths). */
static bool paths_of(struct fx *f, int family, const char *dst, bool reverse,
		     int *path, __u32 *per)
{
	char what[96];
	__u32 k;

	memset(per, 0, FX_MP_PATHS * sizeof(*per));
	for (k = 0; k < FLOWS; k++) {
		path[k] = path_of(f, family, k, dst, reverse);
		snprintf(what, sizeof(what),
			 "flow %u to %s forwarded on a path", k, dst);
		if (!ASSERT_GE(path[k], 0, what))
			return false;
		per[path[k]]++;
	}
	return true;
}

static __u32 route_nh(struct fx *f, int family, const char *prefix)
{
	struct xnf_route_entry *e;
	__u8 addr[16] = {};
	__u32 n, i, plen, id = 0;
	char buf[64], *slash;

	snprintf(buf, sizeof(buf), "%s", prefix);
	slash = strchr(buf, '/');
	*slash = '\0';
	plen = atoi(slash + 1);
	inet_pton(family == XNF_AF_INET ? AF_INET : AF_INET6, buf, addr);
	if (!ASSERT_OK(xnf_route_list(f->dp, &e, &n), "list routes"))
		return 0;
	for (i = 0; i < n; i++)
		if (e[i].family == family && e[i].plen == plen &&
		    !memcmp(e[i].addr, addr, family == XNF_AF_INET ? 4 : 16))
			id = e[i].nh;
	free(e);
	return id;
}

/* The path xnf_nhg_pick (`xnf route get ADDR from ...`) names for the flow
 * of @s through group @gid, or -1. */
static int picked_path(struct fx *f, __u32 gid, const struct pkt_spec *s)
{
	int af = s->family == 4 ? AF_INET : AF_INET6;
	struct xnf_flow fl = {
		.family = s->family == 4 ? XNF_AF_INET : XNF_AF_INET6,
		.proto = s->proto ?: IPPROTO_UDP,
		/* as the parser reads them: not from a fragment */
		.ports = !s->frag_off,
		.sport = s->sport,
		.dport = s->dport,
	};
	struct xnf_nexthop nh;
	__u32 id, bucket;

	inet_pton(af, s->src, fl.src);
	inet_pton(af, s->dst, fl.dst);
	if (!ASSERT_OK(xnf_nhg_pick(f->dp, gid, &fl, &id, &bucket), "pick") ||
	    !ASSERT_OK(xnf_nh_lookup(f->dp, id, &nh), "the picked next hop"))
		return -1;
	return fx_mp_path_of(nh.dmac);
}

/* The next hop xnf_nhg_pick names for a flow is the one l3fwd sends it
 * to: flows of both families with ports, and fragments, whose ports do
 * not count. */
static void mp_pick(struct fx *f)
{
	static __u8 frame[PKT_MAX];
	static struct fx_out out;
	char src[INET6_ADDRSTRLEN], what[96];
	struct pkt_spec s;
	int family, len, k;
	__u32 gid;

	for (family = 4; family <= 6; family += 2) {
		gid = route_nh(f, family == 4 ? XNF_AF_INET : XNF_AF_INET6,
			       family == 4 ? "198.51.100.0/24" :
					     "2001:db8:2::/48");
		for (k = 0; k < FLOWS; k++) {
			memset(&s, 0, sizeof(s));
			s.family = family;
			snprintf(src, sizeof(src),
				 family == 4 ? "192.0.2.%u" : "2001:db8:1::%x",
				 1 + k % 200);
			s.src = src;
			s.dst = family == 4 ? "198.51.100.1" : "2001:db8:2::1";
			s.proto = k % 3 ? IPPROTO_UDP : IPPROTO_TCP;
			s.sport = 1024 + k;
			s.dport = 7 + k % 50;
			/* IPv4 first fragments: the ports are in them, but
			 * the hash leaves them out. */
			s.frag_off = family == 4 && k % 5 == 0 ? 0x2000 : 0;
			s.frame_len = 128;
			len = pkt_build(frame, sizeof(frame), &s);
			snprintf(what, sizeof(what),
				 "IPv%d flow %d: the picked path", family, k);
			if (!ASSERT_GT(len, 0, "build a flow's frame") ||
			    !ASSERT_OK(fx_run(f, frame, len, &out), "test_run") ||
			    !ASSERT_EQ(out.ret, XDP_REDIRECT, what) ||
			    !ASSERT_EQ(picked_path(f, gid, &s),
				       fx_mp_path_of(out.data), what))
				return;
		}
	}
}

static void mp_xdp(bool fused)
{
	static int path[FLOWS], again[FLOWS];
	__u32 per[FX_MP_PATHS], per2[FX_MP_PATHS], k, moved, i;
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!fx_chain(&f, "l3fwd", fused, false) ||
	    !fx_mp_route(&f, "198.51.100.0/24", 0xf) ||
	    !fx_mp_route(&f, "2001:db8:2::/48", 0xf))
		goto out;

	SUBTEST("spread") {
		/* Every path gets flows: with 600 flows and a fixed hash
		 * this is a property of the hash, not luck. */
		if (paths_of(&f, XNF_AF_INET, "198.51.100.1", false, path, per))
			for (i = 0; i < FX_MP_PATHS; i++)
				ASSERT_GT(per[i], FLOWS / FX_MP_PATHS / 2,
					  "an IPv4 path's share of the flows");
		if (paths_of(&f, XNF_AF_INET6, "2001:db8:2::1", false, again,
			     per2))
			for (i = 0; i < FX_MP_PATHS; i++)
				ASSERT_GT(per2[i], FLOWS / FX_MP_PATHS / 2,
					  "an IPv6 path's share of the flows");
	}
	SUBTEST("stable") {
		if (paths_of(&f, XNF_AF_INET, "198.51.100.1", false, path, per) &&
		    paths_of(&f, XNF_AF_INET, "198.51.100.1", false, again, per2))
			for (k = 0; k < FLOWS; k++)
				if (!ASSERT_EQ(again[k], path[k],
					       "a flow's path, asked again"))
					break;
	}
	SUBTEST("route_get") {
		mp_pick(&f);
	}
	SUBTEST("symmetric") {
		/* The reverse direction's route has the same next hops:
		 * it shares the group, and a reply takes its flow's path. */
		if (!fx_mp_route(&f, "192.0.2.0/24", 0xf) ||
		    !ASSERT_EQ(route_nh(&f, XNF_AF_INET, "192.0.2.0/24"),
			       route_nh(&f, XNF_AF_INET, "198.51.100.0/24"),
			       "routes with the same next hops share a group"))
			goto sym_out;
		if (paths_of(&f, XNF_AF_INET, "198.51.100.1", false, path, per) &&
		    paths_of(&f, XNF_AF_INET, "198.51.100.1", true, again, per2))
			for (k = 0; k < FLOWS; k++)
				if (!ASSERT_EQ(again[k], path[k],
					       "a reply's path is its flow's"))
					break;
		xnf_route_del(f.dp, XNF_AF_INET, (__u8[4]){ 192, 0, 2, 0 }, 24);
sym_out:;
	}
	SUBTEST("fragments") {
		/* Fragments carry no ports after the first: all of a
		 * flow's fragments hash on addresses and protocol only. */
		static __u8 frame[PKT_MAX];
		static struct fx_out o1, o2;
		struct pkt_spec first = { .family = 4,
					  .sport = 4000,
					  .frag_off = 0x2000 };
		struct pkt_spec later = { .family = 4,
					  .sport = 4000,
					  .frag_off = 0x0010 };
		int len;

		len = pkt_build(frame, sizeof(frame), &first);
		ASSERT_OK(fx_run(&f, frame, len, &o1), "first fragment");
		len = pkt_build(frame, sizeof(frame), &later);
		ASSERT_OK(fx_run(&f, frame, len, &o2), "later fragment");
		if (ASSERT_EQ(o1.ret, XDP_REDIRECT, "first fragment forwarded") &&
		    ASSERT_EQ(o2.ret, XDP_REDIRECT, "later fragment forwarded"))
			ASSERT_EQ(fx_mp_path_of(o1.data), fx_mp_path_of(o2.data),
				  "fragments of a flow take one path");
	}
	SUBTEST("remove_one") {
		/* Path 2 goes: exactly its flows move, all of them. */
		if (!paths_of(&f, XNF_AF_INET, "198.51.100.1", false, path, per) ||
		    !fx_mp_route(&f, "198.51.100.0/24", 0xf & ~(1u << 2)) ||
		    !paths_of(&f, XNF_AF_INET, "198.51.100.1", false, again, per2))
			goto rm_out;
		for (k = 0, moved = 0; k < FLOWS; k++) {
			if (again[k] != path[k])
				moved++;
			if (path[k] != 2 &&
			    !ASSERT_EQ(again[k], path[k],
				       "a flow not on the removed path stays"))
				break;
		}
		ASSERT_EQ(per2[2], 0, "no flow on the removed path");
		ASSERT_EQ(moved, per[2],
			  "flows moved = flows on the removed path");
		/* And back: only the flows it takes move, to it. */
		if (!fx_mp_route(&f, "198.51.100.0/24", 0xf) ||
		    !paths_of(&f, XNF_AF_INET, "198.51.100.1", false, path, per))
			goto rm_out;
		for (k = 0, moved = 0; k < FLOWS; k++) {
			if (again[k] == path[k])
				continue;
			moved++;
			if (!ASSERT_EQ(path[k], 2,
				       "a moved flow moves to the new path"))
				break;
		}
		ASSERT_EQ(moved, per[2], "flows moved = flows on the new path");
		ASSERT_GT(moved, 0, "the new path takes flows");
rm_out:;
	}
	SUBTEST("from_unicast") {
		/* A single next hop gains a second: only the flows the new
		 * one takes move. */
		struct xnf_route rt;
		__u8 a[4] = { 198, 51, 100, 0 };

		fx_mp_path(&f, 0, &rt);
		if (!ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, a, 24, &rt,
					     BPF_ANY),
			       "a unicast route") ||
		    !fx_mp_route(&f, "198.51.100.0/24", 0x3) ||
		    !paths_of(&f, XNF_AF_INET, "198.51.100.1", false, path, per))
			goto uc_out;
		ASSERT_EQ(per[0] + per[1], FLOWS, "flows on paths 0 and 1");
		ASSERT_GT(per[1], 0, "the new path takes flows");
		ASSERT_GT(per[0], 0, "the old path keeps flows");
uc_out:;
	}
out:
	fx_close(&f);
}

TEST(multipath_xdp_tail)
{
	mp_xdp(false);
}

TEST(multipath_xdp_fused)
{
	mp_xdp(true);
}

/* One nexthop object under routes of both families and a group: one
 * write changes the rewrite of all of them; a nexthop without neighbour
 * passes to the kernel; deleting the routes deletes the objects. */
TEST(nexthop_update)
{
	static __u8 frame[PKT_MAX];
	static struct fx_out out;
	const __u8 nmac[6] = { 0x02, 0, 0, 0, 0x0e, 0x01 };
	__u8 a4[4] = { 10, 2, 0, 0 }, a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2 };
	struct xnf_nexthop nh, *nhs;
	struct xnf_nh_live live;
	struct pkt_spec s4 = { .family = 4, .dst = "10.2.0.1" };
	struct pkt_spec s6 = { .family = 6 };
	struct xnf_route rt;
	struct xnf_nhgroup g;
	__u32 id, id6, gid, *ids, n, k;
	struct fx f;
	int len;

	if (!fx_open(&f))
		return;
	fx_mp_path(&f, 0, &rt);
	if (!fx_chain(&f, "l3fwd", false, false) ||
	    !ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, a4, 16, &rt, BPF_ANY),
		       "IPv4 route") ||
	    !ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET6, a6, 48, &rt, BPF_ANY),
		       "IPv6 route") ||
	    !fx_mp_route(&f, "198.51.100.0/24", 0x3))
		goto out;
	id = route_nh(&f, XNF_AF_INET, "10.2.0.0/16");
	id6 = route_nh(&f, XNF_AF_INET6, "2001:db8:2::/48");
	gid = route_nh(&f, XNF_AF_INET, "198.51.100.0/24");
	ASSERT_NEQ(id, 0, "the route names a nexthop");
	ASSERT_EQ(id6, id, "the same next hop is one object");
	if (!ASSERT_OK(xnf_nhg_lookup(f.dp, gid, &g), "the group") ||
	    !ASSERT_OK(xnf_nh_lookup(f.dp, id, &nh), "the nexthop"))
		goto out;
	ASSERT_TRUE(g.nh[0] == id || g.nh[1] == id, "the group has it too");
	ASSERT_EQ(nh.refs, 3, "two routes and the group use it");

	nh.state = XNF_NH_VALID;
	memcpy(nh.dmac, nmac, 6);
	if (!ASSERT_OK(xnf_nh_update(f.dp, id, &nh), "new MAC"))
		goto out;
	len = pkt_build(frame, sizeof(frame), &s4);
	if (ASSERT_OK(fx_run(&f, frame, len, &out), "IPv4") &&
	    ASSERT_EQ(out.ret, XDP_REDIRECT, "IPv4 forwarded"))
		ASSERT_MEM(out.data, nmac, 6, "IPv4 takes the new MAC");
	len = pkt_build(frame, sizeof(frame), &s6);
	if (ASSERT_OK(fx_run(&f, frame, len, &out), "IPv6") &&
	    ASSERT_EQ(out.ret, XDP_REDIRECT, "IPv6 forwarded"))
		ASSERT_MEM(out.data, nmac, 6, "IPv6 takes the new MAC");
	/* The group's flows on it too: every flow leaves with the new MAC
	 * or path 1's. */
	for (k = 0; k < 200; k++) {
		len = fx_mp_flow(frame, sizeof(frame), XNF_AF_INET, k,
				 "198.51.100.1", false);
		if (!ASSERT_OK(fx_run(&f, frame, len, &out), "flow") ||
		    !ASSERT_EQ(out.ret, XDP_REDIRECT, "flow forwarded") ||
		    !ASSERT_TRUE(!memcmp(out.data, nmac, 6) ||
					 fx_mp_path_of(out.data) == 1,
				 "a group's flow takes the new MAC or path 1"))
			break;
	}
	/* No neighbour: to the kernel, which resolves it. */
	nh.state = XNF_NH_KERNEL;
	if (ASSERT_OK(xnf_nh_update(f.dp, id, &nh), "no neighbour")) {
		len = pkt_build(frame, sizeof(frame), &s4);
		if (ASSERT_OK(fx_run(&f, frame, len, &out), "IPv4"))
			ASSERT_EQ(out.ret, XDP_PASS, "passed without neighbour");
	}
	/* Unused objects go with the last route. */
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, a4, 16), "del IPv4");
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET6, a6, 48), "del IPv6");
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, (__u8[4]){ 198, 51, 100, 0 },
				24),
		  "del the multipath route");
	if (ASSERT_OK(xnf_nh_list(f.dp, &ids, &nhs, &n), "list nexthops")) {
		ASSERT_EQ(n, 0, "no nexthop left");
		free(ids);
		free(nhs);
	}
	ASSERT_ERR(xnf_nhg_lookup(f.dp, gid, &g), "no group left");
	/* A freed id keeps its live slot, for packets that still hold it. */
	if (ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f.dp, XNF_T_NH_LIVE),
					  &id, &live),
		      "the freed id's live word")) {
		ASSERT_EQ(live.refs, 0, "free");
		ASSERT_NEQ(live.slot, 0, "its slot still live");
	}
	ASSERT_ERR(xnf_nh_lookup(f.dp, id, &nh), "a freed id is not listed");
	/* And a route again after all that. */
	len = pkt_build(frame, sizeof(frame), &s4);
	if (ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, a4, 16, &rt, BPF_ANY),
		      "IPv4 route again") &&
	    ASSERT_OK(fx_run(&f, frame, len, &out), "IPv4 again") &&
	    ASSERT_EQ(out.ret, XDP_REDIRECT, "forwarded again"))
		ASSERT_MEM(out.data, rt.dmac, 6, "with the route's MAC");
out:
	fx_close(&f);
}

/* A reader lists the next hops while a writer makes and frees them (a
 * route sync beside `xnf save`, which takes no lock): an id freed between
 * the read of the live words and its lookup is left out, not an error. */
struct nh_churn {
	struct fx *f;
	volatile bool stop;
	int err;
	__u32 rounds;
};

static void *nh_churn(void *arg)
{
	struct nh_churn *c = arg;
	struct xnf_route rt;
	__u32 id;

	fx_mp_path(c->f, 1, &rt);
	while (!c->stop && !c->err) {
		struct xnf_nexthop nh = {
			.ifindex = rt.ifindex,
			.state = XNF_NH_VALID,
			.mtu = 1000 + c->rounds % 500,
		};

		memcpy(nh.dmac, rt.dmac, 6);
		memcpy(nh.smac, rt.smac, 6);
		c->err = xnf_nh_get(c->f->dp, &nh, &id) ?:
				 xnf_nh_put(c->f->dp, id);
		c->rounds++;
	}
	return NULL;
}

TEST(nexthop_list_while_freed)
{
	struct nh_churn c = {};
	struct xnf_nexthop *nhs;
	__u32 *ids, n, lists = 0, rounds = 0;
	long deadline = fx_now_ms() + FX_WAIT_MS;
	pthread_t thr;
	struct fx f;
	int err = 0;

	if (!fx_open(&f))
		return;
	c.f = &f;
	/* The tables opened before two threads use the handle. */
	if (!ASSERT_OK(xnf_nh_list(f.dp, &ids, &nhs, &n), "list"))
		goto out;
	free(ids);
	free(nhs);
	if (!ASSERT_OK(pthread_create(&thr, NULL, nh_churn, &c), "writer"))
		goto out;
	/* Until the writer made and freed a few thousand next hops. */
	while (!err && rounds < 5000 && fx_now_ms() < deadline) {
		err = xnf_nh_list(f.dp, &ids, &nhs, &n);
		if (!err) {
			free(ids);
			free(nhs);
		}
		lists++;
		rounds = c.rounds;
	}
	c.stop = true;
	pthread_join(thr, NULL);
	ASSERT_OK(c.err, "the writer's gets and puts");
	ASSERT_OK(err, "every list while next hops are freed");
	/* 5,000 rounds take a second on a quiet machine; on a busy one the
	 * deadline may come first, and a few hundred still race the lists
	 * (without the fix a list failed at once). */
	ASSERT_TRUE(rounds >= 500, "the writer freed 500 next hops meanwhile");
	fprintf(stderr, "# %u lists, %u next hops made and freed\n", lists,
		c.rounds);
out:
	fx_close(&f);
}
