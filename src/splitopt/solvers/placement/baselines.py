"""Baselines of the device model (issue 11), from Tarnawski et al., NeurIPS 2020 (§6, the
comparisons of its Table 2) and its public code:

* the linearised split (the peer's ``-linearize`` / PipeDream-style baseline): :mod:`.linearised`.
* :func:`local_search` (the peer's ``-localSearch``): random colour-class assignments improved by the
  best single-class move until none improves, ``restarts`` times (10 in the paper), seeded. The
  peer's moves only between accelerators and it ignores memory; ours also moves classes to CPU
  cores and keeps memory, support and contiguity feasible (a move that breaks them is skipped).
* :func:`expert`: the human-expert split shipped with the workload (``meta["expert"]``).
* :func:`bruteforce`: every assignment of colour classes to devices up to relabelling identical
  devices (tiny instances).
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from splitopt.errors import InfeasibleSolution, InstanceError, NoFeasibleSolution
from splitopt.families import AlgoResult
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import check_constraints, device_loads, evaluate, objective_of
from splitopt.solvers.placement.linearised import linearised_dp


def expert(instance: PlacementInstance) -> AlgoResult:
    e = instance.meta.get("expert") if isinstance(instance.meta, dict) else None
    if not e:
        raise InstanceError("meta.expert", "this instance carries no expert split (only the shipped bert24 and "
                                           "resnet50 inference workloads do)")
    return AlgoResult(list(e), status="ok")


def _fast_objective(instance: PlacementInstance, p) -> float:
    fwd, bwd, _c = device_loads(instance, p)
    return objective_of(instance, fwd, bwd)


def _feasible(instance: PlacementInstance, p) -> bool:
    try:
        check_constraints(instance, p)
    except InfeasibleSolution:
        return False
    return True


class _Loads:
    """Device loads of a class assignment with O(degree) updates for a class move."""

    def __init__(self, instance: PlacementInstance, p: list[int]):
        self.inst = instance
        self.p = p
        self.k = instance.n_accelerators
        self.touch: dict[int, list[int]] = {}
        for t_i, (u, cons, _s) in enumerate(instance.tensors):
            for v in (u, *cons):
                self.touch.setdefault(v, []).append(t_i)
        fwd, bwd, _c = device_loads(instance, p)
        self.fwd, self.bwd = fwd, bwd

    def _tensor(self, t_i: int, sign: float):
        u, cons, sec = self.inst.tensors[t_i]
        if sec == 0.0:
            return
        p = self.p
        du = p[u]
        dests = {p[c] for c in cons}
        dests.discard(du)
        if not dests:
            return
        arr = self.bwd if self.inst.backward[u] else self.fwd
        if du < self.k:
            arr[du] += sign * sec
        for d in dests:
            if d < self.k:
                arr[d] += sign * sec

    def move(self, cl, d: int):
        inst, p = self.inst, self.p
        ts = sorted({t for i in cl for t in self.touch.get(i, ())})
        for t in ts:
            self._tensor(t, -1.0)
        for i in cl:
            old = p[i]
            for dev, sign in ((old, -1.0), (d, 1.0)):
                tm = inst.cpu_seconds[i] if dev >= self.k else inst.acc_seconds[i]
                if inst.backward[i]:
                    self.bwd[dev] += sign * tm
                else:
                    self.fwd[dev] += sign * tm
            p[i] = d
        for t in ts:
            self._tensor(t, 1.0)

    def objective(self) -> float:
        return objective_of(self.inst, self.fwd, self.bwd)


def local_search(instance: PlacementInstance, restarts: int = 10, seed: int = 0) -> AlgoResult:
    """Best-improvement local search over colour-class moves (module docstring). Random feasible
    starts; for a contiguous instance the first start is the linearised DP's placement."""
    rng = np.random.default_rng([seed, 2020])
    classes = instance.colour_classes
    D = instance.n_devices
    k = instance.n_accelerators
    dev_index = {nm: d for d, nm in enumerate(instance.devices)}
    best_p, best_v = None, math.inf
    for r in range(max(1, int(restarts))):
        p = None
        if r == 0 and instance.contiguity != "none":
            try:
                p = [dev_index[v] for v in linearised_dp(instance).assignment]
            except (InstanceError, InfeasibleSolution):
                p = None
        for _t in range(20 if p is None else 0):
            q = [0] * instance.n_nodes
            for cl in classes:
                ok = [d for d in range(D) if d >= k or all(instance.supported[i] for i in cl)]
                d = int(rng.choice(ok))
                for i in cl:
                    q[i] = d
            if _feasible(instance, q):
                p = q
                break
        if p is None:
            for d in list(range(k, D)) + list(range(k)):
                q = [d] * instance.n_nodes
                if _feasible(instance, q):
                    p = q
                    break
        if p is None:
            continue
        L = _Loads(instance, p)
        cur = L.objective()
        while True:
            move, mv = None, cur
            for ci, cl in enumerate(classes):
                d0 = p[cl[0]]
                for d in range(D):
                    if d == d0:
                        continue
                    L.move(cl, d)
                    v = L.objective()
                    if v < mv * (1 - 1e-12) and _feasible(instance, p):
                        move, mv = (ci, d), v
                    L.move(cl, d0)
            if move is None:
                break
            L.move(classes[move[0]], move[1])
            cur = mv
        if cur < best_v:
            best_v, best_p = cur, list(p)
    if best_p is None:
        raise InfeasibleSolution("local search found no feasible placement")
    return AlgoResult([instance.devices[d] for d in best_p], status="ok", info={"restarts": restarts})


def improve(instance: PlacementInstance, assignment, time_limit: float | None = 5.0, swaps: bool = True) -> AlgoResult:
    """Descent from a given feasible placement (ours, not in the peer's paper): first-improvement
    colour-class moves, then class swaps between two devices, until neither improves or
    ``time_limit`` (seconds) runs out. A step is taken when it lowers the objective, or keeps it
    and lowers the sum of squared excesses of the loads over 98 % of the objective (so a move off
    one of several most loaded devices counts as progress). Every step keeps support, colour
    classes, memory and contiguity (:func:`check_constraints`). The device MILP uses it to improve
    its incumbent (the chain optimum) before the solver starts: on ResNet-50 non-contiguous it
    lowers 33.77 ms to 33.36 ms in about 5 s. Returns the final placement (never worse
    than the start)."""
    from splitopt.models.placement import device_indices

    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
    p = device_indices(instance, assignment)
    check_constraints(instance, p)
    classes = instance.colour_classes
    D = instance.n_devices
    k = instance.n_accelerators
    cl_ok = [[d for d in range(D) if d >= k or all(instance.supported[i] for i in cl)] for cl in classes]
    L = _Loads(instance, p)
    fwdbwd = instance.objective != "max-load"

    def score():
        v = L.objective()
        t = L.fwd + L.bwd if not fwdbwd else np.concatenate([L.fwd, L.bwd])
        ex = np.maximum(t - 0.98 * (t.max() if t.size else 0.0), 0.0)
        return v, float(ex @ ex)

    def better(a, b):
        return a[0] < b[0] * (1 - 1e-12) or (a[0] <= b[0] and a[1] < b[1] * (1 - 1e-9))

    cur = score()
    steps = 0
    out_of_time = False
    improved = True
    while improved and not out_of_time:
        improved = False
        for ci, cl in enumerate(classes):
            if deadline is not None and time.perf_counter() > deadline:
                out_of_time = True
                break
            d0 = p[cl[0]]
            for d in cl_ok[ci]:
                if d == d0:
                    continue
                L.move(cl, d)
                s = score()
                if better(s, cur) and _feasible(instance, p):
                    cur, d0, improved = s, d, True
                    steps += 1
                else:
                    L.move(cl, d0)
        if improved or out_of_time or not swaps:
            continue
        for ci, a in enumerate(classes):
            if deadline is not None and time.perf_counter() > deadline:
                out_of_time = True
                break
            for cj in range(ci + 1, len(classes)):
                b = classes[cj]
                da, db = p[a[0]], p[b[0]]
                if da == db or db not in cl_ok[ci] or da not in cl_ok[cj]:
                    continue
                L.move(a, db)
                L.move(b, da)
                s = score()
                if better(s, cur) and _feasible(instance, p):
                    cur, improved = s, True
                    steps += 1
                else:
                    L.move(b, db)
                    L.move(a, da)
    return AlgoResult([instance.devices[d] for d in p], status="ok",
                      info={"steps": steps, "stopped_by_time": out_of_time})


def bruteforce(instance: PlacementInstance, max_assignments: int = 2_000_000) -> AlgoResult:
    """Every assignment of colour classes to devices (identical devices relabelled: a class may only
    open the next unused accelerator or CPU core); raises InstanceError beyond ``max_assignments``."""
    classes = instance.colour_classes
    G, k, l_ = len(classes), instance.n_accelerators, instance.n_cpus
    if (k + l_) ** G > max_assignments * 50:
        raise InstanceError("instance", f"too large for brute force ({k + l_}^{G} assignments)")
    best_p, best_v, count = None, math.inf, 0
    p = [0] * instance.n_nodes

    def rec(g: int, na: int, nc: int):
        nonlocal best_p, best_v, count
        if g == G:
            count += 1
            if count > max_assignments:
                raise InstanceError("instance", f"too large for brute force (> {max_assignments} assignments)")
            if not _feasible(instance, p):
                return
            v = _fast_objective(instance, p)
            if v < best_v:
                best_v, best_p = v, list(p)
            return
        for d in itertools.chain(range(min(na + 1, k)), range(k, k + min(nc + 1, l_))):
            for i in classes[g]:
                p[i] = d
            rec(g + 1, max(na, d + 1) if d < k else na, max(nc, d - k + 1) if d >= k else nc)

    rec(0, 0, 0)
    if best_p is None:
        raise NoFeasibleSolution("no feasible placement")
    val = evaluate(instance, [instance.devices[d] for d in best_p])[0]
    return AlgoResult([instance.devices[d] for d in best_p], status="optimal", bound=val,
                      info={"assignments": count})


__all__ = ["local_search", "expert", "bruteforce", "improve"]
