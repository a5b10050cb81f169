"""Issue 22 §4: the MILP is scaled from the instance (times in units of the work bound, big-M of the
chain rows from a knapsack under the incumbent, times below 1e-7 of the unit or 1e-8 of the largest
class time kept through one aggregate per accelerator where the range allows, else dropped as a
relaxation), so HiGHS's coefficient range stays within what it certifies
(1e9) on badly scaled inputs, and ``optimal`` is said only where the evaluator's value meets the
bound: checked against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from splitopt.families import solve
from splitopt.instances.placement import generate
from splitopt.models.placement_milp import build_milp
from splitopt.solvers.exact.highs import TRUSTED_RANGE, HighsMatrix


def badly_scaled(seed, contiguity, training):
    inst = generate(seed, n_nodes=6, n_accelerators=2, n_cpus=1, training=training, contiguity=contiguity)
    rng = np.random.default_rng(seed)
    # operator times over 12 decades and tensors down to 1e-15 s (an operator graph's bias adds
    # beside its matmuls, optimizer updates beside attention)
    f = 10.0 ** rng.uniform(-12, 0, inst.n_nodes)
    tens = tuple((p, c, s * 10.0 ** rng.uniform(-15, 0)) for p, c, s in inst.tensors)
    return inst.with_(cpu_seconds=tuple(c * x for c, x in zip(inst.cpu_seconds, f)),
                      acc_seconds=tuple(a * x for a, x in zip(inst.acc_seconds, f)), tensors=tens)


def coefficient_range(model) -> float:
    hm = HighsMatrix.from_pyomo(model, relax=False, time_limit=None, mip_gap=None, tee=False, options=None)
    return hm.coefficient_range


@pytest.mark.parametrize("contiguity", ["none", "convex", "chain"])
@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_range_within_what_highs_certifies_and_answers_match_bruteforce(seed, contiguity, training):
    inst = badly_scaled(seed, contiguity, training)
    bf = solve(inst, "bruteforce").objective
    for inc in (None, bf * 1.5):
        assert coefficient_range(build_milp(inst, incumbent=inc)) <= TRUSTED_RANGE
    for algo in ("auto", "milp"):
        s = solve(inst, algo, time_limit=30)
        assert s.objective >= bf * (1 - 1e-9)
        assert s.bound is None or s.bound <= bf * (1 + 1e-9)
        if s.status == "optimal":
            assert s.objective == pytest.approx(bf, rel=1e-9)
    # without a limit auto proves the optimum, or stops within the dropped coefficients (1e-7 of the
    # unit: the relaxation's bound is then a hair below the optimum) and says so
    s = solve(inst, "auto")
    assert s.objective == pytest.approx(bf, rel=1e-9)
    assert s.status == "optimal" or (s.status == "feasible" and bf - s.bound <= 1e-6 * bf)


@pytest.mark.parametrize("contiguity", ["none", "convex", "chain"])
def test_a_small_tensor_on_the_bottleneck_is_kept_and_proven(contiguity):
    """Two 1 ms operators on two accelerators joined by a 1e-11 s tensor (1e-8 of the MILP's unit,
    below its 1e-7 threshold): apart they take 1 ms + 1e-11 s each, the optimum. Dropped from the
    model (as before 2026-11-25), the bound stayed at 1 ms, 1e-8 below the evaluator's value, and
    nothing was proven; kept through the small items' aggregate, the MILP proves it."""
    from splitopt.instances.placement import PlacementInstance

    inst = PlacementInstance(("a", "b"), (1e-2, 1e-2), (1e-3, 1e-3), ((0, (1,), 1e-11),), n_accelerators=2,
                             n_cpus=0, contiguity=contiguity)
    assert hasattr(build_milp(inst, incumbent=2e-3), "ysmall")  # (chain: big-M from the incumbent)
    for algo in ("milp", "auto"):
        s = solve(inst, algo, time_limit=30)
        assert s.status == "optimal" and s.objective == pytest.approx(1e-3 + 1e-11, rel=1e-13)
        assert s.bound >= s.objective * (1 - 1e-9)
