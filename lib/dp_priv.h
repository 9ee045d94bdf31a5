/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * dp_priv.h - an opened instance from the inside: the descriptors of its
 * shared tables and its lock. Private to libxnf: its own files (lib/,
 * through priv.h), the AF_XDP runtime linked into it (userspace/) and its
 * white-box unit tests (selftests/unit/). The CLI and the tools see
 * struct xnf_dp as opaque (include/xnf.h) and read the counters through
 * include/stats.h; none of them holds a map descriptor.
 */
#ifndef XNF_LIB_DP_PRIV_H
#define XNF_LIB_DP_PRIV_H

#include <stdbool.h>

#include "xnf.h"

/* The shared tables, pinned at <root>/tables/<name>; the names come from
 * include/uapi (XNF_MAP_*), so each is written once. */
/* clang-format off */
#define XNF_TABLES(X)							\
	X(CFG) X(SCRATCH) X(TX) X(BATCH) X(XMIT) X(POLL) X(RT4) X(RT6) X(RT4_B) X(RT6_B)	\
	X(RTSYNC) X(NH) X(NH_LIVE) X(NH_IDX) X(NHG) X(NHG_IDX) X(FDB) X(XCONNECT)				\
	X(FW_ACTIVE) X(FW_HDR) X(FW_RULES) X(FW_ORDER) X(FW_CLASS)	\
	X(FW_SRC4) X(FW_DST4) X(FW_SRC6) X(FW_DST6) X(FW_PROTO)		\
	X(FW_SPORT) X(FW_DPORT) X(FW_HITS) X(CHANGES) X(FCACHE)		\
	X(CT) X(CT_CFG) X(CT_STATS) X(CT_PENDING) X(NAT_RULES) X(NAT_HDR)	\
	X(TRACE_CFG) X(TRACE_BUF) X(TRACE_RB) X(TRACE_STATS)		\
	X(LOG) X(LOG_SEQ) X(LOG_LIMIT) X(LOG_STATS)
/* clang-format on */

#define XNF_TABLE_ENUM_(t) XNF_T_##t,
enum xnf_table { XNF_TABLES(XNF_TABLE_ENUM_) __XNF_T_MAX };
#undef XNF_TABLE_ENUM_
extern const char *const xnf_table_names[__XNF_T_MAX];

/* What xnf_open() and xnf_dp_open() give (opaque to the users of
 * include/xnf.h: xnf_dp_root() and xnf_dp_reader() say what they need). */
struct xnf_dp {
	char root[XNF_ROOT_MAX]; /* pin root, e.g. /sys/fs/bpf/xnf */
	int fd[__XNF_T_MAX];	 /* the shared tables, -1 until first used:
				  * read them with xnf_table_fd() */
	int lock_fd;		 /* the root, flock()ed by xnf_open */
	int dir_fd;		 /* the root, as xnf_root_open() found it */
	bool created;  /* this open made the tables, unwritten since */
	bool reader;   /* opened with XNF_OPEN_READ: no lock held */
	bool creating; /* the tables are being made (xnf_dp_open) */
	struct xnf_rt_batch *rt_batch; /* a route batch is open (routes.c) */
	char (*released)[16];	       /* devices whose killed attach or detach
				  * this open's repair completed */
	int n_released;
};

/* The descriptor of the shared table @t, opened from its pin the first
 * time it is asked for (an instance opens its tables as it uses them); -1
 * with errno, and a warning, when the pin cannot be opened (but for a
 * permission, which xnf_dp_open says: it opens xnf_cfg first). */
int xnf_table_fd(struct xnf_dp *dp, enum xnf_table t);

/* The instance at @root is there, but errno @e (EACCES, EPERM: a user
 * who may not read root's pins and tables) stops its opening: -@e, with
 * that in @err, and never "no instance". */
int xnf_dp_denied(const char *root, int e, char *err, size_t errlen);

/* The fd of the copy of the route table of @family that packets read
 * (routes.c). */
int xnf_route_table_fd(struct xnf_dp *dp, int family);

/* The packet log's buckets (pktlog.c): xnf_log_limit of every rule slot
 * as @rules[XNF_FW_MAX_RULES] (a copy of xnf_fw_rules; slots not in use
 * do not log) asks, of every reason as @cfg asks; only entries whose
 * setting changed are written, full. With a message in @err. */
int xnf_log_rules_write(struct xnf_dp *dp, const struct xnf_fw_rule *rules,
			char *err, size_t errlen);
int xnf_log_reasons_write(struct xnf_dp *dp, const struct xnf_config *cfg);

#endif /* XNF_LIB_DP_PRIV_H */
