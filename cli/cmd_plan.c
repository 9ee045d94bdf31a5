// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf plan DEV [queues N] [cores LIST]
 *
 * Prints (or with -j emits) where DEV's queues, their IRQs, their XDP work
 * and their userspace workers would run, and why (loader/placement.c).
 * On a device xnf attached with a placement it also prints what attach
 * applied, what has drifted since (an IRQ irqbalance moved, a napi thread
 * on other CPUs, a channel count changed) and on which CPUs the chain
 * actually ran (the per-CPU "in" counters of xnf_stats).
 *
 * Sysfs and procfs are read below $XNF_SYSFS_ROOT (default: the real
 * system), so a fixture tree can stand for another machine.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "placement.h"
#include "stats.h"

#define PLAN_MAX_DRIFT 64

/* Asked for ('xnf plan help'): on stdout. */
static int do_plan_help(void)
{
	printf("Usage: xnf plan DEV [queues N] [cores LIST]\n"
	       "  Where DEV's queues, IRQs, XDP work and userspace workers would run, and\n"
	       "  why; on a device attached with a placement, also drift since attach.\n"
	       "  queues N     this many queues (at most the device's maximum channels)\n"
	       "  cores LIST   XDP work on these CPUs (\"2-5,8\"), queue i on the i-th\n"
	       "  XNF_SYSFS_ROOT=DIR reads sysfs/procfs below DIR (fixtures) instead of /.\n");
	return 0;
}

/* "queues N" and "cores LIST|auto" for plan and attach; 1 if @argv[0] was
 * one of them (both words consumed), 0 if not, -1 after an error. */
int cli_parse_placement(int *argc, char ***argv, struct xnf_plan_req *req,
			bool *have_queues, bool *have_cores)
{
	char **av = *argv;
	int rc;

	if (is_prefix(av[0], "queues")) {
		if (*argc < 2)
			return cli_err("queues: missing number; write 'queues 4'");
		if (parse_u32(av[1], "queue count", &req->queues))
			return -1;
		if (!req->queues || req->queues > XNF_PLACE_MAX_QUEUES)
			return cli_err("queues %u: expected 1..%d", req->queues,
				       XNF_PLACE_MAX_QUEUES);
		*have_queues = true;
	} else if (!strncmp(av[0], "co", 2) && is_prefix(av[0], "cores")) {
		/* "c" alone stays "chain" for attach. */
		if (*argc < 2)
			return cli_err("cores: missing list; write 'cores 2-5,8' or "
				       "'cores auto'");
		*have_cores = true;
		if (!strcmp(av[1], "auto")) {
			req->have_cores = false;
		} else {
			rc = xnf_cpuset_parse(av[1], &req->cores);
			if (rc || !xnf_cpuset_count(&req->cores))
				return cli_err("invalid cores '%s': expected a CPU list "
					       "such as 2-5,8 (CPUs 0..%d) or auto",
					       av[1], XNF_PLACE_MAX_CPUS - 1);
			req->have_cores = true;
		}
	} else {
		return 0;
	}
	*argc -= 2;
	*argv += 2;
	return 1;
}

static const char *sysfs_root(void)
{
	return getenv("XNF_SYSFS_ROOT") ?: "";
}

/* A CPU set: an array of CPU numbers in JSON; in text "2-5,8" (or "none"
 * for an empty set) through @fmt. */
static void print_cpus(enum print_type t, const char *key, const char *fmt,
		       const struct xnf_cpuset *s)
{
	char list[1024];
	int cpu;

	if (t & PRINT_JSON) {
		open_json_array(key);
		for (cpu = xnf_cpuset_next(s, 0); cpu >= 0;
		     cpu = xnf_cpuset_next(s, cpu + 1))
			print_uint(PRINT_JSON, NULL, NULL, cpu);
		close_json_array();
	}
	if (t & PRINT_FP)
		print_string(PRINT_FP, NULL, fmt,
			     xnf_cpuset_count(s) ?
				     xnf_cpuset_format(s, list, sizeof(list)) :
				     "none");
}

static const char *fmt_channels(const struct xnf_nic *nic, char *buf, size_t len)
{
	const struct xnf_channels *c = &nic->ch;
	size_t n = 0;

	if (nic->chan_err) {
		snprintf(buf, len, "unknown (%s)", strerror(-nic->chan_err));
		return buf;
	}
	buf[0] = '\0';
	if (c->max_combined)
		n += snprintf(buf + n, len - n, "combined %u (max %u)",
			      c->combined, c->max_combined);
	if (c->max_rx && n < len)
		n += snprintf(buf + n, len - n,
			      "%srx %u (max %u), tx %u (max %u)", n ? ", " : "",
			      c->rx, c->max_rx, c->tx, c->max_tx);
	if (c->max_other && n < len)
		snprintf(buf + n, len - n, "%sother %u", n ? ", " : "", c->other);
	return buf;
}

/* The channel counts: an object (null when unknown) in JSON, a phrase in
 * text. */
static void print_channels(const struct xnf_nic *nic)
{
	char buf[1024];

	print_text("channels: %s; ", fmt_channels(nic, buf, sizeof(buf)));
	if (nic->chan_err) {
		print_null(PRINT_JSON, "channels", NULL);
		return;
	}
	open_json_object("channels");
	print_uint(PRINT_JSON, "combined", NULL, nic->ch.combined);
	print_uint(PRINT_JSON, "max_combined", NULL, nic->ch.max_combined);
	print_uint(PRINT_JSON, "rx", NULL, nic->ch.rx);
	print_uint(PRINT_JSON, "max_rx", NULL, nic->ch.max_rx);
	print_uint(PRINT_JSON, "tx", NULL, nic->ch.tx);
	print_uint(PRINT_JSON, "max_tx", NULL, nic->ch.max_tx);
	print_uint(PRINT_JSON, "other", NULL, nic->ch.other);
	print_uint(PRINT_JSON, "max_other", NULL, nic->ch.max_other);
	close_json_object();
}

/* What a queue's IRQ column shows: the IRQ name, or its napi thread. */
static const char *queue_source(const struct xnf_plan *p, int i, char *buf,
				size_t len)
{
	const struct xnf_nic_queue *nq = &p->nic.q[i];

	if (p->q[i].irq >= 0)
		snprintf(buf, len, "%s", p->q[i].irq_name);
	else if (p->use_napi_threads && nq->napi_pid)
		snprintf(buf, len, "napi/%s-%u (pid %d)", p->dev, nq->napi_id,
			 nq->napi_pid);
	else if (p->use_napi_threads)
		snprintf(buf, len, "napi thread (made at attach)");
	else
		snprintf(buf, len, "-");
	return buf;
}

struct applied {
	bool have;
	struct xnf_place_state *st;
	int ndrift;
	struct xnf_drift drift[PLAN_MAX_DRIFT];
	bool have_work;
	int ncpus;
	__u64 *in; /* [ncpus] entry.in per CPU */
};

/* A running AF_XDP worker whose thread may run elsewhere than the plan
 * put it (started with other cores, or moved with taskset since): its
 * affinity, read from /proc, against the recorded worker CPU. */
static void workers_drift(const char *dev, struct applied *a)
{
	struct xnf_worker_entry *ws;
	struct xnf_cpuset now, want;
	char path[64], line[1100], l1[1024];
	struct xnf_drift *d;
	int i, n;
	FILE *f;
	__u32 q;

	n = xnf_workers_read(cli.root, dev, a->st->info.nqueues, &ws);
	for (i = 0; i < n; i++) {
		const struct xnf_worker_stats *w = &ws[i].w;

		if (!ws[i].alive)
			continue;
		q = ws[i].queue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/status", w->pid,
			 w->tid);
		f = fopen(path, "r");
		if (!f)
			continue;
		xnf_cpuset_zero(&now);
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "Cpus_allowed_list:", 18))
				xnf_cpuset_parse(line + 18 +
							 strspn(line + 18, " \t"),
						 &now);
		fclose(f);
		xnf_cpuset_zero(&want);
		xnf_cpuset_set(&want, a->st->q[q].worker_cpu);
		if (xnf_cpuset_equal(&now, &want) || a->ndrift >= PLAN_MAX_DRIFT)
			continue;
		d = &a->drift[a->ndrift++];
		memset(d, 0, sizeof(*d));
		d->kind = XNF_DRIFT_WORKER;
		d->queue = q;
		d->irq = -1;
		d->want = a->st->q[q].worker_cpu;
		d->now = now;
		snprintf(d->text, sizeof(d->text),
			 "queue %u: AF_XDP worker (pid %u) "
			 "runs on CPUs %s, planned CPU %d; restart it without "
			 "`cores` to follow the plan",
			 q, w->pid, xnf_cpuset_format(&now, l1, sizeof(l1)),
			 d->want);
	}
	if (n > 0)
		free(ws);
}

/* The placement attach recorded for @dev, its drift, and where the chain
 * ran. Nothing (and no error) when @dev is not attached with one. */
static int applied_read(const char *root, const char *dev, struct applied *a)
{
	struct xnf_stats *percpu = NULL, sum;
	char path[PATH_MAX];
	struct xnf_dp *dp;
	int cpu, err;

	/* A fixture describes another machine: its devices are not ours. */
	if (*root && strcmp(root, "/"))
		return 0;
	cli_dev_path(path, dev, XNF_MAP_STR(XNF_MAP_PLACE));
	if (access(path, F_OK))
		return 0;
	dp = cli_dp_read();
	if (!dp)
		return -1;
	a->st = calloc(1, sizeof(*a->st));
	if (!a->st)
		return cli_err("out of memory");
	cli_dev_path(path, dev, NULL);
	err = xnf_place_load(path, a->st);
	if (err)
		return cli_err("cannot read the placement of %s in %s: %s", dev,
			       path, strerror(-err));
	a->have = true;
	a->ndrift = xnf_place_drift(root, dev, a->st, a->drift, PLAN_MAX_DRIFT);
	if (a->ndrift < 0)
		return cli_err("cannot compare the placement of %s with the host: %s",
			       dev, strerror(-a->ndrift));
	if (a->ndrift > PLAN_MAX_DRIFT)
		a->ndrift = PLAN_MAX_DRIFT;
	workers_drift(dev, a);
	a->ncpus = xnf_ncpus();
	if (a->ncpus < 1)
		return 0;
	percpu = calloc(a->ncpus, sizeof(*percpu));
	a->in = calloc(a->ncpus, sizeof(*a->in));
	if (percpu && a->in && !xnf_dev_stats_read(dp, dev, &sum, percpu)) {
		for (cpu = 0; cpu < a->ncpus; cpu++)
			a->in[cpu] = percpu[cpu].nf[XNF_NF_ENTRY].in;
		a->have_work = true;
	}
	free(percpu);
	return 0;
}

static bool cpu_planned(const struct xnf_place_state *st, int cpu)
{
	__u32 i;

	for (i = 0; i < st->info.nqueues; i++)
		if ((int)st->q[i].cpu == cpu)
			return true;
	return false;
}

/* What attach applied: an "applied" object (null without one) in JSON; in
 * text its CPUs, the drift since and where the chain ran. */
static void print_applied(const struct xnf_plan *p, const struct applied *a)
{
	const struct xnf_place_state *st = a->st;
	bool any = false;
	char list[1024];
	__u32 i;
	int k, cpu;

	if (!a->have) {
		print_null(PRINT_JSON, "applied", NULL);
		return;
	}
	open_json_object("applied");
	print_uint(PRINT_ANY, "nqueues", "applied at attach: %llu queue",
		   st->info.nqueues);
	print_text("%s, XDP work on CPUs", st->info.nqueues == 1 ? "" : "s");
	print_int(PRINT_JSON, "node", NULL, st->info.node);
	print_bool(PRINT_JSON, "channels_set", NULL,
		   st->info.flags & XNF_PLACE_CHANNELS);
	print_bool(PRINT_JSON, "threaded_set", NULL,
		   st->info.flags & XNF_PLACE_THREADED);
	print_bool(PRINT_JSON, "irqs_set", NULL, st->info.flags & XNF_PLACE_IRQS);
	print_bool(PRINT_JSON, "napi_pinned", NULL,
		   st->info.flags & XNF_PLACE_NAPI);
	open_json_object("previous");
	print_uint(PRINT_JSON, "combined", NULL, st->info.prev_combined);
	print_uint(PRINT_JSON, "rx", NULL, st->info.prev_rx);
	print_uint(PRINT_JSON, "tx", NULL, st->info.prev_tx);
	print_uint(PRINT_JSON, "other", NULL, st->info.prev_other);
	print_uint(PRINT_JSON, "threaded", NULL, st->info.prev_threaded);
	close_json_object();
	open_json_array("queues");
	for (i = 0; i < st->info.nqueues; i++) {
		struct xnf_cpuset prev;

		open_json_object(NULL);
		print_uint(PRINT_JSON, "queue", NULL, i);
		print_int(PRINT_JSON, "irq", NULL, st->q[i].irq);
		print_uint(PRINT_ANY, "cpu", i ? ",%llu" : " %llu", st->q[i].cpu);
		print_uint(PRINT_JSON, "worker_cpu", NULL, st->q[i].worker_cpu);
		print_bool(PRINT_JSON, "irq_set", NULL,
			   st->q[i].flags & XNF_PLACE_Q_IRQ);
		print_bool(PRINT_JSON, "napi_pinned", NULL,
			   st->q[i].flags & XNF_PLACE_Q_NAPI);
		print_uint(PRINT_JSON, "napi_id", NULL, st->q[i].napi_id);
		memcpy(prev.w, st->q[i].prev_irq, sizeof(prev.w));
		if (st->q[i].flags & XNF_PLACE_Q_IRQ)
			print_string(PRINT_JSON, "previous_irq_affinity", NULL,
				     xnf_cpuset_format(&prev, list, sizeof(list)));
		close_json_object();
	}
	close_json_array();
	print_text(" (%s%s%s)\n",
		   st->info.flags & XNF_PLACE_CHANNELS ? "channels set; " : "",
		   st->info.flags & XNF_PLACE_THREADED ?
			   "threaded NAPI turned on; " :
			   "",
		   st->info.flags & XNF_PLACE_IRQS ?
			   "IRQ affinities set" :
		   st->info.flags & XNF_PLACE_NAPI ?
			   "napi threads pinned" :
			   "no IRQ or napi thread could be placed");
	print_text(a->ndrift ? "drift:\n" : "drift: none\n");
	open_json_array("drift");
	for (k = 0; k < a->ndrift; k++) {
		const struct xnf_drift *d = &a->drift[k];

		open_json_object(NULL);
		print_string(PRINT_JSON, "kind", NULL,
			     xnf_drift_kind_name(d->kind));
		print_int(PRINT_JSON, "queue", NULL, d->queue);
		if (d->irq >= 0)
			print_int(PRINT_JSON, "irq", NULL, d->irq);
		print_int(PRINT_JSON, "want", NULL, d->want);
		if (d->kind == XNF_DRIFT_CHANNELS)
			print_int(PRINT_JSON, "now", NULL, d->now_count);
		else if (d->kind == XNF_DRIFT_IRQ || d->kind == XNF_DRIFT_NAPI)
			print_cpus(PRINT_JSON, "now", NULL, &d->now);
		print_string(PRINT_ANY, "text", "  %s\n", d->text);
		close_json_object();
	}
	close_json_array();
	if (a->ndrift)
		print_text("  ('xnf detach %s' and attach again re-applies the plan)\n",
			   p->dev);
	if (a->have_work) {
		print_text("work seen (packets that entered the chain, per CPU):");
		open_json_array("work");
		for (cpu = 0; cpu < a->ncpus; cpu++) {
			if (!a->in[cpu])
				continue;
			any = true;
			open_json_object(NULL);
			print_uint(PRINT_ANY, "cpu", "  cpu%llu", cpu);
			print_uint(PRINT_ANY, "packets", " %llu", a->in[cpu]);
			print_bool(PRINT_JSON, "planned", NULL,
				   cpu_planned(st, cpu));
			if (!cpu_planned(st, cpu))
				print_text(" (not planned)");
			close_json_object();
		}
		close_json_array();
		print_text("%s\n", any ? "" : "  none yet");
	}
	close_json_object();
}

/* The plan of @p, and what attach applied (@a). */
static void print_plan(const struct xnf_plan *p, const struct applied *a)
{
	char l1[1024], l2[1024], src[128];
	int i;

	if (*p->root)
		print_text("(sysfs and procfs of %s)\n", p->root);
	open_json_doc("xnf/plan/1");
	print_string(PRINT_ANY, "dev", "%s: ", p->dev);
	print_string(PRINT_JSON, "root", NULL, *p->root ? p->root : "/");
	if (p->nic.node >= 0) {
		print_int(PRINT_ANY, "node", "NUMA node %lld", p->nic.node);
		print_text(", CPUs %s",
			   xnf_cpuset_format(&p->topo.node_cpus[p->nic.node],
					     l1, sizeof(l1)));
	} else {
		print_null(PRINT_ANY, "node", "no NUMA node");
	}
	print_cpus(PRINT_JSON, "node_cpus", NULL, &p->node_cpus);
	print_cpus(PRINT_JSON, "online", NULL, &p->topo.online);
	print_text(" (%d CPU%s online, ", xnf_cpuset_count(&p->topo.online),
		   xnf_cpuset_count(&p->topo.online) == 1 ? "" : "s");
	print_cpus(PRINT_JSON, "isolated", NULL, &p->isolated);
	print_uint(PRINT_ANY, "nodes", "%llu node", p->topo.nnodes);
	print_bool(PRINT_JSON, "smt", NULL, p->topo.smt);
	print_text("%s%s)\n", p->topo.nnodes == 1 ? "" : "s",
		   p->topo.smt ? ", hyperthreads" : "");
	if (xnf_cpuset_count(&p->topo.isolcpus) ||
	    xnf_cpuset_count(&p->topo.nohz_full))
		print_text("isolated: isolcpus=%s%s%s nohz_full=%s\n",
			   p->topo.isolcpus_flags,
			   *p->topo.isolcpus_flags ? "," : "",
			   xnf_cpuset_format(&p->topo.isolcpus, l1, sizeof(l1)),
			   xnf_cpuset_format(&p->topo.nohz_full, l2, sizeof(l2)));
	print_channels(&p->nic);
	print_uint(PRINT_ANY, "queues_now", "queues %llu now, ", p->queues_now);
	print_uint(PRINT_JSON, "queues_max", NULL, p->queues_max);
	print_uint(PRINT_ANY, "nqueues", "%llu planned", p->nqueues);
	print_bool(PRINT_JSON, "set_channels", NULL, p->set_channels);
	print_text("%s\n", p->set_channels ? " (attach sets them)" : "");
	print_uint(PRINT_JSON, "irqs", NULL, p->nic.nqirqs);
	print_string(PRINT_JSON, "mode", NULL,
		     p->use_napi_threads ? "napi_threads" : "irq_affinity");
	if (p->nic.threaded >= 0)
		print_bool(PRINT_JSON, "threaded_napi", NULL,
			   p->nic.threaded > 0);
	else
		print_null(PRINT_JSON, "threaded_napi", NULL);
	print_text("%5s  %4s  %-32s %7s  %10s\n", "queue", "irq", "source",
		   "xdp cpu", "worker cpu");
	open_json_array("queues");
	for (i = 0; i < p->nqueues; i++) {
		open_json_object(NULL);
		print_uint(PRINT_ANY, "queue", "%5llu  ", i);
		if (p->q[i].irq >= 0) {
			print_int(PRINT_ANY, "irq", "%4lld  ", p->q[i].irq);
			print_string(PRINT_JSON, "irq_name", NULL,
				     p->q[i].irq_name);
		} else {
			print_null(PRINT_ANY, "irq", "   -  ");
			if (p->use_napi_threads && p->nic.q[i].napi_pid) {
				print_uint(PRINT_JSON, "napi_id", NULL,
					   p->nic.q[i].napi_id);
				print_int(PRINT_JSON, "napi_pid", NULL,
					  p->nic.q[i].napi_pid);
			}
		}
		queue_source(p, i, src, sizeof(src));
		print_string(PRINT_FP, NULL, "%-32s ", src);
		print_uint(PRINT_ANY, "cpu", "%7llu  ", p->q[i].cpu);
		print_int(PRINT_JSON, "cpu_node", NULL,
			  p->topo.node[p->q[i].cpu]);
		print_uint(PRINT_ANY, "worker_cpu", "%10llu", p->q[i].worker_cpu);
		print_string(PRINT_JSON, "source", NULL, src);
		close_json_object();
		print_nl();
	}
	close_json_array();
	print_cpus(PRINT_ANY, "xdp_cpus", "XDP work on CPUs %s", &p->xdp_cpus);
	print_cpus(PRINT_ANY, "worker_cpus", ", workers on %s", &p->worker_cpus);
	print_cpus(PRINT_ANY, "rest", "; the rest of the system: %s\n", &p->rest);
	print_bool(PRINT_JSON, "siblings_used", NULL, p->siblings_used);
	print_bool(PRINT_JSON, "cpu0_used", NULL, p->cpu0_used);
	print_bool(PRINT_JSON, "shared", NULL, p->shared);
	print_bool(PRINT_JSON, "workers_shared", NULL, p->workers_shared);
	print_bool(PRINT_JSON, "cross_node", NULL, p->cross_node);
	print_text("why:\n");
	open_json_array("notes");
	for (i = 0; i < p->nnotes; i++)
		print_string(PRINT_ANY, NULL, "  - %s\n", p->notes[i]);
	close_json_array();
	open_json_array("warnings");
	for (i = 0; i < p->nwarnings; i++)
		print_string(PRINT_ANY, NULL, "Warning: %s\n", p->warnings[i]);
	close_json_array();
	print_applied(p, a);
	close_json_object();
}

int do_plan(int argc, char **argv)
{
	char err[XNF_PLACE_ERR_LEN] = "";
	struct xnf_plan_req req = {};
	bool have_queues = false, have_cores = false;
	struct applied a = {};
	struct xnf_plan *p = NULL;
	const char *dev, *root = sysfs_root();
	int rc, ret = -1;

	if (argc > 0 && is_prefix(argv[0], "help"))
		return do_plan_help();
	if (argc < 1)
		return cli_err("plan takes a device (xnf plan DEV); try 'xnf "
			       "plan help'");
	dev = argv[0];
	NEXT_ARG();
	while (argc > 0) {
		rc = cli_parse_placement(&argc, &argv, &req, &have_queues,
					 &have_cores);
		if (rc < 0)
			return -1;
		if (!rc)
			return cli_err("unknown plan argument '%s'; see 'xnf plan help'",
				       argv[0]);
	}
	rc = xnf_plan_compute(root, dev, &req, &p, err, sizeof(err));
	if (rc)
		return cli_err("%s", *err ? err : strerror(-rc));
	if (applied_read(root, dev, &a))
		goto out;
	print_plan(p, &a);
	ret = 0;
out:
	free(a.st);
	free(a.in);
	free(p);
	return ret;
}
