"""Placements by runs over node subsets: the best way to cut the layer order into at most ``K`` runs,
each on its own node, when only compute counts (none in seed 004; used by the corrected B&B as an
incumbent generator, issue 21 §3).

For a target period ``T`` the question "can the layers ``0..L-1`` be cut into runs on distinct nodes
of a set ``M``, node ``a`` taking at most ``eta_a T`` FLOP, cutting only where ``cut_ok``" is
answered by a dynamic programme over subsets: ``reach[M]`` = the longest prefix such runs cover,
``reach[M] = max_a ext(reach[M - a], a)`` with ``ext(p, a)`` the furthest allowed cut ``j`` with
``P_j - P_p <= eta_a T`` (``P`` the FLOP prefix sums). ``ext`` is non-decreasing in ``p``, so the
furthest prefix is always the best one to continue from, and the programme is exact for this
question. Bisection on ``T`` gives the least such period; the placement is scored by the evaluator
by the caller (links, pins, memory and the real transfers are not seen here).

Cost: ``2^N N log L`` per ``T``; :func:`best_runs` uses the ``n_max`` fastest nodes (10: 1,024
subsets).
"""

from __future__ import annotations

import bisect
import math
from typing import Callable, Sequence


def best_runs(flop: Sequence[float], eta: Sequence[float], K: int, cut_ok: Callable[[int, float], bool],
              deadline=None, n_max: int = 10, iters: int = 40, hi: float | None = None) -> list[int] | None:
    """Node per layer of the least-``T`` runs on distinct nodes (at most ``K`` runs), or ``None``.

    ``cut_ok(j, T)``: may the order be cut after layer ``j`` at period ``T``. ``hi``: a period known
    to be reachable some other way (the search looks below it). ``deadline``: a
    :class:`~splitopt.solvers.deadline.Deadline`; when it passes the best placement found so far
    is returned."""
    L = len(flop)
    nodes = sorted(range(len(eta)), key=lambda a: -eta[a])[:n_max]
    n = len(nodes)
    K = min(K, n)
    P = [0.0] * (L + 1)
    for i, f in enumerate(flop):
        P[i + 1] = P[i] + f
    W = P[L]
    if W <= 0:
        return [nodes[0]] * L
    lo = W / sum(eta[a] for a in nodes[:K])
    if hi is None or not math.isfinite(hi):
        hi = W / eta[nodes[0]]
    pop = [bin(m).count("1") for m in range(1 << n)]

    def feasible(T):
        allowed = [j for j in range(1, L) if cut_ok(j - 1, T)] + [L]  # prefix lengths we may stop at
        reach = [-1] * (1 << n)
        parent = [(-1, -1)] * (1 << n)
        reach[0] = 0
        for m in range(1, 1 << n):
            if pop[m] > K:
                continue
            best, arg = -1, (-1, -1)
            bits = m
            while bits:
                low = bits & -bits
                k = low.bit_length() - 1
                bits ^= low
                p = reach[m ^ low]
                if p < 0:
                    continue
                if p == L:
                    j = L
                else:
                    cap = P[p] + eta[nodes[k]] * T * (1 + 1e-12)
                    top = bisect.bisect_right(P, cap) - 1  # furthest prefix within capacity
                    idx = bisect.bisect_right(allowed, top) - 1
                    j = allowed[idx] if idx >= 0 and allowed[idx] > p else p
                if j > best:
                    best, arg = j, (m ^ low, k)
            reach[m] = best
            parent[m] = arg
            if best == L:
                out = [0] * L
                cur = m
                while cur:
                    prev, k = parent[cur]
                    for i in range(reach[prev], reach[cur]):
                        out[i] = nodes[k]
                    cur = prev
                return out
        return None

    found = None
    for _ in range(iters):
        if deadline is not None and deadline.over():
            break
        mid = 0.5 * (lo + hi)
        p = feasible(mid)
        if p is None:
            lo = mid
        else:
            hi, found = mid, p
        if hi - lo <= 1e-9 * hi:
            break
    return found


__all__ = ["best_runs"]
