/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * napi.h - the device's NAPI settings of busy-poll mode (napi.c): set for
 * the workers that ask for it, recorded in their entries of xnf_workers,
 * restored when the last of them is gone, even a killed one.
 *
 * @ws is the device's xnf_workers array (XNF_WORKER_MAX entries), @ours
 * the queues (bit q: entry q) of the caller's workers, whose entries the
 * functions write; @root the sysfs root (placement.h: "" is this host).
 * The caller serializes them per device (the pin root's lock). Each
 * returns 0 or a negative errno with what failed and what to do in @err.
 */
#ifndef XNF_NAPI_H
#define XNF_NAPI_H

#include <stddef.h>
#include <linux/types.h>

#include "xnf_worker.h"

/* Writes back the values recorded by busy-poll workers when none of them
 * but ours lives any more (they were killed, or this is the last one
 * stopping), and forgets the record; else only forgets ours. */
int xnf_napi_release(const char *root, const char *dev,
		     struct xnf_worker_stats *ws, __u64 ours, char *err,
		     size_t errlen);

/* Sets the device's napi_defer_hard_irqs to @defer and gro_flush_timeout
 * to @flush_ns, recording in our entries the values to restore (those a
 * live worker recorded, else the device's current ones) and the values
 * read back. Nothing changed on failure. */
int xnf_napi_take(const char *root, const char *dev,
		  struct xnf_worker_stats *ws, __u64 ours, __u32 defer,
		  __u64 flush_ns, char *err, size_t errlen);

#endif /* XNF_NAPI_H */
