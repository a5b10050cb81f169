"""Fast exact grouping for every objective: bisection on the bottleneck value with an ``O(k n)``
reachability probe, and a branch and bound over the threshold with ``O(k n log n)`` window DPs
(``grouping`` family, seed 003; ours, proven against :mod:`.dp`, the interval MILP and brute force
in ``tests/solvers/grouping/test_threshold.py``).

Every objective is ``sum_i f(G_i) + lambda_m max_i g(G_i) + const`` over contiguous partitions into
``m`` groups (digest 003 §5.3 table; :class:`splitopt.models.grouping.IntervalCosts`). For a
threshold ``theta`` the groups ending at part boundary ``j`` that satisfy ``g <= theta`` are the
intervals ``[a, j)`` with ``a`` in a *window* ``[lo(j), j-1]``: ``g(a, j) = T(a, j) (+ D_j)`` is
non-increasing in ``a`` because times are nonnegative (``D_j``, the transfer of a stage ending at
``j``, does not depend on ``a``). Hence, per objective:

* ``bottleneck`` (``f = 0``): the optimum is the smallest candidate value ``g(a, b)`` at which
  ``m`` groups fit; feasibility is monotone in ``theta``, so a bisection over the sorted candidate
  values needs ``log2(n^2/2)`` probes, each an exact reachability DP ``reach_m(j) = any reach_{m-1}
  over the window of j`` in ``O(k n)`` with prefix sums. (The greedy probe of
  :func:`.linear_partition.greedy_probe` is exact only without transfers, digest §5.3 method 3;
  the window probe is exact with them.)
* ``perf`` (thesis §5.2 Perf through the closed form of digest §1.6a, ``f = g = w = T + D``,
  ``lambda = R - 1``): ``sum_i w_i = T_total + sum of D over the group ends``, so the min-sum for a
  threshold is ``H_m(j) = D_j + min of H_{m-1} over the window of j``: a range minimum (sparse
  table), ``O(n log n)`` per layer.
* ``thesis_cost`` (thesis Defs. 4.2-4.5 and the Alg. 3 objective, digest §1.6f; ``g = T``,
  ``lambda_m = delta m / T_total``): ``f(a, j) = alpha T/T_tot + beta s_{j-1}/S_tot - gamma
  log(1 + C(a, j)) / log(1 + C_tot)``. The first two terms are separable and ``-log(1 + .)`` is
  convex, so ``f`` satisfies the quadrangle (Monge) inequality, also with the window's infinite
  entries (both window ends are non-decreasing in ``j`` when ``g = T``); the leftmost minimiser is
  then non-decreasing in ``j`` and each layer is a divide-and-conquer row-minima pass,
  ``O(n log n)``, vectorised level by level.

When the windows are narrow (``k n w <= DENSE_CELLS`` with ``w`` the widest window, the usual case
near the min-max threshold: ``w`` is about ``n / k``), each layer is instead one dense minimum over
the ``(n+1, w)`` window entries, gathered once per threshold: ``O(k n w)``, no structure assumed.

The threshold search (``perf``, ``thesis_cost``): with ``F_m(theta)`` the min-sum under the
threshold, the optimum is ``min over theta, m of F_m(theta) + lambda_m theta + const`` over the
candidate values ``theta >= theta*`` (the min-max optimum; digest §5.3 method 4). ``F_m`` is
non-increasing, so over a range ``(theta_l, theta_h]`` of candidates the value is at least
``F_m(theta_h) + lambda_m theta_{l+1}``; a range whose two ends have equal ``F`` is flat. A best-first
branch and bound bisects the ranges that can still beat the incumbent. Each evaluation also yields
a partition whose own maximum ``mu <= theta`` is a real incumbent, and ``F`` is constant on
``[mu, theta]`` (that partition stays feasible), which removes that sub-range at once. This replaces
the scan over every threshold of :mod:`.dp` (``O(n^2)`` thresholds, ``O(k n^2)`` each), which took
minutes at ``n = 1000`` (``benchmarks/grouping_scale.py``).

Returns group sizes (or ``(sizes, info)``); the objective is recomputed by the evaluator. Ties
under ``at_most_k``: the smallest optimal ``m`` (as :mod:`.dp`).
"""

from __future__ import annotations

import bisect
import heapq
import math

import numpy as np

from splitopt.models.grouping import interval_costs

INF = np.inf
#: largest ``k n w`` (layers x ends x window width) evaluated by the dense window gather; wider
#: windows use the range-minimum (perf) or Monge (thesis_cost) layers
DENSE_CELLS = 4_000_000


def _windows(g: np.ndarray, theta: float, multi: bool) -> np.ndarray:
    """``lo[j]`` (``j = 0..n``): the first start ``a`` with ``g[a, j] <= theta`` (``j`` when none),
    by a vectorised bisection down each column (non-increasing in ``a`` for ``a < j``). With
    ``multi`` the single interval ``[0, n)`` (its own transfer convention) is excluded."""
    n = g.shape[0] - 1
    j = np.arange(n + 1)
    lo = np.zeros(n + 1, dtype=np.int64)
    if multi:
        lo[n] = 1
    hi = j.copy()
    while True:
        act = lo < hi
        if not act.any():
            return lo
        mid = (lo + hi) // 2
        ok = g[mid, j] <= theta
        hi = np.where(act & ok, mid, hi)
        lo = np.where(act & ~ok, mid + 1, lo)


def _reach(lo: np.ndarray, k_max: int) -> np.ndarray:
    """``R[m, j]``: parts ``0..j-1`` can be cut into exactly ``m`` allowed groups."""
    n = lo.size - 1
    R = np.zeros((k_max + 1, n + 1), dtype=bool)
    R[0, 0] = True
    j = np.arange(n + 1)
    for m in range(1, k_max + 1):
        cs = np.concatenate([[0], np.cumsum(R[m - 1])])  # cs[x] = sum R[m-1, :x]
        R[m] = (cs[j] - cs[np.minimum(lo, j)]) > 0
        R[m, 0] = False
    return R


def _range_min(arr: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``min(arr[a_i .. b_i - 1])`` for every ``i`` (``inf`` where ``a_i >= b_i``), sparse table."""
    L = max(1, int(np.ceil(np.log2(arr.size + 1))))
    sp = [arr]
    for lev in range(1, L + 1):
        prev = sp[-1]
        h = 1 << (lev - 1)
        nxt = prev.copy()
        nxt[:-h] = np.minimum(prev[:-h], prev[h:]) if h < prev.size else prev[:-h]
        sp.append(nxt)
    ln = b - a
    ok = ln > 0
    lev = np.zeros_like(ln)
    lev[ok] = np.floor(np.log2(ln[ok])).astype(np.int64)
    out = np.full(a.size, INF)
    tbl = np.stack(sp)
    ai, bi, li = a[ok], b[ok], lev[ok]
    out[ok] = np.minimum(tbl[li, ai], tbl[li, bi - (1 << li)])
    return out


def _monge_layer(prev: np.ndarray, f: np.ndarray, lo: np.ndarray, jr: tuple[int, int]) -> np.ndarray:
    """``new[j] = min over a in [lo[j], j-1] of prev[a] + f[a, j]`` for ``j`` in ``jr`` (inclusive),
    by divide and conquer on the monotone leftmost minimiser, one vectorised pass per level."""
    n = prev.size - 1
    new = np.full(n + 1, INF)
    jl_, jh_ = jr
    if jl_ > jh_:
        return new
    segs = (np.array([jl_]), np.array([jh_]), np.array([0]), np.array([n - 1]))
    while segs[0].size:
        jl, jh, ol, oh = segs
        mid = (jl + jh) // 2
        a = np.maximum(ol, lo[mid])
        b = np.minimum(oh, mid - 1)
        ln = np.maximum(b - a + 1, 0)
        start = np.cumsum(ln) - ln
        seg = np.repeat(np.arange(mid.size), ln)
        i = a[seg] + (np.arange(int(ln.sum())) - start[seg])
        v = prev[i] + f[i, mid[seg]]
        ne = ln > 0
        smin = np.full(mid.size, INF)
        opt = a.copy()
        if ne.any():
            smin[ne] = np.minimum.reduceat(v, start[ne])
            hit = np.flatnonzero(v == smin[seg])
            first = hit[np.searchsorted(hit, start[ne])]
            opt[ne] = i[first]
        new[mid] = smin
        fin = np.isfinite(smin)
        # children: [jl, mid-1] with minimiser <= opt, [mid+1, jh] with minimiser >= opt (an
        # infeasible middle row passes the parent's range on)
        lo_o = np.where(fin, opt, oh)
        hi_o = np.where(fin, opt, ol)
        L = jl <= mid - 1
        Rr = mid + 1 <= jh
        segs = (np.concatenate([jl[L], (mid + 1)[Rr]]), np.concatenate([(mid - 1)[L], jh[Rr]]),
                np.concatenate([ol[L], hi_o[Rr]]), np.concatenate([lo_o[L], oh[Rr]]))
    return new


class _Oracle:
    """``F_m(theta)`` for every ``m <= k_max`` and the optimal partitions behind them."""

    def __init__(self, instance, ic):
        self.inst, self.ic = instance, ic
        self.n = ic.n
        self.obj = instance.objective
        if self.obj == "perf":
            # D_j, the transfer of a stage ending at j (m >= 2), as IntervalCosts computes it
            D = np.zeros(self.n + 1)
            if instance.transfers:
                D[1:] = instance.s_array / instance.bandwidth_bytes_per_s
                if not instance.charge_final_transfer:
                    D[self.n] = 0.0
            self.D = D
            self.Ttot = float(instance.T_total)

    def layers(self, theta: float, k_max: int):
        n, g = self.n, self.ic.g
        lo = _windows(g, theta, True)
        Fs = [np.concatenate([[0.0], np.full(n, INF)])]
        R = _reach(lo, k_max)
        j = np.arange(n + 1)
        wmax = int(np.max(j - lo))
        if k_max * (n + 1) * wmax <= DENSE_CELLS:  # narrow windows: one gather per layer
            idx = j[:, None] - np.arange(1, wmax + 1)[None, :]
            ok = idx >= lo[:, None]
            idx = np.where(ok, idx, 0)
            fw = self.D[:, None] if self.obj == "perf" else self.ic.f[idx, j[:, None]]
            fw = np.where(ok, fw, INF)
            for m in range(1, k_max + 1):
                new = np.min(Fs[-1][idx] + fw, axis=1)
                new[~R[m]] = INF
                new[0] = INF
                Fs.append(new)
            return lo, Fs
        for m in range(1, k_max + 1):
            prev = Fs[-1]
            if self.obj == "perf":
                new = self.D + _range_min(prev, lo, j)
            else:
                fin = np.flatnonzero(R[m])
                new = _monge_layer(prev, self.ic.f, lo, (int(fin[0]), int(fin[-1])) if fin.size else (1, 0))
            new[~R[m]] = INF
            new[0] = INF
            Fs.append(new)
        return lo, Fs

    def total(self, Fs, m: int) -> float:
        v = Fs[m][self.n]
        return self.Ttot + v if self.obj == "perf" else v

    def partition(self, lo, Fs, m: int) -> list[int]:
        n, f = self.n, self.ic.f
        sizes, j = [], n
        for mm in range(m, 0, -1):
            a = np.arange(lo[j], j)
            if self.obj == "perf":
                v = Fs[mm - 1][a] + self.D[j]
            else:
                v = Fs[mm - 1][a] + f[a, j]
            i = int(a[int(np.argmin(v))])
            sizes.append(j - i)
            j = i
        return sizes[::-1]


def _minmax(ic, ms, k_max) -> tuple[float, np.ndarray]:
    """The min-max value over ``ms`` by bisection over the candidate values, and the candidates."""
    g = ic.g
    n = ic.n
    vals = g[:, 1:][np.isfinite(g[:, 1:])]
    if n >= 2:  # [0, n) belongs to m = 1 only
        vals = np.concatenate([g[1:, 1:][np.isfinite(g[1:, 1:])], g[:1, 1:n][np.isfinite(g[:1, 1:n])]])
    cand = np.unique(vals)
    want = [m for m in ms if m >= 2]
    if not want or cand.size == 0:
        return INF, cand

    def feasible(th):
        R = _reach(_windows(g, th, True), k_max)
        return any(R[m, n] for m in want)

    hi = cand.size - 1
    if not feasible(cand[hi]):
        return INF, cand
    # the first feasible candidate below the last (which is feasible): the same probes as a hand loop
    lo = bisect.bisect_left(range(hi), True, key=lambda i: bool(feasible(cand[i])))
    return float(cand[lo]), cand


def solve(instance, return_info: bool = False):
    """Exact optimum of any grouping objective (module docstring); group sizes or ``(sizes, info)``."""
    ic = interval_costs(instance)
    n = ic.n
    ms = list(instance.group_counts)
    k_max = max(ms)
    info = {"evaluations": 0}
    best = [INF, None]  # value, sizes

    def consider(sizes):
        v = ic.value(sizes)
        if v < best[0] - 1e-12 * max(1.0, abs(best[0])) or best[1] is None:
            best[:] = [v, sizes]

    if 1 in ms:
        consider([n])
    theta_lo, cand = _minmax(ic, ms, k_max)
    multi = [m for m in ms if m >= 2]
    if multi and math.isfinite(theta_lo):
        cand = cand[np.searchsorted(cand, theta_lo):]
        info["thresholds_total"] = int(cand.size)
        if instance.objective == "bottleneck":
            R = _reach(_windows(ic.g, theta_lo, True), k_max)
            m = min(m for m in multi if R[m, n])
            consider(_bottleneck_partition(ic, theta_lo, m))
        else:
            _threshold_bnb(instance, ic, cand, multi, k_max, consider, best, info)
    if return_info:
        return best[1], info
    return best[1]


def _bottleneck_partition(ic, theta, m) -> list[int]:
    """A partition into exactly ``m`` groups with every ``g <= theta`` (reachability backtrack)."""
    g = ic.g
    n = ic.n
    lo = _windows(g, theta, m >= 2)
    R = _reach(lo, m)
    sizes, j = [], n
    for mm in range(m, 0, -1):
        a = np.arange(lo[j], j)
        i = int(a[np.flatnonzero(R[mm - 1][a])[0]])
        sizes.append(j - i)
        j = i
    return sizes[::-1]


def _threshold_bnb(instance, ic, cand, ms, k_max, consider, best, info) -> None:
    orc = _Oracle(instance, ic)
    lam = {m: ic.lam(m) for m in ms}
    const = ic.const
    memo: dict[int, np.ndarray] = {}

    def evaluate(idx: int) -> np.ndarray:
        """``F_m(cand[idx])`` per ``m`` in ``ms``; records the partitions as incumbents; returns F."""
        if idx in memo:
            return memo[idx]
        info["evaluations"] += 1
        th = float(cand[idx])
        lo, Fs = orc.layers(th, k_max)
        F = np.array([orc.total(Fs, m) for m in ms])
        vals = F + np.array([lam[m] for m in ms]) * th + const
        r = int(np.argmin(vals))
        if math.isfinite(vals[r]):
            sizes = orc.partition(lo, Fs, ms[r])
            consider(sizes)
            if len(ms) == 1:  # F is constant on [mu, theta] for the partition's own maximum mu
                mu = max(ic.g[a, b] for a, b in _bounds(sizes))
                j = int(np.searchsorted(cand, mu))
                if j < idx and cand[j] == mu:
                    memo[j] = F
        memo[idx] = F
        return F

    lams = np.array([lam[m] for m in ms])

    def lb(l_: int, h: int, Fh: np.ndarray) -> float:
        return float(np.min(Fh + lams * cand[l_ + 1])) + const

    top = cand.size - 1
    F_top = evaluate(top)
    F_0 = evaluate(0)
    heap = []

    def push(l_, h):
        if h - l_ <= 1:
            return
        Fl, Fh = memo[l_], memo[h]
        if np.array_equal(Fl, Fh):
            return
        v = lb(l_, h, Fh)
        if v < best[0] - 1e-12 * max(1.0, abs(best[0])):
            heapq.heappush(heap, (v, l_, h))

    push(0, top)
    del F_top, F_0
    while heap:
        v, l_, h = heapq.heappop(heap)
        if v >= best[0] - 1e-12 * max(1.0, abs(best[0])):
            break
        mid = (l_ + h) // 2
        evaluate(mid)
        # the flat range [mu, mid] may have been recorded: split at the smallest known index
        known = [x for x in memo if l_ < x <= mid]
        left_end = min(known) if known else mid
        push(l_, left_end)
        push(mid, h)


def _bounds(sizes):
    out, a = [], 0
    for s in sizes:
        out.append((a, a + s))
        a += s
    return out


__all__ = ["solve"]
