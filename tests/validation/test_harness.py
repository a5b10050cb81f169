"""Harness: agreement, gaps, bounds, errors and time-outs on the fake knapsack family.

Expected numbers are hand computed on the classic instance (values 60/100/120, weights 10/20/30,
capacity 50): optimum 220 (items 1 and 2), ratio-greedy 160 (items 0 and 1), Dantzig bound 240.
"""

import pytest

from splitopt.validation import harness
from validation_fakefam import CALLS, CLASSIC, Knap, brute_force, generate


def _by_algo(rows):
    return {r["algorithm"]: r for r in rows}


def test_compare_and_gap_hand_values():
    assert harness.relative_gap(110.0, 100.0, "min") == pytest.approx(0.1)
    assert harness.relative_gap(90.0, 100.0, "max") == pytest.approx(0.1)
    assert harness.relative_gap(3.0, 0.0, "min") == 3.0  # absolute when the reference is 0
    assert harness.compare(1.0 + 1e-12, 1.0)[0] == "agree"
    assert harness.compare(1.0 + 1e-6, 1.0)[0] == "worse"
    assert harness.compare(1.0 - 1e-6, 1.0)[0] == "better"
    assert harness.compare(1.0 - 1e-6, 1.0, sense="max")[0] == "worse"
    # absolute tolerance scaled by the cost terms: 1e-9 * 1e3 admits a 5e-7 difference at 0
    assert harness.objectives_agree(0.0, 5e-7, scale=1e3)
    assert not harness.objectives_agree(0.0, 5e-7, scale=1.0)


def test_classic_counterexample_rows():
    rows = _by_algo(harness.validate_instance(CLASSIC, ["dp", "greedy_paper", "lp", "boom"], time_limit=10))
    assert list(rows) == ["milp", "dp", "greedy_paper", "lp", "boom"]
    ref = rows["milp"]
    assert ref["outcome"] == "reference" and ref["objective"] == 220.0 and ref["exact_status"] == "optimal"
    assert rows["dp"]["outcome"] == "agree" and rows["dp"]["objective"] == 220.0
    g = rows["greedy_paper"]
    assert g["outcome"] == "worse" and g["objective"] == 160.0 and g["paper"] == 1
    assert g["gap"] == pytest.approx(60 / 220, rel=1e-12)
    # LP relaxation bound and its gap, on every row of the instance
    assert ref["lp_bound"] == pytest.approx(240.0)
    assert g["lp_gap"] == pytest.approx(20 / 220, rel=1e-12)
    b = rows["boom"]
    assert b["outcome"] == "error" and "boom on purpose" in b["error"] and b["objective"] is None
    assert len({r["instance_hash"] for r in rows.values()}) == 1


def test_exact_formulation_solved_once_per_instance_and_solver():
    inst = generate(3)
    harness.validate_instance(inst, ["dp"])
    harness.validate_instance(inst, ["greedy_paper"])
    same = Knap(inst.values, inst.weights, inst.capacity)  # equal content, new object
    harness.validate_instance(same, ["dp"])
    assert CALLS["milp"] == 1
    harness.validate_instance(inst, ["dp"], solver="other")
    assert CALLS["milp"] == 2


def test_stored_reference_is_reused_not_resolved():
    inst = generate(5)
    opt = brute_force(inst)
    ref = {"exact_objective": opt, "exact_status": "optimal", "exact_bound": opt, "exact_seconds": 2.0,
           "lp_bound": None, "lp_gap": None, "scale": opt}
    rows = harness.validate_instance(inst, ["dp"], skip={"milp"}, reference=ref)
    assert [r["algorithm"] for r in rows] == ["dp"]
    assert CALLS["milp"] == 0
    assert rows[0]["outcome"] == "agree" and rows[0]["exact_seconds"] == 2.0


def test_reference_matches_brute_force_on_random_instances():
    for seed in range(5):
        inst = generate(seed, n=7)
        rows = _by_algo(harness.validate_instance(inst, ["dp"]))
        assert rows["milp"]["objective"] == brute_force(inst)
        assert rows["dp"]["outcome"] == "agree"


def test_time_limit_is_a_recorded_outcome():
    # (no wall-clock assertion: the "timeout" outcome and the 0.3 s in the message show the deadline fired;
    # speed belongs in benchmarks/)
    rows = _by_algo(harness.validate_instance(CLASSIC, ["sleepy", "dp"], time_limit=0.3))
    s = rows["sleepy"]
    assert s["outcome"] == "timeout" and s["status"] == "timeout" and "0.3" in s["error"]
    assert rows["dp"]["outcome"] == "agree"


def test_evaluator_rejection_is_an_error_row():
    from splitopt.families import Algorithm, get_family
    fam = get_family("vknap")
    bad = dict(fam.algorithms)
    bad["overfull"] = Algorithm("overfull", lambda inst: [0, 1, 2], exact=False)
    import dataclasses
    fam2 = dataclasses.replace(fam, algorithms=bad)
    run = harness.run_algorithm(fam2, CLASSIC, "overfull")
    assert run.status == "infeasible" and "exceeds capacity" in run.error and run.objective is None
    rows = _by_algo(harness.validate_instance(CLASSIC, ["picky"]))
    assert rows["picky"]["outcome"] == "not_applicable" and "single item" in rows["picky"]["error"]


def test_load_failure_becomes_one_row(tmp_path):
    from splitopt.instances.sets import Member
    p = tmp_path / "broken.json"
    p.write_text("{not json")
    rows = harness.run_task(harness.Task(Member("broken.json", "file", None, (str(p),))))
    assert len(rows) == 1
    assert rows[0]["algorithm"] == harness.LOAD and rows[0]["outcome"] == "error"
    assert "not valid JSON" in rows[0]["error"] and str(p) in rows[0]["error"]
