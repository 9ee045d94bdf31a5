// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ct.c - the connection table (xnf_ct) as conntrack(8) shows it: its live
 * entries by a filter, their flush, and the table's counters.
 *
 * The table is read whole in batch lookups (xnf_map_read_all): an entry is
 * a key, the same for both directions, whose status says which side
 * originated it, and an entry whose expires passed is dead (the conntrack
 * NF treats it as absent and replaces it when a packet finds it; the LRU
 * reclaims it when it needs room), so it is neither listed nor flushed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ct.h"
#include "ct_priv.h"
#include "priv.h"

static const char *const tcp_state_names[__XNF_CT_TCP_MAX] = {
	[XNF_CT_TCP_NONE] = "NONE",
	[XNF_CT_TCP_SYN_SENT] = "SYN_SENT",
	[XNF_CT_TCP_SYN_RECV] = "SYN_RECV",
	[XNF_CT_TCP_ESTABLISHED] = "ESTABLISHED",
	[XNF_CT_TCP_FIN_WAIT] = "FIN_WAIT",
	[XNF_CT_TCP_CLOSE_WAIT] = "CLOSE_WAIT",
	[XNF_CT_TCP_LAST_ACK] = "LAST_ACK",
	[XNF_CT_TCP_TIME_WAIT] = "TIME_WAIT",
	[XNF_CT_TCP_CLOSE] = "CLOSE",
	[XNF_CT_TCP_SYN_SENT2] = "SYN_SENT2",
};

const char *xnf_ct_tcp_state_name(__u32 state)
{
	return state < __XNF_CT_TCP_MAX ? tcp_state_names[state] : NULL;
}

int xnf_ct_tcp_state_parse(const char *name)
{
	int i;

	for (i = 0; i < __XNF_CT_TCP_MAX; i++)
		if (!strcasecmp(name, tcp_state_names[i]))
			return i;
	return -1;
}

/*
 * The clock of xnf_ct_entry.expires: bpf_ktime_get_coarse_ns() reads
 * ktime_get_coarse_ns(), which is CLOCK_MONOTONIC_COARSE. (A process in
 * a time namespace reads that clock with the namespace's offset; xnf runs
 * in the host's.)
 */
__u64 xnf_ct_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int xnf_ct_filter_check(const struct xnf_ct_filter *f, char *err, size_t errlen)
{
	__u32 addrs = XNF_CT_F_ADDR | XNF_CT_F_SRC | XNF_CT_F_DST |
		      XNF_CT_F_REPLY_SRC | XNF_CT_F_REPLY_DST;

	if (!f)
		return 0;
	if ((f->what & XNF_CT_F_FAMILY) && f->family != XNF_AF_INET &&
	    f->family != XNF_AF_INET6)
		return xnf_errf(err, errlen, -EINVAL,
				"unknown address family %u: inet or inet6",
				f->family);
	if ((f->what & addrs) && !(f->what & XNF_CT_F_FAMILY))
		return xnf_errf(err, errlen, -EINVAL,
				"an address filter needs its family");
	if ((f->what & XNF_CT_F_TCP_STATE) &&
	    (!f->tcp_states || f->tcp_states >> __XNF_CT_TCP_MAX))
		return xnf_errf(err, errlen, -EINVAL, "invalid TCP states 0x%x",
				f->tcp_states);
	if ((f->what & XNF_CT_F_NAT) &&
	    (!f->nat || (f->nat & ~(__u32)XNF_CT_NAT_BITS)))
		return xnf_errf(err, errlen, -EINVAL,
				"invalid translation bits 0x%x: snat, dnat or masquerade",
				f->nat);
	if ((f->what & XNF_CT_F_NAT_OIF) && !f->oif)
		return xnf_errf(err, errlen, -EINVAL,
				"a masquerade's device needs its ifindex");
	return 0;
}

/* Is the endpoint (@x, @xp) below (@y, @yp): addresses as bytes, then
 * ports as numbers (the order of struct xnf_ct_key). */
static bool ct_ep_below(const __u8 *x, __be16 xp, const __u8 *y, __be16 yp)
{
	int c = memcmp(x, y, 16);

	return c < 0 || (!c && ntohs(xp) < ntohs(yp));
}

void xnf_ct_key_canon(const struct xnf_ct_key *t, struct xnf_ct_key *k)
{
	bool swap = ct_ep_below(t->b_addr, t->b_port, t->a_addr, t->a_port);

	memset(k, 0, sizeof(*k));
	k->family = t->family;
	k->proto = t->proto;
	memcpy(k->a_addr, swap ? t->b_addr : t->a_addr, 16);
	memcpy(k->b_addr, swap ? t->a_addr : t->b_addr, 16);
	k->a_port = swap ? t->b_port : t->a_port;
	k->b_port = swap ? t->a_port : t->b_port;
}

static bool ct_translated(const struct xnf_ct_entry *e)
{
	return (e->status & (XNF_CT_S_SNAT | XNF_CT_S_DNAT)) &&
	       !(e->status & XNF_CT_S_ALIAS);
}

/* The tuple of @k in its original direction into @c. */
static void ct_conn(const struct xnf_ct_key *k, const struct xnf_ct_entry *e,
		    __u64 now, struct xnf_ct_conn *c)
{
	bool b = e->status & XNF_CT_S_ORIG_B;

	memset(c, 0, sizeof(*c));
	c->family = k->family;
	c->proto = k->proto;
	c->tcp_state = e->tcp_state;
	memcpy(c->src, b ? k->b_addr : k->a_addr, 16);
	memcpy(c->dst, b ? k->a_addr : k->b_addr, 16);
	c->sport = ntohs(b ? k->b_port : k->a_port);
	c->dport = ntohs(b ? k->a_port : k->b_port);
	if (ct_translated(e)) {
		/* The reply tuple as the translation made it: a is its
		 * source (not ordered). */
		memcpy(c->rsrc, e->nat.a_addr, 16);
		memcpy(c->rdst, e->nat.b_addr, 16);
		c->rsport = ntohs(e->nat.a_port);
		c->rdport = ntohs(e->nat.b_port);
	} else {
		memcpy(c->rsrc, c->dst, 16);
		memcpy(c->rdst, c->src, 16);
		c->rsport = c->dport;
		c->rdport = c->sport;
	}
	c->status = e->status;
	c->nat_oif = e->status & XNF_CT_S_MASQ ? e->nat_oif : 0;
	/* Whole seconds left, as conntrack(8) prints its jiffies / HZ. */
	c->timeout = (e->expires - now) / 1000000000ULL;
	memcpy(c->packets, e->packets, sizeof(c->packets));
	memcpy(c->bytes, e->bytes, sizeof(c->bytes));
}

static bool ct_match(const struct xnf_ct_filter *f, const struct xnf_ct_conn *c)
{
	__u32 w;

	if (!f)
		return true;
	w = f->what;
	if ((w & XNF_CT_F_FAMILY) && c->family != f->family)
		return false;
	if ((w & XNF_CT_F_PROTO) && c->proto != f->proto)
		return false;
	if ((w & XNF_CT_F_ADDR) && memcmp(c->src, f->addr, 16) &&
	    memcmp(c->dst, f->addr, 16))
		return false;
	if ((w & XNF_CT_F_SRC) && memcmp(c->src, f->src, 16))
		return false;
	if ((w & XNF_CT_F_DST) && memcmp(c->dst, f->dst, 16))
		return false;
	if ((w & XNF_CT_F_PORT) && c->sport != f->port && c->dport != f->port)
		return false;
	if ((w & XNF_CT_F_SPORT) && c->sport != f->sport)
		return false;
	if ((w & XNF_CT_F_DPORT) && c->dport != f->dport)
		return false;
	if ((w & XNF_CT_F_TCP_STATE) &&
	    (c->proto != IPPROTO_TCP || !(f->tcp_states & (1U << c->tcp_state))))
		return false;
	if ((w & XNF_CT_F_ASSURED) && !(c->status & XNF_CT_S_ASSURED))
		return false;
	if ((w & XNF_CT_F_UNREPLIED) && (c->status & XNF_CT_S_SEEN_REPLY))
		return false;
	if ((w & XNF_CT_F_REPLY_SRC) && memcmp(c->rsrc, f->rsrc, 16))
		return false;
	if ((w & XNF_CT_F_REPLY_DST) && memcmp(c->rdst, f->rdst, 16))
		return false;
	if ((w & XNF_CT_F_NAT) && !(c->status & f->nat))
		return false;
	if ((w & XNF_CT_F_NAT_OIF) &&
	    (!(c->status & XNF_CT_S_MASQ) || c->nat_oif != f->oif))
		return false;
	return true;
}

/* Every element of the table @fd, live or dead: *@keys and *@ents (free()
 * them), *@n; *@max the table's size. */
static int ct_read(int fd, struct xnf_ct_key **keys, struct xnf_ct_entry **ents,
		   __u32 *n, __u32 *max)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int err;

	*keys = NULL;
	*ents = NULL;
	*n = 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*max = info.max_entries;
	*keys = calloc(info.max_entries, sizeof(**keys));
	*ents = calloc(info.max_entries, sizeof(**ents));
	if (!*keys || !*ents) {
		err = -ENOMEM;
		goto out_free;
	}
	err = xnf_map_read_all(fd, sizeof(**keys), sizeof(**ents),
			       info.max_entries, *keys, *ents, n);
	if (!err)
		return 0;
out_free:
	free(*keys);
	free(*ents);
	*keys = NULL;
	*ents = NULL;
	return err;
}

int xnf_ct_list_fd(int ct_fd, const struct xnf_ct_filter *f, __u64 now,
		   struct xnf_ct_conn **out, __u32 *n)
{
	struct xnf_ct_entry *ents;
	struct xnf_ct_key *keys;
	struct xnf_ct_conn *c;
	__u32 count, max, i;
	int err;

	*out = NULL;
	*n = 0;
	err = ct_read(ct_fd, &keys, &ents, &count, &max);
	if (err)
		return err;
	c = calloc(count ? count : 1, sizeof(*c));
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < count; i++) {
		if (ents[i].expires <= now || (ents[i].status & XNF_CT_S_ALIAS))
			continue;
		ct_conn(&keys[i], &ents[i], now, &c[*n]);
		if (ct_match(f, &c[*n]))
			(*n)++;
	}
	*out = c;
out:
	free(keys);
	free(ents);
	return err;
}

/* Adds @n to the flushed counter: CPU 0's copy of libxnf's entry, which
 * no program writes (an update writes every CPU's copy), under the
 * writer's lock, so no count is lost. */
static int ct_count_flushed(int stats_fd, __u64 n)
{
	struct xnf_ct_counters *v;
	int ncpus = libbpf_num_possible_cpus(), err = 0;
	__u32 key = XNF_CT_STATS_LIB;

	if (ncpus < 0)
		return ncpus;
	v = calloc(ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(stats_fd, &key, v) ||
	    (v[0].flushed += n, bpf_map_update_elem(stats_fd, &key, v, BPF_ANY)))
		err = -errno;
	free(v);
	return err;
}

/* Deletes the alias of the translated connection @e (key @k): the entry
 * under the canonical key of its reply tuple, when it is the alias of
 * @k. 0, or -errno of a failed delete (gone meanwhile is no failure). */
static int ct_alias_delete(int ct_fd, const struct xnf_ct_key *k,
			   const struct xnf_ct_entry *e)
{
	struct xnf_ct_entry a;
	struct xnf_ct_key ak;

	xnf_ct_key_canon(&e->nat, &ak);
	if (bpf_map_lookup_elem(ct_fd, &ak, &a))
		return 0;
	if (!(a.status & XNF_CT_S_ALIAS) || memcmp(&a.nat, k, sizeof(*k)))
		return 0;
	if (bpf_map_delete_elem(ct_fd, &ak) && errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * An alias young enough to be one xnf_ct_confirm() is writing: the alias
 * goes in first, its connection right after it (microseconds), so an
 * alias found alone is left alone for this long.
 */
#define CT_ALIAS_GRACE_NS 1000000000ULL

/* Is the alias @a (key @ak) one whose connection is gone: absent, dead,
 * or an entry that is not the connection it belongs to. Looked up again
 * now, not in the snapshot: the connection may have been written since. */
static bool ct_alias_orphan(int ct_fd, const struct xnf_ct_key *ak,
			    const struct xnf_ct_entry *a, __u64 now)
{
	struct xnf_ct_entry e;
	struct xnf_ct_key back;

	if (a->created + CT_ALIAS_GRACE_NS > now)
		return false;
	if (bpf_map_lookup_elem(ct_fd, &a->nat, &e))
		return errno == ENOENT;
	if (e.expires <= now || !ct_translated(&e))
		return true;
	xnf_ct_key_canon(&e.nat, &back);
	return memcmp(&back, ak, sizeof(back)) != 0;
}

int xnf_ct_flush_fd(int ct_fd, int stats_fd, const struct xnf_ct_filter *f,
		    __u64 now, __u64 *flushed)
{
	struct xnf_ct_entry *ents;
	struct xnf_ct_key *keys;
	struct xnf_ct_conn c;
	__u32 count, max, i;
	int err;

	*flushed = 0;
	err = ct_read(ct_fd, &keys, &ents, &count, &max);
	if (err)
		return err;
	/* One delete per entry, not a batch: the count is of the entries
	 * this call removed, and one a packet replaced or the LRU evicted
	 * meanwhile (ENOENT) is not one of them. A translated connection's
	 * alias goes with it, after it: a reply that finds the alias
	 * meanwhile finds no connection behind it, as after the flush. */
	for (i = 0; i < count && !err; i++) {
		if (ents[i].expires <= now || (ents[i].status & XNF_CT_S_ALIAS))
			continue;
		ct_conn(&keys[i], &ents[i], now, &c);
		if (!ct_match(f, &c))
			continue;
		if (!bpf_map_delete_elem(ct_fd, &keys[i]))
			(*flushed)++;
		else if (errno != ENOENT)
			err = -errno;
		if (!err && ct_translated(&ents[i]))
			err = ct_alias_delete(ct_fd, &keys[i], &ents[i]);
	}
	/* Aliases whose connection is gone (it expired, was evicted or
	 * replaced, or went just above): no connection, nothing counted. */
	for (i = 0; i < count && !err; i++) {
		if (!(ents[i].status & XNF_CT_S_ALIAS) ||
		    !ct_alias_orphan(ct_fd, &keys[i], &ents[i], now))
			continue;
		if (bpf_map_delete_elem(ct_fd, &keys[i]) && errno != ENOENT)
			err = -errno;
	}
	if (*flushed) {
		int ret = ct_count_flushed(stats_fd, *flushed);

		err = err ?: ret;
	}
	free(keys);
	free(ents);
	return err;
}

/* The counters of both entries of xnf_ct_stats (the programs', libxnf's),
 * summed over the CPUs, into @sum. */
static int ct_counters_sum(int stats_fd, struct xnf_ct_counters *sum)
{
	int ncpus = libbpf_num_possible_cpus(), cpu, err = 0;
	struct xnf_ct_counters *v;
	__u32 key;

	memset(sum, 0, sizeof(*sum));
	if (ncpus < 0)
		return ncpus;
	v = calloc(ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (key = 0; key < __XNF_CT_STATS_MAX && !err; key++) {
		if (bpf_map_lookup_elem(stats_fd, &key, v)) {
			err = -errno;
			break;
		}
		for (cpu = 0; cpu < ncpus; cpu++) {
			sum->created += v[cpu].created;
			sum->expired += v[cpu].expired;
			sum->deleted += v[cpu].deleted;
			sum->flushed += v[cpu].flushed;
			sum->insert_failed += v[cpu].insert_failed;
			sum->invalid += v[cpu].invalid;
			sum->related += v[cpu].related;
			sum->searched += v[cpu].searched;
			sum->found += v[cpu].found;
			sum->nat_created += v[cpu].nat_created;
			sum->nat_no_port += v[cpu].nat_no_port;
			sum->nat_no_addr += v[cpu].nat_no_addr;
			sum->nat_clash += v[cpu].nat_clash;
			sum->nat_retries += v[cpu].nat_retries;
		}
	}
	free(v);
	return err;
}

/*
 * The eviction count. xnf_ct is an LRU hash: when an update finds no free
 * element, the kernel takes the least recently used one
 * (htab_lru_map_update_elem -> bpf_lru_pop_free, which shrinks the LRU
 * lists), silently for the program that updates, and possibly before the
 * table holds max_entries since free elements sit in per-CPU lists. But
 * every entry the table ever held entered by a confirm (created) and is
 * either still there, live or dead (present), or left by exactly one of:
 * a packet that found it dead and replaced it (expired), a packet that
 * removed it (deleted, a TCP reopen), a flush (flushed), or an eviction.
 * So evicted = created - expired - deleted - flushed - present. The
 * counters and the table are read one after the other, not at one
 * instant: a negative difference is 0.
 *
 * All of it counts connections. A translated connection's alias
 * (XNF_CT_S_ALIAS) entered by nat_created, not created, and leaves with
 * its connection, uncounted: so aliases are not present in that sum
 * (they are counted apart, for the room they take), and the evictions
 * are of connections.
 */
int xnf_ct_stats_fd(int ct_fd, int stats_fd, __u64 now, struct xnf_ct_stats *st)
{
	struct xnf_ct_entry *ents = NULL;
	struct xnf_ct_key *keys = NULL;
	__u32 count, max, i;
	__u64 left;
	int err;

	memset(st, 0, sizeof(*st));
	/* The counters before the table: an entry made in between is
	 * present but not yet created, which makes the count of evictions
	 * smaller for a moment, never larger than it will be. */
	err = ct_counters_sum(stats_fd, &st->c);
	if (err)
		goto out;
	err = ct_read(ct_fd, &keys, &ents, &count, &max);
	if (err)
		goto out;
	st->max = max;
	for (i = 0; i < count; i++) {
		if (ents[i].status & XNF_CT_S_ALIAS)
			st->aliases++;
		else if (ents[i].expires > now)
			st->entries++;
		else
			st->dead++;
	}
	left = st->c.expired + st->c.deleted + st->c.flushed + st->entries +
	       st->dead;
	st->evicted = st->c.created > left ? st->c.created - left : 0;
out:
	free(keys);
	free(ents);
	return err;
}

/* The table @t of @dp's instance (xnf_table_fd: the instance keeps it
 * open). */
static int ct_table(struct xnf_dp *dp, enum xnf_table t, char *err, size_t errlen)
{
	int fd = xnf_table_fd(dp, t);

	if (fd < 0)
		return xnf_errf(err, errlen, -errno,
				"cannot open %s of the instance at %s: %s",
				xnf_table_names[t], xnf_dp_root(dp),
				strerror(errno));
	return fd;
}

/* ---- settings (config keys ct_*) ---- */

/* The keys ct_timeout_<name>, by slot: <name> as Linux's sysctls
 * net.netfilter.nf_conntrack_tcp_timeout_<name>, _udp_timeout(_stream),
 * _icmp_timeout, _generic_timeout. */
static const char *const timeout_names[__XNF_CT_TO_MAX] = {
	[XNF_CT_TCP_SYN_SENT] = "ct_timeout_syn_sent",
	[XNF_CT_TCP_SYN_RECV] = "ct_timeout_syn_recv",
	[XNF_CT_TCP_ESTABLISHED] = "ct_timeout_established",
	[XNF_CT_TCP_FIN_WAIT] = "ct_timeout_fin_wait",
	[XNF_CT_TCP_CLOSE_WAIT] = "ct_timeout_close_wait",
	[XNF_CT_TCP_LAST_ACK] = "ct_timeout_last_ack",
	[XNF_CT_TCP_TIME_WAIT] = "ct_timeout_time_wait",
	[XNF_CT_TCP_CLOSE] = "ct_timeout_close",
	[XNF_CT_TCP_SYN_SENT2] = "ct_timeout_syn_sent2",
	[XNF_CT_TO_UDP] = "ct_timeout_udp",
	[XNF_CT_TO_UDP_STREAM] = "ct_timeout_udp_stream",
	[XNF_CT_TO_ICMP] = "ct_timeout_icmp",
	[XNF_CT_TO_GENERIC] = "ct_timeout_generic",
};

int xnf_ct_timeout_slot(const char *key)
{
	int i;

	for (i = 0; i < __XNF_CT_TO_MAX; i++)
		if (timeout_names[i] && !strcmp(key, timeout_names[i]))
			return i;
	return -1;
}

const char *xnf_ct_timeout_name(__u32 slot)
{
	return slot < __XNF_CT_TO_MAX ? timeout_names[slot] : NULL;
}

void xnf_ct_settings_default(struct xnf_ct_settings *s)
{
	memset(s, 0, sizeof(*s));
	xnf_ct_cfg_default(&s->cfg);
	s->max = XNF_CT_MAX_DEFAULT;
}

int xnf_ct_settings_read(struct xnf_dp *dp, struct xnf_ct_settings *s,
			 char *err, size_t errlen)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0;
	int fd, cfd;

	xnf_ct_settings_default(s);
	fd = ct_table(dp, XNF_T_CT, err, errlen);
	if (fd < 0)
		return fd;
	cfd = ct_table(dp, XNF_T_CT_CFG, err, errlen);
	if (cfd < 0)
		return cfd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    bpf_map_lookup_elem(cfd, &key, &s->cfg))
		return xnf_errf(err, errlen, -errno, "cannot read %s or %s: %s",
				XNF_MAP_STR(XNF_MAP_CT),
				XNF_MAP_STR(XNF_MAP_CT_CFG), strerror(errno));
	s->max = info.max_entries;
	return 0;
}

/* The size of xnf_ct, or -errno. */
static long long ct_max_of(struct xnf_dp *dp, char *err, size_t errlen)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = ct_table(dp, XNF_T_CT, err, errlen);

	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return xnf_errf(err, errlen, -errno, "cannot read %s: %s",
				XNF_MAP_STR(XNF_MAP_CT), strerror(errno));
	return info.max_entries;
}

/* @s's size against @max, the table's: -EBUSY with what to do when they
 * differ and the instance is not @fresh. */
static int ct_size_check(const struct xnf_ct_settings *s, long long max,
			 bool fresh, char *err, size_t errlen)
{
	if (fresh || max == s->max)
		return 0;
	return xnf_errf(err, errlen, -EBUSY,
			"the connection table's size (ct_max) is fixed when the instance is made: it holds %lld entries, not %u; destroy the instance and apply the configuration again to change it",
			max, s->max);
}

int xnf_ct_settings_check(struct xnf_dp *dp, const struct xnf_ct_settings *s,
			  bool fresh, char *err, size_t errlen)
{
	long long max;

	if (fresh)
		return 0;
	max = ct_max_of(dp, err, errlen);
	return max < 0 ? max : ct_size_check(s, max, fresh, err, errlen);
}

/*
 * A BPF map's max_entries is fixed at its creation, so a table of
 * another size is another map: made as the old one was (type, flags,
 * BTF, so that bpftool still prints its fields), pinned beside it and
 * renamed over its pin, which bpffs does in one step (simple_rename):
 * the instance has an xnf_ct all along. Only on an instance this commit
 * made, where no chain holds the old map yet (a chain binds the pinned
 * one when it loads). The instance's descriptor of the old one is
 * closed: the next xnf_table_fd() opens the new one.
 */
static int ct_resize(struct xnf_dp *dp, __u32 max, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd, nfd = -1, btf = -1, ret = 0;

	fd = ct_table(dp, XNF_T_CT, err, errlen);
	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ret = -errno;
		goto out;
	}
	if (info.btf_id) {
		btf = bpf_btf_get_fd_by_id(info.btf_id);
		if (btf < 0) {
			ret = -errno;
			goto out;
		}
		opts.btf_fd = btf;
		opts.btf_key_type_id = info.btf_key_type_id;
		opts.btf_value_type_id = info.btf_value_type_id;
	}
	opts.map_flags = info.map_flags;
	nfd = bpf_map_create(info.type, info.name, info.key_size,
			     info.value_size, max, &opts);
	if (nfd < 0) {
		ret = -errno;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/tables/%s", xnf_dp_root(dp),
		 XNF_MAP_STR(XNF_MAP_CT));
	/* bpffs refuses a name with a dot (bpf_lookup()). */
	snprintf(tmp, sizeof(tmp), "%s-resized", path);
	if (bpf_obj_pin(nfd, tmp)) {
		ret = -errno;
		goto out;
	}
	if (rename(tmp, path)) {
		ret = -errno;
		unlink(tmp);
		goto out;
	}
	close(dp->fd[XNF_T_CT]);
	dp->fd[XNF_T_CT] = -1;
out:
	if (ret)
		xnf_errf(err, errlen, ret, "cannot make %s with %u entries: %s",
			 XNF_MAP_STR(XNF_MAP_CT), max, strerror(-ret));
	if (nfd >= 0)
		close(nfd);
	if (btf >= 0)
		close(btf);
	return ret;
}

int xnf_ct_settings_write(struct xnf_dp *dp, const struct xnf_ct_settings *s,
			  bool fresh, char *err, size_t errlen)
{
	long long max;
	__u32 key = 0;
	int fd, ret;

	max = ct_max_of(dp, err, errlen);
	if (max < 0)
		return max;
	ret = ct_size_check(s, max, fresh, err, errlen);
	if (ret)
		return ret;
	if (max != s->max) {
		ret = ct_resize(dp, s->max, err, errlen);
		if (ret)
			return ret;
	}
	fd = ct_table(dp, XNF_T_CT_CFG, err, errlen);
	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(fd, &key, &s->cfg, BPF_ANY))
		return xnf_errf(err, errlen, -errno, "cannot write %s: %s",
				XNF_MAP_STR(XNF_MAP_CT_CFG), strerror(errno));
	return 0;
}

int xnf_ct_list(struct xnf_dp *dp, const struct xnf_ct_filter *f,
		struct xnf_ct_conn **out, __u32 *n, char *err, size_t errlen)
{
	int fd, ret;

	*out = NULL;
	*n = 0;
	ret = xnf_ct_filter_check(f, err, errlen);
	if (ret)
		return ret;
	fd = ct_table(dp, XNF_T_CT, err, errlen);
	if (fd < 0)
		return fd;
	ret = xnf_ct_list_fd(fd, f, xnf_ct_now(), out, n);
	if (ret)
		return xnf_errf(err, errlen, ret, "cannot read %s: %s",
				XNF_MAP_STR(XNF_MAP_CT), strerror(-ret));
	return 0;
}

int xnf_ct_flush(struct xnf_dp *dp, const struct xnf_ct_filter *f,
		 __u64 *flushed, char *err, size_t errlen)
{
	int fd, sfd, ret;

	*flushed = 0;
	if (xnf_dp_reader(dp))
		return xnf_errf(err, errlen, -EPERM,
				"the instance is open for reading only");
	ret = xnf_ct_filter_check(f, err, errlen);
	if (ret)
		return ret;
	fd = ct_table(dp, XNF_T_CT, err, errlen);
	if (fd < 0)
		return fd;
	sfd = ct_table(dp, XNF_T_CT_STATS, err, errlen);
	if (sfd < 0)
		return sfd;
	ret = xnf_ct_flush_fd(fd, sfd, f, xnf_ct_now(), flushed);
	if (ret)
		return xnf_errf(err, errlen, ret,
				"cannot flush %s (%llu entries removed): %s",
				XNF_MAP_STR(XNF_MAP_CT),
				(unsigned long long)*flushed, strerror(-ret));
	return 0;
}

int xnf_ct_counters_read(struct xnf_dp *dp, struct xnf_ct_counters *sum,
			 char *err, size_t errlen)
{
	int sfd, ret;

	memset(sum, 0, sizeof(*sum));
	sfd = ct_table(dp, XNF_T_CT_STATS, err, errlen);
	if (sfd < 0)
		return sfd;
	ret = ct_counters_sum(sfd, sum);
	if (ret)
		return xnf_errf(err, errlen, ret, "cannot read %s: %s",
				XNF_MAP_STR(XNF_MAP_CT_STATS), strerror(-ret));
	return 0;
}

int xnf_ct_stats_read(struct xnf_dp *dp, struct xnf_ct_stats *st, char *err,
		      size_t errlen)
{
	int fd, sfd, ret;

	memset(st, 0, sizeof(*st));
	fd = ct_table(dp, XNF_T_CT, err, errlen);
	if (fd < 0)
		return fd;
	sfd = ct_table(dp, XNF_T_CT_STATS, err, errlen);
	if (sfd < 0)
		return sfd;
	ret = xnf_ct_stats_fd(fd, sfd, xnf_ct_now(), st);
	if (ret)
		return xnf_errf(err, errlen, ret, "cannot read %s or %s: %s",
				XNF_MAP_STR(XNF_MAP_CT),
				XNF_MAP_STR(XNF_MAP_CT_STATS), strerror(-ret));
	return 0;
}
