"""Seed 004 Algorithm 1 as printed, made runnable in the least invasive way (digest §3.4-§3.5):

* the queue starts with the root ``()`` (as printed it starts empty and the loop never runs);
* lists of full length are not expanded (no length check in print);
* the bound and the throughput of a partial list are those of its **padded leaf** (the list padded
  with its last node), implicit in the paper;
* breadth-first (FIFO), strict comparisons, initial incumbent "all on node 1" as printed;
* children are pruned when the padded leaf's largest transfer time exceeds the incumbent period,
  and expanded only while they have fewer than ``S`` split points.

The padded-transfer bound is invalid on DAGs with skip connections (digest §3.2: the padding invents
transfers another completion avoids), so this variant can prune the optimum; the corrected method is
:mod:`splitopt.solvers.throughput.bnb`. Pins, memory and contiguity are outside the paper: padded
leaves that break them are not offered as incumbents. ``cap`` overrides the instance's cap (the
authors' runs use ``S = 3``).

``time_limit`` (issue 21; runs take 29-1,030 s on YOLOv2 with 3-6 nodes): the clock is read every
64 padded-leaf evaluations; on time the best padded leaf so far is returned with status
``time_limit`` and no bound (the padded-transfer bound is not valid, so none is claimed).
"""

from __future__ import annotations

import math
from collections import deque

from splitopt.errors import InfeasibleSolution, InstanceError
from splitopt.families import AlgoResult
from splitopt.instances.throughput import ThroughputInstance
from splitopt.models.throughput import check_constraints, evaluate, link_bytes, link_times
from splitopt.solvers.deadline import Deadline

MAX_EVALUATIONS = 5_000_000


def solve(instance: ThroughputInstance, cap: int | None = None, max_evaluations: int = MAX_EVALUATIONS,
          time_limit: float | None = None) -> AlgoResult:
    deadline = Deadline(time_limit)
    L, N = instance.n_layers, instance.n_nodes
    S = cap if cap is not None else (instance.max_splits if instance.max_splits is not None else L - 1)
    ctx = instance.with_(max_splits=None) if cap is not None else instance

    def pad(p):
        return list(p) + [p[-1]] * (L - len(p))

    def transfer_max(p):
        try:
            return max(link_times(ctx, link_bytes(ctx, p)).values(), default=0.0)
        except InfeasibleSolution:
            return math.inf

    def period(p):
        try:
            check_constraints(ctx, p)
            if cap is not None and sum(1 for i in range(L - 1) if p[i] != p[i + 1]) > cap:
                return math.inf
            return evaluate(ctx, p)[0]
        except InfeasibleSolution:
            return math.inf

    best_p = [0] * L
    best_T = period(best_p)
    queue = deque([()])
    evaluations = 0
    stopped = None
    while queue and stopped is None:
        p = queue.popleft()
        if len(p) == L:
            continue
        for a in range(N):
            ch = p + (a,)
            leaf = pad(ch)
            evaluations += 1
            if not evaluations & 63 and deadline.over():
                stopped = "time_limit"
                break
            if evaluations > max_evaluations:
                raise InstanceError("instance", f"the paper's B&B exceeded {max_evaluations:,} evaluations")
            t = transfer_max(leaf)
            if t > best_T:
                continue
            splits = sum(1 for i in range(len(ch) - 1) if ch[i] != ch[i + 1])
            if splits < S:
                queue.append(ch)
            T = period(leaf)
            if T < best_T:
                best_T, best_p = T, leaf
    if not math.isfinite(best_T):
        if stopped:
            raise deadline.no_answer(" (the paper's B&B)")
        raise InstanceError("instance", "the paper's B&B found no feasible placement")
    return AlgoResult([instance.nodes[a] for a in best_p], status=stopped or "ok",
                      info={"evaluations": evaluations, "stopped": stopped})


def capped(instance: ThroughputInstance, **kw) -> AlgoResult:
    """The authors' runs: the paper's B&B with the cap ``S = 3`` whatever the instance says."""
    return solve(instance, cap=3, **kw)
