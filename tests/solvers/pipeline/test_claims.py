"""Seed 001 claims for ``splitopt audit``: each value re-derived here another way (literal
enumeration of what a count describes, brute force scored by the evaluator, arithmetic on the rows'
own records)."""

from __future__ import annotations

import itertools
import math

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import evaluate
from splitopt.solvers.pipeline import claims
from splitopt.solvers.pipeline.bruteforce import bruteforce
from splitopt.validation import audit
from splitopt.validation.audit import REFUTED, REPRODUCED

from .helpers import close


def paper_space(B, I, N):
    """The paper's description enumerated: b, k = 2..N parts, k - 1 cuts, the k parts on k distinct
    of the N nodes in order."""
    return B * sum(1 for k in range(2, N + 1) for _c in itertools.combinations(range(1, I), k - 1)
                   for _s in itertools.permutations(range(N), k))


def true_space(B, I, N, distinct):
    """(b, cuts, server sequence) of the problem enumerated: the client keeps a prefix, P >= 1
    server blocks, consecutive servers different (distinct: all different)."""
    n = 0
    for P in range(1, I):
        seqs = (itertools.permutations(range(N), P) if distinct
                else (s for s in itertools.product(range(N), repeat=P) if all(s[j] != s[j - 1] for j in range(1, P))))
        n += sum(1 for _s in seqs) * sum(1 for _c in itertools.combinations(range(1, I), P))
    return B * n


@pytest.mark.parametrize("B,I,N", [(1, 3, 2), (4, 5, 3), (3, 6, 4), (2, 7, 3)])
def test_counts_equal_enumeration(B, I, N):
    assert claims.paper_count(B, I, N) == paper_space(B, I, N)
    assert claims.true_count(B, I, N, "distinct") == true_space(B, I, N, True)
    assert claims.true_count(B, I, N, "revisit") == true_space(B, I, N, False)


def test_count_row_vgg16():
    f = claims.claim_count()
    assert f.data["paper"] == paper_space(1, 16, 5) * 256 == 57_600_000 and f.verdict == REPRODUCED
    assert f.data["distinct"] == true_space(256, 16, 5, True)
    # revisit: N (N-1)^(P-1) sequences per cut set, summed with math.comb (too many to enumerate)
    assert f.data["revisit"] == 256 * sum(math.comb(15, P) * 5 * 4 ** (P - 1) for P in range(1, 16))
    # the b classes: distinct values of ceil(B / b) (the balanced loads are then never dominated)
    assert f.data["b_classes"] <= len({-(-256 // b) for b in range(1, 257)})


@pytest.fixture(scope="module")
def alg1():
    return claims.claim_alg1(40)


def test_alg1_records_against_bruteforce(alg1):
    recs = alg1.data["records"]
    assert len(recs) == 40
    for r in recs[:12]:
        inst = claims.small_instance(r["seed"])
        opt = evaluate(inst, bruteforce(inst))[0]
        assert close(r["opt"], opt, 1e-9)
        assert r["got"] >= opt * (1 - 1e-9)
        if r["K2"] is not None:
            assert r["K2"] >= opt * (1 - 1e-9)
    worse = sum(r["got"] > r["opt"] * (1 + 1e-9) for r in recs)
    assert alg1.data["worse"] == worse and 1 <= worse < 40 and alg1.verdict == REFUTED
    assert math.isclose(alg1.data["max"], max(r["got"] / r["opt"] - 1 for r in recs))


def test_alg1_records_score_their_plans():
    recs = claims.alg1_records(3)
    for r in recs:
        inst = claims.small_instance(r["seed"])
        assert close(evaluate(inst, r["assignment"])[0], r["got"])
        assert len(r["assignment"]["servers"]) == r["K"] - 1  # exactly K parts, client included


def _restricted(inst: PipelineInstance, bs):
    return inst.with_(micro_batches=tuple(bs))


@pytest.mark.parametrize("N", (2, 3))
def test_vgg_points_against_bruteforce(N):
    p = claims.vgg_point(N)
    inst = claims.vgg_instance(N)
    B = inst.batch
    # the exact optimum: brute force at its b gives the same value, at other b no better
    assert close(evaluate(inst, bruteforce(inst, b=p["b"]))[0], p["L"], 1e-9)
    for b in (1, 20, 64, 100, 256, B):
        try:
            assert evaluate(inst, bruteforce(inst, b=b))[0] >= p["L"] * (1 - 1e-9)
        except InstanceError:  # nothing fits at this b
            pass
    # No Pipeline: brute force at b = B
    if p["nopipe_L"] is None:
        with pytest.raises(InstanceError):
            bruteforce(inst, b=B)
    else:
        assert close(evaluate(inst, bruteforce(inst, b=B))[0], p["nopipe_L"], 1e-9)
    # BCD: its plan scored by the evaluator, never below the optimum, b never far from 20
    assert close(evaluate(inst, p["bcd_assignment"])[0], p["bcd_L"])
    assert p["bcd_L"] >= p["L"] * (1 - 1e-9) and p["bcd_b"] == p["bcd_path"][-1]


def test_vgg_rows_are_consistent_with_their_points():
    pts = {N: claims.vgg_point(N) for N in claims.VGG_N}
    fig7 = claims.claim_fig7()
    for N, g in fig7.data["gaps"].items():
        assert math.isclose(g, pts[N]["bcd_L"] / pts[N]["L"] - 1)
    assert fig7.verdict == (REPRODUCED if fig7.data["gaps"][10] <= 0.03 else REFUTED)
    nop = claims.claim_nopipe()
    fits = [N for N in pts if pts[N]["nopipe_L"] is not None]
    assert sorted(N for N, _s in nop.data["ratios"]) == fits
    for N in fits:
        assert pts[N]["nopipe_L"] >= pts[N]["L"] * (1 - 1e-9)  # b = B is one of the b the optimum chose among
    stop = claims.claim_bcd_stop()
    assert stop.data["opt_b"] == sorted({pts[N]["b"] for N in pts})
    for s in stop.data["synthetic"]:
        assert s["bcd_L"] >= s["L"] * (1 - 1e-9)


def test_audit_lists_the_rows():
    ids = [c.id for c in audit.claims_of("pipeline")]
    assert {"001-count", "001-alg1", "001-bcd-stop", "001-fig7", "001-nopipe"} <= set(ids)
    slow = {c.id for c in audit.claims_of("pipeline") if c.slow}
    assert slow == {"001-alg1-200", "001-nopipe-seeds"}
