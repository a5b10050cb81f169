"""Backends declare what they can do; tests run over every installed backend with a feature; the
public HiGHS matrix entry re-solves warm after bound changes. Expected values are derived here by
enumeration."""

import itertools

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ")

from splitopt.solvers import exact
from splitopt.solvers.exact import BACKENDS, STATUSES, HighsMatrix, solvers_with


def knapsack_model():
    values, weights, cap = [10, 13, 7, 8, 4], [5, 7, 4, 5, 3], 14
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(5), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(weights[i] * m.x[i] for i in range(5)) <= cap)
    m.obj = pyo.Objective(expr=sum(values[i] * m.x[i] for i in range(5)), sense=pyo.maximize)
    best = max(sum(v for v, b in zip(values, bits) if b) for bits in itertools.product((0, 1), repeat=5)
               if sum(w for w, b in zip(weights, bits) if b) <= cap)
    return m, best


def test_every_backend_declares_known_features_and_a_package():
    for name, b in BACKENDS.items():
        assert b.name == name and b.package and b.features <= set(exact.base.FEATURES)
        assert b.supports("lp", "milp")
    assert BACKENDS["scip"].supports("minlp", "nonconvex") and not BACKENDS["highs"].supports("minlp")
    assert STATUSES[0] == "optimal" and "time_limit" in STATUSES


@pytest.mark.parametrize("solver", solvers_with("milp"))
def test_milp_on_every_backend_that_has_it(solver):
    m, best = knapsack_model()
    r = exact.solve(m, solver)
    assert r.status == "optimal" and r.objective == pytest.approx(best) and r.bound == pytest.approx(best)


@pytest.mark.parametrize("solver", solvers_with("minlp", "nonconvex"))
def test_nonconvex_bilinear_on_every_backend_that_has_it(solver):
    # max x*y - x - y over x, y in {0..3} integer, plus a continuous z <= x*y/2: enumeration below
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    m.y = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    m.obj = pyo.Objective(expr=m.x * m.y - 2 * m.x - m.y, sense=pyo.maximize)
    best = max(x * y - 2 * x - y for x in range(4) for y in range(4))
    r = exact.solve(m, solver)
    assert r.status == "optimal" and r.objective == pytest.approx(best)


def test_highs_matrix_resolves_warm_after_bound_changes():
    """min c x s.t. x1 + x2 + x3 >= 2, x2 + x3 <= 1.5, 0 <= x <= 1: an LP, then x3 fixed to 0 (a
    branch), then integer columns; each answer checked by enumeration over a fine grid / vertices."""
    c = np.array([3.0, 1.0, 2.0])
    A = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
    hm = HighsMatrix.from_arrays(c, A, [2.0, -np.inf], [np.inf, 1.5], [0, 0, 0], [1, 1, 1])
    r = hm.solve()
    # LP: x2 = 1 (cheapest), x3 = 0.5 (row 2 caps x2 + x3), x1 = 0.5 -> 1 + 1 + 1.5 = 3.5
    assert r.status == "optimal" and r.objective == pytest.approx(3.5) and r.bound == pytest.approx(3.5)
    assert np.allclose(r.x, [0.5, 1.0, 0.5])
    iters_cold = hm.highs.getInfo().simplex_iteration_count
    hm.set_bounds([2], [0.0], [0.0])  # branch x3 = 0: then x1 = x2 = 1 -> 4
    r = hm.solve()
    assert r.objective == pytest.approx(4.0) and np.allclose(r.x, [1.0, 1.0, 0.0])
    assert hm.highs.getInfo().simplex_iteration_count <= iters_cold + 2  # started from the last basis
    hm.set_bounds([2], [0.0], [1.0])
    hm.set_bounds([0], [0.0], [0.0])  # x1 = 0: x2 + x3 >= 2 but <= 1.5 -> infeasible
    assert hm.solve().status == "infeasible"

    hi = HighsMatrix.from_arrays(c, A, [2.0, -np.inf], [np.inf, 1.5], [0, 0, 0], [1, 1, 1], integer=[1, 1, 1])
    r = hi.solve()
    grid = [x for x in itertools.product((0, 1), repeat=3) if sum(x) >= 2 and x[1] + x[2] <= 1.5]
    best = min(float(np.dot(c, x)) for x in grid)
    assert r.status == "optimal" and r.objective == pytest.approx(best) and r.bound == pytest.approx(best)


def test_highs_matrix_from_pyomo_keeps_the_column_order():
    m, best = knapsack_model()
    hm = HighsMatrix.from_pyomo(m)
    assert [v.name for v in hm.columns] == [f"x[{i}]" for i in range(5)]
    r = hm.solve()
    assert r.objective == pytest.approx(best)
    lp = HighsMatrix.from_pyomo(m, relax=True).solve()
    assert lp.objective >= best - 1e-9 and not HighsMatrix.from_pyomo(m, relax=True).is_mip


def test_large_models_run_on_a_big_stack_thread(monkeypatch):
    """Every model above THREAD_ABOVE runs ``Highs.run`` on a separate big-stack thread and gives the
    same answer (forced here on a small model; the real case is the slow test below)."""
    import threading

    from splitopt.solvers.exact import highs

    seen = []
    real = highs.HighsMatrix._run

    def spy(self):
        seen.append(self.num_col + int(self.lp.num_row_) > highs.THREAD_ABOVE)
        real(self)
        seen.append(threading.active_count())

    monkeypatch.setattr(highs, "THREAD_ABOVE", 0)
    monkeypatch.setattr(highs.HighsMatrix, "_run", spy)
    m, best = knapsack_model()
    assert exact.solve(m, "highs").objective == pytest.approx(best)
    assert seen[0] is True


@pytest.mark.slow
def test_20000_layer_chain_milp_does_not_crash_the_process():
    """Before the big-stack thread, HiGHS's MIP presolve overflowed the stack on this model and the
    process died with SIGSEGV (exit 139). Run in a child so a regression cannot take pytest down."""
    import subprocess
    import sys

    code = ("from splitopt.instances import generate as gen\n"
            "from splitopt.instances.split import SplitInstance\n"
            "from splitopt.families import solve\n"
            "g = gen.generate('chain', 0, n=20000)\n"
            "inst = SplitInstance.from_graph(g, up_bytes_per_s=1e6, down_bytes_per_s=1e6, mode='training', "
            "iterations=1, device_flops=1e10, server_flops=1e12, timing='flops')\n"
            "a, b = solve(inst, 'milp'), solve(inst, 'mincut')\n"
            "print(a.status, a.objective, b.objective)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    status, a, b = p.stdout.split()
    assert status == "optimal" and float(a) == pytest.approx(float(b), rel=1e-9)
