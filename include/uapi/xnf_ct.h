/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_ct.h - connection tracking: the connection table (xnf_ct), its
 * settings (xnf_ct_cfg), its counters (xnf_ct_stats) and the entry a new
 * flow waits in until the firewall accepts its packet (xnf_ct_pending).
 * docs/conntrack.md says what it does; the semantics are Linux conntrack's
 * (nf_conntrack_proto_tcp.c with nf_conntrack_tcp_be_liberal=1 and
 * nf_conntrack_tcp_loose=1; udp, icmp, generic).
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role). Only fixed-width types, and enums that are checked to
 * be a __u32 (XNF_ENUM_U32, xnf_dp.h); padding is explicit and the user
 * side checks every size with _Static_assert (include/xnf.h). Included by
 * the BPF programs (after vmlinux.h or linux/bpf.h) and by user space
 * (after linux/types.h).
 */
#ifndef XNF_UAPI_CT_H
#define XNF_UAPI_CT_H

#include "xnf_dp.h"

/* The state of a packet as nft's `ct state` names it: xnf_pkt.ct_state,
 * set by the conntrack NF. A packet no conntrack NF saw (none in the
 * chain, a fragment, a protocol-less IPv6 chain) is untracked. Rules
 * match a set of them as a bit mask: 1 << state. */
enum xnf_ct_state {
	XNF_CT_UNTRACKED = 0,
	XNF_CT_NEW = 1,
	XNF_CT_ESTABLISHED = 2,
	XNF_CT_RELATED = 3,
	XNF_CT_INVALID = 4,
	__XNF_CT_STATE_MAX
};

/* Direction of a packet within its connection: xnf_pkt.ct_dir and the
 * index of the per-direction counters. */
enum xnf_ct_dir {
	XNF_CT_DIR_ORIG = 0,  /* the direction of the packet that made it */
	XNF_CT_DIR_REPLY = 1, /* the other one */
};

/* TCP states, numbered as nf_conntrack_proto_tcp.c's enum
 * tcp_conntrack (so TCP_CONNTRACK_NONE = 0 ... TIME_WAIT = 7, CLOSE = 8,
 * SYN_SENT2 = 9), which conntrack(8) prints by name. */
enum xnf_ct_tcp_state {
	XNF_CT_TCP_NONE = 0,
	XNF_CT_TCP_SYN_SENT,
	XNF_CT_TCP_SYN_RECV,
	XNF_CT_TCP_ESTABLISHED,
	XNF_CT_TCP_FIN_WAIT,
	XNF_CT_TCP_CLOSE_WAIT,
	XNF_CT_TCP_LAST_ACK,
	XNF_CT_TCP_TIME_WAIT,
	XNF_CT_TCP_CLOSE,
	XNF_CT_TCP_SYN_SENT2,
	__XNF_CT_TCP_MAX
};

/* Timeouts, in seconds, by what they apply to: xnf_ct_config.timeout[],
 * Linux's defaults (net.netfilter.nf_conntrack_*_timeout*) unless set.
 * The first __XNF_CT_TCP_MAX are TCP's, by enum xnf_ct_tcp_state (NONE's
 * is unused). */
enum xnf_ct_timeout {
	XNF_CT_TO_UDP = __XNF_CT_TCP_MAX, /* udp_timeout: unreplied, 30 */
	XNF_CT_TO_UDP_STREAM,		  /* udp_timeout_stream: 120 */
	XNF_CT_TO_ICMP,			  /* icmp_timeout, icmpv6: 30 */
	XNF_CT_TO_GENERIC,		  /* generic_timeout: 600 */
	__XNF_CT_TO_MAX
};
#define XNF_CT_TIMEOUTS 16 /* slots for timeouts in struct xnf_ct_config */
_Static_assert(__XNF_CT_TO_MAX <= XNF_CT_TIMEOUTS, "XNF_CT_TIMEOUTS");

/*
 * The key of a connection, the same for both directions: of its two
 * endpoints (address, port), the lower one (addresses compared as bytes,
 * then ports as numbers) is "a". For ICMP and ICMPv6 echo both ports are
 * the echo identifier; for a protocol without ports they are 0. IPv4
 * addresses are in the first 4 bytes of a and b, the rest 0.
 */
struct xnf_ct_key {
	__u8 family; /* enum xnf_family */
	__u8 proto;  /* IPPROTO_*; ICMPv6 echo is IPPROTO_ICMPV6 */
	__u16 pad;
	__be16 a_port;
	__be16 b_port;
	__u8 a_addr[16];
	__u8 b_addr[16];
};

/* xnf_ct_entry.status bits (as Linux's IPS_*_BIT, where they exist). */
enum xnf_ct_status {
	XNF_CT_S_ORIG_B = 1 << 0, /* the originator is the key's b side */
	XNF_CT_S_SEEN_REPLY = 1 << 1,
	XNF_CT_S_ASSURED = 1 << 2, /* as Linux: a reply seen (and for TCP,
				    * established) */
	XNF_CT_S_SNAT = 1 << 3,	   /* IPS_SRC_NAT: the original source is
				    * translated (snat, masquerade) */
	XNF_CT_S_DNAT = 1 << 4,	   /* IPS_DST_NAT: the original destination
				    * is translated (dnat) */
	XNF_CT_S_MASQ = 1 << 5,	   /* the source translation is a masquerade:
				    * it ends when its address goes (as
				    * Linux's masquerade notifier) */
	XNF_CT_S_ALIAS = 1 << 6,   /* not a connection: the reply tuple of a
				    * translated one, which differs from its
				    * key (docs/nat.md) */
};

/*
 * A connection: xnf_ct[key]. Shared by every CPU (a reply can arrive on
 * another queue): the counters are added atomically, the rest is written
 * by whichever CPU sees a packet of the flow, and a racing update of the
 * TCP state costs at most what Linux's lock-free reader sees in
 * nf_conntrack_proto_tcp.c before it takes ct->lock.
 *
 * @expires is CLOCK_MONOTONIC_COARSE in ns (bpf_ktime_get_coarse_ns()):
 * an entry is dead once it passes, whether or not the LRU has reaped it
 * yet; user space reads the same clock for "timeout left".
 */
struct xnf_ct_entry {
	__u64 expires;
	__u64 created;	  /* same clock, when the entry was confirmed */
	__u64 packets[2]; /* by enum xnf_ct_dir */
	__u64 bytes[2];
	__u32 status;	     /* enum xnf_ct_status bits */
	__u8 tcp_state;	     /* enum xnf_ct_tcp_state; for UDP, ICMP and other
			  * protocols 0 */
	__u8 tcp_last_dir;   /* as nf_conntrack's ip_ct_tcp.last_dir */
	__u8 tcp_last_index; /* ... last_index (enum tcp_bit_set) */
	__u8 tcp_retrans;    /* ... retrans */
	__u8 tcp_flags[2];   /* ... seen[dir].flags (IP_CT_TCP_FLAG_*) */
	__u8 pad[2];
	__u32 nat_oif; /* XNF_CT_S_MASQ: the egress device whose address the
			* source took (Linux's masq_index) */
	/*
	 * With XNF_CT_S_SNAT or XNF_CT_S_DNAT: the reply tuple, as conntrack
	 * -L prints the second one: a is the reply's source, b its
	 * destination (not ordered, family and proto as the key's). A
	 * translated connection has a second entry, keyed by the canonical
	 * form of this tuple, with XNF_CT_S_ALIAS, whose nat is the
	 * connection's key: a reply finds the connection through it.
	 */
	struct xnf_ct_key nat;
};

/* A new flow's entry, made by the conntrack NF for the packet that would
 * create it and written into xnf_ct (BPF_NOEXIST) only when that packet is
 * accepted: xnf_ct_pending[0], per CPU. It is valid for the packet whose
 * xnf_pkt.flags has XNF_PKT_F_CT_PENDING. */
struct xnf_ct_pending {
	struct xnf_ct_key key;
	struct xnf_ct_entry entry;
	/* A new translated connection (entry.status & (XNF_CT_S_SNAT |
	 * XNF_CT_S_DNAT)): the canonical key of its reply tuple, written
	 * with it (BPF_NOEXIST) by xnf_ct_confirm(). */
	struct xnf_ct_key alias;
	/* Per packet, with xnf_pkt.nat: the tuple the packet leaves with (a
	 * = source, b = destination, not ordered; XNF_PKT_NAT_SRC and
	 * _DST say which side changes) ... */
	struct xnf_ct_key xlat;
	/* ... and with XNF_PKT_NAT_INNER, the tuple of the packet an ICMP
	 * error quotes, as it must read after translation (a = its source). */
	struct xnf_ct_key inner;
};

enum xnf_ct_frag {
	XNF_CT_FRAG_PASS = 0, /* to the kernel, which reassembles and runs
			       * its own conntrack and nftables */
	XNF_CT_FRAG_DROP = 1,
};
XNF_ENUM_U32(xnf_ct_frag);

/* xnf_ct_cfg[0]: settings read per packet, written by libxnf. */
struct xnf_ct_config {
	__u32 timeout[XNF_CT_TIMEOUTS]; /* seconds, by enum xnf_ct_timeout */
	enum xnf_ct_frag fragments;	/* what a chain with conntrack does
					 * with fragments (reason frag) */
	__u32 pad;
};

/* xnf_ct_stats[XNF_CT_STATS_DP], per CPU: what the connection table did;
 * xnf_ct_stats[XNF_CT_STATS_LIB]: what libxnf did to it (flushed, in CPU
 * 0's copy). Two entries because user space writes a per-CPU value whole,
 * every CPU's copy: in the programs' entry that would lose what another
 * CPU counted between libxnf's read and its write. Evictions (the
 * LRU made room for a new entry) are not seen by the program; user space
 * derives them: created - expired - deleted - flushed - present. */
struct xnf_ct_counters {
	__u64 created;	     /* entries confirmed (BPF_NOEXIST succeeded) */
	__u64 expired;	     /* entries found dead by a packet and replaced */
	__u64 deleted;	     /* entries removed by a packet (a TCP reopen) */
	__u64 flushed;	     /* entries removed by libxnf (`xnf ct flush`):
			  * XNF_CT_STATS_LIB only, under the writer's lock */
	__u64 insert_failed; /* a confirm that lost a race or found no room */
	__u64 invalid;	     /* packets found invalid */
	__u64 related;	     /* ICMP errors related to a connection */
	__u64 searched;	     /* lookups */
	__u64 found;	     /* lookups that found a live entry */
	__u64 nat_created;   /* translated connections confirmed (each has
			      * a second entry, its alias) */
	__u64 nat_no_port;   /* new connections refused: no free port in
			      * their rule's range (reason nat_no_port) */
	__u64 nat_no_addr;   /* ... masquerade found no address */
	__u64 nat_clash;     /* ... another CPU took the chosen reply tuple
			      * between choice and confirm */
	__u64 nat_retries;   /* ports tried beyond the first, by the
			      * connections that found one */
};

enum xnf_ct_stats_key {
	XNF_CT_STATS_DP = 0,
	XNF_CT_STATS_LIB = 1,
	__XNF_CT_STATS_MAX
};

/* The defaults: Linux's. */
#define XNF_CT_MAX_DEFAULT 262144 /* entries of xnf_ct (ct_max) */
#define XNF_CT_MAX_MIN	   1024

/* Map names: the table and its settings pinned at <root>/tables/<name>. */
#define XNF_MAP_CT	   xnf_ct
#define XNF_MAP_CT_CFG	   xnf_ct_cfg
#define XNF_MAP_CT_STATS   xnf_ct_stats
#define XNF_MAP_CT_PENDING xnf_ct_pending

#endif /* XNF_UAPI_CT_H */
