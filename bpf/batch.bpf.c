// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Batch sizes: the napi_poll tracepoint fires after every NAPI poll with the
 * number of packets the poll handled (work, at most budget). For devices
 * xnf is attached to (an entry in xnf_batch, created by the loader) it
 * counts one poll in bucket min(work, 64) of this CPU's histogram. On veth
 * the poll runs where the sender ran, or in the napi kthread when threaded
 * NAPI is on; the per-CPU split shows which.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "xnf_dp.h"
#include "tables.bpf.h"

SEC("tp_btf/napi_poll")
int BPF_PROG(xnf_napi_poll, struct napi_struct *napi, int work, int budget)
{
	struct xnf_dev_key key = {
		.netns = BPF_CORE_READ(napi, dev, nd_net.net, ns.inum),
		.ifindex = BPF_CORE_READ(napi, dev, ifindex),
	};
	struct xnf_batch_hist *h = bpf_map_lookup_elem(&xnf_batch, &key);
	__u32 bucket;

	if (!h)
		return 0;
	bucket = work < 0 ? 0 : work;
	if (bucket >= XNF_BATCH_BUCKETS)
		bucket = XNF_BATCH_BUCKETS - 1;
	h->polls[bucket]++;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
