// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * plan.c - the placement planner: queues, IRQs, XDP work and workers on
 * the NIC's NUMA node (see placement.h for the model).
 *
 * The plan, as an operator who tuned DPDK or VPP on a two-socket server
 * would do it:
 *  - Only CPUs of the NIC's node: a remote node costs 41-73% more CPU per
 *    packet (the NUMA/cache NFV study) and halves a BESS 2-NF chain. A
 *    device without a node (veth, or firmware that does not say) is
 *    planned on all online CPUs.
 *  - Isolated CPUs (isolcpus=, nohz_full=) on that node first: the operator
 *    set them aside for exactly this. Without `queues N`, only they are used.
 *  - One thread per physical core: the second hyperthread of a core is only
 *    taken for XDP work when there are more queues than cores, and said so.
 *  - CPU 0 last: timers, housekeeping and the IRQs nobody placed land
 *    there. Its core's other thread comes after every free physical core
 *    but before doubling two queues up on one core.
 *  - Queues: the current count, or fewer when the node has fewer free
 *    physical cores (one queue per core, as RSS tuning guides advise); a
 *    virtual device keeps its count (a veth must keep as many receive
 *    queues as its peer has transmit queues for XDP).
 *  - A queue's userspace worker goes to the other hyperthread of the
 *    queue's core (it shares L1/L2 with the XDP work that just touched the
 *    packet), else to a free core of the same node, else shares the
 *    queue's core; never CPU 0.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xnf.h"
#include "placement.h"

#include "place_priv.h"

/* ---- the plan ---- */

static void note(struct xnf_plan *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct xnf_plan *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nnotes >= XNF_PLACE_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(p->notes[p->nnotes++], XNF_PLACE_NOTE_LEN, fmt, ap);
	va_end(ap);
}

static void warning(struct xnf_plan *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warning(struct xnf_plan *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nwarnings >= XNF_PLACE_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(p->warnings[p->nwarnings++], XNF_PLACE_NOTE_LEN, fmt, ap);
	va_end(ap);
}

/* The CPUs in preference order for XDP work (see the top of the file):
 * isolated physical cores, other physical cores, the other threads of CPU
 * 0's core (a core no queue uses yet beats sharing one with another
 * queue), isolated second threads, other second threads, CPU 0 itself.
 * "Physical core" = one thread of each core, isolated if it has one. */
static int preference_order(const struct xnf_plan *p, int *order)
{
	const struct xnf_topo *t = &p->topo;
	struct xnf_cpuset taken = {}, first = {}, cores = {};
	int cpu, n = 0, tier, core0 = t->core[0];
	bool have_iso = xnf_cpuset_count(&p->isolated) > 0;

	/* One thread represents each core: its first isolated one, else its
	 * first one. */
	for (tier = 0; tier < 2; tier++) {
		for_each_cpu(cpu, &p->node_cpus) {
			if (tier == 0 && !xnf_cpuset_test(&p->isolated, cpu))
				continue;
			if (xnf_cpuset_test(&cores, t->core[cpu]))
				continue;
			xnf_cpuset_set(&cores, t->core[cpu]);
			xnf_cpuset_set(&first, cpu);
		}
	}
	for (tier = 0; tier < 6; tier++) {
		for_each_cpu(cpu, &p->node_cpus) {
			bool iso = have_iso && xnf_cpuset_test(&p->isolated, cpu);
			bool is_first = xnf_cpuset_test(&first, cpu);
			bool on_core0 = t->core[cpu] == core0;
			bool ok;

			if (xnf_cpuset_test(&taken, cpu))
				continue;
			switch (tier) {
			case 0:
				ok = is_first && iso && !on_core0;
				break;
			case 1:
				ok = is_first && !on_core0;
				break;
			case 2:
				ok = on_core0 && cpu != 0;
				break;
			case 3:
				ok = iso && !on_core0;
				break;
			case 4:
				ok = !on_core0;
				break;
			default:
				ok = false;
				break;
			}
			if (ok) {
				xnf_cpuset_set(&taken, cpu);
				order[n++] = cpu;
			}
		}
	}
	if (xnf_cpuset_test(&p->node_cpus, 0) && !xnf_cpuset_test(&taken, 0))
		order[n++] = 0;
	return n;
}

/* Physical cores the auto plan may use: with isolated CPUs on the node,
 * the cores that have one; else every core but CPU 0's (unless that is
 * all there is). */
static int free_cores(const struct xnf_plan *p, bool *iso_only)
{
	const struct xnf_topo *t = &p->topo;
	struct xnf_cpuset seen = {}, seen_iso = {}, seen_all = {};
	int cpu, n = 0, n_iso = 0, n_all = 0;

	for_each_cpu(cpu, &p->node_cpus) {
		int core = t->core[cpu];

		if (!xnf_cpuset_test(&seen_all, core)) {
			xnf_cpuset_set(&seen_all, core);
			n_all++;
		}
		if (core == t->core[0])
			continue;
		if (!xnf_cpuset_test(&seen, core)) {
			xnf_cpuset_set(&seen, core);
			n++;
		}
		if (xnf_cpuset_test(&p->isolated, cpu) &&
		    !xnf_cpuset_test(&seen_iso, core)) {
			xnf_cpuset_set(&seen_iso, core);
			n_iso++;
		}
	}
	*iso_only = n_iso > 0;
	if (n_iso)
		return n_iso;
	return n ? n : n_all;
}

static void plan_workers(struct xnf_plan *p)
{
	const struct xnf_topo *t = &p->topo;
	struct xnf_cpuset used = p->xdp_cpus;
	int *order, norder, i, cpu, k;
	bool sib = false, other = false;

	order = calloc(XNF_PLACE_MAX_CPUS, sizeof(*order));
	norder = order ? preference_order(p, order) : 0;
	for (i = 0; i < p->nqueues; i++) {
		int c = p->q[i].cpu, w = -1;

		/* The other thread of the queue's core. */
		for_each_cpu(cpu, &t->online) {
			if (cpu != c && cpu != 0 && t->core[cpu] == t->core[c] &&
			    !xnf_cpuset_test(&used, cpu)) {
				w = cpu;
				sib = true;
				break;
			}
		}
		/* A free CPU of the same node (never CPU 0). */
		for (k = 0; w < 0 && k < norder; k++) {
			cpu = order[k];
			if (cpu != 0 && !xnf_cpuset_test(&used, cpu) &&
			    t->node[cpu] == t->node[c]) {
				w = cpu;
				other = true;
			}
		}
		if (w < 0) {
			w = c;
			p->workers_shared = true;
		}
		p->q[i].worker_cpu = w;
		xnf_cpuset_set(&used, w);
		xnf_cpuset_set(&p->worker_cpus, w);
	}
	free(order);
	if (sib)
		note(p, "userspace workers on the other hyperthread of their "
			"queue's core: it shares L1/L2 with the XDP work that just "
			"touched the packet");
	if (other)
		note(p, "userspace workers on free cores of the same %s%s",
		     p->node >= 0 ? "node" : "machine",
		     sib ? " where no hyperthread was free" : "");
	if (p->workers_shared)
		note(p,
		     "userspace workers share their queue's core: no free CPU "
		     "is left on %s (fewer queues leave room for them)",
		     p->node >= 0 ? "the node" : "the machine");
}

void xnf_plan_cross_node_text(const struct xnf_plan *p, char *buf, size_t len)
{
	struct xnf_cpuset off = {};
	char list[1024];
	int i;

	for (i = 0; i < p->nqueues; i++)
		if (p->topo.node[p->q[i].cpu] != p->node)
			xnf_cpuset_set(&off, p->q[i].cpu);
	snprintf(buf, len,
		 "CPUs %s are not on node %d, where %s is attached: "
		 "every packet crosses the interconnect; measured costs: +41%% "
		 "CPU per packet for a receiver on the remote node, +73%% for an "
		 "RX->ACL->TX chain split across nodes, and a BESS 2-NF chain "
		 "across sockets halves its 64-byte throughput",
		 xnf_cpuset_format(&off, list, sizeof(list)), p->node, p->dev);
}

int xnf_plan_compute(const char *root, const char *dev,
		     const struct xnf_plan_req *req, struct xnf_plan **out,
		     char *err, size_t errlen)
{
	char l1[1024], l2[1024], l3[1024];
	struct xnf_plan *p;
	struct xnf_topo *t;
	int *order = NULL, norder, i, cpu, ret, ncores;
	bool iso_only = false;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	t = &p->topo;
	/* A cut root would read another machine's tree. */
	if (snprintf(p->root, sizeof(p->root), "%s",
		     sysfs_is_real(root) ? "" : root) >= (int)sizeof(p->root)) {
		snprintf(err, errlen, "XNF_SYSFS_ROOT is longer than %zu bytes",
			 sizeof(p->root) - 1);
		ret = -ENAMETOOLONG;
		goto fail;
	}
	snprintf(p->dev, sizeof(p->dev), "%s", dev);
	ret = xnf_topo_read(root, t);
	if (ret) {
		snprintf(err, errlen,
			 "cannot read the CPUs (%s/sys/devices/system/"
			 "cpu/possible): %s",
			 p->root, strerror(-ret));
		goto fail;
	}
	ret = xnf_nic_read(root, dev, &p->nic, err, errlen);
	if (ret)
		goto fail;

	/* Where: the NIC's node, or everything. */
	p->node = p->nic.node;
	if (p->node >= XNF_PLACE_MAX_NODES)
		p->node = -1;
	if (p->node >= 0) {
		p->node_cpus = t->node_cpus[p->node];
		for (i = 0; i < XNF_PLACE_CPU_WORDS; i++)
			p->node_cpus.w[i] &= t->online.w[i];
		if (!xnf_cpuset_count(&p->node_cpus)) {
			warning(p,
				"node %d of %s has no online CPU: planning on all "
				"online CPUs",
				p->node, dev);
			p->node = -1;
		}
	}
	if (p->node < 0) {
		p->node_cpus = t->online;
		if (p->nic.node < 0)
			note(p,
			     "%s has no NUMA node (%s): planning on all online "
			     "CPUs %s",
			     dev,
			     p->nic.has_device ? "the firmware does not say" :
						 "a virtual device",
			     xnf_cpuset_format(&p->node_cpus, l1, sizeof(l1)));
	} else {
		note(p, "%s is attached to NUMA node %d: its CPUs %s only%s", dev,
		     p->node, xnf_cpuset_format(&p->node_cpus, l1, sizeof(l1)),
		     t->nnodes > 1 ? " (a remote node costs 41-73% more CPU "
				     "per packet)" :
				     "");
	}
	for (i = 0; i < XNF_PLACE_CPU_WORDS; i++)
		p->isolated.w[i] = (t->isolcpus.w[i] | t->nohz_full.w[i]) &
				   t->online.w[i];
	if (xnf_cpuset_count(&p->isolated)) {
		struct xnf_cpuset here = p->isolated;

		for (i = 0; i < XNF_PLACE_CPU_WORDS; i++)
			here.w[i] &= p->node_cpus.w[i];
		if (xnf_cpuset_count(&here))
			note(p,
			     "isolated CPUs %s (isolcpus=%s%s%s nohz_full=%s) "
			     "preferred for XDP work",
			     xnf_cpuset_format(&here, l1, sizeof(l1)),
			     t->isolcpus_flags, *t->isolcpus_flags ? "," : "",
			     xnf_cpuset_format(&t->isolcpus, l2, sizeof(l2)),
			     xnf_cpuset_format(&t->nohz_full, l3, sizeof(l3)));
		else
			note(p, "isolated CPUs %s are not on node %d: not used",
			     xnf_cpuset_format(&p->isolated, l1, sizeof(l1)),
			     p->node);
		p->isolated = here;
	}

	/* How many queues. */
	p->queues_now = xnf_nic_queues(&p->nic);
	p->queues_max = xnf_nic_queues_max(&p->nic);
	if (p->queues_now < 1)
		p->queues_now = 1;
	if (req->have_cores) {
		for_each_cpu(cpu, &req->cores) {
			if (!xnf_cpuset_test(&t->online, cpu)) {
				snprintf(err, errlen,
					 "CPU %d is not online (online "
					 "CPUs: %s)",
					 cpu,
					 xnf_cpuset_format(&t->online, l1,
							   sizeof(l1)));
				ret = -EINVAL;
				goto fail;
			}
		}
		if (!xnf_cpuset_count(&req->cores)) {
			snprintf(err, errlen, "no cores given");
			ret = -EINVAL;
			goto fail;
		}
	}
	if (req->queues) {
		if ((int)req->queues > p->queues_max) {
			if (p->nic.chan_err)
				snprintf(err, errlen,
					 "%s has %d receive queue%s and its "
					 "driver cannot change that (no ETHTOOL_"
					 "GCHANNELS: %s); queues %u is not possible",
					 dev, p->queues_now,
					 p->queues_now == 1 ? "" : "s",
					 strerror(-p->nic.chan_err), req->queues);
			else
				snprintf(err, errlen,
					 "%s can have at most %d %s "
					 "channels (ethtool -l %s); queues %u is above "
					 "that",
					 dev, p->queues_max,
					 p->nic.ch.max_combined ? "combined" :
								  "rx",
					 dev, req->queues);
			ret = -ERANGE;
			goto fail;
		}
		p->nqueues = req->queues;
		note(p, "queues: %d as asked (%d now, max %d)", p->nqueues,
		     p->queues_now, p->queues_max);
	} else if (req->have_cores) {
		p->nqueues = xnf_cpuset_count(&req->cores);
		if (p->nqueues > p->queues_max) {
			note(p,
			     "%d cores given but %s can have at most %d queues: "
			     "the last cores are not used",
			     p->nqueues, dev, p->queues_max);
			p->nqueues = p->queues_max;
		}
		note(p, "queues: %d, one per core given (%d now, max %d)",
		     p->nqueues, p->queues_now, p->queues_max);
	} else {
		ncores = free_cores(p, &iso_only);
		p->nqueues = p->queues_now;
		if (!p->nic.nirqs && !p->nic.has_device) {
			note(p,
			     "queues: %d, kept (a virtual device; a veth needs "
			     "as many receive queues as its peer has transmit "
			     "queues for XDP); 'queues N' changes it",
			     p->queues_now);
		} else if (p->queues_now > ncores) {
			p->nqueues = ncores;
			note(p,
			     "queues: %d now (max %d); planning %d, one per free "
			     "%sphysical core%s; 'queues N' chooses",
			     p->queues_now, p->queues_max, ncores,
			     iso_only ? "isolated " : "",
			     p->node >= 0 ? " of the node" : "");
		} else {
			note(p,
			     "queues: %d, kept (max %d); 'queues N' changes it",
			     p->queues_now, p->queues_max);
		}
	}
	if (p->nqueues < 1)
		p->nqueues = 1;
	p->set_channels = p->nqueues != p->queues_now;
	p->use_napi_threads = !p->nic.nqirqs;

	/* Which cores. */
	order = calloc(XNF_PLACE_MAX_CPUS, sizeof(*order));
	if (!order) {
		ret = -ENOMEM;
		goto fail;
	}
	if (req->have_cores) {
		norder = 0;
		for_each_cpu(cpu, &req->cores)
			order[norder++] = cpu;
	} else {
		norder = preference_order(p, order);
	}
	if (p->nqueues > norder) {
		p->shared = true;
		note(p,
		     "%d queues on %d CPUs: queues %d-%d share the CPUs of "
		     "queues 0-%d",
		     p->nqueues, norder, norder, p->nqueues - 1,
		     p->nqueues - norder - 1 < norder - 1 ?
			     p->nqueues - norder - 1 :
			     norder - 1);
	}
	for (i = 0; i < p->nqueues; i++) {
		struct xnf_plan_queue *q = &p->q[i];
		int other;

		q->cpu = order[i % norder];
		q->irq = p->nic.q[i].irq;
		snprintf(q->irq_name, sizeof(q->irq_name), "%s",
			 p->nic.q[i].irq_name);
		if (i < norder) {
			for_each_cpu(other, &p->xdp_cpus)
				if (t->core[other] == t->core[q->cpu])
					p->siblings_used = true;
		}
		if (q->cpu == 0)
			p->cpu0_used = true;
		if (p->node >= 0 && t->node[q->cpu] != p->node)
			p->cross_node = true;
		xnf_cpuset_set(&p->xdp_cpus, q->cpu);
	}
	free(order);
	order = NULL;
	if (p->siblings_used)
		note(p,
		     "hyperthread siblings used for XDP work: %d queues but "
		     "fewer physical cores%s",
		     p->nqueues,
		     req->have_cores ? " in the cores given" :
		     p->node >= 0    ? " on the node" :
				       "");
	else if (t->smt && !req->have_cores)
		note(p, "one thread per physical core for XDP work; their "
			"hyperthread siblings stay free");
	if (p->cpu0_used)
		note(p,
		     "CPU 0 used%s: it also takes timers, housekeeping and "
		     "every IRQ nobody placed",
		     req->have_cores ? " as asked" : ": no other CPU left");
	else if (xnf_cpuset_test(&p->node_cpus, 0))
		note(p, "CPU 0 avoided: timers, housekeeping and unplaced IRQs "
			"run there");
	if (p->cross_node) {
		xnf_plan_cross_node_text(p, l1, sizeof(l1));
		warning(p, "%s", l1);
	}

	plan_workers(p);

	/* How. */
	if (p->use_napi_threads)
		note(p,
		     "%s has no queue IRQs: attach turns threaded NAPI on "
		     "(now %s) and pins each queue's napi thread to its CPU",
		     dev,
		     p->nic.threaded < 0 ? "unsupported" :
		     p->nic.threaded	 ? "on" :
					   "off");
	else if (p->nic.irq_all)
		note(p,
		     "one IRQ serves every queue of %s: it goes to queue 0's CPU",
		     dev);
	else
		note(p, "attach sets each queue IRQ's affinity to its CPU "
			"(irqbalance must leave them alone: see the README)");
	if (!p->use_napi_threads && p->nic.nqirqs < p->nqueues && !p->nic.irq_all)
		warning(p,
			"only %d of %d queues have an IRQ found in "
			"/proc/interrupts: the others are not placed",
			p->nic.nqirqs, p->nqueues);
	if (p->set_channels && p->nic.chan_err)
		warning(p, "%s: channel count unknown (%s): it cannot be set",
			dev, strerror(-p->nic.chan_err));

	for (i = 0; i < XNF_PLACE_CPU_WORDS; i++)
		p->rest.w[i] = t->online.w[i] & ~p->xdp_cpus.w[i] &
			       ~p->worker_cpus.w[i];
	if (!xnf_cpuset_count(&p->rest))
		warning(p, "no CPU is left for the rest of the system");
	*out = p;
	return 0;
fail:
	free(order);
	free(p);
	return ret;
}
