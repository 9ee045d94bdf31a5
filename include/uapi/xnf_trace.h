/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_trace.h - what xnf tells about single packets: the trace (`xnf
 * trace`: every NF a matching packet ran through and what it did, one
 * record per packet through a BPF ring buffer) and the packet log
 * (firewall rules with `log`, and packets dropped or passed for a sampled
 * reason: rate-limited records in a ring of slots that any number of
 * readers poll, `xnf monitor`, the system log).
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role). Only fixed-width types, and enums that are checked to
 * be a __u32 (XNF_ENUM_U32, xnf_dp.h); padding is explicit and the user
 * side checks every size with _Static_assert (include/xnf.h). Included by
 * the BPF programs (after vmlinux.h or linux/bpf.h) and by user space
 * (after linux/types.h).
 */
#ifndef XNF_UAPI_TRACE_H
#define XNF_UAPI_TRACE_H

#include "xnf_dp.h"
#include "xnf_fw.h"

/*
 * Trace.
 *
 * xnf_trace_cfg[0] arms one trace for the instance: a match in the
 * firewall's terms (struct xnf_fw_rule, its flags say which fields count;
 * the action is not used) and its bounds. The entry program (and the
 * fused chain) tests id once per packet: 0, nothing else happens. A
 * packet that matches, within the bounds, gets xnf_pkt.trace = 1; every
 * NF then fills its step of the per-CPU record (xnf_trace_buf) and the
 * end of the chain sends the record to the ring buffer xnf_trace_rb
 * (bpf_ringbuf_output: never waits; a full ring loses the record,
 * counted in xnf_trace_stats.lost, never the packet).
 *
 * The bounds are kept by the datapath itself, so a tracer that is killed
 * leaves no trace running: the packet that finds the deadline passed or
 * the count reached sets id to 0 (disarms) and is not traced.
 */
#define XNF_TRACE_STEPS	   XNF_CHAIN_MAX /* NFs of a chain, one step each */
#define XNF_TRACE_RB_BYTES (1u << 20)	 /* ring buffer: ~2,000 records */

struct xnf_trace_cfg {
	__u32 id;	   /* 0: no trace armed; else the trace's id, in
			    * every record it produces */
	__u32 pid;	   /* the tracer that armed it */
	__u64 deadline_ns; /* bpf_ktime_get_ns() after which it ends:
				   * the timeout, or a lease its running
				   * tracer renews (include/trace.h) */
	__u64 max_packets; /* packets it traces at most; 0: no bound */
	__u64 matched;	   /* packets it took so far (atomic add by the
			    * datapath: a take past max_packets is not
			    * traced) */
	__u32 lease_ms;	   /* not 0: deadline_ns is a lease of this length,
			   * renewed by the tracer (there is no timeout) */
	__u32 pad;
	struct xnf_fw_rule match; /* what packets: flags & the match bits */
};

/* xnf_trace_step.fc: what the NF's flow cache did for this packet. */
enum xnf_trace_fc {
	XNF_TRACE_FC_NONE = 0, /* the NF does not cache, or the cache is off */
	XNF_TRACE_FC_HIT = 1,  /* the NF's decision came from the cache */
	XNF_TRACE_FC_MISS = 2, /* looked up, then stored in the cache */
};

/* xnf_trace_step.flags: which of the step's detail fields an NF set. */
enum xnf_trace_step_flags {
	XNF_TRACE_S_RULE = 1 << 0,    /* rule: a rule's prio */
	XNF_TRACE_S_DEFAULT = 1 << 1, /* the firewall's default policy decided */
	XNF_TRACE_S_ROUTE = 1 << 2,   /* addr/plen: the route (l3fwd) */
	XNF_TRACE_S_GW = 1 << 3,      /* gw: the next hop's address (l3fwd) */
	XNF_TRACE_S_EGRESS = 1 << 4,  /* ifindex: the egress (l3fwd, l2fwd),
				      * the queue (xsk) */
	XNF_TRACE_S_MAC = 1 << 5,     /* gw[0..5]: the FDB's MAC (l2fwd),
				      * the next hop's MAC (l3fwd: the
				      * destination MAC it writes) */
	XNF_TRACE_S_CT = 1 << 6,      /* ct_state/ct_dir (conntrack) */
	XNF_TRACE_S_NAT = 1 << 7,     /* addr, gw, port, port2: the tuple the
				      * packet leaves with (nat) */
};

/* What one NF did to a traced packet. */
struct xnf_trace_step {
	__u8 nf;       /* enum xnf_nf_id */
	__u8 verdict;  /* enum xnf_verdict when the NF was done */
	__u8 reason;   /* enum xnf_reason when the NF was done */
	__u8 fc;       /* enum xnf_trace_fc */
	__u8 flags;    /* enum xnf_trace_step_flags */
	__u8 ct_state; /* enum xnf_ct_state (conntrack: the packet's) */
	__u8 ct_dir;   /* enum xnf_ct_dir */
	__u8 nat;      /* enum xnf_pkt_nat after the NF */
	__u32 rule;    /* firewall: the prio of the rule that matched; nat:
			* the prio of the rule of a new translation */
	__u32 ifindex; /* see XNF_TRACE_S_EGRESS */
	__u8 family;   /* enum xnf_family of addr and gw */
	__u8 plen;     /* the route's prefix length */
	__be16 port;   /* nat: the source port the packet leaves with */
	__be16 port2;  /* nat: the destination port */
	__u16 pad;
	__u8 addr[16]; /* the route's prefix; nat: the source address */
	__u8 gw[16];   /* the next hop's address or MAC; nat: destination */
};

/* One traced packet: what the entry program parsed, every NF's step in
 * chain order, and what xnf_finish() carried out. */
struct xnf_trace_rec {
	__u64 ts;	/* bpf_ktime_get_ns() at the entry program */
	__u32 id;	/* xnf_trace_cfg.id of the trace */
	__u32 seq;	/* 1 for the trace's first packet, and so on */
	__u32 ifindex;	/* ingress device */
	__u32 rx_queue; /* receive queue */
	__u32 cpu;
	__u32 len;	/* bytes of the frame */
	__u32 egress;	/* the device a redirect went to; the queue of an
			  * AF_XDP handoff */
	__u8 family;	/* enum xnf_family; XNF_AF_NONE: not IP */
	__u8 l4_proto;	/* IPPROTO_* */
	__u8 pkt_flags; /* enum xnf_pkt_flags after the entry's parse */
	__u8 nsteps;	/* steps[] filled */
	__u8 verdict;	/* enum xnf_verdict carried out */
	__u8 reason;	/* enum xnf_reason of a drop or pass */
	__u8 action;	/* what the program returned: XDP_PASS, XDP_DROP,
			  * XDP_REDIRECT */
	__u8 tcp_flags; /* with XNF_PKT_F_TCP */
	__u8 icmp_type; /* with XNF_PKT_F_ICMP */
	__u8 icmp_code;
	__be16 eth_proto;
	__be16 sport;
	__be16 dport;
	__u8 dmac[6];
	__u8 smac[6];
	__u8 src[16]; /* as the packet entered (IPv4: the first 4 bytes) */
	__u8 dst[16];
	struct xnf_trace_step step[XNF_TRACE_STEPS];
};

/* Per CPU: xnf_trace_stats[0]. */
struct xnf_trace_stats {
	__u64 traced; /* records sent to the ring buffer */
	__u64 lost;   /* records the ring buffer had no room for */
};

/*
 * Packet log.
 *
 * A log source is a firewall rule that logs (by its slot: the index of
 * xnf_fw_hits) or a reason whose drops and passes are sampled
 * (XNF_LOG_REASON_BASE + enum xnf_reason). Each has a token bucket in
 * xnf_log_limit, written by libxnf when the rule or the reason's setting
 * is committed; a packet of a source whose bucket is empty is not logged,
 * counted in xnf_log_stats[source].suppressed. A logged packet takes the
 * next sequence number (atomic add on xnf_log_seq[0]) and writes its
 * record into xnf_log[seq % XNF_LOG_SLOTS]: the datapath never waits for
 * a reader, and a reader that falls more than XNF_LOG_SLOTS behind knows
 * how many it lost from the sequence numbers.
 */
#define XNF_LOG_SLOTS	    1024
#define XNF_LOG_PREFIX_MAX  XNF_FW_LOG_PREFIX_MAX
#define XNF_LOG_REASON_BASE XNF_FW_HITS
#define XNF_LOG_SOURCES	    (XNF_LOG_REASON_BASE + XNF_REASON_SLOTS)
/* Defaults of a rule's `log` without `limit` (and of a sampled reason):
 * 10 packets a second, bursts of 5 (nft's limit's default burst). */
#define XNF_LOG_RATE	    10
#define XNF_LOG_UNIT_S	    1
#define XNF_LOG_BURST	    5

/* xnf_log_limit[source]: the token bucket and what a record of the source
 * carries. rate == 0: the source does not log. */
struct xnf_log_limit {
	struct bpf_spin_lock lock; /* tokens, last_ns */
	__u32 rate;		   /* packets per unit_s seconds */
	__u32 unit_s;		   /* 1, 60, 3600 or 86400 */
	__u32 burst;		   /* packets beyond the rate at once */
	__u64 tokens;		   /* in ns of the unit's time, scaled */
	__u64 last_ns;		   /* bpf_ktime_get_ns() of the last refill */
	__u32 prio;		   /* the rule's prio (a rule source) */
	__u32 pad;
	char prefix[XNF_LOG_PREFIX_MAX];
};

/* xnf_log_stats[source], per CPU. */
struct xnf_log_counters {
	__u64 logged;
	__u64 suppressed; /* matched while its bucket was empty */
};

struct xnf_log_rec {
	__u64 seq;	/* the record's sequence number + 1, written last;
			 * 0 while it is written */
	__u64 ts;	/* bpf_ktime_get_ns() */
	__u32 source;	/* the log source */
	__u32 prio;	/* its rule's prio (rule sources) */
	__u32 ifindex;	/* ingress device */
	__u32 len;	/* bytes of the frame */
	__u8 family;	/* enum xnf_family; XNF_AF_NONE: not IP */
	__u8 l4_proto;	/* IPPROTO_* */
	__u8 verdict;	/* enum xnf_verdict when it was logged */
	__u8 reason;	/* enum xnf_reason (reason sources, and a rule's
			 * drop: fw_deny) */
	__u8 ttl;	/* IPv4 TTL / IPv6 hop limit */
	__u8 tcp_flags; /* with XNF_PKT_F_TCP in pkt_flags */
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 pkt_flags; /* enum xnf_pkt_flags */
	__u8 pad;
	__be16 eth_proto;
	__be16 sport;
	__be16 dport;
	__u8 dmac[6];
	__u8 smac[6];
	__u16 ip_len; /* IPv4 total length / IPv6 40 + payload length */
	__u8 pad2[2];
	__u8 src[16];
	__u8 dst[16];
	char prefix[XNF_LOG_PREFIX_MAX];
};

/* Map names (pinned at <root>/tables/<name>). */
#define XNF_MAP_TRACE_CFG   xnf_trace_cfg
#define XNF_MAP_TRACE_BUF   xnf_trace_buf
#define XNF_MAP_TRACE_RB    xnf_trace_rb
#define XNF_MAP_TRACE_STATS xnf_trace_stats
#define XNF_MAP_LOG	    xnf_log
#define XNF_MAP_LOG_SEQ	    xnf_log_seq
#define XNF_MAP_LOG_LIMIT   xnf_log_limit
#define XNF_MAP_LOG_STATS   xnf_log_stats

#endif /* XNF_UAPI_TRACE_H */
