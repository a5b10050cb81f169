"""Seeded random families of DNN graphs.

Every generator takes an explicit integer ``seed`` and returns the same :class:`DNNGraph` on every
machine: structure and costs come from two independent numpy ``Generator`` streams
(``default_rng([seed, 0])`` for the structure, ``default_rng([seed, 1])`` for the costs, so that
changing ``costs=`` never changes the structure); all choices are made by iterating over lists in
index order (never over sets or dicts), and every drawn cost is rounded to 6 significant digits so
that a last-bit difference in a platform's ``pow`` cannot change the graph.

Cost models (``costs=``), for ``fwd_flop``, ``bwd_flop``, ``out_bytes`` and ``param_bytes``:

* ``"uniform"``: ``fwd_flop ~ U[1e8, 1e10)``, ``bwd_flop = fwd_flop * U[1, 3)``,
  ``out_bytes ~ U[1e4, 1e7)``, ``param_bytes ~ U[0, 1e7)``;
* ``"lognormal"``: each value is ``base * 10**x`` with ``x ~ N(1.5, 1.5)`` clipped to
  ``[-3, 6]``, so the multipliers span nine orders of magnitude (``1e-3 .. 1e6``), drawn
  independently per field; ``base`` is ``1e6`` FLOP for compute and ``1e3`` bytes for tensors and
  parameters. This is the stress test for numerical hygiene (float capacities, tolerances).

Layers without parameters in a real network (``input``, ``add``, ``concat``, ``pool``) get
``param_bytes = 0``; input layers get zero compute. Graph ``meta`` records ``generator``, ``seed``
and ``params``.

Families (``KINDS``): :func:`chain`, :func:`layered_dag`, :func:`series_parallel`,
:func:`residual_stack`, :func:`inception_stack`, :func:`dense_stack`; :func:`generate` dispatches
by name.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph, Edge, Layer

COSTS = ("uniform", "lognormal")
_NO_PARAMS = frozenset({"input", "add", "concat", "pool"})
_SIG = 6


def _round(x: float) -> float:
    return float(f"{float(x):.{_SIG}g}")


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InstanceError("seed", f"must be a non-negative integer, got {seed!r}")
    return int(seed)


#: upper bound of every size parameter: a larger request is a typo, and would exhaust memory
MAX_SIZE = 100_000


def _check_int(name: str, v, minimum: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise InstanceError(name, f"must be an integer >= {minimum}, got {v!r}")
    if v > MAX_SIZE:
        raise InstanceError(name, f"must be <= {MAX_SIZE:,}, got {v!r}")
    return int(v)


def _check_costs(costs: str) -> str:
    if costs not in COSTS:
        raise InstanceError("costs", f"must be one of {', '.join(COSTS)}, got {costs!r}")
    return costs


def _rngs(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    return np.random.default_rng([seed, 0]), np.random.default_rng([seed, 1])


def _draw_costs(rng: np.random.Generator, n: int, costs: str) -> dict[str, list[float]]:
    """Arrays of the four cost fields, drawn in a fixed order."""
    if costs == "uniform":
        fwd = rng.uniform(1e8, 1e10, n)
        bwd = fwd * rng.uniform(1.0, 3.0, n)
        out = rng.uniform(1e4, 1e7, n)
        par = rng.uniform(0.0, 1e7, n)
    else:
        def lg(base: float):
            x = np.clip(rng.normal(1.5, 1.5, n), -3.0, 6.0)
            return [base * 10.0 ** float(v) for v in x]

        fwd, bwd, out, par = lg(1e6), lg(1e6), lg(1e3), lg(1e3)
    return {"fwd_flop": [_round(v) for v in fwd], "bwd_flop": [_round(v) for v in bwd],
            "out_bytes": [_round(v) for v in out], "param_bytes": [_round(v) for v in par]}


def _build(specs: list[tuple[str, str, str | None, str | None]], edges: list[tuple[str, str]],
           crng: np.random.Generator, costs: str, name: str, meta: dict) -> DNNGraph:
    """``specs``: (name, op, block, block_kind) in creation order; costs drawn in that order."""
    c = _draw_costs(crng, len(specs), costs)
    layers = []
    for i, (nm, op, block, kind) in enumerate(specs):
        f, b = c["fwd_flop"][i], c["bwd_flop"][i]
        p = c["param_bytes"][i]
        if op == "input":
            f = b = 0.0
        if op in _NO_PARAMS:
            p = 0.0
        layers.append(Layer(nm, op=op, fwd_flop=f, bwd_flop=b, out_bytes=c["out_bytes"][i], param_bytes=p,
                            block=block, block_kind=kind))
    return DNNGraph(layers, [Edge(s, d) for s, d in edges], name=name, meta=meta, _validated_numbers=True)


def _meta(kind: str, seed: int, **params) -> dict:
    return {"generator": kind, "seed": seed, "params": params}


# ---------------------------------------------------------------------- families
def chain(n: int, seed: int, costs: str = "uniform") -> DNNGraph:
    """A chain ``l0 -> l1 -> ... -> l{n-1}`` (every layer has random costs, including ``l0``)."""
    n, seed, costs = _check_int("n", n, 1), _check_seed(seed), _check_costs(costs)
    _, crng = _rngs(seed)
    specs = [(f"l{i}", "layer", None, None) for i in range(n)]
    edges = [(f"l{i}", f"l{i + 1}") for i in range(n - 1)]
    return _build(specs, edges, crng, costs, f"chain-{n}-s{seed}", _meta("chain", seed, n=n, costs=costs))


def layered_dag(n: int, seed: int, width: int = 4, density: float = 0.3, max_skip: int = 2,
                costs: str = "uniform") -> DNNGraph:
    """A random layered DAG with ``n`` layers.

    Level 0 is the single input ``v0``; the other layers fill levels of random size ``1..width``.
    Each layer of level ``L`` gets one producer drawn uniformly from level ``L-1`` and, with
    probability ``density`` each, every other layer of levels ``L-max_skip .. L-1``. Several
    outputs may occur.
    """
    n, seed, costs = _check_int("n", n, 1), _check_seed(seed), _check_costs(costs)
    width, max_skip = _check_int("width", width, 1), _check_int("max_skip", max_skip, 1)
    if isinstance(density, bool) or not isinstance(density, (int, float)) or not 0.0 <= density <= 1.0:
        raise InstanceError("density", f"must be a number in [0, 1], got {density!r}")
    srng, crng = _rngs(seed)
    levels: list[list[int]] = [[0]]
    k = 1
    while k < n:
        size = min(int(srng.integers(1, width + 1)), n - k)
        levels.append(list(range(k, k + size)))
        k += size
    edges: list[tuple[str, str]] = []
    for L in range(1, len(levels)):
        prev = levels[L - 1]
        window = [u for lv in levels[max(0, L - max_skip):L] for u in lv]
        for v in levels[L]:
            main = prev[int(srng.integers(len(prev)))]
            extra = srng.random(len(window)) < density
            for u, take in zip(window, extra):
                if u == main or take:
                    edges.append((f"v{u}", f"v{v}"))
    specs = [(f"v{i}", "input" if i == 0 else "layer", None, None) for i in range(n)]
    return _build(specs, edges, crng, costs, f"layered-{n}-s{seed}",
                  _meta("layered_dag", seed, n=n, width=width, density=density, max_skip=max_skip, costs=costs))


def series_parallel(n: int, seed: int, p_parallel: float = 0.5, costs: str = "uniform") -> DNNGraph:
    """A random two-terminal series-parallel DAG with ``n >= 2`` layers (source ``v0``, sink ``v1``).

    Start from the edge ``v0 -> v1`` and add ``n - 2`` layers; each picks a uniformly random edge
    ``u -> v`` and, with probability ``p_parallel``, adds a parallel path ``u -> w -> v`` (keeping
    ``u -> v``), else subdivides it into ``u -> w -> v`` (series). Both operations keep the graph
    two-terminal series-parallel.
    """
    n, seed, costs = _check_int("n", n, 2), _check_seed(seed), _check_costs(costs)
    if isinstance(p_parallel, bool) or not isinstance(p_parallel, (int, float)) or not 0.0 <= p_parallel <= 1.0:
        raise InstanceError("p_parallel", f"must be a number in [0, 1], got {p_parallel!r}")
    srng, crng = _rngs(seed)
    edges: list[tuple[int, int]] = [(0, 1)]
    for w in range(2, n):
        k = int(srng.integers(len(edges)))
        u, v = edges[k]
        if srng.random() < p_parallel:
            edges.extend([(u, w), (w, v)])
        else:
            edges[k] = (u, w)
            edges.append((w, v))
    specs = [(f"v{i}", "input" if i == 0 else "layer", None, None) for i in range(n)]
    return _build(specs, [(f"v{a}", f"v{b}") for a, b in edges], crng, costs, f"sp-{n}-s{seed}",
                  _meta("series_parallel", seed, n=n, p_parallel=p_parallel, costs=costs))


def residual_stack(blocks: int, seed: int, p_downsample: float = 0.3, costs: str = "uniform") -> DNNGraph:
    """A ResNet-like stack: ``input -> stem -> blocks x residual block -> pool -> fc``.

    Residual block ``b``: ``b{b}.conv1 -> b{b}.conv2 -> b{b}.add`` with the skip from the block
    input into ``b{b}.add``; with probability ``p_downsample`` the skip goes through a projection
    layer ``b{b}.down`` (a 1x1 convolution). The block inputs (``stem`` and each ``add``) are the
    articulation layers.
    """
    blocks, seed, costs = _check_int("blocks", blocks, 0), _check_seed(seed), _check_costs(costs)
    srng, crng = _rngs(seed)
    specs = [("input", "input", None, None), ("stem", "conv", "stem", "stem")]
    edges = [("input", "stem")]
    prev = "stem"
    for b in range(blocks):
        bl = f"b{b}"
        specs += [(f"{bl}.conv1", "conv", bl, "residual"), (f"{bl}.conv2", "conv", bl, "residual")]
        edges += [(prev, f"{bl}.conv1"), (f"{bl}.conv1", f"{bl}.conv2"), (f"{bl}.conv2", f"{bl}.add")]
        if srng.random() < p_downsample:
            specs.append((f"{bl}.down", "conv", bl, "residual"))
            edges += [(prev, f"{bl}.down"), (f"{bl}.down", f"{bl}.add")]
        else:
            edges.append((prev, f"{bl}.add"))
        specs.append((f"{bl}.add", "add", bl, "residual"))
        prev = f"{bl}.add"
    specs += [("pool", "pool", "head", "head"), ("fc", "linear", "head", "head")]
    edges += [(prev, "pool"), ("pool", "fc")]
    return _build(specs, edges, crng, costs, f"residual-{blocks}-s{seed}",
                  _meta("residual_stack", seed, blocks=blocks, p_downsample=p_downsample, costs=costs))


def inception_stack(blocks: int, seed: int, max_branches: int = 4, max_depth: int = 3,
                    costs: str = "uniform") -> DNNGraph:
    """An Inception-like stack: ``input -> stem -> blocks x inception block -> fc``.

    Inception block ``b`` has ``2..max_branches`` parallel branches from the block input, each a
    chain of ``1..max_depth`` layers, joined by ``b{b}.concat`` (the next block input).
    """
    blocks, seed, costs = _check_int("blocks", blocks, 0), _check_seed(seed), _check_costs(costs)
    max_branches, max_depth = _check_int("max_branches", max_branches, 2), _check_int("max_depth", max_depth, 1)
    srng, crng = _rngs(seed)
    specs = [("input", "input", None, None), ("stem", "conv", "stem", "stem")]
    edges = [("input", "stem")]
    prev = "stem"
    for b in range(blocks):
        bl = f"b{b}"
        nbr = int(srng.integers(2, max_branches + 1))
        for r in range(nbr):
            depth = int(srng.integers(1, max_depth + 1))
            last = prev
            for k in range(depth):
                nm = f"{bl}.br{r}.{k}"
                specs.append((nm, "pool" if (r == nbr - 1 and k == 0 and nbr > 2) else "conv", bl, "inception"))
                edges.append((last, nm))
                last = nm
            edges.append((last, f"{bl}.concat"))
        specs.append((f"{bl}.concat", "concat", bl, "inception"))
        prev = f"{bl}.concat"
    specs.append(("fc", "linear", "head", "head"))
    edges.append((prev, "fc"))
    return _build(specs, edges, crng, costs, f"inception-{blocks}-s{seed}",
                  _meta("inception_stack", seed, blocks=blocks, max_branches=max_branches, max_depth=max_depth,
                        costs=costs))


def dense_stack(blocks: int, seed: int, min_layers: int = 2, max_layers: int = 4, costs: str = "uniform") -> DNNGraph:
    """A DenseNet-like stack: ``input -> stem -> blocks x dense block -> fc``.

    Dense block ``b`` has ``min_layers..max_layers`` layers ``b{b}.l{k}``; layer ``k`` consumes the
    block input and every earlier layer of the block, and the transition ``b{b}.trans`` (the next
    block input) consumes all of them.
    """
    blocks, seed, costs = _check_int("blocks", blocks, 0), _check_seed(seed), _check_costs(costs)
    min_layers = _check_int("min_layers", min_layers, 1)
    max_layers = _check_int("max_layers", max_layers, min_layers)
    srng, crng = _rngs(seed)
    specs = [("input", "input", None, None), ("stem", "conv", "stem", "stem")]
    edges = [("input", "stem")]
    prev = "stem"
    for b in range(blocks):
        bl = f"b{b}"
        k = int(srng.integers(min_layers, max_layers + 1))
        members = [prev]
        for j in range(k):
            nm = f"{bl}.l{j}"
            specs.append((nm, "conv", bl, "dense"))
            edges += [(m, nm) for m in members]
            members.append(nm)
        specs.append((f"{bl}.trans", "conv", bl, "dense"))
        edges += [(m, f"{bl}.trans") for m in members]
        prev = f"{bl}.trans"
    specs.append(("fc", "linear", "head", "head"))
    edges.append((prev, "fc"))
    return _build(specs, edges, crng, costs, f"dense-{blocks}-s{seed}",
                  _meta("dense_stack", seed, blocks=blocks, min_layers=min_layers, max_layers=max_layers,
                        costs=costs))


_GENERATORS: dict[str, Callable[..., DNNGraph]] = {
    "chain": chain,
    "layered_dag": layered_dag,
    "series_parallel": series_parallel,
    "residual_stack": residual_stack,
    "inception_stack": inception_stack,
    "dense_stack": dense_stack,
}
KINDS: tuple[str, ...] = tuple(_GENERATORS)
ALIASES: dict[str, str] = {"layered": "layered_dag", "sp": "series_parallel", "residual": "residual_stack",
                           "inception": "inception_stack", "dense": "dense_stack"}
_BLOCK_KINDS = ("residual_stack", "inception_stack", "dense_stack")


def generate(kind: str, seed: int, **params) -> DNNGraph:
    """``generate("layered_dag", 7, n=50, costs="lognormal")``: dispatch to the family ``kind``.

    ``kind`` is one of :data:`KINDS` or a short alias (:data:`ALIASES`: ``layered``, ``sp``,
    ``residual``, ``inception``, ``dense``). For the block families, ``n`` is accepted as the
    number of ``blocks`` (the CLI's single ``--n`` size option).
    """
    kind = ALIASES.get(kind, kind)
    fn = _GENERATORS.get(kind)
    if fn is None:
        raise InstanceError("kind", f"must be one of {', '.join(KINDS)} (or {', '.join(ALIASES)}), got {kind!r}")
    if kind in _BLOCK_KINDS and "n" in params and "blocks" not in params:
        params["blocks"] = params.pop("n")
    import inspect

    valid = [p for p in inspect.signature(fn).parameters if p != "seed"]
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise InstanceError(f"params.{unknown[0]}", f"not a parameter of {kind!r}; valid parameters: "
                                                    f"{', '.join(valid)}")
    try:
        return fn(seed=seed, **params)
    except TypeError as exc:
        raise InstanceError("params", f"bad parameters for {kind!r}: {exc}") from None


__all__ = ["KINDS", "ALIASES", "COSTS", "generate", "chain", "layered_dag", "series_parallel", "residual_stack",
           "inception_stack", "dense_stack"]
