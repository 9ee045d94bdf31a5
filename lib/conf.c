// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * conf.c - candidates: the whole configuration as one value, read from a
 * running instance or built from nothing, and the running configuration
 * plus edits; every edit checked here, once, for every caller
 * (include/conf.h). The difference and the commit are commit.c's.
 *
 * Every part of a configuration is an array kept sorted by its key, so an
 * edit finds its element by binary search, a file written by `xnf save`
 * (which prints in that order) is read in O(n log n), and a commit walks
 * the running and the wanted arrays side by side.
 *
 * A candidate over what runs holds only the elements its edits touched:
 * the first edit of an element reads it from the instance (one lookup)
 * into both c->base (as it runs) and the candidate (as it will be), so
 * base and candidate hold the same keys, and comparing them is the whole
 * difference. An element an edit added that does not run is only in the
 * candidate; one an edit removed that runs is only in base.
 */
#include <errno.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <linux/if_link.h>

#include "conf.h"
#include "conf_priv.h"
#include "pktlog.h"
#include "placement.h"
#include "priv.h"

/* ---- sorted arrays ---- */

__u32 conf_find(const void *base, __u32 n, size_t size, const void *key,
		conf_cmp_fn cmp, bool *found)
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

/* Puts @elem into the sorted array, in place of an equal one. */
static int sorted_put(void **base, __u32 *n, size_t size, const void *elem,
		      conf_cmp_fn cmp)
{
	bool found;
	__u32 at = conf_find(*base, *n, size, elem, cmp, &found);

	if (found) {
		memcpy((char *)*base + (size_t)at * size, elem, size);
		return 0;
	}
	return sorted_insert(base, n, size, at, elem);
}

/* ---- keys ---- */

int conf_att_cmp(const void *a, const void *b)
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

int conf_route_cmp(const void *a, const void *b)
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

int conf_fdb_cmp(const void *a, const void *b)
{
	return memcmp(((const struct xnf_fdb_ent *)a)->key.mac,
		      ((const struct xnf_fdb_ent *)b)->key.mac, 6);
}

int conf_xc_cmp(const void *a, const void *b)
{
	__u32 x = ((const struct xnf_xconnect_ent *)a)->in;
	__u32 y = ((const struct xnf_xconnect_ent *)b)->in;

	return x < y ? -1 : x > y;
}

struct xnf_conf_attach *conf_att_find(const struct xnf_conf *c, const char *dev)
{
	struct xnf_conf_attach key = {};
	bool found;
	__u32 at;

	snprintf(key.dev, sizeof(key.dev), "%s", dev);
	at = conf_find(c->att, c->natt, sizeof(key), &key, conf_att_cmp, &found);
	return found ? &c->att[at] : NULL;
}

struct xnf_conf_route *conf_route_find(const struct xnf_conf *c, int family,
				       const void *addr, __u32 plen)
{
	struct xnf_conf_route key = { .e = { .family = family, .plen = plen } };
	bool found;
	__u32 at;

	memcpy(key.e.addr, addr, family == XNF_AF_INET ? 4 : 16);
	at = conf_find(c->routes, c->nroutes, sizeof(key), &key, conf_route_cmp,
		       &found);
	return found ? &c->routes[at] : NULL;
}

struct xnf_fdb_ent *conf_fdb_find(const struct xnf_conf *c, const __u8 mac[6])
{
	struct xnf_fdb_ent key = {};
	bool found;
	__u32 at;

	memcpy(key.key.mac, mac, 6);
	at = conf_find(c->fdb, c->nfdb, sizeof(key), &key, conf_fdb_cmp, &found);
	return found ? &c->fdb[at] : NULL;
}

struct xnf_xconnect_ent *conf_xc_find(const struct xnf_conf *c, __u32 in)
{
	struct xnf_xconnect_ent key = { .in = in };
	bool found;
	__u32 at;

	at = conf_find(c->xc, c->nxc, sizeof(key), &key, conf_xc_cmp, &found);
	return found ? &c->xc[at] : NULL;
}

const struct xnf_xconnect_ent *xnf_conf_xc_find(const struct xnf_conf *c, __u32 in)
{
	return conf_xc_find(c, in);
}

/* ---- elements in and out (no checks: what the edits and the commit's
 * rollback build candidates with) ---- */

int conf_put_att(struct xnf_conf *c, const struct xnf_conf_attach *a)
{
	return sorted_put((void **)&c->att, &c->natt, sizeof(*a), a,
			  conf_att_cmp);
}

void conf_drop_att(struct xnf_conf *c, const char *dev)
{
	struct xnf_conf_attach *a = conf_att_find(c, dev);

	if (a)
		sorted_remove(c->att, &c->natt, sizeof(*a), a - c->att);
}

/* A copy of @r, its next hops too. */
static int route_copy(struct xnf_conf_route *dst, const struct xnf_conf_route *r)
{
	*dst = *r;
	dst->paths = NULL;
	if (!r->npaths)
		return 0;
	dst->paths = malloc(r->npaths * sizeof(*r->paths));
	if (!dst->paths)
		return -ENOMEM;
	memcpy(dst->paths, r->paths, r->npaths * sizeof(*r->paths));
	return 0;
}

int conf_put_route(struct xnf_conf *c, const struct xnf_conf_route *r)
{
	struct xnf_conf_route copy;
	bool found;
	__u32 at;
	int ret;

	ret = route_copy(&copy, r);
	if (ret)
		return ret;
	at = conf_find(c->routes, c->nroutes, sizeof(copy), &copy,
		       conf_route_cmp, &found);
	if (found) {
		free(c->routes[at].paths);
		c->routes[at] = copy;
		return 0;
	}
	ret = sorted_insert((void **)&c->routes, &c->nroutes, sizeof(copy), at,
			    &copy);
	if (ret)
		free(copy.paths);
	return ret;
}

void conf_drop_route(struct xnf_conf *c, const struct xnf_route_entry *e)
{
	struct xnf_conf_route *r = conf_route_find(c, e->family, e->addr,
						   e->plen);

	if (!r)
		return;
	free(r->paths);
	sorted_remove(c->routes, &c->nroutes, sizeof(*r), r - c->routes);
}

int conf_put_fdb(struct xnf_conf *c, const struct xnf_fdb_ent *e)
{
	return sorted_put((void **)&c->fdb, &c->nfdb, sizeof(*e), e,
			  conf_fdb_cmp);
}

void conf_drop_fdb(struct xnf_conf *c, const __u8 mac[6])
{
	struct xnf_fdb_ent *e = conf_fdb_find(c, mac);

	if (e)
		sorted_remove(c->fdb, &c->nfdb, sizeof(*e), e - c->fdb);
}

int conf_put_xc(struct xnf_conf *c, const struct xnf_xconnect_ent *e)
{
	return sorted_put((void **)&c->xc, &c->nxc, sizeof(*e), e, conf_xc_cmp);
}

void conf_drop_xc(struct xnf_conf *c, __u32 in)
{
	struct xnf_xconnect_ent *e = conf_xc_find(c, in);

	if (e)
		sorted_remove(c->xc, &c->nxc, sizeof(*e), e - c->xc);
}

int conf_put_all(struct xnf_conf *c, const struct xnf_conf *src)
{
	__u32 i;
	int ret = 0;

	for (i = 0; !ret && i < src->natt; i++)
		ret = conf_put_att(c, &src->att[i]);
	for (i = 0; !ret && i < src->nroutes; i++)
		ret = conf_put_route(c, &src->routes[i]);
	for (i = 0; !ret && i < src->nfdb; i++)
		ret = conf_put_fdb(c, &src->fdb[i]);
	for (i = 0; !ret && i < src->nxc; i++)
		ret = conf_put_xc(c, &src->xc[i]);
	return ret;
}

/* ---- configurations ---- */

static void routes_free(struct xnf_conf_route *routes, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++)
		free(routes[i].paths);
	free(routes);
}

/* Empties @c's parts (cfg and fw stay). */
static void parts_free(struct xnf_conf *c)
{
	free(c->att);
	routes_free(c->routes, c->nroutes);
	free(c->fdb);
	free(c->xc);
	c->att = NULL;
	c->routes = NULL;
	c->fdb = NULL;
	c->xc = NULL;
	c->natt = c->nroutes = c->nfdb = c->nxc = 0;
}

void xnf_conf_free(struct xnf_conf *c)
{
	if (!c)
		return;
	xnf_fw_set_free(c->fw);
	xnf_nat_set_free(c->nat);
	parts_free(c);
	xnf_conf_free(c->base);
	free(c);
}

int conf_alloc(bool whole, struct xnf_conf **out)
{
	struct xnf_conf *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	xnf_cfg_default(&c->cfg);
	xnf_ct_settings_default(&c->ct);
	c->whole = whole;
	c->cfg_known = whole;
	if (whole &&
	    (!(c->fw = xnf_fw_set_new()) || !(c->nat = xnf_nat_set_new()))) {
		xnf_fw_set_free(c->fw);
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

int conf_copy(const struct xnf_conf *src, bool whole, struct xnf_conf **out)
{
	struct xnf_conf *c;
	int ret;

	ret = conf_alloc(whole, &c);
	if (ret)
		return ret;
	c->cfg = src->cfg;
	c->ct = src->ct;
	c->cfg_known = whole || src->cfg_known;
	if (src->fw) {
		xnf_fw_set_free(c->fw);
		c->fw = xnf_fw_set_dup(src->fw);
		ret = c->fw ? 0 : -ENOMEM;
	}
	if (!ret && src->nat) {
		xnf_nat_set_free(c->nat);
		c->nat = xnf_nat_set_dup(src->nat);
		ret = c->nat ? 0 : -ENOMEM;
	}
	if (!ret)
		ret = conf_put_all(c, src);
	if (ret) {
		xnf_conf_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

int xnf_conf_new(struct xnf_conf **out)
{
	return conf_alloc(true, out);
}

int xnf_conf_running(struct xnf_dp *dp, struct xnf_conf **out)
{
	struct xnf_conf *c;
	int ret;

	ret = conf_alloc(false, &c);
	if (ret)
		return ret;
	ret = conf_alloc(false, &c->base);
	if (ret) {
		free(c);
		return ret;
	}
	c->dp = dp;
	*out = c;
	return 0;
}

/* ---- reading what runs ---- */

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

/* The attachment of @dev in this network namespace: -ENOENT when there is
 * none (also: pins of a killed attach or detach, another namespace's). */
int conf_read_att(struct xnf_dp *dp, const char *dev, __u32 netns,
		  struct xnf_conf_attach *a)
{
	struct xnf_dev_status st;
	int ret;

	memset(a, 0, sizeof(*a));
	ret = xnf_dev_status(dp, dev, &st);
	if (ret)
		return ret;
	if (st.info.netns != netns)
		return -ENOENT;
	snprintf(a->dev, sizeof(a->dev), "%s", dev);
	a->xdp_flags = st.info.xdp_flags;
	a->chain.len = st.info.chain_len;
	memcpy(a->chain.nf, st.info.nf, sizeof(a->chain.nf));
	a->chain.fused = st.info.fused;
	a->chain.l3_fib = st.info.l3_fib;
	read_placement(&st, a);
	return 0;
}

/* The names of the attached devices into a new array: their count. */
static int dev_names(struct xnf_dp *dp, char (**names)[16], char *err,
		     size_t errlen)
{
	int n;

	*names = NULL;
	n = xnf_dev_list(dp, NULL, 0);
	if (n > 0) {
		*names = calloc(n, sizeof(**names));
		if (!*names)
			return xnf_errf(err, errlen, -ENOMEM, "out of memory");
		n = xnf_dev_list(dp, *names, n);
	}
	if (n < 0) {
		free(*names);
		*names = NULL;
		return xnf_errf(err, errlen, n, "cannot list %s/dev: %s",
				dp->root, strerror(-n));
	}
	return n;
}

static int read_attachments(struct xnf_dp *dp, struct xnf_conf *c, char *err,
			    size_t errlen)
{
	__u32 netns = xnf_netns_inode();
	char(*names)[16];
	int n, i, ret = 0;

	n = dev_names(dp, &names, err, errlen);
	if (n < 0)
		return n;
	for (i = 0; i < n && !ret; i++) {
		struct xnf_conf_attach a;

		ret = conf_read_att(dp, names[i], netns, &a);
		if (ret == -ENOENT) {
			ret = 0;
			continue;
		}
		if (ret)
			xnf_errf(err, errlen, ret,
				 "cannot read what runs on %s: %s", names[i],
				 strerror(-ret));
		else if (conf_put_att(c, &a))
			ret = xnf_errf(err, errlen, -ENOMEM, "out of memory");
	}
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
				"cannot read nexthop group %u of a multipath route from %s: %s",
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

/* @e as a configuration holds it: by value, the next hop valid (whether
 * its neighbour is known now is the neighbour table's, not the
 * configuration's, which holds the MAC to start with). */
static int route_by_value(struct xnf_dp *dp, const struct xnf_route_entry *e,
			  struct xnf_conf_route *r, char *err, size_t errlen)
{
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->e = *e;
	r->e.rt.state = XNF_NH_VALID;
	if (e->rt.type == XNF_RT_MULTIPATH)
		ret = read_paths(dp, r, err, errlen);
	r->e.nh = 0;
	return ret;
}

/* The routes written by hand, by value. Routes mirrored by xnf route sync
 * are the kernel's, not this configuration's. */
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
	for (i = 0; i < n && !ret; i++) {
		if (ents[i].rt.origin != XNF_ORIGIN_STATIC)
			continue;
		ret = route_by_value(dp, &ents[i], &c->routes[c->nroutes], err,
				     errlen);
		c->nroutes++;
	}
	if (!ret && c->nroutes)
		qsort(c->routes, c->nroutes, sizeof(*c->routes), conf_route_cmp);
out:
	free(ents);
	return ret;
}

int xnf_conf_read(struct xnf_dp *dp, struct xnf_conf **out, char *err,
		  size_t errlen)
{
	struct xnf_conf *c;
	int ret;

	ret = conf_alloc(true, &c);
	if (ret)
		return xnf_errf(err, errlen, ret, "out of memory");
	xnf_fw_set_free(c->fw);
	c->fw = NULL;
	xnf_nat_set_free(c->nat);
	c->nat = NULL;
	ret = xnf_cfg_read(dp, &c->cfg);
	if (ret) {
		xnf_errf(err, errlen, ret, "cannot read %s: %s",
			 XNF_MAP_STR(XNF_MAP_CFG), strerror(-ret));
		goto fail;
	}
	ret = xnf_ct_settings_read(dp, &c->ct, err, errlen);
	if (ret)
		goto fail;
	ret = xnf_fw_read(dp, &c->fw);
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "cannot read the firewall rules (%s, %s): %s",
			 XNF_MAP_STR(XNF_MAP_FW_RULES),
			 XNF_MAP_STR(XNF_MAP_FW_HDR), strerror(-ret));
		goto fail;
	}
	ret = xnf_nat_read(dp, &c->nat, err, errlen);
	if (ret)
		goto fail;
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
		qsort(c->fdb, c->nfdb, sizeof(*c->fdb), conf_fdb_cmp);
	if (c->nxc)
		qsort(c->xc, c->nxc, sizeof(*c->xc), conf_xc_cmp);
	*out = c;
	return 0;
fail:
	xnf_conf_free(c);
	return ret;
}

/* ---- what runs, one element at a time (a candidate over what runs) ----
 *
 * Each conf_touch_* makes the element known to @c: read from the
 * instance the first time (into c->base as it runs and into @c as it is
 * to be, when it runs), nothing afterwards, nothing for a whole
 * configuration. An element neither holds after it is unknown or absent;
 * either way the edit treats it as absent.
 */

static int read_failed(char *err, size_t errlen, int ret, const char *what)
{
	return xnf_errf(err, errlen, ret, "cannot read %s from the instance: %s",
			what, strerror(-ret));
}

int conf_touch_cfg(struct xnf_conf *c, char *err, size_t errlen)
{
	int ret;

	if (c->cfg_known)
		return 0;
	if (c->dp) {
		ret = xnf_cfg_read(c->dp, &c->base->cfg);
		if (ret)
			return read_failed(err, errlen, ret,
					   XNF_MAP_STR(XNF_MAP_CFG));
		ret = xnf_ct_settings_read(c->dp, &c->base->ct, err, errlen);
		if (ret)
			return ret;
	}
	c->base->cfg_known = c->cfg_known = true;
	c->cfg = c->base->cfg;
	c->ct = c->base->ct;
	return 0;
}

int conf_touch_fw(struct xnf_conf *c, char *err, size_t errlen)
{
	int ret = 0;

	if (c->fw)
		return 0;
	if (c->dp)
		ret = xnf_fw_read(c->dp, &c->base->fw);
	else if (!(c->base->fw = xnf_fw_set_new()))
		ret = -ENOMEM;
	if (ret)
		return read_failed(err, errlen, ret, "the firewall rules");
	c->fw = xnf_fw_set_dup(c->base->fw);
	if (!c->fw)
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	return 0;
}

int conf_touch_nat(struct xnf_conf *c, char *err, size_t errlen)
{
	int ret = 0;

	if (c->nat)
		return 0;
	if (c->dp)
		ret = xnf_nat_read(c->dp, &c->base->nat, err, errlen);
	else if (!(c->base->nat = xnf_nat_set_new()))
		ret = xnf_errf(err, errlen, -ENOMEM, "out of memory");
	if (ret)
		return ret;
	c->nat = xnf_nat_set_dup(c->base->nat);
	if (!c->nat)
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	return 0;
}

/* Both copies of a touched element, or neither: a failed second put
 * leaves the element unknown again. */
#define TOUCH_PUT(c, put, drop, key, elem)      \
	({                                      \
		int _r = put((c)->base, elem);  \
		if (!_r && (_r = put(c, elem))) \
			drop((c)->base, key);   \
		_r;                             \
	})

int conf_touch_att(struct xnf_conf *c, const char *dev, char *err, size_t errlen)
{
	struct xnf_conf_attach a;
	int ret;

	if (c->whole || !c->dp || conf_att_find(c->base, dev) ||
	    conf_att_find(c, dev))
		return 0;
	ret = conf_read_att(c->dp, dev, xnf_netns_inode(), &a);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot read what runs on %s: %s", dev,
				strerror(-ret));
	ret = TOUCH_PUT(c, conf_put_att, conf_drop_att, dev, &a);
	return ret ? xnf_errf(err, errlen, ret, "out of memory") : 0;
}

/* Every attachment of this namespace. */
int conf_touch_all_att(struct xnf_conf *c, char *err, size_t errlen)
{
	char(*names)[16];
	int n, i, ret = 0;

	if (c->whole || !c->dp)
		return 0;
	n = dev_names(c->dp, &names, err, errlen);
	if (n < 0)
		return n;
	for (i = 0; i < n && !ret; i++)
		ret = conf_touch_att(c, names[i], err, errlen);
	free(names);
	return ret;
}

int conf_touch_route(struct xnf_conf *c, int family, const void *addr,
		     __u32 plen, char *err, size_t errlen)
{
	struct xnf_route_entry e;
	struct xnf_conf_route r;
	int ret;

	if (c->whole || !c->dp || conf_route_find(c->base, family, addr, plen) ||
	    conf_route_find(c, family, addr, plen))
		return 0;
	ret = xnf_route_get(c->dp, family, addr, plen, &e);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return read_failed(err, errlen, ret, "the route");
	/* A mirrored route is known with its origin: the edits refuse to
	 * change it. */
	ret = route_by_value(c->dp, &e, &r, err, errlen);
	if (!ret && TOUCH_PUT(c, conf_put_route, conf_drop_route, &r.e, &r))
		ret = xnf_errf(err, errlen, -ENOMEM, "out of memory");
	free(r.paths);
	return ret;
}

/* Every route written by hand that runs and no edit has touched yet, into
 * c->base: one read of the tables, merged in (both sorted, no key in
 * both), so that a flush of many routes costs no insert each. */
static int touch_hand_routes(struct xnf_conf *c, char *err, size_t errlen)
{
	struct xnf_route_entry *ents = NULL, *e;
	struct xnf_conf_route *add = NULL, *m;
	__u32 i, j, n = 0, k = 0, nb;
	int ret;

	if (c->whole || !c->dp)
		return 0;
	ret = xnf_route_list(c->dp, &ents, &n);
	if (ret)
		return read_failed(err, errlen, ret, "the routes");
	add = calloc(n + 1, sizeof(*add));
	if (!add) {
		ret = xnf_errf(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n && !ret; i++) {
		e = &ents[i];
		if (e->rt.origin != XNF_ORIGIN_STATIC ||
		    conf_route_find(c->base, e->family, e->addr, e->plen) ||
		    conf_route_find(c, e->family, e->addr, e->plen))
			continue;
		ret = route_by_value(c->dp, e, &add[k++], err, errlen);
	}
	if (ret || !k)
		goto out;
	qsort(add, k, sizeof(*add), conf_route_cmp);
	nb = c->base->nroutes;
	m = realloc(c->base->routes, (size_t)(nb + k) * sizeof(*m));
	if (!m) {
		ret = xnf_errf(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	c->base->routes = m;
	/* From the back: the larger of the two last ones goes last. */
	for (i = nb, j = k; j > 0;) {
		if (i > 0 && conf_route_cmp(&m[i - 1], &add[j - 1]) > 0) {
			m[i + j - 1] = m[i - 1];
			i--;
		} else {
			m[i + j - 1] = add[j - 1];
			j--;
		}
	}
	c->base->nroutes = nb + k;
	k = 0; /* moved into base */
out:
	routes_free(add, k);
	free(ents);
	return ret;
}

int conf_touch_fdb(struct xnf_conf *c, const __u8 mac[6], char *err, size_t errlen)
{
	struct xnf_fdb_ent e = {};
	int ret;

	if (c->whole || !c->dp || conf_fdb_find(c->base, mac) ||
	    conf_fdb_find(c, mac))
		return 0;
	memcpy(e.key.mac, mac, 6);
	ret = xnf_fdb_get(c->dp, mac, &e.e);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return read_failed(err, errlen, ret, XNF_MAP_STR(XNF_MAP_FDB));
	ret = TOUCH_PUT(c, conf_put_fdb, conf_drop_fdb, mac, &e);
	return ret ? xnf_errf(err, errlen, ret, "out of memory") : 0;
}

/* The cross-connect entry of @in, and of its peer: a pair is one element. */
int conf_touch_xc(struct xnf_conf *c, __u32 in, char *err, size_t errlen)
{
	struct xnf_xconnect_ent e = { .in = in };
	int ret;

	if (c->whole || !c->dp || conf_xc_find(c->base, in) ||
	    conf_xc_find(c, in))
		return 0;
	ret = xnf_xconnect_get(c->dp, in, &e.xc);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return read_failed(err, errlen, ret,
				   XNF_MAP_STR(XNF_MAP_XCONNECT));
	ret = TOUCH_PUT(c, conf_put_xc, conf_drop_xc, in, &e);
	if (ret)
		return xnf_errf(err, errlen, ret, "out of memory");
	return conf_touch_xc(c, e.xc.ifindex, err, errlen);
}

/* ---- edits ---- */

static const char *family_str(int family)
{
	return family == XNF_AF_INET ? "IPv4" : "IPv6";
}

static const char *dev_name(__u32 ifindex, char *buf)
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex % 100000000);
	return buf;
}

static const char *mac_str(const __u8 *m, char *buf)
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
	return buf;
}

static const char *prefix_str(int family, const void *addr, __u32 plen,
			      char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family == XNF_AF_INET ? AF_INET : AF_INET6, addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, plen);
	return buf;
}

/* A MAC a frame can be sent to: not multicast, broadcast or zero. */
static int unicast_check(const __u8 mac[6], const char *what, char *err,
			 size_t errlen)
{
	char m[18];

	if (mac[0] & 1)
		return xnf_errf(err, errlen, -EINVAL,
				"%s %s is a %s MAC: give a unicast one", what,
				mac_str(mac, m),
				memcmp(mac, "\xff\xff\xff\xff\xff\xff", 6) ?
					"multicast" :
					"broadcast");
	if (!memcmp(mac, "\0\0\0\0\0\0", 6))
		return xnf_errf(err, errlen, -EINVAL,
				"%s 00:00:00:00:00:00 is not a station address: give a unicast MAC",
				what);
	return 0;
}

/* @a runs before @b in a chain where every NF sees the packets it is
 * there for (the registry's order flags, xnf_nfs.h); else why not. */
static int order_check(__u32 a, __u32 b, char *err, size_t errlen)
{
	const char *na = xnf_nf_name(a) ?: "an NF",
		   *nb = xnf_nf_name(b) ?: "an NF";
	__u32 fa = xnf_nf_flags(a), fb = xnf_nf_flags(b);

	if ((fa & XNF_NFF_FORWARDS) && (fb & XNF_NFF_BEFORE_FWD))
		return xnf_errf(err, errlen, -EINVAL,
				"%s after %s would miss packets: %s hands what it does not forward itself to the kernel, which forwards it without running %s; put %s before %s",
				nb, na, na, nb, nb, na);
	if ((fa & XNF_NFF_AFTER_FWD) && (fb & XNF_NFF_FORWARDS))
		return xnf_errf(err, errlen, -EINVAL,
				"%s before %s would get no packet: %s chooses where every packet goes after %s did; put %s after %s",
				na, nb, nb, na, na, nb);
	if ((fa & XNF_NFF_CT_CONFIRM) && (fb & XNF_NFF_CT))
		return xnf_errf(err, errlen, -EINVAL,
				"%s before %s would see no connection state: %s sets the state %s matches and whose new connections it confirms; put %s before %s",
				na, nb, nb, na, nb, na);
	if ((fa & XNF_NFF_CT_CONFIRM) && !(fa & XNF_NFF_NAT) && (fb & XNF_NFF_NAT))
		return xnf_errf(err, errlen, -EINVAL,
				"%s before %s would judge packets before their translation: %s translates the destination first, as nft's prerouting does before its forward chain; put %s before %s",
				na, nb, nb, nb, na);
	return 0;
}

/* The chain of an attachment or a chain set: each NF once, in an order
 * in which every NF sees its packets (order_check), as many as a chain (a
 * fused one) holds. Which NFs there are is xnf_chain_parse()'s (and the
 * loader's, when the chain is committed). */
static int chain_check(const __u32 *nf, __u32 len, bool fused, char *err,
		       size_t errlen)
{
	__u32 i, j;
	int ret;

	if (len > XNF_CHAIN_MAX)
		return xnf_errf(err, errlen, -EINVAL,
				"a chain holds at most %d NFs", XNF_CHAIN_MAX);
	if (fused && len > XNF_FUSED_MAX)
		return xnf_errf(err, errlen, -EINVAL,
				"a fused chain holds at most %d NFs",
				XNF_FUSED_MAX);
	for (i = 0; i < len; i++)
		for (j = 0; j < i; j++)
			if (nf[j] == nf[i])
				return xnf_errf(err, errlen, -EINVAL,
						"%s appears twice in the chain; each NF runs at most once",
						xnf_nf_name(nf[i]) ?: "an NF");
	for (i = 0; i < len; i++)
		for (j = i + 1; j < len; j++) {
			ret = order_check(nf[i], nf[j], err, errlen);
			if (ret)
				return ret;
		}
	for (i = 0; i < len; i++) {
		if (!(xnf_nf_flags(nf[i]) & XNF_NFF_NAT))
			continue;
		for (j = 0; j < i; j++)
			if (xnf_nf_flags(nf[j]) & XNF_NFF_CT)
				break;
		if (j == i)
			return xnf_errf(err, errlen, -EINVAL,
					"%s translates the connections conntrack tracks: put conntrack before %s",
					xnf_nf_name(nf[i]), xnf_nf_name(nf[i]));
	}
	return 0;
}

static int oom(char *err, size_t errlen)
{
	return xnf_errf(err, errlen, -ENOMEM, "out of memory");
}

int xnf_conf_attach(struct xnf_conf *c, const struct xnf_conf_attach *a,
		    char *err, size_t errlen)
{
	int ret;

	ret = xnf_dev_name_check(a->dev, err, errlen) ?:
		      chain_check(a->chain.nf, a->chain.len, a->chain.fused,
				  err, errlen);
	if (ret)
		return ret;
	ret = conf_touch_att(c, a->dev, err, errlen);
	if (ret)
		return ret;
	if (conf_att_find(c, a->dev))
		return xnf_errf(err, errlen, -EEXIST, "%s is attached already",
				a->dev);
	return conf_put_att(c, a) ? oom(err, errlen) : 0;
}

static int not_attached(const char *dev, char *err, size_t errlen)
{
	return xnf_errf(err, errlen, -ENOENT, "xnf is not attached to %s", dev);
}

int xnf_conf_detach(struct xnf_conf *c, const char *dev, char *err, size_t errlen)
{
	int ret;

	ret = xnf_dev_name_check(dev, err, errlen) ?:
		      conf_touch_att(c, dev, err, errlen);
	if (ret)
		return ret;
	if (!conf_att_find(c, dev))
		return not_attached(dev, err, errlen);
	conf_drop_att(c, dev);
	return 0;
}

int xnf_conf_detach_all(struct xnf_conf *c, char *err, size_t errlen)
{
	int ret = conf_touch_all_att(c, err, errlen);

	if (ret)
		return ret;
	free(c->att);
	c->att = NULL;
	c->natt = 0;
	return 0;
}

int xnf_conf_chain_set(struct xnf_conf *c, const char *dev,
		       const struct xnf_chain_change *chg, char *err,
		       size_t errlen)
{
	struct xnf_conf_attach *a;
	bool fused;
	int ret;

	ret = xnf_dev_name_check(dev, err, errlen) ?:
		      conf_touch_att(c, dev, err, errlen);
	if (ret)
		return ret;
	a = conf_att_find(c, dev);
	if (!a)
		return not_attached(dev, err, errlen);
	fused = chg->fused == XNF_KEEP ? a->chain.fused : chg->fused == XNF_ON;
	ret = chain_check(chg->nf, chg->len, fused, err, errlen);
	if (ret)
		return ret;
	a->chain.len = chg->len;
	memcpy(a->chain.nf, chg->nf, sizeof(a->chain.nf));
	a->chain.fused = fused;
	a->reload = true;
	if (chg->l3_fib != XNF_KEEP)
		a->chain.l3_fib = chg->l3_fib == XNF_ON;
	return 0;
}

/* The prefix: a family, a length it has, no host bits. */
static int prefix_check(int family, const __u8 *addr, __u32 plen, char *err,
			size_t errlen)
{
	__u32 max = family == XNF_AF_INET ? 32 : 128, i;
	char p[INET6_ADDRSTRLEN + 8];

	if (family != XNF_AF_INET && family != XNF_AF_INET6)
		return xnf_errf(err, errlen, -EAFNOSUPPORT,
				"route: unknown family %d", family);
	if (plen > max)
		return xnf_errf(err, errlen, -EINVAL,
				"prefix length %u: an %s prefix has 0 to %u bits",
				plen, family_str(family), max);
	for (i = plen; i < max; i++)
		if (addr[i / 8] & (0x80 >> (i % 8)))
			return xnf_errf(err, errlen, -EINVAL,
					"prefix %s has host bits set",
					prefix_str(family, addr, plen, p,
						   sizeof(p)));
	return 0;
}

/* A next hop of a route of @family, or a route of another type. */
static int nexthop_check(int family, const struct xnf_route *rt, char *err,
			 size_t errlen)
{
	if (rt->type > XNF_RT_KERNEL)
		return xnf_errf(err, errlen, -EINVAL, "unknown route type %u",
				rt->type);
	if (rt->type != XNF_RT_UNICAST)
		return 0;
	if (!rt->ifindex)
		return xnf_errf(err, errlen, -EINVAL,
				"a next hop needs its device");
	if (rt->gw_family && (int)rt->gw_family != family)
		return xnf_errf(err, errlen, -EINVAL,
				"next hop of the %s route is %s: the gateway must be of the prefix's family",
				family_str(family), family_str(rt->gw_family));
	return unicast_check(rt->dmac, "the next hop's lladdr", err, errlen);
}

/* A route edit may change @r (NULL: none): not one the route sync owns. */
static int route_own(const struct xnf_conf_route *r, const char *prefix,
		     char *err, size_t errlen)
{
	if (!r || r->e.rt.origin == XNF_ORIGIN_STATIC)
		return 0;
	return xnf_errf(err, errlen, -EBUSY,
			"route %s is mirrored from the kernel's routes by a route sync: change the kernel's route, or take the routes back from the sync first",
			prefix);
}

/* Puts @r (owned by the call from here on) into @c: -EEXIST unless
 * @replace when its prefix has a route. */
static int route_put(struct xnf_conf *c, struct xnf_conf_route *r, bool replace,
		     char *err, size_t errlen)
{
	const struct xnf_route_entry *e = &r->e;
	struct xnf_conf_route *now;
	char p[INET6_ADDRSTRLEN + 8];
	int ret;

	prefix_str(e->family, e->addr, e->plen, p, sizeof(p));
	ret = conf_touch_route(c, e->family, e->addr, e->plen, err, errlen);
	if (ret)
		goto out;
	now = conf_route_find(c, e->family, e->addr, e->plen);
	ret = route_own(now, p, err, errlen);
	if (!ret && now && !replace)
		ret = xnf_errf(err, errlen, -EEXIST, "route %s exists", p);
	if (!ret && conf_put_route(c, r))
		ret = oom(err, errlen);
out:
	free(r->paths);
	return ret;
}

int xnf_conf_route_add(struct xnf_conf *c, int family, const void *addr,
		       __u32 plen, const struct xnf_route *rt, bool replace,
		       char *err, size_t errlen)
{
	struct xnf_conf_route r = { .e = { .family = family, .plen = plen } };
	int ret;

	if (rt->type == XNF_RT_MULTIPATH)
		return xnf_errf(err, errlen, -EINVAL,
				"a multipath route is given by its next hops");
	ret = prefix_check(family, addr, plen, err, errlen) ?:
		      nexthop_check(family, rt, err, errlen);
	if (ret)
		return ret;
	memcpy(r.e.addr, addr, family == XNF_AF_INET ? 4 : 16);
	r.e.rt = *rt;
	r.e.rt.origin = XNF_ORIGIN_STATIC;
	r.e.rt.state = XNF_NH_VALID;
	if (rt->type != XNF_RT_UNICAST) {
		/* Only the type: no next hop. */
		memset(&r.e.rt, 0, sizeof(r.e.rt));
		r.e.rt.type = rt->type;
	}
	return route_put(c, &r, replace, err, errlen);
}

int xnf_conf_route_add_multipath(struct xnf_conf *c, int family, const void *addr,
				 __u32 plen, const struct xnf_route *paths,
				 __u32 n, bool replace, char *err, size_t errlen)
{
	struct xnf_conf_route r = { .e = { .family = family, .plen = plen } };
	__u32 i;
	int ret;

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
	ret = prefix_check(family, addr, plen, err, errlen);
	for (i = 0; i < n && !ret; i++)
		ret = nexthop_check(family, &paths[i], err, errlen);
	if (ret)
		return ret;
	memcpy(r.e.addr, addr, family == XNF_AF_INET ? 4 : 16);
	r.e.rt.type = XNF_RT_MULTIPATH;
	r.paths = malloc(n * sizeof(*paths));
	if (!r.paths)
		return oom(err, errlen);
	for (i = 0; i < n; i++) {
		r.paths[i] = paths[i];
		r.paths[i].origin = XNF_ORIGIN_STATIC;
		r.paths[i].state = XNF_NH_VALID;
	}
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
	struct xnf_conf_route *now;
	char p[INET6_ADDRSTRLEN + 8];
	int ret;

	ret = prefix_check(family, addr, plen, err, errlen) ?:
		      conf_touch_route(c, family, addr, plen, err, errlen);
	if (ret)
		return ret;
	prefix_str(family, addr, plen, p, sizeof(p));
	now = conf_route_find(c, family, addr, plen);
	if (!now)
		return xnf_errf(err, errlen, -ENOENT, "no route %s", p);
	ret = route_own(now, p, err, errlen);
	if (!ret)
		conf_drop_route(c, &now->e);
	return ret;
}

int xnf_conf_route_flush(struct xnf_conf *c, char *err, size_t errlen)
{
	struct xnf_conf_route *r;
	__u32 i, k = 0;
	int ret;

	ret = touch_hand_routes(c, err, errlen);
	if (ret)
		return ret;
	/* A mirrored route the candidate knows stays the sync's. */
	for (i = 0; i < c->nroutes; i++) {
		r = &c->routes[i];
		if (r->e.rt.origin == XNF_ORIGIN_STATIC)
			free(r->paths);
		else
			c->routes[k++] = *r;
	}
	c->nroutes = k;
	return 0;
}

int xnf_conf_fdb_add(struct xnf_conf *c, const __u8 mac[6], __u32 ifindex,
		     bool replace, char *err, size_t errlen)
{
	struct xnf_fdb_ent e = { .e.ifindex = ifindex }, *now;
	char m[18], name[IF_NAMESIZE];
	int ret;

	ret = unicast_check(mac, "FDB entry", err, errlen);
	if (!ret && !ifindex)
		ret = xnf_errf(err, errlen, -EINVAL,
			       "an FDB entry needs its device");
	if (!ret)
		ret = conf_touch_fdb(c, mac, err, errlen);
	if (ret)
		return ret;
	now = conf_fdb_find(c, mac);
	if (now && !replace)
		return xnf_errf(err, errlen, -EEXIST,
				"%s is in the FDB already (on %s)",
				mac_str(mac, m), dev_name(now->e.ifindex, name));
	memcpy(e.key.mac, mac, 6);
	return conf_put_fdb(c, &e) ? oom(err, errlen) : 0;
}

int xnf_conf_fdb_del(struct xnf_conf *c, const __u8 mac[6], char *err,
		     size_t errlen)
{
	char m[18];
	int ret;

	ret = conf_touch_fdb(c, mac, err, errlen);
	if (ret)
		return ret;
	if (!conf_fdb_find(c, mac))
		return xnf_errf(err, errlen, -ENOENT, "%s is not in the FDB",
				mac_str(mac, m));
	conf_drop_fdb(c, mac);
	return 0;
}

int xnf_conf_xconnect_add(struct xnf_conf *c, __u32 if1,
			  const struct xnf_xconnect *fwd, __u32 if2,
			  const struct xnf_xconnect *rev, char *err,
			  size_t errlen)
{
	struct xnf_xconnect_ent e1 = { .in = if1, .xc = *fwd },
				e2 = { .in = if2, .xc = *rev };
	const struct xnf_xconnect_ent *now;
	char n1[IF_NAMESIZE], n2[IF_NAMESIZE];
	__u32 i, ends[2] = { if1, if2 };
	int ret;

	if (!if1 || !if2 || if1 == if2)
		return xnf_errf(err, errlen, -EINVAL,
				"a cross-connect joins two different devices");
	if (fwd->ifindex != if2 || rev->ifindex != if1)
		return xnf_errf(err, errlen, -EINVAL,
				"a cross-connect's two directions lead to each other's device");
	for (i = 0; i < 2; i++) {
		ret = conf_touch_xc(c, ends[i], err, errlen);
		if (ret)
			return ret;
		now = conf_xc_find(c, ends[i]);
		/* Re-adding a pair changes its MACs; a third device is
		 * refused. */
		if (now && now->xc.ifindex != ends[!i])
			return xnf_errf(err, errlen, -EBUSY,
					"%s is cross-connected to %s already",
					dev_name(ends[i], n1),
					dev_name(now->xc.ifindex, n2));
	}
	if (conf_put_xc(c, &e1) || conf_put_xc(c, &e2))
		return oom(err, errlen);
	return 0;
}

int xnf_conf_xconnect_remove(struct xnf_conf *c, __u32 ifindex, char *err,
			     size_t errlen)
{
	struct xnf_xconnect_ent *e;
	char name[IF_NAMESIZE];
	__u32 peer;
	int ret;

	ret = conf_touch_xc(c, ifindex, err, errlen);
	if (ret)
		return ret;
	e = conf_xc_find(c, ifindex);
	if (!e)
		return xnf_errf(err, errlen, -ENOENT, "%s is not cross-connected",
				dev_name(ifindex, name));
	peer = e->xc.ifindex;
	conf_drop_xc(c, ifindex);
	e = conf_xc_find(c, peer);
	if (e && e->xc.ifindex == ifindex)
		conf_drop_xc(c, peer);
	return 0;
}

int xnf_conf_fw_add(struct xnf_conf *c, const struct xnf_fw_rule *r,
		    bool auto_prio, char *err, size_t errlen)
{
	char msg[256];
	__u32 last = 0;
	int ret;

	ret = xnf_fw_rule_check(r, msg, sizeof(msg));
	if (ret)
		return xnf_errf(err, errlen, ret, "invalid rule: %s", msg);
	ret = conf_touch_fw(c, err, errlen);
	if (ret)
		return ret;
	ret = xnf_fw_set_add(c->fw, r, auto_prio, NULL);
	if (ret == -EEXIST)
		return xnf_errf(err, errlen, ret, "a rule with prio %u exists",
				r->prio);
	if (ret == -ENOSPC)
		return xnf_errf(err, errlen, ret, "firewall full (%u rules)",
				XNF_FW_MAX_RULES);
	if (ret == -ERANGE) {
		xnf_fw_set_last_prio(c->fw, &last);
		return xnf_errf(err, errlen, ret,
				"no prio above %u is left for the rule", last);
	}
	if (ret)
		return xnf_errf(err, errlen, ret, "invalid rule: %s",
				strerror(-ret));
	return 0;
}

int xnf_conf_fw_del(struct xnf_conf *c, __u32 prio, char *err, size_t errlen)
{
	int ret = conf_touch_fw(c, err, errlen);

	if (ret)
		return ret;
	if (xnf_fw_set_del(c->fw, prio, NULL))
		return xnf_errf(err, errlen, -ENOENT, "no rule with prio %u",
				prio);
	return 0;
}

int xnf_conf_fw_default(struct xnf_conf *c, __u32 action, char *err, size_t errlen)
{
	int ret;

	if (action != XNF_FW_ALLOW && action != XNF_FW_DROP)
		return xnf_errf(err, errlen, -EINVAL,
				"invalid policy %u: allow or drop", action);
	ret = conf_touch_fw(c, err, errlen);
	return ret ?: xnf_fw_set_policy(c->fw, action);
}

int xnf_conf_fw_flush(struct xnf_conf *c, char *err, size_t errlen)
{
	int ret = conf_touch_fw(c, err, errlen);

	if (!ret)
		xnf_fw_set_flush(c->fw);
	return ret;
}

int xnf_conf_nat_add(struct xnf_conf *c, const struct xnf_nat_rule *r,
		     bool auto_prio, char *err, size_t errlen)
{
	int ret = conf_touch_nat(c, err, errlen);

	/* Checked by the add, with the prio the rule gets. */
	return ret ?: xnf_nat_set_add(c->nat, r, auto_prio, err, errlen);
}

int xnf_conf_nat_del(struct xnf_conf *c, __u32 prio, char *err, size_t errlen)
{
	int ret = conf_touch_nat(c, err, errlen);

	if (ret)
		return ret;
	if (xnf_nat_set_del(c->nat, prio))
		return xnf_errf(err, errlen, -ENOENT,
				"nat: no rule with prio %u; 'xnf nat show' lists the rules",
				prio);
	return 0;
}

int xnf_conf_nat_flush(struct xnf_conf *c, char *err, size_t errlen)
{
	int ret = conf_touch_nat(c, err, errlen);

	if (!ret)
		xnf_nat_set_flush(c->nat);
	return ret;
}

/* The keys of xnf_config that are configuration, and their values. */
static const struct {
	const char *key;
	size_t off;
	const char *const vals[4]; /* by value */
	const char *allowed;	   /* for a message */
} cfg_keys[] = {
	/* clang-format off */
	{ "no_route", offsetof(struct xnf_config, no_route),
	  { "pass", "drop" }, "pass or drop" },
	{ "ttl_expired", offsetof(struct xnf_config, ttl_expired),
	  { "pass", "drop" }, "pass or drop" },
	{ "local", offsetof(struct xnf_config, local),
	  { "pass", "drop" }, "pass or drop" },
	{ "l2_miss", offsetof(struct xnf_config, l2_miss),
	  { "pass", "drop", "flood" }, "flood, pass or drop" },
	{ "xsk_fallback", offsetof(struct xnf_config, xsk_fallback),
	  { "pass", "drop" }, "pass or drop" },
	{ "martian", offsetof(struct xnf_config, martian),
	  { "pass", "drop" }, "pass or drop" },
	/* Not an action: on or off (bpf/fcache.bpf.h). */
	{ "flow_cache", offsetof(struct xnf_config, flow_cache),
	  { "off", "on" }, "on or off" },
	/* Not an action: enum xnf_fw_input. */
	{ "fw_input", offsetof(struct xnf_config, fw_input),
	  { "kernel", "rules" }, "kernel or rules" },
	/* clang-format on */
};
#define N_CFG (sizeof(cfg_keys) / sizeof(cfg_keys[0]))
_Static_assert(XNF_ACT_PASS == 0 && XNF_ACT_DROP == 1 && XNF_ACT_FLOOD == 2,
	       "cfg_keys' values are by index");

static __u32 *cfg_field(struct xnf_config *cfg, size_t i)
{
	return (__u32 *)((char *)cfg + cfg_keys[i].off);
}

/* After cfg_keys, the connection table's: ct_fragments, ct_max, then
 * ct_timeout_<name> by slot (lib/ct.c names them); then the packet log's:
 * log_reasons, log_reasons_limit. */
enum { KEY_CT_FRAGMENTS = N_CFG, KEY_CT_MAX, KEY_CT_TIMEOUT };
/* The slots that have a key, in order: TCP's states (not NONE), then
 * udp, udp_stream, icmp, generic. */
#define N_TIMEOUTS	(__XNF_CT_TO_MAX - 1)
#define KEY_LOG_REASONS (KEY_CT_TIMEOUT + N_TIMEOUTS)
#define KEY_LOG_LIMIT	(KEY_LOG_REASONS + 1)
#define N_KEYS		(KEY_LOG_LIMIT + 1)

int conf_cfg_keys(void)
{
	return N_KEYS;
}

int xnf_conf_key(const struct xnf_conf *c, size_t i, const char **key,
		 char *val, size_t len)
{
	__u32 v, slot;

	if (i >= N_KEYS)
		return -1;
	if (i < N_CFG) {
		v = *cfg_field((struct xnf_config *)&c->cfg, i);
		*key = cfg_keys[i].key;
		snprintf(val, len, "%s",
			 v < 4 && cfg_keys[i].vals[v] ? cfg_keys[i].vals[v] :
							"?");
	} else if (i == KEY_CT_FRAGMENTS) {
		*key = "ct_fragments";
		snprintf(val, len, "%s",
			 c->ct.cfg.fragments == XNF_CT_FRAG_DROP ? "drop" :
								   "pass");
	} else if (i == KEY_CT_MAX) {
		*key = "ct_max";
		snprintf(val, len, "%u", c->ct.max);
	} else if (i == KEY_LOG_REASONS) {
		*key = "log_reasons";
		xnf_log_reasons_format(c->cfg.log_reasons, val, len);
	} else if (i == KEY_LOG_LIMIT) {
		*key = "log_reasons_limit";
		snprintf(val, len, "%u/%s", c->cfg.log_rate,
			 xnf_log_unit_name(c->cfg.log_unit_s) ?: "?");
	} else {
		slot = i - KEY_CT_TIMEOUT + 1;
		*key = xnf_ct_timeout_name(slot);
		snprintf(val, len, "%u", c->ct.cfg.timeout[slot]);
	}
	return 0;
}

int xnf_conf_settings(struct xnf_dp *dp, struct xnf_conf **out, char *err,
		      size_t errlen)
{
	struct xnf_conf *c;
	int ret;

	ret = xnf_conf_running(dp, &c);
	if (ret)
		return xnf_errf(err, errlen, ret, "out of memory");
	ret = conf_touch_cfg(c, err, errlen);
	if (ret) {
		xnf_conf_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

/* The connection table's keys: a number of seconds, or entries. */
static int conf_ct_set(struct xnf_conf *c, const char *key, const char *val,
		       char *err, size_t errlen)
{
	int slot = xnf_ct_timeout_slot(key);
	unsigned long long n;
	char *end;
	int ret;

	if (!strcmp(key, "ct_fragments")) {
		if (strcmp(val, "pass") && strcmp(val, "drop"))
			return xnf_errf(err, errlen, -EINVAL,
					"invalid value '%s' for %s: expected pass or drop",
					val, key);
		ret = conf_touch_cfg(c, err, errlen);
		if (!ret)
			c->ct.cfg.fragments = strcmp(val, "drop") ?
						      XNF_CT_FRAG_PASS :
						      XNF_CT_FRAG_DROP;
		return ret;
	}
	if (strcmp(key, "ct_max") && slot <= 0)
		return xnf_errf(err, errlen, -EINVAL, "unknown key '%s'", key);
	errno = 0;
	n = strtoull(val, &end, 10);
	if (slot > 0 && (errno || end == val || *end || *val == '-' || !n ||
			 n > 0xffffffffULL))
		return xnf_errf(err, errlen, -EINVAL,
				"invalid value '%s' for %s: expected seconds, 1 to 4294967295",
				val, key);
	if (slot <= 0 && (errno || end == val || *end || *val == '-' ||
			  n < XNF_CT_MAX_MIN || n > XNF_CT_MAX_MAX))
		return xnf_errf(err, errlen, -EINVAL,
				"invalid value '%s' for %s: expected entries, %u to %u",
				val, key, XNF_CT_MAX_MIN, XNF_CT_MAX_MAX);
	ret = conf_touch_cfg(c, err, errlen);
	if (ret)
		return ret;
	if (slot > 0)
		c->ct.cfg.timeout[slot] = n;
	else
		c->ct.max = n;
	return 0;
}

/* The packet log's keys: which reasons' drops and passes are logged, and
 * the limit of each (lib/pktlog.c reads the syntax). */
static int conf_log_set(struct xnf_conf *c, const char *key, const char *val,
			char *err, size_t errlen)
{
	__u32 rate, unit_s;
	__u64 mask;
	int ret;

	if (!strcmp(key, "log_reasons")) {
		ret = xnf_log_reasons_parse(val, &mask, err, errlen);
		if (!ret)
			ret = conf_touch_cfg(c, err, errlen);
		if (!ret)
			c->cfg.log_reasons = mask;
		return ret;
	}
	ret = xnf_log_rate_parse(val, &rate, &unit_s, err, errlen);
	if (!ret)
		ret = conf_touch_cfg(c, err, errlen);
	if (!ret) {
		c->cfg.log_rate = rate;
		c->cfg.log_unit_s = unit_s;
	}
	return ret;
}

int xnf_conf_config_set(struct xnf_conf *c, const char *key, const char *val,
			char *err, size_t errlen)
{
	size_t i;
	__u32 v;
	int ret;

	if (!strncmp(key, "ct_", 3))
		return conf_ct_set(c, key, val, err, errlen);
	if (!strcmp(key, "log_reasons") || !strcmp(key, "log_reasons_limit"))
		return conf_log_set(c, key, val, err, errlen);
	for (i = 0; i < N_CFG && strcmp(key, cfg_keys[i].key); i++)
		;
	if (i == N_CFG)
		return xnf_errf(err, errlen, -EINVAL, "unknown key '%s'", key);
	for (v = 0; v < 4; v++)
		if (cfg_keys[i].vals[v] && !strcmp(val, cfg_keys[i].vals[v]))
			break;
	if (v == 4)
		return xnf_errf(err, errlen, -EINVAL,
				"invalid value '%s' for %s: expected %s", val,
				key, cfg_keys[i].allowed);
	ret = conf_touch_cfg(c, err, errlen);
	if (!ret)
		*cfg_field(&c->cfg, i) = v;
	return ret;
}

int xnf_conf_destroy(struct xnf_conf *c, char *err, size_t errlen)
{
	struct xnf_nat_set *nat;
	struct xnf_fw_set *fw;
	int ret;

	ret = conf_touch_all_att(c, err, errlen);
	if (ret)
		return ret;
	if (c->natt)
		return xnf_errf(err, errlen, -EBUSY,
				"xnf is still attached to %s%s: detach first",
				c->att[0].dev, c->natt > 1 ? " and others" : "");
	fw = xnf_fw_set_new();
	nat = xnf_nat_set_new();
	if (!fw || !nat) {
		xnf_fw_set_free(fw);
		xnf_nat_set_free(nat);
		return oom(err, errlen);
	}
	/* A fresh instance's configuration, whole from here on. */
	parts_free(c);
	xnf_conf_free(c->base);
	c->base = NULL;
	xnf_fw_set_free(c->fw);
	c->fw = fw;
	xnf_nat_set_free(c->nat);
	c->nat = nat;
	xnf_cfg_default(&c->cfg);
	xnf_ct_settings_default(&c->ct);
	c->whole = c->cfg_known = true;
	c->destroy = true;
	return 0;
}
