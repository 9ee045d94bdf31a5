# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The instrument's statistics (issue 38), pure python: medians, 95%
percentile-bootstrap intervals over rounds, paired ratios and differences
(per round, then bootstrapped over rounds), the verdict against a target
and the ceiling's spread.

Why a bootstrap over rounds: the trials of a round run back to back, so
what disturbs the machine for a while (another tenant, the generator's
stalls) hits the dataplanes of a round alike; a ratio taken within the
round cancels much of it, and resampling whole rounds keeps that pairing.

Interface (stable: other tools import it):
    median(xs), quantile(xs, q)
    bootstrap_ci(xs, stat=median, resamples=RESAMPLES, seed=SEED, level=LEVEL)
        -> (lo, hi)
    paired_ratios(a, b) -> [a_i / b_i], pairs with b_i == 0 or None left out
    paired_diffs(a, b) -> [a_i - b_i]
    summary(xs, ...) -> {"n", "median", "lo", "hi"}
    verdict(lo, hi, target, better="le") -> "met" | "not met" | "undecided"
    spread(xs) -> (p90 - p10) / median (0.0 when median is 0)
    between(samples, t0, t1) -> growth of sampled counters from t0 to t1
"""

import random

SEED = 38
RESAMPLES = 2000
LEVEL = 0.95
VERDICTS = ("met", "not met", "undecided", "undecided (ceiling moved)")


def quantile(xs, q):
    """The q-quantile of xs (0 <= q <= 1), linear interpolation between
    order statistics (numpy's default, "type 7")."""
    s = sorted(xs)
    if not s:
        raise ValueError("quantile of no values")
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def median(xs):
    return quantile(xs, 0.5)


def bootstrap_ci(xs, stat=median, resamples=RESAMPLES, seed=SEED, level=LEVEL):
    """Percentile bootstrap interval of stat(xs): xs resampled with
    replacement resamples times, with a fixed seed (the same data gives the
    same interval), the (1-level)/2 and (1+level)/2 quantiles of the
    statistic's resampled values."""
    xs = list(xs)
    if not xs:
        raise ValueError("bootstrap of no values")
    rng = random.Random(seed)
    n = len(xs)
    vals = [stat([xs[rng.randrange(n)] for _ in range(n)]) for _ in range(resamples)]
    a = (1.0 - level) / 2
    return quantile(vals, a), quantile(vals, 1.0 - a)


def paired_ratios(a, b):
    """a_i / b_i for each round i where both are measured and b_i > 0."""
    return [x / y for x, y in zip(a, b) if x is not None and y is not None and y > 0]


def paired_diffs(a, b):
    """a_i - b_i for each round i where both are measured."""
    return [x - y for x, y in zip(a, b) if x is not None and y is not None]


def summary(xs, resamples=RESAMPLES, seed=SEED, level=LEVEL):
    """{"n", "median", "lo", "hi"} of xs (None values left out); median and
    bounds None when there is no value."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"n": 0, "median": None, "lo": None, "hi": None}
    lo, hi = bootstrap_ci(xs, median, resamples, seed, level)
    return {"n": len(xs), "median": median(xs), "lo": lo, "hi": hi}


def verdict(lo, hi, target, better="le"):
    """better "le": the value must be <= target; "ge": >= target. "met"
    when the whole interval is on the good side, "not met" when it is all
    on the bad side, "undecided" when it straddles the target (or there
    is no interval)."""
    if lo is None or hi is None:
        return "undecided"
    if better == "le":
        if hi <= target:
            return "met"
        if lo > target:
            return "not met"
    elif better == "ge":
        if lo >= target:
            return "met"
        if hi < target:
            return "not met"
    else:
        raise ValueError(f"better must be le or ge, not {better!r}")
    return "undecided"


def spread(xs):
    """(90th - 10th percentile) / median of xs: how far a series moved,
    relative to its level; 0.0 for an empty series or a zero median."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return 0.0
    m = median(xs)
    return (quantile(xs, 0.9) - quantile(xs, 0.1)) / m if m else 0.0


def between(samples, t0, t1):
    """How much counters sampled over time grew from t0 to t1: samples is
    [(t, (c1, c2, ...))] in time order, each counter read at t and never
    falling; the counters at t0 and t1 are interpolated linearly between
    the samples around them (exact for a counter growing at a steady rate
    between two samples, off by at most one sampling period's growth
    otherwise). None when [t0, t1] is not inside the samples' span or t1
    < t0."""
    if t1 < t0 or len(samples) < 2 or t0 < samples[0][0] or t1 > samples[-1][0]:
        return None

    def at(t):
        for (ta, a), (tb, b) in zip(samples, samples[1:]):
            if ta <= t <= tb:
                f = (t - ta) / (tb - ta) if tb > ta else 0.0
                return [x + (y - x) * f for x, y in zip(a, b)]
        return None

    a, b = at(t0), at(t1)
    return tuple(y - x for x, y in zip(a, b))
