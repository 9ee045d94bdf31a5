// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The conntrack NF (bpf/conntrack.bpf.h): the ct state of every packet of
 * TCP, UDP, ICMP and ICMPv6 exchanges, IPv4 and IPv6, as nft reads it
 * (Linux's state machines with be_liberal=1, loose=1), the entries they
 * leave in xnf_ct (state, status, counters, timeouts) and the counters of
 * xnf_ct_stats. Every sequence runs tail-called and fused: the packet's
 * ct state is read from the per-CPU xnf_pkt the tail-called chain leaves
 * (the test runs on CPU 0); the table and the counters are compared in
 * both forms.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "conf.h"
#include "ct.h"
#include "fixture.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define A4 "192.0.2.1"
#define B4 "198.51.100.1"
#define R4 "203.0.113.1"
#define A6 "2001:db8:1::1"
#define B6 "2001:db8:2::1"
#define R6 "2001:db8:3::1"

#define FIN 0x01
#define SYN 0x02
#define RST 0x04
#define PSH 0x08
#define ACK 0x10
#define URG 0x20

#define NEW XNF_CT_NEW
#define EST XNF_CT_ESTABLISHED
#define REL XNF_CT_RELATED
#define INV XNF_CT_INVALID
#define UNT XNF_CT_UNTRACKED

struct frame {
	__u8 data[256];
	int len;
};

/* The CPUs the process ran on before ct_open pinned it (ct_close puts
 * them back: the tests share the process). */
static cpu_set_t ct_cpus;
static bool ct_pinned;

/* The test's process runs on CPU 0, whose xnf_scratch holds the packet
 * state a tail-called chain leaves. */
static bool ct_pin_cpu0(void)
{
	cpu_set_t set;

	if (!ct_pinned &&
	    !ASSERT_OK(sched_getaffinity(0, sizeof(ct_cpus), &ct_cpus),
		       "the process's CPUs"))
		return false;
	ct_pinned = true;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return ASSERT_OK(sched_setaffinity(0, sizeof(set), &set), "pin to CPU 0");
}

static void ct_close(struct fx *f)
{
	fx_close(f);
	if (ct_pinned)
		sched_setaffinity(0, sizeof(ct_cpus), &ct_cpus);
	ct_pinned = false;
}

static bool ct_open(struct fx *f, const char *chain, bool fused)
{
	memset(f, 0, sizeof(*f));
	if (ct_pin_cpu0() && fx_open(f) && fx_chain(f, chain, fused, false))
		return true;
	ct_close(f);
	return false;
}

static __u8 *l4_of(struct frame *fr)
{
	size_t l3 = pkt_l3_off(fr->data);

	return fr->data + l3 + ((fr->data[l3] >> 4) == 4 ? 20 : 40);
}

static void frame_build(struct frame *fr, int family, __u8 proto,
			const char *src, const char *dst, __u16 sport,
			__u16 dport, __u32 frame_len)
{
	struct pkt_spec s = { .family = family,
			      .proto = proto,
			      .src = src,
			      .dst = dst,
			      .sport = sport,
			      .dport = dport,
			      .frame_len = frame_len };

	/* The headers alone, at least the minimum of 64. */
	if (!frame_len) {
		frame_len = ETH_HLEN + (family == 4 ? 20 : 40) +
			    (proto == IPPROTO_TCP ? 20 : 8);
		s.frame_len = frame_len < 64 ? 64 : frame_len;
	}

	fr->len = pkt_build(fr->data, sizeof(fr->data), &s);
}

static struct frame tcp(int family, const char *src, const char *dst,
			__u16 sport, __u16 dport, __u8 flags)
{
	struct frame fr;

	frame_build(&fr, family, IPPROTO_TCP, src, dst, sport, dport, 0);
	l4_of(&fr)[13] = flags;
	return fr;
}

static struct frame udp(int family, const char *src, const char *dst,
			__u16 sport, __u16 dport)
{
	struct frame fr;

	frame_build(&fr, family, IPPROTO_UDP, src, dst, sport, dport, 0);
	return fr;
}

/* An ICMP (family 4) or ICMPv6 message of @type with identifier @id. */
static struct frame icmp(int family, const char *src, const char *dst,
			 __u8 type, __u16 id)
{
	struct frame fr;
	__u8 *l4;

	frame_build(&fr, family, family == 4 ? IPPROTO_ICMP : IPPROTO_ICMPV6,
		    src, dst, 0, 0, 0);
	l4 = l4_of(&fr);
	l4[0] = type;
	l4[4] = id >> 8;
	l4[5] = id & 0xff;
	return fr;
}

/* An ICMP error of @type from @src to @dst quoting the IP header and the
 * first 8 bytes of L4 of @inner. */
static struct frame icmp_err(int family, const char *src, const char *dst,
			     __u8 type, struct frame *inner)
{
	size_t ihl = family == 4 ? 20 : 40, l3 = pkt_l3_off(inner->data);
	struct frame fr;
	__u8 *l4;

	frame_build(&fr, family, family == 4 ? IPPROTO_ICMP : IPPROTO_ICMPV6,
		    src, dst, 0, 0, ETH_HLEN + ihl + 8 + ihl + 8);
	l4 = l4_of(&fr);
	l4[0] = type;
	memcpy(l4 + 8, inner->data + l3, ihl + 8);
	return fr;
}

/* The direction (enum xnf_ct_dir) of the last packet ct_run ran through
 * a tail-called chain. */
static int ct_last_dir;

/* Runs @fr; returns the XDP action, the packet's ct state in *@state (tail
 * -called chains only: -1 for fused ones). */
static int ct_run(struct fx *f, bool fused, struct frame *fr, int *state)
{
	static struct fx_out out;
	int ncpu = libbpf_num_possible_cpus(), fd;
	struct xnf_pkt *pk;
	__u32 zero = 0;

	*state = -1;
	ct_last_dir = -1;
	if (!ASSERT_GT(fr->len, 0, "frame built") ||
	    !ASSERT_OK(fx_run(f, fr->data, fr->len, &out), "run"))
		return -1;
	if (fused)
		return out.ret;
	pk = calloc(ncpu, sizeof(*pk));
	fd = xnf_table_fd(f->dp, XNF_T_SCRATCH);
	if (pk && fd >= 0 && !bpf_map_lookup_elem(fd, &zero, pk)) {
		*state = pk[0].ct_state;
		ct_last_dir = pk[0].ct_dir;
	}
	free(pk);
	return out.ret;
}

/* ct_expect, and the packet's direction in its connection. */
static bool ct_expect_dir(struct fx *f, bool fused, struct frame fr, int want,
			  int dir, const char *what)
{
	int state, ret = ct_run(f, fused, &fr, &state);

	if (!ASSERT_EQ(ret, XDP_PASS, what))
		return false;
	return fused || (ASSERT_EQ(state, want, what) &&
			 ASSERT_EQ(ct_last_dir, dir, what));
}

/* Runs @fr and checks its ct state (tail-called) and that it passed. */
static bool ct_expect(struct fx *f, bool fused, struct frame fr, int want,
		      const char *what)
{
	int state, ret = ct_run(f, fused, &fr, &state);

	if (!ASSERT_EQ(ret, XDP_PASS, what))
		return false;
	return fused || ASSERT_EQ(state, want, what);
}

static int ct_fd(struct fx *f)
{
	return xnf_table_fd(f->dp, XNF_T_CT);
}

static int ct_count_fd(int fd)
{
	struct xnf_ct_key k, next;
	void *prev = NULL;
	int n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

static int ct_count(struct fx *f)
{
	return ct_count_fd(ct_fd(f));
}

/* The entry of the only connection in the table. */
static bool ct_only(struct fx *f, struct xnf_ct_key *k, struct xnf_ct_entry *e)
{
	int fd = ct_fd(f);

	if (!ASSERT_EQ(ct_count(f), 1, "one connection") ||
	    !ASSERT_OK(bpf_map_get_next_key(fd, NULL, k), "its key"))
		return false;
	return ASSERT_OK(bpf_map_lookup_elem(fd, k, e), "its entry");
}

static bool ct_stats(struct fx *f, struct xnf_ct_counters *sum)
{
	char err[256] = "";

	return ASSERT_OK(xnf_ct_counters_read(f->dp, sum, err, sizeof(err)), err);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#define S 1000000000ULL

/* The entry's timeout left is about @secs (the test takes far less than
 * a second). */
static bool ct_expires_in(const struct xnf_ct_entry *e, __u64 secs,
			  const char *what)
{
	__u64 now = now_ns();

	return ASSERT_GT(e->expires, now + secs * S - 5 * S, what) &&
	       ASSERT_LE(e->expires, now + secs * S + S, what);
}

#define FOR_BOTH(fused) for (int fused = 0; fused < 2; fused++)

/* The three-way handshake, data, the close by FIN from both sides to
 * TIME_WAIT, and a SYN that reopens the connection. */
TEST(ct_tcp_handshake)
{
	static const struct {
		int fam;
	} fams[] = { { 4 }, { 6 } };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fams); i++)
		FOR_BOTH(fused)
		{
			int fm = fams[i].fam;
			const char *a = fm == 4 ? A4 : A6, *b = fm == 4 ? B4 : B6;
			struct xnf_ct_counters cs;
			struct xnf_ct_entry e;
			struct xnf_ct_key k;
			char what[64];
			struct fx f;

			snprintf(what, sizeof(what), "IPv%d %s", fm,
				 fused ? "fused" : "tail-called");
			if (!ct_open(&f, "conntrack", fused))
				return;
			if (!ct_expect(&f, fused, tcp(fm, a, b, 40000, 80, SYN),
				       NEW, what) ||
			    !ct_only(&f, &k, &e) ||
			    !ASSERT_EQ(e.tcp_state, XNF_CT_TCP_SYN_SENT, what) ||
			    !ASSERT_EQ(e.status & XNF_CT_S_SEEN_REPLY, 0, what) ||
			    !ct_expires_in(&e, 120, what))
				goto next;
			if (!ct_expect(&f, fused,
				       tcp(fm, b, a, 80, 40000, SYN | ACK), EST,
				       what) ||
			    !ct_only(&f, &k, &e) ||
			    !ASSERT_EQ(e.tcp_state, XNF_CT_TCP_SYN_RECV, what) ||
			    !ASSERT_TRUE(e.status & XNF_CT_S_SEEN_REPLY, what) ||
			    !ASSERT_FALSE(e.status & XNF_CT_S_ASSURED, what) ||
			    !ct_expires_in(&e, 60, what))
				goto next;
			if (!ct_expect(&f, fused, tcp(fm, a, b, 40000, 80, ACK),
				       EST, what) ||
			    !ct_only(&f, &k, &e) ||
			    !ASSERT_EQ(e.tcp_state, XNF_CT_TCP_ESTABLISHED, what) ||
			    !ASSERT_TRUE(e.status & XNF_CT_S_ASSURED, what) ||
			    !ct_expires_in(&e, 432000, what))
				goto next;
			if (!ct_expect(&f, fused,
				       tcp(fm, b, a, 80, 40000, ACK | PSH), EST,
				       what) ||
			    !ct_expect(&f, fused,
				       tcp(fm, a, b, 40000, 80, FIN | ACK), EST,
				       what) ||
			    !ct_only(&f, &k, &e) ||
			    !ASSERT_EQ(e.tcp_state, XNF_CT_TCP_FIN_WAIT, what) ||
			    !ct_expect(&f, fused, tcp(fm, b, a, 80, 40000, ACK),
				       EST, what) ||
			    !ct_only(&f, &k, &e) ||
			    !ASSERT_EQ(e.tcp_state, XNF_CT_TCP_CLOSE_WAIT, what) ||
			    !ct_expect(&f, fused,
				       tcp(fm, b, a, 80, 40000, FIN | ACK), EST,
				       what) ||
			    !ct_only(&f, &k, &e) ||
			    !ASSERT_EQ(e.tcp_state, XNF_CT_TCP_LAST_ACK, what) ||
			    !ct_expect(&f, fused, tcp(fm, a, b, 40000, 80, ACK),
				       EST, what) ||
			    !ct_only(&f, &k, &e) ||
			    !ASSERT_EQ(e.tcp_state, XNF_CT_TCP_TIME_WAIT, what) ||
			    !ct_expires_in(&e, 120, what))
				goto next;
			/* 4 packets each way, counted per direction. */
			if (!ASSERT_EQ(e.packets[XNF_CT_DIR_ORIG], 4, what) ||
			    !ASSERT_EQ(e.packets[XNF_CT_DIR_REPLY], 4, what) ||
			    !ASSERT_EQ(e.bytes[XNF_CT_DIR_ORIG],
				       4 * tcp(fm, a, b, 1, 2, ACK).len, what))
				goto next;
			/* RFC 1122: a SYN reopens the closed connection. */
			if (!ct_expect(&f, fused, tcp(fm, a, b, 40000, 80, SYN),
				       NEW, what) ||
			    !ct_only(&f, &k, &e) ||
			    !ASSERT_EQ(e.tcp_state, XNF_CT_TCP_SYN_SENT, what) ||
			    !ASSERT_EQ(e.packets[XNF_CT_DIR_ORIG], 1, what) ||
			    !ct_stats(&f, &cs))
				goto next;
			ASSERT_EQ(cs.created, 2, what);
			ASSERT_EQ(cs.deleted, 1, what);
			ASSERT_EQ(cs.invalid, 0, what);
			ASSERT_EQ(cs.searched, 9, what);
			ASSERT_EQ(cs.found, 8, what);
next:
			ct_close(&f);
		}
}

/* A RST closes an established connection (CLOSE, 10 s); a RST as the only
 * answer to a SYN deletes the entry at once. */
TEST(ct_tcp_rst)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_counters cs;
		struct xnf_ct_entry e;
		struct xnf_ct_key k;
		struct fx f;

		if (!ct_open(&f, "conntrack", fused))
			return;
		if (ct_expect(&f, fused, tcp(4, A4, B4, 40001, 80, SYN), NEW,
			      what) &&
		    ct_expect(&f, fused, tcp(4, B4, A4, 80, 40001, SYN | ACK),
			      EST, what) &&
		    ct_expect(&f, fused, tcp(4, A4, B4, 40001, 80, ACK), EST,
			      what) &&
		    ct_expect(&f, fused, tcp(4, B4, A4, 80, 40001, RST), EST,
			      what) &&
		    ct_only(&f, &k, &e)) {
			ASSERT_EQ(e.tcp_state, XNF_CT_TCP_CLOSE, what);
			ct_expires_in(&e, 10, what);
		}
		/* Refused: the SYN is new, the RST answering it established
		 * (a reply), and the entry is gone. */
		if (ct_expect(&f, fused, tcp(4, A4, B4, 40002, 81, SYN), NEW,
			      what) &&
		    ASSERT_EQ(ct_count(&f), 2, what) &&
		    ct_expect(&f, fused, tcp(4, B4, A4, 81, 40002, RST | ACK),
			      EST, what) &&
		    ASSERT_EQ(ct_count(&f), 1, what) && ct_stats(&f, &cs)) {
			ASSERT_EQ(cs.created, 2, what);
			ASSERT_EQ(cs.deleted, 1, what);
		}
		ct_close(&f);
	}
}

/* A retransmitted SYN is still new (no reply yet) and does not renew the
 * timeout; the first packet of a connection that is not a SYN or an ACK
 * makes nothing. */
TEST(ct_tcp_syn_retransmit)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_entry e, e2;
		struct xnf_ct_key k;
		struct fx f;

		if (!ct_open(&f, "conntrack", fused))
			return;
		if (ct_expect(&f, fused, tcp(4, A4, B4, 40003, 80, SYN), NEW,
			      what) &&
		    ct_only(&f, &k, &e)) {
			/* Older than it is, so that a renewal would show. */
			e.expires -= 10 * S;
			ASSERT_OK(bpf_map_update_elem(ct_fd(&f), &k, &e,
						      BPF_EXIST),
				  "age the entry");
			if (ct_expect(&f, fused, tcp(4, A4, B4, 40003, 80, SYN),
				      NEW, what) &&
			    ct_only(&f, &k, &e2)) {
				ASSERT_EQ(e2.expires, e.expires, what);
				ASSERT_EQ(e2.tcp_state, XNF_CT_TCP_SYN_SENT,
					  what);
			}
		}
		ct_close(&f);
	}
}

/* loose=1: an ACK with no entry picks the connection up (ESTABLISHED,
 * capped at the unacknowledged timeout, 300 s); nft calls its packets new
 * until the other side answers. */
TEST(ct_tcp_pickup)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_entry e;
		struct xnf_ct_key k;
		struct fx f;

		if (!ct_open(&f, "conntrack", fused))
			return;
		if (ct_expect(&f, fused, tcp(6, A6, B6, 40004, 22, ACK | PSH),
			      NEW, what) &&
		    ct_only(&f, &k, &e) &&
		    ASSERT_EQ(e.tcp_state, XNF_CT_TCP_ESTABLISHED, what) &&
		    ct_expires_in(&e, 300, what) &&
		    ct_expect(&f, fused, tcp(6, A6, B6, 40004, 22, ACK), NEW,
			      what) &&
		    ct_expect(&f, fused, tcp(6, B6, A6, 22, 40004, ACK), EST,
			      what) &&
		    ct_only(&f, &k, &e) &&
		    ASSERT_FALSE(e.status & XNF_CT_S_ASSURED, what) &&
		    ct_expect(&f, fused, tcp(6, A6, B6, 40004, 22, ACK), EST,
			      what) &&
		    ct_only(&f, &k, &e)) {
			ASSERT_TRUE(e.status & XNF_CT_S_ASSURED, what);
			ct_expires_in(&e, 432000, what);
		}
		ct_close(&f);
	}
}

/* Invalid: flag combinations tcp_error() refuses, and first packets that
 * cannot start a connection (sIV from sNO: SYN/ACK, FIN, RST). None makes
 * an entry. Then on an existing connection: a SYN/ACK from its originator
 * (sIV), and a SYN in ESTABLISHED, which Linux ignores (sIG: accepted on
 * the connection, unchanged). */
TEST(ct_tcp_invalid)
{
	static const __u8 bad[] = {
		SYN | FIN, 0,	      FIN, SYN | RST, RST | FIN,       URG, PSH,
		SYN | ACK, FIN | ACK, RST, RST | ACK, FIN | PSH | URG,
	};
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_counters cs;
		struct xnf_ct_entry e;
		struct xnf_ct_key k;
		struct fx f;
		size_t i;

		if (!ct_open(&f, "conntrack", fused))
			return;
		for (i = 0; i < ARRAY_SIZE(bad); i++)
			ct_expect(&f, fused, tcp(4, A4, B4, 40005, 80, bad[i]),
				  INV, what);
		if (!ASSERT_EQ(ct_count(&f), 0, what) || !ct_stats(&f, &cs) ||
		    !ASSERT_EQ(cs.invalid, ARRAY_SIZE(bad), what))
			goto next;
		if (ct_expect(&f, fused, tcp(4, A4, B4, 40006, 80, SYN), NEW,
			      what) &&
		    ct_expect(&f, fused, tcp(4, B4, A4, 80, 40006, SYN | ACK),
			      EST, what) &&
		    ct_expect(&f, fused, tcp(4, A4, B4, 40006, 80, ACK), EST,
			      what) &&
		    ct_expect(&f, fused, tcp(4, A4, B4, 40006, 80, SYN | ACK),
			      INV, what) &&
		    ct_expect(&f, fused, tcp(4, A4, B4, 40006, 80, SYN), EST,
			      what) &&
		    ct_only(&f, &k, &e))
			ASSERT_EQ(e.tcp_state, XNF_CT_TCP_ESTABLISHED, what);
next:
		ct_close(&f);
	}
}

/* UDP: the request is new, the answer and all after it established; a
 * reply-less flow stays new. 30 s until it is a stream. */
TEST(ct_udp)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_entry e;
		struct xnf_ct_key k;
		struct fx f;
		int fm;

		for (fm = 4; fm <= 6; fm += 2) {
			const char *a = fm == 4 ? A4 : A6, *b = fm == 4 ? B4 : B6;

			if (!ct_open(&f, "conntrack", fused))
				return;
			if (ct_expect(&f, fused, udp(fm, a, b, 5000, 53), NEW,
				      what) &&
			    ct_expect(&f, fused, udp(fm, a, b, 5000, 53), NEW,
				      what) &&
			    ct_expect(&f, fused, udp(fm, b, a, 53, 5000), EST,
				      what) &&
			    ct_expect(&f, fused, udp(fm, a, b, 5000, 53), EST,
				      what) &&
			    ct_only(&f, &k, &e)) {
				ASSERT_TRUE(e.status & XNF_CT_S_SEEN_REPLY, what);
				ASSERT_FALSE(e.status & XNF_CT_S_ASSURED, what);
				ASSERT_EQ(e.packets[XNF_CT_DIR_ORIG], 3, what);
				ASSERT_EQ(e.packets[XNF_CT_DIR_REPLY], 1, what);
				ct_expires_in(&e, 30, what);
			}
			/* Still active 2 s after it began: a stream. */
			e.created -= 3 * S;
			if (ASSERT_OK(bpf_map_update_elem(ct_fd(&f), &k, &e,
							  BPF_EXIST),
				      "age the entry") &&
			    ct_expect(&f, fused, udp(fm, b, a, 53, 5000), EST,
				      what) &&
			    ct_only(&f, &k, &e)) {
				ASSERT_TRUE(e.status & XNF_CT_S_ASSURED, what);
				ct_expires_in(&e, 120, what);
			}
			ct_close(&f);
		}
	}
}

/* ICMP and ICMPv6 echo by identifier; a reply without its request is
 * invalid; neighbour discovery is untracked, as Linux leaves it. */
TEST(ct_icmp_echo)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_counters cs;
		struct xnf_ct_entry e;
		struct xnf_ct_key k;
		struct fx f;

		if (!ct_open(&f, "conntrack", fused))
			return;
		/* A request from the other side with the same identifier is
		 * another connection (Linux's tuple holds the type), and a
		 * reply in the original direction answers nothing. */
		if (ct_expect(&f, fused, icmp(4, A4, B4, 8, 77), NEW, what) &&
		    ct_expect(&f, fused, icmp(4, B4, A4, 8, 77), NEW, what) &&
		    ct_expect(&f, fused, icmp(4, B4, A4, 0, 77), EST, what) &&
		    ct_expect(&f, fused, icmp(4, B4, A4, 8, 77), NEW, what) &&
		    ct_expect(&f, fused, icmp(4, A4, B4, 0, 77), INV, what) &&
		    ct_expect(&f, fused, icmp(4, B4, A4, 0, 78), INV, what) &&
		    ct_only(&f, &k, &e)) {
			ASSERT_EQ(k.proto, IPPROTO_ICMP, what);
			ASSERT_EQ(ntohs(k.a_port), 77, what);
			ct_expires_in(&e, 30, what);
		}
		bpf_map_delete_elem(ct_fd(&f), &k);
		if (ct_expect(&f, fused, icmp(6, A6, B6, 128, 9), NEW, what) &&
		    ct_expect(&f, fused, icmp(6, B6, A6, 129, 9), EST, what) &&
		    ct_expect(&f, fused, icmp(6, B6, A6, 128, 9), NEW, what) &&
		    ct_expect(&f, fused, icmp(6, B6, A6, 129, 10), INV, what) &&
		    ct_expect(&f, fused, icmp(6, A6, B6, 135, 0), UNT, what) &&
		    ct_expect(&f, fused, icmp(4, A4, B4, 9, 0), INV, what) &&
		    ct_only(&f, &k, &e) && ct_stats(&f, &cs)) {
			ASSERT_EQ(k.proto, IPPROTO_ICMPV6, what);
			ASSERT_EQ(cs.invalid, 4, what);
		}
		ct_close(&f);
	}
}

/* An ICMP error quoting a packet of a tracked connection, coming back to
 * its sender, is related (from a router on the path or the peer); one
 * quoting an unknown flow, or sent elsewhere, is invalid. */
TEST(ct_icmp_error)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_counters cs;
		struct frame in4 = udp(4, A4, B4, 5001, 53);
		struct frame other4 = udp(4, A4, B4, 5002, 53);
		struct frame in6 = tcp(6, A6, B6, 40007, 443, SYN);
		struct frame echo6 = icmp(6, A6, B6, 128, 5);
		struct fx f;

		if (!ct_open(&f, "conntrack", fused))
			return;
		ct_expect(&f, fused, in4, NEW, what);
		ct_expect(&f, fused, icmp_err(4, R4, A4, 11, &in4), REL, what);
		ct_expect(&f, fused, icmp_err(4, B4, A4, 3, &in4), REL, what);
		ct_expect(&f, fused, icmp_err(4, R4, A4, 3, &other4), INV, what);
		ct_expect(&f, fused, icmp_err(4, R4, B4, 3, &in4), INV, what);
		ct_expect(&f, fused, in6, NEW, what);
		ct_expect(&f, fused, icmp_err(6, R6, A6, 2, &in6), REL, what);
		ct_expect(&f, fused, echo6, NEW, what);
		ct_expect(&f, fused, icmp_err(6, R6, A6, 1, &echo6), REL, what);
		if (ct_stats(&f, &cs)) {
			ASSERT_EQ(cs.related, 4, what);
			ASSERT_EQ(cs.invalid, 2, what);
			ASSERT_EQ(cs.created, 3, what);
		}
		ct_close(&f);
	}
}

/* An entry whose timeout passed is dead: the next packet finds it absent
 * (new again, counted expired) and makes a fresh one. */
TEST(ct_expiry)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_counters cs;
		struct xnf_ct_entry e;
		struct xnf_ct_key k;
		struct fx f;

		if (!ct_open(&f, "conntrack", fused))
			return;
		if (ct_expect(&f, fused, udp(4, A4, B4, 5003, 53), NEW, what) &&
		    ct_expect(&f, fused, udp(4, B4, A4, 53, 5003), EST, what) &&
		    ct_only(&f, &k, &e)) {
			e.expires = 1;
			ASSERT_OK(bpf_map_update_elem(ct_fd(&f), &k, &e,
						      BPF_EXIST),
				  "expire the entry");
			if (ct_expect(&f, fused, udp(4, B4, A4, 53, 5003), NEW,
				      what) &&
			    ct_only(&f, &k, &e) && ct_stats(&f, &cs)) {
				/* The answer's sender is the originator now. */
				ASSERT_EQ(e.packets[XNF_CT_DIR_ORIG], 1, what);
				ASSERT_EQ(e.packets[XNF_CT_DIR_REPLY], 0, what);
				ASSERT_EQ(cs.expired, 1, what);
				ASSERT_EQ(cs.created, 2, what);
			}
		}
		ct_close(&f);
	}
}

/* With the firewall after conntrack, a connection is made only when the
 * firewall accepts its first packet: a flood it drops leaves no entry. */
TEST(ct_confirm_on_accept)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct xnf_ct_counters cs;
		struct frame fr;
		struct fx f;
		int state, i;

		if (!ct_open(&f, "conntrack,firewall", fused))
			return;
		if (!fx_fw_default(&f, XNF_FW_DROP))
			goto next;
		for (i = 0; i < 10; i++) {
			fr = tcp(4, A4, B4, 41000 + i, 80, SYN);
			ASSERT_EQ(ct_run(&f, fused, &fr, &state), XDP_DROP, what);
		}
		if (!ASSERT_EQ(ct_count(&f), 0, what) || !ct_stats(&f, &cs) ||
		    !ASSERT_EQ(cs.created, 0, what))
			goto next;
		if (!fx_fw_default(&f, XNF_FW_ALLOW))
			goto next;
		ct_expect(&f, fused, tcp(4, A4, B4, 41000, 80, SYN), NEW, what);
		ct_expect(&f, fused, tcp(4, B4, A4, 80, 41000, SYN | ACK), EST,
			  what);
		if (ASSERT_EQ(ct_count(&f), 1, what) && ct_stats(&f, &cs))
			ASSERT_EQ(cs.created, 1, what);
next:
		ct_close(&f);
	}
}

/* Fragments pass to the kernel (reason frag), or are dropped with
 * ct_fragments drop; they are not tracked. */
TEST(ct_fragments)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct pkt_spec s = { .family = 4, .frag_off = 0x2000 };
		struct xnf_ct_config cfg;
		struct xnf_stats st;
		struct frame fr;
		__u32 zero = 0;
		int state;
		struct fx f;

		if (!ct_open(&f, "conntrack,firewall", fused))
			return;
		fr.len = pkt_build(fr.data, sizeof(fr.data), &s);
		if (ASSERT_EQ(ct_run(&f, fused, &fr, &state), XDP_PASS, what) &&
		    fx_stats(&f, &st)) {
			ASSERT_EQ(st.pass[XNF_R_FRAG], 1, what);
			ASSERT_EQ(ct_count(&f), 0, what);
			if (!fused)
				ASSERT_EQ(state, UNT, what);
		}
		if (ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f.dp, XNF_T_CT_CFG),
						  &zero, &cfg),
			      "read xnf_ct_cfg")) {
			ASSERT_EQ(cfg.fragments, XNF_CT_FRAG_PASS, "default");
			ASSERT_EQ(cfg.timeout[XNF_CT_TCP_ESTABLISHED], 432000,
				  "default");
			cfg.fragments = XNF_CT_FRAG_DROP;
			bpf_map_update_elem(xnf_table_fd(f.dp, XNF_T_CT_CFG),
					    &zero, &cfg, BPF_ANY);
		}
		if (ASSERT_EQ(ct_run(&f, fused, &fr, &state), XDP_DROP, what) &&
		    fx_stats(&f, &st))
			ASSERT_EQ(st.drop[XNF_R_FRAG], 1, what);
		ct_close(&f);
	}
}

/* A full table makes room: the LRU evicts an old entry for the new one. */
TEST(ct_full_table)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), i;
	struct xnf_ct_counters cs;
	struct xnf_ct_entry e = {};
	struct xnf_ct_key k = {};
	struct fx f;
	int fd;

	if (!ct_open(&f, "conntrack", false))
		return;
	fd = ct_fd(&f);
	if (!ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), "map info") ||
	    !ASSERT_EQ(info.type, BPF_MAP_TYPE_LRU_HASH, "LRU") ||
	    !ASSERT_EQ(info.max_entries, XNF_CT_MAX_DEFAULT, "default size"))
		goto out;
	k.family = XNF_AF_INET;
	k.proto = IPPROTO_UDP;
	e.expires = now_ns() + 3600 * S;
	for (i = 0; i < info.max_entries; i++) {
		memcpy(k.a_addr, &i, 4);
		if (!ASSERT_OK(bpf_map_update_elem(fd, &k, &e, BPF_NOEXIST),
			       "fill"))
			goto out;
	}
	ct_expect(&f, false, udp(4, A4, B4, 5004, 53), NEW, "full");
	ct_expect(&f, false, udp(4, B4, A4, 53, 5004), EST, "full: kept");
	if (ct_stats(&f, &cs)) {
		ASSERT_EQ(cs.created, 1, "full");
		ASSERT_EQ(cs.insert_failed, 0, "full");
	}
out:
	ct_close(&f);
}

/* Every chain order with conntrack that the order check allows loads,
 * tail-called and fused (the verifier accepts conntrack inlined after
 * any NFs), up to 4 NFs. */
TEST(ct_chains_load)
{
	static const char *const nfs[] = { "firewall", "l3fwd", "l2fwd", "xsk" };
	struct xnf_chain_spec spec;
	struct xnf_conf_attach at = { .dev = "ut0" };
	struct xnf_conf *c = NULL;
	char chain[96], err[256];
	int n = 0, i, j, l, m;
	struct fx f;

	if (!fx_open(&f) || !ASSERT_OK(xnf_conf_new(&c), "conf"))
		return;
	/* conntrack at position @m of chains of conntrack and up to 3
	 * others, each once. */
	for (i = -1; i < 4; i++)
		for (j = -1; j < 4; j++)
			for (l = -1; l < 4; l++)
				for (m = 0; m < 4; m++) {
					const int o[3] = { i, j, l };
					int k, len = 0, pos = 0;

					if ((j >= 0 && i < 0) ||
					    (l >= 0 && j < 0) ||
					    (i >= 0 && (i == j || i == l)) ||
					    (j >= 0 && j == l))
						continue;
					chain[0] = '\0';
					for (k = 0; k < 3; k++)
						len += o[k] >= 0;
					if (m > len)
						continue;
					for (k = 0; k <= len; k++) {
						const char *nm =
							k == m ? "conntrack" :
								 nfs[o[pos++]];

						snprintf(chain + strlen(chain),
							 sizeof(chain) -
								 strlen(chain),
							 "%s%s", k ? "," : "",
							 nm);
					}
					if (xnf_chain_parse(chain, &spec, err,
							    sizeof(err)))
						continue;
					at.chain = spec;
					if (xnf_conf_attach(c, &at, err,
							    sizeof(err)))
						continue;
					xnf_conf_detach(c, "ut0", err,
							sizeof(err));
					n++;
					ASSERT_TRUE(fx_chain(&f, chain, true,
							     false),
						    chain);
					if (len < 2)
						ASSERT_TRUE(fx_chain(&f, chain,
								     false, false),
							    chain);
				}
	ASSERT_GT(n, 20, "chains tried");
	xnf_conf_free(c);
	ct_close(&f);
}

/* An upgrade across a table schema makes a new instance while the old one
 * is at <root>-old: the new one takes the old connection table over when
 * its layout is the same, and starts empty (with a warning) when not. */
TEST(ct_upgrade_keeps_table)
{
	static const char old_root[] = "/sys/fs/bpf/xnf-ut-ct-old",
			  new_root[] = "/sys/fs/bpf/xnf-ut-ct";
	struct xnf_ct_entry e = { .expires = 1234 }, got;
	struct xnf_ct_key k = { .family = XNF_AF_INET, .proto = 17 };
	struct xnf_dp *dp = NULL;
	char err[256];
	int fd;

	if (!fx_env())
		return;
	SUBTEST("same_layout") {
		xnf_dp_destroy(old_root);
		xnf_dp_destroy(new_root);
		if (!ASSERT_OK(xnf_dp_open(old_root, true, &dp, err, sizeof(err)),
			       err))
			goto out;
		fd = xnf_table_fd(dp, XNF_T_CT);
		ASSERT_OK(bpf_map_update_elem(fd, &k, &e, BPF_NOEXIST),
			  "a connection in the old instance");
		xnf_dp_close(dp);
		dp = NULL;
		if (!ASSERT_OK(xnf_dp_open(new_root, true, &dp, err, sizeof(err)),
			       err))
			goto out;
		fd = xnf_table_fd(dp, XNF_T_CT);
		if (ASSERT_OK(bpf_map_lookup_elem(fd, &k, &got),
			      "the connection in the new instance"))
			ASSERT_EQ(got.expires, 1234, "the same entry");
out:
		xnf_dp_close(dp);
		dp = NULL;
		xnf_dp_destroy(new_root);
		xnf_dp_destroy(old_root);
	}
	SUBTEST("other_layout") {
		char path[128];
		int mfd;

		xnf_dp_destroy(old_root);
		xnf_dp_destroy(new_root);
		if (!ASSERT_OK(xnf_dp_open(old_root, true, &dp, err, sizeof(err)),
			       err))
			goto out2;
		xnf_dp_close(dp);
		dp = NULL;
		/* An old table whose entries are 8 bytes longer. */
		snprintf(path, sizeof(path), "%s/tables/xnf_ct", old_root);
		unlink(path);
		mfd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "xnf_ct", sizeof(k),
				     sizeof(e) + 8, 1024, NULL);
		if (!ASSERT_GE(mfd, 0, "old layout") ||
		    !ASSERT_OK(bpf_obj_pin(mfd, path), "pin it"))
			goto out2;
		close(mfd);
		if (!ASSERT_OK(xnf_dp_open(new_root, true, &dp, err, sizeof(err)),
			       err))
			goto out2;
		fd = xnf_table_fd(dp, XNF_T_CT);
		ASSERT_EQ(ct_count_fd(fd), 0, "a new, empty table");
out2:
		xnf_dp_close(dp);
		dp = NULL;
		xnf_dp_destroy(new_root);
		xnf_dp_destroy(old_root);
	}
}

/* Other protocols by addresses (ports 0), 600 s; the direction of every
 * packet, of an ICMP error too, is the one of its connection. */
TEST(ct_generic_and_directions)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct frame gre_ab, gre_ba, in;
		struct xnf_ct_entry e;
		struct xnf_ct_key k;
		struct fx f;

		frame_build(&gre_ab, 4, IPPROTO_GRE, B4, A4, 0, 0, 0);
		frame_build(&gre_ba, 4, IPPROTO_GRE, A4, B4, 0, 0, 0);
		if (!ct_open(&f, "conntrack", fused))
			return;
		/* B is the originator, the key's b side. */
		if (ct_expect_dir(&f, fused, gre_ab, NEW, XNF_CT_DIR_ORIG, what) &&
		    ct_expect_dir(&f, fused, gre_ba, EST, XNF_CT_DIR_REPLY, what) &&
		    ct_expect_dir(&f, fused, gre_ab, EST, XNF_CT_DIR_ORIG, what) &&
		    ct_only(&f, &k, &e)) {
			ASSERT_EQ(k.proto, IPPROTO_GRE, what);
			ASSERT_EQ(k.a_port | k.b_port, 0, what);
			ASSERT_TRUE(e.status & XNF_CT_S_ORIG_B, what);
			ct_expires_in(&e, 600, what);
			bpf_map_delete_elem(ct_fd(&f), &k);
		}
		/* An error about B's packet goes to B, against the
		 * connection's original direction when B is the
		 * originator. */
		in = udp(4, B4, A4, 6000, 53);
		ct_expect_dir(&f, fused, in, NEW, XNF_CT_DIR_ORIG, what);
		ct_expect_dir(&f, fused, icmp_err(4, R4, B4, 3, &in), REL,
			      XNF_CT_DIR_REPLY, what);
		in = udp(4, A4, B4, 53, 6000);
		ct_expect_dir(&f, fused, in, EST, XNF_CT_DIR_REPLY, what);
		ct_expect_dir(&f, fused, icmp_err(4, B4, A4, 3, &in), REL,
			      XNF_CT_DIR_ORIG, what);
		ct_close(&f);
	}
}

/* IPv6 fragments pass to the kernel too, first or later. */
TEST(ct_fragments6)
{
	FOR_BOTH(fused)
	{
		const char *what = fused ? "fused" : "tail-called";
		struct pkt_ext6 first = { .type = IPPROTO_FRAGMENT,
					  .frag_off = 1 },
				later = { .type = IPPROTO_FRAGMENT,
					  .frag_off = 8 << 3 };
		struct pkt_spec s = { .proto = IPPROTO_UDP, .frame_len = 96 };
		struct xnf_stats st;
		struct frame fr;
		int state;
		struct fx f;

		if (!ct_open(&f, "conntrack,firewall", fused))
			return;
		fr.len = pkt_build_ext6(fr.data, sizeof(fr.data), &s, &first, 1);
		ASSERT_EQ(ct_run(&f, fused, &fr, &state), XDP_PASS, what);
		fr.len = pkt_build_ext6(fr.data, sizeof(fr.data), &s, &later, 1);
		ASSERT_EQ(ct_run(&f, fused, &fr, &state), XDP_PASS, what);
		if (fx_stats(&f, &st)) {
			ASSERT_EQ(st.pass[XNF_R_FRAG], 2, what);
			ASSERT_EQ(ct_count(&f), 0, what);
		}
		ct_close(&f);
	}
}
