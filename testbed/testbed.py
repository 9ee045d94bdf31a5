# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The test beds of testbed/*.bash for the Python harness (tools/bench/).

Testbed(build, "bench", ...).setup() runs `testbed/tb up bench`, which
builds the test bed with the shell functions the traffic tests use
(testbed.bash, bench.bash) and prints it as one JSON object: namespaces,
temporary directory, private bpffs and pin root, devices, addresses, MACs.
teardown() ends the processes started with bg() and hands that object to
`testbed/tb down`, which removes the test bed as tb_teardown does: xnf
detached, namespaces deleted, bpffs unmounted, directory removed. What a
test bed is (names, addresses, the order of setup and teardown) is written
only there; this file runs commands in it.

A signal while either runs (the harness turns SIGINT, SIGTERM and SIGHUP
into an exception) does not cut it short: tb runs in a session of its own,
setup() ends it with SIGTERM (it then removes what it built), and both wait
for it before the exception goes on.
"""

import json
import os
import signal
import subprocess
import time

TB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tb")

# Seconds a single command may take before it counts as hung.
CMD_TIMEOUT = 30
# Seconds testbed/tb may take to build or remove a test bed.
TB_TIMEOUT = 300


class CmdError(RuntimeError):
    pass


def run(cmd, ns=None, timeout=CMD_TIMEOUT, check=True, env=None, input=None, stderr=False):
    """cmd (a list) in namespace ns; returns stdout (with stderr: (stdout,
    exit status, stderr)). Raises CmdError with stderr on failure when check."""
    full = (["ip", "netns", "exec", ns] if ns else []) + [str(c) for c in cmd]
    try:
        p = subprocess.run(full, capture_output=True, text=True, timeout=timeout,
                           env=env, input=input)
    except subprocess.TimeoutExpired:
        raise CmdError(f"timed out after {timeout} s: {' '.join(full)}")
    if check and p.returncode != 0:
        raise CmdError(f"failed ({p.returncode}): {' '.join(full)}: {p.stderr.strip()}")
    return (p.stdout, p.returncode, p.stderr) if stderr else p.stdout


def _wait(p):
    """Waits for p (testbed/tb), at most TB_TIMEOUT s, through exceptions
    raised meanwhile by signal handlers. Returns (stdout, stderr, the first
    such exception or None) once p has ended."""
    pending = None
    end = time.monotonic() + TB_TIMEOUT
    while True:
        try:
            out, err = p.communicate(timeout=max(0.0, end - time.monotonic()))
            break
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            pending = pending or CmdError(f"{' '.join(p.args)}: timed out after {TB_TIMEOUT} s")
            break
        except BaseException as ex:
            pending = pending or ex
    return out or "", err or "", pending


class Testbed:
    """One test bed: kind is a BED of testbed/tb (bench, soak, rtsync,
    traffic), args its arguments; name and tmp_name prefix its namespaces
    (NAME-PID-TAG-{src,dut,sink}) and temporary directory
    (/tmp/TMP_NAME-PID-TAG-XXXXXX), PID this process's."""

    def __init__(self, build, kind, args=(), name="xnfb", tmp_name="xnf-bench", xnf=None,
                 verbose=False):
        self.build = build
        self.xnf = xnf or os.path.join(build, "xnf")
        self.kind, self.args = kind, [str(a) for a in args]
        self.name, self.tmp_name = name, tmp_name
        self.verbose = verbose
        self.bed = None   # testbed/tb up's object while the test bed exists
        self.procs = []

    # ---- setup / teardown -----------------------------------------------
    def _env(self):
        env = dict(os.environ, XNF=self.xnf, TB_NAME=self.name, TB_TMP_NAME=self.tmp_name,
                   TB_OWNER=str(os.getpid()))
        if self.verbose:
            env["TB_VERBOSE"] = "1"
        return env

    def setup(self):
        cmd = [TB, "up", self.kind, *self.args]
        # A session of its own: a Ctrl-C at the terminal reaches this
        # process only, which ends tb with SIGTERM, once.
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=self._env(), start_new_session=True)
        pending = None
        try:
            out, err = p.communicate(timeout=TB_TIMEOUT)
        except BaseException as ex:
            # tb removes what it built when SIGTERM ends it.
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            out, err, _ = _wait(p)
            pending = ex
        what = f"testbed/tb up {' '.join([self.kind, *self.args])}"
        if p.returncode == 0:
            # Built, even if a signal came meanwhile: teardown() removes it.
            try:
                self.bed = json.loads(out)
            except ValueError:
                raise CmdError(f"{what} printed no test bed: {out[:200]!r}")
            for line in err.splitlines() if self.verbose else []:
                print(f"  testbed: {line}", flush=True)
        if isinstance(pending, subprocess.TimeoutExpired):
            raise CmdError(f"{what}: timed out after {TB_TIMEOUT} s")
        if pending:
            raise pending
        if p.returncode != 0:
            raise CmdError(f"{err.strip()} ({what}: exit {p.returncode})")

    def teardown(self):
        for p in list(self.procs):
            self.stop(p, timeout=5)
        self.procs = []
        if self.bed is None:
            return
        # The object goes through a pipe that holds it before tb starts:
        # nothing can stop it half written.
        r, w = os.pipe()
        os.write(w, json.dumps(self.bed).encode())
        os.close(w)
        try:
            p = subprocess.Popen([TB, "down"], stdin=r, env=self._env(),
                                 start_new_session=True)
        finally:
            os.close(r)
        _, _, pending = _wait(p)
        self.bed = None
        if pending:
            raise pending

    # ---- what the test bed is ----------------------------------------------
    def _name(key, doc):
        return property(lambda self: self.bed.get(key) if self.bed else None, doc=doc)

    src = _name("src", "the source's namespace")
    dut = _name("dut", "the DUT's namespace")
    sink = _name("sink", "the sink's namespace")
    tmp = _name("tmp", "the test bed's temporary directory")
    bpffs = _name("bpffs", "its private bpffs, in tmp")
    pin_root = _name("pin_root", "XNF_PIN_ROOT in the DUT, on bpffs")
    dev = _name("dev", "the devices: bench, traffic {s0, d0, d1, k0}; soak {p: {g, i, e, k}}")
    mac = _name("mac", "their MACs, by the same keys")
    addr = _name("addr", "bench, traffic: the addresses (src4, d04, sink4, ...)")
    paths = _name("paths", "soak: the addresses of each path (s, c, w): {src, in, out, dst}")
    ports = _name("ports", "rtsync: the DUT's ports, [{dev, peer}]")
    del _name

    # bench, traffic: the source -> DUT -> sink devices.
    s = property(lambda self: self.dev["s0"])
    i = property(lambda self: self.dev["d0"])
    e = property(lambda self: self.dev["d1"])
    k = property(lambda self: self.dev["k0"])

    # ---- commands -------------------------------------------------------
    def xnf_env(self):
        env = dict(os.environ)
        env["XNF_PIN_ROOT"] = self.pin_root
        return env

    def xnf_cmd(self, *args, timeout=CMD_TIMEOUT, check=True, input=None):
        return run([self.xnf, *args], ns=self.dut, timeout=timeout, check=check,
                   env=self.xnf_env(), input=input)

    def xnf_batch(self, lines, timeout=120):
        """Lines of `xnf -b`, written to a file in the test bed's directory."""
        path = os.path.join(self.tmp, f"batch-{len(lines)}-{time.monotonic_ns()}")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return self.xnf_cmd("-b", path, timeout=timeout)

    def bg(self, cmd, ns, stdout=subprocess.PIPE, env=None):
        """A background process in ns; killed by teardown if still there.
        The command must bound itself (timeout, duration)."""
        full = ["ip", "netns", "exec", ns] + [str(c) for c in cmd]
        p = subprocess.Popen(full, stdout=stdout, stderr=subprocess.PIPE, text=True,
                             env=env)
        self.procs.append(p)
        return p

    def stop(self, p, sig=signal.SIGTERM, timeout=10):
        """Ends one background process (SIGKILL if sig does not) and returns
        its (stdout, stderr)."""
        if p.poll() is None:
            try:
                p.send_signal(sig)
            except ProcessLookupError:
                pass
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        if p in self.procs:
            self.procs.remove(p)
        return out or "", err or ""

    # ---- devices --------------------------------------------------------
    def ifindex(self, ns, dev):
        return int(run(["cat", f"/sys/class/net/{dev}/ifindex"], ns=ns))

    def napi_threads(self, dev):
        """The napi kernel threads of dev (threaded NAPI): [{pid, comm, cpus}]."""
        want = f"napi/{dev}-"
        out = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/comm") as f:
                    comm = f.read().strip()
                if comm.startswith(want):
                    out.append({"pid": int(pid), "comm": comm,
                                "cpus": sorted(os.sched_getaffinity(int(pid)))})
            except (OSError, ValueError):
                continue
        return sorted(out, key=lambda t: t["pid"])

    def threaded(self, dev):
        return run(["cat", f"/sys/class/net/{dev}/threaded"], ns=self.dut).strip()

    def pin_napi(self, dev, cpu):
        """Threaded NAPI on the DUT's dev with its napi threads on cpu, as
        `xnf attach ... cores` does for xnf: for the dataplanes that are not
        xnf. Must follow every XDP attach (which re-creates the threads)."""
        run(["sh", "-c", f"echo 1 > /sys/class/net/{dev}/threaded"], ns=self.dut)
        threads = []
        for _ in range(50):
            threads = self.napi_threads(dev)
            if threads:
                break
            time.sleep(0.02)
        if not threads:
            raise CmdError(f"no napi thread of {dev} after threaded NAPI was turned on")
        for t in threads:
            os.sched_setaffinity(t["pid"], {cpu})
        return self.napi_threads(dev)
