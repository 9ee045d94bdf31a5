#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""nat_diff.py - the same NAT packet sequences through several routers,
every packet that leaves compared (selftests/nat_diff.bats).

Each router ("bed") sits between an inside network and an outside one,
each side's hosts being one network namespace with a packet socket; every
bed has the same addresses and MACs (testbed/testbed.bash's), so what the
hosts send is the same on every bed but for the translation the bed chose.
The beds are described by a JSON file (--beds):

    [{"name": "linux", "in_ns": NS, "in_dev": DEV, "out_ns": NS,
      "out_dev": DEV}]

The hosts behave as hosts do: each addresses a flow's next packet to the
peer as it last saw it (its address and port, the echo identifier), so
the outside answers a masqueraded flow at the address and port its bed
chose; an ICMP error quotes the packet as its sender received it.

How a fate is known without timing: as in ct_diff.py, every packet carries
a marker (its IPv4 id, which no router changes) and is followed on its
path by a sentinel that every rule set forwards (a new TCP connection to
port 22); once the sentinel arrived, the packet arrived or was dropped.
A packet for the router itself has no other side: it is followed by an
echo request to the router on the same path, whose reply comes after the
router's answer to the packet, if any.

What is compared, per packet and bed: whether it left (or, sent to the
router, whether and what the router answered) and how many copies, its
addresses, ports or echo identifier, TTL (hop limit), TCP flags, ICMP
type and code, the header an ICMP error quotes (its addresses, ports,
the value of its L4 checksum field), and whether its checksums are valid
(IPv4 header, TCP, UDP (0 stays 0), ICMP, ICMPv6, the quoted IPv4 header,
the quoted L4 checksum when the whole packet is quoted), recomputed from
the bytes. IPv6 (NAT66) the same, marked by the flow label. A source translation
(masquerade, snat) is compared by its properties, not its number: the
translated source of a flow is named "XLAT(flow)" and must be the same
for every packet of the flow on that bed; its address must be the
router's outside address (masquerade) or one of the pool (snat); its port
is "kept" (the original one) or "in LO-HI" (the range it must be in).

Prints every packet with what left on each bed, and each difference;
--expect LABEL=REASON (repeatable) lists a known difference. Exit status:
0 when all beds agree (but where a difference is expected: there it must
differ) and every checksum is valid, 1 if not, 2 on an error of the
harness (a sentinel lost).
"""

import argparse
import ipaddress
import json
import os
import select
import socket
import struct
import sys
import time

from scapy.layers.inet import ICMP, IP, TCP, UDP, fragment
from scapy.layers.inet6 import (
    ICMPv6DestUnreach,
    ICMPv6EchoReply,
    ICMPv6EchoRequest,
    ICMPv6PacketTooBig,
    ICMPv6TimeExceeded,
    IPv6,
)
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from nsio import MAC, OTHER, PACKET_OUTGOING, SENTINEL_WAIT, packet_socket

# The addresses (testbed.bash's and more of the same networks).
IN1 = "192.0.2.1"          # inside host
IN2 = "192.0.2.2"          # a second inside host (port collisions)
SRV = "192.0.2.10"         # the inside server of the port forward
POOLED = "192.0.2.130"     # an inside host of the snat rule (192.0.2.128/25)
R_LAN = "192.0.2.254"      # the router, inside
R_WAN = "198.51.100.254"   # the router, outside (masquerade's address)
OUT = "198.51.100.1"       # outside host
OUT2 = "198.51.100.2"      # another outside host
FAR = "203.0.113.9"        # a router further out (ICMP errors)
# IPv6 (NAT66: masquerade)
IN1_6 = "2001:db8:1::1"
IN2_6 = "2001:db8:1::2"
R_LAN6 = "2001:db8:1::fe"
R_WAN6 = "2001:db8:2::fe"
OUT6 = "2001:db8:2::1"
FAR6 = "2001:db8:3::9"
POOL = ("198.51.100.200", "198.51.100.201")
POOL_PORTS = (30000, 30009)
FWD_PORT = 8080            # dnat: R_WAN:8080 -> SRV:80

# The MTU of the routers' lan0 (the caller sets it): a datagram from the
# outside bigger than that is too big for the inside.
LAN_MTU = 1400
# Bytes of data per fragment of a fragmented datagram.
FRAG_SIZE = 32


# ---- what a frame says -----------------------------------------------------


def csum(b):
    """The Internet checksum of b (0 when b holds a valid checksum)."""
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip4(a):
    return socket.inet_ntop(socket.AF_INET, a)


def ip6(a):
    return socket.inet_ntop(socket.AF_INET6, a)


ECHO_TYPES = {1: (0, 8), 58: (128, 129)}
ERROR_TYPES = {1: (3, 11, 12), 58: (1, 2, 3, 4)}


def l4_ports(proto, l4):
    """(sport, dport) of a TCP or UDP header, (id, id) of an ICMP echo."""
    if proto in (6, 17) and len(l4) >= 4:
        return struct.unpack_from("!HH", l4, 0)
    if proto in ECHO_TYPES and len(l4) >= 8 and l4[0] in ECHO_TYPES[proto]:
        i = struct.unpack_from("!H", l4, 4)[0]
        return i, i
    return None, None


def pkt_mark(p):
    """The marker of an IP packet: its IPv4 id, its IPv6 flow label."""
    if p[0] >> 4 == 4:
        return struct.unpack_from("!H", p, 4)[0]
    return struct.unpack_from("!I", p, 0)[0] & 0xFFFFF


def pkt_proto(p):
    return p[9] if p[0] >> 4 == 4 else p[6]


def pkt_len(p):
    if p[0] >> 4 == 4:
        return struct.unpack_from("!H", p, 2)[0]
    return 40 + struct.unpack_from("!H", p, 4)[0]


def pkt_src(p):
    return ip4(p[12:16]) if p[0] >> 4 == 4 else ip6(p[8:24])


def describe(ip):
    """What an IP packet (bytes from its header on) says, checksums
    recomputed: a dict of plain values."""
    if ip[0] >> 4 == 6:
        return describe6(ip)
    ihl = (ip[0] & 0xF) * 4
    tot = struct.unpack_from("!H", ip, 2)[0]
    ip = ip[:tot]
    proto = ip[9]
    src, dst = ip4(ip[12:16]), ip4(ip[16:20])
    l4 = ip[ihl:]
    d = {"src": src, "dst": dst, "proto": proto, "ttl": ip[8],
         "ip_csum": "ok" if csum(ip[:ihl]) == 0 else "BAD"}
    d["sport"], d["dport"] = l4_ports(proto, l4)
    frag = struct.unpack_from("!H", ip, 6)[0] & 0x3FFF
    if frag:
        # a fragment: its L4 checksum covers the whole datagram
        d["frag"] = frag
        if frag & 0x1FFF:
            d["sport"] = d["dport"] = None
        return d
    if proto in (6, 17):
        pseudo = ip[12:20] + struct.pack("!BBH", 0, proto, len(l4))
        if proto == 17 and struct.unpack_from("!H", l4, 6)[0] == 0:
            d["l4_csum"] = "zero"
        else:
            d["l4_csum"] = "ok" if csum(pseudo + l4) == 0 else "BAD"
        if proto == 6:
            d["flags"] = l4[13]
    elif proto == 1:
        d["l4_csum"] = "ok" if csum(l4) == 0 else "BAD"
        d["icmp"] = [l4[0], l4[1]]
        if l4[0] in (3, 11, 12) and len(l4) >= 28:
            q = l4[8:]
            qihl = (q[0] & 0xF) * 4
            qd = {"src": ip4(q[12:16]), "dst": ip4(q[16:20]), "proto": q[9],
                  "id": struct.unpack_from("!H", q, 4)[0],
                  "ip_csum": "ok" if csum(q[:qihl]) == 0 else "BAD"}
            ql4 = q[qihl:]
            qd["sport"], qd["dport"] = l4_ports(q[9], ql4)
            # The quoted L4 checksum: valid when the whole datagram is
            # quoted, else only its value can be compared.
            qtot = struct.unpack_from("!H", q, 2)[0]
            off = {6: 16, 17: 6, 1: 2}.get(q[9])
            if off is not None and len(ql4) >= off + 2:
                qd["l4_csum_field"] = struct.unpack_from("!H", ql4, off)[0]
                if len(q) >= qtot:
                    if q[9] == 1:
                        ok = csum(ql4[:qtot - qihl]) == 0
                    elif q[9] == 17 and qd["l4_csum_field"] == 0:
                        ok = True
                    else:
                        pseudo = q[12:20] + struct.pack("!BBH", 0, q[9], qtot - qihl)
                        ok = csum(pseudo + ql4[:qtot - qihl]) == 0
                    qd["l4_csum"] = "ok" if ok else "BAD"
            d["quoted"] = qd
    return d


def describe6(ip):
    """describe() of an IPv6 packet (no extension headers)."""
    ip = ip[:pkt_len(ip)]
    nh = ip[6]
    l4 = ip[40:]
    d = {"src": ip6(ip[8:24]), "dst": ip6(ip[24:40]), "proto": nh, "ttl": ip[7]}
    d["sport"], d["dport"] = l4_ports(nh, l4)
    if nh in (6, 17, 58):
        pseudo = ip[8:40] + struct.pack("!I3xB", len(l4), nh)
        d["l4_csum"] = "ok" if csum(pseudo + l4) == 0 else "BAD"
    if nh == 6:
        d["flags"] = l4[13]
    if nh == 58:
        d["icmp"] = [l4[0], l4[1]]
        if l4[0] in ERROR_TYPES[58] and len(l4) >= 48:
            q = l4[8:]
            qd = {"src": ip6(q[8:24]), "dst": ip6(q[24:40]), "proto": q[6],
                  "id": pkt_mark(q)}
            ql4 = q[40:]
            qd["sport"], qd["dport"] = l4_ports(q[6], ql4)
            off = {6: 16, 17: 6, 58: 2}.get(q[6])
            if off is not None and len(ql4) >= off + 2:
                qd["l4_csum_field"] = struct.unpack_from("!H", ql4, off)[0]
                if len(q) >= pkt_len(q):
                    ql4 = ql4[:pkt_len(q) - 40]
                    pseudo = q[8:40] + struct.pack("!I3xB", len(ql4), q[6])
                    qd["l4_csum"] = "ok" if csum(pseudo + ql4) == 0 else "BAD"
            d["quoted"] = qd
    return d


def frame_ip(buf):
    """The IP packet of an Ethernet frame, or None."""
    if len(buf) < 34:
        return None
    t = struct.unpack_from("!H", buf, 12)[0]
    if t == 0x0800 or (t == 0x86DD and len(buf) >= 54):
        return buf[14:]
    return None


# ---- beds, flows, the harness ----------------------------------------------


class Bed:
    def __init__(self, spec):
        self.name = spec["name"]
        self.tx = {"in": packet_socket(spec["in_ns"], spec["in_dev"]),
                   "out": packet_socket(spec["out_ns"], spec["out_dev"])}
        # rx[side]: the IP packets side's hosts received, in order
        self.rx = {"in": [], "out": []}

    def drain(self, side):
        s = self.tx[side]
        while True:
            try:
                buf, addr = s.recvfrom(65535)
            except BlockingIOError:
                return
            if addr[2] == PACKET_OUTGOING:
                continue
            ip = frame_ip(buf)
            if ip:
                self.rx[side].append(ip)

    def wait_for(self, side, match, what):
        end = time.monotonic() + SENTINEL_WAIT
        while True:
            self.drain(side)
            if any(match(p) for p in self.rx[side]):
                return
            left = end - time.monotonic()
            if left <= 0:
                raise RuntimeError(
                    f"{self.name}: {what} never reached the {side} side "
                    f"(gave up after {SENTINEL_WAIT} s): the test bed is broken")
            select.select([self.tx[side]], [], [], min(left, 0.5))


def marked(mark, proto, length):
    """A frame's test: the packet with this marker (and protocol and
    length: the router's own packets have ids of their own)."""
    def match(p):
        return (pkt_mark(p) == mark and pkt_proto(p) == proto
                and length in (None, pkt_len(p)))
    return match


class Flow:
    """One flow between a host of each side. ep[side]: the address and port
    (echo: identifier) that side's host uses; peer[bed][side]: where that
    side's host sends to, as it last saw the other (first: to)."""

    def __init__(self, h, name, proto, opener, ep_in, ep_out, to, xlat=None):
        self.h, self.name, self.proto = h, name, proto
        self.fam = 6 if ":" in ep_in[0] else 4
        self.ep = {"in": ep_in, "out": ep_out}
        self.opener = opener
        self.peer = {b.name: {opener: to, OTHER[opener]: None} for b in h.beds}
        # xlat: the source translation the flow must get ("masquerade",
        # "snat") and the port range it must be in when not kept
        self.xlat = xlat
        self.seen = {b.name: None for b in h.beds}   # the XLAT(flow)
        self.seq = {"in": 1000, "out": 500000}
        self.n = 0      # TCP segments sent, for their labels
        h.flows.append(self)

    def dst(self, bed, side):
        return self.peer[bed.name][side] or self.ep[OTHER[side]]

    def learn(self, bed, side, p):
        """side's host received p of this flow: its view of the peer."""
        d = describe(p)
        if d["sport"] is not None:
            self.peer[bed.name][side] = (d["src"], d["sport"])

    def port_range(self):
        if self.xlat == "snat":
            return POOL_PORTS
        if self.proto in (1, 58):
            return (0, 65535)
        port = self.ep["in"][1]
        # Linux's default ranges by the original port
        if port < 512:
            return (1, 511)
        if port < 1024:
            return (600, 1023)
        return (1024, 65535)

    def l3(self, src, dst):
        if self.fam == 6:
            return IPv6(src=src[0], dst=dst[0], hlim=64)
        return IP(src=src[0], dst=dst[0], ttl=64)

    def tcp(self, side, flags, data=b"", label=None):
        """A TCP segment from side, with seq and ack following the flow."""
        def build(bed):
            src, dst = self.ep[side], self.dst(bed, side)
            ack = self.seq[OTHER[side]] if "A" in flags else 0
            p = self.l3(src, dst) / TCP(
                sport=src[1], dport=dst[1], flags=flags, seq=self.seq[side],
                ack=ack, window=8192)
            return p / Raw(data) if data else p
        self.n += 1
        pkts = self.h.send(side, build, self, label or
                           f"{self.name}#{self.n} {side} {flags}"
                           f"{' +%d' % len(data) if data else ''}")
        self.seq[side] = (self.seq[side] + len(data) + ("S" in flags)
                          + ("F" in flags)) & 0xFFFFFFFF
        return pkts

    def handshake(self):
        c, s = self.opener, OTHER[self.opener]
        self.tcp(c, "S")
        self.tcp(s, "SA")
        self.tcp(c, "A")

    def data(self):
        c, s = self.opener, OTHER[self.opener]
        self.tcp(c, "PA", b"hello")
        self.tcp(s, "PA", b"world!")
        self.tcp(c, "A")

    def close(self):
        c, s = self.opener, OTHER[self.opener]
        self.tcp(c, "FA")
        self.tcp(s, "FA")
        self.tcp(c, "A")

    def udp(self, side, label, zero_csum=False, data=b"query", frag=False, options=b""):
        def build(bed):
            src, dst = self.ep[side], self.dst(bed, side)
            u = UDP(sport=src[1], dport=dst[1])
            if zero_csum:
                u.chksum = 0
            ip = self.l3(src, dst)
            if options:
                ip.options = options
            return ip / u / Raw(data)
        return self.h.send(side, build, self, label, frag=frag)

    def echo(self, side, reply, seq, label):
        def build(bed):
            src, dst = self.ep[side], self.dst(bed, side)
            # the identifier: the requester's own, the replier's view
            ident = dst[1] if reply else src[1]
            if self.fam == 6:
                t = ICMPv6EchoReply if reply else ICMPv6EchoRequest
                return self.l3(src, dst) / t(id=ident, seq=seq, data=b"ping")
            return self.l3(src, dst) / ICMP(
                type=0 if reply else 8, id=ident, seq=seq) / Raw(b"ping")
        return self.h.send(side, build, self, label)


class Harness:
    def __init__(self, beds):
        self.beds = beds
        self.mark = 0
        self.sport = 20000      # sentinels' source ports
        self.rid = 0x7E00       # router sentinels' echo identifiers
        self.flows = []
        # log: [{label, scenario, from, to, flow, mark, sent{bed: bytes},
        #        match{bed: fn} (to the router)}]
        self.log = []
        self.scenario = ""

    def next_mark(self):
        self.mark += 1
        if self.mark > 0xFFFF:
            raise RuntimeError("more than 65535 packets: markers ran out")
        return self.mark

    def frame(self, side, l3):
        router = "rin" if side == "in" else "rout"
        t = 0x86DD if isinstance(l3, IPv6) or bytes(l3)[0] >> 4 == 6 else 0x0800
        return bytes(Ether(src=MAC[side], dst=MAC[router], type=t) / l3)

    def sentinel(self, side):
        """A SYN every rule set forwards from side, whatever the state."""
        self.sport += 1
        m = self.next_mark()
        src, dst = (IN1, OUT) if side == "in" else (OUT, IN1)
        l3 = IP(src=src, dst=dst, id=m, ttl=64) / TCP(
            sport=self.sport, dport=22, flags="S", seq=1)
        return self.frame(side, l3), marked(m, 6, len(l3))

    def send(self, side, build, flow, label, to_router=None, frag=False):
        """One marked packet from side (build(bed): its IP packet on that
        bed), on every bed; returns its bytes on each bed.
        to_router(marker): the packet is the router's; a test of the
        frames that answer it."""
        m = self.next_mark()
        sent, parts = {}, {}
        for b in self.beds:
            p = build(b)
            if isinstance(p, IPv6):
                p.fl = m
            else:
                p.id = m
            sent[b.name] = bytes(p)
            # fragmented: the datagram (whose fragments all have the
            # marker) in FRAG_SIZE pieces
            parts[b.name] = [bytes(f) for f in fragment(IP(sent[b.name]), FRAG_SIZE)] \
                if frag else [sent[b.name]]
        for b in self.beds:
            for f in parts[b.name]:
                b.tx[side].send(self.frame(side, Raw(f)))
        if to_router:
            self.router_sentinel(side)
        else:
            sframe, smatch = self.sentinel(side)
            for b in self.beds:
                b.tx[side].send(sframe)
            for b in self.beds:
                b.wait_for(OTHER[side], smatch, "a sentinel")
        any_sent = next(iter(sent.values()))
        match = to_router(m) if to_router else marked(m, pkt_proto(any_sent),
                                                       None if frag else len(any_sent))
        if flow and not to_router:
            for b in self.beds:
                got = [p for p in b.rx[OTHER[side]] if match(p)]
                if got:
                    flow.learn(b, OTHER[side], got[0])
        self.log.append({"label": label, "scenario": self.scenario,
                         "from": side, "to": side if to_router else OTHER[side],
                         "flow": flow, "mark": m, "sent": sent,
                         "match": match,
                         "marked": marked(m, pkt_proto(any_sent), None)})
        return sent

    def router_sentinel(self, side):
        """An echo request to the router from side, and its reply awaited:
        the router answered what came before on this path, if anything."""
        self.rid += 1
        ident, m = self.rid, self.next_mark()
        src, dst = (IN1, R_LAN) if side == "in" else (OUT, R_WAN)
        l3 = IP(src=src, dst=dst, id=m, ttl=64) / ICMP(type=8, id=ident, seq=1)

        def match(p):
            d = describe(p)
            return d["proto"] == 1 and d["icmp"] == [0, 0] and d["sport"] == ident
        for b in self.beds:
            b.tx[side].send(self.frame(side, l3))
        for b in self.beds:
            b.wait_for(side, match, "the router's echo reply (router sentinel)")

    def received(self, bed, rec):
        """The packets of bed that rec's packet became (or that answered it)."""
        return [p for p in bed.rx[rec["to"]] if rec["match"](p)]

    def final(self):
        # one last sentinel each way: whatever was on the way has arrived
        for side in ("in", "out"):
            sframe, smatch = self.sentinel(side)
            for b in self.beds:
                b.tx[side].send(sframe)
            for b in self.beds:
                b.wait_for(OTHER[side], smatch, "the last sentinel")


# ---- comparing ---------------------------------------------------------------


def addr_class(flow, a):
    if flow.xlat == "masquerade":
        if a == (R_WAN6 if flow.fam == 6 else R_WAN):
            return "the router's outside address"
        return f"{a} (NOT the router's)"
    lo, hi = (ipaddress.ip_address(x) for x in POOL)
    if lo <= ipaddress.ip_address(a) <= hi:
        return "in the pool"
    return f"{a} (NOT in the pool)"


def port_class(flow, port):
    if port == flow.ep["in"][1]:
        return "kept"
    lo, hi = flow.port_range()
    if lo <= port <= hi:
        return f"in {lo}-{hi}"
    return f"{port} (NOT in {lo}-{hi})"


def normalize(h, bed, rec, d):
    """d with each flow's source translation named XLAT(flow); the
    translation's properties checked on its first packet, and its being
    the same for every packet of the flow."""
    notes = []
    xl = {}
    for f in h.flows:
        if f.seen[bed.name]:
            xl[f.seen[bed.name]] = f"XLAT({f.name})"
    f = rec["flow"]
    if f and f.xlat and rec["from"] == "in" and rec["to"] == "out" \
            and "quoted" not in d:
        mine = (d["src"], d["sport"])
        if f.seen[bed.name] is None:
            f.seen[bed.name] = mine
            xl[mine] = f"XLAT({f.name})"
            notes.append(f"XLAT({f.name}): address {addr_class(f, mine[0])}, "
                         f"port {port_class(f, mine[1])}")
        elif f.seen[bed.name] != mine:
            notes.append(f"XLAT({f.name}) CHANGED from "
                         f"{f.seen[bed.name][0]}:{f.seen[bed.name][1]} to "
                         f"{mine[0]}:{mine[1]}")

    def sub(x, a, p):
        if (x.get(a), x.get(p)) in xl:
            x[a] = x[p] = xl[(x[a], x[p])]
    if rec["to"] != "out" or rec["from"] == "out":
        # only the outside sees a translated source (not in the
        # router's answers)
        return d, notes
    for x in [d] + ([d["quoted"]] if "quoted" in d else []):
        if x["proto"] in (1, 58):
            # an echo's identifier is its "port" both ways: the
            # translated end's name stands for it
            for a in ("src", "dst"):
                if (x[a], x["sport"]) in xl:
                    x[a] = xl[(x[a], x["sport"])]
                    x["sport"] = x["dport"] = x[a]
        else:
            sub(x, "src", "sport")
            sub(x, "dst", "dport")
    return d, notes


def checksum_problems(d):
    bad = [k for k in ("ip_csum", "l4_csum") if d.get(k) == "BAD"]
    q = d.get("quoted", {})
    bad += [f"quoted {k}" for k in ("ip_csum", "l4_csum") if q.get(k) == "BAD"]
    return bad


def show(d):
    if d is None:
        return "-"
    s = f"{d['src']}:{d['sport']} > {d['dst']}:{d['dport']} p{d['proto']}"
    if "icmp" in d:
        s += f" icmp {d['icmp'][0]}/{d['icmp'][1]}"
    if "quoted" in d:
        q = d["quoted"]
        s += f" [quoting {q['src']}:{q['sport']} > {q['dst']}:{q['dport']} p{q['proto']}]"
    return s


def compare(h, expected):
    """Every packet's results on every bed; the number of problems but
    the expected ones (expected: {label: reason})."""
    out, bad = [], 0
    for rec in h.log:
        res, problems = {}, []
        for b in h.beds:
            got = h.received(b, rec)
            # a packet for the router must reach no host
            other = [p for p in b.rx[OTHER[rec["from"]]] if rec["marked"](p)] \
                if rec["to"] == rec["from"] else []
            if not got:
                res[b.name] = {"left": False}
                if other:
                    res[b.name]["forwarded"] = show(describe(other[0]))
                continue
            d, notes = normalize(h, b, rec, describe(got[0]))
            cs = checksum_problems(d)
            problems += [f"{b.name}: {n}" for n in notes if "NOT" in n or "CHANGED" in n]
            problems += [f"{b.name}: invalid {c}" for c in cs]
            res[b.name] = {"left": True, "packet": d, "notes": notes, "copies": len(got)}
            if other:
                res[b.name]["forwarded"] = show(describe(other[0]))
        first = res[h.beds[0].name]
        for b in h.beds[1:]:
            r = res[b.name]
            if r.get("forwarded") != first.get("forwarded"):
                problems.append(f"forwarded to the {OTHER[rec['from']]} side: "
                                f"{h.beds[0].name} {first.get('forwarded', 'no')}, "
                                f"{b.name} {r.get('forwarded', 'no')}")
            if r["left"] != first["left"]:
                problems.append(f"fate: {h.beds[0].name} {'left' if first['left'] else 'dropped'}, "
                                f"{b.name} {'left' if r['left'] else 'dropped'}")
            elif r["left"]:
                if r["packet"] != first["packet"]:
                    problems.append(f"packet: {h.beds[0].name} {show(first['packet'])}, "
                                    f"{b.name} {show(r['packet'])}")
                if r["copies"] != first["copies"]:
                    problems.append(f"copies: {h.beds[0].name} {first['copies']}, "
                                    f"{b.name} {r['copies']}")
                if r["notes"] != first["notes"]:
                    problems.append(f"translation: {h.beds[0].name} {first['notes']}, "
                                    f"{b.name} {r['notes']}")
        reason = expected.get(rec["label"])
        if reason and problems:
            problems = [f"expected difference ({reason}): {p}" for p in problems]
        elif reason:
            problems = [f"EQUAL, BUT A DIFFERENCE WAS EXPECTED ({reason})"]
            bad += 1
        else:
            bad += bool(problems)
        sent = {n: (IPv6 if raw[0] >> 4 == 6 else IP)(raw).summary()
                for n, raw in rec["sent"].items()}
        out.append({"label": rec["label"], "scenario": rec["scenario"],
                    "expected_difference": reason,
                    "from": rec["from"], "to": rec["to"], "mark": rec["mark"],
                    "sent": sent, "beds": res, "problems": problems})
    return out, bad


# ---- the sequences -------------------------------------------------------------


def scenario(h, name):
    h.scenario = name


def masquerade_sequences(h):
    scenario(h, "masquerade: TCP handshake, data, FIN close")
    t = Flow(h, "masq-tcp", 6, "in", (IN1, 40000), (OUT, 80), (OUT, 80), "masquerade")
    t.handshake()
    t.data()
    t.close()
    t.tcp("out", "A", label="masq-tcp out last A")

    scenario(h, "masquerade: UDP with a checksum and with checksum 0")
    u = Flow(h, "masq-udp", 17, "in", (IN1, 5353), (OUT, 53), (OUT, 53), "masquerade")
    u.udp("in", "masq-udp request")
    u.udp("out", "masq-udp answer")
    z = Flow(h, "masq-udp0", 17, "in", (IN1, 5354), (OUT, 53), (OUT, 53), "masquerade")
    z.udp("in", "masq-udp0 request, checksum 0", zero_csum=True)
    z.udp("out", "masq-udp0 answer, checksum 0", zero_csum=True)
    z.udp("in", "masq-udp0 second request, with a checksum")

    scenario(h, "masquerade: ICMP echo")
    e = Flow(h, "masq-echo", 1, "in", (IN1, 0x1234), (OUT, 0x1234), (OUT, 0x1234),
             "masquerade")
    e.echo("in", False, 1, "masq-echo request")
    e.echo("out", True, 1, "masq-echo reply")
    e.echo("in", False, 2, "masq-echo second request")
    e.echo("out", True, 2, "masq-echo second reply")

    scenario(h, "masquerade: ICMP errors about a translated flow, back in")
    t = Flow(h, "err-tcp", 6, "in", (IN1, 40100), (OUT, 80), (OUT, 80), "masquerade")
    t.handshake()
    big = t.tcp("in", "PA", b"x" * 600, label="err-tcp big segment")
    icmp_error(h, "out", t, big, "toobig", "err-tcp frag needed from a far router",
               src=FAR, quote=68)
    u = Flow(h, "err-udp", 17, "in", (IN1, 33434), (OUT, 33435), (OUT, 33435),
             "masquerade")
    q = u.udp("in", "err-udp probe")
    icmp_error(h, "out", u, q, "ttl", "err-udp time exceeded from a far router",
               src=FAR, quote=28)
    icmp_error(h, "out", u, q, "unreach", "err-udp port unreachable, fully quoted",
               quote=None)
    a = u.udp("out", "err-udp answer the inside refuses")
    icmp_error(h, "in", u, a, "unreach", "err-udp port unreachable from inside, out")
    scenario(h, "masquerade: TTL 1 both ways (the router's time exceeded)")

    def ttl1(side):
        def build(bed):
            src, dst = u.ep[side], u.dst(bed, side)
            return IP(src=src[0], dst=dst[0], ttl=1) / UDP(sport=src[1], dport=dst[1]) \
                / Raw(b"ttl")
        return build
    own(h, "in", None, ttl1("in"), "err-udp TTL 1 from inside",
        lambda d: d.get("icmp") == [11, 0])
    own(h, "out", None, ttl1("out"), "err-udp TTL 1 from outside",
        lambda d: d.get("icmp") == [11, 0])

    def big(bed):
        # the routers' lan0 has an MTU of LAN_MTU (the caller's setup)
        src, dst = u.ep["out"], u.dst(bed, "out")
        return IP(src=src[0], dst=dst[0], ttl=64, flags="DF") / UDP(
            sport=src[1], dport=dst[1]) / Raw(b"b" * (LAN_MTU + 20))
    own(h, "out", None, big, "err-udp too big for the inside, DF, from outside",
        lambda d: d.get("icmp") == [3, 4])
    scenario(h, "masquerade: a mapped port from another outside host, RST on a flow")
    own(h, "out", None, lambda b: IP(src=OUT2, dst=R_WAN, ttl=64) / UDP(
        sport=53, dport=5353) / Raw(b"other"), "udp to masq-udp's mapping from another host",
        lambda d: d.get("icmp") == [3, 3])
    t = Flow(h, "rst-tcp", 6, "in", (IN1, 40300), (OUT, 80), (OUT, 80), "masquerade")
    t.handshake()
    t.tcp("out", "R")
    t.tcp("in", "PA", b"after the RST", label="rst-tcp data after the RST")
    e = Flow(h, "err-echo", 1, "in", (IN1, 0x2345), (OUT, 0x2345), (OUT, 0x2345),
             "masquerade")
    q = e.echo("in", False, 1, "err-echo request")
    icmp_error(h, "out", e, q, "ttl", "err-echo time exceeded from a far router",
               src=FAR, quote=28)

    scenario(h, "masquerade: two inside hosts, the same source port, the same destination")
    a = Flow(h, "coll-a", 6, "in", (IN1, 33333), (OUT, 80), (OUT, 80), "masquerade")
    b = Flow(h, "coll-b", 6, "in", (IN2, 33333), (OUT, 80), (OUT, 80), "masquerade")
    a.tcp("in", "S")
    b.tcp("in", "S")
    a.tcp("out", "SA")
    b.tcp("out", "SA")
    a.tcp("in", "A")
    b.tcp("in", "A")
    a.tcp("in", "PA", b"from a")
    b.tcp("in", "PA", b"from b")
    b.tcp("out", "PA", b"to b")
    a.tcp("out", "PA", b"to a")
    a = Flow(h, "coll-echo-a", 1, "in", (IN1, 0x3456), (OUT, 0x3456), (OUT, 0x3456),
             "masquerade")
    b = Flow(h, "coll-echo-b", 1, "in", (IN2, 0x3456), (OUT, 0x3456), (OUT, 0x3456),
             "masquerade")
    a.echo("in", False, 1, "coll-echo-a request")
    b.echo("in", False, 1, "coll-echo-b request")
    b.echo("out", True, 1, "coll-echo-b reply")
    a.echo("out", True, 1, "coll-echo-a reply")
    a = Flow(h, "coll-udp-a", 17, "in", (IN1, 7777), (OUT, 53), (OUT, 53), "masquerade")
    b = Flow(h, "coll-udp-b", 17, "in", (IN2, 7777), (OUT, 53), (OUT, 53), "masquerade")
    a.udp("in", "coll-udp-a request")
    b.udp("in", "coll-udp-b request")
    b.udp("out", "coll-udp-b answer")
    a.udp("out", "coll-udp-a answer")


def snat_sequences(h):
    scenario(h, "snat to a range of addresses and ports")
    t = Flow(h, "snat-tcp", 6, "in", (POOLED, 40200), (OUT, 80), (OUT, 80), "snat")
    t.handshake()
    t.data()
    t.close()
    u = Flow(h, "snat-udp", 17, "in", (POOLED, 5353), (OUT, 53), (OUT, 53), "snat")
    q = u.udp("in", "snat-udp request")
    u.udp("out", "snat-udp answer")
    z = Flow(h, "snat-udp0", 17, "in", (POOLED, 5354), (OUT, 53), (OUT, 53), "snat")
    z.udp("in", "snat-udp0 request, checksum 0", zero_csum=True)
    z.udp("out", "snat-udp0 answer, checksum 0", zero_csum=True)
    icmp_error(h, "out", u, q, "ttl", "snat-udp time exceeded from a far router",
               src=FAR, quote=28)


def dnat_sequences(h):
    scenario(h, "port forward: outside to the router's 8080, the inside server's 80")
    t = Flow(h, "fwd-tcp", 6, "out", (SRV, 80), (OUT, 45000), (R_WAN, FWD_PORT))
    t.handshake()
    t.data()
    t.tcp("in", "PA", b"more from the server")
    t.tcp("out", "A")
    q = t.tcp("out", "PA", b"z" * 100, label="fwd-tcp a segment the server rejects")
    icmp_error(h, "in", t, q, "unreach", "fwd-tcp unreachable from the server, "
               "back out", quote=48)
    scenario(h, "port forward and masquerade: an inside host's port of the "
             "forwarded connection's tuple")
    # IN1:8080 -> OUT:45000 keeping its port would be answered by the
    # tuple of the forwarded connection's original direction: taken
    c = Flow(h, "fwd-clash", 6, "in", (IN1, FWD_PORT), (OUT, 45000), (OUT, 45000),
             "masquerade")
    c.tcp("in", "S")
    c.tcp("out", "SA")
    scenario(h, "port forward: a second outside host")
    t2 = Flow(h, "fwd-tcp2", 6, "out", (SRV, 80), (OUT2, 45000), (R_WAN, FWD_PORT))
    t2.handshake()
    t2.data()
    scenario(h, "port forward: errors")
    r = t.tcp("in", "PA", b"r" * 200, label="fwd-tcp a segment to a far router's network")
    icmp_error(h, "out", t, r, "ttl", "fwd-tcp time exceeded from a far router, back in",
               src=FAR, quote=28)

    def ttl1(bed):
        src, dst = t.ep["out"], t.dst(bed, "out")
        return IP(src=src[0], dst=dst[0], ttl=1) / TCP(
            sport=src[1], dport=dst[1], flags="A", seq=t.seq["out"], ack=t.seq["in"])
    own(h, "out", None, ttl1, "fwd-tcp TTL 1 from outside",
        lambda d: d.get("icmp") == [11, 0])
    t.close()
    scenario(h, "port forward: another port of the router is not forwarded")
    n = Flow(h, "fwd-none", 6, "out", (SRV, 80), (OUT, 45001), (R_WAN, FWD_PORT + 1))
    n.tcp("out", "S", label="fwd-none SYN to the router's 8081")


def edge_sequences(h):
    scenario(h, "masquerade: IP options, fragments")
    u = Flow(h, "opt-udp", 17, "in", (IN1, 5400), (OUT, 53), (OUT, 53), "masquerade")
    u.udp("in", "opt-udp request with IP options (4 NOPs)", options=b"\x01\x01\x01\x00")
    u.udp("out", "opt-udp answer with IP options (4 NOPs)", options=b"\x01\x01\x01\x00")
    u.udp("out", "opt-udp answer")
    f = Flow(h, "frag-udp", 17, "in", (IN1, 5500), (OUT, 53), (OUT, 53), "masquerade")
    f.udp("in", "frag-udp request", data=b"f" * 80)
    f.udp("out", "frag-udp fragmented answer", data=b"h" * 80, frag=True)
    f.udp("in", "frag-udp fragmented request", data=b"g" * 80, frag=True)
    g = Flow(h, "frag-first", 17, "in", (IN1, 5501), (OUT, 53), (OUT, 53), "masquerade")
    g.udp("in", "frag-first fragmented first request", data=b"i" * 80, frag=True)


def router_sequences(h):
    scenario(h, "the router's own addresses, no translation: its kernel answers")
    own(h, "out", None, lambda b: IP(src=OUT, dst=R_WAN, ttl=64) / ICMP(
        type=8, id=0x7123, seq=1) / Raw(b"own"), "own echo request to the outside address",
        lambda d: d.get("icmp") == [0, 0] and d["sport"] == 0x7123)
    # an echo request from the peer of a masqueraded echo with its
    # identifier: a request is no reply, the router's own
    own(h, "out", None, lambda b: IP(src=OUT, dst=R_WAN, ttl=64) / ICMP(
        type=8, id=0x1234, seq=9) / Raw(b"own"), "own echo request with masq-echo's "
        "identifier", lambda d: d.get("icmp") == [0, 0] and d["sport"] == 0x1234)
    own(h, "in", None, lambda b: IP(src=IN1, dst=R_LAN, ttl=64) / ICMP(
        type=8, id=0x7124, seq=1) / Raw(b"own"), "own echo request to the inside address",
        lambda d: d.get("icmp") == [0, 0] and d["sport"] == 0x7124)
    own(h, "out", None, lambda b: IP(src=OUT, dst=R_WAN, ttl=64) / UDP(
        sport=46000, dport=9) / Raw(b"own"), "own udp to a closed port",
        lambda d: d.get("icmp") == [3, 3])
    own(h, "out", None, lambda b: IP(src=OUT, dst=R_WAN, ttl=64) / TCP(
        sport=46001, dport=8081, flags="S", seq=1), "own SYN to a closed port",
        lambda d: d["proto"] == 6 and d["sport"] == 8081 and d["dport"] == 46001)
    own(h, "out", None, lambda b: IP(src=OUT, dst=R_WAN, ttl=64) / UDP(
        sport=46002, dport=FWD_PORT) / Raw(b"own"), "own udp to the forwarded port "
        "(the rule is TCP's)", lambda d: d.get("icmp") == [3, 3])
    # an ICMP error about no connection: the router's, forwarded nowhere
    ghost = IP(src=R_WAN, dst=OUT, ttl=1) / UDP(sport=5999, dport=53) / Raw(b"q")
    own(h, "out", None, lambda b: IP(src=FAR, dst=R_WAN, ttl=64) / ICMP(type=11, code=0)
        / Raw(bytes(ghost)[:28]), "own time exceeded about no connection",
        lambda d: False)
    # hairpin: the port forward's rule has iif wan0: from the inside, the
    # router's own port
    own(h, "in", None, lambda b: IP(src=IN1, dst=R_WAN, ttl=64) / TCP(
        sport=46003, dport=FWD_PORT, flags="S", seq=1), "own SYN from inside to "
        "the forwarded port (no hairpin: iif wan0)",
        lambda d: d["proto"] == 6 and d["sport"] == FWD_PORT and d["dport"] == 46003)


def own(h, side, flow, build, label, answer):
    """A packet to the router; answer(description): a frame that answers it."""
    def answers(mark):
        def match(p):
            d = describe(p)
            if d["src"] not in (R_WAN, R_LAN, R_WAN6, R_LAN6) or not answer(d):
                return False
            # an ICMP error answers the packet it quotes
            return "quoted" not in d or d["quoted"]["id"] == mark
        return match
    h.send(side, build, flow, label, to_router=answers)


def icmp_error(h, side, flow, quoted, kind, label, src=None, quote=None):
    """An ICMP error from side (src: its host's address of the flow, or
    another router's) quoting the packet quoted as side's host received it
    on each bed (its first `quote` bytes, or all of it)."""
    rec = next(r for r in h.log if r["sent"] is quoted)

    def build(bed):
        got = h.received(bed, rec)
        q = got[0] if got else rec["sent"][bed.name]
        q = q[:pkt_len(q)]
        if quote:
            q = q[:quote]
        if flow.fam == 6:
            icmp = {"unreach": ICMPv6DestUnreach(code=4),
                    "ttl": ICMPv6TimeExceeded(code=0),
                    "toobig": ICMPv6PacketTooBig(mtu=1280)}[kind]
            return IPv6(src=src or flow.ep[side][0], dst=pkt_src(q), hlim=64) / icmp / Raw(q)
        code = {"unreach": (3, 3), "ttl": (11, 0), "toobig": (3, 4)}[kind]
        icmp = ICMP(type=code[0], code=code[1])
        if kind == "toobig":
            icmp.nexthopmtu = 576
        # the error goes to the quoted packet's source
        return IP(src=src or flow.ep[side][0], dst=ip4(q[12:16]), ttl=64) / icmp / Raw(q)
    h.send(side, build, flow, label)


def nat66_sequences(h):
    scenario(h, "NAT66 masquerade: TCP, UDP, ICMPv6 echo")
    t = Flow(h, "masq6-tcp", 6, "in", (IN1_6, 40000), (OUT6, 80), (OUT6, 80), "masquerade")
    t.handshake()
    t.data()
    big = t.tcp("in", "PA", b"x" * 1300, label="masq6-tcp big segment")
    icmp_error(h, "out", t, big, "toobig", "masq6-tcp packet too big from a far router",
               src=FAR6, quote=128)
    t.close()
    u = Flow(h, "masq6-udp", 17, "in", (IN1_6, 5353), (OUT6, 53), (OUT6, 53), "masquerade")
    q = u.udp("in", "masq6-udp request")
    u.udp("out", "masq6-udp answer")
    icmp_error(h, "out", u, q, "ttl", "masq6-udp time exceeded from a far router",
               src=FAR6)
    icmp_error(h, "out", u, q, "unreach", "masq6-udp port unreachable")

    def hlim1(bed):
        src, dst = u.ep["out"], u.dst(bed, "out")
        return IPv6(src=src[0], dst=dst[0], hlim=1) / UDP(sport=src[1], dport=dst[1]) \
            / Raw(b"hlim")
    own(h, "out", None, hlim1, "masq6-udp hop limit 1 from outside",
        lambda d: d.get("icmp") == [3, 0])
    e = Flow(h, "masq6-echo", 58, "in", (IN1_6, 0x1236), (OUT6, 0x1236), (OUT6, 0x1236),
             "masquerade")
    e.echo("in", False, 1, "masq6-echo request")
    e.echo("out", True, 1, "masq6-echo reply")
    scenario(h, "NAT66 masquerade: two inside hosts, the same source port")
    a = Flow(h, "coll6-a", 6, "in", (IN1_6, 33333), (OUT6, 80), (OUT6, 80), "masquerade")
    b = Flow(h, "coll6-b", 6, "in", (IN2_6, 33333), (OUT6, 80), (OUT6, 80), "masquerade")
    a.tcp("in", "S")
    b.tcp("in", "S")
    b.tcp("out", "SA")
    a.tcp("out", "SA")
    own(h, "out", None, lambda b: IPv6(src=OUT6, dst=R_WAN6, hlim=64) / ICMPv6EchoRequest(
        id=0x1236, seq=9, data=b"own"), "own6 echo request with masq6-echo's identifier",
        lambda d: d.get("icmp") == [129, 0] and d["sport"] == 0x1236)
    scenario(h, "NAT66: the router's own address")
    own(h, "out", None, lambda b: IPv6(src=OUT6, dst=R_WAN6, hlim=64) / ICMPv6EchoRequest(
        id=0x7126, seq=1, data=b"own"), "own6 echo request to the outside address",
        lambda d: d.get("icmp") == [129, 0] and d["sport"] == 0x7126)


SEQUENCES = ["masquerade", "snat", "dnat", "router", "nat66", "edge"]


def run(h, which):
    if "masquerade" in which:
        masquerade_sequences(h)
    if "nat66" in which:
        nat66_sequences(h)
    if "snat" in which:
        snat_sequences(h)
    if "dnat" in which:
        dnat_sequences(h)
    if "router" in which:
        router_sequences(h)
    if "edge" in which:
        edge_sequences(h)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--beds", required=True, help="the beds, as JSON (a file)")
    ap.add_argument("--out", help="write the results here, as JSON")
    ap.add_argument("--expect", action="append", default=[],
                    metavar="LABEL=REASON", help="a known difference")
    ap.add_argument("--only", default=",".join(SEQUENCES),
                    help="the sequences to run: " + ",".join(SEQUENCES))
    args = ap.parse_args()
    which = args.only.split(",")
    for w in which:
        if w not in SEQUENCES:
            sys.exit(f"Error: no sequence {w!r}; the sequences are "
                     f"{', '.join(SEQUENCES)}")

    # one CPU: the packets of a path keep their order (one backlog)
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    try:
        with open(args.beds) as f:
            specs = json.load(f)
        if not isinstance(specs, list) or not specs:
            raise RuntimeError(f"{args.beds}: no bed (a JSON array of beds)")
        beds = [Bed(b) for b in specs]
        h = Harness(beds)
        run(h, which)
        h.final()
    except (OSError, RuntimeError, KeyError, ValueError) as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2

    expected = {}
    for e in args.expect:
        label, _, reason = e.partition("=")
        expected[label] = reason
    results, bad = compare(h, expected)
    labels = [r["label"] for r in results]
    dup = {x for x in labels if labels.count(x) > 1}
    if dup:
        print(f"Error: labels used twice: {sorted(dup)}", file=sys.stderr)
        return 2
    unknown = set(expected) - set(labels)
    if unknown:
        print(f"Error: expected differences of no packet: {sorted(unknown)}",
              file=sys.stderr)
        return 2
    scen = None
    for r in results:
        if r["scenario"] != scen:
            scen = r["scenario"]
            print(f"# {scen}")
        sent = list(r["sent"].values())
        if all(x == sent[0] for x in sent):
            print(f"  {r['label']}  [{r['from']}: {sent[0]}]")
        else:
            print(f"  {r['label']}  [{r['from']}: "
                  + "; ".join(f"{n}: {x}" for n, x in r["sent"].items()) + "]")
        for name, res in r["beds"].items():
            if not res["left"]:
                print(f"      {name}: nothing left")
            else:
                notes = f"  ({'; '.join(res['notes'])})" if res["notes"] else ""
                print(f"      {name}: {show(res['packet'])}{notes}")
        for p in r["problems"]:
            print(f"      {'' if r['expected_difference'] else 'DIFFERENT: '}{p}")
    print(f"{len(results)} packets, {bad} with unexpected differences or invalid "
          "checksums")
    if args.out:
        with open(args.out, "w") as out:
            json.dump(results, out, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
