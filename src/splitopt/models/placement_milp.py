"""The MILP of the ``placement`` family (the device model of Tarnawski et al., NeurIPS 2020, §4;
split from :mod:`splitopt.models.placement`, whose evaluator scores every solution), and the
placement read back from a solved model.

Source: the peer's integer program (the public ``throughput-ip/ip.py`` of
msr-fiddle/dnn-partitioning, read for the model, not copied).

* :func:`build_milp`: the peer's IP, strengthened:

  - one assignment variable per colour class (the peer writes ``x_u = x_v`` rows per class);
  - communication ``in_{u,d} >= x_{v,d} - x_{u,d}`` and ``out_{u,d} >= x_{u,d} - x_{v,d}`` per edge
    and accelerator as in the peer's IP (a tensor paid once per device however many consumers it
    has there), on class-level tensors (edges inside a class dropped);
  - ``contiguity="convex"``: the peer's ideal variables ``z_{v,d} >= x_{v,d}``, ``z_v <= z_u`` and
    ``z_v <= x_v - x_u + 1`` per forward edge ``u -> v`` (ours on classes; the peer applies them to
    accelerators and CPUs alike); ``"chain"`` (the peer's DP model, absent from its IP): devices are
    *positions* in a chain, ``pos(u) <= pos(v)`` for every forward edge (written on cumulative sums
    ``sum_{s<=t} x_{u,s} >= sum_{s<=t} x_{v,s}``), and which positions are CPU cores is a variable;
  - symmetry breaking for identical devices (absent from the peer's IP): accelerator ``j`` may hold
    class ``g`` only if accelerator ``j-1`` holds a class before ``g`` (devices ordered by their
    first class); the same for CPU cores; for ``chain``, used positions form a prefix;
  - valid inequalities: ``T >= (total work lower bound) / devices`` (the water-filling bound of
    :func:`~splitopt.models.placement.work_bound`), ``T >=`` each class's cheapest load, and ``T >=`` any proven bound the
    caller passes (``lower_bound``: the device MILP solver passes the best of the work, pigeonhole
    (:func:`~splitopt.models.placement.cardinality_bound`) and isolation min-cut bounds);
  - numerics (ours): tensors and accelerator times below 1e-7 of their unit (or 1e-8 of the
    largest class time, when that is more) enter each accelerator's load through one aggregate
    variable scaled by the largest of them (exact; only those below 1e-6 of that largest are
    dropped), CPU times and memory sizes below it are dropped (a relaxation: the bound stays valid,
    the evaluator scores every solution with the true data), and memory rows are omitted when
    everything fits on one accelerator, so the coefficient range stays below the 1e9 that
    :mod:`splitopt.solvers.exact.highs` trusts.
"""

from __future__ import annotations

import math

import numpy as np

from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import _knapsack_max, class_data, class_tensors, work_bound


def build_seconds(instance: PlacementInstance) -> float:
    """A generous estimate of the seconds the MILP needs before HiGHS starts (Pyomo build and hand
    over): measured 2026-11-24 on the 2-core machine under load, 3.2-5.4 ms per node for 1,175-3,047
    nodes and 6 devices; 6 ms per node and device-sixth here."""
    return 6e-3 * instance.n_nodes * max(1.0, instance.n_devices / 6.0)


def build_milp(instance: PlacementInstance, *, symmetry: bool = True, valid_inequalities: bool = True,
               incumbent: float | None = None, lower_bound: float | None = None):
    """Pyomo MILP of the instance (module docstring). Times are in units of ``model._unit`` (the
    work bound, so that rows have O(1) coefficients); ``incumbent`` (seconds, the value of a known
    solution) caps ``T``; ``lower_bound`` (seconds, a proven lower bound such as
    :func:`cardinality_bound`) is added as the row ``T >= lower_bound`` with the valid inequalities."""
    import pyomo.environ as pyo

    cls, cpu, acc, size, sup = class_data(instance)
    G = len(cls)
    k, l_ = instance.n_accelerators, instance.n_cpus
    D = k + l_
    unit = work_bound(instance) or max(cpu + acc + [s for _p, _c, s in instance.tensors]) or 1.0
    m = pyo.ConcreteModel(name=f"throughput-device[{instance.name}]")
    m._unit = unit
    m._classes = cls
    # class-level tensors (producer class, consumer classes, seconds in units, backward?); a tensor
    # below 1e-7 of the time unit is dropped: a relaxation (loads only shrink), so the bound stays
    # valid and the evaluator scores the solution with it; it keeps HiGHS's coefficient range
    # within what it certifies
    # (1e-8 of the largest class time when that is larger: the range stays within 1e8 however the
    # times spread; issue 22 §4)
    tiny = max(1e-7, 1e-8 * max(cpu + acc) / unit) if G else 1e-7
    cls_of, alltens = class_tensors(instance)
    ctens = [(gu, gs, sec / unit, b) for gu, gs, sec, b in alltens if sec > tiny * unit]
    # the tensors and accelerator times at or below ``tiny`` are kept exactly through one aggregate
    # per accelerator (and part): ``y >= sum (item / eps) x indicator`` with ``eps`` the largest of
    # them, and ``eps * y`` in the load row, so every coefficient stays within the range HiGHS
    # certifies; only items below 1e-6 eps (1e-13 of the unit) are dropped. Dropping all of them (as
    # before 2026-11-25) left the bound a hair below the evaluator's value: on the peer's bert_l-3
    # training graph 1.16e-10 s (1.8e-9 relative) for all three contiguities, so no proof
    stens = [(gu, gs, sec / unit, b) for gu, gs, sec, b in alltens if sec <= tiny * unit]
    back = instance.backward
    chain = instance.contiguity == "chain"
    m.G = pyo.RangeSet(0, G - 1)
    m.D = pyo.RangeSet(0, D - 1)
    m.x = pyo.Var(m.G, m.D, domain=pyo.Binary)
    m.T = pyo.Var(domain=pyo.NonNegativeReals)
    if chain:
        # positions 0..D-1 of a chain; cpu[t] = 1 when position t is a CPU core
        m.cpu = pyo.Var(m.D, domain=pyo.Binary)
        m.ncpu = pyo.Constraint(expr=sum(m.cpu[t] for t in m.D) == l_)

        def is_cpu(t):
            return m.cpu[t]
    else:
        def is_cpu(t):
            return 1 if t >= k else 0
    m.one = pyo.Constraint(m.G, rule=lambda m, g: sum(m.x[g, d] for d in m.D) == 1)
    # unsupported classes only on CPU cores
    for g in range(G):
        if not sup[g]:
            for d in range(D):
                if chain:
                    m.add_component(f"unsup_{g}_{d}", pyo.Constraint(expr=m.x[g, d] <= m.cpu[d]))
                elif d < k:
                    m.x[g, d].fix(0)
    m.Tn = pyo.RangeSet(0, len(ctens) - 1) if ctens else pyo.Set(initialize=[])
    m.cin = pyo.Var(m.Tn, m.D, bounds=(0, 1))
    m.cout = pyo.Var(m.Tn, m.D, bounds=(0, 1))
    rows = pyo.ConstraintList()
    m.comm_rows = rows
    for t_i, (gu, gs, _s, _b) in enumerate(ctens):
        for d in range(D):
            for gv in gs:
                rows.add(m.cin[t_i, d] >= m.x[gv, d] - m.x[gu, d])
                rows.add(m.cout[t_i, d] >= m.x[gu, d] - m.x[gv, d])
    # chain: big-M of the rows switched off by cpu[t] (from the instance: issue 22 §4; the sum of
    # all times spanned 6e8 against the operator graphs' small coefficients). With an incumbent
    # cap, a CPU position holds classes of CPU time <= incumbent, so its accelerator load is at
    # most the fractional knapsack of (accelerator time + every tensor it touches, twice) under
    # that capacity; an accelerator position's CPU time likewise under its accelerator time.
    comm = [0.0] * G
    for gu, gs, s_, _b in ctens + stens:
        for g in (gu, *gs):
            comm[g] += 2 * s_
    M = 1.0 + math.fsum(cpu) / unit + math.fsum(acc) / unit + 2 * math.fsum(s for *_x, s, _b in ctens + stens)
    M_acc = M_cpu = M
    if chain and incumbent is not None and math.isfinite(incumbent):
        cap_t = incumbent / unit * (1 + 1e-9)
        M_acc = min(M, _knapsack_max([a / unit + c for a, c in zip(acc, comm)], [c / unit for c in cpu], cap_t))
        M_cpu = min(M, _knapsack_max([c / unit for c, ok in zip(cpu, sup) if ok],
                                     [a / unit for a, ok in zip(acc, sup) if ok], cap_t))
        M_acc, M_cpu = M_acc * (1 + 1e-9) + 1e-9, M_cpu * (1 + 1e-9) + 1e-9

    # per class: (forward, backward) seconds on an accelerator and on a CPU core
    split = {key: [[math.fsum(vals[i] for i in members if back[i] == b) for b in (False, True)] for members in cls]
             for key, vals in (("acc", instance.acc_seconds), ("cpu", instance.cpu_seconds))}

    def part_time(key, g, part, small=False):
        f, b = split[key][g]
        v = (f + b if part is None else (b if part else f)) / unit
        # below ``tiny`` into the aggregate of the small items (accelerator times; CPU times below
        # it dropped: a relaxation, loads only shrink, the evaluator scores the true times); it keeps
        # the coefficient range of the operator graphs (bert_l-3: 1.5e-8) within what HiGHS certifies
        if small:
            return v if 0 < v < tiny else 0.0
        return v if v >= tiny else 0.0

    parts = [None] if instance.objective == "max-load" else [False, True]
    small_acc = [[part_time("acc", g, part, small=True) for g in range(G)] for part in parts]
    eps = max([s_ for *_x, s_, _b in stens] + [v for row in small_acc for v in row] + [0.0])
    # the largest coefficient of the load rows: eps in them and item / eps in the aggregate rows
    # keep the range within SMALL_RANGE of it (else the small items are dropped, a relaxation)
    cap0 = instance.acc_memory_bytes
    c_max = max([1.0, M_acc if chain else 0.0, M_cpu if chain and l_ else 0.0] + [v / unit for v in (cpu if l_ else []) + acc]
                + [s_ for *_x, s_, _b in ctens] + ([math.fsum(size) / cap0] if cap0 else []))
    if eps > 0 and c_max / eps <= SMALL_RANGE:
        floor = eps * max(1e-6, c_max / SMALL_RANGE)
        stens = [t for t in stens if t[2] >= floor]
        m.Ts = pyo.RangeSet(0, len(stens) - 1) if stens else pyo.Set(initialize=[])
        m.sin = pyo.Var(m.Ts, m.D, bounds=(0, 1))
        m.sout = pyo.Var(m.Ts, m.D, bounds=(0, 1))
        for t_i, (gu, gs, _s, _b) in enumerate(stens):
            for d in range(D):
                for gv in gs:
                    rows.add(m.sin[t_i, d] >= m.x[gv, d] - m.x[gu, d])
                    rows.add(m.sout[t_i, d] >= m.x[gu, d] - m.x[gv, d])
        m.ysmall = pyo.Var(range(len(parts)), m.D, domain=pyo.NonNegativeReals)
        m.small_rows = pyo.ConstraintList()
        for pi, part in enumerate(parts):
            for d in range(D if chain else k):
                e = sum(small_acc[pi][g] / eps * m.x[g, d] for g in range(G) if small_acc[pi][g] >= floor)
                e += sum(s_ / eps * (m.sin[t_i, d] + m.sout[t_i, d]) for t_i, (_gu, _gs, s_, b) in enumerate(stens)
                         if part is None or b == part)
                if not isinstance(e, (int, float)):
                    m.small_rows.add(m.ysmall[pi, d] >= e)

    def acc_expr(d, part):
        e = sum(part_time("acc", g, part) * m.x[g, d] for g in range(G))
        e += sum(s * (m.cin[t_i, d] + m.cout[t_i, d]) for t_i, (_gu, _gs, s, b) in enumerate(ctens)
                 if part is None or b == part)
        if hasattr(m, "ysmall"):
            e += eps * m.ysmall[parts.index(part), d]
        return e

    def cpu_expr(d, part):
        return sum(part_time("cpu", g, part) * m.x[g, d] for g in range(G))

    m.Tpart = pyo.Var(range(len(parts)), domain=pyo.NonNegativeReals)
    if instance.objective == "max-load":
        m.tdef = pyo.Constraint(expr=m.T >= m.Tpart[0])
    else:
        m.tdef = pyo.Constraint(expr=m.T >= m.Tpart[0] + m.Tpart[1])
    m.load_rows = pyo.ConstraintList()
    for pi, part in enumerate(parts):
        for d in range(D):
            if chain:
                m.load_rows.add(m.Tpart[pi] >= acc_expr(d, part) - M_acc * m.cpu[d])
                if l_:  # (without CPU cores no position is one: the row would only widen the range)
                    m.load_rows.add(m.Tpart[pi] >= cpu_expr(d, part) - M_cpu * (1 - m.cpu[d]))
            elif d < k:
                m.load_rows.add(m.Tpart[pi] >= acc_expr(d, part))
            else:
                m.load_rows.add(m.Tpart[pi] >= cpu_expr(d, part))
    # memory (rows scaled by the capacity); none when everything fits on one accelerator (exact:
    # no row can bind), and sizes below 1e-7 of the capacity dropped otherwise (a relaxation, like
    # the tiny tensors: the evaluator checks the solution's memory; without it the coefficient range
    # of the shipped workloads, 4 bytes against 16 GiB, exceeds what HiGHS certifies)
    cap_ = instance.acc_memory_bytes
    if cap_ is not None and any(s > 0 for s in size) and not (cap_ > 0 and math.fsum(size) <= cap_):
        cap = cap_
        size = [s if s >= 1e-7 * cap else 0.0 for s in size] if cap > 0 else size
        m.mem_rows = pyo.ConstraintList()
        big = math.fsum(size) / cap if cap > 0 else 0.0
        if chain and cap > 0 and incumbent is not None and math.isfinite(incumbent):
            # a CPU position's bytes: at most the knapsack of sizes under CPU time <= incumbent
            big = min(big, _knapsack_max([z / cap for z in size], [c / unit for c in cpu],
                                         incumbent / unit * (1 + 1e-9)) * (1 + 1e-9))
        for d in range(D):
            if cap <= 0:
                for g in range(G):
                    if size[g] > 0:
                        if chain:
                            m.mem_rows.add(m.x[g, d] <= m.cpu[d])
                        elif d < k:
                            m.x[g, d].fix(0)
                continue
            e = sum(size[g] / cap * m.x[g, d] for g in range(G) if size[g] > 0)
            if chain:
                m.mem_rows.add(e <= 1 + big * m.cpu[d])
            elif d < k:
                m.mem_rows.add(e <= 1)
    # contiguity on forward classes
    fedges = sorted({(cls_of[u], cls_of[v]) for u, v in instance.forward_edges if cls_of[u] != cls_of[v]})
    if instance.contiguity == "convex" and fedges:
        fcls = sorted({g for e in fedges for g in e})
        m.z = pyo.Var(fcls, m.D, bounds=(0, 1))
        m.conv = pyo.ConstraintList()
        for d in range(D):
            for g in fcls:
                m.conv.add(m.z[g, d] >= m.x[g, d])
            for gu, gv in fedges:
                m.conv.add(m.z[gv, d] <= m.z[gu, d])
                m.conv.add(m.z[gv, d] <= m.x[gv, d] - m.x[gu, d] + 1)
    elif chain and fedges:
        m.prec = pyo.ConstraintList()
        for gu, gv in fedges:
            for t in range(D - 1):
                m.prec.add(sum(m.x[gu, s] for s in range(t + 1)) >= sum(m.x[gv, s] for s in range(t + 1)))
    # symmetry breaking
    if symmetry:
        m.sym = pyo.ConstraintList()
        if chain:
            m.used = pyo.Var(m.D, domain=pyo.Binary)
            for d in range(D):
                for g in range(G):
                    m.sym.add(m.x[g, d] <= m.used[d])
                m.sym.add(m.used[d] <= sum(m.x[g, d] for g in range(G)))
                if d + 1 < D:
                    m.sym.add(m.used[d] >= m.used[d + 1])
        else:
            for lo, hi in ((0, k), (k, D)):
                for d in range(lo + 1, hi):
                    for g in range(G):
                        if g < d - lo:
                            m.x[g, d].fix(0)
                        else:
                            m.sym.add(m.x[g, d] <= sum(m.x[h, d - 1] for h in range(g)))
    # valid inequalities
    if valid_inequalities:
        lbv = max(work_bound(instance), lower_bound or 0.0)
        m.lb = pyo.Constraint(expr=m.T >= lbv / unit * (1 - 1e-9))
    if incumbent is not None:
        # the cap sits 1e-6 above the incumbent: at 1e-9 HiGHS called a badly scaled model
        # infeasible (its tolerances) where a placement 1e-7 below the incumbent existed, and the
        # incumbent passed for optimal
        m.ub = pyo.Constraint(expr=m.T <= incumbent / unit * (1 + 1e-6))
    m.obj = pyo.Objective(expr=m.T, sense=pyo.minimize)
    return m


SMALL_RANGE = 5e8
"""The most the largest coefficient (load rows, their big-M, memory) may exceed the small items'
aggregate coefficients by (``build_milp``): within the 1e9 that :mod:`splitopt.solvers.exact.highs`
trusts. 5e8 since 2026-11-25 (2e8 at first): the peer's BERT-L3 training graph, chain, has a big-M of
37 units against small items of 9.2e-8 (4.0e8), and was left 1.8e-9 open with 2e8."""


def assignment_from_milp(instance: PlacementInstance, model) -> list[str]:
    """Device name per node from a solved model (the largest ``x`` per class; for ``chain`` the
    positions are mapped to accelerators and CPU cores in order)."""
    D = instance.n_devices
    k = instance.n_accelerators
    out: list[str] = [""] * instance.n_nodes
    chain = instance.contiguity == "chain"
    if chain:
        names: dict[int, str] = {}
        na = nc = 0
        for t in range(D):
            if (model.cpu[t].value or 0.0) > 0.5 and nc < instance.n_cpus:
                names[t] = f"cpu{nc}"
                nc += 1
            elif na < k:
                names[t] = f"acc{na}"
                na += 1
            else:
                names[t] = f"cpu{nc}"
                nc += 1
    for g, members in enumerate(model._classes):
        vals = [model.x[g, d].value or 0.0 for d in range(D)]
        d = int(np.argmax(vals))
        nm = names[d] if chain else instance.devices[d]
        for i in members:
            out[i] = nm
    return out


__all__ = ["build_milp", "assignment_from_milp", "SMALL_RANGE"]
