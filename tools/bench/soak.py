#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""xnf's soak: paced traffic for a set time through the 3-NF chain
(firewall, l3fwd, l2fwd) and an AF_XDP worker while routes and firewall
rules change every second, the chains are swapped between equivalent forms
every SWAP, and the worker is stopped (SIGTERM) or killed (SIGKILL) and
restarted every KILL. It reports:

- stable packets lost: packets of flows that every configuration forwards,
  sent and not received, less what the veths counted as dropped (not
  xnf's doing); target 0. Every loss is attributed to a counter.
- churn packets not accounted for: flows whose verdict the churn changes
  must each be received or counted under a drop reason; target 0.
- counters that went backwards in `xnf -j stats` (sampled every SAMPLE;
  the soak never resets them); target none.
- memory: RSS of the long-lived processes, and the BPF programs, maps,
  links and pins of this instance and their memlock, at the start and at
  the end, with the configuration back where it started; targets: no
  growth beyond the tolerances.

    make soak                                  # 30 minutes
    make soak SOAK_DURATION=3m SOAK_SWAP=60s   # tools/bench/soak.py --help

Needs root. Everything runs in three network namespaces of its own (the
soak's test bed, testbed/bench.bash), bounded in time, and is removed on
exit, Ctrl-C included. Results: DIR/report.json and DIR/summary.txt
(also printed). Exit status 1 when a target is missed, 2 when the soak
could not run, 130 when it was interrupted.
"""

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "testbed"))
from testbed import CmdError, Testbed, run  # noqa: E402

# The flow sets, one path of the soak's test bed each (testbed/bench.bash):
# stable flows through the XDP chain, churn flows through it, stable flows
# through the AF_XDP worker.
PATHS = "scw"

WARM = 5.0          # s of traffic before the start snapshot and the churn
TAIL = 12.0         # s before the end: churn stops, configuration restored
SEGMENT_MAX = 1800  # s per generator/sink run (the tools stop at 3600)
RSS_SETTLE = 5.0    # s after a process (and the churn) started before RSS counts
KILL_GAP = 2.0      # s without a worker after each stop (the fallback forwards)
UDP_SPORT, UDP_DPORT = 1024, 9

# Chain forms swapped through, equivalent for every flow: the XDP paths
# (l2fwd after l3fwd only confirms l3fwd's port: the FDB agrees with the
# routes) and the worker path.
FORMS_XDP = [("firewall,l3fwd,l2fwd", "tailcall"), ("firewall,l3fwd,l2fwd", "fused"),
             ("firewall,l3fwd", "tailcall")]
FORMS_XSK = [("firewall,xsk", "tailcall"), ("firewall,xsk", "fused")]

# Rules that never change: prio 5 is the first rule that matches the
# stable flows (the churned rules before it never do); the others match
# none of the soak's flows.
RULES_FIXED = [
    "fw add prio 5 allow proto udp dst 198.51.100.0/24",
    "fw add prio 1000 drop proto tcp dst 198.51.100.0/24 dport 22",
    "fw add prio 1010 drop proto udp src 203.0.113.0/24 dport 53",
    "fw add prio 1020 drop proto tcp src 2001:db8:100::/48 dport 80-443",
    "fw add prio 1030 drop proto icmp dst 203.0.113.128/25",
    "fw add prio 1040 allow proto tcp src 192.0.2.0/24 dport 22",
]
STABLE_RULE = 5
UNCHANGED_PRIOS = {5, 1000, 1010, 1020, 1030, 1040}


def rule_churn(inject_loss=False):
    """One firewall change a second, a cycle that ends where it began.
    prio 100 drops the churn flows; 3 and 4 come before the stable flows'
    rule and must never match them; 50 allows half of the churn flows.
    inject_loss (the soak's own check) drops the stable XDP flows for a
    second each cycle: the soak must then report them lost, as fw_deny."""
    inject = ["fw add prio 2 drop proto udp dst 198.51.100.0/25", "fw del prio 2"]
    return (inject if inject_loss else []) + [
        "fw add prio 100 drop proto udp dst 203.0.113.0/24",
        "fw add prio 3 drop proto udp dst 198.51.100.0/24 dport 10",
        "fw del prio 100",
        "fw add prio 4 drop proto udp src 192.0.2.0/24 sport 2000-3000",
        "fw del prio 3",
        f"fw add prio 50 allow proto udp dst 203.0.113.0/24 sport {UDP_SPORT}-{UDP_SPORT + 7}",
        "fw del prio 4",
        "fw del prio 50",
    ]


def addr(cidr):
    return cidr.split("/")[0]


def route_base(tb):
    dev, mac, paths = tb.dev, tb.mac, tb.paths
    return [f"route add 198.51.100.0/25 dev {dev['s']['e']} lladdr {mac['s']['k']}",
            f"route add 198.51.100.128/25 dev {dev['w']['e']} lladdr {mac['w']['k']}",
            f"route add 203.0.113.0/24 dev {dev['c']['e']} lladdr {mac['c']['k']}",
            f"route add {addr(paths['s']['out'])}/32 local",
            f"route add {addr(paths['c']['out'])}/32 local",
            f"route add {addr(paths['w']['out'])}/32 local",
            f"fdb add {mac['s']['k']} dev {dev['s']['e']}",
            f"fdb add {mac['c']['k']} dev {dev['c']['e']}",
            f"fdb add {mac['w']['k']} dev {dev['w']['e']}"]


def route_churn(tb):
    """One route change a second, a cycle that ends where it began: the
    churn flows' /24 between a next hop and blackhole; routes the stable
    flows use rewritten with the same next hop, a more specific one with
    the same next hop added and removed; routes no flow uses."""
    dev, mac = tb.dev, tb.mac
    s, c, w = (f"dev {dev[p]['e']} lladdr {mac[p]['k']}" for p in "scw")
    return [
        "route replace 203.0.113.0/24 blackhole",
        f"route add 198.51.100.0/28 {s}",
        f"route replace 203.0.113.0/24 {c}",
        f"route replace 198.51.100.0/25 {s}",
        f"route add 203.0.113.128/25 {c}",
        f"route replace 198.51.100.128/25 {w}",
        "route del 198.51.100.0/28",
        "route add 2001:db8:ff00::/40 blackhole",
        f"fdb replace {mac['s']['k']} dev {dev['s']['e']}",
        "route del 203.0.113.128/25",
        "route del 2001:db8:ff00::/40",
    ]


# ---- small helpers ------------------------------------------------------------

class Interrupted(Exception):
    pass


def on_signal(signum, frame):
    raise Interrupted(f"signal {signum}")


def seconds(text):
    """90, 90s, 3m, 1h -> seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", str(text))
    if not m:
        raise argparse.ArgumentTypeError(f"{text}: a duration such as 90, 90s, 3m or 1h")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for ln in f:
                if ln.startswith("VmRSS:"):
                    return int(ln.split()[1])
    except OSError:
        pass
    return None


def meminfo():
    """Kernel memory of the whole machine (KiB): for information only, the
    machine is shared."""
    out = {}
    with open("/proc/meminfo") as f:
        for ln in f:
            k, v = ln.split(":", 1)
            if k in ("MemAvailable", "Slab", "SUnreclaim", "Percpu", "VmallocUsed"):
                out[k] = int(v.split()[0])
    return out


def fd_bpf_ids(pid):
    """{"prog": {ids}, "map": {ids}, "link": {ids}} of the BPF objects pid
    holds open (from /proc/PID/fdinfo)."""
    ids = {"prog": set(), "map": set(), "link": set()}
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return ids
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                text = f.read()
        except OSError:
            continue
        for kind in ids:
            m = re.search(rf"^{kind}_id:\s*(\d+)", text, re.M)
            if m:
                ids[kind].add(int(m.group(1)))
    return ids


# Fields of `xnf -j stats` that are not counters: identities and gauges.
GAUGES = {"ifindex", "utilization", "mean", "queue", "pid", "tid", "cpu", "node", "batch",
          "ring", "frames", "frame_size", "prio", "slot", "size", "timestamp", "interval"}
GAUGE_OBJS = {"frames_in"}
IDENTS = (("dev",), ("queue", "pid"), ("nf",), ("prio", "slot"), ("size",), ("cpu",))


def flatten(o, prefix, out):
    """Every counter of a stats document under a stable name: list items by
    their identity (device, NF, worker queue and pid, rule prio and slot,
    batch size, CPU), else by position."""
    if isinstance(o, dict):
        for k, v in o.items():
            if k in GAUGE_OBJS:
                continue
            if isinstance(v, bool):
                continue
            if isinstance(v, (int, float)):
                if k not in GAUGES:
                    out[f"{prefix}/{k}"] = v
            else:
                flatten(v, f"{prefix}/{k}", out)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            name = str(i)
            if isinstance(v, dict):
                for keys in IDENTS:
                    if all(k in v for k in keys):
                        name = ",".join(f"{k}={v[k]}" for k in keys)
                        break
            flatten(v, f"{prefix}/{name}", out)
    elif isinstance(o, (int, float)) and not isinstance(o, bool):
        out[prefix] = o


def dev_of(stats, dev):
    for d in (stats or {}).get("devices", []):
        if d.get("dev") == dev:
            return d
    return {}


def nf_row(d, nf):
    for r in d.get("nfs", []):
        if r.get("nf") == nf:
            return r
    return {}


def nonzero(dct):
    return {k: v for k, v in (dct or {}).items() if v}


def sub(a, b):
    """a - b for dicts of numbers (missing = 0)."""
    return {k: a.get(k, 0) - b.get(k, 0) for k in set(a) | set(b)
            if isinstance(a.get(k, 0), (int, float)) and isinstance(b.get(k, 0), (int, float))}


# ---- the soak -------------------------------------------------------------------

class Soak:
    def __init__(self, a):
        self.a = a
        self.tb = None
        self.t0 = None
        self.events = []          # {t, what, cmd, rc, ms, error}
        self.failures = []        # commands that failed
        self.samples = []         # compact time series
        self.backwards = []       # counters that decreased
        self.last = {}            # counter name -> last value seen
        self.worker = None        # Popen of the running worker
        self.incarnations = []    # one per worker run
        self.kills = 0
        self.traffic = {p: {"sent": 0, "received": 0, "duplicates": 0, "reordered": 0,
                            "gen_errors": 0, "segments": []} for p in PATHS}
        self.gens, self.sinks = {}, {}
        self.rss = {}             # pid -> {"what", "first", "last", "t_first", "t_last"}
        self.snap = {}
        self.forms = {p: 0 for p in PATHS}
        self.interrupted = None
        self.rss_from = None      # monotonic time from which RSS counts

    # ---- output ---------------------------------------------------------------
    def now(self):
        return time.monotonic() - self.t0 if self.t0 is not None else 0.0

    def say(self, msg):
        t = f"[{self.now():7.1f}s] " if self.t0 is not None else ""
        print(f"{t}{msg}", flush=True)

    # ---- commands -------------------------------------------------------------
    def xnf(self, *args, what=None, timeout=60, record=True):
        """One xnf command in the DUT; recorded as an event, failures kept."""
        t = time.monotonic()
        out, rc, err = run([self.tb.xnf, *args], ns=self.tb.dut, timeout=timeout, check=False,
                           env=self.tb.xnf_env(), stderr=True)
        ms = round((time.monotonic() - t) * 1000, 1)
        if record:
            ev = {"t": round(self.now(), 3), "what": what or args[0],
                  "cmd": " ".join(map(str, args)), "rc": rc, "ms": ms}
            if rc:
                ev["error"] = (err or out).strip()[:300]
                self.failures.append(ev)
                self.say(f"FAILED ({rc}): xnf {ev['cmd']}: {ev['error']}")
            self.events.append(ev)
        if rc and not record:
            raise CmdError(f"xnf {' '.join(map(str, args))}: {(err or out).strip()}")
        return out

    def xnf_line(self, line, what):
        return self.xnf(*line.split(), what=what)

    def stats(self):
        out = self.xnf("-j", "stats", record=False)
        return json.loads(out)

    def bg(self, cmd, ns, name, env=None):
        """A background process in ns, its output in files (a pipe could
        fill over a long run); killed by teardown if still there."""
        base = os.path.join(self.tb.tmp, f"{name}-{time.monotonic_ns()}")
        fo, fe = open(base + ".out", "w"), open(base + ".err", "w")
        p = subprocess.Popen(["ip", "netns", "exec", ns] + [str(c) for c in cmd],
                             stdout=fo, stderr=fe, env=env)
        fo.close()
        fe.close()
        p.out_path, p.err_path = base + ".out", base + ".err"
        p.t_start = time.monotonic()
        self.tb.procs.append(p)
        return p

    def reap(self, p, sig=None, timeout=15):
        """Ends p (sig, then SIGKILL) and returns (stdout, stderr)."""
        if sig is not None and p.poll() is None:
            try:
                p.send_signal(sig)
            except ProcessLookupError:
                pass
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if p in self.tb.procs:
            self.tb.procs.remove(p)
        with open(p.out_path) as fo, open(p.err_path) as fe:
            return fo.read(), fe.read()

    # ---- setup ----------------------------------------------------------------
    def setup(self):
        tb = self.tb = Testbed(os.path.abspath(self.a.build), "soak", name="xnfs",
                               tmp_name="xnf-soak", verbose=self.a.verbose)
        tb.setup()
        d = tb.dev
        for p in "sc":
            self.xnf("attach", d[p]["i"], "chain", FORMS_XDP[0][0], what="setup")
        self.xnf("attach", d["w"]["i"], "chain", FORMS_XSK[0][0], what="setup")
        lines = route_base(tb) + ["fw default allow"] + RULES_FIXED
        path = os.path.join(tb.tmp, "setup.batch")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.xnf("-b", path, what="setup")
        self.fill_generations("setup")
        if self.failures:
            raise CmdError(f"setup failed: {self.failures[0]['error']}")
        self.start_worker()

    def fill_generations(self, what):
        """The firewall keeps two generations of its tables and writes each
        change into the inactive one: apply the same rule set twice so that
        both hold it, at the start and at the end alike (else the tables'
        memory differs by whatever the inactive one held last)."""
        for _ in range(2):
            self.xnf("fw", "default", "allow", what=what)

    def start_worker(self):
        d = self.tb.dev["w"]
        left = int(self.a.duration + 180 - self.now())
        before = self.xsk_handed()
        cmd = [self.tb.xnf, "-j", "worker", d["i"], "nf", "l3fwd", "egress", d["e"],
               "cores", self.a.dut_cpu, "duration", left]
        p = self.bg(cmd, self.tb.dut, "worker", env=self.tb.xnf_env())
        for _ in range(200):
            if p.poll() is not None:
                out, err = self.reap(p)
                raise CmdError(f"xnf worker exited: {err.strip()}")
            w = (dev_of(self.stats(), d["i"]).get("workers") or [{}])[0]
            if w.get("pid") == p.pid and w.get("state") == "running":
                break
            time.sleep(0.05)
        else:
            self.reap(p, signal.SIGKILL)
            raise CmdError("xnf worker did not start running")
        self.worker = p
        self.incarnations.append({"pid": p.pid, "t_start": round(self.now(), 3),
                                  "handed_before": before})
        self.events.append({"t": round(self.now(), 3),
                            "what": "worker start", "cmd": " ".join(map(str, cmd[1:])),
                            "rc": 0, "ms": 0})

    def xsk_handed(self):
        """Packets the worker path's chain has redirected to AF_XDP so far:
        the chain's final redirects (the xsk NF's own row counts its
        verdict, socket or not; the chain's row what was carried out)."""
        d = dev_of(self.stats(), self.tb.dev["w"]["i"])
        return nf_row(d, "chain").get("redirect", 0)

    def stop_worker(self, sig):
        """Stops the worker with sig; records what it had been handed and
        what it accounted for (its counters stay in xnf_workers)."""
        p, inc = self.worker, self.incarnations[-1]
        t = time.monotonic()
        out, err = self.reap(p, sig)
        self.worker = None
        ms = round((time.monotonic() - t) * 1000, 1)
        # No socket now: the count of handed packets stands still.
        st = self.stats()
        d = dev_of(st, self.tb.dev["w"]["i"])
        w = (d.get("workers") or [{}])[0]
        if w.get("pid") != p.pid:
            w = {}
        handed = nf_row(d, "chain").get("redirect", 0) - inc["handed_before"]
        k = w.get("kernel", {})
        accounted = w.get("rx_packets", 0) + k.get("rx_dropped", 0) + k.get("rx_ring_full", 0)
        inc.update({"t_stop": round(self.now(), 3), "signal": signal.Signals(sig).name,
                    "exit": p.returncode, "stop_ms": ms, "handed": handed,
                    "rx_packets": w.get("rx_packets", 0), "tx_packets": w.get("tx_packets", 0),
                    "kernel_rx_dropped": k.get("rx_dropped", 0),
                    "kernel_rx_ring_full": k.get("rx_ring_full", 0),
                    "drops": nonzero(w.get("drop")), "nf_drops": nonzero(w.get("nf_drop")),
                    "lost_in_rings": handed - accounted})
        if err.strip() and sig != signal.SIGKILL:
            inc["stderr"] = err.strip()[-300:]
        self.events.append({"t": round(self.now(), 3), "what": "worker stop",
                            "cmd": f"kill -{inc['signal']} {p.pid}", "rc": 0, "ms": ms,
                            "lost_in_rings": inc["lost_in_rings"]})
        self.say(f"worker {p.pid} stopped ({inc['signal']}): handed {handed}, "
                 f"read {inc['rx_packets']}, left in its rings {inc['lost_in_rings']}")

    # ---- traffic --------------------------------------------------------------
    def start_traffic(self, dur):
        tb, d = self.tb, self.tb.dev
        ready = {}
        for p in PATHS:
            ready[p] = os.path.join(tb.tmp, f"ready-{p}-{time.monotonic_ns()}")
            self.sinks[p] = self.bg([os.path.join(tb.build, "xnf-sink"), d[p]["k"], "duration", int(dur + 60),
                                     "interval", 1, "ready", ready[p], "-j"],
                                    tb.sink, f"sink-{p}")
        t_end = time.monotonic() + 10
        while not all(os.path.exists(r) for r in ready.values()):
            for p, s in self.sinks.items():
                if s.poll() is not None:
                    raise CmdError(f"xnf-sink {p} exited: {self.reap(s)[1].strip()}")
            if time.monotonic() > t_end:
                raise CmdError("the sinks did not attach within 10 s")
            time.sleep(0.02)
        for p in PATHS:
            a, m = tb.paths[p], tb.mac[p]
            cmd = [os.path.join(tb.build, "xnf-gen"), d[p]["g"], "duration", round(dur, 3), "rate", self.a.rate,
                   "size", 64, "flows", self.a.flows, "ipv4", "udp", "src", a["src"],
                   "dst", addr(a["dst"]), "smac", m["g"], "dmac", m["i"],
                   "sport", UDP_SPORT, "dport", UDP_DPORT, "cpu", self.a.gen_cpu, "-j"]
            self.gens[p] = self.bg(cmd, tb.src, f"gen-{p}")
        self.seg_end = time.monotonic() + dur
        self.say(f"traffic: {len(PATHS)} x {self.a.rate} pps, {self.a.flows} flows each, "
                 f"{dur:.0f} s")

    def stop_traffic(self):
        """Waits for the generators (they end by their duration), lets what
        is in flight arrive, stops the sinks and adds up the segment."""
        for g in self.gens.values():
            left = max(5.0, self.seg_end - time.monotonic() + 30)
            try:
                g.wait(timeout=left)
            except subprocess.TimeoutExpired:
                g.send_signal(signal.SIGINT)
        time.sleep(1.0)
        for p in PATHS:
            gout, gerr = self.reap(self.gens[p], signal.SIGINT)
            sout, serr = self.reap(self.sinks[p], signal.SIGINT)
            try:
                gen = json.loads(gout)
            except json.JSONDecodeError:
                raise CmdError(f"xnf-gen {p} printed no result: {gerr.strip()[:300]}")
            lines = [ln for ln in sout.splitlines() if ln.strip()]
            try:
                snk = json.loads(lines[-1])
            except (IndexError, json.JSONDecodeError):
                raise CmdError(f"xnf-sink {p} printed no result: {serr.strip()[:300]}")
            per_s = [json.loads(ln).get("packets", 0) for ln in lines[:-1]]
            tr = self.traffic[p]
            tr["sent"] += int(gen.get("sent", 0))
            tr["received"] += int(snk.get("packets", 0)) - int(snk.get("duplicates", 0))
            tr["duplicates"] += int(snk.get("duplicates", 0))
            tr["reordered"] += int(snk.get("reordered", 0))
            tr["gen_errors"] += int(gen.get("errors", 0))
            tr["segments"].append({"gen": {k: gen.get(k) for k in
                                           ("sent", "duration_s", "pps", "slips", "errors")},
                                   "sink": {k: snk.get(k) for k in
                                            ("packets", "lost", "reordered", "duplicates",
                                             "first_seq", "last_seq", "no_probe",
                                             "bad_ip_csum")},
                                   "latency_ns": snk.get("latency_ns"),
                                   "per_second": per_s})
        self.gens, self.sinks = {}, {}

    # ---- churn ----------------------------------------------------------------
    def swap(self):
        for p in PATHS:
            forms = FORMS_XSK if p == "w" else FORMS_XDP
            self.forms[p] = (self.forms[p] + 1) % len(forms)
            self.set_form(p, forms[self.forms[p]])

    def set_form(self, p, form):
        chain, kind = form
        self.xnf("chain", "set", self.tb.dev[p]["i"], chain, kind, what="chain set")

    def kill(self):
        sig = signal.SIGTERM if self.kills % 2 == 0 else signal.SIGKILL
        self.kills += 1
        self.stop_worker(sig)

    def restore(self):
        """Back to the starting configuration: chains, routes, rules."""
        d = self.tb.dev
        for p in PATHS:
            forms = FORMS_XSK if p == "w" else FORMS_XDP
            if self.forms[p] != 0:
                self.forms[p] = 0
                self.set_form(p, forms[0])
        routes = json.loads(self.xnf("-j", "route", "show", record=False))["routes"]
        have = {r["dst"] for r in routes}
        for pfx in ("198.51.100.0/28", "203.0.113.128/25", "2001:db8:ff00::/40"):
            if pfx in have:
                self.xnf("route", "del", pfx, what="restore")
        self.xnf("route", "replace", "203.0.113.0/24", "dev", d["c"]["e"], "lladdr",
                 self.tb.mac["c"]["k"], what="restore")
        rules = json.loads(self.xnf("-j", "fw", "show", record=False))["rules"]
        for r in rules:
            if int(r.get("prio", 0)) not in UNCHANGED_PRIOS:
                self.xnf("fw", "del", "prio", r["prio"], what="restore")
        self.fill_generations("restore")

    # ---- sampling -------------------------------------------------------------
    def sample(self):
        st = self.stats()
        t = round(self.now(), 3)
        cur = {}
        flatten(st, "", cur)
        churned = re.compile(r"^/fw_hits/prio=(\d+),")
        for k, v in cur.items():
            m = churned.match(k)
            if m and int(m.group(1)) not in UNCHANGED_PRIOS:
                continue
            old = self.last.get(k)
            if old is not None and v < old:
                self.backwards.append({"t": t, "counter": k, "before": old, "after": v})
                self.say(f"COUNTER WENT BACKWARDS: {k}: {old} -> {v}")
            self.last[k] = v
        row = {"t": t}
        for p in PATHS:
            dv = dev_of(st, self.tb.dev[p]["i"])
            ch = nf_row(dv, "chain")
            row[p] = {"in": ch.get("in", 0), "redirect": ch.get("redirect", 0),
                      "drop": ch.get("drop", 0), "pass": ch.get("pass", 0)}
            if p == "w":
                w = (dv.get("workers") or [{}])[0]
                row[p]["worker_rx"] = w.get("rx_packets", 0)
        self.samples.append(row)
        for pid, what in self.long_lived(settled=True):
            r = rss_kib(pid)
            if r is None:
                continue
            e = self.rss.setdefault(pid, {"what": what, "first": r, "t_first": t})
            e["last"], e["t_last"] = r, t
            e.setdefault("series", []).append([t, r])
            e["max"] = max(e.get("max", r), r)
        return st

    def long_lived(self, settled=False):
        """(pid, what) of the running generators, sinks and worker; with
        settled, only those past their start-up (RSS_SETTLE s: a worker's
        rings and UMEM fill in over its first seconds)."""
        procs = [(p, f"xnf-gen {k}") for k, p in self.gens.items()]
        procs += [(p, f"xnf-sink {k}") for k, p in self.sinks.items()]
        if self.worker:
            procs.append((self.worker, "xnf worker"))
        t = time.monotonic()
        if settled and (self.rss_from is None or t < self.rss_from):
            return []
        return [(p.pid, what) for p, what in procs if p.poll() is None and
                (not settled or t - p.t_start >= RSS_SETTLE)]

    # ---- BPF objects and memory -------------------------------------------------
    def bpf_snapshot(self):
        """This instance's BPF objects: everything pinned on the soak's bpffs
        and everything its long-lived processes hold, and what those refer
        to (a link's program, a program's maps, a prog array's programs)."""
        def show(kind):
            out = run(["bpftool", "-j", "-f", kind, "show"], timeout=60)
            return {o["id"]: o for o in json.loads(out or "[]")}
        progs, maps, links = show("prog"), show("map"), show("link")
        root = self.tb.bpffs
        pins = 0
        for _, _, files in os.walk(root):
            pins += len(files)
        want = {"prog": set(), "map": set(), "link": set()}
        for kind, objs in (("prog", progs), ("map", maps), ("link", links)):
            for i, o in objs.items():
                if any(str(pth).startswith(root + "/") for pth in o.get("pinned", [])):
                    want[kind].add(i)
        holders = {}
        for pid, what in self.long_lived():
            ids = fd_bpf_ids(pid)
            holders[what] = {k: len(v) for k, v in ids.items()}
            for k in want:
                want[k] |= ids[k]
        changed = True
        while changed:
            changed = False
            for i in list(want["link"]):
                pid = links.get(i, {}).get("prog_id")
                if pid and pid not in want["prog"]:
                    want["prog"].add(pid)
                    changed = True
            for i in list(want["prog"]):
                for m in progs.get(i, {}).get("map_ids", []):
                    if m not in want["map"]:
                        want["map"].add(m)
                        changed = True
            for i in list(want["map"]):
                if maps.get(i, {}).get("type") != "prog_array":
                    continue
                for pid in self.prog_array_ids(i):
                    if pid not in want["prog"]:
                        want["prog"].add(pid)
                        changed = True
        present = {k: {i for i in v if i in (progs if k == "prog" else
                                             maps if k == "map" else links)}
                   for k, v in want.items()}
        by_name = {}
        for kind, objs in (("prog", progs), ("map", maps)):
            for i in present[kind]:
                o = objs[i]
                e = by_name.setdefault(f"{kind} {o.get('name', '?')} ({o.get('type')})",
                                       {"count": 0, "memlock": 0})
                e["count"] += 1
                e["memlock"] += o.get("bytes_memlock", 0)
        snap = {
            "t": round(self.now(), 3),
            "progs": len(present["prog"]), "maps": len(present["map"]),
            "links": len(present["link"]), "pins": pins,
            "prog_memlock": sum(progs[i].get("bytes_memlock", 0) for i in present["prog"]),
            "map_memlock": sum(maps[i].get("bytes_memlock", 0) for i in present["map"]),
            "held_by_processes": holders,
            "system": {"progs": len(progs), "maps": len(maps), "links": len(links),
                       "memlock": sum(o.get("bytes_memlock", 0) for o in progs.values()) +
                       sum(o.get("bytes_memlock", 0) for o in maps.values())},
            "meminfo_kib": meminfo(),
            "by_name": by_name,
        }
        return snap

    def prog_array_ids(self, map_id):
        try:
            out = run(["bpftool", "-j", "map", "dump", "id", map_id], timeout=30)
        except CmdError:
            return []
        ids = []
        for e in json.loads(out or "[]"):
            v = e.get("value")
            if isinstance(v, int):
                ids.append(v)
            elif isinstance(v, list) and v:
                ids.append(int.from_bytes(bytes(int(x, 16) for x in v), "little"))
        return ids

    def dev_counters(self):
        """Per device: the kernel's drop counters (ip -s) and the veth's
        own (ethtool -S), every device of the soak."""
        out = {}
        for ns in (self.tb.src, self.tb.dut, self.tb.sink):
            links = json.loads(run(["ip", "-s", "-j", "link", "show"], ns=ns))
            for ln in links:
                name = ln["ifname"]
                if name == "lo":
                    continue
                s = ln.get("stats64", {})
                c = {"rx_packets": s.get("rx", {}).get("packets", 0),
                     "tx_packets": s.get("tx", {}).get("packets", 0),
                     "rx_dropped": s.get("rx", {}).get("dropped", 0),
                     "tx_dropped": s.get("tx", {}).get("dropped", 0)}
                et = run(["ethtool", "-S", name], ns=ns, check=False)
                for m in re.finditer(r"^\s*(\w+):\s*(\d+)\s*$", et, re.M):
                    if m.group(1) != "peer_ifindex":
                        c[m.group(1)] = int(m.group(2))
                out[name] = c
        return out

    def kernel_snmp(self):
        out = run(["cat", "/proc/net/snmp"], ns=self.tb.dut)
        lines = [ln.split() for ln in out.splitlines() if ln.startswith("Ip:")]
        return dict(zip(lines[0][1:], map(int, lines[1][1:]))) if len(lines) >= 2 else {}

    # ---- the run --------------------------------------------------------------
    def loop(self):
        a = self.a
        D = a.duration
        base = self.now()

        def el():
            return self.now() - base
        self.dev0 = self.dev_counters()
        self.snmp0 = self.kernel_snmp()
        self.stats0 = self.stats()
        seg_starts = []
        t = 0.0
        while t < D:
            seg_starts.append(t)
            t += SEGMENT_MAX
        seg = 0
        self.start_traffic(min(SEGMENT_MAX, D))
        time.sleep(WARM)
        self.sample()
        self.snap["start"] = self.bpf_snapshot()
        self.say(f"start: {self.snap['start']['progs']} programs, {self.snap['start']['maps']} "
                 f"maps, {self.snap['start']['links']} links, {self.snap['start']['pins']} pins")
        rules, routes = rule_churn(a.inject_loss), route_churn(self.tb)
        self.rss_from = time.monotonic() + RSS_SETTLE
        nrule = nroute = nswap = 0
        churn_end = D - TAIL
        next_churn = next_sample = el()
        next_swap = WARM + a.swap
        next_kill = WARM + a.kill / 2
        restart_at = None
        last_say = 0.0
        while el() < churn_end:
            now = el()
            if seg + 1 < len(seg_starts) and now >= seg_starts[seg + 1]:
                self.stop_traffic()
                seg += 1
                self.start_traffic(min(SEGMENT_MAX, D - seg_starts[seg]))
            if now >= next_churn:
                self.xnf_line(rules[nrule % len(rules)], "rule")
                self.xnf_line(routes[nroute % len(routes)], "route")
                nrule += 1
                nroute += 1
                next_churn += a.churn
                if next_churn < now:    # commands slower than the interval
                    next_churn = now + a.churn
            if now >= next_swap:
                self.swap()
                nswap += 1
                self.say("chain swap: " + ", ".join(
                    f"{p} {(FORMS_XSK if p == 'w' else FORMS_XDP)[self.forms[p]]}"
                    for p in PATHS))
                next_swap += a.swap
            if restart_at is None and now >= next_kill and self.worker:
                self.kill()
                restart_at = el() + KILL_GAP
                next_kill += a.kill
            if restart_at is not None and el() >= restart_at:
                self.start_worker()
                restart_at = None
            if now >= next_sample:
                self.sample()
                next_sample = max(next_sample + a.sample, now)
            if now - last_say >= 30:
                last_say = now
                self.say(f"{nrule} rule and {nroute} route changes, "
                         f"{len(self.incarnations) - 1} worker restarts, "
                         f"{len(self.failures)} failed commands, "
                         f"{len(self.backwards)} counters backwards")
            nxt = min(next_churn, next_sample, next_swap, next_kill,
                      restart_at if restart_at is not None else churn_end, churn_end)
            time.sleep(max(0.0, min(0.25, nxt - el())))
        if restart_at is not None or not self.worker:
            self.start_worker()
        self.restore()
        self.churn = {"rule_changes": nrule, "route_changes": nroute,
                      "swaps": nswap,
                      "worker_stops": self.kills}
        time.sleep(2.0)
        self.sample()
        self.snap["end"] = self.bpf_snapshot()
        self.stop_traffic()
        self.sample()
        self.stop_worker(signal.SIGTERM)
        self.stats1 = self.sample()
        self.dev1 = self.dev_counters()
        self.snmp1 = self.kernel_snmp()

    # ---- accounting -----------------------------------------------------------
    def account(self):
        d = self.tb.dev
        dc = {n: sub(self.dev1.get(n, {}), self.dev0.get(n, {})) for n in self.dev1}

        def veth_drops(p):
            """Drops the veths counted on the path: a sender's tx_dropped
            (its skb drops, XDP_TX errors and frames its peer's ring had no
            room for) and a receiver's own ring drops; never both ends of
            one count."""
            g, i, e, k = (d[p][x] for x in "giek")
            parts = {f"{g} tx_dropped": dc[g]["tx_dropped"],
                     f"{e} tx_dropped": dc[e]["tx_dropped"],
                     f"{i} rx_queue_0_drops": dc[i].get("rx_queue_0_drops", 0),
                     f"{k} rx_queue_0_drops": dc[k].get("rx_queue_0_drops", 0)}
            return sum(parts.values()), nonzero(parts)

        res = {}
        for p in PATHS:
            tr = self.traffic[p]
            dv1, dv0 = dev_of(self.stats1, d[p]["i"]), dev_of(self.stats0, d[p]["i"])
            ch = sub(nf_row(dv1, "chain"), nf_row(dv0, "chain"))
            drops = nonzero(sub(dv1.get("drop_reasons", {}), dv0.get("drop_reasons", {})))
            passes = nonzero(sub(dv1.get("pass_reasons", {}), dv0.get("pass_reasons", {})))
            tail = sum(dv1.get("tail_miss", [])) - sum(dv0.get("tail_miss", []))
            vd, vparts = veth_drops(p)
            lost = tr["sent"] - tr["received"]
            r = {"sent": tr["sent"], "received": tr["received"], "lost": lost,
                 "veth_drops": vd, "veth_drop_counters": vparts,
                 "chain": {k: ch.get(k, 0) for k in ("in", "pass", "drop", "redirect",
                                                     "in_bytes", "redirect_bytes")},
                 "drop_reasons": drops, "pass_reasons": passes, "tail_miss": tail,
                 "duplicates": tr["duplicates"], "reordered": tr["reordered"],
                 "hop_in_missing": tr["sent"] - ch.get("in", 0)}
            attributed = {}
            if p == "w":
                term = sum(i.get("lost_in_rings", 0) for i in self.incarnations
                           if i.get("signal") == "SIGTERM")
                killed = sum(i.get("lost_in_rings", 0) for i in self.incarnations
                             if i.get("signal") == "SIGKILL")
                wdrops = {}
                for inc in self.incarnations:
                    for k2, v in {**inc.get("drops", {}), **{f"nf_{x}": y for x, y in
                                                          inc.get("nf_drops", {}).items()},
                                  "kernel_rx_dropped": inc.get("kernel_rx_dropped", 0),
                                  "kernel_rx_ring_full": inc.get("kernel_rx_ring_full", 0)
                                  }.items():
                        if v:
                            wdrops[k2] = wdrops.get(k2, 0) + v
                fwd = self.snmp1.get("ForwDatagrams", 0) - self.snmp0.get("ForwDatagrams", 0)
                r["worker"] = {"incarnations": len(self.incarnations),
                               "rx": sum(i.get("rx_packets", 0) for i in self.incarnations),
                               "tx": sum(i.get("tx_packets", 0) for i in self.incarnations),
                               "drops": wdrops,
                               "left_in_rings_at_sigterm": term,
                               "left_in_rings_at_sigkill": killed,
                               "kernel_forwarded": fwd}
                if term:
                    attributed["frames left in a stopped (SIGTERM) worker's RX ring"] = term
                for k2, v in wdrops.items():
                    attributed[f"worker drop {k2}"] = v
                r["excused"] = {"frames left in a killed (SIGKILL) worker's RX ring": killed}
            else:
                r["excused"] = {}
            for k2, v in drops.items():
                attributed[f"xnf drop {k2}"] = v
            for k2, v in passes.items():
                if p == "w" and k2 == "xsk_no_socket":
                    continue      # the kernel forwards these (the fallback)
                attributed[f"xnf pass {k2}"] = v
            if tail:
                attributed["xnf tail_miss"] = tail
            r["attributed"] = attributed
            excused = sum(r["excused"].values())
            r["lost_xnf"] = lost - vd - excused
            r["unattributed"] = r["lost_xnf"] - sum(attributed.values())
            res[p] = r
        return res

    # ---- report ---------------------------------------------------------------
    def report(self, started, finished):
        a = self.a
        rep = {"schema": 1, "started": started, "finished": finished,
               "host": platform.node(), "kernel": platform.release(),
               "cpus": os.cpu_count(), "loadavg": os.getloadavg(),
               "config": {"duration_s": a.duration, "swap_s": a.swap, "kill_s": a.kill,
                          "churn_s": a.churn, "sample_s": a.sample, "rate_pps": a.rate,
                          "flows": a.flows, "gen_cpu": a.gen_cpu, "dut_cpu": a.dut_cpu,
                          "rss_tolerance_kib": a.rss_tolerance,
                          "bpf_memlock_tolerance_bytes": a.memlock_tolerance},
               "interrupted": self.interrupted, "failed_commands": self.failures}
        targets = []
        if self.interrupted:
            targets.append({"target": "the soak ran to its end", "met": False,
                            "value": self.interrupted})
        if hasattr(self, "stats1"):
            acc = self.account()
            rep["paths"] = acc
            rep["churn"] = self.churn
            stable = {p: acc[p]["lost_xnf"] for p in ("s", "w")}
            targets.append({"target": "stable packets lost (both configurations forward them)",
                            "met": all(v == 0 for v in stable.values()),
                            "value": sum(stable.values()), "by_path": stable})
            targets.append({"target": "churn packets not accounted for",
                            "met": acc["c"]["unattributed"] == 0,
                            "value": acc["c"]["unattributed"]})
            hits = next((h.get("packets", 0) for h in self.stats1.get("fw_hits", [])
                         if h.get("prio") == STABLE_RULE), None)
            fw_in = sum(nf_row(dev_of(self.stats1, self.tb.dev[p]["i"]), "firewall")
                        .get("in", 0) for p in ("s", "w"))
            rep["stable_rule_hits"] = {"prio": STABLE_RULE, "hits": hits,
                                       "firewall_in_stable_paths": fw_in}
            targets.append({"target": f"hits of the unchanged rule prio {STABLE_RULE} = "
                                      "packets its firewalls saw",
                            "met": hits == fw_in, "value": f"{hits} vs {fw_in}"})
        targets.append({"target": "no counter went backwards", "met": not self.backwards,
                        "value": len(self.backwards)})
        rep["counters_backwards"] = self.backwards[:200]
        rep["counters_checked"] = len(self.last)
        s0, s1 = self.snap.get("start"), self.snap.get("end")
        rep["bpf"] = {"start": s0, "end": s1}
        if s0 and s1:
            growth = {k: s1[k] - s0[k] for k in ("progs", "maps", "links", "pins",
                                                 "prog_memlock", "map_memlock")}
            rep["bpf"]["growth"] = growth
            b0, b1 = s0["by_name"], s1["by_name"]
            rep["bpf"]["changed"] = {
                k: {"start": b0.get(k), "end": b1.get(k)} for k in sorted(set(b0) | set(b1))
                if b0.get(k) != b1.get(k)}
            targets.append({"target": "BPF programs, maps, links and pins: no growth",
                            "met": all(growth[k] <= 0 for k in ("progs", "maps", "links",
                                                               "pins")),
                            "value": {k: growth[k] for k in ("progs", "maps", "links",
                                                             "pins")}})
            mem = growth["prog_memlock"] + growth["map_memlock"]
            targets.append({"target": f"BPF memlock growth <= {a.memlock_tolerance} bytes",
                            "met": mem <= a.memlock_tolerance, "value": mem})
        rss = []
        for pid, e in sorted(self.rss.items()):
            rss.append({"pid": pid, **e, "growth_kib": e["last"] - e["first"]})
        rep["rss"] = rss
        worst = max((r["growth_kib"] for r in rss), default=0)
        targets.append({"target": f"RSS growth of every long-lived process <= "
                                  f"{a.rss_tolerance} KiB",
                        "met": worst <= a.rss_tolerance, "value": worst})
        targets.append({"target": "every xnf command succeeded", "met": not self.failures,
                        "value": len(self.failures)})
        rep["targets"] = targets
        rep["worker_incarnations"] = self.incarnations
        rep["events"] = self.events
        rep["samples"] = self.samples
        rep["traffic"] = self.traffic
        rep["ok"] = all(t["met"] for t in targets)
        return rep

    def summary(self, rep):
        L = []
        c = rep["config"]
        L.append(f"xnf soak: {c['duration_s'] / 60:.1f} min, {c['rate_pps']} pps per flow set "
                 f"x 3, {c['flows']} flows each; rules and routes every {c['churn_s']:g} s, "
                 f"chain swap every {c['swap_s']:g} s, worker stop every {c['kill_s']:g} s")
        if rep.get("churn"):
            ch = rep["churn"]
            L.append(f"churn: {ch['rule_changes']} rule changes, {ch['route_changes']} route "
                     f"changes, {ch['swaps']} chain swaps (x3 devices), "
                     f"{ch['worker_stops']} worker stops/kills")
        names = {"s": "stable (XDP chain)", "c": "churn (XDP chain)",
                 "w": "stable (AF_XDP worker)"}
        for p, r in (rep.get("paths") or {}).items():
            L.append(f"{names[p]:24s} sent {r['sent']:>9} received {r['received']:>9} "
                     f"lost {r['lost']:>6}  veth drops {r['veth_drops']}  "
                     f"lost by xnf {r['lost_xnf']}")
            if r["attributed"]:
                L.append("    attributed: " + ", ".join(f"{k} {v}"
                                                        for k, v in r["attributed"].items()))
            if any(r["excused"].values()):
                L.append("    not counted: " + ", ".join(f"{k} {v}"
                                                         for k, v in r["excused"].items()))
            if r["unattributed"]:
                L.append(f"    UNATTRIBUTED: {r['unattributed']}")
            if p == "w":
                w = r["worker"]
                L.append(f"    worker: {w['incarnations']} runs, rx {w['rx']} tx {w['tx']}, "
                         f"kernel forwarded {w['kernel_forwarded']} while none ran")
        b = rep.get("bpf") or {}
        if b.get("start") and b.get("end"):
            s0, s1 = b["start"], b["end"]
            L.append(f"BPF (this instance): programs {s0['progs']} -> {s1['progs']}, maps "
                     f"{s0['maps']} -> {s1['maps']}, links {s0['links']} -> {s1['links']}, "
                     f"pins {s0['pins']} -> {s1['pins']}")
            L.append(f"BPF memlock: programs {s0['prog_memlock']} -> {s1['prog_memlock']} B, "
                     f"maps {s0['map_memlock']} -> {s1['map_memlock']} B")
            m0, m1 = s0["meminfo_kib"], s1["meminfo_kib"]
            L.append("machine (shared, no target): " + ", ".join(
                f"{k} {m1[k] - m0[k]:+d} KiB" for k in m0 if k in m1))
        for r in rep.get("rss", []):
            L.append(f"RSS {r['what']:12s} pid {r['pid']:>7}: {r['first']} -> {r['last']} KiB "
                     f"({r['growth_kib']:+d}) over {r['t_last'] - r['t_first']:.0f} s")
        L.append(f"counters checked: {rep['counters_checked']}, went backwards: "
                 f"{len(rep['counters_backwards'])}")
        for t in rep["targets"]:
            L.append(f"  [{'met' if t['met'] else 'MISSED'}] {t['target']}: {t['value']}")
        L.append("result: " + ("every target met" if rep["ok"] else "TARGET MISSED"))
        return "\n".join(L)

    def main(self):
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        out_dir = os.path.abspath(self.a.out)
        os.makedirs(out_dir, exist_ok=True)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, on_signal)
        rc = 0
        self.t0 = time.monotonic()
        try:
            self.setup()
            self.loop()
        except Interrupted as ex:
            self.interrupted = str(ex)
            self.say(f"interrupted ({ex}): cleaning up")
            rc = 130
        except CmdError as ex:
            self.interrupted = f"error: {ex}"
            self.say(f"error: {ex}")
            rc = 2
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_IGN)
            try:
                rep = self.report(started, time.strftime("%Y-%m-%dT%H:%M:%S%z"))
            finally:
                if self.tb:
                    self.tb.teardown()
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)
        text = self.summary(rep)
        with open(os.path.join(out_dir, "report.json"), "w") as f:
            json.dump(rep, f, indent=1, sort_keys=True)
        with open(os.path.join(out_dir, "summary.txt"), "w") as f:
            f.write(text + "\n")
        print(text)
        print(f"report: {os.path.join(out_dir, 'report.json')}")
        if rc:
            return rc
        return 0 if rep["ok"] else 1


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="xnf soak: paced traffic through the 3-NF chain and an AF_XDP worker "
                    "while routes, rules and chains change and the worker is restarted",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--duration", type=seconds, default="30m", help="how long (90, 90s, 3m, 1h)")
    p.add_argument("--swap", type=seconds, default="60s", help="chain swap interval")
    p.add_argument("--kill", type=seconds, default="30s",
                   help="worker stop interval (SIGTERM and SIGKILL in turn)")
    p.add_argument("--churn", type=seconds, default="1s",
                   help="one rule and one route change every this long")
    p.add_argument("--sample", type=seconds, default="5s", help="xnf -j stats sampling interval")
    p.add_argument("--rate", type=int, default=1000, help="packets per second per flow set "
                   "(3 sets); up to 1000 the generators sleep between frames")
    p.add_argument("--flows", type=int, default=16, help="flows (source ports) per flow set")
    p.add_argument("--gen-cpu", type=int, default=0)
    p.add_argument("--dut-cpu", type=int, default=1, help="the worker's CPU")
    p.add_argument("--rss-tolerance", type=int, default=512,
                   help="KiB of RSS growth allowed per long-lived process")
    p.add_argument("--memlock-tolerance", type=int, default=0,
                   help="bytes of BPF memlock growth allowed")
    p.add_argument("--inject-loss", action="store_true",
                   help="check the soak itself: a rule drops the stable XDP flows for a second "
                        "every cycle, which must be reported as lost (fw_deny)")
    p.add_argument("--out", default=os.path.join(TOP, "build", "soak"), help="results directory")
    p.add_argument("--build", default=os.path.join(TOP, "build"), help="build directory")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    if a.duration < WARM + TAIL + 10:
        p.error(f"--duration: at least {WARM + TAIL + 10:g} s")
    if a.rate < 1 or a.flows < 1 or a.churn <= 0 or a.sample <= 0 or a.swap <= 0 or a.kill <= 0:
        p.error("rates, flows and intervals must be positive")
    if a.kill <= KILL_GAP + 1:
        p.error(f"--kill: more than {KILL_GAP + 1:g} s (the worker is down {KILL_GAP:g} s)")
    return a


def main():
    a = parse_args(sys.argv[1:])
    if os.geteuid() != 0:
        print("xnf soak: needs root (network namespaces, XDP, bpffs)", file=sys.stderr)
        return 2
    return Soak(a).main()


if __name__ == "__main__":
    sys.exit(main())
