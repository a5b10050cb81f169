"""Issue 11 follow-up: the descent :func:`baselines.improve` that seeds the device MILP's
incumbent: from any feasible start it returns a feasible placement (scored by the evaluator) no
worse than the start and never below the brute-force optimum; on independent identical layers it
reaches the pigeonhole optimum that brute force confirms."""

from __future__ import annotations

import itertools
import math

import pytest

from splitopt.families import solve
from splitopt.instances.placement import PlacementInstance, generate
from splitopt.models.placement import evaluate
from splitopt.solvers.placement.baselines import improve
from splitopt.solvers.placement.linearised import linearised_dp

COMBOS = list(itertools.product(("max-load", "fwd+bwd"), ("none", "convex", "chain")))


@pytest.mark.parametrize("objective,contiguity", COMBOS)
@pytest.mark.parametrize("seed", range(5))
def test_improve_feasible_monotone_and_above_bruteforce(seed, objective, contiguity):
    inst = generate(seed, n_nodes=5 + seed % 2, n_accelerators=2 + seed % 2, n_cpus=1, training=seed % 4 == 3,
                    objective=objective, contiguity=contiguity)
    bf = solve(inst, "bruteforce").objective
    start = linearised_dp(inst).assignment
    v0 = evaluate(inst, start)[0]
    r = improve(inst, start, time_limit=None)
    v = evaluate(inst, r.assignment)[0]  # raises if the result broke a constraint
    assert v <= v0 * (1 + 1e-12)
    assert v >= bf * (1 - 1e-12)
    # the MILP with the improved incumbent still proves the brute-force optimum
    m = solve(inst, "milp")
    assert m.status == "optimal" and math.isclose(m.objective, bf, rel_tol=1e-9)


def test_improve_reaches_pigeonhole_optimum_from_one_device():
    # 8 independent 1-second layers (no tensors) on 3 accelerators, no CPU core: the optimum is
    # ceil(8/3) = 3 (pigeonhole; brute force agrees); the start puts all 8 on one accelerator
    n = 8
    inst = PlacementInstance(tuple(f"v{i}" for i in range(n)), (10.0,) * n, (1.0,) * n, (), n_accelerators=3, n_cpus=0)
    bf = solve(inst, "bruteforce").objective
    assert bf == math.ceil(n / 3)
    r = improve(inst, ["acc0"] * n, time_limit=None)
    assert evaluate(inst, r.assignment)[0] == bf and r.info["steps"] > 0


def test_improve_rejects_an_infeasible_start():
    from splitopt.errors import InfeasibleSolution

    inst = generate(1, n_nodes=5, n_accelerators=2, n_cpus=1, contiguity="convex", memory=False, unsupported=1)
    bad = ["acc0"] * inst.n_nodes
    with pytest.raises(InfeasibleSolution):
        improve(inst, bad)
