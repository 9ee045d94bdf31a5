// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf worker DEV nf NAME[,NAME...] [OPTIONS]: runs the AF_XDP workers of a
 * device (userspace/worker.c) in the foreground until SIGINT / SIGTERM or
 * the duration, then prints what they did. Also how workers show in
 * `xnf stats` and `xnf status` (cli_workers_show).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>

#include "cli.h"
#include "prom.h"
#include "placement.h"
#include "unf.h"
#include "worker.h"

/* Asked for ('xnf worker help'): on stdout. */
static void worker_help(void)
{
	const struct xnf_unf_ops *const *ops;

	printf("Usage: xnf worker DEV nf NAME[,NAME...] [args OPTIONS] [queues LIST]\n"
	       "                  [batch N] [ring N] [frames N] [zerocopy auto|on|off]\n"
	       "                  [egress DEV[,DEV...]] [busy-poll [BP_OPTS]] [spin]\n"
	       "                  [cores LIST] [duration SEC]\n"
	       "BP_OPTS := [usecs U] [budget N] [defer N] [flush-timeout NS]\n"
	       "Runs userspace NFs on the packets DEV's XDP chain hands to AF_XDP\n"
	       "(attach a chain that ends in xsk first: xnf attach DEV chain xsk),\n"
	       "one thread per queue, until SIGINT/SIGTERM or the duration.\n"
	       "  nf        the NFs, run in order over each batch\n"
	       "  args      options of the NFs, KEY=VALUE[,KEY=VALUE...]\n"
	       "  queues    RX queues to serve (default: all), e.g. 0-3 or 0,2\n"
	       "  batch     descriptors read at once (default %d, at most the ring\n"
	       "            size and %d)\n"
	       "  ring      size of every ring (default %d, a power of two)\n"
	       "  frames    UMEM frames per queue (default: enough to fill every ring)\n"
	       "  zerocopy  auto: zero-copy where the driver can (default); on: or\n"
	       "            fail; off: copy mode\n"
	       "  egress    devices to transmit on, the first is the default; frames\n"
	       "            are not copied (the sockets share the UMEM)\n"
	       "  busy-poll SO_PREFER_BUSY_POLL: the worker drives the device's NAPI\n"
	       "            from its recvfrom()/sendto() (docs/workers.md):\n"
	       "    usecs   SO_BUSY_POLL, how long one call may poll (default %d)\n"
	       "    budget  SO_BUSY_POLL_BUDGET, packets per NAPI poll (default:\n"
	       "            the batch)\n"
	       "    defer   the device's napi_defer_hard_irqs (default %d)\n"
	       "    flush-timeout  the device's gro_flush_timeout in ns (default\n"
	       "            %d); both restored when its last busy-poll worker ends\n"
	       "  spin      never sleep when idle (lowest latency, one busy core)\n"
	       "  cores     a core per queue (default: the placement `xnf attach ...\n"
	       "            cores` recorded, or the plan for DEV)\n"
	       "NFs:\n",
	       XNF_WORKER_BATCH_DEFAULT, XNF_XSK_BATCH_MAX,
	       XNF_WORKER_RING_DEFAULT, XNF_BP_USECS_DEFAULT,
	       XNF_BP_DEFER_DEFAULT, XNF_BP_FLUSH_NS_DEFAULT);
	for (ops = xnf_unf_registry; *ops; ops++)
		printf("  %-10s %s\n", (*ops)->name, (*ops)->help);
}

static const char *state_name(const struct xnf_worker_stats *w)
{
	switch (w->state) {
	case XNF_W_STARTING:
	case XNF_W_RUNNING:
		/* A worker killed with SIGKILL leaves its entry behind. */
		if (!xnf_worker_alive(w))
			return "dead";
		return w->state == XNF_W_RUNNING ? "running" : "starting";
	case XNF_W_STOPPED:
		return "stopped";
	default:
		return "none";
	}
}

static const char *mode_name(__u32 mode)
{
	return mode == XNF_XSK_MODE_ZEROCOPY ? "zerocopy" :
	       mode == XNF_XSK_MODE_COPY     ? "copy" :
					       "none";
}

static const char *const wdrop_names[__XNF_WD_MAX] = {
	[XNF_WD_NF] = "nf",
	[XNF_WD_TO_KERNEL] = "to_kernel",
	[XNF_WD_NO_PORT] = "no_port",
	[XNF_WD_TX_FULL] = "tx_full",
};

static const char *const place_names[__XNF_FP_MAX] = {
	[XNF_FP_FREE] = "free",
	[XNF_FP_FILL] = "fill",
	[XNF_FP_NF] = "nf",
	[XNF_FP_TX] = "tx",
};

const char *cli_wdrop_name(unsigned int i)
{
	return wdrop_names[i];
}

const char *cli_place_name(unsigned int i)
{
	return place_names[i];
}

/* Busy-poll mode's settings (JSON; null without it): the socket options
 * as the kernel read them back, the device's NAPI settings while it runs,
 * and those it had before, which the last busy-poll worker restores. */
static void busy_poll_print(const struct xnf_worker_stats *w)
{
	if (!w->busy_poll) {
		print_null(PRINT_JSON, "busy_poll_settings", NULL);
		return;
	}
	open_json_object("busy_poll_settings");
	print_bool(PRINT_JSON, "prefer", NULL, w->bp.prefer);
	print_uint(PRINT_JSON, "usecs", NULL, w->bp.usecs);
	print_uint(PRINT_JSON, "budget", NULL, w->bp.budget);
	print_uint(PRINT_JSON, "napi_defer_hard_irqs", NULL, w->bp.defer);
	print_uint(PRINT_JSON, "gro_flush_timeout", NULL, w->bp.flush_ns);
	if (w->bp.saved) {
		open_json_object("previous");
		print_uint(PRINT_JSON, "napi_defer_hard_irqs", NULL,
			   w->bp.old_defer);
		print_uint(PRINT_JSON, "gro_flush_timeout", NULL,
			   w->bp.old_flush_ns);
		close_json_object();
	} else {
		print_null(PRINT_JSON, "previous", NULL);
	}
	close_json_object();
}

/* Who and where: the members `status` shows and `stats` starts with. The
 * text line is "    [worker ]queue Q: STATE, pid P, cpu C, node N, MODE
 * mode, nf NFS", and with !@brief ", batch B, ring R" (the caller ends
 * it). */
static void worker_id_print(__u32 q, const struct xnf_worker_stats *w, bool brief)
{
	enum print_type t = brief ? PRINT_JSON : PRINT_ANY;

	print_uint(PRINT_ANY, "queue",
		   brief ? "    worker queue %llu: " : "    queue %llu: ", q);
	print_string(PRINT_ANY, "state", "%s", state_name(w));
	print_uint(PRINT_ANY, "pid", ", pid %llu", w->pid);
	print_uint(PRINT_JSON, "tid", NULL, w->tid);
	print_uint(PRINT_ANY, "cpu", ", cpu %llu", w->cpu);
	print_int(PRINT_ANY, "node", ", node %lld", w->node);
	print_string(PRINT_ANY, "mode", ", %s mode", mode_name(w->mode));
	busy_poll_print(w);
	print_string(PRINT_ANY, "nf", ", nf %s", (const char *)w->nf);
	print_uint(t, "batch", ", batch %llu", w->batch);
	print_uint(t, "ring", ", ring %llu", w->ring);
}

/* Everything a worker counted (xnf stats, and xnf worker when it ends). */
static void worker_print(__u32 q, const struct xnf_worker_stats *w)
{
	__u64 nb = w->polls - w->empty_polls, drops = 0;
	__u64 ns = w->busy_ns + w->idle_ns;
	__u32 i;

	open_json_object(NULL);
	worker_id_print(q, w, false);
	print_uint(PRINT_ANY, "frames", ", %llu frames\n", w->frames);
	print_uint(PRINT_JSON, "frame_size", NULL, w->frame_size);
	print_bool(PRINT_JSON, "busy_poll", NULL, w->busy_poll);
	print_bool(PRINT_JSON, "need_wakeup", NULL, w->need_wakeup);
	if (w->busy_poll)
		print_text("      busy-poll: usecs %u budget %u, "
			   "napi_defer_hard_irqs %u gro_flush_timeout %llu\n",
			   w->bp.usecs, w->bp.budget, w->bp.defer,
			   (unsigned long long)w->bp.flush_ns);
	print_uint(PRINT_ANY, "rx_packets", "      rx %llu packets",
		   w->rx_packets);
	print_uint(PRINT_ANY, "rx_bytes", " %llu bytes", w->rx_bytes);
	print_uint(PRINT_ANY, "tx_packets", ", tx %llu packets", w->tx_packets);
	print_uint(PRINT_ANY, "tx_bytes", " %llu bytes\n", w->tx_bytes);
	print_uint(PRINT_ANY, "polls", "      %llu reads", w->polls);
	print_uint(PRINT_ANY, "empty_polls", ", %llu empty", w->empty_polls);
	print_float(PRINT_FP, NULL, ", mean batch %.2f",
		    nb ? (double)w->rx_packets / nb : 0);
	print_float(PRINT_FP, NULL, ", busy %.1f%%\n",
		    ns ? 100.0 * w->busy_ns / ns : 0);
	print_uint(PRINT_JSON, "busy_ns", NULL, w->busy_ns);
	print_uint(PRINT_JSON, "idle_ns", NULL, w->idle_ns);
	print_float(PRINT_JSON, "utilization", NULL,
		    ns ? (double)w->busy_ns / ns : 0);
	print_uint(PRINT_JSON, "fill_short", NULL, w->fill_short);
	print_uint(PRINT_JSON, "sleeps", NULL, w->sleeps);
	print_uint(PRINT_JSON, "sleep_ns", NULL, w->sleep_ns);
	print_uint(PRINT_JSON, "wake_reads", NULL, w->wake_reads);
	print_uint(PRINT_JSON, "wake_packets", NULL, w->wake_packets);
	open_json_object("idle_run");
	print_uint(PRINT_JSON, "reads", NULL, w->idle_run.reads);
	print_uint(PRINT_JSON, "ns", NULL, w->idle_run.ns);
	print_uint(PRINT_JSON, "ns_sq", NULL, w->idle_run.ns_sq);
	print_uint(PRINT_JSON, "sleeps", NULL, w->idle_run.sleeps);
	print_uint(PRINT_JSON, "sleep_ns", NULL, w->idle_run.sleep_ns);
	close_json_object();
	for (i = 0; i < __XNF_WD_MAX; i++)
		drops += w->drop[i];
	print_uint(PRINT_FP, NULL, "      dropped %llu:", drops);
	open_json_object("drop");
	for (i = 0; i < __XNF_WD_MAX; i++) {
		print_text(" %s ", wdrop_names[i]);
		print_uint(PRINT_ANY, wdrop_names[i], "%llu", w->drop[i]);
	}
	close_json_object();
	open_json_object("nf_drop");
	for (i = 0; i < __XNF_R_MAX; i++) {
		if (!w->nf_drop[i])
			continue;
		print_text(" (%s ", xnf_reason_name(i));
		print_uint(PRINT_ANY, xnf_reason_name(i), "%llu)", w->nf_drop[i]);
	}
	close_json_object();
	/* The kernel's XDP socket counters: in text before the frames, in
	 * JSON after them, each in its own order. */
	print_text("\n      kernel: rx_dropped %llu rx_ring_full %llu "
		   "fill_ring_empty %llu rx_invalid %llu tx_invalid %llu\n",
		   (unsigned long long)w->k_rx_dropped,
		   (unsigned long long)w->k_rx_ring_full,
		   (unsigned long long)w->k_rx_fill_ring_empty_descs,
		   (unsigned long long)w->k_rx_invalid_descs,
		   (unsigned long long)w->k_tx_invalid_descs);
	print_text("      frames:");
	open_json_object("frames_in");
	for (i = 0; i < __XNF_FP_MAX; i++) {
		print_text(" %s ", place_names[i]);
		print_uint(PRINT_ANY, place_names[i], "%llu", w->place[i]);
	}
	close_json_object();
	print_nl();
	open_json_object("kernel");
	print_uint(PRINT_JSON, "rx_dropped", NULL, w->k_rx_dropped);
	print_uint(PRINT_JSON, "rx_invalid_descs", NULL, w->k_rx_invalid_descs);
	print_uint(PRINT_JSON, "tx_invalid_descs", NULL, w->k_tx_invalid_descs);
	print_uint(PRINT_JSON, "rx_ring_full", NULL, w->k_rx_ring_full);
	print_uint(PRINT_JSON, "rx_fill_ring_empty_descs", NULL,
		   w->k_rx_fill_ring_empty_descs);
	print_uint(PRINT_JSON, "tx_ring_empty_descs", NULL,
		   w->k_tx_ring_empty_descs);
	close_json_object();
	open_json_array("batch_hist");
	for (i = 0; i <= XNF_XSK_BATCH_MAX; i++) {
		if (!w->by_size[i].batches)
			continue;
		open_json_object(NULL);
		print_uint(PRINT_JSON, "size", NULL, i);
		print_uint(PRINT_JSON, "batches", NULL, w->by_size[i].batches);
		print_uint(PRINT_JSON, "ns", NULL, w->by_size[i].ns);
		print_uint(PRINT_JSON, "ns_sq", NULL, w->by_size[i].ns_sq);
		print_uint(PRINT_JSON, "tx_ns", NULL, w->by_size[i].tx_ns);
		close_json_object();
	}
	close_json_array();
	close_json_object();
}

static void worker_brief(__u32 q, const struct xnf_worker_stats *w)
{
	open_json_object(NULL);
	worker_id_print(q, w, true);
	close_json_object();
	print_nl();
}

void cli_workers_print(const struct xnf_worker_entry *w, int n, bool brief)
{
	int i;

	open_json_array("workers");
	for (i = 0; i < n; i++) {
		if (!i && !brief)
			print_text("  AF_XDP workers:\n");
		if (brief)
			worker_brief(w[i].queue, &w[i].w);
		else
			worker_print(w[i].queue, &w[i].w);
	}
	close_json_array();
}

/* The workers of @dev that ever ran (cli_workers_print). */
void cli_workers_show(const char *dev, bool brief)
{
	struct xnf_worker_entry *w;
	int n;

	n = xnf_workers_read(cli.root, dev, XNF_WORKER_MAX, &w);
	cli_workers_print(w, n > 0 ? n : 0, brief);
	free(w);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int parse_list(const char *s, char out[][IF_NAMESIZE], __u32 max, __u32 *n)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == max)
			return cli_err("egress '%s': at most %u devices", s, max);
		if (cli_dev_check(tok))
			return -1;
		snprintf(out[(*n)++], IF_NAMESIZE, "%s", tok);
	}
	return *n ? 0 : cli_err("egress: give at least one device");
}

static int cpus_to_array(const char *s, const char *what, __u32 *out, __u32 max,
			 __u32 *n)
{
	struct xnf_cpuset set;
	int c;

	if (xnf_cpuset_parse(s, &set))
		return cli_err("%s '%s': a list like 0-3 or 0,2,5", what, s);
	*n = 0;
	for (c = xnf_cpuset_next(&set, 0); c >= 0;
	     c = xnf_cpuset_next(&set, c + 1)) {
		if (*n == max)
			return cli_err("%s '%s': at most %u", what, s, max);
		out[(*n)++] = c;
	}
	return *n ? 0 : cli_err("%s '%s' is empty", what, s);
}

/* The chain of @dev must end in xsk, or no packet reaches a worker. */
static int check_chain(struct xnf_dp *dp, const char *dev)
{
	struct xnf_dev_info info;
	int err;
	__u32 i;

	err = xnf_dev_info_read(dp, dev, &info);
	if (err == -ENOENT)
		return cli_err("%s is not attached; attach a chain that ends in "
			       "xsk first: xnf attach %s chain xsk",
			       dev, dev);
	if (err)
		return cli_err("cannot read the chain attached to %s (%s): %s",
			       dev, XNF_MAP_STR(XNF_MAP_DEV), strerror(-err));
	for (i = 0; i < info.chain_len && i < XNF_CHAIN_MAX; i++)
		if (info.nf[i] == XNF_NF_XSK)
			return 0;
	return cli_err("the chain of %s has no xsk stage, so no packet would "
		       "reach a worker; add it: xnf chain set %s chain "
		       "NF,...,xsk",
		       dev, dev);
}

/* A setting of busy-poll mode: KW VAL (none is 0, which is the default). */
static int busy_poll_opt(struct xnf_worker_opts *o, const char *kw,
			 const char *val)
{
	__u32 *v = kw[0] == 'u' ? &o->bp.usecs :
		   kw[0] == 'b' ? &o->bp.budget :
		   kw[0] == 'd' ? &o->bp.defer :
				  &o->bp.flush_ns;

	if (parse_u32(val, kw, v))
		return -1;
	if (!*v)
		return cli_err("%s must be at least 1 (leave it out for the "
			       "default)",
			       kw);
	return 0;
}

int do_worker(int argc, char **argv)
{
	static const char *const zc_kw[] = { "auto", "on", "off", NULL };
	struct xnf_worker_opts o = { .sysfs_root = "" };
	__u32 cores[XNF_WORKER_MAX], ncores = 0, i;
	struct sigaction sa = { .sa_handler = on_signal };
	struct xnf_worker_entry *ws;
	struct xnf_dp *dp;
	bool have_nf = false;
	char msg[512];
	int err, k, n;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		worker_help();
		return 0;
	}
	if (argc < 1)
		return cli_err("worker takes a device and NFs (xnf worker DEV nf "
			       "NAME[,NAME...]); try 'xnf worker help'");
	if (cli_dev_check(argv[0]))
		return -1;
	snprintf(o.dev, sizeof(o.dev), "%s", argv[0]);
	NEXT_ARG();
	while (argc > 0) {
		const char *kw = argv[0];

		if (!strcmp(kw, "busy-poll") || !strcmp(kw, "spin")) {
			if (kw[0] == 'b')
				o.busy_poll = true;
			else
				o.spin = true;
			NEXT_ARG();
			continue;
		}
		if (argc < 2)
			return cli_err("'%s' needs a value; see 'xnf worker help'",
				       kw);
		if (!strcmp(kw, "nf")) {
			if (strlen(argv[1]) >= sizeof(o.nf))
				return cli_err("nf '%s': too long", argv[1]);
			snprintf(o.nf, sizeof(o.nf), "%s", argv[1]);
			have_nf = true;
		} else if (!strcmp(kw, "args")) {
			o.args = argv[1];
		} else if (!strcmp(kw, "queues")) {
			if (cpus_to_array(argv[1], "queues", o.queues,
					  XNF_WORKER_MAX, &o.nqueues))
				return -1;
		} else if (!strcmp(kw, "batch")) {
			if (parse_u32(argv[1], "batch", &o.batch))
				return -1;
			if (!o.batch)
				return cli_err("batch must be at least 1");
		} else if (!strcmp(kw, "ring")) {
			if (parse_u32(argv[1], "ring", &o.ring))
				return -1;
		} else if (!strcmp(kw, "frames")) {
			if (parse_u32(argv[1], "frames", &o.frames))
				return -1;
		} else if (!strcmp(kw, "zerocopy")) {
			k = cli_keyword(argv[1], zc_kw, "zerocopy",
					"auto|on|off");
			if (k < 0)
				return -1;
			o.zerocopy = k;
		} else if (!strcmp(kw, "egress")) {
			if (parse_list(argv[1], o.egress, XNF_WORKER_EGRESS_MAX,
				       &o.negress))
				return -1;
		} else if (!strcmp(kw, "cores")) {
			if (cpus_to_array(argv[1], "cores", cores,
					  XNF_WORKER_MAX, &ncores))
				return -1;
		} else if (o.busy_poll &&
			   (!strcmp(kw, "usecs") || !strcmp(kw, "budget") ||
			    !strcmp(kw, "defer") ||
			    !strcmp(kw, "flush-timeout"))) {
			if (busy_poll_opt(&o, kw, argv[1]))
				return -1;
		} else if (!strcmp(kw, "duration")) {
			if (parse_u32(argv[1], "duration", &o.duration_s))
				return -1;
		} else {
			return cli_err("unknown worker option '%s'; see 'xnf "
				       "worker help'",
				       kw);
		}
		argc -= 2;
		argv += 2;
	}
	if (!have_nf)
		return cli_err("which NF? xnf worker %s nf NAME (see 'xnf worker "
			       "help')",
			       o.dev);
	if (ncores) {
		__u32 nq = o.nqueues;

		if (!nq && ncores != 1)
			return cli_err("cores: give the queues too, one core each "
				       "(queues LIST cores LIST)");
		if (nq && ncores != nq)
			return cli_err("cores: %u cores for %u queues; give one "
				       "core per queue",
				       ncores, nq);
		o.have_cores = true;
		for (i = 0; i < ncores; i++)
			o.cores[i] = cores[i];
	}
	o.pin_root = cli.root;
	dp = cli_dp(false);
	if (!dp)
		return -1;
	if (check_chain(dp, o.dev))
		return -1;
	/* A worker runs for hours: it must not hold the lock other xnf
	 * commands wait for. It takes it shared only while it reloads its
	 * copies of the tables. */
	cli_change_started();
	xnf_dp_lock(dp, LOCK_UN);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = xnf_worker_run(dp, &o, &stop, msg, sizeof(msg));
	if (err)
		cli_err("%s", msg);
	/* What the workers did, from their entries. */
	n = xnf_workers_read(cli.root, o.dev, XNF_WORKER_MAX, &ws);
	if (n >= 0) {
		open_json_doc("xnf/worker/1");
		print_string(PRINT_JSON, "dev", NULL, o.dev);
		open_json_array("workers");
		for (k = 0; k < n; k++) {
			bool mine = !o.nqueues;

			for (i = 0; i < o.nqueues; i++)
				mine |= o.queues[i] == ws[k].queue;
			if (mine && ws[k].w.pid == (__u32)getpid())
				worker_print(ws[k].queue, &ws[k].w);
		}
		close_json_array();
		close_json_object();
		free(ws);
	}
	return err ? -1 : 0;
}
