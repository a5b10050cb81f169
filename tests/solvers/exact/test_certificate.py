"""The exact Lagrangian certificate: valid for any multipliers (weak duality, exact arithmetic), tight
at HiGHS's LP duals. Expected optima are derived here by hand or by enumeration."""

import itertools

import numpy as np
import pytest

from splitopt.solvers.exact.highs import HighsMatrix, lagrangian_bound

C = np.array([3.0, 1.0, 2.0])
A = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 1.0]])


@pytest.mark.parametrize("maximize", [False, True])
def test_bound_is_tight_at_the_lp_duals(maximize):
    # min 3x1 + x2 + 2x3, x1 + x2 + x3 >= 2, x2 + x3 <= 1.5, x in [0,1]^3: x = (.5, 1, .5), 3.5 (by hand)
    c = -C if maximize else C
    hm = HighsMatrix.from_arrays(c, A, [2.0, -np.inf], [np.inf, 1.5], [0, 0, 0], [1, 1, 1], maximize=maximize)
    r = hm.solve()
    want = -3.5 if maximize else 3.5
    assert r.objective == pytest.approx(want) and r.y is not None
    assert lagrangian_bound(hm, r.y) == pytest.approx(want, abs=1e-12)


def test_bound_is_valid_for_any_multipliers_and_for_the_integer_points():
    hm = HighsMatrix.from_arrays(C, A, [2.0, -np.inf], [np.inf, 1.5], [0, 0, 0], [1, 1, 1])
    ints = [x for x in itertools.product((0, 1), repeat=3) if sum(x) >= 2 and x[1] + x[2] <= 1.5]
    best_int = min(float(np.dot(C, x)) for x in ints)  # 4: x1 plus one of x2, x3
    rng = np.random.default_rng(0)
    for _ in range(200):
        y = rng.normal(scale=3, size=2)
        assert lagrangian_bound(hm, y) <= 3.5 + 1e-12 <= best_int


def test_bound_rounds_outwards_exactly():
    # one column, cost 0.1 (not a dyadic number in decimal, exact as a double), x >= 1/3 as a row
    hm = HighsMatrix.from_arrays([0.1], np.array([[1.0]]), [1 / 3], [np.inf], [0.0], [1.0])
    r = hm.solve()
    b = lagrangian_bound(hm, r.y)
    from fractions import Fraction

    assert Fraction(b) <= Fraction(0.1) * Fraction(1 / 3)  # never above the exact optimum
    assert b == pytest.approx(0.1 / 3, rel=1e-15)
