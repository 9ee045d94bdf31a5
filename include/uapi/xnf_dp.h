/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_dp.h - the chain's core: the table schema, the NF ids (from the
 * registry, xnf_nfs.h), verdicts and reasons, the exception actions and
 * the configuration, the per-packet state the NFs of a chain share, the
 * counters (per NF, per reason, tail calls, flow cache), what xnf_dev
 * records of a chain, and the tracer's batch sizes and xmit counters;
 * the names of the instance's core maps and of the per-interface ones.
 * The NFs' own tables have headers of their own: xnf_l3fwd.h (routes,
 * next hops), xnf_l2fwd.h (FDB, cross-connects), xnf_fw.h (firewall);
 * so have the change log (xnf_changes.h) and the flow cache (xnf_fc.h).
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role). Only fixed-width types, and enums that are checked to
 * be a __u32 (XNF_ENUM_U32); padding is explicit and the user side checks
 * every size with _Static_assert (include/xnf.h). Included by the BPF
 * programs (after vmlinux.h or linux/bpf.h) and by user space (after
 * linux/types.h).
 *
 * A map's name is defined once, in the header of its role, as the
 * identifier the BPF program declares (XNF_MAP_*); user space pins and
 * finds it by XNF_MAP_STR(...).
 */
#ifndef XNF_UAPI_DP_H
#define XNF_UAPI_DP_H

/* Bumped whenever a pinned map's layout or meaning changes; the loader
 * refuses to reuse pins written with another schema. */
#define XNF_SCHEMA 16

/*
 * A field of a pinned map's value that holds one enumerator has the enum
 * as its type, so that the map's BTF names it and bpftool prints
 * "XNF_RT_UNICAST" rather than 0. Such an enum must be exactly the __u32
 * the field would otherwise be, on both sides of the boundary: 4 bytes,
 * aligned to 4. C leaves an enum's size to the ABI (Linux's and BPF's
 * make these an unsigned int); XNF_ENUM_U32 checks it wherever the header
 * is compiled. Narrower fields (__u8, __u16) stay integers with the enum
 * named in a comment: no portable C enum is narrower than an int. Bit
 * sets stay integers too: bpftool would print the name of a lone flag
 * and a number for two.
 */
#define XNF_ENUM_U32(name)                                                 \
	_Static_assert(sizeof(enum name) == 4 && _Alignof(enum name) == 4, \
		       "enum " #name " must be laid out as a __u32")

#define XNF_CHAIN_MAX	  8  /* slots in a chain's prog array */
#define XNF_FUSED_MAX	  4  /* NFs a fused chain can inline (each NF once) */
#define XNF_BATCH_BUCKETS 65 /* packets per NAPI poll: 0..63, 64 = 64 or more */
#define XNF_MAX_PORTS	  256 /* devices in the egress devmap */

#include "xnf_nfs.h"

/* Network functions: XNF_NF_ENTRY, then the NFs of the registry
 * (xnf_nfs.h) in its order. The row of XNF_NF_ENTRY in struct xnf_stats
 * counts the whole chain: what entered the interface and the action
 * finally carried out. */
#define XNF_NF_ENUM_(id, name, flags) XNF_NF_##id,
enum xnf_nf_id { XNF_NF_ENTRY = 0, XNF_NFS(XNF_NF_ENUM_) __XNF_NF_MAX };
#undef XNF_NF_ENUM_
XNF_ENUM_U32(xnf_nf_id);

/* Rows for NFs in struct xnf_stats: a fixed number, so that a new NF
 * changes no table's layout (and no schema). */
#define XNF_NF_SLOTS 16
_Static_assert(__XNF_NF_MAX <= XNF_NF_SLOTS,
	       "XNF_NF_SLOTS: a row for every NF of the registry");

/* Accumulated verdict, carried out when the chain ends. */
enum xnf_verdict {
	XNF_V_PASS = 0, /* to the kernel stack (the default) */
	XNF_V_DROP,
	XNF_V_REDIRECT, /* to xnf_pkt.egress_ifindex through the devmap */
	XNF_V_FLOOD,	/* to every xnf port but the ingress one */
	XNF_V_XSK,	/* to the AF_XDP socket of the receive queue */
	__XNF_V_MAX
};

/* Why a packet was dropped or passed to the kernel, each with the name
 * operators read (`xnf stats`, Prometheus, JSON; lib/names.c). Every drop
 * counts in exactly one drop[] slot of struct xnf_stats, every pass in one
 * pass[] slot; XNF_R_NONE is only used for packets that finish the chain
 * with the default pass verdict (e.g. allowed by a firewall-only chain).
 * Appended, never moved: a reason's number is its slot. */
/* clang-format off */
#define XNF_REASONS(X)							\
	X(NONE, none)							\
	X(MALFORMED, malformed)	/* header truncated or inconsistent */	\
	X(NOT_IP, not_ip)	/* ethertype is neither IPv4 nor IPv6 (ARP, ...) */ \
	X(VLAN, vlan)		/* l3fwd: tagged frame, left to the kernel's VLAN devices */ \
	X(FW_DENY, fw_deny)	/* firewall rule or default policy said drop */ \
	X(NO_ROUTE, no_route)						\
	X(BLACKHOLE, blackhole)	/* route of type blackhole */		\
	X(TTL, ttl_expired)	/* TTL / hop limit would expire */	\
	X(LOCAL, local)		/* destination is one of the router's own addresses */ \
	X(NO_NEIGH, no_neigh)	/* fib mode: next hop has no neighbour entry yet */ \
	X(FIB, fib_other)	/* the kernel's FIB decides: fib mode's forwarding disabled or unsupported route, a kernel route */ \
	X(FRAG_NEEDED, frag_needed) /* packet larger than the route's or the egress device's MTU */ \
	X(NOT_PORT, not_xnf_port) /* fib mode: egress device is not an xnf port */ \
	X(L2_MISS, l2_miss)	/* l2fwd: destination MAC not in the FDB */ \
	X(HAIRPIN, hairpin)	/* l2fwd: FDB says the MAC lives on the ingress port */ \
	X(REDIRECT, redirect)	/* egress port not in the devmap */	\
	X(TAIL_CALL, tail_call)	/* a chain slot had no program (fail closed) */ \
	X(XSK, xsk_no_socket)	/* no AF_XDP socket bound to the receive queue */ \
	X(INTERNAL, internal)	/* a lookup that cannot fail did */	\
	X(POLICED, policed)	/* userspace ratelimit: the flow's token bucket is empty */ \
	X(BAD_CSUM, bad_csum)	/* l3fwd: IPv4 header checksum wrong (RFC 1812 5.2.2) */ \
	X(MARTIAN, martian)	/* l3fwd: an address Linux refuses to forward (include/uapi/xnf_rx.h) */ \
	X(FRAG, frag)		/* conntrack: a fragment, which only the kernel can reassemble (ct_fragments) */ \
	X(NAT_NO_PORT, nat_no_port) /* nat: every port of the rule's range is taken for this destination */ \
	X(NAT_NO_ADDR, nat_no_addr) /* nat: masquerade found no address on the egress device */ \
	X(NAT_CLASH, nat_clash)	/* nat: another CPU took the chosen port first (as Linux's confirm clash) */
/* clang-format on */

#define XNF_REASON_ENUM_(id, name) XNF_R_##id,
enum xnf_reason { XNF_REASONS(XNF_REASON_ENUM_) __XNF_R_MAX };
#undef XNF_REASON_ENUM_

/* Slots for reasons in struct xnf_stats and struct xnf_worker_stats: a
 * fixed number, so that a new reason changes no table's layout. */
#define XNF_REASON_SLOTS 64
_Static_assert(__XNF_R_MAX <= XNF_REASON_SLOTS,
	       "XNF_REASON_SLOTS: a slot for every reason");

/* What to do with an exception (no route, TTL, own address, martian, FDB
 * miss, no socket). */
enum xnf_action {
	XNF_ACT_PASS = 0, /* to the kernel, which answers with ICMP / ARP */
	XNF_ACT_DROP = 1,
	XNF_ACT_FLOOD = 2, /* l2 miss only */
};
XNF_ENUM_U32(xnf_action);

/* Global runtime configuration: xnf_cfg[0]. Read per packet by the NFs that
 * need it, so a policy change needs no reload. Load-time choices (chain
 * slot, fused order, fib mode) are const volatile rodata instead. */
struct xnf_config {
	__u32 schema;		      /* XNF_SCHEMA, written by the loader */
	enum xnf_action no_route;     /* pass | drop */
	enum xnf_action ttl_expired;  /* pass | drop */
	enum xnf_action local;	      /* pass | drop */
	enum xnf_action l2_miss;      /* flood | pass | drop */
	enum xnf_action xsk_fallback; /* pass | drop */
	__u32 tables_gen;	 /* bumped by every route, FDB, cross-connect
				  * and firewall change: AF_XDP workers
				  * reload their copies when it moves */
	enum xnf_action martian; /* pass | drop (default drop, as Linux) */
	__u32 rt_copy;		 /* which copy of the route tables packets
				  * read: 0 xnf_rt4 / xnf_rt6, 1 xnf_rt4_b /
				  * xnf_rt6_b (libxnf's route batches,
				  * lib/routes.c) */
	__u32 rt_pending;	 /* a route batch was begun and not
				  * committed: the copies may differ (the
				  * next writer puts them back in step) */
	__u64 change_seq;	 /* the last change recorded in xnf_changes */
	__u32 xconnects; /* entries of xnf_xconnect, kept by libxnf after
			  * every cross-connect change: while 0, l2fwd
			  * skips that lookup (a hash miss, the largest
			  * part of its cost; docs/perf.md) */
	/* 1 (default): the NFs keep their table lookups' results per flow
	 * in xnf_fcache; 0: they look every packet up. */
	__u32 flow_cache;
	/* Whether the firewall's rules see packets addressed to the router
	 * itself (nft's input hook) or only forwarded ones (its forward
	 * hook): enum xnf_fw_input, bpf/firewall.bpf.h. */
	__u32 fw_input;
	__u32 pad;
	/* Reasons whose drops and passes are logged (bit 1 << enum
	 * xnf_reason), rate-limited by their xnf_log_limit entries
	 * (xnf_trace.h), at log_rate packets per log_unit_s seconds each:
	 * what libxnf wrote there. 0: none (the default). */
	__u64 log_reasons;
	__u32 log_rate;
	__u32 log_unit_s;
};

/* xnf_config.fw_input: a packet whose destination is the router's own
 * (a local route of xnf's tables, in fib mode the kernel's FIB; or a
 * frame to a group MAC address) goes, before the firewall's rules, ... */
enum xnf_fw_input {
	XNF_FW_INPUT_KERNEL = 0, /* ... to the kernel (config local, reason
				  * local), whose nftables input rules
				  * filter it: the default */
	XNF_FW_INPUT_RULES = 1,	 /* ... through the rules like any other */
};
XNF_ENUM_U32(xnf_fw_input);

/* Per-packet state, parsed once by the entry program and shared by the NFs
 * of the chain through the per-CPU map xnf_scratch (an XDP program and the
 * programs it tail-calls run on one CPU without preemption, so one slot per
 * CPU is enough). Offsets are from the start of the frame. */
enum xnf_pkt_flags {
	XNF_PKT_F_PORTS = 1 << 0, /* sport/dport were read from a full L4 header */
	XNF_PKT_F_ICMP = 1 << 1,       /* icmp_type/icmp_code are valid */
	XNF_PKT_F_FRAG = 1 << 2,       /* a fragment (first or not) */
	XNF_PKT_F_LATER_FRAG = 1 << 3, /* a non-first fragment: no L4 header */
	XNF_PKT_F_DONE = 1 << 4, /* an NF decided: skip the rest of the chain */
	XNF_PKT_F_L4_UNKNOWN = 1 << 5, /* IPv6 extension headers beyond what the
					* parser walks: l4_proto is not L4 */
	XNF_PKT_F_CT_PENDING = 1 << 6, /* xnf_ct_pending holds this packet's
					* new connection (xnf_ct.h) */
	XNF_PKT_F_TCP = 1 << 7, /* tcp_flags were read from a full TCP header */
};

/* xnf_pkt.nat: the translation of a packet of a translated connection
 * (set by conntrack for a packet of one, by the nat NF for the first
 * packet of a new one). The destination is changed by the nat NF, before
 * the firewall and the route lookup (nft's prerouting); the source when
 * the packet leaves the chain forwarded (xnf_finish(), bpf/chain.bpf.h:
 * nft's postrouting), so that the firewall sees the original source. */
enum xnf_pkt_nat {
	XNF_PKT_NAT_SRC = 1 << 0,   /* source address or port changes */
	XNF_PKT_NAT_DST = 1 << 1,   /* destination address or port changes */
	XNF_PKT_NAT_INNER = 1 << 2, /* an ICMP error related to a translated
				     * connection: the header it quotes is
				     * translated back too (xnf_ct_pending[0]
				     * .inner) */
};

enum xnf_family {
	XNF_AF_NONE = 0,
	XNF_AF_INET = 4,
	XNF_AF_INET6 = 6,
};
XNF_ENUM_U32(xnf_family);

/* family, verdict and reason stay bytes: as enums they would grow the
 * state every NF reads and writes per packet by 12 bytes, to name
 * them in a map that only holds each CPU's last packet. */
struct xnf_pkt {
	__u32 ingress_ifindex;
	__u32 egress_ifindex; /* valid with XNF_V_REDIRECT */
	__u32 rx_queue;
	__u16 l3_off;	  /* IPv4 / IPv6 header */
	__u16 l4_off;	  /* L4 header (after IPv6 extension headers) */
	__u16 l3_len;	  /* IPv4 total length / IPv6 40 + payload length */
	__be16 eth_proto; /* ethertype after the VLAN tags */
	__u8 family;	  /* enum xnf_family */
	__u8 l4_proto;	  /* IPPROTO_*, after IPv6 extension headers */
	__u8 vlans;	  /* number of VLAN tags (0..2) */
	__u8 flags;	  /* enum xnf_pkt_flags */
	__u8 verdict;	  /* enum xnf_verdict */
	__u8 reason;	  /* enum xnf_reason */
	__u8 icmp_type;
	__u8 icmp_code;
	__be16 sport;
	__be16 dport;
	__u32 fc_idx;	/* 1 + the flow's entry of xnf_fcache; 0: the packet
		       * goes uncached (the cache is off) */
	__u32 fc_gen;	/* xnf_config.tables_gen, read before any lookup */
	__u32 len;	/* bytes of the frame, every fragment: read once by the
		       * entry program (no NF changes a frame's length), so
		       * the NFs count bytes without a helper call each */
	__u8 tcp_flags; /* byte 13 of the TCP header (FIN 0x01 ... CWR 0x80),
			 * with XNF_PKT_F_TCP */
	__u8 ct_state;	/* enum xnf_ct_state, set by the conntrack NF */
	__u8 ct_dir;	/* enum xnf_ct_dir, with a tracked ct_state */
	__u8 nat;	/* enum xnf_pkt_nat: what of the packet's addresses
			 * and ports the nat NF changes; the tuple it
			 * leaves with waits in xnf_ct_pending[0].xlat
			 * (xnf_ct.h). The struct stays a multiple of 8
			 * bytes: user space reads xnf_scratch as an array
			 * of struct xnf_pkt, one per CPU, and the kernel
			 * lays per-CPU values out 8-byte aligned */
	__u8 trace;	/* 1: a trace matched the packet: the NFs fill
			 * their steps of xnf_trace_buf (xnf_trace.h) */
	__u8 pad[7];
};

/* Per-NF counters. Each counts the verdict a packet carries when it leaves
 * the NF, so in == pass + drop + redirect for every NF, in packets and in
 * bytes (the whole frame, every fragment: no NF changes its length); for
 * XNF_NF_ENTRY they are the actions
 * finally carried out. There is no "aborted": xnf returns XDP_ABORTED only
 * when it cannot find its own per-CPU maps, i.e. where it could not count
 * it either (the kernel's xdp:xdp_exception tracepoint reports those). */
struct xnf_nf_counters {
	__u64 in;
	__u64 pass;
	__u64 drop;
	__u64 redirect; /* redirect, flood and xsk */
	__u64 in_bytes;
	__u64 pass_bytes;
	__u64 drop_bytes;
	__u64 redirect_bytes;
};

/* Per-interface, per-CPU: xnf_stats[0]. Plain increments: each CPU owns its
 * copy and XDP does not preempt itself, so no atomics are needed. */
struct xnf_stats {
	struct xnf_nf_counters nf[XNF_NF_SLOTS]; /* by enum xnf_nf_id */
	__u64 drop[XNF_REASON_SLOTS];		 /* by enum xnf_reason */
	__u64 pass[XNF_REASON_SLOTS];
	__u64 drop_bytes[XNF_REASON_SLOTS];
	__u64 pass_bytes[XNF_REASON_SLOTS];
	__u64 tail_miss[XNF_CHAIN_MAX]; /* tail calls that found an empty slot */
	/* Flow cache, per NF that caches (XNF_NFF_FCACHE): packets whose
	 * table lookup the cache answered, and those it could not (then the
	 * NF looked up and stored the result). fc_miss[XNF_NF_ENTRY]: packets
	 * the cache let through without a lookup while its hit rate was low
	 * (the bypass, bpf/fcache.bpf.h; added when a stretch of XNF_FC_SKIP
	 * ends); fc_hit[XNF_NF_ENTRY] stays 0. */
	__u64 fc_hit[XNF_NF_SLOTS];
	__u64 fc_miss[XNF_NF_SLOTS];
};

/* What xnf attached to an interface: xnf_dev[0] of the interface, written
 * by `xnf attach` / `xnf chain set`, read by `xnf status`; xnf_dev[1] holds
 * the chain a `chain set` is switching to until the switch is complete. */
struct xnf_dev_info {
	__u32 ifindex;
	__u32 netns;	 /* inode of the network namespace */
	__u32 xdp_flags; /* XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE */
	__u32 fused;
	__u32 l3_fib;
	__u32 chain_len;
	enum xnf_nf_id nf[XNF_CHAIN_MAX]; /* per slot; 0 past chain_len */
};

/* Batch sizes: packets handled per NAPI poll of an attached device, counted
 * by the napi_poll tracepoint program; per CPU, keyed by device. ifindex is
 * only unique within a network namespace, hence the netns inode. */
struct xnf_dev_key {
	__u32 netns; /* inode of the device's network namespace */
	__u32 ifindex;
};

struct xnf_batch_hist {
	__u64 polls[XNF_BATCH_BUCKETS];
	/* The time polls spent on their packets, by size: timed[b] polls of
	 * size b had a start time (every poll that ran xnf's entry program),
	 * ns[b] is their summed time from the first packet's entry program
	 * to the end of the poll (xnf_poll_start; batch.bpf.c says what the
	 * interval holds). */
	__u64 timed[XNF_BATCH_BUCKETS];
	__u64 ns[XNF_BATCH_BUCKETS];
};

/* Per CPU (xnf_poll): when the NAPI poll running on this CPU handed its
 * first packet to xnf's entry program, and on which device; t0 == 0: no
 * packet yet. Set by the entry program, consumed and cleared by the
 * napi_poll tracer. */
struct xnf_poll_start {
	__u64 t0;
	__u32 ifindex;
	__u32 pad;
};

/* What the kernel did with the frames xnf redirected, per egress device
 * (xnf_xmit, per CPU, keyed like xnf_batch by the egress device; counted
 * by the tracer of batch.bpf.c for frames that came from an xnf
 * interface). A redirect verdict hands the frame to the devmap; it can
 * still be lost there: at the redirect itself (the egress cannot take
 * XDP frames now, e.g. a veth whose peer has neither XDP nor GRO:
 * xdp:xdp_redirect_err), or when the devmap flushes its queue to the
 * driver (ndo_xdp_xmit took fewer frames than queued:
 * xdp:xdp_devmap_xmit). So redirect - redirect_err - xmit_drops is what
 * left the box. */
struct xnf_xmit_counters {
	__u64 xmit_sent;    /* frames the driver took */
	__u64 xmit_drops;   /* frames the driver refused */
	__u64 redirect_err; /* redirects that failed before the queue */
};

/* Map names. The instance's core tables, pinned at <root>/tables/<name>
 * (the NFs' own, the change log's and the flow cache's are named in their
 * headers). */
#define XNF_MAP_STR_(id) #id
#define XNF_MAP_STR(id)	 XNF_MAP_STR_(id)

#define XNF_MAP_CFG	xnf_cfg
#define XNF_MAP_SCRATCH xnf_scratch
#define XNF_MAP_TX	xnf_tx
#define XNF_MAP_BATCH	xnf_batch
#define XNF_MAP_XMIT	xnf_xmit
#define XNF_MAP_POLL	xnf_poll
/* per interface, pinned at <root>/dev/<DEV>/<name> */
#define XNF_MAP_STATS	xnf_stats
#define XNF_MAP_XSKS	xnf_xsks
#define XNF_MAP_DEV	xnf_dev
/* per loaded chain (not pinned by name: a chain swap builds a new one) */
#define XNF_MAP_CHAIN	xnf_chain

#endif /* XNF_UAPI_DP_H */
