"""Solvers reached through Pyomo: SCIP (``solver="scip"``, Pyomo's ``scip_direct`` on pyscipopt, no
executable) and any other name Pyomo's ``SolverFactory`` knows (new ``pyomo.contrib.solver``
interfaces first, e.g. ``gurobi_direct``, ``ipopt``; then the legacy ones, e.g. ``appsi_highs``,
``glpk``, ``cplex``, ``gurobi``) when installed.

SCIP solves linear and nonlinear (MINLP, nonconvex bilinear) models to global optimality; its bound
is ``getDualbound()``. With ``relax=True`` the model is cloned, integrality dropped on the clone, and
the relaxed values are loaded back into the original model's variables.
"""

from __future__ import annotations

import os
from typing import Any

from splitopt.errors import SolverUnavailable
from splitopt.solvers.exact import base


def _make_pyomo_solver(name: str):
    """Return ``(kind, solver)`` with kind 'new' (pyomo.contrib.solver) or 'legacy'."""
    import pyomo.environ as pyo
    from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory

    if name in NewFactory:
        try:
            s = NewFactory(name)
            if s.available():
                return ("new", s)
        except Exception:
            pass
    s = None
    if name in pyo.SolverFactory or os.sep in name:  # unknown names make Pyomo log a traceback
        try:
            s = pyo.SolverFactory(name)
        except Exception:
            s = None
    if s is not None:
        try:
            ok = s.available(exception_flag=False)
        except Exception:
            ok = False
        if ok:
            return ("legacy", s)
    raise SolverUnavailable(
        f"solver {name!r} is not available: built-in names are "
        f"{', '.join(f'{k!r} (pip install {v})' for k, v in _builtin_packages().items())}; other names must "
        "be a solver Pyomo's SolverFactory knows and finds installed (e.g. 'appsi_highs', "
        "'glpk' with the glpsol executable, 'gurobi_direct' with pip install gurobipy)")


def _builtin_packages() -> dict[str, str]:
    from splitopt.solvers.exact import SOLVERS

    return SOLVERS


_NEW_STATUS = {
    "convergenceCriteriaSatisfied": "optimal",
    "maxTimeLimit": "time_limit",
    "iterationLimit": "feasible",
    "objectiveLimit": "feasible",
    "minStepLength": "feasible",
    "unbounded": "unbounded",
    "provenInfeasible": "infeasible",
    "locallyInfeasible": "infeasible",
    "infeasibleOrUnbounded": "infeasible_or_unbounded",
    "error": "error",
    "interrupted": "feasible",
    "licensingProblems": "error",
    "emptyModel": "optimal",
    "unknown": "unknown",
}

_LEGACY_TIME_OPTION = {"glpk": "tmlim", "cbc": "sec", "cplex": "timelimit", "gurobi": "TimeLimit",
                       "cplex_direct": "timelimit", "gurobi_direct": "TimeLimit",
                       "gurobi_persistent": "TimeLimit", "xpress": "maxtime"}
_LEGACY_GAP_OPTION = {"glpk": "mipgap", "cbc": "ratio", "cplex": "mipgap", "gurobi": "MIPGap",
                      "cplex_direct": "mip_tolerances_mipgap", "gurobi_direct": "MIPGap",
                      "gurobi_persistent": "MIPGap", "xpress": "miprelstop"}


def solve_pyomo(model, name, made, *, time_limit, mip_gap, tee, options, relax_ints) -> dict:
    import pyomo.environ as pyo

    kind, solver = made
    obj = base.active_objective(model)
    if kind == "new":
        kw: dict[str, Any] = dict(load_solutions=False, raise_exception_on_nonoptimal_result=False,
                                  tee=bool(tee))
        if time_limit is not None:
            kw["time_limit"] = float(time_limit)
        if mip_gap is not None:
            kw["rel_gap"] = float(mip_gap)
        if options:
            kw["solver_options"] = dict(options)
        try:
            res = solver.solve(model, **kw)
        except Exception as exc:
            return dict(status="error", termination=type(exc).__name__,
                        message=f"{name}: {exc}")
        tc = res.termination_condition.name
        term = tc
        raw = getattr(getattr(solver, "_solver_model", None), "getStatus", None)
        if callable(raw):
            try:
                term = f"{raw()} ({tc})"
            except Exception:
                pass
        status = _NEW_STATUS.get(tc, "unknown")
        has_sol = res.solution_status.name in ("feasible", "optimal")
        objective = bound = None
        if has_sol:
            try:
                res.solution_loader.load_vars()
            except Exception as exc:
                return dict(status="error", termination=term, message=f"loading failed: {exc}")
            objective = base.finite(res.incumbent_objective)
            if objective is None:
                objective = float(pyo.value(obj))
        elif status in ("feasible",):
            status = "unknown"
        if status in ("infeasible", "unbounded", "infeasible_or_unbounded", "error"):
            return dict(status=status, termination=term)
        bound = base.finite(res.objective_bound)
        return dict(status=status, termination=term, objective=objective, bound=bound)

    # legacy interface
    from pyomo.opt import TerminationCondition as TC

    opts = dict(options or {})
    stem = name.split("_")[0] if name not in _LEGACY_TIME_OPTION else name
    is_appsi = name.startswith("appsi_")
    if is_appsi:
        if time_limit is not None:
            solver.config.time_limit = float(time_limit)
        if mip_gap is not None:
            solver.config.mip_gap = float(mip_gap)
    else:
        if time_limit is not None:
            opts.setdefault(_LEGACY_TIME_OPTION.get(name, _LEGACY_TIME_OPTION.get(stem, "timelimit")),
                            float(time_limit))
        if mip_gap is not None:
            opts.setdefault(_LEGACY_GAP_OPTION.get(name, _LEGACY_GAP_OPTION.get(stem, "mipgap")),
                            float(mip_gap))
    try:
        if is_appsi:
            for k, v in opts.items():
                solver.options[k] = v
            res = solver.solve(model, tee=bool(tee), load_solutions=False)
        else:
            res = solver.solve(model, tee=bool(tee), load_solutions=False, options=opts)
    except Exception as exc:
        return dict(status="error", termination=type(exc).__name__, message=f"{name}: {exc}")
    tc = res.solver.termination_condition
    term = str(tc)
    status = {
        TC.optimal: "optimal", TC.globallyOptimal: "optimal", TC.locallyOptimal: "optimal",
        TC.maxTimeLimit: "time_limit", TC.infeasible: "infeasible", TC.unbounded: "unbounded",
        TC.infeasibleOrUnbounded: "infeasible_or_unbounded", TC.maxIterations: "feasible",
        TC.feasible: "feasible", TC.error: "error", TC.solverFailure: "error",
    }.get(tc, "unknown")
    if status in ("infeasible", "unbounded", "infeasible_or_unbounded", "error"):
        return dict(status=status, termination=term)
    objective = bound = None
    if len(res.solution) > 0:
        model.solutions.load_from(res)
        objective = float(pyo.value(obj))
    elif status == "feasible":
        status = "unknown"
    lo, hi = base.finite(res.problem.lower_bound), base.finite(res.problem.upper_bound)
    bound = lo if obj.is_minimizing() else hi
    if status == "optimal" and bound is None:
        bound = objective if not base.is_mip(model, relax_ints) else None
    return dict(status=status, termination=term, objective=objective, bound=bound)


def relaxed_clone(model):
    """Clone ``model``, pair its variables with the clone's, then drop integrality on the clone."""
    import pyomo.environ as pyo

    clone = model.clone()
    pairs = list(zip(model.component_data_objects(pyo.Var, descend_into=True),
                     clone.component_data_objects(pyo.Var, descend_into=True)))
    assert all(a.name == b.name for a, b in pairs)
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(clone)
    return clone, pairs


class PyomoBackend(base.Backend):
    """Any solver Pyomo's factory knows, by name (``pyomo_name``)."""

    features = frozenset({"lp", "milp", "time_limit", "mip_gap"})

    def __init__(self, name: str, pyomo_name: str | None = None, package: str = ""):
        self.name = name
        self.pyomo_name = pyomo_name or name
        self.package = package

    def available(self) -> bool:
        if self.package and not base.has_module(self.package):
            return False
        try:
            return _make_pyomo_solver(self.pyomo_name) is not None
        except SolverUnavailable:
            return False

    def require(self) -> None:
        if self.package:
            super().require()
        else:
            _make_pyomo_solver(self.pyomo_name)

    def solve_model(self, model, *, time_limit, mip_gap, relax, tee, options) -> dict:
        import pyomo.environ as pyo

        if self.package and not base.has_module(self.package):
            super().require()
        made = _make_pyomo_solver(self.pyomo_name)  # raises SolverUnavailable
        obj = base.active_objective(model)
        target, pairs = relaxed_clone(model) if relax else (model, [])
        out = solve_pyomo(target, self.pyomo_name, made, relax_ints=relax, time_limit=time_limit,
                          mip_gap=mip_gap, tee=tee, options=options)
        if out.get("objective") is not None:
            for orig, rel in pairs:
                if rel.value is not None and not orig.fixed:
                    orig.set_value(rel.value, skip_validation=True)
            if not relax:
                base.round_integers(model.component_data_objects(pyo.Var, descend_into=True))
            try:  # the objective at the loaded (integer-rounded) values
                out["objective"] = float(pyo.value(obj))
            except (ValueError, TypeError):
                pass
        return out


class ScipBackend(PyomoBackend):
    """``solver="scip"``: linear and nonlinear models, global optimality (spatial branch and bound)."""

    features = frozenset({"lp", "milp", "minlp", "nonconvex", "time_limit", "mip_gap"})

    def __init__(self):
        super().__init__("scip", "scip_direct", "pyscipopt")

    def available(self) -> bool:
        return base.has_module(self.package)

    def solve_model(self, model, *, time_limit, mip_gap, relax, tee, options) -> dict:
        """As :meth:`PyomoBackend.solve_model`, with SCIP silent unless ``tee``: Pyomo's ``scip_direct``
        reads SCIP's log from a pipe in a thread that needs the GIL, while ``optimize()`` writes it
        holding the GIL; a log larger than the pipe's buffer deadlocks the process, time limit and
        all (Pyomo #3084, PySCIPOpt #430; a 7-layer MINLP hung on 1 run in 67). With
        ``display/verblevel = 0`` SCIP writes nothing, so nothing can fill the pipe. ``tee=True``
        keeps the log (and that risk) for interactive use."""
        if not tee:
            options = {"display/verblevel": 0, **dict(options or {})}
        return super().solve_model(model, time_limit=time_limit, mip_gap=mip_gap, relax=relax, tee=tee,
                                   options=options)


__all__ = ["PyomoBackend", "ScipBackend", "solve_pyomo", "relaxed_clone"]
