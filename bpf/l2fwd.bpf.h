/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * l2fwd.bpf.h - the L2 forwarding NF.
 *
 * A port with an entry in xnf_xconnect is cross-connected, like DPDK's
 * l2fwd: every frame leaves on the paired port with the configured MACs.
 * Otherwise the destination MAC is looked up in the FDB (xnf_fdb):
 *   hit                the frame leaves on that port (after l3fwd, this is
 *                      how the next hop's MAC picks the egress port);
 *   hit on ingress     dropped (hairpin), unless an earlier NF routed it;
 *   miss, multicast,   if an earlier NF already chose an egress port, it is
 *   broadcast          kept; otherwise cfg->l2_miss: flood to all other
 *                      xnf ports, pass to the kernel, or drop.
 */
#ifndef XNF_L2FWD_BPF_H
#define XNF_L2FWD_BPF_H

#include "common.bpf.h"
#include "tables.bpf.h"
#include "l2fwd_maps.bpf.h"
#include "chain.bpf.h"
#include "fcache.bpf.h"

/* The FDB's port for unicast MAC @mac, 0 when it has none; from the flow
 * cache when it looked this MAC up for the flow in this table generation
 * (after l3fwd the MAC is the next hop's, which changes without one). */
static __always_inline __u32 xnf_l2_fdb(const struct xnf_pkt *p, const __u8 *mac)
{
	struct xnf_fc_entry *e = xnf_fc_get(p);
	struct xnf_fdb_key key = {};
	struct xnf_fdb_entry *fdb;
	__u32 ifindex;

	xnf_mac_copy(key.mac, mac);
	/* Both MACs as the 8 bytes of an FDB key, compared in one go. */
	if (e && xnf_fc_fresh(e, p, XNF_FC_L2, e->l2_gen) &&
	    *(__u64 *)e->l2_mac == *(__u64 *)&key) {
		xnf_fc_count(p, XNF_NF_L2FWD, 1);
		return e->l2_ifindex;
	}
	fdb = bpf_map_lookup_elem(&xnf_fdb, &key);
	ifindex = fdb ? fdb->ifindex : 0;
	if (e) {
		*(__u64 *)e->l2_mac = *(__u64 *)&key;
		e->l2_ifindex = ifindex;
		e->l2_gen = p->fc_gen;
		e->parts |= XNF_FC_L2;
		xnf_fc_count(p, XNF_NF_L2FWD, 0);
	}
	return ifindex;
}

static __always_inline void xnf_l2fwd_run(struct xdp_md *ctx, struct xnf_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct xnf_xconnect *xc;
	struct xnf_config *cfg;
	__u32 port;

	cfg = xnf_cfg_get();
	if (!cfg || (void *)(eth + 1) > data_end)
		goto internal;

	/* No cross-connect anywhere (libxnf counts them): a hash lookup
	 * that could only miss is skipped. */
	xc = cfg->xconnects ?
		     bpf_map_lookup_elem(&xnf_xconnect, &p->ingress_ifindex) :
		     NULL;
	if (xc) {
		xnf_mac_copy(eth->h_dest, xc->dmac);
		xnf_mac_copy(eth->h_source, xc->smac);
		p->verdict = XNF_V_REDIRECT;
		p->egress_ifindex = xc->ifindex;
		return;
	}

	port = (eth->h_dest[0] & 1) ? 0 : xnf_l2_fdb(p, eth->h_dest);
	if (port) {
		if (port == p->ingress_ifindex) {
			if (p->verdict != XNF_V_REDIRECT)
				xnf_exception(p, XNF_ACT_DROP, XNF_R_HAIRPIN);
			return;
		}
		p->verdict = XNF_V_REDIRECT;
		p->egress_ifindex = port;
		return;
	}
	if (p->verdict == XNF_V_REDIRECT)
		return;
	if (cfg->l2_miss == XNF_ACT_FLOOD)
		p->verdict = XNF_V_FLOOD;
	else
		xnf_exception(p, cfg->l2_miss, XNF_R_L2_MISS);
	return;
internal:
	xnf_exception(p, XNF_ACT_DROP, XNF_R_INTERNAL);
}

#endif /* XNF_L2FWD_BPF_H */
