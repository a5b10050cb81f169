"""Property tests (hypothesis) of the pipeline family on small seeded instances under every
semantics: the optimal round latency (brute force, scored by the evaluator) never increases when
every link gets faster, every node computes faster, or every memory grows (the feasible set only
widens and no stage time grows); the evaluator of any fixed assignment is monotone the same way;
``xi = 0`` and ``L = T_f`` at ``b = B``."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from splitopt.errors import InfeasibleSolution
from splitopt.instances.pipeline_generate import generate
from splitopt.models.pipeline import evaluate
from splitopt.solvers.pipeline.bruteforce import bruteforce

SETTINGS = settings(max_examples=int(os.environ.get("SPLITOPT_HYPOTHESIS_EXAMPLES", "40")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def instances(draw):
    seed = draw(st.integers(0, 10_000))
    kw = dict(placement=draw(st.sampled_from(["distinct", "revisit", "aggregate"])),
              bottleneck=draw(st.sampled_from(["stages", "resource"])),
              memory=draw(st.sampled_from(["paper", "resident"])),
              client_split=draw(st.sampled_from(["balanced", "paper"])),
              topology=draw(st.sampled_from(["mesh", "line", "star", "tree"])),
              relay=draw(st.sampled_from(["forbidden", "store_forward"])))
    return generate(seed, n_layers=draw(st.integers(2, 5)), n_servers=draw(st.integers(1, 3)),
                    n_clients=draw(st.integers(1, 3)), batch=draw(st.integers(1, 12)), **kw)


factor = st.floats(1.0, 100.0, allow_nan=False, allow_infinity=False)


def opt(inst):
    return evaluate(inst, bruteforce(inst))[0]


@SETTINGS
@given(instances(), factor, st.sampled_from(["rate", "server_flops", "client_flops", "memory"]))
def test_optimum_non_increasing(inst, f, what):
    better = inst.scaled(**{what: f})
    assert opt(better) <= opt(inst) * (1 + 1e-12)


@SETTINGS
@given(instances(), factor, st.sampled_from(["rate", "server_flops", "client_flops"]))
def test_fixed_assignment_monotone(inst, f, what):
    a = bruteforce(inst)
    assert evaluate(inst.scaled(**{what: f}), a)[0] <= evaluate(inst, a)[0] * (1 + 1e-12)


@SETTINGS
@given(instances())
def test_xi_zero_at_full_batch(inst):
    full = inst.with_(micro_batches=None)
    a = dict(bruteforce(full))
    a["b"] = full.batch
    try:
        L, br = evaluate(full, a)
    except InfeasibleSolution:
        return
    assert br["xi"] == 0 and L == br["T_f"]
