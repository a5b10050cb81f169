"""Seeded operator graphs that look like the peer's workloads (issue 22): BERT-like and GNMT-like
nets of 100-2,000 nodes at operator granularity, for inference or training, as
:class:`~splitopt.instances.placement.PlacementInstance`.

What they copy from the peer's operator graphs (msr-fiddle/dnn-partitioning,
``throughput-inputs/OperatorGraphs``; Tarnawski et al., NeurIPS 2020, §5): parameter nodes (weights,
biases, LayerNorm scales) with zero compute, their bytes as accelerator memory, in one colour class
with the operator that reads them; CPU times 10-23x the accelerator's; a tensor's transfer time its
bytes over a PCIe-like rate, so that moving an activation costs about as much as a small operator
and moving a weight matrix more than most operators. Times are in seconds.

* ``kind="bert"``: embeddings, then ``layers`` encoder blocks (Q/K/V projections, attention
  scores, softmax, context, output projection, residual add, LayerNorm, a two-matmul feed-forward
  block with GELU, residual add, LayerNorm): 29 nodes a block.
* ``kind="gnmt"``: an LSTM encoder/decoder unrolled over ``steps`` time steps: cell ``(l, t)``
  reads cell ``(l - 1, t)`` and ``(l, t - 1)``, residual connections from the third layer up; each
  layer's weights feed all of its cells (one wide tensor); the decoder's attention at step ``t``
  reads the whole encoder output. A grid of cells: many incomparable ideals, the shape on which the
  peer's DP takes 23-51 s.
* ``kind="inception"``: a stem of convolutions, then Inception-v3-like modules of parallel
  branches (a 1x1 convolution; 1x1 then 5x5; 1x1 then two 3x3; pooling then 1x1; in later modules
  factorised 1x7/7x1 chains and a branch that fans out into a 1x3 and a 3x1 convolution), joined
  by a concatenation: many incomparable ideals per module, the shape whose layer graph the peer's
  DP does not finish in 600 s.
* ``training=True``: every compute node gets a backward node (reversed edges; a forward node feeds
  its own backward node; the two share its colour class), as the peer's training graphs are built;
  ``optimizer=True`` adds one backward-only node per weight (the weight update, fed by the
  weight's gradient, in its own class): a tensor then feeds a colour class without forward nodes,
  which the ideal branch and bound declines (the peer's operator-graph training workloads).

:func:`layer_graph` makes *layer* graphs of parallel branches between a source and a sink (with an
attention-like edge from branch 0 into branch 1 every ten layers). Layer times are lognormal around
a millisecond, CPU times 5-20x, an activation's transfer a fraction of a layer's time; the numbers
are ours, not the peer's. They were meant as the shape of the peer's GNMT layer graph (its DP log:
17,914 ideals, 22.7 s), guessed before its file was read; read on 2026-11-25, that graph is a chain
of LSTM cells whose idle side nodes (states read by no one, zero-second feeds) make 3,310,714
ideals, 168 once they join their neighbours (the peer's DP merges some of them, hence its 17,914).
:func:`lstm_layer_graph` copies that shape; the parallel branches stay as a harder one of ours.
:func:`inception_layer_graph` makes Inception-v3-like layer graphs (a layer per convolution, batch
norm and ReLU; 313 layers, 35,683 ideals), the shape of the peer's Inception-v3 layer graph.
"""

from __future__ import annotations

import math

import numpy as np

from splitopt.errors import InstanceError
from splitopt.instances.placement import PlacementInstance

KINDS = ("bert", "gnmt", "inception")
PCIE_BYTES_PER_S = 12e9
BYTES = 4  # fp32


class _Builder:
    def __init__(self, rng: np.random.Generator, acc_flops: float):
        self.rng = rng
        self.acc_flops = acc_flops
        self.names: list[str] = []
        self.acc: list[float] = []
        self.cpu: list[float] = []
        self.size: list[float] = []
        self.colour: list[int | None] = []
        self.out_bytes: list[float] = []
        self.cons: list[set[int]] = []
        self.params: list[int] = []

    def node(self, name: str, flop: float, out_elems: float, inputs=(), size: float = 0.0,
             colour: int | None = None) -> int:
        i = len(self.names)
        self.names.append(f"{name}#{i}")
        jitter = float(self.rng.uniform(0.7, 1.4))
        a = flop / self.acc_flops * jitter if flop > 0 else 0.0
        self.acc.append(a)
        self.cpu.append(a * float(self.rng.uniform(10, 23)))
        self.size.append(size)
        self.colour.append(colour)
        self.out_bytes.append(out_elems * BYTES)
        self.cons.append(set())
        for j in inputs:
            self.cons[j].add(i)
        return i

    def param(self, name: str, elems: float) -> int:
        i = self.node(name, 0.0, elems, size=elems * BYTES)
        self.params.append(i)
        return i

    def op(self, name: str, flop: float, out_elems: float, inputs, params=()) -> int:
        """An operator with its parameters in one colour class (the class of its first parameter)."""
        i = self.node(name, flop, out_elems, list(inputs) + list(params))
        if params:
            cid = self.colour[params[0]] if self.colour[params[0]] is not None else params[0]
            for p in params:
                self.colour[p] = cid
            self.colour[i] = cid
        return i


def _bert(b: _Builder, layers: int, seq: int, hidden: int):
    h, s = hidden, seq
    emb_w = b.param("embeddings.word.weight", 30522 * h)
    pos_w = b.param("embeddings.position.weight", 512 * h)
    x = b.op("embeddings.gather", s * h, s * h, [], [emb_w, pos_w])
    g, be = b.param("embeddings.ln.weight", h), b.param("embeddings.ln.bias", h)
    x = b.op("embeddings.ln", 8 * s * h, s * h, [x], [g, be])
    for L in range(layers):
        p = f"encoder.{L}."
        qkv = []
        for nm in ("query", "key", "value"):
            w, bi = b.param(p + nm + ".weight", h * h), b.param(p + nm + ".bias", h)
            qkv.append(b.op(p + nm, 2 * s * h * h, s * h, [x], [w, bi]))
        sc = b.op(p + "scores", 2 * s * s * h, s * s * 16 // 16, [qkv[0], qkv[1]])
        sm = b.op(p + "softmax", 5 * s * s, s * s, [sc])
        ctx = b.op(p + "context", 2 * s * s * h, s * h, [sm, qkv[2]])
        w, bi = b.param(p + "attn.out.weight", h * h), b.param(p + "attn.out.bias", h)
        o = b.op(p + "attn.out", 2 * s * h * h, s * h, [ctx], [w, bi])
        a = b.op(p + "attn.add", s * h, s * h, [o, x])
        g, be = b.param(p + "attn.ln.weight", h), b.param(p + "attn.ln.bias", h)
        a = b.op(p + "attn.ln", 8 * s * h, s * h, [a], [g, be])
        w1, b1 = b.param(p + "ffn.in.weight", 4 * h * h), b.param(p + "ffn.in.bias", 4 * h)
        f = b.op(p + "ffn.in", 8 * s * h * h, 4 * s * h, [a], [w1, b1])
        f = b.op(p + "ffn.gelu", 8 * 4 * s * h, 4 * s * h, [f])
        w2, b2 = b.param(p + "ffn.out.weight", 4 * h * h), b.param(p + "ffn.out.bias", h)
        f = b.op(p + "ffn.out", 8 * s * h * h, s * h, [f], [w2, b2])
        f = b.op(p + "ffn.add", s * h, s * h, [f, a])
        g, be = b.param(p + "ffn.ln.weight", h), b.param(p + "ffn.ln.bias", h)
        x = b.op(p + "ffn.ln", 8 * s * h, s * h, [f], [g, be])
    w = b.param("pooler.weight", h * h)
    b.op("pooler", 2 * h * h, h, [x], [w])


def _gnmt(b: _Builder, layers: int, steps: int, hidden: int, batch: int = 64):
    h, B = hidden, batch
    cell_flop = 2 * B * (2 * h) * (4 * h)

    def stack(prefix: str, inputs: list[int], n_layers: int, attention_from: list[int] | None = None):
        prev_layer = inputs
        for L in range(n_layers):
            w = b.param(f"{prefix}.lstm{L}.weight", 8 * h * h)
            row, prev = [], None
            for t in range(steps):
                ins = [prev_layer[t]] + ([prev] if prev is not None else [])
                if attention_from is not None and L == 0:
                    att = b.op(f"{prefix}.attention.{t}", 2 * B * h * steps * 2, B * h,
                               ([prev] if prev is not None else [prev_layer[t]]) + attention_from)
                    ins.append(att)
                c = b.node(f"{prefix}.lstm{L}.cell{t}", cell_flop, B * h, ins)
                b.cons[w].add(c)
                if t == 0:  # the weights live with the first cell (one colour class)
                    cid = w
                    b.colour[w] = b.colour[c] = cid
                if L >= 2:  # residual connections from the third layer up
                    c = b.op(f"{prefix}.lstm{L}.res{t}", B * h, B * h, [c, prev_layer[t]])
                row.append(c)
                prev = c
            prev_layer = row
        return prev_layer

    emb = b.param("encoder.embedding.weight", 32000 * h)
    src = [b.op(f"encoder.embed.{t}", B * h, B * h, [], [emb] if t == 0 else []) for t in range(steps)]
    for t in range(1, steps):
        b.cons[emb].add(src[t])
    enc = stack("encoder", src, layers)
    mem = b.op("encoder.memory", B * h * steps, B * h * steps, enc)
    demb = b.param("decoder.embedding.weight", 32000 * h)
    tgt = [b.op(f"decoder.embed.{t}", B * h, B * h, [], [demb] if t == 0 else []) for t in range(steps)]
    for t in range(1, steps):
        b.cons[demb].add(tgt[t])
    dec = stack("decoder", tgt, layers, attention_from=[mem])
    w = b.param("classifier.weight", 32000 * h)
    outs = [b.op(f"classifier.{t}", 2 * B * h * 32000, B * 32000, [dec[t]], [w] if t == 0 else [])
            for t in range(steps)]
    for t in range(1, steps):
        b.cons[w].add(outs[t])
    b.op("loss", B * 32000 * steps, 1, outs)


def _inception(b: _Builder, modules: int, batch: int = 32):
    B = batch
    res, ch = 147, 32

    def conv(name, x, cin, cout, kh, kw, r):
        w = b.param(name + ".weight", cin * cout * kh * kw)
        return b.op(name, 2 * B * r * r * cin * cout * kh * kw, B * r * r * cout, [x], [w])

    x = b.op("input", 0.0, B * 299 * 299 * 3, [])
    x = conv("stem.conv1", x, 3, 32, 3, 3, res)
    x = conv("stem.conv2", x, 32, 64, 3, 3, res)
    x = b.op("stem.pool", B * res * res * 64, B * 73 * 73 * 64, [x])
    res, ch = 35, 192
    x = conv("stem.conv3", x, 64, ch, 3, 3, res)
    for m in range(modules):
        p = f"mixed{m}."
        kind = "a" if m < modules // 3 else ("c" if m < 2 * modules // 3 else "e")
        outs = [conv(p + "b1", x, ch, 64, 1, 1, res)]
        if kind == "a":
            y = conv(p + "b5.1", x, ch, 48, 1, 1, res)
            outs.append(conv(p + "b5.2", y, 48, 64, 5, 5, res))
            y = conv(p + "b3.1", x, ch, 64, 1, 1, res)
            y = conv(p + "b3.2", y, 64, 96, 3, 3, res)
            outs.append(conv(p + "b3.3", y, 96, 96, 3, 3, res))
        elif kind == "c":
            y = conv(p + "b7.1", x, ch, 128, 1, 1, res)
            y = conv(p + "b7.2", y, 128, 128, 1, 7, res)
            outs.append(conv(p + "b7.3", y, 128, 192, 7, 1, res))
            y = conv(p + "b77.1", x, ch, 128, 1, 1, res)
            for j, (kh, kw) in enumerate(((7, 1), (1, 7), (7, 1), (1, 7))):
                y = conv(p + f"b77.{j + 2}", y, 128, 128 if j < 3 else 192, kh, kw, res)
            outs.append(y)
        else:
            y = conv(p + "b3.1", x, ch, 384, 1, 1, res)
            outs += [conv(p + "b3.2a", y, 384, 384, 1, 3, res), conv(p + "b3.2b", y, 384, 384, 3, 1, res)]
            y = conv(p + "bd.1", x, ch, 448, 1, 1, res)
            y = conv(p + "bd.2", y, 448, 384, 3, 3, res)
            outs += [conv(p + "bd.3a", y, 384, 384, 1, 3, res), conv(p + "bd.3b", y, 384, 384, 3, 1, res)]
        y = b.op(p + "pool", 9 * B * res * res * ch, B * res * res * ch, [x])
        outs.append(conv(p + "bp", y, ch, 64, 1, 1, res))
        if m in (modules // 3, 2 * modules // 3):  # a grid reduction after the A and C modules
            res = max(8, res // 2)
        ch = 256 if kind == "a" else (768 if kind == "c" else 2048)
        x = b.op(p + "concat", B * res * res * ch, B * res * res * ch, outs)
    x = b.op("avgpool", B * res * res * ch, B * ch, [x])
    w = b.param("fc.weight", ch * 1000)
    b.op("fc", 2 * B * ch * 1000, B * 1000, [x], [w])


def size_params(kind: str, n_nodes: int) -> dict:
    """``layers`` (and ``steps``) that give about ``n_nodes`` forward nodes (``modules`` for
    ``inception``)."""
    if kind == "inception":  # about 19.5 nodes a module (operators and parameters), plus 12
        return {"modules": max(1, round((n_nodes - 12) / 19.5))}
    if kind == "bert":
        return {"layers": max(1, round((n_nodes - 10) / 29))}
    layers = 4 if n_nodes < 600 else 8
    per_step = 2 * layers + 2 * (layers - 2) + 4  # cells, residual adds, attention, embeddings, classifier
    return {"layers": layers, "steps": max(2, round((n_nodes - 2 * layers - 8) / per_step))}


def operator_graph(seed: int, kind: str = "bert", n_nodes: int = 300, *, training: bool = False,
                   optimizer: bool = False, n_accelerators: int | None = None, n_cpus: int = 1,
                   memory: float | None = 2.0, contiguity: str = "convex", objective: str = "max-load",
                   name: str | None = None) -> PlacementInstance:
    """A seeded BERT-, GNMT- or Inception-like operator graph of about ``n_nodes`` forward nodes (module
    docstring). ``n_accelerators`` is drawn from 3..6 when ``None``; ``memory``: each accelerator
    holds ``memory`` times an equal share of the parameter bytes (``None``: unlimited)."""
    if kind not in KINDS:
        raise InstanceError("kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    if not isinstance(n_nodes, (int, np.integer)) or not 20 <= n_nodes <= 5000:
        raise InstanceError("n_nodes", f"must be an integer in [20, 5000], got {n_nodes!r}")
    rng = np.random.default_rng([seed, 22022, KINDS.index(kind)])
    b = _Builder(rng, acc_flops=float(rng.uniform(1e12, 4e12)))
    if kind == "bert":
        _bert(b, size_params("bert", n_nodes)["layers"], seq=int(rng.choice([128, 256])),
              hidden=int(rng.choice([256, 512, 768])))
    elif kind == "gnmt":
        p = size_params("gnmt", n_nodes)
        _gnmt(b, p["layers"], p["steps"], hidden=int(rng.choice([512, 1024])))
    else:
        _inception(b, size_params("inception", n_nodes)["modules"], batch=int(rng.choice([16, 32, 64])))
    n = len(b.names)
    names, acc, cpu, size, colour = list(b.names), list(b.acc), list(b.cpu), list(b.size), list(b.colour)
    tensors = [(i, tuple(sorted(b.cons[i])), b.out_bytes[i] / PCIE_BYTES_PER_S) for i in range(n) if b.cons[i]]
    backward = [False] * n
    if training:
        for i in range(n):
            if colour[i] is None:
                colour[i] = i
        compute = [i for i in range(n) if i not in set(b.params)]
        bi = {i: n + j for j, i in enumerate(compute)}
        for i in compute:
            names.append(names[i] + ".grad")
            acc.append(acc[i] * float(rng.uniform(1.5, 2.2)))
            cpu.append(cpu[i] * float(rng.uniform(1.5, 2.2)))
            size.append(0.0)
            colour.append(colour[i])
            backward.append(True)
        bcons: dict[int, set[int]] = {}
        fwd = []
        for p, cs, sec in tensors:
            extra = {bi[p]} if p in bi else set()
            fwd.append((p, tuple(sorted(set(cs) | extra)), sec))
            for c in cs:
                if p in bi and c in bi:
                    bcons.setdefault(bi[c], set()).add(bi[p])
        for i in compute:
            if not b.cons[i]:
                fwd.append((i, (bi[i],), b.out_bytes[i] / PCIE_BYTES_PER_S))
        # the gradient a backward node sends has the size of its forward node's input
        grads = [(p, tuple(sorted(cs)), b.out_bytes[compute[p - n]] / PCIE_BYTES_PER_S)
                 for p, cs in sorted(bcons.items())]
        if optimizer:
            # one weight update per parameter, fed by the gradient of the operator that reads it
            cls = max(c for c in colour if c is not None) + 1
            extra: dict[int, set[int]] = {}
            for w in b.params:
                reader = min(b.cons[w])
                if reader not in bi:
                    continue
                u = len(names)
                names.append(names[w] + ".update")
                acc.append(b.size[w] / 2e11)
                cpu.append(b.size[w] / 1e10)
                size.append(0.0)
                colour.append(cls)
                cls += 1
                backward.append(True)
                extra.setdefault(bi[reader], set()).add(u)
            grads = [(p, tuple(sorted(set(cs) | extra.pop(p, set()))), s) for p, cs, s in grads]
            grads += [(p, tuple(sorted(cs)), 1e-5) for p, cs in sorted(extra.items())]
        tensors = fwd + grads
    k = int(rng.integers(3, 7)) if n_accelerators is None else int(n_accelerators)
    mem = None if memory is None else float(memory) * max(sum(size), 1.0) / max(k, 1)
    return PlacementInstance(tuple(names), tuple(cpu), tuple(acc), tuple(tensors), n_accelerators=k, n_cpus=n_cpus,
                             acc_memory_bytes=mem, size_bytes=tuple(size), backward=tuple(backward),
                             colour=tuple(colour), objective=objective, contiguity=contiguity,
                             name=name or f"{kind}-{n_nodes}{'-training' if training else ''}-s{seed}",
                             meta={"generator": "splitopt.instances.placement_gen.operator_graph", "seed": seed,
                                   "kind": kind, "training": training, "optimizer": optimizer})


def _mirror(names, acc, cpu, size, tensors, seconds, factor: float):
    """The training mirror of a layer graph, in place on ``names``/``acc``/``cpu``/``size`` (``size``
    may be ``None``): a backward node per node (``factor`` times its times, its bytes, in its colour
    class), each sending its gradient (``seconds(node)``) to the backward nodes of its inputs.
    Returns ``(tensors, backward, colour)``."""
    n = len(names)
    preds: dict[int, list[int]] = {}
    for u, cs, _s in tensors:
        for c in cs:
            preds.setdefault(c, []).append(u)
    for v in range(n):
        names.append(names[v] + ".grad")
        acc.append(factor * acc[v])
        cpu.append(factor * cpu[v])
        if size is not None:
            size.append(size[v])
    grads = [(n + c, tuple(sorted(n + u for u in ps)), seconds(c)) for c, ps in sorted(preds.items())]
    return list(tensors) + grads, [False] * n + [True] * n, list(range(n)) * 2


def layer_graph(seed: int, n_branches: int = 3, length: int = 31, *, training: bool = False,
                n_accelerators: int = 6, n_cpus: int = 1, contiguity: str = "chain",
                objective: str = "max-load") -> PlacementInstance:
    """A seeded layer graph of ``n_branches`` parallel chains of ``length`` layers (module
    docstring); ``training=True`` adds a backward node per layer in its forward node's colour
    class, each sending its gradient to the backward nodes of its inputs."""
    for key, v, lo, hi in (("n_branches", n_branches, 1, 8), ("length", length, 1, 500)):
        if not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
            raise InstanceError(key, f"must be an integer in [{lo}, {hi}], got {v!r}")
    rng = np.random.default_rng([seed, 22096])
    ms = 1e-3
    names, acc, succ, ends = ["input"], [0.05 * ms], {0: []}, []
    for b in range(n_branches):
        prev = 0
        for i in range(length):
            v = len(names)
            names.append(f"branch{b}.layer{i}")
            acc.append(float(rng.lognormal(0.0, 0.8)) * ms)
            succ[prev].append(v)
            succ[v] = []
            prev = v
        ends.append(prev)
    sink = len(names)
    names.append("output")
    acc.append(0.3 * ms)
    succ[sink] = []
    for e in ends:
        succ[e].append(sink)
    if n_branches > 1:
        for i in range(min(5, length // 2), length, 10):
            succ[1 + i].append(1 + length + i)
    n = len(names)
    sec = [float(rng.lognormal(-1.5, 0.7)) * ms for _ in range(n)]
    cpu = [a * float(rng.uniform(5, 20)) for a in acc]
    tensors = [(u, tuple(sorted(succ[u])), sec[u]) for u in range(n) if succ[u]]
    backward, colour = [False] * n, [None] * n
    if training:
        tensors, backward, colour = _mirror(names, acc, cpu, None, tensors, sec.__getitem__, 2.0)
    return PlacementInstance(tuple(names), tuple(cpu), tuple(acc), tuple(tensors), n_accelerators=n_accelerators,
                             n_cpus=n_cpus, backward=tuple(backward), colour=tuple(colour), objective=objective,
                             contiguity=contiguity,
                             name=f"layers-{n_branches}x{length}{'-training' if training else ''}-s{seed}",
                             meta={"generator": "splitopt.instances.placement_gen.layer_graph", "seed": seed,
                                   "n_branches": n_branches, "length": length, "training": training})


def lstm_layer_graph(seed: int, encoder: int = 8, decoder: int = 8, *, training: bool = False,
                     n_accelerators: int = 6, n_cpus: int = 1, contiguity: str = "chain",
                     objective: str = "max-load") -> PlacementInstance:
    """A seeded LSTM encoder/decoder *layer* graph with the shape of the peer's GNMT layer graph
    (``throughput-inputs/LayerGraphs/gnmt_*.json`` of msr-fiddle/dnn-partitioning, read
    2026-11-25; the numbers are ours): a chain of ``encoder`` then ``decoder`` cells, each an input
    op (small), the LSTM op (large), an idle node keeping its state (no time, bytes, read by no one)
    and an idle copy that sends the output on, with residual adds from the third cell; an idle
    source of initial states feeds every decoder cell through an idle node by zero-second tensors,
    and an idle attention node, fed by the last encoder cell, sends a small tensor to every decoder
    cell. The idle nodes are what the DP over ideals pays for: 8 + 8 cells have millions of
    ideals, a few hundred once they join their neighbours (:func:`..common._merge_idle`).
    ``training=True`` mirrors it as :func:`layer_graph` does."""
    for key, v in (("encoder", encoder), ("decoder", decoder)):
        if not isinstance(v, (int, np.integer)) or not 1 <= v <= 200:
            raise InstanceError(key, f"must be an integer in [1, 200], got {v!r}")
    rng = np.random.default_rng([seed, 22097])
    ms = 1e-3
    names: list[str] = []
    acc: list[float] = []
    size: list[float] = []
    succ: dict[int, list[int]] = {}
    sec: dict[int, float] = {}

    def node(name, t, nbytes=0.0):
        names.append(name)
        acc.append(t)
        size.append(nbytes)
        succ[len(names) - 1] = []
        return len(names) - 1

    act = float(rng.uniform(0.004, 0.008)) * ms  # an activation's transfer
    src = node("input", 0.0)
    init = node("init_state", 0.0)
    prev, prev2, attention = src, None, None
    for part, cells in (("enc", encoder), ("dec", decoder)):
        for c in range(cells):
            pre = node(f"{part}{c}.in", float(rng.uniform(0.1, 0.2)) * ms, 1.3e7)
            cell = node(f"{part}{c}.lstm", float(rng.uniform(6.0, 15.0)) * ms, 5e7)
            state = node(f"{part}{c}.state", 0.0, 5e5)
            copy = node(f"{part}{c}.out", 0.0, 1.3e7)
            succ[prev].append(pre)
            sec[prev] = sec.get(prev, act)
            succ[pre].append(cell)
            sec[pre] = act
            succ[cell] += [state, copy]
            sec[cell] = act * 1.08
            sec[copy] = act
            if part == "dec":
                feed = node(f"{part}{c}.init", 0.0)
                succ[init].append(feed)
                succ[feed].append(cell)
                sec[feed] = 0.0
                succ[attention].append(pre)
            if prev2 is not None and c >= 2:  # residual add from the third cell
                succ[prev2].append(copy)
            prev2, prev = prev, copy
        if part == "enc":
            attention = node("attention", 0.0, 5e5)
            succ[prev].append(attention)
            sec[attention] = act * 0.04
    sec[init] = 0.0
    out = node("classifier", float(rng.uniform(15.0, 30.0)) * ms, 5e8)
    succ[prev].append(out)
    n = len(names)
    cpu = [10 * a for a in acc]
    tensors = [(u, tuple(sorted(set(succ[u]))), sec.get(u, act)) for u in range(n) if succ[u]]
    backward, colour = [False] * n, [None] * n
    if training:
        tensors, backward, colour = _mirror(names, acc, cpu, size, tensors, lambda c: sec.get(c, act), 1.8)
    return PlacementInstance(tuple(names), tuple(cpu), tuple(acc), tuple(tensors), n_accelerators=n_accelerators,
                             n_cpus=n_cpus, size_bytes=tuple(size), acc_memory_bytes=1.6e10, backward=tuple(backward),
                             colour=tuple(colour), objective=objective, contiguity=contiguity,
                             name=f"lstm-{encoder}+{decoder}{'-training' if training else ''}-s{seed}",
                             meta={"generator": "splitopt.instances.placement_gen.lstm_layer_graph", "seed": seed,
                                   "encoder": encoder, "decoder": decoder, "training": training})


def inception_layer_graph(seed: int, *, training: bool = False, n_accelerators: int = 6, n_cpus: int = 1,
                          contiguity: str = "chain", objective: str = "max-load") -> PlacementInstance:
    """A seeded *layer* graph with the shape of Inception-v3 as a framework's profiler lists it, each
    convolution as three layers (convolution, batch norm, ReLU): a stem, three InceptionA modules
    (branches of 1, 2 and 3 convolutions and a pooled one), a reduction, four InceptionC modules
    (factorised 7x7: branches of 1, 3 and 5 convolutions), a reduction, two InceptionE modules
    (branches that fan out into a 1x3 and a 3x1 convolution) and the classifier: 313 layers, about
    36,000 ideals, the shape whose layer graph (326 layers) the peer's DP does not finish in 600 s.
    Times are lognormal around a millisecond for a convolution (a tenth for batch norm, ReLU,
    pooling and concatenation), CPU times 10x, an activation's transfer a fraction of a layer's
    time, weights 1-30 MB; the numbers are ours. ``training=True`` mirrors it as
    :func:`layer_graph` does."""
    rng = np.random.default_rng([seed, 22098])
    ms = 1e-3
    names: list[str] = []
    acc: list[float] = []
    size: list[float] = []
    succ: dict[int, list[int]] = {}

    def layer(name, inputs, heavy=False):
        names.append(name)
        acc.append(float(rng.lognormal(0.0, 0.6)) * ms * (1.0 if heavy else 0.1))
        size.append(float(rng.uniform(1e6, 3e7)) if heavy else 0.0)
        v = len(names) - 1
        succ[v] = []
        for u in inputs:
            succ[u].append(v)
        return v

    def conv(name, x):
        c = layer(name + ".conv", [x], heavy=True)
        return layer(name + ".relu", [layer(name + ".bn", [c])])

    def chain(name, x, n):
        for i in range(n):
            x = conv(f"{name}_{i}", x)
        return x

    def module(name, x, branches, fan=()):
        outs = [chain(f"{name}.b{j}", x, n) for j, n in enumerate(branches)]
        for j, n in fan:  # a branch of n convolutions whose end fans out into two
            y = chain(f"{name}.f{j}", x, n)
            outs.append(layer(f"{name}.f{j}.cat", [conv(f"{name}.f{j}.a", y), conv(f"{name}.f{j}.b", y)]))
        outs.append(conv(f"{name}.pool_proj", layer(f"{name}.pool", [x])))
        return layer(f"{name}.concat", outs)

    x = layer("input", [])
    x = chain("stem", x, 3)
    x = layer("stem.pool1", [x])
    x = chain("stem2", x, 2)
    x = layer("stem.pool2", [x])
    for i in range(3):
        x = module(f"mixed5_{i}", x, (1, 2, 3))
    x = layer("mixed6a.concat", [chain("mixed6a.b0", x, 1), chain("mixed6a.b1", x, 3), layer("mixed6a.pool", [x])])
    for i in range(4):
        x = module(f"mixed6_{i}", x, (1, 3, 5))
    x = layer("mixed7a.concat", [chain("mixed7a.b0", x, 2), chain("mixed7a.b1", x, 4), layer("mixed7a.pool", [x])])
    for i in range(2):
        x = module(f"mixed7_{i}", x, (1,), fan=((0, 1), (1, 2)))
    x = layer("fc", [layer("avgpool", [x])], heavy=True)
    n = len(names)
    sec = [float(rng.uniform(0.02, 0.3)) * ms for _ in range(n)]
    cpu = [10 * a for a in acc]
    tensors = [(u, tuple(sorted(succ[u])), sec[u]) for u in range(n) if succ[u]]
    backward, colour = [False] * n, [None] * n
    if training:
        tensors, backward, colour = _mirror(names, acc, cpu, size, tensors, sec.__getitem__, 2.0)
    mem = 2.0 * math.fsum(size) / max(n_accelerators, 1)
    return PlacementInstance(tuple(names), tuple(cpu), tuple(acc), tuple(tensors), n_accelerators=n_accelerators,
                             n_cpus=n_cpus, size_bytes=tuple(size), acc_memory_bytes=mem, backward=tuple(backward),
                             colour=tuple(colour), objective=objective, contiguity=contiguity,
                             name=f"inception-layers{'-training' if training else ''}-s{seed}",
                             meta={"generator": "splitopt.instances.placement_gen.inception_layer_graph", "seed": seed,
                                   "training": training})


__all__ = ["operator_graph", "layer_graph", "lstm_layer_graph", "inception_layer_graph", "size_params", "KINDS"]
