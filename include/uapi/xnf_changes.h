/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_changes.h - the change log (xnf_changes): every change made to the
 * instance, with who made it and how it ended, as `xnf monitor` reads it.
 *
 * Part of what crosses the BPF / user-space boundary (include/uapi/, one
 * header per role): no program reads it, it is declared with the tables
 * (bpf/tables.bpf.h) so that the pinned map has BTF. Only fixed-width
 * types; the user side checks the size with _Static_assert
 * (include/xnf.h). Included after linux/types.h (or vmlinux.h).
 */
#ifndef XNF_UAPI_CHANGES_H
#define XNF_UAPI_CHANGES_H

/* The change log: every change made to the instance (a command, a route
 * sync's batch, a next hop that followed its neighbour), with who made it
 * and how it ended. Change number seq (from 1) is in
 * xnf_changes[seq % XNF_CHANGES_MAX]; xnf_config.change_seq is the last
 * one. Written by libxnf under the instance lock (lib/changes.c), read by
 * `xnf monitor` without a lock; no program touches it. */
#define XNF_CHANGES_MAX 256
#define XNF_CHANGE_TEXT 240

struct xnf_change {
	__u64 seq;  /* 0: the slot was never written */
	__u64 time; /* CLOCK_REALTIME, ns */
	__u32 pid;  /* of the process that made it */
	__u32 uid;  /* its user */
	/* Its login uid, which su and sudo keep; 4294967295: unset. */
	__u32 auid;
	__u32 failed;		   /* 0: done; 1: refused or failed */
	char cmd[XNF_CHANGE_TEXT]; /* the command, as typed */
	char msg[XNF_CHANGE_TEXT]; /* why it failed, or what it did */
	/* Equal to seq in a record read whole: a reader racing the writer
	 * of the slot's next record (a map lookup is a plain copy) sees
	 * them differ. */
	__u64 seq_end;
};

/* Map name, pinned at <root>/tables/<name>. */
#define XNF_MAP_CHANGES xnf_changes

#endif /* XNF_UAPI_CHANGES_H */
