/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xsk.bpf.h - the xsk NF: hands the packet to the AF_XDP socket bound to its
 * receive queue (xnf_xsks, keyed by queue). Without a socket the packet gets
 * cfg->xsk_fallback when the chain ends, counted under XNF_R_XSK.
 *
 * Only unicast IP goes to the socket. A frame from AF_XDP cannot re-enter
 * the kernel's stack, so the control plane's frames keep the verdict the
 * chain gave them (by default: to the kernel): non-IP (ARP, LLDP, ...),
 * Ethernet broadcast and multicast, and IPv6 neighbour discovery (router
 * and neighbour solicitations and advertisements, redirects), which is
 * unicast too once a neighbour is known.
 */
#ifndef XNF_XSK_BPF_H
#define XNF_XSK_BPF_H

#include "common.bpf.h"
#include "chain.bpf.h"

static __always_inline int xnf_xsk_control(struct xdp_md *ctx,
					   const struct xnf_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	const __u8 *dmac = data;

	if (p->family == XNF_AF_NONE)
		return 1;
	if (data + 1 > data_end || (dmac[0] & 1))
		return 1;
	return p->family == XNF_AF_INET6 && p->l4_proto == IPPROTO_ICMPV6 &&
	       (p->flags & XNF_PKT_F_ICMP) && p->icmp_type >= 133 &&
	       p->icmp_type <= 137;
}

static __always_inline void xnf_xsk_run(struct xdp_md *ctx, struct xnf_pkt *p)
{
	if (p->verdict == XNF_V_DROP || xnf_xsk_control(ctx, p))
		return;
	p->verdict = XNF_V_XSK;
}

#endif /* XNF_XSK_BPF_H */
