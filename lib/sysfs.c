// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sysfs.c - reading and writing sysfs and procfs below a root (the real
 * system, or a fixture directory in the tests), and CPU sets.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xnf.h"
#include "placement.h"

#include "place_priv.h"

/* ---- paths below the root ---- */

bool sysfs_is_real(const char *root)
{
	return !root || !*root || !strcmp(root, "/");
}

static void sysfs_vpath(char *buf, size_t len, const char *root,
			const char *fmt, va_list ap)
{
	size_t n = 0;

	if (!sysfs_is_real(root)) {
		n = snprintf(buf, len, "%s", root);
		while (n > 1 && n < len && buf[n - 1] == '/')
			buf[--n] = '\0';
	}
	/* A cut path names another file: leave none. */
	if (n >= len || (size_t)vsnprintf(buf + n, len - n, fmt, ap) >= len - n)
		buf[0] = '\0';
}

void sysfs_path(char *buf, size_t len, const char *root, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sysfs_vpath(buf, len, root, fmt, ap);
	va_end(ap);
}

/* Reads the file at @path into @buf (NUL-terminated, trailing blanks
 * dropped). */
int sysfs_read_path(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

int sysfs_read_str(const char *root, char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	sysfs_vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	return sysfs_read_path(path, buf, len);
}

int sysfs_read_int(const char *root, int *v, const char *fmt, ...)
{
	char path[PATH_MAX], buf[64], *end;
	va_list ap;
	long n;
	int err;

	va_start(ap, fmt);
	sysfs_vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	err = sysfs_read_path(path, buf, sizeof(buf));
	if (err)
		return err;
	errno = 0;
	n = strtol(buf, &end, 0);
	if (errno || end == buf || (*end && !isspace((unsigned char)*end)) ||
	    n < INT_MIN || n > INT_MAX)
		return -EINVAL;
	*v = n;
	return 0;
}

int sysfs_read_cpuset(const char *root, struct xnf_cpuset *s, const char *fmt, ...)
{
	char path[PATH_MAX], buf[4096];
	va_list ap;
	int err;

	va_start(ap, fmt);
	sysfs_vpath(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	err = sysfs_read_path(path, buf, sizeof(buf));
	return err ?: xnf_cpuset_parse(buf, s);
}

int sysfs_write(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* A whole file (procfs sizes are unknown: read until EOF); free() it. */
char *sysfs_slurp(const char *path)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap), *nb;
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= (64u << 20))
				break;
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* ---- CPU sets ---- */

int xnf_cpuset_count(const struct xnf_cpuset *s)
{
	int i, n = 0;

	for (i = 0; i < XNF_PLACE_CPU_WORDS; i++)
		n += __builtin_popcountll(s->w[i]);
	return n;
}

int xnf_cpuset_next(const struct xnf_cpuset *s, int cpu)
{
	for (; cpu >= 0 && cpu < XNF_PLACE_MAX_CPUS; cpu++)
		if (xnf_cpuset_test(s, cpu))
			return cpu;
	return -1;
}

bool xnf_cpuset_equal(const struct xnf_cpuset *a, const struct xnf_cpuset *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static int parse_num(const char **p, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*v = strtoul(*p, &end, 10);
	if (errno)
		return -ERANGE;
	*p = end;
	return 0;
}

int xnf_cpuset_parse(const char *list, struct xnf_cpuset *s)
{
	const char *p = list;
	unsigned long a, b, used, group, c;

	xnf_cpuset_zero(s);
	while (isspace((unsigned char)*p))
		p++;
	while (*p && !isspace((unsigned char)*p)) {
		if (parse_num(&p, &a))
			return -EINVAL;
		b = a;
		used = group = 1;
		if (*p == '-') {
			p++;
			if (parse_num(&p, &b) || b < a)
				return -EINVAL;
			if (*p == ':') {
				p++;
				if (parse_num(&p, &used) || *p++ != '/' ||
				    parse_num(&p, &group) || !used || !group ||
				    used > group)
					return -EINVAL;
			}
		}
		if (b >= XNF_PLACE_MAX_CPUS)
			return -ERANGE;
		for (c = a; c <= b; c++)
			if ((c - a) % group < used)
				xnf_cpuset_set(s, c);
		if (*p == ',')
			p++;
		else if (*p && !isspace((unsigned char)*p))
			return -EINVAL;
	}
	while (isspace((unsigned char)*p))
		p++;
	return *p ? -EINVAL : 0;
}

const char *xnf_cpuset_format(const struct xnf_cpuset *s, char *buf, size_t len)
{
	size_t n = 0;
	int a, b;

	if (len)
		buf[0] = '\0';
	for (a = xnf_cpuset_next(s, 0); a >= 0; a = xnf_cpuset_next(s, b + 1)) {
		for (b = a; xnf_cpuset_test(s, b + 1); b++)
			;
		if (n < len) {
			if (b == a)
				n += snprintf(buf + n, len - n, "%s%d",
					      n ? "," : "", a);
			else
				n += snprintf(buf + n, len - n, "%s%d-%d",
					      n ? "," : "", a, b);
		}
	}
	return buf;
}
