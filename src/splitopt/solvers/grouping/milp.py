"""The grouping MILPs solved by an exact solver (``milp_compact``, ``milp_interval``).

Formulations: :func:`splitopt.models.grouping.build_milp_compact` (digest 003 §5.3 MILP A) and
:func:`~splitopt.models.grouping.build_milp_interval` (MILP B).
"""

from __future__ import annotations

from splitopt.errors import InstanceError, SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.grouping import GroupingInstance
from splitopt.models.grouping import build_milp_compact, build_milp_interval, sizes_from_model
from splitopt.solvers.deadline import Deadline


def _build(formulation: str, instance: GroupingInstance, m: int, deadline: Deadline):
    """The model for ``m`` groups; the interval build reads the deadline row by row (its cover rows
    hold ``n^3/6`` terms), the compact one is fast."""
    if deadline.over():
        raise deadline.no_answer(f" (before the {formulation} model for m = {m} was built)")
    if formulation == "interval":
        return build_milp_interval(instance, m, deadline=deadline if deadline.limit is not None else None)
    return build_milp_compact(instance, m)


def solve_milp(instance: GroupingInstance, formulation: str = "interval", solver: str = "highs",
               time_limit: float | None = 60.0, **options) -> AlgoResult:
    """Build and solve MILP A (``formulation="compact"``) or B (``"interval"``) through
    :func:`splitopt.solvers.exact.solve`; with ``at_most_k`` one model per group count
    ``m = 1..min(k, n)`` (the thesis_cost balance weight ``delta m / T_tot`` depends on ``m``).
    Returns the best sizes with the solver's status and the smallest bound over the ``m``.

    ``time_limit`` covers the whole call (issue 21 §1): one deadline for every ``m``'s build and
    solve; a group count not reached in time leaves no bound, and no model solved in time raises
    ``SolverFailed`` with status ``time_limit``."""
    from splitopt.solvers import exact

    if formulation not in ("compact", "interval"):
        raise InstanceError("formulation", f"must be 'compact' or 'interval', got {formulation!r}")
    deadline = Deadline(time_limit)
    best = None
    bounds, statuses, seconds = [], [], 0.0
    for m in instance.group_counts:
        try:
            model = _build(formulation, instance, m, deadline)
        except SolverFailed:
            if best is None:
                raise
            statuses.append("time_limit")
            break
        res = exact.solve(model, solver=solver, time_limit=deadline.remaining(), relax=False, **options)
        seconds += res.seconds or 0.0
        statuses.append(str(res.status))
        if res.bound is not None:
            bounds.append(res.bound)
        if res.objective is None:
            continue
        sizes = sizes_from_model(model)
        if best is None or res.objective < best[0]:
            best = (res.objective, sizes, res)
    if best is None:
        if deadline.hit or deadline.over():
            raise deadline.no_answer(f" (the {formulation} MILP, status {', '.join(statuses)})")
        raise SolverFailed(f"solver: {solver} found no solution of the {formulation} MILP "
                           f"(status {', '.join(statuses)})", status=statuses[-1] if statuses else "error")
    obj, sizes, res = best
    status = "optimal" if all(s == "optimal" for s in statuses) else statuses[-1]
    bound = min(bounds) if len(bounds) == len(instance.group_counts) else None
    return AlgoResult(sizes, status=status, bound=bound,
                      info={"formulation": formulation, "solver": res.solver, "model_objective": obj,
                            "solver_seconds": seconds, "termination": str(res.termination)})


def solve_lp(instance: GroupingInstance, formulation: str = "interval", solver: str = "highs",
             time_limit: float | None = 60.0, **options) -> AlgoResult:
    """LP relaxation of MILP A or B (issue 12 item 11): the bound is the smallest LP optimum over the
    group counts ``m``; a lower bound on every grouping's objective because each grouping is a
    feasible point of its ``m``'s LP with the same objective value. The assignment is a rounding
    (the LP point read as in :func:`sizes_from_model` when that gives a valid grouping, else ``m``
    near-equal groups), so its objective is only an upper bound. Status ``ok`` (a relaxation
    claims no optimality); the bound is dropped unless every LP was solved to optimality.

    ``time_limit`` covers the whole call: one deadline for every ``m``; LPs stopped by it leave no
    bound, and none solved in time raises ``SolverFailed`` with status ``time_limit`` (it was
    ``error``)."""
    from splitopt.models.grouping import check_assignment
    from splitopt.solvers import exact

    if formulation not in ("compact", "interval"):
        raise InstanceError("formulation", f"must be 'compact' or 'interval', got {formulation!r}")
    deadline = Deadline(time_limit)
    best = None
    all_optimal = True
    for m in instance.group_counts:
        try:
            model = _build(formulation, instance, m, deadline)
        except SolverFailed:
            if best is None:
                raise
            all_optimal = False
            break
        res = exact.solve(model, solver=solver, time_limit=deadline.remaining(), relax=True, **options)
        if str(res.status) != "optimal" or res.objective is None:
            all_optimal = False
            if deadline.over():
                break
            continue
        val = res.bound if res.bound is not None else res.objective
        if best is None or val < best[0]:
            try:
                sizes = check_assignment(instance, sizes_from_model(model))
            except InstanceError:
                q, r = divmod(instance.n, m)
                sizes = [q + 1] * r + [q] * (m - r)
            best = (val, sizes)
    if best is None:
        if deadline.hit or deadline.over():
            raise deadline.no_answer(f" (no LP relaxation of the {formulation} MILP solved)")
        raise SolverFailed(f"solver: {solver} solved no LP relaxation of the {formulation} MILP", status="error")
    return AlgoResult(best[1], status="ok", bound=best[0] if all_optimal else None,
                      info={"formulation": formulation, "lp": True})


def lp_compact(instance: GroupingInstance, **options) -> AlgoResult:
    """LP relaxation of MILP A."""
    return solve_lp(instance, "compact", **options)


def lp_interval(instance: GroupingInstance, **options) -> AlgoResult:
    """LP relaxation of MILP B."""
    return solve_lp(instance, "interval", **options)


def solve_compact(instance: GroupingInstance, **options) -> AlgoResult:
    """MILP A (assignment binaries with the staircase constraint)."""
    return solve_milp(instance, "compact", **options)


def solve_interval(instance: GroupingInstance, **options) -> AlgoResult:
    """MILP B (one binary per interval: the path formulation)."""
    return solve_milp(instance, "interval", **options)
