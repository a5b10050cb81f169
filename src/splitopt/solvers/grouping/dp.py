"""Exact grouping by threshold enumeration + a vectorised min-sum DP (``grouping`` family).

Every grouping objective has the form ``sum_i f(G_i) + lambda_m max_i g(G_i) + const`` over
contiguous partitions into ``m`` groups (digest 003 §5.3 table; ``f, g, lambda_m`` from
:class:`splitopt.models.grouping.IntervalCosts`):

* ``perf`` (thesis §5.2 Perf through the closed form of digest §1.6a): ``f = g = w``,
  ``lambda = R - 1``;
* ``thesis_cost`` (thesis Defs. 4.2-4.5, Alg. 3 objective, digest §1.6f): ``f`` = the per-group
  ``Cost``, ``g = T``, ``lambda_m = delta m / T_total``, ``const = -delta``;
* ``bottleneck``: ``f = 0``, ``g = w`` (or ``T``), ``lambda = 1``.

Method (digest §5.3 method 4): for a threshold ``theta``, ``F_m(theta)`` = min-sum of ``f`` over
``m``-partitions whose intervals all have ``g <= theta`` (DP ``F_m(j) = min_{i<j} F_{m-1}(i) +
f(i, j)``); the optimum is ``min_{theta, m} F_m(theta) + lambda_m theta + const`` over the distinct
interval values ``theta`` of ``g`` (the max of the optimal grouping is one of them, and using an
upper bound ``theta >= max`` only over-estimates, so the minimum is exact).

Speed-ups (ours, exact): thresholds below the min-max optimum ``theta*_m`` are infeasible and
skipped (one min-max DP); thresholds are processed in increasing order in numpy batches (one
``(q, n+1, n+1)`` masked tensor per batch) and the scan stops as soon as
``F_m(inf) + lambda_m theta + const`` -- a lower bound for every larger threshold because
``F_m(theta) >= F_m(inf)`` and ``lambda_m >= 0`` -- reaches the incumbent. The largest threshold
(all intervals allowed) is put into the first batch so the incumbent starts at the unconstrained
min-sum optimum (timings against the thesis's exhaustive search: ``benchmarks/grouping.py``).

Returns group sizes; the objective is recomputed by the evaluator. The thesis's claim that the
problem is NP-hard (Def. 4.1, §4.1) is wrong for this chain model (digest §5.1 #1).
"""

from __future__ import annotations

import numpy as np

from splitopt.models.grouping import interval_costs
from splitopt.solvers.grouping.linear_partition import minmax_tables


def _minsum_tables(f: np.ndarray, k_max: int):
    """Unconstrained min-sum DP: ``F[m, j]`` and last-group starts ``arg[m, j]``."""
    n = f.shape[0] - 1
    F = np.full((k_max + 1, n + 1), np.inf)
    arg = np.zeros((k_max + 1, n + 1), dtype=np.int64)
    F[0, 0] = 0.0
    for m in range(1, k_max + 1):
        cand = F[m - 1][:, None] + f
        arg[m] = np.argmin(cand, axis=0)
        F[m] = cand[arg[m], np.arange(n + 1)]
    return F, arg


def _batch_values(f: np.ndarray, g: np.ndarray, thetas: np.ndarray, k_max: int) -> np.ndarray:
    """``F_m(theta)`` for each ``theta`` in the batch and each ``m <= k_max``: shape ``(k_max+1, q)``."""
    n = f.shape[0] - 1
    q = len(thetas)
    A = np.where(g[None, :, :] <= thetas[:, None, None], f[None, :, :], np.inf)  # (q, n+1, n+1)
    F = np.full((q, n + 1), np.inf)
    F[:, 0] = 0.0
    out = np.full((k_max + 1, q), np.inf)
    for m in range(1, k_max + 1):
        F = np.min(F[:, :, None] + A, axis=1)
        out[m] = F[:, n]
    return out


def solve(instance, batch: int = 32, return_info: bool = False):
    """Exact optimum of any grouping objective; returns group sizes (or ``(sizes, info)``)."""
    ic = interval_costs(instance)
    n = ic.n
    f, g = ic.f, ic.g
    ms = list(instance.group_counts)
    k_max = max(ms)
    lam = {m: ic.lam(m) for m in ms}
    info = {"thresholds_total": 0, "thresholds_scanned": 0, "batches": 0}

    Finf, _ = _minsum_tables(f, k_max)
    if all(lam[m] == 0 for m in ms):  # pure min-sum
        best_m = min(ms, key=lambda m: (Finf[m, n], m))
        theta_best = np.inf
    else:
        Mm, _ = minmax_tables(g, k_max)
        theta_lo = min(Mm[m, n] for m in ms)
        cand = np.unique(g[np.isfinite(g)])
        cand = cand[cand >= theta_lo]
        info["thresholds_total"] = int(len(cand))
        order = np.concatenate([[len(cand) - 1], np.arange(len(cand) - 1)]) if len(cand) > 1 else np.arange(len(cand))
        best = (np.inf, None, None)  # value, theta, m
        pos = 0
        cap = max(1, int(4_000_000 // ((n + 1) ** 2)))  # keep one batch tensor under ~32 MB
        size = min(batch, cap)
        while pos < len(order):
            idx = order[pos:pos + size]
            thetas = cand[idx]
            vals = _batch_values(f, g, thetas, k_max)
            info["batches"] += 1
            info["thresholds_scanned"] += len(idx)
            for m in ms:
                tot = vals[m] + lam[m] * thetas
                r = int(np.argmin(tot))
                if tot[r] < best[0] - 1e-12 * max(1.0, abs(best[0])) or best[1] is None and np.isfinite(tot[r]):
                    best = (float(tot[r]), float(thetas[r]), m)
            pos += len(idx)
            size = min(2 * size, 256, cap)
            if pos < len(order):
                nxt = cand[order[pos]]  # scanning in increasing order after the first batch
                lb = min(Finf[m, n] + lam[m] * nxt for m in ms)
                if lb >= best[0] - 1e-12 * max(1.0, abs(best[0])):
                    break
        _, theta_best, best_m = best
    # reconstruct at the best threshold
    fm = np.where(g <= theta_best, f, np.inf) if np.isfinite(theta_best) else f
    F, arg = _minsum_tables(fm, best_m)
    sizes, j = [], n
    for mm in range(best_m, 0, -1):
        i = int(arg[mm, j])
        sizes.append(j - i)
        j = i
    sizes = sizes[::-1]
    if return_info:
        info["theta"] = theta_best
        info["m"] = best_m
        return sizes, info
    return sizes


__all__ = ["solve"]
