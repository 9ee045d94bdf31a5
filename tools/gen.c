// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf-gen - a traffic generator: frames out of a device, as fast as the
 * kernel allows or at a set rate, each with a probe (sequence number and
 * send time) that xnf-sink reads.
 *
 *   xnf-gen DEV [count N] [duration SEC] [rate PPS] [size BYTES|imix|dc]
 *               [flows N [zipf S]] [ipv4|ipv6] [udp|tcp] [src ADDR] [dst ADDR]
 *               [smac MAC] [dmac MAC] [sport N] [dport N] [cpu N] [-j]
 *
 * How: gen.bpf.c writes each frame, and BPF_PROG_TEST_RUN with live frames
 * (BPF_F_TEST_XDP_LIVE_FRAMES) sends it out of DEV (XDP_TX of a live frame
 * is a redirect to DEV; a veth's peer receives it in NAPI like a frame
 * from a NIC).
 *
 * - As fast as possible: few large calls (~50 ms each), flushed to the
 *   device every 64 frames.
 * - At a rate: frame i is due at start + i / rate. Up to 1 kpps the
 *   thread sleeps (then spins) until a frame is due and sends it in a call
 *   of its own. Above, each run of the program (one live frame) sends the
 *   next frame if it is due and otherwise drops the live frame unsent
 *   (~350 ns): the thread polls in the kernel, frames leave within a run of
 *   their time, and one call covers ~20 ms. Up to 125 kpps every frame is
 *   flushed on its own (bursts of 1); above, a flush every 2, 4, .. 64
 *   runs, the fewest the rate needs (8 at 1 Mpps: 1-3 frames per burst on
 *   average). A frame more than max(1 ms, 2 periods) late (the thread was
 *   preempted) moves the schedule on, and a late frame that would make a
 *   burst longer than 1 ms worth of frames (or one flush) waits a period:
 *   catch-up bursts stay short, the achieved rate is then lower and says
 *   so (slips).
 *   Above 1 kpps the sending CPU is busy for the whole run, as with any
 *   polling generator.
 *   Why not one call per burst from user space at all rates: each call
 *   creates and destroys a page pool; when its frames are still in flight
 *   (a receiver on another CPU), the kernel releases it later, and at
 *   thousands of calls a second those releases (each one walks every
 *   registered memory model) kept a kworker 80% busy here and halved the
 *   achieved rate.
 * - A test-run call with more than one frame adds the program to the
 *   kernel's XDP dispatcher and removes it again, which costs ~25 ms per
 *   call here. With the program attached to DEV itself (a bpf_link, gone
 *   with the process) the dispatcher already holds it and calls cost
 *   ~20 us. The attached program passes every frame that really arrives on
 *   DEV (they lack the run's cookie). A device that has an XDP program
 *   already is left alone, and calls then pay the pause (a warning says
 *   so; paced calls are then made 25 times longer).
 *
 * AF_XDP was measured too and not used: copy mode on veth sends at most
 * ~0.45 Mpps one frame per sendto() (0.58 Mpps in any burst), and its
 * frames reach the receiver as skbs, so a DUT would be measured on another
 * receive path at low rates than at high ones.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <math.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "traffic.h"
#include "json.h"
#include "neigh.h"
#include "gen.skel.h"

#define DURATION_MAX	3600.0
#define BATCH		XNF_GEN_FLUSH_MAX /* frames per flush to the device */
#define PACED_CALL_NS	20e6 /* paced: one call (with the dispatcher held) */
#define PACED_FLUSH_PPS 125000.0  /* paced: pps per frame of a flush */
#define PACED_LATE_NS	1000000.0 /* paced: lateness that moves the schedule */
#define PACED_USER_MAX	1000.0	  /* paced from user space up to this rate */

struct opts {
	const char *dev;
	__u64 count;	 /* 0: no bound */
	double duration; /* 0: no bound */
	double rate;	 /* 0: as fast as possible */
	double zipf;	 /* 0: the flows in turn; else the Zipf exponent */
	const char *size_arg;
	struct xnf_gen_spec spec;
	bool have_src, have_dst, have_smac, have_dmac, have_family;
	int cpu; /* -1: not pinned */
	bool json;
};

struct result {
	__u64 sent, bytes, errors, calls, burst_max;
	__u64 bad_cookie; /* runs passed because the cookie was written over */
	__u64 bursts; /* paced: frames that left apart from the one before */
	__u64 slips;  /* paced: times the schedule was moved */
	__u32 batch;  /* frames per flush */
	/* flushes by the frames they carried: the arrivals at the receiving
	 * ring, a burst each (tools/xnf_model, --burst flush) */
	__u64 flushes[XNF_GEN_FLUSH_MAX + 1];
	/* as fast as possible: the pauses by length (xnf_traffic.h) */
	__u64 pauses[XNF_GEN_PAUSE_BUCKETS], pause_ns[XNF_GEN_PAUSE_BUCKETS];
	double duration;
	__u64 t0_ns; /* CLOCK_MONOTONIC: where duration starts */
	bool held;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xnf-gen DEV [count N] [duration SEC] [rate PPS] [size BYTES|imix|dc]\n"
		"               [flows N [zipf S]] [ipv4|ipv6] [udp|tcp] [src ADDR] [dst ADDR]\n"
		"               [smac MAC] [dmac MAC] [sport N] [dport N] [cpu N] [-j]\n"
		"Sends frames out of DEV (in this network namespace) until count frames or\n"
		"duration seconds (at most 3600), whichever comes first; one of them is needed.\n"
		"  rate PPS     pace the frames evenly (default: as fast as possible)\n"
		"  size         frame size with FCS, 64..1518 (default 64); imix: 7:4:1 of\n"
		"               64/594/1518; dc: data-center mix, median 120 B (see README)\n"
		"  flows N      flow i has source port sport+i and source address +i/65536;\n"
		"               the flows take turns, unless zipf S: flow i comes with\n"
		"               probability proportional to (i+1)^-S (S > 0, e.g. 1.0)\n"
		"  src, dst     default: DEV's first address / 198.51.100.1 (2001:db8:2::1)\n"
		"  smac, dmac   default: DEV's MAC / the neighbour entry of dst, else broadcast\n"
		"  sport, dport default 1024, 9;  cpu N: pin the sending thread;  -j: JSON\n");
}

static int parse_u64(const char *s, __u64 min, __u64 max, __u64 *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Address of either family; sets the family when it was not given. */
static int parse_addr(struct opts *o, const char *s, __u8 *out)
{
	int fam = strchr(s, ':') ? 6 : 4;

	if (o->have_family && fam != o->spec.family)
		return -EINVAL;
	if (inet_pton(fam == 6 ? AF_INET6 : AF_INET, s, out) != 1)
		return -EINVAL;
	o->spec.family = fam;
	o->have_family = true;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	__u64 v;
	int i;

	memset(o, 0, sizeof(*o));
	o->cpu = -1;
	o->size_arg = "64";
	o->spec.family = 4;
	o->spec.proto = IPPROTO_UDP;
	o->spec.flows = 1;
	o->spec.sport = 1024;
	o->spec.dport = 9;
	o->spec.dist = XNF_SIZE_FIXED;
	o->spec.size = 64;

	for (i = 1; i < argc; i++) {
		const char *k = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = true;

		if (!strcmp(k, "-j") || !strcmp(k, "--json")) {
			o->json = true;
			continue;
		}
		if (!strcmp(k, "-h") || !strcmp(k, "--help") ||
		    !strcmp(k, "help")) {
			usage(stdout);
			exit(0);
		}
		if (!o->dev) {
			o->dev = k;
			continue;
		}
		if (!strcmp(k, "ipv4") || !strcmp(k, "ipv6")) {
			int fam = k[3] == '6' ? 6 : 4;

			if (o->have_family && o->spec.family != fam) {
				fprintf(stderr,
					"Error: %s contradicts the addresses or family given before\n",
					k);
				return -EINVAL;
			}
			o->spec.family = fam;
			o->have_family = true;
			continue;
		}
		if (!strcmp(k, "udp") || !strcmp(k, "tcp")) {
			o->spec.proto = k[0] == 't' ? IPPROTO_TCP : IPPROTO_UDP;
			continue;
		}
		if (!val) {
			fprintf(stderr,
				"Error: %s needs a value (xnf-gen -h for the usage)\n",
				k);
			return -EINVAL;
		}
		if (!strcmp(k, "count")) {
			if (parse_u64(val, 1, ~0ull, &o->count))
				goto bad;
		} else if (!strcmp(k, "duration")) {
			if (parse_double(val, 0.000001, 1e12, &o->duration))
				goto bad;
			if (o->duration > DURATION_MAX)
				o->duration = DURATION_MAX;
		} else if (!strcmp(k, "rate")) {
			if (parse_double(val, 1, 1e9, &o->rate))
				goto bad;
		} else if (!strcmp(k, "size")) {
			o->size_arg = val;
			if (!strcmp(val, "imix")) {
				o->spec.dist = XNF_SIZE_IMIX;
			} else if (!strcmp(val, "dc")) {
				o->spec.dist = XNF_SIZE_DC;
			} else {
				if (parse_u64(val, 1, 65535, &v))
					goto bad;
				o->spec.dist = XNF_SIZE_FIXED;
				o->spec.size = v;
			}
		} else if (!strcmp(k, "flows")) {
			if (parse_u64(val, 1, XNF_GEN_FLOWS_MAX, &v))
				goto bad;
			o->spec.flows = v;
		} else if (!strcmp(k, "zipf")) {
			if (parse_double(val, 0.01, 10, &o->zipf))
				goto bad;
		} else if (!strcmp(k, "src")) {
			if (parse_addr(o, val, o->spec.src))
				goto bad;
			o->have_src = true;
		} else if (!strcmp(k, "dst")) {
			if (parse_addr(o, val, o->spec.dst))
				goto bad;
			o->have_dst = true;
		} else if (!strcmp(k, "smac")) {
			if (xnf_parse_mac(val, o->spec.smac))
				goto bad;
			o->have_smac = true;
		} else if (!strcmp(k, "dmac")) {
			if (xnf_parse_mac(val, o->spec.dmac))
				goto bad;
			o->have_dmac = true;
		} else if (!strcmp(k, "sport")) {
			if (parse_u64(val, 0, 65535, &v))
				goto bad;
			o->spec.sport = v;
		} else if (!strcmp(k, "dport")) {
			if (parse_u64(val, 0, 65535, &v))
				goto bad;
			o->spec.dport = v;
		} else if (!strcmp(k, "cpu")) {
			if (parse_u64(val, 0, CPU_SETSIZE - 1, &v))
				goto bad;
			o->cpu = v;
		} else {
			takes = false;
		}
		if (!takes) {
			fprintf(stderr,
				"Error: unknown argument '%s' (xnf-gen -h for the usage)\n",
				k);
			return -EINVAL;
		}
		i++;
		continue;
bad:
		fprintf(stderr,
			"Error: bad value '%s' for %s (xnf-gen -h for the usage)\n",
			val, k);
		return -EINVAL;
	}
	if (!o->dev) {
		usage(stderr);
		return -EINVAL;
	}
	if (!o->count && !o->duration) {
		fprintf(stderr,
			"Error: give count N or duration SEC (or both): xnf-gen never sends unbounded\n");
		return -EINVAL;
	}
	return 0;
}

/* Defaults that depend on DEV: its MAC, its first address, the neighbour
 * entry of dst. */
static int fill_defaults(struct opts *o, __u32 ifindex)
{
	static const char *def_src[2] = { "192.0.2.1", "2001:db8:1::1" };
	static const char *def_dst[2] = { "198.51.100.1", "2001:db8:2::1" };
	int v6 = o->spec.family == 6, af = v6 ? AF_INET6 : AF_INET;
	struct ifaddrs *ifa, *a;
	struct xnf_neigh nb;
	struct ifreq ifr;
	int fd;

	/* a device that is down takes frames and sends nothing */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->dev);
	if (fd >= 0 && !ioctl(fd, SIOCGIFFLAGS, &ifr) &&
	    !(ifr.ifr_flags & IFF_UP)) {
		fprintf(stderr, "Error: %s is down (ip link set %s up)\n",
			o->dev, o->dev);
		close(fd);
		return -ENETDOWN;
	}
	if (fd >= 0)
		close(fd);

	if (!o->have_smac) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->dev);
		if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr)) {
			fprintf(stderr,
				"Error: cannot read the MAC of %s: %s (give smac)\n",
				o->dev, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -errno;
		}
		close(fd);
		memcpy(o->spec.smac, ifr.ifr_hwaddr.sa_data, 6);
	}
	if (!o->have_src) {
		inet_pton(af, def_src[v6], o->spec.src);
		if (!getifaddrs(&ifa)) {
			for (a = ifa; a; a = a->ifa_next) {
				if (!a->ifa_addr || a->ifa_addr->sa_family != af ||
				    strcmp(a->ifa_name, o->dev))
					continue;
				if (v6) {
					struct sockaddr_in6 *s6 = (void *)a->ifa_addr;

					if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
						continue;
					memcpy(o->spec.src, &s6->sin6_addr, 16);
				} else {
					memcpy(o->spec.src,
					       &((struct sockaddr_in *)a->ifa_addr)
							->sin_addr,
					       4);
				}
				break;
			}
			freeifaddrs(ifa);
		}
	}
	if (!o->have_dst)
		inet_pton(af, def_dst[v6], o->spec.dst);
	if (!o->have_dmac) {
		if (xnf_neigh_lookup(o->spec.family, o->spec.dst, ifindex, &nb,
				     1) > 0) {
			memcpy(o->spec.dmac, nb.lladdr, 6);
		} else {
			memset(o->spec.dmac, 0xff, 6);
			fprintf(stderr,
				"Warning: no neighbour entry for the destination on %s: "
				"sending to ff:ff:ff:ff:ff:ff (give dmac for a router)\n",
				o->dev);
		}
	}
	return 0;
}

struct runner {
	int prog_fd;
	__u8 buf[4 + XNF_GEN_FRAME_MAX];
	struct xdp_md ctx;
	__u32 buflen;
	volatile struct xnf_gen_state *st;
};

/* Runs the program n times in one test-run call, flushing to the device
 * every batch runs. 0, -EINTR (a signal came: fewer may have run, st->seq
 * tells) or -errno. */
static int send_frames(struct runner *r, __u32 n, __u32 batch)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = r->buf,
		    .data_size_in = r->buflen, .ctx_in = &r->ctx,
		    .ctx_size_in = sizeof(r->ctx), .repeat = n,
		    .batch_size = batch, .flags = BPF_F_TEST_XDP_LIVE_FRAMES, );

	return bpf_prog_test_run_opts(r->prog_fd, &o) ? -errno : 0;
}

static int run_fast(struct runner *r, const struct opts *o, struct result *res)
{
	/* Calls of ~50 ms (~500 ms when each pays the dispatcher pause). */
	double call_s = res->held ? 0.05 : 0.5, rate = 0;
	__u64 t0 = now_ns(), t, t1, sent, n, chunk = 16384;
	__u64 end = o->duration ? t0 + (__u64)(o->duration * 1e9) : 0;
	int err;

	res->t0_ns = t0;
	for (;;) {
		sent = r->st->seq;
		t = now_ns();
		if (stop || (o->count && sent >= o->count) || (end && t >= end))
			break;
		n = chunk;
		if (o->count && n > o->count - sent)
			n = o->count - sent;
		if (end && rate > 0) {
			double left = rate * (end - t) / 1e9;

			if (left < n)
				n = left < 1 ? 1 : (__u64)left;
		}
		err = send_frames(r, n, BATCH);
		t1 = now_ns();
		res->calls++;
		if (err && err != -EINTR) {
			fprintf(stderr,
				"Error: sending on %s (BPF_PROG_TEST_RUN): %s\n",
				o->dev, strerror(-err));
			return err;
		}
		/* Every run sends: full flushes, and the call's last partial. */
		res->flushes[BATCH] += (r->st->seq - sent) / BATCH;
		if ((r->st->seq - sent) % BATCH)
			res->flushes[(r->st->seq - sent) % BATCH]++;
		if (r->st->seq > sent && t1 > t) {
			rate = (r->st->seq - sent) * 1e9 / (t1 - t);
			chunk = rate * call_s;
			if (chunk < 1024)
				chunk = 1024;
			if (chunk > (1u << 30))
				chunk = 1u << 30;
		}
		res->duration = (t1 - t0) / 1e9;
	}
	res->burst_max = BATCH;
	res->batch = BATCH;
	for (int i = 0; i < XNF_GEN_PAUSE_BUCKETS; i++) {
		res->pauses[i] = r->st->pause_hist[i];
		res->pause_ns[i] = r->st->pause_ns[i];
	}
	return 0;
}

/* Sleeps, then spins, until @t (CLOCK_MONOTONIC ns). */
static void wait_until(__u64 t)
{
	__u64 now = now_ns();

	if (t > now + 200000) {
		__u64 w = t - 100000;
		struct timespec ts = { .tv_sec = w / 1000000000ull,
				       .tv_nsec = w % 1000000000ull };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	while (!stop && now_ns() < t)
		;
}

/* Low rates, paced from user space: one call per frame. */
static int run_paced_user(struct runner *r, const struct opts *o,
			  struct result *res)
{
	double period = 1e9 / o->rate;
	double late = 2 * period > PACED_LATE_NS ? 2 * period : PACED_LATE_NS;
	__u64 t0, t, k, due, limit = ~0ull, end = ~0ull, first = 0;
	int err;

	if (o->count)
		limit = o->count;
	if (o->duration && ceil(o->duration * o->rate) < limit)
		limit = ceil(o->duration * o->rate);
	t0 = now_ns() + 100000;
	first = t0;
	res->t0_ns = first;
	if (o->duration)
		end = t0 + (__u64)(o->duration * 1e9);
	for (;;) {
		k = r->st->seq;
		if (stop || k >= limit)
			break;
		due = t0 + (__u64)(k * period);
		if (due >= end)
			break;
		wait_until(due);
		t = now_ns();
		if (stop || t >= end)
			break;
		if (t - due > late) {
			t0 += t - due - late;
			res->slips++;
		}
		err = send_frames(r, 1, 1);
		res->calls++;
		if (err && err != -EINTR) {
			fprintf(stderr,
				"Error: sending on %s (BPF_PROG_TEST_RUN): %s\n",
				o->dev, strerror(-err));
			return err;
		}
	}
	if (r->st->seq)
		res->duration = (r->st->last_ns - first + period) / 1e9;
	res->burst_max = r->st->seq ? 1 : 0;
	res->flushes[1] = r->st->seq;
	res->bursts = r->st->seq;
	res->batch = 1;
	return 0;
}

/* Higher rates, paced in the kernel (see the top of this file). */
static int run_paced_kernel(struct runner *r, const struct opts *o,
			    struct result *res)
{
	volatile struct xnf_gen_state *st = r->st;
	double call_ns = res->held ? PACED_CALL_NS : 25 * PACED_CALL_NS;
	double iter_ns = 300, period = 1e9 / o->rate;
	__u64 t0, t, t1, n, runs, before, limit = ~0ull;
	__u32 batch = 1;
	int err;

	if (o->count)
		limit = o->count;
	if (o->duration && ceil(o->duration * o->rate) < limit)
		limit = ceil(o->duration * o->rate);
	/* One frame per flush while a run with a flush keeps up (~1.6 us
	 * here); above, the fewest frames per flush the rate needs. */
	while (batch < BATCH && o->rate > batch * PACED_FLUSH_PPS)
		batch *= 2;
	t0 = now_ns() + 100000;
	res->t0_ns = t0;
	st->pace_t0 = t0;
	st->limit = limit;
	st->end_ns = o->duration ? t0 + (__u64)(o->duration * 1e9) : 0;
	st->max_late_ns = 2 * period > PACED_LATE_NS ? 2 * period : PACED_LATE_NS;
	st->pace_batch = batch;
	st->burst_cap = ceil(o->rate * PACED_LATE_NS / 1e9) > batch ?
				ceil(o->rate * PACED_LATE_NS / 1e9) :
				batch;
	st->pace_ps = llround(period * 1000) ? llround(period * 1000) : 1;
	for (;;) {
		t = now_ns();
		if (stop || st->seq >= limit || (st->end_ns && t >= st->end_ns))
			break;
		n = call_ns / iter_ns;
		if (st->end_ns && n > (st->end_ns - t) / iter_ns + 1000)
			n = (st->end_ns - t) / iter_ns + 1000;
		if (n < 1000)
			n = 1000;
		if (n > (1u << 30))
			n = 1u << 30;
		n = (n + batch - 1) / batch * batch; /* calls start a batch */
		before = st->runs;
		err = send_frames(r, n, batch);
		t1 = now_ns();
		res->calls++;
		if (err && err != -EINTR) {
			fprintf(stderr,
				"Error: sending on %s (BPF_PROG_TEST_RUN): %s\n",
				o->dev, strerror(-err));
			return err;
		}
		runs = st->runs - before;
		if (runs && t1 > t)
			iter_ns = (double)(t1 - t) / runs;
	}
	st->pace_ps = 0;
	/* n frames span n periods: from when the first was due to a period
	 * after the last one left */
	if (st->seq)
		res->duration = (st->last_ns - t0 + period) / 1e9;
	res->burst_max = st->burst_max;
	res->bursts = st->bursts;
	res->slips = st->slips;
	res->batch = batch;
	for (int i = 0; i <= XNF_GEN_FLUSH_MAX; i++)
		res->flushes[i] = st->flush_hist[i];
	if (st->flush_frames)
		res->flushes[st->flush_frames > XNF_GEN_FLUSH_MAX ?
				     XNF_GEN_FLUSH_MAX :
				     st->flush_frames]++;
	return 0;
}

static void print_result(const struct opts *o, const struct result *res,
			 const struct xnf_gen_cfg *cfg)
{
	double pps = res->duration > 0 ? res->sent / res->duration : 0;
	double gbps = res->duration > 0 ? res->bytes * 8 / res->duration / 1e9 :
					  0;
	double gbps_l1 = res->duration > 0 ? (res->bytes + 20.0 * res->sent) *
						     8 / res->duration / 1e9 :
					     0;
	double burst_mean = res->bursts ? (double)res->sent / res->bursts : BATCH;
	const char *fam = o->spec.family == 6 ? "ipv6" : "ipv4";
	const char *proto = o->spec.proto == IPPROTO_TCP ? "tcp" : "udp";

	if (o->json) {
		jw_object(NULL);
		jw_string("dev", o->dev);
		jw_uint("sent", res->sent);
		jw_uint("bytes", res->bytes);
		jw_float("duration_s", res->duration);
		/* CLOCK_MONOTONIC, where duration_s starts: for sampling other
		 * processes' CPU time over exactly the sending (bench.py) */
		jw_uint("t_start_ns", res->t0_ns);
		jw_float("pps", pps);
		jw_float("gbps", gbps);
		jw_float("gbps_l1", gbps_l1);
		if (o->rate)
			jw_float("rate_target", o->rate);
		else
			jw_null("rate_target");
		jw_uint("burst", res->burst_max);
		if (o->spec.dist == XNF_SIZE_FIXED)
			jw_uint("size", o->spec.size);
		else
			jw_string("size", o->size_arg);
		jw_uint("flows", o->spec.flows);
		jw_string("mix", o->zipf ? "zipf" : "round-robin");
		if (o->zipf)
			jw_float("zipf_s", o->zipf);
		else
			jw_null("zipf_s");
		jw_string("family", fam);
		jw_string("proto", proto);
		jw_string("method", "live");
		/* beyond the interface the harness reads */
		jw_float("burst_mean", burst_mean);
		jw_float("mean_size", xnf_gen_mean_size(cfg));
		jw_uint("flush", res->batch);
		jw_array("flushes");
		for (int i = 0; i <= XNF_GEN_FLUSH_MAX; i++)
			jw_uint(NULL, res->flushes[i]);
		jw_end_array();
		jw_uint("slips", res->slips);
		if (o->rate) {
			jw_null("pauses");
		} else {
			jw_array("pauses");
			for (int i = 0; i < XNF_GEN_PAUSE_BUCKETS; i++) {
				jw_array(NULL);
				jw_uint(NULL, res->pauses[i]);
				jw_uint(NULL, res->pause_ns[i]);
				jw_end_array();
			}
			jw_end_array();
		}
		jw_uint("calls", res->calls);
		jw_uint("errors", res->errors);
		jw_uint("bad_cookie", res->bad_cookie);
		jw_bool("dispatcher_held", res->held);
		jw_end_object();
		return;
	}
	printf("xnf-gen %s: sent %llu frames (size %s, mean %.1f B, %s/%s, %u flow%s%s) in %.3f s\n",
	       o->dev, (unsigned long long)res->sent, o->size_arg,
	       xnf_gen_mean_size(cfg), fam, proto, o->spec.flows,
	       o->spec.flows == 1 ? "" : "s", o->zipf ? " zipf" : "",
	       res->duration);
	if (o->zipf)
		printf("  flows in a Zipf mix, s = %g (flow 0 the most frequent)\n",
		       o->zipf);
	printf("  %.3f Mpps, %.3f Gb/s (%.3f Gb/s with preamble and gap)\n",
	       pps / 1e6, gbps, gbps_l1);
	if (o->rate)
		printf("  paced at %.0f pps: bursts of at most %llu frames, %.2f on average, "
		       "a flush every %u runs, schedule moved %llu times\n",
		       o->rate, (unsigned long long)res->burst_max, burst_mean,
		       res->batch, (unsigned long long)res->slips);
	else {
		__u64 n = 0, ns = 0;

		for (int i = 0; i < XNF_GEN_PAUSE_BUCKETS; i++) {
			n += res->pauses[i];
			ns += res->pause_ns[i];
		}
		printf("  as fast as possible: %llu calls, flushed to the device every %d frames, "
		       "paused %.1f ms in %llu gaps of %.1f us or more\n",
		       (unsigned long long)res->calls, BATCH, ns / 1e6,
		       (unsigned long long)n, (1u << XNF_GEN_PAUSE_SHIFT) / 1e3);
	}
	if (res->errors)
		printf("  %llu frames could not be written (dropped)\n",
		       (unsigned long long)res->errors);
	if (res->bad_cookie)
		printf("  %llu runs passed a frame whose cookie was written over\n",
		       (unsigned long long)res->bad_cookie);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct bpf_link *link = NULL;
	struct xnf_gen *skel = NULL;
	struct result res = { 0 };
	struct runner *r = NULL;
	struct xnf_gen_cfg *cfg;
	char err_msg[256];
	__u32 ifindex, len, cookie = 0;
	bool raised;
	struct opts o;
	int err;

	if (parse_args(argc, argv, &o))
		return 2;
	ifindex = if_nametoindex(o.dev);
	if (!ifindex) {
		fprintf(stderr,
			"Error: no device %s in this network namespace\n", o.dev);
		return 1;
	}
	err = fill_defaults(&o, ifindex);
	if (err)
		return 1;
	libbpf_set_print(NULL);

	skel = xnf_gen__open();
	r = calloc(1, sizeof(*r));
	if (!skel || !r) {
		fprintf(stderr, "Error: cannot open the generator program: %s\n",
			strerror(errno));
		err = -ENOMEM;
		goto out;
	}
	cfg = (struct xnf_gen_cfg *)&skel->rodata->cfg;
	err = xnf_gen_cfg_build(&o.spec, cfg, &raised, err_msg, sizeof(err_msg));
	if (err) {
		fprintf(stderr, "Error: %s\n", err_msg);
		goto out;
	}
	if (raised)
		fprintf(stderr,
			"Warning: frames of the %s mix below %u bytes are sent as %u bytes "
			"(the smallest that carries %s/%s headers and the probe)\n",
			o.size_arg, xnf_gen_min_size(o.spec.family, o.spec.proto),
			xnf_gen_min_size(o.spec.family, o.spec.proto),
			o.spec.family == 6 ? "ipv6" : "ipv4",
			o.spec.proto == IPPROTO_TCP ? "tcp" : "udp");
	/* Both halves non-zero: only the first 2 bytes are checked. */
	while (!(cookie & 0xffff) || !(cookie >> 16))
		if (getrandom(&cookie, sizeof(cookie), 0) != sizeof(cookie))
			cookie = (__u32)now_ns() | 1;
	cfg->cookie = cookie;
	if (o.zipf) {
		err = xnf_mix_zipf(o.spec.flows, o.zipf,
				   skel->data_mix->xnf_gen_mix, XNF_GEN_MIX_SIZE);
		if (err) {
			fprintf(stderr,
				"Error: cannot build the Zipf mix of %u flows, s = %g\n",
				o.spec.flows, o.zipf);
			goto out;
		}
		cfg->mix = XNF_GEN_MIX_TABLE;
	}
	err = xnf_gen__load(skel);
	if (err) {
		fprintf(stderr,
			"Error: cannot load the generator program: %s (run as root)\n",
			strerror(-err));
		goto out;
	}

	link = bpf_program__attach_xdp(skel->progs.xnf_gen, ifindex);
	res.held = link != NULL;
	if (!link)
		fprintf(stderr,
			"Warning: cannot attach to %s (%s): every call pauses ~25 ms, "
			"during which no frame leaves\n",
			o.dev, strerror(errno));

	if (o.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			err = -errno;
			fprintf(stderr, "Error: cannot pin to CPU %d: %s\n",
				o.cpu, strerror(errno));
			goto out;
		}
	}

	/* The first frame of each page: cookie as metadata, the headers, a
	 * zero payload (see gen.bpf.c); the program sizes it. */
	len = 0;
	for (__u32 i = 0; i < cfg->nsizes; i++)
		if (cfg->sizes[i] - 4u > len)
			len = cfg->sizes[i] - 4;
	memcpy(r->buf, &cookie, 4);
	memcpy(r->buf + 4, cfg->hdr,
	       xnf_gen_hdr_len(o.spec.family, o.spec.proto));
	r->buflen = 4 + len;
	r->ctx.data = 4;
	r->ctx.data_end = r->buflen;
	r->ctx.ingress_ifindex = ifindex;
	r->prog_fd = bpf_program__fd(skel->progs.xnf_gen);
	r->st = &skel->bss->state;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!o.rate)
		err = run_fast(r, &o, &res);
	else if (o.rate <= PACED_USER_MAX)
		err = run_paced_user(r, &o, &res);
	else
		err = run_paced_kernel(r, &o, &res);
	res.sent = r->st->seq;
	res.bytes = r->st->bytes;
	res.errors = r->st->errors;
	res.bad_cookie = r->st->bad_cookie;
	bpf_link__destroy(link);
	link = NULL;
	if (err)
		goto out;
	print_result(&o, &res, cfg);
out:
	bpf_link__destroy(link);
	xnf_gen__destroy(skel);
	free(r);
	return err ? 1 : 0;
}
