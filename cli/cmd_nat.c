// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf nat: the NAT rules (masquerade, snat, dnat), in nft's words.
 *
 * Parse, edit the candidate, print. The candidate's rule set is the one
 * that runs, read once (xnf_nat_read), with its edits; the commit applies
 * it as a whole (xnf_nat_apply): written into the inactive generation and
 * switched to with one write, so a batch (xnf -b) of many rules switches
 * once, all or nothing. What a rule means is nftables' (docs/nat.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include "cli.h"

#define NAT_HELP "see 'xnf nat help'"

enum {
	KW_PRIO,
	KW_MASQUERADE,
	KW_SNAT,
	KW_DNAT,
	KW_IIF,
	KW_OIF,
	KW_SADDR,
	KW_DADDR,
	KW_PROTO,
	KW_DPORT,
	KW_TO,
	KW_RANDOM,
	KW_PERSISTENT,
};
static const char *const nat_kws[] = {
	[KW_PRIO] = "prio",
	[KW_MASQUERADE] = "masquerade",
	[KW_SNAT] = "snat",
	[KW_DNAT] = "dnat",
	[KW_IIF] = "iif",
	[KW_OIF] = "oif",
	[KW_SADDR] = "saddr",
	[KW_DADDR] = "daddr",
	[KW_PROTO] = "proto",
	[KW_DPORT] = "dport",
	[KW_TO] = "to",
	[KW_RANDOM] = "random",
	[KW_PERSISTENT] = "persistent",
	NULL,
};

static const char *const type_names[] = {
	[XNF_NAT_MASQUERADE] = "masquerade",
	[XNF_NAT_SNAT] = "snat",
	[XNF_NAT_DNAT] = "dnat",
};

/* The family of an address of the rule: every address of a rule is of
 * one. */
static int nat_family(struct xnf_nat_rule *r, int family, const char *s)
{
	if (r->family && r->family != family)
		return cli_err("%s is %s but the rule's other addresses are %s: "
			       "a rule translates one family",
			       s, family == XNF_AF_INET ? "IPv4" : "IPv6",
			       r->family == XNF_AF_INET ? "IPv4" : "IPv6");
	r->family = family;
	return 0;
}

/* One address of "to": IPv6 in brackets when a port follows. */
static int nat_to_addr(struct xnf_nat_rule *r, const char *s, __u8 addr[16])
{
	int family;

	if (parse_addr(s, &family, addr))
		return -1;
	return nat_family(r, family, s);
}

/*
 * nft's "to" of a nat statement:
 *   :P1[-P2]                            ports only (masquerade)
 *   A[-B][:P1[-P2]]                     IPv4
 *   [A6][-[B6]][:P1[-P2]], A6[-B6]      IPv6 (brackets when a port follows)
 */
static int nat_parse_to(const char *arg, struct xnf_nat_rule *r)
{
	char buf[128], *s = buf, *ports = NULL, *end, *dash;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return cli_err("invalid 'to %s'; %s", arg, NAT_HELP);
	if (*s == '[') {
		end = strchr(s, ']');
		if (!end)
			return cli_err("'to %s': an IPv6 address opened with [ "
				       "closes with ]",
				       arg);
		*end++ = '\0';
		if (nat_to_addr(r, s + 1, r->to_min))
			return -1;
		memcpy(r->to_max, r->to_min, 16);
		if (end[0] == '-' && end[1] == '[') {
			s = end + 2;
			end = strchr(s, ']');
			if (!end)
				return cli_err("'to %s': an IPv6 address opened "
					       "with [ closes with ]",
					       arg);
			*end++ = '\0';
			if (nat_to_addr(r, s, r->to_max))
				return -1;
		}
		if (*end == ':')
			ports = end + 1;
		else if (*end)
			return cli_err("'to %s': after ] comes :PORT[-PORT] or "
				       "-[ADDR]; %s",
				       arg, NAT_HELP);
	} else if (*s == ':') {
		ports = s + 1;
	} else {
		/* One colon: IPv4 and a port; more: an IPv6 address. */
		end = strchr(s, ':');
		if (end && !strchr(end + 1, ':')) {
			*end = '\0';
			ports = end + 1;
		}
		dash = strchr(s, '-');
		if (dash)
			*dash = '\0';
		if (nat_to_addr(r, s, r->to_min) ||
		    nat_to_addr(r, dash ? dash + 1 : s, r->to_max))
			return -1;
	}
	if (ports) {
		if (parse_port_range(ports, &r->to_port_min, &r->to_port_max))
			return -1;
		r->flags |= XNF_NAT_F_PORTS;
	}
	return 0;
}

static int nat_parse_prefix(const char *s, struct xnf_nat_rule *r, __u8 *addr,
			    __u8 *plen)
{
	__u32 len;
	int family;

	if (parse_prefix(s, &family, addr, &len) || nat_family(r, family, s))
		return -1;
	*plen = len;
	return 0;
}

/* The words of 'nat add' into @r; *@prio_given whether prio was one. */
static int nat_parse_rule(int argc, char **argv, struct xnf_nat_rule *r,
			  bool *prio_given)
{
	unsigned int seen = 0;
	int kw;

	memset(r, 0, sizeof(*r));
	*prio_given = false;
	for (; argc > 0; NEXT_ARG()) {
		kw = cli_keyword(argv[0], nat_kws, "nat", NAT_HELP);
		if (kw < 0)
			return -1;
		if (seen & (1u << kw))
			return cli_err("'%s' given twice; %s", nat_kws[kw],
				       NAT_HELP);
		seen |= 1u << kw;
		switch (kw) {
		case KW_MASQUERADE:
		case KW_SNAT:
		case KW_DNAT:
			if (r->type)
				return cli_err("a rule is one of masquerade, "
					       "snat or dnat, not %s and %s",
					       type_names[r->type], nat_kws[kw]);
			r->type = kw == KW_MASQUERADE ? XNF_NAT_MASQUERADE :
				  kw == KW_SNAT	      ? XNF_NAT_SNAT :
							XNF_NAT_DNAT;
			continue;
		case KW_RANDOM:
			r->flags |= XNF_NAT_F_RANDOM;
			continue;
		case KW_PERSISTENT:
			r->flags |= XNF_NAT_F_PERSISTENT;
			continue;
		}
		NEXT_ARG();
		REQ_ARGS(1, "nat");
		switch (kw) {
		case KW_PRIO:
			if (parse_u32(argv[0], "prio", &r->prio))
				return -1;
			*prio_given = true;
			break;
		case KW_IIF:
			/* As nft's iif and oif: the device's index now, so
			 * one that does not exist is refused; saved by name. */
			if (cli_ifindex(argv[0], &r->iif))
				return -1;
			break;
		case KW_OIF:
			if (cli_ifindex(argv[0], &r->oif))
				return -1;
			break;
		case KW_SADDR:
			if (nat_parse_prefix(argv[0], r, r->src, &r->src_plen))
				return -1;
			break;
		case KW_DADDR:
			if (nat_parse_prefix(argv[0], r, r->dst, &r->dst_plen))
				return -1;
			break;
		case KW_PROTO:
			if (parse_proto(argv[0], &r->proto))
				return -1;
			break;
		case KW_DPORT:
			if (parse_port_range(argv[0], &r->dport_min,
					     &r->dport_max))
				return -1;
			break;
		case KW_TO:
			if (nat_parse_to(argv[0], r))
				return -1;
			break;
		}
	}
	if (!r->type)
		return cli_err("missing what the rule does: masquerade, snat or "
			       "dnat; %s",
			       NAT_HELP);
	/* Without an address, masquerade is of both families (nft's inet
	 * table); a protocol of one family makes it that family's. */
	if (!r->family && r->proto == IPPROTO_ICMP)
		r->family = XNF_AF_INET;
	if (!r->family && r->proto == IPPROTO_ICMPV6)
		r->family = XNF_AF_INET6;
	return 0;
}

static int do_nat_add(int argc, char **argv)
{
	struct xnf_nat_rule r;
	struct xnf_conf *c;
	bool prio_given;
	char err[512];

	if (nat_parse_rule(argc, argv, &r, &prio_given))
		return -1;
	c = cli_candidate();
	if (!c)
		return -1;
	if (xnf_conf_nat_add(c, &r, !prio_given, err, sizeof(err)))
		return cli_err("%s", err);
	return 0;
}

static int do_nat_del(int argc, char **argv)
{
	struct xnf_conf *c;
	char err[256];
	__u32 prio;

	if (argc != 2 || !is_prefix(argv[0], "prio"))
		return cli_err("usage: xnf nat del prio N; %s", NAT_HELP);
	if (parse_u32(argv[1], "prio", &prio))
		return -1;
	c = cli_candidate();
	if (!c)
		return -1;
	if (xnf_conf_nat_del(c, prio, err, sizeof(err)))
		return cli_err("%s", err);
	return 0;
}

static int do_nat_flush(int argc, char **argv)
{
	struct xnf_conf *c;
	char err[256];

	if (argc > 0)
		return cli_err("'xnf nat flush' takes no arguments, not '%s'",
			       argv[0]);
	c = cli_candidate();
	if (!c)
		return -1;
	if (xnf_conf_nat_flush(c, err, sizeof(err)))
		return cli_err("%s", err);
	return 0;
}

static const char *nat_fmt_ports(__u16 lo, __u16 hi, char *buf, size_t len)
{
	if (lo == hi)
		snprintf(buf, len, "%u", lo);
	else
		snprintf(buf, len, "%u-%u", lo, hi);
	return buf;
}

/* "to" as nat_parse_to() reads it, or NULL when the rule has none. */
static const char *nat_fmt_to(const struct xnf_nat_rule *r, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN], pr[16], p[24] = "";
	bool v6 = r->family == XNF_AF_INET6, ports = r->flags & XNF_NAT_F_PORTS;
	bool range = memcmp(r->to_min, r->to_max, 16);

	if (ports)
		snprintf(p, sizeof(p), ":%s",
			 nat_fmt_ports(r->to_port_min, r->to_port_max, pr,
				       sizeof(pr)));
	if (r->type == XNF_NAT_MASQUERADE) {
		if (!ports)
			return NULL;
		snprintf(buf, len, "%s", p);
		return buf;
	}
	fmt_addr(r->family, r->to_min, a, sizeof(a));
	fmt_addr(r->family, r->to_max, b, sizeof(b));
	if (v6 && ports)
		snprintf(buf, len, range ? "[%s]-[%s]%s" : "[%s]%.0s%s", a, b, p);
	else
		snprintf(buf, len, range ? "%s-%s%s" : "%s%.0s%s", a, b, p);
	return buf;
}

#define NAT_NKEYS  8
#define NAT_VALLEN 128
/* The JSON keys of a rule's fields, in the order `nat add` takes them. */
static const char *const nat_keys[NAT_NKEYS] = {
	"iif", "oif", "saddr", "daddr", "proto", "dport", "to", NULL,
};

/* The fields of @r as the words after their keyword (NULL where the
 * rule has none), formatted into @bufs. */
static void nat_rule_vals(const struct xnf_nat_rule *r,
			  const char *vals[NAT_NKEYS],
			  char bufs[NAT_NKEYS][NAT_VALLEN])
{
	const size_t len = NAT_VALLEN;

	memset(vals, 0, NAT_NKEYS * sizeof(*vals));
	if (r->iif)
		vals[0] = fmt_ifword(r->iif, bufs[0]);
	if (r->oif)
		vals[1] = fmt_ifword(r->oif, bufs[1]);
	if (r->src_plen)
		vals[2] = fmt_prefix(r->family, r->src, r->src_plen, bufs[2],
				     len);
	if (r->dst_plen)
		vals[3] = fmt_prefix(r->family, r->dst, r->dst_plen, bufs[3],
				     len);
	if (r->proto)
		vals[4] = fmt_proto(r->proto, bufs[4], len);
	if (r->dport_min)
		vals[5] = nat_fmt_ports(r->dport_min, r->dport_max, bufs[5], len);
	vals[6] = nat_fmt_to(r, bufs[6], len);
}

const char *cli_nat_rule_text(const struct xnf_nat_rule *r, char *buf, size_t len)
{
	char bufs[NAT_NKEYS][NAT_VALLEN];
	const char *vals[NAT_NKEYS];
	size_t i, n;

	nat_rule_vals(r, vals, bufs);
	n = snprintf(buf, len, "prio %u %s", r->prio, type_names[r->type]);
	for (i = 0; i < NAT_NKEYS && nat_keys[i] && n < len; i++)
		if (vals[i])
			n += snprintf(buf + n, len - n, " %s %s", nat_keys[i],
				      vals[i]);
	if ((r->flags & XNF_NAT_F_RANDOM) && n < len)
		n += snprintf(buf + n, len - n, " random");
	if ((r->flags & XNF_NAT_F_PERSISTENT) && n < len)
		snprintf(buf + n, len - n, " persistent");
	return buf;
}

/* One rule: its line as `nat add` takes it; in JSON every field, null
 * where the rule has none. */
static void nat_print_rule(const struct xnf_nat_rule *r)
{
	char bufs[NAT_NKEYS][NAT_VALLEN], line[1024];
	const char *vals[NAT_NKEYS];
	size_t i;

	nat_rule_vals(r, vals, bufs);
	print_string(PRINT_FP, NULL, "%s\n",
		     cli_nat_rule_text(r, line, sizeof(line)));
	open_json_object(NULL);
	print_uint(PRINT_JSON, "prio", NULL, r->prio);
	print_string(PRINT_JSON, "type", NULL, type_names[r->type]);
	if (r->family)
		print_string(PRINT_JSON, "family", NULL,
			     r->family == XNF_AF_INET ? "ipv4" : "ipv6");
	else
		print_null(PRINT_JSON, "family", NULL);
	for (i = 0; i < NAT_NKEYS && nat_keys[i]; i++) {
		if (vals[i])
			print_string(PRINT_JSON, nat_keys[i], NULL, vals[i]);
		else
			print_null(PRINT_JSON, nat_keys[i], NULL);
	}
	print_bool(PRINT_JSON, "random", NULL, r->flags & XNF_NAT_F_RANDOM);
	print_bool(PRINT_JSON, "persistent", NULL,
		   r->flags & XNF_NAT_F_PERSISTENT);
	close_json_object();
}

static int do_nat_show(int argc, char **argv)
{
	struct xnf_nat_set *set = NULL;
	struct xnf_dp *dp;
	char err[512];
	__u32 i;

	if (argc > 0)
		return cli_err("'xnf nat show' takes no arguments, not '%s'",
			       argv[0]);
	dp = cli_dp_read();
	if (!dp)
		return -1;
	if (xnf_nat_read(dp, &set, err, sizeof(err)))
		return cli_err("%s", err);
	open_json_doc("xnf/nat/1");
	open_json_array("rules");
	for (i = 0; i < set->n; i++)
		nat_print_rule(&set->r[i]);
	close_json_array();
	close_json_object();
	xnf_nat_set_free(set);
	return 0;
}

static int do_nat_help(int argc, char **argv)
{
	printf("Usage: xnf nat add [ prio N ] masquerade [ oif DEV ] [ saddr PREFIX ]\n"
	       "                  [ daddr PREFIX ] [ proto PROTO ] [ to :PORTS ]\n"
	       "                  [ random ] [ persistent ]\n"
	       "       xnf nat add [ prio N ] snat [ oif DEV ] [ saddr PREFIX ] [ daddr PREFIX ]\n"
	       "                  [ proto PROTO ] to ADDRS[:PORTS] [ random ] [ persistent ]\n"
	       "       xnf nat add [ prio N ] dnat [ iif DEV ] [ saddr PREFIX ] [ daddr PREFIX ]\n"
	       "                  [ proto { tcp | udp } [ dport PORTS ] ] to ADDR[:PORT]\n"
	       "       xnf nat del prio N\n"
	       "       xnf nat flush\n"
	       "       xnf nat [ show ]\n"
	       "       xnf nat help\n"
	       "PROTO  := { tcp | udp | icmp | icmpv6 }\n"
	       "PREFIX := ADDR[/LEN]     the addresses of one rule are of one family\n"
	       "ADDRS  := ADDR[-ADDR]    IPv6 in brackets when ports follow: [2001:db8::1]:80\n"
	       "PORTS  := PORT[-PORT]    1..65535; a port mapping and dport need proto tcp\n"
	       "                         or udp\n"
	       "As nftables: masquerade gives new connections leaving by oif the\n"
	       "address the kernel would choose on that device; snat the addresses and\n"
	       "ports of the range; dnat (port forwarding) translates the destination\n"
	       "before the firewall and the route lookup. A source keeps its port when\n"
	       "free (unless random), else takes another of the range; persistent maps a\n"
	       "source to the same address for every destination. iif and oif are saved\n"
	       "by name. Rules are tried by ascending prio, dnat rules first, the first\n"
	       "match decides; prio defaults to the highest in use plus %d and must be\n"
	       "unique. A change applies to new connections; the chain needs nat after\n"
	       "conntrack: conntrack,nat,firewall,l3fwd.\n",
	       XNF_NAT_PRIO_STEP);
	return 0;
}

int do_nat(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", do_nat_show },
		{ "list", do_nat_show },
		{ "add", do_nat_add, CLI_EDIT },
		{ "del", do_nat_del, CLI_EDIT },
		{ "flush", do_nat_flush, CLI_EDIT },
		{ "help", do_nat_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cmds, "nat", argc, argv);
}
