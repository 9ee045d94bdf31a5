#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
Tests of the route-sync benchmark's table generator, tools/bench/rtgen.py,
run by `make check` (a 10,000 + 2,000 prefix sample, a second):

    /usr/bin/python3 -m unittest discover -s selftests -p rtgen_test.py

They check what the benchmark relies on: unique prefixes with their host
bits clear, the prefix-length shares of LENGTHS4 / LENGTHS6, the same table
for the same seed and another for another seed, no prefix in or around the
next hops' and probes' ranges or outside unicast space, deaggregation, and
the `ip -batch` lines of the command.
"""
import ipaddress
import os
import subprocess
import sys
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools", "bench"))
import rtgen  # noqa: E402

N4, N6 = 10000, 2000


class RtgenTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.t = {4: rtgen.prefixes(4, N4, "test"), 6: rtgen.prefixes(6, N6, "test")}

    def nets(self, fam):
        return [ipaddress.ip_network(rtgen.fmt(fam, a, p)) for a, p in self.t[fam]]

    def test_unique_and_host_bits_clear(self):
        for fam, n in ((4, N4), (6, N6)):
            self.assertEqual(len(self.t[fam]), n)
            self.assertEqual(len(set(self.t[fam])), n)
            # ip_network raises on host bits set.
            self.assertEqual(len(set(self.nets(fam))), n)

    def test_length_shares(self):
        for fam, n, lengths in ((4, N4, rtgen.LENGTHS4), (6, N6, rtgen.LENGTHS6)):
            got = {}
            for _, p in self.t[fam]:
                got[p] = got.get(p, 0) + 1
            self.assertEqual(got, {l: c for l, c in rtgen.counts(lengths, n).items() if c})
            self.assertEqual(max(got, key=got.get), 24 if fam == 4 else 48)
            self.assertAlmostEqual(got[24 if fam == 4 else 48] / n, 0.6 if fam == 4 else 0.45,
                                   delta=0.02)

    def test_counts_sum_exactly(self):
        for total in (1, 7, 999, 1000000):
            self.assertEqual(sum(rtgen.counts(rtgen.LENGTHS4, total).values()), total)

    def test_deterministic_per_seed(self):
        self.assertEqual(rtgen.prefixes(4, 2000, "test"), rtgen.prefixes(4, 2000, "test"))
        self.assertNotEqual(rtgen.prefixes(4, 2000, "test"), rtgen.prefixes(4, 2000, "other"))

    def test_address_space(self):
        for net in self.nets(4):
            self.assertFalse(net.overlaps(ipaddress.ip_network("198.18.0.0/15")), net)
            self.assertNotIn(net.network_address.packed[0], (0, 10, 127))
            self.assertLess(net.network_address.packed[0], 224)
        for net in self.nets(6):
            self.assertTrue(net.subnet_of(ipaddress.ip_network("2000::/3")), net)
            self.assertFalse(net.overlaps(ipaddress.ip_network("2001:db8::/32")), net)

    def test_more_specifics(self):
        # Nesting: a good share of the /24s lie in a shorter prefix, and of
        # the IPv6 table too (DEAGG).
        have = set(self.t[4])
        inside = sum(1 for a, p in self.t[4] if p == 24 and any(
            (a & ~((1 << (32 - l)) - 1), l) in have for l in range(8, 24)))
        n24 = sum(1 for _, p in self.t[4] if p == 24)
        self.assertGreater(inside / n24, 0.1)
        have6 = set(self.t[6])
        inside6 = sum(1 for a, p in self.t[6] if any(
            (a & ~((1 << (128 - l)) - 1), l) in have6 for l in range(16, p)))
        self.assertGreater(inside6 / N6, 0.3)

    def test_command_output(self):
        out = subprocess.run([sys.executable, os.path.join(TOP, "tools", "bench", "rtgen.py"),
                              "-4", "300", "-6", "100", "--ports", "a,b"],
                             capture_output=True, text=True, check=True).stdout.splitlines()
        self.assertEqual(len(out), 400)
        gws = set()
        for line in out:
            w = line.split()
            self.assertEqual(w[:2] + w[3:4] + w[5:6] + w[7:],
                             ["route", "add", "via", "dev", "proto", "bgp"])
            ipaddress.ip_network(w[2])
            gws.add((w[4], w[6]))
        self.assertEqual(gws, {("198.18.0.2", "a"), ("198.18.1.2", "b"),
                               ("2001:db8:0::2", "a"), ("2001:db8:1::2", "b")})


if __name__ == "__main__":
    unittest.main()
