// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf monitor [last N] [once]
 *
 * The changes made to the instance as they happen, in the manner of
 * `ip monitor`: every command that changed it or tried to (attach,
 * detach, chain set, route, fw, fdb, xconnect, config set, apply, a
 * batch's lines, stats reset, the start and end of a route sync, a
 * neighbour follower or a worker), every batch a route sync wrote and
 * every next hop that followed its neighbour, each with its time, who
 * made it (pid, uid, login uid) and how it ended.
 *
 * It reads the instance's change log (xnf_changes: the last
 * XNF_CHANGES_MAX, see lib/changes.c) every POLL_MS, taking no lock: one
 * read of xnf_config per poll while nothing changes. `last N` prints the
 * last N recorded before it starts; `once` prints what is recorded and
 * exits. When more changes came than the log holds between two reads, it
 * says how many it missed (syslog has them all). The instance may be
 * destroyed and made again: the monitor says so and follows the new one.
 * SIGINT and SIGTERM end it with status 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"

#define POLL_MS	   200
#define AUID_UNSET 4294967295u

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* The instance the monitor reads: its change log's pin, by inode, tells
 * a destroyed and remade instance from the same one. */
struct watched {
	struct xnf_dp *dp;
	ino_t ino;
	__u64 next; /* the first change not printed yet */
};

static ino_t log_inode(void)
{
	char path[XNF_ROOT_MAX + 64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/tables/%s", cli.root,
		 XNF_MAP_STR(XNF_MAP_CHANGES));
	return stat(path, &st) ? 0 : st.st_ino;
}

static void instance_line(bool present)
{
	open_json_doc("xnf/change/1");
	print_string(PRINT_JSON, "event", NULL, "instance");
	print_bool(PRINT_JSON, "present", NULL, present);
	print_string(PRINT_ANY, "root",
		     present ? "instance at %s: found" : "instance at %s: gone",
		     cli.root);
	print_nl();
	close_json_object();
}

static void lost_line(__u64 first, __u64 n)
{
	open_json_doc("xnf/change/1");
	print_string(PRINT_JSON, "event", NULL, "lost");
	print_uint(PRINT_ANY, "first_seq", "#%llu", first);
	print_uint(PRINT_ANY, "count",
		   ": %llu changes came and went before they could be read "
		   "(syslog has them)",
		   n);
	print_nl();
	close_json_object();
}

static void change_line(const struct xnf_change *c)
{
	char when[64], iso[48], zone[8];
	time_t sec = c->time / 1000000000ull;
	unsigned long ns = c->time % 1000000000ull;
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when, sizeof(when), "%s.%09luZ", iso, ns);
	open_json_doc("xnf/change/1");
	print_string(PRINT_JSON, "event", NULL, "change");
	print_uint(PRINT_JSON, "seq", NULL, c->seq);
	print_string(PRINT_JSON, "time", NULL, when);
	/* Text: local time to the millisecond, as journalctl shows it. */
	localtime_r(&sec, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	print_text("%s.%03lu%s #%llu ", iso, ns / 1000000, zone,
		   (unsigned long long)c->seq);
	print_uint(PRINT_ANY, "pid", "pid %llu ", c->pid);
	print_uint(PRINT_ANY, "uid", "uid %llu", c->uid);
	if (c->auid == AUID_UNSET)
		print_null(PRINT_JSON, "login_uid", NULL);
	else if (c->auid == c->uid)
		print_uint(PRINT_JSON, "login_uid", NULL, c->auid);
	else
		print_uint(PRINT_ANY, "login_uid", " login uid %llu", c->auid);
	print_string(PRINT_ANY, "command", ": %s", c->cmd);
	print_string(PRINT_ANY, "result", ": %s", c->failed ? "failed" : "ok");
	print_string(c->msg[0] ? PRINT_ANY : PRINT_JSON, "message", ": %s",
		     c->msg);
	print_nl();
	close_json_object();
}

/* Opens the instance when it is there and was not (or is another one):
 * true when @w can be read. */
static bool instance_check(struct watched *w, bool *said_gone)
{
	char err[512];
	ino_t ino = log_inode();

	if (w->dp && ino == w->ino)
		return true;
	if (w->dp) {
		xnf_dp_close(w->dp);
		w->dp = NULL;
		if (!ino) {
			instance_line(false);
			*said_gone = true;
		}
	}
	if (!ino ||
	    xnf_open(cli.root, XNF_OPEN_READ, 0, &w->dp, err, sizeof(err))) {
		w->dp = NULL;
		return false;
	}
	/* Another instance, or the one there at start: its changes from
	 * the first, or from where `last N` asks. */
	if (w->ino || *said_gone) {
		instance_line(true);
		w->next = 1;
	}
	w->ino = ino;
	*said_gone = false;
	return true;
}

/* Prints the changes from w->next to the last recorded one. */
static int print_new(struct watched *w)
{
	struct xnf_change c;
	__u64 last, lost = 0, first = 0;
	int err;

	err = xnf_change_seq(w->dp, &last);
	if (err)
		return err;
	for (; w->next <= last && !stop; w->next++) {
		err = xnf_change_read(w->dp, w->next, &c);
		if (err == -ESTALE) {
			first = first ?: w->next;
			lost++;
			continue;
		}
		if (err)
			return err;
		if (lost)
			lost_line(first, lost);
		lost = first = 0;
		change_line(&c);
	}
	if (lost)
		lost_line(first, lost);
	fflush(stdout);
	return 0;
}

static int monitor_help(void)
{
	printf("Usage: xnf monitor [ last N ] [ once ]\n"
	       "Prints every change made to the instance as it happens: the\n"
	       "command (or a route sync's batch, a next hop that followed its\n"
	       "neighbour), when, who (pid, uid, login uid) and how it ended,\n"
	       "until SIGINT or SIGTERM. The instance keeps the last %d changes:\n"
	       "  last N  print the last N recorded first\n"
	       "  once    print what is recorded and exit\n"
	       "Every change also goes to syslog (the journal): journalctl -t xnf.\n",
	       XNF_CHANGES_MAX);
	return 0;
}

int do_monitor(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct watched w = {};
	bool once = false, said_gone = false;
	__u32 last_n = 0;
	__u64 seq = 0;
	int ret = 0;

	for (; argc > 0; NEXT_ARG()) {
		if (!strcmp(argv[0], "help"))
			return monitor_help();
		if (!strcmp(argv[0], "once")) {
			once = true;
		} else if (!strcmp(argv[0], "last")) {
			NEXT_ARG();
			REQ_ARGS(1, "monitor last");
			if (parse_u32(argv[0], "last", &last_n))
				return -1;
		} else {
			return cli_err("unknown monitor argument '%s'; try "
				       "'xnf monitor help'",
				       argv[0]);
		}
	}
	if (once && !last_n)
		last_n = XNF_CHANGES_MAX;
	if (!instance_check(&w, &said_gone)) {
		if (once)
			return cli_err("no xnf instance at %s: nothing has "
				       "changed yet",
				       cli.root);
		/* Waits for one: it says so once it is there. */
		said_gone = true;
		instance_line(false);
	} else {
		ret = xnf_change_seq(w.dp, &seq);
		if (ret)
			goto out;
		w.next = seq + 1 > last_n ? seq + 1 - last_n : 1;
	}
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) {
		ret = cli_err("cannot catch SIGINT and SIGTERM: %s",
			      strerror(errno));
		goto out;
	}
	do {
		if (instance_check(&w, &said_gone)) {
			ret = print_new(&w);
			if (ret) {
				ret = cli_err("cannot read the change log of "
					      "%s: %s",
					      cli.root, strerror(-ret));
				break;
			}
		}
		if (!once && !stop)
			usleep(POLL_MS * 1000);
	} while (!once && !stop);
out:
	xnf_dp_close(w.dp);
	return ret ? -1 : 0;
}
