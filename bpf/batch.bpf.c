// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Batch sizes: the napi_poll tracepoint fires after every NAPI poll with the
 * number of packets the poll handled (work, at most budget). For devices
 * xnf is attached to (an entry in xnf_batch, created by the loader) it
 * counts one poll in bucket min(work, 64) of this CPU's histogram. On veth
 * the poll runs where the sender ran, or in the napi kthread when threaded
 * NAPI is on; the per-CPU split shows which.
 *
 * Losses after a redirect verdict (struct xnf_xmit_counters): the
 * xdp_redirect_err and xdp_devmap_xmit tracepoints, counted against the
 * egress device when the frame came from a device xnf is attached to and
 * the egress has an entry in xnf_xmit (created by the loader with the
 * xnf_batch one). The egress must be in the ingress' netns: a devmap only
 * holds devices of the namespace that filled it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "xnf_dp.h"
#include "tables.bpf.h"
#include "batch_maps.bpf.h"

/*
 * The time of a poll (xnf_batch_hist.timed/ns): the entry program stamps
 * the first packet of a poll (xnf_poll_mark: t0 in this CPU's xnf_poll),
 * this tracer adds now - t0 to the poll's size and clears t0 for the next
 * poll. A NAPI poll runs on one CPU with bottom halves off, so the stamp
 * and the tracepoint are the same poll. The interval is the poll's
 * service of its batch: from the first packet's XDP run to the end of the
 * driver's poll function, so it holds every packet's XDP programs, the
 * driver's per-packet work after the first, the redirect flush (the
 * devmap or AF_XDP socket, copy included) and the skbs of XDP_PASS; not
 * the driver's work before the first packet, the poll's scheduling (the
 * softirq or napi thread wake-up) nor the time the packets queued; hard
 * interrupts during the poll are in it. Every napi_poll clears the stamp,
 * and it is used only for the device that set it: an entry program run
 * outside a NAPI poll (generic XDP from a sender's context) is then not
 * charged to another device's poll.
 */
/* Every NAPI poll of the machine comes here, most of them not of a device
 * xnf watches (e.g. a veth peer's, in the softirq of whoever transmits
 * into it: an AF_XDP worker's sendto()). The device is read with direct
 * loads, which a tp_btf program may make through its BTF arguments (the
 * verifier turns them into fault-safe loads), not BPF_CORE_READ: a
 * bpf_probe_read_kernel() call per field cost an AF_XDP worker 6% of its
 * CPU in these polls (perf, docs/workers.md). */
SEC("tp_btf/napi_poll")
int BPF_PROG(xnf_napi_poll, struct napi_struct *napi, int work, int budget)
{
	struct net_device *dev = napi->dev;
	struct xnf_dev_key key = {
		.netns = dev->nd_net.net->ns.inum,
		.ifindex = dev->ifindex,
	};
	struct xnf_batch_hist *h = bpf_map_lookup_elem(&xnf_batch, &key);
	__u32 bucket, zero = 0;
	struct xnf_poll_start *ps;
	__u64 t0 = 0;

	ps = bpf_map_lookup_elem(&xnf_poll, &zero);
	if (ps) {
		if (ps->t0 && ps->ifindex == key.ifindex)
			t0 = ps->t0;
		ps->t0 = 0;
	}
	if (!h)
		return 0;
	bucket = work < 0 ? 0 : work;
	if (bucket >= XNF_BATCH_BUCKETS)
		bucket = XNF_BATCH_BUCKETS - 1;
	h->polls[bucket]++;
	if (t0) {
		h->timed[bucket]++;
		h->ns[bucket] += bpf_ktime_get_ns() - t0;
	}
	return 0;
}

static bool xnf_watched(const struct net_device *dev)
{
	/* Direct loads, as in xnf_napi_poll. */
	struct xnf_dev_key key = {
		.netns = dev->nd_net.net->ns.inum,
		.ifindex = dev->ifindex,
	};

	return bpf_map_lookup_elem(&xnf_batch, &key);
}

static struct xnf_xmit_counters *xnf_xmit_of(const struct net_device *from,
					     int to_ifindex)
{
	struct xnf_dev_key key = { .ifindex = to_ifindex };

	/* Before any read of @from: a redirect to an AF_XDP socket has no
	 * egress device, and under overload every frame the socket has no
	 * room for comes through here. */
	if (to_ifindex <= 0 || !xnf_watched(from))
		return NULL;
	key.netns = BPF_CORE_READ(from, nd_net.net, ns.inum);
	return bpf_map_lookup_elem(&xnf_xmit, &key);
}

/* The devmap's flush: ndo_xdp_xmit() of @to took @sent of the queued
 * frames, @drops were freed (an error of the driver in @err). */
SEC("tp_btf/xdp_devmap_xmit")
int BPF_PROG(xnf_devmap_xmit, const struct net_device *from,
	     const struct net_device *to, int sent, int drops, int err)
{
	struct xnf_xmit_counters *c = xnf_xmit_of(from,
						  BPF_CORE_READ(to, ifindex));

	if (!c)
		return 0;
	c->xmit_sent += sent > 0 ? sent : 0;
	c->xmit_drops += drops > 0 ? drops : 0;
	return 0;
}

/* A redirect that failed in xdp_do_redirect(): the driver freed the frame.
 * For a devmap, @tgt is the map's entry, whose first member is the
 * egress device; a broadcast (flood) has none and is not counted here. */
SEC("tp_btf/xdp_redirect_err")
int BPF_PROG(xnf_redirect_err, const struct net_device *dev,
	     const struct bpf_prog *xdp, const void *tgt, int err,
	     enum bpf_map_type map_type, __u32 map_id, __u32 index)
{
	struct xnf_xmit_counters *c;
	int to = 0;

	if (tgt && (map_type == BPF_MAP_TYPE_DEVMAP_HASH ||
		    map_type == BPF_MAP_TYPE_DEVMAP))
		to = BPF_CORE_READ((struct bpf_dtab_netdev *)tgt, dev, ifindex);
	c = xnf_xmit_of(dev, to);
	if (c)
		c->redirect_err++;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
