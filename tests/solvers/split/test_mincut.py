"""Certified min cut (solvers/mincut.py) against brute force on >= 300 seeded random DAGs."""

import math

import numpy as np
import pytest

from cases.split import KINDS, close, random_instance  # noqa: E402
from splitopt.errors import InfeasibleSolution, InstanceError  # noqa: E402
from splitopt.instances.graph import DNNGraph, Edge, Layer  # noqa: E402
from splitopt.instances.split import SplitInstance  # noqa: E402
from splitopt.models.split import evaluate  # noqa: E402
from splitopt.solvers.flow import CutProblem, min_cut
from splitopt.solvers.split import bruteforce, dads, mincut  # noqa: E402

SEEDS = range(360)


def test_mincut_equals_bruteforce_on_random_dags():
    kinds_seen = set()
    for s in SEEDS:
        inst = random_instance(s)
        kinds_seen.add(inst.graph.name.split("-")[0])
        best, _names, _ = bruteforce.solve_detailed(inst)
        r = mincut.solve_detailed(inst)
        obj = evaluate(inst, r.device)[0]           # feasible, or evaluate raises
        assert close(obj, best), (s, obj, best)
        assert close(r.value, obj, rel=1e-12), s     # the graph value is the evaluator's cost
        # certificate: lower bound <= true optimum <= value, gap at double-precision level
        assert r.lower_bound <= best * (1 + 1e-12) + 1e-300, s
        assert r.gap <= 1e-12 * max(best, 1e-300) + 1e-300, (s, r.gap, best)
    assert kinds_seen == set(KINDS)


def test_costs_spanning_thirty_orders_of_magnitude():
    # chain a -> b -> c with costs 1e-15 .. 1e15 (a pinned): the splits differ by 1..4 on a total of
    # 1e15, i.e. by ~1e-15 relative; a single 32-bit rounding of the capacities could not tell them apart.
    g = DNNGraph([Layer("a", out_bytes=3.0), Layer("b", out_bytes=1.0), Layer("c")], [("a", "b"), ("b", "c")])
    inst = SplitInstance(g, [1e15, 0.0, 5.0], [0.0, 1.0, 1e-15], 1.0, 1.0, "inference", 1, input_policy="pin")
    # {a}: 1e15 + 3 + 1 + 1e-15 ; {a,b}: 1e15 + 0 + 1 + 1e-15 ; {a,b,c}: 1e15 + 5
    assert mincut.solve(inst) == ["a", "b"]
    assert evaluate(inst, ["a", "b"])[0] == 1e15 + 1
    prob = CutProblem(3, np.array([1e-9, 2e9, 3.0]), np.array([5e-9, 1e-9, 1e12]), [(0, (1, 2), 7e-10)],
                      [(0, 1), (0, 2)], np.zeros(3, bool), np.zeros(3, bool))
    # brute force over the 4 closed sets (server side closed under successors): {}, {0}, {0,2}, ...
    feas = []
    for m in range(8):
        mask = np.array([(m >> i) & 1 for i in range(3)], dtype=bool)
        v = prob.value(mask)
        if math.isfinite(v):
            feas.append(v)
    res = min_cut(prob)
    assert res.value == min(feas)
    assert res.lower_bound <= min(feas)


def test_infinite_arcs_never_cut_and_pins_respected():
    for s in range(0, 200, 7):
        inst = random_instance(s)
        r = mincut.solve_detailed(inst)
        c = inst.costs
        assert not (c.force_dev & ~r.mask).any() and not (c.force_srv & r.mask).any()


def test_tie_break_smallest_device_set():
    # two layers with all costs equal and nothing to transmit: every split costs 2; the min cut
    # returns the source-side residual set, i.e. only the pinned input (digest 000 E9)
    g = DNNGraph([Layer("a"), Layer("b")], [("a", "b")])
    inst = SplitInstance(g, [1.0, 1.0], [1.0, 1.0], 1.0, 1.0, "training", 1)
    assert mincut.solve(inst) == ["a"]


def test_dads_networkx_float_baseline_runs_and_is_evaluated():
    # on a clean integer instance networkx finds the optimum; on random float instances it is
    # only evaluated (it may return an infeasible partition, digest 002 §7.1 item 9)
    from cases.split import check_a

    inst = check_a()
    assert evaluate(inst, dads.solve(inst))[0] == pytest.approx(100.0)
    wrong = 0
    for s in range(60):
        inst = random_instance(s)
        try:
            obj = evaluate(inst, dads.solve(inst))[0]
            wrong += not close(obj, bruteforce.solve_detailed(inst)[0])
        except InfeasibleSolution:
            wrong += 1
    assert wrong < 60


def test_variant_errors():
    inst = random_instance(1)
    with pytest.raises(InstanceError, match="variant"):
        mincut.solve(inst, variant="nope")
    with pytest.raises(InstanceError, match="weights"):
        mincut.solve(inst, weights="nope")


def _resnet50_instance():
    from splitopt.instances import zoo

    g = zoo.get("resnet50")
    return SplitInstance.from_graph(g, up_bytes_per_s=5e6, down_bytes_per_s=2e7, mode="training", iterations=10,
                                    device_flops=1e11, server_flops=1e13)


def test_resnet50_agreement_with_milp():
    """Speed is measured in benchmarks/split.py (ratios in one run), never asserted in tests."""
    from splitopt.families import solve

    inst = _resnet50_instance()
    r = mincut.solve_detailed(inst)
    assert r.gap <= 1e-12 * r.value
    ref = solve(inst, "milp")
    assert close(evaluate(inst, r.device)[0], ref.objective)


def _big_dag(n: int, seed: int) -> SplitInstance:
    rng = np.random.default_rng(seed)
    layers = [Layer(f"l{i}", out_bytes=float(10 ** rng.uniform(2, 7)), param_bytes=float(10 ** rng.uniform(0, 6)))
              for i in range(n)]
    edges = [Edge(f"l{i}", f"l{i + 1}") for i in range(n - 1)]
    for i in range(2, n):
        if rng.random() < 0.5:
            j = int(rng.integers(max(0, i - 8), i - 1))
            edges.append(Edge(f"l{j}", f"l{i}"))
    g = DNNGraph(layers, edges)
    dev = 10 ** rng.uniform(-4, -1, n)
    return SplitInstance(g, dev.tolist(), (dev * 10 ** rng.uniform(-2, 0, n)).tolist(), 1e6, 1e7, "training", 10)


@pytest.mark.slow
def test_ten_thousand_layer_dag_certified_and_equal_to_qdmp():
    from splitopt.solvers.split import qdmp

    inst = _big_dag(10_000, 3)
    r = mincut.solve_detailed(inst)
    assert r.gap <= 1e-12 * r.value
    assert close(evaluate(inst, qdmp.solve(inst))[0], r.value)


@pytest.mark.parametrize("max_free", [64, 0], ids=["scipy+exact-free-check", "scipy+refinement-rounds"])
def test_scipy_paths_equal_bruteforce(monkeypatch, max_free):
    """The random instances are small enough for the exact integer path; force the scipy paths
    (one scaled max-flow + exact check of the free vertices, or repeated refinement rounds) and
    check them against enumeration too."""
    from splitopt.solvers import flow

    monkeypatch.setattr(flow, "SMALL_VERTICES", 0)
    monkeypatch.setattr(flow, "MAX_FREE", max_free)
    for s in SEEDS[:150]:
        inst = random_instance(s)
        best, _names, _ = bruteforce.solve_detailed(inst)
        r = mincut.solve_detailed(inst)
        obj = evaluate(inst, r.device)[0]
        assert close(obj, best), (s, max_free, obj, best)
        assert r.lower_bound <= best * (1 + 1e-12) + 1e-300, s
