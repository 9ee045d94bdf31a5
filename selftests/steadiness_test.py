#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
Tests of tools/bench/steadiness.py, run by `make test-model`:

    /usr/bin/python3 -m unittest discover -s selftests -p steadiness_test.py

The fixed loop on the CPUs this process may use, all at once, as the bench
harness runs it before a model sweep: a count per whole stretch from each,
by CPU and role; a CPU it cannot run on is an error that names it. No
assertion on the counts' values (a busy machine moves them).
"""
import os
import sys
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools", "bench"))
import steadiness  # noqa: E402


class Measure(unittest.TestCase):
    def test_all_cpus_at_once(self):
        cpus = sorted(os.sched_getaffinity(0))[:2]
        roles = {"r%d" % i: c for i, c in enumerate(cpus)}
        m = steadiness.measure(roles, 0.35)
        self.assertEqual(m["stretch_s"], 0.1)
        self.assertEqual(sorted(m["cpus"]), sorted(str(c) for c in cpus))
        for role, cpu in roles.items():
            c = m["cpus"][str(cpu)]
            self.assertEqual(c["role"], role)
            # stretches end at 0.1, 0.2, 0.3 and 0.4 s: the loop stops at
            # the first end past 0.35 s, a stretch it was off its CPU for
            # counted 0 (at least 4: it may overshoot after a stall)
            self.assertGreaterEqual(len(c["counts"]), 4)
            self.assertTrue(all(isinstance(n, int) and n >= 0 for n in c["counts"]))
            self.assertGreater(sum(c["counts"]), 0)

    def test_no_such_cpu(self):
        bad = 1 << 16
        with self.assertRaises(OSError) as cm:
            steadiness.measure({"dut_cpu": bad}, 0.2)
        self.assertIn("CPU %d" % bad, str(cm.exception))


if __name__ == "__main__":
    unittest.main()
