"""Number formats shared by the terminal, the reports and the plots (no heavy imports: the CLI
uses them on its fast path). Gaps are always shown in percent."""

from __future__ import annotations

import math


def fmt_seconds(x: float) -> str:
    """``0 s``, ``1.2345 s``, ``12.3456 ms``, ``123.456 us``."""
    if x == 0:
        return "0 s"
    if abs(x) >= 1:
        return f"{x:.4f} s"
    if abs(x) >= 1e-3:
        return f"{x * 1e3:.4f} ms"
    return f"{x * 1e6:.3f} us"


def fmt_seconds_short(x: float) -> str:
    """Three significant digits: ``1.23 s``, ``12.3 ms``, ``123 us`` (narrow terminal tables)."""
    if x == 0:
        return "0 s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(x) >= scale or unit == "us":
            v = x / scale
            return f"{v:.3g} {unit}" if abs(v) < 1000 else f"{v:,.0f} {unit}"
    return f"{x:.3g} s"  # pragma: no cover


def fmt_gap(g: float | None) -> str:
    """A relative gap (0.0116 = 1.16 %) in percent: ``1.16%``, ``11,600%``; ``-`` when unknown."""
    if g is None or (isinstance(g, float) and math.isnan(g)):
        return "-"
    p = 100.0 * g
    if p == 0:
        return "0%"
    if abs(p) >= 1000:
        return f"{p:,.0f}%"
    return f"{p:.3g}%"


__all__ = ["fmt_seconds", "fmt_seconds_short", "fmt_gap"]
