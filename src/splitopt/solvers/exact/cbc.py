"""CBC through PuLP (``solver="cbc"``): an independent cross-check path that shares no code with
the HiGHS path. The model is written as free MPS by Pyomo's MPS writer (symbolic labels, integer
markers), read back with ``pulp.LpProblem.fromMPS``, solved by PuLP's CBC and mapped back to Pyomo
variables by name through the writer's symbol map.

Two defects of PuLP 3.3's MPS reader are worked around: it rejects the ``LI``/``UI`` integer bounds
Pyomo writes, and it ignores the integrality implied by ``BV`` bounds; bounds and integrality are
therefore set on the PuLP variables from the Pyomo variables after reading. Bound and gap are read
from CBC's log when it prints them.
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any

from splitopt.errors import SolverUnavailable
from splitopt.solvers.exact import base


def cbc_command(**kw):
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


def cbc_available() -> bool:
    if not base.has_module("pulp"):
        return False
    return cbc_command(msg=False) is not None


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


def solve_cbc(model, *, time_limit, mip_gap, relax, tee, options) -> dict:
    import pulp
    import pyomo.environ as pyo

    obj = base.active_objective(model)
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
                prob.solve(cbc_command(**kw))
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
        base.round_integers(comp for _, comp in mapping)
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
            bound = base.finite(float(bm.group(2)))
        except ValueError:
            bound = None
    is_mip = any(pv.cat == pulp.LpInteger for pv, _ in mapping)
    if bound is None and status == "optimal" and (not is_mip or mip_gap in (None, 0, 0.0)):
        bound = objective  # an LP optimum, or a MIP solved to CBC's default (zero) gap
    return dict(status=status, termination=term, objective=objective, bound=bound)


class CbcBackend(base.Backend):
    name = "cbc"
    package = "pulp"
    features = frozenset({"lp", "milp", "time_limit", "mip_gap"})

    def available(self) -> bool:
        return cbc_available()

    def require(self) -> None:
        if not base.has_module(self.package) or not cbc_available():
            raise SolverUnavailable("solver 'cbc' needs PuLP's CBC: pip install pulp "
                                    "(pip install 'pulp[cbc]' on PuLP >= 4)")

    def solve_model(self, model, *, time_limit, mip_gap, relax, tee, options) -> dict:
        self.require()
        return solve_cbc(model, time_limit=time_limit, mip_gap=mip_gap, relax=relax, tee=tee, options=options)


__all__ = ["CbcBackend", "cbc_available", "cbc_command", "solve_cbc"]
