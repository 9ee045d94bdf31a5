/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_place.h - placement: what attach changed on the host.
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
#ifndef XNF_UAPI_PLACE_H
#define XNF_UAPI_PLACE_H

#include "xnf_dp.h"

/* Placement (loader/placement.c): what `xnf attach ... queues N | cores
 * LIST|auto` changed on the host, so that detach and a failed attach can
 * put it back, `xnf plan` can report drift, and AF_XDP workers can find
 * their cores. No program reads these: they are pinned, with BTF, as
 * <root>/dev/<DEV>/xnf_place (one entry) and xnf_place_q (one per queue). */
#define XNF_PLACE_MAX_QUEUES 256
#define XNF_PLACE_CPU_WORDS  16 /* CPU masks cover CPUs 0..1023 */

enum xnf_place_flag {
	XNF_PLACE_CHANNELS = 1 << 0,  /* xnf changed the channel count */
	XNF_PLACE_THREADED = 1 << 1,  /* xnf turned threaded NAPI on */
	XNF_PLACE_IRQS = 1 << 2,      /* xnf set some queue IRQ's affinity */
	XNF_PLACE_NAPI = 1 << 3,      /* xnf pinned napi threads */
	XNF_PLACE_REQ_CORES = 1 << 4, /* asked for: cores LIST (req_cores) */
};

struct xnf_place_info {
	__u32 ifindex;
	__u32 flags;   /* enum xnf_place_flag */
	__u32 nqueues; /* queues placed: entries 0..nqueues-1 of xnf_place_q */
	__s32 node;    /* NUMA node of the device, -1: none */
	__u32 prev_combined, prev_rx, prev_tx, prev_other; /* channels before */
	__u32 set_combined, set_rx, set_tx, set_other; /* channels xnf set */
	__u32 prev_threaded; /* /sys/class/net/DEV/threaded before attach */
	__u32 req_queues;    /* asked for: queues N (0: not asked) */
	__u64 req_cores[XNF_PLACE_CPU_WORDS]; /* asked for: cores LIST */
};

enum xnf_place_qflag {
	XNF_PLACE_Q_IRQ = 1 << 0,  /* xnf set the affinity of .irq */
	XNF_PLACE_Q_NAPI = 1 << 1, /* xnf pinned the napi thread .napi_id */
};

struct xnf_place_queue {
	__s32 irq;	  /* the queue's IRQ, -1: none (virtual device) */
	__u32 cpu;	  /* where its XDP work (IRQ, NAPI) runs */
	__u32 worker_cpu; /* where its userspace (AF_XDP) worker runs */
	__u32 flags;	  /* enum xnf_place_qflag */
	__u32 napi_id;	  /* 0: none */
	__u32 pad;
	__u64 prev_irq[XNF_PLACE_CPU_WORDS];  /* IRQ affinity before */
	__u64 prev_napi[XNF_PLACE_CPU_WORDS]; /* napi thread affinity before */
};

/* Map names (pinned at <root>/dev/<DEV>/<name>). */
#define XNF_MAP_PLACE	xnf_place
#define XNF_MAP_PLACE_Q xnf_place_q

#endif /* XNF_UAPI_PLACE_H */
