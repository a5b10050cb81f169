"""Commands about DNN graphs: ``zoo``, ``import``, ``generate``, ``inspect``."""

from __future__ import annotations

import json
import math

from splitopt.cli._fmt import _fmt_num, _table, _wrap
from splitopt.errors import SplitoptError


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
    print(_wrap("", [f"{g.name}: {t['layers']} layers, {t['edges']} edges, parameters {int(round(t['params'])):,} "
                     f"({_fmt_num(t['param_bytes'])}B), MACs {t['macs']:,.0f} ({t['macs'] / 1e9:.3f} G), "
                     f"output bytes {_fmt_num(t['out_bytes'])}B"]))
    return 0


def cmd_import(args) -> int:
    from splitopt.instances import io

    if args.import_kind == "dnn-partitioning":  # a placement workload -> a placement instance (issue 22)
        from splitopt.instances.importers.dnn_partitioning import placement_from_peer, read_peer_file

        inst = read_peer_file(args.path, objective=args.objective, contiguity=args.contiguity,
                              **({"name": args.name} if args.name else {}))
        if args.expert:
            meta = dict(inst.meta)
            meta["expert"] = placement_from_peer(inst, json.loads(io.read_text_file(args.expert)))
            inst = inst.with_(meta=meta)
        io.save(inst, args.output)
        print(f"wrote {args.output}: placement instance {inst.name}, {inst.n_nodes} nodes, "
              f"{inst.n_accelerators} accelerators + {inst.n_cpus} CPU cores, objective {inst.objective}, "
              f"contiguity {inst.contiguity}")
        return 0
    if args.import_kind == "torch":  # issue 23: splitopt.cli.pytorch
        from splitopt.cli.pytorch import cmd_import_torch

        return cmd_import_torch(args)
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


def add_parsers(sub) -> None:
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
    dp = ims.add_parser("dnn-partitioning", help="a msr-fiddle/dnn-partitioning workload JSON (a placement instance)")
    dp.add_argument("path", help="their input JSON (maxFPGAs, maxCPUs, maxSizePerFPGA, nodes, edges)")
    dp.add_argument("-o", "--output", required=True, help="instance JSON file to write")
    dp.add_argument("--name", default=None, help="instance name (default: the file name)")
    dp.add_argument("--objective", choices=("max-load", "fwd+bwd"), default="max-load", help="objective")
    dp.add_argument("--contiguity", choices=("none", "convex", "chain"), default="convex",
                    help="none; convex (each device's forward set convex, the peer's IP; the default); chain (the "
                         "model of the peer's DP: use chain to compare with their DP)")
    dp.add_argument("--expert", default=None, help="their placement JSON to keep as the expert split")
    from splitopt.cli.pytorch import add_import_parser

    add_import_parser(ims)  # issue 23: splitopt import torch
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
