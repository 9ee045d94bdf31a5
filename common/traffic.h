/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * traffic.h - what the traffic generator (gen.c), the sink (sink.c) and
 * their tests share: the frame template and size table of a run, the frame
 * size distributions, and the latency histogram's buckets.
 */
#ifndef XNF_TRAFFIC_H
#define XNF_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xnf_traffic.h"

enum xnf_size_dist {
	XNF_SIZE_FIXED = 0,
	XNF_SIZE_IMIX, /* 7:4:1 of 64, 594, 1518 */
	XNF_SIZE_DC,   /* data-center web servers, median 120 (traffic.c) */
};

struct xnf_gen_spec {
	int family; /* 4 or 6 */
	int proto;  /* IPPROTO_UDP or IPPROTO_TCP */
	__u8 smac[6], dmac[6];
	__u8 src[16], dst[16]; /* network order; IPv4 uses the first 4 bytes */
	__u16 sport, dport;
	__u32 flows;
	enum xnf_size_dist dist;
	__u32 size; /* XNF_SIZE_FIXED: frame size with FCS */
};

/* One entry of a size distribution: frame size with FCS, and how many of
 * every sum-of-weights frames have it. */
struct xnf_size_weight {
	__u16 size;
	__u16 weight;
};

extern const struct xnf_size_weight xnf_imix[];
extern const size_t xnf_imix_len;
extern const struct xnf_size_weight xnf_dc[];
extern const size_t xnf_dc_len;

/* Header bytes (Ethernet, IP, UDP/TCP) of a frame of this family/proto. */
unsigned int xnf_gen_hdr_len(int family, int proto);
/* Smallest frame, FCS included, that carries the headers and the short
 * probe (at least 64): 64 for IPv4/UDP, 74 IPv4/TCP, 82 IPv6/UDP, 94
 * IPv6/TCP. */
unsigned int xnf_gen_min_size(int family, int proto);

/**
 * xnf_gen_cfg_build() - the .rodata of gen.bpf.c for a run
 * @s:      what to send
 * @cfg:    filled: header template of flow 0, checksum partial sums, size
 *          table (distributions shuffled in a fixed order, entries below
 *          the minimum frame raised to it; the cookie is left to the caller)
 * @raised: set when entries of a distribution were raised to the minimum
 * @err:    a message for the user when the spec is refused
 *
 * Return: 0, or -EINVAL (fixed size out of 64..1518 or below the minimum
 * for the family and protocol, flows out of 1..XNF_GEN_FLOWS_MAX).
 */
int xnf_gen_cfg_build(const struct xnf_gen_spec *s, struct xnf_gen_cfg *cfg,
		      bool *raised, char *err, size_t errlen);

/**
 * xnf_mix_zipf() - a flow mix table for a Zipf law over @flows flows
 * @flows: 1..XNF_GEN_FLOWS_MAX; flow i (from 0) has rank i + 1, flow 0 is
 *         the most frequent
 * @s:     the exponent, > 0 (1.0: the classic law)
 * @table: filled with @n flow indices
 * @n:     entries, > 0
 *
 * Flow i has probability p_i = (i + 1)^-s / H, H = sum over k of k^-s.
 * Entry j holds the flow whose cumulative probability interval contains
 * (j + 1/2) / n (the inverse CDF at evenly spaced points), so flow i holds
 * n * p_i entries, rounded up or down by at most one, and ranks are in
 * order within that rounding. Flows less likely than 1/n get one entry
 * each for every 1/n of probability they carry together. The entries are
 * then shuffled in a fixed order (a seeded xorshift), so that consecutive
 * frames take different flows.
 *
 * Return: 0, or -EINVAL (flows or s out of range).
 */
int xnf_mix_zipf(__u32 flows, double s, __u32 *table, __u32 n);

/* The source and destination port of flow @flow of a run from @sport to
 * @dport (host order) as bench.bpf.c's xnf_bench_flows holds them: the 4
 * bytes of the ports in network order, as loaded natively. Flow i has
 * source port sport + i and destination port dport + i / 65536 (mod
 * 2^16). */
__u32 xnf_mix_ports(__u16 sport, __u16 dport, __u32 flow);

/* Mean frame size (with FCS) of a size table. */
double xnf_gen_mean_size(const struct xnf_gen_cfg *cfg);

/* Latency buckets (see XNF_LAT_BUCKETS): the bucket of a value, and the
 * lowest value of bucket b (b may be XNF_LAT_BUCKETS: the end of the last). */
__u32 xnf_lat_bucket(__u64 ns);
__u64 xnf_lat_lower(__u32 b);
/* The q-quantile (0 < q <= 1) of a histogram of n values: the middle of
 * the bucket holding the value of rank ceil(q * n), kept within
 * [min, max]; 0 when n == 0. */
__u64 xnf_lat_quantile(const __u64 *count, __u64 n, double q, __u64 min,
		       __u64 max);

/* "aa:bb:cc:dd:ee:ff" -> mac; 0 or -EINVAL. */
int xnf_parse_mac(const char *s, __u8 mac[6]);

#endif /* XNF_TRAFFIC_H */
