// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * paths.c - operator input that becomes a path or an ifindex: device
 * names and the pin root. Every libxnf call that turns a device name into
 * a pin path or an ifindex checks it here first, so that "../../b/dev/e0"
 * never reaches another instance's pins and "d0:1" never reaches d0 (the
 * kernel resolves an alias name to its device).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "xnf.h"
#include "priv.h"

/* What the kernel's dev_valid_name() refuses, so that no name passes here
 * that cannot be a device; and control bytes, which the kernel allows but
 * no message could show. */
int xnf_dev_name_check(const char *dev, char *err, size_t errlen)
{
	const char *p;

	if (!dev || !*dev)
		return xnf_errf(err, errlen, -EINVAL,
				"no device name given; 'ip link' lists the devices");
	if (strnlen(dev, IF_NAMESIZE) >= IF_NAMESIZE)
		return xnf_errf(err, errlen, -EINVAL,
				"invalid device name '%.*s...': longer than %d bytes",
				IF_NAMESIZE - 1, dev, IF_NAMESIZE - 1);
	if (!strcmp(dev, ".") || !strcmp(dev, ".."))
		return xnf_errf(err, errlen, -EINVAL,
				"invalid device name '%s'", dev);
	for (p = dev; *p; p++) {
		if (*p == '/' || *p == ':')
			return xnf_errf(err, errlen, -EINVAL,
					"invalid device name '%s': no device name holds '%c'",
					dev, *p);
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return xnf_errf(err, errlen, -EINVAL,
					"invalid device name '%s': no device name holds a blank or a control character",
					dev);
	}
	return 0;
}

int xnf_dev_ifindex(const char *dev, __u32 *ifindex, char *err, size_t errlen)
{
	int ret = xnf_dev_name_check(dev, err, errlen);

	if (ret)
		return ret;
	*ifindex = if_nametoindex(dev);
	if (!*ifindex)
		return xnf_errf(err, errlen, -ENODEV,
				"no such device '%s' in this network namespace; see 'ip link show'",
				dev);
	return 0;
}

int xnf_dev_path(const char *root, const char *dev, const char *name, char *buf,
		 size_t len)
{
	int n;

	buf[0] = '\0';
	if (dev && xnf_dev_name_check(dev, NULL, 0))
		return -EINVAL;
	n = snprintf(buf, len, "%s/dev%s%s%s%s", root, dev ? "/" : "",
		     dev ?: "", name ? "/" : "", name ?: "");
	if (n < 0 || (size_t)n >= len) {
		/* A cut path names another file: leave none. */
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

/* The root is a directory of xnf's own inside a bpffs: never a mount point
 * (/sys/fs/bpf holds other programs' pins, which destroy would remove),
 * never outside one, and spelled one way (no "." or ".." to walk out of
 * it, no empty component, no trailing '/'). */
int xnf_root_check(const char *root, char *err, size_t errlen)
{
	char parent[XNF_ROOT_MAX];
	const char *p, *c;
	size_t n;

	if (!root || root[0] != '/')
		return xnf_errf(err, errlen, -EINVAL,
				"pin root '%s' is not an absolute path; set XNF_PIN_ROOT to a directory under /sys/fs/bpf",
				root ?: "");
	n = strlen(root);
	if (n >= XNF_ROOT_MAX)
		return xnf_errf(err, errlen, -ENAMETOOLONG,
				"pin root '%.40s...' is longer than %d bytes",
				root, XNF_ROOT_MAX - 1);
	for (p = root; *p; p = c) {
		p++;
		c = strchrnul(p, '/');
		if (c == p || (c - p == 1 && p[0] == '.') ||
		    (c - p == 2 && p[0] == '.' && p[1] == '.'))
			return xnf_errf(err, errlen, -EINVAL,
					"pin root '%s' holds an empty, '.' or '..' component, or ends in '/'; write it as a plain path such as /sys/fs/bpf/xnf",
					root);
	}
	for (p = root; *p; p++)
		if (iscntrl((unsigned char)*p))
			return xnf_errf(err, errlen, -EINVAL,
					"pin root '%s' holds a control character",
					root);
	memcpy(parent, root, n + 1);
	*strrchr(parent, '/') = '\0';
	if (is_bpffs(root) && !is_bpffs(parent))
		return xnf_errf(err, errlen, -EINVAL,
				"pin root %s is where a bpffs is mounted, among other programs' pins, which 'xnf destroy' would remove: use a directory below it, such as %s/xnf",
				root, root);
	if (!*parent || !is_bpffs(parent))
		return xnf_errf(err, errlen, -ENOTSUP,
				"pin root %s is not in a BPF filesystem (%s is not bpffs): set XNF_PIN_ROOT to a new directory under /sys/fs/bpf, or mount a bpffs on a new, empty directory (mkdir /run/xnf-bpf && mount -t bpf bpf /run/xnf-bpf) and use a directory below it",
				root, *parent ? parent : "/");
	return 0;
}
