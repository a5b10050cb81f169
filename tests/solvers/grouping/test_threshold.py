"""The threshold method (:mod:`splitopt.solvers.grouping.threshold`) against independent methods:
brute-force enumeration scored by the evaluator (tiny chains), the threshold-scan DP of
:mod:`splitopt.solvers.grouping.dp` and the min-max DP of :mod:`.linear_partition` (up to 1,000
parts), for every objective, exact ``k`` and ``at_most_k``."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from splitopt.instances.grouping import GroupingInstance, generate
from splitopt.models.grouping import evaluate, interval_costs
from splitopt.solvers.grouping import dp, linear_partition, threshold
from splitopt.solvers.grouping.bruteforce import bruteforce

from .test_dp import random_instances


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def value(inst, sizes):
    return evaluate(inst, sizes)[0]


def test_equals_bruteforce_on_tiny_chains():
    n = 0
    for inst in random_instances(300, seed0=1000):
        _, opt = bruteforce(inst, return_value=True)
        assert close(value(inst, threshold.solve(inst)), opt), inst.to_dict()
        n += 1
    assert n == 300


def _medium(seed, rnd):
    return generate(seed, n=rnd.randint(20, 70), k=rnd.randint(2, 12),
                    objective=rnd.choice(["perf", "bottleneck", "thesis_cost"]),
                    requests=rnd.choice([1, 2, 5, 11, 100]), bandwidth_bytes_per_s=rnd.choice([1e7, 1e8, 1e9]),
                    transfers=rnd.random() < 0.8, charge_final_transfer=rnd.random() < 0.5,
                    at_most_k=rnd.random() < 0.25, delta=rnd.choice([0.0, 0.5, 1.0, 5.0]))


@pytest.mark.parametrize("dense_cells", [threshold.DENSE_CELLS, 0], ids=["dense-windows", "range-min-and-monge"])
def test_equals_the_threshold_scan_dp_on_medium_chains(monkeypatch, dense_cells):
    monkeypatch.setattr(threshold, "DENSE_CELLS", dense_cells)
    rnd = random.Random(7)
    for seed in range(60):
        inst = _medium(seed, rnd)
        assert close(value(inst, threshold.solve(inst)), value(inst, dp.solve(inst))), inst.name


@pytest.mark.parametrize("objective", ["perf", "bottleneck", "thesis_cost"])
def test_equals_the_reference_dps_at_200_parts(objective):
    for k, at_most in ((5, False), (16, True)):
        inst = generate(2, n=200, k=k, objective=objective, requests=11, at_most_k=at_most)
        ref = linear_partition.solve_dp(inst) if objective == "bottleneck" else dp.solve(inst)
        assert close(value(inst, threshold.solve(inst)), value(inst, ref))


def test_thesis_cost_with_many_convolutions_per_part():
    """Uneven conv counts make the log term matter (the Monge argument of the module docstring)."""
    rnd = np.random.default_rng(3)
    for rep in range(5):
        n = 40
        inst = GroupingInstance.from_arrays([float(x) for x in rnd.uniform(0.01, 1.0, n)],
                                            [float(x) for x in rnd.uniform(1e5, 1e7, n)],
                                            [int(x) for x in rnd.integers(0, 200, n)], k=6,
                                            objective="thesis_cost", delta=[0.0, 0.2, 2.0, 0.5, 8.0][rep])
        assert close(value(inst, threshold.solve(inst)), value(inst, dp.solve(inst)))


def test_windows_and_reach_against_direct_enumeration():
    """The window of every end j is exactly the starts a with g(a, j) <= theta; reachability with
    exactly m groups agrees with enumerating the allowed intervals."""
    inst = generate(5, n=12, k=4, objective="perf", requests=3)
    ic = interval_costs(inst)
    vals = np.unique(ic.g[np.isfinite(ic.g)])
    for th in vals[::7]:
        lo = threshold._windows(ic.g, th, True)
        for j in range(1, inst.n + 1):
            allowed = [a for a in range(j) if ic.g[a, j] <= th and not (a == 0 and j == inst.n)]
            assert (list(range(lo[j], j)) == allowed)
        R = threshold._reach(lo, 4)
        ok = {(0, 0)}
        for m in range(1, 5):
            for j in range(1, inst.n + 1):
                if any((m - 1, a) in ok for a in range(lo[j], j)):
                    ok.add((m, j))
        assert {(m, j) for m in range(5) for j in range(inst.n + 1) if R[m, j]} == ok


def test_monge_layer_equals_dense_minimum():
    rnd = np.random.default_rng(1)
    n = 30
    inst = GroupingInstance.from_arrays([float(x) for x in rnd.uniform(0.01, 1, n)],
                                        [float(x) for x in rnd.uniform(1e5, 1e7, n)],
                                        [int(x) for x in rnd.integers(0, 9, n)], k=5, objective="thesis_cost")
    ic = interval_costs(inst)
    prev = np.concatenate([[0.0], rnd.uniform(0, 1, n)])
    prev[3:6] = np.inf
    for th in (np.unique(ic.g[np.isfinite(ic.g)])[[40, 200, -1]]):
        lo = threshold._windows(ic.g, th, True)
        got = threshold._monge_layer(prev, ic.f, lo, (1, n))
        for j in range(1, n + 1):
            want = min((prev[a] + ic.f[a, j] for a in range(lo[j], j)), default=np.inf)
            assert got[j] == pytest.approx(want, rel=1e-12, abs=1e-12) or (got[j] == want == np.inf)


def test_registered_and_default_through_auto():
    from splitopt.families import get_family, solve

    fam = get_family("grouping")
    assert fam.default_algorithm == "auto" and fam.algorithms["threshold"].exact
    inst = generate(4, n=60, k=7, objective="thesis_cost")
    a, b = solve(inst, "threshold"), solve(inst)
    assert close(a.objective, b.objective) and b.status == "optimal" and b.algorithm == "auto"
