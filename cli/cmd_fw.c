// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xnf fw: the firewall's rules and its default policy.
 *
 * xnf_fw_rules is the source of truth: one slot per rule, as the operator
 * wrote it. Every change edits slots and then calls xnf_fw_commit(), which
 * compiles all rules in use into the inactive generation of the
 * classification tables, switches generations with one 32-bit store and
 * waits for an RCU grace period. So at every moment a packet is classified
 * by one complete rule set, the old one or the new one, never by a mix or
 * a half-written table. When the commit fails before the switch, the
 * active generation is untouched and the slots are put back as they were,
 * so that xnf_fw_rules keeps describing the rules that run.
 *
 * The default policy lives in the header of each compiled generation
 * (xnf_fw_hdr), beside the rules it completes; a change of rules keeps the
 * default of the active generation.
 *
 * Hit counters are per CPU in xnf_fw_hits, indexed by slot. A slot's
 * counter is zeroed before a new rule is published in it: the old rule's
 * last packets were counted before the grace period that ended its
 * removal, so nothing increments it in between.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "cli.h"

#define FW_HELP "see 'xnf fw help'"
#define FW_PRIO_STEP 10

enum {
	KW_PRIO, KW_ALLOW, KW_DROP, KW_PROTO, KW_SRC, KW_DST, KW_SPORT,
	KW_DPORT,
};
static const char *const fw_kws[] = {
	[KW_PRIO] = "prio", [KW_ALLOW] = "allow", [KW_DROP] = "drop",
	[KW_PROTO] = "proto", [KW_SRC] = "src", [KW_DST] = "dst",
	[KW_SPORT] = "sport", [KW_DPORT] = "dport", NULL,
};

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

/* All slots of xnf_fw_rules, by slot, into a new array. */
/*
 * In a batch (xnf -b), rule changes are collected and compiled once at the
 * end (cli_fw_flush): a batch of N rules is one rule-set switch, not N
 * compilations of up to 10,240 rules. The slots are cached meanwhile, and
 * the table as it was before the batch is kept to restore if the final
 * compilation fails.
 */
static struct {
	struct xnf_fw_rule *cache;     /* the slots, as written so far */
	struct xnf_fw_rule *before;    /* the slots before the batch */
	bool pending;                  /* changes not compiled yet */
	__u32 def;                     /* default policy to compile with */
} fw_batch;

static int fw_active_gen(struct xnf_dp *dp, __u32 *gen)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(dp->fd[XNF_T_FW_ACTIVE], &zero, gen))
		return -errno;
	*gen &= 1;
	return 0;
}

static int fw_rules_read(struct xnf_dp *dp, struct xnf_fw_rule *rules)
{
	__u32 i;

	for (i = 0; i < XNF_FW_MAX_RULES; i++)
		if (bpf_map_lookup_elem(dp->fd[XNF_T_FW_RULES], &i, &rules[i]))
			return cli_err("cannot read slot %u of %s: %s", i,
				       XNF_MAP_STR(XNF_MAP_FW_RULES), strerror(errno));
	return 0;
}

/*
 * A change killed between writing xnf_fw_rules and switching to the set
 * compiled from it leaves the slots and the running rules apart. This
 * brings them together again before anything reads the slots (under the
 * instance lock): a slot in use that the running set lacks was never
 * committed, its command did not succeed, so it is cleared; a slot the
 * running set still uses but that is no longer in use was deleted by a
 * command that did not finish, so the set is compiled again.
 */
static int fw_recover(struct xnf_dp *dp)
{
	struct xnf_fw_rule *rules = NULL, empty = {};
	bool *live = NULL, stale_del = false;
	struct xnf_fw_match m;
	struct xnf_fw_hdr hdr;
	__u32 gen, i, key;
	int err = -1;

	rules = malloc(XNF_FW_MAX_RULES * sizeof(*rules));
	live = calloc(XNF_FW_MAX_RULES, sizeof(*live));
	if (!rules || !live) {
		cli_err("out of memory");
		goto out;
	}
	if (fw_rules_read(dp, rules))
		goto out;
	if (fw_active_gen(dp, &gen) ||
	    bpf_map_lookup_elem(dp->fd[XNF_T_FW_HDR], &gen, &hdr)) {
		cli_err("cannot read the running firewall (%s)", XNF_MAP_STR(XNF_MAP_FW_HDR));
		goto out;
	}
	for (i = 0; i < hdr.nrules && i < XNF_FW_MAX_RULES; i++) {
		key = gen * XNF_FW_MAX_RULES + i;
		if (!bpf_map_lookup_elem(dp->fd[XNF_T_FW_ORDER], &key, &m) &&
		    m.slot < XNF_FW_MAX_RULES)
			live[m.slot] = true;
	}
	for (i = 0; i < XNF_FW_MAX_RULES; i++) {
		if (rules[i].in_use && !live[i] &&
		    bpf_map_update_elem(dp->fd[XNF_T_FW_RULES], &i, &empty, BPF_ANY)) {
			cli_err("cannot clear uncommitted slot %u of %s: %s", i,
				XNF_MAP_STR(XNF_MAP_FW_RULES), strerror(errno));
			goto out;
		}
		stale_del |= live[i] && !rules[i].in_use;
	}
	err = stale_del ? xnf_fw_commit(dp, hdr.default_action) : 0;
	if (err)
		cli_err("cannot finish an interrupted firewall change: %s",
			strerror(-err));
out:
	free(live);
	free(rules);
	return err ? -1 : 0;
}

static int fw_rules_load(struct xnf_dp *dp, struct xnf_fw_rule **out)
{
	size_t size = XNF_FW_MAX_RULES * sizeof(struct xnf_fw_rule);
	struct xnf_fw_rule *rules;

	if (!fw_batch.cache && fw_recover(dp))
		return -1;
	if (cli.batch && !fw_batch.cache) {
		fw_batch.cache = malloc(size);
		if (!fw_batch.cache || fw_rules_read(dp, fw_batch.cache)) {
			free(fw_batch.cache);
			fw_batch.cache = NULL;
			return cli_err("cannot cache %s for the batch", XNF_MAP_STR(XNF_MAP_FW_RULES));
		}
	}
	rules = malloc(size);
	if (!rules)
		return cli_err("out of memory reading %s", XNF_MAP_STR(XNF_MAP_FW_RULES));
	if (fw_batch.cache)
		memcpy(rules, fw_batch.cache, size);
	else if (fw_rules_read(dp, rules)) {
		free(rules);
		return -1;
	}
	*out = rules;
	return 0;
}

static int fw_slot_write(struct xnf_dp *dp, __u32 slot,
			 const struct xnf_fw_rule *r)
{
	if (bpf_map_update_elem(dp->fd[XNF_T_FW_RULES], &slot, r, BPF_ANY))
		return -errno;
	if (fw_batch.cache)
		fw_batch.cache[slot] = *r;
	return 0;
}


/* The default policy of the rule set the dataplane runs now. */
static int fw_default_get(struct xnf_dp *dp, __u32 *act)
{
	struct xnf_fw_hdr hdr;
	__u32 gen;
	int err;

	if (fw_batch.pending) {
		*act = fw_batch.def;
		return 0;
	}
	err = fw_active_gen(dp, &gen);
	if (!err && bpf_map_lookup_elem(dp->fd[XNF_T_FW_HDR], &gen, &hdr))
		err = -errno;
	if (err)
		return cli_err("cannot read the firewall's default policy (%s, "
			       "%s): %s", XNF_MAP_STR(XNF_MAP_FW_ACTIVE), XNF_MAP_STR(XNF_MAP_FW_HDR),
			       strerror(-err));
	*act = hdr.default_action;
	return 0;
}

/* Compiles the slots and switches the dataplane to them. On failure the
 * @n slots in @slot[] get their @saved contents back (the caller changed
 * exactly those) and the error is explained. */
static int fw_commit(struct xnf_dp *dp, __u32 def, const __u32 *slot,
		     const struct xnf_fw_rule *saved, size_t n)
{
	__u32 before, after;
	int err, gen_err;
	size_t i;

	if (cli.batch && fw_batch.cache) {
		if (!fw_batch.before) {
			fw_batch.before = malloc(XNF_FW_MAX_RULES *
						 sizeof(*fw_batch.before));
			if (!fw_batch.before)
				return cli_err("out of memory");
			memcpy(fw_batch.before, fw_batch.cache,
			       XNF_FW_MAX_RULES * sizeof(*fw_batch.before));
			for (i = 0; i < n; i++)
				fw_batch.before[slot[i]] = saved[i];
		}
		fw_batch.pending = true;
		fw_batch.def = def;
		return 0;
	}
	gen_err = fw_active_gen(dp, &before);
	err = xnf_fw_commit(dp, def);
	if (!err)
		return 0;
	/* Only the wait for the grace period can fail after the switch
	 * (libxnf warned about it): then the new rules run, and stay. */
	if (!gen_err && !fw_active_gen(dp, &after) && after != before)
		return 0;
	for (i = 0; i < n; i++) {
		int rerr = fw_slot_write(dp, slot[i], &saved[i]);

		if (rerr)
			cli_err("cannot restore slot %u of %s: %s; the rules that "
				"run are not those it lists, fix it by repeating "
				"the command", slot[i], XNF_MAP_STR(XNF_MAP_FW_RULES),
				strerror(-rerr));
	}
	if (err == -ENOSPC)
		return cli_err("firewall full: the rule set needs more "
			       "classification classes than the tables hold; "
			       "remove rules or merge ranges");
	if (err == -ENOMEM)
		return cli_err("out of memory compiling the firewall; nothing "
			       "was changed");
	if (err == -EINVAL)
		return cli_err("the firewall rules in %s do not compile (see the "
			       "message above); nothing was changed, delete the "
			       "rule it names", XNF_MAP_STR(XNF_MAP_FW_RULES));
	return cli_err("cannot write the compiled firewall: %s; the previous "
		       "rules stay active, nothing was changed", strerror(-err));
}

/* Zeroes the per-CPU hit counter of @slot. */
static int fw_hits_zero(struct xnf_dp *dp, __u32 slot)
{
	struct xnf_fw_hit *zero;
	int ncpus = xnf_ncpus(), err;

	if (ncpus < 0)
		return ncpus;
	zero = calloc(ncpus, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	err = bpf_map_update_elem(dp->fd[XNF_T_FW_HITS], &slot, zero, BPF_ANY) ?
		-errno : 0;
	free(zero);
	return err;
}

/* The per-CPU hit counters of @slot, summed. */
static int fw_hits_sum(struct xnf_dp *dp, __u32 slot, struct xnf_fw_hit *sum,
		       struct xnf_fw_hit *percpu, int ncpus)
{
	int i;

	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(dp->fd[XNF_T_FW_HITS], &slot, percpu))
		return -errno;
	for (i = 0; i < ncpus; i++) {
		sum->packets += percpu[i].packets;
		sum->bytes += percpu[i].bytes;
	}
	return 0;
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
			       "IPv6", what, s, family == XNF_AF_INET ? "IPv4" :
			       "IPv6", *other, r->family == XNF_AF_INET ?
			       "IPv4" : "IPv6");
	r->family = family;
	memcpy(addr, buf, 16);
	*len = plen;
	*other = s;
	return 0;
}

/* Parses the match and action of 'fw add' into @r; *@prio_given says
 * whether r->prio came from the command line. */
static int fw_parse_rule(int argc, char **argv, struct xnf_fw_rule *r,
			 bool *prio_given)
{
	const char *pfx = NULL;
	char msg[256];
	unsigned int seen = 0;
	int kw;

	memset(r, 0, sizeof(*r));
	*prio_given = false;
	for (; argc > 0; NEXT_ARG()) {
		kw = fw_keyword(argv[0]);
		if (kw < 0)
			return -1;
		if ((kw == KW_ALLOW || kw == KW_DROP) &&
		    (seen & (1u << KW_ALLOW | 1u << KW_DROP)))
			return cli_err("a rule has one action: allow or drop, "
				       "not both");
		if (seen & (1u << kw))
			return cli_err("'%s' given twice; %s", fw_kws[kw], FW_HELP);
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
			if (fw_set_prefix(argv[0], "src", r, r->src, &r->src_len,
					  &pfx))
				return -1;
			r->flags |= XNF_FW_F_SRC;
			break;
		case KW_DST:
			if (fw_set_prefix(argv[0], "dst", r, r->dst, &r->dst_len,
					  &pfx))
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
		}
	}
	if (!(seen & (1u << KW_ALLOW | 1u << KW_DROP)))
		return cli_err("missing action: say allow or drop; %s", FW_HELP);
	if (xnf_fw_rule_check(r, msg, sizeof(msg)))
		return cli_err("invalid rule: %s", msg);
	r->in_use = 1;
	return 0;
}

static int do_fw_add(int argc, char **argv)
{
	struct xnf_fw_rule r, *rules = NULL, saved;
	__u32 i, slot = XNF_FW_MAX_RULES, max_prio = 0, def;
	bool prio_given, any = false;
	struct xnf_dp *dp;
	int err;

	if (fw_parse_rule(argc, argv, &r, &prio_given))
		return -1;
	dp = cli_dp(true);
	if (!dp || fw_default_get(dp, &def) || fw_rules_load(dp, &rules))
		return -1;
	for (i = 0; i < XNF_FW_MAX_RULES; i++) {
		if (!rules[i].in_use) {
			if (slot == XNF_FW_MAX_RULES)
				slot = i;
			continue;
		}
		if (prio_given && rules[i].prio == r.prio) {
			free(rules);
			return cli_err("a rule with prio %u exists; choose another "
				       "prio, or delete it first with 'xnf fw del "
				       "prio %u'", r.prio, r.prio);
		}
		if (!any || rules[i].prio > max_prio)
			max_prio = rules[i].prio;
		any = true;
	}
	if (slot == XNF_FW_MAX_RULES) {
		free(rules);
		return cli_err("firewall full (%u rules); delete rules with 'xnf fw "
			       "del prio N' first", XNF_FW_MAX_RULES);
	}
	saved = rules[slot];
	free(rules);
	if (!prio_given) {
		if (any && max_prio > 0xffffffffU - FW_PRIO_STEP)
			return cli_err("no prio above %u is left for the rule; give "
				       "it one with 'prio N'", max_prio);
		r.prio = any ? max_prio + FW_PRIO_STEP : FW_PRIO_STEP;
	}

	/* The counter first, so that the rule starts from zero once it is
	 * published; then the slot; then the switch. */
	err = fw_hits_zero(dp, slot);
	if (err)
		return cli_err("cannot zero the hit counters of slot %u (%s): %s",
			       slot, XNF_MAP_STR(XNF_MAP_FW_HITS), strerror(-err));
	err = fw_slot_write(dp, slot, &r);
	if (err)
		return cli_err("cannot write slot %u of %s: %s", slot,
			       XNF_MAP_STR(XNF_MAP_FW_RULES), strerror(-err));
	return fw_commit(dp, def, &slot, &saved, 1);
}

static int do_fw_del(int argc, char **argv)
{
	struct xnf_fw_rule *rules = NULL, saved, empty = {};
	__u32 prio, slot, def;
	struct xnf_dp *dp;
	int err;

	if (argc != 2 || !is_prefix(argv[0], "prio"))
		return cli_err("usage: xnf fw del prio N; %s", FW_HELP);
	if (parse_u32(argv[1], "prio", &prio))
		return -1;
	dp = cli_dp(true);
	if (!dp || fw_default_get(dp, &def) || fw_rules_load(dp, &rules))
		return -1;
	for (slot = 0; slot < XNF_FW_MAX_RULES; slot++)
		if (rules[slot].in_use && rules[slot].prio == prio)
			break;
	if (slot == XNF_FW_MAX_RULES) {
		free(rules);
		return cli_err("no rule with prio %u; 'xnf fw show' lists the "
			       "rules", prio);
	}
	saved = rules[slot];
	free(rules);
	err = fw_slot_write(dp, slot, &empty);
	if (err)
		return cli_err("cannot clear slot %u of %s: %s", slot,
			       XNF_MAP_STR(XNF_MAP_FW_RULES), strerror(-err));
	return fw_commit(dp, def, &slot, &saved, 1);
}

static int do_fw_default(int argc, char **argv)
{
	struct xnf_dp *dp;
	__u32 act;

	if (argc != 1)
		return cli_err("usage: xnf fw default { allow | drop }");
	if (fw_parse_action(argv[0], &act))
		return -1;
	dp = cli_dp(true);
	if (!dp)
		return -1;
	/* The rules stay; the recompiled set carries the new default. */
	return fw_commit(dp, act, NULL, NULL, 0);
}

static int do_fw_flush(int argc, char **argv)
{
	struct xnf_fw_rule *rules = NULL, *saved = NULL, empty = {};
	__u32 *slot = NULL, i, def;
	struct xnf_dp *dp;
	size_t n = 0, k;
	int err = 0;

	if (argc > 0)
		return cli_err("'xnf fw flush' takes no arguments, not '%s'",
			       argv[0]);
	dp = cli_dp(true);
	if (!dp || fw_default_get(dp, &def) || fw_rules_load(dp, &rules))
		return -1;
	slot = calloc(XNF_FW_MAX_RULES, sizeof(*slot));
	saved = calloc(XNF_FW_MAX_RULES, sizeof(*saved));
	if (!slot || !saved) {
		err = cli_err("out of memory");
		goto out;
	}
	for (i = 0; i < XNF_FW_MAX_RULES; i++) {
		if (!rules[i].in_use)
			continue;
		slot[n] = i;
		saved[n++] = rules[i];
	}
	for (k = 0; k < n; k++) {
		err = fw_slot_write(dp, slot[k], &empty);
		if (err) {
			cli_err("cannot clear slot %u of %s: %s", slot[k],
				XNF_MAP_STR(XNF_MAP_FW_RULES), strerror(-err));
			/* Put back what was cleared; nothing was compiled. */
			while (k--)
				fw_slot_write(dp, slot[k], &saved[k]);
			err = -1;
			goto out;
		}
	}
	err = fw_commit(dp, def, slot, saved, n);
out:
	free(saved);
	free(slot);
	free(rules);
	return err;
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

static void fw_print_rule(const struct xnf_fw_rule *r,
			  const struct xnf_fw_hit *hit)
{
	char proto[32], src[INET6_ADDRSTRLEN + 5], dst[INET6_ADDRSTRLEN + 5];
	char sport[12], dport[12];
	const char *p = NULL, *s = NULL, *d = NULL, *sp = NULL, *dp = NULL;

	if (r->flags & XNF_FW_F_PROTO)
		p = fmt_proto(r->proto, proto, sizeof(proto));
	if (r->flags & XNF_FW_F_SRC)
		s = fmt_prefix(r->family, r->src, r->src_len, src, sizeof(src));
	if (r->flags & XNF_FW_F_DST)
		d = fmt_prefix(r->family, r->dst, r->dst_len, dst, sizeof(dst));
	if (r->flags & XNF_FW_F_SPORT)
		sp = fw_fmt_ports(r->sport_lo, r->sport_hi, sport, sizeof(sport));
	if (r->flags & XNF_FW_F_DPORT)
		dp = fw_fmt_ports(r->dport_lo, r->dport_hi, dport, sizeof(dport));

	if (cli.json) {
		const char *const keys[] = { "proto", "src", "dst", "sport", "dport" };
		const char *const vals[] = { p, s, d, sp, dp };
		size_t i;

		jw_object(NULL);
		jw_uint("prio", r->prio);
		jw_string("action", fw_action_name(r->action));
		for (i = 0; i < 5; i++) {
			if (vals[i])
				jw_string(keys[i], vals[i]);
			else
				jw_null(keys[i]);
		}
		jw_uint("packets", hit->packets);
		jw_uint("bytes", hit->bytes);
		jw_end_object();
		return;
	}
	/* The words of 'xnf fw add', so a line can be typed back. */
	printf("prio %u %s", r->prio, fw_action_name(r->action));
	if (p)
		printf(" proto %s", p);
	if (s)
		printf(" src %s", s);
	if (d)
		printf(" dst %s", d);
	if (sp)
		printf(" sport %s", sp);
	if (dp)
		printf(" dport %s", dp);
	printf("  packets %llu bytes %llu\n", (unsigned long long)hit->packets,
	       (unsigned long long)hit->bytes);
}

static int do_fw_show(int argc, char **argv)
{
	struct xnf_fw_rule *rules = NULL, **order = NULL;
	struct xnf_fw_hit *percpu = NULL, *hits = NULL;
	__u32 i, n = 0, def;
	struct xnf_dp *dp;
	int ncpus, err = 0;

	if (argc > 0)
		return cli_err("'xnf fw show' takes no arguments, not '%s'",
			       argv[0]);
	dp = cli_dp(false);
	if (!dp || fw_default_get(dp, &def) || fw_rules_load(dp, &rules))
		return -1;
	ncpus = xnf_ncpus();
	if (ncpus < 0) {
		err = cli_err("cannot count the possible CPUs: %s",
			      strerror(-ncpus));
		goto out;
	}
	order = calloc(XNF_FW_MAX_RULES, sizeof(*order));
	hits = calloc(XNF_FW_MAX_RULES, sizeof(*hits));
	percpu = calloc(ncpus, sizeof(*percpu));
	if (!order || !hits || !percpu) {
		err = cli_err("out of memory");
		goto out;
	}
	for (i = 0; i < XNF_FW_MAX_RULES; i++)
		if (rules[i].in_use)
			order[n++] = &rules[i];
	if (n)
		qsort(order, n, sizeof(*order), fw_prio_cmp);
	for (i = 0; i < n; i++) {
		__u32 slot = order[i] - rules;

		err = fw_hits_sum(dp, slot, &hits[i], percpu, ncpus);
		if (err) {
			err = cli_err("cannot read the hit counters of slot %u (%s): "
				      "%s", slot, XNF_MAP_STR(XNF_MAP_FW_HITS), strerror(-err));
			goto out;
		}
	}
	if (cli.json) {
		jw_object(NULL);
		jw_string("default", fw_action_name(def));
		jw_array("rules");
	} else {
		printf("default %s\n", fw_action_name(def));
	}
	for (i = 0; i < n; i++)
		fw_print_rule(order[i], &hits[i]);
	if (cli.json) {
		jw_end_array();
		jw_end_object();
	}
out:
	free(percpu);
	free(hits);
	free(order);
	free(rules);
	return err;
}

static int do_fw_help(int argc, char **argv)
{
	fprintf(stderr,
"Usage: xnf fw add [ prio N ] { allow | drop } [ proto PROTO ]\n"
"                  [ src PREFIX ] [ dst PREFIX ] [ sport PORTS ] [ dport PORTS ]\n"
"       xnf fw del prio N\n"
"       xnf fw default { allow | drop }\n"
"       xnf fw flush\n"
"       xnf fw [ show ]\n"
"       xnf fw help\n"
"PROTO  := { tcp | udp | sctp | icmp | icmpv6 | NUMBER }\n"
"PREFIX := ADDR[/LEN]     src and dst of one rule are of one family\n"
"PORTS  := PORT[-PORT]    0..65535; with proto tcp, udp or sctp, or with no\n"
"                         proto (then only packets whose ports can be read\n"
"                         match: not ICMP, not later fragments)\n"
"Rules are tried by ascending prio, the first match decides; a packet no\n"
"rule matches gets the default policy. prio defaults to the highest in use\n"
"plus %d (%d for the first rule) and must be unique. flush removes the\n"
"rules and keeps the default. Each change switches the dataplane from the\n"
"complete old rule set to the complete new one in one step.\n",
		FW_PRIO_STEP, FW_PRIO_STEP);
	return 0;
}

int cli_fw_flush(void)
{
	__u32 i, n = 0, *slot = NULL;
	int err = 0;

	if (fw_batch.pending) {
		fw_batch.pending = false;
		slot = calloc(XNF_FW_MAX_RULES, sizeof(*slot));
		if (!slot) {
			err = cli_err("out of memory");
			goto out;
		}
		/* The slots the batch changed, and what they held before. */
		for (i = 0; i < XNF_FW_MAX_RULES; i++) {
			if (memcmp(&fw_batch.before[i], &fw_batch.cache[i],
				   sizeof(fw_batch.before[i]))) {
				slot[n] = i;
				fw_batch.before[n++] = fw_batch.before[i];
			}
		}
		cli.batch = false;
		err = fw_commit(cli.dp, fw_batch.def, slot, fw_batch.before, n);
	}
out:
	free(slot);
	free(fw_batch.before);
	free(fw_batch.cache);
	memset(&fw_batch, 0, sizeof(fw_batch));
	return err;
}

int do_fw(int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", do_fw_show },
		{ "list", do_fw_show },
		{ "add", do_fw_add },
		{ "del", do_fw_del },
		{ "default", do_fw_default },
		{ "flush", do_fw_flush },
		{ "help", do_fw_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cmds, "fw", argc, argv);
}
