// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * dataplane.c - the pinned xnf instance and the chains loaded into it.
 *
 * Pin layout under the root (default /sys/fs/bpf/xnf, all dirs 0700):
 *   tables/<map>         the shared tables of tables.bpf.h
 *   dev/<ifname>/<map>   per-interface maps: xnf_stats, xnf_xsks, xnf_dev
 * (links, programs and chain arrays are pinned by the CLI, see main.c).
 *
 * Every BPF object includes the map definitions it uses; before loading,
 * each map gets the pin path of its scope, so libbpf reuses the pinned map
 * (after checking type, key, value and size match) or creates and pins it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xnf.h"
#include "priv.h"
#include "tables.skel.h"
#include "entry.skel.h"
#include "firewall.skel.h"
#include "l3fwd.skel.h"
#include "l2fwd.skel.h"
#include "xsk.skel.h"
#include "fused.skel.h"
#include "batch.skel.h"

#define XNF_TABLE_NAME_(t) [XNF_T_##t] = XNF_MAP_STR(XNF_MAP_##t),
const char *const xnf_table_names[__XNF_T_MAX] = { XNF_TABLES(XNF_TABLE_NAME_) };
#undef XNF_TABLE_NAME_

static const struct xnf_config xnf_default_cfg = {
	.schema = XNF_SCHEMA,
	.no_route = XNF_ACT_PASS,
	.ttl_expired = XNF_ACT_PASS,
	.local = XNF_ACT_PASS,
	.l2_miss = XNF_ACT_FLOOD,
	.xsk_fallback = XNF_ACT_PASS,
	.martian = XNF_ACT_DROP,
	.flow_cache = 1,
};

void xnf_cfg_default(struct xnf_config *cfg)
{
	*cfg = xnf_default_cfg;
}

static int xnf_table_index(const char *name)
{
	int i;

	for (i = 0; i < __XNF_T_MAX; i++)
		if (!strcmp(name, xnf_table_names[i]))
			return i;
	return -1;
}

static int mkdir_private(const char *path)
{
	if (mkdir(path, 0700) && errno != EEXIST) {
		int err = -errno;

		pr_info("cannot create %s: %s\n", path, strerror(-err));
		return err;
	}
	return 0;
}

/* Binds every map of @obj to the instance: shared tables to the fds the
 * instance holds, per-interface maps to their pins under dev/<dev>/ (reused
 * if they exist, created and pinned otherwise). The chain's prog array and
 * the object's own data sections are left alone. */
static int xnf_bind_maps(struct xnf_dp *dp, struct bpf_object *obj,
			 const char *dev, int numa_node)
{
	struct bpf_map *map;
	char path[PATH_MAX];
	int err, t;

	bpf_object__for_each_map(map, obj)
	{
		const char *name = bpf_map__name(map);

		t = xnf_table_index(name);
		if (t >= 0 && dp->fd[t] >= 0) {
			err = bpf_map__reuse_fd(map, dp->fd[t]);
		} else if (t >= 0) {
			snprintf(path, sizeof(path), "%s/tables/%s", dp->root,
				 name);
			err = bpf_map__set_pin_path(map, path);
		} else if (dev && (!strcmp(name, XNF_MAP_STR(XNF_MAP_STATS)) ||
				   !strcmp(name, XNF_MAP_STR(XNF_MAP_XSKS)) ||
				   !strcmp(name, XNF_MAP_STR(XNF_MAP_DEV)))) {
			err = xnf_dev_path(dp->root, dev, name, path, sizeof(path)) ?:
				      bpf_map__set_pin_path(map, path);
			/* Used when the map is created, by the first attach;
			 * the NIC's node, where its counters are written. */
			if (!err && numa_node >= 0)
				err = bpf_map__set_numa_node(map, numa_node);
		} else {
			continue;
		}
		if (err)
			return err;
	}
	return 0;
}

int xnf_dp_open(const char *root, bool create, struct xnf_dp **out,
		char *errbuf, size_t errlen)
{
	static const char *const dirs[] = { "", "/tables", "/dev" };
	char path[PATH_MAX];
	struct xnf_tables *skel = NULL;
	struct xnf_config cfg;
	struct xnf_dp *dp;
	bool fresh;
	__u32 zero = 0;
	int i, err;

	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return xnf_errf(errbuf, errlen, -ENOMEM, "out of memory");
	for (i = 0; i < __XNF_T_MAX; i++)
		dp->fd[i] = -1;
	dp->lock_fd = -1;
	err = xnf_root_check(root, errbuf, errlen);
	if (err)
		goto out_free;
	snprintf(dp->root, sizeof(dp->root), "%s", root);
	snprintf(path, sizeof(path), "%s/tables/%s", root,
		 XNF_MAP_STR(XNF_MAP_CFG));
	fresh = access(path, F_OK) != 0;
	snprintf(path, sizeof(path), "%s/dev", root);
	/* Tables without dev/: a destroy that was killed (a writer's
	 * xnf_open removes the rest). */
	if ((fresh && !create) || (!fresh && access(path, F_OK))) {
		err = -ENOENT;
		goto out_free;
	}
	for (i = 0; fresh && i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", root, dirs[i]);
		err = mkdir_private(path);
		if (err) {
			xnf_errf(errbuf, errlen, err, "cannot create %s: %s",
				 path, strerror(-err));
			goto out_free;
		}
	}

	if (fresh) {
		/* Creates and pins every table (libbpf unpins them again
		 * if any fails). */
		skel = xnf_tables__open();
		if (!skel) {
			err = xnf_errf(errbuf, errlen, -errno,
				       "cannot open the tables' BPF object: %s",
				       strerror(errno));
			goto out_free;
		}
		err = xnf_bind_maps(dp, skel->obj, NULL, -1);
		if (!err)
			err = xnf_tables__load(skel);
		if (err) {
			xnf_errf(errbuf, errlen, err,
				 "cannot create the tables in %s/tables: %s",
				 root, strerror(-err));
			goto out_destroy;
		}
	}
	for (i = 0; i < __XNF_T_MAX; i++) {
		snprintf(path, sizeof(path), "%s/tables/%s", root,
			 xnf_table_names[i]);
		dp->fd[i] = bpf_obj_get(path);
		if (dp->fd[i] < 0) {
			err = xnf_errf(errbuf, errlen, -errno,
				       "cannot open %s: %s; the instance at %s is incomplete: destroy it",
				       path, strerror(errno), root);
			goto out_destroy;
		}
	}

	if (fresh) {
		xnf_crash_point("create:tables");
		/* Last: a schema in xnf_cfg says the instance is complete. */
		err = bpf_map_update_elem(dp->fd[XNF_T_CFG], &zero,
					  &xnf_default_cfg, BPF_ANY);
	} else {
		err = xnf_cfg_read(dp, &cfg);
		if (!err && !cfg.schema) {
			/* A creation that was killed: none yet (a writer's
			 * xnf_open removes it and, to create, starts again). */
			err = -ENOENT;
			goto out_destroy;
		}
		if (!err && cfg.schema != XNF_SCHEMA) {
			err = xnf_errf(errbuf, errlen, -EPROTO,
				       "%s holds xnf tables of schema %u, this xnf uses %u; detach everything and remove %s",
				       root, cfg.schema, XNF_SCHEMA, root);
			goto out_destroy;
		}
	}
	if (err) {
		xnf_errf(errbuf, errlen, err, "cannot %s %s: %s",
			 fresh ? "write" : "read", XNF_MAP_STR(XNF_MAP_CFG),
			 strerror(-err));
		goto out_destroy;
	}
	xnf_tables__destroy(skel);
	dp->created = fresh;
	*out = dp;
	return 0;

out_destroy:
	xnf_tables__destroy(skel);
	if (fresh)
		xnf_dp_destroy(root);
out_free:
	xnf_dp_close(dp);
	return err;
}

bool xnf_dp_is_reader(const struct xnf_dp *dp)
{
	return dp->reader;
}

void xnf_dp_close(struct xnf_dp *dp)
{
	int i;

	if (!dp)
		return;
	xnf_route_batch_abort(dp);
	for (i = 0; i < __XNF_T_MAX; i++)
		if (dp->fd[i] >= 0)
			close(dp->fd[i]);
	if (dp->lock_fd >= 0)
		close(dp->lock_fd);
	free(dp->released);
	free(dp);
}

/* Removes the pins and directories of @dir, one level of subdirectories
 * deep at most (the layout has two). */
static int rm_pins(const char *dir, int depth)
{
	char path[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR && depth > 0)
			err = rm_pins(path, depth - 1) ?: err;
		else if (unlink(path))
			err = -errno;
		/* after a pin or a directory */
		xnf_crash_point("remove:pin");
	}
	closedir(d);
	if (rmdir(dir) && !err)
		err = -errno;
	return err;
}

int xnf_dev_remove(struct xnf_dp *dp, const char *dev)
{
	char path[PATH_MAX];
	int err;

	err = xnf_dev_path(dp->root, dev, NULL, path, sizeof(path));
	return err ?: rm_pins(path, 0);
}

int xnf_dp_destroy(const char *root)
{
	return rm_pins(root, 2);
}

int xnf_cfg_read(struct xnf_dp *dp, struct xnf_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(dp->fd[XNF_T_CFG], &zero, cfg) ? -errno : 0;
}

/* The exception actions are tables too, to the AF_XDP workers, which keep
 * a copy: a write moves tables_gen on from what the map holds now (not
 * from the caller's copy, which may be older). */
int xnf_cfg_write(struct xnf_dp *dp, const struct xnf_config *cfg)
{
	struct xnf_config now, next = *cfg;
	__u32 zero = 0;
	int err;

	err = xnf_cfg_read(dp, &now);
	if (err)
		return err;
	next.tables_gen = now.tables_gen + 1;
	next.rt_copy = now.rt_copy;
	next.rt_pending = now.rt_pending;
	next.change_seq = now.change_seq;
	next.xconnects = now.xconnects;
	dp->created = false;
	return bpf_map_update_elem(dp->fd[XNF_T_CFG], &zero, &next, BPF_ANY) ?
		       -errno :
		       0;
}

/*
 * Moves the table generation on after a change is visible to packets: the
 * flow cache's results of older generations no longer match
 * (bpf/fcache.bpf.h), and the AF_XDP workers reload their copies. One
 * read-modify-write of xnf_cfg[0]. Writers are serialised by the instance
 * lock (`xnf` holds it for its whole run), so no bump is lost. If the bump
 * itself fails, the write stands (packets without a cached result already
 * use it), but cached results and the workers' copies may stay old until
 * the next change: the warning says so, and the error is returned, so
 * that the write fails rather than leave packets on old results silently.
 */
int xnf_tables_changed(struct xnf_dp *dp)
{
	struct xnf_config cfg;
	__u32 zero = 0;
	int err;

	/* The instance holds something now: a failed attach keeps it. */
	dp->created = false;
	err = xnf_cfg_read(dp, &cfg);
	if (!err) {
		cfg.tables_gen++;
		if (bpf_map_update_elem(dp->fd[XNF_T_CFG], &zero, &cfg, BPF_ANY))
			err = -errno;
	}
	if (err)
		pr_warn("the change is in force, but the table "
			"generation did not move (%s: %s): the flow cache and "
			"AF_XDP workers may use the old tables until the next "
			"change\n",
			XNF_MAP_STR(XNF_MAP_CFG), strerror(-err));
	return err;
}

int xnf_tables_gen(struct xnf_dp *dp, __u32 *gen)
{
	struct xnf_config cfg;
	int err;

	err = xnf_cfg_read(dp, &cfg);
	if (!err)
		*gen = cfg.tables_gen;
	return err;
}

int xnf_port_add(struct xnf_dp *dp, __u32 ifindex)
{
	/* No program runs on egress: fd -1 (the kernel checks fd > 0). */
	struct bpf_devmap_val val = { .ifindex = ifindex, .bpf_prog.fd = -1 };

	return bpf_map_update_elem(dp->fd[XNF_T_TX], &ifindex, &val, BPF_ANY) ?
		       -errno :
		       0;
}

int xnf_port_del(struct xnf_dp *dp, __u32 ifindex)
{
	return bpf_map_delete_elem(dp->fd[XNF_T_TX], &ifindex) ? -errno : 0;
}

bool xnf_port_exists(struct xnf_dp *dp, __u32 ifindex)
{
	struct bpf_devmap_val val;

	return !bpf_map_lookup_elem(dp->fd[XNF_T_TX], &ifindex, &val);
}

int xnf_fdb_set(struct xnf_dp *dp, const __u8 mac[6], __u32 ifindex)
{
	struct xnf_fdb_key key = {};
	struct xnf_fdb_entry val = { .ifindex = ifindex };

	memcpy(key.mac, mac, 6);
	if (bpf_map_update_elem(dp->fd[XNF_T_FDB], &key, &val, BPF_ANY))
		return -errno;
	return xnf_tables_changed(dp);
}

int xnf_fdb_get(struct xnf_dp *dp, const __u8 mac[6], struct xnf_fdb_entry *e)
{
	struct xnf_fdb_key key = {};

	memcpy(key.mac, mac, 6);
	return bpf_map_lookup_elem(dp->fd[XNF_T_FDB], &key, e) ? -errno : 0;
}

int xnf_fdb_del(struct xnf_dp *dp, const __u8 mac[6])
{
	struct xnf_fdb_key key = {};

	memcpy(key.mac, mac, 6);
	if (bpf_map_delete_elem(dp->fd[XNF_T_FDB], &key))
		return -errno;
	return xnf_tables_changed(dp);
}

/*
 * After a write to xnf_xconnect: counts its entries into
 * xnf_config.xconnects, which l2fwd reads to skip the lookup while there
 * are none, and tells the workers, in one write of xnf_config[0]. Counted
 * from the map rather than kept as a running sum, so a count left wrong
 * (a process killed between the two writes) is put right by the next
 * change. When the map cannot be walked the count stays non-zero: a
 * lookup too many costs time, one too few would lose a cross-connect.
 */
static int xconnect_changed(struct xnf_dp *dp)
{
	__u32 key, next, n = 0;
	struct xnf_config cfg;
	__u32 zero = 0;
	void *prev = NULL;
	int err;

	while (!bpf_map_get_next_key(dp->fd[XNF_T_XCONNECT], prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	if (errno != ENOENT && !n)
		n = 1;
	dp->created = false;
	err = xnf_cfg_read(dp, &cfg);
	if (err)
		return err;
	cfg.xconnects = n;
	cfg.tables_gen++;
	return bpf_map_update_elem(dp->fd[XNF_T_CFG], &zero, &cfg, BPF_ANY) ?
		       -errno :
		       0;
}

static void xconnect_warn(int err)
{
	pr_warn("the change is in force, but the table generation "
		"did not move (%s: %s): AF_XDP workers use it after the next "
		"change\n",
		XNF_MAP_STR(XNF_MAP_CFG), strerror(-err));
}

/* A new entry is in force only once xnf_config.xconnects counts it: if
 * that write fails, the entry goes again and the error is returned. */
int xnf_xconnect_set(struct xnf_dp *dp, __u32 in_ifindex,
		     const struct xnf_xconnect *xc)
{
	int fd = dp->fd[XNF_T_XCONNECT], err;
	struct xnf_xconnect old;
	bool existed;

	existed = !bpf_map_lookup_elem(fd, &in_ifindex, &old);
	if (bpf_map_update_elem(fd, &in_ifindex, xc, BPF_ANY))
		return -errno;
	err = xconnect_changed(dp);
	if (err && !existed) {
		bpf_map_delete_elem(fd, &in_ifindex);
		return err;
	}
	if (err)
		xconnect_warn(err);
	return err;
}

int xnf_xconnect_get(struct xnf_dp *dp, __u32 in_ifindex, struct xnf_xconnect *xc)
{
	return bpf_map_lookup_elem(dp->fd[XNF_T_XCONNECT], &in_ifindex, xc) ?
		       -errno :
		       0;
}

/* A stale count after a delete only costs l2fwd a lookup that misses. */
int xnf_xconnect_del(struct xnf_dp *dp, __u32 in_ifindex)
{
	int err;

	if (bpf_map_delete_elem(dp->fd[XNF_T_XCONNECT], &in_ifindex))
		return -errno;
	err = xconnect_changed(dp);
	if (err)
		xconnect_warn(err);
	return err;
}

int xnf_ncpus(void)
{
	return libbpf_num_possible_cpus();
}

__u32 xnf_netns_inode(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (__u32)st.st_ino;
}

/* The per-CPU value of @t for @key: zeroed, created (BPF_NOEXIST, an
 * entry there is kept), or reset (BPF_EXIST, never created). */
static int dev_entry_zero(struct xnf_dp *dp, enum xnf_table t,
			  const struct xnf_dev_key *key, size_t size, __u64 flags)
{
	int ncpus = xnf_ncpus(), err = 0;
	void *zero;

	if (ncpus < 0)
		return ncpus;
	zero = calloc(ncpus, size);
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(dp->fd[t], key, zero, flags) &&
	    errno != (flags == BPF_EXIST ? ENOENT : EEXIST))
		err = -errno;
	free(zero);
	return err;
}

/* Both counters of a device, created or reset (@flags as above). */
static int dev_entries_zero(struct xnf_dp *dp, const struct xnf_dev_key *key,
			    __u64 flags)
{
	int err;

	err = dev_entry_zero(dp, XNF_T_BATCH, key,
			     sizeof(struct xnf_batch_hist), flags);
	if (!err)
		err = dev_entry_zero(dp, XNF_T_XMIT, key,
				     sizeof(struct xnf_xmit_counters), flags);
	return err;
}

int xnf_batch_watch(struct xnf_dp *dp, __u32 ifindex)
{
	struct xnf_dev_key key = { .netns = xnf_netns_inode(),
				   .ifindex = ifindex };

	return dev_entries_zero(dp, &key, BPF_NOEXIST);
}

int xnf_batch_reset(struct xnf_dp *dp, __u32 netns, __u32 ifindex)
{
	struct xnf_dev_key key = { .netns = netns, .ifindex = ifindex };

	/* BPF_EXIST: never create an entry for an interface being detached. */
	return dev_entries_zero(dp, &key, BPF_EXIST);
}

int xnf_batch_unwatch(struct xnf_dp *dp, __u32 netns, __u32 ifindex)
{
	struct xnf_dev_key key = { .netns = netns, .ifindex = ifindex };
	int err = 0;

	if (bpf_map_delete_elem(dp->fd[XNF_T_XMIT], &key) && errno != ENOENT)
		err = -errno;
	if (bpf_map_delete_elem(dp->fd[XNF_T_BATCH], &key) && errno != ENOENT)
		err = -errno;
	return err;
}

int xnf_xmit_read(struct xnf_dp *dp, __u32 netns, __u32 ifindex,
		  struct xnf_xmit_counters *sum)
{
	struct xnf_dev_key key = { .netns = netns, .ifindex = ifindex };
	int ncpus = xnf_ncpus(), cpu, err = 0;
	struct xnf_xmit_counters *v;

	memset(sum, 0, sizeof(*sum));
	if (ncpus < 0)
		return ncpus;
	v = calloc(ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(dp->fd[XNF_T_XMIT], &key, v))
		err = -errno;
	for (cpu = 0; !err && cpu < ncpus; cpu++) {
		sum->xmit_sent += v[cpu].xmit_sent;
		sum->xmit_drops += v[cpu].xmit_drops;
		sum->redirect_err += v[cpu].redirect_err;
	}
	free(v);
	return err;
}

int xnf_batch_tracer(struct xnf_dp *dp, struct bpf_link *links[__XNF_TRACER_MAX],
		     char *errbuf, size_t errlen)
{
	struct xnf_batch *skel;
	struct bpf_program *progs[__XNF_TRACER_MAX];
	int err, i;

	memset(links, 0, __XNF_TRACER_MAX * sizeof(*links));
	skel = xnf_batch__open();
	if (!skel)
		return xnf_errf(errbuf, errlen, -errno,
				"cannot open the tracers' BPF object: %s",
				strerror(errno));
	progs[XNF_TRACER_NAPI] = skel->progs.xnf_napi_poll;
	progs[XNF_TRACER_XMIT] = skel->progs.xnf_devmap_xmit;
	progs[XNF_TRACER_REDIRECT_ERR] = skel->progs.xnf_redirect_err;
	err = xnf_bind_maps(dp, skel->obj, NULL, -1);
	if (!err)
		err = xnf_batch__load(skel);
	if (err) {
		xnf_errf(errbuf, errlen, err,
			 "cannot load the napi_poll and xdp tracers: %s; "
			 "the kernel needs BTF (CONFIG_DEBUG_INFO_BTF) for "
			 "tp_btf programs",
			 strerror(-err));
		goto out;
	}
	/* The links keep the programs alive after the skeleton is gone. */
	for (i = 0; i < __XNF_TRACER_MAX && !err; i++) {
		links[i] = bpf_program__attach(progs[i]);
		if (!links[i]) {
			err = -errno;
			xnf_errf(errbuf, errlen, err,
				 "cannot attach %s to its tracepoint: %s",
				 bpf_program__name(progs[i]), strerror(-err));
		}
	}
	if (err)
		for (i = 0; i < __XNF_TRACER_MAX; i++) {
			bpf_link__destroy(links[i]);
			links[i] = NULL;
		}
out:
	xnf_batch__destroy(skel);
	return err;
}

/*
 * An update of a map-in-map from user space returns only after
 * synchronize_rcu() (maybe_wait_bpf_programs() in kernel/bpf/syscall.c),
 * i.e. after every XDP program that started before it has finished: XDP
 * runs inside an RCU read-side section (NAPI / softirq). A throwaway
 * ARRAY_OF_MAPS gives us that wait without touching any real table.
 */
int xnf_sync_rcu(void)
{
	int inner, outer = -1, err = 0;
	__u32 zero = 0;
	LIBBPF_OPTS(bpf_map_create_opts, opts);

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xnf_sync_in", 4, 4, 1, NULL);
	if (inner < 0)
		return -errno;
	opts.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "xnf_sync", 4, 4, 1,
			       &opts);
	if (outer < 0 || bpf_map_update_elem(outer, &zero, &inner, BPF_ANY))
		err = -errno;
	if (outer >= 0)
		close(outer);
	close(inner);
	return err;
}

/* ---- chains ---- */

/* One loaded BPF object: its skeleton and the destroy function of that
 * skeleton type. */
struct xnf_obj {
	void *skel;
	void (*destroy)(void *skel);
	struct bpf_object *obj;
	struct bpf_program *prog;
};

struct xnf_chain {
	struct xnf_chain_spec spec;
	struct xnf_obj entry;		  /* entry, or the fused program */
	struct xnf_obj nf[XNF_CHAIN_MAX]; /* slot i */
	int array_fd;			  /* owned by entry.obj */
	int stats_fd;			  /* owned by entry.obj */
};

static bool chain_has(const struct xnf_chain_spec *spec, __u32 nf)
{
	__u32 i;

	for (i = 0; i < spec->len; i++)
		if (spec->nf[i] == nf)
			return true;
	return false;
}

/* An NF of @spec uses the flow cache (bpf/fcache.bpf.h): fib mode's l3fwd
 * asks the kernel's FIB, which has no generation to cache it by. */
static bool chain_caches(const struct xnf_chain_spec *spec)
{
	return chain_has(spec, XNF_NF_FIREWALL) ||
	       chain_has(spec, XNF_NF_L2FWD) ||
	       (chain_has(spec, XNF_NF_L3FWD) && !spec->l3_fib);
}

/* Opens skeleton @sk and sets the position rodata every chain program has. */
#define XNF_OPEN_SKEL(sk, o, next_slot, spec)                                     \
	({                                                                        \
		struct sk *_s = sk##__open();                                     \
		int _err = _s ? 0 : -errno;                                       \
		if (_s) {                                                         \
			_s->rodata->xnf_next_slot = (next_slot);                  \
			_s->rodata->xnf_chain_len = (spec)->len;                  \
			_s->rodata->xnf_fail_closed = chain_has(spec,             \
								XNF_NF_FIREWALL); \
			_s->rodata->xnf_fc_used = chain_caches(spec);             \
			(o)->skel = _s;                                           \
			(o)->destroy = (void (*)(void *))sk##__destroy;           \
			(o)->obj = _s->obj;                                       \
			(o)->prog = bpf_object__next_program(_s->obj, NULL);      \
		}                                                                 \
		_err;                                                             \
	})

static int xnf_open_nf(struct xnf_obj *o, __u32 nf, __u32 slot,
		       const struct xnf_chain_spec *spec)
{
	int err;

	switch (nf) {
	case XNF_NF_FIREWALL:
		return XNF_OPEN_SKEL(xnf_firewall, o, slot + 1, spec);
	case XNF_NF_L3FWD:
		err = XNF_OPEN_SKEL(xnf_l3fwd, o, slot + 1, spec);
		if (!err)
			((struct xnf_l3fwd *)o->skel)->rodata->xnf_l3_fib =
				spec->l3_fib;
		return err;
	case XNF_NF_L2FWD:
		return XNF_OPEN_SKEL(xnf_l2fwd, o, slot + 1, spec);
	case XNF_NF_XSK:
		/* With fib, it asks the kernel's FIB for the workers. */
		err = XNF_OPEN_SKEL(xnf_xsk, o, slot + 1, spec);
		if (!err)
			((struct xnf_xsk *)o->skel)->rodata->xnf_l3_fib = spec->l3_fib;
		return err;
	default:
		return -EINVAL;
	}
}

static int xnf_open_fused(struct xnf_obj *o, const struct xnf_chain_spec *spec)
{
	struct xnf_fused *s;
	__u32 i;
	int err;

	err = XNF_OPEN_SKEL(xnf_fused, o, 0, spec);
	if (err)
		return err;
	s = o->skel;
	for (i = 0; i < spec->len; i++)
		s->rodata->xnf_fused[i] = spec->nf[i];
	s->rodata->xnf_fused_len = spec->len;
	s->rodata->xnf_l3_fib = spec->l3_fib;
	return 0;
}

static void xnf_obj_destroy(struct xnf_obj *o)
{
	if (o->skel)
		o->destroy(o->skel);
	memset(o, 0, sizeof(*o));
}

static int xnf_load_obj(struct xnf_dp *dp, struct xnf_obj *o, const char *dev,
			int array_fd, int numa_node, const char *what,
			char *errbuf, size_t errlen)
{
	int err;

	err = xnf_bind_maps(dp, o->obj, dev, numa_node);
	if (!err && array_fd >= 0) {
		struct bpf_map *m =
			bpf_object__find_map_by_name(o->obj,
						     XNF_MAP_STR(XNF_MAP_CHAIN));

		err = m ? bpf_map__reuse_fd(m, array_fd) : -ENOENT;
	}
	if (!err)
		err = bpf_object__load(o->obj);
	if (err)
		xnf_errf(errbuf, errlen, err,
			 "cannot load the %s program: %s (run with -vv for "
			 "the verifier log)",
			 what, strerror(-err));
	return err;
}

int xnf_chain_parse(const char *text, struct xnf_chain_spec *spec, char *errbuf,
		    size_t errlen)
{
	const char *p = text, *comma;
	char name[32];
	size_t len;
	int nf;

	memset(spec, 0, sizeof(*spec));
	do {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (!len || len >= sizeof(name))
			return xnf_errf(errbuf, errlen, -EINVAL,
					"'%s' is not a chain: write NF[,NF...] "
					"with NFs firewall, l3fwd, l2fwd, xsk",
					text);
		memcpy(name, p, len);
		name[len] = '\0';
		nf = xnf_nf_from_name(name);
		if (nf < 0)
			return xnf_errf(errbuf, errlen, -EINVAL,
					"unknown NF '%s'; NFs are firewall, "
					"l3fwd, l2fwd, xsk",
					name);
		if (chain_has(spec, nf))
			return xnf_errf(errbuf, errlen, -EINVAL,
					"%s appears twice in the chain; each "
					"NF runs at most once",
					name);
		if (spec->len == XNF_CHAIN_MAX)
			return xnf_errf(errbuf, errlen, -E2BIG,
					"a chain holds at most %d NFs",
					XNF_CHAIN_MAX);
		spec->nf[spec->len++] = nf;
		p = comma + 1;
	} while (comma);
	return 0;
}

int xnf_chain_format(const struct xnf_chain_spec *spec, char *buf, size_t len)
{
	size_t off = 0;
	__u32 i;

	buf[0] = '\0';
	for (i = 0; i < spec->len && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? "," : "",
				xnf_nf_name(spec->nf[i]));
	return off < len ? 0 : -ENAMETOOLONG;
}

int xnf_chain_load(struct xnf_dp *dp, const char *dev,
		   const struct xnf_chain_spec *spec, struct xnf_chain **out,
		   char *errbuf, size_t errlen)
{
	char path[PATH_MAX];
	int node = spec->numa ? spec->numa_node : -1;
	const char *what;
	struct xnf_chain *c;
	__u32 i;
	int err;

	if (!spec->len || spec->len > XNF_CHAIN_MAX)
		return xnf_errf(errbuf, errlen, -EINVAL,
				"a chain holds 1 to %d NFs, not %u",
				XNF_CHAIN_MAX, spec->len);
	if (spec->fused && spec->len > XNF_FUSED_MAX)
		return xnf_errf(errbuf, errlen, -EINVAL,
				"a fused chain holds at most %d NFs",
				XNF_FUSED_MAX);
	for (i = 0; i < spec->len; i++)
		if (spec->nf[i] <= XNF_NF_ENTRY || spec->nf[i] >= __XNF_NF_MAX)
			return xnf_errf(errbuf, errlen, -EINVAL,
					"NF id %u at position %u of the chain "
					"is not an NF",
					spec->nf[i], i);
	err = xnf_dev_name_check(dev, errbuf, errlen);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return xnf_errf(errbuf, errlen, -ENOMEM, "out of memory");
	c->spec = *spec;
	c->array_fd = -1;

	err = xnf_dev_path(dp->root, dev, NULL, path, sizeof(path)) ?:
		      mkdir_private(path);
	if (err) {
		xnf_errf(errbuf, errlen, err, "cannot create %s/dev/%s: %s",
			 dp->root, dev, strerror(-err));
		goto out_free;
	}

	if (spec->fused) {
		what = "fused chain";
		err = xnf_open_fused(&c->entry, spec);
		if (err)
			goto out_open;
		err = xnf_load_obj(dp, &c->entry, dev, -1, node, what, errbuf,
				   errlen);
		if (err)
			goto out_free;
	} else {
		what = "entry";
		err = XNF_OPEN_SKEL(xnf_entry, &c->entry, 0, spec);
		if (err)
			goto out_open;
		err = xnf_load_obj(dp, &c->entry, dev, -1, node, what, errbuf,
				   errlen);
		if (err)
			goto out_free;
		c->array_fd = bpf_map__fd(
			((struct xnf_entry *)c->entry.skel)->maps.xnf_chain);
		for (i = 0; i < spec->len; i++) {
			int prog_fd;

			what = xnf_nf_name(spec->nf[i]);
			err = xnf_open_nf(&c->nf[i], spec->nf[i], i, spec);
			if (err)
				goto out_open;
			err = xnf_load_obj(dp, &c->nf[i], dev, c->array_fd,
					   node, what, errbuf, errlen);
			if (err)
				goto out_free;
			prog_fd = bpf_program__fd(c->nf[i].prog);
			if (bpf_map_update_elem(c->array_fd, &i, &prog_fd,
						BPF_ANY)) {
				err = xnf_errf(errbuf, errlen, -errno,
					       "cannot put the %s program into "
					       "slot %u of the chain: %s",
					       what, i, strerror(errno));
				goto out_free;
			}
		}
	}
	c->stats_fd = bpf_map__fd(
		bpf_object__find_map_by_name(c->entry.obj,
					     XNF_MAP_STR(XNF_MAP_STATS)));
	*out = c;
	return 0;

out_open:
	xnf_errf(errbuf, errlen, err, "cannot open the %s program: %s", what,
		 strerror(-err));
out_free:
	xnf_chain_free(c);
	return err;
}

int xnf_chain_prog_fd(const struct xnf_chain *c)
{
	return bpf_program__fd(c->entry.prog);
}

int xnf_chain_array_fd(const struct xnf_chain *c)
{
	return c->array_fd;
}

int xnf_chain_slot_fd(const struct xnf_chain *c, __u32 slot)
{
	if (c->spec.fused || slot >= c->spec.len)
		return -EINVAL;
	return bpf_program__fd(c->nf[slot].prog);
}

int xnf_chain_stats_fd(const struct xnf_chain *c)
{
	return c->stats_fd;
}

int xnf_chain_dev_fd(const struct xnf_chain *c)
{
	return bpf_map__fd(bpf_object__find_map_by_name(c->entry.obj,
							XNF_MAP_STR(XNF_MAP_DEV)));
}

void xnf_chain_free(struct xnf_chain *c)
{
	int i;

	if (!c)
		return;
	for (i = XNF_CHAIN_MAX - 1; i >= 0; i--)
		xnf_obj_destroy(&c->nf[i]);
	xnf_obj_destroy(&c->entry);
	free(c);
}

int xnf_stats_read(int stats_fd, struct xnf_stats *sum, struct xnf_stats *percpu)
{
	int ncpus = xnf_ncpus(), cpu, err = 0;
	struct xnf_stats *vals = percpu;
	__u32 zero = 0;
	size_t i;

	if (ncpus < 0)
		return ncpus;
	if (!vals && !(vals = calloc(ncpus, sizeof(*vals))))
		return -ENOMEM;
	if (bpf_map_lookup_elem(stats_fd, &zero, vals)) {
		err = -errno;
		goto out;
	}
	if (sum) {
		memset(sum, 0, sizeof(*sum));
		for (cpu = 0; cpu < ncpus; cpu++) {
			const __u64 *src = (const __u64 *)&vals[cpu];
			__u64 *dst = (__u64 *)sum;

			for (i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
				dst[i] += src[i];
		}
	}
out:
	if (vals != percpu)
		free(vals);
	return err;
}

int xnf_stats_reset(int stats_fd)
{
	int ncpus = xnf_ncpus(), err = 0;
	struct xnf_stats *zero;
	__u32 key = 0;

	if (ncpus < 0)
		return ncpus;
	zero = calloc(ncpus, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(stats_fd, &key, zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}
