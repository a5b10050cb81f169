"""`splitopt make pipeline` and `splitopt solve` on pipeline instances, through the registry."""

import json

from splitopt.cli import main
from splitopt.instances import io
from splitopt.instances.pipeline_generate import generate
from splitopt.models.pipeline import evaluate
from splitopt.solvers.pipeline.bruteforce import bruteforce


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_make_and_solve_vgg16(tmp_path, capsys):
    f = tmp_path / "v.json"
    code, out, _ = run(capsys, "make", "pipeline", "vgg16-cifar", "--servers", "2", "--clients", "2",
                       "--micro-batch", "32", "--max-submodels", "3", "-o", str(f))
    assert code == 0 and "layers=16" in out
    inst = io.load(f)
    assert inst.n_servers == 2 and inst.micro_batches == (32,) and inst.max_submodels == 3
    code, out, _ = run(capsys, "solve", str(f), "--json")
    assert code == 0
    sol = json.loads(out)
    ref = evaluate(inst, bruteforce(inst))[0]
    assert abs(sol["objective"] - ref) <= 1e-9 * ref
    code, out, _ = run(capsys, "solve", str(f), "--placement", "revisit", "-a", "milp_b", "--json")
    assert code == 0 and json.loads(out)["objective"] <= ref * (1 + 1e-9)


def test_bad_input_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "make", "pipeline", "vgg16-cifar", "--servers", "0", "-o", str(tmp_path / "x.json"))
    assert code == 2 and "--servers" in err and "Traceback" not in err
    f = tmp_path / "bad.json"
    d = io.envelope(generate(1, b="draw"))
    d["data"]["placement"] = "everywhere"
    f.write_text(json.dumps(d))
    code, _, err = run(capsys, "solve", str(f))
    assert code == 2 and "data.placement" in err and "everywhere" in err


def test_instance_name_has_one_suffix(tmp_path, capsys):
    """The name is the spec plus one ``-M..-N..-s..`` suffix (it was once appended twice for graphs,
    ``vgg16-cifar-M5-N10-s0-M5-N10-s0``), for a named profile and for a zoo graph."""
    from splitopt.instances.pipeline_generate import profile_instance

    for spec in ("vgg16-cifar", "tinyllama", "alexnet"):
        f = tmp_path / f"{spec}.json"
        code, out, _ = run(capsys, "make", "pipeline", spec, "--servers", "3", "--clients", "2", "--seed", "4",
                           "-o", str(f))
        assert code == 0
        name = io.load(f).name
        assert name == f"{spec}-M2-N3-s4" and f"name={name}," in out
    assert profile_instance("vgg16-cifar", n_clients=5, n_servers=10).name == "vgg16-cifar-M5-N10-s0"
    prof = {"names": ["a", "b"], "fwd_flop": [1e6, 1e6], "bwd_flop": [2e6, 2e6], "act_bytes": [1e3, 1e3],
            "grad_bytes": [1e3, 1e3], "param_bytes": [1e3, 1e3]}
    assert profile_instance(prof, n_clients=1, n_servers=2, name="mine").name == "mine"
    assert profile_instance(prof, n_clients=1, n_servers=2).name == "profile-M1-N2-s0"
