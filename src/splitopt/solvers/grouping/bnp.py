"""Balanced Number Partitioning (BNP): the thesis's greedy top-down splitting, Algorithm 1.

Source: Petkos (2025), thesis §4.2-4.4, Algorithm 1 (BNP) and Algorithm 2 (Cost); digest 003
§1.3, §2.1. Starting from one group, each iteration tries every split position of every group and
applies the split with the largest

    cost_reduction = Cost(G) - (Cost(L) + Cost(R)) - delta * (max_h T_h / mean_h T_h - 1),

where the max/mean runs over the groups *after* the split (thesis Def. 4.5) and ``Cost`` is
Def. 4.3 ``alpha T/T_tot + beta s_last/S_tot - gamma log(1+C)/log(1+C_tot)``. Ties keep the first
candidate found (strict ``>``): lowest group index, then lowest split position (digest §5.2 #10).

As printed (the default, ``variant="paper"``):

* no acceptance test: the best split is always applied, even with a negative reduction
  (the prose / Def. 4.4 say "accept iff FinalCostReduction < 0"; digest §2.1, §5.1 #5);
* ``delta = 0.5`` hard-coded (digest §5.1 #6).

Corrections, each named:

* **k > n guard** (digest §5.1 #5): the printed loop never ends once every group is a single part
  (``best_group_idx`` stays -1). Here the loop stops and returns the ``n`` singletons, with
  ``info["stalled"]``; callers that need exactly ``k`` groups get fewer.
* ``variant="corrected"``: ``delta`` from the instance instead of 0.5.
* ``require_improvement=True`` (digest §5.2 #8): accept a split only if its reduction is > 0 (the
  prose's rule); if none is accepted, return fewer groups (valid for ``at_most_k`` instances).
* ``T_total = 0`` / ``S_total = 0`` / ``C_total = 0``: the corresponding ratio is taken as 0 (the
  printed code divides by zero).

BNP is a heuristic for the surrogate: it is not optimal for the surrogate when ``k >= 3`` nor for
Perf (digest §2.1); for ``k = 2`` it coincides with exhaustive search (digest §1.6g).
Complexity ``O(k n^2)`` as printed (``n - m`` candidates per iteration, ``O(m)`` each here with
prefix sums).
"""

from __future__ import annotations

import math

import numpy as np

from splitopt.errors import InstanceError


def bnp(instance, k: int | None = None, variant: str = "paper", require_improvement: bool = False,
        return_info: bool = False):
    """Run BNP on ``instance`` (its ``k`` unless ``k`` is given); returns group sizes."""
    if variant not in ("paper", "corrected"):
        raise InstanceError("variant", f"must be 'paper' or 'corrected', got {variant!r}")
    k = instance.k if k is None else int(k)
    if k < 1:
        raise InstanceError("k", f"must be >= 1, got {k}")
    delta = 0.5 if variant == "paper" else instance.delta
    n = instance.n
    tau = np.concatenate([[0.0], np.cumsum(instance.t_array)]).tolist()
    kap = np.concatenate([[0], np.cumsum(instance.c_array)]).tolist()
    s = instance.s
    T_tot, S_tot, C_tot = tau[-1], instance.S_total, kap[-1]
    a_, b_, g_ = instance.alpha, instance.beta, instance.gamma
    logC = math.log1p(C_tot) if C_tot > 0 else 0.0

    def cost(a: int, b: int) -> float:  # Alg. 2 for parts a..b-1
        T = tau[b] - tau[a]
        C = kap[b] - kap[a]
        return (a_ * (T / T_tot if T_tot > 0 else 0.0) + b_ * (s[b - 1] / S_tot if S_tot > 0 else 0.0)
                - g_ * (math.log1p(C) / logC if logC > 0 else 0.0))

    groups = [(0, n)]
    stalled = False
    while len(groups) < k:
        best = -math.inf
        best_g = best_p = -1
        m1 = len(groups) + 1
        avg = T_tot / m1
        execs = [tau[b] - tau[a] for a, b in groups]
        for gi, (a, b) in enumerate(groups):
            cur = cost(a, b)
            other_max = max((e for h, e in enumerate(execs) if h != gi), default=-math.inf)
            for p in range(a + 1, b):
                red = cur - (cost(a, p) + cost(p, b))
                mx = max(other_max, tau[p] - tau[a], tau[b] - tau[p])
                bf = mx / avg if avg > 0 else 1.0
                cr = red - delta * (bf - 1.0)
                if cr > best:
                    best, best_g, best_p = cr, gi, p
        if best_g == -1:  # every group is one part: the printed loop would spin forever
            stalled = True
            break
        if require_improvement and not best > 0:
            break
        a, b = groups[best_g]
        groups[best_g:best_g + 1] = [(a, best_p), (best_p, b)]
    sizes = [b - a for a, b in groups]
    if return_info:
        return sizes, {"stalled": stalled, "groups": len(sizes)}
    return sizes


__all__ = ["bnp"]
