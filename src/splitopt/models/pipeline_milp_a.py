"""Formulation A of the ``pipeline`` family (digest 001 §8.2): the paper's stage-indexed model with
exact RLT or plain McCormick products; overview and corrections in :mod:`.pipeline_milp`.
"""

from __future__ import annotations

from collections import defaultdict

from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import (
    make_assignment,
)
from splitopt.models.pipeline_milp_common import (
    HIGHS_OPTIONS,
    Coefficients,
    _check_vars,
    _finish,
    _hop_terms,
    _Lin,
    _link_keys,
    _memory_row_lin,
    _resident_rows,
    _rows,
    _sum_lins,
)


# ---------------------------------------------------------------------- Formulation A
def build_a(instance: PipelineInstance, b: int, rlt: bool = True, cumulative: bool | None = None):
    """Formulation A (digest §8.2) with exact RLT products (``rlt=True``) or plain McCormick
    products (``rlt=False``); every placement semantics, both memory models.

    ``cumulative`` (default: ``rlt``) writes block compute and memory with prefix sums on start/end
    indicators of each (submodel, server) built from the exact RLT products ``h``/``hc`` (see the
    module docstring), instead of the per-layer products ``q = s y``; it needs ``rlt=True``, since
    the indicators then carry negative coefficients and McCormick lower bounds alone would not make
    them exact. ``cumulative=False`` keeps the digest's ``q`` form (the LP relaxations use it)."""
    import pyomo.environ as pyo

    if cumulative is None:
        cumulative = rlt
    if cumulative and not rlt:
        raise ValueError("cumulative block sums need the exact RLT products (rlt=True)")
    co = Coefficients(instance, b)
    I, N = instance.n_layers, instance.n_servers
    K = min(instance.max_submodels or I, I)
    agg = instance.placement == "aggregate"
    ks = range(1, K + 1)
    srv = range(2, K + 1)
    m = pyo.ConcreteModel(name=f"pipeline-A[{instance.name}, b={b}]")
    m.P = pyo.Var(range(I), ks, domain=pyo.Binary)
    m.y = pyo.Var(srv, range(N), domain=pyo.Binary)
    m.cons = _rows(pyo)
    for k in ks:
        for i in range(I - 1):
            m.cons.add(m.P[i, k] >= m.P[i + 1, k])
        if k < K:
            for i in range(I):
                m.cons.add(m.P[i, k] <= m.P[i, k + 1])
    for i in range(I):
        m.P[i, K].fix(1)
    m.P[0, 1].fix(1)
    m.P[I - 1, 1].fix(0)

    def s(i, k):
        return m.P[i, k] - (m.P[i, k - 1] if k > 1 else 0)

    def active(k):
        return 1 - m.P[I - 1, k - 1] if k > 1 else 1

    def cutv(i, k):  # layer i is the last of submodel k (i < I - 1)
        return m.P[i, k] - m.P[i + 1, k]

    for k in srv:
        m.cons.add(sum(s(i, k) for i in range(I)) >= active(k))
        m.cons.add(sum(m.y[k, n] for n in range(N)) == active(k))
        if k < K:
            for n in range(N):
                m.cons.add(m.y[k, n] + m.y[k + 1, n] <= 1)
    if instance.placement == "distinct":
        for n in range(N):
            m.cons.add(sum(m.y[k, n] for k in srv) <= 1)
    # products
    if not cumulative:
        m.q = pyo.Var(range(I), srv, range(N), bounds=(0, 1))
        _check_vars(I * len(srv) * N)
    gidx = [(k, n, n2) for k in srv if k < K for n in range(N) for n2 in range(N) if n != n2]
    m.g = pyo.Var(gidx, bounds=(0, 1))
    hidx = [(i, k, n, n2) for i in range(I - 1) for (k, n, n2) in gidx]
    _check_vars(len(hidx))
    m.h = pyo.Var(hidx, bounds=(0, 1))
    _check_vars(len(hidx))
    m.hc = pyo.Var(range(I - 1), range(N), bounds=(0, 1))
    x1 = {i: cutv(i, 1) for i in range(I - 1)}
    if rlt:
        for i in range(I if not cumulative else 0):
            for k in srv:
                m.cons.add(sum(m.q[i, k, n] for n in range(N)) == s(i, k))
                for n in range(N):
                    m.cons.add(m.q[i, k, n] <= m.y[k, n])
        for k, n, n2 in gidx:
            m.cons.add(m.g[k, n, n2] <= m.y[k, n])
        for k in srv:
            if k < K:
                for n2 in range(N):
                    m.cons.add(sum(m.g[k, n, n2] for n in range(N) if n != n2) == m.y[k + 1, n2])
        for k, n, n2 in gidx:
            m.cons.add(sum(m.h[i, k, n, n2] for i in range(I - 1)) == m.g[k, n, n2])
        for i in range(I - 1):
            for k in srv:
                if k < K:
                    m.cons.add(sum(m.h[i, k, n, n2] for n in range(N) for n2 in range(N) if n != n2)
                               <= cutv(i, k))
        for n2 in range(N):
            m.cons.add(sum(m.hc[i, n2] for i in range(I - 1)) == m.y[2, n2])
        for i in range(I - 1):
            m.cons.add(sum(m.hc[i, n2] for n2 in range(N)) == x1[i])
    else:
        for i in range(I):
            for k in srv:
                for n in range(N):
                    m.cons.add(m.q[i, k, n] >= s(i, k) + m.y[k, n] - 1)
        for k, n, n2 in gidx:
            m.cons.add(m.g[k, n, n2] >= m.y[k, n] + m.y[k + 1, n2] - 1)
        for i, k, n, n2 in hidx:
            m.cons.add(m.h[i, k, n, n2] >= cutv(i, k) + m.g[k, n, n2] - 1)
        for i in range(I - 1):
            for n2 in range(N):
                m.cons.add(m.hc[i, n2] >= x1[i] + m.y[2, n2] - 1)
    # unreachable transfers
    for n2 in range(N):
        if co.client_first[n2] is None:
            m.y[2, n2].fix(0)
    for k, n, n2 in gidx:
        if co.server_hops[(n, n2)] is None:
            m.g[k, n, n2].fix(0)
            m.cons.add(m.y[k, n] + m.y[k + 1, n2] <= 1)
    # block sums: ``block(k, n, row)`` is ``sum_i row[i] s(i, k) y[k, n]`` (zero off server n)
    if cumulative:
        # prefix sums on start/end indicators of submodel k on server n: E[i] = sum_n2 h[i, k, n, n2]
        # (k ends after layer i < I - 1), Elast (k ends at the last layer), S[i] = hc[i, n] (k = 2)
        # or sum_n' h[i, k - 1, n', n] (k starts after layer i). Exact because h, hc are.
        m.Elast = pyo.Var(srv, range(N), bounds=(0, 1))
        ends, starts = defaultdict(list), defaultdict(list)
        for i, k, n, n2 in hidx:
            ends[k, n].append((i, m.h[i, k, n, n2]))
            starts[k + 1, n2].append((i, m.h[i, k, n, n2]))
        for i in range(I - 1):
            for n in range(N):
                starts[2, n].append((i, m.hc[i, n]))
        for k in srv:
            for n in range(N):
                m.cons.add(m.Elast[k, n] + sum(v for _i, v in ends[k, n]) == m.y[k, n])

    def prefix(row):
        out = [0.0]
        for v in row:
            out.append(out[-1] + v)
        return out

    def block(k, n, row, scale=1.0) -> _Lin:
        lin = _Lin()
        if cumulative:
            p = prefix(row)
            for i, v in ends[k, n]:
                lin.add(scale * p[i + 1], v)
            lin.add(scale * p[I], m.Elast[k, n])
            for i, v in starts[k, n]:
                lin.add(-scale * p[i + 1], v)
        else:
            for i in range(I):
                lin.add(scale * row[i], m.q[i, k, n])
        return lin

    def client_block(row, scale=1.0) -> _Lin:  # sum_i row[i] P[i, 1]
        lin = _Lin()
        if cumulative:
            p = prefix(row)
            for i in range(I - 1):
                for n2 in range(N):
                    lin.add(scale * p[i + 1], m.hc[i, n2])
        else:
            for i in range(I):
                lin.add(scale * row[i], m.P[i, 1])
        return lin

    # memory
    if instance.memory == "paper":
        for n in range(N):
            cap = instance.server_memory_bytes[n]
            lins = [block(k, n, co.psi, b) for k in srv]
            for lin in ([_sum_lins(lins)] if agg else lins):
                _memory_row_lin(m, cap, lin)
        for c in range(instance.n_clients):
            _memory_row_lin(m, instance.client_memory_bytes[c], client_block(co.psi, co.bm[c]))
    else:
        _resident_rows(m, instance, co, b, K, srv, agg, block, client_block, active)
    # stages
    stages = []
    for k in srv:
        for n in range(N):
            F, B = block(k, n, co.gF[n]), block(k, n, co.gB[n])
            F.add(instance.t0_server_s, m.y[k, n])
            B.add(instance.t1_server_s, m.y[k, n])
            key = n if agg else k
            stages += [(("F", key), ("G", key), F), (("B", key), ("G", key), B)]
    client_F = {c: _Lin(const=instance.t0_client_s) for c in co.busy}
    client_B = {c: _Lin(const=instance.t1_client_s) for c in co.busy}
    for c in co.busy:
        client_F[c] += client_block(co.cF[c])
        client_B[c] += client_block(co.cB[c])
    for i in range(I - 1):
        for n2 in range(N):
            if co.client_first[n2] is None:
                continue
            var = m.hc[i, n2]
            for c in co.busy:
                (_, cf, cb), = _hop_terms(instance, i, co.bm[c], [(c, co.client_first[n2][c])])
                client_F[c].add(cf, var)
                client_B[c].add(cb, var)
            for h, (hop, samples) in enumerate(co.client_relay[n2]):
                (_, cf, cb), = _hop_terms(instance, i, samples, [hop])
                kf, kb, kr = _link_keys(agg, hop[0], hop[1], (1, h))
                stages += [(kf, kr, _Lin([(cf, var)])), (kb, kr, _Lin([(cb, var)]))]
    for i, k, n, n2 in hidx:
        hops = co.server_hops[(n, n2)]
        if hops is None:
            continue
        for h, (hop, cf, cb) in enumerate(_hop_terms(instance, i, b, hops)):
            kf, kb, kr = _link_keys(agg, hop[0], hop[1], (k, h))
            var = m.h[i, k, n, n2]
            stages += [(kf, kr, _Lin([(cf, var)])), (kb, kr, _Lin([(cb, var)]))]
    _finish(m, instance, co, stages, client_F, client_B)
    m._highs_options = HIGHS_OPTIONS if cumulative else None

    def extract():
        def sub(i):
            return next((k for k in ks if (m.P[i, k].value or 0) > 0.5), K)

        cuts, servers = [], []
        last = 1
        for i in range(I):
            k = sub(i)
            if k != last and k > 1:
                n = max(range(N), key=lambda n: m.y[k, n].value or 0.0)
                cuts.append(i)
                servers.append(n)
                last = k
        return make_assignment(instance, b, cuts, servers)

    m._extract = extract
    return m
