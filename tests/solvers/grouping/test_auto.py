"""``auto`` (the grouping family's default): the written rule picks the method named in
:mod:`splitopt.solvers.grouping.auto`, and the answer is the brute-force / reference optimum."""

from __future__ import annotations

import math

from splitopt.families import solve
from splitopt.instances.grouping import generate
from splitopt.solvers.grouping import auto, linear_partition
from splitopt.solvers.grouping.bruteforce import bruteforce

from .test_dp import random_instances


def test_rule():
    assert auto.choose(generate(0, n=9, k=3, objective="bottleneck", transfers=False))[0] == "parametric"
    for obj in ("perf", "thesis_cost"):
        for tr in (True, False):
            assert auto.choose(generate(0, n=9, k=3, objective=obj, transfers=tr))[0] == "threshold"
    assert auto.choose(generate(0, n=9, k=3, objective="bottleneck"))[0] == "threshold"


def test_auto_is_optimal_on_tiny_chains():
    for inst in random_instances(150, seed0=500):
        _, opt = bruteforce(inst, return_value=True)
        sol = solve(inst)
        assert sol.algorithm == "auto" and sol.status == "optimal"
        assert math.isclose(sol.objective, opt, rel_tol=1e-9, abs_tol=1e-12), inst.name
        assert sol.info["method"] == auto.choose(inst)[0]


def test_auto_at_1000_parts_equals_the_min_max_dp():
    for tr in (True, False):
        inst = generate(1, n=1000, k=64, objective="bottleneck", transfers=tr)
        ref = solve(inst, "linear_partition").objective
        assert math.isclose(solve(inst).objective, ref, rel_tol=1e-12)
        assert linear_partition  # the reference is the O(k n^2) DP, not the method auto chose
