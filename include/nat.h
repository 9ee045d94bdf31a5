/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * nat.h - the NAT rules (lib/nat.c): a rule set in memory, its checks,
 * and the rule set that runs (xnf_nat_rules, xnf_nat_hdr of
 * include/uapi/xnf_nat.h), read and applied as a whole, as the
 * firewall's are (fw_set.c). The CLI changes them through a candidate
 * (conf.h: xnf_conf_nat_add/del/flush) and its commit.
 */
#ifndef XNF_NAT_H
#define XNF_NAT_H

#include <stdbool.h>
#include <stddef.h>

#include "xnf.h"

/* prio of a rule added without one: the highest in use plus this. */
#define XNF_NAT_PRIO_STEP 10

/* A whole rule set: what one generation holds, the rules in prio order
 * (each prio once). */
struct xnf_nat_set {
	__u32 n;
	struct xnf_nat_rule r[XNF_NAT_MAX_RULES];
};

/* An empty set, or NULL. */
struct xnf_nat_set *xnf_nat_set_new(void);
struct xnf_nat_set *xnf_nat_set_dup(const struct xnf_nat_set *set);
void xnf_nat_set_free(struct xnf_nat_set *set);

/* 0, or -EINVAL with what is wrong with @r and what to write instead in
 * @err: the type, the family (an IPv4 address is 4 bytes, the rest 0;
 * only masquerade may leave it open, for both), prefixes, protocols and
 * ports (dport and a port mapping need proto tcp or udp), the address
 * and port ranges (ordered; masquerade has no address; dnat one address
 * and one port), devices (iif for dnat, oif for masquerade and snat),
 * flags (random, persistent: masquerade and snat). */
int xnf_nat_rule_check(const struct xnf_nat_rule *r, char *err, size_t errlen);
/* Adds @r, checked, at its place by prio; with @auto_prio its prio becomes
 * the highest in use plus XNF_NAT_PRIO_STEP. -EINVAL: malformed; -EEXIST:
 * its prio is taken; -ENOSPC: XNF_NAT_MAX_RULES already; -ERANGE: no prio
 * left above the highest. Each with the reason and what to do in @err. */
int xnf_nat_set_add(struct xnf_nat_set *set, const struct xnf_nat_rule *r,
		    bool auto_prio, char *err, size_t errlen);
/* The rule of @prio, or NULL. */
const struct xnf_nat_rule *xnf_nat_set_find(const struct xnf_nat_set *set,
					    __u32 prio);
/* Removes the rule of @prio; -ENOENT if none. */
int xnf_nat_set_del(struct xnf_nat_set *set, __u32 prio);
void xnf_nat_set_flush(struct xnf_nat_set *set);
/* Whether two rules are the same (every field). */
bool xnf_nat_rule_same(const struct xnf_nat_rule *a,
		       const struct xnf_nat_rule *b);

/* The rule set that runs (the active generation), checked to be one set
 * by the serial around the read; never writes. -EAGAIN when it kept being
 * switched under the read; -EUCLEAN when what the maps hold is no rule
 * set (a count past XNF_NAT_MAX_RULES). */
int xnf_nat_read(struct xnf_dp *dp, struct xnf_nat_set **out, char *err,
		 size_t errlen);
/*
 * Makes @set the rule set that runs, all or nothing: writes it into the
 * inactive generation (the rules in one batch, then its header: count and
 * serial), switches with one write of xnf_nat_hdr[XNF_NAT_HDR_ACTIVE],
 * moves the table generation (the flow cache) and waits for an RCU grace
 * period, so that the next apply may write the old generation. A failure
 * before the switch leaves the rules that run untouched. Writers hold the
 * instance lock.
 */
int xnf_nat_apply(struct xnf_dp *dp, const struct xnf_nat_set *set, char *err,
		  size_t errlen);

#endif /* XNF_NAT_H */
