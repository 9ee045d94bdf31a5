/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * common.bpf.h - includes, constants and small helpers every XDP program of
 * xnf uses. Header structs the UAPI does not export (VLAN, IPv6 fragment)
 * are defined here.
 */
#ifndef XNF_COMMON_BPF_H
#define XNF_COMMON_BPF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "xnf_dp.h"

/* Not exported by the UAPI headers. */
struct xnf_vlan_hdr {
	__be16 tci;
	__be16 proto; /* encapsulated ethertype */
};

struct xnf_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off; /* offset << 3 | M flag */
	__be32 identification;
};

#define XNF_IP_MF      0x2000
#define XNF_IP_OFFSET  0x1fff
#define XNF_IP6_OFFSET 0xfff8
#define XNF_IP6_MF     0x0001

/* Address families of struct bpf_fib_lookup (linux/socket.h is not UAPI
 * for BPF programs). */
#define XNF_SYS_AF_INET	 2
#define XNF_SYS_AF_INET6 10

/* Bounds the verifier needs for offsets read back from xnf_scratch: the
 * largest L3 offset (Ethernet + two VLAN tags) and the largest frame. */
#define XNF_MAX_L3_OFF (ETH_HLEN + 2 * sizeof(struct xnf_vlan_hdr))
#define XNF_MAX_FRAME  16384

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

static __always_inline void xnf_mac_copy(__u8 *dst, const __u8 *src)
{
	__builtin_memcpy(dst, src, ETH_ALEN);
}

#endif /* XNF_COMMON_BPF_H */
