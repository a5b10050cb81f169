"""Backward-only colour classes ("orphans") in the ``chain`` model, for the ideal branch and bound.

A training operator graph can hold a colour class made only of backward nodes (a weight update fed
by a gradient: the peer's operator-graph training workloads, Tarnawski et al., NeurIPS 2020, §5).
Contiguity constrains forward nodes only, so such a class may sit on any device; the search over
ideals of the forward graph has no place for it. Two instances built from the original bracket the
optimum, and each is solved by the ideal branch and bound:

* :func:`without` drops the orphans (their nodes, the tensors they produce, and them as
  consumers): every device's load only shrinks, so its optimum is a **lower bound** of the
  original's.
* :func:`mirrored` gives every orphan class an artificial forward node (no time, no bytes) and,
  for each backward tensor between an orphan and another class, a zero-time forward edge between
  their forward nodes in the mirrored direction: the orphans join the chain as the peer's DP places
  them (its ``createArtificialForwardNodes``, read for the model, not copied). Its placements,
  restricted to the original nodes, are placements of the original with the same loads: its
  optimum is an **upper bound**, and equals the peer's DP value on such inputs.

:func:`place` completes a placement of :func:`without` by putting each orphan class on the device
that raises the objective least (a second upper bound). When an upper bound meets the lower bound
the optimum is proven; otherwise :mod:`.auto` hands both to the MILP.
"""

from __future__ import annotations

import math
import time
from typing import Sequence

from splitopt.errors import InfeasibleSolution
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import evaluate


def without(instance: PlacementInstance, orphans: Sequence[Sequence[int]]) -> tuple[PlacementInstance, list[int]]:
    """The instance without the orphan nodes, and the original index of each node it keeps."""
    drop = {i for grp in orphans for i in grp}
    keep = [i for i in range(instance.n_nodes) if i not in drop]
    new = {i: j for j, i in enumerate(keep)}
    tensors = []
    for p, cons, sec in instance.tensors:
        if p in drop:
            continue
        cs = tuple(new[c] for c in cons if c not in drop)
        if cs:
            tensors.append((new[p], cs, sec))

    def pick(vals):
        return tuple(vals[i] for i in keep)

    red = PlacementInstance(pick(instance.nodes), pick(instance.cpu_seconds), pick(instance.acc_seconds),
                            tuple(tensors), n_accelerators=instance.n_accelerators, n_cpus=instance.n_cpus,
                            acc_memory_bytes=instance.acc_memory_bytes, supported=pick(instance.supported),
                            size_bytes=pick(instance.size_bytes), backward=pick(instance.backward),
                            colour=pick(instance.colour), objective=instance.objective,
                            contiguity=instance.contiguity, name=f"{instance.name}-without-orphans")
    return red, keep


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
    """A placement of ``instance`` from ``partial`` (devices of the nodes ``keep``): each orphan class,
    largest first, on the device of its first neighbour, then moved to the device that lowers the
    objective most (one pass; stopped at ``deadline``). ``None`` when no completion fits."""
    a: list[str | None] = [None] * instance.n_nodes
    for i, d in zip(keep, partial):
        a[i] = d
    nbr: dict[int, list[int]] = {}
    for p, cons, _s in instance.tensors:
        for c in cons:
            nbr.setdefault(p, []).append(c)
            nbr.setdefault(c, []).append(p)
    cpu_names = [d for j, d in enumerate(instance.devices) if instance.is_cpu(j)]

    def home(grp):
        for i in grp:
            for j in nbr.get(i, ()):
                if a[j] is not None and (a[j] in cpu_names or all(instance.supported[g] for g in grp)):
                    return a[j]
        return cpu_names[0] if cpu_names else instance.devices[0]

    order = sorted(orphans, key=lambda g: -sum(min(instance.cpu_seconds[i], instance.acc_seconds[i]) for i in g))
    for grp in order:
        d = home(grp)
        for i in grp:
            a[i] = d
    best = _value(instance, a)
    for grp in order:
        if deadline is not None and time.perf_counter() > deadline:
            break
        cur = a[grp[0]]
        for d in instance.devices:
            if d == cur:
                continue
            for i in grp:
                a[i] = d
            v = _value(instance, a)
            if v < best:
                best, cur = v, d
        for i in grp:
            a[i] = cur
    return list(a) if math.isfinite(best) else None


__all__ = ["without", "mirrored", "place"]
