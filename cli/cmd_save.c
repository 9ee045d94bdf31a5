// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf save: the running configuration in the language of `xnf -b`.
 * xnf apply [check] FILE: makes the running configuration the one FILE
 * describes (include/conf.h).
 *
 * The file is a whole configuration, as an nftables ruleset file is for
 * `nft -f`: its lines are run against an empty configuration in memory,
 * each one checked as the command would check it (devices, neighbours,
 * duplicates), and only when every line is right is the result applied
 * (xnf_conf_apply), changing just the difference.
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

static void save_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void save_line(const char *fmt, ...)
{
	char *line = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (print_json())
		print_string(PRINT_JSON, NULL, NULL, line);
	else
		printf("%s\n", line);
	free(line);
}

static void save_config(const struct xnf_config *cfg)
{
	const char *key, *val;
	size_t i;

	for (i = 0; !cli_cfg_key(i, cfg, &key, &val); i++)
		save_line("config set %s %s", key, val);
}

static int rule_cmp(const void *a, const void *b)
{
	const struct xnf_fw_rule *x = *(const struct xnf_fw_rule *const *)a;
	const struct xnf_fw_rule *y = *(const struct xnf_fw_rule *const *)b;

	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

static int save_fw(const struct xnf_fw_set *set)
{
	const struct xnf_fw_rule *rules = xnf_fw_set_rules(set), **v;
	char text[256];
	__u32 i, n = 0;

	save_line("fw default %s",
		  xnf_fw_set_default(set) == XNF_FW_DROP ? "drop" : "allow");
	v = calloc(xnf_fw_set_count(set) + 1, sizeof(*v));
	if (!v)
		return cli_err("out of memory");
	for (i = 0; i < XNF_FW_MAX_RULES; i++)
		if (rules[i].in_use)
			v[n++] = &rules[i];
	qsort(v, n, sizeof(*v), rule_cmp);
	for (i = 0; i < n; i++)
		save_line("fw add %s",
			  cli_fw_rule_text(v[i], text, sizeof(text)));
	free(v);
	return 0;
}

static void save_attach(const struct xnf_conf_attach *a)
{
	char chain[128], place[64 + 1024] = "", cores[1024];
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
	save_line("attach %s chain %s mode %s %s %s%s", a->dev, chain,
		  a->xdp_flags & XDP_FLAGS_SKB_MODE ? "generic" : "native",
		  a->chain.fused ? "fused" : "tailcall",
		  a->chain.l3_fib ? "fib" : "lpm", place);
}

/* A route through a gateway with the MAC it runs with; a multipath route
 * with its next hops in the configuration's order (sorted). */
static int save_route(const struct xnf_conf_route *r)
{
	char text[256], hop[128];
	char *line = NULL;
	size_t len = 0;
	FILE *f;
	__u32 i;

	if (!r->npaths) {
		save_line("route add %s",
			  cli_route_text(&r->e, text, sizeof(text)));
		return 0;
	}
	f = open_memstream(&line, &len);
	if (!f)
		return cli_err("out of memory");
	fmt_prefix(r->e.family, r->e.addr, r->e.plen, text, sizeof(text));
	fprintf(f, "route add %s", text);
	for (i = 0; i < r->npaths; i++)
		fprintf(f, " nexthop %s",
			cli_nexthop_text(&r->paths[i], hop, sizeof(hop)));
	if (fclose(f)) {
		free(line);
		return cli_err("out of memory");
	}
	save_line("%s", line);
	free(line);
	return 0;
}

/* Each pair once, from the end with the lower ifindex. */
static void save_xconnects(const struct xnf_conf *c)
{
	char in[IF_NAMESIZE], out[IF_NAMESIZE], m1[18], m2[18];
	const struct xnf_xconnect_ent *e, *peer;
	__u32 i, j;

	for (i = 0; i < c->nxc; i++) {
		e = &c->xc[i];
		for (peer = NULL, j = 0; j < c->nxc; j++)
			if (c->xc[j].in == e->xc.ifindex &&
			    c->xc[j].xc.ifindex == e->in)
				peer = &c->xc[j];
		if (!peer) {
			print_warn("the cross-connect from %s to %s has no "
				   "way back, so it is not saved; remove it "
				   "with 'xnf xconnect del %s'",
				   fmt_ifname(e->in, in),
				   fmt_ifname(e->xc.ifindex, out), in);
			continue;
		}
		if (e->in > peer->in)
			continue;
		/* MAC1 is where frames leaving on DEV1 go: the way back. */
		save_line("xconnect add %s %s lladdr %s %s",
			  fmt_ifname(e->in, in), fmt_ifname(peer->in, out),
			  fmt_mac(peer->xc.dmac, m1, sizeof(m1)),
			  fmt_mac(e->xc.dmac, m2, sizeof(m2)));
	}
}

int do_save(int argc, char **argv)
{
	struct xnf_conf *c = NULL;
	struct xnf_dp *dp;
	char err[1024], mac[18], dev[IF_NAMESIZE];
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
	ret = xnf_conf_read(dp, &c, err, sizeof(err));
	if (ret)
		return cli_err("%s", err);
	open_json_doc("xnf/save/1");
	print_uint(PRINT_JSON, "table_schema", NULL, XNF_SCHEMA);
	open_json_array("lines");
	save_line("# xnf save (table schema %u): apply with 'xnf apply FILE'",
		  XNF_SCHEMA);
	save_config(&c->cfg);
	ret = save_fw(c->fw);
	for (i = 0; !ret && i < c->natt; i++)
		save_attach(&c->att[i]);
	for (i = 0; !ret && i < c->nroutes; i++)
		ret = save_route(&c->routes[i]);
	for (i = 0; !ret && i < c->nfdb; i++)
		save_line("fdb add %s dev %s",
			  fmt_mac(c->fdb[i].key.mac, mac, sizeof(mac)),
			  fmt_ifname(c->fdb[i].e.ifindex, dev));
	if (!ret)
		save_xconnects(c);
	close_json_array();
	close_json_object();
	xnf_conf_free(c);
	return ret;
}

static void print_changes(const struct xnf_conf_changes *chg)
{
	static const char *const names[] = {
		"attached", "detached", "reattached", "chains",	   "config",
		"firewall", "routes",	"fdb",	      "xconnects",
	};
	const __u32 vals[] = {
		chg->attached, chg->detached, chg->reattached,
		chg->chains,   chg->config,   chg->firewall,
		chg->routes,   chg->fdb,      chg->xconnects,
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

int do_apply(int argc, char **argv)
{
	struct xnf_conf_changes chg = {};
	struct xnf_conf *want = NULL;
	bool check = false;
	struct cli_text t = {};
	struct xnf_dp *dp;
	char err[1024] = "";
	int ret;

	if (argc > 0 && is_prefix(argv[0], "help")) {
		printf("Usage: xnf apply [ check ] { FILE | - }\n"
		       "Makes the running configuration the one FILE describes, "
		       "in the lines of\n"
		       "'xnf save': every line is checked first, and nothing "
		       "changes if one is\n"
		       "wrong; then only the difference is applied, without "
		       "reloading what stays.\n"
		       "check: only the checks.\n");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[0], "check")) {
		check = true;
		NEXT_ARG();
	}
	if (argc != 1)
		return cli_err("apply takes one file (xnf apply [check] FILE, '-' "
			       "for stdin); try 'xnf apply help'");
	if (cli.conf)
		return cli_conf_other("apply");
	if (cli_text_read(argv[0], &t))
		return -1;
	if (xnf_conf_new(&want)) {
		free(t.data);
		return cli_err("out of memory");
	}
	cli.conf = want;
	ret = cli_lines(&t, cli_run);
	cli.conf = NULL;
	free(t.data);
	if (ret || check)
		goto out;
	/* An instance of another table schema (xnf was upgraded) is taken
	 * over: its attachments keep running (XNF_OPEN_UPGRADE). */
	cli.wrote = true;
	dp = cli.dp;
	if (!dp && xnf_open(cli.root, XNF_OPEN_CREATE | XNF_OPEN_UPGRADE,
			    cli.wait, &cli.dp, err, sizeof(err))) {
		cli.dp = NULL;
		ret = cli_err("%s", err);
		goto out;
	}
	dp = cli.dp;
	ret = xnf_conf_apply(dp, want, &chg, err, sizeof(err));
	if (ret) {
		cli_err("%s", err);
		goto out;
	}
	print_changes(&chg);
out:
	xnf_conf_free(want);
	return ret;
}
