"""Exact branch and bound over ideals for the contiguous (``contiguity="chain"``) device model.

The peer's DP (Tarnawski et al., NeurIPS 2020, §4 and ``throughput-dp/dp.cpp``) enumerates *all*
ideals of the forward graph and all pairs of nested ideals (17,914 ideals and 0.55 GB on GNMT; it
does not finish Inception-v3). This search visits only the ideals that a solution better than the
incumbent can pass through:

* a state is ``(ideal I, CPU cores used, accelerators used)``; a move puts the next block ``J \\ I``
  (``J`` an ideal containing ``I``) on a new accelerator or CPU core, so every solution is a chain of
  ideals, exactly the DP's solution space (colour classes contracted, forward cycles fused, backward
  nodes with their class, idle super-nodes joined to their one neighbour as
  :func:`~.common._merge_idle` proves safe: the peer's GNMT layer graph 3,310,714 ideals -> 168,
  chain optimal in 0.06 s where it took 10.5 s);
* the candidate blocks of a state are enumerated by include/exclude branching on the frontier (each
  ideal once), pruned by the compute time and memory of the block, which only grow as it grows
  (communication does not, so it is checked per block, never used to prune the enumeration);
* depth first, largest blocks first, from the incumbent of the linearised DP
  (:mod:`splitopt.solvers.placement.baselines`); a move is kept only if the objective of the
  partial chain stays below the incumbent, and a state is cut when the remaining accelerator work,
  less what the remaining CPU cores could take at the best CPU/accelerator exchange rate, exceeds
  the remaining accelerators' capacity at the incumbent;
* a state explored to the end with partial loads ``(a, b)`` is remembered: no completion from it
  beats the incumbent, and since incumbents only improve, any later visit with partial loads at
  least ``(a, b)`` is cut. When the root is explored to the end, the incumbent is optimal (the bound
  is the incumbent itself, up to the strict inequality: bound = value x (1 - 1e-12)).

For ``max-load``, once the searches from either end have had their first short rounds
(:data:`DP_AFTER`), the DP over *all* ideals of :mod:`.idealdp` runs with half the time left
(:data:`DP_NOW_SHARE` of it on many ideals) where
the ideals can be listed (up to 2,000,000): compiled, it proves graphs of parallel branches (the
peer's GNMT layer-graph shape) 20-30x faster than this search; where it gives way (a grid of LSTM
cells), the search goes on.

Correction (2026-11-24): for ``max-load`` a fully explored state was remembered as failed for *any*
partial load; that holds only while the partial load stays below the incumbent. A completion found
inside it can bring the incumbent down to the partial load itself, after which the moves were cut
because of it; the state is now remembered with its partial load then (a suboptimal chain had been
called optimal on 4 of 400 seeded parallel-branch graphs, ``test_ideals_memo.py``).

Objectives: ``max-load`` (block value ``fwd + bwd``) and ``fwd+bwd`` (block values ``(fwd, bwd)``,
objective ``max fwd + max bwd``: the memo keeps Pareto pairs). Backward-only colour classes, which
no ideal holds, are bracketed by two searches (:mod:`.orphans`). At a time or node limit the answer is
the incumbent with the work, communication-aware work, pigeonhole and isolation bounds
(:func:`~splitopt.models.placement.work_bound`,
:func:`~splitopt.solvers.placement.commbound.comm_work_bound`,
:func:`~splitopt.models.placement.cardinality_bound`) as its proven lower bound.
"""

from __future__ import annotations

import math
import time

from splitopt.errors import InstanceError, NoFeasibleSolution
from splitopt.families import AlgoResult
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import cardinality_bound, evaluate, work_bound
from splitopt.solvers.placement.commbound import comm_work_bound
from splitopt.solvers.placement.common import (
    Contracted,
    assignment_from_blocks,
    contracted,
    cpu_exchange,
    isolation_bound,
)


class _Limit(Exception):
    pass


DP_AFTER = 256
"""With ``direction="auto"``, the DP over all ideals (:mod:`.idealdp`) runs once the alternating
searches have had their rounds of 64 states (unless there are :data:`DP_NOW` ideals or more): they
prove small and layer graphs in milliseconds (BERT-L3 operator graph, 1,428 ideals: 0.03 s against
0.13 s for the DP alone) and leave it a tighter incumbent."""

DP_NOW = 5_000
"""From this many ideals the DP runs at once, after :data:`DP_LOCAL` seconds of the chain local
search (:mod:`.chainls`) from the linearised DP's placement: on three branches of 31 layers (20,738
ideals) a round of 64 states of the search costs 0.13-0.38 s and leaves the incumbent 10 % above
the optimum, where the local search is within 4-5 % in 0.05 s and the DP takes 0.4 s from 0.05 %
above the optimum, 0.85 s from 3 %, 1.3 s from 6 % (measured 2026-11-24)."""

DP_NOW_SHARE = 0.9
"""The share of the time left the DP gets on :data:`DP_NOW` ideals or more (half of it on fewer): on
three branches of 50 layers (78,083 ideals) it needs 9 s; with a 15 s limit and half, it gave way
(measured 2026-11-25)."""

DP_LOCAL = 0.1
"""Seconds of the chain local search before the DP on many ideals (at most 5 % of the time left)."""

DP_FIRST = 500
"""Up to this many ideals, in a process that has loaded the compiled kernels, the DP over all of
them runs first, alone (:func:`_dp_first`): on the peer's seven workloads with at most 242 ideals
it proves in 0.1-2 ms where the incumbent, the bounds and the search took 6-96 ms (BERT-24,
ResNet-50, GNMT layers; measured 2026-11-29); on 1,428 (BERT-L3 inference) the search proves in
17 ms and the DP from no incumbent takes 74 ms."""

MAX_BLOCKS = 200_000
"""The most candidate blocks one state may hold (about 40 MB); past it the search stops with status
``node_limit`` (``info["too_wide"]``) and its incumbent and bound: without the cap a 300-node
GNMT-like grid filled 5 GB."""


def solve(instance: PlacementInstance, time_limit: float | None = None, node_limit: int | None = None,
          incumbent: list[str] | None = None, direction: str = "auto", linearised: bool = True,
          dp: bool = True) -> AlgoResult:
    """Proven optimum of a ``contiguity="chain"`` instance (module docstring). ``incumbent``: a
    placement to start from; ``linearised=False`` skips the linearised DP's incumbent (O(n^2):
    2.5 s on 3,000 nodes) when the caller gives it as ``incumbent``; ``dp=False`` skips the DP over
    all ideals (:mod:`.idealdp`, objective max-load) and runs the search alone."""
    if instance.contiguity != "chain":
        raise InstanceError("contiguity", f"the ideal branch and bound handles contiguity 'chain' (the peer's DP "
                                          f"model), got {instance.contiguity!r}: use milp")
    t0 = time.perf_counter()
    if direction not in ("auto", "forward", "reverse"):
        raise InstanceError("direction", f"must be auto, forward or reverse, got {direction!r}")
    con = contracted(instance, orphans_only=True)
    if con.orphans:
        from splitopt.solvers.placement.ideals_orphans import _with_orphans

        return _with_orphans(instance, con.orphans, time_limit, node_limit, incumbent, direction, t0, dp)
    con = contracted(instance)
    if dp and instance.objective == "max-load" and node_limit is None:
        quick = _dp_first(instance, con, t0, time_limit)
        if quick is not None:
            return quick
    from splitopt.solvers.placement.linearised import linearised_blocks

    n = con.n
    # the O(n^2) incumbent and the bounds get a fifth of the limit each (on 4,000-node graphs
    # they took 11 s together, whatever the limit)
    pre = None if time_limit is None else t0 + 0.2 * time_limit
    pre2 = None if time_limit is None else t0 + 0.4 * time_limit
    best_blocks = linearised_blocks(instance, con, pre) if linearised or incumbent is None else None
    ub, best_assign = math.inf, None
    if best_blocks is not None:
        best_assign = assignment_from_blocks(instance, con, best_blocks)
        ub = evaluate(instance, best_assign)[0]
    if incumbent is not None:
        from splitopt.errors import InfeasibleSolution

        try:
            v = evaluate(instance, incumbent)[0]
        except InfeasibleSolution:  # not a chain of ideals: fall back on the linearised DP
            v = math.inf
            if best_blocks is None:
                best_blocks = linearised_blocks(instance, con, pre)
                if best_blocks is not None:
                    best_assign = assignment_from_blocks(instance, con, best_blocks)
                    ub = evaluate(instance, best_assign)[0]
        if v < ub:
            ub, best_assign = v, list(incumbent)
    wb, cb = work_bound(instance), cardinality_bound(instance, pre2)
    lb = max(wb, cb)
    iso, n_cuts = isolation_bound(con, instance, target=ub, max_cuts=2,
                                  deadline=None if time_limit is None else t0 + 0.5 * time_limit)
    # the exact integer flow value is rounded once to a double: step one ulp down to stay a bound
    lb = max(lb, math.nextafter(iso, 0.0) if iso > 0 else 0.0)
    info = {"super_nodes": n, "isolation_cuts": n_cuts, "isolation_bound": iso, "work_bound": wb,
            "cardinality_bound": cb}
    if best_assign is not None and lb >= ub * (1 - 1e-12):
        value = evaluate(instance, best_assign)[0]
        return AlgoResult(best_assign, status="optimal", bound=min(lb, value),
                          info={**info, "states": 0, "proof": "isolation bound", "seconds": time.perf_counter() - t0})
    # the communication-aware bound costs more than most searches that prove (its bisection: 15 ms on
    # BERT-24, whose search proves in 3 ms), so it is computed only after a first round of the search
    # has not proved the optimum (or, where that round ended the search, for its bound), within 0.6
    # of the limit (it comes after the isolation cuts, which may take half of it)
    comm_deadline = None if time_limit is None else t0 + 0.6 * time_limit

    def comm_bound() -> float:  # computed once, kept in info
        if "comm_work_bound" not in info:
            info["comm_work_bound"] = comm_work_bound(instance, deadline=comm_deadline)
        return info["comm_work_bound"]

    deadline = None if time_limit is None else t0 + time_limit
    # portfolio: the search from the sources and the search from the sinks (the reversed graph),
    # alternated with growing state limits; the first to finish proves the optimum
    dirs = {"forward": [False], "reverse": [True], "auto": [True, False]}[direction]
    cons = {False: con}
    total_states = 0
    status = "optimal"
    limit = 64
    done = False
    rounds = []
    dp_pending = dp and instance.objective == "max-load" and node_limit is None
    if dp_pending:
        from splitopt.solvers.placement.idealdp import LOAD_WORTH, count_ideals

        rem = None if deadline is None else deadline - time.perf_counter()
        n_ideals = count_ideals(con, None if rem is None else time.perf_counter() + 0.1 * rem,
                                load=rem is None or rem >= LOAD_WORTH)
        dp_pending = n_ideals is not None
    while not done:
        if dp_pending and (len(dirs) == 1 or limit >= DP_AFTER or n_ideals >= DP_NOW):
            # graphs whose ideals can be listed: the vectorised DP over all of them (:mod:`.idealdp`),
            # from the incumbent of the first rounds (or, on many ideals, of a short chain local
            # search: the DP's windows shrink with the incumbent), with half the time left, or
            # DP_NOW_SHARE of it on many ideals (the search's rounds there rarely prove anything);
            # where it gives way, the search goes on with the rest
            from splitopt.solvers.placement.idealdp import solve_dp

            dp_pending = False
            if n_ideals >= DP_NOW and best_assign is not None:
                from splitopt.solvers.placement.chainls import chain_search

                ls = DP_LOCAL if deadline is None else min(DP_LOCAL, 0.05 * (deadline - time.perf_counter()))
                a = chain_search(instance, best_assign, time_limit=max(ls, 0.0))
                v = evaluate(instance, a)[0]
                if v < ub:
                    ub, best_assign = v, a
                    info["dp_local_search"] = v
            share = DP_NOW_SHARE if n_ideals >= DP_NOW else 0.5
            until = None if deadline is None else time.perf_counter() + share * (deadline - time.perf_counter())
            proved: list = []
            res = solve_dp(instance, con, ub, until, lb=lb, bounds=proved)
            info["dp"] = "no" if res is None else "proved"
            if proved:  # the DP's targets below which no chain exists
                lb = max(lb, info.setdefault("dp_bound", max(proved)))
            if res is not None:
                if res[0] is not None:
                    best_assign = assignment_from_blocks(instance, con, res[0])
                status = "optimal"
                break
        for rev in dirs:
            if rev not in cons:
                cons[rev] = contracted(instance, reverse=True)
            lim = limit if len(dirs) > 1 else None
            if node_limit is not None:
                left = node_limit - total_states
                lim = left if lim is None else min(lim, left)
            st, blocks, ub, stats = _search(instance, cons[rev], ub, lim, deadline)
            total_states += stats["states"]
            rounds.append(("reverse" if rev else "forward", stats["states"], st))
            if blocks is not None:
                best_assign = assignment_from_blocks(instance, cons[rev], blocks)
            if st == "optimal":
                done = True
                status = "optimal"
                break
            if st == "time_limit" or (node_limit is not None and total_states >= node_limit) \
                    or stats.get("too_wide"):
                done = True
                status = st if st == "time_limit" else "node_limit"
                info["too_wide"] = bool(stats.get("too_wide"))
                break
        if not done and "comm_work_bound" not in info and not dp_pending:
            # (early, not at the end: a search that runs to its limit would have used up its share;
            # not before the DP over all ideals, which proves without it: 0.2 s of the 0.4 s the
            # peer's ResNet-50 training graph took, chain, 2026-11-29)
            lb = max(lb, comm_bound())
            if best_assign is not None and lb >= ub * (1 - 1e-12):
                info["proof"] = "communication bound"
                done, status = True, "optimal"
        limit *= 4
    if best_assign is None:
        if status == "optimal":
            raise NoFeasibleSolution("no contiguous placement fits (memory, support, devices)")
        raise InstanceError("time_limit", "no contiguous placement found within the limit")
    value = evaluate(instance, best_assign)[0]
    if status != "optimal":
        lb = max(lb, comm_bound())
    bound = value * (1 - 1e-12) if status == "optimal" else min(lb, value)
    info.update(states=total_states, rounds=rounds, seconds=time.perf_counter() - t0)
    return AlgoResult(best_assign, status=status, bound=bound, info=info)


def _dp_first(instance: PlacementInstance, con: Contracted, t0: float, time_limit: float | None) -> AlgoResult | None:
    """On at most :data:`DP_FIRST` ideals, the DP over all of them (:func:`.idealdp.solve_dp`) with
    no incumbent and no bound, before anything else: the optimum, or ``None`` (the DP gave way, or
    found no chain: the full path says why). Only where this process has loaded the compiled
    kernels: loading them costs about 1 s, where the search proves such graphs in milliseconds
    (a command that solves one small graph would pay it: BERT-24's first call took 1.10 s, 0.05 s
    without)."""
    from splitopt.solvers.placement.idealdp import _loaded, count_ideals, solve_dp

    if not _loaded():
        return None
    rem = None if time_limit is None else time_limit - (time.perf_counter() - t0)
    n_ideals = count_ideals(con, None if rem is None else time.perf_counter() + 0.05 * rem, cap=DP_FIRST)
    if n_ideals is None or n_ideals > DP_FIRST:
        return None
    res = solve_dp(instance, con, math.inf, None if rem is None else time.perf_counter() + 0.5 * rem)
    if res is None or res[0] is None:
        return None
    a = assignment_from_blocks(instance, con, res[0])
    value = evaluate(instance, a)[0]
    return AlgoResult(a, status="optimal", bound=value * (1 - 1e-12),
                      info={"super_nodes": con.n, "ideals": n_ideals, "dp": "proved", "proof": "DP over all ideals",
                            "seconds": time.perf_counter() - t0})


def _search(instance: PlacementInstance, con: Contracted, ub: float, node_limit: int | None, deadline: float | None):
    """Depth-first search below ``ub``: ``(status, blocks of the best solution found or None, ub,
    stats)`` with status ``optimal`` (explored to the end: nothing below ``ub``), ``node_limit`` or
    ``time_limit``."""
    obj_kind = instance.objective
    k, l_ = instance.n_accelerators, instance.n_cpus
    cap = instance.acc_memory_bytes
    n = con.n
    accw = con.accw
    total_acc = math.fsum(accw)
    ratio = cpu_exchange(con)
    preds, succs = con.preds, con.succs
    # descendants mask per super-node (for exclusion)
    desc = [0] * n
    for s in reversed(range(n)):
        m = succs[s]
        d = m
        while m:
            low = m & -m
            d |= desc[low.bit_length() - 1]
            m ^= low
        desc[s] = d
    tensors = con.tensors
    touch = con.touch
    members = [cm | (1 << su) for su, cm, _sec, _bw in tensors]
    two = obj_kind == "fwd+bwd"
    memo: dict[tuple[int, int, int], list[tuple[float, float]]] = {}
    stats = {"states": 0, "blocks": 0, "memo_cuts": 0, "bound_cuts": 0, "solutions": 0}
    state = {"ub": ub, "blocks": None}
    tol = 1e-12

    def combine(a, b):
        return a + b if two else a

    def blocks_from(I: int, cpu: bool, va: float, vb: float):
        """Candidate blocks J \\ I (masks) with their (a, b) pair, on a CPU core or an accelerator."""
        out = []
        U = state["ub"]
        rest = ~I & con.full
        # frontier-based include/exclude enumeration (iterative DFS)
        first = None
        m = rest
        while m:
            low = m & -m
            s = low.bit_length() - 1
            if preds[s] & ~I == 0:
                first = s
                break
            m ^= low
        if first is None:
            return out
        # stack items: (block, excluded, f_compute, b_compute, size, accelerator work, tensors
        # surely paid, their forward and backward seconds): a tensor with a member in the block and
        # one placed before (in I) or excluded here is paid by every block this branch yields, so
        # its seconds join the monotone part that prunes the enumeration
        stack = [(0, 0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0)]
        pops = 0
        while stack:
            B, X, cf, cb, sz, w, paid, pf, pb = stack.pop()
            pops += 1
            if (pops & 1023) == 0:
                # wide graphs (a grid of LSTM cells) have millions of blocks per state: the limit
                # and the memory hold inside the enumeration too (issue 22)
                if deadline is not None and time.perf_counter() > deadline:
                    raise _Limit
                if len(out) > MAX_BLOCKS:
                    stats["too_wide"] = True
                    raise _Limit
            # smallest-index frontier node not in B, not excluded
            J = I | B
            cand = rest & ~B & ~X
            s = -1
            m = cand
            while m:
                low = m & -m
                t = low.bit_length() - 1
                if preds[t] & ~J == 0:
                    s = t
                    break
                m ^= low
            if s < 0:
                if B:
                    out.append((B, cf, cb, w))
                continue
            # exclude s (and its descendants)
            stack.append((B, X | (1 << s) | desc[s], cf, cb, sz, w, paid, pf, pb))
            # include s if the monotone parts allow
            if cpu:
                nf, nb = cf + con.cpuf[s], cb + con.cpub[s]
            else:
                if not con.sup[s]:
                    continue
                nf, nb = cf + con.accf[s], cb + con.accb[s]
                nsz = sz + con.size[s]
                if cap is not None and nsz > cap * (1 + 1e-12):
                    continue
                gone = I | X
                for t_i in touch[s]:
                    if not (paid >> t_i) & 1 and members[t_i] & gone:
                        paid |= 1 << t_i
                        if tensors[t_i][3]:
                            pb += tensors[t_i][2]
                        else:
                            pf += tensors[t_i][2]
            if two:
                if max(va, nf + pf) + max(vb, nb + pb) >= U * (1 - tol):
                    continue
            elif nf + nb + pf + pb >= U * (1 - tol):
                continue
            stack.append((B | (1 << s), X, nf, nb, sz if cpu else nsz, w + accw[s], paid, pf, pb))
        res = []
        for j, (B, cf, cb, w) in enumerate(out):
            # (each block's crossing tensors cost O(its members' tensors): on a 3,863-node training
            # graph one state's blocks took seconds past a 1 s limit)
            if (j & 63) == 63 and deadline is not None and time.perf_counter() > deadline:
                raise _Limit
            if cpu:
                a, b = cf, cb
            else:
                f = b2 = 0.0
                seen = set()
                m = B
                while m:
                    low = m & -m
                    s = low.bit_length() - 1
                    for t_i in touch[s]:
                        if t_i in seen:
                            continue
                        seen.add(t_i)
                        su, cm, sec, bw = tensors[t_i]
                        if (B >> su) & 1:
                            cross = cm & ~B
                        else:
                            cross = cm & B
                        if cross:
                            if bw:
                                b2 += sec
                            else:
                                f += sec
                    m ^= low
                a, b = cf + f, cb + b2
            if not two:
                a, b = a + b, 0.0
            if combine(max(va, a), max(vb, b)) < U * (1 - tol):
                res.append((B, a, b, w))
        stats["blocks"] += len(res)
        return res

    path: list[tuple[int, bool]] = []

    def dfs(I: int, c: int, f: int, va: float, vb: float, acc_done: float):
        if I == con.full:
            val = combine(va, vb)
            if val < state["ub"]:
                state["ub"] = val
                state["blocks"] = list(path)
                stats["solutions"] += 1
            return
        stats["states"] += 1
        if node_limit is not None and stats["states"] > node_limit:
            raise _Limit
        if deadline is not None and (stats["states"] & 255) == 0 and time.perf_counter() > deadline:
            raise _Limit
        key = (I, c, f)
        seen = memo.get(key)
        if seen is not None:
            for a0, b0 in seen:
                if a0 <= va and b0 <= vb:
                    stats["memo_cuts"] += 1
                    return
        U = state["ub"]
        rem = total_acc - acc_done
        cpu_take = (l_ - c) * U * ratio if l_ - c > 0 else 0.0
        if rem - cpu_take > (k - f) * U * (1 + 1e-12):
            stats["bound_cuts"] += 1
        else:
            moves = []
            if f < k:
                moves += [(-w, B, False, a, b) for B, a, b, w in blocks_from(I, False, va, vb)]
            if c < l_:
                moves += [(-w, B, True, a, b) for B, a, b, w in blocks_from(I, True, va, vb)]
            moves.sort(key=lambda mv: mv[0])  # largest blocks first
            for negw, B, cpu, a, b in moves:
                na, nb = max(va, a), max(vb, b)
                if combine(na, nb) >= state["ub"] * (1 - tol):
                    continue
                J, c2, f2 = I | B, c + cpu, f + (not cpu)
                seen = memo.get((J, c2, f2))
                if seen is not None and any(a0 <= na and b0 <= nb for a0, b0 in seen):
                    stats["memo_cuts"] += 1  # the child's own check, without the call
                    continue
                path.append((B, cpu))
                dfs(J, c2, f2, na, nb, acc_done - negw)
                path.pop()
        if not two and va < state["ub"] * (1 - tol):
            # for max-load, while the partial load stays below the incumbent, a move is cut iff its
            # block alone reaches the incumbent: the state then fails for any partial load. Once a
            # completion found here brings the incumbent down to the partial load itself, the moves
            # were cut *because* of it, and the state fails only for partial loads at least as
            # large (forgetting that made the search skip better chains: 23.04 called optimal
            # where 22.95 exists, tests/solvers/placement/test_ideals_memo.py)
            va = vb = 0.0
        lst = memo.setdefault(key, [])
        lst[:] = [(a0, b0) for a0, b0 in lst if not (va <= a0 and vb <= b0)] + [(va, vb)]

    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10 * (n + k + l_) + 1000))
    status = "optimal"
    try:
        dfs(0, 0, 0, 0.0, 0.0, 0.0)
    except _Limit:
        status = "time_limit" if (deadline is not None and time.perf_counter() > deadline) else "node_limit"
    finally:
        sys.setrecursionlimit(old)
    stats["memo_states"] = len(memo)
    return status, state["blocks"], state["ub"], stats


__all__ = ["solve"]
