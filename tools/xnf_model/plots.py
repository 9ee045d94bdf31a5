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


def plot_predict(path, o):
    plt = pyplot()
    v = np.asarray(o["distribution"])
    k = np.arange(len(v))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    meas = o.get("measured")
    if meas:
        pm = np.asarray(meas["distribution"])
        ax.bar(k[:len(pm)] - 0.2, pm, width=0.4, label="measured",
               color="tab:blue")
        ax.bar(k + 0.2, v, width=0.4, label="model", color="tab:red")
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
    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
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
        a.set_xlabel("arrival rate at the ring (Mpps)")
        a.legend()
    fig.suptitle("model vs AF_XDP worker, L=%d beta=%d" % (res["L"],
                                                          res["beta"]))
    fig.tight_layout()
    save(fig, path)
    pick = sorted({0, len(rows) // 2, len(rows) - 1})
    fig, ax = plt.subplots(1, len(pick), figsize=(5 * len(pick), 4),
                           squeeze=False)
    for a, i in zip(ax[0], pick):
        r = rows[i]
        k = np.arange(res["beta"] + 1)
        a.bar(k - 0.2, r["distribution_measured"], width=0.4,
              label="measured")
        a.bar(k + 0.2, r["distribution_model"], width=0.4, label="model")
        a.set_title("%s: JSD %.3f, RE %.3g" % (fmt_rate(r["rate_pps"]),
                                               r["jsd"], r["rel_error"]))
        a.set_xlabel("batch size")
        a.set_ylabel("probability")
        a.legend()
    fig.tight_layout()
    save(fig, path_dist)


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
