// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf route: the routing table of l3fwd (xnf_rt4 / xnf_rt6, LPM tries).
 *
 * A route's next hop carries all that l3fwd needs to forward without the
 * kernel: the egress port and both MACs. libxnf keeps it as a nexthop
 * object shared by the routes through it, and a multipath route ('nexthop
 * NH nexthop NH ...') as a resilient group (docs/design.md, "Next hops
 * and multipath"). With 'via ADDR' the next hop's MAC (and, without 'dev',
 * its device) is read from the kernel's neighbour table when the route is
 * written; `xnf neigh follow` (or `xnf route sync`) follows its later
 * changes. The egress device is made an xnf port (the devmap), because
 * l3fwd's redirect goes through it.
 *
 * Every add, replace and del is atomic per route: a packet finds the old
 * route or the new one, never a mix of both, and a replaced prefix is
 * never missing. Routes written by `xnf route sync` (proto sync) are the
 * kernel's: while a sync owns the tables these commands refuse to change
 * them (docs/routing.md).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "cli.h"
#include "neigh.h"

#define ROUTE_HELP	"see 'xnf route help'"
/* Devices one neighbour may be known on before we stop listing them. */
#define ROUTE_NEIGH_MAX 8

enum {
	KW_VIA,
	KW_DEV,
	KW_LLADDR,
	KW_LOCAL,
	KW_BLACKHOLE,
	KW_UNREACHABLE,
	KW_KERNEL
};
static const char *const route_kws[] = {
	[KW_VIA] = "via",
	[KW_DEV] = "dev",
	[KW_LLADDR] = "lladdr",
	[KW_LOCAL] = "local",
	[KW_BLACKHOLE] = "blackhole",
	[KW_UNREACHABLE] = "unreachable",
	[KW_KERNEL] = "kernel",
	NULL,
};

static const char *const route_type_names[] = {
	[XNF_RT_UNICAST] = "unicast",	  [XNF_RT_LOCAL] = "local",
	[XNF_RT_BLACKHOLE] = "blackhole", [XNF_RT_UNREACHABLE] = "unreachable",
	[XNF_RT_MULTIPATH] = "multipath", [XNF_RT_KERNEL] = "kernel",
};

static const char *route_type_name(__u32 type)
{
	return type <= XNF_RT_KERNEL ? route_type_names[type] : "unknown";
}

/* Why a kernel route passes (enum xnf_rt_why), as route show says it. */
static const char *route_why_name(__u32 why)
{
	static const char *const names[] = {
		[XNF_WHY_ENCAP] = "encap",     [XNF_WHY_TOS] = "tos",
		[XNF_WHY_SOURCE] = "source",   [XNF_WHY_WEIGHTS] = "weights",
		[XNF_WHY_PATHS] = "paths",     [XNF_WHY_DEVICE] = "device",
		[XNF_WHY_NEXTHOP] = "nexthop",
	};

	return why < __XNF_WHY_MAX && names[why] ? names[why] : NULL;
}

static const char *route_origin_name(__u32 origin)
{
	return origin == XNF_ORIGIN_SYNC ? "sync" : "static";
}

static int route_keyword(const char *arg)
{
	return cli_keyword(arg, route_kws, "route", ROUTE_HELP);
}

/* A route as the operator wrote it, resolved. */
struct route_req {
	int family;
	__u8 addr[16];
	__u32 plen;
	char prefix[INET6_ADDRSTRLEN + 5];
	const char *dev;
	struct xnf_route rt;
	/* 'nexthop NH nexthop NH ...': the next hops, rt unused */
	__u32 npaths;
	struct xnf_route paths[XNF_NHG_PATHS];
};

static int route_prefix(const char *arg, struct route_req *r)
{
	if (parse_prefix(arg, &r->family, r->addr, &r->plen))
		return -1;
	fmt_prefix(r->family, r->addr, r->plen, r->prefix, sizeof(r->prefix));
	return 0;
}

static const char *family_name(int family)
{
	return family == XNF_AF_INET ? "IPv4" : "IPv6";
}

/* The next hop of 'via ADDR [dev DEV]' from the kernel's neighbour table:
 * fills ifindex and dmac of @r (and r->dev when it was not given). */
static int route_resolve_via(struct route_req *r, __u32 ifindex, char *ifname)
{
	struct xnf_neigh n[ROUTE_NEIGH_MAX];
	char gw[INET6_ADDRSTRLEN], list[ROUTE_NEIGH_MAX * (IF_NAMESIZE + 2)];
	int found, i;

	fmt_addr(r->rt.gw_family, r->rt.gw, gw, sizeof(gw));
	found = xnf_neigh_lookup(r->rt.gw_family, r->rt.gw, ifindex, n,
				 ROUTE_NEIGH_MAX);
	if (found < 0)
		return cli_err("cannot read the kernel's neighbour table to "
			       "resolve %s: %s; give the MAC yourself with "
			       "'dev DEV lladdr MAC'",
			       gw, strerror(-found));
	if (!found)
		return cli_err("no neighbour entry with a usable MAC for %s%s%s: "
			       "ping %s once, or add it with 'ip neigh add %s "
			       "lladdr MAC dev %s', or give 'dev %s lladdr MAC'",
			       gw, r->dev ? " on " : "", r->dev ? r->dev : "",
			       gw, gw, r->dev ? r->dev : "DEV",
			       r->dev ? r->dev : "DEV");
	if (found > 1) {
		list[0] = '\0';
		for (i = 0; i < found && i < ROUTE_NEIGH_MAX; i++) {
			char name[IF_NAMESIZE];

			if (i)
				strcat(list, ", ");
			strcat(list, fmt_ifname(n[i].ifindex, name));
		}
		return cli_err("%s is a neighbour on several devices (%s%s); say "
			       "which with 'via %s dev DEV'",
			       gw, list, found > ROUTE_NEIGH_MAX ? ", ..." : "",
			       gw);
	}
	/* NOARP entries of broadcast and multicast addresses have such
	 * MACs; they are not next hops. */
	if ((n[0].lladdr[0] & 1) || !memcmp(n[0].lladdr, "\0\0\0\0\0\0", 6)) {
		char mac[18];

		return cli_err("neighbour %s has MAC %s, which is not a unicast "
			       "station address; route via a host, or give 'dev "
			       "DEV lladdr MAC'",
			       gw, fmt_mac(n[0].lladdr, mac, sizeof(mac)));
	}
	r->rt.ifindex = n[0].ifindex;
	memcpy(r->rt.dmac, n[0].lladdr, 6);
	if (!r->dev)
		r->dev = fmt_ifname(n[0].ifindex, ifname);
	return 0;
}

/* Parses PREFIX NEXTHOP and resolves devices and MACs, without touching
 * the instance. */
static int route_parse(int argc, char **argv, struct route_req *r, char *ifname)
{
	unsigned int seen = 0;
	bool via = false, lladdr = false;
	__u32 type = XNF_RT_UNICAST, ifindex = 0;
	int kw, ntypes = 0;
	char gw[INET6_ADDRSTRLEN];

	memset(r, 0, sizeof(*r));
	if (argc < 1)
		return cli_err("missing PREFIX; %s", ROUTE_HELP);
	if (route_prefix(argv[0], r))
		return -1;
	for (NEXT_ARG(); argc > 0; NEXT_ARG()) {
		kw = route_keyword(argv[0]);
		if (kw < 0)
			return -1;
		if (seen & (1u << kw))
			return cli_err("'%s' given twice; %s", route_kws[kw],
				       ROUTE_HELP);
		seen |= 1u << kw;
		switch (kw) {
		case KW_VIA: {
			int gw_family;

			NEXT_ARG();
			REQ_ARGS(1, "route");
			if (parse_addr(argv[0], &gw_family, r->rt.gw))
				return -1;
			r->rt.gw_family = gw_family;
			via = true;
			break;
		}
		case KW_DEV:
			NEXT_ARG();
			REQ_ARGS(1, "route");
			r->dev = argv[0];
			break;
		case KW_LLADDR:
			NEXT_ARG();
			REQ_ARGS(1, "route");
			if (parse_mac(argv[0], r->rt.dmac))
				return -1;
			lladdr = true;
			break;
		case KW_LOCAL:
			type = XNF_RT_LOCAL;
			ntypes++;
			break;
		case KW_BLACKHOLE:
			type = XNF_RT_BLACKHOLE;
			ntypes++;
			break;
		case KW_UNREACHABLE:
			type = XNF_RT_UNREACHABLE;
			ntypes++;
			break;
		case KW_KERNEL:
			type = XNF_RT_KERNEL;
			ntypes++;
			break;
		}
	}

	if (ntypes > 1)
		return cli_err("a route has one type: local, blackhole, "
			       "unreachable or kernel, not several");
	if (ntypes) {
		if (via || r->dev || lladdr)
			return cli_err("a %s route has no next hop: drop 'via', "
				       "'dev' and 'lladdr'",
				       route_type_name(type));
		r->rt.type = type;
		return 0;
	}
	/* 'via ADDR dev DEV lladdr MAC', as xnf save writes a route through
	 * a gateway: the MAC is given, the neighbour table is not read (at
	 * boot it is still empty). */
	if (via && lladdr && !r->dev)
		return cli_err("'via ADDR lladdr MAC' needs the device too: write "
			       "'via ADDR dev DEV lladdr MAC'");
	if (!via && !lladdr && r->dev)
		return cli_err("'dev %s' alone is not a next hop: xnf routes carry "
			       "the next hop's MAC; add 'lladdr MAC' or use 'via "
			       "ADDR'",
			       r->dev);
	if (!via && !lladdr)
		return cli_err("missing next hop for %s: give 'via ADDR [dev DEV]', "
			       "'dev DEV lladdr MAC', or one of local, blackhole, "
			       "unreachable, kernel",
			       r->prefix);
	if (lladdr && !r->dev)
		return cli_err("'lladdr MAC' needs the device the MAC lives on: "
			       "add 'dev DEV'");
	/* Resolving a gateway of the other family would find nothing:
	 * said as the library says it. */
	if (via && (int)r->rt.gw_family != r->family)
		return cli_err("next hop %s is %s but %s is %s: the gateway must "
			       "be of the prefix's family",
			       fmt_addr(r->rt.gw_family, r->rt.gw, gw, sizeof(gw)),
			       family_name(r->rt.gw_family), r->prefix,
			       family_name(r->family));
	if (r->dev && cli_ifindex(r->dev, &ifindex))
		return -1;
	r->rt.type = XNF_RT_UNICAST;
	r->rt.ifindex = ifindex;
	if (!via)
		memset(r->rt.gw, 0, sizeof(r->rt.gw));
	else if (!lladdr && route_resolve_via(r, ifindex, ifname))
		return -1;
	return cli_ifmac(r->dev, r->rt.smac);
}

/* PREFIX nexthop NH nexthop NH ... (iproute2's syntax): each NH is parsed
 * as the next hop of a single route would be. */
static int route_parse_multipath(int argc, char **argv, struct route_req *r)
{
	char *sub[16], ifname[IF_NAMESIZE];
	struct route_req one;
	int i, j, n;

	for (i = 1; i < argc; i = j) {
		if (strcmp(argv[i], "nexthop"))
			return cli_err("'%s' after a nexthop: every next hop of a "
				       "multipath route starts with 'nexthop'; %s",
				       argv[i], ROUTE_HELP);
		/* Up to the next "nexthop" that is no value: a device may
		 * be named so. */
		for (j = i + 1; j < argc && strcmp(argv[j], "nexthop"); j++)
			if (j + 1 < argc && (is_prefix(argv[j], "via") ||
					     is_prefix(argv[j], "dev") ||
					     is_prefix(argv[j], "lladdr")))
				j++;
		n = j - i - 1;
		if (!n)
			return cli_err("an empty 'nexthop': give 'nexthop via "
				       "ADDR [dev DEV [lladdr MAC]]' or 'nexthop "
				       "dev DEV lladdr MAC'");
		if (n > 6)
			return cli_err("a nexthop takes via, dev and lladdr "
				       "only; %s",
				       ROUTE_HELP);
		if (r->npaths == XNF_NHG_PATHS)
			return cli_err("more than %d next hops; xnf's multipath "
				       "groups hold %d",
				       XNF_NHG_PATHS, XNF_NHG_PATHS);
		sub[0] = argv[0];
		memcpy(sub + 1, argv + i + 1, n * sizeof(*sub));
		if (route_parse(n + 1, sub, &one, ifname))
			return -1;
		if (one.rt.type != XNF_RT_UNICAST)
			return cli_err("a nexthop is 'via ADDR [dev DEV [lladdr "
				       "MAC]]' or 'dev DEV lladdr MAC', not %s",
				       route_type_name(one.rt.type));
		for (n = 0; n < (int)r->npaths; n++)
			if (!memcmp(&r->paths[n], &one.rt, sizeof(one.rt)))
				return cli_err("next hop %d is next hop %d again; "
					       "give each next hop once",
					       r->npaths + 1, n + 1);
		r->paths[r->npaths++] = one.rt;
	}
	return 0;
}

static int route_parse_any(int argc, char **argv, struct route_req *r,
			   char *ifname)
{
	if (argc < 2 || strcmp(argv[1], "nexthop"))
		return route_parse(argc, argv, r, ifname);
	memset(r, 0, sizeof(*r));
	if (route_prefix(argv[0], r))
		return -1;
	return route_parse_multipath(argc, argv, r);
}

static int route_write(struct route_req *r, bool replace)
{
	struct xnf_conf *c;
	char err[512];
	int ret;

	c = cli_candidate();
	if (!c)
		return -1;
	ret = r->npaths ?
		      xnf_conf_route_add_multipath(c, r->family, r->addr,
						   r->plen, r->paths, r->npaths,
						   replace, err, sizeof(err)) :
		      xnf_conf_route_add(c, r->family, r->addr, r->plen, &r->rt,
					 replace, err, sizeof(err));
	if (ret == -EEXIST)
		return cli_err("%s; use 'xnf route replace %s ...' to change it",
			       err, r->prefix);
	if (ret == -EBUSY)
		return cli_err("%s ('xnf route sync flush')", err);
	return ret ? cli_err("%s", err) : 0;
}

static int do_route_add(int argc, char **argv)
{
	char ifname[IF_NAMESIZE];
	struct route_req r;

	return route_parse_any(argc, argv, &r, ifname) ?: route_write(&r, false);
}

static int do_route_replace(int argc, char **argv)
{
	char ifname[IF_NAMESIZE];
	struct route_req r;

	return route_parse_any(argc, argv, &r, ifname) ?: route_write(&r, true);
}

static int do_route_del(int argc, char **argv)
{
	struct route_req r = {};
	struct xnf_conf *c;
	char err[512];
	int ret;

	if (argc < 1)
		return cli_err("missing PREFIX: xnf route del PREFIX");
	if (route_prefix(argv[0], &r))
		return -1;
	if (argc > 1)
		return cli_err("'xnf route del' takes only the PREFIX, not '%s'",
			       argv[1]);
	c = cli_candidate();
	if (!c)
		return -1;
	ret = xnf_conf_route_del(c, r.family, r.addr, r.plen, err, sizeof(err));
	if (ret == -ENOENT)
		return cli_err("%s; 'xnf route show' lists the routes", err);
	if (ret == -EBUSY)
		return cli_err("%s ('xnf route sync flush')", err);
	return ret ? cli_err("%s", err) : 0;
}

static int do_route_flush(int argc, char **argv)
{
	struct xnf_conf *c;
	char err[512];

	if (argc > 0)
		return cli_err("'xnf route flush' takes no arguments, not '%s'",
			       argv[0]);
	c = cli_candidate();
	if (!c)
		return -1;
	return xnf_conf_route_flush(c, err, sizeof(err)) ? cli_err("%s", err) : 0;
}

const char *cli_nexthop_text(const struct xnf_route *rt, char *buf, size_t len)
{
	char gw[INET6_ADDRSTRLEN], dev[CLI_DEV_WORD], mac[18];

	snprintf(buf, len, "%s%s%sdev %s lladdr %s", rt->gw_family ? "via " : "",
		 rt->gw_family ? fmt_addr(rt->gw_family, rt->gw, gw, sizeof(gw)) :
				 "",
		 rt->gw_family ? " " : "", fmt_ifword(rt->ifindex, dev),
		 fmt_mac(rt->dmac, mac, sizeof(mac)));
	return buf;
}

const char *cli_route_text(const struct xnf_route_entry *e, char *buf, size_t len)
{
	char dst[INET6_ADDRSTRLEN + 5], hop[128];
	const struct xnf_route *rt = &e->rt;

	fmt_prefix(e->family, e->addr, e->plen, dst, sizeof(dst));
	if (rt->type != XNF_RT_UNICAST)
		snprintf(buf, len, "%s %s", dst, route_type_name(rt->type));
	else
		snprintf(buf, len, "%s %s", dst,
			 cli_nexthop_text(rt, hop, sizeof(hop)));
	return buf;
}

/* One next hop: " [via GW] dev DEV lladdr MAC src_lladdr MAC", in JSON
 * every member, null where it has none; as text too with @t PRINT_ANY. */
static void route_print_hop(const struct xnf_route *rt, enum print_type t)
{
	char gw[INET6_ADDRSTRLEN], dev[IF_NAMESIZE], mac[18], smac[18];

	if (rt->gw_family)
		print_string(t, "via", " via %s",
			     fmt_addr(rt->gw_family, rt->gw, gw, sizeof(gw)));
	else
		print_null(PRINT_JSON, "via", NULL);
	print_string(t, "dev", " dev %s", fmt_ifname(rt->ifindex, dev));
	print_uint(PRINT_JSON, "ifindex", NULL, rt->ifindex);
	print_string(t, "lladdr", " lladdr %s",
		     fmt_mac(rt->dmac, mac, sizeof(mac)));
	print_string(t, "src_lladdr", " src_lladdr %s",
		     fmt_mac(rt->smac, smac, sizeof(smac)));
	/* Packets pass to the kernel, which resolves it (neighbours are
	 * followed by xnf route sync and xnf neigh follow). */
	if (rt->state != XNF_NH_VALID && (t & PRINT_FP))
		print_text(" noneigh");
}

/* A multipath route's group: " nexthop ... nexthop ...", in JSON
 * "group" and "nexthops" [{...}, ...] with each one's share of the
 * buckets; in JSON only with @t PRINT_JSON (route get of a flow prints
 * its one next hop). Returns the route's MTU, which every next hop
 * carries. */
static __u32 route_print_group(struct xnf_dp *dp, __u32 gid, enum print_type t)
{
	struct xnf_nhgroup g;
	struct xnf_nexthop nh;
	struct xnf_route rt;
	__u32 i, b, share, mtu = 0;

	print_uint(PRINT_JSON, "group", NULL, gid);
	open_json_array("nexthops");
	if (xnf_nhg_lookup(dp, gid, &g)) {
		if (t & PRINT_FP)
			print_text(" nexthop group gone");
		close_json_array();
		return 0;
	}
	for (i = 0; i < g.n && i < XNF_NHG_PATHS; i++) {
		open_json_object(NULL);
		if (t & PRINT_FP)
			print_text(" nexthop");
		print_uint(PRINT_JSON, "id", NULL, g.nh[i]);
		if (xnf_nh_lookup(dp, g.nh[i], &nh)) {
			if (t & PRINT_FP)
				print_text(" gone");
			close_json_object();
			continue;
		}
		xnf_nexthop_route(&nh, &rt);
		route_print_hop(&rt, t);
		mtu = mtu ?: nh.mtu;
		for (b = 0, share = 0; b < XNF_NHG_BUCKETS; b++)
			share += g.bucket[b] == g.nh[i];
		print_uint(t, "buckets", " buckets %u", share);
		print_bool(PRINT_JSON, "neighbour", NULL,
			   nh.state == XNF_NH_VALID);
		close_json_object();
	}
	close_json_array();
	return mtu;
}

/* A host entry of the route sync: a host of a connected subnet whose MAC
 * the kernel knows, forwarded in XDP through a next hop that is itself. */
static bool route_is_host(const struct xnf_route_entry *e)
{
	__u32 full = e->family == XNF_AF_INET ? 32 : 128;

	return e->rt.origin == XNF_ORIGIN_SYNC && e->rt.type == XNF_RT_UNICAST &&
	       e->plen == full && e->rt.gw_family == (__u32)e->family &&
	       !memcmp(e->rt.gw, e->addr, full / 8);
}

/* Where l3fwd sends the packets a route matches: "xdp" (forwarded there),
 * "kernel" (passed: the kernel forwards, resolves or answers them) or
 * "drop". A multipath route is "xdp": a member without its neighbour
 * passes its share of the flows. */
static const char *route_path(const struct xnf_route *rt)
{
	switch (rt->type) {
	case XNF_RT_UNICAST:
		return rt->state == XNF_NH_VALID ? "xdp" : "kernel";
	case XNF_RT_MULTIPATH:
		return "xdp";
	case XNF_RT_BLACKHOLE:
		return "drop";
	default:
		return "kernel";
	}
}

/* The flow of `route get ADDR from ADDR ...`, and the member of a
 * multipath group l3fwd sends it to. */
struct route_flow {
	bool given; /* from ADDR was given: the flow is complete */
	struct xnf_flow f;
	bool picked; /* of a multipath route: hop, nh, bucket */
	struct xnf_route hop;
	__u32 nh, bucket;
};

/* " from SRC proto P [sport N dport N]", and in JSON "flow": the keys,
 * the hash, and the bucket and next hop of a multipath route (else null);
 * null without a flow. */
static void route_print_flow(const struct route_flow *fl)
{
	char addr[INET6_ADDRSTRLEN], proto[32];

	if (!fl || !fl->given) {
		print_null(PRINT_JSON, "flow", NULL);
		return;
	}
	open_json_object("flow");
	print_string(PRINT_ANY, "from", " from %s",
		     fmt_addr(fl->f.family, fl->f.src, addr, sizeof(addr)));
	print_string(PRINT_ANY, "proto", " proto %s",
		     fmt_proto(fl->f.proto, proto, sizeof(proto)));
	if (fl->f.ports) {
		print_uint(PRINT_ANY, "sport", " sport %llu", fl->f.sport);
		print_uint(PRINT_ANY, "dport", " dport %llu", fl->f.dport);
	} else {
		print_null(PRINT_JSON, "sport", NULL);
		print_null(PRINT_JSON, "dport", NULL);
	}
	print_uint(PRINT_JSON, "hash", NULL, xnf_flow_hash(&fl->f));
	if (fl->picked) {
		print_uint(PRINT_JSON, "bucket", NULL, fl->bucket);
		print_uint(PRINT_JSON, "nexthop", NULL, fl->nh);
	} else {
		print_null(PRINT_JSON, "bucket", NULL);
		print_null(PRINT_JSON, "nexthop", NULL);
	}
	close_json_object();
}

/* A route: the document "xnf/route/1" with @doc (route get, with its flow
 * @fl), else an element of the "routes" of "xnf/routes/1". A multipath
 * route whose member for the flow was picked shows that member as a
 * unicast route does, and the whole group in JSON only. */
static void route_print(struct xnf_dp *dp, const struct xnf_route_entry *e,
			bool doc, const struct route_flow *fl)
{
	char dst[INET6_ADDRSTRLEN + 5];
	const struct xnf_route *rt = &e->rt;
	bool unicast = rt->type == XNF_RT_UNICAST;
	bool multipath = rt->type == XNF_RT_MULTIPATH;
	bool picked = multipath && fl && fl->picked;
	const char *why = route_why_name(rt->why); /* kernel routes only */
	__u32 mtu = rt->mtu;

	fmt_prefix(e->family, e->addr, e->plen, dst, sizeof(dst));
	/* "blackhole 203.0.113.0/24", "PREFIX [via GW] dev DEV lladdr MAC
	 * src_lladdr MAC", or "PREFIX nexthop ... nexthop ..."; in JSON
	 * every member, null where it has none. */
	if (doc)
		open_json_doc("xnf/route/1");
	else
		open_json_object(NULL);
	if (!unicast && !multipath)
		print_string(PRINT_FP, NULL, "%s ", route_type_name(rt->type));
	print_string(PRINT_ANY, "dst", "%s", dst);
	print_string(PRINT_JSON, "type", NULL, route_type_name(rt->type));
	if (doc)
		route_print_flow(fl);
	if (unicast || picked) {
		if (picked)
			rt = &fl->hop;
		route_print_hop(rt, PRINT_ANY);
		print_bool(PRINT_JSON, "neighbour", NULL,
			   rt->state == XNF_NH_VALID);
		rt = &e->rt;
	} else {
		print_null(PRINT_JSON, "via", NULL);
		print_null(PRINT_JSON, "dev", NULL);
		print_null(PRINT_JSON, "ifindex", NULL);
		print_null(PRINT_JSON, "lladdr", NULL);
		print_null(PRINT_JSON, "src_lladdr", NULL);
		print_null(PRINT_JSON, "neighbour", NULL);
	}
	if (picked)
		print_text(" nexthop %u bucket %u", fl->nh, fl->bucket);
	if (multipath) {
		mtu = route_print_group(dp, e->nh,
					picked ? PRINT_JSON : PRINT_ANY);
	} else {
		print_null(PRINT_JSON, "group", NULL);
		print_null(PRINT_JSON, "nexthops", NULL);
	}
	/* The route's MTU (the kernel's, mirrored by the sync): larger
	 * packets pass (frag_needed), and the kernel answers them. */
	if (mtu)
		print_uint(PRINT_ANY, "mtu", " mtu %llu", mtu);
	else
		print_null(PRINT_JSON, "mtu", NULL);
	/* Why the sync left a kernel route to the kernel. */
	if (why)
		print_string(PRINT_ANY, "reason", " reason %s", why);
	else
		print_null(PRINT_JSON, "reason", NULL);
	/* As ip route: who wrote it; by hand is the default, left out. */
	if (rt->origin != XNF_ORIGIN_STATIC)
		print_string(PRINT_FP, NULL, " proto %s",
			     route_origin_name(rt->origin));
	print_string(PRINT_JSON, "origin", NULL, route_origin_name(rt->origin));
	if (route_is_host(e))
		print_string(PRINT_FP, NULL, " %s", "host");
	print_bool(PRINT_JSON, "host", NULL, route_is_host(e));
	/* route get: which path the address takes, XDP's or the kernel's. */
	if (doc)
		print_string(PRINT_FP, NULL, " path %s",
			     route_path(picked ? &fl->hop : rt));
	print_string(PRINT_JSON, "path", NULL,
		     route_path(picked ? &fl->hop : rt));
	close_json_object();
	print_nl();
}

static int do_route_show(int argc, char **argv)
{
	struct xnf_route_entry *ents = NULL;
	struct xnf_dp *dp;
	__u32 n, i;
	int err;

	if (argc > 0)
		return cli_err("'xnf route show' takes no arguments, not '%s'",
			       argv[0]);
	dp = cli_dp_read();
	if (!dp)
		return -1;
	err = xnf_route_list(dp, &ents, &n);
	if (err) {
		return cli_err("cannot read the route tables (%s, %s): %s",
			       XNF_MAP_STR(XNF_MAP_RT4),
			       XNF_MAP_STR(XNF_MAP_RT6), strerror(-err));
	}
	if (n)
		qsort(ents, n, sizeof(*ents), xnf_route_entry_cmp);
	open_json_doc("xnf/routes/1");
	open_json_array("routes");
	for (i = 0; i < n; i++)
		route_print(dp, &ents[i], false, NULL);
	close_json_array();
	close_json_object();
	free(ents);
	return 0;
}

enum { GET_FROM, GET_PROTO, GET_IPPROTO, GET_SPORT, GET_DPORT };
static const char *const get_kws[] = {
	[GET_FROM] = "from",   [GET_PROTO] = "proto", [GET_IPPROTO] = "ipproto",
	[GET_SPORT] = "sport", [GET_DPORT] = "dport", NULL,
};

static bool proto_has_ports(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
	       proto == IPPROTO_SCTP;
}

/* The flow keys after `route get ADDR` (as `ip route get` takes them;
 * ipproto is proto) into @fl. A flow is complete or absent: the hash
 * covers its source, protocol and, for TCP, UDP and SCTP, its ports, and
 * a guess for what is missing would name the next hop of another flow. */
static int route_get_flow(int argc, char **argv, const struct route_req *r,
			  struct route_flow *fl)
{
	const unsigned int ports = 1u << GET_SPORT | 1u << GET_DPORT;
	unsigned int seen = 0;
	char proto[32], dst[INET6_ADDRSTRLEN];
	__u32 port;
	int kw, family;

	fl->f.family = r->family;
	memcpy(fl->f.dst, r->addr, sizeof(fl->f.dst));
	for (; argc > 0; argc -= 2, argv += 2) {
		kw = cli_keyword(argv[0], get_kws, "route get", ROUTE_HELP);
		if (kw < 0)
			return -1;
		kw = kw == GET_IPPROTO ? GET_PROTO : kw;
		if (seen & 1u << kw)
			return cli_err("'%s' given twice; %s", get_kws[kw],
				       ROUTE_HELP);
		seen |= 1u << kw;
		if (argc < 2)
			return cli_err("'%s' needs a value; %s", get_kws[kw],
				       ROUTE_HELP);
		switch (kw) {
		case GET_FROM:
			if (parse_addr(argv[1], &family, fl->f.src))
				return -1;
			if (family != r->family)
				return cli_err("from %s is %s but %s is %s: the "
					       "packets of a flow are of one "
					       "family",
					       argv[1], family_name(family),
					       fmt_addr(r->family, r->addr, dst,
							sizeof(dst)),
					       family_name(r->family));
			break;
		case GET_PROTO:
			if (parse_proto(argv[1], &fl->f.proto))
				return -1;
			break;
		default:
			if (parse_u32(argv[1], get_kws[kw], &port))
				return -1;
			if (port > 65535)
				return cli_err("%s %s: a port is 0 to 65535",
					       get_kws[kw], argv[1]);
			if (kw == GET_SPORT)
				fl->f.sport = port;
			else
				fl->f.dport = port;
		}
	}
	if (!seen)
		return 0;
	if (!(seen & 1u << GET_FROM))
		return cli_err("the next hop of a flow depends on its source: "
			       "add 'from ADDR'");
	if (!(seen & 1u << GET_PROTO))
		return cli_err("the next hop of a flow depends on its protocol: "
			       "add 'proto PROTO' (tcp, udp, icmp, ...)");
	fmt_proto(fl->f.proto, proto, sizeof(proto));
	fl->f.ports = proto_has_ports(fl->f.proto);
	if (fl->f.ports && (seen & ports) != ports)
		return cli_err("the next hop of a %s flow depends on its ports: "
			       "add 'sport N dport N'",
			       proto);
	if (!fl->f.ports && (seen & ports))
		return cli_err("l3fwd reads no ports of %s packets: leave sport "
			       "and dport out",
			       proto);
	fl->given = true;
	return 0;
}

/* The member of the multipath route @e that l3fwd sends the flow @fl to. */
static int route_get_pick(struct xnf_dp *dp, const struct xnf_route_entry *e,
			  struct route_flow *fl)
{
	struct xnf_nexthop nh;
	int err;

	if (!fl->given || e->rt.type != XNF_RT_MULTIPATH)
		return 0;
	err = xnf_nhg_pick(dp, e->nh, &fl->f, &fl->nh, &fl->bucket) ?:
		      xnf_nh_lookup(dp, fl->nh, &nh);
	/* Gone meanwhile (readers take no lock): the group is shown as it
	 * is, which says so. */
	if (err == -ENOENT)
		return 0;
	if (err)
		return cli_err("cannot read the next hops of %s (%s, %s): %s",
			       fl->f.family == XNF_AF_INET ? "an IPv4 route" :
							     "an IPv6 route",
			       XNF_MAP_STR(XNF_MAP_NHG),
			       XNF_MAP_STR(XNF_MAP_NH), strerror(-err));
	xnf_nexthop_route(&nh, &fl->hop);
	fl->picked = true;
	return 0;
}

static int do_route_get(int argc, char **argv)
{
	struct xnf_route_entry e;
	struct route_req r = {};
	struct route_flow fl = {};
	struct xnf_dp *dp;
	int err;

	if (argc < 1)
		return cli_err("usage: xnf route get ADDR [from ADDR] [proto "
			       "PROTO] [sport N] [dport N]");
	if (route_prefix(argv[0], &r))
		return -1;
	if (r.plen != (r.family == XNF_AF_INET ? 32u : 128u))
		return cli_err("'xnf route get' takes an address, not the prefix %s",
			       argv[0]);
	if (route_get_flow(argc - 1, argv + 1, &r, &fl))
		return -1;
	dp = cli_dp_read();
	if (!dp)
		return -1;
	err = xnf_route_lookup(dp, r.family, r.addr, &e);
	if (err == -ENOENT)
		return cli_err("no route to %s in xnf's table (l3fwd passes it to the kernel: reason no_route)",
			       argv[0]);
	if (err)
		return cli_err("cannot look %s up in %s: %s", argv[0],
			       r.family == XNF_AF_INET ?
				       XNF_MAP_STR(XNF_MAP_RT4) :
				       XNF_MAP_STR(XNF_MAP_RT6),
			       strerror(-err));
	if (route_get_pick(dp, &e, &fl))
		return -1;
	route_print(dp, &e, true, &fl);
	return 0;
}

static int do_route_help(int argc, char **argv)
{
	printf("Usage: xnf route { add | replace } PREFIX { NEXTHOP | nexthop NH nexthop NH ... }\n"
	       "       xnf route del PREFIX\n"
	       "       xnf route flush\n"
	       "       xnf route [ show ]\n"
	       "       xnf route get ADDR [ from ADDR proto PROTO [ sport N dport N ] ]\n"
	       "       xnf route sync [ table ID|NAME ] [ proto LIST ] [ window MS ]\n"
	       "                      [ resync SECONDS ] [ rcvbuf BYTES ]\n"
	       "       xnf route sync flush\n"
	       "       xnf route help\n"
	       "PREFIX  := ADDR[/LEN]     IPv4 or IPv6, host bits clear\n"
	       "NEXTHOP := { NH | local | blackhole | unreachable | kernel }\n"
	       "NH      := { via ADDR [ dev DEV [ lladdr MAC ] ] | dev DEV lladdr MAC }\n"
	       "PROTO   := { tcp | udp | sctp | icmp | icmpv6 | NUMBER }\n"
	       "  nexthop NH   one next hop of a multipath route (2 to 16): a flow\n"
	       "               stays on one, chosen by a symmetric hash of its 5-tuple\n"
	       "  via ADDR     the next hop's MAC, and its device when dev is not given,\n"
	       "               are read from the kernel's neighbour table, once, now;\n"
	       "               with lladdr (as xnf save writes it) the MAC is given\n"
	       "  lladdr MAC   a static next hop: the MAC to send to on DEV\n"
	       "  local        one of the router's own addresses (xnf config key 'local')\n"
	       "  blackhole    dropped silently\n"
	       "  unreachable  handled like no route (xnf config key 'no_route')\n"
	       "  kernel       passed to the kernel, which forwards it (a connected\n"
	       "               subnet: the kernel resolves each host)\n"
	       "get prints the route packets to ADDR take (longest prefix); with the\n"
	       "  flow's source, protocol and (TCP, UDP, SCTP) ports, the next hop of\n"
	       "  a multipath route that l3fwd sends that flow to. ipproto is proto.\n"
	       "show marks routes mirrored by 'xnf route sync' with 'proto sync'.\n"
	       "add refuses a PREFIX that is in the table; replace writes it either way.\n"
	       "flush deletes every route added by hand; synced routes stay.\n"
	       "sync mirrors the kernel's routes: 'xnf route sync help'.\n"
	       "The egress DEV becomes an xnf port. Each change is atomic per route.\n");
	return 0;
}

int do_route(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", do_route_show },
		{ "list", do_route_show },
		{ "get", do_route_get },
		{ "add", do_route_add, CLI_EDIT },
		{ "replace", do_route_replace, CLI_EDIT },
		{ "del", do_route_del, CLI_EDIT },
		{ "flush", do_route_flush, CLI_EDIT | CLI_FULL },
		{ "sync", do_route_sync },
		{ "help", do_route_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cmds, "route", argc, argv);
}
