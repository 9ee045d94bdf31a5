// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* No programs: the per-device array the AF_XDP workers (userspace/worker.c)
 * write their counters into, declared here so that it carries BTF and
 * `bpftool map dump pinned <root>/dev/<DEV>/xnf_workers` prints named
 * fields. Mmapable: a worker writes its entry with plain stores, no
 * syscall per batch. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "xnf_worker.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XNF_WORKER_MAX);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct xnf_worker_stats);
} XNF_MAP_WORKERS SEC(".maps");

char LICENSE[] SEC("license") = "Dual BSD/GPL";
