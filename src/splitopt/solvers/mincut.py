"""Exact device/server split by one minimum s-t cut (seed 000 Alg. 2, seed 002 Steps 1-5), corrected.

Graph (digest 000 §3.3, §3.6 and §8; digest 002 §2.2-§2.6). Source ``s`` = device side, sink
``t`` = server side; one *execution* vertex per layer ``v``:

* ``v -> t`` with the cost of ``v`` on the device and ``s -> v`` with its cost on the server
  (corrected weights of digest 000 §2.4: the parameter download ``k/R_S`` belongs to device layers,
  not to server layers as Eq. 10 prints it (E2), and the device/server labels of Eqs. 9-10 and
  Alg. 1 lines 4-5 are swapped back (E1)). Both are reparametrised by ``m_v = min(dev_v, srv_v)``
  (digest 002 §4), which keeps every capacity non-negative and drops one of the two arcs;
* per *tensor* (not per layer: a layer with several different outputs gets one data vertex per
  output, digest 000 §7 E5 caveat 1) with producer ``p`` and consumers ``C``: a data vertex ``d``
  with ``p -> d`` of capacity ``w_t`` and ``d -> c`` of infinite capacity for ``c`` in ``C``
  (the auxiliary-vertex gadget of seed 002 Step 4' / seed 000 Eqs. 13-15: the tensor is paid once
  when some consumer is on the server, digest 000 §3.6 proves this exact in every case, including
  the "Case 2" the paper's Theorem 1 proof gets wrong); a single consumer gets the plain arc;
* the raw input as a tensor produced by the source itself (seed 002 vertex ``o`` with
  ``tau = D_input / B``, digest 002 §2.5; one data vertex when several layers read the input);
* closure arcs ``w -> u`` of infinite capacity for every graph edge ``u -> w``, between execution
  vertices only (digest 000 E4 and §3.6 item 5, digest 002 §2.6): the device set is closed under
  predecessors, no server -> device flow;
* pins as infinite ``s -> v`` (device) and ``v -> t`` (server) arcs; under ``input_policy="pin"``
  every input layer is pinned to the device (digest 000 E3).

Exactness with integer max-flow. ``scipy.sparse.csgraph.maximum_flow`` accepts only 32-bit
integer capacities, while the capacities here are floats spanning many orders of magnitude. We
therefore never trust a rounded capacity to pick the cut; instead we run *iterative refinement*
and keep a certificate:

1. ``UB`` = the real cut value of a known feasible split (the pinned layers and their ancestors);
   ``LB = 0``; residual capacities ``r = c``.
2. Round: ``bound = UB - LB`` bounds the remaining flow. Capacities ``r > bound`` are clamped to
   ``bound`` (a cut through such an arc costs more than the optimum, so the optimum is unchanged);
   scale by a power of two ``2^e`` with ``bound * 2^e <= 2^30`` and round **down**. Infinite arcs get
   ``2^31 - 1``, above any finite integer cut (``<= 2^30``), so no cut ever crosses one.
3. Solve the integer max-flow. Rounding down makes ``flow / 2^e`` a feasible flow of the real
   residual network, so ``LB += flow_value / 2^e`` stays a valid lower bound on the optimum (weak
   duality) and the real residual capacities ``r -= flow / 2^e`` stay non-negative.
4. The source side ``X`` of the integer residual graph is a minimum integer cut; its real value
   ``val(X)`` (computed from the original capacities, i.e. the evaluator's cost) satisfies
   ``val(X) - LB < |cut arcs| / 2^e``. Set ``UB = min(UB, val(X))``; stop when
   ``UB - LB <= 1e-13 * UB`` (or after ``max_rounds``).

Each round shrinks the gap by about ``2^30 / |cut arcs|``, so two rounds normally reach the
resolution of double precision. The returned split is the best ``X`` found; :func:`solve_detailed`
reports ``lower_bound`` (a proof: no split costs less) and ``gap = value - lower_bound``.
Up to the floating-point rounding of the input capacities themselves, the chosen cut is therefore
optimal under the evaluator. Among optimal splits the source-side residual set is the smallest
device set (ties broken towards the server, digest 000 E9).

``variant="paper"`` builds seed 000 Alg. 1-2 as printed (Eq. 9 weight on ``(D, v)``, Eq. 10 on
``(v, S)``, no closure arcs, no pins, no raw-input cost); :func:`plain_mincut` drops the
auxiliary vertex (seed 000 §3.2: a fan-out tensor is paid once per consumer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

from splitopt.errors import InstanceError
from splitopt.instances.split import SplitInstance

INT_CAP = 1 << 30        # finite integer capacities are <= this
INT_INF = (1 << 31) - 1  # infinite arcs
REL_STOP = 1e-13


@dataclass
class CutProblem:
    """A two-sided labelling problem solvable by one min cut.

    Local vertices ``0..n-1``. ``dev[v]``/``srv[v]``: cost of ``v`` on the device/server side.
    ``tensors``: ``(producer, consumers, weight)``, producer ``-1`` meaning the source (raw input);
    charged once if the producer is on the device and some consumer on the server (``gadget``) or
    once per server consumer (``gadget=False``). ``closure``: pairs ``(u, w)``: ``u`` on the server
    forces ``w`` to the server. ``force_dev``/``force_srv``: pins.
    """

    n: int
    dev: np.ndarray
    srv: np.ndarray
    tensors: list
    closure: list
    force_dev: np.ndarray
    force_srv: np.ndarray
    gadget: bool = True

    def value(self, mask: np.ndarray) -> float:
        """Real cost of a device mask (``inf`` if it violates pins or closure)."""
        if (self.force_dev & ~mask).any() or (self.force_srv & mask).any():
            return math.inf
        for u, w in self.closure:
            if not mask[u] and mask[w]:
                return math.inf
        parts = [math.fsum(self.dev[mask]), math.fsum(self.srv[~mask])]
        for p, cons, w in self.tensors:
            if p < 0 or mask[p]:
                if self.gadget:
                    if any(not mask[c] for c in cons):
                        parts.append(w)
                else:
                    parts.extend(w for c in cons if not mask[c])
        return math.fsum(parts)

    def feasible_start(self) -> np.ndarray | None:
        """Smallest mask satisfying pins and closure (None if there is none)."""
        back: list[list[int]] = [[] for _ in range(self.n)]
        for u, w in self.closure:
            back[w].append(u)
        mask = self.force_dev.copy()
        stack = list(np.flatnonzero(mask))
        while stack:
            w = stack.pop()
            for u in back[w]:
                if not mask[u]:
                    mask[u] = True
                    stack.append(u)
        if (mask & self.force_srv).any():
            return None
        return mask


@dataclass
class CutResult:
    """Outcome of :func:`min_cut`: the device mask, its real value and a certified lower bound."""

    mask: np.ndarray
    value: float
    lower_bound: float
    rounds: int
    info: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return self.value - self.lower_bound


def _network(prob: CutProblem):
    """Arc arrays of the flow network: (tails, heads, caps) with caps float, ``inf`` for infinite."""
    n = prob.n
    S, T = 0, 1
    tails: list[int] = []
    heads: list[int] = []
    caps: list[float] = []
    m = np.minimum(prob.dev, prob.srv)
    dres = prob.dev - m
    sres = prob.srv - m
    vd = np.flatnonzero(dres > 0)
    vs = np.flatnonzero(sres > 0)
    tails.extend((vd + 2).tolist()); heads.extend([T] * len(vd)); caps.extend(dres[vd].tolist())
    tails.extend([S] * len(vs)); heads.extend((vs + 2).tolist()); caps.extend(sres[vs].tolist())
    fd = np.flatnonzero(prob.force_dev)
    fs = np.flatnonzero(prob.force_srv)
    tails.extend([S] * len(fd)); heads.extend((fd + 2).tolist()); caps.extend([math.inf] * len(fd))
    tails.extend((fs + 2).tolist()); heads.extend([T] * len(fs)); caps.extend([math.inf] * len(fs))
    nxt = n + 2
    for p, cons, w in prob.tensors:
        if not w > 0.0 or not cons:
            continue
        pn = S if p < 0 else p + 2
        if prob.gadget and len(cons) > 1:
            d = nxt
            nxt += 1
            tails.append(pn); heads.append(d); caps.append(w)
            for c in cons:
                tails.append(d); heads.append(c + 2); caps.append(math.inf)
        else:
            for c in cons:
                tails.append(pn); heads.append(c + 2); caps.append(w)
    for u, w in prob.closure:
        tails.append(w + 2); heads.append(u + 2); caps.append(math.inf)
    return nxt, np.asarray(tails, dtype=np.int64), np.asarray(heads, dtype=np.int64), \
        np.asarray(caps, dtype=float), float(math.fsum(m))


def min_cut(prob: CutProblem, *, max_rounds: int = 8) -> CutResult | None:
    """Certified minimum cut of ``prob`` (see the module docstring); None if pins are contradictory."""
    start = prob.feasible_start()
    if start is None:
        return None
    best_mask = start
    best_val = prob.value(start)
    if not (~(start | prob.force_srv)).any():  # every vertex is forced: nothing to decide
        return CutResult(best_mask, best_val, best_val, 0, {})
    nv, tails, heads, caps, const = _network(prob)
    if tails.size == 0 or best_val - const <= 0.0:
        return CutResult(best_mask, best_val, best_val, 0, {"const": const})
    # Combine duplicate arcs and add reverse slots so the CSR structure is symmetric (scipy then
    # returns the flow on exactly this structure).
    keys = tails * nv + heads
    rkeys = heads * nv + tails
    allk = np.concatenate([keys, rkeys])
    uk, inv = np.unique(allk, return_inverse=True)
    cap = np.zeros(uk.size)
    np.add.at(cap, inv[:keys.size], caps)
    is_inf = np.isinf(cap)
    rows = uk // nv
    cols = (uk % nv).astype(np.int32)
    indptr = np.zeros(nv + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=nv), out=indptr[1:])
    resid = np.where(is_inf, 0.0, cap)  # finite part of the real residual capacities
    lb_parts: list[float] = []
    rounds = 0
    lb = 0.0
    for rounds in range(1, max_rounds + 1):
        ub_net = best_val - const
        bound = ub_net - lb
        if bound <= REL_STOP * max(best_val, 1e-300):
            rounds -= 1
            break
        e = math.floor(math.log2(INT_CAP / bound))
        scale = math.ldexp(1.0, e)
        clipped = np.minimum(np.maximum(resid, 0.0), bound)
        icap = np.floor(clipped * scale)
        icap = np.where(is_inf, INT_INF, np.minimum(icap, INT_CAP)).astype(np.int32)
        graph = sp.csr_array((icap, cols, indptr), shape=(nv, nv))
        res = maximum_flow(graph, 0, 1)
        fl = res.flow
        if fl.indptr.shape == indptr.shape and np.array_equal(fl.indptr, indptr) and \
                np.array_equal(fl.indices, cols):
            fdata = np.asarray(fl.data, dtype=np.int64)
        else:  # pragma: no cover - defensive: realign if scipy changed the structure
            fdata = np.asarray(fl[rows, cols.astype(np.int64)]).ravel().astype(np.int64)
        resid = resid - fdata / scale
        lb_parts.append(res.flow_value / scale)
        lb = math.fsum(lb_parts)
        # source side of the integer residual graph
        ires = icap.astype(np.int64) - fdata
        keep = ires > 0
        kept_rows = rows[keep]
        rp = np.zeros(nv + 1, dtype=np.int32)
        np.cumsum(np.bincount(kept_rows, minlength=nv), out=rp[1:])
        rg = sp.csr_array((np.ones(int(keep.sum()), dtype=np.int8), cols[keep], rp), shape=(nv, nv))
        reached = breadth_first_order(rg, 0, directed=True, return_predecessors=False)
        side = np.zeros(nv, dtype=bool)
        side[reached] = True
        mask = side[2:2 + prob.n]
        val = prob.value(mask)
        if val < best_val:
            best_val, best_mask = val, mask.copy()
    lower = const + lb
    return CutResult(best_mask, best_val, min(lower, best_val), rounds,
                     {"const": const, "vertices": nv, "arcs": int(tails.size)})


# ---------------------------------------------------------------------- instance -> problem
def cut_problem(instance: SplitInstance, *, weights: str = "corrected", closure: bool = True,
                pins: bool = True, gadget: bool = True, input_cost: bool = True) -> CutProblem:
    """The :class:`CutProblem` of a split instance.

    ``weights``: ``"corrected"`` (digest 000 §2.4), ``"prose"`` (seed 000 prose: device weight
    ``N xi_D + k/R_D`` on ``(v,S)``, server weight ``N xi_S + k/R_S`` on ``(D,v)``, digest 000 E2) or
    ``"literal"`` (Eqs. 9-10 / Alg. 1 as printed: ``N xi_D + k/R_D`` on ``(D,v)``, i.e. charged when
    ``v`` is on the *server*, and ``N xi_S + k/R_S`` on ``(v,S)``, digest 000 E1). In inference mode
    parameters are not transferred, so the three differ only by the E1 swap.
    """
    c = instance.costs
    g = instance.graph
    n = len(g)
    if weights == "corrected":
        dev, srv = c.dev.copy(), c.srv.copy()
    elif weights in ("prose", "literal"):
        k = np.array([lay.param_bytes for lay in g.layers], dtype=float)
        training = instance.mode == "training"
        kd = k / instance.up_bytes_per_s if training else np.zeros(n)
        ks = k / instance.down_bytes_per_s if training else np.zeros(n)
        w_dev = c.dev_compute + kd   # Eq. 9 (prose: device execution weight)
        w_srv = c.srv + ks           # Eq. 10 (prose: server execution weight)
        if weights == "prose":
            dev, srv = w_dev, w_srv
        else:
            dev, srv = w_srv, w_dev
    else:
        raise InstanceError("weights", f"must be corrected, prose or literal, got {weights!r}")
    tensors = [(p, cons, w) for (p, cons, w, _b) in c.tensors]
    if input_cost and c.input_weight > 0.0:
        tensors.append((-1, c.input_layers, c.input_weight))
    cl = [(u, w) for w in range(n) for u in g._pred[w]] if closure else []
    if pins:
        fd, fs = c.force_dev.copy(), c.force_srv.copy()
    else:
        fd, fs = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    return CutProblem(n, dev, srv, tensors, cl, fd, fs, gadget)


@dataclass
class SplitCut:
    """Detailed outcome for a split instance (names, model value, certified bound)."""

    device: list[str]
    mask: np.ndarray
    value: float          # value in the solved graph (= evaluator objective for the corrected variant)
    lower_bound: float
    rounds: int
    info: dict

    @property
    def gap(self) -> float:
        """Certified optimality gap: ``value - lower_bound`` (0 up to rounding)."""
        return self.value - self.lower_bound


_VARIANTS = {
    "corrected": dict(weights="corrected", closure=True, pins=True, input_cost=True),
    "paper": dict(weights="literal", closure=False, pins=False, input_cost=False),
}


def solve_detailed(instance: SplitInstance, variant: str = "corrected", *, weights: str | None = None,
                   closure: bool | None = None, pins: bool | None = None, gadget: bool = True,
                   input_cost: bool | None = None) -> SplitCut:
    """Min-cut split with its certificate. Options override the ``variant`` defaults."""
    if variant not in _VARIANTS:
        raise InstanceError("variant", f"must be one of {', '.join(_VARIANTS)}, got {variant!r}")
    opts = dict(_VARIANTS[variant])
    for k, v in (("weights", weights), ("closure", closure), ("pins", pins), ("input_cost", input_cost)):
        if v is not None:
            opts[k] = v
    prob = cut_problem(instance, gadget=gadget, **opts)
    res = min_cut(prob)
    if res is None:  # pragma: no cover - instance validation rules this out
        raise InstanceError("pin_server", "pins admit no feasible split")
    return SplitCut(instance.names_of(res.mask), res.mask, res.value, res.lower_bound, res.rounds,
                    dict(res.info, variant=variant, **opts, gadget=gadget))


def solve(instance: SplitInstance, variant: str = "corrected", **options) -> list[str]:
    """Device-side layer names of a minimum-cost split (see the module docstring).

    ``variant="corrected"`` (default) is exact for every DAG; ``variant="paper"`` is seed 000
    Alg. 1-2 as printed (may return an infeasible or suboptimal split). Extra options:
    ``weights`` (corrected|prose|literal), ``closure``, ``pins``, ``gadget``, ``input_cost``.
    """
    return solve_detailed(instance, variant, **options).device


def plain_mincut(instance: SplitInstance, **options) -> list[str]:
    """Min cut without the auxiliary vertex (seed 000 §3.2): a tensor is paid once per server
    consumer, so fan-out is over-counted (digest 000 §3.2 example: 110 instead of 80). Corrected
    weights, closure arcs and pins are kept so that the missing gadget is the only defect."""
    return solve_detailed(instance, "corrected", gadget=False, **options).device


__all__ = ["CutProblem", "CutResult", "min_cut", "cut_problem", "solve", "solve_detailed", "plain_mincut",
           "SplitCut"]
