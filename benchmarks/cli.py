"""Cold start of the ``splitopt`` command (issue 24): wall time of a fresh process for
``splitopt --help``, a tiny solve per family, ``families``, and ``report --html`` on a 1,000-row
store, with the heavy modules each one imported (``python -X importtime``).

Targets: ``--help`` under 0.2 s, a tiny solve under 1 s, ``report --html`` on 1,000 rows under 5 s.
Each figure is the median of ``--repeat`` runs (default 5) in new processes (wall time; ``cpu``:
user + system seconds, which depend little on the machine's load); ``python -c pass`` is the floor.
``--baseline SRC`` times another source tree side by side (runs alternate, so both see the same
load) and prints its time and the ratio baseline / this tree.

Usage: ``python benchmarks/cli.py [--repeat N] [--baseline SRC]``; ``make bench`` records it in
``benchmarks/results/cli.md`` through ``benchmarks/record.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
BASELINE: Path | None = None  # --baseline: another source tree run side by side (e.g. `git archive` of main)
HEAVY = ("numpy", "scipy", "pandas", "matplotlib", "pyomo", "networkx", "numba", "highspy", "torch")


def env(src: Path | None = None) -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(src or SRC) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e["MPLBACKEND"] = "Agg"
    return e


def wall(argv: list[str], cwd: str, repeat: int, src: Path | None = None) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of ``repeat`` fresh processes. CPU time hardly depends on
    what else the machine runs; wall time does (on a shared machine it is the one users feel)."""
    import resource

    walls, cpus = [], []
    for _ in range(repeat):
        u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run(argv, cwd=cwd, env=env(src), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        walls.append(time.perf_counter() - t0)
        u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(u1.ru_utime - u0.ru_utime + u1.ru_stime - u0.ru_stime)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {r.stderr.decode()[-500:]}")
    return walls, cpus


def heavy_imports(argv: list[str], cwd: str) -> str:
    """The heavy top-level packages the command imported."""
    r = subprocess.run([sys.executable, "-X", "importtime", *argv[1:]], cwd=cwd, env=env(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = set()
    for line in r.stderr.splitlines():
        if "|" in line:
            name = line.rsplit("|", 1)[1].strip().split(".")[0]
            if name in HEAVY:
                seen.add(name)
    return ", ".join(h for h in HEAVY if h in seen) or "none"


def make_instances(cwd: str) -> dict[str, str]:
    code = ("from splitopt.families import get_family\nfrom splitopt.instances import io\n"
            "for f in ('split', 'grouping', 'pipeline', 'throughput'):\n"
            "    fam = get_family(f)\n    io.save(fam.generate(1, **(fam.sets.quick or {})), f'tiny_{f}.json')\n")
    subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env(), check=True)
    return {f: f"tiny_{f}.json" for f in ("split", "grouping", "pipeline", "throughput")}


def make_store(cwd: str, rows: int = 1000) -> str:
    """A store of ``rows`` real rows: ``validate quick:4`` once, then its rows repeated under new
    instance hashes (the report's cost depends on the rows, not on how they were made)."""
    code = (
        "import sys\nfrom splitopt.validation import run_validation\n"
        "from splitopt.validation.store import ResultStore, load_dataframe\n"
        "run_validation('quick:4', store='seed.sqlite', progress=False)\n"
        "d = load_dataframe('seed.sqlite')\nrows = []\ni = 0\n"
        f"while len(rows) < {rows}:\n"
        "    for r in d.to_dict('records'):\n"
        f"        if len(rows) == {rows}:\n            break\n"
        "        r = dict(r); r['instance_hash'] = f\"{r['instance_hash']}-{i}\"; r['member_id'] = f\"{r['member_id']}#{i}\"\n"
        "        rows.append(r)\n    i += 1\n"
        "with ResultStore('runs1000.sqlite') as st:\n    st.add(rows)\n"
        "print(len(load_dataframe('runs1000.sqlite')))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env(), check=True, capture_output=True,
                         text=True).stdout.split()
    assert out and int(out[-1]) == rows, out
    return "runs1000.sqlite"


def main(argv: list[str] | None = None) -> int:
    """Print the table (see the module docstring); returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--baseline", default=None, metavar="SRC",
                    help="another source tree (its src/ folder) timed side by side, alternating runs")
    args = ap.parse_args(argv)
    base = Path(args.baseline).resolve() if args.baseline else None
    py = sys.executable
    cli = [py, "-m", "splitopt.cli"]
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as cwd:
        files = make_instances(cwd)
        store = make_store(cwd)
        cases = [("python -c pass (floor)", [py, "-c", "pass"], None),
                 ("splitopt --help", [*cli, "--help"], 0.2),
                 ("splitopt families", [*cli, "families"], None)]
        cases += [(f"splitopt solve (tiny {f})", [*cli, "solve", path], 1.0) for f, path in files.items()]
        cases += [("splitopt report --html (1,000 rows)", [*cli, "report", store, "--html", "r.html"], 5.0)]
        print(f"{'command':36s} {'wall':>7s} {'min':>7s} {'max':>7s} {'cpu':>7s}  {'target':>7s}  met  "
              + ("baseline  ratio  " if base else "") + "heavy imports")
        for label, argv, target in cases:
            n = args.repeat if "report" not in label else max(1, min(args.repeat, 3))
            ts, cpu, bts = [], [], []
            for _ in range(n):  # alternate with the baseline, so both see the same load
                t, c = wall(argv, cwd, 1)
                ts += t
                cpu += c
                if base is not None:
                    bts += wall(argv, cwd, 1, base)[0]
            med = statistics.median(ts)
            cmp = ""
            if base is not None:
                bmed = statistics.median(bts)
                cmp = f"{bmed:7.3f}s {bmed / med:5.1f}x  "
            met = "-" if target is None else ("yes" if med < target else "NO")
            tgt = "-" if target is None else f"< {target:g} s"
            print(f"{label:36s} {med:6.3f}s {min(ts):6.3f}s {max(ts):6.3f}s {statistics.median(cpu):6.3f}s  "
                  f"{tgt:>7s}  {met:3s}  {cmp}{heavy_imports(argv, cwd) if argv[1] != '-c' else '-'}")
        print(f"\n{args.repeat} runs each (report: {max(1, min(args.repeat, 3))}), fresh processes, "
              f"load average (1 min) {load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end "
              f"({os.cpu_count()} cores shared with other sessions)")
    return 0


if __name__ == "__main__":
    main()  # no sys.exit: benchmarks/record.py runs this file with runpy and writes the results after
