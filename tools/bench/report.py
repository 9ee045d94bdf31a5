#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Report and plots of a bench.py results directory:

    report.py DIR          # DIR/report.md and DIR/*.png from DIR/*.csv, meta.json
    report.py --from DIR   # the same again from a recorded run (docs/bench); a
                           # figure whose CSV is not there is kept as it is

Every figure shows the median of the repetitions with min..max as error
bars. The figures follow the papers' (Niu et al., CAN'17): Fig. 2
throughput against frame size, Fig. 3 against chain length, Fig. 5 latency
against sending rate, Fig. 6 latency against chain length; plus zero-loss
throughput, batch sizes and loss against offered rate, and firewall size.
"""

import csv
import json
import math
import os
import statistics
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SIZE_ORDER = ["64", "128", "256", "512", "1024", "1500", "dc", "imix"]
RATE_ORDER = ["100", "1k", "10k", "100k", "1M", "max"]
# The dataplanes the summary figures show, in this order (others are in the tables).
MAIN = ["redirect", "minfwd", "fibfwd", "xnf-1nf-tailcall-lpm", "xnf-2nf-tailcall-lpm",
        "xnf-3nf-tailcall-lpm", "xnf-3nf-fused-lpm", "xnf-3nf-tailcall-fib", "linux",
        "linux-nft", "worker-l3fwd", "worker-macswap", "xskfwd"]
TARGET_TPUT_CEIL, TARGET_TPUT_NFT, TARGET_LAT = 0.85, 5.0, 2.0
TARGET_FIB = 1.0   # l3fwd in fib mode / the minimal bpf_fib_lookup forwarder


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def stats(rows, field):
    """(median, min, max, n) of field over rows, None if no number."""
    v = [x for x in (num(r.get(field)) for r in rows) if x is not None]
    if not v:
        return None
    return statistics.median(v), min(v), max(v), len(v)


def group(rows, *keys):
    out = {}
    for r in rows:
        out.setdefault(tuple(r.get(k, "") for k in keys), []).append(r)
    return out


def fmt(s, scale=1.0, digits=3):
    if s is None:
        return "–"
    med, lo, hi, n = s
    if n == 1 or math.isclose(lo, hi):
        return f"{med / scale:.{digits}f}"
    return f"{med / scale:.{digits}f} [{lo / scale:.{digits}f}–{hi / scale:.{digits}f}]"


def dp_order(names):
    rank = {n: i for i, n in enumerate(MAIN)}
    return sorted(set(names), key=lambda n: (rank.get(n, len(MAIN)), n))


# Every dataplane keeps one colour and one marker in every figure, so that no
# two lines differ by their dash alone: assign_styles() gives each dataplane
# of a run its own pair (the MAIN ones first, in MAIN's order). Dataplanes
# outside xnf are drawn dashed as well, a second cue.
COLORS = ["black", "tab:blue", "tab:green", "tab:orange", "tab:brown", "tab:pink", "tab:red",
          "tab:olive", "tab:purple", "tab:cyan", "tab:gray", "navy", "lime", "gold", "teal",
          "salmon", "indigo", "darkred", "yellowgreen", "slateblue"]
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">", "p", "d", "H", "8"]
STYLES = {}


def assign_styles(names):
    for i, dp in enumerate(dp_order(names)):
        ls = "-" if dp == "redirect" or dp.startswith("xnf-") else "--"
        STYLES[dp] = (COLORS[i % len(COLORS)], MARKERS[i % len(MARKERS)], ls)


def style(dp):
    """(colour, marker, line style) of a dataplane."""
    if dp not in STYLES:
        assign_styles(list(STYLES) + [dp])
    return STYLES[dp]


def errbar(ax, xs, ss, scale, label, dp, color=None, marker=None, ls=None):
    """Median with min..max error bars at xs; None in ss is a point not measured."""
    pts = [(x, s) for x, s in zip(xs, ss) if s is not None]
    if not pts:
        return
    x = [p[0] for p in pts]
    med = [p[1][0] / scale for p in pts]
    lo = [(p[1][0] - p[1][1]) / scale for p in pts]
    hi = [(p[1][2] - p[1][0]) / scale for p in pts]
    c, m, line = style(dp) if dp else (None, "o", "-")
    ax.errorbar(x, med, yerr=[lo, hi], label=label, color=color or c,
                linestyle=ls or line, marker=marker or m, markersize=5, capsize=2,
                linewidth=1.3)


def legend_right(ax, **kw):
    """The legend beside the axes, never over the data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=7, **kw)


def save(fig, out, name, made):
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    made.append(name)


def empty_fig(out, name, title, why, made):
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.set_title(title)
    ax.text(0.5, 0.5, why, ha="center", va="center", wrap=True)
    ax.set_axis_off()
    save(fig, out, name, made)


# ---- figures ---------------------------------------------------------------------

def size_axis(ax, sizes):
    """Frame sizes on the x axis: the numeric ones evenly spaced (they double,
    about), then a gap and the categorical mixes ('dc', 'imix'), which are not
    sizes: returns {size: x} and the numeric sizes, in order."""
    nums = [s for s in sizes if s.isdigit()]
    cats = [s for s in sizes if not s.isdigit()]
    pos = {s: i for i, s in enumerate(nums)}
    pos.update({s: len(nums) + 0.5 + i for i, s in enumerate(cats)})
    ax.set_xticks([pos[s] for s in sizes])
    ax.set_xticklabels(sizes)
    if nums and cats:
        ax.axvline(len(nums) - 0.25, color="grey", linewidth=0.8)
        ax.text(len(nums) - 0.2, 1.0, " mixes", transform=ax.get_xaxis_transform(),
                va="top", fontsize=7, color="grey")
    return pos, nums


def fig_size(out, rows, zl, made):
    """Fig. 2: throughput (Mpps and Gb/s) against frame size. Log y axes: the
    dataplanes differ by more than a decade. The frame-size mixes are points of
    their own, not joined to the sizes' lines."""
    name = "fig2_throughput_size.png"
    if not rows:
        return empty_fig(out, name, "Throughput vs frame size", "no throughput rows", made)
    sizes = [s for s in SIZE_ORDER if any(r["size"] == s for r in rows)]
    sizes += sorted({r["size"] for r in rows} - set(sizes))
    g = group(rows, "dataplane", "size")
    dps = [d for d in dp_order(r["dataplane"] for r in rows) if d in MAIN]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    for ax, field, scale in ((axes[0], "rx_pps", 1e6), (axes[1], "rx_gbps", 1)):
        pos, nums = size_axis(ax, sizes)
        for dp in dps:
            errbar(ax, [pos[s] for s in nums], [stats(g.get((dp, s), []), field) for s in nums],
                   scale, dp, dp)
            for s in sizes:
                if s not in nums:
                    errbar(ax, [pos[s]], [stats(g.get((dp, s), []), field)], scale, None, dp,
                           ls="none")
        ax.set_yscale("log")
        ax.set_xlabel("frame size (bytes)")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("Mpps (max offered load)")
    axes[1].set_ylabel("Gb/s (frames with FCS)")
    legend_right(axes[1])
    fig.suptitle("Throughput vs frame size (median, min–max; log scale), as Niu et al. Fig. 2")
    save(fig, out, name, made)


def fig_zeroloss(out, zl, tput, made):
    """Zero-loss against maximum-load throughput, sorted by the latter. Log
    axis; a zero-loss search that found nothing above its resolution is a
    hatched bar up to that bound, a point not measured an 'n/a': never a bar of 0."""
    name = "fig2b_zeroloss.png"
    if not zl:
        return empty_fig(out, name, "Zero-loss throughput", "no zero-loss rows", made)
    size = "64" if any(r["size"] == "64" for r in zl) else zl[0]["size"]
    rows = [r for r in zl if r["size"] == size]
    trows = [r for r in tput if r["size"] == size]
    g, gt = group(rows, "dataplane"), group(trows, "dataplane")
    dps = dp_order(r["dataplane"] for r in rows + trows)
    ms = {d: stats(gt.get((d,), []), "rx_pps") for d in dps}
    zs = {d: stats(g.get((d,), []), "rx_pps") for d in dps}
    # A search that found no rate above its resolution records 0: that is an
    # upper bound (the resolution), not a measured 0.
    res = {d: stats(g.get((d,), []), "resolution_pps") for d in dps}
    below = {d: zs[d] is not None and zs[d][0] <= 0 and res[d] is not None for d in dps}
    zs = {d: z if z and z[0] > 0 else None for d, z in zs.items()}
    dps.sort(key=lambda d: -(ms[d] or zs[d] or (0,))[0])
    vals = [v[0] / 1e6 for v in list(ms.values()) + list(zs.values()) if v]
    vals += [res[d][0] / 1e6 for d in dps if below[d]]
    floor = min(vals) / 3
    fig, ax = plt.subplots(figsize=(max(7, 0.6 * len(dps) + 3), 5))
    w = 0.4
    for i, d in enumerate(dps):
        for dx, s, color in ((-w / 2, ms[d], "tab:blue"), (w / 2, zs[d], "tab:green")):
            if s:
                ax.bar(i + dx, s[0] / 1e6 - floor, w, bottom=floor, color=color,
                       yerr=[[(s[0] - s[1]) / 1e6], [(s[2] - s[0]) / 1e6]], capsize=2,
                       error_kw={"linewidth": 0.8})
            elif color == "tab:green" and below[d]:
                top = res[d][0] / 1e6
                ax.bar(i + dx, top - floor, w, bottom=floor, color="none", edgecolor=color,
                       hatch="///", linewidth=0.8)
                ax.text(i + dx, top * 1.08, f"< {top:.2f}", ha="center", va="bottom",
                        fontsize=6, rotation=90)
            else:
                ax.text(i + dx, floor * 1.15, "n/a", ha="center", va="bottom", fontsize=7,
                        rotation=90, color="grey")
        if ms[d] and zs[d]:
            ax.text(i + w / 2, zs[d][2] / 1e6 * 1.08, f"{zs[d][0] / ms[d][0]:.0%}",
                    ha="center", va="bottom", fontsize=6)
    ax.bar(0, 0, 0, color="tab:blue", label="max offered load")
    ax.bar(0, 0, 0, color="tab:green", label="zero loss")
    ax.bar(0, 0, 0, color="none", edgecolor="tab:green", hatch="///",
           label="zero loss: none found above\nthe search's resolution (Mpps)")
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor)
    ax.set_xticks(range(len(dps)))
    ax.set_xticklabels(dps, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("Mpps (log scale)")
    ax.set_title(f"Throughput at {size} B: max offered load vs zero loss (median, min–max; "
                 "label: zero loss as % of max)", fontsize=9)
    legend_right(ax)
    ax.grid(axis="y", alpha=0.3, which="both")
    save(fig, out, name, made)


def fig_chain(out, rows, made):
    """Fig. 3: throughput against chain length, one line per frame size."""
    name = "fig3_throughput_chain.png"
    forms = ("tailcall-lpm", "fused-lpm", "tailcall-fib", "fused-fib")
    # The chains of 1-3 NFs by form (not, e.g., --vs-nft-ct's stateful ones).
    xr = [r for r in rows if r["kind"] == "xnf" and r["dataplane"].endswith(forms)]
    if not xr:
        return empty_fig(out, name, "Throughput vs chain length", "no xnf chain rows", made)
    variants = [v for v in forms if any(r["dataplane"].endswith(v) for r in xr)]
    sizes = [s for s in SIZE_ORDER if any(r["size"] == s for r in xr)]
    base = group([r for r in rows if r["dataplane"] == "redirect"], "size")
    g = group(xr, "form", "route", "chain_len", "size")
    fig, axes = plt.subplots(1, len(variants), figsize=(4.2 * len(variants), 4), squeeze=False)
    for ax, v in zip(axes[0], variants):
        form, route = v.split("-")
        for k, s in enumerate(sizes):
            color, marker = COLORS[1 + k % (len(COLORS) - 1)], MARKERS[k % len(MARKERS)]
            ss = [stats(g.get((form, route, str(n), s), []), "rx_pps") for n in (1, 2, 3)]
            pts = [(n, q) for n, q in zip((1, 2, 3), ss) if q]
            if pts:
                ax.errorbar([p[0] for p in pts], [p[1][0] / 1e6 for p in pts],
                            yerr=[[(p[1][0] - p[1][1]) / 1e6 for p in pts],
                                  [(p[1][2] - p[1][0]) / 1e6 for p in pts]],
                            marker=marker, color=color, capsize=2,
                            label=f"{s} B" if s.isdigit() else s)
            b = stats(base.get((s,), []), "rx_pps")
            if b:
                ax.axhline(b[0] / 1e6, color=color, linestyle=":", linewidth=0.8)
        ax.set_title(f"xnf {v} (dotted: bare redirect)", fontsize=9)
        ax.set_xticks([1, 2, 3])
        ax.set_xticklabels(["l3fwd", "fw,l3fwd", "fw,l3fwd,l2fwd"], fontsize=7)
        ax.set_xlabel("chain")
        ax.set_ylabel("Mpps")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    legend_right(axes[0][-1], title="frame size")
    fig.suptitle("Throughput vs NF chain length, as Niu et al. Fig. 3")
    save(fig, out, name, made)


def rate_x(r):
    v = num(r.get("offered_pps"))
    return v if v else num(r.get("tx_pps"))


def fig_latency_rate(out, rows, made):
    """Fig. 5: latency against offered rate."""
    name = "fig5_latency_rate.png"
    if not rows:
        return empty_fig(out, name, "Latency vs offered rate", "no latency rows", made)
    dps = dp_order(r["dataplane"] for r in rows)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for dp in dps:
        g = group([r for r in rows if r["dataplane"] == dp], "rate")
        rates = [x for x in RATE_ORDER if (x,) in g] + sorted(k[0] for k in g if k[0] not in RATE_ORDER)
        xs = [statistics.median(rate_x(r) for r in g[(x,)]) for x in rates]
        for ax, f in zip(axes, ("lat_p50_ns", "lat_p99_ns")):
            errbar(ax, xs, [stats(g[(x,)], f) for x in rates], 1e3, dp, dp)
    for ax, t in zip(axes, ("p50", "p99")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("offered rate (pps; 'max' plotted at the rate reached)")
        ax.set_ylabel(f"latency {t} (µs)")
        ax.grid(alpha=0.3, which="both")
    legend_right(axes[1])
    size = rows[0].get("size", "")
    fig.suptitle(f"Latency vs sending rate ({size} B frames), as Niu et al. Fig. 5")
    save(fig, out, name, made)


def fig_latency_chain(out, rows, made):
    """Fig. 6: latency against chain length, p50, mean and p99 as points with
    min..max bars on a log axis (they span three decades)."""
    name = "fig6_latency_chain.png"
    if not rows:
        return empty_fig(out, name, "Latency vs chain length", "no chain-latency rows", made)
    dps = dp_order(r["dataplane"] for r in rows)
    g = group(rows, "dataplane")
    fig, ax = plt.subplots(figsize=(max(7, 0.75 * len(dps) + 3), 4.8))
    w = 0.25
    for k, (f, label, color, marker) in enumerate(
            (("lat_p50_ns", "p50", "tab:blue", "o"), ("lat_mean_ns", "mean", "tab:orange", "s"),
             ("lat_p99_ns", "p99", "tab:red", "^"))):
        errbar(ax, [i + (k - 1) * w for i in range(len(dps))],
               [stats(g[(d,)], f) for d in dps], 1e3, label, None, color=color, marker=marker,
               ls="none")
    for i in range(1, len(dps)):
        ax.axvline(i - 0.5, color="grey", linewidth=0.4, alpha=0.5)
    ax.set_yscale("log")
    ax.set_xlim(-0.5, len(dps) - 0.5)
    ax.set_xticks(range(len(dps)))
    ax.set_xticklabels(dps, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("latency (µs, log scale)")
    rate, size = rows[0].get("rate", ""), rows[0].get("size", "")
    ax.set_title(f"Latency by dataplane and chain length ({size} B, {rate} pps; median, "
                 "min–max), as Niu et al. Fig. 6", fontsize=9)
    legend_right(ax)
    ax.grid(axis="y", alpha=0.3, which="both")
    save(fig, out, name, made)


def fig_batch(out, batch, lat, made):
    """Batch-size distribution and loss against offered rate."""
    name = "batch_loss_rate.png"
    if not batch:
        return empty_fig(out, name, "Batch sizes vs offered rate",
                         "no batch histograms (xnf or worker dataplanes only)", made)
    b = [r for r in batch if r.get("experiment", "latency") == "latency"] or batch
    dps = dp_order(r["dataplane"] for r in b)
    fig, axes = plt.subplots(len(dps), 2, figsize=(12, 3.4 * len(dps)), squeeze=False)
    cmap = plt.get_cmap("plasma")
    for row, dp in zip(axes, dps):
        mine = [r for r in b if r["dataplane"] == dp]
        src = "worker" if any(r["source"] == "worker" for r in mine) else "napi"
        mine = [r for r in mine if r["source"] == src]
        rates = [x for x in RATE_ORDER if any(r["rate"] == x for r in mine)]
        for k, rate in enumerate(rates):
            h = {}
            for r in mine:
                if r["rate"] == rate:
                    h[int(r["batch"])] = h.get(int(r["batch"]), 0) + int(r["polls"])
            tot = sum(h.values())
            if not tot:
                continue
            xs = sorted(h)
            row[0].plot(xs, [h[x] / tot for x in xs], marker=".", label=f"{rate} pps",
                        color=cmap(k / max(1, len(rates) - 1)))
        row[0].set_yscale("log")
        row[0].set_xlabel(f"batch size ({'worker ring reads' if src == 'worker' else 'NAPI poll'})")
        row[0].set_ylabel("fraction of polls")
        row[0].set_title(f"{dp}: batch-size distribution by offered rate", fontsize=9)
        legend_right(row[0])
        row[0].grid(alpha=0.3)
        lr = group([r for r in lat if r["dataplane"] == dp], "rate")
        rr = [x for x in RATE_ORDER if (x,) in lr]
        xs = [statistics.median(rate_x(r) for r in lr[(x,)]) for x in rr]
        loss = [stats(lr[(x,)], "loss") for x in rr]
        mb = [stats(lr[(x,)], "batch_mean") for x in rr]
        ax2 = row[1].twinx()
        errbar(row[1], xs, [(s[0] * 100, s[1] * 100, s[2] * 100, s[3]) if s else None for s in loss],
               1, "loss (%)", dp, color="tab:red", marker="o", ls="-")
        errbar(ax2, xs, mb, 1, "mean batch", dp, color="tab:blue", marker="s", ls="--")
        row[1].set_xscale("log")
        row[1].set_xlabel("offered rate (pps)")
        row[1].set_ylabel("loss (%)", color="tab:red")
        ax2.set_ylabel("mean batch size", color="tab:blue")
        row[1].set_title(f"{dp}: loss and mean batch vs offered rate", fontsize=9)
        row[1].grid(alpha=0.3)
    save(fig, out, name, made)


def fig_rules(out, rows, made):
    name = "rules_throughput.png"
    if not rows:
        return empty_fig(out, name, "Firewall size vs throughput", "no rule-count rows", made)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for dp in dp_order(r["dataplane"] for r in rows):
        g = group([r for r in rows if r["dataplane"] == dp], "rules")
        ns = sorted(int(k[0]) for k in g)
        errbar(ax, ns, [stats(g[(str(n),)], "rx_pps") for n in ns], 1e6, dp, dp)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("firewall rules")
    ax.set_ylabel("Mpps (64 B, max offered load; log scale)")
    ax.grid(alpha=0.3, which="both")
    legend_right(ax)
    ax.set_title("Firewall rule count vs throughput: xnf (fw,l3fwd) and nftables")
    save(fig, out, name, made)


# ---- the Markdown report ---------------------------------------------------------------

def table(header, body):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(out)


def ratio(a, b):
    return a / b if a is not None and b else None


def targets(tput, lat, zl=()):
    """The issue's targets, as ratios of medians measured in this run: at
    maximum offered load and at zero loss (RFC 2544's throughput)."""
    out = []
    for what, rows in (("max load", tput), ("zero loss", zl)):
        g = group([r for r in rows if r["size"] == "64"], "dataplane")
        med = lambda d: (stats(g.get((d,), []), "rx_pps") or (None,))[0]
        for chain in ("xnf-3nf-tailcall-lpm", "xnf-3nf-fused-lpm"):
            c, ceil, nft = med(chain), med("redirect"), med("linux-nft")
            if c is None:
                continue
            r1, r2 = ratio(c, ceil), ratio(c, nft)
            out.append((f"{chain} / redirect, 64 B, {what}", r1, f">= {TARGET_TPUT_CEIL:.2f}",
                        None if r1 is None else r1 >= TARGET_TPUT_CEIL, c, ceil))
            out.append((f"{chain} / linux-nft (same rules), 64 B, {what}", r2,
                        f">= {TARGET_TPUT_NFT:.1f}", None if r2 is None else r2 >= TARGET_TPUT_NFT,
                        c, nft))
        fib, ff = med("xnf-1nf-tailcall-fib"), med("fibfwd")
        if fib is not None and ff:
            r = fib / ff
            out.append((f"xnf-1nf-tailcall-fib / fibfwd, 64 B, {what}", r,
                        f">= {TARGET_FIB:.2f}", r >= TARGET_FIB, fib, ff))
    lg = group(lat, "dataplane", "rate")
    for dp in ("xnf-3nf-tailcall-lpm", "xnf-1nf-tailcall-lpm", "redirect", "linux-nft",
               "worker-l3fwd"):
        lo = stats(lg.get((dp, "100"), []), "lat_p50_ns")
        mid = stats(lg.get((dp, "10k"), []), "lat_p50_ns")
        if lo and mid:
            r = lo[0] / mid[0]
            out.append((f"{dp}: p50 at 100 pps / p50 at 10 kpps", r, f"<= {TARGET_LAT:.1f}",
                        r <= TARGET_LAT, lo[0], mid[0]))
    return out


# The CSV each figure is drawn from; `--from` leaves a figure whose CSV was
# not recorded as it is (docs/bench keeps no batch.csv).
SOURCES = {"fig2_throughput_size.png": "throughput.csv", "fig2b_zeroloss.png": "zeroloss.csv",
           "fig3_throughput_chain.png": "throughput.csv", "fig5_latency_rate.png": "latency.csv",
           "fig6_latency_chain.png": "latency_chain.csv", "batch_loss_rate.png": "batch.csv",
           "rules_throughput.png": "rules.csv"}


def write(out, rerender=False):
    """Figures and report.md of the results in out. rerender: from CSVs
    recorded earlier, keeping the figures whose CSV is not there."""
    tput = read_csv(os.path.join(out, "throughput.csv"))
    zl = read_csv(os.path.join(out, "zeroloss.csv"))
    lat = read_csv(os.path.join(out, "latency.csv"))
    chain = read_csv(os.path.join(out, "latency_chain.csv"))
    batch = read_csv(os.path.join(out, "batch.csv"))
    rules = read_csv(os.path.join(out, "rules.csv"))
    meta = {}
    if os.path.exists(os.path.join(out, "meta.json")):
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
    made = []
    assign_styles(r["dataplane"] for r in tput + zl + lat + chain + batch + rules)
    for name, draw in (("fig2_throughput_size.png", lambda: fig_size(out, tput, zl, made)),
                       ("fig2b_zeroloss.png", lambda: fig_zeroloss(out, zl, tput, made)),
                       ("fig3_throughput_chain.png", lambda: fig_chain(out, tput, made)),
                       ("fig5_latency_rate.png", lambda: fig_latency_rate(out, lat, made)),
                       ("fig6_latency_chain.png", lambda: fig_latency_chain(out, chain, made)),
                       ("batch_loss_rate.png", lambda: fig_batch(out, batch, lat, made)),
                       ("rules_throughput.png", lambda: fig_rules(out, rules, made))):
        if (rerender and not os.path.exists(os.path.join(out, SOURCES[name])) and
                os.path.exists(os.path.join(out, name))):
            print(f"report.py: {name} kept: no {SOURCES[name]} in {out}", file=sys.stderr)
            made.append(name)
            continue
        draw()

    L = ["# xnf benchmark report", ""]
    a = meta.get("args", {})
    L += [f"- command: `{meta.get('command', '?')}`{' (quick)' if meta.get('quick') else ''}",
          f"- when: {meta.get('started', '?')} .. {meta.get('finished', '?')}, "
          f"{meta.get('elapsed_s', 0) / 60:.1f} min (estimated {meta.get('estimated_s', 0) / 60:.1f}), "
          f"{meta.get('trials', '?')} trials on {meta.get('sessions', '?')} fresh test beds",
          f"- machine: {meta.get('cpu', '?')}, {meta.get('ncpus', '?')} CPUs, Linux "
          f"{meta.get('kernel', '?')}; xnf {meta.get('git', '?')}; load average "
          f"{meta.get('loadavg_start', '?')} at the start, {meta.get('loadavg_end', '?')} at the end "
          f"(median over trials {fmt(stats(tput + lat, 'loadavg'), 1, 2)}: other work on the machine)",
          f"- traffic: IPv4 UDP, {meta.get('flows', '?')} flows, trials of {a.get('duration', '?')} s "
          f"(latency at low rates: at least {a.get('lat_packets', '?')} frames, up to "
          f"{a.get('lat_max_duration', '?')} s), {a.get('repeat', '?')} repetitions per point; "
          "tables give median [min–max]", ""]
    L += ["## Test bed and placement", "",
          "    [src ns] generator --veth--> [DUT ns: dataplane] --veth--> [sink ns] XDP sink", "",
          "Fresh namespaces for every dataplane (and every repetition of the throughput sweep). "
          "The generator (BPF_PROG_RUN live frames) runs on CPU "
          f"{a.get('gen_cpu', '?')}; the DUT's receive work on CPU {a.get('dut_cpu', '?')}: "
          "veth runs NAPI on the CPU that transmitted, so threaded NAPI is on for the DUT's "
          "ingress device and its napi thread is pinned, after the XDP attach. The sink's XDP "
          "program runs in the softirq of the CPU that transmits into its veth, i.e. on the "
          "DUT's CPU, for every dataplane alike.", ""]
    pl = meta.get("placement", {})
    if pl:
        L.append(table(["dataplane", "napi thread: CPUs", "threaded", "how"],
                       [[d, ", ".join(f"{t['comm']}: {t['cpus']}" for t in p.get("napi", [])),
                         p.get("threaded", ""), p.get("how", "")] for d, p in pl.items()]))
        L.append("")
    L += ["## Targets (ratios of medians from this run)", ""]
    tg = targets(tput, lat, zl)
    if tg:
        L.append(table(["ratio", "measured", "target", "met", "numerator", "denominator"],
                       [[t[0], "–" if t[1] is None else f"{t[1]:.2f}", t[2],
                         "–" if t[3] is None else ("yes" if t[3] else "**no**"),
                         "–" if t[4] is None else f"{t[4]:,.0f}",
                         "–" if t[5] is None else f"{t[5]:,.0f}"] for t in tg]))
        L += ["", "Throughput ratios are in packets per second (frames the sink received); "
              "latency ratios of p50 in nanoseconds.", ""]
    else:
        L += ["No data for the targets.", ""]

    if tput:
        sizes = [s for s in SIZE_ORDER if any(r["size"] == s for r in tput)]
        g = group(tput, "dataplane", "size")
        dps = dp_order(r["dataplane"] for r in tput)
        L += ["## Throughput at maximum offered load (Mpps)", "",
              "![throughput vs frame size](fig2_throughput_size.png)", ""]
        L.append(table(["dataplane"] + [f"{s} B" for s in sizes],
                       [[d] + [fmt(stats(g.get((d, s), []), "rx_pps"), 1e6) for s in sizes]
                        for d in dps]))
        L += ["", "### Gb/s (frame bits including the FCS)", ""]
        L.append(table(["dataplane"] + [f"{s} B" for s in sizes],
                       [[d] + [fmt(stats(g.get((d, s), []), "rx_gbps"), 1, 2) for s in sizes]
                        for d in dps]))
    # Runs recorded before every dataplane's CPU time was: no such table.
    if tput and any(num(r.get("cpu_ns_per_pkt")) for r in tput):
        L += ["", "### DUT CPU per packet (ns)", "",
              "The schedstat run time of the DUT ingress's napi threads (and, AF_XDP, "
              "of the forwarder's threads) during the trial over the frames the sink "
              "received (`cpu_ns_per_pkt`; `napi_cpu_ms` in the CSV).", ""]
        L.append(table(["dataplane"] + [f"{s} B" for s in sizes],
                       [[d] + [fmt(stats(g.get((d, s), []), "cpu_ns_per_pkt"), 1, 0)
                               for s in sizes] for d in dps]))
    if tput:
        L += ["", "### Loss at maximum offered load (%), and what the generator offered (Mpps)", ""]
        L.append(table(["dataplane"] + [f"{s} B" for s in sizes],
                       [[d] + [f"{fmt(stats(g.get((d, s), []), 'loss'), 0.01, 1)} of "
                               f"{fmt(stats(g.get((d, s), []), 'tx_pps'), 1e6, 2)}"
                               for s in sizes] for d in dps]))
        L += ["", "### Throughput vs chain length", "",
              "![throughput vs chain length](fig3_throughput_chain.png)", ""]
    if zl:
        g = group(zl, "dataplane", "size")
        sizes = [s for s in SIZE_ORDER if any(r["size"] == s for r in zl)]
        L += ["## Zero-loss throughput (Mpps)", "",
              meta.get("definitions", {}).get("zero_loss", ""), "",
              "![zero loss](fig2b_zeroloss.png)", ""]
        L.append(table(["dataplane"] + [f"{s} B" for s in sizes],
                       [[d] + [fmt(stats(g.get((d, s), []), "rx_pps"), 1e6) for s in sizes]
                        for d in dp_order(r["dataplane"] for r in zl)]))
        short = sorted({(r["dataplane"], r["size"], r["gen_short_pps"]) for r in zl
                        if r.get("gen_short_pps")})
        if short:
            L += ["", "The generator fell more than 10% short of the offered rate in some "
                  "trials of these searches (its paced mode pays a cost per call), so their "
                  "results are bounded by the generator, not by the dataplane: " +
                  "; ".join(f"{d} {s} B at {float(p) / 1e6:.2f} Mpps" for d, s, p in short) + "."]
        L += ["", "Strictly no frame lost (the highest such trial of the same searches, Mpps):", ""]
        L.append(table(["dataplane"] + [f"{s} B" for s in sizes],
                       [[d] + [fmt(stats(g.get((d, s), []), "strict_rx_pps"), 1e6) for s in sizes]
                        for d in dp_order(r["dataplane"] for r in zl)]))
        L.append("")
    if lat:
        g = group(lat, "dataplane", "rate")
        rates = [x for x in RATE_ORDER if any(r["rate"] == x for r in lat)]
        L += ["## Latency vs offered rate", "", "![latency vs rate](fig5_latency_rate.png)", "",
              f"p50 / p99 in µs, {lat[0].get('size', '')} B frames; loss in %.", ""]
        L.append(table(["dataplane"] + rates,
                       [[d] + [f"{fmt(stats(g.get((d, x), []), 'lat_p50_ns'), 1e3, 1)} / "
                               f"{fmt(stats(g.get((d, x), []), 'lat_p99_ns'), 1e3, 1)}"
                               for x in rates] for d in dp_order(r["dataplane"] for r in lat)]))
        L += ["", "Loss (%) and mean batch size (NAPI polls of the DUT's ingress for xnf, ring "
              "reads for the worker; none recorded for the others):", ""]
        L.append(table(["dataplane"] + rates,
                       [[d] + [f"{fmt(stats(g.get((d, x), []), 'loss'), 0.01, 2)} / "
                               f"{fmt(stats(g.get((d, x), []), 'batch_mean'), 1, 1)}"
                               for x in rates] for d in dp_order(r["dataplane"] for r in lat)]))
        L += ["", "![batch sizes and loss](batch_loss_rate.png)", ""]
    if chain:
        g = group(chain, "dataplane")
        L += ["## Latency vs chain length", "", "![latency vs chain](fig6_latency_chain.png)", "",
              f"{chain[0].get('size', '')} B at {chain[0].get('rate', '')} pps, µs.", ""]
        L.append(table(["dataplane", "chain", "p50", "mean", "p99", "loss %"],
                       [[d, g[(d,)][0].get("nfs", ""),
                         fmt(stats(g[(d,)], "lat_p50_ns"), 1e3, 1),
                         fmt(stats(g[(d,)], "lat_mean_ns"), 1e3, 1),
                         fmt(stats(g[(d,)], "lat_p99_ns"), 1e3, 1),
                         fmt(stats(g[(d,)], "loss"), 0.01, 2)]
                        for d in dp_order(r["dataplane"] for r in chain)]))
        L.append("")
    if rules:
        g = group(rules, "dataplane", "rules")
        ns = sorted({int(r["rules"]) for r in rules})
        L += ["## Firewall size vs throughput (64 B, Mpps)", "",
              "![rules](rules_throughput.png)", ""]
        L.append(table(["dataplane"] + [f"{n:,}" for n in ns],
                       [[d] + [fmt(stats(g.get((d, str(n)), []), "rx_pps"), 1e6) for n in ns]
                        for d in dp_order(r["dataplane"] for r in rules)]))
        L.append("")
    vt = os.path.join(out, "model", "validate.txt")
    sweep = os.path.join(out, "model", "sweep.json")
    if os.path.exists(sweep):
        with open(sweep) as f:
            sw = json.load(f)
        L += ["## Batching model input (issue 7)", "",
              f"`model/sweep.json`: AF_XDP worker `{sw.get('nf')}`, batch {sw.get('batch')}, "
              f"ring {sw.get('ring')}, {len(sw.get('points', []))} offered rates.", ""]
        if os.path.exists(vt):
            with open(vt) as f:
                L += ["```", f.read().rstrip(), "```", ""]
        else:
            L += ["`python3 -m xnf_model validate` was not available in this run.", ""]
    if meta.get("generator_errors"):
        L += ["## Generator failures", "",
              "Trials the generator could not run (each retried once; a point whose retry "
              "failed too has no row):", ""]
        L += [f"- {e['dataplane']} {e['what']} (attempt {e['attempt']}): {e['error'][:200]}"
              for e in meta["generator_errors"]]
        L.append("")
    if meta.get("skipped"):
        L += ["## Not measured", ""]
        L += [f"- {d}: {why}" for d, why in meta["skipped"]]
        L.append("")
    defs = meta.get("definitions", {})
    if defs:
        L += ["## Definitions", ""] + [f"- {k}: {v}" for k, v in defs.items()] + [""]
    L += ["## Files", "", "CSV (one row per trial): " +
          ", ".join(f"`{n}`" for n in ("throughput.csv", "zeroloss.csv", "latency.csv",
                                         "latency_chain.csv", "batch.csv", "rules.csv")) +
          "; raw JSON per trial in `raw/`; figures: " + ", ".join(f"`{m}`" for m in made), ""]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(L))
    return made


if __name__ == "__main__":
    if len(sys.argv) == 2 and not sys.argv[1].startswith("-"):
        write(sys.argv[1])
    elif len(sys.argv) == 3 and sys.argv[1] == "--from":
        write(sys.argv[2], rerender=True)
    else:
        sys.exit("Usage: report.py RESULTS_DIR | report.py --from RECORDED_DIR")
