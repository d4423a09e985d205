"""The cpt-corpus build's manifest: its numbers, its tables (replaced in one
transaction) and the check that a finished build's outputs are still all there."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import duckdb

from datagen.manifest import Manifest
from datagen.records import ClusterRow, FileRow, PackOutputRow, Record, RepoDocRow, RepoOrderRow, ShardRow
from datagen.records.pack import LanguageMixRow, LongBucketRow, TokenCountRow


def counts(con: duckdb.DuckDBPyConnection) -> dict:
    """The build's numbers for the summary and the dataset card."""
    seen, kept, kept_bytes = con.execute(
        "SELECT count(*), count(*) FILTER (decision='kept'), "
        "coalesce(sum(bytes) FILTER (decision='kept'), 0) FROM files"
    ).fetchone()
    by_reason = dict(con.execute(
        "SELECT split_part(reason, ':', 1) AS r, count(*) FROM files WHERE decision='dropped' "
        "GROUP BY r ORDER BY count(*) DESC, r"
    ).fetchall())
    by_lang = con.execute(
        "SELECT lang, count(*), sum(bytes) FROM files WHERE decision='kept' GROUP BY lang "
        "ORDER BY sum(bytes) DESC, lang"
    ).fetchall()
    licenses = Counter(dict(con.execute(
        "SELECT coalesce(license, 'unknown'), count(*) FROM files WHERE decision='kept' GROUP BY 1"
    ).fetchall()))
    repos = con.execute("SELECT count(DISTINCT repo) FROM files").fetchone()[0]
    return {"seen": seen, "kept": kept, "kept_bytes": int(kept_bytes), "dropped_by_reason": by_reason,
            "by_lang": by_lang, "licenses": licenses, "repos": repos}


def write_manifest(out: Path, run_id: str, db_path: Path, shard_rows: list[ShardRow],
                   tables: dict[type[Record], list[Record] | Path] | None = None,
                   duckdb_settings: dict[str, str | int] | None = None,
                   mark: Callable[[Manifest], None] | None = None) -> None:
    """Replace the ``files``, ``shards`` (and ``tables``: rows, or a parquet file of them)
    tables in one transaction; ``duckdb_settings`` (``SET`` name: value) bound its memory;
    ``mark`` (the output switch's) runs inside the transaction, before its commit."""
    cols = [c for c in FileRow.columns() if c not in ("run_id", "shard")]
    with Manifest(out) as m:
        for name, value in (duckdb_settings or {}).items():
            m.execute(f"SET {name} = '{value}'")
        m.execute(f"ATTACH '{db_path}' AS w (READ_ONLY)")
        m.execute("BEGIN TRANSACTION")
        m.execute("DELETE FROM files")
        m.execute("DELETE FROM shards")
        m.execute(
            f"INSERT INTO files (run_id, {', '.join(cols)}, shard) "
            f"SELECT ?, {', '.join('f.' + c for c in cols)}, s.shard FROM w.files f "
            "LEFT JOIN w.shard_of s USING (file_id) ORDER BY f.repo, f.path",
            [run_id],
        )
        m.insert(ShardRow, [s.model_copy(update={"run_id": run_id}) for s in shard_rows])
        for record in (RepoOrderRow, RepoDocRow, TokenCountRow, PackOutputRow, LanguageMixRow, LongBucketRow):
            m.execute(f"DELETE FROM {record.__table__}")
        for record, rows in (tables or {}).items():
            if isinstance(rows, Path):
                rcols = ", ".join(record.columns())
                m.execute(f"INSERT INTO {record.__table__} ({rcols}) SELECT {rcols} FROM read_parquet(?)",
                          [str(rows)])
            else:
                m.insert(record, rows)
        m.execute("DELETE FROM clusters")  # empty when near-dedup was off
        has_clusters = m.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'w' AND table_name = 'clusters'"
        ).fetchall()[0][0]
        if has_clusters:
            ccols = ", ".join(c for c in ClusterRow.columns() if c != "run_id")
            m.execute(f"INSERT INTO clusters (run_id, {ccols}) SELECT ?, {ccols} FROM w.clusters "
                      "ORDER BY cluster_id", [run_id])
        if mark is not None:
            mark(m)
        m.execute("COMMIT")
        m.execute("DETACH w")


def outputs_intact(out: Path, run_id: str, con: duckdb.DuckDBPyConnection) -> bool:
    """The already-built check of this build: the folder holds *this* run's files and
    shards (not a later build's), and every shard is on disk at its recorded size."""
    mine, others = con.execute(
        "SELECT count(*) FILTER (run_id = $1), count(*) FILTER (run_id <> $1) FROM "
        "(SELECT run_id FROM files UNION ALL SELECT run_id FROM shards)", [run_id]).fetchall()[0]
    if not mine or others:
        return False
    shards = con.execute("SELECT path, bytes FROM shards").fetchall()
    return all((out / p).is_file() and (out / p).stat().st_size == b for p, b in shards)


__all__ = ["counts", "write_manifest", "outputs_intact"]
