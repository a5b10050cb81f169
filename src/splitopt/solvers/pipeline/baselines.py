"""The baselines of seed 001 (Wei et al., arXiv:2505.04368, Section VI; digest §5.3).

* :func:`rc_op` **RC + OP** (random cut, optimal placement): the number of server blocks and the
  cut layers are drawn at random (``seed``); the placement and ``b`` are then optimal for those
  cuts (the exact search of :mod:`.shortest_path` on the DAG restricted to the drawn blocks).
* :func:`rp_oc` **RP + OC** (random placement, optimal cut): a random order of the servers is
  drawn; the ``j``-th server block must sit on the ``j``-th server of that order (any number of
  blocks); the cuts and ``b`` are then optimal for it.
* :func:`no_pipeline` **No Pipeline**: the mini-batch is not divided (``b = B``, so ``xi = 0``
  and ``L = T_f``); cuts and placement optimal. The paper reports it needs about 3x-7x the
  training time of its scheme (digest §6.3).

"Optimal" uses the corrected exact search, not the paper's Algorithm 1 (digest §3.3 lists its
errors), so the baselines differ from the proposed scheme only in what they fix. The paper does
not say how the random cut or placement is drawn; the draws here are uniform (number of blocks,
then cut set; a uniform permutation of the servers). A draw that admits no feasible plan
(memory, topology) is redrawn, up to ``tries`` times.
"""

from __future__ import annotations

import numpy as np

from splitopt.errors import InstanceError
from splitopt.families import AlgoResult
from splitopt.instances.pipeline import PipelineInstance
from splitopt.solvers.deadline import Deadline
from splitopt.solvers.pipeline import shortest_path
from splitopt.solvers.pipeline.graph import INF


def _max_blocks(instance: PipelineInstance) -> int:
    P = instance.n_layers - 1
    if instance.max_submodels is not None:
        P = min(P, instance.max_submodels - 1)
    if instance.placement == "distinct":
        P = min(P, instance.n_servers)
    return P


def _run(instance, restrict, what: str, info: dict, dl: Deadline) -> AlgoResult:
    res = shortest_path.solve(instance, restrict=restrict, time_limit=dl.remaining())
    # optimal for the fixed part only: a heuristic answer for the instance (no bound); cut short by
    # the time limit: the best plan the search found for the fixed part
    return AlgoResult(res.assignment, status="time_limit" if res.status == "time_limit" else "ok", bound=None,
                      info={**info, **dict(res.info)})


def rc_op(instance: PipelineInstance, *, seed: int = 0, tries: int = 20, time_limit: float | None = None) -> AlgoResult:
    """RC + OP: random cuts, optimal placement and ``b`` for them (``time_limit``: the exact search
    of each draw gets the time left, see :func:`.shortest_path.solve`)."""
    dl = Deadline(time_limit)
    rng = np.random.default_rng([seed, 2001])
    I = instance.n_layers
    for t in range(tries):
        if t and dl.over():
            raise dl.no_answer(f" (RC+OP: the {t} cut sets drawn admit no feasible plan)")
        P = int(rng.integers(1, _max_blocks(instance) + 1))
        cuts = tuple(sorted(int(c) for c in rng.choice(np.arange(1, I), size=P, replace=False)))
        ends = (*cuts, I)
        allowed = {(ends[j], ends[j + 1]) for j in range(P)}

        def restrict(W, cuts=cuts, allowed=allowed):
            keep = np.zeros(W.blk_a.shape[2:], dtype=bool)
            for lo, hi in allowed:
                keep[lo, hi] = True
            W.blk_a[:, :, ~keep] = INF
            W.blk_b[:, :, ~keep] = INF
            cl = np.zeros(W.cl_a.shape[1], dtype=bool)
            cl[cuts[0]] = True
            W.cl_a[:, ~cl, :] = INF
            W.cl_b[:, ~cl, :] = INF

        try:
            return _run(instance, restrict, "rc_op", {"random_cuts": list(cuts)}, dl)
        except InstanceError:
            continue
    raise InstanceError("instance", f"RC+OP: no feasible placement for {tries} random cut sets")


def rp_oc(instance: PipelineInstance, *, seed: int = 0, tries: int = 20, time_limit: float | None = None) -> AlgoResult:
    """RP + OC: a random server order, optimal cuts and ``b`` for it (``time_limit`` as for
    :func:`rc_op`)."""
    dl = Deadline(time_limit)
    rng = np.random.default_rng([seed, 2002])
    N = instance.n_servers
    for t in range(tries):
        if t and dl.over():
            raise dl.no_answer(f" (RP+OC: the {t} server orders drawn admit no feasible plan)")
        order = [int(s) for s in rng.permutation(N)]

        def restrict(W, order=order):
            W.cl_a[:, :, [s for s in range(N) if s != order[0]]] = INF
            W.cl_b[:, :, [s for s in range(N) if s != order[0]]] = INF
            keep = np.zeros((N, N), dtype=bool)
            for a, c in zip(order, order[1:]):
                keep[a, c] = True
            W.tr_a[:, ~keep] = INF
            W.tr_b[:, ~keep] = INF

        try:
            return _run(instance, restrict, "rp_oc", {"random_order": [instance.servers[s] for s in order]}, dl)
        except InstanceError:
            continue
    raise InstanceError("instance", f"RP+OC: no feasible cut for {tries} random server orders")


def no_pipeline(instance: PipelineInstance, time_limit: float | None = None) -> AlgoResult:
    """No Pipeline: ``b = B`` (one micro-batch), optimal cuts and placement (``time_limit``: that
    of the exact search at ``b = B``)."""
    B = instance.batch
    if B not in instance.allowed_b():
        raise InstanceError("micro_batches", f"No Pipeline needs b = B = {B}, which this instance does not allow")
    res = shortest_path.solve(instance, b=B, time_limit=time_limit)
    return AlgoResult(res.assignment, status="time_limit" if res.status == "time_limit" else "ok", bound=None,
                      info=dict(res.info))


__all__ = ["rc_op", "rp_oc", "no_pipeline"]
