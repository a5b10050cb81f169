"""Work beside work on the second core (issue 22): :class:`guard.Child` runs a job in a child process
(answer, error, hard stop, never left behind); ``milp`` runs its MILP in a child while the pair/triple
re-placement polishes the incumbent; ``auto`` runs the non-contiguous relaxation beside a convex
instance, so the convex bound is never weaker than the non-contiguous one it computes. Answers are
checked against brute force; the thresholds are lowered so small instances take the same path."""

from __future__ import annotations

import itertools
import math
import time

import pytest
from timing import Stopwatch, assert_kept

from splitopt.errors import InstanceError
from splitopt.families import solve
from splitopt.instances.placement import generate
from splitopt.models.placement import evaluate, work_bound
from splitopt.solvers.placement import auto, guard, milp


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def test_child_answers_like_this_process():
    inst = generate(3, n_nodes=7, n_accelerators=2, n_cpus=1)
    c = guard.Child("splitopt.models.placement:work_bound", inst)
    assert c.collect(60.0) == work_bound(inst) and c.done() and c.error is None


def test_child_reports_the_jobs_error():
    inst = generate(3, n_nodes=7, n_accelerators=2, n_cpus=1)
    c = guard.Child("splitopt.models.placement:evaluate", inst, ["nowhere"] * inst.n_nodes)
    assert c.collect(60.0) is None and "InstanceError" in c.error and "nowhere" in c.error
    with pytest.raises(InstanceError):  # the same call here fails the same way
        evaluate(inst, ["nowhere"] * inst.n_nodes)


def test_child_is_stopped_at_its_deadline():
    c = guard.Child("time:sleep", 30.0)
    t0 = time.perf_counter()
    assert c.collect(1.0) is None and c.error == "stopped at the limit"
    assert c.done() and c.proc.returncode is not None  # killed and reaped, not left running
    assert time.perf_counter() - t0 < 30.0


def test_child_job_limit_comes_from_the_hard_deadline():
    # a child started with ``seconds`` calls its job with what is left of them, less the margin for
    # its answer, and collect() waits until the deadline at most
    c = guard.Child("builtins:dict", seconds=5.0)
    got = c.collect()
    assert set(got) == {"time_limit"}
    assert 5.0 - guard.START_SECONDS - 3.0 < got["time_limit"] <= 5.0 - guard.margin(5.0)
    t0 = time.perf_counter()
    c = guard.Child("time:sleep", 30.0, seconds=1.0)  # sleep(30.0, time_limit=...) fails: an error, at once
    assert c.collect() is None and "TypeError" in c.error and time.perf_counter() - t0 < 1.0 + 1.0


@pytest.fixture
def beside_everywhere(monkeypatch):
    # the small instances below take the path of large ones
    monkeypatch.setattr(milp, "BESIDE_NODES", 1)
    monkeypatch.setattr(milp, "BESIDE_FROM", 1.0)


CASES = list(itertools.product((0, 1, 2), ("none", "convex"), (False, True)))


@pytest.mark.parametrize("seed,contiguity,training", CASES)
def test_milp_beside_agrees_with_brute_force(beside_everywhere, seed, contiguity, training):
    inst = generate(seed, n_nodes=6, n_accelerators=2, n_cpus=1, training=training, contiguity=contiguity)
    bf = solve(inst, "bruteforce").objective
    r = milp.solve(inst, time_limit=60.0, use_incumbent=True)
    v = evaluate(inst, r.assignment)[0]
    assert r.info.get("beside") is True or r.status == "optimal"  # proven before the MILP, or beside it
    assert r.status == "optimal" and close(v, bf) and r.bound <= v * (1 + 1e-12)


def test_milp_beside_keeps_a_short_limit(beside_everywhere, monkeypatch):
    from splitopt.instances.placement_gen import operator_graph

    # the MILP must start: its build estimate (3.5 s here) against what the incumbent leaves of
    # 6 s made the test depend on this machine's speed (it skipped the MILP where the incumbent
    # took 2.5 s, 2026-11-25)
    monkeypatch.setattr(milp, "build_seconds", lambda instance: 0.5)
    hard = operator_graph(1, "gnmt", 300, training=True, contiguity="none")
    with Stopwatch() as sw:
        r = milp.solve(hard, time_limit=6.0)
    assert r.info["beside"] is True and r.status == "time_limit"
    v = evaluate(hard, r.assignment)[0]
    assert r.bound <= v
    assert_kept(sw, 6.0, 0.5)


@pytest.mark.parametrize("seed,training", [(0, False), (1, True), (4, True)])
def test_auto_convex_with_the_relaxation_beside(beside_everywhere, seed, training):
    inst = generate(seed, n_nodes=6, n_accelerators=2, n_cpus=1, training=training, contiguity="convex")
    bf = solve(inst, "bruteforce").objective
    r = auto.solve(inst, time_limit=30.0)
    assert r.status == "optimal" and close(evaluate(inst, r.assignment)[0], bf)
    assert [t["method"] for t in r.info["tried"]][0] == "milp"


def test_auto_convex_bound_never_weaker_than_its_relaxation(beside_everywhere):
    # a convex instance the convex model does not close in 6 s: the relaxation beside it runs to the
    # end, and the answer's bound is at least the relaxation's bound (every non-contiguous bound is
    # a convex bound)
    from splitopt.instances.placement_gen import operator_graph

    inst = operator_graph(1, "gnmt", 300, training=True, contiguity="convex")
    r = auto.solve(inst, time_limit=6.0)
    v = evaluate(inst, r.assignment)[0]
    steps = {t["method"]: t for t in r.info["tried"]}
    assert "milp" in steps and "milp-none" in steps
    relax = steps["milp-none"]
    if "bound" in relax:  # the relaxation answered within its limit (else it says why not)
        assert relax["bound"] is None or r.bound >= min(relax["bound"], v) * (1 - 1e-12)
    else:
        assert "error" in relax or "stopped" in relax["status"]
    assert r.bound <= v * (1 + 1e-12) and math.isfinite(r.bound)


def test_a_failing_child_is_an_error_not_a_time_limit(beside_everywhere, monkeypatch):
    # the MILP's child fails (here: an unknown build option): the lns beside it still answers, the
    # failure is said as such, and milp.solve returns the best placement as feasible with its bound
    inst = generate(5, n_nodes=8, n_accelerators=2, n_cpus=1, contiguity="none")
    start = ["cpu0"] * inst.n_nodes
    # the re-placement at the MILP's priority: niced, it got no CPU for its imports within the 20 s
    # on a machine whose two cores ran two test workers and two busy loops (2026-11-27)
    monkeypatch.setattr(milp, "LNS_NICE", 0)
    res, polished = milp._solve_beside(inst, {"no_such_option": 1}, "highs", 20.0, None, start)
    assert res.status == "error" and "no_such_option" in res.message and res.assignment is None
    assert evaluate(inst, polished)[0] <= evaluate(inst, start)[0]

    real = milp._solve_beside
    monkeypatch.setattr(milp, "_solve_beside",
                        lambda instance, build_kw, *a, **kw: real(instance, {**build_kw, "no_such_option": 1}, *a, **kw))
    # the configuration LP off: its branch and price would certify this small instance first
    monkeypatch.setattr(milp, "COLGEN_FROM", math.inf)
    r = milp.solve(inst, time_limit=20.0)
    v = evaluate(inst, r.assignment)[0]
    # (seed 5: the incumbent does not meet the combinatorial bound, so the MILP runs)
    assert r.info["beside"] is True and r.status == "feasible" and "no_such_option" in r.info["message"]
    assert r.bound <= v * (1 + 1e-12)


def test_a_child_runs_its_milp_itself():
    # a child is stopped at a hard deadline already: its MILP runs in it, not in a grandchild that
    # would pay another start out of the same limit
    assert guard.worth_it(10.0, 60.0) is True
    assert guard.Child("splitopt.solvers.placement.guard:worth_it", 10.0, 60.0).collect(60.0) is False


@pytest.mark.parametrize("contiguity", ("none", "convex"))
def test_replacement_runs_beside_the_configuration_lp(beside_everywhere, monkeypatch, contiguity):
    # where the configuration LP runs first, the re-placement starts beside it (its placements are
    # poorer than the re-placement's), and the same child goes on beside the MILP
    from splitopt.solvers.placement import colgen

    monkeypatch.setattr(milp, "COLGEN_FROM", 0.0)
    events = []
    real_child, real_relax = guard.Child, colgen.relaxation

    class Spy(real_child):
        def __init__(self, target, *a, **kw):
            events.append(target.rsplit(":", 1)[1])
            super().__init__(target, *a, **kw)

    monkeypatch.setattr(guard, "Child", Spy)
    monkeypatch.setattr(colgen, "relaxation", lambda *a, **kw: events.append("colgen") or real_relax(*a, **kw))
    inst = generate(2, n_nodes=14, n_accelerators=4, n_cpus=1, skips=4, memory=False, colours=0,
                    contiguity=contiguity)
    exact = solve(inst, "milp").objective  # no limit: in process, no child
    events.clear()
    r = milp.solve(inst, time_limit=12.0)
    v = evaluate(inst, r.assignment)[0]
    assert "colgen" in r.info and r.bound <= exact * (1 + 1e-9) <= v * (1 + 1e-9)
    # (and where the MILP ran, beside the same re-placement: no second one)
    assert events[:2] == ["lns", "colgen"] and events.count("lns") == 1, events
