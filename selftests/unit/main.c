// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Runs the registered unit tests; see test.h. */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>

#include "test.h"

static struct xnf_test *tests, **tests_tail = &tests;
int xnf_test_failed;
int xnf_test_verbose;
static const char *current;

void xnf_test_register(struct xnf_test *t)
{
	*tests_tail = t;
	tests_tail = &t->next;
}

bool xnf_test_check(bool ok, const char *file, int line, const char *what,
		    const char *fmt, ...)
{
	va_list ap;

	if (ok && !xnf_test_verbose)
		return true;
	fprintf(stderr, "%s %s:%d %s: %s: ", ok ? "  ok  " : "  FAIL", file,
		line, current, what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (!ok)
		xnf_test_failed++;
	return ok;
}

bool xnf_test_mem(const void *got, const void *want, size_t len,
		  const char *file, int line, const char *what)
{
	const uint8_t *g = got, *w = want;
	size_t i;

	for (i = 0; i < len; i++)
		if (g[i] != w[i])
			return xnf_test_check(false, file, line, what,
					      "byte %zu of %zu: got 0x%02x, want 0x%02x",
					      i, len, g[i], w[i]);
	return xnf_test_check(true, file, line, what, "%zu bytes equal", len);
}

int main(int argc, char **argv)
{
	const char *filter = NULL;
	int passed = 0, failed = 0, opt;
	struct xnf_test *t;

	while ((opt = getopt(argc, argv, "t:v")) != -1) {
		switch (opt) {
		case 't':
			filter = optarg;
			break;
		case 'v':
			xnf_test_verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-t FILTER] [-v]\n", argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (t = tests; t; t = t->next) {
		if (filter && !strstr(t->name, filter))
			continue;
		current = t->name;
		xnf_test_failed = 0;
		t->fn();
		printf("%s %s\n", xnf_test_failed ? "FAIL" : "ok  ", t->name);
		if (xnf_test_failed)
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
