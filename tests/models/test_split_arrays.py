"""``milp_arrays`` (HiGHS without Pyomo, issue 21) is :func:`build_milp`: same size, same optimum,
same LP bound, and the brute-force optimum, on random DAGs (pins included) and wide-range costs."""

import math

import numpy as np
import pytest

from cases.split import random_instance, wide_range_instance
from splitopt.models.split import build_milp, evaluate, milp_arrays
from splitopt.solvers import exact
from splitopt.solvers.split import bruteforce


def _pyomo_standard_form(inst):
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

    return LinearStandardFormCompiler().write(build_milp(inst), mixed_form=True, set_sense=None)


@pytest.mark.parametrize("seed", range(40))
def test_same_optimum_as_the_pyomo_model_and_brute_force(seed):
    inst = random_instance(seed)
    arr = milp_arrays(inst)
    r = arr.matrix().solve()
    best = bruteforce.solve_detailed(inst)[0]
    obj = evaluate(inst, arr.assignment(inst, r.x))[0]
    assert math.isclose(obj, best, rel_tol=1e-9, abs_tol=1e-12)
    m = build_milp(inst)
    res = exact.solve(m, "highs")
    assert math.isclose(r.objective, res.objective, rel_tol=1e-9, abs_tol=1e-12)
    lp_a = arr.matrix(relax=True).solve().objective
    lp_p = exact.solve(build_milp(inst), "highs", relax=True).objective
    assert math.isclose(lp_a, lp_p, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_same_rows_and_costs_without_pins(seed):
    inst = random_instance(seed, pins=False)
    if inst.input_policy == "pin":  # pinned inputs are fixed variables: Pyomo substitutes them
        from dataclasses import replace

        inst = replace(inst, input_policy="upload")
    arr = milp_arrays(inst)
    repn = _pyomo_standard_form(inst)
    assert arr.A.shape == repn.A.shape and arr.A.nnz == repn.A.nnz
    assert sorted(arr.c.tolist()) == sorted(np.ravel(repn.c.toarray()).tolist())


@pytest.mark.parametrize("seed", range(8))
def test_wide_range_certified_optimum(seed):
    from splitopt.families import solve

    inst = wide_range_instance(seed)
    s = solve(inst, "milp")
    assert s.status == "optimal" and s.info.get("model") == "arrays"
    assert math.isclose(s.objective, solve(inst, "mincut").objective, rel_tol=1e-9)
