# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
How long threads wait to run after they are woken, measured with perf on the
scheduler's tracepoints: from sched:sched_waking of a thread (on the waker's
CPU) to the sched:sched_switch that runs it. For a napi thread that is the
time from the packet that woke NAPI to its poll: the batching model's
wake-up (docs/model.md, "The XDP path").

The waking CPU's IPI and, on a VM, the wake-up of a halted vCPU are in it:
the switch's time is the CPU's clock when the thread runs. Run queue
statistics (/proc/PID/schedstat) miss those, since a remote wake-up is
queued on the target CPU only once that CPU takes the IPI.

Only the named threads' events are recorded (tracepoint filters), so perf's
own work is two events per wake-up; it runs on the CPU given, with a buffer
(32 MB a CPU) that holds a trial's events when it gets the CPU only after
the measured thread is done.
"""
import os
import re
import select
import shutil
import signal
import subprocess

BUCKET_NS = 250          # histogram resolution
RECORD_MAX_S = 600       # the longest a recording may run
EVENT = re.compile(r"^\s*(\d+)\.(\d{9}):\s+sched:(sched_waking|sched_switch):\s+(.*)$")
PID = re.compile(r"(?:^|\s)pid=(\d+)")
NEXT_PID = re.compile(r"next_pid=(\d+)")
PREV_PID = re.compile(r"prev_pid=(\d+)")
PREV_STATE = re.compile(r"prev_state=(\S+)")


class WakeTrace:
    """perf record of the wake-ups and preemptions of pids, from start() to
    stop()."""

    def __init__(self, perf, pids, path, cpu):
        self.perf, self.pids, self.path, self.cpu = perf, list(pids), path, cpu
        self.proc = None

    @staticmethod
    def find():
        return shutil.which("perf")

    def start(self, timeout=10):
        """Starts perf and returns once it records (perf's control FIFO
        acknowledged "enable"): a busy CPU can keep perf's setup from
        running for seconds, and the trial must not begin before it.
        Raises OSError when perf does not acknowledge."""
        waking = " || ".join(f"pid == {p}" for p in self.pids)
        switch = " || ".join(f"next_pid == {p} || prev_pid == {p}" for p in self.pids)
        ctl, ack = self.path + ".ctl", self.path + ".ack"
        for f in (ctl, ack):
            if os.path.exists(f):
                os.unlink(f)
            os.mkfifo(f)
        # timeout: perf records until told, and must not outlive a
        # harness that was killed (it forwards stop()'s SIGINT)
        cmd = ["timeout", str(RECORD_MAX_S), "taskset", "-c", str(self.cpu), self.perf,
               "record", "-q", "-a", "-m", "32M",
               "-D", "-1", "--control", f"fifo:{ctl},{ack}",
               "-o", self.path, "-e", "sched:sched_waking", "--filter", waking,
               "-e", "sched:sched_switch", "--filter", switch]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        try:
            # O_RDWR: opening a FIFO so never blocks, whether perf has it yet
            fc = os.open(ctl, os.O_RDWR)
            fa = os.open(ack, os.O_RDWR)
            try:
                os.write(fc, b"enable\n")
                ready, _, _ = select.select([fa], [], [], timeout)
                if not ready or not os.read(fa, 16).startswith(b"ack"):
                    raise OSError(f"perf record did not start within {timeout} s")
            finally:
                os.close(fc)
                os.close(fa)
        except OSError:
            self.stop()
            raise
        finally:
            for f in (ctl, ack):
                os.unlink(f)

    def stop(self, timeout=30):
        """Ends the recording; returns the wake-ups as a summary (below), or
        {"error": why}."""
        p, self.proc = self.proc, None
        if p is None:
            return {"error": "not started"}
        try:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            return {"error": "perf record did not stop"}
        if not os.path.exists(self.path):
            return {"error": f"perf record wrote nothing: {err.strip()[:300]}"}
        try:
            out = subprocess.run([self.perf, "script", "-i", self.path, "-F",
                                  "time,event,trace", "--ns", "--show-lost-events"],
                                 capture_output=True, text=True, timeout=timeout,
                                 check=True).stdout
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as ex:
            return {"error": f"perf script: {ex}"}
        finally:
            os.unlink(self.path)
        lines = out.splitlines()
        pre = []
        res = summarize(latencies(lines, self.pids, pre))
        # Off the CPU with work: what the model takes as a server with its
        # core to itself is checked here (the kernel's fair server takes 50
        # ms a second from a SCHED_FIFO thread busy for as long).
        res["preempted"] = {"count": len(pre), "total_ns": sum(e - b for b, e in pre),
                            "max_ns": max((e - b for b, e in pre), default=0)}
        # A buffer that overflowed lost events: the wake-ups around them
        # are unpaired and left out, the rest still stand.
        res["lost_chunks"] = sum(1 for line in lines if "LOST" in line)
        return res


def latencies(lines, pids, preempted=None):
    """Per wake-up, ns from a thread's sched_waking to the switch that runs
    it. A thread sets itself asleep before it is switched out, and a waking
    in between is the common case for a napi thread under load: it comes
    before the switch-out it ends (and may end the sleep before it starts:
    the thread is then switched in again). A waking while the thread had
    not yet left the run queue does not end a sleep, and it is followed by
    another waking before the thread sleeps again. So the wake-up of a
    switch-in is the last waking since the previous switch-in, when the
    thread was switched out asleep (not preempted: R). With a list for
    preempted, each time from a switch-out that preempted a thread (R) to
    its next switch-in is added to it (start, end ns): the thread had work
    and no CPU."""
    want = set(pids)
    last = {}          # pid: time of the last waking since its switch-in
    asleep = set()     # its last switch-out was a sleep
    off = {}           # pid: when it was preempted
    out = []
    for line in lines:
        m = EVENT.match(line)
        if not m:
            continue
        t = int(m.group(1)) * 1000000000 + int(m.group(2))
        if m.group(3) == "sched_waking":
            pm = PID.search(m.group(4))
            if pm and int(pm.group(1)) in want:
                last[int(pm.group(1))] = t
            continue
        pm = PREV_PID.search(m.group(4))
        if pm and int(pm.group(1)) in want:
            st = PREV_STATE.search(m.group(4))
            if st and not st.group(1).startswith("R"):
                asleep.add(int(pm.group(1)))
            elif st:
                off[int(pm.group(1))] = t
        pm = NEXT_PID.search(m.group(4))
        if pm and int(pm.group(1)) in want:
            pid = int(pm.group(1))
            w = last.pop(pid, None)
            if pid in asleep and w is not None:
                out.append(t - w)
            asleep.discard(pid)
            if pid in off and preempted is not None:
                preempted.append((off[pid], t))
            off.pop(pid, None)
    return out


def summarize(lat):
    """Count, mean and quantiles, and a histogram in BUCKET_NS steps:
    [[lower ns, count], ...] (buckets with counts only)."""
    if not lat:
        return {"count": 0, "mean_ns": None, "hist": [], "bucket_ns": BUCKET_NS}
    lat = sorted(lat)
    n = len(lat)
    q = lambda f: lat[min(n - 1, int(f * n))]
    hist = {}
    for v in lat:
        b = v // BUCKET_NS * BUCKET_NS
        hist[b] = hist.get(b, 0) + 1
    return {"count": n, "mean_ns": sum(lat) / n, "p50_ns": q(0.5), "p90_ns": q(0.9),
            "p99_ns": q(0.99), "max_ns": lat[-1], "bucket_ns": BUCKET_NS,
            "hist": [[b, c] for b, c in sorted(hist.items())]}
