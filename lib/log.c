// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* One logging path for xnf and for libbpf's messages (demoted to debug:
 * xnf explains its own failures, libbpf's detail is there with -vv). A
 * message at warning level is a warning: a call that fails returns its
 * error, with its text in the caller's buffer (xnf_errf). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/libbpf.h>

#include "xnf.h"
#include "priv.h"

static enum xnf_log_level log_level = XNF_LOG_WARN;
static xnf_log_fn log_fn;

void xnf_set_log_level(enum xnf_log_level level)
{
	log_level = level;
}

void xnf_set_log_fn(xnf_log_fn fn)
{
	log_fn = fn;
}

static void xnf_vlog(enum xnf_log_level level, const char *prefix,
		     const char *fmt, va_list ap)
{
	char *msg = NULL;

	if (level > log_level)
		return;
	if (!log_fn) {
		flockfile(stderr);
		if (level == XNF_LOG_WARN)
			fputs("Warning: ", stderr);
		else if (prefix)
			fputs(prefix, stderr);
		vfprintf(stderr, fmt, ap);
		funlockfile(stderr);
		return;
	}
	if (vasprintf(&msg, fmt, ap) < 0)
		return;
	if (prefix)
		fputs(prefix, stderr);
	log_fn(level, msg);
	free(msg);
}

void xnf_log(enum xnf_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xnf_vlog(level, NULL, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	xnf_vlog(XNF_LOG_DEBUG, "  ", fmt, ap);
	return 0;
}

void xnf_libbpf_logging(void)
{
	libbpf_set_print(libbpf_print);
}

int xnf_errf(char *err, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return ret;
}
