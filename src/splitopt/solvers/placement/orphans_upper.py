"""Upper bounds for the ``chain`` model with backward-only colour classes ("orphans",
:mod:`.orphans`): placements of the original instance built around the orphan-free searches.
Split out of :mod:`.orphans` (2026-11-29: modules under 600 lines), which re-exports them.

* :func:`hosted` merges each orphan class into a class on the device a placement gives it;
* :func:`mirrored` gives every orphan class an artificial forward node (the peer's DP model);
* :func:`place` completes a placement of the orphan-free nodes, orphan by orphan.
"""

from __future__ import annotations

import math
import time
from typing import Sequence

import numpy as np

from splitopt.errors import InfeasibleSolution
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import evaluate


def hosted(instance: PlacementInstance, assignment: Sequence[str], orphans: Sequence[Sequence[int]]):
    """The instance with each orphan class merged into the colour class of a *host* on the device
    ``assignment`` gives it (a node it shares a tensor with there, else the first node there that
    is not an orphan), or ``None`` where some orphan's device holds no other node. A restriction:
    its placements are placements of the original (the same nodes and tensors), scored exactly, so
    its optimum is an **upper bound**; unlike the completion of :func:`attached`'s placement, the
    search places the other classes around the orphans' work (a BERT-like 616-node training graph
    with weight updates: see :func:`splitopt.solvers.placement.ideals.solve`)."""
    drop = {i for grp in orphans for i in grp}
    nbr: dict[int, list[int]] = {}
    for p, cons, _s in instance.tensors:
        for c in cons:
            nbr.setdefault(p, []).append(c)
            nbr.setdefault(c, []).append(p)
    first: dict[str, int] = {}
    for i, d in enumerate(assignment):
        if i not in drop and d not in first:
            first[d] = i
    colour = list(instance.colour)
    fresh = max([c for c in colour if c is not None] + [-1]) + 1
    for grp in orphans:
        d = assignment[grp[0]]
        host = next((j for i in grp for j in nbr.get(i, ()) if j not in drop and assignment[j] == d), first.get(d))
        if host is None:
            return None
        if colour[host] is None:
            colour[host], fresh = fresh, fresh + 1
        for i in grp:
            colour[i] = colour[host]
    return instance.with_(colour=tuple(colour), name=f"{instance.name}-orphans-hosted")


def mirrored(instance: PlacementInstance, orphans: Sequence[Sequence[int]]) -> PlacementInstance:
    """The instance with an artificial forward node per orphan class and zero-time forward edges
    mirroring the backward tensors that touch an orphan (module docstring); the original nodes keep
    their indices (the new ones come after them). Raises
    :class:`~splitopt.errors.InstanceError` when the mirrored edges close a cycle."""
    n = instance.n_nodes
    back = instance.backward
    colour = list(instance.colour)
    fresh = max([c for c in colour if c is not None] + [-1]) + 1
    cls_of: dict[int, int] = {}  # node -> class id (every node gets one)
    for grp in instance.colour_classes:
        cid = colour[grp[0]]
        if cid is None:
            cid = fresh
            fresh += 1
            for i in grp:
                colour[i] = cid
        for i in grp:
            cls_of[i] = cid
    orphan_cls = {cls_of[grp[0]]: grp for grp in orphans}
    for grp in orphans:  # an orphan super-node is a union of classes: one class
        cid = cls_of[grp[0]]
        for i in grp:
            colour[i] = cid
            cls_of[i] = cid
    names, cpu, acc = list(instance.nodes), list(instance.cpu_seconds), list(instance.acc_seconds)
    sup, size, bwd = list(instance.supported), list(instance.size_bytes), list(back)
    taken = set(names)

    def add(label: str, cid: int) -> int:
        nm, k = label, 1
        while nm in taken:
            nm, k = f"{label}~{k}", k + 1
        taken.add(nm)
        names.append(nm), cpu.append(0.0), acc.append(0.0), sup.append(True), size.append(0.0), bwd.append(False)
        colour.append(cid)
        return len(names) - 1

    fwd_of: dict[int, int] = {}  # class id -> a forward node in it
    for i in range(n):
        if not back[i]:
            fwd_of.setdefault(cls_of[i], i)
    for cid, grp in orphan_cls.items():
        fwd_of[cid] = add(f"{instance.nodes[grp[0]]}#forward", cid)
    # an edge from class A to class B goes out of a zero-time relay node of class A (an existing
    # tensor of A cannot take more consumers: it would be paid for them)
    relay: dict[int, int] = {}
    out: dict[int, set[int]] = {}
    for p, cons, _sec in instance.tensors:
        if not back[p]:
            continue
        for c in cons:
            if not back[c] or cls_of[p] == cls_of[c]:
                continue
            if cls_of[p] in orphan_cls or cls_of[c] in orphan_cls:
                a, b = cls_of[c], cls_of[p]  # backward p -> c mirrored: forward c's class -> p's class
                if a not in fwd_of or b not in fwd_of:
                    continue
                src = fwd_of[a] if a in orphan_cls else relay.setdefault(a, add(f"{names[fwd_of[a]]}#relay", a))
                out.setdefault(src, set()).add(fwd_of[b])
    tensors = list(instance.tensors) + [(s, tuple(sorted(t)), 0.0) for s, t in sorted(out.items())]
    return PlacementInstance(tuple(names), tuple(cpu), tuple(acc), tuple(tensors),
                             n_accelerators=instance.n_accelerators, n_cpus=instance.n_cpus,
                             acc_memory_bytes=instance.acc_memory_bytes, supported=tuple(sup),
                             size_bytes=tuple(size), backward=tuple(bwd), colour=tuple(colour),
                             objective=instance.objective, contiguity=instance.contiguity,
                             name=f"{instance.name}-mirrored")


def _value(instance: PlacementInstance, a) -> float:
    try:
        return evaluate(instance, a)[0]
    except InfeasibleSolution:
        return math.inf


def place(instance: PlacementInstance, partial: Sequence[str], keep: Sequence[int],
          orphans: Sequence[Sequence[int]], deadline: float | None = None) -> list[str] | None:
    """A placement of ``instance`` from ``partial`` (devices of the nodes ``keep``): each orphan class
    on the device of its first placed neighbour, then, largest first, moved to the device that
    makes the objective, then the loads sorted decreasingly, lexicographically smallest (passes
    until none moves, or ``deadline``). Loads are updated per move (the tensors that touch the
    class), so a pass over 661 weight updates of a 2,476-node graph takes milliseconds; the answer
    is scored by the evaluator. ``None`` when no completion fits (memory, support)."""
    from splitopt.models.placement import device_loads, objective_of
    from splitopt.solvers.placement.common import lex_less

    names = instance.devices
    idx = {nm: d for d, nm in enumerate(names)}
    k, D = instance.n_accelerators, instance.n_devices
    a: list[int | None] = [None] * instance.n_nodes
    for i, d in zip(keep, partial):
        a[i] = idx[d] if isinstance(d, str) else int(d)
    nbr: dict[int, list[int]] = {}
    touch: dict[int, list[int]] = {}  # node -> tensors it produces or consumes
    for ti, (p, cons, _s) in enumerate(instance.tensors):
        touch.setdefault(p, []).append(ti)
        for c in cons:
            nbr.setdefault(p, []).append(c)
            nbr.setdefault(c, []).append(p)
            touch.setdefault(c, []).append(ti)
    cpus = [d for d in range(D) if d >= k]

    def allowed(grp):
        return list(range(D)) if all(instance.supported[i] for i in grp) else cpus

    def home(grp):
        ok = set(allowed(grp))
        for i in grp:
            for j in nbr.get(i, ()):
                if a[j] is not None and a[j] in ok:
                    return a[j]
        return cpus[0] if cpus else 0

    order = sorted(orphans, key=lambda g: -sum(min(instance.cpu_seconds[i], instance.acc_seconds[i]) for i in g))
    for grp in order:
        d = home(grp)
        for i in grp:
            a[i] = d
    fwd, bwd, _c = device_loads(instance, a)
    cap = instance.acc_memory_bytes
    mem = np.zeros(D)
    for i, d in enumerate(a):
        mem[d] += instance.size_bytes[i]
    back = instance.backward

    def contrib(ts, sign):  # add (sign +1) or remove (-1) the transfers of tensors ts
        for ti in ts:
            u, cons, sec = instance.tensors[ti]
            if sec == 0.0:
                continue
            du = a[u]
            dests = {a[c] for c in cons} - {du}
            if not dests:
                continue
            part = bwd if back[u] else fwd
            for d in dests | {du}:
                if d < k:
                    part[d] += sign * sec

    def move(grp, ts, d):
        contrib(ts, -1)
        for i in grp:
            x = a[i]
            (bwd if back[i] else fwd)[x] -= instance.cpu_seconds[i] if x >= k else instance.acc_seconds[i]
            mem[x] -= instance.size_bytes[i]
            a[i] = d
            (bwd if back[i] else fwd)[d] += instance.cpu_seconds[i] if d >= k else instance.acc_seconds[i]
            mem[d] += instance.size_bytes[i]
        contrib(ts, +1)

    def key():
        return (objective_of(instance, fwd, bwd),) + tuple(sorted((fwd + bwd).tolist(), reverse=True))

    moved = True
    while moved:
        moved = False
        for grp in order:
            if deadline is not None and time.perf_counter() > deadline:
                moved = False
                break
            ts = sorted({ti for i in grp for ti in touch.get(i, ())})
            cur = a[grp[0]]
            best, best_d = key(), cur
            for d in allowed(grp):
                if d == cur or (cap is not None and d < k and mem[d] + sum(instance.size_bytes[i] for i in grp) > cap):
                    continue
                move(grp, ts, d)
                kd = key()
                if lex_less(kd, best):
                    best, best_d = kd, d
                move(grp, ts, cur)
            if best_d != cur:
                move(grp, ts, best_d)
                moved = True
    out = [names[d] for d in a]
    return out if math.isfinite(_value(instance, out)) else None
