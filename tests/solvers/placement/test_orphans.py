"""Backward-only colour classes in the chain model (:mod:`splitopt.solvers.placement.orphans`): the
mirrored instance keeps every load (its placements are the original's), the instance without
orphans never costs more, the completion is a valid placement; on seeded training graphs with weight
updates the ideal search's bracket holds against the MILP."""

from __future__ import annotations

import numpy as np
import pytest

from splitopt.families import solve
from splitopt.instances.placement import generate
from splitopt.instances.placement_gen import operator_graph
from splitopt.models.placement import evaluate
from splitopt.solvers.placement import orphans
from splitopt.solvers.placement.common import Contracted


def orphan_case(seed):
    inst = generate(seed, n_nodes=6, n_accelerators=2, n_cpus=1, training=True, contiguity="chain")
    b = [i for i in range(inst.n_nodes) if inst.backward[i]]
    col = list(inst.colour)
    for j, i in enumerate(b[-2:]):  # two backward nodes in classes of their own
        col[i] = 10 ** 6 + j
    return inst.with_(colour=tuple(col))


@pytest.mark.parametrize("seed", range(5))
def test_mirrored_keeps_every_load_and_without_never_costs_more(seed):
    inst = orphan_case(seed)
    orph = Contracted(inst, orphans_only=True).orphans
    assert orph
    mir = orphans.mirrored(inst, orph)
    red, keep = orphans.without(inst, orph)
    n = inst.n_nodes
    assert mir.nodes[:n] == inst.nodes and mir.n_nodes > n
    rng = np.random.default_rng(seed)
    ok = 0
    for _ in range(200):
        # a random placement of the mirrored instance (class by class), read on the original
        by_class = {}
        a = []
        for i in range(mir.n_nodes):
            key = mir.colour[i] if mir.colour[i] is not None else ("n", i)
            if key not in by_class:
                by_class[key] = mir.devices[int(rng.integers(mir.n_devices))]
            a.append(by_class[key])
        loads = {}
        for label, x, y in (("mirrored", mir, a), ("original", inst.with_(contiguity="none"), a[:n])):
            try:
                loads[label] = evaluate(x.with_(contiguity="none"), y)[0]
            except Exception:
                loads[label] = None
        if loads["mirrored"] is None:
            continue
        ok += 1
        assert loads["original"] == pytest.approx(loads["mirrored"], rel=1e-12)
        sub = evaluate(red.with_(contiguity="none"), [a[i] for i in keep])[0]
        assert sub <= loads["original"] * (1 + 1e-12)
    assert ok > 20


@pytest.mark.parametrize("seed", range(4))
def test_completion_is_a_placement(seed):
    inst = orphan_case(seed)
    orph = Contracted(inst, orphans_only=True).orphans
    red, keep = orphans.without(inst, orph)
    part = solve(red, "ideals")
    done = orphans.place(inst, part.assignment, keep, orph)
    assert done is not None
    assert evaluate(inst, done)[0] >= part.objective * (1 - 1e-12)  # the orphans only add load


@pytest.mark.slow
def test_weight_updates_bracket_against_the_milp():
    # a BERT-like training graph with one backward-only weight update per weight
    inst = operator_graph(1, "bert", 150, training=True, optimizer=True, contiguity="chain")
    r = solve(inst, "ideals", time_limit=20)
    m = solve(inst, "milp", time_limit=60)
    assert r.bound <= m.objective * (1 + 1e-9)
    if m.status == "optimal":
        assert r.objective >= m.objective * (1 - 1e-9)
