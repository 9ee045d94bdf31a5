/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_traffic.h - the traffic generator and sink: the probe in every
 * frame and what the sink counts.
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role). Only fixed-width types; padding is explicit and the user
 * side checks every size with _Static_assert (include/xnf.h). Included by
 * the BPF programs (after vmlinux.h or linux/bpf.h) and by user space (after
 * linux/types.h).
 *
 * A map's name is defined once, here, as the identifier the BPF program
 * declares (XNF_MAP_*); user space pins and finds it by XNF_MAP_STR(...).
 */
#ifndef XNF_UAPI_TRAFFIC_H
#define XNF_UAPI_TRAFFIC_H

#include "xnf_dp.h"

/*
 * Generator and sink (tools/gen.c, tools/sink.c, bpf/gen.bpf.c,
 * bpf/sink.bpf.c): the probe the generator writes at the start of every
 * frame's L4 payload, and what the sink counts.
 */
#define XNF_PROBE_MAGIC 0x786e6670 /* "xnfp" */

struct xnf_probe {
	__u32 magic; /* XNF_PROBE_MAGIC, network order */
	__u32 flow;  /* flow index, 0..flows-1 */
	__u64 seq;   /* per generator run, from 0 */
	__u64 ts_ns; /* CLOCK_MONOTONIC when the frame was written */
};

/* The probe of frames too short for struct xnf_probe: a 64-byte IPv4/UDP
 * frame has 18 bytes of payload. The sink widens seq to 64 bits from the
 * highest sequence number it has seen (frames less than 2^31 apart). */
#define XNF_PROBE_MAGIC_SHORT 0x786e6673 /* "xnfs" */

struct xnf_probe_short {
	__u32 magic; /* XNF_PROBE_MAGIC_SHORT, network order */
	__u32 seq;   /* low 32 bits of the sequence number */
	__u64 ts_ns;
};

/* Generator (gen.bpf.c): what the frames of a run look like, set in
 * .rodata before load. Frame sizes include the 4-byte FCS (RFC 2544); the
 * program writes sizes[i] - 4 bytes. Flow f of a run uses source port
 * sport + f (mod 2^16) and source address + f / 65536 (added to its last
 * 32 bits). Checksum partial sums are ones'-complement sums of the frame's
 * 16-bit words as loaded natively (RFC 1071: byte order independent). */
#define XNF_GEN_HDR_MAX	  80   /* Ethernet + IPv6 + TCP = 74 */
#define XNF_GEN_SIZES_MAX 1024 /* entries of a size table */
#define XNF_GEN_FLUSH_MAX 64   /* most runs per flush (the unpaced batch) */
#define XNF_GEN_FRAME_MAX 1518
#define XNF_GEN_FLOWS_MAX (1u << 24)

/* Flow mixes (cfg.mix). XNF_GEN_MIX_ROUND_ROBIN: flow f, f + 1, .. in
 * turn, every flow equally often. XNF_GEN_MIX_TABLE: the flow of frame seq
 * is xnf_gen_mix[seq % XNF_GEN_MIX_SIZE], a table of flow indices user
 * space fills before load (xnf_mix_zipf(): a Zipf law over the flows). */
#define XNF_GEN_MIX_ROUND_ROBIN 0
#define XNF_GEN_MIX_TABLE	1
#define XNF_GEN_MIX_BITS	16
#define XNF_GEN_MIX_SIZE	(1u << XNF_GEN_MIX_BITS)

/* As fast as possible, the sender's pauses: gaps of 2^XNF_GEN_PAUSE_SHIFT
 * ns (65.5 us) or more between two frames, by log2: bucket b holds the
 * gaps of [2^(SHIFT + b), 2^(SHIFT + b + 1)) ns, the last also all longer
 * ones. The receiving ring gets nothing meanwhile (paced, the frames due
 * leave late instead, in a catch-up burst). 65.5 us: longer than a flush
 * of 64 frames keeps the sender (~20 us with a GRO receiver, less into
 * XDP), about as long as a 256-frame veth ring lasts a DUT at 2-4 Mpps. */
#define XNF_GEN_PAUSE_SHIFT   16
#define XNF_GEN_PAUSE_BUCKETS 16

struct xnf_gen_cfg {
	__u8 hdr[XNF_GEN_HDR_MAX]; /* headers of flow 0; lengths, checksums zero */
	__u32 cookie; /* 4 bytes of XDP metadata that mark generator frames;
		       * only the first 2 are checked (gen.bpf.c says why) */
	__u32 flows;  /* 1..XNF_GEN_FLOWS_MAX */
	__u32 nsizes; /* 1..XNF_GEN_SIZES_MAX */
	__u32 ip_sum; /* IPv4 header without length, checksum, source */
	__u32 l4_sum; /* pseudo-header and L4 header without source port,
			     * lengths, checksum and the source's last 32 bits */
	__u16 sport;  /* flow 0, host order */
	__u8 family;  /* 4 or 6 */
	__u8 proto;   /* IPPROTO_UDP or IPPROTO_TCP */
	__u16 sizes[XNF_GEN_SIZES_MAX]; /* frame sizes in sending order */
	__u32 mix;			/* XNF_GEN_MIX_* */
	__u32 pad;
};

/* Generator state (gen.bpf.c .bss), read and, between test runs, written
 * by user space through the mmap. With pace_ps set, each run of the
 * program sends the next frame only once its time has come (and before
 * limit and end_ns); runs before that send nothing (XDP_DROP of the live
 * frame, counted in idle): the thread polls in the kernel, and one call
 * covers many frames. */
struct xnf_gen_state {
	__u64 seq;	   /* next sequence number = frames written */
	__u64 bytes;	   /* sum of their sizes, with FCS */
	__u64 errors;	   /* frames that could not be written (dropped) */
	__u32 flow;	   /* next flow */
	__u32 size_idx;	   /* next entry of sizes[] */
	__u64 pace_t0;	   /* CLOCK_MONOTONIC ns when frame 0 is due */
	__u64 pace_ps;	   /* picoseconds between frames; 0: send every run */
	__u64 max_late_ns; /* paced: a frame later than this (the thread was
			     * preempted) moves the schedule instead of
			     * leaving in a catch-up burst */
	__u64 slips;	   /* paced: how often the schedule was moved */
	__u64 limit;	   /* paced: no frame with seq >= limit */
	__u64 end_ns;	   /* paced: nor at or after this time (0: none) */
	__u64 idle;	   /* paced runs that sent nothing */
	__u64 runs; /* paced: runs of the program (frames, idle, errors) */
	__u32 pace_batch; /* paced: runs per flush (the call's batch_size) */
	__u32 gap;	  /* paced: since the last frame, 1: a run waited,
			     * 2: a flush; 3: the next frame starts a burst */
	__u64 bursts;	 /* paced: frames that left apart from the one before */
	__u32 burst_len; /* paced: frames in the current burst */
	__u32 burst_max; /* paced: the most frames that left together or
			     * back to back */
	__u32 burst_cap; /* paced: a late frame that would make a burst
			     * longer waits a period instead (0: no cap) */
	__u32 pad;
	__u64 bad_cookie; /* runs passed: 4 bytes of metadata, wrong cookie */
	__u64 last_ns;	  /* when the last frame was written */
	/* paced: frames per flush to the device, 0..XNF_GEN_FLUSH_MAX (a
	 * flush every pace_batch runs): what the receiving ring gets at once.
	 * A flush is counted when the run after it starts; user space adds
	 * the last one (flush_frames) when the run ends. */
	__u64 flush_hist[XNF_GEN_FLUSH_MAX + 1];
	__u32 flush_frames; /* paced: frames in the flush under way */
	__u32 pad2;
	/* unpaced: the pauses by length (count, and their sum in ns) */
	__u64 pause_hist[XNF_GEN_PAUSE_BUCKETS];
	__u64 pause_ns[XNF_GEN_PAUSE_BUCKETS];
};

/* Sink (sink.bpf.c): per-CPU counters, a per-CPU latency histogram and a
 * global sequence state. Latency buckets are log-linear: 32 per power of
 * two (each at most 1/32 = 3.1% wide), exact below 64 ns, up to 2^34 ns
 * (17 s); larger values land in the last bucket. Bucket b covers
 * [xnf_lat_lower(b), xnf_lat_lower(b + 1)). */
#define XNF_LAT_SUB_BITS 5
#define XNF_LAT_SUB	 (1u << XNF_LAT_SUB_BITS)
#define XNF_LAT_MAX_BITS 34
#define XNF_LAT_BUCKETS \
	((XNF_LAT_MAX_BITS - XNF_LAT_SUB_BITS + 1) * XNF_LAT_SUB)

struct xnf_sink_stats {
	__u64 packets;	/* frames with a probe (dropped) */
	__u64 bytes;	/* their sizes, with the 4-byte FCS */
	__u64 no_probe; /* frames without a probe (passed to the kernel) */
	__u64 no_probe_bytes;
	__u64 bad_ip_csum; /* IPv4 header checksum wrong */
	__u64 bad_l4_csum; /* UDP/TCP checksum wrong (checked with csum) */
	__u64 ts_ahead; /* probe timestamp later than the arrival (counted as 0 ns) */
	__u64 lat_sum; /* ns */
	__u64 lat_min; /* ns, of this CPU's frames (when packets > 0) */
	__u64 lat_max;
	__u64 first_ns; /* arrival of the first and the last probe frame */
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
	__u64 block; /* seq / 64 */
	__u64 bits;  /* which of its 64 have arrived */
};

struct xnf_sink_seq {
	__u64 started; /* 1 once a probe frame arrived */
	__u64 min_seq;
	__u64 max_seq;
	__u64 reordered; /* arrived after a higher sequence number */
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
	__u32 check_l4; /* verify UDP/TCP checksums */
	__u32 pad;
};

#endif /* XNF_UAPI_TRAFFIC_H */
