/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xnf_rx.h - what a router checks on receive before it forwards: the IPv4
 * header checksum and the address classes Linux refuses to forward, as
 * pure functions of header fields. The one definition that both sides of
 * the boundary run: the XDP l3fwd (bpf/l3fwd.bpf.h, bpf/rx.bpf.h) and the
 * AF_XDP workers' l3fwd (userspace/nf_l3fwd.c), so the two cannot
 * disagree. Only fixed-width types and integer arithmetic: it compiles as
 * BPF and as user space C. Included after linux/types.h (or vmlinux.h).
 *
 * The rules follow Linux (6.18, checked against its forwarding of each
 * class in selftests/traffic.bats and docs/design.md "Receive checks"):
 *   ip_rcv_core          IPv4 header checksum
 *   ip_route_input_slow  IPv4 martian sources and destinations
 *   ip_route_input_rcu   IPv4 multicast destinations (not forwarded)
 *   ip6_rcv_core         IPv6 loopback, multicast sources, multicast
 *                        destinations of scope 0 and 1
 *   ip6_forward          IPv6 unspecified and link-local sources
 */
#ifndef XNF_UAPI_RX_H
#define XNF_UAPI_RX_H

#define XNF_RX_INLINE static inline __attribute__((always_inline))

/* What l3fwd does with a packet before it looks up a route. */
enum xnf_rx_class {
	XNF_RX_FORWARD = 0, /* may be routed */
	XNF_RX_BAD_CSUM,    /* IPv4 header checksum wrong: drop (bad_csum) */
	XNF_RX_MARTIAN,	    /* Linux discards it whatever its route:
			     * xnf_config.martian (martian) */
	XNF_RX_MARTIAN_FWD, /* Linux discards it only instead of forwarding
			     * it (IPv6 from ::, which may reach the router
			     * itself): xnf_config.martian once the route
			     * says forward */
	XNF_RX_KERNEL,	    /* never forwarded by a router, but not wrong:
			     * broadcast, multicast, link-local; the
			     * kernel's (xnf_config.local, reason local) */
};

/*
 * @sum: the 32-bit words of the whole IPv4 header (ihl * 4 bytes, the
 * checksum field included) added up as stored, into 64 bits. One's
 * complement addition is addition modulo 0xffff, whatever the byte order
 * or word size (RFC 1071): the header is right iff @sum is a multiple of
 * 0xffff (and not 0, which version 4 rules out). So, like the kernel's
 * ip_fast_csum(), a stored 0x0000 and 0xffff are the same number.
 *
 * The multiple is tested without a division, which BPF would make a
 * real one: for the odd 0xffff, with its inverse modulo 2^64,
 * 0xffff * 0xfffefffefffeffff = 1 (mod 2^64), @sum = 0xffff * k maps to
 * k, so @sum is a multiple iff @sum * 0xfffefffefffeffff <= (2^64 - 1) /
 * 0xffff = 0x0001000100010001 (what compilers make of `sum % 0xffff ==
 * 0` on x86). Four instructions instead of four folds.
 */
XNF_RX_INLINE int xnf_rx_csum_ok(__u64 sum)
{
	return sum * 0xfffefffefffeffffULL <= 0x0001000100010001ULL;
}

/*
 * IPv4, @s and @d in host order, in the order ip_route_input_slow() tests
 * them (so that 0.0.0.0 -> 255.255.255.255, a DHCP DISCOVER, is the
 * kernel's and not a martian):
 *   - source multicast (224/4) or limited broadcast: martian;
 *   - destination multicast or limited broadcast, or both 0.0.0.0: the
 *     kernel's (ip_route_input_mc, brd_input);
 *   - source or destination 0.0.0.0: martian. Only the one address: since
 *     Linux 5.3 (ipv4_is_zeronet), 0.0.0.1 - 0.255.255.255 are unicast;
 *   - source or destination in 127/8: martian (route_localnet is the
 *     kernel's business: `xnf config set martian pass` hands them over);
 *   - link-local 169.254/16 on either side: the kernel's. Not a Linux
 *     rule (Linux routes them like any address); xnf keeps them on their
 *     link (RFC 3927) and lets the kernel decide.
 */
XNF_RX_INLINE __u32 xnf_rx_class4(__u32 s, __u32 d)
{
	if ((s & 0xf0000000) == 0xe0000000 || s == 0xffffffff)
		return XNF_RX_MARTIAN;
	if ((d & 0xf0000000) == 0xe0000000 || d == 0xffffffff || (s | d) == 0)
		return XNF_RX_KERNEL;
	if (s == 0 || d == 0 || (s >> 24) == 127 || (d >> 24) == 127)
		return XNF_RX_MARTIAN;
	if ((s & 0xffff0000) == 0xa9fe0000 || (d & 0xffff0000) == 0xa9fe0000)
		return XNF_RX_KERNEL;
	return XNF_RX_FORWARD;
}

/* Bytes 0..14 of an IPv6 address are zero (:: and ::1 differ in 15). */
XNF_RX_INLINE int xnf_rx6_zero15(const __u8 *a)
{
	__u8 x = 0;
	int i;

	for (i = 0; i < 15; i++)
		x |= a[i];
	return !x;
}

/*
 * IPv6, @s and @d the addresses as stored:
 *   - ::1 on either side, a multicast source, a multicast destination of
 *     scope 0 (reserved) or 1 (interface-local): martian (ip6_rcv_core,
 *     RFC 4291 2.5.3, 2.7 and erratum 3480);
 *   - any other multicast destination: the kernel's;
 *   - link-local (fe80::/10) on either side: the kernel's. ip6_forward
 *     answers a link-local source with ICMPv6 "beyond scope", and a
 *     link-local destination is on the ingress link;
 *   - source ::: martian if forwarded (ip6_forward); the router itself
 *     may receive it.
 * IPv4-mapped sources (::ffff:0:0/96) are forwarded, as Linux does.
 */
XNF_RX_INLINE __u32 xnf_rx_class6(const __u8 *s, const __u8 *d)
{
	int s0 = s[0] == 0 && xnf_rx6_zero15(s);

	if ((s0 && s[15] == 1) || (d[0] == 0 && xnf_rx6_zero15(d) && d[15] == 1))
		return XNF_RX_MARTIAN;
	if (s[0] == 0xff || (d[0] == 0xff && (d[1] & 0x0f) <= 1))
		return XNF_RX_MARTIAN;
	if (d[0] == 0xff)
		return XNF_RX_KERNEL;
	if ((s[0] == 0xfe && (s[1] & 0xc0) == 0x80) ||
	    (d[0] == 0xfe && (d[1] & 0xc0) == 0x80))
		return XNF_RX_KERNEL;
	if (s0 && s[15] == 0)
		return XNF_RX_MARTIAN_FWD;
	return XNF_RX_FORWARD;
}

#endif /* XNF_UAPI_RX_H */
