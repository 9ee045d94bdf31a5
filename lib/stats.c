// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * stats.c - the instance's counters, read (include/stats.h): per attached
 * interface its pinned xnf_stats (<root>/dev/<ifname>/), what xnf_dev
 * says runs there, its entries of the tracer's xnf_batch and xnf_xmit,
 * its workers' xnf_workers; the xnf_xmit entries of the egress ports xnf
 * is not attached to; for the instance the firewall's hits. Only
 * lookups: no lock, no write, so that a reader never waits for a writer
 * and a stopped reader never blocks one.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xnf.h"
#include "stats.h"
#include "worker.h"
#include "priv.h"
#include "pktlog.h"

int xnf_ncpus(void)
{
	return libbpf_num_possible_cpus();
}

int xnf_stats_read(int stats_fd, struct xnf_stats *sum, struct xnf_stats *percpu)
{
	int ncpus = xnf_ncpus(), cpu, err = 0;
	struct xnf_stats *vals = percpu;
	__u32 zero = 0;
	size_t i;

	if (ncpus < 0)
		return ncpus;
	if (!vals && !(vals = calloc(ncpus, sizeof(*vals))))
		return -ENOMEM;
	if (bpf_map_lookup_elem(stats_fd, &zero, vals)) {
		err = -errno;
		goto out;
	}
	if (sum) {
		memset(sum, 0, sizeof(*sum));
		for (cpu = 0; cpu < ncpus; cpu++) {
			const __u64 *src = (const __u64 *)&vals[cpu];
			__u64 *dst = (__u64 *)sum;

			for (i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
				dst[i] += src[i];
		}
	}
out:
	if (vals != percpu)
		free(vals);
	return err;
}

int xnf_stats_reset(int stats_fd)
{
	int ncpus = xnf_ncpus(), err = 0;
	struct xnf_stats *zero;
	__u32 key = 0;

	if (ncpus < 0)
		return ncpus;
	zero = calloc(ncpus, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(stats_fd, &key, zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}

/* The values of @key of the per-CPU map @fd, @size bytes each, in a new
 * array *@vals (free() it): the number of CPUs, or -errno. */
static int percpu_lookup(int fd, const void *key, size_t size, void **vals)
{
	int ncpus = xnf_ncpus(), err;

	*vals = NULL;
	if (ncpus < 0)
		return ncpus;
	*vals = calloc(ncpus, size);
	if (!*vals)
		return -ENOMEM;
	if (!bpf_map_lookup_elem(fd, key, *vals))
		return ncpus;
	err = -errno;
	free(*vals);
	*vals = NULL;
	return err;
}

int xnf_xmit_read(struct xnf_dp *dp, __u32 netns, __u32 ifindex,
		  struct xnf_xmit_counters *sum)
{
	struct xnf_dev_key key = { .netns = netns, .ifindex = ifindex };
	struct xnf_xmit_counters *v;
	int n, cpu;

	memset(sum, 0, sizeof(*sum));
	n = percpu_lookup(xnf_table_fd(dp, XNF_T_XMIT), &key, sizeof(*v),
			  (void **)&v);
	for (cpu = 0; cpu < n; cpu++) {
		sum->xmit_sent += v[cpu].xmit_sent;
		sum->xmit_drops += v[cpu].xmit_drops;
		sum->redirect_err += v[cpu].redirect_err;
	}
	free(v);
	return n < 0 ? n : 0;
}

/* ---- the egress ports ---- */

static int port_cmp(const void *a, const void *b)
{
	const struct xnf_port_sample *x = a, *y = b;

	return x->ifindex < y->ifindex ? -1 : x->ifindex > y->ifindex;
}

int xnf_ports_read(struct xnf_dp *dp, struct xnf_port_sample **out)
{
	int fd = xnf_table_fd(dp, XNF_T_XMIT), ncpus = xnf_ncpus(), cpu;
	struct xnf_port_sample *ports = NULL, *p;
	struct xnf_xmit_counters *vals = NULL, *v;
	struct xnf_dev_key *keys = NULL;
	__u32 netns = xnf_netns_inode(), n, i;
	int err, np = 0;

	*out = NULL;
	if (ncpus < 0)
		return ncpus;
	keys = calloc(XNF_MAX_PORTS, sizeof(*keys));
	vals = calloc((size_t)XNF_MAX_PORTS * ncpus, sizeof(*vals));
	ports = calloc(XNF_MAX_PORTS, sizeof(*ports));
	err = keys && vals && ports ? 0 : -ENOMEM;
	if (!err)
		err = xnf_map_read_all(fd, sizeof(*keys), ncpus * sizeof(*vals),
				       XNF_MAX_PORTS, keys, vals, &n);
	for (i = 0; !err && i < n; i++) {
		p = &ports[np];
		/* No name: the device is gone, and its counters wait for
		 * the sweep (xnf_port_make). */
		if (keys[i].netns != netns ||
		    !if_indextoname(keys[i].ifindex, p->name))
			continue;
		p->ifindex = keys[i].ifindex;
		memset(&p->xmit, 0, sizeof(p->xmit));
		for (cpu = 0; cpu < ncpus; cpu++) {
			v = &vals[(size_t)i * ncpus + cpu];
			p->xmit.xmit_sent += v->xmit_sent;
			p->xmit.xmit_drops += v->xmit_drops;
			p->xmit.redirect_err += v->redirect_err;
		}
		np++;
	}
	free(keys);
	free(vals);
	if (err) {
		free(ports);
		return err;
	}
	qsort(ports, np, sizeof(*ports), port_cmp);
	*out = ports;
	return np;
}

int xnf_port_counters_reset(struct xnf_dp *dp, const struct xnf_port_sample *p)
{
	return xnf_xmit_reset(dp, xnf_netns_inode(), p->ifindex);
}

/* Keeps in @s->ports (every port, as xnf_ports_read() read them) the
 * ones that are not in @s->devs. */
static void ports_unattached(struct xnf_sample *s)
{
	__u32 netns = xnf_netns_inode();
	int n = s->nports, i, j;

	s->nports = 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < s->ndevs; j++)
			if (s->devs[j].info.netns == netns &&
			    s->devs[j].info.ifindex == s->ports[i].ifindex)
				break;
		if (j == s->ndevs)
			s->ports[s->nports++] = s->ports[i];
	}
}

/* ---- one interface ---- */

/* The per-interface map @map of @dev, opened: its fd or -errno. */
static int dev_map_fd(struct xnf_dp *dp, const char *dev, const char *map)
{
	char path[PATH_MAX];
	int fd;

	fd = xnf_dev_path(dp->root, dev, map, path, sizeof(path));
	if (fd)
		return fd;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int xnf_dev_info_read(struct xnf_dp *dp, const char *dev,
		      struct xnf_dev_info *info)
{
	__u32 zero = 0;
	int fd, err;

	fd = dev_map_fd(dp, dev, XNF_MAP_STR(XNF_MAP_DEV));
	if (fd < 0)
		return fd;
	err = bpf_map_lookup_elem(fd, &zero, info) ? -errno : 0;
	close(fd);
	return err;
}

int xnf_dev_stats_read(struct xnf_dp *dp, const char *dev,
		       struct xnf_stats *sum, struct xnf_stats *percpu)
{
	int fd, err;

	fd = dev_map_fd(dp, dev, XNF_MAP_STR(XNF_MAP_STATS));
	if (fd < 0)
		return fd;
	err = xnf_stats_read(fd, sum, percpu);
	close(fd);
	return err;
}

int xnf_workers_read(const char *pin_root, const char *dev, __u32 nqueues,
		     struct xnf_worker_entry **out)
{
	struct xnf_worker_entry *e, *all = NULL;
	struct xnf_worker_stats w;
	int fd, n = 0;
	__u32 q;

	*out = NULL;
	fd = xnf_workers_open(pin_root, dev, false);
	if (fd < 0)
		return fd;
	for (q = 0; q < nqueues && q < XNF_WORKER_MAX; q++) {
		if (bpf_map_lookup_elem(fd, &q, &w) || w.state == XNF_W_NONE)
			continue;
		e = realloc(all, (n + 1) * sizeof(*e));
		if (!e) {
			free(all);
			close(fd);
			return -ENOMEM;
		}
		all = e;
		all[n].queue = q;
		all[n].w = w;
		all[n].alive = xnf_worker_alive(&w);
		n++;
	}
	close(fd);
	*out = all;
	return n;
}

static void batch_read(struct xnf_dp *dp, int ncpus, struct xnf_dev_sample *d)
{
	struct xnf_dev_key key = {
		.netns = d->info.netns,
		.ifindex = d->info.ifindex,
	};
	int cpu, b;

	memset(&d->batch, 0, sizeof(d->batch));
	d->poll_timed = d->poll_ns = 0;
	d->have_batch = !bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_BATCH),
					     &key, d->batch_cpu);
	if (!d->have_batch) {
		memset(d->batch_cpu, 0, ncpus * sizeof(*d->batch_cpu));
		return;
	}
	for (cpu = 0; cpu < ncpus; cpu++)
		for (b = 0; b < XNF_BATCH_BUCKETS; b++) {
			d->batch.polls[b] += d->batch_cpu[cpu].polls[b];
			d->batch.timed[b] += d->batch_cpu[cpu].timed[b];
			d->batch.ns[b] += d->batch_cpu[cpu].ns[b];
		}
	for (b = 0; b < XNF_BATCH_BUCKETS; b++) {
		d->poll_timed += d->batch.timed[b];
		d->poll_ns += d->batch.ns[b];
	}
}

/* -ENOENT when xnf is not attached to @dev: no link pin (what an attach
 * or detach killed midway left has none, and the next writer removes it;
 * a detach running meanwhile removes it first). */
static int dev_read(struct xnf_dp *dp, const char *dev, int ncpus,
		    const struct xnf_port_sample *ports, int nports,
		    struct xnf_dev_sample *d)
{
	char path[PATH_MAX];
	int err, n, i;

	snprintf(d->name, sizeof(d->name), "%s", dev);
	err = xnf_dev_path(dp->root, dev, "link", path, sizeof(path));
	if (err)
		return err;
	if (access(path, F_OK))
		return -ENOENT;
	d->cpu = calloc(ncpus, sizeof(*d->cpu));
	d->batch_cpu = calloc(ncpus, sizeof(*d->batch_cpu));
	if (!d->cpu || !d->batch_cpu)
		return -ENOMEM;
	err = xnf_dev_info_read(dp, dev, &d->info) ?:
		      xnf_dev_stats_read(dp, dev, &d->sum, d->cpu);
	if (err)
		return err;
	batch_read(dp, ncpus, d);
	/* Without DEV every port of this namespace was read in one batch
	 * (@nports of @ports): a device of it is there or has no counters. */
	d->have_xmit = false;
	if (nports >= 0 && d->info.netns == xnf_netns_inode()) {
		for (i = 0; i < nports && !d->have_xmit; i++)
			if (ports[i].ifindex == d->info.ifindex) {
				d->xmit = ports[i].xmit;
				d->have_xmit = true;
			}
	} else {
		d->have_xmit = !xnf_xmit_read(dp, d->info.netns,
					      d->info.ifindex, &d->xmit);
	}
	/* No xnf_workers map (or none to read): no workers. */
	n = xnf_workers_read(dp->root, dev, XNF_WORKER_MAX, &d->workers);
	if (n == -ENOMEM)
		return n;
	d->nworkers = n > 0 ? n : 0;
	return 0;
}

static void dev_free(struct xnf_dev_sample *d)
{
	free(d->cpu);
	free(d->batch_cpu);
	free(d->workers);
	d->cpu = NULL;
	d->batch_cpu = NULL;
	d->workers = NULL;
}

int xnf_dev_counters_reset(struct xnf_dp *dp, const struct xnf_dev_sample *d)
{
	int fd, err;

	fd = dev_map_fd(dp, d->name, XNF_MAP_STR(XNF_MAP_STATS));
	if (fd < 0)
		return fd;
	err = xnf_stats_reset(fd);
	close(fd);
	if (!err && d->have_batch)
		err = xnf_batch_reset(dp, d->info.netns, d->info.ifindex);
	return err ?: xnf_workers_reset(dp->root, d->name);
}

/* ---- the sample ---- */

/* Adds what failed to @err, after what is there. */
static void err_add(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void err_add(char *err, size_t len, const char *fmt, ...)
{
	size_t n = err && len ? strlen(err) : 0;
	va_list ap;

	if (!err || n + 3 >= len)
		return;
	if (n) {
		memcpy(err + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(err + n, len - n, fmt, ap);
	va_end(ap);
}

static int dev_filter(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/* By ifindex, as ip(8) lists links (then by name: an ifindex of another
 * network namespace may repeat). */
static int dev_cmp(const void *a, const void *b)
{
	const struct xnf_dev_sample *x = a, *y = b;

	if (x->info.ifindex != y->info.ifindex)
		return x->info.ifindex < y->info.ifindex ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The interface @dev, or every attached one, into @s; @nports: how many
 * of @s->ports were read, or -1 (none: each device's xmit counters are
 * looked up). */
static int devs_read(struct xnf_dp *dp, const char *dev, int nports,
		     struct xnf_sample *s, char *errbuf, size_t errlen)
{
	struct dirent **list = NULL;
	char path[PATH_MAX];
	int n, i, err, ret = 0;

	if (dev) {
		n = 1;
	} else {
		xnf_dev_path(dp->root, NULL, NULL, path, sizeof(path));
		n = scandir(path, &list, dev_filter, NULL);
		if (n < 0 && errno != ENOENT) {
			ret = -errno;
			err_add(errbuf, errlen, "cannot read %s: %s", path,
				strerror(errno));
			return ret;
		}
		n = n < 0 ? 0 : n;
	}
	s->devs = calloc(n ?: 1, sizeof(*s->devs));
	if (!s->devs) {
		ret = -ENOMEM;
		err_add(errbuf, errlen, "out of memory");
	}
	for (i = 0; i < n && s->devs; i++) {
		const char *name = dev ?: list[i]->d_name;
		struct xnf_dev_sample *d = &s->devs[s->ndevs];

		err = dev_read(dp, name, s->ncpus, s->ports, nports, d);
		if (!err)
			s->ndevs++;
		else
			dev_free(d);
		if (err == -ENOENT && dev)
			err_add(errbuf, errlen, "xnf is not attached to %s",
				name);
		else if (err && err != -ENOENT)
			err_add(errbuf, errlen,
				"cannot read the counters of %s: %s", name,
				strerror(-err));
		if (err && (err != -ENOENT || dev) && !ret)
			ret = err;
	}
	for (i = 0; list && i < n; i++)
		free(list[i]);
	free(list);
	if (s->ndevs > 1)
		qsort(s->devs, s->ndevs, sizeof(*s->devs), dev_cmp);
	return ret;
}

int xnf_fw_hit_read(struct xnf_dp *dp, __u32 slot, struct xnf_fw_hit *sum)
{
	struct xnf_fw_hit *v;
	int n, cpu;

	memset(sum, 0, sizeof(*sum));
	n = percpu_lookup(xnf_table_fd(dp, XNF_T_FW_HITS), &slot, sizeof(*v),
			  (void **)&v);
	for (cpu = 0; cpu < n; cpu++) {
		sum->packets += v[cpu].packets;
		sum->bytes += v[cpu].bytes;
	}
	free(v);
	return n < 0 ? n : 0;
}

static int fw_row_cmp(const void *a, const void *b)
{
	const struct xnf_fw_row *x = a, *y = b;

	if (x->rule.prio != y->rule.prio)
		return x->rule.prio < y->rule.prio ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The rules in use of the rule set that runs (xnf_fw_read: a few batch
 * lookups), in priority order, each with its hits; its default policy,
 * with the hits of the packets that got it. */
static int fw_read(struct xnf_dp *dp, struct xnf_sample *s, char *errbuf,
		   size_t errlen)
{
	const struct xnf_fw_rule *rules;
	struct xnf_fw_set *set = NULL;
	__u32 slot;
	int err;

	err = xnf_fw_read(dp, &set);
	if (err)
		goto out;
	s->fw_default = xnf_fw_set_default(set);
	err = xnf_fw_hit_read(dp, XNF_FW_HIT_DEFAULT, &s->fw_default_hit);
	if (err)
		goto out;
	rules = xnf_fw_set_rules(set);
	s->fw = calloc(xnf_fw_set_count(set) ?: 1, sizeof(*s->fw));
	if (!s->fw) {
		err = -ENOMEM;
		goto out;
	}
	for (slot = 0; slot < XNF_FW_MAX_RULES && !err; slot++) {
		if (!rules[slot].in_use)
			continue;
		s->fw[s->nfw].slot = slot;
		s->fw[s->nfw].rule = rules[slot];
		err = xnf_fw_hit_read(dp, slot, &s->fw[s->nfw++].hit);
	}
	qsort(s->fw, s->nfw, sizeof(*s->fw), fw_row_cmp);
out:
	xnf_fw_set_free(set);
	if (err)
		err_add(errbuf, errlen,
			"cannot read the firewall rules and hit counters (%s, %s): %s",
			XNF_MAP_STR(XNF_MAP_FW_RULES),
			XNF_MAP_STR(XNF_MAP_FW_HITS), strerror(-err));
	return err;
}

/* The packet log's counters of the rules of s->fw and of every reason,
 * and which reasons are sampled. */
static int log_read(struct xnf_dp *dp, struct xnf_sample *s, char *errbuf,
		    size_t errlen)
{
	struct xnf_log_counters *c;
	struct xnf_config cfg;
	int err, i;

	c = calloc(XNF_LOG_SOURCES, sizeof(*c));
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	err = xnf_log_counters_read(dp, c);
	if (err)
		goto out;
	err = xnf_cfg_read(dp, &cfg);
	if (err)
		goto out;
	for (i = 0; i < s->nfw; i++)
		s->fw[i].log = c[s->fw[i].slot];
	s->log_reasons = cfg.log_reasons;
	memcpy(s->log_reason, c + XNF_LOG_REASON_BASE, sizeof(s->log_reason));
out:
	free(c);
	if (err)
		err_add(errbuf, errlen,
			"cannot read the packet log's counters (%s, %s): %s",
			XNF_MAP_STR(XNF_MAP_LOG_STATS),
			XNF_MAP_STR(XNF_MAP_CFG), strerror(-err));
	return err;
}

int xnf_sample_read(struct xnf_dp *dp, const char *dev, struct xnf_sample *s,
		    char *err, size_t errlen)
{
	struct timespec mono;
	int ret, ports, fw;

	memset(s, 0, sizeof(*s));
	if (err && errlen)
		err[0] = '\0';
	s->ncpus = xnf_ncpus();
	if (s->ncpus < 1) {
		ret = s->ncpus < 0 ? s->ncpus : -EINVAL;
		s->ncpus = 0;
		err_add(err, errlen, "cannot count the possible CPUs: %s",
			strerror(-ret));
		return ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &mono);
	s->mono = mono.tv_sec + mono.tv_nsec / 1e9;
	clock_gettime(CLOCK_REALTIME, &s->wall);
	/* Without DEV: every port's transmit counters in one read, the
	 * attached devices' among them. */
	ports = dev ? 0 : xnf_ports_read(dp, &s->ports);
	s->nports = ports > 0 ? ports : 0;
	ret = devs_read(dp, dev, dev || ports < 0 ? -1 : s->nports, s, err,
			errlen);
	ports_unattached(s);
	if (ports < 0)
		err_add(err, errlen,
			"cannot read the egress ports' counters (%s): %s",
			XNF_MAP_STR(XNF_MAP_XMIT), strerror(-ports));
	ports = ports < 0 ? ports : 0;
	fw = fw_read(dp, s, err, errlen);
	fw = fw ?: log_read(dp, s, err, errlen);
	return ret ?: ports ?: fw;
}

void xnf_sample_free(struct xnf_sample *s)
{
	int i;

	for (i = 0; i < s->ndevs; i++)
		dev_free(&s->devs[i]);
	free(s->devs);
	free(s->ports);
	free(s->fw);
	memset(s, 0, sizeof(*s));
}
