"""The device LNS (exact re-placement on pairs and triples of devices, other devices frozen): with
three devices a triple is the whole problem, so descending until no pair or triple improves must
end at the brute-force optimum; with more devices it never gets worse and stays feasible."""

import math

import pytest

from splitopt.errors import InstanceError
from splitopt.families import solve
from splitopt.instances.throughput_device import generate
from splitopt.models.throughput_device import evaluate
from splitopt.solvers.throughput.device_lns import lns


@pytest.mark.parametrize("objective", ("max-load", "fwd+bwd"))
@pytest.mark.parametrize("seed", range(6))
def test_three_devices_reach_the_bruteforce_optimum(seed, objective):
    inst = generate(seed, n_nodes=6, n_accelerators=2, n_cpus=1, training=seed % 3 == 2,
                    objective=objective, contiguity="none")
    bf = solve(inst, "device_bruteforce").objective
    start = solve(inst, "device_local", restarts=1, seed=seed).assignment
    r = lns(inst, start, time_limit=None)
    v = evaluate(inst, r.assignment)[0]
    assert math.isclose(v, bf, rel_tol=1e-9), (v, bf)


@pytest.mark.parametrize("seed", range(4))
def test_more_devices_never_worse_and_feasible(seed):
    inst = generate(seed, n_nodes=8, n_accelerators=3, n_cpus=1, objective="max-load", contiguity="none")
    start = solve(inst, "device_linearised").assignment
    v0 = evaluate(inst, start)[0]
    r = lns(inst, start, time_limit=None)
    v = evaluate(inst, r.assignment)[0]  # raises if infeasible
    assert v <= v0 * (1 + 1e-12)
    assert v >= solve(inst, "device_bruteforce").objective * (1 - 1e-9)


def test_declines_contiguous_placements():
    inst = generate(0, n_nodes=5, n_accelerators=2, n_cpus=1, contiguity="convex")
    with pytest.raises(InstanceError, match="contiguity"):
        lns(inst, solve(inst, "device_linearised").assignment)
