"""The configuration LP's pricings with memory exact (:class:`_MemoryPricing`, a part of
:class:`~.configlp._ColGen`): the memory row's Lagrangian over the DP (:meth:`_memory_price`), the
DP with memory exact (:meth:`_memory_dp_price`) and the pricing MILP with its memory row
(:meth:`_milp_price`). Split out of :mod:`.configlp` (2026-11-29: modules under 600 lines); the
mathematics is in :mod:`splitopt.solvers.placement.colgen`'s docstring (Tarnawski et al., NeurIPS
2020, §4; the configuration LP is ours)."""

from __future__ import annotations

import math
import time

import numpy as np

from splitopt.solvers.placement.pricing import _Pricer

IMPROVING = True
"""Where the pricing MILP prices (:meth:`_MemoryPricing._milp_price`), every improving solution HiGHS
found of profit above 1 becomes a column, not the best alone; ``False``: the best alone."""

MEMORY_DP_POINTS = 2e7
"""The most front points :meth:`_MemoryPricing._memory_dp_price` handles before it leaves the pricing to
the MILP (its fronts of load, memory and profit are larger than the DP's without memory)."""

MEMORY_ROUNDS = 8
"""The most DP pricings :meth:`_MemoryPricing._memory_price` spends on one pricing's multiplier search."""


class _MemoryPricing:
    """The pricings of :class:`~.configlp._ColGen` where memory could bind (its attributes: ``d``,
    ``V``, ``dp``, ``pricer``, ``msize``, ``mu``, ``have``, ``ncols``, ``pricing_limit``, and its
    ``_at_root``, ``_fitting`` and ``_admit``)."""

    def _memory_price(self, point: np.ndarray, deadline: float | None, keep: int = 0):
        """``(upper bound on max point(S) over the sets that fit in memory, sets)`` where memory
        could bind (ours). For a multiplier ``mu >= 0`` of the memory row ``m(S) = size(S) / cap
        <= 1``, ``u(mu) = mu + max_S (point - mu m)(S)`` over the sets of load ``<= V`` (the DP,
        memory-free) is at least ``point(S)`` for every set that fits (Lagrangian duality), so
        every ``u(mu)`` is a valid bound and the smallest found is returned.

        Lazily: first ``mu = 0`` (the memory-free pricing, one DP as without memory); that is exact
        where its best set fits, and enough where some new set that fits prices above 1 (a column
        to add: the bound can wait). Only where none does (the column generation would stall)
        is ``u`` minimised over ``mu``, by Kelley's cutting planes, every set priced being the line
        ``point(S) + mu (1 - m(S))`` under ``u`` (the empty set's line ``mu`` among them): until the
        best ``u`` found meets the lines' lower envelope (then no multiplier does better, within
        1e-9), :data:`MEMORY_ROUNDS` pricings, or the deadline. Measured 2026-11-27, the seeded
        Inception-like 300-node graph (non-contiguous): minimising at every pricing took the first
        value of :func:`~.colgen.relaxation` from 2.6 to 23 s. Returns the sets of every pricing
        (the caller keeps those that fit). ``keep > 0`` (the heuristic pricing, no bound): the one
        pricing at ``mu = 0``."""
        m = self.msize
        v, sets = self.dp.price(point, self.ncols, deadline, keep=keep, floor=1.0)
        if not math.isfinite(v) or keep or not sets or m[sets[0]].sum() <= 1.0:
            return v * (1 + 1e-12), sets
        best = v * (1 + 1e-12)
        if any(m[S].sum() <= 1.0 and point[S].sum() > 1 + 1e-9 and S.tobytes() not in self.have for S in sets):
            return best, sets
        found = {S.tobytes(): S for S in sets}
        lines = [(0.0, 1.0)] + [(float(point[S].sum()), 1.0 - float(m[S].sum())) for S in sets]
        mu = self.mu if self.mu > 0 else _envelope_min(lines)[0]
        for _ in range(MEMORY_ROUNDS - 1):
            v, sets = self.dp.price(point - mu * m, self.ncols, deadline, floor=1.0 - mu)
            if not math.isfinite(v):
                break  # the deadline passed: the bound so far holds
            u = v + mu + 1e-12 * (abs(v) + mu)  # the profits' rounding
            if u < best:
                best, self.mu = u, mu
            for S in sets:
                key = S.tobytes()
                if key not in found:
                    found[key] = S
                    lines.append((float(point[S].sum()), 1.0 - float(m[S].sum())))
            if not sets:
                break  # priced out at this multiplier: u = 1, no column above 1
            mu, env = _envelope_min(lines)
            if best - env <= 1e-9 * max(best, 1.0):
                break
        return best, list(found.values())

    def _memory_dp_price(self, pi: np.ndarray, ub, deadline: float | None):
        """``(bound, new columns)`` from the DP with memory exact (:meth:`_PathDP.price` with
        ``memory``; ours, 2026-11-29) at the master's duals ``pi``, where the Lagrangian of the
        memory row leaves a gap: the maximum of ``pi(S)`` over the sets that fit (or 1 where none
        exceeds 1), and its sets that fit and are new; ``None`` where its fronts pass
        :data:`MEMORY_DP_POINTS` or the deadline comes first (the pricing MILP then). Unlike the
        MILP it prices convex sets as such and honours a branch-and-price node's pairs (dives never price with memory).
        Measured on the seeded BERT-like 300-node graph (non-contiguous, 143 classes, memory
        binding): the pricing MILP took 3.3-5.4 s a call, six calls to prove 0.281573 ms."""
        v, sets = self.dp.price(pi, self.ncols, deadline, floor=1.0, budget=MEMORY_DP_POINTS, memory=self.msize)
        if not math.isfinite(v):
            return None
        fresh = self._admit([S for S in sets if pi[S].sum() > 1 + 1e-9])
        return (min(ub[0], v * (1 + 1e-12)), ub[1]), fresh

    def _milp_price(self, pi: np.ndarray, ub, deadline: float | None):
        """``(bound, new columns)`` from the pricing MILP (:class:`_Pricer`, memory row included)
        at the master's duals ``pi``, where the Lagrangian of the memory row leaves a gap: its dual
        bound (the smaller of it and ``ub``'s) and its set where that fits and is new; ``(None,
        [])`` where it gives nothing in the time; for convex columns its bound only (it prices every
        set). At the root only (a node's pairs and a dive's
        placed classes are not in the MILP: its bound would still hold, its set might not be
        admitted)."""
        if not self._at_root():
            return ub, []
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0.05:
            return None, []
        if self.pricer is None:
            self.pricer = _Pricer(self.d, self.V)
        lim = self.pricing_limit if left is None else min(self.pricing_limit, left)
        val, bound, S = self.pricer.price(pi, lim)
        if not math.isfinite(bound):
            return None, []
        fresh = []
        # (the MILP ignores convexity: its bound holds for convex sets too, its set may not be one)
        if S is not None and val > 1 + 1e-9 and not self.dp.convex:
            fresh = self._admit([S] + self.pricer.improving(pi) if IMPROVING else [S])
        return (min(ub[0], bound * (1 + 1e-9)), ub[1]), fresh



def _envelope_min(lines) -> tuple[float, float]:
    """``(mu, f(mu))`` minimising ``f(mu) = max_i a_i + b_i mu`` over ``mu >= 0`` for the lines
    ``(a_i, b_i)`` (one of slope 1 among them, so the minimum exists): bisection on the sign of the
    slope of the line on top (``f`` is convex)."""
    a = np.array([ln[0] for ln in lines])
    b = np.array([ln[1] for ln in lines])

    def f(mu):
        vals = a + b * mu
        j = int(np.argmax(vals))
        return vals[j], b[j]

    at0, slope0 = f(0.0)
    if slope0 >= 0:
        return 0.0, at0
    # every line of negative slope meets the slope-1 line ``mu`` by mu = a / (1 - b)
    neg = b < 0
    hi = float(np.max(np.maximum(a[neg], 0.0) / (1.0 - b[neg]))) * 1.001 + 1e-12
    lo = 0.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if f(mid)[1] < 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * max(hi, 1.0):
            break
    mu = min((lo, hi), key=lambda x: f(x)[0])
    return mu, f(mu)[0]
