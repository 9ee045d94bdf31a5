/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fib.bpf.h - l3fwd's fib mode: the kernel's FIB and neighbour table asked
 * with bpf_fib_lookup(), by the XDP l3fwd, and by the xsk NF on behalf of
 * the AF_XDP workers' l3fwd (include/uapi/xnf_fib.h).
 */
#ifndef XNF_FIB_BPF_H
#define XNF_FIB_BPF_H

#include "common.bpf.h"
#include "tables.bpf.h"
#include "xnf_fib.h"

/* A success towards a device that is not an xnf port is the kernel's to
 * forward. */
static __always_inline long xnf_fib_port(long rc, struct bpf_fib_lookup *fib)
{
	if (rc == BPF_FIB_LKUP_RET_SUCCESS &&
	    !bpf_map_lookup_elem(&xnf_tx, &fib->ifindex))
		return XNF_FIB_NOT_PORT;
	return rc;
}

static __always_inline long xnf_fib4(struct xdp_md *ctx, struct iphdr *iph,
				     struct bpf_fib_lookup *fib)
{
	__builtin_memset(fib, 0, sizeof(*fib));
	fib->family = XNF_SYS_AF_INET;
	fib->tos = iph->tos;
	fib->l4_protocol = iph->protocol;
	fib->tot_len = bpf_ntohs(iph->tot_len);
	fib->ipv4_src = iph->saddr;
	fib->ipv4_dst = iph->daddr;
	fib->ifindex = ctx->ingress_ifindex;
	return xnf_fib_port(bpf_fib_lookup(ctx, fib, sizeof(*fib), 0), fib);
}

static __always_inline long xnf_fib6(struct xdp_md *ctx, const struct xnf_pkt *p,
				     struct ipv6hdr *ip6h,
				     struct bpf_fib_lookup *fib)
{
	__builtin_memset(fib, 0, sizeof(*fib));
	fib->family = XNF_SYS_AF_INET6;
	fib->flowinfo = *(__be32 *)ip6h & bpf_htonl(0x0fffffff);
	fib->l4_protocol = ip6h->nexthdr;
	fib->tot_len = p->l3_len;
	fib->ifindex = ctx->ingress_ifindex;
	__builtin_memcpy(fib->ipv6_src, &ip6h->saddr, 16);
	__builtin_memcpy(fib->ipv6_dst, &ip6h->daddr, 16);
	return xnf_fib_port(bpf_fib_lookup(ctx, fib, sizeof(*fib), 0), fib);
}

#endif /* XNF_FIB_BPF_H */
