"""The split family: instance validation, evaluator (hand-computed), MILP/LP, registry."""

import argparse

import pytest

from cases.split import close, random_instance  # noqa: E402
from splitopt import families  # noqa: E402
from splitopt.errors import InfeasibleSolution, InstanceError  # noqa: E402
from splitopt.instances import io  # noqa: E402
from splitopt.instances.graph import DNNGraph, Layer  # noqa: E402
from splitopt.instances.platform import two_tier  # noqa: E402
from splitopt.instances.sources import GraphSource
from splitopt.instances.split import SplitInstance  # noqa: E402
from splitopt.models import split as msplit  # noqa: E402
from splitopt.solvers.split import bruteforce  # noqa: E402


def diamond(**kw):
    # in -> {a, b} -> out ; `in` has a second output port consumed by `out`
    g = DNNGraph([Layer("in", out_bytes=100, param_bytes=0, extra_out_bytes=(7,)),
                  Layer("a", out_bytes=10, param_bytes=40), Layer("b", out_bytes=20, param_bytes=60),
                  Layer("out", out_bytes=1, param_bytes=8)],
                 [("in", "a"), ("in", "b"), ("a", "out"), ("b", "out"), ("in", "out", 1)])
    args = dict(device_s=[1.0, 2.0, 3.0, 4.0], server_s=[0.5, 0.25, 0.5, 1.0], up_bytes_per_s=10.0,
                down_bytes_per_s=20.0, mode="training", iterations=3)
    args.update(kw)
    return SplitInstance(g, **args)


def test_evaluator_training_by_hand():
    inst = diamond()
    # D = {in, a}; N = 3, R_D = 10, R_S = 20 -> 1/R_D + 1/R_S = 0.15
    # device compute 3*(1+2) = 9; server compute 3*(0.5+1) = 4.5
    # cut tensors: in[0] (consumer b on server) 100 bytes, in[1] (-> out) 7 bytes, a -> out 10 bytes
    #   activations 3*(117)/10 = 35.1; gradients 3*117/20 = 17.55
    # parameters: (0 + 40) * 0.15 = 6
    obj, br = msplit.evaluate(inst, ["a", "in"])
    assert br == pytest.approx({"device_compute": 9.0, "server_compute": 4.5, "activations": 35.1,
                                "gradients": 17.55, "parameters": 6.0, "input": 0.0})
    assert obj == pytest.approx(9 + 4.5 + 35.1 + 17.55 + 6)


def test_evaluator_inference_by_hand_with_input_upload():
    inst = diamond(mode="inference", iterations=1, input_bytes=500.0)
    assert inst.input_policy == "upload"
    # all on server: compute 0.5+0.25+0.5+1 = 2.25, raw input 500/10 = 50
    obj, br = msplit.evaluate(inst, [])
    assert br["input"] == pytest.approx(50.0) and obj == pytest.approx(52.25)
    # D = {in, a, b}: compute 1+2+3 = 6 + 1 (out) ; tensors a, b, in[1] -> out: (10+20+7)/10 = 3.7
    obj, br = msplit.evaluate(inst, ["in", "a", "b"])
    assert br["gradients"] == 0.0 and br["parameters"] == 0.0
    assert obj == pytest.approx(6 + 1 + 3.7)


def test_fanout_tensor_charged_once():
    inst = diamond(mode="inference", iterations=1)
    # D = {in}: in[0] goes to a and b (both server) -> 100 bytes once; in[1] -> out 7 bytes
    _, br = msplit.evaluate(inst, ["in"])
    assert br["activations"] == pytest.approx(10.7)


def test_infeasible_assignments():
    inst = diamond(pin_server=("b",))
    with pytest.raises(InfeasibleSolution, match="'a' -> 'out'"):
        msplit.evaluate(inst, ["in", "out"])
    with pytest.raises(InfeasibleSolution, match="input layer"):
        msplit.evaluate(inst, [])
    with pytest.raises(InfeasibleSolution, match="'b' is pinned to the server"):
        msplit.evaluate(inst, ["in", "b"])
    with pytest.raises(InstanceError, match=r"assignment\[1\]: unknown layer 'zz'"):
        msplit.evaluate(inst, ["in", "zz"])


@pytest.mark.parametrize("field,value,msg", [
    ("up_bytes_per_s", 0.0, "up_bytes_per_s: must be > 0"),
    ("down_bytes_per_s", -1.0, "down_bytes_per_s: must be > 0"),
    ("up_bytes_per_s", float("nan"), "up_bytes_per_s: must be a number, got NaN"),
    ("device_s", [1.0, float("nan"), 1.0, 1.0], r"device_s\[1\]: must be a number, got NaN"),
    ("server_s", [1.0, 1.0, -2.0, 1.0], r"server_s\[2\]: must be >= 0"),
    ("device_s", [1.0], "device_s: has 1 entries but graph"),
    ("pin_device", ("nope",), r"pin_device\[0\]: unknown layer 'nope'"),
    ("pin_server", ("a", "ghost"), r"pin_server\[1\]: unknown layer 'ghost'"),
    ("mode", "train", "mode: must be one of"),
    ("iterations", 0, "iterations: must be an integer >= 1"),
    ("input_policy", "maybe", "input_policy"),
])
def test_bad_input(field, value, msg):
    with pytest.raises(InstanceError, match=msg):
        diamond(**{field: value})


def test_contradictory_and_backward_pins():
    with pytest.raises(InstanceError, match=r"pin_server\[0\]: layer 'a' is also pinned to the device"):
        diamond(pin_device=("a",), pin_server=("a",))
    with pytest.raises(InstanceError, match=r"pin_server\[0\]: layer 'a' is pinned to the server but feeds 'out'"):
        diamond(pin_device=("out",), pin_server=("a",))
    with pytest.raises(InstanceError, match="input layer"):
        diamond(pin_server=("in",))
    diamond(pin_server=("in",), input_policy="upload")  # allowed when the input may be uploaded


def test_json_round_trip_and_error_paths(tmp_path):
    inst = diamond(pin_device=("a",), input_bytes=3.0)
    p = io.save(inst, tmp_path / "i.json")
    back = io.load(p)
    assert back.to_dict() == inst.to_dict()
    assert msplit.evaluate(back, ["in", "a"]) == msplit.evaluate(inst, ["in", "a"])
    d = io.envelope(inst)
    d["data"]["up_bytes_per_s"] = 0
    with pytest.raises(InstanceError, match=r"^data\.up_bytes_per_s: must be > 0"):
        io.from_envelope(d)
    d = io.envelope(inst)
    d["data"]["graph"]["layers"][1]["out_bytes"] = -3
    with pytest.raises(InstanceError, match=r"data\.graph\.layers\[1\]\.out_bytes"):
        io.from_envelope(d)


def test_from_graph_flops_and_measured():
    g = DNNGraph([Layer("x", fwd_flop=2e9, bwd_flop=4e9, fwd_seconds={"gpu": 0.01}, bwd_seconds={"gpu": 0.02}),
                  Layer("y", fwd_flop=1e9, bwd_flop=1e9, fwd_seconds={"gpu": 0.03}, bwd_seconds={"gpu": 0.01})],
                 [("x", "y")])
    inst = SplitInstance.from_graph(g, two_tier(1e9, 1e11, 1e6, 2e6), mode="training")
    assert inst.device_s == pytest.approx((6.0, 2.0)) and inst.server_s == pytest.approx((0.06, 0.02))
    assert inst.up_bytes_per_s == 1e6 and inst.down_bytes_per_s == 2e6
    inf = SplitInstance.from_graph(g, up_bytes_per_s=1e6, mode="inference", device_flops=1e9, server_flops=1e10)
    assert inf.device_s == pytest.approx((2.0, 1.0)) and inf.down_bytes_per_s == 1e6
    meas = SplitInstance.from_graph(g, up_bytes_per_s=1e6, mode="training", device_slowdown=4.0,
                                    server_speedup=2.0)
    assert meas.device_s == pytest.approx((0.12, 0.16)) and meas.server_s == pytest.approx((0.015, 0.02))
    with pytest.raises(InstanceError, match="device_flops"):
        SplitInstance.from_graph(g, up_bytes_per_s=1e6, timing="flops")


def test_milp_equals_bruteforce_and_lp_is_integral():
    for s in range(0, 400, 10):  # 40 instances by default; all kinds
        inst = random_instance(s)
        best = bruteforce.solve_detailed(inst)[0]
        sol = families.solve(inst, "milp")
        assert sol.status == "optimal"
        assert close(sol.objective, best, rel=1e-9), (s, sol.objective, best)
        lp = families.solve(inst, "lp")
        assert lp.info["max_fractionality"] <= 1e-6, s
        assert close(lp.objective, best, rel=1e-9), s
        assert lp.bound == pytest.approx(best, rel=1e-9)


@pytest.mark.slow
def test_milp_equals_bruteforce_full():
    for s in range(360):
        inst = random_instance(s)
        best = bruteforce.solve_detailed(inst)[0]
        assert close(families.solve(inst, "milp").objective, best, rel=1e-9), s
        assert families.solve(inst, "lp").info["max_fractionality"] <= 1e-6, s


def test_milp_model_structure():
    import pyomo.environ as pyo

    inst = diamond(pin_device=("a",))
    m = msplit.build_milp(inst)
    assert isinstance(m.obj, pyo.Objective)
    assert len(m.x) == 4 and len(m.y) == 4          # tensors in[0], in[1], a, b
    assert len(m.closure) == 5 and m.x[1].fixed and m.x[0].fixed  # edge count; a and input pinned
    # objective at the all-device point equals the evaluator
    for v in range(4):
        m.x[v].set_value(0)
        m.d[v].set_value(1)
    for k in m.y:
        m.y[k].set_value(0)
    assert pyo.value(m.obj) == pytest.approx(msplit.evaluate(inst, ["in", "a", "b", "out"])[0])


def test_registry_and_exact_flags():
    fam = families.get_family("split")
    assert fam.instance_type is SplitInstance and fam.reference_algorithm == "milp"
    exact = {k for k, a in fam.algorithms.items() if a.exact}
    assert {"mincut", "qdmp", "chain", "bruteforce", "milp", "lp"} <= exact
    assert not ({"dads", "mincut_paper", "plain_mincut", "qdmp_paper", "device_only", "server_only"} & exact)
    inst = random_instance(5)
    best = bruteforce.solve_detailed(inst)[0]
    for name in ("mincut", "qdmp", "bruteforce"):
        sol = families.solve(inst, name)
        assert close(sol.objective, best), name
    assert families.solve(inst).algorithm == fam.default_algorithm
    for name in ("device_only", "server_only"):
        sol = families.solve(inst, name)
        assert sol.objective >= best * (1 - 1e-12)
    text = fam.render(inst, families.solve(inst))
    assert "cost breakdown" in text and "device (" in text
    desc = fam.describe(inst)
    assert desc["layers"] == len(inst.graph) and desc["mode"] == inst.mode


def test_baselines_by_hand():
    inst = diamond(pin_server=("b",))
    fam = families.get_family("split")
    assert fam.algorithms["device_only"].func(inst) == ["a", "in"]     # b and out must stay on the server
    assert fam.algorithms["server_only"].func(inst) == ["in"]          # the pinned input stays


def test_make_arguments_and_generate():
    fam = families.get_family("split")
    parser = argparse.ArgumentParser()
    for a in fam.make_arguments:
        a.add_to(parser)
    args = parser.parse_args(["--device-flops", "1e9", "--server-flops", "1e11", "--up-mbps", "8",
                              "--mode", "inference", "--pin-device", "a"])
    source = GraphSource("diamond")
    source.graph = diamond().graph  # a source whose graph is already loaded
    inst = fam.make(source, args)
    assert inst.up_bytes_per_s == pytest.approx(1e6) and inst.pin_device == ("a",)
    assert inst.mode == "inference"
    a = fam.generate(3)
    b = fam.generate(3)
    assert a.to_dict() == b.to_dict() and len(a.graph) > 0
