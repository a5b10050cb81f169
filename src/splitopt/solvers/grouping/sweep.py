"""Sweeps of a ``grouping`` instance over the number of requests (exact) or the link rate (sampled).

``requests`` (``R``): for a fixed grouping ``G`` the thesis's Perf (§5.2 recurrence, closed form
``sum_i w_i + (R - 1) max_i w_i`` of digest 003 §1.6a) is affine in ``R`` with intercept
``sum_i w_i - max_i w_i`` and slope ``max_i w_i``; ``bottleneck`` and ``thesis_cost`` do not depend on
``R`` (slope 0). The optimum over groupings is therefore a minimum of affine functions of ``R``,
concave, and :func:`splitopt.validation.sweep.integer_envelope` finds every piece over the integers
``lo..hi`` exactly (Eisner-Severance, probing the two integers around each intersection), solving each
probe with the exact default ``auto``. The line of a grouping is read off the family evaluator at
``R = 1`` and ``R = 2``, and checked against the evaluator at both ends of each piece.

``bandwidth_bytes_per_s``: a group's stage time ``w_i = T_i + D_i / bandwidth`` is affine in the
inverse rate, but Perf takes a maximum over groups, so a grouping's cost is convex (not affine) in it
and the optimum is neither concave nor convex: no exact piece search applies. The sweep samples
``samples`` log-spaced rates and reports runs of equal optimal groupings; a change of the optimum may
hide between two neighbouring samples (the resolution is stated in the result).
"""

from __future__ import annotations

import math
import time

from splitopt.errors import InstanceError
from splitopt.instances.grouping import GroupingInstance
from splitopt.validation.sweep import Piece, SweepResult, check_range, equal_runs, integer_envelope, log_samples

PARAMS = {
    "requests": "number of requests R (integer; exact)",
    "bandwidth_bytes_per_s": "link rate between groups, bytes/s (sampled at --samples log-spaced values)",
}


def _solve(inst: GroupingInstance) -> tuple[int, ...]:
    from splitopt.families import solve

    return tuple(solve(inst, "auto").assignment)


def sweep(instance: GroupingInstance, param: str, lo: float, hi: float, *, samples: int = 50,
          check: bool = True) -> SweepResult:
    """Pieces of the optimal grouping over ``param`` in ``[lo, hi]`` (see the module docstring)."""
    from splitopt.models.grouping import evaluate

    if param not in PARAMS:
        raise InstanceError("--param", f"unknown grouping sweep parameter {param!r} (known: {', '.join(PARAMS)})")
    lo, hi = check_range(param, lo, hi)
    t0 = time.perf_counter()
    if param == "requests":
        if lo != int(lo) or hi != int(hi) or lo < 1:
            raise InstanceError("--from" if lo != int(lo) or lo < 1 else "--to",
                                f"requests must be integers >= 1, got {lo:g}..{hi:g}")
        lo_i, hi_i = int(lo), int(hi)
        lines: dict[tuple[int, ...], tuple[float, float]] = {}

        def line(key):
            if key not in lines:
                c1 = evaluate(instance.with_(requests=1), list(key))[0]
                c2 = evaluate(instance.with_(requests=2), list(key))[0]
                lines[key] = (2.0 * c1 - c2, c2 - c1)
            return lines[key]

        raw, solves = integer_envelope(lambda r: _solve(instance.with_(requests=r)), line, lo_i, hi_i)
        pieces = []
        for a, b, key in raw:
            ia, ib = line(key)
            c_lo = c_hi = None
            if check:
                c_lo = evaluate(instance.with_(requests=a), list(key))[0]
                c_hi = evaluate(instance.with_(requests=b), list(key))[0]
                for r, c in ((a, c_lo), (b, c_hi)):
                    f = ia + ib * r
                    if abs(c - f) > 1e-9 * max(abs(c), abs(f), 1e-300):
                        raise RuntimeError(f"sweep: evaluator {c!r} at requests={r} but line {f!r}")
            pieces.append(Piece(float(a), float(b), list(key), ia, ib, c_lo, c_hi, f"{len(key)} groups {list(key)}"))
        return SweepResult(family="grouping", instance=instance.name, param=param, lo=lo, hi=hi, transform="p",
                           exact=True, pieces=pieces, solves=solves, seconds=time.perf_counter() - t0,
                           method="Eisner-Severance over the integers R with the exact auto",
                           notes=["pieces are integer ranges of R: 'from' and 'to' are both included"])
    samples = max(2, int(samples))
    values = log_samples(lo, hi, samples)
    sols = [(v, _solve(instance.with_(bandwidth_bytes_per_s=v))) for v in values]
    pieces = []
    for i, j in equal_runs([s[1] for s in sols]):
        a, b, key = sols[i][0], sols[j][0], sols[i][1]
        c_lo = evaluate(instance.with_(bandwidth_bytes_per_s=a), list(key))[0]
        c_hi = evaluate(instance.with_(bandwidth_bytes_per_s=b), list(key))[0]
        pieces.append(Piece(a, b, list(key), math.nan, math.nan, c_lo, c_hi, f"{len(key)} groups {list(key)}"))
    ratio = (hi / lo) ** (1.0 / (samples - 1)) if hi > lo else 1.0
    return SweepResult(family="grouping", instance=instance.name, param=param, lo=lo, hi=hi, transform="p",
                       exact=False, pieces=pieces, solves=len(values), seconds=time.perf_counter() - t0,
                       method="sampling (the cost is not piecewise affine in the rate)",
                       resolution=f"{samples} log-spaced samples, neighbours {ratio:.4g}x apart",
                       notes=["a piece spans the samples where that grouping was optimal; the optimum between "
                              "two samples of different pieces is not known"])


__all__ = ["sweep", "PARAMS"]
