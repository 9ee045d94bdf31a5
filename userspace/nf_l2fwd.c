// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * nf_l2fwd.c - the l2fwd NF for AF_XDP workers: bpf/l2fwd.bpf.h on copies
 * of xnf_xconnect and xnf_fdb taken at init and on refresh.
 *
 *   ingress port cross-connected   MACs of the cross-connect, out of its
 *                                  peer port (DPDK l2fwd)
 *   destination MAC in the FDB     out of that port; on the ingress port:
 *                                  drop (hairpin), unless an earlier NF
 *                                  chose the egress (then that stands)
 *   miss, broadcast, multicast     an earlier NF's choice of egress stands
 *                                  (l3fwd, l2fwd); otherwise cfg.l2_miss,
 *                                  reason l2_miss
 *
 * "An earlier NF chose" is XNF_UPKT_F_EGRESS: the worker's default egress,
 * which every packet starts with, is no choice, just as XDP's default
 * verdict (pass) is none.
 *
 * Flood is the one action a worker cannot take: sending a frame out of
 * every other port needs a copy of it per port (a UMEM frame can sit in
 * one TX ring at a time), which the worker never makes. So an l2_miss of
 * flood drops the frame here, under l2_miss; configure pass or drop, or
 * let the XDP l2fwd (before xsk) flood.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>

#include "xnf.h"
#include "unf_priv.h"

struct l2_fdb_ent {
	__u64 mac; /* the 6 bytes, little-endian, in a u64 */
	__u32 ifindex;
	__u32 used;
};

struct l2_xc {
	__u32 in_ifindex;
	struct xnf_xconnect xc;
};

struct l2_tables {
	struct l2_fdb_ent *fdb;
	__u32 mask; /* slots - 1 */
	__u32 nxc;
	struct l2_xc *xc;		  /* [nxc] */
	const struct xnf_xconnect *xc_in; /* that of env.ingress_ifindex */
	__u32 l2_miss;
};

struct l2fwd {
	struct l2_tables *t;
};

static inline __u64 l2_mac(const __u8 *m)
{
	__u64 v = 0;

	memcpy(&v, m, ETH_ALEN);
	return v;
}

static inline __u32 l2_hash(__u64 mac)
{
	return (__u32)((mac * 0x9e3779b97f4a7c15ULL) >> 32);
}

static void l2_tables_free(struct l2_tables *t)
{
	if (!t)
		return;
	free(t->fdb);
	free(t->xc);
	free(t);
}

static int l2_snapshot(const struct xnf_unf *nf, struct l2_tables **out,
		       char *errbuf, size_t errlen)
{
	struct xnf_dp *dp = nf->env.dp;
	struct xnf_fdb_entry *fv = NULL;
	struct xnf_fdb_key *fk = NULL;
	struct xnf_xconnect *xv = NULL;
	struct l2_tables *t;
	struct xnf_config cfg;
	__u32 nfdb = 0, nx = 0, i, s, size = 16, *xk = NULL;
	const char *what = XNF_MAP_STR(XNF_MAP_CFG);
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = xnf_cfg_read(dp, &cfg);
	if (!err) {
		what = XNF_MAP_STR(XNF_MAP_FDB);
		err = xnf_unf_map_dump(xnf_table_fd(dp, XNF_T_FDB), sizeof(*fk),
				       sizeof(*fv), XNF_MAX_FDB, (void **)&fk,
				       (void **)&fv, &nfdb);
	}
	if (!err) {
		what = XNF_MAP_STR(XNF_MAP_XCONNECT);
		err = xnf_unf_map_dump(xnf_table_fd(dp, XNF_T_XCONNECT),
				       sizeof(*xk), sizeof(*xv), XNF_MAX_PORTS,
				       (void **)&xk, (void **)&xv, &nx);
	}
	if (err) {
		xnf_errf(errbuf, errlen, err, "cannot read %s: %s", what,
			 strerror(-err));
		goto out;
	}
	t->l2_miss = cfg.l2_miss;

	while (size < 2 * nfdb)
		size <<= 1;
	t->fdb = calloc(size, sizeof(*t->fdb));
	t->xc = calloc(nx ?: 1, sizeof(*t->xc));
	if (!t->fdb || !t->xc) {
		err = -ENOMEM;
		goto out;
	}
	t->mask = size - 1;
	for (i = 0; i < nfdb; i++) {
		__u64 mac = l2_mac(fk[i].mac);

		for (s = l2_hash(mac) & t->mask;
		     t->fdb[s].used && t->fdb[s].mac != mac;
		     s = (s + 1) & t->mask)
			;
		t->fdb[s] = (struct l2_fdb_ent){ .mac = mac,
						 .ifindex = fv[i].ifindex,
						 .used = 1 };
	}
	for (i = 0; i < nx; i++) {
		t->xc[i].in_ifindex = xk[i];
		t->xc[i].xc = xv[i];
		if (xk[i] == nf->env.ingress_ifindex)
			t->xc_in = &t->xc[i].xc;
	}
	t->nxc = nx;
	*out = t;
	t = NULL;
out:
	l2_tables_free(t);
	free(fk);
	free(fv);
	free(xk);
	free(xv);
	return err;
}

static int l2fwd_init(struct xnf_unf *nf, const struct xnf_unf_env *env,
		      char *errbuf, size_t errlen)
{
	struct l2fwd *l = nf->priv;

	return l2_snapshot(nf, &l->t, errbuf, errlen);
}

static int l2fwd_refresh(struct xnf_unf *nf, char *errbuf, size_t errlen)
{
	struct l2fwd *l = nf->priv;
	struct l2_tables *t;
	int err;

	err = l2_snapshot(nf, &t, errbuf, errlen);
	if (err)
		return err;
	l2_tables_free(l->t);
	l->t = t;
	return 0;
}

static void l2fwd_fini(struct xnf_unf *nf)
{
	struct l2fwd *l = nf->priv;

	l2_tables_free(l->t);
	l->t = NULL;
}

static const struct xnf_xconnect *l2_xc_find(const struct l2_tables *t,
					     __u32 ingress, __u32 own)
{
	__u32 i;

	/* A worker reads one device: the lookup is done at snapshot time. */
	if (ingress == own)
		return t->xc_in;
	for (i = 0; i < t->nxc; i++)
		if (t->xc[i].in_ifindex == ingress)
			return &t->xc[i].xc;
	return NULL;
}

static inline const struct l2_fdb_ent *l2_fdb_find(const struct l2_tables *t,
						   const __u8 *dmac)
{
	__u64 mac = l2_mac(dmac);
	__u32 s;

	for (s = l2_hash(mac) & t->mask; t->fdb[s].used; s = (s + 1) & t->mask)
		if (t->fdb[s].mac == mac)
			return &t->fdb[s];
	return NULL;
}

static void l2fwd_run(struct xnf_unf *nf, struct xnf_upkt *pkts, __u32 n)
{
	const struct l2_tables *t = ((struct l2fwd *)nf->priv)->t;
	__u32 own = nf->env.ingress_ifindex, i;

	for (i = 0; i < n; i++) {
		struct xnf_upkt *pk = &pkts[i];
		struct xnf_pkt *p = &pk->meta;
		const struct xnf_xconnect *xc;
		const struct l2_fdb_ent *fdb;
		__u8 *eth = pk->data;

		if (xnf_upkt_decided(pk))
			continue;
		if (pk->len < ETH_HLEN) {
			xnf_upkt_exception(pk, XNF_ACT_DROP, XNF_R_INTERNAL);
			continue;
		}
		xc = l2_xc_find(t, p->ingress_ifindex, own);
		if (xc) {
			memcpy(eth, xc->dmac, ETH_ALEN);
			memcpy(eth + ETH_ALEN, xc->smac, ETH_ALEN);
			xnf_upkt_redirect(pk, xc->ifindex);
			continue;
		}
		/* Group addresses never match, whatever the FDB says. */
		fdb = (eth[0] & 1) ? NULL : l2_fdb_find(t, eth);
		if (fdb) {
			if (fdb->ifindex == p->ingress_ifindex) {
				if (!(pk->flags & XNF_UPKT_F_EGRESS))
					xnf_upkt_exception(pk, XNF_ACT_DROP,
							   XNF_R_HAIRPIN);
				continue;
			}
			xnf_upkt_redirect(pk, fdb->ifindex);
			continue;
		}
		if (pk->flags & XNF_UPKT_F_EGRESS)
			continue;
		/* Flood: see the top of the file. */
		xnf_upkt_exception(pk,
				   t->l2_miss == XNF_ACT_FLOOD ? XNF_ACT_DROP :
								 t->l2_miss,
				   XNF_R_L2_MISS);
	}
}

const struct xnf_unf_ops xnf_unf_l2fwd_ops = {
	.name = "l2fwd",
	.help = "forwards by the FDB (xnf fdb) and cross-connects (xnf xconnect), "
		"as the XDP l2fwd; an l2_miss of flood drops; no options",
	.priv_size = sizeof(struct l2fwd),
	.init = l2fwd_init,
	.fini = l2fwd_fini,
	.refresh = l2fwd_refresh,
	.run = l2fwd_run,
};
