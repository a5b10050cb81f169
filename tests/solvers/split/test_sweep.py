"""Exact split sweeps (solvers/split/sweep.py) against independent oracles.

Oracles: brute-force enumeration of every feasible device set (bruteforce.enumerate_splits, which
computes costs with its own bitmask code), its exact lower envelope computed here by walking the
lines, and the HiGHS MILP on zoo graphs. Each breakpoint and a point inside each piece are solved
afresh; the piece's split must be optimal there.
"""

import math

import numpy as np
import pytest

from cases.split import random_instance
from splitopt.errors import InstanceError
from splitopt.families import solve
from splitopt.instances import zoo
from splitopt.instances.generate import generate as gen_graph
from splitopt.instances.split import SplitInstance
from splitopt.models.split import evaluate
from splitopt.solvers.split import bruteforce
from splitopt.solvers.split.sweep import PARAMS, at, sweep


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def brute_opt(inst):
    return min(c for c, _m in bruteforce.enumerate_splits(inst))


def brute_envelope(inst, param, lo, hi):
    """Breakpoints (parameter values) of min over all feasible splits of their cost, computed from
    the enumeration's costs at two parameter values (each split's cost is A + B/p) by walking the
    lower envelope of the lines from x = 1/hi to x = 1/lo."""
    x1, x2 = 1.0 / hi, 1.0 / lo
    c1 = dict((m, c) for c, m in bruteforce.enumerate_splits(at(inst, param, hi)))
    c2 = dict((m, c) for c, m in bruteforce.enumerate_splits(at(inst, param, lo)))
    lines = {}
    for m in c1:
        b = (c2[m] - c1[m]) / (x2 - x1)
        lines[m] = (c1[m] - b * x1, b)
    x = x1
    cur = min(lines, key=lambda m: (lines[m][0] + lines[m][1] * x, lines[m][1]))
    bps = []
    while True:
        a0, b0 = lines[cur]
        best = None
        for m, (a, b) in lines.items():
            if b < b0 - 1e-12 * abs(b0):
                xs = (a - a0) / (b0 - b)
                if xs > x * (1 + 1e-12) and xs < x2 and (best is None or xs < best[0] or
                                                         (xs == best[0] and b < lines[best[1]][1])):
                    best = (xs, m)
        if best is None:
            break
        x, cur = best
        bps.append(1.0 / x)
    return sorted(bps)


def check_sweep(inst, res, oracle):
    """Every breakpoint, every piece's ends and geometric middle: the piece's split is optimal."""
    for pc in res.pieces:
        mids = [pc.lo, pc.hi] + ([math.sqrt(pc.lo * pc.hi)] if pc.hi > pc.lo else [])
        for p in mids:
            i2 = at(inst, res.param, p)
            opt = oracle(i2)
            mine = evaluate(i2, pc.solution)[0]
            assert close(mine, opt, 1e-9), (inst.name, res.param, p, mine, opt)
        assert close(pc.cost_lo, pc.intercept + pc.slope / pc.lo)
        assert close(pc.cost_hi, pc.intercept + pc.slope / pc.hi)
    # contiguous, increasing, distinct neighbours
    for a, b in zip(res.pieces, res.pieces[1:]):
        assert a.hi == b.lo and a.lo <= a.hi
        assert (a.intercept, a.slope) != (b.intercept, b.slope)
    assert res.pieces[0].lo == res.lo and res.pieces[-1].hi == res.hi


@pytest.mark.parametrize("param", sorted(PARAMS))
def test_sweep_equals_bruteforce_envelope(param):
    lo, hi = (1e-3, 1e4) if param.endswith("mbps") else (1e-2, 1e2)
    multi = 0
    for s in range(40):
        inst = random_instance(s, n=9 + s % 4)
        res = sweep(inst, param, lo, hi)
        check_sweep(inst, res, brute_opt)
        want = brute_envelope(inst, param, lo, hi)
        got = res.breakpoints
        assert len(got) == len(want), (s, param, got, want)
        assert all(close(g, w, 1e-7) for g, w in zip(got, want)), (s, param, got, want)
        assert res.solves <= 2 * len(res.pieces) + 1
        # a dense grid: the piece containing p is optimal at p
        for p in np.geomspace(lo, hi, 15):
            pc = next(pc for pc in res.pieces if pc.lo <= p <= pc.hi)
            i2 = at(inst, param, p)
            assert close(evaluate(i2, pc.solution)[0], brute_opt(i2)), (s, p)
        multi += len(res.pieces) > 1
    assert multi >= 5, f"too few instances with several pieces ({multi}): the test would prove little"


@pytest.mark.parametrize("kind", ["layered_dag", "residual_stack", "inception_stack"])
def test_sweep_generated_graphs_against_milp(kind):
    g = gen_graph(kind, 3, **({"n": 60} if kind == "layered_dag" else {"blocks": 12}))
    inst = SplitInstance.from_graph(g, up_bytes_per_s=1e6, mode="inference", device_flops=1e10, server_flops=1e12)
    res = sweep(inst, "up_mbps", 1e-3, 1e4)
    assert len(res.pieces) >= 2
    check_sweep(inst, res, lambda i: solve(i, "milp").objective)


def test_sweep_zoo_graphs_against_milp():
    for name, df in (("resnet18", 2e10), ("googlenet", 1e10)):
        inst = SplitInstance.from_graph(zoo.get(name), up_bytes_per_s=1e6, mode="inference", device_flops=df,
                                        server_flops=2e13)
        res = sweep(inst, "rate_mbps", 1e-3, 1e4)
        assert len(res.pieces) >= 2
        check_sweep(inst, res, lambda i: solve(i, "milp").objective)


def test_single_piece_and_bad_input():
    inst = random_instance(3, n=8)
    res = sweep(inst, "up_mbps", 5.0, 5.0)
    assert len(res.pieces) == 1 and res.breakpoints == []
    with pytest.raises(InstanceError, match="--param: unknown split sweep parameter 'foo'"):
        sweep(inst, "foo", 1, 2)
    with pytest.raises(InstanceError, match="--to"):
        sweep(inst, "up_mbps", 2, 1)
    with pytest.raises(InstanceError, match="--from"):
        sweep(inst, "up_mbps", 0, 1)


def test_at_rebuilds_instance():
    inst = random_instance(5, n=8)
    i2 = at(inst, "rate_mbps", 8.0)
    assert i2.up_bytes_per_s == 1e6
    assert close(i2.down_bytes_per_s / i2.up_bytes_per_s, inst.down_bytes_per_s / inst.up_bytes_per_s, 1e-12)
    i3 = at(inst, "device_speed", 2.0)
    assert i3.device_s == tuple(v / 2.0 for v in inst.device_s) and i3.server_s == inst.server_s
