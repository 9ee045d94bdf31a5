// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fw_set.c - the firewall's rule sets: reading the one that runs, editing
 * one in memory, and applying one as a whole.
 *
 * A rule set lives in one generation of the pinned tables: its rules in
 * xnf_fw_rules[gen * XNF_FW_MAX_RULES + slot], its default policy in
 * xnf_fw_hdr[gen], beside the tables compiled from them. xnf_fw_apply()
 * writes all of it into the inactive generation and switches with one
 * write of xnf_fw_active, so the active generation is always whole: no
 * recovery is needed after a kill, and readers never write.
 *
 * Readers check that what they read is one set: the active generation and
 * the serial in its header (moved by every apply) are read before and
 * after the rules; a writer that switched meanwhile moves one of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>

#include "xnf.h"
#include "fw_priv.h"

#define FW_READ_TRIES 20

struct fw_active {
	__u32 gen;
	struct xnf_fw_hdr hdr;
};

/*
 * The slots, and what makes an add O(1) in the usual case of a batch that
 * appends rules of rising prio (otherwise one pass over the used slots):
 * how many are in use, where the empty tail begins, and the highest prio.
 */
struct xnf_fw_set {
	__u32 default_action; /* enum xnf_fw_action */
	__u32 nrules;	      /* slots in use */
	__u32 top;	      /* slots from here on are empty */
	__u32 last;	      /* highest prio in use, if nrules */
	bool last_stale;      /* a rule of prio last went away */
	bool tables_only;     /* never the linear form */
	struct xnf_fw_rule rules[XNF_FW_MAX_RULES];
};

struct xnf_fw_set *xnf_fw_set_new(void)
{
	return calloc(1, sizeof(struct xnf_fw_set));
}

/* nrules, top and last from the slots. */
static void fw_set_index(struct xnf_fw_set *set)
{
	__u32 i;

	set->nrules = set->top = set->last = 0;
	set->last_stale = false;
	for (i = 0; i < XNF_FW_MAX_RULES; i++) {
		if (!set->rules[i].in_use)
			continue;
		if (!set->nrules || set->rules[i].prio > set->last)
			set->last = set->rules[i].prio;
		set->nrules++;
		set->top = i + 1;
	}
}

static bool fw_set_prio_taken(const struct xnf_fw_set *set, __u32 prio,
			      __u32 except)
{
	__u32 i;

	if (!set->nrules || (!set->last_stale && prio > set->last))
		return false;
	for (i = 0; i < set->top; i++)
		if (i != except && set->rules[i].in_use &&
		    set->rules[i].prio == prio)
			return true;
	return false;
}

/* After slot @slot was emptied. */
static void fw_set_emptied(struct xnf_fw_set *set, __u32 slot, __u32 prio)
{
	set->nrules--;
	if (prio == set->last)
		set->last_stale = true;
	if (slot + 1 == set->top)
		while (set->top && !set->rules[set->top - 1].in_use)
			set->top--;
}

/* After slot @slot got a rule of @prio. */
static void fw_set_filled(struct xnf_fw_set *set, __u32 slot, __u32 prio)
{
	if (!set->nrules || prio > set->last)
		set->last = prio;
	set->nrules++;
	if (slot >= set->top)
		set->top = slot + 1;
}

const struct xnf_fw_rule *xnf_fw_set_rules(const struct xnf_fw_set *set)
{
	return set->rules;
}

void xnf_fw_set_linear(struct xnf_fw_set *set, bool linear)
{
	set->tables_only = !linear;
}

__u32 xnf_fw_set_default(const struct xnf_fw_set *set)
{
	return set->default_action;
}

int xnf_fw_set_policy(struct xnf_fw_set *set, __u32 action)
{
	if (action != XNF_FW_ALLOW && action != XNF_FW_DROP)
		return -EINVAL;
	set->default_action = action;
	return 0;
}

void xnf_fw_set_free(struct xnf_fw_set *set)
{
	free(set);
}

struct xnf_fw_set *xnf_fw_set_dup(const struct xnf_fw_set *set)
{
	struct xnf_fw_set *copy = malloc(sizeof(*copy));

	if (copy)
		memcpy(copy, set, sizeof(*copy));
	return copy;
}

/* The active generation and its header. */
static int fw_active_read(struct xnf_dp *dp, struct fw_active *a, char *errbuf,
			  size_t errlen)
{
	__u32 zero = 0, active;

	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_FW_ACTIVE), &zero,
				&active)) {
		return fw_map_err(dp, XNF_T_FW_ACTIVE, "read", -errno, errbuf,
				  errlen);
	}
	a->gen = active & 1;
	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_FW_HDR), &a->gen, &a->hdr)) {
		return fw_map_err(dp, XNF_T_FW_HDR, "read", -errno, errbuf,
				  errlen);
	}
	return 0;
}

/* The rule slots of generation @gen into @rules[XNF_FW_MAX_RULES]. */
static int fw_gen_rules_read(struct xnf_dp *dp, __u32 gen,
			     struct xnf_fw_rule *rules, char *errbuf,
			     size_t errlen)
{
	__u32 max = XNF_FW_GENS * XNF_FW_MAX_RULES, *keys, n, i;
	struct xnf_fw_rule *vals;
	int err;

	keys = malloc(max * sizeof(*keys));
	vals = malloc(max * sizeof(*vals));
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	err = xnf_map_read_all(xnf_table_fd(dp, XNF_T_FW_RULES), sizeof(*keys),
			       sizeof(*vals), max, keys, vals, &n);
	if (err) {
		fw_map_err(dp, XNF_T_FW_RULES, "read", err, errbuf, errlen);
		goto out;
	}
	memset(rules, 0, XNF_FW_MAX_RULES * sizeof(*rules));
	for (i = 0; i < n; i++)
		if (keys[i] / XNF_FW_MAX_RULES == gen)
			rules[keys[i] % XNF_FW_MAX_RULES] = vals[i];
out:
	free(vals);
	free(keys);
	return err;
}

/**
 * xnf_fw_read() - the rule set that runs
 * @dp: the instance
 * @out: receives the set, to free with xnf_fw_set_free()
 *
 * Reads the active generation's rules and default; reads again when an
 * apply switched generations meanwhile. Writes nothing.
 *
 * Return: 0, -EAGAIN when the set kept changing under the read, or the
 * error of a read (with a message naming the map).
 */
int xnf_fw_read(struct xnf_dp *dp, struct xnf_fw_set **out)
{
	struct timespec pause = { .tv_nsec = 1000 * 1000 };
	struct xnf_fw_set *set;
	struct fw_active a, b;
	int err = -EAGAIN, tries;

	*out = NULL;
	set = xnf_fw_set_new();
	if (!set)
		return -ENOMEM;
	for (tries = 0; tries < FW_READ_TRIES && err == -EAGAIN; tries++) {
		if (tries)
			nanosleep(&pause, NULL);
		err = fw_active_read(dp, &a, NULL, 0);
		if (!err)
			err = fw_gen_rules_read(dp, a.gen, set->rules, NULL, 0);
		if (!err)
			err = fw_active_read(dp, &b, NULL, 0);
		if (!err && (a.gen != b.gen || a.hdr.serial != b.hdr.serial))
			err = -EAGAIN;
	}
	if (err == -EAGAIN)
		pr_warn("firewall: the rule set was switched %d times while it was read; try again\n",
			FW_READ_TRIES);
	if (err)
		goto out;
	set->default_action = a.hdr.default_action;
	fw_set_index(set);
	*out = set;
	set = NULL;
out:
	xnf_fw_set_free(set);
	return err;
}

int xnf_fw_set_last_prio(const struct xnf_fw_set *set, __u32 *prio)
{
	__u32 i;

	if (!set->nrules)
		return -ENOENT;
	if (!set->last_stale) {
		*prio = set->last;
		return 0;
	}
	*prio = 0;
	for (i = 0; i < set->top; i++)
		if (set->rules[i].in_use && set->rules[i].prio > *prio)
			*prio = set->rules[i].prio;
	return 0;
}

__u32 xnf_fw_set_count(const struct xnf_fw_set *set)
{
	return set->nrules;
}

int xnf_fw_set_add(struct xnf_fw_set *set, const struct xnf_fw_rule *r,
		   bool auto_prio, __u32 *slot)
{
	struct xnf_fw_rule add = *r;
	__u32 i, last = 0;
	bool any;

	add.in_use = 1;
	if (xnf_fw_rule_check(&add, NULL, 0))
		return -EINVAL;
	if (!auto_prio && fw_set_prio_taken(set, add.prio, XNF_FW_MAX_RULES))
		return -EEXIST;
	if (set->nrules == XNF_FW_MAX_RULES)
		return -ENOSPC;
	if (auto_prio) {
		any = !xnf_fw_set_last_prio(set, &last);
		if (any && last > 0xffffffffU - XNF_FW_PRIO_STEP)
			return -ERANGE;
		add.prio = any ? last + XNF_FW_PRIO_STEP : XNF_FW_PRIO_STEP;
		set->last = last;
		set->last_stale = false;
	}
	/* The first free slot: the empty tail when no slot below is free. */
	i = set->top;
	if (set->nrules < set->top)
		for (i = 0; set->rules[i].in_use; i++)
			;
	set->rules[i] = add;
	fw_set_filled(set, i, add.prio);
	if (slot)
		*slot = i;
	return 0;
}

int xnf_fw_set_replace(struct xnf_fw_set *set, __u32 slot,
		       const struct xnf_fw_rule *r)
{
	struct xnf_fw_rule put = {};

	if (slot >= XNF_FW_MAX_RULES)
		return -EINVAL;
	if (r) {
		put = *r;
		put.in_use = 1;
		if (xnf_fw_rule_check(&put, NULL, 0))
			return -EINVAL;
		if (fw_set_prio_taken(set, put.prio, slot))
			return -EEXIST;
	}
	if (set->rules[slot].in_use) {
		__u32 prio = set->rules[slot].prio;

		memset(&set->rules[slot], 0, sizeof(set->rules[slot]));
		fw_set_emptied(set, slot, prio);
	}
	if (r) {
		set->rules[slot] = put;
		fw_set_filled(set, slot, put.prio);
	}
	return 0;
}

int xnf_fw_set_del(struct xnf_fw_set *set, __u32 prio, __u32 *slot)
{
	__u32 i;

	for (i = 0; i < set->top; i++) {
		if (set->rules[i].in_use && set->rules[i].prio == prio) {
			memset(&set->rules[i], 0, sizeof(set->rules[i]));
			fw_set_emptied(set, i, prio);
			if (slot)
				*slot = i;
			return 0;
		}
	}
	return -ENOENT;
}

void xnf_fw_set_flush(struct xnf_fw_set *set)
{
	memset(set->rules, 0, sizeof(set->rules));
	set->nrules = set->top = set->last = 0;
	set->last_stale = false;
}

/* Zeroes the per-CPU counters @keys[@n] of table @t: one batch update. */
static int fw_zero_slots(struct xnf_dp *dp, enum xnf_table t, const __u32 *keys,
			 __u32 n, char *errbuf, size_t errlen)
{
	void *zeros = NULL;
	__u32 vsz;
	int err;

	err = xnf_map_value_size(xnf_table_fd(dp, t), &vsz);
	if (err)
		goto out;
	zeros = calloc(n ?: 1, vsz);
	if (!zeros) {
		err = -ENOMEM;
		goto out;
	}
	err = xnf_map_update_all(xnf_table_fd(dp, t), keys, zeros,
				 sizeof(*keys), vsz, n, BPF_ANY);
out:
	if (err)
		fw_map_err(dp, t, "zero counters in", err, errbuf, errlen);
	free(zeros);
	return err;
}

/* Zeroes the hit counters of the slots in use in @rules whose rule is not
 * the one @old holds there, and their packet log counters (a rule's
 * logged and suppressed packets add up to its hits). */
static int fw_hits_zero_changed(struct xnf_dp *dp, const struct xnf_fw_rule *old,
				const struct xnf_fw_rule *rules, __u32 *keys,
				char *errbuf, size_t errlen)
{
	__u32 i, n = 0;

	for (i = 0; i < XNF_FW_MAX_RULES; i++)
		if (rules[i].in_use &&
		    memcmp(&old[i], &rules[i], sizeof(rules[i])))
			keys[n++] = i;
	return fw_zero_slots(dp, XNF_T_FW_HITS, keys, n, errbuf, errlen) ?:
		       fw_zero_slots(dp, XNF_T_LOG_STATS, keys, n, errbuf,
				     errlen);
}

/**
 * xnf_fw_apply() - make @set the rule set that runs, all or nothing
 * @dp: the instance
 * @set: the rules (slots not in use are stored empty) and the default
 *
 * Why this order. A packet reads xnf_fw_active once and from then on only
 * touches keys of that generation; a reader of the rules checks the
 * generation and serial around its read.
 *  1. Compile first: a set that does not compile changes nothing.
 *  2. Wait for a grace period: normally the previous apply already waited
 *     after its switch; this covers one killed between switch and wait.
 *     From then on no packet runs on the inactive generation g.
 *  3. Zero the hit counters of slots whose rule changes, so that a new
 *     rule starts from zero once it is published; the slots of rules that
 *     stay keep counting.
 *  4. Write g: the rules, the compiled tables, the header (default and
 *     serial) last. A kill here leaves the active generation whole.
 *  5. Switch: one 32-bit store that every packet after it sees; then move
 *     the table generation on (xnf_tables_changed).
 *  6. Wait for the packets that read the old generation before the switch,
 *     so that the next apply may write it.
 *
 * Return: 0 or a negative errno (see include/xnf.h), with a message. A
 * failure before step 5 leaves the active rule set untouched; one of the
 * generation after it leaves the new rules in force, and is returned.
 */
int xnf_fw_apply(struct xnf_dp *dp, const struct xnf_fw_set *set, char *errbuf,
		 size_t errlen)
{
	struct xnf_fw_rule *rules = NULL, *old = NULL;
	struct xnf_fw_compiled *c = NULL;
	__u32 zero = 0, gen, i, *keys = NULL;
	struct fw_active a;
	int err = -ENOMEM;

	rules = malloc(XNF_FW_MAX_RULES * sizeof(*rules));
	old = malloc(XNF_FW_MAX_RULES * sizeof(*old));
	keys = malloc(XNF_FW_MAX_RULES * sizeof(*keys));
	if (!rules || !old || !keys) {
		xnf_errf(errbuf, errlen, err, "out of memory");
		goto out;
	}
	for (i = 0; i < XNF_FW_MAX_RULES; i++) {
		if (set->rules[i].in_use)
			rules[i] = set->rules[i];
		else
			memset(&rules[i], 0, sizeof(rules[i]));
	}
	/* 1. */
	err = xnf_fw_compile(rules, XNF_FW_MAX_RULES, set->default_action, &c,
			     errbuf, errlen);
	if (err)
		goto out;
	if (set->tables_only)
		c->hdr.linear = 0;
	err = fw_active_read(dp, &a, errbuf, errlen);
	if (!err)
		err = fw_gen_rules_read(dp, a.gen, old, errbuf, errlen);
	if (err)
		goto out;
	gen = a.gen ^ 1;
	/* 2. */
	err = xnf_sync_rcu();
	if (err)
		xnf_errf(errbuf, errlen, err,
			 "firewall: cannot wait for packets on the old rules: %s",
			 strerror(-err));
	/* 3. */
	if (!err)
		err = fw_hits_zero_changed(dp, old, rules, keys, errbuf, errlen);
	/* 4. */
	if (!err)
		err = fw_array_store(dp, XNF_T_FW_RULES, gen * XNF_FW_MAX_RULES,
				     rules, sizeof(*rules), XNF_FW_MAX_RULES,
				     keys, errbuf, errlen);
	if (!err)
		err = fw_tables_write(dp, gen, c, a.hdr.serial + 1, errbuf,
				      errlen);
	/* The buckets of the rules that log, before a packet can match
	 * them; a slot whose old rule logged and whose new one does not
	 * stops logging here, a few packets early. */
	if (!err)
		err = xnf_log_rules_write(dp, rules, errbuf, errlen);
	if (err)
		goto out;
	/* 5. */
	if (bpf_map_update_elem(xnf_table_fd(dp, XNF_T_FW_ACTIVE), &zero, &gen,
				BPF_ANY)) {
		err = fw_map_err(dp, XNF_T_FW_ACTIVE, "update", -errno, errbuf,
				 errlen);
		goto out;
	}
	/* The flow cache's decisions of the old rules stop matching, and
	 * the AF_XDP workers' firewalls reload the rules: at once, not after
	 * the wait below, so that no packet after the switch is given a
	 * cached decision of the old rules for a grace period longer. */
	err = xnf_tables_changed(dp);
	if (err)
		xnf_errf(errbuf, errlen, err,
			 "firewall: the new rules are in force, but the table generation did not move: %s",
			 strerror(-err));
	/* 6. The new rules are in force whatever happens here; step 2 of
	 * the next apply waits again if this one could not. */
	if (xnf_sync_rcu())
		pr_warn("firewall: switched to the new rules, but could not wait for packets on the old ones to finish\n");
out:
	xnf_fw_compiled_free(c);
	free(keys);
	free(old);
	free(rules);
	return err;
}

int xnf_fw_hits_reset(struct xnf_dp *dp)
{
	__u32 *keys = NULL, vsz, i;
	void *zero = NULL;
	int err;

	err = xnf_map_value_size(xnf_table_fd(dp, XNF_T_FW_HITS), &vsz);
	if (err)
		return err;
	keys = malloc(XNF_FW_HITS * sizeof(*keys));
	zero = calloc(XNF_FW_HITS, vsz);
	if (!keys || !zero) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < XNF_FW_HITS; i++)
		keys[i] = i;
	err = xnf_map_update_all(xnf_table_fd(dp, XNF_T_FW_HITS), keys, zero,
				 sizeof(*keys), vsz, XNF_FW_HITS, BPF_ANY);
out:
	free(keys);
	free(zero);
	return err;
}

int xnf_fw_hits_read(struct xnf_dp *dp, struct xnf_fw_hit *hits)
{
	__u32 *keys = NULL, n, i, vsz, ncpus, cpu;
	struct xnf_fw_hit *vals = NULL;
	int err;

	err = xnf_map_value_size(xnf_table_fd(dp, XNF_T_FW_HITS), &vsz);
	if (err)
		goto out;
	ncpus = vsz / sizeof(*vals);
	keys = malloc(XNF_FW_HITS * sizeof(*keys));
	vals = malloc((size_t)XNF_FW_HITS * vsz);
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	err = xnf_map_read_all(xnf_table_fd(dp, XNF_T_FW_HITS), sizeof(*keys),
			       vsz, XNF_FW_HITS, keys, vals, &n);
	if (err)
		goto out;
	memset(hits, 0, XNF_FW_HITS * sizeof(*hits));
	for (i = 0; i < n; i++) {
		if (keys[i] >= XNF_FW_HITS)
			continue;
		for (cpu = 0; cpu < ncpus; cpu++) {
			hits[keys[i]].packets += vals[i * ncpus + cpu].packets;
			hits[keys[i]].bytes += vals[i * ncpus + cpu].bytes;
		}
	}
out:
	free(vals);
	free(keys);
	return err;
}
