// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * commit.c - a candidate made the running configuration (include/conf.h):
 * the difference, the checks before any change, the changes in order, and
 * the journal that makes a commit all or nothing even when it is killed.
 *
 * The difference is a list of changes, in the order they are made: the
 * exception actions (one write), the firewall (one switch), attachments,
 * route, FDB and cross-connect adds and replaces, then removals, detaches
 * last. `xnf apply check` prints the same list the commit makes.
 *
 * A commit of more than one change is journalled first (journal.c), so
 * that a kill leaves nothing the next writer cannot undo. A commit of one
 * change needs no journal: each transaction of the library is all or
 * nothing by itself (attach, detach and a chain switch repaired by
 * xnf_open, a route, an FDB entry, the firewall and the exception actions
 * written in one step).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <linux/if_link.h>

#include "conf.h"
#include "conf_priv.h"
#include "placement.h"
#include "priv.h"

/* ---- the difference ---- */

static int diff_push(struct xnf_conf_diff *d, enum xnf_conf_obj obj,
		     enum xnf_conf_op op, const void *old, const void *new,
		     __u32 key)
{
	struct xnf_conf_change *v;

	if (d->n == d->cap) {
		v = realloc(d->v, (d->cap ? 2 * d->cap : 16) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = d->cap ? 2 * d->cap : 16;
	}
	d->v[d->n++] = (struct xnf_conf_change){ obj, op, old, new, key };
	return 0;
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

static bool rule_same(const struct xnf_fw_rule *a, const struct xnf_fw_rule *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* The firewall's changes: the default, then rules by prio. */
static int diff_fw(struct xnf_conf_diff *d, const struct xnf_fw_set *from,
		   const struct xnf_fw_set *to)
{
	const struct xnf_fw_rule **f, **t;
	__u32 nf, nt, i = 0, j = 0;
	int ret = -ENOMEM;

	if (xnf_fw_set_default(from) != xnf_fw_set_default(to) &&
	    diff_push(d, XNF_OBJ_FW_DEFAULT, XNF_OP_CHANGE, from, to, 0))
		return -ENOMEM;
	f = fw_by_prio(from, &nf);
	t = fw_by_prio(to, &nt);
	if (!f || !t)
		goto out;
	while (i < nf || j < nt) {
		if (j == nt || (i < nf && f[i]->prio < t[j]->prio))
			ret = diff_push(d, XNF_OBJ_FW_RULE, XNF_OP_REMOVE,
					f[i++], NULL, 0);
		else if (i == nf || t[j]->prio < f[i]->prio)
			ret = diff_push(d, XNF_OBJ_FW_RULE, XNF_OP_ADD, NULL,
					t[j++], 0);
		else if (!rule_same(f[i], t[j]))
			ret = diff_push(d, XNF_OBJ_FW_RULE, XNF_OP_CHANGE,
					f[i++], t[j++], 0);
		else
			i++, j++, ret = 0;
		if (ret)
			goto out;
	}
	ret = 0;
out:
	free(f);
	free(t);
	return ret;
}

/* The NAT rules' changes by prio (both sets are in prio order). */
static int diff_nat(struct xnf_conf_diff *d, const struct xnf_nat_set *from,
		    const struct xnf_nat_set *to)
{
	const struct xnf_nat_rule *f = from->r, *t = to->r;
	__u32 i = 0, j = 0;
	int ret = 0;

	while (!ret && (i < from->n || j < to->n)) {
		if (j == to->n || (i < from->n && f[i].prio < t[j].prio))
			ret = diff_push(d, XNF_OBJ_NAT_RULE, XNF_OP_REMOVE,
					&f[i++], NULL, 0);
		else if (i == from->n || t[j].prio < f[i].prio)
			ret = diff_push(d, XNF_OBJ_NAT_RULE, XNF_OP_ADD, NULL,
					&t[j++], 0);
		else if (!xnf_nat_rule_same(&f[i], &t[j]))
			ret = diff_push(d, XNF_OBJ_NAT_RULE, XNF_OP_CHANGE,
					&f[i++], &t[j++], 0);
		else
			i++, j++;
	}
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

/* Neither the XDP mode nor the placement can change under a running
 * program: such a change is a detach and an attach. */
static bool att_reattach(const struct xnf_conf_attach *now,
			 const struct xnf_conf_attach *a)
{
	return now->xdp_flags != a->xdp_flags || !place_equal(now, a);
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

/* The pair of @c that @in is in, as it is in @other: both directions. */
static bool xc_pair_same(const struct xnf_conf *c, __u32 in,
			 const struct xnf_conf *other)
{
	const struct xnf_xconnect_ent *a = conf_xc_find(c, in), *b, *oa, *ob;

	if (!a)
		return false;
	b = conf_xc_find(c, a->xc.ifindex);
	oa = conf_xc_find(other, in);
	ob = conf_xc_find(other, a->xc.ifindex);
	if (!b || !oa || !ob)
		return false;
	return !memcmp(&a->xc, &oa->xc, sizeof(a->xc)) &&
	       !memcmp(&b->xc, &ob->xc, sizeof(b->xc));
}

/* @e is the end of a whole pair of @c that names it: its lower ifindex. */
static bool xc_pair_end(const struct xnf_conf *c,
			const struct xnf_xconnect_ent *e)
{
	const struct xnf_xconnect_ent *peer = conf_xc_find(c, e->xc.ifindex);

	return peer && peer->xc.ifindex == e->in && e->in < peer->in;
}

static int diff_adds(struct xnf_conf_diff *d, const struct xnf_conf *from,
		     const struct xnf_conf *to)
{
	const struct xnf_conf_attach *a, *an;
	const struct xnf_conf_route *r, *rn;
	const struct xnf_fdb_ent *e, *en;
	__u32 i;
	int ret = 0;

	for (i = 0; i < to->natt && !ret; i++) {
		a = &to->att[i];
		an = conf_att_find(from, a->dev);
		if (!an)
			ret = diff_push(d, XNF_OBJ_ATTACH, XNF_OP_ADD, NULL, a,
					0);
		else if (att_reattach(an, a) || a->reload ||
			 !chain_equal(&an->chain, &a->chain))
			ret = diff_push(d, XNF_OBJ_ATTACH, XNF_OP_CHANGE, an, a,
					0);
	}
	for (i = 0; i < to->nroutes && !ret; i++) {
		r = &to->routes[i];
		rn = conf_route_find(from, r->e.family, r->e.addr, r->e.plen);
		if (!rn || !route_same(rn, r))
			ret = diff_push(d, XNF_OBJ_ROUTE,
					rn ? XNF_OP_CHANGE : XNF_OP_ADD, rn, r,
					0);
	}
	for (i = 0; i < to->nfdb && !ret; i++) {
		e = &to->fdb[i];
		en = conf_fdb_find(from, e->key.mac);
		if (!en || en->e.ifindex != e->e.ifindex)
			ret = diff_push(d, XNF_OBJ_FDB,
					en ? XNF_OP_CHANGE : XNF_OP_ADD, en, e,
					0);
	}
	return ret;
}

/* Cross-connects by pair: a pair whose ends stay but whose MACs change is
 * changed (removed and added again: xnf_xconnect_add() refuses an end
 * that is cross-connected to another device), the others go or come. */
static int diff_xconnects(struct xnf_conf_diff *d, const struct xnf_conf *from,
			  const struct xnf_conf *to)
{
	const struct xnf_xconnect_ent *e, *o;
	__u32 i;
	int ret = 0;

	for (i = 0; i < from->nxc && !ret; i++) {
		e = &from->xc[i];
		if (!xc_pair_end(from, e) || xc_pair_same(from, e->in, to))
			continue;
		o = conf_xc_find(to, e->in);
		if (o && o->xc.ifindex == e->xc.ifindex && xc_pair_end(to, o))
			ret = diff_push(d, XNF_OBJ_XCONNECT, XNF_OP_CHANGE, e,
					o, 0);
		else
			ret = diff_push(d, XNF_OBJ_XCONNECT, XNF_OP_REMOVE, e,
					NULL, 0);
	}
	for (i = 0; i < to->nxc && !ret; i++) {
		e = &to->xc[i];
		if (!xc_pair_end(to, e) || xc_pair_same(to, e->in, from))
			continue;
		o = conf_xc_find(from, e->in);
		if (!(o && o->xc.ifindex == e->xc.ifindex && xc_pair_end(from, o)))
			ret = diff_push(d, XNF_OBJ_XCONNECT, XNF_OP_ADD, NULL,
					e, 0);
	}
	return ret;
}

static int diff_removals(struct xnf_conf_diff *d, const struct xnf_conf *from,
			 const struct xnf_conf *to)
{
	const struct xnf_conf_route *r;
	__u32 i;
	int ret = 0;

	for (i = 0; i < from->nroutes && !ret; i++) {
		r = &from->routes[i];
		if (!conf_route_find(to, r->e.family, r->e.addr, r->e.plen))
			ret = diff_push(d, XNF_OBJ_ROUTE, XNF_OP_REMOVE, r,
					NULL, 0);
	}
	for (i = 0; i < from->nfdb && !ret; i++)
		if (!conf_fdb_find(to, from->fdb[i].key.mac))
			ret = diff_push(d, XNF_OBJ_FDB, XNF_OP_REMOVE,
					&from->fdb[i], NULL, 0);
	for (i = 0; i < from->natt && !ret; i++)
		if (!conf_att_find(to, from->att[i].dev))
			ret = diff_push(d, XNF_OBJ_ATTACH, XNF_OP_REMOVE,
					&from->att[i], NULL, 0);
	return ret;
}

/* @to against @from, in the order of the changes. Where a part is not
 * known to both (cfg, fw of a candidate over what runs that no edit
 * touched), it does not change. */
static int diff_build(const struct xnf_conf *from, const struct xnf_conf *to,
		      struct xnf_conf_diff *d)
{
	char vf[XNF_CONF_VAL_MAX], vt[XNF_CONF_VAL_MAX];
	const char *kf, *kt;
	int i, ret = 0;

	d->from = from;
	d->to = to;
	for (i = 0; from->cfg_known && to->cfg_known && i < conf_cfg_keys(); i++) {
		xnf_conf_key(from, i, &kf, vf, sizeof(vf));
		xnf_conf_key(to, i, &kt, vt, sizeof(vt));
		if (strcmp(vf, vt) && diff_push(d, XNF_OBJ_CONFIG, XNF_OP_CHANGE,
						&from->cfg, &to->cfg, i))
			return -ENOMEM;
	}
	if (from->fw && to->fw)
		ret = diff_fw(d, from->fw, to->fw);
	if (!ret && from->nat && to->nat)
		ret = diff_nat(d, from->nat, to->nat);
	if (!ret)
		ret = diff_adds(d, from, to);
	if (!ret)
		ret = diff_xconnects(d, from, to);
	if (!ret)
		ret = diff_removals(d, from, to);
	return ret;
}

void xnf_conf_diff_free(struct xnf_conf_diff *d)
{
	if (!d)
		return;
	xnf_conf_free(d->owned);
	free(d->v);
	free(d);
}

/* The diff of @c against what runs on @dp (NULL: a fresh instance). */
static int diff_of(struct xnf_dp *dp, const struct xnf_conf *c,
		   struct xnf_conf_diff **out, char *err, size_t errlen)
{
	struct xnf_conf_diff *d = calloc(1, sizeof(*d));
	const struct xnf_conf *from;
	int ret;

	if (!d)
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	if (!c->whole && c->dp != dp && c->dp)
		ret = xnf_errf(err, errlen, -EINVAL,
			       "the candidate was made over another instance");
	else if (!c->whole)
		ret = 0;
	else if (dp)
		ret = xnf_conf_read(dp, &d->owned, err, errlen);
	else
		ret = xnf_conf_new(&d->owned) ?
			      xnf_errf(err, errlen, -ENOMEM, "out of memory") :
			      0;
	from = c->whole ? d->owned : c->base;
	if (!ret && diff_build(from, c, d))
		ret = xnf_errf(err, errlen, -ENOMEM, "out of memory");
	if (ret) {
		xnf_conf_diff_free(d);
		return ret;
	}
	*out = d;
	return 0;
}

bool xnf_conf_fresh(const struct xnf_conf *c)
{
	struct xnf_conf_diff *d;
	bool fresh;

	if ((!c->whole && c->dp) || diff_of(NULL, c, &d, NULL, 0))
		return false;
	fresh = !d->n;
	xnf_conf_diff_free(d);
	return fresh;
}

/* ---- the checks before any change ---- */

/* What an attachment of @a needs besides itself: its ifindex in this
 * namespace and, with a placement, the plan (NULL without), whose
 * warnings are said when it is made (@warn), not when it is checked. */
static int attach_prepare(const struct xnf_conf_attach *a, bool warn,
			  __u32 *ifindex, struct xnf_plan **plan, char *err,
			  size_t errlen)
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
	for (i = 0; warn && i < (*plan)->nwarnings; i++)
		pr_warn("%s\n", (*plan)->warnings[i]);
	return 0;
}

/* @from's rules edited into @to's in *@out, keeping the slot (so the hit
 * counter) of every rule both have. */
static int fw_target(const struct xnf_fw_set *from, const struct xnf_fw_set *to,
		     struct xnf_fw_set **out)
{
	const struct xnf_fw_rule **f = NULL, **t = NULL, *rules;
	struct xnf_fw_set *set;
	__u32 nf, nt, i, j;
	int ret = -ENOMEM;

	*out = NULL;
	set = xnf_fw_set_dup(from);
	f = fw_by_prio(from, &nf);
	t = fw_by_prio(to, &nt);
	if (!f || !t || !set)
		goto out;
	/* Every rule of @from that @to does not have, out; then in what
	 * @to has and @from had not. */
	rules = xnf_fw_set_rules(from);
	ret = 0;
	for (i = 0, j = 0; i < nf && !ret; i++) {
		while (j < nt && t[j]->prio < f[i]->prio)
			j++;
		if (j == nt || !rule_same(f[i], t[j]))
			ret = xnf_fw_set_replace(set, f[i] - rules, NULL);
	}
	for (i = 0, j = 0; j < nt && !ret; j++) {
		while (i < nf && f[i]->prio < t[j]->prio)
			i++;
		if (i == nf || !rule_same(f[i], t[j]))
			ret = xnf_fw_set_add(set, t[j], false, NULL);
	}
	if (!ret)
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

/* An attachment whose chain has l3fwd, counted into *@l3; with fib also
 * into *@nfib and its name into @fib, for a message. */
static void count_l3fwd(const char *dev, const __u32 *nf, __u32 len,
			bool l3_fib, int *l3, int *nfib, char *fib, size_t size)
{
	size_t at = strlen(fib);
	__u32 i;

	for (i = 0; i < len && nf[i] != XNF_NF_L3FWD; i++)
		;
	if (i == len)
		return;
	(*l3)++;
	if (!l3_fib)
		return;
	if (at < size)
		snprintf(fib + at, size - at, "%s%.15s", (*nfib)++ ? ", " : "",
			 dev);
}

/*
 * One source of truth for the routes: a route written by hand (every
 * route of a configuration is) is refused while a route sync owns the
 * tables, and while every l3fwd attached, as the commit leaves the
 * attachments, forwards by the kernel's FIB, which never reads it. @r is
 * the first route the commit adds or changes (deleting one is never
 * refused); @dp what runs (NULL: a fresh instance).
 */
static int routes_check(struct xnf_dp *dp, const struct xnf_conf_diff *d,
			const struct xnf_conf_route *r, char *err, size_t errlen)
{
	char names[XNF_MAX_PORTS][16], fib[128] = "", p[INET6_ADDRSTRLEN + 8];
	const struct xnf_conf_attach *a;
	struct xnf_rtsync_info si = {};
	struct xnf_dev_status st;
	int n = 0, i, l3 = 0, nfib = 0;

	inet_ntop(r->e.family == XNF_AF_INET ? AF_INET : AF_INET6, r->e.addr, p,
		  sizeof(p));
	snprintf(p + strlen(p), sizeof(p) - strlen(p), "/%u", r->e.plen);
	if (dp && !xnf_rtsync_get(dp, &si) && si.table)
		return xnf_errf(err, errlen, -EBUSY,
				"route %s: the routes of this instance are synced from kernel table %u by a route sync (%s%u); change the kernel's routes, or take the routes back from the sync first",
				p, si.table,
				xnf_rtsync_runs(dp) ? "pid " : "exited, was pid ",
				si.pid);
	/* The candidate's attachments, and those that run and it leaves
	 * alone. */
	for (i = 0; i < (int)d->to->natt; i++) {
		a = &d->to->att[i];
		count_l3fwd(a->dev, a->chain.nf, a->chain.len, a->chain.l3_fib,
			    &l3, &nfib, fib, sizeof(fib));
	}
	if (dp)
		n = xnf_dev_list(dp, names, XNF_MAX_PORTS);
	for (i = 0; i < n && i < XNF_MAX_PORTS; i++) {
		if (conf_att_find(d->from, names[i]) ||
		    conf_att_find(d->to, names[i]) ||
		    xnf_dev_status(dp, names[i], &st))
			continue;
		count_l3fwd(names[i], st.info.nf, st.info.chain_len,
			    st.info.l3_fib, &l3, &nfib, fib, sizeof(fib));
	}
	if (l3 && nfib == l3)
		return xnf_errf(err, errlen, -EOPNOTSUPP,
				"route %s: l3fwd on %s forwards by the kernel's FIB ('fib') and never reads xnf's routes; add the route to the kernel's table, or attach l3fwd without 'fib'",
				p, fib);
	return 0;
}

/* Everything that can fail before a change: new attachments' devices and
 * placements, routes written by hand where they would not be used
 * (routes_check; not for an @undo, which puts back what ran), the
 * firewall compiles. *@fw: the rule set to switch to, when the firewall
 * changes; *@bad: the change refused, or d->n. */
static int diff_check(struct xnf_dp *dp, const struct xnf_conf_diff *d,
		      bool undo, struct xnf_fw_set **fw, __u32 *bad, char *err,
		      size_t errlen)
{
	const struct xnf_conf_attach *a, *now;
	struct xnf_fw_compiled *compiled;
	struct xnf_plan *plan;
	__u32 i, ifindex;
	bool fw_changes = false, routes_checked = false, ct_checked = false;
	int ret;

	*fw = NULL;
	*bad = d->n;
	for (i = 0; i < d->n; i++) {
		fw_changes |= d->v[i].obj == XNF_OBJ_FW_DEFAULT ||
			      d->v[i].obj == XNF_OBJ_FW_RULE;
		/* The connection table's size, only where it can change. */
		if (d->v[i].obj == XNF_OBJ_CONFIG && !undo && !ct_checked) {
			ct_checked = true;
			ret = xnf_ct_settings_check(dp, &d->to->ct, d->fresh,
						    err, errlen);
			if (ret)
				goto refused;
		}
		if (d->v[i].obj == XNF_OBJ_ROUTE &&
		    d->v[i].op != XNF_OP_REMOVE && !undo && !routes_checked) {
			routes_checked = true;
			ret = routes_check(dp, d, d->v[i].new, err, errlen);
			if (ret)
				goto refused;
		}
		if (d->v[i].obj != XNF_OBJ_ATTACH || d->v[i].op == XNF_OP_REMOVE)
			continue;
		a = d->v[i].new;
		now = d->v[i].old;
		if (now && !att_reattach(now, a))
			continue;
		ret = attach_prepare(a, false, &ifindex, &plan, err, errlen);
		free(plan);
		if (ret)
			goto refused;
	}
	if (!fw_changes)
		return 0;
	ret = fw_target(d->from->fw, d->to->fw, fw);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot build the firewall rule set: %s",
				strerror(-ret));
	ret = xnf_fw_compile(xnf_fw_set_rules(*fw), XNF_FW_MAX_RULES,
			     xnf_fw_set_default(*fw), &compiled, err, errlen);
	if (!ret)
		xnf_fw_compiled_free(compiled);
	if (ret) {
		xnf_fw_set_free(*fw);
		*fw = NULL;
	}
	return ret;
refused:
	*bad = i;
	return ret;
}

int xnf_conf_diff(struct xnf_dp *dp, const struct xnf_conf *c,
		  struct xnf_conf_diff **out, char *err, size_t errlen)
{
	struct xnf_fw_set *fw;
	__u32 bad;
	int ret;

	ret = diff_of(dp, c, out, err, errlen);
	if (ret)
		return ret;
	(*out)->fresh = !dp || dp->created;
	ret = diff_check(dp, *out, false, &fw, &bad, err, errlen);
	xnf_fw_set_free(fw);
	if (ret) {
		xnf_conf_diff_free(*out);
		*out = NULL;
	}
	return ret;
}

/* ---- the changes ---- */

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

	ret = attach_prepare(a, true, &o.ifindex, &plan, err, errlen);
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

static int change_attach(struct xnf_dp *dp, const struct xnf_conf_change *ch,
			 struct xnf_conf_changes *done, char *err, size_t errlen)
{
	const struct xnf_conf_attach *now = ch->old, *a = ch->new;
	int ret;

	switch (ch->op) {
	case XNF_OP_ADD:
		ret = do_attach(dp, a, err, errlen);
		done->attached += !ret;
		return ret;
	case XNF_OP_REMOVE:
		ret = xnf_detach(dp, now->dev, err, errlen);
		done->detached += !ret;
		return ret;
	case XNF_OP_CHANGE:
		break;
	}
	if (!att_reattach(now, a)) {
		ret = do_chain_set(dp, a, err, errlen);
		done->chains += !ret;
		return ret;
	}
	ret = xnf_detach(dp, a->dev, err, errlen);
	if (!ret)
		ret = do_attach(dp, a, err, errlen);
	done->reattached += !ret;
	return ret;
}

static int change_route(struct xnf_dp *dp, const struct xnf_conf_change *ch,
			char *err, size_t errlen)
{
	const struct xnf_conf_route *r = ch->new ?: ch->old;
	const struct xnf_route_entry *e = &r->e;
	int ret;

	if (ch->op == XNF_OP_REMOVE) {
		ret = xnf_route_remove(dp, e->family, e->addr, e->plen, err,
				       errlen);
		return ret == -ENOENT ? 0 : ret;
	}
	/* A multipath route that replaces one keeps the flows of its
	 * staying next hops (resilient). */
	if (r->npaths)
		return xnf_route_add_multipath(dp, e->family, e->addr, e->plen,
					       r->paths, r->npaths,
					       ch->op == XNF_OP_CHANGE, err,
					       errlen);
	return xnf_route_add(dp, e->family, e->addr, e->plen, &e->rt,
			     ch->op == XNF_OP_CHANGE, err, errlen);
}

static int change_fdb(struct xnf_dp *dp, const struct xnf_conf_change *ch,
		      char *err, size_t errlen)
{
	const struct xnf_fdb_ent *e = ch->new ?: ch->old;
	int ret;

	if (ch->op != XNF_OP_REMOVE)
		/* The candidate's edit found it free, or replaces it. */
		return xnf_fdb_add(dp, e->key.mac, e->e.ifindex, true, err,
				   errlen);
	ret = xnf_fdb_del(dp, e->key.mac);
	if (ret && ret != -ENOENT)
		return xnf_errf(err, errlen, ret,
				"cannot delete an FDB entry: %s", strerror(-ret));
	return 0;
}

static int change_xconnect(struct xnf_dp *dp, const struct xnf_conf_diff *d,
			   const struct xnf_conf_change *ch, char *err,
			   size_t errlen)
{
	const struct xnf_xconnect_ent *e, *peer;
	int ret = 0;

	if (ch->op != XNF_OP_ADD) {
		e = ch->old;
		ret = xnf_xconnect_remove(dp, e->in, err, errlen);
		if (ret == -ENOENT)
			ret = 0;
	}
	if (ret || ch->op == XNF_OP_REMOVE)
		return ret;
	e = ch->new;
	peer = conf_xc_find(d->to, e->xc.ifindex);
	return xnf_xconnect_add(dp, e->in, &e->xc, peer->in, &peer->xc, err,
				errlen);
}

/* The library's transactions a change takes: what the journal is for
 * when it is more than one. A cross-connect pair is two writes. */
static __u32 change_steps(const struct xnf_conf_change *ch)
{
	const struct xnf_conf_attach *now = ch->old, *a = ch->new;

	switch (ch->obj) {
	case XNF_OBJ_ATTACH:
		return ch->op == XNF_OP_CHANGE && att_reattach(now, a) ? 2 : 1;
	case XNF_OBJ_XCONNECT:
		return ch->op == XNF_OP_CHANGE ? 4 : 2;
	default:
		return 1;
	}
}

/*
 * Makes the changes of @d, in order: the exception actions and the
 * firewall (@fw) once, at their first change. *@failed: the change that
 * failed; @step names the crash point after each change.
 */
static int diff_exec(struct xnf_dp *dp, const struct xnf_conf_diff *d,
		     const struct xnf_fw_set *fw, const char *step,
		     struct xnf_conf_changes *done, __u32 *failed, char *err,
		     size_t errlen)
{
	const struct xnf_conf_change *ch;
	bool cfg_done = false, fw_done = false, nat_done = false;
	struct xnf_config cfg;
	__u32 i;
	int ret = 0;

	memset(done, 0, sizeof(*done));
	for (i = 0; i < d->n && !ret; i++) {
		ch = &d->v[i];
		switch (ch->obj) {
		case XNF_OBJ_CONFIG:
			if (cfg_done)
				continue;
			cfg = d->to->cfg;
			cfg.schema = XNF_SCHEMA;
			ret = xnf_cfg_write(dp, &cfg);
			if (ret)
				xnf_errf(err, errlen, ret, "cannot write %s: %s",
					 XNF_MAP_STR(XNF_MAP_CFG),
					 strerror(-ret));
			else
				ret = xnf_ct_settings_write(dp, &d->to->ct,
							    d->fresh, err,
							    errlen);
			done->config += !ret;
			cfg_done = true;
			break;
		case XNF_OBJ_FW_DEFAULT:
		case XNF_OBJ_FW_RULE:
			if (fw_done)
				continue;
			ret = xnf_fw_apply(dp, fw, err, errlen);
			done->firewall += !ret;
			fw_done = true;
			break;
		case XNF_OBJ_NAT_RULE:
			if (nat_done)
				continue;
			ret = xnf_nat_apply(dp, d->to->nat, err, errlen);
			done->nat += !ret;
			nat_done = true;
			break;
		case XNF_OBJ_ATTACH:
			ret = change_attach(dp, ch, done, err, errlen);
			break;
		case XNF_OBJ_ROUTE:
			ret = change_route(dp, ch, err, errlen);
			done->routes += !ret;
			break;
		case XNF_OBJ_FDB:
			ret = change_fdb(dp, ch, err, errlen);
			done->fdb += !ret;
			break;
		case XNF_OBJ_XCONNECT:
			ret = change_xconnect(dp, d, ch, err, errlen);
			done->xconnects += !ret;
			break;
		}
		if (ret)
			*failed = i;
		else
			xnf_crash_point(step);
	}
	return ret;
}

/* ---- undoing ---- */

/* A candidate over what runs on @dp that makes every element of @from
 * and @to what @from holds (absent when it holds none). */
static int undo_candidate(struct xnf_dp *dp, const struct xnf_conf *from,
			  const struct xnf_conf *to, struct xnf_conf **out,
			  char *err, size_t errlen)
{
	const struct xnf_conf *both[2] = { from, to };
	struct xnf_conf *u;
	__u32 i;
	int k, ret;

	ret = xnf_conf_running(dp, &u);
	if (ret)
		return xnf_errf(err, errlen, ret, "out of memory");
	for (k = 0; k < 2 && !ret; k++) {
		const struct xnf_conf *c = both[k];

		for (i = 0; i < c->natt && !ret; i++)
			ret = conf_touch_att(u, c->att[i].dev, err, errlen);
		for (i = 0; i < c->nroutes && !ret; i++)
			ret = conf_touch_route(u, c->routes[i].e.family,
					       c->routes[i].e.addr,
					       c->routes[i].e.plen, err, errlen);
		for (i = 0; i < c->nfdb && !ret; i++)
			ret = conf_touch_fdb(u, c->fdb[i].key.mac, err, errlen);
		for (i = 0; i < c->nxc && !ret; i++)
			ret = conf_touch_xc(u, c->xc[i].in, err, errlen);
	}
	if (!ret && from->cfg_known && !(ret = conf_touch_cfg(u, err, errlen))) {
		u->cfg = from->cfg;
		u->ct = from->ct;
	}
	if (!ret && from->fw && !(ret = conf_touch_fw(u, err, errlen))) {
		xnf_fw_set_free(u->fw);
		u->fw = xnf_fw_set_dup(from->fw);
		ret = u->fw ? 0 : -ENOMEM;
	}
	if (!ret && from->nat && !(ret = conf_touch_nat(u, err, errlen))) {
		xnf_nat_set_free(u->nat);
		u->nat = xnf_nat_set_dup(from->nat);
		ret = u->nat ? 0 : -ENOMEM;
	}
	/* Then what @from holds, in place of what runs. */
	for (k = 0; k < 2 && !ret; k++) {
		const struct xnf_conf *c = both[k];

		for (i = 0; i < c->natt; i++)
			conf_drop_att(u, c->att[i].dev);
		for (i = 0; i < c->nroutes; i++)
			conf_drop_route(u, &c->routes[i].e);
		for (i = 0; i < c->nfdb; i++)
			conf_drop_fdb(u, c->fdb[i].key.mac);
		for (i = 0; i < c->nxc; i++)
			conf_drop_xc(u, c->xc[i].in);
	}
	if (!ret)
		ret = conf_put_all(u, from);
	if (ret) {
		xnf_conf_free(u);
		return ret == -ENOMEM ?
			       xnf_errf(err, errlen, ret, "out of memory") :
			       ret;
	}
	*out = u;
	return 0;
}

/* Makes what @from and @to hold what @from holds again, reading what
 * runs now (a commit that failed or was killed changed some of it). A
 * whole @from: everything. */
int conf_undo(struct xnf_dp *dp, const struct xnf_conf *from,
	      const struct xnf_conf *to, bool whole, char *err, size_t errlen)
{
	struct xnf_conf_changes done;
	struct xnf_conf_diff *d = NULL;
	struct xnf_conf *u = NULL;
	struct xnf_fw_set *fw = NULL;
	__u32 failed;
	int ret;

	if (whole)
		ret = conf_copy(from, true, &u) ?
			      xnf_errf(err, errlen, -ENOMEM, "out of memory") :
			      0;
	else
		ret = undo_candidate(dp, from, to, &u, err, errlen);
	if (!ret)
		ret = diff_of(dp, u, &d, err, errlen);
	/* A commit changes ct_max only on an instance made for it: an undo
	 * that finds another size puts back that one's. */
	if (!ret)
		d->fresh = true;
	if (!ret)
		ret = diff_check(dp, d, true, &fw, &failed, err, errlen);
	if (!ret)
		ret = diff_exec(dp, d, fw, "rollback:changed", &done, &failed,
				err, errlen);
	xnf_fw_set_free(fw);
	xnf_conf_diff_free(d);
	xnf_conf_free(u);
	return ret;
}

/* ---- the commit ---- */

static void append(char *err, size_t errlen, const char *fmt, const char *s)
{
	size_t len;

	if (!err || !errlen)
		return;
	len = strlen(err);
	snprintf(err + len, errlen - len, fmt, s);
}

/* The transactions of the library @d takes: the exception actions and
 * the firewall one each, whatever their changes. */
static __u32 diff_steps(const struct xnf_conf_diff *d)
{
	bool cfg = false, fw = false, nat = false;
	__u32 i, n = 0;

	for (i = 0; i < d->n; i++) {
		switch (d->v[i].obj) {
		case XNF_OBJ_CONFIG:
			n += !cfg;
			cfg = true;
			break;
		case XNF_OBJ_FW_DEFAULT:
		case XNF_OBJ_FW_RULE:
			n += !fw;
			fw = true;
			break;
		case XNF_OBJ_NAT_RULE:
			n += !nat;
			nat = true;
			break;
		default:
			n += change_steps(&d->v[i]);
		}
	}
	return n;
}

int xnf_conf_commit(struct xnf_dp *dp, const struct xnf_conf *c,
		    const struct xnf_commit_opts *o,
		    struct xnf_commit_result *res, char *err, size_t errlen)
{
	struct xnf_commit_result r = { .failed_obj = -1, .failed_op = -1 };
	char uerr[512], old[XNF_ROOT_MAX + 8];
	bool upgrade = xnf_upgrade_pending(dp, old, sizeof(old));
	bool fresh = dp->created, journal = false, ran = false;
	struct xnf_conf_diff *d = NULL;
	struct xnf_fw_set *fw = NULL;
	__u32 failed = 0;
	int ret;

	if (c->destroy && xnf_conf_fresh(c) && !upgrade) {
		ret = xnf_destroy(dp, err, errlen);
		r.destroyed = !ret;
		goto out;
	}
	ret = diff_of(dp, c, &d, err, errlen);
	if (!ret) {
		/* Writes clear dp->created: what the instance was when the
		 * commit began is what its changes may do (ct_max). */
		d->fresh = fresh;
		ret = diff_check(dp, d, false, &fw, &failed, err, errlen);
	}
	if (ret) {
		if (d && failed < d->n) {
			r.failed_obj = d->v[failed].obj;
			r.failed_op = d->v[failed].op;
		}
		goto out;
	}
	/* An upgrade is not undone (what was taken over from the old
	 * instance would be detached): the next apply continues it. */
	journal = diff_steps(d) > 1 && !upgrade;
	if (journal) {
		ret = conf_journal_write(dp, d, c->whole, diff_steps(d),
					 o ? o->cmd : NULL);
		if (ret) {
			journal = false;
			xnf_errf(err, errlen, ret,
				 "cannot pin the commit's journal at %s/%s: %s; nothing was changed",
				 dp->root, CONF_JOURNAL_PIN, strerror(-ret));
			goto out;
		}
		xnf_crash_point("commit:journaled");
	}
	ran = true;
	ret = diff_exec(dp, d, fw, "commit:changed", &r.done, &failed, err,
			errlen);
	if (ret) {
		r.failed_obj = d->v[failed].obj;
		r.failed_op = d->v[failed].op;
	} else if (upgrade) {
		ret = xnf_upgrade_finish(dp, err, errlen);
	}
	if (!ret) {
		xnf_crash_point("commit:done");
		if (o && o->done)
			o->done(d, o->arg);
	} else if (upgrade) {
		append(err, errlen,
		       "; the upgrade from %s stopped there: what was taken over runs, the rest runs from the old instance; apply again to finish it",
		       old);
	} else if (conf_undo(dp, d->from, d->to, c->whole, uerr, sizeof(uerr))) {
		/* The journal stays: the next writer tries again. */
		append(err, errlen,
		       "; undoing the changes made before it failed too (%s)",
		       uerr);
	} else {
		r.rolled_back = true;
		append(err, errlen, "%s",
		       "; the changes made before it were undone");
	}
out:
	if (journal && (!ret || r.rolled_back))
		conf_journal_unpin(dp);
	/* An instance made for this commit goes with a commit that failed. */
	if (ret && fresh && !r.destroyed && (!ran || r.rolled_back) &&
	    !xnf_destroy(dp, uerr, sizeof(uerr)))
		r.destroyed = true;
	if (res)
		*res = r;
	xnf_fw_set_free(fw);
	xnf_conf_diff_free(d);
	return ret;
}
