"""The mathematics of the ``split`` family: its evaluator and its exact MILP/LP formulation.

Seeds 000 (split training, digest ``000-fast-model-splitting.md``) and 002 (QDMP edge/cloud
inference, digest ``002-qdmp.md``). The cost model is described in
:mod:`splitopt.instances.split`.

* :func:`evaluate` is the single source of truth for objective values: seed 000 Eq. 7 in the
  corrected per-layer form of digest 000 §2.4 (parameter download charged to device layers, not to
  server layers as Eq. 10 prints it, E2; each tensor sent once, §3.2; raw input pinned to the device,
  E3) and seed 002's ``L(S)`` of digest 002 §1.2 (per-tensor upload, raw-input upload
  ``tau = D_input / B`` as in Alg. 2, not the big-M of §3.2.1, digest 002 §2.5). Assignments that
  send data server -> device (not closed under predecessors) are rejected: neither paper costs such
  flows and both protocols forbid them (digest 000 E4, digest 002 §2.6).
* :func:`relaxed_cost` is the same cost *without* the feasibility checks: the function the papers'
  graphs minimise when they lack closure arcs (digest 000 §3.6, digest 002 §2.3 Lemma). It exists
  to show what the printed algorithms optimise, never to score a solution.
* :func:`build_milp` is digest 002 §8.2 (side variable per layer, upload variable per tensor,
  closure rows, pins). Its matrix is totally unimodular (digest 002 §8.3), so
  ``solvers.exact.solve(model, relax=True)`` returns an integral optimum equal to the MILP's.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from splitopt.errors import InfeasibleSolution
from splitopt.instances.split import SplitInstance

BREAKDOWN_KEYS = ("device_compute", "server_compute", "activations", "gradients", "parameters", "input")


# ---------------------------------------------------------------------- evaluator
def check_feasible(instance: SplitInstance, mask: np.ndarray) -> None:
    """Raise :class:`InfeasibleSolution` if ``mask`` violates a pin or sends data server -> device."""
    c = instance.costs
    g = instance.graph
    names = g.names
    bad = np.flatnonzero(c.force_dev & ~mask)
    if bad.size:
        v = names[bad[0]]
        why = "pinned to the device" if v in instance.pin_device else "an input layer (input_policy 'pin')"
        raise InfeasibleSolution(f"layer {v!r} is {why} but assigned to the server")
    bad = np.flatnonzero(c.force_srv & mask)
    if bad.size:
        raise InfeasibleSolution(f"layer {names[bad[0]]!r} is pinned to the server but assigned to the device")
    bad_edge = g.open_edge(mask)
    if bad_edge is not None:
        u, v = bad_edge
        raise InfeasibleSolution(
            f"edge {names[u]!r} -> {names[v]!r}: {names[u]!r} runs on the server but feeds "
            f"{names[v]!r} on the device (data may only flow device -> server)")


def breakdown_of_mask(instance: SplitInstance, mask: np.ndarray) -> dict[str, float]:
    """Cost breakdown of a device mask, without feasibility checks."""
    c = instance.costs
    on_srv = ~mask
    cut_bytes = []
    for p, cons, _w, b in c.tensors:
        if mask[p] and any(on_srv[j] for j in cons):
            cut_bytes.append(b)
    a = math.fsum(cut_bytes)
    inp = c.input_weight if (c.input_weight and any(on_srv[i] for i in c.input_layers)) else 0.0
    return {
        "device_compute": math.fsum(c.dev_compute[mask]),
        "server_compute": math.fsum(c.srv[on_srv]),
        "activations": a * c.act_factor,
        "gradients": a * c.grad_factor,
        "parameters": math.fsum(c.dev_params[mask]),
        "input": inp,
    }


def evaluate(instance: SplitInstance, assignment: Iterable[str]) -> tuple[float, dict[str, float]]:
    """Objective and breakdown of a split given as the device-side layer names.

    Breakdown keys: ``device_compute`` (N sum xi_D), ``server_compute`` (N sum xi_S),
    ``activations`` (N a / R_D per cut tensor), ``gradients`` (N a / R_S per cut tensor, training
    only), ``parameters`` (k (1/R_D + 1/R_S) per device layer, training only: seed 000 Eqs. 3 and 6)
    and ``input`` (raw-input upload under ``input_policy="upload"``). The objective is their sum.

    Raises :class:`~splitopt.errors.InstanceError` for unknown layer names and
    :class:`~splitopt.errors.InfeasibleSolution` for a violated pin or a server -> device edge
    (the message names the edge).
    """
    mask = instance.mask_of(assignment)
    check_feasible(instance, mask)
    br = breakdown_of_mask(instance, mask)
    return math.fsum(br.values()), br


def relaxed_cost(instance: SplitInstance, assignment) -> float:
    """The cost of *any* device set, feasible or not (pins and closure ignored).

    ``assignment`` is an iterable of names or a boolean mask. This is what a min-cut graph without
    closure arcs minimises (digest 000 §3.6; digest 002 §2.3); server -> device flows cost nothing.
    """
    if isinstance(assignment, np.ndarray) and assignment.dtype == bool:
        mask = assignment
    else:
        mask = instance.mask_of(assignment)
    return math.fsum(breakdown_of_mask(instance, mask).values())


# ---------------------------------------------------------------------- MILP
def build_milp(instance: SplitInstance, *, closure: bool = True, pins: bool = True, deadline=None):
    """Digest 002 §8.2 per-tensor MILP, generalised to training costs (digest 000 §2.4).

    Variables: ``x[v]`` = 1 iff layer ``v`` runs on the server, ``d[v] = 1 - x[v]`` (row ``side``);
    ``y[t]`` = 1 iff tensor ``t`` is sent (``t`` indexes :attr:`DNNGraph.tensors`); ``y_in`` = 1 iff
    the raw input is uploaded. Rows:
    ``upload[t,w]``: ``x[w] - x[p] - y[t] <= 0`` for each consumer ``w`` of ``t`` (p its producer);
    ``closure[u,w]``: ``x[u] - x[w] <= 0`` for each graph edge (no server -> device flow; dropped
    with ``closure=False``, the paper-literal graph of digest 002 §8.2); ``input_row[v]``:
    ``x[v] - y_in <= 0`` for each input layer; pins fix ``x``. Objective ``obj`` (minimise)::

        sum_v dev_v d_v + srv_v x_v + sum_t w_t y_t + w_in y_in

    ``deadline`` (a :class:`~splitopt.solvers.deadline.Deadline`) is looked at between the
    ``define_*`` steps and every 4,096 rows; once it has passed the build stops with its
    :meth:`~splitopt.solvers.deadline.Deadline.no_answer` error (a 100,000-layer model takes seconds
    to build, issue 21).

    (every coefficient an input number, unrounded), which equals :func:`evaluate` at every feasible integral point with optimal ``y``. The matrix is
    totally unimodular (digest 002 §8.3, Ghouila-Houri; the ``side`` rows only substitute ``d``), so
    the LP relaxation is integral.
    """
    import pyomo.environ as pyo

    def check():
        if deadline is not None and deadline.over():
            raise deadline.no_answer(f" (building the MILP of {len(instance.graph)} layers)")

    m = pyo.ConcreteModel(name=f"split[{instance.name}]")
    tensors = [t for t in instance.costs.tensors if t[2] > 0.0]
    define_variables(m, instance, tensors)
    check()
    define_side_rows(m)
    check()
    define_upload_rows(m, tensors, check)
    define_closure_rows(m, instance, active=closure, check=check)
    define_input_rows(m, instance)
    if pins:
        define_pins(m, instance)
    check()
    define_objective(m, instance, tensors)
    check()
    m._split_layer_names = instance.graph.names
    return m


def define_variables(m, instance: SplitInstance, tensors) -> None:
    """``x[v]`` (layer ``v`` on the server), ``y[k]`` (tensor ``k`` uploaded), ``y_in`` (raw input
    uploaded; only when the input costs something)."""
    import pyomo.environ as pyo

    m.L = pyo.RangeSet(0, len(instance.graph) - 1)
    m.T = pyo.RangeSet(0, len(tensors) - 1) if tensors else pyo.Set(initialize=[])
    m.x = pyo.Var(m.L, domain=pyo.Binary)
    m.d = pyo.Var(m.L, bounds=(0, 1))  # 1 - x: device side, so that every cost enters as given
    m.y = pyo.Var(m.T, domain=pyo.Binary)
    if instance.costs.input_weight > 0.0:
        m.y_in = pyo.Var(domain=pyo.Binary)


def define_side_rows(m) -> None:
    """``x[v] + d[v] = 1``: ``d`` is the device indicator, so the objective carries ``dev_v`` and
    ``srv_v`` exactly as given (no rounded ``srv_v - dev_v`` coefficient): an exact dual certificate
    of the model is then exact for the evaluator too."""
    import pyomo.environ as pyo

    m.side = pyo.Constraint(m.L, rule=lambda m, v: m.x[v] + m.d[v] == 1)


def define_upload_rows(m, tensors, check=None) -> None:
    """``x[w] - x[p] - y[k] <= 0`` for each consumer ``w`` of tensor ``k`` (producer ``p``);
    ``check()`` is called every 4,096 tensors."""
    import pyomo.environ as pyo

    m.upload = pyo.ConstraintList()
    for k, (p, cons, _w, _b) in enumerate(tensors):
        for w in cons:
            m.upload.add(m.x[w] - m.x[p] - m.y[k] <= 0)
        if check is not None and k % 4096 == 4095:
            check()


def define_closure_rows(m, instance: SplitInstance, active: bool = True, check=None) -> None:
    """``x[u] - x[w] <= 0`` for each graph edge ``u -> w``: no server -> device flow (digest 000
    E4, digest 002 §2.6). ``active=False`` leaves the list empty (the paper-literal graph).
    ``check()`` is called every 4,096 edges."""
    import pyomo.environ as pyo

    m.closure = pyo.ConstraintList()
    if active:
        for i, (u, w) in enumerate(instance.graph.edge_pairs):
            m.closure.add(m.x[u] - m.x[w] <= 0)
            if check is not None and i % 4096 == 4095:
                check()


def define_input_rows(m, instance: SplitInstance) -> None:
    """``x[v] - y_in <= 0`` for each input layer (the raw input is uploaded once, digest 002 §2.5)."""
    import pyomo.environ as pyo

    m.input_row = pyo.ConstraintList()
    if hasattr(m, "y_in"):
        for v in instance.costs.input_layers:
            m.input_row.add(m.x[v] - m.y_in <= 0)


def define_pins(m, instance: SplitInstance) -> None:
    """Pinned layers fix ``x`` (device pins, and input layers under ``input_policy="pin"``)."""
    c = instance.costs
    for v in np.flatnonzero(c.force_dev):
        m.x[int(v)].fix(0)
    for v in np.flatnonzero(c.force_srv):
        m.x[int(v)].fix(1)


def define_objective(m, instance: SplitInstance, tensors) -> None:
    """``sum_v dev_v d_v + srv_v x_v + sum_t w_t y_t + w_in y_in`` (minimise)."""
    import pyomo.environ as pyo

    c = instance.costs
    expr = sum(float(c.dev[v]) * m.d[v] + float(c.srv[v]) * m.x[v] for v in m.L)
    expr = expr + sum(float(t[2]) * m.y[k] for k, t in enumerate(tensors))
    if hasattr(m, "y_in"):
        expr = expr + float(c.input_weight) * m.y_in
    m.obj = pyo.Objective(expr=expr, sense=pyo.minimize)


class MilpArrays:
    """:func:`build_milp` as arrays, for HiGHS without Pyomo (:func:`milp_arrays`)."""

    def __init__(self, c, A, row_lower, row_upper, col_lower, col_upper, integer, n_layers: int):
        self.c, self.A = c, A
        self.row_lower, self.row_upper = row_lower, row_upper
        self.col_lower, self.col_upper = col_lower, col_upper
        self.integer, self.n_layers = integer, n_layers

    def matrix(self, *, relax: bool = False, **kw):
        """The model in a :class:`~splitopt.solvers.exact.highs.HighsMatrix` (LP relaxation with
        ``relax``)."""
        from splitopt.solvers.exact.highs import HighsMatrix

        return HighsMatrix.from_arrays(self.c, self.A, self.row_lower, self.row_upper, self.col_lower, self.col_upper,
                                       None if relax else self.integer, **kw)

    def assignment(self, instance: SplitInstance, x) -> list[str]:
        """Device-side names of a solution vector (``x[v] < 0.5``)."""
        names = instance.graph.names
        return sorted(names[v] for v in np.flatnonzero(np.asarray(x[:self.n_layers]) < 0.5))


def milp_arrays(instance: SplitInstance, *, closure: bool = True, pins: bool = True) -> MilpArrays:
    """The rows and columns of :func:`build_milp`, assembled with numpy in milliseconds (issue 21:
    Pyomo's build and compilation of the same model took 25 s on a 100,000-layer DAG and cannot be
    stopped by a time limit). Columns: ``x[0..L)``, ``d[0..L)``, ``y`` per tensor with a positive
    weight, ``y_in`` when the input costs something; rows in :func:`build_milp`'s order (``side``
    equalities, ``upload``, ``closure``, ``input_row``); pins as fixed column bounds (Pyomo's
    compiler substitutes fixed variables instead: same feasible set, same objective). The test
    ``tests/models/test_split_arrays.py`` checks that both give the same optimum and LP bound."""
    import scipy.sparse as sp

    c = instance.costs
    g = instance.graph
    n = len(g)
    tens = [t for t in c.tensors if t[2] > 0.0]
    T = len(tens)
    has_in = c.input_weight > 0.0
    ncol = 2 * n + T + int(has_in)
    cost = np.concatenate([np.asarray(c.srv, float), np.asarray(c.dev, float),
                           np.asarray([t[2] for t in tens], float), [float(c.input_weight)] if has_in else []])
    rows, cols, vals = [np.repeat(np.arange(n), 2)], [np.ravel(np.column_stack([np.arange(n), n + np.arange(n)]))], \
        [np.ones(2 * n)]
    r = n
    # upload: x[w] - x[p] - y[k] <= 0 per consumer w of tensor k
    prod = np.asarray([t[0] for t in tens for _w in t[1]], dtype=np.int64)
    cons = np.asarray([w for t in tens for w in t[1]], dtype=np.int64)
    kk = np.asarray([k for k, t in enumerate(tens) for _w in t[1]], dtype=np.int64)
    m_up = cons.size
    ru = r + np.arange(m_up)
    rows += [ru, ru, ru]
    cols += [cons, prod, 2 * n + kk]
    vals += [np.ones(m_up), -np.ones(m_up), -np.ones(m_up)]
    r += m_up
    # closure: x[u] - x[w] <= 0 per edge
    ep = np.asarray(list(g.edge_pairs) if closure else [], dtype=np.int64).reshape(-1, 2)
    rc = r + np.arange(len(ep))
    rows += [rc, rc]
    cols += [ep[:, 0], ep[:, 1]]
    vals += [np.ones(len(ep)), -np.ones(len(ep))]
    r += len(ep)
    if has_in:  # x[v] - y_in <= 0 per input layer
        inp = np.asarray(c.input_layers, dtype=np.int64)
        ri = r + np.arange(inp.size)
        rows += [ri, ri]
        cols += [inp, np.full(inp.size, ncol - 1)]
        vals += [np.ones(inp.size), -np.ones(inp.size)]
        r += inp.size
    A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, ncol))
    row_lower = np.concatenate([np.ones(n), np.full(r - n, -np.inf)])
    row_upper = np.concatenate([np.ones(n), np.zeros(r - n)])
    lo, hi = np.zeros(ncol), np.ones(ncol)
    if pins:
        lo[:n][np.asarray(c.force_srv, bool)] = 1.0
        hi[:n][np.asarray(c.force_dev, bool)] = 0.0
    integer = np.ones(ncol, dtype=bool)
    integer[n:2 * n] = False
    return MilpArrays(cost, A, row_lower, row_upper, lo, hi, integer, n)


def assignment_from_model(instance: SplitInstance, model) -> list[str]:
    """Device-side names from a solved :func:`build_milp` model (``x[v] < 0.5``)."""
    import pyomo.environ as pyo

    names = instance.graph.names
    return sorted(names[v] for v in range(len(names)) if pyo.value(model.x[v]) < 0.5)


__all__ = ["evaluate", "relaxed_cost", "check_feasible", "breakdown_of_mask", "build_milp", "milp_arrays", "MilpArrays", "define_variables",
           "define_side_rows", "define_upload_rows", "define_closure_rows", "define_input_rows", "define_pins", "define_objective",
           "assignment_from_model", "BREAKDOWN_KEYS"]
