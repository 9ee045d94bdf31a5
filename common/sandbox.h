/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sandbox.h - moves the calling process into a private network and mount
 * namespace with its own bpffs on /sys/fs/bpf and veth pairs
 * <prefix>0/<prefix>0p .. <prefix>{n-1}/<prefix>{n-1}p, all up. The peers
 * (<prefix>Np) stand for the wire: they have IPv6 off, so that the kernel's
 * own router solicitations, MLD reports and DAD never reach a program under
 * test at a random moment and throw an exact count off by one. Whatever the
 * process creates there (devices, pins, attachments) disappears with it,
 * even if it crashes. Used by the unit tests and the micro benchmarks.
 */
#ifndef XNF_SANDBOX_H
#define XNF_SANDBOX_H

/* 0 or -errno, with a message on stderr naming the step that failed. */
int xnf_sandbox(const char *prefix, int nveth);

#endif /* XNF_SANDBOX_H */
