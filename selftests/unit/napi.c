// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Busy-poll mode's NAPI settings (userspace/napi.c) on a sysfs fixture:
 * set for a worker, restored when the last busy-poll worker of the device
 * stops, kept while another lives, and restored by the next start after a
 * worker that was killed (its record left in the workers' entries).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test.h"
#include "xnf.h"
#include "worker.h"
#include "napi.h"

#define DEV "nd0"

struct nfx {
	char root[64];
	struct xnf_worker_stats ws[XNF_WORKER_MAX];
	char err[256];
};

static void put(const struct nfx *f, const char *file, const char *val)
{
	char path[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/sys/class/net/" DEV "/%s", f->root,
		 file);
	fp = fopen(path, "w");
	if (ASSERT_TRUE(fp != NULL, path)) {
		fputs(val, fp);
		fclose(fp);
	}
}

static long get(const struct nfx *f, const char *file)
{
	char path[PATH_MAX];
	long v = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/sys/class/net/" DEV "/%s", f->root,
		 file);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	if (fscanf(fp, "%ld", &v) != 1)
		v = -1;
	fclose(fp);
	return v;
}

/* A fixture device whose settings are @defer and @flush. */
static bool nfx_init(struct nfx *f, const char *defer, const char *flush)
{
	char dir[PATH_MAX];

	memset(f, 0, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "/tmp/xnf-napi.XXXXXX");
	if (!ASSERT_TRUE(mkdtemp(f->root) != NULL, "mkdtemp"))
		return false;
	snprintf(dir, sizeof(dir), "mkdir -p %s/sys/class/net/" DEV, f->root);
	if (!ASSERT_EQ(system(dir), 0, dir))
		return false;
	put(f, "napi_defer_hard_irqs", defer);
	put(f, "gro_flush_timeout", flush);
	return true;
}

static void nfx_fini(struct nfx *f)
{
	char cmd[PATH_MAX];

	if (!strncmp(f->root, "/tmp/xnf-napi.", 14)) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", f->root);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", f->root);
	}
}

/* Entry @q as a running worker: this thread (alive) or a process that is
 * gone (a killed worker). */
static void running(struct nfx *f, __u32 q, bool alive)
{
	pid_t pid = getpid(), tid = gettid();

	if (!alive) {
		pid = fork();
		if (!pid)
			_exit(0);
		waitpid(pid, NULL, 0);
		tid = pid;
	}
	f->ws[q].state = XNF_W_RUNNING;
	f->ws[q].pid = pid;
	f->ws[q].tid = tid;
}

static bool is(const struct nfx *f, long defer, long flush, const char *what)
{
	return ASSERT_EQ(get(f, "napi_defer_hard_irqs"), defer, what) &&
	       ASSERT_EQ(get(f, "gro_flush_timeout"), flush, what);
}

TEST(napi_take_release)
{
	struct nfx f;

	if (!nfx_init(&f, "0\n", "0\n"))
		goto out;
	running(&f, 0, true);
	if (!ASSERT_OK(xnf_napi_take(f.root, DEV, f.ws, 1, 2, 200000, f.err,
				     sizeof(f.err)),
		       f.err) ||
	    !is(&f, 2, 200000, "set while it runs"))
		goto out;
	ASSERT_EQ(f.ws[0].bp.saved, 1, "recorded");
	ASSERT_EQ(f.ws[0].bp.defer, 2, "read back");
	ASSERT_EQ(f.ws[0].bp.flush_ns, 200000, "read back");
	ASSERT_EQ(f.ws[0].bp.old_defer, 0, "previous");
	ASSERT_EQ(f.ws[0].bp.old_flush_ns, 0, "previous");
	f.ws[0].state = XNF_W_STOPPED;
	if (!ASSERT_OK(xnf_napi_release(f.root, DEV, f.ws, 1, f.err,
					sizeof(f.err)),
		       f.err))
		goto out;
	is(&f, 0, 0, "restored at its stop");
	ASSERT_EQ(f.ws[0].bp.saved, 0, "record gone");
out:
	nfx_fini(&f);
}

/* SIGKILL leaves the record; the next start (release of nothing) restores. */
TEST(napi_killed_worker_restored)
{
	struct nfx f;
	__u32 q;

	if (!nfx_init(&f, "5\n", "1000\n"))
		goto out;
	running(&f, 1, true);
	if (!ASSERT_OK(xnf_napi_take(f.root, DEV, f.ws, 1 << 1, 3, 50000, f.err,
				     sizeof(f.err)),
		       f.err) ||
	    !is(&f, 3, 50000, "set"))
		goto out;
	running(&f, 1, false);
	if (!ASSERT_OK(xnf_napi_release(f.root, DEV, f.ws, 0, f.err,
					sizeof(f.err)),
		       f.err))
		goto out;
	is(&f, 5, 1000, "restored by the next start");
	for (q = 0; q < XNF_WORKER_MAX; q++)
		ASSERT_EQ(f.ws[q].bp.saved, 0, "no record left");
	/* Once restored, another release changes nothing. */
	put(&f, "napi_defer_hard_irqs", "9\n");
	ASSERT_OK(xnf_napi_release(f.root, DEV, f.ws, 0, f.err, sizeof(f.err)),
		  f.err);
	is(&f, 9, 1000, "the admin's later value stays");
out:
	nfx_fini(&f);
}

/* Two busy-poll workers: the device's own values are those before the
 * first, and come back only when both are gone. */
TEST(napi_shared_by_two_workers)
{
	struct nfx f;

	if (!nfx_init(&f, "7\n", "3000\n"))
		goto out;
	running(&f, 2, true);
	if (!ASSERT_OK(xnf_napi_take(f.root, DEV, f.ws, 1 << 2, 2, 200000,
				     f.err, sizeof(f.err)),
		       f.err))
		goto out;
	running(&f, 3, true);
	if (!ASSERT_OK(xnf_napi_take(f.root, DEV, f.ws, 1 << 3, 4, 100, f.err,
				     sizeof(f.err)),
		       f.err) ||
	    !is(&f, 4, 100, "the second's"))
		goto out;
	ASSERT_EQ(f.ws[3].bp.old_defer, 7, "the device's own, not the first's");
	ASSERT_EQ(f.ws[3].bp.old_flush_ns, 3000, "the device's own");
	f.ws[3].state = XNF_W_STOPPED;
	if (!ASSERT_OK(xnf_napi_release(f.root, DEV, f.ws, 1 << 3, f.err,
					sizeof(f.err)),
		       f.err))
		goto out;
	is(&f, 4, 100, "kept while the first runs");
	ASSERT_EQ(f.ws[3].bp.saved, 0, "the second's record gone");
	ASSERT_EQ(f.ws[2].bp.saved, 1, "the first's kept");
	f.ws[2].state = XNF_W_STOPPED;
	if (!ASSERT_OK(xnf_napi_release(f.root, DEV, f.ws, 1 << 2, f.err,
					sizeof(f.err)),
		       f.err))
		goto out;
	is(&f, 7, 3000, "restored when the last stops");
out:
	nfx_fini(&f);
}

/* A device whose settings cannot be read: refused, nothing recorded. */
TEST(napi_take_failure_changes_nothing)
{
	struct nfx f;
	char path[PATH_MAX];

	if (!nfx_init(&f, "0\n", "0\n"))
		goto out;
	/* gro_flush_timeout cannot be written: a directory in its place. */
	snprintf(path, sizeof(path),
		 "%s/sys/class/net/" DEV "/gro_flush_timeout", f.root);
	unlink(path);
	if (!ASSERT_OK(mkdir(path, 0755), "mkdir"))
		goto out;
	running(&f, 0, true);
	ASSERT_ERR(xnf_napi_take(f.root, DEV, f.ws, 1, 2, 200000, f.err,
				 sizeof(f.err)),
		   "unreadable gro_flush_timeout");
	ASSERT_EQ(get(&f, "napi_defer_hard_irqs"), 0, "unchanged");
	ASSERT_EQ(f.ws[0].bp.saved, 0, "nothing recorded");
	ASSERT_ERR(xnf_napi_take(f.root, "nd-missing", f.ws, 1, 2, 200000,
				 f.err, sizeof(f.err)),
		   "no such device");
	ASSERT_EQ(f.ws[0].bp.saved, 0, "nothing recorded");
out:
	nfx_fini(&f);
}
