// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf stats [DEV] [percpu] [watch SECONDS [count N]] [reset]
 *
 * What the dataplane did, per attached interface (<root>/dev/<ifname>/):
 *   - packets and bytes in / pass / drop / redirect of the whole chain (the
 *     entry row of xnf_stats, shown as "chain") and of each NF in chain
 *     order, summed over CPUs; per CPU on request, and the chain's "in" per
 *     CPU always, so that an operator sees where the work ran;
 *   - drops and passes to the kernel by reason, in packets and bytes;
 *     missed tail calls by slot;
 *   - what the kernel did with the frames xnf redirected to the interface
 *     (xnf_xmit): taken by its driver, dropped by it, or lost because the
 *     redirect failed; redirect - xmit drops - redirect errors, summed over
 *     the interfaces and the egress ports xnf is not attached to (listed
 *     after the interfaces, without DEV), is what left the box;
 *   - the NAPI batch-size histogram of the interface (xnf_batch, keyed by
 *     network namespace and ifindex).
 * Then, once for the instance, the hit counters of the firewall rules in
 * priority order.
 *
 * Every counter is per CPU and only ever incremented by the CPU that owns
 * it, so a read is a sum of per-CPU values taken a few instructions apart:
 * exact on a quiet interface, a snapshot under load.
 *
 * watch SECONDS prints a refresh every SECONDS, with rates computed over
 * the time that really elapsed between two reads (CLOCK_MONOTONIC), not the
 * nominal interval. Like every reading command it takes no lock
 * (XNF_OPEN_READ): a watch left running never blocks attach, detach or
 * route changes, and a stopped writer never blocks it. SIGINT and SIGTERM
 * end it with status 0. On a terminal (text output, TERM not "dumb") each
 * refresh redraws the screen in place, like watch(1) or top(1), cut to the
 * terminal's height and width; elsewhere (a pipe, a file, -j) every refresh
 * is appended, so that logs and scripts read lines.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/ioctl.h>

#include "cli.h"
#include "prom.h"

#define NAME_W	     10	 /* first column of the text tables */
#define NUM_W	     12	 /* one counter column */
#define REASON_W     14	 /* longest reason name, "xsk_no_socket" */
#define BAR_W	     50	 /* longest histogram bar */
#define MIN_INTERVAL 0.1 /* seconds */
#define MAX_INTERVAL 86400.0

struct stats_opts {
	const char *dev; /* NULL: every attached interface */
	bool percpu;
	bool watch;
	bool reset;
	bool prom;	 /* -f prometheus */
	double interval; /* seconds, with watch */
	__u32 count;	 /* refreshes; 0: until SIGINT / SIGTERM */
};

/* Rates of one refresh: @prev is the sample SECONDS earlier. */
struct rates {
	bool on;			   /* watch mode */
	const struct xnf_dev_sample *prev; /* NULL: interface is new */
	double secs;
};

static int ncpus;

/* The packet counters, then the byte counters in the same order: in text
 * each kind is a line of its own, under the same column heads. */
static const struct {
	const char *name;
	size_t off;
	bool bytes;
} nf_fields[] = {
	{ "in", offsetof(struct xnf_nf_counters, in) },
	{ "pass", offsetof(struct xnf_nf_counters, pass) },
	{ "drop", offsetof(struct xnf_nf_counters, drop) },
	{ "redirect", offsetof(struct xnf_nf_counters, redirect) },
	{ "in_bytes", offsetof(struct xnf_nf_counters, in_bytes), true },
	{ "pass_bytes", offsetof(struct xnf_nf_counters, pass_bytes), true },
	{ "drop_bytes", offsetof(struct xnf_nf_counters, drop_bytes), true },
	{ "redirect_bytes", offsetof(struct xnf_nf_counters, redirect_bytes),
	  true },
};
#define N_NF_FIELDS (sizeof(nf_fields) / sizeof(nf_fields[0]))

static __u64 nf_field(const struct xnf_nf_counters *c, size_t i)
{
	return *(const __u64 *)((const char *)c + nf_fields[i].off);
}

static double ts_sec(const struct timespec *ts)
{
	return ts->tv_sec + ts->tv_nsec / 1e9;
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_sec(&ts);
}

/* Per second over @secs; a counter that went down was zeroed (stats reset,
 * detach and attach again) and counts from zero. NAN: no rate. */
static double per_sec(__u64 cur, __u64 prev, double secs)
{
	if (secs <= 0)
		return NAN;
	return (cur >= prev ? cur - prev : cur) / secs;
}

/* ---- reading (include/stats.h) ---- */

int stats_sample_read(struct xnf_dp *dp, const char *dev, struct xnf_sample *s)
{
	char err[1024];
	int ret;

	ret = xnf_sample_read(dp, dev, s, err, sizeof(err));
	ncpus = s->ncpus;
	if (ret == -ENOENT && dev)
		return cli_err("%s; 'xnf status' lists the interfaces it is "
			       "attached to",
			       err);
	return ret ? cli_err("%s", err) : 0;
}

int stats_ct_read(struct xnf_dp *dp, struct xnf_ct_stats *ct)
{
	char err[512];

	return xnf_ct_stats_read(dp, ct, err, sizeof(err)) ? cli_err("%s", err) :
							     0;
}

int stats_rtsync_read(struct xnf_dp *dp, struct xnf_rtsync_status *rs)
{
	int ret = xnf_rtsync_status(dp, rs);

	return ret ? cli_err("cannot read the route sync's state: %s",
			     strerror(-ret)) :
		     0;
}

static int sample_read(struct xnf_dp *dp, const struct stats_opts *o,
		       struct xnf_sample *s)
{
	return stats_sample_read(dp, o->dev, s);
}

/* ---- printing: one call per field, as text or as JSON (print.h) ---- */

#define STR_(x)	 #x
#define STR(x)	 STR_(x)
#define NAME_FMT "  %-" STR(NAME_W) "s" /* the label column */
#define NUM_FMT	 " %" STR(NUM_W) "llu"	/* a counter column */
#define RATE_FMT " %" STR(NUM_W) ".1f"	/* a rate column */

/* NAN: no earlier sample to compare with: null in JSON, "-" in text. */
static void print_rate(enum print_type t, const char *key, double v)
{
	char dash[NUM_W + 2];

	if (!isnan(v)) {
		print_float(t, key, RATE_FMT, v);
		return;
	}
	snprintf(dash, sizeof(dash), " %*s", NUM_W, "-");
	print_null(t, key, dash);
}

/* The packet (!@bytes) or byte counters of @c. */
static void nf_counters(enum print_type t, const struct xnf_nf_counters *c,
			bool bytes)
{
	size_t i;

	for (i = 0; i < N_NF_FIELDS; i++)
		if (nf_fields[i].bytes == bytes)
			print_uint(t, nf_fields[i].name, NUM_FMT, nf_field(c, i));
}

/* The rows under an NF's totals: per second since the previous refresh,
 * packets ("/s") and bytes ("B/s"). */
static void nf_rates(const struct xnf_nf_counters *c,
		     const struct xnf_nf_counters *p, double secs)
{
	size_t i;
	int bytes;

	open_json_object("rates");
	for (bytes = 0; bytes < 2; bytes++) {
		print_text("  %*s", NAME_W, bytes ? "B/s" : "/s");
		for (i = 0; i < N_NF_FIELDS; i++)
			if (nf_fields[i].bytes == bytes)
				print_rate(PRINT_ANY, nf_fields[i].name,
					   p ? per_sec(nf_field(c, i),
						       nf_field(p, i), secs) :
					       NAN);
		print_nl();
	}
	close_json_object();
}

static bool nf_idle(const struct xnf_nf_counters *c)
{
	size_t i;

	for (i = 0; i < N_NF_FIELDS; i++)
		if (nf_field(c, i))
			return false;
	return true;
}

/* Per CPU: every CPU in JSON (index = CPU); in text, with percpu, the
 * busy ones. */
static void nf_percpu(const struct stats_opts *o,
		      const struct xnf_dev_sample *d, __u32 nf)
{
	char label[32];
	int cpu;

	open_json_array("percpu");
	for (cpu = 0; cpu < ncpus; cpu++) {
		const struct xnf_nf_counters *c = &d->cpu[cpu].nf[nf];
		bool shown = o->percpu && !nf_idle(c);

		open_json_object(NULL);
		print_uint(PRINT_JSON, "cpu", NULL, cpu);
		snprintf(label, sizeof(label), "  cpu%d", cpu);
		if (shown)
			print_text(NAME_FMT, label);
		nf_counters(shown ? PRINT_ANY : PRINT_JSON, c, false);
		nf_counters(PRINT_JSON, c, true);
		close_json_object();
		if (shown)
			print_nl();
	}
	close_json_array();
}

static void nf_block(const struct stats_opts *o, const struct xnf_dev_sample *d,
		     const struct rates *r, __u32 nf, const char *label)
{
	const struct xnf_nf_counters *c = &d->sum.nf[nf];

	open_json_object(NULL);
	print_string(PRINT_ANY, "nf", NAME_FMT, label);
	nf_counters(PRINT_ANY, c, false);
	print_nl();
	print_text(NAME_FMT, "  bytes");
	nf_counters(PRINT_ANY, c, true);
	print_nl();
	if (r->on)
		nf_rates(c, r->prev ? &r->prev->sum.nf[nf] : NULL, r->secs);
	nf_percpu(o, d, nf);
	close_json_object();
}

/* "per-CPU in  cpu0 950  cpu1 50": where the chain ran, in one text line. */
static void cpu_in_line(const struct xnf_dev_sample *d)
{
	int cpu, n = 0;

	if (!d->sum.nf[XNF_NF_ENTRY].in)
		return;
	print_text(NAME_FMT, "per-CPU in");
	for (cpu = 0; cpu < ncpus; cpu++) {
		__u64 in = d->cpu[cpu].nf[XNF_NF_ENTRY].in;

		if (!in)
			continue;
		if (n && !(n % 6))
			print_text("\n" NAME_FMT, "");
		print_text("  cpu%d %llu", cpu, (unsigned long long)in);
		n++;
	}
	print_nl();
}

static void nf_table(const struct stats_opts *o, const struct xnf_dev_sample *d,
		     const struct rates *r)
{
	__u32 i, len = d->info.chain_len;
	size_t f;

	if (len > XNF_CHAIN_MAX)
		len = XNF_CHAIN_MAX;
	print_text(NAME_FMT, "");
	for (f = 0; f < N_NF_FIELDS; f++)
		if (!nf_fields[f].bytes)
			print_text(" %*s", NUM_W, nf_fields[f].name);
	print_nl();
	open_json_array("nfs");
	nf_block(o, d, r, XNF_NF_ENTRY, "chain");
	for (i = 0; i < len; i++)
		if (d->info.nf[i] != XNF_NF_ENTRY && d->info.nf[i] < __XNF_NF_MAX)
			nf_block(o, d, r, d->info.nf[i],
				 xnf_nf_name(d->info.nf[i]));
	close_json_array();
	if (!o->percpu)
		cpu_in_line(d);
}

/* Reasons: all of them in JSON (the rates in an object of their own),
 * the non-zero ones in text, each with its rate. */
static void reason_table(const char *key, const char *rate_key,
			 const char *bytes_key, const char *title,
			 const __u64 *cur, const __u64 *prev,
			 const __u64 *bytes, const struct rates *r)
{
	__u32 i;

	for (i = 0; i < __XNF_R_MAX && !cur[i]; i++)
		;
	if (i < __XNF_R_MAX)
		print_text("  %s:\n", title);
	open_json_object(key);
	for (i = 0; i < __XNF_R_MAX; i++) {
		if (!cur[i]) {
			print_uint(PRINT_JSON, xnf_reason_name(i), NULL, 0);
			continue;
		}
		print_text("    %-*s", REASON_W, xnf_reason_name(i));
		print_uint(PRINT_ANY, xnf_reason_name(i), NUM_FMT, cur[i]);
		print_text(NUM_FMT " B", (unsigned long long)bytes[i]);
		if (r->on) {
			print_rate(PRINT_FP, NULL,
				   prev ? per_sec(cur[i], prev[i], r->secs) :
					  NAN);
			print_text("/s");
		}
		print_nl();
	}
	close_json_object();
	open_json_object(bytes_key);
	for (i = 0; i < __XNF_R_MAX; i++)
		print_uint(PRINT_JSON, xnf_reason_name(i), NULL, bytes[i]);
	close_json_object();
	if (!r->on)
		return;
	open_json_object(rate_key);
	for (i = 0; i < __XNF_R_MAX; i++)
		print_rate(PRINT_JSON, xnf_reason_name(i),
			   prev ? per_sec(cur[i], prev[i], r->secs) : NAN);
	close_json_object();
}

/* Every slot in JSON; in text, one line naming the slots that missed. */
static void tail_miss_table(const struct xnf_dev_sample *d)
{
	const char *sep = "  missed tail calls (empty chain slot):";
	__u32 i;

	open_json_array("tail_miss");
	for (i = 0; i < XNF_CHAIN_MAX; i++) {
		if (!d->sum.tail_miss[i]) {
			print_uint(PRINT_JSON, NULL, NULL, 0);
			continue;
		}
		print_text("%s slot %u (%s) ", sep, i,
			   i < d->info.chain_len ?
				   xnf_nf_name(d->info.nf[i]) ?: "?" :
				   "past the end");
		print_uint(PRINT_ANY, NULL, "%llu", d->sum.tail_miss[i]);
		sep = ",";
	}
	close_json_array();
	if (*sep == ',')
		print_nl();
}

/* The flow cache's hits and misses per NF that caches (XNF_NFF_FCACHE,
 * bpf/fcache.bpf.h): every such NF in JSON, summed and per CPU; in text,
 * one line for the NFs of the chain, and with percpu a line per CPU that
 * counted any. */
static bool fc_nf(__u32 nf)
{
	return xnf_nf_flags(nf) & XNF_NFF_FCACHE;
}

/* An NF's hits, misses and hit rate, hit / (hit + miss) (null, "-" in
 * text, before any packet), as a JSON object; in text too with @text. */
static void fc_counts(const char *name, __u64 hit, __u64 miss, bool text)
{
	enum print_type t = text ? PRINT_ANY : PRINT_JSON;

	if (text)
		print_text(" %s", name);
	open_json_object(name);
	print_uint(t, "hit", " %llu hit", hit);
	print_uint(t, "miss", " %llu miss", miss);
	if (hit + miss)
		print_float(t, "hit_rate", " (hit rate %.3f)",
			    (double)hit / (hit + miss));
	else
		print_null(t, "hit_rate", " (hit rate -)");
	close_json_object();
}

static void fc_table(const struct stats_opts *o, const struct xnf_dev_sample *d)
{
	bool in_chain[__XNF_NF_MAX] = {}, any;
	const char *sep;
	__u32 n, nf;
	int cpu;

	for (n = 0; n < d->info.chain_len && n < XNF_CHAIN_MAX; n++)
		if (d->info.nf[n] < __XNF_NF_MAX)
			in_chain[d->info.nf[n]] = true;
	for (nf = 0, any = false; nf < __XNF_NF_MAX; nf++)
		any |= fc_nf(nf) && in_chain[nf];
	open_json_object("flow_cache");
	if (any)
		print_text("  flow cache:");
	for (nf = 0, sep = ""; nf < __XNF_NF_MAX; nf++) {
		if (!fc_nf(nf))
			continue;
		if (!in_chain[nf]) {
			fc_counts(xnf_nf_name(nf), d->sum.fc_hit[nf],
				  d->sum.fc_miss[nf], false);
			continue;
		}
		print_text("%s", sep);
		fc_counts(xnf_nf_name(nf), d->sum.fc_hit[nf],
			  d->sum.fc_miss[nf], true);
		sep = ",";
	}
	/* Packets the entry program sent uncached while the hit rate was
	 * low (xnf_fc_begin's bypass): counted in the entry's row. */
	if (any && d->sum.fc_miss[XNF_NF_ENTRY])
		print_text(", bypassed");
	print_uint(any && d->sum.fc_miss[XNF_NF_ENTRY] ? PRINT_ANY : PRINT_JSON,
		   "bypassed", " %llu", d->sum.fc_miss[XNF_NF_ENTRY]);
	if (any)
		print_nl();
	open_json_array("percpu");
	for (cpu = 0; cpu < ncpus; cpu++) {
		const struct xnf_stats *c = &d->cpu[cpu];
		bool shown = false;

		for (nf = 0; nf < __XNF_NF_MAX; nf++)
			shown |= o->percpu && fc_nf(nf) && in_chain[nf] &&
				 (c->fc_hit[nf] || c->fc_miss[nf]);
		open_json_object(NULL);
		print_int(PRINT_JSON, "cpu", NULL, cpu);
		print_uint(PRINT_JSON, "bypassed", NULL,
			   c->fc_miss[XNF_NF_ENTRY]);
		if (shown)
			print_text("    cpu %d:", cpu);
		for (nf = 0, sep = ""; nf < __XNF_NF_MAX; nf++) {
			if (!fc_nf(nf))
				continue;
			if (!shown || !in_chain[nf]) {
				fc_counts(xnf_nf_name(nf), c->fc_hit[nf],
					  c->fc_miss[nf], false);
				continue;
			}
			print_text("%s", sep);
			fc_counts(xnf_nf_name(nf), c->fc_hit[nf],
				  c->fc_miss[nf], true);
			sep = ",";
		}
		if (shown)
			print_nl();
		close_json_object();
	}
	close_json_array();
	close_json_object();
}

/*
 * The batch-size histogram: in JSON every bucket, summed and per CPU; in
 * text a bar chart, one line per non-empty bucket:
 *     32 | ##########                                       1234 polls
 * Bucket b counts polls that handled b packets (64: 64 or more, which the
 * default NAPI budget of 64 makes "exactly 64").
 */
static void batch_table(const struct xnf_dev_sample *d)
{
	static const char bar[BAR_W + 1] =
		"##################################################";
	__u64 polls = 0, packets = 0, max = 0, n;
	char label[8];
	double mean;
	int b, cpu, len;

	for (b = 0; b < XNF_BATCH_BUCKETS; b++) {
		n = d->batch.polls[b];
		polls += n;
		packets += b * n;
		max = n > max ? n : max;
	}
	mean = polls ? (double)packets / polls : 0;
	open_json_object("batch");
	print_bool(PRINT_JSON, "recorded", NULL, d->have_batch);
	if (!d->have_batch)
		print_text("  batch sizes: not recorded (%s has no entry for ifindex %u)\n",
			   XNF_MAP_STR(XNF_MAP_BATCH), d->info.ifindex);
	else
		print_text("  batch sizes: %llu polls, %llu packets, mean %.2f packets/poll\n",
			   (unsigned long long)polls,
			   (unsigned long long)packets, mean);
	/* Without an entry every bucket is zero: no bar. */
	open_json_array("polls");
	for (b = 0; b < XNF_BATCH_BUCKETS; b++) {
		n = d->batch.polls[b];
		if (!n) {
			print_uint(PRINT_JSON, NULL, NULL, 0);
			continue;
		}
		len = (int)ceil((double)n * BAR_W / max);
		snprintf(label, sizeof(label),
			 b == XNF_BATCH_BUCKETS - 1 ? "%d+" : "%d", b);
		print_text("    %3s | %-*.*s", label, BAR_W, len, bar);
		print_uint(PRINT_ANY, NULL, NUM_FMT, n);
		print_text(" poll%s\n", n == 1 ? "" : "s");
	}
	close_json_array();
	print_uint(PRINT_JSON, "packets", NULL, packets);
	print_float(PRINT_JSON, "mean", NULL, mean);
	print_uint(PRINT_JSON, "total_polls", NULL, polls);
	/* The polls' time on their packets (batch.bpf.c), by size. */
	if (d->poll_timed)
		print_text("  poll time: %llu polls timed, %.2f us per poll on average\n",
			   (unsigned long long)d->poll_timed,
			   d->poll_ns / 1e3 / d->poll_timed);
	open_json_array("timed");
	for (b = 0; b < XNF_BATCH_BUCKETS; b++)
		print_uint(PRINT_JSON, NULL, NULL, d->batch.timed[b]);
	close_json_array();
	open_json_array("ns");
	for (b = 0; b < XNF_BATCH_BUCKETS; b++)
		print_uint(PRINT_JSON, NULL, NULL, d->batch.ns[b]);
	close_json_array();
	print_uint(PRINT_JSON, "total_timed", NULL, d->poll_timed);
	print_uint(PRINT_JSON, "total_ns", NULL, d->poll_ns);
	open_json_array("percpu");
	for (cpu = 0; cpu < ncpus; cpu++) {
		open_json_array(NULL);
		for (b = 0; b < XNF_BATCH_BUCKETS; b++)
			print_uint(PRINT_JSON, NULL, NULL,
				   d->batch_cpu[cpu].polls[b]);
		close_json_array();
	}
	close_json_array();
	close_json_object();
}

/* Frames redirected to the interface @ifindex (from any xnf interface):
 * what its driver took and dropped, and the redirects to it that failed;
 * @have: the tracer counts them. */
static void xmit_line(bool have, const struct xnf_xmit_counters *x, __u32 ifindex)
{
	open_json_object("xmit");
	print_bool(PRINT_JSON, "recorded", NULL, have);
	print_text("  redirected here:");
	if (!have)
		print_text(" not recorded (%s has no entry for ifindex %u)",
			   XNF_MAP_STR(XNF_MAP_XMIT), ifindex);
	print_uint(have ? PRINT_ANY : PRINT_JSON, "sent", " sent %llu",
		   x->xmit_sent);
	print_uint(have ? PRINT_ANY : PRINT_JSON, "drops", ", xmit drops %llu",
		   x->xmit_drops);
	print_uint(have ? PRINT_ANY : PRINT_JSON, "redirect_err",
		   ", redirect errors %llu", x->redirect_err);
	print_nl();
	close_json_object();
}

/* The egress ports xnf is not attached to, as the xmit line of an
 * interface: frames redirected to them are lost there too. */
static void ports_print(const struct xnf_sample *s)
{
	int i;

	open_json_array("egress_ports");
	for (i = 0; i < s->nports; i++) {
		print_nl();
		open_json_object(NULL);
		print_string(PRINT_ANY, "dev", "%s", s->ports[i].name);
		print_uint(PRINT_ANY, "ifindex", " (ifindex %llu)",
			   s->ports[i].ifindex);
		print_bool(PRINT_JSON, "attached", NULL, false);
		print_text(": egress port, not attached\n");
		xmit_line(true, &s->ports[i].xmit, s->ports[i].ifindex);
		close_json_object();
	}
	close_json_array();
}

static void dev_print(const struct stats_opts *o,
		      const struct xnf_dev_sample *d, const struct rates *r)
{
	struct xnf_chain_spec spec = {};
	const __u64 *pd = r->prev ? r->prev->sum.drop : NULL;
	const __u64 *pp = r->prev ? r->prev->sum.pass : NULL;
	char chain[128];

	spec.len = d->info.chain_len > XNF_CHAIN_MAX ? XNF_CHAIN_MAX :
						       d->info.chain_len;
	memcpy(spec.nf, d->info.nf, sizeof(spec.nf));
	if (xnf_chain_format(&spec, chain, sizeof(chain)))
		snprintf(chain, sizeof(chain), "?");
	open_json_object(NULL);
	print_string(PRINT_ANY, "dev", "%s", d->name);
	print_uint(PRINT_ANY, "ifindex", " (ifindex %llu)", d->info.ifindex);
	print_string(PRINT_ANY, "chain", ": chain %s", chain);
	if (d->info.fused)
		print_text(" (fused)");
	print_nl();
	nf_table(o, d, r);
	reason_table("drop_reasons", "drop_reason_rates", "drop_reason_bytes",
		     "dropped, by reason", d->sum.drop, pd, d->sum.drop_bytes, r);
	reason_table("pass_reasons", "pass_reason_rates", "pass_reason_bytes",
		     "passed to the kernel, by reason", d->sum.pass, pp,
		     d->sum.pass_bytes, r);
	tail_miss_table(d);
	fc_table(o, d);
	xmit_line(d->have_xmit, &d->xmit, d->info.ifindex);
	batch_table(d);
	cli_workers_print(d->workers, d->nworkers, false);
	close_json_object();
}

static const char *fw_action_name(__u32 action)
{
	return action == XNF_FW_DROP ? "drop" : "allow";
}

/* One rule; in text (with @shown) a line of the table, with its match. */
static void fw_row_print(const struct xnf_fw_row *f, bool shown)
{
	enum print_type t = shown ? PRINT_ANY : PRINT_JSON;
	char match[256];

	open_json_object(NULL);
	print_uint(t, "prio", "  %10llu", f->rule.prio);
	print_string(t, "action", "  %-6s", fw_action_name(f->rule.action));
	print_uint(t, "slot", " %5llu", f->slot);
	print_uint(t, "packets", NUM_FMT, f->hit.packets);
	print_uint(t, "bytes", NUM_FMT, f->hit.bytes);
	if (f->rule.log) {
		open_json_object("log");
		print_uint(PRINT_JSON, "logged", NULL, f->log.logged);
		print_uint(PRINT_JSON, "suppressed", NULL, f->log.suppressed);
		close_json_object();
	} else {
		print_null(PRINT_JSON, "log", NULL);
	}
	close_json_object();
	if (shown)
		print_text("  %s\n",
			   cli_fw_match_text(&f->rule, match, sizeof(match)));
}

/* The firewall in text: it has rules, or its default policy decided. */
static bool fw_shown(const struct xnf_sample *s)
{
	return s->nfw || s->fw_default_hit.packets;
}

/* Firewall hits, instance-wide: every rule in JSON, in text the rules that
 * matched something, in priority order, then the default policy when
 * packets got it (the order the firewall tries them in). */
static void fw_table(const struct xnf_sample *s)
{
	const struct xnf_fw_hit *dflt = &s->fw_default_hit;
	enum print_type t = fw_shown(s) ? PRINT_ANY : PRINT_JSON;
	int i, hit = 0;

	for (i = 0; i < s->nfw; i++)
		hit += !!s->fw[i].hit.packets;
	if (fw_shown(s))
		print_text("firewall: %d rule%s, %d with hits, default ",
			   s->nfw, s->nfw == 1 ? "" : "s", hit);
	print_string(t, "fw_default", "%s\n", fw_action_name(s->fw_default));
	if (hit || dflt->packets)
		print_text("  %10s  %-6s %5s %*s %*s  %s\n", "prio", "action",
			   "slot", NUM_W, "packets", NUM_W, "bytes", "match");
	open_json_array("fw_hits");
	for (i = 0; i < s->nfw; i++)
		fw_row_print(&s->fw[i], s->fw[i].hit.packets);
	close_json_array();
	t = dflt->packets ? PRINT_ANY : PRINT_JSON;
	if (dflt->packets)
		print_text("  %10s  %-6s %5s", "default",
			   fw_action_name(s->fw_default), "-");
	print_uint(t, "fw_default_packets", NUM_FMT, dflt->packets);
	print_uint(t, "fw_default_bytes", NUM_FMT, dflt->bytes);
	if (dflt->packets)
		print_nl();
}

/* The packet log: records written and matches left out by the limit, of
 * every rule with `log` (text: in priority order, with its log words) and
 * of every sampled reason (log_reasons). */
static void log_table(const struct xnf_sample *s)
{
	char text[256];
	bool any = s->log_reasons != 0;
	int i;

	for (i = 0; i < s->nfw && !any; i++)
		any = s->fw[i].rule.log;
	if (any)
		print_text("\npacket log:\n  %-20s %*s %*s\n", "source", NUM_W,
			   "logged", NUM_W, "suppressed");
	for (i = 0; i < s->nfw; i++) {
		if (!s->fw[i].rule.log)
			continue;
		print_text("  rule %-15u" NUM_FMT NUM_FMT "  %s\n",
			   s->fw[i].rule.prio,
			   (unsigned long long)s->fw[i].log.logged,
			   (unsigned long long)s->fw[i].log.suppressed,
			   cli_fw_log_text(&s->fw[i].rule, text, sizeof(text)));
	}
	open_json_array("log_reasons");
	for (i = 0; i < XNF_REASON_SLOTS; i++) {
		if (!(s->log_reasons & (1ULL << i)))
			continue;
		open_json_object(NULL);
		print_string(PRINT_ANY, "reason", "  reason %-13s",
			     xnf_reason_name(i));
		print_uint(PRINT_ANY, "logged", NUM_FMT, s->log_reason[i].logged);
		print_uint(PRINT_ANY, "suppressed", NUM_FMT,
			   s->log_reason[i].suppressed);
		print_nl();
		close_json_object();
	}
	close_json_array();
}

static const struct xnf_dev_sample *dev_find(const struct xnf_sample *s,
					     const struct xnf_dev_sample *d)
{
	int i;

	for (i = 0; s && i < s->ndevs; i++)
		if (!strcmp(s->devs[i].name, d->name) &&
		    s->devs[i].info.ifindex == d->info.ifindex)
			return &s->devs[i];
	return NULL;
}

/* The first line of a refresh: when it was read (local time; in JSON in
 * ISO 8601 with the zone, and as seconds since the epoch), and over how
 * long the rates were taken. */
static void header_print(const struct xnf_sample *cur, double secs)
{
	char date[32], zone[8], when[64];
	long ms = cur->wall.tv_nsec / 1000000;
	struct tm tm;

	localtime_r(&cur->wall.tv_sec, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(when, sizeof(when), "%s.%03ld", date, ms);
	print_string(PRINT_FP, NULL, "=== %s  ", when);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	snprintf(when, sizeof(when), "%s.%03ld%s", date, ms, zone);
	print_string(PRINT_JSON, "time", NULL, when);
	print_float(PRINT_JSON, "timestamp", NULL, ts_sec(&cur->wall));
	print_float(PRINT_ANY, "interval", "rates over %.3f s ===\n", secs);
}

/* With @prev (watch), rates over the time between the two samples. */
static void sample_print(const struct stats_opts *o, const struct xnf_sample *cur,
			 const struct xnf_sample *prev)
{
	struct rates r = { .on = o->watch };
	int i;

	if (prev)
		r.secs = cur->mono - prev->mono;
	open_json_doc("xnf/stats/1");
	if (o->watch)
		header_print(cur, r.secs);
	open_json_array("devices");
	for (i = 0; i < cur->ndevs; i++) {
		r.prev = dev_find(prev, &cur->devs[i]);
		if (i)
			print_nl();
		dev_print(o, &cur->devs[i], &r);
	}
	close_json_array();
	if (!cur->ndevs && !o->dev)
		print_text("xnf is attached to no interface; 'xnf attach DEV chain "
			   "NF[,NF...]' attaches one\n");
	if (!o->dev)
		ports_print(cur);
	if (fw_shown(cur))
		print_nl();
	fw_table(cur);
	log_table(cur);
	close_json_object();
	if (o->watch)
		print_nl();
}

/* ---- reset ---- */

/*
 * Zeroes the counters of the interfaces of @o and their batch histograms;
 * without DEV also the firewall hit counters. The dataplane may count on
 * another CPU while its copy is being zeroed, so a packet or two in flight
 * can be lost from the new totals: per-CPU counters have no atomic reset.
 */
static int stats_reset(struct xnf_dp *dp, const struct stats_opts *o)
{
	struct xnf_sample s;
	int i, err, ret;

	ret = sample_read(dp, o, &s);
	for (i = 0; i < s.ndevs; i++) {
		err = xnf_dev_counters_reset(dp, &s.devs[i]);
		if (err)
			ret = cli_err("cannot reset the counters of %s: %s",
				      s.devs[i].name, strerror(-err));
	}
	for (i = 0; i < s.nports; i++) {
		err = xnf_port_counters_reset(dp, &s.ports[i]);
		if (err)
			ret = cli_err("cannot reset the counters of %s: %s",
				      s.ports[i].name, strerror(-err));
	}
	err = o->dev ? 0 : xnf_fw_hits_reset(dp);
	if (err)
		ret = cli_err("cannot reset %s: %s",
			      XNF_MAP_STR(XNF_MAP_FW_HITS), strerror(-err));
	xnf_sample_free(&s);
	return ret;
}

/* ---- watch ---- */

/* Waits for the next tick of the schedule @deadline (advanced by
 * @interval; ticks missed while the output was blocked are skipped).
 * true when SIGINT or SIGTERM came: they are blocked and taken here, so
 * that one arriving at any other moment is not lost either. */
static bool tick_wait(const sigset_t *sigs, double *deadline, double interval)
{
	struct timespec ts;
	double left, t = mono_now();

	*deadline += interval;
	if (*deadline < t)
		*deadline = t;
	for (;;) {
		left = *deadline - mono_now();
		if (left <= 0)
			return false;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		if (sigtimedwait(sigs, NULL, &ts) > 0)
			return true;
		/* EAGAIN: timed out; EINTR: another signal (SIGCONT ...). */
	}
}

/*
 * A watch on a terminal: each refresh is rendered into a buffer and drawn
 * from the top left corner over the previous one (ECMA-48 controls, which
 * every terminal emulator takes: CUP home, EL to the end of each line, ED
 * below the last), so the screen does not scroll or flicker. What does not
 * fit is cut: lines to the width, the refresh to the height, with a last
 * line saying how many lines were left out.
 *
 * The print helpers write to stdout; glibc's stdout is a variable that may
 * be assigned (glibc manual, "Standard Streams"), so a refresh is rendered
 * by pointing it at a memory stream for the time of sample_print().
 */
struct screen {
	FILE *tty; /* the real stdout while a refresh is rendered */
	char *buf;
	size_t len;
};

static bool screen_wanted(void)
{
	const char *term = getenv("TERM");

	return !print_json() && isatty(STDOUT_FILENO) && term && *term &&
	       strcmp(term, "dumb");
}

/* Rows and columns of the terminal now (it may have been resized); 0 where
 * the terminal does not say. */
static void screen_size(int *rows, int *cols)
{
	struct winsize ws = {};

	ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
	*rows = ws.ws_row;
	*cols = ws.ws_col;
}

static int screen_begin(struct screen *sc)
{
	FILE *f;

	sc->buf = NULL;
	sc->len = 0;
	f = open_memstream(&sc->buf, &sc->len);
	if (!f)
		return cli_err("cannot buffer a refresh: %s", strerror(errno));
	fflush(stdout);
	sc->tty = stdout;
	stdout = f;
	return 0;
}

/* One line of the buffer, cut to @cols bytes (0: not cut) but not inside
 * a UTF-8 sequence, with EL so that the rest of the old line goes. */
static void screen_line(const char *line, size_t len, int cols)
{
	if (cols > 0 && len > (size_t)cols) {
		len = cols;
		while (len && (line[len] & 0xc0) == 0x80)
			len--;
	}
	printf("%.*s\033[K\n", (int)len, line);
}

static void screen_draw(struct screen *sc)
{
	const char *p, *nl, *end;
	int rows, cols, lines = 0, room, n;
	char note[128];

	fclose(stdout); /* sets sc->buf and sc->len */
	stdout = sc->tty;
	screen_size(&rows, &cols);
	p = sc->buf ?: "";
	end = p + (sc->buf ? sc->len : 0);
	while (end > p && end[-1] == '\n')
		end--;
	for (nl = p; nl < end; nl++)
		lines += *nl == '\n';
	lines += end > p;
	/* The cursor stays on the row below the last line drawn. */
	room = rows > 1 ? rows - 1 : INT_MAX;
	fputs("\033[H", stdout);
	for (n = 0; p < end; n++, p = nl + 1) {
		nl = memchr(p, '\n', end - p) ?: end;
		if (lines > room && n == room - 1) {
			snprintf(note, sizeof(note),
				 "... %d more lines: a taller terminal, or "
				 "'xnf stats DEV watch', shows them",
				 lines - n);
			screen_line(note, strlen(note), cols);
			break;
		}
		screen_line(p, nl - p, cols);
	}
	fputs("\033[J", stdout);
	fflush(stdout);
	free(sc->buf);
	sc->buf = NULL;
}

static int stats_watch(struct xnf_dp *dp, const struct stats_opts *o)
{
	bool tty = screen_wanted();
	struct screen sc;
	struct xnf_sample s[2];
	double deadline;
	sigset_t sigs;
	int cur = 0, err;
	__u32 n;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL))
		return cli_err("cannot block SIGINT and SIGTERM: %s",
			       strerror(errno));
	memset(s, 0, sizeof(s));
	/* After "reset" this is a writer: the reset is done, and a watch only
	 * reads, so it must not keep other writers waiting. */
	if (!cli.batch)
		xnf_dp_lock(dp, LOCK_UN);
	err = sample_read(dp, o, &s[cur]);
	if (err && o->dev && !s[cur].ndevs)
		goto out;
	err = 0;
	if (tty) {
		/* Something on the screen before the first rates. */
		printf("\033[H\033[2Jxnf stats: the first rates in %.1f s\n",
		       o->interval);
		fflush(stdout);
	}
	deadline = s[cur].mono;
	for (n = 0; !o->count || n < o->count; n++) {
		if (tick_wait(&sigs, &deadline, o->interval))
			break;
		/* An interface that went away is reported and left out. */
		sample_read(dp, o, &s[!cur]);
		if (tty && screen_begin(&sc)) {
			err = -1;
			break;
		}
		sample_print(o, &s[!cur], &s[cur]);
		if (tty)
			screen_draw(&sc);
		xnf_sample_free(&s[cur]);
		cur = !cur;
	}
out:
	xnf_sample_free(&s[0]);
	xnf_sample_free(&s[1]);
	return err;
}

/* ---- the command ---- */

/* Asked for: on stdout. */
static int stats_help(void)
{
	printf("Usage: xnf stats [ [dev] DEV ] [percpu] [watch SECONDS [count N]] [reset]\n"
	       "       xnf stats [ [dev] DEV ] { -f | format } { text | prometheus }\n"
	       "  DEV      one attached interface (default: all of them, and what\n"
	       "           was redirected to the egress ports xnf is not attached to)\n"
	       "  percpu   every NF's counters per CPU (the chain's \"in\" per CPU is\n"
	       "           always shown)\n"
	       "  watch    refresh every SECONDS (at least %.1f), with rates per second;\n"
	       "           count N stops after N refreshes, else SIGINT / SIGTERM; on a\n"
	       "           terminal it redraws in place, elsewhere it appends lines\n"
	       "  reset    zero the counters and batch histograms of DEV (of all\n"
	       "           interfaces, egress ports and the firewall hits without\n"
	       "           DEV); prints nothing unless watch is given too\n"
	       "  -f prometheus  the Prometheus text format, once (for node_exporter's\n"
	       "           textfile collector; 'xnf exporter' serves it over HTTP);\n"
	       "           -f text is the first form's (the default); format is -f\n"
	       "With -j, one JSON object (per refresh, one per line).\n",
	       MIN_INTERVAL);
	return 0;
}

static int parse_interval(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(*v) || *v < MIN_INTERVAL ||
	    *v > MAX_INTERVAL)
		return cli_err("invalid interval '%s': expected seconds from %.1f "
			       "to %.0f, e.g. 1 or 0.5",
			       s, MIN_INTERVAL, MAX_INTERVAL);
	return 0;
}

static int set_dev(struct stats_opts *o, const char *dev)
{
	if (o->dev)
		return cli_err("two interfaces given ('%s' and '%s'); xnf stats "
			       "shows one or all",
			       o->dev, dev);
	if (cli_dev_check(dev))
		return -1;
	o->dev = dev;
	return 0;
}

static const char *const formats[] = { "text", "prometheus", NULL };

/* Keywords win over interface names; "dev NAME" names an interface that
 * looks like one. "reset" destroys data and is never abbreviated. */
static int parse_opts(int argc, char **argv, struct stats_opts *o)
{
	int fmt;

	for (; argc > 0; NEXT_ARG()) {
		if (!strcmp(argv[0], "dev")) {
			NEXT_ARG();
			REQ_ARGS(1, "stats");
			if (set_dev(o, argv[0]))
				return -1;
		} else if (is_prefix(argv[0], "percpu")) {
			o->percpu = true;
		} else if (is_prefix(argv[0], "watch")) {
			NEXT_ARG();
			REQ_ARGS(1, "stats");
			if (parse_interval(argv[0], &o->interval))
				return -1;
			o->watch = true;
		} else if (is_prefix(argv[0], "count")) {
			NEXT_ARG();
			REQ_ARGS(1, "stats");
			if (parse_u32(argv[0], "count", &o->count))
				return -1;
			if (!o->count)
				return cli_err("count must be at least 1");
		} else if (!strcmp(argv[0], "reset")) {
			o->reset = true;
		} else if (!strcmp(argv[0], "-f") ||
			   is_prefix(argv[0], "format")) {
			NEXT_ARG();
			REQ_ARGS(1, "stats");
			fmt = cli_keyword(argv[0], formats, "format",
					  "text or prometheus");
			if (fmt < 0)
				return -1;
			o->prom = fmt == 1;
		} else if (set_dev(o, argv[0])) {
			return -1;
		}
	}
	if (o->count && !o->watch)
		return cli_err(
			"count goes with watch: xnf stats watch SECONDS count N");
	if (o->prom && print_json())
		return cli_err("-f prometheus is a text format of its own: it "
			       "goes without -j");
	if (o->prom && (o->watch || o->reset || o->percpu))
		return cli_err("-f prometheus prints the counters once, per "
			       "CPU where it matters: it goes without watch, "
			       "reset and percpu ('xnf exporter' serves them)");
	return 0;
}

int do_stats(int argc, char **argv)
{
	struct stats_opts o = {};
	struct xnf_dp *dp;
	struct xnf_sample s;
	int err;

	if (argc > 0 && !strcmp(argv[0], "help"))
		return stats_help();
	if (parse_opts(argc, argv, &o))
		return -1;
	dp = o.reset ? cli_dp(false) : cli_dp_read();
	if (!dp && o.prom)
		prom_write(stdout, NULL, NULL, NULL);
	if (!dp)
		return -1;
	if (o.reset && stats_reset(dp, &o))
		return -1;
	if (o.watch)
		return stats_watch(dp, &o);
	if (o.reset)
		return 0;
	err = sample_read(dp, &o, &s);
	if (o.prom) {
		struct xnf_rtsync_status rs;
		struct xnf_ct_stats ct;
		bool ct_ok = !stats_ct_read(dp, &ct);
		bool rs_ok = !stats_rtsync_read(dp, &rs);

		err = err ?: ct_ok && rs_ok ? 0 : -1;
		if (prom_write(stdout, &s, ct_ok ? &ct : NULL,
			       rs_ok ? &rs : NULL) ||
		    prom_write_trace(stdout, dp))
			err = cli_err("cannot write the counters: %s",
				      strerror(errno));
		xnf_sample_free(&s);
		return err;
	}
	if (!(err && o.dev && !s.ndevs))
		sample_print(&o, &s, NULL);
	xnf_sample_free(&s);
	return err;
}
