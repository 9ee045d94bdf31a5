/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* priv.h - what the files of libxnf share and its users do not see. */
#ifndef XNF_LIB_PRIV_H
#define XNF_LIB_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "dp_priv.h"

/* A point of a transaction where a killed process leaves state the next
 * writer must complete or undo, named "transaction:step". A no-op (a weak
 * definition in attach.c); the unit tests define their own, which kills
 * the process at the step they name (selftests/unit/killed.c). */
void xnf_crash_point(const char *step);

/* The pin root @root (xnf_root_check() passed it), made with mode 0700
 * first when @create, as an O_PATH descriptor: walked from "/" one
 * directory at a time, through no symbolic link, each of them root's or
 * the caller's and writable by nobody else (or, above the root, sticky;
 * lib/paths.c says why). The fd, or -errno with the reason in @err
 * (-ENOENT: it does not exist). */
int xnf_root_open(const char *root, bool create, char *err, size_t errlen);
/* The directory @name in @dfd (the root, or a directory below it), made
 * with mode 0700 first when @create, opened and checked as the root is;
 * @path names it in @err. */
int xnf_dir_at(int dfd, const char *name, const char *path, bool create,
	       char *err, size_t errlen);

struct xnf_nhgroup;
/* xnf_nhg_get(), a new group's buckets starting from @seed's (NULL: none)
 * so that only the flows the change of members must move move. */
int xnf_nhg_get_seeded(struct xnf_dp *dp, const __u32 *ids, __u32 n,
		       const struct xnf_nhgroup *seed, __u32 *id);

/* The fields of entry @e that a route's value @v gives (type, origin,
 * its nexthop or group id, a kernel route's reason). */
void xnf_rt_entry_val(struct xnf_route_entry *e, const struct xnf_rt_val *v);

/* A route sync runs on @dp: it holds its lock (rtsync.c), which a killed
 * one no longer does, whatever its registered pid says. */
bool xnf_rtsync_runs(struct xnf_dp *dp);
/* Makes @ifindex an egress port (xnf_tx) if it is not one, with its
 * transmit counters (xnf_xmit, keyed by the caller's netns); *@added says
 * whether this call did, so that a failure later undoes exactly that
 * (xnf_port_drop). */
int xnf_port_make(struct xnf_dp *dp, __u32 ifindex, bool *added);
/* The port @ifindex and its transmit counters of the netns @netns. */
int xnf_port_drop(struct xnf_dp *dp, __u32 netns, __u32 ifindex);
/* Zeroes the transmit counters of @ifindex of @netns, if it has them. */
int xnf_xmit_reset(struct xnf_dp *dp, __u32 netns, __u32 ifindex);

#endif /* XNF_LIB_PRIV_H */
