"""Tests of the shared product linearisations, splitopt.models.relax.

Expected values come from hand algebra, enumeration or grids written out here.
"""

from __future__ import annotations

import itertools
import random

import pytest

pyo = pytest.importorskip("pyomo.environ")

from splitopt.errors import InstanceError
from splitopt.models.relax import add_binary_product, add_mccormick, add_rlt_assignment_products, mccormick_envelope
from splitopt.solvers.exact import available_solvers, solve

AVAILABLE = available_solvers()
needs_highs = pytest.mark.skipif(not AVAILABLE["highs"], reason="highspy missing")
needs_scip = pytest.mark.skipif(not AVAILABLE["scip"], reason="pyscipopt missing")

BOX = (-1.5, 2.0, -3.0, 0.5)  # xL, xU, yL, yU: mixed signs on purpose


def w_range(x_val, y_val, box=BOX, fix_x=True, fix_y=True):
    """Min and max of w over the McCormick rows with x, y fixed (bounds from ``box``)."""
    xL, xU, yL, yU = box
    out = []
    for sense in (pyo.minimize, pyo.maximize):
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(xL, xU))
        m.y = pyo.Var(bounds=(yL, yU))
        m.w = pyo.Var(bounds=(-100, 100))
        add_mccormick(m, m.w, m.x, m.y)
        # fix through rows, not Var.fix, so the envelope is built from the box bounds
        m.fx = pyo.Constraint(expr=m.x == x_val)
        m.fy = pyo.Constraint(expr=m.y == y_val)
        m.obj = pyo.Objective(expr=m.w, sense=sense)
        r = solve(m, "highs")
        assert r.status == "optimal"
        out.append(r.objective)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# the envelope itself


def test_float_envelope_is_exact_on_the_box_edges_and_loose_inside():
    xL, xU, yL, yU = BOX
    for x, y in [(xL, -2.0), (xU, 0.25), (0.3, yL), (-1.0, yU), (xL, yL), (xU, yU)]:
        lo, hi = mccormick_envelope(xL, xU, yL, yU, x, y)
        assert lo == pytest.approx(x * y, abs=1e-12)
        assert hi == pytest.approx(x * y, abs=1e-12)
    # interior point, by hand: x=0.25, y=-1.25
    #   lo = max(-1.5*-1.25 + 0.25*-3 - 4.5, 2*-1.25 + 0.25*0.5 - 1) = max(-3.375, -3.375)
    #   hi = min(2*-1.25 + 0.25*-3 + 6, -1.5*-1.25 + 0.25*0.5 + 0.75) = min(2.75, 2.75)
    lo, hi = mccormick_envelope(xL, xU, yL, yU, 0.25, -1.25)
    assert lo == pytest.approx(-3.375)
    assert hi == pytest.approx(2.75)
    assert lo < 0.25 * -1.25 < hi


def test_float_envelope_contains_the_product_everywhere():
    rng = random.Random(7)
    xL, xU, yL, yU = BOX
    for _ in range(2000):
        x, y = rng.uniform(xL, xU), rng.uniform(yL, yU)
        lo, hi = mccormick_envelope(xL, xU, yL, yU, x, y)
        assert lo - 1e-12 <= x * y <= hi + 1e-12


@needs_highs
@pytest.mark.parametrize("x,y", [(-1.5, -2.0), (2.0, 0.25), (0.3, -3.0), (-1.0, 0.5)])
def test_pyomo_envelope_is_exact_at_bounds(x, y):
    lo, hi = w_range(x, y)
    assert lo == pytest.approx(x * y, abs=1e-9)
    assert hi == pytest.approx(x * y, abs=1e-9)


@needs_highs
def test_pyomo_envelope_interior_matches_hand_values():
    lo, hi = w_range(0.25, -1.25)
    assert lo == pytest.approx(-3.375, abs=1e-9)
    assert hi == pytest.approx(2.75, abs=1e-9)


@needs_highs
def test_one_sided_envelopes():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2))
    m.y = pyo.Var(bounds=(0, 2))
    m.w = pyo.Var()
    b = add_mccormick(m, m.w, m.x, m.y, sides="lower")
    assert hasattr(b, "lo1") and hasattr(b, "lo2") and not hasattr(b, "up1")
    m.fx = pyo.Constraint(expr=m.x == 1)
    m.fy = pyo.Constraint(expr=m.y == 1)
    m.obj = pyo.Objective(expr=m.w)
    # lower envelope at (1, 1) in [0,2]^2: max(0, 2 + 2 - 4) = 0
    assert solve(m, "highs").objective == pytest.approx(0.0, abs=1e-9)
    m.obj.sense = pyo.maximize
    assert solve(m, "highs").status == "unbounded"  # no upper rows


# ---------------------------------------------------------------------------------------------
# relaxation bound versus the true MINLP optimum


def minlp(relaxed: bool):
    """min -x*y, x integer in [0, 2], y in [0, 2], x + y <= 2.5.

    MINLP optimum by enumeration over x (y = 2.5 - x, capped at 2): x=1, y=1.5 -> -1.5.
    McCormick: w <= min(2x, 2y); x=1, y=1.5 gives 2, so the relaxation bound is -2 < -1.5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 2))
    m.y = pyo.Var(bounds=(0, 2))
    m.c = pyo.Constraint(expr=m.x + m.y <= 2.5)
    if relaxed:
        m.w = pyo.Var()
        add_mccormick(m, m.w, m.x, m.y)
        m.obj = pyo.Objective(expr=-m.w)
    else:
        m.obj = pyo.Objective(expr=-m.x * m.y)
    return m


def minlp_enumerate():
    best = float("inf")
    for x in range(3):
        for k in range(2001):  # grid on y
            y = 2 * k / 2000
            if x + y <= 2.5 + 1e-12:
                best = min(best, -x * y)
    return best


@needs_highs
@needs_scip
def test_mccormick_bound_is_below_the_minlp_optimum():
    truth = minlp_enumerate()
    assert truth == pytest.approx(-1.5)
    r_true = solve(minlp(False), "scip")
    assert r_true.status == "optimal"
    assert r_true.objective == pytest.approx(truth, abs=1e-6)
    r_rel = solve(minlp(True), "highs")
    assert r_rel.status == "optimal"
    assert r_rel.objective <= truth + 1e-9
    assert r_rel.objective == pytest.approx(-2.0, abs=1e-9)  # strictly below, by hand


@needs_highs
def test_mccormick_bound_below_the_continuous_bilinear_optimum():
    """max x*y with x + y <= 2 on [0,2]^2: optimum 1 at (1,1); McCormick gives 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2))
    m.y = pyo.Var(bounds=(0, 2))
    m.w = pyo.Var()
    m.c = pyo.Constraint(expr=m.x + m.y <= 2)
    add_mccormick(m, m.w, m.x, m.y)
    m.obj = pyo.Objective(expr=m.w, sense=pyo.maximize)
    grid = [2 * k / 400 for k in range(401)]
    truth = max(a * b for a in grid for b in grid if a + b <= 2 + 1e-12)
    r = solve(m, "highs")
    assert truth == pytest.approx(1.0)
    assert r.objective == pytest.approx(2.0, abs=1e-9)
    assert r.objective >= truth


# ---------------------------------------------------------------------------------------------
# binary products: exact


@needs_highs
@pytest.mark.parametrize("z,x", list(itertools.product((0, 1), (-3.0, -0.5, 0.0, 2.0, 5.0))))
def test_binary_times_continuous_is_exact(z, x):
    for sense in (pyo.minimize, pyo.maximize):
        m = pyo.ConcreteModel()
        m.z = pyo.Var(domain=pyo.Binary)
        m.x = pyo.Var(bounds=(-3, 5))
        m.w = pyo.Var()
        add_binary_product(m, m.w, m.z, m.x)
        m.fz = pyo.Constraint(expr=m.z == z)
        m.fx = pyo.Constraint(expr=m.x == x)
        m.obj = pyo.Objective(expr=m.w, sense=sense)
        r = solve(m, "highs")
        assert r.objective == pytest.approx(z * x, abs=1e-9)


@needs_highs
def test_binary_products_reproduce_a_quadratic_binary_program():
    """max sum_ij Q_ij z_i z_j over z in {0,1}^4 with a budget, linearised, vs enumeration."""
    rng = random.Random(11)
    n = 4
    Q = {(i, j): rng.randint(-6, 8) for i in range(n) for j in range(i + 1, n)}
    lin = [rng.randint(-3, 5) for _ in range(n)]
    best = max(sum(lin[i] * z[i] for i in range(n)) + sum(q * z[i] * z[j] for (i, j), q in Q.items())
               for z in itertools.product((0, 1), repeat=n) if sum(z) <= 3)
    m = pyo.ConcreteModel()
    m.z = pyo.Var(range(n), domain=pyo.Binary)
    m.w = pyo.Var(list(Q), bounds=(0, 1))
    for (i, j) in Q:
        add_binary_product(m, m.w[i, j], m.z[i], m.z[j])
    m.budget = pyo.Constraint(expr=sum(m.z[i] for i in range(n)) <= 3)
    m.obj = pyo.Objective(expr=sum(lin[i] * m.z[i] for i in range(n))
                          + sum(q * m.w[k] for k, q in Q.items()), sense=pyo.maximize)
    r = solve(m, "highs")
    assert r.objective == pytest.approx(best, abs=1e-9)
    for (i, j) in Q:
        assert pyo.value(m.w[i, j]) == pytest.approx(pyo.value(m.z[i]) * pyo.value(m.z[j]),
                                                     abs=1e-9)


def test_binary_product_rejects_non_binary_and_unbounded():
    m = pyo.ConcreteModel()
    m.z = pyo.Var(bounds=(0, 1))  # continuous
    m.x = pyo.Var(bounds=(0, 4))
    m.u = pyo.Var(bounds=(0, None))
    m.w = pyo.Var()
    with pytest.raises(InstanceError, match=r"^z: must be a binary"):
        add_binary_product(m, m.w, m.z, m.x)
    m.b = pyo.Var(domain=pyo.Binary)
    with pytest.raises(InstanceError, match=r"^u: needs finite bounds.*None"):
        add_binary_product(m, m.w, m.b, m.u)
    with pytest.raises(InstanceError, match="sides"):
        add_mccormick(m, m.w, m.b, m.x, sides="middle")


def test_blocks_get_unique_names():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var([1], bounds=(0, 1))
    m.w = pyo.Var([("a", 1)])
    b1 = add_mccormick(m, m.w["a", 1], m.x, m.y[1])
    b2 = add_mccormick(m, m.w["a", 1], m.x, m.y[1])
    assert b1.local_name == "mccormick_w_a_1"
    assert b2.local_name == "mccormick_w_a_1_2"


# ---------------------------------------------------------------------------------------------
# RLT products of assignment vectors


def rlt_model(xi_vals, xj_vals):
    nodes = range(len(xi_vals))
    m = pyo.ConcreteModel()
    m.xi = pyo.Var(nodes, bounds=(0, 1))
    m.xj = pyo.Var(nodes, bounds=(0, 1))
    m.y = pyo.Var(nodes, nodes, bounds=(0, 1))
    for a in nodes:
        m.xi[a].fix(xi_vals[a])
        m.xj[a].fix(xj_vals[a])
    add_rlt_assignment_products(m, m.y, m.xi, m.xj)
    # crossing mass
    m.obj = pyo.Objective(expr=sum(m.y[a, b] for a in nodes for b in nodes if a != b))
    return m


@needs_highs
def test_rlt_is_tighter_than_mccormick_on_fractional_assignments():
    """Digest 004 Sec. 6.4: RLT crossing mass >= total-variation distance; McCormick gives 0.

    xi = (0.5, 0.5, 0), xj = (0, 0.5, 0.5): TV = (0.5 + 0 + 0.5) / 2 = 0.5."""
    xi, xj = (0.5, 0.5, 0.0), (0.0, 0.5, 0.5)
    tv = 0.5 * sum(abs(a - b) for a, b in zip(xi, xj))
    r_rlt = solve(rlt_model(xi, xj), "highs")
    assert r_rlt.objective == pytest.approx(tv, abs=1e-9)
    # McCormick reads a fixed variable as a point box (exact there), so build it on the free
    # box [0, 1] and fix the assignments through rows instead
    nodes = range(3)
    m = pyo.ConcreteModel()
    m.xi = pyo.Var(nodes, bounds=(0, 1))
    m.xj = pyo.Var(nodes, bounds=(0, 1))
    m.y = pyo.Var(nodes, nodes, bounds=(0, 1))
    for a in nodes:
        for b in nodes:
            add_mccormick(m, m.y[a, b], m.xi[a], m.xj[b])
    m.fi = pyo.Constraint(nodes, rule=lambda mm, a: mm.xi[a] == xi[a])
    m.fj = pyo.Constraint(nodes, rule=lambda mm, a: mm.xj[a] == xj[a])
    m.obj = pyo.Objective(expr=sum(m.y[a, b] for a in nodes for b in nodes if a != b))
    r_mc = solve(m, "highs")
    assert r_mc.objective == pytest.approx(0.0, abs=1e-9)
    assert r_rlt.objective > r_mc.objective + 0.4


@needs_highs
@pytest.mark.parametrize("a0,b0", [(0, 0), (0, 2), (1, 2)])
def test_rlt_forces_products_at_binary_assignments(a0, b0):
    xi = tuple(1.0 if a == a0 else 0.0 for a in range(3))
    xj = tuple(1.0 if b == b0 else 0.0 for b in range(3))
    for sense in (pyo.minimize, pyo.maximize):
        m = rlt_model(xi, xj)
        m.obj.sense = sense
        r = solve(m, "highs")
        assert r.objective == pytest.approx(0.0 if a0 == b0 else 1.0, abs=1e-9)
        for a in range(3):
            for b in range(3):
                assert pyo.value(m.y[a, b]) == pytest.approx(xi[a] * xj[b], abs=1e-9)


def test_rlt_needs_every_pair():
    m = pyo.ConcreteModel()
    m.xi = pyo.Var([0, 1])
    m.xj = pyo.Var([0, 1])
    m.y = pyo.Var([(0, 0), (0, 1), (1, 0)])
    with pytest.raises(InstanceError, match=r"y\[\(1, 1\)\]: missing"):
        add_rlt_assignment_products(m, m.y, m.xi, m.xj)
