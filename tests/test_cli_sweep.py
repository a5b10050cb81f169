"""`splitopt sweep`: exit status, JSON pieces checked against the MILP, plot, user errors."""

from __future__ import annotations

import json
import math

from splitopt.cli import main
from splitopt.families import solve
from splitopt.instances import io
from splitopt.models.split import evaluate
from splitopt.solvers.split.sweep import at


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sweep_split_json_and_plot(tmp_path, capsys):
    f = str(tmp_path / "s.json")
    assert run(capsys, "make", "split", "resnet18", "--device-flops", "2e10", "--server-flops", "2e13",
               "--up-mbps", "100", "--mode", "inference", "-o", f)[0] == 0
    png = tmp_path / "s.png"
    code, out, err = run(capsys, "sweep", f, "--param", "up_mbps", "--from", "0.001", "--to", "10000", "--json",
                         "--plot", str(png))
    assert code == 0, err
    d = json.loads(out)
    assert d["exact"] and len(d["pieces"]) >= 2 and len(d["breakpoints"]) == len(d["pieces"]) - 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    inst = io.load(f)
    for pc in d["pieces"]:
        p = math.sqrt(pc["lo"] * pc["hi"])
        i2 = at(inst, "up_mbps", p)
        ref = solve(i2, "milp").objective
        assert abs(evaluate(i2, pc["solution"])[0] - ref) <= 1e-9 * ref
    code, out, _ = run(capsys, "sweep", f, "--param", "up_mbps", "--from", "0.001", "--to", "10000")
    assert code == 0 and "exact (Eisner-Severance)" in out and "layers on the device" in out


def test_sweep_grouping_requests(tmp_path, capsys):
    f = str(tmp_path / "g.json")
    assert run(capsys, "make", "grouping", "resnet50", "--k", "4", "-o", f)[0] == 0
    code, out, err = run(capsys, "sweep", f, "--param", "requests", "--from", "1", "--to", "100", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["pieces"][0]["lo"] == 1 and d["pieces"][-1]["hi"] == 100
    code, out, _ = run(capsys, "sweep", f, "--param", "bandwidth_bytes_per_s", "--from", "1e4", "--to", "1e9",
                       "--samples", "5")
    assert code == 0 and "SAMPLED, 5 log-spaced samples" in out


def test_sweep_user_errors_exit_2(tmp_path, capsys):
    f = str(tmp_path / "s.json")
    run(capsys, "make", "split", "resnet18", "--device-flops", "2e10", "--server-flops", "2e13", "--up-mbps", "100",
        "-o", f)
    for argv, needle in ((["--param", "nope", "--from", "1", "--to", "2"], "--param: unknown split sweep parameter"),
                         (["--from", "1", "--to", "2"], "--param: missing; split sweeps: up_mbps"),
                         (["--param", "up_mbps", "--from", "0", "--to", "2"], "--from"),
                         (["--param", "up_mbps", "--from", "3", "--to", "2"], "--to: must be >= --from")):
        code, out, err = run(capsys, "sweep", f, *argv)
        assert code == 2 and needle in err and "Traceback" not in err, (argv, err)


def test_equal_runs_are_maximal_and_cover_every_sample():
    from splitopt.validation.sweep import equal_runs

    keys = ["a", "a", "b", "a", "c", "c", "c"]
    runs = equal_runs(keys)
    assert runs == [(0, 1), (2, 2), (3, 3), (4, 6)]
    assert equal_runs([]) == []
    # independent check: a run boundary exactly where neighbouring keys differ
    ends = {j for _i, j in runs}
    assert ends == {k for k in range(len(keys)) if k == len(keys) - 1 or keys[k] != keys[k + 1]}
