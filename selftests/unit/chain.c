// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The chain machinery (bpf/chain.bpf.h, bpf/entry.bpf.c, bpf/fused.bpf.c,
 * loader/dataplane.c): tail-called and fused chains agree, per-NF counters
 * count what reached each NF, an empty slot is counted and fails closed
 * when the firewall is in the chain, the order of the chain is data, xsk
 * falls back without a socket, and the loader refuses chains it cannot
 * build.
 */
#include <errno.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf.h>

#include "fixture.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* FDB: two hosts behind ut1 and ut2, one behind the ingress port (ut0),
 * one on a port that is not in the devmap. */
static const __u8 mac_a[6] = { 0x02, 0, 0, 0, 0xaa, 0x01 }; /* ut1 */
static const __u8 mac_b[6] = { 0x02, 0, 0, 0, 0xaa, 0x02 }; /* ut2 */
static const __u8 mac_h[6] = { 0x02, 0, 0, 0, 0xaa, 0x00 }; /* ut0 */
static const __u8 mac_x[6] = { 0x02, 0, 0, 0, 0xaa, 0x09 }; /* no port */
static const __u8 mac_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
#define NOT_A_PORT 999999

static const struct xnf_fw_rule chain_rules[] = {
	{ .prio = 10,
	  .flags = XNF_FW_F_PROTO | XNF_FW_F_DPORT,
	  .action = XNF_FW_DROP,
	  .proto = IPPROTO_UDP,
	  .dport_lo = 5353,
	  .dport_hi = 5353 },
	{ .prio = 20,
	  .flags = XNF_FW_F_DST | XNF_FW_F_PROTO | XNF_FW_F_DPORT,
	  .action = XNF_FW_DROP,
	  .family = XNF_AF_INET,
	  .proto = IPPROTO_TCP,
	  .dst_len = 25,
	  .dst = { 203, 0, 113, 0 },
	  .dport_lo = 22,
	  .dport_hi = 22 },
	{ .prio = 30,
	  .flags = XNF_FW_F_SRC,
	  .action = XNF_FW_DROP,
	  .family = XNF_AF_INET,
	  .src_len = 32,
	  .src = { 192, 0, 2, 66 } },
	{ .prio = 40,
	  .flags = XNF_FW_F_DST | XNF_FW_F_PROTO | XNF_FW_F_DPORT,
	  .action = XNF_FW_DROP,
	  .family = XNF_AF_INET6,
	  .proto = IPPROTO_TCP,
	  .dst_len = 48,
	  .dst = { 0x20, 0x01, 0x0d, 0xb8, 0, 3 },
	  .dport_lo = 80,
	  .dport_hi = 90 },
};

/* Routes to ut1 and ut2, a blackhole and a local address; the FDB above;
 * the firewall rules. */
static bool chain_tables(struct fx *f)
{
	return fx_route4(f, "198.51.100.0/24", 1, XNF_RT_UNICAST) &&
	       fx_route4(f, "198.51.100.128/25", 1, XNF_RT_BLACKHOLE) &&
	       fx_route4(f, "203.0.113.0/24", 2, XNF_RT_UNICAST) &&
	       fx_route4(f, "192.0.2.200/32", 0, XNF_RT_LOCAL) &&
	       fx_route6(f, "2001:db8:2::/64", 1, XNF_RT_UNICAST) &&
	       fx_route6(f, "2001:db8:3::/48", 2, XNF_RT_UNICAST) &&
	       ASSERT_OK(xnf_fdb_set(f->dp, mac_a, f->ifindex[1]), "fdb a") &&
	       ASSERT_OK(xnf_fdb_set(f->dp, mac_b, f->ifindex[2]), "fdb b") &&
	       ASSERT_OK(xnf_fdb_set(f->dp, mac_h, f->ifindex[0]), "fdb h") &&
	       ASSERT_OK(xnf_fdb_set(f->dp, mac_x, NOT_A_PORT), "fdb x") &&
	       fx_fw_load(f, chain_rules, ARRAY_SIZE(chain_rules), XNF_FW_ALLOW);
}

static struct iphdr *ip4(void *frame)
{
	return (struct iphdr *)((__u8 *)frame + pkt_l3_off(frame));
}

/* The frame l3fwd makes of an untagged IPv4 @in routed to @port. */
static void routed4(const struct fx *f, const __u8 *in, __u32 len, __u32 port,
		    __u8 *want)
{
	struct iphdr *iph;

	memcpy(want, in, len);
	fx_nh_mac(port, want);
	memcpy(want + 6, f->mac[port], 6);
	iph = ip4(want);
	iph->ttl--;
	iph->check = 0;
	iph->check = pkt_csum(iph, iph->ihl * 4, 0);
}

static bool row_is(const struct xnf_stats *st, __u32 nf, __u64 in, __u64 pass,
		   __u64 drop, __u64 redirect, const char *what)
{
	const struct xnf_nf_counters *c = &st->nf[nf];

	return ASSERT_EQ(c->in, in, what) && ASSERT_EQ(c->pass, pass, what) &&
	       ASSERT_EQ(c->drop, drop, what) &&
	       ASSERT_EQ(c->redirect, redirect, what);
}

/* ---- tail-called == fused ---- */

static __u32 rnd(__u32 *s)
{
	__u32 x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

#define PICK(seed, a) ((a)[rnd(seed) % ARRAY_SIZE(a)])

/* A varied frame: families, protocols, routed / unrouted / blackholed /
 * local destinations, TTLs, VLAN tags, FDB hits and misses, ports some
 * rules drop, fragments, sizes, and about one in eight malformed. */
static int gen_frame(__u32 *seed, __u8 *buf, size_t cap)
{
	static const char *const dst4[] = {
		"198.51.100.7",	 "198.51.100.200", "203.0.113.9",
		"203.0.113.200", "10.1.2.3",	   "192.0.2.200",
	};
	static const char *const src4[] = { "192.0.2.1", "192.0.2.66" };
	static const char *const dst6[] = {
		"2001:db8:2::5",
		"2001:db8:3::9",
		"2001:db8:9::1",
	};
	static const __u16 dports[] = { 5353, 22, 80, 85, 7, 443 };
	static const __u8 protos[] = {
		IPPROTO_UDP, IPPROTO_TCP,  IPPROTO_UDP,
		IPPROTO_TCP, IPPROTO_ICMP,
	};
	static const __u8 ttls[] = { 64, 64, 64, 2, 1 };
	static const __u16 lens[] = { 64, 96, 128, 256, 1000 };
	const __u8 *dmacs[] = {
		NULL, NULL, mac_a, mac_b, mac_h, mac_x, mac_bcast,
	};
	struct pkt_spec s = {};
	__u32 r = rnd(seed) % 100;
	const __u8 *dmac;
	int len;

	s.family = r < 48 ? 4 : r < 92 ? 6 : 0;
	s.proto = PICK(seed, protos);
	if (s.family == 6 && s.proto == IPPROTO_ICMP)
		s.proto = IPPROTO_ICMPV6;
	s.dst = s.family == 6 ? PICK(seed, dst6) : PICK(seed, dst4);
	s.src = s.family == 6 ? NULL : PICK(seed, src4);
	s.ttl = PICK(seed, ttls);
	s.nvlans = rnd(seed) % 10 == 0;
	dmac = PICK(seed, dmacs);
	if (dmac)
		memcpy(s.dmac, dmac, 6);
	s.sport = 1024 + rnd(seed) % 1000;
	s.dport = PICK(seed, dports);
	s.frame_len = PICK(seed, lens);
	if (s.family == 6 && s.frame_len < 96)
		s.frame_len = 96;
	if (s.family == 4 && rnd(seed) % 8 == 0)
		s.frag_off = rnd(seed) % 2 ? 0x2000 : 0x2000 | 100;
	len = pkt_build(buf, cap, &s);
	if (len < 0)
		return len;

	switch (rnd(seed) % 16) {
	case 0: /* cut short */
		len = ETH_HLEN + rnd(seed) % (len - ETH_HLEN);
		break;
	case 1: /* IP length beyond the frame */
		if (s.family == 4)
			ip4(buf)->tot_len = htons(ntohs(ip4(buf)->tot_len) + 1);
		else if (s.family == 6)
			((struct ipv6hdr *)ip4(buf))->payload_len = htons(len);
		break;
	}
	return len;
}

struct result {
	int ret;
	__u32 len;
	__u8 *data;
};

/* Configurations every frame set runs under: the defaults, every
 * exception dropped, and l2 misses passed. */
static const struct {
	__u32 no_route, ttl, local, l2_miss;
} cfgs[] = {
	{ XNF_ACT_PASS, XNF_ACT_PASS, XNF_ACT_PASS, XNF_ACT_FLOOD },
	{ XNF_ACT_DROP, XNF_ACT_DROP, XNF_ACT_DROP, XNF_ACT_DROP },
	{ XNF_ACT_PASS, XNF_ACT_DROP, XNF_ACT_PASS, XNF_ACT_PASS },
};

#define NFRAMES 300
#define NRUNS	(NFRAMES * ARRAY_SIZE(cfgs))

static bool fw_hits_read(struct fx *f, struct xnf_fw_hit *sum)
{
	int ncpus = xnf_ncpus();
	struct xnf_fw_hit *v;
	__u32 i;
	int cpu;

	v = calloc(ncpus, sizeof(*v));
	if (!ASSERT_TRUE(v, "calloc"))
		return false;
	for (i = 0; i < ARRAY_SIZE(chain_rules); i++) {
		sum[i] = (struct xnf_fw_hit){};
		if (!ASSERT_OK(bpf_map_lookup_elem(xnf_table_fd(f->dp,
								XNF_T_FW_HITS),
						   &i, v) ?
				       -errno :
				       0,
			       "read fw hits"))
			break;
		for (cpu = 0; cpu < ncpus; cpu++) {
			sum[i].packets += v[cpu].packets;
			sum[i].bytes += v[cpu].bytes;
		}
	}
	free(v);
	return i == ARRAY_SIZE(chain_rules);
}

static bool fw_hits_reset(struct fx *f)
{
	return ASSERT_OK(xnf_fw_hits_reset(f->dp), "reset fw hits");
}

/* Runs the frames under every configuration; stores results in @res (the
 * reference, when @check is false) or compares with them. */
static bool run_set(struct fx *f, __u8 (*frames)[PKT_MAX], const int *lens,
		    struct result *res, bool check, const char *what,
		    struct xnf_stats *st, struct xnf_fw_hit *hits)
{
	static struct fx_out out;
	char msg[160];
	size_t c;
	int i, n = 0, actions = 0;

	if (!fx_stats_reset(f) || !fw_hits_reset(f))
		return false;
	for (c = 0; c < ARRAY_SIZE(cfgs); c++) {
		if (!fx_set_cfg(f, cfgs[c].no_route, cfgs[c].ttl, cfgs[c].local,
				cfgs[c].l2_miss))
			return false;
		for (i = 0; i < NFRAMES; i++, n++) {
			struct result *r = &res[n];

			snprintf(msg, sizeof(msg), "%s: frame %d, cfg %zu",
				 what, i, c);
			if (!ASSERT_OK(fx_run(f, frames[i], lens[i], &out), msg) ||
			    !ASSERT_NEQ(out.ret, XDP_ABORTED, msg))
				return false;
			actions |= 1 << out.ret;
			if (!check) {
				r->ret = out.ret;
				r->len = out.len;
				memcpy(r->data, out.data, out.len);
				continue;
			}
			if (!ASSERT_EQ(out.ret, r->ret, msg) ||
			    !ASSERT_EQ(out.len, r->len, msg) ||
			    !ASSERT_MEM(out.data, r->data, out.len, msg))
				return false;
		}
	}
	snprintf(msg, sizeof(msg), "%s: counters", what);
	if (!fx_stats(f, st) || !fx_stats_consistent(st, msg) ||
	    !ASSERT_EQ(st->nf[XNF_NF_ENTRY].in, NRUNS, msg) ||
	    !fw_hits_read(f, hits))
		return false;
	/* Not a vacuous agreement: malformed frames are dropped by every
	 * chain, and each chain does more than that. */
	return ASSERT_TRUE(actions & (1 << XDP_DROP), msg) &&
	       ASSERT_TRUE(actions & ~(1 << XDP_DROP), msg);
}

TEST(chain_tail_equals_fused)
{
	static const char *const texts[] = {
		"firewall",
		"l3fwd",
		"l2fwd",
		"firewall,l3fwd",
		"l3fwd,firewall",
		"firewall,l2fwd",
		"l2fwd,firewall",
		"l3fwd,l2fwd",
		"l2fwd,l3fwd",
		"firewall,l3fwd,l2fwd",
		"firewall,l2fwd,l3fwd",
		"l3fwd,firewall,l2fwd",
		"l3fwd,l2fwd,firewall",
		"l2fwd,firewall,l3fwd",
		"l2fwd,l3fwd,firewall",
		"conntrack",
		"conntrack,firewall",
		"conntrack,firewall,l3fwd,l2fwd",
		"l3fwd,conntrack,l2fwd",
	};
	static __u8 frames[NFRAMES][PKT_MAX];
	struct xnf_stats st_tail, st_fused;
	struct xnf_fw_hit hits_tail[ARRAY_SIZE(chain_rules)];
	struct xnf_fw_hit hits_fused[ARRAY_SIZE(chain_rules)];
	struct result *res;
	int lens[NFRAMES];
	__u32 seed = 0x5eed1234;
	size_t t, i;
	struct fx f;

	res = calloc(NRUNS, sizeof(*res));
	if (!ASSERT_TRUE(res, "calloc"))
		return;
	for (i = 0; i < NRUNS; i++)
		if (!ASSERT_TRUE(res[i].data = malloc(PKT_MAX), "malloc"))
			goto out_free;
	for (i = 0; i < NFRAMES; i++)
		if (!ASSERT_GE(lens[i] = gen_frame(&seed, frames[i], PKT_MAX),
			       ETH_HLEN, "gen_frame"))
			goto out_free;

	if (!fx_open(&f))
		goto out_free;
	if (!chain_tables(&f))
		goto out_close;
	for (t = 0; t < ARRAY_SIZE(texts); t++) {
		char what[96];

		snprintf(what, sizeof(what), "%s tail-called", texts[t]);
		if (!fx_chain(&f, texts[t], false, false) ||
		    !run_set(&f, frames, lens, res, false, what, &st_tail,
			     hits_tail))
			continue;
		snprintf(what, sizeof(what), "%s fused", texts[t]);
		if (!fx_chain(&f, texts[t], true, false) ||
		    !run_set(&f, frames, lens, res, true, what, &st_fused,
			     hits_fused))
			continue;
		snprintf(what, sizeof(what),
			 "%s: counters tail-called vs fused", texts[t]);
		/* Every counter but the flow cache's, whose hits depend on
		 * what the run before left in it, and so its lookups too
		 * (the bypass skips them after a window of misses,
		 * bpf/fcache.bpf.h): every NF looks up at most once per
		 * packet either way. */
		for (i = 1; i < __XNF_NF_MAX; i++) {
			ASSERT_LE(st_fused.fc_hit[i] + st_fused.fc_miss[i],
				  st_fused.nf[i].in, what);
			ASSERT_LE(st_tail.fc_hit[i] + st_tail.fc_miss[i],
				  st_tail.nf[i].in, what);
		}
		if (!ASSERT_MEM(&st_fused, &st_tail,
				offsetof(struct xnf_stats, fc_hit), what)) {
			fprintf(stderr, "  tail-called:\n");
			fx_dump(&st_tail);
			fprintf(stderr, "  fused:\n");
			fx_dump(&st_fused);
		}
		snprintf(what, sizeof(what),
			 "%s: rule hits tail-called vs fused", texts[t]);
		ASSERT_MEM(hits_fused, hits_tail, sizeof(hits_tail), what);
		for (i = 0; i < XNF_CHAIN_MAX; i++)
			ASSERT_EQ(st_tail.tail_miss[i], 0, what);
	}
out_close:
	fx_close(&f);
out_free:
	for (i = 0; i < NRUNS; i++)
		free(res[i].data);
	free(res);
}

/* ---- per-NF counters ---- */

enum ck {
	CK_MALFORMED,
	CK_FW_DROP,
	CK_NO_ROUTE,
	CK_TTL,
	CK_VLAN,
	CK_NOT_IP,
	CK_LOCAL,
	CK_BLACKHOLE,
	CK_FWD,
};

TEST(chain_counters)
{
	static const struct {
		enum ck kind;
		struct pkt_spec s;
		int cut; /* bytes cut off the end */
	} mix[] = {
		{ CK_FWD, { .family = 4 } },
		{ CK_MALFORMED, { .family = 4 }, 1 },
		{ CK_FW_DROP, { .family = 4, .dport = 5353 } },
		{ CK_NO_ROUTE, { .family = 4, .dst = "10.1.2.3" } },
		{ CK_FWD,
		  { .family = 6, .proto = IPPROTO_TCP, .frame_len = 128 } },
		{ CK_MALFORMED, { .family = 6 }, 30 },
		{ CK_TTL, { .family = 4, .ttl = 1 } },
		{ CK_FWD, { .family = 4, .dst = "203.0.113.9" } },
		{ CK_FW_DROP, { .family = 6, .dport = 5353 } },
		{ CK_VLAN, { .family = 4, .nvlans = 1 } },
		{ CK_MALFORMED, { .family = 4, .ihl = 4 } },
		{ CK_FWD, { .family = 6, .dst = "2001:db8:3::9" } },
		{ CK_NOT_IP, { .family = 0 } },
		{ CK_FW_DROP, { .family = 4, .src = "192.0.2.66" } },
		{ CK_LOCAL, { .family = 4, .dst = "192.0.2.200" } },
		{ CK_FWD, { .family = 4, .proto = IPPROTO_ICMP } },
		{ CK_BLACKHOLE, { .family = 4, .dst = "198.51.100.200" } },
		{ CK_MALFORMED, { .family = 4, .nvlans = 2 }, 40 },
		{ CK_FWD, { .family = 4, .frame_len = 1500 } },
		{ CK_FW_DROP,
		  { .family = 4,
		    .proto = IPPROTO_TCP,
		    .dst = "203.0.113.9",
		    .dport = 22 } },
		{ CK_FWD, { .family = 4, .frag_off = 0x2000 | 100 } },
		{ CK_MALFORMED, { .family = 6 }, 10 },
		{ CK_FWD, { .family = 6, .ttl = 2 } },
		{ CK_FW_DROP,
		  { .family = 6,
		    .proto = IPPROTO_TCP,
		    .dst = "2001:db8:3::1",
		    .dport = 85,
		    .frame_len = 96 } },
		{ CK_FWD,
		  { .family = 4, .ttl = 2, .dmac = { 2, 0, 0, 0, 0xaa, 0 } } },
		{ CK_MALFORMED, { .family = 4, .frame_len = 42 }, 1 },
		{ CK_FWD, { .family = 6, .proto = IPPROTO_ICMPV6 } },
		{ CK_MALFORMED, { .family = 4, .nvlans = 1 }, 49 },
		{ CK_FWD, { .family = 4, .nvlans = 0, .dst = "203.0.113.200" } },
	};
	__u64 n[CK_FWD + 1] = {}, total = ARRAY_SIZE(mix), fw_in, l3_in, l2_in;
	struct fx_out out;
	struct xnf_stats st;
	__u8 buf[PKT_MAX];
	struct fx f;
	size_t i;
	int fused, len;

	for (i = 0; i < total; i++)
		n[mix[i].kind]++;
	if (!fx_open(&f))
		return;
	if (!chain_tables(&f))
		goto out;
	for (fused = 0; fused < 2; fused++) {
		const char *what = fused ? "fused" : "tail-called";

		if (!fx_chain(&f, "firewall,l3fwd,l2fwd", fused, false) ||
		    !fx_stats_reset(&f))
			goto out;
		for (i = 0; i < total; i++) {
			len = pkt_build(buf, sizeof(buf), &mix[i].s);
			if (!ASSERT_GE(len - mix[i].cut, ETH_HLEN, "build") ||
			    !ASSERT_OK(fx_run(&f, buf, len - mix[i].cut, &out),
				       "run"))
				goto out;
		}
		if (!fx_stats(&f, &st) || !fx_stats_consistent(&st, what))
			goto out;
		/* What reached each NF: the firewall sees all but the
		 * malformed, l3fwd what the firewall let through but what is
		 * addressed to the router (fw_input kernel: the firewall
		 * passed it to the kernel), l2fwd what l3fwd forwarded. */
		fw_in = total - n[CK_MALFORMED];
		l3_in = fw_in - n[CK_FW_DROP] - n[CK_LOCAL];
		l2_in = n[CK_FWD];
		ASSERT_EQ(st.nf[XNF_NF_ENTRY].in, total, what);
		row_is(&st, XNF_NF_ENTRY, total,
		       n[CK_NO_ROUTE] + n[CK_TTL] + n[CK_VLAN] + n[CK_NOT_IP] +
			       n[CK_LOCAL],
		       n[CK_MALFORMED] + n[CK_FW_DROP] + n[CK_BLACKHOLE],
		       n[CK_FWD], what);
		row_is(&st, XNF_NF_FIREWALL, fw_in, l3_in + n[CK_LOCAL],
		       n[CK_FW_DROP], 0, what);
		row_is(&st, XNF_NF_L3FWD, l3_in,
		       n[CK_NO_ROUTE] + n[CK_TTL] + n[CK_VLAN] + n[CK_NOT_IP],
		       n[CK_BLACKHOLE], n[CK_FWD], what);
		row_is(&st, XNF_NF_L2FWD, l2_in, 0, 0, l2_in, what);
		row_is(&st, XNF_NF_XSK, 0, 0, 0, 0, what);
		ASSERT_EQ(st.drop[XNF_R_MALFORMED], n[CK_MALFORMED], what);
		ASSERT_EQ(st.drop[XNF_R_FW_DENY], n[CK_FW_DROP], what);
		ASSERT_EQ(st.drop[XNF_R_BLACKHOLE], n[CK_BLACKHOLE], what);
		ASSERT_EQ(st.pass[XNF_R_NO_ROUTE], n[CK_NO_ROUTE], what);
		ASSERT_EQ(st.pass[XNF_R_TTL], n[CK_TTL], what);
		ASSERT_EQ(st.pass[XNF_R_VLAN], n[CK_VLAN], what);
		ASSERT_EQ(st.pass[XNF_R_NOT_IP], n[CK_NOT_IP], what);
		ASSERT_EQ(st.pass[XNF_R_LOCAL], n[CK_LOCAL], what);
		if (xnf_test_failed)
			fx_dump(&st);
	}
out:
	fx_close(&f);
}

/* ---- missed tail calls ---- */

static bool slot_del(struct fx *f, __u32 slot)
{
	return ASSERT_OK(bpf_map_delete_elem(xnf_chain_array_fd(f->chain), &slot) ?
				 -errno :
				 0,
			 "empty the slot");
}

static bool slot_restore(struct fx *f, __u32 slot)
{
	int fd = xnf_chain_slot_fd(f->chain, slot);

	return ASSERT_GE(fd, 0, "slot fd") &&
	       ASSERT_OK(bpf_map_update_elem(xnf_chain_array_fd(f->chain),
					     &slot, &fd, BPF_ANY) ?
				 -errno :
				 0,
			 "refill the slot");
}

/* Runs @frame once with fresh counters. */
static bool run1(struct fx *f, const __u8 *frame, int len, struct fx_out *out,
		 struct xnf_stats *st, const char *what)
{
	return fx_stats_reset(f) && ASSERT_OK(fx_run(f, frame, len, out), what) &&
	       fx_stats(f, st) && fx_stats_consistent(st, what) &&
	       ASSERT_EQ(st->nf[XNF_NF_ENTRY].in, 1, what);
}

TEST(chain_tail_miss)
{
	struct pkt_spec s = { .family = 4 };
	static __u8 buf[PKT_MAX], want[PKT_MAX];
	static struct fx_out out;
	struct xnf_stats st;
	const char *what;
	struct fx f;
	int len, i;

	len = pkt_build(buf, sizeof(buf), &s);
	if (!ASSERT_GE(len, 0, "build") || !fx_open(&f))
		return;
	if (!chain_tables(&f))
		goto out;
	routed4(&f, buf, len, 1, want);

	/* The firewall is in the chain: an empty slot drops. */
	what = "firewall,l3fwd,l2fwd without slot 1";
	if (!fx_chain(&f, "firewall,l3fwd,l2fwd", false, false) ||
	    !slot_del(&f, 1) || !run1(&f, buf, len, &out, &st, what))
		goto out;
	ASSERT_EQ(out.ret, XDP_DROP, what);
	ASSERT_EQ(st.drop[XNF_R_TAIL_CALL], 1, what);
	ASSERT_EQ(st.tail_miss[1], 1, what);
	for (i = 0; i < XNF_CHAIN_MAX; i++)
		if (i != 1)
			ASSERT_EQ(st.tail_miss[i], 0, what);
	row_is(&st, XNF_NF_FIREWALL, 1, 1, 0, 0, what);
	row_is(&st, XNF_NF_L3FWD, 0, 0, 0, 0, what);
	row_is(&st, XNF_NF_L2FWD, 0, 0, 0, 0, what);
	ASSERT_MEM(out.data, buf, len, what);

	/* Refilled, the same chain forwards again. */
	what = "firewall,l3fwd,l2fwd with slot 1 refilled";
	if (!slot_restore(&f, 1) || !run1(&f, buf, len, &out, &st, what))
		goto out;
	ASSERT_EQ(out.ret, XDP_REDIRECT, what);
	ASSERT_EQ(st.tail_miss[1], 0, what);
	row_is(&st, XNF_NF_L2FWD, 1, 0, 0, 1, what);
	ASSERT_MEM(out.data, want, len, what);

	what = "firewall,l3fwd,l2fwd without slot 0";
	if (!slot_del(&f, 0) || !run1(&f, buf, len, &out, &st, what))
		goto out;
	ASSERT_EQ(out.ret, XDP_DROP, what);
	ASSERT_EQ(st.drop[XNF_R_TAIL_CALL], 1, what);
	ASSERT_EQ(st.tail_miss[0], 1, what);
	row_is(&st, XNF_NF_FIREWALL, 0, 0, 0, 0, what);
	ASSERT_MEM(out.data, buf, len, what);

	/* The last slot: l3fwd has routed the packet, the chain still
	 * fails closed. */
	what = "firewall,l3fwd,l2fwd without slot 2";
	if (!slot_restore(&f, 0) || !slot_del(&f, 2) ||
	    !run1(&f, buf, len, &out, &st, what))
		goto out;
	ASSERT_EQ(out.ret, XDP_DROP, what);
	ASSERT_EQ(st.drop[XNF_R_TAIL_CALL], 1, what);
	ASSERT_EQ(st.tail_miss[2], 1, what);
	row_is(&st, XNF_NF_L3FWD, 1, 0, 0, 1, what);
	row_is(&st, XNF_NF_L2FWD, 0, 0, 0, 0, what);

	/* No firewall: the verdict so far is carried out. */
	what = "l3fwd,l2fwd without slot 1";
	if (!fx_chain(&f, "l3fwd,l2fwd", false, false) || !slot_del(&f, 1) ||
	    !run1(&f, buf, len, &out, &st, what))
		goto out;
	ASSERT_EQ(out.ret, XDP_REDIRECT, what);
	ASSERT_EQ(st.nf[XNF_NF_ENTRY].redirect, 1, what);
	ASSERT_EQ(st.tail_miss[1], 1, what);
	row_is(&st, XNF_NF_L3FWD, 1, 0, 0, 1, what);
	row_is(&st, XNF_NF_L2FWD, 0, 0, 0, 0, what);
	ASSERT_EQ(ip4(out.data)->ttl, 63, what);
	ASSERT_TRUE(pkt_ipv4_csum_ok(out.data, out.len), what);
	ASSERT_MEM(out.data, want, len, what);

	what = "l3fwd without slot 0";
	if (!fx_chain(&f, "l3fwd", false, false) || !slot_del(&f, 0) ||
	    !run1(&f, buf, len, &out, &st, what))
		goto out;
	ASSERT_EQ(out.ret, XDP_PASS, what);
	ASSERT_EQ(st.pass[XNF_R_NONE], 1, what);
	ASSERT_EQ(st.tail_miss[0], 1, what);
	row_is(&st, XNF_NF_L3FWD, 0, 0, 0, 0, what);
	ASSERT_MEM(out.data, buf, len, what);
	if (xnf_test_failed)
		fx_dump(&st);
out:
	fx_close(&f);
}

/* ---- the order is data ---- */

TEST(chain_order)
{
	struct pkt_spec s = { .family = 4 };
	static __u8 buf[PKT_MAX], want[PKT_MAX];
	static struct fx_out out;
	struct xnf_stats st;
	char what[96];
	struct fx f;
	int len, fused;

	if (!fx_open(&f))
		return;
	if (!chain_tables(&f))
		goto out;
	for (fused = 0; fused < 2; fused++) {
		const char *mode = fused ? "fused" : "tail-called";

		/* A frame to the router's own MAC, which is in no FDB, with
		 * l2 misses dropped. l3fwd first: it picks the egress port
		 * and l2fwd keeps it. l2fwd first: the miss drops the frame
		 * before l3fwd sees it. */
		memcpy(s.dmac, f.mac[0], 6);
		len = pkt_build(buf, sizeof(buf), &s);
		routed4(&f, buf, len, 1, want);
		if (!fx_set_cfg(&f, XNF_ACT_PASS, XNF_ACT_PASS, XNF_ACT_PASS,
				XNF_ACT_DROP))
			goto out;
		snprintf(what, sizeof(what), "l3fwd,l2fwd %s, l2 miss drop",
			 mode);
		if (!fx_chain(&f, "l3fwd,l2fwd", fused, false) ||
		    !run1(&f, buf, len, &out, &st, what))
			goto out;
		ASSERT_EQ(out.ret, XDP_REDIRECT, what);
		row_is(&st, XNF_NF_L3FWD, 1, 0, 0, 1, what);
		row_is(&st, XNF_NF_L2FWD, 1, 0, 0, 1, what);
		ASSERT_MEM(out.data, want, len, what);

		snprintf(what, sizeof(what), "l2fwd,l3fwd %s, l2 miss drop",
			 mode);
		if (!fx_chain(&f, "l2fwd,l3fwd", fused, false) ||
		    !run1(&f, buf, len, &out, &st, what))
			goto out;
		ASSERT_EQ(out.ret, XDP_DROP, what);
		ASSERT_EQ(st.drop[XNF_R_L2_MISS], 1, what);
		row_is(&st, XNF_NF_L2FWD, 1, 0, 1, 0, what);
		row_is(&st, XNF_NF_L3FWD, 0, 0, 0, 0, what);
		ASSERT_MEM(out.data, buf, len, what);

		/* A frame whose destination MAC the FDB places behind the
		 * ingress port: l2fwd first drops it as a hairpin, l3fwd
		 * first routes it (the MAC l2fwd then sees is the next
		 * hop's). */
		memcpy(s.dmac, mac_h, 6);
		len = pkt_build(buf, sizeof(buf), &s);
		routed4(&f, buf, len, 1, want);
		if (!fx_set_cfg(&f, XNF_ACT_PASS, XNF_ACT_PASS, XNF_ACT_PASS,
				XNF_ACT_FLOOD))
			goto out;
		snprintf(what, sizeof(what), "l2fwd,l3fwd %s, hairpin", mode);
		if (!run1(&f, buf, len, &out, &st, what))
			goto out;
		ASSERT_EQ(out.ret, XDP_DROP, what);
		ASSERT_EQ(st.drop[XNF_R_HAIRPIN], 1, what);
		row_is(&st, XNF_NF_L3FWD, 0, 0, 0, 0, what);
		ASSERT_MEM(out.data, buf, len, what);

		snprintf(what, sizeof(what), "l3fwd,l2fwd %s, hairpin", mode);
		if (!fx_chain(&f, "l3fwd,l2fwd", fused, false) ||
		    !run1(&f, buf, len, &out, &st, what))
			goto out;
		ASSERT_EQ(out.ret, XDP_REDIRECT, what);
		row_is(&st, XNF_NF_L2FWD, 1, 0, 0, 1, what);
		ASSERT_MEM(out.data, want, len, what);
		memset(s.dmac, 0, 6);
	}
	if (xnf_test_failed)
		fx_dump(&st);
out:
	fx_close(&f);
}

/* ---- xsk without a socket ---- */

TEST(chain_xsk_fallback)
{
	static const char *const texts[] = { "firewall,xsk",
					     "l2fwd,firewall,xsk" };
	struct pkt_spec s = { .family = 4, .dmac = { 2, 0, 0, 0, 0xaa, 1 } };
	struct pkt_spec deny = { .family = 4, .dport = 5353 };
	static __u8 buf[PKT_MAX], bad[PKT_MAX];
	static struct fx_out out;
	struct xnf_config cfg;
	struct xnf_stats st;
	int len, blen, fused;
	char what[96];
	size_t t;
	struct fx f;

	len = pkt_build(buf, sizeof(buf), &s);
	blen = pkt_build(bad, sizeof(bad), &deny);
	if (!fx_open(&f))
		return;
	if (!chain_tables(&f))
		goto out;
	for (t = 0; t < ARRAY_SIZE(texts); t++) {
		for (fused = 0; fused < 2; fused++) {
			const char *mode = fused ? "fused" : "tail-called";

			if (!fx_chain(&f, texts[t], fused, false) ||
			    !ASSERT_OK(xnf_cfg_read(f.dp, &cfg), "read cfg"))
				goto out;
			/* The default fallback: to the kernel. */
			ASSERT_EQ(cfg.xsk_fallback, XNF_ACT_PASS,
				  "default fallback");
			snprintf(what, sizeof(what), "%s %s, fallback pass",
				 texts[t], mode);
			if (!run1(&f, buf, len, &out, &st, what))
				goto out;
			ASSERT_EQ(out.ret, XDP_PASS, what);
			ASSERT_EQ(st.pass[XNF_R_XSK], 1, what);
			row_is(&st, XNF_NF_XSK, 1, 0, 0, 1, what);
			ASSERT_MEM(out.data, buf, len, what);

			/* Denied by the firewall: xsk never sees it. */
			snprintf(what, sizeof(what), "%s %s, denied", texts[t],
				 mode);
			if (!run1(&f, bad, blen, &out, &st, what))
				goto out;
			ASSERT_EQ(out.ret, XDP_DROP, what);
			ASSERT_EQ(st.drop[XNF_R_FW_DENY], 1, what);
			row_is(&st, XNF_NF_XSK, 0, 0, 0, 0, what);

			cfg.xsk_fallback = XNF_ACT_DROP;
			if (!ASSERT_OK(xnf_cfg_write(f.dp, &cfg), "write cfg"))
				goto out;
			snprintf(what, sizeof(what), "%s %s, fallback drop",
				 texts[t], mode);
			if (!run1(&f, buf, len, &out, &st, what))
				goto out;
			ASSERT_EQ(out.ret, XDP_DROP, what);
			ASSERT_EQ(st.drop[XNF_R_XSK], 1, what);
			row_is(&st, XNF_NF_XSK, 1, 0, 0, 1, what);
			cfg.xsk_fallback = XNF_ACT_PASS;
			if (!ASSERT_OK(xnf_cfg_write(f.dp, &cfg), "write cfg"))
				goto out;
		}
	}
	if (xnf_test_failed)
		fx_dump(&st);
out:
	fx_close(&f);
}

/* ---- what the loader refuses ---- */

TEST(chain_parse_refusals)
{
	static const char *const bad[] = {
		"bogus",
		"firewall,bogus",
		"firewall,firewall",
		"l3fwd,l2fwd,l3fwd",
		"",
		",",
		"entry",
		"firewall,entry",
	};
	struct xnf_chain_spec spec;
	struct xnf_chain *c = NULL;
	char text[64], err[256];
	struct fx f;
	size_t i;

	/* Each refusal says what is wrong, in the caller's buffer. */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		ASSERT_EQ(xnf_chain_parse(bad[i], &spec, err, sizeof(err)),
			  -EINVAL, bad[i]);
		ASSERT_NEQ(err[0], '\0', bad[i]);
	}

	if (!ASSERT_OK(xnf_chain_parse("firewall,l3fwd,l2fwd,xsk", &spec, err,
				       sizeof(err)),
		       err))
		return;
	ASSERT_EQ(spec.len, 4, "len");
	ASSERT_EQ(spec.nf[0], XNF_NF_FIREWALL, "nf 0");
	ASSERT_EQ(spec.nf[1], XNF_NF_L3FWD, "nf 1");
	ASSERT_EQ(spec.nf[2], XNF_NF_L2FWD, "nf 2");
	ASSERT_EQ(spec.nf[3], XNF_NF_XSK, "nf 3");
	ASSERT_OK(xnf_chain_format(&spec, text, sizeof(text)), "format");
	ASSERT_TRUE(!strcmp(text, "firewall,l3fwd,l2fwd,xsk"), text);

	if (!fx_open(&f))
		return;
	/* XNF_FUSED_MAX NFs fuse; one more cannot (a chain that long
	 * repeats an NF, so only a hand-made spec has it). */
	spec.fused = true;
	if (ASSERT_OK(xnf_chain_load(f.dp, "ut0", &spec, &c, err, sizeof(err)),
		      "fuse 4"))
		xnf_chain_free(c);
	c = NULL;
	spec.nf[spec.len++] = XNF_NF_FIREWALL;
	ASSERT_EQ(spec.len, XNF_FUSED_MAX + 1, "len");
	err[0] = '\0';
	ASSERT_EQ(xnf_chain_load(f.dp, "ut0", &spec, &c, err, sizeof(err)),
		  -EINVAL, "fuse 5");
	ASSERT_TRUE(c == NULL, "nothing loaded");
	ASSERT_NEQ(err[0], '\0', "fuse 5: why");
	/* Hand-made specs the parser would never produce. */
	spec = (struct xnf_chain_spec){ .len = 0 };
	ASSERT_EQ(xnf_chain_load(f.dp, "ut0", &spec, &c, NULL, 0), -EINVAL,
		  "empty spec");
	spec = (struct xnf_chain_spec){ .len = 1, .nf = { XNF_NF_ENTRY } };
	ASSERT_EQ(xnf_chain_load(f.dp, "ut0", &spec, &c, NULL, 0), -EINVAL,
		  "entry as NF");
	spec = (struct xnf_chain_spec){ .len = 1, .nf = { __XNF_NF_MAX } };
	err[0] = '\0';
	ASSERT_EQ(xnf_chain_load(f.dp, "ut0", &spec, &c, err, sizeof(err)),
		  -EINVAL, "NF id too big");
	ASSERT_NEQ(err[0], '\0', "NF id too big: why");
	fx_close(&f);
}

/* ---- the programs the verifier accepted ---- */

/* The kernel's BPF_COMPLEXITY_LIMIT_INSNS: a program whose verification
 * takes more steps is refused with E2BIG. */
#define VERIFIER_LIMIT 1000000

/* A sanity bound, a fifth of the kernel's limit of one million: the
 * firewall's rule search is the largest part (~100,000, since the verifier
 * walks each of its up to 192 loop iterations). */
#define INSN_BOUND 200000

static __u32 verified_insns(int fd, const char *what)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!ASSERT_GE(fd, 0, what) ||
	    !ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0, what))
		return 0;
	ASSERT_GE(info.xlated_prog_len, 8, what);
	if (xnf_test_verbose)
		fprintf(stderr, "    %s: %u instructions verified, %u xlated\n",
			what, info.verified_insns, info.xlated_prog_len / 8);
	return info.verified_insns;
}

/*
 * Each NF program's xnf_next_slot is a constant in .rodata, so the
 * verifier records a constant key for its bpf_tail_call() and the JIT
 * emits a direct jump, patched when the slot changes, instead of the
 * run-time lookup in the prog array. Checking that from user space needs
 * the JIT image; by hand:
 *
 *   bpftool prog show name xnf_l3fwd         # its id
 *   bpftool prog dump jited id ID            # x86: the tail call is a
 *                                            # patched `jmp` (a `nop` while
 *                                            # the slot is empty), not the
 *                                            # bounds check and load of the
 *                                            # array's ptrs[] of an indirect
 *                                            # tail call
 *   bpftool prog dump xlated id ID           # `call bpf_tail_call#12`
 *                                            # either way
 *
 * Here: every program of a tail-called chain was verified in a sane
 * number of steps (the verifier walks every path; a few thousand per NF
 * is normal, and a blow-up there eats into the 1M limit the fused program,
 * which inlines them all, must stay under).
 */
TEST(chain_insn_count)
{
	static const char *const texts[] = {
		"firewall,l3fwd,l2fwd,xsk",
		"xsk,l2fwd,l3fwd,firewall",
	};
	char what[96];
	struct fx f;
	size_t t;
	__u32 i;
	int fib;

	if (!fx_open(&f))
		return;
	for (t = 0; t < ARRAY_SIZE(texts); t++) {
		for (fib = 0; fib < 2; fib++) {
			if (!fx_chain(&f, texts[t], false, fib))
				continue;
			snprintf(what, sizeof(what), "%s%s: entry", texts[t],
				 fib ? " fib" : "");
			ASSERT_LE(verified_insns(xnf_chain_prog_fd(f.chain), what),
				  INSN_BOUND, what);
			for (i = 0; i < 4; i++) {
				snprintf(what, sizeof(what), "%s%s: slot %u",
					 texts[t], fib ? " fib" : "", i);
				ASSERT_LE(verified_insns(xnf_chain_slot_fd(f.chain,
									   i),
							 what),
					  INSN_BOUND, what);
			}
		}
	}
	fx_close(&f);
}

/* A fused chain of up to XNF_FUSED_MAX NFs, each once, is a valid
 * request in any order: every order of four of the NFs must pass the
 * verifier.
 * The cost differs a lot between orders (an NF after others is verified
 * once per state they leave), so all are tried; the l3fwd mode alternates
 * between orders (a load that hits the limit takes seconds). */
TEST(chain_fused_all_orders)
{
	static const char *const names[] = { "firewall", "l3fwd", "l2fwd",
					     "xsk", "conntrack" };
	const int nn = sizeof(names) / sizeof(names[0]);
	__u32 worst = 0, n;
	char text[64], what[96], worst_text[96] = "";
	struct xnf_chain_spec spec;
	int a, b, c, d, fib = 0;
	struct fx f;

	if (!fx_open(&f))
		return;
	for (a = 0; a < nn; a++)
		for (b = 0; b < nn; b++)
			for (c = 0; c < nn; c++)
				for (d = 0; d < nn; d++) {
					if (a == b || a == c || a == d ||
					    b == c || b == d || c == d)
						continue;
					snprintf(text, sizeof(text),
						 "%s,%s,%s,%s", names[a],
						 names[b], names[c], names[d]);
					fib = !fib;
					snprintf(what, sizeof(what), "%s fused%s",
						 text, fib ? " fib" : "");
					xnf_chain_free(f.chain);
					f.chain = NULL;
					if (!ASSERT_OK(xnf_chain_parse(text, &spec,
								       NULL, 0),
						       what))
						continue;
					spec.fused = true;
					spec.l3_fib = fib;
					if (!ASSERT_OK(xnf_chain_load(f.dp, "ut0",
								      &spec,
								      &f.chain,
								      NULL, 0),
						       what))
						continue;
					ASSERT_EQ(xnf_chain_array_fd(f.chain),
						  -1, what);
					ASSERT_EQ(xnf_chain_slot_fd(f.chain, 0),
						  -EINVAL, what);
					n = verified_insns(xnf_chain_prog_fd(
								   f.chain),
							   what);
					ASSERT_LE(n, VERIFIER_LIMIT, what);
					if (n > worst) {
						worst = n;
						snprintf(worst_text,
							 sizeof(worst_text),
							 "%s", what);
					}
				}
	if (xnf_test_verbose)
		fprintf(stderr,
			"    most expensive: %s, %u instructions verified\n",
			worst_text, worst);
	fx_close(&f);
}

/* ---- xsk keeps the control plane's frames out of AF_XDP ---- */

TEST(chain_xsk_control_frames_stay_in_the_kernel)
{
	struct pkt_spec arp = { .family = 0 };
	struct pkt_spec bcast = { .family = 4,
				  .dmac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct pkt_spec mcast6 = { .family = 6,
				   .dmac = { 0x33, 0x33, 0, 0, 0, 1 } };
	struct pkt_spec ns = { .family = 6, .proto = IPPROTO_ICMPV6 };
	struct pkt_spec echo6 = { .family = 6, .proto = IPPROTO_ICMPV6 };
	struct pkt_spec udp = { .family = 4 };
	const struct {
		struct pkt_spec *s;
		__u8 icmp6_type;
		bool to_xsk;
		const char *what;
	} c[] = {
		{ &arp, 0, false, "ARP" },
		{ &bcast, 0, false, "IPv4 to the broadcast MAC" },
		{ &mcast6, 0, false, "IPv6 to a multicast MAC" },
		{ &ns, 135, false, "neighbour solicitation, unicast" },
		{ &ns, 136, false, "neighbour advertisement, unicast" },
		{ &echo6, 128, true, "ICMPv6 echo request" },
		{ &udp, 0, true, "unicast UDP" },
	};
	static __u8 buf[PKT_MAX];
	static struct fx_out out;
	struct xnf_stats st;
	char what[96];
	int len, fused;
	size_t i;
	struct fx f;

	if (!fx_open(&f))
		return;
	if (!chain_tables(&f))
		goto out;
	for (fused = 0; fused < 2; fused++) {
		if (!fx_chain(&f, "xsk", fused, false))
			goto out;
		for (i = 0; i < ARRAY_SIZE(c); i++) {
			len = pkt_build(buf, sizeof(buf), c[i].s);
			if (c[i].icmp6_type)
				buf[pkt_l3_off(buf) + 40] = c[i].icmp6_type;
			snprintf(what, sizeof(what), "%s (%s)", c[i].what,
				 fused ? "fused" : "tail-called");
			if (!run1(&f, buf, len, &out, &st, what))
				goto out;
			/* No socket is bound, and the fallback is pass: what
			 * went for the socket is counted under xsk_no_socket,
			 * what never did is a plain pass. */
			ASSERT_EQ(out.ret, XDP_PASS, what);
			ASSERT_EQ(st.pass[XNF_R_XSK], c[i].to_xsk ? 1 : 0, what);
			ASSERT_EQ(st.pass[XNF_R_NONE], c[i].to_xsk ? 0 : 1, what);
		}
	}
	if (xnf_test_failed)
		fx_dump(&st);
out:
	fx_close(&f);
}
