/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tables.bpf.h - the shared maps every program of a chain uses: the
 * configuration, the per-packet state, the egress ports and the poll's
 * first-packet mark. Each NF declares the shared maps of its own role in
 * its header (firewall.bpf.h, l3fwd.bpf.h, l2fwd.bpf.h, fcache.bpf.h,
 * batch.bpf.h), so that an object holds only the maps its programs use and
 * a chain loads without binding the others; tables.bpf.c declares them
 * all, to make the instance. The loader pins each under
 * <root>/tables/<name>, so every object reuses the same map
 * (lib/dataplane.c).
 */
#ifndef XNF_TABLES_BPF_H
#define XNF_TABLES_BPF_H

#include "xnf_dp.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_config);
} XNF_MAP_CFG SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_pkt);
} XNF_MAP_SCRATCH SEC(".maps");

/* Egress ports, keyed by ifindex. Also the flood domain. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, XNF_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} XNF_MAP_TX SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xnf_poll_start);
} XNF_MAP_POLL SEC(".maps");

/* The entry program's mark of a poll's first packet (struct
 * xnf_poll_start): one array lookup per packet, one clock read per poll. */
static __always_inline void xnf_poll_mark(const struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xnf_poll_start *ps = bpf_map_lookup_elem(&XNF_MAP_POLL, &zero);

	if (ps && !ps->t0) {
		ps->t0 = bpf_ktime_get_ns();
		ps->ifindex = ctx->ingress_ifindex;
	}
}

#endif /* XNF_TABLES_BPF_H */
