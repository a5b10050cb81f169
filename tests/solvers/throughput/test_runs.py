"""The helpers behind bnb's capped bounds and run incumbents, against enumeration: ``capped_fits``
(water-filling with at most ``k`` nodes) and ``runs.best_runs`` (least-period runs on distinct nodes)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from splitopt.solvers.throughput.bounds import capped_fits
from splitopt.solvers.throughput.runs import best_runs


@pytest.mark.parametrize("seed", range(30))
def test_capped_fits_equals_enumeration_of_node_sets(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    eta = list(10 ** rng.uniform(0, 1, n))
    W = list(rng.uniform(0, 3, n) * (rng.random(n) < 0.6))
    R, thr = float(rng.uniform(0.5, 10)), float(rng.uniform(0.5, 3))
    for k in range(1, n + 1):
        best = max(sum(max(0.0, eta[a] * thr - W[a]) for a in q) for q in itertools.combinations(range(n), k))
        if abs(best - R) > 1e-9 * R:  # away from the tie, the answer is that of the enumeration
            assert capped_fits(W, eta, R, k, thr) == (best >= R), (seed, k)


def _brute_runs(flop, eta, K):
    """Least max(load / eta) over cuts into at most K runs on distinct nodes (every order)."""
    L, best = len(flop), math.inf
    for r in range(1, min(K, len(eta)) + 1):
        for cuts in itertools.combinations(range(1, L), r - 1):
            bounds = (0, *cuts, L)
            runs = [sum(flop[bounds[i]:bounds[i + 1]]) for i in range(r)]
            for nodes in itertools.permutations(range(len(eta)), r):
                best = min(best, max(w / eta[a] for w, a in zip(runs, nodes)))
    return best


@pytest.mark.parametrize("seed", range(20))
def test_best_runs_is_the_least_period_over_run_placements(seed):
    rng = np.random.default_rng([seed, 7])
    L, n = int(rng.integers(3, 8)), int(rng.integers(2, 5))
    flop = list(10 ** rng.uniform(0, 2, L))
    eta = list(10 ** rng.uniform(0, 1, n))
    K = int(rng.integers(1, n + 1))
    p = best_runs(flop, eta, K, lambda j, T: True, iters=80)
    assert p is not None
    loads = [0.0] * n
    for i, a in enumerate(p):
        loads[a] += flop[i]
    runs = 1 + sum(1 for i in range(L - 1) if p[i] != p[i + 1])
    assert runs <= K and len(set(p)) == runs  # at most K runs, each on its own node
    got = max(loads[a] / eta[a] for a in range(n))
    want = _brute_runs(flop, eta, K)
    assert got <= want * (1 + 1e-8) and got >= want * (1 - 1e-12), (seed, got, want)
