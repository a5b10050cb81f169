"""Backward-only colour classes ("orphans") in the ``chain`` model, for the ideal branch and bound.

A training operator graph can hold a colour class made only of backward nodes (a weight update fed
by a gradient: the peer's operator-graph training workloads, Tarnawski et al., NeurIPS 2020, §5).
Contiguity constrains forward nodes only, so such a class may sit on any device; the search over
ideals of the forward graph has no place for it. Two instances built from the original bracket the
optimum, and each is solved by the ideal branch and bound:

* :func:`without` drops the orphans (their nodes, the tensors they produce, and them as
  consumers): every device's load only shrinks, so its optimum is a **lower bound** of the
  original's. :func:`attached` (what the search uses since 2026-11-25) keeps the part of the
  orphans' work that cannot leave its feeder's device without paying a transfer at least as large:
  a bound above it by up to the orphans' work (a BERT-like 2,476-node training graph with 661
  weight updates, chain: 23.13 ms without them, 23.76 ms attached; ``auto`` had left 3.1 % open at
  60 s, 0.54 % with this bound, and proves it with :func:`hosted` too). Since 2026-11-28 it also
  keeps the transfers between an orphan's neighbours that no placement of it avoids
  (:func:`_routed`: the peer's BERT-L12 training graph, 1.47 -> 0.034 % open at 60 s; since
  2026-11-29 its bound is the optimum, proven by the ideal search alone in 1.5 s), and the work of
  orphans fed only by other orphans (:func:`_through`) and, for an orphan whose every tensor is
  with one class, all of those tensors as the glue's cap (:func:`_enclosed`; the peer's BERT-L3
  training graph: 63.02 -> 65.303 ms, the optimum).
* :func:`mirrored` gives every orphan class an artificial forward node (no time, no bytes) and,
  for each backward tensor between an orphan and another class, a zero-time forward edge between
  their forward nodes in the mirrored direction: the orphans join the chain as the peer's DP places
  them (its ``createArtificialForwardNodes``, read for the model, not copied). Its placements,
  restricted to the original nodes, are placements of the original with the same loads: its
  optimum is an **upper bound**, and equals the peer's DP value on such inputs.
* :func:`hosted` merges each orphan class into a class on the device a placement gives it: another
  upper bound, searched around a placement to improve it.

:func:`place` completes a placement of either by putting each orphan class on the device that
raises the objective least (a second upper bound). When an upper bound meets the lower bound
the optimum is proven; otherwise :mod:`.auto` hands both to the MILP.
"""

from __future__ import annotations

import heapq
import math
from typing import Sequence

from splitopt.instances.placement import PlacementInstance


def without(instance: PlacementInstance, orphans: Sequence[Sequence[int]]) -> tuple[PlacementInstance, list[int]]:
    """The instance without the orphan nodes, and the original index of each node it keeps."""
    drop = {i for grp in orphans for i in grp}
    keep = [i for i in range(instance.n_nodes) if i not in drop]
    new = {i: j for j, i in enumerate(keep)}
    tensors = []
    for p, cons, sec in instance.tensors:
        if p in drop:
            continue
        cs = tuple(new[c] for c in cons if c not in drop)
        if cs:
            tensors.append((new[p], cs, sec))

    def pick(vals):
        return tuple(vals[i] for i in keep)

    red = PlacementInstance(pick(instance.nodes), pick(instance.cpu_seconds), pick(instance.acc_seconds),
                            tuple(tensors), n_accelerators=instance.n_accelerators, n_cpus=instance.n_cpus,
                            acc_memory_bytes=instance.acc_memory_bytes, supported=pick(instance.supported),
                            size_bytes=pick(instance.size_bytes), backward=pick(instance.backward),
                            colour=pick(instance.colour), objective=instance.objective,
                            contiguity=instance.contiguity, name=f"{instance.name}-without-orphans")
    return red, keep


def attached(instance: PlacementInstance, orphans: Sequence[Sequence[int]]) -> tuple[PlacementInstance, list[int]]:
    """The instance without the orphans, where each orphan class's accelerator time, up to the
    seconds of a tensor feeding it, is glued to that tensor's producer; its optimum is a **lower
    bound** of the original's, above :func:`without`'s by up to the orphans' work.

    Each orphan class ``o`` is assigned one feeding tensor ``t`` (the one of most seconds whose
    producer ``p`` is no orphan; for the ``fwd+bwd`` objective a backward ``p``, so that ``t``
    counts in the backward part like ``o``). Per tensor, ``e = min(sum of its orphans' accelerator
    times (infinite if one is unsupported), seconds of t)``; ``p``'s class gets a backward node of
    accelerator time ``e`` (CPU time 0), and ``t`` loses ``e`` seconds. Why every device's load
    only shrinks, for any placement of the original: an accelerator holding ``p`` either already
    pays ``t`` out (a consumer that stays is elsewhere: it gains ``e`` and loses ``e``), or it pays
    for ``t``'s orphans, on it (their accelerator times) or elsewhere (``t`` out, once): at least
    ``e``; a CPU core pays no transfer, so it gets nothing; every other device pays ``t`` in with
    fewer seconds, and the orphans' own loads are dropped (as in :func:`without`). The nodes it
    keeps come first, in their order (``keep`` maps them to the original); the glued nodes follow."""
    drop = {i for grp in orphans for i in grp}
    keep = [i for i in range(instance.n_nodes) if i not in drop]
    new = {i: j for j, i in enumerate(keep)}
    back, tensors = instance.backward, instance.tensors
    feeds: dict[int, list[int]] = {}
    for ti, (p, cons, sec) in enumerate(tensors):
        if p in drop or sec <= 0.0 or (instance.objective != "max-load" and not back[p]):
            continue
        for c in cons:
            if c in drop:
                feeds.setdefault(c, []).append(ti)
    work: dict[int, float] = {}  # tensor -> summed accelerator time of the orphans assigned to it
    chosen: list[tuple[Sequence[int], int, set[int]]] = []
    for grp in orphans:
        ts = {ti for i in grp for ti in feeds.get(i, ())}
        if not ts:
            continue
        t = max(sorted(ts), key=lambda ti: tensors[ti][2])
        a = math.fsum(instance.acc_seconds[i] for i in grp) if all(instance.supported[i] for i in grp) else math.inf
        work[t] = work.get(t, 0.0) + a
        chosen.append((grp, t, ts))
    for t, a in _through(instance, orphans, chosen).items():
        work[t] += a
    cap = _enclosed(instance, chosen, drop) if instance.objective == "max-load" else {}
    glue = {ti: min(a, cap.get(ti, tensors[ti][2])) for ti, a in work.items()}
    out = []
    for ti, (p, cons, sec) in enumerate(tensors):
        if p in drop:
            continue
        cs = tuple(new[c] for c in cons if c not in drop)
        if cs:
            out.append((new[p], cs, max(sec - glue.get(ti, 0.0), 0.0)))
    names, cpu, acc = [instance.nodes[i] for i in keep], [instance.cpu_seconds[i] for i in keep], \
        [instance.acc_seconds[i] for i in keep]
    sup, size = [instance.supported[i] for i in keep], [instance.size_bytes[i] for i in keep]
    bwd, colour = [back[i] for i in keep], [instance.colour[i] for i in keep]
    fresh = max([c for c in instance.colour if c is not None] + [-1]) + 1
    extra: dict[int, float] = {}
    for ti, e in glue.items():
        if e > 0.0:
            extra[new[tensors[ti][0]]] = extra.get(new[tensors[ti][0]], 0.0) + e
    taken = set(names)

    def add(j, suffix, seconds):  # a backward node of the class of kept node j (which gets one)
        nonlocal fresh
        if colour[j] is None:
            colour[j], fresh = fresh, fresh + 1
        nm = f"{names[j]}{suffix}"
        while nm in taken:
            nm += "~"
        taken.add(nm)
        names.append(nm), cpu.append(0.0), acc.append(seconds), sup.append(True), size.append(0.0), bwd.append(True)
        colour.append(colour[j])
        return len(names) - 1

    for j, e in sorted(extra.items()):
        add(j, "#orphans", e)
    # the transfers the orphans' placement cannot avoid (_routed), each sent by a node of no time in
    # the sender's class (a node produces one tensor; one without inputs closes no cycle)
    for u, v, r in (_routed(instance, chosen, glue, drop) if instance.objective == "max-load" else ()):
        out.append((add(new[u], "#end", 0.0), (new[v],), r))
    red = PlacementInstance(tuple(names), tuple(cpu), tuple(acc), tuple(out), n_accelerators=instance.n_accelerators,
                            n_cpus=instance.n_cpus, acc_memory_bytes=instance.acc_memory_bytes, supported=tuple(sup),
                            size_bytes=tuple(size), backward=tuple(bwd), colour=tuple(colour),
                            objective=instance.objective, contiguity=instance.contiguity,
                            name=f"{instance.name}-orphans-attached")
    return red, keep


def _class_key(instance: PlacementInstance, i: int):
    """Node ``i``'s colour class (the node itself where it has none)."""
    return ("c", instance.colour[i]) if instance.colour[i] is not None else ("n", i)


def _users(chosen) -> dict[int, int]:
    """How many orphan classes are glued to each tensor."""
    users: dict[int, int] = {}
    for _grp, t, _ts in chosen:
        users[t] = users.get(t, 0) + 1
    return users


def _enclosed(instance: PlacementInstance, chosen, drop: set[int]) -> dict[int, float]:
    """For an orphan class that exchanges tensors with one colour class ``C`` only (no other class,
    no fed orphan; its glued tensor ``t`` from ``C`` feeds no other orphan class): ``{t: the seconds
    of all the tensors between it and C}``, the glue's cap in place of ``t``'s seconds
    (:func:`attached`, objective ``max-load``). An accelerator ``D`` holding ``C`` pays the orphan's
    work where the orphan is with it, else every tensor between the two, each once (out of ``D``
    or into it); the attached instance keeps none of them on ``D`` (their other consumers are in
    ``C``, or the orphan produced them) and :func:`_routed` has no edge for them (every end is in
    ``C``). The peer's BERT-L3 training graph: two classes fed by a forward node and sending their
    results back to its backward partner (one of them 174.7 ms each way)."""
    def cls(i):
        return _class_key(instance, i)

    tensors = instance.tensors
    users = _users(chosen)
    fed = {i for grp, _t, _ts in chosen for i in grp}
    touching: dict[int, list[int]] = {}
    where = {i: g for g, (grp, _t, _ts) in enumerate(chosen) for i in grp}
    for ti, (u, cons, sec) in enumerate(tensors):
        if sec > 0.0:
            for g in {where[x] for x in (u, *cons) if x in where}:
                touching.setdefault(g, []).append(ti)
    out = {}
    for g, (grp, t, _ts) in enumerate(chosen):
        if users[t] != 1:
            continue
        mine, home = set(grp), cls(tensors[t][0])
        total = 0.0
        for ti in touching.get(g, ()):
            u, cons, sec = tensors[ti]
            others = [x for x in (u, *cons) if x not in mine]
            if any(x in fed for x in others):
                break  # joined to another fed orphan (a pair of _routed)
            if any(x not in drop and cls(x) != home for x in others):
                break
            if any(x not in drop for x in others):
                total += sec
        else:
            out[t] = max(total, tensors[t][2])
    return out


def _through(instance: PlacementInstance, orphans: Sequence[Sequence[int]], chosen) -> dict[int, float]:
    """Work of the orphan classes fed by no other class but joined to a fed one, directly or
    through other orphans (:func:`attached`): ``{glued tensor: seconds to add to its glue}``.

    The classes hang on a forest whose roots are the fed classes (a fed ``a`` glued to tensor
    ``t`` of producer ``p``): a maximum spanning one, grown from all roots at once, each child
    ``b`` joined to its parent by a *link*, the tensors between the two (either direction; a
    tensor serves one link). A class's own work (infinite where a node of it runs on no
    accelerator) is shared out, at most all of it: a share at its node, ``main(b) = min(work,
    link - kids)``, and the rest to *leaves* under classes of other trees it is joined to by
    tensors no link took, each leaf at most those tensors' seconds. A node counts ``sub(b) =
    min(main(b) + its leaves + the sub of its children, its link)``; the root's children and
    leaves add to ``t``'s glue. Valid, by induction down each tree, for an accelerator ``D``
    holding ``p``: if ``a`` is on ``D``, ``D`` pays every ``sub`` below it: where the child (or
    leaf class) is on ``D``, its share of its own work, and its children's by the same argument;
    where it is not, its link, which crosses ``D``'s boundary (each tensor once, each share of
    work once); if ``a`` is elsewhere, ``D`` pays ``t`` whole, which the glue never exceeds. The
    links are orphan-to-orphan tensors touching at most one fed class, which :func:`attached`
    drops and :func:`_routed` uses only between two fed classes, so none counts twice.

    The peer's BERT-L3 training graph (2026-11-29): a class of 2.287 ms fed only by the big orphan
    (12.141 ms, fed a 174.7 ms tensor by a forward node and sending one back), joined to it by
    6.824 ms each way, had been dropped, and a class of 3.2e-10 s joins two trees: with both the
    attached bound is the optimum, 65.303 ms (63.02 before), and the ideal search proves it alone."""
    tensors = instance.tensors
    of = {i: g for g, grp in enumerate(orphans) for i in grp}
    root = {of[grp[0]]: t for grp, t, _ts in chosen}  # fed class -> its glued tensor
    between: dict[tuple[int, int], list[int]] = {}  # (class, class) -> the tensors joining them
    nbr: dict[int, set[int]] = {}
    for ti, (u, cons, sec) in enumerate(tensors):
        if sec <= 0.0:
            continue
        ends = {of[x] for x in (u, *cons) if x in of}
        if len(ends) < 2 or sum(g in root for g in ends) > 1:  # (between fed ones: _routed's)
            continue
        for a in ends:
            for b in ends - {a}:
                nbr.setdefault(a, set()).add(b)
                if a < b:
                    between.setdefault((a, b), []).append(ti)
    used: set[int] = set()

    def link(a, b):  # the seconds of the tensors between a and b that no other link took
        return math.fsum(tensors[ti][2] for ti in between[(min(a, b), max(a, b))] if ti not in used)

    # a maximum spanning forest from the fed classes (Prim's order: the heaviest link first; a
    # tensor joining three classes serves one link, so a link is re-weighed when it comes up)
    parent: dict[int, tuple[int, float]] = {}
    order: list[int] = []
    heap = [(-link(a, b), b, a) for a in root for b in nbr.get(a, ())]
    heapq.heapify(heap)
    reached = set(root)
    while heap:
        sec, b, a = heapq.heappop(heap)
        if b in reached:
            continue
        now = link(a, b)
        if now < -sec:
            heapq.heappush(heap, (-now, b, a))
            continue
        reached.add(b)
        used.update(between[(min(a, b), max(a, b))])
        parent[b] = (a, now)
        order.append(b)
        for c in nbr.get(b, ()):
            if c not in reached:
                heapq.heappush(heap, (-link(b, c), c, b))

    def work(b):
        gb = orphans[b]
        return math.fsum(instance.acc_seconds[i] for i in gb) if all(instance.supported[i] for i in gb) else math.inf

    main: dict[int, float] = {}  # the share of a class's own work at its node of the forest
    kids: dict[int, float] = {}
    for b in reversed(order):  # children before parents
        a, ln = parent[b]
        main[b] = min(work(b), max(ln - kids.get(b, 0.0), 0.0))
        kids[a] = kids.get(a, 0.0) + min(main[b] + kids.get(b, 0.0), ln)
    # the rest of its work goes to leaves under classes of other trees it is joined to by tensors no
    # link took (the peer's BERT-L3 training graph: a class joined to two trees, 1.2e-10 s each way)
    tree = dict(zip(root, root))
    for b in order:
        tree[b] = tree[parent[b][0]]
    spent, leaves = dict(main), {}
    for x, y in sorted(between):
        if x not in tree or y not in tree or tree[x] == tree[y] or (ln := link(x, y)) <= 0.0:
            continue
        left = {b: 0.0 if b in root else min(work(b) - spent[b], ln) for b in (x, y)}
        host, leaf = (x, y) if left[y] >= left[x] else (y, x)
        if left[leaf] > 0.0:
            spent[leaf] += left[leaf]
            leaves[host] = leaves.get(host, 0.0) + left[leaf]
            used.update(between[(x, y)])
    kids = {}
    for b in reversed(order):
        a, ln = parent[b]
        kids[a] = kids.get(a, 0.0) + min(main[b] + kids.get(b, 0.0) + leaves.get(b, 0.0), ln)
    out: dict[int, float] = {}
    for r, t in root.items():
        if (g := kids.get(r, 0.0) + leaves.get(r, 0.0)) > 0.0:
            out[t] = out.get(t, 0.0) + g
    return out


def _routed(instance: PlacementInstance, chosen, glue: dict[int, float], drop: set[int]):
    """Transfers between the neighbours of an orphan class that its placement cannot avoid
    (:func:`attached`, objective ``max-load``): ``(u, v, seconds)`` tensors to add.

    The *ends* of an orphan class ``o`` are the tensors it exchanges with the rest: those feeding
    it whose other consumers lie in their producer's colour class, and those it produces whose
    consumers lie in one class, each used by no other orphan class; end ``j`` has a node ``x_j``
    outside the orphans (the producer, or a consumer) and seconds ``s_j`` (for the glued end,
    ``s_j - e`` of them are left beside its glue ``e``). Wherever ``o`` sits, each end whose class
    is on another device costs ``s_j`` there and on ``o``'s device (transfers count on
    accelerators, at both ends). A cycle through the ends (two ends: one tensor of the smaller
    seconds left; more: at most ``min(s_i, s_j) / 2`` per edge, and at most ``s_j - e`` on the
    glued end's two edges together) never charges a device more: a device holding ends ``S`` but
    not ``o`` is charged at most the weights of the edges at the ends of ``S``, at most ``s_j`` per
    end (``s_j - e`` for the glued one, whose producer also carries ``e``), which it pays; ``o``'s
    device is charged at most half the seconds of the ends it does not hold, per edge, which it
    pays too (and the glue ``e`` sits on the glued end's producer, which pays ``o``'s work or that
    tensor's whole ``s_j``). The cycle runs through the inputs, then the outputs; of the glued end's
    share, the edge from the end before it (the last output where the glued end is the first input:
    the end most often on another device) takes its full half-weight first, the edge to the end
    after it the rest. :func:`attached` sends each from a backward node of no time in ``u``'s
    class, so contiguity, which is about forward edges, stays as it was.

    Measured on the peer's training operator graphs (chain; gradients summed by backward-only nodes
    with two to four inputs and an output): with the cycle (2026-11-28) the attached bound of
    BERT-L12 (2,012 nodes) rose from 431.57 to 437.85 ms and of ResNet-50 from 192.30 to 253.59 ms,
    under their optima 437.998 and 255.194 ms (the peer's DP values); ``auto`` at 60 s left 1.47 %
    open on BERT-L12 before, 0.034 % after, and the chain MILP had to close both. With the glued
    end's share given to the edge from the output first (2026-11-29; split evenly before) both
    bounds are the optima, 437.998 and 255.194 ms: the ideal search proves them alone, in 1.5 s
    and 0.9 s (BERT-L6: 72.447 -> 72.472 ms under 72.865; BERT-L3 unchanged). On the random
    summing graphs of the tests the new split is higher on 11 of 40 and lower on 3 (either split
    is a valid bound; the inputs-then-outputs cycle is the training graphs' shape).

    *Pairs.* Where an orphan class feeds another and neither touches a third (a path of two orphans:
    the peer's BERT-L6 and BERT-L3 training graphs), the first one's output is no end; one cycle runs
    through the ends of both, the two edges between them at most half the seconds of the tensors
    between the two each. Charging at a device ``D``: an edge whose end on ``D`` has its orphan
    elsewhere is paid by that end; one whose end off ``D`` has its orphan on ``D`` by that end;
    otherwise one member is on ``D`` and the other not, and the tensors between them cross ``D``'s
    boundary, paying the (at most two) edges between the members. BERT-L6 training: the attached
    bound 72.472 -> 72.865 ms, the optimum (proven by the ideal search alone in 0.32 s, 3.5 s with the
    MILP before); BERT-L3 training 56.22 -> 63.02 ms under 65.30 (2026-11-29)."""
    def cls(i):
        return _class_key(instance, i)

    tensors = instance.tensors
    users = _users(chosen)
    producer = {i: gi for gi, (grp, _t, _ts) in enumerate(chosen) for i in grp}
    out_of: dict[int, list[int]] = {}
    for ti, (u, _cons, _s) in enumerate(tensors):
        if u in producer:
            out_of.setdefault(producer[u], []).append(ti)
    ends_of = []  # per orphan class: (seconds, node outside the orphans, glue), the glued end first
    for gi, (grp, t, ts) in enumerate(chosen):
        mine = set(grp)
        ends = []
        for ti in sorted(ts):
            q, cons, sec = tensors[ti]
            if (ti != t or users[t] == 1) and all(c in mine or (c not in drop and cls(c) == cls(q)) for c in cons):
                ends.append((sec, q, glue.get(ti, 0.0) if ti == t else 0.0))
        for ti in out_of.get(gi, ()):
            _u, cons, sec = tensors[ti]
            if sec > 0.0 and all(c not in drop and cls(c) == cls(cons[0]) for c in cons):
                ends.append((sec, cons[0], 0.0))
        h = next((j for j, x in enumerate(ends) if x[2] > 0.0), 0)
        ends_of.append(ends[h:] + ends[:h])  # (the same cycle, from the glued end)
    # pairs of orphan classes joined by tensors and to no other: one cycle through both
    link: dict[tuple[int, int], set[int]] = {}
    for ti, (u, cons, sec) in enumerate(tensors):
        a = producer.get(u)
        if a is None or sec <= 0.0:
            continue
        for c in cons:
            b = producer.get(c)
            if b is not None and b != a:
                link.setdefault((min(a, b), max(a, b)), set()).add(ti)
    nbrs: dict[int, int] = {}
    for a, b in link:
        nbrs[a], nbrs[b] = nbrs.get(a, 0) + 1, nbrs.get(b, 0) + 1
    pairs = [(a, b) for a, b in sorted(link) if nbrs[a] == 1 and nbrs[b] == 1 and ends_of[a] and ends_of[b]]
    paired = {x for ab in pairs for x in ab}
    cycles = [(ends_of[g], None) for g in range(len(chosen)) if g not in paired]
    cycles += [(ends_of[a] + ends_of[b], (len(ends_of[a]), math.fsum(tensors[ti][2] for ti in link[(a, b)])))
               for a, b in pairs]
    found = []
    for ends, pair in cycles:
        m = len(ends)
        if m < 2:
            continue
        if m == 2:
            (s1, u, e1), (s2, v, e2) = ends
            edges = [(u, v, min(s1 - e1, s2 - e2, math.inf if pair is None else pair[1]))]
        else:
            # a cycle through the inputs, then the outputs (of each member of a pair in turn)
            w = [0.5 * min(ends[j][0], ends[(j + 1) % m][0]) for j in range(m)]
            if pair is not None:  # the two edges between the members: half the tensors between them each
                k, between = pair
                w[k - 1], w[m - 1] = min(w[k - 1], 0.5 * between), min(w[m - 1], 0.5 * between)
            for j in range(m):
                # a glued end's two edges share ``s - e`` (the glue is paid where its orphan is not
                # with it): the one from the end before it (the last output, where the glued end is
                # the first input) at its full half-weight first, the one to the end after it the rest
                if ends[j][2] > 0.0:
                    budget = max(ends[j][0] - ends[j][2], 0.0)  # (a glue past s: _enclosed)
                    w[j - 1] = min(w[j - 1], budget)
                    w[j] = min(w[j], budget - w[j - 1])
            edges = [(ends[j][1], ends[(j + 1) % m][1], w[j]) for j in range(m)]
        for u, v, r in edges:
            if r > 0.0 and cls(u) != cls(v):
                found.append((u, v, r))
    return found


from splitopt.solvers.placement.orphans_upper import _value, hosted, mirrored, place  # noqa: E402,F401

__all__ = ["without", "attached", "hosted", "mirrored", "place"]
