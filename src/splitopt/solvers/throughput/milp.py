"""The throughput formulations solved by an exact solver: the MINLP (SCIP), the McCormick and RLT
MILPs (HiGHS) and their LP relaxations as bounds (:mod:`splitopt.models.throughput`, digest §6.2-§6.4).

Time limits (issue 21 §1): one :class:`~splitopt.solvers.deadline.Deadline` covers the model build
and the solve; the solver gets the time left. When the solver stops without a solution the answer
is the best single node (the paper's unpartitioned baseline, digest §4.1) with the solver's bound,
status ``time_limit``.

Tolerances: HiGHS's default integrality tolerance (1e-6) let the RLT model call a placement 1.4e-6
(relative) above the optimum optimal, with its bound above the optimum too (issue 21,
``throughput_rlt_wrong_optimal.json``: layer FLOP over 0.005..4e4): a binary 1e-6 from 0 times a
coefficient of order one moves the period by that much. The MILPs run with
``mip_feasibility_tolerance = 1e-9`` (as the pipeline MILPs do), which leaves errors at the 1e-9
relative level the evaluator comparison allows.
"""

from __future__ import annotations

import time

from splitopt.errors import InfeasibleSolution, SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.throughput import ThroughputInstance
from splitopt.models.throughput import (
    BuildStopped,
    assignment_from_model,
    build_model,
    evaluate,
    single_node_periods,
)
from splitopt.solvers.deadline import MIN_REMAINING, Deadline

#: HiGHS options of the throughput MILPs (see the module docstring)
HIGHS_OPTIONS = {"mip_feasibility_tolerance": 1e-9}


def _options(solver: str) -> dict | None:
    return dict(HIGHS_OPTIONS) if solver == "highs" else None


def _build(instance, formulation, deadline: Deadline, **kw):
    """The model, and the time the solver may take: what is left after the build, less the build
    time again (the front door converts the model before the solver's own clock starts). Raises
    :class:`BuildStopped` when the limit passes during the build."""
    t0 = time.perf_counter()
    model = build_model(instance, formulation, deadline=deadline if deadline.end is not None else None, **kw)
    if deadline.over():
        raise BuildStopped(formulation)
    left = deadline.remaining()
    return model, None if left is None else max(left - (time.perf_counter() - t0), MIN_REMAINING)




def _no_model(instance: ThroughputInstance, formulation: str, deadline: Deadline) -> AlgoResult:
    from splitopt.errors import InstanceError
    from splitopt.solvers.throughput.baselines import best_single_node

    try:
        incumbent = best_single_node(instance)
    except InstanceError:  # no single node holds every layer: nothing to return
        raise deadline.no_answer(f" (the limit passed while building the {formulation} model)") from None
    return AlgoResult(incumbent, status="time_limit", bound=None,
                      info={"formulation": formulation, "stopped": "model build",
                            "incumbent": "best single node (the limit passed while building the model)"})


def solve(instance: ThroughputInstance, formulation: str = "rlt", solver: str | None = None,
          time_limit: float | None = None, mip_gap: float | None = None, symmetry: bool = True,
          incumbent: float | None = None) -> AlgoResult:
    """Solve a formulation to optimality (``solver`` default: SCIP for the MINLP, HiGHS otherwise).
    ``incumbent`` (a period in seconds, from another method) adds the fixings of digest §6.5: the
    model then holds every placement below it (and maybe others), so "infeasible" proves that
    nothing beats the incumbent (raised as :class:`SolverFailed` with status ``infeasible``)."""
    from splitopt.solvers import exact

    deadline = Deadline(time_limit)
    solver = solver or ("scip" if formulation == "minlp" else "highs")
    try:
        model, limit = _build(instance, formulation, deadline, symmetry=symmetry, incumbent=incumbent)
    except BuildStopped:  # the limit passed while building: the best single node, no bound
        return _no_model(instance, formulation, deadline)
    res = exact.solve(model, solver, time_limit=limit, mip_gap=mip_gap, options=_options(solver))
    unit = model._unit
    bound = None if res.bound is None else res.bound * unit
    info = {"formulation": formulation, "solver": solver, "termination": res.termination,
            "solver_seconds": res.seconds}
    if not res.has_solution:
        if res.status == "time_limit":
            from splitopt.errors import InstanceError
            from splitopt.solvers.throughput.baselines import best_single_node

            try:
                incumbent = best_single_node(instance)
            except InstanceError:  # no single node holds every layer: nothing to return
                raise deadline.no_answer() from None
            return AlgoResult(incumbent, status="time_limit", bound=bound,
                              info={**info, "incumbent": "best single node (the solver found none)"})
        if res.status == "infeasible" and incumbent is None:
            # proven: said of the instance, as brute force and bnb say it (with an incumbent it
            # proves only that nothing beats it: SolverFailed below, which auto reads so)
            from splitopt.errors import NoFeasibleSolution

            raise NoFeasibleSolution(f"no feasible placement: the {formulation} model is infeasible (pins, memory, cap "
                                     "and contiguity conflict)")
        raise SolverFailed(f"solver: {solver} returned no solution of the {formulation} model (status {res.status})"
                           + (f": {res.message}" if res.message else ""), status=res.status)
    return AlgoResult(assignment_from_model(instance, model), status=res.status, bound=bound,
                      info={**info, "model_objective": res.objective * unit})


def relaxation(instance: ThroughputInstance, formulation: str = "rlt", solver: str = "highs",
               time_limit: float | None = None) -> AlgoResult:
    """The LP relaxation's value as a lower bound on the period (``bound``); the assignment is the LP
    point rounded to the largest ``x`` per layer when that is feasible, else the best single node."""
    from splitopt.solvers import exact

    deadline = Deadline(time_limit)
    try:
        model, limit = _build(instance, formulation, deadline, symmetry=True)
    except BuildStopped:
        return _no_model(instance, formulation, deadline)
    res = exact.solve(model, solver, time_limit=limit, relax=True)
    if not res.has_solution:
        raise SolverFailed(f"solver: {solver} returned no solution of the {formulation} LP (status {res.status})",
                           status=res.status)
    bound = res.bound * model._unit if res.bound is not None and res.status == "optimal" else None
    rounded = assignment_from_model(instance, model)
    try:
        evaluate(instance, rounded)
        assignment = rounded
    except InfeasibleSolution:
        periods = single_node_periods(instance)
        a = min(range(instance.n_nodes), key=periods.__getitem__)
        assignment = [instance.nodes[a]] * instance.n_layers
    return AlgoResult(assignment, status="ok", bound=bound, info={"formulation": formulation, "lp": True})


def solve_minlp(instance, **kw):
    return solve(instance, "minlp", **kw)


def solve_mccormick(instance, **kw):
    return solve(instance, "mccormick", **kw)


def solve_rlt(instance, **kw):
    return solve(instance, "rlt", **kw)


def lp_mccormick(instance, **kw):
    return relaxation(instance, "mccormick", **kw)


def lp_rlt(instance, **kw):
    return relaxation(instance, "rlt", **kw)
