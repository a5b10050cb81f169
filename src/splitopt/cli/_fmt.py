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
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(str(c).rjust(w) if _numeric(c) else str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(out)


def _numeric(cell) -> bool:
    s = str(cell).replace(",", "").replace(" ", "")
    for suffix in ("ms", "us", "s", "T", "G", "M", "k", "%", "x"):
        if s.endswith(suffix) and len(s) > len(suffix):
            s = s[: -len(suffix)]
            break
    try:
        float(s)
        return True
    except ValueError:
        return False


#: terminal width every table fits unless ``--wide`` is given (issue 24)
WIDTH = 100


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the cut marked with ``~``."""
    return text if len(text) <= width else text[: max(1, width - 1)] + "~"


def _narrow_table(rows: list[list[str]], header: list[str], width: int = WIDTH, shrink: int | None = None,
                  sep: str = "  ") -> str:
    """Like :func:`_table`, but fits ``width`` columns: the separator drops to one space, then the
    column ``shrink`` (default: the last) is cut, its cut cells marked with ``~``."""
    def total(ws, s):
        return sum(ws) + len(s) * (len(ws) - 1)

    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    if total(widths, sep) > width:
        sep = " "
    over = total(widths, sep) - width
    if over > 0:
        i = len(header) - 1 if shrink is None else shrink
        widths[i] = max(len(header[i]), widths[i] - over)
        rows = [[_fit(str(c), widths[i]) if j == i else c for j, c in enumerate(r)] for r in rows]
    numeric = [all(_numeric(r[i]) or str(r[i]) == "-" for r in rows) and rows for i in range(len(header))]

    def cell(c, i):
        return str(c).rjust(widths[i]) if numeric[i] else str(c).ljust(widths[i])

    out = [sep.join(cell(h, i) for i, h in enumerate(header)).rstrip(),
           sep.join("-" * w for w in widths)]
    out += [sep.join(cell(c, i) for i, c in enumerate(r)).rstrip() for r in rows]
    return "\n".join(out)


def _wrap(prefix: str, items: list[str], width: int = WIDTH, indent: str = "  ") -> str:
    """``prefix`` followed by ``items`` joined with commas, wrapped to ``width`` columns."""
    import textwrap

    return textwrap.fill(prefix + ", ".join(items), width=width, subsequent_indent=indent,
                         break_on_hyphens=False)


def _fit_lines(text: str, width: int = WIDTH) -> str:
    """Every line of ``text`` wrapped to ``width`` columns, continuation lines indented two spaces
    more than the line they continue (families' ``render`` output, issue 24)."""
    import textwrap

    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        lead = " " * (len(line) - len(line.lstrip()))
        out.append(textwrap.fill(line.strip(), width, initial_indent=lead, subsequent_indent=lead + "  ",
                                 break_on_hyphens=False))
    return "\n".join(out)
