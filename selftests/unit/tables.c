// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The route, FDB and cross-connect transactions of libxnf (lib/tables.c):
 * the egress port comes with the change and goes with its failure. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "fixture.h"

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
