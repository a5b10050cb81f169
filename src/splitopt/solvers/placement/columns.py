"""Columns of the configuration LP (:mod:`.configlp`) and placements made of them (split out of
:mod:`.configlp` 2026-11-29): the starting windows along the DP pricer's order, the class sets of a
placement, and the node placement of a device per class."""

from __future__ import annotations

import time

import numpy as np

from splitopt.instances.placement import PlacementInstance
from splitopt.solvers.placement.pricing import _Data


def windows(d: _Data, V: float, order, batch: int = 32, deadline: float | None = None) -> list[np.ndarray]:
    """Starting columns for the configuration LP at ``V`` (``seed=True`` of :class:`_ColGen`): for
    each start along ``order`` (the DP pricer's, topological where it prices convex sets, so every
    window is convex), the longest window from there that one accelerator holds (supported, load
    ``<= V``; memory is the caller's filter), each window once. From none, the master starts from
    singletons: on an Inception-like 1,548-node training graph (551 classes) its value was 46 after
    five pricings and 6.1 after 25 (it must reach 5), 0.7 s a pricing; from the windows it is 5.3
    at once. Each start's window is searched from the previous window's end on (``deadline``:
    the windows found by then; before, each start searched from itself: 17 s on a 4,156-node
    graph). Measured 2026-11-25 (idle 2-core machine), the first value of
    :func:`~.colgen.relaxation` (0.6 % below the benchmark's placement), from singletons -> from
    windows, windows included: the Inception-like graph, no verdict in 40 s -> "no" in 28 s;
    ResNet-50 none 2.5 -> 1.0 s; BERT-like 2,078 nodes convex 0.67 -> 0.38 s, 1,507-node training
    convex 0.21 -> 0.15 s; 3 x 31 layers none 0.40 -> 0.29 s, training 0.49 -> 0.34 s;
    Inception-like 300 nodes none 0.62 -> 0.60 s; slower: 3 x 50 none 1.3 -> 2.0 s."""
    G = d.G
    order = np.asarray(order)
    out: list[np.ndarray] = []
    last_end = 0
    for i in range(G):
        g = order[i]
        if not d.sup[g] or d.acc[g] > V:
            continue
        if deadline is not None and time.perf_counter() > deadline:
            break
        # two pointers: a window from a later start is taken to end no earlier (loads are not
        # monotone in the window, so this is a heuristic, as the columns are)
        end, best = max(i + 1, last_end), None
        while end <= G:
            ends = np.arange(end, min(end + batch, G + 1))
            X = np.zeros((len(ends), G), bool)
            for r, e in enumerate(ends):
                X[r, order[i:e]] = True
            ok = np.nonzero(d.fitting(X, V, memory=False))[0]
            if len(ok):
                best, end = X[ok[-1]], int(ends[ok[-1]])
            if not len(ok) or ok[-1] < len(ends) - 1:
                break
            end += 1
        if best is not None and end > last_end:
            out.append(best)
            last_end = end
    return out


def _sets_of(instance: PlacementInstance, d: _Data, assignment):
    """The class sets of the accelerators a placement uses, and the CPU core of every class (-1
    where on an accelerator)."""
    from splitopt.models.placement import device_indices

    p = device_indices(instance, assignment)
    dev = np.array([p[m[0]] for m in d.classes])
    sets = [dev == j for j in range(d.k) if (dev == j).any()]
    return sets, np.where(dev >= d.k, dev - d.k, -1)


def _placement(instance: PlacementInstance, d: _Data, place: np.ndarray) -> list[str]:
    names = [""] * instance.n_nodes
    for g, members in enumerate(d.classes):
        for i in members:
            names[i] = instance.devices[int(place[g])]
    return names


__all__ = ["windows"]
