/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_dp.h - the chain's dataplane: NF ids, verdicts and reasons, the
 * per-packet state the NFs of a chain share, counters, routes, FDB,
 * cross-connects and the exception actions.
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role). Only fixed-width types, and enums that are checked to
 * be a __u32 (XNF_ENUM_U32); padding is explicit and the user side checks
 * every size with _Static_assert (include/xnf.h). Included by the BPF
 * programs (after vmlinux.h or linux/bpf.h) and by user space (after
 * linux/types.h).
 *
 * A map's name is defined once, here, as the identifier the BPF program
 * declares (XNF_MAP_*); user space pins and finds it by XNF_MAP_STR(...).
 */
#ifndef XNF_UAPI_DP_H
#define XNF_UAPI_DP_H

/* Bumped whenever a pinned map's layout or meaning changes; the loader
 * refuses to reuse pins written with another schema. */
#define XNF_SCHEMA 9

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
#define XNF_MAX_ROUTES \
	(1u << 21) /* per family and copy; LPM tries allocate
				      * on demand: a full table fits */
#define XNF_MAX_FDB	65536
#define XNF_MAX_NH	8192 /* nexthop objects (xnf_nh) */
#define XNF_MAX_NHG	1024 /* multipath groups (xnf_nhg) */
#define XNF_NHG_PATHS	16   /* next hops of one group */
#define XNF_NHG_BUCKETS 128  /* resilient hash buckets of a group */
#define XNF_FC_ENTRIES	4096 /* flow cache entries per CPU (a power of 2) */

/* Network functions. The row of XNF_NF_ENTRY in struct xnf_stats counts the
 * whole chain: what entered the interface and the action finally carried
 * out. */
enum xnf_nf_id {
	XNF_NF_ENTRY = 0,
	XNF_NF_FIREWALL,
	XNF_NF_L3FWD,
	XNF_NF_L2FWD,
	XNF_NF_XSK,
	__XNF_NF_MAX
};
XNF_ENUM_U32(xnf_nf_id);

/* Accumulated verdict, carried out when the chain ends. */
enum xnf_verdict {
	XNF_V_PASS = 0, /* to the kernel stack (the default) */
	XNF_V_DROP,
	XNF_V_REDIRECT, /* to xnf_pkt.egress_ifindex through the devmap */
	XNF_V_FLOOD,	/* to every xnf port but the ingress one */
	XNF_V_XSK,	/* to the AF_XDP socket of the receive queue */
	__XNF_V_MAX
};

/* Why a packet was dropped or passed to the kernel. Every drop counts in
 * exactly one drop[] slot of struct xnf_stats, every pass in one pass[]
 * slot; XNF_R_NONE is only used for packets that finish the chain with the
 * default pass verdict (e.g. allowed by a firewall-only chain). */
enum xnf_reason {
	XNF_R_NONE = 0,
	XNF_R_MALFORMED, /* header truncated or inconsistent */
	XNF_R_NOT_IP,	 /* ethertype is neither IPv4 nor IPv6 (ARP, ...) */
	XNF_R_VLAN, /* l3fwd: tagged frame, left to the kernel's VLAN devices */
	XNF_R_FW_DENY, /* firewall rule or default policy said drop */
	XNF_R_NO_ROUTE,
	XNF_R_BLACKHOLE, /* route of type blackhole */
	XNF_R_TTL,	 /* TTL / hop limit would expire */
	XNF_R_LOCAL,	 /* destination is one of the router's own addresses */
	XNF_R_NO_NEIGH,	 /* fib mode: next hop has no neighbour entry yet */
	XNF_R_FIB,	 /* the kernel's FIB decides: fib mode's forwarding
			  * disabled or unsupported route, a kernel route */
	XNF_R_FRAG_NEEDED, /* fib mode: packet larger than the egress MTU */
	XNF_R_NOT_PORT,	   /* fib mode: egress device is not an xnf port */
	XNF_R_L2_MISS,	   /* l2fwd: destination MAC not in the FDB */
	XNF_R_HAIRPIN,	 /* l2fwd: FDB says the MAC lives on the ingress port */
	XNF_R_REDIRECT,	 /* egress port not in the devmap */
	XNF_R_TAIL_CALL, /* a chain slot had no program (fail closed) */
	XNF_R_XSK,	 /* no AF_XDP socket bound to the receive queue */
	XNF_R_INTERNAL,	 /* a lookup that cannot fail did */
	XNF_R_POLICED, /* userspace ratelimit: the flow's token bucket is empty */
	XNF_R_BAD_CSUM, /* l3fwd: IPv4 header checksum wrong (RFC 1812 5.2.2) */
	XNF_R_MARTIAN,	/* l3fwd: an address Linux refuses to forward
			 * (include/uapi/xnf_rx.h) */
	__XNF_R_MAX
};

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
};

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
	__u32 fc_idx; /* 1 + the flow's entry of xnf_fcache; 0: the packet
		       * goes uncached (the cache is off) */
	__u32 fc_gen; /* xnf_config.tables_gen, read before any lookup */
	__u32 len;    /* bytes of the frame, every fragment: read once by the
		       * entry program (no NF changes a frame's length), so
		       * the NFs count bytes without a helper call each */
	__u32 pad;    /* a multiple of 8 bytes: user space reads xnf_scratch
		       * as an array of struct xnf_pkt, one per CPU, and the
		       * kernel lays per-CPU values out 8-byte aligned */
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
	struct xnf_nf_counters nf[__XNF_NF_MAX];
	__u64 drop[__XNF_R_MAX];
	__u64 pass[__XNF_R_MAX];
	__u64 drop_bytes[__XNF_R_MAX];
	__u64 pass_bytes[__XNF_R_MAX];
	__u64 tail_miss[XNF_CHAIN_MAX]; /* tail calls that found an empty slot */
	/* Flow cache, per NF that caches (firewall, l3fwd, l2fwd): packets
	 * whose table lookup the cache answered, and those it could not
	 * (then the NF looked up and stored the result). */
	__u64 fc_hit[__XNF_NF_MAX];
	__u64 fc_miss[__XNF_NF_MAX];
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

/* l3fwd tables: LPM tries keyed by prefix; the value names a nexthop
 * object or a multipath group (see docs/design.md, "Next hops"). */
struct xnf_rt4_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct xnf_rt6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

enum xnf_route_type {
	XNF_RT_UNICAST = 0, /* forward along nexthop .nh */
	XNF_RT_LOCAL,	    /* one of the router's own addresses */
	XNF_RT_BLACKHOLE,   /* drop silently */
	XNF_RT_UNREACHABLE, /* treated like no route: the kernel sends ICMP */
	XNF_RT_MULTIPATH,   /* forward along a nexthop of group .nh */
	XNF_RT_KERNEL,	    /* pass: the kernel forwards it (a connected
			     * subnet, whose hosts it resolves); reason fib */
};
XNF_ENUM_U32(xnf_route_type);

/* Who wrote a route. One source of truth per instance: while a route sync
 * owns the tables (xnf_rtsync), routes are not added by hand. */
enum xnf_route_origin {
	XNF_ORIGIN_STATIC = 0, /* xnf route add, xnf apply */
	XNF_ORIGIN_SYNC = 1,   /* xnf route sync, from a kernel table */
};

/* Value of xnf_rt4 / xnf_rt6. origin stays a number for bpftool: as an
 * enum it would grow the value of up to 2M routes per family and copy
 * from 12 to 16 bytes, and change the layout. */
struct xnf_rt_val {
	enum xnf_route_type type;
	__u32 nh;     /* nexthop id (unicast) or group id (multipath), else 0 */
	__u16 origin; /* enum xnf_route_origin */
	__u16 plen;   /* the route's own prefix length: a lookup says which
		       * prefix matched, and an exact one needs no scan */
};

/* xnf_rtsync[0]: the route sync that owns the route tables, if any. */
struct xnf_rtsync_info {
	__u32 table; /* kernel table mirrored; 0: no sync owns the routes */
	__u32 pid;   /* of the running sync, 0 when it has exited */
	__u64 since; /* CLOCK_REALTIME ns of its start */
};

enum xnf_nh_state {
	XNF_NH_VALID = 0,  /* forward with these MACs */
	XNF_NH_KERNEL = 1, /* no neighbour: pass (no_neigh), the kernel
			    * resolves it */
};
XNF_ENUM_U32(xnf_nh_state);

/* A next hop, in a slot of xnf_nh (an array, XNF_NH_SLOTS). Nexthop id
 * N (1 .. XNF_MAX_NH - 1) owns slots 2N and 2N + 1; xnf_nh_live[N] says
 * which one is live. A change writes the spare slot and then flips the
 * live word (one aligned 4-byte store), so a packet reads the old next hop
 * or the new one, never a mix, and every route through N follows at once;
 * the old slot is written again only after an RCU grace period (libxnf,
 * lib/nexthop.c). Arrays, because the verifier inlines their lookups. */
struct xnf_nexthop {
	__u32 ifindex;		   /* egress port */
	__u8 dmac[6];		   /* next hop's MAC */
	__u8 smac[6];		   /* egress port's MAC */
	enum xnf_family gw_family; /* of gw; XNF_AF_NONE: directly connected */
	__u8 gw[16];		   /* next hop address */
	enum xnf_nh_state state;
	__u32 refs; /* 0 in the slots; libxnf reports xnf_nh_live's */
};

#define XNF_NH_SLOTS (2 * XNF_MAX_NH)

/* xnf_nh_live[id]. */
struct xnf_nh_live {
	__u32 slot; /* 1 + the live slot of xnf_nh; 0: never used */
	__u32 refs; /* routes and groups using it, 0: a free id whose slot
		     * stays for packets that still hold it (libxnf's
		     * count; the dataplane reads slot only) */
};

/* xnf_nhg, keyed by a group id (__u32, not 0): a resilient group (as the
 * kernel's "nexthop group type resilient"): bucket[flow hash % BUCKETS]
 * is the nexthop id of the flow. A change of the members moves only the
 * buckets it must (lib/nexthop.c); the whole table is replaced in one
 * update, as for xnf_nh. */
struct xnf_nhgroup {
	__u32 n;		       /* members */
	__u32 refs;		       /* routes using it (libxnf's count) */
	__u32 nh[XNF_NHG_PATHS];       /* members' nexthop ids, nh[0..n) */
	__u32 bucket[XNF_NHG_BUCKETS]; /* nexthop ids */
};

/* Key of xnf_nhg_idx (libxnf's: members -> group id, read by no program):
 * the members' ids ascending, the rest 0. */
struct xnf_nhg_key {
	__u32 n;
	__u32 nh[XNF_NHG_PATHS];
};

/* l2fwd tables. */
struct xnf_fdb_key {
	__u8 mac[6];
	__u16 pad;
};

struct xnf_fdb_entry {
	__u32 ifindex;
	__u32 flags;
};

/* Cross-connect: everything received on the key ifindex leaves on
 * .ifindex with its MACs rewritten (DPDK l2fwd). */
struct xnf_xconnect {
	__u32 ifindex;
	__u8 dmac[6];
	__u8 smac[6];
};

/* The change log: every change made to the instance (a command, a route
 * sync's batch, a next hop that followed its neighbour), with who made it
 * and how it ended. Change number seq (from 1) is in
 * xnf_changes[seq % XNF_CHANGES_MAX]; xnf_config.change_seq is the last
 * one. Written by libxnf under the instance lock (lib/changes.c), read by
 * `xnf monitor` without a lock; no program touches it. */
#define XNF_CHANGES_MAX 256
#define XNF_CHANGE_TEXT 240

struct xnf_change {
	__u64 seq;  /* 0: the slot was never written */
	__u64 time; /* CLOCK_REALTIME, ns */
	__u32 pid;  /* of the process that made it */
	__u32 uid;  /* its user */
	/* Its login uid, which su and sudo keep; 4294967295: unset. */
	__u32 auid;
	__u32 failed;		   /* 0: done; 1: refused or failed */
	char cmd[XNF_CHANGE_TEXT]; /* the command, as typed */
	char msg[XNF_CHANGE_TEXT]; /* why it failed, or what it did */
	/* Equal to seq in a record read whole: a reader racing the writer
	 * of the slot's next record (a map lookup is a plain copy) sees
	 * them differ. */
	__u64 seq_end;
};

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

/* fw_slot of a decision no rule made (the default policy). */
#define XNF_FC_NO_RULE 0xffffffffu

struct xnf_fc_entry {
	struct xnf_fc_key key;
	__u32 parts; /* enum xnf_fc_parts: which parts are filled */
	__u32 fw_gen;
	__u32 fw_action; /* enum xnf_fw_action */
	__u32 fw_slot;	 /* xnf_fw_hits slot of the rule, or XNF_FC_NO_RULE */
	__u8 l2_mac[6];	 /* the destination MAC looked up; with l2_pad (0),
			  * an xnf_fdb_key, compared as one word */
	__u16 l2_pad;
	__u32 l2_gen;
	__u32 l2_ifindex; /* the FDB's port for l2_mac; 0: not in the FDB */
	__u32 l3_gen;
	__u32 l3_found;		 /* 0: no route */
	struct xnf_rt_val l3_rt; /* what the LPM returned */
	__u32 pad; /* per-CPU values are 8-byte multiples (xnf_pkt's pad) */
};

/* Map names. The shared tables of an instance, pinned at <root>/<name>. */
#define XNF_MAP_STR_(id) #id
#define XNF_MAP_STR(id)	 XNF_MAP_STR_(id)

#define XNF_MAP_CFG	 xnf_cfg
#define XNF_MAP_SCRATCH	 xnf_scratch
#define XNF_MAP_TX	 xnf_tx
#define XNF_MAP_BATCH	 xnf_batch
#define XNF_MAP_XMIT	 xnf_xmit
#define XNF_MAP_POLL	 xnf_poll
#define XNF_MAP_RT4	 xnf_rt4
#define XNF_MAP_RT6	 xnf_rt6
#define XNF_MAP_RT4_B	 xnf_rt4_b /* the other copy (xnf_config.rt_copy) */
#define XNF_MAP_RT6_B	 xnf_rt6_b
#define XNF_MAP_RTSYNC	 xnf_rtsync
#define XNF_MAP_NH	 xnf_nh
#define XNF_MAP_NH_LIVE	 xnf_nh_live
#define XNF_MAP_NH_IDX	 xnf_nh_idx /* libxnf's: nexthop value -> id */
#define XNF_MAP_NHG	 xnf_nhg
#define XNF_MAP_NHG_IDX	 xnf_nhg_idx /* libxnf's: members -> group id */
#define XNF_MAP_FDB	 xnf_fdb
#define XNF_MAP_XCONNECT xnf_xconnect
#define XNF_MAP_CHANGES	 xnf_changes
#define XNF_MAP_FCACHE	 xnf_fcache /* per CPU; no program of user space */
/* per interface, pinned at <root>/dev/<DEV>/<name> */
#define XNF_MAP_STATS	 xnf_stats
#define XNF_MAP_XSKS	 xnf_xsks
#define XNF_MAP_DEV	 xnf_dev
/* per loaded chain (not pinned by name: a chain swap builds a new one) */
#define XNF_MAP_CHAIN	 xnf_chain

#endif /* XNF_UAPI_DP_H */
