// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf monitor [changes | log [syslog]] [last N] [once]
 *
 * The changes made to the instance as they happen, in the manner of
 * `ip monitor`: every command that changed it or tried to (attach,
 * detach, chain set, route, fw, fdb, xconnect, config set, apply, a
 * batch's lines, stats reset, the start and end of a route sync, a
 * neighbour follower or a worker), every batch a route sync wrote and
 * every next hop that followed its neighbour, each with its time, who
 * made it (pid, uid, login uid) and how it ended; and the packet log's
 * records (firewall rules with `log`, sampled reasons: docs/logging.md),
 * both in the order of their time. `changes` prints only the changes,
 * `log` only the packet log; `log syslog` sends each record to syslog
 * instead of stdout (what xnf-log.service runs).
 *
 * It reads the instance's change log (xnf_changes: the last
 * XNF_CHANGES_MAX, see lib/changes.c) and the packet log's ring (the last
 * XNF_LOG_SLOTS records, lib/pktlog.c) every POLL_MS, taking no lock: one
 * read of xnf_config and one of the log's sequence while nothing changes.
 * `last N` prints the last N changes recorded before it starts; `once`
 * prints what is recorded (the ring's records included) and exits. When
 * more came than a log holds between two reads, it says how many it
 * missed (syslog has every change; lost records are gone). The instance
 * may be destroyed and made again: the monitor says so and follows the
 * new one. SIGINT and SIGTERM end it with status 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/stat.h>

#include "cli.h"
#include "pktlog.h"

/* A rate-limited log writes at most what its limits allow; 1024 slots
 * read every 100 ms keep up with 10,000 records a second. */
#define POLL_MS	   100
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
	__u64 next;	/* the first change not printed yet */
	__u64 log_next; /* the packet log's next record (xnf_log_read) */
};

/* What the monitor prints. */
enum {
	MON_CHANGES = 1 << 0,
	MON_LOG = 1 << 1,
};

/* One poll's changes and records, put in the order of their time. */
struct mon_event {
	__u64 time; /* ns since the epoch */
	__u32 order;
	bool is_log;
	union {
		struct xnf_change c;
		struct xnf_log_rec r;
	};
};

struct mon_batch {
	struct mon_event *ev;
	size_t n, cap;
	__u64 mono_to_real; /* add to bpf_ktime_get_ns() for wall time */
};

struct monitor {
	unsigned int what; /* MON_* */
	bool syslog;
	bool once;
	struct mon_batch b;
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

/* @ns since the epoch: ISO 8601 in UTC to the ns (JSON), and local time
 * to the ms (text, as journalctl shows it). */
static void time_fmt(__u64 ns, char iso_ns[64], char local[64])
{
	time_t sec = ns / 1000000000ull;
	unsigned long sub = ns % 1000000000ull;
	char t[48], zone[8];
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(iso_ns, 64, "%s.%09luZ", t, sub);
	localtime_r(&sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	snprintf(local, 64, "%s.%03lu%s", t, sub / 1000000, zone);
}

static void change_line(const struct xnf_change *c)
{
	char when[64], local[64];

	time_fmt(c->time, when, local);
	open_json_doc("xnf/change/1");
	print_string(PRINT_JSON, "event", NULL, "change");
	print_uint(PRINT_JSON, "seq", NULL, c->seq);
	print_string(PRINT_JSON, "time", NULL, when);
	print_text("%s #%llu ", local, (unsigned long long)c->seq);
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

/* nft's names of the TCP flags, in nft's order. */
static const char *const tcp_flag_names[8] = {
	"fin", "syn", "rst", "psh", "ack", "urg", "ecn", "cwr",
};

/* What became of a logged packet, as xnf_log_format() ends its line: a
 * rule's action (its drop carries fw_deny), or a reason's drop or pass. */
static const char *log_verdict(const struct xnf_log_rec *r)
{
	if (!xnf_log_source_is_reason(r->source))
		return r->reason == XNF_R_FW_DENY ? "drop" : "allow";
	return r->verdict == XNF_V_DROP ? "drop" : "pass";
}

static void print_opt_uint(const char *key, bool have, __u64 v)
{
	if (have)
		print_uint(PRINT_JSON, key, NULL, v);
	else
		print_null(PRINT_JSON, key, NULL);
}

static void print_opt_string(const char *key, const char *v)
{
	if (v)
		print_string(PRINT_JSON, key, NULL, v);
	else
		print_null(PRINT_JSON, key, NULL);
}

/* One packet log record: its nf_log line in text; in JSON its fields
 * (xnf/log/1) with the line. @mono_to_real: see struct mon_batch. */
static void log_line(const struct xnf_log_rec *r, __u64 mono_to_real,
		     const struct monitor *m)
{
	char line[XNF_LOG_LINE_MAX], when[64], local[64], dev[IF_NAMESIZE];
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], mac[32], flags[48];
	bool ip = r->family == XNF_AF_INET || r->family == XNF_AF_INET6;
	bool reason = xnf_log_source_is_reason(r->source);
	bool ports = r->pkt_flags & XNF_PKT_F_PORTS;
	bool icmp = r->pkt_flags & XNF_PKT_F_ICMP;
	size_t i, n = 0;

	xnf_log_format(r, line, sizeof(line));
	if (m->syslog) {
		syslog(LOG_WARNING, "%s", line);
		return;
	}
	time_fmt(r->ts + mono_to_real, when, local);
	flags[0] = '\0';
	for (i = 0; i < 8; i++)
		if (r->tcp_flags & (1u << i))
			n += snprintf(flags + n, sizeof(flags) - n, "%s%s",
				      n ? "," : "", tcp_flag_names[i]);
	open_json_doc("xnf/log/1");
	print_string(PRINT_JSON, "event", NULL, "log");
	print_uint(PRINT_JSON, "seq", NULL, r->seq);
	print_string(PRINT_JSON, "time", NULL, when);
	print_text("%s log: ", local);
	print_string(PRINT_JSON, "source", NULL, reason ? "reason" : "rule");
	print_opt_uint("prio", !reason, r->prio);
	print_opt_string("reason", reason || r->reason == XNF_R_FW_DENY ?
					   xnf_reason_name(r->reason) :
					   NULL);
	print_string(PRINT_JSON, "prefix", NULL, r->prefix);
	print_string(PRINT_JSON, "verdict", NULL, log_verdict(r));
	print_string(PRINT_JSON, "in", NULL, fmt_ifname(r->ifindex, dev));
	print_uint(PRINT_JSON, "ifindex", NULL, r->ifindex);
	print_uint(PRINT_JSON, "len", NULL, r->len);
	print_string(PRINT_JSON, "smac", NULL,
		     fmt_mac(r->smac, mac, sizeof(mac)));
	print_string(PRINT_JSON, "dmac", NULL,
		     fmt_mac(r->dmac, mac, sizeof(mac)));
	print_uint(PRINT_JSON, "eth_proto", NULL, ntohs(r->eth_proto));
	print_opt_string("family", !ip			    ? NULL :
				   r->family == XNF_AF_INET ? "ipv4" :
							      "ipv6");
	print_opt_uint("proto", ip, r->l4_proto);
	print_opt_string("src",
			 ip ? fmt_addr(r->family, r->src, src, sizeof(src)) :
			      NULL);
	print_opt_string("dst",
			 ip ? fmt_addr(r->family, r->dst, dst, sizeof(dst)) :
			      NULL);
	print_opt_uint("sport", ip && ports, ntohs(r->sport));
	print_opt_uint("dport", ip && ports, ntohs(r->dport));
	print_opt_uint("ttl", ip, r->ttl);
	print_opt_string("tcp_flags",
			 r->pkt_flags & XNF_PKT_F_TCP ? flags : NULL);
	print_opt_uint("icmp_type", ip && icmp, r->icmp_type);
	print_opt_uint("icmp_code", ip && icmp, r->icmp_code);
	print_string(PRINT_ANY, "line", "%s", line);
	print_nl();
	close_json_object();
}

static void log_lost_line(__u64 n, const struct monitor *m)
{
	if (m->syslog) {
		syslog(LOG_WARNING,
		       "packet log: %llu records were overwritten before they "
		       "could be read",
		       (unsigned long long)n);
		return;
	}
	open_json_doc("xnf/log/1");
	print_string(PRINT_JSON, "event", NULL, "lost");
	print_uint(PRINT_ANY, "count",
		   "log: %llu records were overwritten before they could be "
		   "read",
		   n);
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
		w->log_next = 0;
	}
	w->ino = ino;
	*said_gone = false;
	return true;
}

static struct mon_event *batch_add(struct mon_batch *b)
{
	struct mon_event *ev;
	size_t cap;

	if (b->n == b->cap) {
		cap = b->cap ? 2 * b->cap : 64;
		ev = realloc(b->ev, cap * sizeof(*ev));
		if (!ev)
			return NULL;
		b->ev = ev;
		b->cap = cap;
	}
	ev = &b->ev[b->n];
	ev->order = b->n++;
	return ev;
}

static int log_collect(const struct xnf_log_rec *r, void *ctx)
{
	struct mon_batch *b = ctx;
	struct mon_event *ev = batch_add(b);

	if (!ev)
		return -ENOMEM;
	ev->is_log = true;
	ev->r = *r;
	ev->time = r->ts + b->mono_to_real;
	return 0;
}

static int event_cmp(const void *a, const void *b)
{
	const struct mon_event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Prints the changes from w->next to the last recorded one and the packet
 * log's records from w->log_next on, in the order of their time. */
static int print_new(struct watched *w, struct monitor *m)
{
	struct mon_batch *b = &m->b;
	struct mon_event *ev;
	__u64 last, lost = 0, first = 0, log_lost = 0;
	bool catchup = w->log_next == 0;
	size_t i;
	int err;

	b->n = 0;
	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC. */
	b->mono_to_real = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	if (m->what & MON_CHANGES) {
		err = xnf_change_seq(w->dp, &last);
		if (err)
			return err;
		for (; w->next <= last && !stop; w->next++) {
			ev = batch_add(b);
			if (!ev)
				return -ENOMEM;
			err = xnf_change_read(w->dp, w->next, &ev->c);
			if (err == -ESTALE) {
				b->n--;
				first = first ?: w->next;
				lost++;
				continue;
			}
			if (err)
				return err;
			/* A run of lost changes is said where it was. */
			if (lost)
				lost_line(first, lost);
			lost = first = 0;
			ev->is_log = false;
			ev->time = ev->c.time;
		}
		if (lost)
			lost_line(first, lost);
	}
	if (m->what & MON_LOG) {
		err = xnf_log_read(w->dp, &w->log_next, &log_lost, log_collect,
				   b);
		if (err < 0)
			return err;
		/* What an instance logged before the monitor came is no
		 * loss of the monitor's: the first read from the ring's
		 * start (once, a new instance) does not count it. */
		if (log_lost && !catchup)
			log_lost_line(log_lost, m);
	}
	qsort(b->ev, b->n, sizeof(*b->ev), event_cmp);
	for (i = 0; i < b->n; i++) {
		if (b->ev[i].is_log)
			log_line(&b->ev[i].r, b->mono_to_real, m);
		else
			change_line(&b->ev[i].c);
	}
	fflush(stdout);
	return 0;
}

static int monitor_help(void)
{
	printf("Usage: xnf monitor [ changes | log [ syslog ] ] [ last N ] [ once ]\n"
	       "Prints every change made to the instance as it happens: the\n"
	       "command (or a route sync's batch, a next hop that followed its\n"
	       "neighbour), when, who (pid, uid, login uid) and how it ended;\n"
	       "and the packet log's records (rules with 'log', reasons of\n"
	       "'config set log_reasons'), as nf_log prints a packet; both in\n"
	       "the order of their time, until SIGINT or SIGTERM.\n"
	       "  changes  only the changes\n"
	       "  log      only the packet log\n"
	       "  syslog   (with log) each record to syslog, priority warning,\n"
	       "           instead of stdout: what xnf-log.service runs\n"
	       "  last N   print the last N changes recorded first\n"
	       "  once     print what is recorded and exit\n"
	       "The instance keeps the last %d changes and the last %d records.\n"
	       "Every change also goes to syslog (the journal): journalctl -t xnf.\n",
	       XNF_CHANGES_MAX, XNF_LOG_SLOTS);
	return 0;
}

int do_monitor(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct monitor m = { .what = MON_CHANGES | MON_LOG };
	struct watched w = {};
	bool said_gone = false;
	__u32 last_n = 0;
	__u64 seq = 0;
	int ret = 0;

	for (; argc > 0; NEXT_ARG()) {
		if (!strcmp(argv[0], "help"))
			return monitor_help();
		if (!strcmp(argv[0], "once")) {
			m.once = true;
		} else if (!strcmp(argv[0], "changes") ||
			   !strcmp(argv[0], "log")) {
			if (m.what != (MON_CHANGES | MON_LOG))
				return cli_err("say changes or log, not both: "
					       "without either the monitor "
					       "prints both");
			m.what = argv[0][0] == 'c' ? MON_CHANGES : MON_LOG;
		} else if (!strcmp(argv[0], "syslog")) {
			m.syslog = true;
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
	if (m.syslog && m.what != MON_LOG)
		return cli_err("syslog sends the packet log there (every change "
			       "goes to syslog already): say 'xnf monitor log "
			       "syslog'");
	if (last_n && !(m.what & MON_CHANGES))
		return cli_err("last N counts changes: 'xnf monitor log' prints "
			       "records as they come (with once: the ones the "
			       "ring holds)");
	if (m.syslog)
		openlog("xnf", LOG_PID, LOG_DAEMON);
	if (m.once && !last_n)
		last_n = XNF_CHANGES_MAX;
	if (!instance_check(&w, &said_gone)) {
		if (m.once)
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
		/* The records from now on; once: those the ring holds. */
		w.log_next = m.once ? 0 : ~0ULL;
	}
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) {
		ret = cli_err("cannot catch SIGINT and SIGTERM: %s",
			      strerror(errno));
		goto out;
	}
	do {
		if (instance_check(&w, &said_gone)) {
			ret = print_new(&w, &m);
			if (ret) {
				ret = cli_err("cannot read the change log or the "
					      "packet log of %s: %s",
					      cli.root, strerror(-ret));
				break;
			}
		}
		if (!m.once && !stop)
			usleep(POLL_MS * 1000);
	} while (!m.once && !stop);
out:
	free(m.b.ev);
	xnf_dp_close(w.dp);
	if (m.syslog)
		closelog();
	return ret ? -1 : 0;
}
