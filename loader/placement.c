// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * placement.c - queues, IRQs, XDP work and workers on the NIC's NUMA node;
 * see placement.h for the model (one root for every sysfs/procfs read, how
 * channels and napi threads are read on the real system and in fixtures).
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
#include "placement.skel.h"

/* ---- paths below the root ---- */

static bool root_is_real(const char *root)
{
	return !root || !*root || !strcmp(root, "/");
}

static void vpath_of(char *buf, size_t len, const char *root, const char *fmt,
		     va_list ap)
{
	size_t n = 0;

	if (!root_is_real(root)) {
		n = snprintf(buf, len, "%s", root);
		while (n > 1 && buf[n - 1] == '/')
			buf[--n] = '\0';
	}
	if (n < len)
		vsnprintf(buf + n, len - n, fmt, ap);
}

static void path_of(char *buf, size_t len, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void path_of(char *buf, size_t len, const char *root, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpath_of(buf, len, root, fmt, ap);
	va_end(ap);
}

/* Reads the file at @path into @buf (NUL-terminated, trailing blanks
 * dropped). */
static int read_path(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

static int read_str(const char *root, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int read_str(const char *root, char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vpath_of(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	return read_path(path, buf, len);
}

static int read_int(const char *root, int *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int read_int(const char *root, int *v, const char *fmt, ...)
{
	char path[PATH_MAX], buf[64], *end;
	va_list ap;
	long n;
	int err;

	va_start(ap, fmt);
	vpath_of(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	err = read_path(path, buf, sizeof(buf));
	if (err)
		return err;
	errno = 0;
	n = strtol(buf, &end, 0);
	if (errno || end == buf || (*end && !isspace((unsigned char)*end)) ||
	    n < INT_MIN || n > INT_MAX)
		return -EINVAL;
	*v = n;
	return 0;
}

static int read_cpuset(const char *root, struct xnf_cpuset *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int read_cpuset(const char *root, struct xnf_cpuset *s, const char *fmt, ...)
{
	char path[PATH_MAX], buf[4096];
	va_list ap;
	int err;

	va_start(ap, fmt);
	vpath_of(path, sizeof(path), root, fmt, ap);
	va_end(ap);
	err = read_path(path, buf, sizeof(buf));
	return err ?: xnf_cpuset_parse(buf, s);
}

static int write_path(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* A whole file (procfs sizes are unknown: read until EOF); free() it. */
static char *slurp(const char *path)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap), *nb;
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= (64u << 20))
				break;
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* ---- CPU sets ---- */

int xnf_cpuset_count(const struct xnf_cpuset *s)
{
	int i, n = 0;

	for (i = 0; i < XNF_PLACE_CPU_WORDS; i++)
		n += __builtin_popcountll(s->w[i]);
	return n;
}

int xnf_cpuset_next(const struct xnf_cpuset *s, int cpu)
{
	for (; cpu >= 0 && cpu < XNF_PLACE_MAX_CPUS; cpu++)
		if (xnf_cpuset_test(s, cpu))
			return cpu;
	return -1;
}

bool xnf_cpuset_equal(const struct xnf_cpuset *a, const struct xnf_cpuset *b)
{
	return !memcmp(a, b, sizeof(*a));
}

#define for_each_cpu(cpu, set) \
	for ((cpu) = xnf_cpuset_next((set), 0); (cpu) >= 0; \
	     (cpu) = xnf_cpuset_next((set), (cpu) + 1))

static int parse_num(const char **p, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*v = strtoul(*p, &end, 10);
	if (errno)
		return -ERANGE;
	*p = end;
	return 0;
}

int xnf_cpuset_parse(const char *list, struct xnf_cpuset *s)
{
	const char *p = list;
	unsigned long a, b, used, group, c;

	xnf_cpuset_zero(s);
	while (isspace((unsigned char)*p))
		p++;
	while (*p && !isspace((unsigned char)*p)) {
		if (parse_num(&p, &a))
			return -EINVAL;
		b = a;
		used = group = 1;
		if (*p == '-') {
			p++;
			if (parse_num(&p, &b) || b < a)
				return -EINVAL;
			if (*p == ':') {
				p++;
				if (parse_num(&p, &used) || *p++ != '/' ||
				    parse_num(&p, &group) || !used || !group ||
				    used > group)
					return -EINVAL;
			}
		}
		if (b >= XNF_PLACE_MAX_CPUS)
			return -ERANGE;
		for (c = a; c <= b; c++)
			if ((c - a) % group < used)
				xnf_cpuset_set(s, c);
		if (*p == ',')
			p++;
		else if (*p && !isspace((unsigned char)*p))
			return -EINVAL;
	}
	while (isspace((unsigned char)*p))
		p++;
	return *p ? -EINVAL : 0;
}

const char *xnf_cpuset_format(const struct xnf_cpuset *s, char *buf, size_t len)
{
	size_t n = 0;
	int a, b;

	if (len)
		buf[0] = '\0';
	for (a = xnf_cpuset_next(s, 0); a >= 0; a = xnf_cpuset_next(s, b + 1)) {
		for (b = a; xnf_cpuset_test(s, b + 1); b++)
			;
		if (n < len) {
			if (b == a)
				n += snprintf(buf + n, len - n, "%s%d", n ? "," : "", a);
			else
				n += snprintf(buf + n, len - n, "%s%d-%d",
					      n ? "," : "", a, b);
		}
	}
	return buf;
}

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
			for (val = word + 9; *val; ) {
				len = strcspn(val, ",");
				if (len < sizeof(item)) {
					memcpy(item, val, len);
					item[len] = '\0';
					if (isalpha((unsigned char)item[0])) {
						if (fl < flagslen)
							fl += snprintf(flags + fl, flagslen - fl,
								       "%s%s", fl ? "," : "", item);
					} else if (ll < sizeof(list)) {
						ll += snprintf(list + ll, sizeof(list) - ll,
							       "%s%s", ll ? "," : "", item);
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
	err = read_cpuset(root, &t->possible, "/sys/devices/system/cpu/possible");
	if (err)
		return err;
	if (read_cpuset(root, &t->online, "/sys/devices/system/cpu/online"))
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
		read_int(root, &t->core_id[cpu],
			 "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
		read_int(root, &t->package[cpu],
			 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
			 cpu);
		if (!read_cpuset(root, &sib,
				 "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
				 cpu) && xnf_cpuset_test(&sib, cpu)) {
			t->core[cpu] = xnf_cpuset_next(&sib, 0);
			if (xnf_cpuset_count(&sib) > 1)
				t->smt = true;
		}
	}
	/* NUMA nodes; a kernel without NUMA has no node directory: one node. */
	path_of(path, sizeof(path), root, "/sys/devices/system/node");
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			struct xnf_cpuset cpus;

			if (sscanf(de->d_name, "node%d", &n) != 1 || n < 0 ||
			    n >= XNF_PLACE_MAX_NODES)
				continue;
			if (read_cpuset(root, &cpus,
					"/sys/devices/system/node/node%d/cpulist", n))
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
	if (!read_str(root, buf, sizeof(buf), "/proc/cmdline"))
		xnf_cmdline_isolated(buf, &t->isolcpus, &t->nohz_full,
				     t->isolcpus_flags, sizeof(t->isolcpus_flags));
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
		.combined = ec.combined_count, .max_combined = ec.max_combined,
		.rx = ec.rx_count, .max_rx = ec.max_rx,
		.tx = ec.tx_count, .max_tx = ec.max_tx,
		.other = ec.other_count, .max_other = ec.max_other,
	};
	return 0;
}

static int channels_get(const char *root, const char *dev, struct xnf_channels *ch)
{
	char buf[1024];
	int err;

	if (root_is_real(root))
		return channels_ioctl(dev, ETHTOOL_GCHANNELS, ch);
	err = read_str(root, buf, sizeof(buf), "/ethtool/%s/channels", dev);
	if (err == -ENOENT)
		return -EOPNOTSUPP;
	if (!err)
		channels_parse(buf, ch);
	return err;
}

static int channels_set(const char *root, const char *dev,
			const struct xnf_channels *want)
{
	struct xnf_channels ch;
	char path[PATH_MAX], buf[512];
	int err;

	if (root_is_real(root)) {
		ch = *want;
		return channels_ioctl(dev, ETHTOOL_SCHANNELS, &ch);
	}
	/* A fixture: the same checks as the ethtool core, then the file. */
	err = channels_get(root, dev, &ch);
	if (err)
		return err;
	if (want->combined > ch.max_combined || want->rx > ch.max_rx ||
	    want->tx > ch.max_tx || want->other > ch.max_other ||
	    !(want->combined + want->rx) || !(want->combined + want->tx))
		return -EINVAL;
	snprintf(buf, sizeof(buf),
		 "combined %u max_combined %u\nrx %u max_rx %u\ntx %u max_tx %u\n"
		 "other %u max_other %u\n", want->combined, ch.max_combined,
		 want->rx, ch.max_rx, want->tx, ch.max_tx, want->other, ch.max_other);
	path_of(path, sizeof(path), root, "/ethtool/%s/channels", dev);
	return write_path(path, buf);
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
		"async", "ctrl", "cmd", "cmdq", "config", "misc", "event", "events",
		"aq", "adminq", "mbx", "mailbox", "ptp", "lsc", "fdir", "err", NULL,
	};
	static const char *const rxwords[] = {
		"rx", "txrx", "input", "fp", "comb", "combined", NULL,
	};
	const char *w, *last = NULL, *const *c;
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
		if (word_is(w, len, "tx", false) || word_is(w, len, "output", false))
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
	for (len = lastlen; len > 0 && isdigit((unsigned char)last[len - 1]); len--)
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

/* The IRQs of the device: its MSI/MSI-X vectors; or its legacy line (a PCI
 * function without MSI); or the vectors of its parent (a virtio device has
 * neither: the PCI function above it owns them). How many are in @irqs. */
static int dev_irqs(const char *root, const char *dev, int *irqs, int max)
{
	char path[PATH_MAX];
	int n, irq;

	path_of(path, sizeof(path), root, "/sys/class/net/%s/device/msi_irqs", dev);
	n = msi_irqs(path, irqs, max);
	if (n)
		return n;
	if (!read_int(root, &irq, "/sys/class/net/%s/device/irq", dev)) {
		if (irq <= 0)
			return 0;
		irqs[0] = irq;
		return 1;
	}
	path_of(path, sizeof(path), root, "/sys/class/net/%s/device/../msi_irqs",
		dev);
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

static void nic_read_irqs(const char *root, struct xnf_nic *nic)
{
	char path[PATH_MAX], name[XNF_IRQ_NAME_LEN], *interrupts;
	int *irqs, i, q, n, pass;

	for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++)
		nic->q[q].irq = -1;
	irqs = calloc(4096, sizeof(*irqs));
	if (!irqs)
		return;
	n = dev_irqs(root, nic->dev, irqs, 4096);
	nic->nirqs = n;
	qsort(irqs, n, sizeof(*irqs), cmp_int);
	path_of(path, sizeof(path), root, "/proc/interrupts");
	interrupts = n ? slurp(path) : NULL;
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
			read_cpuset(root, &nic->q[q].irq_affinity,
				    "/proc/irq/%d/smp_affinity_list", irqs[i]);
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

	err = read_str(root, buf, sizeof(buf), "/proc/%d/status", pid);
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
static int thread_set_affinity(const char *root, int pid,
			       const struct xnf_cpuset *s)
{
	char path[PATH_MAX], buf[8192], out[8192 + 4096], list[4096], *p, *eol;
	cpu_set_t *set;
	size_t size;
	int cpu, err;

	if (root_is_real(root)) {
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
	path_of(path, sizeof(path), root, "/proc/%d/status", pid);
	err = read_path(path, buf, sizeof(buf));
	if (err)
		return err;
	p = strstr(buf, "Cpus_allowed_list:");
	if (!p)
		return -ENOENT;
	eol = strchr(p, '\n');
	snprintf(out, sizeof(out), "%.*sCpus_allowed_list:\t%s\n%s",
		 (int)(p - buf), buf, xnf_cpuset_format(s, list, sizeof(list)),
		 eol ? eol + 1 : "");
	return write_path(path, out);
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
	path_of(path, sizeof(path), root, "/proc");
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		if (sscanf(de->d_name, "%d", &pid) != 1 ||
		    read_str(root, comm, sizeof(comm), "/proc/%d/comm", pid))
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

/*
 * The netdev generic-netlink family (Linux 6.8+ for queues and napi, the
 * thread pid since 6.9). The uapi header is not in every distribution's
 * headers yet; these values are ABI (include/uapi/linux/netdev.h).
 */
#define XNF_NETDEV_CMD_QUEUE_GET 10
#define XNF_NETDEV_CMD_NAPI_GET 11
#define XNF_NETDEV_A_QUEUE_ID 1
#define XNF_NETDEV_A_QUEUE_IFINDEX 2
#define XNF_NETDEV_A_QUEUE_TYPE 3
#define XNF_NETDEV_A_QUEUE_NAPI_ID 4
#define XNF_NETDEV_QUEUE_TYPE_RX 0
#define XNF_NETDEV_A_NAPI_IFINDEX 1
#define XNF_NETDEV_A_NAPI_ID 2
#define XNF_NETDEV_A_NAPI_PID 4

struct nl_req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[64];
};

static void nl_put_attr(struct nl_req *r, __u16 type, const void *data, __u16 len)
{
	struct nlattr *a = (void *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

typedef void (*nl_cb)(struct nlattr **tb, int max, void *ctx);

/* Sends @r and hands each reply's attributes (up to @max) to @cb. */
static int nl_talk(int fd, struct nl_req *r, int max, nl_cb cb, void *ctx)
{
	static char buf[65536] __attribute__((aligned(4)));
	struct nlattr *tb[16];
	struct nlmsghdr *nh;
	struct nlattr *a;
	ssize_t n;
	int rem;

	if (send(fd, r, r->nh.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (nh = (void *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				if (e->error)
					return e->error;
				if (!(r->nh.nlmsg_flags & NLM_F_DUMP))
					return 0;
				continue;
			}
			memset(tb, 0, sizeof(tb));
			rem = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			for (a = (void *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
			     rem >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			     a->nla_len <= rem;
			     rem -= NLA_ALIGN(a->nla_len),
			     a = (void *)((char *)a + NLA_ALIGN(a->nla_len)))
				if ((a->nla_type & NLA_TYPE_MASK) < max &&
				    (a->nla_type & NLA_TYPE_MASK) < 16)
					tb[a->nla_type & NLA_TYPE_MASK] = a;
			cb(tb, max, ctx);
			if (!(r->nh.nlmsg_flags & NLM_F_DUMP))
				return 0;
		}
	}
}

static __u32 nla_u32(const struct nlattr *a)
{
	__u32 v = 0;

	if (a && a->nla_len >= NLA_HDRLEN + 4)
		memcpy(&v, (const char *)a + NLA_HDRLEN, 4);
	return v;
}

static void family_cb(struct nlattr **tb, int max, void *ctx)
{
	const struct nlattr *a = tb[CTRL_ATTR_FAMILY_ID];

	if (a && a->nla_len >= NLA_HDRLEN + 2)
		memcpy(ctx, (const char *)a + NLA_HDRLEN, 2);
}

struct nl_napi_ctx {
	struct xnf_nic *nic;
	__u32 ifindex;
	int nnapi;
	struct napi_thread napi[XNF_PLACE_MAX_QUEUES];
};

static void queue_cb(struct nlattr **tb, int max, void *ctx)
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

static void napi_cb(struct nlattr **tb, int max, void *ctx)
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
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nl_req r;
	__u16 family = 0;
	bool linked = false;
	int fd, err, q, k;

	if (!nic->ifindex)
		return -EOPNOTSUPP;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->nic = nic;
	ctx->ifindex = nic->ifindex;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0) {
		free(ctx);
		return -errno;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto out;
	}
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = GENL_ID_CTRL;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.gh.cmd = CTRL_CMD_GETFAMILY;
	r.gh.version = 1;
	nl_put_attr(&r, CTRL_ATTR_FAMILY_NAME, "netdev", sizeof("netdev"));
	err = nl_talk(fd, &r, CTRL_ATTR_MAX + 1, family_cb, &family);
	if (err || !family) {
		err = -EOPNOTSUPP;
		goto out;
	}
	for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++)
		nic->q[q].napi_id = 0;
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = family;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	r.gh.cmd = XNF_NETDEV_CMD_QUEUE_GET;
	r.gh.version = 1;
	nl_put_attr(&r, XNF_NETDEV_A_QUEUE_IFINDEX, &nic->ifindex, 4);
	err = nl_talk(fd, &r, XNF_NETDEV_A_QUEUE_NAPI_ID + 1, queue_cb, ctx);
	if (err)
		goto out_unsupp;
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = family;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	r.gh.cmd = XNF_NETDEV_CMD_NAPI_GET;
	r.gh.version = 1;
	nl_put_attr(&r, XNF_NETDEV_A_NAPI_IFINDEX, &nic->ifindex, 4);
	err = nl_talk(fd, &r, XNF_NETDEV_A_NAPI_PID + 1, napi_cb, ctx);
	if (err)
		goto out_unsupp;
	for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++)
		linked |= nic->q[q].napi_id != 0;
	if (!linked) {
		qsort(ctx->napi, ctx->nnapi, sizeof(ctx->napi[0]), cmp_napi);
		for (q = 0; q < ctx->nnapi && q < nic->nrxq; q++)
			nic->q[q].napi_id = ctx->napi[q].id;
	}
	for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++)
		for (k = 0; k < ctx->nnapi && nic->q[q].napi_id; k++)
			if (ctx->napi[k].id == nic->q[q].napi_id && ctx->napi[k].pid > 0)
				nic->q[q].napi_pid = ctx->napi[k].pid;
out_unsupp:
	if (err)
		err = -EOPNOTSUPP;
out:
	close(fd);
	free(ctx);
	return err;
}

static void nic_read_napi(const char *root, struct xnf_nic *nic)
{
	struct napi_thread *t;
	int q, n;

	nic->nnapi = 0;
	for (q = 0; q < XNF_PLACE_MAX_QUEUES; q++) {
		nic->q[q].napi_id = 0;
		nic->q[q].napi_pid = 0;
		xnf_cpuset_zero(&nic->q[q].napi_affinity);
	}
	if (root_is_real(root) && !napi_netlink(nic)) {
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

int xnf_nic_read(const char *root, const char *dev, struct xnf_nic *nic,
		 char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n, ret;
	DIR *d;

	memset(nic, 0, sizeof(*nic));
	if (!*dev || strlen(dev) >= IF_NAMESIZE || strchr(dev, '/')) {
		snprintf(err, errlen, "invalid device name '%s'", dev);
		return -EINVAL;
	}
	snprintf(nic->dev, sizeof(nic->dev), "%s", dev);
	path_of(path, sizeof(path), root, "/sys/class/net/%s/queues", dev);
	d = opendir(path);
	if (!d) {
		ret = -errno;
		if (ret == -ENOENT)
			snprintf(err, errlen, "no device %s%s%s ('ip link' lists the "
				 "devices of this network namespace)", dev,
				 root_is_real(root) ? "" : " in ",
				 root_is_real(root) ? "" : root);
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
	if (nic->nrxq > XNF_PLACE_MAX_QUEUES)
		nic->nrxq = XNF_PLACE_MAX_QUEUES;
	if (root_is_real(root))
		nic->ifindex = if_nametoindex(dev);
	else if (!read_int(root, &n, "/sys/class/net/%s/ifindex", dev))
		nic->ifindex = n;
	path_of(path, sizeof(path), root, "/sys/class/net/%s/device", dev);
	nic->has_device = !access(path, F_OK);
	/* -1 or absent: no node (virtual devices, or firmware without SRAT). */
	if (read_int(root, &nic->node, "/sys/class/net/%s/device/numa_node", dev) ||
	    nic->node < 0)
		nic->node = -1;
	nic->chan_err = channels_get(root, dev, &nic->ch);
	if (read_int(root, &nic->threaded, "/sys/class/net/%s/threaded", dev))
		nic->threaded = -1;
	nic_read_irqs(root, nic);
	nic_read_napi(root, nic);
	return 0;
}

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
			case 0: ok = is_first && iso && !on_core0; break;
			case 1: ok = is_first && !on_core0; break;
			case 2: ok = on_core0 && cpu != 0; break;
			case 3: ok = iso && !on_core0; break;
			case 4: ok = !on_core0; break;
			default: ok = false; break;
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
		note(p, "userspace workers share their queue's core: no free CPU "
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
	snprintf(buf, len, "CPUs %s are not on node %d, where %s is attached: "
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
	snprintf(p->root, sizeof(p->root), "%s", root_is_real(root) ? "" : root);
	snprintf(p->dev, sizeof(p->dev), "%s", dev);
	ret = xnf_topo_read(root, t);
	if (ret) {
		snprintf(err, errlen, "cannot read the CPUs (%s/sys/devices/system/"
			 "cpu/possible): %s", p->root, strerror(-ret));
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
			warning(p, "node %d of %s has no online CPU: planning on all "
				"online CPUs", p->node, dev);
			p->node = -1;
		}
	}
	if (p->node < 0) {
		p->node_cpus = t->online;
		if (p->nic.node < 0)
			note(p, "%s has no NUMA node (%s): planning on all online "
			     "CPUs %s", dev, p->nic.has_device ?
			     "the firmware does not say" : "a virtual device",
			     xnf_cpuset_format(&p->node_cpus, l1, sizeof(l1)));
	} else {
		note(p, "%s is attached to NUMA node %d: its CPUs %s only%s", dev,
		     p->node, xnf_cpuset_format(&p->node_cpus, l1, sizeof(l1)),
		     t->nnodes > 1 ? " (a remote node costs 41-73% more CPU "
		     "per packet)" : "");
	}
	for (i = 0; i < XNF_PLACE_CPU_WORDS; i++)
		p->isolated.w[i] = (t->isolcpus.w[i] | t->nohz_full.w[i]) &
				   t->online.w[i];
	if (xnf_cpuset_count(&p->isolated)) {
		struct xnf_cpuset here = p->isolated;

		for (i = 0; i < XNF_PLACE_CPU_WORDS; i++)
			here.w[i] &= p->node_cpus.w[i];
		if (xnf_cpuset_count(&here))
			note(p, "isolated CPUs %s (isolcpus=%s%s%s nohz_full=%s) "
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
				snprintf(err, errlen, "CPU %d is not online (online "
					 "CPUs: %s)", cpu, xnf_cpuset_format(&t->online,
					 l1, sizeof(l1)));
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
				snprintf(err, errlen, "%s has %d receive queue%s and its "
					 "driver cannot change that (no ETHTOOL_"
					 "GCHANNELS: %s); queues %u is not possible",
					 dev, p->queues_now, p->queues_now == 1 ? "" : "s",
					 strerror(-p->nic.chan_err), req->queues);
			else
				snprintf(err, errlen, "%s can have at most %d %s "
					 "channels (ethtool -l %s); queues %u is above "
					 "that", dev, p->queues_max,
					 p->nic.ch.max_combined ? "combined" : "rx",
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
			note(p, "%d cores given but %s can have at most %d queues: "
			     "the last cores are not used", p->nqueues, dev,
			     p->queues_max);
			p->nqueues = p->queues_max;
		}
		note(p, "queues: %d, one per core given (%d now, max %d)",
		     p->nqueues, p->queues_now, p->queues_max);
	} else {
		ncores = free_cores(p, &iso_only);
		p->nqueues = p->queues_now;
		if (!p->nic.nirqs && !p->nic.has_device) {
			note(p, "queues: %d, kept (a virtual device; a veth needs "
			     "as many receive queues as its peer has transmit "
			     "queues for XDP); 'queues N' changes it",
			     p->queues_now);
		} else if (p->queues_now > ncores) {
			p->nqueues = ncores;
			note(p, "queues: %d now (max %d); planning %d, one per free "
			     "%sphysical core%s; 'queues N' chooses", p->queues_now,
			     p->queues_max, ncores, iso_only ? "isolated " : "",
			     p->node >= 0 ? " of the node" : "");
		} else {
			note(p, "queues: %d, kept (max %d); 'queues N' changes it",
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
		note(p, "%d queues on %d CPUs: queues %d-%d share the CPUs of "
		     "queues 0-%d", p->nqueues, norder, norder, p->nqueues - 1,
		     p->nqueues - norder - 1 < norder - 1 ?
		     p->nqueues - norder - 1 : norder - 1);
	}
	for (i = 0; i < p->nqueues; i++) {
		struct xnf_plan_queue *q = &p->q[i];
		int other;

		q->cpu = order[i % norder];
		q->irq = p->nic.q[i].irq;
		snprintf(q->irq_name, sizeof(q->irq_name), "%s", p->nic.q[i].irq_name);
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
		note(p, "hyperthread siblings used for XDP work: %d queues but "
		     "fewer physical cores%s", p->nqueues,
		     req->have_cores ? " in the cores given" :
		     p->node >= 0 ? " on the node" : "");
	else if (t->smt && !req->have_cores)
		note(p, "one thread per physical core for XDP work; their "
		     "hyperthread siblings stay free");
	if (p->cpu0_used)
		note(p, "CPU 0 used%s: it also takes timers, housekeeping and "
		     "every IRQ nobody placed", req->have_cores ? " as asked" :
		     ": no other CPU left");
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
		note(p, "%s has no queue IRQs: attach turns threaded NAPI on "
		     "(now %s) and pins each queue's napi thread to its CPU",
		     dev, p->nic.threaded < 0 ? "unsupported" :
		     p->nic.threaded ? "on" : "off");
	else if (p->nic.irq_all)
		note(p, "one IRQ serves every queue of %s: it goes to queue 0's CPU",
		     dev);
	else
		note(p, "attach sets each queue IRQ's affinity to its CPU "
		     "(irqbalance must leave them alone: see the README)");
	if (!p->use_napi_threads && p->nic.nqirqs < p->nqueues && !p->nic.irq_all)
		warning(p, "only %d of %d queues have an IRQ found in "
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
				 p->q[i].irq >= 0 ? XNF_PLACE_Q_IRQ : 0;
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
	ret = channels_set(p->root, p->dev, &want);
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
		snprintf(err, errlen, "%s refused %d %s channels: %s (try 'ethtool "
			 "-L %s %s %d' to see why)", p->dev, p->nqueues,
			 p->nic.ch.max_combined ? "combined" : "rx", strerror(-ret),
			 p->dev, p->nic.ch.max_combined ? "combined" : "rx",
			 p->nqueues);
		return ret;
	}
	pr_warn("Warning: %s kept its %d queues (setting %d failed: %s); the "
		"placement covers its first %d\n", p->dev, p->queues_now,
		p->nqueues, strerror(-ret),
		p->nqueues < p->queues_now ? p->nqueues : p->queues_now);
	st->info.nqueues = p->nqueues < p->queues_now ? p->nqueues : p->queues_now;
	return 0;
}

static int irq_set(const char *root, int irq, const struct xnf_cpuset *s)
{
	char path[PATH_MAX], list[4096];

	path_of(path, sizeof(path), root, "/proc/irq/%d/smp_affinity_list", irq);
	xnf_cpuset_format(s, list, sizeof(list));
	strcat(list, "\n");
	return write_path(path, list);
}

static int threaded_set(const char *root, const char *dev, int on)
{
	char path[PATH_MAX];

	path_of(path, sizeof(path), root, "/sys/class/net/%s/threaded", dev);
	return write_path(path, on ? "1\n" : "0\n");
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
		pr_warn("Warning: %s\n", ebuf);
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
				pr_warn("Warning: cannot set the affinity of IRQ %d "
					"(%s, queue %d) to CPU %u: %s%s\n", q->irq,
					nic->q[i].irq_name, i, q->cpu, strerror(-ret),
					ret == -EIO ? " (an IRQ the kernel manages)" : "");
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
				pr_warn("Warning: cannot turn on threaded NAPI on %s "
					"(%s): its receive work runs on the CPU of "
					"the sender\n", p->dev, strerror(-ret));
				free(nic);
				return first_err ?: ret;
			}
			st->info.flags |= XNF_PLACE_THREADED;
			nic->threaded = 1;
			nic_read_napi(p->root, nic);
		} else if (nic->threaded < 0) {
			pr_warn("Warning: %s has no threaded NAPI (kernel older than "
				"5.12?): its receive work runs where the sender ran\n",
				p->dev);
			free(nic);
			return first_err;
		}
		for (i = 0; i < (int)st->info.nqueues; i++) {
			struct xnf_place_queue *q = &st->q[i];

			if (!nic->q[i].napi_pid) {
				pr_warn("Warning: no napi thread found for queue %d of "
					"%s: not pinned\n", i, p->dev);
				continue;
			}
			xnf_cpuset_zero(&one);
			xnf_cpuset_set(&one, q->cpu);
			mask_to_words(&nic->q[i].napi_affinity, q->prev_napi);
			ret = thread_set_affinity(p->root, nic->q[i].napi_pid, &one);
			if (ret) {
				pr_warn("Warning: cannot pin napi thread %d (queue %d "
					"of %s) to CPU %u: %s\n", nic->q[i].napi_pid, i,
					p->dev, q->cpu, strerror(-ret));
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
	return queue < XNF_PLACE_MAX_QUEUES && nic->q[queue].napi_pid ? queue : -1;
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
		pr_warn("Warning: cannot restore threaded NAPI of %s: %s\n", dev, ebuf);
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
			ret = thread_set_affinity(root, nic->q[k].napi_pid, &prev);
			if (ret) {
				pr_warn("Warning: cannot restore the affinity of napi "
					"thread %d of %s: %s\n", nic->q[k].napi_pid,
					dev, strerror(-ret));
				first_err = first_err ?: ret;
			}
		}
	} else if (nic->threaded > 0) {
		ret = threaded_set(root, dev, 0);
		if (ret) {
			pr_warn("Warning: cannot turn threaded NAPI off again on %s "
				"(%s): 'echo 0 > /sys/class/net/%s/threaded' while "
				"it has XDP attached\n", dev, strerror(-ret), dev);
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
		ret = channels_get(root, dev, &ch);
		if (!ret) {
			ch.combined = st->info.prev_combined;
			ch.rx = st->info.prev_rx;
			ch.tx = st->info.prev_tx;
			ch.other = st->info.prev_other;
			ret = channels_set(root, dev, &ch);
		}
		if (ret) {
			pr_warn("Warning: cannot restore the channels of %s (combined "
				"%u rx %u tx %u other %u): %s\n", dev,
				st->info.prev_combined, st->info.prev_rx,
				st->info.prev_tx, st->info.prev_other, strerror(-ret));
			first_err = ret;
		}
	}
	for (i = 0; i < (int)st->info.nqueues && i < XNF_PLACE_MAX_QUEUES; i++) {
		const struct xnf_place_queue *q = &st->q[i];
		bool done = false;

		if (!(q->flags & XNF_PLACE_Q_IRQ) || q->irq < 0)
			continue;
		for (j = 0; j < i; j++)
			if ((st->q[j].flags & XNF_PLACE_Q_IRQ) && st->q[j].irq == q->irq)
				done = true;
		words_to_mask(q->prev_irq, &prev);
		if (done || !xnf_cpuset_count(&prev))
			continue;
		ret = irq_set(root, q->irq, &prev);
		if (ret) {
			pr_warn("Warning: cannot restore the affinity of IRQ %d to "
				"%s: %s\n", q->irq,
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
	case XNF_DRIFT_CHANNELS: return "channels";
	case XNF_DRIFT_IRQ: return "irq";
	case XNF_DRIFT_NAPI: return "napi";
	case XNF_DRIFT_NAPI_GONE: return "napi_gone";
	case XNF_DRIFT_THREADED: return "threaded";
	case XNF_DRIFT_WORKER: return "worker";
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
		snprintf(e->text, sizeof(e->text), "%s has %d queues, %d at attach "
			 "(channels changed since: 'ethtool -l %s')", dev, now,
			 want, dev);
	}
	if ((st->info.flags & XNF_PLACE_THREADED) && nic->threaded == 0) {
		e = drift_add(d, max, &n, XNF_DRIFT_THREADED, -1);
		e->want = 1;
		snprintf(e->text, sizeof(e->text), "threaded NAPI of %s was turned "
			 "off: receive work runs on the sender's CPU again", dev);
	}
	for (i = 0; i < (int)st->info.nqueues && i < XNF_PLACE_MAX_QUEUES; i++) {
		const struct xnf_place_queue *q = &st->q[i];

		xnf_cpuset_zero(&one);
		xnf_cpuset_set(&one, q->cpu);
		if ((q->flags & XNF_PLACE_Q_IRQ) && q->irq >= 0) {
			struct xnf_cpuset aff;

			if (read_cpuset(root, &aff, "/proc/irq/%d/smp_affinity_list",
					q->irq))
				xnf_cpuset_zero(&aff);
			if (!xnf_cpuset_equal(&aff, &one)) {
				e = drift_add(d, max, &n, XNF_DRIFT_IRQ, i);
				e->irq = q->irq;
				e->want = q->cpu;
				e->now = aff;
				snprintf(e->text, sizeof(e->text), "IRQ %d (queue %d) "
					 "may run on CPUs %s, the placement says %u "
					 "(moved by irqbalance or by hand?)", q->irq, i,
					 xnf_cpuset_format(&aff, list, sizeof(list)),
					 q->cpu);
			}
		}
		if (q->flags & XNF_PLACE_Q_NAPI) {
			k = find_napi(nic, q, i);
			if (k < 0) {
				e = drift_add(d, max, &n, XNF_DRIFT_NAPI_GONE, i);
				e->want = q->cpu;
				snprintf(e->text, sizeof(e->text), "queue %d of %s has "
					 "no napi thread any more (threaded NAPI off, "
					 "or XDP re-attached by someone else)", i, dev);
			} else if (!xnf_cpuset_equal(&nic->q[k].napi_affinity, &one)) {
				e = drift_add(d, max, &n, XNF_DRIFT_NAPI, i);
				e->want = q->cpu;
				e->now = nic->q[k].napi_affinity;
				snprintf(e->text, sizeof(e->text), "napi thread %d "
					 "(queue %d) may run on CPUs %s, the placement "
					 "says %u", nic->q[k].napi_pid, i,
					 xnf_cpuset_format(&nic->q[k].napi_affinity,
							   list, sizeof(list)), q->cpu);
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
	snprintf(path, sizeof(path), "%s/%s", pin_dir, XNF_MAP_PLACE);
	err = bpf_map__set_pin_path(skel->maps.xnf_place, path);
	snprintf(path, sizeof(path), "%s/%s", pin_dir, XNF_MAP_PLACE_Q);
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
	if (!err && bpf_map_update_elem(bpf_map__fd(skel->maps.xnf_place), &zero,
					&st->info, BPF_ANY))
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
	snprintf(path, sizeof(path), "%s/%s", pin_dir, XNF_MAP_PLACE);
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
	snprintf(path, sizeof(path), "%s/%s", pin_dir, XNF_MAP_PLACE_Q);
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

	snprintf(path, sizeof(path), "%s/dev/%s/%s", pin_root, dev, XNF_MAP_PLACE);
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
	snprintf(path, sizeof(path), "%s/dev/%s/%s", pin_root, dev, XNF_MAP_PLACE_Q);
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
