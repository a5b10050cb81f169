"""The first placement at any size (issue 22, "anytime"): the linearised split with backward-only
colour classes (weight updates), the contiguity/objective copies that share the validated data and
its contraction, and the configuration LP's build skipped where it would not fit the time.

Found 2026-11-29 on a 10,026-node GNMT-like training graph with weight updates: with a 10 s limit
the non-contiguous answer was every node on one device (99.36 ms, the chain answer 2.09 ms), and
once that was fixed the configuration LP's pricer build took the call to 28 s."""

from __future__ import annotations

import math
import time

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.placement_gen import operator_graph
from splitopt.models.placement import evaluate
from splitopt.solvers.placement.common import contracted
from splitopt.solvers.placement.incumbent import _one_device
from splitopt.solvers.placement.linearised import linearised_assignment


def _orphan_graph(seed: int, kind: str):
    return operator_graph(seed, kind, 120, training=True, optimizer=True, contiguity="none")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["bert", "gnmt", "inception"])
def test_linearised_split_places_weight_updates(seed, kind):
    inst = _orphan_graph(seed, kind)
    orphans = contracted(inst, orphans_only=True).orphans
    assert orphans  # the case: weight updates are backward-only classes
    with pytest.raises(InstanceError, match="colour"):
        linearised_assignment(inst)  # refused unless asked
    a, runs = linearised_assignment(inst, orphans=True)
    assert 1 <= runs <= inst.n_devices
    one = _one_device(inst)[1]
    for contiguity in ("none", "convex", "chain"):  # a chain placement: every contiguity accepts it
        v = evaluate(inst.with_(contiguity=contiguity), a)[0]
        assert v <= one * (1 + 1e-12)
    # each weight update sits on a device it exchanges the most seconds with (among the devices of
    # the nodes outside it), recomputed here from the tensors
    mine_of = {i: j for j, cl in enumerate(orphans) for i in cl}
    for j, cl in enumerate(orphans):
        pull: dict[str, float] = {}
        for u, cons, sec in inst.tensors:
            for x, y in [(u, c) for c in cons] + [(c, u) for c in cons]:
                if mine_of.get(x) == j and mine_of.get(y) != j:
                    pull[a[y]] = pull.get(a[y], 0.0) + sec
        if pull and all(inst.supported[i] for i in cl):
            assert pull[a[cl[0]]] == max(pull.values())
        assert len({a[i] for i in cl}) == 1  # a class on one device


def test_linearised_split_past_its_deadline_still_places_weight_updates():
    # past its deadline the greedy split gets its own few splits' time (the 10,026-node graph got
    # no placement at all within 1 s before)
    inst = _orphan_graph(1, "gnmt")
    got = linearised_assignment(inst, time.perf_counter() - 1.0, orphans=True)
    assert got is not None
    assert evaluate(inst, got[0])[0] < _one_device(inst)[1]


def test_contiguity_copy_shares_the_data_and_its_contraction():
    inst = _orphan_graph(0, "bert")
    chain = inst.with_(contiguity="chain")
    slow = inst.with_(contiguity="chain", name=inst.name)  # the validating path (name is not fast)
    assert chain.to_dict() == slow.to_dict() and chain == slow
    assert chain.same_data(inst) and not slow.same_data(inst)
    assert inst.contiguity == "none" and chain.contiguity == "chain"
    assert contracted(chain, orphans_only=True) is contracted(inst, orphans_only=True)
    obj = inst.with_(objective="fwd+bwd")
    a = linearised_assignment(inst, orphans=True)[0]
    assert obj.objective == "fwd+bwd" and evaluate(obj, a)[0] >= evaluate(inst, a)[0]  # never below max-load
    chain.meta["x"] = 1
    assert "x" not in inst.meta  # a copy's meta is its own
    assert not inst.with_(n_accelerators=inst.n_accelerators + 1).same_data(inst)
    with pytest.raises(InstanceError, match="contiguity"):
        inst.with_(contiguity="tree")
    with pytest.raises(InstanceError, match="objective"):
        inst.with_(objective="sum")


def test_refused_contraction_is_refused_again_from_the_cache():
    inst = _orphan_graph(2, "bert")
    for _ in range(2):
        with pytest.raises(InstanceError, match="backward-only"):
            contracted(inst)


def test_configuration_lp_skipped_where_its_build_would_not_fit():
    from splitopt.instances.placement_gen import layer_graph
    from splitopt.solvers.placement.milp import _colgen_applies

    inst = layer_graph(0, 3, 12, contiguity="none")
    v = evaluate(inst, linearised_assignment(inst)[0])[0]
    assert _colgen_applies(inst, v) and _colgen_applies(inst, v, 60.0)
    assert not _colgen_applies(inst, v, 1e-9)
    assert not _colgen_applies(inst, math.inf)


def test_auto_rule_1e_linearised_where_the_ideal_search_cannot_start(monkeypatch):
    """``auto``'s rule 1e: where the ideal search's set-up exceeds its time, the linearised split
    and the chain local search answer; else the ideal search runs (checked by the methods tried)."""
    from splitopt.solvers.placement import auto, incumbent

    inst = _orphan_graph(0, "gnmt").with_(contiguity="chain")
    r = auto.solve(inst, time_limit=5.0)
    assert r.info["tried"][0]["method"] == "ideals"
    monkeypatch.setattr(incumbent, "SETUP_S_PER_NODE", (1.0, 1.0))  # no limit is long enough
    r = auto.solve(inst, time_limit=5.0)
    methods = [t["method"] for t in r.info["tried"]]
    assert methods[:2] == ["linearised", "chain-search"]
    v = evaluate(inst, r.assignment)[0]
    assert v <= r.info["tried"][0]["value"] * (1 + 1e-12) and r.bound <= v * (1 + 1e-12)
    assert r.status in ("optimal", "time_limit", "feasible")
