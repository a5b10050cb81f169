"""Seeded mutation fuzzing of every family's instance files through ``splitopt inspect`` and
``splitopt solve`` (every algorithm, formulations included): the only outcomes allowed are exit 0
and one clean error line with exit 2, never a traceback, another status or a hang, and ``solve``
rejects exactly what ``inspect`` rejects, with the same message (issue 13). The mutations and the
harness are in ``tests/cases/fuzz.py``; ``-m slow`` runs 2,000 mutants per family."""

import pytest

from cases.fuzz import FAMILIES, fuzz

FAST = {"split": 110, "grouping": 90, "throughput": 80, "pipeline": 50, "placement": 50}


def _assert_clean(out):
    assert not out.failures, out.summary() + "\n" + "\n".join(f"mutant {i}, {cmd}: {d[:2000]}"
                                                              for i, cmd, d in out.failures[:5])
    # the mutants exercise both outcomes: some still load and solve, most are rejected cleanly
    assert out.loaded > 0 and out.ok > out.loaded and out.clean_errors > 0, out.summary()
    assert set(out.calls) <= {0, 2}, out.summary()


@pytest.mark.parametrize("family", FAMILIES)
def test_fuzz_fast(family, tmp_path):
    out = fuzz(family, FAST[family], seed=0, workdir=tmp_path)
    print(family, out.summary())
    _assert_clean(out)


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_fuzz_thousands(family, tmp_path):
    out = fuzz(family, 2000, seed=1000, workdir=tmp_path)
    print(family, out.summary())
    _assert_clean(out)
