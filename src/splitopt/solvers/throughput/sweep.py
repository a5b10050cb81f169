"""Sweeps of a ``throughput`` instance over a link rate or a node speed (issue 24 item 5), sampled
with a stated resolution and a proof where one exists.

Why sampled: the period of a fixed placement ``S`` is ``max(node times, link times)`` (paper §IV),
so as a function of ``x = 1 / rate`` of one link (or ``1 / speed`` of one node) it is
``g_S(x) = max(c_S, d_S + b_S x)``, convex but not affine; the optimum ``f = min_S g_S`` is neither
concave nor convex and the Eisner-Severance piece search (:mod:`splitopt.validation.sweep`) does not
apply. What does hold: every ``g_S`` is non-increasing in the rate (speed), hence so is ``f``. Between
two neighbouring samples ``p_i < p_{i+1}`` with optimal placements ``S_i``, ``S_{i+1}``:

* ``f(p) >= f(p_{i+1})`` and ``g_{S_i}(p) <= g_{S_i}(p_i) = f(p_i)``: the placement listed for the
  interval is within ``f(p_i) / f(p_{i+1}) - 1`` of the optimum everywhere in it (the stated
  resolution, as a cost ratio);
* when ``f(p_i) = f(p_{i+1})`` (within 1e-9) the optimum is flat there and ``S_i`` is **proven**
  optimal on the whole interval (the count of such intervals is reported).

Parameters (``PARAMS``): ``rate_bytes_per_s`` (every existing link), ``rate_bytes_per_s:A:B`` (the
link between nodes A and B, both directions), ``node_flops:A`` (node A's speed, FLOP/s). Each sample
is solved by the exact ``bnb``; costs are periods in seconds from the family evaluator.
"""

from __future__ import annotations

import math
import time

from splitopt.errors import InstanceError
from splitopt.instances.throughput import ThroughputInstance
from splitopt.validation.sweep import Piece, SweepResult, check_range, equal_runs, log_samples

PARAMS = {
    "rate_bytes_per_s": "every existing link's rate, bytes/s (sampled, log-spaced)",
    "rate_bytes_per_s:A:B": "the rate of the link between nodes A and B (both directions), bytes/s (sampled)",
    "node_flops:A": "node A's speed, FLOP/s (sampled)",
}
_REL = 1e-9


def _setter(instance: ThroughputInstance, param: str):
    """``value -> instance`` for ``param`` (InstanceError naming ``--param`` when unknown)."""
    name, _, rest = param.partition(":")
    nodes = {nm: a for a, nm in enumerate(instance.nodes)}
    if name == "rate_bytes_per_s" and not rest:
        def set_all(v):
            return instance.with_(rates=tuple(tuple(math.inf if a == b else (v if r > 0 else 0.0)
                                                    for b, r in enumerate(row)) for a, row in enumerate(instance.rates)))
        return set_all, "all links' rate (bytes/s)"
    if name == "rate_bytes_per_s":
        a_nm, _, b_nm = rest.partition(":")
        if a_nm not in nodes or b_nm not in nodes or a_nm == b_nm:
            raise InstanceError("--param", f"{param!r}: give two different nodes of {', '.join(instance.nodes)} "
                                           "as rate_bytes_per_s:A:B")
        a, b = nodes[a_nm], nodes[b_nm]

        def set_link(v):
            rates = [list(r) for r in instance.rates]
            rates[a][b] = rates[b][a] = v
            return instance.with_(rates=tuple(tuple(r) for r in rates))
        return set_link, f"rate of link {a_nm}-{b_nm} (bytes/s)"
    if name == "node_flops" and rest in nodes:
        a = nodes[rest]

        def set_node(v):
            flops = list(instance.node_flops)
            flops[a] = v
            return instance.with_(node_flops=tuple(flops))
        return set_node, f"speed of node {rest} (FLOP/s)"
    raise InstanceError("--param", f"unknown throughput sweep parameter {param!r} (known: {', '.join(PARAMS)}; "
                                   f"nodes: {', '.join(instance.nodes)})")


def _solve(inst: ThroughputInstance) -> tuple[tuple[str, ...], float]:
    from splitopt.families import solve

    s = solve(inst, "bnb")
    if s.status != "optimal":  # pragma: no cover - bnb without a limit always proves
        raise RuntimeError(f"sweep: bnb returned {s.status} at a sample")
    return tuple(s.assignment), s.objective


def _summary(instance: ThroughputInstance, key) -> str:
    used = sorted(set(key), key=instance.nodes.index)
    splits = sum(1 for i in range(len(key) - 1) if key[i] != key[i + 1])
    return f"{len(used)} node(s) {', '.join(used)}; {splits} split point(s)"


def sweep(instance: ThroughputInstance, param: str, lo: float, hi: float, *, samples: int = 50,
          check: bool = True) -> SweepResult:
    """Runs of equal optimal placements over ``param`` in ``[lo, hi]`` (see the module docstring)."""
    from splitopt.models.throughput import evaluate

    if getattr(instance, "comm_model", "links") == "device":
        raise InstanceError("comm_model", "the throughput sweep handles the links model only")
    set_value, label = _setter(instance, param)
    lo, hi = check_range(param, lo, hi)
    t0 = time.perf_counter()
    samples = max(2, int(samples))
    values = log_samples(lo, hi, samples) if hi > lo else [lo]
    sols = [(v, *_solve(set_value(v))) for v in values]
    worst, flat = 0.0, 0
    for (_v0, _k0, f0), (_v1, _k1, f1) in zip(sols, sols[1:]):
        if abs(f0 - f1) <= _REL * max(f0, f1):
            flat += 1
        elif f1 > 0:
            worst = max(worst, f0 / f1 - 1.0)
    pieces = []
    for i, j in equal_runs([s[1] for s in sols]):
        a, b, key = sols[i][0], sols[j][0], sols[i][1]
        c_lo, c_hi = sols[i][2], sols[j][2]
        if check:  # the evaluator at both ends, recomputed from the placement
            c_lo = evaluate(set_value(a), list(key))[0]
            c_hi = evaluate(set_value(b), list(key))[0]
        pieces.append(Piece(a, b, list(key), math.nan, math.nan, c_lo, c_hi, _summary(instance, key)))
    ratio = (hi / lo) ** (1.0 / (samples - 1)) if hi > lo else 1.0
    res = SweepResult(family="throughput", instance=instance.name, param=param, lo=lo, hi=hi, transform="p",
                      exact=False, pieces=pieces, solves=len(values), seconds=time.perf_counter() - t0,
                      method="sampling with the exact bnb (the period is max(constant, affine) per placement: "
                             "not piecewise affine)",
                      resolution=f"{samples} log-spaced samples, neighbours {ratio:.4g}x apart; between samples "
                                 f"the placement of the lower sample is within {100 * worst:.3g} % of the optimum",
                      notes=[f"the optimal period is non-increasing in the {label}: on {flat} of "
                             f"{max(len(values) - 1, 0)} intervals it is flat and the placement proven optimal "
                             "throughout",
                             "a piece spans the samples where that placement was optimal"])
    res.cost_label = "optimal period (s)"
    res.param_label = label
    return res


__all__ = ["sweep", "PARAMS"]
