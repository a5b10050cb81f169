"""Results store: primary key, WAL, done-map, exports."""

import sqlite3

import pytest

from splitopt.validation.store import ResultStore


def _row(h, algo, obj, solver="highs", version="v", **kw):
    return {"instance_hash": h, "algorithm": algo, "solver": solver, "version": version, "objective": obj,
            "member_key": "k:" + h, "is_reference": int(algo == "milp"), **kw}


def test_one_row_per_key_and_wal(tmp_path):
    p = tmp_path / "runs.sqlite"
    with ResultStore(p) as st:
        st.add([_row("a", "milp", 1.0), _row("a", "dp", 1.0), _row("b", "milp", 2.0)])
        st.add([_row("a", "dp", 5.0)])  # same key replaces
        st.add([_row("a", "dp", 5.0, solver="scip")])  # other solver: new row
        assert st.count() == 4
    con = sqlite3.connect(p)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT objective FROM results WHERE instance_hash='a' AND algorithm='dp' "
                       "AND solver='highs'").fetchone()[0] == 5.0


def test_done_map_and_reference_row(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as st:
        st.add([_row("a", "milp", 1.0, exact_objective=1.0), _row("a", "dp", 1.0), _row("b", "dp", 3.0),
                _row("c", "milp", 1.0, version="old")])
        done = st.done("highs", "v")
    assert set(done) == {"k:a", "k:b"}
    assert done["k:a"]["algorithms"] == {"milp", "dp"}
    assert done["k:a"]["reference"]["exact_objective"] == 1.0
    assert done["k:b"]["reference"] is None


def test_exports(tmp_path):
    import pandas as pd
    with ResultStore(tmp_path / "r.sqlite") as st:
        st.add([_row("a", "milp", 1.5), _row("b", "dp", 2.5)])
        st.to_csv(tmp_path / "r.csv")
        df = st.to_dataframe(algorithm="dp")
        assert list(df["objective"]) == [2.5]
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            with pytest.raises(ImportError, match="pip install pyarrow"):
                st.to_parquet(tmp_path / "r.parquet")
        else:
            st.to_parquet(tmp_path / "r.parquet")
            assert sorted(pd.read_parquet(tmp_path / "r.parquet")["objective"]) == [1.5, 2.5]
    back = pd.read_csv(tmp_path / "r.csv")
    assert sorted(back["objective"]) == [1.5, 2.5]
