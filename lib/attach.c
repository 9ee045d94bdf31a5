// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * attach.c - the transactions of an interface: attach, detach, chain set,
 * and the read-only view of what runs (status), plus opening the instance
 * under its lock and destroying it.
 *
 * Per interface, under <root>/dev/<ifname>/:
 *   link       the XDP bpf_link: the attachment itself
 *   prog       the program the link runs (entry, or the fused chain)
 *   chain      the prog array of a tail-called chain (slot i = NF i)
 *   xnf_stats, xnf_xsks, xnf_dev   per-interface maps
 *   prog_new, chain_new, xnf_dev[1]  a chain switch in progress
 *
 * attach builds everything aside and creates the link last; any failure
 * undoes what this call created and nothing else. chain set loads a
 * complete new chain (new programs, new prog array) next to the running
 * one, stages its pins, swaps the link's program with one
 * bpf_link_update(), waits for an RCU grace period (packets that started on
 * the old entry program may still tail-call into the old array), and only
 * then moves the staged pins into place. A writer killed between the swap
 * and the move leaves staged pins that the next writer completes
 * (dev_recover); readers work out what runs without writing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xnf.h"
#include "conf.h"
#include "priv.h"
#include "placement.h"
#include "worker.h"

/* Pins of the tracer's links, at <root>/<name>, by enum xnf_tracer. */
static const char *const tracer_pins[__XNF_TRACER_MAX] = {
	[XNF_TRACER_NAPI] = "batch_link",
	[XNF_TRACER_XMIT] = "xmit_link",
	[XNF_TRACER_REDIRECT_ERR] = "redirect_err_link",
};

/* Cannot fail: every entry point checked @dev (xnf_dev_name_check), and
 * dp->root fits XNF_ROOT_MAX. */
static void dev_path(char *buf, const struct xnf_dp *dp, const char *dev,
		     const char *name)
{
	xnf_dev_path(dp->root, dev, name, buf, PATH_MAX);
}

static bool pin_exists(const char *path)
{
	return !access(path, F_OK);
}

static void tracer_unpin(struct xnf_dp *dp)
{
	char path[PATH_MAX];
	int i;

	for (i = 0; i < __XNF_TRACER_MAX; i++) {
		snprintf(path, sizeof(path), "%s/%s", dp->root, tracer_pins[i]);
		unlink(path);
	}
}

/* ---- the instance ---- */

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

#define NO_INSTANCE                                       \
	"no xnf instance at %s: nothing was attached or " \
	"configured yet (xnf attach DEV chain NF[,NF...])"

/* Who holds the flock on the inode of @fd, from /proc/locks, as "pid 1234
 * (xnf -b -)" with ", stopped" when it is: its pid, or 0 (and "another
 * process") when none is listed. */
static pid_t lock_holder(int fd, char *who, size_t len)
{
	char path[64], line[256], cmd[96] = "", *p;
	unsigned int maj, min;
	unsigned long ino;
	struct stat st;
	bool stopped = false;
	int pid = 0, holder;
	size_t n = 0;
	FILE *f;

	snprintf(who, len, "another process");
	if (fstat(fd, &st) || !(f = fopen("/proc/locks", "re")))
		return 0;
	/* "1: FLOCK  ADVISORY  WRITE 1234 fe:00:9978627 0 EOF"; a waiter's
	 * line reads "1: -> FLOCK ..." and does not match. */
	while (!pid && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%lu", &holder,
			   &maj, &min, &ino) == 4 &&
		    holder > 0 && maj == major(st.st_dev) &&
		    min == minor(st.st_dev) && ino == st.st_ino)
			pid = holder;
	fclose(f);
	if (!pid)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
	}
	for (p = cmd; p < cmd + n; p++)
		if (!*p)
			*p = ' ';
	while (n && cmd[n - 1] == ' ')
		n--;
	cmd[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (f) {
		/* "1234 (comm) T ...": the state follows the last ')'. */
		if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
			stopped = p[1] == ' ' && (p[2] == 'T' || p[2] == 't');
		fclose(f);
	}
	snprintf(who, len, "pid %d (%s)%s", pid, n ? cmd : "?",
		 stopped ? ", stopped" : "");
	return pid;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Takes the exclusive lock on @fd, waiting until @deadline (CLOCK_MONOTONIC
 * seconds, or forever when it is 0). flock() itself cannot time out: it is
 * tried again with a short sleep. */
static int lock_wait(int fd, const char *root, unsigned int wait_s,
		     double deadline, char *err, size_t errlen)
{
	struct timespec ts = { 0, 1000000 };
	char who[160];
	bool told = false;
	pid_t pid;

	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK)
			return xnf_errf(err, errlen, -errno, "cannot lock %s: %s",
					root, strerror(errno));
		if (deadline && now_s() >= deadline) {
			pid = lock_holder(fd, who, sizeof(who));
			return xnf_errf(err, errlen, -ETIMEDOUT,
					"the xnf instance at %s is locked by %s; gave up after %u s: try again when it has finished, wait longer with -w SECONDS, or end it if it hangs (kill %d; kill -CONT %d resumes a stopped one)",
					root, who, wait_s, pid, pid);
		}
		if (!told) {
			lock_holder(fd, who, sizeof(who));
			if (deadline)
				pr_warn("Waiting for the lock of %s, held by %s (at most %u s; -w SECONDS)\n",
					root, who, wait_s);
			else
				pr_warn("Waiting for the lock of %s, held by %s\n",
					root, who);
			told = true;
		}
		nanosleep(&ts, NULL);
		if (ts.tv_nsec < 50000000)
			ts.tv_nsec *= 2;
	}
	return 0;
}

/* Whether @fd still is the directory at @root: a destroy (or a creation
 * undone) removes the root while others wait for its lock; they must lock
 * the one that is there now. */
static bool same_dir(int fd, const char *root)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(root, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* An instance whose creation was killed before its schema was written (it
 * is written last, after the dev directory and every table), or whose
 * destroy was killed midway: tables, but no dev directory, not all the
 * tables, or no schema in xnf_cfg. */
static bool tables_incomplete(const char *root)
{
	struct xnf_config cfg = {};
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, t;

	snprintf(path, sizeof(path), "%s/tables", root);
	if (access(path, F_OK))
		return false;
	snprintf(path, sizeof(path), "%s/dev", root);
	if (access(path, F_OK))
		return true;
	for (t = 0; t < __XNF_T_MAX; t++) {
		snprintf(path, sizeof(path), "%s/tables/%s", root,
			 xnf_table_names[t]);
		if (access(path, F_OK))
			return true;
	}
	snprintf(path, sizeof(path), "%s/tables/%s", root,
		 XNF_MAP_STR(XNF_MAP_CFG));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return true;
	if (bpf_map_lookup_elem(fd, &zero, &cfg))
		cfg.schema = 0;
	close(fd);
	return !cfg.schema;
}

static void repair(struct xnf_dp *dp);

/* A writer's lock on @root (made first when @create): 0 and *@fd, or
 * -errno with @err. */
static int lock_root(const char *root, bool create, unsigned int wait_s,
		     int *fd, char *err, size_t errlen)
{
	double deadline = wait_s == XNF_WAIT_FOREVER ? 0 : now_s() + wait_s;
	char path[PATH_MAX];
	int ret, dir;

	for (;;) {
		/* Never another user's directory (xnf_root_open). */
		dir = xnf_root_open(root, create, err, errlen);
		if (dir == -ENOENT)
			return xnf_errf(err, errlen, -ENOENT, NO_INSTANCE, root);
		if (dir < 0)
			return dir;
		/* flock() takes no O_PATH descriptor. */
		*fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ret = -errno;
		close(dir);
		if (*fd < 0)
			return xnf_errf(err, errlen, ret, "cannot open %s: %s",
					root, strerror(-ret));
		ret = lock_wait(*fd, root, wait_s, deadline, err, errlen);
		if (ret)
			goto out_close;
		if (!same_dir(*fd, root))
			goto again;
		if (!tables_incomplete(root))
			return 0;
		/* With no device left, nothing uses those tables: remove the
		 * instance (a creator makes it again). Else xnf_dp_open says
		 * it is incomplete. */
		snprintf(path, sizeof(path), "%s/dev", root);
		if (rmdir(path) && errno != ENOENT)
			return 0;
		pr_info("removing the incomplete instance at %s\n", root);
		xnf_dp_destroy(root);
again:
		close(*fd);
	}
out_close:
	close(*fd);
	return ret;
}

/* Moves the instance at @root, of another table schema, to <root>-old
 * under its lock (@lock_fd), then locks a new root in its place. */
static int move_aside(const char *root, unsigned int wait_s, int *lock_fd,
		      char *err, size_t errlen)
{
	char old[XNF_ROOT_MAX + 8];
	int new_fd, ret;

	/* bpffs refuses names with a dot. */
	snprintf(old, sizeof(old), "%s-old", root);
	if (!access(old, F_OK))
		return xnf_errf(err, errlen, -EEXIST,
				"%s holds tables of another schema and %s, an instance upgraded from earlier, is still there; remove one of them (xnf destroy with the xnf that made it, or rm -r)",
				root, old);
	if (rename(root, old))
		return xnf_errf(err, errlen, -errno,
				"cannot move the instance at %s aside to %s: %s",
				root, old, strerror(errno));
	pr_info("moved the instance of another schema at %s to %s\n", root, old);
	ret = lock_root(root, true, wait_s, &new_fd, err, errlen);
	if (ret)
		return ret;
	close(*lock_fd);
	*lock_fd = new_fd;
	return 0;
}

int xnf_open(const char *root, unsigned int flags, unsigned int wait_s,
	     struct xnf_dp **out, char *err, size_t errlen)
{
	bool create = flags & XNF_OPEN_CREATE, reader = flags & XNF_OPEN_READ;
	char parent[PATH_MAX], here[XNF_ROOT_MAX], *slash;
	int lock_fd = -1, ret;
	bool made;

	/* Under ip netns exec: the host's bpffs, or a refusal. */
	ret = xnf_root_resolve(root, here, sizeof(here), err, errlen);
	if (ret)
		return ret;
	root = here;
	snprintf(parent, sizeof(parent), "%s", root);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (reader) {
		if (access(root, F_OK))
			return errno == ENOENT ?
				       xnf_errf(err, errlen, -ENOENT,
						NO_INSTANCE, root) :
				       xnf_dp_denied(root, errno, err, errlen);
		create = false;
	} else if (!strcmp(parent, "/sys/fs/bpf") && !is_bpffs(parent) &&
		   mount("bpf", parent, "bpf", 0, "mode=0700")) {
		/* Like ip(8), mount bpffs where the root expects it (only
		 * where it stays: xnf_root_resolve saw to that). */
		return xnf_errf(err, errlen, -errno,
				"cannot mount bpffs on %s: %s; mount it with 'mount -t bpf -o mode=0700 bpf %s'",
				parent, strerror(errno), parent);
	}
	ret = xnf_root_check(root, err, errlen);
	if (ret)
		return ret;
	made = create && access(root, F_OK);
	if (!reader) {
		ret = lock_root(root, create, wait_s, &lock_fd, err, errlen);
		if (ret)
			goto out_close;
	}
	ret = xnf_dp_open(root, create, out, err, errlen);
	if (ret == -EPROTO && create && (flags & XNF_OPEN_UPGRADE)) {
		ret = move_aside(root, wait_s, &lock_fd, err, errlen);
		if (!ret)
			ret = xnf_dp_open(root, create, out, err, errlen);
	}
	if (ret == -ENOENT)
		xnf_errf(err, errlen, ret, NO_INSTANCE, root);
	if (ret)
		goto out_close;
	(*out)->lock_fd = lock_fd;
	(*out)->reader = reader;
	if (!reader) {
		repair(*out);
		/* A commit killed midway: undone, after the transactions it
		 * was in the middle of were completed or undone above. */
		xnf_conf_repair(*out);
	}
	return 0;

out_close:
	if (lock_fd >= 0)
		close(lock_fd);
	/* Only a root this call made, and only while it is empty. */
	if (made)
		rmdir(root);
	return ret;
}

bool xnf_upgrade_pending(const struct xnf_dp *dp, char *buf, size_t len)
{
	int fd;

	if (snprintf(buf, len, "%s-old", dp->root) >= (int)len)
		return false;
	/* A directory trusted as the root is (another user's would be
	 * adopted from, then removed). */
	fd = xnf_root_open(buf, false, NULL, 0);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int xnf_upgrade_finish(struct xnf_dp *dp, char *err, size_t errlen)
{
	char old[XNF_ROOT_MAX + 8];
	int ret;

	if (!xnf_upgrade_pending(dp, old, sizeof(old)))
		return 0;
	ret = xnf_dp_destroy(old);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot remove the instance upgraded from at %s: %s; remove it with 'rm -r %s'",
				old, strerror(-ret), old);
	pr_info("removed %s, the instance upgraded from\n", old);
	return 0;
}

int xnf_dp_lock(struct xnf_dp *dp, int op)
{
	if (dp->lock_fd < 0)
		return 0;
	return flock(dp->lock_fd, op) ? -errno : 0;
}

/* Names of the directories under <root>/dev, or with @attached only of
 * those holding a link pin (an attachment; the others are what an attach
 * or detach killed midway left), at most @max of IF_NAMESIZE bytes each:
 * their count. */
static int dev_dirs(struct xnf_dp *dp, char (*names)[16], int max, bool attached)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	dev_path(path, dp, NULL, NULL);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (xnf_dev_name_check(de->d_name, NULL, 0))
			continue;
		dev_path(path, dp, de->d_name, "link");
		if (attached && !pin_exists(path))
			continue;
		if (n < max)
			memcpy(names[n], de->d_name, strlen(de->d_name) + 1);
		n++;
	}
	closedir(d);
	return n;
}

int xnf_dev_list(struct xnf_dp *dp, char (*names)[16], int max)
{
	return dev_dirs(dp, names, max, true);
}

int xnf_destroy(struct xnf_dp *dp, char *err, size_t errlen)
{
	char names[1][16];
	int n, ret;

	n = xnf_dev_list(dp, names, 1);
	if (n < 0)
		return xnf_errf(err, errlen, n, "cannot read %s/dev: %s",
				dp->root, strerror(-n));
	if (n > 0)
		return xnf_errf(err, errlen, -EBUSY,
				"%s is still attached: detach it first",
				names[0]);
	tracer_unpin(dp);
	ret = xnf_dp_destroy(dp->root);
	if (ret)
		return xnf_errf(err, errlen, ret, "cannot remove %s: %s",
				dp->root, strerror(-ret));
	return 0;
}

/* ---- what runs on a device ---- */

static int obj_id(const char *path, bool link_prog)
{
	struct bpf_link_info linfo = {};
	struct bpf_prog_info pinfo = {};
	__u32 len;
	int fd, id = 0;

	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (link_prog) {
		len = sizeof(linfo);
		if (!bpf_obj_get_info_by_fd(fd, &linfo, &len))
			id = linfo.prog_id;
	} else {
		len = sizeof(pinfo);
		if (!bpf_obj_get_info_by_fd(fd, &pinfo, &len))
			id = pinfo.id;
	}
	close(fd);
	return id;
}

static int dev_info_get(const struct xnf_dp *dp, const char *dev, __u32 key,
			struct xnf_dev_info *info)
{
	char path[PATH_MAX];
	int fd, err = 0;

	dev_path(path, dp, dev, XNF_MAP_STR(XNF_MAP_DEV));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &key, info))
		err = -errno;
	close(fd);
	return err;
}

/* Whether a chain switch of @dev was staged and the link already runs the
 * staged program: then slot 1 of xnf_dev and the "_new" pins describe what
 * runs. */
static bool switch_done(const struct xnf_dp *dp, const char *dev, bool *staged)
{
	char path[PATH_MAX], link[PATH_MAX];
	__u32 id;

	dev_path(path, dp, dev, "prog_new");
	*staged = pin_exists(path);
	if (!*staged)
		return false;
	dev_path(link, dp, dev, "link");
	id = obj_id(link, true);
	return id && id == (__u32)obj_id(path, false);
}

int xnf_dev_status(struct xnf_dp *dp, const char *dev, struct xnf_dev_status *st)
{
	struct bpf_link_info linfo = {};
	__u32 len = sizeof(linfo), i;
	char path[PATH_MAX];
	bool staged, done;
	int fd, err;

	memset(st, 0, sizeof(*st));
	if (xnf_dev_name_check(dev, NULL, 0))
		return -EINVAL;
	snprintf(st->dev, sizeof(st->dev), "%s", dev);
	/* Without its link pin a device is not attached, whatever else is
	 * pinned there (repair() removes that). */
	dev_path(path, dp, dev, "link");
	if (!pin_exists(path))
		return -ENOENT;
	done = switch_done(dp, dev, &staged);
	err = dev_info_get(dp, dev, done ? 1 : 0, &st->info);
	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		st->live = !bpf_obj_get_info_by_fd(fd, &linfo, &len) &&
			   linfo.xdp.ifindex == st->info.ifindex;
		st->link_id = linfo.id;
		st->prog_id = linfo.prog_id;
		close(fd);
	}
	/* A detach running meanwhile (readers take no lock) removed the pin
	 * before it detached the link. */
	if (!st->live && !pin_exists(path))
		return -ENOENT;
	dev_path(path, dp, dev, done ? "chain_new" : "chain");
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		for (i = 0; i < st->info.chain_len && i < XNF_CHAIN_MAX; i++)
			bpf_map_lookup_elem(fd, &i, &st->nf_prog_id[i]);
		close(fd);
	}
	dev_path(st->pins, dp, dev, NULL);
	return 0;
}

/* Makes the pins describe the chain that runs after a chain set that was
 * stopped midway (killed): one whose switch happened gets its staged pins
 * moved into place, one whose switch did not gets them removed. */
static int dev_recover(struct xnf_dp *dp, const char *dev, char *err,
		       size_t errlen)
{
	char staged[PATH_MAX], path[PATH_MAX];
	struct xnf_dev_info info;
	__u32 zero = 0;
	bool is_staged;
	int ret = 0;

	if (!switch_done(dp, dev, &is_staged)) {
		if (is_staged) {
			dev_path(staged, dp, dev, "prog_new");
			unlink(staged);
			dev_path(staged, dp, dev, "chain_new");
			unlink(staged);
		}
		return 0;
	}
	/* In-flight packets of the old chain may still tail-call into the
	 * old array, whose pin goes away below. */
	xnf_sync_rcu();
	ret = dev_info_get(dp, dev, 1, &info);
	if (!ret) {
		int fd;

		dev_path(path, dp, dev, XNF_MAP_STR(XNF_MAP_DEV));
		fd = bpf_obj_get(path);
		if (fd < 0 || bpf_map_update_elem(fd, &zero, &info, BPF_ANY))
			ret = -errno;
		if (fd >= 0)
			close(fd);
	}
	dev_path(staged, dp, dev, "chain_new");
	dev_path(path, dp, dev, "chain");
	/* A fused chain has no prog array: drop the old one's pin. */
	if (!ret && (pin_exists(staged) ? rename(staged, path) :
					  unlink(path) && errno != ENOENT))
		ret = -errno;
	dev_path(staged, dp, dev, "prog_new");
	dev_path(path, dp, dev, "prog");
	if (!ret && rename(staged, path))
		ret = -errno;
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot complete the chain switch of %s in %s: %s",
				dev, path, strerror(-ret));
	return 0;
}

/* Pins @fd at <dev>/<name>, replacing what is there: the dataplane does not
 * use pins, they only keep objects alive and visible to bpftool. */
static int repin(const struct xnf_dp *dp, int fd, const char *dev,
		 const char *name)
{
	char path[PATH_MAX];

	dev_path(path, dp, dev, name);
	if (unlink(path) && errno != ENOENT)
		return -errno;
	return bpf_obj_pin(fd, path) ? -errno : 0;
}

static int write_info(struct xnf_chain *c, __u32 key, __u32 ifindex,
		      __u32 xdp_flags, const struct xnf_chain_spec *spec)
{
	struct xnf_dev_info info = {
		.ifindex = ifindex,
		.netns = xnf_netns_inode(),
		.xdp_flags = xdp_flags,
		.fused = spec->fused,
		.l3_fib = spec->l3_fib,
		.chain_len = spec->len,
	};

	memcpy(info.nf, spec->nf, sizeof(info.nf));
	return bpf_map_update_elem(xnf_chain_dev_fd(c), &key, &info, BPF_ANY) ?
		       -errno :
		       0;
}

/* Pins the program of @c as "prog<sfx>" and, when tail-called, its prog
 * array as "chain<sfx>". */
static int pin_chain(const struct xnf_dp *dp, struct xnf_chain *c,
		     const char *dev, const char *sfx)
{
	char name[16];
	int err;

	snprintf(name, sizeof(name), "prog%s", sfx);
	err = repin(dp, xnf_chain_prog_fd(c), dev, name);
	if (err || xnf_chain_array_fd(c) < 0)
		return err;
	snprintf(name, sizeof(name), "chain%s", sfx);
	return repin(dp, xnf_chain_array_fd(c), dev, name);
}

/* The tracer (napi_poll, xdp_devmap_xmit, xdp_redirect_err) is shared by
 * all interfaces: loaded by the first attach, removed by the last detach.
 * An attach killed between two pins left some: the missing ones are
 * pinned from a fresh load, whose other links go when they are dropped. */
static int batch_tracer_get(struct xnf_dp *dp, bool *created, char *err,
			    size_t errlen)
{
	struct bpf_link *links[__XNF_TRACER_MAX];
	char path[__XNF_TRACER_MAX][PATH_MAX];
	int ret = 0, i, missing = 0;

	*created = false;
	for (i = 0; i < __XNF_TRACER_MAX; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%s", dp->root,
			 tracer_pins[i]);
		missing += !pin_exists(path[i]);
	}
	if (!missing)
		return 0;
	ret = xnf_batch_tracer(dp, links, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < __XNF_TRACER_MAX; i++) {
		if (!ret && !pin_exists(path[i])) {
			ret = bpf_link__pin(links[i], path[i]);
			if (ret)
				xnf_errf(err, errlen, ret, "cannot pin %s: %s",
					 path[i], strerror(-ret));
			*created |= !ret;
		}
		bpf_link__destroy(links[i]);
	}
	return ret;
}

static void batch_tracer_put_if_unused(struct xnf_dp *dp)
{
	char names[1][16];

	if (xnf_dev_list(dp, names, 1))
		return;
	tracer_unpin(dp);
}

/* 0 when no AF_XDP worker runs on @dev; else -EBUSY naming it. */
static int workers_running(struct xnf_dp *dp, const char *dev, char *err,
			   size_t errlen)
{
	struct xnf_worker_stats w;
	int fd, ret = 0;
	__u32 q;

	fd = xnf_workers_open(dp->root, dev, false);
	if (fd < 0)
		return 0;
	for (q = 0; q < XNF_WORKER_MAX && !ret; q++)
		if (!bpf_map_lookup_elem(fd, &q, &w) && xnf_worker_alive(&w))
			ret = xnf_errf(err, errlen, -EBUSY,
				       "an AF_XDP worker (pid %u) serves %s queue %u; stop it first: kill -TERM %u",
				       w.pid, dev, q, w.pid);
	close(fd);
	return ret;
}

/* ---- attach ---- */

static int link_create_err(int ret, const char *dev, __u32 xdp_flags, char *err,
			   size_t errlen)
{
	if (ret == -EOPNOTSUPP || ret == -EINVAL)
		return xnf_errf(err, errlen, ret,
				"cannot attach to %s in %s mode: %s; the driver may not support native XDP (try 'mode generic') or its MTU is too large",
				dev,
				xdp_flags == XDP_FLAGS_SKB_MODE ? "generic" :
								  "native",
				strerror(-ret));
	if (ret == -ENOSPC)
		return xnf_errf(err, errlen, ret,
				"cannot attach to %s: %s; a veth takes XDP only with as many receive queues as its peer has transmit queues (ethtool -l on both ends)",
				dev, strerror(-ret));
	if (ret == -EBUSY || ret == -EEXIST)
		return xnf_errf(err, errlen, ret,
				"%s already has an XDP program; xnf never replaces a program it did not attach",
				dev);
	return xnf_errf(err, errlen, ret, "cannot attach to %s: %s", dev,
			strerror(-ret));
}

/* A failed attach on an instance that its own open created, and that
 * nothing was written to since, takes the instance away again: a refused
 * first attach leaves no trace. */
static void drop_if_fresh(struct xnf_dp *dp)
{
	if (dp->created && xnf_dev_list(dp, NULL, 0) == 0)
		xnf_dp_destroy(dp->root);
}

/* The XDP link of o->dev in the instance being upgraded from, when it is
 * what runs there (@prog_id) in the mode asked for: its fd, or -1. */
static int adopt_link(const struct xnf_attach_opts *o, __u32 prog_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_link_info info = {};
	__u32 len = sizeof(info), mode;
	char path[PATH_MAX];
	int fd;

	if (!o->adopt_root ||
	    xnf_dev_path(o->adopt_root, o->dev, "link", path, sizeof(path)))
		return -1;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	mode = o->xdp_flags == XDP_FLAGS_SKB_MODE ? XDP_ATTACHED_SKB :
						    XDP_ATTACHED_DRV;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.type != BPF_LINK_TYPE_XDP || info.xdp.ifindex != o->ifindex ||
	    info.prog_id != prog_id || bpf_xdp_query(o->ifindex, 0, &q) ||
	    q.attach_mode != mode) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool adoptable(const struct xnf_attach_opts *o, __u32 prog_id)
{
	int fd = adopt_link(o, prog_id);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* What makes an attach impossible, before anything is created. */
static int attach_check(struct xnf_dp *dp, const struct xnf_attach_opts *o,
			char *err, size_t errlen)
{
	char path[PATH_MAX];
	__u32 prog_id = 0;

	if (xnf_dev_name_check(o->dev, err, errlen))
		return -EINVAL;
	if (!o->chain.len)
		return xnf_errf(err, errlen, -EINVAL,
				"no chain given for %s: an attachment runs a chain of one NF or more",
				o->dev);
	if (o->chain.fused && o->chain.len > XNF_FUSED_MAX)
		return xnf_errf(err, errlen, -E2BIG,
				"a fused chain holds at most %d NFs",
				XNF_FUSED_MAX);
	if (bpf_xdp_query_id(o->ifindex, 0, &prog_id) == 0 && prog_id &&
	    !adoptable(o, prog_id))
		return xnf_errf(err, errlen, -EBUSY,
				"%s already runs XDP program id %u; xnf never replaces a program it did not attach: if it is xnf's, change its chain; if not, remove it first (ip link set dev %s xdp off)",
				o->dev, prog_id, o->dev);
	dev_path(path, dp, o->dev, "link");
	if (pin_exists(path))
		return xnf_errf(err, errlen, -EEXIST,
				"%s has a stale xnf attachment pinned at %s: detach it first",
				o->dev, path);
	/* What a killed attach or detach left, if repair() could not remove
	 * it (it said why). */
	dev_path(path, dp, o->dev, NULL);
	if (pin_exists(path))
		return xnf_errf(err, errlen, -EEXIST,
				"%s has pins of an interrupted attach or detach at %s that could not be removed; remove them (rm -r %s) and attach again",
				o->dev, path, path);
	return 0;
}

/* Records @pst (what placement changed, or what an upgraded instance's
 * placement had changed) in @dir, with what @o asked for, so that `xnf
 * save` says it again. */
static int place_record(const struct xnf_attach_opts *o,
			struct xnf_place_state *pst, const char *dir, char *err,
			size_t errlen)
{
	int ret;

	pst->info.req_queues = o->strict_queues && o->plan ? o->plan->nqueues : 0;
	pst->info.flags &= ~XNF_PLACE_REQ_CORES;
	memset(pst->info.req_cores, 0, sizeof(pst->info.req_cores));
	if (o->cores) {
		pst->info.flags |= XNF_PLACE_REQ_CORES;
		memcpy(pst->info.req_cores, o->cores->w,
		       sizeof(pst->info.req_cores));
	}
	ret = xnf_place_save(dir, pst);
	if (ret)
		xnf_errf(err, errlen, ret,
			 "cannot record the placement of %s in %s: %s", o->dev,
			 dir, strerror(-ret));
	return ret;
}

int xnf_attach(struct xnf_dp *dp, const struct xnf_attach_opts *o, char *err,
	       size_t errlen)
{
	struct xnf_chain_spec spec = o->chain;
	struct xnf_place_state *pst = NULL;
	bool created_dir, port_added = false, tracer_created = false;
	bool watched = false;
	char path[PATH_MAX], perr[XNF_PLACE_ERR_LEN] = "", why[512];
	struct xnf_chain *c = NULL;
	int link_fd = -1, old_prog = -1, ret;
	bool adopted = false, placed;
	__u32 prog_id = 0;
	LIBBPF_OPTS(bpf_link_create_opts, lopts);

	ret = attach_check(dp, o, err, errlen);
	if (ret) {
		drop_if_fresh(dp);
		return ret;
	}
	/* Taking over an upgraded instance's link: the host placement it
	 * made stays, recorded anew here, so that detach restores what was
	 * there before either. */
	if (!bpf_xdp_query_id(o->ifindex, 0, &prog_id) && prog_id)
		link_fd = adopt_link(o, prog_id);
	if (link_fd >= 0) {
		old_prog = bpf_prog_get_fd_by_id(prog_id);
		if (old_prog < 0) {
			ret = -errno;
			close(link_fd);
			return xnf_errf(err, errlen, ret,
					"cannot take over the XDP link of %s: %s",
					o->dev, strerror(-ret));
		}
		pst = calloc(1, sizeof(*pst));
		xnf_dev_path(o->adopt_root, o->dev, NULL, path, sizeof(path));
		if (pst && xnf_place_load(path, pst)) {
			free(pst);
			pst = NULL;
		}
	}
	placed = o->plan && !pst;
	if (pst && !placed && pst->info.node >= 0) {
		spec.numa = true;
		spec.numa_node = pst->info.node;
	}
	if (placed) {
		pst = calloc(1, sizeof(*pst));
		if (!pst)
			return xnf_errf(err, errlen, -ENOMEM, "out of memory");
		if (o->plan->node >= 0) {
			spec.numa = true;
			spec.numa_node = o->plan->node;
		}
	}
	dev_path(path, dp, o->dev, NULL);
	created_dir = !pin_exists(path);

	ret = xnf_chain_load(dp, o->dev, &spec, &c, why, sizeof(why));
	if (ret) {
		xnf_errf(err, errlen, ret, "cannot load the chain for %s: %s",
			 o->dev, why);
		goto out_undo;
	}
	xnf_crash_point("attach:loaded");
	ret = write_info(c, 0, o->ifindex, o->xdp_flags, &spec);
	if (!ret)
		ret = pin_chain(dp, c, o->dev, "");
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "cannot pin the chain of %s under %s: %s", o->dev,
			 path, strerror(-ret));
		goto out_undo;
	}
	xnf_crash_point("attach:pinned");
	ret = xnf_port_make(dp, o->ifindex, &port_added);
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "cannot add %s to the egress ports (%s, its counters in %s): %s",
			 o->dev, XNF_MAP_STR(XNF_MAP_TX),
			 XNF_MAP_STR(XNF_MAP_XMIT), strerror(-ret));
		goto out_undo;
	}
	xnf_crash_point("attach:port");
	ret = xnf_batch_watch(dp, o->ifindex);
	watched = !ret;
	if (ret)
		snprintf(why, sizeof(why), "%s", strerror(-ret));
	else
		ret = batch_tracer_get(dp, &tracer_created, why, sizeof(why));
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "cannot set up the batch-size histogram of %s: %s",
			 o->dev, why);
		goto out_undo;
	}
	xnf_crash_point("attach:watched");
	if (placed) {
		/* Channels before the XDP attach, so the program starts on
		 * the rings it will keep; recorded before anything else may
		 * fail, so that the undo below and detach find it. */
		ret = xnf_place_apply_channels(o->plan, o->strict_queues, pst,
					       perr, sizeof(perr));
		if (ret) {
			xnf_errf(err, errlen, ret, "%s", perr);
			goto out_undo;
		}
	}
	if (pst) {
		ret = place_record(o, pst, path, err, errlen);
		if (ret)
			goto out_undo;
	}

	lopts.flags = o->xdp_flags;
	if (link_fd >= 0) {
		/* One switch: every packet runs the old chain or the new. */
		if (bpf_link_update(link_fd, xnf_chain_prog_fd(c), NULL)) {
			ret = xnf_errf(err, errlen, -errno,
				       "cannot take over the XDP link of %s: %s",
				       o->dev, strerror(errno));
			goto out_undo;
		}
		adopted = true;
	} else {
		link_fd = bpf_link_create(xnf_chain_prog_fd(c), o->ifindex,
					  BPF_XDP, &lopts);
	}
	if (link_fd < 0) {
		ret = link_create_err(-errno, o->dev, o->xdp_flags, err, errlen);
		goto out_undo;
	}
	/* Attached, but the link lives only as long as this process until
	 * its pin is made: the pin is what makes the attach happen. */
	xnf_crash_point("attach:link");
	ret = repin(dp, link_fd, o->dev, "link");
	if (ret) {
		xnf_errf(err, errlen, ret, "cannot pin the XDP link of %s: %s",
			 o->dev, strerror(-ret));
		goto out_undo;
	}
	xnf_crash_point("attach:linked");
	if (adopted) {
		char old[PATH_MAX];

		/* Pinned here now: the old instance lets go of it. */
		xnf_dev_path(o->adopt_root, o->dev, "link", old, sizeof(old));
		unlink(old);
	}
	if (placed) {
		/* After the attach, which re-created IRQ handlers and napi
		 * threads. What cannot be set is reported, not fatal. */
		xnf_place_apply_cpus(o->plan, pst);
		ret = xnf_place_save(path, pst);
		if (ret) {
			xnf_errf(err, errlen, ret,
				 "cannot record the placement of %s in %s: %s",
				 o->dev, path, strerror(-ret));
			dev_path(path, dp, o->dev, "link");
			unlink(path);
			goto out_undo;
		}
	}
	close(link_fd);
	if (old_prog >= 0)
		close(old_prog);
	xnf_chain_free(c);
	free(pst);
	dp->created = false;
	return 0;

out_undo:
	/* Threaded NAPI goes back while XDP still runs (a veth without XDP
	 * has no NAPI to switch); channels and IRQs once it is gone. */
	if (placed)
		xnf_place_restore_napi("", o->dev, pst);
	/* A link taken over runs its old program again; closing an
	 * unpinned link of our own detaches it. */
	if (adopted && bpf_link_update(link_fd, old_prog, NULL))
		pr_warn("%s runs the new chain, which is being removed: %s\n",
			o->dev, strerror(errno));
	if (link_fd >= 0)
		close(link_fd);
	if (old_prog >= 0)
		close(old_prog);
	if (placed)
		xnf_place_restore_host("", o->dev, pst);
	free(pst);
	xnf_chain_free(c);
	if (watched)
		xnf_batch_unwatch(dp, xnf_netns_inode(), o->ifindex);
	if (port_added)
		xnf_port_del(dp, o->ifindex);
	if (created_dir)
		xnf_dev_remove(dp, o->dev);
	if (tracer_created)
		batch_tracer_put_if_unused(dp);
	drop_if_fresh(dp);
	return ret;
}

/* ---- detach, and what killed writers left ---- */

/* The placement attach recorded for @dev, or NULL. */
static struct xnf_place_state *place_get(struct xnf_dp *dp, const char *dev)
{
	struct xnf_place_state *pst = calloc(1, sizeof(*pst));
	char path[PATH_MAX];

	dev_path(path, dp, dev, NULL);
	if (pst && xnf_place_load(path, pst)) {
		free(pst);
		pst = NULL;
	}
	return pst;
}

/*
 * Everything of @dev but its link pin, which is gone: the device is not
 * attached, and this removes what an attach made before its link, or what
 * a detach leaves after it. In-flight packets are waited for; then the
 * channels and IRQs the placement changed go back, the egress port and
 * its xmit counters go (unless a route, FDB entry or cross-connect still
 * sends to it), the batch histogram too, then the pins (the programs and
 * prog arrays go with them), and the napi_poll tracer when no device is
 * attached any more.
 * Every step reads what it needs from pins the later steps remove, and
 * finds undone what it does, so a release that is killed is finished by
 * the next (repair).
 */
static int dev_release(struct xnf_dp *dp, const char *dev, char *err,
		       size_t errlen)
{
	struct xnf_place_state *pst;
	struct xnf_dev_info info;
	char path[PATH_MAX];
	int ret;

	xnf_sync_rcu();
	pst = place_get(dp, dev);
	if (pst)
		xnf_place_restore_host("", dev, pst);
	free(pst);
	xnf_crash_point("release:host");
	/* No ifindex yet: the attach was killed before it wrote any. */
	if (!dev_info_get(dp, dev, 0, &info) && info.ifindex) {
		if (!xnf_port_in_use(dp, info.ifindex))
			xnf_port_drop(dp, info.netns, info.ifindex);
		xnf_batch_unwatch(dp, info.netns, info.ifindex);
	}
	xnf_crash_point("release:port");
	ret = xnf_dev_remove(dp, dev);
	if (ret) {
		dev_path(path, dp, dev, NULL);
		return xnf_errf(err, errlen, ret,
				"detached %s but could not remove %s: %s", dev,
				path, strerror(-ret));
	}
	xnf_crash_point("release:removed");
	batch_tracer_put_if_unused(dp);
	return 0;
}

static bool released(const struct xnf_dp *dp, const char *dev)
{
	int i;

	for (i = 0; i < dp->n_released; i++)
		if (!strcmp(dp->released[i], dev))
			return true;
	return false;
}

int xnf_detach(struct xnf_dp *dp, const char *dev, char *err, size_t errlen)
{
	struct xnf_place_state *pst;
	char path[PATH_MAX];
	int link_fd, ret;

	if (xnf_dev_name_check(dev, err, errlen))
		return -EINVAL;
	dev_path(path, dp, dev, "link");
	/* Run again after it was killed: this open's repair finished it. */
	if (!pin_exists(path) && released(dp, dev))
		return 0;
	if (!pin_exists(path))
		return xnf_errf(err, errlen, -ENOENT,
				"xnf is not attached to %s", dev);
	ret = workers_running(dp, dev, err, errlen);
	if (ret)
		return ret;
	/* A killed busy-poll worker's record goes with the map: its NAPI
	 * settings go back first. */
	ret = xnf_workers_napi_restore(dp->root, "", dev, err, errlen);
	if (ret)
		return ret;
	dev_recover(dp, dev, NULL, 0);
	/* Threaded NAPI and the napi threads go back while XDP still runs
	 * (a veth without XDP has no NAPI to switch); channels and IRQs in
	 * dev_release(). */
	pst = place_get(dp, dev);
	if (pst)
		xnf_place_restore_napi("", dev, pst);
	free(pst);
	/* The pin first: from here on the device is detached, whatever
	 * becomes of this process. Then the link is detached through an fd
	 * of its own: a reader holding one (they take no lock) would keep it
	 * attached until it closes it. */
	link_fd = bpf_obj_get(path);
	if (unlink(path)) {
		ret = xnf_errf(err, errlen, -errno, "cannot remove %s: %s",
			       path, strerror(errno));
		if (link_fd >= 0)
			close(link_fd);
		return ret;
	}
	xnf_crash_point("detach:unpinned");
	if (link_fd >= 0) {
		bpf_link_detach(link_fd);
		close(link_fd);
	}
	xnf_crash_point("detach:unlinked");
	return dev_release(dp, dev, err, errlen);
}

/* Completes or undoes what writers killed midway left, before this writer
 * does anything (it holds the lock, so no other writer runs): a device
 * directory without a link pin is an attach that had not pinned its link
 * (its link died with it) or a detach that had removed it; either way
 * nothing runs there, so the rest goes (dev_release). A device with a link
 * may hold a staged chain switch (dev_recover). The napi_poll tracer goes
 * when no device is attached. What cannot be removed is a warning; attach
 * refuses that device until it is gone. */
static void repair(struct xnf_dp *dp)
{
	char(*names)[16] = NULL, path[PATH_MAX], msg[512];
	int n, i;

	n = dev_dirs(dp, NULL, 0, false);
	if (n > 0)
		names = calloc(n, sizeof(*names));
	if (names)
		n = dev_dirs(dp, names, n, false);
	for (i = 0; names && i < n; i++) {
		dev_path(path, dp, names[i], "link");
		if (pin_exists(path)) {
			if (dev_recover(dp, names[i], msg, sizeof(msg)))
				pr_warn("%s\n", msg);
			continue;
		}
		pr_info("%s: removing what an interrupted attach or detach left\n",
			names[i]);
		if (dev_release(dp, names[i], msg, sizeof(msg)))
			pr_warn("%s\n", msg);
		else
			memmove(names[dp->n_released++], names[i], 16);
	}
	if (dp->n_released)
		dp->released = names;
	else
		free(names);
	/* A release killed after the pins went leaves the tracer alone. */
	batch_tracer_put_if_unused(dp);
	/* A route batch never committed (its writer was killed). */
	if (xnf_route_copies_repair(dp))
		pr_warn("cannot put the copies of the route tables back in step; the next writer tries again\n");
}

/* In xnf itself no step kills anything (see priv.h). */
__attribute__((weak)) void xnf_crash_point(const char *step)
{
	(void)step;
}

/* ---- chain set ---- */

int xnf_chain_set(struct xnf_dp *dp, const char *dev,
		  const struct xnf_chain_change *chg, char *err, size_t errlen)
{
	struct xnf_chain_spec spec = {};
	struct xnf_dev_info info;
	struct xnf_chain *c = NULL;
	char path[PATH_MAX], why[512];
	int link_fd = -1, ret;

	if (xnf_dev_name_check(dev, err, errlen))
		return -EINVAL;
	ret = dev_recover(dp, dev, err, errlen);
	if (ret)
		return ret;
	if (dev_info_get(dp, dev, 0, &info))
		return xnf_errf(err, errlen, -ENOENT,
				"xnf is not attached to %s: attach it first",
				dev);
	spec.len = chg->len;
	memcpy(spec.nf, chg->nf, sizeof(spec.nf));
	spec.fused = chg->fused == XNF_KEEP ? info.fused : chg->fused == XNF_ON;
	spec.l3_fib = chg->l3_fib == XNF_KEEP ? info.l3_fib :
						chg->l3_fib == XNF_ON;
	if (!spec.len)
		return xnf_errf(err, errlen, -EINVAL, "no chain given");
	if (spec.fused && spec.len > XNF_FUSED_MAX)
		return xnf_errf(err, errlen, -E2BIG,
				"a fused chain holds at most %d NFs",
				XNF_FUSED_MAX);

	dev_path(path, dp, dev, "link");
	link_fd = bpf_obj_get(path);
	if (link_fd < 0)
		return xnf_errf(err, errlen, -errno,
				"cannot open the XDP link of %s at %s: %s", dev,
				path, strerror(errno));
	ret = xnf_chain_load(dp, dev, &spec, &c, why, sizeof(why));
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "cannot load the new chain for %s: %s; the old one still runs",
			 dev, why);
		goto out;
	}
	/* Staged pins first: if this process dies after the switch, they
	 * keep the new chain's prog array filled (it is flushed when its last
	 * user reference goes), and dev_recover() finishes the job. */
	ret = write_info(c, 1, info.ifindex, info.xdp_flags, &spec);
	if (!ret)
		ret = pin_chain(dp, c, dev, "_new");
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "cannot pin the new chain of %s: %s; the old one still runs",
			 dev, strerror(-ret));
		goto out_unstage;
	}
	if (bpf_link_update(link_fd, xnf_chain_prog_fd(c), NULL)) {
		ret = xnf_errf(err, errlen, -errno,
			       "cannot switch %s to the new chain: %s; the old one still runs",
			       dev, strerror(errno));
		goto out_unstage;
	}
	/* The new chain runs: move its pins into place (after waiting for
	 * packets still in the old one). */
	ret = dev_recover(dp, dev, err, errlen);
	goto out;
out_unstage:
	dev_recover(dp, dev, NULL, 0);
out:
	xnf_chain_free(c);
	close(link_fd);
	return ret;
}
