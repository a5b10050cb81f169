"""Commands that check algorithms in bulk: ``audit``, ``validate``, ``report``, ``demo``."""

from __future__ import annotations

from pathlib import Path

from splitopt.cli._fmt import _fmt_num, _fmt_s, _narrow_table, _table, _wrap


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


def summary_text(summary, wide: bool = False) -> str:
    """The summary table. ``wide``: one line per algorithm with every column. Otherwise it fits
    100 columns: one block per family, the error/time-out/numerical columns only where one is not
    zero, and the algorithms that declined every instance (all ``n/a``) folded into one line."""
    from splitopt.validation.report import display_rows

    header, rows = display_rows(summary)
    if wide:
        return _table(rows, header)
    col = {h: i for i, h in enumerate(header)}
    drop = {"family"} | {h for h in ("errors", "timeouts", "numerical")
                         if all(r[col[h]] in ("0", "-") for r in rows)}
    short = {"disagree": "differ", "median s": "median", "timeouts": "t/o", "numerical": "num"}
    keep = [h for h in header if h not in drop]
    fams = list(dict.fromkeys(r[col["family"]] for r in rows))
    declined = {fam: [r[col["algorithm"]] for r in rows if r[col["family"]] == fam
                      and r[col["n/a"]] == r[col["inst"]] != "0"] for fam in fams}
    shown = [r for r in rows if r[col["algorithm"]] not in declined[r[col["family"]]]]
    cells = [[_short_seconds(r[col[h]]) if h == "median s" else r[col[h]] for h in keep] for r in shown]
    lines = _narrow_table(cells, [short.get(h, h) for h in keep], shrink=0).splitlines()
    head, body = lines[:2], lines[2:]
    out = []
    for fam in fams:
        ref = next((r[col["algorithm"]] for r in rows if r[col["family"]] == fam and r[col["kind"]] == "reference"),
                   "-")
        if out:
            out.append("")
        out += [f"{fam} (reference {ref})", *head]
        out += [line for r, line in zip(shown, body) if r[col["family"]] == fam]
        if declined[fam]:
            out.append(_wrap("declined every instance (n/a, not shown): ", declined[fam]))
    hidden = sorted(drop - {"family"})
    if hidden:
        out.append(f"({', '.join(hidden)}: 0 everywhere, columns not shown; --wide for every column)")
    return "\n".join(out)


def _short_seconds(cell: str) -> str:
    """``214.0000 us`` -> ``214 us`` (three significant digits for the narrow table)."""
    try:
        v, unit = cell.split()
        from splitopt.validation.units import fmt_seconds_short

        return fmt_seconds_short(float(v) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[unit])
    except (ValueError, KeyError):
        return cell


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
    print(summary_text(summary, wide=args.wide))
    for note in summary.attrs.get("notes", []) or []:
        print(f"note: {note}" if args.wide else _wrap("note: ", [note]))
    failed = int(summary["failed"].sum()) if "failed" in summary else 0
    kept = (f"results in {args.store}" if args.store else
            "results not kept (--store FILE keeps them for `splitopt report`; a re-run then resumes)")
    print(kept)
    print(f"exact algorithms failing (column 'failed': wrong against a proven optimum, errors, time-outs): "
          f"{failed}")
    return 1 if failed else 0


def cmd_report(args) -> int:
    from splitopt.validation.report import summary_table, write_report

    if not Path(args.store).exists():
        from splitopt.errors import InstanceError

        raise InstanceError(args.store, "no such results store")
    from splitopt.validation.store import load_dataframe

    rows = load_dataframe(args.store)  # read once: the table, the report and its figures share it
    df = summary_table(rows)
    print(summary_text(df, wide=args.wide))
    if args.html or args.markdown:
        path = write_report(rows, html=args.html, markdown=args.markdown, summary=df)
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
    """The main job's first step: a real measured graph, a split instance, every split algorithm on
    it, then the fast exact algorithm's split layer by layer beside the reference MILP's."""
    from splitopt.errors import InfeasibleSolution
    from splitopt.families import get_family, solve
    from splitopt.instances.importers.pipedream import load_packaged
    from splitopt.instances.split import SplitInstance

    g = load_packaged("alexnet")
    inst = SplitInstance.from_graph(g, mode="training", iterations=10, timing="measured", device_slowdown=10.0,
                                    up_bytes_per_s=12.5e6, down_bytes_per_s=25e6)
    print(f"DNN graph: {g.name} (PipeDream profile: seconds measured per layer, batch 256), {len(g.layers)} "
          f"layers, {len(g.edges)} edges")
    print(_wrap("", ["split learning (seed 000 Eq. 7, corrected): device 10x slower than the profiled GPU, "
                     "uplink 100 Mbit/s, downlink 200 Mbit/s, N = 10 iterations per epoch; the last device layer "
                     "sends its output up and receives its gradient back each iteration"], indent=""))
    fam = get_family("split")
    rows, notes, sols = [], [], {}
    for algo in ("mincut", "qdmp", "blockwise", "milp", "lp", "dads", "mincut_paper", "device_only", "server_only"):
        kind = fam.algorithms[algo].kind
        try:
            solve(inst, algo)  # warm-up: first calls pay imports and per-graph caches
            s = solve(inst, algo)
        except InfeasibleSolution as exc:  # a paper variant may return an infeasible split: show it
            rows.append([algo, kind, "-", "-", "infeasible", "-"])
            notes.append(f"{algo} (the paper's algorithm as printed) returned an infeasible split: {exc}")
            continue
        sols[algo] = s
        rows.append([algo, kind, f"{s.objective:.6f}", str(len(s.assignment)), s.status, _fmt_s(s.seconds)])
    print()
    print(_table(rows, ["algorithm", "kind", "epoch delay (s)", "device layers", "status", "time"]))
    for note in notes:
        print(_wrap("", [note]))
    if "mincut" in sols and "milp" in sols:
        print()
        print(side_by_side(inst, sols["mincut"], sols["milp"]))
    return 0


def _module(layer) -> str:
    """A layer's module in a few characters: ``Conv2d(3, 64, 11x11, /4)``, ``Linear(9216, 4096)``."""
    import re

    text = str(layer.meta.get("module") or layer.op or "")
    m = re.match(r"Conv2d\((\d+), (\d+), kernel_size=\((\d+), \d+\), stride=\((\d+)", text)
    if m:
        i, o, k, st = m.groups()
        return f"Conv2d({i}, {o}, {k}x{k}" + (f", /{st})" if st != "1" else ")")
    m = re.match(r"Linear\(in_features=(\d+), out_features=(\d+)", text)
    if m:
        return f"Linear({m.group(1)}, {m.group(2)})"
    m = re.match(r"MaxPool2d\(kernel_size=(\d+), stride=(\d+)", text)
    if m:
        return f"MaxPool2d({m.group(1)}x{m.group(1)}, /{m.group(2)})"
    return text if len(text) <= 28 else text[:27] + "~"


def side_by_side(inst, fast, ref) -> str:
    """``fast``'s split and ``ref``'s layer by layer (name, module, output size, side), their cut
    tensors, and whether their costs agree; where the sides differ, what those layers cost."""
    g = inst.graph
    fm, rm = inst.mask_of(fast.assignment), inst.mask_of(ref.assignment)
    rows = []
    for i, lay in enumerate(g.layers):
        mark = "" if fm[i] == rm[i] else "<- differs"
        rows.append([lay.name, _module(lay), _fmt_num(lay.out_bytes) + "B", "device" if fm[i] else "server",
                     "device" if rm[i] else "server", mark])
    head = [f"{fast.algorithm}'s split (fast, exact) beside {ref.algorithm}'s (the reference: HiGHS on the MILP):", ""]
    out = head + [_table(rows, ["layer", "module", "output", fast.algorithm, ref.algorithm, ""])]
    out.append("")
    for sol, mask in ((fast, fm), (ref, rm)):
        cut = [f"{g.layers[p].name} ({_fmt_num(b)}B)" for p, _port, b, cons in g.tensors
               if mask[p] and any(not mask[j] for j in cons)]
        out.append(f"{sol.algorithm}: {int(sum(mask))} layers on the device, sends the output of "
                   f"{', '.join(cut) or 'nothing'}; delay {sol.objective:.9g} s ({sol.status})")
    same = abs(fast.objective - ref.objective) <= 1e-9 * max(1.0, abs(ref.objective))
    diff = [i for i in range(len(g)) if fm[i] != rm[i]]
    proven = ref.status == "optimal"
    if same and diff:
        dev = sum(inst.device_s[i] for i in diff)
        srv = sum(inst.server_s[i] for i in diff)
        names = ", ".join(f"{g.layers[i].name} {_module(g.layers[i])}" for i in diff)
        out.append(_wrap(f"equal delays (within 1e-9){': both splits are optimal' if proven else ''}. The layers "
                         f"placed differently ", [f"({names}) take {dev:.3g} s on the device and {srv:.3g} s "
                                                  "on the server per iteration."]))
    elif same:
        out.append("the two splits are the same, with equal delays (within 1e-9)")
    else:
        out.append(f"delays differ by {fast.objective - ref.objective:.3g} s")
    b = fast.breakdown
    out.append(_wrap(f"{fast.algorithm}'s delay per epoch: ", [f"{k.replace('_', ' ')} {b.get(k, 0.0):.4g} s"
                                                               for k in ("device_compute", "server_compute",
                                                                         "activations", "gradients", "parameters")]))
    return "\n".join(out)


def add_parsers(sub) -> None:
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
    va.add_argument("--store", default=None, metavar="FILE",
                    help="SQLite results store to keep the rows in; a re-run skips what it holds (default: "
                         "none, the results are shown and not kept)")
    va.add_argument("--scheduler", default=None, help="Dask scheduler address tcp://HOST:PORT")
    va.add_argument("--dask-local", type=int, default=None, metavar="N", help="start a local Dask cluster of N workers")
    va.add_argument("--time-limit", type=float, default=None, help="per-task time limit in seconds")
    va.add_argument("--quiet", action="store_true", help="no progress display")
    va.add_argument("--wide", action="store_true", help="one line per algorithm with every column (wider than 100)")
    va.set_defaults(func=cmd_validate)

    rp = sub.add_parser("report", help="summarise a results store")
    rp.add_argument("store", help="SQLite results store written by `splitopt validate --store`")
    rp.add_argument("--html", default=None, metavar="FILE", help="self-contained HTML report (figures embedded)")
    rp.add_argument("--markdown", default=None, metavar="FILE", help="Markdown report (figures in FILE_figures/)")
    rp.add_argument("--csv", default=None, metavar="FILE", help="export every row of the store as CSV")
    rp.add_argument("--parquet", default=None, metavar="FILE",
                    help="export every row as Parquet (needs pyarrow: pip install 'splitopt[parquet]')")
    rp.add_argument("--wide", action="store_true", help="one line per algorithm with every column (wider than 100)")
    rp.set_defaults(func=cmd_report)

    de = sub.add_parser("demo", help="a real measured graph split exactly and fast (the main job's first step)")
    de.set_defaults(func=cmd_demo)
