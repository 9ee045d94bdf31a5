/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ct.h - the connection table as an operator sees it (lib/ct.c): its
 * entries, listed and flushed by a filter as conntrack(8) does, and its
 * counters (`xnf ct show`, `xnf ct flush`, `xnf ct stats`, the exporter).
 * The table itself is include/uapi/xnf_ct.h's; docs/conntrack.md says what
 * it holds.
 */
#ifndef XNF_CT_H
#define XNF_CT_H

#include <stdbool.h>
#include <linux/types.h>

#include "xnf.h"

/* What a filter checks: bits of xnf_ct_filter.what. An entry matches when
 * it passes every check that is set. */
enum xnf_ct_filter_bits {
	XNF_CT_F_FAMILY = 1 << 0, /* family */
	XNF_CT_F_PROTO = 1 << 1,  /* proto */
	XNF_CT_F_ADDR = 1 << 2,	  /* addr is either side's */
	XNF_CT_F_SRC = 1 << 3,	  /* src is the original source */
	XNF_CT_F_DST = 1 << 4,	  /* dst is the original destination */
	XNF_CT_F_PORT = 1 << 5,	  /* port is either side's */
	XNF_CT_F_SPORT = 1 << 6,  /* sport is the original source port */
	XNF_CT_F_DPORT = 1 << 7,  /* dport is the original destination port */
	XNF_CT_F_TCP_STATE = 1 << 8,  /* a TCP entry in one of tcp_states */
	XNF_CT_F_ASSURED = 1 << 9,    /* XNF_CT_S_ASSURED set */
	XNF_CT_F_UNREPLIED = 1 << 10, /* no reply seen (XNF_CT_S_SEEN_REPLY) */
	XNF_CT_F_REPLY_SRC = 1 << 11, /* rsrc is the reply's source */
	XNF_CT_F_REPLY_DST = 1 << 12, /* rdst is the reply's destination (a
				       * source NAT's address) */
	XNF_CT_F_NAT = 1 << 13,	      /* status has one of the bits of nat */
	XNF_CT_F_NAT_OIF = 1 << 14,   /* a masquerade out of device oif */
};

/* The translation bits a filter's nat may hold (XNF_CT_F_NAT). */
#define XNF_CT_NAT_BITS (XNF_CT_S_SNAT | XNF_CT_S_DNAT | XNF_CT_S_MASQ)

/* Addresses are of the family of the filter's own: an address filter
 * needs XNF_CT_F_FAMILY with it (xnf_ct_filter_check). Ports in host
 * order. */
struct xnf_ct_filter {
	__u32 what;  /* enum xnf_ct_filter_bits */
	__u8 family; /* enum xnf_family */
	__u8 proto;  /* IPPROTO_* */
	__u16 port, sport, dport;
	__u8 addr[16], src[16], dst[16];
	__u32 tcp_states; /* 1 << enum xnf_ct_tcp_state */
	__u8 rsrc[16], rdst[16];
	__u32 nat; /* XNF_CT_S_SNAT, _DNAT, _MASQ: any of them */
	__u32 oif; /* ifindex */
};

/* A live connection: its tuple in the original direction, and the
 * reply's (the original swapped, unless the connection is translated:
 * then its xnf_ct_entry.nat). For ICMP and ICMPv6 echo both ports are
 * the identifier; for protocols without ports, 0. The aliases of
 * translated connections (XNF_CT_S_ALIAS) are no connections: never one
 * of these. */
struct xnf_ct_conn {
	__u8 family; /* enum xnf_family */
	__u8 proto;
	__u8 tcp_state; /* enum xnf_ct_tcp_state; 0 for other protocols */
	__u8 pad;
	__u16 sport, dport; /* host order */
	__u8 src[16], dst[16];
	__u16 rsport, rdport; /* the reply's, host order */
	__u8 rsrc[16], rdst[16];
	__u32 status;	  /* enum xnf_ct_status */
	__u32 nat_oif;	  /* XNF_CT_S_MASQ: the device of its address */
	__u64 timeout;	  /* seconds left before it expires */
	__u64 packets[2]; /* by enum xnf_ct_dir */
	__u64 bytes[2];
};

/* `xnf ct stats`: the table's occupancy and the counters of every CPU
 * summed. */
struct xnf_ct_stats {
	__u64 entries; /* live connections */
	__u64 dead;    /* connections past their expiry, not yet replaced */
	__u64 aliases; /* the second entries of translated connections
			* (XNF_CT_S_ALIAS): no connections, but room taken */
	__u64 max;     /* the table's size (its max_entries) */
	struct xnf_ct_counters c;
	__u64 evicted; /* made room for a new entry (lib/ct.c says how) */
};

/* The connection table's settings, keys of `xnf config set` (lib/conf.c):
 * ct_fragments, ct_timeout_<name>, written into xnf_ct_cfg; ct_max, the
 * size of xnf_ct, which a BPF map has from its creation on: a commit
 * sets it only on the instance it made (docs/conntrack.md). */
struct xnf_ct_settings {
	struct xnf_ct_config cfg;
	__u32 max;
};

/* ct_max's bounds: XNF_CT_MAX_MIN (xnf_ct.h) to 16M entries (some
 * 2.5 GiB of kernel memory with the LRU's own). */
#define XNF_CT_MAX_MAX (1U << 24)

/* xnf_ct_cfg_default() (Linux's timeouts, fragments passed),
 * XNF_CT_MAX_DEFAULT entries. */
void xnf_ct_settings_default(struct xnf_ct_settings *s);
/* What runs: xnf_ct_cfg[0] (the instance writes Linux's defaults when it
 * is made, xnf_ct_cfg_default) and xnf_ct's size. */
int xnf_ct_settings_read(struct xnf_dp *dp, struct xnf_ct_settings *s,
			 char *err, size_t errlen);
/* Whether @s can run on @dp: a size other than xnf_ct's only when
 * @fresh (the commit made the instance, nothing uses the table yet),
 * else -EBUSY saying so. */
int xnf_ct_settings_check(struct xnf_dp *dp, const struct xnf_ct_settings *s,
			  bool fresh, char *err, size_t errlen);
/* Writes xnf_ct_cfg[0] and, on a fresh instance, makes xnf_ct again with
 * @s->max entries if it has another size. */
int xnf_ct_settings_write(struct xnf_dp *dp, const struct xnf_ct_settings *s,
			  bool fresh, char *err, size_t errlen);
/* The timeout slot (enum xnf_ct_timeout, a TCP state below
 * __XNF_CT_TCP_MAX) of the config key @key ("ct_timeout_established",
 * "ct_timeout_udp_stream"), or -1; and the key of a slot (NULL: none). */
int xnf_ct_timeout_slot(const char *key);
const char *xnf_ct_timeout_name(__u32 slot);

/* Is @f one a list or flush takes: 0, or -EINVAL with what is wrong in
 * @err. */
int xnf_ct_filter_check(const struct xnf_ct_filter *f, char *err, size_t errlen);
/* The live entries @f matches (NULL: all), in *@out (free() it), *@n of
 * them, in the table's order. A reader (XNF_OPEN_READ) may call it. */
int xnf_ct_list(struct xnf_dp *dp, const struct xnf_ct_filter *f,
		struct xnf_ct_conn **out, __u32 *n, char *err, size_t errlen);
/* Deletes the live connections @f matches (NULL: all), a translated
 * one's alias with it, and adds how many connections to the table's
 * flushed counter; *@flushed says how many. Every flush also deletes the
 * aliases whose connection is gone (not counted). A writer's call (the
 * counter is written under its lock). */
int xnf_ct_flush(struct xnf_dp *dp, const struct xnf_ct_filter *f,
		 __u64 *flushed, char *err, size_t errlen);
/* The table's counters alone, summed over the CPUs: no walk of the
 * table (xnf_ct_stats_read's occupancy and evictions need one). */
int xnf_ct_counters_read(struct xnf_dp *dp, struct xnf_ct_counters *sum,
			 char *err, size_t errlen);
/* The table's occupancy and counters. */
int xnf_ct_stats_read(struct xnf_dp *dp, struct xnf_ct_stats *st, char *err,
		      size_t errlen);

/* A TCP state as conntrack(8) prints it ("ESTABLISHED", "SYN_SENT2");
 * "NONE" for 0, NULL past the last. */
const char *xnf_ct_tcp_state_name(__u32 state);
/* The state named @name (any case), or -1. */
int xnf_ct_tcp_state_parse(const char *name);

#endif /* XNF_CT_H */
