"""The ``split`` MILP and its LP relaxation solved by an exact solver (``milp``, ``lp``).

The formulation is :func:`splitopt.models.split.build_milp` (digest 002 §8.2, generalised to
training costs, digest 000 §2.4). Its matrix is totally unimodular (digest 002 §8.3), so the LP
relaxation has an integral optimum equal to the MILP's; ``lp`` reports how far its point is from
integral in ``info["max_fractionality"]``.
"""

from __future__ import annotations

from splitopt.errors import SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.split import SplitInstance
from splitopt.models.split import assignment_from_model, build_milp


def _solve_formulation(instance: SplitInstance, *, relax: bool, solver: str = "highs",
                       time_limit: float | None = None, mip_gap: float | None = None, tee: bool = False):
    from splitopt.solvers import exact

    model = build_milp(instance)
    res = exact.solve(model, solver, time_limit=time_limit, mip_gap=mip_gap, relax=relax, tee=tee)
    if not res.has_solution:
        raise SolverFailed(f"solver: {solver} returned no solution (status {res.status})"
                           + (f": {res.message}" if res.message else ""), status=res.status)
    info = {"solver": solver, "termination": res.termination, "model_objective": res.objective,
            "solver_seconds": res.seconds}
    if relax:
        import pyomo.environ as pyo

        frac = max((min(pyo.value(model.x[v]), 1 - pyo.value(model.x[v])) for v in model.L), default=0.0)
        info["max_fractionality"] = float(frac)
    return AlgoResult(assignment_from_model(instance, model), status=res.status, bound=res.bound, info=info)


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


