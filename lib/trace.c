// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * trace.c - the packet trace (include/trace.h): arming xnf_trace_cfg[0],
 * reading the trace's records from the ring buffer xnf_trace_rb, ending
 * it.
 *
 * Who may arm: the instance lock serializes the writers of the entry,
 * and the entry names its tracer (pid). The datapath disarms the entry
 * itself when a bound is reached (bpf/trace.bpf.h), so the entry of a
 * tracer that died is over at its deadline or count (a trace without a
 * timeout has a lease as its deadline, which only its running tracer
 * renews); until then a new tracer takes it over when that pid is gone.
 *
 * The deadline is in bpf_ktime_get_ns()'s clock, which is
 * CLOCK_MONOTONIC (not CLOCK_BOOTTIME: suspended time does not count).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xnf.h"
#include "trace.h"
#include "priv.h"

/* How long a record may still be on its way after the end is seen: a
 * packet that took its place in the count on another CPU is still in
 * the chain for microseconds; this is far more. */
#define TRACE_DRAIN_MS 50

struct xnf_trace {
	struct xnf_dp *dp;
	struct ring_buffer *rb;
	__u32 id;
	__u64 max_packets;
	__u64 deadline_ns;	   /* the timeout's; 0: none */
	__u64 lease_ns;		   /* without a timeout: the datapath's deadline
			    * is renewed to now + this */
	struct xnf_trace_cfg *cfg; /* xnf_trace_cfg[0], mapped */
	size_t cfg_len;
	__u64 delivered;
	__u64 lost_at_start; /* xnf_trace_stats.lost when it was armed */
	enum xnf_trace_end why;
	bool drained;
	char cmd[XNF_CHANGE_TEXT];
	/* The caller of the poll in progress. */
	int (*cb)(const struct xnf_trace_rec *r, void *ctx);
	void *ctx;
	int cb_err;
};

static int trace_err(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int trace_err(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static bool pid_alive(__u32 pid)
{
	/* EPERM: it exists, under another user. */
	return pid && (!kill((pid_t)pid, 0) || errno == EPERM);
}

int xnf_trace_read(struct xnf_dp *dp, struct xnf_trace_cfg *cfg)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_TRACE_CFG), &zero, cfg))
		return -errno;
	return 0;
}

static int cfg_write(struct xnf_dp *dp, const struct xnf_trace_cfg *cfg)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(xnf_table_fd(dp, XNF_T_TRACE_CFG), &zero, cfg,
				BPF_ANY))
		return -errno;
	return 0;
}

bool xnf_trace_live(const struct xnf_trace_cfg *cfg)
{
	if (!cfg->id || !pid_alive(cfg->pid))
		return false;
	if (cfg->deadline_ns && now_ns() >= cfg->deadline_ns)
		return false;
	return !cfg->max_packets || cfg->matched < cfg->max_packets;
}

__u64 xnf_trace_left_ns(const struct xnf_trace_cfg *cfg)
{
	__u64 now = now_ns();

	return cfg->deadline_ns > now ? cfg->deadline_ns - now : 0;
}

int xnf_trace_stats_read(struct xnf_dp *dp, struct xnf_trace_stats *st)
{
	int ncpus = xnf_ncpus(), cpu, ret = 0;
	struct xnf_trace_stats *v;
	__u32 zero = 0;

	memset(st, 0, sizeof(*st));
	if (ncpus < 0)
		return ncpus;
	v = calloc(ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_TRACE_STATS), &zero, v)) {
		ret = -errno;
		goto out;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		st->traced += v[cpu].traced;
		st->lost += v[cpu].lost;
	}
out:
	free(v);
	return ret;
}

/* One record from the ring buffer: this trace's go to the caller, at
 * most max_packets of them. */
static int on_sample(void *ctx, void *data, size_t size)
{
	const struct xnf_trace_rec *r = data;
	struct xnf_trace *t = ctx;
	int ret;

	if (size < sizeof(*r) || r->id != t->id)
		return 0;
	if (t->max_packets && t->delivered >= t->max_packets)
		return 0;
	t->delivered++;
	ret = t->cb ? t->cb(r, t->ctx) : 0;
	if (ret < 0) {
		/* ring_buffer__poll stops at a negative return. */
		t->cb_err = ret;
		return ret;
	}
	return 0;
}

int xnf_trace_start(struct xnf_dp *dp, const struct xnf_trace_opts *o,
		    struct xnf_trace **out, char *err, size_t errlen)
{
	struct xnf_trace_cfg cur, cfg = {};
	struct xnf_trace_stats st;
	struct xnf_fw_rule check;
	struct xnf_trace *t = NULL;
	char msg[160];
	__u64 seq;
	int ret;

	*out = NULL;
	if (!o->max_packets && !o->timeout_s)
		return trace_err(err, errlen, -EINVAL,
				 "a trace needs a bound: a count of packets, a "
				 "timeout or both");
	if (o->match.flags & XNF_FW_F_CT)
		return trace_err(err, errlen, -EINVAL,
				 "a trace cannot match ct state: the state is "
				 "known only once conntrack ran, after the "
				 "trace chose its packets");
	check = o->match;
	check.action = XNF_FW_ALLOW;
	ret = xnf_fw_rule_check(&check, err, errlen);
	if (ret)
		return ret;

	ret = xnf_trace_read(dp, &cur);
	if (ret)
		return trace_err(err, errlen, ret,
				 "cannot read the armed trace (xnf_trace_cfg): "
				 "%s; is the instance of this version?",
				 strerror(-ret));
	if (xnf_trace_live(&cur))
		return trace_err(err, errlen, -EBUSY,
				 "trace %u of pid %u is running; wait for it "
				 "to end or stop it (kill %u)",
				 cur.id, cur.pid, cur.pid);
	ret = xnf_trace_stats_read(dp, &st);
	if (!ret)
		ret = xnf_change_seq(dp, &seq);
	if (ret)
		return trace_err(err, errlen, ret,
				 "cannot read the trace's counters: %s",
				 strerror(-ret));

	t = calloc(1, sizeof(*t));
	if (!t)
		return trace_err(err, errlen, -ENOMEM, "out of memory");
	t->dp = dp;
	/* The number its start gets in the change log (the lock is held):
	 * never 0, and `xnf monitor` shows which command it was. */
	t->id = (__u32)(seq + 1) ?: 1;
	t->max_packets = o->max_packets;
	t->lost_at_start = st.lost;
	snprintf(t->cmd, sizeof(t->cmd), "%s", o->cmd ?: "trace");
	t->rb = ring_buffer__new(xnf_table_fd(dp, XNF_T_TRACE_RB), on_sample, t,
				 NULL);
	if (!t->rb) {
		ret = -errno;
		trace_err(err, errlen, ret,
			  "cannot map the trace's ring buffer (xnf_trace_rb): %s",
			  strerror(-ret));
		goto fail;
	}
	/* What an earlier trace left in the ring is not this one's. */
	ring_buffer__consume(t->rb);
	t->cfg_len = sysconf(_SC_PAGESIZE);
	t->cfg = mmap(NULL, t->cfg_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      xnf_table_fd(dp, XNF_T_TRACE_CFG), 0);
	if (t->cfg == MAP_FAILED) {
		ret = -errno;
		t->cfg = NULL;
		trace_err(err, errlen, ret,
			  "cannot map the armed trace (xnf_trace_cfg): %s; "
			  "is the instance of this version?",
			  strerror(-ret));
		goto fail;
	}

	cfg.id = t->id;
	cfg.pid = getpid();
	cfg.max_packets = o->max_packets;
	cfg.match = o->match;
	cfg.match.action = XNF_FW_ALLOW;
	if (o->timeout_s) {
		cfg.deadline_ns = now_ns() + (__u64)o->timeout_s * 1000000000ull;
		t->deadline_ns = cfg.deadline_ns;
	} else {
		cfg.lease_ms = o->lease_ms ?: XNF_TRACE_LEASE_MS;
		t->lease_ns = (__u64)cfg.lease_ms * 1000000;
		cfg.deadline_ns = now_ns() + t->lease_ns;
	}
	ret = cfg_write(dp, &cfg);
	if (ret) {
		trace_err(err, errlen, ret,
			  "cannot arm the trace (xnf_trace_cfg): %s",
			  strerror(-ret));
		goto fail;
	}
	snprintf(msg, sizeof(msg), "trace %u started (count %llu, timeout %u s)",
		 t->id, (unsigned long long)o->max_packets, o->timeout_s);
	xnf_change_log(dp, XNF_CHANGE_COMMAND, t->cmd, false, msg);
	*out = t;
	return 0;
fail:
	if (t->cfg)
		munmap(t->cfg, t->cfg_len);
	ring_buffer__free(t->rb);
	free(t);
	return ret;
}

/* A trace without a timeout: its datapath deadline moves on while this
 * tracer polls. One 8-byte store into the mapped entry, so the count the
 * datapath adds to is never rewritten. Not under the lock: if the entry
 * changed hands between the test and the store (the datapath disarmed
 * it, or a tracer took over one it thought dead), the store lengthens
 * that one's deadline by at most a lease. */
static void trace_renew(struct xnf_trace *t)
{
	__u64 now = now_ns();

	if (!t->lease_ns ||
	    __atomic_load_n(&t->cfg->id, __ATOMIC_RELAXED) != t->id)
		return;
	if (__atomic_load_n(&t->cfg->deadline_ns, __ATOMIC_RELAXED) <
	    now + t->lease_ns / 2)
		__atomic_store_n(&t->cfg->deadline_ns, now + t->lease_ns,
				 __ATOMIC_RELAXED);
}

__u32 xnf_trace_id(const struct xnf_trace *t)
{
	return t->id;
}

/* Sets t->why once a bound is reached or the entry is no longer ours. */
static enum xnf_trace_end trace_check(struct xnf_trace *t)
{
	struct xnf_trace_cfg cfg;
	bool past;

	if (t->why)
		return t->why;
	past = t->deadline_ns && now_ns() >= t->deadline_ns;
	if (t->max_packets && t->delivered >= t->max_packets)
		t->why = XNF_TRACE_COUNT_REACHED;
	else if (past)
		t->why = XNF_TRACE_TIMEOUT;
	else if (!xnf_trace_read(t->dp, &cfg) && cfg.id != t->id)
		/* Disarmed by the datapath at the count (a record lost on
		 * the way: the ring was full), or by someone else. */
		t->why = !cfg.id && t->max_packets &&
					 cfg.matched >= t->max_packets ?
				 XNF_TRACE_COUNT_REACHED :
				 XNF_TRACE_GONE;
	return t->why;
}

int xnf_trace_poll(struct xnf_trace *t, int timeout_ms,
		   int (*cb)(const struct xnf_trace_rec *r, void *ctx), void *ctx)
{
	__u64 before = t->delivered;
	int ret;

	if (t->drained)
		return 0;
	t->cb = cb;
	t->ctx = ctx;
	t->cb_err = 0;
	trace_renew(t);
	ret = ring_buffer__poll(t->rb, timeout_ms);
	if (ret < 0 && ret != -EINTR)
		goto out;
	if (trace_check(t)) {
		/* Over: what is still on its way comes first. */
		usleep(TRACE_DRAIN_MS * 1000);
		ret = ring_buffer__consume(t->rb);
		if (ret < 0)
			goto out;
		t->drained = true;
	}
	ret = t->delivered - before;
out:
	if (t->cb_err)
		ret = t->cb_err;
	t->cb = NULL;
	t->ctx = NULL;
	return ret;
}

bool xnf_trace_ended(struct xnf_trace *t)
{
	return t->drained;
}

enum xnf_trace_end xnf_trace_why(struct xnf_trace *t)
{
	return t->why;
}

int xnf_trace_stop(struct xnf_trace *t, __u64 *traced, __u64 *lost)
{
	static const char *const why[] = {
		[XNF_TRACE_RUNNING] = "stopped",
		[XNF_TRACE_COUNT_REACHED] = "count reached",
		[XNF_TRACE_TIMEOUT] = "timeout",
		[XNF_TRACE_GONE] = "disarmed by another",
	};
	struct xnf_trace_cfg cfg;
	struct xnf_trace_stats st;
	char msg[160];
	int ret;

	/* No tracer arms meanwhile: the entry is written under the lock. */
	xnf_dp_lock(t->dp, LOCK_EX);
	ret = xnf_trace_read(t->dp, &cfg);
	if (!ret && cfg.id == t->id) {
		cfg.id = 0;
		ret = cfg_write(t->dp, &cfg);
	}
	if (!xnf_trace_stats_read(t->dp, &st) && lost)
		*lost = st.lost - t->lost_at_start;
	else if (lost)
		*lost = 0;
	if (traced)
		*traced = t->delivered;
	snprintf(msg, sizeof(msg), "trace %u ended (%s): %llu packets traced",
		 t->id, why[t->why], (unsigned long long)t->delivered);
	xnf_change_log(t->dp, XNF_CHANGE_COMMAND, t->cmd, ret != 0, msg);
	munmap(t->cfg, t->cfg_len);
	ring_buffer__free(t->rb);
	free(t);
	return ret;
}
