/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * firewall_maps.bpf.h - the firewall's shared maps: two generations of
 * rules and compiled tables, the active one's number, the hit counters of
 * the rules and of the default policy (include/uapi/xnf_fw.h).
 */
#ifndef XNF_FIREWALL_MAPS_BPF_H
#define XNF_FIREWALL_MAPS_BPF_H

#include "xnf_fw.h"

/* Firewall: see the comment above XNF_FW_MAX_RULES in include/uapi/xnf_fw.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} XNF_MAP_FW_ACTIVE SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS);
	__type(key, __u32);
	__type(value, struct xnf_fw_hdr);
} XNF_MAP_FW_HDR SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS *XNF_FW_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xnf_fw_rule);
} XNF_MAP_FW_RULES SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS *XNF_FW_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xnf_fw_match);
} XNF_MAP_FW_ORDER SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS *XNF_FW_MAX_CLASSES);
	__type(key, __u32);
	__type(value, struct xnf_fw_class);
} XNF_MAP_FW_CLASS SEC(".maps");

#define XNF_FW_LPM(name, keytype)                                         \
	struct {                                                          \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);                      \
		__uint(max_entries, XNF_FW_GENS *(XNF_FW_MAX_RULES + 1)); \
		__uint(map_flags, BPF_F_NO_PREALLOC);                     \
		__type(key, keytype);                                     \
		__type(value, __u32);                                     \
	} name SEC(".maps")

XNF_FW_LPM(XNF_MAP_FW_SRC4, struct xnf_fw_lpm4_key);
XNF_FW_LPM(XNF_MAP_FW_DST4, struct xnf_fw_lpm4_key);
XNF_FW_LPM(XNF_MAP_FW_SRC6, struct xnf_fw_lpm6_key);
XNF_FW_LPM(XNF_MAP_FW_DST6, struct xnf_fw_lpm6_key);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS * 256);
	__type(key, __u32);
	__type(value, __u32);
} XNF_MAP_FW_PROTO SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS * 65536);
	__type(key, __u32);
	__type(value, __u32);
} XNF_MAP_FW_SPORT SEC(".maps"), XNF_MAP_FW_DPORT SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XNF_FW_HITS);
	__type(key, __u32);
	__type(value, struct xnf_fw_hit);
} XNF_MAP_FW_HITS SEC(".maps");

#endif /* XNF_FIREWALL_MAPS_BPF_H */
