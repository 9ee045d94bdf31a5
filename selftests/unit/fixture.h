/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fixture.h - what the BPF unit tests share. The process runs in a private
 * network and mount namespace (made on first use), with its own bpffs on
 * /sys/fs/bpf and three veth pairs ut0/ut0p, ut1/ut1p, ut2/ut2p: nothing a
 * test creates can outlive it or touch the host, even when it crashes.
 * Each test opens fresh tables (fx_open), loads a chain (fx_chain) and
 * runs crafted frames through it with BPF_PROG_TEST_RUN (fx_run), frames
 * entering on ut0.
 */
#ifndef XNF_FIXTURE_H
#define XNF_FIXTURE_H

#include "xnf.h"
/* White-box: the instance's tables (lib/dp_priv.h). */
#include "dp_priv.h"
#include "pkt.h"
#include "test.h"

#define FX_PORTS 3
#define FX_ROOT	 "/sys/fs/bpf/xnf-ut"

struct fx {
	struct xnf_dp *dp;
	struct xnf_chain *chain;
	__u32 ifindex[FX_PORTS]; /* ut0 (ingress), ut1, ut2 */
	__u8 mac[FX_PORTS][6];
};

struct fx_out {
	int ret; /* XDP action */
	__u32 len;
	__u8 data[PKT_MAX];
};

/* The private namespaces, bpffs and veths, made on first use (fx_open
 * does it too): false and a failed assertion if impossible. */
bool fx_env(void);
/* Fresh tables (default config, ut0..ut2 in the devmap, no rules, no
 * routes); false and a failed assertion if that is impossible. */
bool fx_open(struct fx *f);
/* Loads "firewall,l3fwd,..." for ut0. */
bool fx_chain(struct fx *f, const char *chain, bool fused, bool fib);
void fx_close(struct fx *f);
/* Runs one frame through the chain; 0 or -errno. */
int fx_run(struct fx *f, const void *pkt, __u32 len, struct fx_out *out);
/* Sum over CPUs of the interface counters. */
bool fx_stats(struct fx *f, struct xnf_stats *st);
/* Runs a shell command inside the test namespace; its exit status. */
int fx_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Helpers for common table entries. */
bool fx_route4(struct fx *f, const char *prefix, __u32 port, __u32 type);
bool fx_route6(struct fx *f, const char *prefix, __u32 port, __u32 type);
bool fx_set_cfg(struct fx *f, __u32 no_route, __u32 ttl, __u32 local,
		__u32 l2_miss);
/* xnf_config.martian (enum xnf_action); fresh tables have drop. */
bool fx_set_martian(struct fx *f, __u32 martian);
/* Sum of drop[] / pass[] over all reasons. */
__u64 fx_drops(const struct xnf_stats *st);
__u64 fx_passes(const struct xnf_stats *st);
/* Checks a fused run against the tail-called run of the same frame (only
 * when that one produced output): same action, same bytes. */
void fx_same_as_tail(const struct fx_out *fused, const struct fx_out *tail,
		     const char *what);
/* Prints the counters (for failing tests). */
void fx_dump(const struct xnf_stats *st);

/* The MAC a route's next hop gets in fx_route4/6: 02:00:00:00:0n:01 for
 * port n. */
void fx_nh_mac(__u32 port, __u8 mac[6]);

/* The route table the l3fwd tests (XDP and userspace) share:
 *   198.51.100.0/24 -> ut1, 10.0.0.0/8 -> ut1, 10.1.2.0/24 -> ut2,
 *   10.1.2.3/32 -> ut0, 2001:db8::/32 -> ut1, 2001:db8:5::/48 -> ut2,
 *   2001:db8:5::5/128 -> ut0, and one prefix of each other type. No route:
 *   192.0.2.0/24 (the sources) and 3fff::/20. */
bool fx_l3_table(struct fx *f);

/* Multipath (XDP and userspace tests): FX_MP_PATHS next hops, path i on
 * ut1 or ut2 (alternately) with MAC 02:00:00:00:0f:(0xa0 + i), so the
 * MAC a frame leaves with names its path (fx_mp_path_of). */
#define FX_MP_PATHS 4
void fx_mp_path(struct fx *f, __u32 i, struct xnf_route *rt);
/* The last byte of the destination MAC l3fwd writes for the IPv4 @dst
 * (0xa0 + i for fx_mp_path(i)), -1 when it does not forward. */
int fx_path_to(struct fx *f, const char *dst);
/* Both copies of the route table of @family hold the same routes. */
bool fx_rt_copies_equal(struct fx *f, int family);
/* The refs of fx_mp_path(@i)'s nexthop object (0: none); *@in_use: how
 * many nexthop objects are in use. */
__u32 fx_nh_refs(struct fx *f, __u32 i, __u32 *in_use);
/* A route of @prefix ("198.51.100.0/24", v4 or v6) over the paths whose
 * bits are set in @mask, added or replaced. */
bool fx_mp_route(struct fx *f, const char *prefix, __u32 mask);
/* The path of a forwarded frame's destination MAC, or -1. */
int fx_mp_path_of(const __u8 *frame);
/* The flow @k (0..) of a family: varying source address and ports,
 * towards @dst; @reverse swaps the directions. */
int fx_mp_flow(__u8 *buf, size_t cap, int family, __u32 k, const char *dst,
	       bool reverse);

/* The FDB and routes the l2fwd tests (XDP and userspace) share: the MACs
 * below on their ports; group addresses (never matched); next hop 1
 * (fx_nh_mac) moved to ut2, next hop 2 on the ingress port. Routes:
 * 198.51.100.0/24 and 2001:db8:2::/48 via nh1 on ut1, 10.2.0.0/16 via nh2
 * on ut2, 10.3.0.0/16 via FX_MAC_UNKNOWN on ut1, 203.0.113.0/24 blackhole. */
/* clang-format off */
#define FX_MAC_ON_UT0 { 0x02, 0, 0, 0, 0x00, 0xaa }
#define FX_MAC_ON_UT1 { 0x02, 0, 0, 0, 0x01, 0xaa }
#define FX_MAC_ON_UT2 { 0x02, 0, 0, 0, 0x02, 0xaa }
#define FX_MAC_UNKNOWN { 0x02, 0, 0, 0, 0x09, 0x99 }
#define FX_MAC_BCAST { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }
#define FX_MAC_MCAST4 { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb }
#define FX_MAC_MCAST6 { 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 }
/* clang-format on */

bool fx_l2_table(struct fx *f);

/* Zeroes the interface counters of the loaded chain. */
bool fx_stats_reset(struct fx *f);
/* Asserts what must hold for any counters, whatever was run: in == pass +
 * drop + redirect in every row, in packets and in bytes, and every packet
 * the entry row passed or dropped counted under exactly one reason (sum of
 * pass[] == entry pass, sum of drop[] == entry drop; the same in bytes). */
bool fx_stats_consistent(const struct xnf_stats *st, const char *what);
/* Puts @rules[0..n) into slots 0..n-1 of the running rule set (in_use
 * set) and applies it with @default_action (enum xnf_fw_action). Other
 * slots are left as they are: fresh tables have none. */
bool fx_fw_load(struct fx *f, const struct xnf_fw_rule *rules, __u32 n,
		__u32 default_action);
/* Applies the running rules with another default. */
bool fx_fw_default(struct fx *f, __u32 default_action);

/* What the counters must show after exactly one frame that the chain let
 * go with the XDP action @ret: the entry row counted it once under that
 * action, every row is consistent (fx_stats_consistent), and a pass or
 * drop was counted under @reason (enum xnf_reason). */
bool fx_expect_entry(const struct xnf_stats *st, int ret, __u32 reason,
		     const char *what);
/* Row @nf saw exactly one frame and let it go with the verdict class of
 * @ret (XDP_PASS, XDP_DROP, or XDP_REDIRECT for redirect, flood and xsk);
 * with @ret < 0 the NF never saw it. */
bool fx_expect_nf(const struct xnf_stats *st, __u32 nf, int ret,
		  const char *what);

/*
 * Where a redirect really goes. fx_run() shows the verdict and the bytes
 * but not the egress port, so these run a frame in live mode
 * (BPF_F_TEST_XDP_LIVE_FRAMES: the verdict is carried out, redirects leave
 * through the devmap onto the veth) and look for it with packet sockets on
 * the peers ut0p..ut2p. fx_cap_open turns on GRO on the peers, as a veth
 * accepts redirected frames only when its peer runs NAPI; fx_cap_close
 * turns it off again where it was off.
 */
struct fx_cap {
	int fd[FX_PORTS];
	bool gro[FX_PORTS]; /* GRO was on before: leave it on */
};

bool fx_cap_open(struct fx_cap *c);
void fx_cap_close(struct fx_cap *c);
/* Runs one frame through the chain in live mode; 0 or -errno. */
int fx_run_live(struct fx *f, const void *pkt, __u32 len);
/* Bit n set: a frame equal to @want (VLAN tags included) arrived on the
 * peer of port n. Waits for the ports in @expect (at most FX_WAIT_MS, a
 * guard against a hang: the frame is normally there at once, but a busy
 * machine may run the peer's softirq seconds late), then a little longer
 * for copies that should not come; other frames (the kernel's own ND,
 * MLD, ...) are read and ignored. */
__u32 fx_cap_ports(struct fx_cap *c, const void *want, __u32 len, __u32 expect);

/* How long a test waits for something that must happen (a frame, a
 * counter) before it fails: generous, since only a hang should reach it. */
#define FX_WAIT_MS 30000
/* CLOCK_MONOTONIC in milliseconds, for such deadlines. */
long fx_now_ms(void);
/* Frames @dev dropped on their way to its veth peer (its tx_dropped: the
 * ring toward the peer was full), or -1 when unreadable. */
long long fx_tx_dropped(const char *dev);

#endif /* XNF_FIXTURE_H */
