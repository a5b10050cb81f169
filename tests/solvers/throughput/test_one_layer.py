"""A one-layer throughput instance with a split cap (found by fuzzing, 2026-11-29): the cap has no
split point to count, and every solver formulation raised Pyomo's "trivial Boolean" error (the
CLI printed a traceback). Each must agree with brute force."""

import pytest

from splitopt.families import get_family, solve


@pytest.mark.parametrize("seed", [27, 3])
def test_one_layer_with_a_split_cap(seed):
    inst = get_family("throughput").generate(seed, n_layers=1, n_nodes=2)
    assert len(inst.layers) == 1
    want = solve(inst, "bruteforce").objective
    for algo in ("rlt", "mccormick", "minlp", "auto"):
        sol = solve(inst, algo, time_limit=30)
        assert sol.objective == pytest.approx(want, rel=1e-6), algo
    for algo in ("lp_rlt", "lp_mccormick"):  # relaxations: a bound no better than the optimum
        sol = solve(inst, algo, time_limit=30)
        assert sol.bound is not None and sol.bound <= want * (1 + 1e-6), algo
