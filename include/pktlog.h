/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pktlog.h - libxnf's packet log (lib/pktlog.c): reading the ring of
 * records the datapath writes (firewall rules with `log`, and packets
 * dropped or passed for a sampled reason, include/uapi/xnf_trace.h),
 * printing a record as the kernel's nf_log prints a packet, the counters
 * of every log source, and the names and limits the operator writes
 * (`log prefix "x" limit rate 10/second burst 5 packets`, the config keys
 * log_reasons and log_reasons_limit).
 *
 * Readers take no lock and write nothing: any number of them (`xnf
 * monitor`, the syslog forwarder) read the ring at once, each with its
 * own position.
 */
#ifndef XNF_PKTLOG_H
#define XNF_PKTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xnf.h"

/* Room for one xnf_log_format() line: the prefix, two device names, three
 * MACs, two IPv6 addresses, the TCP flags and the source. */
#define XNF_LOG_LINE_MAX 512

/**
 * xnf_log_read() - the records of the packet log not read yet
 * @dp: the instance (XNF_OPEN_READ is enough)
 * @next: the sequence number of the next record to read; ~0ULL: start at
 *	the current end (only records written from now on). Moves past the
 *	records read.
 * @lost: += the records overwritten before they could be read (the reader
 *	fell more than XNF_LOG_SLOTS behind) and records a concurrent writer
 *	tore while they were copied (checked by their seq)
 * @cb: called for each record, oldest first; a non-zero return stops the
 *	read and is returned (*next then points past that record)
 * @ctx: passed to @cb
 *
 * A record a writer has taken but not finished yet (its seq is still 0 or
 * an older one) ends the read: *next stays at it, and the next call reads
 * it once it is whole.
 *
 * Return: the number of records delivered, @cb's non-zero return, or a
 * negative errno of the map read.
 */
int xnf_log_read(struct xnf_dp *dp, __u64 *next, __u64 *lost,
		 int (*cb)(const struct xnf_log_rec *r, void *ctx), void *ctx);

/**
 * xnf_log_format() - one record as the kernel's nf_log prints a packet
 * @r: the record
 * @buf: receives the line (no newline)
 * @len: size of @buf (XNF_LOG_LINE_MAX is always enough)
 *
 * "PREFIX IN=veth0 OUT= MAC=dst:src:type SRC=192.0.2.2 DST=198.51.100.2
 * LEN=84 TTL=64 PROTO=ICMP TYPE=8 CODE=0 XNF=rule:10 drop": nf_log's
 * fields, in its order, so that the parsers of kernel log lines read it
 * (TCP: "PROTO=TCP SPT=1024 DPT=22 SYN ACK"; UDP: "PROTO=UDP SPT= DPT=";
 * IPv6 prints "HOPLIMIT=" for TTL=, as the kernel does), then xnf's own
 * field: the source ("rule:PRIO", "reason:NAME") and what became of the
 * packet ("drop", "pass", "allow"). OUT= is empty: a record is written
 * before the egress is known (as nft's log in the input or prerouting
 * hook). IN= is the ingress device's name in the caller's network
 * namespace, or its index when it has none there.
 *
 * Return: the length of the line (as snprintf: a value >= @len means it
 * was cut).
 */
int xnf_log_format(const struct xnf_log_rec *r, char *buf, size_t len);

/**
 * xnf_log_counters_read() - logged and suppressed packets of every source
 * @dp: the instance
 * @out: [XNF_LOG_SOURCES], receives the per-CPU counters summed; a rule's
 *	by its slot (xnf_fw_hits' index), reason r's at XNF_LOG_REASON_BASE + r
 *
 * Return: 0 or a negative errno of the map read.
 */
int xnf_log_counters_read(struct xnf_dp *dp, struct xnf_log_counters *out);

/**
 * xnf_log_limits_read() - what every log source is set to
 * @dp: the instance
 * @out: [XNF_LOG_SOURCES], receives xnf_log_limit (rate 0: the source
 *	does not log). The bucket's tokens are a snapshot.
 *
 * Return: 0 or a negative errno of the map read.
 */
int xnf_log_limits_read(struct xnf_dp *dp, struct xnf_log_limit *out);

/* Whether log source @source is a reason (else a rule's slot), and which. */
static inline bool xnf_log_source_is_reason(__u32 source)
{
	return source >= XNF_LOG_REASON_BASE && source < XNF_LOG_SOURCES;
}

/* ---- what the operator writes ---- */

/* "second", "minute", "hour", "day" for @unit_s 1, 60, 3600, 86400; NULL
 * for any other. */
const char *xnf_log_unit_name(__u32 unit_s);

/**
 * xnf_log_rate_parse() - "N/second" (minute, hour, day), nft's limit rate
 * @s: the text
 * @rate: receives N (1 .. XNF_LOG_RATE_MAX)
 * @unit_s: receives the unit in seconds
 * @err: receives what is wrong (may be NULL)
 *
 * Return: 0 or -EINVAL.
 */
int xnf_log_rate_parse(const char *s, __u32 *rate, __u32 *unit_s, char *err,
		       size_t errlen);

/* The most packets per unit a limit may name, and the largest burst. */
#define XNF_LOG_RATE_MAX  1000000
#define XNF_LOG_BURST_MAX 10000

/**
 * xnf_fw_log_check() - whether a rule's log fields are ones the datapath
 * can keep (xnf_fw_rule_check() calls it for every rule)
 * @r: the rule
 * @err: receives what is wrong (may be NULL)
 *
 * log 0: every other log field is 0 (no prefix). log 1: log_rate 1 ..
 * XNF_LOG_RATE_MAX per log_unit_s (1, 60, 3600 or 86400), log_burst at
 * most XNF_LOG_BURST_MAX, log_prefix NUL-terminated within
 * XNF_FW_LOG_PREFIX_MAX bytes, printable ASCII without '"' (it is printed
 * in quotes by `xnf save`). A caller without a limit of its own writes
 * XNF_LOG_RATE, XNF_LOG_UNIT_S, XNF_LOG_BURST.
 *
 * Return: 0 or -EINVAL.
 */
int xnf_fw_log_check(const struct xnf_fw_rule *r, char *err, size_t errlen);

/**
 * xnf_log_reasons_parse() - the value of the config key log_reasons
 * @s: "none", or a comma list of reason names (xnf_reason_name(); every
 *	reason but none can be sampled)
 * @mask: receives 1 << reason for each
 * @err: receives what is wrong (may be NULL)
 *
 * Return: 0 or -EINVAL (unknown name, none mixed with names, empty).
 */
int xnf_log_reasons_parse(const char *s, __u64 *mask, char *err, size_t errlen);

/* @mask as xnf_log_reasons_parse() reads it ("none" for 0), in reason
 * order; returns the length as snprintf. */
int xnf_log_reasons_format(__u64 mask, char *buf, size_t len);

#endif /* XNF_PKTLOG_H */
