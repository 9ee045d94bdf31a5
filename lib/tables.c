// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tables.c - route, FDB and cross-connect changes as one transaction each,
 * as the CLI, a configuration applier or a route sync make them: the egress
 * device becomes an xnf port first (a redirect needs it in the devmap), and
 * stops being one again when the change fails. The primitives they build
 * on (xnf_route_set, xnf_fdb_set, xnf_xconnect_set: dataplane.c) write one
 * entry and nothing else.
 */
#include <errno.h>
#include <stddef.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "xnf.h"
#include "priv.h"

static const char *ifname(__u32 ifindex, char *buf)
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex % 100000000);
	return buf;
}

static bool table_full(int err)
{
	return err == -E2BIG || err == -ENOSPC || err == -ENOMEM;
}

/* Makes @ifindex an egress port if it is not one; *@added says whether
 * this call did, so that a failure later undoes exactly that. */
static int port_get(struct xnf_dp *dp, __u32 ifindex, bool *added, char *err,
		    size_t errlen)
{
	char name[IF_NAMESIZE];
	int ret;

	ret = xnf_port_make(dp, ifindex, added);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot make %s an xnf egress port (%s, its counters in %s): %s%s",
				ifname(ifindex, name), XNF_MAP_STR(XNF_MAP_TX),
				XNF_MAP_STR(XNF_MAP_XMIT), strerror(-ret),
				table_full(ret) ? "; xnf has room for 256 ports" :
						  "");
	return 0;
}

/* Reads all of table @fd (keys of @ksz, values of @vsz bytes) into new
 * arrays. */
static int table_read(int fd, __u32 ksz, __u32 vsz, void **keys, void **vals,
		      __u32 *n)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int err;

	*keys = *vals = NULL;
	*n = 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*keys = calloc(info.max_entries ?: 1, ksz);
	*vals = calloc(info.max_entries ?: 1, vsz);
	if (!*keys || !*vals) {
		err = -ENOMEM;
		goto err;
	}
	err = xnf_map_read_all(fd, ksz, vsz, info.max_entries, *keys, *vals, n);
	if (!err)
		return 0;
err:
	free(*keys);
	free(*vals);
	*keys = *vals = NULL;
	return err;
}

/* Entries of @fd, for a message: -errno when it cannot be read. */
static long map_count(int fd, __u32 ksz, __u32 vsz)
{
	void *keys, *vals;
	__u32 n;
	int err;

	err = table_read(fd, ksz, vsz, &keys, &vals, &n);
	if (err)
		return err;
	free(keys);
	free(vals);
	return n;
}

/* A route over the @n next hops @paths (one, or a multipath set), or of
 * another type (@paths[0] alone). */
static int route_add(struct xnf_dp *dp, int family, const void *addr,
		     __u32 plen, const struct xnf_route *paths, __u32 n,
		     bool replace, char *err, size_t errlen)
{
	char prefix[INET6_ADDRSTRLEN + 8], a[INET6_ADDRSTRLEN];
	int af = family == XNF_AF_INET ? AF_INET : AF_INET6;
	enum xnf_table t = family == XNF_AF_INET ? XNF_T_RT4 : XNF_T_RT6;
	bool added[XNF_NHG_PATHS] = {};
	__u64 flags = replace ? BPF_ANY : BPF_NOEXIST;
	bool port_failed;
	__u32 i;
	int ret = 0;

	if (family != XNF_AF_INET && family != XNF_AF_INET6)
		return xnf_errf(err, errlen, -EAFNOSUPPORT,
				"route: unknown family %d", family);
	if (!n || n > XNF_NHG_PATHS)
		return xnf_errf(err, errlen, -EINVAL,
				"a route has 1 to %d next hops, not %u",
				XNF_NHG_PATHS, n);
	inet_ntop(af, addr, a, sizeof(a));
	snprintf(prefix, sizeof(prefix), "%s/%u", a, plen);
	for (i = 0; i < n && !ret; i++)
		if (paths[i].type == XNF_RT_UNICAST)
			ret = port_get(dp, paths[i].ifindex, &added[i], err,
				       errlen);
	port_failed = ret;
	/* BPF_NOEXIST makes an add's check and insert one step. */
	if (!ret)
		ret = n == 1 ? xnf_route_set(dp, family, addr, plen, paths,
					     flags) :
			       xnf_route_set_multipath(dp, family, addr, plen,
						       paths, n, flags);
	if (!ret)
		return 0;
	for (i = 0; i < n; i++)
		if (added[i])
			xnf_port_del(dp, paths[i].ifindex);
	if (port_failed)
		return ret;
	if (ret == -EEXIST)
		return xnf_errf(err, errlen, ret, "route %s exists", prefix);
	if (table_full(ret))
		return xnf_errf(err, errlen, ret,
				"%s route table full (%ld routes), or its next hops' (%s, %d) or groups' (%s, %d); delete routes first",
				family == XNF_AF_INET ? "IPv4" : "IPv6",
				map_count(xnf_table_fd(dp, t),
					  family == XNF_AF_INET ?
						  sizeof(struct xnf_rt4_key) :
						  sizeof(struct xnf_rt6_key),
					  sizeof(struct xnf_rt_val)),
				XNF_MAP_STR(XNF_MAP_NH), XNF_MAX_NH,
				XNF_MAP_STR(XNF_MAP_NHG), XNF_MAX_NHG);
	return xnf_errf(err, errlen, ret, "cannot write route %s to %s: %s",
			prefix, xnf_table_names[t], strerror(-ret));
}

int xnf_route_add(struct xnf_dp *dp, int family, const void *addr, __u32 plen,
		  const struct xnf_route *rt, bool replace, char *err,
		  size_t errlen)
{
	return route_add(dp, family, addr, plen, rt, 1, replace, err, errlen);
}

int xnf_route_add_multipath(struct xnf_dp *dp, int family, const void *addr,
			    __u32 plen, const struct xnf_route *paths, __u32 n,
			    bool replace, char *err, size_t errlen)
{
	return route_add(dp, family, addr, plen, paths, n, replace, err, errlen);
}

int xnf_route_remove(struct xnf_dp *dp, int family, const void *addr,
		     __u32 plen, char *err, size_t errlen)
{
	char prefix[INET6_ADDRSTRLEN + 8], a[INET6_ADDRSTRLEN];
	int ret;

	inet_ntop(family == XNF_AF_INET ? AF_INET : AF_INET6, addr, a, sizeof(a));
	snprintf(prefix, sizeof(prefix), "%s/%u", a, plen);
	ret = xnf_route_del(dp, family, addr, plen);
	if (ret == -ENOENT)
		return xnf_errf(err, errlen, ret, "no route %s", prefix);
	if (ret)
		return xnf_errf(err, errlen, ret, "cannot delete route %s: %s",
				prefix, strerror(-ret));
	return 0;
}

int xnf_fdb_add(struct xnf_dp *dp, const __u8 mac[6], __u32 ifindex,
		bool replace, char *err, size_t errlen)
{
	char name[IF_NAMESIZE], m[18];
	struct xnf_fdb_key key = {};
	struct xnf_fdb_entry old;
	bool added;
	int ret;

	snprintf(m, sizeof(m), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
		 mac[2], mac[3], mac[4], mac[5]);
	memcpy(key.mac, mac, 6);
	if (!replace &&
	    !bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_FDB), &key, &old))
		return xnf_errf(err, errlen, -EEXIST,
				"%s is in the FDB already (on %s)", m,
				ifname(old.ifindex, name));
	ret = port_get(dp, ifindex, &added, err, errlen);
	if (ret)
		return ret;
	ret = xnf_fdb_set(dp, mac, ifindex);
	if (!ret)
		return 0;
	if (added)
		xnf_port_del(dp, ifindex);
	if (table_full(ret))
		return xnf_errf(err, errlen, ret,
				"FDB full (%ld entries); delete entries first",
				map_count(xnf_table_fd(dp, XNF_T_FDB),
					  sizeof(struct xnf_fdb_key),
					  sizeof(struct xnf_fdb_entry)));
	return xnf_errf(err, errlen, ret, "cannot write %s to %s: %s", m,
			XNF_MAP_STR(XNF_MAP_FDB), strerror(-ret));
}

/* The device @ifindex is cross-connected with, other than @peer, or 0.
 * Pairs are written both ways, so the entry of each end tells. */
static __u32 xc_other(struct xnf_dp *dp, __u32 ifindex, __u32 peer)
{
	struct xnf_xconnect xc;

	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_XCONNECT), &ifindex, &xc))
		return 0;
	return xc.ifindex != peer ? xc.ifindex : 0;
}

int xnf_xconnect_add(struct xnf_dp *dp, __u32 if1,
		     const struct xnf_xconnect *fwd, __u32 if2,
		     const struct xnf_xconnect *rev, char *err, size_t errlen)
{
	char n1[IF_NAMESIZE], n2[IF_NAMESIZE], n3[IF_NAMESIZE];
	bool added1 = false, added2 = false, had_fwd;
	struct xnf_xconnect old_fwd;
	__u32 busy, other;
	int ret;

	ifname(if1, n1);
	ifname(if2, n2);
	busy = if1;
	other = xc_other(dp, if1, if2);
	if (!other) {
		busy = if2;
		other = xc_other(dp, if2, if1);
	}
	if (other) {
		ifname(busy, n1);
		return xnf_errf(err, errlen, -EBUSY,
				"%s is cross-connected to %s already; remove that pair first",
				n1, ifname(other, n3));
	}
	had_fwd = !bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_XCONNECT), &if1,
				       &old_fwd);
	ret = port_get(dp, if1, &added1, err, errlen);
	if (!ret)
		ret = port_get(dp, if2, &added2, err, errlen);
	if (ret)
		goto out_ports;
	/* Rewriting the same pair (new MACs) replaces each direction in one
	 * update; a new pair appears one direction at a time. */
	ret = xnf_xconnect_set(dp, if1, fwd);
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "cannot write the cross-connect %s -> %s to %s: %s",
			 n1, n2, XNF_MAP_STR(XNF_MAP_XCONNECT), strerror(-ret));
		goto out_ports;
	}
	ret = xnf_xconnect_set(dp, if2, rev);
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "cannot write the cross-connect %s -> %s to %s: %s",
			 n2, n1, XNF_MAP_STR(XNF_MAP_XCONNECT), strerror(-ret));
		if (had_fwd)
			xnf_xconnect_set(dp, if1, &old_fwd);
		else
			xnf_xconnect_del(dp, if1);
		goto out_ports;
	}
	return 0;

out_ports:
	if (added2)
		xnf_port_del(dp, if2);
	if (added1)
		xnf_port_del(dp, if1);
	return ret;
}

/* The nexthop @id of the table @ids/@nhs[@n], or NULL. */
static const struct xnf_nexthop *
nh_find(const __u32 *ids, const struct xnf_nexthop *nhs, __u32 n, __u32 id)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return &nhs[i];
	return NULL;
}

/* Appends the routes of @family to @out[*@n], a unicast route's next hop
 * inline (from the nexthops @ids/@nhs[@nnh]). */
static int route_read(struct xnf_dp *dp, int family, const __u32 *ids,
		      const struct xnf_nexthop *nhs, __u32 nnh,
		      struct xnf_route_entry **out, __u32 *n)
{
	__u32 ksz = family == XNF_AF_INET ? sizeof(struct xnf_rt4_key) :
					    sizeof(struct xnf_rt6_key);
	int fd = xnf_route_table_fd(dp, family);
	struct xnf_route_entry *all;
	struct xnf_rt_val *vals;
	__u8 *keys;
	__u32 cnt, i;
	int err;

	err = table_read(fd, ksz, sizeof(*vals), (void **)&keys, (void **)&vals,
			 &cnt);
	if (err)
		return err;
	all = realloc(*out, (*n + cnt + 1) * sizeof(*all));
	if (!all) {
		err = -ENOMEM;
		goto out;
	}
	*out = all;
	for (i = 0; i < cnt; i++) {
		/* The two key layouts share prefixlen and the start of
		 * addr. */
		const struct xnf_rt6_key *k = (const void *)(keys + i * ksz);
		struct xnf_route_entry *e = &all[(*n)++];
		const struct xnf_nexthop *nh;

		memset(e, 0, sizeof(*e));
		e->family = family;
		e->plen = k->prefixlen;
		memcpy(e->addr, k->addr, ksz - sizeof(k->prefixlen));
		nh = vals[i].type == XNF_RT_UNICAST ?
			     nh_find(ids, nhs, nnh, vals[i].nh) :
			     NULL;
		if (nh)
			xnf_nexthop_route(nh, &e->rt);
		xnf_rt_entry_val(e, &vals[i]);
	}
out:
	free(keys);
	free(vals);
	return err;
}

int xnf_route_list(struct xnf_dp *dp, struct xnf_route_entry **out, __u32 *n)
{
	struct xnf_nexthop *nhs;
	__u32 *ids, nnh;
	int err;

	*out = NULL;
	*n = 0;
	err = xnf_nh_list(dp, &ids, &nhs, &nnh);
	if (err)
		return err;
	err = route_read(dp, XNF_AF_INET, ids, nhs, nnh, out, n);
	if (!err)
		err = route_read(dp, XNF_AF_INET6, ids, nhs, nnh, out, n);
	free(ids);
	free(nhs);
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}

/* Reads table @fd into new @out[*@n] entries of a key and its value, laid
 * out back to back (struct xnf_fdb_ent, struct xnf_xconnect_ent). */
static int table_pairs(int fd, __u32 ksz, __u32 vsz, void **out, __u32 *n)
{
	__u8 *keys, *vals, *ents;
	__u32 i;
	int err;

	*out = NULL;
	err = table_read(fd, ksz, vsz, (void **)&keys, (void **)&vals, n);
	if (err)
		return err;
	ents = calloc(*n + 1, ksz + vsz);
	if (!ents)
		err = -ENOMEM;
	for (i = 0; !err && i < *n; i++) {
		memcpy(ents + i * (ksz + vsz), keys + i * ksz, ksz);
		memcpy(ents + i * (ksz + vsz) + ksz, vals + i * vsz, vsz);
	}
	free(keys);
	free(vals);
	*out = ents;
	return err;
}

_Static_assert(sizeof(struct xnf_fdb_ent) == sizeof(struct xnf_fdb_key) +
						     sizeof(struct xnf_fdb_entry) &&
		       offsetof(struct xnf_fdb_ent, e) ==
			       sizeof(struct xnf_fdb_key),
	       "xnf_fdb_ent is a key and its value, back to back");
_Static_assert(sizeof(struct xnf_xconnect_ent) ==
			       sizeof(__u32) + sizeof(struct xnf_xconnect) &&
		       offsetof(struct xnf_xconnect_ent, xc) == sizeof(__u32),
	       "xnf_xconnect_ent is a key and its value, back to back");

int xnf_fdb_list(struct xnf_dp *dp, struct xnf_fdb_ent **out, __u32 *n)
{
	return table_pairs(xnf_table_fd(dp, XNF_T_FDB),
			   sizeof(struct xnf_fdb_key),
			   sizeof(struct xnf_fdb_entry), (void **)out, n);
}

int xnf_xconnect_list(struct xnf_dp *dp, struct xnf_xconnect_ent **out, __u32 *n)
{
	return table_pairs(xnf_table_fd(dp, XNF_T_XCONNECT), sizeof(__u32),
			   sizeof(struct xnf_xconnect), (void **)out, n);
}

int xnf_xconnect_remove(struct xnf_dp *dp, __u32 ifindex, char *err, size_t errlen)
{
	struct xnf_xconnect_ent *ents;
	char name[IF_NAMESIZE];
	__u32 n, i, done = 0;
	int ret;

	ret = xnf_xconnect_list(dp, &ents, &n);
	if (ret)
		return xnf_errf(err, errlen, ret, "cannot read %s: %s",
				XNF_MAP_STR(XNF_MAP_XCONNECT), strerror(-ret));
	/* Both directions: the entry of the device and the one that sends
	 * to it. */
	for (i = 0; i < n; i++) {
		if (ents[i].in != ifindex && ents[i].xc.ifindex != ifindex)
			continue;
		ret = xnf_xconnect_del(dp, ents[i].in);
		if (ret && ret != -ENOENT) {
			xnf_errf(err, errlen, ret,
				 "cannot delete the cross-connect of %s from %s: %s",
				 ifname(ents[i].in, name),
				 XNF_MAP_STR(XNF_MAP_XCONNECT), strerror(-ret));
			goto out;
		}
		done++;
	}
	ret = done ? 0 :
		     xnf_errf(err, errlen, -ENOENT, "%s is not cross-connected",
			      ifname(ifindex, name));
out:
	free(ents);
	return ret;
}

/* A table that cannot be read counts as sending to @ifindex: the port
 * stays, which is safe. */
bool xnf_port_in_use(struct xnf_dp *dp, __u32 ifindex)
{
	struct xnf_xconnect_ent *xcs = NULL;
	struct xnf_nexthop *nhs = NULL;
	struct xnf_fdb_ent *fdb = NULL;
	__u32 *ids = NULL, n, i;
	bool used = true;

	/* Routes send through nexthops, which live while a route (or a
	 * group) uses them. */
	if (xnf_nh_list(dp, &ids, &nhs, &n))
		goto out;
	for (i = 0; i < n; i++)
		if (nhs[i].ifindex == ifindex)
			goto out;
	if (xnf_fdb_list(dp, &fdb, &n))
		goto out;
	for (i = 0; i < n; i++)
		if (fdb[i].e.ifindex == ifindex)
			goto out;
	if (xnf_xconnect_list(dp, &xcs, &n))
		goto out;
	for (i = 0; i < n; i++)
		if (xcs[i].xc.ifindex == ifindex)
			goto out;
	used = false;
out:
	free(ids);
	free(nhs);
	free(fdb);
	free(xcs);
	return used;
}
