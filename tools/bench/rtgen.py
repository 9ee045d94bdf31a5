#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A synthetic full Internet routing table, for the route-sync benchmark
(tools/bench/rtsync.py, docs/route-sync-bench.md).

    rtgen.py [-4 N] [-6 N] [--seed S] [--ports DEV,DEV,...] > table.batch
    ip -batch table.batch        # or: rtsync.py loads it over rtnetlink

Prints one `route add PREFIX via GW dev DEV proto bgp` line per prefix,
the form `ip -batch` reads. The prefixes are unique, deterministic for a
seed, and follow the prefix-length distribution of the public BGP table
(LENGTHS4 / LENGTHS6 below, after the CIDR report and Geoff Huston's
annual BGP table reports, 2024-2025: IPv4 ~60% /24, then /22, /23, /20,
/21, /19, /16 ...; nothing longer than /24, which the default-free zone
filters; IPv6 ~45% /48, then /32, /44, /40, /36, /29 ...; nothing longer
than /48). Many prefixes lie inside a shorter one of the table, as
deaggregation makes them (73% of the IPv4 and 48% of the IPv6 table for
the default sizes and seed; see DEAGG), so the trie nests like the real
one.

The prefixes use the whole unicast space (IPv4 1/8 .. 223/8 without 10/8,
127/8 and the next hops' range; IPv6 2000::/3 without 2001:db8::/32): they
are routes in a private network namespace, and no packet is ever sent to
them. The next hops are in benchmarking and documentation ranges:
198.18.I.2 and 2001:db8:I::2 behind port I (BENCH4 / BENCH6 below), and
198.19.0.0/16, 2001:db8:ff00::/40 are left free for probe routes.
"""

import argparse
import ipaddress
import random
import sys

# Prefix length -> share of the table, in prefixes per million (IPv4:
# ~1,000,000 prefixes; IPv6: ~200,000), rounded from the public reports.
LENGTHS4 = {
    8: 16, 9: 12, 10: 40, 11: 110, 12: 320, 13: 620, 14: 1300, 15: 2200,
    16: 14000, 17: 8200, 18: 13500, 19: 25500, 20: 45000, 21: 42000,
    22: 130000, 23: 107000, 24: 610182,
}
LENGTHS6 = {
    16: 5, 19: 10, 20: 60, 22: 50, 23: 40, 24: 400, 25: 80, 26: 150,
    27: 250, 28: 10000, 29: 30000, 30: 8000, 31: 5000, 32: 140000,
    33: 15000, 34: 12000, 35: 10000, 36: 38955, 37: 5000, 38: 12000,
    39: 5000, 40: 70000, 41: 5000, 42: 20000, 43: 8000, 44: 90000,
    45: 15000, 46: 30000, 47: 20000, 48: 450000,
}
# Share of the prefixes longer than /16 (IPv4) or /32 (IPv6) drawn inside a
# shorter prefix already in the table, as deaggregation makes them. In a
# full IPv4 table the shorter prefixes, placed at random, already cover
# most of the space, so most longer ones land inside one anyway (the
# public reports count about half the IPv4 table as more-specifics); in
# IPv6 a random prefix almost never does. Measured share of prefixes inside
# a shorter one, default seed: IPv4 1,000,000 -> 73%, 10,000 -> 23%;
# IPv6 200,000 -> 48%.
DEAGG = {4: 0.2, 6: 0.6}

# The next hops' ranges (RFC 2544 benchmarking space, RFC 3849 docs).
BENCH4 = ipaddress.ip_network("198.18.0.0/16")
PROBE4 = ipaddress.ip_network("198.19.0.0/16")
BENCH6 = ipaddress.ip_network("2001:db8::/32")
PROBE6 = ipaddress.ip_network("2001:db8:ff00::/40")

# Whole /8s (IPv4) left out of the table: 0/8, 10/8, 127/8, 198.18.0.0/15
# is carved out below; 224/3 is not unicast.
SKIP8 = {0, 10, 127}


def counts(lengths, total):
    """Prefixes per length for a table of total prefixes (largest remainder)."""
    scale = sum(lengths.values())
    exact = {l: total * w / scale for l, w in lengths.items()}
    n = {l: int(v) for l, v in exact.items()}
    rest = total - sum(n.values())
    for l in sorted(exact, key=lambda l: exact[l] - n[l], reverse=True)[:rest]:
        n[l] += 1
    return n


def _v4_ok(addr, plen):
    if addr >> 24 in SKIP8 or addr >> 24 >= 224:
        return False
    # Neither inside nor around the next hops' and probes' 198.18.0.0/15
    # (a covering prefix would be fine for routing, but would hide the
    # probes from an exact lookup).
    lo, hi = addr, addr | ((1 << (32 - plen)) - 1)
    return hi < 0xC6120000 or lo > 0xC613FFFF


def _v6_ok(addr, plen):
    lo, hi = addr, addr | ((1 << (128 - plen)) - 1)
    db8lo, db8hi = 0x20010DB8 << 96, ((0x20010DB8 + 1) << 96) - 1
    return hi < db8lo or lo > db8hi


def prefixes(family, total, seed):
    """[(address int, prefix length)]: total unique prefixes of family 4 or
    6, shortest first, the same for the same seed."""
    bits = 32 if family == 4 else 128
    lengths = LENGTHS4 if family == 4 else LENGTHS6
    ok = _v4_ok if family == 4 else _v6_ok
    # IPv6 unicast is 2000::/3: draw the bits below it and put 001 on top.
    top, fixed = (0, 0) if family == 4 else (1 << 125, 3)
    deagg_from = 16 if family == 4 else 32
    rng = random.Random(f"{seed}/{family}")
    seen = set()
    out = []
    shorter = []  # prefixes of the lengths already done, to deaggregate
    for plen, n in sorted(counts(lengths, total).items()):
        if n > (1 << (plen - fixed)) // 2:
            raise ValueError(f"/{plen}: {n} prefixes do not fit")
        done = []
        while len(done) < n:
            if plen > deagg_from and shorter and rng.random() < DEAGG[family]:
                base, blen = shorter[rng.randrange(len(shorter))]
                addr = base | (rng.getrandbits(plen - blen) << (bits - plen))
            else:
                addr = top | (rng.getrandbits(plen - fixed) << (bits - plen))
            if (addr, plen) in seen or not ok(addr, plen):
                continue
            seen.add((addr, plen))
            done.append((addr, plen))
        shorter.extend(done)
        out.extend(done)
    return out


def fmt(family, addr, plen):
    if family == 4:
        return f"{ipaddress.IPv4Address(addr)}/{plen}"
    return f"{ipaddress.IPv6Address(addr)}/{plen}"


def nexthops(ports):
    """[(gw4, gw6, dev)] for port i: 198.18.i.2, 2001:db8:i::2."""
    return [(f"198.18.{i}.2", f"2001:db8:{i:x}::2", dev) for i, dev in enumerate(ports)]


def table(n4, n6, seed, ports):
    """Yields (family, prefix string, gw, dev) for the whole table, the
    next hops spread over the ports by a hash of the prefix (per seed)."""
    hops = nexthops(ports)
    for family, n in ((4, n4), (6, n6)):
        rng = random.Random(f"{seed}/nh{family}")
        for addr, plen in prefixes(family, n, seed):
            gw4, gw6, dev = hops[rng.randrange(len(hops))]
            yield family, fmt(family, addr, plen), gw4 if family == 4 else gw6, dev


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-4", dest="n4", type=int, default=1000000, help="IPv4 prefixes (1,000,000)")
    ap.add_argument("-6", dest="n6", type=int, default=200000, help="IPv6 prefixes (200,000)")
    ap.add_argument("--seed", default="xnf", help="the same seed gives the same table")
    ap.add_argument("--ports", default="p0,p1,p2,p3",
                    help="egress devices, comma-separated (2-4: next hops 198.18.I.2, 2001:db8:I::2)")
    ap.add_argument("--verb", default="add", choices=("add", "replace", "del"))
    a = ap.parse_args(argv)
    ports = a.ports.split(",")
    out = sys.stdout
    for _, pfx, gw, dev in table(a.n4, a.n6, a.seed, ports):
        out.write(f"route {a.verb} {pfx} via {gw} dev {dev} proto bgp\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
