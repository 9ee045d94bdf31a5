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

void open_json_object(const char *key)
{
	if (json_mode)
		jw_object(key);
}

void close_json_object(void)
{
	if (json_mode)
		jw_end_object();
}

void open_json_array(const char *key)
{
	if (json_mode)
		jw_array(key);
}

void close_json_array(void)
{
	if (json_mode)
		jw_end_array();
}

/* Bytes of the UTF-8 sequence at @s, or 0 when it is not one. */
static int utf8_len(const unsigned char *s)
{
	int n = *s >= 0xc2 && *s < 0xe0	 ? 2 :
		*s >= 0xe0 && *s < 0xf0	 ? 3 :
		*s >= 0xf0 && *s <= 0xf4 ? 4 :
					   0;
	int i;

	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* @msg with control characters and bytes that are not UTF-8 written as
 * \n, \t or \xNN: an error is one line, and valid JSON, whatever the
 * operator typed into the name it quotes. */
static char *one_line(const char *msg)
{
	const unsigned char *s = (const unsigned char *)msg;
	char *out = malloc(4 * strlen(msg) + 1), *o = out;
	int n;

	if (!out)
		return NULL;
	while (*s) {
		if (*s >= 0x80 && (n = utf8_len(s))) {
			memcpy(o, s, n);
			o += n;
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

void print_verr(const char *fmt, va_list ap)
{
	char *msg = NULL, *line = NULL;

	if (vasprintf(&msg, fmt, ap) >= 0)
		line = one_line(msg);
	if (!json_mode) {
		fprintf(stderr, "Error: %s\n",
			line ?: "out of memory formatting an error");
	} else {
		jw_close_all();
		jw_object(NULL);
		jw_string("error", line ?: "out of memory formatting an error");
		jw_end_object();
		fflush(stdout);
	}
	free(line);
	free(msg);
}

void print_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_verr(fmt, ap);
	va_end(ap);
}
