"""One HiGHS run in a child process that is killed at the deadline (issue 21: time limits kept at
any size, in every phase, child solver included).

HiGHS does not keep its ``time_limit`` on large models: on the split MILP of a 5,000-layer chain
(15,000 columns) with ``time_limit=1`` it returned after 2.3 s; on a 20,000-layer chain (60,000
columns) with ``time_limit=5`` after 16-19 s (the log: "Time limit reached in
probing", then 10.8 s in the solve before the first node), and after 162 s with a 60 s limit.
No option (symmetry detection off, probing off) and no interrupt callback reaches that phase. A
child process can always be stopped: :func:`run_isolated` writes the model's arrays to a temporary
``.npz``, starts ``python -c CHILD`` (which builds the same ``HighsLp``, sets the same options and
HiGHS's own time limit to what is left of the deadline), and kills it ``grace`` seconds after the
deadline (:meth:`HighsMatrix.solve` puts the deadline a margin before the caller's limit and the
kill at the limit, since 2026-11-25). A killed run is status ``time_limit`` with no solution; the caller returns its own best
incumbent and bound.

Used by :meth:`HighsMatrix.solve` when asked (``isolate=True``), which the front door
(:class:`~splitopt.solvers.exact.highs.HighsBackend`) does for models of more than
:data:`ISOLATE_ABOVE` columns plus rows solved under a time limit: below that size HiGHS keeps its
limit and the start of a child (0.3-0.5 s) is not worth paying.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

#: models with more columns plus rows than this are solved in a killable child under a time limit
ISOLATE_ABOVE = 10_000

CHILD = r"""
import ctypes, json, sys, threading, time
import numpy as np
try:  # die with the parent (Linux); the parent kills this process at the deadline anyway
    ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)
except Exception:
    pass
import highspy
src, dst = sys.argv[1], sys.argv[2]
d = np.load(src)
meta = json.loads(str(d["meta"]))
lp = highspy.HighsLp()
n = int(meta["n"]); m = int(meta["m"])
lp.num_col_ = n; lp.num_row_ = m
lp.col_cost_ = d["c"]; lp.offset_ = float(meta["offset"])
lp.col_lower_ = d["cl"]; lp.col_upper_ = d["cu"]; lp.row_lower_ = d["rl"]; lp.row_upper_ = d["ru"]
lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
lp.a_matrix_.start_ = d["start"]; lp.a_matrix_.index_ = d["index"]; lp.a_matrix_.value_ = d["value"]
lp.a_matrix_.num_col_ = n; lp.a_matrix_.num_row_ = m
integer = d["integer"]
if integer.any():
    lp.integrality_ = [highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous for i in integer]
lp.sense_ = highspy.ObjSense.kMaximize if meta["maximize"] else highspy.ObjSense.kMinimize
h = highspy.Highs()
h.setOptionValue("output_flag", bool(meta["tee"]))
for k, v in meta["options"].items():
    h.setOptionValue(k, v)
left = float(meta["deadline"]) - time.monotonic()
h.setOptionValue("time_limit", max(left, 1e-3))
h.passModel(lp)
threading.stack_size(1 << 30)  # HiGHS's presolve recurses deeply on long chains
t = threading.Thread(target=h.run)
t.start(); t.join()
info = h.getInfo()
sol = h.getSolution()
out = {"ms": int(h.getModelStatus()), "term": h.modelStatusToString(h.getModelStatus()),
       "primal": int(info.primal_solution_status), "dual": int(info.dual_solution_status),
       "objective": float(info.objective_function_value), "mip_dual_bound": float(info.mip_dual_bound)}
np.savez(dst, meta=json.dumps(out), x=np.asarray(sol.col_value, dtype=float),
         y=np.asarray(sol.row_dual, dtype=float))
"""


@dataclass
class Outcome:
    """What :meth:`HighsMatrix.solve` reads from a run (in this process or a child)."""

    ms: int | None                 # HighsModelStatus as an int; None: killed at the deadline
    term: str
    primal: int = 0                # primal_solution_status (2: feasible)
    dual: int = 0                  # dual_solution_status
    objective: float = float("nan")
    mip_dual_bound: float = float("nan")
    x: np.ndarray | None = None
    y: np.ndarray | None = None


def run_isolated(lp, options: dict, deadline: float, grace: float, tee: bool = False) -> Outcome:
    """Solve ``lp`` (a ``highspy.HighsLp``) in a child with HiGHS's time limit at ``deadline``
    (``time.monotonic()`` seconds); kill it at ``deadline + grace``."""
    with tempfile.TemporaryDirectory(prefix="splitopt-highs-") as tmp:
        src, dst = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        meta = {"n": int(lp.num_col_), "m": int(lp.num_row_), "offset": float(lp.offset_),
                "maximize": lp.sense_.name == "kMaximize",
                "tee": bool(tee), "options": options, "deadline": deadline}
        integer = np.zeros(int(lp.num_col_), dtype=bool)
        if len(lp.integrality_):
            integer = np.array([int(v) == 1 for v in lp.integrality_], dtype=bool)
        np.savez(src, meta=json.dumps(meta), c=np.asarray(lp.col_cost_), cl=np.asarray(lp.col_lower_),
                 cu=np.asarray(lp.col_upper_), rl=np.asarray(lp.row_lower_), ru=np.asarray(lp.row_upper_),
                 start=np.asarray(lp.a_matrix_.start_), index=np.asarray(lp.a_matrix_.index_),
                 value=np.asarray(lp.a_matrix_.value_), integer=integer)
        proc = subprocess.Popen([sys.executable, "-c", CHILD, src, dst], stdin=subprocess.DEVNULL,
                                stdout=None if tee else subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            _, err = proc.communicate(timeout=max(deadline + grace - time.monotonic(), 0.05))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return Outcome(None, "killed at the time limit (HiGHS overran its own limit)")
        except BaseException:  # a hard time-out or Ctrl-C of the caller: never leave the child behind
            proc.kill()
            proc.communicate()
            raise
        if proc.returncode != 0 or not os.path.exists(dst):
            msg = (err or b"").decode(errors="replace").strip().splitlines()
            return Outcome(-1, f"HiGHS child process failed (exit {proc.returncode})"
                           + (f": {msg[-1]}" if msg else ""))
        d = np.load(dst)
        o = json.loads(str(d["meta"]))
        return Outcome(o["ms"], o["term"], o["primal"], o["dual"], o["objective"], o["mip_dual_bound"],
                       np.array(d["x"]), np.array(d["y"]))


def local_outcome(h) -> Outcome:
    """The :class:`Outcome` of a run of ``h`` (a ``highspy.Highs``) in this process."""
    info = h.getInfo()
    ms = h.getModelStatus()
    out = Outcome(int(ms), h.modelStatusToString(ms), int(info.primal_solution_status),
                  int(info.dual_solution_status), float(info.objective_function_value),
                  float(info.mip_dual_bound))
    return out


__all__ = ["ISOLATE_ABOVE", "run_isolated", "local_outcome", "Outcome"]
