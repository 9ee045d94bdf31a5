// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The datapath of translated connections (bpf/conntrack.bpf.h,
 * bpf/nat.bpf.h, bpf/nat_xlat.bpf.h, xnf_finish()): a connection and its
 * alias are put into xnf_ct by hand, as xnf_ct_confirm() leaves them, and
 * packets of both directions, and ICMP errors about them, run through
 * conntrack,nat,firewall,l3fwd, tail-called and fused. Every output frame
 * is compared byte for byte with the frame a correct NAT router sends,
 * built from scratch here (every checksum computed over the whole
 * packet), and its checksums are checked again with common/pkt.c's.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"

#define CHAIN "conntrack,nat,firewall,l3fwd"
#define S     1000000000ULL

/* Inside (10.1.2.0/24 and 2001:db8:5::/48 route to ut2), outside
 * (198.51.100.0/24 and the rest of 2001:db8::/32 to ut1), and the
 * router's public addresses, which no route holds. */
#define IN4  "10.1.2.7"
#define SRV4 "10.1.2.8"
#define OUT4 "198.51.100.9"
#define HOP4 "198.51.100.254"
#define PUB4 "203.0.113.1"
#define IN6  "2001:db8:5::7"
#define SRV6 "2001:db8:5::8"
#define OUT6 "2001:db8:2::9"
#define HOP6 "2001:db8:2::fe"
#define PUB6 "2001:db8:3::1"

#define PORT_IN	 1 /* ut1: outside */
#define PORT_OUT 2 /* ut2: inside */

struct frame {
	__u8 data[512];
	int len;
};

/* One's complement sum of 16-bit big-endian words, from scratch. */
static __u32 sum16(const __u8 *d, size_t n, __u32 s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (__u32)d[i] << 8 | d[i + 1];
	if (n & 1)
		s += (__u32)d[n - 1] << 8;
	return s;
}

static __u16 fold_not(__u32 s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

/* Offsets of the IP packet at @l3 of @d: its L4 header and length. */
static size_t ip_l4(const __u8 *d, size_t l3, size_t *l4len, __u8 *proto)
{
	if ((d[l3] >> 4) == 4) {
		*proto = d[l3 + 9];
		*l4len = (d[l3 + 2] << 8 | d[l3 + 3]) - (d[l3] & 0xf) * 4;
		return l3 + (d[l3] & 0xf) * 4;
	}
	*proto = d[l3 + 6];
	*l4len = d[l3 + 4] << 8 | d[l3 + 5];
	return l3 + 40;
}

/* Computes the IPv4 header checksum (IPv4) and the L4 checksum of the IP
 * packet at @l3 from scratch; @udp0: a UDP checksum stays 0 ("none"). */
static void csum_fix(__u8 *d, size_t l3, bool udp0)
{
	size_t l4len, l4, coff;
	__u8 proto;
	__u32 s = 0;
	__u16 c;

	l4 = ip_l4(d, l3, &l4len, &proto);
	if ((d[l3] >> 4) == 4) {
		d[l3 + 10] = d[l3 + 11] = 0;
		c = fold_not(sum16(d + l3, (d[l3] & 0xf) * 4, 0));
		d[l3 + 10] = c >> 8;
		d[l3 + 11] = c & 0xff;
	}
	switch (proto) {
	case IPPROTO_TCP:
		coff = 16;
		break;
	case IPPROTO_UDP:
		coff = 6;
		break;
	default:
		coff = 2;
	}
	d[l4 + coff] = d[l4 + coff + 1] = 0;
	if (udp0 && proto == IPPROTO_UDP)
		return;
	if (proto != IPPROTO_ICMP) {
		s = proto + l4len;
		if ((d[l3] >> 4) == 4)
			s = sum16(d + l3 + 12, 8, s);
		else
			s = sum16(d + l3 + 8, 32, s);
	}
	c = fold_not(sum16(d + l4, l4len, s));
	if (proto == IPPROTO_UDP && !c)
		c = 0xffff;
	d[l4 + coff] = c >> 8;
	d[l4 + coff + 1] = c & 0xff;
}

/* A frame of @proto from (@src, @sport) to (@dst, @dport): TCP with
 * @flags, UDP (a checksum 0 with @udp0), or an ICMP / ICMPv6 echo of type
 * @flags with identifier @sport. */
static struct frame pkt(int fm, __u8 proto, const char *src, const char *dst,
			__u16 sport, __u16 dport, __u8 flags, bool udp0)
{
	struct pkt_spec s = { .family = fm,
			      .proto = proto,
			      .src = src,
			      .dst = dst,
			      .sport = sport,
			      .dport = dport,
			      .frame_len = 96 };
	struct frame fr;
	size_t l3, l4len, l4;
	__u8 p;

	fr.len = pkt_build(fr.data, sizeof(fr.data), &s);
	l3 = pkt_l3_off(fr.data);
	l4 = ip_l4(fr.data, l3, &l4len, &p);
	if (proto == IPPROTO_TCP) {
		fr.data[l4 + 13] = flags;
	} else if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		fr.data[l4] = flags;
		fr.data[l4 + 1] = 0;
		fr.data[l4 + 4] = sport >> 8;
		fr.data[l4 + 5] = sport & 0xff;
	}
	csum_fix(fr.data, l3, udp0);
	return fr;
}

/* An ICMP error of @type / @code from @src to @dst quoting the whole IP
 * packet of @in (@mtu: its bytes 6-7, the next-hop MTU of a frag-needed
 * or the low half of a packet-too-big's). */
static struct frame icmp_err(int fm, const char *src, const char *dst, __u8 type,
			     __u8 code, __u16 mtu, const struct frame *in)
{
	size_t il3 = pkt_l3_off(in->data), ilen = in->len - il3, l3, l4len, l4;
	struct pkt_spec s = { .family = fm,
			      .proto = fm == 4 ? IPPROTO_ICMP : IPPROTO_ICMPV6,
			      .src = src,
			      .dst = dst };
	struct frame fr;
	__u8 p;

	s.frame_len = ETH_HLEN + (fm == 4 ? 20 : 40) + 8 + ilen;
	fr.len = pkt_build(fr.data, sizeof(fr.data), &s);
	l3 = pkt_l3_off(fr.data);
	l4 = ip_l4(fr.data, l3, &l4len, &p);
	memset(fr.data + l4, 0, 8);
	fr.data[l4] = type;
	fr.data[l4 + 1] = code;
	fr.data[l4 + 6] = mtu >> 8;
	fr.data[l4 + 7] = mtu & 0xff;
	memcpy(fr.data + l4 + 8, in->data + il3, ilen);
	csum_fix(fr.data, l3, false);
	return fr;
}

/* What l3fwd makes of @fr forwarded on @port. */
static struct frame routed(struct fx *f, struct frame fr, __u32 port)
{
	__u8 dmac[ETH_ALEN];

	fx_nh_mac(port, dmac);
	pkt_routed(fr.data, fr.len, dmac, f->mac[port]);
	return fr;
}

static bool nd_open(struct fx *f, bool fused)
{
	memset(f, 0, sizeof(*f));
	if (fx_open(f) && fx_chain(f, CHAIN, fused, false) && fx_l3_table(f) &&
	    fx_fw_default(f, XNF_FW_ALLOW))
		return true;
	fx_close(f);
	return false;
}

/* Runs @in; it must leave as @want, with valid checksums. */
static bool nd_expect(struct fx *f, struct frame in, const struct frame *want,
		      const char *what)
{
	static struct fx_out out;

	if (!ASSERT_OK(fx_run(f, in.data, in.len, &out), what) ||
	    !ASSERT_EQ(out.ret, XDP_REDIRECT, what) ||
	    !ASSERT_EQ(out.len, want->len, what))
		return false;
	if (!ASSERT_OK(memcmp(out.data, want->data, want->len), what)) {
		for (int i = 0; i < want->len; i++)
			if (out.data[i] != want->data[i])
				fprintf(stderr, "  byte %d: got %02x want %02x\n",
					i, out.data[i], want->data[i]);
		return false;
	}
	if ((out.data[pkt_l3_off(out.data)] >> 4) == 4 &&
	    !ASSERT_TRUE(pkt_ipv4_csum_ok(out.data, out.len), what))
		return false;
	return true;
}

/* Runs @in; returns the XDP action. */
static int nd_run(struct fx *f, struct frame in)
{
	static struct fx_out out;

	if (!ASSERT_OK(fx_run(f, in.data, in.len, &out), "run"))
		return -1;
	return out.ret;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * S + ts.tv_nsec;
}

static void addr_of(int fm, const char *s, __u8 out[16])
{
	memset(out, 0, 16);
	inet_pton(fm == 4 ? AF_INET : AF_INET6, s, out);
}

/* The canonical key of the flow (@src, @sport) -> (@dst, @dport), as
 * bpf/conntrack.bpf.h makes it; true when the source is its b side. */
static bool key_of(struct xnf_ct_key *k, int fm, __u8 proto, const char *src,
		   __u16 sport, const char *dst, __u16 dport)
{
	__u8 a[16], b[16];
	int cmp;

	memset(k, 0, sizeof(*k));
	k->family = fm == 4 ? XNF_AF_INET : XNF_AF_INET6;
	k->proto = proto;
	addr_of(fm, src, a);
	addr_of(fm, dst, b);
	cmp = memcmp(a, b, 16);
	if (!cmp)
		cmp = sport < dport ? -1 : sport > dport;
	if (cmp <= 0) {
		memcpy(k->a_addr, a, 16);
		memcpy(k->b_addr, b, 16);
		k->a_port = htons(sport);
		k->b_port = htons(dport);
		return false;
	}
	memcpy(k->a_addr, b, 16);
	memcpy(k->b_addr, a, 16);
	k->a_port = htons(dport);
	k->b_port = htons(sport);
	return true;
}

/* A translated connection as xnf_ct_confirm() leaves it: the original
 * tuple (@os, @osp) -> (@od, @odp), the reply tuple (@rs, @rsp) -> (@rd,
 * @rdp), and its alias. For ICMP echo the ports are the identifiers. */
struct nd_conn {
	int fm;
	__u8 proto;
	const char *os, *od, *rs, *rd;
	__u16 osp, odp, rsp, rdp;
	__u32 status; /* XNF_CT_S_SNAT or _DNAT */
};

static bool nd_insert(struct fx *f, const struct nd_conn *c, __u64 expires,
		      struct xnf_ct_key *ck, struct xnf_ct_key *ak)
{
	int fd = xnf_table_fd(f->dp, XNF_T_CT);
	struct xnf_ct_entry e = {}, a = {};

	if (key_of(ck, c->fm, c->proto, c->os, c->osp, c->od, c->odp))
		e.status |= XNF_CT_S_ORIG_B;
	e.status |= c->status | XNF_CT_S_SEEN_REPLY | XNF_CT_S_ASSURED;
	e.expires = expires;
	e.created = now_ns() - 10 * S;
	e.packets[0] = e.packets[1] = 1;
	if (c->proto == IPPROTO_TCP)
		e.tcp_state = XNF_CT_TCP_ESTABLISHED;
	e.nat.family = ck->family;
	e.nat.proto = c->proto;
	addr_of(c->fm, c->rs, e.nat.a_addr);
	addr_of(c->fm, c->rd, e.nat.b_addr);
	e.nat.a_port = htons(c->rsp);
	e.nat.b_port = htons(c->rdp);
	key_of(ak, c->fm, c->proto, c->rs, c->rsp, c->rd, c->rdp);
	a.status = XNF_CT_S_ALIAS;
	a.expires = ~0ULL;
	a.nat = *ck;
	return ASSERT_OK(bpf_map_update_elem(fd, ck, &e, BPF_NOEXIST),
			 "insert the connection") &&
	       ASSERT_OK(bpf_map_update_elem(fd, ak, &a, BPF_NOEXIST),
			 "insert its alias");
}

static bool ct_has(struct fx *f, const struct xnf_ct_key *k)
{
	struct xnf_ct_entry e;

	return !bpf_map_lookup_elem(xnf_table_fd(f->dp, XNF_T_CT), k, &e);
}

/* No alias under @k (a connection the packet made may be there). */
static bool no_alias(struct fx *f, const struct xnf_ct_key *k)
{
	struct xnf_ct_entry e;

	return bpf_map_lookup_elem(xnf_table_fd(f->dp, XNF_T_CT), k, &e) ||
	       !(e.status & XNF_CT_S_ALIAS);
}

/* Empties xnf_ct. */
static void ct_clear(struct fx *f)
{
	int fd = xnf_table_fd(f->dp, XNF_T_CT);
	struct xnf_ct_key k;

	while (!bpf_map_get_next_key(fd, NULL, &k))
		bpf_map_delete_elem(fd, &k);
}

#define FOR_BOTH(fused) for (int fused = 0; fused < 2; fused++)

/* The echo types of a family. */
#define ECHO(fm)  ((fm) == 4 ? 8 : 128)
#define REPLY(fm) ((fm) == 4 ? 0 : 129)

/* SNAT (and masquerade, the same entries): the inside source leaves as
 * the public address and another port, the replies come back to it. TCP,
 * UDP, UDP without checksum (IPv4), ICMP echo; IPv4 and IPv6. */
TEST(nat_dp_snat)
{
	FOR_BOTH(fused)
	for (int fm = 4; fm <= 6; fm += 2)
		for (int t = 0; t < 4; t++) {
			static const __u8 protos[] = { IPPROTO_TCP, IPPROTO_UDP,
						       IPPROTO_UDP, 0 };
			__u8 proto = protos[t]	     ?:
					     fm == 4 ? IPPROTO_ICMP :
						       IPPROTO_ICMPV6;
			bool icmp = !protos[t], udp0 = t == 2;
			const char *in = fm == 4 ? IN4 : IN6,
				   *out = fm == 4 ? OUT4 : OUT6,
				   *pub = fm == 4 ? PUB4 : PUB6;
			__u16 cp = 40000, sp = icmp ? 40000 : 443,
			      np = icmp ? 1234 : 61000;
			/* An echo's reply tuple has the new identifier
			 * on both sides. */
			struct nd_conn c = { fm,  proto,	in,
					     out, out,		pub,
					     cp,  sp,		icmp ? np : sp,
					     np,  XNF_CT_S_SNAT };
			__u8 o1 = icmp ? ECHO(fm) : 0x10,
			     o2 = icmp ? REPLY(fm) : 0x18;
			struct xnf_ct_key ck, ak;
			struct frame want;
			char what[80];
			struct fx f;

			if (udp0 && fm == 6)
				continue;
			snprintf(what, sizeof(what), "IPv%d %s%s %s", fm,
				 icmp	    ? "echo" :
				 proto == 6 ? "tcp" :
					      "udp",
				 udp0 ? " checksum 0" : "",
				 fused ? "fused" : "tail-called");
			if (!nd_open(&f, fused))
				return;
			if (!nd_insert(&f, &c, now_ns() + 3600 * S, &ck, &ak))
				goto next;
			/* Out: the source becomes the public one. */
			want = routed(&f,
				      pkt(fm, proto, pub, out, np, sp, o1, udp0),
				      PORT_IN);
			if (!nd_expect(&f,
				       pkt(fm, proto, in, out, cp, sp, o1, udp0),
				       &want, what))
				goto next;
			/* Back: the destination becomes the inside one. */
			want = routed(&f,
				      pkt(fm, proto, out, in, icmp ? cp : sp,
					  cp, o2, udp0),
				      PORT_OUT);
			nd_expect(&f,
				  pkt(fm, proto, out, pub, icmp ? np : sp, np,
				      o2, udp0),
				  &want, what);
			/* Both entries stay. */
			ASSERT_TRUE(ct_has(&f, &ck) && ct_has(&f, &ak), what);
next:
			fx_close(&f);
		}
}

/* DNAT: the public destination and port become the inside server's; the
 * server's replies leave from the public address and port. */
TEST(nat_dp_dnat)
{
	FOR_BOTH(fused)
	for (int fm = 4; fm <= 6; fm += 2)
		for (int t = 0; t < 2; t++) {
			__u8 proto = t ? IPPROTO_UDP : IPPROTO_TCP;
			const char *srv = fm == 4 ? SRV4 : SRV6,
				   *out = fm == 4 ? OUT4 : OUT6,
				   *pub = fm == 4 ? PUB4 : PUB6;
			struct nd_conn c = { fm,   proto, out,		pub,
					     srv,  out,	  50000,	80,
					     8080, 50000, XNF_CT_S_DNAT };
			struct xnf_ct_key ck, ak;
			struct frame want;
			char what[64];
			struct fx f;

			snprintf(what, sizeof(what), "IPv%d %s %s", fm,
				 t ? "udp" : "tcp",
				 fused ? "fused" : "tail-called");
			if (!nd_open(&f, fused))
				return;
			if (!nd_insert(&f, &c, now_ns() + 3600 * S, &ck, &ak))
				goto next;
			want = routed(&f,
				      pkt(fm, proto, out, srv, 50000, 8080,
					  0x10, false),
				      PORT_OUT);
			if (!nd_expect(&f,
				       pkt(fm, proto, out, pub, 50000, 80, 0x10,
					   false),
				       &want, what))
				goto next;
			want = routed(&f,
				      pkt(fm, proto, pub, out, 80, 50000, 0x18,
					  false),
				      PORT_IN);
			nd_expect(&f,
				  pkt(fm, proto, srv, out, 8080, 50000, 0x18,
				      false),
				  &want, what);
next:
			fx_close(&f);
		}
}

/*
 * ICMP errors about a translated flow go back translated, as Linux's
 * nf_nat_icmp_reply_translation() makes them: a time-exceeded from a
 * router beyond the public address, about a UDP datagram that left
 * translated, reaches the inside host from that router quoting the
 * datagram as the host sent it; a frag-needed about a TCP segment (the
 * quote holds the whole TCP header: its checksum is translated too, the
 * MTU kept); an ICMPv6 packet-too-big the same; and an error the inside
 * server of a DNAT connection sends leaves from the public address.
 */
TEST(nat_dp_icmp_errors)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct nd_conn u4 = { 4,    IPPROTO_UDP, IN4,	       OUT4,
				      OUT4, PUB4,	 5000,	       53,
				      53,   61000,	 XNF_CT_S_SNAT },
			       t4 = { 4,    IPPROTO_TCP, IN4,	       OUT4,
				      OUT4, PUB4,	 40001,	       443,
				      443,  61001,	 XNF_CT_S_SNAT },
			       t6 = { 6,    IPPROTO_TCP, IN6,	       OUT6,
				      OUT6, PUB6,	 40002,	       443,
				      443,  61002,	 XNF_CT_S_SNAT },
			       d4 = { 4,    IPPROTO_UDP, OUT4,	       PUB4,
				      SRV4, OUT4,	 7000,	       53,
				      5353, 7000,	 XNF_CT_S_DNAT };
		struct xnf_ct_key ck, ak;
		struct frame in, want, q;
		struct fx f;

		if (!nd_open(&f, fused))
			return;
		if (!nd_insert(&f, &u4, now_ns() + 3600 * S, &ck, &ak) ||
		    !nd_insert(&f, &t4, now_ns() + 3600 * S, &ck, &ak) ||
		    !nd_insert(&f, &t6, now_ns() + 3600 * S, &ck, &ak) ||
		    !nd_insert(&f, &d4, now_ns() + 3600 * S, &ck, &ak))
			goto out;

		q = pkt(4, IPPROTO_UDP, PUB4, OUT4, 61000, 53, 0, false);
		in = icmp_err(4, HOP4, PUB4, 11, 0, 0, &q);
		q = pkt(4, IPPROTO_UDP, IN4, OUT4, 5000, 53, 0, false);
		want = routed(&f, icmp_err(4, HOP4, IN4, 11, 0, 0, &q), PORT_OUT);
		nd_expect(&f, in, &want, what);

		q = pkt(4, IPPROTO_TCP, PUB4, OUT4, 61001, 443, 0x18, false);
		in = icmp_err(4, HOP4, PUB4, 3, 4, 1400, &q);
		q = pkt(4, IPPROTO_TCP, IN4, OUT4, 40001, 443, 0x18, false);
		want = routed(&f, icmp_err(4, HOP4, IN4, 3, 4, 1400, &q),
			      PORT_OUT);
		nd_expect(&f, in, &want, what);

		q = pkt(6, IPPROTO_TCP, PUB6, OUT6, 61002, 443, 0x18, false);
		in = icmp_err(6, HOP6, PUB6, 2, 0, 1280, &q);
		q = pkt(6, IPPROTO_TCP, IN6, OUT6, 40002, 443, 0x18, false);
		want = routed(&f, icmp_err(6, HOP6, IN6, 2, 0, 1280, &q),
			      PORT_OUT);
		nd_expect(&f, in, &want, what);

		/* The DNAT server's port unreachable about a datagram it
		 * got: from the public address, quoting what the client
		 * sent. */
		q = pkt(4, IPPROTO_UDP, OUT4, SRV4, 7000, 5353, 0, false);
		in = icmp_err(4, SRV4, OUT4, 3, 3, 0, &q);
		q = pkt(4, IPPROTO_UDP, OUT4, PUB4, 7000, 53, 0, false);
		want = routed(&f, icmp_err(4, PUB4, OUT4, 3, 3, 0, &q), PORT_IN);
		nd_expect(&f, in, &want, what);
out:
		fx_close(&f);
	}
}

/* An alias whose connection is gone (it expired) is deleted by the packet
 * that finds it, which goes on untranslated as a new flow; an expired
 * translated connection takes its alias with it. */
TEST(nat_dp_dead_alias)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct nd_conn c = { 4,	   IPPROTO_UDP, IN4,	      OUT4,
				     OUT4, PUB4,	5000,	      53,
				     53,   61000,	XNF_CT_S_SNAT };
		struct xnf_ct_key ck, ak;
		struct fx f;

		if (!nd_open(&f, fused))
			return;
		/* A reply finds the alias, whose connection expired: it
		 * goes on as a new flow, untranslated. */
		if (nd_insert(&f, &c, 1, &ck, &ak)) {
			nd_run(&f, pkt(4, IPPROTO_UDP, OUT4, PUB4, 53, 61000, 0,
				       false));
			ASSERT_TRUE(no_alias(&f, &ak), what);
			ASSERT_FALSE(ct_has(&f, &ck), what);
		}
		/* Only the alias is left (the connection was evicted). */
		ct_clear(&f);
		if (nd_insert(&f, &c, now_ns() + 3600 * S, &ck, &ak) &&
		    ASSERT_OK(bpf_map_delete_elem(xnf_table_fd(f.dp, XNF_T_CT),
						  &ck),
			      "evict the connection")) {
			nd_run(&f, pkt(4, IPPROTO_UDP, OUT4, PUB4, 53, 61000, 0,
				       false));
			ASSERT_TRUE(no_alias(&f, &ak), what);
		}
		/* The original direction finds the expired connection. */
		ct_clear(&f);
		if (nd_insert(&f, &c, 1, &ck, &ak)) {
			nd_run(&f, pkt(4, IPPROTO_UDP, IN4, OUT4, 5000, 53, 0,
				       false));
			ASSERT_FALSE(ct_has(&f, &ak), what);
		}
		/* A RST answering its SYN kills a translated connection,
		 * and its alias. */
		ct_clear(&f);
		c.proto = IPPROTO_TCP;
		if (nd_insert(&f, &c, now_ns() + 3600 * S, &ck, &ak)) {
			struct xnf_ct_entry e;
			int fd = xnf_table_fd(f.dp, XNF_T_CT);

			bpf_map_lookup_elem(fd, &ck, &e);
			e.status &= ~(XNF_CT_S_SEEN_REPLY | XNF_CT_S_ASSURED);
			e.tcp_state = XNF_CT_TCP_SYN_SENT;
			bpf_map_update_elem(fd, &ck, &e, BPF_EXIST);
			nd_run(&f, pkt(4, IPPROTO_TCP, OUT4, PUB4, 53, 61000,
				       0x14, false));
			ASSERT_FALSE(ct_has(&f, &ck), what);
			ASSERT_FALSE(ct_has(&f, &ak), what);
		}
		/* A SYN from the outside reopens the closed connection: it
		 * goes, with its alias, and the SYN makes a connection of
		 * its own, untranslated (no rule in this test makes one). */
		ct_clear(&f);
		if (nd_insert(&f, &c, now_ns() + 3600 * S, &ck, &ak)) {
			struct xnf_ct_entry e;
			int fd = xnf_table_fd(f.dp, XNF_T_CT);

			bpf_map_lookup_elem(fd, &ck, &e);
			e.tcp_state = XNF_CT_TCP_TIME_WAIT;
			e.tcp_flags[0] = 0x04; /* IP_CT_TCP_FLAG_CLOSE_INIT */
			bpf_map_update_elem(fd, &ck, &e, BPF_EXIST);
			nd_run(&f, pkt(4, IPPROTO_TCP, OUT4, PUB4, 53, 61000,
				       0x02, false));
			ASSERT_FALSE(ct_has(&f, &ck), what);
			ASSERT_TRUE(no_alias(&f, &ak), what);
			ASSERT_TRUE(ct_has(&f, &ak), what);
		}
		fx_close(&f);
	}
}

/* The firewall and l3fwd cache by the translated tuple: once the DNAT
 * connection is gone, the same packet to the public address is not
 * forwarded to the server by what the cache held for its flow. */
TEST(nat_dp_fcache)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct nd_conn c = { 4,	   IPPROTO_TCP, OUT4,	      PUB4,
				     SRV4, OUT4,	50001,	      80,
				     8080, 50001,	XNF_CT_S_DNAT };
		struct xnf_ct_key ck, ak;
		struct frame want;
		struct fx f;

		if (!nd_open(&f, fused))
			return;
		if (!fx_set_cfg(&f, XNF_ACT_DROP, XNF_ACT_DROP, XNF_ACT_PASS,
				XNF_ACT_DROP) ||
		    !nd_insert(&f, &c, now_ns() + 3600 * S, &ck, &ak))
			goto out;
		want = routed(&f,
			      pkt(4, IPPROTO_TCP, OUT4, SRV4, 50001, 8080, 0x10,
				  false),
			      PORT_OUT);
		if (!nd_expect(&f,
			       pkt(4, IPPROTO_TCP, OUT4, PUB4, 50001, 80, 0x10,
				   false),
			       &want, what))
			goto out;
		bpf_map_delete_elem(xnf_table_fd(f.dp, XNF_T_CT), &ck);
		bpf_map_delete_elem(xnf_table_fd(f.dp, XNF_T_CT), &ak);
		ASSERT_NEQ(nd_run(&f, pkt(4, IPPROTO_TCP, OUT4, PUB4, 50001, 80,
					  0x10, false)),
			   XDP_REDIRECT, what);
out:
		fx_close(&f);
	}
}

/* The fused chain (at most 4 NFs) has room for the nat NF with the others
 * around it; tail-called too. */
TEST(nat_dp_chains_load)
{
	static const char *const chains[] = {
		"conntrack,nat",
		"conntrack,nat,l3fwd",
		"conntrack,nat,firewall",
		"conntrack,nat,firewall,l3fwd",
		"conntrack,nat,l3fwd,l2fwd",
		"conntrack,nat,l3fwd,xsk",
		"conntrack,nat,firewall,l2fwd",
	};
	struct fx f;

	if (!fx_open(&f))
		return;
	for (size_t i = 0; i < sizeof(chains) / sizeof(chains[0]); i++) {
		ASSERT_TRUE(fx_chain(&f, chains[i], true, false), chains[i]);
		ASSERT_TRUE(fx_chain(&f, chains[i], false, false), chains[i]);
	}
	fx_close(&f);
}

/* The ct state CPU 0's last packet left (a tail-called chain). */
static int ct_state0(struct fx *f)
{
	int ncpu = libbpf_num_possible_cpus(), st = -1;
	struct xnf_pkt *pk = calloc(ncpu, sizeof(*pk));
	__u32 zero = 0;

	if (pk &&
	    !bpf_map_lookup_elem(xnf_table_fd(f->dp, XNF_T_SCRATCH), &zero, pk))
		st = pk[0].ct_state;
	free(pk);
	return st;
}

/* A translated connection's replies are the ones to its reply tuple,
 * which find it through the alias; a packet from its original
 * destination back to its original source is another flow (new), as in
 * Linux, whose reply tuple is the translated one. */
TEST(nat_dp_untranslated_reverse)
{
	struct nd_conn c = { 4,	   IPPROTO_UDP, IN4, OUT4,  OUT4,	  PUB4,
			     5000, 53,		53,  61000, XNF_CT_S_SNAT };
	cpu_set_t old, cpu0;
	struct xnf_ct_key ck, ak;
	struct fx f;

	if (!ASSERT_OK(sched_getaffinity(0, sizeof(old), &old), "CPUs"))
		return;
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (!ASSERT_OK(sched_setaffinity(0, sizeof(cpu0), &cpu0), "CPU 0"))
		return;
	if (nd_open(&f, false)) {
		if (nd_insert(&f, &c, now_ns() + 3600 * S, &ck, &ak)) {
			nd_run(&f, pkt(4, IPPROTO_UDP, OUT4, PUB4, 53, 61000, 0,
				       false));
			ASSERT_EQ(ct_state0(&f), XNF_CT_ESTABLISHED, "reply");
			nd_run(&f, pkt(4, IPPROTO_UDP, OUT4, IN4, 53, 5000, 0,
				       false));
			ASSERT_EQ(ct_state0(&f), XNF_CT_NEW, "reverse");
		}
		fx_close(&f);
	}
	sched_setaffinity(0, sizeof(old), &old);
}
