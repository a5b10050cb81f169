"""Grouping sweeps (solvers/grouping/sweep.py): the exact R sweep against brute force at every R."""

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.grouping import GroupingInstance, generate
from splitopt.models.grouping import evaluate
from splitopt.solvers.grouping.bruteforce import all_groupings
from splitopt.solvers.grouping.sweep import sweep


def brute(inst):
    return min(evaluate(inst, g)[0] for g in all_groupings(inst))


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def test_requests_sweep_is_optimal_at_every_integer():
    multi = 0
    for s in range(30):
        inst = generate(s, n=7 + s % 3, k=None, objective=("perf", "perf", "bottleneck")[s % 3], requests=1)
        res = sweep(inst, "requests", 1, 60)
        assert res.exact
        covered = []
        for pc in res.pieces:
            covered += list(range(int(pc.lo), int(pc.hi) + 1))
            for r in range(int(pc.lo), int(pc.hi) + 1):
                i2 = inst.with_(requests=r)
                assert close(evaluate(i2, pc.solution)[0], brute(i2)), (s, r)
                assert close(evaluate(i2, pc.solution)[0], pc.intercept + pc.slope * r)
        assert covered == list(range(1, 61)), s
        if inst.objective == "bottleneck":
            assert len(res.pieces) == 1          # R does not enter the bottleneck
        multi += len(res.pieces) > 1
        assert res.solves <= 2 * len(res.pieces) + 2 * max(0, len(res.pieces) - 1) + 2
    assert multi >= 3


def test_bandwidth_sweep_is_sampled_and_optimal_at_samples():
    inst = generate(4, n=8, k=3, objective="perf", requests=5)
    res = sweep(inst, "bandwidth_bytes_per_s", 1e4, 1e10, samples=12)
    assert not res.exact and "12 log-spaced samples" in res.resolution
    for pc in res.pieces:
        for bw, c in ((pc.lo, pc.cost_lo), (pc.hi, pc.cost_hi)):
            i2 = inst.with_(bandwidth_bytes_per_s=bw)
            assert close(c, brute(i2))


def test_bad_requests_range():
    inst = GroupingInstance.from_arrays([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], k=2)
    with pytest.raises(InstanceError, match="requests must be integers"):
        sweep(inst, "requests", 1.5, 4)
    with pytest.raises(InstanceError, match="unknown grouping sweep parameter"):
        sweep(inst, "k", 1, 4)
