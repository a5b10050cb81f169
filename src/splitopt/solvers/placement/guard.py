"""The placement MILP in a child process that is stopped at a hard deadline (issue 22: every
algorithm keeps its limit at any size).

Why: HiGHS checks its time limit between units of work, and on large chain models some of them are
long: the chain MILP of a 591-node GNMT-like training graph (23,909 rows) ran 91 s with a 40 s
limit, and ``cancelSolve`` (HiGHS's user interrupt) took 65 s to be noticed. A child process can be
stopped at any moment. The child builds the model from the instance (plain data, pickled), solves
it and sends back what :func:`splitopt.solvers.placement.milp.solve` uses: status, bound (in the
model's unit), termination, seconds, message and the placement. Stopped, it sends nothing: the
caller keeps its incumbent and its own proven bound.

Used only where the model is large (:func:`worth_it`), so small solves keep their in-process speed.
"""

from __future__ import annotations

from types import SimpleNamespace

#: the model's estimated build time (s) from which the MILP runs in a child
CHILD_FROM = 1.0
#: grace after the solver's own limit before the child is stopped: max(GRACE_S, GRACE_SHARE x limit)
GRACE_S, GRACE_SHARE = 0.5, 0.05


def worth_it(build_seconds: float, time_limit: float | None) -> bool:
    return time_limit is not None and build_seconds >= CHILD_FROM


def _child_main() -> None:  # pragma: no cover - runs in the child process
    import pickle
    import sys

    from splitopt.models.placement import assignment_from_milp, build_milp
    from splitopt.solvers import exact

    instance, build_kw, solver, time_limit, mip_gap = pickle.load(sys.stdin.buffer)
    try:
        model = build_milp(instance, **build_kw)
        res = exact.solve(model, solver, time_limit=time_limit, mip_gap=mip_gap)
        a = assignment_from_milp(instance, model) if res.has_solution else None
        out = {"status": res.status, "bound": res.bound, "termination": res.termination, "seconds": res.seconds,
               "message": res.message, "has_solution": res.has_solution, "assignment": a, "unit": model._unit}
    except Exception as exc:  # the parent reports it as the solver's failure
        out = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    sys.stdout.buffer.write(pickle.dumps(out))
    sys.stdout.buffer.flush()


def solve_in_child(instance, build_kw: dict, solver: str, time_limit: float, mip_gap, hard_seconds: float):
    """``SimpleNamespace`` of the child's answer, or ``None`` when it was stopped at
    ``hard_seconds`` (or failed). The child is ``python -m splitopt.solvers.placement.guard`` with
    this process's import path (no ``__main__`` guard needed in the caller's script)."""
    import os
    import pickle
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    payload = pickle.dumps((instance, build_kw, solver, time_limit, mip_gap))
    p = subprocess.Popen([sys.executable, "-m", "splitopt.solvers.placement.guard"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        out, _err = p.communicate(payload, timeout=max(hard_seconds, 0.01))
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return None
    try:
        got = pickle.loads(out)
    except Exception:
        return None
    if "error" in got:
        return None
    return SimpleNamespace(**got)


if __name__ == "__main__":  # pragma: no cover
    _child_main()


__all__ = ["solve_in_child", "worth_it", "CHILD_FROM"]
