"""Every exact throughput method equals brute force (an enumeration scored by the evaluator) on
seeded chains and skip-connection DAGs, with and without the split cap, homogeneous and
heterogeneous, under every link model and transfer semantics; LP relaxations bound from below; the
paper's B&B shows its documented skip-connection failure."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cases.throughput import skip_counterexample
from splitopt.families import solve
from splitopt.instances.throughput import generate
from splitopt.models.throughput import evaluate
from splitopt.solvers.throughput import bnb, bnb_paper, bruteforce, milp


def variants(s):
    kw = {}
    if s % 5 == 1:
        kw["contiguous"] = True
    kw["link_model"] = ("full-duplex", "half-duplex", "shared")[s % 3]
    if s % 4 == 0:
        kw["transfer"] = "per_edge"
    if s % 6 == 5:
        kw["pins"] = {"L0": "n2"}
    return kw


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def _exact_answers(seed):
    """Brute-force optimum and ``(name, status, objective)`` of the B&B and the formulations (MINLP on
    every sixth seed); LP relaxation bounds and the B&B bound are checked here."""
    inst = generate(seed, n_layers=6, n_nodes=3, **variants(seed))
    best = evaluate(inst, bruteforce.bruteforce(inst))[0]
    r = bnb.solve(inst)
    assert close(r.bound, best), (seed, r.bound, best)
    out = [("bnb", r.status, evaluate(inst, r.assignment)[0])]
    for f in ("rlt", "mccormick"):
        m = milp.solve(inst, f)
        out.append((f, m.status, evaluate(inst, m.assignment)[0]))
        lp = milp.relaxation(inst, f)
        assert lp.bound <= best * (1 + 1e-9), (seed, f)
    if seed % 6 == 0:
        m = milp.solve(inst, "minlp")
        out.append(("minlp", m.status, evaluate(inst, m.assignment)[0]))
    return best, out


def _agree(best, name, value):
    return abs(value - best) <= (1e-6 if name == "minlp" else 1e-9) * best


@pytest.mark.parametrize("seed", range(60))
def test_bnb_and_milps_equal_bruteforce(seed):
    best, answers = _exact_answers(seed)
    assert len(answers) >= 3
    assert all(st == "optimal" and _agree(best, n, v) for n, st, v in answers), (seed, best, answers)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(60, 400))
def test_bnb_and_milps_equal_bruteforce_many(seed):
    best, answers = _exact_answers(seed)
    assert len(answers) >= 3
    assert all(st == "optimal" and _agree(best, n, v) for n, st, v in answers), (seed, best, answers)


def test_rlt_root_bound_at_least_mccormick():
    for s in range(10):
        inst = generate(s, n_layers=6, n_nodes=3, max_splits=2)
        assert milp.relaxation(inst, "rlt").bound >= milp.relaxation(inst, "mccormick").bound * (1 - 1e-9)


def test_paper_bnb_fails_on_the_skip_counterexample():
    inst = skip_counterexample()
    assert evaluate(inst, bnb_paper.solve(inst).assignment)[0] == 6.0  # digest §3.2: C = 1/6
    assert evaluate(inst, bnb.solve(inst).assignment)[0] == 5.0  # C* = 1/5
    assert evaluate(inst, bruteforce.bruteforce(inst))[0] == 5.0


def test_paper_bnb_exact_on_chains_suboptimal_on_some_skip_dags():
    wrong = {"chain": 0, "skip": 0}
    for s in range(40):
        kind = ("chain", "skip")[s % 2]
        inst = generate(s, n_layers=7, n_nodes=3, kind=kind, skips=2, max_splits=None, transfer="per_edge")
        best = evaluate(inst, bruteforce.bruteforce(inst))[0]
        got = evaluate(inst, bnb_paper.solve(inst).assignment)[0]
        assert got >= best * (1 - 1e-12)
        wrong[kind] += not close(got, best)
    assert wrong["chain"] == 0  # the padded bound is valid on chains (digest §3.2)


def test_limits_report_a_valid_bound():
    inst = generate(7, n_layers=9, n_nodes=4, kind="skip", max_splits=None, homogeneous=False)
    best = bnb.solve(inst)
    r = bnb.solve(inst, node_limit=20, root_budget=0, pack_budget=0)  # root bound off: the limit must bite
    assert r.status == "feasible" and r.info["nodes"] <= 21
    assert r.bound <= best.bound * (1 + 1e-12) <= evaluate(inst, r.assignment)[0] * (1 + 1e-12)
    assert bnb.solve(inst, root_budget=0, pack_budget=0).info["nodes"] > 20


def test_registry_solve_and_symmetry():
    inst = generate(2, n_layers=7, n_nodes=4, homogeneous=True, max_splits=None)
    off = {"root_budget": 0, "pack_budget": 0}  # the root bound closes this one at once: compare the search
    a = bnb.solve(inst, symmetry=True, **off)
    b = bnb.solve(inst, symmetry=False, **off)
    assert close(evaluate(inst, a.assignment)[0], evaluate(inst, b.assignment)[0])
    assert a.info["nodes"] < b.info["nodes"]  # identical nodes explored once
    s = solve(inst, "bnb")
    assert s.status == "optimal" and close(s.objective, evaluate(inst, a.assignment)[0])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), factor=st.floats(1.0, 100.0))
def test_throughput_never_falls_when_a_rate_rises(seed, factor):
    inst = generate(seed, n_layers=5, n_nodes=3)
    base = evaluate(inst, bnb.solve(inst).assignment)[0]
    faster_links = inst.with_(rates=tuple(tuple(v * factor if math.isfinite(v) else v for v in row)
                                          for row in inst.rates))
    faster_node = inst.with_(node_flops=(inst.node_flops[0] * factor,) + inst.node_flops[1:])
    for other in (faster_links, faster_node):
        assert evaluate(other, bnb.solve(other).assignment)[0] <= base * (1 + 1e-12)
