"""Hypothesis properties of the exact joint optimum (issue 9): the optimal round latency never
increases when links, servers or clients get faster or memories larger; at b = B there is one
micro-batch (xi = 0, L = T_f); the exact optimum is never above any other algorithm's plan."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from splitopt.families import get_family
from splitopt.models.pipeline import evaluate
from splitopt.solvers.pipeline import shortest_path

from .helpers import small, value

PLACEMENTS = ("revisit", "distinct", "aggregate")


def opt(inst):
    return value(inst, shortest_path.solve(inst).assignment)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), placement=st.sampled_from(PLACEMENTS),
       what=st.sampled_from(("rate", "server_flops", "client_flops", "memory")), factor=st.floats(1.0, 8.0))
def test_optimum_monotone_in_resources(seed, placement, what, factor):
    inst = small(seed, placement, b=None, batch=16)
    better = inst.scaled(**{what: factor})
    assert opt(better) <= opt(inst) * (1 + 1e-9)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), placement=st.sampled_from(PLACEMENTS))
def test_one_micro_batch_has_no_pipeline_term(seed, placement):
    inst = small(seed, placement, b=None, batch=16)
    res = shortest_path.solve(inst, b=inst.batch)
    L, br = evaluate(inst, res.assignment)
    assert br["xi"] == 0 and L == br["T_f"]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), placement=st.sampled_from(PLACEMENTS))
def test_exact_is_never_beaten(seed, placement):
    inst = small(seed, placement, b=None, batch=24)
    best = opt(inst)
    fam = get_family("pipeline")
    for name in ("bcd", "bcd_exact_b", "theorem1", "rc_op", "rp_oc", "no_pipeline"):
        a = fam.algorithms[name].func(inst)
        assert value(inst, a.assignment) >= best * (1 - 1e-9)
