/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * trace.h - the packet trace as a program uses it (lib/trace.c): arm one
 * trace on the instance (xnf_trace_cfg[0]), read its records from the
 * ring buffer (xnf_trace_rb) as packets run through the chain, end it.
 * The layout (one record per packet, one step per NF) is
 * include/uapi/xnf_trace.h's; docs/tracing.md says what a trace shows.
 *
 * One trace is armed at a time per instance. Its bounds (a count of
 * packets, a deadline: the timeout, or a lease the running tracer
 * renews) are kept by the datapath itself, so a tracer that dies leaves
 * nothing running once its deadline passes; its pid is in the armed
 * entry, so the next tracer takes over the trace of a dead one.
 */
#ifndef XNF_TRACE_H
#define XNF_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xnf.h"

/* `xnf trace` without a bound: 10 packets or 60 seconds, whichever
 * comes first. */
#define XNF_TRACE_COUNT	    10
#define XNF_TRACE_TIMEOUT_S 60

struct xnf_trace_opts {
	struct xnf_fw_rule match; /* flags: which fields (ct state refused:
				   * it is not known at the entry); action
				   * and prio are not used */
	__u64 max_packets;	  /* 0: none */
	__u32 timeout_s;	  /* 0: none; at least one bound is required */
	const char *cmd;	  /* the command, as the change log names it
				   * (NULL: "trace") */
	__u32 lease_ms;		  /* without a timeout: 0, XNF_TRACE_LEASE_MS */
};

/* A trace without a timeout still has a deadline in the datapath: a
 * lease that xnf_trace_poll() renews while the tracer runs, so that a
 * killed tracer's trace ends within it rather than at a count that may
 * never come. The caller polls at least twice per lease. */
#define XNF_TRACE_LEASE_MS 10000

/* Why a trace ended (xnf_trace_why). */
enum xnf_trace_end {
	XNF_TRACE_RUNNING = 0,
	XNF_TRACE_COUNT_REACHED, /* max_packets taken */
	XNF_TRACE_TIMEOUT,	 /* the deadline passed */
	XNF_TRACE_GONE,		 /* disarmed by someone else (xnf_trace_cfg
				  * no longer holds it) */
};

struct xnf_trace; /* opaque: the armed trace and its ring buffer */

/*
 * Arms the trace of @o on @dp, opened for writing (its lock held: it is
 * released by nothing here; a long-running caller gives it up itself,
 * xnf_dp_lock, and xnf_trace_stop takes it again). -EINVAL for a match
 * or bounds that cannot be traced, -EBUSY when another live tracer's
 * trace is armed and not over (its pid alive, deadline not passed, count
 * not reached); the trace of a dead tracer, or one over, is taken over.
 * The start is in the change log. @err says what failed and what to do.
 */
int xnf_trace_start(struct xnf_dp *dp, const struct xnf_trace_opts *o,
		    struct xnf_trace **out, char *err, size_t errlen);
/* The trace's id (never 0: the number of its start in the change log). */
__u32 xnf_trace_id(const struct xnf_trace *t);
/* Calls @cb for each record of this trace (records of another id are
 * skipped) that arrives within @timeout_ms; returns the number
 * delivered, or -errno (a negative return of @cb stops it and is
 * returned); 0 at end. Never more than max_packets in all. */
int xnf_trace_poll(struct xnf_trace *t, int timeout_ms,
		   int (*cb)(const struct xnf_trace_rec *r, void *ctx),
		   void *ctx);
/* True once the trace is over and its records were drained: the
 * xnf_trace_poll() that found a bound reached (the datapath disarmed it,
 * the records delivered reached max_packets, the deadline passed) or the
 * trace disarmed by another, delivered what was still on its way. */
bool xnf_trace_ended(struct xnf_trace *t);
/* Why it ended, XNF_TRACE_RUNNING while it did not. */
enum xnf_trace_end xnf_trace_why(struct xnf_trace *t);
/* Disarms (when the armed trace is still this one), records the end in
 * the change log (taking the instance's lock) and frees; the records it
 * delivered and those the ring buffer lost (xnf_trace_stats.lost since
 * the start) out (may be NULL). 0 or -errno (it is freed anyway). */
int xnf_trace_stop(struct xnf_trace *t, __u64 *traced, __u64 *lost);
/* The armed trace, if any (cfg->id 0: none), for `xnf status`. */
int xnf_trace_read(struct xnf_dp *dp, struct xnf_trace_cfg *cfg);
/* Whether @cfg's trace is live: armed, its tracer alive, its deadline not
 * passed, its count not reached. */
bool xnf_trace_live(const struct xnf_trace_cfg *cfg);
/* ns until @cfg's deadline (0: passed or none). */
__u64 xnf_trace_left_ns(const struct xnf_trace_cfg *cfg);
/* Records sent and lost since the instance was made, summed over CPUs. */
int xnf_trace_stats_read(struct xnf_dp *dp, struct xnf_trace_stats *st);

#endif /* XNF_TRACE_H */
