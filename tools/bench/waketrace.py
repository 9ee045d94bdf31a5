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

With them napi:napi_poll, the end of each poll and the packets it took,
gives what the thread does around its polls (cycles()): from its switch-in
to the end of its first poll, and from the end of a poll that left the ring
empty to the switch-out of its sleep (the linger: a packet that comes
meanwhile is polled without a wake-up).

Only the named threads' events are recorded (tracepoint filters): two
events per wake-up and one per poll. perf is stopped (SIGSTOP) from the
moment it records until stop(), so that it takes no CPU during the trial;
its buffers (32 MB a CPU) hold a trial's events meanwhile, at light load
only its first part's (the harness counts the polls it missed:
napi_wake.lost_polls).
"""
import os
import re
import select
import shutil
import signal
import subprocess

BUCKET_NS = 250          # histogram resolution
STRETCH_NS = 100000000   # the stretches a trial's polls are cut into (100 ms)
RECORD_MAX_S = 600       # the longest a recording may run
# perf script -F tid,time,event,trace; the tid is optional (older records)
EVENT = re.compile(r"^\s*(?:(\d+)\s+)?(\d+)\.(\d{9}):\s+"
                   r"(?:sched:(sched_waking|sched_switch)|napi:(napi_poll)):\s+(.*)$")
WORK = re.compile(r"\swork (-?\d+) budget (\d+)")
DEVICE = re.compile(r"\sfor device (\S+)\s")
PID = re.compile(r"(?:^|\s)pid=(\d+)")
NEXT_PID = re.compile(r"next_pid=(\d+)")
PREV_PID = re.compile(r"prev_pid=(\d+)")
PREV_STATE = re.compile(r"prev_state=(\S+)")


class WakeTrace:
    """perf record of the wake-ups and preemptions of pids, from start() to
    stop()."""

    def __init__(self, perf, pids, path, cpu, dev=None):
        self.perf, self.pids, self.path, self.cpu = perf, list(pids), path, cpu
        self.dev = dev
        self.proc = self.stopped = None

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
        polls = " || ".join(f"common_pid == {p}" for p in self.pids)
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
               "-e", "sched:sched_switch", "--filter", switch,
               "-e", "napi:napi_poll", "--filter", polls]
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
        # Stopped until stop(): the kernel fills perf's buffers meanwhile.
        # A running perf drains them on the measured thread's CPU in
        # stretches of 0.7-4.5 ms that a SCHED_FIFO thread waits out (the
        # kernel does not preempt it there): those were most wake-ups
        # longer than 0.5 ms it recorded.
        self.stopped = self.perf_pid()
        if self.stopped:
            os.kill(self.stopped, signal.SIGSTOP)

    def perf_pid(self):
        """perf's pid: the child of timeout (taskset exec()ed it)."""
        try:
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except (OSError, ValueError):
            return None
        return kids[0] if kids else None

    def stop(self, timeout=30):
        """Ends the recording; returns the wake-ups as a summary (below), or
        {"error": why}."""
        p, self.proc = self.proc, None
        if p is None:
            return {"error": "not started"}
        if self.stopped:
            try:
                os.kill(self.stopped, signal.SIGCONT)
            except ProcessLookupError:
                pass
            self.stopped = None
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
                                  "tid,time,event,trace", "--ns", "--show-lost-events"],
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
        res.update(cycles(lines, self.pids, self.dev))
        res["stretches"] = stretches(lines, self.pids, self.dev)
        return res


def events(lines):
    """(tid or None, ns, event name, its fields) of each event line."""
    for line in lines:
        m = EVENT.match(line)
        if m:
            yield (int(m.group(1)) if m.group(1) else None,
                   int(m.group(2)) * 1000000000 + int(m.group(3)),
                   m.group(4) or m.group(5), m.group(6))


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
    for _, t, ev, trace in events(lines):
        if ev == "napi_poll":
            continue
        if ev == "sched_waking":
            pm = PID.search(trace)
            if pm and int(pm.group(1)) in want:
                last[int(pm.group(1))] = t
            continue
        pm = PREV_PID.search(trace)
        if pm and int(pm.group(1)) in want:
            st = PREV_STATE.search(trace)
            if st and not st.group(1).startswith("R"):
                asleep.add(int(pm.group(1)))
            elif st:
                off[int(pm.group(1))] = t
        pm = NEXT_PID.search(trace)
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


def cycles(lines, pids, dev=None):
    """What a napi thread does around its polls, from its switches and the
    napi:napi_poll at the end of each poll in it (by tid; with one pid, a
    line without a tid is its). The polls of dev are the server's; another
    device's polls in the same thread (a receiver's NAPI run in the
    thread's softirq, right after a poll of dev) are work that follows the
    poll. Returns
      first_poll: per switch-in that ended a sleep, the time from it to the
        end of the first poll of dev after it: count, mean_ns, and the
        packets those polls took (work: [[packets, polls], ...]); less the
        poll's own time, that is the thread's work before the poll;
      after_poll: per size of dev's polls, [[packets, polls, ns], ...]:
        the time from each poll's end to the end of the last other poll
        before dev's next poll or the thread's switch-out (0 without one);
      linger: summarize() of the times from the end of the last poll (of
        any device) to the switch-out of each sleep that followed a poll of
        dev that left its ring empty (a packet that comes in between is
        polled without a wake-up);
      polls: dev's polls; polls_empty: of them, those that took no packet
        (woken for a packet an earlier poll had taken); polled_awake: those
        that followed a poll of dev that left its ring empty (took less than
        its budget) without a switch in between."""
    want = set(pids)
    only = next(iter(want)) if len(want) == 1 else None
    asleep, pending, end, emptied, last = set(), {}, {}, {}, {}
    firsts, work, after, lingers = [], {}, {}, []
    polls = empty = awake = 0

    def close(pid):
        """dev's last poll in pid is followed by nothing more of it."""
        if pid in last:
            k, t_end = last.pop(pid)
            a = after.setdefault(k, [0, 0])
            a[0] += 1
            a[1] += end[pid] - t_end
    for tid, t, ev, trace in events(lines):
        if ev == "napi_poll":
            pid = tid if tid is not None else only
            wm, dm = WORK.search(trace), DEVICE.search(trace)
            if pid not in want or not wm:
                continue
            if dev is not None and dm and dm.group(1) != dev:
                end[pid] = t                 # work after dev's poll
                continue
            close(pid)
            n, budget = int(wm.group(1)), int(wm.group(2))
            polls += 1
            empty += n == 0
            awake += bool(emptied.get(pid))
            if pid in pending:
                firsts.append(t - pending.pop(pid))
                work[n] = work.get(n, 0) + 1
            end[pid], emptied[pid], last[pid] = t, n < budget, (n, t)
            continue
        if ev != "sched_switch":
            continue
        pm = PREV_PID.search(trace)
        if pm and int(pm.group(1)) in want:
            pid = int(pm.group(1))
            st = PREV_STATE.search(trace)
            slept = bool(st) and not st.group(1).startswith("R")
            if slept and pid in end and emptied.get(pid):
                lingers.append(t - end[pid])
            if slept:
                asleep.add(pid)
            close(pid)
            end.pop(pid, None)
            emptied.pop(pid, None)
            pending.pop(pid, None)
        pm = NEXT_PID.search(trace)
        if pm and int(pm.group(1)) in want:
            pid = int(pm.group(1))
            if pid in asleep:
                pending[pid] = t
            asleep.discard(pid)
    for pid in list(last):
        close(pid)
    return {"first_poll": {"count": len(firsts),
                           "mean_ns": sum(firsts) / len(firsts) if firsts else None,
                           "work": [[k, c] for k, c in sorted(work.items())]},
            "after_poll": [[k, c, ns] for k, (c, ns) in sorted(after.items())],
            "linger": summarize(lingers), "polls": polls, "polls_empty": empty,
            "polled_awake": awake}


def stretches(lines, pids, dev=None, width_ns=STRETCH_NS):
    """dev's polls cut into stretches of width_ns from the first, to see
    whether a trial was steady: the model's server has one speed and its
    queue one stationary law, and a trial may have neither (the core's
    speed moves on a shared VM; near its capacity the ring can run in two
    regimes, docs/model.md). Per stretch, in order from the first poll (an
    empty one where nothing was polled): polls, [[packets, polls], ...];
    cycles, [[packets, count, ns], ...]: the time from the end of a poll of
    dev that took its budget to the end of the next one, of that many
    packets, in the same thread without a switch between: the thread's
    whole cycle around a poll (the work before it, the poll, the
    receiver's after it) with no wait in it, since NAPI polls again at once
    after a poll that took its budget (after one that emptied the ring it
    waits for a packet). Returns {"width_ns", "span_ns": first poll to
    last, "list": [...]}."""
    want = set(pids)
    only = next(iter(want)) if len(want) == 1 else None
    prev, out, t0, t1 = {}, [], None, None
    for tid, t, ev, trace in events(lines):
        if ev == "sched_switch":
            pm = PREV_PID.search(trace)
            if pm:
                prev.pop(int(pm.group(1)), None)
            continue
        if ev != "napi_poll":
            continue
        pid = tid if tid is not None else only
        wm, dm = WORK.search(trace), DEVICE.search(trace)
        if pid not in want or not wm or (dev is not None and dm and dm.group(1) != dev):
            continue
        n, budget = int(wm.group(1)), int(wm.group(2))
        if t0 is None:
            t0 = t
        t1 = t
        k = (t - t0) // width_ns
        while len(out) <= k:
            out.append(({}, {}))
        polls, cyc = out[k]
        polls[n] = polls.get(n, 0) + 1
        if pid in prev:
            c = cyc.setdefault(n, [0, 0])
            c[0] += 1
            c[1] += t - prev[pid]
        if n >= budget:
            prev[pid] = t
        else:
            prev.pop(pid, None)
    return {"width_ns": width_ns, "span_ns": 0 if t0 is None else t1 - t0,
            "list": [{"polls": [[n, c] for n, c in sorted(p.items())],
                      "cycles": [[n, c, ns] for n, (c, ns) in sorted(y.items())]}
                     for p, y in out]}


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
