"""Shared pieces of the ``pipeline`` formulations (seed 001, digest §8): per-``b`` stage
coefficients (:class:`Coefficients`), the objective and bottleneck rows (:func:`_finish`), memory
rows (scaled by capacity, digest §8.6) and the ``resident`` memory rows, and the deadline the row
lists check while a model is built (:func:`build_deadline`). The formulations:
:mod:`.pipeline_milp_c`, :mod:`.pipeline_milp_a`, :mod:`.pipeline_milp_b` (overview, corrections
and numerical hygiene in :mod:`.pipeline_milp`).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections import defaultdict

from splitopt.errors import InstanceError
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import (
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
    """Within this context the builders check ``deadline`` every :data:`ROW_CHECK` rows (and after
    each block of :data:`ROW_CHECK` or more variables, :func:`_check_vars`) and raise its
    :meth:`~splitopt.solvers.deadline.Deadline.no_answer` once it has passed (issue 21: a time
    limit holds in the model build too; one Formulation A at I = 100, N = 50 takes minutes)."""
    tok = _BUILD_DEADLINE.set(deadline)
    _TICKS[0] = 0  # the clock is read at the same points of every build (deterministic tests)
    try:
        yield
    finally:
        _BUILD_DEADLINE.reset(tok)


_TICKS = [0]

#: rows of a :func:`_rows` list between two looks at the build deadline: a Pyomo row of
#: Formulation A at I = 60, N = 6 takes 0.1-0.3 ms, so 2,000 rows (the former interval) could
#: leave 0.6 s between two looks (the fuzzed ``lp_rlt``/``lp_plain`` with ``time_limit=0.5``). The
#: models of a few layers have fewer rows than this and never look (deterministic early stops).
ROW_CHECK = 1000


def _check_vars(n: int) -> None:
    """Check the build deadline after creating ``n`` variables, when ``n >= ROW_CHECK`` (Pyomo takes
    about 3 us per variable: Formulation A's ``h`` at I = 60, N = 6 has 100,000)."""
    if n >= ROW_CHECK:
        dl = _BUILD_DEADLINE.get()
        if dl is not None and dl.over():
            raise dl.no_answer(" (while building the model)")


def _tick() -> None:
    """Check the build deadline every 4,000 calls (hot loops that build expressions, not rows)."""
    _TICKS[0] += 1
    if _TICKS[0] % 4000 == 0:
        dl = _BUILD_DEADLINE.get()
        if dl is not None and dl.over():
            raise dl.no_answer(" (while building the model)")


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
        if count[0] % ROW_CHECK == 0 and dl.over():
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
        _tick()
        if c != 0:
            self.terms.append((c, v))

    def __iadd__(self, other: "_Lin"):
        self.terms += other.terms
        self.const += other.const
        return self

    def expr(self, unit: float):
        _tick()
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
    _tick()
    a, g = instance.act_bytes[i] * samples, instance.grad_bytes[i] * samples
    return [((x, y), a / instance.rates[x][y], g / instance.rates[y][x]) for x, y in hops]


def _link_keys(agg: bool, x: int, y: int, tkey):
    """Stage keys of a hop's FP and BP (stages) and of the hop (resource), as in the evaluator."""
    if agg:
        return ("LF", x, y), ("LB", y, x), ("L", min(x, y), max(x, y))
    return ("LF",) + tkey, ("LB",) + tkey, ("L",) + tkey


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
