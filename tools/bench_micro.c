// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_micro.c - `make bench-micro`: nanoseconds per packet, measured with
 * BPF_PROG_TEST_RUN, of
 *   - each NF alone and the papers' 1-, 2- and 3-NF chains (10 firewall
 *     rules, 10 routes, 10 FDB entries), tail-called and fused, plus l3fwd
 *     in fib mode (bpf_fib_lookup on the sandbox's kernel routes) and
 *     l3fwd on a multipath route (4 next hops, the flow hash and the
 *     group's bucket);
 *   - the firewall alone with 10, 1,000 and 10,000 rules, for a packet that
 *     matches the last rule and one that matches no rule;
 *   - l3fwd's receive checks alone (bpf/rx.bpf.h: IPv4 header checksum,
 *     martian addresses), for a 20- and a 60-byte IPv4 header and IPv6;
 *   - the userspace NFs of the AF_XDP workers (userspace/unf.h) on vectors
 *     of 64 frames, on the same tables, net of copying and parsing them;
 *   - how late the paced traffic generator (bpf/gen.bpf.c) sends its live
 *     frames (a timing the unit tests must not assert on);
 *   - the stateful firewall (-S alone): conntrack,firewall with the classic
 *     policy for an established flow (UDP, and the ACK of a TCP
 *     connection) and for a new flow every packet, conntrack alone, the
 *     4-NF chain, against the stateless 10-rule firewall and the 3-NF
 *     chain, checked on the connection table's counters;
 *   - NAT (-N alone): an established connection translated (masquerade,
 *     snat), both directions, through conntrack,nat,firewall,l3fwd against
 *     the same connection untranslated through conntrack,firewall,l3fwd
 *     (and through the chain with nat), every timed packet checked to
 *     leave with the translated addresses and right checksums;
 *   - the trace (-T alone): the 3-NF chain with a trace armed that
 *     matches nothing against the same chain with none;
 *   - the targets of issue 38 (-G alone): the 3-NF chain's and l3fwd fib
 *     mode's rows, then each target with a bootstrap interval and a
 *     verdict (met, not met, undecided);
 *   - the traffic mixes (-M alone): the 3-NF chain, l3fwd, the firewall
 *     and the stateful chain conntrack,nat,firewall,l3fwd (masquerade)
 *     under one flow, uniform over 65,536 flows and a Zipf mix (s = 1.0)
 *     over 1,000,000 flows, the flow cache on and off, with the cache's
 *     hit rate from its counters and the share of packets that made a
 *     connection;
 * then the figures the project targets: the cost of a tail-called hop
 * over the fused form, how the firewall scales with its rule count, and
 * (printed with the stateful group) an established flow through the
 * stateful policy over the stateless firewall.
 *
 * It is a benchmark, not a test: timings never fail it. It exits non-zero
 * only when something could not be set up, or when a packet does not take
 * the path its row claims to measure (a benchmark of the wrong path is
 * worse than none). That is checked once by running the program under test
 * alone on the packet (verdict, rewritten bytes, the hit counter of the
 * firewall rule), and again around every timed run from the counters:
 * every timed packet entered the chain and left with the expected action.
 *
 * How a figure is taken. bpf/bench.bpf.c restores the frame's first 64
 * bytes and tail-calls the program under test, so that every repeat sees
 * the same packet (l3fwd decrements the TTL in place). The same harness
 * tail-calling a bare XDP_DROP program is the baseline: test_run's own
 * loop, the rewrite and one tail call; net = measured - baseline.
 *
 * Figures that are compared are timed together: a group (tail-called and
 * fused form of a chain; all six firewall rows) is timed in rounds, each
 * round one baseline run and then one run of every member, and every
 * comparison is made within a round and then the median taken over the
 * rounds. On a shared VM the speed of the CPU moves by a quarter for
 * seconds at a time (neighbours, other jobs); within a round it hits all
 * members alike. The firewall sizes can be timed together because each
 * has its own xnf instance (tables pinned under their own root).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xnf.h"
#include "ct.h"
#include "nat.h"
#include "stats.h"
#include "pkt.h"
#include "sandbox.h"
#include "unf.h"
#include "traffic.h"
#include "bench.skel.h"
#include "fibfwd.skel.h"
#include "gen.skel.h"

#define BM_ROOT		   "/sys/fs/bpf/xnf-bm" /* + rule count: one per instance */
#define BM_PREFIX	   "bm"
#define BM_PORTS	   3
#define BM_DEV		   "bm0" /* every packet enters here */
#define BM_FRAME	   64	 /* bytes the harness restores */
#define BM_SEARCH	   4096	 /* candidate packets per search */
#define BM_SEARCH_SHADOWED 256	 /* ... per rule before the last one */
#define BM_MAX_RUNS	   99
#define BM_HOP_TARGET	   5.0 /* ns per tail-called hop */
#define BM_FW_TARGET	   4.0 /* 10,000 rules / 10 rules */
#define BM_CT_TARGET	   1.2 /* established flow, stateful / stateless */

/* Firewall sizes; the first is also the chains' rule set. */
static const __u32 bm_fw_sizes[] = { 10, 1000, 10000 };
#define BM_FW_SIZES (sizeof(bm_fw_sizes) / sizeof(bm_fw_sizes[0]))

struct bm_opts {
	__u32 repeat;
	__u32 runs;
	__u32 seed;
	int cpu;
	bool chains_only; /* -C: the NF and chain rows, nothing after */
	bool ct_only;	  /* -S: the conntrack group, nothing else */
	bool nat_only;	  /* -N: the NAT group, nothing else */
	bool trace_only;  /* -T: the trace group, nothing else */
	bool mix_only;	  /* -M: the traffic mixes, nothing else */
	bool targets;	  /* -G: the issue's targets, their rows only */
	const char *only; /* -o: the chain rows with this label alone */
	bool hit_only;	  /* -H: of the chain rows, the cache-hit forms */
};

/* A rule set as installed: xnf_fw_generate() minus catch-alls. */
struct bm_rules {
	__u32 n;
	__u32 dropped;	       /* catch-alls left out */
	struct xnf_fw_rule *r; /* [n], rule i at slot i */
};

struct bm_frame {
	__u8 data[128];
	__u32 len;
	__u32 iif; /* ingress port (an index of bm.ifindex[]): 0, bm0, but
		    * for the replies of the NAT group, which come in on bm1 */
	char desc[160];
};

/* What a row expects of the program under test. */
struct bm_expect {
	int action;	  /* XDP_* */
	int hit_slot;	  /* firewall slot hit, -1 none, -2 no check */
	const __u8 *dmac; /* rewritten destination MAC, or NULL */
	bool ttl_dec;	  /* TTL 64 -> 63 */
	/* The connection table (xnf_ct_stats), per packet: when @ct, a
	 * live entry found (established) or one created (a new flow). */
	bool ct;
	__u8 ct_found, ct_created;
	/* ... and up to how many lookups a packet may make (0: 1; 2: a
	 * reply of a translated connection, found through its alias). */
	__u8 ct_lookups_max;
	/* A traffic mix (-M) instead: each packet found its connection or
	 * made one (the mix decides which); ports not checked by out_tuple
	 * (they come from the mix's table). */
	bool ct_mix;
	/* The NAT group: the IPv4 addresses and UDP ports (host order) the
	 * packet must leave with, translated or not, with valid IPv4 and
	 * UDP checksums; checked on the packet run alone and on the last
	 * packet of every timed run. */
	bool out_tuple;
	__u8 out_src[4], out_dst[4];
	__u16 out_sport, out_dport;
};

/* One xnf instance: its own tables under its own pin root. */
struct bm_inst {
	char root[64];
	struct xnf_dp *dp;
	struct bm_rules rules;
	int ct_fd; /* its xnf_ct, or -1 */
};

/* A member of a group: one chain on one instance, one packet. */
/* The flow cache (xnf_config.flow_cache) as a member of a group runs. */
enum bm_fc {
	BM_FC_HIT,  /* on, one flow: every lookup but the first hits */
	BM_FC_OFF,  /* off: the uncached path */
	BM_FC_MISS, /* on, a new flow every run (xnf_bench_vary): all miss */
	BM_FC_OFF_MANY, /* off, a new flow every run: what the misses add to */
	__BM_FC_MAX
};

static const char *const bm_fc_names[__BM_FC_MAX] = { "", " off", " miss",
						      " off*" };

static bool bm_fc_on(enum bm_fc fc)
{
	return fc == BM_FC_HIT || fc == BM_FC_MISS;
}

static bool bm_fc_many(enum bm_fc fc)
{
	return fc == BM_FC_MISS || fc == BM_FC_OFF_MANY;
}

struct bm_var {
	char what[96]; /* for messages */
	/* A program that is no xnf chain (the minimal fib forwarder), when
	 * c is NULL: timed and checked on its verdict and bytes alone. */
	int prog_fd;
	bool timed; /* in its group's rounds (-H leaves some out) */
	enum bm_fc fc;
	__u32 vary; /* offset of the UDP source port, for BM_FC_MISS */
	bool wide;  /* ... and the destination port (xnf_bench_vary_wide) */
	struct bm_inst *in;
	struct xnf_chain *c;
	const struct bm_frame *f;
	struct bm_expect e;
	/* -M: the mix's xnf_bench_flows (the harness writes each packet's
	 * ports from it), or NULL */
	const __u32 *mix;
	/* Over the timed runs: the cache's lookups, the connections made */
	__u64 fc_hit, fc_miss;
	__u64 ct_created, ct_packets;
	double meas[BM_MAX_RUNS]; /* ns per packet, per round */
	double net[BM_MAX_RUNS];  /* meas - the round's baseline */
	double base_med, meas_med, net_med, spread;
};

struct bm {
	struct bm_opts o;
	struct bm_inst inst[BM_FW_SIZES];
	struct bm_inst ct[2];	  /* the stateful policy: established, new */
	struct bm_inst nat[3];	  /* the NAT group's: plain, masquerade, snat */
	struct bm_inst trace;	  /* the trace group's: a trace armed */
	struct bm_inst mix_ct[2]; /* -M's stateful chain's: mixes, flood */
	struct xnf_bench *h;
	struct xnf_fibfwd *fibfwd; /* the minimal fib forwarder's row */
	int bench_fd;		   /* the harness */
	int drop_fd;		   /* the baseline's target */
	int ncpus;
	__u32 ifindex[BM_PORTS];
	__u8 mac[BM_PORTS][6];
};

/* xorshift64*: a fixed seed gives the same packets on every machine. */
struct bm_rng {
	__u64 s;
};

static __u64 bm_next(struct bm_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static void bm_rng_init(struct bm_rng *r, __u64 seed)
{
	r->s = (seed * 0x9e3779b97f4a7c15ULL) ^ 0xd1b54a32d192ed03ULL;
	if (!r->s)
		r->s = 1;
}

/* Uniform in lo..hi, inclusive. */
static __u32 bm_range(struct bm_rng *r, __u32 lo, __u32 hi)
{
	return lo + (__u32)((bm_next(r) >> 32) % ((__u64)hi - lo + 1));
}

/* ---- the instance: ports, routes, FDB, kernel FIB ---- */

/*
 * The 10 routes, in xnf's table and (for fib mode) in the kernel's. Every
 * chain packet goes to 198.51.100.1, covered by six nested prefixes (/0,
 * /24 to /28), the longest one /28. The next hop of route i has MAC
 * 02:00:00:01:i:01; the FDB maps each such MAC to the route's port, so
 * that l2fwd after l3fwd finds the port the route chose.
 */
static const struct bm_route {
	const char *addr;
	__u32 plen;
	__u32 port;
} bm_routes[] = {
	{ "192.0.2.0", 24, 0 },	   { "198.51.100.0", 24, 1 },
	{ "203.0.113.0", 24, 2 },  { "10.0.0.0", 8, 1 },
	{ "172.16.0.0", 12, 2 },   { "0.0.0.0", 0, 2 },
	{ "198.51.100.0", 25, 1 }, { "198.51.100.0", 26, 1 },
	{ "198.51.100.0", 27, 1 }, { "198.51.100.0", 28, 1 },
};
#define BM_ROUTES    (sizeof(bm_routes) / sizeof(bm_routes[0]))
#define BM_DST	     "198.51.100.1"
#define BM_DST_ROUTE 9 /* its longest match */
/* A multipath route over BM_MP_PATHS next hops with one MAC (that of
 * BM_DST_ROUTE's next hop, so the rewrite is checked as for the others)
 * and different gateways, so that they are distinct nexthop objects. */
#define BM_MP_PREFIX "203.0.113.128"
#define BM_MP_PLEN   25
#define BM_MP_DST    "203.0.113.129"
#define BM_MP_PATHS  4

/* The same table in the sandbox's kernel, for bpf_fib_lookup: three
 * connected /24s (from the addresses), three via gateways, four nested
 * prefixes; permanent neighbours, so the lookup never sees NO_NEIGH. */
static const char *const bm_kernel_cmds[] = {
	"ip addr add 192.0.2.254/24 dev bm0",
	"ip addr add 198.51.100.254/24 dev bm1",
	"ip addr add 203.0.113.254/24 dev bm2",
	"ip route add 10.0.0.0/8 via 198.51.100.2 dev bm1",
	"ip route add 172.16.0.0/12 via 203.0.113.2 dev bm2",
	"ip route add default via 203.0.113.2 dev bm2",
	"ip route add 198.51.100.0/25 dev bm1",
	"ip route add 198.51.100.0/26 dev bm1",
	"ip route add 198.51.100.0/27 dev bm1",
	"ip route add 198.51.100.0/28 dev bm1",
	"ip neigh replace 198.51.100.2 lladdr 02:00:00:01:03:01 dev bm1 nud permanent",
	"ip neigh replace 203.0.113.2 lladdr 02:00:00:01:04:01 dev bm2 nud permanent",
	/* The same MAC as xnf's route 9, so both modes rewrite alike. */
	"ip neigh replace 198.51.100.1 lladdr 02:00:00:01:09:01 dev bm1 nud permanent",
};

static void bm_nh_mac(__u32 route, __u8 mac[6])
{
	const __u8 m[6] = { 0x02, 0, 0, 0x01, (__u8)route, 0x01 };

	memcpy(mac, m, 6);
}

static int bm_sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc) {
		fprintf(stderr, "Error: '%s' failed (status %d)\n", cmd, rc);
		return -EIO;
	}
	return 0;
}

static int bm_write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f || fputs(val, f) < 0)
		err = -errno;
	if (f && fclose(f) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "Error: cannot write %s: %s\n", path,
			strerror(-err));
	return err;
}

static int bm_mp_route(struct bm *b, struct bm_inst *in)
{
	struct xnf_route paths[BM_MP_PATHS] = {};
	__u8 addr[4];
	__u32 i;
	int err;

	for (i = 0; i < BM_MP_PATHS; i++) {
		paths[i].type = XNF_RT_UNICAST;
		paths[i].ifindex = b->ifindex[2];
		bm_nh_mac(BM_DST_ROUTE, paths[i].dmac);
		memcpy(paths[i].smac, b->mac[2], 6);
		paths[i].gw_family = XNF_AF_INET;
		paths[i].gw[0] = 203;
		paths[i].gw[1] = 0;
		paths[i].gw[2] = 113;
		paths[i].gw[3] = 130 + i;
	}
	inet_pton(AF_INET, BM_MP_PREFIX, addr);
	err = xnf_route_set_multipath(in->dp, XNF_AF_INET, addr, BM_MP_PLEN,
				      paths, BM_MP_PATHS, BPF_ANY);
	if (err)
		fprintf(stderr, "Error: cannot add route %s/%u: %s\n",
			BM_MP_PREFIX, BM_MP_PLEN, strerror(-err));
	return err;
}

static int bm_inst_open(struct bm *b, struct bm_inst *in, const char *name)
{
	char msg[512];
	__u32 i;
	int err;

	in->ct_fd = -1;
	snprintf(in->root, sizeof(in->root), BM_ROOT "-%s", name);
	xnf_dp_destroy(in->root);
	err = xnf_dp_open(in->root, true, &in->dp, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "Error: cannot create the instance at %s: %s\n",
			in->root, err == -ENOENT ? strerror(-err) : msg);
		return err;
	}
	for (i = 0; i < BM_PORTS; i++) {
		err = xnf_port_add(in->dp, b->ifindex[i]);
		if (err) {
			fprintf(stderr,
				"Error: cannot add port " BM_PREFIX "%u: %s\n",
				i, strerror(-err));
			return err;
		}
	}
	for (i = 0; i < BM_ROUTES; i++) {
		const struct bm_route *r = &bm_routes[i];
		struct xnf_route rt = {
			.type = XNF_RT_UNICAST,
			.ifindex = b->ifindex[r->port],
		};
		__u8 addr[4];

		inet_pton(AF_INET, r->addr, addr);
		bm_nh_mac(i, rt.dmac);
		memcpy(rt.smac, b->mac[r->port], 6);
		err = xnf_route_set(in->dp, XNF_AF_INET, addr, r->plen, &rt,
				    BPF_ANY);
		if (!err)
			err = xnf_fdb_set(in->dp, rt.dmac, rt.ifindex);
		if (err) {
			fprintf(stderr, "Error: cannot add route %s/%u: %s\n",
				r->addr, r->plen, strerror(-err));
			return err;
		}
	}
	return bm_mp_route(b, in);
}

static void bm_inst_close(struct bm_inst *in)
{
	if (in->ct_fd > 0)
		close(in->ct_fd);
	if (in->dp) {
		xnf_dp_close(in->dp);
		xnf_dp_destroy(in->root);
	}
	free(in->rules.r);
	memset(in, 0, sizeof(*in));
}

/* The ports' indexes and MACs, and the kernel side for fib mode. */
static int bm_host_setup(struct bm *b)
{
	char name[IFNAMSIZ];
	__u32 i;
	int err;

	for (i = 0; i < BM_PORTS; i++) {
		struct ifreq ifr = {};
		int s;

		snprintf(name, sizeof(name), BM_PREFIX "%u", i);
		b->ifindex[i] = if_nametoindex(name);
		s = socket(AF_INET, SOCK_DGRAM, 0);
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		if (!b->ifindex[i] || s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr)) {
			err = -errno;
			fprintf(stderr, "Error: cannot read port %s: %s\n",
				name, strerror(-err));
			if (s >= 0)
				close(s);
			return err;
		}
		close(s);
		memcpy(b->mac[i], ifr.ifr_hwaddr.sa_data, 6);
	}
	for (i = 0; i < sizeof(bm_kernel_cmds) / sizeof(bm_kernel_cmds[0]); i++)
		if ((err = bm_sh(bm_kernel_cmds[i])))
			return err;
	/* bpf_fib_lookup() answers FWD_DISABLED unless the ingress device
	 * forwards; "all" sets every device of this namespace. */
	return bm_write_file("/proc/sys/net/ipv4/conf/all/forwarding", "1");
}

/* ---- firewall rule sets ---- */

/*
 * xnf_fw_generate() draws every field independently, so about one rule in
 * 400 has no address, no port and at most a protocol: a catch-all. In a
 * real ACL that rule is the last one (xnf's default policy plays its role);
 * in the middle of a set it makes every later rule of its protocol
 * unreachable and a packet that matches no rule impossible, i.e. it would
 * make both firewall rows measure something else. They are left out: the
 * set is the first @n rules of the generator's sequence that are not
 * catch-alls, renumbered to slot i, prio (i + 1) * 10. The generator's
 * rule i depends only on the seed and i, so the sets are nested.
 */
static bool bm_catch_all(const struct xnf_fw_rule *r)
{
	return !(r->flags & (XNF_FW_F_SRC | XNF_FW_F_DST | XNF_FW_F_SPORT |
			     XNF_FW_F_DPORT));
}

static int bm_rules_make(struct bm_rules *rs, __u32 n, __u32 seed)
{
	__u32 want = n + n / 16 + 16, i, k;
	struct xnf_fw_rule *gen;
	int err;

	memset(rs, 0, sizeof(*rs));
	rs->r = calloc(n, sizeof(*rs->r));
	if (!rs->r)
		return -ENOMEM;
	for (;;) {
		gen = calloc(want, sizeof(*gen));
		if (!gen)
			return -ENOMEM;
		err = xnf_fw_generate(gen, want, seed);
		if (err) {
			free(gen);
			fprintf(stderr, "Error: xnf_fw_generate(%u rules): %s\n",
				want, strerror(-err));
			return err;
		}
		rs->dropped = 0;
		for (i = 0, k = 0; i < want && k < n; i++) {
			if (bm_catch_all(&gen[i])) {
				rs->dropped++;
				continue;
			}
			rs->r[k] = gen[i];
			rs->r[k].prio = (k + 1) * 10;
			k++;
		}
		free(gen);
		if (k == n)
			break;
		want *= 2;
	}
	rs->n = n;
	return 0;
}

/* Applies @in->rules in slots 0..n-1 (slots past the set unused),
 * default policy @def. */
static int bm_rules_install(struct bm_inst *in, __u32 def)
{
	const struct bm_rules *rs = &in->rules;
	struct xnf_fw_set *set = xnf_fw_set_new();
	int err = 0;
	__u32 i;

	if (!set)
		return -ENOMEM;
	err = xnf_fw_set_policy(set, def);
	for (i = 0; i < rs->n && !err; i++)
		err = xnf_fw_set_replace(set, i, &rs->r[i]);
	err = err ?: xnf_fw_apply(in->dp, set, NULL, 0);
	xnf_fw_set_free(set);
	if (err)
		fprintf(stderr, "Error: cannot commit %u firewall rules: %s\n",
			rs->n, strerror(-err));
	return err;
}

/* Packets that hit slot @slot, summed over CPUs (xnf_fw_hits is per CPU);
 * with slot -1, of all the instance's rules. */
static int bm_hits(struct bm *b, struct bm_inst *in, int slot, __u64 *packets)
{
	__u32 i, from = slot < 0 ? 0 : slot,
		 to = slot < 0 ? in->rules.n : from + 1;
	struct xnf_fw_hit hit;
	int err;

	*packets = 0;
	for (i = from; i < to; i++) {
		err = xnf_fw_hit_read(in->dp, i, &hit);
		if (err)
			return err;
		*packets += hit.packets;
	}
	return 0;
}

/* ---- packets ---- */

static void bm_fw_pkt_str(const struct xnf_fw_pkt *p, char *buf, size_t len)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	int af = p->family == XNF_AF_INET ? AF_INET : AF_INET6;
	const char *proto = p->proto == IPPROTO_UDP  ? "udp" :
			    p->proto == IPPROTO_TCP  ? "tcp" :
			    p->proto == IPPROTO_ICMP ? "icmp" :
						       "icmp6";

	inet_ntop(af, p->src, src, sizeof(src));
	inet_ntop(af, p->dst, dst, sizeof(dst));
	if (!p->ports)
		snprintf(buf, len, "%s%s %s > %s", proto,
			 af == AF_INET6 && p->proto != IPPROTO_ICMPV6 ? "6" : "",
			 src, dst);
	else if (af == AF_INET)
		snprintf(buf, len, "%s %s:%u > %s:%u", proto, src, p->sport,
			 dst, p->dport);
	else
		snprintf(buf, len, "%s6 [%s]:%u > [%s]:%u", proto, src,
			 p->sport, dst, p->dport);
}

/* Builds the frame carrying @p: 64 bytes, or the headers if they are
 * longer (TCP over IPv6 is 74). */
static int bm_frame_build(struct bm_frame *f, const struct xnf_fw_pkt *p,
			  const __u8 dmac[6])
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], tuple[128];
	int af = p->family == XNF_AF_INET ? AF_INET : AF_INET6;
	struct pkt_spec s = {
		.family = p->family,
		.proto = p->proto,
		.src = src,
		.dst = dst,
		.sport = p->sport,
		.dport = p->dport,
		.smac = { 0x02, 0, 0, 0, 0x00, 0x02 },
	};
	__u32 hdrs;
	int len;

	inet_ntop(af, p->src, src, sizeof(src));
	inet_ntop(af, p->dst, dst, sizeof(dst));
	hdrs = ETH_HLEN + (af == AF_INET ? 20 : 40) +
	       (p->proto == IPPROTO_TCP ? 20 : 8);
	s.frame_len = hdrs > BM_FRAME ? hdrs : BM_FRAME;
	memcpy(s.dmac, dmac, 6);
	len = pkt_build(f->data, sizeof(f->data), &s);
	if (len < 0)
		return -EINVAL;
	f->len = len;
	f->iif = 0;
	bm_fw_pkt_str(p, tuple, sizeof(tuple));
	snprintf(f->desc, sizeof(f->desc), "%s, %u B", tuple, f->len);
	return 0;
}

/* A random address in pfx/plen; for plen 0 a unicast one (IPv4 1/8 to
 * 223/8 but 127/8, IPv6 2001::/16). */
static void bm_addr_in(struct bm_rng *r, __u8 family, const __u8 *pfx,
		       __u32 plen, __u8 out[16])
{
	__u32 bits = family == XNF_AF_INET ? 32 : 128, bit;

	memset(out, 0, 16);
	for (bit = 0; bit < bits; bit += 32) {
		__u32 w = (__u32)(bm_next(r) >> 32);

		memcpy(out + bit / 8, &w, 4);
	}
	if (family == XNF_AF_INET && !plen) {
		out[0] = bm_range(r, 1, 223);
		if (out[0] == 127)
			out[0] = 128;
	}
	if (family == XNF_AF_INET6 && !plen) {
		out[0] = 0x20; /* 2001::/16, global unicast */
		out[1] = 0x01;
	}
	for (bit = 0; bit < plen; bit++) {
		__u8 m = 0x80 >> (bit % 8);

		out[bit / 8] = (out[bit / 8] & ~m) | (pfx[bit / 8] & m);
	}
}

/* A port in lo..hi that pkt_build can write (it reads 0 as "default"). */
static bool bm_port_in(struct bm_rng *r, __u16 lo, __u16 hi, __u16 *port)
{
	if (!lo)
		lo = 1;
	if (lo > hi)
		return false;
	*port = bm_range(r, lo, hi);
	return true;
}

/* A random packet inside every field @rule matches; family-less rules get
 * IPv4 three times in four. */
static bool bm_pick_in_rule(struct bm_rng *r, const struct xnf_fw_rule *rule,
			    struct xnf_fw_pkt *p)
{
	bool src = rule->flags & XNF_FW_F_SRC, dst = rule->flags & XNF_FW_F_DST;

	memset(p, 0, sizeof(*p));
	p->proto = rule->flags & XNF_FW_F_PROTO ? rule->proto : IPPROTO_UDP;
	if (rule->family)
		p->family = rule->family;
	else if (p->proto == IPPROTO_ICMP)
		p->family = XNF_AF_INET;
	else if (p->proto == IPPROTO_ICMPV6)
		p->family = XNF_AF_INET6;
	else
		p->family = bm_range(r, 0, 3) ? XNF_AF_INET : XNF_AF_INET6;
	if ((p->proto == IPPROTO_ICMP && p->family != XNF_AF_INET) ||
	    (p->proto == IPPROTO_ICMPV6 && p->family != XNF_AF_INET6) ||
	    (p->proto != IPPROTO_UDP && p->proto != IPPROTO_TCP &&
	     p->proto != IPPROTO_ICMP && p->proto != IPPROTO_ICMPV6))
		return false; /* a frame pkt_build cannot make */
	bm_addr_in(r, p->family, rule->src, src ? rule->src_len : 0, p->src);
	bm_addr_in(r, p->family, rule->dst, dst ? rule->dst_len : 0, p->dst);
	if (p->proto != IPPROTO_UDP && p->proto != IPPROTO_TCP)
		return true;
	p->ports = true;
	if (!bm_port_in(r, rule->flags & XNF_FW_F_SPORT ? rule->sport_lo : 1,
			rule->flags & XNF_FW_F_SPORT ? rule->sport_hi : 65535,
			&p->sport))
		return false;
	return bm_port_in(r, rule->flags & XNF_FW_F_DPORT ? rule->dport_lo : 1,
			  rule->flags & XNF_FW_F_DPORT ? rule->dport_hi : 65535,
			  &p->dport);
}

static const struct bm_rules *bm_sort_rs;

static int bm_prio_cmp(const void *a, const void *b)
{
	__u32 pa = bm_sort_rs->r[*(const __u32 *)a].prio;
	__u32 pb = bm_sort_rs->r[*(const __u32 *)b].prio;

	return pa < pb ? -1 : pa > pb;
}

/* @a matches every packet @b matches (so @b is dead behind @a). Errs on
 * the side of "no": it only short-cuts the search below. */
static bool bm_contains(const struct xnf_fw_rule *a, const struct xnf_fw_rule *b)
{
	static const __u16 addr = XNF_FW_F_SRC | XNF_FW_F_DST;
	__u32 bit;

	if ((a->flags & addr) && (!(b->flags & addr) || a->family != b->family))
		return false;
	if ((a->flags & XNF_FW_F_SRC) &&
	    (!(b->flags & XNF_FW_F_SRC) || b->src_len < a->src_len))
		return false;
	if ((a->flags & XNF_FW_F_DST) &&
	    (!(b->flags & XNF_FW_F_DST) || b->dst_len < a->dst_len))
		return false;
	for (bit = 0; bit < 128; bit++) {
		__u8 m = 0x80 >> (bit % 8);

		if ((a->flags & XNF_FW_F_SRC) && bit < a->src_len &&
		    ((a->src[bit / 8] ^ b->src[bit / 8]) & m))
			return false;
		if ((a->flags & XNF_FW_F_DST) && bit < a->dst_len &&
		    ((a->dst[bit / 8] ^ b->dst[bit / 8]) & m))
			return false;
	}
	if ((a->flags & XNF_FW_F_PROTO) &&
	    (!(b->flags & XNF_FW_F_PROTO) || a->proto != b->proto))
		return false;
	/* A port match needs a packet with ports: only a b limited to TCP
	 * or UDP guarantees one. */
	if ((a->flags & (XNF_FW_F_SPORT | XNF_FW_F_DPORT)) &&
	    (!(b->flags & XNF_FW_F_PROTO) ||
	     (b->proto != IPPROTO_TCP && b->proto != IPPROTO_UDP)))
		return false;
	if ((a->flags & XNF_FW_F_SPORT) &&
	    (b->flags & XNF_FW_F_SPORT ?
		     b->sport_lo < a->sport_lo || b->sport_hi > a->sport_hi :
		     a->sport_lo > 0 || a->sport_hi < 65535))
		return false;
	if ((a->flags & XNF_FW_F_DPORT) &&
	    (b->flags & XNF_FW_F_DPORT ?
		     b->dport_lo < a->dport_lo || b->dport_hi > a->dport_hi :
		     a->dport_lo > 0 || a->dport_hi < 65535))
		return false;
	return true;
}

/*
 * The packet that matches the last rule in priority order and no earlier
 * one: random packets inside that rule's fields until the reference
 * classifier (xnf_fw_linear) answers with its slot, BM_SEARCH tries. When
 * earlier rules cover the whole rule (it is shadowed), the rule before it
 * is tried, and so on: a rule that one earlier rule contains is skipped at
 * once, the others get BM_SEARCH_SHADOWED tries (a reachable rule is
 * almost always reached by the first few). Returns the slot of the rule
 * found; *@rank is its position in priority order.
 */
static int bm_find_last(const struct bm_rules *rs, __u32 seed,
			struct xnf_fw_pkt *out, __u32 *rank)
{
	struct xnf_fw_pkt p;
	struct bm_rng rng;
	__u32 *order, k, i, t, tries;
	int slot = -ENOENT;

	order = calloc(rs->n, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (k = 0; k < rs->n; k++)
		order[k] = k;
	bm_sort_rs = rs;
	qsort(order, rs->n, sizeof(*order), bm_prio_cmp);
	for (k = rs->n; k-- > 0 && slot < 0;) {
		const struct xnf_fw_rule *rule = &rs->r[order[k]];

		for (i = 0; i < k; i++)
			if (bm_contains(&rs->r[order[i]], rule))
				break;
		if (i < k)
			continue;
		bm_rng_init(&rng, (__u64)seed << 32 | k);
		tries = k == rs->n - 1 ? BM_SEARCH : BM_SEARCH_SHADOWED;
		for (t = 0; t < tries; t++) {
			if (!bm_pick_in_rule(&rng, rule, &p))
				continue;
			if (xnf_fw_linear(rs->r, rs->n, &p) == (int)order[k]) {
				*out = p;
				*rank = k;
				slot = order[k];
				break;
			}
		}
	}
	free(order);
	return slot;
}

/* Kinds of packet bm_find_none() tries, in order. */
static const struct bm_kind {
	__u8 family, proto;
	const char *name;
} bm_kinds[] = {
	{ XNF_AF_INET, IPPROTO_UDP, "udp" },
	{ XNF_AF_INET, IPPROTO_TCP, "tcp" },
	{ XNF_AF_INET, IPPROTO_ICMP, "icmp" },
	{ XNF_AF_INET6, IPPROTO_UDP, "udp6" },
	{ XNF_AF_INET6, IPPROTO_TCP, "tcp6" },
	{ XNF_AF_INET6, IPPROTO_ICMPV6, "icmp6" },
};
#define BM_KINDS (sizeof(bm_kinds) / sizeof(bm_kinds[0]))

/* A packet that matches no rule: BM_SEARCH random UDP/IPv4 packets first,
 * then TCP, ICMP, and the same over IPv6. Returns the index of the kind in
 * bm_kinds[]. */
static int bm_find_none(const struct bm_rules *rs, __u32 seed,
			struct xnf_fw_pkt *out)
{
	struct xnf_fw_rule any = {};
	struct bm_rng rng;
	__u32 k, t;

	bm_rng_init(&rng, (__u64)seed << 32 | 0xffffffffu);
	for (k = 0; k < BM_KINDS; k++) {
		any.family = bm_kinds[k].family;
		any.proto = bm_kinds[k].proto;
		any.flags = XNF_FW_F_PROTO;
		for (t = 0; t < BM_SEARCH; t++) {
			if (bm_pick_in_rule(&rng, &any, out) &&
			    xnf_fw_linear(rs->r, rs->n, out) < 0)
				return k;
		}
	}
	return -ENOENT;
}

/* The chains' packet: UDP from 192.0.2.0/24 to BM_DST (routed by the /28),
 * ports chosen so that none of the chains' firewall rules matches and the
 * firewall allows it by its default policy. */
static int bm_find_chain_pkt(const struct bm_rules *rs, __u32 seed,
			     struct xnf_fw_pkt *out)
{
	struct xnf_fw_rule want = {
		.flags = XNF_FW_F_SRC | XNF_FW_F_DST | XNF_FW_F_PROTO,
		.family = XNF_AF_INET,
		.proto = IPPROTO_UDP,
		.src_len = 24,
		.dst_len = 32,
		.src = { 192, 0, 2, 0 },
		.dst = { 198, 51, 100, 1 },
	};
	struct bm_rng rng;
	__u32 t;

	bm_rng_init(&rng, (__u64)seed << 32 | 0xfffffffeu);
	for (t = 0; t < BM_SEARCH; t++) {
		if (bm_pick_in_rule(&rng, &want, out) &&
		    xnf_fw_linear(rs->r, rs->n, out) < 0)
			return 0;
	}
	return -ENOENT;
}

/* ---- timing ---- */

/*
 * One test_run of @prog_fd over @f, @repeat times: the return code (of the
 * last repeat) in *ret, ns per packet in *ns (may be NULL). bpf_test_run()
 * (net/bpf/test_run.c) times the loop alone, leaves out the time it spends
 * in cond_resched() and reports total / repeat in whole ns. The wall clock
 * around the syscall is no substitute: every XDP test_run also re-points
 * the kernel's XDP dispatcher at the program and back, which can wait for
 * RCU (milliseconds).
 */
static int bm_run(struct bm *b, int prog_fd, const struct bm_frame *f,
		  __u32 repeat, void *out, __u32 *out_len, int *ret, double *ns)
{
	struct xdp_md ctx = { .ingress_ifindex = b->ifindex[f->iif],
			      .data_end = f->len };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data,
		    .data_size_in = f->len, .data_out = out,
		    .data_size_out = out_len ? *out_len : 0, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = repeat, );

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	*ret = opts.retval;
	if (out_len)
		*out_len = opts.data_size_out;
	if (ns)
		*ns = opts.duration;
	return 0;
}

static int bm_dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of v[0..n), which is left alone. */
static double bm_median(const double *v, __u32 n)
{
	double s[BM_MAX_RUNS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), bm_dbl_cmp);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static int bm_set_target(struct bm *b, int prog_fd)
{
	int fd = bpf_map__fd(b->h->maps.xnf_bench_prog);
	__u32 zero = 0;

	return bpf_map_update_elem(fd, &zero, &prog_fd, BPF_ANY) ? -errno : 0;
}

static const char *bm_action_name(int action)
{
	switch (action) {
	case XDP_ABORTED:
		return "aborted";
	case XDP_DROP:
		return "drop";
	case XDP_PASS:
		return "pass";
	case XDP_TX:
		return "tx";
	case XDP_REDIRECT:
		return "redirect";
	default:
		return "?";
	}
}

/* ---- the members of a group ---- */

static int bm_var_load(struct bm *b, struct bm_var *v, struct bm_inst *in,
		       const char *chain, bool fused, bool fib,
		       const struct bm_frame *f, const struct bm_expect *e)
{
	struct xnf_chain_spec spec;
	char msg[512];
	int err;

	memset(v, 0, sizeof(*v));
	snprintf(v->what, sizeof(v->what), "chain %s%s (%s, %u rules)", chain,
		 fib ? " in fib mode" : "", fused ? "fused" : "tail-called",
		 in->rules.n);
	v->in = in;
	v->f = f;
	v->e = *e;
	err = xnf_chain_parse(chain, &spec, msg, sizeof(msg));
	if (!err) {
		spec.fused = fused;
		spec.l3_fib = fib;
		err = xnf_chain_load(in->dp, BM_DEV, &spec, &v->c, msg,
				     sizeof(msg));
	}
	if (err)
		fprintf(stderr, "Error: cannot load %s: %s\n", v->what, msg);
	return err;
}

/* The program @v times: its chain's first, or the program of its own. */
static int bm_prog_fd(const struct bm_var *v)
{
	return v->c ? xnf_chain_prog_fd(v->c) : v->prog_fd;
}

/*
 * The minimal bpf_fib_lookup forwarder (bpf/fibfwd.bpf.c, the test bed's
 * "fibfwd") as a member of a group: what l3fwd in fib mode is measured
 * against, on the same kernel routes and neighbours, egress @egress in its
 * devmap. It keeps no counters, so its timed runs are checked on the last
 * packet alone (verdict, MAC, TTL): the harness restores the same frame
 * before every run and the program has no state, so the last packet took
 * the path every one took.
 */
static int bm_fibfwd_load(struct bm *b, struct bm_var *v, __u32 egress,
			  const struct bm_frame *f, const struct bm_expect *e)
{
	__u32 port = b->ifindex[egress];
	int err = 0;

	memset(v, 0, sizeof(*v));
	snprintf(v->what, sizeof(v->what), "the minimal fib forwarder");
	v->f = f;
	v->e = *e;
	if (!b->fibfwd) {
		b->fibfwd = xnf_fibfwd__open();
		/* The harness and every program in its prog array must
		 * agree on xdp_has_frags; fibfwd is plain "xdp" for the
		 * test bed's attach, so it is loaded frags-aware here (it
		 * reads the linear part only, which is all there is in a
		 * test run of 64 bytes). */
		if (!b->fibfwd ||
		    bpf_program__set_flags(b->fibfwd->progs.xnf_fibfwd,
					   BPF_F_XDP_HAS_FRAGS) ||
		    xnf_fibfwd__load(b->fibfwd))
			err = -errno ?: -EINVAL;
		if (!err &&
		    bpf_map_update_elem(bpf_map__fd(b->fibfwd->maps.tx_ports),
					&port, &port, BPF_ANY))
			err = -errno;
		if (err) {
			fprintf(stderr,
				"Error: cannot load %s (bpf/fibfwd.bpf.c): %s\n",
				v->what, strerror(-err));
			xnf_fibfwd__destroy(b->fibfwd);
			b->fibfwd = NULL;
			return err;
		}
	}
	v->prog_fd = bpf_program__fd(b->fibfwd->progs.xnf_fibfwd);
	return 0;
}

static void bm_var_free(struct bm_var *v)
{
	xnf_chain_free(v->c);
	v->c = NULL;
}

/* xnf_ct_stats of @in, summed over CPUs. */
static int bm_ct_stats(struct bm_inst *in, struct xnf_ct_counters *sum)
{
	char err[256] = "";
	int ret = xnf_ct_counters_read(in->dp, sum, err, sizeof(err));

	if (ret)
		fprintf(stderr, "Error: %s\n", err);
	return ret;
}

/* The connection of @f's IPv4 packet in xnf_ct's canonical form
 * (xnf_ct.h: the lower endpoint is "a"). */
static void bm_ct_key(const struct bm_frame *f, struct xnf_ct_key *k)
{
	const __u8 *ip = f->data + pkt_l3_off(f->data),
		   *l4 = ip + (ip[0] & 0xf) * 4;
	__u16 sport, dport;
	int cmp = memcmp(ip + 12, ip + 16, 4);

	memcpy(&sport, l4, 2);
	memcpy(&dport, l4 + 2, 2);
	if (!cmp)
		cmp = ntohs(sport) < ntohs(dport) ? -1 :
						    ntohs(sport) > ntohs(dport);
	memset(k, 0, sizeof(*k));
	k->family = XNF_AF_INET;
	k->proto = ip[9];
	memcpy(k->a_addr, ip + (cmp <= 0 ? 12 : 16), 4);
	memcpy(k->b_addr, ip + (cmp <= 0 ? 16 : 12), 4);
	k->a_port = cmp <= 0 ? sport : dport;
	k->b_port = cmp <= 0 ? dport : sport;
}

/* The connection table did for each of @n packets what @v claims: found a
 * live entry (the packet is established or, unreplied, new) or created
 * one (a new flow, accepted), nothing else; no packet invalid. */
static int bm_ct_check(const struct bm_var *v, __u64 n,
		       const struct xnf_ct_counters *c0,
		       const struct xnf_ct_counters *c1)
{
	__u64 found = c1->found - c0->found, created = c1->created - c0->created,
	      searched = c1->searched - c0->searched,
	      invalid = c1->invalid - c0->invalid, k = searched / n;

	if (!v->e.ct)
		return 0;
	/* A mix: a packet that finds its connection searches once, one that
	 * makes one searches for it and, translated, for a free tuple; the
	 * timed run's verdicts and rule hits say the rest. */
	if (v->e.ct_mix && invalid == 0 && searched >= n && created <= n &&
	    searched <= n * (v->e.ct_lookups_max ?: 1))
		return 0;
	if (!v->e.ct_mix && searched == n * k && k >= 1 &&
	    k <= (v->e.ct_lookups_max ?: 1) && invalid == 0 &&
	    found == k * n * v->e.ct_found && created == n * v->e.ct_created)
		return 0;
	fprintf(stderr,
		"Error: %s: over %llu packets the connection table searched "
		"%llu, found %llu, created %llu, invalid %llu; the row claims "
		"every packet %s\n",
		v->what, (unsigned long long)n, (unsigned long long)searched,
		(unsigned long long)found, (unsigned long long)created,
		(unsigned long long)invalid,
		v->e.ct_mix   ? "found its connection or made one" :
		v->e.ct_found ? "found its connection" :
				"made a new one");
	return -EPROTO;
}

/* The packet @out (@len bytes) left @v's chain with the addresses and
 * ports @v expects, its checksums right: a translation really made (or
 * really not made). */
static int bm_out_check(const struct bm_var *v, const __u8 *out, __u32 len)
{
	const struct bm_expect *e = &v->e;
	__u32 l3 = pkt_l3_off(v->f->data), l4 = l3 + 20;
	char got[2][INET_ADDRSTRLEN], want[2][INET_ADDRSTRLEN];
	__u16 sport, dport;

	if (!e->out_tuple)
		return 0;
	if (len < l4 + 8) {
		fprintf(stderr, "Error: %s: the packet left with %u bytes\n",
			v->what, len);
		return -EPROTO;
	}
	memcpy(&sport, out + l4, 2);
	memcpy(&dport, out + l4 + 2, 2);
	if (!memcmp(out + l3 + 12, e->out_src, 4) &&
	    !memcmp(out + l3 + 16, e->out_dst, 4) &&
	    (e->ct_mix ||
	     (ntohs(sport) == e->out_sport && ntohs(dport) == e->out_dport)) &&
	    pkt_ipv4_csum_ok(out, len) && pkt_l4_csum_ok(out, len))
		return 0;
	inet_ntop(AF_INET, out + l3 + 12, got[0], sizeof(got[0]));
	inet_ntop(AF_INET, out + l3 + 16, got[1], sizeof(got[1]));
	inet_ntop(AF_INET, e->out_src, want[0], sizeof(want[0]));
	inet_ntop(AF_INET, e->out_dst, want[1], sizeof(want[1]));
	fprintf(stderr,
		"Error: %s: the packet left as %s:%u > %s:%u (IPv4 checksum "
		"%s, UDP checksum %s), expected %s:%u > %s:%u with both "
		"checksums right; the row would time another path\n",
		v->what, got[0], ntohs(sport), got[1], ntohs(dport),
		pkt_ipv4_csum_ok(out, len) ? "right" : "wrong",
		pkt_l4_csum_ok(out, len) ? "right" : "wrong", want[0],
		e->out_sport, want[1], e->out_dport);
	return -EPROTO;
}

/* The packet @out (@len bytes) left with the next hop's MAC and the TTL
 * decremented, when @v expects that. */
static int bm_rewrite_check(const struct bm_var *v, const __u8 *out, __u32 len)
{
	const struct bm_expect *e = &v->e;
	__u32 l3 = pkt_l3_off(v->f->data);

	if (e->dmac && (len < 6 || memcmp(out, e->dmac, 6))) {
		fprintf(stderr,
			"Error: %s: destination MAC not rewritten to the "
			"next hop's\n",
			v->what);
		return -EPROTO;
	}
	if (e->ttl_dec &&
	    (len < l3 + 9 || out[l3 + 8] != 63 || !pkt_ipv4_csum_ok(out, len))) {
		fprintf(stderr,
			"Error: %s: TTL not decremented to 63 with a "
			"valid checksum\n",
			v->what);
		return -EPROTO;
	}
	return 0;
}

/* Runs the program under test once on its own and checks that the packet
 * takes the path the row is about. */
static int bm_check(struct bm *b, struct bm_var *v)
{
	const struct bm_expect *e = &v->e;
	struct xnf_ct_counters ct0, ct1;
	__u8 out[sizeof(v->f->data)];
	__u32 out_len = sizeof(out);
	__u64 h0 = 0, h1 = 0;
	int ret, err;

	if (e->hit_slot > -2 && (err = bm_hits(b, v->in, e->hit_slot, &h0)))
		goto fail_err;
	if (e->ct && e->ct_created) {
		struct xnf_ct_key k;

		/* A new flow: an earlier member's check made its entry. */
		bm_ct_key(v->f, &k);
		bpf_map_delete_elem(v->in->ct_fd, &k);
	}
	if (e->ct && (err = bm_ct_stats(v->in, &ct0)))
		goto fail_err;
	err = bm_run(b, bm_prog_fd(v), v->f, 1, out, &out_len, &ret, NULL);
	if (err)
		goto fail_err;
	if (e->ct && (err = bm_ct_stats(v->in, &ct1)))
		goto fail_err;
	if (e->ct && (err = bm_ct_check(v, 1, &ct0, &ct1)))
		return err;
	if (ret != e->action) {
		fprintf(stderr, "Error: %s: the packet got %s, expected %s\n",
			v->what, bm_action_name(ret), bm_action_name(e->action));
		return -EPROTO;
	}
	if (e->hit_slot > -2) {
		if ((err = bm_hits(b, v->in, e->hit_slot, &h1)))
			goto fail_err;
		if (h1 - h0 != (e->hit_slot >= 0 ? 1 : 0)) {
			if (e->hit_slot >= 0)
				fprintf(stderr,
					"Error: %s: the packet did not hit "
					"firewall rule slot %d\n",
					v->what, e->hit_slot);
			else
				fprintf(stderr,
					"Error: %s: the packet hit a firewall "
					"rule, expected none\n",
					v->what);
			return -EPROTO;
		}
	}
	return bm_rewrite_check(v, out, out_len) ?: bm_out_check(v, out, out_len);
fail_err:
	fprintf(stderr, "Error: %s: %s\n", v->what, strerror(-err));
	return err;
}

/* The entry row's counter of packets that ended with @action. */
static __u64 bm_entry_count(const struct xnf_stats *st, int action)
{
	const struct xnf_nf_counters *c = &st->nf[XNF_NF_ENTRY];

	return action == XDP_REDIRECT ? c->redirect :
	       action == XDP_PASS     ? c->pass :
					c->drop;
}

/* Snapshot of what one timed run must change. */
struct bm_count {
	struct xnf_stats st;
	__u64 hits;
	struct xnf_ct_counters ct;
};

static int bm_count_read(struct bm *b, struct bm_var *v, struct bm_count *c)
{
	int err;

	memset(c, 0, sizeof(*c));
	if (!v->c)
		return 0;
	err = xnf_stats_read(xnf_chain_stats_fd(v->c), &c->st, NULL);

	if (!err && v->e.hit_slot >= 0)
		err = bm_hits(b, v->in, v->e.hit_slot, &c->hits);
	if (!err && v->e.ct)
		err = bm_ct_stats(v->in, &c->ct);
	if (err)
		fprintf(stderr, "Error: %s: cannot read the counters: %s\n",
			v->what, strerror(-err));
	return err;
}

/* One timed run of @v through the harness, checked from the counters: all
 * @repeat packets entered and ended with the expected action (and hit the
 * expected rule), so the harness timed the path the row is about and not
 * an empty slot or an exception. */
/* Puts the instance's flow cache and the harness in the state @v's
 * figure is about. Writing xnf_cfg moves the table generation, so the
 * first packet after a switch misses. */
static int bm_fc_apply(struct bm *b, struct bm_var *v)
{
	struct xnf_config cfg;
	int err = 0;

	if (v->c)
		err = xnf_cfg_read(v->in->dp, &cfg);
	if (v->c && !err && cfg.flow_cache != bm_fc_on(v->fc)) {
		cfg.flow_cache = bm_fc_on(v->fc);
		err = xnf_cfg_write(v->in->dp, &cfg);
	}
	if (err)
		fprintf(stderr, "Error: %s: cannot set the flow cache: %s\n",
			v->what, strerror(-err));
	b->h->bss->xnf_bench_vary = bm_fc_many(v->fc) ? v->vary : 0;
	b->h->bss->xnf_bench_vary_wide = bm_fc_many(v->fc) && v->wide;
	b->h->bss->xnf_bench_mix = v->mix ? v->vary : 0;
	if (v->mix)
		memcpy(b->h->data_mix->xnf_bench_flows, v->mix,
		       sizeof(b->h->data_mix->xnf_bench_flows));
	return err;
}

/* The flow cache's hits and misses, over every NF, from @c0 to @c1. */
static void bm_fc_sum(const struct bm_count *c0, const struct bm_count *c1,
		      __u64 *hit, __u64 *miss)
{
	int nf;

	*hit = *miss = 0;
	for (nf = 0; nf < __XNF_NF_MAX; nf++) {
		*hit += c1->st.fc_hit[nf] - c0->st.fc_hit[nf];
		*miss += c1->st.fc_miss[nf] - c0->st.fc_miss[nf];
	}
}

/* The flow cache did what @v's figure claims over @repeat packets: no
 * lookup when off; when every packet is a new flow, almost no hit (the
 * 65,536 source ports come round again, and a flow that had an entry to
 * itself for a whole round finds it: a few in 50,000 here; with the
 * bypass, whose probes come every 32,768 packets, a divisor of 65,536,
 * the probed flows come round to entries the bypass left alone),
 * counting bypassed packets as misses; when one flow
 * repeats, at most the first packet of each NF missed; under a mix (-M),
 * at least one lookup or bypass a packet (its hit rate is what the row
 * reports), but for a stretch of bypassed packets not yet counted. */
static int bm_fc_check(const struct bm_var *v, __u32 repeat,
		       const struct bm_count *c0, const struct bm_count *c1)
{
	__u64 hit, miss, caching = 0;
	bool ok;
	int nf;

	bm_fc_sum(c0, c1, &hit, &miss);
	for (nf = 0; nf < __XNF_NF_MAX; nf++)
		caching += !!(xnf_nf_flags(nf) & XNF_NFF_FCACHE);
	ok = !bm_fc_on(v->fc)	 ? !hit && !miss :
	     v->mix		 ? hit + miss + XNF_FC_SKIP >= repeat :
	     v->fc == BM_FC_MISS ? hit <= (hit + miss) / 100 :
				   miss <= caching;
	if (!ok)
		fprintf(stderr,
			"Error: %s: the flow cache hit %llu and missed %llu "
			"times, not what the row%s claims\n",
			v->what, (unsigned long long)hit,
			(unsigned long long)miss, bm_fc_names[v->fc]);
	return ok ? 0 : -EPROTO;
}

static int bm_timed(struct bm *b, struct bm_var *v, __u32 repeat, double *ns)
{
	__u8 out[sizeof(v->f->data)];
	__u32 out_len = sizeof(out);
	struct bm_count c0, c1;
	int ret, err;

	if ((err = bm_fc_apply(b, v)) || (err = bm_count_read(b, v, &c0)))
		return err;
	/* The template the harness restores: this member's frame. */
	memcpy(b->h->bss->xnf_bench_frame, v->f->data, BM_FRAME);
	err = bm_set_target(b, bm_prog_fd(v));
	if (!err)
		err = bm_run(b, b->bench_fd, v->f, repeat, out, &out_len, &ret,
			     ns);
	if (err) {
		fprintf(stderr, "Error: %s: test run: %s\n", v->what,
			strerror(-err));
		return err;
	}
	if ((err = bm_count_read(b, v, &c1)))
		return err;
	if (ret != v->e.action ||
	    (v->c &&
	     (c1.st.nf[XNF_NF_ENTRY].in - c0.st.nf[XNF_NF_ENTRY].in != repeat ||
	      bm_entry_count(&c1.st, v->e.action) -
			      bm_entry_count(&c0.st, v->e.action) !=
		      repeat)) ||
	    (v->e.hit_slot >= 0 && c1.hits - c0.hits != repeat)) {
		fprintf(stderr,
			"Error: %s: not every timed packet took the "
			"expected path (last one: %s, expected %s); the figure "
			"would time something else\n",
			v->what, bm_action_name(ret),
			bm_action_name(v->e.action));
		return -EPROTO;
	}
	/* The last packet's bytes: what every one of them left with (the
	 * harness restores the frame before each). */
	err = bm_ct_check(v, repeat, &c0.ct, &c1.ct)		    ?:
		      (v->c ? bm_fc_check(v, repeat, &c0, &c1) : 0) ?:
		      bm_out_check(v, out, out_len);
	/* Without counters, the last packet's bytes are the check. */
	if (!err && !v->c)
		err = bm_rewrite_check(v, out, out_len);
	if (!err && ns) {
		__u64 hit, miss;

		bm_fc_sum(&c0, &c1, &hit, &miss);
		v->fc_hit += hit;
		v->fc_miss += miss;
		v->ct_created += c1.ct.created - c0.ct.created;
		v->ct_packets += repeat;
	}
	return err;
}

/*
 * Times the @nv members of a group: each checked, warmed up, then timed in
 * rounds. A round times the baseline (the harness into XDP_DROP) and then
 * every member once, starting one member later each round so that no
 * member always runs first after the switch of the harness' target.
 */
static int bm_group(struct bm *b, struct bm_var *v, __u32 nv)
{
	__u32 warm = b->o.repeat / 10 ?: 1, r, k, i;
	double base[BM_MAX_RUNS], lo, hi;
	int ret, err;

	for (k = 0; k < nv; k++) {
		if ((err = bm_check(b, &v[k])) ||
		    (err = bm_timed(b, &v[k], warm, NULL)))
			return err;
	}
	for (r = 0; r < b->o.runs; r++) {
		b->h->bss->xnf_bench_vary = 0;
		b->h->bss->xnf_bench_vary_wide = 0;
		b->h->bss->xnf_bench_mix = 0;
		err = bm_set_target(b, b->drop_fd);
		if (!err)
			err = bm_run(b, b->bench_fd, v[0].f, b->o.repeat, NULL,
				     NULL, &ret, &base[r]);
		if (err || ret != XDP_DROP) {
			fprintf(stderr, "Error: baseline run: %s\n",
				err ? strerror(-err) :
				      "the harness did not reach XDP_DROP");
			return err ?: -EPROTO;
		}
		for (i = 0; i < nv; i++) {
			k = (r + i) % nv;
			if ((err = bm_timed(b, &v[k], b->o.repeat, &v[k].meas[r])))
				return err;
			v[k].net[r] = v[k].meas[r] - base[r];
		}
	}
	bm_set_target(b, b->drop_fd);
	b->h->bss->xnf_bench_vary = 0;
	b->h->bss->xnf_bench_vary_wide = 0;
	for (k = 0; k < nv; k++) {
		lo = hi = v[k].net[0];
		for (r = 1; r < b->o.runs; r++) {
			lo = v[k].net[r] < lo ? v[k].net[r] : lo;
			hi = v[k].net[r] > hi ? v[k].net[r] : hi;
		}
		v[k].spread = hi - lo;
		v[k].base_med = bm_median(base, b->o.runs);
		v[k].meas_med = bm_median(v[k].meas, b->o.runs);
		v[k].net_med = bm_median(v[k].net, b->o.runs);
	}
	return 0;
}

/* Median over the rounds of (a - b) / div, or of a / b with div 0. */
static double bm_paired(const struct bm *bm, const struct bm_var *a,
			const struct bm_var *b, double div)
{
	double d[BM_MAX_RUNS];
	__u32 r;

	for (r = 0; r < bm->o.runs; r++)
		d[r] = div ? (a->net[r] - b->net[r]) / div :
			     a->net[r] / b->net[r];
	return bm_median(d, bm->o.runs);
}

/* ---- the machine ---- */

struct bm_facts {
	char kernel[160];
	char cpu[128];
	char jit[32];
	char stats[32];
	char spectre[128];
	long online;
};

/* First line of @path, without its newline; "?" if unreadable. */
static void bm_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "?");
	if (f) {
		if (fgets(buf, len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
}

/* Read before entering the sandbox: net.core.bpf_jit_enable exists only
 * in the initial network namespace. */
static void bm_facts_read(struct bm_facts *m)
{
	struct utsname u;
	char line[256];
	FILE *f;

	memset(m, 0, sizeof(*m));
	if (!uname(&u))
		snprintf(m->kernel, sizeof(m->kernel), "%s %s", u.release,
			 u.machine);
	snprintf(m->cpu, sizeof(m->cpu), "unknown");
	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v || strncmp(line, "model name", 10))
			continue;
		v += 1 + strspn(v + 1, " \t");
		v[strcspn(v, "\n")] = '\0';
		snprintf(m->cpu, sizeof(m->cpu), "%s", v);
		break;
	}
	if (f)
		fclose(f);
	m->online = sysconf(_SC_NPROCESSORS_ONLN);
	bm_read_line("/proc/sys/net/core/bpf_jit_enable", m->jit, sizeof(m->jit));
	bm_read_line("/proc/sys/kernel/bpf_stats_enabled", m->stats,
		     sizeof(m->stats));
	bm_read_line("/sys/devices/system/cpu/vulnerabilities/spectre_v2",
		     m->spectre, sizeof(m->spectre));
}

/* Pins the process to @cpu, or to the highest CPU it may run on when @cpu
 * is negative: test_run runs the program on the calling CPU, and per-CPU
 * maps and caches stay warm on one CPU. */
static int bm_pin(int *cpu)
{
	cpu_set_t set;
	int i;

	if (*cpu < 0) {
		if (sched_getaffinity(0, sizeof(set), &set))
			return -errno;
		for (i = CPU_SETSIZE - 1; i >= 0 && !CPU_ISSET(i, &set); i--)
			;
		*cpu = i;
	}
	CPU_ZERO(&set);
	CPU_SET(*cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* ---- output ---- */

static void bm_var_print(const struct bm_var *v)
{
	printf("%-9s %9.1f %9.1f %9.1f %7.1f\n", bm_action_name(v->e.action),
	       v->base_med, v->meas_med, v->net_med, v->spread);
}

static const char *bm_pf(bool ok)
{
	return ok ? "PASS" : "MISS";
}

static void bm_usage(const char *prog, FILE *out)
{
	fprintf(out,
		"Usage: %s [-r REPEAT] [-n RUNS] [-c CPU] [-s SEED] [-C] [-o LABEL] [-H] [-S] [-N] [-T] [-M] [-G] [-v]\n"
		"  ns/packet of the xnf NFs, chains and firewall sizes, with\n"
		"  BPF_PROG_TEST_RUN in a private network namespace (needs root).\n"
		"  -r REPEAT  packets per timed run (default 1000000)\n"
		"  -n RUNS    rounds: timed runs per figure, median reported (default 5, max %d)\n"
		"  -c CPU     CPU to measure on (default: the highest allowed)\n"
		"  -s SEED    seed of the firewall rule sets (default 1)\n"
		"  -C         the NF and chain rows only (to compare builds)\n"
		"  -o LABEL   the chain row LABEL only (e.g. \"l3fwd (fib mode)\",\n"
		"             with the minimal fib forwarder; implies -C)\n"
		"  -H         of the chain rows, the flow cache's hit forms only\n"
		"             (tail-called and fused, one flow; implies -C)\n"
		"  -S         the stateful firewall's group only (conntrack)\n"
		"  -N         the NAT group only (an established translated flow)\n"
		"  -T         the trace group only (the 3-NF chain, a trace armed\n"
		"             that matches nothing against none)\n"
		"  -M         the traffic mixes only: the 3-NF chain, l3fwd, the\n"
		"             firewall and conntrack,nat,firewall,l3fwd (masquerade)\n"
		"             under one flow, uniform over 65,536 flows and Zipf\n"
		"             (s = 1.0) over 1,000,000, flow cache on and off, with\n"
		"             the cache's hit rate and the share of new connections\n"
		"  -G         the targets of issue 38, side by side: the 3-NF chain\n"
		"             hitting (<= 60 ns), every packet new (<= 150 ns, and\n"
		"             <= cache off), l3fwd fib mode / fibfwd (<= 1.0), each\n"
		"             with a bootstrap interval over the rounds (use many\n"
		"             rounds of short runs: -n 51 -r 100000)\n"
		"  -v         libbpf and xnf debug messages\n",
		prog, BM_MAX_RUNS);
}

static int bm_parse_u32(const char *s, __u32 min, __u32 max, __u32 *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || !*s || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* ---- the rows ---- */

struct bm_chain_row {
	const char *label;
	const char *chain;
	bool fib;
	__u32 nfs;  /* = tail calls from entry on */
	bool mp;    /* the packet to BM_MP_DST, a multipath route */
	bool timed; /* not left out by -o */
	/* tail-called and fused, each as enum bm_fc: v[2 * fc + fused];
	 * in fib mode, then the minimal fib forwarder (BM_V_FIBFWD) */
	struct bm_var v[2 * __BM_FC_MAX + 1];
};
#define BM_V_FIBFWD (2 * __BM_FC_MAX)

static struct bm_chain_row bm_chain_rows[] = {
	{ "firewall", "firewall", false, 1 },
	{ "l3fwd", "l3fwd", false, 1 },
	{ "l2fwd", "l2fwd", false, 1 },
	{ "firewall,l3fwd", "firewall,l3fwd", false, 2 },
	{ "firewall,l3fwd,l2fwd", "firewall,l3fwd,l2fwd", false, 3 },
	{ "l3fwd (fib mode)", "l3fwd", true, 1 },
	{ "l3fwd (multipath)", "l3fwd", false, 1, true },
};
#define BM_CHAIN_ROWS (sizeof(bm_chain_rows) / sizeof(bm_chain_rows[0]))
#define BM_ROW_L3FWD  1
#define BM_ROW_3NF    4
#define BM_ROW_FIB    5

/* The firewall rows of one size: slot and priority rank of the last
 * reachable rule, and the two packets. */
struct bm_fw_size {
	int slot;
	__u32 rank;
	int none_kind;		  /* index in bm_kinds[] */
	struct bm_frame frame[2]; /* last rule, no match */
};

/* The offset of the UDP source port of @f, which the miss rows vary. */
static __u32 bm_sport_off(const struct bm_frame *f)
{
	__u32 l3 = pkt_l3_off(f->data);

	return l3 + (f->data[l3] & 0xf) * 4;
}

/* The chain rows' flow cache against off, paired within the rounds. */
static void bm_fc_over_off(const struct bm *b)
{
	__u32 i;

	printf("\nFlow cache over off: median over the rounds of (net - net "
	       "with the cache off, for the same flows)\n");
	printf("  %-22s %9s %9s %9s %9s\n", "chain", "hit tail", "hit fused",
	       "miss tail", "miss fused");
	for (i = 0; i < BM_CHAIN_ROWS; i++) {
		const struct bm_chain_row *r = &bm_chain_rows[i];
		const struct bm_var *off = &r->v[2 * BM_FC_OFF];

		if (!r->timed || !off[0].timed)
			continue;
		printf("  %-22s %9.1f %9.1f %9.1f %9.1f\n", r->label,
		       bm_paired(b, &r->v[2 * BM_FC_HIT], &off[0], 1),
		       bm_paired(b, &r->v[2 * BM_FC_HIT + 1], &off[1], 1),
		       bm_paired(b, &r->v[2 * BM_FC_MISS],
				 &r->v[2 * BM_FC_OFF_MANY], 1),
		       bm_paired(b, &r->v[2 * BM_FC_MISS + 1],
				 &r->v[2 * BM_FC_OFF_MANY + 1], 1));
	}
	printf("  (hit: one flow, every packet but the first found in the "
	       "cache, against off; miss: a new flow every packet, against "
	       "off* (off, a new flow every packet))\n");
}

/* Times the members of a chain row as one group: all of them, or with -H
 * the two with the cache hitting (and the fib forwarder of fib mode). */
static int bm_chain_group(struct bm *b, struct bm_var *v, __u32 nv)
{
	struct bm_var sel[2 * __BM_FC_MAX + 1];
	__u32 map[2 * __BM_FC_MAX + 1], n = 0, j;
	int err;

	for (j = 0; j < nv && j < 2 * __BM_FC_MAX + 1; j++) {
		if (b->o.hit_only && v[j].c && v[j].fc != BM_FC_HIT)
			continue;
		map[n] = j;
		sel[n++] = v[j];
	}
	err = bm_group(b, sel, n);
	for (j = 0; j < n; j++) {
		v[map[j]] = sel[j];
		v[map[j]].timed = !err;
	}
	return err;
}

/* Each NF alone and the papers' chains, tail-called and fused, on the
 * 10-rule instance; each with the flow cache hitting, off, and missing. */
static int bm_chains(struct bm *b, const struct bm_frame *chain_frame,
		     const struct bm_frame *l2_frame,
		     const struct bm_frame *mp_frame, const __u8 nh_mac[6])
{
	struct bm_inst *in = &b->inst[0];
	__u32 i, j;
	int err = 0;

	printf("\nNFs and chains: %u firewall rules (the packet matches none), "
	       "%zu routes, %zu FDB entries\n",
	       in->rules.n, BM_ROUTES, BM_ROUTES);
	printf("  %-22s %-10s %-9s %9s %9s %9s %7s\n", "chain", "form",
	       "verdict", "baseline", "measured", "net", "spread");
	for (i = 0; i < BM_CHAIN_ROWS && !err; i++) {
		struct bm_chain_row *r = &bm_chain_rows[i];
		__u32 nv = 2 * __BM_FC_MAX + r->fib;
		bool l3 = strstr(r->chain, "l3fwd");
		struct bm_expect e = {
			.action = !strcmp(r->chain, "firewall") ? XDP_PASS :
								  XDP_REDIRECT,
			.hit_slot = strstr(r->chain, "firewall") ? -1 : -2,
			.dmac = l3 ? nh_mac : NULL,
			.ttl_dec = l3,
		};
		const struct bm_frame *f = r->mp ? mp_frame :
					   strcmp(r->chain, "l2fwd") ?
						   chain_frame :
						   l2_frame;

		if (b->o.only && strcmp(b->o.only, r->label))
			continue;
		if (b->o.targets && i != BM_ROW_3NF && i != BM_ROW_FIB)
			continue;
		r->timed = true;
		for (j = 0; j < 2 * __BM_FC_MAX && !err; j++) {
			err = bm_var_load(b, &r->v[j], in, r->chain, j % 2,
					  r->fib, f, &e);
			r->v[j].fc = j / 2;
			r->v[j].vary = bm_sport_off(f);
		}
		/* Timed in l3fwd's group, so that every round compares
		 * the two under the same conditions. */
		if (!err && r->fib)
			err = bm_fibfwd_load(b, &r->v[BM_V_FIBFWD], 1, f, &e);
		if (!err)
			err = bm_chain_group(b, r->v, nv);
		for (j = 0; j < nv; j++) {
			char form[16];

			if (!r->v[j].timed) {
				bm_var_free(&r->v[j]);
				continue;
			}

			snprintf(form, sizeof(form), "%s%s",
				 j % 2 ? "fused" : "tail", bm_fc_names[j / 2]);
			if (!err && j == BM_V_FIBFWD)
				printf("  %-22s %-10s ", "fibfwd (minimal)", "-");
			else if (!err)
				printf("  %-22s %-10s ", r->label, form);
			if (!err)
				bm_var_print(&r->v[j]);
			bm_var_free(&r->v[j]);
		}
		fflush(stdout);
	}
	if (err)
		return err;

	printf("\nTail-called over fused: median over the rounds of (tail-called "
	       "net - fused net)\n");
	printf("  %-22s %5s %11s %9s\n", "chain", "hops", "difference",
	       "per hop");
	for (i = 0; i < BM_CHAIN_ROWS; i++) {
		const struct bm_chain_row *r = &bm_chain_rows[i];

		if (!r->timed)
			continue;
		printf("  %-22s %5u %11.1f %9.1f\n", r->label, r->nfs,
		       bm_paired(b, &r->v[0], &r->v[1], 1),
		       bm_paired(b, &r->v[0], &r->v[1], r->nfs));
	}
	printf("  (hops: entry -> NF1 -> ... -> NFn, one tail call each)\n");

	if (!b->o.hit_only)
		bm_fc_over_off(b);
	for (i = 0; i < BM_CHAIN_ROWS; i++) {
		const struct bm_chain_row *r = &bm_chain_rows[i];
		const struct bm_var *ff = &r->v[BM_V_FIBFWD];

		if (!r->timed || !r->fib)
			continue;
		printf("\n%s over the minimal fib forwarder (fibfwd): median "
		       "over the rounds of the\nround's difference and "
		       "ratio of net figures\n",
		       r->label);
		printf("  %-22s %11s %9s\n", "form", "difference", "ratio");
		for (j = 0; j < 2 * BM_FC_MISS; j++) {
			char form[16];

			if (!r->v[j].timed)
				continue;
			snprintf(form, sizeof(form), "%s%s",
				 j % 2 ? "fused" : "tail", bm_fc_names[j / 2]);
			printf("  %-22s %11.1f %9.2f\n", form,
			       bm_paired(b, &r->v[j], ff, 1),
			       bm_paired(b, &r->v[j], ff, 0));
		}
	}
	return 0;
}

/* ---- the issue's targets (-G) ---- */

#define BM_BOOT	     2000  /* bootstrap resamples */
#define BM_G_HIT     60.0  /* ns: the 3-NF chain, cache hitting */
#define BM_G_NEW     150.0 /* ns: ... every packet a new flow */
#define BM_G_NEW_OFF 0.0   /* ns: ... new flow - cache off */
#define BM_G_FIB     1.0   /* l3fwd (fib mode) / fibfwd */

/* A 95% percentile bootstrap interval of the median of x[0..n): BM_BOOT
 * resamples of the rounds, drawn with a fixed xorshift seed so that the
 * interval is a function of the rounds alone. */
static void bm_boot(const double *x, __u32 n, double *lo, double *hi)
{
	static double med[BM_BOOT];
	double s[BM_MAX_RUNS];
	__u64 st = 0x9e3779b97f4a7c15ull;
	__u32 i, k;

	for (k = 0; k < BM_BOOT; k++) {
		for (i = 0; i < n; i++) {
			st ^= st << 13;
			st ^= st >> 7;
			st ^= st << 17;
			s[i] = x[st % n];
		}
		med[k] = bm_median(s, n);
	}
	qsort(med, BM_BOOT, sizeof(*med), bm_dbl_cmp);
	*lo = med[BM_BOOT * 25 / 1000];
	*hi = med[BM_BOOT * 975 / 1000 - 1];
}

/* One target "x <= @target": x per round is a's net, a - b (@op '-') or
 * a / b (@op '/'), paired within the round; its median, interval and
 * verdict: met when the whole interval is at most the target, not met
 * when it is all above, undecided when it straddles it. */
static void bm_target(const struct bm *b, const char *what,
		      const struct bm_var *x, const struct bm_var *y, char op,
		      double target)
{
	double d[BM_MAX_RUNS], lo, hi, med;
	__u32 r, n = b->o.runs;

	for (r = 0; r < n; r++)
		d[r] = op == '-' ? x->net[r] - y->net[r] :
		       op == '/' ? x->net[r] / y->net[r] :
				   x->net[r];
	med = bm_median(d, n);
	bm_boot(d, n, &lo, &hi);
	printf("  %-44s %8.2f  [%8.2f, %8.2f]  <= %-5g %s\n", what, med, lo, hi,
	       target,
	       hi <= target ? "met" :
	       lo > target  ? "not met" :
			      "undecided");
}

/* After bm_chains() with -G: the 3-NF chain's and l3fwd fib mode's rows. */
static void bm_targets(const struct bm *b)
{
	const struct bm_chain_row *c = &bm_chain_rows[BM_ROW_3NF],
				  *f = &bm_chain_rows[BM_ROW_FIB];
	static const char *const form[2] = { "tail-called", "fused" };
	char what[64];
	int j;

	printf("\nTargets of issue 38 (bench-micro), %u rounds: median over the "
	       "rounds, 95%% bootstrap\ninterval of the median (%d resamples, "
	       "fixed seed); differences and ratios paired\nwithin the round; "
	       "met: the interval is at or below the target, not met: above,\n"
	       "undecided: it straddles the target\n",
	       b->o.runs, BM_BOOT);
	printf("  %-44s %8s  %20s  %-8s %s\n", "target", "median", "interval",
	       "target", "verdict");
	for (j = 0; j < 2; j++) {
		snprintf(what, sizeof(what), "3-NF chain, cache hitting, %s ns",
			 form[j]);
		bm_target(b, what, &c->v[2 * BM_FC_HIT + j], NULL, 0, BM_G_HIT);
	}
	for (j = 0; j < 2; j++) {
		snprintf(what, sizeof(what),
			 "3-NF chain, every packet new, %s ns", form[j]);
		bm_target(b, what, &c->v[2 * BM_FC_MISS + j], NULL, 0, BM_G_NEW);
	}
	for (j = 0; j < 2; j++) {
		snprintf(what, sizeof(what), "3-NF chain, new - off*, %s ns",
			 form[j]);
		bm_target(b, what, &c->v[2 * BM_FC_MISS + j],
			  &c->v[2 * BM_FC_OFF_MANY + j], '-', BM_G_NEW_OFF);
	}
	for (j = 0; j < 2; j++) {
		snprintf(what, sizeof(what), "l3fwd (fib mode) / fibfwd, %s",
			 form[j]);
		bm_target(b, what, &f->v[2 * BM_FC_HIT + j], &f->v[BM_V_FIBFWD],
			  '/', BM_G_FIB);
	}
	printf("  (new: the cache on, a new flow every packet; off*: the cache "
	       "off, the same new flows)\n");
}

/* The firewall alone at every size, all six rows timed as one group. */
static int bm_firewall(struct bm *b, struct bm_fw_size *fw, struct bm_var *v)
{
	__u32 i, j;
	int err = 0;

	for (i = 0; i < BM_FW_SIZES && !err; i++) {
		struct bm_inst *in = &b->inst[i];

		for (j = 0; j < 2 && !err; j++) {
			struct bm_expect e = {
				.action = XDP_PASS,
				.hit_slot = j ? -1 : fw[i].slot,
			};

			if (!j && in->rules.r[fw[i].slot].action == XNF_FW_DROP)
				e.action = XDP_DROP;
			err = bm_var_load(b, &v[2 * i + j], in, "firewall",
					  false, false, &fw[i].frame[j], &e);
			/* The classifier's cost and how it scales: with
			 * the cache, every size would time its hit. */
			v[2 * i + j].fc = BM_FC_OFF;
		}
	}
	if (!err)
		err = bm_group(b, v, 2 * BM_FW_SIZES);
	for (i = 0; i < 2 * BM_FW_SIZES; i++)
		bm_var_free(&v[i]);
	if (err)
		return err;

	printf("\nFirewall alone: chain \"firewall\", tail-called, default policy allow, flow cache off\n");
	printf("  %-6s %-10s %-19s %-9s %9s %9s %9s %7s\n", "rules", "packet",
	       "first match", "verdict", "baseline", "measured", "net", "spread");
	for (i = 0; i < BM_FW_SIZES; i++) {
		for (j = 0; j < 2; j++) {
			char match[48];

			if (j)
				snprintf(match, sizeof(match), "none");
			else
				snprintf(match, sizeof(match), "rule %u of %u",
					 fw[i].rank + 1, b->inst[i].rules.n);
			printf("  %-6u %-10s %-19s ", b->inst[i].rules.n,
			       j ? "no match" : "last rule", match);
			bm_var_print(&v[2 * i + j]);
		}
	}
	return 0;
}

/* ---- the stateful firewall: conntrack ---- */

/*
 * The classic stateful policy (issue 35, docs/conntrack.md) and, behind
 * it, the first 6 rules of the stateless set: 10 rules, as many as the
 * stateless firewall it is compared with, so that the comparison is one
 * of conntrack and the stateful matches, not of a shorter list. Both sets
 * are within XNF_FW_LINEAR_MAX and classified by the linear scan. Default
 * drop. Slot i holds rule i.
 */
#define BM_CT_RULES    10
#define BM_CT_SLOT_EST 0 /* allow ct state established,related */
#define BM_CT_SLOT_IIF 2 /* allow iif bm0: the new flows' rule */
#define BM_CT_ROWS     9
#define BM_CT_FORMS    4 /* tail, fused; x cache on, off */

static int bm_ct_rules(struct bm *b, struct bm_rules *rs)
{
	const struct bm_rules *st = &b->inst[0].rules;
	struct xnf_fw_rule *r;
	__u32 i;

	memset(rs, 0, sizeof(*rs));
	rs->r = calloc(BM_CT_RULES, sizeof(*rs->r));
	if (!rs->r)
		return -ENOMEM;
	rs->n = BM_CT_RULES;
	r = rs->r;
	r[0].flags = XNF_FW_F_CT;
	r[0].ct_states = 1 << XNF_CT_ESTABLISHED | 1 << XNF_CT_RELATED;
	r[1].flags = XNF_FW_F_CT;
	r[1].action = XNF_FW_DROP;
	r[1].ct_states = 1 << XNF_CT_INVALID;
	r[2].flags = XNF_FW_F_IIF;
	r[2].iif = b->ifindex[0];
	r[3].flags = XNF_FW_F_IIF | XNF_FW_F_PROTO | XNF_FW_F_DPORT | XNF_FW_F_CT;
	r[3].iif = b->ifindex[1];
	r[3].proto = IPPROTO_TCP;
	r[3].dport_lo = r[3].dport_hi = 22;
	r[3].ct_states = 1 << XNF_CT_NEW;
	for (i = 4; i < BM_CT_RULES; i++)
		r[i] = st->r[i - 4];
	for (i = 0; i < BM_CT_RULES; i++) {
		r[i].prio = (i + 1) * 10;
		r[i].in_use = 1;
	}
	return 0;
}

/* An instance with the stateful policy, its connection table opened. */
static int bm_ct_inst_open(struct bm *b, struct bm_inst *in, const char *name)
{
	char path[128];
	int err;

	err = bm_inst_open(b, in, name);
	err = err ?: bm_ct_rules(b, &in->rules);
	err = err ?: bm_rules_install(in, XNF_FW_DROP);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/tables/%s", in->root,
		 XNF_MAP_STR(XNF_MAP_CT));
	in->ct_fd = bpf_obj_get(path);
	if (in->ct_fd < 0) {
		err = -errno;
		fprintf(stderr,
			"Error: cannot open the connection table of %s: %s\n",
			in->root, strerror(-err));
	}
	return err;
}

/* Entries in @in's connection table. */
static __u64 bm_ct_entries(struct bm_inst *in)
{
	struct xnf_ct_key k, next;
	__u64 n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(in->ct_fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

/* The rows of the conntrack group, each tail-called and fused, with the
 * flow cache on and off: v[2 * (fc is off) + fused]. */
struct bm_ct_row {
	const char *label;
	int inst; /* -1 the stateless 10-rule instance, else b->ct[] */
	const char *chain;
	bool new_flows; /* a new flow every packet (b->ct[1]) */
	int hit_slot;
	bool tcp;      /* the TCP ACK of an established connection, not
			* the chains' UDP packet */
	bool optional; /* left out, and said so, if the verifier refuses */
	struct bm_var v[BM_CT_FORMS];
};

static struct bm_ct_row bm_ct_rows[BM_CT_ROWS] = {
	{ "stateless firewall", -1, "firewall", false, -1 },
	{ "ct,fw established", 0, "conntrack,firewall", false, BM_CT_SLOT_EST },
	{ "ct,fw new flow", 1, "conntrack,firewall", true, BM_CT_SLOT_IIF },
	{ "conntrack established", 0, "conntrack", false, -2 },
	{ "conntrack new flow", 1, "conntrack", true, -2 },
	{ "ct,fw established TCP", 0, "conntrack,firewall", false,
	  BM_CT_SLOT_EST, true },
	{ "conntrack established TCP", 0, "conntrack", false, -2, true },
	{ "stateless fw,l3,l2", -1, "firewall,l3fwd,l2fwd", false, -1, false,
	  true },
	{ "ct,fw,l3,l2 established", 0, "conntrack,firewall,l3fwd,l2fwd", false,
	  BM_CT_SLOT_EST, false, true },
};
#define BM_CT_ROW_FW	 0
#define BM_CT_ROW_EST	 1
#define BM_CT_ROW_NEW	 2
#define BM_CT_ROW_CT	 3
#define BM_CT_ROW_CT_NEW 4
#define BM_CT_ROW_TCP	 5
#define BM_CT_ROW_3NF	 7
#define BM_CT_ROW_4NF	 8

/* Sets the TCP flags of @f's segment. */
static void bm_tcp_flags(struct bm_frame *f, __u8 flags)
{
	__u32 l3 = pkt_l3_off(f->data);

	f->data[l3 + (f->data[l3] & 0xf) * 4 + 13] = flags;
}

/* Over the rounds, the ratio of @a's net to @b's: median, min, max. */
static void bm_ratio(const struct bm *bm, const struct bm_var *a,
		     const struct bm_var *b, double *med, double *lo, double *hi)
{
	double d[BM_MAX_RUNS];
	__u32 r;

	for (r = 0; r < bm->o.runs; r++) {
		d[r] = a->net[r] / b->net[r];
		*lo = !r || d[r] < *lo ? d[r] : *lo;
		*hi = !r || d[r] > *hi ? d[r] : *hi;
	}
	*med = bm_median(d, bm->o.runs);
}

/* Sends @f through @v's chain once: the verdict must be @action. */
static int bm_ct_send(struct bm *b, struct bm_var *v, const struct bm_frame *f,
		      int action, const char *what)
{
	__u8 out[sizeof(f->data)];
	__u32 out_len = sizeof(out);
	int ret, err;

	err = bm_run(b, xnf_chain_prog_fd(v->c), f, 1, out, &out_len, &ret, NULL);
	if (!err && ret != action) {
		fprintf(stderr, "Error: %s: the %s got %s, expected %s\n",
			v->what, what, bm_action_name(ret),
			bm_action_name(action));
		err = -EPROTO;
	}
	return err;
}

/*
 * Stateless against stateful, timed as one group: the 10-rule firewall
 * (the chains' packet matches none, default allow) and the stateful
 * policy for an established flow (the packet's connection is in the
 * table and has seen a reply), for a new flow every packet (lookup miss,
 * accepted by `allow iif bm0`, inserted), and conntrack alone. The
 * established rows and the new-flow rows have an instance each: the new
 * flows turn the table over, and would evict the established one.
 */
static int bm_ct(struct bm *b, const struct bm_frame *chain_frame,
		 const struct xnf_fw_pkt *p, const __u8 nh_mac[6])
{
	struct bm_var all[BM_CT_ROWS * BM_CT_FORMS];
	int pos[BM_CT_ROWS][BM_CT_FORMS];
	__u32 n = 0, left_out = 0;
	struct xnf_ct_counters c0, c1;
	struct bm_frame reply, syn, synack, ack;
	struct xnf_fw_pkt q = *p;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), i, j;
	__u64 entries0 = 0, entries;
	int err;

	if ((err = bm_ct_inst_open(b, &b->ct[0], "ct-est")) ||
	    (err = bm_ct_inst_open(b, &b->ct[1], "ct-new")))
		return err;
	memcpy(q.src, p->dst, 16);
	memcpy(q.dst, p->src, 16);
	q.sport = p->dport;
	q.dport = p->sport;
	if ((err = bm_frame_build(&reply, &q, b->mac[0])))
		return err;
	/* The same connection over TCP: its handshake, and the ACK that
	 * the TCP rows time. */
	q.proto = IPPROTO_TCP;
	if ((err = bm_frame_build(&synack, &q, b->mac[0])))
		return err;
	memcpy(q.src, p->src, 16);
	memcpy(q.dst, p->dst, 16);
	q.sport = p->sport;
	q.dport = p->dport;
	if ((err = bm_frame_build(&syn, &q, b->mac[0])))
		return err;
	ack = syn;
	bm_tcp_flags(&synack, 0x12);
	bm_tcp_flags(&ack, 0x10);
	for (i = 0; i < BM_CT_ROWS && !err; i++) {
		struct bm_ct_row *r = &bm_ct_rows[i];
		bool l3 = strstr(r->chain, "l3fwd");
		struct bm_expect e = {
			.action = l3 ? XDP_REDIRECT : XDP_PASS,
			.hit_slot = r->hit_slot,
			.dmac = l3 ? nh_mac : NULL,
			.ttl_dec = l3,
			.ct = r->inst >= 0,
			.ct_found = !r->new_flows,
			.ct_created = r->new_flows,
		};
		struct bm_inst *in = r->inst < 0 ? &b->inst[0] : &b->ct[r->inst];

		for (j = 0; j < BM_CT_FORMS && !err; j++) {
			err = bm_var_load(b, &r->v[j], in, r->chain, j % 2,
					  false, r->tcp ? &ack : chain_frame, &e);
			/* The chains with l3fwd are extra: one the verifier
			 * refuses (a fused chain's stack) is left out and
			 * said so, the rest still measured. */
			if (err && r->optional) {
				r->v[j].c = NULL;
				left_out++;
				err = 0;
			}
			r->v[j].fc = r->new_flows ?
					     (j / 2 ? BM_FC_OFF_MANY :
						      BM_FC_MISS) :
					     (j / 2 ? BM_FC_OFF : BM_FC_HIT);
			r->v[j].vary = bm_sport_off(chain_frame);
			r->v[j].wide = true;
		}
	}
	/* The established connection: the packet, accepted as new by
	 * `allow iif bm0`, then its reply, established. */
	if (!err)
		err = bm_ct_send(b, &bm_ct_rows[BM_CT_ROW_EST].v[0],
				 chain_frame, XDP_PASS, "first packet");
	if (!err)
		err = bm_ct_send(b, &bm_ct_rows[BM_CT_ROW_EST].v[0], &reply,
				 XDP_PASS, "reply");
	if (!err)
		err = bm_ct_send(b, &bm_ct_rows[BM_CT_ROW_EST].v[0], &syn,
				 XDP_PASS, "SYN");
	if (!err)
		err = bm_ct_send(b, &bm_ct_rows[BM_CT_ROW_EST].v[0], &synack,
				 XDP_PASS, "SYN-ACK");
	if (!err)
		err = bm_ct_send(b, &bm_ct_rows[BM_CT_ROW_EST].v[0], &ack,
				 XDP_PASS, "ACK");
	/* The members in one array for bm_group (which the rows' v[] are
	 * copied into and back from). */
	for (i = 0; i < BM_CT_ROWS && !err; i++) {
		for (j = 0; j < BM_CT_FORMS; j++) {
			pos[i][j] = bm_ct_rows[i].v[j].c ? (int)n : -1;
			if (pos[i][j] >= 0)
				all[n++] = bm_ct_rows[i].v[j];
		}
	}
	if (!err) {
		entries0 = bm_ct_entries(&b->ct[1]);
		err = bm_ct_stats(&b->ct[1], &c0);
	}
	if (!err)
		err = bm_group(b, all, n);
	for (i = 0; i < BM_CT_ROWS; i++) {
		for (j = 0; j < BM_CT_FORMS; j++) {
			if (!err && pos[i][j] >= 0)
				bm_ct_rows[i].v[j] = all[pos[i][j]];
			bm_var_free(&bm_ct_rows[i].v[j]);
		}
	}
	if (!err)
		err = bm_ct_stats(&b->ct[1], &c1);
	if (!err && bpf_obj_get_info_by_fd(b->ct[1].ct_fd, &info, &len))
		err = -errno;
	if (err)
		return err;
	entries = bm_ct_entries(&b->ct[1]);

	printf("\nStateful firewall: conntrack and the classic policy (allow ct state "
	       "established,related;\ndrop ct state invalid; allow iif %s; allow iif "
	       "%s proto tcp dport 22 ct state new;\n6 rules of the stateless set; "
	       "default drop) against the stateless 10-rule firewall\n",
	       BM_DEV, BM_PREFIX "1");
	printf("  %-26s %-10s %-9s %9s %9s %9s %7s\n", "chain", "form",
	       "verdict", "baseline", "measured", "net", "spread");
	for (i = 0; i < BM_CT_ROWS; i++) {
		for (j = 0; j < BM_CT_FORMS; j++) {
			const struct bm_var *v = &bm_ct_rows[i].v[j];
			char form[16];

			if (pos[i][j] < 0)
				continue;

			snprintf(form, sizeof(form), "%s%s",
				 j % 2 ? "fused" : "tail", bm_fc_names[v->fc]);
			printf("  %-26s %-10s ", bm_ct_rows[i].label, form);
			bm_var_print(v);
		}
	}
	if (left_out)
		printf("  (%u forms of the chains with l3fwd left out: the "
		       "verifier refused them, see above)\n",
		       left_out);
	printf("  (established: the packet's connection is in the table and has "
	       "seen a reply;\n   TCP: the ACK %s after its SYN, SYN-ACK and ACK;\n"
	       "   new flow: source and destination port from the "
	       "harness' counter, never the same twice)\n",
	       ack.desc);
	printf("  new-flow table: %llu entries of %u after the rows; %llu "
	       "created, %llu evicted by the LRU\n  during them (created - "
	       "expired - deleted - entries gained)\n",
	       (unsigned long long)entries, info.max_entries,
	       (unsigned long long)(c1.created - c0.created),
	       (unsigned long long)(c1.created - c0.created -
				    (c1.expired - c0.expired) -
				    (c1.deleted - c0.deleted) -
				    (entries - entries0)));

	printf("\nTarget (c): established flow through conntrack,firewall / the "
	       "stateless 10-rule firewall\n(net; median of the per-round ratio, "
	       "min..max over the rounds)\n");
	for (j = 0; j < BM_CT_FORMS; j++) {
		const struct bm_var *a = &bm_ct_rows[BM_CT_ROW_EST].v[j],
				    *s = &bm_ct_rows[BM_CT_ROW_FW].v[j];
		double med, lo, hi;
		char form[24];

		snprintf(form, sizeof(form), "%s%s",
			 j % 2 ? "fused" : "tail-called",
			 j / 2 ? ", cache off" : ", cache on");
		bm_ratio(b, a, s, &med, &lo, &hi);
		printf("  %-24s = %5.2f x (%4.2f..%4.2f)   target <= %.1f x   %s\n",
		       form, med, lo, hi, BM_CT_TARGET,
		       bm_pf(med <= BM_CT_TARGET));
	}
	printf("\nOther ratios, same form, as above: conntrack alone, a new flow "
	       "every packet (cache on:\nmiss) and conntrack,firewall for the ACK "
	       "of an established TCP connection against\nthe stateless firewall "
	       "(its UDP packet); the 4-NF chain conntrack,firewall,l3fwd,l2fwd\n"
	       "(established) against the 3-NF firewall,l3fwd,l2fwd\n");
	printf("  %-24s %-22s %-22s %-22s %-22s\n", "form", "conntrack alone",
	       "new flow", "TCP established", "4-NF / 3-NF");
	for (j = 0; j < BM_CT_FORMS; j++) {
		static const int rows[4][2] = {
			{ BM_CT_ROW_CT, BM_CT_ROW_FW },
			{ BM_CT_ROW_NEW, BM_CT_ROW_FW },
			{ BM_CT_ROW_TCP, BM_CT_ROW_FW },
			{ BM_CT_ROW_4NF, BM_CT_ROW_3NF },
		};
		char form[24], cell[24];
		int k;

		snprintf(form, sizeof(form), "%s%s",
			 j % 2 ? "fused" : "tail-called",
			 j / 2 ? ", cache off" : ", cache on");
		printf("  %-24s", form);
		for (k = 0; k < 4; k++) {
			double med, lo, hi;

			if (pos[rows[k][0]][j] < 0 || pos[rows[k][1]][j] < 0) {
				printf(" %-22s", "-");
				continue;
			}
			bm_ratio(b, &bm_ct_rows[rows[k][0]].v[j],
				 &bm_ct_rows[rows[k][1]].v[j], &med, &lo, &hi);
			snprintf(cell, sizeof(cell), "%.2f x (%.2f..%.2f)", med,
				 lo, hi);
			printf(" %-22s", cell);
		}
		printf("\n");
	}
	return 0;
}

/* ---- NAT (issue 36) ---- */

/*
 * An established translated connection against the same connection
 * untranslated, with the stateful policy (bm_ct_rules) on each instance:
 *   - nat-plain: the chains' UDP packet as made by conntrack,firewall,l3fwd
 *     (no translation);
 *   - nat-masq: `masquerade oif bm1`: the source becomes bm1's address in
 *     the sandbox's kernel (what bpf_fib_lookup chooses), the port kept;
 *   - nat-snat: `snat oif bm1 proto udp to 198.51.100.250:40000`: address
 *     and port.
 * Each translated connection is made as the datapath makes it: its first
 * packet through conntrack,nat,firewall,l3fwd (the rule chooses, the
 * firewall's confirm writes the alias and the connection), then the reply
 * to the translated address, found through the alias: established.
 */
#define BM_NAT_INSTS	 3
#define BM_NAT_PLAIN	 0
#define BM_NAT_MASQ	 1
#define BM_NAT_SNAT	 2
#define BM_NAT_MASQ_ADDR "198.51.100.254" /* bm1's (bm_kernel_cmds) */
#define BM_NAT_SNAT_ADDR "198.51.100.250"
#define BM_NAT_SNAT_PORT 40000
#define BM_NAT_ROWS	 8
#define BM_NAT_TARGET	 25.0 /* ns that NAT adds to an established packet */

static const char *const bm_nat_inst_names[BM_NAT_INSTS] = { "nat-plain",
							     "nat-masq",
							     "nat-snat" };

/* The instance's one NAT rule, applied as `xnf nat add` applies it
 * (lib/nat.c), before any packet. */
static int bm_nat_rule(struct bm *b, struct bm_inst *in, __u8 type)
{
	struct xnf_nat_rule r = { .prio = 10,
				  .type = type,
				  .family = XNF_AF_INET,
				  .oif = b->ifindex[1] };
	struct xnf_nat_set *set = xnf_nat_set_new();
	char msg[256] = "";
	int err;

	if (type == XNF_NAT_SNAT) {
		r.flags = XNF_NAT_F_PORTS;
		r.proto = IPPROTO_UDP; /* a port mapping needs one */
		inet_pton(AF_INET, BM_NAT_SNAT_ADDR, r.to_min);
		memcpy(r.to_max, r.to_min, 16);
		r.to_port_min = r.to_port_max = BM_NAT_SNAT_PORT;
	}
	err = set ? 0 : -ENOMEM;
	err = err ?: xnf_nat_set_add(set, &r, false, msg, sizeof(msg));
	err = err ?: xnf_nat_apply(in->dp, set, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "Error: cannot add the NAT rule of %s: %s\n",
			in->root, *msg ? msg : strerror(-err));
	xnf_nat_set_free(set);
	return err;
}

struct bm_nat_row {
	const char *label;
	int inst;    /* BM_NAT_* */
	bool nat;    /* chain conntrack,nat,firewall,l3fwd, else without nat */
	bool reply;  /* the reply direction */
	int against; /* the row whose net it adds to, -1 none */
	struct bm_var v[BM_CT_FORMS];
};

static struct bm_nat_row bm_nat_rows[BM_NAT_ROWS] = {
	{ "ct,fw,l3 original", BM_NAT_PLAIN, false, false, -1 },
	{ "ct,nat,fw,l3 orig masq", BM_NAT_MASQ, true, false, 0 },
	{ "ct,nat,fw,l3 orig snat", BM_NAT_SNAT, true, false, 0 },
	{ "ct,nat,fw,l3 orig none", BM_NAT_PLAIN, true, false, 0 },
	{ "ct,fw,l3 reply", BM_NAT_PLAIN, false, true, -1 },
	{ "ct,nat,fw,l3 reply masq", BM_NAT_MASQ, true, true, 4 },
	{ "ct,nat,fw,l3 reply snat", BM_NAT_SNAT, true, true, 4 },
	{ "ct,nat,fw,l3 reply none", BM_NAT_PLAIN, true, true, 4 },
};
#define BM_NAT_CHAIN	"conntrack,nat,firewall,l3fwd"
#define BM_NAT_CHAIN_CT "conntrack,firewall,l3fwd"

/* The address and port the source of the chains' packet @p becomes on
 * instance @inst. */
static void bm_nat_xlat(int inst, const struct xnf_fw_pkt *p, __u8 addr[4],
			__u16 *port)
{
	memcpy(addr, p->src, 4);
	*port = p->sport;
	if (inst == BM_NAT_MASQ)
		inet_pton(AF_INET, BM_NAT_MASQ_ADDR, addr);
	if (inst == BM_NAT_SNAT) {
		inet_pton(AF_INET, BM_NAT_SNAT_ADDR, addr);
		*port = BM_NAT_SNAT_PORT;
	}
}

/* What a packet of row @r leaves with: the original one with its source
 * translated, the reply with its destination translated back. */
static void bm_nat_expect(const struct bm_nat_row *r,
			  const struct xnf_fw_pkt *p, struct bm_expect *e)
{
	__u8 addr[4];
	__u16 port;

	bm_nat_xlat(r->inst, p, addr, &port);
	e->out_tuple = true;
	if (!r->reply) {
		memcpy(e->out_src, addr, 4);
		e->out_sport = port;
		memcpy(e->out_dst, p->dst, 4);
		e->out_dport = p->dport;
	} else {
		memcpy(e->out_src, p->dst, 4);
		e->out_sport = p->dport;
		memcpy(e->out_dst, p->src, 4);
		e->out_dport = p->sport;
	}
}

/*
 * Makes instance @inst's connection as the datapath does: the chains'
 * packet through @v's chain (new, accepted by `allow iif bm0`, translated
 * by the instance's rule and confirmed), then its reply (to the
 * translated address, from bm1): established. Both checked to leave as
 * the timed rows expect.
 */
static int bm_nat_connect(struct bm *b, struct bm_var *v, int inst,
			  const struct bm_frame *orig,
			  const struct bm_frame *reply,
			  const struct xnf_fw_pkt *p)
{
	struct bm_nat_row r = { .inst = inst };
	struct bm_var chk = *v;
	__u8 out[sizeof(orig->data)];
	__u32 out_len;
	int ret, err, dir;

	for (dir = 0; dir < 2; dir++) {
		r.reply = dir;
		chk.f = dir ? reply : orig;
		memset(&chk.e, 0, sizeof(chk.e));
		bm_nat_expect(&r, p, &chk.e);
		snprintf(chk.what, sizeof(chk.what), "%s: the connection's %s",
			 v->what, dir ? "reply" : "first packet");
		out_len = sizeof(out);
		err = bm_run(b, xnf_chain_prog_fd(v->c), chk.f, 1, out,
			     &out_len, &ret, NULL);
		if (!err && ret != XDP_REDIRECT) {
			fprintf(stderr,
				"Error: %s got %s, expected redirect (%s)\n",
				chk.what, bm_action_name(ret),
				ret == XDP_DROP ? "see xnf stats' drop reasons" :
						  "not forwarded");
			err = -EPROTO;
		}
		err = err ?: bm_out_check(&chk, out, out_len);
		if (err)
			return err;
	}
	return 0;
}

static int bm_nat(struct bm *b, const struct bm_frame *chain_frame,
		  const struct xnf_fw_pkt *p)
{
	struct bm_var all[BM_NAT_ROWS * BM_CT_FORMS];
	int pos[BM_NAT_ROWS][BM_CT_FORMS];
	struct bm_frame reply[BM_NAT_INSTS];
	__u32 n = 0, left_out = 0, i, j;
	__u8 mac[2][6];
	int err = 0;

	/* l3fwd's next hops: the /28's, and the reply's (route 0,
	 * 192.0.2.0/24 out of bm0) */
	bm_nh_mac(BM_DST_ROUTE, mac[0]);
	bm_nh_mac(0, mac[1]);
	for (i = 0; i < BM_NAT_INSTS && !err; i++) {
		struct xnf_fw_pkt q = *p;

		err = bm_ct_inst_open(b, &b->nat[i], bm_nat_inst_names[i]);
		if (!err && i == BM_NAT_MASQ)
			err = bm_nat_rule(b, &b->nat[i], XNF_NAT_MASQUERADE);
		if (!err && i == BM_NAT_SNAT)
			err = bm_nat_rule(b, &b->nat[i], XNF_NAT_SNAT);
		/* The reply: from the destination to the translated source. */
		memcpy(q.src, p->dst, 16);
		memset(q.dst, 0, 16);
		bm_nat_xlat(i, p, q.dst, &q.dport);
		q.sport = p->dport;
		err = err ?: bm_frame_build(&reply[i], &q, b->mac[1]);
		reply[i].iif = 1;
	}
	for (i = 0; i < BM_NAT_ROWS && !err; i++) {
		struct bm_nat_row *r = &bm_nat_rows[i];
		struct bm_expect e = {
			.action = XDP_REDIRECT,
			.hit_slot = BM_CT_SLOT_EST,
			.ttl_dec = true,
			.ct = true,
			.ct_found = 1,
			.ct_lookups_max = r->nat ? 2 : 1,
		};

		e.dmac = mac[r->reply];
		bm_nat_expect(r, p, &e);
		for (j = 0; j < BM_CT_FORMS && !err; j++) {
			err = bm_var_load(b, &r->v[j], &b->nat[r->inst],
					  r->nat ? BM_NAT_CHAIN : BM_NAT_CHAIN_CT,
					  j % 2, false,
					  r->reply ? &reply[r->inst] : chain_frame,
					  &e);
			/* A fused form the verifier refuses (its stack) is
			 * left out and said so, as in the conntrack group. */
			if (err && j % 2) {
				r->v[j].c = NULL;
				left_out++;
				err = 0;
			}
			r->v[j].fc = j / 2 ? BM_FC_OFF : BM_FC_HIT;
		}
	}
	/* The connections: each instance's first tail-called chain of its
	 * kind (the plain one without nat, as its connection would be). */
	for (i = 0; i < BM_NAT_INSTS && !err; i++)
		err = bm_nat_connect(b,
				     &bm_nat_rows[i == BM_NAT_PLAIN ? 0 : i].v[0],
				     i, chain_frame, &reply[i], p);
	for (i = 0; i < BM_NAT_ROWS && !err; i++) {
		for (j = 0; j < BM_CT_FORMS; j++) {
			pos[i][j] = bm_nat_rows[i].v[j].c ? (int)n : -1;
			if (pos[i][j] >= 0)
				all[n++] = bm_nat_rows[i].v[j];
		}
	}
	if (!err)
		err = bm_group(b, all, n);
	for (i = 0; i < BM_NAT_ROWS; i++) {
		for (j = 0; j < BM_CT_FORMS; j++) {
			if (!err && pos[i][j] >= 0)
				bm_nat_rows[i].v[j] = all[pos[i][j]];
			bm_var_free(&bm_nat_rows[i].v[j]);
		}
	}
	if (err)
		return err;

	printf("\nNAT: an established connection translated (masquerade oif %s; snat "
	       "oif %s to %s:%u)\nagainst the same untranslated, chains %s and %s, "
	       "the stateful policy of the\nconntrack group; every packet checked to "
	       "leave with the translated addresses\n",
	       BM_PREFIX "1", BM_PREFIX "1", BM_NAT_SNAT_ADDR, BM_NAT_SNAT_PORT,
	       BM_NAT_CHAIN, BM_NAT_CHAIN_CT);
	printf("  %-26s %-10s %-9s %9s %9s %9s %7s\n", "chain", "form",
	       "verdict", "baseline", "measured", "net", "spread");
	for (i = 0; i < BM_NAT_ROWS; i++) {
		for (j = 0; j < BM_CT_FORMS; j++) {
			const struct bm_var *v = &bm_nat_rows[i].v[j];
			char form[16];

			if (pos[i][j] < 0)
				continue;
			snprintf(form, sizeof(form), "%s%s",
				 j % 2 ? "fused" : "tail", bm_fc_names[v->fc]);
			printf("  %-26s %-10s ", bm_nat_rows[i].label, form);
			bm_var_print(v);
		}
	}
	if (left_out)
		printf("  (%u fused forms left out: the verifier refused them, "
		       "see above)\n",
		       left_out);
	printf("  (original: %s, in on %s, out of %s, its source translated\n"
	       "   when it leaves; reply: to the translated source, in on %s, "
	       "found through the\n   alias, its destination translated back; "
	       "none: the nat NF in the chain,\n   the connection "
	       "untranslated)\n",
	       chain_frame->desc, BM_DEV, BM_PREFIX "1", BM_PREFIX "1");

	printf("\nTarget: what NAT adds to an established packet, ns (median over "
	       "the rounds of the\nper-round difference of the nets), target <= "
	       "%.0f ns\n",
	       BM_NAT_TARGET);
	printf("  %-26s %-20s %-20s %-20s %-20s\n", "row", "tail, cache on",
	       "fused, cache on", "tail, cache off", "fused, cache off");
	for (i = 0; i < BM_NAT_ROWS; i++) {
		const struct bm_nat_row *r = &bm_nat_rows[i];

		if (r->against < 0)
			continue;
		printf("  %-26s", r->label);
		for (j = 0; j < BM_CT_FORMS; j++) {
			char cell[24];
			double d;

			if (pos[i][j] < 0 || pos[r->against][j] < 0) {
				printf(" %-20s", "-");
				continue;
			}
			d = bm_paired(b, &r->v[j],
				      &bm_nat_rows[r->against].v[j], 1);
			snprintf(cell, sizeof(cell), "%+.1f %s", d,
				 bm_pf(d <= BM_NAT_TARGET));
			printf(" %-20s", cell);
		}
		printf("\n");
	}
	printf("  (each against %s or %s on the untranslated connection)\n",
	       bm_nat_rows[0].label, bm_nat_rows[4].label);
	return 0;
}

/* ---- the trace (issue 37) ---- */

/*
 * What tracing costs a packet it does not trace: the 3-NF chain on the
 * 10-rule instance with no trace armed against the same chain on an
 * instance of its own ("trace") where a trace is armed that matches
 * nothing (src 203.0.113.99, the CLI's default bounds: 10 packets, 60 s
 * from now, far beyond the run), tail-called and fused, flow cache on.
 * An armed trace costs every packet the entry's test of id, the clock
 * read for the deadline and the match (xnf_trace_begin_fn,
 * bpf/trace.bpf.h); no trace costs the test alone, which the "off" rows
 * include (compare them with the same rows of a build without the trace
 * for that). Checked after the group: the trace is still armed and took
 * no packet.
 */
#define BM_TRACE_SRC "203.0.113.99"

/* Arms a trace on @in that matches only BM_TRACE_SRC; the fd of its
 * xnf_trace_cfg into *@fd. */
static int bm_trace_arm(struct bm_inst *in, int *fd)
{
	struct xnf_trace_cfg c = { .id = 1, .pid = getpid(), .max_packets = 10 };
	struct timespec now;
	char path[128];
	__u32 zero = 0;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &now);
	c.deadline_ns = (now.tv_sec + 60) * 1000000000ULL + now.tv_nsec;
	c.match.flags = XNF_FW_F_SRC;
	c.match.family = XNF_AF_INET;
	c.match.src_len = 32;
	inet_pton(AF_INET, BM_TRACE_SRC, c.match.src);
	snprintf(path, sizeof(path), "%s/tables/%s", in->root,
		 XNF_MAP_STR(XNF_MAP_TRACE_CFG));
	*fd = bpf_obj_get(path);
	if (*fd < 0 || bpf_map_update_elem(*fd, &zero, &c, 0))
		err = -errno;
	if (err)
		fprintf(stderr, "Error: cannot arm a trace on %s: %s\n",
			in->root, strerror(-err));
	return err;
}

static int bm_trace(struct bm *b, const struct bm_frame *chain_frame,
		    const __u8 nh_mac[6])
{
	static const char *const forms[4] = { "tail", "fused", "tail", "fused" };
	struct bm_inst *in = &b->inst[0], *armed = &b->trace;
	struct bm_expect e = { .action = XDP_REDIRECT,
			       .hit_slot = -1,
			       .dmac = nh_mac,
			       .ttl_dec = true };
	const char *chain = bm_chain_rows[BM_ROW_3NF].chain;
	struct xnf_trace_cfg c = {};
	struct bm_var v[4] = {};
	__u32 zero = 0, i;
	__u8 src[4];
	int fd = -1, err;

	inet_pton(AF_INET, BM_TRACE_SRC, src);
	if (!memcmp(chain_frame->data + pkt_l3_off(chain_frame->data) + 12, src,
		    4)) {
		fprintf(stderr,
			"Error: the chains' packet comes from %s, "
			"which the trace must not match\n",
			BM_TRACE_SRC);
		return -EINVAL;
	}
	err = bm_inst_open(b, armed, "trace");
	err = err ?: bm_rules_make(&armed->rules, bm_fw_sizes[0], b->o.seed);
	err = err ?: bm_rules_install(armed, XNF_FW_ALLOW);
	err = err ?: bm_trace_arm(armed, &fd);
	for (i = 0; i < 4 && !err; i++)
		err = bm_var_load(b, &v[i], i < 2 ? in : armed, chain, i % 2,
				  false, chain_frame, &e);
	err = err ?: bm_group(b, v, 4);
	if (!err &&
	    (bpf_map_lookup_elem(fd, &zero, &c) || c.id != 1 || c.matched)) {
		fprintf(stderr, "Error: the trace did not stay armed and "
				"unmatched through the runs\n");
		err = -EPROTO;
	}
	if (!err) {
		printf("\nTrace: chain \"%s\", no trace armed against a trace "
		       "armed that matches nothing\n(src %s, count 10, "
		       "timeout 60 s), flow cache on\n",
		       chain, BM_TRACE_SRC);
		printf("  %-22s %-10s %-9s %9s %9s %9s %7s\n", "trace", "form",
		       "verdict", "baseline", "measured", "net", "spread");
		for (i = 0; i < 4; i++) {
			printf("  %-22s %-10s ",
			       i < 2 ? "off" : "armed, no match", forms[i]);
			bm_var_print(&v[i]);
		}
		printf("  armed over off (median over the rounds): tail %.1f ns, "
		       "fused %.1f ns\n",
		       bm_paired(b, &v[2], &v[0], 1),
		       bm_paired(b, &v[3], &v[1], 1));
	}
	for (i = 0; i < 4; i++)
		bm_var_free(&v[i]);
	if (fd >= 0)
		close(fd);
	return err;
}

/* ---- the traffic mixes (-M) ---- */

/* The mixes of issue 38: one flow, uniform over 65,536 flows, and Zipf
 * (s = 1.0, the classic law) over 1,000,000 flows. */
enum bm_mix { BM_MIX_ONE, BM_MIX_UNIFORM, BM_MIX_ZIPF, __BM_MIX_MAX };
static const char *const bm_mix_names[__BM_MIX_MAX] = { "1 flow",
							"uniform 65,536",
							"zipf 1.0, 1M" };
static const __u32 bm_mix_flows[__BM_MIX_MAX] = { 1, 65536, 1000000 };
#define BM_ZIPF_S 1.0

/* The chains -M times: the 3-NF chain, l3fwd, the firewall (rows of
 * bm_chain_rows) and the stateful chain (BM_MIX_STATEFUL). */
#define BM_MIX_STATEFUL -1
static const int bm_mix_rows[] = { BM_ROW_3NF, BM_ROW_L3FWD, 0, BM_MIX_STATEFUL };
#define BM_MIX_ROWS (sizeof(bm_mix_rows) / sizeof(bm_mix_rows[0]))

static const char *bm_mix_label(__u32 row)
{
	return bm_mix_rows[row] == BM_MIX_STATEFUL ?
		       "ct,nat,fw,l3 masq" :
		       bm_chain_rows[bm_mix_rows[row]].label;
}

/*
 * The stateful row's instances and what its packets must do: the policy
 * of the conntrack group (bm_ct_rules: `allow iif bm0` accepts the mix's
 * flows, new or unreplied, in slot BM_CT_SLOT_IIF) and `masquerade oif
 * bm1`, the chain conntrack,nat,firewall,l3fwd. One instance for the
 * mixes, whose flows have their connections made before the rounds (so
 * that the rows time packets of known connections in a table of the
 * mix's size, as a router's between new flows), one for the flood (a new
 * connection every packet, as the conntrack group's new-flow rows, whose
 * turnover would evict the mixes' connections).
 */
static int bm_mix_stateful(struct bm *b, const struct xnf_fw_pkt *p,
			   struct bm_expect *mix, struct bm_expect *flood)
{
	static const char *const name[2] = { "mix-ct", "mix-ct-new" };
	int i, err = 0;

	for (i = 0; i < 2 && !err; i++)
		err = bm_ct_inst_open(b, &b->mix_ct[i], name[i]) ?:
			      bm_nat_rule(b, &b->mix_ct[i], XNF_NAT_MASQUERADE);
	mix->hit_slot = BM_CT_SLOT_IIF;
	mix->ct = true;
	mix->ct_lookups_max = 2;
	*flood = *mix;
	mix->ct_mix = true;
	mix->out_tuple = true;
	inet_pton(AF_INET, BM_NAT_MASQ_ADDR, mix->out_src);
	memcpy(mix->out_dst, p->dst, 4);
	/* A new connection: its lookup, then the masquerade's for a free
	 * tuple (the harness writes the flood's ports without the UDP
	 * checksum: their translation is the NAT group's to check). */
	flood->ct_created = 1;
	return err;
}

/* The xnf_bench_flows table of @mix for packet @p's ports (flow i: source
 * port + i, destination port + i / 65536, as xnf-gen's flows), refused
 * when one of its flows would match a rule of @r (the rows would time
 * another path). One flow: every entry the packet's own ports. Uniform:
 * entry j is flow j, every flow once per table. Zipf: xnf_mix_zipf(). */
static int bm_mix_table(enum bm_mix mix, const struct xnf_fw_pkt *p,
			const struct bm_rules *r, __u32 *t)
{
	__u32 j;
	int err;

	if (mix == BM_MIX_ZIPF) {
		err = xnf_mix_zipf(bm_mix_flows[mix], BM_ZIPF_S, t,
				   XNF_GEN_MIX_SIZE);
		if (err)
			return err;
	} else {
		for (j = 0; j < XNF_GEN_MIX_SIZE; j++)
			t[j] = mix == BM_MIX_ONE ? 0 : j;
	}
	for (j = 0; j < XNF_GEN_MIX_SIZE; j++) {
		struct xnf_fw_pkt q = *p;

		q.sport = p->sport + t[j];
		q.dport = p->dport + (t[j] >> 16);
		if (xnf_fw_linear(r->r, r->n, &q) >= 0) {
			fprintf(stderr,
				"Error: the mix %s: flow %u (ports %u > %u) "
				"matches a rule; the rows need flows that "
				"match none\n",
				bm_mix_names[mix], t[j], q.sport, q.dport);
			return -EINVAL;
		}
		t[j] = xnf_mix_ports(p->sport, p->dport, t[j]);
	}
	return 0;
}

/*
 * The 3-NF chain, l3fwd, the firewall and the stateful chain, tail-called,
 * under each mix with the flow cache on and off, one group: v[(row *
 * __BM_MIX_MAX + mix) * 2 + (cache off)], then the stateful chain's flood
 * (a new connection every packet), cache on and off: v[BM_MIX_FLOOD +
 * (cache off)]. The harness writes each packet's ports from the mix's
 * table (bench.bpf.c); the hit rate is the cache's, hits / (hits +
 * misses) over every NF that caches, from the counters of the timed runs;
 * "new conn" the share of the timed packets that made a connection.
 */
#define BM_MIX_FLOOD (BM_MIX_ROWS * __BM_MIX_MAX * 2)

static int bm_mixes(struct bm *b, const struct bm_frame *chain_frame,
		    const struct xnf_fw_pkt *p, const __u8 nh_mac[6])
{
	enum { NV = BM_MIX_FLOOD + 2 };
	struct bm_inst *in = &b->inst[0];
	__u32 *tab[__BM_MIX_MAX] = {}, i, m, k;
	struct bm_var *v = calloc(NV, sizeof(*v));
	int err = v ? 0 : -ENOMEM;

	for (m = 0; m < __BM_MIX_MAX && !err; m++) {
		tab[m] = calloc(XNF_GEN_MIX_SIZE, sizeof(__u32));
		err = tab[m] ? bm_mix_table(m, p, &in->rules, tab[m]) : -ENOMEM;
	}
	for (i = 0; i < BM_MIX_ROWS && !err; i++) {
		bool stateful = bm_mix_rows[i] == BM_MIX_STATEFUL;
		const char *chain = stateful ?
					    BM_NAT_CHAIN :
					    bm_chain_rows[bm_mix_rows[i]].chain;
		bool l3 = strstr(chain, "l3fwd");
		struct bm_expect e = {
			.action = !strcmp(chain, "firewall") ? XDP_PASS :
							       XDP_REDIRECT,
			.hit_slot = strstr(chain, "firewall") ? -1 : -2,
			.dmac = l3 ? nh_mac : NULL,
			.ttl_dec = l3,
		}, flood;

		if (stateful)
			err = bm_mix_stateful(b, p, &e, &flood);
		for (m = 0; m < __BM_MIX_MAX && !err; m++) {
			for (k = 0; k < 2 && !err; k++) {
				struct bm_var *x =
					&v[(i * __BM_MIX_MAX + m) * 2 + k];

				err = bm_var_load(b, x,
						  stateful ? &b->mix_ct[0] : in,
						  chain, false, false,
						  chain_frame, &e);
				x->fc = k ? BM_FC_OFF : BM_FC_HIT;
				x->vary = bm_sport_off(chain_frame);
				x->mix = tab[m];
				/* Each flow's connection, made before the
				 * rounds: a whole table's worth of packets
				 * covers every entry once. */
				if (!err && stateful && !k)
					err = bm_timed(b, x, XNF_GEN_MIX_SIZE,
						       NULL);
			}
		}
		for (k = 0; k < 2 && stateful && !err; k++) {
			struct bm_var *x = &v[BM_MIX_FLOOD + k];

			err = bm_var_load(b, x, &b->mix_ct[1], chain, false,
					  false, chain_frame, &flood);
			x->fc = k ? BM_FC_OFF_MANY : BM_FC_MISS;
			x->vary = bm_sport_off(chain_frame);
			x->wide = true;
		}
	}
	err = err ?: bm_group(b, v, NV);
	if (!err) {
		printf("\nTraffic mixes: tail-called, %u firewall rules, each "
		       "packet's ports from the mix's table\n(65,536 entries; "
		       "flow i: source port + i, destination port + i / 65,536); "
		       "hit rate = hits / (hits + misses);\nnew conn = packets "
		       "that made a connection / packets. %s: %s, the policy of "
		       "the\nconntrack group (-S), masquerade oif %s; the mixes' "
		       "connections made before the rounds;\nflood: a new "
		       "connection every packet (ports from the harness' "
		       "counter), a table of its own\n",
		       in->rules.n, bm_mix_label(BM_MIX_ROWS - 1), BM_NAT_CHAIN,
		       BM_PREFIX "1");
		printf("  %-22s %-15s %-6s %-9s %9s %9s %9s %7s %8s %8s\n",
		       "chain", "mix", "cache", "verdict", "baseline",
		       "measured", "net", "spread", "hit rate", "new conn");
		for (k = 0; k < NV; k++) {
			const struct bm_var *x = &v[k];
			__u64 n = x->fc_hit + x->fc_miss;

			printf("  %-22s %-15s %-6s ",
			       bm_mix_label(k < BM_MIX_FLOOD ?
						    k / (2 * __BM_MIX_MAX) :
						    BM_MIX_ROWS - 1),
			       k < BM_MIX_FLOOD ?
				       bm_mix_names[k / 2 % __BM_MIX_MAX] :
				       "flood",
			       k % 2 ? "off" : "on");
			printf("%-9s %9.1f %9.1f %9.1f %7.1f ",
			       bm_action_name(x->e.action), x->base_med,
			       x->meas_med, x->net_med, x->spread);
			if (n)
				printf("%8.4f ", (double)x->fc_hit / n);
			else
				printf("%8s ", "-");
			if (x->e.ct)
				printf("%8.4f\n",
				       (double)x->ct_created / x->ct_packets);
			else
				printf("%8s\n", "-");
		}
		printf("\nCache on over off, per mix: median over the rounds of "
		       "(net on - net off)\n");
		printf("  %-22s %15s %15s %15s %15s\n", "chain", bm_mix_names[0],
		       bm_mix_names[1], bm_mix_names[2], "flood");
		for (i = 0; i < BM_MIX_ROWS; i++) {
			const struct bm_var *x = &v[i * __BM_MIX_MAX * 2];

			printf("  %-22s %15.1f %15.1f %15.1f ", bm_mix_label(i),
			       bm_paired(b, &x[0], &x[1], 1),
			       bm_paired(b, &x[2], &x[3], 1),
			       bm_paired(b, &x[4], &x[5], 1));
			if (bm_mix_rows[i] == BM_MIX_STATEFUL)
				printf("%15.1f\n",
				       bm_paired(b, &v[BM_MIX_FLOOD],
						 &v[BM_MIX_FLOOD + 1], 1));
			else
				printf("%15s\n", "-");
		}
	}
	for (k = 0; v && k < NV; k++)
		bm_var_free(&v[k]);
	for (m = 0; m < __BM_MIX_MAX; m++)
		free(tab[m]);
	free(v);
	return err;
}

/* ---- l3fwd's receive checks ---- */

/*
 * The harness into xnf_bench_rx (bpf/bench.bpf.c: the checks l3fwd runs
 * first, on their own), timed in rounds with the baseline like a group:
 * what the checks cost out of the l3fwd figure above. Each frame is
 * checked once to pass them (XDP_DROP; XDP_PASS means a check refused it).
 */
static int bm_rx_checks(struct bm *b, const struct bm_frame *chain_frame,
			double l3fwd_net)
{
	static const struct {
		const char *label;
		struct pkt_spec s;
	} rows[] = {
		{ "IPv4, 20-byte header", {} },
		{ "IPv4, 60-byte header",
		  { .family = 4, .ip_opts = 40, .frame_len = 96 } },
		{ "IPv6", { .family = 6 } },
	};
	enum { NROWS = sizeof(rows) / sizeof(rows[0]) };
	int rx_fd = bpf_program__fd(b->h->progs.xnf_bench_rx);
	double base[BM_MAX_RUNS], net[NROWS][BM_MAX_RUNS], ns;
	struct bm_frame f[NROWS];
	__u32 i, r;
	int ret, err = 0;

	for (i = 0; i < NROWS; i++) {
		int len;

		if (!i) {
			f[i] = *chain_frame;
			continue;
		}
		len = pkt_build(f[i].data, sizeof(f[i].data), &rows[i].s);
		if (len < 0)
			return -EINVAL;
		f[i].len = len;
	}
	for (r = 0; r < b->o.runs && !err; r++) {
		for (i = 0; i <= NROWS && !err; i++) {
			const struct bm_frame *fr = &f[i ? i - 1 : 0];

			memcpy(b->h->bss->xnf_bench_frame, fr->data, BM_FRAME);
			err = bm_set_target(b, i ? rx_fd : b->drop_fd);
			if (!err)
				err = bm_run(b, b->bench_fd, fr, b->o.repeat,
					     NULL, NULL, &ret, &ns);
			if (!err && ret != XDP_DROP) {
				fprintf(stderr,
					"Error: receive checks, %s: the packet "
					"got %s, expected drop (passes the "
					"checks)\n",
					i ? rows[i - 1].label : "baseline",
					bm_action_name(ret));
				err = -EPROTO;
			}
			if (!err && !i)
				base[r] = ns;
			else if (!err)
				net[i - 1][r] = ns - base[r];
		}
	}
	bm_set_target(b, b->drop_fd);
	if (err) {
		if (err != -EPROTO)
			fprintf(stderr, "Error: receive checks: test run: %s\n",
				strerror(-err));
		return err;
	}
	printf("\nl3fwd's receive checks alone (bpf/rx.bpf.h: IPv4 header checksum, "
	       "martians),\nnet of the baseline (%.1f ns), median over %u rounds\n",
	       bm_median(base, b->o.runs), b->o.runs);
	for (i = 0; i < NROWS; i++)
		printf("  %-22s %7.1f ns\n", rows[i].label,
		       bm_median(net[i], b->o.runs));
	printf("  (l3fwd tail-called, checks included: %.1f ns net, above)\n",
	       l3fwd_net);
	return 0;
}

/* ---- userspace NFs (AF_XDP workers) ---- */

#define BM_VEC 64

struct bm_uvec {
	__u8 buf[BM_VEC][128];
	struct xnf_upkt p[BM_VEC];
};

static double bm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* What a worker does to a vector before its NFs run: a fresh copy of the
 * frame (l3fwd rewrites it), parsed, headed for the default egress. */
static void bm_uvec_fill(struct bm_uvec *v, const struct bm_frame *f,
			 __u32 ifindex, __u32 egress)
{
	__u32 i;

	for (i = 0; i < BM_VEC; i++) {
		memcpy(v->buf[i], f->data, f->len);
		v->p[i].data = v->buf[i];
		v->p[i].len = f->len;
		xnf_uparse(v->buf[i], f->len, ifindex, 0, &v->p[i].meta);
		v->p[i].meta.verdict = XNF_V_REDIRECT;
		v->p[i].egress_ifindex = egress;
	}
}

/* ns per packet of @nf (NULL: the copy and parse alone), over @vecs
 * vectors of BM_VEC frames. */
static double bm_urun(struct xnf_unf *nf, struct bm_uvec *v,
		      const struct bm_frame *f, __u32 ifindex, __u32 egress,
		      __u32 vecs)
{
	double t0 = bm_now_ns();
	__u32 k;

	for (k = 0; k < vecs; k++) {
		bm_uvec_fill(v, f, ifindex, egress);
		if (nf)
			nf->ops->run(nf, v->p, BM_VEC);
	}
	return (bm_now_ns() - t0) / ((double)vecs * BM_VEC);
}

struct bm_urow {
	const char *nf;
	__u32 inst;   /* rule set: bm_fw_sizes[inst] */
	int frame;    /* 0 the chains' packet, 1 to the next hop's
				      * MAC, 2 last rule, 3 no match */
	__u8 verdict; /* what the packet must end with */
};

static int bm_userspace(struct bm *b, const struct bm_frame *chain_frame,
			const struct bm_frame *l2_frame,
			const struct bm_fw_size *fw)
{
	static const struct bm_urow rows[] = {
		{ "macswap", 0, 0, XNF_V_REDIRECT },
		{ "l3fwd", 0, 0, XNF_V_REDIRECT },
		{ "l2fwd", 0, 1, XNF_V_REDIRECT },
		{ "ratelimit", 0, 0, XNF_V_REDIRECT },
		{ "firewall", 0, 2, 0xff },
		{ "firewall", 0, 3, 0xff },
		{ "firewall", 1, 2, 0xff },
		{ "firewall", 1, 3, 0xff },
		{ "firewall", 2, 2, 0xff },
		{ "firewall", 2, 3, 0xff },
	};
	struct xnf_unf *nf[sizeof(rows) / sizeof(rows[0])] = {};
	double base[BM_MAX_RUNS],
		net[sizeof(rows) / sizeof(rows[0])][BM_MAX_RUNS];
	__u32 nrows = sizeof(rows) / sizeof(rows[0]), i, r;
	__u32 vecs = b->o.repeat / BM_VEC ?: 1;
	struct bm_uvec *v;
	char msg[256];
	int err = 0;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < nrows && !err; i++) {
		struct xnf_unf_env env = {
			.dp = b->inst[rows[i].inst].dp,
			.ingress_ifindex = b->ifindex[0],
			.default_egress = b->ifindex[0],
			/* a bucket that never runs dry: the policer's
			 * bookkeeping, not its drops */
			.args = !strcmp(rows[i].nf, "ratelimit") ?
					"rate=1000000000,burst=1000000000" :
					NULL,
		};
		const struct bm_frame *f =
			rows[i].frame == 0 ?
				chain_frame :
			rows[i].frame == 1 ?
				l2_frame :
				&fw[rows[i].inst].frame[rows[i].frame - 2];

		err = xnf_unf_new(xnf_unf_find(rows[i].nf), &env, &nf[i], msg,
				  sizeof(msg));
		if (err) {
			fprintf(stderr,
				"Error: cannot start userspace NF %s: %s\n",
				rows[i].nf, msg);
			break;
		}
		/* The path the row claims: checked once before timing. */
		bm_uvec_fill(v, f, b->ifindex[0], b->ifindex[0]);
		nf[i]->ops->run(nf[i], v->p, BM_VEC);
		if (rows[i].verdict != 0xff &&
		    v->p[0].meta.verdict != rows[i].verdict) {
			fprintf(stderr,
				"Error: userspace %s gave verdict %s, not %s\n",
				rows[i].nf,
				xnf_verdict_name(v->p[0].meta.verdict),
				xnf_verdict_name(rows[i].verdict));
			err = -EINVAL;
		}
	}
	for (r = 0; r < b->o.runs && !err; r++) {
		base[r] = bm_urun(NULL, v, chain_frame, b->ifindex[0],
				  b->ifindex[0], vecs);
		for (i = 0; i < nrows; i++) {
			const struct bm_frame *f =
				rows[i].frame == 0 ?
					chain_frame :
				rows[i].frame == 1 ?
					l2_frame :
					&fw[rows[i].inst].frame[rows[i].frame - 2];

			net[i][r] = bm_urun(nf[i], v, f, b->ifindex[0],
					    b->ifindex[0], vecs) -
				    base[r];
		}
	}
	if (!err) {
		printf("\nUserspace NFs (AF_XDP workers), run() over vectors of %d "
		       "frames, same tables;\nnet of copying and parsing the vector "
		       "(%.1f ns per packet), median over %u rounds\n",
		       BM_VEC, bm_median(base, b->o.runs), b->o.runs);
		for (i = 0; i < nrows; i++) {
			char label[48];

			if (!strcmp(rows[i].nf, "firewall"))
				snprintf(label, sizeof(label),
					 "firewall, %u rules, %s",
					 b->inst[rows[i].inst].rules.n,
					 rows[i].frame == 2 ? "last" :
							      "no match");
			else
				snprintf(label, sizeof(label), "%s", rows[i].nf);
			printf("  %-32s %7.1f ns\n", label,
			       bm_median(net[i], b->o.runs));
		}
	}
	for (i = 0; i < nrows; i++)
		if (nf[i])
			xnf_unf_free(nf[i]);
	free(v);
	return err;
}

/* ---- the generator's pacing (bpf/gen.bpf.c, live frames) ---- */

#define BM_PACE_PPS	   50000
#define BM_PACE_FRAMES	   2000
#define BM_PACE_COOKIE	   0x5a5a1234
#define BM_PACE_PROBE	   42	/* Ethernet + IPv4 + UDP: the short probe */
#define BM_PACE_CAPTURE_MS 1000 /* the capture ends after this long idle */

static int bm_u64_cmp(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* @n runs of the generator, live, out of @ifindex; 0 or -errno. */
static int bm_gen_run(struct xnf_gen *g, __u32 ifindex, __u32 n)
{
	static __u8 in[4 + 60];
	__u32 cookie = BM_PACE_COOKIE;
	struct xdp_md ctx = { .data = 4,
			      .data_end = sizeof(in),
			      .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = sizeof(in), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = n, .batch_size = 64,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, );

	memcpy(in, &cookie, 4);
	return bpf_prog_test_run_opts(bpf_program__fd(g->progs.xnf_gen), &o) ?
		       -errno :
		       0;
}

/* Reads the captured generator frames of @fd until none came for
 * BM_PACE_CAPTURE_MS; each frame's lateness (send time - due time) into
 * @late. Returns how many; frames early (never, if the generator is
 * right) are counted in @early. */
static __u32 bm_pace_read(int fd, const __u8 *smac, __u64 t0, __u64 period,
			  __u64 *late, __u32 max, __u64 *early)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	static __u8 buf[2048];
	struct xnf_probe_short pr;
	__u32 got = 0;
	ssize_t len;
	__u64 due;

	while (got < max && poll(&pfd, 1, BM_PACE_CAPTURE_MS) > 0) {
		while ((len = recv(fd, buf, sizeof(buf), 0)) > 0 && got < max) {
			if (len < BM_PACE_PROBE + (ssize_t)sizeof(pr) ||
			    memcmp(buf + 6, smac, 6))
				continue; /* not the generator's */
			memcpy(&pr, buf + BM_PACE_PROBE, sizeof(pr));
			if (ntohl(pr.magic) != XNF_PROBE_MAGIC_SHORT)
				continue;
			due = t0 + pr.seq * period;
			if (pr.ts_ns < due)
				(*early)++;
			late[got++] = pr.ts_ns > due ? pr.ts_ns - due : 0;
		}
	}
	return got;
}

/*
 * How late the paced generator sends: BM_PACE_FRAMES live frames at
 * BM_PACE_PPS out of bm0 in back-to-back calls, as xnf-gen makes them,
 * captured on bm0p; a frame's lateness is its send time (the probe's
 * timestamp) minus the time it was due. A timing, never a failure: what
 * must hold exactly (every frame, in order, none early) is the unit test
 * gen_paced_live's. Frames a full veth ring dropped (bm0p's softirq ran
 * late) are left out, and their number shown.
 */
static int bm_pacing(struct bm *b)
{
	const __u64 period = 1000000000ull / BM_PACE_PPS, n = BM_PACE_FRAMES;
	struct xnf_gen_spec spec = { .family = 4,
				     .proto = IPPROTO_UDP,
				     .dmac = { 0x02, 0, 0, 0, 0, 0xbb },
				     .sport = 1024,
				     .dport = 9,
				     .flows = 1,
				     .dist = XNF_SIZE_FIXED,
				     .size = 64 };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	volatile struct xnf_gen_state *st;
	struct bpf_link *link = NULL;
	struct xnf_gen *g = NULL;
	__u64 *late, t0, end, early = 0;
	int fd = -1, rcvbuf = 16 << 20, err;
	char msg[200] = "";
	bool raised;
	__u32 got;

	late = calloc(n, sizeof(*late));
	memcpy(spec.smac, b->mac[0], 6);
	inet_pton(AF_INET, "192.0.2.1", spec.src);
	inet_pton(AF_INET, "198.51.100.1", spec.dst);
	g = xnf_gen__open();
	if (!late || !g) {
		err = -ENOMEM;
		goto out;
	}
	err = xnf_gen_cfg_build(&spec, (struct xnf_gen_cfg *)&g->rodata->cfg,
				&raised, msg, sizeof(msg));
	if (err)
		goto out;
	((struct xnf_gen_cfg *)&g->rodata->cfg)->cookie = BM_PACE_COOKIE;
	err = xnf_gen__load(g);
	if (err)
		goto out;
	/* a veth takes redirected frames in NAPI: XDP or GRO on the peer */
	err = bm_sh("ethtool -K " BM_PREFIX "0p gro on >/dev/null");
	if (err)
		goto out;
	sll.sll_ifindex = if_nametoindex(BM_PREFIX "0p");
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    htons(ETH_P_ALL));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	/* held in the XDP dispatcher: calls without a pause */
	link = bpf_program__attach_xdp(g->progs.xnf_gen, b->ifindex[0]);
	if (!link) {
		err = -errno;
		goto out;
	}
	st = &g->bss->state;
	/* a first call sends nothing (limit 0): what the first one costs
	 * more is not the pacing's */
	st->pace_t0 = ~0ull;
	st->pace_ps = period * 1000;
	err = bm_gen_run(g, b->ifindex[0], 1000);
	if (err)
		goto out;
	t0 = bm_now_ns() + 1000000;
	st->pace_t0 = t0;
	st->limit = n;
	st->max_late_ns = ~0ull; /* late frames leave late: measure it */
	st->pace_batch = 1;
	st->pace_ps = period * 1000;
	end = t0 + 10 * n * period;
	while (st->seq < n && bm_now_ns() < end && !err)
		err = bm_gen_run(g, b->ifindex[0], 100000);
	if (err)
		goto out;
	got = bm_pace_read(fd, spec.smac, t0, period, late, n, &early);
	qsort(late, got, sizeof(*late), bm_u64_cmp);
	printf("\nGenerator pacing: %llu live frames at %d pps out of %s "
	       "(bpf/gen.bpf.c, paced as xnf-gen\npaces them), captured on "
	       "%sp; lateness = send time - due time\n",
	       (unsigned long long)n, BM_PACE_PPS, BM_DEV, BM_DEV);
	if (got)
		printf("  p50 %llu ns, p90 %llu ns, p99 %llu ns, max %llu ns; "
		       "%llu early; %llu of %llu not captured\n",
		       (unsigned long long)late[got / 2],
		       (unsigned long long)late[got * 9 / 10],
		       (unsigned long long)late[got * 99 / 100],
		       (unsigned long long)late[got - 1],
		       (unsigned long long)early,
		       (unsigned long long)(st->seq - got),
		       (unsigned long long)st->seq);
	else
		printf("  no frame captured (%llu sent)\n",
		       (unsigned long long)st->seq);
out:
	if (err)
		fprintf(stderr, "Error: generator pacing: %s%s%s\n",
			strerror(-err), *msg ? ": " : "", msg);
	bpf_link__destroy(link);
	if (fd >= 0)
		close(fd);
	xnf_gen__destroy(g);
	free(late);
	return err;
}

int main(int argc, char **argv)
{
	struct bm b = {
		.o = { .repeat = 1000000, .runs = 5, .seed = 1, .cpu = -1 }
	};
	struct bm_var fw_var[2 * BM_FW_SIZES] = {};
	struct bm_fw_size fw[BM_FW_SIZES] = {};
	struct bm_frame chain_frame, l2_frame, mp_frame;
	struct xnf_fw_pkt mp;
	struct bm_rules *big;
	struct xnf_fw_pkt p;
	struct bm_facts m;
	__u32 cpu, i, j, k;
	bool verbose = false, groups, one_set;
	__u8 nh_mac[6];
	int opt, err;

	while ((opt = getopt(argc, argv, "r:n:c:s:o:CHSNTMGvh")) != -1) {
		switch (opt) {
		case 'r':
			err = bm_parse_u32(optarg, 1, 1u << 30, &b.o.repeat);
			break;
		case 'n':
			err = bm_parse_u32(optarg, 1, BM_MAX_RUNS, &b.o.runs);
			break;
		case 'c':
			err = bm_parse_u32(optarg, 0, CPU_SETSIZE - 1, &cpu);
			b.o.cpu = cpu;
			break;
		case 's':
			err = bm_parse_u32(optarg, 0, ~0u, &b.o.seed);
			break;
		case 'C':
			b.o.chains_only = true;
			err = 0;
			break;
		case 'o':
			b.o.only = optarg;
			b.o.chains_only = true;
			err = 0;
			break;
		case 'H':
			b.o.hit_only = true;
			b.o.chains_only = true;
			err = 0;
			break;
		case 'S':
			b.o.ct_only = true;
			err = 0;
			break;
		case 'N':
			b.o.nat_only = true;
			err = 0;
			break;
		case 'T':
			b.o.trace_only = true;
			err = 0;
			break;
		case 'M':
			b.o.mix_only = true;
			err = 0;
			break;
		case 'G':
			b.o.targets = true;
			b.o.chains_only = true;
			err = 0;
			break;
		case 'v':
			verbose = true;
			err = 0;
			break;
		case 'h':
			bm_usage(argv[0], stdout);
			return 0;
		default:
			bm_usage(argv[0], stderr);
			return 2;
		}
		if (err) {
			fprintf(stderr, "Error: bad value '%s' for -%c\n",
				optarg, opt);
			bm_usage(argv[0], stderr);
			return 2;
		}
	}
	/* The targets need the forms -H leaves out, the rows -o leaves out. */
	if (b.o.targets && (b.o.hit_only || b.o.only)) {
		fprintf(stderr, "Error: -G times its own rows and forms; run it "
				"without -H and -o\n");
		return 2;
	}

	bm_facts_read(&m);
	if (xnf_sandbox(BM_PREFIX, BM_PORTS))
		return 1;
	xnf_libbpf_logging();
	if (verbose)
		xnf_set_log_level(XNF_LOG_DEBUG);
	if ((err = bm_pin(&b.o.cpu))) {
		fprintf(stderr, "Error: cannot pin to CPU %d: %s\n", b.o.cpu,
			strerror(-err));
		return 1;
	}
	b.ncpus = xnf_ncpus();
	if (b.ncpus <= 0) {
		fprintf(stderr, "Error: cannot count possible CPUs\n");
		return 1;
	}
	if (bm_host_setup(&b))
		goto fail;

	b.h = xnf_bench__open();
	if (!b.h || xnf_bench__load(b.h)) {
		fprintf(stderr,
			"Error: cannot load the harness (bpf/bench.bpf.c): "
			"%s\n",
			strerror(errno));
		goto fail;
	}
	b.bench_fd = bpf_program__fd(b.h->progs.xnf_bench);
	b.drop_fd = bpf_program__fd(b.h->progs.xnf_bench_drop);

	/* One instance per rule set, and the packets that exercise it. */
	/* -S and -N need the 10-rule set alone. */
	groups = b.o.ct_only || b.o.nat_only || b.o.trace_only || b.o.mix_only;
	/* The chain rows (-C, -o, -H) need it alone too: the 10,000-rule
	 * set and its packet search took most of a short run's time. */
	one_set = groups || b.o.chains_only;
	for (i = 0; i < (one_set ? 1 : BM_FW_SIZES); i++) {
		struct bm_inst *in = &b.inst[i];
		char name[16];

		snprintf(name, sizeof(name), "%u", bm_fw_sizes[i]);
		if (bm_inst_open(&b, in, name) ||
		    bm_rules_make(&in->rules, bm_fw_sizes[i], b.o.seed) ||
		    bm_rules_install(in, XNF_FW_ALLOW))
			goto fail;
		fw[i].slot = bm_find_last(&in->rules, b.o.seed, &p, &fw[i].rank);
		if (fw[i].slot < 0 ||
		    bm_frame_build(&fw[i].frame[0], &p, b.mac[0])) {
			fprintf(stderr,
				"Error: found no packet that reaches any of "
				"the %u rules\n",
				in->rules.n);
			goto fail;
		}
		fw[i].none_kind = bm_find_none(&in->rules, b.o.seed, &p);
		if (fw[i].none_kind < 0 ||
		    bm_frame_build(&fw[i].frame[1], &p, b.mac[0])) {
			fprintf(stderr,
				"Error: found no packet that matches none of "
				"the %u rules\n",
				in->rules.n);
			goto fail;
		}
	}
	bm_nh_mac(BM_DST_ROUTE, nh_mac);
	if (bm_find_chain_pkt(&b.inst[0].rules, b.o.seed, &p) ||
	    bm_frame_build(&chain_frame, &p, b.mac[0]) ||
	    bm_frame_build(&l2_frame, &p, nh_mac)) {
		fprintf(stderr,
			"Error: found no packet to %s that the chains' "
			"firewall allows\n",
			BM_DST);
		goto fail;
	}
	/* The miss rows send it from every source port: none may match a
	 * rule, or they would time another path. */
	for (i = 0; i < 65536; i++) {
		struct xnf_fw_pkt q = p;

		q.sport = i;
		if (xnf_fw_linear(b.inst[0].rules.r, b.inst[0].rules.n, &q) >= 0) {
			fprintf(stderr,
				"Error: the chains' packet from port %u "
				"matches a rule; the miss rows need one that "
				"matches none from any port\n",
				i);
			goto fail;
		}
	}
	mp = p;
	inet_pton(AF_INET, BM_MP_DST, mp.dst);
	if (bm_frame_build(&mp_frame, &mp, b.mac[0])) {
		fprintf(stderr, "Error: cannot build a packet to %s\n",
			BM_MP_DST);
		goto fail;
	}

	big = &b.inst[one_set ? 0 : BM_FW_SIZES - 1].rules;
	printf("xnf bench-micro: ns per packet, BPF_PROG_TEST_RUN\n");
	printf("  kernel    %s\n", m.kernel);
	printf("  cpu       %s, %ld online; measuring on CPU %d\n", m.cpu,
	       m.online, b.o.cpu);
	printf("  bpf       jit_enable %s, bpf_stats_enabled %s\n", m.jit,
	       m.stats);
	printf("  spectre2  %s\n", m.spectre);
	printf("  repeat    %u packets per run (warm-up %u), %u rounds, median\n",
	       b.o.repeat, b.o.repeat / 10 ?: 1, b.o.runs);
	printf("  baseline  harness (restore %d bytes, tail call) into XDP_DROP, "
	       "timed every round\n",
	       BM_FRAME);
	printf("  net       median over rounds of measured - that round's baseline;\n"
	       "            spread = max - min of net over the rounds\n");
	printf("  tables    %zu routes, %zu FDB entries; firewall: first N rules of "
	       "xnf_fw_generate(seed %u)\n"
	       "            that are not catch-alls (%u of the first %u left out), "
	       "default allow\n",
	       BM_ROUTES, BM_ROUTES, b.o.seed, big->dropped,
	       big->n + big->dropped);
	fflush(stdout);

	if (groups) {
		if ((b.o.ct_only && bm_ct(&b, &chain_frame, &p, nh_mac)) ||
		    (b.o.nat_only && bm_nat(&b, &chain_frame, &p)) ||
		    (b.o.trace_only && bm_trace(&b, &chain_frame, nh_mac)) ||
		    (b.o.mix_only && bm_mixes(&b, &chain_frame, &p, nh_mac)))
			goto fail;
		printf("\nPackets (ingress %s; TTL 64)\n  %-22s %s\n", BM_DEV,
		       "chains, conntrack", chain_frame.desc);
		err = 0;
		goto out;
	}
	if (bm_chains(&b, &chain_frame, &l2_frame, &mp_frame, nh_mac))
		goto fail;
	if (b.o.chains_only) {
		if (b.o.targets)
			bm_targets(&b);
		err = 0;
		goto out;
	}
	if (bm_rx_checks(&b, &chain_frame,
			 bm_chain_rows[BM_ROW_L3FWD].v[0].net_med) ||
	    bm_firewall(&b, fw, fw_var) || bm_ct(&b, &chain_frame, &p, nh_mac) ||
	    bm_nat(&b, &chain_frame, &p) || bm_trace(&b, &chain_frame, nh_mac) ||
	    bm_userspace(&b, &chain_frame, &l2_frame, fw) || bm_pacing(&b))
		goto fail;

	printf("\nPackets (ingress %s; the IPv4 ones have TTL 64)\n", BM_DEV);
	printf("  %-22s %s\n", "chains", chain_frame.desc);
	printf("  %-22s the same, sent to the next hop's MAC\n", "l2fwd alone");
	for (i = 0; i < BM_FW_SIZES; i++) {
		const struct bm_inst *in = &b.inst[i];
		char label[32];

		for (j = 0; j < 2; j++) {
			snprintf(label, sizeof(label), "%u rules, %s",
				 in->rules.n, j ? "no match" : "last");
			printf("  %-22s %s\n", label, fw[i].frame[j].desc);
		}
		if (fw[i].none_kind > 0) {
			printf("  %-22s (none of %d random packets of kind", "",
			       BM_SEARCH);
			for (k = 0; k < (__u32)fw[i].none_kind; k++)
				printf("%s %s", k ? "," : "", bm_kinds[k].name);
			printf(" escapes all rules)\n");
		}
		if (fw[i].rank + 1 != in->rules.n) {
			char dead[32];

			if (fw[i].rank + 2 == in->rules.n)
				snprintf(dead, sizeof(dead), "rule %u",
					 in->rules.n);
			else
				snprintf(dead, sizeof(dead), "rules %u..%u",
					 fw[i].rank + 2, in->rules.n);
			printf("  %-22s no packet reaches %s (covered by earlier "
			       "rules);\n  %-22s rule %u (slot %d, %s) is the last "
			       "reachable one\n",
			       "", dead, "", fw[i].rank + 1, fw[i].slot,
			       in->rules.r[fw[i].slot].action == XNF_FW_DROP ?
				       "drop" :
				       "allow");
		}
	}

	{
		const struct bm_chain_row *r = &bm_chain_rows[BM_ROW_3NF];
		double hop = bm_paired(&b, &r->v[0], &r->v[1], r->nfs);
		const struct bm_var *lo = &fw_var[0],
				    *hi = &fw_var[2 * (BM_FW_SIZES - 1)];
		double last = bm_paired(&b, &hi[0], &lo[0], 0);
		double none = bm_paired(&b, &hi[1], &lo[1], 0);

		printf("\nTargets (from the net figures; each value is the median "
		       "over the rounds of\nthe value computed within a round)\n");
		printf("  (a) tail-called hop over fused: %s, %u hops\n",
		       r->label, r->nfs);
		printf("      (tail-called - fused) / %u  = %6.1f ns   target <= %.0f ns"
		       "   %s\n",
		       r->nfs, hop, BM_HOP_TARGET, bm_pf(hop <= BM_HOP_TARGET));
		printf("  (b) firewall, %u rules / %u rules\n", big->n,
		       b.inst[0].rules.n);
		printf("      last rule                = %6.2f x    target <= %.0f x"
		       "    %s\n",
		       last, BM_FW_TARGET, bm_pf(last <= BM_FW_TARGET));
		printf("      no match                 = %6.2f x    target <= %.0f x"
		       "    %s\n",
		       none, BM_FW_TARGET, bm_pf(none <= BM_FW_TARGET));
	}
	err = 0;
	goto out;
fail:
	err = 1;
out:
	xnf_bench__destroy(b.h);
	xnf_fibfwd__destroy(b.fibfwd);
	for (i = 0; i < BM_FW_SIZES; i++)
		bm_inst_close(&b.inst[i]);
	for (i = 0; i < 2; i++)
		bm_inst_close(&b.ct[i]);
	for (i = 0; i < BM_NAT_INSTS; i++)
		bm_inst_close(&b.nat[i]);
	bm_inst_close(&b.trace);
	for (i = 0; i < 2; i++)
		bm_inst_close(&b.mix_ct[i]);
	return err;
}
