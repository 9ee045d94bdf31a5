/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * nat_new.bpf.h - the translation of a new connection (the nat rules,
 * include/uapi/xnf_nat.h). Placeholder of branch nat-dp, which translates
 * existing connections: branch nat-new replaces this file.
 */
#ifndef XNF_NAT_NEW_BPF_H
#define XNF_NAT_NEW_BPF_H

#include "common.bpf.h"
#include "conntrack_maps.bpf.h"
#include "nat_maps.bpf.h"

/* Chooses the translation of the new connection in xnf_ct_pending[0].
 * Returns 0, an enum xnf_reason to drop the packet with, or -1 when the
 * tables are missing. */
__noinline int xnf_nat_new_fn(struct xdp_md *ctx, struct xnf_pkt *p)
{
	return 0;
}

#endif /* XNF_NAT_NEW_BPF_H */
