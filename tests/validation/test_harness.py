"""Harness: agreement, gaps, bounds, errors and time-outs on the fake knapsack family.

Expected numbers are hand computed on the classic instance (values 60/100/120, weights 10/20/30,
capacity 50): optimum 220 (items 1 and 2), ratio-greedy 160 (items 0 and 1), Dantzig bound 240.
"""

import pytest

from cases.knapsack import CALLS, CLASSIC, Knap, brute_force, generate
from splitopt.validation import harness


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
    assert CALLS["milp"] == 2  # one solve, plus one warm call timed (harness.WARM_REPEAT_BELOW)
    harness.validate_instance(inst, ["dp"], solver="other")
    assert CALLS["milp"] == 3  # solver "other" is not installed: an error row, no warm repeat


def test_fast_runs_are_timed_warm_and_the_first_call_kept_apart():
    rows = {r["algorithm"]: r for r in harness.validate_instance(generate(4), ["dp"])}
    for name in ("milp", "dp"):
        assert rows[name]["cold_seconds"] is not None and rows[name]["seconds"] > 0


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
    bad["overfull"] = Algorithm("overfull", lambda inst: [0, 1, 2], "heuristic")
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


POISON_SCRIPT = """
import sys, time
from splitopt.validation import harness
if {old}:
    harness._importing = lambda: False  # the behaviour before the fix: the alarm may cut an import
assert "networkx" not in sys.modules
timeouts = 0
for delay in (0.002, 0.005, 0.01, 0.02, 0.05):
    try:
        with harness.deadline(delay):
            import networkx  # noqa: F401  (a fresh import takes far longer than the deadline)
            time.sleep(5)
    except harness.TaskTimeout:
        timeouts += 1
    except Exception as exc:
        print("import failed:", type(exc).__name__)
from splitopt.families import solve
from splitopt.instances.split import generate
inst = generate(3, n=10)
try:
    print("timeouts", timeouts, "dads", solve(inst, "dads").objective, "mincut", solve(inst, "mincut").objective)
except Exception as exc:
    print("poisoned:", type(exc).__name__, exc)
"""


@pytest.mark.parametrize("old", [False, True])
def test_a_timeout_never_poisons_the_worker(old):
    """A deadline that falls inside an import is postponed until the import ends, so later tasks in
    the same process behave as in a fresh one (before the fix, a time-out during ``import networkx``
    left it half-initialised and every later ``dads`` task failed)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", POISON_SCRIPT.format(old=old)], capture_output=True, text=True,
                         timeout=120).stdout
    words = out.split()
    if old:  # shows that the test can fail: the unprotected alarm poisons networkx, or an import
        # swallows it (a deadline that never fires: seen 2026-11-28 on a busy machine)
        assert "poisoned" in out or "import failed" in out or words[:2] != ["timeouts", "5"], out
        return
    assert words[:2] == ["timeouts", "5"], out  # every deadline still fired (after the import)
    assert float(words[3]) == pytest.approx(float(words[5]), rel=1e-9), out


def _with_algorithm(fam, algo):
    import dataclasses

    return dataclasses.replace(fam, algorithms={**fam.algorithms, algo.name: algo})


def test_a_timeout_inside_pyomo_is_a_timeout(monkeypatch):
    """Issue 21: the hard deadline fired inside Pyomo's standard-form compiler, whose caller wraps
    every ``Exception`` as "the HiGHS path takes linear models only"; the row said ``error``."""
    import time

    from pyomo.repn.plugins import standard_form

    from splitopt.families import Algorithm, get_family
    from splitopt.instances.split import generate

    def slow_write(self, *a, **k):
        time.sleep(30)

    def lp_through_pyomo(inst):  # the front door's HiGHS path: Pyomo's compiler, then HiGHS
        from splitopt.models.split import assignment_from_model, build_milp
        from splitopt.solvers import exact

        model = build_milp(inst)
        exact.solve(model, "highs", relax=True)
        return assignment_from_model(inst, model)

    monkeypatch.setattr(standard_form.LinearStandardFormCompiler, "write", slow_write)
    # no time_limit option: the hard deadline is the time limit itself (0.3 s)
    fam = _with_algorithm(get_family("split"), Algorithm("lp_nolimit", lp_through_pyomo, "relaxation"))
    run = harness.run_algorithm(fam, generate(1, n=8), "lp_nolimit", time_limit=0.3)
    assert run.status == "timeout", run.error
    assert "0.3" in run.error and "linear models only" not in run.error


def test_an_exception_after_the_deadline_fired_is_a_timeout():
    import time

    from splitopt.families import Algorithm

    def wraps_everything(inst):
        try:
            time.sleep(30)
        except BaseException as exc:  # a library that re-labels whatever interrupts it
            raise RuntimeError("solver crashed") from exc

    from splitopt.families import get_family

    fam = _with_algorithm(get_family("vknap"), Algorithm("wrapper", wraps_everything, "heuristic"))
    run = harness.run_algorithm(fam, CLASSIC, "wrapper", time_limit=0.3)
    assert run.status == "timeout" and "solver crashed" in run.error and "0.3" in run.error
    # without a deadline the same exception is an error
    fam2 = _with_algorithm(fam, Algorithm("wrapper", lambda inst: (_ for _ in ()).throw(RuntimeError("x")),
                                          "heuristic"))
    assert harness.run_algorithm(fam2, CLASSIC, "wrapper").status == "error"
