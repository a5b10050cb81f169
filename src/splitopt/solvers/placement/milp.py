"""The device-model MILP (:func:`splitopt.models.placement_milp.build_milp`) solved by an exact
solver, and its LP relaxation as a bound.

The model is capped by the incumbent of the linearised DP or the ideal branch and bound's chain
solution (``T <= incumbent``): HiGHS then prunes
with it from the start; if the solver stops without a better solution, the incumbent is returned
with the solver's proven bound (status ``time_limit`` unless the bound closes the gap)."""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

from splitopt.errors import InfeasibleSolution, InstanceError, NoFeasibleSolution, SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import check_placeable, evaluate, work_bound
from splitopt.models.placement_milp import assignment_from_milp, build_milp, build_seconds
from splitopt.solvers.placement.bounds import combinatorial_bound
from splitopt.solvers.placement.incumbent import incumbent as _incumbent


def _solve_model(instance: PlacementInstance, build_kw: dict, solver: str, left: float | None, mip_gap,
                 tight: bool = False):
    """Build and solve the MILP: in this process, or for a large model with a limit in a child
    process stopped at ``left`` seconds (:mod:`.guard`); the answer as a namespace."""
    from types import SimpleNamespace

    from splitopt.solvers import exact
    from splitopt.solvers.placement import guard

    if guard.worth_it(build_seconds(instance), left):
        t0 = time.perf_counter()
        child = _milp_child(instance, build_kw, solver, left, mip_gap, tight)
        return _child_answer(child, child.collect(), time.perf_counter() - t0)
    t_build = time.perf_counter()
    model = build_milp(instance, **build_kw)
    if left is not None:  # the build counts against the limit
        left = max(left - (time.perf_counter() - t_build), 0.05 * left)
    res = exact.solve(model, solver, time_limit=left, mip_gap=mip_gap, options=guard.solver_options(solver, tight))
    return SimpleNamespace(status=res.status, bound=res.bound, termination=res.termination, seconds=res.seconds,
                           message=res.message, has_solution=res.has_solution, unit=model._unit, child=False,
                           assignment=assignment_from_milp(instance, model) if res.has_solution else None)


BESIDE_FROM = 8.0
"""Seconds left from which ``convex``/``none`` run the MILP in a child process with all of them while
the exact pair/triple re-placement (:func:`~splitopt.solvers.placement.lns.lns`) polishes the
incumbent in this process, on the second core, instead of one after the other (0.6 of the time,
then the rest). Measured 2026-11-24 (2-core EPYC, HiGHS 1.16): the MILP of the seeded BERT-like
300-node graph, non-contiguous, proves its optimum (0.281573 ms) after 66 s of HiGHS alone; one after
the other at 60 s left it 2.7 % open after 36 s of HiGHS."""

BESIDE_NODES = 100
"""Graphs of fewer nodes keep the in-process MILP (it starts at once; the child pays about 1.5 s)."""


def _beside(instance: PlacementInstance, left: float) -> bool:
    return left >= BESIDE_FROM and instance.n_nodes >= BESIDE_NODES


LNS_NICE = 19
"""Niceness of the re-placement's child beside the MILP: where more solvers than cores run (``auto``
on a convex instance runs the non-contiguous relaxation too), the MILPs get the cores first. 19
since 2026-11-25 (was 10): on the BERT-like 1,507-node training graph the relaxation's bound beside
the convex model reached 2.47072 ms at 60 s, against 2.46678 ms with 10 (one run each; the
non-contiguous run alone: 2.47598 ms)."""


def _milp_child(instance: PlacementInstance, build_kw: dict, solver: str, left: float, mip_gap, tight: bool = False):
    """The MILP started in a child process (:func:`~.guard.milp_job`) stopped ``left`` seconds from
    now; it pays its start (about 1.5 s of imports) and the build out of them."""
    from splitopt.solvers.placement import guard

    return guard.Child("splitopt.solvers.placement.guard:milp_job", instance, build_kw, solver, mip_gap, tight,
                       seconds=left)


def _child_answer(child, got, seconds: float):
    """A MILP child's answer (``got``) as the namespace :func:`solve` reads; when it sent none,
    ``time_limit`` if it was stopped at the limit, else ``error`` with its message."""
    from types import SimpleNamespace

    if got is not None:
        return SimpleNamespace(**got, child=True)
    failed = child.error != "stopped at the limit"
    return SimpleNamespace(status="error" if failed else "time_limit", bound=None,
                           termination=f"child process: {child.error}", seconds=seconds,
                           message=child.error if failed else None, has_solution=False, assignment=None,
                           unit=1.0, child=True)


def _solve_beside(instance: PlacementInstance, build_kw: dict, solver: str, left: float, mip_gap, start,
                  polish=None):
    """The MILP in a child process with ``left`` seconds (its start and build paid out of them) and
    :func:`~splitopt.solvers.placement.lns.lns` polishing ``start`` in another, niced
    (:data:`LNS_NICE`), until the MILP proves its answer or the time is up. Returns (the MILP's answer
    as a namespace, the polished placement or ``None``)."""
    from splitopt.solvers.placement import guard

    t0 = time.perf_counter()
    child = _milp_child(instance, build_kw, solver, left, mip_gap)
    if polish is None:  # (else started before, with the configuration LP, and running until the same end)
        polish = guard.Child("splitopt.solvers.placement.lns:lns", instance, start, nice=LNS_NICE, seconds=left)
    polished = None
    try:
        got = child.collect()
        if got is None or got.get("status") != "optimal":  # the polish counts: wait for it
            lr = polish.collect()
            polished = None if lr is None else lr.assignment
    finally:
        for c in (child, polish):
            if not c.done():
                c.kill()
    return _child_answer(child, got, time.perf_counter() - t0), polished


def _tighten(instance: PlacementInstance, res, build_kw: dict, solver: str, mip_gap, lb: float, left):
    """``res`` again, from a re-solve with HiGHS's tight feasibility tolerance
    (:data:`~.guard.HIGHS_OPTIONS`), where the solver called its answer optimal but its bound sits
    more than 1e-9 (relative) below the evaluator's value of its placement (and more than
    ``mip_gap`` was not asked for), with the time left; the cap is that value, so a tight optimum
    at the cap proves it. ``res`` unchanged otherwise."""
    if res.status != "optimal" or not res.has_solution or res.bound is None or (mip_gap or 0.0) > 1e-9:
        return res
    try:
        v = evaluate(instance, res.assignment)[0]
    except InfeasibleSolution:
        return res
    if v - max(res.bound * res.unit, lb) <= 1e-9 * v or (left is not None and left < 0.5):
        return res
    again = _solve_model(instance, {**build_kw, "incumbent": v}, solver, left, mip_gap, tight=True)
    if again.status != "optimal" or again.bound is None or again.bound * again.unit <= res.bound * res.unit:
        return res
    # its bound, and the better of the two placements (the tight model may stop at another one a hair
    # above: both models drop times below 1e-7 of the unit)
    a = res.assignment
    if again.has_solution:
        try:
            if evaluate(instance, again.assignment)[0] < v:
                a = again.assignment
        except InfeasibleSolution:
            pass
    return SimpleNamespace(**{**vars(res), "bound": again.bound * again.unit / res.unit, "assignment": a,
                              "termination": f"{res.termination}; tightened: {again.termination}"})


COLGEN_FROM = 5.0
"""Seconds left after the incumbent phase from which :func:`solve` starts with the configuration
LP of :mod:`.colgen` (where its DP pricing applies), before the MILP (the time limit until
2026-11-27, when the test whether it applies, 1 s on a 6,083-node graph, ran after an incumbent
phase that had used up an 8 s limit)."""

COLGEN_SHARE = 0.85
"""The share of the time left after the incumbent phase that the configuration LP may take; the
MILP (capped by its placement, bounded below by its proof) gets the rest."""


COLGEN_MAX_CLASSES = 600
"""The most colour classes on which :func:`solve` starts with the configuration LP where its DP
prices all class sets (non-contiguous, or a convex instance whose convex DP has too many codes):
that DP's fronts grow with the classes, and on the seeded BERT-like 2,078-node graph (969 classes, 4
tensors open) 50 s of it gave 969 columns and a bound (7.063 ms) below the MILP's (7.136 ms);
measured 2026-11-25 (then 400; 600 since the same day: the BERT-like 1,507-node training graph, 479
classes, is proven within 0.0001 % by the LP alone in 33 s where the MILP left 4.5 % open). The
convex DP (convex sets only) has no such limit: on that 2,078-node graph it proves the chain
optimum 7.244242 ms optimal for the convex problem in 18 s, 12 s of them the first placement's
search (the MILP and the non-contiguous relaxation: 1.5 % open at 60 s; measured 2026-11-25)."""


ORDER_S, ORDER_SHARE = 2e-6, 0.1
""":func:`_colgen_applies` builds the DP pricer only where ``ORDER_S`` x classes^2 (its orders:
about 17 s each on 4,994 classes, 2026-11-29) is at most ``ORDER_SHARE`` of the time left."""


def _colgen_applies(instance: PlacementInstance, value: float, seconds: float | None = None) -> bool:
    """Whether the configuration LP of :mod:`.colgen` is priced by its DP here (accelerators,
    few tensors open along a topological order, memory not binding). For ``convex`` contiguity its
    bound is that of the non-contiguous problem (a relaxation) and its placements count only where
    the evaluator finds them convex; ``chain`` has the exact ideal branch and bound."""
    from splitopt.solvers.placement.colgen import _PathDP, data_of

    if instance.contiguity == "chain" or instance.n_accelerators == 0 or not math.isfinite(value):
        return False
    d = data_of(instance)
    if d.convex_tens is None and d.G > COLGEN_MAX_CLASSES:
        return False  # (the answer below; the orders its build tries took 52 s on 4,994 classes)
    if seconds is not None and ORDER_S * d.G ** 2 > ORDER_SHARE * seconds:
        return False  # its build would take the time (a 10,026-node graph, 10 s: the call took 28 s)
    dp = _PathDP.build(d, value, relax_memory=True)
    return dp is not None and (dp.convex or d.G <= COLGEN_MAX_CLASSES)


def _close_chain_bracket(chain: PlacementInstance, a, bound, seconds: float):
    """A better chain placement than ``a`` from the chain MILP (``seconds``, from ``a`` and the ideal
    search's ``bound``), or ``None``; only where its model's estimated build fits in ``seconds``. Where
    backward-only classes left the ideal search a bracket (:mod:`.orphans`) it closes it quickly:
    the BERT-like 616-node training graph with weight updates, 4.874964 -> 4.874462 ms (the chain
    optimum) in about 2 s; from it the convex MILP proves the convex optimum in 14 s, where it had
    stayed 0.01 % open at 60 s (2026-11-25)."""
    if build_seconds(chain) > seconds:
        return None
    try:
        m = solve(chain, time_limit=seconds, start=a, lower_bound=bound)
    except (InstanceError, InfeasibleSolution, SolverFailed):
        return None
    return m.assignment if evaluate(chain, m.assignment)[0] < evaluate(chain, a)[0] else None


def solve(instance: PlacementInstance, solver: str = "highs", time_limit: float | None = None,
          mip_gap: float | None = None, symmetry: bool | None = None, use_incumbent: bool = True,
          start=None, lower_bound: float | None = None, polish: bool = True) -> AlgoResult:
    """The device MILP (:func:`~splitopt.models.placement_milp.build_milp`) through ``solver``,
    capped by the incumbent of :func:`_incumbent`, certified by :func:`combinatorial_bound`.

    With a time limit of at least :data:`COLGEN_FROM` (5 s), ``convex``/``none`` contiguity and
    where the DP pricing of :mod:`.colgen` applies, the configuration LP
    (:func:`~splitopt.solvers.placement.colgen.relaxation`: a bound that sees
    communication and, for ``convex``, the convexity of every device, with price-and-branch
    placements) runs first, with up to :data:`COLGEN_SHARE` of the time; if it closes the gap
    (``mip_gap``; without one, only an exact proof counts, which the LP alone never gives) the
    call ends there, else its bound and placement start the MILP.
    Measured 2026-11-24 (2-core EPYC, HiGHS 1.16), 60 s limit, ``mip_gap=1e-3``: ResNet-50 convex
    proven in about 2 s (33.774666 ms: the peer's DP value, so its chain optimum is the convex
    optimum), non-contiguous within 0.1 % in 26-30 s (the MILP's bound stalls at 33.10 ms).
    Measured 2026-11-25 (60 s, ``auto``): where the LP's pricing DP applies since that day (layer
    graphs of parallel branches), three branches of 31 layers close from 1.5 % to 0.08 %
    (non-contiguous) and from 2.0 % to 0.0001 % (convex); their training graph from 1.24 % to 0.32 %.
    Later that day the DP pricing reached the BERT-like training graphs (states counted, not open
    tensors; memory relaxed in the pricing; weights and weight updates in convex sets): the
    1,507-node one from 4.5 % to 0.0001 % (non-contiguous) and 4.9 % to 0.0001 % (convex), the
    616-node one with weight updates from 4.9 % to 0.0001 % (convex).
    The solver then gets all the time left in a child process while the exact pair/triple
    re-placement of :func:`~splitopt.solvers.placement.lns.lns` polishes the incumbent in another
    (started beside the configuration LP already, where that runs: the LP's own placements are
    poorer)
    (:data:`BESIDE_FROM`, :data:`BESIDE_NODES`; small graphs and short limits: the solver gets 0.6
    of the time in this process and the re-placement the rest, after it); the re-placement's
    placement keeps the proven bound (ResNet-50 non-contiguous without the LP: gap at 60 s 0.91 % ->
    0.45 %). Where the solver calls its answer optimal but its bound sits more than 1e-9 below the
    evaluator's value (HiGHS's feasibility tolerance), :func:`_tighten` re-solves with a tight one.
    Where the configuration LP ran and the MILP and the re-placement leave time without a proof,
    :func:`_certify` gives it to the LP's branch and price once more, from their best placement and
    bound (since 2026-11-25).

    ``symmetry``: our symmetry-breaking rows (``True``), none (``False``), or ``None`` (default):
    ours for ``chain`` and ``convex``, none for ``none`` contiguity, where HiGHS's own symmetry
    detection (orbital fixing on the permutations of identical devices, which our rows hide from
    it) does better: ResNet-50 non-contiguous gap at 60 s 0.77 % without our rows against 0.86 %
    with them (0.72 % after 900 s with them), BERT-24 training proven optimal in 10.6 s against
    14.7 s; with ``convex`` our rows are faster on BERT-24 (4.0 s against 6.4 s). Measured
    2026-11-23, 2-core EPYC, HiGHS 1.16.

    ``start`` (a placement) and ``lower_bound`` (a proven bound) are what another method found
    before (:mod:`.auto` hands them on): the better incumbent caps the model, the larger bound
    certifies it.

    ``polish=False``: no re-placement, the MILP gets all the time (:mod:`.auto` runs the
    non-contiguous relaxation of a convex instance so, for its bound)."""

    if symmetry is None:
        symmetry = instance.contiguity != "none"
    # no placement for a reason seen without a search: said at once (HiGHS called such a model
    # "numerical" where the memory is a hair below a class's bytes, found by fuzzing 2026-11-29)
    check_placeable(instance)
    t0 = time.perf_counter()
    lb, lbs = combinatorial_bound(instance, deadline=None if time_limit is None else t0 + 0.1 * time_limit)
    if lower_bound is not None and math.isfinite(lower_bound) and lower_bound > lb:
        lb = lbs["handed"] = float(lower_bound)
    notes: dict = {}
    inc, inc_val = _incumbent(instance, time_limit, notes, chain_dp=polish) if use_incumbent else (None, math.inf)
    info: dict = {"bounds": lbs}
    inc_src = "incumbent"
    if "chain_bracket" in notes:
        a = _close_chain_bracket(*notes["chain_bracket"])
        if a is not None and (v := evaluate(instance, a)[0]) < inc_val:
            inc, inc_val, inc_src = a, v, "chain-milp"
    if start is not None:
        sv = evaluate(instance, start)[0]
        if sv < inc_val:
            inc, inc_val, inc_src = list(start), sv, "start"

    def proven():
        # the incumbent meets a proven lower bound (within mip_gap): optimal without a solver call
        info.update(solution_from=inc_src, proof=max(lbs, key=lbs.get))
        return AlgoResult(inc, status="optimal", bound=min(lb, inc_val), info=info)

    if inc is not None and inc_val <= lb * (1 + 1e-12):
        return proven()
    polish = polish and instance.contiguity != "chain" and inc is not None
    early = None  # the re-placement, started beside the configuration LP
    if polish and time_limit is not None and time_limit - (time.perf_counter() - t0) >= COLGEN_FROM \
            and _colgen_applies(instance, inc_val, time_limit - (time.perf_counter() - t0)):
        # the configuration LP first: a bound that sees communication (and, for convex, the
        # convexity of every device) with price-and-branch placements; it often closes the gap
        # alone (ResNet-50 convex in 1-2 s, non-contiguous in 26-30 s, where the MILP's bound
        # stalls), else its bound and placement start the MILP
        from splitopt.solvers.placement import colgen, guard

        spare = time_limit - (time.perf_counter() - t0)
        if _beside(instance, spare):
            # the exact re-placement polishes the incumbent on the second core meanwhile, until the
            # end (the LP's own placements are poorer: three branches of 50 layers, non-contiguous,
            # 33.29 ms where the re-placement beside the MILP had reached 32.93 ms)
            early = guard.Child("splitopt.solvers.placement.lns:lns", instance, inc, nice=LNS_NICE, seconds=spare,
                                publish=True)
        rest = COLGEN_SHARE * spare
        # no mip_gap asks for an exact answer: the LP aims 1e-6 below the incumbent (it never
        # proves an exact optimum), the branch and price then at the value that certifies it
        # (colgen.EXACT below it); else its bound and placement start the MILP
        r = colgen.relaxation(instance, time_limit=rest, target_gap=mip_gap or 0.0, incumbent=inc,
                              polled=None if early is None else early.latest, lower_bound=lb)
        info["colgen"] = r.info["tried"]
        cv = evaluate(instance, r.assignment)[0]
        if cv < inc_val:
            inc, inc_val, inc_src = r.assignment, cv, r.info["solution_from"]
        if r.bound is not None and r.bound > lb:
            lb = lbs["colgen"] = r.bound
        if _meets(inc_val, lb, mip_gap):
            if early is not None:
                early.kill()
            return proven()
    try:
        res = _milp_phase(instance, solver, time_limit, mip_gap, symmetry, t0, polish, early, inc, inc_val,
                          inc_src, lb, lbs, info, proven)
    finally:
        if early is not None and not early.done():
            early.kill()
    if "colgen" in info and res.status in ("time_limit", "feasible"):
        res = _certify(instance, res, time_limit - (time.perf_counter() - t0), mip_gap, info)
    return res


def _meets(value: float, bound: float, mip_gap) -> bool:
    """Whether ``bound`` certifies ``value`` within ``mip_gap`` (at least the package's 1e-9 for
    ``optimal``)."""
    return value - bound <= max(mip_gap or 0.0, 1e-9) * value


def _certify(instance: PlacementInstance, res: AlgoResult, rest: float, mip_gap, info: dict) -> AlgoResult:
    """The time the MILP and the re-placement left (a small MILP in this process gets 0.6 of it,
    and the re-placement stops where no pair or triple improves) goes to the configuration LP's
    branch and price once more, from the best placement and bound (:func:`~.colgen.relaxation`:
    the LP's threshold first, then within :data:`~.colgen.BRANCH_GAP` of the placement the value
    that certifies it). Measured
    2026-11-25, a 56-node layer graph (non-contiguous, 30 s): the MILP found the optimum, its bound
    stayed 7.5e-5 below, and the call ended at 19.5 s, ``time_limit``."""
    from splitopt.solvers.placement import colgen

    if rest < 1.0 or res.bound is None:
        return res
    value = evaluate(instance, res.assignment)[0]
    r = colgen.relaxation(instance, time_limit=rest, target_gap=mip_gap or 0.0, incumbent=res.assignment,
                          lower_bound=res.bound)
    info["certify"] = r.info["tried"]
    a, v, bound = res.assignment, value, res.bound
    rv = evaluate(instance, r.assignment)[0]
    if rv < v:
        a, v = r.assignment, rv
        info["solution_from"] = r.info["solution_from"]
    bound = min(max(bound, r.bound if r.bound is not None else bound), v)
    status = "optimal" if _meets(v, bound, mip_gap) else res.status
    if status == "optimal":
        info["proof"] = "colgen"
    return AlgoResult(a, status=status, bound=bound, info=info)


def _better(instance, a, v, other):
    """``(placement, value, True)`` for ``other`` where the evaluator scores it below ``v``, else
    ``(a, v, False)``."""
    ov = evaluate(instance, other)[0]
    return (list(other), ov, True) if ov < v else (a, v, False)


def _replaced(instance, a, v, seconds: float):
    """:func:`_better` for the exact pair/triple re-placement (:func:`~.lns.lns`) of ``a`` in this
    process, within ``seconds``."""
    from splitopt.solvers.placement.lns import lns

    return _better(instance, a, v, lns(instance, a, time_limit=seconds).assignment)


def _milp_phase(instance, solver, time_limit, mip_gap, symmetry, t0, polish, early, inc, inc_val, inc_src, lb, lbs,
                info, proven):
    """The MILP part of :func:`solve`, from its incumbent ``inc`` and bound ``lb``; ``early``: the
    re-placement child started beside the configuration LP, or ``None``."""
    if time_limit is not None and inc is not None:
        spare = time_limit - (time.perf_counter() - t0)
        spare *= 0.6 if polish and not _beside(instance, spare) else 1.0
        if spare < build_seconds(instance):
            # the model would not even reach the solver within the limit (Pyomo builds and hands
            # over about 3-6 ms of work per node): the incumbent with the proven bound
            info.update(solution_from=inc_src, milp="skipped: the limit is shorter than the model's build")
            if inc_val <= lb * (1 + 1e-12):
                return proven()
            got = None if early is None else early.collect()
            better = False
            if got is not None:
                inc, inc_val, better = _better(instance, inc, inc_val, got.assignment)
            rest = time_limit - (time.perf_counter() - t0)
            if polish and early is None and rest - 0.15 > 0.2:
                # the time the MILP cannot use goes to the re-placement, in this process (it
                # keeps its limit, its sub-MILPs' builds paid out of it, since 2026-11-25: it got
                # 0.8 of the rest less 0.3 s before). The BERT-like 4,000-node training graph,
                # non-contiguous, 3 s: 0.661 ms (98.5 % open) -> 0.19 ms
                inc, inc_val, better = _replaced(instance, inc, inc_val, rest - 0.15)
            if better:
                info["solution_from"] = "lns"
            return AlgoResult(inc, status="time_limit", bound=min(lb, inc_val), info=info)
    # one time limit for the whole call: the solver gets what the incumbent phase (at most a
    # fifth) and the configuration LP left; for convex/none either all of it in a child process
    # while the exact pair/triple re-placement (lns) polishes the incumbent beside it (rule
    # "beside", see :data:`BESIDE_FROM`), or 0.6 of it, keeping the rest for the lns after it
    left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 0.05 * time_limit)
    build_kw = dict(symmetry=symmetry, incumbent=inc_val if inc is not None else None, lower_bound=lb)
    beside = polish and left is not None and _beside(instance, left)
    if beside:
        res, polished = _solve_beside(instance, build_kw, solver, left, mip_gap, inc, polish=early)
    else:
        polished = None
        res = _solve_model(instance, build_kw, solver, None if left is None else left * (0.6 if polish else 1.0),
                           mip_gap)
        if early is not None and res.status != "optimal":  # the re-placement beside the LP, to its end
            got = early.collect()
            polished = None if got is None else got.assignment
    res = _tighten(instance, res, build_kw, solver, mip_gap, lb,
                   None if time_limit is None else time_limit - (time.perf_counter() - t0))
    unit = res.unit
    bound = None if res.bound is None else res.bound * unit
    info.update({"solver": solver, "termination": res.termination, "solver_seconds": res.seconds,
                 "incumbent": inc_val if inc is not None else None, "unit": unit, "child": res.child,
                 "beside": beside})
    if res.message:
        info["message"] = res.message
    cand = []
    if res.has_solution:
        a = res.assignment
        try:
            cand.append((evaluate(instance, a)[0], a, "milp"))
        except InfeasibleSolution as exc:
            # the model's placement breaks memory: sizes below 1e-7 of the capacity are dropped from
            # its rows (a relaxation, :func:`~splitopt.models.placement_milp.build_milp`), so 1e9 + 5
            # bytes on a 1e9 accelerator passes there; its optimum is then no placement, its bound
            # still a bound of the relaxation but not trusted here: the other placements and the
            # combinatorial bound answer (it raised before: no answer for a feasible instance)
            info["milp_refused"] = str(exc)
            if res.status == "optimal":  # ("numerical" below: the combinatorial bound answers)
                res = SimpleNamespace(**{**vars(res), "status": "numerical"})
    if inc is not None:
        cand.append((inc_val, inc, inc_src))
    if polished is not None:
        cand.append((evaluate(instance, polished)[0], polished, "lns"))
    if not cand:
        if res.status == "infeasible":
            raise NoFeasibleSolution("the MILP is infeasible: no placement satisfies memory, support and contiguity")
        raise SolverFailed(f"solver: {solver} returned no solution of the device MILP (status {res.status})"
                           + (f": {res.message}" if res.message else ""), status=res.status)
    val, a, src = min(cand, key=lambda c: c[0])
    rest = None if time_limit is None else time_limit - (time.perf_counter() - t0)
    if polish and not beside and res.status in ("time_limit", "feasible") and rest is not None and rest > 0 \
            and val > lb * (1 + 1e-12):
        # the exact pair/triple re-placement (lns) from the best placement: ResNet-50
        # non-contiguous 33.36 ms -> 33.26 ms; HiGHS capped at 33.36 ms found nothing better in 900 s
        a, val, better = _replaced(instance, a, val, rest)
        if better:
            src = "lns"
    info["solution_from"] = src
    status = res.status
    if status == "infeasible" and inc is not None:
        # nothing strictly below the incumbent's cap: the incumbent is optimal
        status, bound = "optimal", val
    # the combinatorial bound holds whatever the solver did: it certifies (or tightens) the answer
    if val <= lb * (1 + 1e-12):
        status, bound = "optimal", lb
        info["proof"] = max(lbs, key=lbs.get)
    elif status in ("error", "unknown"):
        # the solver failed (its message is in info): the best placement, scored by the evaluator,
        # with the proven combinatorial bound
        status, bound = "feasible", lb
    elif status == "numerical":
        # HiGHS claimed an optimum we do not certify: keep its solution, report no optimality
        status = "feasible"
        bound = lb
    else:
        bound = lb if bound is None else max(bound, lb)
    bound = min(bound, val)
    if src != "milp" and status != "optimal" and val - bound <= (mip_gap or 0.0) * val + 1e-12 * val:
        status = "optimal"  # the polished placement meets the proven bound (within mip_gap)
    return AlgoResult(a, status=status, bound=bound, info=info)


def peer_ip(instance: PlacementInstance, solver: str = "highs", time_limit: float | None = None,
            mip_gap: float | None = None) -> AlgoResult:
    """The peer's integer program on our solver: a baseline that measures what the strengthening of
    :func:`solve` buys on the same inputs and the same solver.

    The model of the peer's public ``throughput-ip/ip.py`` (msr-fiddle/dnn-partitioning, read for
    the model, not copied): one binary per node and device (our class variables are the peer's
    ``x_u = x_v`` colour rows, which presolve merges), the in/out communication rows per edge and
    accelerator, the convex rows on every device for ``contiguity="convex"``, ``T >=`` every load.
    Nothing of ours: no symmetry breaking, no work/pigeonhole/isolation bound, no incumbent. The
    peer stops Gurobi at a 1 % gap or 20 minutes; pass ``mip_gap``/``time_limit`` to match. The
    ``chain`` model is the peer's DP, absent from its IP: declined. Status ``optimal`` only when
    HiGHS proves it and the coefficient range is one HiGHS certifies."""
    from splitopt.solvers import exact

    if instance.contiguity == "chain":
        raise InstanceError("contiguity", "is 'chain', the peer's DP model, which its IP does not have: "
                                          "use ideals, or contiguity 'convex' or 'none'")
    model = build_milp(instance, symmetry=False, valid_inequalities=False)
    res = exact.solve(model, solver, time_limit=time_limit, mip_gap=mip_gap)
    info = {"solver": solver, "termination": res.termination, "solver_seconds": res.seconds, "unit": model._unit}
    if res.message:
        info["message"] = res.message
    if not res.has_solution:
        if res.status == "infeasible":
            raise NoFeasibleSolution("the peer's IP is infeasible: no placement satisfies memory, support and "
                                     "contiguity")
        raise SolverFailed(f"solver: {solver} found no solution of the peer's IP (status {res.status})"
                           + (f": {res.message}" if res.message else ""), status=res.status)
    a = assignment_from_milp(instance, model)
    val = evaluate(instance, a)[0]
    status = "feasible" if res.status == "numerical" else res.status
    bound = None if res.bound is None or status == "feasible" else min(res.bound * model._unit, val)
    return AlgoResult(a, status=status, bound=bound, info=info)


def relaxation(instance: PlacementInstance, solver: str = "highs", time_limit: float | None = None) -> AlgoResult:
    """The LP relaxation's value as a lower bound (``bound``); the assignment is the linearised DP's."""
    from splitopt.solvers import exact
    from splitopt.solvers.placement.linearised import linearised_dp

    model = build_milp(instance, symmetry=True)
    res = exact.solve(model, solver, time_limit=time_limit, relax=True)
    if res.status == "infeasible":  # the LP relaxation has no solution: neither has the MILP
        raise NoFeasibleSolution("the LP relaxation is infeasible: no placement satisfies memory, support and "
                                 "contiguity")
    if not res.has_solution:
        raise SolverFailed(f"solver: {solver} returned no solution of the device LP (status {res.status})",
                           status=res.status)
    bound = max(res.bound * model._unit, 0.0) if res.bound is not None else work_bound(instance)
    return AlgoResult(linearised_dp(instance).assignment, status="ok", bound=bound, info={"lp": True})


__all__ = ["solve", "peer_ip", "relaxation", "combinatorial_bound"]
