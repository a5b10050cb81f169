"""``auto``: the ``split`` family's default algorithm (issue 21 §2, DESIGN.md "auto").

The rule, in order; each step starts from the best incumbent and the strongest bound of the steps
before it and stops as soon as the two agree (relative :data:`CERT_REL`):

0. **Start** (O(L), always): the better of the two trivial feasible splits (server-only with the
   pinned layers and their ancestors; device-only except the server pins and their descendants),
   scored by the evaluator, and the trivial bound ``sum_v min(dev_v, srv_v)`` (every layer is paid
   on one side, tensors cost >= 0). A run stopped by its limit at any later point still answers.
1. **Chain** (the graph is a chain): the O(L) prefix scan of :mod:`.chain` (seed 000 Sec. IV /
   seed 002 §5, Neurosurgeon style) with a proven bound: the prefix costs are sums of at most
   ``L + 2`` non-negative doubles, so each computed cost is within a factor ``1 + gamma`` of the true
   one, ``gamma = (L + 2) u / (1 - (L + 2) u)``, ``u = 2^-53`` (Higham, *Accuracy and Stability of
   Numerical Algorithms*, 2nd ed., Eq. 4.4 for recursive summation); ``min_p cost_p / (1 + gamma)``
   rounded down is a lower bound on every split. With ``L = 100,000`` the gap is about 1e-11, so a
   chain is proven optimal here in one pass.
2. **DAG, or a chain whose scan did not close the gap**: the certified min cut of
   :mod:`.mincut` (seed 000 Alg. 2 / seed 002 Steps 1-5, corrected; :mod:`splitopt.solvers.flow`),
   whose lower bound is a proof at double-precision level. This is what scales: 4 s for a
   100,000-layer DAG on the benchmark machine, where the MILP does not finish in 60 s
   (``benchmarks/results/split_scale.md``). Under a time limit on a large graph (more than
   :data:`ISOLATE_ABOVE` layers plus edges) the cut runs in a forked child that is killed at the
   limit (scipy's max-flow cannot be interrupted).
3. **Fallback** (the cut's certificate short of :data:`CERT_REL`, never seen in the tests): the LP
   relaxation of the MILP (integral: totally unimodular, digest 002 §8.3) with its exact dual
   certificate (:mod:`.milp`), within what is left of the time limit.

Status: ``optimal`` when incumbent and bound agree within :data:`CERT_REL`; ``time_limit`` when the
limit stopped the rule first (with the bound so far); otherwise ``feasible``. ``info["steps"]`` lists
the steps run.
"""

from __future__ import annotations

import math
import os
import pickle
import select
import signal
import time

import numpy as np

from splitopt.families import AlgoResult
from splitopt.instances.split import SplitInstance
from splitopt.models.split import evaluate
from splitopt.solvers.deadline import Deadline

CERT_REL = 1e-9
#: graphs with more layers plus edges than this run the min cut in a killable child under a limit
ISOLATE_ABOVE = 50_000
_U = 2.0 ** -53


def chain_certified(instance: SplitInstance) -> tuple[int, float, float]:
    """``(p, cost, bound)`` of the prefix scan on a chain: the best prefix ``p``, its exact cost
    (``math.fsum``) and a proven lower bound on every split (see step 1 of the module docstring)."""
    from splitopt.solvers.split.chain import best_prefix, prefix_costs

    costs = prefix_costs(instance)
    p, val = best_prefix(instance)
    k = instance.n_layers + 2
    gamma = k * _U / (1.0 - k * _U)
    lo = float(np.min(costs)) / (1.0 + gamma)
    lo = math.nextafter(lo, -math.inf) if lo > 0 else lo
    return p, val, max(min(lo, val), 0.0)


def _cut(instance: SplitInstance):
    from splitopt.solvers.split import mincut

    r = mincut.solve_detailed(instance)
    return r.mask, r.lower_bound


def run_killable(fn, args: tuple, seconds: float):
    """``fn(*args)`` in a forked child, its pickled result returned; ``None`` if it did not finish
    within ``seconds`` (the child is killed). Where ``fork`` does not exist, ``fn`` runs here."""
    if not hasattr(os, "fork"):
        return fn(*args)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: compute, send, leave without running any clean-up of the parent's
        code = 0
        try:
            os.close(rfd)
            try:
                data = pickle.dumps(("ok", fn(*args)), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                data = pickle.dumps(("error", exc))
            view = memoryview(data)
            while view:
                view = view[os.write(wfd, view):]
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    chunks, end = [], time.monotonic() + max(seconds, 0.0)
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([rfd], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                return None
            chunk = os.read(rfd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except BaseException:  # a hard time-out of the caller: never leave the child behind
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raise
    finally:
        os.close(rfd)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:  # pragma: no cover
            pass
    if not chunks:
        raise RuntimeError("the min-cut child process ended without an answer")
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "error":
        raise value
    return value


def solve(instance: SplitInstance, time_limit: float | None = None) -> AlgoResult:
    """The rule of the module docstring: an optimal split with its proof, or within ``time_limit``
    the best split and bound found so far."""
    from splitopt.solvers.split import milp

    dl = Deadline(time_limit)
    g = instance.graph
    best_names, best = milp.start_split(instance)
    bound = milp.trivial_bound(instance)
    steps = ["start"]

    def offer(names, lb):
        nonlocal best_names, best, bound
        if names is not None:
            val = evaluate(instance, names)[0]
            if val < best:
                best_names, best = names, val
        if lb is not None and math.isfinite(lb):
            bound = max(bound, min(lb, best))

    def closed() -> bool:
        return best - bound <= CERT_REL * max(abs(best), abs(bound))

    def answer(status: str | None = None) -> AlgoResult:
        st = "optimal" if closed() else (status or "feasible")
        return AlgoResult(best_names, status=st, bound=min(bound, best),
                          info={"steps": steps, "gap": best - bound})

    if closed():  # e.g. every layer pinned
        return answer()
    if g.is_chain():
        steps.append("chain")
        p, _val, lb = chain_certified(instance)
        offer(sorted(g.layers[i].name for i in range(p)), lb)
        if closed():
            return answer()
    if dl.over():
        return answer("time_limit")
    steps.append("mincut")
    big = len(g) + len(g.edges) > ISOLATE_ABOVE
    if time_limit is not None and big:
        got = run_killable(_cut, (instance,), dl.remaining())
    else:
        got = _cut(instance)
    if got is None:
        return answer("time_limit")
    mask, lb = got
    offer(instance.names_of(mask), lb)
    if closed() or dl.over():
        return answer("time_limit")
    steps.append("lp")
    r = milp.solve_lp(instance, time_limit=dl.remaining())
    offer(r.assignment, r.info.get("certified_bound"))  # exact weak duality, whatever the status
    return answer("time_limit" if dl.over() else None)


__all__ = ["solve", "chain_certified", "run_killable", "CERT_REL"]
