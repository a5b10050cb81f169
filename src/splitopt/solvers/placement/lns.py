"""Large-neighbourhood search for the device model (issue 11; ours, not in the peer's paper): re-solve
the placement of the classes of two or three devices exactly, every other device fixed.

Why it is exact on the neighbourhood: a device's load depends only on which classes it holds (its
compute times) and on which tensors cross its boundary; moving classes *between* the devices of a
set ``R`` leaves every device outside ``R`` with the same classes and the same crossing tensors, so
their loads are constants and the sub-MILP over ``R`` (the rows of
:func:`splitopt.models.placement_milp.build_milp` restricted to ``R``, fixed endpoints outside
``R`` entering as zeros) is the whole problem with the other devices frozen.

Each round takes the most loaded device ``a`` and tries ``R = {a, b}`` for every other device ``b``
(least loaded first), then ``R = {a, b, c}``; a sub-solution is accepted when the evaluator's
objective, then the loads sorted decreasingly, get lexicographically smaller. Contiguity ``none``
and ``convex`` (the convex rows of the MILP for the devices of ``R``, written over every forward
class: a path that leaves a device of ``R`` through frozen devices and comes back is seen);
``chain`` is declined (the ideal branch and bound is exact there).
On ResNet-50 non-contiguous it lowers the descent's 33.36 ms placement (see
:func:`~splitopt.solvers.placement.baselines.improve`); every accepted placement is
scored by the evaluator.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from splitopt.errors import InfeasibleSolution, InstanceError, NoFeasibleSolution
from splitopt.families import AlgoResult
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import class_data, class_tensors, device_indices, device_loads, evaluate
from splitopt.solvers.placement.common import lex_less


def _key(instance: PlacementInstance, p: list[int]) -> tuple:
    f, b, _c = device_loads(instance, p)
    return (evaluate(instance, p)[0],) + tuple(sorted((f + b).tolist(), reverse=True))


def _sub_milp(instance: PlacementInstance, p: list[int], R: tuple[int, ...], time_limit: float):
    """Best placement of the classes on the devices ``R`` with every other device fixed; ``None``
    when the solver returns nothing usable."""
    import pyomo.environ as pyo

    from splitopt.solvers import exact

    cls, _cpu, _acc, size, sup = class_data(instance)
    k = instance.n_accelerators
    back = instance.backward
    cls_of, all_tens = class_tensors(instance)
    dev = [p[mem[0]] for mem in cls]
    U = [g for g in range(len(cls)) if dev[g] in R]
    inU = set(U)
    if len(U) < 2:
        return None
    parts = [None] if instance.objective == "max-load" else [False, True]
    f, b, _c = device_loads(instance, p)
    frozen = [d for d in range(instance.n_devices) if d not in R]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(U, R, domain=pyo.Binary)
    m.one = pyo.Constraint(U, rule=lambda m, g: sum(m.x[g, d] for d in R) == 1)
    for g in U:
        for d in R:
            if d < k and not sup[g]:
                m.x[g, d].fix(0)

    def mem_of(h, d):
        return m.x[h, d] if h in inU else 0

    tens = [t for t in all_tens if t[0] in inU or any(h in inU for h in t[1])]
    acc_d = [d for d in R if d < k]
    m.cin = pyo.Var(range(len(tens)), acc_d, bounds=(0, 1))
    m.cout = pyo.Var(range(len(tens)), acc_d, bounds=(0, 1))
    m.comm = pyo.ConstraintList()
    for t_i, (gu, gs, _s, _b) in enumerate(tens):
        for d in acc_d:
            for gv in gs:
                if gv in inU or gu in inU:
                    m.comm.add(m.cin[t_i, d] >= mem_of(gv, d) - mem_of(gu, d))
                    m.comm.add(m.cout[t_i, d] >= mem_of(gu, d) - mem_of(gv, d))

    def load(d, part):
        secs = instance.acc_seconds if d < k else instance.cpu_seconds
        e = sum(math.fsum(secs[i] for i in cls[g] if part is None or back[i] == part) * m.x[g, d] for g in U)
        if d < k:
            e += sum(s * (m.cin[t_i, d] + m.cout[t_i, d]) for t_i, (_gu, _gs, s, bk) in enumerate(tens)
                     if part is None or bk == part)
        return e

    m.T = pyo.Var(range(len(parts)), domain=pyo.NonNegativeReals)
    m.rows = pyo.ConstraintList()
    for pi, part in enumerate(parts):
        for d in R:
            m.rows.add(m.T[pi] >= load(d, part))
        if part is not None and frozen:
            # fwd+bwd: the frozen devices' maxima are part of the objective
            m.rows.add(m.T[pi] >= float(max((b if part else f)[d] for d in frozen)))
    if instance.contiguity == "convex":
        # the convex rows of build_milp for the devices of R over every forward class (frozen classes
        # are on no device of R: x = 0); a path through frozen devices counts, as it must
        fedges = sorted({(cls_of[u], cls_of[v]) for u, v in instance.forward_edges if cls_of[u] != cls_of[v]})
        fcls = sorted({g for e in fedges for g in e})
        m.z = pyo.Var(fcls, R, bounds=(0, 1))
        for d in R:
            for g in fcls:
                if g in inU:
                    m.rows.add(m.z[g, d] >= m.x[g, d])
            for gu, gv in fedges:
                m.rows.add(m.z[gv, d] <= m.z[gu, d])
                if gu in inU or gv in inU:  # both frozen: the row reads z <= 1
                    m.rows.add(m.z[gv, d] <= mem_of(gv, d) - mem_of(gu, d) + 1)
    cap = instance.acc_memory_bytes
    if cap is not None:
        for d in acc_d:
            if cap <= 0:
                for g in U:
                    if size[g] > 0:
                        m.x[g, d].fix(0)
                continue
            # scaled by the capacity, as in build_milp (bytes against 16 GiB would span 1e10)
            e = sum(size[g] / cap * m.x[g, d] for g in U if size[g] > 0)
            if not isinstance(e, (int, float)):
                m.rows.add(e <= 1)
    # only strictly better sub-solutions are wanted: cap the objective at the current value and stop
    # at the second improving solution (a first one is often barely better)
    now = (float(max(f[d] + b[d] for d in R)) if parts == [None]
           else float(max(f[d] for d in range(len(f)))) + float(max(b[d] for d in range(len(b)))))
    m.cap = pyo.Constraint(expr=sum(m.T[pi] for pi in range(len(parts))) <= now * (1 - 1e-9))
    m.obj = pyo.Objective(expr=sum(m.T[pi] for pi in range(len(parts))))
    res = exact.solve(m, "highs", time_limit=time_limit, options={"mip_max_improving_sols": 2})
    if not res.has_solution:
        return None
    q = list(p)
    for g in U:
        d = max(R, key=lambda d: m.x[g, d].value or 0.0)
        for i in cls[g]:
            q[i] = d
    return q


def lns(instance: PlacementInstance, assignment, time_limit: float | None = 10.0, sub_time: float = 2.0,
        triples: bool = True, stop=None, publish: str | None = None) -> AlgoResult:
    """Improve a feasible placement by exact re-placement on pairs and triples of devices (module
    docstring). Returns a placement never worse than ``assignment`` (evaluator objective);
    ``info['rounds']`` counts accepted sub-solutions. ``stop``: a callable asked before each
    sub-MILP; when it returns true the search ends (the MILP running beside it has finished).
    ``publish``: a file each better placement is written to (pickled device names, replaced
    atomically), for the process that started this one in a child (:meth:`.guard.Child.latest`)."""
    if instance.contiguity == "chain":
        raise InstanceError("contiguity", "is 'chain': the ideal branch and bound (ideals) is exact there; "
                                          "the device LNS handles 'none' and 'convex'")
    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
    # the sub-MILPs' modules, before the first is timed (a first import of pyomo.environ in the
    # process takes about 0.5 s: a 3 s call ended at 3.1-3.2 s)
    import pyomo.environ  # noqa: F401

    from splitopt.solvers import exact  # noqa: F401
    p = device_indices(instance, assignment)
    cur = _key(instance, p)
    D = instance.n_devices
    rounds = 0
    stopped = False
    # the most a sub-MILP took beyond the time it was given (its Pyomo build and hand-over to
    # HiGHS, which the solver's limit does not see), and before the first, 0.1 ms per node and
    # device re-placed: the solver gets that much less, and none starts that cannot finish.
    # Measured 2026-11-25: 0.2-0.3 ms per node on the devices re-placed, build and solve, on a
    # 6,083-node training graph (1.5 s for 5,551 nodes); the first sub-MILP overran a call's
    # 0.43 s by 0.56 s
    over = 0.0
    while True:
        f, b, _c = device_loads(instance, p)
        tot = f + b
        a = int(np.argmax(tot))
        others = sorted((d for d in range(D) if d != a), key=lambda d: tot[d])
        sets = [(a, o) for o in others]
        if triples:
            sets += [(a,) + pair for pair in itertools.combinations(others, 2)]
        moved = False
        for R in sets:
            if deadline is None:
                left = None
            else:
                build = 1e-4 * len(R) * sum(1 for d in p if d in R)
                left = deadline - time.perf_counter() - max(over, build)
            if (left is not None and left <= 0.02) or (stop is not None and stop()):
                stopped = True
                break
            give = sub_time if left is None else min(sub_time, left)
            t1 = time.perf_counter()
            q = _sub_milp(instance, p, tuple(sorted(R)), give)
            over = max(over, time.perf_counter() - t1 - give)
            if q is None:
                continue
            try:
                key = _key(instance, q)
            except InfeasibleSolution:  # e.g. memory within the solver's tolerance only: skipped
                continue
            if lex_less(key, cur):
                p, cur, moved = q, key, True
                rounds += 1
                if publish is not None:
                    _publish(publish, [instance.devices[d] for d in p])
                break
        if stopped or not moved:
            break
    return AlgoResult([instance.devices[d] for d in p], status="ok",
                      info={"rounds": rounds, "stopped_by_time": stopped})


def _publish(path: str, assignment: list[str]) -> None:
    import os
    import pickle

    with open(path + ".tmp", "wb") as fh:
        pickle.dump(assignment, fh)
    os.replace(path + ".tmp", path)


def solve(instance: PlacementInstance, time_limit: float | None = None) -> AlgoResult:
    """Registry entry ``lns``: the device MILP's incumbent phase (linearised DP, chain optimum,
    descent; up to 0.2 of ``time_limit``; where it finds nothing, the MILP's first placement,
    :func:`~.incumbent.first_feasible`), then :func:`lns` with the rest (10 s without a limit).
    A heuristic: no bound."""
    from splitopt.solvers.placement.incumbent import first_feasible
    from splitopt.solvers.placement.incumbent import incumbent as _incumbent

    if instance.contiguity == "chain":
        raise InstanceError("contiguity", "is 'chain': the ideal branch and bound (ideals) is exact there; "
                                          "the device LNS handles 'none' and 'convex'")
    t0 = time.perf_counter()
    start, _v = _incumbent(instance, None if time_limit is None else 0.2 * time_limit)
    if start is None:  # the heuristics found none: the MILP's first placement, or its proof of none
        left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 0.05)
        start, _v = first_feasible(instance, left)
    if start is None:
        raise NoFeasibleSolution("no feasible starting placement found within the time limit (memory, support "
                                 "or contiguity); a longer --time-limit may find one")
    rest = 10.0 if time_limit is None else max(time_limit - (time.perf_counter() - t0), 0.0)
    return lns(instance, start, time_limit=rest) if rest > 0 else AlgoResult(start, status="time_limit")


__all__ = ["lns", "solve"]
