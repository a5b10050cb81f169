"""Formatting helpers shared by the command modules (tables, numbers, seconds)."""

from __future__ import annotations


def _fmt_num(x: float) -> str:
    if x == 0:
        return "0"
    ax = abs(x)
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if ax >= scale:
            return f"{x / scale:.3f}{unit}"
    return f"{x:.4g}"


def _fmt_s(x: float) -> str:
    from splitopt.validation.units import fmt_seconds

    return fmt_seconds(x)


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(str(c).rjust(w) if _numeric(c) else str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(out)


def _numeric(cell) -> bool:
    s = str(cell).replace(",", "").replace(" ", "")
    for suffix in ("ms", "us", "s", "T", "G", "M", "k", "%"):
        if s.endswith(suffix) and len(s) > len(suffix):
            s = s[: -len(suffix)]
            break
    try:
        float(s)
        return True
    except ValueError:
        return False

