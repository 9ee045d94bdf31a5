// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Frame templates, size tables and latency buckets; see traffic.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <linux/if_ether.h>

#include "traffic.h"

/*
 * IMIX: the classic "simple IMIX", 7:4:1 of 64-, 594- and 1518-byte frames
 * (FCS included; mean 353.8 bytes).
 */
const struct xnf_size_weight xnf_imix[] = {
	{ 64, 7 },
	{ 594, 4 },
	{ 1518, 1 },
};
const size_t xnf_imix_len = sizeof(xnf_imix) / sizeof(xnf_imix[0]);

/*
 * dc: a data-center frame-size distribution, per mille. It is NOT the
 * trace itself. Niu et al. ("Unveiling Performance of NFV Software
 * Dataplanes", CAN'17, section 4.1) sent the packet sizes of Facebook's
 * web-server cluster (Roy et al., "Inside the Social Network's
 * (Datacenter) Network", SIGCOMM 2015) and publish three facts about it:
 * the median is ~120 B, most packets are under 256 B, and pkt-gen sending
 * it at 10 Gb/s offered at least the 8.662 Mpps BESS forwarded, so the
 * mean frame is at most 10e9 / 8 / 8.662e6 - 20 = 124.3 B (20 B of
 * preamble and gap per frame). The per-size numbers of Roy et al.'s
 * figure were not available here. The bins and weights below are ours,
 * chosen to meet those three facts: 64-byte frames for pure TCP ACKs, a
 * body of small request/response frames between 96 and 240 bytes, and a
 * thin tail of 576- and 1518-byte frames. Median 120, 98.6% under 256 B,
 * mean 123.7 B.
 */
const struct xnf_size_weight xnf_dc[] = {
	{ 64, 326 }, { 96, 120 }, { 120, 180 }, { 128, 150 }, { 160, 110 },
	{ 192, 60 }, { 240, 40 }, { 576, 10 },	{ 1518, 4 },
};
const size_t xnf_dc_len = sizeof(xnf_dc) / sizeof(xnf_dc[0]);

unsigned int xnf_gen_hdr_len(int family, int proto)
{
	return ETH_HLEN + (family == 6 ? 40 : 20) +
	       (proto == IPPROTO_TCP ? 20 : 8);
}

unsigned int xnf_gen_min_size(int family, int proto)
{
	unsigned int n = xnf_gen_hdr_len(family, proto) +
			 sizeof(struct xnf_probe_short) + 4;

	return n < 64 ? 64 : n;
}

/* Ones'-complement sum of 16-bit words as loaded natively (see
 * struct xnf_gen_cfg); len is even. */
static __u32 native_sum(const void *data, size_t len)
{
	const __u8 *p = data;
	__u32 sum = 0;
	__u16 w;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		memcpy(&w, p + i, 2);
		sum += w;
	}
	return sum;
}

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(__u8 *p, __u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* The table of a distribution: each size weight times, in an order fixed
 * by a seeded shuffle, so that any run of sum(weights) consecutive frames
 * has the exact distribution and sizes are interleaved. */
static int fill_sizes(const struct xnf_size_weight *w, size_t n,
		      unsigned int min, struct xnf_gen_cfg *cfg, bool *raised)
{
	__u64 x = 0x786e66676e6e6e21ull; /* xorshift64 seed */
	__u32 k = 0, i, j;
	size_t e;

	for (e = 0; e < n; e++)
		for (j = 0; j < w[e].weight; j++) {
			if (k >= XNF_GEN_SIZES_MAX)
				return -EINVAL;
			cfg->sizes[k++] = w[e].size < min ? min : w[e].size;
			if (w[e].size < min)
				*raised = true;
		}
	for (i = k - 1; i > 0; i--) {
		__u16 t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % (i + 1);
		t = cfg->sizes[i];
		cfg->sizes[i] = cfg->sizes[j];
		cfg->sizes[j] = t;
	}
	cfg->nsizes = k;
	return 0;
}

int xnf_mix_zipf(__u32 flows, double s, __u32 *table, __u32 n)
{
	__u64 x = 0x786e667a69706621ull; /* xorshift64 seed */
	double h = 0, cum;
	__u32 i, j, rank;

	if (flows < 1 || flows > XNF_GEN_FLOWS_MAX || !n || !(s > 0) ||
	    !isfinite(s))
		return -EINVAL;
	/* From the smallest term up: the sum loses less precision. */
	for (i = flows; i >= 1; i--)
		h += pow(i, -s);
	/* One pass: entry j's point (j + 1/2) / n * h only grows with j. */
	rank = 0;
	cum = 1.0; /* flow 0 weighs 1^-s; cum: the weight up to rank's end */
	for (j = 0; j < n; j++) {
		double at = (j + 0.5) / n * h;

		while (cum < at && rank + 1 < flows) {
			rank++;
			cum += pow(rank + 1, -s);
		}
		table[j] = rank;
	}
	for (i = n - 1; i > 0; i--) {
		__u32 t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % (i + 1);
		t = table[i];
		table[i] = table[j];
		table[j] = t;
	}
	return 0;
}

__u32 xnf_mix_ports(__u16 sport, __u16 dport, __u32 flow)
{
	__u8 b[4];
	__u32 v;

	put16(b, sport + flow);
	put16(b + 2, dport + (flow >> 16));
	memcpy(&v, b, 4);
	return v;
}

int xnf_gen_cfg_build(const struct xnf_gen_spec *s, struct xnf_gen_cfg *cfg,
		      bool *raised, char *err, size_t errlen)
{
	unsigned int min = xnf_gen_min_size(s->family, s->proto);
	unsigned int alen = s->family == 6 ? 16 : 4,
		     l4 = ETH_HLEN + (s->family == 6 ? 40 : 20);
	const char *fam = s->family == 6 ? "ipv6" : "ipv4";
	const char *pro = s->proto == IPPROTO_TCP ? "tcp" : "udp";
	__u8 *h = cfg->hdr, pseudo[40] = { 0 }, l4h[20];
	unsigned int l4hl = s->proto == IPPROTO_TCP ? 20 : 8;

	memset(cfg, 0, sizeof(*cfg));
	*raised = false;
	if (s->flows < 1 || s->flows > XNF_GEN_FLOWS_MAX) {
		snprintf(err, errlen, "flows must be 1..%u", XNF_GEN_FLOWS_MAX);
		return -EINVAL;
	}
	switch (s->dist) {
	case XNF_SIZE_FIXED:
		if (s->size < 64 || s->size > XNF_GEN_FRAME_MAX) {
			snprintf(err, errlen,
				 "size %u is not a frame size of 64..%u bytes (FCS included)",
				 s->size, XNF_GEN_FRAME_MAX);
			return -EINVAL;
		}
		if (s->size < min) {
			snprintf(err, errlen,
				 "size %u is too small for %s/%s with the probe: the smallest is %u",
				 s->size, fam, pro, min);
			return -EINVAL;
		}
		cfg->sizes[0] = s->size;
		cfg->nsizes = 1;
		break;
	case XNF_SIZE_IMIX:
		if (fill_sizes(xnf_imix, xnf_imix_len, min, cfg, raised))
			return -EINVAL;
		break;
	case XNF_SIZE_DC:
		if (fill_sizes(xnf_dc, xnf_dc_len, min, cfg, raised))
			return -EINVAL;
		break;
	}

	memcpy(h, s->dmac, 6);
	memcpy(h + 6, s->smac, 6);
	put16(h + 12, s->family == 6 ? ETH_P_IPV6 : ETH_P_IP);
	if (s->family == 6) {
		h[14] = 0x60;
		h[20] = s->proto;
		h[21] = 64; /* hop limit */
		memcpy(h + 22, s->src, 16);
		memcpy(h + 38, s->dst, 16);
	} else {
		h[14] = 0x45;
		put16(h + 20, 0x4000); /* DF */
		h[22] = 64;	       /* TTL */
		h[23] = s->proto;
		memcpy(h + 26, s->src, 4);
		memcpy(h + 30, s->dst, 4);
	}
	put16(h + l4, s->sport);
	put16(h + l4 + 2, s->dport);
	if (s->proto == IPPROTO_TCP) {
		put32(h + l4 + 4, 1);	   /* seq */
		put32(h + l4 + 8, 1);	   /* ack */
		h[l4 + 12] = 5 << 4;	   /* data offset: no options */
		h[l4 + 13] = 0x18;	   /* PSH, ACK */
		put16(h + l4 + 14, 65535); /* window */
	}

	/* Sums without what the program writes per frame. */
	if (s->family == 4) {
		__u8 ip[20];

		memcpy(ip, h + ETH_HLEN, 20);
		memset(ip + 2, 0, 2);  /* total length */
		memset(ip + 10, 0, 2); /* checksum */
		memset(ip + 12, 0, 4); /* source */
		cfg->ip_sum = native_sum(ip, 20);
	}
	memcpy(pseudo, s->src, alen - 4); /* the source's last 32 bits vary */
	memcpy(pseudo + alen, s->dst, alen);
	pseudo[2 * alen + 1] = s->proto; /* zero, protocol */
	memcpy(l4h, h + l4, l4hl);
	memset(l4h, 0, 2); /* source port */
	if (s->proto == IPPROTO_UDP)
		memset(l4h + 4, 0, 4); /* length, checksum */
	else
		memset(l4h + 16, 0, 2); /* checksum */
	cfg->l4_sum = native_sum(pseudo, 2 * alen + 2) + native_sum(l4h, l4hl);

	cfg->flows = s->flows;
	cfg->sport = s->sport;
	cfg->family = s->family;
	cfg->proto = s->proto;
	return 0;
}

double xnf_gen_mean_size(const struct xnf_gen_cfg *cfg)
{
	double sum = 0;
	__u32 i;

	for (i = 0; i < cfg->nsizes; i++)
		sum += cfg->sizes[i];
	return cfg->nsizes ? sum / cfg->nsizes : 0;
}

__u32 xnf_lat_bucket(__u64 ns)
{
	__u32 m;

	if (ns < 2 * XNF_LAT_SUB)
		return ns;
	m = 63 - __builtin_clzll(ns);
	if (m >= XNF_LAT_MAX_BITS)
		return XNF_LAT_BUCKETS - 1;
	return (m - XNF_LAT_SUB_BITS + 1) * XNF_LAT_SUB +
	       (__u32)(ns >> (m - XNF_LAT_SUB_BITS)) - XNF_LAT_SUB;
}

__u64 xnf_lat_lower(__u32 b)
{
	__u32 g = b / XNF_LAT_SUB, sub = b % XNF_LAT_SUB;

	if (b < 2 * XNF_LAT_SUB)
		return b;
	return (__u64)(XNF_LAT_SUB + sub) << (g - 1);
}

__u64 xnf_lat_quantile(const __u64 *count, __u64 n, double q, __u64 min, __u64 max)
{
	__u64 rank, cum = 0, lo, hi, v;
	__u32 b;

	if (!n)
		return 0;
	rank = (__u64)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < XNF_LAT_BUCKETS; b++) {
		cum += count[b];
		if (cum >= rank)
			break;
	}
	if (b == XNF_LAT_BUCKETS)
		return max;
	lo = xnf_lat_lower(b);
	hi = xnf_lat_lower(b + 1);
	v = lo + (hi - lo) / 2;
	if (v < min)
		v = min;
	if (v > max)
		v = max;
	return v;
}

int xnf_parse_mac(const char *s, __u8 mac[6])
{
	unsigned int b[6];
	char end;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5], &end) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		mac[i] = b[i];
	}
	return 0;
}
