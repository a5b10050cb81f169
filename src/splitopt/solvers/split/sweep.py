"""Exact sweeps of a ``split`` instance over a link rate or a machine speed (issue 12, item 2).

Every cost coefficient of the split model (seed 000 Eq. 7 in the corrected per-layer form of digest
000 §2.4; seed 002 ``L(S)``, digest 002 §1.2; see :mod:`splitopt.instances.split`) is a sum of
four scalars times fixed arrays::

    dev_v = sd N xi_D,v + T k_v (iu + id)      srv_v = ss N xi_S,v
    w_t   = N a_t (iu + T id)                  w_in  = N D_input iu   (input_policy "upload")

with ``iu = 1/R_D``, ``id = 1/R_S`` (inverse up- and downlink rates), ``sd``, ``ss`` the inverse
device and server speed factors and ``T = 1`` in training, 0 in inference. Each sweep parameter
``p`` moves one or two of these scalars as ``c / p``, so with ``x = 1/p`` every split ``S`` costs
``A_S + B_S x`` and the optimum is a minimum of affine functions of ``x``: concave and piecewise
linear. :func:`splitopt.validation.sweep.envelope` finds every piece (Eisner-Severance) with the
certified min-cut engine of :mod:`splitopt.solvers.flow` (the ``mincut`` algorithm: the flow
network's structure is built once, each probe only refills the capacities); ``A_S`` and ``B_S`` come
from the same vectorised evaluator the engine certifies against, and with ``check=True`` the family
evaluator (:func:`splitopt.models.split.evaluate`) recomputes each piece's cost at both ends on the
instance rebuilt at that parameter value (a mismatch beyond ``1e-9`` relative raises).

Parameters (units in the name, the instance's other values kept):

* ``up_mbps``: uplink device -> server in Mbit/s; ``down_mbps``: downlink (training only: inference
  sends nothing down, so the optimum is constant);
* ``rate_mbps``: the uplink in Mbit/s with the downlink scaled to keep the instance's down/up ratio;
* ``device_speed`` / ``server_speed``: speed factors (device or server seconds divided by ``p``;
  ``p = 1`` is the instance).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from splitopt.errors import InstanceError
from splitopt.instances.split import SplitInstance
from splitopt.validation.sweep import Piece, SweepResult, check_range, envelope

PARAMS = {
    "up_mbps": "uplink device -> server, Mbit/s (downlink kept)",
    "down_mbps": "downlink server -> device, Mbit/s (uplink kept; matters in training only)",
    "rate_mbps": "uplink, Mbit/s, with the downlink scaled to keep the instance's down/up ratio",
    "device_speed": "device speed factor (device seconds divided by it; 1 = the instance)",
    "server_speed": "server speed factor (server seconds divided by it; 1 = the instance)",
}

_MBIT = 1e6 / 8.0   # bytes/s per Mbit/s


def _param(param: str) -> str:
    if param not in PARAMS:
        raise InstanceError("--param", f"unknown split sweep parameter {param!r} (known: {', '.join(PARAMS)})")
    return param


def scalars(instance: SplitInstance, param: str) -> tuple[np.ndarray, np.ndarray]:
    """``(s0, s1)``: the scalars ``(iu, id, sd, ss)`` are ``s0 + s1 x`` with ``x = 1/p``."""
    iu, idn = 1.0 / instance.up_bytes_per_s, 1.0 / instance.down_bytes_per_s
    s0 = np.array([iu, idn, 1.0, 1.0])
    s1 = np.zeros(4)
    j = {"up_mbps": [0], "down_mbps": [1], "rate_mbps": [0, 1], "device_speed": [2], "server_speed": [3]}[_param(param)]
    s0[j] = 0.0
    if param == "up_mbps":
        s1[0] = 1.0 / _MBIT
    elif param == "down_mbps":
        s1[1] = 1.0 / _MBIT
    elif param == "rate_mbps":
        s1[0] = 1.0 / _MBIT
        s1[1] = instance.up_bytes_per_s / instance.down_bytes_per_s / _MBIT
    else:
        s1[j[0]] = 1.0
    return s0, s1


def at(instance: SplitInstance, param: str, p: float) -> SplitInstance:
    """The instance with the parameter set to ``p`` (validated like any instance)."""
    _param(param)
    if param == "up_mbps":
        return replace(instance, up_bytes_per_s=p * _MBIT)
    if param == "down_mbps":
        return replace(instance, down_bytes_per_s=p * _MBIT)
    if param == "rate_mbps":
        ratio = instance.down_bytes_per_s / instance.up_bytes_per_s
        return replace(instance, up_bytes_per_s=p * _MBIT, down_bytes_per_s=p * _MBIT * ratio)
    if param == "device_speed":
        return replace(instance, device_s=tuple(v / p for v in instance.device_s))
    return replace(instance, server_s=tuple(v / p for v in instance.server_s))


class _Affine:
    """The flow structure of an instance and its cost arrays as ``base(s)`` for scalars ``s``."""

    def __init__(self, instance: SplitInstance, param: str):
        from splitopt.solvers.split.mincut import _instance_structure

        c = instance.costs
        g = instance.graph
        N = float(instance.iterations)
        T = 1.0 if instance.mode == "training" else 0.0
        self.st, _w = _instance_structure(instance, True, True, True, True)
        self.Dc = N * np.asarray(instance.device_s, dtype=float)
        self.Sc = N * np.asarray(instance.server_s, dtype=float)
        self.Kp = T * np.array([lay.param_bytes for lay in g.layers], dtype=float)
        bytes_ = np.array([b for (_p, _c, _w, b) in c.tensors], dtype=float)
        self.Wt = N * bytes_
        self.T = T
        self.with_input = self.st.n_tensors > len(c.tensors)
        self.Win = N * instance.input_bytes if (self.with_input and instance.input_policy == "upload") else 0.0
        self.s0, self.s1 = scalars(instance, param)
        self.arr0 = self.arrays(self.s0)
        self.arr1 = self.arrays(self.s1)

    def arrays(self, s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        iu, idn, sd, ss = (float(v) for v in s)
        dev = sd * self.Dc + (iu + idn) * self.Kp
        srv = ss * self.Sc
        w = (iu + self.T * idn) * self.Wt
        if self.with_input:
            w = np.append(w, iu * self.Win)
        return dev, srv, w

    def at(self, x: float):
        return tuple(a + x * b for a, b in zip(self.arr0, self.arr1))

    def line(self, mask: np.ndarray) -> tuple[float, float]:
        return self.st.value(mask, *self.arr0), self.st.value(mask, *self.arr1)


def sweep(instance: SplitInstance, param: str, lo: float, hi: float, *, samples: int = 50,
          check: bool = True) -> SweepResult:
    """Every piece of the optimal cost of ``instance`` for ``param`` in ``[lo, hi]`` (exact).

    ``samples`` is unused (every split parameter is swept exactly). With ``check`` the family
    evaluator recomputes each piece's cost at both ends on the rebuilt instance.
    """
    from splitopt.models.split import evaluate
    from splitopt.solvers.flow import solve_structure
    from splitopt.validation.sweep import REL_TOL

    _param(param)
    lo, hi = check_range(param, lo, hi)
    t0 = time.perf_counter()
    aff = _Affine(instance, param)
    masks: dict[bytes, np.ndarray] = {}
    lines: dict[bytes, tuple[float, float]] = {}

    def probe(x: float) -> bytes:
        res = solve_structure(aff.st, *aff.at(x))
        if res is None:  # pragma: no cover - instance validation rules this out
            raise InstanceError("pin_server", "pins admit no feasible split")
        key = res.mask.tobytes()
        if key not in masks:
            masks[key] = res.mask.copy()
        return key

    def line(key: bytes) -> tuple[float, float]:
        if key not in lines:
            lines[key] = aff.line(masks[key])
        return lines[key]

    raw, solves = envelope(probe, line, 1.0 / hi, 1.0 / lo)
    pieces = []
    for xa, xb, key in reversed(raw):       # increasing x = decreasing p: reverse for increasing p
        p_lo, p_hi = 1.0 / xb, 1.0 / xa
        p_lo, p_hi = (lo if xb == 1.0 / lo else p_lo), (hi if xa == 1.0 / hi else p_hi)
        a, b = line(key)
        mask = masks[key]
        names = instance.names_of(mask)
        c_lo = c_hi = None
        if check:
            c_lo = evaluate(at(instance, param, p_lo), names)[0]
            c_hi = evaluate(at(instance, param, p_hi), names)[0]
            for p, c in ((p_lo, c_lo), (p_hi, c_hi)):
                f = a + b / p
                if abs(c - f) > REL_TOL * max(abs(c), abs(f), 1e-300) + 1e-12 * max(abs(a), abs(b / p)):
                    raise RuntimeError(f"sweep: the evaluator gives {c!r} at {param}={p!r} but the line "
                                       f"gives {f!r} (cost not affine in 1/{param}?)")
        pieces.append(Piece(p_lo, p_hi, names, a, b, c_lo, c_hi,
                            f"{int(mask.sum())}/{mask.size} layers on the device"))
    notes = []
    if param == "down_mbps" and instance.mode == "inference":
        notes.append("inference sends nothing server -> device: the downlink does not change any cost")
    return SweepResult(family="split", instance=instance.name, param=param, lo=lo, hi=hi, transform="1/p",
                       exact=True, pieces=pieces, solves=solves, seconds=time.perf_counter() - t0,
                       method="Eisner-Severance over x = 1/p with the certified min-cut (mincut)", notes=notes)


def sampled(instance: SplitInstance, param: str, values, *, fast: bool = True) -> list[tuple[float, list[str]]]:
    """Optimal splits at each parameter value (the baseline a sweep replaces): ``fast`` refills the same
    flow structure, otherwise each instance is rebuilt and solved with ``families.solve(.., "mincut")``."""
    from splitopt.families import solve
    from splitopt.solvers.flow import solve_structure

    out = []
    if fast:
        aff = _Affine(instance, param)
        for p in values:
            res = solve_structure(aff.st, *aff.at(1.0 / p))
            out.append((p, instance.names_of(res.mask)))
    else:
        for p in values:
            out.append((p, solve(at(instance, param, p), "mincut").assignment))
    return out


__all__ = ["sweep", "sampled", "at", "scalars", "PARAMS"]
