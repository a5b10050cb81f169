"""The paper's B&B (as printed) at cap 3 on YOLOv2 over 6 heterogeneous nodes with no evaluation limit,
timed side by side with the corrected B&B in one process: `python benchmarks/throughput_paper_long.py
het6-gbe` (run under `timeout`: the paper's search did not finish in 17 minutes here)."""
import sys
import time

sys.path.insert(0, __import__("os").path.dirname(__file__))
from throughput import instances, run_bnb

from splitopt.models.throughput import evaluate
from splitopt.solvers.throughput import bnb_paper

name = sys.argv[1]
inst = [i for n, c, i in instances(True) if n == name and c == 3][0]
r, cold, warm = run_bnb(inst, 3)
print(name, "bnb warm", warm, "cold", cold, "period", evaluate(inst, r.assignment)[0], r.status, flush=True)
t0 = time.perf_counter()
pr = bnb_paper.solve(inst, max_evaluations=10**12)
t = time.perf_counter() - t0
print(name, "paper", t, "s", pr.info.get("evaluations"), "period", evaluate(inst, pr.assignment)[0], "ratio", t / warm, flush=True)
