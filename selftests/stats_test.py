#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
Tests of the instrument's statistics, tools/bench/stats.py, run by `make
check` (well under a second):

    /usr/bin/python3 -m unittest discover -s selftests -p stats_test.py

They check what bench.py --targets relies on: quantiles as numpy's default,
a bootstrap interval that contains the median, narrows with more rounds,
covers the true median of a known law in most repetitions and is the same
for the same seed; ratios and differences paired by round; the verdict on
each side of a target and straddling it; the spread of a series.
"""
import os
import random
import sys
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools", "bench"))
import stats  # noqa: E402


class StatsTest(unittest.TestCase):
    def test_quantile(self):
        xs = [3, 1, 4, 1, 5, 9, 2, 6]
        self.assertEqual(stats.quantile(xs, 0), 1)
        self.assertEqual(stats.quantile(xs, 1), 9)
        self.assertEqual(stats.median(xs), 3.5)
        self.assertEqual(stats.median([7]), 7)
        # numpy.quantile([1, 2, 3, 4], 0.9) == 3.7
        self.assertAlmostEqual(stats.quantile([4, 1, 3, 2], 0.9), 3.7)
        with self.assertRaises(ValueError):
            stats.median([])

    def test_bootstrap_contains_median_and_is_reproducible(self):
        rng = random.Random(1)
        xs = [100 + rng.gauss(0, 10) for _ in range(15)]
        lo, hi = stats.bootstrap_ci(xs)
        self.assertLessEqual(lo, stats.median(xs))
        self.assertGreaterEqual(hi, stats.median(xs))
        self.assertLess(lo, hi)
        self.assertEqual((lo, hi), stats.bootstrap_ci(xs))
        self.assertNotEqual((lo, hi), stats.bootstrap_ci(xs, seed=stats.SEED + 1))

    def test_bootstrap_narrows_with_more_rounds(self):
        rng = random.Random(2)
        few = [rng.gauss(50, 5) for _ in range(8)]
        many = [rng.gauss(50, 5) for _ in range(200)]
        w_few = stats.bootstrap_ci(few)[1] - stats.bootstrap_ci(few)[0]
        w_many = stats.bootstrap_ci(many)[1] - stats.bootstrap_ci(many)[0]
        self.assertLess(w_many, w_few / 2)

    def test_bootstrap_covers_true_median(self):
        # 95% nominal; the percentile bootstrap of a median of 25 values
        # covers a bit less: at least 85 of 100 samples.
        rng = random.Random(3)
        covered = 0
        for _ in range(100):
            xs = [rng.gauss(10, 2) for _ in range(25)]
            lo, hi = stats.bootstrap_ci(xs, resamples=500, seed=rng.randrange(1 << 30))
            covered += lo <= 10 <= hi
        self.assertGreaterEqual(covered, 85)

    def test_paired(self):
        a = [10, 20, None, 40]
        b = [5, 0, 3, 20]
        self.assertEqual(stats.paired_ratios(a, b), [2.0, 2.0])
        self.assertEqual(stats.paired_diffs(a, b), [5, 20, 20])

    def test_pairing_cancels_a_common_drift(self):
        # Both series move together by a factor per round (the machine's
        # load): the paired ratio's interval is tight around 1.1, the
        # ratio of the medians' intervals would not be.
        rng = random.Random(4)
        load = [rng.uniform(1, 3) for _ in range(15)]
        b = [100 * x for x in load]
        a = [110 * x * rng.uniform(0.99, 1.01) for x in load]
        s = stats.summary(stats.paired_ratios(a, b))
        self.assertEqual(s["n"], 15)
        self.assertLess(s["hi"] - s["lo"], 0.03)
        self.assertLessEqual(s["lo"], 1.1)
        self.assertGreaterEqual(s["hi"], 1.1)

    def test_summary(self):
        self.assertEqual(stats.summary([None]),
                         {"n": 0, "median": None, "lo": None, "hi": None})
        s = stats.summary([1, 2, 3, None])
        self.assertEqual((s["n"], s["median"]), (3, 2))
        self.assertTrue(s["lo"] <= 2 <= s["hi"])

    def test_verdict(self):
        self.assertEqual(stats.verdict(0.9, 1.1, 1.15), "met")
        self.assertEqual(stats.verdict(1.2, 1.3, 1.15), "not met")
        self.assertEqual(stats.verdict(1.1, 1.2, 1.15), "undecided")
        self.assertEqual(stats.verdict(3.5, 4.0, 3.0, "ge"), "met")
        self.assertEqual(stats.verdict(2.0, 2.5, 3.0, "ge"), "not met")
        self.assertEqual(stats.verdict(2.5, 3.5, 3.0, "ge"), "undecided")
        self.assertEqual(stats.verdict(None, None, 3.0), "undecided")
        with self.assertRaises(ValueError):
            stats.verdict(1, 2, 3, "lt")

    def test_between(self):
        # a counter at 2 per ns from t=100, with one at 1 per ns beside it
        samples = [(t, (2 * (t - 100), t - 100)) for t in (100, 130, 170, 250)]
        self.assertEqual(stats.between(samples, 110, 200), (180.0, 90.0))
        self.assertEqual(stats.between(samples, 100, 250), (300.0, 150.0))
        # a counter that stood still, then ran: interpolated per stretch
        steps = [(0, (0,)), (10, (0,)), (20, (100,))]
        self.assertEqual(stats.between(steps, 5, 15), (50.0,))
        # outside the sampled span, or backwards: no answer
        self.assertIsNone(stats.between(samples, 90, 200))
        self.assertIsNone(stats.between(samples, 110, 251))
        self.assertIsNone(stats.between(samples, 200, 110))
        self.assertIsNone(stats.between(samples[:1], 100, 100))

    def test_spread(self):
        self.assertEqual(stats.spread([]), 0.0)
        self.assertEqual(stats.spread([5] * 10), 0.0)
        xs = list(range(1, 12))   # 10th pct 2, 90th 10, median 6
        self.assertAlmostEqual(stats.spread(xs), 8 / 6)


if __name__ == "__main__":
    unittest.main()
