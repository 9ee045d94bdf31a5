// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf trace: what the chain did to the packets that match, one block per
 * packet as it happens (nft monitor trace, VPP's trace), until a count of
 * packets or a timeout, or SIGINT/SIGTERM.
 *
 * Parse the match (the firewall's words) and the bounds, arm the trace
 * (lib/trace.c), print its records. The instance lock is held only to arm
 * and to disarm: other commands run while a trace does. The library
 * records the start and the end in the change log.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <linux/if_ether.h>

#include "cli.h"
#include "trace.h"

#define TRACE_HELP "see 'xnf trace help'"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void trace_help(void)
{
	printf("Usage: xnf trace [proto PROTO] [src PREFIX] [dst PREFIX] [sport PORTS]\n"
	       "                 [dport PORTS] [iif DEV] [{ icmp | icmpv6 } type TYPE [code CODE]]\n"
	       "                 [tcp flags FLAGS [/ FLAGS]] [count N] [timeout SECONDS]\n"
	       "PROTO := { tcp | udp | sctp | icmp | icmpv6 | NUMBER }\n"
	       "FLAGS := FLAG[,FLAG...]\n"
	       "FLAG := { fin | syn | rst | psh | ack | urg | ecn | cwr }\n"
	       "\n"
	       "Shows what every NF of the chain did to the packets that match (the\n"
	       "words of 'xnf fw add'; no match: every packet), one block per packet\n"
	       "as it happens, until N packets were traced or SECONDS passed (without\n"
	       "either: count %d, timeout %d; 0: no bound on that axis, but one is\n"
	       "needed), or SIGINT/SIGTERM. One trace runs at a time per instance.\n"
	       "With -j: one xnf/trace/1 document per packet, and one at the end.\n",
	       XNF_TRACE_COUNT, XNF_TRACE_TIMEOUT_S);
}

static const char *family_name(__u8 family)
{
	return family == XNF_AF_INET  ? "ipv4" :
	       family == XNF_AF_INET6 ? "ipv6" :
					NULL;
}

static const char *action_name(__u8 action)
{
	static const char *const names[] = { "aborted", "drop", "pass", "tx",
					     "redirect" };

	return action < 5 ? names[action] : "?";
}

static const char *fc_name(__u8 fc)
{
	return fc == XNF_TRACE_FC_HIT  ? "hit" :
	       fc == XNF_TRACE_FC_MISS ? "miss" :
					 NULL;
}

/* "192.0.2.1:80", "[2001:db8::1]:80", or the address alone. */
static const char *fmt_endpoint(int family, const __u8 *addr, __be16 port,
				bool ports, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN + 2];

	fmt_addr(family, addr, a, sizeof(a));
	if (!ports)
		snprintf(buf, len, "%s", a);
	else if (family == XNF_AF_INET6)
		snprintf(buf, len, "[%s]:%u", a, ntohs(port));
	else
		snprintf(buf, len, "%s:%u", a, ntohs(port));
	return buf;
}

/* CLOCK_REALTIME of @ts (bpf_ktime_get_ns: CLOCK_MONOTONIC), ISO 8601. */
static const char *fmt_time(__u64 ts, char *buf, size_t len)
{
	struct timespec mono, real;
	char sec[32];
	__u64 ns;
	time_t s;
	struct tm tm;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	ns = (__u64)real.tv_sec * 1000000000ull + real.tv_nsec -
	     ((__u64)mono.tv_sec * 1000000000ull + mono.tv_nsec - ts);
	s = ns / 1000000000ull;
	gmtime_r(&s, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%.20s.%06uZ", sec,
		 (unsigned int)(ns % 1000000000ull / 1000));
	return buf;
}

/* What the entry parsed: "ipv4 icmp 192.0.2.2 > 198.51.100.2 echo-request". */
static void print_packet(const struct xnf_trace_rec *r)
{
	bool ports = r->pkt_flags & XNF_PKT_F_PORTS;
	bool v6 = r->family == XNF_AF_INET6;
	char a[80], b[80], name[IF_NAMESIZE], mac[32];

	print_string(PRINT_ANY, "in", "in %s ", fmt_ifname(r->ifindex, name));
	print_uint(PRINT_ANY, "queue", "queue %llu ", r->rx_queue);
	print_uint(PRINT_ANY, "cpu", "cpu %llu ", r->cpu);
	print_uint(PRINT_ANY, "len", "len %llu: ", r->len);
	print_uint(PRINT_JSON, "eth_proto", NULL, ntohs(r->eth_proto));
	print_string(PRINT_JSON, "smac", NULL,
		     fmt_mac(r->smac, mac, sizeof(mac)));
	print_string(PRINT_JSON, "dmac", NULL,
		     fmt_mac(r->dmac, mac, sizeof(mac)));
	if (!family_name(r->family)) {
		print_null(PRINT_JSON, "family", NULL);
		print_text("ethertype 0x%04x %s > ", ntohs(r->eth_proto),
			   fmt_mac(r->smac, a, sizeof(a)));
		print_text("%s", fmt_mac(r->dmac, a, sizeof(a)));
		print_null(PRINT_JSON, "proto", NULL);
		print_null(PRINT_JSON, "src", NULL);
		print_null(PRINT_JSON, "dst", NULL);
	} else {
		print_string(PRINT_ANY, "family", "%s ", family_name(r->family));
		print_string(PRINT_ANY, "proto", "%s ",
			     fmt_proto(r->l4_proto, a, sizeof(a)));
		print_string(PRINT_JSON, "src", NULL,
			     fmt_addr(r->family, r->src, a, sizeof(a)));
		print_string(PRINT_JSON, "dst", NULL,
			     fmt_addr(r->family, r->dst, a, sizeof(a)));
		print_text("%s > %s",
			   fmt_endpoint(r->family, r->src, r->sport, ports, a,
					sizeof(a)),
			   fmt_endpoint(r->family, r->dst, r->dport, ports, b,
					sizeof(b)));
	}
	if (ports) {
		print_uint(PRINT_JSON, "sport", NULL, ntohs(r->sport));
		print_uint(PRINT_JSON, "dport", NULL, ntohs(r->dport));
	} else {
		print_null(PRINT_JSON, "sport", NULL);
		print_null(PRINT_JSON, "dport", NULL);
	}
	if (r->pkt_flags & XNF_PKT_F_ICMP) {
		print_string(PRINT_ANY, "icmp_type", " %s",
			     cli_icmp_type_text(v6, r->icmp_type, a, sizeof(a)));
		print_uint(r->icmp_code ? PRINT_ANY : PRINT_JSON, "icmp_code",
			   " code %llu", r->icmp_code);
	} else {
		print_null(PRINT_JSON, "icmp_type", NULL);
		print_null(PRINT_JSON, "icmp_code", NULL);
	}
	if (r->pkt_flags & XNF_PKT_F_TCP)
		print_string(PRINT_ANY, "tcp_flags", " flags %s",
			     cli_tcp_flags_text(r->tcp_flags, a, sizeof(a)));
	else
		print_null(PRINT_JSON, "tcp_flags", NULL);
	if (r->pkt_flags & XNF_PKT_F_FRAG)
		print_text(" fragment");
	print_bool(PRINT_JSON, "fragment", NULL, r->pkt_flags & XNF_PKT_F_FRAG);
	print_nl();
}

/* ", " between the details of a step's text line. */
static void sep(bool *first)
{
	if (!*first)
		print_text(", ");
	*first = false;
}

/* A part of the route phrase: " " inside it, ", " before it. */
static void phrase_part(bool *first, bool *phrase)
{
	if (*phrase)
		print_text(" ");
	else
		sep(first);
	*phrase = true;
}

static void print_step(const struct xnf_trace_step *s)
{
	bool first = true, phrase = false,
	     decided = s->flags & (XNF_TRACE_S_RULE | XNF_TRACE_S_DEFAULT);
	bool gw = s->flags & XNF_TRACE_S_GW;
	char a[80], b[80], name[IF_NAMESIZE];
	const char *nf = xnf_nf_name(s->nf) ?: "?";

	open_json_object(NULL);
	print_text("  %s: ", nf);
	print_string(PRINT_JSON, "nf", NULL, nf);
	print_string(PRINT_JSON, "verdict", NULL, xnf_verdict_name(s->verdict));
	print_string(PRINT_JSON, "reason", NULL, xnf_reason_name(s->reason));

	if (s->flags & XNF_TRACE_S_CT) {
		sep(&first);
		print_string(PRINT_ANY, "ct_state", "%s",
			     cli_ct_state_text(s->ct_state));
		print_string(PRINT_ANY, "ct_dir", " %s",
			     s->ct_dir == XNF_CT_DIR_REPLY ? "reply" :
							     "original");
	} else {
		print_null(PRINT_JSON, "ct_state", NULL);
		print_null(PRINT_JSON, "ct_dir", NULL);
	}
	if (s->flags & XNF_TRACE_S_NAT) {
		sep(&first);
		print_text("-> src %s dst %s",
			   fmt_endpoint(s->family, s->addr, s->port, s->port, a,
					sizeof(a)),
			   fmt_endpoint(s->family, s->gw, s->port2, s->port2, b,
					sizeof(b)));
		open_json_object("nat");
		print_string(PRINT_JSON, "src", NULL,
			     fmt_addr(s->family, s->addr, a, sizeof(a)));
		print_uint(PRINT_JSON, "sport", NULL, ntohs(s->port));
		print_string(PRINT_JSON, "dst", NULL,
			     fmt_addr(s->family, s->gw, a, sizeof(a)));
		print_uint(PRINT_JSON, "dport", NULL, ntohs(s->port2));
		close_json_object();
	} else {
		print_null(PRINT_JSON, "nat", NULL);
	}
	if (s->flags & XNF_TRACE_S_RULE) {
		sep(&first);
		print_uint(PRINT_ANY, "rule", "rule prio %llu", s->rule);
		print_text(" (%s)", s->verdict == XNF_V_DROP ? "drop" : "allow");
	} else {
		print_null(PRINT_JSON, "rule", NULL);
	}
	if (s->flags & XNF_TRACE_S_DEFAULT) {
		sep(&first);
		print_text("default policy (%s)",
			   s->verdict == XNF_V_DROP ? "drop" : "allow");
	}
	print_bool(PRINT_JSON, "default_policy", NULL,
		   s->flags & XNF_TRACE_S_DEFAULT);
	/* "route P via G dev D mac M": one phrase, of the parts there are. */
	if (s->flags & XNF_TRACE_S_ROUTE) {
		phrase_part(&first, &phrase);
		print_string(PRINT_ANY, "route", "route %s",
			     fmt_prefix(s->family, s->addr, s->plen, a,
					sizeof(a)));
	} else {
		print_null(PRINT_JSON, "route", NULL);
	}
	if (gw) {
		phrase_part(&first, &phrase);
		print_string(PRINT_ANY, "via", "via %s",
			     fmt_addr(s->family, s->gw, a, sizeof(a)));
	} else {
		print_null(PRINT_JSON, "via", NULL);
	}
	if ((s->flags & XNF_TRACE_S_EGRESS) && s->nf == XNF_NF_XSK) {
		phrase_part(&first, &phrase);
		print_uint(PRINT_ANY, "queue", "queue %llu", s->ifindex);
		print_null(PRINT_JSON, "dev", NULL);
	} else if (s->flags & XNF_TRACE_S_EGRESS) {
		phrase_part(&first, &phrase);
		print_string(PRINT_ANY, "dev", "dev %s",
			     fmt_ifname(s->ifindex, name));
		print_null(PRINT_JSON, "queue", NULL);
	} else {
		print_null(PRINT_JSON, "dev", NULL);
		print_null(PRINT_JSON, "queue", NULL);
	}
	/* gw holds the MAC only when it holds no next hop's address. */
	if ((s->flags & XNF_TRACE_S_MAC) && !gw) {
		phrase_part(&first, &phrase);
		print_string(PRINT_ANY, "mac", "mac %s",
			     fmt_mac(s->gw, a, sizeof(a)));
	} else {
		print_null(PRINT_JSON, "mac", NULL);
	}
	if (fc_name(s->fc)) {
		sep(&first);
		print_string(PRINT_ANY, "flow_cache", "flow cache %s",
			     fc_name(s->fc));
	} else {
		print_null(PRINT_JSON, "flow_cache", NULL);
	}
	if (!decided && (s->verdict == XNF_V_DROP ||
			 (s->verdict == XNF_V_PASS && s->reason))) {
		sep(&first);
		print_text("%s (%s)", s->verdict == XNF_V_DROP ? "drop" : "pass",
			   xnf_reason_name(s->reason));
	}
	if (first)
		print_text("no change");
	print_nl();
	close_json_object();
}

static void print_verdict(const struct xnf_trace_rec *r)
{
	char name[IF_NAMESIZE];

	print_string(PRINT_JSON, "verdict", NULL, xnf_verdict_name(r->verdict));
	print_string(PRINT_JSON, "reason", NULL, xnf_reason_name(r->reason));
	print_string(PRINT_JSON, "action", NULL, action_name(r->action));
	if (r->verdict == XNF_V_REDIRECT)
		print_string(PRINT_JSON, "out", NULL,
			     fmt_ifname(r->egress, name));
	else
		print_null(PRINT_JSON, "out", NULL);
	if (r->verdict == XNF_V_XSK)
		print_uint(PRINT_JSON, "out_queue", NULL, r->egress);
	else
		print_null(PRINT_JSON, "out_queue", NULL);

	print_text("  verdict: ");
	switch (r->verdict) {
	case XNF_V_REDIRECT:
		print_text("redirect dev %s", fmt_ifname(r->egress, name));
		break;
	case XNF_V_DROP:
		print_text("drop (%s)", xnf_reason_name(r->reason));
		break;
	case XNF_V_XSK:
		print_text("to AF_XDP socket, queue %u (worker)", r->egress);
		break;
	case XNF_V_FLOOD:
		print_text("flood");
		break;
	default:
		if (r->reason)
			print_text("pass to the kernel (%s)",
				   xnf_reason_name(r->reason));
		else
			print_text("pass to the kernel");
	}
	if (r->action != XDP_PASS && r->action != XDP_DROP &&
	    r->action != XDP_REDIRECT)
		print_text(" [%s]", action_name(r->action));
	print_nl();
}

static int print_rec(const struct xnf_trace_rec *r, void *ctx)
{
	char t[40];
	int i;

	open_json_doc("xnf/trace/1");
	print_string(PRINT_JSON, "event", NULL, "packet");
	print_uint(PRINT_ANY, "trace", "trace %llu ", r->id);
	print_uint(PRINT_ANY, "packet", "packet %llu: ", r->seq);
	print_string(PRINT_JSON, "time", NULL, fmt_time(r->ts, t, sizeof(t)));
	print_packet(r);
	open_json_array("steps");
	for (i = 0; i < r->nsteps && i < XNF_TRACE_STEPS; i++)
		print_step(&r->step[i]);
	close_json_array();
	print_verdict(r);
	close_json_object();
	fflush(stdout);
	/* The reader went away (SIGPIPE is ignored): stop tracing. */
	return ferror(stdout) ? -EPIPE : 0;
}

/* "count N" and "timeout S", wherever they are: out of @argv, the rest
 * (the match) kept in order. */
static int parse_bounds(int *argc, char **argv, struct xnf_trace_opts *o)
{
	bool count = false, timeout = false;
	int i, n = 0;
	__u32 v;

	for (i = 0; i < *argc; i++) {
		bool is_count = !strcmp(argv[i], "count");

		if (!is_count && strcmp(argv[i], "timeout")) {
			argv[n++] = argv[i];
			continue;
		}
		if ((is_count && count) || (!is_count && timeout))
			return cli_err("'%s' given twice; %s", argv[i],
				       TRACE_HELP);
		if (i + 1 == *argc)
			return cli_err("%s: missing %s; %s", argv[i],
				       is_count ? "a number of packets" :
						  "a number of seconds",
				       TRACE_HELP);
		if (parse_u32(argv[i + 1], argv[i], &v))
			return -1;
		if (is_count) {
			o->max_packets = v;
			count = true;
		} else {
			o->timeout_s = v;
			timeout = true;
		}
		i++;
	}
	*argc = n;
	if (!count && !timeout) {
		o->max_packets = XNF_TRACE_COUNT;
		o->timeout_s = XNF_TRACE_TIMEOUT_S;
	}
	if (!o->max_packets && !o->timeout_s)
		return cli_err("count 0 and timeout 0: a trace needs a bound; "
			       "give a count of packets or a timeout");
	return 0;
}

static const char *why_text(enum xnf_trace_end why)
{
	switch (why) {
	case XNF_TRACE_COUNT_REACHED:
		return "count reached";
	case XNF_TRACE_TIMEOUT:
		return "timeout";
	case XNF_TRACE_GONE:
		return "disarmed";
	default:
		return "interrupted";
	}
}

int do_trace(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct xnf_trace_opts o = { .cmd = cli_cmd_text() };
	struct xnf_trace *t;
	enum xnf_trace_end why;
	__u64 traced = 0, lost = 0;
	struct xnf_dp *dp;
	char err[512];
	__u32 id;
	int ret;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		trace_help();
		return 0;
	}
	if (parse_bounds(&argc, argv, &o))
		return -1;
	if (cli_fw_parse_match(argc, argv, &o.match))
		return -1;
	dp = cli_dp(false);
	if (!dp)
		return -1;
	/* The library records the start and the end itself. */
	cli.wrote = false;
	ret = xnf_trace_start(dp, &o, &t, err, sizeof(err));
	if (ret)
		return cli_err("%s", err);
	/* A trace runs for its timeout: other commands must not wait for
	 * it. xnf_trace_stop takes the lock again. */
	xnf_dp_lock(dp, LOCK_UN);
	/* No SA_RESTART: the signal ends the poll's wait. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	while (!stop && !xnf_trace_ended(t)) {
		ret = xnf_trace_poll(t, 200, print_rec, NULL);
		if (ret < 0 && ret != -EINTR)
			break;
		ret = 0;
	}
	id = xnf_trace_id(t);
	why = xnf_trace_why(t);
	if (xnf_trace_stop(t, &traced, &lost))
		print_warn("could not disarm trace %u: it ends at its bound", id);
	if (ret == -EPIPE)
		return 0;
	if (ret < 0)
		return cli_err("reading trace %u's records: %s", id,
			       strerror(-ret));
	open_json_doc("xnf/trace/1");
	print_string(PRINT_JSON, "event", NULL, "end");
	print_uint(PRINT_ANY, "trace", "trace %llu: ", id);
	print_uint(PRINT_ANY, "traced", "%llu packets traced, ", traced);
	print_uint(PRINT_ANY, "lost", "%llu lost ", lost);
	print_string(PRINT_ANY, "why", "(%s)", why_text(why));
	close_json_object();
	print_nl();
	fflush(stdout);
	return 0;
}
