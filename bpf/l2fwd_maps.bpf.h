/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * l2fwd_maps.bpf.h - l2fwd's shared maps: the FDB and the cross-connects
 * (include/uapi/xnf_l2fwd.h).
 */
#ifndef XNF_L2FWD_MAPS_BPF_H
#define XNF_L2FWD_MAPS_BPF_H

#include "xnf_l2fwd.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_FDB);
	__type(key, struct xnf_fdb_key);
	__type(value, struct xnf_fdb_entry);
} XNF_MAP_FDB SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct xnf_xconnect);
} XNF_MAP_XCONNECT SEC(".maps");

#endif /* XNF_L2FWD_MAPS_BPF_H */
