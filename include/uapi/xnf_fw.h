/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_fw.h - the firewall: rules as the operator wrote them and the
 * compiled classifier tables.
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role). Only fixed-width types, and enums that are checked to
 * be a __u32 (XNF_ENUM_U32, xnf_dp.h); padding is explicit and the user
 * side checks every size with _Static_assert (include/xnf.h). Included by
 * the BPF programs (after vmlinux.h or linux/bpf.h) and by user space
 * (after linux/types.h).
 *
 * A map's name is defined once, here, as the identifier the BPF program
 * declares (XNF_MAP_*); user space pins and finds it by XNF_MAP_STR(...).
 */
#ifndef XNF_UAPI_FW_H
#define XNF_UAPI_FW_H

#include "xnf_dp.h"

/*
 * Firewall.
 *
 * Rules are kept by the control plane in xnf_fw_rules (one slot each, per
 * generation: the source of truth for what runs) and compiled into
 * bit-vector tables (Lakshman-Stiliadis
 * bit vectors with an aggregated summary, "ABV"): for every field the value
 * space is cut into classes, and each class holds a bitmap of the rules that
 * match it. A packet looks up one class per field and ANDs the five
 * bitmaps; the summary bitmaps (one bit per 64-rule word) make that AND
 * touch only words that can match.
 *
 * Bit i is not the i-th rule by priority. The compiler orders the bits by
 * destination (rules for the same destination share words, so the class of
 * a destination address is concentrated in a few words and the summary AND
 * visits few words even when wildcard sources, protocols and ports fill
 * every word), and by priority within each 64-rule word. Each matching word
 * then offers its lowest set bit, and the packet takes the one with the
 * best rank (xnf_fw_match.rank, 0 = highest priority): the first match in
 * priority order.
 *
 * The rules, the default policy and the compiled tables exist twice
 * (generations 0 and 1, the generation is part of every key). The control
 * plane writes all of them into the inactive one, flips xnf_fw_active and
 * waits for an RCU grace period before it may write the old one again: a
 * packet reads the generation once and classifies with one complete rule
 * set, and a control plane killed at any point leaves the active
 * generation whole. Readers of the rules read the active generation and
 * never write.
 */
#define XNF_FW_MAX_RULES      10240
#define XNF_FW_WORDS	      (XNF_FW_MAX_RULES / 64)	 /* 160 */
#define XNF_FW_SUMMARY	      ((XNF_FW_WORDS + 63) / 64) /* 3 */
#define XNF_FW_MAX_CLASSES    16384			 /* per generation */
#define XNF_FW_GENS	      2
/* The most rules a set may have to be classified by a linear scan: where
 * bench-micro saw the scan of generated rules (3-4 ns a rule) cost about
 * what the tables do (docs/perf.md, change 3). */
#define XNF_FW_LINEAR_MAX     16
/* A log prefix's bytes with its NUL (nft allows 127 characters). */
#define XNF_FW_LOG_PREFIX_MAX 64

enum xnf_fw_action {
	XNF_FW_ALLOW = 0,
	XNF_FW_DROP = 1,
};
XNF_ENUM_U32(xnf_fw_action);

enum xnf_fw_rule_flags {
	XNF_FW_F_SRC = 1 << 0,
	XNF_FW_F_DST = 1 << 1,
	XNF_FW_F_PROTO = 1 << 2,
	XNF_FW_F_SPORT = 1 << 3,
	XNF_FW_F_DPORT = 1 << 4,
	/* Matches beyond the five fields the bit-vector tables classify on
	 * (XNF_FW_F_EXTRA): the tables find the candidates, each is then
	 * checked on these (xnf_fw_match.extra). */
	XNF_FW_F_CT = 1 << 5,	     /* ct_states */
	XNF_FW_F_IIF = 1 << 6,	     /* iif */
	XNF_FW_F_ICMP_TYPE = 1 << 7, /* icmp_type, with proto icmp or icmpv6 */
	XNF_FW_F_ICMP_CODE = 1 << 8, /* icmp_code, with XNF_FW_F_ICMP_TYPE */
	XNF_FW_F_TCP_FLAGS = 1 << 9, /* (flags & tcp_mask) == tcp_flags */
	XNF_FW_F_TCP_ANY = 1 << 10,  /* (flags & tcp_mask) != 0 */
};
#define XNF_FW_F_EXTRA                                     \
	(XNF_FW_F_CT | XNF_FW_F_IIF | XNF_FW_F_ICMP_TYPE | \
	 XNF_FW_F_ICMP_CODE | XNF_FW_F_TCP_FLAGS | XNF_FW_F_TCP_ANY)

/* A rule as the operator wrote it:
 * xnf_fw_rules[gen * XNF_FW_MAX_RULES + slot]. action and family stay
 * bytes (bpftool prints numbers): as enums they would change the layout;
 * the dataplane reads its actions from xnf_fw_match, which names them. */
struct xnf_fw_rule {
	__u32 prio;  /* lower first; unique */
	__u16 flags; /* enum xnf_fw_rule_flags: which fields match */
	__u8 action; /* enum xnf_fw_action */
	__u8 family; /* enum xnf_family of src/dst, 0 if neither */
	__u8 proto;  /* IPPROTO_* with XNF_FW_F_PROTO */
	__u8 src_len;
	__u8 dst_len;
	__u8 in_use;
	__u16 sport_lo, sport_hi;
	__u16 dport_lo, dport_hi;
	__u8 src[16]; /* network order, IPv4 in the first 4 bytes */
	__u8 dst[16];
	__u32 iif;	/* ingress ifindex, with XNF_FW_F_IIF (nft's iif) */
	__u8 ct_states; /* 1 << enum xnf_ct_state (xnf_ct.h), any of them,
			 * with XNF_FW_F_CT (nft's ct state) */
	__u8 icmp_type; /* with XNF_FW_F_ICMP_TYPE */
	__u8 icmp_code; /* with XNF_FW_F_ICMP_CODE */
	__u8 tcp_flags; /* byte 13 of the TCP header under tcp_mask: */
	__u8 tcp_mask;	/* XNF_FW_F_TCP_FLAGS, XNF_FW_F_TCP_ANY */
	__u8 log;	/* 1: the rule logs what it matches (nft's log),
			 * rate-limited: xnf_log_limit (xnf_trace.h) */
	__u8 pad[2];
	__u32 log_rate;	  /* packets per log_unit_s seconds (limit rate) */
	__u32 log_unit_s; /* 1, 60, 3600, 86400 */
	__u32 log_burst;
	__u32 log_pad;
	char log_prefix[XNF_FW_LOG_PREFIX_MAX]; /* NUL-terminated; "" none */
};

/*
 * Compiled rule set header: xnf_fw_hdr[gen].
 *
 * A small set (at most XNF_FW_LINEAR_MAX rules: within one 64-rule word,
 * whose bits are in priority order, so xnf_fw_order[gen * XNF_FW_MAX_RULES
 * + i] is the rule of rank i) is classified without the tables when
 * @linear is 1: a scan of xnf_fw_order[0..nrules) of the generation, each
 * entry's rule read from xnf_fw_rules (whose prefixes have no host bits
 * set: the compiler refuses them), the first match wins. Two LPM lookups and five class lookups cost
 * more than matching a dozen rules one by one. It needs no table of its
 * own: the rules and their order are per generation already and flip with
 * xnf_fw_active. The field was padding before (always 0: the tables).
 */
struct xnf_fw_hdr {
	__u32 nrules;
	enum xnf_fw_action default_action;
	__u32 sport_none; /* class for packets whose ports can't be read */
	__u32 dport_none;
	__u32 serial; /* moves on every rule-set switch, so that a
				* reader sees whether the generation it read
				* was rewritten meanwhile */
	__u32 linear; /* 1: classify by the linear scan, see above */
	/* What of a packet beyond its flow key the rules look at, as bits
	 * of xnf_fw_deps() (XNF_FW_DEP_*): the flow cache keeps a decision
	 * for packets that agree with the one it was made for on these
	 * bits. 0 when no rule has an extra match: a flow's packets all
	 * get one decision. */
	__u32 deps;
	__u32 pad;
};

/* The packet's values of what a rule looks at beyond the flow key
 * (ingress device, addresses, protocol, ports), in one word: the bits of
 * xnf_fw_deps() (bpf/firewall.bpf.h). xnf_fw_hdr.deps is the mask of
 * those the rule set uses: the ct state with a `ct state` rule, whether a
 * TCP header was read and the flags under the union of the rules' masks
 * with a `tcp flags` rule, whether an ICMP header was read and its type
 * (and code) with an `icmp type` rule. */
#define XNF_FW_DEP_CT	     0x00000007u /* xnf_pkt.ct_state */
#define XNF_FW_DEP_HAS_TCP   0x00000040u /* XNF_PKT_F_TCP */
#define XNF_FW_DEP_HAS_ICMP  0x00000080u /* XNF_PKT_F_ICMP */
#define XNF_FW_DEP_TCP_FLAGS 0x0000ff00u /* xnf_pkt.tcp_flags << 8 */
#define XNF_FW_DEP_ICMP_TYPE 0x00ff0000u /* xnf_pkt.icmp_type */
#define XNF_FW_DEP_ICMP_CODE 0xff000000u /* xnf_pkt.icmp_code */

/* A rule's matches beyond the five fields (its xnf_fw_rule's), copied
 * into its xnf_fw_match: the tables' candidates and the linear scan check
 * them without reading the rule. */
struct xnf_fw_extra {
	__u32 iif;
	__u16 flags; /* the rule's flags & XNF_FW_F_EXTRA; 0: none */
	__u8 ct_states;
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 tcp_flags;
	__u8 tcp_mask;
	__u8 pad;
};

/* Or'ed into a rule's action on its way from the rule search to the
 * firewall (and in the flow cache's decision): the rule logs the packets
 * it matches. A rule that does not log costs one test of this bit. */
#define XNF_FW_ACTION_LOG 0x100

/* xnf_fw_order[gen * XNF_FW_MAX_RULES + bit]: the rule behind a bit. */
struct xnf_fw_match {
	enum xnf_fw_action action;
	__u32 slot; /* the rule's slot: xnf_fw_rules[gen * XNF_FW_MAX_RULES
		     * + slot], xnf_fw_hits[slot] */
	__u32 rank; /* position in priority order, 0 first */
	__u32 log;  /* XNF_FW_ACTION_LOG when the rule logs (xnf_fw_rule.log),
		     * else 0: or'ed into the action the rule search returns
		     * and the flow cache keeps (xnf_fc_entry.fw_action) */
	struct xnf_fw_extra x; /* x.flags != 0: a candidate the tables
				* found is checked on these */
	__u32 pad2;
};

/* xnf_fw_class[gen * XNF_FW_MAX_CLASSES + class] */
struct xnf_fw_class {
	__u64 summary[XNF_FW_SUMMARY]; /* bit w: bits[w] != 0 */
	__u64 bits[XNF_FW_WORDS];      /* bit i: rule xnf_fw_order[i] matches */
};

/* LPM keys of xnf_fw_src4/dst4/src6/dst6: the generation is the first 32
 * bits of the key data, so prefixlen = 32 + the address prefix length. */
struct xnf_fw_lpm4_key {
	__u32 prefixlen;
	__u32 gen;
	__u8 addr[4];
};

struct xnf_fw_lpm6_key {
	__u32 prefixlen;
	__u32 gen;
	__u8 addr[16];
};

/* xnf_fw_hits[slot]: the packets (and their bytes) a rule matched, per
 * CPU, by the rule's slot; after the last slot, the packets no rule
 * matched, which got the default policy. */
struct xnf_fw_hit {
	__u64 packets;
	__u64 bytes;
};

#define XNF_FW_HIT_DEFAULT XNF_FW_MAX_RULES	  /* the default policy's */
#define XNF_FW_HITS	   (XNF_FW_MAX_RULES + 1) /* entries of xnf_fw_hits */

/* Map names (pinned at <root>/<name>). */
#define XNF_MAP_FW_ACTIVE xnf_fw_active
#define XNF_MAP_FW_HDR	  xnf_fw_hdr
#define XNF_MAP_FW_RULES  xnf_fw_rules
#define XNF_MAP_FW_ORDER  xnf_fw_order
#define XNF_MAP_FW_CLASS  xnf_fw_class
#define XNF_MAP_FW_SRC4	  xnf_fw_src4
#define XNF_MAP_FW_DST4	  xnf_fw_dst4
#define XNF_MAP_FW_SRC6	  xnf_fw_src6
#define XNF_MAP_FW_DST6	  xnf_fw_dst6
#define XNF_MAP_FW_PROTO  xnf_fw_proto
#define XNF_MAP_FW_SPORT  xnf_fw_sport
#define XNF_MAP_FW_DPORT  xnf_fw_dport
#define XNF_MAP_FW_HITS	  xnf_fw_hits

#endif /* XNF_UAPI_FW_H */
