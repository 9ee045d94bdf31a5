/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_l2fwd.h - l2fwd's tables: the FDB (xnf_fdb: MAC -> port) and the
 * cross-connects (xnf_xconnect: port -> port, MACs rewritten). Read by the
 * XDP l2fwd (bpf/l2fwd.bpf.h) and the AF_XDP workers' (userspace/
 * nf_l2fwd.c), written by libxnf (lib/dataplane.c, lib/tables.c).
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role). Only fixed-width types; padding is explicit and the
 * user side checks every size with _Static_assert (include/xnf.h).
 * Included by the BPF programs (after vmlinux.h or linux/bpf.h) and by
 * user space (after linux/types.h).
 */
#ifndef XNF_UAPI_L2FWD_H
#define XNF_UAPI_L2FWD_H

#include "xnf_dp.h"

#define XNF_MAX_FDB 65536

struct xnf_fdb_key {
	__u8 mac[6];
	__u16 pad;
};

struct xnf_fdb_entry {
	__u32 ifindex;
	__u32 flags;
};

/* Cross-connect: everything received on the key ifindex leaves on
 * .ifindex with its MACs rewritten (DPDK l2fwd). */
struct xnf_xconnect {
	__u32 ifindex;
	__u8 dmac[6];
	__u8 smac[6];
};

/* Map names, pinned at <root>/tables/<name>. */
#define XNF_MAP_FDB	 xnf_fdb
#define XNF_MAP_XCONNECT xnf_xconnect

#endif /* XNF_UAPI_L2FWD_H */
