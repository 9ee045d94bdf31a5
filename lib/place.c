// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * place.c - carrying out a plan (channels, IRQ affinity, threaded NAPI and
 * pinned napi threads), putting the host back at detach, reporting drift,
 * and the record of what was changed (pinned as xnf_place / xnf_place_q).
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
#include "placement.skel.h"

/* ---- applying and restoring ---- */

static void mask_to_words(const struct xnf_cpuset *s, __u64 *w)
{
	memcpy(w, s->w, sizeof(s->w));
}

static void words_to_mask(const __u64 *w, struct xnf_cpuset *s)
{
	memcpy(s->w, w, sizeof(s->w));
}

void xnf_place_state_init(const struct xnf_plan *p, struct xnf_place_state *st)
{
	int i;

	memset(st, 0, sizeof(*st));
	st->info.ifindex = p->nic.ifindex;
	st->info.node = p->node;
	st->info.nqueues = p->nqueues;
	st->info.prev_combined = st->info.set_combined = p->nic.ch.combined;
	st->info.prev_rx = st->info.set_rx = p->nic.ch.rx;
	st->info.prev_tx = st->info.set_tx = p->nic.ch.tx;
	st->info.prev_other = st->info.set_other = p->nic.ch.other;
	st->info.prev_threaded = p->nic.threaded > 0;
	for (i = 0; i < p->nqueues; i++) {
		st->q[i].irq = p->q[i].irq;
		st->q[i].cpu = p->q[i].cpu;
		st->q[i].worker_cpu = p->q[i].worker_cpu;
		st->q[i].flags = p->use_napi_threads ? XNF_PLACE_Q_NAPI :
				 p->q[i].irq >= 0    ? XNF_PLACE_Q_IRQ :
						       0;
		st->q[i].napi_id = p->nic.q[i].napi_id;
	}
	if (p->use_napi_threads)
		st->info.flags |= XNF_PLACE_NAPI;
	else
		st->info.flags |= XNF_PLACE_IRQS;
}

int xnf_place_apply_channels(const struct xnf_plan *p, bool strict,
			     struct xnf_place_state *st, char *err, size_t errlen)
{
	struct xnf_channels want;
	int ret;

	xnf_place_state_init(p, st);
	/* Nothing has been changed yet: the flags say what was. */
	st->info.flags = 0;
	for (ret = 0; ret < p->nqueues; ret++)
		st->q[ret].flags = 0;
	if (!p->set_channels)
		return 0;
	if (p->nic.chan_err) {
		ret = p->nic.chan_err;
		goto refused;
	}
	/* Receive queues = combined + rx-only channels (ethtool's model). */
	want = p->nic.ch;
	if (want.max_combined && (int)want.rx < p->nqueues) {
		want.combined = p->nqueues - want.rx;
	} else if (want.max_combined) {
		want.combined = p->nqueues;
		want.rx = 0;
	} else {
		want.rx = p->nqueues;
	}
	ret = topo_channels_set(p->root, p->dev, &want);
	if (ret)
		goto refused;
	st->info.flags |= XNF_PLACE_CHANNELS;
	st->info.set_combined = want.combined;
	st->info.set_rx = want.rx;
	st->info.set_tx = want.tx;
	st->info.set_other = want.other;
	return 0;
refused:
	if (strict) {
		snprintf(err, errlen,
			 "%s refused %d %s channels: %s (try 'ethtool "
			 "-L %s %s %d' to see why)",
			 p->dev, p->nqueues,
			 p->nic.ch.max_combined ? "combined" : "rx",
			 strerror(-ret), p->dev,
			 p->nic.ch.max_combined ? "combined" : "rx", p->nqueues);
		return ret;
	}
	pr_warn("%s kept its %d queues (setting %d failed: %s); the "
		"placement covers its first %d\n",
		p->dev, p->queues_now, p->nqueues, strerror(-ret),
		p->nqueues < p->queues_now ? p->nqueues : p->queues_now);
	st->info.nqueues = p->nqueues < p->queues_now ? p->nqueues :
							p->queues_now;
	return 0;
}

static int irq_set(const char *root, int irq, const struct xnf_cpuset *s)
{
	char path[PATH_MAX], list[4096];

	sysfs_path(path, sizeof(path), root, "/proc/irq/%d/smp_affinity_list",
		   irq);
	xnf_cpuset_format(s, list, sizeof(list));
	strcat(list, "\n");
	return sysfs_write(path, list);
}

static int threaded_set(const char *root, const char *dev, int on)
{
	return netdev_attr(root, dev, "threaded", on ? "1\n" : "0\n", NULL);
}

int xnf_place_apply_cpus(const struct xnf_plan *p, struct xnf_place_state *st)
{
	struct xnf_cpuset one;
	struct xnf_nic *nic;
	char ebuf[XNF_PLACE_ERR_LEN];
	int i, ret, first_err = 0;

	/* The attach (and a channel change) re-created queues, IRQ handlers
	 * and napi threads: look again. */
	nic = calloc(1, sizeof(*nic));
	if (!nic)
		return -ENOMEM;
	ret = xnf_nic_read(p->root, p->dev, nic, ebuf, sizeof(ebuf));
	if (ret) {
		pr_warn("%s\n", ebuf);
		free(nic);
		return ret;
	}
	if (nic->nqirqs) {
		for (i = 0; i < (int)st->info.nqueues; i++) {
			struct xnf_place_queue *q = &st->q[i];
			int j;
			bool done = false;

			q->irq = nic->q[i].irq;
			if (q->irq < 0)
				continue;
			/* One IRQ for several queues: the first one's CPU. */
			for (j = 0; j < i; j++)
				if (st->q[j].irq == q->irq)
					done = true;
			if (done)
				continue;
			xnf_cpuset_zero(&one);
			xnf_cpuset_set(&one, q->cpu);
			mask_to_words(&nic->q[i].irq_affinity, q->prev_irq);
			ret = irq_set(p->root, q->irq, &one);
			if (ret) {
				/* Managed IRQs (the kernel spreads them) refuse. */
				pr_warn("cannot set the affinity of IRQ %d "
					"(%s, queue %d) to CPU %u: %s%s\n",
					q->irq, nic->q[i].irq_name, i, q->cpu,
					strerror(-ret),
					ret == -EIO ?
						" (an IRQ the kernel manages)" :
						"");
				first_err = first_err ?: ret;
				continue;
			}
			q->flags |= XNF_PLACE_Q_IRQ;
			st->info.flags |= XNF_PLACE_IRQS;
		}
	}
	if (!nic->nqirqs || nic->threaded > 0) {
		/* No IRQs: NAPI runs where the sender ran unless it has
		 * threads of its own. (With IRQs and threaded NAPI already on,
		 * the threads are what must follow the plan too.) */
		if (nic->threaded == 0) {
			ret = threaded_set(p->root, p->dev, 1);
			if (ret) {
				pr_warn("cannot turn on threaded NAPI on %s "
					"(%s): its receive work runs on the CPU of "
					"the sender\n",
					p->dev, strerror(-ret));
				free(nic);
				return first_err ?: ret;
			}
			st->info.flags |= XNF_PLACE_THREADED;
			nic->threaded = 1;
			topo_read_napi(p->root, nic);
		} else if (nic->threaded < 0) {
			pr_warn("%s has no threaded NAPI (kernel older than "
				"5.12?): its receive work runs where the sender ran\n",
				p->dev);
			free(nic);
			return first_err;
		}
		for (i = 0; i < (int)st->info.nqueues; i++) {
			struct xnf_place_queue *q = &st->q[i];

			if (!nic->q[i].napi_pid) {
				pr_warn("no napi thread found for queue %d of "
					"%s: not pinned\n",
					i, p->dev);
				continue;
			}
			xnf_cpuset_zero(&one);
			xnf_cpuset_set(&one, q->cpu);
			mask_to_words(&nic->q[i].napi_affinity, q->prev_napi);
			ret = topo_thread_set_affinity(p->root,
						       nic->q[i].napi_pid, &one);
			if (ret) {
				pr_warn("cannot pin napi thread %d (queue %d "
					"of %s) to CPU %u: %s\n",
					nic->q[i].napi_pid, i, p->dev, q->cpu,
					strerror(-ret));
				first_err = first_err ?: ret;
				continue;
			}
			q->napi_id = nic->q[i].napi_id;
			q->flags |= XNF_PLACE_Q_NAPI;
			st->info.flags |= XNF_PLACE_NAPI;
		}
	}
	free(nic);
	return first_err;
}

static int find_napi(const struct xnf_nic *nic, const struct xnf_place_queue *q,
		     int queue)
{
	int i;

	for (i = 0; i < XNF_PLACE_MAX_QUEUES && q->napi_id; i++)
		if (nic->q[i].napi_id == q->napi_id && nic->q[i].napi_pid)
			return i;
	return queue < XNF_PLACE_MAX_QUEUES && nic->q[queue].napi_pid ? queue :
									-1;
}

int xnf_place_restore_napi(const char *root, const char *dev,
			   const struct xnf_place_state *st)
{
	char ebuf[XNF_PLACE_ERR_LEN];
	struct xnf_cpuset prev;
	struct xnf_nic *nic;
	int i, k, ret, first_err = 0;

	if (!(st->info.flags & (XNF_PLACE_NAPI | XNF_PLACE_THREADED)))
		return 0;
	nic = calloc(1, sizeof(*nic));
	if (!nic)
		return -ENOMEM;
	ret = xnf_nic_read(root, dev, nic, ebuf, sizeof(ebuf));
	if (ret) {
		pr_warn("cannot restore threaded NAPI of %s: %s\n", dev, ebuf);
		free(nic);
		return ret;
	}
	/* Threads xnf turned on go away with threaded NAPI; threads that
	 * were there before get their old affinity back. */
	if (!(st->info.flags & XNF_PLACE_THREADED)) {
		for (i = 0; i < (int)st->info.nqueues; i++) {
			if (!(st->q[i].flags & XNF_PLACE_Q_NAPI))
				continue;
			k = find_napi(nic, &st->q[i], i);
			words_to_mask(st->q[i].prev_napi, &prev);
			if (k < 0 || !xnf_cpuset_count(&prev))
				continue;
			ret = topo_thread_set_affinity(root, nic->q[k].napi_pid,
						       &prev);
			if (ret) {
				pr_warn("cannot restore the affinity of napi "
					"thread %d of %s: %s\n",
					nic->q[k].napi_pid, dev, strerror(-ret));
				first_err = first_err ?: ret;
			}
		}
	} else if (nic->threaded > 0) {
		ret = threaded_set(root, dev, 0);
		if (ret) {
			pr_warn("cannot turn threaded NAPI off again on %s "
				"(%s): 'echo 0 > /sys/class/net/%s/threaded' while "
				"it has XDP attached\n",
				dev, strerror(-ret), dev);
			first_err = ret;
		}
	}
	free(nic);
	return first_err;
}

int xnf_place_restore_host(const char *root, const char *dev,
			   const struct xnf_place_state *st)
{
	struct xnf_channels ch;
	struct xnf_cpuset prev;
	char list[4096];
	int i, j, ret, first_err = 0;

	if (st->info.flags & XNF_PLACE_CHANNELS) {
		ret = topo_channels_get(root, dev, &ch);
		if (!ret) {
			ch.combined = st->info.prev_combined;
			ch.rx = st->info.prev_rx;
			ch.tx = st->info.prev_tx;
			ch.other = st->info.prev_other;
			ret = topo_channels_set(root, dev, &ch);
		}
		if (ret) {
			pr_warn("cannot restore the channels of %s (combined "
				"%u rx %u tx %u other %u): %s\n",
				dev, st->info.prev_combined, st->info.prev_rx,
				st->info.prev_tx, st->info.prev_other,
				strerror(-ret));
			first_err = ret;
		}
	}
	for (i = 0; i < (int)st->info.nqueues && i < XNF_PLACE_MAX_QUEUES; i++) {
		const struct xnf_place_queue *q = &st->q[i];
		bool done = false;

		if (!(q->flags & XNF_PLACE_Q_IRQ) || q->irq < 0)
			continue;
		for (j = 0; j < i; j++)
			if ((st->q[j].flags & XNF_PLACE_Q_IRQ) &&
			    st->q[j].irq == q->irq)
				done = true;
		words_to_mask(q->prev_irq, &prev);
		if (done || !xnf_cpuset_count(&prev))
			continue;
		ret = irq_set(root, q->irq, &prev);
		if (ret) {
			pr_warn("cannot restore the affinity of IRQ %d to "
				"%s: %s\n",
				q->irq,
				xnf_cpuset_format(&prev, list, sizeof(list)),
				strerror(-ret));
			first_err = first_err ?: ret;
		}
	}
	return first_err;
}

/* ---- drift ---- */

const char *xnf_drift_kind_name(enum xnf_drift_kind k)
{
	switch (k) {
	case XNF_DRIFT_CHANNELS:
		return "channels";
	case XNF_DRIFT_IRQ:
		return "irq";
	case XNF_DRIFT_NAPI:
		return "napi";
	case XNF_DRIFT_NAPI_GONE:
		return "napi_gone";
	case XNF_DRIFT_THREADED:
		return "threaded";
	case XNF_DRIFT_WORKER:
		return "worker";
	}
	return "?";
}

static struct xnf_drift *drift_add(struct xnf_drift *d, int max, int *n,
				   enum xnf_drift_kind kind, int queue)
{
	static struct xnf_drift scratch;
	struct xnf_drift *e = *n < max ? &d[*n] : &scratch;

	(*n)++;
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->queue = queue;
	e->irq = -1;
	return e;
}

int xnf_place_drift(const char *root, const char *dev,
		    const struct xnf_place_state *st, struct xnf_drift *d,
		    int max)
{
	char ebuf[XNF_PLACE_ERR_LEN], list[1024];
	struct xnf_cpuset one;
	struct xnf_drift *e;
	struct xnf_nic *nic;
	int i, k, n = 0, now, want, ret;

	nic = calloc(1, sizeof(*nic));
	if (!nic)
		return -ENOMEM;
	ret = xnf_nic_read(root, dev, nic, ebuf, sizeof(ebuf));
	if (ret) {
		free(nic);
		return ret;
	}
	/* The queue count attach left (what it set, or what it found when
	 * it did not or could not change it). */
	want = st->info.set_combined + st->info.set_rx;
	if (!want)
		want = st->info.nqueues;
	now = xnf_nic_queues(nic);
	if (now != want) {
		e = drift_add(d, max, &n, XNF_DRIFT_CHANNELS, -1);
		e->want = want;
		e->now_count = now;
		snprintf(e->text, sizeof(e->text),
			 "%s has %d queues, %d at attach "
			 "(channels changed since: 'ethtool -l %s')",
			 dev, now, want, dev);
	}
	if ((st->info.flags & XNF_PLACE_THREADED) && nic->threaded == 0) {
		e = drift_add(d, max, &n, XNF_DRIFT_THREADED, -1);
		e->want = 1;
		snprintf(e->text, sizeof(e->text),
			 "threaded NAPI of %s was turned "
			 "off: receive work runs on the sender's CPU again",
			 dev);
	}
	for (i = 0; i < (int)st->info.nqueues && i < XNF_PLACE_MAX_QUEUES; i++) {
		const struct xnf_place_queue *q = &st->q[i];

		xnf_cpuset_zero(&one);
		xnf_cpuset_set(&one, q->cpu);
		if ((q->flags & XNF_PLACE_Q_IRQ) && q->irq >= 0) {
			struct xnf_cpuset aff;

			if (sysfs_read_cpuset(root, &aff,
					      "/proc/irq/%d/smp_affinity_list",
					      q->irq))
				xnf_cpuset_zero(&aff);
			if (!xnf_cpuset_equal(&aff, &one)) {
				e = drift_add(d, max, &n, XNF_DRIFT_IRQ, i);
				e->irq = q->irq;
				e->want = q->cpu;
				e->now = aff;
				snprintf(e->text, sizeof(e->text),
					 "IRQ %d (queue %d) "
					 "may run on CPUs %s, the placement says %u "
					 "(moved by irqbalance or by hand?)",
					 q->irq, i,
					 xnf_cpuset_format(&aff, list,
							   sizeof(list)),
					 q->cpu);
			}
		}
		if (q->flags & XNF_PLACE_Q_NAPI) {
			k = find_napi(nic, q, i);
			if (k < 0) {
				e = drift_add(d, max, &n, XNF_DRIFT_NAPI_GONE, i);
				e->want = q->cpu;
				snprintf(e->text, sizeof(e->text),
					 "queue %d of %s has "
					 "no napi thread any more (threaded NAPI off, "
					 "or XDP re-attached by someone else)",
					 i, dev);
			} else if (!xnf_cpuset_equal(&nic->q[k].napi_affinity,
						     &one)) {
				e = drift_add(d, max, &n, XNF_DRIFT_NAPI, i);
				e->want = q->cpu;
				e->now = nic->q[k].napi_affinity;
				snprintf(e->text, sizeof(e->text),
					 "napi thread %d "
					 "(queue %d) may run on CPUs %s, the placement "
					 "says %u",
					 nic->q[k].napi_pid, i,
					 xnf_cpuset_format(&nic->q[k].napi_affinity,
							   list, sizeof(list)),
					 q->cpu);
			}
		}
	}
	free(nic);
	return n;
}

/* ---- the record ---- */

static int place_maps(const char *pin_dir, struct xnf_placement **out)
{
	struct xnf_placement *skel;
	char path[PATH_MAX];
	int err;

	skel = xnf_placement__open();
	if (!skel)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", pin_dir,
		 XNF_MAP_STR(XNF_MAP_PLACE));
	err = bpf_map__set_pin_path(skel->maps.xnf_place, path);
	snprintf(path, sizeof(path), "%s/%s", pin_dir,
		 XNF_MAP_STR(XNF_MAP_PLACE_Q));
	err = err ?: bpf_map__set_pin_path(skel->maps.xnf_place_q, path);
	/* Creates and pins the maps, or reuses the pinned ones. */
	err = err ?: xnf_placement__load(skel);
	if (err) {
		xnf_placement__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

int xnf_place_save(const char *pin_dir, const struct xnf_place_state *st)
{
	struct xnf_placement *skel;
	__u32 i, zero = 0;
	int err, fd;

	err = place_maps(pin_dir, &skel);
	if (err)
		return err;
	fd = bpf_map__fd(skel->maps.xnf_place_q);
	for (i = 0; i < st->info.nqueues && i < XNF_PLACE_MAX_QUEUES && !err; i++)
		if (bpf_map_update_elem(fd, &i, &st->q[i], BPF_ANY))
			err = -errno;
	/* The header last: a reader sees nqueues only once they exist. */
	if (!err && bpf_map_update_elem(bpf_map__fd(skel->maps.xnf_place),
					&zero, &st->info, BPF_ANY))
		err = -errno;
	xnf_placement__destroy(skel);
	return err;
}

int xnf_place_load(const char *pin_dir, struct xnf_place_state *st)
{
	char path[PATH_MAX];
	__u32 i, zero = 0;
	int fd, err = 0;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "%s/%s", pin_dir,
		 XNF_MAP_STR(XNF_MAP_PLACE));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &zero, &st->info))
		err = -errno;
	close(fd);
	if (err)
		return err;
	if (st->info.nqueues > XNF_PLACE_MAX_QUEUES)
		return -EPROTO;
	snprintf(path, sizeof(path), "%s/%s", pin_dir,
		 XNF_MAP_STR(XNF_MAP_PLACE_Q));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	for (i = 0; i < st->info.nqueues && !err; i++)
		if (bpf_map_lookup_elem(fd, &i, &st->q[i]))
			err = -errno;
	close(fd);
	return err;
}

int xnf_place_worker(const char *pin_root, const char *dev, __u32 queue,
		     int *cpu, int *node)
{
	struct xnf_place_queue q;
	struct xnf_place_info info;
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, err = 0;

	err = xnf_dev_path(pin_root, dev, XNF_MAP_STR(XNF_MAP_PLACE), path,
			   sizeof(path));
	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &zero, &info))
		err = -errno;
	close(fd);
	if (err)
		return err;
	if (queue >= info.nqueues)
		return -ERANGE;
	xnf_dev_path(pin_root, dev, XNF_MAP_STR(XNF_MAP_PLACE_Q), path,
		     sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &queue, &q))
		err = -errno;
	close(fd);
	if (err)
		return err;
	*cpu = q.worker_cpu;
	*node = info.node;
	return 0;
}
