#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
Tests of tools/bench/waketrace.py, run by `make test-model`:

    /usr/bin/python3 -m unittest discover -s selftests -p waketrace_test.py

latencies() and cycles() on synthetic lines as `perf script -F
[tid,]time,event,trace --ns` prints them for sched:sched_waking,
sched:sched_switch and napi:napi_poll, and summarize() on known values. No
perf run.
"""
import os
import sys
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools", "bench"))
import waketrace  # noqa: E402

NAPI, OTHER, PERF = 28750, 28751, 28793
T0 = 50123 * 1000000000 + 645835919      # ns


def stamp(t):
    return "%17s" % ("%d.%09d" % divmod(t, 1000000000))


def waking(t, pid, comm="napi/i6b264-421"):
    return "%s: sched:sched_waking: comm=%s pid=%d prio=49 target_cpu=001" \
        % (stamp(t), comm, pid)


def switch(t, prev, state, nxt):
    """prev switched out in state, nxt switched in."""
    name = {NAPI: "napi/i6b264-421", OTHER: "napi/i6b264-422",
            PERF: "perf"}
    prio = {PERF: 120}
    return ("%s: sched:sched_switch: prev_comm=%s prev_pid=%d prev_prio=%d "
            "prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%d" % (
                stamp(t), name.get(prev, "swapper/1"), prev,
                prio.get(prev, 49), state, name.get(nxt, "swapper/1"), nxt,
                prio.get(nxt, 49)))


class Latencies(unittest.TestCase):
    def test_line_format(self):
        # what perf prints, to the character
        self.assertEqual(
            waking(T0, NAPI),
            "  50123.645835919: sched:sched_waking: comm=napi/i6b264-421 "
            "pid=28750 prio=49 target_cpu=001")
        self.assertEqual(
            switch(T0 + 8225, PERF, "R", NAPI),
            "  50123.645844144: sched:sched_switch: prev_comm=perf "
            "prev_pid=28793 prev_prio=120 prev_state=R ==> "
            "next_comm=napi/i6b264-421 next_pid=28750 next_prio=49")

    def test_sleep_waking_switch_in(self):
        lines = [switch(T0, PERF, "R", NAPI),          # state unknown
                 switch(T0 + 1000, NAPI, "S", 0),     # sleeps
                 waking(T0 + 50000, NAPI),
                 switch(T0 + 53250, 0, "R", NAPI),
                 switch(T0 + 60000, NAPI, "D", 0),    # D sleeps too
                 waking(T0 + 70000, NAPI),
                 switch(T0 + 70400, PERF, "R", NAPI)]
        self.assertEqual(waketrace.latencies(lines, [NAPI]), [3250, 400])

    def test_waking_before_the_switch_out_it_ends(self):
        # The thread sets itself asleep, a packet wakes it before it is
        # switched out: the waking precedes the switch-out S.
        lines = [switch(T0, PERF, "R", NAPI),
                 waking(T0 + 900, NAPI),
                 switch(T0 + 1000, NAPI, "S", 0),
                 switch(T0 + 1700, 0, "R", NAPI)]
        self.assertEqual(waketrace.latencies(lines, [NAPI]), [800])

    def test_only_the_last_waking_counts(self):
        # A waking while it still runs ends no sleep; the waking after its
        # real sleep is the wake-up.
        lines = [switch(T0, PERF, "R", NAPI),
                 waking(T0 + 100, NAPI),
                 switch(T0 + 5000, NAPI, "S", 0),
                 waking(T0 + 9000, NAPI),
                 switch(T0 + 9600, 0, "R", NAPI)]
        self.assertEqual(waketrace.latencies(lines, [NAPI]), [600])

    def test_preemption_is_no_wake_up(self):
        lines = [switch(T0, PERF, "R", NAPI),
                 switch(T0 + 1000, NAPI, "R", PERF),  # preempted
                 switch(T0 + 4000, PERF, "R", NAPI),
                 switch(T0 + 5000, NAPI, "R+", PERF),
                 waking(T0 + 5500, NAPI),             # while runnable
                 switch(T0 + 6000, PERF, "R", NAPI),
                 # then a real sleep: counted, the earlier waking is gone
                 switch(T0 + 7000, NAPI, "S", 0),
                 waking(T0 + 8000, NAPI),
                 switch(T0 + 8300, 0, "R", NAPI)]
        self.assertEqual(waketrace.latencies(lines, [NAPI]), [300])

    def test_preempted_intervals(self):
        # with a list, each switch-out with work (R) to the switch-in
        # that follows is recorded; sleeps and other pids are not
        lines = [switch(T0, PERF, "R", NAPI),
                 switch(T0 + 1000, NAPI, "R", PERF),   # preempted
                 switch(T0 + 51000, PERF, "S", NAPI),  # 50 us later
                 switch(T0 + 52000, NAPI, "S", 0),     # sleeps
                 waking(T0 + 60000, NAPI),
                 switch(T0 + 62000, 0, "R", NAPI),
                 switch(T0 + 63000, OTHER, "R", PERF),
                 switch(T0 + 90000, PERF, "S", OTHER)]
        pre = []
        self.assertEqual(waketrace.latencies(lines, [NAPI], pre), [2000])
        self.assertEqual(pre, [(T0 + 1000, T0 + 51000)])

    def test_sleep_without_waking_is_not_counted(self):
        # a switch-in after a sleep whose waking was not recorded (lost)
        lines = [switch(T0, PERF, "R", NAPI),
                 switch(T0 + 1000, NAPI, "S", 0),
                 switch(T0 + 3000, 0, "R", NAPI),
                 switch(T0 + 4000, NAPI, "S", 0),
                 waking(T0 + 5000, NAPI),
                 switch(T0 + 5100, 0, "R", NAPI)]
        self.assertEqual(waketrace.latencies(lines, [NAPI]), [100])

    def test_first_switch_in_not_counted(self):
        # the trace starts with the thread asleep: its state is unknown
        lines = [waking(T0, NAPI),
                 switch(T0 + 500, PERF, "R", NAPI)]
        self.assertEqual(waketrace.latencies(lines, [NAPI]), [])

    def test_other_pids_ignored(self):
        lines = [switch(T0, PERF, "R", NAPI),
                 switch(T0 + 1000, NAPI, "S", OTHER),
                 waking(T0 + 1500, OTHER, "napi/i6b264-422"),
                 switch(T0 + 1600, OTHER, "S", 0),
                 waking(T0 + 2000, NAPI),
                 waking(T0 + 2100, OTHER, "napi/i6b264-422"),
                 switch(T0 + 2200, 0, "R", OTHER),
                 switch(T0 + 2300, OTHER, "S", NAPI)]
        self.assertEqual(waketrace.latencies(lines, [NAPI]), [300])
        # both threads: each its own wake-ups
        self.assertEqual(waketrace.latencies(lines, [NAPI, OTHER]),
                         [100, 300])

    def test_other_lines_ignored(self):
        lines = ["", "# ========", "LOST 3 events!",
                 switch(T0, PERF, "R", NAPI),
                 "  50123.645836000: sched:sched_wakeup: comm=napi/i6b264-"
                 "421 pid=28750 prio=49 target_cpu=001",
                 switch(T0 + 1000, NAPI, "S", 0),
                 waking(T0 + 2000, NAPI),
                 switch(T0 + 2250, 0, "R", NAPI)]
        self.assertEqual(waketrace.latencies(lines, [NAPI]), [250])


DUT, SINK_DEV = "i6b264", "k6b264"


def poll(t, dev, work, tid=NAPI):
    """The end of a NAPI poll, as -F tid,time,event,trace prints it."""
    return ("%7d %s: napi:napi_poll: napi poll on napi struct "
            "0xffff888100265000 for device %s work %d budget 64"
            % (tid, stamp(t), dev, work))


def tid(line, t=NAPI):
    """A sched line with the tid field before it."""
    return "%7d %s" % (t, line)


class Cycles(unittest.TestCase):
    """cycles(): what the napi thread does around its polls."""

    def test_line_format(self):
        self.assertEqual(
            poll(T0, DUT, 3),
            "  28750   50123.645835919: napi:napi_poll: napi poll on napi "
            "struct 0xffff888100265000 for device i6b264 work 3 budget 64")
        # the sched lines with a tid are read as without one
        lines = [tid(switch(T0, PERF, "R", NAPI)),
                 tid(switch(T0 + 1000, NAPI, "S", 0)),
                 tid(waking(T0 + 2000, NAPI), OTHER),
                 tid(switch(T0 + 2250, 0, "R", NAPI), 0)]
        self.assertEqual(waketrace.latencies(lines, [NAPI]), [250])

    def test_cycle(self):
        lines = [switch(T0, PERF, "R", NAPI),
                 poll(T0 + 1000, DUT, 2),
                 poll(T0 + 3000, SINK_DEV, 2),      # the receiver's, after
                 switch(T0 + 5000, NAPI, "S", 0),    # linger 2000
                 waking(T0 + 9000, NAPI),
                 switch(T0 + 9500, 0, "R", NAPI),
                 poll(T0 + 12500, DUT, 3),           # first poll: 3000
                 poll(T0 + 14000, SINK_DEV, 3),      # after: 1500
                 poll(T0 + 16000, DUT, 1),           # polled awake
                 poll(T0 + 17200, SINK_DEV, 1),
                 switch(T0 + 19000, NAPI, "S", 0),   # linger 1800
                 waking(T0 + 30000, NAPI),
                 switch(T0 + 30100, 0, "R", NAPI),
                 poll(T0 + 31000, DUT, 64),          # full: not emptied
                 switch(T0 + 32000, NAPI, "R", PERF),   # preempted
                 switch(T0 + 33000, PERF, "R", NAPI),
                 poll(T0 + 34000, DUT, 0),           # woken for nothing
                 switch(T0 + 35000, NAPI, "S", 0)]   # linger 1000
        c = waketrace.cycles(lines, [NAPI], DUT)
        self.assertEqual(c["first_poll"], {"count": 2, "mean_ns": 1950.0,
                                           "work": [[3, 1], [64, 1]]})
        self.assertEqual(c["after_poll"], [[0, 1, 0], [1, 1, 1200],
                                           [2, 1, 2000], [3, 1, 1500],
                                           [64, 1, 0]])
        self.assertEqual(c["linger"]["count"], 3)
        self.assertEqual(c["linger"]["max_ns"], 2000)
        self.assertEqual(sum(x for _, x in c["linger"]["hist"]), 3)
        self.assertEqual(c["linger"]["mean_ns"], (2000 + 1800 + 1000) / 3)
        self.assertEqual((c["polls"], c["polls_empty"], c["polled_awake"]),
                         (5, 1, 1))
        # without the device, every poll is the server's
        c = waketrace.cycles(lines, [NAPI])
        self.assertEqual(c["polls"], 8)

    def test_other_threads_polls_ignored(self):
        lines = [switch(T0, PERF, "R", NAPI),
                 poll(T0 + 1000, DUT, 2, tid=OTHER),
                 poll(T0 + 2000, DUT, 5),
                 switch(T0 + 3000, NAPI, "S", 0)]
        c = waketrace.cycles(lines, [NAPI], DUT)
        self.assertEqual((c["polls"], c["linger"]["count"]), (1, 1))
        self.assertEqual(c["after_poll"], [[5, 1, 0]])


class Stretches(unittest.TestCase):
    """stretches(): a trial's polls by stretch, with their cycles."""

    def test_known_values(self):
        ms = 1000000
        lines = [switch(T0, PERF, "R", NAPI),
                 poll(T0 + 1000, DUT, 64),           # the first: no cycle
                 poll(T0 + 20000, SINK_DEV, 64),     # the receiver's, in it
                 poll(T0 + 41000, DUT, 64),          # cycle 40000
                 poll(T0 + 52000, DUT, 9),           # cycle 11000
                 poll(T0 + 60000, DUT, 5),           # after a poll that emptied the ring
                 switch(T0 + 61000, NAPI, "S", 0),   # asleep: no cycle across
                 switch(T0 + 90000, 0, "R", NAPI),
                 poll(T0 + 95000, DUT, 3),
                 poll(T0 + 95500, DUT, 2, tid=OTHER),   # another thread's
                 switch(T0 + 96000, NAPI, "S", 0),
                 switch(T0 + 3 * ms, 0, "R", NAPI),
                 poll(T0 + 3 * ms + 1000, DUT, 64),  # stretch 3 from the first poll
                 poll(T0 + 3 * ms + 51000, DUT, 64),  # 50000
                 poll(T0 + 3 * ms + 91000, DUT, 64)]  # 40000
        s = waketrace.stretches(lines, [NAPI], DUT, width_ns=ms)
        self.assertEqual(s["width_ns"], ms)
        self.assertEqual(s["span_ns"], 3 * ms + 90000)
        self.assertEqual(len(s["list"]), 4)
        self.assertEqual(s["list"][0], {"polls": [[3, 1], [5, 1], [9, 1], [64, 2]],
                                        "cycles": [[9, 1, 11000], [64, 1, 40000]]})
        self.assertEqual(s["list"][1], {"polls": [], "cycles": []})
        self.assertEqual(s["list"][2], {"polls": [], "cycles": []})
        self.assertEqual(s["list"][3], {"polls": [[64, 3]],
                                        "cycles": [[64, 2, 90000]]})
        # without the device the receiver's poll is the server's too
        s = waketrace.stretches(lines, [NAPI], width_ns=ms)
        self.assertEqual(s["list"][0]["polls"], [[3, 1], [5, 1], [9, 1], [64, 3]])

    def test_no_polls(self):
        s = waketrace.stretches([switch(T0, PERF, "R", NAPI)], [NAPI], DUT)
        self.assertEqual(s, {"width_ns": waketrace.STRETCH_NS, "span_ns": 0, "list": []})


class Summarize(unittest.TestCase):
    def test_known_values(self):
        s = waketrace.summarize([300, 10, 1000, 260, 100])
        self.assertEqual(s["count"], 5)
        self.assertEqual(s["mean_ns"], 334)
        self.assertEqual(s["p50_ns"], 260)
        self.assertEqual(s["max_ns"], 1000)
        self.assertEqual(s["bucket_ns"], waketrace.BUCKET_NS)
        self.assertEqual(waketrace.BUCKET_NS, 250)
        self.assertEqual(s["hist"], [[0, 2], [250, 2], [1000, 1]])
        self.assertLessEqual(s["p50_ns"], s["p90_ns"])
        self.assertLessEqual(s["p90_ns"], s["p99_ns"])
        self.assertLessEqual(s["p99_ns"], s["max_ns"])

    def test_quantiles_of_many(self):
        s = waketrace.summarize(list(range(1000, 0, -1)))
        self.assertEqual(s["count"], 1000)
        self.assertEqual(s["mean_ns"], 500.5)
        # within one value of the exact order statistics
        for k, f in (("p50_ns", 0.5), ("p90_ns", 0.9), ("p99_ns", 0.99)):
            self.assertLessEqual(abs(s[k] - f * 1000), 1, k)
        self.assertEqual(sum(c for _, c in s["hist"]), 1000)
        self.assertEqual([b for b, _ in s["hist"]], [0, 250, 500, 750, 1000])
        self.assertEqual([c for _, c in s["hist"]], [249, 250, 250, 250, 1])

    def test_empty(self):
        s = waketrace.summarize([])
        self.assertEqual(s["count"], 0)
        self.assertIsNone(s["mean_ns"])
        self.assertEqual(s["hist"], [])


if __name__ == "__main__":
    unittest.main()
