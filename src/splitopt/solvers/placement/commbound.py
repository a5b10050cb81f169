"""The communication-aware work bound of the device-placement model (Tarnawski et al., NeurIPS
2020, §4 model; the bound is ours): the work bound of
:func:`~splitopt.models.placement.work_bound` plus a lower bound on the seconds of communication
that every placement of value ``V`` pays, by wide tensors (a weight read by every cell of a layer,
the classifier weight read at every time step) and by stars (every classifier step sending its
logits to the one loss node).

Why: on GNMT-like operator graphs (:func:`splitopt.instances.placement_gen.operator_graph`,
``kind="gnmt"``) the classifier weight (5.5 ms to move) feeds 18-30 classifier steps that together
weigh about half of all accelerator work; they cannot share one accelerator, so several
accelerators hold some of them and each pays the weight's transfer. The MILP's LP relaxation
spreads every class fractionally over all devices and pays none of it (``cin >= x_v - x_u`` is 0
when ``x_u = x_v = 1/k``); the work, pigeonhole and isolation bounds ignore it too, and the proven
bound of 60 s runs stayed at the work bound (gnmt-300 training, chain: 30.2 ms against 40.2 ms
found in 600 s). Measured 2026-11-24 (2-core machine, shared): this bound is 35.82 ms there
(the best non-contiguous placement found in 60 s: 37.49 ms) and 16.75 ms on gnmt-1000 seed 3
(work bound 10.10 ms; best placements 18.17-18.26 ms), in 0.05-0.1 s; about 1 s on 6,000 nodes.
What it does not see: how the devices' loads are packed (it is a sum over all accelerators), the
chain order, memory.

The argument (:func:`comm_work_bound`). Fix ``V`` and any placement ``P`` of max-load ``<= V``
(the ``fwd+bwd`` objective is never below max-load, so the bound holds for both). The loads of the
``k`` accelerators sum to *(accelerator time of the classes on accelerators)* + *sum over tensors
of seconds x (number of accelerators paying it)*, exactly (the evaluator's load), and each is
``<= V``, so ``k V >=`` any lower bound on that sum, which is built from independent lower bounds
on its terms (each term is a separate summand, so the bounds add):

* work: the classes on CPU cores have CPU time ``<= l V`` in all and each ``<= V``; the accelerator
  time they take away is at most the fractional knapsack (values accelerator times, weights CPU
  times, capacity ``l V``) over the supported classes of CPU time ``<= V``; unsupported classes
  are on CPU cores and cost their CPU time of that capacity;
* a tensor ``t`` (seconds ``s``, member classes ``M``: producer and consumers) that no single
  device can hold within ``V`` (not every member supported or accelerator time of ``M`` above
  ``V``, and no CPU core or CPU time of ``M`` above ``V``) is split in ``P``: every accelerator
  holding a member pays ``s``, so each such accelerator holds members of accelerator time
  ``<= V - s``; the members on accelerators have accelerator time at least ``A`` (``acc(M)`` less
  the fractional knapsack of what the CPU cores can take of ``M``, as above), so at least
  ``ceil(A / (V - s))`` accelerators pay ``s`` (none possible, ``V`` infeasible, when ``A > 0``
  and ``V <= s``);
* a star with centre class ``h``: tensors whose members are exactly ``{h, c_i}`` (the ``c_i``
  distinct; tensors with the same pair are merged, their seconds added: they are split together).
  The items on CPU cores have CPU time ``<= V`` each and ``<= l V`` in all. If ``h`` is on a CPU
  core (CPU time ``<= V``), only the items on accelerators pay, once: at least the items' seconds
  less the fractional knapsack (values seconds, weights CPU times, capacity ``l V - cpu(h)``). If
  ``h`` is on an accelerator (supported, accelerator time ``<= V``), an item there pays nothing,
  an item on a CPU core once (on ``h``'s side), any other twice: at least twice the items' seconds,
  less twice the knapsack of what ``h``'s accelerator can keep (weights accelerator times), less
  the knapsack of what the CPU cores can take. ``h``'s accelerator keeps items of accelerator
  time at most ``V - acc(h)`` less the seconds of the split tensors (above) that ``h`` is a member
  of, and, if it keeps any item, less the least over the items of the seconds of the split tensors
  that item (and not ``h``) is a member of: that accelerator holds a member of each, so it pays
  them. Moreover ``h``'s accelerator pays every item it does not keep (their tensors are split
  and hold ``h``): ``acc(h) + hp + (all items' seconds) + sum over the kept items of (accelerator
  time - seconds) [+ ip if one is kept] <= V``, a knapsack with weights of either sign (items
  lighter than their seconds only make room; :func:`_knapsack_signed`, its LP relaxation); the
  kept seconds are at most the smaller of the two knapsacks, and when neither the empty set nor
  any other fits, ``h`` is on no accelerator. The smaller of the cases that ``V`` allows is paid
  (gnmt-1000, seed 3: 15.41 -> 16.75 ms: the loss cannot sit on an accelerator that receives 30
  steps' logits).

* a split tensor linked to a star (the star whose items among its members carry the most star
  seconds): each accelerator holding members of the split tensor pays, beside ``s``, the star
  seconds of each item it holds unless it is the centre's accelerator. The bound is taken case by
  case of the centre: on a CPU core, the members' values are accelerator time + star seconds (the
  CPU cores' knapsack now on those values) and ``ceil(A' / (V - s))`` accelerators pay; on an
  accelerator, the same less the knapsack of the star seconds the centre's accelerator can keep
  (weights accelerator times, capacity ``V - acc(h) - s``). A placement is in one of the cases,
  so the star's paid seconds plus its linked tensors' paid seconds are at least the smaller of the
  cases' sums (gnmt-1000, seed 3: 14.89 -> 15.41 ms; each classifier step on an accelerator also
  sends its logits to the loss, so fewer fit beside the classifier weight).

Every tensor is used by at most one argument (the stars take their two-member tensors first, the
rest go to the split argument). ``V`` fails when the lower bound on the sum exceeds ``k V``; any
``V`` at or above the optimum passes (the placement itself), so every failing ``V`` is below the
optimum, and the bound is the largest failing ``V`` found by bisection (monotonicity only makes it
tight, not valid). The classes are the colour classes (:func:`~splitopt.models.placement.class_tensors`);
contiguity and memory are relaxed, so the bound holds for every contiguity.
"""

from __future__ import annotations

import math
import time

from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import _knapsack_max, class_data, class_tensors, work_bound


def _knapsack_signed(values, weights, capacity: float) -> float:
    """``max sum v_i x_i`` subject to ``sum w_i x_i <= capacity``, ``0 <= x_i <= 1``, values
    ``>= 0`` and weights of any sign (``None`` when no ``x`` satisfies the row): the items of
    weight ``<= 0`` are all taken (they add value and room), then the fractional knapsack of the
    others."""
    base_v = math.fsum(v for v, w in zip(values, weights) if w <= 0)
    room = capacity - math.fsum(w for w in weights if w <= 0)
    if room < 0:
        return None
    pos = [(v, w) for v, w in zip(values, weights) if w > 0]
    return base_v + _knapsack_max([v for v, _w in pos], [w for _v, w in pos], room)


class _Data:
    """Class-level data and the split of the tensors between stars and the split argument."""

    def __init__(self, instance: PlacementInstance, deadline: float | None = None):
        _cls, self.cpu, self.acc, _size, self.sup = class_data(instance)
        self.k, self.l = instance.n_accelerators, instance.n_cpus
        _cls_of, ct = class_tensors(instance)
        pairs: dict[tuple[int, int], float] = {}
        wide: list[tuple[list[int], float]] = []
        for gu, gs, sec, _b in ct:
            if len(gs) == 1:
                key = (min(gu, gs[0]), max(gu, gs[0]))
                pairs[key] = pairs.get(key, 0.0) + sec
            else:
                wide.append(([gu, *gs], sec))
        # stars: greedily the class with the most two-member tensor seconds not yet taken
        inc: dict[int, dict[int, float]] = {}
        for (a, b), sec in pairs.items():
            inc.setdefault(a, {})[b] = sec
            inc.setdefault(b, {})[a] = sec
        self.stars: list[tuple[int, list[tuple[int, float]]]] = []
        # rem[h]: the pairs of h not yet taken, w[h] their seconds (fsum: exactly rounded, so the
        # same whatever the order; only the classes a star touches are summed again)
        rem = {h: dict(nb) for h, nb in inc.items()}
        w = {h: math.fsum(nb.values()) for h, nb in rem.items()}
        while deadline is None or time.perf_counter() <= deadline:
            # (stopped at the deadline, the pairs not in a star go to the split argument: still a
            # partition of the tensors between the arguments, so still a bound)
            best, best_w = None, 0.0
            for h, nb in rem.items():
                if len(nb) >= 2 and w[h] > best_w:
                    best, best_w = h, w[h]
            if best is None:
                break
            items = sorted(rem[best].items())
            for c, _s in items:
                del rem[c][best]
                w[c] = math.fsum(rem[c].values())
            rem[best], w[best] = {}, 0.0
            self.stars.append((best, items))
        taken = {(min(h, c), max(h, c)) for h, items in self.stars for c, _s in items}
        self.wide = wide + [([a, b], sec) for (a, b), sec in sorted(pairs.items()) if (a, b) not in taken]
        # member_of[g]: indices of the wide tensors class g is a member of
        self.member_of: list[set[int]] = [set() for _ in self.acc]
        for t, (members, _s) in enumerate(self.wide):
            for g in members:
                self.member_of[g].add(t)
        # each wide tensor linked to the star whose items among its members carry the most seconds
        # (their surcharges enter its count of paying accelerators, case by case of the centre)
        self.item_sec = [dict(items) for _h, items in self.stars]
        self.linked: list[list[int]] = [[] for _ in self.stars]
        self.free: list[int] = []
        for t, (members, _s) in enumerate(self.wide):
            best, best_w = None, 0.0
            for si, sec in enumerate(self.item_sec):
                w = math.fsum(sec.get(g, 0.0) for g in members)
                if w > best_w:
                    best, best_w = si, w
            (self.linked[best] if best is not None else self.free).append(t)

    def cpu_ok(self, g: int, V: float) -> bool:
        """Whether class ``g`` may sit on a CPU core in a placement of value ``<= V``."""
        return self.l > 0 and self.cpu[g] <= V

    def acc_ok(self, g: int, V: float) -> bool:
        return self.k > 0 and self.sup[g] and self.acc[g] <= V

    def offload(self, members, V: float) -> float:
        """An upper bound on the accelerator time of ``members`` (supported ones) that the CPU
        cores can hold in a placement of value ``<= V``: the fractional knapsack of those of CPU
        time ``<= V`` under capacity ``l V``."""
        if self.l == 0:
            return 0.0
        ok = [g for g in members if self.sup[g] and self.cpu[g] <= V]
        return _knapsack_max([self.acc[g] for g in ok], [self.cpu[g] for g in ok], self.l * V)

    def need(self, V: float) -> float:
        """A lower bound on the sum of the accelerator loads of any placement of value ``<= V``
        (``inf`` when none exists); the module docstring's argument."""
        k, l_ = self.k, self.l
        G = len(self.acc)
        if k == 0:
            return 0.0
        # work: supported classes' accelerator time less what the CPU cores can take; the CPU time
        # of the unsupported classes uses up the CPU capacity first
        forced_cpu = math.fsum(self.cpu[g] for g in range(G) if not self.sup[g])
        if forced_cpu > l_ * V * (1 + 1e-12):
            return math.inf
        sup = [g for g in range(G) if self.sup[g]]
        ok = [g for g in sup if l_ > 0 and self.cpu[g] <= V]
        work = math.fsum(self.acc[g] for g in sup) - _knapsack_max(
            [self.acc[g] for g in ok], [self.cpu[g] for g in ok], max(l_ * V - forced_cpu, 0.0))
        comm = 0.0
        split: set[int] = set()  # the wide tensors that every placement of value <= V splits
        for t, (members, s) in enumerate(self.wide):
            one_acc = all(self.acc_ok(g, V) for g in members) and math.fsum(self.acc[g] for g in members) <= V
            one_cpu = l_ > 0 and math.fsum(self.cpu[g] for g in members) <= V
            if not (one_acc or one_cpu):
                split.add(t)
        for t in self.free:
            if t in split:
                comm += self.split_paid(t, V)
        for si, (h, items) in enumerate(self.stars):
            total = math.fsum(s for _c, s in items)
            vals = [s for _c, s in items]
            linked = [t for t in self.linked[si] if t in split]
            # the items a CPU core may hold (CPU time <= V), by CPU time under the cores' capacity
            oncpu = [(s, self.cpu[c]) for c, s in items if self.cpu_ok(c, V)]
            cases = []
            if self.cpu_ok(h, V):
                # h on a CPU core: the items on accelerators pay once (on their side)
                paid = total - _knapsack_max([s for s, _w in oncpu], [w for _s, w in oncpu], l_ * V - self.cpu[h])
                cases.append(max(paid, 0.0) + math.fsum(self.split_paid(t, V, si, None) for t in linked))
            if self.acc_ok(h, V):
                # h on an accelerator: items kept there pay nothing, items on CPU cores once (on h's
                # side), the others twice. h's accelerator pays the split tensors h is in and, if it
                # keeps an item, those of some item (the least over the items; a tensor with h in it
                # counted once)
                with_h = self.member_of[h] & split
                hp = math.fsum(self.wide[t][1] for t in with_h)
                ip = min(math.fsum(self.wide[t][1] for t in (self.member_of[c] & split) - with_h) for c, _s in items)
                cap = V - self.acc[h] - hp - ip
                kept = _knapsack_max(vals, [self.acc[c] for c, _s in items], cap) if cap > 0 else 0.0
                # h's accelerator also pays every item not kept there: acc(h) + hp + (all items'
                # seconds) + sum over the kept of (acc - seconds) [+ ip if any is kept] <= V
                room = V - self.acc[h] - hp - total
                some = _knapsack_signed(vals, [self.acc[c] - s for c, s in items], room - ip)
                opts = ([0.0] if room >= 0 else []) + ([some] if some is not None else [])
                # none: no kept set (empty or not) fits, so h is on no accelerator in this placement
                kept = min(kept, max(opts)) if opts else -1.0
                cpu_part = _knapsack_max([s for s, _w in oncpu], [w for _s, w in oncpu], l_ * V) if l_ else 0.0
                if kept >= 0:
                    cases.append(max(2 * total - 2 * kept - cpu_part, 0.0)
                                 + math.fsum(self.split_paid(t, V, si, h) for t in linked))
            if not cases:
                return math.inf  # pragma: no cover - h fits on no device within V
            comm += min(cases)
        return work + comm

    def split_paid(self, t: int, V: float, star: int | None = None, centre: int | None = None) -> float:
        """Seconds that the split wide tensor ``t`` costs at least in a placement of value ``<= V``
        (``inf`` when none): ``s`` times the accelerators holding a member. With ``star``, each
        of its items among the members carries its star seconds as a surcharge, paid on its own
        accelerator unless it sits with the centre: none of them does when the centre is on a CPU
        core (``centre`` None), and when the centre is on an accelerator (``centre`` given) the
        surcharges of the items kept there are at most the knapsack of what fits beside the centre."""
        members, s = self.wide[t]
        if not all(self.sup[g] or self.l > 0 for g in members):
            return math.inf  # pragma: no cover - an unsupported class with no CPU core: no placement
        sur = self.item_sec[star] if star is not None else {}
        sup = [g for g in members if self.sup[g]]
        vals = [self.acc[g] + sur.get(g, 0.0) for g in sup]
        ok = [i for i, g in enumerate(sup) if self.cpu_ok(g, V)]
        A = math.fsum(vals) - (_knapsack_max([vals[i] for i in ok], [self.cpu[sup[i]] for i in ok], self.l * V)
                               if self.l else 0.0)
        if centre is not None:
            its = [g for g in sup if g in sur]
            cap = V - self.acc[centre] - s
            A -= _knapsack_max([sur[g] for g in its], [self.acc[g] for g in its], cap) if cap > 0 and its else 0.0
        if A <= 1e-12 * V:
            return 0.0
        if V <= s:
            return math.inf
        # one step down before the ceiling: rounding may only lower the count
        return s * max(1, math.ceil(A / (V - s) * (1 - 1e-12)))

    def fails(self, V: float) -> bool:
        return self.need(V) > self.k * V * (1 + 1e-12)


def comm_work_bound(instance: PlacementInstance, data: _Data | None = None, deadline: float | None = None) -> float:
    """The communication-aware work bound (module docstring): a lower bound on the optimum of every
    contiguity and both objectives, at least :func:`~splitopt.models.placement.work_bound`.
    ``deadline`` (a ``time.perf_counter()`` value): past it, fewer stars are formed and the
    bisection stops at the largest failing value found (1.5 s on a 4,156-node training graph)."""
    wb = work_bound(instance)
    d = data or _Data(instance, deadline)
    if d.k == 0 or not (d.stars or d.wide):
        return wb
    lo = wb
    if not d.fails(lo):
        return wb
    hi = max(2 * lo, 1e-300)
    while d.fails(hi):
        lo, hi = hi, 2 * hi
        if not math.isfinite(hi):  # pragma: no cover - no placement at any value
            return lo
    for _ in range(60):
        if deadline is not None and time.perf_counter() > deadline:
            break  # lo has failed: a bound
        mid = 0.5 * (lo + hi)
        if d.fails(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return lo


__all__ = ["comm_work_bound"]
