"""The compiled kernels of the configuration LP's DP pricing (:class:`~.pathdp._PathDP`): one step
of the Pareto-front DP (:func:`_dp_step`) and the fractional-knapsack completion bound that prunes
it (:func:`_knapsacks`, :func:`_completion`; Dantzig's bound). Split out of :mod:`.pricing` (issue 22:
modules under 600 lines); the mathematics is in :mod:`splitopt.solvers.placement.colgen`'s
docstring (Tarnawski et al., NeurIPS 2020, §4; the configuration LP is ours)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _dp_step(L, P, offs, grp, src, add, take, gain, cap, keep, drop, floor, ka, kp, lg, lam):  # pragma: no cover
    # (compiled)
    """One step of :class:`_PathDP`: for every code after the step (``grp[i]:grp[i+1]`` indexes its
    incoming parts: the front of code ``src[j]`` before the step, shifted by ``add[j]`` seconds and,
    where ``take[j]``, by the profit ``gain``), the Pareto front of the merged parts: loads within
    ``cap``, ascending, each point strictly more profitable than every lighter one. Fronts arrive
    sorted by load, so a k-way merge is linear. Returns the new ``(L, P, offs)`` and per point the
    flat index of its parent and whether the class joined, and whether a front was thinned
    (``keep > 0``, a heuristic: each front thinned to ``keep`` points evenly spread along it, its
    first and last among them). Points of profit ``<= drop`` are left out (:meth:`_PathDP.price`'s
    ``floor``), and so are points whose profit plus the fractional knapsack of the classes to come
    (cumulative weights ``ka`` and profits ``kp`` by falling ratio, :func:`_knapsacks`) within the
    load left, ``cap - load``, is at most ``floor`` (none if ``ka`` is empty), and points whose profit
    plus ``min_q lg[code, q] + lam[q] (cap - load)`` is at most ``floor`` (the Lagrangian completion
    of :func:`_back_step`: ``lg`` per code after the step and multiplier; none if ``lam`` is empty)."""
    tot = 0
    for j in range(src.size):
        tot += offs[src[j] + 1] - offs[src[j]]
    Ln = np.empty(tot)
    Pn = np.empty(tot)
    par = np.empty(tot, np.int64)
    xs = np.empty(tot, np.bool_)
    ng = grp.size - 1
    offn = np.empty(ng + 1, np.int64)
    heads = np.empty(src.size, np.int64)
    n = 0
    thin = False
    for gi in range(ng):
        offn[gi] = n
        a, b = grp[gi], grp[gi + 1]
        for j in range(a, b):
            heads[j] = offs[src[j]]
        top = -np.inf
        while True:
            jb, lb, pb = -1, np.inf, -np.inf
            for j in range(a, b):
                h = heads[j]
                if h >= offs[src[j] + 1]:
                    continue
                lv = L[h] + add[j]
                if lv > cap:  # the rest of this front is heavier still
                    heads[j] = offs[src[j] + 1]
                    continue
                pv = P[h] + gain if take[j] else P[h]
                if lv < lb or (lv == lb and pv > pb):
                    jb, lb, pb = j, lv, pv
            if jb < 0:
                break
            h = heads[jb]
            heads[jb] = h + 1
            if pb > top:
                top = pb
                if pb > drop and (ka.size == 0 or pb + _completion(ka, kp, cap - lb) * (1 + 1e-12) + 1e-12 > floor) \
                        and (lam.size == 0 or _lagrange_ok(pb, lg[gi], lam, cap - lb, floor)):
                    Ln[n], Pn[n], par[n], xs[n] = lb, pb, h, take[jb]
                    n += 1
        cnt = n - offn[gi]
        if keep > 1 and cnt > keep:
            thin = True
            n0 = offn[gi]
            for t in range(keep):  # increasing sources: in place
                src_i = n0 + (t * (cnt - 1)) // (keep - 1)
                Ln[n0 + t], Pn[n0 + t], par[n0 + t], xs[n0 + t] = Ln[src_i], Pn[src_i], par[src_i], xs[src_i]
            n = n0 + keep
    offn[ng] = n
    return Ln[:n].copy(), Pn[:n].copy(), offn, par[:n].copy(), xs[:n].copy(), thin


@njit(cache=True)
def _lagrange_ok(p, f, lam, c, floor):  # pragma: no cover - compiled
    """Whether a point of profit ``p`` and load leaving ``c`` may still end above ``floor``: ``p +
    f[q] + lam[q] c > floor`` for every multiplier ``q`` (each is an upper bound; with a margin for
    rounding)."""
    for q in range(lam.size):
        b = f[q] + lam[q] * c
        if p + b + 1e-12 * (abs(p) + abs(f[q]) + lam[q] * abs(c) + 1.0) <= floor:
            return False
    return True


@njit(cache=True)
def _back_step(F, A, grp, src, add, take, gain, lam, nsrc):  # pragma: no cover - compiled
    """One step of the Lagrangian completion, backwards (ours, 2026-11-29): ``F[code, q]`` (codes after
    the step) is the most ``profit - lam[q] x load`` that the steps after it can add from that code,
    ``A[code, q]`` the load of a completion that attains it; returns the same for the ``nsrc`` codes
    before the step, over its transitions (``grp``, ``src``, ``add``, ``take`` as in :func:`_dp_step`,
    the class's profit ``gain``). No load limit: for every ``lam >= 0`` and every completion of load
    ``a <= c``, its profit is at most ``F + lam a <= F + lam c`` (Lagrangian relaxation of the load),
    so ``min_q F[code, q] + lam[q] c`` bounds what a point of that code with load ``c`` left can still
    gain, communication included. ``-inf`` where a code has no transition."""
    nl = lam.size
    out = np.full((nsrc, nl), -np.inf)
    outa = np.zeros((nsrc, nl))
    for gi in range(grp.size - 1):
        for j in range(grp[gi], grp[gi + 1]):
            s = src[j]
            g = gain if take[j] else 0.0
            for q in range(nl):
                v = F[gi, q] + g - lam[q] * add[j]
                if v > out[s, q]:
                    out[s, q] = v
                    outa[s, q] = A[gi, q] + add[j]
    return out, outa


@njit(cache=True)
def _completion(ka, kp, c):  # pragma: no cover - compiled
    """The fractional knapsack of capacity ``c`` over items given by their cumulative weights ``ka``
    and profits ``kp`` in order of falling ratio (``ka[0] = kp[0] = 0``)."""
    m = ka.size - 1
    lo, hi = 0, m  # the largest j with ka[j] <= c (ka is nondecreasing)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ka[mid] <= c:
            lo = mid
        else:
            hi = mid - 1
    if lo == m:
        return kp[m]
    return kp[lo] + (c - ka[lo]) * (kp[lo + 1] - kp[lo]) / (ka[lo + 1] - ka[lo])


@njit(cache=True)
def _knapsacks(gain, w):  # pragma: no cover - compiled
    """Per step ``i`` of an order (items ``gain[j] >= 0`` of weight ``w[j] >= 0`` in that order), the
    items after it of positive gain by falling ratio ``gain / w`` (weightless ones first), as
    cumulative weights and profits from 0: ``(ka, kp, offsets)``, step ``i``'s in
    ``offsets[i]:offsets[i + 1]``. The fractional knapsack of capacity ``c`` over them
    (:func:`_completion`) bounds the profit that the classes still to come can add to a set whose
    load leaves ``c`` (Dantzig's bound). Quadratic in the items (0.4 million entries for 900)."""
    n = gain.size
    ratio = np.empty(n)
    for j in range(n):
        ratio[j] = np.inf if w[j] <= 0.0 else gain[j] / w[j]
    by = np.argsort(-ratio, kind="mergesort")
    size = 0
    offs = np.empty(n + 1, np.int64)
    for i in range(n):  # items after step i: positions > i
        offs[i] = size
        m = 0
        for j in range(n):
            if by[j] > i and gain[by[j]] > 0.0:
                m += 1
        size += m + 1
    offs[n] = size
    ka = np.empty(size)
    kp = np.empty(size)
    for i in range(n):
        o = offs[i]
        ka[o], kp[o] = 0.0, 0.0
        t = o
        for j in range(n):
            q = by[j]
            if q > i and gain[q] > 0.0:
                t += 1
                ka[t] = ka[t - 1] + max(w[q], 0.0)
                kp[t] = kp[t - 1] + gain[q]
    return ka, kp, offs


@njit(cache=True)
def _dp_step_memory(L, M, P, offs, grp, src, add, take, gain, mgain, cap, mcap, drop, floor, ka, kp, lg,
                    lam, limit):  # pragma: no cover - compiled
    """:func:`_dp_step` with memory exact (ours, 2026-11-29): a point is ``(load, memory, profit)``,
    ``memory`` the sum of the class sizes in ``S`` over the capacity (``mgain`` added where the class
    joins, points above ``mcap`` left out), and a front keeps every point that no lighter-or-equal
    point of at most its memory and at least its profit dominates (a staircase of the points kept
    so far, by memory, answers that by bisection). The prunings by ``drop`` and the two completions
    are those of :func:`_dp_step` (bounds that ignore memory hold with it). No thinning: past
    ``limit`` points kept (or a staircase of that many) the step gives up, ``offs`` then empty
    (the staircase's insertions cost up to its length each)."""
    tot = 0
    for j in range(src.size):
        tot += offs[src[j] + 1] - offs[src[j]]
    Ln = np.empty(tot)
    Mn = np.empty(tot)
    Pn = np.empty(tot)
    par = np.empty(tot, np.int64)
    xs = np.empty(tot, np.bool_)
    ng = grp.size - 1
    offn = np.empty(ng + 1, np.int64)
    heads = np.empty(src.size, np.int64)
    sm = np.empty(tot + 1)  # the staircase: memory strictly rising, profit strictly rising
    sp = np.empty(tot + 1)
    n = 0
    for gi in range(ng):
        offn[gi] = n
        a, b = grp[gi], grp[gi + 1]
        for j in range(a, b):
            heads[j] = offs[src[j]]
        ns = 0
        while True:
            jb, lb, pb, hb = -1, np.inf, -np.inf, -1
            for j in range(a, b):
                h = heads[j]
                if h >= offs[src[j] + 1]:
                    continue
                lv = L[h] + add[j]
                if lv > cap:  # the rest of this front is heavier still
                    heads[j] = offs[src[j] + 1]
                    continue
                pv = P[h] + gain if take[j] else P[h]
                if lv < lb or (lv == lb and pv > pb):
                    jb, lb, pb, hb = j, lv, pv, h
            if jb < 0:
                break
            heads[jb] = hb + 1
            mb = M[hb] + mgain if take[jb] else M[hb]
            if mb > mcap:
                continue
            # the last staircase step of memory <= mb: dominated where its profit is >= pb
            lo, hi = 0, ns
            while lo < hi:
                mid = (lo + hi) // 2
                if sm[mid] <= mb:
                    lo = mid + 1
                else:
                    hi = mid
            i = lo - 1
            if i >= 0 and sp[i] >= pb:
                continue
            if not (pb > drop and (ka.size == 0 or pb + _completion(ka, kp, cap - lb) * (1 + 1e-12) + 1e-12 > floor)
                    and (lam.size == 0 or _lagrange_ok(pb, lg[gi], lam, cap - lb, floor))):
                continue
            Ln[n], Mn[n], Pn[n], par[n], xs[n] = lb, mb, pb, hb, take[jb]
            n += 1
            if n > limit:
                return Ln[:0].copy(), Mn[:0].copy(), Pn[:0].copy(), offn[:0].copy(), par[:0].copy(), xs[:0].copy()
            # into the staircase: replaces the steps of memory >= mb and profit <= pb
            pos = i if (i >= 0 and sm[i] == mb) else i + 1
            e = pos
            while e < ns and sp[e] <= pb:
                e += 1
            if e == pos:  # nothing replaced: shift the tail up by one
                for t in range(ns, pos, -1):
                    sm[t], sp[t] = sm[t - 1], sp[t - 1]
                ns += 1
            elif e > pos + 1:  # several replaced: shift the tail down
                d = e - pos - 1
                for t in range(pos + 1, ns - d):
                    sm[t], sp[t] = sm[t + d], sp[t + d]
                ns -= d
            sm[pos], sp[pos] = mb, pb
    offn[ng] = n
    return Ln[:n].copy(), Mn[:n].copy(), Pn[:n].copy(), offn, par[:n].copy(), xs[:n].copy()
