"""DNNGraph: validation, order, structure (articulation layers, SESE blocks), collapse, JSON.

Expected values are derived by hand from the small graphs drawn in each test's comment.
"""

from __future__ import annotations

import json
import math

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph, Edge, Layer, chain


def L(name, **kw):
    return Layer(name, **kw)


def diamond():
    #     a
    #    / \
    #   b   c
    #    \ /
    #     d
    return DNNGraph([L("a", fwd_flop=1, out_bytes=10), L("b", fwd_flop=2, out_bytes=20, param_bytes=5),
                     L("c", fwd_flop=3, out_bytes=30, param_bytes=7), L("d", fwd_flop=4, out_bytes=40)],
                    [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")], name="diamond")


def residual():
    # in -> c1 -> c2 -> add -> fc,  in -> add (skip)
    return DNNGraph([L("in", out_bytes=8), L("c1", fwd_flop=10, out_bytes=4, param_bytes=100),
                     L("c2", fwd_flop=20, out_bytes=4, param_bytes=200), L("add", fwd_flop=1, out_bytes=8),
                     L("fc", fwd_flop=5, out_bytes=2, param_bytes=50)],
                    [("in", "c1"), ("c1", "c2"), ("c2", "add"), ("in", "add"), ("add", "fc")], name="res")


def inception():
    # in -> {b1 ; b2a -> b2b ; b3} -> cat -> out
    names = ["in", "b1", "b2a", "b2b", "b3", "cat", "out"]
    edges = [("in", "b1"), ("in", "b2a"), ("b2a", "b2b"), ("in", "b3"),
             ("b1", "cat"), ("b2b", "cat"), ("b3", "cat"), ("cat", "out")]
    return DNNGraph([L(n, fwd_flop=i + 1, out_bytes=10 * (i + 1)) for i, n in enumerate(names)], edges, name="inc")


# ---------------------------------------------------------------------- validation
def test_cycle_is_named():
    layers = [L("x"), L("a"), L("b"), L("c")]
    with pytest.raises(InstanceError) as ei:
        DNNGraph(layers, [("x", "a"), ("a", "b"), ("b", "c"), ("c", "a")])
    assert ei.value.path == "edges"
    msg = str(ei.value)
    assert "cyclic" in msg
    cyc = msg.split(": ")[-1].split(" -> ")
    assert cyc[0] == cyc[-1] and sorted(cyc[:-1]) == ["a", "b", "c"]
    assert "x" not in cyc


def test_cycle_without_input():
    with pytest.raises(InstanceError, match="no input layer"):
        DNNGraph([L("a"), L("b")], [("a", "b"), ("b", "a")])


def test_unknown_layer_in_edge():
    with pytest.raises(InstanceError) as ei:
        DNNGraph([L("a"), L("b")], [("a", "b"), ("b", "zz")])
    assert ei.value.path == "edges[1].dst" and "'zz'" in str(ei.value)
    with pytest.raises(InstanceError) as ei:
        DNNGraph([L("a"), L("b")], [("q", "b")])
    assert ei.value.path == "edges[0].src"


def test_duplicate_name_self_loop_duplicate_edge_bad_port():
    with pytest.raises(InstanceError) as ei:
        DNNGraph([L("a"), L("b"), L("a")], [])
    assert ei.value.path == "layers[2].name" and "duplicate" in str(ei.value)
    with pytest.raises(InstanceError) as ei:
        DNNGraph([L("a"), L("b")], [("a", "a")])
    assert ei.value.path == "edges[0]" and "self-loop" in str(ei.value)
    with pytest.raises(InstanceError) as ei:
        DNNGraph([L("a"), L("b")], [("a", "b"), ("a", "b")])
    assert ei.value.path == "edges[1]"
    with pytest.raises(InstanceError) as ei:
        DNNGraph([L("a"), L("b")], [Edge("a", "b", 1)])
    assert ei.value.path == "edges[0].port"
    with pytest.raises(InstanceError) as ei:
        DNNGraph([], [])
    assert ei.value.path == "layers"


@pytest.mark.parametrize("field,value,fragment", [
    ("out_bytes", -3.0, "must be >= 0, got -3"),
    ("fwd_flop", math.nan, "NaN"),
    ("param_bytes", math.inf, "finite"),
    ("bwd_flop", "12", "must be a number"),
])
def test_bad_numbers_name_the_field(field, value, fragment):
    with pytest.raises(InstanceError) as ei:
        DNNGraph([L("a"), L("b", **{field: value})], [("a", "b")])
    assert ei.value.path == f"layers[1].{field}"
    assert fragment in str(ei.value)


def test_bad_seconds_and_extra_outputs_name_the_field():
    with pytest.raises(InstanceError) as ei:
        DNNGraph([L("a", fwd_seconds={"gpu": math.nan})], [])
    assert ei.value.path == "layers[0].fwd_seconds.gpu"
    with pytest.raises(InstanceError) as ei:
        DNNGraph([L("a", extra_out_bytes=(1.0, -2.0))], [])
    assert ei.value.path == "layers[0].extra_out_bytes[1]"


def test_from_dict_paths():
    d = diamond().to_dict()
    d["layers"][2]["param_bytes"] = -1
    with pytest.raises(InstanceError) as ei:
        DNNGraph.from_dict(d)
    assert ei.value.path == "graph.layers[2].param_bytes"
    d = diamond().to_dict()
    d["layers"][0]["colour"] = "red"
    with pytest.raises(InstanceError) as ei:
        DNNGraph.from_dict(d)
    assert ei.value.path == "graph.layers[0].colour"
    d = diamond().to_dict()
    d["edges"].append(["d", "nowhere"])
    with pytest.raises(InstanceError) as ei:
        DNNGraph.from_dict(d)
    assert ei.value.path == "graph.edges[4].dst"


# ---------------------------------------------------------------------- order and adjacency
def test_topological_order_tie_break_by_given_order():
    # layers given as d, c, b, a; Kahn pops a, then b and c are ready: c was given first.
    g = DNNGraph([L("d"), L("c"), L("b"), L("a")], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    assert g.names == ["a", "c", "b", "d"]
    for e in g.edges:
        assert g.index(e.src) < g.index(e.dst)


def test_fan_in_fan_out_and_tensors():
    g = diamond()
    assert g.names == ["a", "b", "c", "d"]
    assert g.succ(0) == (1, 2) and g.pred(3) == (1, 2)
    assert g.fan_out(0) == 2 and g.fan_in(3) == 2 and g.fan_in(0) == 0 and g.fan_out(3) == 0
    assert g.inputs == (0,) and g.outputs == (3,)
    # a's tensor is sent once to both consumers
    assert g.tensors == ((0, 0, 10.0, (1, 2)), (1, 0, 20.0, (3,)), (2, 0, 30.0, (3,)))
    t = g.totals()
    assert t["fwd_flop"] == 10 and t["out_bytes"] == 100 and t["param_bytes"] == 12 and t["edges"] == 4


def test_is_chain():
    assert chain([{"fwd_flop": 1}, {"fwd_flop": 2}, {}]).is_chain()
    assert DNNGraph([L("a")], []).is_chain()
    assert not diamond().is_chain()
    # a path whose layers have an extra output port is not a plain chain
    assert not DNNGraph([L("a", extra_out_bytes=(3.0,)), L("b")], [("a", "b")]).is_chain()
    # two disconnected layers are not a chain
    assert not DNNGraph([L("a"), L("b")], []).is_chain()


# ---------------------------------------------------------------------- structure
def test_articulation_and_blocks_diamond():
    g = diamond()
    assert g.articulation_layers == (0, 3)
    assert g.sese_blocks() == [(0,), (1, 2, 3)]


def test_articulation_and_blocks_residual():
    g = residual()
    assert g.names == ["in", "c1", "c2", "add", "fc"]
    assert g.articulation_layers == (0, 3, 4)
    assert g.sese_blocks() == [(0,), (1, 2, 3), (4,)]


def test_articulation_and_blocks_inception():
    g = inception()
    assert g.names == ["in", "b1", "b2a", "b2b", "b3", "cat", "out"]
    assert g.articulation_layers == (0, 5, 6)
    assert g.sese_blocks() == [(0,), (1, 2, 3, 4, 5), (6,)]


def test_articulation_two_inputs_two_outputs():
    # x1, x2 -> m -> y : the inputs are not on every path, m and y are.
    g = DNNGraph([L("x1"), L("x2"), L("m"), L("y")], [("x1", "m"), ("x2", "m"), ("m", "y")])
    assert g.articulation_layers == (2, 3)
    assert g.sese_blocks() == [(0, 1, 2), (3,)]
    # a -> b, a -> c : only a is on every path to an output
    g = DNNGraph([L("a"), L("b"), L("c")], [("a", "b"), ("a", "c")])
    assert g.articulation_layers == (0,)
    assert g.sese_blocks() == [(0,), (1, 2)]
    assert g.collapse().is_chain()


def test_chain_every_layer_is_articulation():
    g = chain([{}] * 5)
    assert g.articulation_layers == (0, 1, 2, 3, 4)
    assert g.sese_blocks() == [(0,), (1,), (2,), (3,), (4,)]


# ---------------------------------------------------------------------- collapse
def test_collapse_sums_residual():
    g = residual()
    c = g.collapse()
    assert c.is_chain()
    assert c.names == ["in", "add", "fc"]
    mid = c.layers[1]
    assert mid.op == "block" and list(mid.meta["members"]) == ["c1", "c2", "add"]
    assert mid.fwd_flop == 10 + 20 + 1
    assert mid.param_bytes == 100 + 200
    assert mid.out_bytes == 8          # add's tensor leaves for fc
    assert c.layers[0].out_bytes == 8  # in's tensor (sent once to c1 and add)
    assert c.layers[2].out_bytes == 2  # graph output keeps its bytes
    assert c.totals()["fwd_flop"] == g.totals()["fwd_flop"]


def test_collapse_counts_shared_tensor_once_and_keeps_final_output():
    g = diamond()
    c = g.collapse([[0, 1], [2, 3]])
    # group {a,b} sends a's tensor (to c) and b's tensor (to d): 10 + 20; group {c,d} holds the output d
    assert [lay.out_bytes for lay in c.layers] == [30.0, 40.0]
    assert [lay.fwd_flop for lay in c.layers] == [3.0, 7.0]
    assert [lay.param_bytes for lay in c.layers] == [5.0, 7.0]
    # singletons reproduce the graph's data
    s = g.collapse([[0], [1], [2], [3]])
    assert [lay.out_bytes for lay in s.layers] == [10.0, 20.0, 30.0, 40.0]
    assert len(s.edges) == 4


def test_collapse_sums_seconds_and_rejects_bad_groups():
    g = DNNGraph([L("a", fwd_seconds={"gpu": 0.5}, bwd_seconds={"gpu": 1.0}),
                  L("b", fwd_seconds={"gpu": 0.25, "cpu": 2.0})], [("a", "b")])
    c = g.collapse([[0, 1]])
    assert dict(c.layers[0].fwd_seconds) == {"gpu": 0.75, "cpu": 2.0}
    assert dict(c.layers[0].bwd_seconds) == {"gpu": 1.0}
    with pytest.raises(InstanceError, match="two groups"):
        g.collapse([[0, 1], [1]])
    with pytest.raises(InstanceError, match="no group"):
        g.collapse([[0]])
    with pytest.raises(InstanceError, match="cyclic"):
        diamond().collapse([[0, 3], [1], [2]])


# ---------------------------------------------------------------------- JSON
def test_json_round_trip_keeps_everything():
    layers = [L("in", op="input", out_bytes=12.5, meta={"note": "x"}),
              L("lstm", op="LSTM", fwd_flop=3e9, bwd_flop=6e9, out_bytes=100, extra_out_bytes=(7.0, 9.0),
                param_bytes=4e6, mem_bytes=1e7, fwd_seconds={"gpu": 0.001}, bwd_seconds={"gpu": 0.002},
                block="enc", block_kind="rnn"),
              L("g1", op="__getitem__"), L("g2", op="__getitem__")]
    g = DNNGraph(layers, [("in", "lstm"), Edge("lstm", "g1", 0), Edge("lstm", "g2", 2)], name="rt",
                 meta={"source": "hand"})
    text = json.dumps(g.to_dict())
    g2 = DNNGraph.from_dict(json.loads(text))
    assert g2 == g
    assert g2.meta == {"source": "hand"}
    assert g2.layer("lstm").extra_out_bytes == (7.0, 9.0)
    assert {(e.src, e.dst, e.port) for e in g2.edges} == {("in", "lstm", 0), ("lstm", "g1", 0), ("lstm", "g2", 2)}
    assert g2.layer("lstm").port_bytes(2) == 9.0


def test_10000_layer_dag_round_trips():
    """Load time is measured in benchmarks/graph_io.py, not asserted here."""
    from splitopt.instances.generate import layered_dag

    g = layered_dag(10_000, seed=11)
    text = json.dumps(g.to_dict())
    g2 = DNNGraph.from_dict(json.loads(text))
    assert len(g2) == 10_000 and len(g2.edges) == len(g.edges)
    assert g2 == g
