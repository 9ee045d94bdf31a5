// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* No programs: the maps where `xnf attach ... queues N | cores ...` records
 * what it changed on the host (loader/placement.c), declared here so that
 * they carry BTF and `bpftool map dump pinned` prints named fields. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "xnf_place.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_place_info);
} XNF_MAP_PLACE SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_PLACE_MAX_QUEUES);
	__type(key, __u32);
	__type(value, struct xnf_place_queue);
} XNF_MAP_PLACE_Q SEC(".maps");

char LICENSE[] SEC("license") = "Dual BSD/GPL";
