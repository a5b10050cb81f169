"""The validation harness: every algorithm against the family's exact formulation, per instance.

For one instance the harness

1. solves the family's **reference algorithm** (``Family.reference_algorithm``, the exact
   formulation, e.g. ``"milp"``) once with the requested solver, cached per process by
   (instance content hash, solver, time limit), and evaluates its assignment with the family's
   evaluator;
2. runs each of the family's declared ``relaxations`` once and keeps the first one's ``bound``
   (column ``lp_bound``) and its gap against the exact objective (``lp_gap``); every relaxation's
   own row carries its bound;
3. runs each requested algorithm, evaluates its assignment with the **evaluator** (never the
   algorithm's own bookkeeping: see DESIGN.md, "Data flow") and compares it with the exact
   objective.

Agreement: ``|a - b| <= REL_TOL * max(|a|, |b|) + ABS_TOL * scale`` with ``REL_TOL = ABS_TOL =
1e-9``; ``scale`` is the magnitude of the reference solution's cost terms (the sum of the absolute
values of the evaluator's numeric breakdown, at least ``|objective|`` and at least 1), so that an
objective formed as a difference or maximum of large terms is compared at the round-off level of
those terms. The relative gap is ``(objective - exact) / |exact|`` for minimisation (sign flipped
for maximisation), so a positive gap always means "the algorithm is worse than the exact
solver"; when ``exact == 0`` the absolute difference is reported.

Outcomes (column ``outcome``): ``reference`` (the exact solve's own row), ``agree``, ``worse``,
``better`` (the algorithm beat the reference: expected when the exact solve stopped at a time
limit, a bug in the formulation or solver otherwise), ``no_reference`` (the exact solve gave no
solution to compare with), ``infeasible`` (the evaluator rejected the assignment, e.g. a paper
variant that puts an input layer on the server), ``not_applicable`` (the algorithm raised
:class:`~splitopt.errors.InstanceError`: the instance is outside what it solves, e.g. a chain-only
method on a DAG), ``error`` (any other exception, or no assignment) and ``timeout``. A time-out or
exception is a recorded outcome with its message, never a crash.

Options: ``solver`` and ``time_limit`` are passed to exactly the algorithms that declare them
(:class:`~splitopt.families.Option`). In addition a hard per-run deadline (SIGALRM; only in the main
thread of a process, so not under a threaded Dask worker) stops a run that overstays: ``time_limit``
for algorithms without a time-limit option, ``1.5 * time_limit + 5`` s for those with one (model
building and solver overrun). The deadline never fires inside an ``import``: an import cut half-way
leaves a module half-initialised in ``sys.modules`` and poisons every later task of the worker (seen
with networkx: "Algorithm already exists in dispatch namespace"); the alarm is postponed until no
module is initialising, then raised.

The deadline raises :class:`TaskTimeout`, a ``BaseException`` (like ``KeyboardInterrupt``): library
code that wraps every ``Exception`` into its own error must not turn a time-out into an error row.
Issue 21: the alarm fired inside Pyomo's standard-form compiler, whose ``except Exception`` in
:meth:`~splitopt.solvers.exact.highs.HighsMatrix.from_pyomo` re-raised it as "the HiGHS path takes
linear models only", stored as ``error``. In addition, any exception that ends a run after its
deadline fired is recorded as ``timeout`` (the message keeps what it surfaced as).
"""

from __future__ import annotations

import importlib
import math
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from splitopt.errors import InstanceError, SolverFailed
from splitopt.families import NUMERICAL, AlgoResult, Family, cost_scale, family_of, honest_status
from splitopt.instances.sets import Member, canonical_json, instance_hash

REL_TOL = 1e-9
ABS_TOL = 1e-9
#: runs faster than this (seconds) are timed a second time, warm; ``seconds`` is then the warm call
#: and ``cold_seconds`` the first one
WARM_REPEAT_BELOW = 1.0
#: the first call of an algorithm in a process pays its imports: it is repeated if under this
FIRST_REPEAT_BELOW = 10.0
_CALLED: set[tuple[str, str]] = set()
#: pseudo-algorithm name of the row recorded when a member cannot be materialised
LOAD = "<load>"
#: solver statuses that mean "proven optimal" (algorithms report "ok")
PROVEN_STATUSES = frozenset({"optimal", "ok"})
#: outcomes of a run that produced no objective (status == outcome for these)
FAILURE_OUTCOMES = ("error", "timeout", "infeasible", "not_applicable")


def _version() -> str:
    import splitopt

    return splitopt.__version__


class TaskTimeout(BaseException):
    """Raised inside a run that exceeded its hard deadline. A ``BaseException`` so that no
    ``except Exception`` on the way (Pyomo's, a solver wrapper's) can re-label it as an error."""


class _Alarm:
    """What :func:`deadline` yields: ``fired`` once the hard deadline has been raised."""

    fired = False


def _importing() -> bool:
    """Whether some module is being imported right now (its spec is marked initialising)."""
    for mod in list(sys.modules.values()):
        spec = getattr(mod, "__spec__", None)
        if spec is not None and getattr(spec, "_initializing", False):
            return True
    return False


#: how long a deadline that fell inside an import waits before it looks again (seconds)
IMPORT_RETRY = 0.01


@contextmanager
def deadline(seconds: float | None):
    """Raise :class:`TaskTimeout` in the current code after ``seconds`` (POSIX main thread only;
    elsewhere a no-op, and the solver's own time limit is the only guard). An alarm that falls
    inside an import is postponed until the import has finished (see the module docstring)."""
    alarm = _Alarm()
    usable = (seconds is not None and seconds > 0 and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield alarm
        return

    def _raise(signum, frame):
        if _importing():
            signal.setitimer(signal.ITIMER_REAL, IMPORT_RETRY)
            return
        alarm.fired = True
        raise TaskTimeout(f"exceeded the hard time limit of {seconds:g} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield alarm
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def prime_for_threads() -> bool:
    """Do once, in one thread, the lazy first-use set-up that is not thread-safe, before several
    threads of one process solve concurrently (threaded Dask workers).

    Pyomo 6.10's ``LinearStandardFormCompiler`` (the HiGHS path of :mod:`splitopt.solvers.exact`)
    fills its class attributes ``_to_vector``, ``_csc_matrix``, ``_csr_matrix`` on first
    instantiation, importing scipy in between; a second thread arriving meanwhile calls
    ``_csr_matrix`` while it is still ``None`` ("'NoneType' object is not callable"). Returns
    whether the priming ran."""
    try:
        from pyomo.repn.plugins.standard_form import _LinearStandardFormCompiler_impl

        _LinearStandardFormCompiler_impl(None)
        return True
    except Exception:
        return False


# ----------------------------------------------------------------------------------------------
# comparisons


def objectives_agree(a: float, b: float, rel: float = REL_TOL, abs_tol: float = ABS_TOL, scale: float = 1.0) -> bool:
    """``|a - b| <= rel * max(|a|, |b|) + abs_tol * scale``."""
    return abs(a - b) <= rel * max(abs(a), abs(b)) + abs_tol * scale


def relative_gap(objective: float, reference: float, sense: str = "min") -> float:
    """How much worse ``objective`` is than ``reference``, relative to ``|reference|`` (positive =
    worse, for either sense); the absolute difference when ``reference == 0``."""
    diff = objective - reference if sense == "min" else reference - objective
    return diff / abs(reference) if reference != 0 else diff


def compare(objective: float, reference: float, sense: str = "min", scale: float = 1.0) -> tuple[str, float]:
    """``(outcome, gap)`` with outcome ``agree`` / ``worse`` / ``better``."""
    gap = relative_gap(objective, reference, sense)
    if objectives_agree(objective, reference, scale=scale):
        return "agree", gap
    return ("worse" if gap > 0 else "better"), gap


def _scale(objective: float | None, breakdown: Mapping | None) -> float:
    return cost_scale(objective, breakdown)


# ----------------------------------------------------------------------------------------------
# one run of one algorithm


@dataclass
class Run:
    """The outcome of one algorithm on one instance (objective from the evaluator)."""

    algorithm: str
    status: str
    objective: float | None = None
    assignment: Any = None
    breakdown: dict = field(default_factory=dict)
    bound: float | None = None
    seconds: float | None = None
    error: str | None = None
    traceback: str | None = None
    cold_seconds: float | None = None  # the first call, when ``seconds`` is a warm repeat

    @property
    def failed(self) -> bool:
        return self.objective is None


def _short(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0] if msg else ''}"[:2000]


def run_algorithm(fam: Family, instance: Any, name: str, solver: str = "highs",
                  time_limit: float | None = None) -> Run:
    """Run one algorithm of ``fam`` and evaluate its assignment, exactly as
    :func:`splitopt.families.solve` does, but never raising: exceptions, time-outs, missing
    assignments and assignments the evaluator rejects become a :class:`Run` with ``status``
    ``error`` / ``timeout`` and the message in ``error``."""
    algo = fam.algorithms[name]
    opts = algo.accepted({"solver": solver, "time_limit": time_limit})
    if time_limit is not None and algo.option("time_limit") is not None:
        hard = 1.5 * time_limit + 5.0
    else:
        hard = time_limit
    try:  # import the algorithm's module outside the deadline
        algo.resolve()
    except Exception as exc:
        return Run(name, "error", error="cannot import the algorithm: " + _short(exc),
                   traceback=traceback.format_exc(limit=-6))
    t0 = time.perf_counter()
    alarm = _Alarm()
    try:
        with deadline(hard) as alarm:
            out = algo.func(instance, **opts)
    except TaskTimeout as exc:
        return Run(name, "timeout", seconds=time.perf_counter() - t0, error=str(exc))
    except Exception as exc:
        if not alarm.fired:
            return _failed_run(name, exc, time.perf_counter() - t0)
        # the deadline fired and something on the way re-raised it as another exception
        return Run(name, "timeout", seconds=time.perf_counter() - t0,
                   error=f"exceeded the hard time limit of {hard:g} s (surfaced as {_short(exc)})")
    return _finish_run(fam, instance, name, algo, opts, hard, out, time.perf_counter() - t0)


def _failed_run(name: str, exc: Exception, seconds: float) -> "Run":
    """The :class:`Run` of an algorithm that raised ``exc`` (its deadline did not fire)."""
    if isinstance(exc, SolverFailed):  # the exact solver gave no solution (before the InstanceError test)
        return Run(name, "timeout" if exc.status == "time_limit" else "error", seconds=seconds, error=_short(exc))
    if isinstance(exc, InstanceError):  # the algorithm declines this instance
        return Run(name, "not_applicable", seconds=seconds, error=_short(exc))
    # a recorded outcome, never a crash
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-6))
    return Run(name, "error", seconds=seconds, error=_short(exc), traceback=tb)


def _finish_run(fam: Family, instance: Any, name: str, algo, opts: dict, hard: float | None, out: Any,
                seconds: float) -> "Run":
    """The :class:`Run` of an algorithm that returned ``out`` (timed warm too, then evaluated)."""
    cold = None
    first = (fam.name, name) not in _CALLED
    _CALLED.add((fam.name, name))
    if seconds < WARM_REPEAT_BELOW or (first and seconds < FIRST_REPEAT_BELOW):
        # time a warm call too: the first one pays imports and per-graph caches
        cold = seconds
        t1 = time.perf_counter()
        try:
            with deadline(hard):
                algo.func(instance, **opts)
            seconds = time.perf_counter() - t1
        except (Exception, TaskTimeout):  # the first call's result stands; keep its time
            seconds, cold = cold, None
    res = out if isinstance(out, AlgoResult) else AlgoResult(out, status="ok")
    bound = None if res.bound is None else float(res.bound)
    status = str(res.status)
    if res.assignment is None:
        msg = (res.info or {}).get("message") if isinstance(res.info, Mapping) else None
        return Run(name, status if status not in PROVEN_STATUSES else "error", bound=bound, seconds=seconds,
                   error=f"no assignment returned (status {status})" + (f": {msg}" if msg else ""))
    try:
        obj, breakdown = fam.evaluate(instance, res.assignment)
        obj = float(obj)
    except Exception as exc:
        return Run(name, "infeasible", assignment=res.assignment, bound=bound, seconds=seconds,
                   error="evaluator rejected the assignment: " + _short(exc),
                   traceback=traceback.format_exc(limit=-6))
    if not math.isfinite(obj):
        return Run(name, "error", assignment=res.assignment, bound=bound, seconds=seconds,
                   error=f"objective is {obj}: the instance's numbers overflow double precision")
    status = honest_status(status, obj, bound, sense=fam.sense, scale=cost_scale(obj, breakdown))
    return Run(name, status, obj, res.assignment, dict(breakdown or {}), bound, seconds, cold_seconds=cold)


# ----------------------------------------------------------------------------------------------
# the reference (exact formulation + LP relaxation), cached per process

_CACHE: "OrderedDict[tuple, dict]" = OrderedDict()
_CACHE_SIZE = 512


def clear_cache() -> None:
    _CACHE.clear()


def reference_facts(fam: Family, instance: Any, solver: str = "highs", time_limit: float | None = None,
                    h: str | None = None) -> dict:
    """Exact solve and the family's declared relaxations, cached by (content hash, solver, time
    limit). Returns a dict with the reference :class:`Run` under ``"ref"``, the relaxation runs by
    name under ``"relax"``, and the derived numbers ``exact_objective``, ``exact_status``,
    ``exact_bound``, ``exact_seconds``, ``lp_bound``, ``lp_gap`` (of the first relaxation),
    ``scale``."""
    h = h or instance_hash(instance)
    key = (h, solver, time_limit)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    ref_name, relaxations = fam.reference(instance)
    ref = run_algorithm(fam, instance, ref_name, solver, time_limit)
    relax = {r: run_algorithm(fam, instance, r, solver, time_limit)
             for r in relaxations if r != ref_name}
    lp = next(iter(relax.values()), None)
    facts = {"ref": ref, "relax": relax, **_derived(fam, ref, lp)}
    _CACHE[key] = facts
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return facts


def _derived(fam: Family, ref: Run, lp: Run | None) -> dict:
    lp_bound = None if lp is None else lp.bound
    lp_gap = None
    if lp_bound is not None and ref.objective is not None:
        # relaxation gap (bound - exact)/|exact| for max, (exact - bound)/|exact| for min:
        # >= 0 whenever the bound is valid
        diff = ref.objective - lp_bound if fam.sense == "min" else lp_bound - ref.objective
        lp_gap = diff / abs(ref.objective) if ref.objective != 0 else diff
    return {"exact_objective": ref.objective, "exact_status": ref.status, "exact_bound": ref.bound,
            "exact_seconds": ref.seconds, "lp_bound": lp_bound, "lp_gap": lp_gap,
            "scale": _scale(ref.objective, ref.breakdown)}


REFERENCE_KEYS = ("exact_objective", "exact_status", "exact_bound", "exact_seconds", "lp_bound", "lp_gap", "scale")


# ----------------------------------------------------------------------------------------------
# rows


def _graph_size(fam: Family, instance: Any, desc: dict) -> int | None:
    g = getattr(instance, "graph", None)
    if g is not None:
        try:
            return len(g)
        except TypeError:
            pass
    for k in ("n_layers", "layers", "n", "size"):
        v = desc.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def _json_or_none(x: Any) -> str | None:
    if x is None:
        return None
    try:
        return canonical_json(x)
    except (TypeError, ValueError):
        return repr(x)


def _base_row(meta: Mapping[str, Any]) -> dict:
    return {"version": _version(), "host": socket.gethostname(), "pid": os.getpid(), **meta}


def validate_instance(instance: Any, algorithms: Iterable[str] | None = None, solver: str = "highs",
                      time_limit: float | None = None, *, skip: Iterable[str] = (),
                      reference: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None) -> list[dict]:
    """Rows (plain dicts, one per algorithm) comparing ``algorithms`` with the exact formulation.

    ``algorithms=None`` runs every algorithm of the family; names the family does not have are
    ignored (a set may mix families). The reference algorithm's own row is always included unless
    it is in ``skip``; ``skip`` lists algorithms whose rows exist already. ``reference`` supplies
    the exact facts (:data:`REFERENCE_KEYS`) from a stored reference row instead of solving again.
    ``meta`` is copied into every row (``set_name``, ``member_id``, ``member_key``, ``run_id``).
    """
    fam = family_of(instance)
    wanted = list(fam.algorithms) if algorithms is None else [a for a in algorithms if a in fam.algorithms]
    ref_name, _relaxations = fam.reference(instance)
    names = [ref_name] + [a for a in wanted if a != ref_name]
    skip = set(skip)
    names = [a for a in names if a not in skip]
    if not names:
        return []
    h = instance_hash(instance)
    try:
        desc = dict(fam.describe(instance))
    except Exception as exc:
        desc = {"describe_error": _short(exc)}
    common = {**_base_row(meta or {}), "instance_hash": h, "family": fam.name, "solver": solver,
              "size": _graph_size(fam, instance, desc), "describe": _json_or_none(desc), "sense": fam.sense}

    need_ref_run = reference is None or ref_name in names
    facts: dict[str, Any]
    if need_ref_run:
        facts = reference_facts(fam, instance, solver, time_limit, h)
    else:
        facts = {k: reference.get(k) for k in REFERENCE_KEYS}
        facts["scale"] = facts.get("scale") or _scale(facts.get("exact_objective"), None)
    ref_facts = {k: facts.get(k) for k in REFERENCE_KEYS if k != "scale"}
    exact_obj = facts.get("exact_objective")
    exact_secs = facts.get("exact_seconds")

    rows = []
    for name in names:
        algo = fam.algorithms[name]
        if name == ref_name and facts.get("ref") is not None:
            run = facts["ref"]
        elif name in (facts.get("relax") or {}):
            run = facts["relax"][name]
        else:
            run = run_algorithm(fam, instance, name, solver, time_limit)
        row = {**common, **ref_facts, "algorithm": name, "kind": algo.kind,
               "is_reference": int(name == ref_name),
               "exact_algorithm": int(bool(algo.exact)), "paper": int(bool(algo.paper)),
               "formulation": int(bool(algo.formulation)), "status": run.status, "objective": run.objective,
               "bound": run.bound, "seconds": run.seconds, "cold_seconds": run.cold_seconds, "error": run.error, "traceback": run.traceback,
               "assignment": _json_or_none(run.assignment), "finished_at": time.time()}
        if run.failed:
            row.update(outcome=run.status if run.status in FAILURE_OUTCOMES else "error", agree=None, gap=None)
        elif name == ref_name:
            # a reference whose objective and bound disagree is recorded as such, never as "reference"
            row.update(outcome=NUMERICAL if run.status == NUMERICAL else "reference", agree=1, gap=0.0)
        elif exact_obj is None:
            row.update(outcome="no_reference", agree=None, gap=None)
        else:
            outcome, gap = compare(run.objective, exact_obj, fam.sense, facts["scale"])
            row.update(outcome=outcome, agree=int(outcome == "agree"), gap=gap)
        is_ref = name == ref_name
        row["speedup"] = (exact_secs / run.seconds) if (exact_secs and run.seconds and not run.failed
                                                       and not is_ref) else None
        row["scale"] = facts["scale"]
        rows.append(row)
    return rows


# ----------------------------------------------------------------------------------------------
# a task: one member of a set (what the runner ships to a worker)


@dataclass(frozen=True)
class Task:
    """Plain, picklable description of the work for one set member."""

    member: Member
    set_name: str = ""
    algorithms: tuple[str, ...] | None = None
    skip: frozenset = frozenset()
    solver: str = "highs"
    time_limit: float | None = None
    reference: Mapping[str, Any] | None = None
    imports: tuple[str, ...] = ()
    run_id: str = ""


def _load_error_family(member: Member) -> str | None:
    if member.family:
        return member.family
    if member.kind == "file":
        try:
            from splitopt.instances.io import parse_json, read_text_file

            fam = parse_json(read_text_file(member.source[0])).get("family")
            return fam if isinstance(fam, str) else None
        except Exception:
            return None
    return None


def member_error_hash(member: Member) -> str:
    """Row key of a member that could not be materialised (no content to hash)."""
    import hashlib

    return "member:" + hashlib.sha256(member.key.encode("utf-8")).hexdigest()


def error_rows(task: Task, message: str, tb: str | None = None, status: str = "error",
               algorithm: str = LOAD) -> list[dict]:
    """The single row recording that a member failed before any algorithm ran."""
    m = task.member
    return [{**_base_row(_meta(task)), "instance_hash": member_error_hash(m), "algorithm": algorithm,
             "solver": task.solver, "family": _load_error_family(m), "status": status, "outcome": status,
             "error": message, "traceback": tb, "is_reference": 0, "finished_at": time.time()}]


def _meta(task: Task) -> dict:
    return {"set_name": task.set_name, "member_id": task.member.member_id, "member_key": task.member.key,
            "run_id": task.run_id}


def run_task(task: Task) -> list[dict]:
    """Materialise the member and validate it; never raises (errors become rows)."""
    for mod in task.imports:
        try:
            importlib.import_module(mod)
        except Exception:
            pass
    try:
        instance = task.member.load()
    except Exception as exc:
        return error_rows(task, "cannot load instance: " + _short(exc), traceback.format_exc(limit=-6))
    try:
        return validate_instance(instance, task.algorithms, task.solver, task.time_limit, skip=task.skip,
                                 reference=task.reference, meta=_meta(task))
    except Exception as exc:
        return error_rows(task, "harness failure: " + _short(exc), traceback.format_exc(limit=-6),
                          algorithm="<harness>")


__all__ = ["validate_instance", "run_task", "prime_for_threads", "run_algorithm", "reference_facts", "Task", "Run", "compare",
           "objectives_agree", "relative_gap", "deadline", "TaskTimeout", "REL_TOL", "ABS_TOL", "LOAD",
           "clear_cache", "error_rows", "member_error_hash", "REFERENCE_KEYS"]
