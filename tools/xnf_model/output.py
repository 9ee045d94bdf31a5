# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
What the command line prints and writes, plots aside: rates and
percentages for people, the solver's report in words, JSON of numpy
values, the text of predict (and the service times, dimension's too), and
validate's Markdown table and CSV file.
"""
import csv
import json
import math
import sys

import numpy as np

from .model import (KNEE, STEADY_SPEED, TARGET_JSD, TARGET_LOSS, TARGET_MEAN,
                    ModelError)


def fmt_rate(pps):
    for div, u in ((1e9, "Gpps"), (1e6, "Mpps"), (1e3, "kpps")):
        if pps >= div:
            return "%.4g %s" % (pps / div, u)
    return "%.4g pps" % pps


def fmt_pct(x):
    if x < 1e-12:
        return "0%" if x == 0 else "<1e-10%"
    if x < 1e-4:
        return "%.3g%%" % (100 * x)
    return "%.4g%%" % (100 * x)


def solver_text(rep):
    if rep["method"] == "iterate":
        return ("fixed-point iteration of eq. (1): %s in %d iterations "
                "(last change %.2g, tolerance %.2g)" % (
                    "converged" if rep["converged"] else "NOT CONVERGED",
                    rep["iterations"], rep["change"], rep["tol"]))
    txt = ""
    if rep["iterations"]:
        txt = ("iteration not converged in %d (change %.2g); " %
               (rep["iterations"], rep["change"]))
    if "error" in rep:
        return txt + "direct solve failed: " + rep["error"]
    return txt + "solved q = qP directly: %s (|qP - q| = %.2g, tolerance %.2g)" % (
        "converged" if rep["converged"] else "NOT CONVERGED",
        rep["residual"], rep["tol"])


def jsonable(x):
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return None if math.isnan(x) or math.isinf(x) else x
    if isinstance(x, np.integer):
        return int(x)
    return x


def print_json(o, schema):
    """A document of `xnf -j`: "schema" (docs/json.md) first, then @o."""
    json.dump({"schema": schema, **jsonable(o)}, sys.stdout, indent=1)
    sys.stdout.write("\n")


def print_warning(msg, as_json):
    """A warning as xnf prints one (common/print.c print_warn): on stderr,
    "Warning: ..." or under -j a document of one line."""
    msg = " ".join(str(msg).split())
    if as_json:
        sys.stderr.write(json.dumps({"schema": "xnf/warning/1",
                                     "warning": msg}) + "\n")
    else:
        sys.stderr.write("Warning: %s\n" % msg)


def burst_text(i):
    if i["burst"] is None:
        return " in bursts as the NAPI polls (mean %.2f)" % i["burst_mean"]
    return " in bursts of %d" % i["burst"] if i["burst"] > 1 else ""


def print_predict(o, r):
    i = o["input"]
    svc = i["service"]
    print("model: L=%d beta=%d rate=%s arrivals %s%s%s (CV %.3g in slots), "
          "slot %.4g ns" % (i["L"], i["beta"], fmt_rate(i["rate_pps"]),
                            i["arrival"], " cv=%g" % i["cv"] if i["cv"]
                            else "", burst_text(i),
                            i["arrival_cv_in_slots"], i["slot_ns"]))
    print_service(svc, o["capacity_pps"])
    print("poll: %s" % ("exhaustive (takes what arrives while it polls, "
                        "up to beta)" if i.get("discipline") == "exhaustive"
                        else "gated (takes what the queue holds, up to "
                        "beta)"))
    sp = i["idle_spins"]
    print("idle: %s" % ("polls forever (the paper)" if sp is None else
                        "sleeps after %d empty polls, wakes %.0f ns after "
                        "the next packet" % (sp, i["wake_ns"])))
    if i["measured_from"]:
        print("from: %s" % i["measured_from"])
    print("solver: %s" % solver_text(o["solver"]))
    print()
    print("mean batch      %.3f packets" % o["mean_batch"])
    print("loss            %s" % fmt_pct(o["loss"]))
    print("throughput      %s (%s offered)" % (fmt_rate(o["throughput_pps"]),
                                               fmt_rate(i["rate_pps"])))
    print("busy            %.1f%% of the time in non-empty batches"
          % (100 * o["busy_fraction"]))
    print("queue at poll   %.2f packets on average" % o["mean_queue_at_poll"])
    meas = o.get("measured")
    if meas:
        print()
        print("measured (%d batches, sizes %s): mean batch %.3f, model %.3f, "
              "relative error %.3g, JSD %.4f" % (
                  meas["batches"], meas["sizes_compared"], meas["mean_batch"],
                  meas["model_mean_batch"], meas["rel_error_mean"],
                  meas["jsd"]))
        if "loss" in meas:
            print("measured loss at the ring %s, model %s"
                  % (fmt_pct(meas["loss"]), fmt_pct(o["loss"])))
        if "busy_fraction" in meas:
            print("measured busy %.1f%%, model %.1f%%"
                  % (100 * meas["busy_fraction"], 100 * o["busy_fraction"]))
    print()
    v = o["distribution"]
    pm = meas["distribution"] if meas else None
    print("batch size distribution (sizes with P >= 1e-4%s):"
          % (" in either" if meas else ""))
    print("  %5s  %9s%s" % ("size", "model", "  measured" if meas else ""))
    for k in range(len(v)):
        mk = pm[k] if pm is not None and k < len(pm) else 0.0
        if v[k] < 1e-4 and mk < 1e-4:
            continue
        print("  %5d  %9.4f%s" % (k, v[k], "  %8.4f" % mk if meas else ""))


def print_service(svc, capacity):
    fit = svc.get("fit")
    src = svc["source"]
    nm = sum(1 for s in src if s in ("measured", "given"))
    if nm:
        line = "service: %d of %d sizes %s" % (
            nm, len(src), "measured" if "measured" in src else "given")
        if fit and nm < len(src):
            line += ", others t(i) = %.1f + %.2f*i ns (%s%s)" % (
                fit["a_ns"], fit["b_ns"], "fit" if fit["from"] != "--service-"
                "linear" else "--service-linear",
                ", R2 %.3f" % fit["r2"] if "r2" in fit else "")
    else:
        line = "service: t(i) = %.1f + %.2f*i ns" % (fit["a_ns"], fit["b_ns"])
    print(line)
    print("         t(0) %.0f ns (%s), t(1) %.0f ns, t(beta) %.0f ns: "
          "capacity %s at full batches" % (
              svc["means_ns"][0], {"idle": "idle_ns/empty_polls",
                                   "fit": "line"}.get(src[0], src[0]),
              svc["means_ns"][1], svc["means_ns"][-1],
              fmt_rate(capacity)))


def write(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise ModelError("cannot write %s: %s" % (path, e.strerror))


CSV_COLS = ("point", "offered_pps", "rate_pps", "burst", "wake_ns",
            "poll_overhead_ns", "packet_overhead_ns", "poll_a_ns",
            "poll_b_ns", "paused_s", "wait_share", "batches",
            "mean1_measured", "mean1_model", "mean_measured",
            "mean_model", "mean_err", "rel_error", "jsd", "jsd_nonempty",
            "loss_measured", "loss_model", "loss_err", "busy_measured",
            "busy_model", "converged", "ok_mean", "ok_loss", "ok_jsd",
            "steady", "stretch_count", "stretch_speed_min",
            "stretch_speed_max", "stretch_batch_min", "stretch_batch_max",
            "why", "error")


def csv_value(r, c):
    """A row's column; stretch_X is X of its stretches (--path xdp)."""
    if c.startswith("stretch_"):
        return (r.get("stretches") or {}).get(c[len("stretch_"):])
    return r.get(c)


def write_csv(path, res):
    try:
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(CSV_COLS)
            for r in res["rows"]:
                w.writerow([fmt_csv(csv_value(r, c)) for c in CSV_COLS])
    except OSError as e:
        raise ModelError("cannot write %s: %s" % (path, e.strerror))


def fmt_csv(x):
    if x is None:
        return ""
    if isinstance(x, list):             # a row's reasons: their kinds
        return ";".join(w["kind"] for w in x)
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, float):
        return "%.6g" % x
    return str(x)


def validate_markdown(res, args):
    svc = res["service"]
    fit = svc.fit
    rows = res["rows"]
    ok = [r for r in rows if "error" not in r]
    xdp = res.get("path") == "xdp"
    lines = [
        "# Batching model against the XDP path (the ingress's NAPI polls)"
        if xdp else "# Batching model against the AF_XDP worker",
        "",
        "L (ring) = %d, beta (batch) = %d%s; arrivals %s%s%s; %s; service "
        "times fitted on all %d points: %d sizes measured (>= %d batches), "
        "others t(i) = %.1f + %.2f*i ns%s." % (
            res["L"], res["beta"], ", NF " + res["nf"] if res["nf"] else "",
            "paced (the generator's frames at exact intervals; the chain's "
            "state the queue and the stream's phase at a poll's start)"
            if args.arrival == "paced" else args.arrival,
            " cv=%g" % args.cv if args.cv else "",
            "" if args.burst == "1" else
            " in bursts (column burst)" if args.burst == "gen" else
            " in bursts distributed as the point's NAPI polls (column burst: "
            "their mean)" if args.burst == "napi" else
            " in bursts distributed as the generator's flushes (column "
            "burst: their mean)" if args.burst == "flush" else
            " in bursts of %s packets" % args.burst,
            "the worker polls forever" if res["spins"] is None else
            "NAPI sleeps when a poll leaves the ring empty (wake-up %s; "
            "service times: the polls' own, from their first packet's XDP "
            "run to the end of the poll)" % (
                "per point, distributed as the napi thread's measured "
                "wake-ups (column wake: their mean)" if args.wake_ns ==
                "measured" else "%s ns" % args.wake_ns) + (
                "; each poll's time plus the napi thread's own work per "
                "poll outside it (its CPU time less its polls' and their "
                "tails, over its polls): a point's own where the thread did "
                "not sleep, elsewhere their median, %.0f ns"
                % res["poll_overhead_ns"]
                if res.get("poll_overhead_ns") else "") + (
                "; a poll's own time a + b*i (t(i) less its tail) fitted on "
                "the point's own polls (poll_a_ns, poll_b_ns in the CSV) "
                "where it saw two sizes %d times" % args.min_samples)
            if xdp else
            "the worker sleeps after %d empty polls (wake-up %s)%s"
            % (res["spins"], "per point from its wake_reads and wake_packets"
               if args.wake_ns == "measured" else "%s ns" % args.wake_ns,
               "; each batch its time plus the worker's own work per "
               "packet outside its timed reads, the fill ring's refill (its "
               "CPU time less its reads', over its packets): a point's own "
               "where it never waited for packets, elsewhere their median, "
               "%.1f ns" % res["packet_overhead_ns"]
               if res.get("packet_overhead_ns") else ""),
            len(rows),
            sum(1 for s in svc.source if s == "measured"), args.min_samples,
            fit[0], fit[1], " (R2 %.3f)" % svc.r2 if svc.r2 is not None
            else ""),
        "",
        ("Targets (the paper's accuracy): mean batch within %g packet, loss "
         "within %g percentage points, JSD below %g; mean and JSD must hold "
         "both over all polls and over the non-empty ones (>=1). " + (
            "NAPI has no empty polls (a packet wakes it): both sides are "
            "compared on the non-empty ones. Loss is the veth ring's (the "
            "sender's tx_dropped over what it sent); busy is the polls' "
            "measured time over the trial." if xdp else
            "Loss is the RX ring's (kernel rx_ring_full + rx_dropped over "
            "what reached the socket). Worker waited: the share of its "
            "runnable time the worker thread waited for its CPU (/proc "
            "schedstat, recorded by the harness): the model's server has its "
            "core to itself.")) % (
            TARGET_MEAN, 100 * TARGET_LOSS, TARGET_JSD),
        "",
        "| point | offered | arrived | burst | mean batch meas. | model | "
        "mean (>=1) meas. | model | JSD | JSD (>=1) | loss meas. | model | "
        "busy meas. | model | %s | met |" % ("wake" if xdp else
                                              "worker waited"),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append("| %d | %s | - | %s |" % (
                r["point"], fmt_rate(r["offered_pps"] or 0), r["error"]))
            continue
        met = []
        for k, name in (("ok_mean", "mean"), ("ok_loss", "loss"),
                        ("ok_jsd", "JSD")):
            if not r[k]:
                met.append("no " + name)
        if not r["converged"]:
            met.append("not converged")
        lines.append(
            "| %d | %s | %s | %.3g | %.2f | %.2f | %.2f | %.2f | %.4f | %.4f | "
            "%s | %s | %.1f%% | %.1f%% | %s | %s |" % (
                r["point"], fmt_rate(r["offered_pps"] or 0),
                fmt_rate(r["rate_pps"]), r["burst"], r["mean_measured"],
                r["mean_model"], r["mean1_measured"], r["mean1_model"],
                r["jsd"], r["jsd_nonempty"],
                fmt_pct(r["loss_measured"]), fmt_pct(r["loss_model"]),
                100 * r["busy_measured"], 100 * r["busy_model"],
                ("%.2f us" % (r["wake_ns"] / 1e3) if r.get("wake_ns")
                 else "-") if xdp else
                "-" if r.get("wait_share") is None else
                "%.1f%%" % (100 * r["wait_share"]),
                "yes" if not met else ", ".join(met)))
    n = len(ok)
    lines += [
        "",
        "Met at %d of %d points: mean batch %d, loss %d, JSD %d; %d of %d "
        "converged." % (
            sum(r["ok_mean"] and r["ok_loss"] and r["ok_jsd"] for r in ok),
            n, sum(r["ok_mean"] for r in ok), sum(r["ok_loss"] for r in ok),
            sum(r["ok_jsd"] for r in ok), sum(r["converged"] for r in ok),
            n),
        ""]
    steady = [r for r in ok if r.get("steady")]
    known = sum(r.get("steady") is not None for r in ok)
    if known:
        lines[-1:-1] = [
            "Steady trials (the napi thread's speed at the polls after a full "
            "one within %g%% over the trial's stretches of 100 ms, from "
            "perf): %d of the %d where it was measured; all three targets "
            "met at %d of them." % (
                100 * STEADY_SPEED, len(steady), known,
                sum(r["ok_mean"] and r["ok_loss"] and r["ok_jsd"]
                    for r in steady)), ""]
    if res.get("machine"):
        lines[-1:-1] = [
            "The machine (a fixed loop on each CPU, all at once, after the "
            "sweeps; the harness's steadiness.py): "
            + "; ".join(
                "CPU %d (%s) ran at %.2f-%.2f of its mean speed in stretches "
                "of %g ms, within %g%% over %g s (a trial's length) in %d of "
                "%d windows" % (
                    m["cpu"], m["role"], m["speed_min"], m["speed_max"],
                    1e3 * m["stretch_s"], 100 * STEADY_SPEED, m["window_s"],
                    m["steady_windows"], m["windows"])
                for m in res["machine"]) + ".", ""]
    missed = [r for r in ok if r.get("why")]
    if missed:
        lines += ["Why the points that miss do (the model at %g and %g of "
                  "the rate; the service times; the spread of the sizes):"
                  % (1 - KNEE, 1 + KNEE), ""]
        lines += ["- point %d: %s" % (r["point"], "; ".join(
            w["text"] for w in r["why"])) for r in missed]
        lines.append("")
    return "\n".join(lines)


def print_dimension(o, args, spins, loss_hi):
    """The text of `xnf model dimension` (o: its JSON document; loss_hi:
    the loss at the top of the bisection's bracket)."""
    i = o["input"]
    lo, hi = o["bracket_pps"]
    r = o["at_max_rate"]
    ivs = o.get("intervals")
    print("model: L=%d beta=%d, slot %.4g ns" % (i["L"], i["beta"],
                                                  i["slot_ns"]))
    if ivs:
        print("from: %s" % i["measured_from"])
        print("pooled over them:")
    print_service(i["service"], o["capacity_pps"])
    print("arrivals %s%s%s; %s" % (
        i["arrival"], " cv=%g" % i["cv"] if i["cv"] else "", burst_text(i),
        "idle: polls forever" if spins is None else
        "idle: sleeps after %d empty polls" % spins))
    sp = o.get("spread") or {}
    if ivs:
        print("intervals between the snapshots (%d of %d price their own "
              "capacity; %s):" % (
                  o["intervals_used"], len(ivs),
                  "each one sample of it" if sp.get("kind") ==
                  "predictive" else "weighted by their time"))
        print("  %3s  %9s  %10s  %12s  %12s  %6s  %s" % (
            "#", "time", "rate", "full batches", "capacity", "weight",
            "loss at the answer"))
        for v in ivs:
            d = v["duration_s"]
            print("  %3d  %9s  %10s  %12d  %12s  %6s  %s" % (
                v["interval"], "%.2f s" % d if d >= 1 else "%.3g ms" % (
                    d * 1e3),
                fmt_rate(v["rate_pps"]) if v["rate_pps"] else "-",
                v["full_batches"],
                fmt_rate(v["capacity_pps"]) if v["capacity_pps"] else "-",
                "%.3f" % v["weight"] if v["used"] else "-",
                fmt_pct(v["loss_at_max_rate"]) if v["used"] else
                "left out: " + v["skipped"]))
    if sp.get("note"):
        print("  %s" % sp["note"])
    if sp.get("kind") == "predictive":
        print("capacity of a new interval, predicted from theirs (log-normal, "
              "Student t with %d degrees of freedom): median %s, 1%% "
              "quantile %s; the loss at a rate is its mean over:"
              % (sp["dof"], fmt_rate(sp["median_pps"]),
                 fmt_rate(sp["p01_pps"])))
        print("  %8s  %6s  %12s  %s" % ("quantile", "weight", "capacity",
                                        "loss at the answer"))
        for nd in sp["nodes"]:
            print("  %8.4g  %6.3f  %12s  %s" % (
                nd["quantile"], nd["weight"], fmt_rate(nd["capacity_pps"]),
                fmt_pct(nd["loss_at_max_rate"])))
    print("one core sustains %s at loss <= %g (%.1f%% of %scapacity; "
          "bisection to %.1g relative, %d steps)" % (
              fmt_rate(lo), i["target_loss"], 100 * lo / o["capacity_pps"],
              "the pooled " if ivs else "", hi / lo - 1,
              o["bisection_steps"]))
    print("  there: %sloss %s, mean batch %.2f of %d, busy %.1f%%; at "
          "%s: loss %s" % ("averaged over the predicted capacity: "
                           if sp.get("kind") == "predictive" else
                           "time-averaged over the intervals: " if ivs
                           else "", fmt_pct(r["loss"]), r["mean_batch"],
                           i["beta"], 100 * r["busy_fraction"],
                           fmt_rate(hi), fmt_pct(loss_hi)))
    if "load_pps" in o:
        print("load %s%s needs %d queue%s, one core each (%s per queue)"
              % (fmt_rate(o["load_pps"]), " with the busiest queue at "
                 "%gx the mean" % o["imbalance"] if o["imbalance"] > 1
                 else " spread evenly", o["queues"],
                 "s" if o["queues"] > 1 else "",
                 fmt_rate(o["load_pps"] / o["queues"])))
