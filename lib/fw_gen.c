// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fw_gen.c - synthetic firewall rule sets shaped like real ACLs, for the
 * unit tests and the benchmarks.
 *
 * This is not ClassBench (Taylor & Turner, "ClassBench: a packet
 * classification benchmark", IEEE/ACM ToN 2007) and reads none of its
 * seed files: it is a small approximation of the shapes of its acl1 seed,
 * enough to give the compiler realistic nesting and overlap. Per rule:
 *
 *   family   85% IPv4, 15% IPv6 (a rule with neither src nor dst is
 *            family-less and matches both).
 *   src len  IPv4: 25% wildcard, 30% /32, 25% /24../31 (half of them /24),
 *            15% /16../23 (40% /16), 5% /8../15 (half /8).
 *            IPv6: 25% wildcard, 30% /128, 20% /64, 15% /48../63,
 *            10% /32../47.
 *   dst len  the same bands, weighted 5 / 50 / 25 / 15 / 5 (IPv6:
 *            5 / 50 / 20 / 15 / 10): destinations are mostly servers.
 *   address  a host of one of 256 IPv4 networks (/16../24 inside 10/8 and
 *            172.16/12, plus 192.0.2/24, 198.51.100/24 and 203.0.113/24)
 *            or 48 IPv6 networks (/48s of 2001:db8::/32), each with 4..24
 *            hosts, masked to the rule's length. Networks are picked with
 *            a skew towards the first ones (the minimum of two uniform
 *            draws), so popular servers and subnets recur and prefixes nest
 *            as in real ACLs.
 *   proto    60% TCP, 25% UDP, 5% ICMP (ICMPv6 for IPv6), 10% any.
 *   ports    TCP and UDP only, ClassBench's five port classes:
 *            sport: 80% wildcard (WC), 10% 1024-65535 (HI), 5% an exact
 *            well-known port (EM), 5% an arbitrary range (AR);
 *            dport: 20% WC, 50% EM, 10% HI, 5% 0-1023 (LO), 15% AR.
 *            EM ports come from a per-protocol popularity list (skewed to
 *            its head); AR is 70% a common range (X11, traceroute, the
 *            ephemeral range, ...) and 30% a random lo with a width of
 *            1..1000.
 *   action   80% allow, 20% drop.
 *   No rule matches everything (one with no field becomes TCP): a
 *   match-all line mid-set would shadow the rest.
 *
 * The generator has its own xorshift64* generator seeded through
 * splitmix64, so a seed gives the same set on every machine and libc.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "xnf.h"

#define GEN_NET4  256
#define GEN_NET6  48
#define GEN_HOSTS 24

struct gen_rng {
	__u64 s;
};

struct gen_net {
	__u8 len;
	__u8 nhosts;
	__u8 host[GEN_HOSTS][16];
};

struct gen_range {
	__u16 lo, hi;
};

struct gen_band {
	__u32 weight; /* percent */
	__u8 lo, hi;  /* prefix lengths, inclusive; hi == 0: wildcard */
	__u8 favour;  /* length that gets half of the band, 0 if none */
};

static const struct gen_band gen_src4[] = {
	{ 25, 0, 0, 0 },    { 30, 32, 32, 0 }, { 25, 24, 31, 24 },
	{ 15, 16, 23, 16 }, { 5, 8, 15, 8 },
};

static const struct gen_band gen_dst4[] = {
	{ 5, 0, 0, 0 },	    { 50, 32, 32, 0 }, { 25, 24, 31, 24 },
	{ 15, 16, 23, 16 }, { 5, 8, 15, 8 },
};

static const struct gen_band gen_src6[] = {
	{ 25, 0, 0, 0 },    { 30, 128, 128, 0 }, { 20, 64, 64, 0 },
	{ 15, 48, 63, 48 }, { 10, 32, 47, 32 },
};

static const struct gen_band gen_dst6[] = {
	{ 5, 0, 0, 0 },	    { 50, 128, 128, 0 }, { 20, 64, 64, 0 },
	{ 15, 48, 63, 48 }, { 10, 32, 47, 32 },
};

/* Most popular first. */
static const __u16 gen_tcp_ports[] = {
	80,   443, 22,	25,  8080, 21,	3389, 8443, 143,
	993,  110, 995, 23,  389,  636, 3306, 5432, 1433,
	6379, 445, 139, 179, 2049, 111, 5060, 9200,
};

static const __u16 gen_udp_ports[] = {
	53,  123, 161, 514,  500,  4500, 1812, 1813, 69,
	137, 138, 162, 5060, 2049, 111,	 67,   68,   11211,
};

static const struct gen_range gen_ranges[] = {
	{ 6000, 6063 },			    /* X11 */
	{ 33434, 33534 },		    /* traceroute */
	{ 49152, 65535 },		    /* IANA ephemeral */
	{ 32768, 60999 },		    /* Linux ephemeral */
	{ 1024, 5000 },			    /* old BSD ephemeral */
	{ 137, 139 },			    /* NetBIOS */
	{ 20, 21 },			    /* FTP */
	{ 5060, 5061 },			    /* SIP */
	{ 8000, 8099 },	  { 16384, 32767 }, /* RTP */
};

static __u64 gen_splitmix64(__u64 x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static __u64 gen_next(struct gen_rng *r)
{
	__u64 x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform in 0..n-1 (n > 0). */
static __u32 gen_below(struct gen_rng *r, __u32 n)
{
	return (__u32)(((gen_next(r) >> 32) * (__u64)n) >> 32);
}

/* Uniform in lo..hi, inclusive. */
static __u32 gen_range(struct gen_rng *r, __u32 lo, __u32 hi)
{
	return lo + gen_below(r, hi - lo + 1);
}

static bool gen_pct(struct gen_rng *r, __u32 pct)
{
	return gen_below(r, 100) < pct;
}

/* 0..n-1, skewed towards 0: the minimum of two uniform draws. */
static __u32 gen_skewed(struct gen_rng *r, __u32 n)
{
	__u32 a = gen_below(r, n), b = gen_below(r, n);

	return a < b ? a : b;
}

/* A prefix length from @bands (weights summing to 100); 0 = wildcard. */
static __u32 gen_len(struct gen_rng *r, const struct gen_band *bands, __u32 nbands)
{
	__u32 x = gen_below(r, 100), i;

	for (i = 0; i < nbands - 1 && x >= bands[i].weight; i++)
		x -= bands[i].weight;
	if (!bands[i].hi)
		return 0;
	if (bands[i].favour && gen_pct(r, 50))
		return bands[i].favour;
	return gen_range(r, bands[i].lo, bands[i].hi);
}

static void gen_random_bits(struct gen_rng *r, __u8 *addr, __u32 from, __u32 to)
{
	__u32 bit;

	for (bit = from; bit < to; bit++)
		if (gen_next(r) >> 63)
			addr[bit / 8] |= 0x80 >> (bit % 8);
}

static void gen_net4(struct gen_rng *r, struct gen_net *net)
{
	static const __u8 doc[3][3] = {
		{ 192, 0, 2 },
		{ 198, 51, 100 },
		{ 203, 0, 113 },
	};
	__u8 base[16] = {};
	__u32 x = gen_below(r, 100), i;

	if (x < 15) {
		memcpy(base, doc[x % 3], 3);
		net->len = 24;
	} else {
		if (x < 65) {
			base[0] = 10;
			gen_random_bits(r, base, 8, 24);
		} else {
			base[0] = 172;
			base[1] = 16;
			gen_random_bits(r, base, 12, 24);
		}
		net->len = gen_pct(r, 50) ? 24 : gen_range(r, 16, 23);
		for (i = net->len; i < 24; i++)
			base[i / 8] &= ~(0x80 >> (i % 8));
	}
	net->nhosts = gen_range(r, 4, GEN_HOSTS);
	for (i = 0; i < net->nhosts; i++) {
		memcpy(net->host[i], base, 16);
		gen_random_bits(r, net->host[i], net->len, 32);
	}
}

static void gen_net6(struct gen_rng *r, struct gen_net *net)
{
	__u8 base[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	__u32 i;

	gen_random_bits(r, base, 32, 48);
	net->len = 48;
	net->nhosts = gen_range(r, 4, GEN_HOSTS);
	for (i = 0; i < net->nhosts; i++) {
		memcpy(net->host[i], base, 16);
		/* A few subnets per network, so /64s are shared. */
		net->host[i][7] = gen_below(r, 4);
		gen_random_bits(r, net->host[i], 64, 128);
	}
}

/* A host of a skew-picked network, masked to @len. */
static void gen_addr(struct gen_rng *r, const struct gen_net *nets, __u32 nnets,
		     __u32 len, __u8 *addr)
{
	const struct gen_net *net = &nets[gen_skewed(r, nnets)];
	__u32 bit;

	memcpy(addr, net->host[gen_skewed(r, net->nhosts)], 16);
	for (bit = len; bit < 128; bit++)
		addr[bit / 8] &= ~(0x80 >> (bit % 8));
}

static void gen_ports(struct gen_rng *r, bool dst, __u8 proto, __u16 *lo,
		      __u16 *hi, bool *set)
{
	const __u16 *em = proto == IPPROTO_TCP ? gen_tcp_ports : gen_udp_ports;
	__u32 nem = proto == IPPROTO_TCP ?
			    sizeof(gen_tcp_ports) / sizeof(__u16) :
			    sizeof(gen_udp_ports) / sizeof(__u16);
	/* Cumulative percent of WC, EM, HI, LO; AR is the rest. */
	__u32 wc = dst ? 20 : 80, x = gen_below(r, 100);
	__u32 nem_pct = dst ? 50 : 5, hi_pct = 10, lo_pct = dst ? 5 : 0;
	__u32 w;

	*set = true;
	if (x < wc) {
		*set = false;
		*lo = 0;
		*hi = 65535;
	} else if (x < wc + nem_pct) {
		*lo = *hi = em[gen_skewed(r, nem)];
	} else if (x < wc + nem_pct + hi_pct) {
		*lo = 1024;
		*hi = 65535;
	} else if (x < wc + nem_pct + hi_pct + lo_pct) {
		*lo = 0;
		*hi = 1023;
	} else if (gen_pct(r, 70)) {
		const struct gen_range *g =
			&gen_ranges[gen_skewed(r, sizeof(gen_ranges) /
							  sizeof(gen_ranges[0]))];

		*lo = g->lo;
		*hi = g->hi;
	} else {
		static const __u16 widths[] = { 1,  2,	3,  7,	 15,
						31, 63, 99, 255, 999 };

		*lo = gen_range(r, 1, 65000);
		w = widths[gen_below(r, sizeof(widths) / sizeof(widths[0]))];
		*hi = *lo + w > 65535 ? 65535 : *lo + w;
	}
}

int xnf_fw_generate(struct xnf_fw_rule *rules, __u32 n, __u32 seed)
{
	struct gen_net *net4 = NULL, *net6 = NULL;
	struct gen_rng rng;
	__u32 i, slen, dlen;
	int err = 0;

	if (!rules && n)
		return -EINVAL;
	rng.s = gen_splitmix64(seed) | 1;
	net4 = calloc(GEN_NET4, sizeof(*net4));
	net6 = calloc(GEN_NET6, sizeof(*net6));
	if (!net4 || !net6) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < GEN_NET4; i++)
		gen_net4(&rng, &net4[i]);
	for (i = 0; i < GEN_NET6; i++)
		gen_net6(&rng, &net6[i]);

	for (i = 0; i < n; i++) {
		struct xnf_fw_rule *r = &rules[i];
		bool v6 = gen_pct(&rng, 15), sp, dp;
		const struct gen_net *nets = v6 ? net6 : net4;
		__u32 nnets = v6 ? GEN_NET6 : GEN_NET4, x;

		memset(r, 0, sizeof(*r));
		r->prio = (i + 1) * 10;
		r->in_use = 1;
		r->action = gen_pct(&rng, 80) ? XNF_FW_ALLOW : XNF_FW_DROP;

		slen = v6 ? gen_len(&rng, gen_src6, 5) :
			    gen_len(&rng, gen_src4, 5);
		dlen = v6 ? gen_len(&rng, gen_dst6, 5) :
			    gen_len(&rng, gen_dst4, 5);
		if (slen) {
			r->flags |= XNF_FW_F_SRC;
			r->src_len = slen;
			gen_addr(&rng, nets, nnets, slen, r->src);
		}
		if (dlen) {
			r->flags |= XNF_FW_F_DST;
			r->dst_len = dlen;
			gen_addr(&rng, nets, nnets, dlen, r->dst);
		}
		if (slen || dlen)
			r->family = v6 ? XNF_AF_INET6 : XNF_AF_INET;

		x = gen_below(&rng, 100);
		if (x < 90) {
			r->flags |= XNF_FW_F_PROTO;
			if (x < 60)
				r->proto = IPPROTO_TCP;
			else if (x < 85)
				r->proto = IPPROTO_UDP;
			else
				r->proto = v6 && r->family ? IPPROTO_ICMPV6 :
							     IPPROTO_ICMP;
		}
		/* A match-all rule would shadow every rule after it; real
		 * ACLs have it only as their last line, which is what the
		 * default policy is for. */
		if (!r->flags) {
			r->flags = XNF_FW_F_PROTO;
			r->proto = IPPROTO_TCP;
		}
		if ((r->flags & XNF_FW_F_PROTO) &&
		    (r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP)) {
			gen_ports(&rng, false, r->proto, &r->sport_lo,
				  &r->sport_hi, &sp);
			gen_ports(&rng, true, r->proto, &r->dport_lo,
				  &r->dport_hi, &dp);
			if (sp)
				r->flags |= XNF_FW_F_SPORT;
			if (dp)
				r->flags |= XNF_FW_F_DPORT;
		}
		/* Every rule must be one the compiler accepts. */
		err = xnf_fw_rule_check(r, NULL, 0);
		if (err)
			goto out;
	}
out:
	free(net6);
	free(net4);
	return err;
}
