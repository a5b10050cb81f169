"""Exact parameter sweeps: the optimal solution over a whole parameter range, not samples.

When every solution's cost is an affine function ``A_S + B_S x`` of a transformed parameter ``x``
(the inverse of a link rate or of a machine speed for ``split``, the number of requests for
``grouping``'s ``perf``), the optimal cost ``f(x) = min_S (A_S + B_S x)`` is concave and piecewise
linear, and every piece can be found exactly with the Eisner-Severance method (M. J. Eisner and
D. G. Severance, "Mathematical techniques for efficient record segmentation in large shared
databases", J. ACM 23(4), 1976, the parametric "solve, intersect, solve, recurse" scheme; also in
Gusfield's analysis of parametric combinatorial problems): solve at both ends of the range, intersect
the two lines, solve at the intersection; if the optimum there lies on the two lines the
intersection is a breakpoint, otherwise a new line was found and both halves are searched again.
Each piece costs about two solves; no piece narrower in cost than the tolerance (relative ``1e-9``,
the project's objective tolerance) is missed, because at every reported breakpoint an exact solve
showed that no solution is cheaper than the two adjacent lines there, and concavity extends that to
the whole interval (``f`` lies below both lines and above their chord).

:func:`envelope` is the method over real ``x``; :func:`integer_envelope` the same over integer
``x`` (a parameter such as the number of requests): the probe points are the two integers around
each intersection, and a pair of adjacent integers matching the two lines proves them optimal on
every integer of the interval by the same concavity argument.

A family plugs in through ``Family.sweep`` (``"module:function"``): ``function(instance, param, lo,
hi, *, samples, check)`` returns a :class:`SweepResult`; an unknown ``param`` raises
:class:`~splitopt.errors.InstanceError` listing the family's parameters. Parameters whose cost is not
affine in any transformation are swept by sampling (``exact=False``, the resolution stated).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Hashable, Sequence

from splitopt.errors import InstanceError

#: relative tolerance of "the optimum lies on the line" (the project's objective tolerance)
REL_TOL = 1e-9


@dataclass(frozen=True)
class Piece:
    """One piece of the optimal cost over the parameter interval ``[lo, hi]`` (parameter units).

    ``solution`` is the optimal solution there (the family's plain-data assignment), ``cost`` the
    formula ``cost = intercept + slope * t(p)`` with ``t`` the transformation named by
    :attr:`SweepResult.transform` (``1/p`` or ``p``); ``cost_lo`` / ``cost_hi`` are the family
    evaluator's objective of ``solution`` at the two ends (``None`` when not checked).
    """

    lo: float
    hi: float
    solution: Any
    intercept: float
    slope: float
    cost_lo: float | None = None
    cost_hi: float | None = None
    summary: str = ""


@dataclass
class SweepResult:
    family: str
    instance: str
    param: str
    lo: float
    hi: float
    transform: str            # "1/p" or "p": cost = intercept + slope * transform(p) on each piece
    exact: bool               # True: every piece and breakpoint exact; False: sampled
    pieces: list[Piece]
    solves: int
    seconds: float
    method: str
    resolution: str | None = None   # sampling: where a change may hide between samples
    notes: list[str] = field(default_factory=list)

    @property
    def breakpoints(self) -> list[float]:
        return [p.hi for p in self.pieces[:-1]]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["breakpoints"] = self.breakpoints
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, default=str)

    def text(self) -> str:
        """A terminal table: one row per piece."""
        t = "1/p" if self.transform == "1/p" else "p"
        head = (f"sweep of {self.instance!r} ({self.family}) over {self.param} in [{self.lo:.6g}, {self.hi:.6g}]: "
                f"{len(self.pieces)} piece(s), {len(self.breakpoints)} "
                f"{'breakpoint(s)' if self.exact else 'change(s) between samples'}, {self.solves} solves, "
                f"{self.seconds:.3g} s; " + ("exact (Eisner-Severance)" if self.exact else
                                             f"SAMPLED, {self.resolution}"))
        rows = [["from", "to", f"cost = a + b*{t}: a", "b", "cost at from", "cost at to", "solution"]]
        for p in self.pieces:
            ab = ["-", "-"] if not self.exact else [f"{p.intercept:.6g}", f"{p.slope:.6g}"]
            rows.append([f"{p.lo:.6g}", f"{p.hi:.6g}", *ab,
                         "-" if p.cost_lo is None else f"{p.cost_lo:.6g}",
                         "-" if p.cost_hi is None else f"{p.cost_hi:.6g}", p.summary])
        w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        import textwrap

        lines = [textwrap.fill(head, 100, subsequent_indent="  "),  # 100 columns (issue 24)
                 "  ".join(c.ljust(w[i]) for i, c in enumerate(rows[0])).rstrip(),
                 "  ".join("-" * x for x in w)]
        for r in rows[1:]:
            lines.append("  ".join(c.rjust(w[i]) if i < 6 else c for i, c in enumerate(r)).rstrip())
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


Line = tuple[float, float]


def _close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b), scale)


def envelope(probe: Callable[[float], Hashable], line: Callable[[Hashable], Line], xl: float, xr: float, *,
             max_solves: int = 100_000) -> tuple[list[tuple[float, float, Hashable]], int]:
    """Every piece of ``f(x) = min_S line(S)(x)`` on ``[xl, xr]`` (Eisner-Severance).

    ``probe(x)`` returns an optimal solution key at ``x``; ``line(key)`` its ``(intercept, slope)``.
    Returns ``([(x_a, x_b, key), ...] in increasing x, number of probes)``; zero-width pieces are
    dropped and adjacent pieces with the same line merged.
    """
    solves = 0

    def p(x):
        nonlocal solves
        solves += 1
        if solves > max_solves:
            raise RuntimeError(f"sweep: more than {max_solves} solves (the cost is not piecewise affine?)")
        return probe(x)

    ka, kb = p(xl), p(xr)
    out: list[tuple[float, float, Hashable]] = []
    stack = [(xl, ka, xr, kb)]
    while stack:
        xa, ma, xb, mb = stack.pop()
        (a1, b1), (a2, b2) = line(ma), line(mb)
        scale = max(abs(a1 + b1 * xa), abs(a1 + b1 * xb), abs(a2 + b2 * xa), abs(a2 + b2 * xb), 1e-300)
        if ma == mb or (_close(a1 + b1 * xa, a2 + b2 * xa, scale) and _close(a1 + b1 * xb, a2 + b2 * xb, scale)):
            out.append((xa, xb, ma))
            continue
        den = b1 - b2
        xs = (a2 - a1) / den if den != 0 else 0.5 * (xa + xb)
        xs = min(max(xs, xa), xb) if math.isfinite(xs) else 0.5 * (xa + xb)
        ms = p(xs)
        a3, b3 = line(ms)
        f = a3 + b3 * xs
        lval = min(a1 + b1 * xs, a2 + b2 * xs)
        if f >= lval - REL_TOL * max(abs(lval), scale):
            out.append((xs, xb, mb))   # pushed in reverse: the stack pops the left half last
            out.append((xa, xs, ma))
        else:
            stack.append((xa, ma, xs, ms))
            stack.append((xs, ms, xb, mb))
    return _tidy(out, line), solves


def integer_envelope(probe: Callable[[int], Hashable], line: Callable[[Hashable], Line], xl: int, xr: int,
                     *, max_solves: int = 100_000) -> tuple[list[tuple[int, int, Hashable]], int]:
    """:func:`envelope` over the integers ``xl..xr``: pieces ``(first, last, key)`` covering every integer."""
    solves = 0

    def p(x):
        nonlocal solves
        solves += 1
        if solves > max_solves:
            raise RuntimeError(f"sweep: more than {max_solves} solves")
        return probe(x)

    def val(k, x):
        a, b = line(k)
        return a + b * x

    ka = p(xl)
    kb = p(xr) if xr != xl else ka
    out: list[tuple[int, int, Hashable]] = []
    stack = [(xl, ka, xr, kb)]
    while stack:
        xa, ma, xb, mb = stack.pop()
        scale = max(abs(val(ma, xa)), abs(val(mb, xb)), 1e-300)
        if xa == xb or ma == mb or (_close(val(ma, xa), val(mb, xa), scale) and _close(val(ma, xb), val(mb, xb), scale)):
            out.append((xa, xb, ma))
            continue
        if xb - xa == 1:
            out.append((xb, xb, mb))
            out.append((xa, xa, ma))
            continue
        (a1, b1), (a2, b2) = line(ma), line(mb)
        den = b1 - b2
        xs = (a2 - a1) / den if den != 0 else 0.5 * (xa + xb)
        r = int(math.floor(min(max(xs, xa), xb - 1))) if math.isfinite(xs) else (xa + xb) // 2
        r = min(max(r, xa), xb - 1)
        found = None
        for x in (r, r + 1):
            if x in (xa, xb):
                continue
            k = p(x)
            f = val(k, x)
            lv = min(val(ma, x), val(mb, x))
            if f < lv - REL_TOL * max(abs(lv), scale):
                found = (x, k)
                break
        if found is None:   # the two lines are optimal at r and r + 1: ma on [xa, r], mb on [r + 1, xb]
            out.append((r + 1, xb, mb))
            out.append((xa, r, ma))
        else:
            x, k = found
            stack.append((xa, ma, x, k))
            stack.append((x, k, xb, mb))
    out.reverse()
    merged: list[tuple[int, int, Hashable]] = []
    for a, b, k in sorted(out, key=lambda t: (t[0], t[1])):
        if merged and merged[-1][2] == k and merged[-1][1] >= a - 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b), k)
        elif merged and a <= merged[-1][1]:   # a shared endpoint (x in two pieces): keep it in the first
            if b > merged[-1][1]:
                merged.append((merged[-1][1] + 1, b, k))
        else:
            merged.append((a, b, k))
    return merged, solves


def _tidy(out, line):
    out = sorted(out, key=lambda t: (t[0], t[1]))
    merged: list[tuple[float, float, Hashable]] = []
    for a, b, k in out:
        if merged and (merged[-1][2] == k or line(merged[-1][2]) == line(k)):
            merged[-1] = (merged[-1][0], b, merged[-1][2])
        elif b > a or not merged and len(out) == 1:
            merged.append((a, b, k))
        elif merged:
            continue
        else:
            merged.append((a, b, k))
    # a zero-width first piece followed by a real one: drop it
    merged = [m for m in merged if m[1] > m[0]] or merged[:1]
    for i in range(1, len(merged)):  # contiguous
        merged[i] = (merged[i - 1][1], merged[i][1], merged[i][2])
    return merged


def log_samples(lo: float, hi: float, n: int) -> list[float]:
    """``n`` log-spaced points from ``lo`` to ``hi`` (both included)."""
    if n < 2 or lo == hi:
        return [lo] if lo == hi else [lo, hi]
    r = math.log(hi / lo)
    return [lo] + [lo * math.exp(r * i / (n - 1)) for i in range(1, n - 1)] + [hi]


def check_range(param: str, lo: float, hi: float, *, positive: bool = True) -> tuple[float, float]:
    from splitopt.errors import check_number

    lo = check_number("--from", lo, minimum=0.0 if positive else None, strict=positive)
    hi = check_number("--to", hi, minimum=0.0 if positive else None, strict=positive)
    if hi < lo:
        raise InstanceError("--to", f"must be >= --from ({lo:g}) for {param}, got {hi:g}")
    return lo, hi


def sweep(instance: Any, param: str, lo: float, hi: float, *, samples: int = 50, check: bool = True) -> SweepResult:
    """The family's sweep of ``instance`` over ``param`` in ``[lo, hi]`` (see the module docstring)."""
    from splitopt.families import Algorithm, family_of

    fam = family_of(instance)
    hook = getattr(fam, "sweep", None)
    if hook is None:
        raise InstanceError("--param", f"family {fam.name!r} has no sweep")
    fn = Algorithm("sweep", hook).resolve()
    return fn(instance, param, lo, hi, samples=samples, check=check)


def equal_runs(keys: Sequence[Hashable]) -> list[tuple[int, int]]:
    """``(i, j)`` index ranges (both ends included) of the maximal runs of equal consecutive keys:
    the pieces of a sampled sweep, where neighbouring samples with one solution form one piece."""
    runs, i = [], 0
    while i < len(keys):
        j = i
        while j + 1 < len(keys) and keys[j + 1] == keys[i]:
            j += 1
        runs.append((i, j))
        i = j + 1
    return runs


def plot(result: SweepResult, path: str, values: Sequence[float] | None = None) -> None:
    """Cost (top) and a one-number summary of the solution (bottom) against the parameter."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(7, 5.5), constrained_layout=True)
    inv = result.transform == "1/p"
    levels: list[float] = []
    for i, pc in enumerate(result.pieces):
        if result.exact:
            xs = log_samples(pc.lo, pc.hi, 40) if (pc.lo > 0 and pc.hi > pc.lo) else [pc.lo, pc.hi]
            ys = [pc.intercept + pc.slope * ((1.0 / x) if inv else x) for x in xs]
            ax1.plot(xs, ys, color=f"C{i % 10}", lw=2)
        else:  # sampled: the evaluator's cost at the first and last sample of each run
            ax1.plot([pc.lo, pc.hi], [pc.cost_lo, pc.cost_hi], "o-", color=f"C{i % 10}", lw=1)
        for size in _levels_of(pc.solution, result.family):
            ax2.hlines(size, pc.lo, pc.hi, color=f"C{i % 10}", lw=3)
            if not result.exact:  # a run of one sample has no length: mark its samples
                ax2.plot([pc.lo, pc.hi], [size, size], "o", color=f"C{i % 10}", ms=4)
            levels.append(size)
    for b in result.breakpoints:
        ax1.axvline(b, color="0.8", lw=0.6, zorder=0)
        ax2.axvline(b, color="0.8", lw=0.6, zorder=0)
    if result.lo > 0 and result.hi / max(result.lo, 1e-300) > 50:
        ax1.set_xscale("log")
        ax1.set_yscale("log")
    # a family may name the cost, the parameter and the size with their units
    ax1.set_ylabel(getattr(result, "cost_label", None) or getattr(result, "y_label", None)
                   or ("optimal cost [s]" if result.family in ("split", "grouping") else "optimal cost"))
    runs = "pieces" if result.exact else f"runs of equal solutions over {result.solves} samples"
    ax1.set_title(f"{result.instance}: optimal cost over {result.param}, {len(result.pieces)} {runs}"
                  + ("" if result.exact else " (sampled)"))
    from matplotlib.ticker import MaxNLocator

    ax2.yaxis.set_major_locator(MaxNLocator(integer=True))  # layers, parts, nodes: whole numbers
    finite = [v for v in levels if math.isfinite(v)]
    if finite and max(finite) - min(finite) < 2:  # a flat or near-flat count: whole-number ticks around it
        ax2.set_ylim(min(finite) - 1, max(finite) + 1)
    ax2.set_ylabel(getattr(result, "size_label", None) or _size_label(result))
    ax2.set_xlabel(getattr(result, "param_label", None) or getattr(result, "x_label", None)
                   or PARAM_LABELS.get(result.param, result.param))
    from splitopt.instances.io import write_text_atomic
    from splitopt.validation.report import _png

    write_text_atomic(path, _png(fig))  # closes the figure; written with the user's umask


def _size_of(solution, family: str = "") -> float:
    if family == "throughput" and isinstance(solution, (list, tuple)):
        return len(set(solution))   # throughput: nodes used
    if isinstance(solution, dict) and "servers" in solution:
        return len(solution["servers"])  # pipeline: server blocks
    if isinstance(solution, (list, tuple)) and solution and all(isinstance(s, str) for s in solution):
        return len(solution)        # split: layers on the device
    if isinstance(solution, (list, tuple)):
        return len(solution)        # grouping: number of groups
    return float("nan")


def _levels_of(solution, family: str = "") -> list[float]:
    """What the bottom panel draws for one piece: the cut positions of a grouping (group sizes ->
    parts before each cut, so moving cuts show), else the one-number size of :func:`_size_of`."""
    if isinstance(solution, (list, tuple)) and solution and all(isinstance(s, int) for s in solution):
        out, acc = [], 0
        for size in solution[:-1]:
            acc += size
            out.append(acc)
        return out
    return [_size_of(solution, family)]


#: axis labels with units for the swept parameters (issue 24); others show the parameter's name
PARAM_LABELS = {"up_mbps": "uplink [Mbit/s]", "down_mbps": "downlink [Mbit/s]", "rate_mbps": "uplink [Mbit/s]",
                "device_speed": "device speed factor", "server_speed": "server speed factor",
                "requests": "requests R", "bandwidth_bytes_per_s": "link rate [bytes/s]"}


def _size_label(result: SweepResult) -> str:
    return {"split": "layers on the device", "grouping": "cuts: parts before each cut",
            "throughput": "nodes used"}.get(result.family, "solution size")


__all__ = ["Piece", "SweepResult", "equal_runs", "envelope", "integer_envelope", "log_samples", "sweep", "plot", "REL_TOL",
           "check_range"]
