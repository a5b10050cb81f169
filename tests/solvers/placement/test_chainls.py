"""The chain local search (:mod:`splitopt.solvers.placement.chainls`): its placements are chain
placements (the evaluator accepts them), never worse than the start, never below brute force."""

from __future__ import annotations

import itertools

import pytest

from splitopt.families import solve
from splitopt.instances.placement import generate
from splitopt.instances.placement_gen import operator_graph
from splitopt.models.placement import evaluate
from splitopt.solvers.placement.chainls import chain_search
from splitopt.solvers.placement.linearised import linearised_dp


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


@pytest.mark.parametrize("contiguity", ["convex", "none"])
def test_incumbent_runs_the_chain_search_where_the_ideal_search_stops_short(monkeypatch, contiguity):
    # the convex/none incumbent phase: an ideal search stopped short hands its chain placement to
    # the chain local search, whose placement (never worse, a chain hence convex) is the incumbent
    from splitopt.families import AlgoResult
    from splitopt.solvers.placement import chainls, ideals, incumbent

    inst = generate(3, n_nodes=9, n_accelerators=3, n_cpus=1, contiguity=contiguity)
    poor = ["cpu0"] * inst.n_nodes  # one device: a chain placement
    monkeypatch.setattr(ideals, "solve", lambda *a, **kw: AlgoResult(poor, status="time_limit", bound=0.0))
    seen = []
    real = chainls.chain_search

    def spy(instance, assignment, **kw):
        seen.append(list(assignment))
        return real(instance, assignment, **kw)

    monkeypatch.setattr(chainls, "chain_search", spy)
    a, v = incumbent.incumbent(inst, time_limit=10.0)
    assert seen == [poor]
    assert v == evaluate(inst, a)[0] and v < evaluate(inst, poor)[0]  # one device is far from the best
