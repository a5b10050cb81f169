"""The grouping formulations keep one deadline over every group count and every build (issue 21
§1): the interval MILP's build (``n^3/6`` cover terms, 20 s of Pyomo at ``n = 400``) reads it row
by row, and an LP stopped by the limit is an honest ``time_limit``, not an ``error``."""

from __future__ import annotations

import time

import pytest

from splitopt.errors import SolverFailed
from splitopt.families import solve
from splitopt.instances.grouping import generate
from splitopt.models.grouping import build_milp_interval
from splitopt.solvers.deadline import Deadline


def test_interval_build_stops_at_a_passed_deadline():
    dl = Deadline(1e-9)
    time.sleep(0.01)
    with pytest.raises(SolverFailed) as exc:
        build_milp_interval(generate(0, n=30, k=4), 4, deadline=dl)
    assert exc.value.status == "time_limit"
    # without a deadline the same model builds (the check is the only difference)
    assert build_milp_interval(generate(0, n=30, k=4), 4) is not None


@pytest.mark.parametrize("algorithm", ["milp_interval", "lp_interval", "lp_compact", "milp_compact"])
def test_a_tiny_limit_is_time_limit_never_error(algorithm):
    inst = generate(0, n=160, k=12)
    try:
        sol = solve(inst, algorithm, time_limit=0.05)
    except SolverFailed as exc:
        assert exc.status == "time_limit", exc
        return
    # an answer within so little time is still checked: a stopped run claims no optimality it lacks
    assert sol.status in ("optimal", "time_limit", "ok", "feasible")
    if sol.bound is not None:
        assert sol.bound <= sol.objective * (1 + 1e-9)
