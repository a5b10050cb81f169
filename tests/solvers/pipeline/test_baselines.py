"""RC+OP, RP+OC and No Pipeline: each is the brute-force optimum over the plans it allows (the
drawn cuts, the drawn server order, b = B), and never better than the joint optimum."""

from __future__ import annotations

import itertools

import pytest

from splitopt.errors import InfeasibleSolution
from splitopt.models.pipeline import Plan, evaluate_plan
from splitopt.solvers.pipeline import baselines, shortest_path

from .helpers import close, small, value


def best_over(inst, pred):
    best = None
    I, N = inst.n_layers, inst.n_servers
    for b in inst.allowed_b():
        for P in range(1, I):
            for cuts in itertools.combinations(range(1, I), P):
                for seq in itertools.product(range(N), repeat=P):
                    if not pred(b, cuts, seq):
                        continue
                    try:
                        v = evaluate_plan(inst, Plan(b, cuts, seq), check=True)[0]
                    except InfeasibleSolution:
                        continue
                    best = v if best is None else min(best, v)
    return best


@pytest.mark.parametrize("placement", ("revisit", "distinct", "aggregate"))
@pytest.mark.parametrize("seed", range(5))
def test_baselines_are_restricted_optima(placement, seed):
    inst = small(seed, placement, b=None, batch=10)
    opt = value(inst, shortest_path.solve(inst).assignment)
    rc = baselines.rc_op(inst, seed=seed)
    cuts = tuple(rc.info["random_cuts"])
    assert close(value(inst, rc.assignment), best_over(inst, lambda b, c, s: c == cuts))
    rp = baselines.rp_oc(inst, seed=seed)
    order = [inst.servers.index(x) for x in rp.info["random_order"]]
    assert close(value(inst, rp.assignment), best_over(inst, lambda b, c, s: list(s) == order[:len(s)]))
    npl = baselines.no_pipeline(inst)
    assert npl.assignment["b"] == inst.batch
    assert close(value(inst, npl.assignment), best_over(inst, lambda b, c, s: b == inst.batch))
    for r in (rc, rp, npl):
        assert value(inst, r.assignment) >= opt * (1 - 1e-9)
