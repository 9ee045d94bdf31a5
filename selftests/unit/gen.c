// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The traffic generator (gen.bpf.c, tools/traffic.c) and the sink
 * (sink.bpf.c).
 *
 * Generator frames are checked byte by byte by code of this file and
 * pkt.c, never by the generator's own: headers, lengths, addresses and
 * ports per flow, the probe, both checksums (pkt_ipv4_csum_ok and
 * pkt_l4_csum_ok recompute them from scratch). Frames are taken from
 * BPF_PROG_TEST_RUN's output and, as live frames, captured on the veth peer
 * (pages are recycled with whatever the last frame left in them, sizes
 * change from frame to frame). 100,000 live frames per family/protocol go
 * into the sink attached to the peer, which must count every one and find
 * no bad checksum. The sink is fed crafted sequences (gaps, swaps,
 * duplicates, 32-bit wrap-around, several receive queues) with
 * BPF_PROG_TEST_RUN.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"
#include "traffic.h"
#include "gen.skel.h"
#include "bench.skel.h"
#include "sink.skel.h"

#define G_SPORT	 1024
#define G_DPORT	 9
#define G_COOKIE 0x5a5a1234

static const __u8 g_smac[6] = { 0x02, 0, 0, 0, 0, 0xaa };
static const __u8 g_dmac[6] = { 0x02, 0, 0, 0, 0, 0xbb };

struct gt {
	struct xnf_gen *skel;
	struct xnf_gen_spec spec;
	__u32 maxlen; /* longest frame of the table, no FCS */
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void spec_init(struct xnf_gen_spec *s, int family, int proto,
		      enum xnf_size_dist dist, __u32 size, __u32 flows)
{
	memset(s, 0, sizeof(*s));
	s->family = family;
	s->proto = proto;
	memcpy(s->smac, g_smac, 6);
	memcpy(s->dmac, g_dmac, 6);
	if (family == 6) {
		inet_pton(AF_INET6, "2001:db8:1::1", s->src);
		inet_pton(AF_INET6, "2001:db8:2::1", s->dst);
	} else {
		inet_pton(AF_INET, "192.0.2.1", s->src);
		inet_pton(AF_INET, "198.51.100.1", s->dst);
	}
	s->sport = G_SPORT;
	s->dport = G_DPORT;
	s->flows = flows;
	s->dist = dist;
	s->size = size;
}

/* With @zipf > 0, the flows in a Zipf mix of that exponent. */
static bool gt_open_mix(struct gt *g, int family, int proto,
			enum xnf_size_dist dist, __u32 size, __u32 flows,
			double zipf)
{
	struct xnf_gen_cfg *cfg;
	char err[200];
	bool raised;
	__u32 i;

	memset(g, 0, sizeof(*g));
	spec_init(&g->spec, family, proto, dist, size, flows);
	g->skel = xnf_gen__open();
	if (!ASSERT_TRUE(g->skel, "open gen.bpf.o"))
		return false;
	cfg = (struct xnf_gen_cfg *)&g->skel->rodata->cfg;
	if (!ASSERT_OK(xnf_gen_cfg_build(&g->spec, cfg, &raised, err, sizeof(err)),
		       err))
		return false;
	cfg->cookie = G_COOKIE;
	for (i = 0; i < cfg->nsizes; i++)
		if (cfg->sizes[i] - 4u > g->maxlen)
			g->maxlen = cfg->sizes[i] - 4u;
	if (zipf > 0) {
		if (!ASSERT_OK(xnf_mix_zipf(flows, zipf,
					    g->skel->data_mix->xnf_gen_mix,
					    XNF_GEN_MIX_SIZE),
			       "zipf table"))
			return false;
		cfg->mix = XNF_GEN_MIX_TABLE;
	}
	return ASSERT_OK(xnf_gen__load(g->skel), "load gen.bpf.o");
}

static bool gt_open(struct gt *g, int family, int proto,
		    enum xnf_size_dist dist, __u32 size, __u32 flows)
{
	return gt_open_mix(g, family, proto, dist, size, flows, 0);
}

static void gt_close(struct gt *g)
{
	xnf_gen__destroy(g->skel);
	g->skel = NULL;
}

/* n frames in one call; live frames leave through ifindex, otherwise the
 * last frame is copied to out (without the metadata) and its length set. */
static int gt_run(struct gt *g, __u32 ifindex, __u32 n, __u8 *out,
		  __u32 *outlen, int *retval)
{
	static __u8 in[4 + 2048], o[4 + 2048];
	struct xdp_md ctx = { .data = 4,
			      .data_end = 4 + g->maxlen,
			      .ingress_ifindex = ifindex };
	__u32 cookie = G_COOKIE;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in,
		    .data_size_in = 4 + g->maxlen, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = n, );
	int err;

	memset(in, 0, sizeof(in));
	memcpy(in, &cookie, 4);
	if (out) {
		opts.data_out = o;
		opts.data_size_out = sizeof(o);
	} else {
		opts.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
		opts.batch_size = 64;
	}
	err = bpf_prog_test_run_opts(bpf_program__fd(g->skel->progs.xnf_gen),
				     &opts);
	if (err)
		return -errno;
	if (retval)
		*retval = opts.retval;
	if (out) {
		if (opts.data_size_out < 4 || memcmp(o, &cookie, 4))
			return -EPROTO;
		*outlen = opts.data_size_out - 4;
		memcpy(out, o + 4, *outlen);
	}
	return 0;
}

/* ---- an independent reading of a frame ----------------------------------- */

struct gframe {
	__u32 size; /* with FCS */
	int family, proto;
	__u8 src[16], dst[16];
	__u16 sport, dport;
	bool full; /* struct xnf_probe, not the short one */
	__u32 flow;
	__u64 seq, ts;
};

static __u16 rd16(const __u8 *p)
{
	return p[0] << 8 | p[1];
}

/* Checks everything the frame must be for spec s; fills f. */
static bool frame_check(const struct xnf_gen_spec *s, const __u8 *p, __u32 len,
			struct gframe *f, const char *what)
{
	__u32 l3 = ETH_HLEN, l4, pay, alen = s->family == 6 ? 16 : 4;
	bool ok = true;
	__u32 magic;

	memset(f, 0, sizeof(*f));
	f->size = len + 4;
	ok &= ASSERT_MEM(p, s->dmac, 6, what) &&
	      ASSERT_MEM(p + 6, s->smac, 6, what);
	if (s->family == 6) {
		ok &= ASSERT_EQ(rd16(p + 12), ETH_P_IPV6, what);
		ok &= ASSERT_EQ(p[l3] >> 4, 6, what);
		ok &= ASSERT_EQ(rd16(p + l3 + 4), len - l3 - 40,
				"IPv6 payload length");
		ok &= ASSERT_EQ(p[l3 + 6], s->proto, what);
		ok &= ASSERT_EQ(p[l3 + 7], 64, "hop limit");
		memcpy(f->src, p + l3 + 8, 16);
		memcpy(f->dst, p + l3 + 24, 16);
		l4 = l3 + 40;
	} else {
		ok &= ASSERT_EQ(rd16(p + 12), ETH_P_IP, what);
		ok &= ASSERT_EQ(p[l3], 0x45, "IPv4 version and header length");
		ok &= ASSERT_EQ(rd16(p + l3 + 2), len - l3, "IPv4 total length");
		ok &= ASSERT_EQ(p[l3 + 8], 64, "TTL");
		ok &= ASSERT_EQ(p[l3 + 9], s->proto, what);
		ok &= ASSERT_EQ(rd16(p + l3 + 6) & 0x3fff, 0, "not a fragment");
		ok &= ASSERT_TRUE(pkt_ipv4_csum_ok(p, len),
				  "IPv4 header checksum");
		memcpy(f->src, p + l3 + 12, 4);
		memcpy(f->dst, p + l3 + 16, 4);
		l4 = l3 + 20;
	}
	ok &= ASSERT_MEM(f->dst, s->dst, alen, "destination address");
	ok &= ASSERT_MEM(f->src, s->src, alen - 4,
			 "source address, all but the last 32 bits");
	f->family = s->family;
	f->proto = s->proto;
	f->sport = rd16(p + l4);
	f->dport = rd16(p + l4 + 2);
	ok &= ASSERT_EQ(f->dport, s->dport, "destination port");
	if (s->proto == IPPROTO_TCP) {
		ok &= ASSERT_EQ(p[l4 + 12] >> 4, 5, "TCP data offset");
		pay = l4 + 20;
	} else {
		ok &= ASSERT_EQ(rd16(p + l4 + 4), len - l4, "UDP length");
		ok &= ASSERT_NEQ(rd16(p + l4 + 6), 0, "UDP checksum present");
		pay = l4 + 8;
	}
	ok &= ASSERT_TRUE(pkt_l4_csum_ok(p, len), "UDP/TCP checksum");
	if (!ASSERT_GE(len, pay + 16, "room for the probe"))
		return false;
	magic = (__u32)p[pay] << 24 | p[pay + 1] << 16 | p[pay + 2] << 8 |
		p[pay + 3];
	f->full = len >= pay + 24;
	if (f->full) {
		struct xnf_probe pr;

		memcpy(&pr, p + pay, sizeof(pr));
		ok &= ASSERT_EQ(magic, XNF_PROBE_MAGIC, "probe magic");
		f->flow = pr.flow;
		f->seq = pr.seq;
		f->ts = pr.ts_ns;
	} else {
		struct xnf_probe_short pr;
		__u32 i;

		memcpy(&pr, p + pay, sizeof(pr));
		ok &= ASSERT_EQ(magic, XNF_PROBE_MAGIC_SHORT,
				"short probe magic");
		f->seq = pr.seq;
		f->ts = pr.ts_ns;
		for (i = pay + 16; i < len; i++)
			ok &= ASSERT_EQ(p[i], 0, "zero after the short probe");
	}
	return ok;
}

/* Source port and address of flow i, as documented. */
static bool flow_check(const struct xnf_gen_spec *s, const struct gframe *f,
		       __u32 flow, const char *what)
{
	__u32 alen = s->family == 6 ? 16 : 4, lo;
	__u8 want[16];

	memcpy(want, s->src, alen);
	memcpy(&lo, want + alen - 4, 4);
	lo = htonl(ntohl(lo) + flow / 65536);
	memcpy(want + alen - 4, &lo, 4);
	return ASSERT_EQ(f->sport, (__u16)(s->sport + flow), what) &&
	       ASSERT_MEM(f->src, want, alen, what);
}

/* ---- user-space parts ------------------------------------------------------- */

static __u32 table_count(const struct xnf_gen_cfg *c, __u16 size)
{
	__u32 i, n = 0;

	for (i = 0; i < c->nsizes; i++)
		n += c->sizes[i] == size;
	return n;
}

TEST(gen_size_tables)
{
	static struct xnf_gen_cfg c;
	struct xnf_gen_spec s;
	__u32 i, below256 = 0, cum = 0, median = 0;
	char err[200];
	double mean;
	bool raised;

	spec_init(&s, 4, IPPROTO_UDP, XNF_SIZE_IMIX, 0, 1);
	if (!ASSERT_OK(xnf_gen_cfg_build(&s, &c, &raised, err, sizeof(err)), err))
		return;
	ASSERT_EQ(c.nsizes, 12, "imix: 12 entries");
	ASSERT_EQ(table_count(&c, 64), 7, "imix: 7 x 64");
	ASSERT_EQ(table_count(&c, 594), 4, "imix: 4 x 594");
	ASSERT_EQ(table_count(&c, 1518), 1, "imix: 1 x 1518");
	ASSERT_FALSE(raised, "imix fits ipv4/udp");
	ASSERT_TRUE(c.sizes[0] != c.sizes[1] || c.sizes[1] != c.sizes[2] ||
			    c.sizes[2] != c.sizes[3],
		    "imix sizes are interleaved");

	s.dist = XNF_SIZE_DC;
	if (!ASSERT_OK(xnf_gen_cfg_build(&s, &c, &raised, err, sizeof(err)), err))
		return;
	ASSERT_EQ(c.nsizes, 1000, "dc: 1000 entries");
	for (i = 0; i < xnf_dc_len; i++)
		ASSERT_EQ(table_count(&c, xnf_dc[i].size), xnf_dc[i].weight,
			  "dc: weight");
	for (i = 0; i < c.nsizes; i++)
		below256 += c.sizes[i] < 256;
	for (i = 0; i < xnf_dc_len && !median; i++) {
		cum += xnf_dc[i].weight;
		if (cum >= 500)
			median = xnf_dc[i].size;
	}
	mean = xnf_gen_mean_size(&c);
	ASSERT_EQ(median, 120, "dc: median 120 B");
	ASSERT_GE(below256, 900, "dc: most frames under 256 B");
	ASSERT_TRUE(mean <= 124.3 && mean >= 110,
		    "dc: mean at most 124.3 B (BESS 8.662 Mpps at 10 Gb/s)");

	/* IPv6/TCP needs 94 bytes: the mixes are raised, fixed sizes refused */
	spec_init(&s, 6, IPPROTO_TCP, XNF_SIZE_IMIX, 0, 1);
	if (ASSERT_OK(xnf_gen_cfg_build(&s, &c, &raised, err, sizeof(err)), err)) {
		ASSERT_TRUE(raised, "imix raised for ipv6/tcp");
		ASSERT_EQ(table_count(&c, 94), 7, "64-byte frames sent as 94");
	}
	ASSERT_EQ(xnf_gen_min_size(4, IPPROTO_UDP), 64, "ipv4/udp minimum");
	ASSERT_EQ(xnf_gen_min_size(4, IPPROTO_TCP), 74, "ipv4/tcp minimum");
	ASSERT_EQ(xnf_gen_min_size(6, IPPROTO_UDP), 82, "ipv6/udp minimum");
	ASSERT_EQ(xnf_gen_min_size(6, IPPROTO_TCP), 94, "ipv6/tcp minimum");
	spec_init(&s, 6, IPPROTO_TCP, XNF_SIZE_FIXED, 93, 1);
	ASSERT_ERR(xnf_gen_cfg_build(&s, &c, &raised, err, sizeof(err)),
		   "93 B ipv6/tcp refused");
	spec_init(&s, 4, IPPROTO_UDP, XNF_SIZE_FIXED, 63, 1);
	ASSERT_ERR(xnf_gen_cfg_build(&s, &c, &raised, err, sizeof(err)),
		   "63 B refused");
	s.size = 1519;
	ASSERT_ERR(xnf_gen_cfg_build(&s, &c, &raised, err, sizeof(err)),
		   "1519 B refused");
	s.size = 1518;
	ASSERT_OK(xnf_gen_cfg_build(&s, &c, &raised, err, sizeof(err)),
		  "1518 B accepted");
	s.flows = 0;
	ASSERT_ERR(xnf_gen_cfg_build(&s, &c, &raised, err, sizeof(err)),
		   "0 flows refused");
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

TEST(gen_latency_buckets)
{
	static __u64 hist[XNF_LAT_BUCKETS], vals[20000];
	__u64 x = 88172645463325252ull, n = 20000, i;
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
	__u32 b, q;

	for (b = 0; b < XNF_LAT_BUCKETS; b++) {
		__u64 lo = xnf_lat_lower(b), hi = xnf_lat_lower(b + 1);

		if (!ASSERT_EQ(xnf_lat_bucket(lo), b,
			       "lowest value of a bucket is in it") ||
		    !ASSERT_EQ(xnf_lat_bucket(hi - 1), b,
			       "highest value of a bucket is in it"))
			return;
		if (lo >= 64 &&
		    !ASSERT_LE((hi - lo) * 32, lo, "bucket at most 1/32 wide"))
			return;
	}
	ASSERT_LE(xnf_lat_lower(64), 100, "exact up to 64 ns");
	ASSERT_GE(xnf_lat_lower(XNF_LAT_BUCKETS), 10000000000ull,
		  "buckets reach 10 s");
	ASSERT_EQ(xnf_lat_bucket(~0ull), XNF_LAT_BUCKETS - 1,
		  "beyond: the last bucket");

	/* quantiles of a log-uniform sample from 100 ns to 10 s */
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		vals[i] = (__u64)(100 * pow(1e8, (double)(x % 1000000) / 1e6));
		hist[xnf_lat_bucket(vals[i])]++;
	}
	qsort(vals, n, sizeof(vals[0]), cmp_u64);
	for (q = 0; q < 4; q++) {
		__u64 exact = vals[(__u64)ceil(qs[q] * n) - 1];
		__u64 got = xnf_lat_quantile(hist, n, qs[q], vals[0],
					     vals[n - 1]);

		ASSERT_LE(fabs((double)got - (double)exact), exact * 0.02,
			  "quantile within 2% of the exact value");
	}
}

/* ---- frames from BPF_PROG_TEST_RUN ----------------------------------------- */

TEST(gen_frame_bytes)
{
	static const int fams[] = { 4, 4, 6, 6 },
			 protos[] = { IPPROTO_UDP, IPPROTO_TCP, IPPROTO_UDP,
				      IPPROTO_TCP };
	static const __u32 sizes[] = { 64, 74, 82, 94, 95, 128, 1518 };
	__u8 out[2048];
	struct gframe f;
	struct gt g;
	int v, s, ret;
	__u32 len;

	for (v = 0; v < 4; v++) {
		for (s = 0; s < 7; s++) {
			__u64 t0, t1;
			char what[64];

			if (sizes[s] < xnf_gen_min_size(fams[v], protos[v]))
				continue;
			snprintf(what, sizeof(what), "ipv%d/%s %u B", fams[v],
				 protos[v] == IPPROTO_TCP ? "tcp" : "udp",
				 sizes[s]);
			if (!gt_open(&g, fams[v], protos[v], XNF_SIZE_FIXED,
				     sizes[s], 3))
				return;
			t0 = mono_ns();
			if (ASSERT_OK(gt_run(&g, 0, 1, out, &len, &ret), what) &&
			    ASSERT_EQ(ret, XDP_TX, what) &&
			    ASSERT_EQ(len + 4, sizes[s], what) &&
			    frame_check(&g.spec, out, len, &f, what)) {
				t1 = mono_ns();
				ASSERT_EQ(f.seq, 0, "first sequence number");
				ASSERT_TRUE(f.ts >= t0 && f.ts <= t1,
					    "timestamp: CLOCK_MONOTONIC of the run");
				flow_check(&g.spec, &f, 0, what);
				ASSERT_EQ(g.skel->bss->state.seq, 1,
					  "state: one frame");
				ASSERT_EQ(g.skel->bss->state.bytes, sizes[s],
					  "state: bytes with FCS");
			}
			gt_close(&g);
		}
	}

	/* frame without the cookie: not the generator's, passed untouched */
	if (!gt_open(&g, 4, IPPROTO_UDP, XNF_SIZE_FIXED, 64, 1))
		return;
	{
		__u8 in[64] = { 1, 2, 3 }, o[64];
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in,
			    .data_size_in = 60, .data_out = o,
			    .data_size_out = sizeof(o));

		if (ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(
							     g.skel->progs.xnf_gen),
						     &opts),
			      "run without cookie")) {
			ASSERT_EQ(opts.retval, XDP_PASS,
				  "frame without cookie passes");
			ASSERT_MEM(o, in, 60, "frame without cookie untouched");
			ASSERT_EQ(g.skel->bss->state.seq, 0,
				  "and is not counted");
		}
	}
	gt_close(&g);
}

/* A run of the generator with metadata @meta (4 bytes) in front of a
 * zeroed frame; the program's verdict in *retval. */
static int gt_run_meta(struct gt *g, const __u8 *meta, int *retval)
{
	__u8 in[4 + 64] = { 0 };
	struct xdp_md ctx = { .data = 4, .data_end = 4 + 60 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in,
		    .data_size_in = 4 + 60, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));

	memcpy(in, meta, 4);
	if (bpf_prog_test_run_opts(bpf_program__fd(g->skel->progs.xnf_gen), &opts))
		return -errno;
	*retval = opts.retval;
	return 0;
}

/* Linux forwarding writes its cached Ethernet header in 16-byte units: the
 * 2 bytes in front of the frame, the last 2 of the live page's metadata,
 * become zero, and test_run reuses the page as it is. Such a page is still
 * the generator's (it was passed, not sent, before the fix); a first half
 * that differs is not. */
TEST(gen_cookie_survives_hh_write)
{
	__u32 cookie = G_COOKIE;
	__u8 meta[4];
	struct gt g;
	int ret;

	if (!gt_open(&g, 4, IPPROTO_UDP, XNF_SIZE_FIXED, 64, 1))
		return;
	memcpy(meta, &cookie, 4);
	meta[2] = meta[3] = 0;
	if (ASSERT_OK(gt_run_meta(&g, meta, &ret), "run, last 2 bytes zero"))
		ASSERT_EQ(ret, XDP_TX, "last 2 bytes written over: still sent");
	ASSERT_EQ(g.skel->bss->state.seq, 1, "and counted");
	ASSERT_EQ(g.skel->bss->state.bad_cookie, 0, "no bad cookie");

	memcpy(meta, &cookie, 4);
	meta[0] ^= 0xff;
	if (ASSERT_OK(gt_run_meta(&g, meta, &ret), "run, first byte differs"))
		ASSERT_EQ(ret, XDP_PASS, "another cookie: passed");
	ASSERT_EQ(g.skel->bss->state.seq, 1, "and not counted");
	ASSERT_EQ(g.skel->bss->state.bad_cookie, 1, "counted as bad cookie");
	gt_close(&g);
}

TEST(gen_flows_beyond_65536)
{
	__u32 flows[] = { 0, 65534, 65535, 65536, 65537, 69999 }, i;
	__u8 out[2048];
	struct gframe f;
	struct gt g;
	__u32 len;
	int v;

	for (v = 4; v <= 6; v += 2) {
		if (!gt_open(&g, v, IPPROTO_UDP, XNF_SIZE_FIXED, 128, 70000))
			return;
		for (i = 0; i < 6; i++) {
			g.skel->bss->state.flow = flows[i];
			g.skel->bss->state.seq = 1000 + i;
			if (!ASSERT_OK(gt_run(&g, 0, 1, out, &len, NULL), "run") ||
			    !frame_check(&g.spec, out, len, &f, "flow frame"))
				break;
			ASSERT_EQ(f.flow, flows[i], "probe carries the flow");
			ASSERT_EQ(f.seq, 1000 + i,
				  "probe carries the sequence number");
			flow_check(&g.spec, &f, flows[i],
				   "source port and address of the flow");
		}
		ASSERT_EQ(g.skel->bss->state.flow, 0,
			  "flow 69999 is the last: back to 0");
		gt_close(&g);
	}
}

/* The Zipf table against the law, computed here independently: flow i's
 * share is (i + 1)^-s / H. Each flow holds n * p_i entries rounded either
 * way (so the ranks are in order within one entry), the top flows' shares
 * match, and the shuffle spreads flow 0 over the table. */
TEST(gen_zipf_table)
{
	static const __u32 flows[] = { 1000000, 65536, 1000 };
	static const double ss[] = { 1.0, 1.1, 0.8 };
	const __u32 n = XNF_GEN_MIX_SIZE;
	__u32 *t = calloc(n, sizeof(*t)), *cnt = NULL, v, i, bad;

	if (!ASSERT_TRUE(t, "table"))
		return;
	for (v = 0; v < 3; v++) {
		double h = 0, top10 = 0, want;
		__u32 got10 = 0, head = 0;
		char what[80];

		snprintf(what, sizeof(what), "zipf s=%.1f over %u flows", ss[v],
			 flows[v]);
		free(cnt);
		cnt = calloc(flows[v], sizeof(*cnt));
		if (!ASSERT_TRUE(cnt, "counts") ||
		    !ASSERT_OK(xnf_mix_zipf(flows[v], ss[v], t, n), what))
			break;
		for (i = 0, bad = 0; i < n; i++) {
			if (t[i] >= flows[v])
				bad++;
			else
				cnt[t[i]]++;
		}
		if (!ASSERT_EQ(bad, 0, "every entry a flow of the run"))
			break;
		for (i = flows[v]; i >= 1; i--)
			h += pow(i, -ss[v]);
		for (i = 0; i < 10; i++) {
			want = n * pow(i + 1, -ss[v]) / h;
			top10 += want;
			got10 += cnt[i];
			ASSERT_LE(fabs(cnt[i] - want), 1.0,
				  "a top flow's entries: n * p, rounded");
		}
		ASSERT_LE(fabs(got10 - top10), 1.0 + 0.001 * top10,
			  "the 10 top flows' share");
		want = n * 1.0 / h;
		ASSERT_TRUE(fabs(cnt[0] / (double)n - 1.0 / h) <= 0.001,
			    "the top flow's share: 1 / H");
		for (i = 0, bad = 0; i + 1 < flows[v]; i++)
			bad += cnt[i + 1] > cnt[i] + 1;
		ASSERT_EQ(bad, 0, "ranks in order, within one entry");
		/* shuffled: the first 4096 entries hold flow 0 about as
		 * often as the whole table (wide: 4096 draws) */
		for (i = 0; i < 4096; i++)
			head += t[i] == 0;
		ASSERT_TRUE(fabs(head - want / 16) <= 5 * sqrt(want / 16) + 1,
			    "flow 0 spread over the table");
	}
	/* one flow: every entry is flow 0 */
	if (ASSERT_OK(xnf_mix_zipf(1, 1.0, t, n), "one flow")) {
		for (i = 0, bad = 0; i < n; i++)
			bad += t[i] != 0;
		ASSERT_EQ(bad, 0, "one flow: all entries flow 0");
	}
	ASSERT_ERR(xnf_mix_zipf(0, 1.0, t, n), "0 flows refused");
	ASSERT_ERR(xnf_mix_zipf(XNF_GEN_FLOWS_MAX + 1, 1.0, t, n),
		   "too many flows refused");
	ASSERT_ERR(xnf_mix_zipf(10, 0, t, n), "s = 0 refused");
	ASSERT_ERR(xnf_mix_zipf(10, NAN, t, n), "s = NaN refused");
	free(cnt);
	free(t);
}

/* In a Zipf mix, frame seq carries the table's flow for seq mod its size:
 * probe, source port and address (round robin would give flow seq). */
TEST(gen_zipf_frames)
{
	static const __u64 seqs[] = { 0,   1,	  2,	 3,	4,
				      777, 65535, 65536, 65541, 3 * 65536 + 100 };
	__u8 out[2048];
	struct gframe f;
	struct gt g;
	__u32 len, i, want, other = 0;

	if (!gt_open_mix(&g, 4, IPPROTO_UDP, XNF_SIZE_FIXED, 128, 1000000, 1.0))
		return;
	for (i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		want = g.skel->data_mix->xnf_gen_mix[seqs[i] % XNF_GEN_MIX_SIZE];
		other += want != (__u32)seqs[i];
		g.skel->bss->state.seq = seqs[i];
		if (!ASSERT_OK(gt_run(&g, 0, 1, out, &len, NULL), "run") ||
		    !frame_check(&g.spec, out, len, &f, "zipf frame"))
			break;
		ASSERT_EQ(f.flow, want, "probe carries the table's flow");
		flow_check(&g.spec, &f, want, "source port and address");
		ASSERT_EQ(g.skel->bss->state.flow, want, "state: last flow");
	}
	ASSERT_GE(other, 5, "the table is not round robin");
	gt_close(&g);
}

/* The one's complement sum of the @n 16-bit big-endian words at @p, 0
 * and 0xffff (its two zeros) as 0. */
static __u16 ones_sum(const __u8 *p, int n)
{
	__u32 s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += p[2 * i] << 8 | p[2 * i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff ? 0 : s;
}

/* bench-micro's harness under a mix (bench.bpf.c, -M): run k writes the
 * source and destination port of the table's flow for k mod its size at
 * the offset given, flow i as sport + i and dport + i / 65536, updates the
 * UDP checksum after them for the new ports (the header's sum, checksum
 * included, is what it was, so a checksum right before is right after; 0,
 * "no checksum", stays 0), and leaves every other byte of the restored
 * frame alone; with no mix, the frame is the template. */
TEST(bench_mix_rewrite)
{
	/* the last: an entry of a flow beyond 65,536, found below */
	__u64 ks[] = { 0, 1, 2, 100, 65535, 65536, 65536 + 7, 5 * 65536 + 1234,
		       0 };
	const __u32 off = 34, n = XNF_GEN_MIX_SIZE;
	__u8 tmpl[64], in[64], out[64];
	__u32 *flows = calloc(n, sizeof(*flows)), zero = 0, i, j, fd, big = 0;
	struct xnf_bench *h = xnf_bench__open_and_load();
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = sizeof(in), .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	if (!ASSERT_TRUE(h, "load bench.bpf.o") || !ASSERT_TRUE(flows, "table"))
		goto out;
	fd = bpf_program__fd(h->progs.xnf_bench_drop);
	if (!ASSERT_OK(bpf_map__update_elem(h->maps.xnf_bench_prog, &zero, 4,
					    &fd, 4, 0),
		       "target: xnf_bench_drop") ||
	    !ASSERT_OK(xnf_mix_zipf(1000000, 1.0, flows, n), "zipf table"))
		goto out;
	for (j = 0; j < n && flows[j] < 65536; j++)
		;
	if (!ASSERT_LT(j, n, "a flow beyond 65,536 in the table"))
		goto out;
	ks[8] = 3 * 65536 + j;
	for (i = 0; i < 64; i++)
		tmpl[i] = 0x40 + i;
	memcpy(h->bss->xnf_bench_frame, tmpl, 64);
	for (j = 0; j < n; j++)
		h->data_mix->xnf_bench_flows[j] = xnf_mix_ports(1000, 9,
								flows[j]);
	h->bss->xnf_bench_mix = off;
	for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		__u32 f = flows[ks[i] % n];
		__u8 want[64];

		memset(in, 0, sizeof(in));
		h->bss->xnf_bench_seq = ks[i];
		o.data_size_out = sizeof(out);
		if (!ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(
							      h->progs.xnf_bench),
						      &o),
			       "run the harness") ||
		    !ASSERT_EQ(o.retval, XDP_DROP, "through to the target"))
			break;
		memcpy(want, tmpl, 64);
		want[off] = (1000 + f) >> 8;
		want[off + 1] = 1000 + f;
		want[off + 2] = (9 + (f >> 16)) >> 8;
		want[off + 3] = 9 + (f >> 16);
		big += f >= 65536;
		ASSERT_EQ(ones_sum(out + off, 4), ones_sum(tmpl + off, 4),
			  "the UDP header's sum kept by its checksum");
		ASSERT_TRUE(out[off + 6] || out[off + 7], "a checksum, not 0");
		want[off + 6] = out[off + 6];
		want[off + 7] = out[off + 7];
		ASSERT_MEM(out, want, 64,
			   "the table's flow's ports, the rest the template");
		ASSERT_EQ(h->bss->xnf_bench_seq, ks[i] + 1,
			  "the counter moves on");
	}
	ASSERT_GE(big, 1, "flows beyond 65,536 write the destination port");
	/* no mix: the template */
	h->bss->xnf_bench_mix = 0;
	o.data_size_out = sizeof(out);
	if (ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(h->progs.xnf_bench),
					     &o),
		      "run without a mix"))
		ASSERT_MEM(out, tmpl, 64, "no mix: the template");
	/* no checksum (0) stays none */
	tmpl[off + 6] = tmpl[off + 7] = 0;
	memcpy(h->bss->xnf_bench_frame, tmpl, 64);
	h->bss->xnf_bench_mix = off;
	h->bss->xnf_bench_seq = 1;
	o.data_size_out = sizeof(out);
	if (ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(h->progs.xnf_bench),
					     &o),
		      "run with checksum 0")) {
		ASSERT_EQ(out[off + 6], 0, "checksum 0 kept");
		ASSERT_EQ(out[off + 7], 0, "checksum 0 kept (low byte)");
		ASSERT_NEQ(memcmp(out + off, tmpl + off, 4), 0, "ports written");
	}
out:
	xnf_bench__destroy(h);
	free(flows);
}

/* Rate mode, one run at a time: a frame leaves only once it is due, never
 * past the limit or the end; a frame too late moves the schedule, and so
 * does one that would make a burst too long; bursts are counted across
 * waits and flushes. */
TEST(gen_paced_runs)
{
	volatile struct xnf_gen_state *st;
	__u8 out[2048];
	__u64 now;
	struct gt g;
	__u32 len;
	int ret;

	if (!gt_open(&g, 4, IPPROTO_UDP, XNF_SIZE_FIXED, 64, 1))
		return;
	st = &g.skel->bss->state;
	now = mono_ns();
	st->pace_ps = 1000000000ull;	    /* 1 ms */
	st->pace_t0 = now + 10000000000ull; /* frame 0 due in 10 s */
	st->limit = 3;
	st->max_late_ns = 1000000000ull;
	st->pace_batch = 2;
	if (!ASSERT_OK(gt_run(&g, 0, 1, out, &len, &ret),
		       "run before the frame is due"))
		goto out;
	ASSERT_EQ(ret, XDP_DROP, "not due: the live frame is dropped unsent");
	ASSERT_EQ(st->seq, 0, "not due: nothing sent");
	ASSERT_EQ(st->idle, 1, "not due: an idle run");

	st->pace_t0 = mono_ns() - 500000; /* frame 0 due 0.5 ms ago */
	gt_run(&g, 0, 1, out, &len, &ret);
	ASSERT_EQ(ret, XDP_TX, "due: sent");
	ASSERT_EQ(st->seq, 1, "due: one frame");
	ASSERT_EQ(st->slips, 0, "0.5 ms late is within max_late: no slip");
	gt_run(&g, 0, 1, out, &len, &ret);
	ASSERT_EQ(ret, XDP_DROP, "frame 1 is due 1 ms after frame 0: not yet");
	ASSERT_EQ(st->bursts, 1, "one burst so far");

	/* frame 1 due 5 s ago: sent, and the schedule moved by 4 s */
	st->max_late_ns = 1000000000ull;
	st->pace_t0 = mono_ns() - 5000000000ull - 1000000ull;
	now = st->pace_t0;
	gt_run(&g, 0, 1, out, &len, &ret);
	ASSERT_EQ(ret, XDP_TX, "late: sent");
	ASSERT_EQ(st->slips, 1, "late by more than max_late: a slip");
	ASSERT_TRUE(st->pace_t0 >= now + 3900000000ull &&
			    st->pace_t0 <= now + 4100000000ull,
		    "the schedule moved on by the lateness beyond max_late");
	ASSERT_EQ(st->bursts, 2,
		  "an idle run and a flush came between: a new burst");

	/* frame 2 due long ago too, sent back to back: the same burst */
	gt_run(&g, 0, 1, out, &len, &ret);
	ASSERT_EQ(ret, XDP_TX, "frame 2 sent");
	ASSERT_EQ(st->bursts, 2, "back to back: the same burst");
	ASSERT_EQ(st->burst_max, 2, "the longest burst: 2");

	/* frame 3, late too, would make the burst longer than burst_cap */
	st->burst_cap = 2;
	st->limit = 4;
	gt_run(&g, 0, 1, out, &len, &ret);
	ASSERT_EQ(ret, XDP_DROP, "burst at its cap: the late frame waits");
	ASSERT_EQ(st->slips, 2, "burst cap: a slip");
	now = st->pace_t0 + 3 * (st->pace_ps / 1000);
	ASSERT_TRUE(now > mono_ns() + 900000 && now <= mono_ns() + 1000000,
		    "burst cap: frame 3 now due a period from the run");
	gt_run(&g, 0, 1, out, &len, &ret);
	ASSERT_EQ(ret, XDP_DROP, "burst cap: not due yet");
	ASSERT_EQ(st->seq, 3, "burst cap: still 3 frames");
	st->pace_t0 -= 2000000; /* due 1 ms ago: a new burst */
	gt_run(&g, 0, 1, out, &len, &ret);
	ASSERT_EQ(ret, XDP_TX, "after a wait and a flush: sent");
	ASSERT_EQ(st->bursts, 3, "a new burst");

	/* the limit */
	gt_run(&g, 0, 1, out, &len, &ret);
	ASSERT_EQ(ret, XDP_DROP, "limit 4 reached: nothing more");
	ASSERT_EQ(st->seq, 4, "limit: 4 frames");

	/* the end */
	st->limit = 100;
	st->end_ns = mono_ns() - 1;
	gt_run(&g, 0, 1, out, &len, &ret);
	ASSERT_EQ(ret, XDP_DROP, "past the end: nothing more");
	ASSERT_EQ(st->seq, 4, "past the end: still 4 frames");
	ASSERT_EQ(st->runs, 10, "every run counted");
out:
	gt_close(&g);
}

/* ---- live frames, captured ---------------------------------------------------- */

struct capture {
	struct gframe *f;
	__u32 n, cap;
	__u32 bad; /* frames that failed frame_check */
};

static int cap_read(int fd, const struct xnf_gen_spec *s, struct capture *c)
{
	static __u8 buf[2048];
	struct sockaddr_ll from;
	socklen_t fl;
	ssize_t n;
	int got = 0;

	for (;;) {
		fl = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
			     (struct sockaddr *)&from, &fl);
		if (n < 0)
			return got;
		if (from.sll_pkttype == PACKET_OUTGOING || n < ETH_HLEN ||
		    memcmp(buf + 6, s->smac, 6))
			continue; /* not ours (neighbour discovery, ...) */
		if (c->n == c->cap)
			return got;
		if (!frame_check(s, buf, n, &c->f[c->n], "captured live frame"))
			c->bad++;
		c->n++;
		got++;
	}
}

/* Live frames in flight toward a veth peer at most: below its ring of 256,
 * so that none can be dropped there. */
#define LIVE_STEP 192

/* Reads captured frames until @c holds @n (at most FX_WAIT_MS). */
static bool cap_wait(int fd, const struct xnf_gen_spec *s, struct capture *c,
		     __u32 n)
{
	long deadline = fx_now_ms() + FX_WAIT_MS;

	while (c->n < n && fx_now_ms() < deadline)
		if (!cap_read(fd, s, c))
			usleep(1000);
	return ASSERT_EQ(c->n, n, "every frame sent so far captured");
}

/* Sends n live frames out of ut0 in calls of at most LIVE_STEP, each
 * captured on ut0p before the next, checks each one; then the run as a
 * whole. */
static void live_run(int family, int proto, enum xnf_size_dist dist, __u32 size,
		     __u32 flows, __u32 n, int fd, __u32 ifindex)
{
	struct capture c = { .cap = n };
	struct bpf_link *link = NULL;
	__u64 *keys = NULL, prev_ts = 0;
	__u32 i, sent = 0, distinct = 0;
	char what[96];
	struct gt g;

	snprintf(what, sizeof(what), "ipv%d/%s size %s%u, %u flows", family,
		 proto == IPPROTO_TCP ? "tcp" : "udp",
		 dist == XNF_SIZE_IMIX ? "imix " :
		 dist == XNF_SIZE_DC   ? "dc " :
					 "",
		 size, flows);
	c.f = calloc(n, sizeof(*c.f));
	keys = calloc(n, sizeof(*keys));
	if (!ASSERT_TRUE(c.f && keys, "memory") ||
	    !gt_open(&g, family, proto, dist, size, flows))
		goto out;
	/* keeps the program in the XDP dispatcher: calls without a pause */
	link = bpf_program__attach_xdp(g.skel->progs.xnf_gen, ifindex);
	ASSERT_TRUE(link, "attach the generator to ut0");
	cap_read(fd, &g.spec, &c); /* drain */
	c.n = 0;
	c.bad = 0;
	/* at most LIVE_STEP frames in flight: the veth ring toward ut0p
	 * cannot overflow, however late its NAPI runs */
	while (sent < n) {
		__u32 k = n - sent < LIVE_STEP ? n - sent : LIVE_STEP;

		if (!ASSERT_OK(gt_run(&g, ifindex, k, NULL, NULL, NULL), what))
			goto out;
		sent += k;
		if (!cap_wait(fd, &g.spec, &c, sent))
			break;
	}
	if (!ASSERT_EQ(c.n, n, what) ||
	    !ASSERT_EQ(c.bad, 0, "every frame as specified"))
		goto out;

	/* sequence contiguous, timestamps monotonic, flows round robin */
	for (i = 0; i < n; i++) {
		const struct gframe *f = &c.f[i];

		if (!ASSERT_EQ(f->seq, i,
			       "sequence numbers contiguous, in order") ||
		    !ASSERT_GE(f->ts, prev_ts, "timestamps monotonic"))
			goto out;
		prev_ts = f->ts;
		if (f->full &&
		    !ASSERT_EQ(f->flow, i % flows, "flow = seq % flows"))
			goto out;
		if (!flow_check(&g.spec, f, i % flows, "5-tuple of the flow"))
			goto out;
		/* the 5-tuple, packed: source port and source address's last
		 * 32 bits are all that varies (flow_check) */
		keys[i] = (__u64)f->sport << 32 |
			  ntohl(*(__u32 *)(f->src + (family == 6 ? 12 : 0)));
	}
	qsort(keys, n, sizeof(*keys), cmp_u64);
	for (i = 0; i < n; i++)
		distinct += !i || keys[i] != keys[i - 1];
	ASSERT_EQ(distinct, n < flows ? n : flows, "distinct 5-tuples");

	/* the size distribution, exact over whole tables */
	if (dist == XNF_SIZE_FIXED) {
		for (i = 0; i < n; i++)
			if (!ASSERT_EQ(c.f[i].size, size, "fixed size"))
				goto out;
	} else {
		const struct xnf_size_weight *w = dist == XNF_SIZE_IMIX ?
							  xnf_imix :
							  xnf_dc;
		size_t wl = dist == XNF_SIZE_IMIX ? xnf_imix_len : xnf_dc_len, e;
		__u32 total = 0, min = xnf_gen_min_size(family, proto);

		for (e = 0; e < wl; e++)
			total += w[e].weight;
		if (!ASSERT_EQ(n % total, 0, "test sends whole tables"))
			goto out;
		for (e = 0; e < wl; e++) {
			__u32 want = 0, got = 0,
			      sz = w[e].size < min ? min : w[e].size;
			size_t e2;

			for (e2 = 0; e2 < wl; e2++)
				if ((w[e2].size < min ? min : w[e2].size) == sz)
					want += w[e2].weight * (n / total);
			for (i = 0; i < n; i++)
				got += c.f[i].size == sz;
			ASSERT_EQ(got, want, "frames of each size");
		}
	}
out:
	bpf_link__destroy(link);
	if (g.skel)
		gt_close(&g);
	free(c.f);
	free(keys);
}

/* Paced live frames at 50 kpps, captured: exactly the frames asked for,
 * in order, with timestamps that never decrease, none before its time.
 * How close to its time each one leaves is for the benchmark
 * (bench-micro, "Generator pacing"): a busy machine delays any frame by
 * any amount. The generator may send LIVE_STEP frames more (its limit)
 * once all before them were captured: the veth ring never overflows. */
TEST(gen_paced_live)
{
	const __u64 period = 20000, n = 1000;
	volatile struct xnf_gen_state *st;
	struct capture c = { .cap = n };
	struct bpf_link *link = NULL;
	__u64 t0, i, early = 0, prev_ts = 0;
	__u32 ifindex;
	struct fx_cap cap;
	int rcvbuf = 16 << 20;
	struct gt g = { 0 };
	long deadline;

	if (!fx_cap_open(&cap))
		return;
	ifindex = if_nametoindex("ut0");
	setsockopt(cap.fd[0], SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		   sizeof(rcvbuf));
	c.f = calloc(n, sizeof(*c.f));
	if (!ASSERT_TRUE(c.f, "memory") ||
	    !gt_open(&g, 4, IPPROTO_UDP, XNF_SIZE_FIXED, 64, 1))
		goto out;
	link = bpf_program__attach_xdp(g.skel->progs.xnf_gen, ifindex);
	if (!ASSERT_TRUE(link, "hold the dispatcher"))
		goto out;
	cap_read(cap.fd[0], &g.spec, &c);
	c.n = 0;
	st = &g.skel->bss->state;
	t0 = mono_ns() + 1000000;
	st->pace_t0 = t0;
	st->max_late_ns = ~0ull; /* late frames leave late, in order */
	st->pace_batch = 1;
	st->pace_ps = period * 1000;
	while (st->seq < n) {
		st->limit = st->seq + LIVE_STEP < n ? st->seq + LIVE_STEP : n;
		deadline = fx_now_ms() + FX_WAIT_MS;
		/* back-to-back calls, as xnf-gen makes them */
		while (st->seq < st->limit && fx_now_ms() < deadline)
			if (!ASSERT_OK(gt_run(&g, ifindex, 10000, NULL, NULL, NULL),
				       "paced call"))
				goto out;
		if (!ASSERT_EQ(st->seq, st->limit, "paced frames sent") ||
		    !cap_wait(cap.fd[0], &g.spec, &c, st->seq))
			goto out;
	}
	if (!ASSERT_EQ(c.bad, 0, "every paced frame as specified"))
		goto out;
	for (i = 0; i < n; i++) {
		if (!ASSERT_EQ(c.f[i].seq, i, "in order") ||
		    !ASSERT_GE(c.f[i].ts, prev_ts, "timestamps never decrease"))
			goto out;
		prev_ts = c.f[i].ts;
		early += c.f[i].ts < t0 + i * period;
	}
	ASSERT_EQ(early, 0, "no frame leaves before its time");
	ASSERT_EQ(st->slips, 0, "the schedule never moved");
	ASSERT_EQ(st->burst_max >= 1, 1, "bursts counted");
out:
	bpf_link__destroy(link);
	if (g.skel)
		gt_close(&g);
	free(c.f);
	fx_cap_close(&cap);
}

TEST(gen_live_frames)
{
	struct fx_cap cap;
	int rcvbuf = 64 << 20;
	__u32 ifindex;

	if (!fx_cap_open(&cap))
		return;
	ifindex = if_nametoindex("ut0");
	setsockopt(cap.fd[0], SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		   sizeof(rcvbuf));
	live_run(4, IPPROTO_UDP, XNF_SIZE_FIXED, 64, 1, 2000, cap.fd[0], ifindex);
	live_run(4, IPPROTO_UDP, XNF_SIZE_FIXED, 1518, 16, 2000, cap.fd[0],
		 ifindex);
	live_run(4, IPPROTO_UDP, XNF_SIZE_IMIX, 0, 100, 2400, cap.fd[0], ifindex);
	live_run(4, IPPROTO_TCP, XNF_SIZE_IMIX, 0, 7, 2400, cap.fd[0], ifindex);
	live_run(6, IPPROTO_UDP, XNF_SIZE_IMIX, 0, 1000, 2400, cap.fd[0],
		 ifindex);
	live_run(6, IPPROTO_TCP, XNF_SIZE_IMIX, 0, 3, 2400, cap.fd[0], ifindex);
	live_run(4, IPPROTO_UDP, XNF_SIZE_DC, 0, 256, 3000, cap.fd[0], ifindex);
	live_run(6, IPPROTO_TCP, XNF_SIZE_DC, 0, 5, 3000, cap.fd[0], ifindex);
	fx_cap_close(&cap);
}

/* ---- the sink ---------------------------------------------------------------- */

struct sink_view {
	struct xnf_sink_stats s; /* summed over CPUs (min/max merged) */
	struct xnf_sink_seq q;	 /* merged over queues (window unused) */
	__u64 hist[XNF_LAT_BUCKETS];
	__u64 lost;
};

static bool sink_read(struct xnf_sink *k, struct sink_view *v)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	size_t sz = bpf_map__value_size(k->maps.xnf_sink_seq);
	struct xnf_sink_stats *st = calloc(ncpus, sizeof(*st));
	struct xnf_sink_hist *h = calloc(ncpus, sizeof(*h));
	__u8 *sq = calloc(1, sz);
	bool ok = false;
	__u32 key = 0, b;

	memset(v, 0, sizeof(*v));
	if (!ASSERT_TRUE(st && h && sq, "memory") ||
	    !ASSERT_OK(bpf_map__lookup_elem(k->maps.xnf_sink_stats, &key, 4, st,
					    ncpus * sizeof(*st), 0),
		       "read sink stats") ||
	    !ASSERT_OK(bpf_map__lookup_elem(k->maps.xnf_sink_hist, &key, 4, h,
					    ncpus * sizeof(*h), 0),
		       "read sink histogram"))
		goto out;
	for (cpu = 0; cpu < ncpus; cpu++) {
		v->s.packets += st[cpu].packets;
		v->s.bytes += st[cpu].bytes;
		v->s.no_probe += st[cpu].no_probe;
		v->s.bad_ip_csum += st[cpu].bad_ip_csum;
		v->s.bad_l4_csum += st[cpu].bad_l4_csum;
		v->s.ts_ahead += st[cpu].ts_ahead;
		if (st[cpu].lat_max > v->s.lat_max)
			v->s.lat_max = st[cpu].lat_max;
		for (b = 0; b < XNF_LAT_BUCKETS; b++)
			v->hist[b] += h[cpu].count[b];
	}
	for (key = 0; key < XNF_SINK_QUEUES; key++) {
		struct xnf_sink_seq *q = (void *)(sq + XNF_SINK_SEQ_OFF);

		if (!ASSERT_OK(bpf_map__lookup_elem(k->maps.xnf_sink_seq, &key,
						    4, sq, sz, 0),
			       "read sink sequence state"))
			goto out;
		if (!q->started)
			continue;
		if (!v->q.started || q->min_seq < v->q.min_seq)
			v->q.min_seq = q->min_seq;
		if (q->max_seq > v->q.max_seq)
			v->q.max_seq = q->max_seq;
		v->q.started = 1;
		v->q.reordered += q->reordered;
		v->q.duplicates += q->duplicates;
		v->q.beyond_window += q->beyond_window;
	}
	if (v->q.started) {
		__u64 span = v->q.max_seq - v->q.min_seq + 1,
		      uniq = v->s.packets - v->q.duplicates;

		v->lost = span > uniq ? span - uniq : 0;
	}
	ok = true;
out:
	free(st);
	free(h);
	free(sq);
	return ok;
}

static struct xnf_sink *sink_open(bool check_l4)
{
	struct xnf_sink *k = xnf_sink__open();

	if (!ASSERT_TRUE(k, "open sink.bpf.o"))
		return NULL;
	((struct xnf_sink_cfg *)&k->rodata->cfg)->check_l4 = check_l4;
	if (!ASSERT_OK(xnf_sink__load(k), "load sink.bpf.o")) {
		xnf_sink__destroy(k);
		return NULL;
	}
	return k;
}

/* One frame into the sink, on receive queue @queue of @ifindex (0: none). */
static int sink_feed(struct xnf_sink *k, const __u8 *frame, __u32 len,
		     __u32 ifindex, __u32 queue)
{
	struct xdp_md ctx = { .data_end = len,
			      .ingress_ifindex = ifindex,
			      .rx_queue_index = queue };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
		    .data_size_in = len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));

	if (bpf_prog_test_run_opts(bpf_program__fd(k->progs.xnf_sink), &opts))
		return -errno;
	return opts.retval;
}

/* The generator's frame with sequence number @seq. */
static bool gen_seq_frame(struct gt *g, __u64 seq, __u8 *out, __u32 *len)
{
	g->skel->bss->state.seq = seq;
	return ASSERT_OK(gt_run(g, 0, 1, out, len, NULL), "generate a frame");
}

/* Feeds the frames with the sequence numbers of @seqs, in that order. */
static bool sink_seqs(struct xnf_sink *k, struct gt *g, const __u64 *seqs,
		      __u32 n, __u32 ifindex, const __u32 *queues)
{
	__u8 fr[2048];
	__u32 i, len;

	for (i = 0; i < n; i++) {
		if (!gen_seq_frame(g, seqs[i], fr, &len) ||
		    !ASSERT_EQ(sink_feed(k, fr, len, ifindex,
					 queues ? queues[i] : 0),
			       XDP_DROP, "probe frame dropped by the sink"))
			return false;
	}
	return true;
}

TEST(sink_loss_reorder_duplicates)
{
	struct sink_view v;
	struct xnf_sink *k;
	__u64 seqs[128];
	struct gt g;
	__u32 n, i;

	if (!gt_open(&g, 4, IPPROTO_UDP, XNF_SIZE_FIXED, 128, 1))
		return;

	/* 100 frames in order: exact */
	if (!(k = sink_open(true)))
		goto out;
	for (i = 0; i < 100; i++)
		seqs[i] = i;
	if (sink_seqs(k, &g, seqs, 100, 0, NULL) && sink_read(k, &v)) {
		ASSERT_EQ(v.s.packets, 100, "in order: packets");
		ASSERT_EQ(v.s.bytes, 100 * 128, "in order: bytes with FCS");
		ASSERT_EQ(v.lost, 0, "in order: lost");
		ASSERT_EQ(v.q.reordered, 0, "in order: reordered");
		ASSERT_EQ(v.q.duplicates, 0, "in order: duplicates");
		ASSERT_EQ(v.q.min_seq, 0, "in order: first");
		ASSERT_EQ(v.q.max_seq, 99, "in order: last");
		ASSERT_EQ(v.s.bad_ip_csum + v.s.bad_l4_csum, 0,
			  "checksums right");
	}
	xnf_sink__destroy(k);

	/* 0..99 without 5, 17 and 40..44: 7 lost */
	if (!(k = sink_open(false)))
		goto out;
	for (i = 0, n = 0; i < 100; i++)
		if (i != 5 && i != 17 && (i < 40 || i > 44))
			seqs[n++] = i;
	if (sink_seqs(k, &g, seqs, n, 0, NULL) && sink_read(k, &v)) {
		ASSERT_EQ(v.s.packets, 93, "gaps: packets");
		ASSERT_EQ(v.lost, 7, "gaps: lost");
		ASSERT_EQ(v.q.reordered, 0, "gaps: reordered");
	}
	xnf_sink__destroy(k);

	/* 11 before 10, 50 after 60, 70 twice: 2 late, 1 duplicate, none lost */
	if (!(k = sink_open(false)))
		goto out;
	for (i = 0, n = 0; i < 100; i++) {
		if (i == 10 || i == 50)
			continue;
		seqs[n++] = i;
		if (i == 11)
			seqs[n++] = 10;
		if (i == 60)
			seqs[n++] = 50;
		if (i == 70)
			seqs[n++] = 70;
	}
	if (sink_seqs(k, &g, seqs, n, 0, NULL) && sink_read(k, &v)) {
		ASSERT_EQ(v.s.packets, 101, "reordered: packets");
		ASSERT_EQ(v.q.reordered, 2, "reordered: late frames");
		ASSERT_EQ(v.q.duplicates, 1, "reordered: duplicates");
		ASSERT_EQ(v.lost, 0, "reordered: lost");
		ASSERT_EQ(v.q.max_seq, 99, "reordered: last");
	}
	xnf_sink__destroy(k);

	/* a late frame from before the window (65536 sequence numbers) */
	if (!(k = sink_open(false)))
		goto out;
	seqs[0] = 0;
	seqs[1] = 2;
	seqs[2] = 65536 + 5; /* takes the window slot of 0..63 */
	seqs[3] = 1;
	if (sink_seqs(k, &g, seqs, 4, 0, NULL) && sink_read(k, &v)) {
		ASSERT_EQ(v.q.reordered, 1, "old late frame: reordered");
		ASSERT_EQ(v.q.beyond_window, 1,
			  "old late frame: beyond the window");
		ASSERT_EQ(v.q.duplicates, 0, "old late frame: not a duplicate");
		ASSERT_EQ(v.lost, 65542 - 4, "old late frame: the rest lost");
	}
	xnf_sink__destroy(k);
out:
	gt_close(&g);
}

TEST(sink_short_probe_wraps)
{
	__u64 base = 0xffffffffull - 20, seqs[64];
	struct sink_view v;
	struct xnf_sink *k;
	struct gt g;
	__u32 i, n = 0;

	/* 64-byte IPv4/UDP frames carry 32 bits of the sequence number */
	if (!gt_open(&g, 4, IPPROTO_UDP, XNF_SIZE_FIXED, 64, 1) ||
	    !(k = sink_open(true)))
		goto out;
	for (i = 0; i < 50; i++)
		if (i != 30) /* lost, after the wrap */
			seqs[n++] = base + i;
	seqs[n++] = base + 10; /* a duplicate, before the wrap */
	if (sink_seqs(k, &g, seqs, n, 0, NULL) && sink_read(k, &v)) {
		ASSERT_EQ(v.s.packets, 50, "short probes: packets");
		ASSERT_EQ(v.q.min_seq, 0xffffffffull - 20, "short probes: first");
		ASSERT_EQ(v.q.max_seq, base + 49,
			  "short probes: widened beyond 2^32");
		ASSERT_EQ(v.lost, 1, "short probes: lost");
		ASSERT_EQ(v.q.duplicates, 1, "short probes: duplicates");
		ASSERT_EQ(v.q.reordered, 0, "short probes: reordered");
		ASSERT_EQ(v.s.bad_l4_csum + v.s.bad_ip_csum, 0,
			  "short probes: checksums");
	}
	xnf_sink__destroy(k);
out:
	gt_close(&g);
}

TEST(sink_per_queue)
{
	__u64 seqs[200];
	__u32 queues[200], i, n = 0, ifindex;
	struct sink_view v;
	struct xnf_sink *k = NULL;
	struct fx_cap cap;
	struct gt g;

	/* the sandbox, and a device with 70 receive queues */
	if (!fx_cap_open(&cap))
		return;
	fx_cap_close(&cap);
	if (!ASSERT_OK(fx_sh("ip link add utq0 numrxqueues 70 type veth peer name utq0p "
			     "numrxqueues 70"),
		       "veth with 70 queues"))
		return;
	ifindex = if_nametoindex("utq0");
	if (!gt_open(&g, 6, IPPROTO_UDP, XNF_SIZE_FIXED, 128, 1) ||
	    !(k = sink_open(false)))
		goto out;
	/* even numbers on queue 0, odd on 1, the tail on 66 and 69 (which
	 * share the last, locked element): interleaved across queues but in
	 * order on each */
	for (i = 0; i < 100; i++) {
		seqs[n] = i;
		queues[n++] = i & 1;
	}
	for (i = 0; i < 60; i++) {
		seqs[n] = 100 + i;
		queues[n++] = i % 3 ? 66 : 69;
	}
	/* one frame on queue 1 late, one lost */
	seqs[n] = 161;
	queues[n++] = 1;
	seqs[n] = 160;
	queues[n++] = 1;
	seqs[n] = 163;
	queues[n++] = 1;
	if (sink_seqs(k, &g, seqs, n, ifindex, queues) && sink_read(k, &v)) {
		ASSERT_EQ(v.s.packets, 163, "queues: packets");
		ASSERT_EQ(v.q.reordered, 1,
			  "queues: reordered within a queue only");
		ASSERT_EQ(v.lost, 1, "queues: lost over all queues");
		ASSERT_EQ(v.q.min_seq, 0, "queues: first");
		ASSERT_EQ(v.q.max_seq, 163, "queues: last");
	}
out:
	xnf_sink__destroy(k);
	gt_close(&g);
	fx_sh("ip link del utq0");
}

TEST(sink_checks_and_latency)
{
	__u8 fr[2048], other[60] = { 0 };
	struct sink_view v;
	struct xnf_sink *k;
	__u64 now, p50;
	struct gt g;
	__u32 len, i;

	if (!gt_open(&g, 4, IPPROTO_TCP, XNF_SIZE_FIXED, 200, 1) ||
	    !(k = sink_open(true)))
		goto out;

	/* not a probe frame: ARP-like, passed */
	other[12] = 0x08;
	other[13] = 0x06;
	ASSERT_EQ(sink_feed(k, other, sizeof(other), 0, 0), XDP_PASS,
		  "ARP passes");
	/* a probe frame with a broken IPv4 checksum, then a broken payload */
	if (gen_seq_frame(&g, 0, fr, &len)) {
		fr[ETH_HLEN + 10] ^= 0x40;
		ASSERT_EQ(sink_feed(k, fr, len, 0, 0), XDP_DROP,
			  "bad IPv4 checksum: dropped");
	}
	if (gen_seq_frame(&g, 1, fr, &len)) {
		fr[len - 1] ^= 0x01;
		ASSERT_EQ(sink_feed(k, fr, len, 0, 0), XDP_DROP,
			  "bad TCP checksum: dropped");
	}
	/* latency: 20 frames sent 1 ms "ago", one from the future */
	for (i = 0; i < 21; i++) {
		struct xnf_probe pr;
		__u32 pay = ETH_HLEN + 20 + 20;

		if (!gen_seq_frame(&g, 2 + i, fr, &len))
			break;
		memcpy(&pr, fr + pay, sizeof(pr));
		now = mono_ns();
		pr.ts_ns = i < 20 ? now - 1000000 : now + 1000000000ull;
		memcpy(fr + pay, &pr, sizeof(pr));
		sink_feed(k, fr, len, 0, 0);
	}
	if (sink_read(k, &v)) {
		ASSERT_EQ(v.s.no_probe, 1, "frames without a probe");
		ASSERT_EQ(v.s.packets, 23, "frames with a probe");
		ASSERT_EQ(v.s.bad_ip_csum, 1, "bad IPv4 checksums");
		/* the latency frames had their timestamp changed */
		ASSERT_EQ(v.s.bad_l4_csum, 1 + 21, "bad TCP checksums");
		ASSERT_EQ(v.s.ts_ahead, 1, "timestamps from the future");
		p50 = xnf_lat_quantile(v.hist, v.s.packets, 0.5, 0, v.s.lat_max);
		ASSERT_TRUE(p50 >= 1000000 && p50 < 1000000 * 1.05,
			    "median latency: 1 ms, within the bucket and the run time");
		ASSERT_LE(v.s.lat_max, 1000000 + 100000000,
			  "largest latency: the 1 ms frames");
	}
	xnf_sink__destroy(k);
out:
	gt_close(&g);
}

/* Probe frames the sink counted so far, over all CPUs. */
static __u64 sink_packets(struct xnf_sink *k)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	struct xnf_sink_stats st[ncpus];
	__u64 n = 0;
	__u32 key = 0;

	if (bpf_map__lookup_elem(k->maps.xnf_sink_stats, &key, 4, st,
				 sizeof(st), 0))
		return 0;
	for (cpu = 0; cpu < ncpus; cpu++)
		n += st[cpu].packets;
	return n;
}

/* Live frames into the sink attached to ut0p, LIVE_STEP at a time (each
 * step counted before the next is sent, so that the veth ring cannot
 * overflow): every frame counted, every checksum right, after pages were
 * recycled many times with frames of other sizes. */
TEST(gen_into_sink_100k)
{
	static const int fams[] = { 4, 4, 6, 6 },
			 protos[] = { IPPROTO_UDP, IPPROTO_TCP, IPPROTO_UDP,
				      IPPROTO_TCP };
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_DRV_MODE);
	const __u32 n = 100000;
	__u32 ut0, ut0p, v;
	struct fx_cap cap;
	struct sink_view sv;

	if (!fx_cap_open(&cap))
		return;
	fx_cap_close(&cap);
	ut0 = if_nametoindex("ut0");
	ut0p = if_nametoindex("ut0p");
	for (v = 0; v < 4; v++) {
		enum xnf_size_dist dist = v & 1 ? XNF_SIZE_DC : XNF_SIZE_IMIX;
		struct xnf_sink *k = sink_open(true);
		const struct xnf_gen_cfg *cfg;
		struct gt g = { 0 };
		__u64 want_bytes;
		struct bpf_link *glink = NULL;
		long long dropped;
		long deadline;
		int lfd = -1;
		__u32 i, step;

		if (!k)
			return;
		lfd = bpf_link_create(bpf_program__fd(k->progs.xnf_sink), ut0p,
				      BPF_XDP, &lo);
		if (!ASSERT_TRUE(lfd >= 0, "attach the sink to ut0p") ||
		    !gt_open(&g, fams[v], protos[v], dist, 0, 64))
			goto next;
		/* keeps the program in the XDP dispatcher: calls without a
		 * pause */
		glink = bpf_program__attach_xdp(g.skel->progs.xnf_gen, ut0);
		if (!ASSERT_TRUE(glink, "attach the generator to ut0"))
			goto next;
		cfg = (const struct xnf_gen_cfg *)&g.skel->rodata->cfg;
		for (i = 0, want_bytes = 0; i < n; i++)
			want_bytes += cfg->sizes[i % cfg->nsizes];
		dropped = fx_tx_dropped("ut0");
		for (i = 0; i < n; i += step) {
			step = n - i < LIVE_STEP ? n - i : LIVE_STEP;
			if (!ASSERT_OK(gt_run(&g, ut0, step, NULL, NULL, NULL),
				       "live frames"))
				goto next;
			deadline = fx_now_ms() + FX_WAIT_MS;
			while (sink_packets(k) < i + step &&
			       fx_now_ms() < deadline)
				usleep(100);
		}
		ASSERT_EQ(fx_tx_dropped("ut0") - dropped, 0,
			  "none dropped by the veth (ut0's tx_dropped)");
		if (!sink_read(k, &sv))
			goto next;
		ASSERT_EQ(g.skel->bss->state.seq, n, "generator: frames written");
		ASSERT_EQ(g.skel->bss->state.errors, 0, "generator: no errors");
		ASSERT_EQ(sv.s.packets, n, "sink: every frame");
		ASSERT_EQ(sv.s.bytes, g.skel->bss->state.bytes,
			  "sink: bytes = generator's");
		ASSERT_EQ(sv.s.bytes, want_bytes, "bytes: the size table's");
		ASSERT_EQ(sv.s.bad_ip_csum, 0, "sink: IPv4 checksums");
		ASSERT_EQ(sv.s.bad_l4_csum, 0, "sink: UDP/TCP checksums");
		ASSERT_EQ(sv.lost, 0, "sink: lost");
		ASSERT_EQ(sv.q.reordered, 0, "sink: reordered");
		ASSERT_EQ(sv.q.duplicates, 0, "sink: duplicates");
		ASSERT_EQ(sv.q.max_seq, n - 1, "sink: last sequence number");
		ASSERT_EQ(sv.s.ts_ahead, 0, "sink: no timestamp from the future");
next:
		bpf_link__destroy(glink);
		if (lfd >= 0)
			close(lfd);
		if (g.skel)
			gt_close(&g);
		xnf_sink__destroy(k);
	}
}
