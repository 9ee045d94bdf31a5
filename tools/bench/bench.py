#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""xnf's benchmark harness: the papers' measurements (throughput against
frame size and chain length, zero-loss throughput, latency against offered
rate and chain length, loss and batch sizes against offered rate, firewall
size against throughput), on xnf and on what an operator would otherwise
use (Linux forwarding, nftables), against a bare XDP redirect (the ceiling)
and a minimal bpf_fib_lookup forwarder (fibfwd, for l3fwd in fib mode),
in one run, on a fresh source -> DUT -> sink namespace test bed.

    make bench            # the full run (prints its estimated duration)
    make bench QUICK=1    # a few minutes, every output file
    tools/bench/bench.py --help

Placement: the generator runs on one CPU (--gen-cpu), the DUT's receive
work on another (--dut-cpu): threaded NAPI on the DUT's ingress veth with
its napi thread pinned, after every XDP attach (xnf does it with `attach
... cores`, the others by hand). Results: CSV per experiment, raw JSON per
point, report.md and PNGs (report.py), model/sweep.json (issue 7).
"""

import argparse
import csv
import fnmatch
import ipaddress
import json
import math
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "testbed"))
from testbed import CmdError, Testbed, run  # noqa: E402
from waketrace import WakeTrace  # noqa: E402
import stats  # noqa: E402
import steadiness  # noqa: E402

SIZES = ["64", "128", "256", "512", "1024", "1500", "dc"]
RATES = ["100", "1k", "10k", "100k", "1M", "max"]
RULE_COUNTS = [10, 100, 1000, 3000, 10000]
LAT_SIZE = "128"          # the papers' latency figures use 128-byte frames
CHAIN_RATE = "100k"       # latency against chain length, below every saturation
FW_RULES = 10             # the seed's firewall
EXTRA_ROUTES = [f"203.0.113.{16 * i}/28" for i in range(8)]  # with the 2 below: 10 routes
WORKER_BATCH, WORKER_RING = 64, 2048
TESTPMD = "dpdk-testpmd"  # Debian: dpdk-dev and librte-net-af-xdp23 (docs/benchmarks.md)
TESTPMD_MBUFS = 16384     # the UMEM: fill, RX, TX and completion rings of both ports
# The worker against testpmd, placement by placement (where the ingress's
# napi thread runs): the worker sleeping after 64 empty reads, the worker in
# busy-poll mode, testpmd. Issue 38's target: the worker (either mode) at
# least 1.2x testpmd, in packets per second and per CPU-millisecond.
VS_TESTPMD_PLACEMENTS = [("same", "worker-macswap", "worker-macswap-bp", "testpmd"),
                         ("other", "worker-macswap-napi-other", "worker-macswap-bp-napi-other",
                          "testpmd-napi-other")]
VS_TESTPMD = [d for pl in VS_TESTPMD_PLACEMENTS for d in pl[1:]]
VS_TESTPMD_BP = tuple(pl[2] for pl in VS_TESTPMD_PLACEMENTS)
VS_TESTPMD_TARGET = 1.2
VS_TESTPMD_SEED = 38      # the order of the dataplanes in each round
# The stateful firewall against Linux's (issue 35): conntrack,firewall,l3fwd
# with the classic policy, and Linux forwarding with nftables and the same
# policy, each at 1 flow and at 65,536 (every source port of the generator).
CT_FLOWS = (1, 65536)
VS_NFT_CT_PAIRS = [(f"xnf-ct-{n}flows", f"linux-nft-ct-{n}flows") for n in CT_FLOWS]
VS_NFT_CT = [d for pair in VS_NFT_CT_PAIRS for d in pair]
# NAT against Linux's (issue 36): conntrack,nat,firewall,l3fwd with the
# classic policy masquerading out of the egress, and Linux forwarding with
# the same policy and nftables' masquerade, at 1 flow and 65,536.
VS_NFT_MASQ_PAIRS = [(f"xnf-masq-{n}flows", f"linux-nft-masq-{n}flows") for n in CT_FLOWS]
VS_NFT_MASQ = [d for pair in VS_NFT_MASQ_PAIRS for d in pair]
# Frames the smoke trial of a masquerading dataplane captures at the sink
# (without its XDP program) to see their source translated.
MASQ_CHECK_FRAMES = 20
UDP_SPORT, UDP_DPORT = 1024, 9
MODEL_DP = "worker-l3fwd-napi-other"   # the model sweep's dataplane: the worker
MODEL_XDP_DP = "xnf-1nf-model"          # and the XDP path's
MODEL_DPS = (MODEL_DP, MODEL_XDP_DP)
MODEL_TARGET_LOSS, MODEL_ACCURACY = 1e-3, 0.005   # issue 18's dimensioning check
MODEL_RATE_TOL = 0.02     # the check's offered rate: the model's within 2%
WAKE_LOST_MARGIN = 10     # polls xnf_batch may count outside perf's window
FIFO_PRIO = 50   # threaded IRQs' priority (kernel/irq/manage.c)
GEN_FIFO_PRIO = 40   # a generator at SCHED_FIFO: below the napi threads
VETH_RING, NAPI_BUDGET = 256, 64   # drivers/net/veth.c VETH_RING_SIZE; NAPI's default weight
# The issue 38 test-bed targets (--targets): the dataplanes, set up once
# each and kept alive together, and the targets, each a ratio of DUT CPU
# ns per packet paired per round: (what, numerator, denominator, target,
# "le": ratio <= target is met / "ge": ratio >= target is met).
TARGET_DPS = ["redirect", "minfwd", "xnf-3nf-tailcall-lpm", "xnf-3nf-fused-lpm", "linux-nft",
              "fibfwd", "xnf-1nf-tailcall-fib"]
TARGETS = [
    ("3-NF chain (tail-called) / minfwd", "xnf-3nf-tailcall-lpm", "minfwd", 1.15, "le"),
    ("3-NF chain (fused) / minfwd", "xnf-3nf-fused-lpm", "minfwd", 1.15, "le"),
    ("Linux+nft / 3-NF chain (tail-called)", "linux-nft", "xnf-3nf-tailcall-lpm", 3.0, "ge"),
    ("Linux+nft / 3-NF chain (fused)", "linux-nft", "xnf-3nf-fused-lpm", 3.0, "ge"),
    ("l3fwd fib mode / fibfwd", "xnf-1nf-tailcall-fib", "fibfwd", 1.0, "le"),
]
TARGET_MIXES = "1,65536,zipf:1.0:1000000"
# The ceiling moved: the bare redirect's CPU ns per packet over the rounds
# of a mix spread more than this ((90th - 10th percentile) / median). The
# redirect's work does not change between rounds, so what moves it is the
# machine (another tenant, frequency, the host's scheduling of the vCPU),
# and a ratio measured while the machine moved that much is not trusted.
CEILING_DP, CEILING_SPREAD = "redirect", 0.30
# Trial overhead beyond its duration (sink attach, process start, drain), s,
# and per test bed; only for the estimate, corrected as the run goes.
TRIAL_OVH, SESSION_OVH = 0.7, 2.5


def rate_pps(label):
    if label == "max":
        return None
    mult = {"k": 1e3, "M": 1e6}.get(label[-1], 1)
    return int(float(label.rstrip("kM")) * mult)


# ---- dataplanes ----------------------------------------------------------------

class DP:
    """A dataplane under test. kind: redirect, fibfwd, xnf, linux, nft, worker,
    xskfwd, testpmd. napi: where the DUT ingress's napi thread runs, next to
    the forwarding (the DUT CPU, "same") or on the other CPU ("other": the
    generator's; only for the AF_XDP dataplanes, whose forwarding thread is
    not the napi thread)."""

    def __init__(self, name, kind, nfs=(), form="", route="", worker_nf="", napi="same",
                 fifo=(), flows=None, ct=False, masq=False,
                 busy_poll=False):
        self.name, self.kind, self.nfs = name, kind, list(nfs)
        # busy_poll: an AF_XDP worker in busy-poll mode (docs/workers.md)
        self.busy_poll = busy_poll
        self.form, self.route, self.worker_nf = form, route, worker_nf
        self.napi = napi
        # flows: the generator's flows for this dataplane (None: --flows);
        # ct: the classic stateful policy (ct_policy_xnf, ct_policy_nft)
        # instead of the 10-rule set, and the DUT's CPU time measured.
        self.flows, self.ct = flows, ct
        # masq: the source masqueraded out of the egress (masq_xnf,
        # masq_nft), on top of the stateful policy.
        self.masq = masq
        # Threads run SCHED_FIFO (FIFO_PRIO): "napi", the ingress's napi
        # thread, preempts the generator on their CPU as a NIC's interrupt
        # would; "worker", the forwarding thread, preempts the machine's
        # other work on its CPU; "gen", the generator (GEN_FIFO_PRIO,
        # below the napi threads), is not time-sliced with the machine's
        # other work.
        self.fifo = tuple(fifo)

    @property
    def chain_len(self):
        return len(self.nfs)

    @property
    def has_fw(self):
        return "firewall" in self.nfs

    def columns(self):
        return {"dataplane": self.name, "kind": self.kind, "chain_len": self.chain_len,
                "nfs": "+".join(self.nfs), "form": self.form, "route": self.route}


CHAINS = {1: ["l3fwd"], 2: ["firewall", "l3fwd"], 3: ["firewall", "l3fwd", "l2fwd"]}


def all_dataplanes():
    dps = [DP("redirect", "redirect", form="bare"),
           DP("minfwd", "minfwd", ["l3fwd"], "bare"),
           DP("fibfwd", "fibfwd", ["l3fwd"], "bare", "fib")]
    for route in ("lpm", "fib"):
        for form in ("tailcall", "fused"):
            for n, nfs in CHAINS.items():
                dps.append(DP(f"xnf-{n}nf-{form}-{route}", "xnf", nfs, form, route))
    dps.append(DP("linux", "linux", ["l3fwd"], "kernel", "kernel"))
    dps.append(DP("linux-nft", "nft", ["firewall", "l3fwd"], "kernel", "kernel"))
    dps.append(DP("worker-l3fwd", "worker", ["xsk", "l3fwd"], "afxdp", "lpm", "l3fwd"))
    dps.append(DP("worker-macswap", "worker", ["xsk", "macswap"], "afxdp", "", "macswap"))
    # The batching model's sweep (issue 18): the worker alone on its CPU,
    # the ingress's napi thread on the other, as the model assumes.
    dps.append(DP(MODEL_DP, "worker", ["xsk", "l3fwd"], "afxdp", "lpm", "l3fwd", napi="other",
                  fifo=("napi", "worker", "gen")))
    # The XDP path's: an l3fwd chain whose napi thread has the DUT's CPU,
    # fed by a generator on the other CPU, as a NIC's ring is fed
    # independently of the core that polls it; the sink's NAPI runs in the
    # napi thread's softirq right after each poll, where perf times it as
    # the poll's tail (a napi thread of its own on the DUT's CPU made each
    # of the DUT's wake-ups wait out its non-preemptible polls; docs/model.md).
    dps.append(DP(MODEL_XDP_DP, "xnf", ["l3fwd"], "tailcall", "lpm",
                  fifo=("napi", "gen")))
    dps.append(DP("xskfwd", "xskfwd", ["xsk"], "afxdp", ""))
    # The AF_XDP worker against DPDK's testpmd on its net_af_xdp driver, in
    # both placements of the veth's NAPI (issue 17).
    dps.append(DP("worker-macswap-napi-other", "worker", ["xsk", "macswap"], "afxdp", "",
                  "macswap", napi="other"))
    # The same worker in busy-poll mode (issue 38), in both placements.
    dps.append(DP("worker-macswap-bp", "worker", ["xsk", "macswap"], "afxdp", "", "macswap",
                  busy_poll=True))
    dps.append(DP("worker-macswap-bp-napi-other", "worker", ["xsk", "macswap"], "afxdp", "",
                  "macswap", napi="other", busy_poll=True))
    dps.append(DP("testpmd", "testpmd", ["macswap"], "afxdp-dpdk", ""))
    dps.append(DP("testpmd-napi-other", "testpmd", ["macswap"], "afxdp-dpdk", "", napi="other"))
    for n in CT_FLOWS:
        dps.append(DP(f"xnf-ct-{n}flows", "xnf", ["conntrack", "firewall", "l3fwd"], "tailcall",
                      "lpm", flows=n, ct=True))
        dps.append(DP(f"linux-nft-ct-{n}flows", "nft", ["conntrack", "firewall", "l3fwd"],
                      "kernel", "kernel", flows=n, ct=True))
    for n in CT_FLOWS:
        dps.append(DP(f"xnf-masq-{n}flows", "xnf", ["conntrack", "nat", "firewall", "l3fwd"],
                      "tailcall", "lpm", flows=n, ct=True, masq=True))
        dps.append(DP(f"linux-nft-masq-{n}flows", "nft", ["conntrack", "nat", "firewall",
                                                          "l3fwd"],
                      "kernel", "kernel", flows=n, ct=True, masq=True))
    return dps


# ---- firewall rule sets -------------------------------------------------------

TRAFFIC_SRC = ipaddress.ip_network("192.0.2.0/24")
TRAFFIC_DST = ipaddress.ip_network("198.51.100.0/24")


def parse_rule(line):
    """A `fw add ...` line of xnf-fwgen -> dict."""
    w = line.split()
    r = {"action": None}
    i = 2
    while i < len(w):
        k = w[i]
        if k in ("allow", "drop"):
            r["action"] = k
            i += 1
            continue
        r[k] = w[i + 1]
        i += 2
    return r


def may_match_traffic(r):
    """Whether the rule could match the benchmark's flows (IPv4 UDP from
    192.0.2.0/24 to 198.51.100.0/24, any ports: conservative)."""
    if "proto" in r and int(r["proto"]) != 17:
        return False
    for key, net in (("src", TRAFFIC_SRC), ("dst", TRAFFIC_DST)):
        if key in r:
            p = ipaddress.ip_network(r[key], strict=False)
            if p.version != 4 or not p.overlaps(net):
                return False
    return True


def rule_set(build, n, seed=1):
    """n generated rules that the benchmark's traffic matches none of (so
    that it is allowed by the default policy after every rule was
    considered: the whole list for nftables), prio 10, 20, ..."""
    want = min(10240, n + n // 4 + 64)
    while True:
        out = run([os.path.join(build, "xnf-fwgen"), want, seed], timeout=60)
        rules = [r for r in map(parse_rule, out.splitlines()) if not may_match_traffic(r)]
        if len(rules) >= n or want >= 10240:
            break
        want = min(10240, want * 2)
    if len(rules) < n:
        raise CmdError(f"xnf-fwgen gave only {len(rules)} usable rules of {n}")
    rules = rules[:n]
    for k, r in enumerate(rules):
        r["prio"] = str((k + 1) * 10)
    return rules


def xnf_rule_line(r):
    s = f"fw add prio {r['prio']} {r['action']}"
    for k in ("proto", "src", "dst", "sport", "dport"):
        if k in r:
            s += f" {k} {r[k]}"
    return s


def nft_port(lo_hi):
    lo, hi = lo_hi.split("-")
    return lo if lo == hi else f"{lo}-{hi}"


def nft_rule(r):
    """The same rule in nftables (inet family, first match wins in a base
    chain because accept and drop both end it)."""
    parts = []
    proto = int(r["proto"]) if "proto" in r else None
    for key, kw in (("src", "saddr"), ("dst", "daddr")):
        if key in r:
            fam = "ip6" if ipaddress.ip_network(r[key], strict=False).version == 6 else "ip"
            parts.append(f"{fam} {kw} {r[key]}")
    if proto is not None:
        parts.append(f"meta l4proto {proto}")
    for key in ("sport", "dport"):
        if key in r:
            if proto == 6:
                parts.append(f"tcp {key} {nft_port(r[key])}")
            elif proto == 17:
                parts.append(f"udp {key} {nft_port(r[key])}")
            else:
                # xnf: a port rule matches packets whose ports it can read
                parts.append(f"meta l4proto {{ tcp, udp, sctp }} th {key} {nft_port(r[key])}")
    parts.append("accept" if r["action"] == "allow" else "drop")
    return " ".join(parts)


def nft_ruleset(rules):
    body = "\n".join(f"\t\t{nft_rule(r)}" for r in rules)
    return ("table inet xnfbench {\n\tchain forward {\n"
            "\t\ttype filter hook forward priority filter; policy accept;\n"
            f"{body}\n\t}}\n}}\n")


def ct_policy_xnf(lan, wan):
    """The classic stateful policy in xnf's rules (docs/xnf.8)."""
    return ["fw flush", "fw default drop",
            "fw add prio 10 allow ct state established,related",
            "fw add prio 20 drop ct state invalid",
            f"fw add prio 30 allow iif {lan}",
            f"fw add prio 40 allow iif {wan} proto tcp dport 22 ct state new"]


def ct_policy_nft(lan, wan):
    """The same policy in nftables, as an operator writes it."""
    return ("table inet filter {\n\tchain forward {\n"
            "\t\ttype filter hook forward priority filter; policy drop;\n"
            "\t\tct state established,related accept\n"
            "\t\tct state invalid drop\n"
            f"\t\tiifname \"{lan}\" accept\n"
            f"\t\tiifname \"{wan}\" tcp dport 22 ct state new accept\n"
            "\t}\n}\n")


def masq_xnf(wan):
    """Masquerading out of wan in xnf's rules (docs/xnf.8)."""
    return ["nat flush", f"nat add masquerade oif {wan}"]


def masq_nft(wan):
    """The same in nftables, as an operator writes it; the counter
    counts the connections translated (only a connection's first packet
    passes the nat chain)."""
    return ("table ip nat {\n\tchain postrouting {\n"
            "\t\ttype nat hook postrouting priority srcnat; policy accept;\n"
            f"\t\toifname \"{wan}\" counter masquerade\n"
            "\t}\n}\n")


# ---- the harness ----------------------------------------------------------------

class Interrupted(Exception):
    pass


class GenError(CmdError):
    """The generator failed: a point without a measurement, not a loss."""


def on_signal(signum, frame):
    raise Interrupted(f"signal {signum}")


class Bench:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build)
        self.out = os.path.abspath(a.out)
        self.gen = os.path.abspath(a.gen) if a.gen else os.path.join(self.build, "xnf-gen")
        self.sink = os.path.join(self.build, "xnf-sink")
        self.xnf = os.path.join(self.build, "xnf")
        self.xskfwd = os.path.join(self.build, "xnf-xskfwd")
        self.testpmd = shutil.which(a.testpmd)
        self.perf = WakeTrace.find()
        self.rows = {k: [] for k in ("throughput", "zeroloss", "latency", "batch",
                                     "latency_chain", "rules")}
        self.model_points = {}    # by dataplane: the worker's, the XDP path's
        self.model_check = None
        self.model_machine = None  # steadiness.measure() after the model sweeps
        self.model_check_stats = None
        # `xnf -j stats` before the model sweep's first trial and after each
        # of its trials: the dimensioning check's input, one interval per
        # trial (model/dimension-snapshots.json)
        self.model_snapshots = []
        self.sessions = []
        self.skipped = []         # (dataplane, why)
        self.placements = {}
        self.tb = None
        self.worker = None
        self.worker_out = None
        self.worker_log = None    # testpmd's stdout (it prints all the time)
        self.testpmd_prefix = None
        self.vs_order = []        # --vs-testpmd: each round's dataplanes in order
        self.done_trials = 0
        self.total_trials = 0
        self.t0 = time.monotonic()
        self.est_total = 0.0
        self.trial_count = 0
        self.rules_cache = {}
        self.gen_errors = []
        self.load0 = loadavg()

    # ---- output -------------------------------------------------------------
    def say(self, msg):
        print(msg, flush=True)

    def progress(self, what):
        self.done_trials += 1
        el = time.monotonic() - self.t0
        frac = self.done_trials / max(1, self.total_trials)
        eta = el / frac - el if frac > 0 else 0
        self.say(f"[{self.done_trials:4d}/{self.total_trials}] {100 * frac:5.1f}% "
                 f"{el / 60:5.1f} min, ~{eta / 60:4.1f} min left: {what}")

    def raw(self, exp, dp, name, obj):
        d = os.path.join(self.out, "raw", exp, dp)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump(obj, f, indent=1, sort_keys=True)

    # ---- availability ----------------------------------------------------------
    def have_worker(self):
        if self.a.no_worker:
            return False
        p = subprocess.run([self.xnf, "worker", "help"], capture_output=True, text=True)
        return p.returncode == 0 and "nf" in (p.stdout + p.stderr)

    def select(self):
        dps = all_dataplanes()
        avail = []
        worker = self.have_worker()
        for dp in dps:
            if dp.kind == "worker" and not worker:
                self.skipped.append((dp.name, "`xnf worker` is not built"))
                continue
            if dp.kind == "xskfwd" and not os.access(self.xskfwd, os.X_OK):
                self.skipped.append((dp.name, f"{self.xskfwd} is not built"))
                continue
            if dp.kind == "testpmd" and not self.testpmd:
                self.skipped.append((dp.name, f"{self.a.testpmd} is not installed (Debian: "
                                     "apt-get install dpdk-dev librte-net-af-xdp23)"))
                continue
            avail.append(dp)
        if self.a.only:
            pats = self.a.only.split(",")
            avail = [d for d in avail if any(fnmatch.fnmatch(d.name, p) or d.kind == p
                                            for p in pats)]
        return avail

    # ---- dataplane setup -----------------------------------------------------
    def routes_xnf(self, tb):
        a = tb.addr
        lines = [f"route add 198.51.100.0/24 via {a['sink4']}",
                 f"route add 192.0.2.0/24 via {a['src4']}"]
        lines += [f"route add {p} via {a['sink4']}" for p in EXTRA_ROUTES]
        lines += [f"route add {a['d04']}/32 local", f"route add {a['d14']}/32 local"]
        tb.xnf_batch(lines)

    def routes_linux(self, tb):
        for p in EXTRA_ROUTES:
            run(["ip", "route", "add", p, "via", tb.addr["sink4"]], ns=tb.dut)

    def rules(self, n):
        if n not in self.rules_cache:
            self.rules_cache[n] = rule_set(self.build, n)
        return self.rules_cache[n]

    def load_fw_xnf(self, tb, n):
        lines = ["fw flush", "fw default allow"] + [xnf_rule_line(r) for r in self.rules(n)]
        tb.xnf_batch(lines, timeout=300)

    def load_fw_nft(self, tb, n):
        path = os.path.join(tb.tmp, f"nft-{n}.conf")
        with open(path, "w") as f:
            f.write(nft_ruleset(self.rules(n)))
        run(["sh", "-c", "nft delete table inet xnfbench 2>/dev/null; true"], ns=tb.dut)
        run(["nft", "-f", path], ns=tb.dut, timeout=300)
        got = run(["nft", "-a", "list", "chain", "inet", "xnfbench", "forward"], ns=tb.dut)
        count = sum(1 for ln in got.splitlines() if "# handle" in ln and
                    ("accept" in ln or "drop" in ln) and "policy" not in ln)
        if count != n:
            raise CmdError(f"nft holds {count} rules, expected {n}")

    def setup_dp(self, tb, dp, nrules):
        """Builds dp on the test bed; returns the placement it recorded."""
        cpu = self.a.dut_cpu
        # The ingress's napi thread: next to the forwarding, or on the other CPU.
        napi_cpu = cpu if dp.napi == "same" else self.a.gen_cpu
        place = {"gen_cpu": self.a.gen_cpu, "dut_cpu": cpu, "napi_cpu": napi_cpu}
        if dp.kind in ("redirect", "minfwd", "fibfwd"):
            prog = os.path.join(tb.bpffs, dp.kind)
            maps = os.path.join(tb.bpffs, dp.kind + "_maps")
            # In the DUT's namespace: a devmap resolves the ifindex in the
            # namespace of whoever writes it (in the root one it would name
            # a host device).
            run(["bpftool", "prog", "load", os.path.join(self.build, "bpf", dp.kind + ".bpf.o"),
                 prog, "type", "xdp", "pinmaps", maps], ns=tb.dut)
            idx = tb.ifindex(tb.dut, tb.e).to_bytes(4, "little")
            if dp.kind in ("redirect", "minfwd"):
                run(["bpftool", "map", "update", "pinned", os.path.join(maps, "tx_port"),
                     "key", 0, 0, 0, 0, "value", *idx], ns=tb.dut)
            if dp.kind == "minfwd":
                # struct minfwd_macs: the next hop's MAC (the sink's), the egress's
                macs = [f"0x{b}" for m in (tb.mac["k0"], tb.mac["d1"]) for b in m.split(":")]
                run(["bpftool", "map", "update", "pinned", os.path.join(maps, "macs"),
                     "key", 0, 0, 0, 0, "value", *macs], ns=tb.dut)
            elif dp.kind == "fibfwd":
                # bpf_fib_lookup() in the kernel's tables: the same 10 routes as Linux
                self.routes_linux(tb)
                run(["bpftool", "map", "update", "pinned", os.path.join(maps, "tx_ports"),
                     "key", *idx, "value", *idx], ns=tb.dut)
            run(["ip", "-n", tb.dut, "link", "set", "dev", tb.i, "xdpdrv", "pinned", prog])
            place["napi"] = tb.pin_napi(tb.i, cpu)
            place["how"] = "threaded NAPI and napi thread pinned by the harness"
        elif dp.kind == "xnf":
            extra = (["fused"] if dp.form == "fused" else []) + (["fib"] if dp.route == "fib" else [])
            chain = ",".join(dp.nfs)
            tb.xnf_cmd("attach", tb.i, "chain", chain, *extra, "cores", cpu)
            tb.xnf_cmd("attach", tb.e, "chain", chain, *extra)
            if dp.route == "fib":
                # fib mode reads the kernel's tables, and `xnf route add`
                # refuses routes it would never read
                self.routes_linux(tb)
            else:
                self.routes_xnf(tb)
            if dp.ct:
                tb.xnf_batch(ct_policy_xnf(tb.i, tb.e) +
                             (masq_xnf(tb.e) if dp.masq else []))
            elif dp.has_fw:
                self.load_fw_xnf(tb, nrules)
            if "l2fwd" in dp.nfs:
                tb.xnf_cmd("fdb", "add", tb.mac["k0"], "dev", tb.e)
            place["napi"] = tb.napi_threads(tb.i)
            if dp.fifo:
                place["fifo"] = self.set_fifo(tb, dp, place["napi"])
            place["how"] = f"xnf attach {tb.i} ... cores {cpu}"
        elif dp.kind in ("linux", "nft"):
            self.routes_linux(tb)
            if dp.ct:
                path = os.path.join(tb.tmp, "nft-ct.conf")
                with open(path, "w") as f:
                    f.write(ct_policy_nft(tb.i, tb.e) + (masq_nft(tb.e) if dp.masq else ""))
                run(["nft", "-f", path], ns=tb.dut)
            elif dp.kind == "nft":
                self.load_fw_nft(tb, nrules)
            place["napi"] = tb.pin_napi(tb.i, cpu)
            place["how"] = "GRO on (veth NAPI without XDP), threaded NAPI pinned by the harness"
        elif dp.kind == "worker":
            tb.xnf_cmd("attach", tb.i, "chain", "xsk", "cores", napi_cpu)
            if dp.worker_nf == "l3fwd":
                self.routes_xnf(tb)
            # Without `cores` the worker takes the CPU `attach ... cores` recorded.
            args = ["-j", "worker", tb.i, "nf", dp.worker_nf, "batch", WORKER_BATCH, "ring",
                    WORKER_RING, "egress", tb.e, "duration", self.a.session_limit]
            if napi_cpu != cpu:
                args += ["cores", cpu]
            if dp.busy_poll:
                # The defaults of docs/workers.md: usecs 20, budget the
                # batch, defer 2, flush-timeout 200000.
                args += ["busy-poll"]
            self.worker = tb.bg(["timeout", self.a.session_limit + 30, self.xnf, *args],
                                tb.dut, env=tb.xnf_env())
            self.wait_worker(tb)
            place["napi"] = tb.napi_threads(tb.i)
            place["worker_cpu"] = cpu
            if dp.busy_poll:
                place["busy_poll"] = self.busy_poll_settings(tb)
            if dp.fifo:
                place["fifo"] = self.set_fifo(tb, dp, place["napi"])
            place["how"] = (f"xnf attach {tb.i} chain xsk cores {napi_cpu}; "
                            f"xnf {' '.join(map(str, args))}")
        elif dp.kind == "xskfwd":
            args = [tb.i, "egress", tb.e, "queue", 0, "batch", WORKER_BATCH, "cores", cpu,
                    "duration", self.a.session_limit, "-j"]
            self.worker = tb.bg(["timeout", self.a.session_limit + 30, self.xskfwd, *args],
                                tb.dut)
            time.sleep(1.0)
            if self.worker.poll() is not None:
                out, err = tb.stop(self.worker)
                self.worker = None
                raise CmdError(f"xnf-xskfwd exited: {err.strip()}")
            place["napi"] = tb.pin_napi(tb.i, cpu)
            place["worker_cpu"] = cpu
            place["how"] = f"xnf-xskfwd {' '.join(map(str, args))}; napi pinned by the harness"
        elif dp.kind == "testpmd":
            args = self.start_testpmd(tb, cpu)
            # testpmd attached its XDP program: the napi threads are new.
            place["napi"] = tb.pin_napi(tb.i, napi_cpu)
            place["worker_cpu"] = cpu
            place["how"] = (f"{self.testpmd} {' '.join(args)}; napi pinned by the harness")
        place["threaded"] = tb.threaded(tb.i)
        place["sink"] = ("XDP sink on the sink's veth: runs in the softirq of the CPU that "
                         "transmitted into it, i.e. the DUT CPU (for an XDP DUT: in its "
                         "napi thread, right after each poll)")
        if not place.get("napi"):
            raise CmdError(f"no napi thread found for {tb.i}: placement not applied")
        bad = [t for t in place["napi"] if t["cpus"] != [napi_cpu]]
        if bad:
            raise CmdError(f"napi thread not on CPU {napi_cpu}: {bad}")
        return place

    def set_fifo(self, tb, dp, napi):
        """SCHED_FIFO for the threads dp.fifo names; returns what was set."""
        tids = []
        if "napi" in dp.fifo:
            tids += [("napi", t["pid"]) for t in napi]
        if "worker" in dp.fifo:
            w = self.workers(tb) or []
            if not w or not w[0].get("tid"):
                raise CmdError("no worker thread id in xnf -j stats: cannot set SCHED_FIFO")
            tids.append(("worker", w[0]["tid"]))
        for what, tid in tids:
            run(["chrt", "-f", "-p", FIFO_PRIO, tid])
        return [{"thread": what, "tid": tid, "policy": "SCHED_FIFO", "priority": FIFO_PRIO}
                for what, tid in tids]

    def start_testpmd(self, tb, cpu):
        """DPDK's testpmd on the DUT's two veths, one net_af_xdp port each,
        macswap forwarding (the worker's NF) with the worker's burst and
        ring sizes, every lcore on the worker's CPU, no hugepages. Returns
        its arguments."""
        ports = []
        for n, dev in enumerate((tb.i, tb.e)):
            ports += ["--vdev", f"net_af_xdp{n},iface={dev},start_queue=0,queue_count=1"]
        # Lcore 0 (the main one, which wakes once a second for the stats)
        # and lcore 1 (forwarding) both on the worker's CPU. --no-shconf
        # and a prefix of this test bed: no shared files, no collision with
        # another instance (--in-memory does not go with --no-huge); the
        # empty runtime directory is removed when it stops.
        self.testpmd_prefix = os.path.basename(tb.tmp)
        args = ["--no-huge", "-m", "256", "--no-shconf", "--file-prefix", self.testpmd_prefix,
                "--no-pci",
                "--lcores", f"0@{cpu},1@{cpu}", *ports, "--",
                "--nb-cores=1", "--forward-mode=macswap", f"--burst={WORKER_BATCH}",
                f"--rxd={WORKER_RING}", f"--txd={WORKER_RING}",
                f"--total-num-mbufs={TESTPMD_MBUFS}", "--stats-period=1"]
        # It prints its statistics every second: to a file, not a pipe
        # nobody reads. Non-interactive, it forwards until SIGINT/SIGTERM.
        self.worker_log = os.path.join(tb.tmp, "testpmd.out")
        with open(self.worker_log, "w") as log:
            self.worker = tb.bg(["timeout", self.a.session_limit + 30, self.testpmd, *args],
                                tb.dut, stdout=log)
        t_end = time.monotonic() + 30
        while True:
            with open(self.worker_log, errors="replace") as f:
                if "Port statistics" in f.read():
                    return args
            if self.worker.poll() is not None or time.monotonic() > t_end:
                out, err = tb.stop(self.worker)
                self.worker = None
                self.testpmd_cleanup()
                last = [ln for ln in err.splitlines() if ln.strip()][-3:]
                raise CmdError(f"dpdk-testpmd did not start forwarding: {' / '.join(last)}")
            time.sleep(0.1)

    def busy_poll_settings(self, tb):
        """What the busy-poll worker set, as xnf reads it back: the socket
        options (getsockopt) and the device's NAPI settings; a worker
        without them did not turn busy polling on."""
        # A worker shows up in xnf stats while "starting", before its
        # sockets have their options.
        for _ in range(100):
            w = self.workers(tb) or []
            bp = w[0].get("busy_poll_settings") if w else None
            if bp and bp.get("prefer"):
                return bp
            time.sleep(0.05)
        if not bp or not bp.get("prefer"):
            raise CmdError(f"the worker on {tb.i} shows no busy-poll settings in xnf -j stats: "
                           f"{json.dumps(w[:1])[:300]}")
        return bp

    def wait_worker(self, tb):
        for _ in range(100):
            if self.worker.poll() is not None:
                out, err = tb.stop(self.worker)
                self.worker = None
                raise CmdError(f"xnf worker exited: {err.strip()}")
            w = self.workers(tb)
            if w and all(x.get("state") in ("running", "run", "up") or "rx_packets" in x
                         for x in w):
                return
            time.sleep(0.05)
        raise CmdError("xnf worker did not show up in xnf stats")

    def testpmd_cleanup(self):
        if self.testpmd_prefix:
            shutil.rmtree(os.path.join("/var/run/dpdk", self.testpmd_prefix), ignore_errors=True)
            self.testpmd_prefix = None

    def stop_worker(self, tb):
        if not self.worker:
            return None
        out, err = tb.stop(self.worker, sig=signal.SIGINT, timeout=15)
        self.worker = None
        if self.worker_log:
            with open(self.worker_log, errors="replace") as f:
                out = f.read()
            self.worker_log = None
            self.testpmd_cleanup()
            return {"testpmd": testpmd_totals(out), "stderr": err.strip()[-2000:]}
        try:
            return json.loads(out) if out.strip() else {"stderr": err.strip()}
        except json.JSONDecodeError:
            return {"stdout": out.strip(), "stderr": err.strip()}

    # ---- stats -------------------------------------------------------------------
    def xnf_stats(self, tb):
        try:
            return json.loads(tb.xnf_cmd("-j", "stats", tb.i))
        except (CmdError, json.JSONDecodeError):
            return None

    def workers(self, tb):
        st = self.xnf_stats(tb)
        return find_key(st, "workers") if st else None

    # ---- one trial ---------------------------------------------------------------
    def trial(self, tb, dp, size, rate, duration, mix=None):
        """Sends for duration s at rate pps (None: as fast as it can) with
        frames of size, the flows of mix (parse_mixes(); None: dp.flows or
        --flows in turn); returns the row and the raw record."""
        ready = os.path.join(tb.tmp, f"ready-{time.monotonic_ns()}")
        sink = tb.bg(["timeout", duration + 60, "taskset", "-c", self.a.gen_cpu, self.sink,
                      tb.k, "duration", duration + 40, "ready", ready, "-j"], tb.sink)
        t_end = time.monotonic() + 10
        while not os.path.exists(ready):
            if sink.poll() is not None or time.monotonic() > t_end:
                out, err = tb.stop(sink)
                raise CmdError(f"xnf-sink did not attach: {err.strip()}")
            time.sleep(0.01)
        st0 = self.xnf_stats(tb) if dp.kind in ("xnf", "worker") else None
        bp0 = busy_poll_rx(tb) if dp.kind in ("worker", "testpmd") else None
        # "gen" in dp.fifo: the generator is not time-sliced with the
        # machine's other work on its CPU (its frames come as the rate says,
        # not in runs between other tasks' slices).
        fifo = ["chrt", "-f", GEN_FIFO_PRIO] if "gen" in dp.fifo else []
        cmd = fifo + ["taskset", "-c", self.a.gen_cpu, self.gen, tb.s, "duration", duration,
               "size", size, "flows", mix["flows"] if mix else dp.flows or self.a.flows,
               *(["zipf", mix["zipf"]] if mix and mix["zipf"] else []),
               "ipv4", "udp", "src", tb.addr["src4"],
               "dst", tb.addr["sink4"], "smac", tb.mac["s0"], "dmac", tb.mac["d0"],
               "sport", UDP_SPORT, "dport", UDP_DPORT, "cpu", self.a.gen_cpu, "-j"]
        if rate is not None:
            cmd[cmd.index("-j"):cmd.index("-j")] = ["rate", int(rate)]
        cpu = CpuSampler(lambda: self.dut_cpu_ns(tb, dp), self.a.gen_cpu)
        try:
            gen_out = run(["timeout", duration + 30] + cmd, ns=tb.src, timeout=duration + 40,
                          check=False, stderr=True)
            gen = json.loads(gen_out[0]) if gen_out[1] == 0 else {"error": gen_out[2].strip()}
        finally:
            time.sleep(0.1)   # what is still in flight reaches the sink
            cpu.stop()
            out, err = tb.stop(sink, sig=signal.SIGINT)
        try:
            snk = json.loads(out)
        except json.JSONDecodeError:
            raise CmdError(f"xnf-sink printed no JSON: {err.strip()[:300]}")
        st1 = self.xnf_stats(tb) if st0 is not None else None
        if "error" in gen:
            raise GenError(gen["error"])
        sent = int(gen.get("sent", 0))
        received = int(snk.get("packets", 0))     # frames with the generator's probe
        dur = float(gen.get("duration_s") or duration)
        rx_pps = received / dur if dur > 0 else 0.0
        gpps = float(gen.get("pps") or 0)
        # Frame bits with the FCS (the generator's sizes); + preamble and gap on L1.
        if gen.get("mean_size"):
            bits = float(gen["mean_size"]) * 8
            bits_l1 = bits + 20 * 8
        else:
            bits = float(gen.get("gbps") or 0) * 1e9 / gpps if gpps else 0.0
            bits_l1 = float(gen.get("gbps_l1") or 0) * 1e9 / gpps if gpps else 0.0
        lat = snk.get("latency_ns") or {}
        row = dict(dp.columns())
        row.update({
            "size": size, "frame_bits": round(bits, 1),
            "offered_pps": "" if rate is None else int(rate),
            "duration_s": round(dur, 4), "sent": sent, "received": received,
            "tx_pps": round(gpps, 1), "rx_pps": round(rx_pps, 1),
            "rx_mpps": round(rx_pps / 1e6, 6), "rx_gbps": round(rx_pps * bits / 1e9, 9),
            "rx_gbps_l1": round(rx_pps * bits_l1 / 1e9, 9),
            "loss": round(max(0, sent - received) / sent, 8) if sent else 1.0,
            "reordered": snk.get("reordered", ""), "duplicates": snk.get("duplicates", ""),
            "no_probe": snk.get("no_probe", ""),
            # other work on the machine during the trial (1-minute load average)
            "loadavg": loadavg(),
        })
        for k in ("min", "mean", "p50", "p90", "p99", "p999", "max"):
            row[f"lat_{k}_ns"] = lat.get(k, "")
        rec = {"gen": gen, "gen_cmd": " ".join(map(str, cmd)), "sink": snk, "row": row}
        if st0 is not None and st1 is not None:
            rec["xnf_delta"] = xnf_delta(st0, st1, tb.i)
            w0, w1 = find_key(st0, "workers"), find_key(st1, "workers")
            if w0 and w1:
                rec["worker_delta"] = [delta(a, b) for a, b in zip(w0, w1)]
                for w in rec["worker_delta"]:
                    busy, idle = w.get("busy_ns"), w.get("idle_ns")
                    if isinstance(busy, (int, float)) and isinstance(idle, (int, float)):
                        w["utilization"] = round(busy / (busy + idle), 4) if busy + idle else 0.0
        row["batch_mean"], row["batch_source"] = batch_mean(rec)
        t0 = gen.get("t_start_ns")
        used = cpu.over(t0, t0 + dur * 1e9) if t0 and dur > 0 else None
        if used:
            # CPU time the forwarding process and the ingress's napi threads
            # got while the generator sent (schedstat): on a shared VM, how
            # much of a rate is the dataplane's efficiency and how much its
            # share. Over the sending alone: a forwarder that never sleeps
            # (testpmd, busy-poll) would otherwise be charged the setup and
            # teardown around it too.
            fwd, napi = used
            row["fwd_cpu_ms"], row["napi_cpu_ms"] = round(fwd / 1e6, 2), round(napi / 1e6, 2)
            row["pkts_per_cpu_ms"] = round(received / ((fwd + napi) / 1e6), 1) if fwd + napi else ""
            row["cpu_ns_per_pkt"] = round((fwd + napi) / received, 1) if received else ""
        bp1 = busy_poll_rx(tb) if bp0 is not None else None
        if bp0 is not None and bp1 is not None:
            # Frames a busy-polling recvfrom()/sendto() took from the
            # ingress's NAPI itself (the rest came through its napi thread).
            row["busy_poll_rx"] = bp1 - bp0
        if dp.ct:
            row["ct_entries"] = self.ct_entries(tb, dp)
        if dp.masq:
            row["nat_translated"] = self.nat_translated(tb, dp)
        self.trial_count += 1
        return row, rec

    def ct_entries(self, tb, dp):
        """Connections the DUT tracks now: xnf's table (xnf ct stats), or
        the DUT namespace's nf_conntrack_count."""
        try:
            if dp.kind == "xnf":
                return json.loads(tb.xnf_cmd("-j", "ct", "stats"))["entries"]
            return int(run(["cat", "/proc/sys/net/netfilter/nf_conntrack_count"],
                           ns=tb.dut).strip())
        except (CmdError, ValueError, KeyError, json.JSONDecodeError):
            return ""

    def nat_translated(self, tb, dp):
        """Connections translated since the dataplane was set up: xnf's
        nat_created (xnf ct stats), or the packets of the masquerade rule's
        counter (a connection's first packet alone passes nft's nat
        chain)."""
        try:
            if dp.kind == "xnf":
                v = find_key(json.loads(tb.xnf_cmd("-j", "ct", "stats")), "nat_created")
                return v if isinstance(v, int) else ""
            got = json.loads(run(["nft", "-j", "list", "chain", "ip", "nat", "postrouting"],
                                 ns=tb.dut))
            return next(r["counter"]["packets"] for x in got["nftables"]
                        for r in x.get("rule", {}).get("expr", []) if "counter" in r)
        except (CmdError, ValueError, KeyError, StopIteration, json.JSONDecodeError):
            return ""

    def masq_check(self, tb, dp):
        """The frames of a masquerading dataplane reach the sink with the
        DUT's egress address as their source and the generator's port: a
        capture on the sink's device (its XDP program not attached, so the
        frames reach the kernel) while the generator sends at a low rate."""
        cap = tb.bg(["timeout", 10, "tcpdump", "-i", tb.k, "-nn", "-l", "-c", MASQ_CHECK_FRAMES,
                     "udp", "and", "dst", "port", UDP_DPORT], tb.sink)
        time.sleep(1.0)     # tcpdump is listening (it says so on stderr, buffered)
        run(["timeout", 10, "taskset", "-c", self.a.gen_cpu, self.gen, tb.s, "duration", 1,
             "size", 64, "flows", dp.flows or self.a.flows, "ipv4", "udp",
             "src", tb.addr["src4"], "dst", tb.addr["sink4"], "smac", tb.mac["s0"],
             "dmac", tb.mac["d0"], "sport", UDP_SPORT, "dport", UDP_DPORT,
             "rate", 200, "-j"], ns=tb.src, timeout=20)
        out, err = tb.stop(cap, sig=signal.SIGINT)
        # "TIME IP SRC.SPORT > DST.DPORT: UDP, length N"
        srcs = [ln.split()[2].rsplit(".", 1)[0] for ln in out.splitlines()
                if len(ln.split()) > 4 and ln.split()[1] == "IP"]
        want = tb.addr["d14"]
        if len(srcs) < MASQ_CHECK_FRAMES // 2 or set(srcs) != {want}:
            raise CmdError(f"{dp.name} does not masquerade: the sink captured {len(srcs)} "
                           f"frames, from {sorted(set(srcs))[:4]}, expected all from {want}"
                           + ("" if srcs else f" ({err.strip()[-200:]})"))
        return len(srcs)

    def dut_cpu_ns(self, tb, dp):
        """(ns on CPU of every thread of the AF_XDP forwarder's processes,
        ns of the ingress's napi threads), for every dataplane: the XDP
        and kernel ones forward in the ingress's napi thread (threaded
        NAPI, pinned after attach; the sink's XDP runs after it, in its
        softirq: the same for all), so their forwarder share is 0. None
        for an AF_XDP dataplane whose forwarder is not running."""
        if dp.kind not in ("worker", "xskfwd", "testpmd"):
            return 0, sum((schedstat(t["pid"]) or {}).get("run_ns", 0)
                          for t in tb.napi_threads(tb.i))
        if not self.worker:
            return None
        pids, todo = [], [self.worker.pid]
        while todo:     # ip netns exec -> timeout -> the forwarder
            pid = todo.pop()
            pids.append(pid)
            try:
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{tid}/children") as f:
                        todo += [int(c) for c in f.read().split()]
            except OSError:
                pass
        def ns(pid, tid):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    return int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                return 0
        fwd = 0
        for pid in pids:
            try:
                fwd += sum(ns(pid, tid) for tid in os.listdir(f"/proc/{pid}/task"))
            except OSError:
                pass
        napi = sum(ns(t["pid"], t["pid"]) for t in tb.napi_threads(tb.i))
        return fwd, napi

    def trial_retry(self, tb, dp, size, rate, duration, what, mix=None):
        """trial(), once more if the generator failed; GenError after two
        failures (recorded in meta.json and the report)."""
        for attempt in (1, 2):
            try:
                return self.trial(tb, dp, size, rate, duration, mix)
            except GenError as ex:
                self.gen_errors.append({"dataplane": dp.name, "what": what, "size": size,
                                        "rate": rate, "attempt": attempt, "error": str(ex)})
                self.say(f"  generator failed ({what}, attempt {attempt}): {ex}")
                if attempt == 2:
                    raise
                time.sleep(0.5)

    def warm(self, tb, dp):
        """Before measuring a stateful dataplane with many flows: one
        trial at maximum load, not recorded, so that the trials measure
        the table holding every flow rather than its filling."""
        row, rec = self.trial_retry(tb, dp, "64", None, self.a.ct_warm, "warm")
        self.say(f"  {dp.name}: warm-up {row['sent']} frames, {row.get('ct_entries')} "
                 "connections tracked")
        if row["sent"] < (dp.flows or self.a.flows):
            raise CmdError(f"the warm-up sent {row['sent']} frames, fewer than the "
                           f"{dp.flows} flows: raise --ct-warm")

    def smoke(self, tb, dp):
        """A short trial before measuring: does this dataplane forward
        (and masquerade)?"""
        if dp.masq:
            n = self.masq_check(tb, dp)
            self.say(f"  {dp.name}: {n} frames captured at the sink, their source "
                     f"{tb.addr['d14']}")
        row, rec = self.trial_retry(tb, dp, "64", 1000, 0.3, "smoke")
        if row["received"] < 0.5 * max(1, row["sent"]):
            raise CmdError(f"{dp.name} forwards {row['received']} of {row['sent']} frames "
                           f"(xnf: {json.dumps(rec.get('xnf_delta', {}).get('drop_reasons'))})")

    # ---- the plan -------------------------------------------------------------
    def plan(self, dps):
        a = self.a
        names = {d.name: d for d in dps}
        # The model's dataplanes are for the model experiment, the stateful
        # ones for --vs-nft-ct and --vs-nft-masq, the busy-poll workers for
        # --vs-testpmd: in another only when a pattern names them.
        pick = lambda pats: [names[n] for n in names if any(fnmatch.fnmatch(n, p) for p in pats)
                             and (n not in MODEL_DPS + tuple(VS_NFT_CT + VS_NFT_MASQ)
                                  + VS_TESTPMD_BP or n in pats)]
        exps = set(a.experiments.split(","))
        sessions = []
        if "throughput" in exps:
            for rep in range(a.repeat):
                for dp in (pick(a.tput_dps) if a.tput_dps else pick(["*"])):
                    sessions.append({"dp": dp, "rules": FW_RULES, "tasks": [
                        ("throughput", s, "max", rep) for s in a.sizes]})
        per_dp = {}
        if "zeroloss" in exps:
            for dp in pick(a.zl_dps):
                for s in (a.sizes if any(fnmatch.fnmatch(dp.name, p) for p in a.zl_all_sizes_dps)
                          else a.sizes[:1]):
                    for rep in range(a.zl_repeat):
                        per_dp.setdefault(dp.name, []).append(("zeroloss", s, "max", rep))
        if "latency" in exps:
            for dp in pick(a.lat_dps):
                for rate in a.rates:
                    for rep in range(a.repeat):
                        per_dp.setdefault(dp.name, []).append(("latency", LAT_SIZE, rate, rep))
        if "chain" in exps:
            for dp in pick(a.chain_dps):
                for rep in range(a.repeat):
                    per_dp.setdefault(dp.name, []).append(("latency_chain", LAT_SIZE, CHAIN_RATE, rep))
        for name, tasks in per_dp.items():
            sessions.append({"dp": names[name], "rules": FW_RULES, "tasks": tasks})
        if "rules" in exps:
            for dp in pick(a.rules_dps):
                for n in a.rule_counts:
                    sessions.append({"dp": dp, "rules": n, "tasks": [
                        ("rules", "64", "max", rep) for rep in range(a.repeat)]})
        if "model" in exps:
            for n in MODEL_DPS:
                if n in names:
                    sessions.append({"dp": names[n], "rules": FW_RULES,
                                     "tasks": [("model", "64", f, 0) for f in a.model_fracs]})
        return sessions

    def task_cost(self, t):
        exp, size, rate, rep = t
        d = self.duration_for(exp, rate)
        trials = self.a.zl_steps if exp == "zeroloss" else 1
        if exp == "model" and t == ("model", "64", self.a.model_fracs[0], 0):
            # the saturation point first, the worker's dimension check last
            # (1-3 trials), the machine's steadiness after the sweeps
            trials += 2
            return trials, trials * (d + TRIAL_OVH) + self.a.model_steady_s
        return trials, trials * (d + TRIAL_OVH)

    def duration_for(self, exp, rate):
        a = self.a
        if exp == "zeroloss":
            return a.zl_duration
        if exp == "model":
            return a.model_duration
        r = rate_pps(rate) if exp in ("latency", "latency_chain") else None
        if r:
            return max(a.duration, min(a.lat_max_duration, a.lat_packets / r))
        return a.duration

    # ---- experiments -------------------------------------------------------------
    def run_session(self, sess):
        dp, tasks = sess["dp"], sess["tasks"]
        tb = Testbed(self.build, "bench", name="xnfb", tmp_name="xnf-bench",
                     verbose=self.a.verbose)
        self.tb = tb
        done = []
        try:
            tb.setup()
            place = self.setup_dp(tb, dp, sess["rules"])
            self.placements.setdefault(dp.name, place)
            self.smoke(tb, dp)
            if dp.ct and (dp.flows or self.a.flows) > 1:
                self.warm(tb, dp)
            model_sat = None
            for t in tasks:
                exp, size, rate, rep = t
                if exp == "zeroloss":
                    self.zero_loss(tb, dp, size, rep)
                elif exp == "model":
                    if model_sat is None:
                        self.model_snapshot(tb, dp)
                        model_sat = self.model_saturation(tb, dp)
                        self.model_snapshot(tb, dp)
                    self.model_point(tb, dp, rate, model_sat)
                    self.model_snapshot(tb, dp)
                else:
                    self.point(tb, dp, exp, size, rate, rep, sess["rules"])
                done.append(t)
            if model_sat is not None and dp.name == MODEL_DP:
                self.model_dimension_check(tb, dp)
        except CmdError as ex:
            why = str(ex).splitlines()[0][:400]
            self.say(f"  {dp.name}: skipped: {why}")
            self.skipped.append((dp.name, why))
            self.done_trials += sum(self.task_cost(t)[0] for t in tasks[len(done):])
        finally:
            w = self.stop_worker(tb)
            if w is not None:
                self.raw("worker_exit", dp.name, f"session-{len(self.sessions)}", w)
            tb.teardown()
            self.tb = None
            self.sessions.append({"dataplane": dp.name, "rules": sess["rules"],
                                  "tasks": len(tasks)})

    def point(self, tb, dp, exp, size, rate, rep, nrules):
        try:
            row, rec = self.trial_retry(tb, dp, size, rate_pps(rate), self.duration_for(exp, rate),
                                        f"{exp} {size} {rate} #{rep}")
        except GenError:
            self.progress(f"{exp} {dp.name} {size}B {rate} #{rep}: no measurement (generator failed)")
            return
        row.update({"experiment": exp, "rate": rate, "rep": rep})
        if exp == "rules":
            row["rules"] = nrules
        self.rows[exp].append(row)
        self.raw(exp, dp.name, f"{size}-{rate}-{nrules if exp == 'rules' else ''}r{rep}", rec)
        if exp in ("latency", "latency_chain"):
            for src, hist in batch_hists(rec):
                for b, n in hist:
                    if n:
                        self.rows["batch"].append({
                            **dp.columns(), "rate": rate, "offered_pps": row["offered_pps"],
                            "rep": rep, "source": src, "batch": b, "polls": n,
                            "loss": row["loss"], "experiment": exp})
        lat = f", p50 {row['lat_p50_ns'] / 1e3:.1f} us" if row["lat_p50_ns"] != "" else ""
        self.progress(f"{exp} {dp.name} {size}B {rate} #{rep}: {row['rx_mpps']:.3f} Mpps "
                      f"({row['rx_gbps']:.2f} Gb/s), loss {100 * row['loss']:.2f}%{lat}"
                      + (f", {nrules} rules" if exp == "rules" else ""))

    def zero_loss(self, tb, dp, size, rep):
        """The highest offered rate with loss <= tolerance (RFC 2544 style
        with a bounded binary search): the first probe is the median
        throughput at maximum load for this size (or one max-load trial),
        then bisection of [0, max offered] for the remaining steps."""
        a = self.a
        d = a.zl_duration
        ref = [r for r in self.rows["throughput"] if r["dataplane"] == dp.name and r["size"] == size]
        steps = []
        if ref:
            tx_max = statistics.median(r["tx_pps"] for r in ref)
            guess = statistics.median(r["rx_pps"] for r in ref)
        else:
            row, rec = self.trial_retry(tb, dp, size, None, d, f"zero-loss {size} max")
            steps.append({"rate": None, "row": row})
            tx_max, guess = row["tx_pps"], row["rx_pps"]
            self.done_trials += 1
        lo, hi = 0.0, float(tx_max)
        best = None
        probe = min(guess, hi)
        while len(steps) < a.zl_steps:
            try:
                row, _ = self.trial_retry(tb, dp, size, max(1, int(probe)), d,
                                          f"zero-loss {size} #{rep}")
                ok = row["sent"] > 0 and row["sent"] - row["received"] <= a.zl_tolerance * row["sent"]
            except GenError as ex:
                # Not known to pass: the search goes on below this rate.
                row, ok = {"loss": float("nan"), "error": str(ex)}, False
            short = bool(row.get("tx_pps")) and row["tx_pps"] < 0.9 * probe
            steps.append({"rate": int(probe), "ok": ok, "row": row, "gen_short": short})
            self.progress(f"zero-loss {dp.name} {size}B #{rep} step {len(steps)}: "
                          f"{probe / 1e6:.3f} Mpps offered, loss {100 * row['loss']:.3f}% "
                          f"-> {'pass' if ok else 'fail'}")
            if ok:
                lo = probe
                if best is None or probe > best[0]:
                    best = (probe, row)
            else:
                hi = probe
            probe = (lo + hi) / 2
        out = dict(dp.columns())
        out.update({"experiment": "zeroloss", "size": size, "rep": rep, "steps": len(steps),
                    "tolerance": a.zl_tolerance, "search_hi_pps": round(tx_max, 1),
                    "rate_pps": int(best[0]) if best else 0,
                    "rx_pps": best[1]["rx_pps"] if best else 0.0,
                    "rx_mpps": best[1]["rx_mpps"] if best else 0.0,
                    "rx_gbps": best[1]["rx_gbps"] if best else 0.0,
                    "loss": best[1]["loss"] if best else "",
                    "resolution_pps": round(hi - lo, 1)})
        # The generator could not offer the rate (paced sending has a cost per
        # call): the result is bounded by the generator there, not the DUT.
        out["gen_short_pps"] = min((st["rate"] for st in steps if st.get("gen_short")),
                                   default="")
        strict = [st for st in steps if st.get("rate") and st["row"].get("sent")
                  and st["row"]["received"] >= st["row"]["sent"]]
        best0 = max(strict, key=lambda st: st["rate"]) if strict else None
        out["strict_rate_pps"] = best0["rate"] if best0 else 0
        out["strict_rx_pps"] = best0["row"]["rx_pps"] if best0 else 0.0
        self.rows["zeroloss"].append(out)
        self.raw("zeroloss", dp.name, f"{size}-r{rep}", {"result": out, "steps": steps})

    def worker_sched(self, tb):
        """The worker thread's /proc schedstat: ns on the CPU, ns runnable
        but waiting for it, timeslices; None when it cannot be read."""
        w = self.workers(tb)
        try:
            return schedstat(w[0]["tid"])
        except (TypeError, IndexError, KeyError):
            return None

    def napi_sched(self, dp):
        """The same for the ingress's napi thread (the XDP path's server)."""
        napi = self.placements.get(dp.name, {}).get("napi") or []
        return schedstat(napi[0]["pid"]) if len(napi) == 1 else None

    def veth_drops(self, tb):
        """The sender's veth toward the DUT (tx_dropped: frames the DUT's
        ingress ring had no room for) and the ingress's own counters."""
        out = {}
        for ns, dev in ((tb.src, tb.s), (tb.dut, tb.i)):
            try:
                ln = json.loads(run(["ip", "-s", "-j", "link", "show", "dev", dev], ns=ns))[0]
            except (CmdError, json.JSONDecodeError, IndexError, KeyError):
                return None
            st = ln.get("stats64", {})
            out[dev] = {"tx_dropped": st.get("tx", {}).get("dropped", 0),
                        "rx_dropped": st.get("rx", {}).get("dropped", 0),
                        "tx_packets": st.get("tx", {}).get("packets", 0),
                        "rx_packets": st.get("rx", {}).get("packets", 0)}
        return out

    def model_trial(self, tb, dp, rate, what):
        # The XDP path's napi thread: how long it waits to run once a
        # packet woke it (the model's wake-up), whether it was kept off its
        # CPU with work, and its work around its polls (the receiver's
        # NAPI after each, its linger before a sleep), where perf is
        # installed.
        wake = None
        if dp.name == MODEL_XDP_DP and self.perf:
            pids = [t["pid"] for t in self.placements.get(dp.name, {}).get("napi", [])]
            # perf on the DUT's CPU: the generator's is the generator's alone
            wake = WakeTrace(self.perf, pids, os.path.join(tb.tmp, "wake.data"),
                             self.a.dut_cpu, dev=tb.i)
            try:
                wake.start()
            except OSError as ex:
                self.say(f"  wake-ups not measured: {ex}")
                wake = None
        s0, v0, c0 = self.worker_sched(tb), self.veth_drops(tb), cpu_times()
        n0 = self.napi_sched(dp)
        try:
            row, rec = self.trial_retry(tb, dp, "64", rate, self.a.model_duration, what)
        finally:
            wt = wake.stop() if wake else None
        if wt is not None and "polls" in wt:
            # perf is stopped during the trial (WakeTrace.start()) and the
            # kernel fills its buffer meanwhile; a full buffer drops the
            # rest, and with the thread idle after the trial no later event
            # carries perf's LOST record: its record ends early, silently.
            # xnf_batch counted every poll with packets.
            polls = (rec.get("xnf_delta") or {}).get("batch_polls") or []
            missing = sum(polls[1:]) - (wt["polls"] - wt.get("polls_empty", 0))
            wt["lost_polls"] = max(missing, 0) if missing > WAKE_LOST_MARGIN else 0
        if wt is not None:
            rec["napi_wake"] = dict(wt, how="perf: sched_waking to sched_switch of the "
                                    "ingress's napi thread; preempted: from its switch-out "
                                    "with work (R) to its switch-in; napi:napi_poll in it: "
                                    "first_poll, after_poll, linger, polls (waketrace.py)")
        s1, v1, c1 = self.worker_sched(tb), self.veth_drops(tb), cpu_times()
        n1 = self.napi_sched(dp)
        if n0 and n1:
            rec["napi_sched"] = {k: n1[k] - n0[k] for k in n0}
        if c0 and c1:
            # Per CPU, ms of each kind (/proc/stat): steal is time the
            # hypervisor ran something else on this vCPU.
            rec["cpu_ms"] = {c: {k: round((c1[c][k] - c0[c][k]) * 1e3 / CLK_TCK, 1)
                                 for k in c0[c]} for c in c0 if c in c1}
        if s0 and s1:
            rec["worker_sched"] = {k: s1[k] - s0[k] for k in s0}
        if v0 and v1:
            rec["veth"] = {d: {k: v1[d][k] - v0[d][k] for k in v0[d]} for d in v0}
        return row, rec

    def model_steadiness(self):
        """The machine's own steadiness on both CPUs (steadiness.py), after
        the model sweeps, their test beds gone: no trial shares the CPUs
        with it, and it holds up none."""
        try:
            m = steadiness.measure({"gen_cpu": self.a.gen_cpu, "dut_cpu": self.a.dut_cpu},
                                   self.a.model_steady_s)
        except (OSError, ValueError, subprocess.TimeoutExpired) as ex:
            self.say(f"  the machine's steadiness not measured: {ex}")
            return
        self.model_machine = m
        for cpu, c in m["cpus"].items():
            n = c["counts"]
            mean = sum(n) / len(n) if n else 0
            if mean:
                self.say(f"model: a fixed loop on CPU {cpu} ({c['role']}) ran at "
                         f"{min(n) / mean:.2f}-{max(n) / mean:.2f} of its mean speed "
                         f"in stretches of {m['stretch_s'] * 1e3:.0f} ms")

    def model_saturation(self, tb, dp):
        row, rec = self.model_trial(tb, dp, None, "model max")
        self.model_point_record(dp, rec, row, None)
        self.progress(f"model {dp.name} saturation: {row['rx_mpps']:.3f} Mpps received "
                      f"of {row['tx_pps'] / 1e6:.3f} offered")
        if dp.name == MODEL_XDP_DP:
            # What the ingress's NAPI took, not what reached the sink: the
            # sink's napi thread has what the DUT's leaves of the CPU.
            polls = (rec.get("xnf_delta") or {}).get("batch_polls") or []
            took = sum(i * c for i, c in enumerate(polls))
            row = dict(row, rx_pps=took / row["duration_s"] if row["duration_s"] else 0.0)
        return row

    def model_point(self, tb, dp, frac, sat):
        rate = float(frac) * sat["rx_pps"]
        cap = sat["tx_pps"]
        use = None if rate >= cap else rate
        try:
            row, rec = self.model_trial(tb, dp, use, f"model {frac}")
        except GenError:
            self.progress(f"model {dp.name} {frac} x saturation: no measurement (generator failed)")
            return
        self.model_point_record(dp, rec, row, rate)
        self.progress(f"model {dp.name} {frac} x saturation ({rate / 1e6:.3f} Mpps): "
                      f"loss {100 * row['loss']:.2f}%")

    def model_snapshot(self, tb, dp):
        """One `xnf -j stats` of the worker's model sweep (a failed read is
        left out: the interval then spans two trials)."""
        if dp.name != MODEL_DP:
            return
        st = self.xnf_stats(tb)
        if st is not None:
            self.model_snapshots.append(st)

    def model_dimension_check(self, tb, dp):
        """Issue 18's check of one dimensioning answer: `xnf model dimension`
        on the live instance's `xnf -j stats` snapshots, one before the
        sweep and one after each of its trials, gives the rate one core
        sustains at 1e-3 loss: the model's loss averaged over the capacity
        a new trial may have, predicted from the trials' own (the core's
        capacity changes from trial to trial on a shared VM; docs/model.md,
        Dimensioning), with the NAPI bursts of the whole sweep; one trial at
        that rate measures the loss."""
        target = MODEL_TARGET_LOSS
        out = {"target_loss": target, "dataplane": dp.name,
               "placement": self.placements.get(dp.name)}
        snaps = self.model_snapshots or [s for s in [self.xnf_stats(tb)] if s is not None]
        if not snaps:
            self.model_check = {**out, "error": "xnf -j stats failed"}
            return
        files = []
        for k, st in enumerate(snaps):
            files.append(os.path.join(tb.tmp, f"model-stats-{k + 1:02d}.json"))
            with open(files[-1], "w") as f:
                json.dump(st, f)
        self.model_check_stats = snaps[-1]   # model/dimension-stats.json: the last snapshot
        tools = os.path.join(TOP, "tools")
        env = dict(os.environ, PYTHONPATH=tools)
        cmd = [sys.executable, "-m", "xnf_model", "-j", "dimension"]
        for f in files:
            cmd += ["--measured", f]
        cmd += ["--dev", tb.i, "--loss", str(target), "--burst", "napi"]
        if self.a.quick:
            # the quick run's 2-3 loaded trials would make a law with 1-2
            # degrees of freedom: it checks the pipeline, not the model
            cmd += ["--spread", "seen"]
        # One bisection over every interval that prices its capacity:
        # minutes on a busy 2-vCPU machine. The dataplane is idle
        # meanwhile, so its parts take every CPU: the check trial comes
        # sooner after the snapshots, and the core's speed moves on a
        # scale of minutes (docs/model.md, Dimensioning).
        cmd += ["--jobs", str(os.cpu_count() or 1)]
        t_model = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=env)
        out["model_seconds"] = round(time.monotonic() - t_model, 1)
        out["command"] = " ".join(cmd[1:])
        try:
            ans = json.loads(p.stdout)
            rate = float(ans["max_rate_pps"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            self.model_check = {**out, "error": (p.stderr or p.stdout).strip()[:400]}
            return
        out["model_rate_pps"] = rate
        out["model_loss_at_rate"] = ans.get("at_max_rate", {}).get("loss")
        out["model_capacity_pps"] = ans.get("capacity_pps")
        # Per interval between snapshots (a trial of the sweep): its time,
        # the full-batch capacity its own t(beta) gives, whether it priced
        # the answer (and its weight) or why not, and its loss there.
        out["intervals"] = [{k: iv.get(k) for k in (
            "interval", "duration_s", "rate_pps", "full_batches", "capacity_pps",
            "full_time_rel_error", "used", "weight", "skipped", "loss_at_max_rate")}
            for iv in ans.get("intervals") or []]
        # what the answer is averaged over: the capacity a new interval may
        # have, predicted from theirs (its median and 1% quantile, the
        # nodes), or the intervals as seen
        out["spread"] = ans.get("spread")
        # The generator's achieved rate falls short of its setpoint when
        # its CPU is shared (here with the ingress's napi thread): the
        # setpoint is corrected by the shortfall, up to three trials, until
        # the rate offered is the model's within MODEL_RATE_TOL (loss rises
        # steeply there: the answer is close to the core's capacity).
        setpoint, tries = rate, []
        for _ in range(3):
            row, rec = self.model_trial(tb, dp, setpoint, "model dimension check")
            tries.append((setpoint, row, rec))
            if abs(row["tx_pps"] - rate) <= MODEL_RATE_TOL * rate or row["tx_pps"] <= 0:
                break
            setpoint *= rate / row["tx_pps"]

        def ring_loss(rec):
            w = (rec.get("worker_delta") or [{}])[0] or {}
            k = w.get("kernel") or {}
            lost = (k.get("rx_ring_full") or 0) + (k.get("rx_dropped") or 0)
            arrived = (w.get("rx_packets") or 0) + lost
            return lost / arrived if arrived else None

        out["generator_tries"] = [{"setpoint_pps": round(sp, 1), "tx_pps": r["tx_pps"],
                                   "ring_loss": ring_loss(rc)} for sp, r, rc in tries]
        # The trial whose offered rate came closest to the model's.
        setpoint, row, rec = min(tries, key=lambda t: abs(t[1]["tx_pps"] - rate))
        rl = ring_loss(rec)
        # The check trial's own full-batch capacity: the core the answer
        # met, against the ones the snapshots priced it with.
        w = (rec.get("worker_delta") or [{}])[0] or {}
        full = next((e for e in w.get("batch_hist") or []
                     if e.get("size") == WORKER_BATCH and e.get("batches")), None)
        out["check_capacity_pps"] = (WORKER_BATCH * 1e9 * full["batches"] / full["ns"]
                                     if full and full.get("ns") else None)
        out["check_capacity_quantile"] = capacity_quantile(out["spread"],
                                                           out["check_capacity_pps"])
        out.update({"sent": row["sent"], "received": row["received"],
                    "tx_pps": row["tx_pps"], "end_to_end_loss": row["loss"],
                    "ring_loss": rl, "worker_sched": rec.get("worker_sched"),
                    "loadavg": row["loadavg"], "veth": rec.get("veth"),
                    "cpu_ms": rec.get("cpu_ms"),
                    "worker": (rec.get("worker_delta") or [None])[0]})
        # Issue 18's criterion: at the rate the model gives, the loss measured
        # at the ring the model describes is within the stated accuracy of
        # the target. Only a trial that offered the rate checks it; loss
        # grows with the rate, so a trial below the rate that already lost
        # more than the target's accuracy refutes the answer too.
        out["accuracy"] = MODEL_ACCURACY
        out["rate_tolerance"] = MODEL_RATE_TOL
        out["rate_reached"] = abs(row["tx_pps"] - rate) <= MODEL_RATE_TOL * rate
        out["within_accuracy"] = (out["rate_reached"] and rl is not None
                                  and abs(rl - target) <= MODEL_ACCURACY)
        below = [t for t in out["generator_tries"] if t["tx_pps"] < rate
                 and t["ring_loss"] is not None and t["ring_loss"] > target + MODEL_ACCURACY]
        out["verdict"] = ("pass: within the stated accuracy (0.5 pp)" if out["within_accuracy"]
                          else "fail: NOT within 0.5 pp" if out["rate_reached"]
                          else "fail: NOT within 0.5 pp already below the rate" if below
                          else "not checked: the generator did not offer the rate")
        self.model_check = out
        self.progress(f"model {dp.name} dimension check: {rate / 1e3:.1f} kpps for loss "
                      f"<= {target:g}; offered {row['tx_pps'] / 1e3:.1f} kpps, measured at "
                      f"the ring {100 * (out['ring_loss'] or 0):.2f}%, end to end "
                      f"{100 * row['loss']:.2f}%")

    def model_point_record(self, dp, rec, row, rate):
        w = (rec.get("worker_delta") or [None])[0]
        xd = rec.get("xnf_delta") or {}
        self.model_points.setdefault(dp.name, []).append({
            "offered_pps": round(rate if rate is not None else row["tx_pps"], 1),
            "offered_max": rate is None, "achieved_tx_pps": row["tx_pps"],
            "sent": row["sent"], "received": row["received"],
            "duration_s": row["duration_s"], "loadavg": row["loadavg"], "worker": w,
            # The ingress device's NAPI polls (xnf_batch, per CPU): how the
            # packets reach the worker's RX ring, one burst per poll.
            # With its time (xnf_batch timed/ns: the XDP path's service
            # times) and the frames the ingress ring refused (the sender
            # veth's tx_dropped): the XDP path's own validation.
            "napi": {"polls": xd.get("batch_polls"), "percpu": xd.get("batch_percpu"),
                     "timed": xd.get("batch_timed"), "ns": xd.get("batch_ns"),
                     "ring": VETH_RING, "budget": NAPI_BUDGET},
            "veth": rec.get("veth"),
            # How long the napi thread waited to run once woken, and its
            # time on the CPU (XDP path).
            "napi_wake": rec.get("napi_wake"), "napi_sched": rec.get("napi_sched"),
            # The generator's paced bursts, its flushes by size and, at full
            # rate, its pauses: the arrivals at the ingress ring.
            "gen": {k: (rec.get("gen") or {}).get(k)
                    for k in ("burst", "burst_mean", "flush", "flushes", "slips", "pauses")},
            # Whether the worker had its core: time runnable but not running
            # (other tasks on the CPU, the NAPI thread among them).
            "worker_sched": rec.get("worker_sched"), "cpu_ms": rec.get("cpu_ms")})

    # ---- the run ------------------------------------------------------------------
    def write_outputs(self):
        os.makedirs(self.out, exist_ok=True)
        for name, rows in self.rows.items():
            write_csv(os.path.join(self.out, f"{name}.csv"), rows)
        if self.model_points or "model" in self.a.experiments:
            # model/sweep.json: the worker's; model/xdp/sweep.json: the XDP path's.
            for dp, sub, ring, batch in ((MODEL_DP, "", WORKER_RING, WORKER_BATCH),
                                         (MODEL_XDP_DP, "xdp", VETH_RING, NAPI_BUDGET)):
                if dp not in self.model_points and sub:
                    continue
                os.makedirs(os.path.join(self.out, "model", sub), exist_ok=True)
                with open(os.path.join(self.out, "model", sub, "sweep.json"), "w") as f:
                    json.dump({"dataplane": dp, "ring": ring, "batch": batch, "nf": "l3fwd",
                               "size": 64,
                               # steadiness.py: a fixed loop's runs per stretch on each CPU
                               "machine": self.model_machine,
                               "points": sorted(self.model_points.get(dp, []),
                                                key=lambda p: p["offered_pps"])},
                              f, indent=1)
            if self.model_check is not None:
                with open(os.path.join(self.out, "model", "dimension.json"), "w") as f:
                    json.dump(self.model_check, f, indent=1)
            if self.model_check_stats is not None:
                with open(os.path.join(self.out, "model", "dimension-stats.json"), "w") as f:
                    json.dump(self.model_check_stats, f)
            if self.model_snapshots:
                with open(os.path.join(self.out, "model", "dimension-snapshots.json"), "w") as f:
                    json.dump(self.model_snapshots, f)

    def meta(self, started, finished, dps):
        a = self.a
        cpu = ""
        try:
            with open("/proc/cpuinfo") as f:
                cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
        except OSError:
            pass
        rev = subprocess.run(["git", "-C", TOP, "describe", "--always", "--dirty"],
                             capture_output=True, text=True).stdout.strip()
        return {
            "command": " ".join(sys.argv), "quick": a.quick, "pid": os.getpid(), "started": started,
            "finished": finished, "elapsed_s": round(time.monotonic() - self.t0, 1),
            "loadavg_start": self.load0, "loadavg_end": loadavg(),
            "estimated_s": round(self.est_total, 1), "kernel": platform.release(),
            "cpu": cpu, "ncpus": os.cpu_count(), "git": rev,
            "args": {k: v for k, v in vars(a).items()},
            "dataplanes": [d.name for d in dps], "skipped": self.skipped,
            "generator_errors": self.gen_errors,
            "placement": self.placements, "sessions": len(self.sessions),
            "trials": self.trial_count,
            "definitions": {
                "max_load": "the generator sends as fast as it can on its CPU for "
                            "duration_s; throughput = frames the sink received / "
                            "duration_s",
                "zero_loss": f"the highest offered rate at which the sink received all "
                             f"but at most {a.zl_tolerance:g} of the frames sent in a "
                             f"{a.zl_duration} s trial; bounded binary search, "
                             f"{a.zl_steps} trials: first at the median max-load "
                             f"throughput, then bisection of [0, max offered]; "
                             f"rx_pps is what the sink received at that rate. "
                             f"strict_rx_pps: the same for the highest of those trials "
                             f"that lost no frame at all (RFC 2544), 0 if none",
                "loss": "(sent - received) / sent, over the trial",
                "latency": "sink time - generator timestamp in the payload, one "
                           "host clock (generator -> DUT -> sink)",
                "gbps": "frame bits including the FCS (the generator's size), "
                        "gbps_l1 adds preamble and inter-frame gap",
                "rules": f"{FW_RULES} rules in the main runs: generated by xnf-fwgen "
                         "(loader/fw_gen.c), those that could match the test flows "
                         "left out, default allow: every packet passes the whole "
                         "rule set; nftables gets the same rules in an inet "
                         "forward chain",
                "routes": "10 routes (198.51.100.0/24, 192.0.2.0/24, 8 x /28 of "
                          "203.0.113.0/24) in xnf's tables and the kernel's",
            },
            "flows": a.flows, "udp_ports": [UDP_SPORT, UDP_DPORT],
        }

    def main(self):
        a = self.a
        for tool in (self.xnf, self.gen, self.sink, os.path.join(self.build, "xnf-fwgen"),
                     os.path.join(self.build, "bpf", "redirect.bpf.o"),
                     os.path.join(self.build, "bpf", "fibfwd.bpf.o"),
                     os.path.join(self.build, "bpf", "minfwd.bpf.o")):
            if not os.path.exists(tool) and not a.dry_run:
                sys.exit(f"Error: {tool} is missing; run make (it builds every tool)")
        if os.geteuid() != 0 and not a.dry_run:
            sys.exit("Error: the benchmark builds network namespaces and attaches XDP: run it as root")
        ncpu = os.cpu_count() or 1
        if max(a.gen_cpu, a.dut_cpu) >= ncpu:
            sys.exit(f"Error: --gen-cpu/--dut-cpu must be below {ncpu}")
        if a.gen_cpu == a.dut_cpu:
            print("warning: generator and DUT share a CPU: throughput is shared between them")
        dps = self.select()
        if not dps:
            sys.exit("Error: no dataplane selected (see --only)")
        sessions = self.plan(dps)
        if a.vs_testpmd:
            sessions = self.shuffle_rounds(sessions)
        self.total_trials = 0
        est = 0.0
        for s in sessions:
            est += SESSION_OVH + 0.3 + TRIAL_OVH
            for t in s["tasks"]:
                n, c = self.task_cost(t)
                self.total_trials += n
                est += c
            if s["rules"] >= 1000:
                est += s["rules"] / 2000
        self.est_total = est
        for name, why in self.skipped:
            self.say(f"not measured: {name}: {why}")
        self.say(f"xnf bench{' (quick)' if a.quick else ''}: {len(dps)} dataplanes, "
                 f"{len(sessions)} test beds, {self.total_trials} trials; "
                 f"estimated duration {est / 60:.1f} min; results in {self.out}")
        if a.dry_run:
            for s in sessions:
                self.say(f"  {s['dp'].name} rules={s['rules']}: {len(s['tasks'])} tasks: "
                         f"{sorted(set(t[0] for t in s['tasks']))}")
            return 0
        if os.path.isdir(self.out) and not a.keep:
            for sub in ("raw", "model"):
                shutil.rmtree(os.path.join(self.out, sub), ignore_errors=True)
        os.makedirs(self.out, exist_ok=True)
        started = time.strftime("%Y-%m-%d %H:%M:%S %z")
        rc = 0
        # SIGINT too: a shell starts background jobs with it ignored.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, on_signal)
        try:
            for s in sessions:
                self.run_session(s)
            if self.model_points:
                self.model_steadiness()
        except (KeyboardInterrupt, Interrupted) as ex:
            self.say(f"interrupted ({ex or 'SIGINT'}): cleaning up, writing what was measured")
            rc = 130
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            if self.tb:
                self.stop_worker(self.tb)
                self.tb.teardown()
            self.write_outputs()
            with open(os.path.join(self.out, "meta.json"), "w") as f:
                json.dump(self.meta(started, time.strftime("%Y-%m-%d %H:%M:%S %z"), dps), f,
                          indent=1)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        self.vs_testpmd()
        if self.a.vs_nft_ct:
            self.vs_nft(VS_NFT_CT_PAIRS, "vs_nft_ct.json")
        if self.a.vs_nft_masq:
            self.vs_nft(VS_NFT_MASQ_PAIRS, "vs_nft_masq.json")
        self.validate_model()
        import report
        report.write(self.out)
        el = time.monotonic() - self.t0
        self.say(f"done in {el / 60:.1f} min (estimated {self.est_total / 60:.1f}): "
                 f"{os.path.join(self.out, 'report.md')}")
        return rc

    # ---- the test-bed targets (issue 38) ---------------------------------------
    def targets_main(self):
        """--targets: the dataplanes of TARGET_DPS (narrowed by --only), each
        on a test bed of its own, all set up first and kept until the end;
        then --rounds rounds, each a trial of every (dataplane, mix) in an
        order shuffled by --seed; the medians, intervals and verdicts
        (targets_summary()) in OUT/targets.json and printed."""
        a = self.a
        mixes = a.mixes
        for tool in (self.xnf, self.gen, self.sink,
                     *(os.path.join(self.build, "bpf", f"{k}.bpf.o")
                       for k in ("redirect", "minfwd", "fibfwd"))):
            if not os.path.exists(tool) and not a.dry_run:
                sys.exit(f"Error: {tool} is missing; run make (it builds every tool)")
        dps = [d for d in self.select() if d.name in TARGET_DPS]
        if not dps:
            sys.exit(f"Error: no dataplane of {','.join(TARGET_DPS)} selected (see --only)")
        n = a.rounds * len(dps) * len(mixes)
        est = len(dps) * (SESSION_OVH + 0.3 + TRIAL_OVH) + n * (a.trial + TRIAL_OVH)
        self.say(f"xnf bench --targets: {len(dps)} dataplanes x {len(mixes)} mixes x "
                 f"{a.rounds} rounds = {n} trials of {a.trial} s, seed {a.seed}; estimated "
                 f"{est / 60:.1f} min; results in {self.out}")
        if a.dry_run:
            return 0
        if os.geteuid() != 0:
            sys.exit("Error: the benchmark builds network namespaces and attaches XDP: "
                     "run it as root")
        os.makedirs(self.out, exist_ok=True)
        started = time.strftime("%Y-%m-%d %H:%M:%S %z")
        self.total_trials = n
        rng = random.Random(a.seed)
        beds, trials, order = {}, [], []
        rc = 0
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, on_signal)
        try:
            for dp in dps:
                tb = Testbed(self.build, "bench", name="xnft", tmp_name="xnf-targets",
                             verbose=a.verbose)
                beds[dp.name] = tb    # torn down in finally, even half built
                tb.setup()
                self.placements[dp.name] = self.setup_dp(tb, dp, FW_RULES)
                self.smoke(tb, dp)
                self.say(f"  {dp.name}: set up on {tb.dut}")
            for r in range(a.rounds):
                cells = [(dp, mix) for dp in dps for mix in mixes]
                rng.shuffle(cells)
                for dp, mix in cells:
                    order.append([r, dp.name, mix["name"]])
                    what = f"round {r + 1}/{a.rounds} {dp.name} {mix['name']}"
                    try:
                        row, rec = self.trial_retry(beds[dp.name], dp, "64", None, a.trial,
                                                    what, mix)
                    except GenError:
                        self.progress(f"{what}: no measurement (generator failed)")
                        continue
                    row.update({"round": r, "mix": mix["name"]})
                    trials.append(row)
                    self.progress(f"{what}: {row['rx_mpps']:.3f} Mpps, "
                                  f"{row.get('cpu_ns_per_pkt') or '-'} ns/pkt")
        except (KeyboardInterrupt, Interrupted) as ex:
            self.say(f"interrupted ({ex or 'SIGINT'}): cleaning up, writing what was measured")
            rc = 130
        except CmdError as ex:
            self.say(f"Error: {str(ex).splitlines()[0][:400]}")
            rc = 1
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            for tb in beds.values():
                tb.teardown()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        res = targets_summary(trials, [d.name for d in dps], [m["name"] for m in mixes],
                              a.rounds)
        res.update({"seed": a.seed, "rounds": a.rounds, "trial_s": a.trial,
                    "mixes": mixes, "dataplanes": [d.name for d in dps], "order": order,
                    "trials": trials, "placement": self.placements,
                    "generator_errors": self.gen_errors, "skipped": self.skipped,
                    "meta": self.meta(started, time.strftime("%Y-%m-%d %H:%M:%S %z"), dps)})
        with open(os.path.join(self.out, "targets.json"), "w") as f:
            json.dump(res, f, indent=1)
        self.say(targets_table(res))
        self.say(f"{os.path.join(self.out, 'targets.json')}")
        return rc

    def vs_testpmd(self):
        """The worker (sleeping, busy-poll) against testpmd, per placement
        of the ingress's napi thread: per dataplane the median rate and
        frames per CPU ms with 95% bootstrap intervals over the rounds; per
        round the ratios worker / testpmd, busy-poll worker / testpmd and
        busy-poll / sleeping worker (paired: the same round's trials), their
        median and bootstrap interval over the rounds, and the verdict
        against 1.2x (met: the whole interval at or above it). Printed, and
        written to vs_testpmd.json."""
        if not self.a.vs_testpmd:
            return
        import stats
        by = {(r["dataplane"], r["size"], r["rep"]): r for r in self.rows["throughput"]}
        reps = range(self.a.repeat)

        def series(dp, size, key):
            out = []
            for k in reps:
                v = by.get((dp, size, k), {}).get(key)
                out.append(float(v) if isinstance(v, (int, float)) and v > 0 else None)
            return out

        metrics = (("pps", "rx_pps"), ("per_cpu_ms", "pkts_per_cpu_ms"))
        res = {"seed": VS_TESTPMD_SEED, "order": self.vs_order, "target": VS_TESTPMD_TARGET,
               "level": stats.LEVEL, "resamples": stats.RESAMPLES,
               "dataplanes": [], "ratios": []}
        for size in self.a.sizes:
            for napi, wdp, bdp, pdp in VS_TESTPMD_PLACEMENTS:
                for dp in (wdp, bdp, pdp):
                    d = {"dataplane": dp, "napi": napi, "size": size}
                    for m, key in metrics:
                        d[m] = series(dp, size, key)
                        d[m + "_summary"] = stats.summary(d[m])
                    if d["pps_summary"]["n"]:
                        res["dataplanes"].append(d)
                for num, den, target in ((wdp, pdp, VS_TESTPMD_TARGET),
                                         (bdp, pdp, VS_TESTPMD_TARGET), (bdp, wdp, None)):
                    for m, key in metrics:
                        rs = stats.paired_ratios(series(num, size, key), series(den, size, key))
                        if not rs:
                            continue
                        r = {"napi": napi, "size": size, "metric": m, "num": num, "den": den,
                             "ratios": [round(x, 4) for x in rs], **stats.summary(rs),
                             "target": target,
                             "verdict": None}
                        # A bootstrap over fewer than 3 rounds is no interval.
                        if target is not None and r["n"] < 3:
                            r["verdict"] = "undecided"
                        elif target is not None:
                            r["verdict"] = stats.verdict(r["lo"], r["hi"], target, "ge")
                        res["ratios"].append(r)
        if not res["dataplanes"]:
            return
        with open(os.path.join(self.out, "vs_testpmd.json"), "w") as f:
            json.dump(res, f, indent=1)
        self.say(f"{'dataplane':30} {'size':>4} {'Mpps [95% CI]':>26} "
                 f"{'frames per CPU ms [95% CI]':>30}")
        for d in res["dataplanes"]:
            p, c = d["pps_summary"], d["per_cpu_ms_summary"]
            cpu = (f"{c['median']:8.0f} [{c['lo']:.0f}, {c['hi']:.0f}]" if c["n"] else "-")
            self.say(f"{d['dataplane']:30} {d['size']:>4} {p['median'] / 1e6:9.4f} "
                     f"[{p['lo'] / 1e6:.4f}, {p['hi'] / 1e6:.4f}] {cpu:>30}")
        self.say(f"{'ratio (paired per round)':58} {'metric':>10} {'median [95% CI]':>22} "
                 f"{'target':>6}  verdict")
        for r in res["ratios"]:
            self.say(f"{r['num'] + ' / ' + r['den']:58} {r['metric']:>10} "
                     f"{r['median']:6.2f}x [{r['lo']:.2f}, {r['hi']:.2f}] "
                     f"{'>= %.1f' % r['target'] if r['target'] else '-':>6}  "
                     f"{r['verdict'] or '-'} ({r['n']} rounds)")

    def shuffle_rounds(self, sessions):
        """--vs-testpmd: the dataplanes of each round in a shuffled order
        (seeded, recorded in vs_order), so that none is always first or
        last after a given other; round k of all before round k+1."""
        import random
        rng = random.Random(VS_TESTPMD_SEED)
        rounds = {}
        for s in sessions:
            rounds.setdefault(s["tasks"][0][3], []).append(s)
        out = []
        for k in sorted(rounds):
            rng.shuffle(rounds[k])
            self.vs_order.append([s["dp"].name for s in rounds[k]])
            out += rounds[k]
        return out

    def vs_nft(self, pairs, fname):
        """xnf's stateful chain (--vs-nft-ct; with masquerade,
        --vs-nft-masq) against Linux + nftables with the same policy, per
        flow count: the ratio of each round's rates (xnf / Linux) and of
        each round's DUT CPU time per packet (Linux / xnf), their medians
        with min-max. Printed, and written to fname (vs_nft_ct.json,
        vs_nft_masq.json)."""
        by = {(r["dataplane"], r["size"], r["rep"]): r for r in self.rows["throughput"]}
        out = []
        for size in self.a.sizes:
            red = [by[("redirect", size, k)] for k in range(self.a.repeat)
                   if ("redirect", size, k) in by]
            if not red:
                continue
            ns = [r["cpu_ns_per_pkt"] for r in red if r.get("cpu_ns_per_pkt")]
            out.append({"ceiling": "redirect", "size": size, "rounds": len(red),
                        "mpps": [r["rx_mpps"] for r in red], "ns_per_pkt": ns})
            self.say(f"redirect (the ceiling), {size} B: Mpps "
                     f"{statistics.median(r['rx_mpps'] for r in red):.3f}, DUT CPU per packet "
                     + (f"{statistics.median(ns):.0f} ns" if ns else "-"))
        for xdp, ldp in pairs:
            for size in self.a.sizes:
                pairs = [(by[(xdp, size, k)], by[(ldp, size, k)]) for k in range(self.a.repeat)
                         if (xdp, size, k) in by and (ldp, size, k) in by]
                if not pairs:
                    continue
                ratios = [x["rx_pps"] / l["rx_pps"] for x, l in pairs if l["rx_pps"] > 0]
                cpu = [l["cpu_ns_per_pkt"] / x["cpu_ns_per_pkt"] for x, l in pairs
                       if x.get("cpu_ns_per_pkt") and l.get("cpu_ns_per_pkt")]
                med = lambda v: round(statistics.median(v), 3) if v else None
                res = {"xnf": xdp, "linux": ldp, "size": size, "rounds": len(pairs),
                       "xnf_mpps": [x["rx_mpps"] for x, _ in pairs],
                       "linux_mpps": [l["rx_mpps"] for _, l in pairs],
                       "xnf_ns_per_pkt": [x.get("cpu_ns_per_pkt") for x, _ in pairs],
                       "linux_ns_per_pkt": [l.get("cpu_ns_per_pkt") for _, l in pairs],
                       "xnf_ct_entries": [x.get("ct_entries") for x, _ in pairs],
                       "linux_ct_entries": [l.get("ct_entries") for _, l in pairs],
                       # masquerade: connections translated, after each trial
                       "xnf_nat_translated": [x.get("nat_translated") for x, _ in pairs],
                       "linux_nat_translated": [l.get("nat_translated") for _, l in pairs],
                       "xnf_loss": [x["loss"] for x, _ in pairs],
                       "linux_loss": [l["loss"] for _, l in pairs],
                       "rate_ratios": [round(v, 3) for v in ratios],
                       "rate_ratio_median": med(ratios),
                       "rate_ratio_min": round(min(ratios), 3) if ratios else None,
                       "rate_ratio_max": round(max(ratios), 3) if ratios else None,
                       "cpu_ratios": [round(v, 3) for v in cpu],
                       "cpu_ratio_median": med(cpu),
                       "cpu_ratio_min": round(min(cpu), 3) if cpu else None,
                       "cpu_ratio_max": round(max(cpu), 3) if cpu else None}
                out.append(res)
                self.say(f"{xdp} / {ldp}, {size} B: rate {res['rate_ratio_median']}x "
                         f"({res['rate_ratio_min']}-{res['rate_ratio_max']}), Mpps "
                         f"{statistics.median(res['xnf_mpps']):.3f} / "
                         f"{statistics.median(res['linux_mpps']):.3f}; DUT CPU per packet "
                         f"{res['cpu_ratio_median']}x ({res['cpu_ratio_min']}-"
                         f"{res['cpu_ratio_max']}), {len(pairs)} rounds")
        if out:
            with open(os.path.join(self.out, fname), "w") as f:
                json.dump(out, f, indent=1)

    def validate_model(self):
        tools = os.path.join(TOP, "tools")
        if not (os.path.isdir(os.path.join(tools, "xnf_model")) and self.model_points):
            return
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (tools, env.get("PYTHONPATH"))))
        # The model with what the worker's ring sees (docs/model.md, "Why
        # the model missed, measured"): bursts as the point's NAPI polls,
        # the point's own service times, the wake-up its counters show;
        # and, in paper/, the paper's assumptions (single packets, one fit).
        # In xdp/, the XDP path's own sweep: its NAPI polls with their
        # times, the generator's frames as it paces them (docs/model.md,
        # "Paced arrivals").
        for dp, sub, extra in ((MODEL_DP, "", ["--burst", "napi", "--service", "point",
                                               "--wake-ns", "measured"]),
                               (MODEL_DP, "paper", []),
                               (MODEL_XDP_DP, "xdp", ["--path", "xdp", "--service", "point",
                                                      "--arrival", "paced"] +
                                (["--wake-ns", "measured"] if self.perf else []))):
            if not self.model_points.get(dp):
                continue
            sweep = os.path.join(self.out, "model", "xdp" if sub == "xdp" else "",
                                 "sweep.json")
            outdir = os.path.join(self.out, "model", sub)
            os.makedirs(outdir, exist_ok=True)
            cmd = ["-m", "xnf_model", "validate", sweep, "--out", outdir] + extra
            p = subprocess.run([sys.executable] + cmd, capture_output=True, text=True,
                               timeout=600, cwd=outdir, env=env)
            with open(os.path.join(outdir, "validate.txt"), "w") as f:
                f.write(f"$ python3 {' '.join(cmd)}\n(exit {p.returncode})\n{p.stdout}")
                if p.stderr.strip():
                    f.write(f"\nstderr:\n{p.stderr}")
                c = self.model_check
                if sub == "" and c and "model_rate_pps" in c:
                    f.write(f"\nDimensioning check (model/dimension.json): the model says one "
                            f"core sustains {c['model_rate_pps'] / 1e3:.1f} kpps at loss <= "
                            f"{c['target_loss']:g}; offered {c['tx_pps'] / 1e3:.1f} kpps, "
                            f"measured loss at the ring {100 * (c['ring_loss'] or 0):.3f}%, "
                            f"end to end {100 * c['end_to_end_loss']:.2f}%: {c['verdict']}\n")
                    caps = [iv["capacity_pps"] for iv in c.get("intervals") or [] if iv["used"]]
                    sp = c.get("spread") or {}
                    if caps:
                        cc = c.get("check_capacity_pps")
                        f.write(f"  ({len(caps)} of {len(c['intervals'])} trials price their "
                                f"own full-batch capacity, {min(caps) / 1e3:.1f}-"
                                f"{max(caps) / 1e3:.1f} kpps; "
                                + (f"averaged over the capacity a new trial may have, "
                                   f"median {sp['median_pps'] / 1e3:.1f} kpps, 1% quantile "
                                   f"{sp['p01_pps'] / 1e3:.1f} kpps"
                                   if sp.get("kind") == "predictive" else
                                   "averaged over those trials by time")
                                + (f"; the check trial's own: {cc / 1e3:.1f} kpps" if cc else "")
                                + (f", at the law's {100 * c['check_capacity_quantile']:.1f}% "
                                   f"quantile" if c.get("check_capacity_quantile") is not None
                                   else "")
                                + ")\n")
                elif sub == "" and c:
                    f.write(f"\nDimensioning check: {c.get('error')}\n")


# ---- helpers -----------------------------------------------------------------------

def parse_mixes(text):
    """--mixes "1,65536,zipf:1.0:1000000" -> [{"name", "flows", "zipf"}]:
    N flows in turn (xnf-gen flows N), or N flows drawn from a Zipf law of
    exponent S (xnf-gen flows N zipf S). ValueError names what is wrong."""
    out = []
    for name in text.split(","):
        w = name.split(":")
        try:
            if len(w) == 1:
                mix = {"name": name, "flows": int(w[0]), "zipf": None}
            elif len(w) == 3 and w[0] == "zipf":
                mix = {"name": name, "flows": int(w[2]), "zipf": float(w[1])}
            else:
                raise ValueError
        except ValueError:
            raise ValueError(f"{name!r} is not N or zipf:S:N")
        if not 1 <= mix["flows"] <= 1000000 or (mix["zipf"] is not None and
                                                not 0.01 <= mix["zipf"] <= 10):
            raise ValueError(f"{name!r}: N is 1..1000000, S 0.01..10 (xnf-gen's ranges)")
        out.append(mix)
    return out


def targets_summary(trials, dps, mixes, rounds):
    """From the trials of a --targets run: per dataplane and mix the median
    rate and DUT CPU ns/packet with their 95% bootstrap intervals over
    rounds; the ceiling's spread per mix; each target per mix: the ratio
    paired per round, its interval and verdict."""
    by = {(t["dataplane"], t["mix"], t["round"]): t for t in trials}

    def series(dp, mix, field):
        return [num_or_none((by.get((dp, mix, r)) or {}).get(field)) for r in range(rounds)]

    cells = {dp: {mix: {"rx_pps": stats.summary(series(dp, mix, "rx_pps")),
                        "cpu_ns_per_pkt": stats.summary(series(dp, mix, "cpu_ns_per_pkt"))}
                  for mix in mixes} for dp in dps}
    ceiling = {}
    for mix in mixes:
        ns = [x for x in series(CEILING_DP, mix, "cpu_ns_per_pkt") if x is not None]
        sp = stats.spread(ns) if CEILING_DP in dps and ns else None
        ceiling[mix] = {"dataplane": CEILING_DP, "spread": sp, "limit": CEILING_SPREAD,
                        "moved": sp is not None and sp > CEILING_SPREAD}
    out = []
    for what, numer, denom, target, better in TARGETS:
        if numer not in dps or denom not in dps:
            continue
        for mix in mixes:
            ratios = stats.paired_ratios(series(numer, mix, "cpu_ns_per_pkt"),
                                         series(denom, mix, "cpu_ns_per_pkt"))
            s = stats.summary(ratios)
            # interval_verdict: what the interval alone says, kept
            # beside the verdict when the ceiling moved
            iv = stats.verdict(s["lo"], s["hi"], target, better)
            v = "undecided (ceiling moved)" if ceiling[mix]["moved"] else iv
            out.append({"what": what, "mix": mix, "numerator": numer, "denominator": denom,
                        "metric": "cpu_ns_per_pkt", "ratios": ratios, "n": s["n"],
                        "value": s["median"], "lo": s["lo"], "hi": s["hi"],
                        "target": target, "better": better, "verdict": v,
                        "interval_verdict": iv})
    return {"statistics": {"ci": "95% percentile bootstrap over rounds, "
                                 f"{stats.RESAMPLES} resamples, seed {stats.SEED}",
                           "ratios": "paired per round (the same round's trials), "
                                     "median of the rounds' ratios",
                           "ceiling_rule": f"undecided (ceiling moved) when {CEILING_DP}'s "
                                           "CPU ns/packet over a mix's rounds has (90th - "
                                           f"10th percentile) / median > {CEILING_SPREAD}"},
            "cells": cells, "ceiling": ceiling, "targets": out}


def num_or_none(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def targets_table(res):
    """The printed table of a --targets run."""
    f = lambda v, d=0: "-" if v is None else f"{v:.{d}f}"
    L = [f"{'dataplane':24} {'mix':20} {'Mpps [95% CI]':24} {'CPU ns/pkt [95% CI]':22} n"]
    for dp, by_mix in res["cells"].items():
        for mix, c in by_mix.items():
            r, ns = c["rx_pps"], c["cpu_ns_per_pkt"]
            mp = (f"{f(r['median'] and r['median'] / 1e6, 3)} "
                  f"[{f(r['lo'] and r['lo'] / 1e6, 3)}-{f(r['hi'] and r['hi'] / 1e6, 3)}]")
            L.append(f"{dp:24} {mix:20} {mp:24} "
                     f"{f(ns['median'])} [{f(ns['lo'])}-{f(ns['hi'])}]".ljust(93)
                     + f"{ns['n']}")
    L.append("")
    for mix, c in res["ceiling"].items():
        L.append(f"ceiling {c['dataplane']} at {mix}: spread "
                 f"{f(c['spread'], 2)} (limit {c['limit']}){' MOVED' if c['moved'] else ''}")
    L.append("")
    L.append(f"{'target (CPU ns/pkt ratio)':38} {'mix':20} {'value [95% CI]':20} "
             f"{'target':8} verdict")
    for t in res["targets"]:
        L.append(f"{t['what']:38} {t['mix']:20} "
                 f"{f(t['value'], 2)} [{f(t['lo'], 2)}-{f(t['hi'], 2)}]".ljust(81)
                 + f"{'<=' if t['better'] == 'le' else '>='}{t['target']:<6} {t['verdict']}"
                 + (f" (interval: {t['interval_verdict']})"
                    if t["verdict"] != t["interval_verdict"] else ""))
    return "\n".join(L)


def capacity_quantile(spread, cap):
    """Where a capacity falls in the predictive law of `xnf model
    dimension` (Student t on the log capacity): the check trial's, a
    draw the law should have covered. None without a predictive law."""
    if not cap or not spread or spread.get("kind") != "predictive":
        return None
    from scipy import stats   # xnf_model, which ran before, needs it too
    if spread["log_scale"] <= 0:
        return float(math.log(cap) >= spread["log_mean"])
    return float(stats.t(spread["dof"], loc=spread["log_mean"],
                         scale=spread["log_scale"]).cdf(math.log(cap)))



CLK_TCK = os.sysconf("SC_CLK_TCK")
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


class CpuSampler:
    """Samples f() -> (fwd_ns, napi_ns) (None: not available) with its
    CLOCK_MONOTONIC time, once at once and then every period s from a
    thread pinned to cpu (the generator's, never the DUT's), until stop();
    over(t0, t1) is the CPU time used from t0 to t1 (ns, the generator's
    t_start_ns and its end), interpolated between the samples around them
    (stats.between: within one period's growth), or None."""

    def __init__(self, f, cpu, period=0.02):
        self.f, self.cpu, self.period = f, cpu, period
        self.samples, self.failed = [], False
        self.done = threading.Event()
        self.sample()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def sample(self):
        t0 = time.monotonic_ns()
        v = self.f()
        t1 = time.monotonic_ns()
        if v is None:
            self.failed = True
        else:
            self.samples.append(((t0 + t1) // 2, v))

    def run(self):
        try:
            os.sched_setaffinity(0, {int(self.cpu)})
        except (OSError, ValueError):
            pass
        while not self.done.wait(self.period):
            self.sample()

    def stop(self):
        self.done.set()
        self.thread.join()
        self.sample()

    def over(self, t0, t1):
        return None if self.failed else stats.between(self.samples, t0, t1)


def schedstat(tid):
    """/proc/TID/schedstat: ns on the CPU, ns runnable but waiting for it,
    timeslices; None when it cannot be read."""
    try:
        with open(f"/proc/{tid}/schedstat") as f:
            run_ns, wait_ns, slices = (int(x) for x in f.read().split()[:3])
    except (OSError, ValueError):
        return None
    return {"run_ns": run_ns, "wait_ns": wait_ns, "slices": slices}


def cpu_times():
    """{cpuN: {field: ticks}} from /proc/stat; None when unreadable."""
    try:
        with open("/proc/stat") as f:
            return {w[0]: dict(zip(CPU_FIELDS, map(int, w[1:9])))
                    for w in (ln.split() for ln in f)
                    if w and w[0].startswith("cpu") and w[0] != "cpu"}
    except (OSError, ValueError):
        return None


def busy_poll_rx(tb):
    """The DUT namespace's BusyPollRxPackets (/proc/net/netstat, TcpExt:
    every busy poll's NAPI work, any socket), None when unreadable."""
    try:
        lines = run(["cat", "/proc/net/netstat"], ns=tb.dut).splitlines()
    except CmdError:
        return None
    for names, vals in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            d = dict(zip(names.split()[1:], vals.split()[1:]))
            return int(d["BusyPollRxPackets"]) if "BusyPollRxPackets" in d else None
    return None


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return ""


def testpmd_totals(text):
    """The accumulated forward statistics testpmd prints when it stops:
    {rx_packets, rx_dropped, tx_packets, tx_dropped}, {} if absent."""
    part = text.rpartition("Accumulated forward statistics")[2]
    out = {}
    for line in part.splitlines()[:3]:
        w = line.replace(":", " ").split()
        for k, v in zip(w, w[1:]):
            if k in ("RX-packets", "RX-dropped", "TX-packets", "TX-dropped") and v.isdigit():
                out[k.lower().replace("-", "_")] = int(v)
    return out


def find_key(obj, key):
    """The first value of key anywhere in a JSON tree."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for v in obj.values():
            r = find_key(v, key)
            if r is not None:
                return r
    elif isinstance(obj, list):
        for v in obj:
            r = find_key(v, key)
            if r is not None:
                return r
    return None


GAUGES = {"queue", "state", "pid", "tid", "cpu", "node", "mode", "nf", "batch", "ring",
          "frames", "frame_size", "busy_poll", "need_wakeup", "frames_in", "size", "dev",
          "recorded", "mean", "utilization"}


def delta(a, b, key=None):
    """b - a for counters in two samples of the same JSON shape; gauges (and
    strings) as in b. batch_hist entries are matched by size."""
    # idle_run: the worker's empty reads since its last packet, at the end
    if key in GAUGES and not isinstance(b, (dict, list)) or key in ("frames_in", "idle_run"):
        return b
    if isinstance(b, dict):
        a = a if isinstance(a, dict) else {}
        return {k: delta(a.get(k), v, k) for k, v in b.items()}
    if isinstance(b, list):
        if key == "batch_hist":
            prev = {e.get("size"): e for e in (a or []) if isinstance(e, dict)}
            out = []
            for e in b:
                d = delta(prev.get(e.get("size"), {}), e)
                d["size"] = e.get("size")
                if d.get("batches"):
                    out.append(d)
            return out
        a = a if isinstance(a, list) and len(a) == len(b) else [None] * len(b)
        return [delta(x, y) for x, y in zip(a, b)]
    if isinstance(b, bool) or not isinstance(b, (int, float)):
        return b
    return b - (a if isinstance(a, (int, float)) and not isinstance(a, bool) else 0)


def xnf_delta(st0, st1, dev):
    def devobj(st):
        for d in st.get("devices", []) if isinstance(st, dict) else []:
            if d.get("dev") == dev:
                return d
        return {}
    d0, d1 = devobj(st0), devobj(st1)
    out = {}
    if d1:
        out["nfs"] = delta(d0.get("nfs"), d1.get("nfs"))
        for k in ("drop_reasons", "pass_reasons"):
            if k in d1:
                out[k] = {r: v for r, v in delta(d0.get(k), d1[k]).items() if v}
        if "batch" in d1:
            b = delta(d0.get("batch"), d1["batch"])
            out["batch_polls"] = b.get("polls")
            out["batch_percpu"] = b.get("percpu")
            out["batch_timed"] = b.get("timed")
            out["batch_ns"] = b.get("ns")
    return out


def batch_hists(rec):
    """[(source, [(batch size, polls)])] of a trial: NAPI polls of the
    ingress device (xnf) and the worker's batches."""
    out = []
    polls = (rec.get("xnf_delta") or {}).get("batch_polls")
    if polls:
        out.append(("napi", list(enumerate(polls))))
    for w in rec.get("worker_delta") or []:
        h = [(e.get("size"), e.get("batches", 0)) for e in w.get("batch_hist") or []]
        if h:
            out.append(("worker", h))
    return out


def batch_mean(rec):
    for src, h in batch_hists(rec):
        n = sum(c for _, c in h)
        if n and src == ("worker" if rec.get("worker_delta") else "napi"):
            return round(sum(b * c for b, c in h) / n, 3), src
    for src, h in batch_hists(rec):
        n = sum(c for _, c in h)
        if n:
            return round(sum(b * c for b, c in h) / n, 3), src
    return "", ""


def write_csv(path, rows):
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    front = ["experiment", "dataplane", "kind", "chain_len", "nfs", "form", "route", "size",
             "rate", "offered_pps", "rules", "rep"]
    keys = [k for k in front if k in keys] + [k for k in keys if k not in front]
    if not keys:
        keys = front
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="xnf benchmark: throughput, zero-loss, latency, loss, batch sizes "
                    "and firewall size, for xnf and its peers, on a namespace test bed",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--quick", action="store_true", help="the few-minute run (make bench QUICK=1)")
    p.add_argument("--out", default=os.path.join(TOP, "build", "bench"), help="results directory")
    p.add_argument("--build", default=os.path.join(TOP, "build"), help="build directory")
    p.add_argument("--only", help="dataplanes (names or kinds, shell patterns, comma-separated)")
    p.add_argument("--experiments", default="throughput,zeroloss,latency,chain,rules,model")
    p.add_argument("--sizes", help=f"frame sizes with FCS, or dc (default {','.join(SIZES)})")
    p.add_argument("--rates", help=f"offered rates for latency (default {','.join(RATES)})")
    p.add_argument("--repeat", type=int, help="trials per point (default 3; quick 1)")
    p.add_argument("--duration", type=float, help="seconds per trial (default 0.5; quick 0.4)")
    p.add_argument("--rule-counts", help="firewall sizes (default 10,100,1000,3000,10000)")
    p.add_argument("--zl-steps", type=int, help="trials per zero-loss search (default 5; quick 3)")
    p.add_argument("--zl-tolerance", type=float, default=0.001,
                   help="loss fraction still counted as zero loss (0: RFC 2544's strict "
                        "zero; the highest rate with no loss at all among the search's "
                        "trials is reported too)")
    p.add_argument("--flows", type=int, default=16, help="distinct 5-tuples")
    p.add_argument("--gen", help="the generator (default BUILD/xnf-gen; e.g. an older build's, "
                                 "to compare generators)")
    p.add_argument("--gen-cpu", type=int, default=0)
    p.add_argument("--dut-cpu", type=int, default=1)
    p.add_argument("--no-worker", action="store_true", help="leave the AF_XDP worker out")
    p.add_argument("--testpmd", default=TESTPMD, help="DPDK's testpmd (a peer of the worker; "
                                                      "skipped when not installed)")
    p.add_argument("--vs-testpmd", action="store_true",
                   help="the short side-by-side run: the macswap worker and testpmd in both "
                        "NAPI placements, throughput at 64 B, --repeat interleaved rounds "
                        "(default 5); prints the worker/testpmd ratios")
    p.add_argument("--vs-nft-ct", action="store_true",
                   help="the stateful firewall's side-by-side run: xnf conntrack,firewall,l3fwd "
                        "with the classic policy against Linux forwarding with nftables and the "
                        "same policy, at 1 and 65,536 flows, with the bare redirect (the "
                        "ceiling); throughput at 64 B and the DUT's CPU time per packet, "
                        "--repeat interleaved rounds (default 5); prints the xnf/Linux ratios")
    p.add_argument("--vs-nft-masq", action="store_true",
                   help="NAT's side-by-side run: xnf conntrack,nat,firewall,l3fwd with the "
                        "classic policy and `nat add masquerade oif EGRESS` against Linux "
                        "forwarding with nftables' `oifname EGRESS masquerade` and the same "
                        "policy, at 1 and 65,536 flows, with the bare redirect (the ceiling); "
                        "throughput at 64 B and the DUT's CPU time per packet, --repeat "
                        "interleaved rounds (default 5); prints the xnf/Linux ratios")
    p.add_argument("--targets", action="store_true",
                   help="the issue 38 test-bed targets side by side: redirect, minfwd, the "
                        "3-NF chain (tail-called, fused), Linux+nft, fibfwd and l3fwd in fib "
                        "mode, each on a test bed of its own kept for the whole run; --rounds "
                        "rounds of --trial s trials, every (dataplane, mix) once per round in "
                        "an order shuffled by --seed; DUT CPU ns/packet ratios paired per "
                        "round with bootstrap intervals and verdicts (OUT/targets.json)")
    p.add_argument("--rounds", type=int, help="--targets: rounds (default 15; quick 3)")
    p.add_argument("--trial", type=float, help="--targets: seconds per trial "
                                               "(default 0.5; quick 0.3)")
    p.add_argument("--mixes", default=TARGET_MIXES,
                   help="--targets: traffic mixes, N (N flows in turn) or zipf:S:N "
                        "(N flows, Zipf exponent S)")
    p.add_argument("--seed", type=int, default=1, help="--targets: the order's shuffle")
    p.add_argument("--ct-warm", type=float, default=2.0,
                   help="seconds of unrecorded traffic before a stateful dataplane with many "
                        "flows is measured (the table filled first)")
    p.add_argument("--keep", action="store_true", help="keep old raw/ files in --out")
    p.add_argument("--dry-run", action="store_true", help="print the plan and its estimate")
    p.add_argument("--report-only", action="store_true", help="rewrite report and plots of --out")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    if a.vs_testpmd:
        a.only = a.only or ",".join(VS_TESTPMD)
        a.experiments = "throughput"
        a.sizes = a.sizes or "64"
        a.repeat = a.repeat or 5
        a.duration = a.duration or 1.0
    if a.vs_nft_ct + a.vs_nft_masq + a.vs_testpmd > 1:
        p.error("--vs-nft-ct, --vs-nft-masq and --vs-testpmd are separate runs")
    if a.vs_nft_ct or a.vs_nft_masq:
        a.only = a.only or ",".join((VS_NFT_CT if a.vs_nft_ct else VS_NFT_MASQ) + ["redirect"])
        a.experiments = "throughput"
        a.sizes = a.sizes or "64"
        a.repeat = a.repeat or 5
        a.duration = a.duration or 1.0
    q = a.quick
    if a.targets and (a.vs_nft_ct or a.vs_nft_masq or a.vs_testpmd):
        p.error("--targets is a run of its own")
    a.rounds = a.rounds or (3 if q else 15)
    a.trial = a.trial or (0.3 if q else 0.5)
    if a.rounds < 2:
        p.error("--rounds: at least 2 (an interval needs more than one round)")
    try:
        a.mixes = parse_mixes(a.mixes)
    except ValueError as ex:
        p.error(f"--mixes: {ex}")
    a.sizes = (a.sizes or ("64,512,dc" if q else ",".join(SIZES))).split(",")
    for s in a.sizes:
        if s not in ("dc", "imix") and not (s.isdigit() and 64 <= int(s) <= 1518):
            p.error(f"--sizes: {s} is not 64..1518, dc or imix")
    a.rates = (a.rates or ("100,10k,1M,max" if q else ",".join(RATES))).split(",")
    for r in a.rates:
        if r != "max" and not rate_pps_ok(r):
            p.error(f"--rates: {r} is not a rate (100, 10k, 1M, max)")
    a.repeat = a.repeat or (1 if q else 3)
    a.duration = a.duration or (0.4 if q else 0.5)
    a.rule_counts = [int(x) for x in (a.rule_counts or ("10,10000" if q else
                                                        ",".join(map(str, RULE_COUNTS)))).split(",")]
    a.zl_steps = a.zl_steps or (3 if q else 5)
    a.zl_repeat = 1 if q else 2
    a.zl_duration = 0.4 if q else 0.5
    a.lat_packets = 100 if q else 300       # frames per latency point at low rates
    a.lat_max_duration = 1.0 if q else 3.0
    # Under a second: the kernel's fair server (6.12+) runs SCHED_OTHER
    # tasks that SCHED_FIFO threads starved for 0.95 s for 50 ms, and the
    # model sweep's FIFO threads (generator, napi, worker) are busy for a
    # whole trial at overload: 1 s trials lost 50 ms of server or source
    # (measured with perf), 0.8 s ones nothing.
    a.model_duration = 0.5 if q else 0.8
    a.model_steady_s = 1.0 if q else 4.0
    a.model_fracs = (["0.3", "0.8", "1.2", "2"] if q else
                     ["0.1", "0.25", "0.5", "0.7", "0.85", "0.95", "1.05", "1.2", "1.5", "2"])
    # Which dataplanes each experiment covers (shell patterns).
    if q:
        a.tput_dps = ["redirect", "minfwd", "fibfwd", "xnf-?nf-tailcall-lpm", "xnf-3nf-fused-lpm",
                      "xnf-1nf-tailcall-fib", "xnf-3nf-tailcall-fib", "linux", "linux-nft",
                      "worker-l3fwd", "xskfwd", "worker-macswap", "testpmd"]
        a.zl_dps = ["redirect", "xnf-3nf-tailcall-lpm", "linux-nft"]
        a.zl_all_sizes_dps = []
        a.lat_dps = ["redirect", "xnf-3nf-tailcall-lpm", "linux-nft", "worker-l3fwd"]
        a.chain_dps = ["redirect", "xnf-?nf-tailcall-lpm", "linux", "linux-nft"]
    else:
        a.tput_dps = (VS_NFT_CT + ["redirect"] if a.vs_nft_ct else
                      VS_NFT_MASQ + ["redirect"] if a.vs_nft_masq else
                      list(VS_TESTPMD) if a.vs_testpmd else [])
        a.zl_dps = ["*"]
        a.zl_all_sizes_dps = ["redirect", "xnf-3nf-tailcall-lpm", "linux-nft"]
        a.lat_dps = ["redirect", "xnf-1nf-tailcall-lpm", "xnf-3nf-tailcall-lpm",
                     "linux-nft", "worker-l3fwd", "xskfwd"]
        a.chain_dps = ["redirect", "xnf-?nf-*-lpm", "linux", "linux-nft", "worker-l3fwd"]
    a.rules_dps = ["xnf-2nf-tailcall-lpm", "linux-nft"]
    a.session_limit = 3600
    return a


def rate_pps_ok(r):
    try:
        return rate_pps(r) > 0
    except ValueError:
        return False


def main():
    a = parse_args(sys.argv[1:])
    if a.report_only:
        import report
        report.write(os.path.abspath(a.out))
        return 0
    if a.targets:
        return Bench(a).targets_main()
    return Bench(a).main()


if __name__ == "__main__":
    sys.exit(main())
