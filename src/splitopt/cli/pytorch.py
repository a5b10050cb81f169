"""Commands between splitopt and PyTorch (issue 23): ``import torch`` (registered by
:mod:`splitopt.cli.graphs` through :func:`add_import_parser`), ``profile`` and ``export``."""

from __future__ import annotations

import json
from pathlib import Path

from splitopt.errors import InstanceError


# ---------------------------------------------------------------------------- import torch
def add_import_parser(ims) -> None:
    """``splitopt import torch PKG.MOD:FACTORY --input 1x3x224x224 -o g.json`` (a sub-parser of ``import``)."""
    tp = ims.add_parser("torch", help="a PyTorch module through torch.export (FQN per layer, FLOP, bytes)")
    tp.add_argument("model", help="PKG.MOD:FACTORY, FILE.py:FACTORY or torchvision:NAME (a callable returning "
                                  "an nn.Module, or the class)")
    tp.add_argument("--input", action="append", required=True, metavar="SHAPE[:DTYPE]",
                    help="example input shape, e.g. 1x3x224x224 or 1x128:int64 (repeat for several inputs)")
    tp.add_argument("--dtype", default="float32", help="dtype of the model and float inputs (default float32)")
    tp.add_argument("--level", choices=("module", "op"), default="module",
                    help="module: one layer per module at the pipeline-split depth; op: one per ATen operator")
    tp.add_argument("--depth", type=int, default=None,
                    help="module depth of the layers (default: expand containers while they form a chain)")
    tp.add_argument("--training", action="store_true", help="count backward FLOP too (and export in train mode)")
    tp.add_argument("--name", default=None, help="graph name (default: the factory's name)")
    tp.add_argument("-o", "--output", required=True, help="graph JSON file to write")


def cmd_import_torch(args) -> int:
    from splitopt.instances import io
    from splitopt.instances.importers.torch import import_torch

    g = import_torch(args.model, args.input, dtype=args.dtype, level=args.level, depth=args.depth,
                     training=args.training, name=args.name)
    io.save(g, args.output)
    t = g.totals()
    splits = len(g.meta["torch"]["split_points"])
    print(f"wrote {args.output}: {g.name}, {t['layers']} layers ({args.level} level, {splits} split points), "
          f"{t['edges']} edges, {g.meta['params']:,} parameters, {t['fwd_flop'] / 1e9:.4g} GFLOP forward"
          + (f", {t['bwd_flop'] / 1e9:.4g} GFLOP backward" if args.training else ""))
    return 0


# ---------------------------------------------------------------------------- profile
def cmd_profile(args) -> int:
    from splitopt.instances import io
    from splitopt.instances.profile import profile_onnx, profile_torch_spec

    path = Path(args.file)
    if path.suffix == ".onnx":
        if args.torch:
            raise InstanceError("--torch", "an ONNX file is profiled with onnxruntime; --torch is for graph JSON")
        g = profile_onnx(path, repeat=args.repeat, warmup=args.warmup, batch=args.batch, machine=args.machine)
    else:
        g = io.load(path)
        from splitopt.instances.graph import DNNGraph

        if not isinstance(g, DNNGraph):
            raise InstanceError(args.file, "holds an instance, not a DNN graph: profile the graph, then make again")
        spec = args.torch or (g.meta.get("torch") or {}).get("model")
        if not spec:
            raise InstanceError("--torch", "missing: name the model (PKG.MOD:FACTORY) the graph was imported from")
        g = profile_torch_spec(g, spec, args.input, dtype=args.dtype, repeat=args.repeat, warmup=args.warmup,
                               training=args.training, machine=args.machine, threads=args.threads)
    if args.as_flop is not None:  # for the builders that read FLOP only (make pipeline, make throughput)
        from splitopt.instances.profile import measured_as_flop

        g = measured_as_flop(g, args.machine, args.as_flop)
    out = args.output or (str(path.with_suffix(".json")) if path.suffix == ".onnx" else str(path))
    io.save(g, out)
    p = g.meta["profile"]
    print(f"wrote {out}: {g.name}, {len(g.layers)} layers, measured on {p['machine']} ({p['processor']}, "
          f"{p['tool']}): forward {p['fwd_total_s'] * 1e3:.4g} ms"
          + (f", backward {p['bwd_total_s'] * 1e3:.4g} ms" if "bwd_total_s" in p else "")
          + f" (median of {p['repeat']} after {p['warmup']} warm-up runs, {p['date']})")
    rows = sorted(g.layers, key=lambda lay: -lay.fwd_seconds.get(args.machine, 0.0))[:5]
    for lay in rows:
        s = lay.fwd_seconds.get(args.machine, 0.0)
        pr = lay.meta.get("profile", {})
        print(f"  {lay.name:<24} {s * 1e3:9.4f} ms  (min {pr.get('fwd_min_s', s) * 1e3:.4f}, "
              f"max {pr.get('fwd_max_s', s) * 1e3:.4f})")
    return 0


# ---------------------------------------------------------------------------- export
def load_plan(path: str, graph_path: str | None = None) -> dict:
    """The plan in a ``splitopt solve --json`` file, or recomputed from its ``instance`` path (and a
    graph with FQNs when given)."""
    from splitopt.export import plan_of
    from splitopt.instances import io

    d = io.parse_json(io.read_text_file(path))
    if not isinstance(d, dict) or "assignment" not in d:
        raise InstanceError(path, "is not a solution (the output of `splitopt solve --json`)")
    if d.get("plan") and graph_path is None:
        return d["plan"]
    inst_path = d.get("instance")
    if not inst_path:
        raise InstanceError(f"{path}.instance", "missing: solve again with `splitopt solve FILE --json`")
    inst = io.load(inst_path)
    graph = io.load(graph_path) if graph_path else None
    return plan_of(inst, d["assignment"], graph=graph)


def cmd_export(args) -> int:
    from splitopt.export import export, snippet

    plan = load_plan(args.solution, args.graph)
    devices = None
    if args.devices:
        devices = [int(x) if x.strip().isdigit() else x.strip() for x in args.devices.split(",")]
    out = export(plan, args.format, devices=devices)
    code = snippet(out, plan)
    text = json.dumps(out, indent=1)
    if args.output:
        Path(args.output).write_text(text + "\n")
        py = Path(args.output).with_suffix(".py")
        py.write_text(code)
        print(f"wrote {args.output} and {py}: {args.format} plan of {len(plan['stages'])} "
              f"{'sides' if plan['kind'] == 'sides' else 'stages'}")
    else:
        print(text)
    if args.python or not args.output:
        print(code if args.python else "\n# Python:\n" + "\n".join("# " + ln for ln in code.splitlines()))
    return 0


def add_parsers(sub) -> None:
    pr = sub.add_parser("profile", help="measure each layer's seconds on this machine's CPU (torch or onnxruntime)")
    pr.add_argument("file", help="a graph JSON from `splitopt import torch`, or an .onnx model")
    pr.add_argument("--torch", default=None, metavar="PKG.MOD:FACTORY",
                    help="the model to run (default: the one the graph was imported from)")
    pr.add_argument("--input", action="append", default=None, metavar="SHAPE[:DTYPE]",
                    help="example input shape (default: the import's)")
    pr.add_argument("--dtype", default=None, help="dtype (default: the import's)")
    pr.add_argument("--repeat", type=int, default=5, help="timed runs; the median is written (default 5)")
    pr.add_argument("--warmup", type=int, default=2, help="untimed runs first (default 2)")
    pr.add_argument("--training", action="store_true", help="time the backward pass too")
    pr.add_argument("--threads", type=int, default=1, help="torch intra-op threads while timing (default 1)")
    pr.add_argument("--machine", default="cpu", help="machine class the seconds are written under (default cpu)")
    pr.add_argument("--batch", type=int, default=None, help="ONNX: value of a symbolic batch dimension")
    pr.add_argument("--as-flop", type=float, default=None, metavar="FLOP_PER_S",
                    help="also write fwd/bwd FLOP = measured seconds x this rate (for `make pipeline` and "
                         "`make throughput`, which read FLOP; the counted FLOP stay in each layer's meta)")
    pr.add_argument("-o", "--output", default=None, help="graph JSON to write (default: overwrite FILE; "
                                                         "FILE.json for an ONNX model)")
    pr.set_defaults(func=cmd_profile)

    from splitopt.export.formats import FORMATS

    ex = sub.add_parser("export", help="a solved plan in module names: torch pipelining, torchtitan, DeepSpeed, "
                                       "device map")
    ex.add_argument("solution", help="the output of `splitopt solve INSTANCE --json`")
    ex.add_argument("--format", "-f", choices=FORMATS, required=True, help="target framework")
    ex.add_argument("--devices", default=None, help="device-map: comma-separated device per stage (cuda:0,cuda:1,...)")
    ex.add_argument("--graph", default=None, help="graph JSON with the FQNs (default: the solution's own plan)")
    ex.add_argument("--python", action="store_true", help="print the Python snippet")
    ex.add_argument("-o", "--output", default=None, help="JSON file to write (and the snippet beside it as .py)")
    ex.set_defaults(func=cmd_export)
