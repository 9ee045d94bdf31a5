/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * nat_maps.bpf.h - the NAT rules' maps (include/uapi/xnf_nat.h). What a
 * rule chose lives in the connection table (conntrack_maps.bpf.h).
 */
#ifndef XNF_NAT_MAPS_BPF_H
#define XNF_NAT_MAPS_BPF_H

#include "xnf_nat.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_NAT_GENS *XNF_NAT_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xnf_nat_rule);
} XNF_MAP_NAT_RULES SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_NAT_GENS + 1);
	__type(key, __u32);
	__type(value, struct xnf_nat_hdr);
} XNF_MAP_NAT_HDR SEC(".maps");

#endif /* XNF_NAT_MAPS_BPF_H */
