#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""ct_diff.py - the same packet sequences through several routers, each
packet's fate (forwarded or not) recorded and compared
(selftests/ct_diff.bats).

Each router ("bed") sits between an inside host and an outside host, each
in a network namespace of its own; every bed has the same addresses and
MACs (testbed/testbed.bash's), so the frames sent are the same bytes on
every bed. The beds are described by a JSON file (--beds):

    [{"name": "linux", "in_ns": NS, "in_dev": DEV, "out_ns": NS,
      "out_dev": DEV,
      "actions": {"reload": [ARGV, ...], "short_timeouts": [ARGV, ...]}}]

An action is a list of commands this script runs at that point of the
sequence, on that bed (the router's rule reload, its short timeouts).

How a fate is known without timing: every packet of the test carries a
marker (the IPv4 id, the IPv6 flow label, neither of which a router
changes) and is followed on its path by a sentinel, a TCP SYN that both
rule sets let through whatever the state (from the inside: `allow iif
lan0`; from the outside: a new connection to port 22, each sentinel from
a port of its own). A router keeps the order of the packets of one path
(the sender is pinned to one CPU, so they share one backlog and ring):
once the sentinel is there, the packet before it is there or was dropped.
The receiving hosts capture on packet sockets for the whole run and every
marked packet seen at any time counts, so one that took a slower way
(passed to the router's kernel) is counted too. The hosts' kernels see
nothing of it (their prerouting and output drop everything, set up by the
caller), so they answer nothing on their own.

Prints every packet with its fate on each bed, and each difference;
--expect LABEL=REASON (repeatable) lists a known difference. Exit status:
0 when every fate is equal on all beds but the expected ones, 1 if not,
2 on an error of the harness (a sentinel lost, a command failed).
"""

import argparse
import json
import os
import select
import socket
import struct
import subprocess
import sys
import time

from scapy.layers.inet import ICMP, IP, TCP, UDP, IPerror, fragment
from scapy.layers.inet6 import (
    ICMPv6DestUnreach,
    ICMPv6EchoReply,
    ICMPv6EchoRequest,
    ICMPv6PacketTooBig,
    ICMPv6TimeExceeded,
    IPv6ExtHdrDestOpt,
    IPv6,
    IPv6ExtHdrFragment,
    IPerror6,
    fragment6,
)
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from nsio import MAC, OTHER, PACKET_OUTGOING, SENTINEL_WAIT, packet_socket

ADDR = {
    4: {"in": "192.0.2.1", "out": "198.51.100.1", "far": "203.0.113.9"},
    6: {"in": "2001:db8:1::1", "out": "2001:db8:2::1", "far": "2001:db8:3::9"},
}
# Seconds past the short timeouts (the beds' short_timeouts action sets
# them to 2) after which an idle flow has expired on every bed.
EXPIRY_SLEEP = 4.5


def frame_key(buf):
    """(family, src, dst, marker) of an IP frame, or None."""
    if len(buf) < 14:
        return None
    etype = struct.unpack_from("!H", buf, 12)[0]
    if etype == 0x0800 and len(buf) >= 34:
        mark = struct.unpack_from("!H", buf, 18)[0]
        return (4, socket.inet_ntop(socket.AF_INET, buf[26:30]),
                socket.inet_ntop(socket.AF_INET, buf[30:34]), mark)
    if etype == 0x86DD and len(buf) >= 54:
        mark = struct.unpack_from("!I", buf, 14)[0] & 0xFFFFF
        return (6, socket.inet_ntop(socket.AF_INET6, buf[22:38]),
                socket.inet_ntop(socket.AF_INET6, buf[38:54]), mark)
    return None


class Bed:
    def __init__(self, spec):
        self.name = spec["name"]
        self.actions = spec.get("actions", {})
        self.tx = {"in": packet_socket(spec["in_ns"], spec["in_dev"]),
                   "out": packet_socket(spec["out_ns"], spec["out_dev"])}
        # seen[side]: keys of the frames side's host received
        self.seen = {"in": set(), "out": set()}

    def drain(self, side):
        s = self.tx[side]
        while True:
            try:
                buf, addr = s.recvfrom(65535)
            except BlockingIOError:
                return
            if addr[2] == PACKET_OUTGOING:
                continue
            k = frame_key(buf)
            if k:
                self.seen[side].add(k)

    def wait_for(self, side, key):
        end = time.monotonic() + SENTINEL_WAIT
        while True:
            self.drain(side)
            if key in self.seen[side]:
                return
            left = end - time.monotonic()
            if left <= 0:
                raise RuntimeError(
                    f"{self.name}: sentinel {key} never reached the {side} host "
                    f"(gave up after {SENTINEL_WAIT} s): the test bed is broken")
            select.select([self.tx[side]], [], [], min(left, 0.5))

    def run(self, action):
        for argv in self.actions.get(action, []):
            r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                raise RuntimeError(f"{self.name}: {action}: {' '.join(argv)} "
                                   f"failed ({r.returncode}): {r.stderr.strip()}")


class Harness:
    def __init__(self, beds):
        self.beds = beds
        self.mark = 0
        self.sport = 20000      # sentinels' source ports
        self.log = []           # [(label, scenario, side, key, summary)]
        self.scenario = ""

    def next_mark(self):
        self.mark += 1
        if self.mark > 0xFFFF:
            raise RuntimeError("more than 65535 packets: markers ran out")
        return self.mark

    def ip(self, fam, side, dst=None, src=None):
        """The IP header of a packet from side's host, marked."""
        src = src or ADDR[fam][side]
        dst = dst or ADDR[fam][OTHER[side]]
        m = self.next_mark()
        if fam == 4:
            return IP(src=src, dst=dst, id=m, ttl=64), (4, src, dst, m)
        return IPv6(src=src, dst=dst, fl=m, hlim=64), (6, src, dst, m)

    def frame(self, side, l3):
        router = "rin" if side == "in" else "rout"
        return bytes(Ether(src=MAC[side], dst=MAC[router]) / l3)

    def sentinel(self, side):
        """A SYN every rule set forwards from side, whatever the state."""
        self.sport += 1
        l3, key = self.ip(4, side)
        return self.frame(side, l3 / TCP(sport=self.sport, dport=22, flags="S",
                                          seq=1)), key

    def send(self, side, l3, key, label, parts=None):
        """One marked packet from side's host, on every bed, and its fate;
        parts: its fragments, sent instead (any of them arriving counts)."""
        data = [self.frame(side, p) for p in (parts or [l3])]
        sent, skey = self.sentinel(side)
        for b in self.beds:
            for d in data:
                b.tx[side].send(d)
            b.tx[side].send(sent)
        for b in self.beds:
            b.wait_for(OTHER[side], skey)
        self.log.append((label, self.scenario, side, key, l3.summary()))

    def action(self, name):
        for b in self.beds:
            b.run(name)

    def sleep(self, secs):
        time.sleep(secs)

    def fates(self):
        # one last sentinel each way: whatever was on the way has arrived
        for side in ("in", "out"):
            sent, skey = self.sentinel(side)
            for b in self.beds:
                b.tx[side].send(sent)
            for b in self.beds:
                b.wait_for(OTHER[side], skey)
        out = []
        for label, scen, side, key, summary in self.log:
            f = {b.name: key in b.seen[OTHER[side]] for b in self.beds}
            out.append({"label": label, "scenario": scen, "from": side,
                        "packet": summary, "fates": f})
        return out


# ---- the sequences --------------------------------------------------------


class Tcp:
    """One TCP connection between the inside and the outside host: client
    is the side that opens it; seq and ack follow the segments sent."""

    def __init__(self, h, fam, client, cport, sport, name):
        self.h, self.fam, self.client, self.name = h, fam, client, name
        self.port = {client: cport, OTHER[client]: sport}
        self.nxt = {client: 1000, OTHER[client]: 500000}
        self.n = 0

    def seg(self, side, flags, data=b"", label=None, seq=None, ack=None):
        """A segment from side ("c" client, "s" server, or "in"/"out")."""
        side = {"c": self.client, "s": OTHER[self.client]}.get(side, side)
        other = OTHER[side]
        l3, key = self.h.ip(self.fam, side)
        s = self.nxt[side] if seq is None else seq
        a = 0
        if "A" in flags:
            a = self.nxt[other] if ack is None else ack
        pkt = l3 / TCP(sport=self.port[side], dport=self.port[other],
                       flags=flags, seq=s, ack=a, window=8192)
        if data:
            pkt = pkt / Raw(data)
        if seq is None:
            self.nxt[side] = (s + len(data) + ("S" in flags) + ("F" in flags)) \
                & 0xFFFFFFFF
        self.n += 1
        self.h.send(side, pkt, key,
                    label or f"{self.name}#{self.n} {side} {flags}"
                    f"{' +%d' % len(data) if data else ''}")
        return pkt

    def handshake(self):
        self.seg("c", "S")
        self.seg("s", "SA")
        self.seg("c", "A")

    def data(self):
        self.seg("c", "PA", b"hello")
        self.seg("s", "PA", b"world!")
        self.seg("c", "A")


def udp(h, fam, side, sport, dport, label, data=b"q"):
    l3, key = h.ip(fam, side)
    pkt = l3 / UDP(sport=sport, dport=dport) / Raw(data)
    h.send(side, pkt, key, label)
    return pkt


def udp_fragmented(h, fam, side, sport, dport, label):
    """A datagram in three fragments (each with the marker)."""
    l3, key = h.ip(fam, side)
    data = Raw(b"f" * 80)
    if fam == 4:
        pkt = l3 / UDP(sport=sport, dport=dport) / data
        parts = fragment(pkt, fragsize=32)
    else:
        pkt = l3 / IPv6ExtHdrFragment(id=key[3]) / UDP(sport=sport, dport=dport) / data
        parts = fragment6(pkt, 40 + 8 + 40)
    h.send(side, pkt, key, label, parts=parts)


def echo(h, fam, side, ident, seq, reply, label):
    l3, key = h.ip(fam, side)
    if fam == 4:
        pkt = l3 / ICMP(type=0 if reply else 8, id=ident, seq=seq) / Raw(b"ping")
    else:
        t = ICMPv6EchoReply if reply else ICMPv6EchoRequest
        pkt = l3 / t(id=ident, seq=seq, data=b"ping")
    h.send(side, pkt, key, label)
    return pkt


def icmp_error(h, fam, side, quoted, kind, label, src=None):
    """An ICMP error from side (src: its address, or another router's)
    quoting the packet quoted (as sent, from the other side)."""
    l3, key = h.ip(fam, side, src=src)
    q = bytes(quoted[IP if fam == 4 else IPv6])
    if fam == 4:
        inner = IPerror(q[:28]) if len(q) >= 28 else IPerror(q)
        code = {"unreach": (3, 3), "ttl": (11, 0), "toobig": (3, 4)}[kind]
        icmp = ICMP(type=code[0], code=code[1])
        if kind == "toobig":
            icmp.nexthopmtu = 576
        pkt = l3 / icmp / inner
    else:
        inner = IPerror6(q[:48])
        if kind == "unreach":
            pkt = l3 / ICMPv6DestUnreach(code=4) / inner
        elif kind == "toobig":
            pkt = l3 / ICMPv6PacketTooBig(mtu=1280) / inner
        else:
            pkt = l3 / ICMPv6TimeExceeded(code=0) / inner
    h.send(side, pkt, key, label)


def scenario(h, name):
    h.scenario = name


def tcp_sequences(h, fam):
    p = f"v{fam} tcp"
    port = 1000 if fam == 4 else 2000

    scenario(h, f"{p}: handshake from inside, data, FIN close, late segments")
    t = Tcp(h, fam, "in", 40000 + port, 80, f"v{fam} fin")
    t.handshake()
    t.data()
    t.seg("c", "FA")
    t.seg("s", "A")
    t.seg("s", "FA")
    t.seg("c", "A")
    t.seg("c", "PA", b"late", label=f"v{fam} fin late data from inside")
    t.seg("s", "PA", b"late", label=f"v{fam} fin late data from outside")
    t.seg("s", "A", label=f"v{fam} fin late ack from outside")

    scenario(h, f"{p}: RST close, late segments")
    t = Tcp(h, fam, "in", 40001 + port, 80, f"v{fam} rst")
    t.handshake()
    t.data()
    t.seg("s", "R")
    t.seg("s", "PA", b"late", label=f"v{fam} rst late data from outside")
    t.seg("c", "PA", b"late", label=f"v{fam} rst late data from inside")
    t.seg("s", "A", label=f"v{fam} rst late ack from outside")

    scenario(h, f"{p}: RST from inside")
    t = Tcp(h, fam, "in", 40002 + port, 80, f"v{fam} rst-in")
    t.handshake()
    t.seg("c", "RA")
    t.seg("s", "PA", b"late", label=f"v{fam} rst-in late data from outside")

    scenario(h, f"{p}: retransmitted SYN")
    t = Tcp(h, fam, "in", 40003 + port, 443, f"v{fam} resyn")
    t.seg("c", "S")
    t.seg("c", "S", seq=1000, label=f"v{fam} resyn SYN again")
    t.seg("s", "SA")
    t.seg("c", "A")
    t.seg("s", "PA", b"data")

    scenario(h, f"{p}: SYN/ACK retransmitted, simultaneous close")
    t = Tcp(h, fam, "in", 40004 + port, 443, f"v{fam} sim")
    t.seg("c", "S")
    t.seg("s", "SA")
    t.seg("s", "SA", seq=500000, label=f"v{fam} sim SYN/ACK again")
    t.seg("c", "A")
    t.seg("c", "FA")
    t.seg("s", "FA", ack=t.nxt["in"] - 1)
    t.seg("c", "A")
    t.seg("s", "A")

    scenario(h, f"{p}: mid-stream pick-up from inside")
    t = Tcp(h, fam, "in", 40005 + port, 80, f"v{fam} pickup-in")
    t.seg("c", "PA", b"mid")
    t.seg("s", "A")
    t.seg("s", "PA", b"reply")
    t.seg("c", "A")

    scenario(h, f"{p}: mid-stream pick-up from outside")
    t = Tcp(h, fam, "out", 40006 + port, 80, f"v{fam} pickup-out")
    t.seg("c", "PA", b"mid")
    t.seg("s", "A")
    t.seg("c", "PA", b"more")

    scenario(h, f"{p}: inbound SYN to port 22 (allowed) and 23 (not)")
    t = Tcp(h, fam, "out", 40007 + port, 22, f"v{fam} ssh-in")
    t.handshake()
    t.data()
    t.seg("c", "FA")
    t.seg("s", "FA")
    t.seg("c", "A")
    t = Tcp(h, fam, "out", 40008 + port, 23, f"v{fam} telnet-in")
    t.seg("c", "S")
    t.seg("s", "SA")
    t.seg("c", "A")

    scenario(h, f"{p}: unsolicited segments from outside, every flag kind")
    for i, fl in enumerate(["S", "SA", "A", "F", "FA", "R", "RA", "PA", ""]):
        t = Tcp(h, fam, "out", 41000 + port + i, 80, f"v{fam} unsol-out")
        t.seg("c", fl, label=f"v{fam} unsolicited from outside {fl or 'none'}")
    scenario(h, f"{p}: unsolicited segments from inside, every flag kind")
    for i, fl in enumerate(["SA", "A", "F", "FA", "R", "RA", "PA", ""]):
        t = Tcp(h, fam, "in", 41100 + port + i, 80, f"v{fam} unsol-in")
        t.seg("c", fl, label=f"v{fam} unsolicited from inside {fl or 'none'}")

    scenario(h, f"{p}: bad flag combinations")
    bad = ["SF", "SR", "F", "SFR", "FR", "SFPAUEC", "FPU", "SU", "RF"]
    for side in ("in", "out"):
        for i, fl in enumerate(bad):
            t = Tcp(h, fam, side, 42000 + port + 20 * (side == "out") + i, 22,
                    f"v{fam} bad")
            t.seg("c", fl, label=f"v{fam} bad flags {fl} from {side}")
    # the same flags inside an established connection
    t = Tcp(h, fam, "in", 42100 + port, 80, f"v{fam} bad-est")
    t.handshake()
    for fl in ["SF", "SR", "F", ""]:
        t.seg("s", fl, seq=t.nxt["out"],
              label=f"v{fam} bad flags {fl or 'none'} in a connection from outside")
    t.seg("s", "PA", b"still")
    t.seg("c", "A")

    scenario(h, f"{p}: reopen from TIME_WAIT with a new SYN")
    t = Tcp(h, fam, "in", 42200 + port, 80, f"v{fam} reopen")
    t.handshake()
    t.seg("c", "FA")
    t.seg("s", "FA")
    t.seg("c", "A")
    t.nxt = {"in": 9000, "out": 900000}
    t.handshake()
    t.seg("s", "PA", b"again")


def udp_sequences(h, fam):
    scenario(h, f"v{fam} udp: request and answer, unsolicited")
    q = udp(h, fam, "in", 5353, 53, f"v{fam} udp request")
    udp(h, fam, "out", 53, 5353, f"v{fam} udp answer")
    udp(h, fam, "in", 5353, 53, f"v{fam} udp second request")
    udp(h, fam, "out", 53, 5353, f"v{fam} udp second answer")
    udp(h, fam, "out", 53, 5354, f"v{fam} udp unsolicited from outside")
    udp(h, fam, "out", 5000, 22, f"v{fam} udp unsolicited to 22 from outside")

    scenario(h, f"v{fam} udp: fragments")
    udp_fragmented(h, fam, "in", 5600, 53, f"v{fam} fragmented udp request")
    udp_fragmented(h, fam, "out", 53, 5600, f"v{fam} fragmented udp answer")
    udp_fragmented(h, fam, "out", 53, 5601, f"v{fam} fragmented udp unsolicited "
                   "from outside")

    scenario(h, f"v{fam} icmp errors")
    q = udp(h, fam, "in", 6000, 7000, f"v{fam} udp to a closed port")
    icmp_error(h, fam, "out", q, "unreach", f"v{fam} port unreachable (related)")
    icmp_error(h, fam, "out", q, "ttl", f"v{fam} time exceeded from a far router "
               "(related)", src=ADDR[fam]["far"])
    t = Tcp(h, fam, "in", 43000 + fam, 80, f"v{fam} tcp-err")
    syn = t.seg("c", "S")
    icmp_error(h, fam, "out", syn, "unreach", f"v{fam} unreachable for a SYN (related)")
    t.seg("s", "SA")
    t.seg("c", "A")
    big = t.seg("c", "PA", b"x" * 600)
    icmp_error(h, fam, "out", big, "toobig", f"v{fam} too big for a segment from a far "
               "router (related)", src=ADDR[fam]["far"])
    t.seg("c", "PA", b"y" * 500)
    # a datagram nobody sent
    l3, _ = h.ip(fam, "in")
    ghost = l3 / UDP(sport=6001, dport=7001) / Raw(b"q")
    icmp_error(h, fam, "out", ghost, "unreach", f"v{fam} port unreachable about nothing")
    icmp_error(h, fam, "out", ghost, "ttl", f"v{fam} time exceeded about nothing",
               src=ADDR[fam]["far"])
    # the inside rejects a flow the outside opened (port 22: allowed new)
    t = Tcp(h, fam, "out", 43100 + fam, 22, f"v{fam} tcp-err-in")
    syn = t.seg("c", "S")
    icmp_error(h, fam, "in", syn, "unreach", f"v{fam} unreachable from inside (related)")
    l3, _ = h.ip(fam, "out")
    ghost = l3 / UDP(sport=6002, dport=7002) / Raw(b"q")
    icmp_error(h, fam, "in", ghost, "unreach", f"v{fam} unreachable from inside "
               "about nothing")


def echo_sequences(h, fam):
    scenario(h, f"v{fam} icmp echo")
    echo(h, fam, "in", 0x100 + fam, 1, False, f"v{fam} echo request from inside")
    echo(h, fam, "out", 0x100 + fam, 1, True, f"v{fam} echo reply from outside")
    echo(h, fam, "in", 0x100 + fam, 2, False, f"v{fam} second echo request")
    echo(h, fam, "out", 0x100 + fam, 2, True, f"v{fam} second echo reply")
    echo(h, fam, "out", 0x200 + fam, 1, True, f"v{fam} echo reply without request "
         "from outside")
    echo(h, fam, "in", 0x300 + fam, 1, True, f"v{fam} echo reply without request "
         "from inside")
    echo(h, fam, "out", 0x400 + fam, 1, False, f"v{fam} echo request from outside")
    echo(h, fam, "in", 0x400 + fam, 1, True, f"v{fam} echo reply from inside")


def other_sequences(h, fam):
    scenario(h, f"v{fam} other protocols, IPv6 extension headers")
    # one connection (the addresses and the protocol): the outside tries
    # first, then the inside opens it and the outside answers
    for side, what in (("out", "unsolicited"), ("in", "opening"), ("out", "reply")):
        l3, key = h.ip(fam, side)
        if fam == 4:
            l3.proto = 253
        else:
            l3.nh = 253
        h.send(side, l3 / Raw(b"exp"), key, f"v{fam} protocol 253 from {side}, {what}")
    if fam == 6:
        # a destination options header before TCP, both ways
        t = Tcp(h, fam, "in", 46000, 80, "v6 destopt")
        t.handshake()
        for side in ("out", "in"):
            l3, key = h.ip(fam, side)
            o = OTHER[side]
            pkt = l3 / IPv6ExtHdrDestOpt() / TCP(
                sport=t.port[side], dport=t.port[o], flags="PA",
                seq=t.nxt[side], ack=t.nxt[o]) / Raw(b"opt")
            t.nxt[side] += 3
            h.send(side, pkt, key, f"v6 destopt data from {side} behind "
                   "a destination options header")
        l3, key = h.ip(fam, "out")
        pkt = l3 / IPv6ExtHdrDestOpt() / TCP(sport=46001, dport=80, flags="S", seq=1)
        h.send("out", pkt, key, "v6 destopt SYN from outside to port 80")
        l3, key = h.ip(fam, "out")
        pkt = l3 / IPv6ExtHdrDestOpt() / TCP(sport=46002, dport=22, flags="S", seq=1)
        h.send("out", pkt, key, "v6 destopt SYN from outside to port 22")


def reload_sequences(h):
    scenario(h, "rule reload in the middle of flows")
    flows = [Tcp(h, fam, "in", 44000 + fam, 80, f"v{fam} reload") for fam in (4, 6)]
    for t in flows:
        t.handshake()
        t.data()
    for fam in (4, 6):
        udp(h, fam, "in", 5400, 53, f"v{fam} reload udp request")
        echo(h, fam, "in", 0x500 + fam, 1, False, f"v{fam} reload echo request")
    h.action("reload")
    for t in flows:
        t.seg("s", "PA", b"after reload", label=f"{t.name} data from outside "
              "after reload")
        t.seg("c", "PA", b"after reload", label=f"{t.name} data from inside "
              "after reload")
    for fam in (4, 6):
        udp(h, fam, "out", 53, 5400, f"v{fam} reload udp answer after reload")
        echo(h, fam, "out", 0x500 + fam, 1, True, f"v{fam} reload echo reply "
             "after reload")
    h.action("reload_changed")
    for t in flows:
        t.seg("s", "PA", b"after change", label=f"{t.name} data from outside "
              "after a rule change")
        t.seg("c", "A")
        t.seg("c", "FA")
        t.seg("s", "FA")
        t.seg("c", "A")


def expiry_sequences(h):
    scenario(h, "expiry with short timeouts")
    h.action("short_timeouts")
    for fam in (4, 6):
        udp(h, fam, "in", 5500, 53, f"v{fam} expiry udp request")
        udp(h, fam, "out", 53, 5500, f"v{fam} expiry udp answer in time")
        udp(h, fam, "in", 5501, 53, f"v{fam} expiry udp request 2")
        echo(h, fam, "in", 0x600 + fam, 1, False, f"v{fam} expiry echo request")
    tcps = []
    for fam in (4, 6):
        t = Tcp(h, fam, "in", 45000 + fam, 80, f"v{fam} expiry tcp")
        t.handshake()
        t.data()
        r = Tcp(h, fam, "in", 45100 + fam, 80, f"v{fam} expiry rst")
        r.handshake()
        r.seg("s", "R")
        tcps.append((t, r))
    h.sleep(EXPIRY_SLEEP)
    for t, r in tcps:
        # the idle connection is gone: the outside's segment is a new
        # flow from wan0; the inside's picks it up mid-stream again
        t.seg("s", "PA", b"idle", label=f"{t.name} data from outside after expiry")
        t.seg("c", "PA", b"idle", label=f"{t.name} data from inside after expiry")
        t.seg("s", "PA", b"back", label=f"{t.name} data from outside after "
              "the pick-up")
        r.seg("s", "PA", b"late", label=f"{r.name} late data from outside "
              "after expiry")
    for fam in (4, 6):
        udp(h, fam, "out", 53, 5500, f"v{fam} expiry udp answer after expiry")
        udp(h, fam, "out", 53, 5501, f"v{fam} expiry unreplied udp answer "
            "after expiry")
        echo(h, fam, "out", 0x600 + fam, 1, True, f"v{fam} expiry echo reply "
             "after expiry")
        udp(h, fam, "in", 5500, 53, f"v{fam} expiry udp request again")
        udp(h, fam, "out", 53, 5500, f"v{fam} expiry udp answer again")


SEQUENCES = ["tcp", "udp", "echo", "other", "reload", "expiry"]


def run(h, which):
    for fam in (4, 6):
        if "tcp" in which:
            tcp_sequences(h, fam)
        if "udp" in which:
            udp_sequences(h, fam)
        if "echo" in which:
            echo_sequences(h, fam)
        if "other" in which:
            other_sequences(h, fam)
    if "reload" in which:
        reload_sequences(h)
    if "expiry" in which:
        expiry_sequences(h)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--beds", required=True, help="the beds, as JSON (a file)")
    ap.add_argument("--out", help="write the fates here, as JSON")
    ap.add_argument("--expect", action="append", default=[],
                    metavar="LABEL=REASON", help="a known difference")
    ap.add_argument("--only", default=",".join(SEQUENCES),
                    help="the sequences to run: " + ",".join(SEQUENCES))
    args = ap.parse_args()

    expected = {}
    for e in args.expect:
        label, _, reason = e.partition("=")
        expected[label] = reason
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
        fates = h.fates()
    except (OSError, RuntimeError, KeyError, ValueError,
            subprocess.TimeoutExpired) as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2

    names = [b.name for b in beds]
    labels = [f["label"] for f in fates]
    dup = {x for x in labels if labels.count(x) > 1}
    if dup:
        print(f"Error: labels used twice: {sorted(dup)}", file=sys.stderr)
        return 2
    unknown = set(expected) - set(labels)
    if unknown:
        print(f"Error: expected differences of no packet: {sorted(unknown)}",
              file=sys.stderr)
        return 2

    bad = 0
    scen = None
    for f in fates:
        if f["scenario"] != scen:
            scen = f["scenario"]
            print(f"# {scen}")
        vals = [f["fates"][n] for n in names]
        same = all(v == vals[0] for v in vals)
        col = "  ".join(f"{n}={'fwd ' if f['fates'][n] else 'drop'}" for n in names)
        f["expected_difference"] = expected.get(f["label"])
        if same and f["label"] in expected:
            mark = "EQUAL, BUT A DIFFERENCE WAS EXPECTED"
            bad += 1
        elif same:
            mark = ""
        elif f["label"] in expected:
            mark = f"expected difference: {expected[f['label']]}"
        else:
            mark = "DIFFERENT"
            bad += 1
        print(f"  {col}  {f['label']}  [{f['from']}: {f['packet']}]"
              f"{'  <- ' + mark if mark else ''}")
    print(f"{len(fates)} packets, {bad} unexpected "
          f"{'difference' if bad == 1 else 'differences'}")
    if args.out:
        with open(args.out, "w") as out:
            json.dump(fates, out, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
