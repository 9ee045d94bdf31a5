/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * neigh.h - read the kernel's neighbour tables (ARP and NDISC) over
 * rtnetlink, so that `xnf route add PREFIX via ADDR` can take the next
 * hop's MAC and device from what the kernel already knows, as ip(8) would;
 * and keep the neighbours of xnf's next hops resolved.
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

/* NDA_PROTOCOL of the neighbour entries xnf makes managed: `ip neigh`
 * shows them "managed ... proto 88". */
#define XNF_NEIGH_PROTO 88

/**
 * xnf_neigh_keep() - keep a next hop's neighbour resolved
 * @family:  XNF_AF_INET or XNF_AF_INET6
 * @addr:    the next hop's address, network order
 * @ifindex: its device
 *
 * Packets forwarded in XDP never confirm a neighbour to the kernel, so
 * its entry goes STALE and stays so, with the MAC it had, however that
 * changes. A managed entry (NTF_EXT_MANAGED, kernel 5.16) is probed by the
 * kernel whenever it is not REACHABLE, and resolved again when the probes
 * fail: a new MAC shows in the table within the reachable time, and the
 * next hop follows it (xnf neigh follow, xnf route sync).
 *
 * Makes the entry managed, marked XNF_NEIGH_PROTO, creating it (it is then
 * resolved at once) or turning a dynamic one managed (its state and MAC
 * stay). An operator's entry is left as it is: permanent or noarp (its MAC
 * does not change), managed already, externally learned, or marked by
 * another protocol.
 *
 * Return: 0, or a negative errno (-ENODEV: no such device).
 */
int xnf_neigh_keep(int family, const void *addr, __u32 ifindex);

/**
 * xnf_neigh_release() - undo xnf_neigh_keep() when no next hop needs it
 *
 * Deletes the entry if xnf made it managed (managed and XNF_NEIGH_PROTO);
 * the kernel learns the neighbour again when it next needs it. Any other
 * entry stays.
 *
 * Return: 0 (also when there was nothing to do), or a negative errno.
 */
int xnf_neigh_release(int family, const void *addr, __u32 ifindex);

#endif /* XNF_NEIGH_H */
