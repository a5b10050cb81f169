"""A family plugs in through its registry declaration alone: the toy family of
``tests/cases/toy.py`` goes through ``splitopt families / make / solve / validate / report`` with no
edit outside its own module."""

import json

import pytest

from cases import toy  # noqa: F401  (registers the toy family)
from splitopt.cli import main


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_toy_family_through_every_command(tmp_path, capsys):
    code, out, _ = run(capsys, "families", "--wide")
    assert code == 0
    rows = [line.split() for line in out.splitlines() if line.startswith("toybisect")]
    assert [r[1] for r in rows] == ["scan", "bruteforce", "milp", "lp", "half_paper"]
    kinds = {r[1]: r[3] if r[2].startswith("(") else r[2] for r in rows}
    assert kinds == {"scan": "exact", "bruteforce": "exact", "milp": "formulation", "lp": "relaxation",
                     "half_paper": "paper"}

    inst_file = tmp_path / "t.json"
    code, out, err = run(capsys, "make", "toybisect", "resnet18", "--weights", "params", "-o", str(inst_file))
    assert code == 0, err
    from splitopt.instances import io, zoo

    inst = io.load(inst_file)
    assert inst.weights == tuple(float(lay.params) for lay in zoo.get("resnet18").layers)

    code, out, err = run(capsys, "solve", str(inst_file), "--json")
    assert code == 0, err
    sol = json.loads(out)
    # independent check: the best cut by exhaustive search over the weights written to the file
    best = min(max(sum(inst.weights[:c]), sum(inst.weights[c:])) for c in range(1, len(inst.weights)))
    assert sol["objective"] == pytest.approx(best, rel=1e-12) and sol["algorithm"] == "scan"

    code, out, err = run(capsys, "solve", str(inst_file), "-a", "milp", "--time-limit", "30", "--json")
    assert code == 0, err
    assert json.loads(out)["objective"] == pytest.approx(best, rel=1e-9)
    # a family option from the declaration, and an option the algorithm does not declare
    code, out, err = run(capsys, "solve", str(inst_file), "--scale", "2", "--json")
    assert code == 0 and json.loads(out)["objective"] == pytest.approx(2 * best, rel=1e-12)
    code, out, err = run(capsys, "solve", str(inst_file), "--time-limit", "3")
    assert code == 2 and "--time-limit: is not an option of algorithm 'scan'" in err and "milp, lp" in err

    store = tmp_path / "runs.sqlite"
    code, out, err = run(capsys, "validate", "toybisect-random", "--store", str(store), "--quiet", "--wide")
    assert code == 0, err
    lines = {line.split()[1]: line.split() for line in out.splitlines() if line.startswith("toybisect")}
    assert set(lines) == {"scan", "bruteforce", "milp", "lp", "half_paper"}
    n = toy.FAMILY.sets.random_seeds
    assert lines["milp"][2] == "reference" and lines["scan"][2] == "exact"
    assert lines["scan"][3:5] == [str(n), str(n)]  # every instance, every one agreeing
    # the middle cut fails where the heavy first weight (generate) pulls the optimum to the left
    wrong = sum(toy.evaluate(g, toy.half_paper(g))[0] > toy.evaluate(g, toy.scan(g))[0] + 1e-9
                for g in (toy.generate(s, n=5) for s in range(n)))
    assert wrong > 0 and lines["half_paper"][5] == str(wrong)

    code, out, err = run(capsys, "report", str(store))
    assert code == 0 and "half_paper" in out and "paper" in out
