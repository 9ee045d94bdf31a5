/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * print.h - one print path for text and JSON, in the manner of iproute2's
 * json_print.h: a command prints each field once, with its JSON key and its
 * text format, and the mode chosen at start-up (`-j`) decides which is
 * written. Everything goes to stdout; errors (print_err) go to stderr as
 * "Error: ..." in text mode and to stdout as {"schema": "xnf/error/1",
 * "error": "..."} under -j, as bpftool does; warnings (print_warn) go to
 * stderr either way, so that stdout holds only the command's documents.
 *
 * Under -j every document is an object whose first member names its shape
 * (docs/json.md): open_json_doc("xnf/routes/1") opens it.
 *
 *	open_json_doc("xnf/thing/1");           JSON only: {"schema": ...
 *	print_string(PRINT_ANY, "dev", "dev %s ", name);
 *	print_uint(PRINT_ANY, "packets", "%llu packets\n", n);
 *	print_text("  (%u rules)\n", n);        text only
 *	print_nl();                             text only: "\n"
 *	open_json_object(NULL); ... close_json_object();  JSON only
 *
 * @fmt is a printf format for the one value (text mode); @key names it in
 * JSON (NULL inside an array). PRINT_FP prints only as text, PRINT_JSON
 * only as JSON, PRINT_ANY both ways. A value shown in text only for some
 * rows (non-zero counters, say) is printed with a type chosen per row:
 * PRINT_ANY where it shows, PRINT_JSON where it does not.
 */
#ifndef XNF_PRINT_H
#define XNF_PRINT_H

#include <stdarg.h>
#include <stdbool.h>
#include <linux/types.h>

enum print_type {
	PRINT_FP = 1,
	PRINT_JSON = 2,
	PRINT_ANY = PRINT_FP | PRINT_JSON,
};

void print_set_json(bool json);
bool print_json(void);

void print_string(enum print_type t, const char *key, const char *fmt,
		  const char *val);
void print_uint(enum print_type t, const char *key, const char *fmt, __u64 val);
void print_int(enum print_type t, const char *key, const char *fmt,
	       long long val);
void print_float(enum print_type t, const char *key, const char *fmt, double val);
void print_bool(enum print_type t, const char *key, const char *fmt, bool val);
/* JSON null under @key; @text (no format) in text mode. */
void print_null(enum print_type t, const char *key, const char *text);
/* Text mode only, printf-like. */
void print_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A newline in text mode, nothing in JSON (iproute2's print_nl): ends a
 * text line whose fields were printed with PRINT_ANY. */
void print_nl(void);

/* JSON structure; nothing is written in text mode. The document ends with
 * a newline when its outermost value closes. */
/* A document: an object whose first member is "schema": @schema, the name
 * and major version of its shape, "xnf/<name>/<major>" (docs/json.md and
 * docs/json/<name>.schema.json describe each). Ends with
 * close_json_object(). A document opened otherwise is a bug, reported on
 * stderr. */
void open_json_doc(const char *schema);
void open_json_object(const char *key);
void close_json_object(void);
void open_json_array(const char *key);
void close_json_array(void);

/* An error: "Error: <msg>\n" on stderr, or {"schema": "xnf/error/1",
 * "error": "<msg>"} on stdout under -j (an object or array still open is
 * closed first, so the output stays valid JSON). */
void print_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void print_verr(const char *fmt, va_list ap);
/* A warning: the command goes on. "Warning: <msg>\n" on stderr, or under
 * -j {"schema": "xnf/warning/1", "warning": "<msg>"} as one line on stderr,
 * outside the document on stdout. */
void print_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void print_vwarn(const char *fmt, va_list ap);

#endif /* XNF_PRINT_H */
