"""The mathematics of the ``grouping`` family: evaluator, interval costs, and the two exact MILPs.

Source: Petkos (2025), *Optimizing Neural Network Deployment Through Partitioning* (seed 003),
as read in the digest ``papers/003-resnet-grouping-thesis.md`` (cited below as "digest §x").

An *assignment* is the list of group sizes ``[n_1, ..., n_m]`` (positive integers summing to the
number of parts ``n``); group ``i`` holds the parts ``b_{i-1}+1 .. b_i`` (1-based) with
``b_i = n_1 + ... + n_i`` (thesis §4.1: contiguous, order-preserving groups).

Objectives (all minimised) -- see :mod:`splitopt.instances.grouping`:

* ``perf``: thesis §5.2 recurrence ``A_i^r = max(A_{i-1}^r, A_i^{r-1}) + T_i + D_i`` evaluated
  through its closed form ``sum_i w_i + (R-1) max_i w_i``, ``w_i = T_i + D_i`` (digest §1.6a;
  :func:`perf_recurrence` is the recurrence itself, used to test the closed form).
  Corrections: the number of requests ``R`` is separate from ``n`` (digest §5.1 #7); the thesis's
  ``k = 1`` special case ``Perf = R T_1`` (no ``D_1``) is the ``k1_convention="thesis"`` default and
  is expressed as ``D_1 = 0`` for a single group, so closed form and recurrence agree for every
  ``k``; ``charge_final_transfer`` decides whether ``D_k`` is charged (thesis: yes).
* ``bottleneck``: ``max_i w_i`` (digest §5.3 P2), or ``max_i T_i`` without transfers (P1).
* ``thesis_cost``: thesis Defs. 4.2, 4.3, 4.5 and Alg. 3 (digest §1.3, §1.6f):
  ``sum_i [alpha T_i/T_tot + beta s_last(G_i)/S_tot - gamma log(1+C_i)/log(1+C_tot)]
  + delta (max_i T_i / mean_i T_i - 1)``. ``GetBalancePenalty`` (undefined in the thesis) is
  ``max/mean - 1`` (digest §5.2 #9); ``delta`` is a parameter (thesis: hard-coded 0.5).

Every objective is ``sum_i f(G_i) + lambda_m max_i g(G_i) + const`` over contiguous partitions
(digest §5.3 table); :func:`interval_costs` gives ``f``, ``g``, ``lambda_m`` and ``const`` as
matrices over intervals. The combinatorial algorithms (``splitopt.solvers.grouping.dp``,
``linear_partition``, ``bnp``, ``exhaustive``, ``grouping_bruteforce``) and both MILPs use them.

Formulations (Pyomo; solved through :func:`splitopt.solvers.exact.solve`):

* :func:`build_milp_compact` -- digest §5.3 MILP A, ``x_ji`` assignment binaries with the
  staircase constraint, the exact piecewise-linear (chord) treatment of the concave
  ``log(1+C_i)`` term for ``thesis_cost``;
* :func:`build_milp_interval` -- digest §5.3 MILP B, one binary per interval (path formulation).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from splitopt.errors import InstanceError
from splitopt.instances.grouping import GroupingInstance

# ---------------------------------------------------------------------------------- assignments


def check_assignment(instance: GroupingInstance, assignment: Any) -> list[int]:
    """Validate group sizes: positive integers summing to ``n``, as many as the instance allows
    (exactly ``k``, or at most ``k`` with ``at_most_k``). Raises :class:`InstanceError`."""
    if isinstance(assignment, (str, bytes)) or not isinstance(assignment, Sequence) and not isinstance(assignment, np.ndarray):
        raise InstanceError("assignment", f"must be a list of group sizes, got {assignment!r}")
    sizes = []
    for i, v in enumerate(list(assignment)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < 1:
            raise InstanceError(f"assignment[{i}]", f"group size must be a positive integer, got {v!r}")
        sizes.append(int(v))
    if sum(sizes) != instance.n:
        raise InstanceError("assignment", f"group sizes must sum to n = {instance.n}, got {sum(sizes)} ({sizes})")
    m = len(sizes)
    if m not in instance.group_counts:
        want = f"at most {instance.k}" if instance.at_most_k else f"exactly {instance.k}"
        raise InstanceError("assignment", f"needs {want} groups, got {m} ({sizes})")
    return sizes


def sizes_to_bounds(sizes: Sequence[int]) -> list[tuple[int, int]]:
    """Group sizes -> half-open 0-based part intervals ``[(a, b), ...]``."""
    out, a = [], 0
    for sz in sizes:
        out.append((a, a + sz))
        a += sz
    return out


def cuts_to_sizes(cuts: Sequence[int], n: int) -> list[int]:
    """Sorted cut positions ``0 < d_1 < ... < n`` (a group ends after part ``d``) -> sizes."""
    b = [0, *cuts, n]
    return [b[i + 1] - b[i] for i in range(len(b) - 1)]


# ---------------------------------------------------------------------------------- evaluator


def stage_table(instance: GroupingInstance, sizes: Sequence[int]) -> list[dict]:
    """Per stage: parts, compute ``T_i``, transfer ``D_i`` (seconds), ``w_i``, conv count ``C_i``,
    and the thesis ``Cost(G_i)`` (Def. 4.3)."""
    sizes = check_assignment(instance, sizes)
    m = len(sizes)
    t, s, c = instance.t, instance.s, instance.c
    B = instance.bandwidth_bytes_per_s
    T_tot, S_tot, C_tot = instance.T_total, instance.S_total, instance.C_total
    rows = []
    for i, (a, b) in enumerate(sizes_to_bounds(sizes)):
        T = math.fsum(t[a:b])
        C = int(sum(c[a:b]))
        D = instance.transfer_bytes(a, b - 1, m) / B
        cost = (instance.alpha * (T / T_tot if T_tot > 0 else 0.0)
                + instance.beta * (s[b - 1] / S_tot if S_tot > 0 else 0.0)
                - instance.gamma * (math.log1p(C) / math.log1p(C_tot) if C_tot > 0 else 0.0))
        rows.append({"stage": i + 1, "first": instance.names[a], "last": instance.names[b - 1], "parts": b - a,
                     "compute_s": T, "transfer_s": D, "stage_s": T + D, "convs": C, "out_bytes": s[b - 1],
                     "thesis_cost": cost})
    return rows


def perf_closed_form(w: Sequence[float], requests: int) -> float:
    """Digest §1.6a: ``Perf = sum_i w_i + (R-1) max_i w_i``."""
    return math.fsum(w) + (requests - 1) * max(w)


def perf_recurrence(w: Sequence[float], requests: int) -> float:
    """The thesis §5.2 recurrence, literally: ``S_1^r = A_1^{r-1}``,
    ``S_i^r = max(A_{i-1}^r, A_i^{r-1})`` (i > 1), ``A_i^r = S_i^r + w_i``, ``Perf = A_k^R``
    (``A_i^0 = 0``, all requests available at time 0). O(kR); for tests and illustration."""
    k = len(w)
    prev = [0.0] * k  # A_i^{r-1}
    for _r in range(requests):
        cur = [0.0] * k
        for i in range(k):
            start = prev[i] if i == 0 else max(cur[i - 1], prev[i])
            cur[i] = start + w[i]
        prev = cur
    return prev[-1]


def evaluate(instance: GroupingInstance, assignment: Any) -> tuple[float, dict]:
    """The evaluator (single source of truth): ``(objective, breakdown)`` of group sizes.

    ``breakdown`` holds ``groups`` (m), ``sizes``, per-stage lists ``stage_s``, ``compute_s``,
    ``transfer_s``, ``convs``, and the scalars ``max_stage_s``, ``sum_stage_s``, ``perf_s`` (the
    Perf of this grouping), ``bottleneck_s`` and ``thesis_cost`` -- all three objectives, so a
    grouping found for one can be judged by the others.
    """
    rows = stage_table(instance, assignment)
    m = len(rows)
    w = [r["stage_s"] for r in rows]
    T = [r["compute_s"] for r in rows]
    perf = perf_closed_form(w, instance.requests)
    bottleneck = max(w)
    T_tot = instance.T_total
    balance = (max(T) * m / T_tot - 1.0) if T_tot > 0 else 0.0
    thesis = math.fsum(r["thesis_cost"] for r in rows) + instance.delta * balance
    obj = {"perf": perf, "bottleneck": bottleneck, "thesis_cost": thesis}[instance.objective]
    breakdown = {
        "groups": m,
        "sizes": [r["parts"] for r in rows],
        "stage_s": w,
        "compute_s": T,
        "transfer_s": [r["transfer_s"] for r in rows],
        "convs": [r["convs"] for r in rows],
        "max_stage_s": bottleneck,
        "sum_stage_s": math.fsum(w),
        "perf_s": perf,
        "bottleneck_s": bottleneck,
        "thesis_cost": thesis,
        "balance_factor": instance.delta * balance,
    }
    return obj, breakdown


# ---------------------------------------------------------------------------------- interval costs


class IntervalCosts:
    """``objective = sum_i f[a_i, b_i] + lam(m) * max_i g[a_i, b_i] + const`` over contiguous
    ``m``-partitions, with half-open 0-based intervals ``[a, b)``; matrices are ``(n+1, n+1)``
    with ``+inf`` where ``a >= b`` (digest §5.3 table: P1-P4).

    The ``[0, n)`` entry is the single-group case: under the thesis ``k = 1`` convention its
    transfer is 0 (this interval is used only when ``m = 1``).
    """

    def __init__(self, instance: GroupingInstance):
        self.instance = instance
        n = instance.n
        self.n = n
        t, s, c = instance.t_array, instance.s_array, instance.c_array
        tau = np.concatenate([[0.0], np.cumsum(t)])
        kap = np.concatenate([[0], np.cumsum(c)])
        a = np.arange(n + 1)[:, None]
        b = np.arange(n + 1)[None, :]
        valid = a < b
        T = np.where(valid, tau[None, :] - tau[:, None], np.inf)
        T = np.maximum(T, 0.0)  # guard tiny negative rounding
        C = np.where(valid, kap[None, :] - kap[:, None], 0)
        # transfer bytes of a stage ending at part b-1
        if instance.transfers:
            send = np.concatenate([[0.0], s])  # send[b] = s[b-1]
            if not instance.charge_final_transfer:
                send[n] = 0.0
            D = np.broadcast_to(send[None, :], (n + 1, n + 1)).copy() / instance.bandwidth_bytes_per_s
            D[0, n] = instance.transfer_bytes(0, n - 1, 1) / instance.bandwidth_bytes_per_s
        else:
            D = np.zeros((n + 1, n + 1))
        W = np.where(valid, T + D, np.inf)
        self.T, self.C, self.W, self.valid = T, C, W, valid
        obj = instance.objective
        inf = np.inf
        if obj == "perf":
            self.f = W
            self.g = W
            lam = float(instance.requests - 1)
            self.lam = lambda m: lam
            self.const = 0.0
        elif obj == "bottleneck":
            self.f = np.where(valid, 0.0, inf)
            self.g = W
            self.lam = lambda m: 1.0
            self.const = 0.0
        else:  # thesis_cost
            T_tot, S_tot, C_tot = instance.T_total, instance.S_total, instance.C_total
            send_raw = np.concatenate([[0.0], s])
            conv = np.log1p(C) / math.log1p(C_tot) if C_tot > 0 else np.zeros_like(T)
            sterm = send_raw[None, :] / S_tot if S_tot > 0 else np.zeros((1, n + 1))
            f = instance.alpha * T / T_tot + instance.beta * sterm - instance.gamma * conv
            self.f = np.where(valid, f, inf)
            self.g = np.where(valid, T, inf)
            d = instance.delta
            self.lam = lambda m: d * m / T_tot
            self.const = -d

    def value(self, sizes: Sequence[int]) -> float:
        """The objective through the matrices (for cross-checks; the evaluator is authoritative)."""
        bounds = sizes_to_bounds(sizes)
        m = len(bounds)
        return (math.fsum(self.f[a, b] for a, b in bounds) + self.lam(m) * max(self.g[a, b] for a, b in bounds)
                + self.const)


def interval_costs(instance: GroupingInstance) -> IntervalCosts:
    return IntervalCosts(instance)


# ---------------------------------------------------------------------------------- formulations


def _pyomo():
    import pyomo.environ as pyo

    return pyo


def build_milp_compact(instance: GroupingInstance, m: int | None = None):
    """Digest §5.3 **MILP A** (compact assignment formulation, ``O(n m)`` binaries) for exactly
    ``m`` groups (default ``k``).

    ``x[j,i]`` = part ``j`` in group ``i``; ``sum_i x[j,i] = 1``; ``x[0,0] = x[n-1,m-1] = 1``;
    staircase ``x[j+1,i] <= x[j,i] + x[j,i-1]``; ``e[j,i] >= x[j,i] - x[j+1,i]`` (``e[n-1,i] >=
    x[n-1,i]``) marks group ends (continuous: every objective pushes it down). Added tightening
    (not in the digest, valid for nonempty ordered groups): ``x[j,i] = 0`` for ``i > j`` and for
    ``m-1-i > n-1-j``.

    * perf: ``min T_tot + sum_j D_j sum_i e[j,i] + (R-1) theta``, ``theta >= W_i``;
    * bottleneck: ``min theta``, ``theta >= W_i`` (``W_i`` without ``e`` terms if no transfers);
    * thesis_cost: ``min alpha + beta/S_tot sum s_j e[j,i] - gamma/log(1+C_tot) sum_i phi_i +
      delta m/T_tot theta_T - delta`` with ``theta_T >= T_i`` and the chords
      ``phi_i <= log(1+c) + (log(1+c') - log(1+c)) / (c' - c) (C_i - c)`` for consecutive ``c < c'``
      of the counts a group can have (the sums of contiguous runs of ``c_j``): exact at those
      counts because ``log(1+.)`` is concave and ``phi_i`` is maximised. Correction of digest §5.3,
      which takes a chord per integer ``c = 0..C_tot-1``: same optimum, but ``O(C_tot)`` rows, so a
      part with 10^9 convolutions built a model that never finished (found by the fuzz test); the
      chords here number at most ``min(C_tot, n(n+1)/2)``.
    """
    pyo = _pyomo()
    inst = instance
    n = inst.n
    m = inst.k if m is None else int(m)
    if not 1 <= m <= n:
        raise InstanceError("k", f"the compact MILP needs 1 <= m <= n = {n}, got {m}")
    M = pyo.ConcreteModel(name=f"grouping_compact_{inst.name}_m{m}")
    J, I = range(n), range(m)
    M.J = pyo.Set(initialize=list(J))
    M.I = pyo.Set(initialize=list(I))
    M.x = pyo.Var(M.J, M.I, domain=pyo.Binary)
    M.e = pyo.Var(M.J, M.I, bounds=(0, 1))
    for j in J:
        for i in I:
            if i > j or (m - 1 - i) > (n - 1 - j):
                M.x[j, i].fix(0)
    M.x[0, 0].fix(1)
    M.x[n - 1, m - 1].fix(1)
    M.one_group = pyo.Constraint(M.J, rule=lambda M, j: sum(M.x[j, i] for i in I) == 1)

    def stair(M, j, i):
        if j == n - 1:
            return pyo.Constraint.Skip
        return M.x[j + 1, i] <= M.x[j, i] + (M.x[j, i - 1] if i > 0 else 0)

    M.stair = pyo.Constraint(M.J, M.I, rule=stair)
    M.end = pyo.Constraint(M.J, M.I, rule=lambda M, j, i: M.e[j, i] >= M.x[j, i] - (M.x[j + 1, i] if j < n - 1 else 0))
    t, s, c = inst.t, inst.s, inst.c
    B = inst.bandwidth_bytes_per_s
    obj = inst.objective
    if obj in ("perf", "bottleneck"):
        D = [inst.transfer_bytes(j, j, m) / B for j in J]  # transfer of a stage ending at part j
        M.theta = pyo.Var(domain=pyo.NonNegativeReals)
        M.W = pyo.Expression(M.I, rule=lambda M, i: sum(t[j] * M.x[j, i] for j in J)
                             + sum(D[j] * M.e[j, i] for j in J if D[j] > 0))
        M.bottleneck = pyo.Constraint(M.I, rule=lambda M, i: M.theta >= M.W[i])
        if obj == "perf":
            M.obj = pyo.Objective(expr=inst.T_total + sum(D[j] * M.e[j, i] for j in J for i in I if D[j] > 0)
                                  + (inst.requests - 1) * M.theta, sense=pyo.minimize)
        else:
            M.obj = pyo.Objective(expr=M.theta, sense=pyo.minimize)
    else:
        T_tot, S_tot, C_tot = inst.T_total, inst.S_total, inst.C_total
        M.thetaT = pyo.Var(domain=pyo.NonNegativeReals)
        M.balance = pyo.Constraint(M.I, rule=lambda M, i: M.thetaT >= sum(t[j] * M.x[j, i] for j in J))
        expr = inst.alpha - inst.delta + inst.delta * m / T_tot * M.thetaT
        if S_tot > 0 and inst.beta > 0:
            expr = expr + inst.beta / S_tot * sum(s[j] * M.e[j, i] for j in J for i in I if s[j] > 0)
        if C_tot > 0 and inst.gamma > 0:
            # breakpoints: the conv counts a group can have (sums of contiguous runs of c)
            V = sorted({sum(c[a:b + 1]) for a in J for b in range(a, n)})
            logC = math.log1p(C_tot)
            M.phi = pyo.Var(M.I, bounds=(0, logC))
            M.Cnt = pyo.Expression(M.I, rule=lambda M, i: sum(c[j] * M.x[j, i] for j in J if c[j]))
            M.CHORDS = pyo.Set(initialize=list(range(len(V) - 1)))

            def chord(M, i, q):
                lo, hi = V[q], V[q + 1]
                return M.phi[i] <= math.log1p(lo) + (math.log1p(hi) - math.log1p(lo)) / (hi - lo) * (M.Cnt[i] - lo)

            M.chord = pyo.Constraint(M.I, M.CHORDS, rule=chord)
            expr = expr - inst.gamma / logC * sum(M.phi[i] for i in I)
        M.obj = pyo.Objective(expr=expr, sense=pyo.minimize)
    M._grouping = ("compact", n, m)
    return M


def build_milp_interval(instance: GroupingInstance, m: int | None = None, deadline=None):
    """Digest §5.3 **MILP B** (interval / path formulation, ``n(n+1)/2`` binaries) for exactly
    ``m`` groups (default ``k``).

    ``z[a,b]`` = the parts ``a..b`` (0-based, inclusive) form a group; flow conservation along the
    chain (``sum_b z[0,b] = 1``, ``sum_a z[a,n-1] = 1``, ``sum_{a<=j} z[a,j] = sum_{b>=j+1}
    z[j+1,b]``), ``sum z = m``; ``theta >= sum_{a<=j<=b} g(a,b) z[a,b]`` for every part ``j``
    (exactly one chosen interval covers ``j``); ``min sum f z + lambda_m theta + const``. ``f`` and
    ``g`` are precomputed per interval (:class:`IntervalCosts`), so the log conv score is exact.

    The cover rows hold about ``n^3/6`` terms (20 s of Pyomo at ``n = 400``): with a ``deadline``
    (:class:`~splitopt.solvers.deadline.Deadline`) every row first checks it and the build raises
    ``deadline.no_answer(...)`` (a ``SolverFailed`` with status ``time_limit``) once it has passed.
    """
    pyo = _pyomo()

    def checked(rule):
        def wrapped(M, j):
            if deadline is not None and deadline.over():
                raise deadline.no_answer(f" (the interval MILP was still being built, n = {n})")
            return rule(M, j)
        return wrapped

    inst = instance
    n = inst.n
    m = inst.k if m is None else int(m)
    if not 1 <= m <= n:
        raise InstanceError("k", f"the interval MILP needs 1 <= m <= n = {n}, got {m}")
    ic = interval_costs(inst)
    pairs = [(a, b) for a in range(n) for b in range(a, n)]
    M = pyo.ConcreteModel(name=f"grouping_interval_{inst.name}_m{m}")
    M.P = pyo.Set(initialize=pairs, dimen=2)
    M.z = pyo.Var(M.P, domain=pyo.Binary)
    M.first = pyo.Constraint(expr=sum(M.z[0, b] for b in range(n)) == 1)
    M.last = pyo.Constraint(expr=sum(M.z[a, n - 1] for a in range(n)) == 1)
    M.flow = pyo.Constraint(range(n - 1), rule=checked(lambda M, j: sum(M.z[a, j] for a in range(j + 1))
                                                       == sum(M.z[j + 1, b] for b in range(j + 1, n))))
    M.count = pyo.Constraint(expr=sum(M.z[p] for p in pairs) == m)
    lam = ic.lam(m)
    f = {(a, b): float(ic.f[a, b + 1]) for a, b in pairs}
    expr = sum(f[p] * M.z[p] for p in pairs if f[p] != 0.0) + ic.const
    if lam > 0:
        g = {(a, b): float(ic.g[a, b + 1]) for a, b in pairs}
        M.theta = pyo.Var(domain=pyo.NonNegativeReals)
        M.cover = pyo.Constraint(range(n), rule=checked(lambda M, j: M.theta >= sum(
            g[a, b] * M.z[a, b] for a in range(j + 1) for b in range(j, n) if g[a, b] != 0.0)))
        expr = expr + lam * M.theta
    M.obj = pyo.Objective(expr=expr, sense=pyo.minimize)
    M._grouping = ("interval", n, m)
    return M


def sizes_from_model(model) -> list[int]:
    """Read the group sizes from a solved :func:`build_milp_compact` / :func:`build_milp_interval`."""
    kind, n, m = model._grouping
    if kind == "interval":
        sizes = sorted((a, b) for (a, b) in model.P if (model.z[a, b].value or 0.0) > 0.5)
        return [b - a + 1 for a, b in sizes]
    group = []
    for j in range(n):
        vals = [model.x[j, i].value or 0.0 for i in range(m)]
        group.append(int(np.argmax(vals)))
    return [group.count(i) for i in range(m)]


__all__ = ["evaluate", "stage_table", "perf_closed_form", "perf_recurrence", "check_assignment", "sizes_to_bounds",
           "cuts_to_sizes", "IntervalCosts", "interval_costs", "build_milp_compact", "build_milp_interval",
           "sizes_from_model"]
