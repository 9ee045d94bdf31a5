// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * prom.c - a reading of the counters (include/stats.h) in the Prometheus text
 * exposition format, for `xnf stats -f prometheus` (node_exporter's
 * textfile collector) and `xnf exporter` (an HTTP scrape), the same text
 * from the same code.
 *
 * Every metric is a row of metrics[]: its name, type, help, where its
 * value lives (a __u64 at an offset into the struct of one of the sources
 * below) and, for an array of counters, the label its index becomes. A new
 * counter in struct xnf_stats, xnf_nf_counters, xnf_worker_stats or
 * xnf_fw_hit is one more row. Labels:
 *   interface  the attached device, as in `xnf stats DEV`; for the xmit
 *              counters also an egress port xnf is not attached to, which
 *              has attached="false" too
 *   nf         "chain" (the whole chain, the entry row) or the NF's name
 *   cpu        the CPU that ran the chain (only for what it received)
 *   reason     why a packet was dropped or passed to the kernel
 *   queue      the receive queue of an AF_XDP worker
 *   prio, rule the firewall rule (its priority, its `xnf fw add` words)
 *   policy     the firewall's default policy (allow or drop)
 * Counters are since attach (or `xnf stats reset`); a detach and attach
 * starts them from zero, which Prometheus's rate() takes as a reset.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "prom.h"
#include "trace.h"

/* Where a metric's values are. */
enum prom_src {
	SRC_INFO,	/* xnf_interface_info: one line per interface */
	SRC_DEV,	/* struct xnf_stats of an interface, summed over CPUs */
	SRC_NF,		/* struct xnf_nf_counters, the chain's and each NF's */
	SRC_CPU,	/* struct xnf_nf_counters of the chain, per CPU */
	SRC_XMIT,	/* struct xnf_xmit_counters of an egress interface */
	SRC_NAPI_BATCH, /* histogram: packets per NAPI poll */
	SRC_NAPI_TIME,	/* struct xnf_dev_sample: the polls' time, all sizes */
	SRC_WORKER,	/* struct xnf_worker_stats of each AF_XDP worker */
	SRC_WORKER_UP,	/* whether a worker runs */
	SRC_WBATCH,	/* histogram: descriptors per AF_XDP ring read */
	SRC_FW,		/* struct xnf_fw_hit of each firewall rule */
	SRC_FW_RULES,	/* how many rules the active rule set has */
	SRC_FW_DEFAULT, /* struct xnf_fw_hit of the default policy */
	SRC_CT,		/* struct xnf_ct_stats: the connection table */
};

struct prom_metric {
	const char *name;
	const char *type; /* counter, gauge, histogram */
	const char *help;
	enum prom_src src;
	size_t off; /* of the __u64 (or the first of the array) */
	/* An array: the label of its index, its length and its names. */
	const char *key;
	unsigned int n;
	/* NULL: the index; an index it names NULL has no line */
	const char *(*key_name)(unsigned int i);
	double scale; /* 0: the integer as it is; else value * scale */
};

static const char *reason_name(unsigned int i)
{
	return xnf_reason_name(i);
}

/* The NFs that cache (XNF_NFF_FCACHE) label the flow cache's counters,
 * fc_hit[nf] and fc_miss[nf]; the others have none. */
static const char *fc_nf_name(unsigned int nf)
{
	return xnf_nf_flags(nf) & XNF_NFF_FCACHE ? xnf_nf_name(nf) : NULL;
}

#define NF(f)	  offsetof(struct xnf_nf_counters, f)
#define DEV(f)	  offsetof(struct xnf_stats, f)
#define W(f)	  offsetof(struct xnf_worker_stats, f)
#define FW(f)	  offsetof(struct xnf_fw_hit, f)
#define X(f)	  offsetof(struct xnf_xmit_counters, f)
#define CT(f)	  offsetof(struct xnf_ct_stats, f)
#define ARR(a)	  (sizeof(a) / sizeof((a)[0]))
#define WARR(f)	  ARR(((struct xnf_worker_stats *)0)->f)
#define REASONS	  "reason", __XNF_R_MAX, reason_name
#define NS_TO_SEC 1e-9

static const struct prom_metric metrics[] = {
	{ "xnf_interface_info", "gauge",
	  "An interface xnf is attached to: its ifindex and chain (value 1)",
	  SRC_INFO },
	{ "xnf_nf_received_packets_total", "counter",
	  "Packets that entered an NF (nf=\"chain\": the interface's chain)",
	  SRC_NF, NF(in) },
	{ "xnf_nf_passed_packets_total", "counter",
	  "Packets an NF (or the chain) passed to the kernel", SRC_NF, NF(pass) },
	{ "xnf_nf_dropped_packets_total", "counter",
	  "Packets an NF (or the chain) dropped", SRC_NF, NF(drop) },
	{ "xnf_nf_redirected_packets_total", "counter",
	  "Packets an NF (or the chain) redirected to another port", SRC_NF,
	  NF(redirect) },
	{ "xnf_nf_received_bytes_total", "counter",
	  "Bytes of the packets that entered an NF (or the chain)", SRC_NF,
	  NF(in_bytes) },
	{ "xnf_nf_passed_bytes_total", "counter",
	  "Bytes of the packets an NF (or the chain) passed to the kernel",
	  SRC_NF, NF(pass_bytes) },
	{ "xnf_nf_dropped_bytes_total", "counter",
	  "Bytes of the packets an NF (or the chain) dropped", SRC_NF,
	  NF(drop_bytes) },
	{ "xnf_nf_redirected_bytes_total", "counter",
	  "Bytes of the packets an NF (or the chain) redirected", SRC_NF,
	  NF(redirect_bytes) },
	{ "xnf_cpu_received_packets_total", "counter",
	  "Packets that entered the interface's chain, by the CPU that ran it",
	  SRC_CPU, NF(in) },
	{ "xnf_dropped_packets_total", "counter",
	  "Packets the chain dropped, by reason", SRC_DEV, DEV(drop), REASONS },
	{ "xnf_kernel_passed_packets_total", "counter",
	  "Packets the chain passed to the kernel, by reason", SRC_DEV,
	  DEV(pass), REASONS },
	{ "xnf_dropped_bytes_total", "counter",
	  "Bytes of the packets the chain dropped, by reason", SRC_DEV,
	  DEV(drop_bytes), REASONS },
	{ "xnf_kernel_passed_bytes_total", "counter",
	  "Bytes of the packets the chain passed to the kernel, by reason",
	  SRC_DEV, DEV(pass_bytes), REASONS },
	{ "xnf_xmit_sent_packets_total", "counter",
	  "Redirected frames from xnf interfaces that the driver of this "
	  "egress interface took",
	  SRC_XMIT, X(xmit_sent) },
	{ "xnf_xmit_dropped_packets_total", "counter",
	  "Redirected frames from xnf interfaces that the driver of this "
	  "egress interface refused (xdp:xdp_devmap_xmit drops)",
	  SRC_XMIT, X(xmit_drops) },
	{ "xnf_redirect_errors_total", "counter",
	  "Redirects to this egress interface that failed before its queue "
	  "(xdp:xdp_redirect_err)",
	  SRC_XMIT, X(redirect_err) },
	{ "xnf_tail_call_misses_total", "counter",
	  "Tail calls that found an empty chain slot, by slot", SRC_DEV,
	  DEV(tail_miss), "slot", XNF_CHAIN_MAX },
	{ "xnf_flow_cache_hits_total", "counter",
	  "Packets whose table lookup an NF found in the flow cache, by NF",
	  SRC_DEV, DEV(fc_hit), "nf", __XNF_NF_MAX, fc_nf_name },
	{ "xnf_flow_cache_misses_total", "counter",
	  "Packets an NF looked up in its tables and stored in the flow "
	  "cache, by NF",
	  SRC_DEV, DEV(fc_miss), "nf", __XNF_NF_MAX, fc_nf_name },
	{ "xnf_napi_batch_size_packets", "histogram",
	  "Packets handled per NAPI poll of the interface (the largest bucket "
	  "below +Inf is 63: a poll of 64 or more, NAPI's default budget, is "
	  "counted as 64 in the sum)",
	  SRC_NAPI_BATCH },
	{ "xnf_napi_timed_polls_total", "counter",
	  "NAPI polls of the interface that ran xnf's entry program and were "
	  "timed from their first packet to the poll's end",
	  SRC_NAPI_TIME, offsetof(struct xnf_dev_sample, poll_timed) },
	{ "xnf_napi_poll_seconds_total", "counter",
	  "Time the timed NAPI polls spent, from their first packet's XDP run "
	  "to the end of the poll",
	  SRC_NAPI_TIME, offsetof(struct xnf_dev_sample, poll_ns),
	  .scale = NS_TO_SEC },
	{ "xnf_worker_up", "gauge",
	  "An AF_XDP worker of the queue: 1 while its process runs",
	  SRC_WORKER_UP },
	{ "xnf_worker_received_packets_total", "counter",
	  "Packets an AF_XDP worker read from its RX ring", SRC_WORKER,
	  W(rx_packets) },
	{ "xnf_worker_received_bytes_total", "counter",
	  "Bytes an AF_XDP worker read from its RX ring", SRC_WORKER,
	  W(rx_bytes) },
	{ "xnf_worker_transmitted_packets_total", "counter",
	  "Packets an AF_XDP worker put on a TX ring", SRC_WORKER, W(tx_packets) },
	{ "xnf_worker_transmitted_bytes_total", "counter",
	  "Bytes an AF_XDP worker put on a TX ring", SRC_WORKER, W(tx_bytes) },
	{ "xnf_worker_polls_total", "counter", "RX ring reads of a worker",
	  SRC_WORKER, W(polls) },
	{ "xnf_worker_empty_polls_total", "counter",
	  "RX ring reads of a worker that returned nothing", SRC_WORKER,
	  W(empty_polls) },
	{ "xnf_worker_busy_seconds_total", "counter",
	  "Time a worker spent in reads that returned packets and their work",
	  SRC_WORKER, W(busy_ns), .scale = NS_TO_SEC },
	{ "xnf_worker_idle_seconds_total", "counter",
	  "Time a worker spent in empty reads and waiting", SRC_WORKER,
	  W(idle_ns), .scale = NS_TO_SEC },
	{ "xnf_worker_fill_short_total", "counter",
	  "Fill-ring refills of a worker that found no free frame", SRC_WORKER,
	  W(fill_short) },
	{ "xnf_worker_dropped_packets_total", "counter",
	  "Frames a worker dropped, by reason", SRC_WORKER, W(drop), "reason",
	  __XNF_WD_MAX, cli_wdrop_name },
	{ "xnf_worker_nf_dropped_packets_total", "counter",
	  "Frames a worker's NFs dropped, by reason", SRC_WORKER, W(nf_drop),
	  REASONS },
	{ "xnf_worker_frames", "gauge",
	  "UMEM frames of a worker, by where they are", SRC_WORKER, W(place),
	  "place", __XNF_FP_MAX, cli_place_name },
	{ "xnf_worker_xsk_rx_dropped_total", "counter",
	  "The kernel's XDP socket rx_dropped of a worker's RX socket",
	  SRC_WORKER, W(k_rx_dropped) },
	{ "xnf_worker_xsk_rx_invalid_descs_total", "counter",
	  "The kernel's XDP socket rx_invalid_descs", SRC_WORKER,
	  W(k_rx_invalid_descs) },
	{ "xnf_worker_xsk_tx_invalid_descs_total", "counter",
	  "The kernel's XDP socket tx_invalid_descs", SRC_WORKER,
	  W(k_tx_invalid_descs) },
	{ "xnf_worker_xsk_rx_ring_full_total", "counter",
	  "The kernel's XDP socket rx_ring_full", SRC_WORKER, W(k_rx_ring_full) },
	{ "xnf_worker_xsk_rx_fill_ring_empty_descs_total", "counter",
	  "The kernel's XDP socket rx_fill_ring_empty_descs", SRC_WORKER,
	  W(k_rx_fill_ring_empty_descs) },
	{ "xnf_worker_xsk_tx_ring_empty_descs_total", "counter",
	  "The kernel's XDP socket tx_ring_empty_descs", SRC_WORKER,
	  W(k_tx_ring_empty_descs) },
	{ "xnf_worker_batch_size_packets", "histogram",
	  "Descriptors per RX ring read of a worker (0: an empty read)",
	  SRC_WBATCH },
	{ "xnf_fw_rules", "gauge", "Rules of the active firewall rule set",
	  SRC_FW_RULES },
	{ "xnf_fw_rule_matched_packets_total", "counter",
	  "Packets a firewall rule matched", SRC_FW, FW(packets) },
	{ "xnf_fw_rule_matched_bytes_total", "counter",
	  "Bytes of the packets a firewall rule matched", SRC_FW, FW(bytes) },
	{ "xnf_fw_default_matched_packets_total", "counter",
	  "Packets no firewall rule matched: the default policy decided",
	  SRC_FW_DEFAULT, FW(packets) },
	{ "xnf_fw_default_matched_bytes_total", "counter",
	  "Bytes of the packets the firewall's default policy decided",
	  SRC_FW_DEFAULT, FW(bytes) },
	{ "xnf_ct_entries", "gauge", "Live connections of the connection table",
	  SRC_CT, CT(entries) },
	{ "xnf_ct_max", "gauge",
	  "Entries the connection table holds at most (ct_max)", SRC_CT, CT(max) },
	{ "xnf_ct_created_total", "counter",
	  "Connections entered into the table (their first packet accepted)",
	  SRC_CT, CT(c.created) },
	{ "xnf_ct_expired_total", "counter",
	  "Entries a packet found past their timeout and replaced", SRC_CT,
	  CT(c.expired) },
	{ "xnf_ct_deleted_total", "counter",
	  "Entries a packet removed (a TCP connection reopened)", SRC_CT,
	  CT(c.deleted) },
	{ "xnf_ct_flushed_total", "counter", "Entries xnf ct flush removed",
	  SRC_CT, CT(c.flushed) },
	{ "xnf_ct_evicted_total", "counter",
	  "Entries the full table gave up to make room for a new one (derived: "
	  "created less expired, deleted, flushed and the entries present)",
	  SRC_CT, CT(evicted) },
	{ "xnf_ct_insert_failed_total", "counter",
	  "New connections that could not be entered (a race lost, no room)",
	  SRC_CT, CT(c.insert_failed) },
	{ "xnf_ct_invalid_total", "counter", "Packets conntrack found invalid",
	  SRC_CT, CT(c.invalid) },
	{ "xnf_ct_related_total", "counter",
	  "ICMP errors related to a tracked connection", SRC_CT, CT(c.related) },
	{ "xnf_ct_searched_total", "counter", "Lookups of the connection table",
	  SRC_CT, CT(c.searched) },
	{ "xnf_ct_found_total", "counter",
	  "Lookups of the connection table that found a live entry", SRC_CT,
	  CT(c.found) },
	{ "xnf_ct_aliases", "gauge",
	  "Second entries of translated connections (their reply tuple): "
	  "room taken in the connection table, no connections",
	  SRC_CT, CT(aliases) },
	{ "xnf_ct_nat_created_total", "counter",
	  "Translated connections entered into the table", SRC_CT,
	  CT(c.nat_created) },
	{ "xnf_ct_nat_retries_total", "counter",
	  "Ports tried beyond the first by the translations that found one",
	  SRC_CT, CT(c.nat_retries) },
	{ "xnf_ct_nat_no_port_total", "counter",
	  "New connections refused a translation: no free port in the range",
	  SRC_CT, CT(c.nat_no_port) },
	{ "xnf_ct_nat_no_addr_total", "counter",
	  "New connections refused a masquerade: no address on the egress",
	  SRC_CT, CT(c.nat_no_addr) },
	{ "xnf_ct_nat_clash_total", "counter",
	  "New connections refused a translation: its reply tuple taken by "
	  "another CPU before the confirm",
	  SRC_CT, CT(c.nat_clash) },
};

/* Up to this many labels, each "name=\"value\"" with the value escaped. */
#define LABELS_MAX 512

struct labels {
	char buf[LABELS_MAX];
	size_t len;
};

/* Appends name="value", escaping \, " and newline as the format says. */
static void label_add(struct labels *l, const char *name, const char *value)
{
	size_t n = l->len;
	const char *c;

	n += snprintf(l->buf + n, n < sizeof(l->buf) ? sizeof(l->buf) - n : 0,
		      "%s%s=\"", n ? "," : "", name);
	for (c = value; *c && n + 3 < sizeof(l->buf); c++) {
		if (*c == '\\' || *c == '"' || *c == '\n')
			l->buf[n++] = '\\';
		l->buf[n++] = *c == '\n' ? 'n' : *c;
	}
	if (n + 2 <= sizeof(l->buf))
		l->buf[n++] = '"';
	l->buf[n < sizeof(l->buf) ? n : sizeof(l->buf) - 1] = '\0';
	l->len = n;
}

static void label_addu(struct labels *l, const char *name, unsigned long long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", v);
	label_add(l, name, num);
}

static void sample_line(FILE *f, const char *name, const char *suffix,
			const struct labels *l, const struct prom_metric *m,
			__u64 v)
{
	fprintf(f, "%s%s", name, suffix);
	if (l->len)
		fprintf(f, "{%s}", l->buf);
	if (m && m->scale)
		fprintf(f, " %.9f\n", v * m->scale);
	else
		fprintf(f, " %llu\n", (unsigned long long)v);
}

/* The value(s) of @m in the struct at @base, under the labels @l. */
static void values(FILE *f, const struct prom_metric *m, const void *base,
		   const struct labels *l)
{
	const __u64 *v = (const __u64 *)((const char *)base + m->off);
	struct labels k;
	unsigned int i;

	if (!m->key) {
		sample_line(f, m->name, "", l, m, *v);
		return;
	}
	for (i = 0; i < m->n; i++) {
		k = *l;
		if (m->key_name && !m->key_name(i))
			continue;
		if (m->key_name)
			label_add(&k, m->key, m->key_name(i));
		else
			label_addu(&k, m->key, i);
		sample_line(f, m->name, "", &k, m, v[i]);
	}
}

/* Cumulative buckets: @counts[i] observations of value i, for i < @n;
 * a bucket "le" at each of @bounds, then +Inf, _sum and _count. */
static void histogram(FILE *f, const char *name, const struct labels *l,
		      const __u64 *counts, size_t stride, unsigned int n,
		      const unsigned int *bounds, unsigned int nbounds)
{
	__u64 cum = 0, sum = 0, c;
	unsigned int i, b = 0;
	struct labels k;

	for (i = 0; i < n; i++) {
		c = *(const __u64 *)((const char *)counts + i * stride);
		while (b < nbounds && bounds[b] < i) {
			k = *l;
			label_addu(&k, "le", bounds[b++]);
			sample_line(f, name, "_bucket", &k, NULL, cum);
		}
		cum += c;
		sum += c * i;
	}
	while (b < nbounds) {
		k = *l;
		label_addu(&k, "le", bounds[b++]);
		sample_line(f, name, "_bucket", &k, NULL, cum);
	}
	k = *l;
	label_add(&k, "le", "+Inf");
	sample_line(f, name, "_bucket", &k, NULL, cum);
	sample_line(f, name, "_sum", l, NULL, sum);
	sample_line(f, name, "_count", l, NULL, cum);
}

/* NAPI: powers of two, and 63, the largest size the map tells apart from
 * "64 or more" (XNF_BATCH_BUCKETS); NAPI's default budget is 64. */
static const unsigned int napi_bounds[] = { 0, 1, 2, 4, 8, 16, 32, 63 };
/* AF_XDP reads: 0, then powers of two up to XNF_XSK_BATCH_MAX. */
static const unsigned int wbatch_bounds[] = { 0,  1,  2,   4,	8,  16,
					      32, 64, 128, 256, 512 };

static void dev_labels(struct labels *l, const struct xnf_dev_sample *d)
{
	l->len = 0;
	l->buf[0] = '\0';
	label_add(l, "interface", d->name);
}

static void info_line(FILE *f, const struct prom_metric *m,
		      const struct xnf_dev_sample *d)
{
	struct xnf_chain_spec spec = {};
	char chain[128];
	struct labels l;

	spec.len = d->info.chain_len > XNF_CHAIN_MAX ? XNF_CHAIN_MAX :
						       d->info.chain_len;
	memcpy(spec.nf, d->info.nf, sizeof(spec.nf));
	if (xnf_chain_format(&spec, chain, sizeof(chain)))
		snprintf(chain, sizeof(chain), "?");
	dev_labels(&l, d);
	label_addu(&l, "ifindex", d->info.ifindex);
	label_add(&l, "chain", chain);
	label_add(&l, "fused", d->info.fused ? "1" : "0");
	sample_line(f, m->name, "", &l, NULL, 1);
}

static void nf_lines(FILE *f, const struct prom_metric *m,
		     const struct xnf_dev_sample *d)
{
	__u32 i, len = d->info.chain_len, nf;
	struct labels l;

	if (len > XNF_CHAIN_MAX)
		len = XNF_CHAIN_MAX;
	for (i = 0; i <= len; i++) {
		/* the entry row first, then the chain's NFs in order */
		nf = i ? d->info.nf[i - 1] : XNF_NF_ENTRY;
		if (i && (nf == XNF_NF_ENTRY || nf >= __XNF_NF_MAX))
			continue;
		dev_labels(&l, d);
		label_add(&l, "nf", i ? xnf_nf_name(nf) : "chain");
		values(f, m, &d->sum.nf[nf], &l);
	}
}

static void worker_lines(FILE *f, const struct prom_metric *m,
			 const struct xnf_dev_sample *d)
{
	const struct xnf_worker_entry *sw;
	struct labels l;
	int i;

	for (i = 0; i < d->nworkers; i++) {
		sw = &d->workers[i];
		dev_labels(&l, d);
		label_addu(&l, "queue", sw->queue);
		if (m->src == SRC_WORKER)
			values(f, m, &sw->w, &l);
		else if (m->src == SRC_WORKER_UP)
			sample_line(f, m->name, "", &l, NULL,
				    sw->alive && sw->w.state != XNF_W_STOPPED);
		else
			histogram(f, m->name, &l, &sw->w.by_size[0].batches,
				  sizeof(sw->w.by_size[0]), XNF_XSK_BATCH_MAX + 1,
				  wbatch_bounds, ARR(wbatch_bounds));
	}
}

static void fw_lines(FILE *f, const struct prom_metric *m,
		     const struct xnf_sample *s)
{
	char text[512];
	struct labels l;
	int i;

	for (i = 0; i < s->nfw; i++) {
		l.len = 0;
		l.buf[0] = '\0';
		label_addu(&l, "prio", s->fw[i].rule.prio);
		label_add(&l, "rule",
			  cli_fw_rule_text(&s->fw[i].rule, text, sizeof(text)));
		values(f, m, &s->fw[i].hit, &l);
	}
}

static void fw_default_lines(FILE *f, const struct prom_metric *m,
			     const struct xnf_sample *s)
{
	struct labels l = {};

	label_add(&l, "policy", s->fw_default == XNF_FW_DROP ? "drop" : "allow");
	values(f, m, &s->fw_default_hit, &l);
}

static void dev_lines(FILE *f, const struct prom_metric *m,
		      const struct xnf_sample *s, const struct xnf_dev_sample *d)
{
	struct labels l;
	int cpu;

	switch (m->src) {
	case SRC_INFO:
		info_line(f, m, d);
		break;
	case SRC_DEV:
		dev_labels(&l, d);
		values(f, m, &d->sum, &l);
		break;
	case SRC_NF:
		nf_lines(f, m, d);
		break;
	case SRC_CPU:
		for (cpu = 0; cpu < s->ncpus; cpu++) {
			dev_labels(&l, d);
			label_addu(&l, "cpu", cpu);
			values(f, m, &d->cpu[cpu].nf[XNF_NF_ENTRY], &l);
		}
		break;
	case SRC_XMIT:
		if (!d->have_xmit)
			break;
		dev_labels(&l, d);
		values(f, m, &d->xmit, &l);
		break;
	case SRC_NAPI_BATCH:
		if (!d->have_batch)
			break;
		dev_labels(&l, d);
		histogram(f, m->name, &l, d->batch.polls, sizeof(__u64),
			  XNF_BATCH_BUCKETS, napi_bounds, ARR(napi_bounds));
		break;
	case SRC_NAPI_TIME:
		if (!d->have_batch)
			break;
		dev_labels(&l, d);
		values(f, m, d, &l);
		break;
	default:
		worker_lines(f, m, d);
		break;
	}
}

/* The egress ports xnf is not attached to: attached="false". */
static void port_lines(FILE *f, const struct prom_metric *m,
		       const struct xnf_sample *s)
{
	struct labels l;
	int i;

	for (i = 0; i < s->nports; i++) {
		l.len = 0;
		l.buf[0] = '\0';
		label_add(&l, "interface", s->ports[i].name);
		label_add(&l, "attached", "false");
		values(f, m, &s->ports[i].xmit, &l);
	}
}

int prom_write(FILE *f, const struct xnf_sample *s, const struct xnf_ct_stats *ct)
{
	const struct prom_metric *m;
	struct labels none = {};
	int d;

	fprintf(f, "# HELP xnf_up Whether the xnf instance could be read\n"
		   "# TYPE xnf_up gauge\n");
	sample_line(f, "xnf_up", "", &none, NULL, !!s);
	for (m = metrics; s && m < metrics + ARR(metrics); m++) {
		if (m->src == SRC_CT && !ct)
			continue;
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help,
			m->name, m->type);
		if (m->src == SRC_CT)
			values(f, m, ct, &none);
		else if (m->src == SRC_FW)
			fw_lines(f, m, s);
		else if (m->src == SRC_FW_RULES)
			sample_line(f, m->name, "", &none, NULL, s->nfw);
		else if (m->src == SRC_FW_DEFAULT)
			fw_default_lines(f, m, s);
		else
			for (d = 0; d < s->ndevs; d++)
				dev_lines(f, m, s, &s->devs[d]);
		if (m->src == SRC_XMIT)
			port_lines(f, m, s);
	}
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

/* The packet trace's ring buffer (lib/trace.c): records sent, records
 * lost, summed over CPUs, since the instance was made. */
int prom_write_trace(FILE *f, struct xnf_dp *dp)
{
	struct xnf_trace_stats st;
	struct labels none = {};

	if (!dp || xnf_trace_stats_read(dp, &st))
		return 0;
	fprintf(f, "# HELP xnf_trace_packets_total Packets traced (xnf trace): "
		   "records sent to the trace's ring buffer\n"
		   "# TYPE xnf_trace_packets_total counter\n");
	sample_line(f, "xnf_trace_packets_total", "", &none, NULL, st.traced);
	fprintf(f, "# HELP xnf_trace_lost_events_total Trace records the ring "
		   "buffer had no room for (the packets were not affected)\n"
		   "# TYPE xnf_trace_lost_events_total counter\n");
	sample_line(f, "xnf_trace_lost_events_total", "", &none, NULL, st.lost);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
