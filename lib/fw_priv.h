/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fw_priv.h - what the firewall's compiler and table writer (fw_compile.c)
 * and its rule sets (fw_set.c) share inside libxnf.
 */
#ifndef XNF_FW_PRIV_H
#define XNF_FW_PRIV_H

#include "dp_priv.h"

/* "firewall: cannot <what> <root>/tables/<name>: <err>; check it with
 * ..." into @errbuf (may be NULL); returns @err. */
int fw_map_err(const struct xnf_dp *dp, enum xnf_table t, const char *what,
	       int err, char *errbuf, size_t errlen);
/* @count values at keys @base.. of the array @t, one batch; @keys is room
 * for @count keys. */
int fw_array_store(struct xnf_dp *dp, enum xnf_table t, __u32 base,
		   const void *values, size_t vsize, __u32 count, __u32 *keys,
		   char *errbuf, size_t errlen);
/* The compiled tables into generation @gen, header last. */
int fw_tables_write(struct xnf_dp *dp, __u32 gen, const struct xnf_fw_compiled *c,
		    __u32 serial, char *errbuf, size_t errlen);

#endif /* XNF_FW_PRIV_H */
