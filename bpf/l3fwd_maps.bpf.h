/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * l3fwd_maps.bpf.h - l3fwd's shared maps: the route tries (two copies)
 * and the next hops and multipath groups they name
 * (include/uapi/xnf_l3fwd.h).
 */
#ifndef XNF_L3FWD_MAPS_BPF_H
#define XNF_L3FWD_MAPS_BPF_H

#include "xnf_l3fwd.h"

/* Routes, in two copies: packets read the one xnf_config.rt_copy names,
 * so libxnf can write a batch of changes into the other and make them
 * visible at once (lib/routes.c). */
#define XNF_RT_LPM(name, keytype)                     \
	struct {                                      \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);  \
		__uint(max_entries, XNF_MAX_ROUTES);  \
		__uint(map_flags, BPF_F_NO_PREALLOC); \
		__type(key, keytype);                 \
		__type(value, struct xnf_rt_val);     \
	} name SEC(".maps")

XNF_RT_LPM(XNF_MAP_RT4, struct xnf_rt4_key);
XNF_RT_LPM(XNF_MAP_RT6, struct xnf_rt6_key);
XNF_RT_LPM(XNF_MAP_RT4_B, struct xnf_rt4_key);
XNF_RT_LPM(XNF_MAP_RT6_B, struct xnf_rt6_key);

/* Next hops and multipath groups: see include/uapi/xnf_l3fwd.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_NH_SLOTS);
	__type(key, __u32);
	__type(value, struct xnf_nexthop);
} XNF_MAP_NH SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_MAX_NH);
	__type(key, __u32);
	__type(value, struct xnf_nh_live);
} XNF_MAP_NH_LIVE SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_NHG);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct xnf_nhgroup);
} XNF_MAP_NHG SEC(".maps");

#endif /* XNF_L3FWD_MAPS_BPF_H */
