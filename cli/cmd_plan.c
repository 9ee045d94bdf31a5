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
#include <bpf/bpf.h>

#include "cli.h"
#include "placement.h"
#include "worker.h"

#define PLAN_MAX_DRIFT 64

static int do_plan_help(void)
{
	fprintf(stderr,
"Usage: xnf plan DEV [queues N] [cores LIST]\n"
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

static void jw_cpus(const char *key, const struct xnf_cpuset *s)
{
	int cpu;

	jw_array(key);
	for (cpu = xnf_cpuset_next(s, 0); cpu >= 0; cpu = xnf_cpuset_next(s, cpu + 1))
		jw_uint(NULL, cpu);
	jw_end_array();
}

static void jw_channels(const struct xnf_nic *nic)
{
	if (nic->chan_err) {
		jw_null("channels");
		return;
	}
	jw_object("channels");
	jw_uint("combined", nic->ch.combined);
	jw_uint("max_combined", nic->ch.max_combined);
	jw_uint("rx", nic->ch.rx);
	jw_uint("max_rx", nic->ch.max_rx);
	jw_uint("tx", nic->ch.tx);
	jw_uint("max_tx", nic->ch.max_tx);
	jw_uint("other", nic->ch.other);
	jw_uint("max_other", nic->ch.max_other);
	jw_end_object();
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
		n += snprintf(buf + n, len - n, "combined %u (max %u)", c->combined,
			      c->max_combined);
	if (c->max_rx && n < len)
		n += snprintf(buf + n, len - n, "%srx %u (max %u), tx %u (max %u)",
			      n ? ", " : "", c->rx, c->max_rx, c->tx, c->max_tx);
	if (c->max_other && n < len)
		snprintf(buf + n, len - n, "%sother %u", n ? ", " : "", c->other);
	return buf;
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
	__u64 *in;                   /* [ncpus] entry.in per CPU */
};

/* A running AF_XDP worker whose thread may run elsewhere than the plan
 * put it (started with other cores, or moved with taskset since): its
 * affinity, read from /proc, against the recorded worker CPU. */
static void workers_drift(const char *dev, struct applied *a)
{
	struct xnf_worker_stats w;
	struct xnf_cpuset now, want;
	char path[64], line[1100], l1[1024];
	struct xnf_drift *d;
	FILE *f;
	__u32 q;
	int fd;

	fd = xnf_workers_open(cli.root, dev, false);
	if (fd < 0)
		return;
	for (q = 0; q < XNF_WORKER_MAX && q < a->st->info.nqueues; q++) {
		if (bpf_map_lookup_elem(fd, &q, &w) || !xnf_worker_alive(&w))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/status", w.pid, w.tid);
		f = fopen(path, "r");
		if (!f)
			continue;
		xnf_cpuset_zero(&now);
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "Cpus_allowed_list:", 18))
				xnf_cpuset_parse(line + 18 + strspn(line + 18, " \t"),
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
		snprintf(d->text, sizeof(d->text), "queue %u: AF_XDP worker (pid %u) "
			 "runs on CPUs %s, planned CPU %d; restart it without "
			 "`cores` to follow the plan", q, w.pid,
			 xnf_cpuset_format(&now, l1, sizeof(l1)), d->want);
	}
	close(fd);
}

/* The placement attach recorded for @dev, its drift, and where the chain
 * ran. Nothing (and no error) when @dev is not attached with one. */
static int applied_read(const char *root, const char *dev, struct applied *a)
{
	struct xnf_stats *percpu = NULL, sum;
	char path[PATH_MAX];
	int fd, cpu, err;

	/* A fixture describes another machine: its devices are not ours. */
	if (*root && strcmp(root, "/"))
		return 0;
	cli_dev_path(path, dev, XNF_MAP_STR(XNF_MAP_PLACE));
	if (access(path, F_OK))
		return 0;
	if (!cli_dp(false))
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
	cli_dev_path(path, dev, XNF_MAP_STR(XNF_MAP_STATS));
	fd = bpf_obj_get(path);
	if (fd < 0 || a->ncpus < 1)
		return 0;
	percpu = calloc(a->ncpus, sizeof(*percpu));
	a->in = calloc(a->ncpus, sizeof(*a->in));
	if (percpu && a->in && !xnf_stats_read(fd, &sum, percpu)) {
		for (cpu = 0; cpu < a->ncpus; cpu++)
			a->in[cpu] = percpu[cpu].nf[XNF_NF_ENTRY].in;
		a->have_work = true;
	}
	free(percpu);
	close(fd);
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

static void print_applied_json(const struct applied *a)
{
	const struct xnf_place_state *st = a->st;
	char list[1024];
	__u32 i;
	int k, cpu;

	if (!a->have) {
		jw_null("applied");
		return;
	}
	jw_object("applied");
	jw_uint("nqueues", st->info.nqueues);
	jw_int("node", st->info.node);
	jw_bool("channels_set", st->info.flags & XNF_PLACE_CHANNELS);
	jw_bool("threaded_set", st->info.flags & XNF_PLACE_THREADED);
	jw_bool("irqs_set", st->info.flags & XNF_PLACE_IRQS);
	jw_bool("napi_pinned", st->info.flags & XNF_PLACE_NAPI);
	jw_object("previous");
	jw_uint("combined", st->info.prev_combined);
	jw_uint("rx", st->info.prev_rx);
	jw_uint("tx", st->info.prev_tx);
	jw_uint("other", st->info.prev_other);
	jw_uint("threaded", st->info.prev_threaded);
	jw_end_object();
	jw_array("queues");
	for (i = 0; i < st->info.nqueues; i++) {
		struct xnf_cpuset prev;

		jw_object(NULL);
		jw_uint("queue", i);
		jw_int("irq", st->q[i].irq);
		jw_uint("cpu", st->q[i].cpu);
		jw_uint("worker_cpu", st->q[i].worker_cpu);
		jw_bool("irq_set", st->q[i].flags & XNF_PLACE_Q_IRQ);
		jw_bool("napi_pinned", st->q[i].flags & XNF_PLACE_Q_NAPI);
		jw_uint("napi_id", st->q[i].napi_id);
		memcpy(prev.w, st->q[i].prev_irq, sizeof(prev.w));
		if (st->q[i].flags & XNF_PLACE_Q_IRQ)
			jw_string("previous_irq_affinity",
				  xnf_cpuset_format(&prev, list, sizeof(list)));
		jw_end_object();
	}
	jw_end_array();
	jw_array("drift");
	for (k = 0; k < a->ndrift; k++) {
		const struct xnf_drift *d = &a->drift[k];

		jw_object(NULL);
		jw_string("kind", xnf_drift_kind_name(d->kind));
		jw_int("queue", d->queue);
		if (d->irq >= 0)
			jw_int("irq", d->irq);
		jw_int("want", d->want);
		if (d->kind == XNF_DRIFT_CHANNELS)
			jw_int("now", d->now_count);
		else if (d->kind == XNF_DRIFT_IRQ || d->kind == XNF_DRIFT_NAPI)
			jw_cpus("now", &d->now);
		jw_string("text", d->text);
		jw_end_object();
	}
	jw_end_array();
	if (a->have_work) {
		jw_array("work");
		for (cpu = 0; cpu < a->ncpus; cpu++) {
			if (!a->in[cpu])
				continue;
			jw_object(NULL);
			jw_uint("cpu", cpu);
			jw_uint("packets", a->in[cpu]);
			jw_bool("planned", cpu_planned(st, cpu));
			jw_end_object();
		}
		jw_end_array();
	}
	jw_end_object();
}

static void print_applied_text(const struct xnf_plan *p, const struct applied *a)
{
	const struct xnf_place_state *st = a->st;
	bool any = false;
	__u32 i;
	int k, cpu;

	if (!a->have)
		return;
	printf("applied at attach: %u queue%s, XDP work on CPUs", st->info.nqueues,
	       st->info.nqueues == 1 ? "" : "s");
	for (i = 0; i < st->info.nqueues; i++)
		printf("%s%u", i ? "," : " ", st->q[i].cpu);
	printf(" (%s%s%s)\n",
	       st->info.flags & XNF_PLACE_CHANNELS ? "channels set; " : "",
	       st->info.flags & XNF_PLACE_THREADED ? "threaded NAPI turned on; " : "",
	       st->info.flags & XNF_PLACE_IRQS ? "IRQ affinities set" :
	       st->info.flags & XNF_PLACE_NAPI ? "napi threads pinned" :
	       "no IRQ or napi thread could be placed");
	if (!a->ndrift)
		printf("drift: none\n");
	for (k = 0; k < a->ndrift; k++)
		printf("%s  %s\n", k ? "" : "drift:\n", a->drift[k].text);
	if (a->ndrift)
		printf("  ('xnf detach %s' and attach again re-applies the plan)\n",
		       p->dev);
	if (!a->have_work)
		return;
	printf("work seen (packets that entered the chain, per CPU):");
	for (cpu = 0; cpu < a->ncpus; cpu++) {
		if (!a->in[cpu])
			continue;
		any = true;
		printf("  cpu%d %llu%s", cpu, (unsigned long long)a->in[cpu],
		       cpu_planned(st, cpu) ? "" : " (not planned)");
	}
	printf("%s\n", any ? "" : "  none yet");
}

static void print_plan_json(const struct xnf_plan *p, const struct applied *a)
{
	char src[128];
	int i;

	jw_object(NULL);
	jw_string("dev", p->dev);
	jw_string("root", *p->root ? p->root : "/");
	if (p->nic.node >= 0)
		jw_int("node", p->nic.node);
	else
		jw_null("node");
	jw_cpus("node_cpus", &p->node_cpus);
	jw_cpus("online", &p->topo.online);
	jw_cpus("isolated", &p->isolated);
	jw_uint("nodes", p->topo.nnodes);
	jw_bool("smt", p->topo.smt);
	jw_channels(&p->nic);
	jw_uint("queues_now", p->queues_now);
	jw_uint("queues_max", p->queues_max);
	jw_uint("nqueues", p->nqueues);
	jw_bool("set_channels", p->set_channels);
	jw_uint("irqs", p->nic.nqirqs);
	jw_string("mode", p->use_napi_threads ? "napi_threads" : "irq_affinity");
	if (p->nic.threaded >= 0)
		jw_bool("threaded_napi", p->nic.threaded > 0);
	else
		jw_null("threaded_napi");
	jw_array("queues");
	for (i = 0; i < p->nqueues; i++) {
		jw_object(NULL);
		jw_uint("queue", i);
		if (p->q[i].irq >= 0) {
			jw_int("irq", p->q[i].irq);
			jw_string("irq_name", p->q[i].irq_name);
		} else {
			jw_null("irq");
			if (p->use_napi_threads && p->nic.q[i].napi_pid) {
				jw_uint("napi_id", p->nic.q[i].napi_id);
				jw_int("napi_pid", p->nic.q[i].napi_pid);
			}
		}
		jw_uint("cpu", p->q[i].cpu);
		jw_int("cpu_node", p->topo.node[p->q[i].cpu]);
		jw_uint("worker_cpu", p->q[i].worker_cpu);
		jw_string("source", queue_source(p, i, src, sizeof(src)));
		jw_end_object();
	}
	jw_end_array();
	jw_cpus("xdp_cpus", &p->xdp_cpus);
	jw_cpus("worker_cpus", &p->worker_cpus);
	jw_cpus("rest", &p->rest);
	jw_bool("siblings_used", p->siblings_used);
	jw_bool("cpu0_used", p->cpu0_used);
	jw_bool("shared", p->shared);
	jw_bool("workers_shared", p->workers_shared);
	jw_bool("cross_node", p->cross_node);
	jw_array("notes");
	for (i = 0; i < p->nnotes; i++)
		jw_string(NULL, p->notes[i]);
	jw_end_array();
	jw_array("warnings");
	for (i = 0; i < p->nwarnings; i++)
		jw_string(NULL, p->warnings[i]);
	jw_end_array();
	print_applied_json(a);
	jw_end_object();
}

static void print_plan_text(const struct xnf_plan *p, const struct applied *a)
{
	char l1[1024], l2[1024], l3[1024];
	int i;

	if (*p->root)
		printf("(sysfs and procfs of %s)\n", p->root);
	if (p->nic.node >= 0)
		printf("%s: NUMA node %d, CPUs %s", p->dev, p->nic.node,
		       xnf_cpuset_format(&p->topo.node_cpus[p->nic.node], l1,
					 sizeof(l1)));
	else
		printf("%s: no NUMA node", p->dev);
	printf(" (%d CPU%s online, %d node%s%s)\n",
	       xnf_cpuset_count(&p->topo.online),
	       xnf_cpuset_count(&p->topo.online) == 1 ? "" : "s", p->topo.nnodes,
	       p->topo.nnodes == 1 ? "" : "s", p->topo.smt ? ", hyperthreads" : "");
	if (xnf_cpuset_count(&p->topo.isolcpus) || xnf_cpuset_count(&p->topo.nohz_full))
		printf("isolated: isolcpus=%s%s%s nohz_full=%s\n",
		       p->topo.isolcpus_flags, *p->topo.isolcpus_flags ? "," : "",
		       xnf_cpuset_format(&p->topo.isolcpus, l1, sizeof(l1)),
		       xnf_cpuset_format(&p->topo.nohz_full, l2, sizeof(l2)));
	printf("channels: %s; queues %d now, %d planned%s\n",
	       fmt_channels(&p->nic, l1, sizeof(l1)), p->queues_now, p->nqueues,
	       p->set_channels ? " (attach sets them)" : "");
	printf("%5s  %4s  %-32s %7s  %10s\n", "queue", "irq", "source", "xdp cpu",
	       "worker cpu");
	for (i = 0; i < p->nqueues; i++) {
		char irq[16];

		snprintf(irq, sizeof(irq), "%d", p->q[i].irq);
		printf("%5d  %4s  %-32s %7d  %10d\n", i, p->q[i].irq >= 0 ? irq : "-",
		       queue_source(p, i, l1, sizeof(l1)), p->q[i].cpu,
		       p->q[i].worker_cpu);
	}
	printf("XDP work on CPUs %s, workers on %s; the rest of the system: %s\n",
	       xnf_cpuset_format(&p->xdp_cpus, l1, sizeof(l1)),
	       xnf_cpuset_format(&p->worker_cpus, l2, sizeof(l2)),
	       xnf_cpuset_count(&p->rest) ?
	       xnf_cpuset_format(&p->rest, l3, sizeof(l3)) : "none");
	printf("why:\n");
	for (i = 0; i < p->nnotes; i++)
		printf("  - %s\n", p->notes[i]);
	for (i = 0; i < p->nwarnings; i++)
		printf("Warning: %s\n", p->warnings[i]);
	print_applied_text(p, a);
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

	if (argc < 1 || is_prefix(argv[0], "help"))
		return do_plan_help();
	dev = argv[0];
	NEXT_ARG();
	while (argc > 0) {
		rc = cli_parse_placement(&argc, &argv, &req, &have_queues, &have_cores);
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
	if (cli.json)
		print_plan_json(p, &a);
	else
		print_plan_text(p, &a);
	ret = 0;
out:
	free(a.st);
	free(a.in);
	free(p);
	return ret;
}
