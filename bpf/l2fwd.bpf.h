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
#include "chain.bpf.h"

static __always_inline void xnf_l2fwd_run(struct xdp_md *ctx, struct xnf_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct xnf_fdb_key key = {};
	struct xnf_fdb_entry *fdb;
	struct xnf_xconnect *xc;
	struct xnf_config *cfg;

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

	xnf_mac_copy(key.mac, eth->h_dest);
	fdb = (eth->h_dest[0] & 1) ? NULL : bpf_map_lookup_elem(&xnf_fdb, &key);
	if (fdb) {
		if (fdb->ifindex == p->ingress_ifindex) {
			if (p->verdict != XNF_V_REDIRECT)
				xnf_exception(p, XNF_ACT_DROP, XNF_R_HAIRPIN);
			return;
		}
		p->verdict = XNF_V_REDIRECT;
		p->egress_ifindex = fdb->ifindex;
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
