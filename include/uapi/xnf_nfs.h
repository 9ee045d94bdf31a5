/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_nfs.h - the registry of the XDP NFs: one line each, from which the
 * rest of xnf follows (docs/library.md, "Adding an NF"):
 *
 *   id     XNF_NF_<id> of enum xnf_nf_id (xnf_dp.h): the NF's row of the
 *          per-NF counters (struct xnf_stats), what xnf_dev records of a
 *          chain, and its case in the fused chain (bpf/fused.bpf.c);
 *   name   as operators type it in a chain and read it in `xnf stats`,
 *          Prometheus and JSON (lib/names.c); also the NF's files:
 *          bpf/<name>.bpf.h defines xnf_<name>_run(), which the fused
 *          chain inlines, and bpf/<name>.bpf.c the tail-called program,
 *          whose skeleton xnf_<name> the loader opens (lib/dataplane.c).
 *          The Makefile lists the names with the C preprocessor and
 *          generates the includes of both, so a line without its files
 *          does not build;
 *   flags  XNF_NFF_* below.
 *
 * Lines are appended, never moved or removed: an id is recorded in pinned
 * maps (xnf_dev, the rows of xnf_stats).
 *
 * Macros only, no types: included by xnf_dp.h, and read alone by the
 * Makefile.
 */
#ifndef XNF_UAPI_NFS_H
#define XNF_UAPI_NFS_H

/* With the NF in it, a chain fails closed: a tail call that finds an
 * empty slot drops the packet (reason tail_call) instead of carrying out
 * the verdict so far, so that a firewall is never skipped. */
#define XNF_NFF_FAIL_CLOSED   (1u << 0)
/* The NF keeps its table lookups' results in the flow cache
 * (bpf/fcache.bpf.h, xnf_fc.h), counted in xnf_stats.fc_hit[] and
 * fc_miss[] and shown in the flow cache's rows of `xnf stats`. */
#define XNF_NFF_FCACHE	      (1u << 1)
/* ... but not on an attachment in fib mode, where it asks the kernel's
 * FIB, which has no generation to cache the answer by. */
#define XNF_NFF_FCACHE_NO_FIB (1u << 2)

/* clang-format off */
/*	  id        name      flags */
#define XNF_NFS(X)							\
	X(FIREWALL, firewall, XNF_NFF_FAIL_CLOSED | XNF_NFF_FCACHE)	\
	X(L3FWD,    l3fwd,    XNF_NFF_FCACHE | XNF_NFF_FCACHE_NO_FIB)	\
	X(L2FWD,    l2fwd,    XNF_NFF_FCACHE)				\
	X(XSK,      xsk,      0)
/* clang-format on */

#endif /* XNF_UAPI_NFS_H */
