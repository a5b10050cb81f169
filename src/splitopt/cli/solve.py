"""Commands that build and solve instances: ``families``, ``make``, ``solve``, ``sweep``."""

from __future__ import annotations

import json
import math
import sys

from splitopt.cli._fmt import _fit_lines, _fmt_s, _table


def cmd_families(args) -> int:
    """``splitopt families [FAMILY] [--wide]``: every algorithm with its kind, in 100 columns (the
    descriptions cut); with FAMILY, that family's algorithms with options and full descriptions."""
    import textwrap

    from splitopt.cli._fmt import WIDTH, _fit
    from splitopt.errors import InstanceError
    from splitopt.families import family_names, get_family

    names = family_names()
    if args.family is not None:
        if args.family not in names:
            raise InstanceError("FAMILY", f"unknown family {args.family!r} (known: {', '.join(names)})")
        names = [args.family]
    fams = []
    for name in names:
        try:
            fams.append((name, get_family(name), None))
        except ImportError as exc:  # pragma: no cover - a family not installed
            fams.append((name, None, exc))
    if args.wide:
        rows = []
        for name, fam, exc in fams:
            if fam is None:  # pragma: no cover
                rows.append([name, "-", f"unavailable: {exc}", "", ""])
                continue
            for a in fam.algorithms.values():
                opts = ", ".join(o.flag for o in a.options)
                rows.append([name, a.name + _role(fam, a.name), a.kind, opts, a.description])
        print(_table(rows, ["family", "algorithm", "kind", "options", "description"]))
        return 0
    out = []
    for name, fam, exc in fams:
        if out:
            out.append("")
        if fam is None:  # pragma: no cover
            out.append(f"{name}: unavailable ({exc})")
            continue
        out.append(_fit(f"{name}: {fam.description}" if fam.description else name, WIDTH))
        width = max(len(a.name + _role(fam, a.name)) for a in fam.algorithms.values())
        for a in fam.algorithms.values():
            head = f"  {(a.name + _role(fam, a.name)).ljust(width)}  {a.kind.ljust(11)}  "
            if args.family is None:
                out.append(head + _fit(a.description, WIDTH - len(head)))
                continue
            text = a.description + (" Options: " + ", ".join(o.flag for o in a.options) + "." if a.options else "")
            out.append(textwrap.fill(text, WIDTH, initial_indent=head, subsequent_indent=" " * len(head),
                                     break_on_hyphens=False))
    if args.family is None:
        out += ["", "splitopt families FAMILY: options and full descriptions; --wide: one line per algorithm, "
                    "uncut"]
    print("\n".join(out))
    return 0


def _role(fam, name: str) -> str:
    return " (default)" if name == fam.default_algorithm else (
        " (reference)" if name == fam.reference_algorithm else "")


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
    from splitopt.errors import InfeasibleSolution, InstanceError, NoFeasibleSolution
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
    except NoFeasibleSolution:  # said of the instance (or of the time limit): the message as it is
        raise
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

        if getattr(inst, "family", None) != "placement":
            raise InstanceError("--export-placement", f"only for placement instances, got a {inst.family} instance")
        write_json(placement_to_peer(inst, sol.assignment), args.export_placement)
    if args.json or args.save:
        out = sol.to_dict()
        out["timing"] = timing
        _add_plan(out, inst, sol, args.file)  # issue 23: stages named by layers and FQNs, for `splitopt export`
        text = json.dumps(_finite(out), indent=1, default=str, allow_nan=False)
        if args.save:  # the same JSON as --json, kept for `splitopt export`
            from splitopt.instances.io import write_text_atomic

            write_text_atomic(args.save, text + "\n")
        if args.json:
            print(text)
            return 0
    # the status line first: a result that is not proven optimal is never read as if it were
    print(_fit_lines(f"{fam.name} / {sol.algorithm}: {sol.status_line()}"))
    if isinstance(sol.info.get("note"), str):  # e.g. a default time limit that stopped the work
        print(f"splitopt: note: {sol.info['note']}", file=sys.stderr)
    if fam.render is not None:
        print(_fit_lines(fam.render(inst, sol)))  # 100 columns
    if warm:
        when = (f"first call {_fmt_s(sol.seconds)} (imports and caches); warm min {_fmt_s(min(warm))}, "
                f"median {_fmt_s(timing['warm_median_seconds'])} over {len(warm)} runs")
    else:
        when = f"time {_fmt_s(sol.seconds)} (first call: includes imports and caches; --repeat R for warm timings)"
    print(f"algorithm {sol.algorithm}: {when}")
    return 0


def _finite(x):
    """``x`` with every infinite or NaN float written as ``null``: standard JSON, which splitopt's
    own reader and strict parsers accept (a throughput instance of zero work has an infinite
    throughput; a step of ``auto`` whose placement did not count has no value; the file had
    ``Infinity`` before 2026-11-29)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def _add_plan(out: dict, inst, sol, path: str) -> None:
    from pathlib import Path

    from splitopt.errors import SplitoptError
    from splitopt.export import plan_of

    out["instance"] = str(Path(path).resolve())
    try:
        out["plan"] = plan_of(inst, sol.assignment)
    except (SplitoptError, AttributeError, TypeError, KeyError, ValueError):
        pass  # a family without a plan shape yet: `splitopt export` recomputes it and says so


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


def _add_make_families(mks) -> None:
    from splitopt.families import family_names, get_family

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


def add_parsers(sub) -> None:
    from splitopt.cli import wants

    fa = sub.add_parser("families", help="list families and their algorithms")
    fa.add_argument("family", nargs="?", default=None, metavar="FAMILY",
                    help="only this family, with each algorithm's options and full description")
    fa.add_argument("--wide", action="store_true", help="one line per algorithm, nothing cut (wider than 100)")
    fa.set_defaults(func=cmd_families)

    mk = sub.add_parser("make", help="build a family instance from a DNN graph")
    mks = mk.add_subparsers(dest="family", required=True, metavar="FAMILY")
    if wants("make"):
        _add_make_families(mks)
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
    so.add_argument("--save", default=None, metavar="FILE",
                    help="also write the solution as --json prints it (with its plan) to FILE, for `splitopt export`")
    so.add_argument("--export-placement", default=None, metavar="FILE",
                    help="also write the placement in msr-fiddle/dnn-partitioning's JSON shape (placement family)")
    so.add_argument("--repeat", type=int, default=None, metavar="R",
                    help="run R more times and report warm min/median time apart from the first (cold) call")
    owners: dict[str, str] = {}  # option dest -> the family that defines it
    if wants("solve"):
        from splitopt.families import family_names, get_family

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
