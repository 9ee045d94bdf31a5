/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* priv.h - what the files of libxnf share and its users do not see. */
#ifndef XNF_LIB_PRIV_H
#define XNF_LIB_PRIV_H

#include <stddef.h>

/* Writes the message of a failure into @err (when given) and returns
 * @ret: the transactions' way to say what failed and what to do. */
int xnf_errf(char *err, size_t len, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* XNF_LIB_PRIV_H */
