"""The corrected bottleneck-aware shortest path (digest §3.5) and its extensions: equal to brute
force (an enumeration scored by the evaluator, sharing no code with the DAG) on seeded small
instances under every placement semantics, both threshold orders, the dominated-b reduction
against enumerating every b, honest statuses and bounds."""

from __future__ import annotations

import pytest

from splitopt.families import solve as family_solve
from splitopt.solvers.pipeline import shortest_path
from splitopt.solvers.pipeline.bruteforce import bruteforce

from .helpers import close, small, value

PLACEMENTS = ("revisit", "distinct", "aggregate")


def _check(inst):
    """Brute-force optimum, and ``(order, status, value, bound)`` of the exact search in both orders."""
    ref = value(inst, bruteforce(inst))
    out = []
    for order in shortest_path.ORDERS:
        res = shortest_path.solve(inst, order=order)
        out.append((order, res.status, value(inst, res.assignment), res.bound))
    return ref, out


def _exact(ref, answers):
    return len(answers) == len(shortest_path.ORDERS) and all(
        st == "optimal" and close(v, ref) and close(b, v) for _, st, v, b in answers)


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("seed", range(20))
def test_equals_bruteforce_one_b(placement, seed):
    ref, answers = _check(small(seed, placement))
    assert _exact(ref, answers), (ref, answers)


@pytest.mark.slow
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("seed", range(20, 300))  # 300 per placement with the fast 20
def test_equals_bruteforce_one_b_many(placement, seed):
    ref, answers = _check(small(seed, placement, n_layers=5 + seed % 3, n_servers=3 + seed % 2))
    assert _exact(ref, answers), (ref, answers)


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("seed", range(3))
def test_joint_over_every_b_equals_bruteforce(placement, seed):
    ref, answers = _check(small(seed, placement, b=None))
    assert _exact(ref, answers), (ref, answers)


@pytest.mark.slow
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("seed", range(3, 23))
def test_joint_over_every_b_equals_bruteforce_many(placement, seed):
    ref, answers = _check(small(seed, placement, b=None))
    assert _exact(ref, answers), (ref, answers)


@pytest.mark.parametrize("seed", range(6))
def test_b_reduction_matches_full_enumeration(seed):
    """Joint optimum over the candidate b (digest §8.5 (i)) = min over every b of the fixed-b optimum."""
    for placement in ("revisit", "distinct"):
        inst = small(seed, placement, b=None, n_clients=3)
        joint = value(inst, shortest_path.solve(inst).assignment)
        per_b = []
        for b in inst.allowed_b():
            try:
                per_b.append(value(inst, shortest_path.solve(inst, b=b).assignment))
            except Exception:  # infeasible at this b
                continue
        assert close(joint, min(per_b))
        cands = shortest_path.candidate_bs(inst)
        if inst.client_split == "balanced":
            assert len(cands) == len({-(-inst.batch // b) for b in inst.allowed_b()})


def test_paper_client_split_keeps_more_candidates():
    inst = small(3, "revisit", b=None, n_clients=3).with_(client_split="paper", batch=40, micro_batches=None)
    cands = shortest_path.candidate_bs(inst)
    qs = {-(-40 // b) for b in range(1, 41)}
    assert len(cands) > len(qs)
    for b in cands:  # each kept b has a load vector no smaller b of the same q dominates
        q = -(-40 // b)
        mine = inst.local_batches(b)
        assert not any(all(x <= y for x, y in zip(inst.local_batches(a), mine))
                       for a in range(1, b) if -(-40 // a) == q)


def test_distinct_needs_the_state_space_relaxation():
    """Some instance where the revisit optimum reuses a server: distinct is then strictly worse and
    the critical set is used, and the answer is still the brute-force optimum."""
    for seed in range(200):
        inst = small(seed, "revisit", n_layers=6)
        rev = shortest_path.solve(inst)
        if len(set(rev.assignment["servers"])) < len(rev.assignment["servers"]):
            dist = inst.with_(placement="distinct")
            res = shortest_path.solve(dist)
            assert res.info["critical"] >= 1
            assert close(value(dist, res.assignment), value(dist, bruteforce(dist)))
            assert value(dist, res.assignment) > value(inst, rev.assignment)
            return
    pytest.fail("no revisiting optimum in 200 seeds")


def test_capped_state_space_gives_a_bound():
    for seed in range(200):
        inst = small(seed, "distinct", n_layers=6)
        res = shortest_path.solve(inst, max_critical=0)
        opt = value(inst, bruteforce(inst))
        got = value(inst, res.assignment)
        assert res.bound <= opt * (1 + 1e-9) and got >= opt * (1 - 1e-9)
        if res.status != "optimal":
            assert res.bound < got
            return
    pytest.fail("the revisit relaxation was elementary on 200 seeds")


def test_aggregate_node_limit_bound_is_valid():
    for seed in range(40):
        inst = small(seed, "aggregate", n_layers=6)
        res = shortest_path.solve(inst, node_limit=1)
        opt = value(inst, bruteforce(inst))
        assert res.bound <= opt * (1 + 1e-9) <= value(inst, res.assignment) * (1 + 2e-9)


def test_registry_and_status_through_solve():
    inst = small(1, "distinct")
    sol = family_solve(inst, "shortest_path")
    assert sol.status == "optimal" and close(sol.objective, value(inst, bruteforce(inst)))
    sol2 = family_solve(inst, "shortest_path_ascending")
    assert close(sol2.objective, sol.objective)


def test_bad_options():
    from splitopt.errors import InstanceError

    inst = small(0, "revisit")
    with pytest.raises(InstanceError, match="order"):
        shortest_path.solve(inst, order="sideways")
    with pytest.raises(InstanceError, match="b"):
        shortest_path.solve(inst, b=inst.batch + 1)


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("seed", range(2))
def test_equals_milp(placement, seed):
    """The exact search = the MILP that fits the placement (Formulation C, B or A, HiGHS)."""
    from splitopt.solvers.pipeline import milp

    inst = small(seed + 40, placement).with_(memory="paper")  # the MILPs model Eq. 11 memory only
    ref = milp.solve_best(inst)
    assert close(value(inst, shortest_path.solve(inst).assignment), value(inst, ref.assignment), 1e-7)
