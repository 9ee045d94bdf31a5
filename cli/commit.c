// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * How the command line changes xnf: every configuration command edits a
 * candidate, and one library call commits it (include/conf.h).
 *
 *   xnf CMD        a one-line candidate over what runs, committed at once;
 *   xnf -b FILE    the running configuration plus the file's configuration
 *                  lines, committed once; its other lines (show, stats,
 *                  ...) run after the commit, in order;
 *   xnf apply FILE the file, a whole configuration, committed once
 *                  (cmd_save.c).
 *
 * The handlers of the configuration commands only parse their words and
 * call the library's edit; what is refused and why is the library's, the
 * CLI adds what to type.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>

#include "cli.h"

/* The instance to commit to, opened for writing and created if there is
 * none: the one cli_edit() or the batch opened, or a new one. */
static struct xnf_dp *commit_dp(unsigned int flags)
{
	char err[1024];

	cli.wrote = true;
	if (cli.dp && !xnf_dp_reader(cli.dp))
		return cli.dp;
	xnf_dp_close(cli.dp);
	cli.dp = NULL;
	if (xnf_open(cli.root, XNF_OPEN_CREATE | flags, cli.wait, &cli.dp, err,
		     sizeof(err))) {
		cli.dp = NULL;
		cli_err("%s", err);
	}
	return cli.dp;
}

/* What to type about a commit that failed at its change @obj, @op with
 * @ret, or "": after whatever the library said, so a sentence of its
 * own. */
static const char *commit_hint(int obj, int op, int ret)
{
	bool full = ret == -E2BIG || ret == -ENOSPC || ret == -ENOMEM;

	switch (obj) {
	case XNF_OBJ_ROUTE:
		if (ret == -EBUSY)
			return " ('xnf route sync flush' takes the routes back from the sync)";
		if (full)
			return " ('xnf route del PREFIX' deletes a route)";
		break;
	case XNF_OBJ_FDB:
		if (full)
			return " ('xnf fdb del MAC' deletes an entry)";
		break;
	case XNF_OBJ_XCONNECT:
		if (ret == -EBUSY)
			return " ('xnf xconnect del DEV' removes a pair)";
		break;
	case XNF_OBJ_ATTACH:
		if (op == XNF_OP_ADD && ret == -EBUSY)
			return " ('xnf chain set DEV NF[,NF...]' changes xnf's chain)";
		if (op == XNF_OP_ADD && ret == -EEXIST)
			return " ('xnf detach DEV' detaches it)";
		break;
	}
	return "";
}

/* The egress ports of the change @ch into @out: a route's next hops, an
 * FDB entry's port, both ends of a cross-connect, an attached device. */
static __u32 change_ports(const struct xnf_conf_change *ch, __u32 *out)
{
	const struct xnf_conf_route *r = ch->new;
	const struct xnf_xconnect_ent *xc = ch->new;
	const struct xnf_fdb_ent *e = ch->new;
	const struct xnf_conf_attach *a = ch->new;
	__u32 i, n = 0;

	if (ch->op == XNF_OP_REMOVE)
		return 0;
	switch (ch->obj) {
	case XNF_OBJ_ROUTE:
		if (!r->npaths && r->e.rt.type == XNF_RT_UNICAST)
			out[n++] = r->e.rt.ifindex;
		for (i = 0; i < r->npaths; i++)
			if (r->paths[i].type == XNF_RT_UNICAST)
				out[n++] = r->paths[i].ifindex;
		break;
	case XNF_OBJ_FDB:
		out[n++] = e->e.ifindex;
		break;
	case XNF_OBJ_XCONNECT:
		out[n++] = xc->in;
		out[n++] = xc->xc.ifindex;
		break;
	case XNF_OBJ_ATTACH:
		if (ch->op == XNF_OP_ADD && !xnf_dev_ifindex(a->dev, &i, NULL, 0))
			out[n++] = i;
		break;
	default:
		break;
	}
	return n;
}

/* Frames the kernel would lose on the devices the commit attached or made
 * egress ports of a route, an FDB entry or a cross-connect: said once per
 * device, as xnf cannot forward them. */
static void commit_warnings(const struct xnf_conf_diff *d, void *arg)
{
	__u32 ports[XNF_NHG_PATHS], seen[XNF_MAX_PORTS], nseen = 0, i, j, k, n;
	char msg[1024], name[IF_NAMESIZE];
	const struct xnf_conf_attach *a;

	for (i = 0; i < d->n; i++) {
		n = change_ports(&d->v[i], ports);
		for (j = 0; j < n; j++) {
			for (k = 0; k < nseen && seen[k] != ports[j]; k++)
				;
			if (k < nseen || !if_indextoname(ports[j], name))
				continue;
			if (nseen < XNF_MAX_PORTS)
				seen[nseen++] = ports[j];
			/* What xnf redirects to it would be lost. */
			if (xnf_egress_check(name, ports[j], msg, sizeof(msg)) > 0)
				print_warn("%s", msg);
		}
		/* And what an attached device receives would leave with
		 * wrong checksums. */
		a = d->v[i].new;
		if (d->v[i].obj == XNF_OBJ_ATTACH && n &&
		    xnf_sender_check(a->dev, msg, sizeof(msg)) > 0)
			print_warn("%s", msg);
	}
}

int cli_commit(const struct xnf_conf *c, unsigned int flags, const char *what,
	       struct xnf_conf_changes *chg)
{
	struct xnf_commit_opts o = { .cmd = what, .done = commit_warnings };
	struct xnf_commit_result res;
	struct xnf_dp *dp;
	char err[1024] = "";
	int ret;

	/* No instance, and nothing that would make one differ from a fresh
	 * one (detach all, a default that is the default): none is made. */
	if (!cli.dp && !flags && xnf_conf_fresh(c))
		return 0;
	dp = commit_dp(flags);
	if (!dp)
		return -1;
	err[0] = '\0';
	ret = xnf_conf_commit(dp, c, &o, &res, err, sizeof(err));
	if (chg)
		*chg = res.done;
	if (res.destroyed) {
		xnf_dp_close(cli.dp);
		cli.dp = NULL;
	}
	if (ret)
		return cli_err("%s%s", err,
			       commit_hint(res.failed_obj, res.failed_op, ret));
	return 0;
}

static int batch_note(void)
{
	struct cli_batch *b = cli.batch_run;
	char **l = realloc(b->lines, (b->nlines + 1) * sizeof(*l));

	if (!l)
		return cli_err("out of memory");
	b->lines = l;
	l[b->nlines] = strdup(cli_cmd_text());
	if (!l[b->nlines])
		return cli_err("out of memory");
	b->nlines++;
	return 0;
}

int cli_defer(const char *what)
{
	struct cli_batch *b = cli.batch_run;
	int *l;

	if (!cli.defer)
		return cli_err("'%s' is not a configuration command: a configuration file holds attach, detach, chain set, route, fw, fdb, xconnect, config set and destroy lines; run it with 'xnf -b FILE'",
			       what);
	l = realloc(b->later, (b->nlater + 1) * sizeof(*l));
	if (!l)
		return cli_err("out of memory");
	b->later = l;
	l[b->nlater++] = cli.batch_line;
	return 0;
}

/* The instance a one-line candidate is made over: NULL and 0 when there
 * is none yet (the commit makes it), -1 after an error. A command that
 * reaches an instance is in its change log, refused or not. */
static int edit_dp(bool existing, struct xnf_dp **dp)
{
	if (existing) {
		*dp = cli_dp(false);
		return *dp ? 0 : -1;
	}
	if (cli_dp_if_any(dp))
		return -1;
	cli.wrote = *dp;
	return 0;
}

struct xnf_conf *cli_candidate(void)
{
	struct xnf_dp *dp;

	if (cli.cand)
		return cli.cand;
	if (edit_dp(cli.existing, &dp))
		return NULL;
	if (xnf_conf_running(dp, &cli.cand)) {
		cli_err("out of memory");
		return NULL;
	}
	return cli.cand;
}

int cli_edit(const struct cli_cmd *cmd, int argc, char **argv)
{
	int ret;

	if (cli.cand) {
		ret = cmd->fn(argc, argv);
		return !ret && cli.defer ? batch_note() : ret;
	}
	/* A one-line candidate: made when the command asks for it, after
	 * its words were read (cli_candidate), and committed here. */
	cli.existing = cmd->flags & CLI_EXISTING;
	ret = cmd->fn(argc, argv);
	if (!ret && cli.cand)
		ret = cli_commit(cli.cand, 0, cli_cmd_text(), NULL);
	xnf_conf_free(cli.cand);
	cli.cand = NULL;
	cli.existing = false;
	return ret;
}

static int run_later(int argc, char **argv)
{
	const struct cli_batch *b = cli.batch_run;
	__u32 i;

	for (i = 0; i < b->nlater; i++)
		if (b->later[i] == cli.batch_line)
			return cli_run(argc, argv);
	return 0;
}

/*
 * xnf -b FILE. The input is read whole first, without the lock: a batch
 * fed slowly through a pipe keeps no writer waiting. Then the lock is
 * taken, the candidate is made over what runs then, and the lock is kept
 * to the end. Its configuration lines are logged one by one once they
 * run; a commit that failed is logged as the batch's.
 */
int cli_batch(const char *file)
{
	struct cli_batch b = {}, *outer = cli.batch_run;
	struct cli_text t = {};
	struct xnf_dp *dp;
	char cmd[XNF_CHANGE_TEXT];
	__u32 i;
	int ret;

	cli.batch = true;
	snprintf(cmd, sizeof(cmd), "-b %s", file);
	ret = cli_text_read(file, &t) ?: cli_dp_if_any(&dp);
	if (!ret && xnf_conf_running(dp, &cli.cand))
		ret = cli_err("out of memory");
	if (ret)
		goto out;
	cli.batch_run = &b;
	cli.defer = true;
	ret = cli_lines(&t, cli_run);
	cli.defer = false;
	if (!ret && b.nlines) {
		ret = cli_commit(cli.cand, 0, cmd, NULL);
		if (ret)
			xnf_change_log(cli.dp, XNF_CHANGE_COMMAND, cmd, true,
				       cli.last_err);
		for (i = 0; !ret && i < b.nlines; i++)
			xnf_change_log(cli.dp, XNF_CHANGE_COMMAND, b.lines[i],
				       false, "");
	}
	xnf_conf_free(cli.cand);
	cli.cand = NULL;
	if (!ret && b.nlater)
		ret = cli_lines(&t, run_later);
out:
	xnf_conf_free(cli.cand);
	cli.cand = NULL;
	cli.batch_run = outer;
	for (i = 0; i < b.nlines; i++)
		free(b.lines[i]);
	free(b.lines);
	free(b.later);
	free(t.data);
	return ret;
}
