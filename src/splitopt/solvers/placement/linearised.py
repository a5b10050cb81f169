"""The linearised split of the device model (issue 11; the peer's ``-linearize`` / PipeDream-style
baseline of Tarnawski et al., NeurIPS 2020, §6, Table 2): fix one topological order of the
forward super-nodes (colour classes contracted, forward cycles fused) and split it into contiguous
runs, each on an accelerator or a CPU core. Always a feasible ``chain`` placement (a run of a
topological order is a difference of two ideals), hence convex. :func:`linearised_blocks` is the
DP over the order's prefixes (optimal among such splits; O(n^2) run costs, :func:`_run_costs`),
falling back on the greedy bisection of :func:`greedy_blocks` where a deadline does not allow it;
:func:`linearised_assignment` also places backward-only classes (weight updates) for the first
placement of the exact methods. Unlike the peer's PipeDream baseline we do not also fuse
biconnected components (a PipeDream profiling artefact). For the ``fwd+bwd`` objective the runs
are chosen for ``max-load`` (a heuristic there), the evaluator scores the result. Split out of
:mod:`.baselines` (2026-11-29: modules under 600 lines)."""

from __future__ import annotations

import math
import time

import numpy as np

from splitopt.errors import InfeasibleSolution, InstanceError
from splitopt.families import AlgoResult
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import work_bound
from splitopt.solvers.placement.common import Contracted, assignment_from_blocks, contracted


def _run_costs(con: Contracted, cap: float | None, deadline: float | None = None):
    """``acc[i, j]`` / ``cpu[i, j]``: load of the run ``i..j-1`` of super-nodes (inf when it cannot
    go on an accelerator); ``[i, i] = 0`` (an unused device). ``None`` when ``deadline`` (a
    ``time.perf_counter()`` value) passes first.

    The communication of every run at once, in O(n^2 + tensor members): a tensor (producer ``p``,
    consumers ``C``) crosses the run ``[i, j]`` when ``p`` is in it and some consumer is not, or
    ``p`` is not and some consumer is. In the plane of runs ``(i, j)`` that region is a union of
    rectangles: ``i <= p <= j`` less ``i <= min(p, min C)``, ``j >= max(p, max C)``; for ``i > p``,
    the rows between two consecutive consumers after ``p`` from the column of the second on; for
    ``j < p``, the mirror image with the consumers before ``p``. The rectangles go into a
    two-dimensional difference array summed once (the loop over runs it replaces took 2.5 s on
    2,000 super-nodes; a graph's gradients flow against the topological order, hence both sides)."""
    n = con.n
    cw = np.array(con.cpuw, dtype=float)
    aw = np.array(con.accw, dtype=float)
    rows, cols, wts = [], [], []

    def rect(r0, r1, c0, c1, w):  # rows r0..r1, columns c0..c1 (inclusive)
        if r0 <= r1 and c0 <= c1:
            rows.extend((r0, r0, r1 + 1, r1 + 1))
            cols.extend((c0, c1 + 1, c0, c1 + 1))
            wts.extend((w, -w, -w, w))

    for t, (p, cm, sec, _bw) in enumerate(con.tensors):
        if deadline is not None and t % 256 == 0 and time.perf_counter() > deadline:
            return None
        cons = [b for b in range(cm.bit_length()) if (cm >> b) & 1 and b != p]
        if not cons:
            continue
        rect(0, p, p, n - 1, sec)  # p in the run ...
        rect(0, min(p, cons[0]), max(p, cons[-1]), n - 1, -sec)  # ... less: every consumer in it too
        prev = p
        for c in (c for c in cons if c > p):  # i > p: the first consumer at or after i is in the run
            rect(prev + 1, c, c, n - 1, sec)
            prev = c
        prev = p
        for c in sorted((c for c in cons if c < p), reverse=True):  # j < p: the mirror image
            rect(0, c, c, prev - 1, sec)
            prev = c
    D = np.zeros((n + 2, n + 2))
    if wts:
        np.add.at(D, (np.array(rows), np.array(cols)), np.array(wts))
    comm = np.maximum(D.cumsum(axis=0).cumsum(axis=1)[:n, :n], 0.0)  # comm[i, j]: the run i..j
    if deadline is not None and time.perf_counter() > deadline:
        return None
    acc = np.full((n + 1, n + 1), np.inf)
    cpu = np.full((n + 1, n + 1), np.inf)
    ca, cc = np.concatenate(([0.0], np.cumsum(aw))), np.concatenate(([0.0], np.cumsum(cw)))
    csz = np.concatenate(([0.0], np.cumsum(np.asarray(con.size, dtype=float))))
    nxt_bad = np.full(n + 1, n, dtype=int)  # the first unsupported super-node at or after i
    for s in reversed(range(n)):
        nxt_bad[s] = s if not con.sup[s] else nxt_bad[s + 1]
    for i in range(n + 1):
        acc[i, i] = cpu[i, i] = 0.0
        if i == n:
            break
        cpu[i, i + 1:] = cc[i + 1:] - cc[i]
        end = nxt_bad[i]  # runs i..j-1 with j <= end hold supported super-nodes only
        if cap is not None:
            # memory: the sizes' prefix sums, a hair stricter than the cap (rounding must not let a
            # run the evaluator refuses through)
            end = min(end, int(np.searchsorted(csz, csz[i] + cap * (1 - 1e-12), side="right")) - 1)
        if end > i:
            acc[i, i + 1:end + 1] = ca[i + 1:end + 1] - ca[i] + comm[i, i:end]
    return acc, cpu


def _greedy_seconds(n: int) -> float:
    """What :func:`greedy_blocks` gets past a deadline: :data:`GREEDY_SECONDS`, or about eight
    splits of ``n`` super-nodes where that is more (a split takes about 7 us a super-node: 37 ms on
    a 10,026-node training graph's 4,994, 2026-11-29; the bisection needs about eight to reach its
    first fitting threshold and refine it)."""
    return max(GREEDY_SECONDS, 8 * 8e-6 * n)


RUN_COSTS_S = 2e-7
"""Seconds per squared super-node that :func:`linearised_blocks` needs at the least (the run costs
and the DP: 320-410 ns on 482-3,970 super-nodes, measured 2026-11-29 on the 2-core EPYC, one core
busy); where a deadline leaves less, it goes to the greedy split straight away."""

GREEDY_SECONDS = 0.1
"""What :func:`linearised_blocks` gives its greedy fallback past its own deadline: the bisection
stops there with the best split so far (a split of a 6,083-node graph takes about 10 ms)."""


def greedy_blocks(instance: PlacementInstance, con: Contracted,
                  deadline: float | None = None) -> list[tuple[int, bool]] | None:
    """Blocks ``(mask, on_cpu)`` of a split of the topological order into runs found greedily, in
    O(tensor members) per threshold: the bisection on the threshold ``T`` fills each run while its
    load (work and the seconds of the tensors it cuts, counted incrementally) stays within ``T`` and
    its memory within the cap; a run of unsupported super-nodes goes to a CPU core. ``None`` where
    no threshold fits the devices, or ``deadline`` passes before one does (the bisection then stops
    with the best so far). What the linearised DP falls back on when its O(n^2) run costs do not
    fit its deadline (a 6,083-node training graph within 3 s: every node on one device before, 78
    times the optimum's value)."""
    n, k, l_ = con.n, instance.n_accelerators, instance.n_cpus
    cap = math.inf if instance.acc_memory_bytes is None else instance.acc_memory_bytes * (1 - 1e-12)
    tens = con.tensors
    msize = [bin(cm | (1 << su)).count("1") for su, cm, _s, _b in tens]
    sec = [t[2] for t in tens]

    touch, accw, cpuw, size, sup = con.touch, con.accw, con.cpuw, con.size, con.sup
    cnt = [0] * len(tens)  # per tensor: its members in the current run (reset through ``touched``)

    def delta(s):  # the seconds an accelerator run's load grows by when s joins (cnt unchanged)
        d = accw[s]
        for t in touch[s]:
            b, m = cnt[t], msize[t]
            d += sec[t] * ((0 < b + 1 < m) - (0 < b < m))
        return d

    def split(T: float):
        runs, touched = [], []
        start, kind, load, mem, f, c = 0, None, 0.0, 0.0, 0, 0

        def join(s):  # s joins the accelerator run: its tensors' counts
            for t in touch[s]:
                if cnt[t] == 0:
                    touched.append(t)
                cnt[t] += 1

        for s in range(n):
            want = not sup[s]  # on a CPU core?
            if s > start and want == kind:
                new = load + (cpuw[s] if kind else delta(s))
                if new <= T and (kind or mem + size[s] <= cap):
                    if not kind:
                        join(s)
                    load, mem = new, mem + (0.0 if kind else size[s])
                    continue
            if s > start:
                runs.append((start, s, kind))
            f, c = f + (not want), c + want
            if f > k or c > l_:
                break
            for t in touched:
                cnt[t] = 0
            touched.clear()
            start, kind, load, mem = s, want, 0.0, 0.0
            load = cpuw[s] if kind else delta(s)
            if not kind:
                join(s)
            mem = 0.0 if kind else size[s]
            if load > T or mem > cap:
                break
        else:
            for t in touched:
                cnt[t] = 0
            if n:
                runs.append((start, n, kind))
            return runs
        for t in touched:
            cnt[t] = 0
        return None

    # the threshold from the work bound up (a split within T has max-load <= T, so none fits below
    # the optimum) by 10 % steps, then bisected to 0.1 %: about ten splits
    lo = work_bound(instance) if instance.objective == "max-load" else 0.0
    top = math.fsum(con.accw) + math.fsum(con.cpuw) + math.fsum(sec)
    best, hi = None, lo
    while best is None and hi < top:
        if deadline is not None and time.perf_counter() > deadline:
            return None
        lo, hi = hi, min(max(1.1 * hi, 1e-300), top)
        best = split(hi)
    if best is None:
        return None
    for _ in range(40):
        if hi - lo <= 1e-3 * hi or (deadline is not None and time.perf_counter() > deadline):
            break
        mid = 0.5 * (lo + hi)
        got = split(mid)
        if got is None:
            lo = mid
        else:
            hi, best = mid, got
    return [(((1 << j) - 1) ^ ((1 << i) - 1), bool(cpu)) for i, j, cpu in best]


def linearised_blocks(instance: PlacementInstance, con: Contracted | None = None,
                      deadline: float | None = None) -> list[tuple[int, bool]] | None:
    """Blocks ``(mask, on_cpu)`` of the best split of one topological order into runs (``None``
    when no run split fits); where ``deadline`` (a ``time.perf_counter()`` value) passes first, the
    greedy split of :func:`greedy_blocks` within :data:`GREEDY_SECONDS` (no optimality: a first
    placement)."""
    con = con or contracted(instance)
    n = con.n
    k, l_ = instance.n_accelerators, instance.n_cpus
    if deadline is not None and RUN_COSTS_S * n * n > deadline - time.perf_counter():
        # the run costs would not be ready in time: the greedy split gets the time instead of
        # spending it on them first (a 10,026-node training graph got no placement from here
        # within 1 s: the costs used the second, the greedy its 0.1 s after, and its search needs
        # about 0.4 s there)
        return greedy_blocks(instance, con, max(deadline, time.perf_counter() + _greedy_seconds(n)))
    costs = _run_costs(con, instance.acc_memory_bytes, deadline)
    if costs is None:
        return greedy_blocks(instance, con, time.perf_counter() + _greedy_seconds(n))
    acc, cpu = costs
    # dp[c][f][j]: best bottleneck of the first j super-nodes on c CPU cores and f accelerators
    dp = {}
    choice = {}
    start = np.full(n + 1, np.inf)
    start[0] = 0.0
    for c in range(l_ + 1):
        for f in range(k + 1):
            if c == 0 and f == 0:
                dp[c, f] = start
                continue
            best = np.full(n + 1, np.inf)
            arg = np.zeros((n + 1, 2), dtype=int)
            for kind, prev, cost in ((1, (c - 1, f), cpu), (0, (c, f - 1), acc)):
                if prev[0] < 0 or prev[1] < 0:
                    continue
                cand = np.maximum(dp[prev][:, None], cost)  # [i, j]
                i_best = np.argmin(cand, axis=0)
                v = cand[i_best, np.arange(n + 1)]
                better = v < best
                best = np.where(better, v, best)
                arg[better, 0] = i_best[better]
                arg[better, 1] = kind
            dp[c, f] = best
            choice[c, f] = arg
    if not math.isfinite(dp[l_, k][n]):
        return None
    blocks = []
    c, f, j = l_, k, n
    while j > 0:
        i, kind = choice[c, f][j]
        if i < j:
            blocks.append((sum(1 << s for s in range(i, j)), bool(kind)))
        if kind:
            c -= 1
        else:
            f -= 1
        j = i
    return blocks[::-1]


def linearised_assignment(instance: PlacementInstance, deadline: float | None = None, *, orphans: bool = False):
    """``(assignment, runs)`` of the best split of one topological order into runs (a chain
    placement, hence convex), or ``None`` when no split fits; where ``deadline`` (a
    ``time.perf_counter()`` value) passes first, the greedy split (:func:`linearised_blocks`).

    Backward-only colour classes (weight updates: :attr:`~.common.Contracted.orphans`) are refused
    unless ``orphans``: then the runs are split without them (the tensors that feed them are not in
    the runs' loads) and each joins the device it exchanges the most seconds with
    (:func:`_place_orphans`; the chain and convex rules do not constrain backward-only classes), a
    first placement for the incumbent phase (:func:`~.incumbent.incumbent`). Until 2026-11-29 such
    graphs got no placement from here, and where the ideal search found none within a short limit
    every node went to one device: a 10,026-node GNMT-like training graph with weight updates,
    non-contiguous, 10 s, came back at 99.36 ms, against 2.09 ms from the chain answer of the same
    limit."""
    try:
        con = contracted(instance)
    except InstanceError:  # a tensor feeds a backward-only class
        if not orphans:
            raise
        con = contracted(instance, orphans_only=True)
    if con.orphans and not orphans:
        raise InstanceError("colour", "backward nodes without a forward node in their colour class: not handled "
                                      "by the linearised DP")
    blocks = linearised_blocks(instance, con, deadline)
    if blocks is None:
        return None
    out = assignment_from_blocks(instance, con, blocks)
    if con.orphans and not _place_orphans(instance, out, con.orphans):
        return None
    return out, len(blocks)


def _place_orphans(instance: PlacementInstance, out: list[str], orphans: list[list[int]]) -> bool:
    """Put each backward-only class of ``orphans`` (node lists; ``out[i] == ""`` for their nodes) on
    the device it exchanges the most tensor seconds with among the placed nodes (an accelerator
    only where all its nodes are supported; classes fed only by other orphans wait for those; a
    class with no placed neighbour goes to the first device that can run it), in place. ``False``
    where a class fits no device (unsupported nodes and no CPU core)."""
    k = instance.n_accelerators
    cpu0 = "cpu0" if instance.n_cpus else None
    nbr: dict[int, list[tuple[int, float]]] = {}
    for u, cons, sec in instance.tensors:
        for c in cons:
            nbr.setdefault(u, []).append((c, sec))
            nbr.setdefault(c, []).append((u, sec))
    todo = list(orphans)
    while todo:
        waiting = []
        for cl in todo:
            mine = set(cl)
            pull: dict[str, float] = {}
            for i in cl:
                for j, sec in nbr.get(i, ()):
                    if j not in mine and out[j]:
                        pull[out[j]] = pull.get(out[j], 0.0) + sec
            sup = all(instance.supported[i] for i in cl)
            ok = [d for d in pull if sup or d.startswith("cpu")]
            if ok:
                dev = max(ok, key=lambda d: (pull[d], d))
            elif pull:  # unsupported, every neighbour on an accelerator
                dev = cpu0
            else:
                waiting.append(cl)
                continue
            if dev is None:
                return False
            for i in cl:
                out[i] = dev
        if len(waiting) == len(todo):  # no placed neighbour left to follow: the first device that runs them
            dev = "acc0" if k else cpu0
            for cl in waiting:
                d = dev if all(instance.supported[i] for i in cl) else cpu0
                if d is None:
                    return False
                for i in cl:
                    out[i] = d
            return True
        todo = waiting
    return True


def linearised_dp(instance: PlacementInstance) -> AlgoResult:
    got = linearised_assignment(instance)
    if got is None:
        raise InfeasibleSolution("no split of the topological order into runs fits the devices")
    return AlgoResult(got[0], status="ok", info={"runs": got[1]})


__all__ = ["linearised_dp", "linearised_blocks", "linearised_assignment", "greedy_blocks"]
