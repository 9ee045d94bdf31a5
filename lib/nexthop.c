// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * nexthop.c - next hops as objects (xnf_nh) and multipath groups
 * (xnf_nhg), and the routes that use them (xnf_rt4 / xnf_rt6).
 *
 * A route names a nexthop id or a group id. Routes with the same next hop
 * share one nexthop object (deduplicated by value through xnf_nh_idx), so
 * changing it (a neighbour's new MAC) is one write that every route
 * through it sees at once: the new value goes into the id's spare slot of
 * xnf_nh, then xnf_nh_live[id] flips to it (include/uapi/xnf_l3fwd.h).
 * Objects count the routes and groups that use them (refs)
 * and are deleted by the write that drops the last use. The counts are
 * exact because every writer holds the instance lock (xnf_open); a writer
 * killed between a route write and the count's leaves a count too high,
 * which keeps an object alive, never frees one in use.
 *
 * Groups are resilient: XNF_NHG_BUCKETS buckets, each naming a member;
 * a change of members moves as few buckets as it can (nhg_rebalance).
 *
 * Order of writes, so that no packet ever finds a dangling id: an object
 * is written before the route that names it, and deleted after the last
 * route that named it was rewritten.
 *
 * A next hop through a gateway keeps the gateway's neighbour entry
 * managed (xnf_neigh_keep) from its first route to its last: XDP never
 * confirms a neighbour, and the kernel would let the entry go stale with
 * a MAC that may no longer be the gateway's.
 */
#include <errno.h>
#include <stdbool.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>

#include "xnf.h"
#include "neigh.h"
#include "xnf_nh.h"
#include "priv.h"

/* Every id of @fd (a table keyed by __u32) into a new array. */
static int ids_read(int fd, __u32 vsz, __u32 max, __u32 **ids, void **vals,
		    __u32 *n)
{
	int err;

	*ids = calloc(max, sizeof(**ids));
	*vals = calloc(max, vsz);
	if (!*ids || !*vals) {
		err = -ENOMEM;
		goto err;
	}
	err = xnf_map_read_all(fd, sizeof(__u32), vsz, max, *ids, *vals, n);
	if (!err)
		return 0;
err:
	free(*ids);
	free(*vals);
	*ids = NULL;
	*vals = NULL;
	return err;
}

/* The lowest id not in @ids[@n], from 1 (0 means none). */
static __u32 id_free(const __u32 *ids, __u32 n, __u32 max)
{
	__u8 *used = calloc(max + 2, 1);
	__u32 i, id = 0;

	if (!used)
		return 0;
	for (i = 0; i < n; i++)
		if (ids[i] <= max)
			used[ids[i]] = 1;
	for (i = 1; i <= max && !id; i++)
		if (!used[i])
			id = i;
	free(used);
	return id;
}

/* A grace period: no packet still reads what it found before the call.
 * XDP runs under RCU, and membarrier's GLOBAL command is
 * synchronize_rcu(). It is refused on nohz_full kernels; there a pause far
 * longer than any XDP program runs stands in for it. */
static void grace_period(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(50 * 1000);
}

static int live_read(struct xnf_dp *dp, __u32 id, struct xnf_nh_live *l)
{
	if (!id || id >= XNF_MAX_NH)
		return -ENOENT;
	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_NH_LIVE), &id, l))
		return -errno;
	return l->refs ? 0 : -ENOENT; /* refs 0: a free id */
}

/* Rewrites the live word: a packet reads its slot, which is the same
 * bytes when only refs change. */
static int live_write(struct xnf_dp *dp, __u32 id, const struct xnf_nh_live *l)
{
	return bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NH_LIVE), &id, l,
				   BPF_ANY) ?
		       -errno :
		       0;
}

int xnf_nh_lookup(struct xnf_dp *dp, __u32 id, struct xnf_nexthop *nh)
{
	struct xnf_nh_live l;
	__u32 slot;
	int err;

	err = live_read(dp, id, &l);
	if (err)
		return err;
	slot = l.slot - 1;
	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_NH), &slot, nh))
		return -errno;
	nh->refs = l.refs;
	return 0;
}

/* The key of the dedup index: the value without the count. */
static void idx_key(const struct xnf_nexthop *nh, struct xnf_nexthop *key)
{
	*key = *nh;
	key->refs = 0;
}

/* A free id, or 0: the lowest never used (no packet ever read its
 * slots), else the lowest freed one, whose live word goes to @old (a
 * packet that looked up a route just deleted may still read its slot).
 * Only a new next hop reads the whole array. */
static __u32 id_alloc(struct xnf_dp *dp, struct xnf_nh_live *old)
{
	struct xnf_nh_live *l = calloc(XNF_MAX_NH, sizeof(*l));
	__u32 *ids = calloc(XNF_MAX_NH, sizeof(*ids)), n, i, id = 0;

	memset(old, 0, sizeof(*old));
	if (l && ids &&
	    !xnf_map_read_all(xnf_table_fd(dp, XNF_T_NH_LIVE), sizeof(__u32),
			      sizeof(*l), XNF_MAX_NH, ids, l, &n)) {
		for (i = 0; i < n && !id; i++)
			if (ids[i] && !l[i].slot)
				id = ids[i];
		for (i = 0; i < n && !id; i++)
			if (ids[i] && !l[i].refs) {
				id = ids[i];
				*old = l[i];
			}
	}
	free(l);
	free(ids);
	return id;
}

int xnf_nh_ref(struct xnf_dp *dp, __u32 id)
{
	struct xnf_nh_live l;
	int err;

	err = live_read(dp, id, &l);
	if (err)
		return err;
	l.refs++;
	return live_write(dp, id, &l);
}

/* The gateway of a new next hop kept resolved; not being able to is a
 * warning: the route forwards, with the MAC followed as the kernel's
 * table has it. (-ENODEV: a device that went away, whose routes go.) */
static void gw_keep(const struct xnf_nexthop *nh)
{
	char a[INET6_ADDRSTRLEN];
	int err;

	if (!nh->gw_family)
		return;
	err = xnf_neigh_keep(nh->gw_family, nh->gw, nh->ifindex);
	if (!err || err == -ENODEV)
		return;
	inet_ntop(nh->gw_family == XNF_AF_INET ? AF_INET : AF_INET6, nh->gw, a,
		  sizeof(a));
	pr_warn("cannot make the neighbour entry of next hop %s managed, so "
		"that the kernel keeps it resolved: %s; a MAC it changes "
		"without telling is not seen until the entry is confirmed\n",
		a, strerror(-err));
}

/* The gateway of a next hop that goes released, unless another next hop
 * (another MTU, another state) has it too. */
static void gw_release(struct xnf_dp *dp, __u32 id, const struct xnf_nexthop *nh)
{
	struct xnf_nexthop *nhs = NULL;
	__u32 *ids = NULL, n, i;

	if (!nh->gw_family || xnf_nh_list(dp, &ids, &nhs, &n))
		return;
	for (i = 0; i < n; i++)
		if (ids[i] != id && nhs[i].ifindex == nh->ifindex &&
		    nhs[i].gw_family == nh->gw_family &&
		    !memcmp(nhs[i].gw, nh->gw, 16))
			break;
	if (i == n)
		xnf_neigh_release(nh->gw_family, nh->gw, nh->ifindex);
	free(ids);
	free(nhs);
}

int xnf_nh_get(struct xnf_dp *dp, const struct xnf_nexthop *nh, __u32 *id)
{
	struct xnf_nh_live l = { .refs = 1 }, old;
	struct xnf_nexthop key;
	__u32 slot;
	int err;

	idx_key(nh, &key);
	if (!bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_NH_IDX), &key, id) &&
	    !xnf_nh_ref(dp, *id))
		return 0;
	/* A new one: slot, then the live word, then the index. A freed id
	 * gets its spare slot, after a grace period, as in an update. */
	*id = id_alloc(dp, &old);
	if (!*id)
		return -ENOSPC;
	slot = 2 * *id;
	if (old.slot) {
		slot = (old.slot - 1) ^ 1;
		grace_period();
	}
	l.slot = slot + 1;
	if (bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NH), &slot, &key, BPF_ANY))
		err = -errno;
	else
		err = live_write(dp, *id, &l);
	if (!err && bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NH_IDX), &key,
					id, BPF_ANY)) {
		err = -errno;
		live_write(dp, *id, &(struct xnf_nh_live){ .slot = l.slot });
	}
	if (err)
		*id = 0;
	else
		gw_keep(nh);
	return err;
}

/* Forgets @id in the index, if the index names it for @nh (two ids may
 * hold equal values after an update; the index names one). */
static void idx_forget(struct xnf_dp *dp, const struct xnf_nexthop *nh, __u32 id)
{
	struct xnf_nexthop key;
	__u32 cur;

	idx_key(nh, &key);
	if (!bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_NH_IDX), &key, &cur) &&
	    cur == id)
		bpf_map_delete_elem(xnf_table_fd(dp, XNF_T_NH_IDX), &key);
}

int xnf_nh_put(struct xnf_dp *dp, __u32 id)
{
	struct xnf_nexthop nh;
	struct xnf_nh_live l;
	bool known;
	int err;

	err = live_read(dp, id, &l);
	if (err)
		return err;
	if (l.refs > 1) {
		l.refs--;
		return live_write(dp, id, &l);
	}
	known = !xnf_nh_lookup(dp, id, &nh);
	if (known)
		idx_forget(dp, &nh, id);
	/* Free, but its slot stays live for a packet still holding the id. */
	l.refs = 0;
	err = live_write(dp, id, &l);
	if (!err && known)
		gw_release(dp, id, &nh);
	return err;
}

int xnf_nh_update(struct xnf_dp *dp, __u32 id, const struct xnf_nexthop *nh)
{
	struct xnf_nexthop old, key;
	struct xnf_nh_live l;
	__u32 spare;
	int err;

	err = live_read(dp, id, &l);
	if (!err)
		err = xnf_nh_lookup(dp, id, &old);
	if (err)
		return err;
	/* The spare slot was live before the last flip: wait until no
	 * packet can still be reading it, then fill it and flip. */
	spare = (l.slot - 1) ^ 1;
	grace_period();
	idx_key(nh, &key);
	if (bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NH), &spare, &key, BPF_ANY))
		return -errno;
	l.slot = spare + 1;
	err = live_write(dp, id, &l);
	if (err)
		return err;
	idx_forget(dp, &old, id);
	bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NH_IDX), &key, &id,
			    BPF_NOEXIST);
	xnf_tables_changed(dp);
	return 0;
}

int xnf_nh_list(struct xnf_dp *dp, __u32 **ids, struct xnf_nexthop **nhs,
		__u32 *n)
{
	struct xnf_nh_live *l;
	__u32 cnt, i;
	int err;

	*n = 0;
	err = ids_read(xnf_table_fd(dp, XNF_T_NH_LIVE), sizeof(*l), XNF_MAX_NH,
		       ids, (void **)&l, &cnt);
	if (err)
		return err;
	*nhs = calloc(cnt + 1, sizeof(**nhs));
	if (!*nhs)
		err = -ENOMEM;
	for (i = 0; i < cnt && !err; i++) {
		if (!l[i].refs)
			continue;
		err = xnf_nh_lookup(dp, (*ids)[i], &(*nhs)[*n]);
		/* Freed since the read: readers take no lock, and a route
		 * sync puts next hops while `xnf save` lists them. */
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		(*ids)[(*n)++] = (*ids)[i];
	}
	free(l);
	if (err) {
		free(*ids);
		free(*nhs);
		*ids = NULL;
		*nhs = NULL;
		*n = 0;
	}
	return err;
}

/*
 * Resilient rebalancing: @g's buckets are spread over the @n members @ids
 * (distinct), each getting BUCKETS / n, the first BUCKETS % n of them (by
 * most buckets held already, then by position) one more. A bucket keeps its
 * member while that member stays and is not over its share; the freed
 * buckets go, in order, to the members under theirs. So removing a member
 * moves only its buckets, and adding one takes only what it gets, evenly
 * from the others.
 */
void xnf_nhg_rebalance(struct xnf_nhgroup *g, const __u32 *ids, __u32 n)
{
	__u32 have[XNF_NHG_PATHS] = {}, want[XNF_NHG_PATHS], order[XNF_NHG_PATHS];
	int pos[XNF_NHG_BUCKETS];
	__u32 i, j, b, extra;

	if (!n || n > XNF_NHG_PATHS)
		return; /* nhg_check() refuses such sets first */
	for (b = 0; b < XNF_NHG_BUCKETS; b++) {
		pos[b] = -1;
		for (j = 0; j < n; j++)
			if (g->bucket[b] == ids[j] && g->bucket[b]) {
				pos[b] = j;
				have[j]++;
			}
	}
	/* Shares: the remainder to those holding most (a stable sort). */
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && have[order[j]] > have[order[j - 1]]; j--) {
			__u32 t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	extra = XNF_NHG_BUCKETS % n;
	for (i = 0; i < n; i++)
		want[order[i]] = XNF_NHG_BUCKETS / n + (i < extra);
	/* Free the buckets of gone members and over-share ones (from the
	 * top), then fill. */
	memset(have, 0, sizeof(have));
	for (b = 0; b < XNF_NHG_BUCKETS; b++) {
		if (pos[b] >= 0 && have[pos[b]] < want[pos[b]])
			have[pos[b]]++;
		else
			pos[b] = -1;
	}
	for (b = 0, j = 0; b < XNF_NHG_BUCKETS; b++) {
		if (pos[b] >= 0)
			continue;
		while (have[j] >= want[j])
			j++;
		g->bucket[b] = ids[j];
		have[j]++;
	}
	g->n = n;
	memset(g->nh, 0, sizeof(g->nh));
	memcpy(g->nh, ids, n * sizeof(*ids));
}

static bool nhg_member(const struct xnf_nhgroup *g, __u32 id)
{
	__u32 i;

	for (i = 0; i < g->n; i++)
		if (g->nh[i] == id)
			return true;
	return false;
}

/* Same members, in any order. */
static bool nhg_same(const struct xnf_nhgroup *g, const __u32 *ids, __u32 n)
{
	__u32 i;

	if (g->n != n)
		return false;
	for (i = 0; i < n; i++)
		if (!nhg_member(g, ids[i]))
			return false;
	return true;
}

static int nhg_check(const __u32 *ids, __u32 n)
{
	__u32 i, j;

	if (!n || n > XNF_NHG_PATHS)
		return -EINVAL;
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (ids[i] == ids[j] || !ids[i])
				return -EINVAL;
	return ids[0] ? 0 : -EINVAL;
}

static int id_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* The index key of the members @ids[@n]: ascending, the rest 0. */
static void nhg_key(const __u32 *ids, __u32 n, struct xnf_nhg_key *key)
{
	memset(key, 0, sizeof(*key));
	key->n = n;
	memcpy(key->nh, ids, n * sizeof(*ids));
	qsort(key->nh, n, sizeof(*ids), id_cmp);
}

/* Forgets group @id's members in the index, if the index names it. */
static void nhg_idx_forget(struct xnf_dp *dp, const struct xnf_nhgroup *g,
			   __u32 id)
{
	struct xnf_nhg_key key;
	__u32 cur;

	nhg_key(g->nh, g->n, &key);
	if (!bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_NHG_IDX), &key, &cur) &&
	    cur == id)
		bpf_map_delete_elem(xnf_table_fd(dp, XNF_T_NHG_IDX), &key);
}

int xnf_nhg_lookup(struct xnf_dp *dp, __u32 id, struct xnf_nhgroup *g)
{
	return bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_NHG), &id, g) ? -errno :
									  0;
}

/* An address as xnf_nh_flow_hash takes it: the IPv4 address, or the IPv6
 * one folded, in the byte order of the packet, as l3fwd loads it. */
static __u32 flow_addr(int family, const __u8 *a)
{
	__u32 w[4];

	if (family == XNF_AF_INET) {
		memcpy(w, a, 4);
		return w[0];
	}
	memcpy(w, a, 16);
	return xnf_nh_fold6(w);
}

__u32 xnf_flow_hash(const struct xnf_flow *f)
{
	return xnf_nh_flow_hash(flow_addr(f->family, f->src),
				flow_addr(f->family, f->dst),
				f->ports ? htons(f->sport) : 0,
				f->ports ? htons(f->dport) : 0, f->proto);
}

int xnf_nhg_pick(struct xnf_dp *dp, __u32 gid, const struct xnf_flow *f,
		 __u32 *nh, __u32 *bucket)
{
	struct xnf_nhgroup g;
	int err;

	err = xnf_nhg_lookup(dp, gid, &g);
	if (err)
		return err;
	*bucket = xnf_nh_bucket(xnf_flow_hash(f));
	*nh = g.bucket[*bucket];
	return 0;
}

/* Takes one reference on each member of a new group, whose buckets start
 * from @seed's (NULL: empty) so that only the flows the change of members
 * must move move. */
int xnf_nhg_get_seeded(struct xnf_dp *dp, const __u32 *ids, __u32 n,
		       const struct xnf_nhgroup *seed, __u32 *id)
{
	struct xnf_nhgroup *vals = NULL, g;
	struct xnf_nhg_key key;
	__u32 *gids = NULL, cnt, i;
	int err;

	*id = 0;
	err = nhg_check(ids, n);
	if (err)
		return err;
	/* A group with the same members: found through the index, without
	 * reading the table (a full table's routes share a few groups). */
	nhg_key(ids, n, &key);
	if (!bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_NHG_IDX), &key, id) &&
	    !xnf_nhg_lookup(dp, *id, &g) && nhg_same(&g, ids, n)) {
		g.refs++;
		err = bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NHG), id, &g,
					  BPF_EXIST) ?
			      -errno :
			      0;
		goto out;
	}
	err = ids_read(xnf_table_fd(dp, XNF_T_NHG), sizeof(*vals), XNF_MAX_NHG,
		       &gids, (void **)&vals, &cnt);
	if (err)
		goto out;
	*id = id_free(gids, cnt, XNF_MAX_NHG);
	if (!*id) {
		err = -ENOSPC;
		goto out;
	}
	memset(&g, 0, sizeof(g));
	if (seed)
		memcpy(g.bucket, seed->bucket, sizeof(g.bucket));
	xnf_nhg_rebalance(&g, ids, n);
	g.refs = 1;
	for (i = 0; i < n && !err; i++)
		err = xnf_nh_ref(dp, ids[i]);
	if (!err && bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NHG), id, &g,
					BPF_NOEXIST))
		err = -errno;
	if (err)
		while (i--)
			xnf_nh_put(dp, ids[i]);
	else
		bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NHG_IDX), &key, id,
				    BPF_ANY);
out:
	free(gids);
	free(vals);
	if (err)
		*id = 0;
	return err;
}

int xnf_nhg_get(struct xnf_dp *dp, const __u32 *ids, __u32 n, __u32 *id)
{
	return xnf_nhg_get_seeded(dp, ids, n, NULL, id);
}

int xnf_nhg_put(struct xnf_dp *dp, __u32 id)
{
	struct xnf_nhgroup g;
	__u32 i;

	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_NHG), &id, &g))
		return -errno;
	if (g.refs > 1) {
		g.refs--;
		return bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NHG), &id, &g,
					   BPF_EXIST) ?
			       -errno :
			       0;
	}
	nhg_idx_forget(dp, &g, id);
	if (bpf_map_delete_elem(xnf_table_fd(dp, XNF_T_NHG), &id))
		return -errno;
	for (i = 0; i < g.n; i++)
		xnf_nh_put(dp, g.nh[i]);
	return 0;
}

int xnf_nhg_set(struct xnf_dp *dp, __u32 id, const __u32 *ids, __u32 n)
{
	struct xnf_nhg_key key;
	struct xnf_nhgroup g, old;
	__u32 i, j;
	int err;

	err = nhg_check(ids, n);
	if (err)
		return err;
	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_NHG), &id, &g))
		return -errno;
	old = g;
	/* New members are counted before the write names them. */
	for (i = 0; i < n && !err; i++)
		if (!nhg_member(&old, ids[i]))
			err = xnf_nh_ref(dp, ids[i]);
	if (err) {
		while (i--)
			if (!nhg_member(&old, ids[i]))
				xnf_nh_put(dp, ids[i]);
		return err;
	}
	xnf_nhg_rebalance(&g, ids, n);
	/* The whole bucket table at once. */
	if (bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NHG), &id, &g, BPF_EXIST))
		return -errno;
	nhg_idx_forget(dp, &old, id);
	nhg_key(ids, n, &key);
	bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NHG_IDX), &key, &id,
			    BPF_NOEXIST);
	for (j = 0; j < old.n; j++)
		if (!nhg_member(&g, old.nh[j]))
			xnf_nh_put(dp, old.nh[j]);
	xnf_tables_changed(dp);
	return 0;
}

void xnf_route_nexthop(const struct xnf_route *rt, struct xnf_nexthop *nh)
{
	memset(nh, 0, sizeof(*nh));
	nh->ifindex = rt->ifindex;
	memcpy(nh->dmac, rt->dmac, 6);
	memcpy(nh->smac, rt->smac, 6);
	nh->gw_family = rt->gw_family;
	memcpy(nh->gw, rt->gw, 16);
	nh->state = rt->state;
	nh->mtu = rt->mtu;
}

void xnf_nexthop_route(const struct xnf_nexthop *nh, struct xnf_route *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->type = XNF_RT_UNICAST;
	rt->ifindex = nh->ifindex;
	memcpy(rt->dmac, nh->dmac, 6);
	memcpy(rt->smac, nh->smac, 6);
	rt->gw_family = nh->gw_family;
	memcpy(rt->gw, nh->gw, 16);
	rt->state = nh->state;
	rt->mtu = nh->mtu;
}
