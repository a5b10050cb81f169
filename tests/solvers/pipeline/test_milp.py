"""Brute force = every exact MILP (Formulations C, A, B, one per allowed b; the joint MILP with
choice binaries) on seeded small instances under each placement semantics, with every other
semantics field varied; LP relaxations never above the optimum; the semantics ordered as their
definitions imply (revisit <= aggregate <= distinct)."""

import pytest

from splitopt.families import solve
from splitopt.instances.pipeline_generate import generate
from splitopt.models.pipeline import evaluate
from splitopt.solvers.pipeline import milp
from splitopt.solvers.pipeline.bruteforce import bruteforce

FORMS = {"distinct": ("C", "A", "B"), "revisit": ("A", "B"), "aggregate": ("A",)}
FAST = range(0, 20)
SLOW = range(20, 300)  # 300 seeded instances per placement with FAST


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
    """Brute-force optimum and ``(formulation, status, value, bound)`` of every applicable MILP; the LP
    relaxations (bound below the optimum, rounded assignment feasible and not better) checked here."""
    inst = case(seed, placement)
    ref = evaluate(inst, bruteforce(inst))[0]
    answers = []
    for f in FORMS[placement]:
        r = milp.solve(inst, f)
        answers.append((f, r.status, evaluate(inst, r.assignment)[0], r.bound))
    for rlt in (True, False):
        r = milp.relaxation(inst, rlt)
        assert r.bound <= ref * (1 + 1e-7) + 1e-12, (seed, placement, rlt, r.bound, ref)
        assert evaluate(inst, r.assignment)[0] >= ref * (1 - 1e-9)
    return ref, answers


def milps_exact(ref, answers):
    return bool(answers) and all(st == "optimal" and close(v, ref) and b <= ref * (1 + 1e-7) + 1e-12
                                 for _, st, v, b in answers)


@pytest.mark.parametrize("placement", list(FORMS))
@pytest.mark.parametrize("seed", FAST)
def test_bruteforce_equals_milp(seed, placement):
    ref, answers = check(seed, placement)
    assert milps_exact(ref, answers), (seed, placement, ref, answers)


@pytest.mark.slow
@pytest.mark.parametrize("placement", list(FORMS))
@pytest.mark.parametrize("seed", SLOW)
def test_bruteforce_equals_milp_slow(seed, placement):
    ref, answers = check(seed, placement)
    assert milps_exact(ref, answers), (seed, placement, ref, answers)


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


def test_vgg16_formulation_c_is_well_scaled():
    """VGG-16's fc3 (1e4 FLOP) made per-layer coefficients span 4e10, so HiGHS's optimum was reported
    as ``numerical``; with block (prefix-sum) coefficients C is within the trusted range and its
    optimum, proven, equals brute force at that b."""
    from splitopt.instances.pipeline_generate import profile_instance
    from splitopt.models.pipeline_milp import build_c
    from splitopt.solvers.exact.highs import TRUSTED_RANGE, HighsMatrix

    inst = profile_instance("vgg16-cifar", n_clients=5, n_servers=3, seed=0, micro_batches=(128,))
    hm = HighsMatrix.from_pyomo(build_c(inst, 128), relax=False, time_limit=None, mip_gap=None, tee=False,
                                options=None)
    assert hm.coefficient_range < TRUSTED_RANGE
    r = milp.solve(inst, "C")
    ref = evaluate(inst, bruteforce(inst))[0]
    assert r.status == "optimal" and close(evaluate(inst, r.assignment)[0], ref)
    assert r.bound <= ref * (1 + 1e-7)


@pytest.mark.parametrize("placement", ["distinct", "aggregate"])
def test_vgg16_formulation_a_is_well_scaled(placement):
    """Formulation A had per-layer coefficients spanning 1e10 on VGG-16 (HiGHS's optimum reported
    ``numerical``); with prefix-sum block coefficients on (submodel, server) start/end indicators it
    is within the trusted range, proven optimal, and equals the exact search (an independent
    combinatorial algorithm)."""
    from splitopt.instances.pipeline_generate import profile_instance
    from splitopt.models.pipeline_milp import build_a
    from splitopt.solvers.exact.highs import TRUSTED_RANGE, HighsMatrix
    from splitopt.solvers.pipeline import shortest_path

    inst = profile_instance("vgg16-cifar", n_clients=5, n_servers=3, seed=0, micro_batches=(128,),
                            placement=placement)
    hm = HighsMatrix.from_pyomo(build_a(inst, 128), relax=False, time_limit=None, mip_gap=None, tee=False,
                                options=None)
    assert hm.coefficient_range < TRUSTED_RANGE
    r = milp.solve(inst, "A")
    ref = evaluate(inst, shortest_path.solve(inst).assignment)[0]
    assert r.status == "optimal" and close(evaluate(inst, r.assignment)[0], ref)
    assert r.bound <= ref * (1 + 1e-7)


def resident_case(seed: int, placement: str):
    """Seeded instance under ``memory="resident"`` with binding memory drawn and, on every third
    seed, at most three submodels."""
    kw = {"max_submodels": 3} if seed % 3 == 2 else {}
    return case(seed, placement, memory="resident", tight_memory=True, **kw)


def check_resident(seed, placement):
    inst = resident_case(seed, placement)
    ref = evaluate(inst, bruteforce(inst))[0]
    r = milp.solve(inst, "A")
    assert close(evaluate(inst, r.assignment)[0], ref), (seed, placement)
    assert r.status == "optimal" and r.bound <= ref * (1 + 1e-7) + 1e-12
    for rlt in (True, False):
        lp = milp.relaxation(inst, rlt)
        assert lp.bound <= ref * (1 + 1e-7) + 1e-12, (seed, placement, rlt)
    free = inst.with_(server_memory_bytes=[None] * inst.n_servers, client_memory_bytes=[None] * inst.n_clients)
    return ref, evaluate(free, bruteforce(free))[0]


@pytest.mark.parametrize("placement", list(FORMS))
def test_resident_memory_formulation_a(placement):
    """Brute force = Formulation A under resident memory (parameters once, activations times the
    micro-batches in flight); the memory rows bind on some of these instances (dropping the limits
    lowers the optimum), so the rows are exercised, not vacuous."""
    binding = 0
    for seed in range(12):
        ref, free = check_resident(seed, placement)
        binding += free < ref * (1 - 1e-9)
    assert binding >= 1


@pytest.mark.slow
@pytest.mark.parametrize("placement", list(FORMS))
@pytest.mark.parametrize("seed", range(12, 150))
def test_resident_memory_formulation_a_slow(seed, placement):
    check_resident(seed, placement)


def test_resident_memory_solve_best_uses_a():
    inst = resident_case(1, "distinct")
    r = milp.solve_best(inst)
    assert r.info["formulation"] == "A" and r.status == "optimal"
    assert close(evaluate(inst, r.assignment)[0], evaluate(inst, bruteforce(inst))[0])


def test_vgg16_joint_milp_is_well_scaled():
    """The joint MILP over b spanned 1.8e9 on VGG-16 (status ``numerical``); with the prefix-sum
    block coefficients of Formulation C it is trusted and equals the exact search over the same b."""
    from splitopt.instances.pipeline_generate import profile_instance
    from splitopt.models.pipeline_milp import build_joint_c
    from splitopt.solvers.exact.highs import TRUSTED_RANGE, HighsMatrix
    from splitopt.solvers.pipeline import shortest_path

    inst = profile_instance("vgg16-cifar", n_clients=5, n_servers=3, seed=0, micro_batches=(32, 64, 128, 256))
    hm = HighsMatrix.from_pyomo(build_joint_c(inst), relax=False, time_limit=None, mip_gap=None, tee=False,
                                options=None)
    assert hm.coefficient_range < TRUSTED_RANGE
    r = milp.solve_joint(inst)
    ref = evaluate(inst, shortest_path.solve(inst).assignment)[0]
    assert r.status == "optimal" and close(evaluate(inst, r.assignment)[0], ref)
    assert r.bound <= ref * (1 + 1e-7)
