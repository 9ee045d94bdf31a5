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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
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

/* ---- the directories of a pin root ----
 *
 * On a bpffs mounted with its default mode (1777, as `mount -t bpf bpf
 * DIR` leaves it), any user can make a name first: the root itself, so
 * that root's xnf pins into a directory of theirs (where they can hold the
 * lock, or rename tables/ and dev/ away and orphan root's XDP programs),
 * or a symbolic link to one. So xnf walks the root from "/", one component
 * at a time relative to the directory opened before, following no
 * symbolic link (O_NOFOLLOW), and trusts a directory only if it is root's
 * or the caller's: the root and what xnf makes in it must be writable by
 * them alone; a directory above the root may also be writable by others
 * if it is sticky (/tmp, a bpffs's 1777 mount), where nobody can rename or
 * remove what another made. Past that walk no other user can change a
 * name below the root, so pins are then made and opened by path, as
 * libbpf does. */

#define HOST_ROOT "/proc/1/root" /* xnf_root_resolve()'s prefix */

/* 0 when @st, the directory named by the first @n bytes of @path, can be
 * trusted, as the root or below it (@above false) or as one of the root's
 * parents; else -EPERM with the reason in @err. */
static int dir_trusted(const struct stat *st, const char *path, int n,
		       bool above, char *err, size_t errlen)
{
	uid_t me = geteuid();
	mode_t w = st->st_mode & (S_IWGRP | S_IWOTH);

	if (st->st_uid != 0 && st->st_uid != me)
		return xnf_errf(err, errlen, -EPERM,
				"%.*s is owned by uid %u, not by root%s: that user could hold the xnf instance's lock, or swap its pins; remove it if it is not in use, or set XNF_PIN_ROOT to a directory that is root's all the way down",
				n, path, (unsigned int)st->st_uid,
				me ? " or this user" : "");
	if (w && !(above && (st->st_mode & S_ISVTX)))
		return xnf_errf(err, errlen, -EPERM,
				"%.*s is writable by other users (mode %04o): they could hold the xnf instance's lock, or swap its pins; make it private (chmod go-w %.*s), or set XNF_PIN_ROOT to a directory that is root's all the way down",
				n, path, (unsigned int)(st->st_mode & 07777), n,
				path);
	return 0;
}

/* The directory @name in @dfd, never through a symbolic link, as an O_PATH
 * descriptor checked by dir_trusted() (@path's first @n bytes name it):
 * the fd, or -errno. */
static int dir_open_at(int dfd, const char *name, const char *path, int n,
		       bool above, char *err, size_t errlen)
{
	struct stat st;
	int fd, ret;

	fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		/* A link opened with O_PATH | O_NOFOLLOW fails O_DIRECTORY's
		 * test: ENOTDIR. */
		if (!fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISLNK(st.st_mode))
			return xnf_errf(err, errlen, -ELOOP,
					"%.*s is a symbolic link, which xnf does not follow on the way to its pins (another user could have put it there): set XNF_PIN_ROOT to the directory it names, or remove it",
					n, path);
		if (ret == -ENOENT)
			return xnf_errf(err, errlen, ret, "%.*s does not exist",
					n, path);
		return xnf_errf(err, errlen, ret, "cannot open %.*s: %s", n,
				path, strerror(-ret));
	}
	if (fstat(fd, &st)) {
		ret = xnf_errf(err, errlen, -errno, "cannot stat %.*s: %s", n,
			       path, strerror(errno));
		goto out_close;
	}
	ret = dir_trusted(&st, path, n, above, err, errlen);
	if (ret)
		goto out_close;
	return fd;

out_close:
	close(fd);
	return ret;
}

int xnf_root_open(const char *root, bool create, char *err, size_t errlen)
{
	char name[NAME_MAX + 1];
	const char *p, *next;
	int dfd, fd;
	bool host;

	host = !strncmp(root, HOST_ROOT "/", sizeof(HOST_ROOT));
	/* The magic link to PID 1's root is followed: xnf_root_resolve()
	 * put it there, and it is /proc's, not a user's. */
	dfd = open(host ? HOST_ROOT : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return xnf_errf(err, errlen, -errno, "cannot open %s: %s",
				host ? HOST_ROOT : "/", strerror(errno));
	for (p = root + (host ? sizeof(HOST_ROOT) - 1 : 0);; p = next) {
		next = *p == '/' ? strchrnul(p + 1, '/') : p;
		if (next - p < 2 || next - p > NAME_MAX + 1) {
			close(dfd);
			return xnf_errf(err, errlen, -EINVAL,
					"pin root '%s' is no path of directories below /",
					root);
		}
		snprintf(name, sizeof(name), "%.*s", (int)(next - p - 1), p + 1);
		if (!*next)
			break;
		fd = dir_open_at(dfd, name, root, next - root, true, err, errlen);
		close(dfd);
		if (fd < 0)
			return fd;
		dfd = fd;
	}
	fd = xnf_dir_at(dfd, name, root, create, err, errlen);
	close(dfd);
	return fd;
}

int xnf_dir_at(int dfd, const char *name, const char *path, bool create,
	       char *err, size_t errlen)
{
	if (create && mkdirat(dfd, name, 0700) && errno != EEXIST)
		return xnf_errf(err, errlen, -errno, "cannot create %s: %s",
				path, strerror(errno));
	return dir_open_at(dfd, name, path, strlen(path), false, err, errlen);
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
				"pin root %s is where a bpffs is mounted, among other programs' pins, which destroying the instance would remove: use a directory below it, such as %s/xnf",
				root, root);
	if (!*parent || !is_bpffs(parent))
		return xnf_errf(err, errlen, -ENOTSUP,
				"pin root %s is not in a BPF filesystem (%s is not bpffs): set XNF_PIN_ROOT to a new directory under /sys/fs/bpf, or mount a bpffs on a new, empty directory (mkdir /run/xnf-bpf && mount -t bpf -o mode=0700 bpf /run/xnf-bpf) and use a directory below it",
				root, *parent ? parent : "/");
	return 0;
}

/* Whether this process is in the mount namespace of process @pid: 1, 0,
 * or -errno when that cannot be told (no /proc, or @pid beyond ptrace's
 * reach, as a sandbox's PID 1 is). */
static int mntns_is(pid_t pid)
{
	struct stat self, other;
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	if (stat("/proc/self/ns/mnt", &self) || stat(path, &other))
		return -errno;
	return self.st_dev == other.st_dev && self.st_ino == other.st_ino;
}

/* Whether `ip netns exec` made this mount namespace: ip(8) mounts a sysfs
 * of the network namespace on /sys there, with the namespace's name as
 * its source (the host's says "sysfs"), a name in /run/netns. */
static bool made_by_ip_netns(void)
{
	char line[1024], src[256], path[300], *dash;
	bool made = false;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	/* "52 48 0:40 / /sys rw,relatime - sysfs NAME rw"; the last mount
	 * on /sys is the one seen. */
	while (fgets(line, sizeof(line), f)) {
		dash = strstr(line, " - ");
		if (dash && sscanf(line, "%*s %*s %*s %*s %299s", path) == 1 &&
		    !strcmp(path, "/sys"))
			made = sscanf(dash, " - sysfs %255s", src) == 1 &&
			       !strchr(src, '/') && strcmp(src, "sysfs") &&
			       snprintf(path, sizeof(path), "/run/netns/%s",
					src) > 0 &&
			       !access(path, F_OK);
	}
	fclose(f);
	return made;
}

/* The name under /run/netns of this process's network namespace (what `ip
 * netns identify` prints), or "NS" when it has none. */
static void netns_name(char *name, size_t len)
{
	struct stat self, st;
	char path[300];
	struct dirent *de;
	DIR *d;

	snprintf(name, len, "NS");
	if (stat("/proc/self/ns/net", &self) || !(d = opendir("/run/netns")))
		return;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (de->d_name[0] != '.' && !stat(path, &st) &&
		    st.st_dev == self.st_dev && st.st_ino == self.st_ino) {
			snprintf(name, len, "%s", de->d_name);
			break;
		}
	}
	closedir(d);
}

/*
 * A mount lives as long as its mount namespace, and `ip netns exec` makes a
 * private one for the command, with a fresh sysfs on /sys: /sys/fs/bpf is
 * an empty directory there. A bpffs mounted on it now (as xnf does in the
 * host's namespace, like ip(8)) would take the pins, and with the link pin
 * the XDP attachment, with it when the command exits. Only PID 1's mount
 * namespace outlives every command, so a root whose bpffs is missing here
 * is taken from there, through the magic link /proc/1/root: pins, the lock
 * and every later open then name the host's bpffs (the same superblock as
 * the host's /sys/fs/bpf), and a worker started with that root reopens the
 * same files. When no bpffs is there either, nothing would stay: refused.
 *
 * Where PID 1 is beyond reach (a sandbox's, a container's), this mount
 * namespace is taken for the host's, where xnf_open mounts a bpffs as on
 * the host, when it is the one of the process that started xnf (a shell;
 * `nsenter --net` keeps it) and `ip netns exec` did not make it. Else it
 * is refused too. Each refusal names the one thing that works from where
 * the operator is: never the way in they already took.
 */
int xnf_root_resolve(const char *root, char *out, size_t len, char *err,
		     size_t errlen)
{
	char parent[XNF_ROOT_MAX], host[XNF_ROOT_MAX + 16], ns_name[256];
	const char *slash = root ? strrchr(root, '/') : NULL;
	bool dflt;
	int ns, n;

	/* Not a pin root (xnf_root_check says why), on a bpffs here, or in
	 * the host's namespace, where the bpffs xnf_open mounts on
	 * /sys/fs/bpf stays: as it is. */
	if (!root || root[0] != '/' || strlen(root) >= XNF_ROOT_MAX || !slash ||
	    slash == root)
		goto as_is;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - root), root);
	if (is_bpffs(parent))
		goto as_is;
	ns = mntns_is(1);
	if (ns == 1)
		goto as_is;
	snprintf(host, sizeof(host), "/proc/1/root%s", parent);
	if (!ns && is_bpffs(host)) {
		n = snprintf(out, len, "/proc/1/root%s", root);
		if (n < 0 || (size_t)n >= len || n >= XNF_ROOT_MAX)
			return xnf_errf(err, errlen, -ENAMETOOLONG,
					"pin root %s is on the host's bpffs, reached from this mount namespace as /proc/1/root%s, which is longer than %d bytes: use a shorter XNF_PIN_ROOT",
					root, root, XNF_ROOT_MAX - 1);
		return 0;
	}
	dflt = !strcmp(parent, "/sys/fs/bpf");
	if (made_by_ip_netns() && (ns < 0 || dflt)) {
		netns_name(ns_name, sizeof(ns_name));
		return xnf_errf(
			err, errlen, -ENOTSUP,
			"no bpffs is mounted on %s here: 'ip netns exec' gave this command a mount namespace of its own, which ends with it, and %s: run it as 'nsenter --net=/run/netns/%s xnf ...', which keeps the mounts of the shell it is typed in, %s%s",
			parent,
			ns ? "the host's cannot be reached from it (PID 1 is out of reach)" :
			     "the host has none either",
			ns_name,
			dflt ? "where xnf mounts it itself" :
			       "after mounting one there: mount -t bpf -o mode=0700 bpf ",
			dflt ? "" : parent);
	}
	if (ns < 0 && mntns_is(getppid()) == 1)
		goto as_is;
	if (!ns)
		return xnf_errf(err, errlen, -ENOTSUP,
				"no bpffs is mounted on %s, neither in this mount namespace, which is not the host's, nor on the host's: mount one there (nsenter --mount=/proc/1/ns/mnt mount -t bpf -o mode=0700 bpf %s)",
				parent, parent);
	return xnf_errf(err, errlen, -ENOTSUP,
			"no bpffs is mounted on %s in this mount namespace, which the process that started xnf does not share ('unshare -m' makes one), and PID 1's cannot be compared (/proc/1/ns/mnt: %s): a bpffs mounted here could vanish with this command, and the XDP attachment with it. Mount one in the namespace of the shell xnf is started from: mount -t bpf -o mode=0700 bpf %s",
			parent, strerror(-ns), parent);
as_is:
	n = snprintf(out, len, "%s", root ?: "");
	if (n >= 0 && (size_t)n < len)
		return 0;
	return xnf_root_check(root, err, errlen) ?:
		       xnf_errf(err, errlen, -ENAMETOOLONG,
				"pin root '%.40s...' is longer than %zu bytes",
				root, len - 1);
}
