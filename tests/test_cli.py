"""The `splitopt` command: each subcommand's output, and user errors -> one line, exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from splitopt.cli import main
from splitopt.instances import io
from splitopt.instances.graph import DNNGraph, Edge, Layer


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write_json(path, obj):
    path.write_text(json.dumps(obj))
    return str(path)


def graph_doc(layers, edges):
    return {"format": 1, "kind": "graph", "data": {"name": "g", "layers": layers, "edges": edges}}


# ------------------------------------------------------------------ user errors: exit 2, one line
BAD_GRAPHS = {
    "cyclic": (graph_doc([{"name": "a"}, {"name": "b"}, {"name": "c"}], [["a", "b"], ["b", "c"], ["c", "b"]]),
               "cyclic"),
    "unknown_layer": (graph_doc([{"name": "a"}], [["a", "zz"]]), "edges[0].dst: unknown layer 'zz'"),
    "negative": (graph_doc([{"name": "a", "out_bytes": -3}], []), "layers[0].out_bytes: must be >= 0, got -3"),
    "nan": (graph_doc([{"name": "a", "fwd_flop": float("nan")}], []), "NaN"),
    "bad_format": ({"format": 99, "kind": "graph", "data": {}}, "format"),
}


@pytest.mark.parametrize("case", sorted(BAD_GRAPHS))
def test_inspect_bad_graph_exits_2_with_field(tmp_path, capsys, case):
    doc, expected = BAD_GRAPHS[case]
    path = tmp_path / f"{case}.json"
    # json.dumps writes NaN as the bare token NaN, which the loader must reject by name
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "inspect", str(path))
    assert code == 2
    assert expected in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_missing_file_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "inspect", str(tmp_path / "nope.json"))
    assert code == 2 and "no such file" in err


def test_unknown_zoo_model_exits_2(capsys):
    code, _, err = run(capsys, "zoo", "show", "resnet9000")
    assert code == 2 and "resnet9000" in err


def test_subprocess_error_has_no_traceback(tmp_path):
    path = tmp_path / "cyc.json"
    path.write_text(json.dumps(BAD_GRAPHS["cyclic"][0]))
    proc = subprocess.run([sys.executable, "-m", "splitopt.cli", "inspect", str(path)], capture_output=True,
                          text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("splitopt: error:") and "Traceback" not in proc.stderr


def test_argparse_misuse_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["solve"])
    assert exc.value.code == 2


# ------------------------------------------------------------------ normal use
def test_inspect_graph_reports_totals(tmp_path, capsys):
    g = DNNGraph([Layer("a", fwd_flop=10, out_bytes=4), Layer("b", fwd_flop=6, param_bytes=8)], [Edge("a", "b")])
    p = io.save(g, tmp_path / "g.json")
    code, out, _ = run(capsys, "inspect", str(p), "--json")
    assert code == 0
    d = json.loads(out)
    assert d["kind"] == "graph" and d["layers"] == 2 and d["edges"] == 1
    assert d["fwd_flop"] == 16 and d["params"] == 2 and d["chain"] is True


def test_zoo_show_totals_line(capsys):
    code, out, _ = run(capsys, "zoo", "show", "resnet18")
    assert code == 0
    assert "parameters 11,689,512" in out  # torchvision's published ResNet-18 total
    assert "(1.814 G)" in out  # torchvision's published 1.81 GMACs (conv + linear MACs)


def test_zoo_list_has_all_models(capsys):
    code, out, _ = run(capsys, "zoo", "list")
    assert code == 0
    for name in ("alexnet", "vgg16", "resnet50", "mobilenet_v2", "densenet121", "yolov2"):
        assert name in out


def test_generate_then_inspect(tmp_path, capsys):
    out_file = tmp_path / "c.json"
    code, _, _ = run(capsys, "generate", "chain", "--seed", "3", "--n", "7", "-o", str(out_file))
    assert code == 0
    code, out, _ = run(capsys, "inspect", str(out_file), "--json")
    d = json.loads(out)
    assert d["layers"] == 7 and d["chain"] is True


def test_import_pipedream(tmp_path, capsys):
    from importlib import resources

    src = resources.files("splitopt.instances") / "data" / "pipedream" / "alexnet" / "graph.txt"
    out_file = tmp_path / "alexnet.json"
    with resources.as_file(src) as path:
        code, out, _ = run(capsys, "import", "pipedream", str(path), "-o", str(out_file))
    assert code == 0
    g = io.load(out_file)
    # the profile has one line per layer starting with "node"; count them independently
    text = src.read_text()
    assert len(g.layers) == sum(1 for ln in text.splitlines() if ln.startswith("node"))


# ------------------------------------------------------------------ make + solve, both families
def test_make_and_solve_split_json_matches_evaluator(tmp_path, capsys):
    from splitopt.families import evaluate

    inst_file = tmp_path / "s.json"
    code, _, _ = run(capsys, "make", "split", "resnet18", "--device-flops", "1e11", "--server-flops", "1e13",
                     "--up-mbps", "100", "--down-mbps", "200", "--iterations", "5", "-o", str(inst_file))
    assert code == 0
    inst = io.load(inst_file)
    results = {}
    for algo in ("mincut", "milp", "device_only"):
        code, out, _ = run(capsys, "solve", str(inst_file), "--algorithm", algo, "--json")
        assert code == 0
        d = json.loads(out)
        assert {"family", "algorithm", "objective", "assignment", "seconds"} <= set(d)
        assert d["family"] == "split" and d["algorithm"] == algo
        # the printed objective is the evaluator's value of the printed assignment
        assert d["objective"] == pytest.approx(evaluate(inst, d["assignment"])[0], rel=1e-12)
        results[algo] = d["objective"]
    assert results["mincut"] == pytest.approx(results["milp"], rel=1e-9)
    assert results["mincut"] <= results["device_only"] * (1 + 1e-12)


def test_solve_save_writes_what_json_prints(tmp_path, capsys):
    inst_file, saved = tmp_path / "s.json", tmp_path / "sol.json"
    code, _, _ = run(capsys, "make", "split", "resnet18", "--device-flops", "1e11", "--server-flops", "1e13",
                     "--up-mbps", "100", "--down-mbps", "200", "-o", str(inst_file))
    assert code == 0
    code, out, _ = run(capsys, "solve", str(inst_file), "-a", "mincut", "--save", str(saved))
    assert code == 0 and "status" in out  # the text output still shows
    code, out, _ = run(capsys, "solve", str(inst_file), "-a", "mincut", "--json")
    printed, kept = json.loads(out), json.loads(saved.read_text())
    assert kept["assignment"] == printed["assignment"] and kept["objective"] == printed["objective"]
    assert kept["plan"]["stages"][0]["layers"] == sorted(kept["assignment"], key=kept["plan"]["layers"].index)


def test_solve_split_text_output_lists_cut(tmp_path, capsys):
    inst_file = tmp_path / "s.json"
    run(capsys, "make", "split", "alexnet", "--device-flops", "1e10", "--server-flops", "1e13",
        "--up-mbps", "1000", "-o", str(inst_file))
    code, out, _ = run(capsys, "solve", str(inst_file))
    assert code == 0
    assert "cut tensors" in out and "objective" in out


def test_make_split_zero_bandwidth_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "make", "split", "resnet18", "--up-mbps", "0", "--device-flops", "1e9",
                       "--server-flops", "1e12", "-o", str(tmp_path / "x.json"))
    assert code == 2 and "--up-mbps" in err and "got 0" in err
    assert not (tmp_path / "x.json").exists()


def test_make_split_unknown_pinned_layer_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "make", "split", "resnet18", "--up-mbps", "10", "--device-flops", "1e9",
                       "--server-flops", "1e12", "--pin-server", "no_such_layer", "-o", str(tmp_path / "x.json"))
    assert code == 2 and "no_such_layer" in err


def test_solve_unknown_algorithm_exits_2(tmp_path, capsys):
    inst_file = tmp_path / "s.json"
    run(capsys, "make", "split", "alexnet", "--device-flops", "1e10", "--server-flops", "1e13",
        "--up-mbps", "10", "-o", str(inst_file))
    code, _, err = run(capsys, "solve", str(inst_file), "--algorithm", "magic")
    assert code == 2 and "magic" in err


def test_make_and_solve_grouping_with_k_override(tmp_path, capsys):
    from splitopt.families import evaluate

    inst_file = tmp_path / "g.json"
    code, _, _ = run(capsys, "make", "grouping", "resnet18", "--k", "3", "--objective", "bottleneck",
                     "-o", str(inst_file))
    assert code == 0
    code, out, _ = run(capsys, "solve", str(inst_file), "--json")
    d3 = json.loads(out)
    assert d3["family"] == "grouping" and len(d3["assignment"]) == 3
    code, out, _ = run(capsys, "solve", str(inst_file), "--k", "5", "--json")
    d5 = json.loads(out)
    assert len(d5["assignment"]) == 5 and sum(d5["assignment"]) == sum(d3["assignment"])
    # more stages never increase the optimal bottleneck
    assert d5["objective"] <= d3["objective"] * (1 + 1e-12)
    inst = io.load(inst_file)
    assert d3["objective"] == pytest.approx(evaluate(inst, d3["assignment"])[0], rel=1e-12)
    code, out, _ = run(capsys, "solve", str(inst_file), "--algorithm", "milp_interval", "--json")
    assert json.loads(out)["objective"] == pytest.approx(d3["objective"], rel=1e-7)


def test_make_grouping_k_too_large_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "make", "grouping", "resnet18", "--k", "50", "-o", str(tmp_path / "g.json"))
    assert code == 2 and "k" in err


def test_make_grouping_zoo_name_uses_thesis_batch_16(tmp_path, capsys):
    """`make grouping resnet18` follows the thesis set-up (batch of 16 images, digest 003 §4.2):
    every part's output bytes are 16x those of `--batch 1`."""
    run(capsys, "make", "grouping", "resnet18", "--k", "3", "-o", str(tmp_path / "a.json"))
    run(capsys, "make", "grouping", "resnet18", "--k", "3", "--batch", "1", "-o", str(tmp_path / "b.json"))
    a, b = io.load(tmp_path / "a.json"), io.load(tmp_path / "b.json")
    assert len(a.s) == len(b.s) == 11
    assert all(x == pytest.approx(16 * y) for x, y in zip(a.s, b.s))


# ------------------------------------------------------------------ review regressions: user errors
# Each case below crashed with a traceback (exit 1) or silently did the wrong thing before the review.
def _split_instance_file(tmp_path, capsys, name="s.json"):
    path = tmp_path / name
    code, _, _ = run(capsys, "make", "split", "alexnet", "--device-flops", "1e10", "--server-flops", "1e13",
                     "--up-mbps", "10", "-o", str(path))
    assert code == 0
    return path


def _grouping_instance_file(tmp_path, capsys, name="g.json"):
    path = tmp_path / name
    code, _, _ = run(capsys, "make", "grouping", "resnet18", "--k", "3", "-o", str(path))
    assert code == 0
    return path


def _assert_user_error(code, err, *needles):
    assert code == 2, err
    assert err.startswith("splitopt: error:") and err.count("\n") == 1 and "Traceback" not in err
    for n in needles:
        assert n in err, (n, err)


def test_instance_family_that_is_not_a_string_exits_2(tmp_path, capsys):
    doc = json.loads(_split_instance_file(tmp_path, capsys).read_text())
    doc["family"] = ["split"]  # was: TypeError unhashable type 'list'
    path = write_json(tmp_path / "bad.json", doc)
    code, _, err = run(capsys, "solve", path)
    _assert_user_error(code, err, "family", "['split']")


@pytest.mark.parametrize("where", ["graph", "layer"])
def test_meta_that_is_not_an_object_exits_2(tmp_path, capsys, where):
    if where == "graph":
        doc = {"format": 1, "kind": "graph", "data": {"name": "g", "meta": 5, "layers": [{"name": "a"}], "edges": []}}
        needle = "data.meta"
    else:
        doc = graph_doc([{"name": "a", "meta": [1, 2]}], [])
        needle = "data.layers[0].meta"
    code, _, err = run(capsys, "inspect", write_json(tmp_path / "m.json", doc))
    _assert_user_error(code, err, needle, "must be an object")


def test_output_path_that_is_a_directory_exits_2(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    code, _, err = run(capsys, "generate", "chain", "--seed", "1", "--n", "3", "-o", str(tmp_path / "out"))
    _assert_user_error(code, err, str(tmp_path / "out"), "Is a directory")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary file left


def test_solve_without_solution_in_time_limit_exits_2(tmp_path, capsys, monkeypatch):
    """A formulation whose solver stops without an incumbent: one line naming the status (the
    grouping MILP raised a bare RuntimeError before)."""
    from splitopt.solvers import exact

    def no_solution(model, solver="highs", **kw):
        return exact.ExactResult(solver=solver, status="time_limit", termination="maxTimeLimit", objective=None,
                                 bound=None, gap=None, seconds=0.0)

    monkeypatch.setattr(exact, "solve", no_solution)
    g = _grouping_instance_file(tmp_path, capsys)
    s = _split_instance_file(tmp_path, capsys)
    for path, algo in ((g, "milp_interval"), (g, "milp_compact")):
        code, _, err = run(capsys, "solve", str(path), "-a", algo, "--time-limit", "0.5")
        _assert_user_error(code, err, "no solution", "time_limit")
    # split's milp/lp return their incumbent (the better trivial split) and the trivial bound when
    # the solver stops without one (issue 21: an anytime answer)
    from splitopt.instances import io
    from splitopt.models.split import evaluate
    from splitopt.solvers.exact import highs

    monkeypatch.setattr(highs.HighsMatrix, "solve", lambda self, isolate=False: highs.MatrixResult(
        "time_limit", "maxTimeLimit", None, None, None))  # split's HiGHS path builds no Pyomo model
    inst = io.load(s)
    for algo in ("milp", "lp"):
        code, out, err = run(capsys, "solve", str(s), "-a", algo, "--time-limit", "0.5", "--json")
        assert code == 0, err
        d = json.loads(out)
        assert d["status"] == "time_limit"
        assert d["objective"] == min(evaluate(inst, inst.names_of(m))[0]
                                     for m in (inst.min_device_mask, inst.max_device_mask))
        assert 0 < d["bound"] <= d["objective"]


def test_harness_records_solver_time_out_as_timeout(monkeypatch):
    """The reference formulation stopping without a solution is a time-out row, not
    'not_applicable' (which means "the algorithm declines this instance")."""
    from splitopt.instances.split import generate
    from splitopt.solvers import exact
    from splitopt.validation import harness

    def no_solution(model, solver="highs", **kw):
        return exact.ExactResult(solver=solver, status="time_limit", termination="maxTimeLimit", objective=None,
                                 bound=None, gap=None, seconds=0.0)

    monkeypatch.setattr(exact, "solve", no_solution)
    from splitopt.solvers.exact import highs

    monkeypatch.setattr(highs.HighsMatrix, "solve", lambda self, isolate=False: highs.MatrixResult(
        "time_limit", "maxTimeLimit", None, None, None))  # split's HiGHS path builds no Pyomo model
    harness.clear_cache()
    try:
        rows = {r["algorithm"]: r for r in harness.validate_instance(generate(3, n=6), ["mincut"], time_limit=1.0)}
    finally:
        harness.clear_cache()
    # split's milp answers with its incumbent (a trivial split) and status time_limit (issue 21):
    # the reference row says so, and an exact algorithm can only match or beat it
    assert rows["milp"]["status"] == "time_limit" and rows["milp"]["exact_status"] == "time_limit"
    assert rows["mincut"]["outcome"] in ("better", "agree")


def test_validate_unknown_solver_exits_2_before_running(tmp_path, capsys):
    store = tmp_path / "runs.sqlite"
    code, _, err = run(capsys, "validate", "quick", "--solver", "nonexistent", "--store", str(store), "--quiet")
    _assert_user_error(code, err, "'nonexistent'")
    assert not store.exists()  # nothing ran, nothing recorded


def test_validate_empty_directory_exits_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "validate", str(tmp_path / "empty"), "--store", str(tmp_path / "r.sqlite"), "--quiet")
    _assert_user_error(code, err, "no *.json")


@pytest.mark.parametrize("command, content", [("report", b""), ("report", b'{"not": "a store"}\n'),
                                              ("validate", b'{"not": "a store"}\n')])
def test_store_that_is_not_sqlite_exits_2_and_is_left_untouched(tmp_path, capsys, command, content):
    path = tmp_path / "notes.json"
    path.write_bytes(content)
    if command == "report":
        code, _, err = run(capsys, "report", str(path))
    else:  # (an empty --store file may become the store: validate creates stores)
        code, _, err = run(capsys, "validate", str(_split_instance_file(tmp_path, capsys)), "--algorithms", "mincut",
                           "--store", str(path), "--quiet")
    _assert_user_error(code, err, str(path), "not an SQLite file")
    assert path.read_bytes() == content  # report used to turn an empty file into a database


def test_report_on_a_directory_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "report", str(tmp_path))
    _assert_user_error(code, err, "is a directory")


def test_generate_absurd_size_exits_2(tmp_path, capsys):
    # was: the process ran out of memory and was killed (exit 137)
    code, _, err = run(capsys, "generate", "chain", "--seed", "1", "--n", "100000000", "-o", str(tmp_path / "g.json"))
    _assert_user_error(code, err, "n:", "100000000")


def test_make_grouping_zero_requests_exits_2(tmp_path, capsys):
    # was: silently replaced by 1 request
    code, _, err = run(capsys, "make", "grouping", "resnet18", "--k", "3", "--requests", "0",
                       "-o", str(tmp_path / "g.json"))
    _assert_user_error(code, err, "requests", "got 0")


def test_solve_option_of_another_family_exits_2(tmp_path, capsys):
    # was: `--k` silently ignored on a split instance
    code, _, err = run(capsys, "solve", str(_split_instance_file(tmp_path, capsys)), "--k", "3")
    _assert_user_error(code, err, "--k", "grouping option", "split instance")


def test_make_split_analytic_graph_without_rates_uses_the_stated_defaults(tmp_path, capsys):
    """Issue 24: a zoo graph needs no --device-flops/--server-flops; the help's defaults (2e10 and
    2e13 FLOP/s) are used: each layer's time is its forward FLOP (inference) over that rate."""
    from splitopt.instances import io, zoo

    path = tmp_path / "s.json"
    code, _, err = run(capsys, "make", "split", "alexnet", "--up-mbps", "10", "--mode", "inference", "-o", str(path))
    assert code == 0, err
    inst = io.load(path)
    flop = [lay.fwd_flop for lay in zoo.get("alexnet").layers]
    assert inst.device_s == pytest.approx([f / 2e10 for f in flop], rel=1e-12)
    assert inst.server_s == pytest.approx([f / 2e13 for f in flop], rel=1e-12)


def test_paper_variant_infeasible_split_names_the_algorithm(tmp_path, capsys):
    """seed 000 Alg. 1-2 as printed has no pins: on AlexNet at 10 Mbit/s it puts the raw input on the
    server, which input_policy 'pin' forbids (digest 000 E3)."""
    code, _, err = run(capsys, "solve", str(_split_instance_file(tmp_path, capsys)), "-a", "mincut_paper")
    _assert_user_error(code, err, "'mincut_paper' returned an infeasible assignment", "input layer")


@pytest.mark.parametrize("option, value", [("--machine", "gpu0"), ("--collapse", "sese")])
def test_make_grouping_zoo_name_rejects_options_it_cannot_apply(tmp_path, capsys, option, value):
    # was: silently ignored (a zoo name always takes the thesis FLOP/block set-up)
    code, _, err = run(capsys, "make", "grouping", "resnet18", "--k", "3", option, value, "-o", str(tmp_path / "g.json"))
    _assert_user_error(code, err, option, value)
    assert not (tmp_path / "g.json").exists()


@pytest.mark.parametrize("data, needle", [
    ({"nodes": 3, "links": []}, "data.nodes: must be a list"),
    ({"nodes": [{"name": 7}], "links": []}, "data.nodes[0].name"),
    ({"nodes": [{"name": "d", "machine_class": ["gpu"]}], "links": []}, "data.nodes[0].machine_class"),
])
def test_inspect_bad_platform_exits_2(tmp_path, capsys, data, needle):
    # was: TypeError traceback (nodes not a list) or a misleading error about a link
    code, _, err = run(capsys, "inspect", write_json(tmp_path / "p.json", {"format": 1, "kind": "platform", "data": data}))
    _assert_user_error(code, err, needle)


def test_solver_option_on_a_combinatorial_algorithm_exits_2(tmp_path, capsys):
    inst_file = tmp_path / "s.json"
    run(capsys, "make", "split", "alexnet", "--device-flops", "1e10", "--server-flops", "1e13",
        "--up-mbps", "10", "-o", str(inst_file))
    code, _, err = run(capsys, "solve", str(inst_file), "--algorithm", "mincut", "--solver", "cbc")
    assert code == 2 and "--solver" in err and "milp" in err
    code, out, _ = run(capsys, "solve", str(inst_file), "--algorithm", "milp", "--solver", "cbc", "--json")
    assert code == 0 and json.loads(out)["info"]["solver"] == "cbc"


def test_report_on_foreign_sqlite_file_exits_2_and_leaves_it_unchanged(tmp_path, capsys):
    import hashlib
    import sqlite3

    db = tmp_path / "other.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (x INTEGER)")
    con.commit()
    con.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    code, _, err = run(capsys, "report", str(db))
    assert code == 2 and "not a splitopt results store" in err
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_validate_exits_1_when_an_exact_algorithm_fails(tmp_path, capsys, monkeypatch):
    """Paper variants disagree without changing the exit status; an algorithm that claims exactness
    and disagrees with a proven optimum makes ``validate`` exit 1, and the last line counts the
    table's 'failed' column."""
    from cases import knapsack
    from splitopt.families import Algorithm
    from splitopt.instances import io as sio

    monkeypatch.setitem(knapsack.FAMILY.algorithms, "wrong_exact",
                        Algorithm("wrong_exact", knapsack.greedy_paper, "exact"))
    d = tmp_path / "set"
    sio.save(knapsack.CLASSIC, d / "classic.json")  # optimum 220, ratio greedy 160 (hand computed)
    code = main(["validate", str(d), "--algorithms", "dp,greedy_paper", "--store", str(tmp_path / "a.sqlite"),
                 "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and out.rstrip().endswith(": 0")
    code = main(["validate", str(d), "--algorithms", "wrong_exact", "--store", str(tmp_path / "b.sqlite"), "--quiet",
                 "--wide"])
    out = capsys.readouterr().out
    assert code == 1 and out.rstrip().endswith(": 1")
    row = next(line.split() for line in out.splitlines() if "wrong_exact" in line)
    assert row[2] == "exact" and "1" in row[3:]


def test_report_exports_and_self_contained_html(tmp_path, capsys):
    """`report --csv/--parquet/--html`: every row exported, figures embedded in the HTML, the table
    formatted as in the terminal, files written with the user's umask (not 0600)."""
    import os
    import stat

    import pandas as pd

    import cases.toy  # noqa: F401  (registers the toy family)

    store = tmp_path / "r.sqlite"
    assert main(["validate", "toybisect-random:3", "--store", str(store), "--quiet"]) in (0, 1)
    capsys.readouterr()
    old = os.umask(0o022)
    try:
        code = main(["report", str(store), "--csv", str(tmp_path / "r.csv"), "--parquet", str(tmp_path / "r.pq"),
                     "--html", str(tmp_path / "r.html")])
    finally:
        os.umask(old)
    assert code == 0
    n = len(pd.read_csv(tmp_path / "r.csv"))
    assert n == 3 * 5 and len(pd.read_parquet(tmp_path / "r.pq")) == n  # 3 instances x 5 algorithms
    html = (tmp_path / "r.html").read_text()
    # every toy instance has 5 layers: no time-vs-size figure, and the report says why (issue 24)
    assert html.count("data:image/png;base64,") == 2 and not (tmp_path / "r_figures").exists()
    assert "time vs size not drawn for toybisect (every instance 5 layers)" in html
    assert "x</td>" in html and "%</td>" in html  # speed-ups and gaps formatted as in the terminal
    for f in ("r.csv", "r.html"):
        assert stat.S_IMODE((tmp_path / f).stat().st_mode) == 0o644


def test_solve_overrides_replace_only_the_fields_given(tmp_path, capsys):
    """`splitopt solve --max-splits` (throughput) and `--placement/--bottleneck` (pipeline) go through
    families.field_overrides: with the cap 0 the optimum is the best single node, computed here by the
    evaluator over every node; an option not given leaves the instance as it is."""
    import argparse

    from splitopt.families import get_family
    from splitopt.instances import io
    from splitopt.instances.pipeline import generate as pipeline_instance
    from splitopt.instances.throughput import generate as throughput_instance
    from splitopt.models.throughput import evaluate

    inst = throughput_instance(3, n_layers=5, n_nodes=3, max_splits=None)
    f = tmp_path / "t.json"
    io.save(inst, f)
    assert main(["solve", str(f), "-a", "bruteforce", "--max-splits", "0", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["objective"]
    single = min(evaluate(inst, [node] * inst.n_layers)[0] for node in inst.nodes)
    assert abs(got - single) <= 1e-12 * single
    fam = get_family("throughput")
    assert fam.override(inst, argparse.Namespace(max_splits=None)) is inst
    assert fam.override(inst, argparse.Namespace(max_splits=2)).max_splits == 2
    pipe = pipeline_instance(1, b="draw")
    fam = get_family("pipeline")
    assert fam.override(pipe, argparse.Namespace()) is pipe
    other = "revisit" if pipe.placement != "revisit" else "distinct"
    got = fam.override(pipe, argparse.Namespace(placement=other, bottleneck=None))
    assert (got.placement, got.bottleneck) == (other, pipe.bottleneck)


def test_help_shows_each_real_default_once_and_no_empty_ones():
    # every command's options: "(default: X)" is appended exactly where the default says something
    # (not None, not False) and the help text does not already name it
    import argparse

    from splitopt.cli import build_parser

    def parsers(p):
        yield p
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub in a.choices.values():
                    yield from parsers(sub)

    appended = named = 0
    for p in parsers(build_parser()):
        fmt, plain = p._get_formatter(), argparse.HelpFormatter(p.prog)
        for a in p._actions:
            if not a.option_strings or a.help in (None, argparse.SUPPRESS) or a.default is argparse.SUPPRESS:
                continue
            final, base = fmt._expand_help(a), plain._expand_help(a)
            if a.default in (None, False) or "default" in a.help.replace("%(default)s", "").lower():
                assert final == base, (p.prog, a.dest, final)
                named += "default" in a.help.lower()
            else:
                assert final == f"{base} (default: {a.default})", (p.prog, a.dest, final)
                appended += 1
    assert appended and named
