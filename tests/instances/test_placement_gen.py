"""The seeded operator-graph generator of the placement family
(:mod:`splitopt.instances.placement_gen`): sizes near the request, reproducible by seed, parameters
in one colour class with their operator, training graphs mirrored, weight updates in backward-only
classes; and on small graphs of every kind the chain optimum of ``auto`` equals the MILP's."""

from __future__ import annotations

import pytest

from splitopt.families import solve
from splitopt.instances.placement_gen import KINDS, operator_graph
from splitopt.solvers.placement.common import Contracted


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [100, 300, 1000])
def test_size_and_reproducible(kind, n):
    a = operator_graph(3, kind, n)
    assert 0.75 * n <= a.n_nodes <= 1.25 * n
    assert a == operator_graph(3, kind, n)
    assert a != operator_graph(4, kind, n)
    assert not any(a.backward)


@pytest.mark.parametrize("kind", KINDS)
def test_training_and_weight_updates(kind):
    fwd = operator_graph(0, kind, 100)
    tr = operator_graph(0, kind, 100, training=True)
    n_params = sum(1 for nm in fwd.nodes if nm.split("#")[0].endswith((".weight", ".bias")))
    # every compute node gets a backward node with its colour
    assert tr.n_nodes == fwd.n_nodes + (fwd.n_nodes - n_params)
    for i in range(fwd.n_nodes, tr.n_nodes):
        assert tr.backward[i] and tr.nodes[i].endswith(".grad")
    opt = operator_graph(0, kind, 100, training=True, optimizer=True)
    orphans = Contracted(opt, orphans_only=True).orphans
    assert orphans and all(opt.nodes[g[0]].endswith(".update") for g in orphans)
    assert not Contracted(tr, orphans_only=True).orphans


@pytest.mark.parametrize("kind", KINDS)
def test_parameters_share_their_operators_class(kind):
    inst = operator_graph(1, kind, 100)
    for i, nm in enumerate(inst.nodes):
        if nm.split("#")[0].endswith(".weight"):
            consumers = [c for p, cs, _s in inst.tensors if p == i for c in cs]
            assert consumers and any(inst.colour[c] == inst.colour[i] for c in consumers)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("training", [False, True])
def test_small_chain_auto_equals_milp(kind, training):
    inst = operator_graph(2, kind, 40, training=training, n_accelerators=2, contiguity="chain")
    a = solve(inst, "auto", time_limit=60)
    m = solve(inst, "milp", time_limit=60)
    assert a.status == "optimal" and m.status == "optimal"
    assert a.objective == pytest.approx(m.objective, rel=1e-7)


def test_layer_graph_shape():
    from splitopt.errors import InstanceError
    from splitopt.instances.placement_gen import layer_graph
    from splitopt.solvers.placement.idealdp import list_ideals

    inst = layer_graph(0, 3, 31)
    assert inst.n_nodes == 3 * 31 + 2 and inst.to_dict() == layer_graph(0, 3, 31).to_dict()
    # three chains of 31 between a source and a sink, tied by 3 attention-like edges (layer i of
    # branch 0 before layer i of branch 1): 32^3 free ideals of the branches, fewer with the ties
    n_ideals = len(list_ideals(Contracted(inst))[0])
    assert 2 + 31 ** 3 // 2 < n_ideals < 2 + 32 ** 3
    tr = layer_graph(0, 2, 5, training=True)
    assert tr.n_nodes == 2 * (2 * 5 + 2) and sum(tr.backward) == 12
    assert all(tr.colour[i] == tr.colour[i + 12] for i in range(12))
    with pytest.raises(InstanceError, match="n_branches"):
        layer_graph(0, 0, 5)
