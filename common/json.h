/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * json.h - a small streaming JSON writer for `xnf -j`: objects and arrays
 * nest, commas and string escaping are handled, output goes to stdout.
 * Keys are given for members of objects and NULL for array elements.
 */
#ifndef XNF_JSON_H
#define XNF_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

void jw_object(const char *key);
void jw_end_object(void);
void jw_array(const char *key);
void jw_end_array(void);
void jw_string(const char *key, const char *val);
void jw_uint(const char *key, __u64 val);
void jw_int(const char *key, long long val);
void jw_float(const char *key, double val);
void jw_bool(const char *key, bool val);
void jw_null(const char *key);
/* Ends the document with a newline once the outermost value is closed. */
/* Closes every object and array still open (before an error document). */
void jw_close_all(void);
/* Objects and arrays open now: 0 between documents. */
int jw_nesting(void);
/* @s as a JSON string, quoted and escaped, on @f: for a document of one
 * line written outside the one on stdout (a warning on stderr). */
void jw_quote(FILE *f, const char *s);

#endif /* XNF_JSON_H */
