"""Shared linearisations of products for the Pyomo formulations.

Three helpers, each adding a small named sub-block of linear rows to a model or block:

:func:`add_mccormick`
    The McCormick envelope of ``w = x*y`` over the box ``[xL, xU] x [yL, yU]`` (McCormick 1976,
    *Math. Programming* 10:147-175, the convex and concave envelopes of a bilinear term):

    .. math::
        w \\ge x_L y + x y_L - x_L y_L,\\quad w \\ge x_U y + x y_U - x_U y_U,\\\\
        w \\le x_U y + x y_L - x_U y_L,\\quad w \\le x_L y + x y_U - x_L y_U.

    A relaxation in general; exact (``w = x*y``) whenever ``x`` or ``y`` sits at one of its
    bounds, hence exact when one factor is binary. ``sides="lower"`` keeps only the two ``>=``
    rows: enough when ``w`` appears only in ``T >= ... + c*w`` rows with ``c > 0`` of a
    minimisation (throughput digest 004, Sec. 6.3: "the lower envelope is enough").

:func:`add_binary_product`
    ``w = z*x`` with ``z`` binary and ``x`` bounded (continuous, integer or binary): the exact
    linearisation of Glover (1975, *Management Science* 22:455-460), also called Fortet's
    inequalities for two binaries. It is the McCormick envelope with ``z`` in ``[0, 1]``; at
    ``z in {0, 1}`` the four rows force ``w = z*x``. Used by the pipeline digest 001 Sec. 8.5(ii)
    (``beta_j * T``) and the throughput digest 004 Sec. 6.3 (``x_ai * x_bj``).

:func:`add_rlt_assignment_products`
    Level-1 RLT (Sherali-Adams; the Frieze-Yadegar marginal equalities) for the products
    ``y[a,b] = xi[a]*xj[b]`` of two one-hot assignment vectors (``sum_a xi[a] = 1`` and
    ``sum_b xj[b] = 1``): ``sum_b y[a,b] = xi[a]``, ``sum_a y[a,b] = xj[b]``, ``y >= 0``.
    Digest 004 Sec. 6.4 derives that these imply all four McCormick rows and are strictly
    tighter for three or more nodes; digest 001 Sec. 8.2 uses the same rows inside a MILP
    (exact at binary ``x``). Correction to paper 001 (Appendix B, constraints C17/C18; digest 001
    Sec. 3.6): the printed marginal sums run over the stage index ``k``; they must run over the
    partner indices, as here.

Bounds are read from the variables when the rows are built (a fixed variable counts as both
bounds). A missing bound raises :class:`splitopt.errors.InstanceError` naming the variable.
"""

from __future__ import annotations

import re
from typing import Mapping

from splitopt.errors import InstanceError

__all__ = ["add_mccormick", "add_binary_product", "add_rlt_assignment_products",
           "mccormick_envelope"]


def _bounds(v) -> tuple[float, float]:
    if v.fixed:
        if v.value is None:
            raise InstanceError(v.name, "fixed to None; a product needs a value or bounds")
        return float(v.value), float(v.value)
    lb, ub = v.bounds
    if lb is None or ub is None:
        raise InstanceError(v.name, f"needs finite bounds for a product linearisation, got "
                                    f"[{lb}, {ub}]")
    if lb > ub:
        raise InstanceError(v.name, f"lower bound {lb} > upper bound {ub}")
    return float(lb), float(ub)


def _is_binary(v) -> bool:
    if v.fixed:
        return v.value in (0, 1)
    lb, ub = v.bounds
    return v.is_integer() and lb is not None and ub is not None and lb >= 0 and ub <= 1


def _unique_name(block, stem: str) -> str:
    stem = re.sub(r"[^0-9A-Za-z_]+", "_", stem).strip("_") or "w"
    name, k = stem, 1
    while block.component(name) is not None:
        k += 1
        name = f"{stem}_{k}"
    return name


def mccormick_envelope(xL: float, xU: float, yL: float, yU: float,
                       x: float, y: float) -> tuple[float, float]:
    """Plain-float (lower, upper) envelope of ``x*y`` at the point ``(x, y)`` of the box.

    The largest of the two under-estimators and the smallest of the two over-estimators of
    :func:`add_mccormick` (McCormick 1976). Handy for bounds in algorithms; no Pyomo.
    """
    lo = max(xL * y + x * yL - xL * yL, xU * y + x * yU - xU * yU)
    hi = min(xU * y + x * yL - xU * yL, xL * y + x * yU - xL * yU)
    return lo, hi


def add_mccormick(block, w, x, y, *, sides: str = "both", name: str | None = None):
    """Add the McCormick envelope rows of ``w = x*y`` to ``block``; return the new sub-block.

    ``sides``: ``"both"`` (4 rows: ``lo1, lo2, up1, up2``), ``"lower"`` (``lo1, lo2``: ``w`` is
    only bounded from below) or ``"upper"`` (``up1, up2``). The sub-block is named ``name`` or
    ``mccormick_<w's name>`` (made unique).
    """
    import pyomo.environ as pyo

    if sides not in ("both", "lower", "upper"):
        raise InstanceError("sides", f"must be 'both', 'lower' or 'upper', got {sides!r}")
    xL, xU = _bounds(x)
    yL, yU = _bounds(y)
    b = pyo.Block(concrete=True)
    block.add_component(_unique_name(block, name or f"mccormick_{w.name}"), b)
    if sides in ("both", "lower"):
        b.lo1 = pyo.Constraint(expr=w >= xL * y + yL * x - xL * yL)
        b.lo2 = pyo.Constraint(expr=w >= xU * y + yU * x - xU * yU)
    if sides in ("both", "upper"):
        b.up1 = pyo.Constraint(expr=w <= xU * y + yL * x - xU * yL)
        b.up2 = pyo.Constraint(expr=w <= xL * y + yU * x - xL * yU)
    return b


def add_binary_product(block, w, z, x, *, sides: str = "both", name: str | None = None):
    """Exact linearisation of ``w = z*x`` for a binary ``z`` and a bounded ``x`` (Glover 1975).

    Raises :class:`InstanceError` when ``z`` is not binary (an integer variable within [0, 1]) or
    ``x`` is unbounded. With ``sides="both"`` every feasible point with binary ``z`` has
    ``w == z*x`` exactly; see :func:`add_mccormick` for the rows and the one-sided variants.
    """
    if not _is_binary(z):
        raise InstanceError(z.name, f"must be a binary variable for an exact product, got "
                                    f"domain {z.domain} with bounds {z.bounds}")
    return add_mccormick(block, w, z, x, sides=sides,
                         name=name or f"product_{w.name}")


def add_rlt_assignment_products(block, y: Mapping, xi: Mapping, xj: Mapping, *,
                                name: str = "rlt"):
    """Level-1 RLT rows tying ``y[a, b]`` to the product ``xi[a] * xj[b]``.

    ``xi`` and ``xj`` map a node to an assignment variable (each family sums to 1 in the
    caller's model); ``y`` maps every pair ``(a, b)`` of ``xi``'s and ``xj``'s keys to a
    variable (created by the caller, lower bound 0 is set here if missing). Adds
    ``row[a]: sum_b y[a,b] == xi[a]`` and ``col[b]: sum_a y[a,b] == xj[b]`` (digest 004
    Sec. 6.4). Returns the sub-block.
    """
    import pyomo.environ as pyo

    A, B = list(xi), list(xj)
    missing = [(a, bb) for a in A for bb in B if (a, bb) not in y]
    if missing:
        raise InstanceError(f"y[{missing[0]!r}]", "missing: RLT needs y for every pair (a, b)")
    for key in ((a, bb) for a in A for bb in B):
        v = y[key]
        if v.lb is None or v.lb < 0:
            v.setlb(0)
    blk = pyo.Block(concrete=True)
    block.add_component(_unique_name(block, name), blk)
    blk.row = pyo.Constraint(range(len(A)),
                             rule=lambda m, k: sum(y[A[k], bb] for bb in B) == xi[A[k]])
    blk.col = pyo.Constraint(range(len(B)),
                             rule=lambda m, k: sum(y[a, B[k]] for a in A) == xj[B[k]])
    return blk
