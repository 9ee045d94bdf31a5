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
#include "pkt.h"
#include "test.h"

#define FX_PORTS 3
#define FX_ROOT "/sys/fs/bpf/xnf-ut"

struct fx {
	struct xnf_dp *dp;
	struct xnf_chain *chain;
	__u32 ifindex[FX_PORTS];   /* ut0 (ingress), ut1, ut2 */
	__u8 mac[FX_PORTS][6];
};

struct fx_out {
	int ret;                   /* XDP action */
	__u32 len;
	__u8 data[PKT_MAX];
};

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
bool fx_set_cfg(struct fx *f, __u32 no_route, __u32 ttl, __u32 local, __u32 l2_miss);
/* Sum of drop[] / pass[] over all reasons. */
__u64 fx_drops(const struct xnf_stats *st);
__u64 fx_passes(const struct xnf_stats *st);
/* Prints the counters (for failing tests). */
void fx_dump(const struct xnf_stats *st);

/* The MAC a route's next hop gets in fx_route4/6: 02:00:00:00:0n:01 for
 * port n. */
void fx_nh_mac(__u32 port, __u8 mac[6]);

#endif /* XNF_FIXTURE_H */
