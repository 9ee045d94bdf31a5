// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf-gen - a traffic generator: frames out of a device, as fast as the
 * kernel allows or at a set rate, each with a probe (sequence number and
 * send time) that xnf-sink reads.
 *
 *   xnf-gen DEV [count N] [duration SEC] [rate PPS] [size BYTES|imix|dc]
 *               [flows N] [ipv4|ipv6] [udp|tcp] [src ADDR] [dst ADDR]
 *               [smac MAC] [dmac MAC] [sport N] [dport N] [cpu N] [-j]
 *
 * How: gen.bpf.c writes each frame, and BPF_PROG_TEST_RUN with live frames
 * (BPF_F_TEST_XDP_LIVE_FRAMES) sends it out of DEV (XDP_TX of a live frame
 * is a redirect to DEV; a veth's peer receives it in NAPI like a frame
 * from a NIC).
 *
 * - As fast as possible: few large calls (tens of ms each), so that the
 *   fixed cost of a call is negligible.
 * - At a rate: frame i is due at start + i / rate; each call sends the
 *   frames that are due, and the thread sleeps or spins until the next one
 *   is due. A call costs ~20 us here (more on a busy box), so frames go
 *   one per call up to ~40 kpps and in bursts of about rate x call time
 *   above (2-3 at 100 kpps, ~25-40 at 1 Mpps): no larger than the rate
 *   needs. Frames that are late (the thread was preempted) catch up in
 *   bursts of at most max(100 us worth, 2 x rate x usual call time), never
 *   more than 1 ms worth. The largest and the mean burst are reported.
 * - A test-run call with more than one frame adds the program to the
 *   kernel's XDP dispatcher and removes it again, which costs ~25 ms per
 *   call here. With the program attached to DEV itself (a bpf_link, gone
 *   with the process) the dispatcher already holds it and calls cost
 *   ~20 us. The attached program passes every frame that really arrives on
 *   DEV (they lack the run's cookie). A device that has an XDP program
 *   already is left alone, and calls then pay the pause (a warning says so).
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

#define DURATION_MAX 3600.0
#define PACED_BURST_US 100.0     /* catch-up bursts: at least this long at the rate */
#define BATCH 64                 /* frames per flush to the device */

struct opts {
	const char *dev;
	__u64 count;             /* 0: no bound */
	double duration;         /* 0: no bound */
	double rate;             /* 0: as fast as possible */
	const char *size_arg;
	struct xnf_gen_spec spec;
	bool have_src, have_dst, have_smac, have_dmac, have_family;
	int cpu;                 /* -1: not pinned */
	bool json;
};

struct result {
	__u64 sent, bytes, errors, calls, burst_max;
	double duration;
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
"               [flows N] [ipv4|ipv6] [udp|tcp] [src ADDR] [dst ADDR]\n"
"               [smac MAC] [dmac MAC] [sport N] [dport N] [cpu N] [-j]\n"
"Sends frames out of DEV (in this network namespace) until count frames or\n"
"duration seconds (at most 3600), whichever comes first; one of them is needed.\n"
"  rate PPS     pace the frames evenly (default: as fast as possible)\n"
"  size         frame size with FCS, 64..1518 (default 64); imix: 7:4:1 of\n"
"               64/594/1518; dc: data-center mix, median 120 B (see README)\n"
"  flows N      flow i has source port sport+i and source address +i/65536\n"
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
		if (!strcmp(k, "-h") || !strcmp(k, "--help") || !strcmp(k, "help")) {
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
				fprintf(stderr, "Error: %s contradicts the addresses or family given before\n", k);
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
			fprintf(stderr, "Error: %s needs a value (xnf-gen -h for the usage)\n", k);
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
			fprintf(stderr, "Error: unknown argument '%s' (xnf-gen -h for the usage)\n", k);
			return -EINVAL;
		}
		i++;
		continue;
bad:
		fprintf(stderr, "Error: bad value '%s' for %s (xnf-gen -h for the usage)\n", val, k);
		return -EINVAL;
	}
	if (!o->dev) {
		usage(stderr);
		return -EINVAL;
	}
	if (!o->count && !o->duration) {
		fprintf(stderr, "Error: give count N or duration SEC (or both): xnf-gen never sends unbounded\n");
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

	if (!o->have_smac) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->dev);
		if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr)) {
			fprintf(stderr, "Error: cannot read the MAC of %s: %s (give smac)\n",
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
					memcpy(o->spec.src, &((struct sockaddr_in *)a->ifa_addr)->sin_addr, 4);
				}
				break;
			}
			freeifaddrs(ifa);
		}
	}
	if (!o->have_dst)
		inet_pton(af, def_dst[v6], o->spec.dst);
	if (!o->have_dmac) {
		if (xnf_neigh_lookup(o->spec.family, o->spec.dst, ifindex, &nb, 1) > 0) {
			memcpy(o->spec.dmac, nb.lladdr, 6);
		} else {
			memset(o->spec.dmac, 0xff, 6);
			fprintf(stderr, "Warning: no neighbour entry for the destination on %s: "
				"sending to ff:ff:ff:ff:ff:ff (give dmac for a router)\n", o->dev);
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

/* Sends n frames in one test-run call. 0, -EINTR (a signal came: fewer
 * may have gone, st->seq tells) or -errno. */
static int send_frames(struct runner *r, __u32 n)
{
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = r->buf,
		.data_size_in = r->buflen,
		.ctx_in = &r->ctx,
		.ctx_size_in = sizeof(r->ctx),
		.repeat = n,
		.batch_size = BATCH,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
	);

	return bpf_prog_test_run_opts(r->prog_fd, &o) ? -errno : 0;
}

static int run_fast(struct runner *r, const struct opts *o, struct result *res)
{
	/* Calls of ~50 ms (~500 ms when each pays the dispatcher pause). */
	double call_s = res->held ? 0.05 : 0.5, rate = 0;
	__u64 t0 = now_ns(), t, t1, sent, n, chunk = 16384;
	__u64 end = o->duration ? t0 + (__u64)(o->duration * 1e9) : 0;
	int err;

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
		err = send_frames(r, n);
		t1 = now_ns();
		res->calls++;
		if (err && err != -EINTR) {
			fprintf(stderr, "Error: sending on %s (BPF_PROG_TEST_RUN): %s\n",
				o->dev, strerror(-err));
			return err;
		}
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

static int run_paced(struct runner *r, const struct opts *o, struct result *res)
{
	double period = 1e9 / o->rate, call_ns = 20000, min_ns = 1e9, top_ns = 1e6;
	__u64 base = ceil(o->rate * PACED_BURST_US / 1e6), last = ~0ull;
	__u64 t0, t, t1, k, due, n, cap, end;
	int err;

	if (base < 1)
		base = 1;
	if (o->count)
		last = o->count;
	if (o->duration) {
		/* frames whose slot lies within the duration */
		__u64 m = ceil(o->duration * o->rate);

		if (m < last)
			last = m ? m : 1;
	}
	t0 = now_ns();
	end = o->duration ? t0 + (__u64)(o->duration * 1e9) : ~0ull;
	for (;;) {
		k = r->st->seq;
		t = now_ns();
		/* a box too slow for the rate still stops at the duration */
		if (stop || k >= last || t >= end)
			break;
		if (t < t0 + (__u64)(k * period)) {
			wait_until(t0 + (__u64)(k * period));
			continue;
		}
		due = (__u64)((t - t0) / period) + 1 - k;
		/* The frames due, but no more than 100 us worth of them or
		 * twice what one call takes at the rate (a busy box makes
		 * calls slower), and never more than 1 ms worth (or twice
		 * the cheapest call): late frames catch up without one big
		 * burst. */
		cap = ceil(o->rate * 2 * call_ns / 1e9);
		if (cap > ceil(o->rate * top_ns / 1e9))
			cap = ceil(o->rate * top_ns / 1e9);
		if (cap < base)
			cap = base;
		n = due < cap ? due : cap;
		if (n > last - k)
			n = last - k;
		err = send_frames(r, n);
		t1 = now_ns();
		/* the usual cost of a call: quick to fall, slow to rise, so
		 * that a preempted call does not inflate the bursts; and the
		 * least of more than one frame: calls that pay the dispatcher
		 * pause (~25 ms, not for one frame) need bursts beyond 1 ms
		 * worth */
		if (n > 1 && t1 - t < min_ns)
			min_ns = t1 - t;
		top_ns = 2 * min_ns > 1e6 ? 2 * min_ns : 1e6;
		if (t1 - t < call_ns)
			call_ns = 0.5 * call_ns + 0.5 * (t1 - t);
		else
			call_ns = 0.98 * call_ns + 0.02 * (t1 - t);
		res->calls++;
		if (err && err != -EINTR) {
			fprintf(stderr, "Error: sending on %s (BPF_PROG_TEST_RUN): %s\n",
				o->dev, strerror(-err));
			return err;
		}
		if (n > res->burst_max)
			res->burst_max = n;
		res->duration = (t1 - t0) / 1e9;
	}
	return 0;
}

static void print_result(const struct opts *o, const struct result *res,
			 const struct xnf_gen_cfg *cfg)
{
	double pps = res->duration > 0 ? res->sent / res->duration : 0;
	double gbps = res->duration > 0 ? res->bytes * 8 / res->duration / 1e9 : 0;
	double gbps_l1 = res->duration > 0 ?
		(res->bytes + 20.0 * res->sent) * 8 / res->duration / 1e9 : 0;
	double burst_mean = res->calls ? (double)res->sent / res->calls : 0;
	const char *fam = o->spec.family == 6 ? "ipv6" : "ipv4";
	const char *proto = o->spec.proto == IPPROTO_TCP ? "tcp" : "udp";

	if (!o->rate)
		burst_mean = BATCH;
	if (o->json) {
		jw_object(NULL);
		jw_string("dev", o->dev);
		jw_uint("sent", res->sent);
		jw_uint("bytes", res->bytes);
		jw_float("duration_s", res->duration);
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
		jw_string("family", fam);
		jw_string("proto", proto);
		jw_string("method", "live");
		/* beyond the interface the harness reads */
		jw_float("burst_mean", burst_mean);
		jw_float("mean_size", xnf_gen_mean_size(cfg));
		jw_uint("calls", res->calls);
		jw_uint("errors", res->errors);
		jw_bool("dispatcher_held", res->held);
		jw_end_object();
		return;
	}
	printf("xnf-gen %s: sent %llu frames (size %s, mean %.1f B, %s/%s, %u flow%s) in %.3f s\n",
	       o->dev, (unsigned long long)res->sent, o->size_arg, xnf_gen_mean_size(cfg),
	       fam, proto, o->spec.flows, o->spec.flows == 1 ? "" : "s", res->duration);
	printf("  %.3f Mpps, %.3f Gb/s (%.3f Gb/s with preamble and gap)\n",
	       pps / 1e6, gbps, gbps_l1);
	if (o->rate)
		printf("  paced at %.0f pps: bursts of at most %llu frames, %.2f on average, %llu calls\n",
		       o->rate, (unsigned long long)res->burst_max, burst_mean,
		       (unsigned long long)res->calls);
	else
		printf("  as fast as possible: %llu calls, flushed to the device every %d frames\n",
		       (unsigned long long)res->calls, BATCH);
	if (res->errors)
		printf("  %llu frames could not be written (dropped)\n",
		       (unsigned long long)res->errors);
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
		fprintf(stderr, "Error: no device %s in this network namespace\n", o.dev);
		return 1;
	}
	err = fill_defaults(&o, ifindex);
	if (err)
		return 1;
	libbpf_set_print(NULL);

	skel = xnf_gen__open();
	r = calloc(1, sizeof(*r));
	if (!skel || !r) {
		fprintf(stderr, "Error: cannot open the generator program: %s\n", strerror(errno));
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
		fprintf(stderr, "Warning: frames of the %s mix below %u bytes are sent as %u bytes "
			"(the smallest that carries %s/%s headers and the probe)\n", o.size_arg,
			xnf_gen_min_size(o.spec.family, o.spec.proto),
			xnf_gen_min_size(o.spec.family, o.spec.proto),
			o.spec.family == 6 ? "ipv6" : "ipv4",
			o.spec.proto == IPPROTO_TCP ? "tcp" : "udp");
	while (!cookie)
		if (getrandom(&cookie, sizeof(cookie), 0) != sizeof(cookie))
			cookie = (__u32)now_ns() | 1;
	cfg->cookie = cookie;
	err = xnf_gen__load(skel);
	if (err) {
		fprintf(stderr, "Error: cannot load the generator program: %s (run as root)\n",
			strerror(-err));
		goto out;
	}

	link = bpf_program__attach_xdp(skel->progs.xnf_gen, ifindex);
	res.held = link != NULL;
	if (!link)
		fprintf(stderr, "Warning: cannot attach to %s (%s): every call pauses ~25 ms, "
			"paced rates come in bursts of rate x 25 ms\n", o.dev, strerror(errno));

	if (o.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			err = -errno;
			fprintf(stderr, "Error: cannot pin to CPU %d: %s\n", o.cpu, strerror(errno));
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
	memcpy(r->buf + 4, cfg->hdr, xnf_gen_hdr_len(o.spec.family, o.spec.proto));
	r->buflen = 4 + len;
	r->ctx.data = 4;
	r->ctx.data_end = r->buflen;
	r->ctx.ingress_ifindex = ifindex;
	r->prog_fd = bpf_program__fd(skel->progs.xnf_gen);
	r->st = &skel->bss->state;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	err = o.rate ? run_paced(r, &o, &res) : run_fast(r, &o, &res);
	res.sent = r->st->seq;
	res.bytes = r->st->bytes;
	res.errors = r->st->errors;
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
