/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * trace_maps.bpf.h - the shared maps of the trace and the packet log
 * (include/uapi/xnf_trace.h): declared by every program that traces or
 * logs and by tables.bpf.c, pinned under <root>/tables/.
 */
#ifndef XNF_TRACE_MAPS_BPF_H
#define XNF_TRACE_MAPS_BPF_H

#include "xnf_trace.h"

/* Mappable: the tracer renews the deadline of a trace without a timeout
 * with one store (lib/trace.c), never rewriting the count the datapath
 * adds to. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct xnf_trace_cfg);
} XNF_MAP_TRACE_CFG SEC(".maps");

/* The record of the packet being traced on this CPU (an XDP program and
 * the programs it tail-calls run on one CPU without preemption). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_trace_rec);
} XNF_MAP_TRACE_BUF SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XNF_TRACE_RB_BYTES);
} XNF_MAP_TRACE_RB SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_trace_stats);
} XNF_MAP_TRACE_STATS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_LOG_SLOTS);
	__type(key, __u32);
	__type(value, struct xnf_log_rec);
} XNF_MAP_LOG SEC(".maps");

/* [0]: the next record's sequence number. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} XNF_MAP_LOG_SEQ SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_LOG_SOURCES);
	__type(key, __u32);
	__type(value, struct xnf_log_limit);
} XNF_MAP_LOG_LIMIT SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XNF_LOG_SOURCES);
	__type(key, __u32);
	__type(value, struct xnf_log_counters);
} XNF_MAP_LOG_STATS SEC(".maps");

#endif /* XNF_TRACE_MAPS_BPF_H */
