"""``auto``: the default algorithm of the ``grouping`` family -- a written rule that picks the
fastest exact method for the instance's shape (issue 21 §2).

The rule (tested in ``tests/solvers/grouping/test_auto.py``):

1. ``objective="bottleneck"`` without transfers (``g = T``, pure chains-on-chains partitioning,
   digest 003 §5.3 P1): :func:`.linear_partition.parametric_search`, a bisection over the candidate
   values with the greedy ``O(n)`` probe (exact only without transfers: digest §5.3 method 3).
2. Everything else (``perf``, ``thesis_cost``, ``bottleneck`` with transfers):
   :func:`.threshold.solve`, the window-DP threshold search (exact for every objective; under 1 s
   at ``n = 1000``, ``k = 64``: ``benchmarks/grouping_scale.py``), which replaced :mod:`.dp`'s scan
   over every threshold (minutes at that size).

Every method here is exact and finishes (no time limit is needed, none is taken); incumbents and
bounds need not be passed between methods. The answer carries status ``optimal`` with the
evaluator's value as its bound (both methods are proven exact), and ``info["method"]`` names the
method the rule chose and ``info["rule"]`` why.
"""

from __future__ import annotations

from splitopt.families import AlgoResult
from splitopt.models.grouping import evaluate
from splitopt.solvers.grouping import linear_partition, threshold


def choose(instance) -> tuple[str, str]:
    """``(method, reason)`` of the rule in the module docstring."""
    if instance.objective == "bottleneck" and not instance.transfers:
        return "parametric", "bottleneck without transfers: bisection with the greedy probe"
    return "threshold", f"{instance.objective}{' with transfers' if instance.transfers else ''}: window-DP " \
                        "threshold search"


def solve(instance) -> AlgoResult:
    method, why = choose(instance)
    sizes = linear_partition.parametric_search(instance) if method == "parametric" else threshold.solve(instance)
    value = evaluate(instance, sizes)[0]
    return AlgoResult(sizes, status="optimal", bound=value, info={"method": method, "rule": why})


__all__ = ["solve", "choose"]
