"""Enumeration of every (micro-batch, cuts, placement) of a tiny ``pipeline`` instance, scored by
the evaluator itself (:func:`splitopt.models.pipeline.evaluate`), so it shares no optimisation code
with the other algorithms.

Per ``b``: every number ``P`` of server blocks (``1..min(I-1, K-1)``), every choice of ``P`` cuts
among ``I - 1`` positions, every server sequence with consecutive servers different (``distinct``:
all different). :func:`count` returns the number of leaves. (The paper's count ``sum_k B C(I-1,
k-1) k! C(N, k)`` of Section V-B, digest §2.7, places all ``k`` parts on distinct nodes; it is not
this enumeration's count.)
"""

from __future__ import annotations

import itertools
import math

from splitopt.errors import InfeasibleSolution, InstanceError
from splitopt.families import AlgoResult
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import Plan, evaluate_plan, make_assignment
from splitopt.solvers.deadline import Deadline
from splitopt.solvers.pipeline.diagnose import infeasible

MAX_LEAVES = 2_000_000


def _sequences(N: int, P: int, distinct: bool):
    if distinct:
        yield from itertools.permutations(range(N), P)
        return
    for seq in itertools.product(range(N), repeat=P):
        if all(seq[j] != seq[j - 1] for j in range(1, P)):
            yield seq


def _plans(instance: PipelineInstance, bs):
    """``(index of b in bs, plan)`` for every leaf, in enumeration order."""
    I, N = instance.n_layers, instance.n_servers
    K = instance.max_submodels or I
    distinct = instance.placement == "distinct"
    for i, bb in enumerate(bs):
        for P in range(1, min(I - 1, K - 1) + 1):
            for cuts in itertools.combinations(range(1, I), P):
                for seq in _sequences(N, P, distinct):
                    yield i, Plan(bb, cuts, seq)


def count(instance: PipelineInstance, b_values=None) -> int:
    """Number of (b, cuts, servers) leaves the enumeration visits."""
    I, N = instance.n_layers, instance.n_servers
    K = instance.max_submodels or I
    nb = len(instance.allowed_b() if b_values is None else b_values)
    tot = 0
    for P in range(1, min(I - 1, K - 1) + 1):
        seqs = math.perm(N, P) if instance.placement == "distinct" else N * (N - 1) ** (P - 1)
        tot += math.comb(I - 1, P) * seqs
    return nb * tot


def bruteforce(instance: PipelineInstance, b: int | None = None, max_leaves: int = MAX_LEAVES) -> dict:
    """The best feasible assignment over every allowed ``b`` (or only ``b``); ties: the first in
    enumeration order (b ascending, fewer blocks first, cuts and servers lexicographic)."""
    return solve(instance, b=b, max_leaves=max_leaves).assignment


#: leaves enumerated between two looks at the clock
CHECK_EVERY = 4096


def solve(instance: PipelineInstance, *, b: int | None = None, max_leaves: int = MAX_LEAVES,
          time_limit: float | None = None) -> AlgoResult:
    """:func:`bruteforce` as a registered algorithm: status ``"ok"`` after the whole enumeration;
    with ``time_limit`` (checked once per ``b`` and every :data:`CHECK_EVERY` leaves) the best
    assignment enumerated so far, status ``"time_limit"``, no bound (``info``: ``b_done`` of
    ``b_total``, ``leaves``); none found yet: :meth:`~splitopt.solvers.deadline.Deadline.no_answer`."""
    dl = Deadline(time_limit)
    bs = instance.allowed_b() if b is None else (int(b),)
    n = count(instance, bs)
    if n > max_leaves:
        raise InstanceError("instance", f"brute force would enumerate {n:,} assignments, more than {max_leaves:,}")
    best = None
    leaves = cur = 0
    done = len(bs)  # b values enumerated completely
    stopped = False
    for i, plan in _plans(instance, bs):
        leaves += 1
        if (i > cur or leaves % CHECK_EVERY == 0) and dl.over():
            stopped, done = True, i
            break
        cur = i
        try:
            val = evaluate_plan(instance, plan, check=True)[0]
        except InfeasibleSolution:
            continue
        if best is None or val < best[0]:
            best = (val, plan)
    if best is None:
        if stopped:
            raise dl.no_answer(f" (brute force, {leaves:,} of {n:,} assignments enumerated)")
        raise infeasible(instance)
    p = best[1]
    return AlgoResult(make_assignment(instance, p.b, p.cuts, p.servers), status="time_limit" if stopped else "ok",
                      bound=None, info={"b_done": done, "b_total": len(bs), "leaves": leaves})
