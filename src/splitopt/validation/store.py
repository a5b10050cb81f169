"""The results store: one SQLite table, one row per (instance hash, algorithm, solver, version).

Durability: the database runs in WAL mode and every finished task's rows are committed in their
own transaction as soon as the task completes, by the driver process only (workers return rows,
they never write). A run killed with SIGKILL therefore loses at most the tasks still in flight;
every committed row survives (SQLite's WAL is replayed on the next open). Re-running the same set
with the same solver and package version skips every (member, algorithm) already present,
including members that failed to load (their ``<load>`` row is a recorded outcome).

The primary key makes duplicates impossible: a row written twice (``INSERT OR REPLACE``) is one
row. Exports: :meth:`ResultStore.to_dataframe` (pandas), :meth:`~ResultStore.to_csv`,
:meth:`~ResultStore.to_parquet` (needs ``pyarrow``, which is not a splitopt dependency: install it
with ``pip install pyarrow``).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Mapping

#: (column, SQLite type) in table order; the first four form the primary key.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("instance_hash", "TEXT NOT NULL"), ("algorithm", "TEXT NOT NULL"), ("solver", "TEXT NOT NULL"),
    ("version", "TEXT NOT NULL"),
    ("run_id", "TEXT"), ("set_name", "TEXT"), ("member_id", "TEXT"), ("member_key", "TEXT"),
    ("family", "TEXT"), ("sense", "TEXT"), ("size", "INTEGER"), ("describe", "TEXT"),
    ("is_reference", "INTEGER"), ("exact_algorithm", "INTEGER"), ("paper", "INTEGER"), ("formulation", "INTEGER"),
    ("status", "TEXT"), ("outcome", "TEXT"), ("agree", "INTEGER"), ("objective", "REAL"), ("bound", "REAL"),
    ("gap", "REAL"), ("exact_objective", "REAL"), ("exact_status", "TEXT"), ("exact_bound", "REAL"),
    ("exact_seconds", "REAL"), ("lp_bound", "REAL"), ("lp_gap", "REAL"), ("scale", "REAL"),
    ("seconds", "REAL"), ("speedup", "REAL"), ("error", "TEXT"), ("traceback", "TEXT"), ("assignment", "TEXT"),
    ("finished_at", "REAL"), ("host", "TEXT"), ("pid", "INTEGER"), ("kind", "TEXT"), ("cold_seconds", "REAL"),
)
COLUMN_NAMES = tuple(c for c, _ in COLUMNS)
KEY = ("instance_hash", "algorithm", "solver", "version")
TABLE = "results"
SCHEMA_VERSION = 1


class ResultStore:
    """SQLite results store (``path`` may be ``":memory:"``). Use as a context manager or call
    :meth:`close`."""

    def __init__(self, path: str | os.PathLike = ":memory:", timeout: float = 60.0):
        from splitopt.errors import InstanceError

        self.path = str(path)
        if self.path != ":memory:":
            check_store_file(self.path, must_exist=False)
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(self.path, timeout=timeout)
            self._con.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a committed transaction survives a killed process (not necessarily
            # a power cut), which is the failure a batch run meets.
            self._con.execute("PRAGMA synchronous=NORMAL")
            self._create()
        except (sqlite3.DatabaseError, OSError) as exc:
            raise InstanceError(self.path, f"cannot open as a results store (SQLite): {exc}") from None

    def _create(self) -> None:
        cols = ",\n  ".join(f"{c} {t}" for c, t in COLUMNS)
        with self._con:
            self._con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (\n  {cols},\n  PRIMARY KEY ({', '.join(KEY)}))")
            have = {r[1] for r in self._con.execute(f"PRAGMA table_info({TABLE})")}
            for c, t in COLUMNS:  # forward-compatible: add columns a newer splitopt defines
                if c not in have:
                    self._con.execute(f"ALTER TABLE {TABLE} ADD COLUMN {c} {t.replace(' NOT NULL', '')}")
            self._con.execute(f"CREATE INDEX IF NOT EXISTS {TABLE}_member ON {TABLE} (member_key, solver, version)")
            self._con.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self._con.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))

    # -- writing ----------------------------------------------------------------------------------

    def add(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Insert (or replace) rows in one committed transaction; returns how many."""
        rows = list(rows)
        if not rows:
            return 0
        marks = ", ".join("?" for _ in COLUMN_NAMES)
        data = [tuple(r.get(c) for c in COLUMN_NAMES) for r in rows]
        with self._con:
            self._con.executemany(f"INSERT OR REPLACE INTO {TABLE} ({', '.join(COLUMN_NAMES)}) VALUES ({marks})", data)
        return len(rows)

    # -- reading ----------------------------------------------------------------------------------

    def count(self) -> int:
        return self._con.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0]

    def rows(self, **where: Any) -> list[dict]:
        """Rows as dicts, filtered by column equality (``store.rows(family="split")``)."""
        bad = set(where) - set(COLUMN_NAMES)
        if bad:
            raise KeyError(f"unknown column(s): {', '.join(sorted(bad))}")
        sql = f"SELECT {', '.join(COLUMN_NAMES)} FROM {TABLE}"
        if where:
            sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
        sql += " ORDER BY family, member_id, algorithm"
        cur = self._con.execute(sql, tuple(where.values()))
        return [dict(zip(COLUMN_NAMES, r)) for r in cur]

    def done(self, solver: str, version: str) -> dict[str, dict]:
        """``member_key -> {"algorithms": set of names done, "reference": reference row or None,
        "family": family name}``
        for rows of this solver and package version (what a re-run may skip)."""
        out: dict[str, dict] = {}
        cur = self._con.execute(
            f"SELECT {', '.join(COLUMN_NAMES)} FROM {TABLE} WHERE solver = ? AND version = ? AND member_key IS NOT NULL",
            (solver, version))
        for r in cur:
            row = dict(zip(COLUMN_NAMES, r))
            d = out.setdefault(row["member_key"], {"algorithms": set(), "reference": None, "family": None})
            d["algorithms"].add(row["algorithm"])
            d["family"] = d["family"] or row["family"]
            if row["is_reference"]:
                d["reference"] = row
        return out

    def to_dataframe(self, **where: Any):
        import pandas as pd

        return pd.DataFrame(self.rows(**where), columns=list(COLUMN_NAMES))

    def to_csv(self, path: str | os.PathLike, **where: Any) -> Path:
        self.to_dataframe(**where).to_csv(path, index=False)
        return Path(path)

    def to_parquet(self, path: str | os.PathLike, **where: Any) -> Path:
        """Parquet export; needs ``pyarrow`` (the ``parquet`` extra: ``pip install 'splitopt[parquet]'``)."""
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            from splitopt.errors import MissingDependency

            raise MissingDependency("Parquet export needs pyarrow, which is not installed: pip install pyarrow "
                                    "(or pip install 'splitopt[parquet]'; or export CSV)") from None
        self.to_dataframe(**where).to_parquet(path, index=False)
        return Path(path)

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


SQLITE_MAGIC = b"SQLite format 3\x00"


def check_store_file(path: str | os.PathLike, must_exist: bool = True) -> None:
    """Raise :class:`~splitopt.errors.InstanceError` unless ``path`` is an SQLite file (or, with
    ``must_exist=False``, does not exist yet or is empty). Guards user files from being turned into
    a database by a mistyped ``--store`` or ``splitopt report`` argument."""
    from splitopt.errors import InstanceError

    p = Path(path)
    if not p.exists():
        if must_exist:
            raise InstanceError(str(p), "no such results store")
        return
    if p.is_dir():
        raise InstanceError(str(p), "is a directory, not a results store (SQLite file)")
    try:
        with open(p, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise InstanceError(str(p), f"cannot read: {exc.strerror or exc}") from None
    if head == b"" and not must_exist:
        return
    if head != SQLITE_MAGIC:
        raise InstanceError(str(p), "not a results store: not an SQLite file")


def _check_is_results_store(path: str | os.PathLike) -> None:
    """Raise :class:`~splitopt.errors.InstanceError` if the SQLite file at ``path`` has no results
    table. Read-only: a report never turns someone else's database into a store."""
    from splitopt.errors import InstanceError

    try:
        con = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
        try:
            found = con.execute("SELECT name FROM sqlite_master WHERE type='table' AND name=?", (TABLE,)).fetchone()
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise InstanceError(str(path), f"cannot read as a results store (SQLite): {exc}") from None
    if found is None:
        raise InstanceError(str(path), f"an SQLite file, but not a splitopt results store (no {TABLE!r} table)")


def open_store(store: "str | os.PathLike | ResultStore | None") -> ResultStore:
    """A :class:`ResultStore` for a path, an existing store, or ``None`` (in memory)."""
    if isinstance(store, ResultStore):
        return store
    return ResultStore(":memory:" if store is None else store)


def load_dataframe(store: "str | os.PathLike | ResultStore", **where: Any):
    """All rows of a store file as a DataFrame."""
    if isinstance(store, ResultStore):
        return store.to_dataframe(**where)
    check_store_file(store, must_exist=True)
    _check_is_results_store(store)
    with ResultStore(store) as st:
        return st.to_dataframe(**where)


__all__ = ["ResultStore", "open_store", "load_dataframe", "check_store_file", "COLUMNS", "COLUMN_NAMES", "KEY"]
