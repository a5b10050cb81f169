"""Costs and bytes at the bottom of the stated quantity range (issue 21): every value 1e-300.

Regression: ``-a mincut`` ended in ``OverflowError`` in ``flow._scaled_round`` (``2^30 / bound``
overflowed to infinity, ``2.0 ** e`` beyond the double range). The reproduction
(``data/split_all_tiny.json``, ResNet-18 with every cost and byte count 1e-300) is a copy of
``/work/shared/repro/split_all_tiny.json``.
"""

from pathlib import Path

import numpy as np
import pytest

from cases.split import random_instance
from splitopt.families import solve
from splitopt.instances import io
from splitopt.solvers.flow import _scaled_round, solve_structure
from splitopt.solvers.split import mincut

DATA = Path(__file__).parent / "data"


def _exact_path_a(inst):
    """The same cut by path A (exact integer max-flow on the whole network): an independent method."""
    dev, srv = mincut._dev_srv(inst, "corrected")
    st, w = mincut._instance_structure(inst, True, True, True, True)
    return solve_structure(st, np.asarray(dev, float), np.asarray(srv, float), w, small=10**9)


def test_all_tiny_repro_mincut_is_exact():
    inst = io.load(DATA / "split_all_tiny.json")
    sol = solve(inst, "mincut")
    ref = _exact_path_a(inst)
    assert ref.value == ref.lower_bound  # path A is exact
    assert sol.objective == pytest.approx(ref.value, rel=1e-12, abs=0)
    assert 0 < sol.objective < 1e-290


@pytest.mark.parametrize("tiny", [1e-300, 5e-324])
def test_scaled_round_at_tiny_bounds(tiny):
    """Scaled rounds on a network whose every capacity is ``tiny`` (down to the smallest subnormal):
    the scaled integer capacities stay within 2^30 and the flow is a valid lower bound."""
    inst = random_instance(3, n=40)
    st, w = mincut._instance_structure(inst, True, True, True, True)
    n = inst.n_layers
    dev = np.full(n, tiny)
    srv = np.full(n, 2 * tiny)
    w = np.full(w.size, tiny)
    cap, const = st.capacities(dev, srv, w)
    bound = float(cap.sum()) or tiny
    e, fdata, fval, side = _scaled_round(st, cap, bound)
    assert fdata.max(initial=0) <= 1 << 30
    assert np.ldexp(float(fval), -e) <= bound
    res = solve_structure(st, dev, srv, w)
    exact = solve_structure(st, dev, srv, w, small=10**9)
    assert res.value == exact.value and res.lower_bound <= exact.value
