# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
The machine's own steadiness: how many times a fixed loop runs in each
stretch of 100 ms on each of the harness's CPUs, all of them at once, as a
trial loads them. The loop touches no memory beyond its own and makes no
system call, so what moves its speed is the CPU under it: frequency, a
hypervisor running something else on the vCPU (a guest's /proc/stat shows
that as steal only where the hypervisor reports it), an interrupt. The
model's server has one speed (docs/model.md, "The machine's own
steadiness"); `xnf model validate` reads these counts from the sweep
(sweep.json "machine") and says how often a window of a trial's length
held its speed.

    python3 steadiness.py --cpu N --seconds S    one CPU's counts, JSON
"""
import argparse
import json
import os
import subprocess
import sys
import time

STRETCH_NS = 100_000_000   # as waketrace.STRETCH_NS: the trials' stretches
CHUNK = 2000               # loop runs between two clock reads (~20 us)


def loop(cpu, seconds, stretch_ns=STRETCH_NS):
    """Chunks of CHUNK empty loop runs done in each whole stretch of
    stretch_ns on cpu, for seconds."""
    os.sched_setaffinity(0, {cpu})
    t0 = time.monotonic_ns()
    end, nxt = t0 + int(seconds * 1e9), t0 + stretch_ns
    counts, n = [], 0
    while True:
        for _ in range(CHUNK):
            pass
        n += 1
        t = time.monotonic_ns()
        if t >= nxt:
            # a stretch the loop did not run in at all (off its CPU) is 0
            while t >= nxt:
                counts.append(n)
                n = 0
                nxt += stretch_ns
            if t >= end:
                return counts


def measure(cpus, seconds):
    """The loop on every CPU of cpus ({role: cpu}) at once, in processes of
    their own: {"stretch_s", "seconds", "cpus": {cpu: {"role", "counts"}}}.
    Raises OSError when a loop could not run."""
    procs = {}
    try:
        for role, cpu in cpus.items():
            procs[role] = (cpu, subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--cpu", str(cpu),
                 "--seconds", str(seconds)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        out = {}
        for role, (cpu, p) in procs.items():
            so, se = p.communicate(timeout=seconds + 30)
            if p.returncode:
                raise OSError(f"the steadiness loop on CPU {cpu}: {se.strip()[:200]}")
            out[str(cpu)] = {"role": role, "counts": json.loads(so)}
        return {"stretch_s": STRETCH_NS / 1e9, "seconds": seconds, "cpus": out}
    finally:
        for _, p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--cpu", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    a = ap.parse_args()
    json.dump(loop(a.cpu, a.seconds), sys.stdout)
    print()


if __name__ == "__main__":
    main()
