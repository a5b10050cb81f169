"""Formulation C of the ``pipeline`` family (digest 001 §8.1) and its joint version over every
allowed ``b`` (digest §8.5 (ii)); overview and corrections in :mod:`.pipeline_milp`.
"""

from __future__ import annotations

from collections import defaultdict

from splitopt.errors import InstanceError
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import (
    make_assignment,
    xi,
)
from splitopt.models.pipeline_milp_common import (
    HIGHS_OPTIONS,
    Coefficients,
    _finish,
    _hop_terms,
    _Lin,
    _memory_row,
    _require_paper_memory,
    _rows,
)


# ---------------------------------------------------------------------- Formulation C
def _c_variables(m, instance: PipelineInstance, reachable, cumulative: bool = False) -> None:
    """Variables ``x``, ``o``, ``z`` and the structural rows of Formulation C; ``reachable(v, n2)``
    says whether a transfer ``v -> n2`` has a route (``v`` = ``"c"`` or a server).

    ``cumulative``: also block ends ``e[i, n]`` and client prefix ends ``ec[i]``, tied to ``x`` by
    the equalities ``x[i, n] - x[i-1, n] = o[i, n] - e[i-1, n]``, ``e[I-1, n] = x[I-1, n]`` and
    ``ec[i] = x[i, c] - x[i+1, c]``. With them the compute of a block is written with prefix sums
    ``P`` (``sum_i x[i, n] w_i = sum_i e[i, n] P_(i+1) - sum_i o[i, n] P_i``, an identity under the
    equalities, by telescoping), as Formulation B's block arcs do: the coefficients are then block
    sums, never a single tiny layer's time (VGG-16's fc3 at 1e4 FLOP made the per-layer
    coefficients span 4e10 and HiGHS's optimum untrustworthy). At most one block per server
    (``distinct``) makes ``o`` and ``e`` exact start/end indicators whenever the server is used."""
    import pyomo.environ as pyo

    I, N = instance.n_layers, instance.n_servers
    C = "c"
    V = [C] + list(range(N))
    m.x = pyo.Var(range(I), V, domain=pyo.Binary)
    m.o = pyo.Var(range(I), range(N), bounds=(0, 1))
    m.cons = _rows(pyo)
    for i in range(I):
        m.cons.add(sum(m.x[i, v] for v in V) == 1)
    m.x[0, C].fix(1)
    m.x[I - 1, C].fix(0)
    for i in range(I - 1):
        m.cons.add(m.x[i + 1, C] <= m.x[i, C])
    for n in range(N):
        for i in range(I):
            m.cons.add(m.o[i, n] >= m.x[i, n] - (m.x[i - 1, n] if i > 0 else 0))
        m.cons.add(sum(m.o[i, n] for i in range(I)) <= 1)
    if instance.max_submodels is not None:
        m.cons.add(sum(m.o[i, n] for i in range(I) for n in range(N)) <= instance.max_submodels - 1)
    pairs = []
    for i in range(I - 1):
        for v in V:
            for n2 in range(N):
                if v == n2:
                    continue
                if reachable(v, n2):
                    pairs.append((i, v, n2))
                else:
                    m.cons.add(m.x[i, v] + m.x[i + 1, n2] <= 1)
    m.z = pyo.Var(pairs, bounds=(0, 1))
    for i, v, n2 in pairs:
        m.cons.add(m.z[i, v, n2] >= m.x[i, v] + m.x[i + 1, n2] - 1)
    m._cumulative = cumulative
    if cumulative:
        m.e = pyo.Var(range(I), range(N), bounds=(0, 1))
        m.ec = pyo.Var(range(I - 1), bounds=(0, 1))
        for n in range(N):
            for i in range(I):
                m.cons.add(m.x[i, n] - (m.x[i - 1, n] if i > 0 else 0) == m.o[i, n] - (m.e[i - 1, n] if i > 0 else 0))
            m.cons.add(m.e[I - 1, n] == m.x[I - 1, n])
        for i in range(I - 1):
            m.cons.add(m.ec[i] == m.x[i, C] - m.x[i + 1, C])


def _c_stages(instance: PipelineInstance, co: Coefficients, m):
    """Stage contributions of Formulation C at ``co.b``: ``(stages, client_F, client_B)`` as in
    :func:`_finish`; pairs unreachable at this ``b`` are returned apart as a list."""
    I, N = instance.n_layers, instance.n_servers
    C = "c"
    stages = []
    cum = getattr(m, "_cumulative", False)

    def prefix(row):
        out = [0.0]
        for v in row:
            out.append(out[-1] + v)
        return out

    for n in range(N):
        F, B = _Lin(), _Lin()
        pF, pB = prefix(co.gF[n]), prefix(co.gB[n])
        for i in range(I):
            if cum:  # block sums (see _c_variables): sum_i e[i] P(i+1) - o[i] P(i)
                F.add(pF[i + 1], m.e[i, n])
                F.add(-pF[i], m.o[i, n])
                B.add(pB[i + 1], m.e[i, n])
                B.add(-pB[i], m.o[i, n])
            else:
                F.add(co.gF[n][i], m.x[i, n])
                B.add(co.gB[n][i], m.x[i, n])
            F.add(instance.t0_server_s, m.o[i, n])
            B.add(instance.t1_server_s, m.o[i, n])
        stages += [(("F", n), ("G", n), F), (("B", n), ("G", n), B)]
    client_F = {c: _Lin(const=instance.t0_client_s) for c in co.busy}
    client_B = {c: _Lin(const=instance.t1_client_s) for c in co.busy}
    for c in co.busy:
        pF, pB = prefix(co.cF[c]), prefix(co.cB[c])
        for i in range(I):
            if cum:  # the client prefix ends at i: its compute is the prefix sum
                if i < I - 1:
                    client_F[c].add(pF[i + 1], m.ec[i])
                    client_B[c].add(pB[i + 1], m.ec[i])
            else:
                client_F[c].add(co.cF[c][i], m.x[i, C])
                client_B[c].add(co.cB[c][i], m.x[i, C])
    hop_lins: dict = {}
    blocked = []
    for i, v, n2 in m.z.index_set():
        if v == C:
            if co.client_first[n2] is None:
                blocked.append((i, v, n2))
                continue
            for c in co.busy:
                (_, cf, cb), = _hop_terms(instance, i, co.bm[c], [(c, co.client_first[n2][c])])
                client_F[c].add(cf, m.z[i, v, n2])
                client_B[c].add(cb, m.z[i, v, n2])
            hops = list(co.client_relay[n2])
            tkey = ("c", n2)
        else:
            hops = [(hop, co.b) for hop in co.server_hops[(v, n2)]]
            tkey = (v, n2)
        for h, (hop, samples) in enumerate(hops):
            (_, cf, cb), = _hop_terms(instance, i, samples, [hop])
            key = tkey + (h,)
            hop_lins.setdefault(key, (_Lin(), _Lin()))
            hop_lins[key][0].add(cf, m.z[i, v, n2])
            hop_lins[key][1].add(cb, m.z[i, v, n2])
    for key, (lf, lb) in hop_lins.items():
        stages += [(("LF",) + key, ("L",) + key, lf), (("LB",) + key, ("L",) + key, lb)]
    return stages, client_F, client_B, blocked


def _c_extract(instance: PipelineInstance, m, b_of):
    I, N = instance.n_layers, instance.n_servers

    def extract():
        cut = sum(1 for i in range(I) if (m.x[i, "c"].value or 0) > 0.5)
        cuts, servers = [], []
        for i in range(cut, I):
            n = max(range(N), key=lambda n: m.x[i, n].value or 0.0)
            if not servers or servers[-1] != n:
                cuts.append(i)
                servers.append(n)
        return make_assignment(instance, b_of(), cuts, servers)

    return extract


def build_c(instance: PipelineInstance, b: int):
    """Formulation C for ``placement="distinct"`` (see the module docstring)."""
    import pyomo.environ as pyo

    if instance.placement != "distinct":
        raise InstanceError("placement", f"Formulation C models placement 'distinct' only, got {instance.placement!r}")
    _require_paper_memory(instance)
    co = Coefficients(instance, b)
    I, N = instance.n_layers, instance.n_servers
    m = pyo.ConcreteModel(name=f"pipeline-C[{instance.name}, b={b}]")
    _c_variables(m, instance, lambda v, n2: (co.client_first[n2] is not None) if v == "c"
                 else co.server_hops[(v, n2)] is not None, cumulative=True)
    for n in range(N):
        _memory_row(m, instance.server_memory_bytes[n], [(b * co.psi[i], m.x[i, n]) for i in range(I)])
    for c in range(instance.n_clients):
        _memory_row(m, instance.client_memory_bytes[c], [(co.bm[c] * co.psi[i], m.x[i, "c"]) for i in range(I)])
    stages, client_F, client_B, _blocked = _c_stages(instance, co, m)
    _finish(m, instance, co, stages, client_F, client_B)
    m._extract = _c_extract(instance, m, lambda: b)
    m._highs_options = HIGHS_OPTIONS
    return m


# ---------------------------------------------------------------------- joint over b (C)
def build_joint_c(instance: PipelineInstance, b_values=None, deadline=None):
    """Formulation C with choice binaries over ``b_values`` (default every allowed ``b``), digest
    §8.5 (ii): per-``b`` stage rows and ``T_f`` switched by big-M on ``beta_j``, ``xi T`` as
    ``sum_j xi_j w_j`` with ``w_j >= T - Tbar (1 - beta_j)``, memory ``sum psi x <= sum_j (M / b_j)
    beta_j`` (exact because ``sum_j beta_j = 1``). About ``|b_values|`` times larger than one
    :func:`build_c`. ``deadline`` (a :class:`~splitopt.solvers.deadline.Deadline`, checked per
    ``b``): once it has passed the build stops with its ``no_answer()`` error."""
    import pyomo.environ as pyo

    if instance.placement != "distinct":
        raise InstanceError("placement", f"the joint Formulation C models placement 'distinct' only, got "
                                         f"{instance.placement!r}")
    _require_paper_memory(instance)
    bs = list(instance.allowed_b() if b_values is None else b_values)
    def check(j):
        if deadline is not None and deadline.over():
            raise deadline.no_answer(f" (the joint model was built for {j} of {len(bs)} micro-batch sizes)")

    cos = []
    for j, b in enumerate(bs):
        check(j)
        cos.append(Coefficients(instance, b))
    u = max(co.unit for co in cos)
    I, N = instance.n_layers, instance.n_servers
    m = pyo.ConcreteModel(name=f"pipeline-C-joint[{instance.name}, {len(bs)} b]")
    _c_variables(m, instance, lambda v, n2: any((co.client_first[n2] is not None) if v == "c"
                                                else co.server_hops[(v, n2)] is not None for co in cos),
                cumulative=True)
    J = range(len(bs))
    m.beta = pyo.Var(J, domain=pyo.Binary)
    m.cons.add(sum(m.beta[j] for j in J) == 1)
    psi = cos[0].psi
    psi_s = sum(psi)
    if psi_s > 0:
        for n in range(N):
            cap = instance.server_memory_bytes[n]
            if cap is not None:
                m.cons.add(sum(psi[i] / psi_s * m.x[i, n] for i in range(I))
                           <= sum(min(cap / (b * psi_s), 2.0) * m.beta[j] for j, b in enumerate(bs)))
        for c in range(instance.n_clients):
            cap = instance.client_memory_bytes[c]
            if cap is not None:
                m.cons.add(sum(psi[i] / psi_s * m.x[i, "c"] for i in range(I)) <= sum(
                    (min(cap / (co.bm[c] * psi_s), 2.0) if co.bm[c] > 0 else 2.0) * m.beta[j]
                    for j, co in enumerate(cos)))
    m.T = pyo.Var(domain=pyo.NonNegativeReals)
    m.Tf = pyo.Var(domain=pyo.NonNegativeReals)
    m.w = pyo.Var(J, domain=pyo.NonNegativeReals)
    m.tauF = pyo.Var(J, domain=pyo.NonNegativeReals)
    m.tauB = pyo.Var(J, domain=pyo.NonNegativeReals)
    m.rows = _rows(pyo)
    res = instance.bottleneck == "resource"

    def ub(lin: _Lin) -> float:  # variables in [0, 1]: the positive coefficients bound the row
        return (sum(max(c, 0.0) for c, _v in lin.terms) + lin.const) / u

    Tbar = 0.0
    for j, co in enumerate(cos):
        check(j)
        stages, cF, cB, blocked = _c_stages(instance, co, m)
        for i, v, n2 in blocked:
            m.rows.add(m.x[i, v] + m.x[i + 1, n2] <= 2 - m.beta[j])
        off = 1 - m.beta[j]
        groups: dict = defaultdict(_Lin)
        total = _Lin()
        for ks, kr, lin in stages:
            groups[kr if res else ks] += lin
            total += lin
        rows = [lin for lin in groups.values() if lin.terms]
        for c in co.busy:
            if res:
                tot = _Lin()
                tot += cF[c]
                tot += cB[c]
                rows.append(tot)
            else:
                rows += [cF[c], cB[c]]
            m.rows.add(m.tauF[j] >= cF[c].expr(u))
            m.rows.add(m.tauB[j] >= cB[c].expr(u))
        for lin in rows:
            Tbar = max(Tbar, ub(lin))
            m.rows.add(m.T >= lin.expr(u) - ub(lin) * off)
        big = ub(total) + max((ub(cF[c]) for c in co.busy), default=0.0) + max((ub(cB[c]) for c in co.busy),
                                                                               default=0.0)
        m.rows.add(m.Tf >= total.expr(u) + m.tauF[j] + m.tauB[j] - big * off)
    for j in J:
        m.rows.add(m.w[j] >= m.T - Tbar * (1 - m.beta[j]))
    m.obj = pyo.Objective(expr=m.Tf + sum(xi(instance.batch, b) * m.w[j] for j, b in enumerate(bs)),
                          sense=pyo.minimize)
    m._unit = u
    m._extract = _c_extract(instance, m, lambda: bs[max(J, key=lambda j: m.beta[j].value or 0.0)])
    m._highs_options = HIGHS_OPTIONS
    return m
