"""The first incumbent of the device-placement model's exact methods: the linearised DP, the chain
optimum of the ideal branch and bound (a chain of ideals is convex and a fortiori unconstrained) and
a descent from the better of the two. Used by :mod:`.milp`, :mod:`.lns`, :mod:`.colgen` and
:mod:`.auto` (its own module so that none of them imports another in a circle, issue 22)."""

from __future__ import annotations

import math
import time

from splitopt.errors import InfeasibleSolution, InstanceError, NoFeasibleSolution
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import evaluate
from splitopt.solvers.placement.idealdp import LOAD_WORTH, listable

SETUP_S_PER_NODE = (1.2e-4, 3.5e-4)
"""Seconds per node the ideal search spends before its first step whatever its limit (its
contractions, bounds and first placement), without and with backward-only classes: 55-108 and
110-210 us on generated operator graphs of 981-10,336 nodes with a 0.01 s limit, measured
2026-11-29 on the 2-core EPYC with one core busy (gnmt-5000 training, 10,026 nodes: 1.75 s); with
backward-only classes and a limit of 2.6 s it took 5.3-5.9 s there (the instance without them is
built and contracted again), hence the margin. The peer's BERT-L12 training graph (2,012 nodes,
0.7 s by this rule) keeps its ideal search within a 1 s limit (0.87 s for it, rule 1d of
:mod:`.auto`), where it finds the chain optimum."""


def setup_seconds(instance: PlacementInstance) -> float:
    """What the ideal search spends on ``instance`` before its first step (:data:`SETUP_S_PER_NODE`)."""
    from splitopt.solvers.placement.common import contracted

    try:
        orphans = bool(contracted(instance, orphans_only=True).orphans)
    except InstanceError:
        orphans = True
    return SETUP_S_PER_NODE[orphans] * instance.n_nodes


DP_SHARE = 0.25
"""The share of a time limit the chain optimum may take where the DP over all ideals applies."""

BRACKET_SECONDS = 15.0
"""The most seconds (and at most a quarter of the limit) the chain MILP that closes an orphan
bracket may take (:func:`~.milp._close_chain_bracket`; it stops once it proves the chain optimum).
Was the chain local search's 5 s until 2026-11-28: beside the non-contiguous MILP that a convex
call runs, the 616-node BERT-like graph with weight updates needed 8.7 s, and with 5 s the convex
answer stayed at 4.874964 ms (0.05-0.91 % open at 60 s) against the chain optimum 4.874462 ms."""

PHASE_SHARE = 0.6
"""The share of a time limit the whole phase may take: each step gets its own share (of the
limit) or what is left of this one, whichever is less. Its steps' shares add up to 0.7 of a short
limit, and each overran it a little on large graphs: on a 6,083-node training graph with 8 s the
phase ended after 8.2 s and the call after 9.3 s (2026-11-27)."""


def _one_device(instance: PlacementInstance):
    """Every node on CPU core 0, else on accelerator 0, where that placement is feasible:
    ``(assignment, value)`` or ``(None, inf)``."""
    for dev in ("cpu0", "acc0"):
        if dev in instance.devices:
            a = [dev] * instance.n_nodes
            try:
                return a, evaluate(instance, a)[0]
            except InfeasibleSolution:
                continue
    return None, math.inf


def first_feasible(instance: PlacementInstance, time_limit: float | None = None):
    """A first placement from the device MILP (HiGHS stopped at its first feasible solution),
    where :func:`incumbent`'s heuristics found none: ``(assignment, value)``, or ``(None, inf)``
    where the MILP found none in ``time_limit`` (10 s without one) or its model would take longer to
    build (:func:`~splitopt.models.placement_milp.build_seconds`). Raises
    :class:`~splitopt.errors.NoFeasibleSolution` where the MILP proves that no placement exists.
    Until 2026-11-28 ``lns`` and ``colgen`` refused such instances ("no feasible starting placement
    found"): 21 of 130 small generated instances with memory (8-9 nodes) that brute force solves."""
    from splitopt.models.placement_milp import assignment_from_milp, build_milp, build_seconds
    from splitopt.solvers import exact

    if time_limit is not None and build_seconds(instance) > time_limit:
        return None, math.inf  # the model would not be built within the limit
    t0 = time.perf_counter()
    model = build_milp(instance)
    left = 10.0 if time_limit is None else max(time_limit - (time.perf_counter() - t0), 0.05)
    res = exact.solve(model, "highs", time_limit=left, options={"mip_max_improving_sols": 1})
    if res.status == "infeasible":
        raise NoFeasibleSolution("no placement exists: the device MILP is infeasible (memory, support or "
                                 "contiguity)")
    if not res.has_solution:
        return None, math.inf
    a = assignment_from_milp(instance, model)
    try:
        return a, evaluate(instance, a)[0]
    except InfeasibleSolution:  # (the solver's tolerances)
        return None, math.inf


def incumbent(instance: PlacementInstance, time_limit: float | None = None, notes: dict | None = None,
              chain_dp: bool | None = None):
    """The better of the linearised DP and, for ``convex``/``none`` contiguity, the ideal branch and
    bound's chain solution (a chain of ideals is convex and a fortiori unconstrained; given a
    tenth of the time limit (a quarter for ``convex``), at most 5 s, or :data:`DP_SHARE` of it where
    its DP over all ideals applies (:func:`~.idealdp.listable`; see ``chain_dp``), and the first
    share again for the chain local search of :mod:`.chainls` where the ideal search does not prove
    its chain optimum: the phase once took twice the DP's share, and a 60 s call 62 s), then, for
    ``convex``/``none``, improved by
    :func:`~splitopt.solvers.placement.baselines.improve` (another tenth, at most 5 s):
    ``(assignment, value)`` or ``(None, inf)``. ``notes`` (convex only: a non-contiguous search
    beats the chain optimum by itself, and the 616-node graph with weight updates, none, ended 2.3 %
    open with it, 0.63 % without): where backward-only classes left the
    ideal search a bracket, ``notes["chain_bracket"] = (chain instance, its placement, its bound,
    seconds)`` for :func:`~.milp.solve` to close with the chain MILP. ``chain_dp``: whether the chain
    optimum gets :data:`DP_SHARE` of the limit where the DP applies (``None``: for ``convex``; the
    MILP asks it for ``none`` as well, but not for the non-contiguous relaxation that runs beside a
    convex model for its bound)."""
    import time

    from splitopt.solvers.placement import ideals
    from splitopt.solvers.placement.baselines import improve
    from splitopt.solvers.placement.linearised import linearised_assignment

    best, best_v = None, math.inf
    end = None if time_limit is None else time.perf_counter() + PHASE_SHARE * time_limit

    def within(seconds: float) -> float:  # a step's own share, or what is left of the phase's
        return seconds if end is None else max(0.0, min(seconds, end - time.perf_counter()))

    try:
        # the linearised DP (O(n^2)) within a tenth of the limit
        got = linearised_assignment(instance, None if time_limit is None else time.perf_counter() + 0.1 * time_limit,
                                    orphans=True)
        if got is not None:
            best, best_v = got[0], evaluate(instance, got[0])[0]
    except (InstanceError, InfeasibleSolution):
        pass
    if instance.contiguity != "chain":
        # convex: a quarter of a short limit (as auto's rule 1b gives the chain search), since the
        # chain optimum is the convex incumbent (measured 2026-11-25, the 4,156-node BERT-like
        # training graph with weight updates, convex at 8 s: 470 ms with a tenth, the chain
        # answer at 3 s is 20.98 ms); the 5 s cap leaves limits of 50 s and more as they were
        share = 0.25 if instance.contiguity == "convex" else 0.1
        lim = 5.0 if time_limit is None else min(5.0, share * time_limit)
        # where the DP over all ideals applies, the chain optimum gets the time the DP needs (about
        # 0.1 ms an ideal): on three branches of 50 layers (78,083 ideals, 9 s) the convex answer was
        # 33.16 ms with the 5 s cap, above the chain optimum 33.06 ms every convex search should beat
        # (not for the relaxation running beside a convex model: it needs its time for the bound;
        # for none since 2026-11-27, when the DP became 3-5x faster: the non-contiguous answer on
        # those branches was 33.19 ms at 60 s, above the chain optimum)
        dp_lim = None if time_limit is None else min(1.0, 0.02 * time_limit)
        # one chain copy for both (a copy validates the instance again: 0.46 s on 6,083 nodes; and
        # the contraction that listable makes of it is the one the ideal search then uses)
        chain = instance.with_(contiguity="chain")
        if chain_dp is None:
            chain_dp = instance.contiguity == "convex"
        ls_lim = lim  # the chain local search's, after an ideal search that stopped short
        if chain_dp and listable(chain, dp_lim, load=time_limit is None or DP_SHARE * time_limit >= LOAD_WORTH):
            lim = 30.0 if time_limit is None else DP_SHARE * time_limit
        # (the phase's time may be spent; where a placement is in hand, the ideal search starts only
        # with at least what it spends before its first step: past its limit otherwise)
        if within(lim) > (0 if best is None else setup_seconds(chain)):
            try:
                r = ideals.solve(chain, time_limit=within(lim), incumbent=best, linearised=False)
                a = r.assignment
                if r.status != "optimal":
                    # the chain local search where the ideal search stopped short (as auto's rule 1c
                    # does for chain): the GNMT-like 591-node convex answer was 41.40 ms against the
                    # chain answer's 41.10 ms, though every chain placement is convex
                    from splitopt.solvers.placement.chainls import chain_search

                    a = chain_search(chain, a, time_limit=within(ls_lim))
                    if notes is not None and instance.contiguity == "convex" and r.info.get("orphan_classes"):
                        notes["chain_bracket"] = (chain, a, r.bound, BRACKET_SECONDS if time_limit is None
                                                  else min(BRACKET_SECONDS, 0.25 * time_limit))
                v = evaluate(instance, a)[0]
                if v < best_v:
                    best, best_v = a, v
            except (InstanceError, InfeasibleSolution):
                pass
        if best is None:
            # nothing within the limit (a 4,000-node graph with a few seconds): one device for
            # everything, a placement of every contiguity wherever it fits, for the descent to improve
            best, best_v = _one_device(instance)
        if best is not None and within(1.0) > 0:
            # descent from it (class moves and swaps, feasibility kept): the chain optimum is far
            # from the non-contiguous optimum on ResNet-50 (33.77 ms; the descent reaches 33.36 ms)
            lim = 5.0 if time_limit is None else min(5.0, 0.1 * time_limit)
            a = improve(instance, best, time_limit=within(lim)).assignment
            v = evaluate(instance, a)[0]
            if v < best_v:
                best, best_v = a, v
    return best, best_v
