// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rtsync.c - the kernel's routes into xnf's tables, next hops after the
 * kernel's neighbours; see rtsync.h.
 *
 * The sync keeps, per prefix, the kernel's routes for it (candidates: the
 * table local's, then the chosen table's by metric, as the kernel's FIB
 * picks) and a fingerprint of what xnf holds for it (type, MTU, a kernel
 * route's reason, and next hops by device and gateway; MACs are not part
 * of it: they live in the nexthop objects, which follow the neighbours on
 * their own). A change of the kernel marks the prefix dirty; a flush
 * compares what the prefix should be with the fingerprint and writes only
 * the difference, all in one route batch. So a resync (a fresh dump,
 * fingerprints read back from xnf) rewrites nothing that is right
 * already, and removes what is stale.
 *
 * Every map lookup is by hash: the work of a change does not grow with
 * the table (1M routes and more). A neighbour or link change walks the
 * nexthop table (XNF_MAX_NH ids at most) once per flush.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_arp.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "xnf.h"
#include "rtsync.h"
#include "priv.h"
#include "place_priv.h"
#include "rtnl.h"
#include "neigh.h"
#include "ct.h"

/* UNSUPPORTED events per flush; the rest are only counted. */
#define UNSUPPORTED_EVENTS 8
#define DUMP_TRIES	   5

/* ---- a small chained hash table; entries embed struct hnode first ---- */

struct hnode {
	struct hnode *next;
	__u64 hash;
};

struct htab {
	struct hnode **b;
	size_t nb, n;
	size_t koff, klen; /* the key inside an entry */
};

static __u64 hash_bytes(const void *p, size_t len)
{
	const __u8 *s = p;
	__u64 h = 0xcbf29ce484222325ULL;

	while (len--)
		h = (h ^ *s++) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static int ht_init(struct htab *t, size_t koff, size_t klen)
{
	memset(t, 0, sizeof(*t));
	t->koff = koff;
	t->klen = klen;
	t->nb = 1024;
	t->b = calloc(t->nb, sizeof(*t->b));
	return t->b ? 0 : -ENOMEM;
}

static void *ht_find(const struct htab *t, const void *key, __u64 h)
{
	struct hnode *e;

	for (e = t->b[h & (t->nb - 1)]; e; e = e->next)
		if (e->hash == h && !memcmp((char *)e + t->koff, key, t->klen))
			return e;
	return NULL;
}

static void ht_insert(struct htab *t, struct hnode *e)
{
	size_t i;

	if (t->n >= t->nb) {
		struct hnode **nb = calloc(t->nb * 2, sizeof(*nb));

		/* Without memory the chains just get longer. */
		if (nb) {
			for (i = 0; i < t->nb; i++)
				while (t->b[i]) {
					struct hnode *x = t->b[i];

					t->b[i] = x->next;
					x->next = nb[x->hash & (t->nb * 2 - 1)];
					nb[x->hash & (t->nb * 2 - 1)] = x;
				}
			free(t->b);
			t->b = nb;
			t->nb *= 2;
		}
	}
	i = e->hash & (t->nb - 1);
	e->next = t->b[i];
	t->b[i] = e;
	t->n++;
}

static void ht_remove(struct htab *t, struct hnode *e)
{
	struct hnode **p = &t->b[e->hash & (t->nb - 1)];

	for (; *p; p = &(*p)->next)
		if (*p == e) {
			*p = e->next;
			t->n--;
			return;
		}
}

/* Calls @fn on every entry; @fn may remove (and free) the one it got. */
static void ht_each(struct htab *t, void (*fn)(void *e, void *ctx), void *ctx)
{
	size_t i;

	for (i = 0; i < t->nb; i++) {
		struct hnode *e = t->b[i], *next;

		for (; e; e = next) {
			next = e->next;
			fn(e, ctx);
		}
	}
}

static void free_entry(void *e, void *ctx)
{
	free(e);
}

static void ht_free(struct htab *t, void (*fn)(void *e, void *ctx))
{
	if (!t->b)
		return;
	ht_each(t, fn ?: free_entry, NULL);
	free(t->b);
	t->b = NULL;
}

/* ---- the model ---- */

/* A kernel route for a prefix. */
struct kroute {
	struct kroute *next;
	__u32 prio;
	__u32 gen;  /* the dump or event that last wrote it */
	bool local; /* of the table local */
	__u8 tos, type, proto;
	__u8 src_len; /* with src: a source-specific route */
	__u8 src[16];
	__u32 nh_id;   /* RTA_NH_ID */
	__u32 mtu;     /* RTAX_MTU, 0: none */
	__u16 encap;   /* LWTUNNEL_ENCAP_*, 0: none */
	bool weighted; /* next hops of unequal weights */
	__u32 dead;    /* next hops the kernel does not use */
	bool too_many;
	__u32 nhops;
	struct rtnl_hop hop[];
};

struct pfx_key {
	__u8 family, plen;
	__u8 addr[16];
};

struct pfx {
	struct hnode node;
	struct pfx_key key;
	bool dirty;
	__u64 have; /* fingerprint of what xnf holds; 0: nothing */
	struct kroute *kr;
};

struct neigh_key {
	__u32 ifindex;
	__u8 family;
	__u8 pad[3];
	__u8 addr[16];
};

/* A neighbour entry of the kernel, whatever its state. */
struct neigh {
	struct hnode node;
	struct neigh_key key;
	__u32 gen;
	bool usable; /* a unicast MAC of 6 bytes, in a state that has one */
	bool host;   /* usable, and a host entry may forward to it */
	bool kept;   /* managed, or an operator's that xnf leaves as it is
		      * (xnf_neigh_keep() has nothing to do) */
	__u8 lladdr[6];
};

struct link {
	struct hnode node;
	__u32 ifindex;
	__u32 gen;
	bool ether; /* a MAC of 6 bytes, Ethernet framing */
	bool up;
	bool port;	  /* an xnf port (checked since the last resync) */
	bool port_failed; /* xnf_port_add refused it */
	__u8 mac[6];
};

/* A kernel nexthop object (ip nexthop), for the routes through it. */
struct nhobj {
	struct hnode node;
	__u32 id;
	__u32 gen;
	bool blackhole, fdb, dead, too_many, weighted;
	__u16 encap;
	struct rtnl_hop hop;
	__u32 ngroup;
	__u32 group[RTNL_HOPS_MAX];
};

struct rs {
	struct xnf_dp *dp;
	struct xnf_rtsync_opts o;
	xnf_rtsync_fn fn;
	void *ctx;
	struct htab pfx, neigh, link, nhobj;
	struct pfx **dirty;
	size_t ndirty, dirty_cap;
	__u32 gen;
	bool nh_check;	    /* neighbours or links changed: follow */
	bool hosts_check;   /* routes changed: every neighbour's host entry
			     * looked at again */
	const char *resync; /* a resync is due, and why */
	__u32 batches;	    /* committed, for kill_batch */
	__u32 routes;	    /* prefixes xnf holds a synced route for */
	__u32 unsup_events; /* UNSUPPORTED events in this flush */
	__u64 changes;	    /* messages that changed something */
	int lock_fd;	    /* the sync's lock (sync_lock), -1: none */
	struct xnf_rtsync_event counts;
};

static void emit(struct rs *s, struct xnf_rtsync_event *ev)
{
	if (s->fn)
		s->fn(ev, s->ctx);
}

static __u64 now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

static struct link *link_get(struct rs *s, __u32 ifindex)
{
	return ht_find(&s->link, &ifindex, hash_bytes(&ifindex, 4));
}

static struct neigh *neigh_get(struct rs *s, __u32 ifindex, int family,
			       const __u8 *addr)
{
	struct neigh_key k = { .ifindex = ifindex, .family = family };

	memcpy(k.addr, addr, family == XNF_AF_INET ? 4 : 16);
	return ht_find(&s->neigh, &k, hash_bytes(&k, sizeof(k)));
}

static void mark_dirty(struct rs *s, struct pfx *p)
{
	s->changes++;
	if (p->dirty)
		return;
	if (s->ndirty == s->dirty_cap) {
		size_t cap = s->dirty_cap ? s->dirty_cap * 2 : 4096;
		struct pfx **d = realloc(s->dirty, cap * sizeof(*d));

		if (!d) {
			/* Without memory to remember it, a resync will. */
			s->resync = "memory";
			return;
		}
		s->dirty = d;
		s->dirty_cap = cap;
	}
	p->dirty = true;
	s->dirty[s->ndirty++] = p;
}

static struct pfx *pfx_get(struct rs *s, int family, const __u8 *addr,
			   __u32 plen, bool create)
{
	struct pfx_key k = { .family = family, .plen = plen };
	__u32 alen = family == XNF_AF_INET ? 4 : 16, i;
	struct pfx *p;
	__u64 h;

	for (i = 0; i < alen; i++) {
		__u32 bits = plen > i * 8 ? plen - i * 8 : 0;

		k.addr[i] = bits >= 8 ? addr[i] :
					addr[i] & (__u8)(0xff00 >> bits);
	}
	h = hash_bytes(&k, sizeof(k));
	p = ht_find(&s->pfx, &k, h);
	if (p || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->key = k;
	p->node.hash = h;
	ht_insert(&s->pfx, &p->node);
	return p;
}

/* ---- what a prefix should be in xnf ---- */

struct want {
	__u32 type; /* enum xnf_route_type */
	__u32 mtu;  /* the route's MTU, 0: none */
	__u32 n;
	const struct rtnl_hop *hop[XNF_NHG_PATHS];
	struct rtnl_hop host; /* a host entry's next hop: hop[0] */
	/* XNF_RT_KERNEL for a reason worth reporting: which
	 * (enum xnf_rt_why), and in words */
	__u32 code;
	char why[96];
};

/* @w passes to the kernel for reason @code, said as @fmt. */
static void want_kernel(struct want *w, __u32 code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void want_kernel(struct want *w, __u32 code, const char *fmt, ...)
{
	va_list ap;

	w->type = XNF_RT_KERNEL;
	w->n = 0;
	w->code = code;
	va_start(ap, fmt);
	vsnprintf(w->why, sizeof(w->why), fmt, ap);
	va_end(ap);
}

static bool proto_wanted(const struct rs *s, __u8 proto)
{
	const __u64 *m = s->o.proto;

	if (!(m[0] | m[1] | m[2] | m[3]))
		return true;
	return m[proto / 64] & (1ULL << (proto % 64));
}

/* The candidate the kernel's FIB uses: the table local's first, then the
 * lowest metric. A route of the chosen table that matches only some
 * packets (by TOS, or by source: IPv6 "from") makes the kernel choose
 * per packet between it and the others: *@partial says so (the prefix
 * passes to the kernel) unless the table local's route takes every
 * packet first. */
static const struct kroute *best(const struct pfx *p,
				 const struct kroute **partial)
{
	const struct kroute *k, *b = NULL;

	*partial = NULL;
	for (k = p->kr; k; k = k->next) {
		if (k->tos || k->src_len) {
			*partial = k;
			continue;
		}
		if (!b || (k->local && !b->local) ||
		    (k->local == b->local && k->prio < b->prio))
			b = k;
	}
	if (b && b->local)
		*partial = NULL;
	return b;
}

static struct nhobj *nhobj_get(struct rs *s, __u32 id)
{
	return ht_find(&s->nhobj, &id, hash_bytes(&id, 4));
}

/* The next hops of the kernel nexthop object @id into @cand[*@n] (the
 * live ones of a group); a blackhole sets @w's type, a next hop xnf
 * cannot forward by makes @w pass (with why). */
static void nhobj_hops(struct rs *s, __u32 id, const struct rtnl_hop **cand,
		       __u32 *n, struct want *w)
{
	const struct nhobj *o = nhobj_get(s, id), *m;
	__u32 i;

	*n = 0;
	if (!o) {
		want_kernel(w, XNF_WHY_NEXTHOP,
			    "through a kernel nexthop object not known (yet)");
		return;
	}
	if (o->fdb) {
		want_kernel(w, XNF_WHY_NEXTHOP,
			    "through a bridge FDB nexthop object");
		return;
	}
	if (o->blackhole) {
		w->type = XNF_RT_BLACKHOLE;
		return;
	}
	if (!o->ngroup) {
		if (o->encap)
			want_kernel(w, XNF_WHY_ENCAP, "an encapsulation (%s)",
				    rtnl_encap_name(o->encap));
		else if (!o->dead)
			cand[(*n)++] = &o->hop;
		return;
	}
	if (o->weighted) {
		want_kernel(w, XNF_WHY_WEIGHTS,
			    "a nexthop group of unequal weights (xnf's groups "
			    "are equal-cost)");
		return;
	}
	if (o->too_many)
		*n = RTNL_HOPS_MAX + 1;
	for (i = 0; i < o->ngroup && *n < RTNL_HOPS_MAX; i++) {
		m = nhobj_get(s, o->group[i]);
		if (!m || m->ngroup || m->blackhole || m->fdb) {
			want_kernel(w, XNF_WHY_NEXTHOP,
				    "through a kernel nexthop group whose "
				    "members are not plain next hops");
			return;
		}
		if (m->encap) {
			want_kernel(w, XNF_WHY_ENCAP, "an encapsulation (%s)",
				    rtnl_encap_name(m->encap));
			return;
		}
		if (!m->dead)
			cand[(*n)++] = &m->hop;
	}
}

/* The kernel route a host address @addr without a route of its own is
 * forwarded by, if it is a connected subnet's (a device route, as the
 * kernel's FIB picks it: longest prefix, lowest metric); else NULL. */
static const struct kroute *connected(struct rs *s, int family, const __u8 *addr)
{
	const struct kroute *k, *partial;
	int full = family == XNF_AF_INET ? 32 : 128, plen;
	const struct pfx *q;

	for (plen = full - 1; plen >= 0; plen--) {
		q = pfx_get(s, family, addr, plen, false);
		if (!q || !q->kr)
			continue;
		k = best(q, &partial);
		if (partial || !k || k->local || k->type != RTN_UNICAST ||
		    !proto_wanted(s, k->proto) || k->encap || k->nh_id ||
		    k->nhops != 1 || k->hop[0].gw_family)
			return NULL;
		return k;
	}
	return NULL;
}

/*
 * A host of a connected subnet that the kernel knows the MAC of (its
 * neighbour entry reachable, stale, delay, probe or permanent) is
 * forwarded in XDP by a host entry: a route of its own address through a
 * next hop that is itself, which follows its neighbour entry as any
 * gateway's does. An unresolved one is left to the subnet's route, to the
 * kernel, which resolves it. @w: the entry, or no route (~0U).
 */
static void host_want(struct rs *s, const struct pfx *p, struct want *w)
{
	int family = p->key.family;
	const struct kroute *c;
	const struct neigh *n;
	const struct link *l;

	w->type = ~0U;
	if (s->o.follow_only || p->key.plen != (family == XNF_AF_INET ? 32 : 128))
		return;
	/* IPv6 link-local addresses are not forwarded. */
	if (family == XNF_AF_INET6 && p->key.addr[0] == 0xfe &&
	    (p->key.addr[1] & 0xc0) == 0x80)
		return;
	c = connected(s, family, p->key.addr);
	if (!c)
		return;
	n = neigh_get(s, c->hop[0].ifindex, family, p->key.addr);
	l = link_get(s, c->hop[0].ifindex);
	if (!n || !n->host || !l || !l->ether || l->port_failed)
		return;
	w->host.ifindex = c->hop[0].ifindex;
	w->host.gw_family = family;
	memcpy(w->host.gw, p->key.addr, 16);
	w->hop[0] = &w->host;
	w->n = 1;
	w->type = XNF_RT_UNICAST;
	w->mtu = c->mtu;
}

/*
 * What xnf should hold for @p: what the kernel forwards by, or
 * XNF_RT_KERNEL (with why, when it is a route xnf cannot forward itself:
 * every attribute of the kernel's route that changes forwarding and that
 * XDP does not do makes the prefix pass, docs/routing.md). ~0U: nothing.
 */
static void want_of(struct rs *s, const struct pfx *p, struct want *w)
{
	const struct rtnl_hop *cand[RTNL_HOPS_MAX];
	const struct kroute *k, *partial;
	__u32 i, j, n;

	memset(w, 0, sizeof(*w));
	w->type = XNF_RT_KERNEL;
	k = best(p, &partial);
	if (partial) {
		if (partial->tos)
			want_kernel(w, XNF_WHY_TOS, "routes by TOS");
		else
			want_kernel(w, XNF_WHY_SOURCE,
				    "source-specific routes (from)");
		return;
	}
	if (!k) {
		host_want(s, p, w); /* or no route */
		return;
	}
	if (k->local) {
		if (k->type == RTN_LOCAL || k->type == RTN_ANYCAST)
			w->type = XNF_RT_LOCAL;
		/* broadcast, multicast: the kernel's */
		if (k->type != RTN_UNICAST)
			return;
	}
	if (!proto_wanted(s, k->proto))
		return; /* another protocol's route: the kernel forwards */
	switch (k->type) {
	case RTN_BLACKHOLE:
		w->type = XNF_RT_BLACKHOLE;
		return;
	case RTN_UNREACHABLE:
	case RTN_PROHIBIT:
		w->type = XNF_RT_UNREACHABLE;
		return;
	case RTN_LOCAL:
	case RTN_ANYCAST:
		w->type = XNF_RT_LOCAL;
		return;
	case RTN_UNICAST:
		break;
	default:
		return; /* throw, nat, multicast, ...: the kernel's */
	}
	if (k->encap) {
		want_kernel(w, XNF_WHY_ENCAP, "an encapsulation (%s)",
			    rtnl_encap_name(k->encap));
		return;
	}
	if (k->weighted) {
		want_kernel(w, XNF_WHY_WEIGHTS,
			    "next hops of unequal weights (xnf's groups are "
			    "equal-cost)");
		return;
	}
	n = k->nhops;
	for (i = 0; i < n && i < RTNL_HOPS_MAX; i++)
		cand[i] = &k->hop[i];
	if (k->nh_id) {
		nhobj_hops(s, k->nh_id, cand, &n, w);
		if (w->type != XNF_RT_KERNEL || w->code)
			return;
	} else if (k->too_many) {
		n = RTNL_HOPS_MAX + 1;
	}
	if (n > XNF_NHG_PATHS) {
		want_kernel(w, XNF_WHY_PATHS,
			    "more next hops than an xnf group holds (16)");
		return;
	}
	if (!n)
		return; /* every next hop is down: the kernel decides */
	for (i = 0; i < n; i++) {
		const struct rtnl_hop *h = cand[i];
		const struct link *l;

		/* A device route (a connected subnet): the kernel resolves
		 * each destination itself. */
		if (!h->gw_family) {
			w->n = 0;
			return;
		}
		l = link_get(s, h->ifindex);
		if (!l || !l->ether) {
			want_kernel(w, XNF_WHY_DEVICE,
				    "via a device without Ethernet framing");
			return;
		}
		if (l->port_failed) {
			want_kernel(w, XNF_WHY_DEVICE,
				    "via a device that cannot be an xnf port "
				    "(no XDP transmit, or the devmap refuses "
				    "it)");
			return;
		}
		for (j = 0; j < w->n; j++)
			if (!memcmp(w->hop[j], h, sizeof(*h)))
				break;
		if (j == w->n) /* the same next hop twice: once */
			w->hop[w->n++] = h;
	}
	w->type = w->n > 1 ? XNF_RT_MULTIPATH : XNF_RT_UNICAST;
	w->mtu = k->mtu;
}

static int hop_cmp(const void *a, const void *b)
{
	return memcmp(*(const struct rtnl_hop *const *)a,
		      *(const struct rtnl_hop *const *)b,
		      sizeof(struct rtnl_hop));
}

/* The fingerprint of a route: its type, a kernel route's reason (@code),
 * the MTU and the next hops, in any order. */
static __u64 fingerprint(__u32 type, __u32 code, __u32 mtu,
			 const struct rtnl_hop **hops, __u32 n)
{
	const struct rtnl_hop *sorted[XNF_NHG_PATHS];
	__u32 head[3] = { type, code, mtu };
	__u64 h = hash_bytes(head, sizeof(head));
	__u32 i;

	memcpy(sorted, hops, n * sizeof(*hops));
	qsort(sorted, n, sizeof(*sorted), hop_cmp);
	for (i = 0; i < n; i++)
		h = (h * 31) ^ hash_bytes(sorted[i], sizeof(**sorted));
	return h | 1;
}

/* The next hop of xnf for @h on a route of MTU @mtu, MACs from the
 * kernel's tables. */
static void hop_route(struct rs *s, const struct rtnl_hop *h, __u32 mtu,
		      struct xnf_route *rt)
{
	const struct neigh *n = neigh_get(s, h->ifindex, h->gw_family, h->gw);
	const struct link *l = link_get(s, h->ifindex);

	memset(rt, 0, sizeof(*rt));
	rt->type = XNF_RT_UNICAST;
	rt->origin = XNF_ORIGIN_SYNC;
	rt->ifindex = h->ifindex;
	rt->gw_family = h->gw_family;
	memcpy(rt->gw, h->gw, 16);
	rt->mtu = mtu;
	if (l)
		memcpy(rt->smac, l->mac, 6);
	if (n && n->usable)
		memcpy(rt->dmac, n->lladdr, 6);
	else
		rt->state = XNF_NH_KERNEL;
}

static void report_unsupported(struct rs *s, const struct pfx *p, const char *why)
{
	struct xnf_rtsync_event ev = {
		.type = XNF_RTSYNC_UNSUPPORTED,
		.reason = why,
		.family = p->key.family,
		.plen = p->key.plen,
	};

	s->counts.unsupported++;
	if (s->unsup_events++ >= UNSUPPORTED_EVENTS)
		return;
	memcpy(ev.addr, p->key.addr, 16);
	emit(s, &ev);
}

/* Every egress device of @w an xnf port (a redirect goes through the
 * devmap); false when the devmap refuses one, which is remembered until
 * the next resync. */
static bool ports_ok(struct rs *s, const struct want *w)
{
	__u64 feat;
	bool ok = true;
	__u32 i;

	for (i = 0; i < w->n; i++) {
		struct link *l = link_get(s, w->hop[i]->ifindex);

		if (!l || l->port)
			continue;
		/* The devmap takes any device, but a redirect to one
		 * without XDP transmit (a bridge, lo, ...) is dropped. */
		if (!netdev_xdp_features(l->ifindex, &feat) &&
		    !(feat & XNF_NETDEV_XDP_ACT_NDO_XMIT)) {
			l->port_failed = true;
			ok = false;
		} else if (xnf_port_exists(s->dp, l->ifindex) ||
			   !xnf_port_add(s->dp, l->ifindex)) {
			l->port = true;
		} else {
			l->port_failed = true;
			ok = false;
		}
	}
	return ok;
}

/* Brings one prefix in xnf to what the kernel says: 0, or a negative errno
 * when the batch cannot go on. */
static int pfx_apply(struct rs *s, struct pfx *p)
{
	struct xnf_route paths[XNF_NHG_PATHS];
	char msg[256];
	struct want w;
	__u64 fp;
	__u32 i;
	int ret;

	p->dirty = false;
	want_of(s, p, &w);
	if (w.type == ~0U) {
		if (!p->have)
			return 0;
		ret = xnf_route_del(s->dp, p->key.family, p->key.addr,
				    p->key.plen);
		if (ret && ret != -ENOENT)
			return ret;
		p->have = 0;
		s->counts.deleted++;
		s->routes--;
		return 0;
	}
	if (!ports_ok(s, &w))
		want_of(s, p, &w); /* now through the kernel */
	fp = fingerprint(w.type, w.code, w.mtu, w.hop, w.n);
	if (fp == p->have) {
		s->counts.unchanged++;
		return 0;
	}
	if (w.code)
		report_unsupported(s, p, w.why);
	memset(paths, 0, sizeof(paths));
	paths[0].type = w.type;
	paths[0].origin = XNF_ORIGIN_SYNC;
	paths[0].why = w.code;
	for (i = 0; i < w.n; i++)
		hop_route(s, w.hop[i], w.mtu, &paths[i]);
	ret = w.n > 1 ?
		      xnf_route_add_multipath(s->dp, p->key.family, p->key.addr,
					      p->key.plen, paths, w.n, true,
					      msg, sizeof(msg)) :
		      xnf_route_add(s->dp, p->key.family, p->key.addr,
				    p->key.plen, paths, true, msg, sizeof(msg));
	if (ret) {
		pr_warn("route sync: %s\n", msg);
		return ret;
	}
	if (p->have) {
		s->counts.replaced++;
	} else {
		s->counts.added++;
		s->routes++;
	}
	p->have = fp;
	return 0;
}

/* ---- next hops after their neighbours and ports ---- */

/* The change log: what a daemon did on its own, under its name (which
 * xnf_rtsync_status() looks for). */
#define CHANGE_CMD_SYNC "route sync"

static void change_log(struct rs *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void change_log(struct rs *s, const char *fmt, ...)
{
	char msg[XNF_CHANGE_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	xnf_change_log(s->dp, XNF_CHANGE_AUTOMATIC,
		       s->o.follow_only ? "neigh follow" : CHANGE_CMD_SYNC,
		       false, msg);
}

static void nh_logged(struct rs *s, __u32 id, const struct xnf_nexthop *nh)
{
	char gw[INET6_ADDRSTRLEN] = "", dev[IF_NAMESIZE] = "";
	const __u8 *m = nh->dmac;

	if (nh->gw_family)
		inet_ntop(nh->gw_family == XNF_AF_INET ? AF_INET : AF_INET6,
			  nh->gw, gw, sizeof(gw));
	if (!if_indextoname(nh->ifindex, dev))
		snprintf(dev, sizeof(dev), "%u", nh->ifindex);
	if (nh->state == XNF_NH_VALID)
		change_log(s,
			   "next hop %u%s%s dev %s: lladdr "
			   "%02x:%02x:%02x:%02x:%02x:%02x",
			   id, *gw ? " via " : "", gw, dev, m[0], m[1], m[2],
			   m[3], m[4], m[5]);
	else
		change_log(s,
			   "next hop %u via %s dev %s: no neighbour, its "
			   "packets pass to the kernel",
			   id, gw, dev);
}

/* Every nexthop object through a gateway gets the MAC of the gateway's
 * neighbour entry (state valid), or state kernel while there is no usable
 * one; every one gets its port's MAC. One xnf_nh_update each that
 * changes: every route through it follows at once. */
static int nh_follow(struct rs *s)
{
	struct xnf_nexthop *nhs = NULL;
	__u32 *ids = NULL, n, i;
	int ret;

	s->nh_check = false;
	ret = xnf_nh_list(s->dp, &ids, &nhs, &n);
	if (ret)
		return ret;
	for (i = 0; i < n && !ret; i++) {
		struct xnf_nexthop nh = nhs[i];
		const struct link *l = link_get(s, nh.ifindex);
		const struct neigh *ne;
		struct xnf_rtsync_event ev = { .type = XNF_RTSYNC_NEIGH };

		if (l && l->ether)
			memcpy(nh.smac, l->mac, 6);
		if (nh.gw_family) {
			ne = neigh_get(s, nh.ifindex, nh.gw_family, nh.gw);
			/* Managed again when someone made it otherwise. One
			 * deleted is not made again: its packets pass, and
			 * the entry the kernel makes for them is kept. */
			if (ne && !ne->kept)
				xnf_neigh_keep(nh.gw_family, nh.gw, nh.ifindex);
			if (ne && ne->usable) {
				memcpy(nh.dmac, ne->lladdr, 6);
				nh.state = XNF_NH_VALID;
			} else {
				/* The last MAC stays: what xnf save writes of
				 * a route by hand (the state is not saved). */
				nh.state = XNF_NH_KERNEL;
			}
		}
		nh.refs = nhs[i].refs;
		if (!memcmp(&nh, &nhs[i], sizeof(nh)))
			continue;
		ret = xnf_nh_update(s->dp, ids[i], &nh);
		if (ret)
			break;
		nh_logged(s, ids[i], &nh);
		ev.family = nh.gw_family;
		memcpy(ev.addr, nh.gw, 16);
		ev.ifindex = nh.ifindex;
		ev.nh = ids[i];
		ev.usable = nh.state == XNF_NH_VALID;
		memcpy(ev.lladdr, nh.dmac, 6);
		emit(s, &ev);
	}
	free(ids);
	free(nhs);
	return ret;
}

/* ---- rtnetlink messages into the model ---- */

static bool route_ours(const struct rs *s, const struct rtnl_route *r)
{
	if (r->flags & RTM_F_CLONED)
		return false;
	return r->table == s->o.table || r->table == RT_TABLE_LOCAL;
}

static bool hop_in(const struct rtnl_hop *hops, __u32 n, const struct rtnl_hop *h)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (!memcmp(&hops[i], h, sizeof(*h)))
			return true;
	return false;
}

static int route_msg(struct rs *s, const struct rtnl_route *r)
{
	bool local = r->table == RT_TABLE_LOCAL;
	struct kroute **pp, *k, *nk;
	struct pfx *p;
	__u32 i, j;

	if (!route_ours(s, r))
		return 0;
	/* A host entry goes by the routes that cover it. */
	s->hosts_check = true;
	p = pfx_get(s, r->family, r->dst, r->dst_len, !r->del);
	if (!p)
		return r->del ? 0 : -ENOMEM;
	/* A route is its table, TOS, metric and source prefix. */
	for (pp = &p->kr; *pp; pp = &(*pp)->next)
		if ((*pp)->local == local && (*pp)->tos == r->tos &&
		    (*pp)->prio == r->priority && (*pp)->src_len == r->src_len &&
		    !memcmp((*pp)->src, r->src, sizeof(r->src)))
			break;
	k = *pp;
	if (r->del) {
		if (!k)
			return 0;
		/* IPv6 deletes one next hop of a multipath route by naming
		 * only it; the route stays with the others (weighted as
		 * before, which at worst leaves it to the kernel until the
		 * next message or resync says otherwise). */
		if (r->nhops && r->nhops < k->nhops && !r->dead) {
			for (i = 0, j = 0; i < k->nhops; i++)
				if (!hop_in(r->hop, r->nhops, &k->hop[i]))
					k->hop[j++] = k->hop[i];
			if (j && j < k->nhops) {
				k->nhops = j;
				mark_dirty(s, p);
				return 0;
			}
		}
		*pp = k->next;
		free(k);
		mark_dirty(s, p);
		return 0;
	}
	nk = malloc(sizeof(*nk) + r->nhops * sizeof(nk->hop[0]));
	if (!nk)
		return -ENOMEM;
	nk->next = k ? k->next : NULL;
	nk->prio = r->priority;
	nk->gen = s->gen;
	nk->local = local;
	nk->tos = r->tos;
	nk->type = r->type;
	nk->proto = r->proto;
	nk->src_len = r->src_len;
	memcpy(nk->src, r->src, sizeof(nk->src));
	nk->nh_id = r->nh_id;
	nk->mtu = r->mtu;
	nk->encap = r->encap;
	nk->weighted = r->weighted;
	nk->dead = r->dead;
	nk->too_many = r->too_many;
	nk->nhops = r->nhops;
	memcpy(nk->hop, r->hop, r->nhops * sizeof(r->hop[0]));
	*pp = nk;
	free(k);
	mark_dirty(s, p);
	return 0;
}

/* The host entry of neighbour @n looked at in the next flush. */
static void host_dirty(struct rs *s, const struct neigh *n)
{
	struct pfx *p;

	if (s->o.follow_only)
		return;
	p = pfx_get(s, n->key.family, n->key.addr,
		    n->key.family == XNF_AF_INET ? 32 : 128, true);
	if (p)
		mark_dirty(s, p);
	else
		s->resync = "memory";
}

static void neigh_gone(struct rs *s, struct neigh *n)
{
	if (n->usable || n->kept) {
		/* Its next hops pass; one that was managed is again. */
		s->nh_check = true;
		s->changes++;
	}
	if (n->host)
		host_dirty(s, n);
	ht_remove(&s->neigh, &n->node);
	free(n);
}

static int neigh_msg(struct rs *s, const struct rtnl_neigh *m)
{
	struct neigh_key key = { .ifindex = m->ifindex, .family = m->family };
	bool usable, host, kept;
	struct neigh *n;
	__u64 h;

	if (m->flags & NTF_PROXY)
		return 0;
	memcpy(key.addr, m->addr, 16);
	h = hash_bytes(&key, sizeof(key));
	n = ht_find(&s->neigh, &key, h);
	if (m->del) {
		if (n)
			neigh_gone(s, n);
		return 0;
	}
	/* A usable neighbour has a unicast MAC of 6 bytes. */
	usable = (m->state & RTNL_NUD_USABLE) && m->lladdr_len == 6 &&
		 !(m->lladdr[0] & 1) && memcmp(m->lladdr, "\0\0\0\0\0\0", 6);
	host = usable && !(m->state & NUD_NOARP);
	/* As xnf_neigh_keep() decides. */
	kept = (m->flags_ext & NTF_EXT_MANAGED) ||
	       (m->state & (NUD_PERMANENT | NUD_NOARP)) ||
	       (m->flags & NTF_EXT_LEARNED) ||
	       (m->proto && m->proto != XNF_NEIGH_PROTO);
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return -ENOMEM;
		n->key = key;
		n->node.hash = h;
		ht_insert(&s->neigh, &n->node);
		n->kept = true; /* nothing to follow yet */
	}
	n->gen = s->gen;
	if (usable != n->usable ||
	    (usable && memcmp(n->lladdr, m->lladdr, 6)) || kept != n->kept) {
		s->nh_check = true;
		s->changes++;
	}
	if (host != n->host || (host && memcmp(n->lladdr, m->lladdr, 6)))
		host_dirty(s, n);
	n->usable = usable;
	n->host = host;
	n->kept = kept;
	if (usable)
		memcpy(n->lladdr, m->lladdr, 6);
	return 0;
}

/*
 * A masquerade's source is its egress device's address: when that goes,
 * so do the connections that took it, as Linux's masquerade notifiers do
 * (nf_nat_masquerade.c: an address removed flushes the connections
 * masqueraded out of its device whose reply goes to it, inet_cmp; the
 * device going down all those masqueraded out of it, device_cmp). New
 * connections ask the FIB for an address again and take what there is
 * now. Both the sync and neigh follow do it: whichever runs. A failure
 * is reported in the event and does not end the sync (the connections
 * then live until their timeout, or `xnf ct flush nat masquerade
 * reply-dst ADDR`).
 */
static void masq_flush(struct rs *s, __u32 ifindex, int family, const __u8 *addr)
{
	struct xnf_rtsync_event ev = { .type = XNF_RTSYNC_CT_FLUSH,
				       .ifindex = ifindex };
	struct xnf_ct_filter f = { .what = XNF_CT_F_NAT | XNF_CT_F_NAT_OIF,
				   .nat = XNF_CT_S_MASQ,
				   .oif = ifindex };
	char err[256], a[INET6_ADDRSTRLEN] = "", dev[IF_NAMESIZE];
	int ret;

	if (addr) {
		f.what |= XNF_CT_F_FAMILY | XNF_CT_F_REPLY_DST;
		f.family = family;
		memcpy(f.rdst, addr, 16);
		ev.family = family;
		memcpy(ev.addr, addr, 16);
		inet_ntop(family == XNF_AF_INET ? AF_INET : AF_INET6, addr, a,
			  sizeof(a));
	}
	if (!if_indextoname(ifindex, dev))
		snprintf(dev, sizeof(dev), "if%u", ifindex);
	ret = xnf_dp_lock(s->dp, LOCK_EX);
	if (!ret)
		ret = xnf_ct_flush(s->dp, &f, &ev.flushed, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "cannot lock the instance: %s",
			 strerror(-ret));
	if (ev.flushed)
		change_log(s, "%llu masqueraded connections flushed: %s%s%s",
			   (unsigned long long)ev.flushed,
			   addr ? "address " : "device ", addr ? a : dev,
			   addr ? " removed" : " down");
	xnf_dp_lock(s->dp, LOCK_UN);
	ev.reason = ret ? err : NULL;
	if (ret || ev.flushed)
		emit(s, &ev);
}

static int addr_msg(struct rs *s, const struct rtnl_addr *m)
{
	if (m->del)
		masq_flush(s, m->ifindex, m->family, m->addr);
	/* IPv4 removes the routes whose source it was, silently. */
	if (m->del && !s->o.follow_only)
		s->resync = s->resync ?: "addr";
	return 0;
}

static int link_msg(struct rs *s, const struct rtnl_link *m)
{
	struct link *l = link_get(s, m->ifindex);
	bool up = (m->flags & IFF_UP) && !m->del;
	bool ether = m->type == ARPHRD_ETHER && m->addr_len == 6;

	if (m->del) {
		if (l) {
			ht_remove(&s->link, &l->node);
			free(l);
		}
		masq_flush(s, m->ifindex, 0, NULL);
		/* Its routes went with it, unannounced. */
		s->resync = s->resync ?: "link";
		return 0;
	}
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return -ENOMEM;
		l->ifindex = m->ifindex;
		l->node.hash = hash_bytes(&l->ifindex, 4);
		l->up = up;
		ht_insert(&s->link, &l->node);
	}
	l->gen = s->gen;
	if (l->up && !up) {
		/* IPv4 removes the routes through a device that goes down
		 * without a message (fib_sync_down_dev): dump again. */
		s->resync = s->resync ?: "link";
		masq_flush(s, m->ifindex, 0, NULL);
	}
	if (l->ether != ether || memcmp(l->mac, m->addr, 6)) {
		s->nh_check = true; /* the port's MAC: every next hop's smac */
		s->changes++;
	}
	l->up = up;
	l->ether = ether;
	memcpy(l->mac, ether ? m->addr : (const __u8 *)"\0\0\0\0\0\0", 6);
	return 0;
}

/* Routes through nexthop object @id (or a group holding it) again. */
struct nh_dep {
	struct rs *s;
	__u32 id;
};

static bool nh_uses(struct rs *s, __u32 route_nh, __u32 id)
{
	const struct nhobj *g;
	__u32 i;

	if (route_nh == id)
		return true;
	g = nhobj_get(s, route_nh);
	for (i = 0; g && i < g->ngroup; i++)
		if (g->group[i] == id)
			return true;
	return false;
}

static void nh_dirty(void *e, void *ctx)
{
	struct nh_dep *d = ctx;
	struct pfx *p = e;
	const struct kroute *k;

	for (k = p->kr; k; k = k->next)
		if (k->nh_id && nh_uses(d->s, k->nh_id, d->id)) {
			mark_dirty(d->s, p);
			return;
		}
}

/* A kernel nexthop object changed: the routes through it are not
 * announced again, so they are looked at here. One walk of the prefixes:
 * objects change far less often than routes. */
static int nexthop_msg(struct rs *s, const struct rtnl_nexthop *m)
{
	struct nhobj *o = nhobj_get(s, m->id);
	struct nh_dep d = { .s = s, .id = m->id };

	if (o) {
		/* Before it changes: groups that held it. */
		ht_each(&s->pfx, nh_dirty, &d);
	}
	if (m->del) {
		if (o) {
			ht_remove(&s->nhobj, &o->node);
			free(o);
		}
		/* The kernel drops it from its groups and removes the
		 * routes left without one, unannounced: dump again. */
		s->resync = s->resync ?: "nexthop";
		return 0;
	}
	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return -ENOMEM;
		o->id = m->id;
		o->node.hash = hash_bytes(&o->id, 4);
		ht_insert(&s->nhobj, &o->node);
	}
	o->gen = s->gen;
	o->blackhole = m->blackhole;
	o->fdb = m->fdb;
	o->encap = m->encap;
	o->weighted = m->weighted;
	o->dead = m->dead;
	o->too_many = m->too_many;
	o->hop = m->hop;
	o->ngroup = m->ngroup;
	memcpy(o->group, m->group, m->ngroup * sizeof(m->group[0]));
	ht_each(&s->pfx, nh_dirty, &d);
	return 0;
}

static int msg_cb(const struct nlmsghdr *nh, void *ctx)
{
	struct rs *s = ctx;
	union {
		struct rtnl_route r;
		struct rtnl_neigh n;
		struct rtnl_link l;
		struct rtnl_nexthop x;
	} * u;
	int ret = 0;

	switch (nh->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		if (s->o.follow_only)
			return 0;
		u = malloc(sizeof(*u));
		if (!u)
			return -ENOMEM;
		if (!rtnl_route_parse(nh, &u->r))
			ret = route_msg(s, &u->r);
		free(u);
		return ret;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH: {
		struct rtnl_neigh n;

		return rtnl_neigh_parse(nh, &n) ? 0 : neigh_msg(s, &n);
	}
	case RTM_NEWLINK:
	case RTM_DELLINK: {
		struct rtnl_link l;

		return rtnl_link_parse(nh, &l) ? 0 : link_msg(s, &l);
	}
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		if (s->o.follow_only)
			return 0;
		u = malloc(sizeof(*u));
		if (!u)
			return -ENOMEM;
		if (!rtnl_nexthop_parse(nh, &u->x))
			ret = nexthop_msg(s, &u->x);
		free(u);
		return ret;
	case RTM_DELADDR: {
		struct rtnl_addr a;

		return rtnl_addr_parse(nh, &a) ? 0 : addr_msg(s, &a);
	}
	}
	return 0;
}

/* ---- dumps and the resync ---- */

static int dump(struct rs *s, struct rtnl_sock *d, int type, int family)
{
	int ret, try;

	for (try = 0; try < DUMP_TRIES; try++) {
		ret = rtnl_dump(d, type, family, msg_cb, s);
		if (ret != -EAGAIN)
			return ret;
	}
	return ret;
}

static void sweep_neigh(void *e, void *ctx)
{
	struct neigh *n = e;
	struct rs *s = ctx;

	if (n->gen == s->gen)
		return;
	neigh_gone(s, n);
}

static void host_mark(void *e, void *ctx)
{
	struct neigh *n = e;

	if (n->host)
		host_dirty(ctx, n);
}

static void sweep_link(void *e, void *ctx)
{
	struct link *l = e;
	struct rs *s = ctx;

	if (l->gen == s->gen)
		return;
	s->nh_check = true;
	ht_remove(&s->link, &l->node);
	free(l);
}

static void sweep_nhobj(void *e, void *ctx)
{
	struct nhobj *o = e;
	struct rs *s = ctx;

	if (o->gen == s->gen)
		return;
	ht_remove(&s->nhobj, &o->node);
	free(o);
}

static void port_retry(void *e, void *ctx)
{
	struct link *l = e;

	l->port = false;
	l->port_failed = false;
}

/* Drops the kernel routes the last dump did not show; every prefix is
 * looked at again. */
static void sweep_pfx(void *e, void *ctx)
{
	struct pfx *p = e;
	struct rs *s = ctx;
	struct kroute **pp = &p->kr, *k;

	while ((k = *pp)) {
		if (k->gen != s->gen) {
			*pp = k->next;
			free(k);
		} else {
			pp = &k->next;
		}
	}
	mark_dirty(s, p);
}

/* Forgets what xnf holds (re-read next). */
static void forget_have(void *e, void *ctx)
{
	((struct pfx *)e)->have = 0;
}

/* Fingerprints of the synced routes xnf holds now. */
static int read_have(struct rs *s)
{
	struct xnf_route_entry *ents = NULL;
	__u64 *group_fp = calloc(XNF_MAX_NHG, sizeof(*group_fp));
	__u32 n, i, j;
	int ret;

	if (!group_fp)
		return -ENOMEM;
	ret = xnf_route_list(s->dp, &ents, &n);
	if (ret)
		goto out;
	ht_each(&s->pfx, forget_have, s);
	s->routes = 0;
	for (i = 0; i < n; i++) {
		const struct xnf_route_entry *e = &ents[i];
		struct rtnl_hop hops[XNF_NHG_PATHS] = {};
		const struct rtnl_hop *hp[XNF_NHG_PATHS];
		__u64 fp = 0;
		struct pfx *p;

		if (e->rt.origin != XNF_ORIGIN_SYNC)
			continue;
		if (e->rt.type == XNF_RT_MULTIPATH && e->nh < XNF_MAX_NHG &&
		    group_fp[e->nh]) {
			fp = group_fp[e->nh];
		} else if (e->rt.type == XNF_RT_MULTIPATH) {
			struct xnf_nhgroup g;
			struct xnf_nexthop nh;
			__u32 mtu = 0;

			/* 1: never equal to what a prefix should be, so the
			 * route is written again. The sync gives every next
			 * hop of a route the route's MTU. */
			fp = 1;
			if (!xnf_nhg_lookup(s->dp, e->nh, &g) &&
			    g.n <= XNF_NHG_PATHS) {
				for (j = 0; j < g.n; j++) {
					if (xnf_nh_lookup(s->dp, g.nh[j], &nh) ||
					    (j && nh.mtu != mtu))
						break;
					mtu = nh.mtu;
					hops[j].ifindex = nh.ifindex;
					hops[j].gw_family = nh.gw_family;
					memcpy(hops[j].gw, nh.gw, 16);
					hp[j] = &hops[j];
				}
				if (j == g.n)
					fp = fingerprint(XNF_RT_MULTIPATH, 0,
							 mtu, hp, g.n);
			}
			if (e->nh < XNF_MAX_NHG)
				group_fp[e->nh] = fp;
		} else if (e->rt.type == XNF_RT_UNICAST) {
			hops[0].ifindex = e->rt.ifindex;
			hops[0].gw_family = e->rt.gw_family;
			memcpy(hops[0].gw, e->rt.gw, 16);
			hp[0] = &hops[0];
			/* A synced unicast route always has a gateway. */
			fp = e->rt.gw_family ? fingerprint(XNF_RT_UNICAST, 0,
							   e->rt.mtu, hp, 1) :
					       1;
		} else {
			fp = fingerprint(e->rt.type, e->rt.why, 0, NULL, 0);
		}
		p = pfx_get(s, e->family, e->addr, e->plen, true);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		p->have = fp;
		s->routes++;
	}
out:
	free(ents);
	free(group_fp);
	return ret;
}

/* Everything dumped again; stale kernel routes, neighbours and links
 * dropped; what xnf holds read back. */
static int resync(struct rs *s, struct rtnl_sock *d)
{
	int ret;

	s->gen++;
	/* A device the devmap refused may take it now. */
	ht_each(&s->link, port_retry, s);
	ret = dump(s, d, RTM_GETLINK, AF_UNSPEC);
	if (!ret)
		ret = dump(s, d, RTM_GETNEIGH, AF_UNSPEC);
	/* Kernels without nexthop objects (before 5.3) refuse the dump. */
	if (!ret && !s->o.follow_only &&
	    dump(s, d, RTM_GETNEXTHOP, AF_UNSPEC) == -EAGAIN)
		ret = -EAGAIN;
	if (!ret && !s->o.follow_only)
		ret = dump(s, d, RTM_GETROUTE, AF_INET);
	if (!ret && !s->o.follow_only)
		ret = dump(s, d, RTM_GETROUTE, AF_INET6);
	if (ret)
		return ret;
	ht_each(&s->neigh, sweep_neigh, s);
	ht_each(&s->link, sweep_link, s);
	s->nh_check = true;
	s->hosts_check = true;
	if (s->o.follow_only)
		return 0;
	ht_each(&s->nhobj, sweep_nhobj, s);
	/* What xnf holds is read first, so that the sweep looks at every
	 * prefix xnf has too: one the kernel deleted while no sync ran (or
	 * while a killed one was down) is known only from there, and goes. */
	ret = read_have(s);
	if (!ret)
		ht_each(&s->pfx, sweep_pfx, s);
	return ret;
}

static void drop_unused(void *e, void *ctx)
{
	struct pfx *p = e;
	struct rs *s = ctx;

	if (!p->kr && !p->have && !p->dirty) {
		ht_remove(&s->pfx, &p->node);
		free(p);
	}
}

/* Neighbours first (outside the batch: a MAC is right at once), then the
 * dirty prefixes as one batch. */
static int flush(struct rs *s, enum xnf_rtsync_ev type, const char *reason)
{
	struct xnf_rtsync_event ev = { .type = type, .reason = reason };
	__u64 t0 = now_us();
	size_t i;
	int ret = 0;

	memset(&s->counts, 0, sizeof(s->counts));
	s->unsup_events = 0;
	ret = xnf_dp_lock(s->dp, LOCK_EX);
	if (ret)
		return ret;
	if (s->nh_check) {
		ret = nh_follow(s);
		if (ret)
			goto out;
	}
	if (s->hosts_check) {
		s->hosts_check = false;
		ht_each(&s->neigh, host_mark, s);
	}
	if (!s->ndirty)
		goto out;
	ret = xnf_route_batch_begin(s->dp);
	if (ret)
		goto out;
	for (i = 0; i < s->ndirty && !ret; i++) {
		ret = pfx_apply(s, s->dirty[i]);
		/* A full table (the first dump, a resync after a flood) in
		 * batches of XNF_RTSYNC_BATCH_MAX prefixes, the lock given up
		 * between them: a writer waiting for it (xnf -w 10, an
		 * apply at boot) gets in within a batch's time. */
		if (!ret && (i + 1) % XNF_RTSYNC_BATCH_MAX == 0 &&
		    i + 1 < s->ndirty) {
			ret = xnf_route_batch_commit(s->dp);
			if (!ret)
				s->batches++;
			xnf_dp_lock(s->dp, LOCK_UN);
			if (!ret)
				ret = xnf_dp_lock(s->dp, LOCK_EX);
			if (!ret)
				ret = xnf_route_batch_begin(s->dp);
			if (ret)
				goto out;
		}
	}
	if (ret) {
		xnf_route_batch_abort(s->dp);
		goto out;
	}
	if (s->o.kill_batch && s->batches + 1 == s->o.kill_batch)
		raise(SIGKILL);
	ret = xnf_route_batch_commit(s->dp);
	if (ret)
		goto out;
	s->batches++;
	/* Routes written since a resync may have gone again. */
	if (s->pfx.n > 2 * (size_t)s->routes + 1024 || type == XNF_RTSYNC_RESYNC)
		ht_each(&s->pfx, drop_unused, s);
	ev.added = s->counts.added;
	ev.replaced = s->counts.replaced;
	ev.deleted = s->counts.deleted;
	ev.unchanged = s->counts.unchanged;
	ev.unsupported = s->counts.unsupported;
	ev.routes = s->routes;
	ev.usec = now_us() - t0;
	s->counts.usec = ev.usec; /* for the STARTED event */
	if (ev.added || ev.replaced || ev.deleted)
		change_log(s,
			   "%u added, %u replaced, %u deleted (%s); %u synced "
			   "routes",
			   ev.added, ev.replaced, ev.deleted,
			   type == XNF_RTSYNC_RESYNC ? reason : "batch",
			   ev.routes);
	if (type != XNF_RTSYNC_BATCH || ev.added || ev.replaced || ev.deleted)
		emit(s, &ev);
out:
	for (i = 0; i < s->ndirty; i++)
		s->dirty[i]->dirty = false;
	s->ndirty = 0;
	xnf_dp_lock(s->dp, LOCK_UN);
	return ret;
}

static int full_resync(struct rs *s, struct rtnl_sock *d, const char *why)
{
	int ret;

	s->resync = NULL;
	s->changes = 0;
	ret = resync(s, d);
	if (!ret)
		ret = flush(s, XNF_RTSYNC_RESYNC, why);
	return ret;
}

/* ---- registration and the sync's lock ---- */

/*
 * A running sync holds an exclusive flock on <root>/tables from its start
 * to its end: that, not the pid it registered, says whether it runs. A
 * lock goes with its holder's last descriptor, so a killed sync holds
 * none, while its pid may still exist (a zombie that its parent has not
 * reaped yet answers kill(pid, 0)) or name another process by now. The
 * writers' lock is the flock on <root>, another inode: the two never
 * meet. Into *@fd: the locked descriptor, or -1 and -EBUSY while a sync
 * holds it.
 */
static int sync_lock(struct xnf_dp *dp, int *fd)
{
	char path[XNF_ROOT_MAX + 8];
	int ret;

	snprintf(path, sizeof(path), "%s/tables", xnf_dp_root(dp));
	*fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	if (!flock(*fd, LOCK_EX | LOCK_NB))
		return 0;
	ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
	close(*fd);
	*fd = -1;
	return ret;
}

bool xnf_rtsync_runs(struct xnf_dp *dp)
{
	int fd, ret;

	ret = sync_lock(dp, &fd);
	if (!ret)
		close(fd);
	return ret == -EBUSY;
}

/* Whether a process holds an exclusive flock on the file of @dev/@ino:
 * /proc/locks lines as "1: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE 0 EOF"
 * (major and minor in hex; a waiter's line has "->" after the number).
 * Read, not tried: trying the lock would, for a moment, make a sync that
 * starts then fail as if another one ran. */
static int flock_held(dev_t dev, ino_t ino, bool *held)
{
	unsigned int maj, min;
	unsigned long long i;
	char line[256], kind[16], mode[16];
	FILE *f;
	int pid;

	*held = false;
	f = fopen("/proc/locks", "re");
	if (!f)
		return -errno;
	while (!*held && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: %15s %*s %15s %d %x:%x:%llu", kind, mode,
			   &pid, &maj, &min, &i) == 6 &&
		    !strcmp(kind, "FLOCK") && !strcmp(mode, "WRITE"))
			*held = maj == major(dev) && min == minor(dev) &&
				i == (unsigned long long)ino;
	fclose(f);
	return 0;
}

int xnf_rtsync_status(struct xnf_dp *dp, struct xnf_rtsync_status *st)
{
	char path[XNF_ROOT_MAX + 8];
	struct xnf_change c;
	struct stat sb;
	__u64 seq, n;
	int ret;

	*st = (struct xnf_rtsync_status){};
	ret = xnf_rtsync_get(dp, &st->info);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/tables", xnf_dp_root(dp));
	if (stat(path, &sb))
		return -errno;
	ret = flock_held(sb.st_dev, sb.st_ino, &st->running);
	if (ret)
		return ret;
	/* The log is read back from its newest record; a record being
	 * written or one written over ends the search. */
	ret = xnf_change_seq(dp, &seq);
	for (n = 0; !ret && n < XNF_CHANGES_MAX && n < seq; n++) {
		if (xnf_change_read(dp, seq - n, &c))
			break;
		if (!strcmp(c.cmd, CHANGE_CMD_SYNC)) {
			st->last_change = c.time;
			break;
		}
	}
	return ret;
}

/* The sync's lock into *@fd (-1 when the caller need not keep it), or
 * why not in @err. */
static int sync_lock_err(struct xnf_dp *dp, int *fd, char *err, size_t errlen)
{
	struct xnf_rtsync_info info = {};
	int ret;

	ret = sync_lock(dp, fd);
	if (ret == -EBUSY) {
		xnf_rtsync_get(dp, &info);
		return xnf_errf(err, errlen, ret,
				"a route sync (pid %u) runs on this instance; "
				"stop it first",
				info.pid);
	}
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot lock %s/tables for the route sync: %s",
				xnf_dp_root(dp), strerror(-ret));
	return 0;
}

static int start_checks(struct rs *s, char *err, size_t errlen)
{
	struct xnf_route_entry *ents = NULL;
	__u32 n, i, hand = 0;
	int ret;

	ret = sync_lock_err(s->dp, &s->lock_fd, err, errlen);
	if (ret)
		return ret;
	/* A follower only checks: it may run beside a sync. */
	if (s->o.follow_only) {
		close(s->lock_fd);
		s->lock_fd = -1;
		return 0;
	}
	ret = xnf_route_list(s->dp, &ents, &n);
	if (ret)
		return xnf_errf(err, errlen, ret, "cannot read the routes: %s",
				strerror(-ret));
	for (i = 0; i < n; i++)
		hand += ents[i].rt.origin != XNF_ORIGIN_SYNC;
	free(ents);
	if (hand)
		return xnf_errf(err, errlen, -EEXIST,
				"%u route%s added by hand %s in the tables; one "
				"source of truth: delete them before syncing",
				hand, hand == 1 ? "" : "s",
				hand == 1 ? "is" : "are");
	return 0;
}

static int rs_init(struct rs *s, struct xnf_dp *dp,
		   const struct xnf_rtsync_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->dp = dp;
	s->lock_fd = -1;
	s->o = *o;
	if (!s->o.table)
		s->o.table = RT_TABLE_MAIN;
	if (!s->o.window_ms)
		s->o.window_ms = XNF_RTSYNC_WINDOW_MS;
	if (!s->o.window_max_ms)
		s->o.window_max_ms = XNF_RTSYNC_WINDOW_MAX_MS;
	if (s->o.window_max_ms < s->o.window_ms)
		s->o.window_max_ms = s->o.window_ms;
	if (!s->o.resync_s)
		s->o.resync_s = XNF_RTSYNC_RESYNC_S;
	if (!s->o.rcvbuf)
		s->o.rcvbuf = XNF_RTSYNC_RCVBUF;
	if (ht_init(&s->pfx, offsetof(struct pfx, key), sizeof(struct pfx_key)) ||
	    ht_init(&s->neigh, offsetof(struct neigh, key),
		    sizeof(struct neigh_key)) ||
	    ht_init(&s->link, offsetof(struct link, ifindex), sizeof(__u32)) ||
	    ht_init(&s->nhobj, offsetof(struct nhobj, id), sizeof(__u32)))
		return -ENOMEM;
	return 0;
}

static void free_pfx(void *e, void *ctx)
{
	struct pfx *p = e;
	struct kroute *k;

	while ((k = p->kr)) {
		p->kr = k->next;
		free(k);
	}
	free(p);
}

static void rs_free(struct rs *s)
{
	ht_free(&s->pfx, free_pfx);
	ht_free(&s->neigh, NULL);
	ht_free(&s->link, NULL);
	ht_free(&s->nhobj, NULL);
	free(s->dirty);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
}

static __u64 ms_to_us(__u64 ms)
{
	return ms * 1000;
}

static int loop(struct rs *s, struct rtnl_sock *ev, struct rtnl_sock *d,
		volatile sig_atomic_t *stop)
{
	__u64 first = 0, last = 0, next_resync;
	int ret = 0;

	next_resync = s->o.resync_s == ~0U ?
			      ~0ULL :
			      now_us() + s->o.resync_s * 1000000ULL;
	while (!*stop) {
		struct pollfd pfd = { .fd = ev->fd, .events = POLLIN };
		__u64 now = now_us(), deadline = next_resync;
		int timeout, r;

		if (first) {
			__u64 idle = last + ms_to_us(s->o.window_ms);
			__u64 cap = first + ms_to_us(s->o.window_max_ms);

			deadline = idle < cap ? idle : cap;
		}
		if (s->resync)
			deadline = now;
		timeout = deadline <= now ? 0 :
			  deadline - now > 1000000 ?
					    1000 :
					    (int)((deadline - now + 999) / 1000);
		r = poll(&pfd, 1, timeout);
		if (r < 0 && errno != EINTR)
			return -errno;
		now = now_us();
		if (r > 0) {
			__u64 before = s->changes;

			ret = rtnl_read(ev, msg_cb, s);
			if (ret == -ENOBUFS) {
				struct xnf_rtsync_event e = {
					.type = XNF_RTSYNC_OVERRUN,
				};

				emit(s, &e);
				s->resync = "overrun";
			} else if (ret) {
				return ret;
			}
			if (s->changes != before) {
				if (!first)
					first = now;
				last = now;
			}
		}
		if (s->resync || now >= next_resync) {
			if (now >= next_resync) {
				next_resync = now + s->o.resync_s * 1000000ULL;
				s->resync = s->resync ?: "periodic";
			}
			ret = full_resync(s, d, s->resync);
			first = 0;
		} else if (first &&
			   (now >= last + ms_to_us(s->o.window_ms) ||
			    now >= first + ms_to_us(s->o.window_max_ms))) {
			first = 0;
			ret = flush(s, XNF_RTSYNC_BATCH, NULL);
		}
		/* A dump that kept racing changes is tried again; any other
		 * failure ends the sync (the tables keep the last committed
		 * batch; a restart resyncs). */
		if (ret == -EAGAIN)
			s->resync = "dump";
		else if (ret)
			return ret;
	}
	/* What the window gathered so far is written before the end. */
	return first ? flush(s, XNF_RTSYNC_BATCH, NULL) : 0;
}

int xnf_rtsync_run(struct xnf_dp *dp, const struct xnf_rtsync_opts *o,
		   xnf_rtsync_fn fn, void *ctx, volatile sig_atomic_t *stop,
		   char *err, size_t errlen)
{
	static const unsigned int groups[] = {
		RTNLGRP_IPV4_ROUTE,  RTNLGRP_IPV6_ROUTE,
		RTNLGRP_NEIGH,	     RTNLGRP_LINK,
		RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
		RTNLGRP_NEXTHOP,     0,
	};
	struct rtnl_sock ev = { .fd = -1 }, d = { .fd = -1 };
	struct xnf_rtsync_info info = {};
	struct xnf_rtsync_event e = {};
	struct timespec ts;
	struct rs s;
	bool registered = false;
	int ret;

	ret = rs_init(&s, dp, o);
	if (ret) {
		xnf_errf(err, errlen, ret, "route sync: out of memory");
		goto out;
	}
	s.fn = fn;
	s.ctx = ctx;
	ret = start_checks(&s, err, errlen);
	if (ret)
		goto out;
	/* Subscribed before the first dump: nothing that changes after it
	 * is missed (what changed before is in the dump too, and applying
	 * it again changes nothing). */
	ret = rtnl_open(&ev, groups, s.o.rcvbuf);
	if (!ret)
		ret = rtnl_open(&d, NULL, 0);
	if (ret) {
		xnf_errf(err, errlen, ret, "cannot open rtnetlink: %s",
			 strerror(-ret));
		goto out;
	}
	if (!s.o.follow_only) {
		clock_gettime(CLOCK_REALTIME, &ts);
		info.pid = getpid();
		info.table = s.o.table;
		info.since = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		ret = xnf_rtsync_set(dp, &info);
		if (ret) {
			xnf_errf(err, errlen, ret,
				 "cannot register the route sync: %s",
				 strerror(-ret));
			goto out;
		}
		registered = true;
	}
	xnf_dp_lock(dp, LOCK_UN);
	ret = full_resync(&s, &d, "start");
	if (ret) {
		xnf_errf(err, errlen, ret, "the first sync failed: %s",
			 strerror(-ret));
		goto out;
	}
	/* With what the start changed: what the kernel changed while no
	 * sync ran. */
	e = s.counts;
	e.type = XNF_RTSYNC_STARTED;
	e.reason = NULL;
	e.routes = s.routes;
	emit(&s, &e);
	ret = loop(&s, &ev, &d, stop);
	if (ret)
		xnf_errf(err, errlen, ret, "route sync stopped: %s",
			 strerror(-ret));
out:
	if (registered) {
		/* The routes stay and forward; the table stays claimed. */
		xnf_dp_lock(dp, LOCK_EX);
		info.pid = 0;
		xnf_rtsync_set(dp, &info);
		xnf_dp_lock(dp, LOCK_UN);
	}
	if (!ret) {
		e.type = XNF_RTSYNC_STOPPED;
		e.routes = s.routes;
		emit(&s, &e);
	}
	if (ev.buf)
		rtnl_close(&ev);
	if (d.buf)
		rtnl_close(&d);
	rs_free(&s);
	return ret;
}

int xnf_rtsync_flush(struct xnf_dp *dp, __u32 *n, char *err, size_t errlen)
{
	struct xnf_route_entry *ents = NULL;
	struct xnf_rtsync_info info = {};
	__u32 cnt, i;
	int lock_fd, ret;

	*n = 0;
	/* Held to the end: no sync starts while its routes go. */
	ret = sync_lock_err(dp, &lock_fd, err, errlen);
	if (ret)
		return ret;
	ret = xnf_route_list(dp, &ents, &cnt);
	if (ret) {
		xnf_errf(err, errlen, ret, "cannot read the routes: %s",
			 strerror(-ret));
		goto out;
	}
	ret = xnf_route_batch_begin(dp);
	for (i = 0; i < cnt && !ret; i++) {
		if (ents[i].rt.origin != XNF_ORIGIN_SYNC)
			continue;
		ret = xnf_route_del(dp, ents[i].family, ents[i].addr,
				    ents[i].plen);
		if (ret == -ENOENT)
			ret = 0;
		*n += !ret;
	}
	if (ret) {
		xnf_route_batch_abort(dp);
		*n = 0;
	} else {
		ret = xnf_route_batch_commit(dp);
	}
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "cannot remove the synced routes: %s", strerror(-ret));
		goto out;
	}
	ret = xnf_rtsync_set(dp, &info);
	if (ret)
		xnf_errf(err, errlen, ret,
			 "cannot clear the route sync registration: %s",
			 strerror(-ret));
out:
	free(ents);
	close(lock_fd);
	return ret;
}

/* ---- names of tables and protocols ---- */

/* In the iproute2 file @file (lines "NUMBER NAME") of the first
 * directory that has a line for it: @name's number into *@v, or, with a
 * NULL @name, the name of the number *@v into @buf[64] (the last line
 * for it: ip(8) lets a later line name a number anew). */
static int names_find(const char *file, const char *name, __u32 *v, char *buf)
{
	static const char *const dirs[] = { "/etc/iproute2",
					    "/usr/share/iproute2",
					    "/usr/lib/iproute2" };
	char path[256], line[256], word[64];
	unsigned long num;
	bool found = false;
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !found; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dirs[i], file);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, " %lu %63s", &num, word) != 2 ||
			    line[strspn(line, " \t")] == '#')
				continue;
			if (name && !strcmp(word, name)) {
				*v = num;
				found = true;
				break;
			}
			if (!name && num == *v) {
				memcpy(buf, word, sizeof(word));
				found = true;
			}
		}
		fclose(f);
	}
	return found ? 0 : -ENOENT;
}

static int name_lookup(const char *file, const char *name, __u32 *v)
{
	return names_find(file, name, v, NULL);
}

static int number(const char *s, unsigned long max, __u32 *v)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 0);
	if (errno || end == s || *end || n > max || *s == '-')
		return -EINVAL;
	*v = n;
	return 0;
}

/* The tables ip(8) names without rt_tables. */
static const struct {
	const char *name;
	__u32 id;
} reserved_tables[] = { { "main", RT_TABLE_MAIN },
			{ "local", RT_TABLE_LOCAL },
			{ "default", RT_TABLE_DEFAULT } };

int xnf_rt_table_parse(const char *s, __u32 *table)
{
	size_t i;

	if (!number(s, 0xffffffffUL, table))
		return *table ? 0 : -EINVAL;
	for (i = 0; i < sizeof(reserved_tables) / sizeof(reserved_tables[0]); i++)
		if (!strcmp(s, reserved_tables[i].name)) {
			*table = reserved_tables[i].id;
			return 0;
		}
	return name_lookup("rt_tables", s, table) || !*table ? -EINVAL : 0;
}

const char *xnf_rt_table_name(__u32 table, char *buf, size_t len)
{
	char name[64];
	size_t i;

	if (!names_find("rt_tables", NULL, &table, name)) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	for (i = 0; i < sizeof(reserved_tables) / sizeof(reserved_tables[0]); i++)
		if (table == reserved_tables[i].id) {
			snprintf(buf, len, "%s", reserved_tables[i].name);
			return buf;
		}
	snprintf(buf, len, "%u", table);
	return buf;
}

int xnf_rt_proto_parse(const char *s, __u8 *proto)
{
	/* iproute2's built-in names, for a system without rt_protos. */
	static const struct {
		const char *name;
		__u8 id;
	} known[] = {
		{ "redirect", RTPROT_REDIRECT },
		{ "kernel", RTPROT_KERNEL },
		{ "boot", RTPROT_BOOT },
		{ "static", RTPROT_STATIC },
		{ "ra", RTPROT_RA },
		{ "dhcp", RTPROT_DHCP },
		{ "zebra", RTPROT_ZEBRA },
		{ "bird", RTPROT_BIRD },
		{ "keepalived", RTPROT_KEEPALIVED },
		{ "babel", RTPROT_BABEL },
		{ "openr", RTPROT_OPENR },
		{ "bgp", RTPROT_BGP },
		{ "isis", RTPROT_ISIS },
		{ "ospf", RTPROT_OSPF },
		{ "rip", RTPROT_RIP },
		{ "eigrp", RTPROT_EIGRP },
	};
	size_t i;
	__u32 v;

	if (!number(s, 255, &v) || !name_lookup("rt_protos", s, &v)) {
		if (v > 255)
			return -EINVAL;
		*proto = v;
		return 0;
	}
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(s, known[i].name)) {
			*proto = known[i].id;
			return 0;
		}
	return -EINVAL;
}
