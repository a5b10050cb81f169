"""The chain optimum (``contiguity="chain"``, objective ``max-load``) by a dynamic program over *all*
ideals, compiled, for graphs whose ideals can be listed (up to two million).

It is the peer's DP (Tarnawski et al., NeurIPS 2020, §4; ``throughput-dp/dp.cpp``: the value of
the best chain of ``f`` accelerator and ``c`` CPU-core blocks that covers ideal ``I`` is the best,
over ideals ``I' ⊂ I``, of ``max(value(I', c', f'), load(I \\ I'))``) with three changes of ours:

* only pairs whose block could beat the incumbent ``U`` are formed: from ideal ``I'``, the ideals
  ``I ⊃ I'`` are met by a walk up the covers of the lattice of ideals (``I -> I + s``), which stops
  where the block's work reaches ``U`` (a block's load is at least its work), or where an
  accelerator block would hold a CPU-only super-node or exceed the memory: all grow up the lattice;
  a block's communication is the seconds of the tensors ``I`` cuts, corrected on those ``I'``
  cuts (a tensor is paid by block ``B = I \\ I'`` iff ``0 < |M ∩ I| - |M ∩ I'| < |M|``; the
  counts by popcount of bitsets). The walk and the state updates are compiled (numba,
  :mod:`.idealdp_kernel`);
* a state whose remaining accelerator work cannot fit in the accelerators left at ``U`` (after the
  CPU cores left take what they can) is dropped, as in :mod:`.ideals`;
* ideals are listed by reverse search (each ideal from its parent, the ideal less its maximal
  super-node of largest index), so listing costs O(width) per ideal; compiled since 2026-11-27,
  with each ideal's cut tensors from its parent's (only those touching the added super-node
  change) and the covers found by xor keys (:class:`Lattice`): 78,083 ideals in 0.05 s, where the
  Python listing and the numpy count matrix took 1.7 s and ignored the deadline (a 5,168-node
  graph: 2-3.5 s past limits of 0.05-1 s). Below :data:`PY_IDEALS` ideals the Python listing
  counts them, so that a process that never runs the DP does not load numba.

Why: the depth-first search of :mod:`.ideals` evaluates the same blocks again from every
``(ideal, devices used)`` state and pays Python per block; on graphs of three parallel branches of
31 layers (the shape of the peer's GNMT layer graphs: 20,738 ideals) it took 34 s, where this
DP took 0.4-1.3 s from an incumbent 0.05-6 % above the optimum (measured 2026-11-24, 2-core AMD EPYC).
Its first version scanned, for each ideal, the window of ideals of the right work in numpy; the
compiled walk meets only the supersets (measured 2026-11-27 on three branches of 50 layers, 78,083
ideals, on a machine 3-5x slower than on 2026-11-24: ``ideals`` proves the chain optimum in 5.9 s,
28 s with the numpy windows; three branches of 31: 1.2 s, 6.7 s).

Measured 2026-11-27 (``auto``, chain, 60 s; warm calls; same machine, side by side with the
Python listing): the peer's Inception-v3 layer graph (326 layers, 36,596 ideals; read from its
repository for this check only, not shipped) 1.9-2.7 s (3.4-5.7 s before), its training graph
1.1-2.2 s (4.2-6.0 s); our Inception-v3-like layer graph (35,683 ideals) 2.4-2.6 s (3.6-4.7 s).

Returns ``None`` where the ideals are too many (:data:`MAX_IDEALS`) or the deadline passes; the
caller then runs the search.
"""

from __future__ import annotations

import math
import time

import numpy as np

from splitopt.instances.placement import PlacementInstance
from splitopt.solvers.placement.common import Contracted, bits, contracted, cpu_exchange

MAX_IDEALS = 2_000_000
"""Most ideals the compiled listing lists before the DP gives way to the search of :mod:`.ideals`
(about 1 KB an ideal in all, at a few hundred super-nodes)."""
PY_IDEALS = 20_000
"""Most ideals listed in Python (:func:`list_ideals`, about 6 µs an ideal) before the compiled
listing takes over: below it a process that never loads numba (0.9 s) does not pay for it."""
LOAD_SECONDS = 1.5
"""Seconds the compiled kernel's first call in a process may take (numba's import and its cached
machine code: 0.9 s measured 2026-11-27): with less time to the deadline, a process whose kernel
is not loaded yet gives way to the search."""
LOAD_WORTH = 4 * LOAD_SECONDS
"""The least time a caller must mean to give the DP for its listing to load the compiled kernels
outside its own deadline (:func:`lattice`'s ``load``)."""
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
    if _too_wide(con, cap):  # 2^(largest level) ideals at least
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


class Lattice:
    """The ideals of a contracted graph as the DP reads them: ``rows`` (``N x W`` uint64 bitsets),
    ``aw``/``cw``/``sz``/``us`` (accelerator work, CPU work, memory, unsupported count), the covers
    ``up_ptr``/``up_idx`` (CSR: ``J + s`` per ``s`` on ``J``'s frontier), the cut tensors
    ``cut_ptr``/``cut_idx``/``cut_cnt`` (CSR: the tensors ``t`` with ``0 < |M_t ∩ J| < m_t``, and
    ``|M_t ∩ J|``) and their seconds ``cut_sec``, the tensors' member bitsets ``members``
    (``E x W``), sizes ``msize`` and seconds ``sec``, and ``full`` (the index of the whole graph)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)
        self.n_ideals = len(self.aw)

    def mask(self, j: int) -> int:
        """Ideal ``j`` as an int mask."""
        return int.from_bytes(self.rows[j].astype("<u8").tobytes(), "little")


def _tensor_arrays(con: Contracted, W: int):
    E = len(con.tensors)
    members = np.zeros((max(E, 1), W), dtype=np.uint64)
    msize = np.zeros(max(E, 1), dtype=np.int64)
    sec = np.zeros(max(E, 1))
    for t, (su, cm, s_, _bw) in enumerate(con.tensors):
        mt = cm | (1 << su)
        members[t] = np.frombuffer(mt.to_bytes(8 * W, "little"), dtype="<u8")
        msize[t] = bin(mt).count("1")
        sec[t] = s_
    return members, msize, sec


def _compiled(con: Contracted, deadline: float | None, cap: int) -> Lattice | None:
    """The :class:`Lattice` by the compiled reverse search (:func:`~.idealdp_kernel.list_run`, in
    runs between which the deadline is checked) and the compiled covers; ``None`` past ``cap``
    ideals or the deadline. Where this process has not loaded the kernels yet, the deadline moves
    by the time their first run takes (:func:`lattice` decides whether that may be paid)."""
    loading = not _loaded()
    from splitopt.solvers.placement.idealdp_kernel import covers, list_run

    n = con.n
    W = max((n + 63) // 64, 1)

    def bitrows(ms):
        return np.frombuffer(b"".join(x.to_bytes(8 * W, "little") for x in ms), dtype="<u8").reshape(len(ms), W)

    preds = bitrows(con.preds).copy()
    succ_list = [bits(x) for x in con.succs]
    succ_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(x) for x in succ_list], out=succ_ptr[1:])
    succ_idx = np.array([t for x in succ_list for t in x], dtype=np.int64)
    touch_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(x) for x in con.touch], out=touch_ptr[1:])
    touch_idx = np.array([t for x in con.touch for t in x], dtype=np.int64)
    members, msize, sec = _tensor_arrays(con, W)
    E = members.shape[0]
    accw, cpuw, size = (np.asarray(x, dtype=float) for x in (con.accw, con.cpuw, con.size))
    unsup = np.array([0 if ok else 1 for ok in con.sup], dtype=np.int64)
    zobrist = np.random.default_rng(22).integers(0, 2**63, size=n, dtype=np.int64).astype(np.uint64) * np.uint64(2) \
        + np.uint64(1)
    rows_cap, cut_cap = 4096, 4096 * 8
    a = {"rows": np.zeros((rows_cap, W), np.uint64), "fronts": np.zeros((rows_cap, W), np.uint64),
         "maxel": np.zeros((rows_cap, W), np.uint64), "aw": np.zeros(rows_cap), "cw": np.zeros(rows_cap),
         "sz": np.zeros(rows_cap), "us": np.zeros(rows_cap, np.int64), "key": np.zeros(rows_cap, np.uint64),
         "cut_ptr": np.zeros(rows_cap + 1, np.int64), "cut_sec": np.zeros(rows_cap),
         "stack": np.zeros(rows_cap, np.int64)}
    c = {"cut_idx": np.zeros(cut_cap, np.int64), "cut_cnt": np.zeros(cut_cap, np.int64)}
    for s in range(n):
        if con.preds[s] == 0:
            a["fronts"][0, s // 64] |= np.uint64(1) << np.uint64(s % 64)
    mark, was_cut = np.full(E, -1, np.int64), np.full(E, -1, np.int64)
    state = np.array([1, 1, 0], dtype=np.int64)  # ideals so far, stack top, cut entries so far
    budget = 4096
    while True:
        if deadline is not None and time.perf_counter() > deadline:
            return None
        t = time.perf_counter()
        code = list_run(state, budget, cap, preds, succ_ptr, succ_idx, touch_ptr, touch_idx, members, msize, sec,
                        accw, cpuw, size, unsup, zobrist, a["rows"], a["fronts"], a["maxel"], a["aw"], a["cw"],
                        a["sz"], a["us"], a["key"], a["cut_ptr"], c["cut_idx"], c["cut_cnt"], a["cut_sec"],
                        a["stack"], mark, was_cut)
        took = time.perf_counter() - t
        if loading and deadline is not None:
            deadline += took  # (numba's import and its cached code: the first run)
        loading = False
        if code == 2:
            break
        if code == 3:
            return None
        if code == 1:  # the per-ideal arrays or the cut entries are full: double them
            grow = a if int(state[0]) + n + 1 > len(a["aw"]) else c
            for key_, arr in grow.items():
                grown = np.zeros((2 * arr.shape[0],) + arr.shape[1:], arr.dtype)
                grown[:arr.shape[0]] = arr
                grow[key_] = grown
        elif took > 0:
            budget = max(256, min(4 * budget, int(budget * RUN_SECONDS / took)))
    N, nc = int(state[0]), int(state[2])
    rows = a["rows"][:N]
    up_ptr, up_idx = covers(rows, a["fronts"][:N], a["key"][:N], zobrist, N)
    if len(up_idx) != up_ptr[-1]:
        raise AssertionError("an ideal's cover is missing from the listing")
    pop = np.bitwise_count(rows).sum(axis=1)
    return Lattice(rows=rows, aw=a["aw"][:N], cw=a["cw"][:N], sz=a["sz"][:N], us=a["us"][:N], up_ptr=up_ptr,
                   up_idx=up_idx, cut_ptr=a["cut_ptr"][:N + 1], cut_idx=c["cut_idx"][:nc], cut_cnt=c["cut_cnt"][:nc],
                   cut_sec=a["cut_sec"][:N], members=members, msize=msize, sec=sec,
                   full=int(np.flatnonzero(pop == n)[0]))


def _too_wide(con: Contracted, cap: int) -> bool:
    """Whether a level of pairwise incomparable super-nodes (one depth: longest path from a source)
    has more than ``log2(cap)`` members: every subset of it closes to a distinct ideal."""
    depth = [0] * con.n
    for s in range(con.n):  # super-nodes are numbered in a topological order
        for t in bits(con.succs[s]):
            depth[t] = max(depth[t], depth[s] + 1)
    return bool(con.n) and max(np.bincount(depth)) > math.log2(cap)


def _loaded() -> bool:
    import sys

    kernel = sys.modules.get("splitopt.solvers.placement.idealdp_kernel")
    return kernel is not None and bool(kernel.list_run.signatures) and bool(kernel.dp_run.signatures)


def kernel_ready(deadline: float | None) -> bool:
    """Whether the compiled kernels may run before ``deadline``: loaded in this process already, or
    at least :data:`LOAD_SECONDS` left for their first call."""
    return deadline is None or _loaded() or deadline - time.perf_counter() >= LOAD_SECONDS


def lattice(con: Contracted, deadline: float | None = None, cap: int = MAX_IDEALS, load: bool = False) -> Lattice | None:
    """The :class:`Lattice` of ``con``'s ideals by the compiled listing, kept on ``con``; ``None``
    past ``cap`` ideals or the deadline. A process that has not loaded the compiled kernels yet
    loads them where :func:`kernel_ready`, or where ``load`` (the caller will run the DP with time
    to spare: the load is not counted in ``deadline``)."""
    got = getattr(con, "_lattice", None)  # (auto's test and the DP share it)
    if got is not None:
        return got if got.n_ideals <= cap else None
    if _too_wide(con, cap) or not (load or kernel_ready(deadline)):
        return None
    got = _compiled(con, deadline, cap)
    if got is not None:
        con._lattice = got
    return got


def count_ideals(con: Contracted, deadline: float | None = None, cap: int = MAX_IDEALS,
                 load: bool = False) -> int | None:
    """How many ideals ``con`` has (``None`` past ``cap`` or the deadline): listed in Python up to
    :data:`PY_IDEALS` (a process that never runs the DP need not load numba, 0.9 s), beyond by
    :func:`lattice` (``load`` as there)."""
    got = getattr(con, "_lattice", None)
    if got is not None:
        return got.n_ideals if got.n_ideals <= cap else None
    small = list_ideals(con, deadline, cap=min(cap, PY_IDEALS))
    if small is not None:
        return len(small[0])
    if cap <= PY_IDEALS or (deadline is not None and time.perf_counter() > deadline):
        return None
    lat = lattice(con, deadline, cap, load)
    return None if lat is None else lat.n_ideals


def listable(instance: PlacementInstance, seconds: float | None = 1.0, load: bool = False) -> bool:
    """Whether this DP applies to ``instance`` as a chain instance: objective max-load, no
    backward-only colour classes, and its ideals listed within :data:`MAX_IDEALS` and ``seconds``
    (``None``: 1 s; ``load``: as :func:`lattice`)."""
    from splitopt.errors import InstanceError

    if instance.objective != "max-load":
        return False
    try:
        con = contracted(instance.with_(contiguity="chain") if instance.contiguity != "chain" else instance)
    except InstanceError:
        return False
    return count_ideals(con, time.perf_counter() + (1.0 if seconds is None else seconds), load=load) is not None


def solve_dp(instance: PlacementInstance, con: Contracted, ub: float, deadline: float | None = None, listed=None,
             lb: float | None = None, bounds: list | None = None):
    """``(blocks, value)`` of the best chain below ``ub`` (``blocks``: ``(mask, on a CPU core?)`` in
    chain order; ``(None, ub)`` when nothing is below ``ub``: the incumbent is optimal), or ``None``
    when the ideals are too many or the deadline passes first. ``instance.objective`` must be
    ``max-load``. ``listed``: :func:`lattice` of ``con``, when the caller has it (else it is made,
    or taken from ``con``).

    ``lb``, a proven lower bound, lets the DP run below the targets ``lb + s (ub - lb)`` for ``s``
    in :data:`TARGETS` first (where the gap exceeds :data:`TARGET_GAP`): the first target below
    which a chain exists gives the optimum, and each target below which none does is a proven lower
    bound, appended to ``bounds`` (kept when the deadline then stops the DP). Measured 2026-11-27 on
    three branches of 50 layers (incumbent 34.70, bound 32.15, optimum 33.06 ms), the kernel's time
    below one threshold: 32.5 ms: 0.2 s, 33.1: 1.1-2.9 s, 33.8: 5.5 s, 36: 9 s."""
    assert instance.objective == "max-load"
    if not kernel_ready(deadline):
        return None  # the kernel's first call in a process would overrun the deadline
    from splitopt.solvers.placement.idealdp_kernel import dp_run  # (numba: imported where it runs)

    lat = lattice(con, deadline) if listed is None else listed  # (else: lattice(con) from the caller)
    if lat is None:
        return None
    N = lat.n_ideals
    k, l_ = instance.n_accelerators, instance.n_cpus
    cap = instance.acc_memory_bytes
    order = np.argsort(np.bitwise_count(lat.rows).sum(axis=1), kind="stable")  # subsets first
    full = lat.full
    aw, cw = lat.aw, lat.cw
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
        args = (full, lat.up_ptr, lat.up_idx, aw, cw, lat.sz, lat.us, lat.rows, lat.members, lat.msize, lat.sec,
                lat.cut_ptr, lat.cut_idx, lat.cut_cnt, lat.cut_sec, val, par, by_cpu_move, k, l_,
                math.inf if cap is None else cap * (1 + 1e-12), U, total_acc, eps, slack, stamp, stack)
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
            blocks.append((lat.mask(J) & ~lat.mask(I), cpu))
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

__all__ = ["LOAD_WORTH", "Lattice", "count_ideals", "lattice", "list_ideals", "listable", "solve_dp", "MAX_IDEALS", "PY_IDEALS"]
