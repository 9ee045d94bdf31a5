// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * pktlog.c - the packet log's reader (the ring xnf_log, its sequence
 * xnf_log_seq, the counters xnf_log_stats), its nf_log line, and the
 * checks of what the operator writes for it (include/pktlog.h).
 *
 * How a reader knows what it read is whole, without a lock: a writer
 * takes sequence number s (an atomic add on xnf_log_seq[0]), then writes
 * slot s % XNF_LOG_SLOTS: its seq 0 first, the fields, its seq s + 1
 * last. The reader copies the slots of s = next .. end - 1, then reads
 * xnf_log_seq[0] again (end2): a slot that no writer took again before
 * end2 (s + XNF_LOG_SLOTS >= end2) was not touched while it was copied,
 * and holds record s exactly when its seq is s + 1. The others may be
 * torn: lost.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "xnf.h"
#include "pktlog.h"
#include "dp_priv.h"

static int log_seq_read(struct xnf_dp *dp, __u64 *seq)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(xnf_table_fd(dp, XNF_T_LOG_SEQ), &zero, seq))
		return -errno;
	return 0;
}

int xnf_log_read(struct xnf_dp *dp, __u64 *next, __u64 *lost,
		 int (*cb)(const struct xnf_log_rec *r, void *ctx), void *ctx)
{
	int fd = xnf_table_fd(dp, XNF_T_LOG), err, n = 0;
	struct xnf_log_rec *recs = NULL;
	__u64 end, end2, s, i, count;
	__u32 slot;

	err = log_seq_read(dp, &end);
	if (err)
		return err;
	if (*next == ~0ULL || *next > end) {
		/* A start at the end, or a ring that was made again (its
		 * sequence started over): read from its end. */
		*next = end;
		return 0;
	}
	if (end - *next > XNF_LOG_SLOTS) {
		*lost += end - XNF_LOG_SLOTS - *next;
		*next = end - XNF_LOG_SLOTS;
	}
	count = end - *next;
	if (!count)
		return 0;
	recs = malloc(count * sizeof(*recs));
	if (!recs)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		slot = (*next + i) % XNF_LOG_SLOTS;
		if (bpf_map_lookup_elem(fd, &slot, &recs[i])) {
			err = -errno;
			goto out;
		}
	}
	err = log_seq_read(dp, &end2);
	if (err)
		goto out;
	for (i = 0; i < count; i++) {
		s = *next;
		if (s + XNF_LOG_SLOTS < end2) {
			/* Taken again by a writer: perhaps torn. */
			++*lost;
			++*next;
			continue;
		}
		if (recs[i].seq != s + 1)
			break; /* being written: read it next time */
		++*next;
		n++;
		err = cb(&recs[i], ctx);
		if (err)
			goto out;
	}
	err = n;
out:
	free(recs);
	return err;
}

int xnf_log_counters_read(struct xnf_dp *dp, struct xnf_log_counters *out)
{
	int fd = xnf_table_fd(dp, XNF_T_LOG_STATS), err;
	struct xnf_log_counters *vals = NULL;
	__u32 *keys = NULL, n, i, vsz, ncpus, cpu;

	err = xnf_map_value_size(fd, &vsz);
	if (err)
		return err;
	ncpus = vsz / sizeof(*vals);
	keys = malloc(XNF_LOG_SOURCES * sizeof(*keys));
	vals = malloc((size_t)XNF_LOG_SOURCES * vsz);
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	err = xnf_map_read_all(fd, sizeof(*keys), vsz, XNF_LOG_SOURCES, keys,
			       vals, &n);
	if (err)
		goto out;
	memset(out, 0, XNF_LOG_SOURCES * sizeof(*out));
	for (i = 0; i < n; i++) {
		if (keys[i] >= XNF_LOG_SOURCES)
			continue;
		for (cpu = 0; cpu < ncpus; cpu++) {
			out[keys[i]].logged += vals[i * ncpus + cpu].logged;
			out[keys[i]].suppressed += vals[i * ncpus + cpu].suppressed;
		}
	}
out:
	free(vals);
	free(keys);
	return err;
}

int xnf_log_limits_read(struct xnf_dp *dp, struct xnf_log_limit *out)
{
	int fd = xnf_table_fd(dp, XNF_T_LOG_LIMIT), err;
	struct xnf_log_limit *vals = NULL;
	__u32 *keys = NULL, n, i;

	keys = malloc(XNF_LOG_SOURCES * sizeof(*keys));
	vals = malloc(XNF_LOG_SOURCES * sizeof(*vals));
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	err = xnf_map_read_all(fd, sizeof(*keys), sizeof(*vals),
			       XNF_LOG_SOURCES, keys, vals, &n);
	if (err)
		goto out;
	memset(out, 0, XNF_LOG_SOURCES * sizeof(*out));
	for (i = 0; i < n; i++)
		if (keys[i] < XNF_LOG_SOURCES)
			out[keys[i]] = vals[i];
out:
	free(vals);
	free(keys);
	return err;
}

/* ---- the nf_log line ---- */

struct log_buf {
	char *buf;
	size_t len;
	int n; /* as snprintf: what the whole line needs */
};

static void lb_add(struct log_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void lb_add(struct log_buf *b, const char *fmt, ...)
{
	size_t off = (size_t)b->n < b->len ? (size_t)b->n : b->len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->buf + off, b->len - off, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->n += n;
}

/* The TCP flags in the order nf_log prints them. */
static void lb_tcp_flags(struct log_buf *b, __u8 f)
{
	static const struct {
		__u8 bit;
		const char *name;
	} flags[] = { { 0x80, "CWR" }, { 0x40, "ECE" }, { 0x20, "URG" },
		      { 0x10, "ACK" }, { 0x08, "PSH" }, { 0x04, "RST" },
		      { 0x02, "SYN" }, { 0x01, "FIN" } };
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (f & flags[i].bit)
			lb_add(b, " %s", flags[i].name);
}

static void lb_l4(struct log_buf *b, const struct xnf_log_rec *r)
{
	bool ports = r->pkt_flags & XNF_PKT_F_PORTS;

	switch (r->l4_proto) {
	case IPPROTO_TCP:
		lb_add(b, " PROTO=TCP");
		if (ports)
			lb_add(b, " SPT=%u DPT=%u", ntohs(r->sport),
			       ntohs(r->dport));
		if (r->pkt_flags & XNF_PKT_F_TCP)
			lb_tcp_flags(b, r->tcp_flags);
		break;
	case IPPROTO_UDP:
		lb_add(b, " PROTO=UDP");
		if (ports)
			lb_add(b, " SPT=%u DPT=%u", ntohs(r->sport),
			       ntohs(r->dport));
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		lb_add(b, " PROTO=%s",
		       r->l4_proto == IPPROTO_ICMP ? "ICMP" : "ICMPv6");
		if (r->pkt_flags & XNF_PKT_F_ICMP)
			lb_add(b, " TYPE=%u CODE=%u", r->icmp_type, r->icmp_code);
		break;
	default:
		lb_add(b, " PROTO=%u", r->l4_proto);
		if (ports)
			lb_add(b, " SPT=%u DPT=%u", ntohs(r->sport),
			       ntohs(r->dport));
	}
}

/* What became of the packet: a rule's action (its drop carries fw_deny),
 * or a reason's drop or pass. */
static const char *log_outcome(const struct xnf_log_rec *r)
{
	if (!xnf_log_source_is_reason(r->source))
		return r->reason == XNF_R_FW_DENY ? "drop" : "allow";
	return r->verdict == XNF_V_DROP ? "drop" : "pass";
}

int xnf_log_format(const struct xnf_log_rec *r, char *buf, size_t len)
{
	struct log_buf b = { .buf = buf, .len = len };
	char in[IF_NAMESIZE], src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	const char *reason;
	int af;

	if (len)
		buf[0] = '\0';
	/* As the kernel: the prefix is printed as it is, right before IN=
	 * (nft users end theirs with a space or a colon). */
	if (!if_indextoname(r->ifindex, in))
		snprintf(in, sizeof(in), "%u", r->ifindex);
	lb_add(&b, "%.*sIN=%s OUT= MAC=", XNF_LOG_PREFIX_MAX - 1, r->prefix, in);
	lb_add(&b,
	       "%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x",
	       r->dmac[0], r->dmac[1], r->dmac[2], r->dmac[3], r->dmac[4],
	       r->dmac[5], r->smac[0], r->smac[1], r->smac[2], r->smac[3],
	       r->smac[4], r->smac[5], ntohs(r->eth_proto) >> 8,
	       ntohs(r->eth_proto) & 0xff);
	if (r->family == XNF_AF_INET || r->family == XNF_AF_INET6) {
		af = r->family == XNF_AF_INET ? AF_INET : AF_INET6;
		inet_ntop(af, r->src, src, sizeof(src));
		inet_ntop(af, r->dst, dst, sizeof(dst));
		lb_add(&b, " SRC=%s DST=%s LEN=%u %s=%u", src, dst, r->ip_len,
		       af == AF_INET ? "TTL" : "HOPLIMIT", r->ttl);
		lb_l4(&b, r);
	}
	if (xnf_log_source_is_reason(r->source)) {
		reason = xnf_reason_name(r->source - XNF_LOG_REASON_BASE);
		lb_add(&b, " XNF=reason:%s %s", reason ?: "?", log_outcome(r));
	} else {
		lb_add(&b, " XNF=rule:%u %s", r->prio, log_outcome(r));
	}
	return b.n;
}

/* ---- what the operator writes ---- */

static const struct {
	__u32 unit_s;
	const char *name;
} log_units[] = { { 1, "second" },
		  { 60, "minute" },
		  { 3600, "hour" },
		  { 86400, "day" } };

const char *xnf_log_unit_name(__u32 unit_s)
{
	size_t i;

	for (i = 0; i < sizeof(log_units) / sizeof(log_units[0]); i++)
		if (log_units[i].unit_s == unit_s)
			return log_units[i].name;
	return NULL;
}

int xnf_log_rate_parse(const char *s, __u32 *rate, __u32 *unit_s, char *err,
		       size_t errlen)
{
	unsigned long long v;
	const char *slash;
	char *end;
	size_t i;

	slash = strchr(s, '/');
	if (!slash || !isdigit((unsigned char)s[0]))
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end != slash || v < 1 || v > XNF_LOG_RATE_MAX)
		goto bad;
	for (i = 0; i < sizeof(log_units) / sizeof(log_units[0]); i++) {
		if (!strcmp(slash + 1, log_units[i].name)) {
			*rate = v;
			*unit_s = log_units[i].unit_s;
			return 0;
		}
	}
bad:
	return xnf_errf(err, errlen, -EINVAL,
			"limit rate '%s' is not N/second, N/minute, N/hour or N/day with N from 1 to %u",
			s, XNF_LOG_RATE_MAX);
}

int xnf_fw_log_check(const struct xnf_fw_rule *r, char *err, size_t errlen)
{
	const char *p = r->log_prefix;
	size_t i, n;

	n = strnlen(p, XNF_FW_LOG_PREFIX_MAX);
	if (n == XNF_FW_LOG_PREFIX_MAX)
		return xnf_errf(err, errlen, -EINVAL,
				"log prefix is longer than %d characters",
				XNF_FW_LOG_PREFIX_MAX - 1);
	if (r->log > 1)
		return xnf_errf(err, errlen, -EINVAL,
				"log is %u: 1 logs, 0 does not", r->log);
	if (!r->log) {
		if (r->log_rate || r->log_unit_s || r->log_burst || n ||
		    r->log_pad)
			return xnf_errf(err, errlen, -EINVAL,
					"a log prefix or limit without log");
		return 0;
	}
	if (r->log_rate < 1 || r->log_rate > XNF_LOG_RATE_MAX)
		return xnf_errf(err, errlen, -EINVAL,
				"log limit rate %u is not from 1 to %u",
				r->log_rate, XNF_LOG_RATE_MAX);
	if (!xnf_log_unit_name(r->log_unit_s))
		return xnf_errf(err, errlen, -EINVAL,
				"log limit unit %u s is not a second, minute, hour or day (1, 60, 3600, 86400)",
				r->log_unit_s);
	if (r->log_burst > XNF_LOG_BURST_MAX)
		return xnf_errf(err, errlen, -EINVAL,
				"log limit burst %u is above %u packets",
				r->log_burst, XNF_LOG_BURST_MAX);
	for (i = 0; i < n; i++)
		if (!isprint((unsigned char)p[i]) || p[i] == '"')
			return xnf_errf(err, errlen, -EINVAL,
					"log prefix has a %s at %zu: printable characters only, no '\"'",
					p[i] == '"' ? "'\"'" : "control character",
					i);
	if (r->log_pad)
		return xnf_errf(err, errlen, -EINVAL, "log_pad is %u, not 0",
				r->log_pad);
	return 0;
}

int xnf_log_reasons_parse(const char *s, __u64 *mask, char *err, size_t errlen)
{
	char *copy, *tok, *save = NULL;
	const char *name;
	__u64 m = 0;
	int ret = 0;
	__u32 r;

	if (!strcmp(s, "none")) {
		*mask = 0;
		return 0;
	}
	copy = strdup(s);
	if (!copy)
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (r = 1; r < __XNF_R_MAX; r++) {
			name = xnf_reason_name(r);
			if (name && !strcmp(tok, name))
				break;
		}
		if (!strcmp(tok, "none")) {
			ret = xnf_errf(err, errlen, -EINVAL,
				       "log_reasons: none stands alone: it means no reason");
			goto out;
		}
		if (r == __XNF_R_MAX) {
			ret = xnf_errf(err, errlen, -EINVAL,
				       "log_reasons: '%s' is not the name of a reason",
				       tok);
			goto out;
		}
		m |= 1ULL << r;
	}
	if (!m) {
		ret = xnf_errf(err, errlen, -EINVAL,
			       "log_reasons: name reasons separated by commas, or none");
		goto out;
	}
	*mask = m;
out:
	free(copy);
	return ret;
}

int xnf_log_reasons_format(__u64 mask, char *buf, size_t len)
{
	struct log_buf b = { .buf = buf, .len = len };
	const char *sep = "";
	__u32 r;

	if (len)
		buf[0] = '\0';
	if (!mask) {
		lb_add(&b, "none");
		return b.n;
	}
	for (r = 1; r < __XNF_R_MAX; r++) {
		if (!(mask & (1ULL << r)))
			continue;
		lb_add(&b, "%s%s", sep, xnf_reason_name(r));
		sep = ",";
	}
	return b.n;
}

/* ---- the buckets, written by the firewall's apply and the config ---- */

/* Whether two entries ask for the same limit and record. */
static bool log_limit_same(const struct xnf_log_limit *a,
			   const struct xnf_log_limit *b)
{
	return a->rate == b->rate && a->unit_s == b->unit_s &&
	       a->burst == b->burst && a->prio == b->prio &&
	       !strncmp(a->prefix, b->prefix, XNF_LOG_PREFIX_MAX);
}

/* xnf_log_limit[@base .. @base + @n) as @want asks: the entries whose
 * setting changed, with a full bucket (bpf/log.bpf.h: max(burst, 1)
 * packets' worth, as of now); the others keep their tokens. */
static int log_limits_sync(struct xnf_dp *dp, __u32 base, __u32 n,
			   const struct xnf_log_limit *want, char *err,
			   size_t errlen)
{
	int fd = xnf_table_fd(dp, XNF_T_LOG_LIMIT), ret;
	struct xnf_log_limit *now = NULL, *put = NULL;
	__u32 *keys = NULL, *pkeys = NULL, got, i, np = 0;
	struct timespec ts;
	__u64 cost;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = calloc(XNF_LOG_SOURCES, sizeof(*now));
	put = calloc(n ?: 1, sizeof(*put));
	keys = calloc(XNF_LOG_SOURCES, sizeof(*keys));
	pkeys = calloc(n ?: 1, sizeof(*pkeys));
	if (!now || !put || !keys || !pkeys) {
		ret = xnf_errf(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	ret = xnf_map_read_all(fd, sizeof(*keys), sizeof(*now), XNF_LOG_SOURCES,
			       keys, now, &got);
	if (ret)
		goto fail;
	/* An array map returns its entries by index. */
	for (i = 0; i < n; i++) {
		if (base + i < got && log_limit_same(&now[base + i], &want[i]))
			continue;
		put[np] = want[i];
		memset(&put[np].lock, 0, sizeof(put[np].lock));
		if (want[i].rate) {
			cost = want[i].unit_s * 1000000000ULL / want[i].rate;
			put[np].tokens = cost * (want[i].burst ?: 1);
			put[np].last_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		}
		pkeys[np++] = base + i;
	}
	ret = xnf_map_update_all(fd, pkeys, put, sizeof(*pkeys), sizeof(*put),
				 np, BPF_ANY);
	if (!ret)
		goto out;
fail:
	xnf_errf(err, errlen, ret, "packet log: cannot %s %s/tables/%s: %s",
		 np ? "write" : "read", dp->root,
		 XNF_MAP_STR(XNF_MAP_LOG_LIMIT), strerror(-ret));
out:
	free(pkeys);
	free(keys);
	free(put);
	free(now);
	return ret;
}

int xnf_log_rules_write(struct xnf_dp *dp, const struct xnf_fw_rule *rules,
			char *err, size_t errlen)
{
	struct xnf_log_limit *want;
	__u32 i;
	int ret;

	want = calloc(XNF_FW_MAX_RULES, sizeof(*want));
	if (!want)
		return xnf_errf(err, errlen, -ENOMEM, "out of memory");
	for (i = 0; i < XNF_FW_MAX_RULES; i++) {
		if (!rules[i].in_use || !rules[i].log)
			continue;
		want[i].rate = rules[i].log_rate;
		want[i].unit_s = rules[i].log_unit_s;
		want[i].burst = rules[i].log_burst;
		want[i].prio = rules[i].prio;
		memcpy(want[i].prefix, rules[i].log_prefix, XNF_LOG_PREFIX_MAX);
		want[i].prefix[XNF_LOG_PREFIX_MAX - 1] = '\0';
	}
	ret = log_limits_sync(dp, 0, XNF_FW_MAX_RULES, want, err, errlen);
	free(want);
	return ret;
}

int xnf_log_reasons_write(struct xnf_dp *dp, const struct xnf_config *cfg)
{
	struct xnf_log_limit want[XNF_REASON_SLOTS] = {};
	__u32 r;

	for (r = 1; r < __XNF_R_MAX; r++) {
		if (!(cfg->log_reasons & (1ULL << r)) || !cfg->log_rate ||
		    !xnf_log_unit_name(cfg->log_unit_s))
			continue;
		want[r].rate = cfg->log_rate;
		want[r].unit_s = cfg->log_unit_s;
		want[r].burst = XNF_LOG_BURST;
	}
	return log_limits_sync(dp, XNF_LOG_REASON_BASE, XNF_REASON_SLOTS, want,
			       NULL, 0);
}
