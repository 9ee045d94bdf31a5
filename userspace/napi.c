// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * napi.c - the device's NAPI settings of busy-poll mode (napi.h).
 *
 * Preferred busy polling (SO_PREFER_BUSY_POLL) only works with the
 * device's NAPI told to keep its interrupts masked while user space
 * polls: napi_defer_hard_irqs is how many NAPI polls that found nothing
 * may pass before the interrupt is re-armed, gro_flush_timeout the timer
 * (ns) that runs a NAPI poll if user space stops polling, so that packets
 * are not stranded (Documentation/networking/napi.rst, "Preferred busy
 * polling"). Both are per device, in /sys/class/net/DEV/, seen through a
 * sysfs of the device's network namespace (netdev_attr).
 *
 * They are device-wide and outlive the worker, so the values they had are
 * recorded in the workers' pinned entries (struct xnf_wbusy_poll), where a
 * killed worker leaves them for the next worker's start or stop.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xnf.h"
#include "worker.h"
#include "napi.h"

#include "place_priv.h"

#define DEFER_FILE "napi_defer_hard_irqs"
#define FLUSH_FILE "gro_flush_timeout"

static int napi_write(const char *root, const char *dev, __u32 defer,
		      __u64 flush_ns, char *err, size_t errlen)
{
	char val[32];
	int ret;

	snprintf(val, sizeof(val), "%u\n", defer);
	ret = netdev_attr(root, dev, DEFER_FILE, val, NULL);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot write %u to /sys/class/net/%s/%s: %s (needs CAP_NET_ADMIN in the device's network namespace)",
				defer, dev, DEFER_FILE, strerror(-ret));
	snprintf(val, sizeof(val), "%llu\n", (unsigned long long)flush_ns);
	ret = netdev_attr(root, dev, FLUSH_FILE, val, NULL);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot write %llu to /sys/class/net/%s/%s: %s (needs CAP_NET_ADMIN in the device's network namespace)",
				(unsigned long long)flush_ns, dev, FLUSH_FILE,
				strerror(-ret));
	return 0;
}

static int napi_read(const char *root, const char *dev, __u32 *defer,
		     __u64 *flush_ns, char *err, size_t errlen)
{
	int ret, d, f;

	ret = netdev_attr(root, dev, DEFER_FILE, NULL, &d);
	if (!ret)
		ret = netdev_attr(root, dev, FLUSH_FILE, NULL, &f);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot read the NAPI settings of %s (/sys/class/net/%s/%s, %s): %s",
				dev, dev, DEFER_FILE, FLUSH_FILE, strerror(-ret));
	if (d < 0 || f < 0)
		return xnf_errf(err, errlen, -EINVAL,
				"the NAPI settings of %s read back negative (%d, %d)",
				dev, d, f);
	*defer = d;
	*flush_ns = f;
	return 0;
}

/* The entry holding the record of a live worker other than ours, or -1. */
static int live_holder(const struct xnf_worker_stats *ws, __u64 ours)
{
	int q;

	for (q = 0; q < XNF_WORKER_MAX; q++)
		if (ws[q].bp.saved && !(ours & (1ULL << q)) &&
		    xnf_worker_alive(&ws[q]))
			return q;
	return -1;
}

int xnf_napi_release(const char *root, const char *dev,
		     struct xnf_worker_stats *ws, __u64 ours, char *err,
		     size_t errlen)
{
	int q, rec = -1, ret;

	if (live_holder(ws, ours) >= 0) {
		for (q = 0; q < XNF_WORKER_MAX; q++)
			if (ours & (1ULL << q))
				ws[q].bp.saved = 0;
		return 0;
	}
	for (q = 0; q < XNF_WORKER_MAX && rec < 0; q++)
		if (ws[q].bp.saved)
			rec = q;
	if (rec < 0)
		return 0;
	ret = napi_write(root, dev, ws[rec].bp.old_defer,
			 ws[rec].bp.old_flush_ns, err, errlen);
	/* Kept on failure: the next start or stop tries again. */
	if (ret)
		return ret;
	for (q = 0; q < XNF_WORKER_MAX; q++)
		ws[q].bp.saved = 0;
	return 0;
}

int xnf_napi_take(const char *root, const char *dev,
		  struct xnf_worker_stats *ws, __u64 ours, __u32 defer,
		  __u64 flush_ns, char *err, size_t errlen)
{
	__u32 old_defer, cur_defer;
	__u64 old_flush, cur_flush;
	int q, ret;

	q = live_holder(ws, ours);
	if (q >= 0) {
		old_defer = ws[q].bp.old_defer;
		old_flush = ws[q].bp.old_flush_ns;
	} else {
		ret = napi_read(root, dev, &old_defer, &old_flush, err, errlen);
		if (ret)
			return ret;
	}
	ret = napi_write(root, dev, defer, flush_ns, err, errlen);
	if (!ret)
		ret = napi_read(root, dev, &cur_defer, &cur_flush, err, errlen);
	if (ret) {
		/* Whatever the write changed goes back (to the live
		 * holder's settings, if any); @err keeps the first
		 * failure. */
		if (q >= 0)
			napi_write(root, dev, ws[q].bp.defer, ws[q].bp.flush_ns,
				   NULL, 0);
		else
			napi_write(root, dev, old_defer, old_flush, NULL, 0);
		return ret;
	}
	for (q = 0; q < XNF_WORKER_MAX; q++) {
		if (!(ours & (1ULL << q)))
			continue;
		ws[q].bp.defer = cur_defer;
		ws[q].bp.flush_ns = cur_flush;
		ws[q].bp.old_defer = old_defer;
		ws[q].bp.old_flush_ns = old_flush;
		ws[q].bp.saved = 1;
	}
	return 0;
}
