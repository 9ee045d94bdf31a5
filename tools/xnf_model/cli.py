# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
The command line of `xnf model` (predict, dimension, validate, help):
its options, the parsing of rates, service times, idle spins and bursts,
the model's parameters from options and a measured file, the bisection of
dimension, the per-point comparison of validate, and main(), whose return
value is the exit status (0 done, 1 error, 2 no subcommand, 3 the model
did not converge).
"""
# xnf model predict   L, beta, rate, arrival law, service times -> v(k), loss
# xnf model dimension highest rate one core sustains at a target loss, cores
# xnf model validate  model against an AF_XDP worker sweep (bench harness)

import argparse
import math
import os
import signal
import sys
from concurrent import futures

import numpy as np

from .model import (AUTO_ITER, KNEE, MAX_ITER, SPREAD_MIN, STEADY_SPEED,
                    TARGET_JSD, TARGET_LOSS, TARGET_MEAN, TOL, ModelError,
                    Params, Service, capacity_nodes, fit_line, jsd,
                    normalise, predict, rel_error, with_pauses)
from .output import (fmt_pct, fmt_rate, print_dimension, print_json,
                     print_predict, print_warning, solver_text,
                     validate_markdown, write, write_csv)
from .plots import plot_predict, validate_plots
from .readers import (NAPI_BUDGET, Measured, default_spins, gen_pauses,
                      idle_per_empty, load_json, machine_summary, pool_sweep,
                      read_measured, read_snapshots, stretch_summary,
                      worker_busy, worker_counts, worker_hist, worker_loss,
                      worker_rate, worker_sweep, xdp_sweep)

WIRE_OVERHEAD = 20      # preamble + inter-frame gap, bytes
GEN_BURST_US = 100.0    # tools/gen.c PACED_BURST_US


# ---------------------------------------------------------------- inputs

def parse_rate(s, frame_size=64):
    """'1.5M', '2e6', '800kpps', '10Gbps' -> packets per second."""
    t = s.strip().lower().replace(" ", "")
    unit = "pps"
    for u, name in (("bit/s", "bps"), ("b/s", "bps"), ("bps", "bps"),
                    ("pps", "pps")):
        if t.endswith(u):
            t, unit = t[:-len(u)], name
            break
    mult = 1.0
    if t and t[-1] in "kmg":
        mult = {"k": 1e3, "m": 1e6, "g": 1e9}[t[-1]]
        t = t[:-1]
    try:
        v = float(t) * mult
    except ValueError:
        raise ModelError("cannot read rate '%s': give packets per second "
                         "('1.5M', '800kpps') or bits per second ('10Gbps', "
                         "with --frame-size)" % s)
    if not v > 0 or math.isinf(v):
        raise ModelError("rate '%s' must be positive" % s)
    if unit == "bps":
        v /= (frame_size + WIRE_OVERHEAD) * 8
    return v


def parse_service_means(s):
    """'1:250,8:900,64:6000' -> {1: 250.0, 8: 900.0, 64: 6000.0}."""
    out = {}
    for part in s.split(","):
        if not part.strip():
            continue
        try:
            i, ns = part.split(":")
            i, ns = int(i), float(ns)
        except ValueError:
            raise ModelError("cannot read '%s' in --service-means: give "
                             "SIZE:NS pairs, '1:250,64:6000'" % part)
        if i < 0 or not ns > 0:
            raise ModelError("--service-means %s: sizes are >= 0 and times "
                             "> 0 ns" % part)
        out[i] = ns
    if not out:
        raise ModelError("--service-means is empty")
    return out


def parse_linear(s):
    try:
        a, b = (float(x) for x in s.split(","))
    except ValueError:
        raise ModelError("cannot read --service-linear '%s': give A,B in ns "
                         "for t(i) = A + B*i" % s)
    if a < 0 or b < 0 or a + b <= 0:
        raise ModelError("--service-linear %s: A and B are >= 0 ns" % s)
    return a, b


# ---------------------------------------------------------- common options

class MeasuredFiles(argparse.Action):
    """--measured FILE, repeatable: args.measured is the first file (what
    every command reads), args.measured_all all of them in order (dimension
    over successive snapshots)."""

    def __call__(self, parser, ns, values, option_string=None):
        ns.measured_all = list(getattr(ns, "measured_all", None) or []) + \
            (values if isinstance(values, list) else [values])
        ns.measured = ns.measured_all[0]


def add_model_opts(sp, rate=True, snapshots=False):
    g = sp.add_argument_group("system")
    g.add_argument("-L", "--ring", type=int, help="queue capacity, packets "
                   "(default: the measurement's ring)")
    g.add_argument("--beta", "--batch", type=int, dest="beta",
                   help="maximum batch (default: the measurement's batch)")
    if rate:
        g.add_argument("--rate", help="arrival rate: pps ('1.5M', '800kpps') "
                       "or bit/s ('10Gbps', see --frame-size); default: the "
                       "measured rate")
    g.add_argument("--frame-size", type=int, default=64,
                   help="bytes per frame for bit/s rates (default 64; 20 "
                   "bytes of preamble and gap are added)")
    g = sp.add_argument_group("arrivals")
    g.add_argument("--arrival", default="poisson",
                   choices=("poisson", "geometric", "negbin", "paced"),
                   help="interarrival law in slots (default poisson, as the "
                   "paper); paced: exact intervals, their phase in the "
                   "chain's state (exhaustive poll of a sleeping server)")
    g.add_argument("--cv", type=float, help="coefficient of variation for "
                   "negbin (the paper: 0.5, 2)")
    g.add_argument("--burst", default="1", help="packets per arrival: N "
                   "(default 1, the paper); validate also takes 'gen': "
                   "xnf-gen's paced bursts, a point's \"burst\" or "
                   "ceil(offered x 100 us), 'napi': the point's ingress "
                   "NAPI poll sizes as the burst distribution, and 'flush': "
                   "the generator's flushes by size")
    g = sp.add_argument_group("service times")
    g.add_argument("--service-means", metavar="I:NS,...",
                   help="mean service time per batch size, ns")
    g.add_argument("--service-linear", metavar="A,B",
                   help="t(i) = A + B*i ns, for sizes not given or measured")
    g.add_argument("--measured", metavar="FILE", action=MeasuredFiles,
                   nargs="+" if snapshots else None,
                   help="xnf -j stats / worker output, or the harness's "
                   "sweep.json" + ("; several (or --measured repeated): "
                                   "successive snapshots of one instance, "
                                   "oldest first, for a core whose service "
                                   "times change from one interval to the "
                                   "next" if snapshots else ""))
    g.add_argument("--worker", type=int, default=0,
                   help="which worker of the file (index, default 0)")
    g.add_argument("--point", type=int, help="which point of a sweep "
                   "(default: fit on all, compare none)")
    g.add_argument("--dev", help="device of the file's workers or NAPI "
                   "histogram")
    g.add_argument("--napi", action="store_true", help="use the file's NAPI "
                   "histogram (XDP) as the measurement")
    g.add_argument("--min-samples", type=int, default=5, help="batches a "
                   "size needs for its measured mean to be used (default 5)")
    g.add_argument("--service-dist", default="poisson",
                   choices=("poisson", "deterministic"),
                   help="service time law in slots (default poisson)")
    if snapshots:
        g.add_argument("--spread", choices=("predictive", "seen"),
                       default="predictive",
                       help="with several snapshots: price the answer over "
                       "the capacity a new interval may have, predicted "
                       "from the intervals' (predictive, default; at least "
                       "%d intervals), or over the intervals as they were "
                       "(seen)" % SPREAD_MIN)
        g.add_argument("--jobs", type=int, default=1,
                       help="with several snapshots: solve the intervals' "
                       "chains in this many processes at once (default 1: "
                       "on a router the other cores forward)")
        g.add_argument("--full-share", type=float, default=0.5,
                       help="with several snapshots: the share of an "
                       "interval's packets that must have come in full "
                       "batches for the interval to price its capacity on "
                       "its own (default 0.5); other intervals are left "
                       "out")
    sp.set_defaults(measured_all=[])
    g = sp.add_argument_group("server and solver")
    g.add_argument("--discipline", choices=("gated", "exhaustive"),
                   help="what a poll takes: gated, what the queue holds when "
                   "it starts (the paper, an AF_XDP worker's read), or "
                   "exhaustive, packets until the queue is empty, those "
                   "that arrive meanwhile too (veth's NAPI poll); up to "
                   "beta either way (default: exhaustive for NAPI, --napi "
                   "or --path xdp, else gated)")
    g.add_argument("--idle-spins", help="empty polls before the server "
                   "sleeps until a packet comes: N or inf (default: inf, the "
                   "paper; 64 for an xnf worker that does not busy-poll)")
    g.add_argument("--wake-ns", default="0",
                   help="wake-up latency after a sleep, ns (default 0); "
                   "validate also takes 'measured': per point, from the "
                   "packets the worker's first read after a sleep found "
                   "beyond one burst")
    g.add_argument("--slot", type=float, help="slot length, ns (default: "
                   "1/16 of the shortest service or interarrival time)")
    g.add_argument("--tol", type=float, default=TOL,
                   help="L1 change that ends the iteration (default 1e-10)")
    g.add_argument("--max-iter", type=int, default=MAX_ITER,
                   help="iterations of eq. (1) (default 20000)")
    g.add_argument("--solver", default="auto",
                   choices=("auto", "iterate", "direct"),
                   help="auto: iterate, then solve directly after %d "
                   "iterations without convergence" % AUTO_ITER)
    sp.add_argument("-j", "--json", action="store_true", help="JSON output")


def parse_spins(s):
    if s is None:
        return "default"
    if s.lower() in ("inf", "none", "never"):
        return None
    try:
        v = int(s)
        if v < 0:
            raise ValueError
        return v
    except ValueError:
        raise ModelError("--idle-spins takes a count >= 0 or 'inf'")


def setup(args, need_rate=True, m=None):
    """Params and Measured from the command line (m: already read)."""
    if m is None and len(args.measured_all) > 1:
        raise ModelError("--measured is given %d times: only dimension "
                         "takes successive snapshots" % len(args.measured_all))
    if m is None and args.measured:
        m = read_measured(args)
    # --burst napi with a live instance's `xnf -j stats`: the bursts are
    # the worker's device's NAPI polls
    args.burst_pmf = None
    if args.burst == "napi":
        args.burst_pmf = napi_burst({"napi": {"polls": m.napi}} if m and
                                    m.napi else None)
        if args.burst_pmf is None:
            raise ModelError("--burst napi needs --measured with the NAPI "
                             "histogram of the worker's device (xnf -j stats "
                             "DEV) or, for validate, a sweep that has them")
    L = args.ring or (m.L if m else None)
    beta = args.beta or (m.beta if m else None)
    if not L:
        raise ModelError("give the queue capacity with -L N (the RX ring "
                         "size: the worker's ring, 'ethtool -g DEV' for a "
                         "NIC, 256 for a veth)")
    if not beta:
        raise ModelError("give the maximum batch with --beta N")
    if m and m.counts is not None and beta < len(m.counts) - 1 \
            and m.counts[beta + 1:].sum() > 0:
        raise ModelError("--beta %d is below batch sizes in the measurement"
                         % beta)
    means = parse_service_means(args.service_means) \
        if args.service_means else None
    linear = parse_linear(args.service_linear) if args.service_linear \
        else None
    hist = m.hist if m else None
    if hist is None and not (means or linear):
        raise ModelError("give service times: --service-means I:NS,..., "
                         "--service-linear A,B or --measured FILE with "
                         "per-size times")
    svc = Service(beta, means=means, linear=linear, hist=hist,
                  min_samples=args.min_samples,
                  t0_hint=m.t0_hint if m else None)
    spins = parse_spins(args.idle_spins)
    if spins == "default":
        spins = m.spins if m and m.spins != "default" else None
    rate = None
    if need_rate:
        if getattr(args, "rate", None):
            rate = parse_rate(args.rate, args.frame_size)
        elif m and m.rate:
            rate = m.rate
        else:
            raise ModelError("give the arrival rate with --rate (pps, or "
                             "'10Gbps' with --frame-size)")
    return m, L, beta, svc, spins, rate


def parse_burst(s, point=None):
    """Packets per arrival; 'gen' (validate): xnf-gen sends, when behind
    its schedule, bursts of ceil(rate x PACED_BURST_US) frames, and as many
    as it can unpaced; the receiving NAPI poll hands at most NAPI_BUDGET of
    them to the ring at once; 'flush' (validate): the point's generator
    flushes by size, what reached the ring at once."""
    if s == "flush":
        pmf = flush_burst(point)
        if pmf is None:
            raise ModelError("--burst flush needs a sweep point with the "
                             "generator's flushes by size (\"gen\": "
                             "{\"flushes\": [...]}), which the harness "
                             "records since xnf-gen counts them")
        return pmf
    if s == "napi":
        pmf = napi_burst(point)
        if pmf is None:
            raise ModelError("--burst napi needs a sweep point with the "
                             "ingress NAPI histogram (\"napi\": "
                             "{\"polls\": [...]}), which the harness "
                             "records since its model experiment has it")
        return pmf
    if s == "gen":
        if point is None:
            raise ModelError("--burst gen is for validate; give --burst N")
        if point.get("burst"):
            b = int(point["burst"])
        elif point.get("offered_max"):
            b = NAPI_BUDGET
        else:
            b = int(math.ceil(point.get("offered_pps", 0) * GEN_BURST_US *
                              1e-6 - 1e-9))
        return min(max(b, 1), NAPI_BUDGET)
    try:
        v = int(s)
        if v < 1:
            raise ValueError
        return v
    except ValueError:
        raise ModelError("--burst takes a packet count >= 1%s" % (
            " or 'gen', 'napi', 'flush'" if point is not None else ""))


def sizes_pmf(counts):
    """Counts by size (0..64) as a burst-size pmf over sizes >= 1 (nothing
    delivered brings no burst), or None without any."""
    if not counts or sum(counts[1:]) <= 0:
        return None
    g = np.asarray(counts, float)
    g[0] = 0.0
    return g / g.sum()


def napi_burst(point):
    """A sweep point's ingress NAPI polls by size as its bursts."""
    return sizes_pmf(((point or {}).get("napi") or {}).get("polls"))


def flush_burst(point):
    """A sweep point's generator flushes by the frames they carried."""
    return sizes_pmf(((point or {}).get("gen") or {}).get("flushes"))


def parse_wake(s, point=None, rate=None, burst_mean=1.0, xdp=False):
    """--wake-ns: ns, or (validate) 'measured': a sleeping worker wakes
    when a burst reaches its ring and reads it wake_ns later, with what
    came meanwhile: E[first read after a sleep] = E[g] + rate x wake_ns,
    from the worker's wake_reads and wake_packets. On the XDP path the
    point's measured wake-ups of the napi thread (the harness's "napi_wake":
    perf, from sched_waking to the switch that runs it), as a distribution
    (ns values, probabilities)."""
    if s == "measured" and xdp:
        wk = (point or {}).get("napi_wake") or {}
        if wk.get("count") == 0 and "error" not in wk:
            return 0.0             # it never slept: no wake-up to price
        if point is None or not wk.get("count"):
            raise ModelError("--wake-ns measured on the XDP path needs the "
                             "point's napi thread wake-ups (\"napi_wake\": "
                             "{\"hist\": ...}), which the harness records "
                             "with perf: %s" % (wk.get("error") or
                                                "none recorded"))
        # From the waking to the switch-in, and the thread's work before
        # its first poll (readers.napi_cycle), where recorded.
        half = wk.get("bucket_ns", 0) / 2.0 + (wk.get("pre_poll_ns") or 0.0)
        vals = np.array([b + half for b, _ in wk["hist"]], float)
        probs = np.array([c for _, c in wk["hist"]], float)
        return vals, probs
    if s == "measured":
        w = (point or {}).get("worker") or {}
        if point is None or "wake_reads" not in w:
            raise ModelError("--wake-ns measured is for validate, on a sweep "
                             "whose workers count wake_reads and "
                             "wake_packets")
        if not w["wake_reads"] or not rate:
            return 0.0
        extra = w["wake_packets"] / w["wake_reads"] - burst_mean
        return max(extra, 0.0) / rate * 1e9
    try:
        v = float(s)
        if not v >= 0:
            raise ValueError
        return v
    except ValueError:
        raise ModelError("--wake-ns takes ns >= 0%s" % (
            " or 'measured'" if point is not None else ""))


def discipline(args):
    if getattr(args, "discipline", None):
        return args.discipline
    napi = getattr(args, "napi", False) or getattr(args, "path", "") == "xdp"
    return "exhaustive" if napi else "gated"


def make_params(args, L, beta, svc, spins, rate, ref=None, burst=None,
                wake_ns=None, slot=None, tail=None, linger=None, line=None):
    if tail is not None:
        tail = np.minimum(np.asarray(tail, float), svc.t)
    return Params(L, beta, rate, svc, arrival=args.arrival, cv=args.cv,
                  discipline=discipline(args), poll_tail_ns=tail,
                  linger_ns=linger, poll_line_ns=line,
                  service_dist=args.service_dist, idle_spins=spins,
                  wake_ns=parse_wake(args.wake_ns) if wake_ns is None
                  else wake_ns, slot_ns=args.slot if slot is None else slot,
                  ref_rate_pps=ref,
                  burst=burst if burst is not None else
                  args.burst_pmf if getattr(args, "burst_pmf", None)
                  is not None else parse_burst(args.burst))


# ----------------------------------------------------------------- predict

def cmd_predict(args):
    m, L, beta, svc, spins, rate = setup(args)
    p = make_params(args, L, beta, svc, spins, rate)
    r = predict(p, args.tol, args.max_iter, args.solver)
    v = r["distribution"]
    out = {
        "input": {"L": L, "beta": beta, "rate_pps": rate,
                  "arrival": args.arrival, "cv": args.cv, "burst": p.burst,
                  "burst_mean": p.burst_mean,
                  "arrival_cv_in_slots": r["info"]["arrival_cv"],
                  "service_dist": args.service_dist,
                  "discipline": p.discipline,
                  "idle_spins": spins, "wake_ns": p.wake_ns,
                  "slot_ns": p.slot, "service": svc.describe(),
                  "measured_from": m.what if m else None},
        "solver": r["solver"],
        "distribution": v,
        "mean_batch": r["mean_batch"],
        "loss": r["loss"],
        "throughput_pps": r["throughput_pps"],
        "busy_fraction": r["busy_fraction"],
        "mean_queue_at_poll": r["mean_queue_at_poll"],
        "capacity_pps": svc.capacity_pps(),
    }
    if m is not None and m.counts is not None:
        cnt = m.counts.copy()
        mv = v.copy()
        if m.skip_zero:
            cnt[0] = 0.0
            mv[0] = 0.0
        pm, qm = normalise(cnt), normalise(mv)
        mean_m = float(np.arange(len(pm)) @ pm)
        mean_q = float(np.arange(len(qm)) @ qm)
        meas = {"from": m.what, "batches": int(cnt.sum()),
                "distribution": pm, "mean_batch": mean_m,
                "model_mean_batch": mean_q,
                "rel_error_mean": rel_error(mean_m, mean_q),
                "jsd": jsd(pm, qm),
                "sizes_compared": ">= 1" if m.skip_zero else ">= 0"}
        if m.loss is not None:
            meas["loss"] = m.loss
        if m.busy is not None:
            meas["busy_fraction"] = m.busy
        out["measured"] = meas
    if args.plot:
        plot_predict(args.plot, out)
    if args.json:
        print_json(out, "xnf/model-predict/1")
    else:
        print_predict(out, r)
    if not r["solver"]["converged"]:
        print_warning("the model did not converge (%s); the numbers above "
                      "are not a steady state: raise --max-iter or use "
                      "--solver direct" % solver_text(r["solver"]),
                      args.json)
        return 3
    return 0


# --------------------------------------------------------------- dimension

def mixture(args, L, beta, parts, spins, rate):
    """The model over intervals whose service times differ (a random
    environment that changes much more slowly than the queue relaxes):
    each interval k in its own steady state with t_k, for a share w_k of
    the time. At one arrival rate the packets are spread over the
    intervals as the time is, so the long-run loss and busy fraction are
    the w-weighted means of the intervals'; the mean batch is the mean
    over polls (interval k polls w_k / E[cycle_k] of the time)."""
    ps = [make_params(args, L, beta, p["service"], spins, rate,
                      slot=p["slot_ns"]) for p in parts]
    pool = getattr(args, "pool", None)
    if pool is not None:                          # --jobs: one part a process
        n = len(ps)
        rs = list(pool.map(predict, ps, [args.tol] * n, [args.max_iter] * n,
                           [args.solver] * n))
    else:
        rs = [predict(pp, args.tol, args.max_iter, args.solver) for pp in ps]
    w = np.array([p["weight"] for p in parts])
    polls = w / np.array([r["mean_cycle_ns"] for r in rs])
    bad = [r["solver"] for r in rs if not r["solver"]["converged"]]
    return {"loss": float(w @ [r["loss"] for r in rs]),
            "busy_fraction": float(w @ [r["busy_fraction"] for r in rs]),
            "mean_batch": float(polls @ [r["mean_batch"] for r in rs]
                                / polls.sum()),
            "solver": bad[0] if bad else max(
                (r["solver"] for r in rs), key=lambda s: s["iterations"]),
            "parts": rs}


def dimension(args, L, beta, svc, spins, target, rel=1e-3):
    """Highest rate whose loss is <= target, by bisection between a rate
    with no loss and one above it. The slot is fixed by the saturation rate,
    so loss(rate) is one monotone function. svc is one Service, or the
    intervals of a mixture ({"service", "weight"}, weights adding to 1;
    mixture()): each interval's slot is fixed by its own saturation rate,
    and the mixture's loss, a weighted sum of monotone functions, is
    monotone too."""
    parts = svc if isinstance(svc, list) else None
    if parts is None:
        cap = svc.capacity_pps()
        if args.slot is None:
            args.slot = make_params(args, L, beta, svc, spins, cap).slot

        def at(rate):
            p = make_params(args, L, beta, svc, spins, rate, ref=cap)
            return predict(p, args.tol, args.max_iter, args.solver)
    else:
        part_slots(args, L, beta, parts, spins)
        # A part cannot serve more than its cheapest batches allow, so it
        # loses at least 1 - c/R of what it gets, and the answer is at
        # most c / (1 - target/w) for each part of weight w above the
        # target: start there.
        caps = [max(p["service"].capacity_pps(), p["service"].best_batch()[1])
                / (1 - target / p["weight"]) for p in parts
                if p["weight"] > target]
        cap = min(caps) if caps else \
            max(p["service"].capacity_pps() for p in parts)

        def at(rate):
            return mixture(args, L, beta, parts, spins, rate)
    cache = {}

    def loss(rate):
        if rate not in cache:
            cache[rate] = at(rate)
        return cache[rate]["loss"]
    # a deep ring's answer lies within 10% of the capacity (the paper's
    # finding), a shallow one's lower: then halve
    lo, hi = cap * 0.9, cap
    while loss(lo) > target:
        hi, lo = lo, lo / 2
        if lo < cap * 1e-6:
            raise ModelError("the loss stays above %g even at %s: the queue "
                             "(L=%d) is too small for these service times"
                             % (target, fmt_rate(lo), L))
    while loss(hi) <= target:
        lo, hi = hi, hi * 1.05
    steps = 0
    while hi / lo - 1 > rel:
        mid = math.sqrt(lo * hi)
        if loss(mid) <= target:
            lo = mid
        else:
            hi = mid
        steps += 1
    return lo, hi, cache, steps


def part_slots(args, L, beta, parts, spins):
    """Each part of a mixture at the slot of its own saturation rate
    (--slot overrides)."""
    for p in parts:
        c = p["service"].capacity_pps()
        p["slot_ns"] = args.slot if args.slot is not None else \
            make_params(args, L, beta, p["service"], spins, c).slot


def spread_parts(args, used, pooled):
    """What the answer is priced over: the capacity a new interval may have
    (--spread predictive, the default: capacity_nodes() over the used
    intervals' capacities, each interval one sample of the environment;
    each node the pooled service times scaled to its capacity), or the
    intervals as they were (seen: their time shares as weights). Fewer
    than SPREAD_MIN intervals estimate no spread: they are taken as seen,
    and the note says so. Returns (the spread for the output, the parts)."""
    if args.spread == "seen":
        return {"kind": "seen", "note": None}, used
    if len(used) < SPREAD_MIN:
        return {"kind": "seen", "note": "%d interval%s priced the capacity, "
                "a predictive spread needs %d: priced over the intervals as "
                "seen" % (len(used), "" if len(used) == 1 else "s",
                          SPREAD_MIN)}, used
    summary, nodes = capacity_nodes([u["row"]["capacity_pps"] for u in used])
    for u in used:
        u["row"]["weight"] = 1.0 / len(used)
    parts = [{"service": pooled.scaled(pooled.capacity_pps() /
                                       nd["capacity_pps"]),
              "weight": nd["weight"]} for nd in nodes]
    return dict(summary, kind="predictive", note=None, nodes=nodes), parts


def snapshot_setup(args):
    """Successive snapshots of one instance (--measured repeated): the
    Measured of the whole span (the pooled service times, the span's NAPI
    bursts) and the intervals between snapshots (read_snapshots)."""
    intervals, span, napi = read_snapshots(args)
    m = Measured()
    m.L, m.beta = span.get("ring"), span.get("batch")
    m.hist = worker_hist(span)
    if not m.hist:
        raise ModelError("the worker read nothing between %s and %s"
                         % (args.measured_all[0], args.measured_all[-1]))
    m.t0_hint = idle_per_empty([span])
    m.spins = default_spins(span)
    m.napi = napi
    m.what = "%d snapshots of worker %d%s (queue %s), %s to %s" % (
        len(args.measured_all), args.worker, " of " + span["dev"]
        if span.get("dev") else "", span.get("queue", "?"),
        args.measured_all[0], args.measured_all[-1])
    return m, intervals


def interval_parts(args, intervals, beta, pooled, t0):
    """Each interval's service times, where its own histogram prices the
    core's capacity: at least --min-samples full batches, carrying at least
    --full-share of its packets (the core ran at capacity for much of the
    interval, so its full batches' mean time is that of sustained full
    batches, not of the odd full read after a sleep). Such an interval
    takes its own per-size means, and the pooled fit for sizes it saw too
    rarely (as validate --service point). Any other interval cannot tell
    its capacity (a line fitted to small batches extrapolates to beta, and
    small batches after a sleep cost more than the same packets in a full
    batch): it is left out, and the weights are the used intervals' times
    over their sum. Returns the rows of every interval, and the used ones
    with "service" and "weight"."""
    rows, used = [], []
    for k, iv in enumerate(intervals):
        w = iv["worker"]
        h = {e["size"]: e for e in w["batch_hist"]}
        full = h.get(beta, {})
        n, ns, sq = full.get("batches", 0), full.get("ns", 0), \
            full.get("ns_sq")
        secs = (w.get("busy_ns", 0) + w.get("idle_ns", 0)) * 1e-9
        row = {"interval": k + 1, "from": iv["from"], "to": iv["to"],
               "duration_s": secs,
               "packets": int(w.get("rx_packets", 0)),
               "batches": int(sum(e["batches"] for e in w["batch_hist"])),
               "full_batches": int(n),
               "rate_pps": worker_rate(w) if secs > 0 else None,
               "loss_measured": worker_loss(w),
               "capacity_pps": beta / (ns / n) * 1e9 if n and ns else None,
               "full_time_rel_error": None, "full_share": 0.0,
               "weight": None, "used": False,
               "skipped": None, "loss_at_max_rate": None}
        if n >= 2 and ns and sq:
            mean = ns / n
            var = max(sq / n - mean * mean, 0.0)
            row["full_time_rel_error"] = math.sqrt(var / n) / mean
        row["full_share"] = n * beta / row["packets"] if row["packets"] \
            else 0.0
        if secs <= 0:
            row["skipped"] = "the worker counted no time"
        elif n < max(args.min_samples, 1):
            row["skipped"] = "%d full batches, fewer than --min-samples %d" \
                % (n, max(args.min_samples, 1))
        elif row["full_share"] < args.full_share:
            row["skipped"] = "%.1f%% of its packets in full batches, less " \
                "than --full-share %g" % (100 * row["full_share"],
                                          args.full_share)
        else:
            svc = Service(beta, linear=pooled.fit, hist=w["batch_hist"],
                          min_samples=args.min_samples,
                          t0_hint=idle_per_empty([w]) or t0)
            row["used"] = True
            row["capacity_pps"] = svc.capacity_pps()
            used.append({"row": row, "service": svc, "secs": secs})
        rows.append(row)
    if not used:
        raise ModelError(
            "none of the %d intervals between the snapshots prices the "
            "core's capacity on its own (%s): take the snapshots while the "
            "worker is loaded to full batches of %d, or give one --measured "
            "file (the service times pooled since the counters were reset)"
            % (len(rows), "; ".join("%d: %s" % (r["interval"], r["skipped"])
                                    for r in rows[:3]), beta))
    tot = sum(u["secs"] for u in used)
    for u in used:
        u["weight"] = u["row"]["weight"] = u["secs"] / tot
    return rows, used


def cmd_dimension(args):
    if not 0 < args.loss < 1:
        raise ModelError("--loss is a probability, 0 < loss < 1 (1e-5)")
    if args.loss < 1e-12:
        raise ModelError("--loss %g is below what the model resolves (1e-12)"
                         % args.loss)
    if args.imbalance < 1:
        raise ModelError("--imbalance is the busiest queue's share over the "
                         "mean, >= 1")
    if not 0 <= args.full_share <= 1:
        raise ModelError("--full-share is a share of packets, 0 to 1 (0.5)")
    m, intervals = snapshot_setup(args) if len(args.measured_all) > 1 \
        else (None, None)
    m, L, beta, svc, spins, _ = setup(args, need_rate=False, m=m)
    bi, brate = svc.best_batch()
    if bi < beta and brate > svc.capacity_pps() * 1.02:
        print_warning(
            "batches of %d cost less per packet (%s) than full batches of "
            "%d (%s): with t(i)/i rising, a core can settle at small batches "
            "above the full-batch capacity. Check the service times (noisy "
            "per-size means? --service-linear, --min-samples)"
            % (bi, fmt_rate(brate), beta, fmt_rate(svc.capacity_pps())),
            args.json)
    rows = used = spread = None
    parts = svc
    if intervals is not None:
        rows, used = interval_parts(args, intervals, beta, svc, m.t0_hint)
        spread, parts = spread_parts(args, used, svc)
    if args.jobs < 1:
        raise ModelError("--jobs is a number of processes, >= 1")
    # The intervals' parts are independent chains: with --jobs, solved in
    # that many processes at once.
    args.pool = futures.ProcessPoolExecutor(args.jobs) \
        if used and args.jobs > 1 else None
    try:
        lo, hi, cache, steps = dimension(args, L, beta, parts, spins,
                                         args.loss)
        r = cache[lo]
        if used:
            own = r["parts"]
            if parts is not used:
                # each interval's own loss at the answer: which of them it
                # would overload
                part_slots(args, L, beta, used, spins)
                own = mixture(args, L, beta, used, spins, lo)["parts"]
                for nd, rn in zip(spread["nodes"], r["parts"]):
                    nd["loss_at_max_rate"] = rn["loss"]
            for u, ru in zip(used, own):
                u["row"]["loss_at_max_rate"] = ru["loss"]
                u["row"]["slot_ns"] = u["slot_ns"]
    finally:
        if args.pool is not None:
            args.pool.shutdown(cancel_futures=True)
    slot = args.slot if not used else min(p["slot_ns"] for p in parts)
    pb = make_params(args, L, beta, svc, spins, lo, slot=slot)
    out = {"input": {"L": L, "beta": beta, "target_loss": args.loss,
                     "arrival": args.arrival, "cv": args.cv,
                     "burst": pb.burst, "burst_mean": pb.burst_mean,
                     "discipline": pb.discipline,
                     "idle_spins": spins, "wake_ns": parse_wake(args.wake_ns),
                     "slot_ns": slot, "service": svc.describe(),
                     "measured_from": m.what if m else None},
           "max_rate_pps": lo, "bracket_pps": [lo, hi],
           "bisection_steps": steps,
           "capacity_pps": svc.capacity_pps(),
           "best_batch": {"size": svc.best_batch()[0],
                          "rate_pps": svc.best_batch()[1]},
           "at_max_rate": {"loss": r["loss"], "mean_batch": r["mean_batch"],
                           "busy_fraction": r["busy_fraction"],
                           "solver": r["solver"]},
           "converged": all(x["solver"]["converged"] for x in cache.values())}
    if rows is not None:
        out["intervals"] = rows
        out["intervals_used"] = len(used)
        out["spread"] = spread
    if args.load:
        load = parse_rate(args.load, args.frame_size)
        per = lo / args.imbalance
        n = max(1, int(math.ceil(load / per * (1 - 1e-12))))
        out["load_pps"] = load
        out["imbalance"] = args.imbalance
        out["queues"] = n
        out["cores"] = n
        out["per_queue_pps"] = load / n * args.imbalance
    if args.json:
        print_json(out, "xnf/model-dimension/1")
    else:
        print_dimension(out, args, spins, cache[hi]["loss"])
    if not out["converged"]:
        print_warning("some points of the bisection did not converge; the "
                      "answer is not reliable", args.json)
        return 3
    return 0


# ---------------------------------------------------------------- validate

def compare_point(r, counts, w, xdp):
    """A prediction r against a point's measured batch counts and worker
    (or NAPI) counters: the comparison columns of validate and whether
    each target is met."""
    beta = len(counts) - 1
    v = r["distribution"]
    if xdp:
        # NAPI is woken by a packet: the model's empty read (the poll that
        # finds the ring empty and sleeps) is not a poll there, so both
        # sides are compared on the non-empty ones.
        v = v.copy()
        v[0] = 0.0
        v = normalise(v)
        r["mean_batch"] = float(np.arange(beta + 1) @ v)
    k = np.arange(beta + 1)
    pm = normalise(counts)
    mm = float(k @ pm)
    c1 = counts.copy()
    c1[0] = 0
    v1 = v.copy()
    v1[0] = 0
    p1, q1 = normalise(c1), normalise(v1)
    mm1, mq1 = float(k @ p1), float(k @ q1)
    row = dict(
        mean_measured=mm, mean_model=r["mean_batch"],
        mean_err=abs(mm - r["mean_batch"]),
        rel_error=rel_error(mm, r["mean_batch"]),
        mean1_measured=mm1, mean1_model=mq1, mean1_err=abs(mm1 - mq1),
        loss_measured=worker_loss(w), loss_model=r["loss"],
        loss_err=abs(worker_loss(w) - r["loss"]),
        jsd=jsd(pm, v), jsd_nonempty=jsd(p1, q1),
        busy_measured=worker_busy(w), busy_model=r["busy_fraction"],
        converged=r["solver"]["converged"], solver=r["solver"],
        distribution_measured=pm, distribution_model=v)
    # Both over all polls (the paper's v(k)) and over non-empty ones: where
    # a worker mostly finds its ring empty, v(0) dominates and the first
    # alone would pass on the empty polls.
    row["ok_mean"] = max(row["mean_err"], row["mean1_err"]) <= TARGET_MEAN
    row["ok_loss"] = row["loss_err"] <= TARGET_LOSS
    row["ok_jsd"] = max(row["jsd"], row["jsd_nonempty"]) < TARGET_JSD
    return row


def miss_reasons(row, svc, rate, compare):
    """Why a point misses a target, from what can be computed: the model
    at the rate KNEE lower and higher (a capacity off by KNEE moves the
    point as far; near the knee that decides), batch sizes cheaper per
    packet than full ones with the rate between the two capacities (the
    ring then has two regimes, the model's chain settles in one), the
    spread of the measured sizes against the model's, and the worker
    waiting for its CPU. Returns [{"kind", "text", ...}]."""
    why = []
    shifted = []
    for f in (1 - KNEE, 1 + KNEE):
        c = compare(rate * f)[1]
        shifted.append(c)
        if c["ok_mean"] and c["ok_loss"] and c["ok_jsd"]:
            why.append({"kind": "knee", "factor": f, "text": (
                "meets all three targets at %gx its rate: a capacity %g%% "
                "off moves the point that far" % (f, 100 * KNEE))})
            break
    else:
        why.append({"kind": "sensitivity", "text": (
            "at %g and %gx its rate the model's mean batch (>=1) is %.2f "
            "and %.2f, its loss %s and %s" % (
                1 - KNEE, 1 + KNEE, shifted[0]["mean1_model"],
                shifted[1]["mean1_model"], fmt_pct(shifted[0]["loss_model"]),
                fmt_pct(shifted[1]["loss_model"])))})
    # Only where full batches carried a fair share of the packets: the
    # odd full read after a sleep prices no capacity.
    pm = np.asarray(row["distribution_measured"])
    k = np.arange(len(pm))
    full = pm[-1] * (len(pm) - 1) / float(k @ pm) if k @ pm > 0 else 0.0
    bi, brate = svc.best_batch()
    cap = svc.capacity_pps()
    if full >= 0.25 and bi < svc.beta and brate > cap * 1.02 and \
            cap < rate < brate:
        why.append({"kind": "two_regimes", "text": (
            "batches of %d cost less per packet than full ones: the rate "
            "lies between the full-batch capacity %s and theirs %s, where "
            "the ring can run at either" % (bi, fmt_rate(cap),
                                            fmt_rate(brate)))})
    if not row["ok_jsd"]:
        # the measured polls' central 80% (>= 1), and the model's share
        p1 = pm.copy()
        p1[0] = 0
        q1 = np.array(row["distribution_model"], float)
        q1[0] = 0
        p1, q1 = normalise(p1), normalise(q1)
        cdf = np.cumsum(p1)
        a = int(np.searchsorted(cdf, 0.1 - 1e-12))
        b = int(np.searchsorted(cdf, 0.9 - 1e-12))
        ms, qs = p1[a:b + 1].sum(), q1[a:b + 1].sum()
        if abs(ms - qs) > 0.15:
            why.append({"kind": "spread", "text": (
                "%.0f%% of the measured polls took %s packets, %.0f%% of "
                "the model's" % (100 * ms, "%d to %d" % (a, b) if a < b
                                 else "%d" % a, 100 * qs))})
    st = row.get("stretches")
    if st and row.get("steady") is False:
        why.append({"kind": "unsteady", "text": (
            "the trial was not steady: over its %d stretches of 100 ms the "
            "napi thread's speed at polls of %d ranged over %.2f-%.2f of "
            "its mean, and its polls took %.1f to %.1f packets on average"
            % (st["count"], st["size"], st["speed_min"], st["speed_max"],
               st["batch_min"], st["batch_max"]))})
    elif st and st["batch_max"] - st["batch_min"] > 2 * TARGET_MEAN:
        why.append({"kind": "regimes", "text": (
            "%sits stretches of 100 ms polled %.1f to %.1f packets on "
            "average" % ("at a steady speed " if row.get("steady") else "",
                         st["batch_min"], st["batch_max"]))})
    if (row.get("wait_share") or 0) > 0.05:
        why.append({"kind": "cpu", "text": (
            "the worker waited %.1f%% of its runnable time for its CPU"
            % (100 * row["wait_share"]))})
    return why


def own_poll_line(svc, tail, counts, min_samples):
    """The XDP path's poll, its own time a + b*i (t(i) less its tail),
    fitted on a point's own polls: the sizes seen min_samples times,
    weighted by their polls. None without two such sizes or where the line
    is not a >= 0, b > 0 (the model then takes the line through t(1) and
    t(beta)). Below saturation a size seen a few times is mostly a poll
    that something held up, its time not its size's (docs/model.md, "The
    poll is exhaustive")."""
    if tail is None:
        return None
    own = svc.t - np.minimum(np.asarray(tail, float), svc.t)
    ks = [k for k in range(1, len(counts)) if counts[k] >= min_samples]
    line = fit_line(ks, own[ks], counts[ks]) if len(ks) >= 2 else None
    if line is None or line[0] < 0 or line[1] <= 0:
        return None
    return line[0], line[1]


def validate(sweep, args):
    """Model against each point of a harness sweep; rows of a table."""
    xdp = getattr(args, "path", "worker") == "xdp"
    raw = sweep
    sweep = xdp_sweep(sweep) if xdp else worker_sweep(sweep)
    pts = sweep.get("points") or []
    if not pts:
        raise ModelError("the sweep has no points")
    machine = machine_summary(raw.get("machine"), float(np.median(
        [pt["duration_s"] for pt in pts if pt.get("duration_s")] or [0])))
    w0 = next((pt["worker"] for pt in pts if pt.get("worker")), {})
    L = args.ring or sweep.get("ring") or w0.get("ring")
    beta = args.beta or sweep.get("batch") or w0.get("batch")
    if not L or not beta:
        raise ModelError("the sweep does not say ring and batch: give -L "
                         "and --beta")
    hist, t0 = pool_sweep(pts)
    linear = parse_linear(args.service_linear) if args.service_linear \
        else None
    svc = Service(beta, linear=linear, hist=hist,
                  min_samples=args.min_samples, t0_hint=t0)
    per_point = getattr(args, "service", "sweep") == "point"
    spins = parse_spins(args.idle_spins)
    if spins == "default":
        spins = default_spins(w0)
    rows = []
    for i, pt in enumerate(pts):
        w = pt.get("worker")
        if not w:
            rows.append({"point": i, "offered_pps": pt.get("offered_pps"),
                         "error": "no worker counters"})
            continue
        rate = worker_rate(w, pt.get("duration_s"))
        row = {"point": i, "offered_pps": pt.get("offered_pps"),
               "sent_pps": (pt.get("sent", 0) / pt["duration_s"]
                            if pt.get("duration_s") else None),
               "rate_pps": rate}
        counts = worker_counts(w, beta)
        if rate <= 0 or counts.sum() == 0:
            row["error"] = "no packets reached the worker"
            rows.append(row)
            continue
        kb = parse_burst(args.burst, pt)
        row["burst"] = kb if np.ndim(kb) == 0 else \
            float(np.arange(len(kb)) @ kb)
        # --service point: this point's own means (the worker shares its
        # core with the NAPI thread that feeds it, so its times depend on
        # the load), the sweep's fit for sizes it did not see
        psvc = Service(beta, linear=svc.fit, hist=worker_hist(w),
                       min_samples=args.min_samples,
                       t0_hint=idle_per_empty([w]) or t0) \
            if per_point else svc
        # Whether the worker had its core (the harness's schedstat delta):
        # the share of its runnable time it waited for the CPU.
        sc = pt.get("worker_sched") or {}
        row["wait_share"] = (sc["wait_ns"] / (sc["run_ns"] + sc["wait_ns"])
                             if sc.get("run_ns", 0) + sc.get("wait_ns", 0) > 0
                             else None)
        if not xdp:
            row["packet_overhead_ns"] = pt.get("packet_overhead_ns")
        wake = parse_wake(args.wake_ns, pt, rate, row["burst"], xdp)
        row["wake_ns"] = wake if np.ndim(wake) == 0 else \
            float(wake[0] @ wake[1] / wake[1].sum())
        if xdp:
            row["poll_overhead_ns"] = pt.get("poll_overhead_ns")
            row["stretches"] = st = stretch_summary(pt.get("napi_wake"))
            row["steady"] = None if not st or st["speed_min"] is None else \
                st["speed_max"] <= (1 + STEADY_SPEED) * st["speed_min"]

        line = own_poll_line(psvc, pt.get("poll_tail_ns"), counts,
                             args.min_samples) if xdp else None
        if xdp:
            row["poll_a_ns"], row["poll_b_ns"] = line or (None, None)

        # paced arrivals take the linger as measured: a linger longer than
        # the wait for the next burst catches it
        linger = pt.get("napi_linger_ns")
        if args.arrival == "paced" and linger is not None:
            linger = (pt.get("napi_wake") or {}).get("linger_law", linger)

        # At full rate the generator pauses (gen.pauses): the model takes
        # the rate while it sent, and the pauses (model.with_pauses()).
        pauses, T = gen_pauses(pt), pt.get("duration_s") or 0.0
        paused = sum(ns for _, ns in pauses) / 1e9
        on = T / (T - paused) if pauses and 0 < paused < T else 1.0
        row["paused_s"] = paused if pauses else None

        def compare(at):
            p = make_params(args, L, beta, psvc, spins, at * on, ref=rate,
                            burst=kb, wake_ns=wake,
                            tail=pt.get("poll_tail_ns"),
                            linger=linger, line=line)
            r = predict(p, args.tol, args.max_iter, args.solver)
            if on != 1.0:
                r = with_pauses(r, pauses, T, at * T)
            return p, compare_point(r, counts, w, xdp)
        p, cmp = compare(rate)
        row.update(cmp, slot_ns=p.slot, batches=int(counts.sum()))
        if not (row["ok_mean"] and row["ok_loss"] and row["ok_jsd"]):
            row["why"] = miss_reasons(row, psvc, rate, compare)
        rows.append(row)
    return {"L": L, "beta": beta, "nf": sweep.get("nf"), "spins": spins,
            "service": svc, "rows": rows, "path": "xdp" if xdp else "worker",
            "poll_overhead_ns": sweep.get("poll_overhead_ns"),
            "packet_overhead_ns": sweep.get("packet_overhead_ns"),
            "machine": machine, "discipline": discipline(args)}


def cmd_validate(args):
    sweep = load_json(args.sweep)
    if not isinstance(sweep, dict) or "points" not in sweep:
        raise ModelError("%s is not a sweep: the harness writes "
                         "<results>/model/sweep.json with \"points\""
                         % args.sweep)
    res = validate(sweep, args)
    out = args.out or os.path.dirname(os.path.abspath(args.sweep))
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise ModelError("cannot create %s: %s" % (out, e.strerror))
    md = validate_markdown(res, args)
    write(os.path.join(out, "validate.md"), md)
    write_csv(os.path.join(out, "validate.csv"), res)
    validate_plots(os.path.join(out, "validate.png"),
                   os.path.join(out, "validate-dist.png"), res)
    rows = [r for r in res["rows"] if "error" not in r]
    summary = {
        "points": len(res["rows"]),
        "compared": len(rows),
        "met_mean": sum(r["ok_mean"] for r in rows),
        "met_loss": sum(r["ok_loss"] for r in rows),
        "met_jsd": sum(r["ok_jsd"] for r in rows),
        "converged": sum(r["converged"] for r in rows),
        # --path xdp with perf's stretches: the trials known steady
        "steady": sum(r["steady"] for r in rows if r.get("steady") is not None)
        if any(r.get("steady") is not None for r in rows) else None,
        "met_steady": sum(r["ok_mean"] and r["ok_loss"] and r["ok_jsd"]
                          for r in rows if r.get("steady")),
        "machine": res["machine"],
        "files": [os.path.join(out, f) for f in
                  ("validate.md", "validate.csv", "validate.png",
                   "validate-dist.png")]}
    if args.json:
        print_json({"L": res["L"], "beta": res["beta"], "nf": res["nf"],
                    "idle_spins": res["spins"],
                    "discipline": res["discipline"],
                    "service": res["service"].describe(),
                    "rows": [{k: v for k, v in r.items()} for r in
                             res["rows"]], "summary": summary},
                   "xnf/model-validate/1")
    else:
        sys.stdout.write(md)
        print("\nwrote %s" % ", ".join(summary["files"]))
    return 0


# -------------------------------------------------------------------- main

class Parser(argparse.ArgumentParser):
    """argparse's usage errors as xnf's: one "Error: ..." line (or one JSON
    error under -j), exit status 1, instead of the usage text and 2."""

    def error(self, message):
        raise ModelError("%s; try 'xnf model help'" % message)


def print_error(msg, as_json):
    """A refusal as xnf prints one (common/print.c print_err): one line on
    stderr, or {"schema": "xnf/error/1", "error": ...} on stdout under
    -j."""
    msg = " ".join(str(msg).split())
    if as_json:
        print_json({"error": msg}, "xnf/error/1")
    else:
        sys.stderr.write("Error: %s\n" % msg)


def build_parser():
    ap = Parser(prog="xnf model", description="The batching model of the "
                "VPP paper: batch sizes, loss and dimensioning of a "
                "poll-mode core.")
    ap.add_argument("-j", "--json", action="store_true", dest="json_main",
                    help="JSON output")
    sub = ap.add_subparsers(dest="cmd", parser_class=Parser)
    sp = sub.add_parser("predict", help="batch-size distribution, mean "
                        "batch, loss and throughput at one rate")
    add_model_opts(sp)
    sp.add_argument("--plot", metavar="PNG", help="plot the distribution "
                    "(against the measurement, if any)")
    sp.set_defaults(fn=cmd_predict)
    sp = sub.add_parser("dimension", help="highest rate per core at a "
                        "target loss; queues and cores for a load")
    add_model_opts(sp, rate=False, snapshots=True)
    sp.add_argument("--loss", type=float, default=1e-5,
                    help="target loss (default 1e-5)")
    sp.add_argument("--load", help="total load to carry (pps or bit/s)")
    sp.add_argument("--imbalance", type=float, default=1.0,
                    help="busiest queue's load over the mean (RSS skew, "
                    "default 1)")
    sp.set_defaults(fn=cmd_dimension)
    sp = sub.add_parser("validate", help="model against a bench harness "
                        "sweep (model/sweep.json)")
    sp.add_argument("sweep", metavar="SWEEP.json")
    sp.add_argument("--out", metavar="DIR", help="where validate.md/.csv/"
                    ".png go (default: beside SWEEP.json)")
    sp.add_argument("--path", default="worker", choices=("worker", "xdp"),
                    help="which batching to validate: the AF_XDP worker's "
                    "ring reads (worker) or the ingress device's NAPI polls "
                    "(xdp: its veth ring of 256, budget 64, the polls' "
                    "measured times, sleeping when the ring is empty)")
    sp.add_argument("--service", default="sweep", choices=("sweep", "point"),
                    help="service times: fitted on all points (sweep, the "
                    "paper's global fit) or each point's own measured means "
                    "(point)")
    add_model_opts(sp, rate=False)
    sp.set_defaults(fn=cmd_validate)
    sub.add_parser("help", help="this text")
    return ap


def main(argv=None):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # `| head` ends quietly
    ap = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    # Known before parsing, so that a refused command line is JSON too
    # (`xnf -j model ...` passes -j first; no option takes "-j" as value).
    as_json = "-j" in argv or "--json" in argv
    try:
        args = ap.parse_args(argv)
        if args.cmd == "help":
            ap.print_help(sys.stdout)
            return 0
        if args.cmd is None:
            raise ModelError("which model command? predict, dimension or "
                             "validate; try 'xnf model help'")
        args.json = args.json or args.json_main
        return args.fn(args)
    except ModelError as e:
        print_error(e, as_json)
        return 1
