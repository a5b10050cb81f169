"""``--time-limit`` bounds the whole ``milp`` / ``lp`` algorithm, certificate included (issue 13,
found by benchmarks/split_chain_limits.py: with ``time_limit=60`` a 10,000-layer chain ran past 90 s
because the exact certificate re-solved the LP without a limit after HiGHS stopped)."""

import time

from cases.split import wide_range_instance
from splitopt.families import solve
from splitopt.solvers.split import milp


def test_certificate_gets_only_the_time_left(monkeypatch):
    seen = []
    real = milp.certified_bound

    def spy(model, target=None, rounds=4, time_limit=None):
        seen.append(time_limit)
        return real(model, target=target, rounds=rounds, time_limit=time_limit)

    monkeypatch.setattr(milp, "certified_bound", spy)
    inst = wide_range_instance(3)
    t0 = time.perf_counter()
    solve(inst, "milp", time_limit=30.0)
    spent = time.perf_counter() - t0
    assert len(seen) == 1 and 0 < seen[0] <= 30.0 and seen[0] >= 30.0 - spent
    solve(inst, "milp")
    assert seen[1] is None  # no limit given: none imposed


def test_zero_time_left_gives_no_certificate():
    inst = wide_range_instance(5)
    from splitopt.solvers.split.milp import build_milp

    assert milp.certified_bound(build_milp(inst), time_limit=0.0) is None
    assert milp.certified_bound(build_milp(inst), time_limit=None) is not None
