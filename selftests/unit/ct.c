// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ct.c - the connection table as `xnf ct` shows it (lib/ct.c): entries
 * written into a table of the uapi layout, listed by filters (the
 * original direction's tuple, the timeout left, dead entries left out),
 * flushed by a filter (what is counted), and the counters' eviction
 * arithmetic; translated connections (a connection and its alias, as
 * xnf_ct_confirm() writes them): listed once with their reply tuple,
 * flushed with their alias, orphan aliases flushed, counted apart.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ct.h"
#include "ct_priv.h"
#include "conf.h"
#include "fixture.h"

#define NS     1000000000ULL
#define CT_MAX 4096
#define NOW    (1000 * NS)

struct ct_maps {
	int ct, stats;
};

static bool ct_maps_open(struct ct_maps *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, lru, .map_flags = 0);

	m->ct = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "xnf_ct",
			       sizeof(struct xnf_ct_key),
			       sizeof(struct xnf_ct_entry), CT_MAX, &lru);
	m->stats = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "xnf_ct_stats",
				  sizeof(__u32), sizeof(struct xnf_ct_counters),
				  __XNF_CT_STATS_MAX, NULL);
	return ASSERT_GE(m->ct, 0, "create xnf_ct") &&
	       ASSERT_GE(m->stats, 0, "create xnf_ct_stats");
}

static void ct_maps_close(struct ct_maps *m)
{
	if (m->ct >= 0)
		close(m->ct);
	if (m->stats >= 0)
		close(m->stats);
}

/* The time ct_put() writes entries at: NOW for the calls on maps, the
 * clock itself for the calls on an instance. */
static __u64 ct_base = NOW;

static void addr(int family, const char *s, __u8 out[16])
{
	memset(out, 0, 16);
	inet_pton(family == XNF_AF_INET ? AF_INET : AF_INET6, s, out);
}

/* The entry of the connection src:sport -> dst:dport, made canonical as
 * the conntrack NF makes it (the lower endpoint is a), expiring @left_ns
 * after NOW. */
static bool ct_put(int fd, int family, __u8 proto, const char *src, __u16 sport,
		   const char *dst, __u16 dport, __u8 tcp_state, __u32 status,
		   long long left_ns, __u64 pkts_orig, __u64 pkts_reply)
{
	struct xnf_ct_entry e = {};
	struct xnf_ct_key k = {};
	__u8 s[16], d[16];
	int c;

	addr(family, src, s);
	addr(family, dst, d);
	c = memcmp(s, d, 16);
	if (!c)
		c = sport < dport ? -1 : sport > dport;
	k.family = family;
	k.proto = proto;
	memcpy(c < 0 ? k.a_addr : k.b_addr, s, 16);
	memcpy(c < 0 ? k.b_addr : k.a_addr, d, 16);
	k.a_port = htons(c < 0 ? sport : dport);
	k.b_port = htons(c < 0 ? dport : sport);
	e.expires = ct_base + left_ns;
	e.created = ct_base - NS;
	e.status = status | (c < 0 ? 0 : XNF_CT_S_ORIG_B);
	e.tcp_state = tcp_state;
	e.packets[XNF_CT_DIR_ORIG] = pkts_orig;
	e.packets[XNF_CT_DIR_REPLY] = pkts_reply;
	e.bytes[XNF_CT_DIR_ORIG] = pkts_orig * 100;
	e.bytes[XNF_CT_DIR_REPLY] = pkts_reply * 60;
	return ASSERT_OK(bpf_map_update_elem(fd, &k, &e, BPF_NOEXIST),
			 "write an entry");
}

#define ASSURED (XNF_CT_S_ASSURED | XNF_CT_S_SEEN_REPLY)

/* Four live entries and a dead one. */
static bool ct_fill(int fd)
{
	/* a = the originator */
	return ct_put(fd, XNF_AF_INET, IPPROTO_TCP, "192.0.2.1", 40000,
		      "198.51.100.2", 22, XNF_CT_TCP_ESTABLISHED, ASSURED,
		      431999 * NS + NS / 2, 3, 2) &&
	       /* b = the originator */
	       ct_put(fd, XNF_AF_INET, IPPROTO_TCP, "198.51.100.7", 5000,
		      "192.0.2.9", 80, XNF_CT_TCP_SYN_SENT, 0, 120 * NS, 1, 0) &&
	       ct_put(fd, XNF_AF_INET6, IPPROTO_UDP, "2001:db8::1", 53000,
		      "2001:db8::2", 53, 0, 0, 29 * NS + 1, 1, 0) &&
	       ct_put(fd, XNF_AF_INET, IPPROTO_ICMP, "192.0.2.1", 7,
		      "203.0.113.5", 7, 0, XNF_CT_S_SEEN_REPLY, 30 * NS, 1, 1) &&
	       /* dead: expired one ns ago, and exactly now */
	       ct_put(fd, XNF_AF_INET, IPPROTO_UDP, "192.0.2.3", 1000,
		      "203.0.113.3", 53, 0, ASSURED, -1, 5, 5) &&
	       ct_put(fd, XNF_AF_INET, IPPROTO_UDP, "192.0.2.3", 1001,
		      "203.0.113.3", 53, 0, ASSURED, 0, 5, 5);
}

static __u32 ct_count(int fd, const struct xnf_ct_filter *f)
{
	struct xnf_ct_conn *c;
	__u32 n = 0;

	if (!ASSERT_OK(xnf_ct_list_fd(fd, f, NOW, &c, &n), "list"))
		return ~0U;
	free(c);
	return n;
}

TEST(ct_list)
{
	struct ct_maps m = { -1, -1 };
	struct xnf_ct_conn *c = NULL, *syn = NULL, *est = NULL;
	__u8 want[16];
	__u32 n, i;

	if (!ct_maps_open(&m) || !ct_fill(m.ct))
		goto out;
	if (!ASSERT_OK(xnf_ct_list_fd(m.ct, NULL, NOW, &c, &n), "list all"))
		goto out;
	/* The two dead ones are left out. */
	ASSERT_EQ(n, 4, "live entries");
	for (i = 0; i < n; i++) {
		if (c[i].proto == IPPROTO_TCP && c[i].dport == 80)
			syn = &c[i];
		if (c[i].proto == IPPROTO_TCP && c[i].dport == 22)
			est = &c[i];
	}
	if (!ASSERT_TRUE(syn && est, "both TCP entries listed"))
		goto out;
	/* The originator was the key's b side: the tuple is turned round. */
	addr(XNF_AF_INET, "198.51.100.7", want);
	ASSERT_MEM(syn->src, want, 16, "SYN_SENT src");
	addr(XNF_AF_INET, "192.0.2.9", want);
	ASSERT_MEM(syn->dst, want, 16, "SYN_SENT dst");
	ASSERT_EQ(syn->sport, 5000, "SYN_SENT sport");
	ASSERT_EQ(syn->tcp_state, XNF_CT_TCP_SYN_SENT, "SYN_SENT state");
	ASSERT_EQ(syn->timeout, 120, "SYN_SENT timeout left");
	addr(XNF_AF_INET, "192.0.2.1", want);
	ASSERT_MEM(est->src, want, 16, "ESTABLISHED src");
	ASSERT_EQ(est->sport, 40000, "ESTABLISHED sport");
	/* Whole seconds, rounded down, as conntrack(8) prints them. */
	ASSERT_EQ(est->timeout, 431999, "ESTABLISHED timeout left");
	ASSERT_EQ(est->packets[XNF_CT_DIR_ORIG], 3, "orig packets");
	ASSERT_EQ(est->packets[XNF_CT_DIR_REPLY], 2, "reply packets");
	ASSERT_EQ(est->bytes[XNF_CT_DIR_REPLY], 120, "reply bytes");
	ASSERT_TRUE(est->status & XNF_CT_S_ASSURED, "assured");
	/* Past its expiry a second later, by the clock it is read with. */
	ASSERT_EQ(ct_count(m.ct, NULL), 4, "live now");
	free(c);
	c = NULL;
	ASSERT_OK(xnf_ct_list_fd(m.ct, NULL, NOW + 120 * NS, &c, &n),
		  "list later");
	ASSERT_EQ(n, 1, "only the established one lives 120 s on");
out:
	free(c);
	ct_maps_close(&m);
}

TEST(ct_filter)
{
	struct ct_maps m = { -1, -1 };
	struct xnf_ct_filter f;
	char err[256];

	if (!ct_maps_open(&m) || !ct_fill(m.ct))
		goto out;
	SUBTEST("family") {
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_FAMILY,
					    .family = XNF_AF_INET6 };
		ASSERT_EQ(ct_count(m.ct, &f), 1, "inet6");
		f.family = XNF_AF_INET;
		ASSERT_EQ(ct_count(m.ct, &f), 3, "inet");
	}
	SUBTEST("proto") {
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_PROTO,
					    .proto = IPPROTO_TCP };
		ASSERT_EQ(ct_count(m.ct, &f), 2, "tcp");
		f.proto = IPPROTO_ICMP;
		ASSERT_EQ(ct_count(m.ct, &f), 1, "icmp");
	}
	SUBTEST("addresses") {
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_FAMILY |
						    XNF_CT_F_ADDR,
					    .family = XNF_AF_INET };
		addr(XNF_AF_INET, "192.0.2.9", f.addr);
		ASSERT_EQ(ct_count(m.ct, &f), 1, "addr, either side");
		f.what = XNF_CT_F_FAMILY | XNF_CT_F_SRC;
		memcpy(f.src, f.addr, 16);
		ASSERT_EQ(ct_count(m.ct, &f), 0, "src: it is the destination");
		f.what = XNF_CT_F_FAMILY | XNF_CT_F_DST;
		memcpy(f.dst, f.addr, 16);
		ASSERT_EQ(ct_count(m.ct, &f), 1, "dst");
		addr(XNF_AF_INET, "192.0.2.1", f.addr);
		f.what = XNF_CT_F_FAMILY | XNF_CT_F_ADDR;
		ASSERT_EQ(ct_count(m.ct, &f), 2, "two connections from .1");
		/* The same bytes of another family do not match. */
		f.family = XNF_AF_INET6;
		ASSERT_EQ(ct_count(m.ct, &f), 0, "family of the address");
	}
	SUBTEST("ports") {
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_PORT, .port = 22 };
		ASSERT_EQ(ct_count(m.ct, &f), 1, "port 22");
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_SPORT, .sport = 22 };
		ASSERT_EQ(ct_count(m.ct, &f), 0, "sport 22");
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_DPORT, .dport = 22 };
		ASSERT_EQ(ct_count(m.ct, &f), 1, "dport 22");
		f.dport = 53;
		ASSERT_EQ(ct_count(m.ct, &f), 1, "dport 53 (the dead ones not)");
	}
	SUBTEST("states") {
		f = (struct xnf_ct_filter){
			.what = XNF_CT_F_TCP_STATE,
			.tcp_states = 1U << XNF_CT_TCP_ESTABLISHED,
		};
		ASSERT_EQ(ct_count(m.ct, &f), 1, "ESTABLISHED");
		f.tcp_states |= 1U << XNF_CT_TCP_SYN_SENT;
		ASSERT_EQ(ct_count(m.ct, &f), 2, "SYN_SENT,ESTABLISHED");
		/* TCP's NONE is no state of a UDP entry. */
		f.tcp_states = 1U << XNF_CT_TCP_NONE;
		ASSERT_EQ(ct_count(m.ct, &f), 0, "NONE");
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_ASSURED };
		ASSERT_EQ(ct_count(m.ct, &f), 1, "assured");
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_UNREPLIED };
		ASSERT_EQ(ct_count(m.ct, &f), 2, "unreplied");
		f.what |= XNF_CT_F_PROTO;
		f.proto = IPPROTO_UDP;
		ASSERT_EQ(ct_count(m.ct, &f), 1, "unreplied udp");
	}
	SUBTEST("refused") {
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_SRC };
		ASSERT_EQ(xnf_ct_filter_check(&f, err, sizeof(err)), -EINVAL,
			  "an address without its family");
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_TCP_STATE };
		ASSERT_EQ(xnf_ct_filter_check(&f, err, sizeof(err)), -EINVAL,
			  "no state");
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_FAMILY, .family = 5 };
		ASSERT_EQ(xnf_ct_filter_check(&f, err, sizeof(err)), -EINVAL,
			  "family 5");
	}
	SUBTEST("names") {
		int s;

		for (s = 0; s < __XNF_CT_TCP_MAX; s++)
			ASSERT_EQ(xnf_ct_tcp_state_parse(xnf_ct_tcp_state_name(s)),
				  s, "state name round trip");
		ASSERT_EQ(xnf_ct_tcp_state_parse("time_wait"),
			  XNF_CT_TCP_TIME_WAIT, "any case");
		ASSERT_EQ(xnf_ct_tcp_state_parse("LISTEN"), -1, "no LISTEN");
		ASSERT_TRUE(!xnf_ct_tcp_state_name(__XNF_CT_TCP_MAX), "past");
	}
out:
	ct_maps_close(&m);
}

static bool ct_counters(int fd, __u32 key, struct xnf_ct_counters *v, int ncpus)
{
	return ASSERT_OK(bpf_map_lookup_elem(fd, &key, v), "read counters") &&
	       ASSERT_GT(ncpus, 0, "cpus");
}

TEST(ct_flush_stats)
{
	struct ct_maps m = { -1, -1 };
	int ncpus = libbpf_num_possible_cpus(), cpu;
	struct xnf_ct_counters *v = NULL;
	struct xnf_ct_filter f;
	struct xnf_ct_stats st;
	__u64 flushed;
	__u32 key = 0;

	v = calloc(ncpus > 0 ? ncpus : 1, sizeof(*v));
	if (!ASSERT_TRUE(v, "alloc") || !ct_maps_open(&m) || !ct_fill(m.ct))
		goto out;
	/* What the conntrack NF counted, spread over the CPUs: 12 made, one
	 * replaced when found dead, one deleted by a packet. */
	for (cpu = 0; cpu < ncpus; cpu++) {
		v[cpu].created = cpu ? 0 : 9;
		v[cpu].searched = 10;
		v[cpu].found = 4;
	}
	v[ncpus - 1].created += 3;
	v[ncpus - 1].expired = 1;
	v[ncpus - 1].deleted = 1;
	v[0].invalid = 2;
	if (!ASSERT_OK(bpf_map_update_elem(m.stats, &key, v, BPF_ANY),
		       "write counters"))
		goto out;

	/* Only the live TCP entries that match go: both of them, counted on
	 * CPU 0; the others stay. */
	f = (struct xnf_ct_filter){ .what = XNF_CT_F_PROTO, .proto = IPPROTO_TCP };
	ASSERT_OK(xnf_ct_flush_fd(m.ct, m.stats, &f, NOW, &flushed), "flush tcp");
	ASSERT_EQ(flushed, 2, "flushed");
	ASSERT_EQ(ct_count(m.ct, NULL), 2, "left");
	ASSERT_EQ(ct_count(m.ct, &f), 0, "no tcp left");
	/* Into libxnf's entry: the programs' counters, which every CPU
	 * writes, are not written back. */
	if (!ct_counters(m.stats, XNF_CT_STATS_LIB, v, ncpus))
		goto out;
	ASSERT_EQ(v[0].flushed, 2, "CPU 0's flushed");
	if (!ct_counters(m.stats, XNF_CT_STATS_DP, v, ncpus))
		goto out;
	ASSERT_EQ(v[0].flushed, 0, "not in the programs' entry");
	ASSERT_EQ(v[0].created, 9, "the rest of CPU 0's counters kept");
	ASSERT_EQ(v[ncpus - 1].created, ncpus > 1 ? 3 : 12, "other CPUs kept");

	/* A filter that matches nothing flushes nothing, and counts none. */
	f.proto = IPPROTO_SCTP;
	ASSERT_OK(xnf_ct_flush_fd(m.ct, m.stats, &f, NOW, &flushed),
		  "flush sctp");
	ASSERT_EQ(flushed, 0, "nothing flushed");

	/* 6 written, 2 flushed: 2 live and 2 dead present. evicted = created
	 * 12 - expired 1 - deleted 1 - flushed 2 - present 4 = 4. */
	ASSERT_OK(xnf_ct_stats_fd(m.ct, m.stats, NOW, &st), "stats");
	ASSERT_EQ(st.entries, 2, "live entries");
	ASSERT_EQ(st.dead, 2, "dead entries");
	ASSERT_EQ(st.max, CT_MAX, "max");
	ASSERT_EQ(st.c.created, 12, "created, summed");
	ASSERT_EQ(st.c.flushed, 2, "flushed, summed");
	ASSERT_EQ(st.c.searched, 10ULL * ncpus, "searched, summed");
	ASSERT_EQ(st.c.invalid, 2, "invalid");
	ASSERT_EQ(st.evicted, 4, "evicted");

	/* Flush all: the live ones; the dead are no connection to remove. */
	ASSERT_OK(xnf_ct_flush_fd(m.ct, m.stats, NULL, NOW, &flushed),
		  "flush all");
	ASSERT_EQ(flushed, 2, "flushed all");
	ASSERT_OK(xnf_ct_stats_fd(m.ct, m.stats, NOW, &st), "stats again");
	ASSERT_EQ(st.entries, 0, "none live");
	ASSERT_EQ(st.c.flushed, 4, "flushed in all");
	ASSERT_EQ(st.evicted, 4, "a flush is no eviction");

	/* Counted before the table was read: never below 0. */
	for (cpu = 0; cpu < ncpus; cpu++)
		memset(&v[cpu], 0, sizeof(v[cpu]));
	ASSERT_OK(bpf_map_update_elem(m.stats, &key, v, BPF_ANY), "zero");
	ASSERT_OK(xnf_ct_stats_fd(m.ct, m.stats, NOW, &st), "stats zero");
	ASSERT_EQ(st.evicted, 0, "no negative eviction");
out:
	free(v);
	ct_maps_close(&m);
}

/* The same calls on an instance: its tables, a reader refused a flush. */
TEST(ct_instance)
{
	struct xnf_ct_conn *c = NULL;
	struct xnf_ct_filter f = { .what = XNF_CT_F_PROTO, .proto = IPPROTO_UDP };
	struct xnf_dp *rd = NULL;
	struct xnf_ct_stats st;
	char err[512] = "";
	__u64 flushed;
	__u32 n;
	struct fx f_;

	if (!fx_open(&f_))
		return;
	ct_base = xnf_ct_now();
	if (!ct_fill(xnf_table_fd(f_.dp, XNF_T_CT)))
		goto out;
	ASSERT_OK(xnf_ct_list(f_.dp, NULL, &c, &n, err, sizeof(err)), err);
	ASSERT_EQ(n, 4, "live entries");
	ASSERT_OK(xnf_ct_stats_read(f_.dp, &st, err, sizeof(err)), err);
	ASSERT_EQ(st.entries, 4, "stats: live");
	ASSERT_EQ(st.dead, 2, "stats: dead");
	ASSERT_EQ(st.max, XNF_CT_MAX_DEFAULT, "stats: the table's size");
	if (!ASSERT_OK(xnf_open(FX_ROOT, XNF_OPEN_READ, 0, &rd, err, sizeof(err)),
		       err))
		goto out;
	ASSERT_EQ(xnf_ct_flush(rd, &f, &flushed, err, sizeof(err)), -EPERM,
		  "a reader flushes nothing");
	ASSERT_OK(xnf_ct_flush(f_.dp, &f, &flushed, err, sizeof(err)), err);
	ASSERT_EQ(flushed, 1, "the live UDP entry");
	ASSERT_OK(xnf_ct_stats_read(rd, &st, err, sizeof(err)), err);
	ASSERT_EQ(st.entries, 3, "left");
	ASSERT_EQ(st.c.flushed, 1, "counted");
	free(c);
	c = NULL;
	f.what = XNF_CT_F_SRC;
	ASSERT_EQ(xnf_ct_list(rd, &f, &c, &n, err, sizeof(err)), -EINVAL,
		  "an address without its family");
out:
	free(c);
	if (rd)
		xnf_dp_close(rd);
	ct_base = NOW;
	fx_close(&f_);
}

/* ---- translated connections: a connection and its alias ---- */

/* A tuple (a = source, b = destination, not ordered). */
static void tuple(struct xnf_ct_key *t, int family, __u8 proto, const char *src,
		  __u16 sport, const char *dst, __u16 dport)
{
	memset(t, 0, sizeof(*t));
	t->family = family;
	t->proto = proto;
	addr(family, src, t->a_addr);
	addr(family, dst, t->b_addr);
	t->a_port = htons(sport);
	t->b_port = htons(dport);
}

/* The alias of the connection @ck: under the canonical key of @reply,
 * made @age_ns before NOW. */
static bool ct_put_alias(int fd, const struct xnf_ct_key *reply,
			 const struct xnf_ct_key *ck, __u64 age_ns)
{
	struct xnf_ct_entry a = {};
	struct xnf_ct_key ak;

	xnf_ct_key_canon(reply, &ak);
	a.expires = ~0ULL;
	a.created = ct_base - age_ns;
	a.status = XNF_CT_S_ALIAS;
	a.nat = *ck;
	return ASSERT_OK(bpf_map_update_elem(fd, &ak, &a, BPF_NOEXIST),
			 "write an alias");
}

/*
 * The translated connection src:sport -> dst:dport whose reply is
 * rsrc:rsport -> rdst:rdport, as xnf_ct_confirm() writes it: the alias
 * under the reply's canonical key (unless !@alias), the connection under
 * the original's, with the reply tuple in nat.
 */
static bool ct_put_nat(int fd, __u8 proto, const char *src, __u16 sport,
		       const char *dst, __u16 dport, const char *rsrc,
		       __u16 rsport, const char *rdst, __u16 rdport,
		       __u32 status, __u32 oif, bool alias)
{
	struct xnf_ct_key orig, ck, reply;
	struct xnf_ct_entry e = {};

	tuple(&orig, XNF_AF_INET, proto, src, sport, dst, dport);
	tuple(&reply, XNF_AF_INET, proto, rsrc, rsport, rdst, rdport);
	xnf_ct_key_canon(&orig, &ck);
	e.expires = ct_base + 300 * NS;
	e.created = ct_base - NS;
	e.status = status | XNF_CT_S_SEEN_REPLY |
		   (memcmp(ck.a_addr, orig.a_addr, 16) ? XNF_CT_S_ORIG_B : 0);
	e.tcp_state = proto == IPPROTO_TCP ? XNF_CT_TCP_ESTABLISHED : 0;
	e.packets[0] = 4;
	e.packets[1] = 3;
	e.nat_oif = oif;
	e.nat = reply;
	if (alias && !ct_put_alias(fd, &reply, &ck, NS))
		return false;
	return ASSERT_OK(bpf_map_update_elem(fd, &ck, &e, BPF_NOEXIST),
			 "write a translated connection");
}

#define MASQ (XNF_CT_S_SNAT | XNF_CT_S_MASQ)

/* Inside 192.0.2.0/24, the router's public 203.0.113.1 (masquerade out of
 * ifindex 7) and .2 (snat), a server 198.51.100.20 outside, a port
 * forward of 203.0.113.1:8080 to 192.0.2.80:80; one connection
 * untranslated. 4 connections, 3 aliases. */
static bool ct_fill_nat(int fd)
{
	return ct_put_nat(fd, IPPROTO_TCP, "192.0.2.10", 40000, "198.51.100.20",
			  443, "198.51.100.20", 443, "203.0.113.1", 40000, MASQ,
			  7, true) &&
	       /* the port taken: another one */
	       ct_put_nat(fd, IPPROTO_UDP, "192.0.2.11", 5353, "198.51.100.20",
			  53, "198.51.100.20", 53, "203.0.113.2", 1024,
			  XNF_CT_S_SNAT, 0, true) &&
	       ct_put_nat(fd, IPPROTO_TCP, "198.51.100.30", 50000,
			  "203.0.113.1", 8080, "192.0.2.80", 80,
			  "198.51.100.30", 50000, XNF_CT_S_DNAT, 0, true) &&
	       ct_put(fd, XNF_AF_INET, IPPROTO_TCP, "192.0.2.12", 41000,
		      "198.51.100.20", 22, XNF_CT_TCP_ESTABLISHED, ASSURED,
		      300 * NS, 2, 2);
}

/* Elements of the table, whatever they are. */
static __u32 ct_elems(int fd)
{
	struct xnf_ct_key k, next;
	__u32 n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

static const struct xnf_ct_conn *ct_find(const struct xnf_ct_conn *c, __u32 n,
					 __u16 sport)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (c[i].sport == sport)
			return &c[i];
	return NULL;
}

TEST(ct_nat_list)
{
	struct ct_maps m = { -1, -1 };
	const struct xnf_ct_conn *x;
	struct xnf_ct_conn *c = NULL;
	struct xnf_ct_filter f;
	__u8 want[16];
	char err[256];
	__u32 n;

	if (!ct_maps_open(&m) || !ct_fill_nat(m.ct))
		goto out;
	ASSERT_EQ(ct_elems(m.ct), 7, "4 connections and 3 aliases written");
	if (!ASSERT_OK(xnf_ct_list_fd(m.ct, NULL, NOW, &c, &n), "list"))
		goto out;
	/* Aliases are no connections: each connection once. */
	ASSERT_EQ(n, 4, "connections listed");
	SUBTEST("masquerade: the reply tuple is the translation's") {
		x = ct_find(c, n, 40000);
		if (!ASSERT_TRUE(x, "listed"))
			goto out;
		addr(XNF_AF_INET, "192.0.2.10", want);
		ASSERT_MEM(x->src, want, 16, "original source");
		addr(XNF_AF_INET, "198.51.100.20", want);
		ASSERT_MEM(x->rsrc, want, 16, "reply source");
		addr(XNF_AF_INET, "203.0.113.1", want);
		ASSERT_MEM(x->rdst, want, 16, "reply destination: the address");
		ASSERT_EQ(x->rsport, 443, "reply sport");
		ASSERT_EQ(x->rdport, 40000, "reply dport: the port kept");
		ASSERT_EQ(x->status & MASQ, MASQ, "snat and masquerade");
		ASSERT_EQ(x->nat_oif, 7, "its device");
	}
	SUBTEST("dnat") {
		x = ct_find(c, n, 50000);
		if (!ASSERT_TRUE(x, "listed"))
			goto out;
		addr(XNF_AF_INET, "203.0.113.1", want);
		ASSERT_MEM(x->dst, want, 16, "original destination");
		ASSERT_EQ(x->dport, 8080, "original dport");
		addr(XNF_AF_INET, "192.0.2.80", want);
		ASSERT_MEM(x->rsrc, want, 16, "reply source: the inside server");
		ASSERT_EQ(x->rsport, 80, "its port");
		ASSERT_EQ(x->nat_oif, 0, "no device");
	}
	SUBTEST("untranslated: the reply is the original swapped") {
		x = ct_find(c, n, 41000);
		if (!ASSERT_TRUE(x, "listed"))
			goto out;
		ASSERT_MEM(x->rsrc, x->dst, 16, "reply source");
		ASSERT_MEM(x->rdst, x->src, 16, "reply destination");
		ASSERT_EQ(x->rsport, 22, "reply sport");
		ASSERT_EQ(x->rdport, 41000, "reply dport");
	}
	SUBTEST("filters of the reply and the translation") {
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_FAMILY |
						    XNF_CT_F_REPLY_DST,
					    .family = XNF_AF_INET };
		addr(XNF_AF_INET, "203.0.113.1", f.rdst);
		ASSERT_EQ(ct_count(m.ct, &f), 1, "reply-dst: the public address");
		f.what |= XNF_CT_F_DST;
		memcpy(f.dst, f.rdst, 16);
		ASSERT_EQ(ct_count(m.ct, &f), 0, "and dst: none has both");
		f.what = XNF_CT_F_FAMILY | XNF_CT_F_DST;
		ASSERT_EQ(ct_count(m.ct, &f), 1, "dst: the port forward");
		f.what = XNF_CT_F_FAMILY | XNF_CT_F_REPLY_SRC;
		addr(XNF_AF_INET, "198.51.100.20", f.rsrc);
		ASSERT_EQ(ct_count(m.ct, &f), 3, "reply-src: the server");
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_NAT,
					    .nat = XNF_CT_S_MASQ };
		ASSERT_EQ(ct_count(m.ct, &f), 1, "masquerade");
		f.nat = XNF_CT_S_SNAT;
		ASSERT_EQ(ct_count(m.ct, &f), 2, "snat: masquerade too");
		f.nat = XNF_CT_S_SNAT | XNF_CT_S_DNAT;
		ASSERT_EQ(ct_count(m.ct, &f), 3, "any");
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_NAT_OIF, .oif = 7 };
		ASSERT_EQ(ct_count(m.ct, &f), 1, "masquerade out of 7");
		f.oif = 8;
		ASSERT_EQ(ct_count(m.ct, &f), 0, "out of 8");
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_NAT };
		ASSERT_EQ(xnf_ct_filter_check(&f, err, sizeof(err)), -EINVAL,
			  "no kind");
		f.nat = XNF_CT_S_ALIAS;
		ASSERT_EQ(xnf_ct_filter_check(&f, err, sizeof(err)), -EINVAL,
			  "the alias bit is no kind");
		f = (struct xnf_ct_filter){ .what = XNF_CT_F_REPLY_DST };
		ASSERT_EQ(xnf_ct_filter_check(&f, err, sizeof(err)), -EINVAL,
			  "a reply address without its family");
	}
out:
	free(c);
	ct_maps_close(&m);
}

TEST(ct_nat_flush_stats)
{
	struct ct_maps m = { -1, -1 };
	int ncpus = libbpf_num_possible_cpus(), cpu;
	struct xnf_ct_counters *v = NULL;
	struct xnf_ct_key orphan, gone, young;
	struct xnf_ct_filter f;
	struct xnf_ct_stats st;
	__u64 flushed;
	__u32 key = XNF_CT_STATS_DP;

	v = calloc(ncpus > 0 ? ncpus : 1, sizeof(*v));
	if (!ASSERT_TRUE(v, "alloc") || !ct_maps_open(&m) || !ct_fill_nat(m.ct))
		goto out;
	/* An alias whose connection is gone (the LRU took it), one whose
	 * key holds another connection now (untranslated, the 4th of
	 * ct_fill_nat), and one an xnf_ct_confirm() may be writing the
	 * connection of (made just now). */
	tuple(&gone, XNF_AF_INET, IPPROTO_UDP, "192.0.2.99", 9, "198.51.100.9",
	      9);
	tuple(&orphan, XNF_AF_INET, IPPROTO_UDP, "198.51.100.9", 9,
	      "203.0.113.1", 2000);
	if (!ct_put_alias(m.ct, &orphan, &gone, 2 * NS))
		goto out;
	tuple(&gone, XNF_AF_INET, IPPROTO_TCP, "192.0.2.12", 41000,
	      "198.51.100.20", 22);
	xnf_ct_key_canon(&gone, &gone);
	tuple(&orphan, XNF_AF_INET, IPPROTO_TCP, "198.51.100.20", 22,
	      "203.0.113.1", 41000);
	if (!ct_put_alias(m.ct, &orphan, &gone, 2 * NS))
		goto out;
	tuple(&gone, XNF_AF_INET, IPPROTO_UDP, "192.0.2.98", 9, "198.51.100.9",
	      9);
	tuple(&young, XNF_AF_INET, IPPROTO_UDP, "198.51.100.9", 9,
	      "203.0.113.1", 2001);
	if (!ct_put_alias(m.ct, &young, &gone, 0))
		goto out;
	/* 6 connections made, 3 of them translated (the 3 aliases of
	 * ct_fill_nat), and 2 connections evicted: the two orphans'. */
	for (cpu = 0; cpu < ncpus; cpu++) {
		v[cpu].created = cpu ? 0 : 6;
		v[cpu].nat_created = cpu ? 0 : 3;
		v[cpu].nat_retries = 1;
		v[cpu].nat_no_port = 2;
		v[cpu].nat_no_addr = 3;
		v[cpu].nat_clash = 4;
	}
	if (!ASSERT_OK(bpf_map_update_elem(m.stats, &key, v, BPF_ANY),
		       "write counters"))
		goto out;

	ASSERT_OK(xnf_ct_stats_fd(m.ct, m.stats, NOW, &st), "stats");
	ASSERT_EQ(st.entries, 4, "connections, not aliases");
	ASSERT_EQ(st.aliases, 6, "aliases apart");
	ASSERT_EQ(st.dead, 0, "an alias is never dead");
	ASSERT_EQ(st.evicted, 2, "evicted: connections only");
	ASSERT_EQ(st.c.nat_created, 3, "nat_created");
	ASSERT_EQ(st.c.nat_retries, 1ULL * ncpus, "nat_retries, summed");
	ASSERT_EQ(st.c.nat_no_port, 2ULL * ncpus, "nat_no_port, summed");
	ASSERT_EQ(st.c.nat_no_addr, 3ULL * ncpus, "nat_no_addr, summed");
	ASSERT_EQ(st.c.nat_clash, 4ULL * ncpus, "nat_clash, summed");

	/* What the address watcher asks when 203.0.113.1 leaves device 7:
	 * its masqueraded connections. The connection goes with its alias;
	 * the two old orphans go too, uncounted; the young one stays. */
	f = (struct xnf_ct_filter){ .what = XNF_CT_F_FAMILY | XNF_CT_F_NAT |
					    XNF_CT_F_NAT_OIF | XNF_CT_F_REPLY_DST,
				    .family = XNF_AF_INET,
				    .nat = XNF_CT_S_MASQ,
				    .oif = 7 };
	addr(XNF_AF_INET, "203.0.113.1", f.rdst);
	ASSERT_OK(xnf_ct_flush_fd(m.ct, m.stats, &f, NOW, &flushed),
		  "flush the address's masquerades");
	ASSERT_EQ(flushed, 1, "one connection flushed");
	ASSERT_EQ(ct_count(m.ct, NULL), 3, "the others stay");
	ASSERT_EQ(ct_elems(m.ct), 3 + 2 + 1, "their aliases and the young one");
	ASSERT_OK(xnf_ct_stats_fd(m.ct, m.stats, NOW, &st), "stats after");
	ASSERT_EQ(st.aliases, 3, "aliases left");
	ASSERT_EQ(st.c.flushed, 1, "flushed counts the connection");
	ASSERT_EQ(st.evicted, 2, "a flush is no eviction");
	/* The young alias, a second later, is an orphan too. */
	ASSERT_OK(xnf_ct_flush_fd(m.ct, m.stats, &f, NOW + NS, &flushed),
		  "flush again");
	ASSERT_EQ(flushed, 0, "no connection");
	ASSERT_EQ(ct_elems(m.ct), 3 + 2, "the young orphan gone");

	/* Everything: every connection with its alias. */
	ASSERT_OK(xnf_ct_flush_fd(m.ct, m.stats, NULL, NOW, &flushed),
		  "flush all");
	ASSERT_EQ(flushed, 3, "three connections");
	ASSERT_EQ(ct_elems(m.ct), 0, "the table is empty");
	ASSERT_OK(xnf_ct_stats_fd(m.ct, m.stats, NOW, &st), "stats at last");
	ASSERT_EQ(st.c.flushed, 4, "flushed in all");
	ASSERT_EQ(st.evicted, 2, "evicted unchanged");
out:
	free(v);
	ct_maps_close(&m);
}

/* ---- the settings: config keys ct_* ---- */

static bool ct_cfg_read(struct xnf_ct_config *cfg)
{
	__u32 key = 0;
	int fd = bpf_obj_get(FX_ROOT "/tables/xnf_ct_cfg");
	bool ok;

	ok = ASSERT_GE(fd, 0, "open xnf_ct_cfg") &&
	     ASSERT_OK(bpf_map_lookup_elem(fd, &key, cfg), "read xnf_ct_cfg");
	if (fd >= 0)
		close(fd);
	return ok;
}

/* The value xnf_conf_key() gives @key in @c, or "". */
static const char *conf_val(const struct xnf_conf *c, const char *key,
			    char *buf, size_t len)
{
	const char *k;
	size_t i;

	for (i = 0; !xnf_conf_key(c, i, &k, buf, len); i++)
		if (!strcmp(k, key))
			return buf;
	return "";
}

static int ct_commit(struct xnf_dp *dp, const struct xnf_conf *c, char *err,
		     size_t errlen)
{
	return xnf_conf_commit(dp, c, NULL, NULL, err, errlen);
}

TEST(ct_config)
{
	struct xnf_conf *c = NULL, *got = NULL;
	struct xnf_ct_settings s;
	struct xnf_ct_config cfg;
	char err[512] = "", v[XNF_CONF_VAL_MAX];
	struct fx f;

	if (!fx_open(&f))
		return;
	SUBTEST("defaults") {
		/* Linux's, as the instance wrote them when it was made. */
		if (ASSERT_OK(xnf_ct_settings_read(f.dp, &s, err, sizeof(err)),
			      err)) {
			ASSERT_EQ(s.cfg.timeout[XNF_CT_TCP_ESTABLISHED], 432000,
				  "established");
			ASSERT_EQ(s.cfg.timeout[XNF_CT_TCP_CLOSE], 10, "close");
			ASSERT_EQ(s.cfg.timeout[XNF_CT_TO_UDP_STREAM], 120,
				  "udp_stream");
			ASSERT_EQ(s.cfg.timeout[XNF_CT_TO_GENERIC], 600,
				  "generic");
			ASSERT_EQ(s.cfg.fragments, XNF_CT_FRAG_PASS, "fragments");
			ASSERT_EQ(s.max, XNF_CT_MAX_DEFAULT, "max");
		}
	}
	SUBTEST("refused") {
		if (!ASSERT_OK(xnf_conf_running(f.dp, &c), "candidate"))
			goto out;
		ASSERT_EQ(xnf_conf_config_set(c, "ct_timeout_established", "0",
					      err, sizeof(err)),
			  -EINVAL, "timeout 0");
		ASSERT_EQ(xnf_conf_config_set(c, "ct_timeout_udp", "30s", err,
					      sizeof(err)),
			  -EINVAL, "not a number");
		ASSERT_EQ(xnf_conf_config_set(c, "ct_timeout_none", "30", err,
					      sizeof(err)),
			  -EINVAL, "no such state");
		ASSERT_EQ(xnf_conf_config_set(c, "ct_max", "1023", err,
					      sizeof(err)),
			  -EINVAL, "ct_max below its least");
		ASSERT_EQ(xnf_conf_config_set(c, "ct_fragments", "flood", err,
					      sizeof(err)),
			  -EINVAL, "fragments flood");
		xnf_conf_free(c);
		c = NULL;
	}
	SUBTEST("written") {
		if (!ASSERT_OK(xnf_conf_running(f.dp, &c), "candidate"))
			goto out;
		ASSERT_OK(xnf_conf_config_set(c, "ct_timeout_established",
					      "3600", err, sizeof(err)),
			  err);
		ASSERT_OK(xnf_conf_config_set(c, "ct_timeout_udp", "45", err,
					      sizeof(err)),
			  err);
		ASSERT_OK(xnf_conf_config_set(c, "ct_fragments", "drop", err,
					      sizeof(err)),
			  err);
		ASSERT_OK(ct_commit(f.dp, c, err, sizeof(err)), err);
		if (ct_cfg_read(&cfg)) {
			ASSERT_EQ(cfg.timeout[XNF_CT_TCP_ESTABLISHED], 3600,
				  "established written");
			ASSERT_EQ(cfg.timeout[XNF_CT_TO_UDP], 45, "udp written");
			ASSERT_EQ(cfg.timeout[XNF_CT_TCP_SYN_SENT], 120,
				  "the others Linux's");
			ASSERT_EQ(cfg.fragments, XNF_CT_FRAG_DROP, "fragments");
		}
		/* What `xnf save` prints reads them back. */
		if (ASSERT_OK(xnf_conf_read(f.dp, &got, err, sizeof(err)), err)) {
			ASSERT_EQ(strcmp(conf_val(got, "ct_timeout_established",
						  v, sizeof(v)),
					 "3600"),
				  0, "saved established");
			ASSERT_EQ(strcmp(conf_val(got, "ct_fragments", v,
						  sizeof(v)),
					 "drop"),
				  0, "saved fragments");
			ASSERT_EQ(strcmp(conf_val(got, "ct_timeout_syn_sent2",
						  v, sizeof(v)),
					 "120"),
				  0, "saved syn_sent2");
			ASSERT_EQ(strcmp(conf_val(got, "ct_max", v, sizeof(v)),
					 "262144"),
				  0, "saved max");
		}
		xnf_conf_free(c);
		xnf_conf_free(got);
		c = got = NULL;
	}
out:
	xnf_conf_free(c);
	xnf_conf_free(got);
	fx_close(&f);
}

#define CT_ROOT "/sys/fs/bpf/xnf-ut-ct"

static int ct_set_commit(struct xnf_dp *dp, const char *key, const char *val,
			 const char *key2, const char *val2, char *err,
			 size_t errlen)
{
	struct xnf_conf *c;
	int ret;

	ret = xnf_conf_running(dp, &c);
	if (ret)
		return ret;
	ret = xnf_conf_config_set(c, key, val, err, errlen);
	if (!ret && key2)
		ret = xnf_conf_config_set(c, key2, val2, err, errlen);
	if (!ret)
		ret = ct_commit(dp, c, err, errlen);
	xnf_conf_free(c);
	return ret;
}

/* ct_max: set on the instance a commit made, refused on one that runs. */
TEST(ct_config_max)
{
	struct xnf_dp *dp = NULL, *dp2 = NULL;
	struct bpf_map_info info = {};
	struct xnf_ct_settings s;
	__u32 len = sizeof(info);
	char err[512] = "";
	int fd;

	if (!fx_env())
		return;
	xnf_dp_destroy(CT_ROOT);
	if (!ASSERT_OK(xnf_dp_open(CT_ROOT, true, &dp, err, sizeof(err)), err))
		goto out;
	/* This open made the instance: the table is made again with the
	 * size asked, its other settings written as well. */
	ASSERT_OK(ct_set_commit(dp, "ct_max", "2048", "ct_timeout_close", "20",
				err, sizeof(err)),
		  err);
	ASSERT_OK(xnf_ct_settings_read(dp, &s, err, sizeof(err)), err);
	ASSERT_EQ(s.max, 2048, "resized");
	ASSERT_EQ(s.cfg.timeout[XNF_CT_TCP_CLOSE], 20, "close written");
	fd = bpf_obj_get(CT_ROOT "/tables/xnf_ct");
	if (ASSERT_GE(fd, 0, "the new table pinned") &&
	    ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), "info")) {
		ASSERT_EQ(info.type, BPF_MAP_TYPE_LRU_HASH, "an LRU hash again");
		ASSERT_EQ(info.key_size, sizeof(struct xnf_ct_key), "key");
		ASSERT_EQ(info.value_size, sizeof(struct xnf_ct_entry), "value");
		ASSERT_NEQ(info.btf_id, 0,
			   "its BTF kept (bpftool prints fields)");
	}
	if (fd >= 0)
		close(fd);
	ASSERT_TRUE(access(CT_ROOT "/tables/xnf_ct-resized", F_OK),
		    "no pin left beside it");

	/* Another open of the same instance: it runs, its table's size
	 * stays, and the whole commit is refused. */
	if (!ASSERT_OK(xnf_dp_open(CT_ROOT, false, &dp2, err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(ct_set_commit(dp2, "ct_max", "4096", "ct_timeout_close", "30",
				err, sizeof(err)),
		  -EBUSY, err);
	ASSERT_OK(xnf_ct_settings_read(dp2, &s, err, sizeof(err)), err);
	ASSERT_EQ(s.max, 2048, "size kept");
	ASSERT_EQ(s.cfg.timeout[XNF_CT_TCP_CLOSE], 20, "nothing changed");
	/* The size it has is no change. */
	ASSERT_OK(ct_set_commit(dp2, "ct_max", "2048", "ct_timeout_close", "30",
				err, sizeof(err)),
		  err);
	ASSERT_OK(xnf_ct_settings_read(dp2, &s, err, sizeof(err)), err);
	ASSERT_EQ(s.cfg.timeout[XNF_CT_TCP_CLOSE], 30, "close written");
out:
	if (dp2)
		xnf_dp_close(dp2);
	if (dp)
		xnf_dp_close(dp);
	xnf_dp_destroy(CT_ROOT);
}
