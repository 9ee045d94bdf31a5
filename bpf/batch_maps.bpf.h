/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * batch_maps.bpf.h - the tracer's shared maps (batch.bpf.c): batch sizes
 * per attached device, and what the kernel did with the frames xnf
 * redirected, per egress device (include/uapi/xnf_dp.h).
 */
#ifndef XNF_BATCH_MAPS_BPF_H
#define XNF_BATCH_MAPS_BPF_H

#include "xnf_dp.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, struct xnf_dev_key);
	__type(value, struct xnf_batch_hist);
} XNF_MAP_BATCH SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, struct xnf_dev_key);
	__type(value, struct xnf_xmit_counters);
} XNF_MAP_XMIT SEC(".maps");

#endif /* XNF_BATCH_MAPS_BPF_H */
