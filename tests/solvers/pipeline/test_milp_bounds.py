"""Issue 21 / issue 24 item 4: the MILP loop shows only trusted bounds, and returns one when its
time limit stops it.

``data/milp_bound_above_optimum.json`` (costs over 1e-9..1e9, I = 5, N = 3, B = 4): HiGHS ends
Formulation C ``numerical`` with a dual bound of 107.5 while the brute-force optimum is 27.99; a
bound above the optimum must not be shown as one."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from splitopt.families import solve
from splitopt.instances.pipeline import PipelineInstance
from splitopt.instances.pipeline_generate import generate
from splitopt.models.pipeline import evaluate
from splitopt.solvers.pipeline import bruteforce, milp

DATA = Path(__file__).parent / "data"


def wide():
    return PipelineInstance.from_json((DATA / "milp_bound_above_optimum.json").read_text())


@pytest.mark.parametrize("name", ["milp", "milp_a", "milp_b", "milp_c", "milp_joint"])
def test_no_bound_above_the_optimum(name):
    inst = wide()
    opt = evaluate(inst, bruteforce.bruteforce(inst))[0]
    assert opt == pytest.approx(27.9873, rel=1e-4)
    sol = solve(inst, name)
    assert sol.objective >= opt * (1 - 1e-9)
    assert sol.bound is None or sol.bound <= opt * (1 + 1e-9), (name, sol.bound, opt)
    if sol.status == "optimal":
        assert sol.objective == pytest.approx(opt, rel=1e-9)


def test_stopped_loop_returns_a_bound(monkeypatch):
    """Stopped after the first b: the b left get the revisit relaxation bound, so the answer has
    a bound, below the brute-force optimum (was: status time_limit and no bound)."""
    from .test_time_limits import StopAfter

    inst = generate(0, n_layers=5, n_servers=3, batch=16)
    opt = evaluate(inst, bruteforce.bruteforce(inst))[0]
    # the relaxation bound gets its own (real) deadline: only the loop's is the stopping one
    real = milp.Deadline
    calls = []

    def fake(time_limit):
        calls.append(time_limit)
        return StopAfter(1) if len(calls) == 1 else real(time_limit)

    monkeypatch.setattr(milp, "Deadline", fake)
    sol = solve(inst, "milp_c")
    assert sol.status == "time_limit" and sol.info["b_solved"] == 1
    assert sol.bound is not None and sol.bound <= opt * (1 + 1e-9)
    assert math.isfinite(sol.info["b_left_bound"])
