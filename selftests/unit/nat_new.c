// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The translation of a new connection (bpf/nat_new.bpf.h) and its
 * confirm (xnf_ct_confirm, bpf/conntrack_maps.bpf.h): first packets run
 * through conntrack,nat,firewall,l3fwd, tail-called and fused, with rules
 * written into xnf_nat_rules directly (the layout of
 * include/uapi/xnf_nat.h); the test reads the connection and its alias in
 * xnf_ct, the counters of xnf_ct_stats and the interface's, and for a
 * tail-called chain the packet's state CPU 0 leaves (xnf_scratch,
 * xnf_ct_pending). The egress ut1 has addresses in the kernel (what
 * masquerade takes); ut2 has none.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define SYN 0x02

/* ut1's kernel addresses: what masquerade chooses on it. */
#define NT_MASQ4 "198.51.100.254"
#define NT_MASQ6 "2001:db8:2::fe"
static const char nt_setup[] =
	"ip addr add " NT_MASQ4 "/24 dev ut1 && "
	"ip -6 addr add " NT_MASQ6 "/64 dev ut1 nodad && "
	"sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1";
static const char nt_cleanup[] =
	"ip route del 203.0.113.0/24 dev ut2 2>/dev/null; "
	"ip -6 route del 2001:db8:3::/48 dev ut2 2>/dev/null; "
	"sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0; "
	"ip -6 addr del " NT_MASQ6 "/64 dev ut1 2>/dev/null; "
	"ip addr del " NT_MASQ4 "/24 dev ut1 2>/dev/null; true";

struct frame {
	__u8 data[256];
	int len;
};

static cpu_set_t nt_cpus;
static bool nt_pinned;

static void nt_close(struct fx *f)
{
	fx_sh("%s", nt_cleanup);
	fx_close(f);
	if (nt_pinned)
		sched_setaffinity(0, sizeof(nt_cpus), &nt_cpus);
	nt_pinned = false;
}

/* Fresh tables, routes (198.51.100.0/24, 2001:db8:2::/48 to ut1;
 * 203.0.113.0/24, 2001:db8:3::/48 to ut2), a firewall that accepts, ut1's
 * addresses, and the chain; the process on CPU 0, whose per-CPU state the
 * test reads. */
static bool nt_open(struct fx *f, bool fused, bool fib)
{
	cpu_set_t set;

	memset(f, 0, sizeof(*f));
	if (!ASSERT_OK(sched_getaffinity(0, sizeof(nt_cpus), &nt_cpus),
		       "the process's CPUs"))
		return false;
	nt_pinned = true;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (ASSERT_OK(sched_setaffinity(0, sizeof(set), &set), "pin to CPU 0") &&
	    fx_open(f) && ASSERT_OK(fx_sh("%s", nt_setup), "kernel addresses") &&
	    fx_route4(f, "198.51.100.0/24", 1, XNF_RT_UNICAST) &&
	    fx_route4(f, "203.0.113.0/24", 2, XNF_RT_UNICAST) &&
	    fx_route6(f, "2001:db8:2::/48", 1, XNF_RT_UNICAST) &&
	    fx_route6(f, "2001:db8:3::/48", 2, XNF_RT_UNICAST) &&
	    fx_fw_default(f, XNF_FW_ALLOW) &&
	    fx_chain(f, "conntrack,nat,firewall,l3fwd", fused, fib))
		return true;
	nt_close(f);
	return false;
}

static void nt_addr(int fam, const char *s, __u8 out[16])
{
	memset(out, 0, 16);
	inet_pton(fam == 4 ? AF_INET : AF_INET6, s, out);
}

/* A rule of @type; the rest by the caller. */
static struct xnf_nat_rule nt_rule(__u8 type, int fam, __u32 oif)
{
	struct xnf_nat_rule r = { .type = type,
				  .family = fam == 4 ? XNF_AF_INET : XNF_AF_INET6,
				  .oif = oif };

	return r;
}

static void nt_to(struct xnf_nat_rule *r, int fam, const char *min,
		  const char *max, __u16 pmin, __u16 pmax)
{
	nt_addr(fam, min, r->to_min);
	nt_addr(fam, max ? max : min, r->to_max);
	if (pmin) {
		r->flags |= XNF_NAT_F_PORTS;
		r->to_port_min = pmin;
		r->to_port_max = pmax;
	}
}

/* Makes @rules[0..n) the active generation (1, so that a reader of
 * generation 0 would see none). */
static bool nt_rules(struct fx *f, const struct xnf_nat_rule *rules, __u32 n)
{
	int rfd = xnf_table_fd(f->dp, XNF_T_NAT_RULES);
	int hfd = xnf_table_fd(f->dp, XNF_T_NAT_HDR);
	struct xnf_nat_hdr h = { .count = n };
	__u32 i, key;

	for (i = 0; i < n; i++) {
		key = XNF_NAT_MAX_RULES + i;
		if (!ASSERT_OK(bpf_map_update_elem(rfd, &key, &rules[i], 0),
			       "write a rule"))
			return false;
	}
	key = 1;
	if (!ASSERT_OK(bpf_map_update_elem(hfd, &key, &h, 0), "count"))
		return false;
	memset(&h, 0, sizeof(h));
	h.active = 1;
	key = XNF_NAT_HDR_ACTIVE;
	return ASSERT_OK(bpf_map_update_elem(hfd, &key, &h, 0), "activate");
}

static struct frame nt_frame(int fam, __u8 proto, const char *src,
			     const char *dst, __u16 sport, __u16 dport)
{
	struct pkt_spec s = { .family = fam,
			      .proto = proto,
			      .src = src,
			      .dst = dst,
			      .sport = sport,
			      .dport = dport,
			      .frame_len = 96 };
	struct frame fr;
	__u8 *l4;

	fr.len = pkt_build(fr.data, sizeof(fr.data), &s);
	l4 = fr.data + pkt_l3_off(fr.data) + (fam == 4 ? 20 : 40);
	if (proto == IPPROTO_TCP)
		l4[13] = SYN;
	if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		l4[0] = fam == 4 ? 8 : 128; /* echo request */
		l4[4] = sport >> 8;
		l4[5] = sport & 0xff;
	}
	return fr;
}

/* The tuple (a = source, b = destination) as written, and as a key. */
static struct xnf_ct_key nt_tuple(int fam, __u8 proto, const char *src,
				  __u16 sport, const char *dst, __u16 dport)
{
	struct xnf_ct_key k = { .family = fam == 4 ? XNF_AF_INET : XNF_AF_INET6,
				.proto = proto,
				.a_port = htons(sport),
				.b_port = htons(dport) };

	nt_addr(fam, src, k.a_addr);
	nt_addr(fam, dst, k.b_addr);
	return k;
}

/* The canonical key of tuple @t: the lower endpoint is a. */
static struct xnf_ct_key nt_canon(struct xnf_ct_key t)
{
	int c = memcmp(t.a_addr, t.b_addr, 16);
	struct xnf_ct_key k = t;

	if (!c)
		c = ntohs(t.a_port) < ntohs(t.b_port) ? -1 :
		    ntohs(t.a_port) > ntohs(t.b_port) ? 1 :
							0;
	if (c > 0) {
		memcpy(k.a_addr, t.b_addr, 16);
		memcpy(k.b_addr, t.a_addr, 16);
		k.a_port = t.b_port;
		k.b_port = t.a_port;
	}
	return k;
}

static int nt_count(struct fx *f)
{
	int fd = xnf_table_fd(f->dp, XNF_T_CT), n = 0;
	struct xnf_ct_key k, next;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

static bool nt_entry(struct fx *f, const struct xnf_ct_key *k,
		     struct xnf_ct_entry *e, const char *what)
{
	return ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f->dp, XNF_T_CT), k, e),
			 what);
}

/* The programs' counters (xnf_ct_stats[XNF_CT_STATS_DP]), summed over
 * the CPUs field by field (every field is a __u64). */
static bool nt_stats(struct fx *f, struct xnf_ct_counters *cs)
{
	int ncpu = libbpf_num_possible_cpus(), cpu;
	struct xnf_ct_counters *v = calloc(ncpu, sizeof(*v));
	__u64 *sum = (__u64 *)cs;
	__u32 key = XNF_CT_STATS_DP;
	size_t i;
	bool ok;

	memset(cs, 0, sizeof(*cs));
	ok = ASSERT_TRUE(v, "memory") &&
	     ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f->dp, XNF_T_CT_STATS),
					   &key, v),
		       "xnf_ct_stats");
	for (cpu = 0; ok && cpu < ncpu; cpu++)
		for (i = 0; i < sizeof(*cs) / sizeof(__u64); i++)
			sum[i] += ((__u64 *)&v[cpu])[i];
	free(v);
	return ok;
}

static int nt_run(struct fx *f, struct frame fr)
{
	static struct fx_out out;

	if (!ASSERT_GT(fr.len, 0, "frame built") ||
	    !ASSERT_OK(fx_run(f, fr.data, fr.len, &out), "run"))
		return -1;
	return out.ret;
}

/* What a tail-called chain left on CPU 0: the packet's nat bits and the
 * pending entry. */
static bool nt_left(struct fx *f, __u8 *nat, struct xnf_ct_pending *pe)
{
	int ncpu = libbpf_num_possible_cpus();
	struct xnf_ct_pending *pes = calloc(ncpu, sizeof(*pes));
	struct xnf_pkt *pk = calloc(ncpu, sizeof(*pk));
	__u32 zero = 0;
	bool ok = ASSERT_TRUE(pk && pes, "memory") &&
		  ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f->dp, XNF_T_SCRATCH),
						&zero, pk),
			    "xnf_scratch") &&
		  ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f->dp,
							     XNF_T_CT_PENDING),
						&zero, pes),
			    "xnf_ct_pending");

	if (ok) {
		*nat = pk[0].nat;
		*pe = pes[0];
	}
	free(pk);
	free(pes);
	return ok;
}

/*
 * The connection of @orig is in the table translated to reply tuple
 * @reply with @status bits (of SNAT, DNAT, MASQ), and its alias under the
 * canonical key of @reply points back at it.
 */
static bool nt_expect(struct fx *f, struct xnf_ct_key orig,
		      struct xnf_ct_key reply, __u32 status, const char *what)
{
	__u32 mask = XNF_CT_S_SNAT | XNF_CT_S_DNAT | XNF_CT_S_MASQ;
	struct xnf_ct_key ck = nt_canon(orig), ak = nt_canon(reply);
	struct xnf_ct_entry e, a;

	return nt_entry(f, &ck, &e, what) &&
	       ASSERT_EQ(e.status & mask, status, what) &&
	       ASSERT_MEM(&e.nat, &reply, sizeof(reply), what) &&
	       nt_entry(f, &ak, &a, what) &&
	       ASSERT_EQ(a.status, XNF_CT_S_ALIAS, what) &&
	       ASSERT_EQ(a.expires, ~0ULL, what) &&
	       ASSERT_MEM(&a.nat, &ck, sizeof(ck), what);
}

/* The reply tuple of a connection whose source became @src:@sport. */
static __u16 nt_reply_port(struct fx *f, struct xnf_ct_key orig)
{
	struct xnf_ct_key ck = nt_canon(orig);
	struct xnf_ct_entry e;

	if (!nt_entry(f, &ck, &e, "the connection"))
		return 0;
	return ntohs(e.nat.b_port);
}

/* Makes the connection of @orig dead (its timeout passed). */
static bool nt_kill(struct fx *f, struct xnf_ct_key orig)
{
	int fd = xnf_table_fd(f->dp, XNF_T_CT);
	struct xnf_ct_key k = nt_canon(orig);
	struct xnf_ct_entry e;

	if (!nt_entry(f, &k, &e, "the connection to end"))
		return false;
	e.expires = 1;
	return ASSERT_OK(bpf_map_update_elem(fd, &k, &e, BPF_EXIST),
			 "end the connection");
}

#define FOR_BOTH(fused) for (int fused = 0; fused < 2; fused++)

/* masquerade takes the egress device's address (IPv4, IPv6), keeps the
 * source port, marks the connection MASQ with the device; the tail-called
 * chain shows the packet's nat bits and the tuple it leaves with. */
TEST(nat_new_masquerade)
{
	static const struct {
		int fam;
		__u8 proto;
		const char *src, *dst, *masq;
	} cases[] = {
		{ 4, IPPROTO_UDP, "192.0.2.1", "198.51.100.1", NT_MASQ4 },
		{ 4, IPPROTO_TCP, "192.0.2.1", "198.51.100.1", NT_MASQ4 },
		{ 4, IPPROTO_ICMP, "192.0.2.1", "198.51.100.1", NT_MASQ4 },
		{ 6, IPPROTO_UDP, "2001:db8:1::1", "2001:db8:2::1", NT_MASQ6 },
		{ 6, IPPROTO_ICMPV6, "2001:db8:1::1", "2001:db8:2::1", NT_MASQ6 },
	};
	size_t i;

	FOR_BOTH(fused)
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int fm = cases[i].fam;
		bool icmp = cases[i].proto == IPPROTO_ICMP ||
			    cases[i].proto == IPPROTO_ICMPV6;
		__u16 dport = icmp ? 4000 : 53;
		struct xnf_ct_key orig = nt_tuple(fm, cases[i].proto,
						  cases[i].src, 4000,
						  cases[i].dst, dport);
		struct xnf_ct_key reply = nt_tuple(fm, cases[i].proto,
						   cases[i].dst, dport,
						   cases[i].masq, 4000);
		struct xnf_ct_key xlat = nt_tuple(fm, cases[i].proto,
						  cases[i].masq, 4000,
						  cases[i].dst, dport);
		struct xnf_nat_rule r;
		struct xnf_ct_counters cs;
		struct xnf_ct_pending pe;
		char what[64];
		struct fx f;
		__u8 nat;

		snprintf(what, sizeof(what), "IPv%d proto %u %s", fm,
			 cases[i].proto, fused ? "fused" : "tail-called");
		if (!nt_open(&f, fused, false))
			return;
		r = nt_rule(XNF_NAT_MASQUERADE, fm, f.ifindex[1]);
		if (!nt_rules(&f, &r, 1))
			goto next;
		if (!ASSERT_EQ(nt_run(&f, nt_frame(fm, cases[i].proto, cases[i].src,
						   cases[i].dst, 4000, dport)),
			       XDP_REDIRECT, what) ||
		    !ASSERT_EQ(nt_count(&f), 2, what) ||
		    !nt_expect(&f, orig, reply, XNF_CT_S_SNAT | XNF_CT_S_MASQ,
			       what) ||
		    !nt_stats(&f, &cs))
			goto next;
		ASSERT_EQ(cs.nat_created, 1, what);
		ASSERT_EQ(cs.created, 1, what);
		ASSERT_EQ(cs.nat_retries, 0, what);
		if (!fused && nt_left(&f, &nat, &pe)) {
			ASSERT_EQ(nat, XNF_PKT_NAT_SRC, what);
			ASSERT_MEM(&pe.xlat, &xlat, sizeof(xlat), what);
			ASSERT_EQ(pe.entry.nat_oif, f.ifindex[1], what);
		}
next:
		nt_close(&f);
	}
}

/* Without an address on the egress device, masquerade refuses the
 * connection: dropped, reason nat_no_addr, nothing in the table. */
TEST(nat_new_masquerade_no_addr)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_counters cs;
		struct xnf_nat_rule r;
		struct xnf_stats st;
		struct fx f;

		if (!nt_open(&f, fused, false))
			return;
		r = nt_rule(XNF_NAT_MASQUERADE, 4, f.ifindex[2]);
		if (nt_rules(&f, &r, 1) &&
		    ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, "192.0.2.1",
						  "203.0.113.1", 4000, 53)),
			      XDP_DROP, what) &&
		    ASSERT_EQ(nt_count(&f), 0, what) && nt_stats(&f, &cs) &&
		    fx_stats(&f, &st)) {
			ASSERT_EQ(cs.nat_no_addr, 1, what);
			ASSERT_EQ(cs.created, 0, what);
			ASSERT_EQ(st.drop[XNF_R_NAT_NO_ADDR], 1, what);
		}
		nt_close(&f);
	}
}

/* snat to one address with a port range: a source port in the range is
 * kept when free; a second host with the same port to the same
 * destination gets another of the range (a retry counted); a port outside
 * the range is mapped into it. */
TEST(nat_new_snat_ports)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_key o1, o2, o3;
		struct xnf_ct_counters cs;
		struct xnf_nat_rule r;
		__u16 p2, p3;
		struct fx f;

		if (!nt_open(&f, fused, false))
			return;
		r = nt_rule(XNF_NAT_SNAT, 4, f.ifindex[1]);
		nt_to(&r, 4, "203.0.113.5", NULL, 40000, 40009);
		o1 = nt_tuple(4, IPPROTO_UDP, "192.0.2.1", 40005,
			      "198.51.100.1", 53);
		o2 = nt_tuple(4, IPPROTO_UDP, "192.0.2.2", 40005,
			      "198.51.100.1", 53);
		o3 = nt_tuple(4, IPPROTO_UDP, "192.0.2.3", 5555, "198.51.100.1",
			      53);
		if (!nt_rules(&f, &r, 1) ||
		    !ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, "192.0.2.1",
						   "198.51.100.1", 40005, 53)),
			       XDP_REDIRECT, what) ||
		    !nt_expect(&f, o1,
			       nt_tuple(4, IPPROTO_UDP, "198.51.100.1", 53,
					"203.0.113.5", 40005),
			       XNF_CT_S_SNAT, what) ||
		    !ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, "192.0.2.2",
						   "198.51.100.1", 40005, 53)),
			       XDP_REDIRECT, what) ||
		    !ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, "192.0.2.3",
						   "198.51.100.1", 5555, 53)),
			       XDP_REDIRECT, what))
			goto next;
		p2 = nt_reply_port(&f, o2);
		p3 = nt_reply_port(&f, o3);
		ASSERT_NEQ(p2, 40005, what);
		ASSERT_GE(p2, 40000, what);
		ASSERT_LE(p2, 40009, what);
		ASSERT_NEQ(p3, p2, what);
		ASSERT_GE(p3, 40000, what);
		ASSERT_LE(p3, 40009, what);
		nt_expect(&f, o2,
			  nt_tuple(4, IPPROTO_UDP, "198.51.100.1", 53,
				   "203.0.113.5", p2),
			  XNF_CT_S_SNAT, what);
		nt_expect(&f, o3,
			  nt_tuple(4, IPPROTO_UDP, "198.51.100.1", 53,
				   "203.0.113.5", p3),
			  XNF_CT_S_SNAT, what);
		if (ASSERT_EQ(nt_count(&f), 6, what) && nt_stats(&f, &cs)) {
			ASSERT_EQ(cs.nat_created, 3, what);
			ASSERT_GE(cs.nat_retries, 1, what);
		}
next:
		nt_close(&f);
	}
}

/* Two inside hosts with the same source port to the same destination,
 * masqueraded: the first keeps its port, the second gets another of
 * Linux's default range (1024-65535 for 40000). IPv4 and IPv6. */
TEST(nat_new_same_port)
{
	FOR_BOTH(fused)
	for (int fm = 4; fm <= 6; fm += 2) {
		const char *h1 = fm == 4 ? "192.0.2.1" : "2001:db8:1::1";
		const char *h2 = fm == 4 ? "192.0.2.2" : "2001:db8:1::2";
		const char *dst = fm == 4 ? "198.51.100.1" : "2001:db8:2::1";
		struct xnf_ct_key o1 = nt_tuple(fm, IPPROTO_TCP, h1, 40000, dst,
						80);
		struct xnf_ct_key o2 = nt_tuple(fm, IPPROTO_TCP, h2, 40000, dst,
						80);
		struct xnf_nat_rule r;
		char what[64];
		struct fx f;
		__u16 p2;

		snprintf(what, sizeof(what), "IPv%d %s", fm,
			 fused ? "fused" : "tail-called");
		if (!nt_open(&f, fused, false))
			return;
		r = nt_rule(XNF_NAT_MASQUERADE, fm, f.ifindex[1]);
		if (nt_rules(&f, &r, 1) &&
		    ASSERT_EQ(nt_run(&f, nt_frame(fm, IPPROTO_TCP, h1, dst,
						  40000, 80)),
			      XDP_REDIRECT, what) &&
		    ASSERT_EQ(nt_run(&f, nt_frame(fm, IPPROTO_TCP, h2, dst,
						  40000, 80)),
			      XDP_REDIRECT, what) &&
		    ASSERT_EQ(nt_reply_port(&f, o1), 40000, what)) {
			p2 = nt_reply_port(&f, o2);
			ASSERT_NEQ(p2, 40000, what);
			ASSERT_GE(p2, 1024, what);
			nt_expect(&f, o2,
				  nt_tuple(fm, IPPROTO_TCP, dst, 80,
					   fm == 4 ? NT_MASQ4 : NT_MASQ6, p2),
				  XNF_CT_S_SNAT | XNF_CT_S_MASQ, what);
			ASSERT_EQ(nt_count(&f), 4, what);
		}
		nt_close(&f);
	}
}

/* A range of 4 ports holds 4 connections to one destination; the fifth
 * is dropped (nat_no_port, counted), and leaves nothing in the table. */
TEST(nat_new_ports_exhausted)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_counters cs;
		struct xnf_nat_rule r;
		struct xnf_stats st;
		char src[32];
		__u32 seen = 0;
		struct fx f;
		int i;

		if (!nt_open(&f, fused, false))
			return;
		r = nt_rule(XNF_NAT_SNAT, 4, f.ifindex[1]);
		nt_to(&r, 4, "203.0.113.5", NULL, 50000, 50003);
		if (!nt_rules(&f, &r, 1))
			goto next;
		for (i = 0; i < 4; i++) {
			__u16 port;

			snprintf(src, sizeof(src), "192.0.2.%d", 10 + i);
			if (!ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, src,
							   "198.51.100.1", 7777,
							   53)),
				       XDP_REDIRECT, what))
				goto next;
			port = nt_reply_port(&f,
					     nt_tuple(4, IPPROTO_UDP, src, 7777,
						      "198.51.100.1", 53));
			if (!ASSERT_GE(port, 50000, what) ||
			    !ASSERT_LE(port, 50003, what))
				goto next;
			seen |= 1u << (port - 50000);
		}
		ASSERT_EQ(seen, 0xf, "4 connections, 4 ports");
		if (!ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, "192.0.2.20",
						   "198.51.100.1", 7777, 53)),
			       XDP_DROP, what) ||
		    !ASSERT_EQ(nt_count(&f), 8, what) || !nt_stats(&f, &cs) ||
		    !fx_stats(&f, &st))
			goto next;
		ASSERT_EQ(cs.nat_no_port, 1, what);
		ASSERT_EQ(cs.nat_created, 4, what);
		ASSERT_EQ(st.drop[XNF_R_NAT_NO_PORT], 1, what);
		/* Another destination has all 4 ports free again. */
		if (!ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, "192.0.2.20",
						   "198.51.100.2", 7777, 53)),
			       XDP_REDIRECT, what))
			goto next;
		/* A dead connection's port (and its alias) can be taken. */
		if (!nt_kill(&f, nt_tuple(4, IPPROTO_UDP, "192.0.2.11", 7777,
					  "198.51.100.1", 53)) ||
		    !ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, "192.0.2.21",
						   "198.51.100.1", 7777, 53)),
			       XDP_REDIRECT, what) ||
		    !ASSERT_GE(nt_reply_port(&f, nt_tuple(4, IPPROTO_UDP,
							  "192.0.2.21", 7777,
							  "198.51.100.1", 53)),
			       50000, what) ||
		    !nt_stats(&f, &cs))
			goto next;
		ASSERT_EQ(cs.nat_no_port, 1, what);
		ASSERT_EQ(cs.nat_created, 6, what);
next:
		nt_close(&f);
	}
}

/* dnat by iif, proto and dport to an address and port; the snat and
 * masquerade rules then see the egress of the translated destination
 * (ut1, where the original one goes out ut2); another dport is left
 * alone. */
TEST(nat_new_dnat)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_key orig = nt_tuple(4, IPPROTO_TCP, "192.0.2.1",
						  40000, "203.0.113.1", 8080);
		struct xnf_ct_key other = nt_tuple(4, IPPROTO_TCP, "192.0.2.1",
						   40000, "203.0.113.1", 8081);
		struct xnf_ct_counters cs;
		struct xnf_nat_rule r[2];
		struct xnf_ct_pending pe;
		struct xnf_ct_entry e;
		struct xnf_ct_key k;
		struct fx f;
		__u8 nat;

		if (!nt_open(&f, fused, false))
			return;
		r[0] = nt_rule(XNF_NAT_DNAT, 4, 0);
		r[0].iif = f.ifindex[0];
		r[0].proto = IPPROTO_TCP;
		r[0].dport_min = 8080;
		r[0].dport_max = 8080;
		nt_to(&r[0], 4, "198.51.100.7", NULL, 80, 80);
		r[1] = nt_rule(XNF_NAT_MASQUERADE, 4, f.ifindex[1]);
		if (!nt_rules(&f, r, 1) ||
		    !ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_TCP, "192.0.2.1",
						   "203.0.113.1", 40000, 8080)),
			       XDP_REDIRECT, what) ||
		    !nt_expect(&f, orig,
			       nt_tuple(4, IPPROTO_TCP, "198.51.100.7", 80,
					"192.0.2.1", 40000),
			       XNF_CT_S_DNAT, what))
			goto next;
		if (!fused && nt_left(&f, &nat, &pe)) {
			struct xnf_ct_key xlat = nt_tuple(4, IPPROTO_TCP,
							  "192.0.2.1", 40000,
							  "198.51.100.7", 80);

			ASSERT_EQ(nat, XNF_PKT_NAT_DST, what);
			ASSERT_MEM(&pe.xlat, &xlat, sizeof(xlat), what);
		}
		/* Another port: no translation, one entry. */
		k = nt_canon(other);
		if (!ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_TCP, "192.0.2.1",
						   "203.0.113.1", 40000, 8081)),
			       XDP_REDIRECT, what) ||
		    !nt_entry(&f, &k, &e, what) ||
		    !ASSERT_EQ(e.status & (XNF_CT_S_SNAT | XNF_CT_S_DNAT), 0,
			       what) ||
		    !ASSERT_EQ(nt_count(&f), 3, what))
			goto next;
		/* With masquerade on ut1, the egress of 198.51.100.7. */
		if (!nt_rules(&f, r, 2) ||
		    !ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_TCP, "192.0.2.2",
						   "203.0.113.1", 40000, 8080)),
			       XDP_REDIRECT, what) ||
		    !nt_expect(&f,
			       nt_tuple(4, IPPROTO_TCP, "192.0.2.2", 40000,
					"203.0.113.1", 8080),
			       nt_tuple(4, IPPROTO_TCP, "198.51.100.7", 80,
					NT_MASQ4, 40000),
			       XNF_CT_S_DNAT | XNF_CT_S_SNAT | XNF_CT_S_MASQ,
			       what) ||
		    !nt_stats(&f, &cs))
			goto next;
		ASSERT_EQ(cs.nat_created, 2, what);
next:
		nt_close(&f);
	}
}

/* A rule that does not match (its saddr) leaves the connection
 * untranslated; of two that match, the first decides; IPv6 snat. */
TEST(nat_new_match_order)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_key o = nt_tuple(4, IPPROTO_UDP, "192.0.2.1",
					       4000, "198.51.100.1", 53);
		struct xnf_ct_key o6 = nt_tuple(6, IPPROTO_UDP, "2001:db8:1::1",
						4000, "2001:db8:2::1", 53);
		struct xnf_ct_counters cs;
		struct xnf_nat_rule r[3];
		struct xnf_ct_entry e;
		struct xnf_ct_key k;
		struct fx f;

		if (!nt_open(&f, fused, false))
			return;
		r[0] = nt_rule(XNF_NAT_SNAT, 4, f.ifindex[1]);
		r[0].src_plen = 25;
		nt_addr(4, "192.0.2.128", r[0].src);
		nt_to(&r[0], 4, "203.0.113.5", NULL, 0, 0);
		r[1] = nt_rule(XNF_NAT_SNAT, 4, 0);
		nt_to(&r[1], 4, "203.0.113.6", NULL, 0, 0);
		r[2] = nt_rule(XNF_NAT_SNAT, 6, f.ifindex[1]);
		nt_to(&r[2], 6, "2001:db8:3::6", NULL, 0, 0);
		/* Only the first: it does not match. */
		k = nt_canon(o);
		if (!nt_rules(&f, r, 1) ||
		    !ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, "192.0.2.1",
						   "198.51.100.1", 4000, 53)),
			       XDP_REDIRECT, what) ||
		    !ASSERT_EQ(nt_count(&f), 1, what) ||
		    !nt_entry(&f, &k, &e, what) ||
		    !ASSERT_EQ(e.status & (XNF_CT_S_SNAT | XNF_CT_S_DNAT), 0,
			       what))
			goto next;
		/* The first rule matches 192.0.2.200; the second the rest. */
		if (!nt_rules(&f, r, 3) ||
		    !ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, "192.0.2.200",
						   "198.51.100.1", 4000, 53)),
			       XDP_REDIRECT, what) ||
		    !nt_expect(&f,
			       nt_tuple(4, IPPROTO_UDP, "192.0.2.200", 4000,
					"198.51.100.1", 53),
			       nt_tuple(4, IPPROTO_UDP, "198.51.100.1", 53,
					"203.0.113.5", 4000),
			       XNF_CT_S_SNAT, what) ||
		    !ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP, "192.0.2.2",
						   "198.51.100.1", 4000, 53)),
			       XDP_REDIRECT, what) ||
		    !nt_expect(&f,
			       nt_tuple(4, IPPROTO_UDP, "192.0.2.2", 4000,
					"198.51.100.1", 53),
			       nt_tuple(4, IPPROTO_UDP, "198.51.100.1", 53,
					"203.0.113.6", 4000),
			       XNF_CT_S_SNAT, what) ||
		    !ASSERT_EQ(nt_run(&f, nt_frame(6, IPPROTO_UDP, "2001:db8:1::1",
						   "2001:db8:2::1", 4000, 53)),
			       XDP_REDIRECT, what) ||
		    !nt_expect(&f, o6,
			       nt_tuple(6, IPPROTO_UDP, "2001:db8:2::1", 53,
					"2001:db8:3::6", 4000),
			       XNF_CT_S_SNAT, what) ||
		    !nt_stats(&f, &cs))
			goto next;
		ASSERT_EQ(cs.nat_created, 3, what);
next:
		nt_close(&f);
	}
}

/* snat to an address range: the address is of the range; persistent
 * gives a source the same one for every destination. */
TEST(nat_new_snat_range)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_nat_rule r;
		struct fx f;
		__u8 first[4];
		int i;

		if (!nt_open(&f, fused, false))
			return;
		r = nt_rule(XNF_NAT_SNAT, 4, f.ifindex[1]);
		r.flags = XNF_NAT_F_PERSISTENT;
		nt_to(&r, 4, "203.0.113.10", "203.0.113.20", 0, 0);
		if (!nt_rules(&f, &r, 1))
			goto next;
		for (i = 0; i < 8; i++) {
			char dst[32];
			struct xnf_ct_key k;
			struct xnf_ct_entry e;

			snprintf(dst, sizeof(dst), "198.51.100.%d", 1 + i);
			k = nt_canon(nt_tuple(4, IPPROTO_UDP, "192.0.2.1", 4000,
					      dst, 53));
			if (!ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP,
							   "192.0.2.1", dst,
							   4000, 53)),
				       XDP_REDIRECT, what) ||
			    !nt_entry(&f, &k, &e, what) ||
			    !ASSERT_EQ(e.nat.b_addr[0], 203, what) ||
			    !ASSERT_EQ(e.nat.b_addr[2], 113, what) ||
			    !ASSERT_GE(e.nat.b_addr[3], 10, what) ||
			    !ASSERT_LE(e.nat.b_addr[3], 20, what))
				goto next;
			if (!i)
				memcpy(first, e.nat.b_addr, 4);
			ASSERT_MEM(e.nat.b_addr, first, 4, "persistent");
		}
next:
		nt_close(&f);
	}
}

/* In fib mode, masquerade finds the egress by the kernel's FIB, as l3fwd
 * does, and takes its address; a destination the FIB forwards out of
 * another device is not translated. */
TEST(nat_new_masquerade_fib)
{
	FOR_BOTH(fused)
	for (int fm = 4; fm <= 6; fm += 2) {
		const char *src = fm == 4 ? "192.0.2.1" : "2001:db8:1::1";
		const char *dst = fm == 4 ? "198.51.100.1" : "2001:db8:2::1";
		const char *far = fm == 4 ? "203.0.113.1" : "2001:db8:3::1";
		const char *masq = fm == 4 ? NT_MASQ4 : NT_MASQ6;
		struct xnf_ct_key o = nt_tuple(fm, IPPROTO_UDP, src, 4000, dst,
					       53);
		struct xnf_ct_key k = nt_canon(
			nt_tuple(fm, IPPROTO_UDP, src, 4000, far, 53));
		struct xnf_nat_rule r;
		struct xnf_ct_entry e;
		char what[64];
		struct fx f;

		snprintf(what, sizeof(what), "IPv%d %s", fm,
			 fused ? "fused" : "tail-called");
		if (!nt_open(&f, fused, true))
			return;
		r = nt_rule(XNF_NAT_MASQUERADE, fm, f.ifindex[1]);
		if (!ASSERT_OK(fx_sh("ip route add 203.0.113.0/24 dev ut2 && "
				     "ip -6 route add 2001:db8:3::/48 dev ut2"),
			       "kernel routes to ut2"))
			goto next;
		/* No neighbour: l3fwd passes it to the kernel (no_neigh),
		 * after the firewall confirmed it. */
		if (nt_rules(&f, &r, 1) &&
		    ASSERT_EQ(nt_run(&f, nt_frame(fm, IPPROTO_UDP, src, dst,
						  4000, 53)),
			      XDP_PASS, what) &&
		    nt_expect(&f, o,
			      nt_tuple(fm, IPPROTO_UDP, dst, 53, masq, 4000),
			      XNF_CT_S_SNAT | XNF_CT_S_MASQ, what) &&
		    ASSERT_EQ(nt_run(&f, nt_frame(fm, IPPROTO_UDP, src, far,
						  4000, 53)),
			      XDP_PASS, what) &&
		    nt_entry(&f, &k, &e, what))
			ASSERT_EQ(e.status & XNF_CT_S_SNAT, 0, what);
next:
		nt_close(&f);
	}
}

/* random: a source port is remapped even when free (three connections:
 * that all three land on their own port again by chance is 1 in 2^47). */
TEST(nat_new_random)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_nat_rule r;
		int i, kept = 0;
		struct fx f;

		if (!nt_open(&f, fused, false))
			return;
		r = nt_rule(XNF_NAT_MASQUERADE, 4, f.ifindex[1]);
		r.flags = XNF_NAT_F_RANDOM;
		if (!nt_rules(&f, &r, 1))
			goto next;
		for (i = 0; i < 3; i++) {
			__u16 port;

			if (!ASSERT_EQ(nt_run(&f, nt_frame(4, IPPROTO_UDP,
							   "192.0.2.1",
							   "198.51.100.1",
							   40000 + i, 53)),
				       XDP_REDIRECT, what))
				goto next;
			port = nt_reply_port(&f, nt_tuple(4, IPPROTO_UDP,
							  "192.0.2.1", 40000 + i,
							  "198.51.100.1", 53));
			ASSERT_GE(port, 1024, what);
			kept += port == 40000 + i;
		}
		ASSERT_LT(kept, 3, what);
next:
		nt_close(&f);
	}
}

/* IPv6 dnat (NAT66) to an address and port. */
TEST(nat_new_dnat6)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_nat_rule r;
		struct fx f;

		if (!nt_open(&f, fused, false))
			return;
		r = nt_rule(XNF_NAT_DNAT, 6, 0);
		r.proto = IPPROTO_TCP;
		r.dport_min = 8000;
		r.dport_max = 8099;
		nt_to(&r, 6, "2001:db8:2::7", NULL, 80, 80);
		if (nt_rules(&f, &r, 1) &&
		    ASSERT_EQ(nt_run(&f, nt_frame(6, IPPROTO_TCP, "2001:db8:1::1",
						  "2001:db8:3::1", 40000, 8043)),
			      XDP_REDIRECT, what))
			nt_expect(&f,
				  nt_tuple(6, IPPROTO_TCP, "2001:db8:1::1",
					   40000, "2001:db8:3::1", 8043),
				  nt_tuple(6, IPPROTO_TCP, "2001:db8:2::7", 80,
					   "2001:db8:1::1", 40000),
				  XNF_CT_S_DNAT, what);
		nt_close(&f);
	}
}

/* A multipath route: masquerade on ut1 translates exactly the flows
 * whose path l3fwd sends out of ut1 (paths 0 and 2; 1 and 3 leave on
 * ut2), by the same flow hash. */
TEST(nat_new_multipath)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		static struct fx_out out;
		int k, on[2] = { 0, 0 };
		struct xnf_nat_rule r;
		struct fx f;

		if (!nt_open(&f, fused, false))
			return;
		r = nt_rule(XNF_NAT_MASQUERADE, 4, f.ifindex[1]);
		if (!nt_rules(&f, &r, 1) ||
		    !fx_mp_route(&f, "198.51.100.0/24", 0xf))
			goto next;
		for (k = 0; k < 16; k++) {
			struct frame fr = nt_frame(4, IPPROTO_UDP, "192.0.2.1",
						   "198.51.100.1", 5000 + k, 53);
			struct xnf_ct_key ck = nt_canon(
				nt_tuple(4, IPPROTO_UDP, "192.0.2.1", 5000 + k,
					 "198.51.100.1", 53));
			struct xnf_ct_entry e;
			int path;

			if (!ASSERT_OK(fx_run(&f, fr.data, fr.len, &out), what) ||
			    !ASSERT_EQ(out.ret, XDP_REDIRECT, what) ||
			    !nt_entry(&f, &ck, &e, what))
				goto next;
			path = fx_mp_path_of(out.data);
			if (!ASSERT_GE(path, 0, what) ||
			    !ASSERT_EQ(!!(e.status & XNF_CT_S_SNAT),
				       path % 2 == 0, what))
				goto next;
			on[path % 2]++;
		}
		/* Both devices had flows. */
		ASSERT_GT(on[0], 0, what);
		ASSERT_GT(on[1], 0, what);
next:
		nt_close(&f);
	}
}
