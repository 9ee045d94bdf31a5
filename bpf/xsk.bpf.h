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
 *
 * On an attachment with 'fib' the xsk NF also asks the kernel's FIB for
 * the worker's l3fwd, which cannot, and hands the answer over in the XDP
 * metadata (include/uapi/xnf_fib.h).
 */
#ifndef XNF_XSK_BPF_H
#define XNF_XSK_BPF_H

#include "common.bpf.h"
#include "chain.bpf.h"
#include "fib.bpf.h"

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

/* The FIB's answer for the frame, in struct xnf_xsk_meta in front of it.
 * Without room for it (a driver without metadata support), the worker
 * finds no magic and passes the frame (reason fib). */
static __always_inline void xnf_xsk_fib_meta(struct xdp_md *ctx,
					     const struct xnf_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fib;
	struct xnf_xsk_meta *m;
	void *l3;
	long rc;

	if (p->l3_off > XNF_MAX_L3_OFF)
		return;
	l3 = data + p->l3_off;
	if (p->family == XNF_AF_INET) {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > data_end)
			return;
		rc = xnf_fib4(ctx, iph, &fib);
	} else {
		struct ipv6hdr *ip6h = l3;

		if ((void *)(ip6h + 1) > data_end)
			return;
		rc = xnf_fib6(ctx, p, ip6h, &fib);
	}
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return;
	m->magic = XNF_XSK_META_MAGIC;
	m->len = ctx->data_end - ctx->data;
	m->rc = rc;
	m->ifindex = fib.ifindex;
	__builtin_memcpy(m->dmac, fib.dmac, 6);
	__builtin_memcpy(m->smac, fib.smac, 6);
}

static __always_inline void xnf_xsk_run(struct xdp_md *ctx, struct xnf_pkt *p)
{
	if (p->verdict == XNF_V_DROP || xnf_xsk_control(ctx, p))
		return;
	p->verdict = XNF_V_XSK;
	if (xnf_l3_fib)
		xnf_xsk_fib_meta(ctx, p);
}

#endif /* XNF_XSK_BPF_H */
