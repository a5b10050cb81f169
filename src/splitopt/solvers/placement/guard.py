"""Placement work in a child process that is stopped at a hard deadline (issue 22: every algorithm
keeps its limit at any size), and that runs beside the caller's own work on the second core.

Why a child: HiGHS checks its time limit between units of work, and on large chain models some of
them are long: the chain MILP of a 591-node GNMT-like training graph (23,909 rows) ran 91 s with a
40 s limit, and ``cancelSolve`` (HiGHS's user interrupt) took 65 s to be noticed. A child process can
be stopped at any moment. A stopped child sends nothing: the caller keeps its incumbent and its own
proven bound.

:class:`Child` runs ``module:function(*args, **kwargs)`` (plain picklable data) in ``python -m
splitopt.solvers.placement.guard``, started at once and collected later, so the caller works
meanwhile (:func:`splitopt.solvers.placement.milp.solve` runs its exact pair/triple re-placement
while the MILP runs in a child; :mod:`.auto` runs the non-contiguous relaxation beside the convex
model). The child dies with its parent (Linux ``PR_SET_PDEATHSIG``,
:func:`splitopt.validation.lifeline.set_pdeathsig`). :func:`milp_job` is the job that builds and
solves the MILP.
"""

from __future__ import annotations

import time

#: the model's estimated build time (s) from which the MILP runs in a child
CHILD_FROM = 1.0
#: seconds a child takes to start (interpreter and imports) before its job begins, measured
#: 2026-11-24 on the 2-core machine under load: 1.1-1.5 s (an estimate for planning only: a job's
#: own limit is computed in the child from the wall-clock deadline, :class:`Child`)
START_SECONDS = 1.5
#: a job leaves max(RETURN_S, RETURN_SHARE x its time) between its own limit and the hard deadline,
#: for the solver's overrun and for sending its answer back
RETURN_S, RETURN_SHARE = 0.3, 0.02
#: seconds before its hard deadline at which a child is stopped, for the caller to wrap up (score
#: the answers, stop the other children): without it ``auto`` answered 10 ms after a 60 s limit
WRAP_S = 0.1


#: true in a child process of :class:`Child`: it is itself stopped at a hard deadline, so its MILP
#: runs in it (a grandchild would pay another start: the non-contiguous relaxation beside a convex
#: model got about 3 s less of HiGHS than the same MILP in a non-contiguous run, and a weaker bound)
IN_CHILD = False


def worth_it(build_seconds: float, time_limit: float | None) -> bool:
    return time_limit is not None and build_seconds >= CHILD_FROM and not IN_CHILD


def margin(seconds: float) -> float:
    """Seconds a job of ``seconds`` leaves before its hard deadline (solver overrun, answer)."""
    return max(RETURN_S, RETURN_SHARE * seconds)


#: HiGHS options of the placement MILP's *tight* re-solve (:func:`splitopt.solvers.placement.milp.solve`):
#: loads may exceed ``T`` by HiGHS's MIP feasibility tolerance (1e-6 by default, on ``T`` of about 1
#: in the model's unit), so an optimum and bound can sit up to 1e-6 (relative) below the evaluator's
#: value of the same placement, too far for a 1e-9 test of optimality (a fuzz of 80 small instances:
#: 5 such answers). Not the default: it made the seeded BERT-like 300-node non-contiguous proof miss
#: 60 s (2.6 % open; 38-40 s with the default).
HIGHS_OPTIONS = {"mip_feasibility_tolerance": 1e-9}


def solver_options(solver: str, tight: bool) -> dict | None:
    return dict(HIGHS_OPTIONS) if tight and solver == "highs" else None


def milp_job(instance, build_kw: dict, solver: str, mip_gap, tight: bool = False, time_limit=None) -> dict:
    """Build and solve the placement MILP (:func:`~splitopt.models.placement_milp.build_milp`) within
    ``time_limit`` seconds, the build included; what :func:`splitopt.solvers.placement.milp.solve`
    uses of the answer, as a dict."""
    from splitopt.models.placement_milp import assignment_from_milp, build_milp
    from splitopt.solvers import exact

    t0 = time.perf_counter()
    model = build_milp(instance, **build_kw)
    if time_limit is not None:
        time_limit = max(time_limit - (time.perf_counter() - t0), 0.05 * time_limit)
    res = exact.solve(model, solver, time_limit=time_limit, mip_gap=mip_gap, options=solver_options(solver, tight))
    a = assignment_from_milp(instance, model) if res.has_solution else None
    return {"status": res.status, "bound": res.bound, "termination": res.termination, "seconds": res.seconds,
            "message": res.message, "has_solution": res.has_solution, "assignment": a, "unit": model._unit}


def _child_main() -> None:  # pragma: no cover - runs in the child process
    import importlib
    import pickle
    import sys

    from splitopt.validation.lifeline import set_pdeathsig

    set_pdeathsig()
    # (run as ``-m``, this module is ``__main__``: the flag goes on the one the solvers import)
    importlib.import_module("splitopt.solvers.placement.guard").IN_CHILD = True
    target, args, kwargs, nice, until = pickle.load(sys.stdin.buffer)
    if until is not None:  # the job's own limit: what is left of the hard deadline, less its margin
        left = until - time.time()
        kwargs["time_limit"] = max(left - margin(left), 0.01)
    if nice:
        import os

        os.nice(nice)
    try:
        mod, fn = target.split(":")
        out = {"value": getattr(importlib.import_module(mod), fn)(*args, **kwargs)}
    except Exception as exc:  # the parent reports it as the job's failure
        out = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    sys.stdout.buffer.write(pickle.dumps(out))
    sys.stdout.buffer.flush()


class Child:
    """``target`` (``"module:function"``) called with ``args``/``kwargs`` in a child process, started
    at construction; :meth:`collect` waits for its answer. The payload goes through a temporary file,
    so starting never waits for the child's imports. ``nice``: the child's niceness increment (a
    helper that should take only the CPU time the solvers leave).

    ``seconds``: a hard deadline that many seconds from now (less :data:`WRAP_S`, the caller's
    time to wrap up). The job is then called with
    ``time_limit`` = what is left of it once the child has started, less :func:`margin` (a slow
    start costs the job, not the caller), and :meth:`collect` without a timeout waits until the
    deadline at most: the caller's own limit holds whatever the child does.

    ``publish``: the job is also called with ``publish=PATH``, a file where it writes its best
    answer so far (:meth:`latest` reads it while the job runs)."""

    def __init__(self, target: str, *args, nice: int = 0, seconds: float | None = None, publish: bool = False,
                 **kwargs):
        import os
        import pickle
        import subprocess
        import sys
        import tempfile

        self.published = None
        if publish:
            fd, self.published = tempfile.mkstemp(prefix="splitopt-", suffix=".pkl")
            os.close(fd)
            os.unlink(self.published)  # nothing published yet
            kwargs["publish"] = self.published

        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self.started = time.perf_counter()
        if seconds is not None:
            seconds = max(seconds - WRAP_S, 0.5 * seconds)
        self.until = None if seconds is None else self.started + seconds
        until = None if seconds is None else time.time() + seconds
        with tempfile.TemporaryFile() as fh:
            fh.write(pickle.dumps((target, args, kwargs, int(nice), until)))
            fh.seek(0)
            self.proc = subprocess.Popen([sys.executable, "-m", "splitopt.solvers.placement.guard"], stdin=fh,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.error: str | None = None

    def latest(self):
        """The job's best answer published so far (``publish``), or ``None``."""
        import pickle

        if self.published is None:
            return None
        try:
            with open(self.published, "rb") as fh:
                return pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError):
            return None

    def _clean(self) -> None:
        import os

        if self.published is not None:
            for path in (self.published, self.published + ".tmp"):
                try:
                    os.unlink(path)
                except OSError:
                    pass

    def done(self) -> bool:
        """Whether the child has finished (its answer is ready)."""
        return self.proc.poll() is not None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()
        self._clean()

    def collect(self, timeout: float | None = None):
        """The job's return value, or ``None`` when the child is still running after ``timeout``
        seconds (default: at its hard deadline; it is then stopped) or failed (:attr:`error` says
        how)."""
        import pickle
        import subprocess

        if timeout is None:
            if self.until is None:
                raise ValueError("collect() needs a timeout for a child started without seconds")
            timeout = self.until - time.perf_counter()
        try:
            out, _err = self.proc.communicate(timeout=max(timeout, 0.01))
        except subprocess.TimeoutExpired:
            self.kill()
            self.error = "stopped at the limit"
            return None
        except BaseException:  # Ctrl-C or a hard time-out of the caller: never leave the child behind
            self.kill()
            raise
        self._clean()
        try:
            got = pickle.loads(out)
        except Exception:
            self.error = f"child process failed (exit {self.proc.returncode})"
            return None
        if "error" in got:
            self.error = got["error"]
            return None
        return got["value"]


if __name__ == "__main__":  # pragma: no cover
    _child_main()


__all__ = ["Child", "milp_job", "worth_it", "margin", "CHILD_FROM", "START_SECONDS"]
