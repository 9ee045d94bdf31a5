# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
The math of the batching model: the mean service time of each batch size
(Service, measured, given or a weighted linear fit), the interarrival and
service laws in slots, the Markov chain of the queue at the polling
instants (eq. 1) and its fixed point (iteration or a direct banded solve),
what that predicts (batch-size distribution, loss, throughput: predict()),
and the measures that compare it with a measurement (jsd, rel_error).
It needs numpy and scipy and nothing else of xnf.
"""
# The discrete-time model of ../shared/papers/batching-model-nfv-routers.txt
# ("the paper").
#
# The model (paper, section III). One queue of capacity L is polled by one
# core. A poll takes min(queue, beta) packets and serves them in a time B_i
# that depends only on the batch size i; packets that arrive while the queue
# holds L are lost. The queue size Q at the polling instants is a Markov
# chain: eq. (1) maps q_n to q_{n+1}; its fixed point q gives the batch-size
# distribution v (eq. 2) and the loss (eq. 3, expected lost over expected
# arrived per poll). Throughput is E[V]/E[cycle], so it must equal
# rate * (1 - loss); the tests check that.
#
# Time is slotted. The slot is 1/16 of the shortest time that matters, the
# shortest mean service time or the mean interarrival time at the reference
# rate (the rate predicted, or the saturation rate beta/t(beta) for
# `dimension`), and never so short that the longest mean service time exceeds
# 4096 slots (--slot overrides). In slots, as in the paper:
#   - interarrival times A are i.i.d. (a renewal process): `poisson` (the
#     paper's choice and best fit to a constant-rate generator: Poisson in
#     slots, CV = 1/sqrt(E[A]), nearly regular), `geometric` (CV ~ 1: the
#     Bernoulli process, the discrete Poisson process) or `negbin` with a
#     given CV. Arrivals in a service interval are counted from a random
#     phase (the stationary renewal process), so E[arrivals] = rate x time.
#     `paced` (exact intervals) with the exhaustive poll of a sleeping
#     server is a chain over (queue, phase) instead: paced_chain().
#   - service times B_i are Poisson in slots with mean t(i) (or exactly t(i),
#     `--service-dist deterministic`). t(i) is the measured mean where size i
#     was seen (at least --min-samples times), else a global linear fit
#     t(i) = a + b*i weighted by batch counts over all sizes >= 1 (and all
#     points of a sweep), as the paper does.
#
# The fixed point is found by iterating eq. (1) from an empty queue until the
# L1 change of q is below --tol (1e-10) within --max-iter iterations. Near
# saturation the chain mixes slowly (a queue random walk between beta and L);
# `--solver auto` (default) then solves q = qP as a sparse linear system and
# checks it with one more step of eq. (1): |qP - q|_1 < tol. Every answer says
# which was used, the iterations and the last change; a point that misses the
# tolerance is reported as not converged (exit status 3 for predict).
#
# Where an xnf AF_XDP worker differs from the model:
#   - the worker sleeps in poll() after 64 empty reads in a row (unless it
#     spins or busy-polls); the model then adds idle states: 64 empty polls,
#     then a wait for the next packet plus a wake-up latency (--wake-ns,
#     default 0; a constant, or a measured distribution, each sleep's
#     wake-up drawn from it). --idle-spins inf is the paper's pure polling.
#   - the worker records no time for empty reads (by_size[0].ns = 0): the
#     empty poll then costs the fit's intercept a, an overestimate.
#   - packets reach the XSK ring in NAPI bursts (up to 64), not one by one;
#     the fill ring can run dry (rx_dropped), which the model does not know.
#   - service times are not independent of the past (caches, TX completions)
#     and, on a shared vCPU, include preemption; the model takes them i.i.d.
#   - the RX descriptors are released before the NF runs, as the model's
#     FIFO frees them at pickup.

import copy
import math
import sys

try:
    import numpy as np
    from scipy import sparse, stats as sstats
except ImportError as e:  # pragma: no cover - install-deps provides them
    sys.stderr.write("Error: %s; install python3-numpy and python3-scipy "
                     "(scripts/install-deps.sh)\n" % e)
    sys.exit(1)

SLOT_RES = 16           # slots in the shortest time that matters
SLOT_MAX = 4096         # slots in the longest mean service time
WAKE_SLOTS_MAX = 1 << 17  # slots the longest wake-up may span
WAKE_LONG = 8           # a wake-up with more arrivals than this many queues
TAIL = 1e-15            # probability mass cut from distribution tails
TINY = 1e-30            # transition probabilities below this are dropped
TOL = 1e-10             # L1 change of q that ends the iteration
MAX_ITER = 20000        # iterations of eq. (1), --solver iterate
AUTO_ITER = 2000        # iterations before --solver auto solves directly

TARGET_MEAN = 1.0       # packets: the paper's accuracy (Fig. 5)
TARGET_LOSS = 0.005     # 0.5 percentage points (Tab. III: ~0.2)
TARGET_JSD = 0.05
KNEE = 0.02             # the rate's shift that tells a miss at the knee
STEADY_SPEED = 2 * KNEE  # a trial is steady where its stretches' speeds are this close


class ModelError(Exception):
    """A user-facing failure: the message says what and what to do."""


def fit_line(x, y, w):
    """Least squares y = a + b*x weighted by w (counts: the same line as a
    fit over every single sample): (a, b, R2), None where x does not vary."""
    x, y, w = (np.asarray(v, float) for v in (x, y, w))
    xm, ym = np.average(x, weights=w), np.average(y, weights=w)
    sxx = np.sum(w * (x - xm) ** 2)
    if sxx <= 0:
        return None
    b = np.sum(w * (x - xm) * (y - ym)) / sxx
    a = ym - b * xm
    ss_tot = np.sum(w * (y - ym) ** 2)
    ss_res = np.sum(w * (y - a - b * x) ** 2)
    return float(a), float(b), float(1 - ss_res / ss_tot) if ss_tot > 0 \
        else 1.0


class Service:
    """Mean service time t(i) in ns for i = 0..beta and where it came from."""

    def __init__(self, beta, means=None, linear=None, hist=None,
                 min_samples=5, t0_hint=None):
        self.beta = beta
        self.t = np.zeros(beta + 1)
        self.source = [""] * (beta + 1)
        self.fit = None                   # (a, b) used for missing sizes
        self.fit_from = None              # "measured" | "given" | "--service-linear"
        self.r2 = None
        self.cv_measured = None
        known = {}                        # size -> mean ns
        if hist:
            self._from_hist(hist, min_samples, known)
            src = "measured"
        elif means:
            bad = [i for i in means if i > beta]
            if bad:
                raise ModelError("--service-means has size %d above beta %d"
                                 % (bad[0], beta))
            known.update(means)
            src = "given"
            self._fit_points(sorted((i, t, 1.0) for i, t in means.items()))
        else:
            src = None
        if linear:
            self.fit, self.fit_from = linear, "--service-linear"
        if self.fit is None and len(known) < beta + 1:
            raise ModelError(
                "service times: %s; give --service-linear A,B (t(i) = A + "
                "B*i ns) for the sizes not %s" % (
                    "no sizes known" if not known else
                    "only size %s known, too few for a linear fit"
                    % ",".join(str(i) for i in sorted(known)),
                    "measured" if hist else "given"))
        for i in range(beta + 1):
            if i in known:
                self.t[i], self.source[i] = known[i], src
            else:
                a, b = self.fit
                self.t[i] = a + b * i
                self.source[i] = "fit"
        # An xnf worker does not time empty reads; idle_ns / empty_polls
        # bounds their cost from above (it includes sleeps), as does the
        # intercept: take the smaller.
        if self.source[0] == "fit" and t0_hint and t0_hint > 0 and \
                (self.t[0] <= 0 or t0_hint < self.t[0]):
            self.t[0], self.source[0] = t0_hint, "idle"
        floor = max(1e-3, 1e-3 * self.t.max())
        self.clamped = [i for i in range(beta + 1) if self.t[i] < floor]
        self.t = np.maximum(self.t, floor)

    def _from_hist(self, hist, min_samples, known):
        pts = []
        var_w = cv_w = 0.0
        for h in hist:
            i, n, ns = h["size"], h["batches"], h["ns"]
            if i > self.beta:
                raise ModelError("the measurement has batches of %d packets, "
                                 "above beta %d: give the worker's batch limit"
                                 % (i, self.beta))
            if n <= 0 or ns <= 0:
                continue              # empty reads without a time (xnf worker)
            mean = ns / n
            if n >= min_samples:
                known[i] = mean
            if i >= 1:
                pts.append((i, mean, float(n)))
                sq = h.get("ns_sq")
                if sq and n > 1:
                    var = max(sq / n - mean * mean, 0.0)
                    cv_w += n * math.sqrt(var) / mean
                    var_w += n
        if var_w:
            self.cv_measured = cv_w / var_w
        self._fit_points(pts)
        if self.fit is not None:
            self.fit_from = "measured"

    def _fit_points(self, pts):
        """Least squares of the means, weighted by batch counts: the same line
        as a fit over every single batch. Sizes >= 1 only when there are two:
        an empty poll runs other code."""
        use = [p for p in pts if p[0] >= 1]
        if len(use) < 2:
            use = pts
        if len(use) < 2:
            return
        line = fit_line(*zip(*use))
        if line is not None:
            self.fit, self.r2 = line[:2], line[2]

    def best_batch(self):
        """Batch size with the lowest cost per packet, and its rate."""
        i = np.arange(1, self.beta + 1)
        eff = i / self.t[1:] * 1e9
        k = int(np.argmax(eff))
        return int(i[k]), float(eff[k])

    def capacity_pps(self):
        """Packets per second with every batch full: beta / t(beta)."""
        return self.beta / self.t[self.beta] * 1e9

    def scaled(self, f):
        """The same service with every mean time multiplied by f."""
        s = copy.copy(self)
        s.t = self.t * f
        s.fit = None if self.fit is None else (self.fit[0] * f,
                                               self.fit[1] * f)
        return s

    def describe(self):
        d = {"means_ns": [round(float(x), 3) for x in self.t],
             "source": self.source,
             "capacity_pps": self.capacity_pps()}
        if self.fit is not None:
            d["fit"] = {"a_ns": self.fit[0], "b_ns": self.fit[1],
                        "from": self.fit_from}
            if self.r2 is not None:
                d["fit"]["r2"] = self.r2
        if self.cv_measured is not None:
            d["cv_measured"] = self.cv_measured
        if self.clamped:
            d["clamped_sizes"] = self.clamped
        return d


# ---------------------------------------------------------- distributions

def interarrival(kind, cv, mu, n):
    """Interarrival time in slots, mean mu: (pmf[0:n], P(A > d) for d < n,
    variance). Support starts at 0: several packets may share a slot."""
    k = np.arange(n)
    if kind == "poisson":
        d = sstats.poisson(mu)
        var = mu
    elif kind == "geometric":
        p = 1.0 / (1.0 + mu)
        pmf = p * np.power(1 - p, k)
        sf = np.power(1 - p, k + 1)
        return pmf, sf, mu * (1 + mu)
    elif kind == "paced":
        lo = int(math.floor(mu))
        fr = mu - lo
        pmf = np.zeros(n)
        if lo < n:
            pmf[lo] = 1 - fr
        if fr > 0 and lo + 1 < n:
            pmf[lo + 1] = fr
        return pmf, 1 - np.cumsum(pmf), fr * (1 - fr)
    elif kind == "negbin":
        var = (cv * mu) ** 2
        if var <= mu:
            raise ModelError(
                "negbin with cv %g needs a mean interarrival above %.3g "
                "slots, here it is %.3g (rate x slot too high): use a smaller "
                "--slot, a larger --cv, or poisson" % (cv, 1 / cv ** 2, mu))
        d = sstats.nbinom(mu * mu / (var - mu), mu / var)
    else:
        raise ModelError("unknown arrival law '%s': poisson, geometric, "
                         "negbin or paced" % kind)
    return d.pmf(k), d.sf(k), var


def service_pmf(mean, kind, n):
    """Service time in slots on 0..n-1: Poisson (paper) or deterministic
    (the two integers around the mean, so the mean is exact)."""
    p = np.zeros(n)
    if kind == "deterministic":
        lo = int(math.floor(mean))
        f = mean - lo
        p[lo] += 1 - f
        if f > 0:
            p[lo + 1] += f
        return p
    return sstats.poisson(mean).pmf(np.arange(n))


def _conv(x, a, n):
    if len(a) > 64 and len(x) > 64:
        size = 1 << int(math.ceil(math.log2(len(x) + len(a))))
        y = np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(a, size), size)[:n]
        return np.maximum(y, 0.0)
    return np.convolve(x, a)[:n]


def count_ccdf(first, a, n):
    """C[k, m] = P(at least k arrivals in m slots), m = 0..n, for a renewal
    process whose first arrival falls in slot `first` (pmf) and whose later
    gaps are `a`. Rows stop where the tail is below TAIL."""
    rows = [np.ones(n + 1)]
    pt = first[:n].copy()
    while True:
        row = np.concatenate(([0.0], np.cumsum(pt)))
        if row[-1] < TAIL:
            break
        rows.append(np.minimum(row, 1.0))
        pt = _conv(pt, a, n)
        if len(rows) > 10 ** 6:  # pragma: no cover
            raise ModelError("arrival counts do not end: rate too high for "
                             "the slot")
    return np.array(rows)


# ------------------------------------------------------------------ model

def ns_law(x, what):
    """A time in ns, or its distribution given as a pair (ns values,
    probabilities): (values, probabilities adding to 1)."""
    if np.isscalar(x) or (isinstance(x, np.ndarray) and x.ndim == 0):
        vals, probs = np.array([float(x)]), np.array([1.0])
    else:
        # a pair of sequences, not one array: numpy refuses values and
        # probabilities of different lengths as one
        try:
            vals, probs = (np.asarray(v, float).ravel() for v in x)
        except (TypeError, ValueError):
            vals = probs = np.array([])
        if len(vals) != len(probs) or not len(vals) or \
                not np.all(np.isfinite(probs)) or \
                np.any(probs < 0) or probs.sum() <= 0:
            raise ModelError("a %s distribution needs as many probabilities "
                             "as values, not all zero" % what)
        probs = probs / probs.sum()
    if np.any(vals < 0) or not np.all(np.isfinite(vals)):
        raise ModelError("%s times are ns >= 0" % what)
    return vals, probs


class Params:
    def __init__(self, L, beta, rate_pps, service, arrival="poisson", cv=None,
                 service_dist="poisson", idle_spins=None, wake_ns=0.0,
                 slot_ns=None, ref_rate_pps=None, burst=1,
                 discipline="gated", poll_tail_ns=None, linger_ns=None,
                 poll_line_ns=None):
        if L < 1 or beta < 1:
            raise ModelError("L and beta must be at least 1 (L=%s beta=%s)"
                             % (L, beta))
        if beta > L:
            raise ModelError("beta %d is above the queue capacity L %d: a "
                             "poll cannot take more than the queue holds"
                             % (beta, L))
        if not rate_pps > 0:
            raise ModelError("the arrival rate must be positive")
        if arrival == "negbin" and not (cv and cv > 0):
            raise ModelError("negbin needs --cv C (the paper uses 0.5 and 2)")
        self.L, self.beta, self.rate = int(L), int(beta), float(rate_pps)
        self.service, self.arrival, self.cv = service, arrival, cv
        self.service_dist = service_dist
        if discipline not in ("gated", "exhaustive"):
            raise ModelError("unknown service discipline '%s': gated or "
                             "exhaustive" % discipline)
        # gated (the paper): a poll takes what the queue holds when it
        # starts, up to beta; exhaustive (veth's NAPI poll): it takes
        # packets one at a time until the queue is empty or it has beta,
        # what arrives meanwhile too.
        self.discipline = discipline
        # Of each t(i), the ns after the poll's last packet (exhaustive:
        # what arrives then waits for the next poll; the XDP path's
        # receiver NAPI run in its softirq after each poll). None: 0.
        self.poll_tail = None
        if poll_tail_ns is not None:
            tail = np.asarray(poll_tail_ns, float).ravel()
            if len(tail) != beta + 1 or not np.all(np.isfinite(tail)) or \
                    np.any(tail < 0) or np.any(tail > service.t + 1e-9):
                raise ModelError("a poll's tail is ns >= 0 for each size "
                                 "0..beta (%d values), within its service "
                                 "time" % (beta + 1))
            self.poll_tail = tail
        # The exhaustive poll's own time a + b*i (a, b in ns), t(i) less
        # its tail, as fitted on the polls seen; None: the line through
        # t(1) and t(beta) less their tails.
        self.poll_line = None
        if poll_line_ns is not None:
            a, b = (float(x) for x in poll_line_ns)
            if not (np.isfinite(a) and np.isfinite(b) and a >= 0 and b > 0):
                raise ModelError("a poll's line is a >= 0 and b > 0 ns "
                                 "(t(i) less its tail = a + b*i)")
            self.poll_line = (a, b)
        self.idle_spins = idle_spins      # None: poll forever (the paper)
        # A sleeping server that, after a poll leaves the queue empty,
        # waits up to linger_ns for a packet and polls as soon as one
        # comes (NAPI's thread on its way to sleep), in place of its empty
        # reads (idle_spins is then 0).
        # A distribution (ns values, probabilities) or ns; linger is its
        # mean (the paced model takes the distribution: a linger longer
        # than the wait for the next burst catches it).
        self.linger = None
        if linger_ns is not None:
            if idle_spins is None:
                raise ModelError("a linger is of a server that sleeps (idle "
                                 "spins given)")
            self.linger_vals, self.linger_probs = ns_law(linger_ns, "linger")
            self.linger = float(self.linger_vals @ self.linger_probs)
        # The wake-up after a sleep: ns, or a distribution; wake_ns is
        # then its mean.
        self.wake_vals, self.wake_probs = ns_law(wake_ns, "wake-up")
        self.wake_ns = float(self.wake_vals @ self.wake_probs)
        # Packets per arrival: a count, or a distribution g(k) over k >= 1
        # (a compound renewal process: arrival epochs at rate / E[g], each
        # bringing an i.i.d. burst; the paper's a(k) admits it).
        if np.ndim(burst) == 0:
            if int(burst) != burst or burst < 1 or burst > beta * 64:
                raise ModelError("--burst is a packet count >= 1")
            g = np.zeros(int(burst) + 1)
            g[int(burst)] = 1.0
        else:
            g = np.asarray(burst, float)
            if len(g) < 2 or np.any(g < 0) or g[1:].sum() <= 0 or \
                    len(g) > beta * 64 + 1:
                raise ModelError("a burst-size distribution needs "
                                 "probability on sizes 1..%d" % (beta * 64))
            g = g.copy()
            g[0] = 0.0
            g /= g.sum()
            g = g[:int(np.nonzero(g)[0].max()) + 1]
        self.burst_pmf = g
        self.burst_mean = float(np.arange(len(g)) @ g)
        nz = np.nonzero(g)[0]
        # a constant burst keeps its count (output, the exact fast path)
        self.burst = int(nz[0]) if len(nz) == 1 else None
        if slot_ns is None:
            ref = ref_rate_pps or rate_pps
            slot_ns = min(service.t.min(), 1e9 / ref) / SLOT_RES
            slot_ns = max(slot_ns, service.t.max() / SLOT_MAX)
        self.slot = float(slot_ns)


class Result(dict):
    pass


COMPOUND_MAX = 1 << 18   # packets a compound arrival count may reach


def spread(X, g):
    """Distributions of arrival counts (rows of X) as packet counts when
    every arrival brings an i.i.d. burst with pmf g: row j becomes
    sum_n X[j, n] g^{*n} (a constant burst kb: mass at multiples of kb)."""
    nz = np.nonzero(g)[0]
    if len(nz) == 1:
        kb = int(nz[0])
        if kb == 1:
            return X
        out = np.zeros((X.shape[0], (X.shape[1] - 1) * kb + 1))
        out[:, ::kb] = X
        return out
    K = X.shape[1] - 1
    n = K * (len(g) - 1) + 1
    if n > COMPOUND_MAX:
        raise ModelError("too many packets per service time for the burst "
                         "distribution (%d); give a shorter --slot or a "
                         "lower rate" % n)
    out = np.zeros((X.shape[0], n))
    pw = np.array([1.0])                    # g^{*0}
    for k in range(K + 1):
        col = X[:, k]
        if np.any(col > TINY):
            out[:, :len(pw)] += np.outer(col, pw)
        if k < K:
            pw = _conv(pw, g, len(pw) + len(g) - 1)
    return out


def arrivals_onto(A, x, L):
    """Rows of A: mass over queue sizes 0..A.shape[1]-1; each row gets
    arrivals of packet pmf x. Returns the mass over 0..L (what exceeds L is
    lost, the queue then full) and per row the expected packets lost."""
    rows, c = A.shape
    R = np.zeros((rows, L + 1))
    lost = np.zeros(rows)
    for k in np.nonzero(x > TINY)[0]:
        fit = min(c, max(L - k + 1, 0))          # sizes r with r + k <= L
        if fit:
            R[:, k:k + fit] += A[:, :fit] * x[k]
        if fit < c:
            over = A[:, fit:]
            R[:, L] += over.sum(axis=1) * x[k]
            lost += over @ (np.arange(fit, c) + k - L) * x[k]
    return R, lost


def poll_line(p):
    """The exhaustive poll's own time a + b*i (ns) and its tail per size:
    p.poll_line, else the line through t(1) and t(beta) less their tails
    (b = t(1) and a = 0 at beta 1)."""
    beta, t = p.beta, p.service.t
    tail = p.poll_tail if p.poll_tail is not None else np.zeros(beta + 1)
    if p.poll_line is not None:
        return p.poll_line[0], p.poll_line[1], tail
    own = t - tail                               # the poll up to its end
    b = max((own[beta] - own[1]) / (beta - 1), 1e-3) if beta > 1 else own[1]
    return max(own[1] - b, 0.0), b, tail


PHASES = 32              # bins of a paced stream's phase


def paced_chain(p, nwin):
    """The chain of an exhaustive poll fed at exact intervals (--arrival
    paced): a burst of kb packets every D = kb * 1e9 / rate ns, kb the constant
    burst, so that by t ns after a poll's start N(t) = kb * floor(t / D + u)
    packets came, u in [0, 1) the stream's phase then. The state is the queue a
    poll finds and that phase (PHASES values i / PHASES, a phase taken to the
    nearest): it goes on from poll to poll, as a paced generator's does. From
    (q, u) the poll is exact: while the ring holds a packet and it has taken
    fewer than beta, it takes one and N((j + 1) b) - N(j b) come (a ring of L
    loses what exceeds it), B packets in all, r left. Its end, e ns (a and the
    tail of B, in slots as the service law says), brings k = N(Bb + e) - N(Bb)
    more, and the next poll finds r + kb*k at the phase frac((Bb + e) / D + u).
    If that is nothing, the server sleeps unless the next burst, rho ns away,
    comes within the linger, which perf times from the poll's end, the end in
    it: P(linger >= e + rho); caught, it polls that burst at phase 0; else it
    wakes w after it (the wake-up's law) and finds the bursts of w, at phase
    frac(w / D). The waits are the cycle's idle time. State 0 is the start, an
    empty ring. Counted step by step from independent phases, as
    exhaustive_polls() does, a nearly regular stream gains a spread it does not
    have: each arrival that joins a poll lengthens it by b, during which the
    next is drawn afresh. Returns what build_chain() does, with per state the
    queue it finds (info "state_queue") and its idle ns (info "idle_ns")."""
    L, beta, slot = p.L, p.beta, p.slot
    if p.burst is None:
        raise ModelError("paced arrivals come in bursts of one size: give "
                         "--burst N, not a distribution")
    if p.idle_spins != 0:
        raise ModelError("paced arrivals with the exhaustive poll are for a "
                         "server that sleeps on an empty ring (NAPI: idle "
                         "spins 0)")
    kb = p.burst
    D = kb * 1e9 / p.rate
    a, b, tail = poll_line(p)
    ends = a + tail
    uniq, which = np.unique(ends, return_inverse=True)
    S = np.array([service_pmf(x / slot, p.service_dist, nwin + 1)
                  for x in uniq])
    e_ns = np.arange(nwin + 1) * slot
    NB = PHASES
    n = 1 + L * NB

    def land(q, u):
        """Where a poll that finds q packets at phase u in [0, 1) is
        counted: the nearest phase i/NB; rounded up to 1, the burst then
        due is taken as come. (state, packets the ring then holds beyond
        L, bursts counted early)."""
        i = np.rint(np.asarray(u) * NB).astype(int)
        wrap = i == NB
        q = np.asarray(q) + kb * wrap
        return 1 + (np.clip(q, 1, L).astype(int) - 1) * NB + i % NB, \
            np.maximum(q - L, 0), wrap

    qs = np.repeat(np.arange(1, L + 1), NB)
    u = np.tile(np.arange(NB) / NB, L)
    if p.linger is not None:
        lv = np.argsort(p.linger_vals)
        lx, lsf = p.linger_vals[lv], np.cumsum(p.linger_probs[lv][::-1])[::-1]

        def caught_by(t):
            k = np.searchsorted(lx, t, side="left")
            return np.where(k < len(lx), lsf[np.minimum(k, len(lx) - 1)], 0.0)
    else:
        def caught_by(t):
            return (t <= 0).astype(float)
    # the poll, from every state at once
    ring = qs.astype(float)
    taken = np.zeros(L * NB)
    lost = np.zeros(n)
    live = np.ones(L * NB, bool)
    for j in range(beta):
        live &= ring > 0
        if not live.any():
            break
        came = kb * (np.floor((j + 1) * b / D + u) - np.floor(j * b / D + u))
        ring = ring - live + live * came
        over = np.maximum(ring - L, 0.0)
        lost[1:] += over
        ring -= over
        taken += live
    B = taken.astype(int)
    x0 = B * b / D + u
    arr = np.zeros(n)
    arr[1:] = kb * np.floor(x0)                  # came during the packets
    idle = np.zeros(n)
    caught = land(kb, 0.0)[0]
    rows, cols, vals = [np.array([0])], [np.array([caught])], [np.ones(1)]
    # where the wake-ups lead: the bursts of w behind the one that woke
    # it, at the phase of w
    wq = kb * (1 + np.floor(p.wake_vals / D))
    wdst, wover, wwrap = land(wq, np.mod(p.wake_vals / D, 1.0))
    wlost = float(p.wake_probs @ wover)
    warr = float(p.wake_probs @ (wq + kb * wwrap))
    for k in np.unique(B):
        sel = np.nonzero(B == k)[0]
        pe = S[which[k]]
        es = np.nonzero(pe > TINY)[0]
        pe = pe[es]
        x = x0[sel, None] + e_ns[es][None, :] / D
        c = np.floor(x) - np.floor(x0[sel, None])
        tot = ring[sel, None] + kb * c
        st = 1 + sel
        w_ = np.broadcast_to(pe, x.shape)
        dst, over, wrap = land(tot, np.mod(x, 1.0))
        go = (tot > 0) | wrap
        rows.append(np.broadcast_to(st[:, None], x.shape)[go])
        cols.append(dst[go])
        vals.append(w_[go])
        c = c + wrap * go
        tot = ring[sel, None] + kb * c
        lost[st] += (np.maximum(tot - L, 0) * w_).sum(1)
        arr[st] += (kb * c * w_).sum(1)
        # an empty ring: the next burst within the linger, else a sleep
        rho = D * (1 - np.mod(x, 1.0))
        none = ~go * w_
        near = caught_by(e_ns[es][None, :] + rho) * none
        pc, ps = near.sum(1), (none - near).sum(1)
        rows.append(st)
        cols.append(np.full(len(st), caught))
        vals.append(pc)
        rows.append(np.repeat(st, len(wdst)))
        cols.append(np.tile(wdst, len(st)))
        vals.append((ps[:, None] * p.wake_probs[None, :]).ravel())
        idle[st] = (near * rho).sum(1) + ((none - near) * rho).sum(1) + \
            ps * p.wake_ns
        arr[st] += pc * kb + ps * warr
        lost[st] += ps * wlost
    rows, cols, vals = (np.concatenate(v) for v in (rows, cols, vals))
    keep = vals > TINY
    P = sparse.csr_matrix((vals[keep], (rows[keep], cols[keep])),
                          shape=(n, n))
    batch = np.zeros((n, beta + 1))
    batch[0, 0] = 1.0
    batch[np.arange(1, n), B] = 1.0
    cyc = np.zeros(n)
    cyc[1:] = a + b * B + tail[B] + idle[1:]
    cyc[0] = D                                   # the start: one burst
    arr[0] = kb
    info = {"mu_slots": D / slot, "arrival_cv": 0.0, "burst": kb,
            "burst_mean": float(kb), "service_cv": [
                float(math.sqrt(x) / x) if p.service_dist == "poisson"
                else 0.0 for x in (ends[1] / slot, ends[beta] / slot)],
            "arrival_counts_max": None, "window_slots": nwin, "states": n,
            "Z": 1, "idle_ns": idle, "state_queue": np.r_[0, qs],
            "phases": NB}
    return P, batch, cyc, arr, lost, info


def exhaustive_polls(p, C, nwin):
    """An exhaustive poll limited to beta, as veth's NAPI poll: it takes a
    packet while the queue has one and it has taken fewer than beta, each
    taking b ns, what arrives meanwhile joining the queue, and ends with a
    ns of its own (the redirect flush, completing NAPI) and its tail:
    poll_line() (the poll's time is then a + b*B + tail(B) of the packets
    B it took). For a poll that finds q = 1..L
    packets: P(B = j) (L x beta+1), the queue it leaves (L x L+1), the
    expected arrivals during it, the packets lost, and t(j) as the poll
    spends it (the line)."""
    L, beta, slot = p.L, p.beta, p.slot
    a, b, tail = poll_line(p)
    # Its end after the last of j packets: a, and the tail of a poll of j.
    ends = a + tail
    uniq, which = np.unique(ends, return_inverse=True)
    S = np.array([service_pmf(x / slot, p.service_dist, nwin + 1)
                  for x in np.r_[b, uniq]])
    G = np.minimum(S @ C.T, 1.0)
    G[:, 0] = 1.0
    X = G.copy()
    X[:, :-1] -= G[:, 1:]
    X = spread(np.maximum(X, 0.0), p.burst_pmf)
    xb, xe = X[0], X[1:]
    kn = np.arange(X.shape[1])
    eb, ee = float(kn @ xb), xe @ kn
    M = np.eye(L + 1)[1:]                        # from q = 1..L: queue now
    Bp = np.zeros((L, beta + 1))
    T = np.zeros((L, L + 1))                     # the queue it leaves
    arr = np.zeros(L)
    lost = np.zeros(L)

    def end(A, j):
        """The poll ends with j taken, the queue A: its last ends[j] ns."""
        nonlocal T, lost
        R, dl = arrivals_onto(A, xe[which[j]], L)
        T += R
        lost += dl

    for j in range(beta):
        Bp[:, j] += M[:, 0]                      # empty: the poll ends
        if Bp[:, j].any():
            end(M[:, :1], j)
        go = M[:, 1:]                            # takes one: r -> r - 1
        arr += go.sum(axis=1) * eb
        M, dl = arrivals_onto(go, xb, L)
        lost += dl
    Bp[:, beta] += M.sum(axis=1)                 # beta taken
    end(M, beta)
    arr += Bp @ ee[which]
    return Bp, T, arr, lost, a + b * np.arange(beta + 1) + tail


def build_chain(p):
    """Transition matrix of the queue at polling instants, and per state
    its batch size, mean cycle time (ns), expected arrivals and losses.
    States: 0_c (empty queue after c empty polls in a row, c = 0..S; one
    state when the server polls forever), then queue sizes 1..L."""
    L, beta, slot, g = p.L, p.beta, p.slot, p.burst_pmf
    mu = p.burst_mean * 1e9 / (p.rate * slot)    # mean interarrival, slots
    m = p.service.t / slot                       # mean service, slots
    top = m.max()
    if p.discipline == "exhaustive":             # its steps and ends too
        a_, b_, tail_ = poll_line(p)
        top = max(top, b_ / slot, (a_ + tail_.max()) / slot)
    nwin = int(top + 12 * math.sqrt(top) + 12) + 2
    if p.service_dist == "deterministic":
        nwin = int(math.ceil(top)) + 2
    if p.arrival == "paced" and p.discipline == "exhaustive":
        return paced_chain(p, nwin)
    # The wake-up's pmf over slots 0..W. A wake-up during which more than
    # WAKE_LONG rings' worth of packets arrive fills the queue whatever the
    # arrivals' spread: it is taken with its mean count (rate x w), which
    # is all the queue's state and its losses depend on then.
    wake_long = []
    if p.idle_spins is not None:
        ws = np.rint(p.wake_vals / slot).astype(np.int64)
        pk = p.wake_vals * p.rate * 1e-9
        long_ = pk > WAKE_LONG * (L + beta)
        wake_long = list(zip(pk[long_], p.wake_probs[long_]))
        if np.any(~long_) and ws[~long_].max() > WAKE_SLOTS_MAX:
            raise ModelError("a wake-up of %.0f ns is %d slots of %.3g ns, "
                             "more than the model resolves (%d): give a "
                             "longer --slot" % (p.wake_vals[~long_].max(),
                                                ws[~long_].max(), slot,
                                                WAKE_SLOTS_MAX))
        wake_pmf = np.bincount(ws[~long_], weights=p.wake_probs[~long_]) \
            if np.any(~long_) else np.array([0.0])
    else:
        wake_pmf = np.array([1.0])
    w_slots = len(wake_pmf) - 1
    a, a_sf, a_var = interarrival(p.arrival, p.cv, mu, max(nwin, w_slots + 1))
    a_long = a
    a, a_sf = a[:nwin], a_sf[:nwin]
    first = a_sf / mu                            # stationary first arrival
    C = count_ccdf(first, a, nwin)               # (K+1) x (nwin+1)
    B = np.array([service_pmf(x, p.service_dist, nwin + 1) for x in m])
    G = B @ C.T                                  # G[j,k] = P(N(B_j) >= k)
    G = np.minimum(G, 1.0)
    G[:, 0] = 1.0
    X = G.copy()
    X[:, :-1] -= G[:, 1:]                        # x_j(k); k = K lumps the tail
    X = np.maximum(X, 0.0)
    X = spread(X, g)                             # arrivals -> packets
    G = np.cumsum(X[:, ::-1], axis=1)[:, ::-1]
    K = G.shape[1] - 1
    # H[j, r] = E[(N(B_j) - r)^+] = sum_{k > r} P(N >= k)
    Hs = np.concatenate((np.cumsum(G[:, ::-1], axis=1)[:, ::-1],
                         np.zeros((beta + 1, 1))), axis=1)

    def H(j, r):
        return Hs[j, r + 1] if r + 1 <= K else 0.0

    def Gt(j, r):
        return G[j, r] if r <= K else 0.0

    arr = Hs[:, 1]                               # E[N(B_j)]
    spins = p.idle_spins
    t_idle, x_idle, a_idle, h_idle = p.service.t[0], X[0], arr[0], H(0, L)
    if p.linger is not None:
        # One wait of up to the linger, from a random phase of the arrivals
        # (so a nearly regular stream is seen as one): the first arrival
        # within it is polled at once, its burst the queue; else the sleep.
        spins = 0
        pw = float(first[:int(round(p.linger / slot))].sum())
        x_idle = np.zeros(len(g))
        x_idle[0] = 1.0 - pw
        x_idle[1:] = pw * g[1:]
        a_idle, h_idle = pw * p.burst_mean, 0.0
    Z = 1 if spins is None else spins + 1
    n = Z + L
    rows, cols, vals = [], [], []
    batch = np.zeros(n)
    cyc = np.zeros(n)
    n_arr = np.zeros(n)
    n_lost = np.zeros(n)
    t_ns = p.service.t

    def emit(s, r, x, scale=1.0, shift=0):
        """From state s, queue r + shift + k with probability scale * x[k],
        capped at L (the tail of x beyond L - r - shift goes to L)."""
        base = r + shift
        top = L - base                           # arrivals that still fit
        kk = np.nonzero(x[:max(top, 0)] * scale > TINY)[0]
        dst = base + kk
        tail = scale * (x[top:].sum() if top < len(x) else 0.0)
        if tail > TINY:
            dst = np.append(dst, L)
        rows.append(np.full(len(dst), s))
        cols.append(np.where(dst == 0, 0, Z + dst - 1))
        vals.append(np.append(x[kk] * scale, tail) if tail > TINY
                    else x[kk] * scale)

    if p.discipline == "exhaustive":
        Bp, T, e_arr, e_lost, t_poll = exhaustive_polls(p, C, nwin)
        batch = np.zeros((n, beta + 1))
        batch[0:Z, 0] = 1.0
        batch[Z:] = Bp
        cyc[Z:] = Bp @ t_poll
        n_arr[Z:], n_lost[Z:] = e_arr, e_lost
        for q in range(1, L + 1):
            emit(Z + q - 1, 0, T[q - 1])
    else:
        # queue 1..beta-1: the whole queue is the batch
        for q in range(1, min(beta, L + 1)):
            s = Z + q - 1
            emit(s, 0, X[q])
            batch[s], cyc[s], n_arr[s], n_lost[s] = q, t_ns[q], arr[q], H(q, L)
        # queue beta..L: a full batch, r = q - beta stay; one kernel, shifted
        xb = X[beta]
        kk = np.nonzero(xb > TINY)[0]
        r = np.arange(0, L - beta + 1)
        R, KK = np.meshgrid(r, kk, indexing="ij")
        dst = R + KK
        ok = dst < L
        s_of = Z + beta - 1 + R                      # state index of queue beta + r
        rows.append(s_of[ok])
        cols.append(np.where(dst[ok] == 0, 0, Z + dst[ok] - 1))
        vals.append(np.broadcast_to(xb[kk], R.shape)[ok])
        top = L - r                                  # P(N >= L - r) goes to L
        tail = np.where(top <= K, G[beta, np.minimum(top, K)], 0.0)
        keep = tail > TINY
        rows.append(Z + beta - 1 + r[keep])
        cols.append(np.full(keep.sum(), Z + L - 1))
        vals.append(tail[keep])
        sb = Z + beta - 1 + r
        batch[sb], cyc[sb], n_arr[sb] = beta, t_ns[beta], arr[beta]
        n_lost[sb] = np.where(top + 1 <= K, Hs[beta, np.minimum(top + 1, K + 1)],
                              0.0)
    # empty queue
    if spins is None:
        emit(0, 0, X[0])
        cyc[0], n_arr[0], n_lost[0] = t_ns[0], arr[0], H(0, L)
    else:
        for c in range(Z):
            s = c
            cyc[s], n_arr[s], n_lost[s] = t_idle, a_idle, h_idle
            x0 = x_idle.copy()
            p0 = x0[0]
            x0[0] = 0.0
            emit(s, 0, x0)
            if c < spins:
                if p0 > TINY:
                    rows.append(np.array([s]))
                    cols.append(np.array([c + 1]))
                    vals.append(np.array([p0]))
                continue
            # The sleeping read: nothing came during it, so the worker sleeps
            # until the next arrival, wakes w later and finds that arrival's
            # burst plus the ones that came meanwhile (counted from an
            # arrival): packets g * (g^{*N(w)}), mixed over the wake-up's
            # distribution: P(N >= k) = sum_w P(w) P(N(w) >= k).
            w = w_slots
            if w > 0:
                Cw = count_ccdf(a_long[:w], a_long[:w], w)
                y = Cw @ wake_pmf
                y[:-1] -= y[1:].copy()
                y = np.maximum(y, 0.0)
            else:
                y = wake_pmf[:1].copy()          # the short wake-ups' share
            y = spread(y[None, :], g)[0]
            y = np.convolve(y, g)                # the burst that woke it
            for npk, pr in wake_long:
                k = int(round(npk + p.burst_mean))
                if k >= len(y):
                    y = np.concatenate((y, np.zeros(k + 1 - len(y))))
                y[k] += pr
            emit(s, 0, y, scale=p0)
            ey = float(np.sum(np.arange(len(y)) * y))
            n_arr[s] = a_idle + p0 * ey
            n_lost[s] = h_idle + p0 * float(np.sum(
                np.maximum(np.arange(len(y)) - L, 0) * y))
            # Its length: arrivals / rate. The model counts arrivals from a
            # random phase, which a sleep that ends at an arrival is not;
            # this keeps time and packets consistent (exact for geometric).
            cyc[s] = n_arr[s] / (p.rate * 1e-9)
    P = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                  np.concatenate(cols))),
                          shape=(n, n))
    info = {"mu_slots": mu, "arrival_cv": math.sqrt(a_var) / mu,
            "burst": p.burst, "burst_mean": p.burst_mean,
            "service_cv": [float(math.sqrt(x) / x) if p.service_dist ==
                           "poisson" else 0.0 for x in (m[1], m[beta])],
            "arrival_counts_max": K, "window_slots": nwin, "states": n,
            "Z": Z}
    return P, batch, cyc, n_arr, n_lost, info


def solve(P, tol=TOL, max_iter=MAX_ITER, solver="auto"):
    """Fixed point q = qP of eq. (1), from an empty queue. Returns q and a
    report: method, iterations, last L1 change, converged."""
    n = P.shape[0]
    PT = P.T.tocsr()
    rep = {"method": solver, "tol": tol, "iterations": 0, "change": None,
           "converged": False}
    q = np.zeros(n)
    q[0] = 1.0
    if solver in ("auto", "iterate"):
        limit = max_iter if solver == "iterate" else min(max_iter, AUTO_ITER)
        hist = []
        for it in range(1, limit + 1):
            q1 = PT @ q
            q1 /= q1.sum()
            ch = float(np.abs(q1 - q).sum())
            q = q1
            if ch < tol:
                rep.update(iterations=it, change=ch, converged=True,
                           method="iterate")
                return q, rep
            hist.append(ch)
            # auto: give up early when the change shrinks too slowly to
            # reach tol within the budget (a slowly mixing chain)
            if solver == "auto" and it >= 200 and it % 50 == 0:
                rho = (hist[-1] / hist[-51]) ** (1 / 50.0) \
                    if hist[-51] > 0 else 1.0
                need = math.log(tol / ch) / math.log(rho) \
                    if 0 < rho < 1 else float("inf")
                if need > limit - it:
                    rep["contraction"] = rho
                    limit = it
                    break
        rep.update(iterations=limit, change=ch)
        if solver == "iterate":
            return q, rep
    qd, err = direct(PT, q)
    rep["method"] = "iterate+direct" if rep["iterations"] else "direct"
    if err:
        rep["error"] = err
        return q, rep
    ch = float(np.abs(PT @ qd - qd).sum())
    rep.update(residual=ch, converged=ch < tol)
    if rep["iterations"] == 0:
        rep["change"] = ch
    return qd, rep


def direct(PT, guess):
    """Solves (P^T - I) q = 0 with one equation replaced by q[m] = 1, as a
    banded system (from queue i the next is at least i - beta and at most
    i + K). m must carry real probability, or the system is numerically
    singular: try the most likely state of the guess, the full and the empty
    queue, then pin the most likely state of the first solution found."""
    from scipy.linalg import solve_banded
    n = PT.shape[0]
    A = (PT - sparse.identity(n, format="csr")).tocoo()

    def pinned(m):
        keep = A.row != m
        r = np.append(A.row[keep], m)
        c = np.append(A.col[keep], m)
        v = np.append(A.data[keep], 1.0)
        lo = int(max(0, (r - c).max()))
        up = int(max(0, (c - r).max()))
        ab = np.zeros((lo + up + 1, n))
        np.add.at(ab, (up + r - c, c), v)
        b = np.zeros(n)
        b[m] = 1.0
        try:
            with np.errstate(all="ignore"):
                q = solve_banded((lo, up), ab, b, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            return None
        if not np.all(np.isfinite(q)) or q.sum() <= 0:
            return None
        q = np.maximum(q, 0.0)
        return q / q.sum()

    best, best_res = None, float("inf")
    for m in dict.fromkeys((int(np.argmax(guess)), n - 1, 0)):
        q = pinned(m)
        if q is None:
            continue
        m2 = int(np.argmax(q))
        if m2 != m:
            q2 = pinned(m2)
            q = q2 if q2 is not None else q
        res = float(np.abs(PT @ q - q).sum())
        if res < best_res:
            best, best_res = q, res
        if res < 1e-12:
            break
    if best is None:
        return None, "direct solve failed: the chain has no unique " \
            "stationary distribution"
    return best, None


def predict(p, tol=TOL, max_iter=MAX_ITER, solver="auto"):
    P, batch, cyc, n_arr, n_lost, info = build_chain(p)
    q, rep = solve(P, tol, max_iter, solver)
    beta = p.beta
    if batch.ndim == 2:                          # a batch pmf per state
        v = q @ batch
    else:
        v = np.zeros(beta + 1)
        np.add.at(v, batch.astype(int), q)
    e_arr = float(q @ n_arr)
    e_cyc = float(q @ cyc)
    loss = float(q @ n_lost) / e_arr if e_arr > 0 else 0.0
    loss = min(max(loss, 0.0), 1.0)
    mean_batch = float(np.arange(beta + 1) @ v)
    Z = info["Z"]
    busy = cyc - info["idle_ns"] if "idle_ns" in info else cyc
    if "state_queue" in info:                    # paced: (queue, phase)
        queue = np.bincount(info["state_queue"], q, p.L + 1)
    else:
        queue = np.concatenate(([q[:Z].sum()], q[Z:]))
    res = Result(
        distribution=v, mean_batch=mean_batch, loss=loss,
        throughput_pps=mean_batch / e_cyc * 1e9,
        offered_pps=p.rate,
        arrival_rate_check_pps=e_arr / e_cyc * 1e9,
        busy_fraction=float(q[Z:] @ busy[Z:]) / e_cyc,
        mean_cycle_ns=e_cyc,
        mean_queue_at_poll=float(np.arange(p.L + 1) @ queue),
        p_queue_full=float(queue[-1]),
        solver=rep, info=info)
    return res


# --------------------------------------------------- the sender's pauses

def with_pauses(r, pauses, trial_s, arrived):
    """A prediction r made at the rate the sender had while it sent (the
    trial's arrivals over its time less its pauses), for the whole trial
    with the pauses: pauses holds pairs (count, ns) of pauses by length (a
    bucket each, the generator's; docs/model.md, "The generator's pauses").

    Nothing arrives in a pause. The server goes on with what the ring holds
    when it starts, Q (the model's mean queue at a poll), for up to Q / X at
    its throughput X, then idles. Where the ring overflows outside the
    pauses, each packet served in a pause leaves room for one that would
    have been lost: loss = max(0, loss - S / arrived), where S is the sum
    over pauses of min(Q, X P). Busy: its share of the sending time, plus
    min(P, Q / X) per pause, over the trial. Pauses too short to empty the
    ring give back the loss at the trial's mean rate; long ones idle the
    server, as the trial's sender did."""
    total = sum(ns for _, ns in pauses) / 1e9
    if not pauses or total <= 0 or total >= trial_s or arrived <= 0:
        return r
    x, q = r["throughput_pps"], r["mean_queue_at_poll"]
    served = work = 0.0
    for n, ns in pauses:
        if n:
            held = ns / n / 1e9
            served += n * min(q, x * held)
            work += n * min(held, q / x if x > 0 else 0.0)
    out = Result(r)
    out["loss"] = max(r["loss"] - served / arrived, 0.0)
    out["busy_fraction"] = (r["busy_fraction"] * (trial_s - total) + work) / trial_s
    return out


# ------------------------------------------------ a capacity that varies

# The probability bins of capacity_nodes(): finest in the lower tail,
# where a core slower than the rate loses about 1 - capacity/rate and a
# loss target of 1e-3 is decided; the upper ones lose nothing at such a
# rate.
SPREAD_EDGES = (0.0, 0.005, 0.03, 0.1, 0.3, 0.6, 1.0)
SPREAD_MIN = 3          # samples a predictive spread needs


def capacity_nodes(caps):
    """The capacity of a new interval, predicted from the capacities of n
    intervals seen (a sample of the environment): log capacity normal with
    unknown mean and variance, so that a new draw's predictive law is
    Student t with n - 1 degrees of freedom, located at the mean of the
    logs, scaled by their standard deviation x sqrt(1 + 1/n). Returns
    (summary, nodes): the law cut into the bins of SPREAD_EDGES, a node
    per bin at the quantile of its middle, weighted by its probability (a
    quadrature of the expected loss over the law)."""
    c = np.asarray(caps, float)
    n = len(c)
    if n < SPREAD_MIN or not np.all(np.isfinite(c)) or np.any(c <= 0):
        raise ModelError("a predictive spread of capacity needs at least %d "
                         "positive capacities, got %s"
                         % (SPREAD_MIN, list(caps)))
    x = np.log(c)
    mu, sd = float(x.mean()), float(x.std(ddof=1))
    scale = sd * math.sqrt(1 + 1.0 / n)
    law = sstats.t(n - 1, loc=mu, scale=scale) if scale > 0 else None

    def q(p):
        return math.exp(law.ppf(p)) if law else math.exp(mu)
    nodes = [{"quantile": (lo + hi) / 2, "weight": hi - lo,
              "capacity_pps": q((lo + hi) / 2)}
             for lo, hi in zip(SPREAD_EDGES[:-1], SPREAD_EDGES[1:])]
    return {"samples": n, "dof": n - 1, "log_mean": mu, "log_sd": sd,
            "log_scale": scale, "median_pps": q(0.5),
            "p01_pps": q(0.01)}, nodes


# ------------------------------------------------------------ comparisons

def jsd(p, q):
    """Jensen-Shannon divergence (natural log, as in the paper)."""
    p = np.asarray(p, float)
    q = np.asarray(q, float)
    n = max(len(p), len(q))
    p = np.pad(p, (0, n - len(p)))
    q = np.pad(q, (0, n - len(q)))
    m = 0.5 * (p + q)
    out = 0.0
    for x in (p, q):
        nz = x > 0
        out += 0.5 * np.sum(x[nz] * np.log(x[nz] / m[nz]))
    return float(max(out, 0.0))


def rel_error(measured, model):
    return abs(measured - model) / measured if measured else float("nan")


def normalise(counts):
    c = np.asarray(counts, float)
    s = c.sum()
    return c / s if s > 0 else c
