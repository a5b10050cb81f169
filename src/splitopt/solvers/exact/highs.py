"""HiGHS through ``highspy``, from matrices: the default backend, and a public matrix-level entry.

:class:`HighsMatrix` holds one linear model (LP or MILP) inside a HiGHS instance. Build it once
from a Pyomo model (:meth:`HighsMatrix.from_pyomo`, through Pyomo's ``LinearStandardFormCompiler``
in mixed form) or from arrays (:meth:`HighsMatrix.from_arrays`), then change column bounds and
re-solve: HiGHS keeps its basis between solves, so a re-solve after a bound change starts warm. A
custom branch and bound gets its node LP bounds this way without building a Pyomo model per node.

:class:`HighsBackend` is the ``"highs"`` solver of :func:`splitopt.solvers.exact.solve`: it builds
a :class:`HighsMatrix`, solves it once, and loads the values into the Pyomo variables.

Numerics: HiGHS's dual feasibility tolerance (1e-7) is absolute, so a cost coefficient below it is
treated as zero. splitopt's costs are seconds spanning many orders of magnitude (a 4-byte tensor
costs 6.4e-8 s next to 3 s for a feature map), and unscaled HiGHS paid a needless 6.4e-8 s upload
and reported it as proven optimal. The cost vector is therefore scaled by a power of two
(:func:`objective_scale`; exact, no rounding) and HiGHS's MIP gaps are closed: its default relative
gap is 1e-4 and its absolute gap 1e-6, far too loose for a reference solve.

Crashes. HiGHS's MIP presolve recurses deeply on long chains: the split MILP of a 20,000-layer
chain (40,000 columns) overflowed the 8 MiB main-thread stack and killed the process with SIGSEGV
after about 22 s. Large models (:data:`THREAD_ABOVE` columns plus rows) are therefore solved in a
thread with a 1 GiB stack (virtual: only the pages used are committed); the same model then solves.

Banner. HiGHS 1.16 prints its banner to the C-level stdout when the first ``Highs`` object of a
process is constructed, before any option can be set; :func:`new_highs` builds that first object
with file descriptor 1 sent to ``/dev/null`` (later objects print nothing unless ``output_flag``).
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from splitopt.errors import InstanceError
from splitopt.solvers.exact import base

_BANNER_LOCK = threading.Lock()
_banner_done = False


def new_highs(output: bool = False):
    """A ``highspy.Highs`` with ``output_flag`` set, the first one of the process built silently."""
    import highspy

    global _banner_done
    if not _banner_done and not output:
        with _BANNER_LOCK:
            if not _banner_done:
                sys.stdout.flush()
                saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(devnull, 1)
                    h = highspy.Highs()
                finally:
                    os.dup2(saved, 1)
                    os.close(saved)
                    os.close(devnull)
                _banner_done = True
                h.setOptionValue("output_flag", False)
                return h
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(output))
    return h


DEFAULT_REL_GAP = 1e-9
DEFAULT_ABS_GAP = 1e-12
#: a MIP whose nonzero coefficients (objective and matrix) span more than this ratio is never reported
#: ``optimal`` by HiGHS alone: its tolerances (1e-9 relative gap, 1e-6..1e-9 feasibility) cannot
#: separate the answers (seen: grouping MILPs with data over 1e-9..1e9 "proven" 13x above the optimum)
TRUSTED_RANGE = 1e9
#: models with more columns plus rows than this run in a thread with a :data:`BIG_STACK` stack
THREAD_ABOVE = 20_000
BIG_STACK = 1 << 30


def objective_scale(c) -> float:
    """A power of two ``s`` for the cost vector handed to HiGHS: the smallest non-zero ``|cost|``
    scaled up to at least 1e-4, unless that would push the largest above 1e6 (costs above 1e6 are
    scaled down to it). Objective and bound are divided by ``s`` again."""
    c = np.asarray(c, dtype=float)
    nz = np.abs(c[(c != 0) & np.isfinite(c)]) if c.size else np.zeros(0)
    if nz.size == 0:
        return 1.0
    lo, hi = float(nz.min()), float(nz.max())
    e_up = math.ceil(math.log2(1e-4) - math.log2(lo))   # only ever scale up for tiny costs ...
    e_down = math.floor(math.log2(1e6) - math.log2(hi))  # ... and keep the largest at most 1e6
    e = max(-1000, min(max(e_up, 0), e_down, 1000))       # frexp range: 2^e stays a finite double
    return math.ldexp(1.0, e)


@dataclass
class MatrixResult:
    """One solve of a :class:`HighsMatrix`: status (the vocabulary of :mod:`.base`), objective and
    bound in the model's own units, and the column values (``None`` without a solution)."""

    status: str
    termination: str
    objective: float | None
    bound: float | None
    x: np.ndarray | None
    message: str = ""
    y: np.ndarray | None = None  # row duals of an LP (HiGHS sign convention, model units)


class HighsMatrix:
    """A linear model inside HiGHS, for repeated solves with changed column bounds (see the module
    docstring). ``columns`` are the Pyomo variables in column order when built from Pyomo."""

    def __init__(self, c, A, row_lower, row_upper, col_lower, col_upper, integer=None, *, maximize: bool = False,
                 offset: float = 0.0, columns: Sequence[Any] | None = None, time_limit: float | None = None,
                 mip_gap: float | None = None, tee: bool = False, options: Mapping[str, Any] | None = None):
        HighsBackend().require()
        import highspy
        import scipy.sparse as sp

        self._hs = highspy
        c = np.asarray(c, dtype=float)
        n = c.size
        A = sp.csc_matrix(A, shape=(len(row_lower), n))
        inf = highspy.kHighsInf
        self.scale = objective_scale(c)
        self.columns = list(columns) if columns is not None else None
        self.integer = np.zeros(n, dtype=bool) if integer is None else np.asarray(integer, dtype=bool)
        lp = highspy.HighsLp()
        lp.num_col_ = n
        lp.num_row_ = int(A.shape[0])
        lp.col_cost_ = c * self.scale
        lp.offset_ = float(offset) * self.scale
        lp.col_lower_ = np.where(np.isfinite(col_lower), col_lower, -inf).astype(float)
        lp.col_upper_ = np.where(np.isfinite(col_upper), col_upper, inf).astype(float)
        lp.row_lower_ = np.where(np.isfinite(row_lower), row_lower, -inf).astype(float)
        lp.row_upper_ = np.where(np.isfinite(row_upper), row_upper, inf).astype(float)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.asarray(A.indptr, dtype=np.int32)
        lp.a_matrix_.index_ = np.asarray(A.indices, dtype=np.int32)
        lp.a_matrix_.value_ = np.asarray(A.data, dtype=float)
        lp.a_matrix_.num_col_ = n
        lp.a_matrix_.num_row_ = lp.num_row_
        if self.integer.any():
            lp.integrality_ = [highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous
                               for i in self.integer]
        lp.sense_ = highspy.ObjSense.kMaximize if maximize else highspy.ObjSense.kMinimize
        self.lp = lp
        self.highs = h = new_highs(bool(tee))
        self.time_limit, self.tee = time_limit, bool(tee)
        self.options: dict[str, Any] = {}  # what a child process (isolate=True) sets again
        if time_limit is not None:
            h.setOptionValue("time_limit", float(time_limit))
        self.options["mip_rel_gap"] = DEFAULT_REL_GAP if mip_gap is None else float(mip_gap)
        if mip_gap is None:
            self.options["mip_abs_gap"] = DEFAULT_ABS_GAP
        for key, val in self.options.items():
            h.setOptionValue(key, val)
        for key, val in (options or {}).items():
            if h.setOptionValue(key, val) != highspy.HighsStatus.kOk:
                raise InstanceError(f"options.{key}", f"HiGHS rejected the option value {val!r}")
            self.options[key] = val
        h.passModel(lp)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_arrays(cls, c, A, row_lower, row_upper, col_lower, col_upper, integer=None, **kw) -> "HighsMatrix":
        """``min/max c x + offset`` s.t. ``row_lower <= A x <= row_upper``, ``col_lower <= x <=
        col_upper``; ``integer`` marks integer columns; infinite bounds as ``±inf``."""
        return cls(c, A, row_lower, row_upper, col_lower, col_upper, integer, **kw)

    @classmethod
    def from_pyomo(cls, model, *, relax: bool = False, **kw) -> "HighsMatrix":
        """Compile a linear Pyomo model (one active objective). Raises ``ValueError`` for a model
        HiGHS cannot take (nonlinear) and :class:`InfeasibleModel` for a trivially infeasible one."""
        from pyomo.common.errors import InfeasibleConstraintException
        from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

        obj = base.active_objective(model)
        try:
            repn = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
        except InfeasibleConstraintException as exc:
            raise InfeasibleModel(str(exc)) from None
        except Exception as exc:  # InvalidConstraintError, InvalidExpressionError, ...
            raise ValueError("the HiGHS path takes linear models only (LP/MILP); use solver='scip' for "
                             "nonlinear models, or linearise with splitopt.models.relax. Pyomo said: "
                             f"{exc}") from None
        cols = repn.columns
        n = len(cols)
        c = repn.c.toarray()[0] if n else np.zeros(0)
        bounds = [v.bounds for v in cols]
        lower = np.array([-np.inf if lb is None else float(lb) for lb, _ in bounds], dtype=float)
        upper = np.array([np.inf if ub is None else float(ub) for _, ub in bounds], dtype=float)
        integer = np.array([(not relax) and v.is_integer() for v in cols], dtype=bool)
        rhs = np.asarray(repn.rhs, dtype=float)
        kinds = np.fromiter((r.bound_type for r in repn.rows), dtype=np.int8, count=len(repn.rows))
        row_lower = np.where(kinds == 1, -np.inf, rhs)
        row_upper = np.where(kinds == -1, np.inf, rhs)
        offset = float(repn.c_offset[0]) if len(repn.c_offset) else 0.0
        return cls(c, repn.A, row_lower, row_upper, lower, upper, integer, maximize=not obj.is_minimizing(),
                   offset=offset, columns=cols, **kw)

    # ------------------------------------------------------------------ use
    @property
    def num_col(self) -> int:
        return int(self.lp.num_col_)

    @property
    def is_mip(self) -> bool:
        return bool(self.integer.any())

    @property
    def coefficient_range(self) -> float:
        """max/min of the nonzero absolute coefficients of the objective and the matrix."""
        vals = np.abs(np.concatenate([np.asarray(self.lp.col_cost_), np.asarray(self.lp.a_matrix_.value_)]))
        vals = vals[(vals > 0) & np.isfinite(vals)]
        if not vals.size:
            return 1.0
        with np.errstate(over="ignore"):  # a subnormal minimum: the range is infinite, i.e. untrusted
            return float(vals.max() / vals.min())

    def set_bounds(self, cols: Sequence[int], lower: Sequence[float], upper: Sequence[float]) -> None:
        """Change the bounds of columns ``cols`` (the next :meth:`solve` starts from the last basis)."""
        cols = np.asarray(cols, dtype=np.int32)
        if cols.size:
            inf = self._hs.kHighsInf
            lo = np.where(np.isfinite(lower), lower, -inf).astype(float)
            hi = np.where(np.isfinite(upper), upper, inf).astype(float)
            self.highs.changeColsBounds(int(cols.size), cols, lo, hi)

    def set_costs(self, c) -> None:
        """Replace the objective vector (rescaled like the constructor's; the offset keeps its value)."""
        c = np.asarray(c, dtype=float)
        offset = self.lp.offset_ / self.scale
        self.scale = objective_scale(c)
        self.lp.col_cost_ = c * self.scale
        self.lp.offset_ = offset * self.scale
        n = self.num_col
        self.highs.changeColsCost(n, np.arange(n, dtype=np.int32), c * self.scale)
        self.highs.changeObjectiveOffset(offset * self.scale)

    def set_time_limit(self, seconds: float | None) -> None:
        """Change the time limit of the next :meth:`solve` (``None``: none)."""
        self.time_limit = seconds
        self.highs.setOptionValue("time_limit", float("inf") if seconds is None else max(float(seconds), 1e-3))

    def set_option(self, key: str, value: Any) -> None:
        self.highs.setOptionValue(key, value)

    def solve(self, isolate: bool = False) -> MatrixResult:
        """Run HiGHS. ``isolate=True`` (with a time limit) runs it in a child process killed at the
        limit (:mod:`.highs_isolated`): HiGHS overruns its own limit on large models. A killed run
        is ``time_limit`` without a solution."""
        from splitopt.solvers.exact.highs_isolated import local_outcome, run_isolated

        h, hs = self.highs, self._hs
        S = hs.HighsModelStatus
        if isolate and self.time_limit is not None:
            # HiGHS's own limit ends a margin before the caller's, and the child is killed at the
            # caller's limit (was: killed a "grace" after it; a 20,000-layer split MILP with 5 s
            # took 5.26 s, 2026-11-25)
            tl = float(self.time_limit)
            margin = min(0.25 * max(1.0, 0.1 * tl), 0.5 * tl)
            o = run_isolated(self.lp, self.options, time.monotonic() + tl - margin, margin, self.tee)
            if o.ms is None or o.ms < 0:
                return MatrixResult("time_limit" if o.ms is None else "error", o.term, None, None, None, o.term)
            ms = S(o.ms)
        else:
            self._run()
            o = local_outcome(h)
            ms = h.getModelStatus()
        term = o.term
        if ms == S.kUnboundedOrInfeasible:
            return MatrixResult(self._disambiguate(), term, None, None, None)
        has_sol = o.primal == 2  # kSolutionStatusFeasible
        status = {
            S.kOptimal: "optimal", S.kInfeasible: "infeasible", S.kUnbounded: "unbounded",
            S.kTimeLimit: "time_limit", S.kIterationLimit: "feasible", S.kSolutionLimit: "feasible",
            S.kObjectiveBound: "feasible", S.kObjectiveTarget: "feasible", S.kInterrupt: "feasible",
            S.kModelEmpty: "optimal",
        }.get(ms, "error")
        if status == "feasible" and not has_sol:
            status = "unknown"
        if ms == S.kModelEmpty and (self.num_col or int(self.lp.num_row_)):
            # HiGHS (1.16) answers "Empty" for a non-empty model whose coefficients it dropped as
            # negligible (values below its small_matrix_value): no solution of *this* model exists.
            return MatrixResult("error", term, None, None, None,
                                f"HiGHS called a model with {self.num_col} columns 'empty' (coefficients "
                                f"spanning {self.coefficient_range:.1e} were dropped as negligible)")
        if status in base.NO_SOLUTION:
            return MatrixResult(status, term, None, None, None, f"HiGHS returned {term}" if status == "error" else "")
        objective = bound = x = None
        if ms == S.kModelEmpty:
            objective = bound = self.lp.offset_ / self.scale
            x = np.zeros(self.num_col)
        elif has_sol:
            x = o.x if o.x is not None else np.asarray(h.getSolution().col_value, dtype=float)
            objective = float(o.objective) / self.scale
        y = None
        if self.is_mip:
            bound = base.finite(o.mip_dual_bound)
            if bound is not None:
                bound /= self.scale
        elif status == "optimal":
            bound = objective
            if o.dual == 2:  # kSolutionStatusFeasible
                y = (o.y if o.y is not None else np.asarray(h.getSolution().row_dual, dtype=float)) / self.scale
        return MatrixResult(status, term, objective, bound, x, y=y)

    def _run(self) -> None:
        """``Highs.run()``, on a big-stack thread for large models (see the module docstring)."""
        if self.num_col + int(self.lp.num_row_) <= THREAD_ABOVE:
            self.highs.run()
            return
        errors: list[BaseException] = []

        def target():
            try:
                self.highs.run()
            except BaseException as exc:  # pragma: no cover - re-raised below
                errors.append(exc)

        old = threading.stack_size()
        threading.stack_size(BIG_STACK)
        try:
            t = threading.Thread(target=target, name="highs-big-stack", daemon=True)
            t.start()
        finally:
            threading.stack_size(old)
        t.join()
        if errors:  # pragma: no cover
            raise errors[0]

    def _disambiguate(self) -> str:
        """Same constraints, zero objective: feasible => unbounded, infeasible => infeasible."""
        hs = self._hs
        lp = self.lp
        cost = lp.col_cost_
        lp.col_cost_ = np.zeros(self.num_col)
        h2 = new_highs()
        h2.setOptionValue("presolve", "off")
        h2.passModel(lp)
        h2.run()
        lp.col_cost_ = cost
        ms2 = h2.getModelStatus()
        if ms2 == hs.HighsModelStatus.kOptimal:
            return "unbounded"
        if ms2 == hs.HighsModelStatus.kInfeasible:
            return "infeasible"
        return "infeasible_or_unbounded"


def lagrangian_bound(hm: HighsMatrix, y) -> float:
    """A lower bound (upper bound when maximising) on every feasible point of ``hm`` **and of its
    integer restriction**, from any row multipliers ``y``, computed in exact rational arithmetic and
    rounded outwards once: weak duality needs no trust in the solver.

    For ``min c x`` s.t. ``L <= A x <= U``, ``l <= x <= u`` and any ``y``: with ``y_i`` zeroed where
    its sign would need an infinite row bound, ``c x = (c - A^T y) x + y^T A x >= sum_j min(d_j l_j,
    d_j u_j) + sum_i (y_i L_i if y_i >= 0 else y_i U_i)``, ``d = c - A^T y``. Returns ``-inf`` when a
    reduced cost points at an infinite column bound. ``y`` are duals in the model's units (as
    :meth:`HighsMatrix.solve` returns them).
    """
    from fractions import Fraction

    lp = hm.lp
    sign = -1 if lp.sense_ == hm._hs.ObjSense.kMaximize else 1
    inf = hm._hs.kHighsInf
    n = hm.num_col
    c = [Fraction(sign * float(v) / hm.scale) for v in lp.col_cost_]  # / a power of two: exact
    yy = np.asarray(y, dtype=float) * sign
    rl, ru = np.asarray(lp.row_lower_), np.asarray(lp.row_upper_)
    total = Fraction(sign * float(lp.offset_) / hm.scale)
    ys = []
    for i, yi in enumerate(yy):
        if yi > 0 and rl[i] > -inf:
            total += Fraction(float(yi)) * Fraction(float(rl[i]))
        elif yi < 0 and ru[i] < inf:
            total += Fraction(float(yi)) * Fraction(float(ru[i]))
        else:
            yi = 0.0
        ys.append(Fraction(float(yi)))
    start, index, value = lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_
    cl, cu = np.asarray(lp.col_lower_), np.asarray(lp.col_upper_)
    for j in range(n):
        d = c[j]
        for k in range(start[j], start[j + 1]):
            yi = ys[index[k]]
            if yi:
                d -= yi * Fraction(float(value[k]))
        if d > 0:
            if cl[j] <= -inf:
                return -math.inf * sign
            total += d * Fraction(float(cl[j]))
        elif d < 0:
            if cu[j] >= inf:
                return -math.inf * sign
            total += d * Fraction(float(cu[j]))
    b = float(total)
    if Fraction(b) > total:  # round towards -inf so the bound stays valid
        b = math.nextafter(b, -math.inf)
    return sign * b


class InfeasibleModel(Exception):
    """Pyomo found a constraint infeasible while compiling the model."""


class HighsBackend(base.Backend):
    """``solver="highs"``: linear models only (LP/MILP). Bound = ``mip_dual_bound`` for MIPs and
    the objective for an optimal LP."""

    name = "highs"
    package = "highspy"
    features = frozenset({"lp", "milp", "time_limit", "mip_gap", "warm_start"})

    def solve_model(self, model, *, time_limit, mip_gap, relax, tee, options) -> dict:
        import pyomo.environ as pyo

        self.require()
        t0 = time.monotonic()
        obj = base.active_objective(model)
        try:
            hm = HighsMatrix.from_pyomo(model, relax=relax, time_limit=time_limit, mip_gap=mip_gap, tee=tee,
                                        options=options)
            if time_limit is not None:  # the limit covers the compilation too: HiGHS gets what is left
                hm.set_time_limit(time_limit - (time.monotonic() - t0))
        except InfeasibleModel as exc:
            return dict(status="infeasible", termination="trivially infeasible constraint", message=str(exc))
        except InstanceError:  # a bad option: the caller's error, not the model's
            raise
        except ValueError as exc:
            return dict(status="error", termination="model error", message=str(exc))
        from splitopt.solvers.exact.highs_isolated import ISOLATE_ABOVE

        r = hm.solve(isolate=time_limit is not None and hm.num_col + int(hm.lp.num_row_) > ISOLATE_ABOVE)
        out: dict[str, Any] = dict(status=r.status, termination=r.termination, message=r.message)
        if r.status == "optimal" and hm.is_mip and hm.coefficient_range > TRUSTED_RANGE:
            out["status"] = "numerical"
            out["message"] = (f"HiGHS reports an optimum, but the coefficients span {hm.coefficient_range:.1e} "
                              f"(> {TRUSTED_RANGE:.0e}), beyond what its tolerances resolve")
        if r.x is not None and r.objective is not None:
            for v, val in zip(hm.columns, r.x):
                v.set_value(float(val), skip_validation=True)
            if not relax:
                base.round_integers(hm.columns)
            out["objective"] = float(pyo.value(obj))  # at the loaded (integer-rounded) values
        out["bound"] = r.bound
        return out


__all__ = ["HighsMatrix", "MatrixResult", "HighsBackend", "objective_scale", "InfeasibleModel", "lagrangian_bound"]
