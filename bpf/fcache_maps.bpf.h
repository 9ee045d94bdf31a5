/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fcache_maps.bpf.h - the flow cache's map (include/uapi/xnf_fc.h).
 */
#ifndef XNF_FCACHE_MAPS_BPF_H
#define XNF_FCACHE_MAPS_BPF_H

#include "xnf_fc.h"

/* The flow cache: see include/uapi/xnf_fc.h. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XNF_FC_ENTRIES);
	__type(key, __u32);
	__type(value, struct xnf_fc_entry);
} XNF_MAP_FCACHE SEC(".maps");

#endif /* XNF_FCACHE_MAPS_BPF_H */
