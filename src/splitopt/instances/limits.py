"""Range limits of every numeric field, stated once and enforced when an instance is built.

Every number splitopt reads must lie in a range where every algorithm's arithmetic stays finite
and meaningful in double precision: sums over a million layers, a size divided by the slowest
rate, products in the McCormick and RLT models and the solvers' scaled rows. Issue 13 found
``OverflowError``, ``inf`` objectives printed as results and numpy type errors from values such as
1e300 bytes over a 1e-300 rate, or a convolution count of 1e308; the limits below make such input
an :class:`~splitopt.errors.InstanceError` naming the field, at load time, so no algorithm ever sees
it (``inspect`` and ``solve`` load through the same constructors, so they validate the same way).

=============  =====================================  ====================================================
kind           range                                  fields (JSON names)
=============  =====================================  ====================================================
quantity       [0, 1e30]                              seconds, bytes, FLOP, memory, latencies, overheads
rate           [1e-12, 1e30]                          bytes/s, FLOP/s, speed-up / slow-down factors
link rate      0 (no link) or [1e-12, 1e30]           ``throughput`` link rates
count          integers in [minimum, 1e9]             iterations, requests, convolution counts, k, caps
batch          integers in [1, 65536]                 ``pipeline`` samples per (micro-)batch
=============  =====================================  ====================================================

Why these bounds: the largest derived term is a quantity over a rate times a count, at most
1e30 / 1e-12 * 1e9 = 1e51, and a sum of a million such terms 1e57; squared (McCormick/RLT products,
variance-like balance terms) 1e114, far below the double range (1.8e308). Values below the minimum
rate are physically meaningless (one byte per 31,700 years) and make every other cost negligible.
Quantities may be as small as the subnormals: the solvers scale the objective
(``solvers.exact`` objective scaling) and the combinatorial algorithms work in relative terms.

Use: a family declares ``LIMITS = {pattern: limit}`` on its instance type, with patterns in the
JSON field names of ``to_dict()`` (``"device_s[]"``, ``"parts[].t_seconds"``,
``"rates_bytes_per_s[][]"``, ``"graph.layers[].fwd_seconds.*"``), and calls ``limits.enforce(self)``
at the end of ``__post_init__`` (grouping, throughput), or ``limits.check(view, LIMITS)`` with a
dict of just those fields when ``to_dict()`` would be costly (split: it would serialise the graph,
whose layer numbers :class:`~splitopt.instances.graph.DNNGraph` checks as quantities itself). A
field absent or ``null`` (optional) is skipped. The same limits apply to platforms (rates, node
FLOP/s and speed-ups are rates; memories, overheads and latencies quantities).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from splitopt.errors import InstanceError, check_number

#: largest quantity (seconds, bytes, FLOP) and largest rate
MAX_VALUE = 1e30
#: smallest positive rate (bytes/s, FLOP/s, factors)
MIN_RATE = 1e-12
#: largest count (iterations, requests, convolutions, group counts, caps)
MAX_COUNT = 10**9


@dataclass(frozen=True)
class Limit:
    """A closed range ``[lo, hi]`` (``zero``: 0 is allowed as well; ``integer``: whole numbers only)."""

    kind: str
    lo: float
    hi: float
    integer: bool = False
    zero: bool = False

    def describe(self) -> str:
        rng = f"[{self.lo:g}, {self.hi:g}]"
        if self.integer:
            return f"an integer in {rng}"
        return f"0 or in {rng}" if self.zero else f"in {rng}"

    def check(self, path: str, value: Any) -> float | int:
        """``value`` as a float (an int for counts), or :class:`InstanceError` naming ``path``."""
        if self.integer:
            return check_count(path, value, int(self.lo), int(self.hi), kind=self.kind)
        v = check_number(path, value, minimum=None)
        if (self.zero and v == 0.0) or self.lo <= v <= self.hi:
            return v
        if v < 0 or (v == 0 and not self.zero):  # the plain sign rule, as for any number
            rule = "must be >= 0" if self.lo == 0 else "must be > 0"
        elif v < self.lo:
            rule = f"must be >= {self.lo:g} ({self.kind} limit, see README 'Range limits')"
        else:
            rule = f"must be <= {self.hi:g} ({self.kind} limit, see README 'Range limits')"
        raise InstanceError(path, f"{rule}, got {value!r}"[:300])


def check_count(path: str, value: Any, minimum: int = 0, maximum: int = MAX_COUNT, kind: str = "count") -> int:
    """An integer in ``[minimum, maximum]`` (a float with an integral value is accepted), else
    :class:`InstanceError` naming ``path``."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import numpy as np

            if isinstance(value, np.integer):
                value = int(value)
            else:
                raise TypeError
        except TypeError:
            raise InstanceError(path, f"must be an integer, got {value!r}"[:300]) from None
    if not minimum <= value <= maximum:
        shown = str(value) if value.bit_length() <= 100 else f"an integer of about {int(value.bit_length() * 0.30103)} digits"
        raise InstanceError(path, f"must be an integer in [{minimum}, {maximum:,}] ({kind} limit, see README "
                                  f"'Range limits'), got {shown}")
    return value


QUANTITY = Limit("quantity", 0.0, MAX_VALUE)
RATE = Limit("rate", MIN_RATE, MAX_VALUE)
LINK_RATE = Limit("link rate", MIN_RATE, MAX_VALUE, zero=True)
COUNT = Limit("count", 0, MAX_COUNT, integer=True)
POSITIVE_COUNT = Limit("count", 1, MAX_COUNT, integer=True)
#: samples per batch (``pipeline``): at most 2^16, the largest batch trained in practice (BERT with LAMB,
#: You et al., ICLR 2020); the pipeline algorithms enumerate micro-batch sizes 1..B, and B = 1e9
#: exhausted 24 GiB of memory (found while adding the pipeline family to the fuzz test)
BATCH = Limit("batch", 1, 2**16, integer=True)

_TOKEN = re.compile(r"\[\]|[^.\[\]]+")


def _compile(pattern: str) -> tuple[Any, ...]:
    return tuple(None if t == "[]" else t for t in _TOKEN.findall(pattern))


def matches(tree: Any, pattern: str) -> Iterator[tuple[str, Any]]:
    """Every ``(path, value)`` of ``tree`` the pattern names: ``[]`` stands for every list item,
    ``*`` for every value of an object; absent fields and ``null`` values are skipped."""

    def walk(node, tokens, path):
        if node is None:
            return
        if not tokens:
            yield path, node
            return
        t, rest = tokens[0], tokens[1:]
        if t is None:
            if isinstance(node, (list, tuple)):
                for i, v in enumerate(node):
                    yield from walk(v, rest, f"{path}[{i}]")
        elif isinstance(node, Mapping):
            if t == "*":
                for k, v in node.items():
                    yield from walk(v, rest, f"{path}.{k}" if path else str(k))
            elif t in node:
                yield from walk(node[t], rest, f"{path}.{t}" if path else t)

    yield from walk(tree, _compile(pattern), "")


def check(tree: Any, spec: Mapping[str, Limit]) -> None:
    """Check every field of ``tree`` (a ``to_dict()``) that ``spec``'s patterns name."""
    for pattern, limit in spec.items():
        for path, value in matches(tree, pattern):
            limit.check(path, value)


def enforce(instance: Any, spec: Mapping[str, Limit] | None = None) -> None:
    """The one call a family makes at the end of its instance's ``__post_init__``: check
    ``instance.to_dict()`` against ``spec`` (default: the instance type's ``LIMITS``)."""
    check(instance.to_dict(), type(instance).LIMITS if spec is None else spec)


def table(spec: Mapping[str, Limit]) -> list[tuple[str, str]]:
    """``(pattern, range)`` rows for documentation."""
    return [(p, f"{lim.kind}: {lim.describe()}") for p, lim in spec.items()]


__all__ = ["Limit", "QUANTITY", "RATE", "LINK_RATE", "COUNT", "POSITIVE_COUNT", "BATCH", "MAX_VALUE", "MIN_RATE", "MAX_COUNT",
           "check", "check_count", "enforce", "matches", "table"]
