"""Thesis Alg. 3 exhaustive search: cut-set counts (digest §2.2 table), refusal, and agreement with
brute force on the surrogate it optimises."""

from __future__ import annotations

import math

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.grouping import generate
from splitopt.models.grouping import evaluate
from splitopt.solvers.grouping.bruteforce import bruteforce
from splitopt.solvers.grouping.exhaustive import count_cut_sets, exhaustive


def test_counts_match_digest_table():
    assert [count_cut_sets(11, k) for k in range(1, 9)] == [1, 10, 45, 120, 210, 252, 210, 120]
    assert count_cut_sets(36, 8) == 6_724_520
    assert [count_cut_sets(53, k) for k in (4, 6, 8)] == [22_100, 2_598_960, 133_784_560]
    assert count_cut_sets(53, 8, at_most=True) == 157_036_244
    assert count_cut_sets(19, 8, at_most=True) == 63_004
    assert count_cut_sets(3, 5) == 0


def test_refusal_names_the_count():
    inst = generate(0, n=30, k=10, objective="thesis_cost")
    with pytest.raises(InstanceError, match="10,015,005"):
        exhaustive(inst)


def test_equals_bruteforce_on_surrogate():
    for seed in range(120):
        n = 1 + seed % 12
        inst = generate(seed, n=n, k=1 + (seed * 5) % n, objective="thesis_cost", at_most_k=seed % 7 == 0)
        _, opt = bruteforce(inst, return_value=True)
        assert math.isclose(evaluate(inst, exhaustive(inst))[0], opt, rel_tol=1e-9, abs_tol=1e-12)


def test_score_instance_is_exact_for_perf_but_paper_is_not():
    worse = 0
    for seed in range(60):
        inst = generate(seed, n=9, k=3 + seed % 4, objective="perf", requests=11)
        _, opt = bruteforce(inst, return_value=True)
        assert math.isclose(evaluate(inst, exhaustive(inst, score="instance"))[0], opt, rel_tol=1e-9)
        worse += evaluate(inst, exhaustive(inst))[0] > opt * (1 + 1e-9)
    assert worse > 0  # the surrogate is not Perf (digest §2.2)


def test_chunking_does_not_change_the_answer():
    inst = generate(3, n=12, k=5, objective="thesis_cost")
    assert exhaustive(inst, chunk=7) == exhaustive(inst)
