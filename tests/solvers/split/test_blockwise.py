"""Block-wise split (seed 000 Alg. 3, corrected): exact against brute force and the min cut.

Expected values come from brute-force enumeration of the predecessor-closed device sets
(:mod:`splitopt.solvers.split.bruteforce`), from the certified min cut, or from hand computation
(digest 000 check E).
"""

from __future__ import annotations

import numpy as np
import pytest

from splitopt.errors import InstanceError
from splitopt.instances import zoo
from splitopt.instances.graph import DNNGraph, Edge, Layer
from splitopt.instances.importers import pipedream
from splitopt.instances.platform import mbps
from splitopt.instances.split import SplitInstance, generate
from splitopt.models.split import evaluate
from splitopt.solvers.split import bruteforce, mincut
from splitopt.solvers.split.blockwise import blockwise, blockwise_detailed


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12


def _random_instance(seed: int) -> SplitInstance:
    """Seeded block-structured instance, cycling through generators, cost models and modes; a third
    of them violate Assumption 1 on random layers, some carry pins, some upload the raw input."""
    rng = np.random.default_rng(seed)
    kind = ("residual_stack", "inception_stack", "dense_stack")[seed % 3]
    blocks = int(rng.integers(1, 4))
    costs = "lognormal" if seed % 4 == 3 else "uniform"
    mode = "inference" if seed % 5 == 4 else "training"
    inst = generate(seed, kind=kind, n=4 * blocks, mode=mode, iterations=int(rng.integers(1, 20)),
                    up_mbps=float(rng.choice([1.0, 20.0, 300.0])), down_mbps=float(rng.choice([5.0, 100.0])),
                    costs=costs)
    while len(inst.graph) > 18:   # brute force stays cheap
        blocks -= 1
        inst = generate(seed, kind=kind, n=4 * max(blocks, 1), mode=mode, costs=costs)
        if blocks <= 1:
            break
    changes = {}
    n = len(inst.graph)
    if seed % 3 == 1:   # break Assumption 1 on some layers (device faster than the server there)
        dev = np.array(inst.device_s)
        srv = np.array(inst.server_s)
        flip = rng.random(n) < 0.4
        srv = np.where(flip, dev * rng.uniform(1.0, 5.0, n), srv)
        changes.update(device_s=tuple(dev), server_s=tuple(srv))
    if seed % 7 == 2:
        names = inst.graph.names
        changes["pin_server"] = (names[-1],)
    if mode == "inference" and seed % 2 == 0:
        changes["input_bytes"] = float(rng.uniform(1e4, 1e7))
    return inst.replace(**changes) if changes else inst


@pytest.mark.parametrize("chunk", range(6))
def test_blockwise_equals_bruteforce_on_block_graphs(chunk):
    """>= 150 seeded random graphs of block structure (30 per chunk x 6 chunks = 180)."""
    n_abstracted = 0
    for seed in range(chunk * 30, chunk * 30 + 30):
        inst = _random_instance(seed)
        best, _names, _ = bruteforce.solve_detailed(inst, max_layers=22)
        det = blockwise_detailed(inst)
        got, _ = evaluate(inst, det["device"])
        assert close(got, best), (seed, got, best)
        n_abstracted += len(det["groups"])
    assert n_abstracted > 0   # the abstraction is actually exercised


def _real_instances():
    out = []
    for nm in ("alexnet", "vgg16", "resnet18", "resnet50", "googlenet", "inception_v3", "mobilenet_v2",
               "densenet121", "tiny_yolov2", "yolov2", "resnet34", "resnet101", "resnet152"):
        out.append(("zoo:" + nm, zoo.get(nm), "flops"))
    for nm in pipedream.packaged_profiles():
        out.append(("pipedream:" + nm, pipedream.load_packaged(nm), "measured"))
    return out


REAL = _real_instances()


@pytest.mark.parametrize("name,graph,timing", REAL, ids=[r[0] for r in REAL])
def test_blockwise_equals_mincut_on_real_graphs(name, graph, timing):
    for up, n_it in ((1.0, 1), (20.0, 10), (500.0, 50)):
        if timing == "measured":
            inst = SplitInstance.from_graph(graph, up_bytes_per_s=mbps(up), iterations=n_it, timing="measured",
                                            device_slowdown=8.0)
        else:
            inst = SplitInstance.from_graph(graph, up_bytes_per_s=mbps(up), iterations=n_it,
                                            device_flops=2e11, server_flops=2e13)
        ref = mincut.solve_detailed(inst)
        got, _ = evaluate(inst, blockwise(inst))
        assert close(got, evaluate(inst, ref.device)[0])
        assert got >= ref.lower_bound * (1 - 1e-12)


def test_real_graph_is_actually_reduced():
    inst = SplitInstance.from_graph(zoo.get("resnet18"), up_bytes_per_s=mbps(20), device_flops=1e11,
                                    server_flops=1e13)
    det = blockwise_detailed(inst)
    # 8 BasicBlocks: each articulation region {conv1, bn1, relu1, conv2, bn2, (downsample), add}
    # passes the transmit-once rule (an inner cut always pays the block input, which feeds the add)
    assert sum(1 for grp in det["groups"] if any(nm.endswith(".add") for nm in grp)) == 8
    assert det["vertices"] < len(inst.graph) / 3


# ---------------------------------------------------------------------- digest check E
def check_e_instance() -> SplitInstance:
    """Digest 000 §7 E6a: pre -> v_in -> block{x -> y1,y2,y3 -> out} -> post.

    Sizes a_in = 10, a_x = 4, a_yi = 20 (bytes); N = 10, R_D = R_S = 1 byte/s, so one byte on the
    link costs N (1/R_D + 1/R_S) = 20 s. Compute (device, server) seconds per iteration: y_i and out
    (100, 0) (prohibitive on the device), post (100, 8); the rest 0. Assumption 1 holds.
    By hand: cut after x: tensor x 4 * 20 = 80, server compute of post 8 * 10 = 80 -> 160 (optimum);
    cut after v_in (the best the abstracted graph can do): 10 * 20 + 80 = 280; cut after pre:
    100 * 20 + 80 = 2080; any y_i on the device costs >= 1000.
    """
    spec = [("pre", 100.0, 0, 0, None), ("v_in", 10.0, 0, 0, None), ("x", 4.0, 0, 0, "B1"),
            ("y1", 20.0, 100, 0, "B1"), ("y2", 20.0, 100, 0, "B1"), ("y3", 20.0, 100, 0, "B1"),
            ("out", 1.0, 100, 0, "B1"), ("post", 1.0, 100, 8, None)]
    layers = [Layer(nm, out_bytes=a, block=b, block_kind="inception" if b else None) for nm, a, _, _, b in spec]
    edges = [("pre", "v_in"), ("v_in", "x"), ("x", "y1"), ("x", "y2"), ("x", "y3"), ("y1", "out"), ("y2", "out"),
             ("y3", "out"), ("out", "post")]
    g = DNNGraph(layers, [Edge(*e) for e in edges], name="check-E")
    return SplitInstance(graph=g, device_s=[s[2] for s in spec], server_s=[s[3] for s in spec],
                         up_bytes_per_s=1.0, down_bytes_per_s=1.0, iterations=10)


def test_check_e_paper_variant_abstracts_wrongly():
    inst = check_e_instance()
    best, names, _ = bruteforce.solve_detailed(inst)
    assert close(best, 160.0) and names == ["pre", "v_in", "x"]
    paper = blockwise_detailed(inst, variant="paper")
    assert paper["groups"] == [["x", "y1", "y2", "y3", "out"]]
    assert close(evaluate(inst, paper["device"])[0], 280.0)
    assert paper["device"] == ["pre", "v_in"]


def test_check_e_corrected_variant_is_optimal():
    inst = check_e_instance()
    for regions in ("sese", "labels"):
        det = blockwise_detailed(inst, regions=regions)
        assert close(evaluate(inst, det["device"])[0], 160.0)
        assert ["x", "y1", "y2", "y3", "out"] not in det["groups"]


def test_check_e_block_cut_values():
    """a_B^in = 10; plain min cut 10 (x's tensor counted three times: 12 > 10); transmit-once 4."""
    from splitopt.solvers.split.blockwise import _graph_data

    inst = check_e_instance()
    (reg,) = [r for r in _graph_data(inst.graph).labels]
    assert close(reg.a_in, 10.0)
    assert close(reg.a_min_plain, 10.0)
    assert close(reg.a_min, 4.0)
    assert reg.passes_paper and not reg.passes


def test_assumption_1_violation_keeps_block_expanded():
    """Residual block whose inner layer is cheaper on the device than on the server: the size rule
    passes (an inner cut pays the skip tensor anyway) but Theorem 2 needs Assumption 1.

    input -> e -> {c1 -> c2 -> add, e -> add}; bytes: e 10, c1 10, c2 8, add 1. N = 1, R = 1
    (2 s per byte). Device/server seconds: c1 (0, 100), add (1000, 0), others (0, 0).
    Transmit-once block cut: {e} 10, {e, c1} 10 + 10, {e, c1, c2} 10 + 8, so a_min = a_in = 10
    (the rule passes). By hand: device {input, e, c1, c2}, cut tensors e and c2: 2 * 18 = 36 s
    (unique: {input, e, c1} pays 2 * 20 = 40); with the block uniform, {input, e} costs
    100 (c1 on the server) + 2 * 10 = 120 s and {input} costs 100 + 2 * 1 = 102 s (the best).
    """
    layers = [Layer("input", out_bytes=1.0), Layer("e", out_bytes=10.0), Layer("c1", out_bytes=10.0),
              Layer("c2", out_bytes=8.0), Layer("add", out_bytes=1.0)]
    edges = [("input", "e"), ("e", "c1"), ("c1", "c2"), ("c2", "add"), ("e", "add")]
    g = DNNGraph(layers, [Edge(*e) for e in edges])
    inst = SplitInstance(graph=g, device_s=[0, 0, 0, 0, 1000], server_s=[0, 0, 100, 0, 0],
                         up_bytes_per_s=1.0, down_bytes_per_s=1.0)
    best, names, _ = bruteforce.solve_detailed(inst)
    assert close(best, 36.0) and names == ["c1", "c2", "e", "input"]
    assert close(evaluate(inst, blockwise(inst))[0], 36.0)
    assert close(evaluate(inst, blockwise(inst, variant="paper"))[0], 102.0)


def test_bad_arguments_raise_instance_error():
    inst = check_e_instance()
    with pytest.raises(InstanceError, match="variant"):
        blockwise(inst, variant="printed")
    with pytest.raises(InstanceError, match="regions"):
        blockwise(inst, regions="modules")
