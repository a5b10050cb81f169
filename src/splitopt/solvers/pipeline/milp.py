"""The ``pipeline`` formulations solved by an exact solver (:mod:`splitopt.models.pipeline_milp`):
Formulations C, A and B for each allowed ``b`` (the loop over ``b`` of digest §8.5 (i)), the single
joint MILP with choice binaries (§8.5 (ii)), and the LP relaxations of A (RLT level 1, the paper's
Appendix B bound made correct, and plain McCormick) as lower bounds.

The loop is exact: the answer is the best per-``b`` optimum, its bound the smallest per-``b``
bound (``b`` values whose model is infeasible contribute no bound). A time limit
(:class:`~splitopt.solvers.deadline.Deadline`) applies to the whole loop, checked once per ``b``;
each solve gets the time left. When it runs out after a first answer, the best answer so far is
returned with status ``"time_limit"`` and a bound over every ``b``: the solver's bounds of the ``b``
solved (for a ``b`` whose solve the limit stopped, the larger of the solver's bound and that ``b``'s
relaxation bound), and for the ``b`` left the ``revisit`` relaxation bound of
:func:`.shortest_path.relaxation_bound` (two DPs per non-dominated ``b``, computed within
``max(1 s, 10 %)`` of the limit after it, else no bound; the per-``b`` statuses are in
``info["b_statuses"]``); before a first answer, a time-out (:class:`~splitopt.errors.SolverFailed`
with status ``"time_limit"``).

A bound is shown only where it is trusted (issue 21): a ``b`` whose solve ends ``numerical``, or
whose dual bound lies above the evaluator's value of the solver's own assignment (the wide-range
instance of ``tests/solvers/pipeline/data/milp_bound_above_optimum.json``: 107.5 against an
optimum of 27.99), makes the answer's bound ``None`` (``info["untrusted_bound_b"]`` lists those
``b``). The loop runs over every
allowed ``b`` (10,000 for ``B = 10,000``), not over the non-dominated ones of
:func:`.shortest_path.candidate_bs`, so that the reference shares no reduction with the search it
checks.
"""

from __future__ import annotations

import math
import time

from splitopt.errors import InfeasibleSolution, InstanceError, SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import evaluate
from splitopt.models.pipeline_milp import FORMULATIONS, build_a, build_deadline, build_joint_c
from splitopt.solvers.deadline import MIN_REMAINING, Deadline
from splitopt.solvers.pipeline.diagnose import infeasible

#: the formulation used for each placement by :func:`solve_best`
DEFAULT_FORMULATION = {"distinct": "C", "revisit": "B", "aggregate": "A"}


#: the hand-over of a Pyomo model to the solver (standard form, matrices) takes about this share of
#: the model's build time (Formulation C at I = 100, N = 50: build 14 s, hand-over 8 s) and is not
#: covered by the solver's own time limit; a model built too late for it is not handed over
HANDOVER_SHARE = 0.7


def _solver_time(dl: Deadline, build_seconds: float) -> float | None:
    """The solver's time limit: what is left of ``dl`` minus the expected hand-over time and 5 % of
    the limit kept for reading the solution back and bounding the ``b`` left."""
    if dl.end is None:
        return dl.remaining()
    return max(dl.remaining() - HANDOVER_SHARE * build_seconds - 0.05 * dl.limit, MIN_REMAINING)


def _options(model, solver: str):
    """The model's HiGHS options (tighter integrality for the prefix-sum models), HiGHS only."""
    return getattr(model, "_highs_options", None) if solver == "highs" else None


def solve(instance: PipelineInstance, formulation: str = "C", solver: str = "highs", time_limit: float | None = None,
          mip_gap: float | None = None, b_values=None) -> AlgoResult:
    """Solve ``formulation`` (``"C"``, ``"A"``, ``"B"``) for every allowed ``b`` (or ``b_values``)
    and keep the best."""
    from splitopt.solvers import exact

    if formulation not in FORMULATIONS:
        raise InstanceError("formulation", f"must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")
    build = FORMULATIONS[formulation]
    dl = Deadline(time_limit)
    bs = instance.allowed_b() if b_values is None else tuple(b_values)
    best, bound, statuses, solves = None, math.inf, set(), 0
    untrusted: list[int] = []
    weak: list[tuple[int, float]] = []  # (b, solver bound) of the b stopped by the time limit
    left: tuple = ()  # the b not solved when the deadline passed
    for i, b in enumerate(bs):
        if dl.over():  # the b left get the relaxation bound below
            if best is None:
                raise dl.no_answer(f" (Formulation {formulation}, {solves} of {len(bs)} micro-batch sizes solved)")
            statuses.add("time_limit")
            left = bs[i:]
            break
        try:
            t_build = time.perf_counter()
            with build_deadline(dl):
                model = build(instance, b)
            t_build = time.perf_counter() - t_build
            if dl.end is not None and dl.remaining() < HANDOVER_SHARE * t_build:
                raise dl.no_answer(f" (Formulation {formulation} at b = {b} built, no time left to hand it "
                                   f"to the solver)")
        except InstanceError as exc:
            if exc.path == "instance":  # no feasible arc at this b (Formulation B)
                statuses.add("optimal")
                continue
            raise
        except SolverFailed as exc:  # the deadline passed while building this b's model
            if exc.status != "time_limit" or best is None:
                raise
            statuses.add("time_limit")
            left = bs[i:]
            break
        res = exact.solve(model, solver, time_limit=_solver_time(dl, t_build), mip_gap=mip_gap,
                          options=_options(model, solver))
        if best is not None and res.status == "time_limit" and not res.has_solution:
            statuses.add("time_limit")  # the deadline passed at this b: keep what the others gave
            left = bs[i:]
            break
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
        a = model._extract()
        try:
            val = evaluate(instance, a)[0]
        except InfeasibleSolution as exc:
            raise SolverFailed(f"solver: Formulation {formulation} at b = {b} returned an infeasible assignment "
                               f"({exc})", status="numerical") from exc
        bb = (res.bound if res.bound is not None else -math.inf) * u
        if res.status == "numerical" or bb > val + 1e-9 * max(1.0, abs(val)):
            untrusted.append(b)  # not a valid bound of this b: none is shown for the loop
        if res.status == "time_limit":
            weak.append((b, bb))  # raised below by the relaxation bound of this b, if time allows
        else:
            bound = min(bound, bb)
        if best is None or val < best[0]:
            best = (val, a, res.objective * u)
    if best is None:
        raise infeasible(instance)
    info = {"formulation": formulation, "solver": solver, "b_solved": solves, "b_total": len(bs),
            "b_statuses": sorted(statuses), "model_objective": best[2]}
    if left or weak:  # the b left, and the b stopped early: the revisit relaxation bound, within the tolerance
        from splitopt.solvers.pipeline.shortest_path import relaxation_bound

        extra = Deadline(max(1.0, 0.1 * (time_limit or 0.0)) * 0.5)
        for b, bb in weak:
            rb = relaxation_bound(instance, (b,), extra)
            bound = min(bound, bb if rb is None else max(bb, rb))
        if left:
            rb = relaxation_bound(instance, left, extra)
            info["b_left_bound"] = rb
            bound = -math.inf if rb is None else min(bound, rb)
    if "time_limit" in statuses:  # the loop was cut short (or a b's solve was)
        status = "time_limit"
    else:
        status = "optimal" if statuses <= {"optimal"} else sorted(statuses - {"optimal"})[0]
    if untrusted:
        info["untrusted_bound_b"] = untrusted
        bound = math.inf
    return AlgoResult(best[1], status=status, bound=bound if math.isfinite(bound) else None, info=info)


def solve_c(instance, **kw):
    return solve(instance, "C", **kw)


def solve_a(instance, **kw):
    return solve(instance, "A", **kw)


def solve_b(instance, **kw):
    return solve(instance, "B", **kw)


def solve_best(instance: PipelineInstance, **kw) -> AlgoResult:
    """The formulation that fits the placement: C (``distinct``), B (``revisit``), A (``aggregate``);
    A for every placement under ``memory="resident"`` (the only formulation that models it)."""
    f = "A" if instance.memory == "resident" else DEFAULT_FORMULATION[instance.placement]
    return solve(instance, f, **kw)


def solve_joint(instance: PipelineInstance, solver: str = "highs", time_limit: float | None = None,
                mip_gap: float | None = None) -> AlgoResult:
    """The single joint MILP over every allowed ``b`` (Formulation C with choice binaries).
    ``time_limit`` counts from the call: the solver gets what the model build left of it."""
    from splitopt.solvers import exact

    dl = Deadline(time_limit)
    t_build = time.perf_counter()
    with build_deadline(dl):
        model = build_joint_c(instance, deadline=dl)
    t_build = time.perf_counter() - t_build
    if dl.end is not None and dl.remaining() < HANDOVER_SHARE * t_build:
        raise dl.no_answer(" (the joint model was built, no time left to hand it to the solver)")
    res = exact.solve(model, solver, time_limit=_solver_time(dl, t_build), mip_gap=mip_gap,
                      options=_options(model, solver))
    if res.status == "infeasible":
        raise infeasible(instance)
    if not res.has_solution:
        raise SolverFailed(f"solver: {solver} returned no solution of the joint MILP (status {res.status})",
                           status=res.status)
    u = model._unit
    a = model._extract()
    bound = None if res.bound is None else res.bound * u
    info = {"formulation": "C-joint", "solver": solver, "model_objective": res.objective * u}
    if bound is not None:
        try:
            val = evaluate(instance, a)[0]
        except InfeasibleSolution:
            val = -math.inf
        if res.status == "numerical" or bound > val + 1e-9 * max(1.0, abs(val)):
            info["untrusted_bound"] = bound  # not shown as a bound (module docstring)
            bound = None
    return AlgoResult(a, status=res.status, bound=bound, info=info)


def relaxation(instance: PipelineInstance, rlt: bool = True, solver: str = "highs",
               time_limit: float | None = None) -> AlgoResult:
    """Lower bound: the LP relaxation of Formulation A (``rlt=True``: RLT level 1; ``False``: plain
    McCormick), minimised over the allowed ``b``. The assignment is the LP point rounded (if
    feasible and best), else the best feasible assignment found among the per-``b`` roundings,
    else the exact Formulation for the placement (``info["assignment_from"]`` says which).

    ``time_limit`` covers the loop over ``b`` (checked once per ``b``), every model build (checked
    every 1,000 rows, :func:`~splitopt.models.pipeline_milp.build_deadline`, the first ``b``'s
    included: Formulation A at I = 60, N = 6 takes about 10 s to build), the hand-over to the
    solver (a model built too late for it, :data:`HANDOVER_SHARE` of its build time, is not handed
    over), each LP (the time left, as in :func:`solve`) and the fallback: stopped before the last
    ``b``, the minimum over the ``b`` solved is no bound over every ``b``, so the answer has status
    ``"time_limit"`` and no bound (``info["b_solved"]`` of ``info["b_total"]``). Stopped with no
    assignment (no LP point rounded to a feasible one, and no time left for the exact
    Formulation), a time-out (:class:`~splitopt.errors.SolverFailed` with status ``"time_limit"``)
    saying how far the loop got."""
    from splitopt.solvers import exact

    dl = Deadline(time_limit)
    bs = instance.allowed_b()
    bound = math.inf
    best = None
    solved = 0
    name = "the LP relaxation of Formulation A (" + ("RLT" if rlt else "plain McCormick") + ")"
    where = ""  # the step the deadline stopped, for the time-out's message
    for b in bs:
        if dl.over():
            where = f", stopped before b = {b}"
            break
        try:
            t_build = time.perf_counter()
            with build_deadline(dl):
                model = build_a(instance, b, rlt=rlt, cumulative=False)  # the digest's q form (RLT level 1)
            t_build = time.perf_counter() - t_build
        except SolverFailed as exc:
            if exc.status != "time_limit":
                raise
            where = f", stopped while building the model at b = {b}"
            break
        if dl.end is not None and dl.remaining() < HANDOVER_SHARE * t_build:
            dl.hit = True  # the hand-over alone would overrun the limit
            where = f", the model at b = {b} built with no time left to hand it to the solver"
            break
        res = exact.solve(model, solver, time_limit=_solver_time(dl, t_build), relax=True)
        if res.status == "time_limit" and res.bound is None:  # the deadline passed in this LP
            where = f", stopped while solving the LP at b = {b}"
            break
        solved += 1
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
    stopped = solved < len(bs)
    if not stopped and not math.isfinite(bound):
        raise InstanceError("instance", "the LP relaxation is infeasible for every allowed micro-batch size")
    src = "rounding"
    if best is None:
        what = f" ({name}: {solved} of {len(bs)} micro-batch sizes solved{where}, no LP point rounded to a " \
               "feasible assignment"
        if dl.over():  # no time left for the exact Formulation: no assignment at all
            raise dl.no_answer(what + ")")
        try:
            best = (None, solve_best(instance, solver=solver, time_limit=dl.remaining()).assignment)
        except SolverFailed as exc:
            if exc.status != "time_limit":
                raise
            f = "A" if instance.memory == "resident" else DEFAULT_FORMULATION[instance.placement]
            raise dl.no_answer(f"{what}; the exact Formulation {f} found none in the time left)") from exc
        src = "exact"
    return AlgoResult(best[1], status="time_limit" if stopped else "ok", bound=None if stopped else bound,
                      info={"formulation": "A-LP" + ("-RLT" if rlt else "-McCormick"), "assignment_from": src,
                            "b_solved": solved, "b_total": len(bs)})


def lp_rlt(instance, **kw):
    return relaxation(instance, True, **kw)


def lp_plain(instance, **kw):
    return relaxation(instance, False, **kw)
