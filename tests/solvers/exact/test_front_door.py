"""Tests of the exact-solver front door, splitopt.solvers.exact.

Every expected value is derived in the test itself: by enumeration, a grid, or by hand.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

pyo = pytest.importorskip("pyomo.environ")

from splitopt.errors import InstanceError, SolverUnavailable
from splitopt.solvers import exact
from splitopt.solvers.exact import ExactResult, available_solvers, solve

AVAILABLE = available_solvers()
LINEAR_SOLVERS = [pytest.param(s, marks=pytest.mark.skipif(not AVAILABLE[s], reason=f"{s} missing"))
                  for s in ("highs", "scip", "cbc")]
needs_scip = pytest.mark.skipif(not AVAILABLE["scip"], reason="pyscipopt missing")
needs_cbc = pytest.mark.skipif(not AVAILABLE["cbc"], reason="pulp/CBC missing")
needs_highs = pytest.mark.skipif(not AVAILABLE["highs"], reason="highspy missing")


def close(a, b, rel=1e-7, abs_=1e-7):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


# ---------------------------------------------------------------------------------------------
# models


LAYERS = ["conv1", "conv2", "pool 1", "fc-1", "fc2", "relu", "bn", "out"]


def knapsack(seed=0):
    rng = random.Random(seed)
    value = {n: rng.randint(5, 40) for n in LAYERS}
    weight = {n: rng.randint(3, 20) for n in LAYERS}
    cap = sum(weight.values()) // 2
    m = pyo.ConcreteModel()
    m.L = pyo.Set(initialize=LAYERS)
    m.x = pyo.Var(m.L, domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(weight[n] * m.x[n] for n in LAYERS) <= cap)
    m.obj = pyo.Objective(expr=sum(value[n] * m.x[n] for n in LAYERS), sense=pyo.maximize)
    return m, value, weight, cap


def knapsack_enumerate(value, weight, cap):
    best, arg = -1, None
    for bits in itertools.product((0, 1), repeat=len(LAYERS)):
        w = sum(b * weight[n] for b, n in zip(bits, LAYERS))
        v = sum(b * value[n] for b, n in zip(bits, LAYERS))
        if w <= cap and v > best:
            best, arg = v, bits
    return best, arg


def lp_max():
    """max 3x + 2y s.t. x + y <= 4, x + 3y <= 6, 0 <= x <= 3.5, y >= 0.

    By hand: the vertices are (0,0):0, (3.5,0):10.5, (3.5,0.5):11.5, (3,1):11, (0,2):4, so the
    optimum is 11.5 at (3.5, 0.5)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 3.5))
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.c1 = pyo.Constraint(expr=m.x + m.y <= 4)
    m.c2 = pyo.Constraint(expr=m.x + 3 * m.y <= 6)
    m.obj = pyo.Objective(expr=3 * m.x + 2 * m.y, sense=pyo.maximize)
    return m


def lp_min_offset():
    """min 2x + y + 5 s.t. x + y == 3, x - y <= 1, x >= 0, y <= 2.5.

    By hand: y = 3 - x, objective x + 8, y <= 2.5 gives x >= 0.5: optimum 8.5 at (0.5, 2.5)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.y = pyo.Var(bounds=(None, 2.5))
    m.e = pyo.Constraint(expr=m.x + m.y == 3)
    m.c = pyo.Constraint(expr=m.x - m.y <= 1)
    m.obj = pyo.Objective(expr=2 * m.x + m.y + 5)
    return m


def random_milp(seed):
    """min c.x over mixed binary/general-integer/continuous variables with <=, >= and == rows."""
    rng = random.Random(seed)
    n, rows = 12, 8
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    kinds = [rng.choice(("B", "I", "C")) for _ in range(n)]
    m.x = pyo.Var(m.I)
    for i, k in enumerate(kinds):
        if k == "B":
            m.x[i].domain = pyo.Binary
        elif k == "I":
            m.x[i].domain = pyo.Integers
            m.x[i].setlb(-3)
            m.x[i].setub(6)
        else:
            m.x[i].setlb(-2.5)
            m.x[i].setub(7.5)
    m.c = pyo.ConstraintList()
    x0 = [rng.randint(0, 1) if k == "B" else rng.randint(-1, 3) for k in kinds]  # feasible point
    for r in range(rows):
        a = [rng.choice((0, 0, rng.randint(-5, 9))) for _ in range(n)]
        lhs = sum(a[i] * m.x[i] for i in range(n) if a[i])
        if isinstance(lhs, int):
            continue
        at = sum(a[i] * x0[i] for i in range(n))
        kind = r % 3
        if kind == 0:
            m.c.add(lhs <= at + rng.randint(0, 4))
        elif kind == 1:
            m.c.add(lhs >= at - rng.randint(0, 4))
        else:
            m.c.add(lhs == at)
    m.obj = pyo.Objective(expr=sum(rng.uniform(-3, 5) * m.x[i] for i in range(n)) + 1.25)
    return m


def check_feasible(m, tol=1e-6):
    for c in m.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(c.body)
        if c.has_lb():
            assert body >= pyo.value(c.lower) - tol, c.name
        if c.has_ub():
            assert body <= pyo.value(c.upper) + tol, c.name
    for v in m.component_data_objects(pyo.Var):
        if v.value is None:
            continue
        if v.has_lb():
            assert v.value >= v.lb - tol, v.name
        if v.has_ub():
            assert v.value <= v.ub + tol, v.name
        if v.is_integer():
            assert v.value == round(v.value), v.name


# ---------------------------------------------------------------------------------------------
# correctness on known optima


@pytest.mark.parametrize("solver", LINEAR_SOLVERS)
@pytest.mark.parametrize("seed", [0, 1])
def test_knapsack_matches_enumeration_and_loads_values(solver, seed):
    m, value, weight, cap = knapsack(seed)
    best, arg = knapsack_enumerate(value, weight, cap)
    r = solve(m, solver)
    assert isinstance(r, ExactResult)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(best, abs=1e-9)
    assert r.bound == pytest.approx(best, rel=1e-9)
    assert r.gap == pytest.approx(0.0, abs=1e-9)
    # values loaded into the model (rounded integers) and reported by Pyomo name
    chosen = {n for n in LAYERS if pyo.value(m.x[n]) == 1}
    assert sum(weight[n] for n in chosen) <= cap
    assert sum(value[n] for n in chosen) == best
    assert r.values["x[conv1]"] == pyo.value(m.x["conv1"])
    assert set(r.values) == {m.x[n].name for n in LAYERS}
    assert r.values[m.x["pool 1"].name] == pyo.value(m.x["pool 1"])
    assert r.seconds > 0


@pytest.mark.parametrize("solver", LINEAR_SOLVERS)
def test_lp_hand_optimum(solver):
    m = lp_max()
    r = solve(m, solver)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(11.5, abs=1e-8)
    assert r.bound == pytest.approx(11.5, abs=1e-6)
    assert pyo.value(m.x) == pytest.approx(3.5, abs=1e-8)
    assert pyo.value(m.y) == pytest.approx(0.5, abs=1e-8)

    m = lp_min_offset()
    r = solve(m, solver)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(8.5, abs=1e-8)  # includes the constant 5
    assert r.values["x"] == pytest.approx(0.5, abs=1e-8)
    assert r.values["y"] == pytest.approx(2.5, abs=1e-8)


@needs_scip
def test_scip_integer_times_continuous_matches_enumeration():
    """max x*y, x integer in [0, 7], y in [0, 4], x + 2y <= 8.

    Enumeration: for fixed x > 0 the product grows with y, so y = min(4, (8 - x)/2)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 7))
    m.y = pyo.Var(bounds=(0, 4))
    m.c = pyo.Constraint(expr=m.x + 2 * m.y <= 8)
    m.obj = pyo.Objective(expr=m.x * m.y, sense=pyo.maximize)
    table = {x: x * min(4.0, (8 - x) / 2) for x in range(8)}
    best_x = max(table, key=table.get)
    r = solve(m, "scip")
    assert r.status == "optimal"
    assert r.objective == pytest.approx(table[best_x], abs=1e-6)
    assert r.bound == pytest.approx(table[best_x], abs=1e-5)
    assert pyo.value(m.x) == best_x == 4
    assert pyo.value(m.y) == pytest.approx(2.0, abs=1e-6)


@needs_scip
def test_scip_nonconvex_bilinear_matches_grid():
    """min x*y over x, y in [-1, 2] with x + y >= 0.5: nonconvex; grid minimum is -2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 2))
    m.y = pyo.Var(bounds=(-1, 2))
    m.c = pyo.Constraint(expr=m.x + m.y >= 0.5)
    m.obj = pyo.Objective(expr=m.x * m.y)
    grid = [-1 + 3 * k / 300 for k in range(301)]
    best = min(a * b for a in grid for b in grid if a + b >= 0.5 - 1e-12)
    r = solve(m, "scip")
    assert r.status == "optimal"
    assert r.objective == pytest.approx(best, abs=1e-6)
    assert r.bound <= r.objective + 1e-6
    assert pyo.value(m.x * m.y) == pytest.approx(best, abs=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_highs_cbc_scip_agree_on_random_milps(seed):
    results = {}
    for s in ("highs", "cbc", "scip"):
        if not AVAILABLE[s]:
            continue
        m = random_milp(seed)
        r = solve(m, s)
        assert r.status == "optimal", (s, r)  # feasible by construction (the point x0)
        check_feasible(m)
        assert pyo.value(m.obj) == pytest.approx(r.objective, rel=1e-9, abs=1e-9)
        results[s] = r
    if len(results) < 2:
        pytest.skip("needs two solvers")
    objs = [r.objective for r in results.values()]
    assert max(objs) - min(objs) <= 1e-6 * max(1.0, abs(objs[0])), results


@needs_highs
def test_random_milps_need_their_integrality():
    # guard on the generator: integrality changes the optimum on most seeds, so the agreement
    # test above compares MILP optima, not LP optima in disguise
    strict = 0
    for s in range(5):
        ip = solve(random_milp(s), "highs").objective
        lp = solve(random_milp(s), "highs", relax=True).objective
        assert lp <= ip + 1e-9
        strict += lp < ip - 1e-6
    assert strict >= 3


# ---------------------------------------------------------------------------------------------
# infeasible / unbounded / error statuses


def infeasible_milp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.c = pyo.Constraint(expr=m.x + m.y >= 0.5)
    m.d = pyo.Constraint(expr=m.x + m.y <= 0.7)  # LP-feasible, integer-infeasible
    m.obj = pyo.Objective(expr=m.x)
    return m


def infeasible_lp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x + m.y >= 3)
    m.obj = pyo.Objective(expr=m.x)
    return m


def unbounded_lp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.x - m.y <= 0)
    m.obj = pyo.Objective(expr=m.x)  # x -> -inf
    return m


def unbounded_milp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.z = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x - m.z >= 0)
    m.obj = pyo.Objective(expr=m.x + m.z, sense=pyo.maximize)
    return m


@pytest.mark.parametrize("solver", LINEAR_SOLVERS)
@pytest.mark.parametrize("build,expected", [(infeasible_milp, "infeasible"),
                                            (infeasible_lp, "infeasible"),
                                            (unbounded_lp, "unbounded"),
                                            (unbounded_milp, "unbounded")])
def test_infeasible_and_unbounded_statuses(solver, build, expected):
    m = build()
    r = solve(m, solver)
    assert r.status == expected, r
    assert r.objective is None and r.values == {}
    assert r.termination


@needs_highs
def test_trivially_infeasible_constraint_is_a_status():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.x.fix(1)
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.obj = pyo.Objective(expr=m.x)
    assert solve(m, "highs").status == "infeasible"


@pytest.mark.parametrize("solver", [pytest.param("highs", marks=needs_highs),
                                    pytest.param("cbc", marks=needs_cbc)])
def test_linear_solvers_report_error_on_nonlinear_model(solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 3))
    m.y = pyo.Var(bounds=(0, 3))
    m.c = pyo.Constraint(expr=m.x * m.y >= 1)
    m.obj = pyo.Objective(expr=m.x + m.y)
    r = solve(m, solver)
    assert r.status == "error"
    assert "scip" in r.message


def test_objective_count_and_arguments_are_checked():
    m = lp_max()
    m.obj2 = pyo.Objective(expr=m.x)
    with pytest.raises(InstanceError, match="exactly one active Objective, found 2"):
        solve(m)
    m.obj2.deactivate()
    with pytest.raises(InstanceError, match="time_limit"):
        solve(m, time_limit=-1)
    with pytest.raises(InstanceError, match="mip_gap"):
        solve(m, mip_gap=-0.1)


# ---------------------------------------------------------------------------------------------
# relaxation


def cover():
    """min x1 + x2 s.t. 2 x1 + 2 x2 >= 3, binary: MILP optimum 2 (both), LP optimum 1.5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], domain=pyo.Binary)
    m.c = pyo.Constraint(expr=2 * m.x[1] + 2 * m.x[2] >= 3)
    m.obj = pyo.Objective(expr=m.x[1] + m.x[2])
    return m


@pytest.mark.parametrize("solver", LINEAR_SOLVERS)
def test_relax_gives_strictly_smaller_lp_bound(solver):
    m = cover()
    r_lp = solve(m, solver, relax=True)
    assert r_lp.status == "optimal"
    assert r_lp.objective == pytest.approx(1.5, abs=1e-8)
    # relaxed values were loaded into the original model, whose integrality is untouched
    assert pyo.value(m.x[1] + m.x[2]) == pytest.approx(1.5, abs=1e-8)
    assert m.x[1].is_binary() and m.x[2].is_binary()
    r_ip = solve(m, solver)
    assert r_ip.objective == pytest.approx(2.0, abs=1e-9)
    assert r_lp.objective < r_ip.objective - 0.4


@pytest.mark.parametrize("solver", LINEAR_SOLVERS)
def test_relax_bound_below_knapsack_optimum(solver):
    m, value, weight, cap = knapsack(3)
    best, _ = knapsack_enumerate(value, weight, cap)
    # Dantzig's bound: greedy by value/weight ratio with one fractional item (hand formula)
    order = sorted(LAYERS, key=lambda n: value[n] / weight[n], reverse=True)
    room, dantzig = cap, 0.0
    for n in order:
        take = min(1.0, room / weight[n])
        dantzig += take * value[n]
        room -= take * weight[n]
        if room <= 0:
            break
    r = solve(m, solver, relax=True)
    assert r.objective == pytest.approx(dantzig, rel=1e-9)
    assert r.objective >= best - 1e-9  # maximisation: the relaxation bounds from above


# ---------------------------------------------------------------------------------------------
# time limit and gap


def hard_multiknapsack(n=300, seed=3):
    rng = random.Random(seed)
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    w = [rng.randint(1000, 100000) for _ in range(n)]
    m.c = pyo.ConstraintList()
    for _ in range(5):
        m.c.add(sum(rng.randint(1000, 100000) * m.x[i] for i in m.I) <= sum(w) // 4)
    m.obj = pyo.Objective(expr=sum(w[i] * m.x[i] for i in m.I), sense=pyo.maximize)
    return m


@pytest.mark.parametrize("solver", LINEAR_SOLVERS)
def test_time_limit_reports_incumbent_and_bound(solver):
    m = hard_multiknapsack()
    r = solve(m, solver, time_limit=0.2)
    assert r.status == "time_limit", r.termination  # stopped by the limit (no wall-clock assertion)
    # whether an incumbent exists after 0.2 s depends on the machine's load (issue 21: never assert
    # that work completes fast); with 5 s HiGHS has one (stopped by the limit or optimal)
    if solver == "highs" and r.objective is None:
        r = solve(m, solver, time_limit=5.0)
        assert r.status in ("time_limit", "optimal") and r.objective is not None
    if r.objective is not None:
        assert r.bound is not None
        assert r.bound >= r.objective - 1e-6  # maximisation: the dual bound is above
        assert r.gap == pytest.approx((r.bound - r.objective) / abs(r.objective), rel=1e-9)
        check_feasible(m)
        assert pyo.value(m.obj) == pytest.approx(r.objective, rel=1e-9)


@needs_highs
def test_mip_gap_lets_highs_stop_early_with_a_valid_bound():
    m = hard_multiknapsack(n=60, seed=1)
    r = solve(m, "highs", mip_gap=0.05, time_limit=20)
    assert r.status == "optimal"
    assert r.bound >= r.objective - 1e-6
    assert r.gap <= 0.05 + 1e-12


# ---------------------------------------------------------------------------------------------
# availability


def test_unknown_solver_names_the_packages():
    with pytest.raises(SolverUnavailable, match="pip install highspy") as info:
        solve(lp_max(), "no-such-solver")
    assert "pyscipopt" in str(info.value) and "pulp" in str(info.value)


@pytest.mark.parametrize("solver,package", [("highs", "highspy"), ("scip", "pyscipopt"),
                                            ("cbc", "pulp")])
def test_missing_solver_names_its_package(monkeypatch, solver, package):
    real = exact.base.has_module
    monkeypatch.setattr(exact.base, "has_module", lambda name: False if name == package else real(name))
    assert exact.available_solvers()[solver] is False
    with pytest.raises(SolverUnavailable, match=f"pip install {package}"):
        solve(lp_max(), solver)


def test_available_solvers_lists_the_builtins():
    a = available_solvers()
    assert {"highs", "scip", "cbc"} <= set(a)
    assert all(isinstance(v, bool) for v in a.values())
    assert exact.SOLVERS == {"highs": "highspy", "scip": "pyscipopt", "cbc": "pulp"}


@pytest.mark.skipif(not AVAILABLE.get("appsi_highs"), reason="appsi_highs missing")
def test_other_pyomo_solver_names_go_through_solverfactory():
    m, value, weight, cap = knapsack(2)
    best, _ = knapsack_enumerate(value, weight, cap)
    r = solve(m, "appsi_highs")
    assert r.status == "optimal" and r.objective == pytest.approx(best)
    r = solve(m, "appsi_highs", relax=True)
    assert r.objective >= best - 1e-9


@needs_highs
def test_bad_highs_option_names_the_option():
    with pytest.raises(InstanceError, match=r"^options\.no_such_option"):
        solve(lp_max(), "highs", options={"no_such_option": 1})


@pytest.mark.parametrize("solver", LINEAR_SOLVERS)
def test_all_variables_fixed_gives_the_constant(solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.x.fix(1)
    m.obj = pyo.Objective(expr=2 * m.x + 3)
    r = solve(m, solver)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(5.0)
    assert r.values == {"x": 1.0}
