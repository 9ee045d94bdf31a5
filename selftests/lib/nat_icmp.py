#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""nat_icmp.py - a traceroute probe and the ICMP error it brings back, as
the host that sent it receives it (selftests/nat.bats).

    nat_icmp.py [-w WAIT] probe DST udp|icmp TTL ID

udp: one datagram from port ID to DST port 33434 + TTL; icmp: one echo
request with identifier ID and sequence TTL; both with IP TTL TTL. Then
the first ICMP error (destination unreachable or time exceeded) that
quotes the probe (udp: its destination port; icmp: its sequence, neither
of which a source NAT changes), within WAIT seconds (default 10), is
printed as one JSON object: its outer source and destination, type,
code, whether its IPv4 header and ICMP checksums are right, and the header
it quotes ("inner": addresses, protocol, ports or identifier, whether the
quoted IPv4 header checksum is right and, when the quoted datagram is
whole, whether its UDP or ICMP checksum is; else null). Without one:
{"error": null}. The probe itself is sent by the kernel (a UDP socket,
a raw ICMP socket), the error read from a raw ICMP socket opened before.
"""

import json
import select
import socket
import struct
import sys
import time

WAIT = 10.0
BASE_PORT = 33434


def csum(data):
    """The Internet checksum of data (RFC 1071): 0 when data holds a right
    one."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def echo_request(ident, seq):
    body = b"xnf-nat-probe"
    hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    c = csum(hdr + body)
    return struct.pack("!BBHHH", 8, 0, c, ident, seq) + body


def send_probe(dst, proto, ttl, ident):
    if proto == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("", ident))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
        s.sendto(b"xnf-nat-probe", (dst, BASE_PORT + ttl))
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
        s.sendto(echo_request(ident, ttl), (dst, 0))
    return s


def addr(b):
    return socket.inet_ntoa(b)


def parse_inner(q):
    """The datagram an ICMP error quotes (q: from its IPv4 header on)."""
    if len(q) < 20:
        return None
    ihl = (q[0] & 0x0F) * 4
    total = struct.unpack("!H", q[2:4])[0]
    proto = q[9]
    inner = {"src": addr(q[12:16]), "dst": addr(q[16:20]), "proto": proto,
             "ip_csum_ok": csum(q[:ihl]) == 0, "l4_csum_ok": None}
    l4 = q[ihl:total]
    whole = len(q) >= total
    if proto == socket.IPPROTO_UDP and len(l4) >= 8:
        sport, dport, length, check = struct.unpack("!HHHH", l4[:8])
        inner.update(sport=sport, dport=dport)
        if whole and check != 0:
            pseudo = q[12:20] + struct.pack("!BBH", 0, proto, length)
            inner["l4_csum_ok"] = csum(pseudo + l4[:length]) == 0
    elif proto == socket.IPPROTO_ICMP and len(l4) >= 8:
        _, _, _, ident, seq = struct.unpack("!BBHHH", l4[:8])
        inner.update(id=ident, seq=seq)
        if whole:
            inner["l4_csum_ok"] = csum(l4) == 0
    return inner


def quotes_probe(inner, proto, ttl):
    if inner is None:
        return False
    if proto == "udp":
        return inner["proto"] == socket.IPPROTO_UDP and inner.get("dport") == BASE_PORT + ttl
    return inner["proto"] == socket.IPPROTO_ICMP and inner.get("seq") == ttl


def probe(dst, proto, ttl, ident):
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s = send_probe(dst, proto, ttl, ident)
    end = time.monotonic() + WAIT
    while True:
        left = end - time.monotonic()
        if left <= 0 or not select.select([r], [], [], left)[0]:
            return {"error": None}
        pkt = r.recv(65536)
        ihl = (pkt[0] & 0x0F) * 4
        icmp = pkt[ihl:]
        if len(icmp) < 8 or icmp[0] not in (3, 11):
            continue
        inner = parse_inner(icmp[8:])
        if not quotes_probe(inner, proto, ttl):
            continue
        s.close()
        return {"error": {"src": addr(pkt[12:16]), "dst": addr(pkt[16:20]),
                          "type": icmp[0], "code": icmp[1],
                          "ip_csum_ok": csum(pkt[:ihl]) == 0,
                          "icmp_csum_ok": csum(icmp) == 0,
                          "inner": inner}}


def main():
    global WAIT
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "-w":
        WAIT = float(a[1])
        a = a[2:]
    if len(a) != 5 or a[0] != "probe" or a[2] not in ("udp", "icmp"):
        sys.exit(__doc__)
    print(json.dumps(probe(a[1], a[2], int(a[3]), int(a[4]))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
