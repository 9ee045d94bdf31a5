// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fw_compile.c - the firewall control plane: checks rules, compiles an
 * ordered rule list into the bit-vector tables that firewall.bpf.h reads
 * (see the comment above XNF_FW_MAX_RULES in include/uapi/xnf_fw.h), classifies
 * packets on those tables in C exactly as the BPF program does, classifies
 * them by a plain linear scan (the reference), and stores a compiled set
 * into the inactive generation of the pinned maps.
 *
 * The compiler, per field:
 *   src, dst  For each family, every distinct rule prefix plus the /0 is one
 *             LPM entry. Its class is: the rules that do not match on the
 *             field, plus the rules of that family whose prefix contains the
 *             entry's prefix. The longest entry that contains an address A
 *             then holds exactly the rules matching A: a rule prefix R that
 *             contains A is itself an entry, and R and the longest entry P
 *             both contain A, so they nest, and R cannot be longer than P;
 *             so R contains P. Conversely a prefix containing P contains A.
 *             Sorting the prefixes by (address, length) visits the binary
 *             trie in preorder, so a stack of the entries that contain the
 *             current one gives each class as its nearest enclosing entry's
 *             class plus the rules of exactly this prefix.
 *   proto     256 classes, one per value.
 *   ports     The range endpoints cut 0..65535 into elementary intervals.
 *             One sweep over the endpoints adds a rule's bit at lo and
 *             removes it at hi + 1, so each interval costs one bitmap hash,
 *             not one pass over the rules.
 * Every bitmap goes through one hash table keyed by its content, so equal
 * bitmaps share one class across all five fields.
 *
 * A set of at most XNF_FW_LINEAR_MAX rules is also marked for the linear
 * scan (xnf_fw_hdr.linear): the BPF program then reads its rules in the
 * order of xnf_fw_order and leaves the tables alone. They are written all
 * the same, so that either form can classify any set that fits.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "xnf.h"
#include "fw_priv.h"
#include "pktlog.h"

#ifndef IPPROTO_SCTP
#define IPPROTO_SCTP 132
#endif

#define FW_PORTS     65536
/* Open-addressing table of class ids, at most half full. */
#define FW_HASH_SIZE (2 * XNF_FW_MAX_CLASSES)
/* Entries on the prefix stack have strictly growing lengths: 0..128. */
#define FW_PFX_DEPTH 129

#define FW_F_ALL                                                         \
	(XNF_FW_F_SRC | XNF_FW_F_DST | XNF_FW_F_PROTO | XNF_FW_F_SPORT | \
	 XNF_FW_F_DPORT | XNF_FW_F_EXTRA)

_Static_assert(offsetof(struct xnf_fw_lpm4_key, gen) ==
		       offsetof(struct xnf_fw_lpm6_key, gen),
	       "lpm key gen offset");

static int fw_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fw_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static __u32 fw_addr_bytes(__u8 family)
{
	return family == XNF_AF_INET ? 4 : 16;
}

static __u32 fw_addr_bits(__u8 family)
{
	return family == XNF_AF_INET ? 32 : 128;
}

/* @out = @in with every bit from @len on cleared; bytes past the family's
 * address length are cleared too. */
static void fw_mask(__u8 out[16], const __u8 in[16], __u32 len, __u8 family)
{
	__u32 bytes = fw_addr_bytes(family), i;

	for (i = 0; i < 16; i++) {
		if (i >= bytes || len <= 8 * i)
			out[i] = 0;
		else if (len >= 8 * (i + 1))
			out[i] = in[i];
		else
			out[i] = in[i] & (__u8)(0xff << (8 - (len - 8 * i)));
	}
}

/* Whether the first @len bits of @addr are those of @pfx. */
static bool fw_pfx_has(const __u8 *pfx, __u32 len, const __u8 *addr)
{
	__u32 full = len / 8, rest = len % 8;
	__u8 m;

	if (memcmp(pfx, addr, full))
		return false;
	if (!rest)
		return true;
	m = (__u8)(0xff << (8 - rest));
	return (pfx[full] & m) == (addr[full] & m);
}

static bool fw_ports_proto(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
	       proto == IPPROTO_SCTP;
}

static int fw_check_prefix(const char *what, const __u8 *addr, __u32 len,
			   __u8 family, char *err, size_t errlen)
{
	char have[INET6_ADDRSTRLEN], want[INET6_ADDRSTRLEN];
	int af = family == XNF_AF_INET ? AF_INET : AF_INET6;
	__u8 masked[16], full[16];

	if (len > fw_addr_bits(family))
		return fw_err(err, errlen,
			      "%s prefix length %u is longer than %u", what,
			      len, fw_addr_bits(family));
	/* fw_mask() also clears the bytes an IPv4 address does not use,
	 * which the rule may carry as garbage: compare only the used ones. */
	fw_mask(masked, addr, len, family);
	fw_mask(full, addr, fw_addr_bits(family), family);
	if (!memcmp(masked, full, 16))
		return 0;
	if (!inet_ntop(af, full, have, sizeof(have)) ||
	    !inet_ntop(af, masked, want, sizeof(want)))
		return fw_err(err, errlen, "%s prefix has host bits set", what);
	return fw_err(err, errlen,
		      "%s %s/%u has host bits set; did you mean %s/%u?", what,
		      have, len, want, len);
}

/* The matches beyond the five fields (XNF_FW_F_EXTRA). */
static int fw_check_extra(const struct xnf_fw_rule *r, char *err, size_t errlen)
{
	bool icmp = r->proto == IPPROTO_ICMP || r->proto == IPPROTO_ICMPV6;
	__u16 f = r->flags;

	if ((f & XNF_FW_F_CT) &&
	    (!r->ct_states || r->ct_states >= 1u << __XNF_CT_STATE_MAX))
		return fw_err(err, errlen,
			      "ct state set 0x%x is not a non-empty set of the %d states (bits 0..%d)",
			      r->ct_states, __XNF_CT_STATE_MAX,
			      __XNF_CT_STATE_MAX - 1);
	if ((f & XNF_FW_F_IIF) && !r->iif)
		return fw_err(err, errlen, "iif needs an interface index, not 0");
	if ((f & XNF_FW_F_ICMP_CODE) && !(f & XNF_FW_F_ICMP_TYPE))
		return fw_err(err, errlen, "an icmp code needs an icmp type");
	if ((f & XNF_FW_F_ICMP_TYPE) && (!(f & XNF_FW_F_PROTO) || !icmp))
		return fw_err(err, errlen,
			      "an icmp type needs proto icmp (1) or icmpv6 (58)");
	if ((f & XNF_FW_F_ICMP_TYPE) && (f & (XNF_FW_F_SRC | XNF_FW_F_DST)) &&
	    (r->family == XNF_AF_INET) != (r->proto == IPPROTO_ICMP))
		return fw_err(err, errlen,
			      "%s type with %s addresses never matches: icmp is IPv4's, icmpv6 IPv6's",
			      r->proto == IPPROTO_ICMP ? "icmp" : "icmpv6",
			      r->family == XNF_AF_INET ? "IPv4" : "IPv6");
	if ((f & XNF_FW_F_TCP_FLAGS) && (f & XNF_FW_F_TCP_ANY))
		return fw_err(err, errlen,
			      "tcp flags: one match, either F / MASK or F");
	if ((f & (XNF_FW_F_TCP_FLAGS | XNF_FW_F_TCP_ANY)) &&
	    (!(f & XNF_FW_F_PROTO) || r->proto != IPPROTO_TCP))
		return fw_err(err, errlen, "tcp flags need proto tcp (6)");
	if ((f & XNF_FW_F_TCP_ANY) && !r->tcp_mask)
		return fw_err(err, errlen,
			      "tcp flags with no flag never match: name at least one");
	if ((f & XNF_FW_F_TCP_FLAGS) && (r->tcp_flags & ~r->tcp_mask))
		return fw_err(err, errlen,
			      "tcp flags 0x%x / 0x%x never match: the flags must be within the mask",
			      r->tcp_flags, r->tcp_mask);
	return 0;
}

/**
 * xnf_fw_rule_check() - whether a rule is one the compiler accepts
 * @r: the rule
 * @err: receives a one-line reason (may be NULL)
 * @errlen: size of @err
 *
 * Return: 0, or -EINVAL with the reason in @err.
 */
int xnf_fw_rule_check(const struct xnf_fw_rule *r, char *err, size_t errlen)
{
	bool prefix = r->flags & (XNF_FW_F_SRC | XNF_FW_F_DST);
	int ret;

	if (r->flags & ~FW_F_ALL)
		return fw_err(err, errlen, "unknown match flags 0x%x",
			      r->flags & ~FW_F_ALL);
	if (r->action != XNF_FW_ALLOW && r->action != XNF_FW_DROP)
		return fw_err(err, errlen,
			      "action %u is neither allow (%d) nor drop (%d)",
			      r->action, XNF_FW_ALLOW, XNF_FW_DROP);
	if (prefix && r->family != XNF_AF_INET && r->family != XNF_AF_INET6)
		return fw_err(err, errlen,
			      "a src or dst prefix needs family 4 or 6, not %u",
			      r->family);
	if (!prefix && r->family)
		return fw_err(err, errlen,
			      "family %u given without a src or dst prefix (a rule for one family only needs a prefix, e.g. 0.0.0.0/0 or ::/0)",
			      r->family);
	if (r->flags & XNF_FW_F_SRC) {
		ret = fw_check_prefix("src", r->src, r->src_len, r->family, err,
				      errlen);
		if (ret)
			return ret;
	}
	if (r->flags & XNF_FW_F_DST) {
		ret = fw_check_prefix("dst", r->dst, r->dst_len, r->family, err,
				      errlen);
		if (ret)
			return ret;
	}
	if ((r->flags & XNF_FW_F_SPORT) && r->sport_lo > r->sport_hi)
		return fw_err(err, errlen,
			      "sport range %u-%u is empty: its low end is above its high end",
			      r->sport_lo, r->sport_hi);
	if ((r->flags & XNF_FW_F_DPORT) && r->dport_lo > r->dport_hi)
		return fw_err(err, errlen,
			      "dport range %u-%u is empty: its low end is above its high end",
			      r->dport_lo, r->dport_hi);
	if ((r->flags & (XNF_FW_F_SPORT | XNF_FW_F_DPORT)) &&
	    (r->flags & XNF_FW_F_PROTO) && !fw_ports_proto(r->proto))
		return fw_err(err, errlen,
			      "ports only exist for tcp (6), udp (17) and sctp (132), not for protocol %u",
			      r->proto);
	ret = fw_check_extra(r, err, errlen);
	if (ret)
		return ret;
	ret = xnf_fw_log_check(r, err, errlen);
	if (ret)
		return ret;
	if (err && errlen)
		err[0] = '\0';
	return 0;
}

/* ---- the compiler ---- */

/* What of @r a candidate is checked on (struct xnf_fw_extra). */
static void fw_extra_copy(const struct xnf_fw_rule *r, struct xnf_fw_extra *x)
{
	memset(x, 0, sizeof(*x));
	x->flags = r->flags & XNF_FW_F_EXTRA;
	if (!x->flags)
		return;
	x->iif = r->iif;
	x->ct_states = r->ct_states;
	x->icmp_type = r->icmp_type;
	x->icmp_code = r->icmp_code;
	x->tcp_flags = r->tcp_flags;
	x->tcp_mask = r->tcp_mask;
}

/* The bits of xnf_fw_deps() rule @r looks at (see xnf_fw_hdr.deps). */
static __u32 fw_rule_deps(const struct xnf_fw_rule *r)
{
	__u32 d = 0;

	if (r->flags & XNF_FW_F_CT)
		d |= XNF_FW_DEP_CT;
	if (r->flags & (XNF_FW_F_TCP_FLAGS | XNF_FW_F_TCP_ANY))
		d |= XNF_FW_DEP_HAS_TCP | (__u32)r->tcp_mask << 8;
	if (r->flags & XNF_FW_F_ICMP_TYPE)
		d |= XNF_FW_DEP_HAS_ICMP | XNF_FW_DEP_ICMP_TYPE;
	if (r->flags & XNF_FW_F_ICMP_CODE)
		d |= XNF_FW_DEP_ICMP_CODE;
	return d;
}

struct fw_build {
	const struct xnf_fw_rule *rules; /* by slot */
	const __u32 *slot;		 /* [n]: slot of rule i */
	__u32 n;			 /* rules, in priority order */
	__u32 nwords;			 /* 64-bit words that can be non-zero */
	struct xnf_fw_compiled *c;
	__u32 cap;   /* classes allocated in c->classes */
	__u32 *hash; /* [FW_HASH_SIZE]: class id + 1, 0 free */
};

static const struct xnf_fw_rule *fw_rule(const struct fw_build *b, __u32 i)
{
	return &b->rules[b->slot[i]];
}

static void bm_set(__u64 *bm, __u32 i)
{
	bm[i / 64] |= 1ULL << (i % 64);
}

static void bm_clear(__u64 *bm, __u32 i)
{
	bm[i / 64] &= ~(1ULL << (i % 64));
}

static __u64 bm_hash(const __u64 *bm, __u32 nwords)
{
	__u64 h = 0x9e3779b97f4a7c15ULL;
	__u32 i;

	for (i = 0; i < nwords; i++) {
		h ^= bm[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 32);
}

/* The class id of bitmap @bm (words past nwords are zero), added to the
 * pool if no class has that bitmap yet. */
static int fw_intern(struct fw_build *b, const __u64 *bm, __u32 *id)
{
	struct xnf_fw_compiled *c = b->c;
	size_t len = b->nwords * sizeof(__u64);
	struct xnf_fw_class *k;
	__u32 h, w;

	h = bm_hash(bm, b->nwords) & (FW_HASH_SIZE - 1);
	while (b->hash[h]) {
		k = &c->classes[b->hash[h] - 1];
		if (!memcmp(k->bits, bm, len)) {
			*id = b->hash[h] - 1;
			return 0;
		}
		h = (h + 1) & (FW_HASH_SIZE - 1);
	}
	if (c->nclasses >= XNF_FW_MAX_CLASSES)
		return -ENOSPC;
	if (c->nclasses == b->cap) {
		__u32 cap = b->cap ? 2 * b->cap : 256;

		k = realloc(c->classes, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		c->classes = k;
		b->cap = cap;
	}
	k = &c->classes[c->nclasses];
	memset(k, 0, sizeof(*k));
	memcpy(k->bits, bm, len);
	for (w = 0; w < b->nwords; w++)
		if (k->bits[w])
			k->summary[w / 64] |= 1ULL << (w % 64);
	b->hash[h] = c->nclasses + 1;
	*id = c->nclasses++;
	return 0;
}

/* Rules that do not match on the field of @flag: they are in every class
 * of that field. */
static void fw_wild(const struct fw_build *b, __u16 flag, __u64 *bm)
{
	__u32 i;

	memset(bm, 0, XNF_FW_WORDS * sizeof(__u64));
	for (i = 0; i < b->n; i++)
		if (!(fw_rule(b, i)->flags & flag))
			bm_set(bm, i);
}

struct fw_pfx {
	__u8 addr[16]; /* masked */
	__u32 len;
	__u32 rule;
};

/* (address, length) order: the preorder of the binary trie. */
static int fw_pfx_cmp(const void *a, const void *b)
{
	const struct fw_pfx *x = a, *y = b;
	int d = memcmp(x->addr, y->addr, sizeof(x->addr));

	if (d)
		return d;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

/* LPM entries of one field (src or dst) and one family, appended to
 * @ent[*nent]. */
static int fw_build_prefixes(struct fw_build *b, bool dst, __u8 family,
			     struct xnf_fw_prefix *ent, __u32 *nent)
{
	__u16 flag = dst ? XNF_FW_F_DST : XNF_FW_F_SRC;
	const struct fw_pfx *top[FW_PFX_DEPTH];
	static const struct fw_pfx root;
	struct fw_pfx *pfx = NULL;
	__u32 npfx = 0, depth, i, k, id;
	struct xnf_fw_prefix *e;
	__u64 *stack = NULL;
	int err = -ENOMEM;

	pfx = calloc(b->n + 1, sizeof(*pfx));
	stack = malloc((size_t)FW_PFX_DEPTH * XNF_FW_WORDS * sizeof(__u64));
	if (!pfx || !stack)
		goto out;
	for (i = 0; i < b->n; i++) {
		const struct xnf_fw_rule *r = fw_rule(b, i);
		__u32 len;

		if (!(r->flags & flag) || r->family != family)
			continue;
		len = dst ? r->dst_len : r->src_len;
		fw_mask(pfx[npfx].addr, dst ? r->dst : r->src, len, family);
		pfx[npfx].len = len;
		pfx[npfx].rule = i;
		npfx++;
	}
	qsort(pfx, npfx, sizeof(*pfx), fw_pfx_cmp);

	/* The /0: rules that ignore the field plus this family's /0 rules,
	 * which sort first. It contains every address of the family, so the
	 * stack below never empties and every lookup finds an entry. */
	fw_wild(b, flag, stack);
	for (k = 0; k < npfx && pfx[k].len == 0; k++)
		bm_set(stack, pfx[k].rule);
	top[0] = &root;
	depth = 1;
	err = fw_intern(b, stack, &id);
	if (err)
		goto out;
	e = &ent[(*nent)++];
	memset(e, 0, sizeof(*e));
	e->family = family;
	e->class = id;

	while (k < npfx) {
		const struct fw_pfx *p = &pfx[k];
		__u64 *bm;

		/* Pop the entries that do not contain p; the /0 stays. A
		 * later entry is never shorter than one that contains it
		 * (preorder), so lengths grow strictly along the stack. */
		while (top[depth - 1]->len > p->len ||
		       !fw_pfx_has(top[depth - 1]->addr, top[depth - 1]->len,
				   p->addr))
			depth--;
		bm = stack + (size_t)depth * XNF_FW_WORDS;
		memcpy(bm, bm - XNF_FW_WORDS, XNF_FW_WORDS * sizeof(__u64));
		for (; k < npfx && pfx[k].len == p->len &&
		       !memcmp(pfx[k].addr, p->addr, 16);
		     k++)
			bm_set(bm, pfx[k].rule);
		top[depth++] = p;
		err = fw_intern(b, bm, &id);
		if (err)
			goto out;
		e = &ent[(*nent)++];
		memset(e, 0, sizeof(*e));
		e->family = family;
		e->len = p->len;
		memcpy(e->addr, p->addr, 16);
		e->class = id;
	}
	err = 0;
out:
	free(stack);
	free(pfx);
	return err;
}

static int fw_build_proto(struct fw_build *b, __u64 *bm)
{
	__u64 *wild = bm + XNF_FW_WORDS;
	__u32 i, v;
	int err;

	fw_wild(b, XNF_FW_F_PROTO, wild);
	for (v = 0; v < 256; v++) {
		memcpy(bm, wild, XNF_FW_WORDS * sizeof(__u64));
		for (i = 0; i < b->n; i++) {
			const struct xnf_fw_rule *r = fw_rule(b, i);

			if ((r->flags & XNF_FW_F_PROTO) && r->proto == v)
				bm_set(bm, i);
		}
		err = fw_intern(b, bm, &b->c->proto[v]);
		if (err)
			return err;
	}
	return 0;
}

struct fw_event {
	__u32 pos; /* first port where the change applies */
	__u32 rule;
	__u32 add; /* 1: range starts, 0: range ended at pos - 1 */
};

static int fw_event_cmp(const void *a, const void *b)
{
	const struct fw_event *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int fw_build_ports(struct fw_build *b, bool dst, __u64 *bm)
{
	__u16 flag = dst ? XNF_FW_F_DPORT : XNF_FW_F_SPORT;
	__u32 *table = dst ? b->c->dport : b->c->sport;
	__u32 nev = 0, k = 0, pos, next, id, i;
	struct fw_event *ev;
	int err = -ENOMEM;

	ev = calloc(2 * (size_t)b->n + 1, sizeof(*ev));
	if (!ev)
		goto out;
	for (i = 0; i < b->n; i++) {
		const struct xnf_fw_rule *r = fw_rule(b, i);
		__u32 lo = dst ? r->dport_lo : r->sport_lo;
		__u32 hi = dst ? r->dport_hi : r->sport_hi;

		if (!(r->flags & flag))
			continue;
		ev[nev++] = (struct fw_event){ .pos = lo, .rule = i, .add = 1 };
		if (hi + 1 < FW_PORTS)
			ev[nev++] = (struct fw_event){ .pos = hi + 1, .rule = i };
	}
	/* Events at one position touch different rules (a rule's own
	 * removal comes strictly after its addition), so their order among
	 * themselves does not matter. */
	qsort(ev, nev, sizeof(*ev), fw_event_cmp);

	/* The rules without a port match: the class of the ports no range
	 * covers, and of packets whose ports could not be read. */
	fw_wild(b, flag, bm);
	err = fw_intern(b, bm,
			dst ? &b->c->hdr.dport_none : &b->c->hdr.sport_none);
	if (err)
		goto out;
	for (pos = 0; pos < FW_PORTS; pos = next) {
		for (; k < nev && ev[k].pos == pos; k++) {
			if (ev[k].add)
				bm_set(bm, ev[k].rule);
			else
				bm_clear(bm, ev[k].rule);
		}
		err = fw_intern(b, bm, &id);
		if (err)
			goto out;
		next = k < nev ? ev[k].pos : FW_PORTS;
		for (i = pos; i < next; i++)
			table[i] = id;
	}
	err = 0;
out:
	free(ev);
	return err;
}

struct fw_prio {
	__u32 prio;
	__u32 slot;
};

static int fw_prio_cmp(const void *a, const void *b)
{
	const struct fw_prio *x = a, *y = b;

	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/*
 * The bit order (see the comment above XNF_FW_MAX_RULES in include/uapi/xnf_fw.h).
 * Rules are sorted by destination: wildcard first, then family, address,
 * length, so that the rules one destination address matches sit in a few
 * words; within each 64-rule word they are then sorted by rank, so that the
 * lowest set bit of a word is that word's best match. Priority order plays
 * no other part in the layout: the BPF side compares the ranks of the words'
 * best matches.
 */
struct fw_dst_key {
	__u64 dst[2]; /* address as a 128-bit big number, v4 on top */
	__u32 rank;
	__u8 wild, family, len;
};

static int fw_dst_cmp(const void *a, const void *b)
{
	const struct fw_dst_key *x = a, *y = b;

	if (x->wild != y->wild)
		return x->wild ? -1 : 1;
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->dst[0] != y->dst[0])
		return x->dst[0] < y->dst[0] ? -1 : 1;
	if (x->dst[1] != y->dst[1])
		return x->dst[1] < y->dst[1] ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int fw_rank_cmp(const void *a, const void *b)
{
	const struct fw_dst_key *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* bit[i] receives the rank (priority position) of the rule at bit i. */
static int fw_layout(const struct xnf_fw_rule *rules, const __u32 *slot,
		     __u32 n, __u32 *bit)
{
	struct fw_dst_key *k = calloc(n + 1, sizeof(*k));
	__u32 i, j;

	if (!k)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct xnf_fw_rule *r = &rules[slot[i]];

		k[i].rank = i;
		k[i].wild = !(r->flags & XNF_FW_F_DST);
		if (k[i].wild)
			continue;
		k[i].family = r->family;
		k[i].len = r->dst_len;
		for (j = 0; j < fw_addr_bytes(r->family); j++)
			k[i].dst[j / 8] |= (__u64)r->dst[j] << (56 - 8 * (j % 8));
	}
	qsort(k, n, sizeof(*k), fw_dst_cmp);
	for (i = 0; i < n; i += 64)
		qsort(k + i, n - i < 64 ? n - i : 64, sizeof(*k), fw_rank_cmp);
	for (i = 0; i < n; i++)
		bit[i] = k[i].rank;
	free(k);
	return 0;
}

void xnf_fw_compiled_free(struct xnf_fw_compiled *c)
{
	if (!c)
		return;
	free(c->classes);
	free(c->order);
	free(c->src);
	free(c->dst);
	free(c->sport);
	free(c->dport);
	free(c);
}

/**
 * xnf_fw_compile() - compile the rules in use into one generation of tables
 * @rules: rule slots, as in xnf_fw_rules
 * @nslots: number of slots in @rules
 * @default_action: XNF_FW_ALLOW or XNF_FW_DROP, for packets no rule matches
 * @out: receives the tables, to free with xnf_fw_compiled_free()
 *
 * Return: 0; -EINVAL for a malformed rule, two rules of one prio or a bad
 * default; -ENOSPC for more than XNF_FW_MAX_RULES rules or more than
 * XNF_FW_MAX_CLASSES classes; -ENOMEM.
 */
int xnf_fw_compile(const struct xnf_fw_rule *rules, __u32 nslots,
		   __u32 default_action, struct xnf_fw_compiled **out,
		   char *errbuf, size_t errlen)
{
	struct fw_prio *prio = NULL;
	struct xnf_fw_compiled *c = NULL;
	struct fw_build b = { .rules = rules };
	__u32 *slot = NULL, *rank = NULL, *bitslot = NULL, n = 0, i;
	__u64 *bm = NULL;
	char msg[160];
	int err;

	*out = NULL;
	if (default_action != XNF_FW_ALLOW && default_action != XNF_FW_DROP) {
		return xnf_errf(errbuf, errlen, -EINVAL,
				"default policy %u is neither allow nor drop",
				default_action);
	}
	for (i = 0; i < nslots; i++) {
		if (!rules[i].in_use)
			continue;
		err = xnf_fw_rule_check(&rules[i], msg, sizeof(msg));
		if (err)
			return xnf_errf(errbuf, errlen, err,
					"rule in slot %u (prio %u): %s", i,
					rules[i].prio, msg);
		n++;
	}
	if (n > XNF_FW_MAX_RULES) {
		return xnf_errf(errbuf, errlen, -ENOSPC,
				"%u rules in use, the tables hold %u; delete %u",
				n, XNF_FW_MAX_RULES, n - XNF_FW_MAX_RULES);
	}

	err = -ENOMEM;
	prio = calloc(n + 1, sizeof(*prio));
	slot = calloc(n + 1, sizeof(*slot));
	rank = calloc(n + 1, sizeof(*rank));
	bitslot = calloc(n + 1, sizeof(*bitslot));
	bm = malloc(2 * XNF_FW_WORDS * sizeof(*bm));
	b.hash = calloc(FW_HASH_SIZE, sizeof(*b.hash));
	c = calloc(1, sizeof(*c));
	if (!prio || !slot || !rank || !bitslot || !bm || !b.hash || !c)
		goto out;
	c->order = calloc(n + 1, sizeof(*c->order));
	/* Per field at most one entry per rule plus the /0 of each family. */
	c->src = calloc(n + 2, sizeof(*c->src));
	c->dst = calloc(n + 2, sizeof(*c->dst));
	c->sport = calloc(FW_PORTS, sizeof(*c->sport));
	c->dport = calloc(FW_PORTS, sizeof(*c->dport));
	if (!c->order || !c->src || !c->dst || !c->sport || !c->dport)
		goto out;

	/* Priority order first; fw_layout() then picks the bit order. */
	for (i = 0, n = 0; i < nslots; i++) {
		if (!rules[i].in_use)
			continue;
		prio[n].prio = rules[i].prio;
		prio[n].slot = i;
		n++;
	}
	qsort(prio, n, sizeof(*prio), fw_prio_cmp);
	for (i = 0; i < n; i++) {
		if (i && prio[i].prio == prio[i - 1].prio) {
			err = xnf_errf(errbuf, errlen, -EINVAL,
				       "rules in slots %u and %u both have prio %u; give each rule its own",
				       prio[i - 1].slot, prio[i].slot,
				       prio[i].prio);
			goto out;
		}
		slot[i] = prio[i].slot;
	}
	/* From here on rule i is the rule at bit i: slot[] is permuted. */
	err = fw_layout(rules, slot, n, rank);
	if (err)
		goto out;
	for (i = 0; i < n; i++) {
		bitslot[i] = slot[rank[i]];
		c->order[i].action = rules[bitslot[i]].action;
		c->order[i].log = rules[bitslot[i]].log ? XNF_FW_ACTION_LOG : 0;
		c->order[i].slot = bitslot[i];
		c->order[i].rank = rank[i];
		fw_extra_copy(&rules[bitslot[i]], &c->order[i].x);
		c->hdr.deps |= fw_rule_deps(&rules[bitslot[i]]);
	}
	memcpy(slot, bitslot, n * sizeof(*slot));
	/* One word of rules is in priority order (fw_layout()): the BPF
	 * program may scan it as it is instead of using the tables. */
	c->hdr.linear = n <= XNF_FW_LINEAR_MAX;
	for (i = 0; i < n && c->hdr.linear; i++)
		c->hdr.linear = c->order[i].rank == i;
	b.slot = slot;
	b.n = n;
	b.nwords = (n + 63) / 64;
	b.c = c;
	c->hdr.nrules = n;
	c->hdr.default_action = default_action;

	err = fw_build_prefixes(&b, false, XNF_AF_INET, c->src, &c->nsrc);
	if (!err)
		err = fw_build_prefixes(&b, false, XNF_AF_INET6, c->src,
					&c->nsrc);
	if (!err)
		err = fw_build_prefixes(&b, true, XNF_AF_INET, c->dst, &c->ndst);
	if (!err)
		err = fw_build_prefixes(&b, true, XNF_AF_INET6, c->dst, &c->ndst);
	if (!err)
		err = fw_build_proto(&b, bm);
	if (!err)
		err = fw_build_ports(&b, false, bm);
	if (!err)
		err = fw_build_ports(&b, true, bm);
	if (err == -ENOSPC)
		xnf_errf(errbuf, errlen, err,
			 "firewall full: the %u rules need more than %u classes (distinct sets of rules per field value); use fewer distinct prefixes or port ranges",
			 n, XNF_FW_MAX_CLASSES);
	else if (err)
		xnf_errf(errbuf, errlen, err, "%s", strerror(-err));
	if (err)
		goto out;
	*out = c;
	c = NULL;
out:
	xnf_fw_compiled_free(c);
	free(b.hash);
	free(bm);
	free(bitslot);
	free(rank);
	free(slot);
	free(prio);
	return err;
}

/* ---- classification ---- */

/* The extra matches (XNF_FW_F_EXTRA) of @r hold for @p. As nft: `ct
 * state` any of the set, `tcp flags F` any of F, `tcp flags F / M` the
 * flags under M are F; a packet whose TCP or ICMP header could not be read
 * matches no tcp flags or icmp type. */
static bool fw_extra_matches(const struct xnf_fw_rule *r,
			     const struct xnf_fw_pkt *p)
{
	__u16 f = r->flags;

	if ((f & XNF_FW_F_CT) && !(r->ct_states & (1u << (p->ct_state & 7))))
		return false;
	if ((f & XNF_FW_F_IIF) && r->iif != p->ifindex)
		return false;
	if ((f & XNF_FW_F_ICMP_TYPE) && (!p->icmp || p->icmp_type != r->icmp_type))
		return false;
	if ((f & XNF_FW_F_ICMP_CODE) && p->icmp_code != r->icmp_code)
		return false;
	if ((f & XNF_FW_F_TCP_FLAGS) &&
	    (!p->tcp || (p->tcp_flags & r->tcp_mask) != r->tcp_flags))
		return false;
	if ((f & XNF_FW_F_TCP_ANY) && (!p->tcp || !(p->tcp_flags & r->tcp_mask)))
		return false;
	return true;
}

/* Class of the longest entry of @family containing @addr, or -1. */
static __s64 fw_lpm(const struct xnf_fw_prefix *e, __u32 n, __u8 family,
		    const __u8 *addr)
{
	__s64 best = -1;
	int len = -1;
	__u32 i;

	for (i = 0; i < n; i++) {
		if (e[i].family != family || (int)e[i].len <= len)
			continue;
		if (!fw_pfx_has(e[i].addr, e[i].len, addr))
			continue;
		best = e[i].class;
		len = e[i].len;
	}
	return best;
}

static __u32 fw_ctz64(__u64 x)
{
	return __builtin_ctzll(x);
}

/**
 * xnf_fw_classify() - first match on compiled tables, as firewall.bpf.h does
 * @c: the tables
 * @rules: the rule slots @c was compiled from (a candidate with extra
 *	matches is checked against its rule)
 * @p: the packet
 *
 * Return: the index in priority order of the first matching rule (its slot
 * is c->order[index].slot), or -1 when the default applies.
 */
int xnf_fw_classify(const struct xnf_fw_compiled *c,
		    const struct xnf_fw_rule *rules, const struct xnf_fw_pkt *p)
{
	const struct xnf_fw_class *k[5];
	int best = -1;
	__s64 id[5];
	__u32 s, w, f;
	__u64 sum, m;

	/* The BPF program leaves non-IP packets alone and applies the
	 * default when there are no rules. */
	if (p->family != XNF_AF_INET && p->family != XNF_AF_INET6)
		return -1;
	if (!c->hdr.nrules)
		return -1;
	id[0] = fw_lpm(c->src, c->nsrc, p->family, p->src);
	id[1] = fw_lpm(c->dst, c->ndst, p->family, p->dst);
	id[2] = c->proto[p->proto];
	id[3] = p->ports ? c->sport[p->sport] : c->hdr.sport_none;
	id[4] = p->ports ? c->dport[p->dport] : c->hdr.dport_none;
	/* A field without a class matches no rule. */
	for (f = 0; f < 5; f++) {
		if (id[f] < 0 || id[f] >= c->nclasses)
			return -1;
		k[f] = &c->classes[id[f]];
	}

	for (s = 0; s < XNF_FW_SUMMARY; s++) {
		sum = k[0]->summary[s] & k[1]->summary[s] & k[2]->summary[s] &
		      k[3]->summary[s] & k[4]->summary[s];
		while (sum) {
			w = s * 64 + fw_ctz64(sum);
			sum &= sum - 1;
			if (w >= XNF_FW_WORDS)
				return best;
			m = k[0]->bits[w] & k[1]->bits[w] & k[2]->bits[w] &
			    k[3]->bits[w] & k[4]->bits[w];
			/* The word's candidates in priority order: the first
			 * whose extra matches hold is the word's best. */
			for (; m; m &= m - 1) {
				__u32 bit = w * 64 + fw_ctz64(m);
				const struct xnf_fw_match *o = &c->order[bit];

				if (bit >= c->hdr.nrules ||
				    (best >= 0 && o->rank >= c->order[best].rank))
					break;
				if (o->x.flags &&
				    !fw_extra_matches(&rules[o->slot], p))
					continue;
				best = bit;
				break;
			}
		}
	}
	return best;
}

static bool fw_rule_matches(const struct xnf_fw_rule *r,
			    const struct xnf_fw_pkt *p)
{
	if ((r->flags & XNF_FW_F_EXTRA) && !fw_extra_matches(r, p))
		return false;
	if ((r->flags & XNF_FW_F_SRC) &&
	    (r->family != p->family || !fw_pfx_has(r->src, r->src_len, p->src)))
		return false;
	if ((r->flags & XNF_FW_F_DST) &&
	    (r->family != p->family || !fw_pfx_has(r->dst, r->dst_len, p->dst)))
		return false;
	if ((r->flags & XNF_FW_F_PROTO) && r->proto != p->proto)
		return false;
	/* A port match needs ports: never for ICMP, later fragments or a
	 * truncated L4 header. */
	if ((r->flags & XNF_FW_F_SPORT) &&
	    (!p->ports || p->sport < r->sport_lo || p->sport > r->sport_hi))
		return false;
	if ((r->flags & XNF_FW_F_DPORT) &&
	    (!p->ports || p->dport < r->dport_lo || p->dport > r->dport_hi))
		return false;
	return true;
}

/**
 * xnf_fw_linear() - first match by a scan of every rule: the reference
 * @rules: rule slots
 * @nslots: number of slots
 * @p: the packet
 *
 * Return: the slot of the matching rule of lowest prio, or -1.
 */
int xnf_fw_linear(const struct xnf_fw_rule *rules, __u32 nslots,
		  const struct xnf_fw_pkt *p)
{
	int best = -1;
	__u32 i;

	if (p->family != XNF_AF_INET && p->family != XNF_AF_INET6)
		return -1;
	/* The matching rule of lowest prio, without sorting: ties (which
	 * the compiler refuses) go to the lower slot. The cheap prio test
	 * comes first, so once a rule matched most others cost nothing. */
	for (i = 0; i < nslots; i++) {
		if (!rules[i].in_use)
			continue;
		if (best >= 0 && rules[i].prio >= rules[best].prio)
			continue;
		if (fw_rule_matches(&rules[i], p))
			best = i;
	}
	return best;
}

/* ---- storing a compiled set into the pinned maps ---- */

int fw_map_err(const struct xnf_dp *dp, enum xnf_table t, const char *what,
	       int err, char *errbuf, size_t errlen)
{
	return xnf_errf(errbuf, errlen, err,
			"firewall: cannot %s %s/tables/%s: %s; check it with `bpftool map show pinned %s/tables/%s`, or recreate the instance if its layout is stale",
			what, dp->root, xnf_table_names[t], strerror(-err),
			dp->root, xnf_table_names[t]);
}

/* Stores @count values of @vsize bytes at keys @base, @base + 1, ... of
 * the array @t in one batch update. */
int fw_array_store(struct xnf_dp *dp, enum xnf_table t, __u32 base,
		   const void *values, size_t vsize, __u32 count, __u32 *keys,
		   char *errbuf, size_t errlen)
{
	__u32 i;
	int err;

	for (i = 0; i < count; i++)
		keys[i] = base + i;
	err = xnf_map_update_all(xnf_table_fd(dp, t), keys, values,
				 sizeof(*keys), vsize, count, BPF_ANY);
	if (err)
		fw_map_err(dp, t, "update", err, errbuf, errlen);
	return err;
}

/* Deletes every entry of generation @gen from the LPM trie @t: reads all
 * keys (both generations: at most XNF_FW_GENS * (XNF_FW_MAX_RULES + 1)),
 * then deletes those of @gen in one batch. */
static int fw_lpm_clear(struct xnf_dp *dp, enum xnf_table t, __u32 ksize,
			__u32 gen, char *errbuf, size_t errlen)
{
	__u32 max = XNF_FW_GENS * (XNF_FW_MAX_RULES + 1), n, i, k = 0;
	__u8 *keys, *vals;
	int err;

	keys = malloc((size_t)max * ksize);
	vals = malloc((size_t)max * sizeof(__u32));
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	err = xnf_map_read_all(xnf_table_fd(dp, t), ksize, sizeof(__u32), max,
			       keys, vals, &n);
	if (err) {
		fw_map_err(dp, t, "read", err, errbuf, errlen);
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct xnf_fw_lpm4_key *key = (void *)(keys +
							     (size_t)i * ksize);

		if (key->gen == gen)
			memmove(keys + (size_t)k++ * ksize, key, ksize);
	}
	err = xnf_map_delete_all(xnf_table_fd(dp, t), keys, ksize, k);
	if (err)
		fw_map_err(dp, t, "delete from", err, errbuf, errlen);
out:
	free(vals);
	free(keys);
	return err;
}

/* Inserts the entries of family @family of @e[0..n) into the trie @t, keyed
 * with generation @gen, in one batch. */
static int fw_lpm_fill(struct xnf_dp *dp, enum xnf_table t, __u8 family,
		       const struct xnf_fw_prefix *e, __u32 n, __u32 gen,
		       char *errbuf, size_t errlen)
{
	__u32 ksize = family == XNF_AF_INET ? sizeof(struct xnf_fw_lpm4_key) :
					      sizeof(struct xnf_fw_lpm6_key);
	__u32 i, k = 0, *vals;
	__u8 *keys;
	int err = -ENOMEM;

	keys = calloc(n + 1, ksize);
	vals = calloc(n + 1, sizeof(*vals));
	if (!keys || !vals)
		goto out;
	for (i = 0; i < n; i++) {
		struct xnf_fw_lpm6_key key = {
			.prefixlen = 32 + e[i].len,
			.gen = gen,
		};

		if (e[i].family != family)
			continue;
		memcpy(key.addr, e[i].addr, fw_addr_bytes(family));
		memcpy(keys + (size_t)k * ksize, &key, ksize);
		vals[k++] = e[i].class;
	}
	err = xnf_map_update_all(xnf_table_fd(dp, t), keys, vals, ksize,
				 sizeof(*vals), k, BPF_ANY);
	if (err)
		fw_map_err(dp, t, "insert into", err, errbuf, errlen);
out:
	free(vals);
	free(keys);
	return err;
}

/**
 * fw_tables_write() - store compiled tables in generation @gen
 * @dp: the instance
 * @gen: the inactive generation, free of packets (a grace period has
 *	passed since the switch away from it)
 * @c: the tables
 * @serial: stored in the header, for readers that check for a rewrite
 *
 * Nothing reads @gen while it is written, so the order only matters for
 * what is left: the tries are cleared before they are filled (a stale
 * prefix of an older set would win longest-prefix matches with a class id
 * that now means something else, and max_entries leaves room for one set
 * per generation); arrays are overwritten in place (entries past this
 * set's counts are not referred to); the header is written last.
 *
 * Return: 0 or a negative errno, with a message naming the map.
 */
int fw_tables_write(struct xnf_dp *dp, __u32 gen, const struct xnf_fw_compiled *c,
		    __u32 serial, char *errbuf, size_t errlen)
{
	struct xnf_fw_hdr hdr = c->hdr;
	__u32 *keys = NULL;
	int err;

	if (c->nclasses > XNF_FW_MAX_CLASSES || c->hdr.nrules > XNF_FW_MAX_RULES)
		return xnf_errf(errbuf, errlen, -EINVAL,
				"firewall: %u classes or %u rules are more than the tables hold",
				c->nclasses, c->hdr.nrules);
	keys = calloc(FW_PORTS, sizeof(*keys));
	if (!keys)
		return xnf_errf(errbuf, errlen, -ENOMEM, "out of memory");
	err = fw_lpm_clear(dp, XNF_T_FW_SRC4, sizeof(struct xnf_fw_lpm4_key),
			   gen, errbuf, errlen);
	if (!err)
		err = fw_lpm_clear(dp, XNF_T_FW_DST4,
				   sizeof(struct xnf_fw_lpm4_key), gen, errbuf,
				   errlen);
	if (!err)
		err = fw_lpm_clear(dp, XNF_T_FW_SRC6,
				   sizeof(struct xnf_fw_lpm6_key), gen, errbuf,
				   errlen);
	if (!err)
		err = fw_lpm_clear(dp, XNF_T_FW_DST6,
				   sizeof(struct xnf_fw_lpm6_key), gen, errbuf,
				   errlen);
	if (!err)
		err = fw_lpm_fill(dp, XNF_T_FW_SRC4, XNF_AF_INET, c->src,
				  c->nsrc, gen, errbuf, errlen);
	if (!err)
		err = fw_lpm_fill(dp, XNF_T_FW_SRC6, XNF_AF_INET6, c->src,
				  c->nsrc, gen, errbuf, errlen);
	if (!err)
		err = fw_lpm_fill(dp, XNF_T_FW_DST4, XNF_AF_INET, c->dst,
				  c->ndst, gen, errbuf, errlen);
	if (!err)
		err = fw_lpm_fill(dp, XNF_T_FW_DST6, XNF_AF_INET6, c->dst,
				  c->ndst, gen, errbuf, errlen);
	if (!err)
		err = fw_array_store(dp, XNF_T_FW_CLASS, gen * XNF_FW_MAX_CLASSES,
				     c->classes, sizeof(*c->classes),
				     c->nclasses, keys, errbuf, errlen);
	if (!err)
		err = fw_array_store(dp, XNF_T_FW_PROTO, gen * 256, c->proto,
				     sizeof(c->proto[0]), 256, keys, errbuf,
				     errlen);
	if (!err)
		err = fw_array_store(dp, XNF_T_FW_SPORT, gen * FW_PORTS,
				     c->sport, sizeof(*c->sport), FW_PORTS,
				     keys, errbuf, errlen);
	if (!err)
		err = fw_array_store(dp, XNF_T_FW_DPORT, gen * FW_PORTS,
				     c->dport, sizeof(*c->dport), FW_PORTS,
				     keys, errbuf, errlen);
	if (!err)
		err = fw_array_store(dp, XNF_T_FW_ORDER, gen * XNF_FW_MAX_RULES,
				     c->order, sizeof(*c->order), c->hdr.nrules,
				     keys, errbuf, errlen);
	hdr.serial = serial;
	if (!err)
		err = fw_array_store(dp, XNF_T_FW_HDR, gen, &hdr, sizeof(hdr),
				     1, keys, errbuf, errlen);
	free(keys);
	return err;
}
