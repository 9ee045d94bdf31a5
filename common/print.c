// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* One print path for text and JSON; see print.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "print.h"

static bool json_mode;

void print_set_json(bool json)
{
	json_mode = json;
}

bool print_json(void)
{
	return json_mode;
}

/* Whether @t is printed in the current mode as JSON (1), text (0), or not
 * at all (-1). */
static int mode(enum print_type t)
{
	if (json_mode)
		return t & PRINT_JSON ? 1 : -1;
	return t & PRINT_FP ? 0 : -1;
}

void print_string(enum print_type t, const char *key, const char *fmt,
		  const char *val)
{
	switch (mode(t)) {
	case 1:
		jw_string(key, val);
		break;
	case 0:
		printf(fmt, val ? val : "");
		break;
	}
}

void print_uint(enum print_type t, const char *key, const char *fmt, __u64 val)
{
	switch (mode(t)) {
	case 1:
		jw_uint(key, val);
		break;
	case 0:
		printf(fmt, (unsigned long long)val);
		break;
	}
}

void print_int(enum print_type t, const char *key, const char *fmt, long long val)
{
	switch (mode(t)) {
	case 1:
		jw_int(key, val);
		break;
	case 0:
		printf(fmt, val);
		break;
	}
}

void print_float(enum print_type t, const char *key, const char *fmt, double val)
{
	switch (mode(t)) {
	case 1:
		jw_float(key, val);
		break;
	case 0:
		printf(fmt, val);
		break;
	}
}

void print_bool(enum print_type t, const char *key, const char *fmt, bool val)
{
	switch (mode(t)) {
	case 1:
		jw_bool(key, val);
		break;
	case 0:
		printf(fmt, val ? "true" : "false");
		break;
	}
}

void print_null(enum print_type t, const char *key, const char *text)
{
	switch (mode(t)) {
	case 1:
		jw_null(key);
		break;
	case 0:
		fputs(text, stdout);
		break;
	}
}

void print_text(const char *fmt, ...)
{
	va_list ap;

	if (json_mode)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

void print_nl(void)
{
	if (!json_mode)
		putchar('\n');
}

/* Every document names its schema: a value opened outside one is a
 * command printing JSON that docs/json.md does not describe. */
static void check_in_doc(void)
{
	if (!jw_nesting())
		fputs("xnf: bug: a JSON document without a schema "
		      "(docs/json.md)\n",
		      stderr);
}

void open_json_doc(const char *schema)
{
	if (!json_mode)
		return;
	jw_object(NULL);
	jw_string("schema", schema);
}

void open_json_object(const char *key)
{
	if (!json_mode)
		return;
	check_in_doc();
	jw_object(key);
}

void close_json_object(void)
{
	if (json_mode)
		jw_end_object();
}

void open_json_array(const char *key)
{
	if (!json_mode)
		return;
	check_in_doc();
	jw_array(key);
}

void close_json_array(void)
{
	if (json_mode)
		jw_end_array();
}

/* The code point of the UTF-8 sequence at @s, its length in *@n; -1 when
 * it is none (cut, overlong, a surrogate, above U+10FFFF). */
static long utf8_decode(const unsigned char *s, int *n)
{
	long cp;
	int i;

	*n = *s >= 0xc2 && *s < 0xe0  ? 2 :
	     *s >= 0xe0 && *s < 0xf0  ? 3 :
	     *s >= 0xf0 && *s <= 0xf4 ? 4 :
					0;
	if (!*n)
		return -1;
	cp = *s & (0x7f >> *n);
	for (i = 1; i < *n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((*n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (*n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return -1;
	return cp;
}

/* What prints as nothing or as a blank: the C1 controls, Unicode's
 * separators (Zs, Zl, Zp) and its Default_Ignorable_Code_Point set (zero
 * widths, direction marks and overrides, variation selectors, fillers,
 * tags). "eth0" and "eth0" + U+200B look alike, unless it is escaped. */
static bool invisible(long cp)
{
	static const struct {
		long lo, hi;
	} r[] = {
		{ 0x80, 0xa0 },	      { 0xad, 0xad },
		{ 0x34f, 0x34f },     { 0x61c, 0x61c },
		{ 0x115f, 0x1160 },   { 0x1680, 0x1680 },
		{ 0x17b4, 0x17b5 },   { 0x180b, 0x180f },
		{ 0x2000, 0x200f },   { 0x2028, 0x202f },
		{ 0x205f, 0x206f },   { 0x3000, 0x3000 },
		{ 0x3164, 0x3164 },   { 0xfe00, 0xfe0f },
		{ 0xfeff, 0xfeff },   { 0xffa0, 0xffa0 },
		{ 0xfff0, 0xfff8 },   { 0x1bca0, 0x1bca3 },
		{ 0x1d173, 0x1d17a }, { 0xe0000, 0xe0fff },
	};
	size_t i;

	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (cp >= r[i].lo && cp <= r[i].hi)
			return true;
	return false;
}

/* @msg with control characters, bytes that are not UTF-8 and characters
 * that print as nothing (invisible) written as \n, \t, \xNN or \uNNNN
 * (\UNNNNNNNN): an error is one line, valid JSON, and shows whatever the
 * operator typed into the name it quotes. */
static char *one_line(const char *msg)
{
	const unsigned char *s = (const unsigned char *)msg;
	char *out = malloc(4 * strlen(msg) + 1), *o = out;
	long cp;
	int n;

	if (!out)
		return NULL;
	while (*s) {
		if (*s >= 0x80 && (cp = utf8_decode(s, &n)) >= 0) {
			/* Never 4 bytes out for each in: \u200b for 3. */
			if (invisible(cp)) {
				o += sprintf(o,
					     cp > 0xffff ? "\\U%08lx" : "\\u%04lx",
					     cp);
			} else {
				memcpy(o, s, n);
				o += n;
			}
			s += n;
		} else if (*s == '\n' || *s == '\t') {
			*o++ = '\\';
			*o++ = *s++ == '\n' ? 'n' : 't';
		} else if (*s < 0x20 || *s >= 0x7f) {
			o += sprintf(o, "\\x%02x", *s++);
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

/* @fmt formatted as one line (one_line), or NULL. */
static char *format_line(const char *fmt, va_list ap)
{
	char *msg = NULL, *line = NULL;

	if (vasprintf(&msg, fmt, ap) >= 0)
		line = one_line(msg);
	free(msg);
	return line;
}

void print_verr(const char *fmt, va_list ap)
{
	char *line = format_line(fmt, ap);
	const char *msg = line ?: "out of memory formatting an error";

	if (!json_mode) {
		fprintf(stderr, "Error: %s\n", msg);
	} else {
		jw_close_all();
		open_json_doc("xnf/error/1");
		jw_string("error", msg);
		jw_end_object();
		fflush(stdout);
	}
	free(line);
}

void print_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_verr(fmt, ap);
	va_end(ap);
}

/* On stderr, beside a document that may be open on stdout (the lines of
 * xnf save), and as one line among those of other threads (the AF_XDP
 * workers'). */
void print_vwarn(const char *fmt, va_list ap)
{
	char *line = format_line(fmt, ap);
	const char *msg = line ?: "out of memory formatting a warning";

	flockfile(stderr);
	if (!json_mode) {
		fprintf(stderr, "Warning: %s\n", msg);
	} else {
		fputs("{\"schema\":\"xnf/warning/1\",\"warning\":", stderr);
		jw_quote(stderr, msg);
		fputs("}\n", stderr);
	}
	funlockfile(stderr);
	free(line);
}

void print_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_vwarn(fmt, ap);
	va_end(ap);
}
