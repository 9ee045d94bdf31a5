# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The benchmark's source -> DUT -> sink test bed (Python mirror of
testbed/testbed.bash, with the same addresses and MACs):

    [src ns] s<tag> --veth-- i<tag> [dut ns] e<tag> --veth-- k<tag> [sink ns]

Every test bed has its own namespaces (xnfb-<pid>-<random>-{src,dut,sink})
and device names with a random tag, so that its napi kernel threads
("napi/i<tag>-<id>") can be told apart from those of other test beds
running at the same time. Pins live on a private bpffs mounted on a
temporary directory (XNF_PIN_ROOT points into it). teardown() undoes what
setup() did, after a partial setup too, and may be called twice.
"""

import os
import random
import signal
import subprocess
import tempfile
import time

SRC4, D04, D14, SINK4 = "192.0.2.1", "192.0.2.254", "198.51.100.254", "198.51.100.1"
SRC6, D06, D16, SINK6 = "2001:db8:1::1", "2001:db8:1::fe", "2001:db8:2::fe", "2001:db8:2::1"
MAC_S, MAC_I = "02:78:6e:00:00:01", "02:78:6e:00:00:02"
MAC_E, MAC_K = "02:78:6e:00:00:03", "02:78:6e:00:00:04"

# Seconds a single setup command may take before it counts as hung.
CMD_TIMEOUT = 30


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


class Testbed:
    def __init__(self, build, verbose=False):
        self.build = build
        self.xnf = os.path.join(build, "xnf")
        self.verbose = verbose
        self.ns = []
        self.procs = []
        self.tmp = None
        self.bpffs = None
        self.xnf_devs = []
        tag = "%05x" % random.randrange(16 ** 5)
        ident = f"{os.getpid()}-{tag}"
        self.src, self.dut, self.sink = (f"xnfb-{ident}-{r}" for r in ("src", "dut", "sink"))
        self.s, self.i, self.e, self.k = (f"{c}{tag}" for c in "siek")

    # ---- commands -------------------------------------------------------
    def log(self, msg):
        if self.verbose:
            print(f"  testbed: {msg}", flush=True)

    @property
    def pin_root(self):
        return os.path.join(self.bpffs, "xnf")

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

    # ---- setup / teardown -----------------------------------------------
    # Namespace-wide settings, before any device exists.
    NS_SYSCTLS = ["net.ipv6.conf.default.accept_dad=0", "net.ipv6.conf.all.accept_dad=0",
                  "net.ipv6.conf.default.router_solicitations=0",
                  "net.ipv6.conf.all.router_solicitations=0"]

    def _ns_new(self, ns):
        run(["ip", "netns", "add", ns])
        self.ns.append(ns)
        run(["ip", "-n", ns, "link", "set", "lo", "up"])
        run(["sysctl", "-q", "-w", *self.NS_SYSCTLS], ns=ns)

    def setup_base(self, prefix):
        """The temporary directory, the private bpffs and the three
        namespaces, without devices."""
        self.tmp = tempfile.mkdtemp(prefix=f"{prefix}-{os.getpid()}-")  # no dots: libbpf rewrites them in pin paths
        bpffs = os.path.join(self.tmp, "bpffs")
        os.mkdir(bpffs, 0o700)
        run(["mount", "-t", "bpf", "-o", "mode=0700", "bpf", bpffs])
        self.bpffs = bpffs
        for ns in (self.src, self.dut, self.sink):
            self._ns_new(ns)

    def setup(self):
        self.setup_base("xnf-bench")
        ipn = lambda ns, *a: run(["ip", "-n", ns, *a])
        # The pairs are born in their namespaces: nothing in the root one.
        ipn(self.src, "link", "add", self.s, "address", MAC_S, "type", "veth",
            "peer", "name", self.i, "address", MAC_I, "netns", self.dut)
        ipn(self.sink, "link", "add", self.k, "address", MAC_K, "type", "veth",
            "peer", "name", self.e, "address", MAC_E, "netns", self.dut)
        for ns, dev, a4, a6 in ((self.src, self.s, SRC4, SRC6), (self.dut, self.i, D04, D06),
                                (self.dut, self.e, D14, D16), (self.sink, self.k, SINK4, SINK6)):
            plen = 24
            ipn(ns, "addr", "add", f"{a4}/{plen}", "dev", dev)
            ipn(ns, "addr", "add", f"{a6}/64", "dev", dev, "nodad")
            ipn(ns, "link", "set", dev, "up")
        ipn(self.src, "route", "add", "default", "via", D04)
        ipn(self.src, "-6", "route", "add", "default", "via", D06)
        ipn(self.sink, "route", "add", "default", "via", D14)
        ipn(self.sink, "-6", "route", "add", "default", "via", D16)
        for ns, addr, mac, dev in ((self.src, D04, MAC_I, self.s), (self.src, D06, MAC_I, self.s),
                                   (self.dut, SRC4, MAC_S, self.i), (self.dut, SRC6, MAC_S, self.i),
                                   (self.dut, SINK4, MAC_K, self.e), (self.dut, SINK6, MAC_K, self.e),
                                   (self.sink, D14, MAC_E, self.k), (self.sink, D16, MAC_E, self.k)):
            ipn(ns, "neigh", "replace", addr, "lladdr", mac, "dev", dev, "nud", "permanent")
        run(["sysctl", "-q", "-w", "net.ipv4.ip_forward=1",
             "net.ipv6.conf.all.forwarding=1"], ns=self.dut)
        # A veth receives redirected (and generated XDP_TX) frames in NAPI,
        # which it runs only with XDP or GRO on: GRO on every receiver, so
        # that the kernel dataplanes (no XDP on the DUT) get NAPI too, and
        # threaded NAPI can move it to the DUT's CPU. Senders compute their
        # own checksums (testbed.bash says why).
        run(["ethtool", "-K", self.s, "gro", "on", "tx", "off"], ns=self.src)
        run(["ethtool", "-K", self.k, "gro", "on", "tx", "off"], ns=self.sink)
        run(["ethtool", "-K", self.i, "gro", "on"], ns=self.dut)
        run(["ethtool", "-K", self.e, "gro", "on"], ns=self.dut)
        self.log(f"{self.src} | {self.dut} | {self.sink}, pins {self.pin_root}")

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

    def teardown(self):
        problems = []
        for p in list(self.procs):
            self.stop(p, timeout=5)
        self.procs = []
        if self.bpffs and self.dut in self.ns:
            for dev in reversed(self.xnf_devs):
                try:
                    self.xnf_cmd("detach", dev)
                except CmdError as ex:
                    problems.append(str(ex))
            if os.path.isdir(os.path.join(self.pin_root, "tables")):
                try:
                    self.xnf_cmd("destroy")
                except CmdError as ex:
                    problems.append(str(ex))
        self.xnf_devs = []
        for ns in self.ns:
            try:
                run(["ip", "netns", "del", ns])
            except CmdError as ex:
                problems.append(str(ex))
        self.ns = []
        if self.bpffs:
            try:
                run(["umount", self.bpffs])
                self.bpffs = None
            except CmdError as ex:
                problems.append(str(ex))
        if self.tmp and os.path.isdir(self.tmp):
            if self.bpffs:
                problems.append(f"{self.bpffs} still mounted, {self.tmp} kept")
            else:
                run(["rm", "-rf", "--", self.tmp])
        self.tmp = None
        for msg in problems:
            print(f"teardown: {msg}", flush=True)

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
