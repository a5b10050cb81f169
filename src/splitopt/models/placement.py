"""The mathematics of the ``placement`` family, the device model of the peer (issues 11 and 22):
the evaluator (single source of truth), class data and the combinatorial bounds; the MILP is in
:mod:`splitopt.models.placement_milp`.

Source: Tarnawski et al., "Efficient Algorithms for Device Placement of DNN Graph Operators",
NeurIPS 2020, §4 (min max-load) and its integer program (the public ``throughput-ip/ip.py`` of
msr-fiddle/dnn-partitioning, read for the model, not copied). Instance semantics in
:mod:`splitopt.instances.placement`.

* :func:`evaluate`: loads per device, objective ``max-load`` or ``fwd+bwd``; rejects (with
  :class:`~splitopt.errors.InfeasibleSolution`) unsupported nodes on accelerators, broken colour
  classes, accelerator memory overflows and broken contiguity.
* :func:`work_bound`, :func:`cardinality_bound`: lower bounds of every contiguity.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from splitopt.errors import InfeasibleSolution, InstanceError, NoFeasibleSolution
from splitopt.instances.placement import PlacementInstance


# ---------------------------------------------------------------------- evaluator
def device_indices(instance: PlacementInstance, assignment: Any) -> list[int]:
    """Assignment (device names ``acc0..``, ``cpu0..`` or indices, one per node) -> device indices."""
    if isinstance(assignment, (str, bytes)) or not isinstance(assignment, (Sequence, np.ndarray)):
        raise InstanceError("assignment", f"must be a list of device names, one per node, got {assignment!r}"[:200])
    if len(assignment) != instance.n_nodes:
        raise InstanceError("assignment", f"has {len(assignment)} entries for {instance.n_nodes} nodes")
    idx = {nm: d for d, nm in enumerate(instance.devices)}
    out = []
    D = instance.n_devices
    for i, v in enumerate(assignment):
        if isinstance(v, str):
            if v not in idx:
                raise InstanceError(f"assignment[{i}]", f"unknown device {v!r} (devices: {', '.join(instance.devices)})")
            out.append(idx[v])
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= int(v) < D:
            out.append(int(v))
        else:
            raise InstanceError(f"assignment[{i}]", f"must be a device name, got {v!r}")
    return out


def device_loads(instance: PlacementInstance, p: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(forward load, backward load, communication part)`` per device (no feasibility checks)."""
    D, k = instance.n_devices, instance.n_accelerators
    fwd = np.zeros(D)
    bwd = np.zeros(D)
    comm = np.zeros(D)
    back = instance.backward
    for i, d in enumerate(p):
        t = instance.cpu_seconds[i] if d >= k else instance.acc_seconds[i]
        if back[i]:
            bwd[d] += t
        else:
            fwd[d] += t
    for u, cons, sec in instance.tensors:
        if sec == 0.0:
            continue
        du = p[u]
        dests = {p[c] for c in cons}
        dests.discard(du)
        if not dests:
            continue
        target = bwd if back[u] else fwd
        if du < k:
            target[du] += sec
            comm[du] += sec
        for d in dests:
            if d < k:
                target[d] += sec
                comm[d] += sec
    return fwd, bwd, comm


def _reaches_back(n: int, succ: list[list[int]], members: set[int]) -> int | None:
    """A node of ``members`` reachable from ``members`` through a path that leaves the set, if any."""
    stack = [v for u in members for v in succ[u] if v not in members]
    seen = set(stack)
    while stack:
        u = stack.pop()
        for v in succ[u]:
            if v in members:
                return v
            if v not in seen:
                seen.add(v)
                stack.append(v)
    return None


def check_constraints(instance: PlacementInstance, p: Sequence[int]) -> None:
    """Raise :class:`InfeasibleSolution` for an unsupported node on an accelerator, a split colour
    class, an accelerator over its memory, or broken contiguity."""
    k = instance.n_accelerators
    for i, d in enumerate(p):
        if d < k and not instance.supported[i]:
            raise InfeasibleSolution(f"node {instance.nodes[i]!r} is not supported on accelerators but is on "
                                     f"{instance.devices[d]!r}")
    for cl in instance.colour_classes:
        ds = {p[i] for i in cl}
        if len(ds) > 1:
            raise InfeasibleSolution(f"colour class of node {instance.nodes[cl[0]]!r} (colour "
                                     f"{instance.colour[cl[0]]}) is split over devices "
                                     f"{', '.join(instance.devices[d] for d in sorted(ds))}")
    if instance.acc_memory_bytes is not None:
        use = np.zeros(max(k, 1))
        for i, d in enumerate(p):
            if d < k:
                use[d] += instance.size_bytes[i]
        cap = instance.acc_memory_bytes
        for d in range(k):
            if use[d] > cap * (1 + 1e-12):
                raise InfeasibleSolution(f"accelerator {instance.devices[d]!r} holds {use[d]:.15g} bytes, more "
                                         f"than its memory {cap:.15g}")
    if instance.contiguity == "none":
        return
    n = instance.n_nodes
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in instance.forward_edges:
        succ[u].append(v)
    groups: dict[int, set[int]] = {}
    for i, d in enumerate(p):
        if not instance.backward[i]:
            groups.setdefault(d, set()).add(i)
    for d, members in sorted(groups.items()):
        v = _reaches_back(n, succ, members)
        if v is not None:
            raise InfeasibleSolution(f"the forward nodes of {instance.devices[d]!r} are not convex: a path leaves "
                                     f"them and re-enters at {instance.nodes[v]!r} (contiguity {instance.contiguity})")
    if instance.contiguity == "chain":
        qsucc: dict[int, set[int]] = {d: set() for d in groups}
        for u, v in instance.forward_edges:
            if p[u] != p[v]:
                qsucc[p[u]].add(p[v])
        state: dict[int, int] = {}

        def cyclic(d: int) -> bool:
            stack = [(d, iter(sorted(qsucc[d])))]
            state[d] = 1
            while stack:
                x, it = stack[-1]
                y = next(it, None)
                if y is None:
                    state[x] = 2
                    stack.pop()
                elif state.get(y) == 1:
                    return True
                elif y not in state:
                    state[y] = 1
                    stack.append((y, iter(sorted(qsucc[y]))))
            return False

        for d in sorted(qsucc):
            if d not in state and cyclic(d):
                raise InfeasibleSolution("the devices' forward sets feed each other in a cycle: no chain of ideals "
                                         "(contiguity chain, the peer's DP model) orders them")


def objective_of(instance: PlacementInstance, fwd: np.ndarray, bwd: np.ndarray) -> float:
    if instance.objective == "max-load":
        return float(max(fwd + bwd))
    return float(max(fwd)) + float(max(bwd))


def evaluate(instance: PlacementInstance, assignment: Any) -> tuple[float, dict[str, float]]:
    """Objective (seconds per sample, minimised: ``max-load`` or ``fwd+bwd``) and breakdown.

    Breakdown: ``max_load`` (largest forward + backward load), ``fwd_max``, ``bwd_max``,
    ``comm_max`` (communication part of the most loaded device), ``devices_used``, ``throughput``
    (1 / objective, samples/s), and ``load[<device>]`` per used device."""
    p = device_indices(instance, assignment)
    check_constraints(instance, p)
    fwd, bwd, comm = device_loads(instance, p)
    total = fwd + bwd
    obj = objective_of(instance, fwd, bwd)
    top = int(np.argmax(total))
    used = sorted(set(p))
    b: dict[str, float] = {"max_load": float(total[top]), "fwd_max": float(max(fwd)), "bwd_max": float(max(bwd)),
                           "comm_max": float(comm[top]), "devices_used": float(len(used)),
                           "throughput": 1.0 / obj if obj > 0 else math.inf}
    for d in used:
        b[f"load[{instance.devices[d]}]"] = float(total[d])
    return obj, b


# ---------------------------------------------------------------------- bounds
def class_data(instance: PlacementInstance):
    """Colour classes with their summed CPU/accelerator times, sizes and support."""
    cls = instance.colour_classes
    cpu = [math.fsum(instance.cpu_seconds[i] for i in g) for g in cls]
    acc = [math.fsum(instance.acc_seconds[i] for i in g) for g in cls]
    size = [math.fsum(instance.size_bytes[i] for i in g) for g in cls]
    sup = [all(instance.supported[i] for i in g) for g in cls]
    return cls, cpu, acc, size, sup


def class_tensors(instance: PlacementInstance, min_seconds: float = 0.0):
    """``(cls_of, tensors)``: the class index of every node, and every tensor between distinct
    colour classes as ``(producer class, sorted consumer classes, seconds, backward?)``, those of
    ``min_seconds`` or less left out (the MILP builders drop negligible tensors this way)."""
    cls_of = [0] * instance.n_nodes
    for g, members in enumerate(instance.colour_classes):
        for i in members:
            cls_of[i] = g
    back = instance.backward
    out = []
    for u, cons, sec in instance.tensors:
        gu = cls_of[u]
        gs = sorted({cls_of[c] for c in cons} - {gu})
        if gs and sec > min_seconds:
            out.append((gu, gs, sec, back[u]))
    return cls_of, out


def check_placeable(instance: PlacementInstance) -> None:
    """Raise :class:`InfeasibleSolution` where no placement can exist for a reason seen without a
    search: with no CPU core (the instance refuses unsupported nodes then), a class larger than an
    accelerator's memory, or classes that together exceed all accelerators' memory
    (an exact method would otherwise search the whole limit for a proof of infeasibility: a
    1,493-node graph with one 65.5 MB class on 13.2 MB accelerators ended at its limit with no
    answer)."""
    if instance.n_cpus > 0:
        return
    cap = instance.acc_memory_bytes
    if cap is None:
        return
    for cl in instance.colour_classes:
        size = math.fsum(instance.size_bytes[i] for i in cl)
        if size > cap * (1 + 1e-12):
            raise NoFeasibleSolution(f"colour class of node {instance.nodes[cl[0]]!r} holds {size:.15g} bytes, "
                                     f"more than an accelerator's memory {cap:.15g}, and there is no CPU core")
    total = math.fsum(instance.size_bytes)
    if total > instance.n_accelerators * cap * (1 + 1e-12):
        raise NoFeasibleSolution(f"the nodes hold {total:.15g} bytes, more than the {instance.n_accelerators} "
                                 f"accelerators' memory {cap:.15g} each, and there is no CPU core")


def work_bound(instance: PlacementInstance) -> float:
    """A lower bound on the ``max-load`` optimum (also valid for ``fwd+bwd``, which is never below it):
    the smallest ``T`` at which the classes fit *fractionally* (communication ignored) on ``l`` CPU
    cores of capacity ``T`` and ``k`` accelerators of capacity ``T``, each class at least its cheapest
    device load; found by bisection on the fractional knapsack (classes most profitable on a CPU core
    go there first)."""
    _cls, cpu, acc, _size, sup = class_data(instance)
    k, l_ = instance.n_accelerators, instance.n_cpus
    lb_single = 0.0
    for c, a, s in zip(cpu, acc, sup):
        opts = ([c] if l_ else []) + ([a] if (s and k) else [])
        lb_single = max(lb_single, min(opts) if opts else math.inf)
    forced_cpu = math.fsum(c for c, s in zip(cpu, sup) if not s or k == 0)
    free = [(a, c) for a, c, s in zip(acc, cpu, sup) if s and k > 0]
    if l_ == 0:
        return max(lb_single, math.fsum(a for a, _c in free) / k if k else 0.0)
    if k == 0:
        return max(lb_single, (forced_cpu + math.fsum(c for _a, c in free)) / l_)
    # classes sorted by accelerator time saved per CPU second
    free.sort(key=lambda ac: -(ac[0] / ac[1]) if ac[1] > 0 else -math.inf)
    total_acc = math.fsum(a for a, _c in free)

    def fits(T: float) -> bool:
        cap = l_ * T - forced_cpu
        if cap < 0:
            return False
        acc_left = total_acc
        for a, c in free:
            if c <= cap:
                cap -= c
                acc_left -= a
            else:
                acc_left -= a * cap / c if c > 0 else a
                break
        return acc_left <= k * T * (1 + 1e-12)

    lo, hi = 0.0, max(total_acc / k, (forced_cpu + math.fsum(c for _a, c in free)) / l_) + 1e-300
    if fits(lo):
        return lb_single
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return max(lb_single, lo)


def cardinality_bound(instance: PlacementInstance, deadline: float | None = None) -> float:
    """A pigeonhole lower bound on the ``max-load`` optimum (any contiguity; also valid for
    ``fwd+bwd``, never below ``max-load``), the classical ``P||Cmax`` bound applied to the classes
    that cannot sit on a CPU core.

    For a placement of value ``V``, every supported class whose CPU time exceeds ``V`` (all of them
    when there is no CPU core) is on one of the ``k`` accelerators: call them ``F(V)``, accelerator
    times sorted decreasingly ``a_1 >= a_2 >= ...``. For ``j >= 1`` with ``jk + 1 <= |F(V)|``, some
    accelerator holds ``j + 1`` of the first ``jk + 1``, so ``V >= h(V) = max_j (a_{jk+1-j} + ... +
    a_{jk+1})`` (communication, never negative, ignored). ``F`` and hence ``h`` only shrink as ``V``
    grows, so the bound is the smallest ``V`` with ``V >= h(V)``, found on the intervals between
    consecutive CPU times. Not in the peer's paper (its IP has no such row); it closes the
    ``bert24`` non-contiguous gap, where 25 layers of about 3.5 ms share 6 accelerators.

    ``deadline`` (a ``time.perf_counter()`` value; O(n^2 log n), 0.8 s on 4,000 nodes): when it
    passes, the start of the interval reached (every value below it fails) is returned."""
    import time

    _cls, cpu, acc, _size, sup = class_data(instance)
    k, l_ = instance.n_accelerators, instance.n_cpus
    if k == 0:
        return 0.0
    items = [(c if l_ else math.inf, a) for c, a, s in zip(cpu, acc, sup) if s]

    def h(V: float) -> float:
        a = sorted((a for c, a in items if c > V), reverse=True)
        best, j = 0.0, 1
        while j * k + 1 <= len(a):
            best = max(best, math.fsum(a[j * k - j: j * k + 1]))
            j += 1
        return best

    cuts = sorted({c for c, _a in items if math.isfinite(c)})
    lo = 0.0
    for hi in cuts + [math.inf]:
        if deadline is not None and time.perf_counter() > deadline:
            return lo  # every V below lo has failed: still a bound
        # on [lo, hi) the set F(V) = {c > V} is constant for V in (lo, hi) and equal to {c >= hi};
        # at V = lo itself F is the same set (c > lo), so one evaluation covers the interval
        H = h(lo)
        if H < hi:
            return max(lo, H)
        lo = hi
    return 0.0  # pragma: no cover - h(inf) is 0, below inf


# ---------------------------------------------------------------------- MILP
def _knapsack_max(values: Sequence[float], weights: Sequence[float], capacity: float) -> float:
    """``max sum v_i x_i`` subject to ``sum w_i x_i <= capacity``, ``0 <= x_i <= 1`` (the fractional
    knapsack, greedy by ratio): an upper bound on what any set of items of weight ``<= capacity``
    carries. Items of weight 0 are always taken."""
    total, room = 0.0, capacity
    items = sorted(((v, w) for v, w in zip(values, weights) if v > 0), key=lambda vw: -(vw[0] / vw[1]) if vw[1] > 0
                   else -math.inf)
    for v, w in items:
        if w <= room:
            total += v
            room -= w
        else:
            total += v * room / w if w > 0 else v
            break
    return total


__all__ = ["evaluate", "device_indices", "device_loads", "check_constraints", "objective_of", "class_data",
           "class_tensors", "work_bound", "cardinality_bound"]
