// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * routes.c - route batches (lib/routes.c): what a batch writes is seen by
 * no packet before the commit and by every packet after it; the two copies
 * of the tables end equal, and the nexthop counts exact, after a commit,
 * an abort, and a batch whose writer was killed (killed.c kills it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "fixture.h"

static const __u8 pre_a[4] = { 10, 2, 0, 0 }, pre_b[4] = { 10, 3, 0, 0 };

TEST(route_batch_commit)
{
	struct xnf_route p0, p1;
	struct xnf_route_entry e;
	__u32 used;
	struct fx f;

	if (!fx_open(&f))
		return;
	fx_mp_path(&f, 0, &p0);
	fx_mp_path(&f, 1, &p1);
	if (!fx_chain(&f, "l3fwd", false, false) ||
	    !ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, pre_a, 16, &p0,
				     BPF_NOEXIST),
		       "route A"))
		goto out;
	ASSERT_EQ(fx_path_to(&f, "10.2.0.1"), 0xa0, "A on path 0");
	ASSERT_TRUE(fx_rt_copies_equal(&f, XNF_AF_INET),
		    "one write: both copies");

	if (!ASSERT_OK(xnf_route_batch_begin(f.dp), "begin"))
		goto out;
	ASSERT_EQ(xnf_route_batch_begin(f.dp), -EBUSY, "one batch at a time");
	ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, pre_a, 16, &p1, BPF_ANY),
		  "A to path 1");
	ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, pre_b, 16, &p1, BPF_NOEXIST),
		  "B");
	ASSERT_EQ(xnf_route_set(f.dp, XNF_AF_INET, pre_b, 16, &p0, BPF_NOEXIST),
		  -EEXIST, "an add in the batch's view");
	/* Not yet: packets, reads and the live copy are the old set. */
	ASSERT_EQ(fx_path_to(&f, "10.2.0.1"), 0xa0, "A still on path 0");
	ASSERT_EQ(fx_path_to(&f, "10.3.0.1"), -1, "no B yet");
	ASSERT_EQ(xnf_route_lookup(f.dp, XNF_AF_INET, (__u8[4]){ 10, 3, 0, 1 },
				   &e),
		  -ENOENT, "lookup: no B yet");
	if (!ASSERT_OK(xnf_route_batch_commit(f.dp), "commit"))
		goto out;
	ASSERT_EQ(fx_path_to(&f, "10.2.0.1"), 0xa1, "A on path 1");
	ASSERT_EQ(fx_path_to(&f, "10.3.0.1"), 0xa1, "B on path 1");
	if (ASSERT_OK(xnf_route_lookup(f.dp, XNF_AF_INET,
				       (__u8[4]){ 10, 3, 9, 9 }, &e),
		      "lookup B")) {
		ASSERT_EQ(e.plen, 16, "matched /16");
		ASSERT_MEM(e.addr, pre_b, 4, "matched 10.3.0.0");
		ASSERT_MEM(e.rt.dmac, p1.dmac, 6, "B's next hop");
	}
	ASSERT_TRUE(fx_rt_copies_equal(&f, XNF_AF_INET),
		    "copies equal after commit");
	ASSERT_EQ(fx_nh_refs(&f, 1, &used), 2, "path 1: A and B");
	ASSERT_EQ(used, 1, "path 0 released");

	/* Abort: nothing changes, the batch's objects are released. */
	if (!ASSERT_OK(xnf_route_batch_begin(f.dp), "begin 2"))
		goto out;
	ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, pre_a, 16, &p0, BPF_ANY),
		  "A to path 0");
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, pre_b, 16), "del B");
	xnf_route_batch_abort(f.dp);
	ASSERT_EQ(fx_path_to(&f, "10.2.0.1"), 0xa1, "abort: A on path 1");
	ASSERT_EQ(fx_path_to(&f, "10.3.0.1"), 0xa1, "abort: B stays");
	ASSERT_TRUE(fx_rt_copies_equal(&f, XNF_AF_INET),
		    "copies equal after abort");
	ASSERT_EQ(fx_nh_refs(&f, 1, &used), 2, "abort: path 1 counted twice");
	ASSERT_EQ(used, 1, "abort: path 0 released");

	/* One prefix written over and over in a batch, and back to what
	 * it was: one count per route in the end. */
	if (!ASSERT_OK(xnf_route_batch_begin(f.dp), "begin 3"))
		goto out;
	ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, pre_a, 16, &p0, BPF_ANY),
		  "A to path 0");
	ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, pre_a, 16, &p1, BPF_ANY),
		  "A back to path 1");
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, pre_b, 16), "del B");
	ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, pre_b, 16, &p0, BPF_NOEXIST),
		  "B on path 0");
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, pre_b, 16), "del B again");
	ASSERT_EQ(xnf_route_del(f.dp, XNF_AF_INET, pre_b, 16), -ENOENT,
		  "B is gone in the batch's view");
	if (!ASSERT_OK(xnf_route_batch_commit(f.dp), "commit 3"))
		goto out;
	ASSERT_EQ(fx_path_to(&f, "10.2.0.1"), 0xa1, "A on path 1");
	ASSERT_EQ(fx_path_to(&f, "10.3.0.1"), -1, "B deleted");
	ASSERT_TRUE(fx_rt_copies_equal(&f, XNF_AF_INET), "copies equal");
	ASSERT_EQ(fx_nh_refs(&f, 1, &used), 1, "path 1: A");
	ASSERT_EQ(used, 1, "path 0 released");
out:
	fx_close(&f);
}

/* Multipath routes in a batch: a new group, never the live one changed
 * in place. */
TEST(route_batch_multipath)
{
	struct xnf_route paths[2];
	struct xnf_route_entry e;
	__u32 gid;
	struct fx f;
	int k, seen0 = 0, seen1 = 0;

	if (!fx_open(&f))
		return;
	fx_mp_path(&f, 0, &paths[0]);
	fx_mp_path(&f, 1, &paths[1]);
	if (!fx_chain(&f, "l3fwd", false, false) ||
	    !ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, pre_a, 16, &paths[0],
				     BPF_NOEXIST),
		       "route A") ||
	    !ASSERT_OK(xnf_route_batch_begin(f.dp), "begin") ||
	    !ASSERT_OK(xnf_route_set_multipath(f.dp, XNF_AF_INET, pre_a, 16,
					       paths, 2, BPF_ANY),
		       "A over two paths"))
		goto out;
	ASSERT_EQ(fx_path_to(&f, "10.2.0.1"), 0xa0, "before commit: path 0");
	if (!ASSERT_OK(xnf_route_batch_commit(f.dp), "commit") ||
	    !ASSERT_OK(xnf_route_lookup(f.dp, XNF_AF_INET,
					(__u8[4]){ 10, 2, 0, 1 }, &e),
		       "lookup"))
		goto out;
	ASSERT_EQ(e.rt.type, XNF_RT_MULTIPATH, "multipath after commit");
	gid = e.nh;
	for (k = 0; k < 64; k++) {
		char dst[32];
		int p;

		snprintf(dst, sizeof(dst), "10.2.%d.%d", k, 1 + k);
		p = fx_path_to(&f, dst);
		seen0 += p == 0xa0;
		seen1 += p == 0xa1;
	}
	ASSERT_EQ(seen0 + seen1, 64, "every flow forwarded");
	ASSERT_GT(seen0, 0, "some on path 0");
	ASSERT_GT(seen1, 0, "some on path 1");
	/* Back to one path in a batch: the group is not changed while the
	 * live copy uses it. */
	if (!ASSERT_OK(xnf_route_batch_begin(f.dp), "begin 2") ||
	    !ASSERT_OK(xnf_route_set(f.dp, XNF_AF_INET, pre_a, 16, &paths[1],
				     BPF_ANY),
		       "A on path 1"))
		goto out;
	ASSERT_EQ(xnf_route_lookup(f.dp, XNF_AF_INET, (__u8[4]){ 10, 2, 0, 1 },
				   &e),
		  0, "lookup");
	ASSERT_EQ(e.nh, gid, "the live copy still has the group");
	ASSERT_OK(xnf_route_batch_commit(f.dp), "commit 2");
	ASSERT_EQ(fx_path_to(&f, "10.2.0.1"), 0xa1, "path 1");
	ASSERT_TRUE(fx_rt_copies_equal(&f, XNF_AF_INET), "copies equal");
	{
		struct xnf_nhgroup g;

		ASSERT_ERR(xnf_nhg_lookup(f.dp, gid, &g), "the group is gone");
	}
out:
	fx_close(&f);
}

/* Entries of the table @fd (keys of @ksz bytes). */
static __u32 entries(int fd, __u32 ksz)
{
	__u8 key[128], next[128];
	void *prev = NULL;
	__u32 n = 0;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, ksz);
		prev = key;
		n++;
	}
	return n;
}

/* Groups are found by their members through xnf_nhg_idx, which names
 * exactly the groups there are. */
TEST(nhg_index)
{
	const __u8 c[4] = { 10, 4, 0, 0 };
	struct xnf_route ab[2], ba[2], abc[3];
	struct xnf_route_entry e1, e2;
	int gfd, ifd;
	struct fx f;

	if (!fx_open(&f))
		return;
	gfd = xnf_table_fd(f.dp, XNF_T_NHG);
	ifd = xnf_table_fd(f.dp, XNF_T_NHG_IDX);
	fx_mp_path(&f, 0, &ab[0]);
	fx_mp_path(&f, 1, &ab[1]);
	ba[0] = ab[1];
	ba[1] = ab[0];
	abc[0] = ab[0];
	abc[1] = ab[1];
	fx_mp_path(&f, 2, &abc[2]);
	if (!ASSERT_OK(xnf_route_set_multipath(f.dp, XNF_AF_INET, pre_a, 16, ab,
					       2, BPF_NOEXIST),
		       "A over 0, 1") ||
	    !ASSERT_OK(xnf_route_set_multipath(f.dp, XNF_AF_INET, pre_b, 16, ba,
					       2, BPF_NOEXIST),
		       "B over 1, 0") ||
	    !ASSERT_OK(xnf_route_lookup(f.dp, XNF_AF_INET, pre_a, &e1), "A") ||
	    !ASSERT_OK(xnf_route_lookup(f.dp, XNF_AF_INET, pre_b, &e2), "B"))
		goto out;
	ASSERT_EQ(e1.nh, e2.nh, "same members, one group");
	ASSERT_EQ(entries(gfd, 4), 1, "one group");
	ASSERT_EQ(entries(ifd, sizeof(struct xnf_nhg_key)), 1, "indexed once");
	/* C alone over 0, 1, 2; then B joins it by a change of its own
	 * group's members... which A shares, so B gets a new one. */
	ASSERT_OK(xnf_route_set_multipath(f.dp, XNF_AF_INET, c, 16, abc, 3,
					  BPF_NOEXIST),
		  "C over 0, 1, 2");
	ASSERT_OK(xnf_route_set_multipath(f.dp, XNF_AF_INET, pre_b, 16, abc, 3,
					  BPF_ANY),
		  "B over 0, 1, 2");
	ASSERT_EQ(entries(gfd, 4), 2, "two groups");
	ASSERT_EQ(entries(ifd, sizeof(struct xnf_nhg_key)), 2, "both indexed");
	/* A on one path: its group released, the index follows. */
	ASSERT_OK(xnf_route_set_multipath(f.dp, XNF_AF_INET, pre_a, 16, ba, 1,
					  BPF_ANY),
		  "A over 1 only");
	ASSERT_EQ(entries(gfd, 4), 1, "A's group released");
	ASSERT_EQ(entries(ifd, sizeof(struct xnf_nhg_key)), 1, "index too");
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, c, 16), "del C");
	ASSERT_OK(xnf_route_del(f.dp, XNF_AF_INET, pre_b, 16), "del B");
	ASSERT_EQ(entries(gfd, 4), 0, "no group");
	ASSERT_EQ(entries(ifd, sizeof(struct xnf_nhg_key)), 0, "empty index");
out:
	fx_close(&f);
}
