// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * minfwd.c - the benchmark's minimal parse-rewrite-redirect forwarder
 * (bpf/minfwd.bpf.c) does a router's per-packet work right, so that the
 * 3-NF chain is measured against a forwarder, not a toy: TTL / hop limit
 * lowered with a right IPv4 checksum (for every TTL, against the
 * checksum computed from scratch), both MACs from its array, redirected
 * to the devmap's port; what a router must not forward (TTL 1, ARP, a
 * VLAN tag) passed to the kernel unchanged.
 */
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"
#include "minfwd.skel.h"

struct mf_case {
	const char *name;
	struct pkt_spec in;
	int ret; /* XDP_REDIRECT: rewritten as pkt_routed() says */
};

static const struct mf_case mf_cases[] = {
	{ "v4", { .family = 4 }, XDP_REDIRECT },
	{ "v4 anywhere: no lookup",
	  { .family = 4, .dst = "100.64.0.1" },
	  XDP_REDIRECT },
	{ "v4 TTL 2", { .family = 4, .ttl = 2 }, XDP_REDIRECT },
	{ "v4 TTL 255, options",
	  { .family = 4, .ttl = 255, .ip_opts = 8 },
	  XDP_REDIRECT },
	{ "v4 TCP", { .family = 4, .proto = IPPROTO_TCP }, XDP_REDIRECT },
	{ "v6", { .family = 6 }, XDP_REDIRECT },
	{ "v6 hop limit 2", { .family = 6, .ttl = 2 }, XDP_REDIRECT },
	{ "v4 TTL 1: the kernel answers", { .family = 4, .ttl = 1 }, XDP_PASS },
	{ "v6 hop limit 1", { .family = 6, .ttl = 1 }, XDP_PASS },
	{ "ARP", { .family = 0 }, XDP_PASS },
	{ "v4 VLAN", { .family = 4, .nvlans = 1, .vid = { 5 } }, XDP_PASS },
};

static const __u8 mf_nh_mac[6] = { 0x02, 0, 0, 0, 0x01, 0x01 };

static bool mf_run(int prog_fd, const struct fx *f, const struct mf_case *c)
{
	__u8 in[PKT_MAX], want[PKT_MAX], out[PKT_MAX];
	struct xdp_md ctx = { .ingress_ifindex = f->ifindex[0] };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));
	int len;

	len = pkt_build(in, sizeof(in), &c->in);
	if (!ASSERT_GT(len, 0, c->name))
		return false;
	ctx.data_end = len;
	opts.data_size_in = len;
	memcpy(want, in, len);
	if (c->ret == XDP_REDIRECT)
		pkt_routed(want, len, mf_nh_mac, f->mac[1]);
	if (!ASSERT_OK(bpf_prog_test_run_opts(prog_fd, &opts), c->name))
		return false;
	return ASSERT_EQ(opts.retval, c->ret, c->name) &&
	       ASSERT_EQ(opts.data_size_out, len, c->name) &&
	       ASSERT_MEM(out, want, len, c->name);
}

TEST(minfwd_forwards)
{
	struct xnf_minfwd *skel = NULL;
	__u8 macs[12]; /* struct minfwd_macs: the next hop's, the egress's */
	char name[64], src[32];
	__u32 key = 0, port;
	struct mf_case c;
	struct fx f;
	size_t i;
	int fd, ttl, s;

	if (!fx_open(&f))
		return;
	skel = xnf_minfwd__open_and_load();
	if (!ASSERT_TRUE(skel, "load bpf/minfwd.bpf.o"))
		goto out;
	port = f.ifindex[1];
	memcpy(macs, mf_nh_mac, 6);
	memcpy(macs + 6, f.mac[1], 6);
	if (!ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.tx_port),
					   &key, &port, BPF_ANY),
		       "ut1 into the devmap") ||
	    !ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.macs), &key,
					   macs, BPF_ANY),
		       "the MACs"))
		goto out;
	fd = bpf_program__fd(skel->progs.xnf_minfwd);
	for (i = 0; i < sizeof(mf_cases) / sizeof(mf_cases[0]); i++)
		mf_run(fd, &f, &mf_cases[i]);
	/* The incremental checksum update against the one computed from
	 * scratch, for every TTL it forwards and sources that move the
	 * checksum's bytes around (its carries included). */
	for (s = 1; s < 255; s += 17) {
		for (ttl = 2; ttl <= 255; ttl++) {
			snprintf(src, sizeof(src), "192.0.2.%d", s);
			snprintf(name, sizeof(name), "v4 from %s TTL %d", src,
				 ttl);
			c = (struct mf_case){
				name,
				{ .family = 4, .ttl = ttl, .src = src },
				XDP_REDIRECT
			};
			if (!mf_run(fd, &f, &c))
				goto out;
		}
	}
out:
	xnf_minfwd__destroy(skel);
	fx_close(&f);
}
