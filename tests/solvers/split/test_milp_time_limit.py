"""``--time-limit`` bounds the whole ``milp`` / ``lp`` algorithm, certificate included (issue 13,
found by benchmarks/split_chain_limits.py: with ``time_limit=60`` a 10,000-layer chain ran past 90 s
because the exact certificate re-solved the LP without a limit after HiGHS stopped)."""

import time

from cases.split import wide_range_instance
from splitopt.families import solve
from splitopt.solvers.split import milp


def test_certificate_gets_only_the_time_left(monkeypatch):
    seen = []
    real = milp.certified_bound

    def spy(model, target=None, rounds=4, time_limit=None):
        seen.append(time_limit)
        return real(model, target=target, rounds=rounds, time_limit=time_limit)

    monkeypatch.setattr(milp, "certified_bound", spy)
    inst = wide_range_instance(3)
    t0 = time.perf_counter()
    solve(inst, "milp", time_limit=30.0)
    spent = time.perf_counter() - t0
    assert len(seen) == 1 and 0 < seen[0] <= 30.0 and seen[0] >= 30.0 - spent
    solve(inst, "milp")
    assert seen[1] is None  # no limit given: none imposed


def test_zero_time_left_gives_no_certificate():
    inst = wide_range_instance(5)
    from splitopt.solvers.split.milp import build_milp

    assert milp.certified_bound(build_milp(inst), time_limit=0.0) is None
    assert milp.certified_bound(build_milp(inst), time_limit=None) is not None


# ---------------------------------------------------------------- issue 21: every phase keeps the limit
def test_trivial_bound_and_start_never_beat_the_optimum():
    from cases.split import random_instance
    from splitopt.solvers.split import bruteforce

    for seed in range(60):
        inst = random_instance(seed)
        best = bruteforce.solve_detailed(inst)[0]
        assert milp.trivial_bound(inst) <= best
        names, val = milp.start_split(inst)
        assert val >= best * (1 - 1e-12)
        assert val == min(solve(inst, "server_only").objective, solve(inst, "device_only").objective)


def test_build_stops_at_the_deadline():
    import pytest

    from splitopt.errors import SolverFailed
    from splitopt.models.split import build_milp
    from splitopt.solvers.deadline import Deadline

    dl = Deadline(1.0)
    dl.end = 0.0  # already over: a deterministic stop
    with pytest.raises(SolverFailed) as exc:
        build_milp(wide_range_instance(3, n=40), deadline=dl)
    assert exc.value.status == "time_limit" and "building the MILP" in str(exc.value)


def test_isolated_highs_matches_in_process():
    """The child-process run (used for large models under a limit) gives the same answer, bound
    and LP duals as the run in this process."""
    import numpy as np

    from splitopt.models.split import build_milp
    from splitopt.solvers.exact.highs import HighsMatrix

    inst = wide_range_instance(4, n=30)
    for relax in (False, True):
        a = HighsMatrix.from_pyomo(build_milp(inst), relax=relax, time_limit=60).solve()
        b = HighsMatrix.from_pyomo(build_milp(inst), relax=relax, time_limit=60).solve(isolate=True)
        assert (a.status, a.objective, a.bound) == (b.status, b.objective, b.bound)
        assert np.array_equal(a.x, b.x)
        if relax:
            assert np.array_equal(a.y, b.y)


def test_isolated_child_is_killed_at_the_deadline(monkeypatch):
    """A HiGHS run that overstays (here a child that sleeps) is killed after the deadline plus
    grace: status time_limit without a solution, and no child left behind."""
    from splitopt.models.split import build_milp
    from splitopt.solvers.exact import highs_isolated
    from splitopt.solvers.exact.highs import HighsMatrix

    monkeypatch.setattr(highs_isolated, "CHILD", "import time; time.sleep(120)")
    hm = HighsMatrix.from_pyomo(build_milp(wide_range_instance(4, n=30)), time_limit=0.5)
    t0 = time.perf_counter()
    r = hm.solve(isolate=True)
    assert r.status == "time_limit" and r.x is None and "killed" in r.termination
    assert time.perf_counter() - t0 < 60  # kept (loose: no speed assertion), the sleep was 120 s


def test_isolated_child_is_killed_at_the_callers_limit(monkeypatch):
    """HiGHS's own limit in the child ends a margin before the caller's limit, and the kill comes at
    the caller's limit, not a grace after it (a 20,000-layer split MILP with 5 s took 5.26 s)."""
    from splitopt.models.split import build_milp
    from splitopt.solvers.exact import highs_isolated
    from splitopt.solvers.exact.highs import HighsMatrix

    seen = {}

    def fake(lp, options, deadline, grace, tee=False):
        seen.update(deadline=deadline, grace=grace, now=time.monotonic())
        return highs_isolated.Outcome(None, "killed at the time limit")

    monkeypatch.setattr(highs_isolated, "run_isolated", fake)
    for tl in (0.3, 5.0, 60.0):
        hm = HighsMatrix.from_pyomo(build_milp(wide_range_instance(4, n=30)), time_limit=tl)
        t0 = time.monotonic()
        assert hm.solve(isolate=True).status == "time_limit"
        assert seen["grace"] > 0 and seen["deadline"] < t0 + tl
        assert t0 + tl - 0.05 <= seen["deadline"] + seen["grace"] <= seen["now"] + tl + 1e-6
