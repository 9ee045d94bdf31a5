// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * killed.c - attach, detach and a commit killed at each of their steps,
 * and the lock.
 *
 * libxnf marks every point of a transaction where a killed process leaves
 * state behind with xnf_crash_point("transaction:step") (lib/priv.h), a
 * no-op in xnf. This file defines its own: a child process runs the
 * transaction and kills itself with SIGKILL at the step it was told. The
 * parent then checks what the issue asks of every such kill:
 *   - a reader (XNF_OPEN_READ) tells the truth, the same answer whatever
 *     the step, and writes nothing: attached exactly when the link was
 *     pinned, and then the program on ut0 is the one it names;
 *   - the next writer's xnf_open() completes or undoes it, after which
 *     detach (if attached) or attach and detach succeed;
 *   - then nothing is left: no XDP on ut0, no pins of ut0, no egress port,
 *     no histogram entry, no napi_poll tracer, no program using the
 *     instance's tables.
 * Every step the library marks must be in the lists below (the recording
 * run fails otherwise), so a new step cannot go untested.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/wait.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>

#include "conf.h"
#include "fixture.h"

#define ROOT  "/sys/fs/bpf/xnf-ut-killed"
#define DEV   "ut0"
#define CHAIN "l3fwd,l2fwd"

/* In order; the first needs a root without an instance. */
static const char *const attach_steps[] = {
	"create:tables",  "attach:loaded", "attach:pinned", "attach:port",
	"attach:watched", "attach:link",   "attach:linked", NULL,
};
static const char *const detach_steps[] = {
	"detach:unpinned", "detach:unlinked", "release:host", "release:port",
	"remove:pin",	   "release:removed", NULL,
};
/* A commit's, and the undo of a killed one by the next writer. */
static const char *const commit_steps[] = {
	"commit:journaled",
	"commit:changed",
	"commit:done",
	NULL,
};
static const char *const undo_steps[] = { "rollback:changed", NULL };
/* The steps of a release, which repair() runs too. */
static const char *const release_steps[] = {
	"release:host", "release:port", "remove:pin", "release:removed", NULL,
};

static const char *crash_at; /* the step this process dies at */
static char seen[32][32];    /* the steps passed, when recording */
static int nseen;
static bool recording;

/* Overrides the library's no-op (lib/priv.h). */
void xnf_crash_point(const char *step);
void xnf_crash_point(const char *step)
{
	int i;

	for (i = 0; recording && i < nseen && strcmp(seen[i], step); i++)
		;
	if (recording && i == nseen && nseen < 32)
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", step);
	if (crash_at && !strcmp(step, crash_at))
		kill(getpid(), SIGKILL);
}

static bool in_list(const char *const *list, const char *step)
{
	for (; *list; list++)
		if (!strcmp(*list, step))
			return true;
	return false;
}

/* xnf_open() as a writer (which repairs), then @op (if any), then close:
 * what one xnf command does. */
static int writer(unsigned int flags,
		  int (*op)(struct xnf_dp *dp, char *err, size_t errlen))
{
	char err[512] = "";
	struct xnf_dp *dp;
	int ret;

	ret = xnf_open(ROOT, flags, XNF_WAIT_FOREVER, &dp, err, sizeof(err));
	if (!ret) {
		if (op)
			ret = op(dp, err, sizeof(err));
		xnf_dp_close(dp);
	}
	if (ret)
		fprintf(stderr, "%s (%s)\n", err, strerror(-ret));
	return ret;
}

static int attach_op(struct xnf_dp *dp, char *err, size_t errlen)
{
	struct xnf_attach_opts o = {
		.dev = DEV,
		.ifindex = if_nametoindex(DEV),
		.xdp_flags = XDP_FLAGS_DRV_MODE,
	};

	return xnf_chain_parse(CHAIN, &o.chain, err, errlen) ?:
		       xnf_attach(dp, &o, err, errlen);
}

static int detach_op(struct xnf_dp *dp, char *err, size_t errlen)
{
	return xnf_detach(dp, DEV, err, errlen);
}

static int do_attach(void)
{
	return writer(XNF_OPEN_CREATE, attach_op);
}

/* Every attachment of this namespace detached, by a commit. */
static int detach_all_op(struct xnf_dp *dp, char *err, size_t errlen)
{
	struct xnf_conf *c;
	int ret;

	ret = xnf_conf_running(dp, &c);
	if (ret)
		return ret;
	ret = xnf_conf_detach_all(c, err, errlen) ?:
		      xnf_conf_commit(dp, c, NULL, NULL, err, errlen);
	xnf_conf_free(c);
	return ret;
}

static int do_detach(void)
{
	return writer(0, detach_op);
}

static int do_destroy(void)
{
	return writer(0, xnf_destroy);
}

/* The open alone: what repair() does. */
static int do_open(void)
{
	return writer(0, NULL);
}

/* Runs @fn in a child that dies at @step: true when it did. */
static bool killed_at(const char *step, int (*fn)(void))
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (!pid) {
		crash_at = step;
		_exit(fn() ? 1 : 0);
	}
	if (!ASSERT_GT(pid, 0, "fork") ||
	    !ASSERT_EQ(waitpid(pid, &status, 0), pid, "wait for the child"))
		return false;
	return ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			   step);
}

static __u32 xdp_prog(void)
{
	__u32 id = 0;

	bpf_xdp_query_id(if_nametoindex(DEV), 0, &id);
	return id;
}

/* The names under ROOT/dev/DEV, sorted and joined: what a reader must not
 * change. */
static void dev_pins(char *buf, size_t len)
{
	struct dirent **list;
	size_t off = 0;
	int n, i;

	buf[0] = '\0';
	n = scandir(ROOT "/dev/" DEV, &list, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (off < len)
			off += snprintf(buf + off, len - off, "%s ",
					list[i]->d_name);
		free(list[i]);
	}
	if (n >= 0)
		free(list);
}

/* What readers see: -1 when they cannot open the instance, else whether
 * DEV is attached, checked against what runs on it. */
static int reader_view(void)
{
	char before[1024], after[1024], err[512];
	struct xnf_dev_status st;
	char names[4][16];
	struct xnf_dp *dp;
	int n, ret;

	dev_pins(before, sizeof(before));
	ret = xnf_open(ROOT, XNF_OPEN_READ, 0, &dp, err, sizeof(err));
	if (ret) {
		ASSERT_EQ(ret, -ENOENT, "a reader finds no instance");
		ASSERT_EQ(xdp_prog(), 0U, "no instance: no XDP on " DEV);
		return -1;
	}
	n = xnf_dev_list(dp, names, 4);
	ret = xnf_dev_status(dp, DEV, &st);
	if (n == 1) {
		ASSERT_OK(ret, "status of the listed device");
		ASSERT_TRUE(st.live, "listed: attached");
		ASSERT_EQ(st.prog_id, xdp_prog(), "the program on " DEV);
		ASSERT_NEQ(st.prog_id, 0U, "a program on " DEV);
	} else {
		ASSERT_EQ(n, 0, "nothing else listed");
		ASSERT_EQ(ret, -ENOENT, "status: not attached");
		ASSERT_EQ(xdp_prog(), 0U, "not listed: no XDP on " DEV);
	}
	xnf_dp_close(dp);
	dev_pins(after, sizeof(after));
	ASSERT_TRUE(!strcmp(before, after), "a reader changes no pin");
	return n == 1;
}

/* Programs that use a table of @dp's instance. */
static int progs_using(struct xnf_dp *dp)
{
	__u32 ids[__XNF_T_MAX], id = 0, maps[64], i, j;
	int t, fd, n = 0;

	for (t = 0; t < __XNF_T_MAX; t++) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);

		ids[t] = bpf_obj_get_info_by_fd(xnf_table_fd(dp, t), &mi, &len) ?
				 0 :
				 mi.id;
	}
	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi);

		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		pi.nr_map_ids = 64;
		pi.map_ids = (__u64)(unsigned long)maps;
		if (!bpf_obj_get_info_by_fd(fd, &pi, &len)) {
			bool uses = false;

			for (i = 0; i < pi.nr_map_ids && i < 64; i++)
				for (j = 0; j < __XNF_T_MAX; j++)
					uses |= ids[j] && maps[i] == ids[j];
			n += uses;
		}
		close(fd);
	}
	return n;
}

/* Nothing of DEV is left. Freeing programs is deferred in the kernel (a
 * prog array is emptied from a work queue): they are given two seconds. */
static void check_clean(const char *what)
{
	struct xnf_dev_key key = { .netns = xnf_netns_inode(),
				   .ifindex = if_nametoindex(DEV) };
	struct timespec ts = { 0, 20000000 };
	int ncpus = xnf_ncpus(), n, tries;
	struct xnf_batch_hist hist[ncpus];
	struct xnf_dp *dp;
	char err[512];

	ASSERT_EQ(xdp_prog(), 0U, what);
	ASSERT_TRUE(access(ROOT "/dev/" DEV, F_OK), what);
	ASSERT_TRUE(access(ROOT "/batch_link", F_OK), what);
	ASSERT_TRUE(access(ROOT "/xmit_link", F_OK), what);
	ASSERT_TRUE(access(ROOT "/redirect_err_link", F_OK), what);
	if (!ASSERT_OK(xnf_open(ROOT, XNF_OPEN_READ, 0, &dp, err, sizeof(err)),
		       what))
		return;
	ASSERT_FALSE(xnf_port_exists(dp, key.ifindex), what);
	ASSERT_ERR(bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_BATCH), &key, hist),
		   what);
	ASSERT_ERR(bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_XMIT), &key, hist),
		   what);
	for (tries = 0; (n = progs_using(dp)) && tries < 100; tries++)
		nanosleep(&ts, NULL);
	ASSERT_EQ(n, 0, what);
	xnf_dp_close(dp);
}

/* After a kill: the reader's view must be @attached; then the next
 * writer's open repairs, detach (after an attach if not attached)
 * succeeds, and nothing is left. */
static void check_after(const char *step, int attached)
{
	ASSERT_EQ(reader_view(), attached, step);
	/* An instance that was not complete is removed by the writer. */
	ASSERT_EQ(do_open(), attached < 0 ? -ENOENT : 0,
		  "the next writer's open");
	if (attached < 0)
		ASSERT_TRUE(access(ROOT, F_OK), "no instance: no root");
	ASSERT_EQ(reader_view(), attached, "after the repair, as before it");
	if (!attached)
		check_clean("right after the repair");
	if (attached <= 0)
		ASSERT_OK(do_attach(), "attach after the kill");
	ASSERT_OK(do_detach(), "detach after the kill");
	check_clean(step);
}

TEST(killed_attach_detach)
{
	const char *const *step;
	char err[512], names[8][32];
	struct xnf_dp *dp;
	int i;

	if (!fx_env())
		return;
	xnf_dp_destroy(ROOT);

	SUBTEST("record") {
		/* Every step the library marks is tested below; and the
		 * clean-state check sees the programs of an attachment. */
		recording = true;
		ASSERT_OK(do_attach(), "attach");
		if (ASSERT_OK(xnf_open(ROOT, XNF_OPEN_READ, 0, &dp, err,
				       sizeof(err)),
			      "open")) {
			/* entry, two NFs, the tracer's three programs */
			ASSERT_EQ(progs_using(dp), 3 + __XNF_TRACER_MAX,
				  "programs found");
			xnf_dp_close(dp);
		}
		ASSERT_OK(do_detach(), "detach");
		recording = false;
		check_clean("after a whole attach and detach");
		for (i = 0; i < nseen; i++)
			ASSERT_TRUE(in_list(attach_steps, seen[i]) ||
					    in_list(detach_steps, seen[i]),
				    seen[i]);
		ASSERT_GE(nseen, 12, "steps seen");
	}
	for (step = attach_steps; *step; step++) {
		SUBTEST(*step) {
			if (step == attach_steps)
				xnf_dp_destroy(ROOT);
			if (!killed_at(*step, do_attach))
				continue;
			/* Attached exactly when the link was pinned; no
			 * instance when its tables were not complete. */
			check_after(*step, step == attach_steps ? -1 :
					   !strcmp(*step, "attach:linked") ? 1 :
									     0);
		}
	}
	for (step = detach_steps; *step; step++) {
		SUBTEST(*step) {
			if (!ASSERT_OK(do_attach(), "attach") ||
			    !killed_at(*step, do_detach))
				continue;
			/* Detached from the moment the link pin went. */
			check_after(*step, 0);
		}
	}
	/* The killed command run again: its open's repair finishes the
	 * detach, and the detach reports success, as a rerun of any finished
	 * command would. Another device's detach still says not attached. */
	SUBTEST("detach_rerun") {
		if (ASSERT_OK(do_attach(), "attach") &&
		    killed_at("detach:unpinned", do_detach)) {
			ASSERT_OK(do_detach(), "the same detach again");
			ASSERT_EQ(do_detach(), -ENOENT, "and once more");
			check_clean("detach_rerun");
		}
	}
	/* repair() itself killed: the writer after it finishes the job. */
	for (step = release_steps, i = 0; *step; step++, i++) {
		snprintf(names[i], sizeof(names[i]), "repair_%s", *step);
		SUBTEST(names[i]) {
			if (!killed_at("attach:watched", do_attach) ||
			    !killed_at(*step, do_open))
				continue;
			check_after(*step, 0);
		}
	}
	SUBTEST("destroy") {
		/* Killed after the first pin or directory went: the next
		 * writer removes the rest. */
		if (ASSERT_OK(do_attach(), "attach") &&
		    ASSERT_OK(do_detach(), "detach") &&
		    killed_at("remove:pin", do_destroy))
			check_after("destroy", -1);
	}
	xnf_dp_destroy(ROOT);
}

/* A child that opens ROOT as a writer, says so on @ready, and holds the
 * lock until it is killed; with @destroy, until a byte arrives on @go,
 * then it destroys the instance and exits. */
static pid_t holder(int ready, int go, bool destroy)
{
	char err[512], c = 1;
	struct xnf_dp *dp;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid)
		return pid;
	if (xnf_open(ROOT, XNF_OPEN_CREATE, XNF_WAIT_FOREVER, &dp, err,
		     sizeof(err)) ||
	    write(ready, &c, 1) != 1)
		_exit(1);
	while (!destroy)
		pause();
	if (read(go, &c, 1) != 1)
		_exit(1);
	_exit(xnf_destroy(dp, err, sizeof(err)) ? 1 : 0);
}

static void reap(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	waitpid(*pid, NULL, 0);
	*pid = -1;
}

/* Whether @pid has ROOT open (within two seconds): from then on it locks
 * that directory, whatever becomes of the path. */
static bool has_root_open(pid_t pid)
{
	struct timespec ts = { 0, 10000000 };
	char dir[64], path[PATH_MAX + 64], target[PATH_MAX];
	struct dirent *de;
	bool found = false;
	int tries;
	ssize_t n;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	for (tries = 0; !found && tries < 200; tries++) {
		d = opendir(dir);
		while (d && !found && (de = readdir(d))) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			n = readlink(path, target, sizeof(target) - 1);
			found = n == (ssize_t)strlen(ROOT) &&
				!memcmp(target, ROOT, n);
		}
		if (d)
			closedir(d);
		if (!found)
			nanosleep(&ts, NULL);
	}
	return found;
}

/* @a holds the lock, @b waits for it; @a destroys the instance, so @b
 * must lock the root it makes again, not the one removed under it. */
static void root_removed_while_waiting(int ready[2], int go[2], int in[2],
				       pid_t *a, pid_t *b)
{
	char err[512], c = 1;
	struct xnf_dp *dp;

	*a = holder(ready[1], go[0], true);
	if (!ASSERT_EQ(read(ready[0], &c, 1), 1, "a has the lock"))
		return;
	*b = holder(in[1], -1, false);
	if (!ASSERT_TRUE(has_root_open(*b), "b waits for the lock") ||
	    !ASSERT_EQ(write(go[1], &c, 1), 1, "a may destroy") ||
	    !ASSERT_EQ(waitpid(*a, NULL, 0), *a, "a ends"))
		return;
	*a = -1;
	if (!ASSERT_EQ(read(in[0], &c, 1), 1, "b has the lock"))
		return;
	ASSERT_EQ(xnf_open(ROOT, 0, 0, &dp, err, sizeof(err)), -ETIMEDOUT,
		  "b holds the lock of the root there is now");
}

TEST(lock_wait_is_bounded)
{
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, in[2] = { -1, -1 };
	char err[512], pid_s[32], c = 1;
	pid_t a = -1, b = -1;
	struct xnf_dp *dp;

	if (!fx_env())
		return;
	xnf_dp_destroy(ROOT);
	if (!ASSERT_OK(pipe(ready), "pipe") || !ASSERT_OK(pipe(go), "pipe") ||
	    !ASSERT_OK(pipe(in), "pipe"))
		goto out;
	a = holder(ready[1], -1, false);
	if (!ASSERT_GT(a, 0, "fork") ||
	    !ASSERT_EQ(read(ready[0], &c, 1), 1, "the holder has the lock"))
		goto out;
	kill(a, SIGSTOP);

	SUBTEST("writer_times_out") {
		ASSERT_EQ(xnf_open(ROOT, 0, 0, &dp, err, sizeof(err)),
			  -ETIMEDOUT, "-w 0");
		snprintf(pid_s, sizeof(pid_s), "pid %d", a);
		ASSERT_TRUE(strstr(err, pid_s), "the error names the holder");
		ASSERT_EQ(xnf_open(ROOT, 0, 1, &dp, err, sizeof(err)),
			  -ETIMEDOUT, "-w 1");
	}
	SUBTEST("reader_does_not_wait") {
		if (ASSERT_OK(xnf_open(ROOT, XNF_OPEN_READ, 0, &dp, err,
				       sizeof(err)),
			      "reader")) {
			ASSERT_EQ(dp->lock_fd, -1, "holds no lock");
			xnf_dp_close(dp);
		}
	}
	reap(&a);
	SUBTEST("root_removed_while_waiting")
		root_removed_while_waiting(ready, go, in, &a, &b);
out:
	reap(&a);
	reap(&b);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	close(in[0]);
	close(in[1]);
	xnf_dp_destroy(ROOT);
}

/* A route batch (route sync's) killed before its commit and during the
 * commit's replay: packets keep the last complete set (the old one, or
 * the whole batch once the flip was made), and the next writer's
 * xnf_open() puts the copies back in step with exact counts. */
static struct fx *batch_fx;

static int batch_op(void)
{
	const __u8 a[4] = { 10, 2, 0, 0 }, b[4] = { 10, 3, 0, 0 };
	struct xnf_route p1;
	char err[512];
	struct xnf_dp *dp;
	int ret;

	ret = xnf_open(FX_ROOT, 0, XNF_WAIT_FOREVER, &dp, err, sizeof(err));
	if (ret)
		return ret;
	fx_mp_path(batch_fx, 1, &p1);
	ret = xnf_route_batch_begin(dp)					  ?:
		      xnf_route_set(dp, XNF_AF_INET, a, 16, &p1, BPF_ANY) ?:
		      xnf_route_set(dp, XNF_AF_INET, b, 16, &p1, BPF_ANY) ?:
		      xnf_route_batch_commit(dp);
	xnf_dp_close(dp);
	return ret;
}

static void batch_killed_at(const char *step, int want_a, int want_b)
{
	const __u8 a[4] = { 10, 2, 0, 0 };
	struct xnf_config cfg;
	struct xnf_route p0;
	char err[512];
	struct xnf_dp *dp;
	__u32 used;
	struct fx f;

	if (!fx_open(&f))
		return;
	batch_fx = &f;
	fx_mp_path(&f, 0, &p0);
	if (!fx_chain(&f, "l3fwd", false, false) ||
	    !ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, a, 16, &p0, BPF_ANY),
		       "A on path 0") ||
	    !killed_at(step, batch_op))
		goto out;
	ASSERT_EQ(fx_path_to(&f, "10.2.0.1"), want_a, "A: the last complete set");
	ASSERT_EQ(fx_path_to(&f, "10.3.0.1"), want_b, "B: the last complete set");
	if (ASSERT_OK(xnf_cfg_read(f.dp, &cfg), "cfg"))
		ASSERT_EQ(cfg.rt_pending, 1, "the batch is left pending");
	/* The next writer. */
	if (!ASSERT_OK(xnf_open(FX_ROOT, 0, 0, &dp, err, sizeof(err)),
		       "next writer"))
		goto out;
	xnf_dp_close(dp);
	ASSERT_EQ(fx_path_to(&f, "10.2.0.1"), want_a, "A after repair");
	ASSERT_EQ(fx_path_to(&f, "10.3.0.1"), want_b, "B after repair");
	ASSERT_TRUE(fx_rt_copies_equal(&f, XNF_AF_INET), "copies in step");
	if (ASSERT_OK(xnf_cfg_read(f.dp, &cfg), "cfg"))
		ASSERT_EQ(cfg.rt_pending, 0, "nothing pending");
	if (want_a == 0xa0) {
		ASSERT_EQ(fx_nh_refs(&f, 0, &used), 1, "path 0: A");
		ASSERT_EQ(used, 1, "the batch's path 1 released");
	} else {
		ASSERT_EQ(fx_nh_refs(&f, 1, &used), 2, "path 1: A and B");
		ASSERT_EQ(used, 1, "path 0 released");
	}
out:
	batch_fx = NULL;
	fx_close(&f);
}

TEST(killed_route_batch)
{
	SUBTEST("before_the_flip")
		batch_killed_at("route-batch:commit", 0xa0, -1);
	SUBTEST("during_the_replay")
		batch_killed_at("route-batch:replay", 0xa1, 0xa1);
}

/* ---- a commit killed ----
 *
 * Two configurations with something of every kind changing between them:
 * a chain (ut0), an attachment that goes (ut1) and one that comes (ut2),
 * routes kept, removed, added and replaced, rules likewise, an FDB entry
 * moved, a cross-connect, the exception actions. After a kill anywhere in
 * the commit from the old to the new, the next writer leaves the old one
 * exactly (the library's own difference of the two is empty), and the
 * change log says what was attempted and how it ended.
 */
#define ROUTES 60

static struct xnf_conf *old_conf, *new_conf;

static bool conf_edit(int ret, const char *what, const char *err)
{
	if (ret)
		fprintf(stderr, "%s: %s\n", what, err);
	return ASSERT_OK(ret, what);
}

/* @gen 0: the old configuration, 1: the new. */
static struct xnf_conf *conf_make(int gen)
{
	__u32 ut[3] = { if_nametoindex("ut0"), if_nametoindex("ut1"),
			if_nametoindex("ut2") };
	struct xnf_conf_attach a = { .xdp_flags = XDP_FLAGS_DRV_MODE };
	struct xnf_route rt = { .type = XNF_RT_UNICAST, .ifindex = ut[1] };
	struct xnf_xconnect fwd = { .ifindex = ut[2] },
			    rev = { .ifindex = ut[1] };
	__u8 addr[4] = { 10, 0, 0, 0 }, mac[6] = { 2, 0, 0, 0, 0x7e, 1 };
	struct xnf_fw_rule r = { .action = XNF_FW_DROP,
				 .flags = XNF_FW_F_PROTO | XNF_FW_F_DPORT,
				 .proto = 17 };
	struct xnf_nat_rule nat = { .prio = 10 };
	struct xnf_conf *c;
	char err[512] = "";
	bool ok;
	int i;

	if (!ASSERT_OK(xnf_conf_new(&c), "new conf"))
		return NULL;
	memcpy(rt.dmac, mac, 6);
	ok = conf_edit(xnf_chain_parse(gen ? "firewall,l3fwd,l2fwd" : "l3fwd,l2fwd",
				       &a.chain, err, sizeof(err)),
		       "chain", err);
	strcpy(a.dev, "ut0");
	ok = ok &&
	     conf_edit(xnf_conf_attach(c, &a, err, sizeof(err)), "ut0", err);
	strcpy(a.dev, gen ? "ut2" : "ut1");
	ok = ok &&
	     conf_edit(xnf_conf_attach(c, &a, err, sizeof(err)), a.dev, err);
	ok = ok &&
	     conf_edit(xnf_conf_config_set(c, "no_route", gen ? "drop" : "pass",
					   err, sizeof(err)),
		       "config", err);
	ok = ok && conf_edit(xnf_conf_fdb_add(c, mac, ut[gen ? 2 : 1], false,
					      err, sizeof(err)),
			     "fdb", err);
	/* Routes 10.i.0.0/16: old 0..39, new 20..59, 30..39 replaced. */
	for (i = gen ? 20 : 0; ok && i < (gen ? ROUTES : 40); i++) {
		addr[1] = i;
		rt.dmac[5] = gen && i < 40 && i >= 30 ? 2 : 1;
		ok = conf_edit(xnf_conf_route_add(c, XNF_AF_INET, addr, 16, &rt,
						  false, err, sizeof(err)),
			       "route", err);
	}
	/* Rules prio 10.. dport 1000+: old 0..19, new 10..29. */
	for (i = gen ? 10 : 0; ok && i < (gen ? 30 : 20); i++) {
		r.prio = 10 + i;
		r.dport_lo = r.dport_hi = 1000 + i;
		ok = conf_edit(xnf_conf_fw_add(c, &r, false, err, sizeof(err)),
			       "rule", err);
	}
	/* NAT rules: old a masquerade of prio 10, new an snat of prio 10
	 * and a dnat (the journal holds both sets). */
	nat.oif = ut[1];
	nat.type = XNF_NAT_MASQUERADE;
	if (gen) {
		nat.type = XNF_NAT_SNAT;
		nat.family = XNF_AF_INET;
		memcpy(nat.to_min, "\xcb\x00\x71\x01", 4); /* 203.0.113.1 */
		memcpy(nat.to_max, nat.to_min, 4);
	}
	ok = ok && conf_edit(xnf_conf_nat_add(c, &nat, false, err, sizeof(err)),
			     "nat", err);
	if (ok && gen) {
		nat.type = XNF_NAT_DNAT;
		nat.prio = 20;
		nat.oif = 0;
		nat.iif = ut[2];
		ok = conf_edit(xnf_conf_nat_add(c, &nat, false, err, sizeof(err)),
			       "nat", err);
	}
	if (ok && gen)
		ok = conf_edit(xnf_conf_xconnect_add(c, ut[1], &fwd, ut[2],
						     &rev, err, sizeof(err)),
			       "xconnect", err);
	if (!ok) {
		xnf_conf_free(c);
		return NULL;
	}
	return c;
}

static int commit_op(struct xnf_dp *dp, char *err, size_t errlen)
{
	struct xnf_commit_opts o = { .cmd = "apply test.conf" };

	return xnf_conf_commit(dp, new_conf, &o, NULL, err, errlen);
}

static int do_commit(void)
{
	return writer(XNF_OPEN_CREATE, commit_op);
}

static int old_op(struct xnf_dp *dp, char *err, size_t errlen)
{
	return xnf_conf_commit(dp, old_conf, NULL, NULL, err, errlen);
}

/* What runs is @want, exactly: 1, 0, or -1 when it cannot be told. */
static int runs(const struct xnf_conf *want)
{
	struct xnf_conf_diff *d;
	char err[512];
	struct xnf_dp *dp;
	int ret = -1;

	if (!ASSERT_OK(xnf_open(ROOT, XNF_OPEN_READ, 0, &dp, err, sizeof(err)),
		       "reader"))
		return -1;
	if (ASSERT_OK(xnf_conf_diff(dp, want, &d, err, sizeof(err)), err)) {
		ret = !d->n;
		xnf_conf_diff_free(d);
	}
	xnf_dp_close(dp);
	return ret;
}

/* The last change the log holds. */
static bool last_change(struct xnf_change *c)
{
	char err[512];
	struct xnf_dp *dp;
	__u64 seq = 0;
	bool ok;

	if (!ASSERT_OK(xnf_open(ROOT, XNF_OPEN_READ, 0, &dp, err, sizeof(err)),
		       "reader"))
		return false;
	ok = ASSERT_OK(xnf_change_seq(dp, &seq), "change seq") &&
	     ASSERT_OK(xnf_change_read(dp, seq, c), "the last change");
	xnf_dp_close(dp);
	return ok;
}

/* After a commit to the new configuration was killed (and, with
 * @repair_step, the repair of the next writer too): the next writer
 * leaves the old one, and logs the kill. */
static void check_undone(const char *step, const char *repair_step)
{
	struct xnf_change c;

	/* Killed after its first change: neither configuration runs. */
	if (!strcmp(step, "commit:changed"))
		ASSERT_EQ(runs(old_conf), 0, "a part of the commit runs");
	if (repair_step && !killed_at(repair_step, do_open))
		return;
	ASSERT_OK(do_open(), "the next writer");
	ASSERT_EQ(runs(old_conf), 1, step);
	ASSERT_EQ(runs(new_conf), 0, "not the new one");
	ASSERT_TRUE(access(ROOT "/commit", F_OK), "no journal left");
	if (last_change(&c)) {
		ASSERT_TRUE(!strcmp(c.cmd, "apply test.conf"), "what was asked");
		ASSERT_EQ(c.failed, 1U, "logged as failed");
		ASSERT_TRUE(strstr(c.msg, "killed") != NULL, c.msg);
	}
	/* And the commit goes through when it is not killed. */
	ASSERT_OK(do_commit(), "the commit again");
	ASSERT_EQ(runs(new_conf), 1, "then the new one runs");
	ASSERT_OK(writer(0, old_op), "back to the old one");
}

TEST(killed_commit)
{
	const char *const *step;
	int i;

	if (!fx_env())
		return;
	xnf_dp_destroy(ROOT);
	old_conf = conf_make(0);
	new_conf = conf_make(1);
	if (!old_conf || !new_conf)
		goto out;
	if (!ASSERT_OK(writer(XNF_OPEN_CREATE, old_op), "the old configuration"))
		goto out;
	SUBTEST("record") {
		/* Every step a commit marks is tested below. */
		recording = true;
		nseen = 0;
		ASSERT_OK(do_commit(), "commit");
		recording = false;
		ASSERT_EQ(runs(new_conf), 1, "the new configuration runs");
		for (i = 0; i < nseen; i++)
			ASSERT_TRUE(in_list(commit_steps, seen[i]) ||
					    in_list(attach_steps, seen[i]) ||
					    in_list(detach_steps, seen[i]),
				    seen[i]);
		for (step = commit_steps; *step; step++) {
			for (i = 0; i < nseen && strcmp(seen[i], *step); i++)
				;
			ASSERT_LT(i, nseen, *step);
		}
		ASSERT_OK(writer(0, old_op), "back to the old one");
	}
	for (step = commit_steps; *step; step++)
		SUBTEST(*step) {
			if (killed_at(*step, do_commit))
				check_undone(*step, NULL);
		}
	/* The next writer's undo killed: the one after it finishes it. */
	for (step = undo_steps; *step; step++)
		SUBTEST(*step) {
			if (killed_at("commit:changed", do_commit))
				check_undone(*step, *step);
		}
	ASSERT_OK(writer(0, detach_all_op), "detach everything");
out:
	xnf_conf_free(old_conf);
	xnf_conf_free(new_conf);
	old_conf = new_conf = NULL;
	xnf_dp_destroy(ROOT);
}
