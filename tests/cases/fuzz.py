"""Seeded mutation fuzzing of instance files through the ``splitopt`` command (issue 13, item 6).

A mutant is a valid small instance file of one family with one or two seeded mutations: a key
deleted or duplicated, a value swapped for another type, a number replaced by NaN, an infinity,
1e308, -1, 0, -0.0, a subnormal or a huge integer, a value nested hundreds or thousands of levels
deep, a list emptied, shortened or lengthened, a name collision, the text truncated, binary junk
written into it. Each mutant goes through ``splitopt inspect`` and, when it loads, ``splitopt
solve`` with every algorithm of its family (formulations included); when it does not load,
``solve`` must reject it with the same message (both commands validate the same way).

The only acceptable outcomes are exit status 0 and a clean error (status 2, one line
``splitopt: error: ...`` on stderr). Anything else is recorded: an exception escaping ``main`` (a
traceback for the user), another exit status, a malformed error message, or a call running past
the watchdog (a hang). The CLI runs in-process (``splitopt.cli.main``) for speed.
"""

from __future__ import annotations

import contextlib
import copy
import io as _io
import json
import random
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from splitopt.cli import main
from splitopt.families import family_names, get_family
from splitopt.instances import io
from splitopt.validation.harness import TaskTimeout, deadline

#: every family of the registry (a family added at merge time, e.g. ``placement``, is fuzzed too)
FAMILIES = tuple(family_names())

#: replacement values: type swaps and numbers at and beyond the edges of every range
ODD_NUMBERS = [float("nan"), float("inf"), float("-inf"), 1e308, -1e308, -1, 0, -0.0, 1, 5e-324, 1e-300,
               1e-13, 1e31, 1e30, 10 ** 30, 10 ** 400, 2 ** 63, -(2 ** 63), 1.5, 0.5, 2, 3, 1e9, 1e10]
ODD_VALUES = [None, True, False, "", "x", "v0", "p1", "n0", "L0", [], {}, [1, 2], {"a": 1}, "1e308", [None]]


@dataclass
class Outcome:
    """Counts over a fuzz run; ``failures`` holds (seed, command, description) of every bad outcome."""

    mutants: int = 0
    loaded: int = 0  # mutants inspect accepted
    calls: Counter = field(default_factory=Counter)  # exit status -> count, over every CLI call
    failures: list = field(default_factory=list)

    @property
    def ok(self) -> int:
        return self.calls[0]

    @property
    def clean_errors(self) -> int:
        return self.calls[2]

    @property
    def tracebacks(self) -> int:
        return sum(1 for f in self.failures if f[2].startswith("traceback"))

    def summary(self) -> str:
        return (f"{self.mutants} mutants ({self.loaded} loaded), {sum(self.calls.values())} CLI calls: "
                f"{self.ok} ok, {self.clean_errors} clean errors, {len(self.failures)} failures "
                f"({self.tracebacks} tracebacks)")


def base_documents(family: str, count: int = 4) -> list[dict]:
    """Small valid files of ``family``: its quick recipe at seeds 0..count-1 (split graphs of 4..8
    layers), one of them given every optional field (pins, measured seconds, extra outputs, layer
    meta; node memories and caps; other objectives), and for split the bare graph file."""
    fam = get_family(family)
    docs = []
    params = dict(fam.sets.quick or {})
    if fam.generate is None:  # pragma: no cover - a family without a generator has no base documents
        return docs
    for seed in range(count):
        p = dict(params)
        if family == "split":
            p.update(n=4 + seed % 5)
        docs.append(json.loads(io.dumps(fam.generate(seed, **p), indent=None)))
    rich = copy.deepcopy(docs[-1])
    d = rich["data"]
    if family == "split":
        lay = d["graph"]["layers"]
        lay[1].update(fwd_seconds={"gpu": 0.01}, bwd_seconds={"gpu": 0.02}, block="b1", block_kind="res",
                      meta={"macs": 5, "shape": [1, 2]}, extra_out_bytes=[10.0], mem_bytes=64.0)
        d["graph"]["edges"].append([lay[1]["name"], lay[-1]["name"], 1])
        d.update(pin_server=[lay[-1]["name"]], mode="training", input_policy="pin")
        docs.append({"format": 1, "kind": "graph", "data": d["graph"]})
    elif family == "grouping":
        d.update(objective="thesis_cost", at_most_k=True, k1_convention="uniform", transfers=False)
    elif family == "throughput":
        for i, lay in enumerate(d["layers"]):
            lay["mem_bytes"] = 1e6 * (i + 1)
        d["nodes"][0]["memory_bytes"] = 1e7
        d.update(pins={d["layers"][0]["name"]: d["nodes"][0]["name"]}, max_splits=2, contiguous=True,
                 link_model="half-duplex", transfer="per_edge")
        from splitopt.instances.placement import generate as device_generate

        old = json.loads(io.dumps(device_generate(1, n_nodes=5), indent=None))  # a file written before issue 22
        old["family"], old["data"]["comm_model"] = "throughput", "device"
        docs.append(old)
    elif family == "placement":
        d.update(contiguity="chain", objective="fwd+bwd", acc_memory_bytes=1e9, meta={"note": "x"})
    elif family == "pipeline":
        d.update(micro_batches=[1, 2], max_submodels=3, placement="distinct")
    docs.append(rich)
    for doc in docs:  # every base document is valid
        io.from_envelope(copy.deepcopy(doc))
    return docs


# ---------------------------------------------------------------------------------------------
# option variants and extreme values (issue 21 §4): valid documents, every one through every algorithm

#: values at both ends of the stated ranges (quantities: [0, 1e30]; rates: [1e-12, 1e30]; 5e-324 is
#: the smallest subnormal)
EXTREMES = (1e-300, 5e-324, 1e30)
#: JSON keys holding rates (a rate of 5e-324 or 1e-300 is out of range: a clean error is expected)
_RATE_WORDS = ("rate", "flops", "speed", "bandwidth")


def _is_rate_key(key) -> bool:
    return isinstance(key, str) and any(w in key for w in _RATE_WORDS)


def extreme_document(doc: dict, value: float, rates: float | None = None) -> dict:
    """``doc`` with every positive float set to ``value`` (rates too, or to ``rates`` when given;
    integers, booleans and zeros are kept: counts and missing links stay as they were)."""
    tree = copy.deepcopy(doc)

    def walk(node, in_rate: bool):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in list(items):
            rate = in_rate or _is_rate_key(k)
            if isinstance(v, float) and v > 0 and v != float("inf"):
                node[k] = rates if (rate and rates is not None) else value
            elif isinstance(v, (dict, list)):
                walk(v, rate)

    walk(tree["data"], False)
    return tree


def _drop_links(doc: dict, rng: random.Random, how: str) -> dict:
    """Links set to 0 (no link): one random pair, or every link but a path through the nodes."""
    tree = copy.deepcopy(doc)
    rates = tree["data"].get("rates_bytes_per_s")
    if not isinstance(rates, list) or len(rates) < 2:
        return tree
    n = len(rates)
    if how == "pair":
        i, j = rng.sample(range(n), 2)
        rates[i][j] = rates[j][i] = 0.0
    else:  # a line 0 - 1 - ... - n-1
        for i in range(n):
            for j in range(n):
                if i != j and abs(i - j) != 1:
                    rates[i][j] = 0.0
    return tree


#: option fields of each family (name -> values); every value appears in some variant
OPTION_FIELDS = {
    "split": {"mode": ("training", "inference"), "input_policy": ("pin", "upload")},
    "grouping": {"objective": ("perf", "thesis_cost"), "at_most_k": (True, False), "transfers": (True, False)},
    "throughput": {"link_model": ("full-duplex", "half-duplex", "shared"), "transfer": ("once", "per_edge"),
                   "contiguous": (False, True)},
    "pipeline": {"placement": ("distinct", "revisit", "aggregate"), "bottleneck": ("stages", "resource"),
                 "memory": ("paper", "resident"), "client_split": ("balanced", "paper"),
                 "topology": ("mesh", "line", "star", "tree"), "relay": ("forbidden", "store_forward")},
}


def variant_documents(family: str, seed: int = 0, options: int = 8) -> list[tuple[str, dict]]:
    """Valid (or cleanly rejected) documents of ``family``: ``options`` seeded combinations of its
    option fields (:data:`OPTION_FIELDS`; every value of every field appears once at least), missing
    links (one pair; all but a line), and the extremes (every positive number at 1e-300, 5e-324,
    1e30; quantities at an extreme with rates at 1e-12 or 1e30)."""
    rng = random.Random(f"variants:{family}:{seed}")
    docs = base_documents(family, 2)
    if not docs:
        return []
    base = docs[0]
    out: list[tuple[str, dict]] = []
    fields = {k: v for k, v in OPTION_FIELDS.get(family, {}).items() if k in base["data"]}
    combos = []
    for k, vals in fields.items():  # each value once ...
        for v in vals:
            combos.append({k: v})
    while len(combos) < options and fields:  # ... then seeded combinations of all fields
        combos.append({k: rng.choice(vals) for k, vals in fields.items()})
    for combo in combos[:max(options, sum(len(v) for v in fields.values()))]:
        d = copy.deepcopy(base)
        d["data"].update(combo)
        out.append(("options " + ",".join(f"{k}={v}" for k, v in combo.items()), d))
    if "rates_bytes_per_s" in base["data"]:
        out.append(("missing link (one pair)", _drop_links(base, rng, "pair")))
        out.append(("missing links (a line only)", _drop_links(base, rng, "line")))
    for j, doc in enumerate(d for d in docs if d.get("kind") == "instance"):
        tag = "" if j == 0 else f" (base {j})"
        for x in EXTREMES:
            out.append((f"every number {x:g}{tag}", extreme_document(doc, x)))
        for x in (1e-300, 1e30):
            for r in (1e-12, 1e30):
                out.append((f"quantities {x:g}, rates {r:g}{tag}", extreme_document(doc, x, rates=r)))
    return out


def fuzz_variants(family: str, seed: int = 0, workdir: Path | str = ".", timeout: float = 60.0,
                  options: int = 8, algorithms: list[str] | None = None, time_limit: float = 5.0,
                  stride: int = 1, only: Callable[[str], bool] | None = None) -> Outcome:
    """Every :func:`variant_documents` document through ``inspect`` and, when it loads, ``solve``
    with every algorithm (``--time-limit time_limit`` where declared). ``stride > 1`` runs algorithm
    ``j`` on document ``i`` only when ``(i + j) % stride == 0`` (every algorithm and every document
    still run, in ``1/stride`` of the calls); ``only(label)`` selects documents."""
    fam = get_family(family)
    algos = algorithms or list(fam.algorithms)
    out = Outcome()
    path = Path(workdir) / f"variant-{family}.json"
    docs = [(lab, d) for lab, d in variant_documents(family, seed, options) if only is None or only(lab)]
    for i, (label, doc) in enumerate(docs):
        path.write_text(json.dumps(doc))
        out.mutants += 1
        status, _, err = run_cli(["inspect", str(path)], timeout)
        out.calls[status if isinstance(status, int) else "bad"] += 1
        bad = _check(status, err)
        if bad:
            out.failures.append((i, f"{label}: inspect", bad))
            continue
        if status != 0:
            continue
        out.loaded += 1
        for j, a in enumerate(algos):
            if (i + j) % stride:
                continue
            argv = ["solve", str(path), *solve_argv(family, a, time_limit)]
            s, _, e = run_cli(argv, timeout)
            out.calls[s if isinstance(s, int) else "bad"] += 1
            bad = _check(s, e)
            if bad:
                out.failures.append((i, f"{label}: solve --algorithm {a}", bad))
    return out


def _paths(node, path=()):
    """Every (path, value) of a JSON tree, the root included."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*path, i))


def _set(tree, path, value):
    if not path:
        return value
    node = tree
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return tree


def _nest_text(depth: int, leaf) -> str:
    """``leaf`` wrapped ``depth`` times, alternately in a list and an object (as text: deeper than
    the json module can encode)."""
    opens = "".join("[" if i % 2 else '{"a": ' for i in range(depth))
    closes = "".join("]" if i % 2 else "}" for i in reversed(range(depth)))
    return opens + json.dumps(leaf) + closes


def _dump_with_duplicate(tree, target_path, key) -> str:
    """JSON text of ``tree`` in which the object at ``target_path`` has ``key`` twice (the second
    occurrence holding a different value)."""

    def enc(node, path):
        if isinstance(node, dict):
            items = [f"{json.dumps(k)}: {enc(v, (*path, k))}" for k, v in node.items()]
            if path == target_path:
                items.append(f"{json.dumps(key)}: {json.dumps(node[key] if isinstance(node[key], str) else 7)}")
            return "{" + ", ".join(items) + "}"
        if isinstance(node, list):
            return "[" + ", ".join(enc(v, (*path, i)) for i, v in enumerate(node)) + "]"
        return json.dumps(node)

    return enc(tree, ())


def mutate(doc: dict, rng: random.Random) -> str | bytes:
    """One mutant of ``doc`` as the text (or bytes) of a file."""
    tree = copy.deepcopy(doc)
    nodes = list(_paths(tree))
    op = rng.choice(["delete", "duplicate", "type", "number", "number", "number", "nest", "empty", "list",
                     "rename", "truncate", "junk", "two"])
    if op == "two":  # two independent tree mutations
        for _ in range(2):
            tree = json.loads(_tree_mutation(tree, list(_paths(tree)), rng, rng.choice(["type", "number", "delete", "list"])))
        return json.dumps(tree)
    if op == "truncate":
        text = json.dumps(tree)
        return text[: rng.randrange(len(text))]
    if op == "junk":
        raw = bytearray(json.dumps(tree).encode())
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        if rng.random() < 0.2:
            return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
        return bytes(raw)
    if op == "duplicate":
        objs = [(p, v) for p, v in nodes if isinstance(v, dict) and v]
        p, v = rng.choice(objs)
        return _dump_with_duplicate(tree, p, rng.choice(list(v)))
    return _tree_mutation(tree, nodes, rng, op)


def _tree_mutation(tree, nodes, rng: random.Random, op: str) -> str:
    if op == "delete":
        objs = [(p, v) for p, v in nodes if isinstance(v, dict) and v]
        p, v = rng.choice(objs)
        del v[rng.choice(list(v))]
    elif op == "type":
        p, _ = rng.choice(nodes[1:])
        tree = _set(tree, p, copy.deepcopy(rng.choice(ODD_VALUES + ODD_NUMBERS)))
    elif op == "number":
        nums = [(p, v) for p, v in nodes if isinstance(v, (int, float)) and not isinstance(v, bool)] or nodes[1:]
        p, _ = rng.choice(nums)
        tree = _set(tree, p, rng.choice(ODD_NUMBERS))
    elif op == "nest":
        p, v = rng.choice(nodes[1:])
        nested = _nest_text(rng.choice([3, 40, 200, 1000, 5000, 100_000]), v)
        return json.dumps(_set(tree, p, "@@NEST@@")).replace('"@@NEST@@"', nested, 1)
    elif op == "empty":
        lists = [(p, v) for p, v in nodes if isinstance(v, list)]
        if lists:
            p, _ = rng.choice(lists)
            tree = _set(tree, p, [])
    elif op == "list":
        lists = [(p, v) for p, v in nodes if isinstance(v, list) and v]
        if lists:
            p, v = rng.choice(lists)
            i = rng.randrange(len(v))
            if rng.random() < 0.5:
                del v[i]
            else:
                v.insert(rng.randrange(len(v) + 1), copy.deepcopy(v[i]))
    elif op == "rename":
        strs = [(p, v) for p, v in nodes if isinstance(v, str) and p]
        p, _ = rng.choice(strs)
        others = [v for _, v in strs] + ["", "\u0000", "x" * 10_000]
        tree = _set(tree, p, rng.choice(others))
    return json.dumps(tree)  # NaN / Infinity written as bare tokens on purpose


def run_cli(argv: list[str], timeout: float = 60.0) -> tuple[int | str, str, str]:
    """``(status, stdout, stderr)`` of ``splitopt ARGV`` in-process; status is ``"traceback: ..."``
    for an exception escaping ``main`` and ``"hang"`` past ``timeout`` seconds."""
    out, err = _io.StringIO(), _io.StringIO()
    try:
        with deadline(timeout), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 2
    except TaskTimeout:
        return "hang", out.getvalue(), err.getvalue()
    except BaseException as exc:  # noqa: BLE001 - everything that escapes main is a failure
        if isinstance(exc, KeyboardInterrupt):
            raise
        tb = traceback.format_exc(limit=-3)
        return f"traceback: {type(exc).__name__}: {exc}"[:300] + "\n" + tb, out.getvalue(), err.getvalue()
    return code, out.getvalue(), err.getvalue()


def _check(status, err: str) -> str | None:
    """``None`` for an acceptable outcome, else a description."""
    if isinstance(status, str):
        return status
    if status == 0:
        return None
    if status != 2:
        return f"exit status {status}: {err[-300:]}"
    # a file written before issue 22 (throughput, comm_model "device") loads with one note line
    err = "".join(line for line in err.splitlines(keepends=True) if not line.startswith("splitopt: note: "))
    if not err.startswith("splitopt: error: ") or err.count("\n") != 1 or "Traceback" in err:
        return f"malformed error message: {err[:300]!r}"
    return None


def solve_argv(family: str, algorithm: str, time_limit: float = 20.0) -> list[str]:
    """Options that keep one solve call short (time and node limits where the algorithm takes them)."""
    a = get_family(family).algorithms[algorithm]
    extra = []
    if a.option("time_limit") is not None:
        extra += ["--time-limit", f"{time_limit:g}"]
    if a.option("node_limit") is not None:
        extra += ["--option", "node_limit=200000"]
    return ["--algorithm", algorithm, *extra]


def fuzz(family: str, n: int, seed: int = 0, workdir: Path | str = ".", timeout: float = 60.0,
         algorithms: list[str] | None = None) -> Outcome:
    """Run ``n`` seeded mutants of ``family`` through ``inspect`` and ``solve``."""
    fam = get_family(family)
    algos = algorithms or list(fam.algorithms)
    docs = base_documents(family)
    out = Outcome()
    path = Path(workdir) / f"fuzz-{family}.json"
    for i in range(n):
        rng = random.Random(f"{family}:{seed}:{i}")
        text = mutate(docs[i % len(docs)], rng)
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        out.mutants += 1
        status, _, err = run_cli(["inspect", str(path)], timeout)
        out.calls[status if isinstance(status, int) else "bad"] += 1
        bad = _check(status, err)
        if bad:
            out.failures.append((i, "inspect", bad))
            continue
        if status == 0:
            out.loaded += 1
            for a in algos:
                s, _, e = run_cli(["solve", str(path), *solve_argv(family, a)], timeout)
                out.calls[s if isinstance(s, int) else "bad"] += 1
                bad = _check(s, e)
                if bad:
                    out.failures.append((i, f"solve --algorithm {a}", bad))
        else:
            s, _, e = run_cli(["solve", str(path)], timeout)
            out.calls[s if isinstance(s, int) else "bad"] += 1
            bad = _check(s, e)
            if bad:
                out.failures.append((i, "solve", bad))
            elif s != 2 or e != err:
                out.failures.append((i, "solve", f"inspect said {err.strip()!r} but solve exited {s}: {e.strip()!r}"))
    return out


__all__ = ["fuzz", "fuzz_variants", "variant_documents", "extreme_document", "mutate", "run_cli", "Outcome",
           "FAMILIES", "base_documents", "EXTREMES"]
