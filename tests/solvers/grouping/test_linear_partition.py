"""Linear-partition DP and exact parametric search for the bottleneck objective (digest 003 §5.3,
methods 2-3), including the invalid-greedy-probe counterexample with transfers."""

from __future__ import annotations

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.grouping import GroupingInstance, generate
from splitopt.models.grouping import evaluate
from splitopt.solvers.grouping.bruteforce import bruteforce
from splitopt.solvers.grouping.linear_partition import greedy_probe, parametric_search, solve_dp


def test_hand_computed_ccp():
    # classic linear partition: 1..9 into 3 -> [1..5 | 6,7 | 8,9] with max 17 (sums 15, 13, 17)
    inst = GroupingInstance.from_arrays([float(x) for x in range(1, 10)], [0.0] * 9, k=3,
                                        objective="bottleneck", transfers=False)
    for algo in (solve_dp, parametric_search):
        sizes = algo(inst)
        assert evaluate(inst, sizes)[0] == 17.0


def test_greedy_probe_counts():
    import numpy as np

    t = np.array([4.0, 4.0, 4.0, 1.0])
    assert greedy_probe(t, 8.0) == 2 and greedy_probe(t, 5.0) == 3 and greedy_probe(t, 3.0) is None


def naive_greedy_probe_on_w(inst, theta):
    """The greedy scan applied to w = T + s_last/B (what digest §5.3 method 3 warns against)."""
    B, count, a = inst.bandwidth_bytes_per_s, 1, 0
    T = 0.0
    for j, t in enumerate(inst.t):
        if T + t + inst.transfer_bytes(a, j, 2) / B <= theta:
            T += t
        else:
            count, a, T = count + 1, j, t
            if T + inst.transfer_bytes(a, j, 2) / B > theta:
                return None
    return count


def test_greedy_probe_invalid_with_transfers():
    # w is not monotone in the group end: [p1 p2 p3] has w = 3 (last tensor 0 bytes) but the
    # prefix [p1 p2] has w = 2 + 10. Optimum with k = 2 is [p1 | p2 p3] with max(1 + 0, 2 + 0) = 2.
    inst = GroupingInstance.from_arrays([1.0, 1.0, 1.0], [0.0, 10.0, 0.0], k=2, objective="bottleneck",
                                        bandwidth_bytes_per_s=1.0)
    assert evaluate(inst, [1, 2])[0] == 2.0
    assert naive_greedy_probe_on_w(inst, 2.0) is None  # the greedy probe wrongly says infeasible
    for algo in (solve_dp, parametric_search):
        assert evaluate(inst, algo(inst))[0] == 2.0


@pytest.mark.parametrize("transfers", [True, False])
def test_random_equals_bruteforce(transfers):
    for seed in range(150):
        n = 1 + seed % 12
        k = 1 + (seed * 7) % n
        inst = generate(seed, n=n, k=k, objective="bottleneck", transfers=transfers, at_most_k=seed % 5 == 0,
                        charge_final_transfer=seed % 2 == 0, bandwidth_bytes_per_s=1e8)
        _, opt = bruteforce(inst, return_value=True)
        assert evaluate(inst, solve_dp(inst))[0] == pytest.approx(opt, rel=1e-12)
        assert evaluate(inst, parametric_search(inst))[0] == pytest.approx(opt, rel=1e-12)


def test_rejects_other_objectives():
    with pytest.raises(InstanceError) as ei:
        solve_dp(generate(0, objective="perf"))
    assert ei.value.path == "objective"


def test_parametric_search_survives_last_bit_differences():
    """Regression (found by hypothesis): the greedy probe's running sum accepts theta = 2.0 while
    the prefix-sum interval cost of the last part is 2.0000000000000004; the search must still
    return the optimum (bottleneck 2 with groups [0, 0, 2] [1.3176] [2])."""
    from splitopt.instances.grouping import GroupingInstance
    from splitopt.models.grouping import evaluate
    from splitopt.solvers.grouping.bruteforce import bruteforce
    from splitopt.solvers.grouping.linear_partition import parametric_search

    inst = GroupingInstance.from_arrays([0.0, 0.0, 2.0, 1.3175918080582139, 2.0], [0.0] * 5, [0] * 5, k=3,
                                        objective="bottleneck", requests=1, bandwidth_bytes_per_s=1000.0,
                                        transfers=False)
    got = evaluate(inst, parametric_search(inst))[0]
    assert abs(got - 2.0) <= 1e-12
    assert abs(got - evaluate(inst, bruteforce(inst))[0]) <= 1e-12
