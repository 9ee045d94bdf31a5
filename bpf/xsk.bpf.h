/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xsk.bpf.h - the xsk NF: hands the packet to the AF_XDP socket bound to its
 * receive queue (xnf_xsks, keyed by queue). Without a socket the packet gets
 * cfg->xsk_fallback when the chain ends, counted under XNF_R_XSK.
 */
#ifndef XNF_XSK_BPF_H
#define XNF_XSK_BPF_H

#include "common.bpf.h"
#include "chain.bpf.h"

static __always_inline void xnf_xsk_run(struct xdp_md *ctx, struct xnf_pkt *p)
{
	if (p->verdict == XNF_V_DROP)
		return;
	p->verdict = XNF_V_XSK;
}

#endif /* XNF_XSK_BPF_H */
