"""The ``pipeline`` formulations solved by an exact solver (:mod:`splitopt.models.pipeline_milp`):
Formulations C, A and B for each allowed ``b`` (the loop over ``b`` of digest §8.5 (i)), the single
joint MILP with choice binaries (§8.5 (ii)), and the LP relaxations of A (RLT level 1, the paper's
Appendix B bound made correct, and plain McCormick) as lower bounds.

The loop is exact: the answer is the best per-``b`` optimum, its bound the smallest per-``b``
bound (``b`` values whose model is infeasible contribute no bound). A time limit applies to the whole
loop; when it runs out the statuses say so.
"""

from __future__ import annotations

import math
import time

from splitopt.errors import InfeasibleSolution, InstanceError, SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import evaluate
from splitopt.models.pipeline_milp import FORMULATIONS, build_a, build_joint_c

#: the formulation used for each placement by :func:`solve_best`
DEFAULT_FORMULATION = {"distinct": "C", "revisit": "B", "aggregate": "A"}


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    return max(deadline - time.perf_counter(), 1e-3)


def solve(instance: PipelineInstance, formulation: str = "C", solver: str = "highs", time_limit: float | None = None,
          mip_gap: float | None = None, b_values=None) -> AlgoResult:
    """Solve ``formulation`` (``"C"``, ``"A"``, ``"B"``) for every allowed ``b`` (or ``b_values``)
    and keep the best."""
    from splitopt.solvers import exact

    if formulation not in FORMULATIONS:
        raise InstanceError("formulation", f"must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")
    build = FORMULATIONS[formulation]
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    bs = instance.allowed_b() if b_values is None else tuple(b_values)
    best, bound, statuses, solves = None, math.inf, set(), 0
    for b in bs:
        if deadline is not None and time.perf_counter() >= deadline:
            statuses.add("time_limit")
            bound = -math.inf if best is None else min(bound, -math.inf)
            break
        try:
            model = build(instance, b)
        except InstanceError as exc:
            if exc.path == "instance":  # no feasible arc at this b (Formulation B)
                statuses.add("optimal")
                continue
            raise
        res = exact.solve(model, solver, time_limit=_remaining(deadline), mip_gap=mip_gap)
        solves += 1
        if res.status == "infeasible":
            statuses.add("optimal")
            continue
        if not res.has_solution:
            raise SolverFailed(f"solver: {solver} returned no solution of Formulation {formulation} at b = {b} "
                               f"(status {res.status})" + (f": {res.message}" if res.message else ""),
                               status=res.status)
        statuses.add(res.status)
        u = model._unit
        bound = min(bound, (res.bound if res.bound is not None else -math.inf) * u)
        a = model._extract()
        try:
            val = evaluate(instance, a)[0]
        except InfeasibleSolution as exc:
            raise SolverFailed(f"solver: Formulation {formulation} at b = {b} returned an infeasible assignment "
                               f"({exc})", status="numerical") from exc
        if best is None or val < best[0]:
            best = (val, a, res.objective * u)
    if best is None:
        raise InstanceError("instance", "no feasible assignment for any allowed micro-batch size")
    status = "optimal" if statuses <= {"optimal"} else sorted(statuses - {"optimal"})[0]
    return AlgoResult(best[1], status=status, bound=bound if math.isfinite(bound) else None,
                      info={"formulation": formulation, "solver": solver, "b_solved": solves,
                            "model_objective": best[2]})


def solve_c(instance, **kw):
    return solve(instance, "C", **kw)


def solve_a(instance, **kw):
    return solve(instance, "A", **kw)


def solve_b(instance, **kw):
    return solve(instance, "B", **kw)


def solve_best(instance: PipelineInstance, **kw) -> AlgoResult:
    """The formulation that fits the placement: C (``distinct``), B (``revisit``), A (``aggregate``)."""
    return solve(instance, DEFAULT_FORMULATION[instance.placement], **kw)


def solve_joint(instance: PipelineInstance, solver: str = "highs", time_limit: float | None = None,
                mip_gap: float | None = None) -> AlgoResult:
    """The single joint MILP over every allowed ``b`` (Formulation C with choice binaries)."""
    from splitopt.solvers import exact

    model = build_joint_c(instance)
    res = exact.solve(model, solver, time_limit=time_limit, mip_gap=mip_gap)
    if res.status == "infeasible":
        raise InstanceError("instance", "no feasible assignment for any allowed micro-batch size")
    if not res.has_solution:
        raise SolverFailed(f"solver: {solver} returned no solution of the joint MILP (status {res.status})",
                           status=res.status)
    u = model._unit
    return AlgoResult(model._extract(), status=res.status, bound=None if res.bound is None else res.bound * u,
                      info={"formulation": "C-joint", "solver": solver, "model_objective": res.objective * u})


def relaxation(instance: PipelineInstance, rlt: bool = True, solver: str = "highs",
               time_limit: float | None = None) -> AlgoResult:
    """Lower bound: the LP relaxation of Formulation A (``rlt=True``: RLT level 1; ``False``: plain
    McCormick), minimised over the allowed ``b``. The assignment is the LP point rounded (if
    feasible and best), else the best feasible assignment found among the per-``b`` roundings,
    else the exact Formulation for the placement (``info["assignment_from"]`` says which)."""
    from splitopt.solvers import exact

    deadline = None if time_limit is None else time.perf_counter() + time_limit
    bound = math.inf
    best = None
    for b in instance.allowed_b():
        model = build_a(instance, b, rlt=rlt)
        res = exact.solve(model, solver, time_limit=_remaining(deadline), relax=True)
        if res.status == "infeasible":
            continue
        if not res.has_solution or res.bound is None:
            raise SolverFailed(f"solver: {solver} returned no solution of the LP at b = {b} (status {res.status})",
                               status=res.status)
        bound = min(bound, res.bound * model._unit)
        try:
            a = model._extract()
            val = evaluate(instance, a)[0]
            if best is None or val < best[0]:
                best = (val, a)
        except (InfeasibleSolution, InstanceError, KeyError, StopIteration):
            pass
    if not math.isfinite(bound):
        raise InstanceError("instance", "the LP relaxation is infeasible for every allowed micro-batch size")
    src = "rounding"
    if best is None:
        best = (None, solve_best(instance, solver=solver).assignment)
        src = "exact"
    return AlgoResult(best[1], status="ok", bound=bound,
                      info={"formulation": "A-LP" + ("-RLT" if rlt else "-McCormick"), "assignment_from": src})


def lp_rlt(instance, **kw):
    return relaxation(instance, True, **kw)


def lp_plain(instance, **kw):
    return relaxation(instance, False, **kw)
