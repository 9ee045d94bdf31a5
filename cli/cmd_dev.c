// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf attach / detach / chain set / status / config / destroy.
 *
 * Per interface, under <root>/dev/<ifname>/:
 *   link       the XDP bpf_link: the attachment itself
 *   prog       the program the link runs (entry, or the fused chain)
 *   chain      the prog array of a tail-called chain (slot i = NF i)
 *   xnf_stats, xnf_xsks, xnf_dev   per-interface maps
 *
 * attach builds everything aside and creates the link last; any failure
 * undoes what this invocation created and nothing else. chain set loads a
 * complete new chain (new programs, new prog array) next to the running
 * one, swaps the link's program with one bpf_link_update(), waits for an
 * RCU grace period (packets that started on the old entry program may still
 * tail-call into the old array), and only then lets the old chain go.
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "placement.h"

#define BATCH_LINK "batch_link"

static bool pin_exists(const char *path)
{
	return !access(path, F_OK);
}

static int dev_info_read(const char *dev, struct xnf_dev_info *info)
{
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, err = 0;

	cli_dev_path(path, dev, XNF_MAP_STR(XNF_MAP_DEV));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &zero, info))
		err = -errno;
	close(fd);
	return err;
}

static __u32 pin_prog_id(const char *path)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(path);

	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	close(fd);
	return info.id;
}

static __u32 link_prog_id(const char *dev)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	cli_dev_path(path, dev, "link");
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.prog_id = 0;
	close(fd);
	return info.prog_id;
}

/* Makes the pins describe the chain that runs after a `chain set` that was
 * stopped midway (killed): one whose switch happened gets its staged pins
 * ("prog_new", "chain_new", xnf_dev[1]) moved into place, one whose switch
 * did not gets them removed. Runs under the instance lock. */
static int dev_recover(const char *dev)
{
	char staged[PATH_MAX], path[PATH_MAX];
	struct xnf_dev_info info;
	__u32 zero = 0, one = 1;
	int fd, err = 0;

	cli_dev_path(staged, dev, "prog_new");
	if (!pin_exists(staged))
		return 0;
	if (link_prog_id(dev) != pin_prog_id(staged)) {
		unlink(staged);
		cli_dev_path(staged, dev, "chain_new");
		unlink(staged);
		return 0;
	}
	/* In-flight packets of the old chain may still tail-call into the
	 * old array, whose pin goes away below. */
	xnf_sync_rcu();
	cli_dev_path(path, dev, XNF_MAP_STR(XNF_MAP_DEV));
	fd = bpf_obj_get(path);
	if (fd < 0 || bpf_map_lookup_elem(fd, &one, &info) ||
	    bpf_map_update_elem(fd, &zero, &info, BPF_ANY))
		err = -errno;
	if (fd >= 0)
		close(fd);
	cli_dev_path(staged, dev, "chain_new");
	cli_dev_path(path, dev, "chain");
	if (!err) {
		/* A fused chain has no prog array: drop the old one's pin. */
		if (pin_exists(staged) ? rename(staged, path) :
		    unlink(path) && errno != ENOENT)
			err = -errno;
	}
	cli_dev_path(staged, dev, "prog_new");
	cli_dev_path(path, dev, "prog");
	if (!err && rename(staged, path))
		err = -errno;
	if (err)
		return cli_err("cannot complete the chain switch of %s in %s: %s",
			       dev, path, strerror(-err));
	return 0;
}

/* Pins @fd at <dev>/<name>, replacing what is there: the dataplane does not
 * use pins, they only keep objects alive and visible to bpftool. */
static int repin(int fd, const char *dev, const char *name)
{
	char path[PATH_MAX];

	cli_dev_path(path, dev, name);
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
		-errno : 0;
}

/* Pins the program of @c as "prog<sfx>" and, when tail-called, its prog
 * array as "chain<sfx>". */
static int pin_chain(struct xnf_chain *c, const char *dev, const char *sfx)
{
	char name[16];
	int err;

	snprintf(name, sizeof(name), "prog%s", sfx);
	err = repin(xnf_chain_prog_fd(c), dev, name);
	if (err || xnf_chain_array_fd(c) < 0)
		return err;
	snprintf(name, sizeof(name), "chain%s", sfx);
	return repin(xnf_chain_array_fd(c), dev, name);
}

/* The napi_poll tracer is shared by all interfaces: loaded by the first
 * attach, removed by the last detach. */
static int batch_tracer_get(struct xnf_dp *dp, bool *created)
{
	struct bpf_link *link = NULL;
	char path[PATH_MAX];
	int err;

	*created = false;
	snprintf(path, sizeof(path), "%s/%s", cli.root, BATCH_LINK);
	if (pin_exists(path))
		return 0;
	err = xnf_batch_tracer(dp, &link);
	if (err)
		return err;
	err = bpf_link__pin(link, path);
	*created = !err;
	bpf_link__destroy(link);
	return err;
}

static void batch_tracer_put_if_unused(void)
{
	char path[PATH_MAX];
	bool any = false;
	struct dirent *de;
	DIR *d;

	cli_dev_path(path, "", NULL);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				any = true;
		closedir(d);
	}
	if (!any) {
		snprintf(path, sizeof(path), "%s/%s", cli.root, BATCH_LINK);
		unlink(path);
	}
}

static int do_attach_help(void)
{
	fprintf(stderr,
"Usage: xnf attach DEV chain NF[,NF...] [mode { native | generic }] [fused] [fib]\n"
"                  [queues N] [cores { LIST | auto }]\n"
"NF := { firewall | l3fwd | l2fwd | xsk }\n"
"  mode native   in the driver (default); generic: in the stack, any device\n"
"  fused         the whole chain in one program (order fixed until detach)\n"
"  fib           l3fwd uses the kernel's routes and neighbours\n"
"  queues N      set N channels (an error if the device refuses)\n"
"  cores LIST    queue i's IRQ (or napi thread) on the i-th CPU of LIST\n"
"  cores auto    the placement of 'xnf plan DEV': the NIC's NUMA node, one\n"
"                core per queue; detach restores what it changed\n");
	return 0;
}

int do_attach(int argc, char **argv)
{
	struct xnf_chain_spec spec = {};
	__u32 ifindex, xdp_flags = XDP_FLAGS_DRV_MODE, prog_id = 0;
	bool have_chain = false, created_dir, port_added = false;
	bool tracer_created = false, watched = false, fresh_instance;
	struct xnf_chain *c = NULL;
	char path[PATH_MAX];
	const char *dev;
	struct xnf_dp *dp;
	int link_fd = -1, err, rc;
	struct xnf_plan_req preq = {};
	bool have_queues = false, have_cores = false;
	struct xnf_place_state *pst = NULL;
	struct xnf_plan *plan = NULL;
	char perr[XNF_PLACE_ERR_LEN] = "";
	const char *sysroot;
	LIBBPF_OPTS(bpf_link_create_opts, lopts);

	if (argc < 1 || is_prefix(argv[0], "help"))
		return do_attach_help();
	dev = argv[0];
	NEXT_ARG();
	while (argc > 0) {
		rc = cli_parse_placement(&argc, &argv, &preq, &have_queues,
					 &have_cores);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		if (is_prefix(argv[0], "chain")) {
			NEXT_ARG();
			REQ_ARGS(1, "attach");
			struct xnf_chain_spec parsed;

			if (xnf_chain_parse(argv[0], &parsed))
				return -1;
			spec.len = parsed.len;
			memcpy(spec.nf, parsed.nf, sizeof(spec.nf));
			have_chain = true;
		} else if (is_prefix(argv[0], "mode")) {
			NEXT_ARG();
			REQ_ARGS(1, "attach");
			if (is_prefix(argv[0], "native") || !strcmp(argv[0], "drv"))
				xdp_flags = XDP_FLAGS_DRV_MODE;
			else if (is_prefix(argv[0], "generic") || !strcmp(argv[0], "skb"))
				xdp_flags = XDP_FLAGS_SKB_MODE;
			else
				return cli_err("invalid mode '%s': expected native or generic",
					       argv[0]);
		} else if (is_prefix(argv[0], "fused")) {
			spec.fused = true;
		} else if (is_prefix(argv[0], "fib")) {
			spec.l3_fib = true;
		} else {
			return cli_err("unknown attach argument '%s'; see 'xnf attach help'",
				       argv[0]);
		}
		NEXT_ARG();
	}
	if (!have_chain)
		return cli_err("no chain given; write 'xnf attach %s chain firewall,l3fwd,l2fwd'",
			       dev);
	if (spec.fused && spec.len > XNF_FUSED_MAX)
		return cli_err("a fused chain holds at most %d NFs", XNF_FUSED_MAX);
	if (cli_ifindex(dev, &ifindex))
		return -1;
	if (bpf_xdp_query_id(ifindex, 0, &prog_id) == 0 && prog_id)
		return cli_err("%s already runs XDP program id %u; xnf never replaces a "
			       "program it did not attach: if it is xnf's, use 'xnf chain "
			       "set %s ...'; if not, remove it first (ip link set dev %s "
			       "xdp off)", dev, prog_id, dev, dev);
	if (have_queues || have_cores) {
		/* Plan before anything is created: a wrong request changes
		 * nothing. The plan is for this machine, never a fixture. */
		sysroot = getenv("XNF_SYSFS_ROOT");
		if (sysroot && *sysroot && strcmp(sysroot, "/"))
			return cli_err("XNF_SYSFS_ROOT=%s: a placement is applied to "
				       "this machine only; unset it to attach with "
				       "queues or cores", sysroot);
		err = xnf_plan_compute("", dev, &preq, &plan, perr, sizeof(perr));
		if (err)
			return cli_err("cannot place %s: %s", dev, perr);
		for (rc = 0; rc < plan->nwarnings; rc++)
			fprintf(stderr, "Warning: %s\n", plan->warnings[rc]);
		pst = calloc(1, sizeof(*pst));
		if (!pst) {
			free(plan);
			return cli_err("out of memory");
		}
	}
	snprintf(path, sizeof(path), "%s/tables/%s", cli.root, XNF_MAP_STR(XNF_MAP_CFG));
	fresh_instance = !pin_exists(path);
	dp = cli_dp(true);
	cli_dev_path(path, dev, "link");
	if (dp && pin_exists(path)) {
		cli_err("%s has a stale xnf attachment pinned at %s; run "
			"'xnf detach %s' first", dev, path, dev);
		dp = NULL;
	}
	if (!dp) {
		free(plan);
		free(pst);
		return -1;
	}
	cli_dev_path(path, dev, NULL);
	created_dir = !pin_exists(path);

	if (plan && plan->node >= 0) {
		spec.numa = true;
		spec.numa_node = plan->node;
	}
	err = xnf_chain_load(dp, dev, &spec, &c);
	if (err) {
		cli_err("cannot load the chain for %s: %s", dev, strerror(-err));
		goto out_undo;
	}
	err = write_info(c, 0, ifindex, xdp_flags, &spec);
	if (!err)
		err = pin_chain(c, dev, "");
	if (err) {
		cli_err("cannot pin the chain of %s under %s: %s", dev, path,
			strerror(-err));
		goto out_undo;
	}
	if (!xnf_port_exists(dp, ifindex)) {
		err = xnf_port_add(dp, ifindex);
		if (err) {
			cli_err("cannot add %s to the egress ports (%s): %s", dev,
				XNF_MAP_STR(XNF_MAP_TX), strerror(-err));
			goto out_undo;
		}
		port_added = true;
	}
	err = xnf_batch_watch(dp, ifindex);
	watched = !err;
	if (!err)
		err = batch_tracer_get(dp, &tracer_created);
	if (err) {
		cli_err("cannot set up the batch-size histogram of %s: %s", dev,
			strerror(-err));
		goto out_undo;
	}
	if (plan) {
		/* Channels before the XDP attach, so the program starts on
		 * the rings it will keep; recorded before anything else may
		 * fail, so that the undo below and detach find it. */
		err = xnf_place_apply_channels(plan, have_queues, pst, perr,
					       sizeof(perr));
		if (err) {
			cli_err("%s", perr);
			goto out_undo;
		}
		cli_dev_path(path, dev, NULL);
		err = xnf_place_save(path, pst);
		if (err) {
			cli_err("cannot record the placement of %s in %s: %s", dev,
				path, strerror(-err));
			goto out_undo;
		}
	}

	lopts.flags = xdp_flags;
	link_fd = bpf_link_create(xnf_chain_prog_fd(c), ifindex, BPF_XDP, &lopts);
	if (link_fd < 0) {
		err = -errno;
		if (err == -EOPNOTSUPP || err == -EINVAL)
			cli_err("cannot attach to %s in %s mode: %s; the driver may not "
				"support native XDP (try 'mode generic') or its MTU is "
				"too large", dev, xdp_flags == XDP_FLAGS_SKB_MODE ?
				"generic" : "native", strerror(-err));
		else if (err == -ENOSPC)
			cli_err("cannot attach to %s: %s; a veth takes XDP only with "
				"as many receive queues as its peer has transmit "
				"queues (ethtool -l on both ends)", dev, strerror(-err));
		else if (err == -EBUSY || err == -EEXIST)
			cli_err("%s already has an XDP program; xnf never replaces a "
				"program it did not attach", dev);
		else
			cli_err("cannot attach to %s: %s", dev, strerror(-err));
		goto out_undo;
	}
	err = repin(link_fd, dev, "link");
	if (err) {
		cli_err("cannot pin the XDP link of %s: %s", dev, strerror(-err));
		goto out_undo;
	}
	if (plan) {
		/* After the attach, which re-created IRQ handlers and napi
		 * threads. What cannot be set is reported, not fatal. */
		xnf_place_apply_cpus(plan, pst);
		cli_dev_path(path, dev, NULL);
		err = xnf_place_save(path, pst);
		if (err) {
			cli_err("cannot record the placement of %s in %s: %s", dev,
				path, strerror(-err));
			cli_dev_path(path, dev, "link");
			unlink(path);
			goto out_undo;
		}
	}
	close(link_fd);
	xnf_chain_free(c);
	free(plan);
	free(pst);
	return 0;

out_undo:
	/* Threaded NAPI goes back while XDP still runs (a veth without XDP
	 * has no NAPI to switch); channels and IRQs once it is gone. */
	if (plan)
		xnf_place_restore_napi("", dev, pst);
	/* Closing an unpinned link detaches it. */
	if (link_fd >= 0)
		close(link_fd);
	if (plan)
		xnf_place_restore_host("", dev, pst);
	free(plan);
	free(pst);
	xnf_chain_free(c);
	if (watched)
		xnf_batch_unwatch(dp, ifindex);
	if (port_added)
		xnf_port_del(dp, ifindex);
	if (created_dir)
		xnf_dev_remove(dp, dev);
	if (tracer_created)
		batch_tracer_put_if_unused();
	if (fresh_instance) {
		/* This attach created the instance: take it away again. */
		xnf_dp_close(cli.dp);
		cli.dp = NULL;
		xnf_dp_destroy(cli.root);
	}
	return -1;
}

int do_detach(int argc, char **argv)
{
	struct xnf_place_state *pst = NULL;
	struct xnf_dev_info info;
	char path[PATH_MAX];
	struct xnf_dp *dp;
	const char *dev;
	int err;

	if (argc != 1 || is_prefix(argv[0], "help")) {
		fprintf(stderr, "Usage: xnf detach DEV\n");
		return argc == 1 ? 0 : -1;
	}
	dev = argv[0];
	dp = cli_dp(false);
	if (!dp)
		return -1;
	cli_dev_path(path, dev, "link");
	if (!pin_exists(path))
		return cli_err("xnf is not attached to %s; 'xnf status' lists "
			       "the interfaces it is attached to", dev);
	if (cli_workers_running(dev))
		return -1;
	dev_recover(dev);
	err = dev_info_read(dev, &info);
	/* What attach changed on the host: threaded NAPI and the napi
	 * threads while XDP still runs, channels and IRQs once it is gone. */
	pst = calloc(1, sizeof(*pst));
	cli_dev_path(path, dev, NULL);
	if (pst && xnf_place_load(path, pst)) {
		free(pst);
		pst = NULL;
	}
	if (pst)
		xnf_place_restore_napi("", dev, pst);
	cli_dev_path(path, dev, "link");
	/* Removing the link pin detaches the program (nothing else holds
	 * the link); the rest only goes once in-flight packets are done. */
	if (unlink(path)) {
		free(pst);
		return cli_err("cannot remove %s: %s", path, strerror(errno));
	}
	xnf_sync_rcu();
	if (pst)
		xnf_place_restore_host("", dev, pst);
	free(pst);
	if (!err) {
		/* Routes, FDB entries or cross-connects may still send
		 * packets out of it: it stays an egress port then. */
		if (!xnf_port_in_use(dp, info.ifindex))
			xnf_port_del(dp, info.ifindex);
		xnf_batch_unwatch(dp, info.ifindex);
	}
	err = xnf_dev_remove(dp, dev);
	if (err)
		return cli_err("detached %s but could not remove %s: %s", dev,
			       path, strerror(-err));
	batch_tracer_put_if_unused();
	return 0;
}

static int do_chain_set(int argc, char **argv)
{
	struct xnf_chain_spec spec;
	struct xnf_dev_info info;
	struct xnf_chain *c = NULL;
	char path[PATH_MAX];
	struct xnf_dp *dp;
	const char *dev;
	int link_fd = -1, err;

	if (argc < 2)
		return cli_err("usage: xnf chain set DEV NF[,NF...] [fused] [fib]");
	dev = argv[0];
	if (xnf_chain_parse(argv[1], &spec))
		return -1;
	argc -= 2;
	argv += 2;
	dp = cli_dp(false);
	if (!dp || dev_recover(dev))
		return -1;
	if (dev_info_read(dev, &info))
		return cli_err("xnf is not attached to %s; attach it with 'xnf attach "
			       "%s chain %s'", dev, dev, "NF[,NF...]");
	spec.fused = info.fused;
	spec.l3_fib = info.l3_fib;
	for (; argc > 0; NEXT_ARG()) {
		if (is_prefix(argv[0], "fused"))
			spec.fused = true;
		else if (is_prefix(argv[0], "tailcall"))
			spec.fused = false;
		else if (is_prefix(argv[0], "fib"))
			spec.l3_fib = true;
		else if (is_prefix(argv[0], "lpm"))
			spec.l3_fib = false;
		else
			return cli_err("unknown chain set argument '%s'", argv[0]);
	}
	if (spec.fused && spec.len > XNF_FUSED_MAX)
		return cli_err("a fused chain holds at most %d NFs", XNF_FUSED_MAX);

	cli_dev_path(path, dev, "link");
	link_fd = bpf_obj_get(path);
	if (link_fd < 0)
		return cli_err("cannot open the XDP link of %s at %s: %s", dev, path,
			       strerror(errno));
	err = xnf_chain_load(dp, dev, &spec, &c);
	if (err) {
		cli_err("cannot load the new chain for %s: %s; the old one still runs",
			dev, strerror(-err));
		goto out;
	}
	/* Staged pins first: if this process dies after the switch, they
	 * keep the new chain's prog array filled (it is flushed when its last
	 * user reference goes), and dev_recover() finishes the job. */
	err = write_info(c, 1, info.ifindex, info.xdp_flags, &spec);
	if (!err)
		err = pin_chain(c, dev, "_new");
	if (err) {
		cli_err("cannot pin the new chain of %s: %s; the old one still runs",
			dev, strerror(-err));
		goto out_unstage;
	}
	if (bpf_link_update(link_fd, xnf_chain_prog_fd(c), NULL)) {
		err = -errno;
		cli_err("cannot switch %s to the new chain: %s; the old one still runs",
			dev, strerror(-err));
		goto out_unstage;
	}
	/* The new chain runs: move its pins into place (after waiting for
	 * packets still in the old one). */
	err = dev_recover(dev);
	goto out;
out_unstage:
	dev_recover(dev);
out:
	xnf_chain_free(c);
	close(link_fd);
	return err ? -1 : 0;
}

static int do_chain_help(int argc, char **argv)
{
	fprintf(stderr,
"Usage: xnf chain set DEV NF[,NF...] [fused | tailcall] [fib | lpm]\n"
"       xnf chain show [DEV]\n"
"Replaces the chain of DEV without dropping a packet: the new chain is\n"
"loaded aside and swapped in atomically.\n");
	return 0;
}

int do_chain(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "help", do_chain_help },
		{ "set", do_chain_set },
		{ "show", do_status },
		{ NULL, NULL },
	};

	return cli_dispatch(cmds, "chain", argc, argv);
}

static int status_one(const char *dev)
{
	struct bpf_link_info linfo = {};
	__u32 len = sizeof(linfo), ids[XNF_CHAIN_MAX] = {}, i;
	struct xnf_dev_info info;
	struct xnf_chain_spec spec = {};
	char path[PATH_MAX], chain[128], ifname[IF_NAMESIZE];
	bool live = false;
	int fd;

	if (dev_recover(dev) || dev_info_read(dev, &info))
		return cli_err("xnf is not attached to %s", dev);
	spec.len = info.chain_len > XNF_CHAIN_MAX ? XNF_CHAIN_MAX : info.chain_len;
	memcpy(spec.nf, info.nf, sizeof(spec.nf));
	xnf_chain_format(&spec, chain, sizeof(chain));
	cli_dev_path(path, dev, "link");
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		live = !bpf_obj_get_info_by_fd(fd, &linfo, &len) &&
		       linfo.xdp.ifindex == info.ifindex;
		close(fd);
	}
	cli_dev_path(path, dev, "chain");
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		for (i = 0; i < spec.len; i++)
			bpf_map_lookup_elem(fd, &i, &ids[i]);
		close(fd);
	}
	cli_dev_path(path, dev, NULL);
	if (cli.json) {
		jw_object(NULL);
		jw_string("dev", dev);
		jw_uint("ifindex", info.ifindex);
		jw_bool("attached", live);
		jw_string("mode", info.xdp_flags == XDP_FLAGS_SKB_MODE ? "generic" : "native");
		jw_string("chain", chain);
		jw_bool("fused", info.fused);
		jw_string("l3fwd", info.l3_fib ? "fib" : "lpm");
		jw_uint("link_id", linfo.id);
		jw_uint("prog_id", link_prog_id(dev));
		jw_array("nfs");
		for (i = 0; i < spec.len; i++) {
			jw_object(NULL);
			jw_uint("slot", i);
			jw_string("nf", xnf_nf_name(spec.nf[i]));
			if (!info.fused)
				jw_uint("prog_id", ids[i]);
			jw_end_object();
		}
		jw_end_array();
		jw_string("pins", path);
		cli_workers_show(dev, true);
		jw_end_object();
		return 0;
	}
	printf("%s (ifindex %u%s): chain %s%s, %s mode, l3fwd %s%s\n", dev,
	       info.ifindex, fmt_ifname(info.ifindex, ifname)[0] && strcmp(ifname, dev) ?
	       ", renamed" : "", chain, info.fused ? " (fused)" : "",
	       info.xdp_flags == XDP_FLAGS_SKB_MODE ? "generic" : "native",
	       info.l3_fib ? "fib" : "lpm", live ? "" : ", NOT ATTACHED (device gone?)");
	printf("    link id %u  prog id %u", linfo.id, link_prog_id(dev));
	for (i = 0; i < spec.len && !info.fused; i++)
		printf("  %s id %u", xnf_nf_name(spec.nf[i]), ids[i]);
	printf("\n    pins %s\n", path);
	cli_workers_show(dev, true);
	return 0;
}

int do_status(int argc, char **argv)
{
	char path[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *d;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		fprintf(stderr, "Usage: xnf status [DEV]\n");
		return 0;
	}
	if (!cli_dp(false))
		return -1;
	if (argc > 0)
		return status_one(argv[0]);
	cli_dev_path(path, "", NULL);
	d = opendir(path);
	if (!d)
		return cli_err("cannot read %s: %s", path, strerror(errno));
	if (cli.json)
		jw_array(NULL);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			err = status_one(de->d_name) ?: err;
	closedir(d);
	if (cli.json)
		jw_end_array();
	return err;
}

static const struct {
	const char *key;
	size_t off;
	const char *allowed;
} cfg_keys[] = {
	{ "no_route", offsetof(struct xnf_config, no_route), "pass drop" },
	{ "ttl_expired", offsetof(struct xnf_config, ttl_expired), "pass drop" },
	{ "local", offsetof(struct xnf_config, local), "pass drop" },
	{ "l2_miss", offsetof(struct xnf_config, l2_miss), "flood pass drop" },
	{ "xsk_fallback", offsetof(struct xnf_config, xsk_fallback), "pass drop" },
};
#define N_CFG (sizeof(cfg_keys) / sizeof(cfg_keys[0]))

int do_config(int argc, char **argv)
{
	struct xnf_config cfg;
	struct xnf_dp *dp;
	size_t i;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		fprintf(stderr, "Usage: xnf config show\n"
			"       xnf config set KEY { pass | drop | flood }\n"
			"KEY := { no_route | ttl_expired | local | l2_miss | xsk_fallback }\n");
		return 0;
	}
	dp = cli_dp(argc > 0 && is_prefix(argv[0], "set"));
	if (!dp || xnf_cfg_read(dp, &cfg))
		return dp ? cli_err("cannot read %s", XNF_MAP_STR(XNF_MAP_CFG)) : -1;
	if (argc > 0 && is_prefix(argv[0], "set")) {
		__u32 *field = NULL, act;

		if (argc != 3)
			return cli_err("usage: xnf config set KEY ACTION");
		for (i = 0; i < N_CFG; i++)
			if (!strcmp(argv[1], cfg_keys[i].key))
				field = (__u32 *)((char *)&cfg + cfg_keys[i].off);
		if (!field)
			return cli_err("unknown key '%s'; see 'xnf config help'", argv[1]);
		for (i = 0; i < N_CFG; i++)
			if (!strcmp(argv[1], cfg_keys[i].key) &&
			    parse_action(argv[2], cfg_keys[i].allowed, &act))
				return -1;
		*field = act;
		return xnf_cfg_write(dp, &cfg) ? cli_err("cannot write %s", XNF_MAP_STR(XNF_MAP_CFG)) : 0;
	}
	if (argc > 0 && !is_prefix(argv[0], "show"))
		return cli_err("unknown config command '%s'", argv[0]);
	if (cli.json)
		jw_object(NULL);
	for (i = 0; i < N_CFG; i++) {
		__u32 v = *(__u32 *)((char *)&cfg + cfg_keys[i].off);

		if (cli.json)
			jw_string(cfg_keys[i].key, fmt_action(v));
		else
			printf("%-13s %s\n", cfg_keys[i].key, fmt_action(v));
	}
	if (cli.json)
		jw_end_object();
	return 0;
}

int do_destroy(int argc, char **argv)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (argc > 0) {
		fprintf(stderr, "Usage: xnf destroy\n"
			"Removes the tables of the instance; every interface must be "
			"detached first.\n");
		return is_prefix(argv[0], "help") ? 0 : -1;
	}
	if (!cli_dp(false))
		return -1;
	cli_dev_path(path, "", NULL);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] != '.') {
				closedir(d);
				return cli_err("%s is still attached; 'xnf detach %s' first",
					       de->d_name, de->d_name);
			}
		}
		closedir(d);
	}
	snprintf(path, sizeof(path), "%s/%s", cli.root, BATCH_LINK);
	unlink(path);
	xnf_dp_close(cli.dp);
	cli.dp = NULL;
	return xnf_dp_destroy(cli.root) ? cli_err("cannot remove %s", cli.root) : 0;
}
