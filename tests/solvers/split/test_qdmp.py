"""QDMP (solvers/qdmp.py): corrected variant == mincut == brute force; Algorithm 1 details."""


import networkx as nx
import pytest

from cases.split import close, random_instance  # noqa: E402
from splitopt.errors import InstanceError  # noqa: E402
from splitopt.instances.graph import DNNGraph, Layer  # noqa: E402
from splitopt.models.split import evaluate  # noqa: E402
from splitopt.solvers.split import bruteforce, mincut, qdmp  # noqa: E402


def test_corrected_qdmp_equals_mincut_and_bruteforce():
    for s in range(300):
        inst = random_instance(s)
        best = bruteforce.solve_detailed(inst)[0]
        r = qdmp.solve_detailed(inst)
        obj = evaluate(inst, r.device)[0]
        assert close(obj, best), (s, obj, best)
        assert close(r.value, obj), s
        assert close(obj, evaluate(inst, mincut.solve(inst))[0]), s


def test_articulation_points_match_networkx_and_dominators():
    for s in range(0, 300, 3):
        g = random_instance(s).graph
        n = len(g)
        edges = [(g.index(e.src), g.index(e.dst)) for e in g.edges]
        und = nx.MultiGraph()
        und.add_nodes_from(range(n))
        und.add_edges_from(edges)
        if nx.is_connected(und):
            assert sorted(qdmp.articulation_points(n, edges, 0)) == sorted(nx.articulation_points(und)), s
        # corrected boundaries = layers on every input->output path, minus a unique input/output
        expect = set(g.articulation_layers)
        if len(g.inputs) == 1:
            expect.discard(g.inputs[0])
        if len(g.outputs) == 1:
            expect.discard(g.outputs[0])
        assert set(qdmp.cut_layers(g)) == expect, s


def test_bridge_test_is_coarser_on_residual_chain():
    # a -> b -> c -> d -> e with skips a -> c and c -> e: cut vertex c only ('>=');
    # the bridge test '>' finds none (no bridge), digest 002 §3.2
    g = DNNGraph([Layer(x) for x in "abcde"], [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("a", "c"),
                                              ("c", "e")])
    assert [g.layers[i].name for i in qdmp.cut_layers(g)] == ["c"]
    assert qdmp.cut_layers(g, variant="paper") == []


def test_parallel_edges_use_edge_ids():
    # a -> b twice (two ports) and b -> c: in the multigraph a-b is not a bridge, so with the
    # '>' test b is not reported (the a-b pair is a 2-cycle); with '>=' b is a cut vertex.
    g = DNNGraph([Layer("a", extra_out_bytes=(1.0,)), Layer("b"), Layer("c")], [("a", "b", 0), ("a", "b", 1),
                                                                                 ("b", "c")])
    edges = [(g.index(e.src), g.index(e.dst)) for e in g.edges]
    assert qdmp.articulation_points(3, edges, 0) == [1]
    assert qdmp.articulation_points(3, edges, 0, strict=True) == [1]  # b-c is a bridge


def test_unknown_variant():
    with pytest.raises(InstanceError, match="variant"):
        qdmp.solve(random_instance(0), variant="x")
