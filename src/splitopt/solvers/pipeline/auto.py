"""``auto``: the default algorithm of the ``pipeline`` family -- a written rule that picks the
fastest exact method for the instance's shape and passes incumbents and bounds between methods when
one cannot finish (issue 21 §2).

The rule (tested in ``tests/solvers/pipeline/test_auto.py``):

1. The exact search :func:`.shortest_path.solve` first, for every placement and memory model (the
   corrected bottleneck-aware shortest path, seed 001 §V-D as corrected in digest §3.4-§3.5: one
   threshold search per ``b`` under ``revisit``, the decremental state-space relaxation under
   ``distinct``, the branch and bound under ``aggregate``). It gets the whole limit when the
   placement is ``revisit`` (it always finishes quickly there: a few DPs per ``b``) or the MILP
   would not be tried (rule 2), and :data:`SEARCH_SHARE` of it otherwise. Its answer is returned when it is ``optimal``.
2. Otherwise (stopped by its share of the limit, or its state space capped: status ``feasible``),
   and only when the MILP is small enough to help (``I N^2 <= MILP_MAX_SIZE``: Formulation C has a
   transfer variable per layer and server pair; at ``I = 100, N = 50`` one model takes longer to
   build and hand to HiGHS than a minute), the MILP that fits the placement (:func:`.milp.solve_best`: Formulation C for ``distinct``, A
   for ``aggregate`` and for ``memory="resident"``) runs over the non-dominated micro-batch sizes
   (:func:`.shortest_path.candidate_bs`; a dominated ``b`` is never better than the ``b`` that
   dominates it, so the MILP's bound over them bounds every ``b``) with the time left.
3. The answer is the better of the two plans by the evaluator; its bound is the larger of the two
   valid bounds (the search's bound is at least the ``revisit`` optimum; a MILP bound is used only
   when the MILP loop trusts it, :mod:`.milp`). Status ``optimal`` only when the bound meets the
   value (relative 1e-9), else ``time_limit`` when the limit stopped a method, else ``feasible``.

``info["methods"]`` lists what ran, with each method's status, value and bound.
"""

from __future__ import annotations

import math

from splitopt.errors import SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import evaluate
from splitopt.solvers.deadline import Deadline
from splitopt.solvers.pipeline import milp, shortest_path

#: share of the time limit the exact search gets before the MILP (distinct, aggregate)
SEARCH_SHARE = 0.6
#: largest ``I N^2`` (layers x servers^2) for which the MILP is tried after the search
MILP_MAX_SIZE = 20_000


def solve(instance: PipelineInstance, *, time_limit: float | None = None) -> AlgoResult:
    dl = Deadline(time_limit)
    small = instance.n_layers * instance.n_servers ** 2 <= MILP_MAX_SIZE
    share = None if time_limit is None else (time_limit if instance.placement == "revisit" or not small
                                             else SEARCH_SHARE * time_limit)
    res = shortest_path.solve(instance, time_limit=share)
    val = evaluate(instance, res.assignment)[0]
    methods = [{"method": "shortest_path", "status": res.status, "value": val, "bound": res.bound}]
    best = (val, res.assignment)
    bound = res.bound if res.bound is not None else -math.inf
    hit = res.status == "time_limit"

    def done() -> bool:
        return bound >= best[0] - 1e-9 * max(1.0, abs(best[0]))

    if res.status != "optimal" and not done() and small and (time_limit is None or dl.remaining() > 1.0):
        try:
            m = milp.solve_best(instance, time_limit=dl.remaining(), b_values=shortest_path.candidate_bs(instance))
        except SolverFailed as exc:  # a time-out before the MILP's first answer: the search's answer stands
            methods.append({"method": "milp", "status": exc.status, "value": None, "bound": None})
            hit = hit or exc.status == "time_limit"
        else:
            mv = evaluate(instance, m.assignment)[0]
            methods.append({"method": "milp", "status": m.status, "value": mv, "bound": m.bound})
            if mv < best[0]:
                best = (mv, m.assignment)
            if m.bound is not None and m.status in ("optimal", "time_limit"):
                bound = max(bound, m.bound)
            hit = hit or m.status == "time_limit"
    if done():
        status = "optimal"
        bound = min(bound, best[0])
    else:
        status = "time_limit" if hit or dl.hit else "feasible"
    return AlgoResult(best[1], status=status, bound=bound if math.isfinite(bound) else None,
                      info={"methods": methods, **{k: v for k, v in res.info.items() if k != "order"}})


__all__ = ["solve", "SEARCH_SHARE", "MILP_MAX_SIZE"]
