"""``auto``, the default algorithm of the ``placement`` family (issue 22): a written rule that picks
the exact method that measures fastest for the instance's shape and hands its incumbent and proven
bound to the next method when the first cannot finish.

The rule (:func:`plan`; every branch is tested in ``tests/solvers/placement/test_auto.py``):

1. ``contiguity="chain"`` (the peer's DP model, Tarnawski et al., NeurIPS 2020, §4):

   a. backward-only colour classes (training operator graphs with weight updates;
      :attr:`~.common.Contracted.orphans`) no longer send the instance to ``milp`` alone: the
      ideal search brackets them (:mod:`.orphans`: a lower bound without them, placements that
      complete it) and hands both on. Measured 2026-11-24 on six seeded BERT-like training graphs
      with weight updates (316-1,216 nodes): within 0.4-5 s it places them 0-6.3 % above the
      optimum where the MILP alone proves one (three of six); of the three the MILP alone leaves
      open after 60 s, it places two 4-51 % lower (796 nodes: 2.234 against 4.524 ms; 1,216 nodes:
      2.594 against 2.700 ms) and one (a GNMT-like grid) 4 % higher; ``auto`` then proves the
      616-node graph in 4.4 s (the MILP alone: 14.5 s). On the peer's BERT-L12 and ResNet-50
      training operator graphs the bracket closes (2026-11-29): the ideal search proves them alone
      in 0.73 s and 0.14 s (the peer's DP: 29 s and 0.29 s); on BERT-L3 and BERT-L6 training a
      path of orphans leaves it open and the MILP closes it in 3.7-5.3 s;
   b. ``ideals`` first, for a *probe* share of the time (:data:`IDEALS_SHARE` of the limit,
      at most :data:`IDEALS_PROBE` s, or :data:`IDEALS_PROBE` s without a limit); when it proves the
      optimum the call ends there; else its incumbent and bound start ``milp`` (chain model) with
      all the time left. Why both: the ideal search proves small and layer graphs in milliseconds
      (BERT-24 and ResNet-50 chain), and its DP over all ideals (:mod:`.idealdp`) proves graphs
      of parallel branches with about 20,000 ideals in 1-2 s (three branches of 31 layers, the
      shape of the peer's GNMT layer graphs, on which this rule's MILP left 4-5 % open after 60 s);
      where the ideals can be listed, the ideal step gets :data:`DP_SHARE` of the limit (its DP
      proves 78,083 ideals in 9 s, 132,743 in 18 s);
      but where the ideals are too many to list (a grid of LSTM cells, wide operator graphs) the
      search can stop with a gap, and the MILP with the chain rows then proves more (the issue
      reports 4.5-5.3 s on the peer's GNMT layer graphs, where the search of that time left
      9-20 % after 300 s).
   c. when the ideal search does not prove its placement, the chain local search of
      :mod:`.chainls` improves it (:data:`CHAIN_SEARCH_SHARE` of the limit, at most
      :data:`CHAIN_SEARCH` s) before it starts the MILP. Measured 2026-11-24 on the GNMT-like
      grids, where the ideal search stops too wide: gnmt-300 training (seed 1) 47.07 -> 41.10 ms
      and gnmt-1000 (seed 3) 19.10 -> 18.20 ms in 5 s, where HiGHS capped by the first found
      40.21 ms only after 600 s on the former and nothing below 19.10 ms in 500 s on the latter.

   d. where the MILP could not even be built in the time the probe and the local search leave it
      (:func:`~.milp.build_seconds`: about 6 ms per node), the ideal search and then the chain
      local search keep that time instead of stopping at the probe: a 5 s limit on the 981-node
      GNMT-like graph returned after 2 s before, the MILP step skipped.

   e. where the ideal search would spend more than that time before its first step
      (:func:`~.incumbent.setup_seconds`: 120-350 us a node), the linearised split of
      :func:`~.linearised.linearised_assignment` (greedy past its deadline; backward-only classes
      join the device they exchange most with) answers instead, then the chain local search
      (since 2026-11-29: a 10,026-node GNMT-like training graph with weight updates took 3.3 s
      with 2 s and 5.3 s with 3 s; now 1.7-1.9 s at 1-3 s, the same value).

2. ``contiguity="convex"`` or ``"none"``: ``milp``, which runs its own portfolio (the linearised DP
   and the chain optimum of ``ideals`` as incumbents, the configuration LP of :mod:`.colgen` where
   its DP pricing applies, the MILP, and :mod:`.lns` from its best placement: on graphs of at
   least :data:`~.milp.BESIDE_NODES` nodes with at least :data:`~.milp.BESIDE_FROM` s, the MILP in
   a child process with all the time while :mod:`.lns` works beside it on the second core, which
   proves the seeded BERT-like 300-node graph in 40 s, 2.7 % open before; else one after the other). Measured
   2026-11-24 (2-core machine shared with other jobs, 60 s limits): asking ``milp`` first for a
   0.1 % gap and then for the exact proof from its placement and bound was slower everywhere it
   mattered (BERT-24 inference non-contiguous: proven in 17.6 s by one exact call, 0.0001 % open
   after 60 s in two steps; BERT-24 training non-contiguous: 4.6 s against 0.05 % open at 30 s),
   and no better on ResNet-50 (0.39 % open at 60 s either way): one exact call.

3. ``contiguity="convex"``: the MILP of the non-contiguous relaxation (``milp-none``) also runs;
   every non-contiguous bound is a convex bound, and its smaller model often proves more in the
   same time. With at least :data:`~.milp.BESIDE_FROM` s it runs *beside* the convex model, in a
   child process with the whole limit (stopped as soon as the convex model closes), so the convex
   bound is at least the bound the non-contiguous MILP reaches in the same time (HiGHS at a time
   limit is not deterministic: the two bounds of a ``convex`` and a ``none`` call differ by run
   noise, 0.1-0.2 % on the layer graphs): measured 2026-11-24 at 60 s, the convex bound equals
   the non-contiguous one on the BERT-like training graphs (2.466776 ms on 1,507 nodes, was 2.420072
   against 2.465507) and the seeded BERT-like 300-node graph is proven convex in 33 s (was 4.6 %
   open). Since 2026-11-25 at any size: on the 95- and 152-node layer graphs the relaxation had only
   a third of the limit after the convex MILP, and the convex bound sat 0.13-0.16 % below the
   non-contiguous one. With shorter limits the convex MILP gets :data:`CONVEX_SHARE` of the limit,
   then ``milp-none`` starts from the convex incumbent with the time left; its placement counts
   where it is convex.

Every phase shares one :class:`~splitopt.solvers.deadline.Deadline`; the answer is the best
placement found (its value from the evaluator), the largest proven bound (at least the work bound,
which needs no solver: where no step proved one in the time) and the status that the two support
(``optimal`` only where they agree).
"""

from __future__ import annotations

import math
import time

from splitopt.errors import InfeasibleSolution, InstanceError, SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import check_placeable, evaluate, work_bound
from splitopt.solvers.deadline import Deadline, wrapped
from splitopt.solvers.placement.idealdp import LOAD_WORTH, listable
from splitopt.solvers.placement.incumbent import setup_seconds
from splitopt.solvers.placement.linearised import linearised_assignment

DEFAULT_TIME_LIMIT = 60.0
"""Seconds ``auto`` takes when no time limit is given (``splitopt solve FILE`` on a 2,000-node
operator graph must come back, with its bound, rather than run a MILP for hours); pass
``time_limit=math.inf`` for no limit (an exact answer, however long it takes)."""

IDEALS_SHARE = 0.25
"""The share of a time limit the ideal branch and bound gets as the first method (rule 1b)."""

CONVEX_SHARE = 2 / 3
"""The share of a time limit the convex MILP gets before the non-contiguous relaxation (rule 2)."""

IDEALS_PROBE = 10.0
"""The most seconds the ideal branch and bound gets before the MILP takes over (rule 1b)."""

DP_SHARE = 0.75
"""The share of a time limit the ideal step gets (no :data:`IDEALS_PROBE` cap) where the ideals can
be listed for its DP (:mod:`.idealdp`; objective max-load): exact, it needed about 0.1 ms an ideal
(three branches of 50 layers, 78,083 ideals: 9 s; four of 20, 132,743: 18 s; measured 2026-11-24),
where the MILP left these open at 60 s (rule 1b); compiled since 2026-11-27, the whole ideal step
proves the 50-layer branches in 6-10 s on a machine 3-5x slower than that day's (25 s before), and
in 4.1 s once the listing was compiled too (the same evening). Whether the ideals can be listed is
asked with ``load`` where this share is at least :data:`~.idealdp.LOAD_WORTH`: beyond 20,000
ideals the test needs the compiled listing, whose first call loads numba (0.9 s)."""

WRAP_S, WRAP_SHARE = 0.25, 0.03
"""The steps' deadline is the limit less min(WRAP_S, WRAP_SHARE x limit)."""

CHAIN_SEARCH = 5.0
"""The most seconds the chain local search gets between the ideal search and the MILP (rule 1c)."""

CHAIN_SEARCH_SHARE = 0.1
"""The share of a time limit the chain local search gets (rule 1c)."""


def ideals_applies(instance: PlacementInstance) -> bool:
    """Whether the ideal branch and bound accepts the chain version of ``instance`` (rule 1a)."""
    from splitopt.solvers.placement.common import contracted

    try:
        contracted(instance, orphans_only=True)
        return True
    except InstanceError:
        return False


def plan(instance: PlacementInstance) -> list[str]:
    """The methods auto runs on ``instance``, in order (the module docstring's rule)."""
    if instance.contiguity == "chain":
        return ["ideals", "milp"] if ideals_applies(instance) else ["milp"]
    if instance.contiguity == "convex":
        return ["milp", "milp-none"]
    return ["milp"]


def _probe(name: str, time_limit: float | None, instance: PlacementInstance | None = None) -> float | None:
    if name == "milp":  # convex, before its non-contiguous relaxation (rule 2)
        return None if time_limit is None else CONVEX_SHARE * time_limit
    if instance is not None and listable(instance, None if time_limit is None else min(1.0, 0.05 * time_limit),
                                         load=time_limit is None or DP_SHARE * time_limit >= LOAD_WORTH):
        return None if time_limit is None else DP_SHARE * time_limit
    return IDEALS_PROBE if time_limit is None else min(IDEALS_PROBE, IDEALS_SHARE * time_limit)


def _closed(best_v: float, bound: float) -> bool:
    """Whether the best value meets the proven bound (1e-9 relative; a step's own ``optimal`` may be
    within its gap only)."""
    return best_v - bound <= 1e-9 * best_v


def _milp_cannot_start(instance, dl, after: float) -> bool:
    """Rule 1d: whether the MILP could not be built in what is left ``after`` more seconds."""
    from splitopt.solvers.placement import milp

    return milp.build_seconds(instance) >= dl.remaining() - after


def _record(instance, name, r, best, best_v, bound, tried):
    """Fold a step's answer into (best, best_v, bound); its placement counts where it is feasible."""
    try:
        v = evaluate(instance, r.assignment)[0]
    except InfeasibleSolution:  # the relaxation's placement is not convex: only its bound counts
        v = math.inf
    entry = {"method": name, "status": r.status, "value": v if math.isfinite(v) else None, "bound": r.bound}
    if not math.isfinite(v):  # (its status is the relaxation's own)
        entry["note"] = "its placement is not convex: only its bound counts"
    tried.append(entry)
    if v < best_v:
        best, best_v = list(r.assignment), v
    if r.bound is not None:
        bound = max(bound, r.bound)
    return best, best_v, bound


def _step(instance, name, last, time_limit, dl, best, best_v, bound, tried):
    """Run one method of the plan; returns (best, best_v, bound, done)."""
    from splitopt.solvers.placement import ideals, milp

    if last:
        lim = dl.remaining()
    else:
        lim = _probe(name, time_limit, instance if name == "ideals" else None)
        if dl.end is not None:
            lim = dl.remaining() if lim is None else min(lim, dl.remaining())
        if name == "ideals" and dl.end is not None:
            # rule 1d: where the MILP could not be built in the time the probe and the chain local
            # search would leave it, the ideal search keeps that time
            ls = min(CHAIN_SEARCH, CHAIN_SEARCH_SHARE * time_limit)
            if _milp_cannot_start(instance, dl, lim + ls):
                lim = max(lim, dl.remaining() - ls)
    try:
        if name == "ideals" and lim is not None and setup_seconds(instance) > lim:
            # rule 1e: the ideal search would spend more than its time before its first step (a
            # 10,026-node training graph with weight updates, 2 s: the call took 3.3 s): the
            # linearised split answers (the greedy one past the deadline), then the local search
            name = "linearised"
            got = linearised_assignment(instance, time.perf_counter() + lim, orphans=True)
            if got is None:
                tried.append({"method": name, "error": "no split of a topological order fits the devices"})
                return best, best_v, bound, False
            r = AlgoResult(got[0], status="time_limit")
        elif name == "ideals":
            r = ideals.solve(instance, time_limit=lim, incumbent=best)
        elif name == "milp-none":  # the non-contiguous relaxation: its bound is a convex bound
            r = milp.solve(instance.with_(contiguity="none"), time_limit=lim, start=best)
        else:
            r = milp.solve(instance, time_limit=lim, start=best,
                           lower_bound=bound if math.isfinite(bound) else None)
    except InfeasibleSolution:
        raise
    except (InstanceError, SolverFailed) as exc:
        tried.append({"method": name, "error": str(exc)[:200]})
        return best, best_v, bound, False  # (with no placement at the end, solve says why)
    best, best_v, bound = _record(instance, name, r, best, best_v, bound, tried)
    if _closed(best_v, bound) or dl.over():
        return best, best_v, bound, True
    if name in ("ideals", "linearised") and best is not None and not last:
        # rule 1c: the chain local search from the ideal search's placement before the MILP
        from splitopt.solvers.placement.chainls import chain_search

        ls = CHAIN_SEARCH if time_limit is None else min(CHAIN_SEARCH, CHAIN_SEARCH_SHARE * time_limit)
        if dl.end is not None:
            # rule 1d: the time the MILP could not use goes to the local search
            ls = dl.remaining() if _milp_cannot_start(instance, dl, ls) else min(ls, dl.remaining())
        a = chain_search(instance, best, time_limit=ls)
        v = evaluate(instance, a)[0]
        tried.append({"method": "chain-search", "value": v})
        if v < best_v:
            best, best_v = a, v
    return best, best_v, bound, False


def _start_beside(instance: PlacementInstance, time_limit: float | None, dl: Deadline):
    """Rule 3 with a long enough limit: the non-contiguous relaxation's MILP in a child process with
    the whole limit (to the steps' deadline ``dl``), beside the convex model (``None`` where it does
    not apply)."""
    from splitopt.solvers.placement import guard, milp

    if time_limit is None or time_limit < milp.BESIDE_FROM:
        return None
    return guard.Child("splitopt.solvers.placement.milp:solve", instance.with_(contiguity="none"),
                       seconds=dl.remaining(), polish=False)


def _collect_beside(instance, child, dl, best, best_v, bound, tried):
    """Fold the relaxation running beside into (best, best_v, bound): stopped at once when the convex
    model has proven its optimum, else waited for until the deadline (its own limit ends before)."""

    if best is not None and _closed(best_v, bound):
        child.kill()
        tried.append({"method": "milp-none", "status": "stopped: the convex model closed first"})
        return best, best_v, bound
    r = child.collect()
    if r is None:
        tried.append({"method": "milp-none", "error": child.error})
        return best, best_v, bound
    return _record(instance, "milp-none", r, best, best_v, bound, tried)


def _one_device(instance: PlacementInstance) -> tuple[list[str] | None, float]:
    """Every node on one CPU core or on one accelerator (where it holds them: support, memory), the
    better: a placement of every contiguity and its value (``(None, inf)`` where neither fits), the
    answer of last resort."""
    from splitopt.errors import InfeasibleSolution

    best, best_v = None, math.inf
    for dev in (["cpu0"] if instance.n_cpus else []) + (["acc0"] if instance.n_accelerators else []):
        a = [dev] * instance.n_nodes
        try:
            v = evaluate(instance, a)[0]
        except InfeasibleSolution:
            continue
        if v < best_v:
            best, best_v = a, v
    return best, best_v


def solve(instance: PlacementInstance, time_limit: float | None = None) -> AlgoResult:
    """The answer of the methods of :func:`plan`, each given what the one before found, within
    ``time_limit`` seconds (:data:`DEFAULT_TIME_LIMIT` when ``None``; ``math.inf``: no limit)."""
    note = None
    if time_limit is None:
        time_limit = DEFAULT_TIME_LIMIT
        note = (f"auto stops at {DEFAULT_TIME_LIMIT:g} s when no time limit is given (--time-limit "
                "SECONDS to change it, --time-limit inf for none)")
    elif isinstance(time_limit, (int, float)) and time_limit == math.inf:  # (-inf and NaN: refused below)
        time_limit = None
    # the steps end a little before the limit: each may overrun its own by a few checks (the ideal
    # search and the chain local search by 35 ms each on a 6,083-node graph), and the answer is
    # scored and handed back after them
    dl = Deadline(wrapped(time_limit, WRAP_SHARE, WRAP_S))
    check_placeable(instance)  # no placement for a reason seen without a search: say so at once
    steps = plan(instance)
    best, best_v, bound = None, math.inf, -math.inf
    tried: list[dict] = []
    relax = _start_beside(instance, time_limit, dl) if "milp-none" in steps else None
    try:
        for i, name in enumerate(steps):
            if name == "milp-none" and relax is not None:
                break  # it runs beside (rule 3)
            if best is not None and dl.over():
                break  # (a step started at the limit overran it by 75 ms)
            last = i == len(steps) - 1 or relax is not None
            best, best_v, bound, done = _step(instance, name, last, time_limit, dl, best, best_v, bound, tried)
            if done:
                break
        if relax is not None:
            best, best_v, bound = _collect_beside(instance, relax, dl, best, best_v, bound, tried)
    finally:
        if relax is not None and not relax.done():
            relax.kill()
    if best is None:
        # nothing found in the time (a 6,196-node training graph with weight updates, chain, 3 s):
        # every node on one device is a placement of every contiguity, where one device can hold it
        best, best_v = _one_device(instance)
        if best is None:
            why = "; ".join(f"{t['method']}: {t['error']}" for t in tried if "error" in t)
            limit = "" if time_limit is None else f" within {time_limit:g} s"
            raise SolverFailed(f"time_limit: no placement found{limit} (auto"
                               + (f"; {why}" if why else "") + "): a longer --time-limit may find one",
                               status="time_limit")
        tried.append({"method": "one-device", "value": best_v})
    if not math.isfinite(bound):
        # no step proved a bound in the time (a 4,156-node graph, chain, 5 s on a machine running
        # four processes on two cores, 2026-11-27): the work bound needs no solver (a few ms)
        bound = work_bound(instance)
    bound = min(bound, best_v) if math.isfinite(bound) else None
    optimal = bound is not None and _closed(best_v, bound)
    # time_limit only when the limit stopped the work (a finished run with a gap is feasible: the
    # MILP's relaxation drops times below 1e-7 of its unit, so its bound can sit a hair low)
    stopped = dl.over() or any(t.get("status") in ("time_limit", "node_limit") or t["method"] == "one-device"
                               for t in tried)
    status = "optimal" if optimal else ("time_limit" if stopped else "feasible")
    info = {"plan": steps, "tried": tried}
    if note is not None and status != "optimal":  # the default limit stopped it: say so
        info["note"] = note
    return AlgoResult(best, status=status, bound=bound, info=info)


__all__ = ["solve", "plan", "ideals_applies", "IDEALS_SHARE", "IDEALS_PROBE", "DEFAULT_TIME_LIMIT",
           "CHAIN_SEARCH", "CHAIN_SEARCH_SHARE"]
