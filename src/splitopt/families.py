"""The family registry: one place mapping a family name to its instance type, evaluator,
formulations and algorithms.

The CLI's ``solve`` and the validation harness use only this registry. A family module (for
example :mod:`splitopt.models.split`) builds a :class:`Family` and exposes it as ``FAMILY``; the
table :data:`BUILTIN` lists those modules. Adding a family is one line there; adding an algorithm
is one :class:`Algorithm` entry in its family.

Contract of an algorithm: ``func(instance, **options)`` returns either the family's plain-data
assignment or an :class:`AlgoResult` (assignment plus bound/status from an exact solver). The
objective shown to users is then always recomputed by the family's evaluator in :func:`solve`.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from splitopt.solution import Solution

BUILTIN: dict[str, str] = {
    "split": "splitopt.models.split",
    "grouping": "splitopt.models.grouping",
}


@dataclass(frozen=True)
class AlgoResult:
    """What an exact solve returns: the assignment plus solver facts."""

    assignment: Any
    status: str = "optimal"
    bound: float | None = None
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Algorithm:
    """``exact``: proven optimal on every instance it accepts (so the harness expects agreement
    with the exact formulation). ``paper``: the algorithm as printed in the paper (may fail)."""

    name: str
    func: Callable[..., Any]
    exact: bool
    description: str = ""
    paper: bool = False
    formulation: bool = False  # solved by a general solver through solvers.exact


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
    # generate(seed, **params) -> instance: seeded random instances for sets and tests
    generate: Callable[..., Any] | None = None
    # CLI ``splitopt make FAMILY GRAPH ...``: add_make_arguments(parser) then make(graph, args)
    add_make_arguments: Callable[[Any], None] | None = None
    make: Callable[[Any, Any], Any] | None = None
    # CLI ``splitopt solve --k`` style overrides: override(instance, args) -> instance
    add_solve_arguments: Callable[[Any], None] | None = None
    override: Callable[[Any, Any], Any] | None = None


_REGISTRY: dict[str, Family] = {}


def register(family: Family) -> Family:
    _REGISTRY[family.name] = family
    return family


def get_family(name: str) -> Family:
    if name in _REGISTRY:
        return _REGISTRY[name]
    mod = BUILTIN.get(name)
    if mod is None:
        raise KeyError(f"unknown family {name!r} (known: {', '.join(sorted(BUILTIN))})")
    fam = importlib.import_module(mod).FAMILY
    _REGISTRY[name] = fam
    return fam


def family_names() -> list[str]:
    return sorted(set(BUILTIN) | set(_REGISTRY))


def family_of(instance: Any) -> Family:
    return get_family(instance.family)


def evaluate(instance: Any, assignment: Any) -> tuple[float, dict]:
    """The family's evaluator: ``(objective, breakdown)`` of any assignment."""
    return family_of(instance).evaluate(instance, assignment)


def solve(instance: Any, algorithm: str | None = None, **options) -> Solution:
    """Run ``algorithm`` (default: the family's default) and evaluate its assignment.

    The returned objective comes from the evaluator, never from the algorithm's bookkeeping.
    """
    from splitopt.errors import InstanceError

    fam = family_of(instance)
    name = algorithm or fam.default_algorithm
    algo = fam.algorithms.get(name)
    if algo is None:
        raise InstanceError("algorithm", f"unknown algorithm {name!r} for family {fam.name!r} "
                                         f"(known: {', '.join(fam.algorithms)})")
    t0 = time.perf_counter()
    out = algo.func(instance, **options)
    seconds = time.perf_counter() - t0
    res = out if isinstance(out, AlgoResult) else AlgoResult(out, status="ok")
    obj, breakdown = fam.evaluate(instance, res.assignment)
    return Solution(family=fam.name, algorithm=name, assignment=res.assignment, objective=obj,
                    breakdown=breakdown, seconds=seconds, status=res.status, bound=res.bound,
                    info=dict(res.info))


__all__ = ["Family", "Algorithm", "AlgoResult", "register", "get_family", "family_names", "family_of",
           "evaluate", "solve", "BUILTIN"]
