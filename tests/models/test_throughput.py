"""The throughput evaluator (hand-computed), JSON round trip, field errors and the closed forms."""

import math

import pytest

from cases.throughput import skip_counterexample
from splitopt.errors import InfeasibleSolution, InstanceError
from splitopt.instances import io
from splitopt.instances.throughput import ThroughputInstance, generate, table2_platform
from splitopt.instances.zoo import get
from splitopt.models.throughput import acceleration_threshold, evaluate, throughput_upper_bound


def fanout(**kw):
    # L0 -> {L1, L2}, both consumers able to sit on n1; tensor of L0: 10 bytes; rates 2 bytes/s
    return ThroughputInstance(("L0", "L1", "L2"), (4.0, 2.0, 2.0), ((0, (1, 2), 10.0),), ("n0", "n1"), (1.0, 2.0),
                              ((0.0, 2.0), (2.0, 0.0)), **kw)


def test_evaluator_by_hand():
    inst = skip_counterexample()
    T, br = evaluate(inst, ["n1", "n2", "n1", "n1"])
    assert T == 5.0 and br["compute_max"] == 5.0 and br["link_max"] == 5.0 and br["splits"] == 2
    assert br["throughput"] == pytest.approx(0.2)
    assert evaluate(inst, ["n1", "n2", "n2", "n2"])[0] == 9.0  # link 1->2 carries 5 + 4
    assert evaluate(inst, [0, 0, 0, 0])[0] == 8.0  # indices accepted; all on one node: compute 8


def test_fanout_once_or_per_edge_and_link_models():
    # L0 on n0 (4 s), L1 and L2 on n1 (4 FLOP / 2 = 2 s); tensor 10 bytes at 2 bytes/s = 5 s once, 10 s per edge
    assert evaluate(fanout(), ["n0", "n1", "n1"])[0] == 5.0
    assert evaluate(fanout(transfer="per_edge"), ["n0", "n1", "n1"])[0] == 10.0
    # L2 back on n0: both directions used? no, only n0 -> n1 (L1) ; half-duplex = full-duplex here
    assert evaluate(fanout(link_model="half-duplex"), ["n0", "n1", "n0"])[0] == 6.0  # compute n0: 4 + 2
    inst = skip_counterexample()
    p = ["n1", "n2", "n1", "n1"]
    assert evaluate(inst.with_(link_model="half-duplex"), p)[0] == 8.0  # 5 + 3 on one pair
    assert evaluate(inst.with_(link_model="shared"), p)[0] == 8.0


def test_constraints_are_enforced():
    inst = skip_counterexample()
    p = ["n1", "n2", "n1", "n1"]
    with pytest.raises(InfeasibleSolution, match="max_splits"):
        evaluate(inst.with_(max_splits=1), p)
    with pytest.raises(InfeasibleSolution, match="two separate runs"):
        evaluate(inst.with_(contiguous=True), p)
    with pytest.raises(InfeasibleSolution, match="pinned"):
        evaluate(inst.with_(pins={"L2": "n1"}), p)
    mem = inst.with_(mem_bytes=(1.0, 1.0, 1.0, 1.0), node_memory_bytes=(2.0, None))
    with pytest.raises(InfeasibleSolution, match="memory"):
        evaluate(mem, p)
    nolink = inst.with_(rates=((0.0, 0.0), (1.0, 0.0)))
    with pytest.raises(InfeasibleSolution, match="no link"):
        evaluate(nolink, p)
    with pytest.raises(InstanceError, match=r"assignment\[1\]"):
        evaluate(inst, ["n1", "nX", "n1", "n1"])


def test_json_round_trip_and_field_errors(tmp_path):
    inst = generate(3, n_layers=6, n_nodes=3, pins={"L0": "n1"}, contiguous=True)
    io.save(inst, tmp_path / "t.json")
    back = io.load(tmp_path / "t.json")
    assert back == inst
    d = inst.to_dict()
    d["tensors"][0]["bytes"] = -3
    with pytest.raises(InstanceError, match=r"^tensors\[0\]\.bytes: must be >= 0"):
        ThroughputInstance.from_dict(d)
    d = inst.to_dict()
    d["link_model"] = "wifi"
    with pytest.raises(InstanceError, match="^link_model"):
        ThroughputInstance.from_dict(d)
    with pytest.raises(InstanceError, match=r"^pins\.L9"):
        inst.with_(pins={"L9": "n0"})


def test_zoo_yolov2_instance_and_table2():
    g = get("yolov2")
    flops, rates = table2_platform(4)
    inst = ThroughputInstance.from_graph(g, flops, rates, max_splits=3)
    assert inst.n_layers == len(g) and sum(inst.flop) == pytest.approx(sum(l.fwd_flop for l in g.layers))
    # the passthrough route makes YOLOv2 a DAG: some tensor has a consumer beyond the next layer
    assert any(max(c) > p + 1 for p, c, _b in inst.tensors)
    assert flops[0] == 1.57e9 and rates[0][1] == 1.4e9
    assert rates[0][1] / flops[0] == pytest.approx(0.892, abs=1e-3)  # Table 2 prints 0.98 (digest §4.3)


def test_closed_forms():
    # homogeneous chain: 2 nodes, eta = 1, theta = 1, c = (1, 1), one 0.5-byte tensor
    inst = ThroughputInstance(("a", "b"), (1.0, 1.0), ((0, (1,), 0.5),), ("n0", "n1"), (1.0, 1.0),
                              ((0.0, 1.0), (1.0, 0.0)))
    assert acceleration_threshold(inst) == 0.25  # s_min / sum c
    # optimum: split, period max(1, 1, 0.5) = 1 -> C* = 1; corrected eq. 12: max(1/2, min(2/2, 1/0.5)) = 1
    assert throughput_upper_bound(inst) == 1.0
    assert 1.0 / evaluate(inst, ["n0", "n1"])[0] <= throughput_upper_bound(inst)
    # eq. 12 as printed with S = 0 gives C < 0: impossible (digest §5.2 item 5)
    assert throughput_upper_bound(inst.with_(max_splits=0), corrected=False) == 0.0
    assert math.isinf(acceleration_threshold(inst.with_(tensors=())))
