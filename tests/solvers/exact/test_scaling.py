"""The objective scaling handed to HiGHS is a finite power of two for any finite costs, including
subnormal and huge ones (before: OverflowError / math domain error)."""

import math

import numpy as np
import pytest

from splitopt.solvers.exact.highs import objective_scale


@pytest.mark.parametrize("costs", [[1e-300, 2.0], [5e-324], [1e300, 1e-300], [1.7e308], [0.0, 0.0], [],
                                   [3.0, -1e-12, float("inf")]])
def test_objective_scale_is_a_finite_power_of_two(costs):
    s = objective_scale(np.array(costs, dtype=float))
    m, e = math.frexp(s)
    assert math.isfinite(s) and s > 0 and m == 0.5


def test_objective_scale_brings_costs_into_range():
    assert objective_scale(np.array([1e-9, 1.0])) * 1e-9 >= 1e-4  # small costs scaled up
    assert objective_scale(np.array([1e9])) * 1e9 <= 1e6  # large ones down
