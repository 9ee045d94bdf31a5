/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * worker.h - the AF_XDP runtime: one thread per queue of a device whose XDP
 * chain ends in xsk, each with its own UMEM, pinned to its core, running a
 * chain of userspace NFs (unf.h) over vectors of up to `batch` frames and
 * transmitting on the egress devices through sockets that share its UMEM,
 * so a frame is never copied in user space.
 */
#ifndef XNF_WORKER_H
#define XNF_WORKER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>

#include "xnf_worker.h"

/* The enum-typed fields (XNF_ENUM_U32) sit where their __u32 did. */
_Static_assert(offsetof(struct xnf_worker_stats, mode) == 20 &&
		       offsetof(struct xnf_worker_stats, nf) == 48,
	       "xnf_worker_stats layout");

struct xnf_dp;

#define XNF_WORKER_EGRESS_MAX	 8
#define XNF_WORKER_RING_DEFAULT	 2048
#define XNF_WORKER_BATCH_DEFAULT 64
#define XNF_WORKER_FRAME_SIZE	 4096

/* Busy-poll mode's defaults: the device's NAPI settings are those
 * Documentation/networking/napi.rst gives for preferred busy polling;
 * SO_BUSY_POLL's is how long one recvfrom() may spin on the NAPI before
 * returning (docs/workers.md "Busy polling"). */
#define XNF_BP_USECS_DEFAULT	20
#define XNF_BP_DEFER_DEFAULT	2
#define XNF_BP_FLUSH_NS_DEFAULT 200000
#define XNF_BP_FLUSH_NS_MAX	2000000000 /* 2 s: a timer, not a switch */

enum xnf_zerocopy {
	XNF_ZC_AUTO = 0, /* zero-copy if the driver can, else copy */
	XNF_ZC_ON,	 /* zero-copy or fail */
	XNF_ZC_OFF,	 /* copy mode */
};

struct xnf_worker_opts {
	const char *pin_root;
	const char *sysfs_root; /* placement's root: "" = this host */
	char dev[IF_NAMESIZE];
	char nf[XNF_WORKER_NF_NAME]; /* "firewall,l3fwd" */
	const char *args;	     /* options of the NFs, or NULL */
	__u32 queues[XNF_WORKER_MAX];
	__u32 nqueues; /* 0: every RX queue of dev */
	__u32 batch;   /* 0: XNF_WORKER_BATCH_DEFAULT */
	__u32 ring;    /* 0: XNF_WORKER_RING_DEFAULT */
	__u32 frames;  /* per queue, 0: enough for the rings */
	enum xnf_zerocopy zerocopy;
	char egress[XNF_WORKER_EGRESS_MAX][IF_NAMESIZE]; /* [0] is the default */
	__u32 negress;	/* 0: transmit on dev */
	bool busy_poll; /* SO_PREFER_BUSY_POLL, and the settings below */
	struct xnf_worker_bp {
		__u32 usecs;	/* SO_BUSY_POLL, 0: XNF_BP_USECS_DEFAULT */
		__u32 budget;	/* SO_BUSY_POLL_BUDGET, 0: the batch */
		__u32 defer;	/* napi_defer_hard_irqs, 0: the default */
		__u32 flush_ns; /* gro_flush_timeout, 0: the default */
	} bp;
	bool spin; /* never sleep when idle */
	bool have_cores;
	int cores[XNF_WORKER_MAX]; /* per entry of queues[] */
	__u32 duration_s;	   /* 0: until stopped */
};

/* Where the worker of @queue runs and where its UMEM lives: @core if
 * >= 0; else what `xnf attach ... cores` recorded under @pin_root; else
 * a fresh plan of @dev read below @sysfs_root (xnf_plan_compute). @node
 * is -1 when the device has none. On failure @err says why. */
int xnf_worker_place(const char *pin_root, const char *sysfs_root,
		     const char *dev, __u32 queue, int core, int *cpu,
		     int *node, char *err, size_t errlen);

/* Runs the workers until *@stop becomes non-zero (a signal handler sets
 * it) or the duration ends. 0, or a negative errno with what failed in
 * @err: at the start (nothing ran then) or the first failure of a worker
 * thread, which stops them all. A warning while they run (a refresh of
 * the tables that failed and is retried) goes through xnf_log. On return
 * every socket, UMEM and thread is gone, and the workers' entries of
 * xnf_workers say XNF_W_STOPPED. */
int xnf_worker_run(struct xnf_dp *dp, const struct xnf_worker_opts *o,
		   volatile sig_atomic_t *stop, char *err, size_t errlen);

/* The xnf_workers map of @dev: created and pinned if needed. */
int xnf_workers_open(const char *pin_root, const char *dev, bool create);

/* Whether the worker behind an entry still runs (its pid is alive and was
 * started when the entry says). */
bool xnf_worker_alive(const struct xnf_worker_stats *w);

/* Writes back @dev's NAPI settings that busy-poll workers recorded and
 * none alive holds any more (they were killed): for `xnf detach`, which
 * removes the record with the map. 0 when there is nothing to restore. */
int xnf_workers_napi_restore(const char *pin_root, const char *sysfs_root,
			     const char *dev, char *err, size_t errlen);

/* Asks the live workers of @dev to zero their counters and waits until
 * they did, at most XNF_WORKERS_RESET_WAIT_MS (then -ETIMEDOUT); entries
 * of workers that are gone are zeroed here. 0 when @dev has no workers. */
#define XNF_WORKERS_RESET_WAIT_MS 10000
int xnf_workers_reset(const char *pin_root, const char *dev);

#endif /* XNF_WORKER_H */
