"""Seeded mutation fuzzing of every family's instance files through ``splitopt inspect`` and
``splitopt solve`` (every algorithm, formulations included): the only outcomes allowed are exit 0
and one clean error line with exit 2, never a traceback, another status or a hang, and ``solve``
rejects exactly what ``inspect`` rejects, with the same message (issue 13). The mutations and the
harness are in ``tests/cases/fuzz.py``; ``-m slow`` runs 2,000 mutants per family."""

import pytest

from cases.fuzz import FAMILIES, fuzz, fuzz_variants

FAST = {"split": 110, "grouping": 90, "throughput": 80, "pipeline": 50, "placement": 50}
FAST_DEFAULT = 50  # a family added later

#: failures of other families' solvers found by the variant fuzz (issue 21 §4), as
#: (family, algorithm, document label prefix) -> reason. They are left out of the clean check and
#: kept failing in ``test_known_variant_failures`` (xfail, strict=False: the owners fix them).
KNOWN_VARIANT_FAILURES: dict[tuple[str, str, str], str] = {}  # none left (placement fixed 2.0 ** _K)


def _known(family: str, cmd: str) -> bool:
    label, _, rest = cmd.partition(": solve --algorithm ")
    return any(f == family and a == rest and label.startswith(p) for f, a, p in KNOWN_VARIANT_FAILURES)


def _assert_clean(out):
    assert not out.failures, out.summary() + "\n" + "\n".join(f"mutant {i}, {cmd}: {d[:2000]}"
                                                              for i, cmd, d in out.failures[:5])
    # the mutants exercise both outcomes: some still load and solve, most are rejected cleanly
    assert out.loaded > 0 and out.ok > out.loaded and out.clean_errors > 0, out.summary()
    assert set(out.calls) <= {0, 2}, out.summary()


@pytest.mark.parametrize("family", FAMILIES)
def test_fuzz_fast(family, tmp_path):
    out = fuzz(family, FAST.get(family, FAST_DEFAULT), seed=0, workdir=tmp_path)
    print(family, out.summary())
    _assert_clean(out)


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_fuzz_thousands(family, tmp_path):
    out = fuzz(family, 2000, seed=1000, workdir=tmp_path)
    print(family, out.summary())
    _assert_clean(out)


def _assert_variants_clean(family, out):
    bad = [f for f in out.failures if not _known(family, f[1])]
    assert not bad, out.summary() + "\n" + "\n".join(f"document {i}, {cmd}: {d[:2000]}" for i, cmd, d in bad[:5])
    assert out.loaded > 0 and out.ok > 0 and set(out.calls) <= {0, 2, "bad"}, out.summary()


@pytest.mark.parametrize("family", FAMILIES)
def test_variants_fast(family, tmp_path):
    """Every option value, missing links and the range ends (1e-300, 5e-324, 1e30) of each family
    through ``inspect`` and ``solve`` (every algorithm on a third of the documents): exit 0 or 2
    only, no traceback, no hang (issue 21 §4)."""
    out = fuzz_variants(family, seed=0, workdir=tmp_path, options=4, time_limit=2.0, stride=3,
                        only=lambda label: "(base" not in label)
    print(family, out.summary())
    _assert_variants_clean(family, out)


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_variants_all(family, tmp_path):
    """Every variant document through every algorithm, two seeds of option combinations."""
    for seed in (0, 1):
        out = fuzz_variants(family, seed=seed, workdir=tmp_path, options=12, time_limit=5.0)
        print(family, seed, out.summary())
        _assert_variants_clean(family, out)


@pytest.mark.xfail(reason="other families' solvers fail on extreme values (see KNOWN_VARIANT_FAILURES)",
                   strict=False)
@pytest.mark.parametrize("family", sorted({f for f, _a, _p in KNOWN_VARIANT_FAILURES}))
def test_known_variant_failures(family, tmp_path):
    algos = sorted({a for f, a, _p in KNOWN_VARIANT_FAILURES if f == family})
    prefixes = tuple(p for f, _a, p in KNOWN_VARIANT_FAILURES if f == family)
    out = fuzz_variants(family, workdir=tmp_path, algorithms=algos, time_limit=2.0,
                        only=lambda label: label.startswith(prefixes))
    assert not out.failures, out.summary()
