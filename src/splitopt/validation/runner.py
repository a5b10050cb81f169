"""The batch runner: a set's members through the harness on local processes or a Dask cluster.

Backends:

* ``jobs=1`` (default): in this process, one member after the other;
* ``jobs=N``: a local process pool (``concurrent.futures.ProcessPoolExecutor``; start method from
  :func:`default_start_method`: ``fork`` in a single-threaded process, else ``forkserver``); the
  workers and the forkserver die with the driver even when it is killed with SIGKILL
  (:mod:`splitopt.validation.lifeline`);
* ``scheduler="tcp://HOST:8786"``: an existing Dask distributed cluster (``pip install
  'splitopt[distributed]'``; splitopt and every family module must be importable on the workers);
* ``dask_local=N``: a Dask ``LocalCluster`` with N single-threaded workers (processes unless
  ``dask_processes=False``). Threaded workers share one interpreter: solver paths that are not
  thread-safe can fail there (Pyomo's ``tee``/``capture_output`` used by ``appsi_*`` solvers
  redirects process-wide file descriptors and can deadlock; a first-use race in Pyomo's standard
  form compiler is primed away by :func:`~splitopt.validation.harness.prime_for_threads`).
  Prefer processes for real runs.

Only the driver (this process) writes to the results store: workers return rows and each finished
task's rows are committed at once (see :mod:`splitopt.validation.store`). Members whose rows are
already stored for this solver and package version are skipped before anything is shipped; a
member whose exact solve is stored but some algorithm is missing is shipped with the stored exact
facts, so the exact formulation is never solved twice. If a pool worker process dies (segfault,
out of memory), the tasks that were in flight are re-run one at a time in a fresh pool; the one
that kills its worker again is recorded as a ``<crash>`` error, the others complete.

Progress is one plain-text line on stderr (done/total, failures, tasks per second, ETA).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
import uuid
from collections import deque
from typing import Callable, Iterable, Sequence

from splitopt import families
from splitopt.errors import InstanceError
from splitopt.instances.sets import InstanceSet, Member, get_set
from splitopt.validation.harness import LOAD, Task, _version, error_rows, prime_for_threads, run_task
from splitopt.validation.store import ResultStore, open_store

#: pseudo-algorithms recording that a whole member failed (a re-run skips such a member)
MEMBER_FAILURES = frozenset({LOAD, "<harness>", "<crash>"})
FAILED_OUTCOMES = frozenset({"error", "timeout"})


class Progress:
    """Progress of a batch run through ``tqdm``: done/total, failures, rate and ETA, redrawn in place
    on a terminal. When the stream is not a terminal the bar is silent and one summary line
    (``validate: 6/6 tasks, 0 failed, 3.4/s``) is written at the end."""

    def __init__(self, total: int, enabled: bool = True, stream=None, label: str = "validate"):
        from tqdm import tqdm

        self.total, self.enabled, self.label = total, enabled, label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = self.failed = 0
        self.t0 = time.perf_counter()
        self.bar = tqdm(total=total, desc=label, unit="task", file=self.stream, disable=not (enabled and self.tty),
                        dynamic_ncols=True, postfix={"failed": 0})

    def line(self) -> str:
        el = time.perf_counter() - self.t0
        rate = self.done / el if el > 0 else 0.0
        return f"{self.label}: {self.done}/{self.total} tasks, {self.failed} failed, {rate:.1f}/s"

    def update(self, failed: bool = False) -> None:
        self.done += 1
        if failed:
            self.failed += 1
            self.bar.set_postfix(failed=self.failed, refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()
        if self.enabled and not self.tty:
            self.stream.write(self.line() + "\n")
            self.stream.flush()


def _family_imports() -> tuple[str, ...]:
    """Modules to import in workers so that families registered here (not built in) exist there."""
    builtin_mods = set(families.BUILTIN.values())
    mods = []
    for name in families.family_names():
        if name in families.BUILTIN:
            continue
        try:
            fam = families.get_family(name)
        except Exception:
            continue
        mod = getattr(fam.evaluate, "__module__", None)
        if mod and mod != "__main__" and mod not in builtin_mods and mod not in mods:
            mods.append(mod)
    return tuple(mods)


def _parse_algorithms(algorithms: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if algorithms is None:
        return None
    if isinstance(algorithms, str):
        algorithms = [a.strip() for a in algorithms.split(",")]
    out = tuple(a for a in algorithms if a)
    return out or None


def _check_algorithms(algorithms: tuple[str, ...] | None, family_names: Iterable[str]) -> None:
    if algorithms is None:
        return
    known: set[str] = set()
    for name in family_names:
        try:
            known |= set(families.get_family(name).algorithms)
        except Exception:
            continue
    unknown = [a for a in algorithms if a not in known]
    if unknown and known:
        raise InstanceError("algorithms", f"unknown algorithm(s) {', '.join(map(repr, unknown))} "
                                          f"(known: {', '.join(sorted(known))})")


def plan_tasks(members: Iterable[Member], algorithms: tuple[str, ...] | None, solver: str,
               time_limit: float | None, done: dict[str, dict], set_name: str = "", run_id: str = "",
               imports: tuple[str, ...] = ()) -> tuple[list[Task], int]:
    """Tasks still to do, and how many members were skipped as already done."""
    tasks, skipped = [], 0
    for m in members:
        d = done.get(m.key)
        have = set(d["algorithms"]) if d else set()
        if have & MEMBER_FAILURES:
            skipped += 1
            continue
        reference = None
        fam_name = m.family or (d.get("family") if d else None)  # file members: family from stored rows
        if fam_name is not None and have:
            try:
                fam = families.get_family(fam_name)
            except Exception:
                fam = None
            if fam is not None:
                wanted = list(fam.algorithms) if algorithms is None else [a for a in algorithms if a in fam.algorithms]
                # a family with per-instance references (Family.reference_for): the stored reference row counts
                ref_need = {fam.reference_algorithm} if fam.reference_for is None else (
                    set() if d.get("reference") is not None else {"(reference)"})
                needed = (ref_need | set(wanted)) - have
                if not needed:
                    skipped += 1
                    continue
        if d and d.get("reference") is not None:
            reference = d["reference"]
        tasks.append(Task(m, set_name, algorithms, frozenset(have), solver, time_limit, reference, imports, run_id))
    return tasks, skipped


# ----------------------------------------------------------------------------------------------
# backends: each calls on_result(task, rows) in the driver as tasks finish


def _run_serial(tasks: Sequence[Task], on_result: Callable[[Task, list], None]) -> None:
    for t in tasks:
        on_result(t, run_task(t))


def default_start_method() -> str:
    """``fork`` when this process has a single thread (fast; workers inherit every registered
    family), else ``forkserver`` (forking a multi-threaded process can deadlock the child on a
    lock another thread held), else ``spawn``. Under ``forkserver``/``spawn`` workers import the
    modules of non-built-in families (:attr:`Task.imports`) before running a task."""
    import threading

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _run_pool(tasks: Sequence[Task], jobs: int, on_result: Callable[[Task, list], None],
              mp_context: str | None = None, max_in_flight: int | None = None) -> None:
    """Local process pool. When a worker process dies (the pool breaks), every task that was in
    flight becomes a suspect and is re-run alone in a fresh pool: a suspect that breaks the pool
    while alone is the culprit and gets a ``<crash>`` row; the others complete normally."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    from splitopt.validation.lifeline import die_with_parent, pool_context

    def new_pool() -> ProcessPoolExecutor:
        # workers (and the forkserver) die with this process, even when it is killed (issue 21)
        return ProcessPoolExecutor(max_workers=jobs, mp_context=pool_context(mp_context or default_start_method()),
                                   initializer=die_with_parent, initargs=(os.getpid(),))

    limit = max_in_flight or 4 * jobs
    pending = deque(tasks)
    suspects: deque = deque()
    in_flight: dict = {}  # future -> (task, ran alone)
    ex = new_pool()
    try:
        while pending or suspects or in_flight:
            if suspects:
                if not in_flight:
                    t = suspects.popleft()
                    in_flight[ex.submit(run_task, t)] = (t, True)
            else:
                while pending and len(in_flight) < limit:
                    t = pending.popleft()
                    in_flight[ex.submit(run_task, t)] = (t, False)
            finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            broken = None
            for f in finished:
                t, alone = in_flight.pop(f)
                try:
                    rows = f.result()
                except BrokenProcessPool as exc:
                    broken = exc
                    if alone:
                        on_result(t, error_rows(t, "worker process died while running this member "
                                                   f"({type(exc).__name__}: {exc})", algorithm="<crash>"))
                    else:
                        suspects.append(t)
                    continue
                except Exception as exc:  # e.g. unpicklable result
                    rows = error_rows(t, f"task failed in the pool: {type(exc).__name__}: {exc}", algorithm="<harness>")
                on_result(t, rows)
            if broken is not None:
                suspects.extend(t for t, _ in in_flight.values())
                in_flight.clear()
                ex.shutdown(wait=True, cancel_futures=True)  # no executor thread alive at the next fork
                ex = new_pool()
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def _run_dask(tasks: Sequence[Task], on_result: Callable[[Task, list], None], scheduler: str | None,
              dask_local: int | None, dask_processes: bool = True, max_in_flight: int | None = None) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ImportError("Dask backends need the 'distributed' package: pip install 'splitopt[distributed]'") from None
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=int(dask_local), threads_per_worker=1, processes=dask_processes,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        prime_for_threads()  # threaded workers in this process (processes=False)
        try:
            client.run(prime_for_threads)  # multi-threaded remote workers
        except Exception:
            pass
        n_workers = max(1, len(client.scheduler_info().get("workers", {})) or int(dask_local or 1))
        limit = max_in_flight or 4 * n_workers
        pending = deque(tasks)
        owner: dict = {}

        def submit():
            t = pending.popleft()
            f = client.submit(run_task, t, pure=False)
            owner[f.key] = t
            return f

        first = [submit() for _ in range(min(limit, len(pending)))]
        ac = as_completed(first)
        for f in ac:
            t = owner.pop(f.key)
            try:
                rows = f.result()
            except Exception as exc:  # worker lost, unpicklable, ...
                rows = error_rows(t, f"task failed on the Dask cluster: {type(exc).__name__}: {exc}",
                                  algorithm="<crash>")
            on_result(t, rows)
            f.release()
            if pending:
                ac.add(submit())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


# ----------------------------------------------------------------------------------------------


def run_validation(set_name_or_dir: "str | os.PathLike | InstanceSet", algorithms: str | Sequence[str] | None = None,
                   solver: str = "highs", jobs: int = 1, store: "str | os.PathLike | ResultStore | None" = None,
                   scheduler: str | None = None, dask_local: int | None = None, time_limit: float | None = None,
                   progress: bool = True, *, dask_processes: bool = True, mp_context: str | None = None,
                   max_in_flight: int | None = None, redo: bool = False, stream=None):
    """Validate every member of a set and return the summary table (see
    :func:`splitopt.validation.report.summary_table`) over this set's rows.

    ``algorithms``: names (list or comma-separated string); ``None`` runs every algorithm of each
    member's family. The exact formulation (``reference_algorithm``) always runs. ``store``: path
    of the SQLite results store (``None``: in memory, nothing kept). ``redo=True`` ignores stored
    rows and runs everything again (rows are replaced). Notes about skipped families go to stderr
    and into ``summary.attrs["notes"]``; ``summary.attrs`` also holds ``tasks``, ``skipped``,
    ``seconds``, ``failed``, ``store``.
    """
    from splitopt.validation.report import summary_table

    if jobs is None or int(jobs) < 1:
        raise InstanceError("jobs", f"must be >= 1, got {jobs!r}")
    if time_limit is not None and not time_limit > 0:
        raise InstanceError("time_limit", f"must be > 0 seconds, got {time_limit!r}")
    if dask_local is not None and int(dask_local) < 1:
        raise InstanceError("dask_local", f"must be >= 1 workers, got {dask_local!r}")
    from splitopt.solvers.exact import check_solver

    check_solver(solver)  # an unknown or missing solver is one clear error, not one error row per member
    iset = get_set(set_name_or_dir)
    algos = _parse_algorithms(algorithms)
    members = list(iset.members())
    err = stream if stream is not None else sys.stderr
    for note in iset.notes:
        if progress:
            err.write(f"note: {note}\n")
    fam_names = {m.family for m in members if m.family} or set(families.family_names())
    _check_algorithms(algos, fam_names)

    st = open_store(store)
    try:
        version = _version()
        done = {} if redo else st.done(solver, version)
        run_id = uuid.uuid4().hex[:12]
        tasks, skipped = plan_tasks(members, algos, solver, time_limit, done, iset.name, run_id, _family_imports())
        if redo:
            tasks = [Task(t.member, t.set_name, t.algorithms, frozenset(), t.solver, t.time_limit, None, t.imports,
                          t.run_id) for t in tasks]
        if progress and skipped:
            err.write(f"note: {skipped} member(s) already done in the store, skipped\n")
        bar = Progress(len(tasks), enabled=progress, stream=err)
        failed = 0

        def on_result(task: Task, rows: list) -> None:
            nonlocal failed
            st.add(rows)
            bad = any(r.get("outcome") in FAILED_OUTCOMES for r in rows)
            failed += bad
            bar.update(bad)

        t0 = time.perf_counter()
        try:
            if scheduler or dask_local:
                _run_dask(tasks, on_result, scheduler, dask_local, dask_processes, max_in_flight)
            elif int(jobs) > 1 and len(tasks) > 1:
                _run_pool(tasks, int(jobs), on_result, mp_context, max_in_flight)
            else:
                _run_serial(tasks, on_result)
        finally:
            bar.close()
        seconds = time.perf_counter() - t0
        keys = {m.key for m in members}
        df = st.to_dataframe(solver=solver, version=version)
        df = df[df["member_key"].isin(keys)]
        summary = summary_table(df)
        summary.attrs.update(notes=list(iset.notes), tasks=len(tasks), skipped=skipped, seconds=seconds,
                             failed=failed, store=st.path, set=iset.name, run_id=run_id)
        return summary
    finally:
        if not isinstance(store, ResultStore):
            st.close()


__all__ = ["run_validation", "plan_tasks", "Progress", "MEMBER_FAILURES", "default_start_method"]
