/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_fc.h - the flow cache's hash: which entry of xnf_fcache a flow key
 * (struct xnf_fc_key, xnf_dp.h) takes. Run by the entry program and the
 * fused chain (bpf/fcache.bpf.h); in user space by the tests, which make
 * flows that share an entry. Integer arithmetic on fixed-width types only,
 * after linux/types.h (or vmlinux.h), xnf_dp.h and xnf_nh.h.
 */
#ifndef XNF_UAPI_FC_H
#define XNF_UAPI_FC_H

/* Cheap rather than strong: the addresses folded to a word each (as the
 * multipath hash folds IPv6), then three multiply-xorshift rounds. */
XNF_NH_INLINE __u32 xnf_fc_index(const struct xnf_fc_key *k)
{
	const __u32 *s = (const __u32 *)k->saddr, *d = (const __u32 *)k->daddr;
	const __u32 *w = (const __u32 *)k;
	__u32 h;

	h = xnf_nh_fold6(s) * 0x9e3779b1 + xnf_nh_fold6(d);
	h = (h ^ (h >> 15)) * 0x85ebca6b + w[2];
	h = (h ^ (h >> 13)) * 0xc2b2ae35 + (w[0] ^ w[1]);
	return (h ^ (h >> 16)) & (XNF_FC_ENTRIES - 1);
}

#endif /* XNF_UAPI_FC_H */
