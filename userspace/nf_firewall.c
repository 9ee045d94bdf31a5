// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * nf_firewall.c - the firewall NF for AF_XDP workers: bpf/firewall.bpf.h on
 * a copy of the rule set. At init and on refresh it reads the rules and
 * the default policy of the running generation (xnf_fw_read()), compiles
 * them with xnf_fw_compile() - the compiler the control plane uses - and
 * classifies with the same bit-vector search as the BPF program and
 * xnf_fw_classify():
 *
 *   not IP                         untouched (nftables inet semantics)
 *   IPv6 header chain longer than  drop (fw_deny): the protocol is unknown
 *   the parser walks
 *   first matching rule / default  allow: untouched; drop: drop (fw_deny)
 *   no readable ports (ICMP, later the class of "no ports": a port rule
 *   fragments, short L4 header)    never matches
 *   iif, icmp type and code, tcp   checked on a candidate as the XDP
 *   flags                          firewall does (xnf_fw_match.x)
 *   a rule set with ct state       refused: every packet dropped (below)
 *
 * `ct state` cannot be honoured here: the packets a worker gets were
 * redirected to it by the xsk NF, and the connection table is the
 * conntrack NF's, in XDP, which these packets did not go through in a way
 * that sets their state (a worker chain has no conntrack NF). A worker
 * whose rule set matches ct state fails closed: it refuses to start with
 * the reason, and when such a set is applied while it runs, the refresh
 * fails with the reason and it drops every packet (fw_deny) until a set
 * it can honour runs again.
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
 * Consistency: the rules and default are stored per generation beside the
 * compiled tables, and the active generation is always a whole set
 * (xnf_fw_apply()); xnf_fw_read() reads it again when a switch happened
 * under the read. So the copy is always a set that ran.
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
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "xnf.h"
#include "unf_priv.h"

struct fw_tables {
	struct xnf_fw_compiled *c; /* NULL: refused, drop every packet */
	struct xnf_lpm src4, dst4, src6, dst6;
	struct xnf_fw_set *set;		 /* the copy compiled */
	const struct xnf_fw_rule *rules; /* its slots */
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
	xnf_fw_set_free(t->set);
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

/* -EOPNOTSUPP with the reason when a rule of @rules matches ct state. */
static int fw_refuse(const struct xnf_fw_rule *rules, char *errbuf, size_t errlen)
{
	__u32 i;

	for (i = 0; i < XNF_FW_MAX_RULES; i++)
		if (rules[i].in_use && (rules[i].flags & XNF_FW_F_CT))
			return xnf_errf(errbuf, errlen, -EOPNOTSUPP,
					"the rule of prio %u matches ct state, which the AF_XDP workers' firewall cannot honour (the connection table is the XDP conntrack NF's); the worker drops every packet until the rule set has no ct state match: filter by state in the XDP firewall (chain conntrack,firewall,...,xsk)",
					rules[i].prio);
	return 0;
}

/* Reads and compiles the rule set; *@out stays NULL when it is the one
 * @cur already holds. A set with a ct state match gives *@out tables that
 * drop every packet, and its error. */
static int fw_snapshot(struct xnf_dp *dp, const struct fw_tables *cur,
		       struct fw_tables **out, char *errbuf, size_t errlen)
{
	struct xnf_fw_set *set = NULL;
	struct fw_tables *t = NULL;
	int err;

	*out = NULL;
	err = xnf_fw_read(dp, &set);
	if (err) {
		xnf_errf(errbuf, errlen, err,
			 "cannot read the rule set that runs: %s",
			 strerror(-err));
		goto out;
	}
	if (cur && cur->default_action == xnf_fw_set_default(set) &&
	    !memcmp(cur->rules, xnf_fw_set_rules(set),
		    XNF_FW_MAX_RULES * sizeof(*cur->rules)))
		goto out; /* unchanged */
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto out;
	}
	t->default_action = xnf_fw_set_default(set);
	t->rules = xnf_fw_set_rules(set);
	err = fw_refuse(t->rules, errbuf, errlen);
	if (err) {
		/* Fail closed: these tables drop every packet. */
		t->set = set;
		set = NULL;
		*out = t;
		t = NULL;
		goto out;
	}
	err = xnf_fw_compile(t->rules, XNF_FW_MAX_RULES, t->default_action,
			     &t->c, errbuf, errlen);
	if (err)
		goto out;
	err = fw_lpm_pair(t->c->src, t->c->nsrc, &t->src4, &t->src6);
	if (!err)
		err = fw_lpm_pair(t->c->dst, t->c->ndst, &t->dst4, &t->dst6);
	if (err) {
		xnf_errf(errbuf, errlen, err,
			 "cannot compile the rule set that runs: %s",
			 strerror(-err));
		goto out;
	}
	t->set = set;
	set = NULL;
	*out = t;
	t = NULL;
out:
	fw_tables_free(t);
	xnf_fw_set_free(set);
	return err;
}

static int fw_init(struct xnf_unf *nf, const struct xnf_unf_env *env,
		   char *errbuf, size_t errlen)
{
	struct fw *fw = nf->priv;
	int err;

	err = fw_snapshot(env->dp, NULL, &fw->t, errbuf, errlen);
	if (err) { /* a refused set: the worker does not start */
		fw_tables_free(fw->t);
		fw->t = NULL;
	}
	return err;
}

/* A refused set replaces the running one all the same (its tables drop
 * every packet), and the error says why. */
static int fw_refresh(struct xnf_unf *nf, char *errbuf, size_t errlen)
{
	struct fw *fw = nf->priv;
	struct fw_tables *t;
	int err;

	err = fw_snapshot(nf->env.dp, fw->t, &t, errbuf, errlen);
	if (!t)
		return err;
	fw_tables_free(fw->t);
	fw->t = t;
	return err;
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

/* The extra matches of a candidate, as xnf_fw_extra_hit() in
 * bpf/firewall.bpf.h (ct state never gets here: fw_refuse()). */
static inline bool fw_extra_hit(const struct xnf_fw_extra *x,
				const struct xnf_pkt *p)
{
	__u16 f = x->flags;

	if ((f & XNF_FW_F_CT) && !(x->ct_states & (1u << (p->ct_state & 7))))
		return false;
	if ((f & XNF_FW_F_IIF) && x->iif != p->ingress_ifindex)
		return false;
	if ((f & XNF_FW_F_ICMP_TYPE) &&
	    (!(p->flags & XNF_PKT_F_ICMP) || p->icmp_type != x->icmp_type))
		return false;
	if ((f & XNF_FW_F_ICMP_CODE) && p->icmp_code != x->icmp_code)
		return false;
	if ((f & XNF_FW_F_TCP_FLAGS) &&
	    (!(p->flags & XNF_PKT_F_TCP) ||
	     (p->tcp_flags & x->tcp_mask) != x->tcp_flags))
		return false;
	if ((f & XNF_FW_F_TCP_ANY) &&
	    (!(p->flags & XNF_PKT_F_TCP) || !(p->tcp_flags & x->tcp_mask)))
		return false;
	return true;
}

/* The action for an IP packet whose protocol is known: the first
 * matching rule's, or the default. */
static inline __u32 fw_action(const struct fw_tables *t, const struct xnf_upkt *pk)
{
	const struct xnf_fw_compiled *c = t->c;
	const struct xnf_pkt *p = &pk->meta;
	const __u8 *l3 = pk->data + p->l3_off;
	const struct xnf_fw_class *k[5];
	__u32 id[5], s, w, f, best = ~0u, best_rank = ~0u;
	__u64 hi, lo, sum, m;
	bool v4 = p->family == XNF_AF_INET;

	if (!c)
		return XNF_FW_DROP; /* refused: fail closed */
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
			/* The word's candidates in priority order: the
			 * first whose extra matches hold. */
			for (; m; m &= m - 1) {
				__u32 bit = w * 64 + ctz64(m);
				const struct xnf_fw_match *o = &c->order[bit];

				if (bit >= c->hdr.nrules || o->rank >= best_rank)
					break;
				if (o->x.flags && !fw_extra_hit(&o->x, p))
					continue;
				best = bit;
				best_rank = o->rank;
				break;
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
