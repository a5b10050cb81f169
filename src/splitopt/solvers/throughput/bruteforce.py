"""Enumeration of every placement ``N^L`` (tiny instances only), scored by the evaluator itself,
so it shares no optimisation code with the other algorithms."""

from __future__ import annotations

import itertools

from splitopt.errors import InfeasibleSolution, InstanceError, NoFeasibleSolution
from splitopt.instances.throughput import ThroughputInstance
from splitopt.models.throughput import evaluate

MAX_LEAVES = 300_000


def bruteforce(instance: ThroughputInstance, max_leaves: int = MAX_LEAVES) -> list[str]:
    """The best feasible placement (ties: the first in lexicographic order)."""
    N, L = instance.n_nodes, instance.n_layers
    if N ** L > max_leaves:
        raise InstanceError("layers", f"brute force enumerates N^L = {N}^{L} placements, more than {max_leaves:,}")
    best = None
    for p in itertools.product(range(N), repeat=L):
        try:
            val = evaluate(instance, list(p))[0]
        except InfeasibleSolution:
            continue
        if best is None or val < best[0]:
            best = (val, p)
    if best is None:
        raise NoFeasibleSolution("no feasible placement (pins, memory, cap and contiguity conflict)")
    return [instance.nodes[a] for a in best[1]]
