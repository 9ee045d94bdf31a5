// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Runs the registered unit tests; see test.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

static struct xnf_test *tests, **tests_tail = &tests;
int xnf_test_failed;
int xnf_test_verbose;

static struct {
	int passed, failed, skipped;
} count;

/* The running test and subtest. A test's result is FAIL if an assertion
 * failed in it or in one of its subtests. */
static struct {
	const char *name;
	char *skip;	 /* the reason, once skipped */
	int failed;	 /* assertions failed outside subtests */
	int sub_failed;	 /* subtests that failed */
	int sub_run;	 /* subtests run */
	int sub_skipped; /* subtests skipped */
	const char *sub; /* the running subtest's name, or NULL */
	char *sub_skip;
} cur;

/*
 * What a test writes on fd 2 goes to a file (log_fd), and on to the real
 * stderr (stderr_fd) only if the test fails or under -v, where nothing is
 * captured. Subtests write to a file of their own (sublog_fd), so that a
 * failed subtest shows its own log, then its result line.
 */
static int stderr_fd = -1, log_fd = -1, sublog_fd = -1;

/* Selection: -t A,B/C runs tests whose name contains A, and tests whose
 * name contains B with, of their subtests, those whose name contains C. */
struct filter {
	char *test, *sub; /* sub NULL: every subtest */
};
static struct filter *filters;
static int nfilters;

void xnf_test_register(struct xnf_test *t)
{
	*tests_tail = t;
	tests_tail = &t->next;
}

static void parse_filters(char *arg)
{
	char *tok, *save, *slash;

	for (tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		filters = realloc(filters, (nfilters + 1) * sizeof(*filters));
		if (!filters)
			abort();
		slash = strchr(tok, '/');
		if (slash)
			*slash++ = '\0';
		filters[nfilters].test = tok;
		filters[nfilters].sub = slash;
		nfilters++;
	}
}

static bool test_selected(const char *name)
{
	int i;

	if (!nfilters)
		return true;
	for (i = 0; i < nfilters; i++)
		if (strstr(name, filters[i].test))
			return true;
	return false;
}

static bool subtest_selected(const char *test, const char *sub)
{
	int i;

	if (!nfilters)
		return true;
	for (i = 0; i < nfilters; i++)
		if (strstr(test, filters[i].test) &&
		    (!filters[i].sub || strstr(sub, filters[i].sub)))
			return true;
	return false;
}

static void log_reset(int fd)
{
	if (fd < 0)
		return;
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		perror("test_unit: log file");
}

/* Copies what @fd holds to the real stderr and empties it. */
static void log_replay(int fd)
{
	char buf[4096];
	ssize_t n;

	if (fd < 0)
		return;
	fflush(stderr);
	if (lseek(fd, 0, SEEK_SET) == 0) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			if (write(stderr_fd, buf, n) != n)
				break;
	}
	log_reset(fd);
}

/* Points fd 2 at @fd (fflushing stderr first). */
static void log_to(int fd)
{
	if (fd < 0)
		return;
	fflush(stderr);
	if (dup2(fd, STDERR_FILENO) < 0)
		perror("test_unit: dup2");
}

static int log_open(void)
{
	FILE *f = tmpfile();
	int fd;

	if (!f) {
		perror("test_unit: tmpfile");
		exit(2);
	}
	fd = fcntl(fileno(f), F_DUPFD_CLOEXEC, 3);
	fclose(f);
	return fd;
}

/* A test that crashes takes its log with it: show the log first. Only
 * async-signal-safe calls. */
static void crash_handler(int sig)
{
	static const char msg[] = "test_unit: crashed; its log:\n";
	char buf[4096];
	ssize_t n;
	int i, fds[2] = { log_fd, sublog_fd };

	if (stderr_fd >= 0 && !xnf_test_verbose) {
		if (write(stderr_fd, msg, sizeof(msg) - 1) < 0)
			_exit(128 + sig);
		for (i = 0; i < 2; i++) {
			if (fds[i] < 0 || lseek(fds[i], 0, SEEK_SET))
				continue;
			while ((n = read(fds[i], buf, sizeof(buf))) > 0)
				if (write(stderr_fd, buf, n) != n)
					break;
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void result(const char *verdict, const char *sub, const char *why)
{
	printf("%s %s%s%s%s%s\n", verdict, cur.name, sub ? "/" : "",
	       sub ? sub : "", why ? ": " : "", why ? why : "");
}

static void subtest_end(void)
{
	bool failed;

	if (!cur.sub)
		return;
	failed = xnf_test_failed > 0;
	if (!xnf_test_verbose) {
		if (failed)
			log_replay(sublog_fd);
		else
			log_reset(sublog_fd);
		log_to(log_fd);
	}
	if (failed) {
		result("FAIL", cur.sub, NULL);
		count.failed++;
		cur.sub_failed++;
	} else if (cur.sub_skip) {
		result("skip", cur.sub, cur.sub_skip);
		count.skipped++;
		cur.sub_skipped++;
	} else {
		result("ok  ", cur.sub, NULL);
		count.passed++;
	}
	free((void *)cur.sub);
	free(cur.sub_skip);
	cur.sub = NULL;
	cur.sub_skip = NULL;
	xnf_test_failed = cur.failed;
}

bool xnf_test_start_subtest(const char *name)
{
	subtest_end();
	if (!subtest_selected(cur.name, name))
		return false;
	cur.sub = strdup(name);
	if (!cur.sub)
		abort();
	cur.sub_run++;
	/* xnf_test_failed counts the subtest's failures while it runs */
	cur.failed = xnf_test_failed;
	xnf_test_failed = 0;
	if (!xnf_test_verbose)
		log_to(sublog_fd);
	return true;
}

void xnf_test_skip(const char *fmt, ...)
{
	char **skip = cur.sub ? &cur.sub_skip : &cur.skip;
	va_list ap;

	free(*skip);
	va_start(ap, fmt);
	if (vasprintf(skip, fmt, ap) < 0)
		*skip = strdup("?");
	va_end(ap);
}

static void run_test(struct xnf_test *t)
{
	bool failed;

	memset(&cur, 0, sizeof(cur));
	cur.name = t->name;
	xnf_test_failed = 0;
	if (!xnf_test_verbose)
		log_to(log_fd);
	t->fn();
	subtest_end();
	failed = xnf_test_failed || cur.sub_failed;
	if (!xnf_test_verbose) {
		log_to(stderr_fd);
		if (failed)
			log_replay(log_fd);
		else
			log_reset(log_fd);
	}
	/* A test of subtests only, all skipped, is skipped; a test with
	 * some subtests run says how many were skipped. */
	if (!cur.skip && cur.sub_run && cur.sub_skipped == cur.sub_run && !failed)
		cur.skip = strdup("all subtests skipped");
	if (failed) {
		result("FAIL", NULL, NULL);
		count.failed++;
	} else if (cur.skip) {
		result("skip", NULL, cur.skip);
		count.skipped++;
	} else if (cur.sub_skipped) {
		char why[64];

		snprintf(why, sizeof(why), "%d of %d subtests skipped",
			 cur.sub_skipped, cur.sub_run);
		result("ok  ", NULL, why);
		count.passed++;
	} else {
		result("ok  ", NULL, NULL);
		count.passed++;
	}
	free(cur.skip);
}

bool xnf_test_check(bool ok, const char *file, int line, const char *what,
		    const char *fmt, ...)
{
	va_list ap;

	if (ok && !xnf_test_verbose)
		return true;
	fprintf(stderr, "%s %s:%d %s%s%s: %s: ", ok ? "  ok  " : "  FAIL", file,
		line, cur.name ? cur.name : "?", cur.sub ? "/" : "",
		cur.sub ? cur.sub : "", what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (!ok)
		xnf_test_failed++;
	return ok;
}

static const char *val_str(char *buf, size_t len, struct xnf_test_val v)
{
	switch (v.kind) {
	case XNF_TK_UNSIGNED:
		snprintf(buf, len, "%llu", v.u);
		break;
	case XNF_TK_SIGNED:
		snprintf(buf, len, "%lld", v.s);
		break;
	case XNF_TK_FLOAT:
		snprintf(buf, len, "%Lg", v.f);
		break;
	case XNF_TK_POINTER:
		snprintf(buf, len, "%#llx", v.u);
		break;
	}
	return buf;
}

/* -1, 0, 1 as a <, ==, > b, by value. NaN compares unordered: 2. */
static int cmp_val(struct xnf_test_val a, struct xnf_test_val b)
{
	long double fa, fb;

	if (a.kind == XNF_TK_FLOAT || b.kind == XNF_TK_FLOAT) {
		fa = a.kind == XNF_TK_FLOAT  ? a.f :
		     a.kind == XNF_TK_SIGNED ? (long double)a.s :
					       (long double)a.u;
		fb = b.kind == XNF_TK_FLOAT  ? b.f :
		     b.kind == XNF_TK_SIGNED ? (long double)b.s :
					       (long double)b.u;
		if (fa < fb)
			return -1;
		if (fa > fb)
			return 1;
		return fa == fb ? 0 : 2;
	}
	/* a negative number is less than every value of an unsigned type */
	if (a.kind == XNF_TK_SIGNED && a.s < 0) {
		if (b.kind != XNF_TK_SIGNED || b.s >= 0)
			return -1;
		return a.s < b.s ? -1 : a.s > b.s;
	}
	if (b.kind == XNF_TK_SIGNED && b.s < 0)
		return 1;
	/* both are >= 0 here and fit an unsigned long long */
	return a.u < b.u ? -1 : a.u > b.u;
}

bool xnf_test_cmp(enum xnf_test_op op, struct xnf_test_val a,
		  struct xnf_test_val b)
{
	int c = cmp_val(a, b);

	switch (op) {
	case XNF_OP_EQ:
		return c == 0;
	case XNF_OP_NEQ:
		return c != 0;
	case XNF_OP_LT:
		return c == -1;
	case XNF_OP_LE:
		return c == -1 || c == 0;
	case XNF_OP_GT:
		return c == 1;
	case XNF_OP_GE:
		return c == 1 || c == 0;
	}
	return false;
}

bool xnf_test_check_cmp(enum xnf_test_op op, struct xnf_test_val a,
			struct xnf_test_val b, const char *as, const char *bs,
			const char *file, int line, const char *what)
{
	/* the operator asserted, and the one that holds instead */
	static const char *const ops[][2] = {
		[XNF_OP_EQ] = { "==", "!=" }, [XNF_OP_NEQ] = { "!=", "==" },
		[XNF_OP_LT] = { "<", ">=" },  [XNF_OP_LE] = { "<=", ">" },
		[XNF_OP_GT] = { ">", "<=" },  [XNF_OP_GE] = { ">=", "<" },
	};
	char av[48], bv[48];

	return xnf_test_check(xnf_test_cmp(op, a, b), file, line, what,
			      "%s %s %s: %s %s %s", as, ops[op][0], bs,
			      val_str(av, sizeof(av), a), ops[op][1],
			      val_str(bv, sizeof(bv), b));
}

bool xnf_test_check_ok(struct xnf_test_val v, const char *s, const char *file,
		       int line, const char *what)
{
	char buf[48];
	bool neg = v.kind == XNF_TK_SIGNED && v.s < 0;

	return xnf_test_check(xnf_test_cmp(XNF_OP_EQ, v, xnf_test_s(0)), file,
			      line, what, "%s: %s (%s)", s,
			      val_str(buf, sizeof(buf), v),
			      neg && v.s >= -4095 ? strerror((int)-v.s) :
						    "not 0");
}

bool xnf_test_check_err(struct xnf_test_val v, const char *s, const char *file,
			int line, const char *what)
{
	char buf[48];

	return xnf_test_check(xnf_test_cmp(XNF_OP_LT, v, xnf_test_s(0)), file,
			      line, what, "%s: expected an error, got %s", s,
			      val_str(buf, sizeof(buf), v));
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
	static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE,
					  SIGILL };
	struct xnf_test *t;
	unsigned int i;
	int opt;

	while ((opt = getopt(argc, argv, "t:v")) != -1) {
		switch (opt) {
		case 't':
			parse_filters(optarg);
			break;
		case 'v':
			xnf_test_verbose = 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-t TEST[/SUBTEST][,...]] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!xnf_test_verbose) {
		stderr_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		if (stderr_fd < 0) {
			perror("test_unit: dup stderr");
			return 2;
		}
		log_fd = log_open();
		sublog_fd = log_open();
		for (i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
			signal(crash_sigs[i], crash_handler);
	}
	for (t = tests; t; t = t->next)
		if (test_selected(t->name))
			run_test(t);
	printf("%d passed, %d failed, %d skipped\n", count.passed, count.failed,
	       count.skipped);
	return count.failed ? 1 : 0;
}
