// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * routes.c - the route tables (xnf_rt4 / xnf_rt6) and their writes.
 *
 * The tables exist in two copies, the second named _b; packets read the
 * one xnf_config.rt_copy names (live), and the other (spare) is equal to
 * it between writes. A single write changes the spare copy, then the live
 * one: a packet sees the old route or the new one. A batch (route sync's
 * coalesced updates) changes the spare copy only and is made visible at
 * once by flipping rt_copy; the commit then replays the batch's prefixes
 * into the copy that packets no longer read.
 *
 * Counts (nexthop.c): a route holds one reference on its nexthop or group
 * while both copies hold the same value, one per copy while they differ
 * (inside a batch). So a batch write releases the spare copy's value when
 * it was the batch's own (differed from the live one), and the replay
 * releases the value it overwrites. A writer killed between taking a
 * count and writing the route leaves a count too high, which keeps an
 * object alive and never frees one in use.
 *
 * A batch sets xnf_config.rt_pending before its first write and clears it
 * when the copies are equal again; a writer that finds it set (the batch's
 * writer was killed) replays every prefix of either copy (repair).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "xnf.h"
#include "priv.h"

/* The prefixes a batch wrote, in order (repeats allowed). */
struct xnf_rt_batch {
	struct xnf_rt_key_ent {
		int family;
		struct xnf_rt6_key key;
	} * keys;
	size_t n, cap;
	__u32 live; /* the live copy, which only the batch's commit flips */
};

static int live_copy(struct xnf_dp *dp, __u32 *copy)
{
	struct xnf_config cfg;
	int err;

	if (dp->rt_batch) {
		*copy = dp->rt_batch->live;
		return 0;
	}
	err = xnf_cfg_read(dp, &cfg);

	*copy = err ? 0 : cfg.rt_copy & 1;
	return err;
}

/* The table of @family in copy @copy. */
static int rt_fd(struct xnf_dp *dp, int family, __u32 copy)
{
	if (family == XNF_AF_INET)
		return xnf_table_fd(dp, copy ? XNF_T_RT4_B : XNF_T_RT4);
	return xnf_table_fd(dp, copy ? XNF_T_RT6_B : XNF_T_RT6);
}

static int route_key(int family, const void *addr, __u32 plen,
		     struct xnf_rt6_key *key)
{
	memset(key, 0, sizeof(*key));
	if (family == XNF_AF_INET && plen <= 32) {
		key->prefixlen = plen;
		memcpy(key->addr, addr, 4);
		return 0;
	}
	if (family == XNF_AF_INET6 && plen <= 128) {
		key->prefixlen = plen;
		memcpy(key->addr, addr, 16);
		return 0;
	}
	return -EINVAL;
}

/* The value of exactly the prefix @key in trie @fd, if it is there: a trie
 * lookup answers with the longest prefix that matches, which is ours when
 * its length is. */
static bool rt_get(int fd, const struct xnf_rt6_key *key, struct xnf_rt_val *v)
{
	return !bpf_map_lookup_elem(fd, key, v) && v->plen == key->prefixlen;
}

static bool rt_same(bool ha, const struct xnf_rt_val *a, bool hb,
		    const struct xnf_rt_val *b)
{
	if (ha != hb)
		return false;
	return !ha ||
	       (a->type == b->type && a->nh == b->nh && a->origin == b->origin);
}

/* Releases what route value @v used. */
static void rt_put(struct xnf_dp *dp, const struct xnf_rt_val *v)
{
	if (v->type == XNF_RT_UNICAST)
		xnf_nh_put(dp, v->nh);
	else if (v->type == XNF_RT_MULTIPATH)
		xnf_nhg_put(dp, v->nh);
}

/* @v (NULL: none) into copy @copy of the prefix @key. */
static int rt_put_copy(struct xnf_dp *dp, int family, __u32 copy,
		       const struct xnf_rt6_key *key, const struct xnf_rt_val *v)
{
	int fd = rt_fd(dp, family, copy);

	if (v)
		return bpf_map_update_elem(fd, key, v, BPF_ANY) ? -errno : 0;
	if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
		return -errno;
	return 0;
}

static int cfg_set_rt(struct xnf_dp *dp, __u32 copy, __u32 pending)
{
	struct xnf_config cfg;
	__u32 zero = 0;
	int err;

	err = xnf_cfg_read(dp, &cfg);
	if (err)
		return err;
	cfg.rt_copy = copy;
	cfg.rt_pending = pending;
	/* One 4-byte word changes per call: a packet reads the old copy
	 * number or the new one. */
	return bpf_map_update_elem(xnf_table_fd(dp, XNF_T_CFG), &zero, &cfg,
				   BPF_ANY) ?
		       -errno :
		       0;
}

static int batch_note(struct xnf_rt_batch *b, int family,
		      const struct xnf_rt6_key *key)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		void *p = realloc(b->keys, cap * sizeof(*b->keys));

		if (!p)
			return -ENOMEM;
		b->keys = p;
		b->cap = cap;
	}
	b->keys[b->n].family = family;
	b->keys[b->n++].key = *key;
	return 0;
}

/*
 * Writes @v (NULL: deletes) for the prefix, @v's objects counted already.
 * @flags BPF_NOEXIST: -EEXIST when the prefix is there (in the writer's
 * view: the spare copy inside a batch, else the live one).
 */
static int rt_write(struct xnf_dp *dp, int family, const void *addr, __u32 plen,
		    struct xnf_rt_val *v, __u64 flags)
{
	struct xnf_rt_val s, l;
	struct xnf_rt6_key key;
	bool hs, hl;
	__u32 live;
	int err;

	err = route_key(family, addr, plen, &key);
	if (!err)
		err = live_copy(dp, &live);
	if (err)
		return err;
	if (v)
		v->plen = plen;
	hs = rt_get(rt_fd(dp, family, !live), &key, &s);
	hl = rt_get(rt_fd(dp, family, live), &key, &l);
	if (flags == BPF_NOEXIST && (dp->rt_batch ? hs : hl))
		return -EEXIST;
	if (!v && !(dp->rt_batch ? hs : hl))
		return -ENOENT;
	if (dp->rt_batch) {
		err = batch_note(dp->rt_batch, family, &key);
		if (!err)
			err = rt_put_copy(dp, family, !live, &key, v);
		if (err)
			return err;
		/* The spare copy's value was the batch's own: no packet
		 * saw it. */
		if (hs && !rt_same(hs, &s, hl, &l))
			rt_put(dp, &s);
		/* Equal to the live value: one count for both copies. */
		if (v && rt_same(true, v, hl, &l))
			rt_put(dp, v);
		return 0;
	}
	err = rt_put_copy(dp, family, !live, &key, v);
	if (!err)
		err = rt_put_copy(dp, family, live, &key, v);
	if (err) {
		/* Back in step with the live copy. */
		rt_put_copy(dp, family, !live, &key, hl ? &l : NULL);
		return err;
	}
	if (hl)
		rt_put(dp, &l);
	return xnf_tables_changed(dp);
}

int xnf_route_set(struct xnf_dp *dp, int family, const void *addr, __u32 plen,
		  const struct xnf_route *rt, __u64 flags)
{
	struct xnf_rt_val v = { .type = rt->type, .origin = rt->origin };
	struct xnf_nexthop nh;
	int err;

	if (rt->type == XNF_RT_MULTIPATH || rt->why >= __XNF_WHY_MAX)
		return -EINVAL;
	/* A kernel route's reason lives where others name their next hop. */
	if (rt->type == XNF_RT_KERNEL)
		v.nh = rt->why;
	if (rt->type == XNF_RT_UNICAST) {
		xnf_route_nexthop(rt, &nh);
		err = xnf_nh_get(dp, &nh, &v.nh);
		if (err)
			return err;
	}
	err = rt_write(dp, family, addr, plen, &v, flags);
	if (err)
		rt_put(dp, &v);
	return err;
}

/*
 * The group a multipath route over @ids gets when it replaces @old: the
 * old route's own group changed in place (its flows on the staying next
 * hops keep their path, as with the kernel's resilient groups), or a new
 * or shared group, a new one seeded from what the route used before
 * (its group's buckets, or its single next hop in all of them). Never in
 * place inside a batch (the live copy still uses the old group), nor
 * when the route changes hands (origin).
 */
static int mp_group(struct xnf_dp *dp, const struct xnf_rt_val *old,
		    const __u32 *ids, __u32 n, __u32 origin, __u32 *id,
		    bool *in_place)
{
	struct xnf_nhgroup seed = {};
	__u32 b;
	int err;

	*in_place = false;
	if (old && old->type == XNF_RT_MULTIPATH && old->origin == origin &&
	    !dp->rt_batch && !xnf_nhg_lookup(dp, old->nh, &seed) &&
	    seed.refs == 1) {
		err = xnf_nhg_set(dp, old->nh, ids, n);
		if (!err) {
			*id = old->nh;
			*in_place = true;
		}
		return err;
	}
	if (old && old->type == XNF_RT_UNICAST)
		for (b = 0; b < XNF_NHG_BUCKETS; b++)
			seed.bucket[b] = old->nh;
	return xnf_nhg_get_seeded(dp, ids, n, old ? &seed : NULL, id);
}

/* The value of exactly the prefix in the view of the writer (the spare
 * copy inside a batch, else the live one). */
static bool rt_view(struct xnf_dp *dp, int family, const void *addr, __u32 plen,
		    struct xnf_rt_val *v)
{
	struct xnf_rt6_key key;
	__u32 live;

	if (route_key(family, addr, plen, &key) || live_copy(dp, &live))
		return false;
	return rt_get(rt_fd(dp, family, dp->rt_batch ? !live : live), &key, v);
}

int xnf_route_set_multipath(struct xnf_dp *dp, int family, const void *addr,
			    __u32 plen, const struct xnf_route *paths, __u32 n,
			    __u64 flags)
{
	struct xnf_rt_val v = { .type = XNF_RT_MULTIPATH }, old;
	__u32 ids[XNF_NHG_PATHS] = {}, i;
	struct xnf_nexthop nh;
	bool had_old, in_place = false;
	int err = 0;

	if (!n || n > XNF_NHG_PATHS)
		return -EINVAL;
	if (n == 1)
		return xnf_route_set(dp, family, addr, plen, paths, flags);
	v.origin = paths[0].origin;
	had_old = rt_view(dp, family, addr, plen, &old);
	if (had_old && flags == BPF_NOEXIST)
		return -EEXIST;
	for (i = 0; i < n && !err; i++) {
		if (paths[i].type != XNF_RT_UNICAST) {
			err = -EINVAL;
			break;
		}
		xnf_route_nexthop(&paths[i], &nh);
		err = xnf_nh_get(dp, &nh, &ids[i]);
	}
	/* The group counts its members itself. */
	if (!err)
		err = mp_group(dp, had_old ? &old : NULL, ids, i, v.origin,
			       &v.nh, &in_place);
	while (i--)
		if (ids[i])
			xnf_nh_put(dp, ids[i]);
	if (err)
		return err;
	if (in_place)
		return xnf_tables_changed(dp);
	err = rt_write(dp, family, addr, plen, &v, flags);
	if (err)
		xnf_nhg_put(dp, v.nh);
	return err;
}

int xnf_route_del(struct xnf_dp *dp, int family, const void *addr, __u32 plen)
{
	return rt_write(dp, family, addr, plen, NULL, BPF_ANY);
}

/* Puts copy @to of the prefix @key in step with copy @from, releasing the
 * value it overwrites (the copies differed: each value was counted). */
static int rt_replay(struct xnf_dp *dp, int family, __u32 from, __u32 to,
		     const struct xnf_rt6_key *key)
{
	struct xnf_rt_val f, t;
	bool hf, ht;
	int err;

	hf = rt_get(rt_fd(dp, family, from), key, &f);
	ht = rt_get(rt_fd(dp, family, to), key, &t);
	if (rt_same(hf, &f, ht, &t))
		return 0;
	err = rt_put_copy(dp, family, to, key, hf ? &f : NULL);
	if (!err && ht)
		rt_put(dp, &t);
	return err;
}

int xnf_route_batch_begin(struct xnf_dp *dp)
{
	__u32 live;
	int err;

	if (dp->rt_batch)
		return -EBUSY;
	err = live_copy(dp, &live);
	if (err)
		return err;
	dp->rt_batch = calloc(1, sizeof(*dp->rt_batch));
	if (!dp->rt_batch)
		return -ENOMEM;
	dp->rt_batch->live = live;
	/* Before the first write: a writer killed from here on leaves the
	 * copies to be put back in step. */
	err = cfg_set_rt(dp, live, 1);
	if (err) {
		free(dp->rt_batch);
		dp->rt_batch = NULL;
	}
	return err;
}

/* Replays the batch's prefixes from copy @from into the other, then
 * marks the copies equal with @from live. */
static int batch_end(struct xnf_dp *dp, __u32 from)
{
	struct xnf_rt_batch *b = dp->rt_batch;
	size_t i;
	int err = 0;

	dp->rt_batch = NULL;
	for (i = 0; i < b->n && !err; i++) {
		xnf_crash_point("route-batch:replay");
		err = rt_replay(dp, b->keys[i].family, from, !from,
				&b->keys[i].key);
	}
	/* On failure rt_pending stays: the next writer repairs. */
	if (!err)
		err = cfg_set_rt(dp, from, 0);
	free(b->keys);
	free(b);
	return err;
}

int xnf_route_batch_commit(struct xnf_dp *dp)
{
	__u32 live;
	int err, ret;

	if (!dp->rt_batch)
		return -EINVAL;
	err = live_copy(dp, &live);
	xnf_crash_point("route-batch:commit");
	/* The flip: packets read the batch's copy from here on. */
	if (!err)
		err = cfg_set_rt(dp, !live, 1);
	if (err) {
		xnf_route_batch_abort(dp);
		return err;
	}
	err = batch_end(dp, !live);
	ret = xnf_tables_changed(dp);
	return err ?: ret;
}

void xnf_route_batch_abort(struct xnf_dp *dp)
{
	__u32 live;

	if (!dp->rt_batch)
		return;
	if (live_copy(dp, &live)) {
		free(dp->rt_batch->keys);
		free(dp->rt_batch);
		dp->rt_batch = NULL;
		return;
	}
	batch_end(dp, live);
}

/* Every key of trie @fd appended to @b. */
static int keys_note(int fd, int family, struct xnf_rt_batch *b)
{
	struct xnf_rt6_key key, next;
	void *prev = NULL;
	int err = 0;

	memset(&key, 0, sizeof(key));
	memset(&next, 0, sizeof(next));
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		err = batch_note(b, family, &key);
	}
	if (!err && errno != ENOENT)
		err = -errno;
	return err;
}

int xnf_route_copies_repair(struct xnf_dp *dp)
{
	struct xnf_config cfg;
	int err, fam, c;

	err = xnf_cfg_read(dp, &cfg);
	if (err || !cfg.rt_pending || dp->rt_batch)
		return err;
	dp->rt_batch = calloc(1, sizeof(*dp->rt_batch));
	if (!dp->rt_batch)
		return -ENOMEM;
	dp->rt_batch->live = cfg.rt_copy & 1;
	for (fam = XNF_AF_INET; fam <= XNF_AF_INET6 && !err;
	     fam += XNF_AF_INET6 - XNF_AF_INET)
		for (c = 0; c < 2 && !err; c++)
			err = keys_note(rt_fd(dp, fam, c), fam, dp->rt_batch);
	if (err) {
		free(dp->rt_batch->keys);
		free(dp->rt_batch);
		dp->rt_batch = NULL;
		return err;
	}
	return batch_end(dp, cfg.rt_copy & 1);
}

int xnf_route_table_fd(struct xnf_dp *dp, int family)
{
	__u32 live;

	live_copy(dp, &live);
	return rt_fd(dp, family, live);
}

int xnf_route_lookup(struct xnf_dp *dp, int family, const void *addr,
		     struct xnf_route_entry *e)
{
	struct xnf_rt6_key key;
	struct xnf_rt_val v;
	struct xnf_nexthop nh;
	__u32 alen = family == XNF_AF_INET ? 4 : 16, i;
	int err;

	err = route_key(family, addr, 8 * alen, &key);
	if (err)
		return err;
	if (bpf_map_lookup_elem(xnf_route_table_fd(dp, family), &key, &v))
		return -errno;
	memset(e, 0, sizeof(*e));
	e->family = family;
	e->plen = v.plen;
	for (i = 0; i < alen && 8 * i < v.plen; i++)
		e->addr[i] = key.addr[i] &
			     (v.plen >= 8 * (i + 1) ?
				      0xff :
				      (__u8)(0xff00 >> (v.plen % 8)));
	if (v.type == XNF_RT_UNICAST && !xnf_nh_lookup(dp, v.nh, &nh))
		xnf_nexthop_route(&nh, &e->rt);
	xnf_rt_entry_val(e, &v);
	return 0;
}

int xnf_route_get(struct xnf_dp *dp, int family, const void *addr, __u32 plen,
		  struct xnf_route_entry *e)
{
	struct xnf_rt6_key key;
	struct xnf_rt_val v;
	struct xnf_nexthop nh;
	int err;

	err = route_key(family, addr, plen, &key);
	if (err)
		return err;
	if (!rt_get(xnf_route_table_fd(dp, family), &key, &v))
		return -ENOENT;
	memset(e, 0, sizeof(*e));
	e->family = family;
	e->plen = plen;
	memcpy(e->addr, key.addr, family == XNF_AF_INET ? 4 : 16);
	if (v.type == XNF_RT_UNICAST) {
		err = xnf_nh_lookup(dp, v.nh, &nh);
		if (err)
			return err == -ENOENT ? -EUCLEAN : err;
		xnf_nexthop_route(&nh, &e->rt);
	}
	xnf_rt_entry_val(e, &v);
	return 0;
}

void xnf_rt_entry_val(struct xnf_route_entry *e, const struct xnf_rt_val *v)
{
	e->nh = v->nh;
	e->rt.type = v->type;
	e->rt.origin = v->origin;
	e->rt.why = v->type == XNF_RT_KERNEL ? v->nh : 0;
}

int xnf_rtsync_get(struct xnf_dp *dp, struct xnf_rtsync_info *info)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_RTSYNC), &zero, info) ?
		       -errno :
		       0;
}

int xnf_rtsync_set(struct xnf_dp *dp, const struct xnf_rtsync_info *info)
{
	__u32 zero = 0;

	return bpf_map_update_elem(xnf_table_fd(dp, XNF_T_RTSYNC), &zero, info,
				   BPF_ANY) ?
		       -errno :
		       0;
}
