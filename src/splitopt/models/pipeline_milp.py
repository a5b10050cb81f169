"""Pyomo formulations of the ``pipeline`` family (seed 001) for a fixed micro-batch ``b``, and the
single joint MILP over ``b`` (digest §8; evaluator and semantics in :mod:`splitopt.models.pipeline`).

* :func:`build_c` -- Formulation C (digest §8.1): layer-to-node binaries ``x[i, v]`` (``v`` = the
  virtual client node or a server), block starts ``o``, McCormick transfer variables
  ``z[i, v, n'] >= x[i, v] + x[i+1, n'] - 1`` (exact: ``z`` only appears with non-negative
  coefficients in the objective and in ``T >=`` rows). ``placement="distinct"`` only.
* :func:`build_a` -- Formulation A (digest §8.2): the paper's stage-indexed variables, prefix
  binaries ``P[i, k]`` (layer ``i`` in submodels ``1..k``) and placement ``y[k, n]``, with the
  products ``q = s y``, ``g = y y'``, ``h = x g``, ``hc = x1 y2`` made exact by RLT equalities
  inside the MILP (``rlt=True``) or by plain McCormick inequalities (``rlt=False``, the weaker
  "plain" relaxation). All three placements: per-node sums for ``aggregate`` (C8/C9/C11/C13/C15),
  per-submodel rows for ``revisit``, plus ``sum_k y[k, n] <= 1`` for ``distinct``.
* :func:`build_b` -- Formulation B (digest §8.3): arc flow on the DAG of digest §3.5 (vertex =
  submodel ``k`` ends at layer ``e`` on node ``n``; every arc carries its additive latency ``a(e)``
  and its largest stage ``beta(e)``, the head's compute included, digest §7.2 #5). Exact for
  ``revisit``; ``distinct`` adds one visit per server. Bottleneck rows per DAG level (at most one
  arc leaves a level).
* :func:`build_joint_c` -- Formulation C over every allowed ``b`` at once (digest §8.5 (ii)):
  choice binaries ``beta_j``, per-``b`` stage rows switched by big-M, ``xi T`` through
  ``w_j >= T - Tbar (1 - beta_j)``, memory rows ``sum psi x <= sum_j (M / b_j) beta_j``.

Corrections to the paper's P2/P4 (digest §2.5, §7.2): client FP compute and upload form one stage
(Eq. 13, not C10/C12 apart); client link rows only for the chosen server (C12/C16 lack ``y_2n'``);
the gradient of C15 uses the reversed link rate; submodel ``K``'s compute is in the bottleneck.

Numerical hygiene (digest §8.6): every time is divided by one unit (the largest per-layer time
coefficient), every memory row by its capacity. Formulations C and A write block compute (and A
block memory) with prefix sums on block start/end indicators (C: ``o``/``e``, see
:func:`_c_variables`; A: the exact RLT products ``h``/``hc`` and ``Elast``, see :func:`build_a`),
so no coefficient is a single tiny layer's time (VGG-16's fc3 at 1e4 FLOP made the per-layer
coefficients span 1e10 and HiGHS's optimum untrustworthy; now C spans about 3e5 and A 6e4 on
VGG-16; the joint MILP, on C's variables, 2.9e7 instead of 1.8e9 over four b). The LP relaxations
of A keep the digest's per-layer products ``q``. These models are solved with HiGHS's integrality
tolerance at 1e-9 (:data:`HIGHS_OPTIONS`). ``memory="resident"``
is modelled in Formulation A only (big-M rows on the active submodels, :func:`_resident_rows`);
C, B and the joint MILP raise :class:`~splitopt.errors.InstanceError` for it.

# interface

``build_c/build_a/build_b(instance, b, ...) -> model`` (``model._unit`` seconds per model time
unit, ``model._extract()`` -> assignment dict from the loaded values), :class:`Coefficients`
(per-``b`` stage coefficients in seconds), :func:`dag` (the arcs of Formulation B, reusable by a
combinatorial shortest-path algorithm).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections import defaultdict
from dataclasses import dataclass

from splitopt.errors import InstanceError
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import (
    block_memory,
    client_memory,
    client_times,
    make_assignment,
    server_times,
    transfer_times,
    xi,
)

#: HiGHS options for the prefix-sum (cumulative) models: a binary within HiGHS's default integrality
#: tolerance 1e-6 of 0 or 1, times a prefix sum of the whole chain, moved the model value by 1e-7
#: relative (seed 78 of the aggregate tests: the bound was above the brute-force optimum); 1e-9
#: leaves well under 1e-9.
HIGHS_OPTIONS = {"mip_feasibility_tolerance": 1e-9}


#: the deadline of the model build in progress (see :func:`build_deadline`)
_BUILD_DEADLINE: contextvars.ContextVar = contextvars.ContextVar("pipeline_milp_build_deadline", default=None)


@contextlib.contextmanager
def build_deadline(deadline):
    """Within this context the builders check ``deadline`` every 2,000 rows and raise its
    :meth:`~splitopt.solvers.deadline.Deadline.no_answer` once it has passed (issue 21: a time
    limit holds in the model build too; one Formulation A at I = 100, N = 50 takes minutes)."""
    tok = _BUILD_DEADLINE.set(deadline)
    try:
        yield
    finally:
        _BUILD_DEADLINE.reset(tok)


def _rows(pyo):
    """A ``ConstraintList`` whose ``add`` checks the build deadline (:func:`build_deadline`)."""
    cl = pyo.ConstraintList()
    dl = _BUILD_DEADLINE.get()
    if dl is None:
        return cl
    add = cl.add
    count = [0]

    def checked(expr):
        count[0] += 1
        if count[0] % 2000 == 0 and dl.over():
            raise dl.no_answer(" (while building the model)")
        return add(expr)

    cl.add = checked
    return cl


def _require_paper_memory(instance: PipelineInstance) -> None:
    if instance.memory != "paper":
        raise InstanceError("memory", f"the MILP formulations model memory 'paper' (Eq. 11) only, got "
                                      f"{instance.memory!r}")


class Coefficients:
    """Per-layer stage coefficients in seconds for a fixed ``b`` (digest §8 shorthands).

    ``gF[n][i]``, ``gB[n][i]``: server ``n`` FP / BP time of layer ``i``; ``cF[m][i]``, ``cB[m][i]``:
    client ``m`` (zero rows for idle clients); ``psi[i]``: memory bytes per sample-multiplier of
    layer ``i`` (sample + parameter + optimizer bytes); ``server_hops[(n, n2)]``: the hops of a
    server transfer (node indices) or ``None``; ``client_first[n2][m]``: client ``m``'s first hop
    towards server ``n2`` (``None``: unreachable); ``client_relay[n2]``: relayed hops and their
    samples; ``busy``: clients with samples."""

    def __init__(self, instance: PipelineInstance, b: int):
        self.b = b
        inst = instance
        I, N = inst.n_layers, inst.n_servers
        self.bm = inst.local_batches(b)
        pis = max(b - inst.bwd_threshold_server, 0)
        self.gF = [[b * inst.fwd_flop[i] / inst.server_flops[n] for i in range(I)] for n in range(N)]
        self.gB = [[pis * inst.bwd_flop[i] / inst.server_flops[n] for i in range(I)] for n in range(N)]
        self.cF, self.cB = [], []
        for m, bm in enumerate(self.bm):
            pim = max(bm - inst.bwd_threshold_client, 0)
            f = inst.client_flops[m]
            self.cF.append([bm * inst.fwd_flop[i] / f for i in range(I)])
            self.cB.append([pim * inst.bwd_flop[i] / f for i in range(I)])
        self.busy = [m for m, bm in enumerate(self.bm) if bm > 0]
        self.psi = [inst.sample_mem_bytes[i] + inst.param_bytes[i] + inst.opt_bytes[i] for i in range(I)]
        self.server_hops = {(n, n2): (inst.route(inst.server_node(n), inst.server_node(n2)) if n != n2 else None)
                            for n in range(N) for n2 in range(N)}
        self.client_first, self.client_relay = [], []
        for n2 in range(N):
            firsts, relay = [], defaultdict(int)
            for m in range(inst.n_clients):
                r = inst.route(m, inst.server_node(n2)) if self.bm[m] > 0 else None
                firsts.append(None if r is None else r[0][1])
                if r is not None:
                    for hop in r[1:]:
                        relay[hop] += self.bm[m]
            ok = all(firsts[m] is not None for m in self.busy)
            self.client_first.append(firsts if ok else None)
            self.client_relay.append(sorted(relay.items()) if ok else None)
        coefs = [v for row in self.gF + self.gB + self.cF + self.cB for v in row]
        for i in range(I - 1):
            a, g = inst.act_bytes[i], inst.grad_bytes[i]
            for hops in self.server_hops.values():
                for x, y in hops or ():
                    coefs += [b * a / inst.rates[x][y], b * g / inst.rates[y][x]]
            for n2 in range(N):
                for m in self.busy:
                    x = (self.client_first[n2] or [None] * inst.n_clients)[m]
                    if x is not None:
                        coefs += [self.bm[m] * a / inst.rates[m][x], self.bm[m] * g / inst.rates[x][m]]
        coefs += [inst.t0_client_s, inst.t1_client_s, inst.t0_server_s, inst.t1_server_s]
        u = max((c for c in coefs if math.isfinite(c)), default=1.0)
        self.unit = u if u > 0 else 1.0


# ---------------------------------------------------------------------- shared pieces
class _Lin:
    """A linear expression as ``(coef, var)`` terms plus a constant, in seconds."""

    __slots__ = ("terms", "const")

    def __init__(self, terms=None, const: float = 0.0):
        self.terms = list(terms or [])
        self.const = const

    def add(self, c: float, v) -> None:
        if c != 0:
            self.terms.append((c, v))

    def __iadd__(self, other: "_Lin"):
        self.terms += other.terms
        self.const += other.const
        return self

    def expr(self, unit: float):
        return sum(c / unit * v for c, v in self.terms) + self.const / unit


def _finish(m, instance: PipelineInstance, co: Coefficients, stages: list, client_F: dict, client_B: dict) -> None:
    """Epigraphs and objective. ``stages``: ``(key_stages, key_resource, _Lin)`` (every term of
    ``T_f`` outside the clients, each once); ``client_F/B[m]``: the busy clients' stage times."""
    import pyomo.environ as pyo

    u = co.unit
    m.T = pyo.Var(domain=pyo.NonNegativeReals)
    m.tauF = pyo.Var(domain=pyo.NonNegativeReals)
    m.tauB = pyo.Var(domain=pyo.NonNegativeReals)
    m.rows = _rows(pyo)
    for c in co.busy:
        m.rows.add(m.tauF >= client_F[c].expr(u))
        m.rows.add(m.tauB >= client_B[c].expr(u))
    if instance.bottleneck == "stages":
        m.rows.add(m.T >= m.tauF)
        m.rows.add(m.T >= m.tauB)
    else:
        for c in co.busy:
            tot = _Lin()
            tot += client_F[c]
            tot += client_B[c]
            m.rows.add(m.T >= tot.expr(u))
    groups: dict = defaultdict(_Lin)
    total = _Lin()
    res = instance.bottleneck == "resource"
    for ks, kr, lin in stages:
        groups[kr if res else ks] += lin
        total += lin
    for lin in groups.values():
        if lin.terms:
            m.rows.add(m.T >= lin.expr(u))
        elif lin.const > 0:
            m.rows.add(m.T >= lin.const / u)
    m.xi = xi(instance.batch, co.b)
    m.obj = pyo.Objective(expr=m.tauF + m.tauB + total.expr(u) + m.xi * m.T, sense=pyo.minimize)
    m._unit = u


def _hop_terms(instance, i: int, samples: float, hops):
    """``[((x, y), CF, CB)]`` of the cut after layer ``i`` over ``hops`` with ``samples`` samples."""
    a, g = instance.act_bytes[i] * samples, instance.grad_bytes[i] * samples
    return [((x, y), a / instance.rates[x][y], g / instance.rates[y][x]) for x, y in hops]


def _link_keys(agg: bool, x: int, y: int, tkey):
    """Stage keys of a hop's FP and BP (stages) and of the hop (resource), as in the evaluator."""
    if agg:
        return ("LF", x, y), ("LB", y, x), ("L", min(x, y), max(x, y))
    return ("LF",) + tkey, ("LB",) + tkey, ("L",) + tkey


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


def _memory_row(m, cap, terms) -> None:
    if cap is None:
        return
    terms = [(c, v) for c, v in terms if c > 0]
    if not terms:
        return
    if cap <= 0:
        for _c, v in terms:
            m.cons.add(v <= 0)
        return
    m.cons.add(sum(c / cap * v for c, v in terms) <= 1)


def _sum_lins(lins) -> _Lin:
    out = _Lin()
    for lin in lins:
        out += lin
    return out


def _memory_row_lin(m, cap, lin: _Lin) -> None:
    """``lin <= cap`` (bytes), divided by the capacity; ``lin`` may hold negative coefficients
    (prefix-sum form), so a zero capacity is written as ``lin <= 0``."""
    if cap is None or not lin.terms:
        return
    scale = cap if cap > 0 else max(abs(c) for c, _v in lin.terms)
    m.cons.add(sum(c / scale * v for c, v in lin.terms) <= (cap - lin.const) / scale)


def _resident_rows(m, instance: PipelineInstance, co: Coefficients, b: int, K: int, srv, agg: bool, block,
                   client_block, active) -> None:
    """Memory ``"resident"`` in Formulation A (evaluator: :func:`~splitopt.models.pipeline.block_memory`):
    submodel ``k`` needs ``PO_k + b S_k min(q, K' - k + 1)``, ``q = ceil(B / b)``, ``K'`` submodels
    in all. The active submodels form a prefix ``2..K'``, so ``min(q, K' - k + 1) >= r`` exactly when
    submodel ``k + r - 1`` is active; hence ``w[k, n] >= (PO_k + r b S_k) / cap - M_r (1 -
    active(k + r - 1))`` for ``r = 1..min(q, K - k + 1)`` (``M_r`` = the whole chain's value, so the
    row is void when inactive) makes ``max_r`` of the right-hand sides the exact memory, and ``w <= 1``
    per block (``sum_k w <= 1`` per node under ``aggregate``). Clients alike with ``min(q, K')``."""
    import pyomo.environ as pyo

    inst = instance
    I, N = inst.n_layers, inst.n_servers
    q = -(-inst.batch // b)
    S = list(inst.sample_mem_bytes)
    PO = [inst.param_bytes[i] + inst.opt_bytes[i] for i in range(I)]
    S_tot, PO_tot = math.fsum(S), math.fsum(PO)
    m.wmem = pyo.Var(srv, range(N), domain=pyo.NonNegativeReals)
    for n in range(N):
        cap = inst.server_memory_bytes[n]
        if cap is None:
            continue
        scale = cap if cap > 0 else max(PO_tot + b * S_tot, 1.0)
        for k in srv:
            for r in range(1, min(q, K - k + 1) + 1):
                lin = block(k, n, PO)
                lin += block(k, n, S, r * b)
                big = (PO_tot + r * b * S_tot) / scale
                act = active(k + r - 1)
                m.cons.add(m.wmem[k, n] >= lin.expr(scale) - big * (1 - act))
        if agg:
            m.cons.add(sum(m.wmem[k, n] for k in srv) <= cap / scale)
        else:
            for k in srv:
                m.cons.add(m.wmem[k, n] <= cap / scale)
    for c in range(inst.n_clients):
        cap, bm = inst.client_memory_bytes[c], co.bm[c]
        if cap is None:
            continue
        scale = cap if cap > 0 else max(PO_tot + bm * S_tot, 1.0)
        for r in range(1, min(q, K) + 1):
            lin = client_block(PO)
            lin += client_block(S, r * bm)
            if not lin.terms:
                continue
            big = (PO_tot + r * bm * S_tot) / scale
            m.cons.add(lin.expr(scale) <= cap / scale + big * (1 - active(r)))


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
    gidx = [(k, n, n2) for k in srv if k < K for n in range(N) for n2 in range(N) if n != n2]
    m.g = pyo.Var(gidx, bounds=(0, 1))
    hidx = [(i, k, n, n2) for i in range(I - 1) for (k, n, n2) in gidx]
    m.h = pyo.Var(hidx, bounds=(0, 1))
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


# ---------------------------------------------------------------------- Formulation B (arc flow)
@dataclass(frozen=True)
class Arc:
    """One arc of the DAG of digest §3.5: ``tail``/``head`` vertices (``"s"``, ``"d"``,
    ``(1, "c", e)`` for the client cut ``e``, ``(k, n, e)`` for submodel ``k`` ending at layer count
    ``e`` on server ``n``); ``a`` its share of ``T_f`` (seconds), ``beta`` its largest stage,
    ``level`` the submodel it leaves."""

    tail: object
    head: object
    a: float
    beta: float
    level: int
    server: int | None  # the head's server


def dag(instance: PipelineInstance, b: int) -> list[Arc]:
    """The arcs of Formulation B for micro-batch ``b`` under per-submodel semantics (``revisit``;
    ``distinct`` needs the one-visit side rows): blocks or client cuts that break memory and
    transfers without a route are left out. Stage times come from the evaluator's building blocks
    (:func:`server_times`, :func:`client_times`, :func:`transfer_times`)."""
    _require_paper_memory(instance)
    if instance.placement == "aggregate":
        raise InstanceError("placement", "the arc-flow DAG has per-submodel semantics (revisit or distinct), "
                                         "not 'aggregate'")
    I, N = instance.n_layers, instance.n_servers
    K = min(instance.max_submodels or I, I)
    res = instance.bottleneck == "resource"
    arcs: list[Arc] = []
    fits = {}
    for n in range(N):
        cap = instance.server_memory_bytes[n]
        for lo in range(I):
            for hi in range(lo + 1, I + 1):
                use = block_memory(instance, b, lo, hi, 1, 2)  # paper memory: position-free
                fits[n, lo, hi] = cap is None or use <= cap * (1 + 1e-9)
    for e in range(1, I):
        cm = client_memory(instance, b, e, 2)
        if any(c is not None and u > c * (1 + 1e-9) for u, c in zip(cm, instance.client_memory_bytes)):
            continue
        arcs.append(Arc("s", (1, "c", e), 0.0, 0.0, 0, None))
        for n2 in range(N):
            ct = client_times(instance, b, e, n2)
            if ct is None:
                continue
            Fc, Bc, relay = ct
            relay_hops = []
            for (x, y), samples in sorted(relay.items()):
                relay_hops += [(x, y, samples)]
            hop_t = [(samples * instance.act_bytes[e - 1] / instance.rates[x][y],
                      samples * instance.grad_bytes[e - 1] / instance.rates[y][x]) for x, y, samples in relay_hops]
            for e2 in range(e + 1, I + 1):
                if not fits[n2, e, e2]:
                    continue
                F, B = server_times(instance, b, n2, e, e2)
                a = max(Fc) + max(Bc) + sum(cf + cb for cf, cb in hop_t) + F + B
                if res:
                    st = [max(f + g for f, g in zip(Fc, Bc)), F + B] + [cf + cb for cf, cb in hop_t]
                else:
                    st = [max(Fc), max(Bc), F, B] + [t for pair in hop_t for t in pair]
                arcs.append(Arc((1, "c", e), (2, n2, e2), a, max(st), 1, n2))
    for k in range(2, K + 1):
        for n in range(N):
            if k < K:
                for e in range(k - 1, I):
                    for n2 in range(N):
                        if n2 == n:
                            continue
                        hops = transfer_times(instance, b, instance.server_node(n), instance.server_node(n2), e)
                        if hops is None:
                            continue
                        for e2 in range(e + 1, I + 1):
                            if not fits[n2, e, e2]:
                                continue
                            F, B = server_times(instance, b, n2, e, e2)
                            a = sum(cf + cb for _h, cf, cb in hops) + F + B
                            if res:
                                st = [F + B] + [cf + cb for _h, cf, cb in hops]
                            else:
                                st = [F, B] + [t for _h, cf, cb in hops for t in (cf, cb)]
                            arcs.append(Arc((k, n, e), (k + 1, n2, e2), a, max(st), k, n2))
            arcs.append(Arc((k, n, I), "d", 0.0, 0.0, k, None))
    return arcs


def build_b(instance: PipelineInstance, b: int):
    """Formulation B (digest §8.3): arc flow with bottleneck rows per DAG level; ``distinct`` adds
    ``sum of arcs into server n <= 1``."""
    import pyomo.environ as pyo

    arcs = dag(instance, b)
    co_unit = max([a.a for a in arcs] + [1e-300])
    u = co_unit if co_unit > 0 else 1.0
    # keep only arcs on some source -> sink path
    fwd, bwd = {"s"}, {"d"}
    for a in arcs:  # arcs are generated in topological order of their tails
        if a.tail in fwd:
            fwd.add(a.head)
    for a in reversed(arcs):
        if a.head in bwd:
            bwd.add(a.tail)
    arcs = [a for a in arcs if a.tail in fwd and a.head in bwd]
    if not arcs:
        raise InstanceError("instance", f"no feasible assignment at b = {b} (memory or topology)")
    m = pyo.ConcreteModel(name=f"pipeline-B[{instance.name}, b={b}]")
    A = range(len(arcs))
    m.u = pyo.Var(A, domain=pyo.Binary)
    m.T = pyo.Var(domain=pyo.NonNegativeReals)
    m.cons = _rows(pyo)
    out, inn = defaultdict(list), defaultdict(list)
    for j, a in enumerate(arcs):
        out[a.tail].append(j)
        inn[a.head].append(j)
    m.cons.add(sum(m.u[j] for j in out["s"]) == 1)
    for v in set(out) | set(inn):
        if v in ("s", "d"):
            continue
        m.cons.add(sum(m.u[j] for j in inn[v]) == sum(m.u[j] for j in out[v]))
    levels = defaultdict(list)
    for j, a in enumerate(arcs):
        if a.beta > 0:
            levels[a.level].append(j)
    for js in levels.values():
        m.cons.add(m.T >= sum(arcs[j].beta / u * m.u[j] for j in js))
    if instance.placement == "distinct":
        for n in range(instance.n_servers):
            js = [j for j, a in enumerate(arcs) if a.server == n]
            if len(js) > 1:
                m.cons.add(sum(m.u[j] for j in js) <= 1)
    m.xi = xi(instance.batch, b)
    m.obj = pyo.Objective(expr=sum(arcs[j].a / u * m.u[j] for j in A) + m.xi * m.T, sense=pyo.minimize)
    m._unit = u

    def extract():
        nxt = {arcs[j].tail: arcs[j].head for j in A if (m.u[j].value or 0) > 0.5}
        v, cuts, servers = nxt["s"], [], []
        cuts.append(v[2])
        while True:
            w = nxt[v]
            if w == "d":
                break
            if len(servers) < len(cuts):
                servers.append(w[1])
            if w[2] < instance.n_layers:
                cuts.append(w[2])
            v = w
        return make_assignment(instance, b, cuts, servers)

    m._extract = extract
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


FORMULATIONS = {"C": build_c, "A": build_a, "B": build_b}

__all__ = ["build_c", "build_a", "build_b", "build_joint_c", "dag", "Arc", "Coefficients", "FORMULATIONS"]
