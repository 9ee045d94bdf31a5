/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_fib.h - l3fwd's fib mode: what an answer of bpf_fib_lookup() means,
 * the one definition the XDP l3fwd (bpf/l3fwd.bpf.h) and the AF_XDP
 * workers' l3fwd (userspace/nf_l3fwd.c) both apply, and how the answer
 * reaches a worker.
 *
 * A worker cannot ask the kernel's FIB itself: bpf_fib_lookup() is a BPF
 * helper, and a netlink round trip per packet would cost more than the
 * forwarding. So on an attachment with 'fib', the xsk NF looks the frame
 * up as l3fwd would and writes the answer into the XDP metadata in front
 * of the frame (struct xnf_xsk_meta), which AF_XDP copies into the UMEM
 * with it; the worker's l3fwd applies it.
 *
 * Compiles as BPF and as user space C, after linux/types.h (or vmlinux.h),
 * linux/bpf.h and xnf_dp.h.
 */
#ifndef XNF_UAPI_FIB_H
#define XNF_UAPI_FIB_H

/* The answer was a success towards a device that is not an xnf port: the
 * kernel forwards it. Beyond the BPF_FIB_LKUP_RET_* values. */
#define XNF_FIB_NOT_PORT 64

#define XNF_XSK_META_MAGIC 0x786e6601u /* "xnf" 1 */

/* In the XDP metadata, just before the frame (a multiple of 4 bytes, at
 * most 32, as bpf_xdp_adjust_meta() allows). */
struct xnf_xsk_meta {
	__u32 magic;   /* XNF_XSK_META_MAGIC: written for this frame */
	__u32 len;     /* the frame's length when it was looked up */
	__s32 rc;      /* bpf_fib_lookup()'s answer, or XNF_FIB_NOT_PORT */
	__u32 ifindex; /* egress, on success */
	__u8 dmac[6];
	__u8 smac[6];
};

/*
 * What each answer means:
 *   SUCCESS      route and neighbour known: forward (after the TTL check).
 *   NO_NEIGH     route known, MAC not: pass, the kernel sends ARP / ND and
 *                later packets take the fast path.
 *   NOT_FWDED    destination is local, or broadcast, or there is no route
 *                at all: treated as local (cfg->local).
 *   BLACKHOLE    drop.
 *   UNREACHABLE, PROHIBIT   like no route: the kernel answers with ICMP.
 *   FRAG_NEEDED  larger than the egress MTU: pass, the kernel sends ICMP
 *                "fragmentation needed" / "packet too big".
 *   NOT_PORT     a success towards a device that is not an xnf port: pass,
 *                the kernel forwards it.
 *   FWD_DISABLED, UNSUPP_LWT, other   pass, the kernel decides.
 * 0 to forward; else 1 with the exception's action and reason.
 */
static inline __attribute__((always_inline)) int
xnf_fib_exception(long rc, const struct xnf_config *cfg, __u32 *action,
		  __u32 *reason)
{
	switch (rc) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		return 0;
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		*action = XNF_ACT_PASS;
		*reason = XNF_R_NO_NEIGH;
		break;
	case BPF_FIB_LKUP_RET_NOT_FWDED:
		*action = cfg->local;
		*reason = XNF_R_LOCAL;
		break;
	case BPF_FIB_LKUP_RET_BLACKHOLE:
		*action = XNF_ACT_DROP;
		*reason = XNF_R_BLACKHOLE;
		break;
	case BPF_FIB_LKUP_RET_UNREACHABLE:
	case BPF_FIB_LKUP_RET_PROHIBIT:
		*action = cfg->no_route;
		*reason = XNF_R_NO_ROUTE;
		break;
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		*action = XNF_ACT_PASS;
		*reason = XNF_R_FRAG_NEEDED;
		break;
	case XNF_FIB_NOT_PORT:
		*action = XNF_ACT_PASS;
		*reason = XNF_R_NOT_PORT;
		break;
	default:
		*action = XNF_ACT_PASS;
		*reason = XNF_R_FIB;
		break;
	}
	return 1;
}

#endif /* XNF_UAPI_FIB_H */
