"""Open, create and fill a build's DuckDB manifest.

Tables come from the record models (``datagen.records.TABLES``); bulk rows go in as Arrow
tables (no per-row INSERTs). ``query`` opens the file read-only for ``datagen sql``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from datagen.errors import UserError
from datagen.records import TABLES, Record
from datagen.records.base import manifest_ddl as _ddl
from datagen.records.base import sql_type_of

MANIFEST_NAME = "manifest.duckdb"
LOCK_WAIT_S = 10.0  # how long a write waits for another process's lock on the manifest
READ_WAIT_S = 2.0  # the same for `datagen sql` (a build holds the manifest only briefly)


def connect(path: Path, wait_s: float | None = None, **kwargs: Any) -> duckdb.DuckDBPyConnection:
    """Open the manifest; while another process holds DuckDB's lock on it (a build writing,
    a ``datagen sql`` reading), try again for ``wait_s`` (default ``LOCK_WAIT_S``), then a
    one-line ``UserError``."""
    deadline = time.monotonic() + (LOCK_WAIT_S if wait_s is None else wait_s)
    pause = 0.05
    while True:
        try:
            return duckdb.connect(str(path), **kwargs)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower():
                raise
            if time.monotonic() >= deadline:
                pid = re.search(r"PID (\d+)", str(exc))
                how = " read-only" if kwargs.get("read_only") else ""
                raise UserError(f"cannot open {path}{how}: it is open in another process"
                                f"{f' (pid {pid.group(1)})' if pid else ''}; wait for it to finish "
                                "(a build, a `datagen sql`, a notebook) and run again") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


def manifest_ddl(tables: Iterable[type[Record]] = ()) -> str:
    """The DDL of every manifest table (what ``schemas/manifest.sql`` holds)."""
    return _ddl(list(tables) or TABLES)


def manifest_path(out: str | Path) -> Path:
    out = Path(out)
    return out if out.suffix == ".duckdb" else out / MANIFEST_NAME


class Manifest:
    """A read-write manifest. Use as a context manager; tables are created on open."""

    def __init__(self, path: str | Path, tables: Iterable[type[Record]] | None = None):
        self.path = manifest_path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tables = list(tables) if tables is not None else list(TABLES)
        self.con = connect(self.path)
        for table in self.tables:
            self.con.execute(table.ddl())
            self._add_new_columns(table)

    def _add_new_columns(self, table: type[Record]) -> None:
        """A manifest written by an older datagen gets the columns added since (null)."""
        have = {c for (c,) in self.con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND database_name = current_database()",
            [table.__table__]).fetchall()}
        for name in table.columns():
            if name not in have:
                sql_type, _ = sql_type_of(table.model_fields[name].annotation)
                self.con.execute(f"ALTER TABLE {table.__table__} ADD COLUMN {name} {sql_type}")

    def __enter__(self) -> Manifest:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None

    def insert(self, record: type[Record], rows: pa.Table | list[dict] | list[Record]) -> int:
        """Insert rows (Arrow table, dicts or records); columns by name, in model order."""
        if not isinstance(rows, pa.Table):
            dicts = [r.model_dump() if isinstance(r, Record) else r for r in rows]
            if not dicts:
                return 0
            rows = pa.Table.from_pylist(dicts)
        if rows.num_rows == 0:
            return 0
        cols = [c for c in record.columns() if c in rows.column_names]
        self.con.register("_incoming", rows)
        try:
            col_list = ", ".join(cols)
            self.con.execute(
                f"INSERT INTO {record.__table__} ({col_list}) SELECT {col_list} FROM _incoming"
            )
        finally:
            self.con.unregister("_incoming")
        return rows.num_rows

    def upsert(self, record: type[Record], row: Record | dict) -> None:
        """Insert or replace one row by primary key (e.g. the ``runs`` row)."""
        data = row.model_dump() if isinstance(row, Record) else row
        cols = list(data)
        placeholders = ", ".join("?" for _ in cols)
        self.con.execute(
            f"INSERT OR REPLACE INTO {record.__table__} ({', '.join(cols)}) VALUES ({placeholders})",
            [data[c] for c in cols],
        )

    def execute(self, sql: str, params: list | None = None) -> duckdb.DuckDBPyConnection:
        return self.con.execute(sql, params or [])


def open_readonly(out: str | Path) -> duckdb.DuckDBPyConnection:
    """Open a build's manifest read-only, without file or network access (so a query can
    neither write nor COPY anywhere). ``UserError`` when it is missing or locked."""
    path = manifest_path(out)
    if not path.is_file():
        raise UserError(f"no manifest at {path} (run a build first, or name the folder that holds it)")
    try:
        return connect(path, READ_WAIT_S, read_only=True, config={"enable_external_access": False})
    except duckdb.Error as exc:
        raise UserError(f"cannot open {path} read-only (is a build writing it?): {exc}") from None


def query_all(out: str | Path, sql: str) -> list[tuple[list[str], list[tuple]]]:
    """Run every statement of ``sql`` read-only on a build's manifest; returns
    (column names, rows) per statement, in order."""
    con = open_readonly(out)
    try:
        try:
            statements = con.extract_statements(sql)
        except duckdb.Error as exc:
            raise UserError(f"SQL error: {exc}") from None
        results = []
        for statement in statements:
            try:
                cur = con.execute(statement)
            except duckdb.Error as exc:
                raise UserError(f"SQL error: {exc}") from None
            results.append(([], []) if cur.description is None else
                           ([d[0] for d in cur.description], cur.fetchall()))
        return results
    finally:
        con.close()


def query(out: str | Path, sql: str) -> tuple[list[str], list[tuple]]:
    """Run ``sql`` read-only on a build's manifest; returns (column names, rows) of its
    last statement."""
    results = query_all(out, sql)
    return results[-1] if results else ([], [])
