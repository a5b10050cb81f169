"""Terminal output of issue 24: every line fits 100 columns unless --wide, ``families FAMILY``,
all-n/a algorithms folded into one line, and the rough edges (file errors, default store, NAME:N)."""

import pytest

from splitopt.cli import main
from splitopt.families import family_names, get_family


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_families_fits_100_columns_and_lists_every_algorithm(capsys):
    code, out, _ = run(capsys, "families")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 100
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("  ")}
    expected = {a for f in family_names() for a in get_family(f).algorithms}
    assert listed == expected
    code, wide, _ = run(capsys, "families", "--wide")
    assert code == 0 and max(len(line) for line in wide.splitlines()) > 100  # nothing cut


def test_families_of_one_family_shows_options_and_full_descriptions(capsys):
    code, out, _ = run(capsys, "families", "split")
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 100
    fam = get_family("split")
    text = " ".join(out.split())
    for a in fam.algorithms.values():  # the whole description, re-flowed
        assert " ".join(a.description.split()) in text
    assert "--time-limit" in out and "grouping" not in out
    code, _, err = run(capsys, "families", "nosuch")
    assert code == 2 and err.count("\n") == 1 and "FAMILY: unknown family 'nosuch'" in err


def test_validate_folds_declined_algorithms_and_keeps_nothing_without_store(tmp_path, capsys, monkeypatch):
    """An algorithm that declined every instance is one name on a folded line, not a row of n/a;
    with no --store no file is written in the working directory."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "validate", "split-random:2", "--algorithms", "mincut,chain,bruteforce",
                         "--quiet")
    assert code == 0, err
    assert list(tmp_path.iterdir()) == [] and "results not kept" in out
    assert max(len(line) for line in out.splitlines()) <= 100
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split() and line.split()[0] in
            ("mincut", "chain", "bruteforce", "milp")}
    assert "mincut" in rows and "milp" in rows and rows["milp"][1] == "reference"
    # `chain` declines non-chains: a row only if it took an instance, else one name on the folded line
    code, wide, _ = run(capsys, "validate", "split-random:2", "--algorithms", "mincut,chain,bruteforce",
                        "--quiet", "--wide")
    chain = next(line.split() for line in wide.splitlines() if line.split()[1:2] == ["chain"])
    inst, na = int(chain[3]), int(chain[7])
    if na == inst:
        assert "chain" not in rows and "declined every instance (n/a, not shown): chain" in out
    else:
        assert rows["chain"][2] == str(inst)


def test_solve_missing_file_names_it_once(tmp_path, capsys):
    code, _, err = run(capsys, "solve", str(tmp_path / "nosuch.json"))
    assert code == 2 and err.count("nosuch.json") == 1 and err.rstrip().endswith("no such file")


@pytest.mark.parametrize("n", [1, 2])
def test_zoo_n_is_n_instances_per_family(n):
    from collections import Counter

    from splitopt.instances.sets import get_set

    members = list(get_set(f"zoo:{n}").members())
    per_family = Counter(m.family for m in members)
    assert per_family and set(per_family.values()) == {n}


def test_demo_shows_the_fast_split_beside_the_reference_layer_by_layer(capsys):
    """The demo's side-by-side table: one row per layer with its module, each column the side the
    algorithm chose (checked against solving the same instance here), '<- differs' exactly where
    they differ; the delays are the evaluator's."""
    from splitopt.families import evaluate, solve
    from splitopt.instances.importers.pipedream import load_packaged
    from splitopt.instances.split import SplitInstance

    code, out, _ = run(capsys, "demo")
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 100
    g = load_packaged("alexnet")
    inst = SplitInstance.from_graph(g, mode="training", iterations=10, timing="measured", device_slowdown=10.0,
                                    up_bytes_per_s=12.5e6, down_bytes_per_s=25e6)
    fast, ref = (inst.mask_of(solve(inst, a).assignment) for a in ("mincut", "milp"))
    lines = out.split("beside milp's", 1)[1].splitlines()
    rows = {line.split()[0]: line for line in lines if line.startswith("node")}
    assert len(rows) == len(g.layers)
    for i, lay in enumerate(g.layers):
        words = rows[lay.name].split()
        side = [w for w in words if w in ("device", "server")]
        assert side == ["device" if fast[i] else "server", "device" if ref[i] else "server"]
        assert ("<- differs" in rows[lay.name]) == (fast[i] != ref[i])
    assert "Conv2d(3, 64, 11x11, /4)" in rows["node2"]  # the module, not only PipeDream's node name
    obj = evaluate(inst, solve(inst, "mincut").assignment)[0]
    assert f"delay {obj:.9g} s" in out


def _imported(argv, cwd):
    """Top-level packages a fresh ``splitopt`` process imports (``python -X importtime``)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "splitopt.cli", *argv], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip().split(".")[0] for line in r.stderr.splitlines() if "|" in line}


def test_cold_start_imports_only_what_the_command_uses(tmp_path):
    """Issue 24 (cold start, checked by what is imported, not by timing): ``--help`` imports no
    numpy; a tiny split solve (exact integer max-flow, path A) imports no scipy, pandas,
    matplotlib or pyomo."""
    from splitopt.instances import io
    from splitopt.instances.split import generate

    heavy = {"numpy", "scipy", "pandas", "matplotlib", "pyomo", "networkx", "numba"}
    assert _imported(["--help"], tmp_path) & heavy == set()
    io.save(generate(1, n=6), tmp_path / "tiny.json")
    assert _imported(["solve", "tiny.json"], tmp_path) & heavy == {"numpy"}


def test_fit_lines_wraps_long_lines_keeping_indentation_and_words():
    from splitopt.cli._fmt import _fit_lines

    words = [f"w{i}" for i in range(60)]
    text = "short line\n    " + " ".join(words)
    out = _fit_lines(text, 40).splitlines()
    assert out[0] == "short line" and all(len(line) <= 40 for line in out)
    assert out[1].startswith("    w0") and all(line.startswith("      ") for line in out[2:])
    assert " ".join(" ".join(out[1:]).split()) == " ".join(words)
