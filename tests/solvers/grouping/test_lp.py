"""LP relaxations of both grouping MILPs (issue 12 item 11): bound <= the optimum found by brute force."""

import pytest

from splitopt.families import get_family, solve
from splitopt.instances.grouping import generate
from splitopt.models.grouping import evaluate
from splitopt.solvers.grouping.bruteforce import all_groupings


@pytest.mark.parametrize("algo", ["lp_compact", "lp_interval"])
def test_lp_bound_below_bruteforce_optimum(algo):
    strict = 0
    for s in range(24):
        inst = generate(s, n=7, k=None, objective=None)
        opt = min(evaluate(inst, g)[0] for g in all_groupings(inst))
        sol = solve(inst, algo)
        assert sol.status == "ok" and sol.bound is not None
        tol = 1e-7 * max(1.0, abs(opt))
        assert sol.bound <= opt + tol, (s, inst.objective, sol.bound, opt)
        assert sol.objective >= opt - 1e-12 * max(1.0, abs(opt))   # the rounding is a valid grouping
        strict += sol.bound < opt - 1e-6 * max(1.0, abs(opt))
    assert strict >= 1  # the relaxation is not integral everywhere: the bound is a real bound


def test_registered_as_relaxations():
    fam = get_family("grouping")
    assert set(fam.relaxations) == {"lp_compact", "lp_interval"}
    assert all(fam.algorithms[a].kind == "relaxation" and not fam.algorithms[a].exact for a in fam.relaxations)
