# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The soak's test bed (tools/bench/soak.py): three source -> DUT -> sink
paths through one DUT, one per flow set, so that each generator has a sink
of its own and every flow set is counted exactly by sequence number:

    [src ns] g<p><tag> --veth-- i<p><tag> [dut ns] e<p><tag> --veth-- k<p><tag> [sink ns]

    p = s  stable flows through the XDP chain   192.0.2.1   -> 198.51.100.1
        c  churn flows through the XDP chain    192.0.2.65  -> 203.0.113.1
        w  stable flows through the AF_XDP worker (chain firewall,xsk)
                                                192.0.2.129 -> 198.51.100.129

Documentation ranges only; IPv6 is off in all three namespaces, so the
kernel sends nothing of its own (no RS, MLD or DAD) and every frame on the
wires is a generator's. Namespaces are xnfs-<pid>-<tag>-{src,dut,sink};
pins live on a private bpffs (Testbed's). teardown() is Testbed's.
"""

import os
import random

from testbed import Testbed, run

# role, source, DUT ingress, DUT egress, sink addresses (/26 and /25 nets)
PATHS = {
    "s": {"src": "192.0.2.1", "in": "192.0.2.62/26", "out": "198.51.100.126/25",
          "dst": "198.51.100.1/25"},
    "c": {"src": "192.0.2.65", "in": "192.0.2.126/26", "out": "203.0.113.254/24",
          "dst": "203.0.113.1/24"},
    "w": {"src": "192.0.2.129", "in": "192.0.2.190/26", "out": "198.51.100.254/25",
          "dst": "198.51.100.129/25"},
}


def mac(path, end):
    """02:78:6e:5X:00:0Y: X the path (1 s, 2 c, 3 w), Y the end (1 g, 2 i,
    3 e, 4 k)."""
    return "02:78:6e:5%d:00:0%d" % ("scw".index(path) + 1, "giek".index(end) + 1)


def addr(cidr):
    return cidr.split("/")[0]


class SoakBed(Testbed):
    def __init__(self, build, verbose=False):
        super().__init__(build, verbose)
        tag = "%05x" % random.randrange(16 ** 5)
        ident = f"{os.getpid()}-{tag}"
        self.src, self.dut, self.sink = (f"xnfs-{ident}-{r}" for r in ("src", "dut", "sink"))
        self.dev = {p: {end: f"{end}{p}{tag}" for end in "giek"} for p in PATHS}

    NS_SYSCTLS = ["net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"]

    def setup(self):
        self.setup_base("xnf-soak")

        def ipn(ns, *a):
            return run(["ip", "-n", ns, *a])
        for p, a in PATHS.items():
            d = self.dev[p]
            # The pairs are born in their namespaces: nothing in the root one.
            ipn(self.src, "link", "add", d["g"], "address", mac(p, "g"), "type", "veth",
                "peer", "name", d["i"], "address", mac(p, "i"), "netns", self.dut)
            ipn(self.sink, "link", "add", d["k"], "address", mac(p, "k"), "type", "veth",
                "peer", "name", d["e"], "address", mac(p, "e"), "netns", self.dut)
            plen_in = a["in"].split("/")[1]
            for ns, dev, cidr in ((self.src, d["g"], f"{a['src']}/{plen_in}"),
                                  (self.dut, d["i"], a["in"]), (self.dut, d["e"], a["out"]),
                                  (self.sink, d["k"], a["dst"])):
                ipn(ns, "addr", "add", cidr, "dev", dev)
                ipn(ns, "link", "set", dev, "up")
            # The kernel path (the worker's fallback) needs no ARP either.
            ipn(self.dut, "neigh", "replace", addr(a["dst"]), "lladdr", mac(p, "k"),
                "dev", d["e"], "nud", "permanent")
            ipn(self.dut, "neigh", "replace", a["src"], "lladdr", mac(p, "g"),
                "dev", d["i"], "nud", "permanent")
            # Generators and sinks finish their own checksums; GRO gives
            # the receiving ends NAPI (testbed.bash says why).
            run(["ethtool", "-K", d["g"], "gro", "on", "tx", "off"], ns=self.src)
            run(["ethtool", "-K", d["k"], "gro", "on", "tx", "off"], ns=self.sink)
            run(["ethtool", "-K", d["i"], "gro", "on"], ns=self.dut)
            run(["ethtool", "-K", d["e"], "gro", "on"], ns=self.dut)
        run(["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"], ns=self.dut)
        self.log(f"{self.src} | {self.dut} | {self.sink}, pins {self.pin_root}")

    def ns_of(self, end):
        return {"g": self.src, "i": self.dut, "e": self.dut, "k": self.sink}[end]
