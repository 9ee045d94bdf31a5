/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * nat.bpf.h - the nat NF (include/uapi/xnf_nat.h, docs/nat.md): translates
 * the packets of translated connections and chooses the translation of a
 * new one (nat_new.bpf.h).
 */
#ifndef XNF_NAT_BPF_H
#define XNF_NAT_BPF_H

#include "common.bpf.h"
#include "tables.bpf.h"
#include "conntrack_maps.bpf.h"
#include "nat_maps.bpf.h"
#include "chain.bpf.h"
#include "nat_new.bpf.h"

static __always_inline void xnf_nat_run(struct xdp_md *ctx, struct xnf_pkt *p)
{
	int reason;

	/* The first packet of a new connection: its translation. */
	if (p->flags & XNF_PKT_F_CT_PENDING) {
		reason = xnf_nat_new_fn(ctx, p);
		if (reason > 0) {
			xnf_exception(p, XNF_ACT_DROP, reason);
			return;
		}
	}
	if (xnf_ct_confirmer == XNF_NF_NAT)
		xnf_ct_confirm(p);
}

#endif /* XNF_NAT_BPF_H */
