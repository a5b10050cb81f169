"""BNP (thesis Alg. 1) as printed: hand-computed steps, the k = 2 identity with exhaustive search
(digest §1.6g), the k > n guard (digest §5.1 #5) and the measured greedy gap."""

from __future__ import annotations

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.grouping import GroupingInstance, generate
from splitopt.models.grouping import evaluate
from splitopt.solvers.grouping import dp as grouping_dp
from splitopt.solvers.grouping.bnp import bnp
from splitopt.solvers.grouping.exhaustive import exhaustive


def test_hand_computed_first_split():
    # t = (1, 1, 2), s = (0, 0, 0), c = 0, k = 2 -> only the balance term acts:
    # split at 1: T = (1, 3) -> max/mean = 3/2; split at 2: T = (2, 2) -> 1. BNP picks [2, 1].
    inst = GroupingInstance.from_arrays([1.0, 1.0, 2.0], [0.0, 0.0, 0.0], [0, 0, 0], k=2, objective="thesis_cost")
    assert bnp(inst) == [2, 1]


def test_ties_go_to_first_candidate():
    inst = GroupingInstance.from_arrays([1.0] * 4, [0.0] * 4, k=2, objective="thesis_cost")
    assert bnp(inst) == [2, 2]
    inst = GroupingInstance.from_arrays([1.0] * 3, [0.0] * 3, k=2, objective="thesis_cost")
    assert bnp(inst) == [1, 2]  # splits at 1 and 2 tie (max 2 either way): lowest position wins


def test_k2_bnp_equals_exhaustive():
    # digest §1.6g: for k = 2 BNP and exhaustive search pick the same cut (3,000 instances there)
    for seed in range(300):
        inst = generate(seed, n=2 + seed % 11, k=2, objective="thesis_cost")
        assert bnp(inst) == exhaustive(inst)


def test_k_greater_than_n_guard():
    inst = generate(1, n=4, k=2)
    sizes, info = bnp(inst, k=7, return_info=True)
    assert sizes == [1, 1, 1, 1] and info["stalled"]  # the printed loop would never terminate
    with pytest.raises(InstanceError):
        bnp(inst, k=0)


def test_require_improvement_can_stop_early():
    # strong transfer weight: every split costs beta * s_p / S_tot > the tiny conv/balance gain
    inst = GroupingInstance.from_arrays([1.0, 1.0, 1.0], [1e6, 1e6, 0.0], [0, 0, 0], k=3, at_most_k=True,
                                        objective="thesis_cost", alpha=0.0, beta=1.0, gamma=0.0, delta=0.0)
    assert bnp(inst) == [1, 1, 1]  # as printed: always split
    assert bnp(inst, require_improvement=True) == [3]


def test_greedy_gap_measured():
    # BNP is never better than the exact optimum, and is strictly worse somewhere
    worst = 1.0
    for seed in range(200):
        n = 3 + seed % 10
        inst = generate(seed, n=n, k=1 + seed % n, objective="thesis_cost" if seed % 2 else "perf")
        opt = evaluate(inst, grouping_dp.solve(inst))[0]
        val = evaluate(inst, bnp(inst))[0]
        assert val >= opt - 1e-12
        if inst.objective == "perf":
            worst = max(worst, val / opt)
    assert worst > 1.05
