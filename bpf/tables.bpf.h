/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tables.bpf.h - the maps one xnf instance shares across all interfaces:
 * configuration, egress ports, routes, FDB, cross-connects, the compiled
 * firewall and the batch-size histograms. The loader pins each under
 * <root>/tables/<name>, so every object that includes this header reuses
 * the same map (see loader/dataplane.c).
 */
#ifndef XNF_TABLES_BPF_H
#define XNF_TABLES_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_config);
} xnf_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_pkt);
} xnf_scratch SEC(".maps");

/* Egress ports, keyed by ifindex. Also the flood domain. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} xnf_tx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, struct xnf_dev_key);
	__type(value, struct xnf_batch_hist);
} xnf_batch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, XNF_MAX_ROUTES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xnf_rt4_key);
	__type(value, struct xnf_route);
} xnf_rt4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, XNF_MAX_ROUTES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xnf_rt6_key);
	__type(value, struct xnf_route);
} xnf_rt6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_FDB);
	__type(key, struct xnf_fdb_key);
	__type(value, struct xnf_fdb_entry);
} xnf_fdb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct xnf_xconnect);
} xnf_xconnect SEC(".maps");

/* Firewall: see the comment above XNF_FW_MAX_RULES in xnf_kern_user.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} xnf_fw_active SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS);
	__type(key, __u32);
	__type(value, struct xnf_fw_hdr);
} xnf_fw_hdr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xnf_fw_rule);
} xnf_fw_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS * XNF_FW_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xnf_fw_match);
} xnf_fw_order SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS * XNF_FW_MAX_CLASSES);
	__type(key, __u32);
	__type(value, struct xnf_fw_class);
} xnf_fw_class SEC(".maps");

#define XNF_FW_LPM(name, keytype)					\
struct {								\
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);				\
	__uint(max_entries, XNF_FW_GENS * (XNF_FW_MAX_RULES + 1));	\
	__uint(map_flags, BPF_F_NO_PREALLOC);				\
	__type(key, keytype);						\
	__type(value, __u32);						\
} name SEC(".maps")

XNF_FW_LPM(xnf_fw_src4, struct xnf_fw_lpm4_key);
XNF_FW_LPM(xnf_fw_dst4, struct xnf_fw_lpm4_key);
XNF_FW_LPM(xnf_fw_src6, struct xnf_fw_lpm6_key);
XNF_FW_LPM(xnf_fw_dst6, struct xnf_fw_lpm6_key);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS * 256);
	__type(key, __u32);
	__type(value, __u32);
} xnf_fw_proto SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_FW_GENS * 65536);
	__type(key, __u32);
	__type(value, __u32);
} xnf_fw_sport SEC(".maps"), xnf_fw_dport SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XNF_FW_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xnf_fw_hit);
} xnf_fw_hits SEC(".maps");

#endif /* XNF_TABLES_BPF_H */
