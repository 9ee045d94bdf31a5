/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* ct_priv.h - lib/ct.c on the maps themselves, at a given time: what
 * xnf_ct_list(), xnf_ct_flush() and xnf_ct_stats_read() run on an
 * instance's tables, and the unit tests on maps of their own. */
#ifndef XNF_LIB_CT_PRIV_H
#define XNF_LIB_CT_PRIV_H

#include "ct.h"

/* CLOCK_MONOTONIC_COARSE in ns: the clock of xnf_ct_entry.expires. */
__u64 xnf_ct_now(void);
/* The canonical key (xnf_ct.h: the lower endpoint is a) of the tuple @t
 * (a = source, b = destination), into @k. */
void xnf_ct_key_canon(const struct xnf_ct_key *t, struct xnf_ct_key *k);
/* @ct_fd is an xnf_ct, @stats_fd an xnf_ct_stats; @now the time an
 * entry is alive before its expires. 0 or -errno. */
int xnf_ct_list_fd(int ct_fd, const struct xnf_ct_filter *f, __u64 now,
		   struct xnf_ct_conn **out, __u32 *n);
int xnf_ct_flush_fd(int ct_fd, int stats_fd, const struct xnf_ct_filter *f,
		    __u64 now, __u64 *flushed);
int xnf_ct_stats_fd(int ct_fd, int stats_fd, __u64 now, struct xnf_ct_stats *st);

#endif /* XNF_LIB_CT_PRIV_H */
