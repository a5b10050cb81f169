"""What every exact-solver backend shares: the result type, the one status vocabulary, the
:class:`Backend` interface with its declared features, and small helpers.

Statuses (:data:`STATUSES`): ``optimal`` (proven, within ``mip_gap`` if one was given),
``feasible`` (a solution, stopped for another reason than time), ``time_limit`` (stopped on time;
``objective``/``bound`` set when an incumbent exists), ``infeasible``, ``unbounded``,
``infeasible_or_unbounded`` (the solver could not tell), ``error`` (the model does not suit the
solver, or the solver failed; see ``message``), ``unknown``, ``numerical`` (the solver claims an
optimum that splitopt cannot trust: see the backend). Each backend maps its solver's own codes onto
these words and nothing else.

The gap is ``|objective - bound| / max(|objective|, 1e-10)`` (HiGHS's definition), 0 when they are
equal and ``None`` when either is missing.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from splitopt.errors import InstanceError, SolverUnavailable

STATUSES = ("optimal", "feasible", "time_limit", "infeasible", "unbounded", "infeasible_or_unbounded", "error",
            "unknown", "numerical")
#: statuses that end a solve without a solution to report
NO_SOLUTION = ("infeasible", "unbounded", "infeasible_or_unbounded", "error")

#: what a backend can declare it supports
FEATURES = ("lp", "milp", "minlp", "nonconvex", "time_limit", "mip_gap", "warm_start")

INT_TOL = 1e-6


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


class Backend:
    """One exact solver. Subclasses set :attr:`name`, :attr:`package` (the pip package it needs)
    and :attr:`features`, and implement :meth:`solve_model`, which returns a dict with ``status``
    (one of :data:`STATUSES`), ``termination`` (the solver's own words) and, when known,
    ``objective``, ``bound`` and ``message``, after loading the solution into the model."""

    name: str = ""
    package: str = ""
    features: frozenset[str] = frozenset()

    def available(self) -> bool:
        return has_module(self.package)

    def require(self) -> None:
        """Raise :class:`SolverUnavailable` (naming the pip package) unless :meth:`available`."""
        if not has_module(self.package):
            raise SolverUnavailable(
                f"solver {self.name!r} needs the Python package {self.package!r}: pip install {self.package}")
        if not self.available():
            raise SolverUnavailable(f"solver {self.name!r} is installed but cannot run here")

    def supports(self, *features: str) -> bool:
        return all(f in self.features for f in features)

    def solve_model(self, model, *, time_limit, mip_gap, relax, tee, options) -> dict:  # pragma: no cover
        raise NotImplementedError


def has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def active_objective(model):
    import pyomo.environ as pyo

    objs = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objs) != 1:
        raise InstanceError("model.objective",
                            f"the model must have exactly one active Objective, found {len(objs)}")
    return objs[0]


def gap(objective, bound) -> float | None:
    if objective is None or bound is None:
        return None
    if math.isinf(bound) or math.isnan(bound):
        return None
    diff = abs(objective - bound)
    if diff == 0.0:
        return 0.0
    return diff / max(abs(objective), 1e-10)


def round_integers(variables) -> None:
    """Round integer variables within :data:`INT_TOL` of an integer (so ``value(x) == 1`` holds)."""
    for v in variables:
        if v.value is not None and not v.fixed and v.is_integer():
            r = round(v.value)
            if abs(v.value - r) <= INT_TOL:
                v.set_value(float(r), skip_validation=True)


def collect_values(model) -> dict[str, float]:
    import pyomo.environ as pyo

    return {v.name: float(v.value)
            for v in model.component_data_objects(pyo.Var, descend_into=True)
            if v.value is not None}


def finite(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def is_mip(model, relaxed: bool) -> bool:
    import pyomo.environ as pyo

    if relaxed:
        return False
    return any(v.is_integer() and not v.fixed for v in model.component_data_objects(pyo.Var, descend_into=True))


def result(name: str, out: Mapping[str, Any], model, seconds: float) -> ExactResult:
    """The :class:`ExactResult` of a backend's dict (values collected when a solution exists)."""
    objective = out.get("objective")
    bound = out.get("bound")
    if out["status"] not in STATUSES:  # pragma: no cover - a backend bug
        raise ValueError(f"backend {name!r} returned status {out['status']!r}, not one of {STATUSES}")
    values = collect_values(model) if objective is not None else {}
    return ExactResult(solver=name, status=out["status"], termination=str(out.get("termination", "")),
                       objective=objective, bound=bound, gap=gap(objective, bound), seconds=seconds,
                       values=values, message=out.get("message", ""))


__all__ = ["ExactResult", "Backend", "STATUSES", "NO_SOLUTION", "FEATURES", "has_module", "active_objective", "gap",
           "round_integers", "collect_values", "finite", "is_mip", "result"]
