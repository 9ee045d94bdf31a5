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
/*
 * The order of a chain (checked by every configuration change, lib/conf.c).
 * An NF that forwards chooses where a packet goes: a port (the NFs after
 * it still run, and a later one may choose again), or the kernel, which
 * ends the chain, and then the kernel forwards what it was handed by its
 * own routes: the NFs after it never see those packets.
 */
#define XNF_NFF_FORWARDS      (1u << 3)
/* The NF must see every packet the chain forwards (a firewall): it runs
 * before every NF that forwards, or the kernel would forward what that
 * one hands it without this NF. */
#define XNF_NFF_BEFORE_FWD    (1u << 4)
/* The NF hands the packet to user space (xsk): it runs after every NF
 * that forwards, whose choice would otherwise replace its own for every
 * packet, and its socket would get none. */
#define XNF_NFF_AFTER_FWD     (1u << 5)
/* The NF tracks connections (conntrack, xnf_ct.h): it runs before every NF
 * with XNF_NFF_CT_CONFIRM, which reads the state it sets. */
#define XNF_NFF_CT	      (1u << 6)
/* The NF confirms a new connection when it accepts its packet (the
 * firewall: xnf_ct_confirm(), bpf/conntrack_maps.bpf.h): a flood its rules
 * drop never fills the connection table. A chain with one after conntrack
 * leaves the confirming to it (xnf_ct_defer, bpf/chain.bpf.h). */
#define XNF_NFF_CT_CONFIRM    (1u << 7)

/* The NF translates addresses (nat, xnf_nat.h): it runs after conntrack,
 * whose connections it translates, and before every other NF with
 * XNF_NFF_CT_CONFIRM (the firewall), whose rules see the translated
 * destination and the original source, as nft's forward chain does. */
#define XNF_NFF_NAT (1u << 8)

/* clang-format off */
/*	  id        name      flags */
#define XNF_NFS(X)							\
	X(FIREWALL, firewall, XNF_NFF_FAIL_CLOSED | XNF_NFF_FCACHE |	\
			      XNF_NFF_BEFORE_FWD | XNF_NFF_CT_CONFIRM)	\
	X(L3FWD,    l3fwd,    XNF_NFF_FCACHE | XNF_NFF_FCACHE_NO_FIB |	\
			      XNF_NFF_FORWARDS)				\
	X(L2FWD,    l2fwd,    XNF_NFF_FCACHE | XNF_NFF_FORWARDS)	\
	X(XSK,      xsk,      XNF_NFF_AFTER_FWD)			\
	X(CONNTRACK, conntrack, XNF_NFF_CT)				\
	X(NAT,      nat,      XNF_NFF_FAIL_CLOSED | XNF_NFF_BEFORE_FWD |	\
			      XNF_NFF_CT_CONFIRM | XNF_NFF_NAT)
/* clang-format on */

#endif /* XNF_UAPI_NFS_H */
