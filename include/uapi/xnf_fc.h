/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_fc.h - the flow cache (xnf_fcache): its entries, the parts the NFs
 * that cache (XNF_NFF_FCACHE, xnf_nfs.h) keep in them, and its hash, which
 * entry a flow takes. The hash runs in the entry program and the fused
 * chain (bpf/fcache.bpf.h) and, in user space, in the tests, which make
 * flows that share an entry: integer arithmetic on fixed-width types only.
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role). Only fixed-width types; padding is explicit and the
 * user side checks every size with _Static_assert (include/xnf.h).
 * Included by the BPF programs (after vmlinux.h or linux/bpf.h) and by
 * user space (after linux/types.h).
 */
#ifndef XNF_UAPI_FC_H
#define XNF_UAPI_FC_H

#include "xnf_dp.h"
#include "xnf_l3fwd.h"
#include "xnf_nh.h"

#define XNF_FC_ENTRIES 4096 /* flow cache entries per CPU (a power of 2) */

/*
 * The flow cache (xnf_fcache, a per-CPU array of XNF_FC_ENTRIES): the
 * results of the NFs' table lookups for recently seen flows, so that the
 * next packet of a flow skips the LPM tries, the firewall's classifier
 * and the FDB hash. The entry program (or the fused chain) hashes the
 * packet's flow key to an entry; an entry holding another flow is taken
 * over (its results dropped). Each NF keeps its own part, tagged with the
 * xnf_config.tables_gen read before its lookup: every table change moves
 * tables_gen after it is visible to packets, so a part computed before
 * the change no longer matches, and one computed while it was being made
 * does not either. Only table results are kept, never what depends on the
 * packet beyond its key (TTL, length, martian checks) or on tables that
 * change without a generation (a next hop's MACs: the route's nexthop id
 * is cached, the MACs are read per packet). XDP does not preempt itself on
 * a CPU, so only that CPU's programs write its entries; user space never
 * writes them.
 */
struct xnf_fc_key {
	__u32 ifindex; /* ingress */
	__u8 family;   /* enum xnf_family */
	__u8 l4_proto;
	__u8 ports; /* 1: sport/dport were read (XNF_PKT_F_PORTS) */
	__u8 pad;
	__be16 sport; /* 0 without ports */
	__be16 dport;
	__u32 pad2;
	__u8 saddr[16]; /* IPv4 in the first 4 bytes, the rest 0 */
	__u8 daddr[16];
};

enum xnf_fc_parts {
	XNF_FC_FW = 1 << 0, /* fw_* hold the firewall's decision */
	XNF_FC_L3 = 1 << 1, /* l3_* hold l3fwd's route lookup */
	XNF_FC_L2 = 1 << 2, /* l2_* hold l2fwd's FDB lookup */
};

struct xnf_fc_entry {
	struct xnf_fc_key key;
	__u32 parts; /* enum xnf_fc_parts: which parts are filled */
	__u32 fw_gen;
	__u32 fw_action; /* enum xnf_fw_action, or XNF_FC_FW_LOCAL; with
			  * XNF_FW_ACTION_LOG when the rule logs (xnf_fw.h) */
	__u32 fw_slot;	 /* xnf_fw_hits slot: a rule's, XNF_FW_HIT_DEFAULT */
	/* The decision holds for packets of the flow whose xnf_fw_deps()
	 * agree with fw_deps under fw_dep_mask (xnf_fw_hdr.deps of the rule
	 * set that made it): another ct state, other TCP flags or another
	 * ICMP type of the same flow is classified again. */
	__u32 fw_deps;
	__u32 fw_dep_mask;
	__u8 l2_mac[6]; /* the destination MAC looked up; with l2_pad (0),
			  * an xnf_fdb_key, compared as one word */
	__u16 l2_pad;
	__u32 l2_gen;
	__u32 l2_ifindex; /* the FDB's port for l2_mac; 0: not in the FDB */
	__u32 l3_gen;
	__u32 l3_found;		 /* 0: no route */
	struct xnf_rt_val l3_rt; /* what the LPM returned */
	__u32 pad; /* per-CPU values are 8-byte multiples (xnf_pkt's pad) */
};

/* The bypass (bpf/fcache.bpf.h, why these values): a CPU's lookups are
 * counted in windows of XNF_FC_WINDOW; after the first XNF_FC_WARM windows
 * (a cold cache misses whatever the mix), one with fewer than
 * XNF_FC_MIN_HITS hits sends the next XNF_FC_SKIP packets uncached,
 * without a lookup (counted in xnf_stats.fc_miss[XNF_NF_ENTRY] when the
 * stretch ends). */
#define XNF_FC_WINDOW	128
#define XNF_FC_MIN_HITS (XNF_FC_WINDOW / 4)
#define XNF_FC_SKIP	(255 * XNF_FC_WINDOW)
#define XNF_FC_WARM	(XNF_FC_ENTRIES / XNF_FC_WINDOW)

/* xnf_fc_entry.fw_action of a packet addressed to the router itself
 * under fw_input kernel: to the kernel before the rules (a local route of
 * xnf's tables: the generation covers it). */
#define XNF_FC_FW_LOCAL 2

/* Map name, pinned at <root>/tables/<name>: per CPU, written by the
 * programs only (user space never writes it). */
#define XNF_MAP_FCACHE xnf_fcache

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
