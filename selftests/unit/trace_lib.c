// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The trace's library (lib/trace.c): arming xnf_trace_cfg[0] with the
 * match and bounds asked for, refusing a live tracer's trace, taking over
 * the trace of a dead tracer or one that is over, ending by time or when
 * the datapath disarmed it at the count, and stopping (disarms only its
 * own trace). The records themselves come from the datapath: the NF
 * tests run packets through a traced chain.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "fixture.h"
#include "trace.h"

static bool cfg_get(struct fx *f, struct xnf_trace_cfg *cfg)
{
	return ASSERT_OK(xnf_trace_read(f->dp, cfg), "read xnf_trace_cfg");
}

static bool cfg_put(struct fx *f, const struct xnf_trace_cfg *cfg)
{
	__u32 zero = 0;

	return ASSERT_OK(bpf_map_update_elem(xnf_table_fd(f->dp, XNF_T_TRACE_CFG),
					     &zero, cfg, BPF_ANY),
			 "write xnf_trace_cfg");
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* A pid that was alive and is no more. */
static __u32 dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

TEST(trace_lib_arm)
{
	struct xnf_trace_opts o = { .max_packets = 3, .cmd = "trace dport 22" };
	struct xnf_trace *t = NULL, *t2 = NULL;
	struct xnf_trace_cfg cfg;
	struct xnf_change c;
	__u64 traced = 9, lost = 9, seq;
	char err[256];
	struct fx f;

	if (!fx_open(&f))
		return;
	o.match.flags = XNF_FW_F_DPORT;
	o.match.dport_lo = o.match.dport_hi = 22;
	if (!ASSERT_OK(xnf_trace_start(f.dp, &o, &t, err, sizeof(err)), err))
		goto out;
	if (!cfg_get(&f, &cfg))
		goto out;
	ASSERT_EQ(cfg.id, xnf_trace_id(t), "armed with its id");
	ASSERT_NEQ(cfg.id, 0U, "an id is never 0");
	ASSERT_EQ(cfg.pid, (__u32)getpid(), "the tracer's pid");
	ASSERT_EQ(cfg.max_packets, 3ULL, "count");
	/* No timeout asked for: the deadline is the lease. */
	ASSERT_EQ(cfg.lease_ms, XNF_TRACE_LEASE_MS, "lease");
	ASSERT_LE(cfg.deadline_ns, mono_ns() + XNF_TRACE_LEASE_MS * 1000000ull,
		  "deadline: the lease");
	ASSERT_EQ(cfg.matched, 0ULL, "nothing taken yet");
	ASSERT_EQ(cfg.match.flags, (__u32)XNF_FW_F_DPORT, "the match");
	ASSERT_EQ(cfg.match.dport_lo, 22, "its port");
	ASSERT_FALSE(xnf_trace_ended(t), "running");

	/* The start is in the change log, under the trace's id. */
	if (ASSERT_OK(xnf_change_seq(f.dp, &seq), "change seq") &&
	    ASSERT_OK(xnf_change_read(f.dp, seq, &c), "change")) {
		ASSERT_EQ((__u32)seq, cfg.id, "id = its change's number");
		ASSERT_TRUE(!strcmp(c.cmd, "trace dport 22"), "command");
	}

	/* A second tracer while this one lives (its pid is alive). */
	ASSERT_EQ(xnf_trace_start(f.dp, &o, &t2, err, sizeof(err)), -EBUSY,
		  "a live tracer's trace is refused");
	ASSERT_TRUE(t2 == NULL, "no trace out");
	if (!cfg_get(&f, &cfg))
		goto out;
	ASSERT_EQ(cfg.id, xnf_trace_id(t), "still the first one's");

	ASSERT_OK(xnf_trace_stop(t, &traced, &lost), "stop");
	t = NULL;
	ASSERT_EQ(traced, 0ULL, "no packet traced");
	ASSERT_EQ(lost, 0ULL, "none lost");
	if (cfg_get(&f, &cfg))
		ASSERT_EQ(cfg.id, 0U, "stop disarms");
	if (ASSERT_OK(xnf_change_seq(f.dp, &seq), "change seq") &&
	    ASSERT_OK(xnf_change_read(f.dp, seq, &c), "change"))
		ASSERT_TRUE(strstr(c.msg, "ended") != NULL, "the end is logged");

	/* The next trace gets another id. */
	if (ASSERT_OK(xnf_trace_start(f.dp, &o, &t, err, sizeof(err)), err))
		ASSERT_NEQ(xnf_trace_id(t), cfg.id ?: 1U, "a new id");
out:
	if (t)
		xnf_trace_stop(t, NULL, NULL);
	fx_close(&f);
}

TEST(trace_lib_refuse)
{
	struct xnf_trace_opts o = {};
	struct xnf_trace *t = NULL;
	struct xnf_trace_cfg cfg;
	char err[256];
	struct fx f;

	if (!fx_open(&f))
		return;
	ASSERT_EQ(xnf_trace_start(f.dp, &o, &t, err, sizeof(err)), -EINVAL,
		  "no bound");
	o.timeout_s = 5;
	o.match.flags = XNF_FW_F_CT;
	o.match.ct_states = 1 << XNF_CT_NEW;
	ASSERT_EQ(xnf_trace_start(f.dp, &o, &t, err, sizeof(err)), -EINVAL,
		  "ct state");
	memset(&o.match, 0, sizeof(o.match));
	o.match.flags = XNF_FW_F_SPORT;
	o.match.sport_lo = 90;
	o.match.sport_hi = 80;
	ASSERT_EQ(xnf_trace_start(f.dp, &o, &t, err, sizeof(err)), -EINVAL,
		  "an empty port range");
	ASSERT_TRUE(t == NULL, "nothing armed");
	if (cfg_get(&f, &cfg))
		ASSERT_EQ(cfg.id, 0U, "not armed");
	fx_close(&f);
}

/* Whose armed trace is taken over: @cfg's, @busy: refused. */
static void takeover(struct fx *f, const struct xnf_trace_cfg *cfg, bool busy,
		     const char *what)
{
	struct xnf_trace_opts o = { .timeout_s = 30 };
	struct xnf_trace *t = NULL;
	struct xnf_trace_cfg now;
	char err[256];
	int ret;

	if (!cfg_put(f, cfg))
		return;
	ret = xnf_trace_start(f->dp, &o, &t, err, sizeof(err));
	if (busy) {
		ASSERT_EQ(ret, -EBUSY, what);
		ASSERT_TRUE(strstr(err, "pid 1 ") != NULL, "names the tracer");
		if (cfg_get(f, &now))
			ASSERT_EQ(now.id, cfg->id, "left armed");
		return;
	}
	if (!ASSERT_OK(ret, what))
		return;
	if (cfg_get(f, &now)) {
		ASSERT_EQ(now.id, xnf_trace_id(t), "taken over");
		ASSERT_EQ(now.matched, 0ULL, "its count from 0");
	}
	xnf_trace_stop(t, NULL, NULL);
}

TEST(trace_lib_takeover)
{
	struct xnf_trace_cfg cfg = { .id = 77, .pid = 1 };
	struct fx f;

	if (!fx_open(&f))
		return;
	/* pid 1 is alive: a live tracer, unbounded here so that only its
	 * pid counts. */
	takeover(&f, &cfg, true, "pid 1's trace, running");
	cfg.deadline_ns = mono_ns() + 60000000000ull;
	takeover(&f, &cfg, true, "pid 1's trace, deadline ahead");
	cfg.deadline_ns = mono_ns() - 1;
	takeover(&f, &cfg, false, "deadline passed (not disarmed yet)");
	cfg.deadline_ns = 0;
	cfg.max_packets = 5;
	cfg.matched = 5;
	takeover(&f, &cfg, false, "count reached");
	cfg.max_packets = cfg.matched = 0;
	cfg.pid = dead_pid();
	takeover(&f, &cfg, false, "a dead tracer's");
	fx_close(&f);
}

static int count_rec(const struct xnf_trace_rec *r, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

/* Polls until the trace ends, at most @ms. */
static bool poll_end(struct xnf_trace *t, int ms, int *n)
{
	int i;

	for (i = 0; i < ms / 100 && !xnf_trace_ended(t); i++)
		if (xnf_trace_poll(t, 100, count_rec, n) < 0)
			return false;
	return xnf_trace_ended(t);
}

TEST(trace_lib_end)
{
	struct xnf_trace_opts o = { .timeout_s = 1 };
	struct xnf_trace *t = NULL;
	struct xnf_trace_cfg cfg;
	__u64 t0 = mono_ns();
	char err[256];
	struct fx f;
	int n = 0;

	if (!fx_open(&f))
		return;
	/* By time: the deadline is a second ahead. */
	if (!ASSERT_OK(xnf_trace_start(f.dp, &o, &t, err, sizeof(err)), err))
		goto out;
	if (cfg_get(&f, &cfg)) {
		ASSERT_GE(cfg.deadline_ns, t0 + 1000000000ull, "deadline");
		ASSERT_LE(cfg.deadline_ns, mono_ns() + 1000000000ull,
			  "deadline from now");
		ASSERT_TRUE(xnf_trace_left_ns(&cfg) > 0, "time left");
	}
	ASSERT_TRUE(poll_end(t, 5000, &n), "ends by itself");
	ASSERT_GE(mono_ns(), t0 + 1000000000ull, "not before the deadline");
	ASSERT_EQ(xnf_trace_why(t), XNF_TRACE_TIMEOUT, "timeout");
	ASSERT_EQ(n, 0, "no record");
	ASSERT_EQ(xnf_trace_poll(t, 10, count_rec, &n), 0, "0 at end");
	xnf_trace_stop(t, NULL, NULL);
	t = NULL;
	if (cfg_get(&f, &cfg))
		ASSERT_EQ(cfg.id, 0U, "disarmed");

	/* By count: the datapath disarmed it (its last record lost). */
	o.timeout_s = 0;
	o.max_packets = 2;
	if (!ASSERT_OK(xnf_trace_start(f.dp, &o, &t, err, sizeof(err)), err))
		goto out;
	ASSERT_OK(xnf_trace_poll(t, 10, count_rec, &n), "poll");
	ASSERT_FALSE(xnf_trace_ended(t), "armed");
	if (cfg_get(&f, &cfg)) {
		cfg.id = 0;
		cfg.matched = 3;
		cfg_put(&f, &cfg);
	}
	ASSERT_TRUE(poll_end(t, 1000, &n), "ends");
	ASSERT_EQ(xnf_trace_why(t), XNF_TRACE_COUNT_REACHED, "count reached");
	xnf_trace_stop(t, NULL, NULL);
	t = NULL;

	/* Another took the entry (only under its lock; written here by
	 * hand): it ends this one, whose stop leaves the other armed. */
	o.max_packets = 0;
	o.timeout_s = 30;
	if (!ASSERT_OK(xnf_trace_start(f.dp, &o, &t, err, sizeof(err)), err))
		goto out;
	if (cfg_get(&f, &cfg)) {
		cfg.id = xnf_trace_id(t) + 1000;
		cfg_put(&f, &cfg);
	}
	ASSERT_TRUE(poll_end(t, 1000, &n), "ends");
	ASSERT_EQ(xnf_trace_why(t), XNF_TRACE_GONE, "disarmed by another");
	xnf_trace_stop(t, NULL, NULL);
	t = NULL;
	if (cfg_get(&f, &cfg))
		ASSERT_NEQ(cfg.id, 0U, "the other's left armed");
out:
	if (t)
		xnf_trace_stop(t, NULL, NULL);
	fx_close(&f);
}

/* A trace without a timeout: its tracer's polls renew the lease; a tracer
 * that stops polling (killed) has its trace over when the lease runs out,
 * and the next tracer takes it over though the first one's pid lives. */
TEST(trace_lib_lease)
{
	struct xnf_trace_opts o = { .max_packets = 5, .lease_ms = 400 };
	struct xnf_trace *t = NULL, *t2 = NULL;
	struct xnf_trace_cfg cfg;
	__u64 t0 = mono_ns(), before;
	char err[256];
	struct fx f;
	int n = 0;

	if (!fx_open(&f))
		return;
	if (!ASSERT_OK(xnf_trace_start(f.dp, &o, &t, err, sizeof(err)), err))
		goto out;
	if (!cfg_get(&f, &cfg))
		goto out;
	ASSERT_EQ(cfg.lease_ms, 400U, "lease");
	ASSERT_GE(cfg.deadline_ns, t0 + 400000000ull, "deadline: the lease");
	before = cfg.deadline_ns;
	usleep(300000);
	ASSERT_GE(xnf_trace_poll(t, 10, count_rec, &n), 0, "poll");
	if (cfg_get(&f, &cfg)) {
		ASSERT_GT(cfg.deadline_ns, before, "renewed by the poll");
		ASSERT_EQ(cfg.id, xnf_trace_id(t), "still armed");
		ASSERT_TRUE(xnf_trace_live(&cfg), "live");
	}
	/* No poll for longer than the lease: over, though this pid lives. */
	usleep(600000);
	if (cfg_get(&f, &cfg))
		ASSERT_FALSE(xnf_trace_live(&cfg), "over without its tracer");
	ASSERT_OK(xnf_trace_start(f.dp, &o, &t2, err, sizeof(err)), "taken over");
	if (t2)
		xnf_trace_stop(t2, NULL, NULL);
	xnf_trace_stop(t, NULL, NULL);
	t = NULL;
	if (cfg_get(&f, &cfg))
		ASSERT_EQ(cfg.id, 0U, "disarmed");
out:
	if (t)
		xnf_trace_stop(t, NULL, NULL);
	fx_close(&f);
}
