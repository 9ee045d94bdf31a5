// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Streaming JSON writer; see json.h. */
#include <stdio.h>

#include "json.h"

#define JW_DEPTH 32

static bool jw_first[JW_DEPTH] = { true };
static int jw_depth;
/* What each open level is: true for an array. */
static bool jw_type[JW_DEPTH];

void jw_quote(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void jw_escape(const char *s)
{
	jw_quote(stdout, s);
}

static void jw_key(const char *key)
{
	if (!jw_first[jw_depth])
		putchar(',');
	jw_first[jw_depth] = false;
	if (key) {
		jw_escape(key);
		putchar(':');
	}
}

static void jw_open(const char *key, char c)
{
	jw_key(key);
	putchar(c);
	if (jw_depth < JW_DEPTH - 1) {
		jw_first[++jw_depth] = true;
		jw_type[jw_depth] = c == '[';
	}
}

static void jw_close(char c)
{
	putchar(c);
	if (jw_depth > 0)
		jw_depth--;
	if (!jw_depth) {
		putchar('\n');
		jw_first[0] = true;
	}
}

void jw_object(const char *key)
{
	jw_open(key, '{');
}
void jw_end_object(void)
{
	jw_close('}');
}
void jw_array(const char *key)
{
	jw_open(key, '[');
}
void jw_end_array(void)
{
	jw_close(']');
}

void jw_string(const char *key, const char *val)
{
	jw_key(key);
	jw_escape(val ? val : "");
}

void jw_uint(const char *key, __u64 val)
{
	jw_key(key);
	printf("%llu", (unsigned long long)val);
}

void jw_int(const char *key, long long val)
{
	jw_key(key);
	printf("%lld", val);
}

void jw_float(const char *key, double val)
{
	jw_key(key);
	printf("%.3f", val);
}

void jw_bool(const char *key, bool val)
{
	jw_key(key);
	fputs(val ? "true" : "false", stdout);
}

void jw_null(const char *key)
{
	jw_key(key);
	fputs("null", stdout);
}

int jw_nesting(void)
{
	return jw_depth;
}

void jw_close_all(void)
{
	while (jw_depth > 0)
		jw_close(jw_type[jw_depth] ? ']' : '}');
}
