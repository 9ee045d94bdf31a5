// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf ct: the connection table, as conntrack(8) shows and flushes it.
 *
 * show   the live entries a filter matches, one line each as `conntrack -L
 *        -o extended` prints them (family, protocol, timeout left, TCP
 *        state, both directions' tuple and counters, [UNREPLIED],
 *        [ASSURED], and for a translated connection the reply tuple its
 *        translation made, [SNAT], [MASQUERADE oif=DEV], [DNAT]); -j: an
 *        xnf/ct/1 document.
 * flush  deletes them (xnf/ct-flush/1: how many).
 * stats  the table's occupancy and counters (xnf/ct-stats/1).
 *
 * The entries are state, not configuration: a flush is no candidate's
 * edit, `xnf save` has none of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>

#include "cli.h"
#include "ct.h"

#define CT_HELP "see 'xnf ct help'"

static int ct_port(const char *s, const char *what, __u16 *port)
{
	__u32 v;

	if (parse_u32(s, what, &v))
		return -1;
	if (v > 65535)
		return cli_err("invalid %s '%s': expected 0..65535", what, s);
	*port = v;
	return 0;
}

/* "S[,S...]": TCP state names and assured, unreplied. */
static int ct_states(const char *s, struct xnf_ct_filter *f)
{
	char buf[256], *tok, *save = NULL;
	int st;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return cli_err("state list '%s' too long", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "assured")) {
			f->what |= XNF_CT_F_ASSURED;
			continue;
		}
		if (!strcmp(tok, "unreplied")) {
			f->what |= XNF_CT_F_UNREPLIED;
			continue;
		}
		st = xnf_ct_tcp_state_parse(tok);
		if (st <= 0)
			return cli_err("unknown state '%s': a TCP state (SYN_SENT, "
				       "SYN_RECV, ESTABLISHED, FIN_WAIT, CLOSE_WAIT, "
				       "LAST_ACK, TIME_WAIT, CLOSE, SYN_SENT2), "
				       "assured or unreplied",
				       tok);
		f->what |= XNF_CT_F_TCP_STATE;
		f->tcp_states |= 1U << st;
	}
	if (!(f->what &
	      (XNF_CT_F_TCP_STATE | XNF_CT_F_ASSURED | XNF_CT_F_UNREPLIED)))
		return cli_err("empty state list; %s", CT_HELP);
	return 0;
}

/* "K[,K...]": snat, dnat, masquerade, any (conntrack's --src-nat,
 * --dst-nat, --any-nat): a translated connection of any of them. */
static int ct_nat_kinds(const char *s, struct xnf_ct_filter *f)
{
	char buf[128], *tok, *save = NULL;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return cli_err("translation list '%s' too long", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "snat"))
			f->nat |= XNF_CT_S_SNAT;
		else if (!strcmp(tok, "dnat"))
			f->nat |= XNF_CT_S_DNAT;
		else if (!strcmp(tok, "masquerade"))
			f->nat |= XNF_CT_S_MASQ;
		else if (!strcmp(tok, "any"))
			f->nat |= XNF_CT_S_SNAT | XNF_CT_S_DNAT;
		else
			return cli_err("unknown translation '%s': snat, dnat, "
				       "masquerade or any",
				       tok);
	}
	if (!f->nat)
		return cli_err("empty translation list; %s", CT_HELP);
	f->what |= XNF_CT_F_NAT;
	return 0;
}

/* An address of the filter, which sets or must agree with its family. */
static int ct_addr(const char *s, struct xnf_ct_filter *f, __u8 out[16])
{
	int family;

	if (parse_addr(s, &family, out))
		return -1;
	if ((f->what & XNF_CT_F_FAMILY) && f->family != family)
		return cli_err("%s is not of the family %s of the filter", s,
			       f->family == XNF_AF_INET ? "inet" : "inet6");
	f->what |= XNF_CT_F_FAMILY;
	f->family = family;
	return 0;
}

static int ct_filter_parse(int argc, char **argv, const char *verb,
			   struct xnf_ct_filter *f)
{
	static const char *const kws[] = {
		"family",    "proto", "addr",  "src",	"dst",
		"port",	     "sport", "dport", "state", "reply-src",
		"reply-dst", "nat",   "oif",   NULL,
	};
	char help[64];
	int kw;

	memset(f, 0, sizeof(*f));
	snprintf(help, sizeof(help), "%s", CT_HELP);
	for (; argc > 0; argc -= 2, argv += 2) {
		kw = cli_keyword(argv[0], kws, verb, help);
		if (kw < 0)
			return -1;
		if (argc < 2)
			return cli_err("%s: missing value; %s", kws[kw], CT_HELP);
		switch (kw) {
		case 0: {
			__u8 fam;

			if (!strcmp(argv[1], "inet"))
				fam = XNF_AF_INET;
			else if (!strcmp(argv[1], "inet6"))
				fam = XNF_AF_INET6;
			else
				return cli_err("invalid family '%s': inet or inet6",
					       argv[1]);
			if ((f->what & XNF_CT_F_FAMILY) && f->family != fam)
				return cli_err("family %s, but an address of the "
					       "other family was given",
					       argv[1]);
			f->what |= XNF_CT_F_FAMILY;
			f->family = fam;
			break;
		}
		case 1:
			if (parse_proto(argv[1], &f->proto))
				return -1;
			f->what |= XNF_CT_F_PROTO;
			break;
		case 2:
			if (ct_addr(argv[1], f, f->addr))
				return -1;
			f->what |= XNF_CT_F_ADDR;
			break;
		case 3:
			if (ct_addr(argv[1], f, f->src))
				return -1;
			f->what |= XNF_CT_F_SRC;
			break;
		case 4:
			if (ct_addr(argv[1], f, f->dst))
				return -1;
			f->what |= XNF_CT_F_DST;
			break;
		case 5:
			if (ct_port(argv[1], "port", &f->port))
				return -1;
			f->what |= XNF_CT_F_PORT;
			break;
		case 6:
			if (ct_port(argv[1], "sport", &f->sport))
				return -1;
			f->what |= XNF_CT_F_SPORT;
			break;
		case 7:
			if (ct_port(argv[1], "dport", &f->dport))
				return -1;
			f->what |= XNF_CT_F_DPORT;
			break;
		case 8:
			if (ct_states(argv[1], f))
				return -1;
			break;
		case 9:
			if (ct_addr(argv[1], f, f->rsrc))
				return -1;
			f->what |= XNF_CT_F_REPLY_SRC;
			break;
		case 10:
			if (ct_addr(argv[1], f, f->rdst))
				return -1;
			f->what |= XNF_CT_F_REPLY_DST;
			break;
		case 11:
			if (ct_nat_kinds(argv[1], f))
				return -1;
			break;
		case 12:
			if (cli_ifindex(argv[1], &f->oif))
				return -1;
			f->what |= XNF_CT_F_NAT_OIF;
			break;
		}
	}
	return 0;
}

static int ct_conn_cmp(const void *a, const void *b)
{
	const struct xnf_ct_conn *x = a, *y = b;
	int c;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	c = memcmp(x->src, y->src, 16);
	if (!c)
		c = memcmp(x->dst, y->dst, 16);
	if (!c && x->sport != y->sport)
		c = x->sport < y->sport ? -1 : 1;
	if (!c && x->dport != y->dport)
		c = x->dport < y->dport ? -1 : 1;
	return c;
}

static bool ct_is_icmp(const struct xnf_ct_conn *c)
{
	return c->proto == IPPROTO_ICMP || c->proto == IPPROTO_ICMPV6;
}

/* One direction: " src=A dst=B sport=P dport=Q packets=N bytes=M" (for
 * ICMP echo " type=T code=0 id=I"), and the same as a JSON object. */
static void ct_print_dir(const struct xnf_ct_conn *c, int dir)
{
	const __u8 *src = dir ? c->rsrc : c->src, *dst = dir ? c->rdst : c->dst;
	__u16 sport = dir ? c->rsport : c->sport,
	      dport = dir ? c->rdport : c->dport;
	char a[INET6_ADDRSTRLEN];

	open_json_object(dir ? "reply" : "orig");
	print_string(PRINT_ANY, "src", " src=%s",
		     fmt_addr(c->family, src, a, sizeof(a)));
	print_string(PRINT_ANY, "dst", " dst=%s",
		     fmt_addr(c->family, dst, a, sizeof(a)));
	if (ct_is_icmp(c)) {
		/* Only an echo request makes an entry (docs/conntrack.md):
		 * the original direction is the request, the reply the
		 * echo reply, as conntrack(8) prints them. */
		bool v6 = c->proto == IPPROTO_ICMPV6;

		print_uint(PRINT_FP, NULL, " type=%llu",
			   v6 ? (dir ? 129 : 128) : (dir ? 0 : 8));
		print_uint(PRINT_FP, NULL, " code=%llu", 0);
		print_uint(PRINT_FP, NULL, " id=%llu", sport);
		print_uint(PRINT_JSON, "sport", NULL, sport);
		print_uint(PRINT_JSON, "dport", NULL, dport);
	} else if (c->proto == IPPROTO_TCP || c->proto == IPPROTO_UDP ||
		   c->proto == IPPROTO_SCTP || c->proto == IPPROTO_UDPLITE ||
		   sport || dport) {
		print_uint(PRINT_ANY, "sport", " sport=%llu", sport);
		print_uint(PRINT_ANY, "dport", " dport=%llu", dport);
	} else {
		print_uint(PRINT_JSON, "sport", NULL, sport);
		print_uint(PRINT_JSON, "dport", NULL, dport);
	}
	print_uint(PRINT_ANY, "packets", " packets=%llu", c->packets[dir]);
	print_uint(PRINT_ANY, "bytes", " bytes=%llu", c->bytes[dir]);
	close_json_object();
}

/* The translation: " [SNAT]", " [MASQUERADE oif=DEV]", " [DNAT]" (the
 * reply tuple says to what); -j: "nat": {snat, dnat, masquerade, oif}. */
static void ct_print_nat(const struct xnf_ct_conn *c)
{
	bool masq = c->status & XNF_CT_S_MASQ;
	char dev[IF_NAMESIZE];

	if (masq)
		print_text(" [MASQUERADE oif=%s]", fmt_ifname(c->nat_oif, dev));
	else if (c->status & XNF_CT_S_SNAT)
		print_text(" [SNAT]");
	if (c->status & XNF_CT_S_DNAT)
		print_text(" [DNAT]");
	open_json_object("nat");
	print_bool(PRINT_JSON, "snat", NULL, c->status & XNF_CT_S_SNAT);
	print_bool(PRINT_JSON, "dnat", NULL, c->status & XNF_CT_S_DNAT);
	print_bool(PRINT_JSON, "masquerade", NULL, masq);
	if (masq)
		print_string(PRINT_JSON, "oif", NULL,
			     fmt_ifname(c->nat_oif, dev));
	else
		print_null(PRINT_JSON, "oif", NULL);
	close_json_object();
}

static void ct_print(const struct xnf_ct_conn *c)
{
	bool v6 = c->family == XNF_AF_INET6;
	char proto[32];

	fmt_proto(c->proto, proto, sizeof(proto));
	open_json_object(NULL);
	print_text("%-8s %u", v6 ? "ipv6" : "ipv4", v6 ? 10 : 2);
	print_string(PRINT_JSON, "family", NULL, v6 ? "inet6" : "inet");
	print_string(PRINT_ANY, "proto", " %-8s", proto);
	print_uint(PRINT_ANY, "proto_num", " %llu", c->proto);
	print_uint(PRINT_ANY, "timeout", " %llu", c->timeout);
	if (c->proto == IPPROTO_TCP)
		print_string(PRINT_ANY, "state", " %s",
			     xnf_ct_tcp_state_name(c->tcp_state) ?: "?");
	else
		print_null(PRINT_JSON, "state", NULL);
	ct_print_dir(c, 0);
	if (!(c->status & XNF_CT_S_SEEN_REPLY))
		print_text(" [UNREPLIED]");
	ct_print_dir(c, 1);
	if (c->status & XNF_CT_S_ASSURED)
		print_text(" [ASSURED]");
	print_bool(PRINT_JSON, "assured", NULL, c->status & XNF_CT_S_ASSURED);
	print_bool(PRINT_JSON, "unreplied", NULL,
		   !(c->status & XNF_CT_S_SEEN_REPLY));
	ct_print_nat(c);
	close_json_object();
	print_nl();
}

static int do_ct_show(int argc, char **argv)
{
	struct xnf_ct_conn *conns = NULL;
	struct xnf_ct_filter f;
	struct xnf_dp *dp;
	char err[512];
	__u32 n, i;
	int ret;

	if (ct_filter_parse(argc, argv, "ct show", &f))
		return -1;
	dp = cli_dp_read();
	if (!dp)
		return -1;
	ret = xnf_ct_list(dp, &f, &conns, &n, err, sizeof(err));
	if (ret)
		return cli_err("%s", err);
	if (n)
		qsort(conns, n, sizeof(*conns), ct_conn_cmp);
	open_json_doc("xnf/ct/1");
	open_json_array("entries");
	for (i = 0; i < n; i++)
		ct_print(&conns[i]);
	close_json_array();
	close_json_object();
	free(conns);
	return 0;
}

/* A writer, as `fw reset` is: the change log records it. */
static int do_ct_flush(int argc, char **argv)
{
	struct xnf_ct_filter f;
	struct xnf_dp *dp;
	__u64 flushed;
	char err[512];
	int ret;

	if (ct_filter_parse(argc, argv, "ct flush", &f))
		return -1;
	dp = cli_dp(false);
	if (!dp)
		return -1;
	ret = xnf_ct_flush(dp, &f, &flushed, err, sizeof(err));
	if (ret)
		return cli_err("%s", err);
	open_json_doc("xnf/ct-flush/1");
	print_uint(PRINT_ANY, "flushed", "%llu entries flushed\n", flushed);
	close_json_object();
	return 0;
}

static int do_ct_stats(int argc, char **argv)
{
	struct xnf_ct_stats st;
	struct xnf_dp *dp;
	char err[512];

	if (argc > 0)
		return cli_err("'xnf ct stats' takes no arguments, not '%s'",
			       argv[0]);
	dp = cli_dp_read();
	if (!dp)
		return -1;
	if (xnf_ct_stats_read(dp, &st, err, sizeof(err)))
		return cli_err("%s", err);
	open_json_doc("xnf/ct-stats/1");
	print_uint(PRINT_ANY, "entries", "entries %llu", st.entries);
	print_uint(PRINT_ANY, "max", " max %llu", st.max);
	print_uint(PRINT_ANY, "dead", " dead %llu", st.dead);
	print_uint(PRINT_ANY, "aliases", " aliases %llu\n", st.aliases);
	print_uint(PRINT_ANY, "created", "created %llu", st.c.created);
	print_uint(PRINT_ANY, "expired", " expired %llu", st.c.expired);
	print_uint(PRINT_ANY, "deleted", " deleted %llu", st.c.deleted);
	print_uint(PRINT_ANY, "flushed", " flushed %llu", st.c.flushed);
	print_uint(PRINT_ANY, "evicted", " evicted %llu\n", st.evicted);
	print_uint(PRINT_ANY, "searched", "searched %llu", st.c.searched);
	print_uint(PRINT_ANY, "found", " found %llu", st.c.found);
	print_uint(PRINT_ANY, "invalid", " invalid %llu", st.c.invalid);
	print_uint(PRINT_ANY, "related", " related %llu", st.c.related);
	print_uint(PRINT_ANY, "insert_failed", " insert_failed %llu\n",
		   st.c.insert_failed);
	print_uint(PRINT_ANY, "nat_created", "nat_created %llu",
		   st.c.nat_created);
	print_uint(PRINT_ANY, "nat_retries", " nat_retries %llu",
		   st.c.nat_retries);
	print_uint(PRINT_ANY, "nat_no_port", " nat_no_port %llu",
		   st.c.nat_no_port);
	print_uint(PRINT_ANY, "nat_no_addr", " nat_no_addr %llu",
		   st.c.nat_no_addr);
	print_uint(PRINT_ANY, "nat_clash", " nat_clash %llu\n", st.c.nat_clash);
	close_json_object();
	return 0;
}

static int do_ct_help(int argc, char **argv)
{
	printf("Usage: xnf ct [ show ] [ FILTER ]\n"
	       "       xnf ct flush [ FILTER ]\n"
	       "       xnf ct stats\n"
	       "       xnf ct help\n"
	       "FILTER := { family { inet | inet6 } | proto PROTO | addr ADDR |\n"
	       "            src ADDR | dst ADDR | port N | sport N | dport N |\n"
	       "            state STATE[,STATE...] | reply-src ADDR | reply-dst ADDR |\n"
	       "            nat NAT[,NAT...] | oif DEV } ...\n"
	       "PROTO := { tcp | udp | sctp | icmp | icmpv6 | NUMBER }\n"
	       "NAT := { snat | dnat | masquerade | any }\n"
	       "STATE := { SYN_SENT | SYN_RECV | ESTABLISHED | FIN_WAIT | CLOSE_WAIT |\n"
	       "           LAST_ACK | TIME_WAIT | CLOSE | SYN_SENT2 | assured | unreplied }\n"
	       "show lists the live connections, as 'conntrack -L -o extended' does: the\n"
	       "original direction's tuple, then the reply's. addr and port match either\n"
	       "side; src, dst, sport and dport the original direction's. TCP states\n"
	       "match any of them; assured and unreplied must hold as well. A translated\n"
	       "connection's reply tuple is its translation: reply-dst is a source NAT's\n"
	       "address, reply-src a destination NAT's target. nat matches any of the\n"
	       "kinds listed (any: snat or dnat); oif a masquerade out of DEV. flush\n"
	       "deletes what the filter matches (all without one), a translated\n"
	       "connection with its second entry. flush is never abbreviated.\n");
	return 0;
}

int do_ct(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", do_ct_show },	  { "list", do_ct_show },
		{ "stats", do_ct_stats }, { "flush", do_ct_flush, CLI_FULL },
		{ "help", do_ct_help },	  { NULL, NULL },
	};

	return cli_dispatch(cmds, "ct", argc, argv);
}
