// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * nat.c - the NAT rules (include/nat.h): a rule set in memory and its
 * checks, and the rule set that runs, read and applied as a whole.
 *
 * The rules live twice in the pinned tables (include/uapi/xnf_nat.h):
 * generation g in xnf_nat_rules[g * XNF_NAT_MAX_RULES + i] with its count
 * in xnf_nat_hdr[g], and xnf_nat_hdr[XNF_NAT_HDR_ACTIVE].active says
 * which one runs. xnf_nat_apply() writes the other one and switches with
 * one write, as the firewall does (fw_set.c), so the nat NF always reads
 * a whole set and a kill leaves the old one running.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "nat.h"
#include "priv.h"

#define NAT_READ_TRIES 20

static const char *const type_names[] = {
	[XNF_NAT_MASQUERADE] = "masquerade",
	[XNF_NAT_SNAT] = "snat",
	[XNF_NAT_DNAT] = "dnat",
};

struct xnf_nat_set *xnf_nat_set_new(void)
{
	return calloc(1, sizeof(struct xnf_nat_set));
}

struct xnf_nat_set *xnf_nat_set_dup(const struct xnf_nat_set *set)
{
	struct xnf_nat_set *copy = malloc(sizeof(*copy));

	if (copy)
		memcpy(copy, set, sizeof(*copy));
	return copy;
}

void xnf_nat_set_free(struct xnf_nat_set *set)
{
	free(set);
}

bool xnf_nat_rule_same(const struct xnf_nat_rule *a, const struct xnf_nat_rule *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static bool zero(const __u8 *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Whether the bits of @a past @plen are clear. */
static bool host_bits_clear(const __u8 a[16], __u32 plen)
{
	__u32 i;

	for (i = plen; i < 128; i++)
		if (a[i / 8] & (0x80 >> (i % 8)))
			return false;
	return true;
}

static int prefix_check(const struct xnf_nat_rule *r, const char *what,
			const __u8 a[16], __u8 plen, char *err, size_t errlen)
{
	__u32 max = r->family == XNF_AF_INET ? 32 : 128;

	if (!plen && zero(a, 16))
		return 0;
	if (!r->family)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: %s is given but the rule has no family; a rule with a prefix is of the prefix's family (IPv4 or IPv6)",
				r->prio, what);
	if (plen > max || !host_bits_clear(a, plen) ||
	    (r->family == XNF_AF_INET && !zero(a + 4, 12)))
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: %s is not a prefix of its family (length at most %u, host bits clear): write it as ADDR/LEN with the bits after LEN zero",
				r->prio, what, max);
	return 0;
}

/* The address range of snat and dnat; masquerade has none. */
static int to_check(const struct xnf_nat_rule *r, char *err, size_t errlen)
{
	const char *t = type_names[r->type];

	if (r->type == XNF_NAT_MASQUERADE) {
		if (!zero(r->to_min, 16) || !zero(r->to_max, 16))
			return xnf_errf(err, errlen, -EINVAL,
					"nat rule %u: masquerade takes the address of the egress device, not one given: write 'to :PORT[-PORT]' for ports only, or use snat to give an address",
					r->prio);
		return 0;
	}
	if (!r->family || zero(r->to_min, 16))
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: %s needs an address: write '%s to ADDR%s'",
				r->prio, t, t,
				r->type == XNF_NAT_SNAT ? "[-ADDR][:PORT[-PORT]]" :
							  "[:PORT]");
	if (r->family == XNF_AF_INET &&
	    (!zero(r->to_min + 4, 12) || !zero(r->to_max + 4, 12)))
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: an IPv4 address has 4 bytes, the rest must be 0",
				r->prio);
	if (memcmp(r->to_min, r->to_max, 16) > 0)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: the address range ends before it begins: write the lower address first (to A-B with A <= B)",
				r->prio);
	if (r->type == XNF_NAT_DNAT && memcmp(r->to_min, r->to_max, 16))
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: dnat translates to one address: write 'dnat to ADDR[:PORT]'",
				r->prio);
	return 0;
}

/* Matches on ports, and port mappings: tcp and udp only, as nft's
 * "transport protocol mapping is only valid after transport protocol
 * match". */
static int ports_check(const struct xnf_nat_rule *r, char *err, size_t errlen)
{
	bool l4 = r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP;

	if (r->dport_min || r->dport_max) {
		if (r->type != XNF_NAT_DNAT)
			return xnf_errf(err, errlen, -EINVAL,
					"nat rule %u: only dnat matches a destination port; match the address (daddr) instead",
					r->prio);
		if (!l4)
			return xnf_errf(err, errlen, -EINVAL,
					"nat rule %u: dport needs 'proto tcp' or 'proto udp' before it",
					r->prio);
		if (!r->dport_min || r->dport_min > r->dport_max)
			return xnf_errf(err, errlen, -EINVAL,
					"nat rule %u: the dport range %u-%u is empty: write P1-P2 with 1 <= P1 <= P2",
					r->prio, r->dport_min, r->dport_max);
	}
	if (!(r->flags & XNF_NAT_F_PORTS)) {
		if (r->to_port_min || r->to_port_max)
			return xnf_errf(err, errlen, -EINVAL,
					"nat rule %u: to_port set without XNF_NAT_F_PORTS",
					r->prio);
		return 0;
	}
	if (!l4)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: a port mapping needs 'proto tcp' or 'proto udp' (ICMP has no ports; its identifier is chosen as a port would be without one)",
				r->prio);
	if (!r->to_port_min || r->to_port_min > r->to_port_max)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: the port range %u-%u is empty: write :P1-P2 with 1 <= P1 <= P2",
				r->prio, r->to_port_min, r->to_port_max);
	if (r->type == XNF_NAT_DNAT && r->to_port_min != r->to_port_max)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: dnat translates to one port: write 'to ADDR:PORT'",
				r->prio);
	return 0;
}

int xnf_nat_rule_check(const struct xnf_nat_rule *r, char *err, size_t errlen)
{
	__u8 f = r->flags;
	int ret;

	if (r->type <= XNF_NAT_NONE || r->type >= __XNF_NAT_TYPE_MAX)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: unknown type %u: masquerade, snat or dnat",
				r->prio, r->type);
	if (r->family != 0 && r->family != XNF_AF_INET &&
	    r->family != XNF_AF_INET6)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: unknown family %u: IPv4 or IPv6",
				r->prio, r->family);
	if (r->pad || r->pad2 ||
	    (f & ~(XNF_NAT_F_PORTS | XNF_NAT_F_RANDOM | XNF_NAT_F_PERSISTENT)))
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: unknown flags or padding set: clear them",
				r->prio);
	if (r->proto && r->proto != IPPROTO_TCP && r->proto != IPPROTO_UDP &&
	    r->proto != IPPROTO_ICMP && r->proto != IPPROTO_ICMPV6)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: protocol %u is not translated: proto tcp, udp, icmp or icmpv6",
				r->prio, r->proto);
	if ((r->proto == IPPROTO_ICMP && r->family == XNF_AF_INET6) ||
	    (r->proto == IPPROTO_ICMPV6 && r->family == XNF_AF_INET))
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: proto %s does not exist in %s: use proto %s",
				r->prio,
				r->proto == IPPROTO_ICMP ? "icmp" : "icmpv6",
				r->family == XNF_AF_INET ? "IPv4" : "IPv6",
				r->proto == IPPROTO_ICMP ? "icmpv6" : "icmp");
	if (r->iif && r->type != XNF_NAT_DNAT)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: %s runs after routing (postrouting), where only the egress device is known: match it with oif, not iif",
				r->prio, type_names[r->type]);
	if (r->oif && r->type == XNF_NAT_DNAT)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: dnat runs before routing (prerouting), where no egress device is known yet: match the ingress device with iif, not oif",
				r->prio);
	if ((f & (XNF_NAT_F_RANDOM | XNF_NAT_F_PERSISTENT)) &&
	    r->type == XNF_NAT_DNAT)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: random and persistent choose among source addresses and ports: masquerade and snat only",
				r->prio);
	if (!r->family && r->type != XNF_NAT_MASQUERADE)
		return xnf_errf(err, errlen, -EINVAL,
				"nat rule %u: %s needs the family of its address (IPv4 or IPv6)",
				r->prio, type_names[r->type]);
	ret = prefix_check(r, "saddr", r->src, r->src_plen, err, errlen);
	if (!ret)
		ret = prefix_check(r, "daddr", r->dst, r->dst_plen, err, errlen);
	if (!ret)
		ret = to_check(r, err, errlen);
	if (!ret)
		ret = ports_check(r, err, errlen);
	return ret;
}

const struct xnf_nat_rule *xnf_nat_set_find(const struct xnf_nat_set *set,
					    __u32 prio)
{
	__u32 i;

	for (i = 0; i < set->n; i++)
		if (set->r[i].prio == prio)
			return &set->r[i];
	return NULL;
}

int xnf_nat_set_add(struct xnf_nat_set *set, const struct xnf_nat_rule *r,
		    bool auto_prio, char *err, size_t errlen)
{
	struct xnf_nat_rule add = *r;
	__u32 i;
	int ret;

	if (auto_prio) {
		if (set->n &&
		    set->r[set->n - 1].prio > 0xffffffffU - XNF_NAT_PRIO_STEP)
			return xnf_errf(err, errlen, -ERANGE,
					"nat: no prio is left above %u; give the rule one with 'prio N'",
					set->r[set->n - 1].prio);
		add.prio = set->n ? set->r[set->n - 1].prio + XNF_NAT_PRIO_STEP :
				    XNF_NAT_PRIO_STEP;
	}
	ret = xnf_nat_rule_check(&add, err, errlen);
	if (ret)
		return ret;
	if (xnf_nat_set_find(set, add.prio))
		return xnf_errf(err, errlen, -EEXIST,
				"nat: a rule of prio %u exists; choose another prio, or delete it first with 'xnf nat del prio %u'",
				add.prio, add.prio);
	if (set->n == XNF_NAT_MAX_RULES)
		return xnf_errf(err, errlen, -ENOSPC,
				"nat: %u rules already, as many as run; delete one first with 'xnf nat del prio N'",
				XNF_NAT_MAX_RULES);
	for (i = set->n; i > 0 && set->r[i - 1].prio > add.prio; i--)
		set->r[i] = set->r[i - 1];
	set->r[i] = add;
	set->n++;
	return 0;
}

int xnf_nat_set_del(struct xnf_nat_set *set, __u32 prio)
{
	const struct xnf_nat_rule *r = xnf_nat_set_find(set, prio);
	__u32 i;

	if (!r)
		return -ENOENT;
	i = r - set->r;
	memmove(&set->r[i], &set->r[i + 1], (set->n - i - 1) * sizeof(*r));
	set->n--;
	memset(&set->r[set->n], 0, sizeof(*r));
	return 0;
}

void xnf_nat_set_flush(struct xnf_nat_set *set)
{
	memset(set, 0, sizeof(*set));
}

static int nat_map_err(struct xnf_dp *dp, enum xnf_table t, const char *what,
		       int ret, char *err, size_t errlen)
{
	return xnf_errf(err, errlen, ret,
			"nat: cannot %s %s/tables/%s: %s; check it with `bpftool map show pinned %s/tables/%s`, or recreate the instance if its layout is stale",
			what, dp->root, xnf_table_names[t], strerror(-ret),
			dp->root, xnf_table_names[t]);
}

/* The headers: [0], [1] the generations', [XNF_NAT_HDR_ACTIVE] the
 * switch. */
static int hdr_read(struct xnf_dp *dp, struct xnf_nat_hdr *h, char *err,
		    size_t errlen)
{
	int fd = xnf_table_fd(dp, XNF_T_NAT_HDR);
	__u32 k;

	for (k = 0; k <= XNF_NAT_HDR_ACTIVE; k++)
		if (bpf_map_lookup_elem(fd, &k, &h[k]))
			return nat_map_err(dp, XNF_T_NAT_HDR, "read", -errno,
					   err, errlen);
	return 0;
}

/* Generation @gen's @n rules into @set. */
static int rules_read(struct xnf_dp *dp, __u32 gen, __u32 n,
		      struct xnf_nat_set *set, char *err, size_t errlen)
{
	int fd = xnf_table_fd(dp, XNF_T_NAT_RULES);
	__u32 i, k;

	if (n > XNF_NAT_MAX_RULES)
		return xnf_errf(err, errlen, -EUCLEAN,
				"nat: generation %u claims %u rules, more than %u: the tables are damaged; recreate the instance",
				gen, n, XNF_NAT_MAX_RULES);
	memset(set, 0, sizeof(*set));
	for (i = 0; i < n; i++) {
		k = gen * XNF_NAT_MAX_RULES + i;
		if (bpf_map_lookup_elem(fd, &k, &set->r[i]))
			return nat_map_err(dp, XNF_T_NAT_RULES, "read", -errno,
					   err, errlen);
	}
	set->n = n;
	return 0;
}

int xnf_nat_read(struct xnf_dp *dp, struct xnf_nat_set **out, char *err,
		 size_t errlen)
{
	struct timespec pause = { .tv_nsec = 1000 * 1000 };
	struct xnf_nat_hdr a[XNF_NAT_HDR_ACTIVE + 1], b[XNF_NAT_HDR_ACTIVE + 1];
	struct xnf_nat_set *set;
	int ret = -EAGAIN, tries;
	__u32 gen = 0;

	*out = NULL;
	set = xnf_nat_set_new();
	if (!set)
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	for (tries = 0; tries < NAT_READ_TRIES && ret == -EAGAIN; tries++) {
		if (tries)
			nanosleep(&pause, NULL);
		ret = hdr_read(dp, a, err, errlen);
		gen = a[XNF_NAT_HDR_ACTIVE].active & 1;
		if (!ret)
			ret = rules_read(dp, gen, a[gen].count, set, err, errlen);
		if (!ret)
			ret = hdr_read(dp, b, err, errlen);
		/* An apply in between moved the switch or rewrote this
		 * generation (its serial). */
		if (!ret && (b[XNF_NAT_HDR_ACTIVE].active != gen ||
			     b[gen].serial != a[gen].serial))
			ret = -EAGAIN;
	}
	if (ret == -EAGAIN)
		xnf_errf(err, errlen, ret,
			 "nat: the rule set was switched %d times while it was read; try again",
			 NAT_READ_TRIES);
	if (ret) {
		xnf_nat_set_free(set);
		return ret;
	}
	*out = set;
	return 0;
}

/*
 * Why this order (as xnf_fw_apply's):
 *  1. Check every rule: a set that would not run changes nothing.
 *  2. Wait for a grace period: the previous apply waited after its switch;
 *     this covers one killed in between. From then on no packet reads
 *     the inactive generation g.
 *  3. Write g: its rules in one batch (every slot: the ones past count
 *     zeroed, so a dump shows no stale rule), then its header (count,
 *     serial moved on). A kill here leaves the active generation whole.
 *  4. Switch: one write of the active entry; then the table generation
 *     moves, so the flow cache forgets what it cached under the old rules.
 *  5. Wait for packets that read the old generation, so that the next
 *     apply may write it.
 */
int xnf_nat_apply(struct xnf_dp *dp, const struct xnf_nat_set *set, char *err,
		  size_t errlen)
{
	struct xnf_nat_hdr h[XNF_NAT_HDR_ACTIVE + 1], gh, act;
	struct xnf_nat_rule *rules = NULL;
	__u32 gen, i, k, *keys = NULL;
	int ret;

	/* 1. */
	if (set->n > XNF_NAT_MAX_RULES)
		return xnf_errf(err, errlen, -EINVAL,
				"nat: %u rules, more than the %u that run",
				set->n, XNF_NAT_MAX_RULES);
	for (i = 0; i < set->n; i++) {
		ret = xnf_nat_rule_check(&set->r[i], err, errlen);
		if (!ret && i && set->r[i - 1].prio >= set->r[i].prio)
			ret = xnf_errf(err, errlen, -EINVAL,
				       "nat: the rules are not in order of prio, each once (%u after %u)",
				       set->r[i].prio, set->r[i - 1].prio);
		if (ret)
			return ret;
	}
	ret = hdr_read(dp, h, err, errlen);
	if (ret)
		return ret;
	gen = (h[XNF_NAT_HDR_ACTIVE].active & 1) ^ 1;
	rules = calloc(XNF_NAT_MAX_RULES, sizeof(*rules));
	keys = calloc(XNF_NAT_MAX_RULES, sizeof(*keys));
	if (!rules || !keys) {
		ret = xnf_errf(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	memcpy(rules, set->r, set->n * sizeof(*rules));
	for (i = 0; i < XNF_NAT_MAX_RULES; i++)
		keys[i] = gen * XNF_NAT_MAX_RULES + i;
	/* 2. */
	ret = xnf_sync_rcu();
	if (ret) {
		xnf_errf(err, errlen, ret,
			 "nat: cannot wait for packets on the old rules: %s",
			 strerror(-ret));
		goto out;
	}
	/* 3. */
	ret = xnf_map_update_all(xnf_table_fd(dp, XNF_T_NAT_RULES), keys, rules,
				 sizeof(*keys), sizeof(*rules),
				 XNF_NAT_MAX_RULES, BPF_ANY);
	if (ret) {
		nat_map_err(dp, XNF_T_NAT_RULES, "update", ret, err, errlen);
		goto out;
	}
	gh = (struct xnf_nat_hdr){ .count = set->n, .serial = h[gen].serial + 1 };
	if (gh.serial == h[gen ^ 1].serial)
		gh.serial++;
	if (bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NAT_HDR), &gen, &gh,
				BPF_ANY)) {
		ret = nat_map_err(dp, XNF_T_NAT_HDR, "update", -errno, err,
				  errlen);
		goto out;
	}
	/* 4. */
	act = (struct xnf_nat_hdr){ .active = gen, .serial = gh.serial };
	k = XNF_NAT_HDR_ACTIVE;
	if (bpf_map_update_elem(xnf_table_fd(dp, XNF_T_NAT_HDR), &k, &act,
				BPF_ANY)) {
		ret = nat_map_err(dp, XNF_T_NAT_HDR, "update", -errno, err,
				  errlen);
		goto out;
	}
	ret = xnf_tables_changed(dp);
	if (ret)
		xnf_errf(err, errlen, ret,
			 "nat: the new rules are in force, but the table generation did not move: %s",
			 strerror(-ret));
	/* 5. The new rules are in force whatever happens here; step 2 of
	 * the next apply waits again if this one could not. */
	if (xnf_sync_rcu())
		pr_warn("nat: switched to the new rules, but could not wait for packets on the old ones to finish\n");
out:
	free(keys);
	free(rules);
	return ret;
}
