// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bytes beside packets: every row of xnf_stats and every reason counts the
 * length of the frame as it entered (all of it), tail-called and fused.
 */
#include <linux/in.h>
#include "fixture.h"

/* One frame of @frame_len to @dst through the chain; its XDP action. */
static int send_one(struct fx *f, const char *dst, __u32 frame_len)
{
	struct pkt_spec s = { .family = 4, .dst = dst, .frame_len = frame_len };
	__u8 buf[PKT_MAX];
	struct fx_out out;
	int len;

	len = pkt_build(buf, sizeof(buf), &s);
	if (!ASSERT_EQ(len, (int)frame_len, "frame built") ||
	    !ASSERT_OK(fx_run(f, buf, len, &out), "run"))
		return -1;
	return out.ret;
}

static void bytes_of_chain(bool fused)
{
	const char *what = fused ? "fused" : "tail-called";
	const struct xnf_nf_counters *e, *l3;
	struct xnf_stats st;
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!fx_chain(&f, "firewall,l3fwd,l2fwd", fused, false) ||
	    !fx_route4(&f, "198.51.100.0/24", 1, XNF_RT_UNICAST) ||
	    !fx_route4(&f, "203.0.113.0/24", 1, XNF_RT_BLACKHOLE) ||
	    !fx_set_cfg(&f, XNF_ACT_PASS, XNF_ACT_DROP, XNF_ACT_PASS,
			XNF_ACT_DROP) ||
	    !fx_stats_reset(&f))
		goto out;
	/* Redirected (100 + 300), dropped by a blackhole route (500),
	 * passed for want of a route (700). */
	ASSERT_EQ(send_one(&f, "198.51.100.1", 100), XDP_REDIRECT, what);
	ASSERT_EQ(send_one(&f, "198.51.100.2", 300), XDP_REDIRECT, what);
	ASSERT_EQ(send_one(&f, "203.0.113.1", 500), XDP_DROP, what);
	ASSERT_EQ(send_one(&f, "192.0.2.200", 700), XDP_PASS, what);
	if (!fx_stats(&f, &st))
		goto out;
	e = &st.nf[XNF_NF_ENTRY];
	l3 = &st.nf[XNF_NF_L3FWD];
	if (!fx_stats_consistent(&st, what))
		fx_dump(&st);
	ASSERT_EQ(e->in, 4ULL, what);
	ASSERT_EQ(e->in_bytes, 1600ULL, what);
	ASSERT_EQ(e->redirect_bytes, 400ULL, what);
	ASSERT_EQ(e->drop_bytes, 500ULL, what);
	ASSERT_EQ(e->pass_bytes, 700ULL, what);
	ASSERT_EQ(st.drop_bytes[XNF_R_BLACKHOLE], 500ULL, what);
	ASSERT_EQ(st.pass_bytes[XNF_R_NO_ROUTE], 700ULL, what);
	/* l3fwd saw all four and decided them. */
	ASSERT_EQ(l3->in_bytes, 1600ULL, what);
	ASSERT_EQ(l3->redirect_bytes, 400ULL, what);
	ASSERT_EQ(l3->drop_bytes, 500ULL, what);
	ASSERT_EQ(l3->pass_bytes, 700ULL, what);
	/* The firewall (no rules: allow) let all four go on: pass. */
	ASSERT_EQ(st.nf[XNF_NF_FIREWALL].pass_bytes, 1600ULL, what);
out:
	fx_close(&f);
}

TEST(counters_bytes)
{
	SUBTEST("tail-called")
		bytes_of_chain(false);
	SUBTEST("fused")
		bytes_of_chain(true);
}

/* A frame too short to parse is dropped as malformed with its bytes. */
TEST(counters_bytes_malformed)
{
	__u8 runt[20] = { [12] = 0x08, [13] = 0x00 }; /* IPv4, 6 bytes of it */
	struct xnf_stats st;
	struct fx_out out;
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!fx_chain(&f, "l3fwd", false, false) || !fx_stats_reset(&f))
		goto out;
	if (ASSERT_OK(fx_run(&f, runt, sizeof(runt), &out), "run") &&
	    ASSERT_EQ(out.ret, XDP_DROP, "dropped") && fx_stats(&f, &st)) {
		fx_stats_consistent(&st, "malformed");
		ASSERT_EQ(st.drop_bytes[XNF_R_MALFORMED], 20ULL, "reason bytes");
		ASSERT_EQ(st.nf[XNF_NF_ENTRY].in_bytes, 20ULL, "in bytes");
	}
out:
	fx_close(&f);
}
