"""Idle super-nodes merged into their one neighbour (``common._merge_idle``, the peer's "trivial node
optimisation" made exact): the merged instance keeps the optimum of every contiguity and objective.

Checked against brute force, which never merges, on seeded graphs given idle nodes of every kind
the rule looks at (zero-time sinks that read a tensor, sources and pass-through nodes with
zero-second tensors, idle nodes holding bytes with and without a memory limit that binds), and on
the shape that made the peer's GNMT layer graph hard: 3,310,714 ideals before, 168 after
(``tests`` keep a small copy of the shape, not the workload)."""

import math

import numpy as np
import pytest

from splitopt.families import solve
from splitopt.instances.placement import PlacementInstance, generate
from splitopt.models.placement import evaluate
from splitopt.solvers.placement import bounds
from splitopt.solvers.placement.common import Contracted


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b))


def with_idle(seed: int, contiguity: str, objective: str = "max-load") -> PlacementInstance:
    """A seeded 4-6-node instance plus 2-3 idle nodes: sinks reading a node's tensor, sources
    feeding a node through a zero-second tensor, pass-through nodes between two nodes (a zero-second
    tensor out, reading the first one's tensor); some idle nodes hold bytes; memory binds on some
    seeds."""
    rng = np.random.default_rng([seed, 7117])
    base = generate(seed, int(rng.integers(4, 7)), int(rng.integers(2, 4)), 1, skips=1, memory=seed % 3 == 0,
                    objective=objective, contiguity=contiguity)
    n = base.n_nodes
    names, cpu, acc = list(base.nodes), list(base.cpu_seconds), list(base.acc_seconds)
    size, sup = list(base.size_bytes), list(base.supported)
    cons = {p: list(cs) for p, cs, _s in base.tensors}
    secs = {p: s for p, cs, s in base.tensors}
    extra = []
    for j in range(int(rng.integers(2, 4))):
        kind = ("sink", "source", "through")[int(rng.integers(0, 3))]
        i = len(names)
        names.append(f"idle{j}")
        cpu.append(0.0)
        acc.append(0.0)
        size.append(float(rng.choice([0.0, 0.0, 5e6])))
        sup.append(True)
        u = int(rng.integers(0, n))
        if kind == "sink":
            cons.setdefault(u, []).append(i)  # reads u's tensor (positive seconds)
            secs.setdefault(u, float(10 ** rng.uniform(-4, -3)))
        elif kind == "source":
            extra.append((i, (u,), 0.0))
        else:
            v = int(rng.integers(0, n))
            a, b = min(u, v), max(u, v)
            if a == b:
                b = min(a + 1, n - 1)
            if a == b:
                extra.append((i, (a,), 0.0))
                continue
            cons.setdefault(a, []).append(i)  # reads a's tensor
            secs.setdefault(a, 0.0)
            extra.append((i, (b,), 0.0))
    tensors = tuple((p, tuple(cs), secs[p]) for p, cs in cons.items()) + tuple(extra)
    return PlacementInstance(tuple(names), tuple(cpu), tuple(acc), tensors, n_accelerators=base.n_accelerators,
                             n_cpus=base.n_cpus, acc_memory_bytes=base.acc_memory_bytes, size_bytes=tuple(size),
                             supported=tuple(sup), colour=base.colour + (None,) * (len(names) - n),
                             objective=objective, contiguity=contiguity, name=f"idle-{seed}")


@pytest.mark.parametrize("seed", range(24))
def test_chain_optimum_kept_with_idle_nodes(seed):
    """The ideal search and the DP over ideals (both on merged super-nodes) = brute force."""
    inst = with_idle(seed, "chain", "max-load" if seed % 4 else "fwd+bwd")
    bf = solve(inst, "bruteforce")
    r = solve(inst, "ideals")
    assert r.status == "optimal" and close(r.objective, bf.objective), (r.objective, bf.objective)
    if inst.objective == "max-load":
        r = solve(inst, "ideals", direction="forward")  # the DP over all ideals first
        assert r.status == "optimal" and close(r.objective, bf.objective)


def test_the_fuzz_merges():
    """The instances above do exercise the rule (most seeds merge something)."""
    merged = [Contracted(with_idle(s, "chain")).merged_idle for s in range(24)]
    assert sum(m > 0 for m in merged) >= 12, merged


@pytest.mark.parametrize("seed", range(24))
def test_bounds_stay_below_every_contiguity_optimum(seed):
    """The combinatorial bounds, computed on merged super-nodes, never pass the brute-force optimum."""
    for cont in ("convex", "none"):
        inst = with_idle(seed, cont)
        bf = solve(inst, "bruteforce")
        lb, _parts = bounds.combinatorial_bound(inst)
        assert lb <= bf.objective * (1 + 1e-9), (cont, lb, bf.objective)


def _instance(names, times, tensors, **kw):
    return PlacementInstance(tuple(names), tuple(10 * t for t in times), tuple(times), tuple(tensors), **kw)


def test_a_sink_with_two_predecessors_stays():
    """An idle sink read from two nodes may not join either: in a chain the other one can come later
    (``a -> c``, ``b -> c``: joining ``a``'s device would put ``c`` before ``b``)."""
    inst = _instance(["a", "b", "c"], [1.0, 1.0, 0.0], [(0, (2,), 0.0), (1, (2,), 0.0)], n_accelerators=2,
                     n_cpus=0, contiguity="chain")
    assert Contracted(inst).n == 3


def test_a_sink_reading_a_tensor_with_a_second_predecessor_stays():
    """``a -> b -> c`` and ``a -> c``: the idle sink ``c`` reads ``a``'s tensor (its one partner)
    but also follows ``b`` (a zero-second tensor). Joining ``a`` would close the cycle
    ``{a, c} -> b -> {a, c}`` and force all three onto one device (2.0 against the optimum 1.1):
    ``a`` is neither ``c``'s only predecessor nor its only successor."""
    inst = _instance(["a", "b", "c"], [1.0, 1.0, 0.0], [(0, (1, 2), 0.1), (1, (2,), 0.0)], n_accelerators=2,
                     n_cpus=0, contiguity="chain")
    assert Contracted(inst).n == 3
    bf = solve(inst, "bruteforce")
    r = solve(inst, "ideals")
    assert close(bf.objective, 1.1) and r.status == "optimal" and close(r.objective, 1.1)


def test_an_idle_node_holding_bytes_stays_where_memory_binds():
    """``a -> b`` and an idle sink ``s`` reading ``a``'s tensor, holding 6 bytes: with accelerators
    of 10 bytes and ``a`` holding 5, ``s`` on ``a``'s device would overflow it, so the rule leaves it
    (memory binds: the nodes hold 16 bytes); without a limit it joins ``a``."""
    inst = _instance(["a", "b", "s"], [1.0, 1.0, 0.0], [(0, (1, 2), 0.1)], n_accelerators=2, n_cpus=0,
                     acc_memory_bytes=10.0, size_bytes=(5.0, 5.0, 6.0), contiguity="chain")
    assert Contracted(inst).n == 3
    bf = solve(inst, "bruteforce")
    r = solve(inst, "ideals")
    assert r.status == "optimal" and close(r.objective, bf.objective)
    free = inst.with_(acc_memory_bytes=None)
    assert Contracted(free).n == 2


def gnmt_like_cells(cells: int = 6) -> PlacementInstance:
    """A chain of ``cells`` LSTM-like cells as in the peer's GNMT layer graph: each cell feeds an
    idle sink (its state, never read) and an idle copy node on the way to the next cell; an idle
    source (``hidden0``) feeds every cell through an idle node by zero-second tensors."""
    names, times, tensors = ["hidden0"], [0.0], []
    prev = None
    feeders = []
    for c in range(cells):
        cell, state, copy, feed = (len(names) + j for j in range(4))
        names += [f"cell{c}", f"state{c}", f"copy{c}", f"feed{c}"]
        times += [1.0 + 0.1 * c, 0.0, 0.0, 0.0]
        tensors.append((cell, (state, copy), 0.05))
        tensors.append((feed, (cell,), 0.0))
        feeders.append(feed)
        if prev is not None:
            tensors.append((prev, (cell,), 0.05))
        prev = copy
    tensors.append((0, tuple(feeders), 0.0))
    return _instance(names, times, tensors, n_accelerators=3, n_cpus=1, contiguity="chain")


def test_gnmt_like_cells_collapse_to_a_chain():
    inst = gnmt_like_cells()
    con = Contracted(inst)
    # every state and feed node joins its cell, and the last copy (read by no one); a copy that sends
    # its tensor on stays (on its cell's device that device would send it): 1 + 6 cells + 5 copies
    assert con.n == 12 and con.merged_idle == 13
    assert Contracted(inst, merge_idle=False).n == 25
    m = solve(inst, "milp", time_limit=60)
    r = solve(inst, "ideals")
    assert m.status == "optimal" and r.status == "optimal" and close(r.objective, m.objective, 1e-7)
    v = evaluate(inst, r.assignment)[0]
    assert math.isclose(v, r.objective, rel_tol=1e-12)


@pytest.mark.parametrize("training", [False, True])
def test_lstm_layer_graph_collapses_and_keeps_its_optimum(training):
    """The shape of the peer's GNMT layer graph (:func:`lstm_layer_graph`): 4 + 4 cells have 4,925
    ideals, 42 once the idle nodes join; the chain optimum over the merged ideals = the MILP's (on
    the whole instance, nothing merged)."""
    from splitopt.instances.placement_gen import lstm_layer_graph
    from splitopt.solvers.placement.idealdp import list_ideals

    inst = lstm_layer_graph(0, 4, 4, training=training, n_accelerators=3)
    raw = list_ideals(Contracted(inst, merge_idle=False), cap=100_000)
    merged = list_ideals(Contracted(inst), cap=100_000)
    assert len(raw[0]) == 4925 and len(merged[0]) == 42
    r = solve(inst, "ideals")
    m = solve(inst, "milp", time_limit=60)
    assert r.status == m.status == "optimal" and close(r.objective, m.objective, 1e-7)


def test_contracted_is_built_once_per_instance_and_flags():
    # auto, the ideal search and its DP share one contraction of the instance they are given
    from splitopt.solvers.placement.common import Contracted, contracted

    a = generate(3, n_nodes=9, n_accelerators=2, contiguity="chain")
    b = generate(3, n_nodes=9, n_accelerators=2, contiguity="chain")  # equal, another object
    ca = contracted(a)
    assert contracted(a) is ca
    assert contracted(a, reverse=True) is not ca and contracted(a, reverse=True) is contracted(a, reverse=True)
    fresh = Contracted(a)
    assert (ca.n, ca.members, ca.accf) == (fresh.n, fresh.members, fresh.accf)
    cb = contracted(b)
    assert cb is not ca and (cb.n, cb.members) == (ca.n, ca.members)
    assert contracted(a) is ca  # the last few instances are kept (an instance and its chain copy in turn)
    others = [generate(s, n_nodes=9, n_accelerators=2, contiguity="chain") for s in range(4, 9)]
    for o in others:
        contracted(o)
    assert contracted(a) is not ca  # ... a few only


@pytest.mark.parametrize("training", [False, True])
def test_inception_layer_graph_has_the_shape_of_the_peers(training):
    """:func:`inception_layer_graph`: 313 layers (626 with the backward mirror, each backward layer in
    its forward layer's class), tens of thousands of ideals (the peer's Inception-v3 layer graph, 326
    layers: its DP does not finish in 600 s); the compiled listing and the Python one count alike."""
    from splitopt.instances.placement_gen import inception_layer_graph
    from splitopt.solvers.placement.idealdp import _compiled, list_ideals

    inst = inception_layer_graph(0, training=training)
    assert inst.n_nodes == 313 * (2 if training else 1)
    con = Contracted(inst)
    assert con.n == 313
    py = list_ideals(con, cap=100_000)
    assert py is not None and 20_000 < len(py[0]) < 60_000
    assert _compiled(con, None, 100_000).n_ideals == len(py[0])
