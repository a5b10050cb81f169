"""Discrete-event simulation of the micro-batch schedule of a ``pipeline`` solution, and its
timeline (Gantt chart).

Seed 001 (Wei et al., arXiv:2505.04368), Eq. (14): ``L = T_f + ceil((B - b) / b) T_i``, the
makespan of a flow shop with ``ceil(B / b)`` identical jobs **only if every stage is its own
resource** (digest §2.3, §7.1 #8). This module checks that claim independently: it runs the
``ceil(B / b)`` micro-batches (every one of ``b`` samples, as Eq. 14 charges a short last one in
full) forward through the chain of stages and back, each stage a resource serving one
micro-batch at a time, and measures the makespan.

Operations of one micro-batch (stage times from the evaluator's own items,
:func:`splitopt.models.pipeline.stage_items`): the client FP stage (one task per client on that
client, in parallel: compute plus upload), the clients' relayed hops, then per server block its
FP compute and the forward hops of the next transfer; then backward in reverse: the last block's
BP, the gradient hops, ..., the clients' relayed hops, the client BP stage (compute plus
download). Resources are the evaluator's grouping keys, so the simulation follows the instance's
semantics:

* ``bottleneck="stages"``: every FP compute, BP compute, forward hop and backward hop is its own
  resource (per node or per directed link under ``aggregate``); each client has an FP and a BP
  resource. Under ``distinct`` and ``revisit`` this is a flow shop and the simulated makespan
  equals the closed form exactly (tested on every test instance); under ``aggregate`` a node's
  blocks share one resource (a re-entrant line) and the closed form is only an estimate.
* ``bottleneck="resource"``: a block's FP and BP share its GPU, a hop's two directions share the
  link, a client's FP and BP share the client. The schedule then matters (``policy``):
  ``"1f1b"`` (PipeDream-style one-forward-one-backward: backward tasks first, and at most
  ``K' - s`` micro-batches in flight at chain position ``s``), ``"gpipe"`` (all forwards, a
  flush, then all backwards) or ``"fifo"`` (first come, first served). These are the real 1F1B
  and GPipe makespans the closed form ``T_f + xi max(F + B)`` approximates (digest §7.1 #8).

# interface

:func:`simulate` ``(instance, assignment, policy=None) -> Schedule`` (``makespan``, ``tasks``,
``closed_form``); :func:`plot_timeline` ``(instance, assignment | Schedule, ax=None, path=None)``
draws one row per resource, one bar per task (colour = micro-batch, hatched = backward).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from splitopt.errors import InstanceError
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import check_assignment, evaluate_plan, stage_items

POLICIES = ("fifo", "1f1b", "gpipe")


@dataclass(frozen=True)
class Task:
    job: int  # micro-batch index
    op: int  # operation index in the micro-batch's chain
    label: str
    resource: str
    backward: bool
    start: float
    end: float


@dataclass
class Schedule:
    makespan: float
    tasks: list[Task]
    closed_form: float
    policy: str
    micro_batches: int
    resources: list[str] = field(default_factory=list)


def _ops(instance: PipelineInstance, plan):
    """The chain of operations of one micro-batch: ``[(label, backward, position, [(resource,
    seconds), ...])]`` (parallel tasks within an operation)."""
    res = instance.bottleneck == "resource"
    Fc, Bc, items = stage_items(instance, plan)
    names = instance.clients

    seen: dict = {}

    def key(k, lab):
        # a readable resource name: the first stage label of that resource (under ``resource`` the
        # FP/BP prefix goes, as both directions share it)
        if k not in seen:
            name = lab.replace("link FP ", "link ").replace("link BP ", "link ") if res else lab
            if res:
                name = name.replace("FP ", "GPU ", 1).replace("BP ", "GPU ", 1)
            seen[k] = name
        return seen[k]

    cF = [(f"client {names[m]}" if res else f"client {names[m]} FP", Fc[m]) for m in range(len(Fc))]
    cB = [(f"client {names[m]}" if res else f"client {names[m]} BP", Bc[m]) for m in range(len(Bc))]
    fwd = [("client FP", False, 0, cF)]
    bwd = []
    pos = 0
    for lab, t, ks, kr in items:
        r = key(kr if res else ks, lab)
        is_bwd = lab.startswith("BP") or lab.startswith("link BP")
        if lab.startswith("FP"):
            pos += 1
        # a block's BP belongs to the position of its FP; hops to the position before the next block
        (bwd if is_bwd else fwd).append((lab, is_bwd, pos, [(r, t)]))
    ops = fwd + bwd[::-1] + [("client BP", True, 0, cB)]
    return ops


def simulate(instance: PipelineInstance, assignment: Any, policy: str | None = None) -> Schedule:
    """Simulate every micro-batch of ``assignment`` (see the module docstring). ``policy``
    defaults to ``"fifo"`` under ``bottleneck="stages"`` and ``"1f1b"`` under ``"resource"``."""
    if policy is None:
        policy = "fifo" if instance.bottleneck == "stages" else "1f1b"
    if policy not in POLICIES:
        raise InstanceError("policy", f"must be one of {', '.join(POLICIES)}, got {policy!r}")
    plan = check_assignment(instance, assignment)
    closed = evaluate_plan(instance, plan)[0]
    ops = _ops(instance, plan)
    n_jobs = -(-instance.batch // plan.b)
    K = len(plan.servers) + 1
    n_fwd = sum(1 for o in ops if not o[1])
    resources: list[str] = []
    for o in ops:
        for r, _t in o[3]:
            if r not in resources:
                resources.append(r)
    # state
    ready: dict[str, list] = {r: [] for r in resources}  # heap of (priority, job, op, sub)
    busy: dict[str, bool] = {r: False for r in resources}
    pending = [0] * n_jobs  # unfinished tasks of the current op of each job
    in_flight = {}  # position -> micro-batches past its FP and not yet past its BP (1f1b)
    fwd_done = [0]
    tasks: list[Task] = []
    events: list = []  # (time, seq, resource, job, op)
    seq = [0]

    def prio(job, op):
        bw = ops[op][1]
        if policy == "1f1b":
            return (0 if bw else 1, job, op)
        if policy == "gpipe":
            return (1 if bw else 0, job, op)
        return (job, op)

    def release(job, op, now):
        label, bw, pos, subs = ops[op]
        pending[job] = len(subs)
        for j, (r, t) in enumerate(subs):
            heapq.heappush(ready[r], (prio(job, op), job, op, j))

    def admissible(job, op):
        label, bw, pos, subs = ops[op]
        if policy == "gpipe" and bw and fwd_done[0] < n_jobs:
            return False
        if policy == "1f1b" and not bw and label.startswith("FP"):
            return in_flight.get(pos, 0) < max(1, K - pos)
        return True

    def dispatch(now):
        for r in resources:
            if busy[r] or not ready[r]:
                continue
            skipped = []
            chosen = None
            while ready[r]:
                item = heapq.heappop(ready[r])
                if admissible(item[1], item[2]):
                    chosen = item
                    break
                skipped.append(item)
            for it in skipped:
                heapq.heappush(ready[r], it)
            if chosen is None:
                continue
            _p, job, op, j = chosen
            label, bw, pos, subs = ops[op]
            if policy == "1f1b" and not bw and label.startswith("FP"):
                in_flight[pos] = in_flight.get(pos, 0) + 1
            t = subs[j][1]
            busy[r] = True
            tasks.append(Task(job, op, label, r, bw, now, now + t))
            seq[0] += 1
            heapq.heappush(events, (now + t, seq[0], r, job, op))

    for job in range(n_jobs):
        release(job, 0, 0.0)
    now = 0.0
    dispatch(now)
    def finish(now):
        """Complete the earliest event; a job whose last sub-task ends moves to its next operation."""
        _t, _s, r, job, op = heapq.heappop(events)
        busy[r] = False
        pending[job] -= 1
        if pending[job] == 0:
            label, bw, pos, subs = ops[op]
            if policy == "1f1b" and bw and label.startswith("BP"):
                in_flight[pos] -= 1
            if op + 1 == n_fwd:
                fwd_done[0] += 1
            if op + 1 < len(ops):
                release(job, op + 1, now)

    while events:
        now = events[0][0]
        # finish every event at the same instant before dispatching (ties)
        while events and events[0][0] == now:
            finish(now)
        dispatch(now)
    if any(ready[r] for r in resources):
        raise RuntimeError("pipeline simulation deadlocked (a bug: every policy admits some task)")
    makespan = max(t.end for t in tasks)
    return Schedule(makespan, tasks, closed, policy, n_jobs, resources)


def plot_timeline(instance: PipelineInstance, solution: Any, *, policy: str | None = None, ax=None,
                  path: str | None = None, max_jobs: int | None = None):
    """Gantt chart of a schedule (or of the simulation of an assignment): one row per resource,
    one bar per task, colour by micro-batch, backward tasks hatched. Returns the axes; saves to
    ``path`` when given."""
    import matplotlib

    if path is not None and ax is None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    sched = solution if isinstance(solution, Schedule) else simulate(instance, solution, policy)
    if ax is None:
        fig, ax = plt.subplots(figsize=(11, 0.35 * len(sched.resources) + 1.5))
    rows = {r: i for i, r in enumerate(sched.resources)}
    cmap = plt.get_cmap("tab20")
    for t in sched.tasks:
        if max_jobs is not None and t.job >= max_jobs:
            continue
        if t.end <= t.start:
            continue
        ax.broken_barh([(t.start, t.end - t.start)], (rows[t.resource] - 0.4, 0.8), facecolors=cmap(t.job % 20),
                       edgecolor="black", linewidth=0.3, hatch="//" if t.backward else None)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(list(rows), fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time (s)")
    ax.set_title(f"{instance.name}: {sched.micro_batches} micro-batches, policy {sched.policy}, makespan "
                 f"{sched.makespan:.4g} s (closed form {sched.closed_form:.4g} s)", fontsize=9)
    if path is not None:
        ax.figure.tight_layout()
        ax.figure.savefig(path, dpi=120)
    return ax


__all__ = ["simulate", "plot_timeline", "Schedule", "Task", "POLICIES"]
