"""A toy family, ``toybisect``, declared entirely in this module: cut a chain of weights into a
prefix and a suffix so that the heavier side is as light as possible.

It exists to prove that a family plugs in through its registry declaration alone: the test
``tests/test_toy_family.py`` runs ``splitopt make / solve / validate / report / families`` on it
without any edit outside this module. Algorithms: ``scan`` (exact prefix scan), ``bruteforce``,
``milp`` (Pyomo MILP through the exact-solver front door, the reference), ``lp`` (its relaxation,
a bound), ``half_paper`` (cut at the middle index: a "paper variant" that fails on skewed weights).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import ClassVar

from splitopt import families
from splitopt.errors import InfeasibleSolution, InstanceError, check_number
from splitopt.families import SOLVER_OPTIONS, AlgoResult, Algorithm, Family, SetRecipes, arg


@dataclass(frozen=True)
class Bisect:
    weights: tuple[float, ...]
    name: str = "toy"
    family: ClassVar[str] = "toybisect"

    def to_dict(self) -> dict:
        return {"weights": list(self.weights), "name": self.name}

    @classmethod
    def from_dict(cls, d) -> "Bisect":
        if not isinstance(d, dict) or not isinstance(d.get("weights"), list) or len(d["weights"]) < 2:
            raise InstanceError("weights", "must be a list of at least two numbers")
        return cls(tuple(check_number(f"weights[{i}]", w) for i, w in enumerate(d["weights"])),
                   str(d.get("name", "toy")))


def evaluate(inst: Bisect, cut) -> tuple[float, dict]:
    """Objective of cutting after ``cut`` items (1 <= cut < n): the heavier side's weight."""
    if isinstance(cut, bool) or not isinstance(cut, int) or not 1 <= cut < len(inst.weights):
        raise InfeasibleSolution(f"cut must be an integer in 1..{len(inst.weights) - 1}, got {cut!r}")
    left, right = math.fsum(inst.weights[:cut]), math.fsum(inst.weights[cut:])
    return max(left, right), {"left": left, "right": right}


def scan(inst: Bisect) -> int:
    return min(range(1, len(inst.weights)), key=lambda c: evaluate(inst, c)[0])


def bruteforce(inst: Bisect) -> int:
    best = None
    for c in range(1, len(inst.weights)):
        v = evaluate(inst, c)[0]
        if best is None or v < best[0]:
            best = (v, c)
    return best[1]


def half_paper(inst: Bisect) -> int:
    return len(inst.weights) // 2


def _milp(inst: Bisect, solver: str = "highs", time_limit: float | None = None, relax: bool = False):
    import pyomo.environ as pyo

    from splitopt.solvers import exact

    n = len(inst.weights)
    m = pyo.ConcreteModel()
    m.y = pyo.Var(range(1, n), domain=pyo.Binary)  # y[c] = 1: cut after c items
    m.t = pyo.Var(domain=pyo.NonNegativeReals)
    m.one = pyo.Constraint(expr=sum(m.y.values()) == 1)
    m.left = pyo.Constraint(expr=m.t >= sum(math.fsum(inst.weights[:c]) * m.y[c] for c in range(1, n)))
    m.right = pyo.Constraint(expr=m.t >= sum(math.fsum(inst.weights[c:]) * m.y[c] for c in range(1, n)))
    m.obj = pyo.Objective(expr=m.t)
    res = exact.solve(m, solver=solver, time_limit=time_limit, relax=relax)
    cut = max(range(1, n), key=lambda c: pyo.value(m.y[c])) if res.objective is not None else None
    return AlgoResult(cut, status=res.status, bound=res.bound)


def milp(inst: Bisect, solver: str = "highs", time_limit: float | None = None) -> AlgoResult:
    return _milp(inst, solver, time_limit)


def lp(inst: Bisect, solver: str = "highs", time_limit: float | None = None) -> AlgoResult:
    return _milp(inst, solver, time_limit, relax=True)


def generate(seed: int, n: int = 6, graph=None) -> Bisect:
    rng = random.Random(seed)
    if graph is not None:
        n = len(graph)
    return Bisect(tuple(float(rng.randint(1, 9) * (10 if i == 0 else 1)) for i in range(n)), f"toy-s{seed}")


def make(source, args) -> Bisect:
    g = source.graph
    w = [float(getattr(lay, args.weights)) for lay in g.layers]
    return Bisect(tuple(w), f"{g.name}-{args.weights}")


def override(inst: Bisect, args) -> Bisect:
    if args.scale is None:
        return inst
    return Bisect(tuple(w * args.scale for w in inst.weights), f"{inst.name}-x{args.scale:g}")


FAMILY = families.register(Family(
    name="toybisect", instance_type=Bisect, evaluate=evaluate,
    algorithms={a.name: a for a in (
        Algorithm("scan", scan, "exact", "prefix scan"),
        Algorithm("bruteforce", bruteforce, "exact", "every cut"),
        Algorithm("milp", milp, "formulation", "one binary per cut", options=SOLVER_OPTIONS),
        Algorithm("lp", lp, "relaxation", "LP relaxation of the MILP", options=SOLVER_OPTIONS),
        Algorithm("half_paper", half_paper, "paper", "cut at the middle index"),
    )},
    default_algorithm="scan", reference_algorithm="milp", relaxations=("lp",),
    describe=lambda inst: {"name": inst.name, "n": len(inst.weights), "total": math.fsum(inst.weights)},
    render=lambda inst, sol: f"{inst.name}: cut after {sol.assignment} items, heavier side {sol.objective:g}",
    description="toy: bisect a chain of weights (test family)",
    generate=generate, sets=SetRecipes(random={"n": 5}, random_seeds=6),
    make_arguments=(arg("--weights", choices=("macs", "params", "out_bytes"), default="params",
                        help="layer attribute used as weight"),),
    make=make,
    solve_arguments=(arg("--scale", type=float, default=None, help="toybisect: multiply every weight"),),
    override=override,
))
