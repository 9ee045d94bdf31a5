// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* No programs: every shared table, so the loader can create and pin them
 * (and fill them) before any chain is attached: the chain's, each NF's,
 * the tracer's, and libxnf's own, which no program reads. */
#include "common.bpf.h"
#include "tables.bpf.h"
#include "batch_maps.bpf.h"
#include "fcache_maps.bpf.h"
#include "firewall_maps.bpf.h"
#include "l3fwd_maps.bpf.h"
#include "l2fwd_maps.bpf.h"
#include "conntrack_maps.bpf.h"
#include "nat_maps.bpf.h"
#include "trace_maps.bpf.h"
#include "xnf_changes.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_rtsync_info);
} XNF_MAP_RTSYNC SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_CHANGES_MAX);
	__type(key, __u32);
	__type(value, struct xnf_change);
} XNF_MAP_CHANGES SEC(".maps");

/* Not read by any program: libxnf's index for deduplication, kept with
 * the tables so that every writer shares it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_NH);
	__type(key, struct xnf_nexthop);
	__type(value, __u32);
} XNF_MAP_NH_IDX SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_NHG);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xnf_nhg_key);
	__type(value, __u32);
} XNF_MAP_NHG_IDX SEC(".maps");

char LICENSE[] SEC("license") = "Dual BSD/GPL";
