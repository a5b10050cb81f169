"""The family registry: everything the CLI, the instance sets, the validation harness and the
reports know about a problem family, declared as data in one module per family.

A family module (``splitopt.families.split``, ``splitopt.families.grouping``, ...) builds one
:class:`Family` and exposes it as ``FAMILY``; :data:`BUILTIN` maps family names to those modules,
so adding a family is its own modules plus one line there. Families from outside the package (a
test's toy family, a user's) call :func:`register`.

What a family declares:

* its instance type, evaluator (the single source of truth for objective values), ``describe``
  and ``render`` for the CLI, and the optimisation ``sense``;
* its algorithms (:class:`Algorithm`): a *kind* (:data:`KINDS`), a lazily imported target
  ``"module:function"``, fixed keyword arguments (``variant="paper"``), and the :class:`Option`
  list each accepts (time limit, solver, node limit, ...) with defaults and help text. The harness
  and the CLI pass an option only to algorithms that declare it;
* which formulation is the ``reference_algorithm`` (what every algorithm is compared against) and
  which algorithms are ``relaxations`` (their ``bound`` is recorded as a lower bound, with its gap);
* its instance-set recipes (:class:`SetRecipes`: parameters of ``generate`` for the ``quick``,
  ``<family>-random``, ``zoo`` and ``pipedream`` sets);
* optional hooks, lazily imported ``"module:function"`` strings: ``sweep`` (exact parameter sweeps,
  :mod:`splitopt.validation.sweep`) and ``claims`` (the papers' claims for ``splitopt audit``,
  :mod:`splitopt.validation.audit`);
* its CLI: ``make_arguments`` / ``make`` for ``splitopt make FAMILY GRAPH`` and
  ``solve_arguments`` / ``override`` for family options of ``splitopt solve``, as :class:`Arg`
  records.

Contract of an algorithm: ``func(instance, **options)`` returns either the family's plain-data
assignment or an :class:`AlgoResult` (assignment plus status, bound and facts). The objective
shown to users is always recomputed by the family's evaluator in :func:`solve`.
"""

from __future__ import annotations

import importlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from splitopt.errors import SplitoptError
from splitopt.solution import Solution

BUILTIN: dict[str, str] = {
    "split": "splitopt.families.split",
    "grouping": "splitopt.families.grouping",
    "throughput": "splitopt.families.throughput",
    "pipeline": "splitopt.families.pipeline",
    "placement": "splitopt.families.placement",
}

#: Algorithm kinds. ``exact``: a combinatorial algorithm proven optimal on every instance it
#: accepts; ``formulation``: an exact model solved by a general solver; ``relaxation``: a bound
#: (its assignment, if any, is a rounding); ``paper``: the algorithm as printed in a paper (may
#: fail: the point is to show where); ``heuristic``: no optimality claim; ``baseline``: a
#: reference point from practice or another tool (trivial splits, public reimplementations).
KINDS = ("exact", "formulation", "relaxation", "paper", "heuristic", "baseline")


@dataclass(frozen=True)
class AlgoResult:
    """What an algorithm may return instead of a bare assignment: the assignment plus facts."""

    assignment: Any
    status: str = "optimal"
    bound: float | None = None
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Option:
    """An option an algorithm accepts (keyword argument of its function)."""

    name: str
    type: Callable[[str], Any] = str
    default: Any = None
    help: str = ""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


TIME_LIMIT = Option("time_limit", float, None,
                    "wall-clock limit in seconds; the algorithm stops and reports its best solution and bound")
SOLVER = Option("solver", str, "highs", "exact solver: highs (default), scip, cbc, or any solver Pyomo knows")
MIP_GAP = Option("mip_gap", float, None, "relative optimality gap at which the solver may stop")
NODE_LIMIT = Option("node_limit", int, None, "largest number of search nodes to explore")
#: the options of every algorithm solved by a general solver
SOLVER_OPTIONS = (SOLVER, TIME_LIMIT)


@dataclass(frozen=True)
class Algorithm:
    """One algorithm of a family, declared as data.

    ``target`` is a callable or a lazy ``"module:function"`` reference (imported on first use, so
    listing families imports no solver). ``fixed`` are keyword arguments always passed (for example
    ``{"variant": "paper"}``). ``exact`` defaults to ``kind in ("exact", "formulation")``; set it
    explicitly for, e.g., an LP relaxation that is integral (the harness then expects agreement).
    """

    name: str
    target: Callable[..., Any] | str
    kind: str = "exact"
    description: str = ""
    options: tuple[Option, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)
    exact: bool | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"algorithm {self.name!r}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.exact is None:
            object.__setattr__(self, "exact", self.kind in ("exact", "formulation"))

    @property
    def paper(self) -> bool:
        return self.kind == "paper"

    @property
    def formulation(self) -> bool:
        """Solved by a general solver (a formulation or its relaxation)."""
        return self.kind in ("formulation", "relaxation")

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def resolve(self) -> Callable[..., Any]:
        """The target function (imported now if it was given as ``"module:function"``)."""
        t = self.target
        if isinstance(t, str):
            mod, _, fn = t.partition(":")
            t = getattr(importlib.import_module(mod), fn)
        return t

    def func(self, instance: Any, **options) -> Any:
        return self.resolve()(instance, **{**self.fixed, **options})

    def accepted(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The subset of ``options`` this algorithm declares (``None`` values dropped)."""
        names = {o.name for o in self.options}
        return {k: v for k, v in options.items() if k in names and v is not None}


@dataclass(frozen=True)
class Arg:
    """One ``argparse`` argument of a family's CLI: ``parser.add_argument(*flags, **kwargs)``."""

    flags: tuple[str, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def add_to(self, parser) -> Any:
        return parser.add_argument(*self.flags, **dict(self.kwargs))


def arg(*flags: str, **kwargs) -> Arg:
    return Arg(tuple(flags), kwargs)


def field_overrides(solve_arguments: tuple[Arg, ...]) -> Callable[[Any, Any], Any]:
    """A family's ``override`` for ``solve_arguments`` that each name an instance field (argparse's
    destination: ``--max-splits`` -> ``max_splits``): a field given on the command line replaces the
    instance's, through ``instance.with_``."""
    names = tuple(a.kwargs.get("dest") or next(f for f in a.flags if f.startswith("--"))[2:].replace("-", "_")
                  for a in solve_arguments)

    def override(instance, args):
        ch = {k: getattr(args, k, None) for k in names}
        ch = {k: v for k, v in ch.items() if v is not None}
        return instance.with_(**ch) if ch else instance

    return override


@dataclass(frozen=True)
class SetRecipes:
    """Parameters of ``Family.generate`` for the built-in instance sets.

    ``quick``: the ``quick`` set (``quick_seeds`` seeds per family); ``random``: the
    ``<family>-random`` set (``random_seeds`` seeds by default); ``graph``: the ``zoo`` and
    ``pipedream`` sets (``generate(seed, graph=<packaged graph>, **graph)``). ``None`` leaves the
    family out of that set. Parameter values of ``None`` mean "drawn from the seed" by convention
    of each family's ``generate``.
    """

    quick: Mapping[str, Any] | None = None
    random: Mapping[str, Any] | None = None
    graph: Mapping[str, Any] | None = None
    quick_seeds: int = 12
    random_seeds: int = 1000


@dataclass(frozen=True)
class Family:
    name: str
    instance_type: type
    evaluate: Callable[[Any, Any], tuple[float, dict]]
    algorithms: Mapping[str, Algorithm]
    default_algorithm: str
    reference_algorithm: str  # the exact formulation the harness compares against
    describe: Callable[[Any], dict]
    render: Callable[[Any, Solution], str] | None = None
    sense: str = "min"  # "min" or "max"
    description: str = ""
    relaxations: tuple[str, ...] = ()  # algorithms whose bound is a relaxation bound
    # generate(seed, **params) -> instance: seeded random instances for sets and tests
    generate: Callable[..., Any] | None = None
    sets: SetRecipes = SetRecipes()
    # ``splitopt make FAMILY GRAPH``: make(source, args) with source a GraphSource
    make_arguments: tuple[Arg, ...] = ()
    make: Callable[[Any, Any], Any] | None = None
    # ``splitopt solve`` family options: override(instance, args) -> instance
    solve_arguments: tuple[Arg, ...] = ()
    override: Callable[[Any, Any], Any] | None = None
    # ``splitopt sweep``: "module:function", function(instance, param, lo, hi, *, samples, check) -> SweepResult
    # (splitopt.validation.sweep); the module's ``PARAMS`` dict names the parameters
    sweep: str | None = None
    # ``splitopt audit``: "module:function", function() -> list of splitopt.validation.audit.Claim
    claims: str | None = None
    # one family, several instance types (issue 11: the throughput family's device instances):
    # reference_for(instance) -> (reference algorithm, relaxations) for that instance, or None for
    # the family-wide reference_algorithm and relaxations
    reference_for: Callable[[Any], tuple[str, tuple[str, ...]] | None] | None = None

    def reference(self, instance: Any) -> tuple[str, tuple[str, ...]]:
        """``(reference algorithm, relaxations)`` the harness uses for ``instance``: the family's
        :attr:`reference_algorithm` and :attr:`relaxations` unless :attr:`reference_for` declares
        others for this instance."""
        got = self.reference_for(instance) if self.reference_for is not None else None
        if got is None:
            return self.reference_algorithm, tuple(self.relaxations)
        ref, relax = got
        for a in (ref, *relax):
            if a not in self.algorithms:
                raise ValueError(f"family {self.name!r}: reference_for named {a!r}, not one of its algorithms")
        return ref, tuple(relax)

    def __post_init__(self):
        for a in (self.default_algorithm, self.reference_algorithm, *self.relaxations):
            if a not in self.algorithms:
                raise ValueError(f"family {self.name!r}: {a!r} is not one of its algorithms")
        for key, a in self.algorithms.items():
            if key != a.name:
                raise ValueError(f"family {self.name!r}: algorithm registered as {key!r} is named {a.name!r}")

    def algorithm(self, name: str | None) -> Algorithm:
        from splitopt.errors import InstanceError

        name = name or self.default_algorithm
        a = self.algorithms.get(name)
        if a is None:
            raise InstanceError("algorithm", f"unknown algorithm {name!r} for family {self.name!r} "
                                             f"(known: {', '.join(self.algorithms)})")
        return a


#: status of an exact answer whose evaluator objective and bound do not agree (see honest_status)
NUMERICAL = "numerical"


def cost_scale(objective: float | None, breakdown: Mapping | None = None) -> float:
    """Magnitude of an objective's cost terms: ``max(1, |objective|, sum |numeric breakdown terms|)``,
    so that an objective formed from large terms is compared at their round-off level."""
    s = abs(objective) if objective is not None and math.isfinite(objective) else 0.0
    terms = sum(abs(v) for v in (breakdown or {}).values()
                if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))
    return max(1.0, s, terms)


def honest_status(status: str, objective: float | None, bound: float | None, *, sense: str = "min",
                  scale: float = 1.0, gap: float | None = None, rel: float = 1e-9, abs_tol: float = 1e-9) -> str:
    """``"optimal"`` only when the bound and the **evaluator's** objective agree.

    An answer a solver calls optimal is kept optimal iff its bound is finite and on the right side
    of the objective (``bound <= objective`` when minimising, within ``rel * max(|objective|,
    |bound|) + abs_tol * scale``) and not further from it than the stated relative ``gap``. Anything
    else (a bound above the objective, an infinite or absurd bound, a gap wider than claimed) is
    :data:`NUMERICAL`: the solver's claim did not survive the check. Other statuses pass unchanged.
    """
    if status != "optimal" or bound is None or objective is None:
        return status
    if not (math.isfinite(bound) and math.isfinite(objective)):
        return NUMERICAL
    mag = max(abs(objective), abs(bound))
    tol = rel * mag + abs_tol * scale
    diff = objective - bound if sense == "min" else bound - objective
    if diff < -tol or diff > (gap or 0.0) * mag + tol:
        return NUMERICAL
    return status


_REGISTRY: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add (or replace) a family outside :data:`BUILTIN`; returns it."""
    _REGISTRY[family.name] = family
    return family


def get_family(name: str) -> Family:
    if name in _REGISTRY:
        return _REGISTRY[name]
    mod = BUILTIN.get(name)
    if mod is None:
        raise KeyError(f"unknown family {name!r} (known: {', '.join(family_names())})")
    fam = importlib.import_module(mod).FAMILY
    _REGISTRY[name] = fam
    return fam


def family_names() -> list[str]:
    """Built-in families in :data:`BUILTIN` order, then registered ones by name."""
    return list(BUILTIN) + sorted(set(_REGISTRY) - set(BUILTIN))


def family_of(instance: Any) -> Family:
    return get_family(instance.family)


def evaluate(instance: Any, assignment: Any) -> tuple[float, dict]:
    """The family's evaluator: ``(objective, breakdown)`` of any assignment."""
    return family_of(instance).evaluate(instance, assignment)


def solve(instance: Any, algorithm: str | None = None, **options) -> Solution:
    """Run ``algorithm`` (default: the family's default) and evaluate its assignment.

    ``options`` are passed as given; one the algorithm does not take is an
    :class:`~splitopt.errors.InstanceError` naming it and the algorithms that take it (as the CLI
    says it), not a ``TypeError``. The returned objective comes from the evaluator, never from the
    algorithm's bookkeeping.
    """
    fam = family_of(instance)
    algo = fam.algorithm(algorithm)
    t0 = time.perf_counter()
    try:
        out = algo.func(instance, **options)
    except TypeError as exc:
        # raised by the call itself (the arguments did not bind in Algorithm.func's call), not from
        # inside the algorithm
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is None or tb.tb_frame.f_code is not Algorithm.func.__code__:
            raise
        bad = [k for k in options if f"'{k}'" in str(exc)]
        if not bad:
            raise
        from splitopt.errors import InstanceError

        takers = ", ".join(n for n, x in fam.algorithms.items() if x.option(bad[0]) is not None) or "none"
        raise InstanceError(bad[0], f"is not an option of algorithm {algo.name!r} (algorithms that take it: "
                                    f"{takers})") from None
    seconds = time.perf_counter() - t0
    res = out if isinstance(out, AlgoResult) else AlgoResult(out, status="ok")
    try:
        obj, breakdown = fam.evaluate(instance, res.assignment)
    except SplitoptError as exc:
        if res.status not in (NUMERICAL, "unknown", "error"):
            raise
        from splitopt.errors import SolverFailed

        raise SolverFailed(f"{algo.name}: the solver's answer ({res.status}) is not a valid solution: {exc}",
                           status=res.status) from exc
    if not math.isfinite(obj):
        from splitopt.errors import NonFiniteObjective

        raise NonFiniteObjective(f"objective: {algo.name} returned a solution whose cost is {obj} (the instance's "
                                 "numbers overflow double precision; scale them or see the range limits)")
    status = honest_status(res.status, obj, res.bound, sense=fam.sense, scale=cost_scale(obj, breakdown),
                           gap=options.get("mip_gap"))
    info, bound = dict(res.info), res.bound
    if status == NUMERICAL and bound is not None:
        # the solver's optimality claim failed the check (or the algorithm said so): its bound is not
        # trusted either, so it is not shown as one (kept in info for diagnosis)
        info["untrusted_bound"], bound = bound, None
    return Solution(family=fam.name, algorithm=algo.name, assignment=res.assignment, objective=obj,
                    breakdown=breakdown, seconds=seconds, status=status, bound=bound, info=info)


__all__ = ["Family", "Algorithm", "AlgoResult", "Option", "Arg", "arg", "field_overrides", "SetRecipes", "KINDS", "TIME_LIMIT",
           "SOLVER", "MIP_GAP", "NODE_LIMIT", "SOLVER_OPTIONS", "NUMERICAL", "honest_status", "cost_scale", "register", "get_family", "family_names",
           "family_of", "evaluate", "solve", "BUILTIN"]
