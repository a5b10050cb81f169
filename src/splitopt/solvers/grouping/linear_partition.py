"""Exact min-max grouping of a chain (``grouping`` family, ``objective="bottleneck"``).

Problem (digest 003 §5.3, P1 and P2): cut the chain of ``n`` parts into ``m`` contiguous groups
(exactly ``k``, or any ``m <= k`` with ``at_most_k``) minimising ``max_i g(G_i)`` with
``g = T`` (pure chains-on-chains partitioning, no transfers) or ``g = w = T + s_last/B`` (with
transfers). The thesis (Petkos 2025, Def. 4.1) calls the grouping problem NP-hard; digest §5.1 #1
shows it is polynomial, and these are two of the polynomial methods it lists:

* :func:`solve_dp` -- the "linear partition" DP ``M_m(j) = min_{i<j} max(M_{m-1}(i), g(i+1, j))``
  (digest §5.3 methods 2 and 3), ``O(k n^2)``, vectorised with numpy. Exact for P1 and P2 because
  the max recursion only needs interval-local costs.
* :func:`parametric_search` -- exact parametric search (digest §5.3 method 2, "parametric
  search"): binary search over the sorted distinct candidate values ``g(a, b)`` with a feasibility
  probe. Without transfers the probe is the greedy ``O(n)`` scan ("can the chain be cut into
  ``<= k`` intervals with ``T <= theta``?"); with transfers the greedy probe is **invalid**
  (``w(a, b)`` is not monotone in ``b``: a longer group can end at a smaller tensor, digest §5.3
  method 3), so a DP reachability probe over exactly ``m`` groups is used instead.

Both return group sizes; the objective is recomputed by the evaluator
(:func:`splitopt.models.grouping.evaluate`). Ties: among optimal groupings the smallest feasible
``m`` is returned under ``at_most_k``.
"""

from __future__ import annotations

import bisect

import numpy as np

from splitopt.errors import InstanceError
from splitopt.models.grouping import interval_costs


def _require_bottleneck(instance) -> None:
    if instance.objective != "bottleneck":
        raise InstanceError("objective", f"linear partition / parametric search solve objective='bottleneck' "
                                         f"only, got {instance.objective!r} (use algorithm 'dp')")


def minmax_tables(g: np.ndarray, k_max: int):
    """Min-max DP over a ``(n+1, n+1)`` interval matrix ``g`` (``inf`` = forbidden interval).

    Returns ``(M, arg)`` with ``M[m, j]`` = best bottleneck of covering parts ``0..j-1`` with
    exactly ``m`` groups and ``arg[m, j]`` the start of the last group.
    """
    n = g.shape[0] - 1
    M = np.full((k_max + 1, n + 1), np.inf)
    arg = np.zeros((k_max + 1, n + 1), dtype=np.int64)
    M[0, 0] = -np.inf  # empty prefix: neutral for max
    for m in range(1, k_max + 1):
        cand = np.maximum(M[m - 1][:, None], g)  # [i, j]
        arg[m] = np.argmin(cand, axis=0)
        M[m] = cand[arg[m], np.arange(n + 1)]
    M[0, 0] = np.inf
    return M, arg


def _backtrack(arg: np.ndarray, m: int, n: int) -> list[int]:
    sizes, j = [], n
    for mm in range(m, 0, -1):
        i = int(arg[mm, j])
        sizes.append(j - i)
        j = i
    assert j == 0
    return sizes[::-1]


def solve_dp(instance) -> list[int]:
    """Linear-partition DP, exact for the bottleneck objective (P1 / P2). ``O(k n^2)``."""
    _require_bottleneck(instance)
    ic = interval_costs(instance)
    n = ic.n
    M, arg = minmax_tables(ic.g, instance.k_max)
    ms = list(instance.group_counts)
    best = min(ms, key=lambda m: (M[m, n], m))
    return _backtrack(arg, best, n)


def greedy_probe(t: np.ndarray, theta: float) -> int | None:
    """Fewest groups covering the chain with every group sum ``<= theta`` (greedy left-to-right
    scan, optimal for nonnegative ``t``); ``None`` if a single part exceeds ``theta``."""
    count, acc = 1, 0.0
    for x in t:
        if x > theta:
            return None
        if acc + x > theta:
            count += 1
            acc = x
        else:
            acc += x
    return count


def reach_probe(g: np.ndarray, theta: float, ms: list[int]) -> int | None:
    """DP probe: the smallest ``m`` in ``ms`` such that the chain can be cut into exactly ``m``
    groups with every ``g <= theta`` (``None`` if none)."""
    n = g.shape[0] - 1
    ok = g <= theta
    reach = np.zeros(n + 1, dtype=bool)
    reach[0] = True
    want = set(ms)
    for m in range(1, max(ms) + 1):
        reach = (reach[:, None] & ok).any(axis=0)
        if m in want and reach[n]:
            return m
        if not reach.any():
            return None
    return None


def parametric_search(instance) -> list[int]:
    """Exact bottleneck by binary search over the distinct candidate stage values.

    The optimum equals some ``g(a, b)``; feasibility is monotone in ``theta``, so a binary search
    over the sorted candidates with ``O(log n)`` probes finds the smallest feasible one. The
    grouping is then reconstructed by the DP restricted to intervals with ``g <= theta*``.
    """
    _require_bottleneck(instance)
    ic = interval_costs(instance)
    n = ic.n
    g = ic.g
    cand = np.unique(g[np.isfinite(g)])
    ms = list(instance.group_counts)
    greedy_ok = not instance.transfers  # g = T, nonnegative: greedy probe is exact
    t = instance.t_array

    def feasible(theta: float) -> bool:
        if greedy_ok:
            c = greedy_probe(t, theta)
            # splitting a group never raises a max of nonnegative sums, so any m in [c, n] works
            return c is not None and any(c <= m <= n for m in ms)
        return reach_probe(g, theta, ms) is not None

    hi = len(cand) - 1
    # the first feasible candidate below the last (which is feasible): the same probes as a hand loop
    lo = bisect.bisect_left(range(hi), True, key=lambda i: bool(feasible(cand[i])))
    # The greedy probe sums t left to right while g holds prefix-sum differences: the two can
    # differ in the last bit (2.0 vs 2.0000000000000004), so the probe may accept a theta just
    # below the optimum as g computes it. Move up the (adjacent) candidates until the restricted DP,
    # which uses g itself, is feasible: that theta is the optimum exactly. Found by a hypothesis test.
    while True:
        theta = cand[lo]
        gm = np.where(g <= theta, g, np.inf)
        M, arg = minmax_tables(gm, instance.k_max)
        feasible_ms = [m for m in ms if np.isfinite(M[m, n])]
        if feasible_ms or lo == len(cand) - 1:
            break
        lo += 1
    best = min(feasible_ms, key=lambda m: (M[m, n], m))
    return _backtrack(arg, best, n)


__all__ = ["solve_dp", "parametric_search", "greedy_probe", "reach_probe", "minmax_tables"]
