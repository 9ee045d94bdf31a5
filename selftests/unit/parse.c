// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bad input for the one parser (bpf/parse.bpf.h) and every NF behind it.
 *
 * The cases_*() functions build frames, every one tagged with what kind
 * of packet it is (malformed, forwardable, denied by the firewall, TTL
 * expiring, tagged, not IP), and parse_bad_input runs the whole list
 * through each single-NF chain and through "firewall,l3fwd,l2fwd",
 * tail-called and fused (each chain loaded once: loading is the slow
 * part). Every run starts from zeroed counters. The expected action,
 * reason, per-NF rows and output bytes of a kind in a chain are spelled
 * out in expect[][] below, derived from the NF headers:
 *
 *   entry     a frame the parser rejects is dropped as malformed before
 *             any NF: every NF row stays 0.
 *   firewall  no rule matches: the default verdict (pass, reason none);
 *             non-IP frames pass untouched.
 *   l3fwd     routed: redirect with TTL / hop limit one lower, IPv4
 *             checksum equal to one computed from scratch, MACs of the
 *             route; TTL <= 1: pass (ttl); VLAN-tagged: pass (vlan);
 *             not IP: pass (not_ip); a wrong IPv4 header checksum: drop
 *             (bad_csum); a martian address: drop (martian). Only the
 *             forwarding NF applies a router's receive checks: the
 *             firewall, l2fwd and xsk pass such packets on as they are.
 *   l2fwd     destination MAC not in the FDB: flood (redirect).
 *   xsk       no socket on the queue: the fallback, pass (xsk); not IP:
 *             never offered to the socket, pass (none).
 *
 * What the parser extracted (ports, L4 offset through IPv4 options and
 * IPv6 extension headers, fragment flags, ICMP) is observed through the
 * firewall: rules drop UDP and TCP destination port PROBE_PORT, so a frame
 * carrying that port is dropped exactly when the parser found its L4 header
 * where it really is. A non-first fragment carries the port where an L4
 * header would be and must not match; so must a UDP header cut short by
 * the IP total length. Behind more IPv6 extension headers than the parser
 * walks the protocol is unknown, and the firewall denies the packet
 * whatever its ports (firewall.bpf.h). Rules on DENIED_SRC4/6 check that
 * addresses are read where the parser found the IP header (behind VLAN
 * tags). The ICMP type and code are not classified by the firewall; the
 * rules on source ports 0x0800 and 0x8000 (the first bytes of an ICMP /
 * ICMPv6 echo request read as a port) check that they are never taken
 * for ports.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf.h>

#include "fixture.h"

#define PROBE_PORT  5353
#define DENIED_SRC4 "192.0.2.99"
#define DENIED_SRC6 "2001:db8:1::99"

enum kind {
	K_MALFORMED,	/* rejected by the parser */
	K_FWD,		/* IPv4/IPv6, untagged, TTL > 1, routed, allowed */
	K_FW_DROP,	/* like K_FWD, but the firewall denies it */
	K_TTL,		/* TTL / hop limit 0 or 1 */
	K_VLAN,		/* tagged IPv4/IPv6 */
	K_VLAN_FW_DROP, /* tagged, and a firewall rule drops it */
	K_NOT_IP,	/* ARP, LLDP, a third VLAN tag */
	K_BAD_CSUM,	/* like K_FWD, but the IPv4 header checksum is wrong */
	K_MARTIAN,	/* like K_FWD, but from or to a martian address */
	__K_MAX
};

static const char *const kind_names[__K_MAX] = {
	"malformed",	"forward", "fw-drop",  "ttl",	  "vlan",
	"vlan-fw-drop", "not-ip",  "bad-csum", "martian",
};

/* The chains every case runs through (tail-called and fused). */
#define NCHAINS 5
static const struct {
	const char *text;
	__u32 len;
	__u32 nf[3];
} chains[NCHAINS] = {
	{ "firewall", 1, { XNF_NF_FIREWALL } },
	{ "l3fwd", 1, { XNF_NF_L3FWD } },
	{ "l2fwd", 1, { XNF_NF_L2FWD } },
	{ "xsk", 1, { XNF_NF_XSK } },
	{ "firewall,l3fwd,l2fwd",
	  3,
	  { XNF_NF_FIREWALL, XNF_NF_L3FWD, XNF_NF_L2FWD } },
};

/*
 * What a kind of frame gets from a chain: the XDP action, the reason
 * counted (for pass and drop), the verdict each NF of the chain counts in
 * its row ('P'ass, 'D'rop, 'R'edirect, '-' not reached), and whether l3fwd
 * forwarded it (MACs, TTL and checksum rewritten; otherwise the output
 * bytes are the input bytes).
 */
struct expect {
	int action;
	__u32 reason;
	const char *rows;
	bool routed;
};

/* clang-format off */
#define DROP(r, rows) { XDP_DROP, r, rows, false }
#define PASS(r, rows) { XDP_PASS, r, rows, false }
#define FLOOD(rows) { XDP_REDIRECT, 0, rows, false }
#define ROUTED(rows) { XDP_REDIRECT, 0, rows, true }
/* clang-format on */

static const struct expect expect[__K_MAX][NCHAINS] = {
	/*                firewall               l3fwd
	 *                l2fwd                  xsk
	 *                firewall,l3fwd,l2fwd */
	[K_MALFORMED] = { DROP(XNF_R_MALFORMED, "-"), DROP(XNF_R_MALFORMED, "-"),
			  DROP(XNF_R_MALFORMED, "-"), DROP(XNF_R_MALFORMED, "-"),
			  DROP(XNF_R_MALFORMED, "---") },
	[K_FWD] = { PASS(XNF_R_NONE, "P"), ROUTED("R"), FLOOD("R"),
		    PASS(XNF_R_XSK, "R"), ROUTED("PRR") },
	[K_FW_DROP] = { DROP(XNF_R_FW_DENY, "D"), ROUTED("R"), FLOOD("R"),
			PASS(XNF_R_XSK, "R"), DROP(XNF_R_FW_DENY, "D--") },
	[K_TTL] = { PASS(XNF_R_NONE, "P"), PASS(XNF_R_TTL, "P"), FLOOD("R"),
		    PASS(XNF_R_XSK, "R"), PASS(XNF_R_TTL, "PP-") },
	[K_VLAN] = { PASS(XNF_R_NONE, "P"), PASS(XNF_R_VLAN, "P"), FLOOD("R"),
		     PASS(XNF_R_XSK, "R"), PASS(XNF_R_VLAN, "PP-") },
	[K_VLAN_FW_DROP] = { DROP(XNF_R_FW_DENY, "D"), PASS(XNF_R_VLAN, "P"),
			     FLOOD("R"), PASS(XNF_R_XSK, "R"),
			     DROP(XNF_R_FW_DENY, "D--") },
	[K_NOT_IP] = { PASS(XNF_R_NONE, "P"), PASS(XNF_R_NOT_IP, "P"), FLOOD("R"),
		       PASS(XNF_R_NONE, "P"), PASS(XNF_R_NOT_IP, "PP-") },
	[K_BAD_CSUM] = { PASS(XNF_R_NONE, "P"), DROP(XNF_R_BAD_CSUM, "D"),
			 FLOOD("R"), PASS(XNF_R_XSK, "R"),
			 DROP(XNF_R_BAD_CSUM, "PD-") },
	[K_MARTIAN] = { PASS(XNF_R_NONE, "P"), DROP(XNF_R_MARTIAN, "D"),
			FLOOD("R"), PASS(XNF_R_XSK, "R"),
			DROP(XNF_R_MARTIAN, "PD-") },
};

/* Drop what the parser must have read right; see the top of the file. */
static const struct xnf_fw_rule parse_rules[] = {
	{ .prio = 10,
	  .flags = XNF_FW_F_PROTO | XNF_FW_F_DPORT,
	  .action = XNF_FW_DROP,
	  .proto = IPPROTO_UDP,
	  .dport_lo = PROBE_PORT,
	  .dport_hi = PROBE_PORT },
	{ .prio = 20,
	  .flags = XNF_FW_F_PROTO | XNF_FW_F_DPORT,
	  .action = XNF_FW_DROP,
	  .proto = IPPROTO_TCP,
	  .dport_lo = PROBE_PORT,
	  .dport_hi = PROBE_PORT },
	{ .prio = 30,
	  .flags = XNF_FW_F_SPORT,
	  .action = XNF_FW_DROP,
	  .sport_lo = 0x0800,
	  .sport_hi = 0x0800 },
	{ .prio = 40,
	  .flags = XNF_FW_F_SPORT,
	  .action = XNF_FW_DROP,
	  .sport_lo = 0x8000,
	  .sport_hi = 0x8000 },
	/* Addresses are read from the IP header at the parsed L3 offset. */
	{ .prio = 50,
	  .flags = XNF_FW_F_SRC,
	  .action = XNF_FW_DROP,
	  .family = XNF_AF_INET,
	  .src_len = 32,
	  .src = { 192, 0, 2, 99 } },
	{ .prio = 60,
	  .flags = XNF_FW_F_SRC,
	  .action = XNF_FW_DROP,
	  .family = XNF_AF_INET6,
	  .src_len = 128,
	  .src = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 0x99 } },
};

struct pcase {
	char name[64];
	__u8 *frame;
	__u32 len;
	enum kind kind;
};

struct pcases {
	struct pcase *c;
	int n, cap;
};

static void __attribute__((format(printf, 5, 6)))
add(struct pcases *l, enum kind kind, const void *frame, int len,
    const char *fmt, ...)
{
	struct pcase *c;
	va_list ap;

	if (!ASSERT_GE(len, 0, fmt))
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->c = realloc(l->c, l->cap * sizeof(*l->c));
		if (!ASSERT_TRUE(l->c, "realloc"))
			exit(1);
	}
	c = &l->c[l->n++];
	va_start(ap, fmt);
	vsnprintf(c->name, sizeof(c->name), fmt, ap);
	va_end(ap);
	c->kind = kind;
	c->len = len;
	c->frame = malloc(len ?: 1);
	if (!ASSERT_TRUE(c->frame, "malloc"))
		exit(1);
	memcpy(c->frame, frame, len);
}

static void cases_free(struct pcases *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		free(l->c[i].frame);
	free(l->c);
	memset(l, 0, sizeof(*l));
}

static struct iphdr *ip4(void *frame)
{
	return (struct iphdr *)((__u8 *)frame + pkt_l3_off(frame));
}

static struct ipv6hdr *ip6(void *frame)
{
	return (struct ipv6hdr *)((__u8 *)frame + pkt_l3_off(frame));
}

/* Recomputes the IPv4 header checksum over @hlen bytes after a patch, so
 * that only the patched field is wrong. */
static void ip4_csum(void *frame, size_t hlen)
{
	struct iphdr *iph = ip4(frame);

	iph->check = 0;
	iph->check = pkt_csum(iph, hlen, 0);
}

/* Writes ports at @off, e.g. where a non-first fragment has no L4 header. */
static void put_ports(void *frame, size_t off, __u16 sport, __u16 dport)
{
	__u8 *p = frame;

	*(__be16 *)(p + off) = htons(sport);
	*(__be16 *)(p + off + 2) = htons(dport);
}

/* The frame l3fwd makes of @in when it routes it to port 1. */
static void routed_frame(const struct fx *f, const __u8 *in, __u32 len, __u8 *want)
{
	memcpy(want, in, len);
	fx_nh_mac(1, want);
	memcpy(want + 6, f->mac[1], 6);
	if (want[12] == 0x08 && want[13] == 0x00) {
		struct iphdr *iph = ip4(want);

		iph->ttl--;
		ip4_csum(want, iph->ihl * 4);
	} else {
		ip6(want)->hop_limit--;
	}
}

static bool row_ok(const struct xnf_nf_counters *c, char v, const char *what)
{
	if (v == '-')
		return ASSERT_EQ(c->in, 0, what);
	return ASSERT_EQ(c->in, 1, what) && ASSERT_EQ(c->pass, v == 'P', what) &&
	       ASSERT_EQ(c->drop, v == 'D', what) &&
	       ASSERT_EQ(c->redirect, v == 'R', what);
}

/* Runs one case through the loaded chain @ci and checks everything. */
static bool check_case(struct fx *f, int ci, bool fused, const struct pcase *c)
{
	const struct expect *e = &expect[c->kind][ci];
	const struct xnf_nf_counters *entry;
	static __u8 want[PKT_MAX];
	static struct fx_out out;
	struct xnf_stats st;
	char what[160];
	__u32 i;
	int err;

	snprintf(what, sizeof(what), "%s%s: %s (%s)", chains[ci].text,
		 fused ? " fused" : "", c->name, kind_names[c->kind]);
	if (!fx_stats_reset(f))
		return false;
	err = fx_run(f, c->frame, c->len, &out);
	/* BPF_PROG_TEST_RUN refuses anything shorter than an Ethernet
	 * header (bpf_test_init()); a driver never hands one to XDP. */
	if (c->len < ETH_HLEN && err == -EINVAL)
		return true;
	if (!ASSERT_OK(err, what) || !fx_stats(f, &st))
		return false;
	entry = &st.nf[XNF_NF_ENTRY];
	if (!ASSERT_NEQ(out.ret, XDP_ABORTED, what) ||
	    !ASSERT_EQ(out.ret, e->action, what) ||
	    !fx_stats_consistent(&st, what) || !ASSERT_EQ(entry->in, 1, what) ||
	    !ASSERT_EQ(entry->pass, e->action == XDP_PASS, what) ||
	    !ASSERT_EQ(entry->drop, e->action == XDP_DROP, what) ||
	    !ASSERT_EQ(entry->redirect, e->action == XDP_REDIRECT, what))
		goto fail;
	if (e->action == XDP_DROP && !ASSERT_EQ(st.drop[e->reason], 1, what))
		goto fail;
	if (e->action == XDP_PASS && !ASSERT_EQ(st.pass[e->reason], 1, what))
		goto fail;
	for (i = 0; i < __XNF_NF_MAX; i++) {
		const char *pos = NULL;
		__u32 j;

		if (i == XNF_NF_ENTRY)
			continue;
		for (j = 0; j < chains[ci].len; j++)
			if (chains[ci].nf[j] == i)
				pos = &e->rows[j];
		if (!row_ok(&st.nf[i], pos ? *pos : '-', what))
			goto fail;
	}

	if (!ASSERT_EQ(out.len, c->len, what))
		goto fail;
	if (e->routed) {
		routed_frame(f, c->frame, c->len, want);
		if (want[12] == 0x08 && want[13] == 0x00) {
			if (!ASSERT_EQ(ip4(out.data)->ttl,
				       ip4(c->frame)->ttl - 1, what) ||
			    !ASSERT_TRUE(pkt_ipv4_csum_ok(out.data, out.len),
					 what))
				goto fail;
		} else if (!ASSERT_EQ(ip6(out.data)->hop_limit,
				      ip6(c->frame)->hop_limit - 1, what)) {
			goto fail;
		}
	} else {
		memcpy(want, c->frame, c->len);
	}
	if (!ASSERT_MEM(out.data, want, c->len, what))
		goto fail;
	return true;
fail:
	fx_dump(&st);
	return false;
}

/* Runs every case through every chain, tail-called and fused. */
static void run_cases(struct pcases *l)
{
	int ci, i, fails = 0;
	struct fx f;
	int fused;

	if (!fx_open(&f))
		goto out;
	/* The egress port takes the 9000-byte frames (l3fwd checks its MTU). */
	if (!ASSERT_OK(fx_sh("ip link set ut1 mtu 9000"), "jumbo MTU on ut1") ||
	    !fx_route4(&f, "198.51.100.0/24", 1, XNF_RT_UNICAST) ||
	    !fx_route6(&f, "2001:db8:2::/64", 1, XNF_RT_UNICAST) ||
	    !fx_fw_load(&f, parse_rules,
			sizeof(parse_rules) / sizeof(parse_rules[0]),
			XNF_FW_ALLOW))
		goto out_close;
	for (ci = 0; ci < NCHAINS; ci++) {
		for (fused = 0; fused < 2; fused++) {
			if (!fx_chain(&f, chains[ci].text, fused, false))
				continue;
			for (i = 0; i < l->n; i++) {
				if (check_case(&f, ci, fused, &l->c[i]))
					continue;
				/* One systematic fault fails every case. */
				if (++fails == 20) {
					ASSERT_TRUE(false,
						    "20 cases failed, giving up");
					goto out_close;
				}
			}
		}
	}
out_close:
	fx_sh("ip link set ut1 mtu 1500");
	fx_close(&f);
out:
	cases_free(l);
}

/* Every truncation of valid frames; their total length covers the whole
 * frame, so any cut is inconsistent. */
static void cases_truncated(struct pcases *l)
{
	static const struct {
		const char *name;
		struct pkt_spec s;
		enum kind kind;
	} base[] = {
		{ "ipv4/udp", { .family = 4 }, K_FWD },
		{ "ipv4/tcp", { .family = 4, .proto = IPPROTO_TCP }, K_FWD },
		{ "ipv6/udp", { .family = 6 }, K_FWD },
		{ "2 vlans ipv4/udp", { .family = 4, .nvlans = 2 }, K_VLAN },
	};
	static const struct pkt_ext6 ext[] = {
		{ IPPROTO_HOPOPTS, 0 },	    { IPPROTO_ROUTING, 2 },
		{ IPPROTO_FRAGMENT, 0, 1 }, { IPPROTO_DSTOPTS, 1 },
		{ IPPROTO_AH, 4 },
	};
	struct pkt_spec s6 = { .frame_len = 160 };
	__u8 buf[PKT_MAX];
	size_t b;
	int len, n;

	for (b = 0; b < sizeof(base) / sizeof(base[0]); b++) {
		len = pkt_build(buf, sizeof(buf), &base[b].s);
		add(l, base[b].kind, buf, len, "%s whole", base[b].name);
		for (n = 0; n < len; n++)
			add(l, K_MALFORMED, buf, n, "%s cut to %d",
			    base[b].name, n);
	}
	len = pkt_build_ext6(buf, sizeof(buf), &s6, ext, 5);
	add(l, K_FWD, buf, len, "ipv6 ext whole");
	for (n = 0; n < len; n++)
		add(l, K_MALFORMED, buf, n, "ipv6 ext cut to %d", n);
}

/* What l3fwd checks and the parser does not: the IPv4 header checksum,
 * with and without options, and martian addresses. */
static void cases_rx(struct pcases *l)
{
	static const struct {
		const char *name;
		enum kind kind;
		struct pkt_spec s;
	} rx[] = {
		{ "checksum + 1",
		  K_BAD_CSUM,
		  { .family = 4, .ip_csum = PKT_CSUM_PLUS1 } },
		{ "checksum 0x0000",
		  K_BAD_CSUM,
		  { .family = 4, .ip_csum = PKT_CSUM_ZERO } },
		{ "checksum 0xffff",
		  K_BAD_CSUM,
		  { .family = 4, .ip_csum = PKT_CSUM_FFFF } },
		{ "ihl 15, options left out of the checksum",
		  K_BAD_CSUM,
		  { .family = 4,
		    .ip_opts = 40,
		    .frame_len = 128,
		    .ip_csum = PKT_CSUM_NO_OPTS } },
		{ "ihl 7, checksum + 1",
		  K_BAD_CSUM,
		  { .family = 4, .ip_opts = 8, .ip_csum = PKT_CSUM_PLUS1 } },
		{ "source 127.0.0.1",
		  K_MARTIAN,
		  { .family = 4, .src = "127.0.0.1" } },
		{ "source 224.0.0.1",
		  K_MARTIAN,
		  { .family = 4, .src = "224.0.0.1" } },
	};
	__u8 buf[PKT_MAX];
	size_t i;

	for (i = 0; i < sizeof(rx) / sizeof(rx[0]); i++)
		add(l, rx[i].kind, buf, pkt_build(buf, sizeof(buf), &rx[i].s),
		    "%s", rx[i].name);
}

/* IPv4 header fields: ihl, version, total length against the header and
 * the frame, options in front of the L4 header, ICMP. */
static void cases_ipv4_header(struct pcases *l)
{
	struct pkt_spec probe = { .family = 4, .dport = PROBE_PORT };
	struct pkt_spec s = { .family = 4 };
	__u8 buf[PKT_MAX];
	int len;

	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "valid");
	len = pkt_build(buf, sizeof(buf), &probe);
	add(l, K_FW_DROP, buf, len, "valid, probe port");

	/* ihl < 5: the header would end inside the fixed part. */
	s.ihl = 4;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_MALFORMED, buf, len, "ihl 4");
	s.ihl = 0;
	len = pkt_build(buf, sizeof(buf), &s);
	ip4(buf)->ihl = 0;
	ip4_csum(buf, 20);
	add(l, K_MALFORMED, buf, len, "ihl 0");
	/* ihl > 5 beyond the total length: 60 > 50, and beyond the frame. */
	len = pkt_build(buf, sizeof(buf), &s);
	ip4(buf)->ihl = 15;
	ip4_csum(buf, 20);
	add(l, K_MALFORMED, buf, len, "ihl 15 > tot_len 50");
	/* ... and within the frame, but beyond a short total length. */
	len = pkt_build(buf, sizeof(buf), &s);
	ip4(buf)->ihl = 8;
	ip4(buf)->tot_len = htons(28);
	ip4_csum(buf, 20);
	add(l, K_MALFORMED, buf, len, "ihl 8 > tot_len 28");
	/* Version 6 in an IPv4 ethertype. */
	len = pkt_build(buf, sizeof(buf), &s);
	ip4(buf)->version = 6;
	ip4_csum(buf, 20);
	add(l, K_MALFORMED, buf, len, "version 6 in ipv4");

	/* Options: the L4 header is found behind them. */
	probe.ip_opts = 8;
	len = pkt_build(buf, sizeof(buf), &probe);
	add(l, K_FW_DROP, buf, len, "ihl 7, probe port");
	probe.ip_opts = 40;
	probe.frame_len = 128;
	len = pkt_build(buf, sizeof(buf), &probe);
	add(l, K_FW_DROP, buf, len, "ihl 15, probe port");
	s.ip_opts = 40;
	s.frame_len = 128;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ihl 15");
	s.ip_opts = 0;
	s.frame_len = 0;
	probe.ip_opts = 0;
	probe.frame_len = 0;

	/* Total length beyond the frame. */
	len = pkt_build(buf, sizeof(buf), &s);
	ip4(buf)->tot_len = htons(len - ETH_HLEN + 1);
	ip4_csum(buf, 20);
	add(l, K_MALFORMED, buf, len, "tot_len frame + 1");
	ip4(buf)->tot_len = htons(0xffff);
	ip4_csum(buf, 20);
	add(l, K_MALFORMED, buf, len, "tot_len 65535");
	/* Total length shorter than the header. */
	ip4(buf)->tot_len = htons(19);
	ip4_csum(buf, 20);
	add(l, K_MALFORMED, buf, len, "tot_len 19");
	ip4(buf)->tot_len = 0;
	ip4_csum(buf, 20);
	add(l, K_MALFORMED, buf, len, "tot_len 0");

	/* Total length shorter than the frame (Ethernet padding) is fine;
	 * the ports count only when they lie within it. */
	len = pkt_build(buf, sizeof(buf), &probe);
	ip4(buf)->tot_len = htons(28);
	ip4_csum(buf, 20);
	add(l, K_FW_DROP, buf, len, "padded, tot_len 28, probe port");
	ip4(buf)->tot_len = htons(24);
	ip4_csum(buf, 20);
	add(l, K_FWD, buf, len, "tot_len 24: half a udp header");
	ip4(buf)->tot_len = htons(20);
	ip4_csum(buf, 20);
	add(l, K_FWD, buf, len, "tot_len 20: no payload");
	probe.proto = IPPROTO_TCP;
	len = pkt_build(buf, sizeof(buf), &probe);
	add(l, K_FW_DROP, buf, len, "tcp, probe port");
	ip4(buf)->tot_len = htons(39);
	ip4_csum(buf, 20);
	add(l, K_FWD, buf, len, "tot_len 39: tcp header cut");

	/* ICMP: type and code, never ports. */
	s.proto = IPPROTO_ICMP;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "icmp echo");
	s.proto = 0;

	cases_rx(l);
}

/* IPv4 fragments (MF, offset) and the IPv6 fragment header. */
static void cases_fragments(struct pcases *l)
{
	struct pkt_spec s = { .family = 4, .dport = PROBE_PORT };
	struct pkt_spec s6 = { .dport = PROBE_PORT, .frame_len = 96 };
	struct pkt_ext6 frag = { IPPROTO_FRAGMENT };
	__u8 buf[PKT_MAX];
	int len;

	/* IPv4 first fragment: a full UDP header, ports read. */
	s.frag_off = 0x2000;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FW_DROP, buf, len, "ipv4 first fragment, probe port");
	s.dport = 0;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ipv4 first fragment");
	/* Non-first fragments: what sits where ports would be is payload. */
	s.frag_off = 0x2000 | 185;
	len = pkt_build(buf, sizeof(buf), &s);
	put_ports(buf, ETH_HLEN + 20, 1024, PROBE_PORT);
	add(l, K_FWD, buf, len, "ipv4 middle fragment, probe bytes");
	s.frag_off = 185;
	len = pkt_build(buf, sizeof(buf), &s);
	put_ports(buf, ETH_HLEN + 20, 1024, PROBE_PORT);
	add(l, K_FWD, buf, len, "ipv4 last fragment, probe bytes");
	s.proto = IPPROTO_TCP;
	len = pkt_build(buf, sizeof(buf), &s);
	put_ports(buf, ETH_HLEN + 20, 1024, PROBE_PORT);
	add(l, K_FWD, buf, len, "ipv4 last tcp fragment, probe bytes");

	/* IPv6 fragment header. */
	frag.frag_off = 1;
	len = pkt_build_ext6(buf, sizeof(buf), &s6, &frag, 1);
	add(l, K_FW_DROP, buf, len, "ipv6 first fragment, probe port");
	frag.frag_off = 0;
	len = pkt_build_ext6(buf, sizeof(buf), &s6, &frag, 1);
	add(l, K_FW_DROP, buf, len, "ipv6 atomic fragment, probe port");
	frag.frag_off = 100 << 3 | 1;
	len = pkt_build_ext6(buf, sizeof(buf), &s6, &frag, 1);
	add(l, K_FWD, buf, len, "ipv6 middle fragment, probe bytes");
	frag.frag_off = 100 << 3;
	len = pkt_build_ext6(buf, sizeof(buf), &s6, &frag, 1);
	add(l, K_FWD, buf, len, "ipv6 last fragment, probe bytes");
	s6.proto = IPPROTO_TCP;
	len = pkt_build_ext6(buf, sizeof(buf), &s6, &frag, 1);
	add(l, K_FWD, buf, len, "ipv6 last tcp fragment, probe bytes");
}

/* One and two VLAN tags (802.1ad outside 802.1Q); a third is not IP. */
static void cases_vlan(struct pcases *l)
{
	struct pkt_spec s = { .family = 4, .nvlans = 1 };
	__u8 buf[PKT_MAX];
	int len;

	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_VLAN, buf, len, "1 tag ipv4");
	s.dport = PROBE_PORT;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_VLAN_FW_DROP, buf, len, "1 tag ipv4, probe port");
	s.nvlans = 2;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_VLAN_FW_DROP, buf, len, "2 tags ipv4, probe port");
	s.family = 6;
	s.proto = IPPROTO_TCP;
	s.frame_len = 96;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_VLAN_FW_DROP, buf, len, "2 tags ipv6/tcp, probe port");
	s.dport = 0;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_VLAN, buf, len, "2 tags ipv6/tcp");
	/* Addresses behind the tags. */
	s = (struct pkt_spec){ .family = 4, .nvlans = 1, .src = DENIED_SRC4 };
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_VLAN_FW_DROP, buf, len, "1 tag ipv4, denied source");
	s = (struct pkt_spec){
		.family = 6, .nvlans = 2, .src = DENIED_SRC6, .frame_len = 96
	};
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_VLAN_FW_DROP, buf, len, "2 tags ipv6, denied source");
	s = (struct pkt_spec){ .family = 4, .src = DENIED_SRC4 };
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FW_DROP, buf, len, "untagged ipv4, denied source");
	s = (struct pkt_spec){ .family = 6, .src = DENIED_SRC6 };
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FW_DROP, buf, len, "untagged ipv6, denied source");

	/* The parser reads two tags; behind a third there is no IP. */
	s = (struct pkt_spec){ .family = 4 };
	s.family = 4;
	s.proto = 0;
	s.frame_len = 0;
	s.dport = PROBE_PORT;
	s.nvlans = 3;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_NOT_IP, buf, len, "3 tags ipv4, probe port");
	/* Tags in front of a broken IPv4 header. */
	s.nvlans = 2;
	len = pkt_build(buf, sizeof(buf), &s);
	ip4(buf)->tot_len = htons(len - 22 + 1);
	ip4_csum(buf, 20);
	add(l, K_MALFORMED, buf, len, "2 tags, tot_len beyond frame");
}

/* IPv6 extension headers: each kind, all of them, lengths pointing
 * beyond the payload, a payload length cutting them. */
static void cases_ipv6_ext(struct pcases *l)
{
	static const struct {
		const char *name;
		struct pkt_ext6 ext[5];
		int n;
	} chains6[] = {
		{ "hop-by-hop", { { IPPROTO_HOPOPTS, 0 } }, 1 },
		{ "hop-by-hop 16", { { IPPROTO_HOPOPTS, 1 } }, 1 },
		{ "routing", { { IPPROTO_ROUTING, 2 } }, 1 },
		{ "dstopts", { { IPPROTO_DSTOPTS, 1 } }, 1 },
		/* AH counts in 4-octet units minus 2: 24 bytes, where an
		 * option-style length would say 40. */
		{ "ah", { { IPPROTO_AH, 4 } }, 1 },
		{ "first fragment", { { IPPROTO_FRAGMENT, 0, 1 } }, 1 },
		{ "hop,routing,frag,dst,ah",
		  { { IPPROTO_HOPOPTS, 0 },
		    { IPPROTO_ROUTING, 2 },
		    { IPPROTO_FRAGMENT, 0, 1 },
		    { IPPROTO_DSTOPTS, 1 },
		    { IPPROTO_AH, 4 } },
		  5 },
		{ "ah,dstopts", { { IPPROTO_AH, 1 }, { IPPROTO_DSTOPTS, 0 } }, 2 },
	};
	struct pkt_spec probe = { .dport = PROBE_PORT, .frame_len = 160 };
	struct pkt_spec s = { .frame_len = 160 };
	struct pkt_ext6 many[9];
	__u8 buf[PKT_MAX];
	size_t i;
	int len;

	for (i = 0; i < sizeof(chains6) / sizeof(chains6[0]); i++) {
		len = pkt_build_ext6(buf, sizeof(buf), &s, chains6[i].ext,
				     chains6[i].n);
		add(l, K_FWD, buf, len, "%s", chains6[i].name);
		len = pkt_build_ext6(buf, sizeof(buf), &probe, chains6[i].ext,
				     chains6[i].n);
		add(l, K_FW_DROP, buf, len, "%s, probe port", chains6[i].name);
		probe.proto = IPPROTO_TCP;
		len = pkt_build_ext6(buf, sizeof(buf), &probe, chains6[i].ext,
				     chains6[i].n);
		add(l, K_FW_DROP, buf, len, "%s, tcp probe port",
		    chains6[i].name);
		probe.proto = 0;
	}

	/* The parser walks XNF_MAX_EXTHDRS (8) headers: behind 8 the L4
	 * header is known and its ports are read. Behind 9 the protocol is
	 * unknown (XNF_PKT_F_L4_UNKNOWN): no rule can be matched honestly,
	 * so the firewall denies whatever the port; l3fwd still routes. */
	for (i = 0; i < 9; i++)
		many[i] = (struct pkt_ext6){ IPPROTO_DSTOPTS, 0 };
	len = pkt_build_ext6(buf, sizeof(buf), &probe, many, 8);
	add(l, K_FW_DROP, buf, len, "8 ext headers, probe port");
	len = pkt_build_ext6(buf, sizeof(buf), &s, many, 8);
	add(l, K_FWD, buf, len, "8 ext headers");
	len = pkt_build_ext6(buf, sizeof(buf), &probe, many, 9);
	add(l, K_FW_DROP, buf, len, "9 ext headers, probe port");
	len = pkt_build_ext6(buf, sizeof(buf), &s, many, 9);
	add(l, K_FW_DROP, buf, len, "9 ext headers");

	/* A header length beyond the payload. */
	len = pkt_build_ext6(buf, sizeof(buf), &probe, chains6[3].ext, 1);
	buf[ETH_HLEN + 40 + 1] = 200;
	add(l, K_MALFORMED, buf, len, "dstopts length 1608 > payload");
	/* With the payload cut to 88 bytes: a header of 96 ends 8 bytes
	 * beyond it, one of 88 exactly at its end (no room for L4). */
	len = pkt_build_ext6(buf, sizeof(buf), &probe, chains6[3].ext, 1);
	ip6(buf)->payload_len = htons(88);
	buf[ETH_HLEN + 40 + 1] = 11;
	add(l, K_MALFORMED, buf, len, "dstopts 8 bytes beyond payload");
	buf[ETH_HLEN + 40 + 1] = 10;
	add(l, K_FWD, buf, len, "dstopts up to the end, no l4");
	len = pkt_build_ext6(buf, sizeof(buf), &probe, chains6[4].ext, 1);
	buf[ETH_HLEN + 40 + 1] = 200;
	add(l, K_MALFORMED, buf, len, "ah length 808 > payload");
	/* The second header beyond the payload. */
	len = pkt_build_ext6(buf, sizeof(buf), &probe, chains6[6].ext, 5);
	buf[ETH_HLEN + 40 + 8 + 1] = 100;
	add(l, K_MALFORMED, buf, len, "routing length 808 > payload");
	/* The payload length cuts an extension header. */
	len = pkt_build_ext6(buf, sizeof(buf), &probe, chains6[0].ext, 1);
	ip6(buf)->payload_len = htons(4);
	add(l, K_MALFORMED, buf, len, "payload 4 < hop-by-hop header");
	/* The payload length beyond the frame. */
	len = pkt_build_ext6(buf, sizeof(buf), &probe, chains6[0].ext, 1);
	ip6(buf)->payload_len = htons(len - ETH_HLEN - 40 + 1);
	add(l, K_MALFORMED, buf, len, "payload_len frame + 1");
	/* Version 4 in an IPv6 ethertype. */
	len = pkt_build_ext6(buf, sizeof(buf), &probe, NULL, 0);
	ip6(buf)->version = 4;
	add(l, K_MALFORMED, buf, len, "version 4 in ipv6");
	/* Payload shorter than the frame (padding) is fine; the ports
	 * count only within it. */
	len = pkt_build_ext6(buf, sizeof(buf), &probe, chains6[0].ext, 1);
	ip6(buf)->payload_len = htons(8 + 8);
	add(l, K_FW_DROP, buf, len, "padded, probe port");
	ip6(buf)->payload_len = htons(8 + 6);
	add(l, K_FWD, buf, len, "payload cuts the udp header");

	/* ICMPv6: type and code, never ports. */
	s.proto = IPPROTO_ICMPV6;
	len = pkt_build_ext6(buf, sizeof(buf), &s, chains6[3].ext, 1);
	add(l, K_FWD, buf, len, "dstopts, icmpv6 echo");
	s.proto = 0;

	/* Martians behind extension headers (read from the fixed header). */
	s.src = "::1";
	len = pkt_build_ext6(buf, sizeof(buf), &s, chains6[0].ext, 1);
	add(l, K_MARTIAN, buf, len, "hop-by-hop, source ::1");
	s.src = "ff02::1";
	len = pkt_build_ext6(buf, sizeof(buf), &s, chains6[6].ext, 5);
	add(l, K_MARTIAN, buf, len, "5 ext headers, source ff02::1");
}

/* TTL / hop limit at the edge of expiry, and frames that are not IP. */
static void cases_ttl_not_ip(struct pcases *l)
{
	struct pkt_spec s = { .family = 4, .ttl = 1 };
	__u8 buf[PKT_MAX];
	__u32 id;
	int len, i;

	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_TTL, buf, len, "ipv4 ttl 1");
	s.ttl_zero = true;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_TTL, buf, len, "ipv4 ttl 0");
	s.ttl_zero = false;
	s.ttl = 2;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ipv4 ttl 2");
	s.ttl = 255;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ipv4 ttl 255");
	/* A checksum of 0xfeff: lowering the TTL adds 0x0100 and the sum
	 * wraps to 0xffff, which the end-around carry must turn into the
	 * 0x0000 a computation from scratch gives. The IP id picks it. */
	s.ttl = 64;
	len = pkt_build(buf, sizeof(buf), &s);
	for (id = 0; id < 0x10000; id++) {
		ip4(buf)->id = htons(id);
		ip4_csum(buf, 20);
		if (ip4(buf)->check == htons(0xfeff))
			break;
	}
	ASSERT_LE(id, 0xffff, "an id giving checksum 0xfeff");
	add(l, K_FWD, buf, len, "ipv4 checksum 0xfeff");
	/* And 0xff00, 0x00ff, 0xfeef: no wrap, at the edges of a byte. */
	for (i = 0; i < 3; i++) {
		static const __u16 want[] = { 0xff00, 0x00ff, 0xfeef };

		for (id = 0; id < 0x10000; id++) {
			ip4(buf)->id = htons(id);
			ip4_csum(buf, 20);
			if (ip4(buf)->check == htons(want[i]))
				break;
		}
		ASSERT_LE(id, 0xffff, "an id giving the checksum");
		add(l, K_FWD, buf, len, "ipv4 checksum 0x%04x", want[i]);
	}

	s.family = 6;
	s.ttl = 1;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_TTL, buf, len, "ipv6 hop limit 1");
	s.ttl_zero = true;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_TTL, buf, len, "ipv6 hop limit 0");
	s.ttl_zero = false;
	s.ttl = 2;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ipv6 hop limit 2");

	s = (struct pkt_spec){ .family = 0 };
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_NOT_IP, buf, len, "arp 64");
	s.frame_len = 42;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_NOT_IP, buf, len, "arp 42");
	buf[12] = 0x88; /* LLDP */
	buf[13] = 0xcc;
	add(l, K_NOT_IP, buf, len, "lldp");
	buf[12] = 0x00; /* an 802.3 length field */
	buf[13] = 28;
	add(l, K_NOT_IP, buf, len, "802.3 length");
	buf[12] = 0x81; /* a VLAN tag of ARP */
	buf[13] = 0x00;
	add(l, K_MALFORMED, buf, 16, "vlan tag cut");
}

/* The smallest frames and 9000-byte jumbo frames. */
static void cases_sizes(struct pcases *l)
{
	struct pkt_spec s = { .family = 4, .frame_len = 42 };
	static const struct pkt_ext6 ext[] = {
		{ IPPROTO_HOPOPTS, 0 },
		{ IPPROTO_FRAGMENT, 0, 1 },
		{ IPPROTO_AH, 4 },
	};
	static __u8 buf[PKT_MAX];
	int len;

	/* 42 bytes: the shortest valid IPv4/UDP frame (no payload). */
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ipv4/udp 42");
	s.dport = PROBE_PORT;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FW_DROP, buf, len, "ipv4/udp 42, probe port");
	/* 42 bytes, padded to the Ethernet minimum of 60 (64 with FCS). */
	memset(buf + len, 0, 60 - len);
	add(l, K_FW_DROP, buf, 60, "ipv4/udp 42 padded to 60, probe port");
	s.dport = 0;
	s.frame_len = 64;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ipv4/udp 64");
	s.frame_len = 34;
	s.proto = 253; /* experimental: no L4 header */
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ipv4 header only, 34");
	s.proto = 0;
	s.family = 6;
	s.frame_len = 62;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ipv6/udp 62");

	/* Jumbo frames: beyond one page, so the kernel hands the programs
	 * a multi-buffer xdp_buff. */
	s = (struct pkt_spec){ .family = 4, .frame_len = 9000 };
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ipv4/udp 9000");
	s.proto = IPPROTO_TCP;
	s.dport = PROBE_PORT;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FW_DROP, buf, len, "ipv4/tcp 9000, probe port");
	s.dport = 0;
	s.ttl = 1;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_TTL, buf, len, "ipv4/tcp 9000, ttl 1");
	s = (struct pkt_spec){ .family = 6, .frame_len = 9000 };
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_FWD, buf, len, "ipv6/udp 9000");
	s.dport = PROBE_PORT;
	len = pkt_build_ext6(buf, sizeof(buf), &s, ext, 3);
	add(l, K_FW_DROP, buf, len, "ipv6 ext 9000, probe port");
	ip6(buf)->payload_len = htons(len - ETH_HLEN - 40 + 1);
	add(l, K_MALFORMED, buf, len, "ipv6 9000, payload_len frame + 1");
	s = (struct pkt_spec){ .family = 4, .frame_len = 9000, .nvlans = 1 };
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_VLAN, buf, len, "1 tag ipv4 9000");
	s = (struct pkt_spec){ .family = 4, .frame_len = 9000 };
	len = pkt_build(buf, sizeof(buf), &s);
	ip4(buf)->tot_len = htons(len - ETH_HLEN + 1);
	ip4_csum(buf, 20);
	add(l, K_MALFORMED, buf, len, "ipv4 9000, tot_len frame + 1");
	/* Cut 1 byte short: the cut falls in the last fragment. */
	s.frame_len = 9000;
	len = pkt_build(buf, sizeof(buf), &s);
	add(l, K_MALFORMED, buf, len - 1, "ipv4 9000 cut to 8999");
}

/* Failures name the chain, the case and its kind. */
TEST(parse_bad_input)
{
	struct pcases l = {};

	cases_truncated(&l);
	cases_ipv4_header(&l);
	cases_fragments(&l);
	cases_vlan(&l);
	cases_ipv6_ext(&l);
	cases_ttl_not_ip(&l);
	cases_sizes(&l);
	run_cases(&l);
}
