// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xnf status [DEV] (and xnf chain show): what runs, read-only. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>

#include "cli.h"
#include "stats.h"
#include "trace.h"

#define MAX_DEVS 1024

/* Whether the chain uses the attachment's l3fwd mode (fib or lpm): with
 * l3fwd, which looks routes up in it, or with xsk, which in fib mode
 * hands the kernel FIB's answer to the AF_XDP worker and otherwise has
 * the worker's l3fwd look xnf's tables up (userspace/nf_l3fwd.c). */
static bool uses_l3_mode(const struct xnf_chain_spec *spec)
{
	__u32 i;

	for (i = 0; i < spec->len; i++)
		if (spec->nf[i] == XNF_NF_L3FWD || spec->nf[i] == XNF_NF_XSK)
			return true;
	return false;
}

/* @st: the document "xnf/status/1" with @doc, else an element of the
 * "devices" of "xnf/status-list/1". */
static void status_print(const struct xnf_dev_status *st, bool doc)
{
	struct xnf_chain_spec spec = {};
	char chain[128], ifname[IF_NAMESIZE], warn[512];
	const char *nf, *dev = st->dev;
	__u32 i;

	spec.len = st->info.chain_len > XNF_CHAIN_MAX ? XNF_CHAIN_MAX :
							st->info.chain_len;
	memcpy(spec.nf, st->info.nf, sizeof(spec.nf));
	xnf_chain_format(&spec, chain, sizeof(chain));

	if (doc)
		open_json_doc("xnf/status/1");
	else
		open_json_object(NULL);
	print_string(PRINT_ANY, "dev", "%s", dev);
	print_uint(PRINT_ANY, "ifindex", " (ifindex %llu", st->info.ifindex);
	if (fmt_ifname(st->info.ifindex, ifname)[0] && strcmp(ifname, dev))
		print_text(", renamed");
	print_bool(PRINT_JSON, "attached", NULL, st->live);
	print_string(PRINT_ANY, "chain", "): chain %s", chain);
	print_bool(PRINT_JSON, "fused", NULL, st->info.fused);
	if (st->info.fused)
		print_text(" (fused)");
	print_string(PRINT_ANY, "mode", ", %s mode",
		     st->info.xdp_flags == XDP_FLAGS_SKB_MODE ? "generic" :
								"native");
	if (uses_l3_mode(&spec))
		print_string(PRINT_ANY, "l3fwd", ", l3fwd %s",
			     st->info.l3_fib ? "fib" : "lpm");
	else
		print_null(PRINT_JSON, "l3fwd", NULL);
	if (!st->live)
		print_text(", NOT ATTACHED (device gone?)");
	print_uint(PRINT_ANY, "link_id", "\n    link id %llu", st->link_id);
	print_uint(PRINT_ANY, "prog_id", "  prog id %llu", st->prog_id);
	open_json_array("nfs");
	for (i = 0; i < spec.len; i++) {
		nf = xnf_nf_name(spec.nf[i]);
		open_json_object(NULL);
		print_uint(PRINT_JSON, "slot", NULL, i);
		print_string(PRINT_JSON, "nf", NULL, nf);
		if (!st->info.fused) {
			print_text("  %s", nf);
			print_uint(PRINT_ANY, "prog_id", " id %llu",
				   st->nf_prog_id[i]);
		}
		close_json_object();
	}
	close_json_array();
	print_string(PRINT_ANY, "pins", "\n    pins %s\n", st->pins);
	open_json_array("warnings");
	if (st->live && st->info.netns == xnf_netns_inode()) {
		if (xnf_egress_check(dev, st->info.ifindex, warn, sizeof(warn)) >
		    0)
			print_string(PRINT_ANY, NULL, "    warning: %s\n", warn);
		if (xnf_sender_check(dev, warn, sizeof(warn)) > 0)
			print_string(PRINT_ANY, NULL, "    warning: %s\n", warn);
	}
	close_json_array();
	cli_workers_show(dev, true);
	close_json_object();
}

/* By ifindex, as ip(8) lists links (then by name: an ifindex of another
 * network namespace may repeat). */
static int status_cmp(const void *a, const void *b)
{
	const struct xnf_dev_status *x = a, *y = b;

	if (x->info.ifindex != y->info.ifindex)
		return x->info.ifindex < y->info.ifindex ? -1 : 1;
	return strcmp(x->dev, y->dev);
}

/* The instance to read, in *@dp; NULL without an error when there is
 * none: a list of what is attached is then empty, as `ip link` and `nft
 * list ruleset` print nothing where there is nothing. 0 or -1. */
static int status_dp(struct xnf_dp **dp)
{
	char err[1024];
	int ret;

	*dp = NULL;
	if (cli.dp || cli.batch) {
		*dp = cli_dp_read();
		return *dp ? 0 : -1;
	}
	ret = xnf_open(cli.root, XNF_OPEN_READ, cli.wait, &cli.dp, err,
		       sizeof(err));
	if (ret) {
		cli.dp = NULL;
		return ret == -ENOENT ? 0 : cli_err("%s", err);
	}
	*dp = cli.dp;
	return 0;
}

/* The egress ports xnf is not attached to (@st[@n] are), with warnings as
 * a device has them: what xnf redirects to a port that cannot take it is
 * lost. */
static int ports_show(struct xnf_dp *dp, const struct xnf_dev_status *st, int n)
{
	struct xnf_port_sample *ports;
	__u32 netns = xnf_netns_inode();
	char warn[512];
	int np, i, j;

	np = xnf_ports_read(dp, &ports);
	if (np < 0)
		return cli_err("cannot read the egress ports (%s): %s",
			       XNF_MAP_STR(XNF_MAP_XMIT), strerror(-np));
	open_json_array("egress_ports");
	for (i = 0; i < np; i++) {
		for (j = 0; j < n; j++)
			if (st[j].info.netns == netns &&
			    st[j].info.ifindex == ports[i].ifindex)
				break;
		if (j < n)
			continue;
		open_json_object(NULL);
		print_string(PRINT_ANY, "dev", "%s", ports[i].name);
		print_uint(PRINT_ANY, "ifindex", " (ifindex %llu)",
			   ports[i].ifindex);
		print_bool(PRINT_JSON, "attached", NULL, false);
		print_text(": egress port, not attached\n");
		open_json_array("warnings");
		if (xnf_egress_check(ports[i].name, ports[i].ifindex, warn,
				     sizeof(warn)) > 0)
			print_string(PRINT_ANY, NULL, "    warning: %s\n", warn);
		close_json_array();
		close_json_object();
	}
	close_json_array();
	free(ports);
	return 0;
}

/* The armed trace (xnf trace), if any: "trace": null without one. */
static void trace_show(struct xnf_dp *dp)
{
	struct xnf_trace_cfg cfg;
	bool alive;

	if (!dp || xnf_trace_read(dp, &cfg) || !cfg.id) {
		print_null(PRINT_JSON, "trace", NULL);
		return;
	}
	alive = xnf_trace_live(&cfg);
	open_json_object("trace");
	print_uint(PRINT_ANY, "id", "trace %llu", cfg.id);
	print_uint(PRINT_ANY, "pid", " armed by pid %llu", cfg.pid);
	print_bool(PRINT_JSON, "live", NULL, alive);
	if (!alive)
		print_text(" (over: the tracer is gone or a bound was reached)");
	print_uint(PRINT_ANY, "matched", ": %llu", cfg.matched);
	if (cfg.max_packets)
		print_uint(PRINT_ANY, "max_packets", "/%llu packets",
			   cfg.max_packets);
	else
		print_null(PRINT_ANY, "max_packets", " packets (no count)");
	if (cfg.deadline_ns && !cfg.lease_ms)
		print_uint(PRINT_ANY, "left_s", ", %llu s left",
			   (xnf_trace_left_ns(&cfg) + 999999999ull) /
				   1000000000ull);
	else
		print_null(PRINT_ANY, "left_s", ", no timeout");
	print_nl();
	close_json_object();
}

int do_status(int argc, char **argv)
{
	static char names[MAX_DEVS][16];
	struct xnf_dev_status *st = NULL;
	struct xnf_dp *dp;
	int n = 0, i, k = 0, ret, err = 0;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		printf("Usage: xnf status [DEV]\n");
		return 0;
	}
	if (argc > 1)
		return cli_err("status takes one device or none; try 'xnf "
			       "status help'");
	if (argc > 0) {
		struct xnf_dev_status one;

		if (cli_dev_check(argv[0]))
			return -1;
		dp = cli_dp_read();
		if (!dp)
			return -1;
		if (xnf_dev_status(dp, argv[0], &one))
			return cli_err("xnf is not attached to %s", argv[0]);
		status_print(&one, true);
		return 0;
	}
	if (status_dp(&dp))
		return -1;
	if (dp) {
		n = xnf_dev_list(dp, names, MAX_DEVS);
		if (n < 0)
			return cli_err("cannot read %s/dev: %s", cli.root,
				       strerror(-n));
		n = n < MAX_DEVS ? n : MAX_DEVS;
		st = calloc(n ?: 1, sizeof(*st));
		if (!st)
			return cli_err("out of memory");
	}
	for (i = 0; i < n; i++) {
		ret = xnf_dev_status(dp, names[i], &st[k]);
		/* -ENOENT: detached since it was listed (readers take no
		 * lock), so no longer attached. */
		if (!ret)
			k++;
		else if (ret != -ENOENT)
			err = cli_err("cannot read what runs on %s: %s",
				      names[i], strerror(-ret));
	}
	qsort(st, k, sizeof(*st), status_cmp);
	open_json_doc("xnf/status-list/1");
	open_json_array("devices");
	for (i = 0; i < k; i++)
		status_print(&st[i], false);
	close_json_array();
	if (dp)
		err = ports_show(dp, st, k) ?: err;
	trace_show(dp);
	close_json_object();
	free(st);
	return err;
}
