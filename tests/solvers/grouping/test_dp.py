"""grouping_dp (threshold enumeration + vectorised DP, digest 003 §5.3 method 4): equals brute force
on random chains and the interval MILP (digest §5.3 MILP B) on the zoo ResNets."""

from __future__ import annotations

import math
import random

import pytest

from splitopt.families import get_family, solve
from splitopt.instances.grouping import GroupingInstance, generate
from splitopt.models.grouping import evaluate
from splitopt.solvers.grouping import dp as grouping_dp
from splitopt.solvers.grouping.bruteforce import bruteforce

EXACT_ALGOS = [name for name, a in get_family("grouping").algorithms.items() if a.exact and not a.formulation]


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def random_instances(count, seed0=0, max_n=12):
    rnd = random.Random(seed0)
    for seed in range(seed0, seed0 + count):
        n = rnd.randint(1, max_n)
        at_most = rnd.random() < 0.25
        k = rnd.randint(1, n + (3 if at_most else 0))
        yield generate(seed, n=n, k=k, objective=rnd.choice(["perf", "bottleneck", "thesis_cost"]),
                       requests=rnd.choice([1, 2, 5, 11, 100]), bandwidth_bytes_per_s=rnd.choice([1e7, 1e8, 1e9]),
                       transfers=rnd.random() < 0.8, charge_final_transfer=rnd.random() < 0.5,
                       k1_convention=rnd.choice(["thesis", "uniform"]), at_most_k=at_most,
                       delta=rnd.choice([0.0, 0.5, 1.0]))


def test_every_exact_algorithm_equals_bruteforce():
    checked = 0
    for inst in random_instances(400):
        _, opt = bruteforce(inst, return_value=True)
        for name in EXACT_ALGOS:
            if name in ("linear_partition", "parametric") and inst.objective != "bottleneck":
                continue
            sol = solve(inst, name)
            assert close(sol.objective, opt), (name, inst.name, inst.to_dict())
            checked += 1
    assert checked > 1000


def test_dp_on_ties_and_zeros():
    # all-equal parts, zero transfers: every balanced grouping ties; value must still be optimal
    inst = GroupingInstance.from_arrays([1.0] * 9, [0.0] * 9, [1] * 9, k=3, requests=4)
    sizes = grouping_dp.solve(inst)
    assert sizes == [3, 3, 3]
    assert evaluate(inst, sizes)[0] == pytest.approx(9 + 3 * 3)  # sum w + (R-1) max w
    zero = GroupingInstance.from_arrays([0.0] * 5, [0.0] * 5, k=2, requests=3)
    assert evaluate(zero, grouping_dp.solve(zero))[0] == 0.0


def test_dp_pure_min_sum_when_single_request():
    # R = 1: Perf = sum of w = T_total + transfers: the cheapest cut set wins (hand-computed):
    # s = (5, 1, 9, 2, 0), B = 1, k = 3 -> cut after parts 2 and 4 (bytes 1 + 2), final s_5 = 0
    inst = GroupingInstance.from_arrays([1.0] * 5, [5.0, 1.0, 9.0, 2.0, 0.0], k=3, requests=1,
                                        bandwidth_bytes_per_s=1.0)
    assert grouping_dp.solve(inst) == [2, 2, 1]
    assert evaluate(inst, [2, 2, 1])[0] == pytest.approx(5 + 3)


zoo = pytest.importorskip("splitopt.instances.zoo")


def check_zoo_equals_interval_milp(arch, ks, objectives=("perf", "bottleneck", "thesis_cost")):
    for obj in objectives:
        for k in ks:
            inst = GroupingInstance.from_zoo(arch, k, objective=obj, requests=11)
            ref = solve(inst, "milp_interval", time_limit=120)
            assert ref.status == "optimal"
            for name in EXACT_ALGOS:
                if name == "bruteforce" or (name in ("linear_partition", "parametric") and obj != "bottleneck"):
                    continue
                sol = solve(inst, name)
                assert math.isclose(sol.objective, ref.objective, rel_tol=1e-9, abs_tol=1e-12), (arch, obj, k, name)


def test_zoo_resnet18_all_k_equal_interval_milp():
    check_zoo_equals_interval_milp("resnet18", range(1, 9))


@pytest.mark.parametrize("arch", ["resnet34", "resnet50"])
def test_zoo_resnet_mid_equal_interval_milp(arch):
    check_zoo_equals_interval_milp(arch, [3, 6], objectives=("perf", "bottleneck"))


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["resnet34", "resnet50", "resnet101", "resnet152"])
def test_zoo_resnets_all_k_equal_interval_milp_slow(arch):
    check_zoo_equals_interval_milp(arch, range(1, 9))


def test_resnet152_k8_prunes_the_threshold_scan():
    """Speed is measured in benchmarks/grouping.py, never asserted here; this checks the pruning."""
    inst = GroupingInstance.from_zoo("resnet152", 8, objective="perf", requests=11)
    sizes, info = grouping_dp.solve(inst, return_info=True)
    assert sum(sizes) == 53 and len(sizes) == 8
    assert info["thresholds_scanned"] < info["thresholds_total"]  # the bound prunes the scan
