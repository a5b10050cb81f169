"""The ``split`` MILP and its LP relaxation solved by an exact solver (``milp``, ``lp``).

The formulation is :func:`splitopt.models.split.build_milp` (digest 002 §8.2, generalised to
training costs, digest 000 §2.4). Its matrix is totally unimodular (digest 002 §8.3), so the LP
relaxation has an integral optimum equal to the MILP's; ``lp`` reports how far its point is from
integral in ``info["max_fractionality"]``.

Certificate. A solver's "optimal" is not taken on trust: with costs over many orders of magnitude
HiGHS has returned a split 9.65e-4 above the optimum as optimal, and bounds above the objective.
Because the LP is integral, the exact Lagrangian bound of the LP at HiGHS's duals
(:func:`splitopt.solvers.exact.highs.lagrangian_bound`, weak duality in rational arithmetic) is a
proof that no split costs less. The answer is ``optimal`` only when that proven bound reaches the
evaluator's objective of the returned split (relative 1e-9); otherwise its status is
``numerical`` and its ``bound`` the proven one.

Time limits (issue 21: ``--time-limit 60`` on a 20,000-layer chain answered after 162 s). The limit
covers every phase. With HiGHS (the default) the model is assembled as arrays
(:func:`~splitopt.models.split.milp_arrays`: the rows and columns of ``build_milp``, tested equal)
in about a second at 100,000 layers, where Pyomo's build and compilation took 25 s and cannot be
stopped; HiGHS runs in a child process killed at the limit for models above 10,000 columns plus
rows (:mod:`splitopt.solvers.exact.highs_isolated`: HiGHS overran its own limit 3-fold); the
certificate gets what is left. Other solvers go through the Pyomo model, whose build looks at the
deadline every 4,096 rows and whose compilation is not started without as much time left as the
build took. A run stopped before the solver found a split answers with the better trivial split,
the trivial bound ``sum_v min(dev_v, srv_v)`` and status ``time_limit``.
"""

from __future__ import annotations

import math

import numpy as np

from splitopt.errors import SolverFailed
from splitopt.families import NUMERICAL, AlgoResult, cost_scale
from splitopt.instances.split import SplitInstance
from splitopt.models.split import MilpArrays, assignment_from_model, build_milp, evaluate, milp_arrays

CERT_REL = 1e-9
#: the compilation for HiGHS takes up to this share of the build time (measured up to 100,000 layers: 0.4-1.0)
COMPILE_SHARE = 1.0


def certified_bound(model, target: float | None = None, rounds: int = 4,
                    time_limit: float | None = None) -> float | None:
    """Proven lower bound on every split of ``model`` (a :func:`build_milp` model or its
    :func:`~splitopt.models.split.milp_arrays`): the exact
    Lagrangian bound at duals of its LP relaxation solved by HiGHS; ``None`` if HiGHS is not
    installed or returns no duals.

    When the bound falls short of ``target`` (the objective to certify), the duals are refined:
    the LP is re-solved with the reduced costs ``d = c - A^T y`` as its objective (scaled by HiGHS's
    power-of-two objective scaling, so costs lost below its tolerance the first time are seen now)
    and its duals added to ``y`` (iterative refinement of the dual, up to ``rounds`` times). Every
    candidate's bound is computed exactly, so refinement can only help. ``time_limit`` (seconds)
    bounds the whole certification: past it, the best bound so far (or ``None``) is returned."""
    import numpy as np

    from splitopt.solvers.exact import base
    from splitopt.solvers.exact.highs import HighsMatrix, InfeasibleModel, lagrangian_bound

    if not base.has_module("highspy"):
        return None
    import time

    tight = {"dual_feasibility_tolerance": 1e-10, "primal_feasibility_tolerance": 1e-10}
    deadline = None if time_limit is None else time.perf_counter() + time_limit

    def left() -> float | None:
        return None if deadline is None else max(deadline - time.perf_counter(), 1e-3)

    if time_limit is not None and time_limit <= 0:
        return None
    from splitopt.solvers.exact.highs_isolated import ISOLATE_ABOVE

    try:
        if isinstance(model, MilpArrays):
            hm = model.matrix(relax=True, options=tight, time_limit=left())
        else:
            hm = HighsMatrix.from_pyomo(model, relax=True, options=tight, time_limit=left())
    except (InfeasibleModel, ValueError):
        return None
    if deadline is not None:
        if time.perf_counter() >= deadline:
            return None
        hm.set_time_limit(left())
    big = deadline is not None and hm.num_col + int(hm.lp.num_row_) > ISOLATE_ABOVE
    r = hm.solve(isolate=big)
    if r.y is None:
        return None
    y = r.y
    best = lagrangian_bound(hm, y)
    lp = hm.lp
    A = None
    for _ in range(rounds):
        if target is None or best >= target - CERT_REL * abs(target):
            break
        if deadline is not None and time.perf_counter() >= deadline:
            break
        if A is None:
            import scipy.sparse as sp

            A = sp.csc_matrix((lp.a_matrix_.value_, lp.a_matrix_.index_, lp.a_matrix_.start_),
                              shape=(lp.num_row_, lp.num_col_))
            c = np.asarray(lp.col_cost_) / hm.scale
        d = c - A.T @ y
        corr = HighsMatrix.from_arrays(d, A, lp.row_lower_, lp.row_upper_, lp.col_lower_, lp.col_upper_, options=tight,
                                       time_limit=left())
        r2 = corr.solve(isolate=big)
        if r2.y is None:
            break
        y = y + r2.y
        best = max(best, lagrangian_bound(hm, y))
    return best if math.isfinite(best) else None


def _certify(instance: SplitInstance, model, assignment, status: str, bound, time_limit: float | None = None):
    """(status, bound, info) after checking the solver's answer against the exact certificate
    (computed within ``time_limit`` seconds; without a certificate the solver's status stands, still
    subject to :func:`splitopt.families.honest_status`)."""
    obj, breakdown = evaluate(instance, assignment)
    cert = certified_bound(model, target=obj, time_limit=time_limit)
    info = {"certified_bound": cert, "solver_status": status, "solver_bound": bound}
    if cert is None:
        return status, bound, info
    tol = CERT_REL * max(abs(obj), abs(cert)) + 1e-12 * cost_scale(obj, breakdown)
    if status in ("optimal", NUMERICAL) and cert >= obj - tol:
        return "optimal", min(cert, obj), info  # the certificate proves it, whatever the solver could tell
    return (NUMERICAL if status == "optimal" else status), cert, info


def trivial_bound(instance: SplitInstance) -> float:
    """``sum_v min(dev_v, srv_v)``, rounded down: every split pays each layer on one side and
    tensors cost >= 0, so no split costs less (a proof that takes no solver, for runs stopped early)."""
    import numpy as np

    c = instance.costs
    b = math.fsum(np.minimum(c.dev, c.srv).tolist())
    return math.nextafter(b, -math.inf) if b > 0 else b


def start_split(instance: SplitInstance) -> tuple[list[str], float]:
    """The better of the two trivial feasible splits (server-only, device-only): the incumbent a
    run stopped before the solver found anything returns (by the evaluator)."""
    best = None
    for mask in (instance.min_device_mask, instance.max_device_mask):
        names = instance.names_of(mask)
        val = evaluate(instance, names)[0]
        if best is None or val < best[1]:
            best = (names, val)
    return best


def _solve_formulation(instance: SplitInstance, *, relax: bool, solver: str = "highs",
                       time_limit: float | None = None, mip_gap: float | None = None, tee: bool = False):
    """Build, solve, certify, each phase within what is left of ``time_limit`` (see the module
    docstring): HiGHS on the arrays (:func:`_solve_arrays`), other solvers on the Pyomo model."""
    import time

    from splitopt.solvers import exact
    from splitopt.solvers.deadline import Deadline

    dl = Deadline(time_limit)
    t0 = time.perf_counter()
    # the answer of a run stopped early, ready before anything can be stopped (O(L))
    start = start_split(instance)[0] if time_limit is not None else None
    if solver == "highs":
        return _solve_arrays(instance, relax=relax, dl=dl, mip_gap=mip_gap, tee=tee, start=start)

    def stopped(why: str) -> AlgoResult:
        return _stopped(instance, start, why, solver)

    try:
        model = build_milp(instance, deadline=dl)
    except SolverFailed as exc:
        if exc.status != "time_limit":
            raise
        return stopped("while building the model")
    build_s = time.perf_counter() - t0
    # Pyomo's compilation of the model for HiGHS cannot be stopped and takes about half as long as
    # the build (100,000-layer DAG: build 17.8 s, compile 7.6 s; 20,000-layer chain: 1.0 s each): not started
    # without that much time left
    if dl.over() or (time_limit is not None and dl.remaining() < COMPILE_SHARE * build_s):
        return stopped("after building the model (no time left to compile it)")
    # the solver stops early enough to leave time for loading its values and scoring them (about a
    # fifth of the build: 100,000-layer chain, build 5 s, values and evaluation 1 s)
    solver_limit = None if time_limit is None else max(dl.remaining() - 0.2 * build_s, 1e-3)
    res = exact.solve(model, solver, time_limit=solver_limit, mip_gap=mip_gap, relax=relax, tee=tee)
    if not res.has_solution:
        if res.status == "time_limit" or dl.over():
            return stopped(f"{solver}: {res.status}" + (f" ({res.message})" if res.message else ""))
        raise SolverFailed(f"solver: {solver} returned no solution (status {res.status})"
                           + (f": {res.message}" if res.message else ""), status=res.status)
    info = {"solver": solver, "termination": res.termination, "model_objective": res.objective,
            "solver_seconds": res.seconds, "build_seconds": build_s}
    if relax:
        import pyomo.environ as pyo

        frac = max((min(pyo.value(model.x[v]), 1 - pyo.value(model.x[v])) for v in model.L), default=0.0)
        info["max_fractionality"] = float(frac)
    assignment = assignment_from_model(instance, model)
    # the time limit covers the whole algorithm: the certificate gets what the solve left of it
    left = dl.remaining()
    if left is not None and (dl.over() or left < build_s):
        left = 0.0
    status, bound, cert = _certify(instance, model, assignment, res.status, res.bound, time_limit=left)
    return AlgoResult(assignment, status=status, bound=bound, info={**info, **cert})


def _stopped(instance: SplitInstance, start, why: str, solver: str = "highs") -> AlgoResult:
    names = start if start is not None else start_split(instance)[0]
    return AlgoResult(names, status="time_limit", bound=trivial_bound(instance),
                      info={"solver": solver, "stopped": why, "incumbent": "trivial split"})


def _solve_arrays(instance: SplitInstance, *, relax: bool, dl, mip_gap, tee: bool, start) -> AlgoResult:
    """HiGHS on :func:`~splitopt.models.split.milp_arrays` (the same rows and columns as
    :func:`build_milp`, built in milliseconds), in a child process killed at the limit for large
    models (:mod:`splitopt.solvers.exact.highs_isolated`), then the exact certificate on the same
    arrays with what is left."""
    import time

    from splitopt.solvers.exact.highs import TRUSTED_RANGE
    from splitopt.solvers.exact.highs_isolated import ISOLATE_ABOVE

    t0 = time.perf_counter()
    arr = milp_arrays(instance)
    hm = arr.matrix(relax=relax, time_limit=dl.remaining(), mip_gap=mip_gap, tee=tee)
    build_s = time.perf_counter() - t0
    if dl.over():
        return _stopped(instance, start, "after building the model")
    # leave time for scoring the answer: about a fifth of the build
    if dl.limit is not None:
        hm.set_time_limit(max(dl.remaining() - 0.2 * build_s, 1e-3))
    big = dl.limit is not None and hm.num_col + int(hm.lp.num_row_) > ISOLATE_ABOVE
    r = hm.solve(isolate=big)
    status = r.status
    if r.x is None:
        if status == "time_limit" or dl.over():
            return _stopped(instance, start, f"highs: {status}" + (f" ({r.message})" if r.message else ""))
        raise SolverFailed(f"solver: highs returned no solution (status {status})"
                           + (f": {r.message}" if r.message else ""), status=status)
    if status == "optimal" and hm.is_mip and hm.coefficient_range > TRUSTED_RANGE:
        status = NUMERICAL  # HiGHS alone is not trusted there; the certificate decides
    info = {"solver": "highs", "termination": r.termination, "model_objective": r.objective,
            "solver_seconds": time.perf_counter() - t0 - build_s, "build_seconds": build_s, "model": "arrays"}
    x = np.asarray(r.x)
    if relax:
        info["max_fractionality"] = float(np.max(np.minimum(x[:arr.n_layers], 1 - x[:arr.n_layers]), initial=0.0))
    assignment = arr.assignment(instance, x)
    # the certificate starts by building the relaxed matrix (as long as the build, not stoppable):
    # not started without 1.5 times that left (100,000 layers: 14.3 s at a 10 s limit before)
    left = None if dl.limit is None else (0.0 if dl.over() else dl.remaining())
    if left is not None and left < 1.5 * build_s:
        left = 0.0
    status, bound, cert = _certify(instance, arr, assignment, status, r.bound, time_limit=left)
    return AlgoResult(assignment, status=status, bound=bound, info={**info, **cert})


def solve_milp(instance: SplitInstance, solver: str = "highs", time_limit: float | None = None,
               mip_gap: float | None = None, tee: bool = False) -> AlgoResult:
    """Solve :func:`build_milp` with an exact solver (default HiGHS)."""
    return _solve_formulation(instance, relax=False, solver=solver, time_limit=time_limit, mip_gap=mip_gap,
                              tee=tee)


def solve_lp(instance: SplitInstance, solver: str = "highs", time_limit: float | None = None,
             tee: bool = False) -> AlgoResult:
    """Solve the LP relaxation of :func:`build_milp` (integral by total unimodularity, digest 002
    §8.3); ``info["max_fractionality"]`` reports how far the LP point is from integral."""
    return _solve_formulation(instance, relax=True, solver=solver, time_limit=time_limit, tee=tee)


