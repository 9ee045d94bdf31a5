// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf fw: the firewall's rules and its default policy.
 *
 * Parse, edit the candidate, print. A candidate's rule set is the one that
 * runs, read once (xnf_fw_read), with its edits; the commit applies it as
 * a whole (xnf_fw_apply): the rules, the default and the compiled tables
 * are written into the inactive generation and switched to with one
 * write, so a packet is classified by the complete old set or the
 * complete new one, and a failure or a kill leaves the old one running.
 * A batch (xnf -b) switches once, whatever its number of rules.
 *
 * Hit counters are per slot (a rule keeps its slot while it lives): a
 * slot's counter is zeroed before a new rule is published in it. The
 * default policy has one too, after the last slot. `fw reset` zeroes
 * them all and changes no rule: like `stats reset`, it is no edit of the
 * configuration.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include "cli.h"

#define FW_HELP "see 'xnf fw help'"

enum {
	KW_PRIO,
	KW_ALLOW,
	KW_DROP,
	KW_PROTO,
	KW_SRC,
	KW_DST,
	KW_SPORT,
	KW_DPORT,
	KW_CT,
	KW_IIF,
	KW_OIF,
	KW_ICMP,
	KW_ICMPV6,
	KW_TCP,
};
static const char *const fw_kws[] = {
	[KW_PRIO] = "prio",	[KW_ALLOW] = "allow", [KW_DROP] = "drop",
	[KW_PROTO] = "proto",	[KW_SRC] = "src",     [KW_DST] = "dst",
	[KW_SPORT] = "sport",	[KW_DPORT] = "dport", [KW_CT] = "ct",
	[KW_IIF] = "iif",	[KW_OIF] = "oif",     [KW_ICMP] = "icmp",
	[KW_ICMPV6] = "icmpv6", [KW_TCP] = "tcp",     NULL,
};

/* nft's names (nft describe ct_state, tcp_flag, icmp_type, icmpv6_type,
 * icmp_code, icmpv6_code), in nft's print order. */
struct fw_name {
	const char *name;
	__u8 val;
};

static const struct fw_name fw_ct_names[] = {
	{ "invalid", XNF_CT_INVALID },
	{ "established", XNF_CT_ESTABLISHED },
	{ "related", XNF_CT_RELATED },
	{ "new", XNF_CT_NEW },
	{ "untracked", XNF_CT_UNTRACKED },
	{ NULL, 0 },
};

static const struct fw_name fw_tcp_names[] = {
	{ "fin", 0x01 }, { "syn", 0x02 }, { "rst", 0x04 },
	{ "psh", 0x08 }, { "ack", 0x10 }, { "urg", 0x20 },
	{ "ecn", 0x40 }, { "cwr", 0x80 }, { NULL, 0 },
};

static const struct fw_name fw_icmp_types[] = {
	{ "echo-reply", 0 },	       { "destination-unreachable", 3 },
	{ "source-quench", 4 },	       { "redirect", 5 },
	{ "echo-request", 8 },	       { "router-advertisement", 9 },
	{ "router-solicitation", 10 }, { "time-exceeded", 11 },
	{ "parameter-problem", 12 },   { "timestamp-request", 13 },
	{ "timestamp-reply", 14 },     { "info-request", 15 },
	{ "info-reply", 16 },	       { "address-mask-request", 17 },
	{ "address-mask-reply", 18 },  { NULL, 0 },
};

static const struct fw_name fw_icmpv6_types[] = {
	{ "destination-unreachable", 1 }, { "packet-too-big", 2 },
	{ "time-exceeded", 3 },		  { "parameter-problem", 4 },
	{ "echo-request", 128 },	  { "echo-reply", 129 },
	{ "mld-listener-query", 130 },	  { "mld-listener-report", 131 },
	{ "mld-listener-done", 132 },	  { "mld-listener-reduction", 132 },
	{ "nd-router-solicit", 133 },	  { "nd-router-advert", 134 },
	{ "nd-neighbor-solicit", 135 },	  { "nd-neighbor-advert", 136 },
	{ "nd-redirect", 137 },		  { "router-renumbering", 138 },
	{ "ind-neighbor-solicit", 141 },  { "ind-neighbor-advert", 142 },
	{ "mld2-listener-report", 143 },  { NULL, 0 },
};

static const struct fw_name fw_icmp_codes[] = {
	{ "net-unreachable", 0 },
	{ "host-unreachable", 1 },
	{ "prot-unreachable", 2 },
	{ "port-unreachable", 3 },
	{ "frag-needed", 4 },
	{ "net-prohibited", 9 },
	{ "host-prohibited", 10 },
	{ "admin-prohibited", 13 },
	{ NULL, 0 },
};

static const struct fw_name fw_icmpv6_codes[] = {
	{ "no-route", 0 },
	{ "admin-prohibited", 1 },
	{ "addr-unreachable", 3 },
	{ "port-unreachable", 4 },
	{ "policy-fail", 5 },
	{ "reject-route", 6 },
	{ NULL, 0 },
};

/* @s as a name of @names or a number 0..255. */
static int fw_name_parse(const struct fw_name *names, const char *s,
			 const char *what, __u8 *val)
{
	unsigned long n;
	char *end;

	for (; names->name; names++) {
		if (!strcmp(s, names->name)) {
			*val = names->val;
			return 0;
		}
	}
	errno = 0;
	n = strtoul(s, &end, 0);
	if (*s && !*end && !errno && n <= 255) {
		*val = n;
		return 0;
	}
	return cli_err("unknown %s '%s': a name as nft has it ('nft describe "
		       "%s') or a number 0..255",
		       what, s, what);
}

/* The name of @val in @names, or its number. */
static const char *fw_name_fmt(const struct fw_name *names, __u8 val, char *buf,
			       size_t len)
{
	for (; names->name; names++)
		if (names->val == val)
			return names->name;
	snprintf(buf, len, "%u", val);
	return buf;
}

/* "a,b,c" of @names into a bit set: ct states (1 << value) or TCP
 * flags (the values are bits). */
static int fw_set_parse(const struct fw_name *names, const char *s,
			const char *what, bool shift, __u8 *set)
{
	char buf[256], *tok, *save = NULL;
	const struct fw_name *n;

	snprintf(buf, sizeof(buf), "%s", s);
	*set = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (n = names; n->name && strcmp(n->name, tok); n++)
			;
		if (!n->name)
			return cli_err("unknown %s '%s'; %s", what, tok, FW_HELP);
		*set |= shift ? 1u << n->val : n->val;
	}
	if (!*set)
		return cli_err("%s: name at least one; %s", what, FW_HELP);
	return 0;
}

static const char *fw_set_fmt(const struct fw_name *names, __u8 set, bool shift,
			      char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; names->name && n < len; names++)
		if (set & (shift ? 1u << names->val : names->val))
			n += snprintf(buf + n, len - n, "%s%s", n ? "," : "",
				      names->name);
	return buf;
}

static int fw_keyword(const char *arg)
{
	return cli_keyword(arg, fw_kws, "fw", FW_HELP);
}

static int fw_parse_action(const char *s, __u32 *act)
{
	if (!strcmp(s, "allow")) {
		*act = XNF_FW_ALLOW;
		return 0;
	}
	if (!strcmp(s, "drop")) {
		*act = XNF_FW_DROP;
		return 0;
	}
	cli_err("invalid policy '%s': expected allow or drop", s);
	return -1;
}

static const char *fw_action_name(__u32 act)
{
	return act == XNF_FW_DROP ? "drop" : "allow";
}

static int fw_set_prefix(const char *s, const char *what, struct xnf_fw_rule *r,
			 __u8 *addr, __u8 *len, const char **other)
{
	__u8 buf[16];
	__u32 plen;
	int family;

	if (parse_prefix(s, &family, buf, &plen))
		return -1;
	if (r->family && r->family != family)
		return cli_err("%s %s is %s but %s is %s: a rule matches one "
			       "family, so src and dst must be both IPv4 or both "
			       "IPv6",
			       what, s, family == XNF_AF_INET ? "IPv4" : "IPv6",
			       *other,
			       r->family == XNF_AF_INET ? "IPv4" : "IPv6");
	r->family = family;
	memcpy(addr, buf, 16);
	*len = plen;
	*other = s;
	return 0;
}

/* "icmp[v6] type T [code C]", at "type": consumes through T or C. */
static int fw_parse_icmp(int *pargc, char ***pargv, bool v6,
			 struct xnf_fw_rule *r)
{
	const char *what = v6 ? "icmpv6_type" : "icmp_type";
	char **argv = *pargv;
	int argc = *pargc;

	if (strcmp(argv[0], "type"))
		return cli_err("%s: say '%s type TYPE [code CODE]', not '%s'; %s",
			       v6 ? "icmpv6" : "icmp", v6 ? "icmpv6" : "icmp",
			       argv[0], FW_HELP);
	NEXT_ARG();
	REQ_ARGS(1, "fw");
	if (fw_name_parse(v6 ? fw_icmpv6_types : fw_icmp_types, argv[0], what,
			  &r->icmp_type))
		return -1;
	r->flags |= XNF_FW_F_ICMP_TYPE;
	if (argc > 1 && !strcmp(argv[1], "code")) {
		NEXT_ARG();
		NEXT_ARG();
		REQ_ARGS(1, "fw");
		if (fw_name_parse(v6 ? fw_icmpv6_codes : fw_icmp_codes, argv[0],
				  v6 ? "icmpv6_code" : "icmp_code", &r->icmp_code))
			return -1;
		r->flags |= XNF_FW_F_ICMP_CODE;
	}
	*pargc = argc;
	*pargv = argv;
	return 0;
}

/* "tcp flags F[,F...] [/ M[,M...]]", at "flags", as nft: with a mask the
 * flags under it must be F; without, any of F. */
static int fw_parse_tcp(int *pargc, char ***pargv, struct xnf_fw_rule *r)
{
	char **argv = *pargv, flags[128], *slash;
	int argc = *pargc;
	const char *mask = NULL;

	if (strcmp(argv[0], "flags"))
		return cli_err("tcp: say 'tcp flags FLAGS [/ MASK]', not 'tcp %s' (ports: sport, dport); %s",
			       argv[0], FW_HELP);
	NEXT_ARG();
	REQ_ARGS(1, "fw");
	snprintf(flags, sizeof(flags), "%s", argv[0]);
	slash = strchr(flags, '/');
	if (slash) { /* "syn/syn,ack" */
		*slash = '\0';
		mask = argv[0] + (slash - flags) + 1;
	} else if (argc > 1 && !strcmp(argv[1], "/")) {
		NEXT_ARG();
		NEXT_ARG();
		REQ_ARGS(1, "fw");
		mask = argv[0];
	}
	if (mask) {
		if (fw_set_parse(fw_tcp_names, mask, "tcp flag", false,
				 &r->tcp_mask))
			return -1;
		/* "tcp flags / syn": under the mask none is set */
		if (*flags && fw_set_parse(fw_tcp_names, flags, "tcp flag",
					   false, &r->tcp_flags))
			return -1;
		r->flags |= XNF_FW_F_TCP_FLAGS;
	} else {
		if (fw_set_parse(fw_tcp_names, flags, "tcp flag", false,
				 &r->tcp_mask))
			return -1;
		r->flags |= XNF_FW_F_TCP_ANY;
	}
	*pargc = argc;
	*pargv = argv;
	return 0;
}

/* Parses the match and action of 'fw add' into @r; *@prio_given says
 * whether r->prio came from the command line. @trace: only the match, of
 * a trace (cli_fw_parse_match). */
static int fw_parse(int argc, char **argv, struct xnf_fw_rule *r,
		    bool *prio_given, bool trace)
{
	const char *pfx = NULL;
	unsigned int seen = 0;
	__u8 implied = 0;
	int kw;

	memset(r, 0, sizeof(*r));
	*prio_given = false;
	for (; argc > 0; NEXT_ARG()) {
		kw = fw_keyword(argv[0]);
		if (kw < 0)
			return -1;
		if (trace && (kw == KW_PRIO || kw == KW_ALLOW || kw == KW_DROP))
			return cli_err("a trace matches packets, it has no %s; "
				       "see 'xnf trace help'",
				       kw == KW_PRIO ? "prio" : "action");
		if (trace && kw == KW_CT)
			return cli_err("a trace cannot match ct state: the state "
				       "is known only once conntrack ran, after "
				       "the trace chose its packets; trace the "
				       "addresses and ports instead");
		if ((kw == KW_ALLOW || kw == KW_DROP) &&
		    (seen & (1u << KW_ALLOW | 1u << KW_DROP)))
			return cli_err("a rule has one action: allow or drop, "
				       "not both");
		if (seen & (1u << kw))
			return cli_err("'%s' given twice; %s", fw_kws[kw],
				       FW_HELP);
		seen |= 1u << kw;
		if (kw == KW_ALLOW || kw == KW_DROP) {
			r->action = kw == KW_DROP ? XNF_FW_DROP : XNF_FW_ALLOW;
			continue;
		}
		NEXT_ARG();
		REQ_ARGS(1, "fw");
		switch (kw) {
		case KW_PRIO:
			if (parse_u32(argv[0], "prio", &r->prio))
				return -1;
			*prio_given = true;
			break;
		case KW_PROTO:
			if (parse_proto(argv[0], &r->proto))
				return -1;
			r->flags |= XNF_FW_F_PROTO;
			break;
		case KW_SRC:
			if (fw_set_prefix(argv[0], "src", r, r->src,
					  &r->src_len, &pfx))
				return -1;
			r->flags |= XNF_FW_F_SRC;
			break;
		case KW_DST:
			if (fw_set_prefix(argv[0], "dst", r, r->dst,
					  &r->dst_len, &pfx))
				return -1;
			r->flags |= XNF_FW_F_DST;
			break;
		case KW_SPORT:
			if (parse_port_range(argv[0], &r->sport_lo, &r->sport_hi))
				return -1;
			r->flags |= XNF_FW_F_SPORT;
			break;
		case KW_DPORT:
			if (parse_port_range(argv[0], &r->dport_lo, &r->dport_hi))
				return -1;
			r->flags |= XNF_FW_F_DPORT;
			break;
		case KW_CT:
			if (strcmp(argv[0], "state"))
				return cli_err("ct: only 'ct state STATE[,STATE...]' is matched, not 'ct %s'; %s",
					       argv[0], FW_HELP);
			NEXT_ARG();
			REQ_ARGS(1, "fw");
			if (fw_set_parse(fw_ct_names, argv[0], "ct state", true,
					 &r->ct_states))
				return -1;
			r->flags |= XNF_FW_F_CT;
			break;
		case KW_IIF:
			/* As nft's iif: the device's index now, so a device
			 * that does not exist is refused; saved by name. */
			if (cli_ifindex(argv[0], &r->iif))
				return -1;
			r->flags |= XNF_FW_F_IIF;
			break;
		case KW_OIF:
			return cli_err(
				"oif cannot be matched: the firewall runs before l3fwd chooses the egress device, so no output interface is known yet; match the destination (dst PREFIX) instead");
		case KW_ICMP:
		case KW_ICMPV6:
			if (fw_parse_icmp(&argc, &argv, kw == KW_ICMPV6, r))
				return -1;
			implied = kw == KW_ICMP ? IPPROTO_ICMP : IPPROTO_ICMPV6;
			break;
		case KW_TCP:
			if (fw_parse_tcp(&argc, &argv, r))
				return -1;
			implied = IPPROTO_TCP;
			break;
		}
	}
	if (!trace && !(seen & (1u << KW_ALLOW | 1u << KW_DROP)))
		return cli_err("missing action: say allow or drop; %s", FW_HELP);
	if ((seen & (1u << KW_ICMP)) && (seen & (1u << KW_ICMPV6)))
		return cli_err("a rule matches icmp or icmpv6, not both");
	if (implied && (r->flags & XNF_FW_F_PROTO) && r->proto != implied)
		return cli_err("%s implies proto %s, not proto %u",
			       implied == IPPROTO_TCP  ? "tcp flags" :
			       implied == IPPROTO_ICMP ? "icmp type" :
							 "icmpv6 type",
			       implied == IPPROTO_TCP  ? "tcp" :
			       implied == IPPROTO_ICMP ? "icmp" :
							 "icmpv6",
			       r->proto);
	if (implied) {
		r->proto = implied;
		r->flags |= XNF_FW_F_PROTO;
	}
	r->in_use = 1;
	return 0;
}

const char *cli_icmp_type_text(bool v6, __u8 type, char *buf, size_t len)
{
	return fw_name_fmt(v6 ? fw_icmpv6_types : fw_icmp_types, type, buf, len);
}

const char *cli_tcp_flags_text(__u8 flags, char *buf, size_t len)
{
	return fw_set_fmt(fw_tcp_names, flags, false, buf, len);
}

const char *cli_ct_state_text(__u8 state)
{
	const struct fw_name *n;

	for (n = fw_ct_names; n->name; n++)
		if (n->val == state)
			return n->name;
	return "?";
}

int cli_fw_parse_match(int argc, char **argv, struct xnf_fw_rule *r)
{
	bool prio_given;

	return fw_parse(argc, argv, r, &prio_given, true);
}

static int do_fw_add(int argc, char **argv)
{
	struct xnf_fw_rule r;
	struct xnf_conf *c;
	bool prio_given;
	char err[512];

	if (fw_parse(argc, argv, &r, &prio_given, false))
		return -1;
	c = cli_candidate();
	if (!c)
		return -1;
	switch (xnf_conf_fw_add(c, &r, !prio_given, err, sizeof(err))) {
	case 0:
		return 0;
	case -EEXIST:
		return cli_err("%s; choose another prio, or delete it first "
			       "with 'xnf fw del prio %u'",
			       err, r.prio);
	case -ENOSPC:
		return cli_err("%s; delete rules with 'xnf fw del prio N' first",
			       err);
	case -ERANGE:
		return cli_err("%s; give it one with 'prio N'", err);
	default:
		return cli_err("%s", err);
	}
}

static int do_fw_del(int argc, char **argv)
{
	struct xnf_conf *c;
	char err[256];
	__u32 prio;

	if (argc != 2 || !is_prefix(argv[0], "prio"))
		return cli_err("usage: xnf fw del prio N; %s", FW_HELP);
	if (parse_u32(argv[1], "prio", &prio))
		return -1;
	c = cli_candidate();
	if (!c)
		return -1;
	if (xnf_conf_fw_del(c, prio, err, sizeof(err)))
		return cli_err("%s; 'xnf fw show' lists the rules", err);
	return 0;
}

static int do_fw_default(int argc, char **argv)
{
	struct xnf_conf *c;
	char err[256];
	__u32 act;

	if (argc != 1)
		return cli_err("usage: xnf fw default { allow | drop }");
	if (fw_parse_action(argv[0], &act))
		return -1;
	c = cli_candidate();
	if (!c)
		return -1;
	/* The rules stay; the set carries the new default. */
	if (xnf_conf_fw_default(c, act, err, sizeof(err)))
		return cli_err("%s", err);
	return 0;
}

static int do_fw_flush(int argc, char **argv)
{
	struct xnf_conf *c;
	char err[256];

	if (argc > 0)
		return cli_err("'xnf fw flush' takes no arguments, not '%s'",
			       argv[0]);
	c = cli_candidate();
	if (!c)
		return -1;
	if (xnf_conf_fw_flush(c, err, sizeof(err)))
		return cli_err("%s", err);
	return 0;
}

/* As `nft reset rules`: the counters from zero, the rules as they are. No
 * edit of the configuration (nothing of it changes): a writer, as
 * `stats reset` is, so that the change log has it. */
static int do_fw_reset(int argc, char **argv)
{
	struct xnf_dp *dp;
	int err;

	if (argc > 0)
		return cli_err("'xnf fw reset' takes no arguments, not '%s'",
			       argv[0]);
	dp = cli_dp(false);
	if (!dp)
		return -1;
	err = xnf_fw_hits_reset(dp);
	if (err)
		return cli_err("cannot zero the hit counters (%s): %s",
			       XNF_MAP_STR(XNF_MAP_FW_HITS), strerror(-err));
	return 0;
}

static int fw_prio_cmp(const void *a, const void *b)
{
	const struct xnf_fw_rule *x = *(const struct xnf_fw_rule *const *)a;
	const struct xnf_fw_rule *y = *(const struct xnf_fw_rule *const *)b;

	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

static const char *fw_fmt_ports(__u16 lo, __u16 hi, char *buf, size_t len)
{
	if (lo == hi)
		snprintf(buf, len, "%u", lo);
	else
		snprintf(buf, len, "%u-%u", lo, hi);
	return buf;
}

#define FW_NKEYS  10
#define FW_VALLEN 128

/* The JSON keys of a rule's matches, in the order they are printed. */
static const char *const rule_keys[FW_NKEYS] = {
	"proto",    "src", "dst",	"sport",     "dport",
	"ct_state", "iif", "icmp_type", "icmp_code", "tcp_flags",
};

/* The match fields of @r as the words after their keyword (NULL for a
 * field the rule does not match on), formatted into @bufs; @words gets
 * the keywords `fw add` takes for them (NULL for proto when a tcp flags
 * or icmp type match implies it). */
static void fw_rule_vals(const struct xnf_fw_rule *r,
			 const char *vals[FW_NKEYS], const char *words[FW_NKEYS],
			 char bufs[FW_NKEYS][FW_VALLEN])
{
	const size_t len = FW_VALLEN;
	bool v6 = r->proto == IPPROTO_ICMPV6;
	char dev[IF_NAMESIZE + 8], m[64];
	size_t i;

	memset(vals, 0, FW_NKEYS * sizeof(*vals));
	for (i = 0; i < FW_NKEYS; i++)
		words[i] = rule_keys[i];
	words[5] = "ct state";
	words[7] = v6 ? "icmpv6 type" : "icmp type";
	words[8] = "code";
	words[9] = "tcp flags";
	if (r->flags &
	    (XNF_FW_F_ICMP_TYPE | XNF_FW_F_TCP_FLAGS | XNF_FW_F_TCP_ANY))
		words[0] = NULL;
	if (r->flags & XNF_FW_F_PROTO)
		vals[0] = fmt_proto(r->proto, bufs[0], len);
	if (r->flags & XNF_FW_F_SRC)
		vals[1] = fmt_prefix(r->family, r->src, r->src_len, bufs[1], len);
	if (r->flags & XNF_FW_F_DST)
		vals[2] = fmt_prefix(r->family, r->dst, r->dst_len, bufs[2], len);
	if (r->flags & XNF_FW_F_SPORT)
		vals[3] = fw_fmt_ports(r->sport_lo, r->sport_hi, bufs[3], len);
	if (r->flags & XNF_FW_F_DPORT)
		vals[4] = fw_fmt_ports(r->dport_lo, r->dport_hi, bufs[4], len);
	if (r->flags & XNF_FW_F_CT)
		vals[5] = fw_set_fmt(fw_ct_names, r->ct_states, true, bufs[5],
				     len);
	if (r->flags & XNF_FW_F_IIF) {
		snprintf(bufs[6], len, "%s", fmt_ifword(r->iif, dev));
		vals[6] = bufs[6];
	}
	if (r->flags & XNF_FW_F_ICMP_TYPE)
		vals[7] = fw_name_fmt(v6 ? fw_icmpv6_types : fw_icmp_types,
				      r->icmp_type, bufs[7], len);
	if (r->flags & XNF_FW_F_ICMP_CODE)
		vals[8] = fw_name_fmt(v6 ? fw_icmpv6_codes : fw_icmp_codes,
				      r->icmp_code, bufs[8], len);
	if (r->flags & XNF_FW_F_TCP_ANY)
		vals[9] = fw_set_fmt(fw_tcp_names, r->tcp_mask, false, bufs[9],
				     len);
	if (r->flags & XNF_FW_F_TCP_FLAGS) {
		fw_set_fmt(fw_tcp_names, r->tcp_mask, false, m, sizeof(m));
		fw_set_fmt(fw_tcp_names, r->tcp_flags, false, bufs[9], len);
		snprintf(bufs[9] + strlen(bufs[9]), len - strlen(bufs[9]),
			 "%s/ %s", r->tcp_flags ? " " : "", m);
		vals[9] = bufs[9];
	}
}

const char *cli_fw_match_text(const struct xnf_fw_rule *r, char *buf, size_t len)
{
	char bufs[FW_NKEYS][FW_VALLEN];
	const char *vals[FW_NKEYS], *words[FW_NKEYS];
	size_t i, n = 0;

	fw_rule_vals(r, vals, words, bufs);
	buf[0] = '\0';
	for (i = 0; i < FW_NKEYS && n < len; i++)
		if (vals[i] && words[i])
			n += snprintf(buf + n, len - n, "%s%s %s", n ? " " : "",
				      words[i], vals[i]);
	if (!n)
		snprintf(buf, len, "any");
	return buf;
}

const char *cli_fw_rule_text(const struct xnf_fw_rule *r, char *buf, size_t len)
{
	char match[512];

	cli_fw_match_text(r, match, sizeof(match));
	snprintf(buf, len, "prio %u %s%s%s", r->prio, fw_action_name(r->action),
		 strcmp(match, "any") ? " " : "",
		 strcmp(match, "any") ? match : "");
	return buf;
}

/* One rule in the words of 'xnf fw add', so a line can be typed back;
 * in JSON every match field is there, null when the rule has none. */
static void fw_print_rule(const struct xnf_fw_rule *r,
			  const struct xnf_fw_hit *hit)
{
	char bufs[FW_NKEYS][FW_VALLEN], fmt[32];
	const char *vals[FW_NKEYS], *words[FW_NKEYS];
	size_t i;

	fw_rule_vals(r, vals, words, bufs);
	open_json_object(NULL);
	print_uint(PRINT_ANY, "prio", "prio %llu", r->prio);
	print_string(PRINT_ANY, "action", " %s", fw_action_name(r->action));
	for (i = 0; i < FW_NKEYS; i++) {
		snprintf(fmt, sizeof(fmt), " %s %%s", words[i] ?: "");
		if (vals[i] && words[i])
			print_string(PRINT_ANY, rule_keys[i], fmt, vals[i]);
		else if (vals[i])
			print_string(PRINT_JSON, rule_keys[i], NULL, vals[i]);
		else
			print_null(PRINT_JSON, rule_keys[i], NULL);
	}
	print_uint(PRINT_ANY, "packets", "  packets %llu", hit->packets);
	print_uint(PRINT_ANY, "bytes", " bytes %llu\n", hit->bytes);
	close_json_object();
}

static int do_fw_show(int argc, char **argv)
{
	const struct xnf_fw_rule **order = NULL, *rules;
	struct xnf_fw_hit *hits = NULL;
	struct xnf_fw_set *set = NULL;
	struct xnf_dp *dp;
	__u32 i, n = 0;
	int err = 0;

	if (argc > 0)
		return cli_err("'xnf fw show' takes no arguments, not '%s'",
			       argv[0]);
	dp = cli_dp_read();
	if (!dp)
		return -1;
	err = xnf_fw_read(dp, &set);
	if (err)
		return cli_err("cannot read the firewall rules (%s, %s): %s",
			       XNF_MAP_STR(XNF_MAP_FW_RULES),
			       XNF_MAP_STR(XNF_MAP_FW_HDR), strerror(-err));
	order = calloc(XNF_FW_MAX_RULES, sizeof(*order));
	hits = calloc(XNF_FW_HITS, sizeof(*hits));
	if (!order || !hits) {
		err = cli_err("out of memory");
		goto out;
	}
	err = xnf_fw_hits_read(dp, hits);
	if (err) {
		err = cli_err("cannot read the hit counters (%s): %s",
			      XNF_MAP_STR(XNF_MAP_FW_HITS), strerror(-err));
		goto out;
	}
	rules = xnf_fw_set_rules(set);
	for (i = 0; i < XNF_FW_MAX_RULES; i++)
		if (rules[i].in_use)
			order[n++] = &rules[i];
	if (n)
		qsort(order, n, sizeof(*order), fw_prio_cmp);

	open_json_doc("xnf/fw/1");
	print_string(PRINT_ANY, "default", "default %s",
		     fw_action_name(xnf_fw_set_default(set)));
	print_uint(PRINT_ANY, "default_packets", "  packets %llu",
		   hits[XNF_FW_HIT_DEFAULT].packets);
	print_uint(PRINT_ANY, "default_bytes", " bytes %llu\n",
		   hits[XNF_FW_HIT_DEFAULT].bytes);
	open_json_array("rules");
	for (i = 0; i < n; i++)
		fw_print_rule(order[i], &hits[order[i] - rules]);
	close_json_array();
	close_json_object();
out:
	free(hits);
	free(order);
	xnf_fw_set_free(set);
	return err;
}

static int do_fw_help(int argc, char **argv)
{
	printf("Usage: xnf fw add [ prio N ] { allow | drop } [ proto PROTO ]\n"
	       "                  [ src PREFIX ] [ dst PREFIX ] [ sport PORTS ] [ dport PORTS ]\n"
	       "                  [ ct state STATES ] [ iif DEV ]\n"
	       "                  [ { icmp | icmpv6 } type TYPE [ code CODE ] ]\n"
	       "                  [ tcp flags FLAGS [ / FLAGS ] ]\n"
	       "       xnf fw del prio N\n"
	       "       xnf fw default { allow | drop }\n"
	       "       xnf fw flush\n"
	       "       xnf fw reset\n"
	       "       xnf fw [ show ]\n"
	       "       xnf fw help\n"
	       "PROTO  := { tcp | udp | sctp | icmp | icmpv6 | NUMBER }\n"
	       "PREFIX := ADDR[/LEN]     src and dst of one rule are of one family\n"
	       "PORTS  := PORT[-PORT]    0..65535; with proto tcp, udp or sctp, or with no\n"
	       "                         proto (then only packets whose ports can be read\n"
	       "                         match: not ICMP, not later fragments)\n"
	       "STATES := STATE[,STATE...]\n"
	       "STATE  := { new | established | related | invalid | untracked }\n"
	       "FLAGS  := FLAG[,FLAG...]\n"
	       "FLAG   := { fin | syn | rst | psh | ack | urg | ecn | cwr }\n"
	       "ct state matches any of STATES, as nft's (untracked without conntrack in\n"
	       "the chain). iif DEV: the ingress device, as nft's iif; saved by name.\n"
	       "TYPE and CODE: nft's names (echo-request, destination-unreachable,\n"
	       "port-unreachable, ...) or numbers; they imply the protocol. tcp flags\n"
	       "F / M: the flags under M are F; F alone: any of F (as nft); implies tcp.\n"
	       "oif cannot be matched: the firewall runs before l3fwd chooses the egress.\n"
	       "Packets to the router's own addresses go to the kernel before the rules\n"
	       "unless 'xnf config set fw_input rules'.\n"
	       "Rules are tried by ascending prio, the first match decides; a packet no\n"
	       "rule matches gets the default policy. prio defaults to the highest in use\n"
	       "plus %d (%d for the first rule) and must be unique. flush removes the\n"
	       "rules and keeps the default. Each change switches the dataplane from the\n"
	       "complete old rule set to the complete new one in one step.\n"
	       "show prints each rule's hits and the default policy's (the packets no\n"
	       "rule matched); reset (never abbreviated) zeroes them all and changes no\n"
	       "rule.\n",
	       XNF_FW_PRIO_STEP, XNF_FW_PRIO_STEP);
	return 0;
}

int do_fw(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", do_fw_show },
		{ "list", do_fw_show },
		{ "add", do_fw_add, CLI_EDIT },
		{ "del", do_fw_del, CLI_EDIT },
		{ "default", do_fw_default, CLI_EDIT },
		{ "flush", do_fw_flush, CLI_EDIT },
		{ "reset", do_fw_reset, CLI_FULL },
		{ "help", do_fw_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cmds, "fw", argc, argv);
}
