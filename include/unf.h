/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * unf.h - userspace NFs: the C API an AF_XDP worker (worker.c) runs.
 *
 * An NF is a function that gets a vector of packets and gives each one a
 * verdict. The worker reads up to `batch` frames from its RX ring, parses
 * each one once (xnf_uparse, the same fields the XDP entry program fills
 * in), runs the NFs of its chain over the whole vector in order, and then
 * carries out each packet's verdict:
 *
 *   XNF_V_REDIRECT  transmit on egress_ifindex (a device the worker has a
 *                   socket on; otherwise counted as XNF_WD_NO_PORT)
 *   XNF_V_DROP      recycle the frame, counted under reason
 *   XNF_V_PASS      AF_XDP cannot hand a frame back to the kernel stack:
 *                   recycled and counted as XNF_WD_TO_KERNEL (put l3fwd in
 *                   the XDP chain before xsk to pass local traffic)
 *
 * Before the first NF every packet has verdict XNF_V_REDIRECT to the
 * worker's default egress (its `egress` option, or the ingress device
 * itself). An NF skips packets whose verdict is already XNF_V_DROP or
 * XNF_V_PASS, like the XDP NFs do with XNF_PKT_F_DONE.
 *
 * One NF instance per worker thread: run() needs no locks.
 */
#ifndef XNF_UNF_H
#define XNF_UNF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xnf_dp.h"
#include "xnf_fw.h"

struct xnf_dp;

struct xnf_upkt {
	__u8 *data;	      /* the frame, in the UMEM; NFs may rewrite it */
	__u32 len;	      /* NFs may shrink it, never grow it */
	__u32 egress_ifindex; /* with XNF_V_REDIRECT */
	__u32 flags;	      /* XNF_UPKT_F_*, 0 after the parse */
	__u32 pad;
	struct xnf_pkt meta; /* parsed: same fields as the XDP chain's */
};

/* The context an NF instance gets at init. */
struct xnf_unf_env {
	struct xnf_dp *dp; /* the instance: routes, FDB, rules, config */
	__u32 ingress_ifindex;
	__u32 queue;
	__u32 default_egress; /* ifindex */
	const char *args;     /* the chain's options (`args KEY=VALUE,...`),
				  * the same for every NF of the chain, or
				  * NULL: NFs without options ignore it */
};

struct xnf_unf;

struct xnf_unf_ops {
	const char *name; /* as in `xnf worker DEV nf NAME` */
	const char *help; /* one line: what it does and its options */
	size_t priv_size; /* bytes of private state, zeroed */
	/* 0 or -errno with what is wrong in @err (xnf_errf; the caller
	 * names the NF and the queue). */
	int (*init)(struct xnf_unf *nf, const struct xnf_unf_env *env,
		    char *err, size_t errlen);
	void (*fini)(struct xnf_unf *nf);
	/* Called between batches when the tables the control plane manages
	 * have changed (xnf_config.tables_gen moved): reload what it caches.
	 * NULL if the NF caches nothing. Must leave the NF usable with its
	 * old state on failure; says what failed as init does. */
	int (*refresh)(struct xnf_unf *nf, char *err, size_t errlen);
	void (*run)(struct xnf_unf *nf, struct xnf_upkt *pkts, __u32 n);
};

struct xnf_unf {
	const struct xnf_unf_ops *ops;
	struct xnf_unf_env env;
	void *priv;
};

/* Set in flags by an NF that chose egress_ifindex itself (the worker's
 * default egress is no choice): l2fwd keeps such a choice on an FDB miss
 * or a hairpin, as the XDP l2fwd keeps l3fwd's, and applies cfg.l2_miss
 * otherwise. Not in meta.flags, which has no bit left. */
#define XNF_UPKT_F_EGRESS (1 << 0)

/* What every NF does with the packets of its vector. */

/* An earlier NF (or the parser) decided: leave the packet alone. */
static inline bool xnf_upkt_decided(const struct xnf_upkt *p)
{
	return p->meta.verdict == XNF_V_DROP || p->meta.verdict == XNF_V_PASS;
}

/* Send the packet out of @ifindex. */
static inline void xnf_upkt_redirect(struct xnf_upkt *p, __u32 ifindex)
{
	p->meta.verdict = XNF_V_REDIRECT;
	p->flags |= XNF_UPKT_F_EGRESS;
	p->meta.egress_ifindex = ifindex;
	p->egress_ifindex = ifindex;
}

/* Decide now: @action is enum xnf_action (pass or drop, as the XDP NFs'
 * xnf_exception), @reason enum xnf_reason. */
static inline void xnf_upkt_exception(struct xnf_upkt *p, __u32 action,
				      __u32 reason)
{
	p->meta.verdict = action == XNF_ACT_DROP ? XNF_V_DROP : XNF_V_PASS;
	p->meta.reason = reason;
	p->meta.flags |= XNF_PKT_F_DONE;
}

/* Every NF the runtime knows, NULL-terminated: the list XNF_UNFS of
 * registry.c, where a new NF is one name (docs/library.md, "Adding an
 * NF"). */
extern const struct xnf_unf_ops *const xnf_unf_registry[];
const struct xnf_unf_ops *xnf_unf_find(const char *name);

/* Creates an instance (ops->init with zeroed priv) or frees it (ops->fini,
 * which only runs after a successful init: a failing init cleans up after
 * itself). env->args is copied. On failure @err says what failed. */
int xnf_unf_new(const struct xnf_unf_ops *ops, const struct xnf_unf_env *env,
		struct xnf_unf **out, char *err, size_t errlen);
void xnf_unf_free(struct xnf_unf *nf);

/* Parses a frame into @meta as the XDP entry program does (parse.bpf.h):
 * Ethernet, up to two VLAN tags, IPv4 (ihl >= 5) or IPv6 with its
 * extension headers, L4 ports / ICMP type. Sets verdict XNF_V_DROP with
 * XNF_R_MALFORMED (and XNF_PKT_F_DONE) for a truncated or inconsistent
 * header, and leaves family XNF_AF_NONE for what is not IP. Otherwise the
 * verdict is XNF_V_PASS (0), as in XDP: the worker sets its default. */
void xnf_uparse(const __u8 *data, __u32 len, __u32 ifindex, __u32 queue,
		struct xnf_pkt *meta);

#endif /* XNF_UNF_H */
