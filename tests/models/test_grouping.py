"""grouping family: instance validation, JSON, evaluator (hand-computed), Perf recurrence vs closed
form, both MILPs vs brute force, zoo-based instances (digest 003 §3.2/§3.4 figures)."""

from __future__ import annotations

import math
import random

import pytest

from splitopt.errors import InstanceError
from splitopt.families import get_family, solve
from splitopt.instances import io
from splitopt.instances.grouping import GroupingInstance, generate
from splitopt.models.grouping import build_milp_interval, evaluate, interval_costs, perf_closed_form, perf_recurrence
from splitopt.solvers.grouping.bruteforce import bruteforce


def close(a, b, rel=1e-9, abs_=1e-12):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def tiny(**kw):
    # t in s, s in bytes; B = 100 B/s so s/B are round numbers
    base = dict(t=[1.0, 2.0, 3.0, 4.0], s=[100.0, 300.0, 50.0, 200.0], c=[1, 2, 0, 3], k=2,
                bandwidth_bytes_per_s=100.0, requests=3)
    base.update(kw)
    t, s, c = base.pop("t"), base.pop("s"), base.pop("c")
    return GroupingInstance.from_arrays(t, s, c, **base)


# ---------------------------------------------------------------------------- evaluator by hand

def test_perf_hand_computed():
    inst = tiny()
    # [1,2 | 3,4]: w1 = 3 + 300/100 = 6, w2 = 7 + 200/100 = 9 (final transfer charged, thesis)
    # Perf = 6 + 9 + (3-1)*9 = 33
    v, bd = evaluate(inst, [2, 2])
    assert v == pytest.approx(33.0)
    assert bd["stage_s"] == pytest.approx([6.0, 9.0])
    assert bd["compute_s"] == pytest.approx([3.0, 7.0])
    assert bd["transfer_s"] == pytest.approx([3.0, 2.0])
    # [1 | 2,3,4]: w = 1+1 = 2, 9+2 = 11 -> 13 + 22 = 35
    assert evaluate(inst, [1, 3])[0] == pytest.approx(35.0)
    # no final transfer: w2 = 9 -> 2 + 9 + 18 = 29
    assert evaluate(inst.with_(charge_final_transfer=False), [1, 3])[0] == pytest.approx(29.0)


def test_perf_k1_conventions():
    inst = tiny(k=1)
    # thesis: Perf = R * T_total = 3 * 10 (no D_1); uniform: R * (T + s_n/B) = 3 * 12
    assert evaluate(inst, [4])[0] == pytest.approx(30.0)
    assert evaluate(inst.with_(k1_convention="uniform"), [4])[0] == pytest.approx(36.0)


def test_bottleneck_hand_computed():
    inst = tiny(objective="bottleneck")
    assert evaluate(inst, [2, 2])[0] == pytest.approx(9.0)
    assert evaluate(inst.with_(transfers=False), [2, 2])[0] == pytest.approx(7.0)
    assert evaluate(inst.with_(transfers=False), [3, 1])[0] == pytest.approx(6.0)


def test_thesis_cost_hand_computed():
    inst = tiny(objective="thesis_cost")
    # groups [1,2 | 3,4]: T = 3, 7; S_last = 300, 200; C = 3, 3; T_tot 10, S_tot 650, C_tot 6
    a, b, g, d = 0.3, 0.4, 0.3, 0.5
    cost = (a * 3 / 10 + b * 300 / 650 - g * math.log(4) / math.log(7)
            + a * 7 / 10 + b * 200 / 650 - g * math.log(4) / math.log(7))
    bal = d * (7 / 5 - 1)
    v, bd = evaluate(inst, [2, 2])
    assert v == pytest.approx(cost + bal, rel=1e-12)
    assert bd["balance_factor"] == pytest.approx(0.2)


def test_breakdown_reports_all_objectives():
    inst = tiny()
    _, bd = evaluate(inst, [2, 2])
    assert bd["perf_s"] == pytest.approx(33.0) and bd["bottleneck_s"] == pytest.approx(9.0)
    assert bd["groups"] == 2 and bd["sizes"] == [2, 2] and bd["convs"] == [3, 3]


@pytest.mark.parametrize("bad", [[2, 1], [4, 0], [1, 1, 2], "22", [2.0, 2]])
def test_bad_assignment(bad):
    with pytest.raises(InstanceError):
        evaluate(tiny(), bad)


def test_at_most_k_accepts_fewer_groups():
    inst = tiny(k=3, at_most_k=True)
    assert evaluate(inst, [4])[0] == pytest.approx(30.0)
    with pytest.raises(InstanceError):
        evaluate(tiny(k=3), [4])


# ---------------------------------------------------------------------------- recurrence

def test_recurrence_equals_closed_form_random():
    rnd = random.Random(3)
    for _ in range(2000):
        k = rnd.randint(1, 7)
        R = rnd.randint(1, 12)
        w = [rnd.choice([rnd.uniform(0, 5), float(rnd.randint(0, 4))]) for _ in range(k)]
        assert close(perf_recurrence(w, R), perf_closed_form(w, R), 1e-12, 1e-12)


def test_recurrence_hand_values():
    # 2 stages w = (1, 3), 3 requests: A1 = 1, 2, 3; A2 = 4, 7, 10
    assert perf_recurrence([1.0, 3.0], 3) == 10.0
    assert perf_recurrence([3.0, 1.0], 3) == 10.0  # 3, 6, 9 -> 4, 7, 10
    assert perf_recurrence([2.0], 5) == 10.0


def test_evaluator_perf_equals_recurrence_including_k1():
    for seed in range(40):
        rnd = random.Random(seed)
        n = rnd.randint(1, 9)
        k = rnd.randint(1, n)
        inst = generate(seed, n=n, k=k, requests=rnd.randint(1, 9), k1_convention=rnd.choice(["thesis", "uniform"]),
                        charge_final_transfer=rnd.random() < 0.5)
        sizes = bruteforce(inst)
        v, bd = evaluate(inst, sizes)
        assert close(v, perf_recurrence(bd["stage_s"], inst.requests))
        if k == 1 and inst.k1_convention == "thesis":  # thesis: Perf = R * T_total
            assert close(v, inst.requests * inst.T_total)


# ---------------------------------------------------------------------------- validation, JSON

@pytest.mark.parametrize("change, path", [
    (dict(k=0), "k"), (dict(k=5), "k"), (dict(objective="makespan"), "objective"),
    (dict(requests=0), "requests"), (dict(bandwidth_bytes_per_s=0.0), "bandwidth_bytes_per_s"),
    (dict(alpha=0.5), "weights"), (dict(t=[1.0, float("nan"), 3.0, 4.0]), "parts[1].t_seconds"),
    (dict(s=[1.0, 2.0, -3.0, 4.0]), "parts[2].out_bytes"), (dict(c=[1, 2, 0.5, 3]), "parts[2].convs"),
    (dict(t=[0.0] * 4, objective="thesis_cost"), "parts"),
])
def test_validation_paths(change, path):
    with pytest.raises(InstanceError) as ei:
        tiny(**change)
    assert ei.value.path == path


def test_k_above_n_allowed_with_at_most_k():
    inst = tiny(k=9, at_most_k=True)
    assert inst.k_max == 4 and list(inst.group_counts) == [1, 2, 3, 4]


def test_json_round_trip_and_paths(tmp_path):
    inst = tiny(objective="thesis_cost", at_most_k=True, k=3, charge_final_transfer=False)
    p = io.save(inst, tmp_path / "g.json")
    back = io.load(p)
    assert back == inst and back.to_dict() == inst.to_dict()
    d = io.envelope(inst)
    d["data"]["parts"][2]["t_seconds"] = -1
    with pytest.raises(InstanceError) as ei:
        io.from_envelope(d)
    assert ei.value.path == "data.parts[2].t_seconds"
    d = io.envelope(inst)
    d["data"]["weights"]["gamma"] = 2.0
    with pytest.raises(InstanceError) as ei:
        io.from_envelope(d)
    assert ei.value.path == "data.weights.gamma"


def test_generate_is_seeded():
    a, b = generate(7, n=6, k=2), generate(7, n=6, k=2)
    assert a == b and a != generate(8, n=6, k=2)


def test_interval_costs_match_evaluator():
    for seed in range(30):
        for obj in ("perf", "bottleneck", "thesis_cost"):
            inst = generate(seed, n=7, k=3, objective=obj, at_most_k=True)
            ic = interval_costs(inst)
            for sizes in ([7], [3, 4], [1, 2, 4], [2, 2, 3]):
                assert close(ic.value(sizes), evaluate(inst, sizes)[0])


# ---------------------------------------------------------------------------- from graphs

def test_from_graph_chain_by_block():
    from splitopt.instances.graph import chain

    g = chain([dict(op="conv", fwd_flop=4e9, out_bytes=10.0, block="b1"),
               dict(op="relu", fwd_flop=1e9, out_bytes=20.0, block="b1"),
               dict(op="conv", fwd_flop=2e9, out_bytes=5.0, block="b2"),
               dict(op="linear", fwd_flop=1e9, out_bytes=8.0, block="b3")])
    inst = GroupingInstance.from_graph(g, 2, flop_rate=1e9, batch=2)
    assert inst.names == ("b1", "b2", "b3")
    assert inst.t == pytest.approx((10.0, 4.0, 2.0))
    assert inst.s == pytest.approx((40.0, 10.0, 16.0))  # last part: the output layer's bytes
    assert inst.c == (1, 1, 0)


def test_from_graph_rejects_non_chain():
    from splitopt.instances.graph import DNNGraph, Layer

    g = DNNGraph([Layer("a"), Layer("b"), Layer("c"), Layer("d")],
                 [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    with pytest.raises(InstanceError):
        GroupingInstance.from_graph(g, 2, collapse="none", flop_rate=1.0)
    inst = GroupingInstance.from_graph(g, 1, collapse="sese", flop_rate=1.0)
    assert inst.n >= 1


zoo = pytest.importorskip("splitopt.instances.zoo")


@pytest.mark.parametrize("arch, n, ctot", [("resnet18", 11, 20), ("resnet34", 19, 36), ("resnet50", 19, 53),
                                           ("resnet101", 36, 104), ("resnet152", 53, 155)])
def test_zoo_resnet_parts(arch, n, ctot):
    # digest §3.2: n = #blocks + 3 and C_total counting downsample convs
    inst = GroupingInstance.from_zoo(arch, 2)
    assert inst.n == n and inst.C_total == ctot
    # digest §3.4: stem conv output 64x112x112 fp32, batch 16 = 51,380,224 bytes; head 1000 x 4 x 16
    assert inst.s[0] == 51_380_224 and inst.s[-1] == 64_000


def test_zoo_resnet18_table():
    inst = GroupingInstance.from_zoo("resnet18", 3)
    # digest §3.4 ResNet-18 table: c_j and s_j (bytes, batch 16, fp32)
    assert inst.c == (1, 0, 2, 2, 3, 2, 3, 2, 3, 2, 0)
    assert inst.s == (51380224, 12845056, 12845056, 12845056, 6422528, 6422528, 3211264, 3211264,
                      1605632, 1605632, 64000)


# ---------------------------------------------------------------------------- formulations

def _random_cases(count, max_n=8):
    rnd = random.Random(11)
    for seed in range(count):
        n = rnd.randint(1, max_n)
        k = rnd.randint(1, n)
        obj = ("perf", "bottleneck", "thesis_cost")[seed % 3]
        yield generate(seed, n=n, k=k, objective=obj, requests=rnd.choice([1, 3, 11]),
                       transfers=rnd.random() < 0.8, charge_final_transfer=rnd.random() < 0.5,
                       k1_convention=rnd.choice(["thesis", "uniform"]), at_most_k=rnd.random() < 0.2)


@pytest.mark.parametrize("formulation", ["milp_interval", "milp_compact"])
def test_milps_equal_bruteforce(formulation):
    for inst in _random_cases(24):
        _, opt = bruteforce(inst, return_value=True)
        sol = solve(inst, formulation)
        assert sol.status == "optimal"
        assert close(sol.objective, opt, 1e-7, 1e-9), (inst.name, inst.objective, sol.assignment)
        assert sol.bound is not None and sol.bound <= opt + 1e-7 * max(1, abs(opt))


def test_milp_interval_size():
    inst = generate(0, n=12, k=4)
    m = build_milp_interval(inst)
    assert len(m.z) == 12 * 13 // 2  # n(n+1)/2 binaries (digest §5.3: 1,431 for n = 53)


def test_family_registry():
    fam = get_family("grouping")
    assert fam.instance_type is GroupingInstance and fam.reference_algorithm == "milp_interval"
    inst = fam.generate(5, n=6, k=3)
    sol = solve(inst)
    assert sol.algorithm == fam.default_algorithm
    assert close(sol.objective, bruteforce(inst, return_value=True)[1])
    text = fam.render(inst, sol)
    assert "stage" in text and len(text.splitlines()) == 2 + 3
    assert fam.describe(inst)["parts"] == 6


def test_thesis_cost_rejects_a_total_time_too_small_to_normalise():
    """Found by hypothesis: a subnormal total time overflowed the normalisation t_j / T."""
    from splitopt.errors import InstanceError
    from splitopt.instances.grouping import GroupingInstance

    with pytest.raises(InstanceError, match="too small to normalise"):
        GroupingInstance.from_arrays([2.225073858507e-311], [0.0], [0], k=1, objective="thesis_cost")


def test_compact_milp_chords_at_achievable_counts_equal_bruteforce():
    """The compact MILP's log-count chords sit only at the conv counts a group can have (sums of
    contiguous runs), not at every integer up to C_tot: same optimum as brute force, including
    counts in the millions (one chord per integer would be millions of rows)."""
    from splitopt.instances.grouping import GroupingInstance

    rnd = random.Random(5)
    optimal = 0
    for seed in range(16):
        n = rnd.randint(2, 7)
        c = [rnd.choice([0, 1, 2, 5, rnd.randint(0, 60), rnd.randint(10**3, 10**6)]) for _ in range(n)]
        inst = GroupingInstance.from_arrays([rnd.uniform(0.01, 1) for _ in range(n)],
                                            [rnd.uniform(1e3, 1e6) for _ in range(n)], c,
                                            k=rnd.randint(1, n), objective="thesis_cost",
                                            at_most_k=rnd.random() < 0.3)
        _, opt = bruteforce(inst, return_value=True)
        sol = solve(inst, "milp_compact")
        assert close(sol.objective, opt, 1e-7, 1e-9), (seed, c, sol.objective, opt)
        assert sol.status in ("optimal", "numerical"), (seed, sol.status)
        optimal += sol.status == "optimal"
    # coefficient ranges above TRUSTED_RANGE are honestly "numerical" (still equal to brute force)
    assert optimal > 0
