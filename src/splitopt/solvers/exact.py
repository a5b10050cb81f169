"""The exact-solver front door: one call, :func:`solve`, for HiGHS, SCIP, CBC and any solver Pyomo knows.

Every formulation in :mod:`splitopt.models` is a Pyomo model with a single active ``Objective``.
:func:`solve` hands it to a solver and returns an :class:`ExactResult` with a normalised status,
the incumbent objective, the best proven (dual) bound, the relative gap, wall-clock seconds and the
variable values by Pyomo name (``"x[conv1]"``). When a solution exists its values are also loaded
into the model's variables, for every solver, so callers can read ``pyo.value(m.x[i])``.

Solvers (see :data:`SOLVERS`):

``"highs"`` (default)
    Linear models (LP/MILP) only. The model is compiled to matrices with Pyomo's
    ``LinearStandardFormCompiler`` (``mixed_form=True``) and passed to ``highspy`` as one
    ``HighsLp``. Measured with ``benchmarks/bench_exact_highs.py`` on a 5,000-variable,
    2,500-row LP (warm interpreter, shared 2-core machine): 0.18-0.23 s per call in total, of
    which HiGHS itself takes about 0.08 s and the matrix compilation about 0.03 s, against
    0.55-0.77 s for Pyomo's ``appsi_highs`` and 0.46-0.65 s for its new persistent ``highs``
    interface (both add the model constraint by constraint). Pyomo's own interfaces stay
    reachable as ``solver="appsi_highs"``. Bound = ``mip_dual_bound`` for MIPs and
    the objective for an optimal LP.
``"scip"``
    Pyomo's ``scip_direct`` (pyscipopt, no executable): linear and nonlinear (MINLP, nonconvex
    bilinear) models, solved to global optimality. Bound = SCIP ``getDualbound()``.
``"cbc"``
    An independent cross-check path that shares no code with the HiGHS path: the model is written
    as free MPS by Pyomo's MPS writer (symbolic labels, integer markers), read back with
    ``pulp.LpProblem.fromMPS``, solved by ``PULP_CBC_CMD`` and mapped back to Pyomo variables by
    name through the writer's symbol map. Two defects of PuLP 3.3's MPS reader are worked around:
    it rejects the ``LI``/``UI`` integer bounds Pyomo writes, and it ignores the integrality implied
    by ``BV`` bounds; bounds and integrality are therefore set on the PuLP variables from the Pyomo
    variables after reading. Bound and gap are read from CBC's log when it prints them.
any other name
    Passed to Pyomo's ``SolverFactory`` (new ``pyomo.contrib.solver`` interfaces first, e.g.
    ``gurobi_direct``, ``ipopt``; then the legacy ones, e.g. ``appsi_highs``, ``glpk``,
    ``cplex``, ``gurobi``) when installed.

Statuses: ``optimal`` (proven, within ``mip_gap`` if one was given), ``feasible`` (a solution but
stopped for another reason than time), ``time_limit`` (stopped on time; ``objective``/``bound`` set
when an incumbent exists), ``infeasible``, ``unbounded``, ``infeasible_or_unbounded`` (the solver
could not tell), ``error`` (the model does not suit the solver, or the solver failed; see
``message``), ``unknown``. Infeasible and unbounded models never raise.

``relax=True`` solves the LP relaxation: integrality is dropped (on a clone for the Pyomo and CBC
paths; the HiGHS path simply does not pass integrality) and the relaxed values are loaded back into
the original model's variables. Integer variables of a non-relaxed solve are rounded to the nearest
integer when within 1e-6 of it, so that ``pyo.value(m.x[i]) == 1`` holds for a chosen binary.

The gap is ``|objective - bound| / max(|objective|, 1e-10)`` (HiGHS's definition), 0 when they are
equal and ``None`` when either is missing.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from splitopt.errors import InstanceError, SolverUnavailable

SOLVERS: dict[str, str] = {"highs": "highspy", "scip": "pyscipopt", "cbc": "pulp"}
"""The built-in solver names and the pip package each one needs."""

_INT_TOL = 1e-6
_HIGHS_DEFAULT_GAP = 1e-9  # HiGHS's own default mip_rel_gap is 1e-4: too loose for a reference
# HiGHS also stops at an *absolute* gap of 1e-6 by default. splitopt's objectives are in seconds and
# can be ~1e-2 in total, so that default let HiGHS return a split with an unneeded 6.4e-8 s upload
# (PipeDream AlexNet, inference): 1.4e-6 relative. A reference solve must close the gap.
_HIGHS_DEFAULT_ABS_GAP = 1e-12


@dataclass
class ExactResult:
    """Outcome of one exact solve (see the module docstring for the status vocabulary)."""

    solver: str
    status: str
    termination: str
    objective: float | None
    bound: float | None
    gap: float | None
    seconds: float
    values: dict[str, float] = field(default_factory=dict)
    message: str = ""

    @property
    def has_solution(self) -> bool:
        """True when a primal solution was found (and loaded into the model)."""
        return self.objective is not None

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"


# ----------------------------------------------------------------------------------------------
# availability


def _has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _cbc_command(**kw):
    """PuLP's CBC: the bundled ``PULP_CBC_CMD`` (deprecated in PuLP 3.3, gone in 4.0), else
    ``COIN_CMD`` (a ``cbc`` executable, e.g. from ``pip install pulp[cbc]``); None if neither."""
    import warnings

    import pulp

    for cls_name in ("PULP_CBC_CMD", "COIN_CMD"):
        cls = getattr(pulp, cls_name, None)
        if cls is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                cmd = cls(**kw)
                if cmd.available():
                    return cmd
            except Exception:  # pragma: no cover - broken installation
                continue
    return None


def _cbc_available() -> bool:
    if not _has_module("pulp"):
        return False
    return _cbc_command(msg=False) is not None


def _pyomo_solver_available(name: str) -> bool:
    try:
        return _make_pyomo_solver(name) is not None
    except SolverUnavailable:
        return False


def available_solvers() -> dict[str, bool]:
    """Which solvers :func:`solve` can use here: the three built-ins plus common Pyomo names."""
    out = {
        "highs": _has_module("highspy"),
        "scip": _has_module("pyscipopt"),
        "cbc": _cbc_available(),
    }
    for name in ("appsi_highs", "glpk", "gurobi_direct", "cplex"):
        out[name] = _pyomo_solver_available(name)
    return out


def check_solver(solver: str) -> None:
    """Raise :class:`~splitopt.errors.SolverUnavailable` unless :func:`solve` can use ``solver``
    here (the same tests :func:`solve` makes, done before a batch run starts rather than once per
    instance)."""
    name = str(solver).lower()
    if name == "highs":
        _require("highspy", "highs")
    elif name == "cbc":
        _require("pulp", "cbc")
        if not _cbc_available():
            raise SolverUnavailable("solver 'cbc' needs PuLP's CBC: pip install pulp "
                                    "(pip install 'pulp[cbc]' on PuLP >= 4)")
    elif name == "scip":
        _require("pyscipopt", "scip")
    else:
        _make_pyomo_solver(solver)


def _require(module: str, solver: str) -> None:
    if not _has_module(module):
        raise SolverUnavailable(
            f"solver {solver!r} needs the Python package {module!r}: pip install {module}")


# ----------------------------------------------------------------------------------------------
# helpers shared by the back ends


def _active_objective(model):
    import pyomo.environ as pyo

    objs = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objs) != 1:
        raise InstanceError("model.objective",
                            f"the model must have exactly one active Objective, found {len(objs)}")
    return objs[0]


def _gap(objective, bound) -> float | None:
    if objective is None or bound is None:
        return None
    if math.isinf(bound) or math.isnan(bound):
        return None
    diff = abs(objective - bound)
    if diff == 0.0:
        return 0.0
    return diff / max(abs(objective), 1e-10)


def _round_integers(variables) -> None:
    for v in variables:
        if v.value is not None and not v.fixed and v.is_integer():
            r = round(v.value)
            if abs(v.value - r) <= _INT_TOL:
                v.set_value(float(r), skip_validation=True)


def _collect_values(model) -> dict[str, float]:
    import pyomo.environ as pyo

    return {v.name: float(v.value)
            for v in model.component_data_objects(pyo.Var, descend_into=True)
            if v.value is not None}


def _finite(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


# ----------------------------------------------------------------------------------------------
# HiGHS through highspy, from the standard-form matrices


def _solve_highs(model, *, time_limit, mip_gap, relax, tee, options) -> dict:
    _require("highspy", "highs")
    import highspy
    import numpy as np
    import pyomo.environ as pyo
    from pyomo.common.errors import InfeasibleConstraintException, InvalidConstraintError
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

    obj = _active_objective(model)
    try:
        repn = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
    except InfeasibleConstraintException as exc:
        return dict(status="infeasible", termination="trivially infeasible constraint",
                    message=str(exc))
    except (InvalidConstraintError, ValueError, TypeError) as exc:
        msg = str(exc)
        if "nonlinear" in msg.lower() or isinstance(exc, InvalidConstraintError):
            msg = ("the HiGHS path takes linear models only (LP/MILP); use solver='scip' for "
                   "nonlinear models, or linearise with splitopt.models.relax. Pyomo said: " + msg)
        return dict(status="error", termination="model error", message=msg)
    except Exception as exc:  # InvalidExpressionError etc. from a nonlinear objective
        return dict(status="error", termination="model error",
                    message="the HiGHS path takes linear models only (LP/MILP); use "
                            f"solver='scip' for nonlinear models. Pyomo said: {exc}")

    cols = repn.columns
    n = len(cols)
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(repn.rows)
    c = repn.c.toarray()[0] if n else np.zeros(0)
    scale = _objective_scale(c)
    lp.col_cost_ = np.asarray(c, dtype=float) * scale
    lp.offset_ = (float(repn.c_offset[0]) if len(repn.c_offset) else 0.0) * scale
    lower = np.empty(n)
    upper = np.empty(n)
    integ = []
    any_int = False
    for j, v in enumerate(cols):
        lb, ub = v.bounds
        lower[j] = -inf if lb is None else float(lb)
        upper[j] = inf if ub is None else float(ub)
        is_int = (not relax) and v.is_integer()
        any_int |= is_int
        integ.append(highspy.HighsVarType.kInteger if is_int else highspy.HighsVarType.kContinuous)
    lp.col_lower_ = lower
    lp.col_upper_ = upper
    rhs = np.asarray(repn.rhs, dtype=float)
    kinds = np.fromiter((r.bound_type for r in repn.rows), dtype=np.int8, count=len(repn.rows))
    lp.row_lower_ = np.where(kinds == 1, -inf, rhs)
    lp.row_upper_ = np.where(kinds == -1, inf, rhs)
    A = repn.A.tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.asarray(A.indptr, dtype=np.int32)
    lp.a_matrix_.index_ = np.asarray(A.indices, dtype=np.int32)
    lp.a_matrix_.value_ = np.asarray(A.data, dtype=float)
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = lp.num_row_
    if any_int:
        lp.integrality_ = integ
    lp.sense_ = highspy.ObjSense.kMinimize if obj.is_minimizing() else highspy.ObjSense.kMaximize

    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(tee))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", _HIGHS_DEFAULT_GAP if mip_gap is None else float(mip_gap))
    if mip_gap is None:
        h.setOptionValue("mip_abs_gap", _HIGHS_DEFAULT_ABS_GAP)
    for key, val in (options or {}).items():
        if h.setOptionValue(key, val) != highspy.HighsStatus.kOk:
            raise InstanceError(f"options.{key}", f"HiGHS rejected the option value {val!r}")
    h.passModel(lp)
    h.run()
    ms = h.getModelStatus()
    S = highspy.HighsModelStatus

    if ms == S.kUnboundedOrInfeasible:
        # Disambiguate with the same constraints and a zero objective: feasible => unbounded.
        lp.col_cost_ = np.zeros(n)
        h2 = highspy.Highs()
        h2.setOptionValue("output_flag", False)
        h2.setOptionValue("presolve", "off")
        if time_limit is not None:
            h2.setOptionValue("time_limit", float(time_limit))
        h2.passModel(lp)
        h2.run()
        ms2 = h2.getModelStatus()
        if ms2 == S.kOptimal:
            return dict(status="unbounded", termination=h.modelStatusToString(ms) +
                        " (feasible with zero objective => unbounded)")
        if ms2 == S.kInfeasible:
            return dict(status="infeasible", termination=h.modelStatusToString(ms) +
                        " (infeasible with zero objective)")
        return dict(status="infeasible_or_unbounded", termination=h.modelStatusToString(ms))

    info = h.getInfo()
    term = h.modelStatusToString(ms)
    has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
    status = {
        S.kOptimal: "optimal", S.kInfeasible: "infeasible", S.kUnbounded: "unbounded",
        S.kTimeLimit: "time_limit", S.kIterationLimit: "feasible", S.kSolutionLimit: "feasible",
        S.kObjectiveBound: "feasible", S.kObjectiveTarget: "feasible", S.kInterrupt: "feasible",
        S.kModelEmpty: "optimal",
    }.get(ms, "error")
    if status == "feasible" and not has_sol:
        status = "unknown"
    if status == "error":
        return dict(status="error", termination=term, message=f"HiGHS returned {term}")
    if status in ("infeasible", "unbounded"):
        return dict(status=status, termination=term)

    objective = bound = None
    if ms == S.kModelEmpty:
        objective = bound = lp.offset_ / scale
    elif has_sol:
        sol = h.getSolution().col_value
        for v, x in zip(cols, sol):
            v.set_value(float(x), skip_validation=True)
        if not relax:
            _round_integers(cols)
        objective = float(pyo.value(obj))  # at the loaded (integer-rounded) values
    if any_int:
        bound = _finite(info.mip_dual_bound)
        if bound is not None:
            bound /= scale
    elif status == "optimal":
        bound = objective
    return dict(status=status, termination=term, objective=objective, bound=bound)


def _objective_scale(c) -> float:
    """A power of two ``s`` for the cost vector handed to HiGHS (exact: no rounding).

    HiGHS's dual feasibility tolerance (1e-7) is absolute: a cost coefficient below it is treated
    as zero. splitopt's costs are seconds spanning many orders of magnitude (a 4-byte tensor costs
    6.4e-8 s next to 3 s for a feature map), and unscaled HiGHS then paid a needless 6.4e-8 s upload
    and reported it as proven optimal. We scale up so the smallest non-zero |cost| is at least 1e-4,
    unless that would push the largest above 1e6 (costs above 1e6 are scaled down to it).
    Objective and bound are divided by ``s`` again; the objective is recomputed in Pyomo anyway.
    """
    import math

    import numpy as np

    nz = np.abs(c[c != 0]) if len(c) else np.zeros(0)
    if nz.size == 0:
        return 1.0
    lo, hi = float(nz.min()), float(nz.max())
    e = max(math.ceil(math.log2(1e-4 / lo)), 0)  # only ever scale up for tiny costs ...
    e = min(e, math.floor(math.log2(1e6 / hi)))   # ... and keep the largest at most 1e6
    return math.ldexp(1.0, e)


# ----------------------------------------------------------------------------------------------
# Pyomo solvers (SCIP via scip_direct, and any other name)


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
        f"{', '.join(f'{k!r} (pip install {v})' for k, v in SOLVERS.items())}; other names must "
        "be a solver Pyomo's SolverFactory knows and finds installed (e.g. 'appsi_highs', "
        "'glpk' with the glpsol executable, 'gurobi_direct' with pip install gurobipy)")


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


def _solve_pyomo(model, name, made, *, time_limit, mip_gap, tee, options, relax_ints) -> dict:
    import pyomo.environ as pyo

    kind, solver = made
    obj = _active_objective(model)
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
            objective = _finite(res.incumbent_objective)
            if objective is None:
                objective = float(pyo.value(obj))
        elif status in ("feasible",):
            status = "unknown"
        if status in ("infeasible", "unbounded", "infeasible_or_unbounded", "error"):
            return dict(status=status, termination=term)
        bound = _finite(res.objective_bound)
        return dict(status=status, termination=term, objective=objective, bound=bound)

    # legacy interface
    from pyomo.opt import TerminationCondition as TC

    opts = dict(options or {})
    base = name.split("_")[0] if name not in _LEGACY_TIME_OPTION else name
    is_appsi = name.startswith("appsi_")
    if is_appsi:
        if time_limit is not None:
            solver.config.time_limit = float(time_limit)
        if mip_gap is not None:
            solver.config.mip_gap = float(mip_gap)
    else:
        if time_limit is not None:
            opts.setdefault(_LEGACY_TIME_OPTION.get(name, _LEGACY_TIME_OPTION.get(base, "timelimit")),
                            float(time_limit))
        if mip_gap is not None:
            opts.setdefault(_LEGACY_GAP_OPTION.get(name, _LEGACY_GAP_OPTION.get(base, "mipgap")),
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
    lo, hi = _finite(res.problem.lower_bound), _finite(res.problem.upper_bound)
    bound = lo if obj.is_minimizing() else hi
    if status == "optimal" and bound is None:
        bound = objective if not _is_mip(model, relax_ints) else None
    return dict(status=status, termination=term, objective=objective, bound=bound)


def _is_mip(model, relaxed: bool) -> bool:
    import pyomo.environ as pyo

    if relaxed:
        return False
    return any(v.is_integer() and not v.fixed
               for v in model.component_data_objects(pyo.Var, descend_into=True))


# ----------------------------------------------------------------------------------------------
# CBC through PuLP (independent path: MPS file -> PuLP -> CBC -> names)

_CBC_BOUND_RE = re.compile(r"^(Lower|Upper) bound:\s*(\S+)", re.M)
_CBC_RESULT_RE = re.compile(r"^Result - (.*)$", re.M)


def _write_mps(model, path: str):
    from pyomo.repn.plugins.mps import ProblemWriter_mps

    writer = ProblemWriter_mps(int_marker=True)
    fname, smap = writer(model, path, lambda *a, **k: True,
                         {"symbolic_solver_labels": True, "skip_objective_sense": True})
    # PuLP 3.3's reader knows LO/UP/FX/FR/MI/PL/BV only; integrality comes from the markers, and
    # every bound is re-set from Pyomo after reading, so LI/UI just need to parse.
    with open(fname) as f:
        text = f.read()
    text = text.replace("\n LI BOUND ", "\n LO BOUND ").replace("\n UI BOUND ", "\n UP BOUND ")
    if re.search(r"^(QUADOBJ|QMATRIX|QCMATRIX|QSECTION)", text, re.M):
        raise ValueError("the model has quadratic terms")
    with open(fname, "w") as f:
        f.write(text)
    return smap


def _solve_cbc(model, *, time_limit, mip_gap, relax, tee, options) -> dict:
    _require("pulp", "cbc")
    import pulp
    import pyomo.environ as pyo

    if not _cbc_available():
        raise SolverUnavailable("solver 'cbc' needs PuLP's CBC: pip install pulp "
                                "(pip install 'pulp[cbc]' on PuLP >= 4)")
    obj = _active_objective(model)
    with tempfile.TemporaryDirectory(prefix="splitopt-cbc-") as tmp:
        mps = os.path.join(tmp, "model.mps")
        try:
            smap = _write_mps(model, mps)
        except Exception as exc:
            return dict(status="error", termination="model error",
                        message="the CBC path takes linear models only (LP/MILP); use solver='scip' "
                                "for nonlinear models. "
                                f"Pyomo's MPS writer said: {exc}")
        sense = pulp.LpMinimize if obj.is_minimizing() else pulp.LpMaximize
        try:
            pvars, prob = pulp.LpProblem.fromMPS(mps, sense=sense)
        except Exception as exc:  # pragma: no cover - a writer/reader mismatch
            return dict(status="error", termination="model error",
                        message=f"PuLP could not read Pyomo's MPS file: {exc}")
        mapping = []  # (pulp var, pyomo var)
        for sym, comp in smap.bySymbol.items():
            if sym not in pvars:
                continue
            pv = pvars[sym]
            pv.lowBound, pv.upBound = comp.bounds
            pv.cat = pulp.LpInteger if (comp.is_integer() and not relax) else pulp.LpContinuous
            mapping.append((pv, comp))
        if not mapping and prob.objective is None:
            prob.objective = pulp.LpAffineExpression()
        log = os.path.join(tmp, "cbc.log")
        kw: dict[str, Any] = dict(msg=False, logPath=log)
        if time_limit is not None:
            kw["timeLimit"] = float(time_limit)
        if mip_gap is not None:
            kw["gapRel"] = float(mip_gap)
        if options:
            kw["options"] = [f"{k} {v}" for k, v in options.items()]
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                prob.solve(_cbc_command(**kw))
            except Exception as exc:
                return dict(status="error", termination=type(exc).__name__,
                            message=f"cbc: {exc}")
        try:
            with open(log) as f:
                log_text = f.read()
        except OSError:
            log_text = ""
    if tee:
        print(log_text)
    m = _CBC_RESULT_RE.search(log_text)
    cbc_result = m.group(1).strip() if m else ""
    term = f"{pulp.LpStatus.get(prob.status, prob.status)}/" \
           f"{pulp.LpSolution.get(prob.sol_status, prob.sol_status)}" + \
           (f" ({cbc_result})" if cbc_result else "")
    st, sst = prob.status, prob.sol_status
    low = cbc_result.lower()
    if st == pulp.LpStatusInfeasible or "infeasible" in low:
        return dict(status="infeasible", termination=term)
    if st == pulp.LpStatusUnbounded or "unbounded" in low:
        return dict(status="unbounded", termination=term)
    has_sol = sst in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    stopped_time = "time" in low
    if not has_sol:
        if stopped_time or (st == pulp.LpStatusNotSolved and time_limit is not None):
            return dict(status="time_limit", termination=term)
        return dict(status="error" if st == pulp.LpStatusUndefined else "unknown",
                    termination=term, message="CBC returned no solution")
    for pv, comp in mapping:
        if pv.varValue is not None:
            comp.set_value(float(pv.varValue), skip_validation=True)
    if not relax:
        _round_integers(comp for _, comp in mapping)
    objective = float(pyo.value(obj))
    if sst == pulp.LpSolutionOptimal:
        status = "optimal"
    elif stopped_time:
        status = "time_limit"
    else:
        status = "feasible"
    bound = None
    bm = _CBC_BOUND_RE.search(log_text)
    if bm:
        try:
            # CBC prints "Lower bound:" when minimising, "Upper bound:" when maximising, both
            # in the user's sign (checked with PuLP 3.3's bundled CBC 2.10).
            bound = _finite(float(bm.group(2)))
        except ValueError:
            bound = None
    is_mip = any(pv.cat == pulp.LpInteger for pv, _ in mapping)
    if bound is None and status == "optimal" and (not is_mip or mip_gap in (None, 0, 0.0)):
        bound = objective  # an LP optimum, or a MIP solved to CBC's default (zero) gap
    return dict(status=status, termination=term, objective=objective, bound=bound)


# ----------------------------------------------------------------------------------------------
# front door


def _relaxed_clone(model):
    """Clone ``model``, pair its variables with the clone's, then drop integrality on the clone."""
    import pyomo.environ as pyo

    clone = model.clone()
    pairs = list(zip(model.component_data_objects(pyo.Var, descend_into=True),
                     clone.component_data_objects(pyo.Var, descend_into=True)))
    assert all(a.name == b.name for a, b in pairs)
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(clone)
    return clone, pairs


def solve(model, solver: str = "highs", *, time_limit: float | None = None,
          mip_gap: float | None = None, relax: bool = False, tee: bool = False,
          options: Mapping[str, Any] | None = None) -> ExactResult:
    """Solve the Pyomo ``model`` (one active Objective) with ``solver``; load values into it.

    Parameters
    ----------
    solver : ``"highs"`` (default), ``"scip"``, ``"cbc"`` or any Pyomo ``SolverFactory`` name.
    time_limit : seconds, passed to every solver; a time-out is status ``"time_limit"``.
    mip_gap : relative MIP gap at which the solver may stop and report ``"optimal"``.
    relax : solve the continuous relaxation (integrality dropped); values go into ``model``.
    tee : show the solver log.
    options : solver-specific options (HiGHS option names, SCIP parameter names, CBC
        command-line options ``{"cuts": "off"}``, or the Pyomo solver's options).

    Raises
    ------
    SolverUnavailable : the solver is not installed (the message names the pip package).
    InstanceError : the model does not have exactly one active Objective.
    """
    import pyomo.environ as pyo

    t0 = time.perf_counter()
    if time_limit is not None and not (time_limit > 0):
        raise InstanceError("time_limit", f"must be > 0, got {time_limit!r}")
    if mip_gap is not None and not (mip_gap >= 0):
        raise InstanceError("mip_gap", f"must be >= 0, got {mip_gap!r}")
    name = str(solver).lower()
    obj = _active_objective(model)
    common = dict(time_limit=time_limit, mip_gap=mip_gap, tee=tee, options=options)

    if name == "highs":
        out = _solve_highs(model, relax=relax, **common)
    elif name == "cbc":
        out = _solve_cbc(model, relax=relax, **common)
    else:
        pyomo_name = "scip_direct" if name == "scip" else solver
        if name == "scip":
            _require("pyscipopt", "scip")
        made = _make_pyomo_solver(pyomo_name)  # raises SolverUnavailable
        if relax:
            target, pairs = _relaxed_clone(model)
        else:
            target, pairs = model, []
        out = _solve_pyomo(target, pyomo_name, made, relax_ints=relax, **common)
        if out.get("objective") is not None:
            for orig, rel in pairs:
                if rel.value is not None and not orig.fixed:
                    orig.set_value(rel.value, skip_validation=True)
            if not relax:
                _round_integers(model.component_data_objects(pyo.Var, descend_into=True))
            try:  # the objective at the loaded (integer-rounded) values
                out["objective"] = float(pyo.value(obj))
            except (ValueError, TypeError):
                pass

    objective = out.get("objective")
    bound = out.get("bound")
    values = _collect_values(model) if objective is not None else {}
    return ExactResult(solver=name, status=out["status"],
                       termination=str(out.get("termination", "")),
                       objective=objective, bound=bound, gap=_gap(objective, bound),
                       seconds=time.perf_counter() - t0, values=values,
                       message=out.get("message", ""))


__all__ = ["ExactResult", "SOLVERS", "available_solvers", "check_solver", "solve"]
