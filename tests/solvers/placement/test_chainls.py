"""The chain local search (:mod:`splitopt.solvers.placement.chainls`): its placements are chain
placements (the evaluator accepts them), never worse than the start, never below brute force."""

from __future__ import annotations

import itertools

import pytest

from splitopt.families import solve
from splitopt.instances.placement import generate
from splitopt.instances.placement_gen import operator_graph
from splitopt.models.placement import evaluate
from splitopt.solvers.placement.baselines import linearised_dp
from splitopt.solvers.placement.chainls import chain_search


@pytest.mark.parametrize("objective,training", list(itertools.product(("max-load", "fwd+bwd"), (False, True))))
@pytest.mark.parametrize("seed", range(5))
def test_chain_search_small(seed, objective, training):
    inst = generate(seed, n_nodes=6, n_accelerators=2 + seed % 2, n_cpus=seed % 2, training=training,
                    objective=objective, contiguity="chain",
                    **(dict(unsupported=0, memory=False) if seed % 2 == 0 else {}))
    start = linearised_dp(inst).assignment
    v0 = evaluate(inst, start)[0]
    out = chain_search(inst, start, time_limit=0.2, seed=seed)
    v = evaluate(inst, out)[0]  # raises if the placement broke contiguity, memory or support
    assert v <= v0
    assert v >= solve(inst, "bruteforce").objective * (1 - 1e-12)


def test_chain_search_improves_gnmt():
    inst = operator_graph(0, "gnmt", 100, training=True, contiguity="chain")
    start = linearised_dp(inst).assignment
    out = chain_search(inst, start, time_limit=1.0)
    assert evaluate(inst, out)[0] <= evaluate(inst, start)[0]


def test_chain_search_declines_other_contiguity():
    from splitopt.errors import InstanceError

    inst = generate(0, n_nodes=5, contiguity="convex")
    with pytest.raises(InstanceError):
        chain_search(inst, linearised_dp(inst).assignment, time_limit=0.1)
