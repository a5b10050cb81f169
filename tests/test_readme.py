"""The README's tour runs as written (issue 24): every ``sh`` block's ``splitopt`` commands and every
``python`` block run in a fresh directory, in order, and each ``text`` block that follows is checked
line by line against what the commands before it printed. ``make`` lines (the two commands: set-up
and the whole suite) are not run here. Links to ``docs/`` pages must point at files that exist."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def _normal(line: str) -> str:
    return " ".join(line.split())


def run_splitopt(argv: list[str]) -> tuple[int, str]:
    from splitopt.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


def test_readme_is_a_short_tour():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    for lang, _ in blocks(text):
        assert lang in ("sh", "python", "text"), f"untagged or unknown block language {lang!r}"
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README links to a missing file: {target}"
    for page in (ROOT / "docs").glob("*.md"):
        for target in re.findall(r"\]\(([^)#]+)\)", page.read_text()):
            if not target.startswith("http"):
                assert (page.parent / target).exists(), f"{page.name} links to a missing file: {target}"


def test_readme_tour_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    printed = ""  # output of the blocks since the last checked text block
    ran = 0
    for lang, body in blocks(README.read_text()):
        if lang == "sh":
            for line in body.splitlines():
                cmd = line.split("#", 1)[0].strip()
                if not cmd or cmd.startswith("make "):
                    continue
                argv = shlex.split(cmd)
                assert argv[0] == "splitopt", f"README shell line is not a splitopt command: {line!r}"
                code, out = run_splitopt(argv[1:])
                assert code == 0, f"{cmd!r} exited {code}:\n{out}"
                printed += out
                ran += 1
        elif lang == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(body, "README.md", "exec"), {"__name__": "__readme__"})
            printed += out.getvalue()
            ran += 1
        elif lang == "text":
            got = {_normal(line) for line in printed.splitlines()}
            for want in body.splitlines():
                if want.strip() and "..." not in want:
                    assert _normal(want) in got, f"README shows {want.strip()!r}, the commands did not print it"
            printed = ""
    assert ran >= 12  # the tour, not a block that silently matched nothing
    assert (tmp_path / "report.html").stat().st_size > 10_000 and (tmp_path / "sweep.png").stat().st_size > 10_000


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(pytest.main([__file__, "-q"]))


def test_docs_python_examples_run(monkeypatch, tmp_path):
    """Every ``python`` block of the docs/ pages runs, and a trailing ``# text`` comment after a
    ``print`` is what it printed (so the pages' examples cannot rot either)."""
    monkeypatch.chdir(tmp_path)
    ran = 0
    for page in sorted((ROOT / "docs").glob("*.md")):
        for lang, body in blocks(page.read_text()):
            if lang != "python":
                continue
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(body, str(page), "exec"), {"__name__": "__docs__"})
            shown = [ln[2:] for ln in body.splitlines() if ln.startswith("# ")]
            got = {_normal(line) for line in out.getvalue().splitlines()}
            for want in shown:
                assert _normal(want) in got, f"{page.name} shows {want!r}, the block did not print it"
            ran += 1
    assert ran >= 1
