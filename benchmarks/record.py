"""Run one benchmark script and write what it prints to ``benchmarks/results/NAME.md`` under a
header naming the machine (CPU, cores, memory), the software versions and the date, so every figure
the README quotes can be traced to a run anyone can repeat (``make bench``).

Usage: ``python benchmarks/record.py NAME SCRIPT [ARGS...]``.
"""

from __future__ import annotations

import contextlib
import io
import os
import platform
import runpy
import sys
import time
from pathlib import Path


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), cpu)
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            kb = int(next(line.split()[1] for line in fh if line.startswith("MemTotal")))
        mem = f", {kb / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    versions = [f"Python {platform.python_version()}"]
    for mod in ("highspy", "pyomo", "scipy", "numpy"):
        try:
            from importlib.metadata import version

            versions.append(f"{mod} {version(mod)}")
        except Exception:
            pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.machine()}; {', '.join(versions)}"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    name, script, *args = argv
    out = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, s):
            sys.__stdout__.write(s)
            out.write(s)
            return len(s)

    sys.argv = [script, *args]
    t0 = time.perf_counter()
    code = 0
    with contextlib.redirect_stdout(Tee()):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:  # a script that ends with sys.exit(status): its output is kept
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    took = time.perf_counter() - t0
    path = Path(__file__).resolve().parent / "results" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Benchmark `{Path(script).name}{' ' + ' '.join(args) if args else ''}`\n\n"
                    f"Machine: {machine()}.\nMeasured {time.strftime('%Y-%m-%d %H:%M %Z')} in {took:.0f} s "
                    f"(`make bench`; ratios are side by side in one run).\n\n```\n{out.getvalue().rstrip()}\n```\n")
    print(f"wrote {path}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
