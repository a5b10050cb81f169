"""The chain optimum (``contiguity="chain"``, objective ``max-load``) by a dynamic program over *all*
ideals, compiled, for graphs whose ideals can be listed (a few hundred thousand).

It is the peer's DP (Tarnawski et al., NeurIPS 2020, §4; ``throughput-dp/dp.cpp``: the value of
the best chain of ``f`` accelerator and ``c`` CPU-core blocks that covers ideal ``I`` is the best,
over ideals ``I' ⊂ I``, of ``max(value(I', c', f'), load(I \\ I'))``) with three changes of ours:

* only pairs whose block could beat the incumbent ``U`` are formed: from ideal ``I'``, the ideals
  ``I ⊃ I'`` are met by a walk up the covers of the lattice of ideals (``I -> I + s``), which stops
  where the block's work reaches ``U`` (a block's load is at least its work), or where an
  accelerator block would hold a CPU-only super-node or exceed the memory: all grow up the lattice;
  a block's communication is read from per-ideal counts of each tensor's members (a tensor is
  paid by block ``B = I \\ I'`` iff ``0 < |M ∩ I| - |M ∩ I'| < |M|``). The walk and the state
  updates are compiled (numba, :mod:`.idealdp_kernel`);
* a state whose remaining accelerator work cannot fit in the accelerators left at ``U`` (after the
  CPU cores left take what they can) is dropped, as in :mod:`.ideals`;
* ideals are listed by reverse search (each ideal from its parent, the ideal less its maximal
  super-node of largest index), so listing costs O(width) per ideal.

Why: the depth-first search of :mod:`.ideals` evaluates the same blocks again from every
``(ideal, devices used)`` state and pays Python per block; on graphs of three parallel branches of
31 layers (the shape of the peer's GNMT layer graphs: 20,738 ideals) it took 34 s, where this
DP took 0.4-1.3 s from an incumbent 0.05-6 % above the optimum (measured 2026-11-24, 2-core AMD EPYC).
Its first version scanned, for each ideal, the window of ideals of the right work in numpy; the
compiled walk meets only the supersets (measured 2026-11-27 on three branches of 50 layers, 78,083
ideals, on a machine 3-5x slower than on 2026-11-24: ``ideals`` proves the chain optimum in 5.9 s,
28 s with the numpy windows; three branches of 31: 1.2 s, 6.7 s).

Returns ``None`` where the ideals are too many (:data:`MAX_IDEALS`, or the count matrix would
exceed :data:`MAX_CELLS`) or the deadline passes; the caller then runs the search.
"""

from __future__ import annotations

import math
import time

import numpy as np

from splitopt.instances.placement import PlacementInstance
from splitopt.solvers.placement.common import Contracted, bits, contracted, cpu_exchange

MAX_IDEALS = 200_000
"""Most ideals listed before the DP gives way to the search of :mod:`.ideals`."""
MAX_CELLS = 60_000_000
"""Most cells of the ideals x tensors count matrix (int16: 120 MB)."""
LOAD_SECONDS = 1.5
"""Seconds the compiled kernel's first call in a process may take (numba's import and its cached
machine code: 0.9 s measured 2026-11-27): with less time to the deadline, a process whose kernel
is not loaded yet gives way to the search."""
TARGETS = (0.125, 0.25, 0.5)
"""The shares of the gap between a proven bound and the incumbent at which :func:`solve_dp` runs
first (each failure a proven bound, each run cheaper than the last's)."""
TARGET_GAP = 0.005
"""The smallest relative gap at which :func:`solve_dp` runs its targets."""
RUN_SECONDS = 0.02
"""About how long one call of the compiled kernel (:func:`~.idealdp_kernel.dp_run`) runs: the
deadline is checked between calls."""


def list_ideals(con: Contracted, deadline: float | None = None, cap: int = MAX_IDEALS):
    """All ideals of ``con``'s forward DAG as int masks, with their accelerator work, CPU work,
    memory, count of unsupported super-nodes and frontier (the super-nodes whose predecessors it
    holds, an int mask); ``None`` past ``cap`` ideals or the deadline.

    Reverse search: the children of ideal ``J`` (maximal elements ``mx``, frontier ``fr``) are
    ``J + s`` for ``s`` in ``fr`` such that ``s`` exceeds every maximal element of ``J`` that is not
    a predecessor of ``s`` (then ``s`` is the largest maximal element of ``J + s``, and ``J`` its
    parent): every ideal once."""
    n = con.n
    preds, succs = con.preds, con.succs
    accw, cpuw = con.accw, con.cpuw
    size, unsup = con.size, [0 if con.sup[s] else 1 for s in range(n)]
    # the successors of each super-node from the set bits of its mask (O(edges); a scan of all
    # n super-nodes for each took 0.5 s on a 6,083-node graph, whatever the deadline)
    succ_list = [bits(succs[s]) for s in range(n)]
    # super-nodes of one depth (longest path from a source) are pairwise incomparable, and every
    # subset of an antichain closes to a distinct ideal: 2^(largest level) ideals at least
    depth = [0] * n
    for s in range(n):  # super-nodes are numbered in a topological order
        for t in succ_list[s]:
            depth[t] = max(depth[t], depth[s] + 1)
    if n and max(np.bincount(depth)) > math.log2(cap):
        return None
    front0 = 0
    for s in range(n):
        if preds[s] == 0:
            front0 |= 1 << s
    masks, aw, cw, sz, us, fronts = [0], [0.0], [0.0], [0.0], [0], [front0]
    stack = [(0, 0, front0, 0)]  # (ideal, maximal elements, frontier, index in the lists)
    while stack:
        J, mx, fr, i = stack.pop()
        m = fr
        while m:
            low = m & -m
            s = low.bit_length() - 1
            m ^= low
            if (mx & ~preds[s]) >> s:  # a maximal element kept above s: not s's child
                continue
            J2 = J | low
            fr2 = fr ^ low
            for t in succ_list[s]:
                if preds[t] & ~J2 == 0:
                    fr2 |= 1 << t
            masks.append(J2)
            aw.append(aw[i] + accw[s])
            cw.append(cw[i] + cpuw[s])
            sz.append(sz[i] + size[s])
            us.append(us[i] + unsup[s])
            fronts.append(fr2)
            if len(masks) > cap:
                return None
            if (len(masks) & 4095) == 0 and deadline is not None and time.perf_counter() > deadline:
                return None
            stack.append((J2, (mx & ~preds[s]) | low, fr2, len(masks) - 1))
    return masks, np.array(aw), np.array(cw), np.array(sz), np.array(us, dtype=np.int32), fronts


def listable(instance: PlacementInstance, seconds: float | None = 1.0) -> bool:
    """Whether this DP applies to ``instance`` as a chain instance: objective max-load, no
    backward-only colour classes, and its ideals listed within :data:`MAX_IDEALS` and ``seconds``
    (``None``: 1 s)."""
    from splitopt.errors import InstanceError

    if instance.objective != "max-load":
        return False
    try:
        con = contracted(instance.with_(contiguity="chain") if instance.contiguity != "chain" else instance)
    except InstanceError:
        return False
    return list_ideals(con, time.perf_counter() + (1.0 if seconds is None else seconds)) is not None


def solve_dp(instance: PlacementInstance, con: Contracted, ub: float, deadline: float | None = None, listed=None,
             lb: float | None = None, bounds: list | None = None):
    """``(blocks, value)`` of the best chain below ``ub`` (``blocks``: ``(mask, on a CPU core?)`` in
    chain order; ``(None, ub)`` when nothing is below ``ub``: the incumbent is optimal), or ``None``
    when the ideals are too many or the deadline passes first. ``instance.objective`` must be
    ``max-load``. ``listed``: :func:`list_ideals` of ``con``, when the caller has it.

    ``lb``, a proven lower bound, lets the DP run below the targets ``lb + s (ub - lb)`` for ``s``
    in :data:`TARGETS` first (where the gap exceeds :data:`TARGET_GAP`): the first target below
    which a chain exists gives the optimum, and each target below which none does is a proven lower
    bound, appended to ``bounds`` (kept when the deadline then stops the DP). Measured 2026-11-27 on
    three branches of 50 layers (incumbent 34.70, bound 32.15, optimum 33.06 ms), the kernel's time
    below one threshold: 32.5 ms: 0.2 s, 33.1: 1.1-2.9 s, 33.8: 5.5 s, 36: 9 s."""
    import sys

    assert instance.objective == "max-load"
    kernel = sys.modules.get("splitopt.solvers.placement.idealdp_kernel")
    if deadline is not None and (kernel is None or not kernel.dp_run.signatures) \
            and deadline - time.perf_counter() < LOAD_SECONDS:
        return None  # the kernel's first call in a process would overrun the deadline
    from splitopt.solvers.placement.idealdp_kernel import dp_run  # (numba: imported where it runs)

    if listed is None:  # (else: what list_ideals returned for con)
        listed = list_ideals(con, deadline)
    if listed is None:
        return None
    masks, aw, cw, sz, us, fronts = listed
    N, n = len(masks), con.n
    tensors = con.tensors
    E = len(tensors)
    if N * max(E, 1) > MAX_CELLS:
        return None
    k, l_ = instance.n_accelerators, instance.n_cpus
    cap = instance.acc_memory_bytes
    words = (n + 63) // 64
    nb = 8 * words
    bitset = np.frombuffer(b"".join(x.to_bytes(nb, "little") for x in masks), dtype="<u8").reshape(N, words)
    cdt = np.int16 if n < 32_000 else np.int32
    counts = np.zeros((N, E), dtype=cdt)
    msize = np.zeros(E, dtype=cdt)
    sec = np.zeros(E)
    for t, (su, cm, s_, _bw) in enumerate(tensors):
        mt = cm | (1 << su)
        mw = np.frombuffer(mt.to_bytes(nb, "little"), dtype="<u8")
        counts[:, t] = np.bitwise_count(bitset & mw).sum(axis=1)
        msize[t] = bin(mt).count("1")
        sec[t] = s_
        if deadline is not None and (t & 255) == 0 and time.perf_counter() > deadline:
            return None
    pop = np.bitwise_count(bitset).sum(axis=1)
    # the tensors each ideal cuts (members inside and outside) and their seconds: a block
    # B = J \\ I pays cut(J) corrected on the few tensors I cuts (the kernel's docstring), listed
    # per ideal (CSR)
    cuts = (counts > 0) & (counts < msize)
    cut_sec = cuts @ sec
    rows, cols = np.nonzero(cuts)
    cut_ptr = np.zeros(N + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=N), out=cut_ptr[1:])
    cut_idx = cols.astype(np.int64)
    del cuts, rows, cols
    order = np.argsort(pop, kind="stable")  # a proper subset has fewer members: processed first
    # the covers of the lattice of ideals, I -> I + s for s on I's frontier (CSR), for the kernel's walk
    index = {m: i for i, m in enumerate(masks)}
    up_idx = []
    up_ptr = np.zeros(N + 1, dtype=np.int64)
    for i, (m, fr) in enumerate(zip(masks, fronts)):
        up_idx.extend(index[m | (1 << s)] for s in bits(fr))
        up_ptr[i + 1] = len(up_idx)
        if deadline is not None and (i & 4095) == 0 and time.perf_counter() > deadline:
            return None
    up_idx = np.array(up_idx, dtype=np.int64)
    del index
    full = masks.index(con.full)
    total_acc = float(aw[full])
    eps = 1e-9 * max(total_acc, float(cw[full]), 1e-300)
    ratio = cpu_exchange(con)
    C, F = l_ + 1, k + 1
    stamp, stack = np.full(N, -1, dtype=np.int64), np.empty(N, dtype=np.int64)
    val = np.empty((N, C * F))  # states (c CPU cores, f accelerators) flattened to c * F + f
    par = np.full((N, C * F), -1, dtype=np.int64)  # the parent ideal of the best chain to each state
    by_cpu_move = np.zeros((N, C * F), dtype=np.bool_)  # ... and whether its last block is on a CPU core

    def run_below(target: float):
        """The DP below ``target``: ``(blocks, value)``, ``(None, target)`` or ``None`` (deadline)."""
        U = target * (1 - 1e-12) if math.isfinite(target) else math.inf
        val.fill(np.inf)
        val[0, 0] = 0.0
        stamp.fill(-1)
        # a state is dropped when its remaining accelerator work cannot fit in the accelerators left
        # at U once the CPU cores left take what they can (at most U * ratio of accelerator work each)
        slack = np.array([(k - f) * U * (1 + 1e-12) + ((l_ - c) * U * ratio if l_ > c else 0.0)
                          for c in range(C) for f in range(F)]) if math.isfinite(U) else np.full(C * F, np.inf)
        args = (full, up_ptr, up_idx, aw, cw, sz, us, counts, msize, sec, cut_ptr, cut_idx, cut_sec, val, par,
                by_cpu_move, k, l_, math.inf if cap is None else cap * (1 + 1e-12), U, total_acc, eps, slack,
                stamp, stack)
        # the compiled kernel in runs of ideals, the deadline checked between runs; a run's length
        # follows the time the last one took (:data:`RUN_SECONDS`), since a run's work grows with U
        start, run = 0, 1
        while start < N:
            if deadline is not None and time.perf_counter() > deadline:
                return None
            t = time.perf_counter()
            dp_run(order[start:start + run], *args)
            start += run
            took = time.perf_counter() - t
            run = max(1, min(4 * run, int(run * RUN_SECONDS / took))) if took > 0 else 4 * run
        end = val[full]
        st = int(np.argmin(end))
        if not end[st] < U:
            return None, target
        blocks = []
        J = full
        while J != 0:
            I = int(par[J, st])
            cpu = bool(by_cpu_move[J, st])
            blocks.append((masks[J] & ~masks[I], cpu))
            st -= F if cpu else 1
            J = I
        blocks.reverse()
        return blocks, float(end.min())

    # targets from below (TARGETS): the DP's work grows steeply with its threshold, and a target
    # below which no chain exists is a proven lower bound
    if lb is not None and math.isfinite(lb) and math.isfinite(ub) and ub - lb > TARGET_GAP * ub:
        for share in TARGETS:
            target = lb + share * (ub - lb)
            got = run_below(target)
            if got is None:
                return None
            if got[0] is not None:
                return got
            if bounds is not None:
                bounds.append(target * (1 - 1e-10))
    return run_below(ub)

__all__ = ["list_ideals", "listable", "solve_dp", "MAX_IDEALS", "MAX_CELLS"]
