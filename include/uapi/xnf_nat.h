/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_nat.h - the NAT rules (xnf_nat_rules, xnf_nat_hdr), which the nat NF
 * matches against the first packet of a new connection. What a rule
 * chooses lives with the connection, in the connection table (xnf_ct.h:
 * XNF_CT_S_SNAT, XNF_CT_S_DNAT, xnf_ct_entry.nat and its alias entry),
 * and never changes while the connection lives. docs/nat.md says what it
 * does; the semantics are nftables' (masquerade, snat, dnat).
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role). Only fixed-width types; padding is explicit and the
 * user side checks every size with _Static_assert (include/xnf.h).
 * Included by the BPF programs (after vmlinux.h or linux/bpf.h) and by
 * user space (after linux/types.h).
 */
#ifndef XNF_UAPI_NAT_H
#define XNF_UAPI_NAT_H

#include "xnf_dp.h"

enum xnf_nat_type {
	XNF_NAT_NONE = 0,
	/* nft's `oifname X masquerade`: the source becomes the address the
	 * kernel would choose on the egress device for the next hop
	 * (bpf_fib_lookup with BPF_FIB_LOOKUP_SRC: inet_select_addr's and
	 * ipv6_dev_get_saddr's choice); postrouting. */
	XNF_NAT_MASQUERADE = 1,
	/* `snat to A[-B][:P[-Q]]`: the source becomes an address of the
	 * range, its port one of the port range; postrouting. */
	XNF_NAT_SNAT = 2,
	/* `dnat to A[:P]`: the destination becomes A (and port P);
	 * prerouting, before the firewall and the route lookup. */
	XNF_NAT_DNAT = 3,
	__XNF_NAT_TYPE_MAX
};

enum xnf_nat_rule_flags {
	/* to_port_min..to_port_max is given: the translated port is one of
	 * them (dnat: to_port_min, the one port). Without it, a source
	 * keeps its port when free, else takes one of Linux's default range
	 * for it (nf_nat_l4proto_unique_tuple: 1-511, 600-1023 or
	 * 1024-65535 by the original port; an ICMP identifier any of
	 * 0-65535); a destination keeps its port. */
	XNF_NAT_F_PORTS = 1 << 0,
	/* nft's `random` (NF_NAT_RANGE_PROTO_RANDOM_FULLY): the port is
	 * chosen at random even when the original one is free. */
	XNF_NAT_F_RANDOM = 1 << 1,
	/* nft's `persistent` (NF_NAT_RANGE_PERSISTENT): a source address
	 * maps to the same address of the range for every destination. */
	XNF_NAT_F_PERSISTENT = 1 << 2,
};

/* How many ports a new connection tries before it is refused (reason
 * nat_no_port): Linux tries up to 128, Cilium 16 (SNAT_COLLISION_RETRIES);
 * each try is a lookup in xnf_ct. */
#define XNF_NAT_TRIES 32

/*
 * One rule. Rules are matched in order of prio (the order of the array),
 * dnat rules by the nat NF before the firewall, snat and masquerade rules
 * after dnat's, with the egress device of the (translated) destination;
 * the first match decides, as in an nft chain whose rules all end in a
 * nat statement. Addresses are in network byte order, IPv4 in the first 4
 * bytes, the rest 0.
 */
struct xnf_nat_rule {
	__u32 prio;
	__u8 type;     /* enum xnf_nat_type */
	__u8 family;   /* XNF_AF_INET, XNF_AF_INET6, or 0 (masquerade only:
		      * both, as nft's inet family) */
	__u8 proto;    /* IPPROTO_TCP, _UDP, _ICMP, _ICMPV6; 0 any */
	__u8 flags;    /* enum xnf_nat_rule_flags */
	__u32 iif;     /* ingress device to match (ifindex), 0 any */
	__u32 oif;     /* egress device to match (ifindex), 0 any */
	__u8 src_plen; /* saddr prefix to match: its length, 0 any */
	__u8 dst_plen; /* daddr prefix */
	__u16 pad;
	__u16 dport_min; /* destination ports to match, host order; 0 0 any
			  * (needs proto tcp or udp) */
	__u16 dport_max;
	__u8 src[16];
	__u8 dst[16];
	__u8 to_min[16];   /* snat, dnat: the new address, or the first of a
			  * range; masquerade: unused */
	__u8 to_max[16];   /* the last of the range (to_min when one) */
	__u16 to_port_min; /* host order, with XNF_NAT_F_PORTS */
	__u16 to_port_max;
	__u32 pad2;
};

#define XNF_NAT_MAX_RULES 64 /* rules per generation */
#define XNF_NAT_GENS	  2

/*
 * The rules exist twice, generations 0 and 1: xnf_nat_rules[gen *
 * XNF_NAT_MAX_RULES + i]. libxnf writes the generation that does not run,
 * its header count, then xnf_nat_hdr[XNF_NAT_HDR_ACTIVE].active: the nat
 * NF reads active, then that generation's count, then its rules.
 */
struct xnf_nat_hdr {
	__u32 active; /* entry XNF_NAT_HDR_ACTIVE only: the generation that
		       * runs */
	__u32 count;  /* entries 0 and 1: rules of that generation */
	__u32 serial; /* moves on every apply */
	__u32 pad;
};
#define XNF_NAT_HDR_ACTIVE 2 /* xnf_nat_hdr has XNF_NAT_GENS + 1 entries */

/* Map names: pinned at <root>/tables/<name>. */
#define XNF_MAP_NAT_RULES xnf_nat_rules
#define XNF_MAP_NAT_HDR	  xnf_nat_hdr

#endif /* XNF_UAPI_NAT_H */
