"""The compiled parts of the DP over all ideals (:mod:`.idealdp`; numba): the listing of the ideals
by reverse search (:func:`list_run`, with each ideal's cut tensors), the covers of their lattice
(:func:`covers`), and the DP's inner loop (:func:`dp_run`): for a run of ideals ``I`` in order of
size, every ideal ``J ⊃ I`` whose block ``J \\ I`` could beat the incumbent extends every live
state of ``I`` by that block. Split out of :mod:`.idealdp` as
:mod:`.pricing_kernels` is out of :mod:`.pricing`; the mathematics (Tarnawski et al., NeurIPS 2020,
§4, and our changes) is in :mod:`.idealdp`'s docstring."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _popcount(x):  # pragma: no cover (compiled)
    """Set bits of a uint64 (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True)
def _meet(rows, J, members, t):  # pragma: no cover (compiled)
    """``|rows[J] ∩ members[t]|``."""
    c = 0
    for w in range(rows.shape[1]):
        c += _popcount(rows[J, w] & members[t, w])
    return c


@njit(cache=True)
def list_run(state, budget, cap, preds, succ_ptr, succ_idx, touch_ptr, touch_idx, members, msize, sec, accw, cpuw,
             size, unsup, zobrist, rows, fronts, maxel, aw, cw, sz, us, key, cut_ptr, cut_idx, cut_cnt, cut_sec,
             stack, mark, was_cut):  # pragma: no cover (compiled)
    """Continue the reverse search of :func:`~.idealdp.list_ideals` (the same rule: the children of
    ideal ``J`` are ``J + s`` for ``s`` on its frontier above every maximal element of ``J`` that is
    not a predecessor of ``s``) from ``state = [ideals so far, stack top, cut entries so far]``,
    for at most ``budget`` ideals. Each ideal gets its bitset (``rows``), frontier, maximal
    elements, accelerator and CPU work, memory, unsupported count, a key (the xor of ``zobrist``
    over its members: the key of ``J + s`` is ``key[J] ^ zobrist[s]``) and its cut tensors (CSR:
    ``cut_idx``/``cut_cnt`` from ``cut_ptr[J]``, the tensors ``t`` with ``0 < |M_t ∩ J| < m_t``, and
    their seconds ``cut_sec[J]``), the child's from its parent's: only the tensors that touch ``s``
    change.

    Returns 0 (budget spent), 1 (an output array is full: the caller grows it and calls again),
    2 (done) or 3 (more than ``cap`` ideals)."""
    N, top, nc = state[0], state[1], state[2]
    W = rows.shape[1]
    made = 0
    while top > 0:
        i = stack[top - 1]
        width = maxt = 0  # the frontier's size and its largest tensor list: room for the children
        for w in range(W):
            f = fronts[i, w]
            while f:
                low = f & (~f + np.uint64(1))
                s = w * 64 + _popcount(low - np.uint64(1))
                f ^= low
                width += 1
                maxt = max(maxt, touch_ptr[s + 1] - touch_ptr[s])
        if N + width > rows.shape[0] or nc + width * (cut_ptr[i + 1] - cut_ptr[i] + maxt) > cut_idx.shape[0]:
            state[0], state[1], state[2] = N, top, nc
            return 1
        if made >= budget:
            state[0], state[1], state[2] = N, top, nc
            return 0
        top -= 1
        for w in range(W):
            f = fronts[i, w]
            while f:
                low = f & (~f + np.uint64(1))
                s = w * 64 + _popcount(low - np.uint64(1))
                f ^= low
                # not s's child if a maximal element of J that is not a predecessor of s lies above s
                above = False
                for w2 in range(W - 1, w - 1, -1):
                    m = maxel[i, w2] & ~preds[s, w2]
                    if w2 == w:  # (bits above s; for bit 63, low << 1 wraps to 0 and the mask is 0)
                        m &= ~((low << np.uint64(1)) - np.uint64(1))
                    if m:
                        above = True
                        break
                if above:
                    continue
                j = N
                N += 1
                if N > cap:
                    state[0], state[1], state[2] = N, top, nc
                    return 3
                for w2 in range(W):
                    rows[j, w2] = rows[i, w2]
                    fronts[j, w2] = fronts[i, w2]
                    maxel[j, w2] = maxel[i, w2] & ~preds[s, w2]
                rows[j, w] |= low
                fronts[j, w] ^= low
                maxel[j, w] |= low
                for q in range(succ_ptr[s], succ_ptr[s + 1]):
                    t = succ_idx[q]
                    ready = True
                    for w2 in range(W):
                        if preds[t, w2] & ~rows[j, w2]:
                            ready = False
                            break
                    if ready:
                        fronts[j, t // 64] |= np.uint64(1) << np.uint64(t % 64)
                aw[j] = aw[i] + accw[s]
                cw[j] = cw[i] + cpuw[s]
                sz[j] = sz[i] + size[s]
                us[j] = us[i] + unsup[s]
                key[j] = key[i] ^ zobrist[s]
                # the cut tensors: the parent's, those touching s recounted, and the new ones
                for q in range(touch_ptr[s], touch_ptr[s + 1]):
                    mark[touch_idx[q]] = j
                cut_ptr[j] = nc
                tot = 0.0
                for r in range(cut_ptr[i], cut_ptr[i + 1]):
                    t = cut_idx[r]
                    was_cut[t] = j
                    c = cut_cnt[r]
                    if mark[t] == j:
                        c = _meet(rows, j, members, t)
                        if c >= msize[t]:
                            continue
                    cut_idx[nc] = t
                    cut_cnt[nc] = c
                    tot += sec[t]
                    nc += 1
                for q in range(touch_ptr[s], touch_ptr[s + 1]):
                    t = touch_idx[q]
                    if was_cut[t] == j:
                        continue
                    was_cut[t] = j
                    c = _meet(rows, j, members, t)
                    if 0 < c < msize[t]:
                        cut_idx[nc] = t
                        cut_cnt[nc] = c
                        tot += sec[t]
                        nc += 1
                cut_ptr[j + 1] = nc
                cut_sec[j] = tot
                stack[top] = j
                top += 1
                made += 1
    state[0], state[1], state[2] = N, top, nc
    return 2


@njit(cache=True)
def covers(rows, fronts, key, zobrist, N):  # pragma: no cover (compiled)
    """The covers of the lattice of the ``N`` ideals (CSR ``up_ptr``/``up_idx``: the index of
    ``J + s`` for each ``s`` on ``J``'s frontier), found in an open-addressing table of the keys
    (a key's match is checked on the bitsets)."""
    W = rows.shape[1]
    P = 1
    while P < 2 * N:
        P *= 2
    table = np.full(P, -1, np.int64)
    mask = np.uint64(P - 1)
    for j in range(N):
        h = np.int64(key[j] & mask)
        while table[h] >= 0:
            h = (h + 1) & (P - 1)
        table[h] = j
    total = 0
    for i in range(N):
        for w in range(W):
            total += _popcount(fronts[i, w])
    up_ptr = np.zeros(N + 1, np.int64)
    up_idx = np.empty(total, np.int64)
    q = 0
    for i in range(N):
        for w in range(W):
            f = fronts[i, w]
            while f:
                low = f & (~f + np.uint64(1))
                s = w * 64 + _popcount(low - np.uint64(1))
                f ^= low
                kk = key[i] ^ zobrist[s]
                h = np.int64(kk & mask)
                while True:
                    j = table[h]
                    if j < 0:
                        return up_ptr, up_idx[:0]  # (cannot happen: every J + s is an ideal)
                    if key[j] == kk:
                        same = True
                        for w2 in range(W):
                            want = rows[i, w2] | low if w2 == w else rows[i, w2]
                            if rows[j, w2] != want:
                                same = False
                                break
                        if same:
                            up_idx[q] = j
                            q += 1
                            break
                    h = (h + 1) & (P - 1)
        up_ptr[i + 1] = q
    return up_ptr, up_idx


@njit(cache=True)
def dp_run(steps, full, up_ptr, up_idx, aw, cw, sz, us, rows, members, msize, sec, cut_ptr, cut_idx, cut_cnt,
           cut_sec, val, par, on_cpu, k, n_cpus, cap, U, total_acc, eps, slack, stamp, stack):  # pragma: no cover (compiled)
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
    ``I`` cuts (``cut_idx[cut_ptr[I]:cut_ptr[I + 1]]``, with ``|M ∩ I|`` in ``cut_cnt``): a tensor of
    ``m`` members is paid iff ``0 < |M ∩ B| < m``, with ``|M ∩ B| = |M ∩ J| - |M ∩ I|`` (``|M ∩ J|``
    by popcount of the bitsets ``rows[J]`` and ``members[t]``). A block on a CPU core costs its CPU
    work."""
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
                            dj = _meet(rows, J, members, t)
                            m = msize[t]
                            d = dj - cut_cnt[r]
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
