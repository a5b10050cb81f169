"""Batch runner: expected rows, resume after SIGKILL, corrupt files, local pool vs Dask."""

import io as _io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cases import knapsack as fake
from splitopt.instances import io, sets
from splitopt.validation import run_validation
from splitopt.validation.store import ResultStore

TESTS = Path(__file__).resolve().parents[1]


def _rows(path):
    with ResultStore(path) as st:
        return st.rows()


def _key(r):
    return (r["member_id"], r["algorithm"], r["outcome"], r["objective"], r["exact_objective"])


def test_small_set_gives_the_expected_rows(tmp_path):
    store = tmp_path / "runs.sqlite"
    s = sets.recipe_set("k6", "vknap", range(6), n=7)
    err = _io.StringIO()
    summary = run_validation(s, algorithms="dp,greedy_paper", store=store, stream=err)
    rows = _rows(store)
    assert len(rows) == 6 * 3  # milp + 2 algorithms per member
    assert "6/6 tasks" in err.getvalue()
    for r in rows:
        inst = fake.generate(int(r["member_id"].split("=")[1]), n=7)
        opt = fake.brute_force(inst)  # independent oracle
        assert r["exact_objective"] == opt
        if r["algorithm"] == "dp":
            assert r["outcome"] == "agree" and r["objective"] == opt
        if r["algorithm"] == "greedy_paper":
            assert r["objective"] <= opt
            assert (r["outcome"] == "agree") == (r["objective"] == opt)
            assert r["outcome"] in ("agree", "worse")
    s_dp = summary.set_index("algorithm").loc["dp"]
    assert s_dp["instances"] == 6 and s_dp["agreements"] == 6 and s_dp["disagreements"] == 0
    assert summary.attrs["tasks"] == 6

    # re-running skips all done work: no task, the exact formulation is not solved again
    fake.CALLS["milp"] = 0
    again = run_validation(s, algorithms="dp,greedy_paper", store=store, progress=False)
    assert again.attrs["tasks"] == 0 and again.attrs["skipped"] == 6 and fake.CALLS["milp"] == 0
    # adding an algorithm reuses the stored exact facts
    more = run_validation(s, algorithms="dp,greedy_paper,lp", store=store, progress=False)
    assert more.attrs["tasks"] == 6 and fake.CALLS["milp"] == 0
    assert len(_rows(store)) == 6 * 4


def test_paper_variant_failure_shows_as_disagreement(tmp_path):
    d = tmp_path / "set"
    io.save(fake.CLASSIC, d / "classic.json")
    summary = run_validation(str(d), algorithms=["greedy_paper", "dp"], store=tmp_path / "r.sqlite", progress=False)
    g = summary.set_index("algorithm").loc["greedy_paper"]
    assert g["disagreements"] == 1 and g["unexpected"] == 1 and g["paper"]
    assert g["worst_gap"] == pytest.approx(60 / 220)


def test_directory_with_corrupt_file_records_the_error_and_finishes(tmp_path):
    d = tmp_path / "set"
    for s in range(3):
        io.save(fake.generate(s), d / f"ok{s}.json")
    (d / "corrupt.json").write_text('{"format": 1, "kind": "instance", "family": "vknap", "data": {')
    bad = json.loads(io.dumps(fake.generate(9)))
    bad["data"]["weights"][1] = -3
    (d / "negative.json").write_text(json.dumps(bad))
    store = tmp_path / "r.sqlite"
    run_validation(str(d), algorithms=["dp"], store=store, progress=False)
    rows = _rows(store)
    by = {}
    for r in rows:
        by.setdefault(r["member_id"], []).append(r)
    assert set(by) == {"ok0.json", "ok1.json", "ok2.json", "corrupt.json", "negative.json"}
    for name in ("ok0.json", "ok1.json", "ok2.json"):
        assert sorted(r["outcome"] for r in by[name]) == ["agree", "reference"]
    (c,) = by["corrupt.json"]
    assert c["algorithm"] == "<load>" and "not valid JSON" in c["error"] and c["family"] is None
    (n,) = by["negative.json"]
    assert "data.weights[1]" in n["error"] and "-3" in n["error"] and n["family"] == "vknap"
    # a re-run skips the failed files too (their error rows are recorded outcomes)
    again = run_validation(str(d), algorithms=["dp"], store=store, progress=False)
    assert again.attrs["tasks"] == 0 and len(_rows(store)) == len(rows)


def test_time_limit_per_task_records_timeouts(tmp_path):
    s = sets.recipe_set("k2", "vknap", range(2), n=4)
    summary = run_validation(s, algorithms=["sleepy"], store=None, time_limit=0.3, progress=False)
    row = summary.set_index("algorithm").loc["sleepy"]
    assert row["timeouts"] == 2 and row["instances"] == 2


def test_unknown_algorithm_is_an_instance_error():
    from splitopt.errors import InstanceError
    with pytest.raises(InstanceError, match="^algorithms: unknown algorithm"):
        run_validation(sets.recipe_set("k1", "vknap", [0]), algorithms="nope", progress=False)


KILL_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})  # the child process is not under pytest: put tests/ on its path
from cases import knapsack
from splitopt.instances import sets
from splitopt.validation import run_validation
run_validation(sets.recipe_set("slow", "vknap", range({n}), n=5, delay=0.25), algorithms=["dp"],
               store={store!r}, progress=False, jobs={jobs})
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_sigkill_mid_run_then_resume_gives_every_row_once(tmp_path, jobs):
    """Issue 21: a resumed run loses and duplicates no row, after a serial run or a process pool
    (whose workers die with the killed driver) was killed with SIGKILL."""
    n = 10
    store = tmp_path / "runs.sqlite"
    script = KILL_SCRIPT.format(tests=str(TESTS), n=n, store=str(store), jobs=jobs)
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 60
    committed = 0
    try:
        while time.time() < deadline:
            if store.exists():
                try:
                    con = sqlite3.connect(store, timeout=5)
                    committed = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
                    con.close()
                except sqlite3.OperationalError:
                    committed = 0
            if committed >= 6:
                break
            assert proc.poll() is None, "run finished before it could be killed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    first = _rows(store)
    assert 6 <= len(first) < 2 * n
    first_ids = {(r["member_id"], r["algorithm"]): r["run_id"] for r in first}

    run_validation(sets.recipe_set("slow", "vknap", range(n), n=5, delay=0.25), algorithms=["dp"],
                   store=store, progress=False)
    con = sqlite3.connect(store)
    counts = con.execute("SELECT member_id, algorithm, COUNT(*) FROM results GROUP BY member_id, algorithm").fetchall()
    assert len(counts) == 2 * n and all(c == 1 for _, _, c in counts)
    assert {m for m, _, _ in counts} == {f"vknap/seed={s}" for s in range(n)}
    # rows finished before the kill were kept, not recomputed
    after = {(r["member_id"], r["algorithm"]): r["run_id"] for r in _rows(store)}
    assert all(after[k] == v for k, v in first_ids.items())


def test_local_pool_and_dask_give_the_same_rows_as_serial(tmp_path):
    s = sets.recipe_set("k8", "vknap", range(8), n=6)
    algos = ["dp", "greedy_paper", "lp"]
    run_validation(s, algorithms=algos, store=tmp_path / "serial.sqlite", progress=False)
    run_validation(s, algorithms=algos, jobs=2, store=tmp_path / "pool.sqlite", progress=False)
    pytest.importorskip("distributed")
    run_validation(s, algorithms=algos, dask_local=2, dask_processes=False, store=tmp_path / "dask.sqlite",
                   progress=False)
    serial = sorted(map(_key, _rows(tmp_path / "serial.sqlite")))
    pool = _rows(tmp_path / "pool.sqlite")
    assert len(serial) == 8 * 4
    assert sorted(map(_key, pool)) == serial
    assert len({r["pid"] for r in pool}) >= 1 and os.getpid() not in {r["pid"] for r in pool}
    assert sorted(map(_key, _rows(tmp_path / "dask.sqlite"))) == serial


def test_quick_set_on_the_real_families():
    """Integration: the built-in quick set through the real families (each declares its quick
    recipe in the registry). Every algorithm flagged exact must agree with the exact formulation
    (HiGHS); in particular each family's enumeration oracle ("bruteforce") must."""
    from splitopt.families import BUILTIN, get_family

    fams = [get_family(name) for name in BUILTIN]
    summary = run_validation("quick", store=None, progress=False, time_limit=60)
    s = summary.set_index(["family", "algorithm"])
    for fam in fams:
        seeds = fam.sets.quick_seeds
        ref = s[(s.index.get_level_values(0) == fam.name) & s["reference"]]
        assert len(ref) == 1 and ref["agreements"].iloc[0] == seeds
        bf = s.loc[(fam.name, "bruteforce")]
        # enumeration declines (not_applicable) graphs above its size limit; it never disagrees
        assert bf["disagreements"] == 0 and bf["agreements"] + bf["not_applicable"] == seeds
        assert bf["agreements"] >= seeds - 2
    assert summary["unexpected"].sum() == 0, summary[summary["unexpected"] > 0]


def test_worker_crash_is_isolated_and_recorded(tmp_path):
    members = [sets.Member(f"m{i}", "callable", None, (fake.generate, i, 5 if i == 2 else 4)) for i in range(5)]
    s = sets.InstanceSet("crashy", "one member kills its worker", lambda st: iter(members))
    store = tmp_path / "r.sqlite"
    run_validation(s, algorithms=["crash"], jobs=2, store=store, progress=False)
    by = {}
    for r in _rows(store):
        by.setdefault(r["member_id"], {})[r["algorithm"]] = r
    assert set(by) == {"m0", "m1", "m2", "m3", "m4"}
    assert set(by["m2"]) == {"<crash>"} and "worker process died" in by["m2"]["<crash>"]["error"]
    for m in ("m0", "m1", "m3", "m4"):
        assert by[m]["crash"]["outcome"] == "agree"


def test_forkserver_pool_imports_test_registered_families(tmp_path):
    """Workers that do not inherit this process (forkserver) find the fake family through the
    task's module imports and give the same rows as the serial run."""
    s = sets.recipe_set("k3", "vknap", range(3), n=5)
    run_validation(s, algorithms=["dp"], store=tmp_path / "a.sqlite", progress=False)
    run_validation(s, algorithms=["dp"], jobs=2, mp_context="forkserver", store=tmp_path / "b.sqlite",
                   progress=False)
    assert sorted(map(_key, _rows(tmp_path / "b.sqlite"))) == sorted(map(_key, _rows(tmp_path / "a.sqlite")))
