// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * journal.c - what makes a commit of many changes all or nothing even when
 * it is killed (commit.c).
 *
 * Before its first change, such a commit pins at <root>/commit a BPF array
 * holding what it is about to change, as it runs now and as it is to be
 * (both configurations, serialised), and who asked. A pinned map is the
 * only storage an instance has that outlives the process and goes with
 * the instance. The pin is made whole before the first change (the map
 * written, then pinned) and removed after the last, so a pin found under
 * the instance lock belongs to a commit that was killed: the next
 * writer's xnf_open() puts back, one element at a time, what ran before
 * (xnf_conf_repair) and records how it ended in the change log.
 *
 * The layout is this build's structs back to back: a journal written by
 * another build (another size of any of them, another table schema) is
 * refused rather than misread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "conf.h"
#include "conf_priv.h"
#include "priv.h"

/* A byte buffer that grows, and a cursor over one. */
struct buf {
	char *p;
	size_t len, cap, off;
	bool bad; /* out of memory, or read past the end */
};

static void put(struct buf *b, const void *data, size_t len)
{
	size_t cap = b->cap ?: 4096;
	char *p;

	if (b->bad)
		return;
	while (cap < b->len + len)
		cap *= 2;
	if (cap != b->cap) {
		p = realloc(b->p, cap);
		if (!p) {
			b->bad = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static void put_u32(struct buf *b, __u32 v)
{
	put(b, &v, sizeof(v));
}

static void get(struct buf *b, void *data, size_t len)
{
	if (b->bad || len > b->len - b->off) {
		b->bad = true;
		memset(data, 0, len);
		return;
	}
	memcpy(data, b->p + b->off, len);
	b->off += len;
}

static __u32 get_u32(struct buf *b)
{
	__u32 v;

	get(b, &v, sizeof(v));
	return v;
}

/* A count of elements of @size that the rest of @b can hold. */
static __u32 get_count(struct buf *b, size_t size)
{
	__u32 n = get_u32(b);

	if (!b->bad && (size_t)n > (b->len - b->off) / size)
		b->bad = true;
	return b->bad ? 0 : n;
}

#define JOURNAL_MAGIC	0x4a464e58 /* "XNFJ" */
#define JOURNAL_VERSION 1
#define JOURNAL_CHUNK	65536 /* bytes of one element of the map */

/* What the journal's layout depends on: a journal of another build is
 * refused rather than misread. */
static __u32 journal_sig(void)
{
	return sizeof(struct xnf_config) ^ sizeof(struct xnf_ct_settings) << 4 ^
	       sizeof(struct xnf_fw_rule) << 8 ^
	       sizeof(struct xnf_conf_attach) << 12 ^
	       sizeof(struct xnf_route_entry) << 18 ^
	       sizeof(struct xnf_route) << 24 ^ (__u32)XNF_SCHEMA << 27 ^
	       sizeof(struct xnf_nat_rule) << 5;
}

static void put_conf(struct buf *b, const struct xnf_conf *c)
{
	const struct xnf_fw_rule *rules;
	__u32 i;

	put_u32(b, c->cfg_known);
	put(b, &c->cfg, sizeof(c->cfg));
	put(b, &c->ct, sizeof(c->ct));
	put_u32(b, !!c->fw);
	if (c->fw) {
		rules = xnf_fw_set_rules(c->fw);
		put_u32(b, xnf_fw_set_default(c->fw));
		put_u32(b, xnf_fw_set_count(c->fw));
		for (i = 0; i < XNF_FW_MAX_RULES; i++)
			if (rules[i].in_use)
				put(b, &rules[i], sizeof(rules[i]));
	}
	put_u32(b, !!c->nat);
	if (c->nat) {
		put_u32(b, c->nat->n);
		put(b, c->nat->r, c->nat->n * sizeof(c->nat->r[0]));
	}
	put_u32(b, c->natt);
	put(b, c->att, c->natt * sizeof(*c->att));
	put_u32(b, c->nroutes);
	for (i = 0; i < c->nroutes; i++) {
		put(b, &c->routes[i].e, sizeof(c->routes[i].e));
		put_u32(b, c->routes[i].npaths);
		put(b, c->routes[i].paths,
		    c->routes[i].npaths * sizeof(*c->routes[i].paths));
	}
	put_u32(b, c->nfdb);
	put(b, c->fdb, c->nfdb * sizeof(*c->fdb));
	put_u32(b, c->nxc);
	put(b, c->xc, c->nxc * sizeof(*c->xc));
}

static int get_conf(struct buf *b, struct xnf_conf *c)
{
	struct xnf_fw_rule r;
	struct xnf_conf_route route = {};
	__u32 i, n;

	c->cfg_known = get_u32(b);
	get(b, &c->cfg, sizeof(c->cfg));
	get(b, &c->ct, sizeof(c->ct));
	if (get_u32(b)) {
		if (!c->fw && !(c->fw = xnf_fw_set_new()))
			return -ENOMEM;
		xnf_fw_set_policy(c->fw, get_u32(b));
		n = get_count(b, sizeof(r));
		for (i = 0; i < n && !b->bad; i++) {
			get(b, &r, sizeof(r));
			if (!b->bad && xnf_fw_set_add(c->fw, &r, false, NULL))
				b->bad = true;
		}
	}
	if (get_u32(b)) {
		if (!c->nat && !(c->nat = xnf_nat_set_new()))
			return -ENOMEM;
		xnf_nat_set_flush(c->nat);
		n = get_count(b, sizeof(struct xnf_nat_rule));
		for (i = 0; i < n && !b->bad; i++) {
			struct xnf_nat_rule nr;

			get(b, &nr, sizeof(nr));
			if (!b->bad &&
			    xnf_nat_set_add(c->nat, &nr, false, NULL, 0))
				b->bad = true;
		}
	}
	n = get_count(b, sizeof(*c->att));
	for (i = 0; i < n && !b->bad; i++) {
		struct xnf_conf_attach a;

		get(b, &a, sizeof(a));
		a.dev[sizeof(a.dev) - 1] = '\0';
		if (conf_put_att(c, &a))
			return -ENOMEM;
	}
	n = get_count(b, sizeof(route.e));
	for (i = 0; i < n && !b->bad; i++) {
		get(b, &route.e, sizeof(route.e));
		route.npaths = get_count(b, sizeof(*route.paths));
		if (route.npaths > XNF_NHG_PATHS)
			b->bad = true;
		route.paths = calloc(route.npaths + 1, sizeof(*route.paths));
		if (!route.paths)
			return -ENOMEM;
		get(b, route.paths, route.npaths * sizeof(*route.paths));
		if (!b->bad && conf_put_route(c, &route)) {
			free(route.paths);
			return -ENOMEM;
		}
		free(route.paths);
	}
	n = get_count(b, sizeof(*c->fdb));
	for (i = 0; i < n && !b->bad; i++) {
		struct xnf_fdb_ent e;

		get(b, &e, sizeof(e));
		if (conf_put_fdb(c, &e))
			return -ENOMEM;
	}
	n = get_count(b, sizeof(*c->xc));
	for (i = 0; i < n && !b->bad; i++) {
		struct xnf_xconnect_ent e;

		get(b, &e, sizeof(e));
		if (conf_put_xc(c, &e))
			return -ENOMEM;
	}
	return b->bad ? -EUCLEAN : 0;
}

/* A killed commit, as the journal tells it. */
struct journal {
	bool whole;
	__u32 pid, steps;
	char cmd[XNF_CHANGE_TEXT];
	struct xnf_conf *from, *to;
};

void conf_journal_path(const struct xnf_dp *dp, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dp->root, CONF_JOURNAL_PIN);
}

/* The map of @b's bytes, pinned whole at <root>/commit. */
static int journal_pin(struct xnf_dp *dp, const struct buf *b)
{
	__u32 n = (b->len + JOURNAL_CHUNK - 1) / JOURNAL_CHUNK, i, count = n;
	char path[PATH_MAX];
	__u32 *keys = NULL;
	char *vals = NULL;
	int fd, ret = 0;

	/* No name: libbpf would first load two programs to learn whether
	 * the kernel takes one; the pin names it. */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(__u32),
			    JOURNAL_CHUNK, n, NULL);
	if (fd < 0)
		return -errno;
	keys = calloc(n, sizeof(*keys));
	vals = calloc(n, JOURNAL_CHUNK);
	if (!keys || !vals) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		keys[i] = i;
	memcpy(vals, b->p, b->len);
	if (bpf_map_update_batch(fd, keys, vals, &count, NULL)) {
		ret = -errno;
		goto out;
	}
	conf_journal_path(dp, path, sizeof(path));
	if (bpf_obj_pin(fd, path))
		ret = -errno;
out:
	free(keys);
	free(vals);
	close(fd);
	return ret;
}

void conf_journal_unpin(struct xnf_dp *dp)
{
	char path[PATH_MAX];

	conf_journal_path(dp, path, sizeof(path));
	unlink(path);
}

int conf_journal_write(struct xnf_dp *dp, const struct xnf_conf_diff *d,
		       bool whole, __u32 steps, const char *cmd)
{
	char text[XNF_CHANGE_TEXT] = "";
	struct buf b = {};
	int ret;

	snprintf(text, sizeof(text), "%s", cmd ?: "");
	put_u32(&b, JOURNAL_MAGIC);
	put_u32(&b, JOURNAL_VERSION);
	put_u32(&b, journal_sig());
	put_u32(&b, whole);
	put_u32(&b, getpid());
	put_u32(&b, steps);
	put(&b, text, sizeof(text));
	put_conf(&b, d->from);
	put_conf(&b, d->to);
	ret = b.bad ? -ENOMEM : journal_pin(dp, &b);
	free(b.p);
	return ret;
}

static void journal_free(struct journal *j)
{
	xnf_conf_free(j->from);
	xnf_conf_free(j->to);
}

/* The journal pinned at @path: -ENOENT when there is none. */
static int journal_read(const char *path, struct journal *j)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), magic, count, *keys = NULL;
	struct buf b = {};
	int fd, ret;

	memset(j, 0, sizeof(*j));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ret = -errno;
		goto out;
	}
	ret = -EUCLEAN;
	if (info.value_size != JOURNAL_CHUNK || !info.max_entries)
		goto out;
	count = info.max_entries;
	b.len = (size_t)count * JOURNAL_CHUNK;
	b.p = malloc(b.len);
	keys = calloc(count, sizeof(*keys));
	ret = -ENOMEM;
	if (!b.p || !keys)
		goto out;
	ret = xnf_map_read_all(fd, sizeof(__u32), JOURNAL_CHUNK, count, keys,
			       b.p, &count);
	if (!ret && count != info.max_entries)
		ret = -EUCLEAN;
	if (ret)
		goto out;
	magic = get_u32(&b);
	if (magic != JOURNAL_MAGIC || get_u32(&b) != JOURNAL_VERSION ||
	    get_u32(&b) != journal_sig()) {
		ret = -EPROTO;
		goto out;
	}
	j->whole = get_u32(&b);
	j->pid = get_u32(&b);
	j->steps = get_u32(&b);
	get(&b, j->cmd, sizeof(j->cmd));
	j->cmd[sizeof(j->cmd) - 1] = '\0';
	ret = conf_alloc(false, &j->from) ?: conf_alloc(false, &j->to);
	if (!ret)
		ret = get_conf(&b, j->from) ?: get_conf(&b, j->to);
out:
	if (ret)
		journal_free(j);
	free(keys);
	free(b.p);
	close(fd);
	return ret;
}

int xnf_conf_repair(struct xnf_dp *dp)
{
	char path[PATH_MAX], err[512] = "", msg[XNF_CHANGE_TEXT];
	struct journal j;
	int ret;

	conf_journal_path(dp, path, sizeof(path));
	ret = journal_read(path, &j);
	if (ret == -ENOENT)
		return 0;
	if (ret) {
		snprintf(msg, sizeof(msg),
			 "a commit was cut short, and its journal cannot be read (%s): what runs may be a part of it",
			 strerror(-ret));
		pr_warn("%s\n", msg);
		xnf_change_log(dp, XNF_CHANGE_COMMAND, "(a killed commit)",
			       true, msg);
		unlink(path);
		return ret;
	}
	ret = conf_undo(dp, j.from, j.to, j.whole, err, sizeof(err));
	if (ret)
		snprintf(msg, sizeof(msg),
			 "killed (pid %u) before its %u changes were made; restoring what ran before failed: %.120s",
			 j.pid, j.steps, err);
	else
		snprintf(msg, sizeof(msg),
			 "killed (pid %u) before its %u changes were made; what ran before it was restored",
			 j.pid, j.steps);
	if (ret)
		pr_warn("%s: %s\n", j.cmd[0] ? j.cmd : "a commit", msg);
	xnf_change_log(dp, XNF_CHANGE_COMMAND, j.cmd[0] ? j.cmd : "(a commit)",
		       true, msg);
	/* Kept when the undo failed for a reason a retry may not have
	 * (a kill): the next writer tries again. */
	unlink(path);
	journal_free(&j);
	return ret;
}
