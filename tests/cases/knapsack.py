"""A tiny fake family ("vknap": 0/1 knapsack, maximise value) that keeps the validation tests
independent of the real families.

Algorithms: ``milp`` (Pyomo MILP solved through ``splitopt.solvers.exact``, the reference formulation), ``dp`` (exact
dynamic programme), ``greedy_paper`` (greedy by value/weight ratio, flagged exact as "printed":
it fails on the classic instance values 60/100/120, weights 10/20/30, capacity 50), ``lp``
(Dantzig's fractional bound, with the greedy assignment), ``boom`` (always raises), ``picky`` (declines with InstanceError), ``sleepy``
(sleeps 30 s, for time-limit tests). Importing this module registers the family.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import ClassVar

from splitopt import families
from splitopt.errors import InfeasibleSolution, InstanceError, check_number
from splitopt.families import SOLVER_OPTIONS, AlgoResult, Algorithm, Family

CALLS = {"milp": 0}


@dataclass(frozen=True)
class Knap:
    values: tuple
    weights: tuple
    capacity: int
    delay: float = 0.0  # seconds the milp sleeps first (to make runs slow enough to kill)
    family: ClassVar[str] = "vknap"

    def to_dict(self) -> dict:
        return {"values": list(self.values), "weights": list(self.weights), "capacity": self.capacity,
                "delay": self.delay}

    @classmethod
    def from_dict(cls, d) -> "Knap":
        if not isinstance(d, dict):
            raise InstanceError("", f"must be an object, got {type(d).__name__}")
        vals = d.get("values")
        wts = d.get("weights")
        if not isinstance(vals, list) or not isinstance(wts, list) or len(vals) != len(wts):
            raise InstanceError("values", "values and weights must be lists of equal length")
        v = tuple(check_number(f"values[{i}]", x) for i, x in enumerate(vals))
        w = tuple(int(check_number(f"weights[{i}]", x, minimum=0, strict=True)) for i, x in enumerate(wts))
        cap = int(check_number("capacity", d.get("capacity")))
        return cls(v, w, cap, float(check_number("delay", d.get("delay", 0.0))))


def evaluate(inst: Knap, chosen) -> tuple[float, dict]:
    chosen = sorted(set(chosen))
    if any(not (0 <= i < len(inst.values)) for i in chosen):
        raise InfeasibleSolution(f"item index out of range in {chosen}")
    w = sum(inst.weights[i] for i in chosen)
    if w > inst.capacity:
        raise InfeasibleSolution(f"weight {w} exceeds capacity {inst.capacity}")
    v = float(sum(inst.values[i] for i in chosen))
    return v, {"value": v, "weight": float(w)}


def milp(inst: Knap, solver: str = "highs", time_limit: float | None = None) -> AlgoResult:
    import pyomo.environ as pe

    from splitopt.solvers import exact

    CALLS["milp"] += 1
    if inst.delay:
        time.sleep(inst.delay)
    n = len(inst.values)
    m = pe.ConcreteModel()
    m.x = pe.Var(range(n), domain=pe.Binary)
    m.obj = pe.Objective(expr=sum(inst.values[i] * m.x[i] for i in range(n)), sense=pe.maximize)
    m.cap = pe.Constraint(expr=sum(inst.weights[i] * m.x[i] for i in range(n)) <= inst.capacity)
    res = exact.solve(m, solver=solver, time_limit=time_limit)
    chosen = [i for i in range(n) if (pe.value(m.x[i], exception=False) or 0) > 0.5]
    return AlgoResult(chosen if res.objective is not None else None, status=res.status, bound=res.bound,
                      info={"message": getattr(res, "message", "")})


def dp(inst: Knap) -> list[int]:
    cap = inst.capacity
    best = [(0.0, ())] * (cap + 1)
    for i, (v, w) in enumerate(zip(inst.values, inst.weights)):
        new = list(best)
        for c in range(w, cap + 1):
            cand = best[c - w][0] + v
            if cand > new[c][0]:
                new[c] = (cand, best[c - w][1] + (i,))
        best = new
    return list(max(best, key=lambda t: t[0])[1])


def _ratio_order(inst: Knap) -> list[int]:
    return sorted(range(len(inst.values)), key=lambda i: -inst.values[i] / inst.weights[i])


def greedy_paper(inst: Knap) -> list[int]:
    chosen, w = [], 0
    for i in _ratio_order(inst):
        if w + inst.weights[i] <= inst.capacity:
            chosen.append(i)
            w += inst.weights[i]
    return chosen


def lp(inst: Knap, solver: str = "highs", time_limit: float | None = None) -> AlgoResult:
    bound, w = 0.0, 0
    for i in _ratio_order(inst):
        room = inst.capacity - w
        if room <= 0:
            break
        take = min(1.0, room / inst.weights[i])
        bound += take * inst.values[i]
        w += inst.weights[i] if take == 1.0 else room
    return AlgoResult(greedy_paper(inst), status="optimal", bound=bound)


def boom(inst: Knap):
    raise RuntimeError("boom on purpose")


def picky(inst: Knap):
    raise InstanceError("values", "picky solves only instances with a single item")


def crash(inst: Knap):
    """Kills its process on 5-item instances (for worker-crash tests; never run it in-process)."""
    import os

    if len(inst.values) == 5:
        os._exit(3)
    return dp(inst)


def sleepy(inst: Knap):
    time.sleep(30)
    return []


def generate(seed: int, n: int = 6, delay: float = 0.0, graph=None) -> Knap:
    rng = random.Random(seed)
    if graph is not None:
        n = len(graph)
    w = [rng.randint(1, 20) for _ in range(n)]
    v = [rng.randint(1, 30) for _ in range(n)]
    return Knap(tuple(float(x) for x in v), tuple(w), sum(w) // 2, delay)


ALGOS = {a.name: a for a in (
    Algorithm("milp", milp, "formulation", options=SOLVER_OPTIONS),
    Algorithm("dp", dp, "exact"),
    Algorithm("greedy_paper", greedy_paper, "paper", exact=True),
    Algorithm("lp", lp, "relaxation", options=SOLVER_OPTIONS),
    Algorithm("boom", boom, "heuristic"),
    Algorithm("sleepy", sleepy, "heuristic"),
    Algorithm("picky", picky, "exact"),
    Algorithm("crash", crash, "exact"),
)}

FAMILY = families.register(Family(
    name="vknap", instance_type=Knap, evaluate=evaluate, algorithms=ALGOS, default_algorithm="dp",
    reference_algorithm="milp", relaxations=("lp",),
    describe=lambda inst: {"n_layers": len(inst.values), "capacity": inst.capacity},
    sense="max", generate=generate))

#: the classic instance on which ratio-greedy fails (hand computed: optimum 220, greedy 160,
#: Dantzig bound 60 + 100 + (20/30) * 120 = 240)
CLASSIC = Knap((60.0, 100.0, 120.0), (10, 20, 30), 50)


def brute_force(inst: Knap) -> float:
    """Independent oracle: enumerate every subset."""
    import itertools

    n = len(inst.values)
    best = 0.0
    for bits in itertools.product((0, 1), repeat=n):
        if sum(b * w for b, w in zip(bits, inst.weights)) <= inst.capacity:
            best = max(best, sum(b * v for b, v in zip(bits, inst.values)))
    return best
