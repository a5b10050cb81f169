"""The throughput formulations solved by an exact solver: the MINLP (SCIP), the McCormick and RLT
MILPs (HiGHS) and their LP relaxations as bounds (:mod:`splitopt.models.throughput`)."""

from __future__ import annotations

from splitopt.errors import InfeasibleSolution, SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.throughput import ThroughputInstance
from splitopt.models.throughput import assignment_from_model, build_model, evaluate, single_node_periods


def solve(instance: ThroughputInstance, formulation: str = "rlt", solver: str | None = None,
          time_limit: float | None = None, mip_gap: float | None = None, symmetry: bool = True) -> AlgoResult:
    """Solve a formulation to optimality (``solver`` default: SCIP for the MINLP, HiGHS otherwise)."""
    from splitopt.solvers import exact

    solver = solver or ("scip" if formulation == "minlp" else "highs")
    model = build_model(instance, formulation, symmetry=symmetry)
    res = exact.solve(model, solver, time_limit=time_limit, mip_gap=mip_gap)
    if not res.has_solution:
        raise SolverFailed(f"solver: {solver} returned no solution of the {formulation} model (status {res.status})"
                           + (f": {res.message}" if res.message else ""), status=res.status)
    unit = model._unit
    return AlgoResult(assignment_from_model(instance, model), status=res.status,
                      bound=None if res.bound is None else res.bound * unit,
                      info={"formulation": formulation, "solver": solver, "termination": res.termination,
                            "solver_seconds": res.seconds, "model_objective": res.objective * unit})


def relaxation(instance: ThroughputInstance, formulation: str = "rlt", solver: str = "highs",
               time_limit: float | None = None) -> AlgoResult:
    """The LP relaxation's value as a lower bound on the period (``bound``); the assignment is the LP
    point rounded to the largest ``x`` per layer when that is feasible, else the best single node."""
    from splitopt.solvers import exact

    model = build_model(instance, formulation, symmetry=True)
    res = exact.solve(model, solver, time_limit=time_limit, relax=True)
    if not res.has_solution:
        raise SolverFailed(f"solver: {solver} returned no solution of the {formulation} LP (status {res.status})",
                           status=res.status)
    bound = res.bound * model._unit if res.bound is not None else None
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
