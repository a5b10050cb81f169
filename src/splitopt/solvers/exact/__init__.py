"""The exact-solver front door: one call, :func:`solve`, for HiGHS, SCIP, CBC and any solver Pyomo knows.

Every formulation in :mod:`splitopt.models` is a Pyomo model with a single active ``Objective``.
:func:`solve` hands it to a backend (:data:`BACKENDS`, one small class per solver declaring what it
can do: :attr:`~splitopt.solvers.exact.base.Backend.features`) and returns an
:class:`~splitopt.solvers.exact.base.ExactResult` with a status from the one vocabulary of
:mod:`splitopt.solvers.exact.base`, the incumbent objective, the best proven (dual) bound, the
relative gap, wall-clock seconds and the variable values by Pyomo name (``"x[conv1]"``). When a
solution exists its values are also loaded into the model's variables, for every solver.

Backends: ``"highs"`` (default; :mod:`.highs`, linear models through matrices, also the public
matrix entry :class:`~splitopt.solvers.exact.highs.HighsMatrix` for repeated warm solves),
``"scip"`` (:mod:`.pyomo_solvers`, linear and nonlinear models to global optimality), ``"cbc"``
(:mod:`.cbc`, through PuLP on an MPS file: an independent cross-check), and any other name Pyomo's
``SolverFactory`` knows and finds installed.

``relax=True`` solves the LP relaxation and loads the relaxed values into the model. Integer
variables of a non-relaxed solve are rounded to the nearest integer when within 1e-6 of it, so that
``pyo.value(m.x[i]) == 1`` holds for a chosen binary. Infeasible and unbounded models never raise.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

from splitopt.errors import InstanceError, SolverUnavailable
from splitopt.solvers.exact import base
from splitopt.solvers.exact.base import STATUSES, Backend, ExactResult
from splitopt.solvers.exact.cbc import CbcBackend
from splitopt.solvers.exact.highs import HighsBackend, HighsMatrix
from splitopt.solvers.exact.pyomo_solvers import PyomoBackend, ScipBackend

#: the built-in backends, by solver name
BACKENDS: dict[str, Backend] = {"highs": HighsBackend(), "scip": ScipBackend(), "cbc": CbcBackend()}
SOLVERS: dict[str, str] = {name: b.package for name, b in BACKENDS.items()}
"""The built-in solver names and the pip package each one needs."""

#: other Pyomo solver names :func:`available_solvers` reports on
OTHER_PYOMO = ("appsi_highs", "glpk", "gurobi_direct", "cplex")


def backend(solver: str) -> Backend:
    """The backend of ``solver``: a built-in one, or a :class:`PyomoBackend` for any other name."""
    name = str(solver).lower()
    return BACKENDS.get(name) or PyomoBackend(str(solver))


def available_solvers() -> dict[str, bool]:
    """Which solvers :func:`solve` can use here: the built-ins plus common Pyomo names."""
    out = {name: b.available() for name, b in BACKENDS.items()}
    for name in OTHER_PYOMO:
        out[name] = PyomoBackend(name).available()
    return out


def solvers_with(*features: str) -> list[str]:
    """The installed built-in solvers that declare every feature in ``features`` (for example
    ``solvers_with("minlp")``); tests parametrise over this."""
    return [name for name, b in BACKENDS.items() if b.supports(*features) and b.available()]


def check_solver(solver: str) -> None:
    """Raise :class:`~splitopt.errors.SolverUnavailable` unless :func:`solve` can use ``solver``
    here (the same tests :func:`solve` makes, done before a batch run starts)."""
    backend(solver).require()


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
    t0 = time.perf_counter()
    if time_limit is not None and not (time_limit > 0):
        raise InstanceError("time_limit", f"must be > 0, got {time_limit!r}")
    if mip_gap is not None and not (mip_gap >= 0):
        raise InstanceError("mip_gap", f"must be >= 0, got {mip_gap!r}")
    b = backend(solver)
    base.active_objective(model)
    out = b.solve_model(model, time_limit=time_limit, mip_gap=mip_gap, relax=relax, tee=tee, options=options)
    return base.result(b.name, out, model, time.perf_counter() - t0)


__all__ = ["ExactResult", "SOLVERS", "BACKENDS", "STATUSES", "Backend", "HighsMatrix", "available_solvers",
           "solvers_with", "check_solver", "solve", "backend", "SolverUnavailable"]
