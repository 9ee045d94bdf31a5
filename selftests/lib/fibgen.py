#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""fibgen.py - a random route table for the DUT's kernel, destinations in
it, and the check that xnf's tables answer as the kernel's FIB
(routesync.bats).

  fibgen.py routes N SEED GW...   `ip -batch` lines: N routes in
        198.18.0.0/15 and 2001:db8:1000::/36, overlapping, of every kind
        the sync maps (via one gateway, multipath, device, blackhole,
        unreachable, prohibit); IPv6 ones through the IPv4 gateways'
        2001:db8:2::N twins
  fibgen.py gets FILE N SEED      `ip -batch` lines: `route get` of N
        destinations, each inside a random route of FILE
  fibgen.py compare GETS KERNEL XNF [NEIGH]   KERNEL: the `ip -j -force
        -batch` output of GETS, XNF: the `xnf -j -b` output of the same
        lines (`xnf route get`, l3fwd's lookup in xnf's tables), one object
        per line in order; NEIGH: `ip -j neigh show` of the devices of the
        connected subnets. A destination the kernel sends out of a device
        without a gateway is a host entry in xnf (forwarded in XDP to the
        neighbour's MAC) when the neighbour table has a MAC for it
        (reachable, stale, delay, probe, permanent), else passes (kernel).
        Prints how many destinations agree; exits 1 (saying which) on the
        first that does not.
"""
import ipaddress
import json
import random
import sys


def gen_routes(n, seed, gws):
    rnd = random.Random(seed)
    v4 = ipaddress.ip_network("198.18.0.0/15")
    v6 = ipaddress.ip_network("2001:db8:1000::/36")
    gws6 = ["2001:db8:2::%s" % g.rsplit(".", 1)[1] for g in gws]
    seen = set()
    while len(seen) < n:
        six = rnd.random() < 0.3
        net = v6 if six else v4
        plen = rnd.randint(40, 128) if six else rnd.randint(16, 32)
        host = rnd.getrandbits(net.max_prefixlen - net.prefixlen)
        addr = int(net.network_address) | host
        p = ipaddress.ip_network((addr, net.max_prefixlen)).supernet(
            new_prefix=plen
        )
        if p in seen:
            continue
        seen.add(p)
        g = gws6 if six else gws
        kind = rnd.random()
        if kind < 0.8:
            line = "route add %s via %s" % (p, rnd.choice(g))
        elif kind < 0.87:
            a, b = rnd.sample(g, 2)
            line = "route add %s nexthop via %s nexthop via %s" % (p, a, b)
        elif kind < 0.92:
            line = "route add %s dev d1" % p
        elif kind < 0.95:
            line = "route add blackhole %s" % p
        elif kind < 0.98:
            line = "route add unreachable %s" % p
        else:
            line = "route add prohibit %s" % p
        print(line)


def routes_of(path):
    nets = []
    with open(path) as f:
        for line in f:
            w = line.split()
            dst = w[2] if w[2] not in ("blackhole", "unreachable", "prohibit") else w[3]
            nets.append(ipaddress.ip_network(dst))
    return nets


def gen_gets(path, n, seed):
    rnd = random.Random(seed)
    nets = routes_of(path)
    for _ in range(n):
        p = rnd.choice(nets)
        host = rnd.getrandbits(p.max_prefixlen - p.prefixlen) if p.prefixlen < p.max_prefixlen else 0
        print("route get %s" % ipaddress.ip_address(int(p.network_address) | host))


def kernel_answers(path):
    """dst -> the kernel's answer (a dict), from one JSON array per line."""
    ans = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            for r in json.loads(line):
                ans[ipaddress.ip_address(r["dst"])] = r
    return ans


HOST_STATES = {"REACHABLE", "STALE", "DELAY", "PROBE", "PERMANENT"}


def neighbours(path):
    """(dst, dev) -> MAC of the neighbours a host entry forwards to."""
    if not path:
        return {}
    with open(path) as f:
        ents = json.load(f)
    return {
        (ipaddress.ip_address(e["dst"]), e.get("dev")): e["lladdr"]
        for e in ents
        if e.get("lladdr") and HOST_STATES & set(e.get("state", []))
    }


def compare(gets, kernel, xnf, neigh=None):
    ans = kernel_answers(kernel)
    macs = neighbours(neigh)
    with open(xnf) as f:
        xans = [json.loads(line) for line in f if line.strip()]
    ok = 0
    with open(gets) as f:
        addrs = [ipaddress.ip_address(line.split()[2]) for line in f]
    if len(xans) != len(addrs):
        sys.exit("xnf answered %d of %d lookups" % (len(xans), len(addrs)))
    for addr, x in zip(addrs, xans):
        k = ans.get(addr)
        xtype = x["type"]
        if k is None:
            # The kernel refused: blackhole, unreachable or prohibit.
            good = xtype in ("blackhole", "unreachable")
        elif k.get("gateway"):
            vias = [x.get("via")] + [h.get("via") for h in (x.get("nexthops") or [])]
            good = xtype in ("unicast", "multipath") and k["gateway"] in vias
        elif neigh:
            mac = macs.get((addr, k.get("dev")))
            if mac:
                good = (
                    xtype == "unicast"
                    and x.get("host") is True
                    and x.get("path") == "xdp"
                    and x.get("dev") == k["dev"]
                    and x.get("lladdr") == mac
                )
            else:
                good = xtype == "kernel" and x.get("path") == "kernel"
        else:
            good = xtype == "kernel"
        if not good:
            print(
                "%s: kernel %s, xnf %s" % (addr, json.dumps(k), json.dumps(x)),
                file=sys.stderr,
            )
            sys.exit(1)
        ok += 1
    print(ok)


def main():
    cmd = sys.argv[1]
    if cmd == "routes":
        gen_routes(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
    elif cmd == "gets":
        gen_gets(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "compare":
        compare(*sys.argv[2:6])
    else:
        sys.exit("usage: fibgen.py routes|gets|compare ...")


if __name__ == "__main__":
    main()
