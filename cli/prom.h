/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * prom.h - a reading of the counters (include/stats.h, lib/stats.c) as
 * the commands show it, other than `xnf stats`'s own tables: the
 * Prometheus text format of `xnf stats -f prometheus` and `xnf exporter`
 * (prom.c), one code path for both; and the AF_XDP workers' part of
 * `xnf stats` and `xnf status` (cmd_worker.c).
 */
#ifndef XNF_CLI_PROM_H
#define XNF_CLI_PROM_H

#include <stdbool.h>
#include <stdio.h>

#include "xnf.h"
#include "stats.h"
#include "ct.h"

/* xnf_sample_read() for `xnf stats` and `xnf exporter`: 0, or -1 after an
 * error message (cli_err) naming what could not be read; what could be
 * read is in @s either way, which xnf_sample_free() frees. */
int stats_sample_read(struct xnf_dp *dp, const char *dev, struct xnf_sample *s);

/* xnf_ct_stats_read() for the same: 0, or -1 after an error message. */
int stats_ct_read(struct xnf_dp *dp, struct xnf_ct_stats *ct);

/* The Prometheus text exposition format (version 0.0.4, which
 * OpenMetrics scrapers read too) of @s and of the connection table's @ct
 * (NULL: it could not be read, no xnf_ct_* lines); @s NULL when no
 * instance could be read: then only xnf_up 0. 0, or -errno when @f could
 * not be written. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
int prom_write(FILE *f, const struct xnf_sample *s,
	       const struct xnf_ct_stats *ct);

/* xnf_trace_packets_total and xnf_trace_lost_events_total of @dp's
 * trace (nothing when it cannot be read): 0, or -errno when @f could not
 * be written. */
int prom_write_trace(FILE *f, struct xnf_dp *dp);

/* Names of a worker's drop reasons (enum xnf_wdrop) and of the places of
 * its frames (enum xnf_frame_place), as `xnf stats` prints them
 * (cmd_worker.c). */
const char *cli_wdrop_name(unsigned int i);
const char *cli_place_name(unsigned int i);

/* The workers @w[@n] of a device, as `xnf stats` (all they counted) and,
 * with @brief, `xnf status` (who and where) show them: a "workers" array
 * in JSON, nothing at all in text without one. */
void cli_workers_print(const struct xnf_worker_entry *w, int n, bool brief);

/* `xnf exporter` (cmd_exporter.c). */
int do_exporter(int argc, char **argv);

#endif /* XNF_CLI_PROM_H */
