# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
Readers of measurements: the output of `xnf -j stats` and `xnf -j worker`
(also the one object per refresh of `xnf -j stats watch`), the bench
harness's model/sweep.json and the NAPI histogram of `xnf -j stats`, turned
into what the model needs (Measured: ring, batch limit, per-size service
times, the measured batch distribution, rate, loss and busy fraction).
"""
# Input files: `xnf stats -j` / `xnf worker -j` output (a "workers" array of
# worker objects with batch, ring, rx_packets, kernel{rx_dropped,
# rx_ring_full}, batch_hist[{size,batches,ns,ns_sq}]), the bench harness's
# model/sweep.json ({"ring","batch","points":[{offered_pps, sent, received,
# duration_s, worker}]}), and the NAPI histogram of `xnf stats -j`
# (devices[].batch.polls, 0..63 and 64+, with timed/ns: the polls' times
# by size, from the first packet's XDP run to the end of the poll), compared
# on sizes >= 1; a sweep's XDP path is read by xdp_sweep (validate --path
# xdp).

import json

import numpy as np

from .model import STEADY_SPEED, ModelError
from .output import fmt_rate

XNF_IDLE_SPINS = 64     # userspace/worker.c IDLE_SPINS
NAPI_BUDGET = 64        # packets per NAPI poll (bucket 64 is "64 or more")
VETH_RING = 256         # drivers/net/veth.c VETH_RING_SIZE
STRETCH_POLLS = 200     # polls a stretch of a trial needs to be compared
STRETCH_CYCLES = 50     # cycles of the trial's commonest size it needs for a speed
FULL_SHARE = 0.25       # the share of a trial's packets full polls carry for a speed


def load_json(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ModelError("cannot read %s: %s" % (path, e.strerror))
    # `xnf stats -j watch` writes one object per refresh: use the last.
    dec = json.JSONDecoder()
    objs, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        try:
            o, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise ModelError("%s is not JSON (%s): give the output of "
                             "'xnf -j stats', 'xnf -j worker' or the bench "
                             "harness's model/sweep.json" % (path, e))
        objs.append(o)
    if not objs:
        raise ModelError("%s is empty" % path)
    return objs[-1]


def is_worker(o):
    return isinstance(o, dict) and "batch_hist" in o and "batch" in o


def find_workers(o, dev=None):
    """Worker objects anywhere in a stats/worker JSON, with their device."""
    out = []

    def walk(x, d):
        if isinstance(x, dict):
            d = x.get("dev", d)
            for w in x.get("workers", []) or []:
                if is_worker(w):
                    out.append((w.get("dev", d), w))
            for k, v in x.items():
                if k != "workers":
                    walk(v, d)
        elif isinstance(x, list):
            for v in x:
                walk(v, d)
    walk(o, None)
    if dev:
        out = [w for w in out if w[0] == dev]
    return out


def find_napi(o, dev=None):
    """(dev, polls[65]) of the devices of `xnf stats -j` with a histogram."""
    out = []
    for d in o.get("devices", []) if isinstance(o, dict) else []:
        b = d.get("batch")
        if isinstance(b, dict) and b.get("recorded") and b.get("polls"):
            if dev is None or d.get("dev") == dev:
                out.append((d.get("dev"), b["polls"]))
    return out


def worker_hist(w):
    h = w.get("batch_hist") or []
    for e in h:
        for k in ("size", "batches"):
            if k not in e:
                raise ModelError("a batch_hist entry lacks '%s'" % k)
        e.setdefault("ns", 0)
    return h


def worker_counts(w, beta):
    c = np.zeros(beta + 1)
    for e in worker_hist(w):
        if e["size"] > beta:
            raise ModelError("the measurement has batches of %d packets, "
                             "above beta %d" % (e["size"], beta))
        c[e["size"]] += e["batches"]
    return c


def until_last_packet(w):
    """A worker's counters as they were at its last packet: the record less
    its idle_run, the empty reads since then (with their sleeps). Those
    wait for traffic that has stopped (the end of a trial: 64 empty reads,
    then a sleep every 50 ms until the next packet), so a measurement of
    the traffic ends before them. A record whose idle_run began before the
    record did (a delta without packets), or without one (an xnf before
    it), is returned as it is."""
    r = w.get("idle_run")
    reads = int((r or {}).get("reads", 0)) if isinstance(r, dict) else 0
    hist = worker_hist(w)
    h0 = next((e for e in hist if e["size"] == 0), None)
    if not reads or h0 is None or reads > h0["batches"] or \
            reads > int(w.get("empty_polls", reads)):
        return w
    ns, ns_sq = int(r.get("ns", 0)), int(r.get("ns_sq", 0))
    sleeps, sleep_ns = int(r.get("sleeps", 0)), int(r.get("sleep_ns", 0))
    out = dict(w, idle_run={k: 0 for k in r})
    for k, v in (("polls", reads), ("empty_polls", reads), ("sleeps", sleeps),
                 ("sleep_ns", sleep_ns), ("idle_ns", ns + sleep_ns)):
        if k in out:
            out[k] = max(int(out[k]) - v, 0)
    e0 = dict(h0, batches=h0["batches"] - reads,
              ns=max(int(h0.get("ns", 0)) - ns, 0))
    if "ns_sq" in h0:
        e0["ns_sq"] = max(int(h0["ns_sq"]) - ns_sq, 0)
    out["batch_hist"] = [e0 if e is h0 else e for e in hist
                         if e is not h0 or e0["batches"]]
    if "utilization" in out:
        out["utilization"] = worker_busy(out)
    return out


def worker_ring_drops(w):
    k = w.get("kernel") or {}
    return int(k.get("rx_dropped", 0)) + int(k.get("rx_ring_full", 0))


def worker_loss(w):
    """Loss at the RX ring, the model's queue: what the kernel dropped for a
    full ring or a missing fill frame, over what reached the socket."""
    drops = worker_ring_drops(w)
    tot = int(w.get("rx_packets", 0)) + drops
    return drops / tot if tot else 0.0


def worker_rate(w, duration_s=None):
    arrived = int(w.get("rx_packets", 0)) + worker_ring_drops(w)
    secs = duration_s or (w.get("busy_ns", 0) + w.get("idle_ns", 0)) * 1e-9
    return arrived / secs if secs > 0 else 0.0


def worker_busy(w):
    b, i = w.get("busy_ns", 0), w.get("idle_ns", 0)
    return b / (b + i) if b + i > 0 else float("nan")


def pool_sweep(pts):
    """The batch histograms of all points of a sweep added up (the paper's
    global fit), and the empty-read cost bound over its workers."""
    pooled = {}
    ws = [pt.get("worker") for pt in pts if pt.get("worker")]
    if not ws:
        raise ModelError("no point of the sweep has worker counters")
    for w in ws:
        for e in worker_hist(w):
            s = pooled.setdefault(e["size"], {"size": e["size"],
                                              "batches": 0, "ns": 0,
                                              "ns_sq": 0})
            for k in ("batches", "ns", "ns_sq"):
                s[k] += e.get(k, 0) or 0
    return [pooled[k] for k in sorted(pooled)], idle_per_empty(ws)


def idle_per_empty(workers):
    """Lowest idle_ns / empty_polls over workers: the cost of an empty read
    where the worker slept least (an upper bound)."""
    vals = [w["idle_ns"] / w["empty_polls"] for w in workers
            if w and w.get("empty_polls") and w.get("idle_ns")]
    return min(vals) if vals else None


def default_spins(w):
    """The xnf worker sleeps after IDLE_SPINS empty reads unless it busy-polls
    (or was started with spin, which it records as idle_spins when known)."""
    if "idle_spins" in w:
        s = w["idle_spins"]
        return None if s is None or s < 0 else int(s)
    return None if w.get("busy_poll") else XNF_IDLE_SPINS


def sweep_until_last_packet(sweep):
    """A harness sweep whose points' worker counters end at their last
    packet (until_last_packet)."""
    return dict(sweep, points=[
        dict(pt, worker=until_last_packet(pt["worker"])) if pt.get("worker")
        else pt for pt in sweep.get("points") or []])


def worker_overhead(pt):
    """The worker thread's CPU time per packet outside its timed reads (ns):
    its run time over the trial (worker_sched.run_ns, the harness's
    schedstat delta) less every read's time, over its packets; at a point
    where under 1% of its reads were empty (it never waited for packets:
    what is left is its loop around the reads, the fill ring's refill of
    the frames read, frame by frame), else None."""
    w, sc = pt.get("worker"), pt.get("worker_sched") or {}
    if not w or not sc.get("run_ns") or not w.get("rx_packets"):
        return None
    hist = worker_hist(w)
    reads = sum(int(e["batches"]) for e in hist)
    empty = sum(int(e["batches"]) for e in hist if e["size"] == 0)
    if not reads or empty >= 0.01 * reads:
        return None
    return max(int(sc["run_ns"]) - sum(int(e.get("ns", 0)) for e in hist),
               0) / int(w["rx_packets"])


def worker_sweep(sweep):
    """A harness sweep of the worker as the model takes it: each point's
    counters until its last packet (until_last_packet), and each batch of
    i packets its time plus i times the worker's own work per packet
    outside its timed reads: a point's own where it never waited for
    packets (worker_overhead()), any other point the median of those, 0
    without one (in the result as packet_overhead_ns, each point's in its
    own)."""
    pts = sweep.get("points") or []
    own = [worker_overhead(pt) for pt in pts]
    over = [x for x in own if x is not None]
    median = float(np.median(over)) if over else 0.0
    out = []
    for pt, mine in zip(pts, own):
        if not pt.get("worker"):
            out.append(pt)
            continue
        extra = median if mine is None else mine
        w = until_last_packet(pt["worker"])
        hist = []
        for e in worker_hist(w):
            if e["size"] >= 1 and extra:
                n, ns, add = int(e["batches"]), int(e.get("ns", 0)), extra * e["size"]
                e = dict(e, ns=int(ns + add * n))
                if "ns_sq" in e:
                    e["ns_sq"] = int(int(e["ns_sq"]) + 2 * add * ns + add * add * n)
            hist.append(e)
        out.append(dict(pt, worker=dict(w, batch_hist=hist),
                        packet_overhead_ns=extra))
    return dict(sweep, points=out, packet_overhead_ns=median)


def xdp_sweep(sweep):
    """The XDP path of a harness sweep as a sweep of one poll-mode server:
    per point, the ingress device's NAPI polls by size with their times
    (napi.timed, napi.ns: from the first packet's XDP run to the end of the
    poll), the veth ring in front of them (napi.ring, 256) and the frames it
    refused (the sender veth's tx_dropped); NAPI sleeps when a poll leaves
    the ring empty and nothing came while it lingered. Polls without
    packets are left out: NAPI is not woken for an empty ring, so they are
    not the model's reads.

    Each poll's time is its measured interval plus the napi thread's own
    work per poll outside it (the thread's loop, the driver's work before
    the first packet): the thread's CPU time (napi_sched.run_ns) less its
    polls' time and tails, over its polls, where it did not sleep
    (wake-ups under 1% of the polls: no wake-up's cost in it). A point
    where the thread did not sleep takes its own, as it takes its own poll
    times (the core's speed moves between trials, and this work with it);
    any other point the median of those, 0 without one (the median in the
    result as poll_overhead_ns, each point's in its own). Where perf
    recorded napi:napi_poll (napi_wake), each poll also has its tail
    (after_poll: a receiver's NAPI run after it in its softirq; per point
    poll_tail_ns, by size), a linger before each sleep (napi_linger_ns) and
    the wake-up gains the work before the first poll (napi_cycle())."""
    own = [poll_overhead(pt) for pt in sweep.get("points") or []]
    over = [x for x in own if x is not None]
    median = float(np.median(over)) if over else 0.0
    fit = tail_fit(sweep.get("points") or [])
    pts = []
    for pt, mine in zip(sweep.get("points") or [], own):
        extra = median if mine is None else mine
        n = pt.get("napi") or {}
        polls, timed, ns = n.get("polls"), n.get("timed"), n.get("ns")
        if not polls or not timed or not ns or not pt.get("duration_s"):
            raise ModelError("--path xdp needs per point the NAPI polls with "
                             "their times (\"napi\": \"polls\", \"timed\", "
                             "\"ns\"), which the harness records since "
                             "xnf_batch times its polls")
        veth = pt.get("veth") or {}
        refused = sum(int(v.get("tx_dropped", 0)) for v in veth.values())
        busy = int(sum(ns) + extra * sum(timed[1:]))
        after = after_poll(pt.get("napi_wake"))
        hist = [{"size": i, "batches": int(timed[i]),
                 "ns": int(ns[i] + (extra + after.get(i, 0.0)) * timed[i])}
                for i in range(1, len(timed)) if timed[i]]
        busy += int(sum(after.get(i, 0.0) * timed[i] for i in range(1, len(timed))))
        wake = pt.get("napi_wake")
        if isinstance(wake, dict):
            wake, linger = napi_cycle(wake, timed, ns, extra)
            pt = dict(pt, napi_wake=wake, napi_linger_ns=linger)
        w = {"batch_hist": hist,
             "rx_packets": int(sum(i * c for i, c in enumerate(polls))),
             "kernel": {"rx_ring_full": refused, "rx_dropped": 0},
             "busy_ns": busy,
             "idle_ns": max(int(pt["duration_s"] * 1e9) - busy, 0),
             "idle_spins": 0}
        if after:
            counts = {int(k): c for k, c, _ in pt["napi_wake"]["after_poll"]}
            pt = dict(pt, poll_tail_ns=poll_tail(after, counts, len(timed) - 1,
                                                 fit).tolist())
        pts.append(dict(pt, worker=w, worker_sched=None,
                        poll_overhead_ns=extra))
    n0 = (sweep.get("points") or [{}])[0].get("napi") or {}
    return dict(sweep, points=pts, ring=n0.get("ring") or VETH_RING,
                batch=n0.get("budget") or NAPI_BUDGET, poll_overhead_ns=median)


def poll_overhead(pt):
    """The napi thread's CPU time per poll outside its polls and their
    tails (ns), at a point of an XDP sweep where it did not sleep
    (wake-ups under 1% of its polls), else None."""
    n, sc = pt.get("napi") or {}, pt.get("napi_sched") or {}
    timed, ns = n.get("timed") or [], n.get("ns") or []
    polls = sum(timed[1:])
    wake = pt.get("napi_wake") if isinstance(pt.get("napi_wake"), dict) else {}
    wakes = wake.get("count")
    if not sc.get("run_ns") or not polls or wakes is None or \
            wakes >= 0.01 * polls:
        return None
    after = sum(x[2] for x in wake.get("after_poll") or [])
    return max(sc["run_ns"] - sum(ns) - after, 0) / polls


def stretch_summary(wake):
    """Whether an XDP trial was steady, from perf's stretches of its polls
    (napi_wake.stretches, waketrace.stretches()), or None without them. Of
    the stretches with STRETCH_POLLS polls with packets: how many
    ("count"), their mean packets a poll ("batch_min", "batch_max"), and the
    napi thread's speed at the commonest size of the trial's polls that
    followed a full one without a wait ("size"): the trial's mean cycle of
    that size over the stretch's (1 the trial's; above 1 faster), over the
    stretches with STRETCH_CYCLES of them ("speed_min", "speed_max"; None
    with fewer than two, or where full polls carried under FULL_SHARE of
    the packets: the few full ones below saturation follow a stall)."""
    st = (wake or {}).get("stretches") if isinstance(wake, dict) else None
    if not st or not st.get("list"):
        return None
    parts = []
    for s in st["list"]:
        polls = {int(n): c for n, c in s.get("polls") or [] if int(n) >= 1}
        cyc = {int(n): (c, ns) for n, c, ns in s.get("cycles") or []}
        if sum(polls.values()) >= STRETCH_POLLS:
            parts.append((polls, cyc))
    if not parts:
        return None
    mean = [sum(n * c for n, c in p.items()) / sum(p.values()) for p, _ in parts]
    tot = {}
    for _, cyc in parts:
        for n, (c, ns) in cyc.items():
            x = tot.setdefault(n, [0, 0])
            x[0] += c
            x[1] += ns
    out = {"count": len(parts), "batch_min": min(mean), "batch_max": max(mean),
           "size": None, "speed_min": None, "speed_max": None}
    pk = sum(n * c for p, _ in parts for n, c in p.items())
    full = sum(n * c for p, _ in parts for n, c in p.items() if n >= NAPI_BUDGET)
    if tot and full >= FULL_SHARE * pk:
        size = max(tot, key=lambda n: tot[n][0])
        ref = tot[size][1] / tot[size][0]
        speed = [ref * cyc[size][0] / cyc[size][1] for _, cyc in parts
                 if cyc.get(size, (0, 0))[0] >= STRETCH_CYCLES and cyc[size][1] > 0]
        if len(speed) >= 2:
            out.update(size=size, speed_min=min(speed), speed_max=max(speed))
    return out


def gen_pauses(pt):
    """The generator's pauses in a point of a sweep (gen.pauses: pairs
    [count, ns] by length, as fast as possible only), those with a count;
    [] where it has none."""
    return [(int(n), int(ns)) for n, ns in
            ((pt.get("gen") or {}).get("pauses") or []) if n]


def machine_summary(machine, trial_s):
    """The machine's own steadiness from the sweep's "machine" (the
    harness's steadiness.py: a fixed loop's runs per stretch on each CPU,
    all at once), or None without it. Per CPU: its stretches' speeds over
    their mean ("speed_min", "speed_max"), and of the windows of trial_s
    (consecutive stretches, as many as a trial spans) those whose fastest
    stretch is within STEADY_SPEED of its slowest ("steady_windows" of
    "windows"): the test a trial's own stretches pass to be steady."""
    if not isinstance(machine, dict) or not machine.get("cpus"):
        return None
    stretch = machine.get("stretch_s") or 0.1
    k = max(1, int(round((trial_s or stretch) / stretch)))
    out = []
    for cpu, c in sorted(machine["cpus"].items(), key=lambda x: int(x[0])):
        # a stretch the loop did not run in at all counts 0: speed 0
        n = list(c.get("counts") or [])
        if len(n) < k or not sum(n):
            continue
        mean = sum(n) / len(n)
        wins = [n[i:i + k] for i in range(len(n) - k + 1)]
        out.append({"cpu": int(cpu), "role": c.get("role"),
                    "stretches": len(n), "stretch_s": stretch,
                    "speed_min": min(n) / mean, "speed_max": max(n) / mean,
                    "window_s": k * stretch, "windows": len(wins),
                    "steady_windows": sum(max(w) <= (1 + STEADY_SPEED) * min(w)
                                          for w in wins)})
    return out or None


def poll_tail(after, counts, beta, fit=None, min_samples=5):
    """The after-poll work per size 0..beta (ns): the measured mean where
    at least min_samples polls of the size had it, else fit (a, b): a + b i
    (the whole sweep's line, tail_fit()); 0 for size 0, and where neither
    is known."""
    tail = np.zeros(beta + 1)
    for k in range(1, beta + 1):
        if k in after and counts.get(k, 0) >= min_samples:
            tail[k] = after[k]
        elif fit is not None:
            tail[k] = max(fit[0] + fit[1] * k, 0.0)
    return tail


def tail_fit(points, min_samples=5):
    """The line a + b i through the after-poll work of every point of a
    sweep by size (means weighted by their polls), None with fewer than two
    sizes seen min_samples times."""
    pooled = {}
    for pt in points:
        for k, c, ns in (pt.get("napi_wake") or {}).get("after_poll") or []:
            if int(k) >= 1:
                x = pooled.setdefault(int(k), [0, 0])
                x[0] += c
                x[1] += ns
    ks = sorted(k for k, (c, _) in pooled.items() if c >= min_samples)
    if len(ks) < 2:
        return None
    w = np.array([pooled[k][0] for k in ks], float)
    v = np.array([pooled[k][1] / pooled[k][0] for k in ks])
    b, a = np.polyfit(np.array(ks, float), v, 1, w=np.sqrt(w))
    return float(a), float(b)


def after_poll(wake):
    """{packets: mean ns} the napi thread works after a poll of that many
    packets before its next one (a receiver's NAPI in its softirq: the
    harness's napi_wake.after_poll, from perf), {} where not recorded."""
    rows = (wake or {}).get("after_poll") if isinstance(wake, dict) else None
    return {int(k): ns / c for k, c, ns in rows or [] if c > 0}


def napi_cycle(wake, timed, ns, extra):
    """The napi thread's work around its polls (the harness's napi_wake,
    where perf recorded napi:napi_poll with the switches) as the model's
    inputs: the linger, from the end of a poll that left the ring empty to
    the thread's sleep, during which a packet that comes is polled at once,
    without a wake-up (its mean, ns; Params linger_ns; and its
    distribution, linger_law: (ns, counts) from the histogram); the
    thread's work
    from its switch-in to the first packet of its first poll (the time to
    the end of that poll less the poll's mean time for its size, and the
    per-poll overhead) lengthens each wake-up (pre_poll_ns). Returns (wake
    with pre_poll_ns and linger_law, linger ns or None)."""
    lg = wake.get("linger") or {}
    linger = lg.get("mean_ns") if lg.get("count") else None
    if linger is not None and lg.get("hist"):
        half = lg.get("bucket_ns", 0) / 2.0
        wake = dict(wake, linger_law=([x + half for x, _ in lg["hist"]],
                                      [c for _, c in lg["hist"]]))
    fp = wake.get("first_poll") or {}
    if fp.get("count") and fp.get("mean_ns") is not None:
        own = sum(c * (ns[k] / timed[k] + extra) for k, c in fp.get("work") or []
                  if 0 < k < len(timed) and timed[k])
        wake = dict(wake, pre_poll_ns=max(fp["mean_ns"] - own / fp["count"], 0.0))
    return wake, linger


class Measured:
    """What a file says about one system: L, beta, service histogram, and
    optionally the measured batch distribution, rate and loss."""

    def __init__(self):
        self.L = self.beta = None
        self.hist = None                # for the service fit
        self.counts = None              # measured batch distribution
        self.rate = None
        self.loss = None
        self.busy = None
        self.t0_hint = None             # idle_ns / empty_polls, lowest
        self.spins = "default"
        self.what = ""
        self.skip_zero = False          # compare on sizes >= 1 only
        self.napi = None                # the worker's device's NAPI polls


def read_measured(args):
    o = load_json(args.measured)
    m = Measured()
    if args.napi:
        napi = find_napi(o, args.dev)
        if not napi:
            raise ModelError("%s has no recorded NAPI histogram%s (xnf -j "
                             "stats DEV on an attached device)" % (
                                 args.measured, " for " + args.dev
                                 if args.dev else ""))
        dev, polls = napi[0]
        m.beta = NAPI_BUDGET
        m.counts = np.array(polls[:NAPI_BUDGET + 1], float)
        m.skip_zero = True
        m.spins = 0
        m.what = "NAPI polls of %s" % dev
        # The polls' times, where xnf_batch has them (xnf_poll stamps).
        b = next(d["batch"] for d in o["devices"] if d.get("dev") == dev
                 and isinstance(d.get("batch"), dict))
        if b.get("timed") and b.get("ns") and sum(b["timed"][1:]):
            m.hist = [{"size": i, "batches": int(b["timed"][i]),
                       "ns": int(b["ns"][i])}
                      for i in range(1, NAPI_BUDGET + 1) if b["timed"][i]]
        return m
    if isinstance(o, dict) and "points" in o:
        pts = worker_sweep(o)["points"]
        if not pts:
            raise ModelError("%s has no points" % args.measured)
        m.L, m.beta = o.get("ring"), o.get("batch")
        m.hist, m.t0_hint = pool_sweep(pts)
        m.what = "sweep of %d points (service fit on all)" % len(pts)
        w0 = next((pt["worker"] for pt in pts if pt.get("worker")), {})
        m.L = m.L or w0.get("ring")
        m.beta = m.beta or w0.get("batch")
        m.spins = default_spins(w0)
        if args.point is not None:
            if not 0 <= args.point < len(pts):
                raise ModelError("--point %d: the sweep has points 0..%d"
                                 % (args.point, len(pts) - 1))
            pt = pts[args.point]
            w = pt.get("worker")
            if not w:
                raise ModelError("point %d of the sweep has no worker "
                                 "counters" % args.point)
            m.counts = worker_counts(w, m.beta)
            m.rate = worker_rate(w, pt.get("duration_s"))
            m.loss = worker_loss(w)
            m.busy = worker_busy(w)
            m.what = "sweep point %d (offered %s), service fit on all %d" % (
                args.point, fmt_rate(pt.get("offered_pps", 0)), len(pts))
        return m
    ws = find_workers(o, args.dev)
    if not ws:
        napi = find_napi(o, args.dev)
        raise ModelError("%s has no AF_XDP worker%s%s" % (
            args.measured, " on " + args.dev if args.dev else "",
            "; it has a NAPI histogram: add --napi" if napi else ""))
    if not 0 <= args.worker < len(ws):
        raise ModelError("--worker %d: the file has workers 0..%d"
                         % (args.worker, len(ws) - 1))
    dev, w = ws[args.worker]
    w = until_last_packet(w)
    m.L, m.beta = w.get("ring"), w.get("batch")
    m.hist = worker_hist(w)
    m.t0_hint = idle_per_empty([w])
    m.counts = worker_counts(w, m.beta)
    m.rate = worker_rate(w)
    m.loss = worker_loss(w)
    m.busy = worker_busy(w)
    m.spins = default_spins(w)
    napi = find_napi(o, dev)
    if napi:
        m.napi = napi[0][1]
    m.what = "worker %d%s (queue %s)" % (args.worker, " of " + dev if dev
                                         else "", w.get("queue", "?"))
    return m


# ------------------------------------------------- successive snapshots

WORKER_SAME = ("dev", "queue", "ring", "batch", "pid", "tid")
WORKER_COUNTERS = ("rx_packets", "polls", "empty_polls", "busy_ns", "idle_ns",
                   "sleeps", "sleep_ns", "wake_reads", "wake_packets")
HIST_COUNTERS = ("batches", "ns", "ns_sq", "tx_ns")


def worker_delta(w0, w1, path0, path1):
    """What a worker counted between two snapshots (w1 later than w0): its
    counters, kernel drops and batch_hist, each the later minus the
    earlier. A counter that went backwards, or a worker that is not the
    same one (ring, batch, queue, thread), means the snapshots are not of
    one run in time order: refused, naming the file."""
    for k in WORKER_SAME:
        if k in w0 and k in w1 and w0[k] != w1[k]:
            raise ModelError(
                "%s is of another worker than %s (%s %s, was %s): give "
                "snapshots of one worker of one run" % (path1, path0, k,
                                                        w1[k], w0[k]))

    def sub(what, a, b):
        if b < a:
            raise ModelError(
                "%s: the worker's %s went backwards from %s (%s -> %s): "
                "the snapshots are not of one run in time order (the "
                "worker restarted, or `xnf stats reset` ran between them); "
                "give them oldest first, from one run" % (path1, what,
                                                          path0, a, b))
        return b - a

    d = {k: w1[k] for k in ("dev", "queue", "ring", "batch", "busy_poll",
                            "idle_spins") if k in w1}
    for k in WORKER_COUNTERS:
        if k in w1:
            d[k] = sub(k, int(w0.get(k, 0)), int(w1[k]))
    k0, k1 = w0.get("kernel") or {}, w1.get("kernel") or {}
    d["kernel"] = {k: sub("kernel." + k, int(k0.get(k, 0)), int(v))
                   for k, v in k1.items() if isinstance(v, (int, float))}
    h0 = {e["size"]: e for e in worker_hist(w0)}
    h1 = {e["size"]: e for e in worker_hist(w1)}
    for i, e in h0.items():
        if e["batches"] and i not in h1:
            raise ModelError("%s: the worker's batches of %d went backwards "
                             "from %s (%d -> 0): the snapshots are not of "
                             "one run in time order" % (path1, i, path0,
                                                        e["batches"]))
    hist = []
    for i in sorted(h1):
        e0, e1 = h0.get(i, {}), h1[i]
        x = {"size": i}
        for k in HIST_COUNTERS:
            if k in e1:
                x[k] = sub("batch_hist[%d].%s" % (i, k), int(e0.get(k, 0)),
                           int(e1[k]))
        if x.get("batches"):
            hist.append(x)
    d["batch_hist"] = hist
    # The interval ends at the worker's last packet in it.
    if "idle_run" in w1:
        d = until_last_packet(dict(d, idle_run=w1["idle_run"]))
    return d


def read_snapshots(args):
    """Successive `xnf -j stats` / `xnf -j worker` snapshots of one instance
    (args.measured_all, oldest first): per interval between two of them
    the worker's counters (worker_delta), and over the whole span the
    worker's and its device's NAPI polls. Returns (intervals, span, napi),
    each interval {"from", "to", "worker"}; napi is None unless every
    snapshot has the device's NAPI histogram."""
    paths = args.measured_all
    if args.napi or args.point is not None:
        raise ModelError("--measured given %d times reads successive "
                         "snapshots of a worker: not with --napi or --point"
                         % len(paths))
    snaps = []
    for path in paths:
        o = load_json(path)
        if isinstance(o, dict) and "points" in o:
            raise ModelError("%s is a harness sweep: repeat --measured only "
                             "with snapshots of a live instance (xnf -j "
                             "stats)" % path)
        ws = find_workers(o, args.dev)
        if not 0 <= args.worker < len(ws):
            raise ModelError("%s has no AF_XDP worker %d%s" % (
                path, args.worker, " on " + args.dev if args.dev else ""))
        dev, w = ws[args.worker]
        w = dict(w, dev=w.get("dev", dev))
        napi = find_napi(o, dev)
        snaps.append((path, w, napi[0][1] if napi else None))
    intervals = []
    for (p0, w0, _), (p1, w1, _) in zip(snaps, snaps[1:]):
        intervals.append({"from": p0, "to": p1,
                          "worker": worker_delta(w0, w1, p0, p1)})
    (pa, wa, na), (pb, wb, nb) = snaps[0], snaps[-1]
    span = worker_delta(wa, wb, pa, pb)
    napi = None
    if all(s[2] is not None for s in snaps):
        napi = [b - a for a, b in zip(na, nb)]
        if min(napi) < 0:
            raise ModelError("%s: the NAPI polls of %s went backwards from "
                             "%s: the snapshots are not of one run in time "
                             "order" % (pb, wb.get("dev"), pa))
    return intervals, span, napi
