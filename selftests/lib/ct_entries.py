#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""ct_entries.py - entries of the connection table (include/uapi/xnf_ct.h)
written by hand, as `bpftool batch file` commands on stdout, for the tests
of what operators see of them (selftests/nat_ct.bats): no traffic needed.

    ct_entries.py MAP ENTRY...

MAP is the pinned xnf_ct; each ENTRY one argument of fields separated by
commas:

    PROTO,SRC,SPORT,DST,DPORT                       a connection
    PROTO,SRC,SPORT,DST,DPORT,RSRC,RSPORT,RDST,RDPORT,KIND[,OIF]
        a translated connection whose reply tuple is RSRC:RSPORT ->
        RDST:RDPORT, and its alias, as xnf_ct_confirm() writes them (the
        alias first); KIND snat, dnat or masquerade (OIF: its ifindex)
    ...,KIND,OIF,orphan                             the alias alone

IPv4 only; every connection replied, live for 600 s, 3 packets each way.
"""
import socket
import struct
import sys
import time

AF = 4  # XNF_AF_INET
PROTO = {'tcp': 6, 'udp': 17, 'icmp': 1}
ORIG_B, SEEN_REPLY = 1 << 0, 1 << 1
SNAT, DNAT, MASQ, ALIAS = 1 << 3, 1 << 4, 1 << 5, 1 << 6
KIND = {'snat': SNAT, 'dnat': DNAT, 'masquerade': SNAT | MASQ}
TCP_ESTABLISHED = 3


def addr(s):
    return socket.inet_aton(s) + bytes(12)


def key(proto, a, ap, b, bp):
    """struct xnf_ct_key: a tuple as it is, a = its first endpoint."""
    return struct.pack('<BBH', AF, proto, 0) + struct.pack('>HH', ap, bp) + \
        addr(a) + addr(b)


def canon(proto, s, sp, d, dp):
    """The canonical key of the tuple s:sp -> d:dp (the lower endpoint is
    a), and whether the source is its b side."""
    swap = (addr(d), dp) < (addr(s), sp)
    if swap:
        return key(proto, d, dp, s, sp), True
    return key(proto, s, sp, d, dp), False


def entry(expires, created, status, tcp_state, oif, nat):
    """struct xnf_ct_entry (104 bytes)."""
    return struct.pack('<QQQQQQIBBBBBBBBI', expires, created, 3, 3, 300,
                       300, status, tcp_state, 0, 0, 0, 0, 0, 0, 0, oif) + nat


def update(path, k, v):
    hexs = ' '.join(f'{b:02x}' for b in k), ' '.join(f'{b:02x}' for b in v)
    return f'map update pinned {path} key hex {hexs[0]} value hex {hexs[1]}'


def main():
    path, specs = sys.argv[1], sys.argv[2:]
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    expires, created = now + 600 * 10**9, now - 10 * 10**9
    for spec in specs:
        f = spec.split(',')
        proto = PROTO[f[0]]
        src, sport, dst, dport = f[1], int(f[2]), f[3], int(f[4])
        k, b = canon(proto, src, sport, dst, dport)
        status = SEEN_REPLY | (ORIG_B if b else 0)
        state = TCP_ESTABLISHED if proto == 6 else 0
        if len(f) == 5:
            print(update(path, k, entry(expires, created, status, state, 0,
                                        bytes(40))))
            continue
        rsrc, rsport, rdst, rdport = f[5], int(f[6]), f[7], int(f[8])
        oif = int(f[10]) if len(f) > 10 and f[10] != 'orphan' else 0
        reply = key(proto, rsrc, rsport, rdst, rdport)
        ak, _ = canon(proto, rsrc, rsport, rdst, rdport)
        print(update(path, ak, entry(2**64 - 1, created, ALIAS, 0, 0, k)))
        if f[-1] == 'orphan':
            continue
        print(update(path, k, entry(expires, created, status | KIND[f[9]],
                                    state, oif, reply)))


if __name__ == '__main__':
    main()
