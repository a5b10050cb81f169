"""O(L) prefix scan for chains (Neurosurgeon-style; seed 000 Sec. IV / digest 000 E8, seed 002 §5).

On a chain ``l0 -> l1 -> ... -> l(L-1)`` the feasible device sets are exactly the ``L + 1`` prefixes
``{l0..l(p-1)}`` (closure under predecessors, digest 000 E8). The cost of prefix ``p`` is::

    sum_{i<p} dev_i + sum_{i>=p} srv_i + w(l(p-1))  [0 < p < L]  + w_in  [p = 0]

with the corrected weights of digest 000 §2.4 (training) or digest 002 §1.2 (inference; ``w_in`` is
the raw-input upload ``tau`` of digest 002 §2.5 under ``input_policy="upload"``). Both sums come from
forward/backward cumulative sums (no subtraction, so no cancellation when costs span many orders of
magnitude); candidates within ``1e-12`` of the best are re-scored exactly with ``math.fsum``.
Pins restrict ``p`` to an interval. Non-chains are refused with an :class:`InstanceError`.
"""

from __future__ import annotations

import math

import numpy as np

from splitopt.errors import InstanceError
from splitopt.instances.split import SplitInstance


def _check_chain(instance: SplitInstance) -> None:
    g = instance.graph
    if g.is_chain():
        return
    for i, lay in enumerate(g.layers):
        if lay.n_outputs > 1:
            raise InstanceError("graph", f"algorithm 'chain' needs a chain; layer {lay.name!r} has "
                                         f"{lay.n_outputs} outputs (use 'mincut')")
        if i < len(g) - 1 and g.succ(i) != (i + 1,):
            if not g.succ(i):
                raise InstanceError("graph", f"algorithm 'chain' needs a chain; layer {lay.name!r} has no "
                                             f"consumer but is not the last layer (use 'mincut')")
            succ = ", ".join(g.layers[j].name for j in g.succ(i))
            raise InstanceError("graph", f"algorithm 'chain' needs a chain; layer {lay.name!r} feeds "
                                         f"[{succ}] (use 'mincut')")
    raise InstanceError("graph", "algorithm 'chain' needs a chain (use 'mincut')")  # pragma: no cover


def prefix_costs(instance: SplitInstance) -> np.ndarray:
    """Cost of every prefix ``p = 0..L`` (``inf`` where pins forbid it)."""
    _check_chain(instance)
    c = instance.costs
    n = instance.n_layers
    pre = np.concatenate([[0.0], np.cumsum(c.dev)])
    suf = np.concatenate([np.cumsum(c.srv[::-1])[::-1], [0.0]])
    w = np.zeros(n + 1)
    for p, _cons, wt, _b in c.tensors:  # tensor of layer p is cut by prefix p+1
        w[p + 1] += wt
    w[n] = 0.0
    w[0] = c.input_weight
    cost = pre + suf + w
    fd = np.flatnonzero(c.force_dev)
    fs = np.flatnonzero(c.force_srv)
    lo = int(fd.max()) + 1 if fd.size else 0
    hi = int(fs.min()) if fs.size else n
    cost[:lo] = np.inf
    cost[hi + 1:] = np.inf
    return cost


def _exact_cost(instance: SplitInstance, p: int) -> float:
    c = instance.costs
    parts = list(c.dev[:p]) + list(c.srv[p:])
    if 0 < p < instance.n_layers:
        parts += [wt for (q, _c, wt, _b) in c.tensors if q == p - 1]
    if p == 0:
        parts.append(c.input_weight)
    return math.fsum(parts)


def best_prefix(instance: SplitInstance) -> tuple[int, float]:
    """``(p, cost)`` of an optimal prefix split."""
    cost = prefix_costs(instance)
    best = float(cost.min())
    near = np.flatnonzero(cost <= best + 1e-12 * abs(best) + 1e-300)
    scored = [(_exact_cost(instance, int(p)), int(p)) for p in near]
    val, p = min(scored)
    return p, val


def solve(instance: SplitInstance) -> list[str]:
    """Device-side names of an optimal split of a chain (the best prefix)."""
    p, _ = best_prefix(instance)
    return sorted(instance.graph.layers[i].name for i in range(p))


__all__ = ["solve", "best_prefix", "prefix_costs"]
