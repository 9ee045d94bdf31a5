// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * l2fwd unit tests: fixture tables of {description, input frame, miss
 * policy, expected XDP action and reason, expected output MACs, expected
 * egress ports}, each run through the tail-called and the fused chain:
 *   - "l2fwd" alone: FDB hit, hairpin, miss (flood / pass / drop),
 *     broadcast and multicast, non-IP and VLAN-tagged frames, and the
 *     cross-connect;
 *   - "l3fwd,l2fwd": the FDB moving a routed frame to the port of its next
 *     hop's MAC, a miss keeping l3fwd's port, l3fwd's exceptions ending the
 *     chain before l2fwd;
 *   - bad input for both NFs: every truncation of valid frames and IP
 *     headers that lie about their length.
 * Every case checks the XDP action, the whole output frame, the counters
 * of that frame (entry, l3fwd and l2fwd rows, one reason per pass or
 * drop) and then, in live mode (fx_run_live), the ports the frame really
 * left on: test_run alone cannot tell an FDB hit from a flood.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>

#include "fixture.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The FDB of these tests (fx_l2_table). */
/* clang-format off */
#define MAC_UT0 { 0x02, 0, 0, 0, 0x00, 0xfe } /* the router's port */
/* clang-format on */
#define MAC_ON_UT0  FX_MAC_ON_UT0
#define MAC_ON_UT1  FX_MAC_ON_UT1
#define MAC_ON_UT2  FX_MAC_ON_UT2
#define MAC_UNKNOWN FX_MAC_UNKNOWN
#define MAC_BCAST   FX_MAC_BCAST
#define MAC_MCAST4  FX_MAC_MCAST4
#define MAC_MCAST6  FX_MAC_MCAST6

static const __u8 mac_on_ut2[] = MAC_ON_UT2;
static const __u8 mac_unknown[] = MAC_UNKNOWN;
/* Next hops of the routes (fx_nh_mac). */
static const __u8 mac_nh1[] = { 0x02, 0, 0, 0, 0x01, 0x01 };
static const __u8 mac_nh2[] = { 0x02, 0, 0, 0, 0x02, 0x01 };
/* The ports' own MACs, as the sandbox sets them (checked in l2_setup). */
static const __u8 mac_ut1[] = { 0x02, 0, 0, 0, 0x01, 0xfe };
static const __u8 mac_ut2[] = { 0x02, 0, 0, 0, 0x02, 0xfe };
/* The cross-connect ut0 -> ut1 rewrites to these. */
static const __u8 xc_dmac[] = { 0x02, 0, 0, 0, 0x0c, 0x01 };
static const __u8 xc_smac[] = { 0x02, 0, 0, 0, 0x0c, 0x02 };

/* l2_miss of a case; zero is the default config (flood). */
enum { MISS_FLOOD = 0, MISS_PASS, MISS_DROP };

#define NR    (-1)	    /* an NF that never saw the frame */
#define P(n)  (1u << (n))   /* egress port n */
#define FLOOD (P(1) | P(2)) /* every port but the ingress ut0 */

struct l2_case {
	const char *desc;
	struct pkt_spec in;
	__u8 miss;	  /* MISS_* */
	bool xconnect;	  /* ut0 cross-connected to ut1 */
	int ret;	  /* XDP action */
	__u32 reason;	  /* of the pass or drop */
	__u32 egress;	  /* P(n): ports the frame leaves on */
	const __u8 *dmac; /* MACs expected on output, NULL: as sent */
	const __u8 *smac;
	bool routed; /* TTL / hop limit - 1 (IPv4 checksum redone) */
	int l3, l2;  /* verdicts of the l3fwd and l2fwd rows, NR:
				 * never ran; for "l2fwd" alone l2 is ret */
};

#define V4(...)	   .in = { .family = 4, __VA_ARGS__ }
#define V6(...)	   .in = { .family = 6, __VA_ARGS__ }
#define ARP(...)   .in = { .family = 0, __VA_ARGS__ }
#define FWD(ports) .ret = XDP_REDIRECT, .egress = (ports)
#define PASS(r)	   .ret = XDP_PASS, .reason = (r)
#define DROP(r)	   .ret = XDP_DROP, .reason = (r)
#define XC	   .xconnect = true, .dmac = xc_dmac, .smac = xc_smac

static bool l2_setup(struct fx *f)
{
	return ASSERT_MEM(f->mac[1], mac_ut1, 6, "ut1 MAC") &&
	       ASSERT_MEM(f->mac[2], mac_ut2, 6, "ut2 MAC") && fx_l2_table(f);
}

static const struct l2_case l2_cases[] = {
	/* FDB hits: the frame leaves unchanged on the MAC's port. */
	{ "v4 FDB hit on ut2", V4(.dmac = MAC_ON_UT2), FWD(P(2)) },
	{ "v4 FDB hit on ut1", V4(.dmac = MAC_ON_UT1), FWD(P(1)) },
	{ "v6 FDB hit on ut2", V6(.dmac = MAC_ON_UT2), FWD(P(2)) },
	{ "v4 FDB hit, TTL 1 (not routed: untouched)",
	  V4(.dmac = MAC_ON_UT2, .ttl = 1), FWD(P(2)) },
	{ "v4 FDB hit, TTL 0", V4(.dmac = MAC_ON_UT1, .ttl_zero = true),
	  FWD(P(1)) },
	{ "v4 FDB hit, miss drop config", V4(.dmac = MAC_ON_UT2),
	  .miss = MISS_DROP, FWD(P(2)) },
	{ "v4 FDB hit, options", V4(.dmac = MAC_ON_UT2, .ip_opts = 12),
	  FWD(P(2)) },
	{ "v4 FDB hit, later fragment",
	  V4(.dmac = MAC_ON_UT2, .frag_off = 0x0010), FWD(P(2)) },
	{ "v6 FDB hit, extension headers",
	  V6(.dmac = MAC_ON_UT1, .next_ext = 2,
	     .ext = { IPPROTO_HOPOPTS, IPPROTO_FRAGMENT }, .frame_len = 128),
	  FWD(P(1)) },
	{ "v4 FDB hit, 42 bytes", V4(.dmac = MAC_ON_UT2, .frame_len = 42),
	  FWD(P(2)) },
	{ "v4 FDB hit, 9000 bytes", V4(.dmac = MAC_ON_UT2, .frame_len = 9000),
	  FWD(P(2)) },
	{ "ARP to an FDB MAC", ARP(.dmac = MAC_ON_UT2), FWD(P(2)) },
	{ "ARP reply to an FDB MAC on ut1",
	  ARP(.dmac = MAC_ON_UT1, .smac = MAC_ON_UT2), FWD(P(1)) },
	{ "v4 one VLAN tag, FDB hit", V4(.dmac = MAC_ON_UT2, .nvlans = 1),
	  FWD(P(2)) },
	{ "v4 two VLAN tags, FDB hit", V4(.dmac = MAC_ON_UT1, .nvlans = 2),
	  FWD(P(1)) },
	{ "v6 one VLAN tag, FDB hit",
	  V6(.dmac = MAC_ON_UT2, .nvlans = 1, .frame_len = 80), FWD(P(2)) },
	{ "v4 three VLAN tags, FDB hit", V4(.dmac = MAC_ON_UT2, .nvlans = 3),
	  FWD(P(2)) },
	{ "ARP in a VLAN, FDB hit", ARP(.dmac = MAC_ON_UT2, .nvlans = 1),
	  FWD(P(2)) },
	/* The FDB puts the destination behind the port it came from. */
	{ "v4 FDB hit on the ingress port", V4(.dmac = MAC_ON_UT0),
	  DROP(XNF_R_HAIRPIN) },
	{ "v4 hairpin, miss pass config", V4(.dmac = MAC_ON_UT0),
	  .miss = MISS_PASS, DROP(XNF_R_HAIRPIN) },
	{ "ARP hairpin", ARP(.dmac = MAC_ON_UT0), DROP(XNF_R_HAIRPIN) },
	{ "VLAN hairpin", V6(.dmac = MAC_ON_UT0, .nvlans = 1, .frame_len = 80),
	  DROP(XNF_R_HAIRPIN) },
	/* Misses. */
	{ "v4 miss, flood", V4(.dmac = MAC_UNKNOWN), FWD(FLOOD) },
	{ "v4 miss, pass", V4(.dmac = MAC_UNKNOWN), .miss = MISS_PASS,
	  PASS(XNF_R_L2_MISS) },
	{ "v4 miss, drop", V4(.dmac = MAC_UNKNOWN), .miss = MISS_DROP,
	  DROP(XNF_R_L2_MISS) },
	{ "v6 miss, flood", V6(.dmac = MAC_UNKNOWN), FWD(FLOOD) },
	{ "v6 miss, drop", V6(.dmac = MAC_UNKNOWN), .miss = MISS_DROP,
	  DROP(XNF_R_L2_MISS) },
	{ "VLAN miss, flood", V4(.dmac = MAC_UNKNOWN, .nvlans = 2), FWD(FLOOD) },
	{ "VLAN miss, pass", V4(.dmac = MAC_UNKNOWN, .nvlans = 1),
	  .miss = MISS_PASS, PASS(XNF_R_L2_MISS) },
	/* Group addresses are misses even with an FDB entry. */
	{ "broadcast, flood", V4(.dmac = MAC_BCAST), FWD(FLOOD) },
	{ "broadcast, pass", V4(.dmac = MAC_BCAST), .miss = MISS_PASS,
	  PASS(XNF_R_L2_MISS) },
	{ "broadcast, drop", V4(.dmac = MAC_BCAST), .miss = MISS_DROP,
	  DROP(XNF_R_L2_MISS) },
	{ "ARP request (broadcast), flood", ARP(.dmac = MAC_BCAST), FWD(FLOOD) },
	{ "ARP request, pass", ARP(.dmac = MAC_BCAST), .miss = MISS_PASS,
	  PASS(XNF_R_L2_MISS) },
	{ "IPv4 multicast 01:00:5e, flood",
	  V4(.dmac = MAC_MCAST4, .dst = "224.0.0.251"), FWD(FLOOD) },
	{ "IPv4 multicast, pass", V4(.dmac = MAC_MCAST4), .miss = MISS_PASS,
	  PASS(XNF_R_L2_MISS) },
	{ "IPv4 multicast, drop", V4(.dmac = MAC_MCAST4), .miss = MISS_DROP,
	  DROP(XNF_R_L2_MISS) },
	{ "IPv6 multicast 33:33, flood",
	  V6(.dmac = MAC_MCAST6, .dst = "ff02::1"), FWD(FLOOD) },
	{ "IPv6 multicast, drop", V6(.dmac = MAC_MCAST6), .miss = MISS_DROP,
	  DROP(XNF_R_L2_MISS) },
	/* Cross-connect: ut0 -> ut1 with both MACs rewritten, whatever the
	 * FDB and the miss policy say. */
	{ "xconnect, FDB says ut2", V4(.dmac = MAC_ON_UT2), XC, FWD(P(1)) },
	{ "xconnect, FDB says hairpin", V4(.dmac = MAC_ON_UT0), XC, FWD(P(1)) },
	{ "xconnect, miss drop config", V4(.dmac = MAC_UNKNOWN),
	  .miss = MISS_DROP, XC, FWD(P(1)) },
	{ "xconnect, broadcast", V4(.dmac = MAC_BCAST), .miss = MISS_PASS, XC,
	  FWD(P(1)) },
	{ "xconnect, v6", V6(.dmac = MAC_MCAST6), XC, FWD(P(1)) },
	{ "xconnect, ARP", ARP(.dmac = MAC_BCAST), XC, FWD(P(1)) },
	{ "xconnect, VLAN", V4(.dmac = MAC_ON_UT1, .nvlans = 2), XC, FWD(P(1)) },
	{ "xconnect, TTL 1 (not routed: untouched)", V4(.ttl = 1), XC, FWD(P(1)) },
	{ "xconnect, 9000 bytes", V6(.frame_len = 9000), XC, FWD(P(1)) },
};

/* Rows of "l3fwd,l2fwd". */
#define ROUTED(p)                                             \
	.routed = true, .dmac = mac_nh##p, .smac = mac_ut##p, \
	.l3 = XDP_REDIRECT, .l2 = XDP_REDIRECT
/* 10.3.0.0/16: routed to ut1 via a next hop the FDB does not know. */
#define ROUTED_UNKNOWN                                        \
	.routed = true, .dmac = mac_unknown, .smac = mac_ut1, \
	.l3 = XDP_REDIRECT, .l2 = XDP_REDIRECT
#define L3_ONLY(r) .l3 = (r), .l2 = NR

static const struct l2_case l32_cases[] = {
	/* 198.51.100.0/24 -> ut1 via nh1, which the FDB has on ut2. */
	{ "v4 routed to ut1, next hop on ut2 by FDB", V4(.dmac = MAC_UT0),
	  ROUTED(1), FWD(P(2)) },
	{ "v6 routed to ut1, next hop on ut2 by FDB", V6(.dmac = MAC_UT0),
	  ROUTED(1), FWD(P(2)) },
	{ "v4 routed, FDB moves it, TTL 2", V4(.ttl = 2), ROUTED(1), FWD(P(2)) },
	{ "v4 routed, FDB moves it, 9000 bytes", V4(.frame_len = 9000),
	  ROUTED(1), FWD(P(2)) },
	/* 10.2.0.0/16 -> ut2 via nh2, which the FDB has on the ingress
	 * port: routing back is l3fwd's business, not a hairpin. */
	{ "v4 routed, next hop on the ingress port by FDB",
	  V4(.dst = "10.2.0.1", .dmac = MAC_UT0), ROUTED(2), FWD(P(2)) },
	/* 10.3.0.0/16 -> ut1 via a MAC the FDB does not know: kept on
	 * l3fwd's port, never flooded, whatever the miss policy. */
	{ "v4 routed, FDB miss keeps l3fwd's port", V4(.dst = "10.3.0.1"),
	  ROUTED_UNKNOWN, FWD(P(1)) },
	{ "v4 routed, FDB miss, miss drop config", V4(.dst = "10.3.255.255"),
	  .miss = MISS_DROP, ROUTED_UNKNOWN, FWD(P(1)) },
	{ "v4 routed, FDB miss, miss pass config", V4(.dst = "10.3.0.1", .ttl = 9),
	  .miss = MISS_PASS, ROUTED_UNKNOWN, FWD(P(1)) },
	/* The cross-connect is a port property: it wins over routing. */
	{ "v4 routed, cross-connect rewrites", V4(), XC, .routed = true,
	  .l3 = XDP_REDIRECT, .l2 = XDP_REDIRECT, FWD(P(1)) },
	/* l3fwd's exceptions end the chain: l2fwd never runs, even where
	 * its FDB knows the destination MAC. */
	{ "v4 no route", V4(.dst = "192.0.2.99", .dmac = MAC_ON_UT2),
	  L3_ONLY(XDP_PASS), PASS(XNF_R_NO_ROUTE) },
	{ "v6 no route", V6(.dst = "3fff::1", .dmac = MAC_ON_UT2),
	  L3_ONLY(XDP_PASS), PASS(XNF_R_NO_ROUTE) },
	{ "v4 no route, miss flood would have sent it",
	  V4(.dst = "192.0.2.99", .dmac = MAC_UNKNOWN), L3_ONLY(XDP_PASS),
	  PASS(XNF_R_NO_ROUTE) },
	{ "v4 TTL 1", V4(.ttl = 1, .dmac = MAC_ON_UT2), L3_ONLY(XDP_PASS),
	  PASS(XNF_R_TTL) },
	{ "v6 hop limit 1", V6(.ttl = 1, .dmac = MAC_ON_UT2), L3_ONLY(XDP_PASS),
	  PASS(XNF_R_TTL) },
	{ "v4 blackhole", V4(.dst = "203.0.113.1", .dmac = MAC_ON_UT2),
	  L3_ONLY(XDP_DROP), DROP(XNF_R_BLACKHOLE) },
	{ "ARP is the kernel's on a router", ARP(.dmac = MAC_ON_UT2),
	  L3_ONLY(XDP_PASS), PASS(XNF_R_NOT_IP) },
	{ "broadcast ARP", ARP(.dmac = MAC_BCAST), L3_ONLY(XDP_PASS),
	  PASS(XNF_R_NOT_IP) },
	{ "VLAN-tagged IPv4", V4(.dmac = MAC_ON_UT2, .nvlans = 1),
	  L3_ONLY(XDP_PASS), PASS(XNF_R_VLAN) },
	{ "xconnect, no route: l3fwd decides first", V4(.dst = "192.0.2.99"),
	  .xconnect = true, L3_ONLY(XDP_PASS), PASS(XNF_R_NO_ROUTE) },
};

static __u8 l2_in[PKT_MAX], l2_want[PKT_MAX];

/* Frames live mode can carry: it sends them for real, onto veths with
 * MTU 1500, and refuses multi-buffer frames. */
#define LIVE_MAX (ETH_HLEN + 4 + 1500)

static bool l2_case_run(struct fx *f, struct fx_cap *cap, const struct l2_case *c,
			bool l3, const char *what, struct fx_out *out)
{
	static const __u32 miss[] = {
		[MISS_FLOOD] = XNF_ACT_FLOOD,
		[MISS_PASS] = XNF_ACT_PASS,
		[MISS_DROP] = XNF_ACT_DROP,
	};
	struct xnf_xconnect xc = { .ifindex = f->ifindex[1] };
	struct xnf_stats st;
	int len, err;
	size_t ttl;
	bool ok;

	len = pkt_build(l2_in, sizeof(l2_in), &c->in);
	if (!ASSERT_GE(len, ETH_HLEN, what))
		return false;
	memcpy(xc.dmac, xc_dmac, 6);
	memcpy(xc.smac, xc_smac, 6);
	if (!fx_set_cfg(f, XNF_ACT_PASS, XNF_ACT_PASS, XNF_ACT_PASS,
			miss[c->miss]))
		return false;
	err = c->xconnect ? xnf_xconnect_set(f->dp, f->ifindex[0], &xc) :
			    xnf_xconnect_del(f->dp, f->ifindex[0]);
	if (!ASSERT_OK(err == -ENOENT ? 0 : err, "cross-connect ut0 or not"))
		return false;
	if (!fx_stats_reset(f))
		return false;
	if (!ASSERT_OK(fx_run(f, l2_in, len, out), what) || !fx_stats(f, &st))
		return false;

	/* A wrong verdict makes every later check fail too: say it once. */
	if (!ASSERT_NEQ(out->ret, XDP_ABORTED, what) ||
	    !ASSERT_EQ(out->ret, c->ret, what))
		return false;
	memcpy(l2_want, l2_in, len);
	if (c->dmac)
		memcpy(l2_want, c->dmac, 6);
	if (c->smac)
		memcpy(l2_want + 6, c->smac, 6);
	ttl = pkt_ttl_off(l2_in, len);
	if (c->routed && ASSERT_TRUE(ttl, what)) {
		l2_want[ttl]--;
		pkt_ipv4_csum_set(l2_want, len);
	}
	if (!ASSERT_EQ(out->len, len, what))
		return false;
	ok = ASSERT_MEM(out->data, l2_want, ETH_ALEN, what);
	ok &= ASSERT_MEM(out->data + ETH_ALEN, l2_want + ETH_ALEN, ETH_ALEN,
			 what);
	if (ttl)
		ok &= ASSERT_EQ(out->data[ttl], l2_want[ttl], what);
	if (pkt_ipv4_csum_calc(l2_in, len) != 0xffff)
		ok &= ASSERT_TRUE(pkt_ipv4_csum_ok(out->data, len), what);
	if (ttl && pkt_l4_csum_ok(l2_in, len))
		ok &= ASSERT_TRUE(pkt_l4_csum_ok(out->data, len), what);
	ok &= ASSERT_MEM(out->data, l2_want, len, what);
	ok &= fx_expect_entry(&st, c->ret, c->reason, what);
	ok &= fx_expect_nf(&st, XNF_NF_L3FWD, l3 ? c->l3 : NR, what);
	ok &= fx_expect_nf(&st, XNF_NF_L2FWD, l3 ? c->l2 : c->ret, what);

	/* Where it really went. A passed frame is left out: live mode would
	 * hand it to the namespace's stack. */
	if (len <= LIVE_MAX && c->ret != XDP_PASS) {
		__u32 got;

		if (!ASSERT_OK(fx_run_live(f, l2_in, len), what))
			return false;
		got = fx_cap_ports(cap, l2_want, len, c->egress);
		ok &= xnf_test_check(got == c->egress, __FILE__, __LINE__, what,
				     "left on ports 0x%x, want 0x%x", got,
				     c->egress);
	}
	return ok;
}

/* Runs a table through @chain, tail-called and fused; the fused chain
 * must give what the tail-called one gave, byte for byte. */
static void l2_table(struct fx *f, const char *chain,
		     const struct l2_case *cases, size_t n)
{
	struct fx_out *tail = calloc(n, sizeof(*tail)), out;
	bool l3 = strstr(chain, "l3fwd");
	struct fx_cap cap;
	char what[192];
	size_t i;
	int fused;

	if (!ASSERT_TRUE(tail, "calloc"))
		return;
	if (!fx_cap_open(&cap))
		goto out;
	for (fused = 0; fused <= 1; fused++) {
		if (!fx_chain(f, chain, fused, false))
			break;
		for (i = 0; i < n; i++) {
			snprintf(what, sizeof(what), "%s [%s%s]", cases[i].desc,
				 chain, fused ? ", fused" : "");
			if (!l2_case_run(f, &cap, &cases[i], l3, what, &out))
				continue;
			if (!fused) {
				tail[i] = out;
				continue;
			}
			fx_same_as_tail(&out, &tail[i], what);
		}
	}
	fx_cap_close(&cap);
out:
	free(tail);
}

TEST(l2fwd_table)
{
	struct fx f;

	if (!fx_open(&f))
		return;
	if (l2_setup(&f))
		l2_table(&f, "l2fwd", l2_cases, ARRAY_SIZE(l2_cases));
	fx_close(&f);
}

TEST(l2fwd_after_l3fwd)
{
	struct fx f;

	if (!fx_open(&f))
		return;
	/* l3fwd checks the MTU of the port its route chose: jumbo, for the
	 * 9000-byte case. */
	if (ASSERT_OK(fx_sh("ip link set ut1 mtu 9000"), "jumbo MTU on ut1") &&
	    l2_setup(&f))
		l2_table(&f, "l3fwd,l2fwd", l32_cases, ARRAY_SIZE(l32_cases));
	fx_sh("ip link set ut1 mtu 1500");
	fx_close(&f);
}

/*
 * Bad input. A frame the entry cannot parse is dropped there as malformed,
 * before any NF: counted once, under that reason, never forwarded, bytes
 * untouched. Every truncation of valid frames, and headers that lie.
 */
struct bad_case {
	const char *desc;
	struct pkt_spec in;
	void (*edit)(__u8 *frame, int len, int arg);
	int arg;
};

/* IPv4 total length or IPv6 payload length := @arg (IPv4 checksum kept
 * right, so only the length is wrong). */
static void bad_ip_len(__u8 *p, int len, int arg)
{
	size_t l3 = pkt_l3_off(p);
	__u16 v = htons(arg);

	if ((p[l3] >> 4) == 4) {
		memcpy(p + l3 + 2, &v, 2);
		pkt_ipv4_csum_set(p, len);
	} else {
		memcpy(p + l3 + 4, &v, 2);
	}
}

/* IPv4 header length := @arg words (checksum kept right). */
static void bad_ihl(__u8 *p, int len, int arg)
{
	size_t l3 = pkt_l3_off(p);

	p[l3] = (p[l3] & 0xf0) | arg;
	pkt_ipv4_csum_set(p, len);
}

/* IP version := @arg. */
static void bad_version(__u8 *p, int len, int arg)
{
	size_t l3 = pkt_l3_off(p);

	p[l3] = (p[l3] & 0x0f) | arg << 4;
	if (pkt_ipv4_csum_calc(p, len) != 0xffff)
		pkt_ipv4_csum_set(p, len);
}

/* Length field of the first IPv6 extension header := @arg. */
static void bad_ext_len(__u8 *p, int len, int arg)
{
	p[pkt_l3_off(p) + 40 + 1] = arg;
}

static const struct bad_case bad_cases[] = {
	{ "v4 ihl 4", { .family = 4, .ihl = 4 } },
	{ "v4 ihl 0", { .family = 4 }, bad_ihl, 0 },
	{ "v4 ihl 1", { .family = 4 }, bad_ihl, 1 },
	{ "v4 ihl 15, total length 50", { .family = 4, .ihl = 15 } },
	{ "v4 ihl 8, total length 28",
	  { .family = 4, .ihl = 8, .frame_len = 42 } },
	{ "v4 ihl 15 in a 42-byte frame",
	  { .family = 4, .ihl = 15, .frame_len = 42 } },
	{ "v4 total length one beyond the frame", { .family = 4 }, bad_ip_len, 51 },
	{ "v4 total length 65535", { .family = 4 }, bad_ip_len, 65535 },
	{ "v4 total length beyond a 9000-byte frame",
	  { .family = 4, .frame_len = 9000 },
	  bad_ip_len,
	  9000 - 14 + 1 },
	{ "v4 total length beyond, with options",
	  { .family = 4, .ip_opts = 40, .frame_len = 128 },
	  bad_ip_len,
	  128 },
	{ "v4 total length 19 (< header)", { .family = 4 }, bad_ip_len, 19 },
	{ "v4 total length 0", { .family = 4 }, bad_ip_len, 0 },
	{ "v4 total length 20 < ihl 6",
	  { .family = 4, .ip_opts = 4 },
	  bad_ip_len,
	  20 },
	{ "v4 version 6 in an IPv4 frame", { .family = 4 }, bad_version, 6 },
	{ "v4 version 0", { .family = 4 }, bad_version, 0 },
	{ "v6 version 4 in an IPv6 frame", { .family = 6 }, bad_version, 4 },
	{ "v6 payload length one beyond the frame", { .family = 6 }, bad_ip_len, 11 },
	{ "v6 payload length 65535", { .family = 6 }, bad_ip_len, 65535 },
	{ "v6 payload length beyond a 9000-byte frame",
	  { .family = 6, .frame_len = 9000 },
	  bad_ip_len,
	  9000 - 54 + 1 },
	{ "v6 hop-by-hop beyond the payload",
	  { .family = 6, .next_ext = 1, .ext = { IPPROTO_HOPOPTS }, .frame_len = 96 },
	  bad_ext_len,
	  5 },
	{ "v6 hop-by-hop cut by payload length",
	  { .family = 6, .next_ext = 1, .ext = { IPPROTO_HOPOPTS }, .frame_len = 96 },
	  bad_ip_len,
	  4 },
	{ "v6 routing header beyond the payload",
	  { .family = 6, .next_ext = 1, .ext = { IPPROTO_ROUTING }, .frame_len = 96 },
	  bad_ext_len,
	  255 },
	{ "v4 VLAN, total length beyond",
	  { .family = 4, .nvlans = 1 },
	  bad_ip_len,
	  47 },
	{ "v6 two VLAN tags, payload beyond",
	  { .family = 6, .nvlans = 2, .frame_len = 80 },
	  bad_ip_len,
	  100 },
};

/* Frames every truncation of which is malformed. */
static const struct pkt_spec bad_trunc[] = {
	{ .family = 4 },
	{ .family = 6 },
	{ .family = 4, .nvlans = 1 },
	{ .family = 4, .proto = IPPROTO_TCP, .ip_opts = 8, .frame_len = 74 },
	{ .family = 6,
	  .next_ext = 1,
	  .ext = { IPPROTO_FRAGMENT },
	  .frag_off = 1,
	  .frame_len = 70 },
};

static const char *const bad_chains[] = { "l2fwd", "l3fwd", "l3fwd,l2fwd" };

/* One bad frame: dropped as malformed by the entry, no NF ran. A frame
 * shorter than an Ethernet header never reaches the program: the kernel
 * refuses it (EINVAL) and nothing is counted. */
static bool bad_run(struct fx *f, const __u8 *frame, __u32 len, const char *what)
{
	struct xnf_stats st;
	struct fx_out out;
	int err;
	bool ok;

	if (!fx_stats_reset(f))
		return false;
	err = fx_run(f, frame, len, &out);
	if (!fx_stats(f, &st))
		return false;
	if (len < ETH_HLEN) {
		ok = ASSERT_EQ(err, -EINVAL, what);
		ok &= ASSERT_EQ(st.nf[XNF_NF_ENTRY].in, 0, what);
		return ok;
	}
	if (!ASSERT_OK(err, what))
		return false;
	ok = ASSERT_NEQ(out.ret, XDP_ABORTED, what);
	ok &= ASSERT_EQ(out.ret, XDP_DROP, what);
	if (ASSERT_EQ(out.len, len, what))
		ok &= ASSERT_MEM(out.data, frame, len, what);
	ok &= fx_expect_entry(&st, XDP_DROP, XNF_R_MALFORMED, what);
	ok &= fx_expect_nf(&st, XNF_NF_L3FWD, NR, what);
	ok &= fx_expect_nf(&st, XNF_NF_L2FWD, NR, what);
	return ok;
}

TEST(l2fwd_l3fwd_bad_input)
{
	static __u8 frame[PKT_MAX];
	char what[192];
	size_t ch, i;
	int fused, len, cut;
	struct fx f;

	if (!fx_open(&f))
		return;
	/* Everything would be forwarded if it were well formed. */
	if (!l2_setup(&f))
		goto out;
	for (ch = 0; ch < ARRAY_SIZE(bad_chains); ch++) {
		for (fused = 0; fused <= 1; fused++) {
			if (!fx_chain(&f, bad_chains[ch], fused, false))
				goto out;
			for (i = 0; i < ARRAY_SIZE(bad_trunc); i++) {
				struct pkt_spec s = bad_trunc[i];

				memcpy(s.dmac, mac_on_ut2, 6);
				len = pkt_build(frame, sizeof(frame), &s);
				if (!ASSERT_GE(len, ETH_HLEN, "build"))
					continue;
				for (cut = 0; cut < len; cut++) {
					snprintf(what, sizeof(what),
						 "frame %zu cut to %d of %d bytes [%s%s]",
						 i, cut, len, bad_chains[ch],
						 fused ? ", fused" : "");
					if (!bad_run(&f, frame, cut, what))
						break;
				}
			}
			for (i = 0; i < ARRAY_SIZE(bad_cases); i++) {
				const struct bad_case *c = &bad_cases[i];
				struct pkt_spec s = c->in;

				snprintf(what, sizeof(what), "%s [%s%s]", c->desc,
					 bad_chains[ch], fused ? ", fused" : "");
				memcpy(s.dmac, mac_on_ut2, 6);
				len = pkt_build(frame, sizeof(frame), &s);
				if (!ASSERT_GE(len, ETH_HLEN, what))
					continue;
				if (c->edit)
					c->edit(frame, len, c->arg);
				bad_run(&f, frame, len, what);
			}
		}
	}
out:
	fx_close(&f);
}
