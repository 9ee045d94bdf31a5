/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_nh.h - the flow hash that picks a multipath group's bucket: the one
 * definition the XDP l3fwd (bpf/l3fwd.bpf.h) and the AF_XDP workers'
 * l3fwd (userspace/nf_l3fwd.c) both run, so they send a flow the same way.
 * Integer arithmetic on fixed-width types only: compiles as BPF and as
 * user space C, after linux/types.h (or vmlinux.h).
 *
 * The hash is symmetric: a packet and its reply (addresses and ports
 * swapped) hash alike, so a group that serves both directions of a flow
 * (stateful boxes behind an ECMP pair) sends both the same way. Inputs are
 * the 5-tuple, with the ports only when every packet of the flow carries
 * them (not for fragments: a later fragment has none, and must take the
 * path of the first). IPv6 addresses are folded to 32 bits first.
 */
#ifndef XNF_UAPI_NH_H
#define XNF_UAPI_NH_H

#include "xnf_l3fwd.h"

#define XNF_NH_INLINE static inline __attribute__((always_inline))

/* murmur3's finaliser: every input bit moves every output bit. */
XNF_NH_INLINE __u32 xnf_nh_mix(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

/* @a, @b: the (folded) addresses, @pa, @pb: the ports (0 without),
 * @proto: the L4 protocol. The ordered pairs make it symmetric. */
XNF_NH_INLINE __u32 xnf_nh_flow_hash(__u32 a, __u32 b, __u16 pa, __u16 pb,
				     __u8 proto)
{
	__u32 lo = a < b ? a : b, hi = a < b ? b : a;
	__u32 ports = pa < pb ? ((__u32)pa << 16 | pb) : ((__u32)pb << 16 | pa);
	__u32 h = xnf_nh_mix(lo ^ 0x9e3779b9);

	h = xnf_nh_mix(h ^ hi);
	h = xnf_nh_mix(h ^ ports);
	return xnf_nh_mix(h ^ proto);
}

/* An IPv6 address (4 words, any byte order as long as both sides use the
 * same) folded to one. */
XNF_NH_INLINE __u32 xnf_nh_fold6(const __u32 *w)
{
	return w[0] ^ w[1] ^ w[2] ^ w[3];
}

XNF_NH_INLINE __u32 xnf_nh_bucket(__u32 hash)
{
	return hash % XNF_NHG_BUCKETS;
}

#endif /* XNF_UAPI_NH_H */
