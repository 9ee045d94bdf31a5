// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * conf.c - the whole configuration as one value: read from a running
 * instance, edited in memory, and made the running one by applying only
 * the difference (include/conf.h).
 *
 * Every part of a configuration is an array kept sorted by its key, so an
 * edit finds its element by binary search, a file written by `xnf save`
 * (which prints in that order) is read in O(n log n), and an apply walks
 * the running and the wanted arrays side by side.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>

#include "conf.h"
#include "placement.h"
#include "priv.h"

typedef int (*cmp_fn)(const void *, const void *);

/* Index of the element of @base[@n] equal to @key by @cmp, or where it
 * would go; *@found says which. */
static __u32 sorted_find(const void *base, __u32 n, size_t size,
			 const void *key, cmp_fn cmp, bool *found)
{
	__u32 lo = 0, hi = n, mid;
	int r;

	*found = false;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = cmp((const char *)base + (size_t)mid * size, key);
		if (!r) {
			*found = true;
			return mid;
		}
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int sorted_insert(void **base, __u32 *n, size_t size, __u32 at,
			 const void *elem)
{
	char *p = realloc(*base, (size_t)(*n + 1) * size);

	if (!p)
		return -ENOMEM;
	memmove(p + (size_t)(at + 1) * size, p + (size_t)at * size,
		(size_t)(*n - at) * size);
	memcpy(p + (size_t)at * size, elem, size);
	*base = p;
	(*n)++;
	return 0;
}

static void sorted_remove(void *base, __u32 *n, size_t size, __u32 at)
{
	char *p = base;

	memmove(p + (size_t)at * size, p + (size_t)(at + 1) * size,
		(size_t)(*n - at - 1) * size);
	(*n)--;
}

static int att_cmp(const void *a, const void *b)
{
	return strcmp(((const struct xnf_conf_attach *)a)->dev,
		      ((const struct xnf_conf_attach *)b)->dev);
}

int xnf_route_entry_cmp(const void *a, const void *b)
{
	const struct xnf_route_entry *x = a, *y = b;

	if (x->family != y->family)
		return x->family == XNF_AF_INET ? -1 : 1;
	if (x->plen != y->plen)
		return x->plen > y->plen ? -1 : 1;
	return memcmp(x->addr, y->addr, 16);
}

static int route_cmp(const void *a, const void *b)
{
	return xnf_route_entry_cmp(&((const struct xnf_conf_route *)a)->e,
				   &((const struct xnf_conf_route *)b)->e);
}

int xnf_conf_path_cmp(const void *a, const void *b)
{
	const struct xnf_route *x = a, *y = b;
	int r;

	if (x->gw_family != y->gw_family)
		return x->gw_family < y->gw_family ? -1 : 1;
	r = memcmp(x->gw, y->gw, sizeof(x->gw));
	if (!r && x->ifindex != y->ifindex)
		r = x->ifindex < y->ifindex ? -1 : 1;
	if (!r)
		r = memcmp(x->dmac, y->dmac, 6);
	if (!r)
		r = memcmp(x->smac, y->smac, 6);
	return r;
}

/* Same type and next hop, or the same set of next hops. */
static bool route_same(const struct xnf_conf_route *a,
		       const struct xnf_conf_route *b)
{
	if (memcmp(&a->e.rt, &b->e.rt, sizeof(a->e.rt)) || a->npaths != b->npaths)
		return false;
	return !a->npaths ||
	       !memcmp(a->paths, b->paths, a->npaths * sizeof(*a->paths));
}

static void routes_free(struct xnf_conf_route *routes, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++)
		free(routes[i].paths);
	free(routes);
}

static int fdb_cmp(const void *a, const void *b)
{
	return memcmp(((const struct xnf_fdb_ent *)a)->key.mac,
		      ((const struct xnf_fdb_ent *)b)->key.mac, 6);
}

static int xc_cmp(const void *a, const void *b)
{
	__u32 x = ((const struct xnf_xconnect_ent *)a)->in;
	__u32 y = ((const struct xnf_xconnect_ent *)b)->in;

	return x < y ? -1 : x > y;
}

static const char *family_str(int family)
{
	return family == XNF_AF_INET ? "IPv4" : "IPv6";
}

int xnf_conf_new(struct xnf_conf **out)
{
	struct xnf_conf *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fw = xnf_fw_set_new();
	if (!c->fw) {
		free(c);
		return -ENOMEM;
	}
	xnf_cfg_default(&c->cfg);
	*out = c;
	return 0;
}

void xnf_conf_free(struct xnf_conf *c)
{
	if (!c)
		return;
	xnf_fw_set_free(c->fw);
	free(c->att);
	routes_free(c->routes, c->nroutes);
	free(c->fdb);
	free(c->xc);
	free(c);
}

/* The placement request recorded with @dev's attachment, if any. */
static void read_placement(const struct xnf_dev_status *st,
			   struct xnf_conf_attach *a)
{
	struct xnf_place_state *pst = calloc(1, sizeof(*pst));

	if (!pst || xnf_place_load(st->pins, pst)) {
		free(pst);
		return;
	}
	a->placed = true;
	a->place.queues = pst->info.req_queues;
	a->place.have_cores = pst->info.flags & XNF_PLACE_REQ_CORES;
	if (a->place.have_cores)
		memcpy(a->place.cores.w, pst->info.req_cores,
		       sizeof(a->place.cores.w));
	free(pst);
}

static int read_attachments(struct xnf_dp *dp, struct xnf_conf *c, char *err,
			    size_t errlen)
{
	struct xnf_dev_status st;
	__u32 netns = xnf_netns_inode();
	char(*names)[16] = NULL;
	int n, i, ret = 0;

	n = xnf_dev_list(dp, NULL, 0);
	if (n > 0) {
		names = calloc(n, sizeof(*names));
		if (!names)
			return xnf_errf(err, errlen, -ENOMEM, "out of memory");
		n = xnf_dev_list(dp, names, n);
	}
	if (n < 0) {
		ret = xnf_errf(err, errlen, n, "cannot list %s/dev: %s",
			       dp->root, strerror(-n));
		goto out;
	}
	for (i = 0; i < n && !ret; i++) {
		struct xnf_conf_attach a = {};
		bool found;
		__u32 at;

		ret = xnf_dev_status(dp, names[i], &st);
		/* Pins of a killed attach or detach: not attached. */
		if (ret == -ENOENT) {
			ret = 0;
			continue;
		}
		if (ret) {
			xnf_errf(err, errlen, ret,
				 "cannot read what runs on %s: %s", names[i],
				 strerror(-ret));
			break;
		}
		/* Another namespace's: not this configuration's business. */
		if (st.info.netns != netns)
			continue;
		snprintf(a.dev, sizeof(a.dev), "%s", names[i]);
		a.xdp_flags = st.info.xdp_flags;
		a.chain.len = st.info.chain_len;
		memcpy(a.chain.nf, st.info.nf, sizeof(a.chain.nf));
		a.chain.fused = st.info.fused;
		a.chain.l3_fib = st.info.l3_fib;
		read_placement(&st, &a);
		at = sorted_find(c->att, c->natt, sizeof(a), &a, att_cmp, &found);
		ret = sorted_insert((void **)&c->att, &c->natt, sizeof(a), at,
				    &a);
		if (ret)
			xnf_errf(err, errlen, ret, "out of memory");
	}
out:
	free(names);
	return ret;
}

/* The next hops of the multipath route @r by value, sorted. */
static int read_paths(struct xnf_dp *dp, struct xnf_conf_route *r, char *err,
		      size_t errlen)
{
	struct xnf_nhgroup g;
	struct xnf_nexthop nh;
	__u32 i;
	int ret;

	ret = xnf_nhg_lookup(dp, r->e.nh, &g);
	if (!ret && (g.n < 1 || g.n > XNF_NHG_PATHS))
		ret = -EUCLEAN;
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot read nexthop group %u of a multipath route from %s: %s; 'xnf route show' shows what runs",
				r->e.nh, XNF_MAP_STR(XNF_MAP_NHG),
				strerror(-ret));
	r->paths = calloc(g.n, sizeof(*r->paths));
	if (!r->paths)
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	for (i = 0; i < g.n; i++) {
		ret = xnf_nh_lookup(dp, g.nh[i], &nh);
		if (ret)
			return xnf_errf(err, errlen, ret,
					"cannot read nexthop %u of group %u from %s: %s",
					g.nh[i], r->e.nh,
					XNF_MAP_STR(XNF_MAP_NH), strerror(-ret));
		xnf_nexthop_route(&nh, &r->paths[i]);
		r->paths[i].state = XNF_NH_VALID;
		r->npaths++;
	}
	qsort(r->paths, r->npaths, sizeof(*r->paths), xnf_conf_path_cmp);
	return 0;
}

/* The routes, by value. */
static int read_routes(struct xnf_dp *dp, struct xnf_conf *c, char *err,
		       size_t errlen)
{
	struct xnf_route_entry *ents = NULL;
	__u32 i, n = 0;
	int ret;

	ret = xnf_route_list(dp, &ents, &n);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot read the routes (%s, %s): %s",
				XNF_MAP_STR(XNF_MAP_RT4),
				XNF_MAP_STR(XNF_MAP_RT6), strerror(-ret));
	c->routes = calloc(n + 1, sizeof(*c->routes));
	if (!c->routes) {
		ret = xnf_errf(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	/* Routes mirrored by xnf route sync are the kernel's, not this
	 * configuration's. */
	for (i = 0; i < n && !ret; i++) {
		struct xnf_conf_route *r = &c->routes[c->nroutes];

		if (ents[i].rt.origin != XNF_ORIGIN_STATIC)
			continue;
		r->e = ents[i];
		/* Whether the next hop's neighbour is known now is the
		 * neighbour table's (xnf neigh follow), not the
		 * configuration's, which holds the MAC to start with. */
		r->e.rt.state = XNF_NH_VALID;
		c->nroutes++;
		if (ents[i].rt.type == XNF_RT_MULTIPATH)
			ret = read_paths(dp, r, err, errlen);
		r->e.nh = 0;
	}
	if (!ret && c->nroutes)
		qsort(c->routes, c->nroutes, sizeof(*c->routes), route_cmp);
out:
	free(ents);
	return ret;
}

int xnf_conf_read(struct xnf_dp *dp, struct xnf_conf **out, char *err,
		  size_t errlen)
{
	struct xnf_conf *c;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	ret = xnf_cfg_read(dp, &c->cfg);
	if (ret) {
		xnf_errf(err, errlen, ret, "cannot read %s: %s",
			 XNF_MAP_STR(XNF_MAP_CFG), strerror(-ret));
		goto fail;
	}
	ret = xnf_fw_read(dp, &c->fw);
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "cannot read the firewall rules (%s, %s): %s",
			 XNF_MAP_STR(XNF_MAP_FW_RULES),
			 XNF_MAP_STR(XNF_MAP_FW_HDR), strerror(-ret));
		goto fail;
	}
	ret = read_attachments(dp, c, err, errlen);
	if (ret)
		goto fail;
	ret = read_routes(dp, c, err, errlen);
	if (ret)
		goto fail;
	ret = xnf_fdb_list(dp, &c->fdb, &c->nfdb);
	if (!ret)
		ret = xnf_xconnect_list(dp, &c->xc, &c->nxc);
	if (ret) {
		xnf_errf(err, errlen, ret, "cannot read %s or %s: %s",
			 XNF_MAP_STR(XNF_MAP_FDB),
			 XNF_MAP_STR(XNF_MAP_XCONNECT), strerror(-ret));
		goto fail;
	}
	if (c->nfdb)
		qsort(c->fdb, c->nfdb, sizeof(*c->fdb), fdb_cmp);
	if (c->nxc)
		qsort(c->xc, c->nxc, sizeof(*c->xc), xc_cmp);
	*out = c;
	return 0;
fail:
	xnf_conf_free(c);
	return ret;
}

/* ---- edits ---- */

static struct xnf_conf_attach *att_find(const struct xnf_conf *c, const char *dev)
{
	struct xnf_conf_attach key = {};
	bool found;
	__u32 at;

	snprintf(key.dev, sizeof(key.dev), "%s", dev);
	at = sorted_find(c->att, c->natt, sizeof(key), &key, att_cmp, &found);
	return found ? &c->att[at] : NULL;
}

int xnf_conf_attach(struct xnf_conf *c, const struct xnf_conf_attach *a,
		    char *err, size_t errlen)
{
	bool found;
	__u32 at;

	at = sorted_find(c->att, c->natt, sizeof(*a), a, att_cmp, &found);
	if (found)
		return xnf_errf(err, errlen, -EEXIST,
				"%s is attached already; change its chain with "
				"'chain set %s NF[,NF...]', or detach it first",
				a->dev, a->dev);
	if (sorted_insert((void **)&c->att, &c->natt, sizeof(*a), at, a))
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	return 0;
}

static int not_attached(const char *dev, char *err, size_t errlen)
{
	return xnf_errf(err, errlen, -ENOENT,
			"xnf is not attached to %s; attach it first with "
			"'attach %s chain NF[,NF...]'",
			dev, dev);
}

int xnf_conf_detach(struct xnf_conf *c, const char *dev, char *err, size_t errlen)
{
	struct xnf_conf_attach *a = att_find(c, dev);

	if (!a)
		return not_attached(dev, err, errlen);
	sorted_remove(c->att, &c->natt, sizeof(*a), a - c->att);
	return 0;
}

int xnf_conf_chain_set(struct xnf_conf *c, const char *dev,
		       const struct xnf_chain_change *chg, char *err,
		       size_t errlen)
{
	struct xnf_conf_attach *a = att_find(c, dev);
	bool fused;

	if (!a)
		return not_attached(dev, err, errlen);
	fused = chg->fused == XNF_KEEP ? a->chain.fused : chg->fused == XNF_ON;
	if (fused && chg->len > XNF_FUSED_MAX)
		return xnf_errf(err, errlen, -EINVAL,
				"a fused chain holds at most %d NFs",
				XNF_FUSED_MAX);
	a->chain.len = chg->len;
	memcpy(a->chain.nf, chg->nf, sizeof(a->chain.nf));
	a->chain.fused = fused;
	if (chg->l3_fib != XNF_KEEP)
		a->chain.l3_fib = chg->l3_fib == XNF_ON;
	return 0;
}

/* Puts @r in @c, which then owns r->paths (freed when this fails). */
static int route_put(struct xnf_conf *c, struct xnf_conf_route *r, bool replace,
		     char *err, size_t errlen)
{
	bool found;
	__u32 at;
	int ret = 0;

	at = sorted_find(c->routes, c->nroutes, sizeof(*r), r, route_cmp, &found);
	if (found && !replace) {
		ret = xnf_errf(err, errlen, -EEXIST,
			       "a route to this %s prefix exists; use 'route "
			       "replace' to change it",
			       family_str(r->e.family));
	} else if (found) {
		free(c->routes[at].paths);
		c->routes[at] = *r;
	} else if (sorted_insert((void **)&c->routes, &c->nroutes, sizeof(*r),
				 at, r)) {
		ret = xnf_errf(err, errlen, -ENOMEM, "out of memory");
	}
	if (ret)
		free(r->paths);
	return ret;
}

int xnf_conf_route_add(struct xnf_conf *c, int family, const void *addr,
		       __u32 plen, const struct xnf_route *rt, bool replace,
		       char *err, size_t errlen)
{
	struct xnf_conf_route r = { .e = { .family = family, .plen = plen } };

	if (rt->type == XNF_RT_MULTIPATH)
		return xnf_errf(err, errlen, -EINVAL,
				"a multipath route is given by its next hops");
	memcpy(r.e.addr, addr, family == XNF_AF_INET ? 4 : 16);
	r.e.rt = *rt;
	return route_put(c, &r, replace, err, errlen);
}

int xnf_conf_route_add_multipath(struct xnf_conf *c, int family, const void *addr,
				 __u32 plen, const struct xnf_route *paths,
				 __u32 n, bool replace, char *err, size_t errlen)
{
	struct xnf_conf_route r = { .e = { .family = family, .plen = plen } };
	__u32 i;

	if (!n || n > XNF_NHG_PATHS)
		return xnf_errf(err, errlen, -EINVAL,
				"a route has 1 to %d next hops, not %u",
				XNF_NHG_PATHS, n);
	for (i = 0; i < n; i++)
		if (paths[i].type != XNF_RT_UNICAST)
			return xnf_errf(err, errlen, -EINVAL,
					"next hop %u of a multipath route is not a unicast next hop",
					i + 1);
	if (n == 1)
		return xnf_conf_route_add(c, family, addr, plen, paths, replace,
					  err, errlen);
	memcpy(r.e.addr, addr, family == XNF_AF_INET ? 4 : 16);
	r.e.rt.type = XNF_RT_MULTIPATH;
	r.paths = malloc(n * sizeof(*paths));
	if (!r.paths)
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	memcpy(r.paths, paths, n * sizeof(*paths));
	r.npaths = n;
	qsort(r.paths, n, sizeof(*paths), xnf_conf_path_cmp);
	for (i = 1; i < n; i++)
		if (!xnf_conf_path_cmp(&r.paths[i - 1], &r.paths[i])) {
			free(r.paths);
			return xnf_errf(err, errlen, -EINVAL,
					"a next hop is given twice; give each next hop once");
		}
	return route_put(c, &r, replace, err, errlen);
}

int xnf_conf_route_del(struct xnf_conf *c, int family, const void *addr,
		       __u32 plen, char *err, size_t errlen)
{
	struct xnf_conf_route r = { .e = { .family = family, .plen = plen } };
	bool found;
	__u32 at;

	memcpy(r.e.addr, addr, family == XNF_AF_INET ? 4 : 16);
	at = sorted_find(c->routes, c->nroutes, sizeof(r), &r, route_cmp, &found);
	if (!found)
		return xnf_errf(err, errlen, -ENOENT,
				"no such %s route; 'route show' lists the routes",
				family_str(family));
	free(c->routes[at].paths);
	sorted_remove(c->routes, &c->nroutes, sizeof(r), at);
	return 0;
}

int xnf_conf_fdb_add(struct xnf_conf *c, const __u8 mac[6], __u32 ifindex,
		     bool replace, char *err, size_t errlen)
{
	struct xnf_fdb_ent e = { .e.ifindex = ifindex };
	bool found;
	__u32 at;

	memcpy(e.key.mac, mac, 6);
	at = sorted_find(c->fdb, c->nfdb, sizeof(e), &e, fdb_cmp, &found);
	if (found && !replace)
		return xnf_errf(err, errlen, -EEXIST,
				"the MAC is in the FDB; use 'fdb replace' to "
				"move it");
	if (found) {
		c->fdb[at] = e;
		return 0;
	}
	if (sorted_insert((void **)&c->fdb, &c->nfdb, sizeof(e), at, &e))
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	return 0;
}

int xnf_conf_fdb_del(struct xnf_conf *c, const __u8 mac[6], char *err,
		     size_t errlen)
{
	struct xnf_fdb_ent e = {};
	bool found;
	__u32 at;

	memcpy(e.key.mac, mac, 6);
	at = sorted_find(c->fdb, c->nfdb, sizeof(e), &e, fdb_cmp, &found);
	if (!found)
		return xnf_errf(err, errlen, -ENOENT,
				"the MAC is not in the FDB; 'fdb show' lists it");
	sorted_remove(c->fdb, &c->nfdb, sizeof(e), at);
	return 0;
}

static struct xnf_xconnect_ent *xc_find(const struct xnf_conf *c, __u32 in)
{
	struct xnf_xconnect_ent key = { .in = in };
	bool found;
	__u32 at;

	at = sorted_find(c->xc, c->nxc, sizeof(key), &key, xc_cmp, &found);
	return found ? &c->xc[at] : NULL;
}

static int xc_put(struct xnf_conf *c, __u32 in, const struct xnf_xconnect *xc)
{
	struct xnf_xconnect_ent e = { .in = in, .xc = *xc };
	bool found;
	__u32 at;

	at = sorted_find(c->xc, c->nxc, sizeof(e), &e, xc_cmp, &found);
	if (found) {
		c->xc[at] = e;
		return 0;
	}
	return sorted_insert((void **)&c->xc, &c->nxc, sizeof(e), at, &e);
}

int xnf_conf_xconnect_add(struct xnf_conf *c, __u32 if1,
			  const struct xnf_xconnect *fwd, __u32 if2,
			  const struct xnf_xconnect *rev, char *err,
			  size_t errlen)
{
	const struct xnf_xconnect_ent *e1 = xc_find(c, if1),
				      *e2 = xc_find(c, if2);

	/* Re-adding a pair changes its MACs; a third device is refused,
	 * as xnf_xconnect_add() refuses it. */
	if ((e1 && e1->xc.ifindex != if2) || (e2 && e2->xc.ifindex != if1))
		return xnf_errf(err, errlen, -EBUSY,
				"a device of the pair is cross-connected to "
				"another one; remove that pair first with "
				"'xconnect del DEV'");
	if (xc_put(c, if1, fwd) || xc_put(c, if2, rev))
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	return 0;
}

int xnf_conf_xconnect_remove(struct xnf_conf *c, __u32 ifindex, char *err,
			     size_t errlen)
{
	struct xnf_xconnect_ent *e = xc_find(c, ifindex);
	__u32 peer;

	if (!e)
		return xnf_errf(err, errlen, -ENOENT,
				"the device is in no cross-connect; 'xconnect "
				"show' lists them");
	peer = e->xc.ifindex;
	sorted_remove(c->xc, &c->nxc, sizeof(*e), e - c->xc);
	e = xc_find(c, peer);
	if (e && e->xc.ifindex == ifindex)
		sorted_remove(c->xc, &c->nxc, sizeof(*e), e - c->xc);
	return 0;
}

int xnf_conf_destroy(struct xnf_conf *c, char *err, size_t errlen)
{
	struct xnf_conf *fresh;

	if (c->natt)
		return xnf_errf(err, errlen, -EBUSY,
				"xnf is still attached to %s%s; detach first",
				c->att[0].dev, c->natt > 1 ? " and others" : "");
	if (xnf_conf_new(&fresh))
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	xnf_fw_set_free(c->fw);
	routes_free(c->routes, c->nroutes);
	free(c->fdb);
	free(c->xc);
	*c = *fresh;
	free(fresh);
	return 0;
}

/* ---- apply ---- */

static bool cfg_equal(const struct xnf_config *a, const struct xnf_config *b)
{
	return a->no_route == b->no_route && a->ttl_expired == b->ttl_expired &&
	       a->local == b->local && a->l2_miss == b->l2_miss &&
	       a->xsk_fallback == b->xsk_fallback && a->martian == b->martian &&
	       a->flow_cache == b->flow_cache;
}

static int rule_prio_cmp(const void *a, const void *b)
{
	const struct xnf_fw_rule *x = *(const struct xnf_fw_rule *const *)a;
	const struct xnf_fw_rule *y = *(const struct xnf_fw_rule *const *)b;

	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

/* The rules of @set in prio order, into a new array of *@n pointers. */
static const struct xnf_fw_rule **fw_by_prio(const struct xnf_fw_set *set,
					     __u32 *n)
{
	const struct xnf_fw_rule *rules = xnf_fw_set_rules(set), **v;
	__u32 i;

	*n = 0;
	v = calloc(xnf_fw_set_count(set) + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < XNF_FW_MAX_RULES; i++)
		if (rules[i].in_use)
			v[(*n)++] = &rules[i];
	qsort(v, *n, sizeof(*v), rule_prio_cmp);
	return v;
}

/*
 * @from edited into @to's rules in *@out, keeping the slot (so the hit
 * counter) of every rule both have; NULL in *@out when they are equal.
 */
static int fw_diff(const struct xnf_fw_set *from, const struct xnf_fw_set *to,
		   struct xnf_fw_set **out)
{
	const struct xnf_fw_rule **f = NULL, **t = NULL, *rules;
	struct xnf_fw_set *set = NULL;
	__u32 nf, nt, i = 0, j = 0, slot;
	bool same;
	int ret = -ENOMEM;

	*out = NULL;
	f = fw_by_prio(from, &nf);
	t = fw_by_prio(to, &nt);
	set = xnf_fw_set_dup(from);
	if (!f || !t || !set)
		goto out;
	same = nf == nt && xnf_fw_set_default(from) == xnf_fw_set_default(to);
	for (i = 0; same && i < nf; i++)
		same = !memcmp(f[i], t[i], sizeof(*f[i]));
	ret = 0;
	if (same)
		goto out;
	/* Every rule of @from that @to does not have, out; then in what
	 * @to has and @from had not. */
	rules = xnf_fw_set_rules(from);
	for (i = 0, j = 0; i < nf; i++) {
		while (j < nt && t[j]->prio < f[i]->prio)
			j++;
		if (j < nt && !memcmp(f[i], t[j], sizeof(*f[i])))
			continue;
		slot = f[i] - rules;
		ret = xnf_fw_set_replace(set, slot, NULL);
		if (ret)
			goto out;
	}
	for (i = 0, j = 0; j < nt; j++) {
		while (i < nf && f[i]->prio < t[j]->prio)
			i++;
		if (i < nf && !memcmp(f[i], t[j], sizeof(*f[i])))
			continue;
		ret = xnf_fw_set_add(set, t[j], false, NULL);
		if (ret)
			goto out;
	}
	ret = xnf_fw_set_policy(set, xnf_fw_set_default(to));
	if (!ret) {
		*out = set;
		set = NULL;
	}
out:
	xnf_fw_set_free(set);
	free(f);
	free(t);
	return ret;
}

static bool place_equal(const struct xnf_conf_attach *a,
			const struct xnf_conf_attach *b)
{
	if (a->placed != b->placed)
		return false;
	if (!a->placed)
		return true;
	return a->place.queues == b->place.queues &&
	       a->place.have_cores == b->place.have_cores &&
	       (!a->place.have_cores ||
		xnf_cpuset_equal(&a->place.cores, &b->place.cores));
}

static bool chain_equal(const struct xnf_chain_spec *a,
			const struct xnf_chain_spec *b)
{
	return a->len == b->len &&
	       !memcmp(a->nf, b->nf, a->len * sizeof(a->nf[0])) &&
	       a->fused == b->fused && a->l3_fib == b->l3_fib;
}

/* What an attachment of @a needs besides itself: its ifindex in this
 * namespace and, with a placement, the plan (NULL without). */
static int attach_prepare(const struct xnf_conf_attach *a, __u32 *ifindex,
			  struct xnf_plan **plan, char *err, size_t errlen)
{
	char perr[XNF_PLACE_ERR_LEN] = "";
	int ret, i;

	*plan = NULL;
	ret = xnf_dev_ifindex(a->dev, ifindex, err, errlen);
	if (ret || !a->placed)
		return ret;
	ret = xnf_plan_compute("", a->dev, &a->place, plan, perr, sizeof(perr));
	if (ret)
		return xnf_errf(err, errlen, ret, "cannot place %s: %s", a->dev,
				perr);
	for (i = 0; i < (*plan)->nwarnings; i++)
		pr_warn("%s\n", (*plan)->warnings[i]);
	return 0;
}

static int do_attach(struct xnf_dp *dp, const struct xnf_conf_attach *a,
		     char *err, size_t errlen)
{
	char old[XNF_ROOT_MAX + 8];
	struct xnf_attach_opts o = {
		.dev = a->dev,
		.xdp_flags = a->xdp_flags,
		.chain = a->chain,
		.strict_queues = a->placed && a->place.queues,
		.cores = a->placed && a->place.have_cores ? &a->place.cores : NULL,
	};
	struct xnf_plan *plan;
	int ret;

	ret = attach_prepare(a, &o.ifindex, &plan, err, errlen);
	if (ret)
		return ret;
	o.plan = plan;
	if (xnf_upgrade_pending(dp, old, sizeof(old)))
		o.adopt_root = old;
	ret = xnf_attach(dp, &o, err, errlen);
	free(plan);
	return ret;
}

static int do_chain_set(struct xnf_dp *dp, const struct xnf_conf_attach *a,
			char *err, size_t errlen)
{
	struct xnf_chain_change chg = {
		.len = a->chain.len,
		.fused = a->chain.fused ? XNF_ON : XNF_OFF,
		.l3_fib = a->chain.l3_fib ? XNF_ON : XNF_OFF,
	};

	memcpy(chg.nf, a->chain.nf, sizeof(chg.nf));
	return xnf_chain_set(dp, a->dev, &chg, err, errlen);
}

/* Everything that can fail before a change, for @to's new parts: devices
 * exist, placements plan, the firewall compiles. */
static int conf_check(const struct xnf_conf *from, const struct xnf_conf *to,
		      const struct xnf_fw_set *fw, char *err, size_t errlen)
{
	struct xnf_fw_compiled *compiled;
	struct xnf_plan *plan;
	__u32 i, ifindex;
	int ret;

	for (i = 0; i < to->natt; i++) {
		const struct xnf_conf_attach *a = &to->att[i];
		const struct xnf_conf_attach *now = att_find(from, a->dev);

		if (now && place_equal(now, a) && now->xdp_flags == a->xdp_flags)
			continue;
		ret = attach_prepare(a, &ifindex, &plan, err, errlen);
		free(plan);
		if (ret)
			return ret;
	}
	if (fw) {
		ret = xnf_fw_compile(xnf_fw_set_rules(fw), XNF_FW_MAX_RULES,
				     xnf_fw_set_default(fw), &compiled);
		if (ret == -ENOSPC)
			return xnf_errf(err, errlen, ret,
					"firewall full: the rule set needs more "
					"classification classes than the tables "
					"hold; remove rules or merge ranges");
		if (ret)
			return xnf_errf(err, errlen, ret,
					"the firewall rules do not compile: %s",
					strerror(-ret));
		xnf_fw_compiled_free(compiled);
	}
	return 0;
}

static int sync_attachments(struct xnf_dp *dp, const struct xnf_conf *from,
			    const struct xnf_conf *to,
			    struct xnf_conf_changes *chg, char *err,
			    size_t errlen)
{
	const struct xnf_conf_attach *a, *now;
	__u32 i;
	int ret;

	for (i = 0; i < to->natt; i++) {
		a = &to->att[i];
		now = att_find(from, a->dev);
		if (!now) {
			ret = do_attach(dp, a, err, errlen);
			if (ret)
				return ret;
			chg->attached++;
		} else if (now->xdp_flags != a->xdp_flags ||
			   !place_equal(now, a)) {
			/* Neither can change under a running program. */
			ret = xnf_detach(dp, a->dev, err, errlen);
			if (!ret)
				ret = do_attach(dp, a, err, errlen);
			if (ret)
				return ret;
			chg->reattached++;
		} else if (!chain_equal(&now->chain, &a->chain)) {
			ret = do_chain_set(dp, a, err, errlen);
			if (ret)
				return ret;
			chg->chains++;
		}
	}
	return 0;
}

static int sync_detach(struct xnf_dp *dp, const struct xnf_conf *from,
		       const struct xnf_conf *to, struct xnf_conf_changes *chg,
		       char *err, size_t errlen)
{
	__u32 i;
	int ret;

	for (i = 0; i < from->natt; i++) {
		if (att_find(to, from->att[i].dev))
			continue;
		ret = xnf_detach(dp, from->att[i].dev, err, errlen);
		if (ret)
			return ret;
		chg->detached++;
	}
	return 0;
}

/* Routes @to has that @from has not, or has otherwise; then (@del) the
 * ones @from has and @to has not. */
static int sync_routes(struct xnf_dp *dp, const struct xnf_conf *from,
		       const struct xnf_conf *to, bool del,
		       struct xnf_conf_changes *chg, char *err, size_t errlen)
{
	const struct xnf_conf *walk = del ? from : to, *other = del ? to : from;
	const struct xnf_conf_route *r;
	const struct xnf_route_entry *e;
	bool found;
	__u32 i, at;
	int ret;

	for (i = 0; i < walk->nroutes; i++) {
		r = &walk->routes[i];
		e = &r->e;
		at = sorted_find(other->routes, other->nroutes, sizeof(*r), r,
				 route_cmp, &found);
		if (del && !found) {
			ret = xnf_route_remove(dp, e->family, e->addr, e->plen,
					       err, errlen);
			if (ret && ret != -ENOENT)
				return ret;
		} else if (!del &&
			   (!found || !route_same(&other->routes[at], r))) {
			/* A multipath route that replaces one keeps the
			 * flows of its staying next hops (resilient). */
			ret = r->npaths ?
				      xnf_route_add_multipath(dp, e->family,
							      e->addr, e->plen,
							      r->paths,
							      r->npaths, found,
							      err, errlen) :
				      xnf_route_add(dp, e->family, e->addr,
						    e->plen, &e->rt, found, err,
						    errlen);
			if (ret)
				return ret;
		} else {
			continue;
		}
		chg->routes++;
	}
	return 0;
}

static int sync_fdb(struct xnf_dp *dp, const struct xnf_conf *from,
		    const struct xnf_conf *to, bool del,
		    struct xnf_conf_changes *chg, char *err, size_t errlen)
{
	const struct xnf_conf *walk = del ? from : to, *other = del ? to : from;
	const struct xnf_fdb_ent *e;
	bool found;
	__u32 i, at;
	int ret;

	for (i = 0; i < walk->nfdb; i++) {
		e = &walk->fdb[i];
		at = sorted_find(other->fdb, other->nfdb, sizeof(*e), e,
				 fdb_cmp, &found);
		if (del && !found) {
			ret = xnf_fdb_del(dp, e->key.mac);
			if (ret && ret != -ENOENT)
				return xnf_errf(err, errlen, ret,
						"cannot delete an FDB entry: %s",
						strerror(-ret));
		} else if (!del && (!found ||
				    other->fdb[at].e.ifindex != e->e.ifindex)) {
			ret = xnf_fdb_add(dp, e->key.mac, e->e.ifindex, found,
					  err, errlen);
			if (ret)
				return ret;
		} else {
			continue;
		}
		chg->fdb++;
	}
	return 0;
}

/* The pair of @c that @in is in, as it is in @other: both directions. */
static bool xc_pair_same(const struct xnf_conf *c, __u32 in,
			 const struct xnf_conf *other)
{
	const struct xnf_xconnect_ent *a = xc_find(c, in), *b, *oa, *ob;

	if (!a)
		return false;
	b = xc_find(c, a->xc.ifindex);
	oa = xc_find(other, in);
	ob = xc_find(other, a->xc.ifindex);
	if (!b || !oa || !ob)
		return false;
	return !memcmp(&a->xc, &oa->xc, sizeof(a->xc)) &&
	       !memcmp(&b->xc, &ob->xc, sizeof(b->xc));
}

/* A pair that changes is removed and added again: xnf_xconnect_add()
 * refuses an end that is cross-connected to another device. */
static int sync_xconnects(struct xnf_dp *dp, const struct xnf_conf *from,
			  const struct xnf_conf *to,
			  struct xnf_conf_changes *chg, char *err, size_t errlen)
{
	const struct xnf_xconnect_ent *e, *peer;
	__u32 i;
	int ret;

	for (i = 0; i < from->nxc; i++) {
		e = &from->xc[i];
		if (xc_pair_same(from, e->in, to))
			continue;
		ret = xnf_xconnect_remove(dp, e->in, err, errlen);
		if (ret && ret != -ENOENT)
			return ret;
		chg->xconnects += !ret;
	}
	for (i = 0; i < to->nxc; i++) {
		e = &to->xc[i];
		peer = xc_find(to, e->xc.ifindex);
		if (e->in > e->xc.ifindex || !peer ||
		    xc_pair_same(to, e->in, from))
			continue;
		ret = xnf_xconnect_add(dp, e->in, &e->xc, peer->in, &peer->xc,
				       err, errlen);
		if (ret)
			return ret;
		chg->xconnects++;
	}
	return 0;
}

static int conf_sync(struct xnf_dp *dp, const struct xnf_conf *from,
		     const struct xnf_conf *to, struct xnf_conf_changes *chg,
		     char *err, size_t errlen)
{
	struct xnf_fw_set *fw = NULL;
	struct xnf_config cfg;
	int ret;

	memset(chg, 0, sizeof(*chg));
	ret = fw_diff(from->fw, to->fw, &fw);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot build the firewall rule set: %s",
				strerror(-ret));
	ret = conf_check(from, to, fw, err, errlen);
	if (ret)
		goto out;
	if (!cfg_equal(&from->cfg, &to->cfg)) {
		cfg = to->cfg;
		cfg.schema = XNF_SCHEMA;
		ret = xnf_cfg_write(dp, &cfg);
		if (ret) {
			xnf_errf(err, errlen, ret, "cannot write %s: %s",
				 XNF_MAP_STR(XNF_MAP_CFG), strerror(-ret));
			goto out;
		}
		chg->config++;
	}
	if (fw) {
		ret = xnf_fw_apply(dp, fw);
		if (ret) {
			xnf_errf(err, errlen, ret,
				 "cannot switch the firewall rules: %s",
				 strerror(-ret));
			goto out;
		}
		chg->firewall++;
	}
	ret = sync_attachments(dp, from, to, chg, err, errlen);
	if (!ret)
		ret = sync_routes(dp, from, to, false, chg, err, errlen);
	if (!ret)
		ret = sync_fdb(dp, from, to, false, chg, err, errlen);
	if (!ret)
		ret = sync_xconnects(dp, from, to, chg, err, errlen);
	if (!ret)
		ret = sync_routes(dp, from, to, true, chg, err, errlen);
	if (!ret)
		ret = sync_fdb(dp, from, to, true, chg, err, errlen);
	if (!ret)
		ret = sync_detach(dp, from, to, chg, err, errlen);
out:
	xnf_fw_set_free(fw);
	return ret;
}

static bool changed(const struct xnf_conf_changes *c)
{
	return c->attached || c->detached || c->reattached || c->chains ||
	       c->config || c->firewall || c->routes || c->fdb || c->xconnects;
}

int xnf_conf_apply(struct xnf_dp *dp, const struct xnf_conf *want,
		   struct xnf_conf_changes *chg, char *err, size_t errlen)
{
	struct xnf_conf_changes done, undo;
	struct xnf_conf *before = NULL, *now = NULL;
	char uerr[512], old[XNF_ROOT_MAX + 8];
	bool upgrade = xnf_upgrade_pending(dp, old, sizeof(old));
	size_t len;
	int ret, uret;

	ret = xnf_conf_read(dp, &before, err, errlen);
	if (ret)
		return ret;
	ret = conf_sync(dp, before, want, &done, err, errlen);
	if (chg)
		*chg = done;
	if (!ret && upgrade)
		ret = xnf_upgrade_finish(dp, err, errlen);
	if (!ret || !changed(&done))
		goto out;
	/* Undoing would detach what was taken over from the old instance:
	 * the next apply continues instead. */
	if (upgrade) {
		len = err ? strlen(err) : 0;
		if (err)
			snprintf(err + len, errlen - len,
				 "; the upgrade from %s stopped there: what was taken over runs, the rest runs from %s; apply again to finish it",
				 old, old);
		goto out;
	}
	/* Back to what ran before, with the same transactions. */
	uret = xnf_conf_read(dp, &now, uerr, sizeof(uerr));
	if (!uret)
		uret = conf_sync(dp, now, before, &undo, uerr, sizeof(uerr));
	len = err ? strlen(err) : 0;
	if (uret && err)
		snprintf(err + len, errlen - len,
			 "; undoing the changes made before failed too (%s): "
			 "'xnf save' shows what runs",
			 uerr);
	else if (err)
		snprintf(err + len, errlen - len,
			 "; the changes made before it were undone");
out:
	xnf_conf_free(before);
	xnf_conf_free(now);
	return ret;
}
