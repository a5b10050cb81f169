"""Checks and orders of :mod:`splitopt.instances.graph`: the range check of a layer's numbers and
Kahn's stable topological order with a cycle witness (split out of ``graph.py``, issue 22 §5: modules
under 600 lines; ``graph`` re-exports :func:`stable_topological_order`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from splitopt.instances.graph import Layer

_NUMERIC_FIELDS = ("fwd_flop", "bwd_flop", "out_bytes", "param_bytes")


def _check_layer_numbers(lay: Layer, i: int) -> None:
    from splitopt.instances.limits import QUANTITY

    check_number = QUANTITY.check  # every layer number is a quantity in [0, 1e30] (instances.limits)

    p = f"layers[{i}]"
    for f in _NUMERIC_FIELDS:
        check_number(f"{p}.{f}", getattr(lay, f))
    if lay.mem_bytes is not None:
        check_number(f"{p}.mem_bytes", lay.mem_bytes)
    for f in ("fwd_seconds", "bwd_seconds"):
        for k, v in getattr(lay, f).items():
            check_number(f"{p}.{f}.{k}", v)
    for j, v in enumerate(lay.extra_out_bytes):
        check_number(f"{p}.extra_out_bytes[{j}]", v)
    if lay.meta:
        _check_meta_macs(lay.meta, p)


def _check_meta_macs(meta: Mapping, path: str) -> None:
    """``meta["macs"]``, when a number, is read by :attr:`Layer.macs`: a quantity like the others."""
    from splitopt.instances.limits import QUANTITY

    m = meta.get("macs")
    if isinstance(m, (int, float)) and not isinstance(m, bool):
        QUANTITY.check(f"{path}.meta.macs", m)


def stable_topological_order(succ: Sequence[Sequence[int]]) -> tuple[list[int], list[int] | None]:
    """Kahn's algorithm over vertices ``0..n-1``, ties broken by the smallest index (so the order is
    stable with respect to the given order). Returns ``(order, None)`` for a DAG, else
    ``(partial order, cycle)`` with the cycle's vertices, the first repeated at the end."""
    import heapq

    n = len(succ)
    indeg = [0] * n
    for out in succ:
        for j in out:
            indeg[j] += 1
    heap = [i for i in range(n) if indeg[i] == 0]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        i = heapq.heappop(heap)
        order.append(i)
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                heapq.heappush(heap, j)
    if len(order) == n:
        return order, None
    return order, _find_cycle([i for i in range(n) if indeg[i] > 0], succ, indeg)


def _find_cycle(nodes: list[int], succ: Sequence[Sequence[int]], indeg: list[int]) -> list[int]:
    """Some cycle among ``nodes`` (all have positive remaining in-degree)."""
    rem = set(nodes)
    # walk backwards along remaining predecessors: every remaining node has one
    pred_rem: dict[int, int] = {}
    for u in nodes:
        for v in succ[u]:
            if v in rem and v not in pred_rem:
                pred_rem[v] = u
    v = nodes[0]
    seen: dict[int, int] = {}
    path = []
    while v not in seen:
        seen[v] = len(path)
        path.append(v)
        v = pred_rem[v]
    cyc = path[seen[v]:]
    cyc.reverse()
    return cyc + [cyc[0]]
