"""A lower bound for the device model that sees communication: the configuration LP, solved by
column generation, with price-and-branch placements (issue 11; ours, not in the peer's paper).

Why: the compact MILP's LP relaxation (and the work, pigeonhole and isolation bounds) lets every
class sit fractionally on all accelerators at once, and a blend of identical fractions crosses no
tensor: on ResNet-50 non-contiguous the LP bound is the work bound (33.02 ms) while every placement
pays 1.2-1.6 ms of communication over six accelerators, and HiGHS's branching lifts the bound only
to 33.06-33.13 ms in 60-900 s.

The configuration LP for a target ``V``: a column is a set ``S`` of colour classes that one
accelerator can hold, ``load(S) = compute(S) + (tensors crossing the boundary of S) <= V`` and
memory within the limit (supported classes only); each class is covered by columns or by the CPU
cores (fractions ``y_g``, classes with CPU time above ``V`` excluded, ``sum cpu_g y_g <= l V``):

    min sum_S lambda_S   s.t.  sum_{S ∋ g} lambda_S + y_g >= 1  (every class g),  lambda, y >= 0.

Every placement of value ``<= V`` (max-load, hence also fwd+bwd, which is never below it; any
contiguity, which only removes placements) gives a solution with ``sum lambda <= k``. So if the
LP's optimum exceeds ``k``, no placement reaches ``V``: ``V`` is a lower bound. The proof is a
Lagrangian (Farley) bound: for covering duals ``pi >= 0`` and ``u >= max_S pi(S)`` (an exact
pricing, or the pricing MILP's *dual bound*), ``L = sum(pi/u) - max{(pi/u) y : y in Y}`` (the CPU
part: a fractional knapsack, solved exactly) is at most the LP optimum; ``L > k`` proves ``V``.

Convex contiguity (the peer's IP model; ours): where convexity of class sets is convexity of their
nodes (:meth:`~.pricing._Data._class_level_convexity`: every class's entries reach its exits inside
it; inference graphs of single-node classes; training graphs, whose classes pair a forward node
with its backward nodes: convexity is a property of a device's forward nodes, the backward tensors
then carry cost only; classes of an operator with its weights, a forward source that feeds only
its own class; since 2026-11-25, later, any class whose entries reach its exits, as the peer's
BERT operator graphs group an operator with the nodes it alone feeds: their convex rows went from
4.2 % (BERT-L6) and 24.6 % (BERT-L12) open at 60 s to proven in 8-9 s, the chain optimum being the
convex one), the columns are *convex* sets (no forward path leaves ``S`` and re-enters it) and
the CPU cores are columns too: convex sets ``C`` of CPU time ``<= V`` (the evaluator asks every
device, CPU cores included, to be convex), at most ``l`` of them, instead of the fractions ``y``.
A convex placement of value ``<= V`` gives ``k`` accelerator and ``l`` CPU columns, so with
``rho >= max_C pi(C)`` the CPU part of ``L`` is at most ``min(knapsack, l rho / u)``. Elsewhere the
pricing ignores convexity (also where the convex DP has too many states): the LP is then a
relaxation of the convex problem, still a bound.

Pricing (``max pi(S)`` over the columns): :class:`_PathDP`, an exact dynamic program along an
order of the classes (Pareto fronts of (load, profit) per state of the open tensors, at most 729
states a step; ResNet-50 keeps at most 3 tensors open; the order with the fewest states of a few,
topological ones for convex sets; tensors of the same member classes merged, since 2026-11-25:
layer graphs of three parallel branches keep 4 open, their training graphs 6, the BERT-like
training graphs 8 with 16-26 states; since 2026-11-28 also greedy orders that add the class opening
the fewest tensors, :func:`~.pathdp._few_open_order`: the peer's BERT-L6 training graph keeps 12-13
open instead of 58, and its non-contiguous row went from 8.3 % to 1.5 % open at 60 s), its steps merged by a compiled kernel (:func:`_dp_step`, numba:
40-150 ms a pricing on ResNet-50, 40 columns each, against 0.3-0.6 s for the numpy version and 1-4
s for a MILP); else a MILP (:class:`_Pricer`, knapsack rows with the
in/out tensor rows of :func:`~splitopt.models.placement_milp.build_milp` for one device). The DP has no
memory dimension: where memory could bind it prices with the memory row in the objective (a
Lagrangian multiplier ``mu``, chosen by Kelley's cutting planes over the sets priced: every
``mu + max (pi - mu m)(S)`` bounds the price of the sets that fit), only sets that fit become
columns, and where the multiplier leaves a duality gap with no new column the master's duals are
priced once with memory exact: by the DP over fronts of load, memory and profit
(:meth:`~.configlp._ColGen._memory_dp_price`, since 2026-11-29: 15-30 ms a call on the seeded
BERT-like 300-node graph), or where its fronts grow past :data:`~.memoryprice.MEMORY_DP_POINTS` by the
pricing MILP, which has the memory row (:meth:`~.configlp._ColGen._milp_price`: 3.3-5.4 s a call
there) (:meth:`~.configlp._ColGen._memory_price`): so the LP is the configuration LP *with* memory
(since 2026-11-27). From 2026-11-25 the DP priced the sets whatever their memory (the configuration LP
without memory, a weaker relaxation: the BERT-like 1,507-node training graph went from 4.5 % to
0.0001 % open with it), before that the MILP priced there. The memory row matters where one class
fills most of an accelerator: on the seeded BERT-like 300-node graph (an embedding of exactly one
accelerator's memory, four accelerators), non-contiguous, the memory-free LP's threshold is
0.27636 ms against placements of 0.28157 ms (1.85 % open at 60 s), the LP with memory proves
0.28129 ms (0.10 %) in 42 s of :func:`relaxation` (measured 2026-11-27). Where exact pricings handle many front points (:data:`HEURISTIC_FROM`), a thinned DP
prices first (:meth:`_ColGen._price_at`), the exact one only to prove or where it finds nothing. For
convex sets its codes also carry whether a producer is reachable from ``S`` (then no consumer may
join); CPU sets are priced by the same DP with CPU times and no communication. Duals are smoothed
(Wentges) from a centre that starts at ``pi_g = acc_g / V`` (whose bound is the work bound); the
master is one HiGHS LP to which columns are appended (warm-started simplex).

Lagrangian completion (since 2026-11-29, :meth:`~.pathdp._PathDP._lagrange`): relaxing the load
limit with a multiplier ``lam >= 0`` turns the pricing into a DP over the codes alone (one value per
code, no fronts), run backwards over the same plan: ``u = min_lam lam V + max_S (pi(S) - lam
load(S))`` bounds the pricing (its line search: a few passes of milliseconds), and per code the
value still to gain bounds every point's completion, communication included, where the fractional
knapsack of the classes to come ignored it. A pricing whose ``u`` is at most its floor is answered
without the DP; the others keep far fewer points (the peer's BERT-L12 training graph, non-contiguous:
one exact pricing of 485 million points, 45 s, now 8 million, 0.9 s), and a heuristic pricing's
Lagrangian at ``u`` is a valid bound (within 0.3 % of the exact one measured). With it the convex
DP takes up to 4,096 codes (:attr:`~.pathdp._PathDP.MAX_CODES_CONVEX`, was 729; beyond, the
non-contiguous relaxation prices): the peer's BERT training operator graphs (2,016-4,032 codes)
get the convex LP, whose threshold is their chain optimum. Measured with ``auto`` at 60 s
(2-core EPYC, 2026-11-29): BERT-L12 training convex 28 % open -> optimal in 39 s, BERT-L6 training
convex 2.2 % -> optimal in 31 s, non-contiguous 1.5 % -> optimal in 30 s (1e-6 in another run),
BERT-L12 training non-contiguous bound 313 -> 373 ms (the LP's threshold; the best placement is 418
ms), the Inception-v3 training layer graph convex 1.37 % -> 0.11 %.

Placements (price and branch, heuristic): where the LP reaches ``k`` at ``V``, a dive
(:meth:`_ColGen.dive`: place the column of the largest LP value, re-solve the rest, a
set-partitioning MILP over the columns at every level (at most 2 s each), back up on a
proven-infeasible rest) and, without a dive placement, a set-partitioning MILP over the columns
and the incumbent's own sets (:func:`_restricted_mip`) look for placements of value ``<= V``;
every placement is scored by the evaluator.

:func:`relaxation` (registry ``colgen``; :func:`~splitopt.solvers.placement.milp.solve`
runs it before the MILP from a 5 s limit on): a search on ``V`` that first proves a value 0.6 %
below the incumbent, then climbs from the largest proven value in steps of ``0.8 max(gap, 0.1 %)``
(near the LP's threshold the LP is tight: proofs raise the bound there and dives find placements),
aiming at ``(1 - target_gap)`` times the incumbent.

Branch and price (since 2026-11-25, :mod:`.branchprice`): where the DP prices, the LP alone brackets
its own threshold (with a dive, non-contiguous only, at a value just above the largest proven one
where the LP is nearly tight, :data:`DIVE_SLACK`, since 2026-11-27), and then values between the
largest proven one and the best placement are decided by branch and price, halfway each time (below
a value left undecided after one): a proof raises the bound past the LP's, a leaf's placement lowers
the incumbent, and the re-placement that :mod:`.milp` runs beside publishes its placements to the
search (``polled``). Measured 2026-11-25 (60 s, ``auto``): three branches of 31 layers, training,
convex 0.66 % -> 0.0001 % (the chain optimum 67.586 ms was the incumbent; 67.283 ms found), none
0.32 % -> 0.16-0.2 %; three branches of 50 layers convex 0.39 % -> 0.0001 %. Where a node takes a
second (600 classes) or the LP's leaves do not fit in memory (Inception-like, non-contiguous) it
decides nothing in the time, and the bound is the LP's.

Certifying the incumbent (since 2026-11-25, later): the LP reaches ``k`` just below the optimum
(about 1e-6 below on the workloads measured), so its best is a gap of 1e-6, not the package's
``optimal`` (1e-9). With ``target_gap=0`` (what :mod:`.milp` asks without a ``mip_gap``), once
the bound is within :data:`JUMP` (1e-4) of the incumbent ``U``, the branch and price decides
``(1 - EXACT) U`` (``EXACT`` = 5e-10) at once: proven, ``U`` is optimal within 1e-9. For that the
DP admits sets of load up to ``V (1 + LOAD_TOL)`` with ``LOAD_TOL`` = 1e-12 (was 1e-9, which
admitted the optimum's own sets at that value) and a proof priced by the DP gives ``V`` itself as
the bound (was ``V (1 - 1e-9)``: the DP's pricing is exact, the tolerance covers its rounding).
Measured 2026-11-25 (60 s, ``auto``, one run each): ResNet-50 convex 59.4 s -> 1.0 s, three
branches of 31 layers none 55.8 s -> 33.7 s, their training graph convex 13.2 s, three branches of
50 layers convex 38.0 s, the 1,507-node BERT-like training graph convex 6.7 s and none 22.0 s,
the 616-node one with weight updates convex 23.9 s: each was ``time_limit`` at 1e-6 before, each
is ``optimal`` now.

Measured (2026-11-24, 2-core EPYC, HiGHS 1.16), ResNet-50 (177 classes): non-contiguous, one LP
value at 33.19 ms from scratch 36 s before the compiled kernel and vectorised loads, 11-13 s
after; the LP is at ``k`` at about 33.217 ms; ``milp`` at a 60 s limit with ``mip_gap=1e-3``
proves 33.2144 ms and finds 33.2325 ms by a dive: 0.055 % in 28-30 s (the MILP's own bound is
33.10 ms at 60 s). Convex: 33.7746 ms proven in about 1 s, and the LP reaches ``k`` at 33.77467
ms, just above the peer's DP value 33.774666 ms: the chain optimum is the convex optimum.
Found and fixed on the way: the master's duals on the void rows of classes a dive placed inflated
the Lagrangian bound of the rest (their rows now get zero duals); a restricted MILP at the first
level of a dive took 19 s to prove that no partition exists (now at most 2 s a level).
"""


from __future__ import annotations

import math
import time

import numpy as np

from splitopt.errors import InfeasibleSolution, InstanceError, NoFeasibleSolution
from splitopt.families import AlgoResult
from splitopt.instances.placement import PlacementInstance
from splitopt.solvers.placement.branchprice import BranchPrice
from splitopt.solvers.placement.columns import _placement, _sets_of
from splitopt.solvers.placement.configlp import HEURISTIC_FROM, KEEP, _ColGen, prove_above  # noqa: F401
from splitopt.solvers.placement.master import _Master, _restricted_mip  # noqa: F401
from splitopt.solvers.placement.pathdp import _PathDP  # noqa: F401
from splitopt.solvers.placement.pricing import _Data, _fractional_knapsack, _max_memory, _Pricer, data_of  # noqa: F401

BRANCH_SHARE = 0.5
"""The share of the time left that the branch and price (:mod:`.branchprice`) may take to decide
one value where the LP reaches ``k``."""

BRANCH_GAP = 0.012
"""The branch and price starts only where the LP's bound is within this share of the best placement
(the seeded BERT-like 300-node graph, non-contiguous, LP 2.2 % below the optimum: branch and price
decided nothing in 45 s; the layer graphs it closes start 0.3-0.95 % apart, 2026-11-25)."""

EXACT = 5e-10
"""How far below the incumbent ``U`` the branch and price decides the value that certifies it:
proven, the bound ``(1 - EXACT) U`` meets the package's 1e-9 (relative) for ``optimal``; the DP
admits sets up to :data:`~.pathdp.LOAD_TOL` above a value, far less than this."""

JUMP = 1e-4
"""Within this share of the incumbent, the branch and price decides the certifying value
(:data:`EXACT` below it) at once, not halfway (measured 2026-11-25: at 1e-7 below the incumbent,
decisions took 1-17 nodes, 0.3-3.8 s, on three branches of 31 and 50 layers, their training graph
and ResNet-50; halving from 1e-6 down to 5e-10 would take eleven)."""

BRANCH_NODES = 2000
"""Without a time limit, the most nodes the branch and price may take to decide one value."""


POLL_SHARE, POLL_SLEEP = 0.3, 0.25
"""Where the LP's threshold is bracketed but the best placement is more than :data:`BRANCH_GAP`
above it, and a re-placement runs beside (``polled``), :func:`relaxation` waits for its placements
up to this share of the time left, polling every ``POLL_SLEEP`` seconds, before it gives up the
branch and price (since 2026-11-29: with the Lagrangian completion the LP of the peer's BERT-L6
inference graph, non-contiguous, brackets its threshold in 6 s instead of 20 s, before the
re-placement has found the optimum 28.3322 ms (from 29.38 ms); without the wait the branch and price
never ran and the call ended 0.006 % open where it had been proven optimal in 36 s)."""

GALLOP = 2.0
"""The factor by which the climb above the largest proven value grows with each value proven in a
row (:func:`relaxation`; 1: a fixed climb, as before 2026-11-25). Tried and taken out on
2026-11-28: capping a galloped value at twice the last proof's seconds (the peer's Inception-v3
training layer graph, convex: 1.37 -> 0.63 % open at 60 s) cost the seeded BERT-like 300-node
graph, non-contiguous, its proof (0.0001 -> 1.85 %, 1.24 % with the plain climb after a cap): its
memory-free values prove in 0.15 s, the LP with memory near the optimum needs about 20 s."""


WIDE = 0.05
"""Where the largest proven value and the best placement (or the smallest refuted value) are more
than this share apart, the next value is halfway between them (:func:`relaxation`). Proofs well
below the LP's threshold take few pricings, refutations above it the LP's convergence: on the
peer's BERT-L12 inference graph (non-contiguous), from the chain optimum 147.48 ms (the optimum is
130.04 ms) with the work bound 106.4 ms, the first values 0.6 % and 1.2 % below the incumbent took
15 and 22 s to refute (measured 2026-11-25). A later change to 0.1, after the peer's held-out
Inception-v3 training graph, was taken back on 2026-11-27: on the seeded BERT-like 1,000-node
training graph (non-contiguous, ``auto`` at 60 s) 0.1 left 1.00 % open where 0.05 leaves 0.31 %,
and on the seeded Inception-like training graph (convex) the two give the same bound."""


SEED_WINDOWS = True
"""The first value's LP starts from the windows of the DP's order (:func:`.columns.windows`)."""

SEED_FROM = 10.0
"""Seconds left from which the windows are used: on the 6,083-node BERT-like training graph,
non-contiguous at 3 s, the answer was 514 ms with them, 9.8 ms without (2026-11-25; where the time
went was not traced)."""


DIVE_SLACK = 5e-3
"""Where the branch and price decides values (the DP prices) of a non-contiguous instance, a value
the LP reaches ``k`` at within ``2.5 x`` the climb above the largest proven value, with its
Lagrangian bound within this share of ``k``, gets a dive too (at most 10 s or a quarter of the time
left); elsewhere the dives stay as before. Since 2026-11-27 (night); measured with ``auto`` at 60 s,
one process at a time (the branch and price often decides nothing on these before the time is up;
a dive finds a placement or not from run to run): ResNet-50 non-contiguous 0.105 % (the table of
that evening) -> 0.024-0.057 % in four runs; the Inception-like 313-layer graph 0.48 % -> 0.0001 %,
0.014 %, optimal in 50 s, and 0.49 % (dives that found nothing); the Inception-like 300-node
operator graph 0.23 % -> 0.078 % in three runs of four (0.23 % in the other). On the BERT-like
1,507-node training graph the LP's Lagrangian stays 1.3 % below ``k`` near its threshold, so no
dive: with one, the branch and price that finds its best placement had 8 s less (0.31 % -> 1.0 %).
Not for ``convex``: there the dives found nothing and took the branch and price's time (three
branches of 50 layers, two dives of 18 s in all: 0.18 % open at 60 s, against 0.022 % and 0.011 %
in the tables before and after; one run each)."""


WIDE_DIVES = (0.1, 0.3, 0.6)
"""Where the branch and price decides values but the best placement is more than :data:`BRANCH_GAP`
above the largest proven value (so the branching would not start), :func:`relaxation` dives at
these shares of the way from that value up to the placement, the nearest first, again from the
first after each placement found, the next after a dive that finds none, round again after the
last (since 2026-11-29; empty: none; at most :data:`WIDE_DIVE_MAX` dives). The dives beside the
LP's values find nothing there, each just above the LP's threshold: on the peer's BERT-L12
training graph (non-contiguous) the LP proves 373.41 ms, every placement of ``auto`` was 418.32 ms (its devices 0 and 5 paying 87 ms each for the tied embedding's weight
and gradient) and four dives at 373.44-375.51 ms found nothing, while one at 380 ms found
378.05 ms in 8 s. They also take the LP's time left after a branch and price that ends undecided
with nothing better (:data:`DIVE_FLOOR`)."""

WIDE_DIVE_MAX = 8
"""The most values :data:`WIDE_DIVES` takes in one call that the LP does not prove (each a dive, or an
LP stopped by its deadline or a failed master)."""

WIDE_DIVE_SECONDS = 15.0
"""The most seconds one of those values may take (LP and dive; at most 0.3 of the time left)."""

DIVE_FLOOR = 1e-5
"""Where the branch and price ends undecided with nothing better, the wide dives
(:data:`WIDE_DIVES`) go on with the LP's time left until the placement is within this share (or
the target gap) of the bound (since 2026-11-29)."""


def relaxation(instance: PlacementInstance, time_limit: float | None = None, target_gap: float = 1e-3,
               incumbent=None, steps: int = 20, first_step: float = 6e-3, branch: bool = True,
               polled=None, lower_bound: float | None = None) -> AlgoResult:
    """The configuration-LP bound with price-and-branch placements (module docstring).

    From an incumbent of value ``U``, values ``V`` are decided one after another: first
    ``(1 - first_step) U`` (0.6 % below), then the target ``(1 - target_gap) U`` while no value at or below
    it is refuted, else halfway between the largest proven and the smallest refuted value; after a
    refuted value the next is at most ``step`` lower (0.6 %, doubling while values are refuted in a
    row). Above the largest proven value the climb doubles with every proof in a row
    (:data:`GALLOP`). Where the LP reaches ``k`` at ``V`` ("no"), a dive (where the Lagrangian is within 0.2 %
    of ``k``) and :func:`_restricted_mip` over the columns and the incumbent's sets look for a
    placement of value ``<= U``; where the branch and price will decide values, only the dive, only
    near the largest proven value and only for ``none`` (:data:`DIVE_SLACK`); a better one lowers
    ``U`` and the target with it (ResNet-50: a dive at 33.229 ms found 33.2245 ms). ``incumbent``: a
    placement (default: :func:`~splitopt.solvers.placement.lns.solve`, or the MILP's incumbent phase
    for ``chain``, with 0.2 of ``time_limit``). Each value gets the time left less a fifth (at most
    10 s) for the dive and the restricted MILP; one part in 50 of the limit (at most 1 s) is kept
    for the end. Returns the best placement (evaluated) and ``bound`` the largest value proven (one
    part in 1e9 below it, for the solvers' tolerances); ``info["tried"]`` lists every value, its
    verdict, Lagrangian bound, columns, the clock, and the placements found there.

    ``branch``: decide values by branch and price (:mod:`.branchprice`) once the LP's threshold is
    bracketed (module docstring; default); where the placement is then still more than
    :data:`BRANCH_GAP` above the bound, dives at values between the two first (:data:`WIDE_DIVES`).
    ``polled``: a callable returning a placement (device
    names) or ``None``, asked before each such value: the re-placement that :mod:`.milp` runs beside
    publishes its best placement there. ``lower_bound``: a proven lower bound (default: the
    combinatorial bound, computed here with a tenth of the limit at most)."""
    from splitopt.models.placement import evaluate
    from splitopt.solvers.placement.bounds import combinatorial_bound
    from splitopt.solvers.placement.incumbent import first_feasible
    from splitopt.solvers.placement.incumbent import incumbent as _incumbent

    if instance.n_accelerators == 0:
        raise InstanceError("n_accelerators", "is 0: the configuration LP bounds accelerator sets")
    t0 = time.perf_counter()
    d = data_of(instance)
    if lower_bound is None:
        # (its isolation and communication bounds take 16 s on a 6,083-node training graph: a
        # tenth of the limit at most)
        lb, _lbs = combinatorial_bound(instance, deadline=None if time_limit is None else t0 + 0.1 * time_limit)
    else:
        lb = lower_bound
    if incumbent is None:
        share = None if time_limit is None else 0.2 * time_limit
        if instance.contiguity != "chain":
            from splitopt.solvers.placement import lns

            incumbent = lns.solve(instance, time_limit=share).assignment
        else:
            incumbent = _incumbent(instance, share)[0]
            if incumbent is None:  # the MILP's first placement, or its proof that there is none
                incumbent = first_feasible(instance, share)[0]
        if incumbent is None:
            raise NoFeasibleSolution("no placement found to bound against within the time limit; a longer "
                                     "--time-limit may find one")
    ub = evaluate(instance, incumbent)[0]
    source = "incumbent"

    # a margin for what follows the last decision (building a master, scoring, returning)
    budget = None if time_limit is None else time_limit - min(1.0, 0.02 * time_limit)

    def left():
        return None if budget is None else budget - (time.perf_counter() - t0)

    proven, lo, hi = lb, lb, ub
    tried: list[dict] = []
    cols: list[np.ndarray] = []
    cpu_cols: list[np.ndarray] = []
    # the LP alone never proves an exact optimum (it reaches k just below it): it aims at least
    # 1e-6 below the incumbent; the branch and price then goes on to target_gap
    lp_gap = max(target_gap, 1e-6)

    def aim(u):  # the value that meets the LP's target gap once proven (with a 1e-9 margin)
        return u * (1 - lp_gap) * (1 + 2e-9)

    # first aim below the target, where the LP is tight enough for a dive to find placements
    # (from a poor incumbent, 0.1 % below it is a value the LP cannot prove nor a dive reach);
    # halfway where the bound and the incumbent are more than WIDE apart
    V = max(lb, ub * (1 - max(lp_gap, first_step)))
    if V <= lb:  # the combinatorial bound is already that close: aim at the target (BERT-24)
        V = aim(ub)
    if ub - lb > WIDE * ub:
        V = 0.5 * (lb + ub)
    def score_names(a):  # (value, placement) of device names; inf where infeasible
        if a is None:
            return math.inf, None
        try:
            return evaluate(instance, a)[0], a
        except InfeasibleSolution:  # not contiguous as the instance asks
            return math.inf, None

    def score(place):  # the same for a device per class
        return score_names(None if place is None else _placement(instance, d, place))

    def from_beside() -> bool:  # take a better placement from the search running beside, if any
        nonlocal incumbent, ub, source
        if polled is None:
            return False
        v, a = score_names(polled())
        if v < ub:
            incumbent, ub, source = a, v, "beside"
            return True
        return False

    step = first_step
    proven_cols: list[np.ndarray] = []
    proven_cpu: list[np.ndarray] = []

    # how far above the largest proven value the next one goes: near the LP's threshold the LP is
    # tight, so a dive there finds placements, and a proof there raises the bound
    climb = 0.8 * max(lp_gap, 1e-3)
    # the climb doubles with every value proven in a row (GALLOP): on the peer's Inception-v3 layer
    # graph, convex, ten values 0.08 % apart were proven one after another (27 s) before the
    # incumbent was certified
    gallop = 1.0

    def nxt():
        # the target, or just above the largest proven value where that is lower; halfway between
        # the proven and the refuted values where both are at or above the smallest refuted one,
        # or where they are more than WIDE apart
        if hi - lo > WIDE * hi:
            return 0.5 * (lo + hi)
        v = aim(ub) if lo <= lb else min(aim(ub), lo * (1 + climb * gallop))
        return v if v < hi else 0.5 * (lo + hi)

    exact = False  # whether the largest proven value was priced by the DP
    misses = 0  # values the LP reached k at without a better placement, since the last one
    searching = None  # whether the branch and price applies (known with the first LP)
    for _step in range(max(1, steps)):
        if from_beside():
            hi = min(hi, ub)
            if V >= aim(ub) * (1 - 1e-12):
                V = nxt()
        rest = left()
        if V <= proven or hi - lo <= 1e-6 * hi or (rest is not None and rest <= 0):
            break
        if searching and hi - lo <= 1e-4 * hi:
            break  # the LP's threshold is bracketed: the branch and price takes over
        if misses >= 2 and hi - lo <= 1e-4 * hi:
            # the LP's threshold is bracketed within 0.01 % and two values at it found no placement:
            # the gap left is the LP's own (Inception-like 300 nodes, non-contiguous: 15 s more
            # raised the bound by 0.005 %, time the MILP and the re-placement then lacked)
            break
        deadline = None if rest is None else time.perf_counter() + rest - min(10.0, 0.2 * rest)
        # the windows (first value only) take a tenth of the value's time at most
        cg = _ColGen(d, V, cols, cpu_columns=cpu_cols,
                     seed=SEED_WINDOWS and not cols and (rest is None or rest >= SEED_FROM),
                     seed_until=None if rest is None else time.perf_counter() + 0.1 * rest)
        verdict, L = cg.run(d.k, deadline)
        cols, cpu_cols = list(cg.cols), list(cg.cpu_cols)
        tried.append({"V": V, "verdict": verdict, "lagrangian": L, "columns": len(cols),
                      "seconds": round(time.perf_counter() - t0, 2)})
        if searching is None:
            searching = branch and cg.dp is not None  # the branching lives in the DP's codes
        if verdict == "proven":
            step = first_step
            proven = lo = V
            exact = cg.dp is not None
            proven_cols, proven_cpu = list(cols), list(cpu_cols)
            if V >= aim(ub) * (1 - 1e-12):
                break
            V = nxt()
            gallop *= GALLOP
            continue
        gallop = 1.0
        if verdict in ("no", "undecided"):
            # the LP reaches k at V (or may: "undecided", the memory row's duality gap open): look
            # for placements in it (a dive, then the best partition of the columns with the
            # incumbent's own sets, which always has a solution)
            v, a = math.inf, None
            near = lo > lb and V <= lo * (1 + 2.5 * climb)
            if searching:  # beside the branch and price: near, non-contiguous, tight (DIVE_SLACK)
                dive = near and instance.contiguity == "none" and L >= d.k * (1 - DIVE_SLACK)
            else:
                dive = L >= d.k * (1 - 2e-3) or near
            if dive:
                # a dive pays only where the LP is tight (ResNet-50: at 0.5 % of slack every column
                # the dive placed left an infeasible rest; at 0.1 % it found 33.224 ms; from
                # scratch at 33.223-33.24 ms, 0.02-0.07 % above the LP's threshold, 5 dives of 6
                # found 33.222-33.235 ms)
                rest = left()
                dive_end = None
                if rest is not None:
                    dive_end = time.perf_counter() + (min(10.0, 0.25 * rest) if searching else min(30.0, 0.5 * rest))
                v, a = score(cg.dive(dive_end))
                cols, cpu_cols = list(cg.cols), list(cg.cpu_cols)
                if a is None and proven_cols and (rest is None or left() > 0.4 * rest):
                    # again from the columns of the last proven value (a fresh LP state: from
                    # there dives at three values near ResNet-50's threshold all succeeded)
                    again = _ColGen(d, V, proven_cols, cpu_columns=proven_cpu)
                    if again.run(d.k, dive_end)[0] in ("no", "undecided"):
                        v, a = score(again.dive(dive_end))
                tried[-1]["dive"] = v
            if a is None and not searching:
                # no dive placement (or none tried): the best partition of the columns with the
                # incumbent's own sets (a dive's placement is within V, where the LP is tight;
                # this MILP then only costs time: 5 s on ResNet-50)
                rest = left()
                fit = [S for S, ok in zip(cols, d.fitting(cols, ub)) if ok]
                own, own_cpu = _sets_of(instance, d, incumbent)
                place, st = _restricted_mip(d, fit + own, ub, None if rest is None else min(5.0, max(rest, 0.1)),
                                            start=range(len(fit), len(fit) + len(own)), start_cpu=own_cpu,
                                            cpu_cols=cpu_cols if cg.cpu_dp is not None else None)
                pv, p = score(place)
                tried[-1]["restricted_mip"] = pv
                tried[-1]["restricted_mip_status"] = st
                if pv < v:
                    v, a = pv, p
            if v < ub:
                incumbent, ub, source = a, v, "dive" if v == tried[-1].get("dive") else "restricted_mip"
                misses = 0
                step = first_step
                hi = min(hi, ub)
                V = nxt()
                continue
        misses += verdict == "no"
        hi = V  # refuted or undecided: look lower, by halves but at most `step` at a time (each
        # value costs about as much to decide; the LP bound is usually close below the optimum),
        # the step doubling while values are refuted in a row
        V = max(0.5 * (lo + hi), hi * (1 - step))
        step *= 2
    def wide_dives(floor: float) -> None:
        """Dives at values between the bound and the placement (WIDE_DIVES), from the nearest share
        up, until the placement is within ``floor`` of the bound (or WIDE_DIVE_MAX dives)."""
        nonlocal cols, cpu_cols, proven, lo, exact, incumbent, ub, source
        i, dives = 0, 0 if WIDE_DIVES else WIDE_DIVE_MAX  # (empty: no dives)
        while dives < WIDE_DIVE_MAX:
            from_beside()
            rest = left()
            if ub - lo <= floor * ub or (rest is not None and rest < 1.0):
                break
            V = lo + WIDE_DIVES[i] * (ub - lo)
            end = None if rest is None else time.perf_counter() + min(WIDE_DIVE_SECONDS, 0.3 * rest)
            cg = _ColGen(d, V, cols, cpu_columns=cpu_cols)
            verdict, L = cg.run(d.k, end)
            v, a = math.inf, None
            if verdict != "proven":  # (an LP that stopped counts too: no endless round without a limit)
                dives += 1
            if verdict in ("no", "undecided"):
                v, a = score(cg.dive(end, shares=True))
            cols, cpu_cols = list(cg.cols), list(cg.cpu_cols)
            tried.append({"V": V, "verdict": verdict, "lagrangian": L, "columns": len(cols), "wide_dive": v,
                          "seconds": round(time.perf_counter() - t0, 2)})
            if verdict == "proven":  # (the bracket was not closed: a proof all the same)
                proven = lo = V
                exact = cg.dp is not None
                continue
            if v < ub:
                incumbent, ub, source = a, v, "dive"
                i = 0  # from the nearest share again, on the narrower gap
            else:  # the next share (round again: the columns, so the LP's solution, have changed)
                i = (i + 1) % len(WIDE_DIVES)

    if searching:
        # the branch and price starts only within BRANCH_GAP of the bound; from further, dives
        wide_dives(BRANCH_GAP)
    wait_end = None  # until when the branch and price waits for a placement from beside
    if searching:
        # the branch and price between the largest proven value and the incumbent: halfway, a
        # proof raising the bound, a placement lowering the incumbent, until a value is undecided;
        # within JUMP of the incumbent, the value that certifies it (EXACT below it) at once
        while True:
            from_beside()
            rest = left()
            final = ub * (1 - max(0.5 * target_gap, EXACT))
            if not (lo < final and (rest is None or BRANCH_SHARE * rest >= 0.5)):
                break
            if (not tried or "branch_and_price" not in tried[-1]) and ub - lo > BRANCH_GAP * ub:
                if polled is not None and rest is not None:
                    # the re-placement beside may still bring the placement within reach: wait for
                    # it a while (POLL_SHARE), polling, before the MILP gets the time
                    if wait_end is None:
                        wait_end = time.perf_counter() + POLL_SHARE * rest
                    if time.perf_counter() < wait_end:
                        time.sleep(POLL_SLEEP)
                        continue
                break  # the LP's gap is too wide for the branching: the MILP gets the time
            V = final if ub - lo <= JUMP * ub else min(final, 0.5 * (lo + ub))
            bp = BranchPrice(instance, d, V, cols, cpu_cols)
            searched, found = bp.decide(None if rest is None else time.perf_counter() + BRANCH_SHARE * rest,
                                        max_nodes=BRANCH_NODES if rest is None else None)
            cols, cpu_cols = list(bp.pool), list(bp.cpu_pool)
            v, a = score(found)
            tried.append({"V": V, "verdict": searched, "branch_and_price": bp.nodes, "columns": len(cols),
                          "placement": v, "seconds": round(time.perf_counter() - t0, 2)})
            if searched == "proven":
                proven = lo = V
                exact = True  # (the branch and price prices by the DP)
            elif a is not None and v < ub:
                incumbent, ub, source = a, v, "branch_and_price"
            else:
                # undecided with half the time left: the next value would have less time still
                # (BERT-24 inference, non-contiguous, proven by the MILP in 2-5 s: 15.8 s when
                # two undecided values took three quarters of the LP's time)
                # and nothing found: dives between the bound and the placement with the LP's time
                # left (BERT-L12 training, non-contiguous: after 14 nodes undecided at 373.87 ms,
                # the dive at 373.50 found 373.424 ms, 0.0012 % above the bound, in two runs of
                # two; 374.24-374.33 ms, 0.22 %, when the MILP got that time)
                wide_dives(max(target_gap, DIVE_FLOOR))
                break
    # a proof priced by the DP is exact (sets of load up to V (1 + LOAD_TOL) priced): the bound is
    # the value proven; with the MILP's pricing, one part in 1e9 below it (the solver's tolerances)
    bound = min(proven * (1 - (0.0 if exact else 1e-9)) if proven > lb else lb, ub)
    return AlgoResult(list(incumbent), status="ok", bound=bound,
                      info={"tried": tried, "combinatorial": lb, "incumbent": ub, "solution_from": source})


__all__ = ["prove_above", "relaxation"]
