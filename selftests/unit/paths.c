// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Operator input that becomes a path or an ifindex (lib/paths.c): device
 * names as the kernel has them, pin paths that do not fit, pin roots; and
 * the library calls that take a device refusing a name that walks into
 * another instance's pins. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fixture.h"
#include "worker.h"

/* A second instance beside the fixture's, as XNF_PIN_ROOT=.../b is beside
 * .../a; and the name that walks from one's dev/ into the other's. */
#define B_ROOT "/sys/fs/bpf/xnf-ut-b"
#define B_WALK "../../xnf-ut-b/dev/ut1"
#define B_PINS B_ROOT "/dev/ut1"

TEST(paths_dev_name)
{
	static const char *const good[] = { "ut0", "eth0", "a",
					    "e.1", "-j",   "0123456789abcde" };
	static const char *const bad[] = {
		"",
		".",
		"..",
		"../../b/dev/e0",
		"d0/",
		"/d0",
		"d0:1",
		"d0 ",
		" d0",
		"a\tb",
		"d0\n",
		"d0\x01",
		"0123456789abcdef",
	};
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ASSERT_OK(xnf_dev_name_check(good[i], err, sizeof(err)), good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ASSERT_EQ(xnf_dev_name_check(bad[i], err, sizeof(err)), -EINVAL,
			  bad[i]);
		ASSERT_NEQ(err[0], '\0', "a message");
	}
	ASSERT_EQ(xnf_dev_name_check(NULL, NULL, 0), -EINVAL, "NULL");
}

TEST(paths_dev_ifindex)
{
	struct fx f;
	__u32 ifindex = 0;
	char err[256];

	if (!fx_open(&f))
		return;
	ASSERT_OK(xnf_dev_ifindex("ut0", &ifindex, err, sizeof(err)), "ut0");
	ASSERT_EQ(ifindex, f.ifindex[0], "its ifindex");
	/* The kernel's SIOCGIFINDEX cuts an alias at ':': "ut0:1" is ut0. */
	ASSERT_EQ(xnf_dev_ifindex("ut0:1", &ifindex, err, sizeof(err)), -EINVAL,
		  "an alias name");
	ASSERT_EQ(xnf_dev_ifindex("nosuch0", &ifindex, err, sizeof(err)),
		  -ENODEV, "no such device");
	fx_close(&f);
}

TEST(paths_dev_path)
{
	char buf[PATH_MAX], small[20];

	ASSERT_OK(xnf_dev_path("/r", "d0", "link", buf, sizeof(buf)), "path");
	ASSERT_EQ(strcmp(buf, "/r/dev/d0/link"), 0, "the path");
	ASSERT_OK(xnf_dev_path("/r", NULL, NULL, buf, sizeof(buf)), "dev dir");
	ASSERT_EQ(strcmp(buf, "/r/dev"), 0, "the dev dir");
	ASSERT_EQ(xnf_dev_path("/r", "../x", "link", buf, sizeof(buf)), -EINVAL,
		  "traversal");
	ASSERT_EQ(strcmp(buf, ""), 0, "no path");
	/* "/root/dev/d0/xnf_stats" cut to 19 bytes would name another
	 * file. */
	ASSERT_EQ(xnf_dev_path("/root", "d0", "xnf_stats", small, sizeof(small)),
		  -ENAMETOOLONG, "does not fit");
	ASSERT_EQ(strcmp(small, ""), 0, "no cut path");
}

TEST(paths_root_check)
{
	static const char *const bad[] = {
		"",
		"xnf",
		"/sys/fs/bpf",	    /* the mount: other programs' pins */
		"/sys/fs/bpf/",	    /* the same */
		"/sys/fs/bpf/xnf/", /* two spellings of one root */
		"/sys/fs/bpf//xnf",
		"/sys/fs/bpf/./xnf",
		"/sys/fs/bpf/a/../xnf",
		"/sys/fs/bpf/x\ny",
		"/proc/xnf", /* not on a bpffs */
	};
	char err[512], root[XNF_ROOT_MAX + 16];
	size_t i;

	/* fx_open makes the sandbox with a bpffs on /sys/fs/bpf. */
	struct fx f;

	if (!fx_open(&f))
		return;
	ASSERT_OK(xnf_root_check(FX_ROOT, err, sizeof(err)), FX_ROOT);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ASSERT_LT(xnf_root_check(bad[i], err, sizeof(err)), 0, bad[i]);
		ASSERT_NEQ(err[0], '\0', "a message");
	}
	snprintf(root, sizeof(root), "/sys/fs/bpf/%0*d", XNF_ROOT_MAX, 0);
	ASSERT_EQ(xnf_root_check(root, err, sizeof(err)), -ENAMETOOLONG,
		  "too long");
	fx_close(&f);
}

/* Entries of @dir, or -1 when it does not exist. */
static int entries(const char *dir)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* Instance b has a chain loaded for ut1; instance a (the fixture's) is
 * asked, by every call that takes a device, for B_WALK: each refuses, and
 * b's pins stay as they were. */
TEST(paths_calls_refuse_another_instance)
{
	struct xnf_chain_spec spec;
	struct xnf_chain *c = NULL;
	struct xnf_dev_status st;
	struct xnf_dp *b = NULL;
	int before, fd;
	char err[512] = "";
	struct fx f;

	if (!fx_open(&f))
		return;
	xnf_dp_destroy(B_ROOT);
	if (!ASSERT_OK(xnf_dp_open(B_ROOT, true, &b, err, sizeof(err)), err) ||
	    !ASSERT_OK(xnf_chain_parse("l3fwd,l2fwd", &spec, err, sizeof(err)),
		       err) ||
	    !ASSERT_OK(xnf_chain_load(b, "ut1", &spec, &c, err, sizeof(err)), err))
		goto out;
	xnf_chain_free(c);
	c = NULL;
	before = entries(B_PINS);
	ASSERT_GT(before, 0, "b's pins");

	SUBTEST("chain_load") {
		ASSERT_EQ(xnf_chain_load(f.dp, B_WALK, &spec, &c, err,
					 sizeof(err)),
			  -EINVAL, "chain load");
		xnf_chain_free(c);
		c = NULL;
	}
	SUBTEST("chain_set") {
		struct xnf_chain_change chg = { .len = 1, .nf = { XNF_NF_L2FWD } };

		ASSERT_EQ(xnf_chain_set(f.dp, B_WALK, &chg, err, sizeof(err)),
			  -EINVAL, "chain set");
	}
	SUBTEST("detach") {
		ASSERT_EQ(xnf_detach(f.dp, B_WALK, err, sizeof(err)), -EINVAL,
			  "detach");
		ASSERT_EQ(xnf_dev_remove(f.dp, B_WALK), -EINVAL, "remove");
	}
	SUBTEST("status") {
		ASSERT_EQ(xnf_dev_status(f.dp, B_WALK, &st), -EINVAL, "status");
	}
	SUBTEST("workers") {
		fd = xnf_workers_open(FX_ROOT, B_WALK, true);
		ASSERT_EQ(fd, -EINVAL, "workers map");
		if (fd >= 0)
			close(fd);
	}
	ASSERT_EQ(entries(B_PINS), before, "b's pins unchanged");
out:
	xnf_dp_close(b);
	xnf_dp_destroy(B_ROOT);
	fx_close(&f);
}

/* xnf_open(@root, create): what it returns, with the instance closed
 * again when it (wrongly) opened one. */
static int open_close(const char *root)
{
	struct xnf_dp *dp = NULL;
	char err[512];
	int ret;

	ret = xnf_open(root, XNF_OPEN_CREATE, 0, &dp, err, sizeof(err));
	if (!ret)
		xnf_dp_close(dp);
	return ret;
}

/* A root xnf_open refuses is not created: not outside a bpffs, not the
 * bpffs mount itself (its tables would sit among other programs' pins),
 * not through "..". */
TEST(paths_open_leaves_no_root)
{
	char dir[] = "/tmp/xnf-ut-root.XXXXXX", root[64];
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!ASSERT_NEQ(mkdtemp(dir), NULL, "temporary directory")) {
		fx_close(&f);
		return;
	}
	snprintf(root, sizeof(root), "%s/xnf", dir);
	SUBTEST("outside_bpffs") {
		ASSERT_EQ(open_close(root), -ENOTSUP, "a root outside bpffs");
		ASSERT_EQ(access(root, F_OK), -1, "not created");
	}
	SUBTEST("bpffs_mount") {
		ASSERT_LT(open_close("/sys/fs/bpf"), 0, "the bpffs mount itself");
		ASSERT_EQ(access("/sys/fs/bpf/tables", F_OK), -1,
			  "no tables on the mount");
	}
	SUBTEST("walks_out") {
		ASSERT_LT(open_close(FX_ROOT "/../xnf-ut-walk"), 0,
			  "a root with ..");
		ASSERT_EQ(access("/sys/fs/bpf/xnf-ut-walk", F_OK), -1,
			  "not created");
	}
	fx_sh("rm -rf %s", dir);
	fx_close(&f);
}

/* xnf_open(@root, @flags): its return, the instance closed again. */
static int open_flags(const char *root, unsigned int flags)
{
	struct xnf_dp *dp = NULL;
	char err[512];
	int ret;

	ret = xnf_open(root, flags, 0, &dp, err, sizeof(err));
	if (ret)
		printf("  %s: %s\n", root, err);
	else
		xnf_dp_close(dp);
	return ret;
}

/* On a bpffs of mode 1777 (what `mount -t bpf bpf DIR` gives), names
 * made first by another user (uid 65534, by chown) or open to one: a root
 * of theirs, a root below a directory of theirs, a symbolic link, a root
 * anyone may write to, one below a directory anyone may write to that is
 * not sticky. Each is refused and nothing is written into it; a root
 * below a sticky directory is made, mode 0700; a directory in it that
 * stops being root's is refused to a writer and a reader alike. */
TEST(paths_root_trust)
{
	static const struct {
		const char *root, *setup;
		int ret, reader; /* a reader finds no root that is not there */
	} bad[] = {
		{ "theirs", "mkdir -m 0777 $P/theirs && chown 65534 $P/theirs",
		  -EPERM, -EPERM },
		{ "site/xnf", "mkdir $P/site && chown 65534 $P/site", -EPERM,
		  -ENOENT },
		{ "link", "mkdir -m 0700 $P/mine && ln -s $P/mine $P/link",
		  -ELOOP, -ELOOP },
		{ "open", "mkdir -m 0777 $P/open", -EPERM, -EPERM },
		{ "group/xnf", "mkdir -m 0775 $P/group", -EPERM, -ENOENT },
	};
	char dir[] = "/tmp/xnf-ut-pub.XXXXXX", root[128];
	size_t i;
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!ASSERT_NEQ(mkdtemp(dir), NULL, "temporary directory") ||
	    !ASSERT_OK(fx_sh("mount -t bpf bpf %s", dir), "a bpffs, mode 1777")) {
		fx_close(&f);
		return;
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(root, sizeof(root), "%s/%s", dir, bad[i].root);
		if (!ASSERT_OK(fx_sh("P=%s; %s", dir, bad[i].setup), bad[i].setup))
			continue;
		ASSERT_EQ(open_flags(root, XNF_OPEN_CREATE), bad[i].ret, root);
		ASSERT_EQ(open_flags(root, XNF_OPEN_READ), bad[i].reader,
			  "reader");
	}
	ASSERT_EQ(fx_sh("test -z \"$(find %s -mindepth 2)\"", dir), 0,
		  "nothing written into any of them");

	fx_sh("mkdir -m 1777 %s/sticky", dir);
	snprintf(root, sizeof(root), "%s/sticky/xnf", dir);
	ASSERT_OK(open_flags(root, XNF_OPEN_CREATE), "below a sticky directory");
	ASSERT_EQ(fx_sh("test \"$(stat -c '%%u %%a' %s)\" = '0 700'", root), 0,
		  "made root's, mode 0700");
	fx_sh("chown 65534 %s/tables", root);
	ASSERT_EQ(open_flags(root, 0), -EPERM, "tables/ not root's: writer");
	ASSERT_EQ(open_flags(root, XNF_OPEN_READ), -EPERM, "and reader");
	fx_sh("chown 0 %s/tables", root);
	ASSERT_OK(open_flags(root, XNF_OPEN_READ), "root's again");
	xnf_dp_destroy(root);
	fx_sh("umount %s && rmdir %s", dir, dir);
	fx_close(&f);
}
