// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf save: the running configuration in the language of `xnf -b`.
 * xnf apply [check] FILE: makes the running configuration the one FILE
 * describes (include/conf.h), or prints what that would change.
 *
 * The file is a whole configuration, as an nftables ruleset file is for
 * `nft -f`: its lines edit an empty candidate, each one checked as the
 * command would check it (devices, neighbours, duplicates), and only when
 * every line is right is the candidate committed, changing just the
 * difference, all or nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>

#include "cli.h"

/* ---- elements as lines ---- */

static const char *line_attach(const struct xnf_conf_attach *a, char *buf,
			       size_t len)
{
	/* The longest CPU list: every other one of 1024, about 2 KB. */
	char chain[128], place[64 + 4096] = "", cores[4096], dev[CLI_DEV_WORD];
	size_t n = 0;

	xnf_chain_format(&a->chain, chain, sizeof(chain));
	if (a->placed && a->place.queues)
		n += snprintf(place + n, sizeof(place) - n, " queues %u",
			      a->place.queues);
	if (a->placed)
		snprintf(place + n, sizeof(place) - n, " cores %s",
			 a->place.have_cores ?
				 xnf_cpuset_format(&a->place.cores, cores,
						   sizeof(cores)) :
				 "auto");
	snprintf(buf, len, "attach %s chain %s mode %s %s %s%s",
		 cli_word(a->dev, dev, sizeof(dev)), chain,
		 a->xdp_flags & XDP_FLAGS_SKB_MODE ? "generic" : "native",
		 a->chain.fused ? "fused" : "tailcall",
		 a->chain.l3_fib ? "fib" : "lpm", place);
	return buf;
}

/* A route through a gateway with the MAC it runs with; a multipath route
 * with its next hops in the configuration's order (sorted). */
static const char *line_route(const struct xnf_conf_route *r, char *buf,
			      size_t len)
{
	char text[256], hop[128];
	size_t n;
	__u32 i;

	if (!r->npaths) {
		snprintf(buf, len, "route add %s",
			 cli_route_text(&r->e, text, sizeof(text)));
		return buf;
	}
	fmt_prefix(r->e.family, r->e.addr, r->e.plen, text, sizeof(text));
	n = snprintf(buf, len, "route add %s", text);
	for (i = 0; i < r->npaths && n < len; i++)
		n += snprintf(buf + n, len - n, " nexthop %s",
			      cli_nexthop_text(&r->paths[i], hop, sizeof(hop)));
	return buf;
}

static const char *line_fdb(const struct xnf_fdb_ent *e, char *buf, size_t len)
{
	char mac[18], dev[CLI_DEV_WORD];

	snprintf(buf, len, "fdb add %s dev %s",
		 fmt_mac(e->key.mac, mac, sizeof(mac)),
		 fmt_ifword(e->e.ifindex, dev));
	return buf;
}

/* The pair @e (the end of the lower ifindex) is in, with its @peer. */
static const char *line_xconnect(const struct xnf_xconnect_ent *e,
				 const struct xnf_xconnect_ent *peer, char *buf,
				 size_t len)
{
	char in[CLI_DEV_WORD], out[CLI_DEV_WORD], m1[18], m2[18];

	/* MAC1 is where frames leaving on DEV1 go: the way back. */
	snprintf(buf, len, "xconnect add %s %s lladdr %s %s",
		 fmt_ifword(e->in, in), fmt_ifword(peer->in, out),
		 fmt_mac(peer->xc.dmac, m1, sizeof(m1)),
		 fmt_mac(e->xc.dmac, m2, sizeof(m2)));
	return buf;
}

static const char *line_config(const struct xnf_conf *c, __u32 key, char *buf,
			       size_t len)
{
	char v[XNF_CONF_VAL_MAX];
	const char *k;

	xnf_conf_key(c, key, &k, v, sizeof(v));
	snprintf(buf, len, "config set %s %s", k, v);
	return buf;
}

static const char *line_fw_default(const struct xnf_fw_set *set, char *buf,
				   size_t len)
{
	snprintf(buf, len, "fw default %s",
		 xnf_fw_set_default(set) == XNF_FW_DROP ? "drop" : "allow");
	return buf;
}

static const char *line_fw_rule(const struct xnf_fw_rule *r, char *buf, size_t len)
{
	char text[512];

	snprintf(buf, len, "fw add %s", cli_fw_rule_text(r, text, sizeof(text)));
	return buf;
}

static const char *line_nat_rule(const struct xnf_nat_rule *r, char *buf,
				 size_t len)
{
	char text[512];

	snprintf(buf, len, "nat add %s",
		 cli_nat_rule_text(r, text, sizeof(text)));
	return buf;
}

const char *cli_conf_line(const struct xnf_conf_diff *d,
			  const struct xnf_conf_change *ch, bool new, char *buf,
			  size_t len)
{
	const struct xnf_conf *c = new ? d->to : d->from;
	const void *e = new ? ch->new : ch->old;
	const struct xnf_xconnect_ent *x = e, *peer;

	switch (ch->obj) {
	case XNF_OBJ_CONFIG:
		return line_config(c, ch->key, buf, len);
	case XNF_OBJ_FW_DEFAULT:
		return line_fw_default(c->fw, buf, len);
	case XNF_OBJ_FW_RULE:
		return line_fw_rule(e, buf, len);
	case XNF_OBJ_NAT_RULE:
		return line_nat_rule(e, buf, len);
	case XNF_OBJ_ATTACH:
		return line_attach(e, buf, len);
	case XNF_OBJ_ROUTE:
		return line_route(e, buf, len);
	case XNF_OBJ_FDB:
		return line_fdb(e, buf, len);
	case XNF_OBJ_XCONNECT:
		peer = xnf_conf_xc_find(c, x->xc.ifindex);
		return peer ? line_xconnect(x, peer, buf, len) : NULL;
	}
	return NULL;
}

/* ---- save ---- */

static size_t saved; /* bytes printed: what apply would read */

static void save_line(const char *line)
{
	saved += strlen(line) + 1;
	if (print_json())
		print_string(PRINT_JSON, NULL, NULL, line);
	else
		printf("%s\n", line);
}

static int rule_cmp(const void *a, const void *b)
{
	const struct xnf_fw_rule *x = *(const struct xnf_fw_rule *const *)a;
	const struct xnf_fw_rule *y = *(const struct xnf_fw_rule *const *)b;

	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

static int save_fw(const struct xnf_fw_set *set, char *buf, size_t len)
{
	const struct xnf_fw_rule *rules = xnf_fw_set_rules(set), **v;
	__u32 i, n = 0;

	save_line(line_fw_default(set, buf, len));
	v = calloc(xnf_fw_set_count(set) + 1, sizeof(*v));
	if (!v)
		return cli_err("out of memory");
	for (i = 0; i < XNF_FW_MAX_RULES; i++)
		if (rules[i].in_use)
			v[n++] = &rules[i];
	qsort(v, n, sizeof(*v), rule_cmp);
	for (i = 0; i < n; i++)
		save_line(line_fw_rule(v[i], buf, len));
	free(v);
	return 0;
}

/* Each pair once, from the end with the lower ifindex. */
static void save_xconnects(const struct xnf_conf *c, char *buf, size_t len)
{
	char in[IF_NAMESIZE], out[IF_NAMESIZE];
	const struct xnf_xconnect_ent *e, *peer;
	__u32 i;

	for (i = 0; i < c->nxc; i++) {
		e = &c->xc[i];
		peer = xnf_conf_xc_find(c, e->xc.ifindex);
		if (!peer || peer->xc.ifindex != e->in) {
			print_warn("the cross-connect from %s to %s has no "
				   "way back, so it is not saved; remove it "
				   "with 'xnf xconnect del %s'",
				   fmt_ifname(e->in, in),
				   fmt_ifname(e->xc.ifindex, out), in);
			continue;
		}
		if (e->in < peer->in)
			save_line(line_xconnect(e, peer, buf, len));
	}
}

/* Longer than any line save prints: a route of XNF_NHG_PATHS next hops. */
#define LINE_MAX_LEN 4096

/* A name the kernel allows and xnf refuses (a control character): apply
 * would refuse the line, at the next boot; said now. */
static int save_dev_check(__u32 ifindex)
{
	char name[IF_NAMESIZE], err[256];

	if (!ifindex || !if_indextoname(ifindex, name) ||
	    !xnf_dev_name_check(name, err, sizeof(err)))
		return 0;
	return cli_err("%s, so apply would refuse what save prints: rename the "
		       "device of index %u (ip link set dev NAME name NEWNAME)",
		       err, ifindex);
}

static int save_devs_check(const struct xnf_conf *c)
{
	int ret = 0;
	__u32 i, j;

	for (i = 0; !ret && i < c->nroutes; i++) {
		ret = save_dev_check(c->routes[i].e.rt.ifindex);
		for (j = 0; !ret && j < c->routes[i].npaths; j++)
			ret = save_dev_check(c->routes[i].paths[j].ifindex);
	}
	for (i = 0; !ret && i < c->nfdb; i++)
		ret = save_dev_check(c->fdb[i].e.ifindex);
	for (i = 0; !ret && i < c->nxc; i++)
		ret = save_dev_check(c->xc[i].in);
	for (i = 0; !ret && i < c->nat->n; i++)
		ret = save_dev_check(c->nat->r[i].iif) ?:
			      save_dev_check(c->nat->r[i].oif);
	return ret;
}

int do_save(int argc, char **argv)
{
	struct xnf_conf *c = NULL;
	struct xnf_dp *dp;
	char err[1024], *buf;
	char val[XNF_CONF_VAL_MAX];
	const char *key;
	int ret;
	__u32 i;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		printf("Usage: xnf save\n"
		       "Prints the running configuration as the lines that make "
		       "it: 'xnf apply FILE'\n"
		       "makes a running instance equal to what save printed.\n");
		return 0;
	}
	if (argc > 0)
		return cli_err("'xnf save' takes no arguments, not '%s'",
			       argv[0]);
	dp = cli_dp_read();
	if (!dp)
		return -1;
	buf = malloc(LINE_MAX_LEN);
	if (!buf)
		return cli_err("out of memory");
	ret = xnf_conf_read(dp, &c, err, sizeof(err));
	if (ret) {
		free(buf);
		return cli_err("%s", err);
	}
	if (save_devs_check(c)) {
		xnf_conf_free(c);
		free(buf);
		return -1;
	}
	open_json_doc("xnf/save/1");
	print_uint(PRINT_JSON, "table_schema", NULL, XNF_SCHEMA);
	open_json_array("lines");
	snprintf(buf, LINE_MAX_LEN,
		 "# xnf save (table schema %u): apply with 'xnf apply FILE'",
		 XNF_SCHEMA);
	save_line(buf);
	for (i = 0; !xnf_conf_key(c, i, &key, val, sizeof(val)); i++)
		save_line(line_config(c, i, buf, LINE_MAX_LEN));
	ret = save_fw(c->fw, buf, LINE_MAX_LEN);
	for (i = 0; !ret && i < c->nat->n; i++)
		save_line(line_nat_rule(&c->nat->r[i], buf, LINE_MAX_LEN));
	for (i = 0; !ret && i < c->natt; i++)
		save_line(line_attach(&c->att[i], buf, LINE_MAX_LEN));
	for (i = 0; !ret && i < c->nroutes; i++)
		save_line(line_route(&c->routes[i], buf, LINE_MAX_LEN));
	for (i = 0; !ret && i < c->nfdb; i++)
		save_line(line_fdb(&c->fdb[i], buf, LINE_MAX_LEN));
	if (!ret)
		save_xconnects(c, buf, LINE_MAX_LEN);
	close_json_array();
	close_json_object();
	if (!ret && saved > CLI_TEXT_BYTES)
		ret = cli_err("the configuration is %zu bytes, more than apply "
			      "reads (%u MiB): it would refuse what save printed",
			      saved, CLI_TEXT_BYTES >> 20);
	xnf_conf_free(c);
	free(buf);
	return ret;
}

/* ---- apply ---- */

static void print_changes(const struct xnf_conf_changes *chg)
{
	static const char *const names[] = {
		"attached", "detached", "reattached", "chains",	   "config",
		"firewall", "routes",	"fdb",	      "xconnects", "nat",
	};
	const __u32 vals[] = {
		chg->attached,	chg->detached, chg->reattached, chg->chains,
		chg->config,	chg->firewall, chg->routes,	chg->fdb,
		chg->xconnects, chg->nat,
	};
	__u32 i, total = 0;
	size_t n;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		total += vals[i];
	/* The same words for the change log. */
	n = snprintf(cli.note, sizeof(cli.note), "%u changes", total);
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		if (vals[i] && n < sizeof(cli.note))
			n += snprintf(cli.note + n, sizeof(cli.note) - n,
				      ", %s %u", names[i], vals[i]);
	open_json_doc("xnf/apply/1");
	print_uint(PRINT_JSON, "table_schema", NULL, XNF_SCHEMA);
	print_uint(PRINT_ANY, "changes", "%llu changes", total);
	open_json_object("changed");
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		print_uint(PRINT_JSON, names[i], NULL, vals[i]);
		if (vals[i]) {
			print_text(", %s ", names[i]);
			print_uint(PRINT_FP, NULL, "%llu", vals[i]);
		}
	}
	close_json_object();
	close_json_object();
	print_nl();
}

static const char *const obj_names[] = {
	[XNF_OBJ_CONFIG] = "config",	 [XNF_OBJ_FW_DEFAULT] = "fw_default",
	[XNF_OBJ_FW_RULE] = "fw_rule",	 [XNF_OBJ_ATTACH] = "attach",
	[XNF_OBJ_ROUTE] = "route",	 [XNF_OBJ_FDB] = "fdb",
	[XNF_OBJ_XCONNECT] = "xconnect", [XNF_OBJ_NAT_RULE] = "nat_rule",
};

static const char *const op_names[] = {
	[XNF_OP_ADD] = "add",
	[XNF_OP_REMOVE] = "remove",
	[XNF_OP_CHANGE] = "change",
};

/*
 * apply check: each change a line of the configuration language, as
 * `xnf save` prints the element: "+ LINE" added, "- LINE" removed,
 * "~ LINE  # was: LINE" changed, in the order the commit makes them.
 */
static int print_diff(const struct xnf_conf_diff *d)
{
	static const char marks[] = {
		[XNF_OP_ADD] = '+', [XNF_OP_REMOVE] = '-', [XNF_OP_CHANGE] = '~'
	};
	const struct xnf_conf_change *ch;
	char *line, *was;
	__u32 i;

	line = malloc(LINE_MAX_LEN);
	was = malloc(LINE_MAX_LEN);
	if (!line || !was) {
		free(line);
		free(was);
		return cli_err("out of memory");
	}
	open_json_doc("xnf/diff/1");
	print_uint(PRINT_JSON, "table_schema", NULL, XNF_SCHEMA);
	print_uint(PRINT_JSON, "count", NULL, d->n);
	open_json_array("changes");
	for (i = 0; i < d->n; i++) {
		ch = &d->v[i];
		open_json_object(NULL);
		print_string(PRINT_JSON, "op", NULL, op_names[ch->op]);
		print_string(PRINT_JSON, "object", NULL, obj_names[ch->obj]);
		if (!cli_conf_line(d, ch, ch->op != XNF_OP_REMOVE, line,
				   LINE_MAX_LEN))
			snprintf(line, LINE_MAX_LEN,
				 "# a cross-connect without its way back");
		print_text("%c ", marks[ch->op]);
		print_string(PRINT_ANY, "line", "%s", line);
		if (ch->op == XNF_OP_CHANGE &&
		    cli_conf_line(d, ch, false, was, LINE_MAX_LEN))
			print_string(PRINT_ANY, "was", "  # was: %s", was);
		else
			print_null(PRINT_JSON, "was", NULL);
		close_json_object();
		print_nl();
	}
	close_json_array();
	close_json_object();
	free(line);
	free(was);
	return 0;
}

/* apply check: against what runs, read without a lock (no instance: a
 * fresh one's). */
static int apply_check(const struct xnf_conf *want)
{
	struct xnf_conf_diff *d = NULL;
	struct xnf_dp *dp = NULL;
	char err[1024];
	int ret;

	ret = xnf_open(cli.root, XNF_OPEN_READ, 0, &dp, err, sizeof(err));
	if (ret == -ENOENT)
		dp = NULL;
	else if (ret)
		return cli_err("%s", err);
	ret = xnf_conf_diff(dp, want, &d, err, sizeof(err));
	xnf_dp_close(dp);
	if (ret)
		return cli_err("%s", err);
	ret = print_diff(d);
	xnf_conf_diff_free(d);
	return ret;
}

int do_apply(int argc, char **argv)
{
	struct xnf_conf_changes chg = {};
	struct xnf_conf *outer = cli.cand, *want = NULL;
	bool check = false, defer = cli.defer;
	struct cli_text t = {};
	char what[XNF_CHANGE_TEXT];
	int ret;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		printf("Usage: xnf apply [ check ] { FILE | - }\n"
		       "Makes the running configuration the one FILE describes, "
		       "in the lines of\n"
		       "'xnf save': every line is checked first, and nothing "
		       "changes if one is\n"
		       "wrong; then only the difference is applied, without "
		       "reloading what stays,\n"
		       "all or nothing (even when killed).\n"
		       "check: only print what would change: each change a "
		       "line, '+' added,\n"
		       "'-' removed, '~' changed.\n");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[0], "check")) {
		check = true;
		NEXT_ARG();
	}
	if (argc != 1)
		return cli_err("apply takes one file (xnf apply [check] FILE, '-' "
			       "for stdin); try 'xnf apply help'");
	if (cli_text_read(argv[0], &t))
		return -1;
	if (xnf_conf_new(&want)) {
		free(t.data);
		return cli_err("out of memory");
	}
	/* The file's lines edit its candidate; other commands are refused. */
	cli.cand = want;
	cli.defer = false;
	ret = cli_lines(&t, cli_run);
	cli.cand = outer;
	cli.defer = defer;
	free(t.data);
	if (ret)
		goto out;
	if (check) {
		ret = apply_check(want);
		goto out;
	}
	/* An instance of another table schema (xnf was upgraded) is taken
	 * over: its attachments keep running (XNF_OPEN_UPGRADE). */
	snprintf(what, sizeof(what), "apply %s", argv[0]);
	ret = cli_commit(want, XNF_OPEN_UPGRADE, what, &chg);
	if (!ret)
		print_changes(&chg);
out:
	xnf_conf_free(want);
	return ret;
}
