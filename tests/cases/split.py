"""Seeded random ``split`` instances for the tests (independent of splitopt.instances.generate).

Graph kinds: chain, residual, inception, dense (DenseNet-like: each layer reads all earlier ones in
its block), layered (random layered DAG with skips), multiport (layers with several different output
tensors). Costs are log-uniform over many orders of magnitude; modes, iteration counts, input
policies and pins vary with the seed.
"""

from __future__ import annotations

import numpy as np

from splitopt.instances.graph import DNNGraph, Edge, Layer
from splitopt.instances.split import SplitInstance

KINDS = ("chain", "residual", "inception", "dense", "layered", "multiport")


def _logu(rng, lo, hi, size=None):
    return 10.0 ** rng.uniform(lo, hi, size)


def random_edges(kind: str, n: int, rng) -> list[tuple[int, int, int]]:
    """Edges (src, dst, port) over layers 0..n-1, every layer reachable from layer 0."""
    e: set[tuple[int, int, int]] = set()
    if kind == "chain":
        e = {(i, i + 1, 0) for i in range(n - 1)}
    elif kind == "residual":
        i = 0
        while i < n - 1:
            span = int(rng.integers(2, 4))
            j = min(i + span, n - 1)
            for k in range(i, j):
                e.add((k, k + 1, 0))
            if j - i >= 2:
                e.add((i, j, 0))
            i = j
    elif kind == "inception":
        i = 0
        while i < n - 1:
            left = n - 1 - i
            if left < 3:
                for k in range(i, n - 1):
                    e.add((k, k + 1, 0))
                break
            width = int(rng.integers(2, min(4, left - 1) + 1))
            branches = list(range(i + 1, i + 1 + width))
            merge = i + 1 + width
            for b in branches:
                e.add((i, b, 0))
                e.add((b, merge, 0))
            if rng.random() < 0.3:
                e.add((i, merge, 0))
            i = merge
    elif kind == "dense":
        i = 0
        while i < n - 1:
            size = int(rng.integers(2, 5))
            j = min(i + size, n - 1)
            for a in range(i, j + 1):
                for b in range(a + 1, j + 1):
                    e.add((a, b, 0))
            i = j
    elif kind == "layered":
        for v in range(1, n):
            lo = max(0, v - 4)
            k = int(rng.integers(1, 3))
            for u in rng.choice(np.arange(lo, v), size=min(k, v - lo), replace=False):
                e.add((int(u), v, 0))
    elif kind == "multiport":
        for v in range(1, n):
            lo = max(0, v - 3)
            k = int(rng.integers(1, 3))
            for u in rng.choice(np.arange(lo, v), size=min(k, v - lo), replace=False):
                e.add((int(u), v, int(rng.integers(0, 2))))
    else:
        raise ValueError(kind)
    return sorted(e)


def random_instance(seed: int, kind: str | None = None, n: int | None = None, *,
                    pins: bool = True) -> SplitInstance:
    rng = np.random.default_rng([seed, 7])
    kind = kind or KINDS[seed % len(KINDS)]
    n = n or int(rng.integers(3, 21))
    edges = random_edges(kind, n, rng)
    wide = rng.random() < 0.5  # costs over ~12 orders of magnitude, else ~3
    span = 6 if wide else 1.5
    layers = []
    for v in range(n):
        ob = float(_logu(rng, 2 - span, 4 + span)) if rng.random() > 0.05 else 0.0
        pb = float(_logu(rng, 1 - span, 4 + span)) if rng.random() < 0.6 else 0.0
        extra = (float(_logu(rng, 0, 5)),) if kind == "multiport" else ()
        layers.append(Layer(f"L{v}", out_bytes=ob, param_bytes=pb, extra_out_bytes=extra))
    names = [l.name for l in layers]
    g = DNNGraph(layers, [Edge(names[a], names[b], p) for a, b, p in edges], name=f"{kind}-{seed}")
    dev = _logu(rng, -3 - span / 2, -1 + span / 2, n)
    srv = dev * _logu(rng, -2, 0.5, n)  # mostly faster server, sometimes slower
    zero = rng.random(n) < 0.1
    dev[zero] = 0.0
    mode = "training" if rng.random() < 0.6 else "inference"
    policy = str(rng.choice(["pin", "upload"]))
    up = float(_logu(rng, 4, 7))
    down = float(up * _logu(rng, -0.5, 1))
    iters = int(rng.choice([1, 10, 100]))
    pin_d: list[str] = []
    pin_s: list[str] = []
    if pins and rng.random() < 0.35:
        # a device pin and a server pin that do not conflict
        order = list(range(n))
        d = int(rng.integers(0, n))
        anc = _reach(d, g, up_=True)
        pin_d = [names[d]]
        cand = [v for v in order if v not in anc and v != d and not (policy == "pin" and v in g.inputs)]
        if cand and rng.random() < 0.7:
            pin_s = [names[int(rng.choice(cand))]]
    return SplitInstance(g, dev.tolist(), srv.tolist(), up, down, mode, iters, tuple(pin_d), tuple(pin_s),
                         input_bytes=float(_logu(rng, 2, 7)), input_policy=policy)


def _reach(v: int, g: DNNGraph, up_: bool) -> set[int]:
    seen = set()
    stack = [v]
    while stack:
        x = stack.pop()
        for y in (g.pred(x) if up_ else g.succ(x)):
            if y not in seen:
                seen.add(y)
                stack.append(y)
    return seen


def close(a: float, b: float, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b)) + abs_


# ---------------------------------------------------------------- digest counterexamples (seeds 000, 002)

def training(layers, edges, N=10, blocks=None):
    """layers: (name, xi_D, xi_S, a); R_D = R_S = 1, k = 0, so a tensor costs N*a*2 = 20a."""
    blocks = blocks or {}
    g = DNNGraph([Layer(n, out_bytes=a, block=blocks.get(n)) for n, _d, _s, a in layers], edges)
    return SplitInstance(g, [l[1] for l in layers], [l[2] for l in layers], 1.0, 1.0, "training", N)


def inference(layers, edges, tau):
    """layers: (name, t_e, t_c, d/B); B = 1 byte/s; raw input tau = D_input/B uploaded if v1 on cloud."""
    g = DNNGraph([Layer(n, out_bytes=d) for n, _e, _c, d in layers], edges)
    return SplitInstance(g, [l[1] for l in layers], [l[2] for l in layers], 1.0, 1.0, "inference", 1,
                         input_bytes=tau, input_policy="upload")


def check_a():
    L = [("v0", 1, 0.9, 100), ("p", 1, 0.9, 1), ("q", 1, 0.9, 100), ("u", 1, 0.9, 1), ("a", 100, 1, 100),
         ("out", 100, 1, 1)]
    E = [("v0", "p"), ("v0", "q"), ("p", "a"), ("p", "u"), ("q", "u"), ("u", "out"), ("a", "out")]
    return training(L, E)


def check_b():
    # own instance (the digest does not print Check B's data); Assumption 1 holds.
    L = [("v0", 1, 0.5, 50), ("p", 1, 0.5, 0.05), ("x", 100, 0.5, 0.05), ("w", 1, 0.5, 0)]
    E = [("v0", "p"), ("p", "x"), ("x", "w"), ("v0", "w")]
    return training(L, E)


def fig_2_6():
    # v1 -> p -> x -> w, v1 -> w; t_e = (1,1,100,1), t_c = 0.5, d/B = (1000,1,1,1), tau = 2000
    L = [("v1", 1, 0.5, 1000), ("p", 1, 0.5, 1), ("x", 100, 0.5, 1), ("w", 1, 0.5, 1)]
    return inference(L, [("v1", "p"), ("p", "x"), ("x", "w"), ("v1", "w")], tau=2000)


def fig_3_1():
    L = [("v1", 1, 0.5, 1000), ("p", 1, 0.5, 1), ("x", 100, 0.5, 1), ("w", 1, 0.5, 1000), ("p2", 1, 0.5, 1),
         ("x2", 100, 0.5, 1), ("w2", 1, 0.5, 1)]
    E = [("v1", "p"), ("p", "x"), ("x", "w"), ("v1", "w"), ("w", "p2"), ("p2", "x2"), ("x2", "w2"), ("w", "w2")]
    return inference(L, E, tau=2000)


# ---------------------------------------------------------------- numerical range (issue: honest exact statuses)
def wide_range_instance(seed: int, n: int | None = None) -> SplitInstance:
    """Every cost, size and rate log-uniform over 1e-9..1e9 (18 orders of magnitude) on a random DAG
    of 3..20 layers: the range on which HiGHS once called wrong splits optimal."""
    rng = np.random.default_rng([seed, 13])
    kind = KINDS[seed % len(KINDS)]
    n = n or int(rng.integers(3, 21))
    edges = random_edges(kind, n, rng)
    layers = [Layer(f"L{v}", out_bytes=float(_logu(rng, -9, 9)), param_bytes=float(_logu(rng, -9, 9)),
                    extra_out_bytes=(float(_logu(rng, -9, 9)),) if kind == "multiport" else ())
              for v in range(n)]
    names = [l.name for l in layers]
    g = DNNGraph(layers, [Edge(names[a], names[b], p) for a, b, p in edges], name=f"wide-{kind}-{seed}")
    mode = "training" if rng.random() < 0.6 else "inference"
    return SplitInstance(g, _logu(rng, -9, 9, n), _logu(rng, -9, 9, n), float(_logu(rng, -9, 9)),
                         float(_logu(rng, -9, 9)), mode, int(rng.choice([1, 10, 100])),
                         input_bytes=float(_logu(rng, -9, 9)), input_policy=str(rng.choice(["pin", "upload"])))
