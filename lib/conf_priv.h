/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* conf_priv.h - what conf.c (candidates, edits) and commit.c (the
 * difference, the commit, its journal) share. */
#ifndef XNF_LIB_CONF_PRIV_H
#define XNF_LIB_CONF_PRIV_H

#include "conf.h"

typedef int (*conf_cmp_fn)(const void *, const void *);

/* Index of the element of @base[@n] equal to @key by @cmp, or where it
 * would go; *@found says which. */
__u32 conf_find(const void *base, __u32 n, size_t size, const void *key,
		conf_cmp_fn cmp, bool *found);

/* The orders of the arrays of a configuration. */
int conf_att_cmp(const void *a, const void *b);
int conf_route_cmp(const void *a, const void *b);
int conf_fdb_cmp(const void *a, const void *b);
int conf_xc_cmp(const void *a, const void *b);

struct xnf_conf_attach *conf_att_find(const struct xnf_conf *c, const char *dev);
struct xnf_conf_route *conf_route_find(const struct xnf_conf *c, int family,
				       const void *addr, __u32 plen);
struct xnf_fdb_ent *conf_fdb_find(const struct xnf_conf *c, const __u8 mac[6]);
struct xnf_xconnect_ent *conf_xc_find(const struct xnf_conf *c, __u32 in);

/* Elements in (a copy, in place of one with the same key) and out,
 * without checks. */
int conf_put_att(struct xnf_conf *c, const struct xnf_conf_attach *a);
void conf_drop_att(struct xnf_conf *c, const char *dev);
int conf_put_route(struct xnf_conf *c, const struct xnf_conf_route *r);
void conf_drop_route(struct xnf_conf *c, const struct xnf_route_entry *e);
int conf_put_fdb(struct xnf_conf *c, const struct xnf_fdb_ent *e);
void conf_drop_fdb(struct xnf_conf *c, const __u8 mac[6]);
int conf_put_xc(struct xnf_conf *c, const struct xnf_xconnect_ent *e);
void conf_drop_xc(struct xnf_conf *c, __u32 in);
/* Every attachment, route, FDB entry and cross-connect of @src. */
int conf_put_all(struct xnf_conf *c, const struct xnf_conf *src);

/* An empty configuration: whole (fw an empty set), or a part of one (fw
 * NULL, cfg not known); cfg holds the defaults. */
int conf_alloc(bool whole, struct xnf_conf **out);

/* A copy of @src, whole (@whole) or a candidate's part. */
int conf_copy(const struct xnf_conf *src, bool whole, struct xnf_conf **out);

/* What runs on @dev in the network namespace of inode @netns: -ENOENT
 * when xnf is not attached to it there. */
int conf_read_att(struct xnf_dp *dp, const char *dev, __u32 netns,
		  struct xnf_conf_attach *a);

/* A candidate over what runs: the element read from the instance into
 * c->base and @c, if it runs and is not known yet (conf.c). */
int conf_touch_cfg(struct xnf_conf *c, char *err, size_t errlen);
int conf_touch_fw(struct xnf_conf *c, char *err, size_t errlen);
int conf_touch_nat(struct xnf_conf *c, char *err, size_t errlen);
int conf_touch_att(struct xnf_conf *c, const char *dev, char *err, size_t errlen);
int conf_touch_all_att(struct xnf_conf *c, char *err, size_t errlen);
int conf_touch_route(struct xnf_conf *c, int family, const void *addr,
		     __u32 plen, char *err, size_t errlen);
int conf_touch_fdb(struct xnf_conf *c, const __u8 mac[6], char *err,
		   size_t errlen);
int conf_touch_xc(struct xnf_conf *c, __u32 in, char *err, size_t errlen);

/* What runs of @from's and @to's elements made what @from holds again,
 * reading what runs now (a commit that failed or was killed changed some
 * of it); a whole @from: everything (commit.c). */
int conf_undo(struct xnf_dp *dp, const struct xnf_conf *from,
	      const struct xnf_conf *to, bool whole, char *err, size_t errlen);

/* The journal of a commit (journal.c): <root>/CONF_JOURNAL_PIN, written
 * whole before the commit's first change and unpinned after its last. */
#define CONF_JOURNAL_PIN "commit"
void conf_journal_path(const struct xnf_dp *dp, char *buf, size_t len);
int conf_journal_write(struct xnf_dp *dp, const struct xnf_conf_diff *d,
		       bool whole, __u32 steps, const char *cmd);
void conf_journal_unpin(struct xnf_dp *dp);

/* How many keys xnf_conf_key() knows. */
int conf_cfg_keys(void);

#endif /* XNF_LIB_CONF_PRIV_H */
