// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * topology.c - what the machine and a device are: NUMA nodes, cores and
 * their siblings, isolated CPUs, a NIC's channels, its queues' IRQs and
 * napi threads (from sysfs, procfs, ethtool and netlink; what depends on
 * the network namespace through lib/netdev.c). Setters of channels and
 * thread affinity live beside their readers.
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

/* ---- the machine ---- */

int xnf_cmdline_isolated(const char *cmdline, struct xnf_cpuset *isolcpus,
			 struct xnf_cpuset *nohz_full, char *flags,
			 size_t flagslen)
{
	const char *p = cmdline, *tok, *val;
	char word[1024], list[1024], item[256];
	size_t len, fl = 0, ll;
	int err = 0;

	xnf_cpuset_zero(isolcpus);
	xnf_cpuset_zero(nohz_full);
	if (flagslen)
		flags[0] = '\0';
	while (*p) {
		while (isspace((unsigned char)*p))
			p++;
		tok = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		len = p - tok;
		if (!len)
			break;
		/* What follows "--" belongs to init. */
		if (len == 2 && !strncmp(tok, "--", 2))
			break;
		if (len >= sizeof(word))
			continue;
		memcpy(word, tok, len);
		word[len] = '\0';
		if (!strncmp(word, "nohz_full=", 10)) {
			err = xnf_cpuset_parse(word + 10, nohz_full) ?: err;
		} else if (!strncmp(word, "isolcpus=", 9)) {
			/* isolcpus=[flag,...,]list: flags are words, the list
			 * groups start with a digit. */
			list[0] = '\0';
			ll = 0;
			fl = 0;
			if (flagslen)
				flags[0] = '\0';
			for (val = word + 9; *val;) {
				len = strcspn(val, ",");
				if (len < sizeof(item)) {
					memcpy(item, val, len);
					item[len] = '\0';
					if (isalpha((unsigned char)item[0])) {
						if (fl < flagslen)
							fl += snprintf(flags + fl,
								       flagslen - fl,
								       "%s%s",
								       fl ? "," :
									    "",
								       item);
					} else if (ll < sizeof(list)) {
						ll += snprintf(list + ll,
							       sizeof(list) - ll,
							       "%s%s",
							       ll ? "," : "",
							       item);
					}
				}
				val += len;
				if (*val == ',')
					val++;
			}
			err = xnf_cpuset_parse(list, isolcpus) ?: err;
		}
	}
	return err;
}

int xnf_topo_read(const char *root, struct xnf_topo *t)
{
	char buf[8192], path[PATH_MAX];
	struct xnf_cpuset sib;
	struct dirent *de;
	int cpu, n, err;
	DIR *d;

	memset(t, 0, sizeof(*t));
	err = sysfs_read_cpuset(root, &t->possible,
				"/sys/devices/system/cpu/possible");
	if (err)
		return err;
	if (sysfs_read_cpuset(root, &t->online, "/sys/devices/system/cpu/online"))
		t->online = t->possible;
	for_each_cpu(cpu, &t->possible)
		t->ncpus = cpu + 1;
	for (cpu = 0; cpu < XNF_PLACE_MAX_CPUS; cpu++) {
		t->node[cpu] = -1;
		t->core[cpu] = cpu;
		t->core_id[cpu] = -1;
		t->package[cpu] = -1;
	}
	for_each_cpu(cpu, &t->online) {
		sysfs_read_int(root, &t->core_id[cpu],
			       "/sys/devices/system/cpu/cpu%d/topology/core_id",
			       cpu);
		sysfs_read_int(root, &t->package[cpu],
			       "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
			       cpu);
		if (!sysfs_read_cpuset(root, &sib,
				       "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
				       cpu) &&
		    xnf_cpuset_test(&sib, cpu)) {
			t->core[cpu] = xnf_cpuset_next(&sib, 0);
			if (xnf_cpuset_count(&sib) > 1)
				t->smt = true;
		}
	}
	/* NUMA nodes; a kernel without NUMA has no node directory: one node. */
	sysfs_path(path, sizeof(path), root, "/sys/devices/system/node");
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			struct xnf_cpuset cpus;

			if (sscanf(de->d_name, "node%d", &n) != 1 || n < 0 ||
			    n >= XNF_PLACE_MAX_NODES)
				continue;
			if (sysfs_read_cpuset(root, &cpus,
					      "/sys/devices/system/node/node%d/cpulist",
					      n))
				continue;
			t->node_cpus[n] = cpus;
			if (xnf_cpuset_count(&cpus) && n + 1 > t->nnodes)
				t->nnodes = n + 1;
			for_each_cpu(cpu, &cpus)
				t->node[cpu] = n;
		}
		closedir(d);
	}
	if (!t->nnodes) {
		t->nnodes = 1;
		t->node_cpus[0] = t->online;
		for_each_cpu(cpu, &t->online)
			t->node[cpu] = 0;
	}
	if (!sysfs_read_str(root, buf, sizeof(buf), "/proc/cmdline"))
		xnf_cmdline_isolated(buf, &t->isolcpus, &t->nohz_full,
				     t->isolcpus_flags,
				     sizeof(t->isolcpus_flags));
	return 0;
}

/* ---- the device: channels ---- */

static void channels_parse(const char *text, struct xnf_channels *ch)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "combined", offsetof(struct xnf_channels, combined) },
		{ "max_combined", offsetof(struct xnf_channels, max_combined) },
		{ "rx", offsetof(struct xnf_channels, rx) },
		{ "max_rx", offsetof(struct xnf_channels, max_rx) },
		{ "tx", offsetof(struct xnf_channels, tx) },
		{ "max_tx", offsetof(struct xnf_channels, max_tx) },
		{ "other", offsetof(struct xnf_channels, other) },
		{ "max_other", offsetof(struct xnf_channels, max_other) },
	};
	const char *p = text;
	char key[32];
	unsigned int v;
	size_t i;
	int n;

	memset(ch, 0, sizeof(*ch));
	while (sscanf(p, "%31s %u%n", key, &v, &n) == 2) {
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(key, keys[i].key))
				*(__u32 *)((char *)ch + keys[i].off) = v;
		p += n;
	}
}

static int channels_ioctl(const char *dev, int cmd, struct xnf_channels *ch)
{
	struct ethtool_channels ec = { .cmd = cmd };
	struct ifreq ifr = {};
	int fd, err = 0;

	if (cmd == ETHTOOL_SCHANNELS) {
		ec.combined_count = ch->combined;
		ec.rx_count = ch->rx;
		ec.tx_count = ch->tx;
		ec.other_count = ch->other;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&ec;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	if (err || cmd != ETHTOOL_GCHANNELS)
		return err;
	*ch = (struct xnf_channels){
		.combined = ec.combined_count,
		.max_combined = ec.max_combined,
		.rx = ec.rx_count,
		.max_rx = ec.max_rx,
		.tx = ec.tx_count,
		.max_tx = ec.max_tx,
		.other = ec.other_count,
		.max_other = ec.max_other,
	};
	return 0;
}

int topo_channels_get(const char *root, const char *dev, struct xnf_channels *ch)
{
	char buf[1024];
	int err;

	if (sysfs_is_real(root))
		return channels_ioctl(dev, ETHTOOL_GCHANNELS, ch);
	err = sysfs_read_str(root, buf, sizeof(buf), "/ethtool/%s/channels", dev);
	if (err == -ENOENT)
		return -EOPNOTSUPP;
	if (!err)
		channels_parse(buf, ch);
	return err;
}

int topo_channels_set(const char *root, const char *dev,
		      const struct xnf_channels *want)
{
	struct xnf_channels ch;
	char path[PATH_MAX], buf[512];
	int err;

	if (sysfs_is_real(root)) {
		ch = *want;
		return channels_ioctl(dev, ETHTOOL_SCHANNELS, &ch);
	}
	/* A fixture: the same checks as the ethtool core, then the file. */
	err = topo_channels_get(root, dev, &ch);
	if (err)
		return err;
	if (want->combined > ch.max_combined || want->rx > ch.max_rx ||
	    want->tx > ch.max_tx || want->other > ch.max_other ||
	    !(want->combined + want->rx) || !(want->combined + want->tx))
		return -EINVAL;
	snprintf(buf, sizeof(buf),
		 "combined %u max_combined %u\nrx %u max_rx %u\ntx %u max_tx %u\n"
		 "other %u max_other %u\n",
		 want->combined, ch.max_combined, want->rx, ch.max_rx, want->tx,
		 ch.max_tx, want->other, ch.max_other);
	sysfs_path(path, sizeof(path), root, "/ethtool/%s/channels", dev);
	return sysfs_write(path, buf);
}

int xnf_nic_queues(const struct xnf_nic *nic)
{
	if (!nic->chan_err && nic->ch.combined + nic->ch.rx)
		return nic->ch.combined + nic->ch.rx;
	return nic->nrxq;
}

int xnf_nic_queues_max(const struct xnf_nic *nic)
{
	int now = xnf_nic_queues(nic), max;

	if (nic->chan_err)
		return now;
	max = nic->ch.max_combined ? nic->ch.max_combined + nic->ch.rx :
				     nic->ch.max_rx;
	if (max > XNF_PLACE_MAX_QUEUES)
		max = XNF_PLACE_MAX_QUEUES;
	return max > now ? max : now;
}

/* ---- the device: IRQs ---- */

static bool word_is(const char *w, size_t len, const char *name, bool digits)
{
	size_t n = strlen(name);

	if (len < n || strncasecmp(w, name, n))
		return false;
	if (len == n)
		return true;
	if (!digits)
		return false;
	for (; n < len; n++)
		if (!isdigit((unsigned char)w[n]))
			return false;
	return true;
}

int xnf_irq_queue(const char *name, const char *dev)
{
	static const char *const control[] = {
		"async", "ctrl",   "cmd",  "cmdq",   "config", "misc",
		"event", "events", "aq",   "adminq", "mbx",    "mailbox",
		"ptp",	 "lsc",	   "fdir", "err",    NULL,
	};
	static const char *const rxwords[] = {
		"rx", "txrx", "input", "fp", "comb", "combined", NULL,
	};
	const char *w, *last = NULL, *const * c;
	size_t len, lastlen = 0, end;
	bool tx = false, rx = false;
	int q;

	end = strcspn(name, "@");
	for (w = name; w < name + end; w += len) {
		w += strspn(w, "-_.: \t");
		len = strcspn(w, "-_.: \t@");
		if (w + len > name + end)
			len = name + end - w;
		if (!len)
			break;
		for (c = control; *c; c++)
			if (word_is(w, len, *c, true))
				return -ENOENT;
		for (c = rxwords; *c; c++)
			if (word_is(w, len, *c, false))
				rx = true;
		if (word_is(w, len, "comp", true) && len > 4)
			rx = true;
		if (word_is(w, len, "tx", false) ||
		    word_is(w, len, "output", false))
			tx = true;
		last = w;
		lastlen = len;
	}
	if (!last || (tx && !rx))
		return -ENOENT;
	if (lastlen == strlen(dev) && !strncmp(last, dev, lastlen))
		return XNF_IRQ_ALL_QUEUES;
	if (!isdigit((unsigned char)last[lastlen - 1]))
		return -ENOENT;
	for (len = lastlen; len > 0 && isdigit((unsigned char)last[len - 1]);
	     len--)
		;
	q = atoi(last + len);
	return q < XNF_PLACE_MAX_QUEUES ? q : -ENOENT;
}

static int msi_irqs(const char *path, int *irqs, int max)
{
	struct dirent *de;
	int n = 0, irq;
	DIR *d;

	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max)
		if (sscanf(de->d_name, "%d", &irq) == 1 && irq > 0)
			irqs[n++] = irq;
	closedir(d);
	return n;
}

/* The IRQs of the bus device at @devdir ("": none): its MSI/MSI-X
 * vectors; or its legacy line (a PCI function without MSI); or the vectors
 * of its parent (a virtio device has neither: the PCI function above it
 * owns them). How many are in @irqs. */
static int dev_irqs(const char *devdir, int *irqs, int max)
{
	char path[PATH_MAX];
	int n, irq;

	if (!*devdir)
		return 0;
	snprintf(path, sizeof(path), "%s/msi_irqs", devdir);
	n = msi_irqs(path, irqs, max);
	if (n)
		return n;
	if (!sysfs_read_int("", &irq, "%s/irq", devdir)) {
		if (irq <= 0)
			return 0;
		irqs[0] = irq;
		return 1;
	}
	snprintf(path, sizeof(path), "%s/../msi_irqs", devdir);
	return msi_irqs(path, irqs, max);
}

/* The action name of @irq in /proc/interrupts (the line's last word). */
static bool irq_name(const char *interrupts, int irq, char *name, size_t len)
{
	const char *line, *eol, *p, *w;
	char *end;
	long n;

	for (line = interrupts; line && *line; line = eol ? eol + 1 : NULL) {
		eol = strchr(line, '\n');
		p = line;
		while (*p == ' ')
			p++;
		n = strtol(p, &end, 10);
		if (end == p || *end != ':' || n != irq)
			continue;
		p = eol ? eol : line + strlen(line);
		while (p > end && isspace((unsigned char)p[-1]))
			p--;
		for (w = p; w > end && !isspace((unsigned char)w[-1]); w--)
			;
		if (w == p || w <= end + 1)
			return false;
		snprintf(name, len, "%.*s", (int)(p - w), w);
		return true;
	}
	return false;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void nic_read_irqs(const char *root, const char *devdir,
			  struct xnf_nic *nic)
{
	char path[PATH_MAX], name[XNF_IRQ_NAME_LEN], *interrupts;
	int *irqs, i, q, n, pass;

	for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++)
		nic->q[q].irq = -1;
	irqs = calloc(4096, sizeof(*irqs));
	if (!irqs)
		return;
	n = dev_irqs(devdir, irqs, 4096);
	nic->nirqs = n;
	qsort(irqs, n, sizeof(*irqs), cmp_int);
	sysfs_path(path, sizeof(path), root, "/proc/interrupts");
	interrupts = n ? sysfs_slurp(path) : NULL;
	/* Per-queue vectors first; a vector named like the device serves
	 * every queue, but only when there are no per-queue ones. */
	for (pass = 0; pass < 2 && !nic->nqirqs; pass++) {
		for (i = 0; i < n && interrupts; i++) {
			if (!irq_name(interrupts, irqs[i], name, sizeof(name)))
				continue;
			q = xnf_irq_queue(name, nic->dev);
			if (pass == 1 && q == XNF_IRQ_ALL_QUEUES) {
				nic->irq_all = true;
				q = 0;
			}
			if (q < 0 || nic->q[q].irq >= 0)
				continue;
			nic->q[q].irq = irqs[i];
			snprintf(nic->q[q].irq_name, sizeof(nic->q[q].irq_name),
				 "%s", name);
			sysfs_read_cpuset(root, &nic->q[q].irq_affinity,
					  "/proc/irq/%d/smp_affinity_list",
					  irqs[i]);
			nic->nqirqs++;
			if (nic->irq_all)
				break;
		}
	}
	if (nic->irq_all) {
		/* One vector for everything: every queue is served by it. */
		for (q = 1; q < XNF_PLACE_MAX_QUEUES; q++) {
			nic->q[q].irq = nic->q[0].irq;
			snprintf(nic->q[q].irq_name, sizeof(nic->q[q].irq_name),
				 "%s", nic->q[0].irq_name);
			nic->q[q].irq_affinity = nic->q[0].irq_affinity;
		}
	}
	free(interrupts);
	free(irqs);
}

/* ---- the device: napi threads ---- */

struct napi_thread {
	__u32 id;
	int pid;
};

static int cmp_napi(const void *a, const void *b)
{
	const struct napi_thread *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int thread_affinity(const char *root, int pid, struct xnf_cpuset *s)
{
	char buf[8192], *p;
	int err;

	err = sysfs_read_str(root, buf, sizeof(buf), "/proc/%d/status", pid);
	if (err)
		return err;
	p = strstr(buf, "Cpus_allowed_list:");
	if (!p)
		return -ENOENT;
	p += strlen("Cpus_allowed_list:");
	p[strcspn(p, "\n")] = '\0';
	return xnf_cpuset_parse(p, s);
}

/* Pins thread @pid to @s: sched_setaffinity() on the real system, the
 * Cpus_allowed_list line of <root>/proc/<pid>/status in a fixture. */
int topo_thread_set_affinity(const char *root, int pid,
			     const struct xnf_cpuset *s)
{
	char path[PATH_MAX], buf[8192], out[8192 + 4096], list[4096], *p, *eol;
	cpu_set_t *set;
	size_t size;
	int cpu, err;

	if (sysfs_is_real(root)) {
		set = CPU_ALLOC(XNF_PLACE_MAX_CPUS);
		if (!set)
			return -ENOMEM;
		size = CPU_ALLOC_SIZE(XNF_PLACE_MAX_CPUS);
		CPU_ZERO_S(size, set);
		for_each_cpu(cpu, s)
			CPU_SET_S(cpu, size, set);
		err = sched_setaffinity(pid, size, set) ? -errno : 0;
		CPU_FREE(set);
		return err;
	}
	sysfs_path(path, sizeof(path), root, "/proc/%d/status", pid);
	err = sysfs_read_path(path, buf, sizeof(buf));
	if (err)
		return err;
	p = strstr(buf, "Cpus_allowed_list:");
	if (!p)
		return -ENOENT;
	eol = strchr(p, '\n');
	snprintf(out, sizeof(out), "%.*sCpus_allowed_list:\t%s\n%s",
		 (int)(p - buf), buf, xnf_cpuset_format(s, list, sizeof(list)),
		 eol ? eol + 1 : "");
	return sysfs_write(path, out);
}

/* napi/<dev>-<id> in /proc/<pid>/comm. On kernels older than 6.3 a
 * kthread's comm is cut at 15 characters; such a cut name is taken (id
 * unknown, ranked by pid) when it is a prefix of "napi/<dev>-". */
static int napi_scan_comm(const char *root, const char *dev,
			  struct napi_thread *t, int max)
{
	char path[PATH_MAX], comm[64], want[64];
	struct dirent *de;
	size_t wl;
	int n = 0, pid;
	DIR *d;

	snprintf(want, sizeof(want), "napi/%s-", dev);
	wl = strlen(want);
	sysfs_path(path, sizeof(path), root, "/proc");
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		if (sscanf(de->d_name, "%d", &pid) != 1 ||
		    sysfs_read_str(root, comm, sizeof(comm), "/proc/%d/comm", pid))
			continue;
		if (!strncmp(comm, want, wl) && isdigit((unsigned char)comm[wl])) {
			t[n].id = strtoul(comm + wl, NULL, 10);
			t[n++].pid = pid;
		} else if (strlen(comm) == 15 && !strncmp(want, comm, 15)) {
			t[n].id = pid;
			t[n++].pid = pid;
		}
	}
	closedir(d);
	qsort(t, n, sizeof(*t), cmp_napi);
	return n;
}

struct nl_napi_ctx {
	struct xnf_nic *nic;
	__u32 ifindex;
	int nnapi;
	struct napi_thread napi[XNF_PLACE_MAX_QUEUES];
};

static void queue_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	struct nl_napi_ctx *c = ctx;
	__u32 q = nla_u32(tb[XNF_NETDEV_A_QUEUE_ID]);

	if (nla_u32(tb[XNF_NETDEV_A_QUEUE_IFINDEX]) != c->ifindex ||
	    !tb[XNF_NETDEV_A_QUEUE_TYPE] ||
	    nla_u32(tb[XNF_NETDEV_A_QUEUE_TYPE]) != XNF_NETDEV_QUEUE_TYPE_RX ||
	    q >= XNF_PLACE_MAX_QUEUES)
		return;
	c->nic->q[q].napi_id = nla_u32(tb[XNF_NETDEV_A_QUEUE_NAPI_ID]);
}

static void napi_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	struct nl_napi_ctx *c = ctx;
	__u32 id = nla_u32(tb[XNF_NETDEV_A_NAPI_ID]);

	if (nla_u32(tb[XNF_NETDEV_A_NAPI_IFINDEX]) != c->ifindex || !id ||
	    c->nnapi >= XNF_PLACE_MAX_QUEUES)
		return;
	c->napi[c->nnapi].id = id;
	c->napi[c->nnapi++].pid = (int)nla_u32(tb[XNF_NETDEV_A_NAPI_PID]);
}

/* Queue -> napi id -> thread pid from the kernel, for this network
 * namespace's device; -EOPNOTSUPP when the kernel has no netdev family
 * (or no queue/napi commands). Drivers that do not tell which NAPI serves
 * a queue (veth) get the rank of the napi id, as in the comm scan. */
static int napi_netlink(struct xnf_nic *nic)
{
	struct nl_napi_ctx *ctx;
	__u16 family;
	bool linked = false;
	int fd, err, q, k;

	if (!nic->ifindex)
		return -EOPNOTSUPP;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->nic = nic;
	ctx->ifindex = nic->ifindex;
	fd = netdev_genl_open(&family);
	if (fd < 0) {
		free(ctx);
		return fd;
	}
	for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++)
		nic->q[q].napi_id = 0;
	err = netdev_genl_dump(fd, family, XNF_NETDEV_CMD_QUEUE_GET,
			       XNF_NETDEV_A_QUEUE_IFINDEX, nic->ifindex,
			       queue_cb, ctx);
	if (!err)
		err = netdev_genl_dump(fd, family, XNF_NETDEV_CMD_NAPI_GET,
				       XNF_NETDEV_A_NAPI_IFINDEX, nic->ifindex,
				       napi_cb, ctx);
	if (err) {
		err = -EOPNOTSUPP;
		goto out;
	}
	for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++)
		linked |= nic->q[q].napi_id != 0;
	if (!linked) {
		qsort(ctx->napi, ctx->nnapi, sizeof(ctx->napi[0]), cmp_napi);
		for (q = 0; q < ctx->nnapi && q < nic->nrxq; q++)
			nic->q[q].napi_id = ctx->napi[q].id;
	}
	for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++)
		for (k = 0; k < ctx->nnapi && nic->q[q].napi_id; k++)
			if (ctx->napi[k].id == nic->q[q].napi_id &&
			    ctx->napi[k].pid > 0)
				nic->q[q].napi_pid = ctx->napi[k].pid;
out:
	close(fd);
	free(ctx);
	return err;
}

void topo_read_napi(const char *root, struct xnf_nic *nic)
{
	struct napi_thread *t;
	int q, n;

	nic->nnapi = 0;
	for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++) {
		nic->q[q].napi_id = 0;
		nic->q[q].napi_pid = 0;
		xnf_cpuset_zero(&nic->q[q].napi_affinity);
	}
	if (sysfs_is_real(root) && !napi_netlink(nic)) {
		for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++) {
			if (!nic->q[q].napi_pid)
				continue;
			nic->nnapi++;
			thread_affinity(root, nic->q[q].napi_pid,
					&nic->q[q].napi_affinity);
		}
		/* Linux 6.8 has napi ids but not the thread pids. */
		if (nic->nnapi || nic->threaded <= 0)
			return;
		for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++)
			nic->q[q].napi_id = 0;
	}
	t = calloc(XNF_PLACE_MAX_QUEUES, sizeof(*t));
	if (!t)
		return;
	n = napi_scan_comm(root, nic->dev, t, XNF_PLACE_MAX_QUEUES);
	for (q = 0; q < n && q < nic->nrxq; q++) {
		nic->q[q].napi_id = t[q].id;
		nic->q[q].napi_pid = t[q].pid;
		thread_affinity(root, t[q].pid, &nic->q[q].napi_affinity);
		nic->nnapi++;
	}
	free(t);
}

/* A fixture's device: the queues are directories, the rest files. */
static int nic_read_fixture(const char *root, struct xnf_nic *nic, char *devdir,
			    size_t len, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n, ret;
	DIR *d;

	sysfs_path(path, sizeof(path), root, "/sys/class/net/%s/queues",
		   nic->dev);
	d = opendir(path);
	if (!d) {
		ret = -errno;
		if (ret == -ENOENT)
			snprintf(err, errlen, "no device %s in %s", nic->dev,
				 root);
		else
			snprintf(err, errlen, "cannot read %s: %s", path,
				 strerror(-ret));
		return ret;
	}
	while ((de = readdir(d))) {
		if (sscanf(de->d_name, "rx-%d", &n) == 1 && n + 1 > nic->nrxq)
			nic->nrxq = n + 1;
		if (sscanf(de->d_name, "tx-%d", &n) == 1 && n + 1 > nic->ntxq)
			nic->ntxq = n + 1;
	}
	closedir(d);
	if (!sysfs_read_int(root, &n, "/sys/class/net/%s/ifindex", nic->dev))
		nic->ifindex = n;
	sysfs_path(devdir, len, root, "/sys/class/net/%s/device", nic->dev);
	if (access(devdir, F_OK))
		devdir[0] = '\0';
	return 0;
}

/* The device of the caller's network namespace (see netdev.c). */
static int nic_read_live(struct xnf_nic *nic, char *devdir, size_t len,
			 char *err, size_t errlen)
{
	struct netdev_link l;
	int ret;

	ret = netdev_link_get(nic->dev, &l);
	if (ret == -ENODEV)
		snprintf(err, errlen,
			 "no device %s in this network namespace ('ip link' lists its devices)",
			 nic->dev);
	else if (ret)
		snprintf(err, errlen, "cannot read device %s over rtnetlink: %s",
			 nic->dev, strerror(-ret));
	if (ret)
		return ret;
	nic->ifindex = l.ifindex;
	ret = netdev_queues(nic->dev, &l, &nic->nrxq, &nic->ntxq);
	if (ret) {
		snprintf(err, errlen, "cannot count the queues of %s: %s",
			 nic->dev, strerror(-ret));
		return ret;
	}
	netdev_device_dir(nic->dev, netdev_sysfs_ours(nic->dev, &l), devdir, len);
	return 0;
}

int xnf_nic_read(const char *root, const char *dev, struct xnf_nic *nic,
		 char *err, size_t errlen)
{
	char devdir[PATH_MAX];
	int ret;

	memset(nic, 0, sizeof(*nic));
	ret = xnf_dev_name_check(dev, err, errlen);
	if (ret)
		return ret;
	snprintf(nic->dev, sizeof(nic->dev), "%s", dev);
	ret = sysfs_is_real(root) ?
		      nic_read_live(nic, devdir, sizeof(devdir), err, errlen) :
		      nic_read_fixture(root, nic, devdir, sizeof(devdir), err,
				       errlen);
	if (ret)
		return ret;
	if (nic->nrxq > XNF_PLACE_MAX_QUEUES)
		nic->nrxq = XNF_PLACE_MAX_QUEUES;
	nic->has_device = *devdir;
	/* -1 or absent: no node (virtual devices, or firmware without SRAT). */
	if (!*devdir || sysfs_read_int("", &nic->node, "%s/numa_node", devdir) ||
	    nic->node < 0)
		nic->node = -1;
	nic->chan_err = topo_channels_get(root, dev, &nic->ch);
	if (netdev_attr(root, dev, "threaded", NULL, &nic->threaded))
		nic->threaded = -1;
	nic_read_irqs(root, devdir, nic);
	topo_read_napi(root, nic);
	return 0;
}
