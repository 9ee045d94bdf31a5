/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * neigh.h - read the kernel's neighbour tables (ARP and NDISC) over
 * rtnetlink, so that `xnf route add PREFIX via ADDR` can take the next
 * hop's MAC and device from what the kernel already knows, as ip(8) would.
 */
#ifndef XNF_NEIGH_H
#define XNF_NEIGH_H

#include <linux/types.h>

/* One neighbour entry of an Ethernet-like device. */
struct xnf_neigh {
	__u32 ifindex;	/* device the neighbour lives on */
	__u16 state;	/* NUD_* of <linux/neighbour.h> */
	__u8 lladdr[6]; /* its MAC */
};

/**
 * xnf_neigh_lookup() - find a neighbour in the caller's network namespace
 * @family:  XNF_AF_INET or XNF_AF_INET6 (enum xnf_family)
 * @addr:    the neighbour's address, network order (4 or 16 bytes)
 * @ifindex: only entries on this device; 0 for any device
 * @out:     filled with up to @max matching entries, in dump order
 * @max:     room in @out
 *
 * Dumps the neighbour tables (RTM_GETNEIGH, AF_UNSPEC) and keeps the
 * entries for @addr whose state says the MAC can be used now: REACHABLE,
 * STALE, DELAY, PROBE, PERMANENT or NOARP. INCOMPLETE and FAILED entries
 * have no usable MAC; entries with a link-layer address that is not 6
 * bytes long (tunnels, InfiniBand) cannot be written into an Ethernet
 * header and are skipped too.
 *
 * Return: the number of matching entries (which may exceed @max: only the
 * first @max are stored), or a negative errno if the dump failed.
 */
int xnf_neigh_lookup(int family, const void *addr, __u32 ifindex,
		     struct xnf_neigh *out, int max);

#endif /* XNF_NEIGH_H */
