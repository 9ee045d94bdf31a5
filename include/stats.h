/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stats.h - libxnf's reader of an instance's counters (lib/stats.c): per
 * attached interface the chain's and each NF's rows, the reasons, the
 * missed tail calls, the flow cache, the NAPI batch sizes and what the
 * kernel did with the frames redirected to it, and its AF_XDP workers;
 * what the kernel did with the frames redirected to each egress port xnf
 * is not attached to; for the instance the hits of the firewall's rules. `xnf stats`, `xnf
 * exporter`, `xnf status`, `xnf plan`, `xnf worker` and bench-micro read
 * them here, so none of them holds a map.
 *
 * The readers take no lock and write nothing. Every counter is per CPU
 * (or per worker) and only ever incremented by its owner, so a reading is
 * a sum of values taken a few instructions apart: exact on a quiet
 * interface, a snapshot under load.
 */
#ifndef XNF_STATS_H
#define XNF_STATS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <net/if.h>
#include <linux/types.h>

#include "xnf.h"
#include "worker.h"

/* The entry of an AF_XDP worker that ever ran on a queue of a device. */
struct xnf_worker_entry {
	__u32 queue;
	bool alive; /* its process still runs (xnf_worker_alive) */
	struct xnf_worker_stats w;
};

/* One interface at one instant. */
struct xnf_dev_sample {
	char name[NAME_MAX + 1];
	struct xnf_dev_info info;
	struct xnf_stats sum;
	struct xnf_stats *cpu;		  /* [ncpus] */
	bool have_batch;		  /* xnf_batch has an entry for it */
	struct xnf_batch_hist batch;	  /* summed over CPUs */
	struct xnf_batch_hist *batch_cpu; /* [ncpus] */
	__u64 poll_timed, poll_ns;	  /* batch.timed, batch.ns: all sizes */
	bool have_xmit;			  /* xnf_xmit has an entry for it */
	struct xnf_xmit_counters xmit;	  /* summed over CPUs */
	struct xnf_worker_entry *workers; /* by queue */
	int nworkers;
};

/* An egress port of the caller's network namespace (a route, an FDB
 * entry, a cross-connect or an attach made it one): what the kernel did
 * with the frames xnf redirected to it. */
struct xnf_port_sample {
	char name[IF_NAMESIZE];
	__u32 ifindex;
	struct xnf_xmit_counters xmit; /* summed over CPUs */
};

/* One firewall rule in use, with its hits summed over CPUs. */
struct xnf_fw_row {
	__u32 slot;
	struct xnf_fw_rule rule;
	struct xnf_fw_hit hit;
	/* Its packet log (rule.log): records written, and matches its
	 * limit suppressed, summed over CPUs (xnf_log_stats[slot]). */
	struct xnf_log_counters log;
};

struct xnf_sample {
	int ncpus;
	struct xnf_dev_sample *devs; /* by ifindex */
	int ndevs;
	/* The egress ports xnf is not attached to (read without DEV), by
	 * ifindex: the attached ones are in devs. */
	struct xnf_port_sample *ports;
	int nports;
	struct xnf_fw_row *fw; /* in priority order */
	int nfw;
	__u32 fw_default; /* enum xnf_fw_action of the active rule set */
	double mono;	  /* CLOCK_MONOTONIC, seconds */
	struct timespec wall;
	/* The packets the default policy decided (no rule matched). */
	struct xnf_fw_hit fw_default_hit;
	/* The reasons whose drops and passes are logged (bit 1 << reason,
	 * xnf_config.log_reasons), and every reason's packet log counters
	 * (logged while sampled before are kept), summed over CPUs. */
	__u64 log_reasons;
	struct xnf_log_counters log_reason[XNF_REASON_SLOTS];
};

/* Reads the interface @dev (NULL: every attached one, and the egress
 * ports of the caller's namespace xnf is not attached to) and the
 * firewall's hit counters into @s. 0, or the first failure's -errno with
 * what could not be read in @err (every part that failed, "; " between
 * them): -ENOENT when xnf is not attached to @dev. What could be read is
 * in @s either way; xnf_sample_free() frees it. An interface detached
 * while it is read is left out without an error. */
int xnf_sample_read(struct xnf_dp *dp, const char *dev, struct xnf_sample *s,
		    char *err, size_t errlen);
void xnf_sample_free(struct xnf_sample *s);
/* Zeroes the counters of the interface of @d: its xnf_stats, its batch
 * histogram and its workers' (xnf_workers_reset). A packet or two
 * counted on another CPU meanwhile can be lost from the new totals:
 * per-CPU counters have no atomic reset. */
int xnf_dev_counters_reset(struct xnf_dp *dp, const struct xnf_dev_sample *d);

/* Zeroes the xmit counters of the egress port of @p. */
int xnf_port_counters_reset(struct xnf_dp *dp, const struct xnf_port_sample *p);
/* Every egress port of the caller's network namespace, attached or not,
 * with its xmit counters (one batch read of xnf_xmit), by ifindex, in a
 * new array *@out (free() it): their number, or -errno. A port made by
 * a writer of another namespace (an instance that namespaces share) is
 * read from there; one whose device is gone is left out. */
int xnf_ports_read(struct xnf_dp *dp, struct xnf_port_sample **out);

/* The chain attached to @dev (xnf_dev[0]): -ENOENT when there is none. */
int xnf_dev_info_read(struct xnf_dp *dp, const char *dev,
		      struct xnf_dev_info *info);
/* The counters of @dev (its pinned xnf_stats) summed into @sum, and per
 * CPU into @percpu[xnf_ncpus()] when it is not NULL: -ENOENT when xnf is
 * not attached to @dev. */
int xnf_dev_stats_read(struct xnf_dp *dp, const char *dev,
		       struct xnf_stats *sum, struct xnf_stats *percpu);
/* The entries of the workers of @dev's queues 0 .. @nqueues - 1 that ever
 * ran, by queue, in a new array *@out (free() it): their number, -ENOENT
 * when @dev never had a worker (no xnf_workers map), or another -errno.
 * An entry is read field by field, as the worker writes it
 * (xnf_worker.h). */
int xnf_workers_read(const char *pin_root, const char *dev, __u32 nqueues,
		     struct xnf_worker_entry **out);
/* The hits of the firewall rule in @slot (XNF_FW_HIT_DEFAULT: of the
 * default policy), summed over CPUs. */
int xnf_fw_hit_read(struct xnf_dp *dp, __u32 slot, struct xnf_fw_hit *sum);

#endif /* XNF_STATS_H */
