"""What `splitopt solve --json/--save` writes is standard JSON, and a solution file given back to
`solve` is named as one (found by fuzzing, 2026-11-29: `Infinity` in the output of a throughput
instance of zero work and of a placement relaxation step; "unsupported format version None")."""

import json

from splitopt.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _strict(text: str):
    def refuse(c):
        raise ValueError(f"non-standard JSON number {c}")

    return json.loads(text, parse_constant=refuse)


def test_zero_work_throughput_writes_standard_json(tmp_path, capsys):
    g, inst, saved = tmp_path / "g.json", tmp_path / "tp.json", tmp_path / "s.json"
    assert run(capsys, "generate", "layered", "--seed", "0", "--n", "1", "-o", str(g))[0] == 0
    assert run(capsys, "make", "throughput", str(g), "-o", str(inst), "--setup", "1")[0] == 0
    code, out, _ = run(capsys, "solve", str(inst), "--json", "--save", str(saved))
    assert code == 0
    d = _strict(out)
    assert d["breakdown"]["throughput"] is None  # infinite (no work at all): null, not Infinity
    assert _strict(saved.read_text()) == d


def test_a_solution_file_is_named_as_one(tmp_path, capsys):
    g, inst, saved = tmp_path / "g.json", tmp_path / "i.json", tmp_path / "s.json"
    assert run(capsys, "generate", "chain", "--seed", "1", "--n", "6", "-o", str(g))[0] == 0
    assert run(capsys, "make", "split", str(g), "-o", str(inst), "--up-mbps", "10")[0] == 0
    assert run(capsys, "solve", str(inst), "--save", str(saved))[0] == 0
    for cmd in ("solve", "inspect"):
        code, _, err = run(capsys, cmd, str(saved))
        assert code == 2 and "Traceback" not in err
        assert "this is a solution" in err and str(inst) in err
