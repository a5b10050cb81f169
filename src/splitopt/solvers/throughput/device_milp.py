"""The device-model MILP (:func:`splitopt.models.throughput_device.build_milp`) solved by an exact
solver, and its LP relaxation as a bound.

The model is capped by the incumbent of the linearised DP (``T <= incumbent``): HiGHS then prunes
with it from the start; if the solver stops without a better solution, the incumbent is returned
with the solver's proven bound (status ``time_limit`` unless the bound closes the gap)."""

from __future__ import annotations

import math

from splitopt.errors import InfeasibleSolution, InstanceError, SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.throughput_device import DeviceInstance
from splitopt.models.throughput_device import assignment_from_milp, build_milp, evaluate, work_bound


def _incumbent(instance: DeviceInstance):
    from splitopt.solvers.throughput.device_baselines import linearised_dp

    try:
        a = linearised_dp(instance).assignment
        return a, evaluate(instance, a)[0]
    except (InstanceError, InfeasibleSolution):
        return None, math.inf


def solve(instance: DeviceInstance, solver: str = "highs", time_limit: float | None = None,
          mip_gap: float | None = None, symmetry: bool = True, use_incumbent: bool = True) -> AlgoResult:
    from splitopt.solvers import exact

    inc, inc_val = _incumbent(instance) if use_incumbent else (None, math.inf)
    model = build_milp(instance, symmetry=symmetry, incumbent=inc_val if inc is not None else None)
    res = exact.solve(model, solver, time_limit=time_limit, mip_gap=mip_gap)
    unit = model._unit
    bound = None if res.bound is None else res.bound * unit
    info = {"solver": solver, "termination": res.termination, "solver_seconds": res.seconds,
            "incumbent": inc_val if inc is not None else None, "unit": unit}
    cand = []
    if res.has_solution:
        a = assignment_from_milp(instance, model)
        try:
            cand.append((evaluate(instance, a)[0], a, "milp"))
        except InfeasibleSolution:
            if res.status == "optimal":
                raise
    if inc is not None:
        cand.append((inc_val, inc, "incumbent"))
    if not cand:
        if res.status == "infeasible":
            raise InfeasibleSolution("the MILP is infeasible: no placement satisfies memory, support and contiguity")
        raise SolverFailed(f"solver: {solver} returned no solution of the device MILP (status {res.status})"
                           + (f": {res.message}" if res.message else ""), status=res.status)
    val, a, src = min(cand, key=lambda c: c[0])
    info["solution_from"] = src
    status = res.status
    if status == "infeasible" and inc is not None:
        # nothing strictly below the incumbent's cap: the incumbent is optimal
        status, bound = "optimal", val
    if bound is not None:
        bound = min(bound, val)
    if status == "optimal" and bound is None:
        bound = val
    return AlgoResult(a, status=status, bound=bound, info=info)


def relaxation(instance: DeviceInstance, solver: str = "highs", time_limit: float | None = None) -> AlgoResult:
    """The LP relaxation's value as a lower bound (``bound``); the assignment is the linearised DP's."""
    from splitopt.solvers import exact
    from splitopt.solvers.throughput.device_baselines import linearised_dp

    model = build_milp(instance, symmetry=True)
    res = exact.solve(model, solver, time_limit=time_limit, relax=True)
    if not res.has_solution:
        raise SolverFailed(f"solver: {solver} returned no solution of the device LP (status {res.status})",
                           status=res.status)
    bound = max(res.bound * model._unit, 0.0) if res.bound is not None else work_bound(instance)
    return AlgoResult(linearised_dp(instance).assignment, status="ok", bound=bound, info={"lp": True})


__all__ = ["solve", "relaxation"]
