"""The ``splitopt`` command.

User errors (bad files, bad options, unknown names, infeasible inputs) print one line
``splitopt: error: <field path>: <message>`` and exit with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Sequence

from splitopt.errors import SplitoptError


# ---------------------------------------------------------------------- helpers
def _fmt_num(x: float) -> str:
    if x == 0:
        return "0"
    ax = abs(x)
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if ax >= scale:
            return f"{x / scale:.3f}{unit}"
    return f"{x:.4g}"


def _fmt_s(x: float) -> str:
    from splitopt.validation.report import fmt_seconds

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


# ---------------------------------------------------------------------- commands
def cmd_zoo(args) -> int:
    from splitopt.instances import zoo

    if args.zoo_cmd == "list":
        rows = []
        for name in zoo.list_models():
            g = zoo.get(name)
            t = g.totals()
            rows.append([name, str(t["layers"]), str(t["edges"]), f"{int(round(t['params'])):,}",
                         f"{t['macs'] / 1e9:.3f}", str(g.meta.get("input_size", ""))])
        print(_table(rows, ["model", "layers", "edges", "params", "GMACs", "input"]))
        return 0
    g = zoo.get(args.name, input_size=args.input_size, batch=args.batch)
    if args.output:
        from splitopt.instances import io

        io.save(g, args.output)
        print(f"wrote {args.output}")
        return 0
    rows = []
    for lay in g.layers:
        shape = lay.meta.get("shape", "")
        rows.append([lay.name, lay.op, "x".join(map(str, shape)) if isinstance(shape, (list, tuple)) else str(shape),
                     f"{int(round(lay.params)):,}", _fmt_num(lay.macs), _fmt_num(lay.out_bytes), lay.block or ""])
    print(_table(rows, ["layer", "op", "output", "params", "MACs", "out bytes", "block"]))
    t = g.totals()
    print()
    print(f"{g.name}: {t['layers']} layers, {t['edges']} edges, parameters {int(round(t['params'])):,} "
          f"({_fmt_num(t['param_bytes'])}B), MACs {t['macs']:,.0f} ({t['macs'] / 1e9:.3f} G), "
          f"output bytes {_fmt_num(t['out_bytes'])}B")
    return 0


def cmd_import(args) -> int:
    from splitopt.instances import io

    if args.import_kind == "dnn-partitioning":  # issue 11: a placement workload -> a throughput instance
        from splitopt.instances.importers.dnn_partitioning import placement_from_peer, read_peer_file

        inst = read_peer_file(args.path, objective=args.objective, contiguity=args.contiguity,
                              **({"name": args.name} if args.name else {}))
        if args.expert:
            meta = dict(inst.meta)
            meta["expert"] = placement_from_peer(inst, json.loads(io.read_text_file(args.expert)))
            inst = inst.with_(meta=meta)
        io.save(inst, args.output)
        print(f"wrote {args.output}: throughput instance (comm_model device) {inst.name}, {inst.n_nodes} nodes, "
              f"{inst.n_accelerators} accelerators + {inst.n_cpus} CPU cores, objective {inst.objective}, "
              f"contiguity {inst.contiguity}")
        return 0
    if args.import_kind == "onnx":
        from splitopt.instances.importers.onnx import load_onnx

        g = load_onnx(args.path, batch=args.batch, name=args.name)
    else:
        from splitopt.instances.importers.pipedream import load_pipedream

        g = load_pipedream(args.path, name=args.name)
    io.save(g, args.output)
    t = g.totals()
    print(f"wrote {args.output}: {g.name}, {t['layers']} layers, {t['edges']} edges")
    return 0


def cmd_generate(args) -> int:
    from splitopt.instances import generate, io

    params = {}
    for kv in args.param or []:
        if "=" not in kv:
            from splitopt.errors import InstanceError

            raise InstanceError("--param", f"must be KEY=VALUE, got {kv!r}")
        k, v = kv.split("=", 1)
        try:
            params[k] = io.parse_json(v)  # the one JSON parser (depth limit, no NaN, no duplicate keys)
        except SplitoptError:
            params[k] = v
    if args.n is not None:
        params["n"] = args.n
    g = generate.generate(args.kind, args.seed, **params)
    io.save(g, args.output)
    print(f"wrote {args.output}: {g.name}, {len(g.layers)} layers, {len(g.edges)} edges")
    return 0


def describe_object(obj) -> dict:
    from splitopt.instances.graph import DNNGraph
    from splitopt.instances.platform import Platform

    if isinstance(obj, DNNGraph):
        t = obj.totals()
        d = {"kind": "graph", "name": obj.name, "chain": obj.is_chain(), "inputs": len(obj.inputs),
             "outputs": len(obj.outputs), "articulation_layers": len(obj.articulation_layers), **t}
        machines = sorted(set().union(*(set(lay.fwd_seconds) for lay in obj.layers)))
        if machines:  # a measured profile: per-layer seconds per machine class, often no FLOP at all
            for m in machines:
                d[f"fwd_seconds_total[{m}]"] = math.fsum(lay.fwd_seconds.get(m, 0.0) for lay in obj.layers)
                d[f"bwd_seconds_total[{m}]"] = math.fsum(lay.bwd_seconds.get(m, 0.0) for lay in obj.layers)
            for key in ("fwd_flop", "bwd_flop", "macs"):
                if d.get(key) == 0:
                    d[key] = "n/a (measured profile: times per layer instead)"
        return d
    if isinstance(obj, Platform):
        return {"kind": "platform", "name": obj.name, "nodes": len(obj.nodes), "links": len(obj.links)}
    from splitopt.families import family_of

    fam = family_of(obj)
    return {"kind": "instance", "family": fam.name, **fam.describe(obj)}


def _fmt_value(v) -> str:
    """Readable numbers for `inspect`: integers with separators, large values with an SI suffix."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, int) or (float(v).is_integer() and abs(v) < 1e6):
        return f"{int(v):,}"
    if abs(v) >= 1e6:
        return f"{v:,.0f} ({_fmt_num(v)})"
    return f"{v:.6g}"


def cmd_inspect(args) -> int:
    from splitopt.instances import io

    obj = io.load(args.file)
    d = describe_object(obj)
    if args.json:
        print(json.dumps(d, indent=1, default=str))
    else:
        w = max(len(k) for k in d)
        for k, v in d.items():
            print(f"{k.ljust(w)}  {_fmt_value(v)}")
    return 0


def cmd_families(args) -> int:
    from splitopt.families import family_names, get_family

    rows = []
    for name in family_names():
        try:
            fam = get_family(name)
        except ImportError as exc:  # pragma: no cover - a family not installed
            rows.append([name, "-", f"unavailable: {exc}"])
            continue
        for a in fam.algorithms.values():
            role = " (default)" if a.name == fam.default_algorithm else (
                " (reference)" if a.name == fam.reference_algorithm else "")
            opts = ", ".join(o.flag for o in a.options)
            rows.append([name, a.name + role, a.kind, opts, a.description])
    print(_table(rows, ["family", "algorithm", "kind", "options", "description"]))
    return 0


def cmd_make(args) -> int:
    from splitopt.families import get_family
    from splitopt.instances import io
    from splitopt.instances.sources import GraphSource

    fam = get_family(args.family)
    inst = fam.make(GraphSource(args.graph, getattr(args, "input_size", None)), args)
    io.save(inst, args.output)
    d = fam.describe(inst)
    print(f"wrote {args.output}: {fam.name} instance of {args.graph} "
          + ", ".join(f"{k}={v}" for k, v in list(d.items())[:6]))
    return 0


def cmd_solve(args) -> int:
    from splitopt.errors import InfeasibleSolution, InstanceError
    from splitopt.families import family_of, solve
    from splitopt.instances import io

    inst = io.load(args.file)
    if not hasattr(inst, "family"):
        raise InstanceError(args.file, "holds a graph or platform, not an instance: use `splitopt make` first")
    fam = family_of(inst)
    for dest, owner in getattr(args, "_family_options", {}).items():
        if owner != fam.name and getattr(args, dest, None) is not None:
            raise InstanceError(f"--{dest.replace('_', '-')}",
                                f"is a {owner} option, but {args.file} holds a {fam.name} instance")
    if fam.override is not None:
        inst = fam.override(inst, args)
    a = fam.algorithm(args.algorithm)
    algo = a.name
    given = {"solver": args.solver, "time_limit": args.time_limit}
    for kv in args.option or []:
        key, sep, value = kv.partition("=")
        if not sep:
            raise InstanceError("--option", f"must be NAME=VALUE, got {kv!r}")
        given[key.replace("-", "_")] = value
    opts = {}
    for key, value in given.items():
        if value is None:
            continue
        o = a.option(key)
        if o is None:
            flag = "--" + key.replace("_", "-")
            takers = ", ".join(n for n, x in fam.algorithms.items() if x.option(key) is not None) or "none"
            raise InstanceError(flag, f"is not an option of algorithm {algo!r} (algorithms that take it: {takers})")
        try:
            opts[key] = o.type(value) if isinstance(value, str) and o.type is not str else value
        except (TypeError, ValueError):
            raise InstanceError("--" + key.replace("_", "-"), f"must be of type {o.type.__name__}, got {value!r}") from None
    if a.option("solver") is not None:
        opts.setdefault("solver", "highs")
    try:
        sol = solve(inst, algo, **opts)
    except InfeasibleSolution as exc:  # e.g. a paper variant as printed: say who produced the split
        raise InfeasibleSolution(f"algorithm {algo!r} returned an infeasible assignment: {exc}") from None
    if args.repeat is not None and args.repeat < 0:
        raise InstanceError("--repeat", f"must be >= 0, got {args.repeat}")
    warm = [solve(inst, algo, **opts).seconds for _ in range(args.repeat or 0)]
    timing = {"first_seconds": sol.seconds, "warm_seconds": warm}
    if warm:
        import statistics

        timing.update(warm_min_seconds=min(warm), warm_median_seconds=statistics.median(warm))
    if getattr(args, "export_placement", None):  # issue 11: the placement in dnn-partitioning's shape
        from splitopt.instances.importers.dnn_partitioning import placement_to_peer, write_json

        if getattr(inst, "comm_model", None) != "device":
            raise InstanceError("--export-placement", "only for throughput instances with comm_model 'device'")
        write_json(placement_to_peer(inst, sol.assignment), args.export_placement)
    if args.json:
        out = sol.to_dict()
        out["timing"] = timing
        print(json.dumps(out, indent=1, default=str))
        return 0
    if fam.render is not None:
        print(fam.render(inst, sol))
    else:
        print(f"{fam.name} / {sol.algorithm}: objective {sol.objective:.9g}")
    if warm:
        when = (f"first call {_fmt_s(sol.seconds)} (imports and caches); warm min {_fmt_s(min(warm))}, "
                f"median {_fmt_s(timing['warm_median_seconds'])} over {len(warm)} runs")
    else:
        when = f"time {_fmt_s(sol.seconds)} (first call: includes imports and caches; --repeat R for warm timings)"
    print(f"algorithm {sol.algorithm}: status {sol.status}, objective {sol.objective:.9g}"
          + (f", bound {sol.bound:.9g}" if sol.bound is not None else "") + f", {when}")
    return 0


def cmd_sweep(args) -> int:
    from splitopt.errors import InstanceError
    from splitopt.families import Algorithm, family_of
    from splitopt.instances import io
    from splitopt.validation.sweep import plot, sweep

    inst = io.load(args.file)
    if not hasattr(inst, "family"):
        raise InstanceError(args.file, "holds a graph or platform, not an instance: use `splitopt make` first")
    fam = family_of(inst)
    if fam.sweep is None:
        raise InstanceError("--param", f"family {fam.name!r} has no sweep")
    if args.param is None:
        mod = Algorithm("sweep", fam.sweep).resolve().__module__
        import importlib

        params = getattr(importlib.import_module(mod), "PARAMS", {})
        raise InstanceError("--param", "missing; " + fam.name + " sweeps: "
                            + "; ".join(f"{k} ({v})" for k, v in params.items()))
    if args.samples < 2:
        raise InstanceError("--samples", f"must be >= 2, got {args.samples}")
    res = sweep(inst, args.param, getattr(args, "from"), args.to, samples=args.samples, check=not args.no_check)
    if args.plot:
        plot(res, args.plot)
    if args.json:
        print(res.to_json())
    else:
        print(res.text())
        if args.plot:
            print(f"plot written to {args.plot}")
    return 0


def cmd_audit(args) -> int:
    from splitopt.families import family_names
    from splitopt.validation import audit

    fams = None
    if args.family:
        if args.family not in family_names():
            from splitopt.errors import InstanceError

            raise InstanceError("FAMILY", f"unknown family {args.family!r} (known: {', '.join(family_names())})")
        fams = [args.family]
    rows = audit.run(fams, slow=args.slow)
    if args.json:
        print(audit.to_json(rows))
    elif args.markdown:
        print(audit.markdown(rows))
    else:
        print(audit.text(rows))
    return 0


def summary_text(summary) -> str:
    """The summary table in a terminal-width form (kind, counts, worst gap, median time and speed-up)."""
    from splitopt.validation.report import display_rows

    header, rows = display_rows(summary)
    return _table(rows, header)


def cmd_validate(args) -> int:
    from splitopt.validation import run_validation

    set_path = Path(args.set)
    if set_path.is_dir() and not any(p.is_file() for p in set_path.rglob("*.json")):
        from splitopt.errors import InstanceError

        raise InstanceError(args.set, "no *.json instance files in this directory: nothing to validate")
    algos = [a for a in args.algorithms.split(",") if a] if args.algorithms else None
    summary = run_validation(args.set, algorithms=algos, solver=args.solver, jobs=args.jobs, store=args.store,
                             scheduler=args.scheduler, dask_local=args.dask_local, time_limit=args.time_limit,
                             progress=not args.quiet)
    print(summary_text(summary))
    for note in summary.attrs.get("notes", []) or []:
        print(f"note: {note}")
    failed = int(summary["failed"].sum()) if "failed" in summary else 0
    print(f"results in {args.store}; exact algorithms failing (column 'failed': disagreements with a "
          f"proven-optimal reference, errors, time-outs): {failed}")
    return 1 if failed else 0


def cmd_report(args) -> int:
    from splitopt.validation.report import summary_table, write_report

    if not Path(args.store).exists():
        from splitopt.errors import InstanceError

        raise InstanceError(args.store, "no such results store")
    df = summary_table(args.store)
    print(summary_text(df))
    if args.html or args.markdown:
        path = write_report(args.store, html=args.html, markdown=args.markdown)
        print(f"wrote {path}")
    if args.csv or args.parquet:
        from splitopt.validation.store import ResultStore

        with ResultStore(args.store) as st:
            if args.csv:
                print(f"wrote {st.to_csv(args.csv)} (every row of the store)")
            if args.parquet:
                print(f"wrote {st.to_parquet(args.parquet)} (every row of the store)")
    return 0


def cmd_demo(args) -> int:
    """The main job's first step: a real measured graph, a split instance, exact and fast solves."""
    from splitopt.errors import InfeasibleSolution
    from splitopt.families import solve
    from splitopt.instances.importers.pipedream import load_packaged
    from splitopt.instances.split import SplitInstance

    g = load_packaged("alexnet")
    inst = SplitInstance.from_graph(g, mode="training", iterations=10, timing="measured", device_slowdown=10.0,
                                    up_bytes_per_s=12.5e6, down_bytes_per_s=25e6)
    print(f"DNN graph: {g.name} (PipeDream profile, measured per layer, batch 256), {len(g.layers)} layers, "
          f"{len(g.edges)} edges")
    print("split learning: device 10x slower than the profiled GPU, uplink 100 Mbit/s, downlink 200 Mbit/s, "
          "N = 10 iterations per epoch (seed 000 Eq. 7, corrected)")
    rows = []
    notes = []
    best = None
    for algo in ("mincut", "qdmp", "blockwise", "milp", "lp", "dads", "mincut_paper", "device_only", "server_only"):
        try:
            solve(inst, algo)  # warm-up: first calls pay imports and per-graph caches
            s = solve(inst, algo)
        except InfeasibleSolution as exc:  # a paper variant may return an infeasible split: show it
            rows.append([algo, "-", "-", "infeasible", "-"])
            notes.append(f"{algo} (the paper's algorithm as printed) returned an infeasible split: {exc}")
            continue
        best = s if algo == "milp" else best
        rows.append([algo, f"{s.objective:.6f}", str(len(s.assignment)), s.status, _fmt_s(s.seconds)])
    print(_table(rows, ["algorithm", "epoch delay (s)", "device layers", "status", "time"]))
    for note in notes:
        print(note)
    if best is not None:
        from splitopt.families.split import render as fam_render
        print()
        print(fam_render(inst, best))
    return 0


# ---------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    from splitopt import __version__

    p = argparse.ArgumentParser(prog="splitopt", description="Optimal splitting of DNNs across devices: "
                                "exact models, fast algorithms, audited papers.")
    p.add_argument("--version", action="version", version=f"splitopt {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    z = sub.add_parser("zoo", help="analytic architectures (list, show)")
    zs = z.add_subparsers(dest="zoo_cmd", required=True, metavar="SUBCOMMAND")
    zs.add_parser("list", help="list the zoo with totals")
    zshow = zs.add_parser("show", help="table of layers, then totals")
    zshow.add_argument("name", help="architecture name (see `splitopt zoo list`)")
    zshow.add_argument("--input-size", type=int, default=None, help="input resolution (default: the model's own)")
    zshow.add_argument("--batch", type=int, default=1, help="batch size for tensor sizes and FLOP (default 1)")
    zshow.add_argument("-o", "--output", help="save the graph as JSON instead of printing it")
    z.set_defaults(func=cmd_zoo)

    im = sub.add_parser("import", help="import a DNN graph from another tool's format")
    ims = im.add_subparsers(dest="import_kind", required=True, metavar="FORMAT")
    pd = ims.add_parser("pipedream", help="a PipeDream profile graph.txt")
    pd.add_argument("path", help="a PipeDream graph.txt profile (or its folder)")
    pd.add_argument("-o", "--output", required=True, help="graph JSON file to write")
    pd.add_argument("--name", default=None, help="graph name (default: from the file)")
    ox = ims.add_parser("onnx", help="an ONNX model (shapes by ONNX shape inference, FLOP per node)")
    ox.add_argument("path", help="an .onnx model file")
    ox.add_argument("-o", "--output", required=True, help="graph JSON file to write")
    ox.add_argument("--name", default=None, help="graph name (default: the model's graph name)")
    ox.add_argument("--batch", type=int, default=None, help="value of a symbolic batch dimension (default 1)")
    dp = ims.add_parser("dnn-partitioning", help="a msr-fiddle/dnn-partitioning workload JSON (a throughput instance)")
    dp.add_argument("path", help="their input JSON (maxFPGAs, maxCPUs, maxSizePerFPGA, nodes, edges)")
    dp.add_argument("-o", "--output", required=True, help="instance JSON file to write")
    dp.add_argument("--name", default=None, help="instance name (default: the file name)")
    dp.add_argument("--objective", choices=("max-load", "fwd+bwd"), default="max-load", help="objective")
    dp.add_argument("--contiguity", choices=("none", "convex", "chain"), default="convex",
                    help="none; convex (each device's forward set convex, their IP); chain (their DP)")
    dp.add_argument("--expert", default=None, help="their placement JSON to keep as the expert split")
    im.set_defaults(func=cmd_import)

    ge = sub.add_parser("generate", help="a seeded random DNN graph")
    ge.add_argument("kind", help="chain, layered, series_parallel, residual, inception, dense")
    ge.add_argument("--seed", type=int, required=True, help="random seed (same seed, same graph on every machine)")
    ge.add_argument("--n", type=int, default=None, help="size (layers or blocks, by kind)")
    ge.add_argument("--param", action="append", metavar="KEY=VALUE", help="extra generator parameter")
    ge.add_argument("-o", "--output", required=True, help="graph JSON file to write")
    ge.set_defaults(func=cmd_generate)

    ins = sub.add_parser("inspect", help="what a file holds: family, sizes, totals")
    ins.add_argument("file", help="graph, platform or instance JSON file")
    ins.add_argument("--json", action="store_true", help="machine-readable output")
    ins.set_defaults(func=cmd_inspect)

    fa = sub.add_parser("families", help="list families and their algorithms")
    fa.set_defaults(func=cmd_families)

    from splitopt.families import family_names, get_family

    mk = sub.add_parser("make", help="build a family instance from a DNN graph")
    mks = mk.add_subparsers(dest="family", required=True, metavar="FAMILY")
    for name in family_names():
        try:
            fam = get_family(name)
        except ImportError:  # pragma: no cover
            continue
        if fam.make is None:
            continue
        fp = mks.add_parser(name, help=fam.description or f"a {name} instance")
        fp.add_argument("graph", help="graph/instance JSON file, PipeDream graph.txt, ONNX .onnx file, "
                                      "zoo model name, or pipedream:NAME")
        fp.add_argument("-o", "--output", required=True, help="instance JSON file to write")
        for a in fam.make_arguments:
            a.add_to(fp)
    mk.set_defaults(func=cmd_make)

    so = sub.add_parser("solve", help="solve an instance file with an algorithm or an exact formulation")
    so.add_argument("file", help="instance JSON file (from `splitopt make`)")
    so.add_argument("--algorithm", "-a", default=None, help="algorithm name (see `splitopt families`)")
    so.add_argument("--solver", default=None, help="exact solver of a formulation: highs (default), scip, cbc, ...")
    so.add_argument("--time-limit", type=float, default=None,
                    help="seconds, for algorithms with a time-limit option (see `splitopt families`)")
    so.add_argument("--option", action="append", metavar="NAME=VALUE",
                    help="any other option the algorithm declares (see `splitopt families`)")
    so.add_argument("--json", action="store_true", help="machine-readable output")
    so.add_argument("--export-placement", default=None, metavar="FILE",
                    help="also write the placement in msr-fiddle/dnn-partitioning's JSON shape (device model)")
    so.add_argument("--repeat", type=int, default=None, metavar="R",
                    help="run R more times and report warm min/median time apart from the first (cold) call")
    owners: dict[str, str] = {}  # option dest -> the family that defines it
    for name in family_names():
        try:
            fam = get_family(name)
        except ImportError:  # pragma: no cover
            continue
        if fam.solve_arguments:
            g = so.add_argument_group(f"{name} options")
            for a in fam.solve_arguments:
                owners[a.add_to(g).dest] = name
    so.set_defaults(func=cmd_solve, _family_options=owners)

    sw = sub.add_parser("sweep", help="the optimal solution over a whole parameter range (exact pieces where "
                                      "the cost is piecewise affine)")
    sw.add_argument("file", help="instance JSON file (from `splitopt make`)")
    sw.add_argument("--param", default=None,
                    help="parameter to sweep; split: up_mbps, down_mbps, rate_mbps, device_speed, server_speed "
                         "(exact); grouping: requests (exact), bandwidth_bytes_per_s (sampled)")
    sw.add_argument("--from", dest="from", type=float, required=True, metavar="A", help="first parameter value")
    sw.add_argument("--to", type=float, required=True, metavar="B", help="last parameter value")
    sw.add_argument("--samples", type=int, default=50,
                    help="samples (log-spaced) for parameters that cannot be swept exactly")
    sw.add_argument("--plot", default=None, metavar="FILE", help="PNG of cost and solution size vs the parameter")
    sw.add_argument("--json", action="store_true", help="machine-readable output")
    sw.add_argument("--no-check", action="store_true",
                    help="skip recomputing each piece's cost at its ends with the family evaluator")
    sw.set_defaults(func=cmd_sweep)

    au = sub.add_parser("audit", help="the papers' computable claims, each reproduced or refuted by splitopt")
    au.add_argument("family", nargs="?", default=None, metavar="FAMILY",
                    help="only this family's papers (split: seeds 000 and 002; grouping: seed 003)")
    fmt = au.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="machine-readable rows (with the raw numbers)")
    fmt.add_argument("--markdown", action="store_true", help="a Markdown table")
    au.add_argument("--slow", action="store_true", help="also run the claims marked slow")
    au.set_defaults(func=cmd_audit)

    va = sub.add_parser("validate", help="run algorithms against the exact solver over an instance set")
    va.add_argument("set", help="set name (quick, FAMILY-random, zoo, pipedream; NAME:N for N seeds) or a "
                                "directory of instance files")
    va.add_argument("--algorithms", default=None, help="comma-separated algorithm names (default: all)")
    va.add_argument("--solver", default="highs", help="exact solver of the reference formulation (default highs)")
    va.add_argument("--jobs", type=int, default=1, help="worker processes on this machine (default 1)")
    va.add_argument("--store", default="runs.sqlite",
                    help="SQLite results store; a re-run skips what it holds (default runs.sqlite)")
    va.add_argument("--scheduler", default=None, help="Dask scheduler address tcp://HOST:PORT")
    va.add_argument("--dask-local", type=int, default=None, metavar="N", help="start a local Dask cluster of N workers")
    va.add_argument("--time-limit", type=float, default=None, help="per-task time limit in seconds")
    va.add_argument("--quiet", action="store_true", help="no progress display")
    va.set_defaults(func=cmd_validate)

    rp = sub.add_parser("report", help="summarise a results store")
    rp.add_argument("store", help="SQLite results store written by `splitopt validate --store`")
    rp.add_argument("--html", default=None, metavar="FILE", help="self-contained HTML report (figures embedded)")
    rp.add_argument("--markdown", default=None, metavar="FILE", help="Markdown report (figures in FILE_figures/)")
    rp.add_argument("--csv", default=None, metavar="FILE", help="export every row of the store as CSV")
    rp.add_argument("--parquet", default=None, metavar="FILE",
                    help="export every row as Parquet (needs pyarrow: pip install 'splitopt[parquet]')")
    rp.set_defaults(func=cmd_report)

    de = sub.add_parser("demo", help="a real measured graph split exactly and fast (the main job's first step)")
    de.set_defaults(func=cmd_demo)
    _show_defaults(p)
    return p


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends ``(default: X)`` where it says something: not for ``None``/``False`` defaults (an
    unset option, an off flag) nor where the help text already names its default."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default in (None, False) or "default" in text.lower():
            return text
        return super()._get_help_string(action)


def _show_defaults(parser) -> None:
    """Every command's help shows each option's default (where it has one worth showing)."""
    parser.formatter_class = _DefaultsFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _show_defaults(sub)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except SplitoptError as exc:
        print(f"splitopt: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:  # an instance (or a model built from it) too large for the memory available
        print("splitopt: error: out of memory (the input is too large for this machine's memory limit)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("splitopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # pragma: no cover - e.g. `splitopt zoo show x | head`
        return 0
    except OSError as exc:  # a file the user named cannot be written or read (permissions, disk full, ...)
        where = exc.filename if exc.filename is not None else ""
        print(f"splitopt: error: {where}{': ' if where else ''}{exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
