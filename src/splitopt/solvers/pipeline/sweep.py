"""Sweeps of a ``pipeline`` instance (issue 24 item 5): the optimal plan over a link-rate factor,
the mini-batch size ``B`` or one client's speed.

No pipeline parameter admits an exact piecewise-affine sweep (:mod:`splitopt.validation.sweep`):
for a fixed plan the round latency ``L = T_f + xi T_i`` (seed 001, Eqs. 12-14) has ``T_f`` affine
in the inverse of a rate or speed but ``T_i`` is a *maximum* of stage times, each affine in it, so
a plan's latency is convex (not affine) in the inverse and the optimum over plans is neither convex
nor concave; ``B`` changes the allowed micro-batch sizes and ``xi`` in steps. So every parameter is
*sampled*, with the resolution stated, each sample solved exactly by the family's default ``auto``
(:mod:`.auto`) and its plan rechecked by the evaluator; ``batch`` is exact over the integers when
``--samples`` covers every integer of the range (each integer solved exactly).

Parameters (``PARAMS``):

* ``rate_scale``: a factor multiplying every link rate of ``rates_bytes_per_s`` (1 = the instance);
* ``batch``: the mini-batch size ``B`` in samples (integers; every ``b`` in ``1..B`` allowed unless
  the instance fixes ``micro_batches``, which must then stay within ``B``);
* ``client_flops[m]``: the FP/BP speed of client ``m`` in FLOP/s (e.g. ``client_flops[0]``).
"""

from __future__ import annotations

import math
import re
import time

from splitopt.errors import InstanceError
from splitopt.instances.pipeline import PipelineInstance
from splitopt.validation.sweep import Piece, SweepResult, check_range, equal_runs, log_samples

PARAMS = {
    "rate_scale": "factor on every link rate (1 = the instance's rates; sampled log-spaced)",
    "batch": "mini-batch size B in samples (integers; exact when --samples covers every integer, else sampled)",
    "client_flops[m]": "FLOP/s of client m, e.g. client_flops[0] (sampled log-spaced)",
}
#: axis labels with units
LABELS = {"rate_scale": "link-rate factor (x rates_bytes_per_s)", "batch": "mini-batch size B (samples)"}


def _at(instance: PipelineInstance, param: str, v: float) -> PipelineInstance:
    if param == "rate_scale":
        return instance.scaled(rate=v)
    if param == "batch":
        return instance.with_(batch=int(v))
    m = int(re.fullmatch(r"client_flops\[(\d+)\]", param).group(1))
    fl = list(instance.client_flops)
    fl[m] = v
    return instance.with_(client_flops=tuple(fl))


def _key(assignment) -> tuple:
    return (assignment["b"], tuple(assignment["cuts"]), tuple(assignment["servers"]))


def sweep(instance: PipelineInstance, param: str, lo: float, hi: float, *, samples: int = 50,
          check: bool = True) -> SweepResult:
    """Runs of equal optimal plans over ``param`` in ``[lo, hi]`` (see the module docstring)."""
    from splitopt.families import solve

    mm = re.fullmatch(r"client_flops\[(\d+)\]", param)
    if param not in ("rate_scale", "batch") and mm is None:
        raise InstanceError("--param", f"unknown pipeline sweep parameter {param!r} (known: {', '.join(PARAMS)})")
    if mm is not None and not int(mm.group(1)) < instance.n_clients:
        raise InstanceError("--param", f"{param}: the instance has clients 0..{instance.n_clients - 1}")
    lo, hi = check_range(param, lo, hi)
    samples = max(2, int(samples))
    t0 = time.perf_counter()
    exact = False
    if param == "batch":
        if lo != int(lo) or hi != int(hi) or lo < 1:
            raise InstanceError("--from" if lo != int(lo) or lo < 1 else "--to",
                                f"batch must be integers >= 1, got {lo:g}..{hi:g}")
        n = int(hi) - int(lo) + 1
        if n <= samples:
            values, exact = [float(x) for x in range(int(lo), int(hi) + 1)], True
        else:
            values = sorted({float(round(x)) for x in log_samples(lo, hi, samples)})
    else:
        values = log_samples(lo, hi, samples)
    sols = []
    for v in values:
        inst = _at(instance, param, v)
        s = solve(inst)
        sols.append((v, _key(s.assignment), s.assignment, s.objective, s.status))
    pieces = []
    for i, j in equal_runs([s[1] for s in sols]):
        a, b, asg = sols[i][0], sols[j][0], sols[i][2]
        c_lo, c_hi = sols[i][3], sols[j][3]
        if check:
            from splitopt.models.pipeline import evaluate

            for v, c in ((a, c_lo), (b, c_hi)):
                e = evaluate(_at(instance, param, v), asg)[0]
                if abs(e - c) > 1e-9 * max(abs(e), abs(c), 1e-300):
                    raise RuntimeError(f"sweep: evaluator {e!r} at {param}={v} but solve gave {c!r}")
        status = {s[4] for s in sols[i:j + 1]}
        pieces.append(Piece(a, b, asg, math.nan, math.nan, c_lo, c_hi,
                            f"b = {asg['b']}, {len(asg['servers'])} server block(s) on {', '.join(asg['servers'])}"
                            + ("" if status == {"optimal"} else f" (status {', '.join(sorted(status))})")))
    if exact:
        resolution, method = None, "every integer B solved exactly (auto)"
    else:
        ratio = (hi / lo) ** (1.0 / (len(values) - 1)) if hi > lo and len(values) > 1 else 1.0
        resolution = f"{len(values)} log-spaced samples, neighbours {ratio:.4g}x apart"
        method = "sampling, each sample solved exactly (auto): a plan's latency is convex, not affine, in the rate"
    res = SweepResult(family="pipeline", instance=instance.name, param=param, lo=lo, hi=hi, transform="p",
                      exact=exact, pieces=pieces, solves=len(values), seconds=time.perf_counter() - t0,
                      method=method, resolution=resolution,
                      notes=["cost = round latency L in seconds (Eqs. 12-14); a piece spans the samples where that "
                             "plan was optimal" + ("" if exact else "; between two samples of different pieces the "
                                                   "optimum is not known")])
    res.x_label = LABELS.get(param, f"{param} (FLOP/s)")
    res.y_label = "optimal round latency L (s)"
    res.size_label = "server blocks"
    return res


__all__ = ["sweep", "PARAMS"]
