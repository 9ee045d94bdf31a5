// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The route, FDB and cross-connect transactions of libxnf (lib/tables.c):
 * the egress port comes with the change and goes with its failure. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "fixture.h"
#include "stats.h"

/* fx_open makes every test port an egress port: take ut2's away so that a
 * change has to add it. */
static bool open_without_ut2(struct fx *f)
{
	if (!fx_open(f))
		return false;
	if (!ASSERT_OK(xnf_port_del(f->dp, f->ifindex[2]), "del port ut2")) {
		fx_close(f);
		return false;
	}
	return true;
}

TEST(tables_route_add)
{
	struct xnf_route rt = { .type = XNF_RT_UNICAST };
	struct xnf_route_entry *ents = NULL;
	char err[512] = "";
	__u8 addr[16] = {};
	struct fx f;
	__u32 n;

	if (!open_without_ut2(&f))
		return;
	inet_pton(AF_INET, "203.0.113.0", addr);
	rt.ifindex = f.ifindex[2];

	SUBTEST("adds_port") {
		ASSERT_OK(xnf_route_add(f.dp, XNF_AF_INET, addr, 24, &rt, false,
					err, sizeof(err)),
			  "add");
		ASSERT_EQ(xnf_port_exists(f.dp, f.ifindex[2]), true, "port");
		ASSERT_EQ(xnf_port_in_use(f.dp, f.ifindex[2]), true, "in use");
	}
	SUBTEST("refuses_second_add") {
		ASSERT_EQ(xnf_route_add(f.dp, XNF_AF_INET, addr, 24, &rt, false,
					err, sizeof(err)),
			  -EEXIST, "second add");
		ASSERT_NEQ(err[0], '\0', "message");
		ASSERT_EQ(xnf_port_exists(f.dp, f.ifindex[2]), true, "port");
		ASSERT_OK(xnf_route_add(f.dp, XNF_AF_INET, addr, 24, &rt, true,
					err, sizeof(err)),
			  "replace");
	}
	SUBTEST("lists") {
		ASSERT_OK(xnf_route_list(f.dp, &ents, &n), "list");
		ASSERT_EQ(n, 1U, "one route");
		if (n == 1) {
			ASSERT_EQ(ents[0].family, XNF_AF_INET, "family");
			ASSERT_EQ(ents[0].plen, 24U, "plen");
			ASSERT_EQ(memcmp(ents[0].addr, addr, 4), 0, "addr");
			ASSERT_EQ(ents[0].rt.ifindex, f.ifindex[2], "ifindex");
		}
		free(ents);
	}
	SUBTEST("failed_add_takes_port_away") {
		ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, addr, 24), "del");
		ASSERT_OK(xnf_port_del(f.dp, f.ifindex[2]), "del port");
		ASSERT_EQ(xnf_port_in_use(f.dp, f.ifindex[2]), false, "unused");
		/* A /33 cannot be written: the route fails after the port was
		 * added. */
		ASSERT_LT(xnf_route_add(f.dp, XNF_AF_INET, addr, 33, &rt, false,
					err, sizeof(err)),
			  0, "bad prefix");
		ASSERT_EQ(xnf_port_exists(f.dp, f.ifindex[2]), false,
			  "no port left");
	}
	fx_close(&f);
}

TEST(tables_fdb_add)
{
	const __u8 mac[6] = { 0x02, 0, 0, 0, 0x07, 0x01 };
	struct xnf_fdb_ent *ents = NULL;
	char err[512] = "";
	struct fx f;
	__u32 n;

	if (!open_without_ut2(&f))
		return;
	ASSERT_OK(xnf_fdb_add(f.dp, mac, f.ifindex[2], false, err, sizeof(err)),
		  "add");
	ASSERT_EQ(xnf_port_exists(f.dp, f.ifindex[2]), true, "port added");
	ASSERT_EQ(xnf_fdb_add(f.dp, mac, f.ifindex[1], false, err, sizeof(err)),
		  -EEXIST, "second add");
	ASSERT_OK(xnf_fdb_add(f.dp, mac, f.ifindex[1], true, err, sizeof(err)),
		  "replace moves it");
	ASSERT_OK(xnf_fdb_list(f.dp, &ents, &n), "list");
	ASSERT_EQ(n, 1U, "one entry");
	if (n == 1) {
		ASSERT_EQ(memcmp(ents[0].key.mac, mac, 6), 0, "mac");
		ASSERT_EQ(ents[0].e.ifindex, f.ifindex[1], "on ut1");
	}
	free(ents);
	fx_close(&f);
}

TEST(tables_xconnect)
{
	struct xnf_xconnect fwd = {}, rev = {}, other = {};
	struct xnf_xconnect_ent *ents = NULL;
	char err[512] = "";
	struct fx f;
	__u32 n;

	if (!open_without_ut2(&f))
		return;
	fwd.ifindex = f.ifindex[1];
	rev.ifindex = f.ifindex[0];
	ASSERT_OK(xnf_xconnect_add(f.dp, f.ifindex[0], &fwd, f.ifindex[1], &rev,
				   err, sizeof(err)),
		  "pair ut0-ut1");
	ASSERT_OK(xnf_xconnect_list(f.dp, &ents, &n), "list");
	ASSERT_EQ(n, 2U, "both directions");
	free(ents);

	/* ut1 is taken: a pair ut1-ut2 is refused and adds no port. */
	other.ifindex = f.ifindex[2];
	ASSERT_EQ(xnf_xconnect_add(f.dp, f.ifindex[1], &other, f.ifindex[2],
				   &fwd, err, sizeof(err)),
		  -EBUSY, "ut1 busy");
	ASSERT_EQ(xnf_port_exists(f.dp, f.ifindex[2]), false, "no port");

	ASSERT_OK(xnf_xconnect_remove(f.dp, f.ifindex[1], err, sizeof(err)),
		  "remove by either end");
	ASSERT_OK(xnf_xconnect_list(f.dp, &ents, &n), "list again");
	ASSERT_EQ(n, 0U, "both directions gone");
	free(ents);
	ASSERT_EQ(xnf_xconnect_remove(f.dp, f.ifindex[0], err, sizeof(err)),
		  -ENOENT, "nothing left to remove");
	fx_close(&f);
}

static __u32 xconnects_of(struct fx *f)
{
	struct xnf_config cfg = {};

	ASSERT_OK(xnf_cfg_read(f->dp, &cfg), "read xnf_cfg");
	return cfg.xconnects;
}

/* xnf_config.xconnects, which lets l2fwd skip the cross-connect lookup,
 * counts the entries of xnf_xconnect after every change, and a count left
 * stale (a writer killed between its two writes) is put right by the
 * next change. */
TEST(tables_xconnect_count)
{
	struct xnf_xconnect fwd = {}, rev = {}, other = {};
	struct xnf_config cfg;
	char err[512] = "";
	__u32 zero = 0;
	struct fx f;

	if (!open_without_ut2(&f))
		return;
	ASSERT_EQ(xconnects_of(&f), 0U, "none at first");
	fwd.ifindex = f.ifindex[1];
	rev.ifindex = f.ifindex[0];
	ASSERT_OK(xnf_xconnect_add(f.dp, f.ifindex[0], &fwd, f.ifindex[1], &rev,
				   err, sizeof(err)),
		  "pair ut0-ut1");
	ASSERT_EQ(xconnects_of(&f), 2U, "both directions counted");

	other.ifindex = f.ifindex[2];
	ASSERT_EQ(xnf_xconnect_add(f.dp, f.ifindex[1], &other, f.ifindex[2],
				   &fwd, err, sizeof(err)),
		  -EBUSY, "ut1 busy");
	ASSERT_EQ(xconnects_of(&f), 2U, "a refused pair counts nothing");

	/* A policy write keeps the count. */
	ASSERT_OK(xnf_cfg_read(f.dp, &cfg), "read");
	cfg.xconnects = 0;
	ASSERT_OK(xnf_cfg_write(f.dp, &cfg), "write");
	ASSERT_EQ(xconnects_of(&f), 2U, "xnf_cfg_write keeps the count");
	/* Stale: zero while two entries exist. */
	ASSERT_OK(bpf_map_update_elem(xnf_table_fd(f.dp, XNF_T_CFG), &zero,
				      &cfg, 0),
		  "write the map itself");
	ASSERT_EQ(xconnects_of(&f), 0U, "stale");
	ASSERT_OK(xnf_xconnect_set(f.dp, f.ifindex[0], &fwd), "rewrite one");
	ASSERT_EQ(xconnects_of(&f), 2U, "recounted from the map");

	ASSERT_OK(xnf_xconnect_del(f.dp, f.ifindex[0]), "del one direction");
	ASSERT_EQ(xconnects_of(&f), 1U, "one left");
	ASSERT_OK(xnf_xconnect_remove(f.dp, f.ifindex[1], err, sizeof(err)),
		  "remove the rest");
	ASSERT_EQ(xconnects_of(&f), 0U, "none left");
	fx_close(&f);
}

/* User space reads a per-CPU table as an array of its value, one per
 * possible CPU, while the kernel lays the values out 8-byte aligned: a
 * value whose size is not a multiple of 8 would be read at the wrong
 * offset for every CPU but the first, and its buffer overrun (xnf_pkt
 * grew to 44 bytes once, and unf_parse_vs_xdp read CPU 1's slot wrong). */
TEST(tables_percpu_values_are_whole_words)
{
	struct fx f;
	int t;

	if (!fx_open(&f))
		return;
	for (t = 0; t < __XNF_T_MAX; t++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		if (xnf_table_fd(f.dp, t) < 0)
			continue;
		if (!ASSERT_OK(bpf_obj_get_info_by_fd(xnf_table_fd(f.dp, t),
						      &info, &len) ?
				       -errno :
				       0,
			       xnf_table_names[t]))
			break;
		if (info.type == BPF_MAP_TYPE_PERCPU_ARRAY ||
		    info.type == BPF_MAP_TYPE_PERCPU_HASH ||
		    info.type == BPF_MAP_TYPE_LRU_PERCPU_HASH)
			ASSERT_EQ(info.value_size % 8, 0U, xnf_table_names[t]);
	}
	fx_close(&f);
}

/* The xmit counters of @ifindex, summed: -ENOENT without any. */
static int xmit_of(struct fx *f, __u32 ifindex, struct xnf_xmit_counters *x)
{
	return xnf_xmit_read(f->dp, xnf_netns_inode(), ifindex, x);
}

/* Every egress port has transmit counters, attached or not (the tracer
 * counts only the devices that have them): a port made by a route has
 * them from 0, loses them with the port, and is listed by
 * xnf_ports_read(); when the table is full of the counters of devices
 * that are gone, they make room. */
TEST(tables_port_counters)
{
	struct xnf_route rt = { .type = XNF_RT_UNICAST };
	struct xnf_port_sample *ports = NULL;
	struct xnf_dev_key key = { .netns = xnf_netns_inode() };
	int ncpus = xnf_ncpus(), n, i, fd;
	struct xnf_xmit_counters x, one[ncpus];
	char err[512] = "";
	__u8 addr[16] = {};
	bool listed = false;
	struct fx f;

	if (!open_without_ut2(&f))
		return;
	fd = xnf_table_fd(f.dp, XNF_T_XMIT);
	inet_pton(AF_INET, "203.0.113.0", addr);
	rt.ifindex = f.ifindex[2];
	ASSERT_EQ(xmit_of(&f, f.ifindex[2], &x), -ENOENT,
		  "none without the port");
	ASSERT_OK(xnf_route_add(f.dp, XNF_AF_INET, addr, 24, &rt, false, err,
				sizeof(err)),
		  "route add");
	ASSERT_OK(xmit_of(&f, f.ifindex[2], &x), "counters with the port");
	ASSERT_EQ(x.xmit_sent + x.xmit_drops + x.redirect_err, 0ULL, "from 0");
	n = xnf_ports_read(f.dp, &ports);
	ASSERT_EQ(n, FX_PORTS, "every port listed");
	for (i = 0; i < n; i++)
		listed |= ports[i].ifindex == f.ifindex[2] &&
			  !strcmp(ports[i].name, "ut2");
	ASSERT_TRUE(listed, "ut2 listed by name");
	free(ports);

	/* The port goes, and its counters with it. */
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, addr, 24), "route del");
	ASSERT_OK(xnf_port_del(f.dp, f.ifindex[2]), "port del");
	ASSERT_EQ(xmit_of(&f, f.ifindex[2], &x), -ENOENT, "gone with the port");

	/* The counters of devices that are gone (ifindexes no port has)
	 * fill the table: the next port sweeps them. */
	memset(one, 0, sizeof(one));
	one[0].redirect_err = 1;
	for (i = 0; i < XNF_MAX_PORTS; i++) {
		key.ifindex = 1000000 + i;
		if (bpf_map_update_elem(fd, &key, one, BPF_NOEXIST) &&
		    errno != E2BIG) {
			ASSERT_OK(-errno, "fill xnf_xmit");
			break;
		}
	}
	ASSERT_OK(xnf_route_add(f.dp, XNF_AF_INET, addr, 24, &rt, false, err,
				sizeof(err)),
		  err);
	ASSERT_OK(xmit_of(&f, f.ifindex[2], &x), "counters in a full table");
	key.ifindex = 1000000;
	ASSERT_ERR(bpf_map_lookup_elem(fd, &key, one), "a gone device's swept");
	key.ifindex = f.ifindex[0];
	ASSERT_OK(bpf_map_lookup_elem(fd, &key, one) ? -errno : 0,
		  "a port's kept");
	fx_close(&f);
}
