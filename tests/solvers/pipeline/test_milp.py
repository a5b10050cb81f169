"""Brute force = every exact MILP (Formulations C, A, B, one per allowed b; the joint MILP with
choice binaries) on seeded small instances under each placement semantics, with every other
semantics field varied; LP relaxations never above the optimum; the semantics ordered as their
definitions imply (revisit <= aggregate <= distinct)."""

import pytest

from splitopt.families import solve
from splitopt.instances.pipeline import generate
from splitopt.models.pipeline import evaluate
from splitopt.solvers.pipeline import milp
from splitopt.solvers.pipeline.bruteforce import bruteforce

FORMS = {"distinct": ("C", "A", "B"), "revisit": ("A", "B"), "aggregate": ("A",)}
FAST = range(0, 20)
SLOW = range(20, 120)


def case(seed: int, placement: str, **kw):
    """Seeded instance with every semantics field drawn from the seed (one b allowed)."""
    opts = dict(placement=placement, bottleneck=("stages", "resource")[seed % 2],
                topology=("mesh", "mesh", "star", "tree", "line")[seed % 5],
                relay=("forbidden", "store_forward")[(seed // 5) % 2],
                client_split=("balanced", "paper")[(seed // 3) % 2])
    opts.update(kw)
    return generate(seed, n_layers=4 + seed % 3, n_servers=2 + seed % 3, n_clients=1 + seed % 3, b="draw",
                    **opts)


def close(a, b):
    return abs(a - b) <= 1e-7 * max(abs(a), abs(b), 1e-12)


def check(seed, placement):
    inst = case(seed, placement)
    ref = evaluate(inst, bruteforce(inst))[0]
    for f in FORMS[placement]:
        r = milp.solve(inst, f)
        val = evaluate(inst, r.assignment)[0]
        assert close(val, ref), (seed, placement, f, val, ref)
        assert r.status == "optimal" and r.bound <= ref * (1 + 1e-7) + 1e-12
    for rlt in (True, False):
        r = milp.relaxation(inst, rlt)
        assert r.bound <= ref * (1 + 1e-7) + 1e-12, (seed, placement, rlt, r.bound, ref)
        assert evaluate(inst, r.assignment)[0] >= ref * (1 - 1e-9)
    return inst, ref


@pytest.mark.parametrize("placement", list(FORMS))
@pytest.mark.parametrize("seed", FAST)
def test_bruteforce_equals_milp(seed, placement):
    check(seed, placement)


@pytest.mark.slow
@pytest.mark.parametrize("placement", list(FORMS))
@pytest.mark.parametrize("seed", SLOW)
def test_bruteforce_equals_milp_slow(seed, placement):
    check(seed, placement)


def test_semantics_order():
    """Revisit relaxes aggregate (per-submodel stages and memory are at most the per-node sums) and
    aggregate relaxes distinct (a distinct assignment has the same value under aggregate)."""
    strict = 0
    for seed in range(12):
        vals = {}
        for p in FORMS:
            inst = case(seed, p)
            vals[p] = evaluate(inst, bruteforce(inst))[0]
        assert vals["revisit"] <= vals["aggregate"] * (1 + 1e-12) <= vals["distinct"] * (1 + 1e-9)
        strict += vals["revisit"] < vals["distinct"] * (1 - 1e-9)
    assert strict >= 1  # reusing a server does pay on some of these instances


def joint_case(seed):
    return generate(seed, n_layers=4, n_servers=2 + seed % 2, n_clients=1 + seed % 2, batch=4 + seed % 5,
                    bottleneck=("stages", "resource")[seed % 2], client_split=("balanced", "paper")[seed % 2])


def check_joint(seed):
    inst = joint_case(seed)
    ref = evaluate(inst, bruteforce(inst))[0]       # every b in 1..B
    for r in (milp.solve_joint(inst), milp.solve(inst, "C")):
        assert close(evaluate(inst, r.assignment)[0], ref), seed
        assert r.status == "optimal" and r.bound <= ref * (1 + 1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_joint_over_b(seed):
    check_joint(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4, 40))
def test_joint_over_b_slow(seed):
    check_joint(seed)


def test_registry_solve_is_checked():
    inst = case(3, "distinct")
    sol = solve(inst, "milp")
    assert sol.status == "optimal" and close(sol.objective, evaluate(inst, bruteforce(inst))[0])
    lp = solve(inst, "lp_rlt")
    assert lp.bound <= sol.objective * (1 + 1e-9)


def test_resident_memory_is_declined():
    from splitopt.errors import InstanceError

    with pytest.raises(InstanceError, match="memory"):
        milp.solve(case(1, "distinct", memory="resident"), "C")
