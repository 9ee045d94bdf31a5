// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * l3fwd unit tests: fixture tables of {description, input frame, expected
 * XDP action and reason, expected egress port}. Every table runs through
 * the tail-called and the fused chain, for "l3fwd" alone and for
 * "l3fwd,l2fwd", and every case checks:
 *   - the XDP action (never XDP_ABORTED);
 *   - the whole output frame against the input with only what a router
 *     changes changed (pkt_routed: MACs of the route's egress port, TTL /
 *     hop limit - 1, IPv4 checksum from scratch), or byte-identical when
 *     the frame is not forwarded; then the TTL, the IPv4 checksum (valid,
 *     and equal to one computed from scratch) and the L4 checksum
 *     explicitly, so a failure says which one broke;
 *   - the counters of that one frame: entry row, l3fwd row, l2fwd row,
 *     one reason per pass or drop, and the reason itself;
 *   - for a forwarded frame, the port it really leaves on (fx_run_live:
 *     test_run alone shows the MACs, not the redirect target).
 * Frames that pass or drop leave the bytes as they came in: the kernel,
 * which answers with ICMP, must see the TTL the sender used.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>

#include "fixture.h"
#include "xnf_fib.h"
#include "xnf_rx.h"

struct l3_case {
	const char *desc;
	struct pkt_spec in;
	__u16 pad; /* zero bytes after the IP packet (Ethernet padding) */
	bool drop; /* no_route, ttl_expired, local set to drop */
	bool martian_pass; /* martian set to pass (default drop) */
	int ret;	   /* XDP action */
	__u32 reason;	   /* of the pass or drop */
	__u8 port;	   /* XDP_REDIRECT: egress port, seen in the MACs */
};

#define V4(...)	      .in = { .family = 4, __VA_ARGS__ }
#define V6(...)	      .in = { .family = 6, __VA_ARGS__ }
#define EXT(h)	      .next_ext = 1, .ext = { h }
#define DROP_CFG      .drop = true
#define MARTIAN_PASS  .martian_pass = true
#define FWD(p)	      .ret = XDP_REDIRECT, .port = (p)
#define PASS(r)	      .ret = XDP_PASS, .reason = (r)
#define DROP(r)	      .ret = XDP_DROP, .reason = (r)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* clang-format off */
#define MAC_BCAST { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }
/* clang-format on */

static const char *const l3_chains[] = { "l3fwd", "l3fwd,l2fwd" };

/* The route table of the static-table tests is fx_l3_table(): overlapping
 * prefixes go to three different ports, so the MACs written show which one
 * matched. */

static const struct l3_case l3_cases[] = {
	/* Longest prefix match, IPv4. */
	{ "v4 /24 (default frame)", V4(), FWD(1) },
	{ "v4 only /8 matches", V4(.dst = "10.9.9.9"), FWD(1) },
	{ "v4 /24 beats /8", V4(.dst = "10.1.2.9"), FWD(2) },
	{ "v4 /32 beats /24 and /8", V4(.dst = "10.1.2.3"), FWD(0) },
	{ "v4 next to the /32", V4(.dst = "10.1.2.4"), FWD(2) },
	{ "v4 last address of the /24", V4(.dst = "10.1.2.255"), FWD(2) },
	{ "v4 just below the /24", V4(.dst = "10.1.1.255"), FWD(1) },
	{ "v4 just above the /24", V4(.dst = "10.1.3.0"), FWD(1) },
	{ "v4 last address of the /8", V4(.dst = "10.255.255.255"), FWD(1) },
	/* Longest prefix match, IPv6. */
	{ "v6 /32 (default frame)", V6(), FWD(1) },
	{ "v6 /48 beats /32", V6(.dst = "2001:db8:5::9"), FWD(2) },
	{ "v6 /128 beats /48 and /32", V6(.dst = "2001:db8:5::5"), FWD(0) },
	{ "v6 next to the /128", V6(.dst = "2001:db8:5::4"), FWD(2) },
	{ "v6 just above the /48", V6(.dst = "2001:db8:6::5"), FWD(1) },
	{ "v6 last address of the /48",
	  V6(.dst = "2001:db8:5:ffff:ffff:ffff:ffff:ffff"), FWD(2) },
	/* TTL and hop limit. */
	{ "v4 TTL 2 leaves with 1", V4(.ttl = 2), FWD(1) },
	{ "v4 TTL 255", V4(.ttl = 255), FWD(1) },
	{ "v4 TTL 1 expires", V4(.ttl = 1), PASS(XNF_R_TTL) },
	{ "v4 TTL 1 expires, dropped", V4(.ttl = 1), DROP_CFG, DROP(XNF_R_TTL) },
	{ "v4 TTL 0 expires", V4(.ttl_zero = true), PASS(XNF_R_TTL) },
	{ "v4 TTL 0 expires, dropped", V4(.ttl_zero = true), DROP_CFG,
	  DROP(XNF_R_TTL) },
	{ "v6 hop limit 2 leaves with 1", V6(.ttl = 2), FWD(1) },
	{ "v6 hop limit 255", V6(.ttl = 255), FWD(1) },
	{ "v6 hop limit 1 expires", V6(.ttl = 1), PASS(XNF_R_TTL) },
	{ "v6 hop limit 1 expires, dropped", V6(.ttl = 1), DROP_CFG,
	  DROP(XNF_R_TTL) },
	{ "v6 hop limit 0 expires", V6(.ttl_zero = true), PASS(XNF_R_TTL) },
	{ "v6 hop limit 0 expires, dropped", V6(.ttl_zero = true), DROP_CFG,
	  DROP(XNF_R_TTL) },
	/* The route decides before the TTL: a packet for the router itself
	 * is delivered whatever its TTL, one without a route is answered
	 * with "unreachable", not "time exceeded". */
	{ "v4 TTL 1 to an own address is local",
	  V4(.ttl = 1, .dst = "198.51.100.254"), PASS(XNF_R_LOCAL) },
	{ "v6 hop limit 1 to an own address is local",
	  V6(.ttl = 1, .dst = "2001:db8:2::fe"), PASS(XNF_R_LOCAL) },
	{ "v4 TTL 1 without a route", V4(.ttl = 1, .dst = "192.0.2.99"),
	  PASS(XNF_R_NO_ROUTE) },
	{ "v4 TTL 1 to a blackhole", V4(.ttl = 1, .dst = "203.0.113.1"),
	  DROP(XNF_R_BLACKHOLE) },
	/* Route types and exceptions. */
	{ "v4 no route", V4(.dst = "192.0.2.99"), PASS(XNF_R_NO_ROUTE) },
	{ "v4 no route, dropped", V4(.dst = "192.0.2.99"), DROP_CFG,
	  DROP(XNF_R_NO_ROUTE) },
	{ "v6 no route", V6(.dst = "3fff::1"), PASS(XNF_R_NO_ROUTE) },
	{ "v6 no route, dropped", V6(.dst = "3fff::1"), DROP_CFG,
	  DROP(XNF_R_NO_ROUTE) },
	{ "v4 local", V4(.dst = "198.51.100.254"), PASS(XNF_R_LOCAL) },
	{ "v4 local, dropped", V4(.dst = "198.51.100.254"), DROP_CFG,
	  DROP(XNF_R_LOCAL) },
	{ "v6 local", V6(.dst = "2001:db8:2::fe"), PASS(XNF_R_LOCAL) },
	{ "v6 local, dropped", V6(.dst = "2001:db8:2::fe"), DROP_CFG,
	  DROP(XNF_R_LOCAL) },
	{ "v4 blackhole", V4(.dst = "203.0.113.1"), DROP(XNF_R_BLACKHOLE) },
	{ "v4 blackhole, drop config", V4(.dst = "203.0.113.127"), DROP_CFG,
	  DROP(XNF_R_BLACKHOLE) },
	{ "v6 blackhole", V6(.dst = "2001:db8:b::1"), DROP(XNF_R_BLACKHOLE) },
	{ "v4 unreachable", V4(.dst = "203.0.113.129"), PASS(XNF_R_NO_ROUTE) },
	{ "v4 unreachable, dropped", V4(.dst = "203.0.113.255"), DROP_CFG,
	  DROP(XNF_R_NO_ROUTE) },
	{ "v6 unreachable", V6(.dst = "2001:db8:c::1"), PASS(XNF_R_NO_ROUTE) },
	{ "v6 unreachable, dropped", V6(.dst = "2001:db8:c::1"), DROP_CFG,
	  DROP(XNF_R_NO_ROUTE) },
	/* IPv4 options and fragments. */
	{ "v4 4 option bytes", V4(.ip_opts = 4), FWD(1) },
	{ "v4 8 option bytes", V4(.ip_opts = 8, .ttl = 7), FWD(1) },
	{ "v4 40 option bytes (ihl 15)", V4(.ip_opts = 40, .frame_len = 128),
	  FWD(1) },
	{ "v4 40 option bytes, TTL 1",
	  V4(.ip_opts = 40, .frame_len = 128, .ttl = 1), PASS(XNF_R_TTL) },
	{ "v4 first fragment (MF)", V4(.frag_off = 0x2000), FWD(1) },
	{ "v4 middle fragment (MF, offset 128)", V4(.frag_off = 0x2010), FWD(1) },
	{ "v4 last fragment (offset 128)", V4(.frag_off = 0x0010), FWD(1) },
	{ "v4 later fragment, TTL 1", V4(.frag_off = 0x0010, .ttl = 1),
	  PASS(XNF_R_TTL) },
	{ "v4 DF set", V4(.frag_off = 0x4000), FWD(1) },
	/* IPv6 extension headers: only the hop limit changes. */
	{ "v6 hop-by-hop", V6(EXT(IPPROTO_HOPOPTS), .frame_len = 96), FWD(1) },
	{ "v6 routing", V6(EXT(IPPROTO_ROUTING), .frame_len = 96), FWD(1) },
	{ "v6 first fragment",
	  V6(EXT(IPPROTO_FRAGMENT), .frag_off = 0x0001, .frame_len = 96), FWD(1) },
	{ "v6 later fragment", V6(EXT(IPPROTO_FRAGMENT), .frag_off = 0x0009),
	  FWD(1) },
	{ "v6 destination options", V6(EXT(IPPROTO_DSTOPTS), .frame_len = 96),
	  FWD(1) },
	{ "v6 all four",
	  V6(.next_ext = 4,
	     .ext = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING,
		      IPPROTO_FRAGMENT },
	     .frag_off = 0x0001, .frame_len = 160, .dst = "2001:db8:5::7"),
	  FWD(2) },
	{ "v6 hop-by-hop, hop limit 1",
	  V6(EXT(IPPROTO_HOPOPTS), .ttl = 1, .frame_len = 96), PASS(XNF_R_TTL) },
	/* Other L4 protocols: their checksums must stay right. */
	{ "v4 TCP", V4(.proto = IPPROTO_TCP), FWD(1) },
	{ "v4 ICMP", V4(.proto = IPPROTO_ICMP, .dst = "10.1.2.3"), FWD(0) },
	{ "v6 TCP", V6(.proto = IPPROTO_TCP, .frame_len = 80), FWD(1) },
	{ "v6 ICMPv6", V6(.proto = IPPROTO_ICMPV6, .dst = "2001:db8:5::1"),
	  FWD(2) },
	/* Not for l3fwd. */
	{ "ARP", .in = { .family = 0 }, PASS(XNF_R_NOT_IP) },
	{ "ARP, drop config", .in = { .family = 0 }, DROP_CFG,
	  PASS(XNF_R_NOT_IP) },
	{ "v4 one VLAN tag", V4(.nvlans = 1), PASS(XNF_R_VLAN) },
	{ "v4 two VLAN tags", V4(.nvlans = 2), PASS(XNF_R_VLAN) },
	{ "v6 one VLAN tag", V6(.nvlans = 1, .frame_len = 80), PASS(XNF_R_VLAN) },
	{ "v6 two VLAN tags", V6(.nvlans = 2, .frame_len = 80), PASS(XNF_R_VLAN) },
	{ "v4 VLAN, TTL 1", V4(.nvlans = 1, .ttl = 1), PASS(XNF_R_VLAN) },
	{ "v4 VLAN, drop config", V4(.nvlans = 2), DROP_CFG, PASS(XNF_R_VLAN) },
	/* A third tag is not parsed: the frame is not IP to xnf. */
	{ "v4 three VLAN tags", V4(.nvlans = 3), PASS(XNF_R_NOT_IP) },
	/* Frame sizes. */
	{ "v4 smallest UDP frame (42 bytes)", V4(.frame_len = 42), FWD(1) },
	{ "v4 42 bytes + 18 bytes Ethernet padding", V4(.frame_len = 42),
	  .pad = 18, FWD(1) },
	{ "v4 padding, TTL 1", V4(.frame_len = 42, .ttl = 1), .pad = 18,
	  PASS(XNF_R_TTL) },
	{ "v6 smallest UDP frame (62 bytes)", V6(.frame_len = 62), FWD(1) },
	{ "v6 62 bytes + 2 bytes padding", V6(.frame_len = 62), .pad = 2, FWD(1) },
	{ "v4 9000 bytes (multi-buffer)", V4(.frame_len = 9000), FWD(1) },
	{ "v4 9000 bytes, /32",
	  V4(.frame_len = 9000, .dst = "10.1.2.3", .ttl = 100), FWD(0) },
	{ "v4 9000 bytes, TTL 1", V4(.frame_len = 9000, .ttl = 1),
	  PASS(XNF_R_TTL) },
	{ "v6 9000 bytes (multi-buffer)", V6(.frame_len = 9000), FWD(1) },
	{ "v4 1514-byte frame to a 1500-byte port",
	  V4(.frame_len = 1514, .dst = "10.1.2.9"), FWD(2) },
	{ "v4 1515-byte frame to a 1500-byte port",
	  V4(.frame_len = 1515, .dst = "10.1.2.9"), PASS(XNF_R_FRAG_NEEDED) },
	{ "v4 9000 bytes to a 1500-byte port",
	  V4(.frame_len = 9000, .dst = "10.1.2.9"), PASS(XNF_R_FRAG_NEEDED) },
	{ "v6 9000 bytes to a 1500-byte port",
	  V6(.frame_len = 9000, .dst = "2001:db8:5::9"), PASS(XNF_R_FRAG_NEEDED) },
	/* A route's own MTU (the kernel's RTAX_MTU): the kernel answers
	 * what is larger with ICMP (issue 33). */
	{ "v4 1400 bytes on a route of MTU 1400",
	  V4(.frame_len = ETH_HLEN + 1400, .dst = "10.7.0.9"), FWD(2) },
	{ "v4 1401 bytes on a route of MTU 1400",
	  V4(.frame_len = ETH_HLEN + 1401, .dst = "10.7.0.9"),
	  PASS(XNF_R_FRAG_NEEDED) },
	{ "v4 1401 bytes on a route of MTU 1400, TTL 1",
	  V4(.frame_len = ETH_HLEN + 1401, .dst = "10.7.0.9", .ttl = 1),
	  PASS(XNF_R_TTL) },
	{ "v6 1280 bytes on a route of MTU 1280",
	  V6(.frame_len = ETH_HLEN + 1280, .dst = "2001:db8:7::9"), FWD(2) },
	{ "v6 1281 bytes on a route of MTU 1280",
	  V6(.frame_len = ETH_HLEN + 1281, .dst = "2001:db8:7::9"),
	  PASS(XNF_R_FRAG_NEEDED) },
	{ "v6 link-local destination", V6(.dst = "fe80::1"), PASS(XNF_R_LOCAL) },
	{ "v6 link-local source", V6(.src = "fe80::1"), PASS(XNF_R_LOCAL) },
	{ "v4 link-local destination", V4(.dst = "169.254.1.1"),
	  PASS(XNF_R_LOCAL) },
	{ "v6 9000 bytes, hop limit 1", V6(.frame_len = 9000, .ttl = 1),
	  PASS(XNF_R_TTL) },
};

/*
 * Compares the frame that came out with @want and checks the fields a
 * forwarder touches one by one, for readable failures. @fwd: the frame
 * was forwarded (TTL one lower than in @in).
 */
static bool l3_frame_ok(const __u8 *in, const __u8 *want, __u32 len,
			const struct fx_out *out, bool fwd, const char *what)
{
	size_t ttl = pkt_ttl_off(in, len);
	bool ok = true;

	if (!ASSERT_EQ(out->len, len, what))
		return false;
	ok &= ASSERT_MEM(out->data, want, ETH_ALEN, what);
	ok &= ASSERT_MEM(out->data + ETH_ALEN, want + ETH_ALEN, ETH_ALEN, what);
	if (ttl) {
		__u16 stored, scratch = pkt_ipv4_csum_calc(out->data, len);

		ok &= ASSERT_EQ(out->data[ttl], (__u8)(in[ttl] - fwd), what);
		/* (A frame with a wrong checksum that is not forwarded
		 * must come back as it came: the whole-frame check.) */
		if (scratch != 0xffff && (fwd || pkt_ipv4_csum_ok(in, len))) {
			memcpy(&stored, out->data + ttl + 2, 2);
			ok &= ASSERT_TRUE(pkt_ipv4_csum_ok(out->data, len), what);
			ok &= ASSERT_EQ(ntohs(stored), ntohs(scratch), what);
		}
		if (pkt_l4_csum_ok(in, len))
			ok &= ASSERT_TRUE(pkt_l4_csum_ok(out->data, len), what);
	}
	ok &= ASSERT_MEM(out->data, want, len, what);
	return ok;
}

static __u8 l3_in[PKT_MAX], l3_want[PKT_MAX];

/* Frames live mode can carry: it sends them for real, onto veths with
 * MTU 1500, and refuses multi-buffer frames. */
#define L3_LIVE_MAX (ETH_HLEN + 1500)

/* Runs case @c on the loaded chain; @l2: l2fwd follows l3fwd (with an
 * empty FDB, it keeps l3fwd's choice). */
static bool l3_case_run(struct fx *f, struct fx_cap *cap, const struct l3_case *c,
			bool l2, const char *what, struct fx_out *out)
{
	__u32 act = c->drop ? XNF_ACT_DROP : XNF_ACT_PASS;
	bool fwd = c->ret == XDP_REDIRECT;
	struct xnf_stats st;
	__u8 dmac[ETH_ALEN];
	int len;
	bool ok;

	len = pkt_build(l3_in, sizeof(l3_in), &c->in);
	if (!ASSERT_GE(len, ETH_HLEN, what))
		return false;
	memset(l3_in + len, 0, c->pad);
	len += c->pad;
	if (!fx_set_cfg(f, act, act, act, XNF_ACT_FLOOD) ||
	    !fx_set_martian(f, c->martian_pass ? XNF_ACT_PASS : XNF_ACT_DROP) ||
	    !fx_stats_reset(f))
		return false;
	if (!ASSERT_OK(fx_run(f, l3_in, len, out), what) || !fx_stats(f, &st))
		return false;

	/* A wrong verdict makes every later check fail too: say it once. */
	if (!ASSERT_NEQ(out->ret, XDP_ABORTED, what) ||
	    !ASSERT_EQ(out->ret, c->ret, what))
		return false;
	memcpy(l3_want, l3_in, len);
	if (fwd) {
		fx_nh_mac(c->port, dmac);
		pkt_routed(l3_want, len, dmac, f->mac[c->port]);
	}
	ok = l3_frame_ok(l3_in, l3_want, len, out, fwd, what);
	ok &= fx_expect_entry(&st, c->ret, c->reason, what);
	ok &= fx_expect_nf(&st, XNF_NF_L3FWD, c->ret, what);
	ok &= fx_expect_nf(&st, XNF_NF_L2FWD, l2 && fwd ? XDP_REDIRECT : -1,
			   what);

	/* The port it really leaves on, in live mode; only for forwarded
	 * frames: live mode hands a passed one to the namespace's stack. */
	if (fwd && len <= L3_LIVE_MAX) {
		__u32 got;

		if (!ASSERT_OK(fx_run_live(f, l3_in, len), what))
			return false;
		got = fx_cap_ports(cap, l3_want, len, 1u << c->port);
		ok &= xnf_test_check(got == 1u << c->port, __FILE__, __LINE__,
				     what, "left on ports 0x%x, want 0x%x", got,
				     1u << c->port);
	}
	return ok;
}

/* Runs a table through "l3fwd" and "l3fwd,l2fwd", tail-called and fused;
 * the fused chain must give what the tail-called one gave, byte for byte. */
static void l3_table(struct fx *f, const struct l3_case *cases, size_t n, bool fib)
{
	struct fx_out *tail = calloc(n, sizeof(*tail)), out;
	struct fx_cap cap;
	char what[192];
	size_t ch, i;
	int fused;

	if (!ASSERT_TRUE(tail, "calloc"))
		return;
	if (!fx_cap_open(&cap)) {
		free(tail);
		return;
	}
	for (ch = 0; ch < ARRAY_SIZE(l3_chains); ch++) {
		for (fused = 0; fused <= 1; fused++) {
			if (!fx_chain(f, l3_chains[ch], fused, fib))
				goto out;
			for (i = 0; i < n; i++) {
				snprintf(what, sizeof(what), "%s [%s%s%s]",
					 cases[i].desc, l3_chains[ch],
					 fused ? ", fused" : "",
					 fib ? ", fib" : "");
				if (!l3_case_run(f, &cap, &cases[i], ch == 1,
						 what, &out))
					continue;
				if (!fused) {
					tail[i] = out;
					continue;
				}
				fx_same_as_tail(&out, &tail[i], what);
			}
		}
	}
out:
	fx_cap_close(&cap);
	free(tail);
}

TEST(l3fwd_table)
{
	struct fx f;

	if (!fx_open(&f))
		return;
	/* Jumbo ports ut0 and ut1; ut2 keeps 1500, for the MTU cases. */
	if (ASSERT_OK(fx_sh("ip link set ut0 mtu 9000 && ip link set ut1 mtu 9000"),
		      "jumbo MTU on ut0 and ut1") &&
	    fx_l3_table(&f))
		l3_table(&f, l3_cases, ARRAY_SIZE(l3_cases), false);
	fx_sh("ip link set ut0 mtu 1500; ip link set ut1 mtu 1500");
	fx_close(&f);
}

/* Forwards one frame and checks the bytes only (the sweeps count at the
 * end). */
static bool l3_fwd_one(struct fx *f, const __u8 *in, __u32 len, __u32 port,
		       const char *what)
{
	struct fx_out out;
	__u8 dmac[ETH_ALEN];

	if (!ASSERT_OK(fx_run(f, in, len, &out), what))
		return false;
	if (!ASSERT_EQ(out.ret, XDP_REDIRECT, what))
		return false;
	memcpy(l3_want, in, len);
	fx_nh_mac(port, dmac);
	pkt_routed(l3_want, len, dmac, f->mac[port]);
	return l3_frame_ok(in, l3_want, len, &out, true, what);
}

/*
 * Gives the IPv4 header of @frame the identification that makes its
 * checksum @check (any value but 0xffff, which no header sums to), and
 * stores that checksum. The UDP checksum does not cover either field.
 */
static bool l3_set_csum(__u8 *frame, __u32 len, __u16 check)
{
	size_t id = pkt_l3_off(frame) + 4;
	__u32 i;

	for (i = 0; i <= 0xffff; i++) {
		frame[id] = i >> 8;
		frame[id + 1] = i & 0xff;
		if (ntohs(pkt_ipv4_csum_calc(frame, len)) == check) {
			pkt_ipv4_csum_set(frame, len);
			return true;
		}
	}
	return false;
}

/*
 * TTL 2..255 for many addresses on every route, then header checksums
 * chosen to sit at the edges of the incremental update: the high byte
 * 0xff (the +0x0100 carries out and must be folded back), 0xfeff (the
 * sum is 0xffff, which must become 0x0000 as a computation from scratch
 * gives), and around 0x0000 / 0x8000. Every output is compared with a
 * header checksummed from scratch.
 */
TEST(l3fwd_ttl_sweep)
{
	static const struct {
		const char *src, *dst;
		__u32 port;
	} v4[] = {
		{ "192.0.2.1", "198.51.100.1", 1 },
		{ "192.0.2.200", "198.51.100.77", 1 },
		{ "203.0.113.9", "10.9.9.9", 1 },
		{ "192.0.2.255", "10.1.2.9", 2 },
		{ "198.51.100.200", "10.1.2.3", 0 },
		{ "255.255.255.254", "10.255.255.254", 1 },
		{ "0.0.0.1", "10.0.0.0", 1 },
		{ "172.16.128.77", "10.128.255.1", 1 },
	};
	static const struct {
		const char *src, *dst;
		__u32 port;
	} v6[] = {
		{ "2001:db8:1::1", "2001:db8:2::1", 1 },
		{ "2001:db8:1::2", "2001:db8:5::5", 0 },
		{ "2001:db8:1:ffff:ffff:ffff:ffff:ffff", "2001:db8:5:1::ffff", 2 },
		{ "2001:db8:ffff::1", "2001:db8:ffff:ffff::1", 1 },
	};
	static const __u16 csums[] = {
		0x0000, 0x0001, 0x00fe, 0x00ff, 0x0100, 0x01ff,
		0x7eff, 0x7fff, 0x8000, 0xfdff, 0xfe00, 0xfefe,
		0xfeff, 0xff00, 0xff01, 0xff7f, 0xfffd, 0xfffe,
	};
	static const __u8 ttls[] = { 2, 3, 64, 128, 129, 254, 255 };
	__u64 n = 0, want_n;
	struct xnf_stats st;
	char what[160];
	size_t a, k;
	struct fx f;
	int fused, ttl, len;
	bool ok = true;

	if (!fx_open(&f))
		return;
	if (!fx_l3_table(&f))
		goto out;
	want_n = (ARRAY_SIZE(v4) + ARRAY_SIZE(v6)) * 254 +
		 ARRAY_SIZE(csums) * ARRAY_SIZE(ttls);
	for (fused = 0; fused <= 1 && ok; fused++) {
		if (!fx_chain(&f, "l3fwd", fused, false) || !fx_stats_reset(&f))
			goto out;
		n = 0;
		for (a = 0; a < ARRAY_SIZE(v4) && ok; a++) {
			for (ttl = 2; ttl <= 255 && ok; ttl++, n++) {
				struct pkt_spec s = { .family = 4,
						      .ttl = ttl,
						      .src = v4[a].src,
						      .dst = v4[a].dst,
						      .sport = ttl * 257 };

				snprintf(what, sizeof(what),
					 "v4 %s -> %s TTL %d%s", s.src, s.dst,
					 ttl, fused ? " [fused]" : "");
				len = pkt_build(l3_in, sizeof(l3_in), &s);
				ok = ASSERT_GE(len, 42, what) &&
				     l3_fwd_one(&f, l3_in, len, v4[a].port, what);
			}
		}
		for (a = 0; a < ARRAY_SIZE(v6) && ok; a++) {
			for (ttl = 2; ttl <= 255 && ok; ttl++, n++) {
				struct pkt_spec s = { .family = 6,
						      .ttl = ttl,
						      .src = v6[a].src,
						      .dst = v6[a].dst };

				snprintf(what, sizeof(what),
					 "v6 %s -> %s hop limit %d%s", s.src,
					 s.dst, ttl, fused ? " [fused]" : "");
				len = pkt_build(l3_in, sizeof(l3_in), &s);
				ok = ASSERT_GE(len, 62, what) &&
				     l3_fwd_one(&f, l3_in, len, v6[a].port, what);
			}
		}
		for (k = 0; k < ARRAY_SIZE(csums) && ok; k++) {
			for (a = 0; a < ARRAY_SIZE(ttls) && ok; a++, n++) {
				struct pkt_spec s = { .family = 4,
						      .ttl = ttls[a] };

				snprintf(what, sizeof(what),
					 "v4 checksum 0x%04x TTL %u%s", csums[k],
					 ttls[a], fused ? " [fused]" : "");
				len = pkt_build(l3_in, sizeof(l3_in), &s);
				ok = ASSERT_GE(len, 42, what) &&
				     ASSERT_TRUE(l3_set_csum(l3_in, len, csums[k]),
						 what) &&
				     ASSERT_TRUE(pkt_ipv4_csum_ok(l3_in, len),
						 what) &&
				     l3_fwd_one(&f, l3_in, len, 1, what);
			}
		}
		if (!ok || !fx_stats(&f, &st))
			break;
		snprintf(what, sizeof(what), "sweep counters%s",
			 fused ? " [fused]" : "");
		ASSERT_EQ(n, want_n, what);
		ASSERT_EQ(st.nf[XNF_NF_ENTRY].in, n, what);
		ASSERT_EQ(st.nf[XNF_NF_ENTRY].redirect, n, what);
		ASSERT_EQ(st.nf[XNF_NF_L3FWD].in, n, what);
		ASSERT_EQ(st.nf[XNF_NF_L3FWD].redirect, n, what);
		ASSERT_TRUE(fx_stats_consistent(&st, what), what);
		ASSERT_EQ(fx_drops(&st) + fx_passes(&st), 0, what);
	}
out:
	fx_close(&f);
}

/* l3fwd chooses a port that is not in the devmap (removed by the control
 * plane): the redirect fails and the entry drops with reason "redirect",
 * while l3fwd's own row still shows what it decided. */
TEST(l3fwd_egress_not_in_devmap)
{
	static const struct pkt_spec s = { .family = 4, .dst = "10.1.2.9" };
	struct xnf_stats st;
	struct fx_out out;
	char what[96];
	struct fx f;
	int fused, len;

	if (!fx_open(&f))
		return;
	if (!fx_l3_table(&f) || !ASSERT_OK(xnf_port_del(f.dp, f.ifindex[2]),
					   "remove ut2 from the devmap"))
		goto out;
	len = pkt_build(l3_in, sizeof(l3_in), &s);
	for (fused = 0; fused <= 1; fused++) {
		snprintf(what, sizeof(what), "route to a removed port%s",
			 fused ? " [fused]" : "");
		if (!fx_chain(&f, "l3fwd", fused, false) || !fx_stats_reset(&f))
			break;
		if (!ASSERT_OK(fx_run(&f, l3_in, len, &out), what) ||
		    !fx_stats(&f, &st))
			break;
		ASSERT_EQ(out.ret, XDP_DROP, what);
		fx_expect_entry(&st, XDP_DROP, XNF_R_REDIRECT, what);
		fx_expect_nf(&st, XNF_NF_L3FWD, XDP_REDIRECT, what);
	}
out:
	fx_close(&f);
}

/*
 * fib mode: the kernel's FIB and neighbour table of the test namespace.
 *   ut0  192.0.2.254/24, 2001:db8:1::fe/64 (ingress)
 *   ut1  198.51.100.254/24, 2001:db8:2::fe/64; neighbours .1 and ::1 with
 *        MAC 02:00:00:00:01:01 (what fx_nh_mac(1) gives), so expected
 *        frames are those of a static route to port 1
 *   10.7.0.0/16 via 198.51.100.1, 2001:db8:7::/48 via 2001:db8:2::1
 *   blackhole 203.0.113.0/25, 2001:db8:b::/48
 *   unreachable 203.0.113.128/25, 2001:db8:c::/48
 */
static const char l3_fib_setup[] =
	"ip addr add 192.0.2.254/24 dev ut0 && "
	"ip -6 addr add 2001:db8:1::fe/64 dev ut0 nodad && "
	"ip addr add 198.51.100.254/24 dev ut1 && "
	"ip -6 addr add 2001:db8:2::fe/64 dev ut1 nodad && "
	"ip neigh replace 198.51.100.1 lladdr 02:00:00:00:01:01 dev ut1 nud permanent && "
	"ip -6 neigh replace 2001:db8:2::1 lladdr 02:00:00:00:01:01 dev ut1 nud permanent && "
	"ip route add 10.7.0.0/16 via 198.51.100.1 && "
	"ip -6 route add 2001:db8:7::/48 via 2001:db8:2::1 && "
	"ip route add blackhole 203.0.113.0/25 && "
	"ip route add unreachable 203.0.113.128/25 && "
	"ip -6 route add blackhole 2001:db8:b::/48 && "
	"ip -6 route add unreachable 2001:db8:c::/48 && "
	"sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1";

/* Undoes exactly what l3_fib_setup did (whatever part of it succeeded),
 * so the other tests of the process find the namespace as it was. */
static const char l3_fib_cleanup[] =
	"sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0; "
	"ip -6 route del unreachable 2001:db8:c::/48 2>/dev/null; "
	"ip -6 route del blackhole 2001:db8:b::/48 2>/dev/null; "
	"ip route del unreachable 203.0.113.128/25 2>/dev/null; "
	"ip route del blackhole 203.0.113.0/25 2>/dev/null; "
	"ip -6 route del 2001:db8:7::/48 2>/dev/null; "
	"ip route del 10.7.0.0/16 2>/dev/null; "
	"ip -6 neigh del 2001:db8:2::1 dev ut1 2>/dev/null; "
	"ip neigh del 198.51.100.1 dev ut1 2>/dev/null; "
	"ip -6 addr del 2001:db8:2::fe/64 dev ut1 2>/dev/null; "
	"ip addr del 198.51.100.254/24 dev ut1 2>/dev/null; "
	"ip -6 addr del 2001:db8:1::fe/64 dev ut0 2>/dev/null; "
	"ip addr del 192.0.2.254/24 dev ut0 2>/dev/null; true";

static const struct l3_case l3_fib_cases[] = {
	{ "fib v4 connected neighbour", V4(), FWD(1) },
	{ "fib v4 via gateway", V4(.dst = "10.7.1.1"), FWD(1) },
	{ "fib v4 TTL 2", V4(.ttl = 2, .dst = "10.7.255.255"), FWD(1) },
	{ "fib v4 TTL 255", V4(.ttl = 255), FWD(1) },
	{ "fib v4 options", V4(.ip_opts = 8), FWD(1) },
	{ "fib v4 first fragment", V4(.frag_off = 0x2000), FWD(1) },
	{ "fib v4 later fragment", V4(.frag_off = 0x0010), FWD(1) },
	{ "fib v4 TCP", V4(.proto = IPPROTO_TCP), FWD(1) },
	{ "fib v6 connected neighbour", V6(), FWD(1) },
	{ "fib v6 via gateway", V6(.dst = "2001:db8:7::9"), FWD(1) },
	{ "fib v6 hop limit 2", V6(.ttl = 2), FWD(1) },
	{ "fib v6 hop-by-hop", V6(EXT(IPPROTO_HOPOPTS), .frame_len = 96), FWD(1) },
	{ "fib v6 fragment", V6(EXT(IPPROTO_FRAGMENT), .frag_off = 0x0009),
	  FWD(1) },
	{ "fib v4 no neighbour", V4(.dst = "198.51.100.2"), PASS(XNF_R_NO_NEIGH) },
	{ "fib v4 no neighbour, drop config", V4(.dst = "198.51.100.2"),
	  DROP_CFG, PASS(XNF_R_NO_NEIGH) },
	{ "fib v6 no neighbour", V6(.dst = "2001:db8:2::2"),
	  PASS(XNF_R_NO_NEIGH) },
	{ "fib v4 own address (egress side)", V4(.dst = "198.51.100.254"),
	  PASS(XNF_R_LOCAL) },
	{ "fib v4 own address (ingress side)", V4(.dst = "192.0.2.254"),
	  PASS(XNF_R_LOCAL) },
	{ "fib v4 own address, dropped", V4(.dst = "198.51.100.254"), DROP_CFG,
	  DROP(XNF_R_LOCAL) },
	{ "fib v4 own address, TTL 1", V4(.dst = "198.51.100.254", .ttl = 1),
	  PASS(XNF_R_LOCAL) },
	{ "fib v6 own address", V6(.dst = "2001:db8:2::fe"), PASS(XNF_R_LOCAL) },
	{ "fib v6 own address, dropped", V6(.dst = "2001:db8:2::fe"), DROP_CFG,
	  DROP(XNF_R_LOCAL) },
	{ "fib v4 blackhole", V4(.dst = "203.0.113.1"), DROP(XNF_R_BLACKHOLE) },
	{ "fib v6 blackhole", V6(.dst = "2001:db8:b::1"), DROP(XNF_R_BLACKHOLE) },
	{ "fib v4 unreachable", V4(.dst = "203.0.113.129"), PASS(XNF_R_NO_ROUTE) },
	{ "fib v4 unreachable, dropped", V4(.dst = "203.0.113.129"), DROP_CFG,
	  DROP(XNF_R_NO_ROUTE) },
	{ "fib v6 unreachable", V6(.dst = "2001:db8:c::1"), PASS(XNF_R_NO_ROUTE) },
	{ "fib v6 unreachable, dropped", V6(.dst = "2001:db8:c::1"), DROP_CFG,
	  DROP(XNF_R_NO_ROUTE) },
	{ "fib v4 TTL 1", V4(.ttl = 1), PASS(XNF_R_TTL) },
	{ "fib v4 TTL 1, dropped", V4(.ttl = 1), DROP_CFG, DROP(XNF_R_TTL) },
	{ "fib v4 TTL 0", V4(.ttl_zero = true, .dst = "10.7.1.1"),
	  PASS(XNF_R_TTL) },
	{ "fib v6 hop limit 1", V6(.ttl = 1), PASS(XNF_R_TTL) },
	{ "fib v6 hop limit 0, dropped", V6(.ttl_zero = true), DROP_CFG,
	  DROP(XNF_R_TTL) },
	{ "fib v4 subnet broadcast",
	  V4(.dst = "198.51.100.255", .dmac = MAC_BCAST), PASS(XNF_R_LOCAL) },
	/* ut1's MTU is 1500: bigger packets are the kernel's to fragment
	 * or to answer with "fragmentation needed" / "packet too big". */
	{ "fib v4 1500-byte packet fits the MTU", V4(.frame_len = 1514), FWD(1) },
	{ "fib v4 1501-byte packet", V4(.frame_len = 1515),
	  PASS(XNF_R_FRAG_NEEDED) },
	{ "fib v4 1501 bytes, DF, drop config",
	  V4(.frame_len = 1515, .frag_off = 0x4000), DROP_CFG,
	  PASS(XNF_R_FRAG_NEEDED) },
	{ "fib v4 9000 bytes", V4(.frame_len = 9000), PASS(XNF_R_FRAG_NEEDED) },
	{ "fib v6 1500-byte packet fits the MTU", V6(.frame_len = 1514), FWD(1) },
	{ "fib v6 1501-byte packet", V6(.frame_len = 1515),
	  PASS(XNF_R_FRAG_NEEDED) },
	{ "fib v6 9000 bytes", V6(.frame_len = 9000), PASS(XNF_R_FRAG_NEEDED) },
	{ "fib ARP", .in = { .family = 0 }, PASS(XNF_R_NOT_IP) },
	{ "fib v4 VLAN", V4(.nvlans = 1), PASS(XNF_R_VLAN) },
};

/* With ut1 out of the devmap the kernel's route still leads there: xnf
 * cannot send on it, so the kernel forwards the packet. */
static const struct l3_case l3_fib_not_port[] = {
	{ "fib v4 egress not an xnf port", V4(), PASS(XNF_R_NOT_PORT) },
	{ "fib v6 egress not an xnf port", V6(), PASS(XNF_R_NOT_PORT) },
	{ "fib v4 not a port, drop config", V4(.dst = "10.7.0.1"), DROP_CFG,
	  PASS(XNF_R_NOT_PORT) },
};

TEST(l3fwd_fib)
{
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!ASSERT_OK(fx_sh("%s", l3_fib_setup), "configure the kernel's FIB"))
		goto out;
	l3_table(&f, l3_fib_cases, ARRAY_SIZE(l3_fib_cases), true);
	if (ASSERT_OK(xnf_port_del(f.dp, f.ifindex[1]),
		      "remove ut1 from the devmap"))
		l3_table(&f, l3_fib_not_port, ARRAY_SIZE(l3_fib_not_port), true);
out:
	fx_sh("%s", l3_fib_cleanup);
	fx_close(&f);
}

/*
 * Destinations no router forwards as unicast, here behind a default route
 * that covers everything: the limited broadcast 255.255.255.255 (RFC 1812
 * 4.2.2.11, 5.3.5.1: a DHCP DISCOVER must not be sent to the upstream
 * gateway), IPv4 and IPv6 multicast (xnf does no multicast routing; the
 * link-local groups must never leave the link), and any packet that came
 * as a link-layer broadcast or multicast (RFC 1812 5.3.4; Linux drops those
 * in ip_forward / ip6_forward, pkt_type != PACKET_HOST). They belong to the
 * kernel, like the own addresses: passed with reason "local", which is
 * also what fib mode reports for what the kernel will not forward
 * (BPF_FIB_LKUP_RET_NOT_FWDED). Bytes unchanged, TTL included.
 */
static const struct l3_case l3_group_cases[] = {
	{ "v4 unicast via the default route", V4(.dst = "10.99.0.1"), FWD(1) },
	{ "v6 unicast via the default route", V6(.dst = "3fff::1"), FWD(1) },
	{ "v4 limited broadcast (DHCP DISCOVER)",
	  V4(.dst = "255.255.255.255", .src = "0.0.0.0", .sport = 68,
	     .dport = 67, .dmac = MAC_BCAST),
	  PASS(XNF_R_LOCAL) },
	{ "v4 link-local multicast 224.0.0.251",
	  V4(.dst = "224.0.0.251", .ttl = 255,
	     .dmac = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb }),
	  PASS(XNF_R_LOCAL) },
	{ "v4 multicast 239.1.2.3",
	  V4(.dst = "239.1.2.3", .dmac = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 }),
	  PASS(XNF_R_LOCAL) },
	{ "v4 multicast, local drop config",
	  V4(.dst = "239.1.2.3", .dmac = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 }),
	  DROP_CFG, DROP(XNF_R_LOCAL) },
	{ "v6 all-nodes ff02::1",
	  V6(.dst = "ff02::1", .ttl = 255, .dmac = { 0x33, 0x33, 0, 0, 0, 0x01 }),
	  PASS(XNF_R_LOCAL) },
	{ "v6 global multicast ff0e::1234",
	  V6(.dst = "ff0e::1234", .dmac = { 0x33, 0x33, 0, 0, 0x12, 0x34 }),
	  PASS(XNF_R_LOCAL) },
	/* The IP destination alone decides, whatever the frame's MAC says. */
	{ "v4 limited broadcast in a unicast frame",
	  V4(.dst = "255.255.255.255"), PASS(XNF_R_LOCAL) },
	{ "v4 multicast in a unicast frame", V4(.dst = "224.0.1.1"),
	  PASS(XNF_R_LOCAL) },
	{ "v4 last multicast address", V4(.dst = "239.255.255.255"),
	  PASS(XNF_R_LOCAL) },
	{ "v4 223.255.255.255, just below multicast",
	  V4(.dst = "223.255.255.255"), FWD(1) },
	{ "v6 multicast in a unicast frame", V6(.dst = "ff05::2"),
	  PASS(XNF_R_LOCAL) },
	/* And the frame alone decides, whatever the IP destination. */
	{ "v4 unicast in a link-layer broadcast", V4(.dmac = MAC_BCAST),
	  PASS(XNF_R_LOCAL) },
	{ "v6 unicast in a link-layer multicast",
	  V6(.dmac = { 0x33, 0x33, 0, 0, 0, 0x01 }), PASS(XNF_R_LOCAL) },
};

/* Both modes: xnf's table with default routes to ut1, and the kernel's
 * FIB of l3_fib_setup with default routes via ut1's neighbours. */
TEST(l3fwd_group_destinations)
{
	struct fx f;

	if (!fx_open(&f))
		return;
	if (fx_route4(&f, "0.0.0.0/0", 1, XNF_RT_UNICAST) &&
	    fx_route6(&f, "::/0", 1, XNF_RT_UNICAST))
		l3_table(&f, l3_group_cases, ARRAY_SIZE(l3_group_cases), false);
	if (ASSERT_OK(fx_sh("%s && ip route add default via 198.51.100.1 && "
			    "ip -6 route add default via 2001:db8:2::1",
			    l3_fib_setup),
		      "configure the kernel's FIB"))
		l3_table(&f, l3_group_cases, ARRAY_SIZE(l3_group_cases), true);
	fx_sh("ip -6 route del default via 2001:db8:2::1 2>/dev/null; "
	      "ip route del default via 198.51.100.1 2>/dev/null; %s",
	      l3_fib_cleanup);
	fx_close(&f);
}

/*
 * The receive checks (include/uapi/xnf_rx.h, bpf/rx.bpf.h), behind routes
 * that cover every address (defaults to ut1 besides fx_l3_table), so that
 * only the checks keep a packet from being forwarded:
 *   - the IPv4 header checksum (RFC 1812 5.2.2; Linux's ip_rcv_core):
 *     wrong by one, 0x0000, 0xffff, or computed without the options, is
 *     dropped as bad_csum before anything else (TTL, own address, group
 *     MAC); a tagged frame is still the kernel's VLAN device's;
 *   - martians, as Linux refuses them (ip_route_input_slow, ip6_rcv_core,
 *     ip6_forward): dropped as martian by default, passed with reason
 *     martian under `config set martian pass`; the neighbours of each
 *     class that Linux does forward are forwarded.
 * Every frame that is not forwarded comes back byte for byte.
 */
static const struct l3_case l3_rx_cases[] = {
	/* Checksums. */
	{ "v4 checksum right", V4(), FWD(1) },
	{ "v4 checksum + 1", V4(.ip_csum = PKT_CSUM_PLUS1), DROP(XNF_R_BAD_CSUM) },
	{ "v4 checksum 0x0000", V4(.ip_csum = PKT_CSUM_ZERO),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 checksum 0xffff", V4(.ip_csum = PKT_CSUM_FFFF),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 TCP, checksum + 1",
	  V4(.proto = IPPROTO_TCP, .ip_csum = PKT_CSUM_PLUS1),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 4 option bytes", V4(.ip_opts = 4), FWD(1) },
	{ "v4 40 option bytes", V4(.ip_opts = 40, .frame_len = 128), FWD(1) },
	{ "v4 4 option bytes, checksum + 1",
	  V4(.ip_opts = 4, .ip_csum = PKT_CSUM_PLUS1), DROP(XNF_R_BAD_CSUM) },
	{ "v4 40 option bytes, checksum 0x0000",
	  V4(.ip_opts = 40, .frame_len = 128, .ip_csum = PKT_CSUM_ZERO),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 4 option bytes left out of the checksum",
	  V4(.ip_opts = 4, .ip_csum = PKT_CSUM_NO_OPTS), DROP(XNF_R_BAD_CSUM) },
	{ "v4 40 option bytes left out of the checksum",
	  V4(.ip_opts = 40, .frame_len = 128, .ip_csum = PKT_CSUM_NO_OPTS),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 bad checksum, TTL 1", V4(.ttl = 1, .ip_csum = PKT_CSUM_PLUS1),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 bad checksum, TTL 1, exceptions drop",
	  V4(.ttl = 1, .ip_csum = PKT_CSUM_PLUS1), DROP_CFG,
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 bad checksum to an own address",
	  V4(.dst = "198.51.100.254", .ip_csum = PKT_CSUM_PLUS1),
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 bad checksum to multicast",
	  V4(.dst = "239.1.2.3", .ip_csum = PKT_CSUM_ZERO), DROP(XNF_R_BAD_CSUM) },
	{ "v4 bad checksum in a link-layer broadcast",
	  V4(.dmac = MAC_BCAST, .ip_csum = PKT_CSUM_PLUS1), DROP(XNF_R_BAD_CSUM) },
	{ "v4 bad checksum and a martian source",
	  V4(.src = "127.0.0.1", .ip_csum = PKT_CSUM_PLUS1), MARTIAN_PASS,
	  DROP(XNF_R_BAD_CSUM) },
	{ "v4 bad checksum, VLAN-tagged",
	  V4(.nvlans = 1, .ip_csum = PKT_CSUM_PLUS1), PASS(XNF_R_VLAN) },
	{ "v4 9000 bytes, bad checksum",
	  V4(.frame_len = 9000, .ip_csum = PKT_CSUM_PLUS1), DROP(XNF_R_BAD_CSUM) },
	{ "v6 has no header checksum", V6(.ip_csum = PKT_CSUM_PLUS1), FWD(1) },

	/* IPv4 martian sources and destinations. */
	{ "v4 source 127.0.0.1", V4(.src = "127.0.0.1"), DROP(XNF_R_MARTIAN) },
	{ "v4 source 127.0.0.1, pass", V4(.src = "127.0.0.1"), MARTIAN_PASS,
	  PASS(XNF_R_MARTIAN) },
	{ "v4 source 127.255.255.255", V4(.src = "127.255.255.255"),
	  DROP(XNF_R_MARTIAN) },
	{ "v4 destination 127.0.0.1", V4(.dst = "127.0.0.1"),
	  DROP(XNF_R_MARTIAN) },
	{ "v4 destination 127.1.2.3, pass", V4(.dst = "127.1.2.3"),
	  MARTIAN_PASS, PASS(XNF_R_MARTIAN) },
	{ "v4 source 224.0.0.1", V4(.src = "224.0.0.1"), DROP(XNF_R_MARTIAN) },
	{ "v4 source 239.255.255.255", V4(.src = "239.255.255.255"),
	  DROP(XNF_R_MARTIAN) },
	{ "v4 source 224.0.0.1, pass", V4(.src = "224.0.0.1"), MARTIAN_PASS,
	  PASS(XNF_R_MARTIAN) },
	{ "v4 source 255.255.255.255", V4(.src = "255.255.255.255"),
	  DROP(XNF_R_MARTIAN) },
	{ "v4 source 255.255.255.255, pass", V4(.src = "255.255.255.255"),
	  MARTIAN_PASS, PASS(XNF_R_MARTIAN) },
	{ "v4 source 0.0.0.0", V4(.src = "0.0.0.0"), DROP(XNF_R_MARTIAN) },
	{ "v4 source 0.0.0.0, pass", V4(.src = "0.0.0.0"), MARTIAN_PASS,
	  PASS(XNF_R_MARTIAN) },
	{ "v4 destination 0.0.0.0", V4(.dst = "0.0.0.0"), DROP(XNF_R_MARTIAN) },
	{ "v4 destination 0.0.0.0, pass", V4(.dst = "0.0.0.0"), MARTIAN_PASS,
	  PASS(XNF_R_MARTIAN) },
	/* Before the TTL and the route, as in ip_route_input_slow. */
	{ "v4 martian source, TTL 1", V4(.src = "127.0.0.1", .ttl = 1),
	  DROP(XNF_R_MARTIAN) },
	{ "v4 martian source to an own address",
	  V4(.src = "127.0.0.1", .dst = "198.51.100.254"), DROP(XNF_R_MARTIAN) },
	{ "v4 multicast source to the limited broadcast",
	  V4(.src = "224.0.0.1", .dst = "255.255.255.255"), DROP(XNF_R_MARTIAN) },
	{ "v4 martian source in a link-layer broadcast",
	  V4(.src = "0.0.0.0", .dmac = MAC_BCAST), DROP(XNF_R_MARTIAN) },
	/* From 0.0.0.0, to the kernel where Linux accepts it. */
	{ "v4 0.0.0.0 -> 255.255.255.255 (DHCP DISCOVER)",
	  V4(.src = "0.0.0.0", .dst = "255.255.255.255", .dmac = MAC_BCAST),
	  PASS(XNF_R_LOCAL) },
	{ "v4 0.0.0.0 -> 0.0.0.0", V4(.src = "0.0.0.0", .dst = "0.0.0.0"),
	  PASS(XNF_R_LOCAL) },
	{ "v4 0.0.0.0 -> 224.0.0.22", V4(.src = "0.0.0.0", .dst = "224.0.0.22"),
	  PASS(XNF_R_LOCAL) },
	/* Their neighbours, which Linux forwards: only 0.0.0.0 of 0/8 is
	 * special since Linux 5.3, and 240/4 is unicast. */
	{ "v4 source 0.0.0.1", V4(.src = "0.0.0.1"), FWD(1) },
	{ "v4 source 0.255.255.255", V4(.src = "0.255.255.255"), FWD(1) },
	{ "v4 destination 0.0.0.1", V4(.dst = "0.0.0.1"), FWD(1) },
	{ "v4 source 1.0.0.0", V4(.src = "1.0.0.0"), FWD(1) },
	{ "v4 source 126.255.255.255", V4(.src = "126.255.255.255"), FWD(1) },
	{ "v4 source 128.0.0.0", V4(.src = "128.0.0.0"), FWD(1) },
	{ "v4 destination 128.0.0.1", V4(.dst = "128.0.0.1"), FWD(1) },
	{ "v4 source 223.255.255.255", V4(.src = "223.255.255.255"), FWD(1) },
	{ "v4 source 240.0.0.1", V4(.src = "240.0.0.1"), FWD(1) },
	{ "v4 destination 240.0.0.1", V4(.dst = "240.0.0.1"), FWD(1) },
	{ "v4 source 255.255.255.254", V4(.src = "255.255.255.254"), FWD(1) },

	/* IPv6. */
	{ "v6 source ::1", V6(.src = "::1"), DROP(XNF_R_MARTIAN) },
	{ "v6 source ::1, pass", V6(.src = "::1"), MARTIAN_PASS,
	  PASS(XNF_R_MARTIAN) },
	{ "v6 destination ::1", V6(.dst = "::1"), DROP(XNF_R_MARTIAN) },
	{ "v6 source ::1, hop limit 1", V6(.src = "::1", .ttl = 1),
	  DROP(XNF_R_MARTIAN) },
	{ "v6 source ff02::1", V6(.src = "ff02::1"), DROP(XNF_R_MARTIAN) },
	{ "v6 source ff0e::1, pass", V6(.src = "ff0e::1"), MARTIAN_PASS,
	  PASS(XNF_R_MARTIAN) },
	{ "v6 destination ff01::1 (interface-local)", V6(.dst = "ff01::1"),
	  DROP(XNF_R_MARTIAN) },
	{ "v6 destination ff11::1 (interface-local)", V6(.dst = "ff11::1"),
	  DROP(XNF_R_MARTIAN) },
	{ "v6 destination ff00::1 (scope 0)", V6(.dst = "ff00::1"),
	  DROP(XNF_R_MARTIAN) },
	{ "v6 destination ff02::1 (link-local scope)", V6(.dst = "ff02::1"),
	  PASS(XNF_R_LOCAL) },
	{ "v6 destination ff0f::1 (scope 15)", V6(.dst = "ff0f::1"),
	  PASS(XNF_R_LOCAL) },
	/* From ::, a martian only when it would be forwarded (ip6_forward,
	 * after its hop limit check). */
	{ "v6 source ::", V6(.src = "::"), DROP(XNF_R_MARTIAN) },
	{ "v6 source ::, pass", V6(.src = "::"), MARTIAN_PASS,
	  PASS(XNF_R_MARTIAN) },
	{ "v6 source ::, hop limit 1", V6(.src = "::", .ttl = 1),
	  PASS(XNF_R_TTL) },
	{ "v6 source :: to an own address",
	  V6(.src = "::", .dst = "2001:db8:2::fe"), PASS(XNF_R_LOCAL) },
	{ "v6 source :: to a solicited-node group (DAD)",
	  V6(.src = "::", .dst = "ff02::1:ff00:1", .proto = IPPROTO_ICMPV6,
	     .ttl = 255),
	  PASS(XNF_R_LOCAL) },
	{ "v6 source fe80::1", V6(.src = "fe80::1"), PASS(XNF_R_LOCAL) },
	/* What Linux forwards. */
	{ "v6 source ::ffff:192.0.2.1 (IPv4-mapped)",
	  V6(.src = "::ffff:192.0.2.1"), FWD(1) },
	{ "v6 source ::2", V6(.src = "::2"), FWD(1) },
	{ "v6 source ::1:0:0:1", V6(.src = "::1:0:0:1"), FWD(1) },
	{ "v6 source 100::1", V6(.src = "100::1"), FWD(1) },
	{ "v6 destination ::", V6(.dst = "::"), FWD(1) },
	{ "v6 destination ::2", V6(.dst = "::2"), FWD(1) },
};

TEST(l3fwd_receive_checks)
{
	struct fx_out out;
	__u8 frame[PKT_MAX];
	char what[96];
	struct fx f;
	int fused, len;

	if (!fx_open(&f))
		return;
	SUBTEST("table") {
		if (fx_l3_table(&f) &&
		    fx_route4(&f, "0.0.0.0/0", 1, XNF_RT_UNICAST) &&
		    fx_route6(&f, "::/0", 1, XNF_RT_UNICAST))
			l3_table(&f, l3_rx_cases, ARRAY_SIZE(l3_rx_cases), false);
	}
	SUBTEST("fib") {
		if (ASSERT_OK(fx_sh("%s && ip route add default via 198.51.100.1 && "
				    "ip -6 route add default via 2001:db8:2::1",
				    l3_fib_setup),
			      "configure the kernel's FIB"))
			l3_table(&f, l3_rx_cases, ARRAY_SIZE(l3_rx_cases), true);
		fx_sh("ip -6 route del default via 2001:db8:2::1 2>/dev/null; "
		      "ip route del default via 198.51.100.1 2>/dev/null; %s",
		      l3_fib_cleanup);
	}
	/* 0x0000 and 0xffff are the same number in one's complement: a
	 * header whose right checksum is 0x0000 verifies with 0xffff (the
	 * kernel's ip_fast_csum() agrees), and the incremental update
	 * makes of it what a computation from scratch gives. */
	SUBTEST("0xffff for 0x0000") {
		static const struct pkt_spec s = { .family = 4 };

		len = pkt_build(frame, sizeof(frame), &s);
		if (!fx_l3_table(&f) || !ASSERT_GE(len, 42, "build") ||
		    !ASSERT_TRUE(l3_set_csum(frame, len, 0x0000), "checksum 0"))
			goto out;
		frame[pkt_l3_off(frame) + 10] = 0xff;
		frame[pkt_l3_off(frame) + 11] = 0xff;
		for (fused = 0; fused <= 1; fused++) {
			snprintf(what, sizeof(what), "0xffff for 0x0000%s",
				 fused ? " [fused]" : "");
			if (fx_chain(&f, "l3fwd", fused, false))
				l3_fwd_one(&f, frame, len, 1, what);
		}
		/* The right one itself, for the record. */
		frame[pkt_l3_off(frame) + 10] = 0;
		frame[pkt_l3_off(frame) + 11] = 0;
		if (fx_chain(&f, "l3fwd", false, false) &&
		    ASSERT_OK(fx_run(&f, frame, len, &out), "checksum 0x0000"))
			ASSERT_EQ(out.ret, XDP_REDIRECT, "checksum 0x0000");
	}
out:
	fx_close(&f);
}

/* The RFC 1071 fold, step by step: what xnf_rx_csum_ok() must equal. */
static bool csum_fold_ok(__u64 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/*
 * xnf_rx_csum_ok() tests divisibility by 0xffff with a multiplication
 * instead of folding: it must agree with the fold on every sum a header
 * can have (15 words, below 2^36): every multiple of 0xffff up to 2^24
 * and its two neighbours, the top of the range, and random sums.
 */
TEST(l3fwd_csum_rule)
{
	__u64 k, sum, x = 0x9e3779b97f4a7c15ULL, bad = 0;
	int i;

	for (k = 1; k <= 1 << 24; k++) {
		sum = k * 0xffff;
		bad += !xnf_rx_csum_ok(sum) + xnf_rx_csum_ok(sum - 1) +
		       xnf_rx_csum_ok(sum + 1);
	}
	for (sum = (15ULL << 32) - 0x100000; sum < 15ULL << 32; sum++)
		bad += xnf_rx_csum_ok(sum) != csum_fold_ok(sum);
	for (i = 0; i < 1 << 22; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum = x & ((1ULL << 36) - 1);
		bad += xnf_rx_csum_ok(sum) != csum_fold_ok(sum);
		/* And the multiple below it; 0 is no header's (version 4). */
		sum -= sum % 0xffff;
		if (sum)
			bad += xnf_rx_csum_ok(sum) != csum_fold_ok(sum);
	}
	ASSERT_EQ(bad, 0, "sums on which the multiplication and the fold differ");
}

/* The xsk NF of an attachment with fib asks the kernel's FIB for the
 * AF_XDP worker and leaves the answer in front of the frame (xnf_fib.h);
 * the frame itself is unchanged. Without a socket the chain passes it
 * (xsk_fallback), which BPF_PROG_TEST_RUN returns with the metadata. */
static void xsk_fib_case(struct fx *f, const char *dst, int family, long rc,
			 __u32 ifindex)
{
	static __u8 frame[PKT_MAX];
	static struct fx_out out;
	struct pkt_spec s = { .family = family, .dst = dst };
	const __u8 nmac[6] = { 0x02, 0, 0, 0, 0x01, 0x01 };
	struct xnf_xsk_meta m;
	int len = pkt_build(frame, sizeof(frame), &s);

	if (!ASSERT_OK(fx_run(f, frame, len, &out), dst) ||
	    !ASSERT_EQ(out.len, len + sizeof(m), "frame and the answer"))
		return;
	memcpy(&m, out.data, sizeof(m));
	ASSERT_EQ(m.magic, XNF_XSK_META_MAGIC, "magic");
	ASSERT_EQ(m.len, len, "the frame's length");
	ASSERT_EQ(m.rc, rc, "the FIB's answer");
	ASSERT_MEM(out.data + sizeof(m), frame, len, "frame unchanged");
	if (rc == BPF_FIB_LKUP_RET_SUCCESS) {
		ASSERT_EQ(m.ifindex, ifindex, "egress");
		ASSERT_MEM(m.dmac, nmac, 6, "the neighbour's MAC");
	}
}

TEST(xsk_fib_meta)
{
	static __u8 frame[PKT_MAX];
	static struct fx_out out;
	struct pkt_spec arp = { .family = 0 };
	struct fx f;
	int fused, len;

	if (!fx_open(&f))
		return;
	if (!ASSERT_OK(fx_sh("%s", l3_fib_setup), "configure the kernel's FIB"))
		goto out;
	for (fused = 0; fused < 2; fused++) {
		if (!fx_chain(&f, "xsk", fused, true))
			break;
		xsk_fib_case(&f, "10.7.1.1", 4, BPF_FIB_LKUP_RET_SUCCESS,
			     f.ifindex[1]);
		xsk_fib_case(&f, "2001:db8:7::9", 6, BPF_FIB_LKUP_RET_SUCCESS,
			     f.ifindex[1]);
		xsk_fib_case(&f, "203.0.113.1", 4, BPF_FIB_LKUP_RET_BLACKHOLE, 0);
		xsk_fib_case(&f, "198.51.100.2", 4, BPF_FIB_LKUP_RET_NO_NEIGH, 0);
		/* Not IP: the kernel's, no lookup. */
		len = pkt_build(frame, sizeof(frame), &arp);
		if (ASSERT_OK(fx_run(&f, frame, len, &out), "ARP"))
			ASSERT_EQ(out.len, len, "ARP: no answer in front");
	}
	/* Without fib: no lookup, nothing in front. */
	if (fx_chain(&f, "xsk", false, false)) {
		struct pkt_spec s = { .family = 4, .dst = "10.7.1.1" };

		len = pkt_build(frame, sizeof(frame), &s);
		if (ASSERT_OK(fx_run(&f, frame, len, &out), "lpm"))
			ASSERT_EQ(out.len, len, "lpm: nothing in front");
	}
	if (ASSERT_OK(xnf_port_del(f.dp, f.ifindex[1]), "ut1 out of the devmap") &&
	    fx_chain(&f, "xsk", false, true))
		xsk_fib_case(&f, "10.7.1.1", 4, XNF_FIB_NOT_PORT, 0);
out:
	fx_sh("%s", l3_fib_cleanup);
	fx_close(&f);
}
