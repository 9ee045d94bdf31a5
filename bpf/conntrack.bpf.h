/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * conntrack.bpf.h - the conntrack NF: finds the connection of an IP
 * packet in xnf_ct (include/uapi/xnf_ct.h), moves it through Linux's
 * state machines (nf_conntrack_proto_tcp.c with be_liberal=1 and loose=1,
 * udp, icmp, generic) and sets the packet's ct state as nft's `ct state`
 * reads it. A new connection waits in xnf_ct_pending until the packet is
 * accepted (xnf_ct_confirm(), conntrack_maps.bpf.h). docs/conntrack.md
 * says what it does and where it differs from Linux.
 */
#ifndef XNF_CONNTRACK_BPF_H
#define XNF_CONNTRACK_BPF_H

#include "common.bpf.h"
#include "tables.bpf.h"
#include "conntrack_maps.bpf.h"
#include "chain.bpf.h"

#define XNF_NS_PER_S 1000000000ULL

/* TCP header flags (byte 13). */
#define XNF_TCP_FIN 0x01
#define XNF_TCP_SYN 0x02
#define XNF_TCP_RST 0x04
#define XNF_TCP_PSH 0x08
#define XNF_TCP_ACK 0x10
#define XNF_TCP_URG 0x20
#define XNF_TCP_ECE 0x40
#define XNF_TCP_CWR 0x80

/* nf_conntrack_tcp.h's IP_CT_TCP_FLAG_CLOSE_INIT: this direction sent the
 * FIN that started the close (xnf_ct_entry.tcp_flags[dir]). */
#define XNF_CT_TCP_F_CLOSE_INIT 0x04

/* The row of the state table a TCP packet picks (Linux's enum tcp_bit_set
 * and get_conntrack_index()). */
enum xnf_ct_tcp_index {
	XNF_CT_I_SYN,
	XNF_CT_I_SYNACK,
	XNF_CT_I_FIN,
	XNF_CT_I_ACK,
	XNF_CT_I_RST,
	XNF_CT_I_NONE,
	__XNF_CT_I_MAX
};

/* Table results beyond the states: Linux's TCP_CONNTRACK_MAX (invalid)
 * and TCP_CONNTRACK_IGNORE. */
#define XNF_CT_TCP_IV __XNF_CT_TCP_MAX
#define XNF_CT_TCP_IG (__XNF_CT_TCP_MAX + 1)

/* Linux's unacknowledged timeout (nf_conntrack_tcp_timeout_unacknowledged,
 * 300 s): the cap of an ESTABLISHED entry that has seen no reply (a
 * mid-stream pick-up), so that a one-sided flow does not stay 5 days. */
#define XNF_CT_TCP_UNACK_S   300
/* A UDP flow that has seen a reply becomes a stream (timeout
 * udp_timeout_stream, ASSURED) once it is still active 2 s after it
 * started (nf_conntrack_proto_udp.c, stream_ts). */
#define XNF_CT_UDP_STREAM_NS (2 * XNF_NS_PER_S)

/*
 * tcp_conntracks[dir][index][state] of nf_conntrack_proto_tcp.c (Linux
 * 6.x), flattened: [dir * 60 + index * 10 + state]. States in the order of
 * enum xnf_ct_tcp_state: NO SS SR ES FW CW LA TW CL S2.
 */
#define sNO XNF_CT_TCP_NONE
#define sSS XNF_CT_TCP_SYN_SENT
#define sSR XNF_CT_TCP_SYN_RECV
#define sES XNF_CT_TCP_ESTABLISHED
#define sFW XNF_CT_TCP_FIN_WAIT
#define sCW XNF_CT_TCP_CLOSE_WAIT
#define sLA XNF_CT_TCP_LAST_ACK
#define sTW XNF_CT_TCP_TIME_WAIT
#define sCL XNF_CT_TCP_CLOSE
#define sS2 XNF_CT_TCP_SYN_SENT2
#define sIV XNF_CT_TCP_IV
#define sIG XNF_CT_TCP_IG
/* clang-format off */
static const __u8 xnf_ct_tcp_table[2 * __XNF_CT_I_MAX * __XNF_CT_TCP_MAX] = {
	/* original; states:  NO   SS   SR   ES   FW   CW   LA   TW   CL   S2 */
	/* syn     */ sSS, sSS, sIG, sIG, sIG, sIG, sIG, sSS, sSS, sS2,
	/* synack  */ sIV, sIV, sSR, sIV, sIV, sIV, sIV, sIV, sIV, sSR,
	/* fin     */ sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV,
	/* ack     */ sES, sIV, sES, sES, sCW, sCW, sTW, sTW, sCL, sIV,
	/* rst     */ sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL,
	/* none    */ sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV,
	/* reply; states:  NO   SS   SR   ES   FW   CW   LA   TW   CL   S2 */
	/* syn     */ sIV, sS2, sIV, sIV, sIV, sIV, sIV, sSS, sIV, sS2,
	/* synack  */ sIV, sSR, sIG, sIG, sIG, sIG, sIG, sIG, sIG, sSR,
	/* fin     */ sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV,
	/* ack     */ sIV, sIG, sSR, sES, sCW, sCW, sTW, sTW, sCL, sIG,
	/* rst     */ sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL,
	/* none    */ sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV,
};
/* clang-format on */
#undef sNO
#undef sSS
#undef sSR
#undef sES
#undef sFW
#undef sCW
#undef sLA
#undef sTW
#undef sCL
#undef sS2
#undef sIV
#undef sIG

static __always_inline __u32 xnf_ct_tcp_next(__u32 dir, __u32 index, __u32 state)
{
	__u32 i = dir * (__XNF_CT_I_MAX * __XNF_CT_TCP_MAX) +
		  index * __XNF_CT_TCP_MAX + state;

	if (dir > 1 || index >= __XNF_CT_I_MAX || state >= __XNF_CT_TCP_MAX ||
	    i >= sizeof(xnf_ct_tcp_table))
		return XNF_CT_TCP_IV;
	return xnf_ct_tcp_table[i];
}

/* Linux's get_conntrack_index(). */
static __always_inline __u32 xnf_ct_tcp_index(__u8 f)
{
	if (f & XNF_TCP_RST)
		return XNF_CT_I_RST;
	if (f & XNF_TCP_SYN)
		return f & XNF_TCP_ACK ? XNF_CT_I_SYNACK : XNF_CT_I_SYN;
	if (f & XNF_TCP_FIN)
		return XNF_CT_I_FIN;
	if (f & XNF_TCP_ACK)
		return XNF_CT_I_ACK;
	return XNF_CT_I_NONE;
}

/* tcp_error()'s flag check (tcp_valid_flags[]): ECE, CWR and PSH aside,
 * only these combinations are valid; SYN+FIN, no flag at all, FIN without
 * ACK, ... are invalid. */
static __always_inline int xnf_ct_tcp_flags_valid(__u8 f)
{
	f &= ~(XNF_TCP_ECE | XNF_TCP_CWR | XNF_TCP_PSH);
	switch (f) {
	case XNF_TCP_SYN:
	case XNF_TCP_SYN | XNF_TCP_URG:
	case XNF_TCP_SYN | XNF_TCP_ACK:
	case XNF_TCP_RST:
	case XNF_TCP_RST | XNF_TCP_ACK:
	case XNF_TCP_FIN | XNF_TCP_ACK:
	case XNF_TCP_FIN | XNF_TCP_ACK | XNF_TCP_URG:
	case XNF_TCP_ACK:
	case XNF_TCP_ACK | XNF_TCP_URG:
		return 1;
	default:
		return 0;
	}
}

/* What an ICMP or ICMPv6 type is to conntrack. */
enum xnf_ct_icmp_kind {
	XNF_CT_ICMP_INVALID,   /* no connection can hold it */
	XNF_CT_ICMP_REQUEST,   /* may start one (echo request, ...) */
	XNF_CT_ICMP_REPLY,     /* answers one */
	XNF_CT_ICMP_ERROR,     /* quotes a packet of one: related */
	XNF_CT_ICMP_UNTRACKED, /* ICMPv6 neighbour discovery and MLD, which
				* Linux leaves untracked (icmpv6_error,
				* noct_valid_new) */
};

static __always_inline __u32 xnf_ct_icmp_kind(__u8 family, __u8 type)
{
	if (family == XNF_AF_INET) {
		switch (type) {
		case 8:	 /* echo */
		case 13: /* timestamp */
		case 15: /* information request */
		case 17: /* address mask request */
			return XNF_CT_ICMP_REQUEST;
		case 0:
		case 14:
		case 16:
		case 18:
			return XNF_CT_ICMP_REPLY;
		case 3:	 /* destination unreachable */
		case 4:	 /* source quench */
		case 5:	 /* redirect */
		case 11: /* time exceeded */
		case 12: /* parameter problem */
			return XNF_CT_ICMP_ERROR;
		default:
			return XNF_CT_ICMP_INVALID;
		}
	}
	switch (type) {
	case 128: /* echo request */
	case 139: /* node information query */
		return XNF_CT_ICMP_REQUEST;
	case 129:
	case 140:
		return XNF_CT_ICMP_REPLY;
	case 1: /* destination unreachable */
	case 2: /* packet too big */
	case 3: /* time exceeded */
	case 4: /* parameter problem */
		return XNF_CT_ICMP_ERROR;
	case 130: /* MLD query, report, done */
	case 131:
	case 132:
	case 133: /* router solicitation, advertisement */
	case 134:
	case 135: /* neighbour solicitation, advertisement */
	case 136:
	case 143: /* MLDv2 report */
		return XNF_CT_ICMP_UNTRACKED;
	default:
		return XNF_CT_ICMP_INVALID;
	}
}

/*
 * Makes @k, which holds the source address in a_addr and the destination
 * in b_addr, the canonical key of the flow from (src, @sport) to (dst,
 * @dport): the lower endpoint is "a" (addresses compared as bytes:
 * big-endian words compared as numbers, then ports as numbers). Returns 1
 * when the source is the b side. The key lives in a map value, not on
 * the stack: a fused chain's NFs leave little of it.
 */
static __always_inline int xnf_ct_key_order(struct xnf_ct_key *k, __u8 family,
					    __u8 proto, __be16 sport,
					    __be16 dport)
{
	__u32 *a = (__u32 *)k->a_addr, *b = (__u32 *)k->b_addr, t;
	int i, cmp = 0;

#pragma unroll
	for (i = 0; i < 4; i++) {
		__u32 s = bpf_ntohl(a[i]), d = bpf_ntohl(b[i]);

		if (!cmp && s != d)
			cmp = s < d ? -1 : 1;
	}
	if (!cmp && sport != dport)
		cmp = bpf_ntohs(sport) < bpf_ntohs(dport) ? -1 : 1;
	k->family = family;
	k->proto = proto;
	k->pad = 0;
	if (cmp <= 0) {
		k->a_port = sport;
		k->b_port = dport;
		return 0;
	}
#pragma unroll
	for (i = 0; i < 4; i++) {
		t = a[i];
		a[i] = b[i];
		b[i] = t;
	}
	k->a_port = dport;
	k->b_port = sport;
	return 1;
}

#define XNF_CT_S_NAT (XNF_CT_S_SNAT | XNF_CT_S_DNAT)

/* Deletes the alias of the translated connection @e: the entry under the
 * canonical key of its reply tuple, made in pe->inner (scratch until the
 * packet's translation is written). An alias is no connection: its
 * removal is not counted (lib/ct.c). */
static __always_inline void xnf_ct_alias_del(struct xnf_ct_pending *pe,
					     const struct xnf_ct_entry *e)
{
	pe->inner = e->nat;
	xnf_ct_key_order(&pe->inner, e->nat.family, e->nat.proto, e->nat.a_port,
			 e->nat.b_port);
	bpf_map_delete_elem(&XNF_MAP_CT, &pe->inner);
}

/* The live entry of pe->key, or NULL; a dead one (its timeout passed, the
 * LRU has not reaped it yet) is deleted, with its alias when it was
 * translated, so that a new connection can take its key. */
static __always_inline struct xnf_ct_entry *
xnf_ct_lookup(struct xnf_ct_pending *pe, __u64 now, struct xnf_ct_counters *cs)
{
	struct xnf_ct_entry *e;

	cs->searched++;
	e = bpf_map_lookup_elem(&XNF_MAP_CT, &pe->key);
	if (!e)
		return NULL;
	if (e->expires <= now) {
		if (e->status & XNF_CT_S_NAT)
			xnf_ct_alias_del(pe, e);
		if (!bpf_map_delete_elem(&XNF_MAP_CT, &pe->key))
			cs->expired++;
		return NULL;
	}
	cs->found++;
	return e;
}

/* Endpoint (address, port) @x_b (0: a, 1: b) of @x is @y's endpoint
 * @y_b. */
static __always_inline int xnf_ct_ep_eq(const struct xnf_ct_key *x, int x_b,
					const struct xnf_ct_key *y, int y_b)
{
	const __u32 *a = (const __u32 *)(x_b ? x->b_addr : x->a_addr);
	const __u32 *b = (const __u32 *)(y_b ? y->b_addr : y->a_addr);

	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] &&
	       (x_b ? x->b_port : x->a_port) == (y_b ? y->b_port : y->a_port);
}

/* Endpoint @to_b of @to becomes @from's endpoint @from_b. */
static __always_inline void xnf_ct_ep_copy(struct xnf_ct_key *to, int to_b,
					   const struct xnf_ct_key *from,
					   int from_b)
{
	__builtin_memcpy(to_b ? to->b_addr : to->a_addr,
			 from_b ? from->b_addr : from->a_addr, 16);
	if (to_b)
		to->b_port = from_b ? from->b_port : from->a_port;
	else
		to->a_port = from_b ? from->b_port : from->a_port;
}

/* The packet's source address into a_addr of @k, its destination into
 * b_addr, the rest of @k zero; -1 when the IP header is not in the first
 * buffer. */
static __always_inline int xnf_ct_addrs(struct xdp_md *ctx, __u16 l3_off,
					__u8 family, struct xnf_ct_key *k)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	__builtin_memset(k, 0, sizeof(*k));
	if (l3_off > XNF_MAX_L3_OFF)
		return -1;
	if (family == XNF_AF_INET) {
		struct iphdr *iph = data + l3_off;

		if ((void *)(iph + 1) > data_end)
			return -1;
		__builtin_memcpy(k->a_addr, &iph->saddr, 4);
		__builtin_memcpy(k->b_addr, &iph->daddr, 4);
	} else {
		struct ipv6hdr *ip6h = data + l3_off;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		__builtin_memcpy(k->a_addr, &ip6h->saddr, 16);
		__builtin_memcpy(k->b_addr, &ip6h->daddr, 16);
	}
	return 0;
}

/* Whether the addresses of @len bytes (4 or 16) at @a and @b differ: by
 * words, as BPF has no memcmp. */
static __always_inline int xnf_ct_addr_differs(const __u8 *a, const __u8 *b,
					       __u32 len)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	if (x[0] != y[0])
		return 1;
	return len == 16 && (x[1] != y[1] || x[2] != y[2] || x[3] != y[3]);
}

/*
 * An ICMP or ICMPv6 error: pe->key, which holds the error's addresses
 * (xnf_ct_addrs), becomes the key of the connection whose packet it
 * quotes (the inner header, read with bpf_xdp_load_bytes into pe->entry,
 * so that it may lie beyond the first buffer). Returns 1 when the quoted
 * packet's source is the key's b side, or -1 when the quote is not a
 * packet of @family, or the error does not go back to the quoted packet's
 * sender (as nf_conntrack_inet_error() checks).
 */
static __always_inline int xnf_ct_inner_key(struct xdp_md *ctx, __u32 off,
					    __u8 family,
					    struct xnf_ct_pending *pe)
{
	struct xnf_ct_key *k = &pe->key;
	__u8 *buf = (__u8 *)&pe->entry, proto;
	__be16 sport = 0, dport = 0;
	__u32 alen, ihl;

	if (off > XNF_MAX_FRAME)
		return -1;
	if (family == XNF_AF_INET) {
		struct iphdr *ih = (struct iphdr *)buf;

		if (bpf_xdp_load_bytes(ctx, off, ih, sizeof(*ih)) ||
		    ih->version != 4 || ih->ihl < 5)
			return -1;
		proto = ih->protocol;
		ihl = ih->ihl * 4;
		alen = 4;
		/* saddr, daddr: bytes 12..19 */
		buf += 12;
	} else {
		struct ipv6hdr *ih = (struct ipv6hdr *)buf;

		if (bpf_xdp_load_bytes(ctx, off, ih, sizeof(*ih)) ||
		    ih->version != 6)
			return -1;
		proto = ih->nexthdr;
		ihl = sizeof(*ih);
		alen = 16;
		/* saddr, daddr: bytes 8..39 */
		buf += 8;
	}
	/* The error goes to the quoted packet's source. */
	if (xnf_ct_addr_differs(buf, k->b_addr, alen))
		return -1;
	__builtin_memset(k, 0, sizeof(*k));
	if (alen == 16) {
		__builtin_memcpy(k->a_addr, buf, 16);
		__builtin_memcpy(k->b_addr, buf + 16, 16);
	} else {
		__builtin_memcpy(k->a_addr, buf, 4);
		__builtin_memcpy(k->b_addr, buf + 4, 4);
	}
	buf = (__u8 *)&pe->entry;
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
	    proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		/* An error quotes at least 8 bytes of the packet's L4. */
		if (bpf_xdp_load_bytes(ctx, off + ihl, buf, 8))
			return -1;
		if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
			__builtin_memcpy(&sport, buf, 2);
			__builtin_memcpy(&dport, buf + 2, 2);
		} else if (xnf_ct_icmp_kind(family, buf[0]) ==
				   XNF_CT_ICMP_REQUEST ||
			   xnf_ct_icmp_kind(family, buf[0]) == XNF_CT_ICMP_REPLY) {
			__builtin_memcpy(&sport, buf + 4, 2);
			dport = sport;
		} else {
			return -1;
		}
	}
	return xnf_ct_key_order(k, family, proto, sport, dport);
}

static __always_inline __u64 xnf_ct_timeout(const struct xnf_ct_config *cfg,
					    __u32 to)
{
	return (__u64)cfg->timeout[to & (XNF_CT_TIMEOUTS - 1)] * XNF_NS_PER_S;
}

/* The entry a new connection would make, into xnf_ct_pending[0] (whose
 * key is already the connection's); the packet is new. */
static __always_inline int xnf_ct_new(struct xnf_pkt *p,
				      struct xnf_ct_pending *pe, int src_is_b,
				      __u8 tcp_state, __u8 tcp_index,
				      __u64 timeout, __u64 now)
{
	struct xnf_ct_entry *e = &pe->entry;

	__builtin_memset(e, 0, sizeof(*e));
	e->expires = now + timeout;
	e->created = now;
	e->packets[XNF_CT_DIR_ORIG] = 1;
	e->bytes[XNF_CT_DIR_ORIG] = p->len;
	e->status = src_is_b ? XNF_CT_S_ORIG_B : 0;
	e->tcp_state = tcp_state;
	e->tcp_last_dir = XNF_CT_DIR_ORIG;
	e->tcp_last_index = tcp_index;
	p->flags |= XNF_PKT_F_CT_PENDING;
	p->ct_state = XNF_CT_NEW;
	p->ct_dir = XNF_CT_DIR_ORIG;
	return 0;
}

/* What a TCP packet does to an entry (nf_conntrack_tcp_packet() with
 * be_liberal, without window tracking). Returns the timeout to refresh
 * the entry with, 0 to leave it alone (an ignored packet, a retransmitted
 * SYN), XNF_CT_KILL to delete it (a RST before any reply), XNF_CT_REOPEN
 * (a SYN that reopens a closed connection: the entry goes, the packet
 * makes a new one) or XNF_CT_BAD (invalid). */
#define XNF_CT_KILL   1
#define XNF_CT_REOPEN 2
#define XNF_CT_BAD    3
static __always_inline __u64 xnf_ct_tcp(struct xnf_ct_entry *e, __u32 dir,
					__u32 index, __u8 flags,
					const struct xnf_ct_config *cfg)
{
	__u32 old = e->tcp_state, status = e->status, next;
	__u64 to;

	next = xnf_ct_tcp_next(dir, index, old);
	if (next == XNF_CT_TCP_SYN_SENT && old >= XNF_CT_TCP_TIME_WAIT &&
	    old <= XNF_CT_TCP_CLOSE) {
		/* RFC 1122: a SYN may reopen a connection that closed (one
		 * side sent a FIN) or that this side reset. */
		if (((e->tcp_flags[0] | e->tcp_flags[1]) &
		     XNF_CT_TCP_F_CLOSE_INIT) ||
		    (e->tcp_last_dir == dir && e->tcp_last_index == XNF_CT_I_RST))
			return XNF_CT_REOPEN;
		next = XNF_CT_TCP_IG;
	}
	if (next == XNF_CT_TCP_IG) {
		/* Linux lets it through on the connection unchanged
		 * (NF_ACCEPT): the peers may be in sync where conntrack is
		 * not, and the answer will tell. */
		e->tcp_last_index = index;
		e->tcp_last_dir = dir;
		return 0;
	}
	if (next >= __XNF_CT_TCP_MAX)
		return XNF_CT_BAD;
	e->tcp_state = next;
	if (old != next && next == XNF_CT_TCP_FIN_WAIT)
		e->tcp_flags[dir & 1] |= XNF_CT_TCP_F_CLOSE_INIT;
	e->tcp_last_index = index;
	e->tcp_last_dir = dir;
	to = xnf_ct_timeout(cfg, index == XNF_CT_I_RST ? XNF_CT_TCP_CLOSE : next);
	if (!(status & XNF_CT_S_SEEN_REPLY)) {
		/* A RST as the only answer: no connection, delete it now. */
		if (flags & XNF_TCP_RST)
			return XNF_CT_KILL;
		/* A retransmitted SYN does not renew the timeout, or port
		 * reuse could keep the entry alive forever. */
		if (index == XNF_CT_I_SYN && old == XNF_CT_TCP_SYN_SENT)
			return 0;
		if (next == XNF_CT_TCP_ESTABLISHED &&
		    to > XNF_CT_TCP_UNACK_S * XNF_NS_PER_S)
			to = XNF_CT_TCP_UNACK_S * XNF_NS_PER_S;
	} else if (!(status & XNF_CT_S_ASSURED) &&
		   (old == XNF_CT_TCP_SYN_RECV || old == XNF_CT_TCP_ESTABLISHED) &&
		   next == XNF_CT_TCP_ESTABLISHED) {
		__sync_fetch_and_or(&e->status, XNF_CT_S_ASSURED);
	}
	return to;
}

/* What xnf_ct_key_fn() found, for xnf_ct_track_fn(): look the key up,
 * with these bits. */
#define XNF_CT_K_TRACK	 0x100 /* a connection's key is in xnf_ct_pending */
#define XNF_CT_K_ERROR	 0x080 /* ... the one an ICMP error quotes */
#define XNF_CT_K_SRC_B	 0x001 /* the packet's source is the key's b side */
#define XNF_CT_K_INDEX_S 1     /* TCP: enum xnf_ct_tcp_index, bits 1-3 */

static __always_inline int xnf_ct_invalid(struct xnf_pkt *p)
{
	struct xnf_ct_counters *cs = xnf_ct_stats_get();

	p->ct_state = XNF_CT_INVALID;
	if (cs)
		cs->invalid++;
	return 0;
}

/*
 * The NF's work on one packet is two global (not inlined) functions, as
 * the firewall's rule search is (xnf_fw_linear_fn, xnf_fw_tables_fn):
 * the verifier checks each once instead of once per state the NFs
 * before it in a fused chain leave, and each has a small
 * stack frame of its own (a fused chain with l3fwd leaves less than 100
 * bytes of the 512 to a function it calls).
 *
 * The first finds what the packet is to conntrack: nothing (not IP, a
 * fragment: those it decides, untracked ICMPv6), invalid, or a key to look
 * up, which it writes into xnf_ct_pending[0]. Returns 0, XNF_CT_K_* bits,
 * or -1 when the tables are missing.
 */
__noinline int xnf_ct_key_fn(struct xdp_md *ctx, struct xnf_pkt *p)
{
	__u32 zero = 0, kind, index = 0;
	struct xnf_ct_pending *pe;
	struct xnf_ct_config *cfg;
	__be16 sport = 0, dport = 0;
	__u8 proto, family;
	int b;

	if (!p)
		return -1;
	cfg = bpf_map_lookup_elem(&XNF_MAP_CT_CFG, &zero);
	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!cfg || !pe)
		return -1;
	family = p->family;
	if (family != XNF_AF_INET && family != XNF_AF_INET6)
		return 0;
	/* Only the kernel can reassemble: its own conntrack and nftables
	 * see the whole packet. */
	if (p->flags & XNF_PKT_F_FRAG) {
		xnf_exception(p,
			      cfg->fragments == XNF_CT_FRAG_DROP ? XNF_ACT_DROP :
								   XNF_ACT_PASS,
			      XNF_R_FRAG);
		return 0;
	}
	/* No protocol to track by (the firewall denies these anyway). */
	if (p->flags & XNF_PKT_F_L4_UNKNOWN)
		return 0;
	if (xnf_ct_addrs(ctx, p->l3_off, family, &pe->key))
		return -1;
	proto = p->l4_proto;

	switch (proto) {
	case IPPROTO_TCP:
		if (!(p->flags & XNF_PKT_F_TCP) ||
		    !xnf_ct_tcp_flags_valid(p->tcp_flags))
			return xnf_ct_invalid(p);
		index = xnf_ct_tcp_index(p->tcp_flags);
		sport = p->sport;
		dport = p->dport;
		break;
	case IPPROTO_UDP:
		if (!(p->flags & XNF_PKT_F_PORTS))
			return xnf_ct_invalid(p);
		sport = p->sport;
		dport = p->dport;
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if ((proto == IPPROTO_ICMP) != (family == XNF_AF_INET))
			break;
		if (!(p->flags & XNF_PKT_F_ICMP))
			return xnf_ct_invalid(p);
		kind = xnf_ct_icmp_kind(family, p->icmp_type);
		if (kind == XNF_CT_ICMP_UNTRACKED)
			return 0;
		if (kind == XNF_CT_ICMP_INVALID)
			return xnf_ct_invalid(p);
		if (kind == XNF_CT_ICMP_ERROR) {
			b = xnf_ct_inner_key(ctx, p->l4_off + 8, family, pe);
			if (b < 0)
				return xnf_ct_invalid(p);
			return XNF_CT_K_TRACK | XNF_CT_K_ERROR | b;
		}
		/* The identifier: bytes 4-5 of an echo's header. */
		if (bpf_xdp_load_bytes(ctx, p->l4_off + 4, &sport, 2))
			return xnf_ct_invalid(p);
		dport = sport;
		break;
	default:
		break;
	}
	b = xnf_ct_key_order(&pe->key, family, proto, sport, dport);
	return XNF_CT_K_TRACK | index << XNF_CT_K_INDEX_S | b;
}

/* The timeout of a new connection of @proto, 0 when its first packet
 * cannot make one (invalid); its TCP state in *@tcp_state. */
static __always_inline __u64 xnf_ct_new_timeout(const struct xnf_ct_config *cfg,
						const struct xnf_pkt *p,
						__u8 family, __u8 proto,
						__u32 index, __u8 *tcp_state)
{
	__u64 to;

	*tcp_state = 0;
	switch (proto) {
	case IPPROTO_TCP:
		/* tcp_new(): a SYN starts a connection; with loose=1 an ACK
		 * picks one up mid-stream; anything else is invalid. */
		*tcp_state = xnf_ct_tcp_next(XNF_CT_DIR_ORIG, index,
					     XNF_CT_TCP_NONE);
		if (*tcp_state == XNF_CT_TCP_SYN_SENT)
			return xnf_ct_timeout(cfg, XNF_CT_TCP_SYN_SENT);
		if (*tcp_state != XNF_CT_TCP_ESTABLISHED)
			return 0;
		to = xnf_ct_timeout(cfg, XNF_CT_TCP_ESTABLISHED);
		if (to > XNF_CT_TCP_UNACK_S * XNF_NS_PER_S)
			to = XNF_CT_TCP_UNACK_S * XNF_NS_PER_S;
		return to;
	case IPPROTO_UDP:
		return xnf_ct_timeout(cfg, XNF_CT_TO_UDP);
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if ((proto == IPPROTO_ICMP) != (family == XNF_AF_INET))
			break;
		/* Only a request can start one: an echo reply without its
		 * request is invalid. */
		if (xnf_ct_icmp_kind(family, p->icmp_type) != XNF_CT_ICMP_REQUEST)
			return 0;
		return xnf_ct_timeout(cfg, XNF_CT_TO_ICMP);
	}
	return xnf_ct_timeout(cfg, XNF_CT_TO_GENERIC);
}

/* What a packet of an existing connection does to it: its new timeout
 * (0: leave it), or XNF_CT_BAD, XNF_CT_KILL, XNF_CT_REOPEN (xnf_ct_tcp). */
static __always_inline __u64 xnf_ct_update(struct xnf_ct_entry *e,
					   const struct xnf_ct_config *cfg,
					   const struct xnf_pkt *p, __u8 family,
					   __u8 proto, __u32 dir, __u32 index,
					   __u64 now)
{
	switch (proto) {
	case IPPROTO_TCP:
		return xnf_ct_tcp(e, dir, index, p->tcp_flags, cfg);
	case IPPROTO_UDP:
		if (!(e->status & XNF_CT_S_SEEN_REPLY) ||
		    now <= e->created + XNF_CT_UDP_STREAM_NS)
			return xnf_ct_timeout(cfg, XNF_CT_TO_UDP);
		if (!(e->status & XNF_CT_S_ASSURED))
			__sync_fetch_and_or(&e->status, XNF_CT_S_ASSURED);
		return xnf_ct_timeout(cfg, XNF_CT_TO_UDP_STREAM);
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if ((proto == IPPROTO_ICMP) == (family == XNF_AF_INET))
			return xnf_ct_timeout(cfg, XNF_CT_TO_ICMP);
	}
	return xnf_ct_timeout(cfg, XNF_CT_TO_GENERIC);
}

/*
 * A key found an alias (XNF_CT_S_ALIAS): the connection it names, whose
 * key goes into pe->key, the packet's into pe->alias. A reply comes from
 * the reply tuple's source to its destination; the packet an ICMP error
 * (@error) quotes is one of the original direction as it left
 * translated, from the reply tuple's destination. NULL, the packet's key
 * back in pe->key, when it is no packet of the connection; an alias whose
 * connection is gone is deleted.
 */
static __always_inline struct xnf_ct_entry *
xnf_ct_via_alias(struct xnf_ct_pending *pe, const struct xnf_ct_entry *al,
		 int src_b, int error, __u64 now, struct xnf_ct_counters *cs)
{
	struct xnf_ct_entry *e;

	pe->alias = pe->key;
	pe->key = al->nat;
	e = xnf_ct_lookup(pe, now, cs);
	if (!e || !(e->status & XNF_CT_S_NAT)) {
		bpf_map_delete_elem(&XNF_MAP_CT, &pe->alias);
		pe->key = pe->alias;
		return NULL;
	}
	if (!xnf_ct_ep_eq(&pe->alias, src_b, &e->nat, error) ||
	    !xnf_ct_ep_eq(&pe->alias, !src_b, &e->nat, !error)) {
		pe->key = pe->alias;
		return NULL;
	}
	return e;
}

/* What xnf_ct_track_fn() found, for xnf_ct_nat_fn(): a packet of a
 * translated connection, whose reply tuple it left in pe->xlat. */
#define XNF_CT_N_NAT	0x100
#define XNF_CT_N_REPLY	0x001 /* the packet's direction is the reply */
#define XNF_CT_N_VIA	0x002 /* found through the alias (xnf_ct_via_alias) */
#define XNF_CT_N_ERROR	0x004 /* an ICMP error: the quoted packet's key */
#define XNF_CT_N_SRC_B	0x008 /* the (quoted) packet's source is its key's b */
#define XNF_CT_N_ORIG_B 0x010 /* the connection's XNF_CT_S_ORIG_B ... */
#define XNF_CT_N_SNAT	0x020 /* ... XNF_CT_S_SNAT ... */
#define XNF_CT_N_DNAT	0x040 /* ... and XNF_CT_S_DNAT */

/*
 * The third, for a packet of a translated connection (its key in pe->key,
 * its reply tuple in pe->xlat; @info: XNF_CT_N_* bits): the tuple the
 * packet leaves with, into pe->xlat, and what of it changes, into p->nat.
 * The original direction leaves as the reply tuple's inverse, the reply
 * as the original tuple's inverse. An ICMP error leaves with the header it
 * quotes translated back (pe->inner) and its outer addresses as Linux's
 * nf_nat_icmp_reply_translation() makes them: the one of the translated
 * side of each hook (destination: dnat's prerouting, or snat's for a
 * reply; source: snat's postrouting, or dnat's for a reply). Called by the
 * NF itself, not by xnf_ct_track_fn(): a fused chain's stack has room for
 * one frame below the NF, not two. Returns 0, or -1 when the tables are
 * missing.
 */
__noinline int xnf_ct_nat_fn(struct xnf_pkt *p, __u32 info)
{
	int src_b = !!(info & XNF_CT_N_SRC_B), ob = !!(info & XNF_CT_N_ORIG_B);
	int snat = !!(info & XNF_CT_N_SNAT), dnat = !!(info & XNF_CT_N_DNAT);
	struct xnf_ct_pending *pe;
	struct xnf_ct_key *pk;
	__u32 zero = 0;

	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	if (!p || !pe)
		return -1;
	pk = info & XNF_CT_N_VIA ? &pe->alias : &pe->key;
	/* The reply tuple, while pe->xlat is written. */
	pe->inner = pe->xlat;
	p->nat = 0;
	if (!(info & XNF_CT_N_ERROR)) {
		if (info & XNF_CT_N_REPLY) {
			xnf_ct_ep_copy(&pe->xlat, 0, &pe->key, !ob);
			xnf_ct_ep_copy(&pe->xlat, 1, &pe->key, ob);
		} else {
			xnf_ct_ep_copy(&pe->xlat, 0, &pe->inner, 1);
			xnf_ct_ep_copy(&pe->xlat, 1, &pe->inner, 0);
		}
		if (!xnf_ct_ep_eq(pk, src_b, &pe->xlat, 0))
			p->nat |= XNF_PKT_NAT_SRC;
		if (!xnf_ct_ep_eq(pk, !src_b, &pe->xlat, 1))
			p->nat |= XNF_PKT_NAT_DST;
		return 0;
	}
	if (info & XNF_CT_N_VIA) {
		/* It quotes the original direction, translated: it reads
		 * as the original tuple again, and goes to the original
		 * source. */
		pe->inner = pe->key;
		xnf_ct_ep_copy(&pe->inner, 0, &pe->key, ob);
		xnf_ct_ep_copy(&pe->inner, 1, &pe->key, !ob);
	} else if (src_b != ob) {
		/* It quotes a reply, translated: it reads as the reply
		 * tuple (pe->inner already), and goes to the reply's
		 * destination, with the roles of snat and dnat swapped. */
		ob = snat;
		snat = dnat;
		dnat = ob;
	} else {
		/* It quotes the original direction untranslated: nothing
		 * to translate back. */
		return 0;
	}
	p->nat = XNF_PKT_NAT_INNER;
	/* The error goes to the quoted packet's source (its outer
	 * destination), from its destination's side. */
	if (snat) {
		xnf_ct_ep_copy(&pe->xlat, 1, &pe->inner, 0);
		if (xnf_ct_addr_differs(pk->a_addr + (src_b ? 16 : 0),
					pe->xlat.b_addr, 16))
			p->nat |= XNF_PKT_NAT_DST;
	}
	if (dnat) {
		xnf_ct_ep_copy(&pe->xlat, 0, &pe->inner, 1);
		p->nat |= XNF_PKT_NAT_SRC;
	}
	return 0;
}

/* The bits for xnf_ct_nat_fn() of a packet of the translated connection
 * @e, whose reply tuple goes into pe->xlat. */
static __always_inline int xnf_ct_nat_info(struct xnf_ct_pending *pe,
					   const struct xnf_ct_entry *e,
					   __u32 info)
{
	pe->xlat = e->nat;
	if (e->status & XNF_CT_S_ORIG_B)
		info |= XNF_CT_N_ORIG_B;
	if (e->status & XNF_CT_S_SNAT)
		info |= XNF_CT_N_SNAT;
	if (e->status & XNF_CT_S_DNAT)
		info |= XNF_CT_N_DNAT;
	return XNF_CT_N_NAT | info;
}

/* The second: looks the key up and moves the connection on, or prepares
 * a new one (xnf_ct_new). @what: xnf_ct_key_fn()'s bits. Returns 0,
 * XNF_CT_N_* bits for xnf_ct_nat_fn(), or -1 when the tables are
 * missing. */
__noinline int xnf_ct_track_fn(struct xnf_pkt *p, __u32 what)
{
	__u32 zero = 0, dir, index = (what >> XNF_CT_K_INDEX_S) & 7, via = 0;
	int src_b = what & XNF_CT_K_SRC_B;
	struct xnf_ct_pending *pe;
	struct xnf_ct_config *cfg;
	struct xnf_ct_counters *cs;
	struct xnf_ct_entry *e;
	__u8 tcp_state;
	__u64 now, to;

	if (!p)
		return -1;
	cfg = bpf_map_lookup_elem(&XNF_MAP_CT_CFG, &zero);
	pe = bpf_map_lookup_elem(&XNF_MAP_CT_PENDING, &zero);
	cs = xnf_ct_stats_get();
	if (!cfg || !pe || !cs)
		return -1;
	now = bpf_ktime_get_coarse_ns();
	e = xnf_ct_lookup(pe, now, cs);
	if (e && (e->status & XNF_CT_S_ALIAS)) {
		e = xnf_ct_via_alias(pe, e, src_b, !!(what & XNF_CT_K_ERROR),
				     now, cs);
		via = XNF_CT_N_VIA;
	}
	if (what & XNF_CT_K_ERROR) {
		if (!e)
			return xnf_ct_invalid(p);
		/* The error goes from the quoted packet's destination back
		 * to its source: the opposite of the quoted packet's
		 * direction (through an alias, the original one). */
		p->ct_state = XNF_CT_RELATED;
		p->ct_dir = via || !src_b != !!(e->status & XNF_CT_S_ORIG_B) ?
				    XNF_CT_DIR_REPLY :
				    XNF_CT_DIR_ORIG;
		cs->related++;
		if (e->status & XNF_CT_S_NAT)
			return xnf_ct_nat_info(pe, e,
					       XNF_CT_N_ERROR | via |
						       (src_b ? XNF_CT_N_SRC_B :
								0));
		return 0;
	}
	if (!e)
		goto new;
	dir = via || src_b != !!(e->status & XNF_CT_S_ORIG_B) ? XNF_CT_DIR_REPLY :
								XNF_CT_DIR_ORIG;
	/* A translated connection's replies find it through its alias:
	 * one from its original destination is another flow (as Linux,
	 * whose reply tuple is the translated one). */
	if (dir == XNF_CT_DIR_REPLY && !via && (e->status & XNF_CT_S_NAT))
		goto new;
	/* resolve_normal_ct(): until a reply was seen, a packet in the
	 * original direction is IP_CT_NEW, which nft calls "new". */
	p->ct_state = dir == XNF_CT_DIR_REPLY ||
				      (e->status & XNF_CT_S_SEEN_REPLY) ?
			      XNF_CT_ESTABLISHED :
			      XNF_CT_NEW;
	p->ct_dir = dir;
	to = xnf_ct_update(e, cfg, p, pe->key.family, pe->key.proto, dir, index,
			   now);
	if (to == XNF_CT_BAD)
		return xnf_ct_invalid(p);
	if (to == XNF_CT_REOPEN || to == XNF_CT_KILL) {
		if (e->status & XNF_CT_S_NAT)
			xnf_ct_alias_del(pe, e);
		if (!bpf_map_delete_elem(&XNF_MAP_CT, &pe->key))
			cs->deleted++;
		if (to == XNF_CT_KILL)
			return 0;
		/* The new connection is the packet's own. */
		if (via)
			pe->key = pe->alias;
		goto new;
	}
	if (to) {
		e->expires = now + to;
		__sync_fetch_and_add(&e->packets[dir & 1], 1);
		__sync_fetch_and_add(&e->bytes[dir & 1], p->len);
	}
	/* As nf_conntrack_in(): the first answer marks the connection after
	 * its own packet was handled. */
	if (dir == XNF_CT_DIR_REPLY && !(e->status & XNF_CT_S_SEEN_REPLY))
		__sync_fetch_and_or(&e->status, XNF_CT_S_SEEN_REPLY);
	if (e->status & XNF_CT_S_NAT)
		return xnf_ct_nat_info(pe, e,
				       dir | via | (src_b ? XNF_CT_N_SRC_B : 0));
	return 0;

	new : to = xnf_ct_new_timeout(cfg, p, pe->key.family, pe->key.proto,
				      index, &tcp_state);
	if (!to)
		return xnf_ct_invalid(p);
	return xnf_ct_new(p, pe, src_b, tcp_state, index, to, now);
}

/* The NF: tracks the packet, and confirms its new connection itself when
 * no later NF of the chain does (xnf_ct_confirmer). */
static __always_inline void xnf_conntrack_run(struct xdp_md *ctx,
					      struct xnf_pkt *p)
{
	int what = xnf_ct_key_fn(ctx, p);

	if (what > 0)
		what = xnf_ct_track_fn(p, what);
	if (what > 0)
		what = xnf_ct_nat_fn(p, what);
	if (what < 0) {
		/* Its tables are missing: fail closed. */
		xnf_exception(p, XNF_ACT_DROP, XNF_R_INTERNAL);
		return;
	}
	if (xnf_ct_confirmer == XNF_NF_CONNTRACK)
		xnf_ct_confirm(p);
}

#endif /* XNF_CONNTRACK_BPF_H */
