/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stats.h - one reading of every counter of an instance (cmd_stats.c), and
 * the ways of printing it that are not `xnf stats`'s own tables: the
 * Prometheus text format of `xnf stats -f prometheus` and `xnf exporter`
 * (prom.c), one code path for both.
 */
#ifndef XNF_CLI_STATS_H
#define XNF_CLI_STATS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <linux/types.h>

#include "xnf.h"
#include "worker.h"

/* An AF_XDP worker that ever ran on a queue of the interface. */
struct stats_worker {
	__u32 queue;
	bool alive; /* its process still runs (xnf_worker_alive) */
	struct xnf_worker_stats w;
};

/* One interface at one instant. */
struct dev_sample {
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
	struct stats_worker *workers;	  /* by queue */
	int nworkers;
};

/* One firewall rule in use, with its hits summed over CPUs. */
struct fw_row {
	__u32 slot;
	struct xnf_fw_rule rule;
	struct xnf_fw_hit hit;
};

struct sample {
	int ncpus;
	struct dev_sample *devs;
	int ndevs;
	struct fw_row *fw; /* in priority order */
	int nfw;
	__u32 fw_default; /* enum xnf_fw_action of the active rule set */
	double mono;	  /* CLOCK_MONOTONIC, seconds */
	struct timespec wall;
};

/* Reads the interface @dev (NULL: every attached one) and the firewall's
 * hit counters of @dp into @s, taking no lock. 0, or -1 after an error
 * message (cli_err) for each part that could not be read; what could be
 * read is in @s, which stats_sample_free() frees in both cases. */
int stats_sample_read(struct xnf_dp *dp, const char *dev, struct sample *s);
void stats_sample_free(struct sample *s);

/* The Prometheus text exposition format (version 0.0.4, which
 * OpenMetrics scrapers read too) of @s; @s NULL when no instance could be
 * read: then only xnf_up 0. 0, or -errno when @f could not be written. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
int prom_write(FILE *f, const struct sample *s);

/* Names of a worker's drop reasons (enum xnf_wdrop) and of the places of
 * its frames (enum xnf_frame_place), as `xnf stats` prints them
 * (cmd_worker.c). */
const char *cli_wdrop_name(unsigned int i);
const char *cli_place_name(unsigned int i);

/* `xnf exporter` (cmd_exporter.c). */
int do_exporter(int argc, char **argv);

#endif /* XNF_CLI_STATS_H */
