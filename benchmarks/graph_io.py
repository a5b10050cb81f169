"""Benchmark: loading and validating a 10,000-layer DNN graph from JSON (issue: "well under a second").

Printed side by side in one run: json.loads alone (the floor), json.loads + DNNGraph.from_dict
(full validation: names, edges, ports, acyclicity, finite non-negative numbers), and the
structural queries the algorithms use (articulation layers and SESE blocks). Median of 5.
Run: ``.venv/bin/python benchmarks/graph_io.py``. Never part of the tests.
"""

from __future__ import annotations

import json
import statistics
import time

from splitopt.instances.generate import layered_dag
from splitopt.instances.graph import DNNGraph


def median_time(fn, repeat: int = 5) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    g = layered_dag(10_000, seed=11)
    text = json.dumps({"format": 1, "kind": "graph", "data": g.to_dict()})
    t_json = median_time(lambda: json.loads(text))
    t_load = median_time(lambda: DNNGraph.from_dict(json.loads(text)["data"]))
    g2 = DNNGraph.from_dict(json.loads(text)["data"])

    fresh = [DNNGraph.from_dict(json.loads(text)["data"]) for _ in range(5)]
    ts = []
    for f in fresh:  # articulation layers are cached per graph: time each fresh graph once
        t0 = time.perf_counter()
        f.sese_blocks()
        ts.append(time.perf_counter() - t0)
    t_struct = statistics.median(ts)
    print(f"10,000-layer DAG ({len(g2.edges)} edges, {len(text) / 1e6:.1f} MB of JSON), median of 5:")
    print("| step | seconds | vs json.loads |")
    print("|---|---|---|")
    print(f"| json.loads | {t_json:.3f} | 1.0x |")
    print(f"| json.loads + validate (DNNGraph.from_dict) | {t_load:.3f} | {t_load / t_json:.1f}x |")
    print(f"| articulation layers + SESE blocks | {t_struct:.3f} | {t_struct / t_json:.1f}x |")


if __name__ == "__main__":
    main()
