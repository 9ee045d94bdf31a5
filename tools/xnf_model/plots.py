# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
The PNG figures: predict's batch-size distribution (against the
measurement, if any) and validate's mean batch, loss and JSD over the
rates of a sweep, with three of its distributions side by side.
matplotlib is imported here only, and only when a figure is drawn, so
predict and dimension run without it.
"""
import os

import numpy as np

from .model import TARGET_JSD, ModelError
from .output import fmt_pct, fmt_rate

# The smallest probability the distribution plots show.
FLOOR = 1e-4


def plot_predict(path, o):
    plt = pyplot()
    v = np.asarray(o["distribution"])
    k = np.arange(len(v))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    meas = o.get("measured")
    if meas:
        dist_axes(ax, meas["distribution"], v)
        ax.set_title("L=%d beta=%d %s: JSD %.4f, RE %.3g" % (
            o["input"]["L"], o["input"]["beta"],
            fmt_rate(o["input"]["rate_pps"]), meas["jsd"],
            meas["rel_error_mean"]))
    else:
        ax.bar(k, v, width=0.8, label="model", color="tab:red")
        ax.set_title("L=%d beta=%d %s: mean %.2f, loss %s" % (
            o["input"]["L"], o["input"]["beta"],
            fmt_rate(o["input"]["rate_pps"]), o["mean_batch"],
            fmt_pct(o["loss"])))
        ax.set_xlabel("batch size (packets)")
        ax.set_ylabel("probability")
        ax.legend()
    fig.tight_layout()
    save(fig, path)


def validate_plots(path, path_dist, res):
    plt = pyplot()
    rows = [r for r in res["rows"] if "error" not in r]
    if not rows:
        return
    x = np.array([r["rate_pps"] for r in rows]) / 1e6
    fig, ax = plt.subplots(1, 3, figsize=(14, 4.6))
    ax[0].plot(x, [r["mean_measured"] for r in rows], "o", label="measured")
    ax[0].plot(x, [r["mean_model"] for r in rows], "x-", label="model")
    ax[0].set_ylabel("mean batch (packets)")
    ax[1].plot(x, [100 * r["loss_measured"] for r in rows], "o",
               label="measured")
    ax[1].plot(x, [100 * r["loss_model"] for r in rows], "x-", label="model")
    ax[1].set_ylabel("loss at the ring (%)")
    ax[2].plot(x, [r["jsd"] for r in rows], "o-", label="JSD")
    ax[2].plot(x, [r["jsd_nonempty"] for r in rows], "s--",
               label="JSD, sizes >= 1")
    ax[2].axhline(TARGET_JSD, color="grey", ls=":", label="target")
    ax[2].set_ylabel("Jensen-Shannon divergence")
    for a in ax:
        # The sweep's rates span decades: a linear axis crowds the low ones.
        a.set_xscale("log")
        a.set_xlabel("arrival rate at the ring (Mpps, log scale)")
        a.grid(alpha=0.3, which="both")
        a.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3,
                 fontsize=8, frameon=False)
    fig.suptitle("model vs AF_XDP worker, L=%d beta=%d" % (res["L"],
                                                          res["beta"]))
    fig.tight_layout()
    save(fig, path)
    pick = sorted({0, len(rows) // 2, len(rows) - 1})
    fig, ax = plt.subplots(1, len(pick), figsize=(6 * len(pick), 4.2),
                           squeeze=False)
    for a, i in zip(ax[0], pick):
        r = rows[i]
        dist_axes(a, r["distribution_measured"], r["distribution_model"])
        a.set_title("%s: JSD %.3f, RE %.3g" % (fmt_rate(r["rate_pps"]),
                                               r["jsd"], r["rel_error"]))
    fig.tight_layout()
    save(fig, path_dist)


def dist_axes(a, measured, model):
    """Two batch-size distributions on one axes: the measurement as bars, the
    model as a step outline over them, so neither hides the other however
    many sizes there are. Log probability (the tails matter for the JSD);
    the x axis ends after the last size either gives 1e-4."""
    pm, pd = np.asarray(measured, float), np.asarray(model, float)
    n = max(len(pm), len(pd))
    pm, pd = np.pad(pm, (0, n - len(pm))), np.pad(pd, (0, n - len(pd)))
    seen = np.nonzero((pm >= FLOOR) | (pd >= FLOOR))[0]
    hi = min(n - 1, max(8, int(seen[-1]) + 1 if len(seen) else 8))
    k = np.arange(hi + 1)
    a.bar(k, np.maximum(pm[:hi + 1], FLOOR), width=0.85, bottom=0,
          color="tab:blue", alpha=0.6, label="measured")
    a.step(np.append(k, hi + 1) - 0.5, np.append(pd[:hi + 1], pd[hi]),
           where="post", color="tab:red", linewidth=1.6, label="model")
    a.set_yscale("log")
    a.set_ylim(FLOOR, 1.5)
    a.set_xlim(-0.7, hi + 0.7)
    a.set_xlabel("batch size (packets)")
    a.set_ylabel("probability (log scale)")
    a.grid(alpha=0.3, which="both", axis="y")
    a.legend()


def pyplot():
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ModelError("plots need matplotlib: install python3-matplotlib "
                         "(scripts/install-deps.sh)")
    return plt


def save(fig, path):
    try:
        fig.savefig(path, dpi=110)
    except OSError as e:
        raise ModelError("cannot write %s: %s" % (path, e.strerror))
    finally:
        import matplotlib.pyplot as plt
        plt.close(fig)
