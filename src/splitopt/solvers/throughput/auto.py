"""``auto``: the throughput family's default algorithm (issue 21 §2), a written rule over the family's
exact methods, relaxations and heuristics.

The rule, in order (each step is tested in ``tests/solvers/throughput/test_auto.py``):

1. (The dnn-partitioning device model is the ``placement`` family since issue 22; an old
   ``comm_model = "device"`` file loads as a placement instance and never reaches this rule.)
2. Every links-model instance starts with the corrected branch and bound ``bnb``: it is the fastest
   exact method on every shape measured (``benchmarks/results/throughput.md``: 13x-2,176x faster
   than the RLT MILP on YOLOv2 with 2-6 nodes, capped and not; ``throughput_scale.md`` for
   ResNet-152 on 8 and 10 nodes), and it carries the family's heuristics inside it (the best
   single node, the greedy runs over the ``S + 1`` fastest nodes, the quota and capped searches:
   their values are its first incumbents) and its relaxations (water-filling, the capped compute
   relaxation: its root bound). Without a time limit it runs to a proof.
3. With a time limit, on an instance small enough for the MILP (``L N^2 <= MILP_MAX_SIZE``, where
   the RLT model builds in well under a second), ``bnb`` gets ``BNB_SHARE`` of the limit; when it
   stops unproven, the RLT MILP (digest §6.4) runs for the rest of the limit **from bnb's
   incumbent** ``U`` (the fixings of digest §6.5: no layer or tensor that alone takes ``U``); its
   bound ``B`` covers every placement below ``U``, so ``min(U, B)`` bounds the optimum and
   "infeasible" proves ``U`` optimal. Larger instances give ``bnb`` the whole limit.
4. The answer is the better incumbent (scored by the evaluator), the stronger bound
   (``max(bnb's bound, min(U, MILP bound))``), status ``optimal`` only when they meet, else
   ``time_limit``. ``info["rule"]`` names the steps taken.
"""

from __future__ import annotations

import math

from splitopt.errors import SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.throughput import ThroughputInstance
from splitopt.models.throughput import evaluate
from splitopt.solvers.deadline import Deadline, wrapped

#: ``L N^2`` up to which the RLT MILP is tried after bnb (its model has about ``E N^2`` columns)
MILP_MAX_SIZE = 2_000
#: share of the time limit bnb gets when the MILP step may follow
BNB_SHARE = 0.6
#: the steps' deadline is the limit less min(WRAP_S, WRAP_SHARE x limit)
WRAP_S, WRAP_SHARE = 0.25, 0.05
_REL = 1e-9


def rule(instance) -> list[str]:
    """The methods ``auto`` runs on ``instance``, in order (step 1-3 of the module docstring)."""
    if instance.n_layers * instance.n_nodes ** 2 <= MILP_MAX_SIZE:
        return ["bnb", "rlt"]
    return ["bnb"]


def solve(instance: ThroughputInstance, time_limit: float | None = None) -> AlgoResult:
    """The family's default method (see the module docstring for the rule)."""
    # the steps end min(WRAP_S, WRAP_SHARE x limit) before the limit: bnb checks its deadline
    # between units of work (300 layers on 12 nodes: 4-42 ms past a 2-8 s limit, 2026-11-25)
    deadline = Deadline(wrapped(time_limit, WRAP_SHARE, WRAP_S))
    steps = rule(instance)
    from splitopt.solvers.throughput import bnb, milp

    milp_next = "rlt" in steps and time_limit is not None
    share = deadline.remaining() * BNB_SHARE if milp_next else deadline.remaining()
    first = bnb.solve(instance, time_limit=share)
    taken = ["bnb"]
    if first.status == "optimal" or not milp_next or deadline.over():
        return AlgoResult(first.assignment, first.status, first.bound,
                          {**first.info, "rule": "+".join(taken)})
    U = evaluate(instance, first.assignment)[0]
    best, assignment, bound = U, first.assignment, first.bound
    taken.append("rlt")
    try:
        second = milp.solve(instance, "rlt", time_limit=deadline.remaining(), incumbent=U)
    except SolverFailed as exc:
        if exc.status == "infeasible":  # nothing below U: bnb's incumbent is optimal
            return AlgoResult(assignment, "optimal", U, {**first.info, "rule": "bnb+rlt (infeasible below U)"})
        second = None
    if second is not None:
        try:
            val = evaluate(instance, second.assignment)[0]
        except Exception:  # a MILP point the evaluator rejects is no incumbent
            val = math.inf
        if val < best:
            best, assignment = val, second.assignment
        if second.bound is not None and second.status in ("optimal", "time_limit"):
            bound = max(bound if bound is not None else -math.inf, min(U, second.bound))
    status = "optimal" if bound is not None and bound >= best * (1 - _REL) else "time_limit"
    if status == "optimal":
        bound = min(bound, best)
    return AlgoResult(assignment, status, bound, {**first.info, "rule": "+".join(taken),
                                                  "gap": (best - bound) / best if bound is not None and best else None})


__all__ = ["solve", "rule", "MILP_MAX_SIZE", "BNB_SHARE"]
