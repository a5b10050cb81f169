"""Instance sets: lazy members, stable keys, name resolution, skipped families."""

import pytest

from cases.knapsack import FAMILY as fake_family
from cases.knapsack import generate
from splitopt.errors import InstanceError
from splitopt.instances import io, sets


def test_recipe_members_are_lazy_descriptors_that_materialise_on_load():
    s = sets.recipe_set("k", "vknap", range(3), n=4)
    members = list(s.members())
    assert [m.member_id for m in members] == ["vknap/seed=0", "vknap/seed=1", "vknap/seed=2"]
    assert all(m.kind == "generate" for m in members)
    inst = members[1].load()
    assert inst == generate(1, n=4) and len(inst.values) == 4
    # keys are stable across listings and distinct between members
    assert [m.key for m in members] == [m.key for m in s.members()]
    assert len({m.key for m in members}) == 3


def test_instance_hash_is_content_based():
    a, b = generate(1), generate(1)
    assert a is not b and sets.instance_hash(a) == sets.instance_hash(b)
    assert sets.instance_hash(generate(2)) != sets.instance_hash(a)
    assert len(sets.instance_hash(a)) == 64


def _only_vknap(monkeypatch, **recipes):
    """Make the registry hold just the fake family, with the given set recipes."""
    import dataclasses

    from splitopt import families
    from splitopt.families import SetRecipes

    fam = dataclasses.replace(fake_family, sets=SetRecipes(**recipes))
    monkeypatch.setattr(families, "_REGISTRY", {"vknap": fam})
    monkeypatch.setattr(families, "BUILTIN", {"no_such_family": "splitopt.families.no_such_module"})
    return fam


def test_quick_set_skips_unimportable_family_with_a_note(monkeypatch):
    fam = _only_vknap(monkeypatch, quick={"n": 5, "not_a_parameter": 1})
    s = sets.get_set("quick")
    members = list(s.members())
    assert len(members) == fam.sets.quick_seeds
    assert dict(members[0].params) == {"seed": 0, "n": 5}  # unknown keyword dropped
    assert any("no_such_family" in n for n in s.notes)
    assert len(list(sets.get_set("quick:2").members())) == 2


def test_random_set_comes_from_the_family_recipe(monkeypatch):
    _only_vknap(monkeypatch, random={"n": 3}, random_seeds=4)
    members = list(sets.get_set("vknap-random").members())
    assert [m.member_id for m in members] == [f"vknap/seed={i}" for i in range(4)]
    assert len(members[2].load().values) == 3
    assert "vknap-random" in sets.set_names()


def test_graph_sets_use_the_graph_convention(monkeypatch):
    _only_vknap(monkeypatch, graph={})
    monkeypatch.setattr(sets, "_zoo_names", lambda notes: ["net_a", "net_b"])
    monkeypatch.setattr(sets, "load_graph", lambda spec: list(range(3 if spec == "zoo:net_a" else 8)))
    members = list(sets.get_set("zoo").members())
    assert [m.member_id for m in members] == ["vknap/zoo/net_a/seed=0", "vknap/zoo/net_b/seed=0"]
    # Family.generate(seed, graph=graph): the fake family sizes the instance from the graph
    assert len(members[0].load().values) == 3 and len(members[1].load().values) == 8


def test_directory_set_lists_json_files_recursively(tmp_path):
    io.save(generate(0), tmp_path / "a.json")
    io.save(generate(1), tmp_path / "sub" / "b.json")
    (tmp_path / "notes.txt").write_text("ignored")
    s = sets.get_set(str(tmp_path))
    members = list(s.members())
    assert [m.member_id for m in members] == ["a.json", "sub/b.json"]
    assert members[1].load() == generate(1)
    assert members[0].key.startswith("file:")


def test_unknown_set_and_bad_count_raise_instance_error():
    with pytest.raises(InstanceError, match=r"^set: unknown set 'nope'"):
        sets.get_set("nope")
    with pytest.raises(InstanceError, match=r"^set: count after ':' must be an integer, got 'x'"):
        sets.get_set("split-random:x")
