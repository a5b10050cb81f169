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

The cut value of a device set ``X`` plus ``const = sum_v m_v`` is its cost (the evaluator's
objective). The cut itself is found and certified by :mod:`splitopt.solvers.flow` (exact integer
max-flow on small networks; one scaled scipy max-flow plus an exact threshold round on large ones),
which returns the smallest optimal device set with a proven lower bound.

The flow-network *structure* (CSR arrays of the symmetric arc set, reverse-slot positions, the
arc -> parameter map, the vectorised evaluator arrays, the two feasible starts) depends on the DNN
graph, the pins and the options only, not on the rates; :func:`solve_detailed` keeps it with the (immutable) graph
(:meth:`DNNGraph.derived`), so a solve only fills the capacity vector
(``numpy.bincount``) and runs the flow. :func:`solve_detailed` reports ``lower_bound`` (a proof: no
split costs less) and ``gap = value - lower_bound``. Up to the rounding of the input capacities
themselves (the reparametrised doubles ``dev - m``, sums of parallel arcs) the chosen cut is optimal
under the evaluator; path A has no such caveat.

``variant="paper"`` builds seed 000 Alg. 1-2 as printed (Eq. 9 weight on ``(D, v)``, Eq. 10 on
``(v, S)``, no closure arcs, no pins, no raw-input cost); :func:`plain_mincut` drops the
auxiliary vertex (seed 000 §3.2: a fan-out tensor is paid once per consumer).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from splitopt.errors import InstanceError
from splitopt.instances.split import SplitInstance
from splitopt.solvers.flow import CutProblem, Structure, solve_structure


# ---------------------------------------------------------------------- instance -> problem
def _dev_srv(instance: SplitInstance, weights: str) -> tuple[np.ndarray, np.ndarray]:
    c = instance.costs
    g = instance.graph
    n = len(g)
    if weights == "corrected":
        return c.dev, c.srv
    if weights in ("prose", "literal"):
        k = np.array([lay.param_bytes for lay in g.layers], dtype=float)
        training = instance.mode == "training"
        kd = k / instance.up_bytes_per_s if training else np.zeros(n)
        ks = k / instance.down_bytes_per_s if training else np.zeros(n)
        w_dev = c.dev_compute + kd   # Eq. 9 (prose: device execution weight)
        w_srv = c.srv + ks           # Eq. 10 (prose: server execution weight)
        return (w_dev, w_srv) if weights == "prose" else (w_srv, w_dev)
    raise InstanceError("weights", f"must be corrected, prose or literal, got {weights!r}")


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
    dev, srv = _dev_srv(instance, weights)
    dev, srv = dev.copy(), srv.copy()
    tensors = [(p, cons, w) for (p, cons, w, _b) in c.tensors]
    if input_cost and c.input_weight > 0.0:
        tensors.append((-1, c.input_layers, c.input_weight))
    cl = list(g.edge_pairs) if closure else []
    if pins:
        fd, fs = c.force_dev.copy(), c.force_srv.copy()
    else:
        fd, fs = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    return CutProblem(n, dev, srv, tensors, cl, fd, fs, gadget)


def _instance_structure(instance: SplitInstance, closure: bool, pins: bool, gadget: bool,
                        input_cost: bool) -> tuple[Structure, np.ndarray]:
    """The :class:`Structure` of ``instance``, kept with its immutable graph (keyed on the options and
    the pins) and the tensor weight vector (the raw input last, weight 0 when it is not charged)."""
    c = instance.costs
    g = instance.graph
    n = len(g)
    with_input = bool(input_cost and c.input_layers)
    fd = c.force_dev if pins else np.zeros(n, dtype=bool)
    fs = c.force_srv if pins else np.zeros(n, dtype=bool)
    key = ("mincut", closure, gadget, with_input, fd.tobytes(), fs.tobytes())

    def build() -> Structure:
        tens = [(p, cons) for (p, cons, _w, _b) in c.tensors]
        if with_input:
            tens.append((-1, c.input_layers))
        return Structure(n, tens, list(g.edge_pairs) if closure else [], fd, fs, gadget)

    st = g.derived(key, build)
    w = np.fromiter((t[2] for t in c.tensors), dtype=float, count=len(c.tensors))
    if with_input:
        w = np.append(w, c.input_weight if input_cost else 0.0)
    return st, w


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
    dev, srv = _dev_srv(instance, opts["weights"])
    st, w = _instance_structure(instance, bool(opts["closure"]), bool(opts["pins"]), bool(gadget),
                                bool(opts["input_cost"]))
    res = solve_structure(st, np.asarray(dev, dtype=float), np.asarray(srv, dtype=float), w)
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


__all__ = ["cut_problem", "solve", "solve_detailed", "plain_mincut", "SplitCut"]
