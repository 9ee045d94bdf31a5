// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * nf_firewall.c - the firewall NF for AF_XDP workers: bpf/firewall.bpf.h on
 * a copy of the rule set. At init and on refresh it reads the rules
 * (xnf_fw_rules) and the default policy of the running generation
 * (xnf_fw_hdr), compiles them with xnf_fw_compile() - the compiler the
 * control plane uses - and classifies with the same bit-vector search as
 * the BPF program and xnf_fw_classify():
 *
 *   not IP                         untouched (nftables inet semantics)
 *   IPv6 header chain longer than  drop (fw_deny): the protocol is unknown
 *   the parser walks
 *   first matching rule / default  allow: untouched; drop: drop (fw_deny)
 *   no readable ports (ICMP, later the class of "no ports": a port rule
 *   fragments, short L4 header)    never matches
 *
 * The one difference from xnf_fw_classify(): the source and destination
 * prefix classes come from hash tables per prefix length (unf_priv.h)
 * instead of its linear scan of every prefix, which costs microseconds
 * per packet at 10,000 rules. The unit tests check both give the same
 * answer.
 *
 * A refresh compiles only when the rules or the default changed (a route
 * change leaves them alone); compiling 10,000 rules takes about 40 ms,
 * during which this worker does not read packets.
 *
 * Consistency: `xnf fw` writes rule slots first and compiles them into the
 * dataplane after (at the end of a batch with -b). The worker refreshes
 * under the instance lock, so it never sees a command half done; and the
 * copy is checked against the running generation (the compiled rule
 * order, xnf_fw_order, must be what compiling the copy gives), so that
 * slots an interrupted command left behind are never classified with:
 * then the old copy stays, and the first `xnf fw` command repairs the
 * slots (and moves tables_gen).
 *
 * Hit counters: not counted. xnf_fw_hits is a per-CPU array that the XDP
 * firewall increments with plain adds; user space can only replace all
 * CPUs' values of a slot at once (read, add, write back), and XDP packets
 * counted between the read and the write would be lost. No safe way to
 * add the workers' hits exists, so `xnf fw show` counts XDP hits only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "xnf.h"
#include "unf_priv.h"

struct fw_tables {
	struct xnf_fw_compiled *c;
	struct xnf_lpm src4, dst4, src6, dst6;
	struct xnf_fw_rule *rules;    /* the copy compiled, by slot */
	__u32 default_action;
};

struct fw {
	struct fw_tables *t;
};

static void fw_tables_free(struct fw_tables *t)
{
	if (!t)
		return;
	xnf_fw_compiled_free(t->c);
	xnf_lpm_free(&t->src4);
	xnf_lpm_free(&t->dst4);
	xnf_lpm_free(&t->src6);
	xnf_lpm_free(&t->dst6);
	free(t->rules);
	free(t);
}

/* The LPM tables of one field (@e[0..n)), split by family. */
static int fw_lpm_pair(const struct xnf_fw_prefix *e, __u32 n,
		       struct xnf_lpm *v4, struct xnf_lpm *v6)
{
	struct xnf_lpm_in *in4 = calloc(n + 1, sizeof(*in4));
	struct xnf_lpm_in *in6 = calloc(n + 1, sizeof(*in6));
	__u32 n4 = 0, n6 = 0, i;
	int err = -ENOMEM;

	if (!in4 || !in6)
		goto out;
	for (i = 0; i < n; i++) {
		struct xnf_lpm_in *x = e[i].family == XNF_AF_INET ? &in4[n4++] :
				       &in6[n6++];

		memcpy(x->addr, e[i].addr, 16);
		x->len = e[i].len;
		x->val = e[i].class;
	}
	err = xnf_lpm_build(v4, XNF_AF_INET, in4, n4);
	if (!err)
		err = xnf_lpm_build(v6, XNF_AF_INET6, in6, n6);
out:
	free(in4);
	free(in6);
	return err;
}

/* The running generation: its header and rule order. */
static int fw_running(struct xnf_dp *dp, __u32 *gen, struct xnf_fw_hdr *hdr,
		      struct xnf_fw_match **order)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 zero = 0, active, in, out, count, done = 0, *keys = NULL;
	struct xnf_fw_match *m = NULL;
	int err = 0;

	*order = NULL;
	if (bpf_map_lookup_elem(dp->fd[XNF_T_FW_ACTIVE], &zero, &active))
		return -errno;
	*gen = active & 1;
	if (bpf_map_lookup_elem(dp->fd[XNF_T_FW_HDR], gen, hdr))
		return -errno;
	if (hdr->nrules > XNF_FW_MAX_RULES)
		return -EINVAL;
	m = calloc(hdr->nrules + 1, sizeof(*m));
	keys = calloc(hdr->nrules + 1, sizeof(*keys));
	if (!m || !keys) {
		err = -ENOMEM;
		goto out;
	}
	/* An array's batch cursor is the last index returned: the walk
	 * starts after it, or at index 0 without one. */
	in = *gen * XNF_FW_MAX_RULES - 1;
	while (done < hdr->nrules) {
		count = hdr->nrules - done;
		err = bpf_map_lookup_batch(dp->fd[XNF_T_FW_ORDER],
					   *gen || done ? &in : NULL, &out,
					   keys + done, m + done, &count, &opts);
		if (err && err != -ENOENT)
			break;
		done += count;
		err = 0;
		if (!count)
			break;
		in = out;
	}
	if (err) {
		/* No batch lookups: one at a time. */
		for (done = 0, err = 0; done < hdr->nrules && !err; done++) {
			in = *gen * XNF_FW_MAX_RULES + done;
			if (bpf_map_lookup_elem(dp->fd[XNF_T_FW_ORDER], &in, &m[done]))
				err = -errno;
		}
	}
	if (!err && done < hdr->nrules)
		err = -EIO;
out:
	free(keys);
	if (err)
		free(m);
	else
		*order = m;
	return err;
}

static int fw_rules_copy(struct xnf_dp *dp, struct xnf_fw_rule **out)
{
	struct xnf_fw_rule *rules, *vals = NULL;
	__u32 *slots = NULL, n, i;
	int err;

	*out = NULL;
	rules = calloc(XNF_FW_MAX_RULES, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	err = xnf_unf_map_dump(dp->fd[XNF_T_FW_RULES], sizeof(*slots),
			       sizeof(*vals), XNF_FW_MAX_RULES, (void **)&slots,
			       (void **)&vals, &n);
	if (err) {
		free(rules);
		return err;
	}
	for (i = 0; i < n; i++)
		if (slots[i] < XNF_FW_MAX_RULES)
			rules[slots[i]] = vals[i];
	free(slots);
	free(vals);
	*out = rules;
	return 0;
}

/* Reads and compiles the rule set; *@out stays NULL when it is the one
 * @cur already holds. -EAGAIN: the copy is not the running rule set. */
static int fw_snapshot(struct xnf_dp *dp, const struct fw_tables *cur,
		       struct fw_tables **out)
{
	struct xnf_fw_match *order = NULL;
	struct fw_tables *t = NULL;
	struct xnf_fw_hdr hdr;
	const char *what;
	__u32 gen, gen2, zero = 0, i;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	what = XNF_MAP_STR(XNF_MAP_FW_HDR);
	err = fw_running(dp, &gen, &hdr, &order);
	if (!err) {
		what = XNF_MAP_STR(XNF_MAP_FW_RULES);
		err = fw_rules_copy(dp, &t->rules);
	}
	if (!err) {
		what = XNF_MAP_STR(XNF_MAP_FW_ACTIVE);
		if (bpf_map_lookup_elem(dp->fd[XNF_T_FW_ACTIVE], &zero, &gen2))
			err = -errno;
		else if ((gen2 & 1) != gen)
			err = -EAGAIN;  /* switched while we read */
	}
	if (err) {
		if (err != -EAGAIN)
			pr_warn("Error: firewall: cannot read %s: %s\n", what,
				strerror(-err));
		goto out;
	}
	t->default_action = hdr.default_action;
	if (cur && cur->default_action == t->default_action &&
	    !memcmp(cur->rules, t->rules, XNF_FW_MAX_RULES * sizeof(*t->rules)))
		goto out;   /* unchanged */

	err = xnf_fw_compile(t->rules, XNF_FW_MAX_RULES, t->default_action, &t->c);
	if (err) {
		/* The control plane compiled what runs, so these slots are
		 * not what runs. */
		err = -EAGAIN;
		goto out;
	}
	if (t->c->hdr.nrules != hdr.nrules) {
		err = -EAGAIN;
		goto out;
	}
	for (i = 0; i < hdr.nrules; i++) {
		if (t->c->order[i].action != order[i].action ||
		    t->c->order[i].slot != order[i].slot ||
		    t->c->order[i].rank != order[i].rank) {
			err = -EAGAIN;
			goto out;
		}
	}
	err = fw_lpm_pair(t->c->src, t->c->nsrc, &t->src4, &t->src6);
	if (!err)
		err = fw_lpm_pair(t->c->dst, t->c->ndst, &t->dst4, &t->dst6);
	if (err)
		goto out;
	*out = t;
	t = NULL;
out:
	if (err == -EAGAIN)
		pr_debug("firewall: %s does not hold the running rule set (a change "
			 "is under way or was interrupted)\n", XNF_MAP_STR(XNF_MAP_FW_RULES));
	fw_tables_free(t);
	free(order);
	return err;
}

static int fw_init(struct xnf_unf *nf, const struct xnf_unf_env *env)
{
	struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
	struct fw *fw = nf->priv;
	int err, tries = 0;

	/* A change under way ends within a compile or so; an interrupted
	 * one waits for the next `xnf fw` command. */
	while ((err = fw_snapshot(env->dp, NULL, &fw->t)) == -EAGAIN &&
	       ++tries < 25)
		nanosleep(&pause, NULL);
	if (err == -EAGAIN)
		pr_warn("Error: firewall: the rules in %s are not the ones the "
			"dataplane runs (an interrupted 'xnf fw' command?); "
			"'xnf fw show' repairs them, then start again\n",
			XNF_MAP_STR(XNF_MAP_FW_RULES));
	return err;
}

static int fw_refresh(struct xnf_unf *nf)
{
	struct fw *fw = nf->priv;
	struct fw_tables *t;
	int err;

	err = fw_snapshot(nf->env.dp, fw->t, &t);
	if (err || !t)
		return err;
	fw_tables_free(fw->t);
	fw->t = t;
	return 0;
}

static void fw_fini(struct xnf_unf *nf)
{
	struct fw *fw = nf->priv;

	fw_tables_free(fw->t);
	fw->t = NULL;
}

static inline __u32 ctz64(__u64 x)
{
	return __builtin_ctzll(x);
}

/* The action for an IP packet whose protocol is known: the first
 * matching rule's, or the default. */
static inline __u32 fw_action(const struct fw_tables *t,
			      const struct xnf_upkt *pk)
{
	const struct xnf_fw_compiled *c = t->c;
	const struct xnf_pkt *p = &pk->meta;
	const __u8 *l3 = pk->data + p->l3_off;
	const struct xnf_fw_class *k[5];
	__u32 id[5], s, w, f, best = ~0u, best_rank = ~0u;
	__u64 hi, lo, sum, m;
	bool v4 = p->family == XNF_AF_INET;

	if (!c->hdr.nrules)
		return t->default_action;
	xnf_lpm_key(p->family, l3 + (v4 ? 12 : 8), &hi, &lo);
	if (!xnf_lpm_find(v4 ? &t->src4 : &t->src6, hi, lo, &id[0]))
		return t->default_action;
	xnf_lpm_key(p->family, l3 + (v4 ? 16 : 24), &hi, &lo);
	if (!xnf_lpm_find(v4 ? &t->dst4 : &t->dst6, hi, lo, &id[1]))
		return t->default_action;
	id[2] = c->proto[p->l4_proto];
	if (p->flags & XNF_PKT_F_PORTS) {
		id[3] = c->sport[ntohs(p->sport)];
		id[4] = c->dport[ntohs(p->dport)];
	} else {
		id[3] = c->hdr.sport_none;
		id[4] = c->hdr.dport_none;
	}
	/* A field without a class matches no rule. */
	for (f = 0; f < 5; f++) {
		if (id[f] >= c->nclasses)
			return t->default_action;
		k[f] = &c->classes[id[f]];
	}
	/* Words where all five fields have candidates; each word's lowest
	 * bit is its best rule, the best rank over the words wins. */
	for (s = 0; s < XNF_FW_SUMMARY; s++) {
		sum = k[0]->summary[s] & k[1]->summary[s] & k[2]->summary[s] &
		      k[3]->summary[s] & k[4]->summary[s];
		while (sum) {
			w = s * 64 + ctz64(sum);
			sum &= sum - 1;
			if (w >= XNF_FW_WORDS)
				break;
			m = k[0]->bits[w] & k[1]->bits[w] & k[2]->bits[w] &
			    k[3]->bits[w] & k[4]->bits[w];
			if (m) {
				__u32 bit = w * 64 + ctz64(m);

				if (bit < c->hdr.nrules &&
				    c->order[bit].rank < best_rank) {
					best = bit;
					best_rank = c->order[bit].rank;
				}
			}
		}
	}
	return best == ~0u ? t->default_action : c->order[best].action;
}

static void fw_run(struct xnf_unf *nf, struct xnf_upkt *pkts, __u32 n)
{
	const struct fw_tables *t = ((struct fw *)nf->priv)->t;
	__u32 i;

	for (i = 0; i < n; i++) {
		struct xnf_upkt *pk = &pkts[i];
		const struct xnf_pkt *p = &pk->meta;

		if (xnf_upkt_decided(pk) || p->family == XNF_AF_NONE)
			continue;
		/* No rule can be matched honestly when the protocol is
		 * unknown ("drop tcp" would be evaded): deny. */
		if ((p->flags & XNF_PKT_F_L4_UNKNOWN) ||
		    fw_action(t, pk) == XNF_FW_DROP)
			xnf_upkt_exception(pk, XNF_ACT_DROP, XNF_R_FW_DENY);
	}
}

const struct xnf_unf_ops xnf_unf_firewall_ops = {
	.name = "firewall",
	.help = "the rules and default policy of xnf fw, classified as the XDP "
		"firewall does; no hit counters; no options",
	.priv_size = sizeof(struct fw),
	.init = fw_init,
	.fini = fw_fini,
	.refresh = fw_refresh,
	.run = fw_run,
};
