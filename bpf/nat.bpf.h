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

static __always_inline void xnf_nat_run(struct xdp_md *ctx, struct xnf_pkt *p)
{
	if (xnf_ct_confirmer == XNF_NF_NAT)
		xnf_ct_confirm(p);
}

#endif /* XNF_NAT_BPF_H */
