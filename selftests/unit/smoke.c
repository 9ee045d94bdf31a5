// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <linux/in.h>
#include "fixture.h"

TEST(smoke_l3fwd)
{
	struct pkt_spec s = { .family = 4 };
	__u8 buf[PKT_MAX];
	struct fx_out out;
	struct xnf_stats st;
	struct fx f;
	int len;

	if (!fx_open(&f))
		return;
	if (!fx_chain(&f, "firewall,l3fwd,l2fwd", false, false))
		goto out;
	fx_route4(&f, "198.51.100.0/24", 1, XNF_RT_UNICAST);
	len = pkt_build(buf, sizeof(buf), &s);
	ASSERT_OK(fx_run(&f, buf, len, &out), "run");
	ASSERT_EQ(out.ret, XDP_REDIRECT, "verdict");
	fx_stats(&f, &st);
	ASSERT_EQ(st.nf[XNF_NF_ENTRY].redirect, 1, "redirect");
	fx_dump(&st);
out:
	fx_close(&f);
}

TEST(smoke_fused_fib)
{
	struct fx f;

	if (!fx_open(&f))
		return;
	fx_chain(&f, "firewall,l3fwd,l2fwd", true, false);
	fx_chain(&f, "firewall,l3fwd,l2fwd,xsk", true, true);
	fx_chain(&f, "l2fwd,xsk,l3fwd,firewall", false, true);
	fx_close(&f);
}
