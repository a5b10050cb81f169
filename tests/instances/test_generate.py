"""Seeded generators: reproducibility, structure by construction, and property tests over all kinds."""

from __future__ import annotations

import json
import math
from collections import deque

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from splitopt.errors import InstanceError
from splitopt.instances import generate as gen
from splitopt.instances.graph import DNNGraph

SMALL = {"chain": {"n": 7}, "layered_dag": {"n": 25}, "series_parallel": {"n": 20},
         "residual_stack": {"blocks": 4}, "inception_stack": {"blocks": 3}, "dense_stack": {"blocks": 3}}


def as_json(g: DNNGraph) -> str:
    return json.dumps(g.to_dict(), sort_keys=True)


@pytest.mark.parametrize("kind", gen.KINDS)
def test_same_seed_same_graph_different_seed_different(kind):
    a = gen.generate(kind, 5, **SMALL[kind])
    b = gen.generate(kind, 5, **SMALL[kind])
    c = gen.generate(kind, 6, **SMALL[kind])
    assert as_json(a) == as_json(b)
    assert as_json(a) != as_json(c)
    assert a.meta["generator"] == kind and a.meta["seed"] == 5


@pytest.mark.parametrize("kind", gen.KINDS)
def test_costs_option_changes_costs_not_structure(kind):
    u = gen.generate(kind, 3, costs="uniform", **SMALL[kind])
    g = gen.generate(kind, 3, costs="lognormal", **SMALL[kind])
    assert u.names == g.names
    assert sorted((e.src, e.dst) for e in u.edges) == sorted((e.src, e.dst) for e in g.edges)
    assert [lay.fwd_flop for lay in u.layers] != [lay.fwd_flop for lay in g.layers]


def test_uniform_ranges_and_lognormal_span():
    g = gen.chain(400, 1)
    for lay in g.layers:
        assert 1e8 <= lay.fwd_flop <= 1e10 and lay.fwd_flop <= lay.bwd_flop <= 3 * lay.fwd_flop * (1 + 1e-5)
        assert 1e4 <= lay.out_bytes <= 1e7 and 0 <= lay.param_bytes <= 1e7
    h = gen.chain(400, 1, costs="lognormal")
    f = [lay.fwd_flop for lay in h.layers]
    # multipliers 10**N(1.5, 1.5) clipped to [1e-3, 1e6] on a base of 1e6 FLOP
    assert min(f) >= 1e6 * 1e-3 * (1 - 1e-5) and max(f) <= 1e6 * 1e6 * (1 + 1e-5)
    assert max(f) / min(f) > 1e6          # 400 draws of sd 1.5 decades span more than 6 decades
    # values are rounded to 6 significant digits (machine independence)
    assert all(float(f"{v:.6g}") == v for v in f)


def test_residual_structure_by_construction():
    g = gen.residual_stack(6, 2)
    n_down = sum(1 for nm in g.names if nm.endswith(".down"))
    assert len(g) == 2 + 3 * 6 + n_down + 2
    expect = ["input", "stem"] + [f"b{b}.add" for b in range(6)] + ["pool", "fc"]
    assert [g.layers[i].name for i in g.articulation_layers] == expect
    c = g.collapse_by_block()
    assert c.is_chain() and len(c) == 1 + 1 + 6 + 1  # input, stem, 6 blocks, head
    assert all(g.layer(f"b{b}.add").param_bytes == 0 for b in range(6))
    assert g.layer("input").fwd_flop == 0


def test_inception_and_dense_structure_by_construction():
    g = gen.inception_stack(4, 9)
    assert [g.layers[i].name for i in g.articulation_layers] == \
        ["input", "stem"] + [f"b{b}.concat" for b in range(4)] + ["fc"]
    for b in range(4):
        assert 2 <= g.fan_in(g.index(f"b{b}.concat")) <= 4
    d = gen.dense_stack(3, 9)
    assert [d.layers[i].name for i in d.articulation_layers] == \
        ["input", "stem"] + [f"b{b}.trans" for b in range(3)] + ["fc"]
    for b in range(3):
        k = sum(1 for nm in d.names if nm.startswith(f"b{b}.l"))
        assert 2 <= k <= 4
        # layer j of a dense block consumes the block input and the j earlier layers
        for j in range(k):
            assert d.fan_in(d.index(f"b{b}.l{j}")) == j + 1
        assert d.fan_in(d.index(f"b{b}.trans")) == k + 1


def test_series_parallel_reduces_to_one_edge():
    # Two-terminal SP check by the classical reduction: repeatedly remove a vertex of in/out degree 1
    # (series) and merge parallel edges; an SP DAG reduces to the single edge source -> sink.
    g = gen.series_parallel(40, 4)
    G = nx.MultiDiGraph()
    G.add_edges_from((e.src, e.dst) for e in g.edges)
    changed = True
    while changed:
        changed = False
        for v in list(G.nodes):
            if v in ("v0", "v1"):
                continue
            if G.in_degree(v) == 1 and G.out_degree(v) == 1:
                (u, _), = G.in_edges(v)
                (_, w), = G.out_edges(v)
                G.remove_node(v)
                G.add_edge(u, w)
                changed = True
        for u, w in list(set(G.edges())):
            while G.number_of_edges(u, w) > 1:
                G.remove_edge(u, w)
                changed = True
    assert set(G.nodes) == {"v0", "v1"} and list(G.edges()) == [("v0", "v1")]


def test_aliases_and_n_for_blocks():
    assert gen.generate("residual", 4, n=3) == gen.residual_stack(3, 4)
    assert gen.generate("layered", 4, n=9) == gen.layered_dag(9, 4)
    assert gen.generate("dense_stack", 4, n=2) == gen.dense_stack(2, 4)


def test_bad_parameters():
    with pytest.raises(InstanceError) as ei:
        gen.generate("transformer", 1)
    assert ei.value.path == "kind"
    with pytest.raises(InstanceError) as ei:
        gen.chain(0, 1)
    assert ei.value.path == "n"
    with pytest.raises(InstanceError) as ei:
        gen.chain(3, -1)
    assert ei.value.path == "seed"
    with pytest.raises(InstanceError) as ei:
        gen.layered_dag(10, 1, density=1.5)
    assert ei.value.path == "density"
    with pytest.raises(InstanceError) as ei:
        gen.chain(3, 1, costs="normal")
    assert ei.value.path == "costs"
    with pytest.raises(InstanceError) as ei:
        gen.generate("chain", 1, n=3, widht=2)
    assert ei.value.path == "params.widht" and "valid parameters: n, costs" in str(ei.value)


# ---------------------------------------------------------------------- properties
def _brute_articulation(g: DNNGraph) -> tuple[int, ...]:
    """v is on every input->output path iff removing v leaves no path from an input to an output."""
    out = []
    for v in g.order:
        ins = [i for i in g.inputs if i != v]
        outs = set(o for o in g.outputs if o != v)
        seen = set(ins)
        dq = deque(ins)
        hit = False
        while dq and not hit:
            x = dq.popleft()
            if x in outs:
                hit = True
                break
            for y in g.succ(x):
                if y != v and y not in seen:
                    seen.add(y)
                    dq.append(y)
        if not hit:
            out.append(v)
    return tuple(out)


@st.composite
def graphs(draw):
    kind = draw(st.sampled_from(gen.KINDS))
    seed = draw(st.integers(0, 2**32 - 1))
    costs = draw(st.sampled_from(gen.COSTS))
    if kind == "chain":
        p = {"n": draw(st.integers(1, 20))}
    elif kind == "layered_dag":
        p = {"n": draw(st.integers(1, 30)), "width": draw(st.integers(1, 5)),
             "density": draw(st.floats(0.0, 1.0)), "max_skip": draw(st.integers(1, 3))}
    elif kind == "series_parallel":
        p = {"n": draw(st.integers(2, 30)), "p_parallel": draw(st.floats(0.0, 1.0))}
    else:
        p = {"blocks": draw(st.integers(0, 4))}
    return gen.generate(kind, seed, costs=costs, **p)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_generated_graph_properties(g):
    # acyclic (independent check with networkx) and indices topological
    G = g.to_networkx()
    assert nx.is_directed_acyclic_graph(G) and G.number_of_nodes() == len(g)
    for e in g.edges:
        assert g.index(e.src) < g.index(e.dst)
    # every layer reachable from an input
    seen = set(g.inputs)
    dq = deque(g.inputs)
    while dq:
        x = dq.popleft()
        for y in g.succ(x):
            if y not in seen:
                seen.add(y)
                dq.append(y)
    assert seen == set(g.order)
    # numbers valid and the graph survives a JSON round trip
    for lay in g.layers:
        for f in ("fwd_flop", "bwd_flop", "out_bytes", "param_bytes"):
            v = getattr(lay, f)
            assert math.isfinite(v) and v >= 0
    assert DNNGraph.from_dict(json.loads(json.dumps(g.to_dict()))) == g
    # articulation layers agree with the definition
    assert g.articulation_layers == _brute_articulation(g)
    # SESE blocks partition the layers; edges stay inside a block or go from a block's last layer
    # into the next block
    blocks = g.sese_blocks()
    flat = [v for b in blocks for v in b]
    assert sorted(flat) == list(g.order) and len(flat) == len(set(flat))
    bid = {v: k for k, b in enumerate(blocks) for v in b}
    for e in g.edges:
        s, t = g.index(e.src), g.index(e.dst)
        if bid[s] != bid[t]:
            assert bid[t] == bid[s] + 1 and s == max(blocks[bid[s]])
    # the collapsed graph is a chain with the same total compute
    c = g.collapse()
    assert c.is_chain() and len(c) == len(blocks)
    assert c.totals()["fwd_flop"] == pytest.approx(g.totals()["fwd_flop"], rel=1e-12)
    assert c.totals()["param_bytes"] == pytest.approx(g.totals()["param_bytes"], rel=1e-12)
