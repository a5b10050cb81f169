"""The compiled inner loop of the DP over all ideals (:mod:`.idealdp`; numba): for a run of ideals
``I`` in order of size, every ideal ``J ⊃ I`` whose block ``J \\ I`` could beat the incumbent
extends every live state of ``I`` by that block. Split out of :mod:`.idealdp` as
:mod:`.pricing_kernels` is out of :mod:`.pricing`; the mathematics (Tarnawski et al., NeurIPS 2020,
§4, and our changes) is in :mod:`.idealdp`'s docstring."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def dp_run(steps, full, up_ptr, up_idx, aw, cw, sz, us, counts, msize, sec, cut_ptr, cut_idx, cut_sec, val,
           par, on_cpu, k, n_cpus, cap, U, total_acc, eps, slack, stamp, stack):  # pragma: no cover (compiled)
    """Relax the states of the ideals ``steps`` (ideal indices, each after every ideal it contains)
    into ``val`` (best max-load per ideal and state ``c * (k + 1) + f``: ``c`` CPU-core blocks and
    ``f`` accelerator blocks so far), ``par`` (the ideal before the last block) and ``on_cpu``
    (whether that block is on a CPU core), in place.

    A state of ``I`` lives while its value is below the incumbent ``U`` and the accelerator work
    left fits ``slack`` (:mod:`.idealdp`). The ideals ``J ⊃ I`` are walked up the covers of the
    lattice of ideals (``up_idx[up_ptr[J]:up_ptr[J + 1]]``: the ideals ``J + s``), each once
    (``stamp``), and a walk stops where the block's work reaches ``U`` (and, on an accelerator, where
    it would hold an unsupported super-node or exceed the memory ``cap``): all three only grow up
    the lattice, so every block that can beat ``U`` is met. A block ``B = J \\ I`` on an accelerator
    costs its work plus the seconds of the tensors it cuts, ``cut_sec[J]`` corrected on the tensors
    ``I`` cuts (``cut_idx[cut_ptr[I]:cut_ptr[I + 1]]``): a tensor of ``m`` members is paid iff
    ``0 < |M ∩ B| < m``, with ``|M ∩ B| = counts[J] - counts[I]``. A block on a CPU core costs its
    CPU work."""
    F = k + 1
    C = n_cpus + 1
    S = C * F
    srcs = np.empty(S, np.int64)
    for I in steps:
        if I == full:
            continue
        rem = total_acc - aw[I]
        for mode in range(2):  # 0: the block on an accelerator, 1: on a CPU core
            ns = 0
            for c in range(C):
                for f in range(F):
                    if (mode == 0 and f == k) or (mode == 1 and c == n_cpus):
                        continue
                    s = c * F + f
                    if val[I, s] < U and rem <= slack[s] + eps:
                        srcs[ns] = s
                        ns += 1
            if ns == 0:
                continue
            key = 2 * I + mode
            step = 1 if mode == 0 else F
            top = 0
            stack[0] = I
            top = 1
            while top > 0:
                top -= 1
                P = stack[top]
                for q in range(up_ptr[P], up_ptr[P + 1]):
                    J = up_idx[q]
                    if stamp[J] == key:
                        continue
                    stamp[J] = key
                    if mode == 0:
                        work = aw[J] - aw[I]
                        if work >= U + eps or us[J] != us[I] or sz[J] - sz[I] > cap:
                            continue
                        cost = work + cut_sec[J]
                        for r in range(cut_ptr[I], cut_ptr[I + 1]):
                            t = cut_idx[r]
                            dj = counts[J, t]
                            m = msize[t]
                            d = dj - counts[I, t]
                            if 0 < d < m:
                                cost += sec[t]
                            if 0 < dj < m:
                                cost -= sec[t]
                    else:
                        cost = cw[J] - cw[I]
                        if cost >= U + eps:
                            continue
                    stack[top] = J
                    top += 1
                    if cost >= U:
                        continue
                    for r in range(ns):
                        s = srcs[r]
                        nv = max(val[I, s], cost)
                        d = s + step
                        if nv < val[J, d]:
                            val[J, d] = nv
                            par[J, d] = I
                            on_cpu[J, d] = mode == 1
