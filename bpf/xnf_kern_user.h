/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_kern_user.h - everything that crosses the BPF / user-space boundary.
 *
 * Map keys and values, the enums that name NFs, verdicts and reasons, the
 * per-packet state the NFs of a chain share, and the map names the loader
 * pins. Only fixed-width types; padding is explicit and the user side checks
 * every size with _Static_assert (loader/xnf.h).
 *
 * Included by the BPF programs (after vmlinux.h or linux/bpf.h) and by the
 * C user space (after linux/types.h).
 */
#ifndef XNF_KERN_USER_H
#define XNF_KERN_USER_H

/* Bumped whenever a pinned map's layout or meaning changes; the loader
 * refuses to reuse pins written with another schema. */
#define XNF_SCHEMA 2

#define XNF_CHAIN_MAX 8     /* slots in a chain's prog array */
#define XNF_FUSED_MAX 4     /* NFs a fused chain can inline (each NF once) */
#define XNF_BATCH_BUCKETS 65 /* packets per NAPI poll: 0..63, 64 = 64 or more */
#define XNF_MAX_PORTS 256   /* devices in the egress devmap */
#define XNF_MAX_ROUTES 65536
#define XNF_MAX_FDB 65536

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

/* Accumulated verdict, carried out when the chain ends. */
enum xnf_verdict {
	XNF_V_PASS = 0,     /* to the kernel stack (the default) */
	XNF_V_DROP,
	XNF_V_REDIRECT,     /* to xnf_pkt.egress_ifindex through the devmap */
	XNF_V_FLOOD,        /* to every xnf port but the ingress one */
	XNF_V_XSK,          /* to the AF_XDP socket of the receive queue */
	__XNF_V_MAX
};

/* Why a packet was dropped or passed to the kernel. Every drop counts in
 * exactly one drop[] slot of struct xnf_stats, every pass in one pass[]
 * slot; XNF_R_NONE is only used for packets that finish the chain with the
 * default pass verdict (e.g. allowed by a firewall-only chain). */
enum xnf_reason {
	XNF_R_NONE = 0,
	XNF_R_MALFORMED,    /* header truncated or inconsistent */
	XNF_R_NOT_IP,       /* ethertype is neither IPv4 nor IPv6 (ARP, ...) */
	XNF_R_VLAN,         /* l3fwd: tagged frame, left to the kernel's VLAN devices */
	XNF_R_FW_DENY,      /* firewall rule or default policy said drop */
	XNF_R_NO_ROUTE,
	XNF_R_BLACKHOLE,    /* route of type blackhole */
	XNF_R_TTL,          /* TTL / hop limit would expire */
	XNF_R_LOCAL,        /* destination is one of the router's own addresses */
	XNF_R_NO_NEIGH,     /* fib mode: next hop has no neighbour entry yet */
	XNF_R_FIB,          /* fib mode: forwarding disabled, unsupported route */
	XNF_R_FRAG_NEEDED,  /* fib mode: packet larger than the egress MTU */
	XNF_R_NOT_PORT,     /* fib mode: egress device is not an xnf port */
	XNF_R_L2_MISS,      /* l2fwd: destination MAC not in the FDB */
	XNF_R_HAIRPIN,      /* l2fwd: FDB says the MAC lives on the ingress port */
	XNF_R_REDIRECT,     /* egress port not in the devmap */
	XNF_R_TAIL_CALL,    /* a chain slot had no program (fail closed) */
	XNF_R_XSK,          /* no AF_XDP socket bound to the receive queue */
	XNF_R_INTERNAL,     /* a lookup that cannot fail did */
	XNF_R_POLICED,      /* userspace ratelimit: the flow's token bucket is empty */
	__XNF_R_MAX
};

/* What to do with an exception (no route, TTL, own address, FDB miss, no
 * socket). */
enum xnf_action {
	XNF_ACT_PASS = 0,   /* to the kernel, which answers with ICMP / ARP */
	XNF_ACT_DROP = 1,
	XNF_ACT_FLOOD = 2,  /* l2 miss only */
};

/* Global runtime configuration: xnf_cfg[0]. Read per packet by the NFs that
 * need it, so a policy change needs no reload. Load-time choices (chain
 * slot, fused order, fib mode) are const volatile rodata instead. */
struct xnf_config {
	__u32 schema;       /* XNF_SCHEMA, written by the loader */
	__u32 no_route;     /* enum xnf_action: pass | drop */
	__u32 ttl_expired;  /* pass | drop */
	__u32 local;        /* pass | drop */
	__u32 l2_miss;      /* flood | pass | drop */
	__u32 xsk_fallback; /* pass | drop */
	__u32 tables_gen;   /* bumped by every route, FDB, cross-connect and
			     * firewall change: AF_XDP workers reload their
			     * copies when it moves */
	__u32 pad;
};

/* Per-packet state, parsed once by the entry program and shared by the NFs
 * of the chain through the per-CPU map xnf_scratch (an XDP program and the
 * programs it tail-calls run on one CPU without preemption, so one slot per
 * CPU is enough). Offsets are from the start of the frame. */
enum xnf_pkt_flags {
	XNF_PKT_F_PORTS = 1 << 0,   /* sport/dport were read from a full L4 header */
	XNF_PKT_F_ICMP = 1 << 1,    /* icmp_type/icmp_code are valid */
	XNF_PKT_F_FRAG = 1 << 2,    /* a fragment (first or not) */
	XNF_PKT_F_LATER_FRAG = 1 << 3, /* a non-first fragment: no L4 header */
	XNF_PKT_F_DONE = 1 << 4,    /* an NF decided: skip the rest of the chain */
	XNF_PKT_F_L4_UNKNOWN = 1 << 5, /* IPv6 extension headers beyond what the
					* parser walks: l4_proto is not L4 */
};

enum xnf_family {
	XNF_AF_NONE = 0,
	XNF_AF_INET = 4,
	XNF_AF_INET6 = 6,
};

struct xnf_pkt {
	__u32 ingress_ifindex;
	__u32 egress_ifindex;   /* valid with XNF_V_REDIRECT */
	__u32 rx_queue;
	__u16 l3_off;           /* IPv4 / IPv6 header */
	__u16 l4_off;           /* L4 header (after IPv6 extension headers) */
	__u16 l3_len;           /* IPv4 total length / IPv6 40 + payload length */
	__be16 eth_proto;       /* ethertype after the VLAN tags */
	__u8 family;            /* enum xnf_family */
	__u8 l4_proto;          /* IPPROTO_*, after IPv6 extension headers */
	__u8 vlans;             /* number of VLAN tags (0..2) */
	__u8 flags;             /* enum xnf_pkt_flags */
	__u8 verdict;           /* enum xnf_verdict */
	__u8 reason;            /* enum xnf_reason */
	__u8 icmp_type;
	__u8 icmp_code;
	__be16 sport;
	__be16 dport;
};

/* Per-NF counters. Each counts the verdict a packet carries when it leaves
 * the NF, so in == pass + drop + redirect + aborted for every NF; for
 * XNF_NF_ENTRY they are the actions finally carried out. */
struct xnf_nf_counters {
	__u64 in;
	__u64 pass;
	__u64 drop;
	__u64 redirect;     /* redirect, flood and xsk */
	__u64 aborted;
};

/* Per-interface, per-CPU: xnf_stats[0]. Plain increments: each CPU owns its
 * copy and XDP does not preempt itself, so no atomics are needed. */
struct xnf_stats {
	struct xnf_nf_counters nf[__XNF_NF_MAX];
	__u64 drop[__XNF_R_MAX];
	__u64 pass[__XNF_R_MAX];
	__u64 tail_miss[XNF_CHAIN_MAX]; /* tail calls that found an empty slot */
};

/* What xnf attached to an interface: xnf_dev[0] of the interface, written
 * by `xnf attach` / `xnf chain set`, read by `xnf status`; xnf_dev[1] holds
 * the chain a `chain set` is switching to until the switch is complete. */
struct xnf_dev_info {
	__u32 ifindex;
	__u32 netns;        /* inode of the network namespace */
	__u32 xdp_flags;    /* XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE */
	__u32 fused;
	__u32 l3_fib;
	__u32 chain_len;
	__u32 nf[XNF_CHAIN_MAX]; /* enum xnf_nf_id per slot */
};

/* Batch sizes: packets handled per NAPI poll of an attached device, counted
 * by the napi_poll tracepoint program; per CPU, keyed by device. ifindex is
 * only unique within a network namespace, hence the netns inode. */
struct xnf_dev_key {
	__u32 netns;        /* inode of the device's network namespace */
	__u32 ifindex;
};

struct xnf_batch_hist {
	__u64 polls[XNF_BATCH_BUCKETS];
};

/* l3fwd tables: LPM tries keyed by prefix, value is the next hop. */
struct xnf_rt4_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct xnf_rt6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

enum xnf_route_type {
	XNF_RT_UNICAST = 0,  /* forward to ifindex, rewriting MACs */
	XNF_RT_LOCAL,        /* one of the router's own addresses */
	XNF_RT_BLACKHOLE,    /* drop silently */
	XNF_RT_UNREACHABLE,  /* treated like no route: the kernel sends ICMP */
};

struct xnf_route {
	__u32 type;          /* enum xnf_route_type */
	__u32 ifindex;       /* egress port */
	__u8 dmac[6];        /* next hop's MAC */
	__u8 smac[6];        /* egress port's MAC */
	__u32 gw_family;     /* enum xnf_family of gw, 0 = directly connected */
	__u8 gw[16];         /* next hop address, for show only */
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

/*
 * Firewall.
 *
 * Rules are kept by the control plane in xnf_fw_rules (one slot each, the
 * source of truth) and compiled into bit-vector tables (Lakshman-Stiliadis
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
 * The compiled tables exist twice (generations 0 and 1, the generation is
 * part of every key). The control plane writes the inactive one, flips
 * xnf_fw_active and waits for an RCU grace period before it may write the
 * old one again: a packet reads the generation once and classifies with one
 * complete rule set.
 */
#define XNF_FW_MAX_RULES 10240
#define XNF_FW_WORDS (XNF_FW_MAX_RULES / 64)         /* 160 */
#define XNF_FW_SUMMARY ((XNF_FW_WORDS + 63) / 64)    /* 3 */
#define XNF_FW_MAX_CLASSES 16384                     /* per generation */
#define XNF_FW_GENS 2

enum xnf_fw_action {
	XNF_FW_ALLOW = 0,
	XNF_FW_DROP = 1,
};

enum xnf_fw_rule_flags {
	XNF_FW_F_SRC = 1 << 0,
	XNF_FW_F_DST = 1 << 1,
	XNF_FW_F_PROTO = 1 << 2,
	XNF_FW_F_SPORT = 1 << 3,
	XNF_FW_F_DPORT = 1 << 4,
};

/* A rule as the operator wrote it: xnf_fw_rules[slot]. */
struct xnf_fw_rule {
	__u32 prio;          /* lower first; unique */
	__u16 flags;         /* enum xnf_fw_rule_flags: which fields match */
	__u8 action;         /* enum xnf_fw_action */
	__u8 family;         /* enum xnf_family of src/dst, 0 if neither */
	__u8 proto;          /* IPPROTO_* with XNF_FW_F_PROTO */
	__u8 src_len;
	__u8 dst_len;
	__u8 in_use;
	__u16 sport_lo, sport_hi;
	__u16 dport_lo, dport_hi;
	__u8 src[16];        /* network order, IPv4 in the first 4 bytes */
	__u8 dst[16];
};

/* Compiled rule set header: xnf_fw_hdr[gen]. */
struct xnf_fw_hdr {
	__u32 nrules;
	__u32 default_action;  /* enum xnf_fw_action */
	__u32 sport_none;      /* class for packets whose ports can't be read */
	__u32 dport_none;
};

/* xnf_fw_order[gen * XNF_FW_MAX_RULES + bit]: the rule behind a bit. */
struct xnf_fw_match {
	__u32 action;        /* enum xnf_fw_action */
	__u32 slot;          /* index into xnf_fw_rules and xnf_fw_hits */
	__u32 rank;          /* position in priority order, 0 first */
	__u32 pad;
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

struct xnf_fw_hit {
	__u64 packets;
	__u64 bytes;
};

/* Placement (loader/placement.c): what `xnf attach ... queues N | cores
 * LIST|auto` changed on the host, so that detach and a failed attach can
 * put it back, `xnf plan` can report drift, and AF_XDP workers can find
 * their cores. No program reads these: they are pinned, with BTF, as
 * <root>/dev/<DEV>/xnf_place (one entry) and xnf_place_q (one per queue). */
#define XNF_PLACE_MAX_QUEUES 256
#define XNF_PLACE_CPU_WORDS 16       /* CPU masks cover CPUs 0..1023 */

enum xnf_place_flag {
	XNF_PLACE_CHANNELS = 1 << 0, /* xnf changed the channel count */
	XNF_PLACE_THREADED = 1 << 1, /* xnf turned threaded NAPI on */
	XNF_PLACE_IRQS = 1 << 2,     /* xnf set some queue IRQ's affinity */
	XNF_PLACE_NAPI = 1 << 3,     /* xnf pinned napi threads */
};

struct xnf_place_info {
	__u32 ifindex;
	__u32 flags;        /* enum xnf_place_flag */
	__u32 nqueues;      /* queues placed: entries 0..nqueues-1 of xnf_place_q */
	__s32 node;         /* NUMA node of the device, -1: none */
	__u32 prev_combined, prev_rx, prev_tx, prev_other; /* channels before */
	__u32 set_combined, set_rx, set_tx, set_other;     /* channels xnf set */
	__u32 prev_threaded; /* /sys/class/net/DEV/threaded before attach */
	__u32 pad;
};

enum xnf_place_qflag {
	XNF_PLACE_Q_IRQ = 1 << 0,    /* xnf set the affinity of .irq */
	XNF_PLACE_Q_NAPI = 1 << 1,   /* xnf pinned the napi thread .napi_id */
};

struct xnf_place_queue {
	__s32 irq;          /* the queue's IRQ, -1: none (virtual device) */
	__u32 cpu;          /* where its XDP work (IRQ, NAPI) runs */
	__u32 worker_cpu;   /* where its userspace (AF_XDP) worker runs */
	__u32 flags;        /* enum xnf_place_qflag */
	__u32 napi_id;      /* 0: none */
	__u32 pad;
	__u64 prev_irq[XNF_PLACE_CPU_WORDS];  /* IRQ affinity before */
	__u64 prev_napi[XNF_PLACE_CPU_WORDS]; /* napi thread affinity before */
};

/*
 * AF_XDP workers (userspace/worker.c): one entry of xnf_workers per queue,
 * an mmapable array pinned as <root>/dev/<DEV>/xnf_workers (declared with
 * BTF in worker.bpf.c). Each worker thread writes only its own entry,
 * through the mmap, with plain stores: readers (`xnf stats`, `xnf status`,
 * bpftool) see each field whole but the fields of an entry not as one
 * snapshot.
 */
#define XNF_WORKER_MAX 64          /* queues with a worker, per device */
#define XNF_XSK_BATCH_MAX 512      /* descriptors per ring read */
#define XNF_WORKER_NF_NAME 32

enum xnf_worker_state {
	XNF_W_NONE = 0,
	XNF_W_STARTING,
	XNF_W_RUNNING,
	XNF_W_STOPPED,      /* exited cleanly */
};

enum xnf_xsk_mode {
	XNF_XSK_MODE_NONE = 0,
	XNF_XSK_MODE_COPY,
	XNF_XSK_MODE_ZEROCOPY,
};

/* Why a worker dropped a frame (the NF's own drops are by enum xnf_reason
 * in nf_drop[]). */
enum xnf_wdrop {
	XNF_WD_NF = 0,      /* the NF said drop (see nf_drop[]) */
	XNF_WD_TO_KERNEL,   /* the NF said pass: AF_XDP cannot hand a frame to the stack */
	XNF_WD_NO_PORT,     /* egress device has no socket of this worker */
	XNF_WD_TX_FULL,     /* TX ring full, frame recycled */
	__XNF_WD_MAX
};

/* Where a UMEM frame is (userspace/frames.h): every frame is in exactly one
 * place, at every moment. */
enum xnf_frame_place {
	XNF_FP_FREE = 0,    /* the worker's free list */
	XNF_FP_FILL,        /* given to the kernel: fill ring, or RX ring not yet read */
	XNF_FP_NF,          /* read from RX, in the NF's vector */
	XNF_FP_TX,          /* given to the kernel: TX ring, or completion not yet read */
	__XNF_FP_MAX
};

struct xnf_wbatch {
	__u64 batches;      /* RX reads that returned this many descriptors */
	__u64 ns;           /* sum of their service times (parse, NF, TX) */
	__u64 ns_sq;        /* sum of squares, for the variance */
};

struct xnf_worker_stats {
	__u32 state;        /* enum xnf_worker_state */
	__u32 pid;
	__u32 tid;
	__u32 cpu;          /* pinned to */
	__s32 node;         /* UMEM on this NUMA node, -1: none */
	__u32 mode;         /* enum xnf_xsk_mode */
	__u32 batch;        /* descriptors per read */
	__u32 ring;         /* ring size */
	__u32 frames;       /* UMEM frames */
	__u32 frame_size;
	__u32 busy_poll;    /* SO_PREFER_BUSY_POLL in use */
	__u32 need_wakeup;  /* XDP_USE_NEED_WAKEUP in use */
	__u8 nf[XNF_WORKER_NF_NAME]; /* the NF chain, "l3fwd" */
	__u32 reset_req;    /* bumped by `xnf stats reset`: the worker zeroes */
	__u32 reset_done;   /* its counters itself and copies reset_req here */
	__u64 started_ns;   /* CLOCK_MONOTONIC */
	__u64 rx_packets, rx_bytes;
	__u64 tx_packets, tx_bytes;
	__u64 polls;        /* RX reads */
	__u64 empty_polls;  /* RX reads that returned nothing */
	__u64 busy_ns;      /* time in reads that returned packets and their work */
	__u64 idle_ns;      /* time in reads that returned nothing, and waiting */
	__u64 fill_short;   /* fill-ring refills that found no free frame */
	__u64 drop[__XNF_WD_MAX];
	__u64 nf_drop[__XNF_R_MAX];
	__u64 place[__XNF_FP_MAX]; /* frames in each place, sums to .frames */
	/* the kernel's XDP_STATISTICS of the RX socket */
	__u64 k_rx_dropped;
	__u64 k_rx_invalid_descs;
	__u64 k_tx_invalid_descs;
	__u64 k_rx_ring_full;
	__u64 k_rx_fill_ring_empty_descs;
	__u64 k_tx_ring_empty_descs;
	struct xnf_wbatch by_size[XNF_XSK_BATCH_MAX + 1];
};

/*
 * Generator and sink (tools/gen.c, tools/sink.c, bpf/gen.bpf.c,
 * bpf/sink.bpf.c): the probe the generator writes at the start of every
 * frame's L4 payload, and what the sink counts.
 */
#define XNF_PROBE_MAGIC 0x786e6670 /* "xnfp" */

struct xnf_probe {
	__u32 magic;        /* XNF_PROBE_MAGIC, network order */
	__u32 flow;         /* flow index, 0..flows-1 */
	__u64 seq;          /* per generator run, from 0 */
	__u64 ts_ns;        /* CLOCK_MONOTONIC when the frame was written */
};

/* The probe of frames too short for struct xnf_probe: a 64-byte IPv4/UDP
 * frame has 18 bytes of payload. The sink widens seq to 64 bits from the
 * highest sequence number it has seen (frames less than 2^31 apart). */
#define XNF_PROBE_MAGIC_SHORT 0x786e6673 /* "xnfs" */

struct xnf_probe_short {
	__u32 magic;        /* XNF_PROBE_MAGIC_SHORT, network order */
	__u32 seq;          /* low 32 bits of the sequence number */
	__u64 ts_ns;
};

/* Generator (gen.bpf.c): what the frames of a run look like, set in
 * .rodata before load. Frame sizes include the 4-byte FCS (RFC 2544); the
 * program writes sizes[i] - 4 bytes. Flow f of a run uses source port
 * sport + f (mod 2^16) and source address + f / 65536 (added to its last
 * 32 bits). Checksum partial sums are ones'-complement sums of the frame's
 * 16-bit words as loaded natively (RFC 1071: byte order independent). */
#define XNF_GEN_HDR_MAX 80          /* Ethernet + IPv6 + TCP = 74 */
#define XNF_GEN_SIZES_MAX 1024      /* entries of a size table */
#define XNF_GEN_FRAME_MAX 1518
#define XNF_GEN_FLOWS_MAX (1u << 24)

struct xnf_gen_cfg {
	__u8 hdr[XNF_GEN_HDR_MAX];  /* headers of flow 0; lengths, checksums zero */
	__u32 cookie;       /* 4 bytes of XDP metadata that mark generator frames */
	__u32 flows;        /* 1..XNF_GEN_FLOWS_MAX */
	__u32 nsizes;       /* 1..XNF_GEN_SIZES_MAX */
	__u32 ip_sum;       /* IPv4 header without length, checksum, source */
	__u32 l4_sum;       /* pseudo-header and L4 header without source port,
			     * lengths, checksum and the source's last 32 bits */
	__u16 sport;        /* flow 0, host order */
	__u8 family;        /* 4 or 6 */
	__u8 proto;         /* IPPROTO_UDP or IPPROTO_TCP */
	__u16 sizes[XNF_GEN_SIZES_MAX]; /* frame sizes in sending order */
};

/* Generator state (gen.bpf.c .bss), read and, between test runs, written
 * by user space through the mmap. With pace_ps set, each run of the
 * program sends the next frame only once its time has come (and before
 * limit and end_ns); runs before that send nothing (XDP_DROP of the live
 * frame, counted in idle): the thread polls in the kernel, and one call
 * covers many frames. */
struct xnf_gen_state {
	__u64 seq;          /* next sequence number = frames written */
	__u64 bytes;        /* sum of their sizes, with FCS */
	__u64 errors;       /* frames that could not be written (dropped) */
	__u32 flow;         /* next flow */
	__u32 size_idx;     /* next entry of sizes[] */
	__u64 pace_t0;      /* CLOCK_MONOTONIC ns when frame 0 is due */
	__u64 pace_ps;      /* picoseconds between frames; 0: send every run */
	__u64 max_late_ns;  /* paced: a frame later than this (the thread was
			     * preempted) moves the schedule instead of
			     * leaving in a catch-up burst */
	__u64 slips;        /* paced: how often the schedule was moved */
	__u64 limit;        /* paced: no frame with seq >= limit */
	__u64 end_ns;       /* paced: nor at or after this time (0: none) */
	__u64 idle;         /* paced runs that sent nothing */
	__u64 runs;         /* paced: runs of the program (frames, idle, errors) */
	__u32 pace_batch;   /* paced: runs per flush (the call's batch_size) */
	__u32 gap;          /* paced: since the last frame, 1: a run waited,
			     * 2: a flush; 3: the next frame starts a burst */
	__u64 bursts;       /* paced: frames that left apart from the one before */
	__u32 burst_len;    /* paced: frames in the current burst */
	__u32 burst_max;    /* paced: the most frames that left together or
			     * back to back */
	__u32 burst_cap;    /* paced: a late frame that would make a burst
			     * longer waits a period instead (0: no cap) */
	__u32 pad;
	__u64 last_ns;      /* when the last frame was written */
};

/* Sink (sink.bpf.c): per-CPU counters, a per-CPU latency histogram and a
 * global sequence state. Latency buckets are log-linear: 32 per power of
 * two (each at most 1/32 = 3.1% wide), exact below 64 ns, up to 2^34 ns
 * (17 s); larger values land in the last bucket. Bucket b covers
 * [xnf_lat_lower(b), xnf_lat_lower(b + 1)). */
#define XNF_LAT_SUB_BITS 5
#define XNF_LAT_SUB (1u << XNF_LAT_SUB_BITS)
#define XNF_LAT_MAX_BITS 34
#define XNF_LAT_BUCKETS ((XNF_LAT_MAX_BITS - XNF_LAT_SUB_BITS + 1) * XNF_LAT_SUB)

struct xnf_sink_stats {
	__u64 packets;      /* frames with a probe (dropped) */
	__u64 bytes;        /* their sizes, with the 4-byte FCS */
	__u64 no_probe;     /* frames without a probe (passed to the kernel) */
	__u64 no_probe_bytes;
	__u64 bad_ip_csum;  /* IPv4 header checksum wrong */
	__u64 bad_l4_csum;  /* UDP/TCP checksum wrong (checked with csum) */
	__u64 ts_ahead;     /* probe timestamp later than the arrival (counted as 0 ns) */
	__u64 lat_sum;      /* ns */
	__u64 lat_min;      /* ns, of this CPU's frames (when packets > 0) */
	__u64 lat_max;
	__u64 first_ns;     /* arrival of the first and the last probe frame */
	__u64 last_ns;
};

struct xnf_sink_hist {
	__u64 count[XNF_LAT_BUCKETS];
};

/* Sequence numbers, per receive queue: a queue's frames are handled by
 * one NAPI instance, one CPU at a time, so its state needs no lock (a
 * spin lock costs ~70 ns per frame here). Queues from XNF_SINK_QUEUES - 1
 * up share the last element, under its lock. Reordering is counted within
 * a queue (RSS keeps a flow on one queue); loss is counted over all of
 * them. A window of the last XNF_SINK_WINDOW * 64 sequence numbers tells
 * duplicates from late frames; a frame older than the window counts as
 * reordered (and is assumed not to be a duplicate). */
#define XNF_SINK_QUEUES 64
#define XNF_SINK_WINDOW 1024

struct xnf_seq_block {
	__u64 block;        /* seq / 64 */
	__u64 bits;         /* which of its 64 have arrived */
};

struct xnf_sink_seq {
	__u64 started;      /* 1 once a probe frame arrived */
	__u64 min_seq;
	__u64 max_seq;
	__u64 reordered;    /* arrived after a higher sequence number */
	__u64 duplicates;
	__u64 beyond_window; /* of the reordered: older than the window */
	struct xnf_seq_block win[XNF_SINK_WINDOW];
};

/* An element of the map xnf_sink_seq (XNF_SINK_QUEUES of them) is
 * { struct bpf_spin_lock, __u32 pad, struct xnf_sink_seq }: the sequence
 * state starts this many bytes in. */
#define XNF_SINK_SEQ_OFF 8

/* Sink options (sink.bpf.c .rodata). */
struct xnf_sink_cfg {
	__u32 check_l4;     /* verify UDP/TCP checksums */
	__u32 pad;
};

/* Map names, as the kernel and bpftool show them. */
#define XNF_MAP_CFG        "xnf_cfg"
#define XNF_MAP_SCRATCH    "xnf_scratch"
#define XNF_MAP_TX         "xnf_tx"
#define XNF_MAP_BATCH      "xnf_batch"
#define XNF_MAP_RT4        "xnf_rt4"
#define XNF_MAP_RT6        "xnf_rt6"
#define XNF_MAP_FDB        "xnf_fdb"
#define XNF_MAP_XCONNECT   "xnf_xconnect"
#define XNF_MAP_FW_ACTIVE  "xnf_fw_active"
#define XNF_MAP_FW_HDR     "xnf_fw_hdr"
#define XNF_MAP_FW_RULES   "xnf_fw_rules"
#define XNF_MAP_FW_ORDER   "xnf_fw_order"
#define XNF_MAP_FW_CLASS   "xnf_fw_class"
#define XNF_MAP_FW_SRC4    "xnf_fw_src4"
#define XNF_MAP_FW_DST4    "xnf_fw_dst4"
#define XNF_MAP_FW_SRC6    "xnf_fw_src6"
#define XNF_MAP_FW_DST6    "xnf_fw_dst6"
#define XNF_MAP_FW_PROTO   "xnf_fw_proto"
#define XNF_MAP_FW_SPORT   "xnf_fw_sport"
#define XNF_MAP_FW_DPORT   "xnf_fw_dport"
#define XNF_MAP_FW_HITS    "xnf_fw_hits"
/* per interface */
#define XNF_MAP_STATS      "xnf_stats"
#define XNF_MAP_XSKS       "xnf_xsks"
#define XNF_MAP_DEV        "xnf_dev"
#define XNF_MAP_PLACE      "xnf_place"
#define XNF_MAP_PLACE_Q    "xnf_place_q"
#define XNF_MAP_WORKERS    "xnf_workers"
/* per loaded chain (not pinned by name: a chain swap builds a new one) */
#define XNF_MAP_CHAIN      "xnf_chain"

#endif /* XNF_KERN_USER_H */
