"""Brute-force oracle for tiny ``grouping`` instances: every contiguous grouping, scored by the
evaluator itself (:func:`splitopt.models.grouping.evaluate`), so it shares no optimisation code
with the algorithms it checks.

There are ``C(n-1, m-1)`` groupings into ``m`` groups (``2^(n-1)`` over all ``m``); the oracle
refuses instances with more than ``max_groupings`` (default 20,000, i.e. any ``k`` up to
``n = 15``). Ties: the first grouping in lexicographic cut order with the minimum value.
"""

from __future__ import annotations

import itertools
import math

from splitopt.errors import InstanceError
from splitopt.models.grouping import cuts_to_sizes, evaluate


def all_groupings(instance):
    """Yield every admissible grouping as group sizes (lexicographic cut order, by ``m``)."""
    n = instance.n
    for m in instance.group_counts:
        for cuts in itertools.combinations(range(1, n), m - 1):
            yield cuts_to_sizes(cuts, n)


def bruteforce(instance, max_groupings: int = 20_000, return_value: bool = False):
    """The optimal group sizes by enumeration (and the optimum if ``return_value``)."""
    count = sum(math.comb(instance.n - 1, m - 1) for m in instance.group_counts)
    if count > max_groupings:
        raise InstanceError("parts", f"brute force would enumerate {count:,} groupings (limit {max_groupings:,})")
    best_val, best = math.inf, None
    for sizes in all_groupings(instance):
        v, _ = evaluate(instance, sizes)
        if v < best_val:
            best_val, best = v, sizes
    return (best, best_val) if return_value else best


__all__ = ["bruteforce", "all_groupings"]
