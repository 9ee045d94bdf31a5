// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf route sync: the kernel's routes mirrored into xnf's tables, in the
 * foreground like xnf worker (lib/rtsync.c does the work), one line per
 * event (one JSON object per line under -j); xnf route sync flush removes
 * what it wrote. xnf neigh follow: only the next hops following their
 * neighbours, for routes added by hand.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>

#include "cli.h"
#include "rtsync.h"

#define SYNC_HELP "see 'xnf route sync help'"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static const char *event_name(enum xnf_rtsync_ev t)
{
	static const char *const names[] = {
		[XNF_RTSYNC_STARTED] = "started",
		[XNF_RTSYNC_BATCH] = "batch",
		[XNF_RTSYNC_RESYNC] = "resync",
		[XNF_RTSYNC_OVERRUN] = "overrun",
		[XNF_RTSYNC_NEIGH] = "neigh",
		[XNF_RTSYNC_UNSUPPORTED] = "unsupported",
		[XNF_RTSYNC_STOPPED] = "stopped",
		[XNF_RTSYNC_CT_FLUSH] = "ct_flush",
	};

	return t <= XNF_RTSYNC_CT_FLUSH ? names[t] : "unknown";
}

static void print_counts(const struct xnf_rtsync_event *ev)
{
	print_uint(PRINT_ANY, "added", " added %llu", ev->added);
	print_uint(PRINT_ANY, "replaced", " replaced %llu", ev->replaced);
	print_uint(PRINT_ANY, "deleted", " deleted %llu", ev->deleted);
	print_uint(PRINT_ANY, "unchanged", " unchanged %llu", ev->unchanged);
	print_uint(PRINT_ANY, "unsupported", " to_kernel %llu", ev->unsupported);
	print_uint(PRINT_ANY, "routes", ", %llu routes", ev->routes);
	print_uint(PRINT_ANY, "usec", " (%llu us)", ev->usec);
}

static void on_event(const struct xnf_rtsync_event *ev, void *ctx)
{
	const struct xnf_rtsync_opts *o = ctx;
	char addr[INET6_ADDRSTRLEN + 5], dev[IF_NAMESIZE], mac[18], table[64];

	open_json_doc("xnf/sync-event/1");
	print_string(PRINT_ANY, "event", "%s", event_name(ev->type));
	switch (ev->type) {
	case XNF_RTSYNC_STARTED:
		print_uint(PRINT_ANY, "pid", ": pid %llu", getpid());
		if (!o->follow_only) {
			/* As ip route names it ("main"); the number too
			 * in JSON. */
			print_uint(PRINT_JSON, "table", NULL, o->table);
			print_string(PRINT_ANY, "table_name", ", table %s",
				     xnf_rt_table_name(o->table, table,
						       sizeof(table)));
			print_text(";");
			print_counts(ev);
		}
		break;
	case XNF_RTSYNC_RESYNC:
		print_string(PRINT_ANY, "reason", " %s:", ev->reason);
		print_counts(ev);
		break;
	case XNF_RTSYNC_BATCH:
		print_text(":");
		print_counts(ev);
		break;
	case XNF_RTSYNC_OVERRUN:
		print_text(": the kernel dropped route messages; resyncing");
		break;
	case XNF_RTSYNC_NEIGH:
		print_string(PRINT_ANY, "via", ": via %s",
			     fmt_addr(ev->family, ev->addr, addr, sizeof(addr)));
		print_string(PRINT_ANY, "dev", " dev %s",
			     fmt_ifname(ev->ifindex, dev));
		print_uint(PRINT_ANY, "nexthop", " nexthop %llu", ev->nh);
		print_string(PRINT_ANY, "state", " %s",
			     ev->usable ? "valid" : "kernel");
		if (ev->usable)
			print_string(PRINT_ANY, "lladdr", " lladdr %s",
				     fmt_mac(ev->lladdr, mac, sizeof(mac)));
		else
			print_null(PRINT_JSON, "lladdr", NULL);
		break;
	case XNF_RTSYNC_UNSUPPORTED:
		print_string(PRINT_ANY, "dst", ": %s",
			     fmt_prefix(ev->family, ev->addr, ev->plen, addr,
					sizeof(addr)));
		print_string(PRINT_ANY, "reason", " passes to the kernel: %s",
			     ev->reason);
		break;
	case XNF_RTSYNC_CT_FLUSH:
		/* A masquerade's address went: its connections with it. */
		print_string(PRINT_ANY, "dev", ": dev %s",
			     fmt_ifname(ev->ifindex, dev));
		if (ev->family)
			print_string(PRINT_ANY, "addr", " address %s removed",
				     fmt_addr(ev->family, ev->addr, addr,
					      sizeof(addr)));
		else
			print_null(PRINT_ANY, "addr", " down");
		print_uint(PRINT_ANY, "flushed",
			   ": %llu masqueraded connections flushed", ev->flushed);
		if (ev->reason)
			print_string(PRINT_ANY, "reason", "; failed: %s",
				     ev->reason);
		else
			print_null(PRINT_JSON, "reason", NULL);
		break;
	case XNF_RTSYNC_STOPPED:
		if (!o->follow_only)
			print_uint(PRINT_ANY, "routes",
				   ": %llu synced routes stay in place",
				   ev->routes);
		break;
	}
	close_json_object();
	print_nl();
	fflush(stdout);
}

static int parse_protos(const char *list, struct xnf_rtsync_opts *o)
{
	char buf[512], *tok, *save = NULL;
	__u8 p;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (xnf_rt_proto_parse(tok, &p))
			return cli_err("proto '%s': not a number (0-255) or a "
				       "name of /etc/iproute2/rt_protos",
				       tok);
		o->proto[p / 64] |= 1ULL << (p % 64);
	}
	if (!(o->proto[0] | o->proto[1] | o->proto[2] | o->proto[3]))
		return cli_err("proto: give at least one protocol, e.g. "
			       "bgp,static");
	return 0;
}

static int sync_run(struct xnf_rtsync_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	const char *kill_batch = getenv("XNF_RTSYNC_KILL_BATCH");
	struct xnf_dp *dp;
	char err[512] = "";
	__u32 v;
	int ret;

	/* For the tests: die between a batch's writes and its commit. */
	if (kill_batch && !parse_u32(kill_batch, "XNF_RTSYNC_KILL_BATCH", &v))
		o->kill_batch = v;
	/* The sync may start before anything is attached; following
	 * neighbours needs next hops to follow. */
	dp = cli_dp(!o->follow_only);
	if (!dp)
		return -1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A pipe that closes (a test's reader, a journal gone) must not kill
	 * the sync between a batch's writes and its commit. */
	signal(SIGPIPE, SIG_IGN);
	cli_change_started();
	ret = xnf_rtsync_run(dp, o, on_event, o, &stop, err, sizeof(err));
	if (ret == -EEXIST)
		return cli_err("%s: 'xnf route flush' deletes them all, 'xnf "
			       "route show' lists them",
			       err);
	return ret ? cli_err("%s", err) : 0;
}

static int do_sync_flush(int argc, char **argv)
{
	struct xnf_dp *dp;
	char err[512] = "";
	__u32 n;

	if (argc > 0)
		return cli_err("'xnf route sync flush' takes no arguments, not "
			       "'%s'",
			       argv[0]);
	dp = cli_dp(false);
	if (!dp)
		return -1;
	if (xnf_rtsync_flush(dp, &n, err, sizeof(err)))
		return cli_err("%s", err);
	open_json_doc("xnf/sync-flush/1");
	print_uint(PRINT_ANY, "deleted", "%llu synced routes removed", n);
	close_json_object();
	print_nl();
	return 0;
}

static void sync_help(void)
{
	printf("Usage: xnf route sync [ table ID|NAME ] [ proto LIST ] [ window MS ]\n"
	       "                      [ resync SECONDS ] [ rcvbuf BYTES ]\n"
	       "       xnf route sync flush\n"
	       "Mirrors the kernel's routes of a table (default main) into xnf's\n"
	       "tables, in the foreground until SIGINT/SIGTERM; the routes stay when\n"
	       "it stops. Routes added by hand must be deleted first.\n"
	       "  table   the kernel table (number or name of rt_tables)\n"
	       "  proto   the protocols xnf forwards itself, e.g. bgp,static (names\n"
	       "          of rt_protos, or numbers); routes of others pass to the\n"
	       "          kernel. Default: all\n"
	       "  window  ms without a change that end a batch (default %d; a batch\n"
	       "          is written at the latest %d ms after its first change)\n"
	       "  resync  seconds between full resyncs (default %d, 0: never)\n"
	       "  rcvbuf  netlink receive buffer in bytes (default %d MiB)\n"
	       "flush removes every synced route and the sync's registration.\n",
	       XNF_RTSYNC_WINDOW_MS, XNF_RTSYNC_WINDOW_MAX_MS,
	       XNF_RTSYNC_RESYNC_S, XNF_RTSYNC_RCVBUF >> 20);
}

int do_route_sync(int argc, char **argv)
{
	struct xnf_rtsync_opts o = {};
	bool table = false;
	__u32 v;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		sync_help();
		return 0;
	}
	if (argc > 0 && !strcmp(argv[0], "flush")) {
		NEXT_ARG();
		return do_sync_flush(argc, argv);
	}
	while (argc > 0) {
		const char *kw = argv[0];

		if (argc < 2)
			return cli_err("'%s' needs a value; %s", kw, SYNC_HELP);
		if (!strcmp(kw, "table") && !table) {
			if (xnf_rt_table_parse(argv[1], &o.table))
				return cli_err("table '%s': not a number (1-%u) "
					       "or a name of "
					       "/etc/iproute2/rt_tables",
					       argv[1], ~0U);
			table = true;
		} else if (!strcmp(kw, "proto") &&
			   !(o.proto[0] | o.proto[1] | o.proto[2] | o.proto[3])) {
			if (parse_protos(argv[1], &o))
				return -1;
		} else if (!strcmp(kw, "window")) {
			if (parse_u32(argv[1], "window", &o.window_ms))
				return -1;
			if (!o.window_ms || o.window_ms > 10000)
				return cli_err("window: 1 to 10000 ms");
			if (o.window_ms > XNF_RTSYNC_WINDOW_MAX_MS)
				o.window_max_ms = o.window_ms;
		} else if (!strcmp(kw, "resync")) {
			if (parse_u32(argv[1], "resync", &v))
				return -1;
			o.resync_s = v ? v : ~0U;
		} else if (!strcmp(kw, "rcvbuf")) {
			if (parse_u32(argv[1], "rcvbuf", &v))
				return -1;
			if (v < 4096 || v > (1U << 30))
				return cli_err("rcvbuf: 4096 to %u bytes",
					       1U << 30);
			o.rcvbuf = v;
		} else {
			return cli_err("unknown or repeated route sync option "
				       "'%s'; %s",
				       kw, SYNC_HELP);
		}
		argc -= 2;
		argv += 2;
	}
	if (!o.table)
		o.table = 254; /* RT_TABLE_MAIN */
	return sync_run(&o);
}

static int do_neigh_follow(int argc, char **argv)
{
	struct xnf_rtsync_opts o = { .follow_only = true };

	if (argc > 0)
		return cli_err("'xnf neigh follow' takes no arguments, not '%s'",
			       argv[0]);
	return sync_run(&o);
}

static int do_neigh_help(int argc, char **argv)
{
	printf("Usage: xnf neigh follow\n"
	       "       xnf neigh help\n"
	       "follow  keeps every next hop through a gateway in step with the\n"
	       "        kernel's neighbour entry for it, in the foreground until\n"
	       "        SIGINT/SIGTERM: a new MAC is written into the next hop (every\n"
	       "        route through it follows at once); while the gateway has no\n"
	       "        usable entry its packets pass to the kernel, which resolves\n"
	       "        it. For routes added by hand: 'xnf route sync' does this\n"
	       "        itself.\n");
	return 0;
}

int do_neigh(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "help", do_neigh_help },
		{ "follow", do_neigh_follow },
		{ NULL, NULL },
	};

	return cli_dispatch(cmds, "neigh", argc, argv);
}
