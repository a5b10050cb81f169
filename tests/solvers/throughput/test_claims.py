"""Seed 004 claims for ``splitopt audit``: each value checked against one derived here another way
(enumeration, brute force, the RLT MILP, arithmetic on the printed numbers)."""

import itertools
import re

import pytest

from splitopt.instances.throughput import ThroughputInstance, generate
from splitopt.instances.zoo import get
from splitopt.models.throughput import evaluate
from splitopt.solvers.throughput import bnb_paper, bruteforce, claims, milp

KEYS = {"paper", "claim", "section", "paper_value", "our_value", "verdict", "note"}


def splits(p):
    return sum(p[i] != p[i + 1] for i in range(len(p) - 1))


@pytest.mark.parametrize("L,N,S", [(1, 3, 0), (5, 2, 1), (6, 3, 2), (7, 4, 3), (6, 2, 5)])
def test_eq8_equals_enumeration(L, N, S):
    leaves = sum(1 for p in itertools.product(range(N), repeat=L) if splits(p) <= S)
    assert claims.eq8_count(L, N, S) == leaves
    # Algorithm 1 without pruning: every prefix (lengths 0..L-1) with fewer than S splits is popped
    pops = sum(1 for n in range(L) for p in itertools.product(range(N), repeat=n) if n == 0 or splits(p) < S)
    assert claims.alg1_no_pruning(L, N, S) == (pops, pops * N)


def test_eq8_claim_and_table2_alpha():
    r = claims.claim_eq8()
    assert set(r) == KEYS and r["our_value"] == 1_909_156 and r["verdict"] == "reproduced"
    t = claims.claim_table2_alpha()
    assert t["our_value"] == round(1.4 / 1.57, 3) and t["verdict"] == "refuted"


def test_eq12_claim_counterexample():
    r = claims.claim_eq12()
    assert r["verdict"] == "refuted"
    g = get("yolov2")
    W = sum(l.fwd_flop for l in g.layers)
    s_min = min(b for _p, _port, b, _c in g.tensors if b > 0)
    single = 1.57e9 / W
    printed = min(1.57e9 * 2 / W, 1e3 / s_min)
    assert single > printed
    assert f"{single:.4g}" in r["our_value"] and f"{printed:.4g}" in r["our_value"]


def test_skip_failure_count_matches_brute_force():
    n = 6
    r = claims.claim_skip_failure(n)
    wrong = 0
    for seed in range(n):
        inst = generate(seed, n_layers=7, n_nodes=3, kind="skip", skips=2, max_splits=None, transfer="per_edge")
        best = evaluate(inst, bruteforce.bruteforce(inst))[0]
        wrong += evaluate(inst, bnb_paper.solve(inst).assignment)[0] > best * (1 + 1e-9)
    assert r["our_value"] == f"suboptimal on {wrong} of {n}"
    assert r["verdict"] == ("refuted" if wrong else "reproduced")


@pytest.mark.slow
def test_fig5_gain_against_rlt():
    r = claims.claim_fig5_gain(nodes=(2,))
    assert r["verdict"] == "refuted" and "1.22x" in r["our_value"]
    inst = ThroughputInstance.from_graph(get("yolov2"), [5e9, 5e9], 10e6, max_splits=3)
    m = milp.solve(inst, "rlt")
    gain = (sum(inst.flop) / 5e9) / evaluate(inst, m.assignment)[0]
    assert m.status == "optimal"
    assert re.search(r"N=2: ([0-9.]+)x", r["our_value"]).group(1) == f"{gain:.2f}"


def test_audit_lists_and_runs_seed_004_claims():
    from splitopt.validation import audit

    ids = [c.id for c in audit.claims_of("throughput")]
    assert {"004-eq8", "004-skip", "004-eq12", "004-fig5", "004-table2"} <= set(ids)
    (row,) = audit.run(["throughput"], only=["004-table2"])
    assert row.verdict == "refuted" and float(row.value) == round(1.4 / 1.57, 3)
