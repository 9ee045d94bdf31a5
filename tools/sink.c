// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf-sink - counts what arrives on a device: frames with xnf-gen's probe
 * (packets, bytes, rate, loss, reordering and duplicates from the sequence
 * numbers, one-way latency from the send timestamps, which share the
 * host's CLOCK_MONOTONIC with the generator) and frames without.
 *
 *   xnf-sink DEV [duration SEC] [count N] [interval SEC] [ready FILE]
 *                [csum] [-j]
 *
 * The XDP program (sink.bpf.c) is attached in native mode through a
 * bpf_link: it goes away with the process whatever ends it, and a device
 * that has an XDP program already is refused, never replaced. Probe frames
 * are dropped; everything else passes to the kernel, so ARP and neighbour
 * discovery keep working.
 *
 * Stops after count probe frames, after duration (default and at most
 * 3600 s), or on SIGINT/SIGTERM/SIGHUP; detaches; prints the result.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "traffic.h"
#include "json.h"
#include "sink.skel.h"

#define DURATION_MAX 3600.0

struct opts {
	const char *dev;
	double duration;
	__u64 count;	 /* 0: none */
	double interval; /* 0: no interval lines */
	const char *ready;
	bool csum;
	bool json;
};

/* All CPUs' counters, merged. */
struct totals {
	struct xnf_sink_stats s;
	bool any; /* some CPU saw a probe frame */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xnf-sink DEV [duration SEC] [count N] [interval SEC] [ready FILE] [csum] [-j]\n"
		"Attaches a counting XDP program to DEV (native mode, this network namespace)\n"
		"and reports frames carrying xnf-gen's probe: rate, loss, reordering,\n"
		"duplicates, latency. Other frames are counted and passed to the kernel.\n"
		"  duration SEC   stop after SEC seconds (default and at most 3600)\n"
		"  count N        stop once N probe frames have arrived\n"
		"  interval SEC   print the rate every SEC seconds\n"
		"  ready FILE     create FILE once attached (start the generator then)\n"
		"  csum           also verify UDP/TCP checksums (IPv4 headers always are)\n"
		"  -j             JSON (interval lines are JSON lines too)\n"
		"SIGINT, SIGTERM and SIGHUP stop it; it always detaches.\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->duration = DURATION_MAX;
	for (i = 1; i < argc; i++) {
		const char *k = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;

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
		if (!strcmp(k, "csum")) {
			o->csum = true;
			continue;
		}
		if (!val) {
			fprintf(stderr,
				"Error: %s needs a value (xnf-sink -h for the usage)\n",
				k);
			return -EINVAL;
		}
		errno = 0;
		if (!strcmp(k, "duration")) {
			o->duration = strtod(val, &end);
			if (!(o->duration > 0) || !isfinite(o->duration))
				goto bad;
			if (o->duration > DURATION_MAX)
				o->duration = DURATION_MAX;
		} else if (!strcmp(k, "count")) {
			if (val[0] == '-')
				goto bad;
			o->count = strtoull(val, &end, 0);
			if (!o->count)
				goto bad;
		} else if (!strcmp(k, "interval")) {
			o->interval = strtod(val, &end);
			if (!(o->interval >= 0.01) || !isfinite(o->interval))
				goto bad;
		} else if (!strcmp(k, "ready")) {
			o->ready = val;
			end = "";
		} else {
			fprintf(stderr,
				"Error: unknown argument '%s' (xnf-sink -h for the usage)\n",
				k);
			return -EINVAL;
		}
		if (errno || !end || end == val || *end)
			goto bad;
		i++;
		continue;
bad:
		fprintf(stderr,
			"Error: bad value '%s' for %s (xnf-sink -h for the usage)\n",
			val, k);
		return -EINVAL;
	}
	if (!o->dev) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

static int read_totals(struct xnf_sink *skel, struct totals *t)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	struct xnf_sink_stats *v;
	__u32 zero = 0;
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (ncpus < 1)
		return -EINVAL;
	v = calloc(ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map__lookup_elem(skel->maps.xnf_sink_stats, &zero, sizeof(zero),
				 v, ncpus * sizeof(*v), 0)) {
		err = -errno;
		goto out;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		const struct xnf_sink_stats *c = &v[cpu];

		t->s.no_probe += c->no_probe;
		t->s.no_probe_bytes += c->no_probe_bytes;
		if (!c->packets)
			continue;
		if (!t->any || c->lat_min < t->s.lat_min)
			t->s.lat_min = c->lat_min;
		if (!t->any || c->first_ns < t->s.first_ns)
			t->s.first_ns = c->first_ns;
		if (c->lat_max > t->s.lat_max)
			t->s.lat_max = c->lat_max;
		if (c->last_ns > t->s.last_ns)
			t->s.last_ns = c->last_ns;
		t->s.packets += c->packets;
		t->s.bytes += c->bytes;
		t->s.bad_ip_csum += c->bad_ip_csum;
		t->s.bad_l4_csum += c->bad_l4_csum;
		t->s.ts_ahead += c->ts_ahead;
		t->s.lat_sum += c->lat_sum;
		t->any = true;
	}
out:
	free(v);
	return err;
}

static int read_hist(struct xnf_sink *skel, __u64 *count)
{
	int ncpus = libbpf_num_possible_cpus(), cpu, err = 0;
	__u32 b;
	struct xnf_sink_hist *v;
	__u32 zero = 0;

	memset(count, 0, XNF_LAT_BUCKETS * sizeof(*count));
	v = calloc(ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map__lookup_elem(skel->maps.xnf_sink_hist, &zero, sizeof(zero),
				 v, ncpus * sizeof(*v), 0))
		err = -errno;
	for (cpu = 0; !err && cpu < ncpus; cpu++)
		for (b = 0; b < XNF_LAT_BUCKETS; b++)
			count[b] += v[cpu].count[b];
	free(v);
	return err;
}

static int read_seq(struct xnf_sink *skel, struct xnf_sink_seq *seq)
{
	size_t sz = bpf_map__value_size(skel->maps.xnf_sink_seq);
	__u32 zero = 0;
	__u8 *v;
	int err = 0;

	v = calloc(1, sz);
	if (!v)
		return -ENOMEM;
	if (sz < XNF_SINK_SEQ_OFF + sizeof(*seq))
		err = -EINVAL;
	else if (bpf_map__lookup_elem(skel->maps.xnf_sink_seq, &zero,
				      sizeof(zero), v, sz, 0))
		err = -errno;
	else
		memcpy(seq, v + XNF_SINK_SEQ_OFF, sizeof(*seq));
	free(v);
	return err;
}

static void print_interval(const struct opts *o, double t, __u64 packets,
			   __u64 bytes, double dt)
{
	double pps = dt > 0 ? packets / dt : 0,
	       gbps = dt > 0 ? bytes * 8 / dt / 1e9 : 0;

	if (o->json) {
		jw_object(NULL);
		jw_float("t_s", t);
		jw_uint("packets", packets);
		jw_uint("bytes", bytes);
		jw_float("pps", pps);
		jw_float("gbps", gbps);
		jw_end_object();
	} else {
		printf("%8.3f s  %12llu frames  %9.4f Mpps  %8.4f Gb/s\n", t,
		       (unsigned long long)packets, pps / 1e6, gbps);
	}
	fflush(stdout);
}

static void print_result(const struct opts *o, const struct totals *t,
			 const __u64 *hist, const struct xnf_sink_seq *seq,
			 double elapsed)
{
	const struct xnf_sink_stats *s = &t->s;
	__u64 n = s->packets,
	      unique = n - (seq->duplicates < n ? seq->duplicates : n);
	__u64 span = seq->started ? seq->max_seq - seq->min_seq + 1 : 0;
	__u64 lost = span > unique ? span - unique : 0;
	double dur = n > 1 ? (s->last_ns - s->first_ns) / 1e9 : 0;
	double pps = dur > 0 ? (n - 1) / dur : 0;
	double mean_bytes = n ? (double)s->bytes / n : 0;
	double gbps = pps * mean_bytes * 8 / 1e9,
	       gbps_l1 = pps * (mean_bytes + 20) * 8 / 1e9;
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
	static const char *qn[] = { "p50", "p90", "p99", "p999" };
	__u64 q[4];
	__u32 b;
	int i;

	for (i = 0; i < 4; i++)
		q[i] = xnf_lat_quantile(hist, n, qs[i], s->lat_min, s->lat_max);
	if (o->json) {
		jw_object(NULL);
		jw_string("dev", o->dev);
		jw_uint("packets", n);
		jw_uint("bytes", s->bytes);
		jw_uint("no_probe", s->no_probe);
		jw_float("duration_s", dur);
		jw_float("pps", pps);
		jw_float("gbps", gbps);
		jw_uint("lost", lost);
		jw_uint("reordered", seq->reordered);
		jw_uint("duplicates", seq->duplicates);
		if (seq->started) {
			jw_uint("first_seq", seq->min_seq);
			jw_uint("last_seq", seq->max_seq);
		} else {
			jw_null("first_seq");
			jw_null("last_seq");
		}
		jw_object("latency_ns");
		if (n) {
			jw_uint("min", s->lat_min);
			jw_float("mean", (double)s->lat_sum / n);
			for (i = 0; i < 4; i++)
				jw_uint(qn[i], q[i]);
			jw_uint("max", s->lat_max);
		} else {
			jw_null("min");
			jw_null("mean");
			for (i = 0; i < 4; i++)
				jw_null(qn[i]);
			jw_null("max");
		}
		jw_end_object();
		jw_array("latency_hist");
		for (b = 0; b < XNF_LAT_BUCKETS; b++) {
			if (!hist[b])
				continue;
			jw_array(NULL);
			jw_uint(NULL, xnf_lat_lower(b + 1));
			jw_uint(NULL, hist[b]);
			jw_end_array();
		}
		jw_end_array();
		/* beyond the interface the harness reads */
		jw_float("gbps_l1", gbps_l1);
		jw_float("elapsed_s", elapsed);
		jw_uint("no_probe_bytes", s->no_probe_bytes);
		jw_uint("bad_ip_csum", s->bad_ip_csum);
		if (o->csum)
			jw_uint("bad_l4_csum", s->bad_l4_csum);
		else
			jw_null("bad_l4_csum");
		jw_uint("ts_ahead", s->ts_ahead);
		jw_uint("beyond_window", seq->beyond_window);
		jw_end_object();
		return;
	}
	printf("xnf-sink %s: %llu frames with a probe (%llu bytes), %llu without, in %.3f s\n",
	       o->dev, (unsigned long long)n, (unsigned long long)s->bytes,
	       (unsigned long long)s->no_probe, dur);
	printf("  %.4f Mpps, %.4f Gb/s (%.4f Gb/s with preamble and gap)\n",
	       pps / 1e6, gbps, gbps_l1);
	if (seq->started)
		printf("  sequence %llu..%llu: %llu lost, %llu reordered, %llu duplicates\n",
		       (unsigned long long)seq->min_seq,
		       (unsigned long long)seq->max_seq, (unsigned long long)lost,
		       (unsigned long long)seq->reordered,
		       (unsigned long long)seq->duplicates);
	if (n)
		printf("  latency ns: min %llu mean %.0f p50 %llu p90 %llu p99 %llu p99.9 %llu max %llu\n",
		       (unsigned long long)s->lat_min, (double)s->lat_sum / n,
		       (unsigned long long)q[0], (unsigned long long)q[1],
		       (unsigned long long)q[2], (unsigned long long)q[3],
		       (unsigned long long)s->lat_max);
	printf("  checksums: %llu bad IPv4 headers, ",
	       (unsigned long long)s->bad_ip_csum);
	if (o->csum)
		printf("%llu bad UDP/TCP\n", (unsigned long long)s->bad_l4_csum);
	else
		printf("UDP/TCP not checked (csum)\n");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .flags = XDP_FLAGS_DRV_MODE);
	__u64 *hist = NULL, last_pk = 0, last_by = 0;
	double t0, t_end, next_iv = 0, last_iv = 0, t;
	struct xnf_sink *skel = NULL;
	struct xnf_sink_seq *seq = NULL;
	struct totals tot;
	int link_fd = -1, err, fd;
	__u32 ifindex, id = 0;
	struct opts o;

	if (parse_args(argc, argv, &o))
		return 2;
	ifindex = if_nametoindex(o.dev);
	if (!ifindex) {
		fprintf(stderr,
			"Error: no device %s in this network namespace\n", o.dev);
		return 1;
	}
	libbpf_set_print(NULL);
	hist = calloc(XNF_LAT_BUCKETS, sizeof(*hist));
	seq = calloc(1, sizeof(*seq));
	skel = xnf_sink__open();
	if (!skel || !hist || !seq) {
		err = -ENOMEM;
		fprintf(stderr, "Error: cannot open the sink program: %s\n",
			strerror(errno));
		goto out;
	}
	((struct xnf_sink_cfg *)&skel->rodata->cfg)->check_l4 = o.csum;
	err = xnf_sink__load(skel);
	if (err) {
		fprintf(stderr,
			"Error: cannot load the sink program: %s (run as root)\n",
			strerror(-err));
		goto out;
	}
	if (!bpf_xdp_query_id(ifindex, 0, &id) && id) {
		err = -EBUSY;
		fprintf(stderr,
			"Error: %s has an XDP program already (id %u); xnf-sink never "
			"replaces one it did not attach: detach it first\n",
			o.dev, id);
		goto out;
	}
	link_fd = bpf_link_create(bpf_program__fd(skel->progs.xnf_sink),
				  ifindex, BPF_XDP, &lopts);
	if (link_fd < 0) {
		err = -errno;
		fprintf(stderr,
			"Error: cannot attach to %s in native mode: %s%s\n",
			o.dev, strerror(-err),
			err == -EBUSY || err == -EEXIST ?
				" (it has an XDP program already)" :
				"");
		goto out;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (o.ready) {
		fd = open(o.ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0644);
		if (fd < 0) {
			err = -errno;
			fprintf(stderr,
				"Error: cannot create the ready file %s: %s\n",
				o.ready, strerror(-err));
			goto out;
		}
		close(fd);
	}

	t0 = now_s();
	t_end = t0 + o.duration;
	if (o.interval)
		next_iv = last_iv = t0;
	while (!stop) {
		double wake = t_end, nap;
		struct timespec ts;

		if (o.count && wake > now_s() + 0.01)
			wake = now_s() + 0.01;
		if (o.interval) {
			if (next_iv <= now_s())
				next_iv += o.interval;
			if (next_iv < wake)
				wake = next_iv;
		}
		nap = wake - now_s();
		if (nap > 0) {
			ts.tv_sec = (time_t)nap;
			ts.tv_nsec = (long)((nap - ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
		t = now_s();
		if ((o.count || o.interval) && read_totals(skel, &tot) == 0) {
			if (o.interval && t >= next_iv) {
				print_interval(&o, t - t0,
					       tot.s.packets - last_pk,
					       tot.s.bytes - last_by,
					       t - last_iv);
				last_pk = tot.s.packets;
				last_by = tot.s.bytes;
				last_iv = t;
			}
			if (o.count && tot.s.packets >= o.count)
				break;
		}
		if (t >= t_end)
			break;
	}

	/* Detach, then let packets already in the program finish. */
	close(link_fd);
	link_fd = -1;
	usleep(20000);
	err = read_totals(skel, &tot);
	if (!err)
		err = read_hist(skel, hist);
	if (!err)
		err = read_seq(skel, seq);
	if (err) {
		fprintf(stderr, "Error: cannot read the sink's counters: %s\n",
			strerror(-err));
		goto out;
	}
	print_result(&o, &tot, hist, seq, now_s() - t0);
out:
	if (link_fd >= 0)
		close(link_fd);
	xnf_sink__destroy(skel);
	free(hist);
	free(seq);
	return err ? 1 : 0;
}
