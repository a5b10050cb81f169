"""``splitopt audit``: the papers' computable claims, each reproduced or refuted by splitopt.

A :class:`Claim` is one row: the paper, the section, the claim as printed, the value the paper
(or its digest's check) gives, and a function computing splitopt's value, which returns a
:class:`Finding` (the value, the verdict ``reproduced`` / ``refuted`` / ``not computable`` and a
short reason). A claim with ``reason_not_computable`` set has no function: the paper does not give
what would be needed (figure-only numbers, unstated hardware).

Families contribute claims through ``Family.claims`` (``"module:function"`` returning a list of
claims, imported only when the audit runs): ``split`` (seeds 000 and 002) in
:mod:`splitopt.solvers.split.claims`, ``grouping`` (seed 003) in
:mod:`splitopt.solvers.grouping.claims`. Claims marked ``slow`` run only with ``--slow``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable

REPRODUCED, REFUTED, NOT_COMPUTABLE, SKIPPED, ERROR = "reproduced", "refuted", "not computable", "skipped (slow)", "error"


@dataclass(frozen=True)
class Finding:
    """splitopt's value for a claim, the verdict and why; ``data`` holds the raw numbers (for tests)."""

    value: str
    verdict: str
    reason: str = ""
    data: Any = None


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str            # e.g. "000 Li et al., Fast AI Model Splitting"
    section: str
    claim: str            # as printed (quoted or closely paraphrased, with the equation numbers)
    paper_value: str
    compute: Callable[[], Finding] | None = None
    reason_not_computable: str = ""
    slow: bool = False


@dataclass
class Row:
    id: str
    family: str
    paper: str
    section: str
    claim: str
    paper_value: str
    value: str
    verdict: str
    reason: str
    seconds: float
    data: Any = field(default=None, repr=False)

    def public(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k != "data"}
        d["data"] = self.data
        return d


def claims_of(family: str) -> list[Claim]:
    from splitopt.families import Algorithm, get_family

    fam = get_family(family)
    hook = getattr(fam, "claims", None)
    if not hook:
        return []
    return list(Algorithm("claims", hook).resolve()())


def run(families: list[str] | None = None, *, slow: bool = False, only: list[str] | None = None) -> list[Row]:
    """Evaluate every claim of ``families`` (default: all registered families with claims)."""
    from splitopt.families import family_names

    rows = []
    for fam in families or family_names():
        for c in claims_of(fam):
            if only and c.id not in only:
                continue
            t0 = time.perf_counter()
            if c.compute is None:
                f = Finding("-", NOT_COMPUTABLE, c.reason_not_computable)
            elif c.slow and not slow:
                f = Finding("-", SKIPPED, "slow: run `splitopt audit --slow`")
            else:
                try:
                    f = c.compute()
                except Exception as exc:  # a claim that crashes is reported, never hidden
                    f = Finding("-", ERROR, f"{type(exc).__name__}: {exc}")
            rows.append(Row(c.id, fam, c.paper, c.section, c.claim, c.paper_value, f.value, f.verdict, f.reason,
                            time.perf_counter() - t0, f.data))
    return rows


def _wrap(s: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(s, width) or [""]


def text(rows: list[Row]) -> str:
    """A terminal table (long cells wrapped), then the verdict counts."""
    # 100 columns in all (issue 24): six columns and five two-space gaps
    cols = [("paper", 8), ("section", 11), ("claim as printed", 26), ("paper says", 14), ("splitopt", 21),
            ("verdict", 10)]
    out = ["  ".join(h.ljust(w) for h, w in cols), "  ".join("-" * w for _h, w in cols)]
    for r in rows:
        cells = [_wrap(str(v), w) for v, (_h, w) in zip((r.paper.split(" ")[0], r.section, r.claim, r.paper_value,
                                                           r.value, r.verdict), cols)]
        if r.reason:
            cells[4] += _wrap("(" + r.reason + ")", cols[4][1])
        for i in range(max(len(c) for c in cells)):
            out.append("  ".join((c[i] if i < len(c) else "").ljust(w) for c, (_h, w) in zip(cells, cols)).rstrip())
        out.append("")
    out.append(summary(rows))
    return "\n".join(out)


def summary(rows: list[Row]) -> str:
    from collections import Counter

    n = Counter(r.verdict for r in rows)
    parts = [f"{n[v]} {v}" for v in (REPRODUCED, REFUTED, NOT_COMPUTABLE, SKIPPED, ERROR) if n[v]]
    return f"{len(rows)} claims: " + ", ".join(parts)


def markdown(rows: list[Row]) -> str:
    def esc(s: str) -> str:
        return str(s).replace("|", "\\|").replace("\n", " ")

    out = ["| paper | section | claim as printed | paper says | splitopt | verdict |", "|---|---|---|---|---|---|"]
    for r in rows:
        val = r.value + (f" ({r.reason})" if r.reason else "")
        out.append(f"| {esc(r.paper)} | {esc(r.section)} | {esc(r.claim)} | {esc(r.paper_value)} | {esc(val)} | "
                   f"**{esc(r.verdict)}** |")
    out += ["", summary(rows)]
    return "\n".join(out)


def _key(k: Any) -> str | int | float | bool | None:
    if k is None or isinstance(k, (str, bool, int, float)):
        return k
    if isinstance(k, tuple):  # e.g. pipeline ratios keyed by (N, K): "2,0"
        return ",".join(str(_key(x)) for x in k)
    return str(k)


def plain(x: Any) -> Any:
    """``x`` as JSON data: mapping keys that JSON cannot hold (tuples: issue 21, ``splitopt audit
    --json`` ended in ``TypeError: keys must be str ... not tuple``) joined as ``"a,b"``; numpy
    scalars and arrays as numbers and lists; sets sorted; non-finite floats as ``"inf"``/``"nan"``
    (strict JSON has no such tokens); anything else as its ``str``."""
    import math

    if isinstance(x, dict):
        return {_key(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, (set, frozenset)):
        return [plain(v) for v in sorted(x, key=repr)]
    if isinstance(x, bool) or x is None or isinstance(x, (str, int)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else str(x)
    tolist = getattr(x, "tolist", None)  # numpy scalars and arrays
    if callable(tolist):
        return plain(tolist())
    return str(x)


def to_json(rows: list[Row]) -> str:
    return json.dumps([plain(r.public()) for r in rows], indent=1, allow_nan=False)


__all__ = ["Claim", "Finding", "Row", "run", "text", "markdown", "to_json", "plain", "claims_of", "REPRODUCED", "REFUTED",
           "NOT_COMPUTABLE", "SKIPPED", "ERROR"]
