// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * nf_l3fwd.c - the l3fwd NF for AF_XDP workers: bpf/l3fwd.bpf.h in its own
 * LPM mode (xnf route), on copies of xnf_rt4 / xnf_rt6 and of the next
 * hops and groups they name (xnf_nh, xnf_nhg) taken at init and on
 * refresh. Same decisions in the same order, same reasons; a multipath
 * route picks its bucket by the flow hash XDP uses (xnf_nh.h):
 *
 *   not IP                         pass (not_ip)
 *   VLAN-tagged                    pass (vlan)
 *   IPv4 header checksum wrong     drop (bad_csum)
 *   martian addresses (xnf_rx.h)   cfg.martian (martian)
 *   broadcast, multicast or link-  cfg.local (local)
 *   local addresses (xnf_rx.h),
 *   group MAC
 *   no route / unreachable route   cfg.no_route (no_route)
 *   local route                    cfg.local (local)
 *   blackhole route                drop (blackhole)
 *   nexthop or group missing       drop (internal)
 *   TTL / hop limit <= 1           cfg.ttl_expired (ttl_expired)
 *   IPv6 from ::                   cfg.martian (martian)
 *   nexthop without neighbour      pass (no_neigh)
 *   longer than the route MTU or   pass (frag_needed)
 *   the egress MTU
 *   otherwise                      MACs of the route, TTL - 1 with the
 *                                  IPv4 checksum updated (RFC 1624),
 *                                  redirect to the route's port
 *
 * On an attachment with 'fib' (xnf attach DEV chain xsk fib) it forwards
 * by the kernel's FIB instead, as the XDP l3fwd with fib: the xsk NF asked
 * the FIB for the frame and left the answer in front of it (struct
 * xnf_xsk_meta, include/uapi/xnf_fib.h), which xnf_fib_exception() reads
 * as XDP does; the receive checks and TTL come first, as above. A frame
 * without the answer (its magic missing) passes (fib).
 *
 * The receive checks are include/uapi/xnf_rx.h, the rules XDP runs. The
 * route decides before the TTL, as in XDP. The egress MTUs and the
 * exception actions (xnf_config) are read with the routes: an MTU change
 * alone reaches the worker with the next table change. A pass cannot
 * reach the kernel from a worker (see unf.h): put the XDP l3fwd before
 * xsk in the chain when the kernel must answer with ICMP.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>

#include "xnf.h"
#include "xnf_rx.h"
#include "xnf_nh.h"
#include "xnf_fib.h"
#include "unf_priv.h"

/* A next hop of xnf_nh. */
struct l3_nh {
	__u32 ifindex;
	__u32 mtu;   /* of ifindex, or the route's when lower; 0: none */
	__u32 state; /* enum xnf_nh_state */
	__u8 dmac[ETH_ALEN];
	__u8 smac[ETH_ALEN];
};

/* A group of xnf_nhg: buckets as indexes into l3_tables.nh. */
struct l3_grp {
	__u32 bucket[XNF_NHG_BUCKETS];
};

#define L3_DANGLING 0xffffffffu /* names a nexthop or group that is gone */

/* A route: the value of the tries. */
struct l3_rt {
	__u32 type; /* enum xnf_route_type */
	__u32 idx;  /* into nh (unicast) or grp (multipath), or L3_DANGLING */
};

struct l3_tables {
	struct xnf_lpm v4, v6;
	struct l3_rt *rt; /* the values of both tries */
	struct l3_nh *nh;
	__u32 *nh_id; /* nh[i] is nexthop nh_id[i] */
	__u32 n_nh;
	struct l3_grp *grp;
	__u32 *grp_id;
	__u32 n_grp;
	__u32 no_route, ttl_expired, local, martian; /* xnf_config */
	bool fib; /* the attachment's 'fib': no routes read */
};

struct l3fwd {
	struct l3_tables *t;
};

static void l3_tables_free(struct l3_tables *t)
{
	if (!t)
		return;
	xnf_lpm_free(&t->v4);
	xnf_lpm_free(&t->v6);
	free(t->rt);
	free(t->nh);
	free(t->nh_id);
	free(t->grp);
	free(t->grp_id);
	free(t);
}

/* MTUs by ifindex, so that each device is asked once per snapshot. */
struct mtu_cache {
	__u32 n;
	struct {
		__u32 ifindex, mtu;
	} e[XNF_MAX_PORTS];
};

static __u32 mtu_of(struct mtu_cache *c, __u32 ifindex)
{
	__u32 i, mtu;

	for (i = 0; i < c->n; i++)
		if (c->e[i].ifindex == ifindex)
			return c->e[i].mtu;
	mtu = xnf_unf_if_mtu(ifindex);
	if (c->n < XNF_MAX_PORTS) {
		c->e[c->n].ifindex = ifindex;
		c->e[c->n++].mtu = mtu;
	}
	return mtu;
}

static __u32 index_of(const __u32 *ids, __u32 n, __u32 id)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return i;
	return L3_DANGLING;
}

/* The next hops and groups, resolved to indexes. */
static int l3_load_nh(const struct xnf_unf *nf, struct l3_tables *t,
		      struct mtu_cache *mc, char *errbuf, size_t errlen)
{
	struct xnf_nhgroup *gs = NULL;
	struct xnf_nexthop *nhs = NULL;
	__u32 i, b, idx;
	int err;

	err = xnf_nh_list(nf->env.dp, &t->nh_id, &nhs, &t->n_nh);
	if (!err)
		err = xnf_unf_map_dump(xnf_table_fd(nf->env.dp, XNF_T_NHG),
				       sizeof(__u32), sizeof(*gs), XNF_MAX_NHG,
				       (void **)&t->grp_id, (void **)&gs,
				       &t->n_grp);
	if (err) {
		xnf_errf(errbuf, errlen, err, "cannot read %s and %s: %s",
			 xnf_table_names[XNF_T_NH], xnf_table_names[XNF_T_NHG],
			 strerror(-err));
		goto out;
	}
	t->nh = calloc(t->n_nh ?: 1, sizeof(*t->nh));
	t->grp = calloc(t->n_grp ?: 1, sizeof(*t->grp));
	if (!t->nh || !t->grp) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->n_nh; i++) {
		struct l3_nh *nh = &t->nh[i];

		nh->ifindex = nhs[i].ifindex;
		nh->state = nhs[i].state;
		memcpy(nh->dmac, nhs[i].dmac, ETH_ALEN);
		memcpy(nh->smac, nhs[i].smac, ETH_ALEN);
		/* bpf_check_mtu() with ifindex 0 checks the receiving
		 * device, and finds no other for an ifindex that is gone.
		 * The route's MTU applies too, when it has one. */
		nh->mtu = mtu_of(mc, nh->ifindex ?: nf->env.ingress_ifindex);
		if (nhs[i].mtu && (!nh->mtu || nhs[i].mtu < nh->mtu))
			nh->mtu = nhs[i].mtu;
	}
	for (i = 0; i < t->n_grp; i++)
		for (b = 0; b < XNF_NHG_BUCKETS; b++) {
			idx = index_of(t->nh_id, t->n_nh, gs[i].bucket[b]);
			t->grp[i].bucket[b] = idx;
		}
out:
	free(nhs);
	free(gs);
	return err;
}

/* Routes of one family into @t->rt[*used..] and the LPM table @lpm. */
static int l3_load(struct l3_tables *t, int family, struct xnf_lpm *lpm,
		   __u32 *used, int fd, char *errbuf, size_t errlen)
{
	enum xnf_table tab = family == XNF_AF_INET ? XNF_T_RT4 : XNF_T_RT6;
	size_t ksz = family == XNF_AF_INET ? sizeof(struct xnf_rt4_key) :
					     sizeof(struct xnf_rt6_key);
	struct xnf_rt_val *rt = NULL;
	struct xnf_lpm_in *in = NULL;
	struct l3_rt *rts;
	__u8 *keys = NULL;
	__u32 n, i;
	int err;

	err = xnf_unf_map_dump(fd, ksz, sizeof(*rt), XNF_MAX_ROUTES,
			       (void **)&keys, (void **)&rt, &n);
	if (err)
		return xnf_errf(errbuf, errlen, err, "cannot read %s: %s",
				xnf_table_names[tab], strerror(-err));
	in = calloc(n ?: 1, sizeof(*in));
	rts = realloc(t->rt, (*used + n + 1) * sizeof(*t->rt));
	if (rts)
		t->rt = rts;
	if (!in || !rts) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct l3_rt *r = &t->rt[*used];
		/* Both key types are { __u32 prefixlen; __u8 addr[]; }. */
		const __u8 *k = keys + i * ksz;
		__u32 plen;

		memcpy(&plen, k, 4);
		memcpy(in[i].addr, k + 4, ksz - 4);
		in[i].len = plen;
		in[i].val = *used;
		r->type = rt[i].type;
		r->idx = 0;
		if (r->type == XNF_RT_UNICAST)
			r->idx = index_of(t->nh_id, t->n_nh, rt[i].nh);
		else if (r->type == XNF_RT_MULTIPATH)
			r->idx = index_of(t->grp_id, t->n_grp, rt[i].nh);
		(*used)++;
	}
	err = xnf_lpm_build(lpm, family, in, n);
	if (err)
		xnf_errf(errbuf, errlen, err, "cannot index %u routes of %s: %s",
			 n, xnf_table_names[tab], strerror(-err));
out:
	free(in);
	free(keys);
	free(rt);
	return err;
}

/* Whether the worker's device was attached with 'fib'. */
static int l3_fib_mode(const struct xnf_unf *nf, bool *fib, char *errbuf,
		       size_t errlen)
{
	struct xnf_dev_status st;
	char dev[IF_NAMESIZE];
	int err;

	*fib = false;
	if (!if_indextoname(nf->env.ingress_ifindex, dev))
		return 0;
	err = xnf_dev_status(nf->env.dp, dev, &st);
	if (err == -ENOENT)
		return 0;
	if (err)
		return xnf_errf(errbuf, errlen, err,
				"cannot read what runs on %s: %s", dev,
				strerror(-err));
	*fib = st.info.l3_fib;
	return 0;
}

/* The FIB's answer in front of the frame (xnf_fib.h), taken: its magic is
 * cleared, so a frame whose answer is missing never reads an older one
 * left in the same UMEM chunk. NULL when there is none for this frame. */
static const struct xnf_xsk_meta *l3_fib_answer(struct xnf_upkt *pk,
						struct xnf_xsk_meta *m)
{
	__u8 *at = pk->data - sizeof(*m);

	memcpy(m, at, sizeof(*m));
	if (m->magic != XNF_XSK_META_MAGIC)
		return NULL;
	memset(at, 0, sizeof(m->magic));
	return m->len == pk->len ? m : NULL;
}

static int l3_snapshot(const struct xnf_unf *nf, struct l3_tables **out,
		       char *errbuf, size_t errlen)
{
	struct mtu_cache *mc = calloc(1, sizeof(*mc));
	struct l3_tables *t = calloc(1, sizeof(*t));
	struct xnf_config cfg;
	__u32 used = 0;
	int err = -ENOMEM;

	*out = NULL;
	if (!t || !mc)
		goto err;
	err = xnf_cfg_read(nf->env.dp, &cfg);
	if (err) {
		xnf_errf(errbuf, errlen, err, "cannot read %s: %s",
			 XNF_MAP_STR(XNF_MAP_CFG), strerror(-err));
		goto err;
	}
	t->no_route = cfg.no_route;
	t->ttl_expired = cfg.ttl_expired;
	t->local = cfg.local;
	t->martian = cfg.martian;
	err = l3_fib_mode(nf, &t->fib, errbuf, errlen);
	if (err || t->fib)
		goto out;
	/* Next hops first: a route written after them names only those
	 * (nexthop.c writes objects before the routes that use them). */
	err = l3_load_nh(nf, t, mc, errbuf, errlen);
	if (!err)
		err = l3_load(t, XNF_AF_INET, &t->v4, &used,
			      xnf_route_table_fd(nf->env.dp, XNF_AF_INET),
			      errbuf, errlen);
	if (!err)
		err = l3_load(t, XNF_AF_INET6, &t->v6, &used,
			      xnf_route_table_fd(nf->env.dp, XNF_AF_INET6),
			      errbuf, errlen);
out:
	if (err)
		goto err;
	free(mc);
	*out = t;
	return 0;
err:
	free(mc);
	l3_tables_free(t);
	return err;
}

static int l3fwd_init(struct xnf_unf *nf, const struct xnf_unf_env *env,
		      char *errbuf, size_t errlen)
{
	struct l3fwd *l = nf->priv;

	return l3_snapshot(nf, &l->t, errbuf, errlen);
}

static int l3fwd_refresh(struct xnf_unf *nf, char *errbuf, size_t errlen)
{
	struct l3fwd *l = nf->priv;
	struct l3_tables *t;
	int err;

	err = l3_snapshot(nf, &t, errbuf, errlen);
	if (err)
		return err;
	l3_tables_free(l->t);
	l->t = t;
	return 0;
}

static void l3fwd_fini(struct xnf_unf *nf)
{
	struct l3fwd *l = nf->priv;

	l3_tables_free(l->t);
	l->t = NULL;
}

static inline __u32 rd32(const __u8 *p)
{
	__u32 v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

/* RFC 1624, exactly as xnf_ipv4_dec_ttl(): the TTL is the high byte of a
 * 16-bit word, so the checksum rises by 0x0100 in one's complement, the
 * carry folded back in; never 0xffff, like a checksum from scratch. */
static inline void l3_dec_ttl4(__u8 *iph)
{
	__u16 check;
	__u32 sum;

	memcpy(&check, iph + 10, 2);
	sum = (__u32)check + htobe16(0x0100);
	check = (__u16)(sum + (sum >= 0xffff));
	memcpy(iph + 10, &check, 2);
	iph[8]--;
}

/* The flow hash of XDP's xnf_l3_hash(): the same inputs, as read from
 * memory (so in the same byte order). */
static __u32 l3_hash(const struct xnf_pkt *p, const __u8 *l3)
{
	__u32 a, b, w[2][4];
	__u16 sp = 0, dp = 0;

	if (p->family == XNF_AF_INET) {
		memcpy(&a, l3 + 12, 4);
		memcpy(&b, l3 + 16, 4);
	} else {
		memcpy(w, l3 + 8, 32);
		a = xnf_nh_fold6(w[0]);
		b = xnf_nh_fold6(w[1]);
	}
	if ((p->flags & (XNF_PKT_F_PORTS | XNF_PKT_F_FRAG)) == XNF_PKT_F_PORTS) {
		sp = p->sport;
		dp = p->dport;
	}
	return xnf_nh_flow_hash(a, b, sp, dp, p->l4_proto);
}

/* The receive checks of XDP's xnf_rx_ipv4(): the header checksum over
 * ihl * 4 bytes (the parser checked that they lie within the frame), then
 * the address classes. */
static __u32 l3_rx4(const __u8 *iph)
{
	__u32 i, w, words = (iph[0] & 0xf);
	__u64 sum = 0;

	for (i = 0; i < words; i++) {
		memcpy(&w, iph + 4 * i, 4);
		sum += w;
	}
	if (!xnf_rx_csum_ok(sum))
		return XNF_RX_BAD_CSUM;
	return xnf_rx_class4(rd32(iph + 12), rd32(iph + 16));
}

/* fib mode, after the receive checks: the FIB's answer, then the TTL, as
 * xnf_l3_fib_result() in XDP. */
static void l3_fib_forward(const struct l3_tables *t, struct xnf_upkt *pk,
			   __u8 *l3, __u32 cls)
{
	const struct xnf_config cfg = { .local = t->local,
					.no_route = t->no_route };
	const struct xnf_pkt *p = &pk->meta;
	const struct xnf_xsk_meta *m;
	struct xnf_xsk_meta buf;
	__u32 action, reason;
	__u8 *ttl = p->family == XNF_AF_INET ? l3 + 8 : l3 + 7;

	m = l3_fib_answer(pk, &buf);
	if (!m) {
		xnf_upkt_exception(pk, XNF_ACT_PASS, XNF_R_FIB);
		return;
	}
	if (xnf_fib_exception(m->rc, &cfg, &action, &reason)) {
		xnf_upkt_exception(pk, action, reason);
		return;
	}
	if (*ttl <= 1) {
		xnf_upkt_exception(pk, t->ttl_expired, XNF_R_TTL);
		return;
	}
	if (cls == XNF_RX_MARTIAN_FWD) {
		xnf_upkt_exception(pk, t->martian, XNF_R_MARTIAN);
		return;
	}
	memcpy(pk->data, m->dmac, ETH_ALEN);
	memcpy(pk->data + ETH_ALEN, m->smac, ETH_ALEN);
	xnf_upkt_redirect(pk, m->ifindex);
	if (p->family == XNF_AF_INET)
		l3_dec_ttl4(l3);
	else
		(*ttl)--;
}

static void l3fwd_run(struct xnf_unf *nf, struct xnf_upkt *pkts, __u32 n)
{
	const struct l3_tables *t = ((struct l3fwd *)nf->priv)->t;
	__u32 i, idx;

	for (i = 0; i < n; i++) {
		struct xnf_upkt *pk = &pkts[i];
		struct xnf_pkt *p = &pk->meta;
		const struct l3_nh *nh;
		const struct l3_rt *rt;
		__u8 *eth = pk->data, *l3, *ttl;
		__u64 hi, lo;
		__u32 cls;
		bool found;

		if (xnf_upkt_decided(pk))
			continue;
		/* ARP, LLDP, ...: the kernel's business on a router. */
		if (p->family == XNF_AF_NONE) {
			xnf_upkt_exception(pk, XNF_ACT_PASS, XNF_R_NOT_IP);
			continue;
		}
		/* Tagged frames belong to the kernel's VLAN devices. */
		if (p->vlans) {
			xnf_upkt_exception(pk, XNF_ACT_PASS, XNF_R_VLAN);
			continue;
		}
		l3 = eth + ETH_HLEN;
		if (pk->len < ETH_HLEN + (p->family == XNF_AF_INET ? 20 : 40)) {
			/* The parser saw a whole header; a frame that
			 * lost it since is a bug of the caller. */
			xnf_upkt_exception(pk, XNF_ACT_DROP, XNF_R_INTERNAL);
			continue;
		}
		/* The receive checks, then unicast only (RFC 1812
		 * 5.3.4), as xnf_l3_rx_decided() in XDP. */
		cls = p->family == XNF_AF_INET ? l3_rx4(l3) :
						 xnf_rx_class6(l3 + 8, l3 + 24);
		switch (cls) {
		case XNF_RX_BAD_CSUM:
			xnf_upkt_exception(pk, XNF_ACT_DROP, XNF_R_BAD_CSUM);
			continue;
		case XNF_RX_MARTIAN:
			xnf_upkt_exception(pk, t->martian, XNF_R_MARTIAN);
			continue;
		case XNF_RX_KERNEL:
			goto local;
		}
		if (eth[0] & 1)
			goto local;
		if (t->fib) {
			l3_fib_forward(t, pk, l3, cls);
			continue;
		}
		if (p->family == XNF_AF_INET) {
			xnf_lpm_key(XNF_AF_INET, l3 + 16, &hi, &lo);
			found = xnf_lpm_find(&t->v4, hi, lo, &idx);
			ttl = l3 + 8;
		} else {
			xnf_lpm_key(XNF_AF_INET6, l3 + 24, &hi, &lo);
			found = xnf_lpm_find(&t->v6, hi, lo, &idx);
			ttl = l3 + 7;
		}
		if (!found) {
			xnf_upkt_exception(pk, t->no_route, XNF_R_NO_ROUTE);
			continue;
		}
		rt = &t->rt[idx];
		switch (rt->type) {
		case XNF_RT_UNICAST:
		case XNF_RT_MULTIPATH:
			break;
		case XNF_RT_LOCAL:
			goto local;
		case XNF_RT_BLACKHOLE:
			xnf_upkt_exception(pk, XNF_ACT_DROP, XNF_R_BLACKHOLE);
			continue;
		case XNF_RT_KERNEL:
			xnf_upkt_exception(pk, XNF_ACT_PASS, XNF_R_FIB);
			continue;
		default:
			xnf_upkt_exception(pk, t->no_route, XNF_R_NO_ROUTE);
			continue;
		}
		idx = rt->idx;
		if (rt->type == XNF_RT_MULTIPATH && idx != L3_DANGLING)
			idx = t->grp[idx].bucket[xnf_nh_bucket(l3_hash(p, l3))];
		if (idx == L3_DANGLING) {
			xnf_upkt_exception(pk, XNF_ACT_DROP, XNF_R_INTERNAL);
			continue;
		}
		nh = &t->nh[idx];
		if (*ttl <= 1) {
			xnf_upkt_exception(pk, t->ttl_expired, XNF_R_TTL);
			continue;
		}
		if (cls == XNF_RX_MARTIAN_FWD) {
			xnf_upkt_exception(pk, t->martian, XNF_R_MARTIAN);
			continue;
		}
		if (nh->state != XNF_NH_VALID) {
			xnf_upkt_exception(pk, XNF_ACT_PASS, XNF_R_NO_NEIGH);
			continue;
		}
		if (nh->mtu && p->l3_len > nh->mtu) {
			xnf_upkt_exception(pk, XNF_ACT_PASS, XNF_R_FRAG_NEEDED);
			continue;
		}
		memcpy(eth, nh->dmac, ETH_ALEN);
		memcpy(eth + ETH_ALEN, nh->smac, ETH_ALEN);
		xnf_upkt_redirect(pk, nh->ifindex);
		if (p->family == XNF_AF_INET)
			l3_dec_ttl4(l3);
		else
			(*ttl)--;
		continue;
local:
		xnf_upkt_exception(pk, t->local, XNF_R_LOCAL);
	}
}

const struct xnf_unf_ops xnf_unf_l3fwd_ops = {
	.name = "l3fwd",
	.help = "routes by xnf's own tables (xnf route), or by the kernel's FIB "
		"when the device is attached with fib, as the XDP l3fwd: TTL, "
		"MACs, exceptions by xnf config; no options",
	.priv_size = sizeof(struct l3fwd),
	.init = l3fwd_init,
	.fini = l3fwd_fini,
	.refresh = l3fwd_refresh,
	.run = l3fwd_run,
};
