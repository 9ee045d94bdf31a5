// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fibfwd.c - the benchmark's minimal FIB forwarder (bpf/fibfwd.bpf.c)
 * forwards what a router forwards and passes the rest unchanged, so that
 * l3fwd in fib mode is measured against a forwarder, not a toy: frames
 * entering on ut0, the kernel's FIB of the test namespace, ut1 in the
 * forwarder's devmap.
 */
#include <string.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"
#include "fibfwd.skel.h"

static const char ff_setup[] =
	"ip addr add 192.0.2.254/24 dev ut0 && "
	"ip -6 addr add 2001:db8:1::fe/64 dev ut0 nodad && "
	"ip addr add 198.51.100.254/24 dev ut1 && "
	"ip -6 addr add 2001:db8:2::fe/64 dev ut1 nodad && "
	"ip addr add 203.0.113.254/24 dev ut2 && "
	"ip neigh replace 198.51.100.1 lladdr 02:00:00:00:01:01 dev ut1 nud permanent && "
	"ip -6 neigh replace 2001:db8:2::1 lladdr 02:00:00:00:01:01 dev ut1 nud permanent && "
	"ip neigh replace 203.0.113.1 lladdr 02:00:00:00:02:01 dev ut2 nud permanent && "
	"ip route add 10.7.0.0/16 via 198.51.100.1 && "
	"sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1";

/* Undoes what ff_setup did (whatever part of it succeeded). */
static const char ff_cleanup[] =
	"sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0; "
	"ip route del 10.7.0.0/16 2>/dev/null; "
	"ip neigh del 203.0.113.1 dev ut2 2>/dev/null; "
	"ip -6 neigh del 2001:db8:2::1 dev ut1 2>/dev/null; "
	"ip neigh del 198.51.100.1 dev ut1 2>/dev/null; "
	"ip addr del 203.0.113.254/24 dev ut2 2>/dev/null; "
	"ip -6 addr del 2001:db8:2::fe/64 dev ut1 2>/dev/null; "
	"ip addr del 198.51.100.254/24 dev ut1 2>/dev/null; "
	"ip -6 addr del 2001:db8:1::fe/64 dev ut0 2>/dev/null; "
	"ip addr del 192.0.2.254/24 dev ut0 2>/dev/null; true";

struct ff_case {
	const char *name;
	struct pkt_spec in;
	int ret; /* XDP_REDIRECT: routed to ut1 (02:00:00:00:01:01) */
};

static const struct ff_case ff_cases[] = {
	{ "v4 connected neighbour", { .family = 4 }, XDP_REDIRECT },
	{ "v4 via gateway", { .family = 4, .dst = "10.7.1.1" }, XDP_REDIRECT },
	{ "v4 TTL 2", { .family = 4, .ttl = 2 }, XDP_REDIRECT },
	{ "v4 TTL 255, options",
	  { .family = 4, .ttl = 255, .ip_opts = 8 },
	  XDP_REDIRECT },
	{ "v4 TCP", { .family = 4, .proto = IPPROTO_TCP }, XDP_REDIRECT },
	{ "v6 connected neighbour", { .family = 6 }, XDP_REDIRECT },
	{ "v6 hop limit 2", { .family = 6, .ttl = 2 }, XDP_REDIRECT },
	{ "v4 TTL 1: the kernel answers", { .family = 4, .ttl = 1 }, XDP_PASS },
	{ "v6 hop limit 1", { .family = 6, .ttl = 1 }, XDP_PASS },
	{ "v4 no route", { .family = 4, .dst = "100.64.0.1" }, XDP_PASS },
	{ "v4 no neighbour", { .family = 4, .dst = "198.51.100.9" }, XDP_PASS },
	{ "v4 to a device outside the devmap",
	  { .family = 4, .dst = "203.0.113.1" },
	  XDP_PASS },
	{ "v4 to the router itself",
	  { .family = 4, .dst = "198.51.100.254" },
	  XDP_PASS },
	{ "ARP", { .family = 0 }, XDP_PASS },
	{ "v4 VLAN", { .family = 4, .nvlans = 1, .vid = { 5 } }, XDP_PASS },
};

static void ff_run(int prog_fd, const struct fx *f, const struct ff_case *c)
{
	static const __u8 nh_mac[6] = { 0x02, 0, 0, 0, 0x01, 0x01 };
	__u8 in[PKT_MAX], want[PKT_MAX], out[PKT_MAX];
	struct xdp_md ctx = { .ingress_ifindex = f->ifindex[0] };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));
	int len;

	len = pkt_build(in, sizeof(in), &c->in);
	if (!ASSERT_GT(len, 0, c->name))
		return;
	ctx.data_end = len;
	opts.data_size_in = len;
	memcpy(want, in, len);
	if (c->ret == XDP_REDIRECT)
		pkt_routed(want, len, nh_mac, f->mac[1]);
	if (!ASSERT_OK(bpf_prog_test_run_opts(prog_fd, &opts), c->name))
		return;
	ASSERT_EQ(opts.retval, c->ret, c->name);
	ASSERT_EQ(opts.data_size_out, len, c->name);
	ASSERT_MEM(out, want, len, c->name);
}

TEST(fibfwd_forwards)
{
	struct xnf_fibfwd *skel = NULL;
	struct fx f;
	__u32 key;
	size_t i;

	if (!fx_open(&f))
		return;
	skel = xnf_fibfwd__open_and_load();
	if (!ASSERT_TRUE(skel, "load bpf/fibfwd.bpf.o"))
		goto out;
	key = f.ifindex[1];
	if (!ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.tx_ports),
					   &key, &key, BPF_ANY),
		       "ut1 into the devmap"))
		goto out;
	if (!ASSERT_OK(fx_sh("%s", ff_setup), "configure the kernel's FIB"))
		goto out;
	for (i = 0; i < sizeof(ff_cases) / sizeof(ff_cases[0]); i++)
		ff_run(bpf_program__fd(skel->progs.xnf_fibfwd), &f, &ff_cases[i]);
out:
	fx_sh("%s", ff_cleanup);
	xnf_fibfwd__destroy(skel);
	fx_close(&f);
}
