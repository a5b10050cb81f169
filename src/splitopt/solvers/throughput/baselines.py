"""Baselines: every layer on the best single node (the paper's unpartitioned throughput, on the
fastest node when heterogeneous, digest §4.1)."""

from __future__ import annotations

from splitopt.errors import InfeasibleSolution, InstanceError
from splitopt.instances.throughput import ThroughputInstance
from splitopt.models.throughput import evaluate


def best_single_node(instance: ThroughputInstance) -> list[str]:
    best = None
    for a in range(instance.n_nodes):
        p = [instance.nodes[a]] * instance.n_layers
        try:
            v = evaluate(instance, p)[0]
        except InfeasibleSolution:
            continue
        if best is None or v < best[0]:
            best = (v, p)
    if best is None:
        raise InstanceError("instance", "no single node can hold every layer (pins or memory)")
    return best[1]
