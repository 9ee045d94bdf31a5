/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_worker.h - the AF_XDP workers' counters.
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
#ifndef XNF_UAPI_WORKER_H
#define XNF_UAPI_WORKER_H

#include "xnf_dp.h"

/*
 * AF_XDP workers (userspace/worker.c): one entry of xnf_workers per queue,
 * an mmapable array pinned as <root>/dev/<DEV>/xnf_workers (declared with
 * BTF in worker.bpf.c). Each worker thread writes only its own entry,
 * through the mmap, with plain stores: readers (`xnf stats`, `xnf status`,
 * bpftool) see each field whole but the fields of an entry not as one
 * snapshot.
 */
#define XNF_WORKER_MAX	   64  /* queues with a worker, per device */
#define XNF_XSK_BATCH_MAX  512 /* descriptors per ring read */
#define XNF_WORKER_NF_NAME 32

enum xnf_worker_state {
	XNF_W_NONE = 0,
	XNF_W_STARTING,
	XNF_W_RUNNING,
	XNF_W_STOPPED, /* exited cleanly */
};
XNF_ENUM_U32(xnf_worker_state);

enum xnf_xsk_mode {
	XNF_XSK_MODE_NONE = 0,
	XNF_XSK_MODE_COPY,
	XNF_XSK_MODE_ZEROCOPY,
};
XNF_ENUM_U32(xnf_xsk_mode);

/* Why a worker dropped a frame (the NF's own drops are by enum xnf_reason
 * in nf_drop[]). */
enum xnf_wdrop {
	XNF_WD_NF = 0, /* the NF said drop (see nf_drop[]) */
	XNF_WD_TO_KERNEL, /* the NF said pass: AF_XDP cannot hand a frame to the stack */
	XNF_WD_NO_PORT, /* egress device has no socket of this worker */
	XNF_WD_TX_FULL, /* TX ring full, frame recycled */
	__XNF_WD_MAX
};

/* Where a UMEM frame is (userspace/frames.h): every frame is in exactly one
 * place, at every moment. */
enum xnf_frame_place {
	XNF_FP_FREE = 0, /* the worker's free list */
	XNF_FP_FILL, /* given to the kernel: fill ring, or RX ring not yet read */
	XNF_FP_NF,   /* read from RX, in the NF's vector */
	XNF_FP_TX, /* given to the kernel: TX ring, or completion not yet read */
	__XNF_FP_MAX
};

struct xnf_wbatch {
	__u64 batches; /* RX reads that returned this many descriptors */
	__u64 ns;      /* sum of their service times (parse, NF, TX) */
	__u64 ns_sq;   /* sum of squares, for the variance */
	__u64 tx_ns;   /* of ns, the time in transmit and completions: the
			* sendto() kicks, which in copy mode run the egress
			* device's work on this CPU */
};

/* The worker's current run of empty reads: those since its last packet.
 * A snapshot less this is the counters as they were at that packet, which
 * is where a measurement of traffic that has stopped ends (the worker
 * reads an empty ring 64 times, then sleeps until the next packet). */
struct xnf_widle {
	__u64 reads;	/* empty reads since the last packet */
	__u64 ns;	/* their time without the sleeps (by_size[0].ns) */
	__u64 ns_sq;	/* sum of squares, as by_size[0].ns_sq */
	__u64 sleeps;	/* of them, the reads that slept */
	__u64 sleep_ns; /* time in those sleeps */
};

/* Busy-poll mode (docs/workers.md "Busy polling"): the socket options as
 * getsockopt() reads them back, the device's NAPI settings while the worker
 * runs, and the device's own values from before the first busy-poll worker
 * of the device changed them. Those survive a killed worker in this
 * pinned map: the next worker to start or stop on the device restores
 * them once no live worker holds them (userspace/napi.c). */
struct xnf_wbusy_poll {
	__u32 prefer;	/* SO_PREFER_BUSY_POLL */
	__u32 usecs;	/* SO_BUSY_POLL */
	__u32 budget;	/* SO_BUSY_POLL_BUDGET */
	__u32 defer;	/* the device's napi_defer_hard_irqs */
	__u64 flush_ns; /* the device's gro_flush_timeout */
	__u32 saved;	/* 1: old_* are the device's values to restore */
	__u32 old_defer;
	__u64 old_flush_ns;
};

struct xnf_worker_stats {
	enum xnf_worker_state state;
	__u32 pid;
	__u32 tid;
	__u32 cpu;  /* pinned to */
	__s32 node; /* UMEM on this NUMA node, -1: none */
	enum xnf_xsk_mode mode;
	__u32 batch;  /* descriptors per read */
	__u32 ring;   /* ring size */
	__u32 frames; /* UMEM frames */
	__u32 frame_size;
	__u32 busy_poll;	     /* SO_PREFER_BUSY_POLL in use */
	__u32 need_wakeup;	     /* XDP_USE_NEED_WAKEUP in use */
	__u8 nf[XNF_WORKER_NF_NAME]; /* the NF chain, "l3fwd" */
	__u32 reset_req;  /* bumped by `xnf stats reset`: the worker zeroes */
	__u32 reset_done; /* its counters itself and copies reset_req here */
	__u64 started_ns; /* CLOCK_MONOTONIC */
	/* busy-poll mode, zero without it; before rx_packets: a reset of the
	 * counters keeps it */
	struct xnf_wbusy_poll bp;
	__u64 rx_packets, rx_bytes;
	__u64 tx_packets, tx_bytes;
	__u64 polls;	   /* RX reads */
	__u64 empty_polls; /* RX reads that returned nothing */
	__u64 busy_ns; /* time in reads that returned packets and their work */
	__u64 idle_ns; /* time in reads that returned nothing, and waiting */
	__u64 fill_short;   /* fill-ring refills that found no free frame */
	__u64 sleeps;	    /* poll() waits after IDLE_SPINS empty reads */
	__u64 sleep_ns;	    /* time in them (part of idle_ns) */
	__u64 wake_reads;   /* non-empty reads right after a sleep */
	__u64 wake_packets; /* packets those reads returned */
	__u64 drop[__XNF_WD_MAX];
	__u64 nf_drop[XNF_REASON_SLOTS]; /* by enum xnf_reason */
	struct xnf_widle idle_run;	 /* included in the counters above */
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

/* Map name (pinned at <root>/dev/<DEV>/<name>). */
#define XNF_MAP_WORKERS xnf_workers

#endif /* XNF_UAPI_WORKER_H */
