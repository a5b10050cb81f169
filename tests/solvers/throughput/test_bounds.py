"""The bounds of the corrected throughput B&B: the compute relaxation (makespan on uniform machines)
equals an enumeration, never exceeds the true optimum of the full problem, and the searches that use
it (root bound, run-by-run search under a cap) still equal brute force and the RLT MILP."""

import itertools
import random

import pytest

from splitopt.instances.throughput import generate
from splitopt.models.throughput import evaluate
from splitopt.solvers.throughput import bnb, bruteforce, milp
from splitopt.solvers.throughput.bounds import Makespan, waterfill


def makespan_by_enumeration(c, eta, pins, depth, W):
    N, L = len(eta), len(c)
    best = float("inf")
    for p in itertools.product(range(N), repeat=L - depth):
        load = list(W)
        for k, i in enumerate(range(depth, L)):
            load[pins.get(i, p[k])] += c[i]
        best = min(best, max(load[a] / eta[a] for a in range(N)))
    return best


def test_makespan_relaxation_equals_enumeration():
    rng = random.Random(4004)
    for _ in range(400):
        L, N = rng.randint(1, 7), rng.randint(1, 3)
        c = [rng.choice([0.0, 1.0, 2.0, 2.5, 3.0, 5.0]) for _ in range(L)]
        eta = [rng.choice([1.0, 2.0, 3.0]) for _ in range(N)]
        pins = {i: rng.randrange(N) for i in range(L) if rng.random() < 0.2}
        depth = rng.randint(0, L)
        W = [rng.choice([0.0, 1.0, 2.0]) for _ in range(N)]
        best = makespan_by_enumeration(c, eta, pins, depth, W)
        mk = Makespan(c, eta, pins)
        value, exact = mk.value(depth, W)
        assert exact and value == pytest.approx(best, rel=1e-12)
        # the solution it reports gives every node exactly that makespan
        load = list(W)
        for i in range(depth, L):
            if i in pins:
                load[pins[i]] += c[i]
        for size, counts in mk.solution:
            for a, k in enumerate(counts):
                load[a] += size * k
        assert max(load[a] / eta[a] for a in range(N)) == pytest.approx(best, rel=1e-12)
        if best > 0:  # packable asks for every node strictly below the threshold
            assert mk.packable(depth, W, best * 1.001) and not mk.packable(depth, W, best * 0.999)


def test_waterfill_by_hand():
    # loads 0 and 2 on rates 1 and 2 (levels 0, 1); 3 FLOP: node 0 fills to 1 (1 FLOP), then both at rate 3
    assert waterfill([0.0, 2.0], [1.0, 2.0], 3.0) == pytest.approx(1.0 + 2.0 / 3.0)
    assert waterfill([5.0], [1.0], 0.0) == 0.0


@pytest.mark.parametrize("seed", range(40))
def test_root_bound_never_above_the_optimum(seed):
    kw = {"contiguous": seed % 5 == 1, "link_model": ("full-duplex", "half-duplex", "shared")[seed % 3]}
    if seed % 6 == 5:
        kw["pins"] = {"L0": "n2"}
    inst = generate(seed, n_layers=7, n_nodes=3, **kw)
    best = evaluate(inst, bruteforce.bruteforce(inst))[0]
    r = bnb.solve(inst)
    assert r.info["root_bound"] <= best * (1 + 1e-12)
    assert r.status == "optimal" and evaluate(inst, r.assignment)[0] == pytest.approx(best, rel=1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_run_search_under_a_cap_equals_rlt(seed):
    # 14 layers: beyond brute force; the RLT MILP is the independent reference
    inst = generate(seed, n_layers=14, n_nodes=3, kind=("chain", "skip")[seed % 2], max_splits=1 + seed % 4)
    r = bnb.solve(inst)
    m = milp.solve(inst, "rlt")
    assert r.status == "optimal" and m.status == "optimal"
    assert evaluate(inst, r.assignment)[0] == pytest.approx(evaluate(inst, m.assignment)[0], rel=1e-7)
